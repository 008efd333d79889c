# SPDX-License-Identifier: GPL-2.0-or-later
# Shared settings for the build and VM scripts; sourced, never run.

MFR_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MFR_CACHE=${MFR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mfr}
MFR_SERIES_DIR=${MFR_SERIES_DIR:-$MFR_ROOT/kernel-hooks}
KERNEL_FLAVOR=${KERNEL_FLAVOR:-debug}
LINUX_SOURCE_TARBALL=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.12.tar.xz}

die() {
	echo "error: $*" >&2
	exit 1
}

# Patches of the series, in order (comments and blank lines skipped).
series_patches() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$MFR_SERIES_DIR/series"
}

# module_source_copy DIR: mfr.ko's sources (not its build products) in a
# fresh DIR, to build it apart from module/ (another kernel, another API).
module_source_copy() {
	rm -rf "$1" && mkdir -p "$1" &&
		cp "$MFR_ROOT"/module/Kbuild "$MFR_ROOT"/module/*.[ch] "$1/" &&
		cp -r "$MFR_ROOT"/module/include "$1/" &&
		rm -f "$1"/*.mod.c
}

linux_source_version() {
	dpkg-query -W -f '${Version}' linux-source-6.12 2>/dev/null || echo unknown
}

# Everything that changes the kernel: the source package version, the
# series (names and content) and the config.
kernel_key() {
	{
		linux_source_version
		cat "$MFR_SERIES_DIR/series"
		series_patches | while read -r p; do cat "$MFR_SERIES_DIR/$p"; done
		cat "$MFR_SERIES_DIR/$KERNEL_FLAVOR.config"
	} | sha256sum | cut -c1-16
}

# One build directory per flavor, at a fixed path: a new series or config
# is patched into it in place and rebuilt incrementally (.patched and
# .built hold the kernel_key of what it holds), and ccache hits, since
# every path stays the same.
# MFR_KERNEL_SUITE names another distribution's linux-source-6.12 (the
# trixie build of make e2e, in that distribution's chroot): a tree of its
# own beside the host's.
kernel_dir() {
	echo "$MFR_CACHE/kernel/${MFR_KERNEL_SUITE:+$MFR_KERNEL_SUITE-}$KERNEL_FLAVOR"
}

# The distribution this runs on (bookworm, trixie), from os-release.
host_suite() {
	(. /etc/os-release && echo "${VERSION_CODENAME:-unknown}")
}

# base_version SUITE: the linux-source-6.12 version kernel-hooks/BASE
# names for that distribution (bookworm, trixie); empty if none.
base_version() {
	sed -n "s/^Debian package linux-source-6.12 \([^ ]*\) ($1[-;)].*/\1/p" "$MFR_SERIES_DIR/BASE"
}

# Userspace tools come from Debian (python3-yaml, python3-jsonschema) and a
# virtualenv for virtme-ng, so a fresh Debian 12 machine needs nothing else.
PYTHON=${PYTHON:-/usr/bin/python3}
MFR_VENV=${MFR_VENV:-$MFR_CACHE/venv}
VNG=${VNG:-$MFR_VENV/bin/vng}
# vng starts virtme-run (and virtme-ng-init's helpers) by name through the
# shell: the virtualenv's bin/ must be on PATH, not only vng's own path.
case ":$PATH:" in
*":$MFR_VENV/bin:"*) ;;
*) export PATH="$MFR_VENV/bin:$PATH" ;;
esac

# Lines of '|'-separated fields on stdin to an aligned table on stdout
# (the first line is the header); awk only, nothing beyond a base system.
print_table() {
	awk -F'|' '{
		for (i = 1; i <= NF; i++) {
			cell[NR, i] = $i
			if (length($i) > w[i]) w[i] = length($i)
		}
		if (NF > nf) nf = NF
	}
	END {
		for (r = 1; r <= NR; r++) {
			line = ""
			for (i = 1; i <= nf; i++)
				line = line (i < nf ? sprintf("%-" w[i] "s  ", cell[r, i]) : cell[r, i])
			print line
		}
	}'
}
