# SPDX-License-Identifier: GPL-2.0-or-later
#
# mfr: per-memfd memory-failure recovery for HugeTLB memfds.
#
#   make demo              boot the patched kernel in a VM and show mfr working
#   make demo-vm           the same with a real guest: QEMU 10, KVM (nested), a Debian 13 guest
#   make test              unit tests and the VM suite; ends "N passed, N failed"
#   make vm-run CMD='...'  run CMD as root in a VM with mfr.ko loaded
#   make kernel | module | helpers | daemon | checkpatch | ynl-regen | clean
#   make install           mfrd, mfrctl, manuals, unit, udev rule (DESTDIR, PREFIX)
#   make dkms-install      module source to /usr/src/mfr-VERSION, "dkms add"
#   make test-vmm          Debian's QEMU with KVM (nested, under TCG) through a memory error
#   make e2e               Debian 12 guest: .debs, DKMS, udev, mfrd (not in make test)
#   make bench             benchmarks against the kernel without the series: bench/RESULTS.md
#   make series-check      the series applies (--fuzz=0) to every Debian 6.12 point release >= BASE
#   make bisect-check      each prefix of the series builds and boots the stock pin test (slow)

SHELL := /bin/bash
CACHE_ENV := $(if $(MFR_CACHE),MFR_CACHE=$(MFR_CACHE))
# The kernel build directory for the current series and config (cached).
KDIR = $(shell scripts/build-kernel.sh)
CFLAGS_HELPERS := -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE

