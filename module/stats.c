// SPDX-License-Identifier: GPL-2.0-only
#include "stats.h"

struct mfr_stats mfr_stats;

static atomic64_t mfr_generation = ATOMIC64_INIT(1);

u64 mfr_state_changed(void)
{
	return atomic64_inc_return(&mfr_generation);
}

u64 mfr_state_generation(void)
{
	return atomic64_read(&mfr_generation);
}
