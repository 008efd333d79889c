# SPDX-License-Identifier: GPL-2.0-or-later
# rule-replace: all or nothing, no window, no 2x limit (nl_rule_replace.py).
. ./lib.sh
"$PYTHON" nl_rule_replace.py