HELPERS := $(patsubst tests/helpers/%.c,build/helpers/%,$(wildcard tests/helpers/*.c))

.PHONY: all deps deps-daemon deb install-system kernel module helpers test-kmods daemon vm-run test test-peer test-mce test-vmm demo demo-vm checkpatch ynl-regen clean \
	install dkms-install e2e bench series-check bisect-check

all: module helpers daemon

deps:
	scripts/install-deps.sh

kernel: deps
	scripts/build-kernel.sh

module: kernel
	$(MAKE) -C module KDIR=$(KDIR)

helpers: $(HELPERS)
# Some link against Debian packages (liburing) that "deps" installs.
$(HELPERS): | deps

# Test modules the VM suite loads (tests/kmod), against the same kernel.
test-kmods: kernel
	$(MAKE) -C tests/kmod KDIR=$(KDIR)

# mfrctl and mfrd (the daemon/ directory's own Makefile, objects in
# build/daemon): only the libraries they use, not the kernel's or the VMs'.
daemon: deps-daemon
	$(MAKE) -C daemon

deps-daemon:
	scripts/install-deps.sh --daemon

# Libraries beyond libpthread, per helper.
LIBS_pin_mce := -luring

build/helpers/%: tests/helpers/%.c $(wildcard tests/helpers/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_HELPERS) -o $@ $< -lpthread $(LIBS_$*)

vm-run: module helpers test-kmods
	@test -n "$(CMD)" || { echo "usage: make vm-run CMD='command'" >&2; exit 2; }
	scripts/vm-run.sh '$(subst ','\'',$(CMD))'

# tests/run builds the kernel, mfr.ko and the test modules itself, beside
# the host tests.
test: deps helpers daemon
	tests/run

# Peer suites (kernel selftests) against the same kernel without the
# series: builds a second kernel, so it is not part of "make test".
test-peer: module helpers
	tests/peer/compare.sh

# Real machine checks through QEMU's monitor, in a boot of their own.
test-mce: module helpers
	tests/mce/run.sh

# Unmodified Debian QEMU and KVM (nested SVM under TCG) with a Debian guest
# through one uncorrected error, stock and opted in (tests/vmm/run.sh).
test-vmm: module daemon
	tests/vmm/run.sh

# The demo runs mfrd and mfrctl in the guest.
demo: module helpers daemon
	scripts/vm-run.sh "$(CURDIR)/scripts/demo.sh"

# The same story with a real guest: QEMU 10 and KVM, nested (scripts/demo-vm.sh).
demo-vm: module daemon
	scripts/demo-vm.sh

checkpatch: kernel
	scripts/checkpatch.sh

ynl-regen: deps
	$(PYTHON_BIN) scripts/ynl-regen.py --ksrc "$$(scripts/build-kernel.sh --prepare-only)"

# Fleet-host installation.  The unit and the rule go where Debian's
# systemd and udev look for packaged ones; enable the unit to get the boot
# offlining of earlier pfns without waiting for the module.
DESTDIR ?=
PREFIX ?= /usr
# Debian 12's debhelper looks for units and rules under /lib.
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
UDEVRULESDIR ?= $(PREFIX)/lib/udev/rules.d
MFR_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
DKMS_SRC = $(DESTDIR)/usr/src/mfr-$(MFR_VERSION)

# The unit names the binaries under $(PREFIX)/sbin; modules-load.d loads
# mfr.ko at boot.
install:
	$(MAKE) -C daemon install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)
	$(MAKE) install-system DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)

# What systemd, udev and modules-load read (debian/rules uses it too).
install-system:
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|/usr/sbin/|$(PREFIX)/sbin/|g' systemd/mfrd.service \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/mfrd.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/mfrd.service
	install -D -m 0644 udev/60-mfr.rules $(DESTDIR)$(UDEVRULESDIR)/60-mfr.rules
	install -D -m 0644 modules-load.d/mfr.conf $(DESTDIR)$(PREFIX)/lib/modules-load.d/mfr.conf
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/doc/mfr/examples \
		prometheus/mfr-alerts.yml prometheus/mfr-alerts.test.yml

# What DKMS builds from: dkms.conf and the module's sources, nothing built.
# Registering is left to the package's postinst when DESTDIR is set.
dkms-install:
	@test -n "$(MFR_VERSION)" || { echo "no PACKAGE_VERSION in dkms.conf" >&2; exit 1; }
	rm -rf $(DKMS_SRC)
	install -d $(DKMS_SRC)/module/include/uapi/linux
	install -m 0644 dkms.conf $(DKMS_SRC)/
	install -m 0644 module/Kbuild module/Makefile \
		$(filter-out %.mod.c,$(wildcard module/*.[ch])) $(DKMS_SRC)/module/
	install -m 0644 module/include/uapi/linux/*.h $(DKMS_SRC)/module/include/uapi/linux/
	if [ -z "$(DESTDIR)" ] && ! dkms status -m mfr -v $(MFR_VERSION) | grep -q .; then \
		dkms add mfr/$(MFR_VERSION); fi

# mfr-dkms and mfrd .debs (debian/) into build/deb, built from a copy of
# the tracked files so that dpkg-buildpackage writes nothing outside build/.
# DEB_CHROOT: build them in that chroot of another distribution instead
# (make e2e E2E_DIST=trixie), into DEB_DIR.
DEB_DIR ?= build/deb
DEB_SRC = $(DEB_DIR)/mfr-$(MFR_VERSION)
deb:
	$(if $(DEB_CHROOT),,scripts/install-deps.sh --deb)
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	git ls-files -z --cached --others --exclude-standard | \
		grep -zv '^build/' | xargs -0 cp --parents -t $(DEB_SRC)
	$(if $(DEB_CHROOT),scripts/e2e/chroot-run.sh $(DEB_CHROOT) env -C $(abspath $(DEB_SRC)),cd $(DEB_SRC) &&) \
		dpkg-buildpackage -b -us -uc
	ls $(DEB_DIR)/*.deb

# Two non-debug kernels, with and without the series, and one VM each
# (bench/run.sh); writes bench/RESULTS.md.
bench: deps helpers daemon
	bench/run.sh

# Every linux-source-6.12 the archive offers: the series applies with
# --fuzz=0 to all at or above kernel-hooks/BASE (downloads cached).
series-check:
	scripts/series-check.sh

# One kernel build and one boot per prefix of the series: not part of
# "make test" (BISECT_DRY_RUN=1 prints the plan, BISECT_PATCHES="1 2").
bisect-check: deps helpers
	scripts/bisect-check.sh

# Not part of "make test": about half an hour under TCG (see scripts/e2e/).
e2e: deps helpers daemon
	scripts/e2e/run.sh

clean:
	rm -rf build
	rm -f module/*.o module/*.ko module/*.mod* module/.*.cmd module/Module.symvers module/modules.order
	rm -f tests/kmod/*.o tests/kmod/*.ko tests/kmod/*.mod* tests/kmod/.*.cmd tests/kmod/Module.symvers tests/kmod/modules.order

PYTHON_BIN ?= /usr/bin/python3
