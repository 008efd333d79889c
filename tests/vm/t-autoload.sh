# SPDX-License-Identifier: GPL-2.0-or-later
# Autoload (README, "Loading the module"): mfr.ko has no generic netlink
# family alias, so looking the "mfr" family up, which any user may do,
# does not load it; loading is modprobe by name, as modules-load.d does
# at boot.  The module goes into a scratch module tree and
# /proc/sys/kernel/modprobe points at a wrapper that logs the kernel's
# requests and runs modprobe on that tree.  The control: with the alias
# given to that modprobe (by a modprobe.d file), the same unprivileged
# lookup does load the module, so a module carrying the alias fails here.
. ./lib.sh

ko=$MFR_ROOT/module/mfr.ko
rel=$(uname -r)
tree=$(mktemp -d)
chmod 755 "$tree"
check "modinfo: no genetlink family alias in mfr.ko" \
	bash -c "! modinfo -F alias '$ko' | grep -q 'family-mfr'"
check "the repository ships modules-load.d/mfr.conf naming mfr" \
	grep -qx mfr "$MFR_ROOT/modules-load.d/mfr.conf"

mkdir -p "$tree/lib/modules/$rel/extra"
cp "$ko" "$tree/lib/modules/$rel/extra/"
depmod -b "$tree" "$rel" 2>/dev/null
echo 'alias net-pf-16-proto-16-family-mfr mfr' >"$tree/alias.conf"
cat >"$tree/modprobe" <<EOF
#!/bin/sh
echo "\$*" >>$tree/requests
if [ -e $tree/with-alias ]; then
	exec /sbin/modprobe -C $tree/alias.conf -d $tree "\$@"
fi
exec /sbin/modprobe -d $tree "\$@"
EOF
chmod 755 "$tree/modprobe"
old_modprobe=$(cat /proc/sys/kernel/modprobe)
echo "$tree/modprobe" >/proc/sys/kernel/modprobe

# CTRL_CMD_GETFAMILY "mfr" on a raw socket: FOUND or the errno's name.
lookup='
import errno, socket, struct
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
s.bind((0, 0))
name = b"mfr\0"
attr = struct.pack("HH", 4 + len(name), 2) + name + b"\0" * (-len(name) % 4)
genl = struct.pack("BBH", 3, 1, 0)
s.send(struct.pack("IHHII", 16 + len(genl) + len(attr), 0x10, 1 | 4, 1, 0) + genl + attr)
data = s.recv(65536)
ln, typ = struct.unpack_from("IH", data)
if typ == 2:
    err, = struct.unpack_from("i", data, 16)
    print(errno.errorcode.get(-err, str(err)) if err else "ACK")
else:
    print("FOUND")
'
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }

rmmod mfr
check "mfr unloaded for the test" test ! -d /sys/module/mfr

got=$(as_nobody "$PYTHON" -c "$lookup")
check "nobody's lookup of the family: not found ($got)" test "$got" = ENOENT
check "the kernel asked modprobe for net-pf-16-proto-16-family-mfr" \
	grep -q 'net-pf-16-proto-16-family-mfr' "$tree/requests"
check "... and the module was not loaded" test ! -d /sys/module/mfr
got=$("$PYTHON" -c "$lookup")
check "root's lookup does not load it either ($got)" \
	bash -c "[ '$got' = ENOENT ] && [ ! -d /sys/module/mfr ]"

# Control: the same lookup with the alias known to modprobe loads it.
touch "$tree/with-alias"
got=$(as_nobody "$PYTHON" -c "$lookup")
check "control: with an alias, nobody's lookup loads mfr.ko ($got)" \
	bash -c "[ '$got' = FOUND ] && [ -d /sys/module/mfr ]"
rm -f "$tree/with-alias"
rmmod mfr 2>/dev/null

# What modules-load.d does: modprobe by name.
check "modprobe mfr (as systemd-modules-load does) loads it" \
	bash -c "/sbin/modprobe -d '$tree' mfr && [ -d /sys/module/mfr ]"
got=$("$PYTHON" -c "$lookup")
check "the family then resolves ($got)" test "$got" = FOUND

echo "$old_modprobe" >/proc/sys/kernel/modprobe
echo "modprobe requests seen:"
sed 's/^/  /' "$tree/requests"
# Back to the module the suite loaded (same file, loaded from its path).
rmmod mfr 2>/dev/null
insmod "$ko"
rm -rf "$tree"
finish
