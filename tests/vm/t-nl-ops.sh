# SPDX-License-Identifier: GPL-2.0-or-later
# Every operation of the family through the kernel's YNL CLI (nl_ops.py).
. ./lib.sh
"$PYTHON" nl_ops.py
