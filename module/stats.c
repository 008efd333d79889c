// SPDX-License-Identifier: GPL-2.0-only
#include "stats.h"

struct mfr_stats mfr_stats;
