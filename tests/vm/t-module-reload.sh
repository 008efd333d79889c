# SPDX-License-Identifier: GPL-2.0-or-later
# mfr.ko unloads and loads cleanly 6 times; the family goes and comes back
# each time.  One Python process drives the loop (start-up is slow in TCG;
# a cycle takes about 8 s there).
. ./lib.sh

"$PYTHON" - "$MFR_KSRC" "$SPEC" "$MFR_ROOT/module/mfr.ko" <<'PY'
import os, subprocess, sys
sys.path.insert(0, sys.argv[1] + '/tools/net/ynl')
import lib.ynl
from lib import YnlFamily
schema = ''  # validated once elsewhere; costly under TCG

def family_answers():
    # The library caches family ids per process; a reload changes the id.
    lib.ynl.genl_family_name_to_id = None
    try:
        YnlFamily(sys.argv[2], schema).do('status-get', {})
        return True
    except Exception:
        return False

for i in range(1, 7):
    subprocess.run(['rmmod', 'mfr'], check=True)
    if os.path.exists('/sys/module/mfr') or family_answers():
        sys.exit(f'not ok - mfr still present after rmmod #{i}')
    subprocess.run(['insmod', sys.argv[3]], check=True)
    if not family_answers():
        sys.exit(f'not ok - no status after insmod #{i}')
print('ok - 6 unload/load cycles, the family went and came back each time')
PY
