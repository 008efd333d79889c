# SPDX-License-Identifier: GPL-2.0-or-later
# Notifications on the "events" group, in order, and recovery after ENOBUFS.
. ./lib.sh
"$PYTHON" nl_events.py
