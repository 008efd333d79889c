// SPDX-License-Identifier: GPL-2.0-only
/*
 * A bound on the notifications one user can cause.
 *
 * Any user may create kept memfds (each created and evicted one is a
 * notification) and touch a poisoned page of a memfd it maps (each time,
 * a notification).  Each user, by real uid, gets a token bucket: a burst
 * of event_burst notifications, refilled at event_rate a second.  Past
 * it, notifications are counted in events-suppressed instead of sent.
 * Nothing else changes: the records stay in the dumps and the generation
 * still moves, so a listener sees a gap and re-dumps.
 *
 * The buckets are a fixed table indexed by a keyed hash of the uid:
 * bounded memory however many uids there are, at the price that two uids
 * hashed to the same slot share a bucket.
 */
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/siphash.h>
#include <linux/spinlock.h>

#include "ratelimit.h"
#include "stats.h"

static unsigned int event_rate = 100;
module_param(event_rate, uint, 0644);
MODULE_PARM_DESC(event_rate,
		 "Notifications a user may cause per second, sustained (0: no limit)");

static unsigned int event_burst = 1000;
module_param(event_burst, uint, 0644);
MODULE_PARM_DESC(event_burst,
		 "Notifications a user may cause at once before event_rate applies");

#define MFR_RL_SLOTS	1024

/*
 * @debt is in 1/HZ notifications: one notification adds HZ, each jiffy
 * since @stamp takes event_rate off.  Zero is a full bucket.
 */
struct mfr_rl_slot {
	spinlock_t lock;	/* irqsave: callers may run with IRQs off */
	unsigned long stamp;
	u64 debt;
};

static struct mfr_rl_slot mfr_rl_slots[MFR_RL_SLOTS];
static siphash_key_t mfr_rl_key;

void mfr_ratelimit_init(void)
{
	unsigned int i;

	get_random_bytes(&mfr_rl_key, sizeof(mfr_rl_key));
	for (i = 0; i < MFR_RL_SLOTS; i++)
		spin_lock_init(&mfr_rl_slots[i].lock);
}

bool mfr_ratelimit_allow(kuid_t uid)
{
	unsigned int rate = READ_ONCE(event_rate);
	u64 limit = (u64)READ_ONCE(event_burst) * HZ;
	unsigned long flags, now;
	struct mfr_rl_slot *s;
	u64 credit;
	bool ok;

	if (!rate)
		return true;
	s = &mfr_rl_slots[siphash_1u32(__kuid_val(uid), &mfr_rl_key) %
			  MFR_RL_SLOTS];

	spin_lock_irqsave(&s->lock, flags);
	now = jiffies;
	/* An hour refills any bucket; the cap keeps the product small. */
	credit = (u64)min(now - s->stamp, 3600UL * HZ) * rate;
	s->debt = s->debt > credit ? s->debt - credit : 0;
	s->stamp = now;
	ok = s->debt + HZ <= limit;
	if (ok)
		s->debt += HZ;
	spin_unlock_irqrestore(&s->lock, flags);

	if (!ok)
		atomic_long_inc(&mfr_stats.events_suppressed);
	return ok;
}
