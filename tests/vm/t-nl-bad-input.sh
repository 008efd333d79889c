# SPDX-License-Identifier: GPL-2.0-or-later
# Malformed and pointless requests: errno and extack for each (nl_badinput.py).
. ./lib.sh
"$PYTHON" nl_badinput.py
