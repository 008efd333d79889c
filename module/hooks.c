// SPDX-License-Identifier: GPL-2.0-only
/*
 * The module's side of the kernel's MFR hooks (include/linux/mfr.h).
 */
#include <linux/mfr.h>
#include <linux/module.h>

#include "hooks.h"
#include "offline.h"
#include "policy.h"

/*
 * The tests build a deliberately mismatched module with
 * MFR_FAKE_API_VERSION to check that it is refused.
 */
#ifdef MFR_FAKE_API_VERSION
#define MFR_BUILT_API_VERSION MFR_FAKE_API_VERSION
#else
#define MFR_BUILT_API_VERSION MFR_HOOKS_API_VERSION
#endif

static const struct mfr_ops mfr_policy_ops = {
	.api_version = MFR_BUILT_API_VERSION,
	.memfd_created = mfr_policy_memfd_created,
	.mapping_evicted = mfr_policy_mapping_evicted,
	.page_poisoned = mfr_policy_page_poisoned,
	.page_untracked = mfr_policy_page_untracked,
	.page_signalled = mfr_policy_page_signalled,
	.folio_released = mfr_offline_folio_released,
	.folio_offlined = mfr_offline_folio_offlined,
};

/* The kernel compares the table's hook API version with its own. */
int mfr_hooks_register(void)
{
	int err = mfr_register_ops(&mfr_policy_ops);

	if (err == -EINVAL)
		pr_err("this kernel refused MFR hook API %u, which the module was built for: rebuild mfr.ko against this kernel's headers\n",
		       MFR_BUILT_API_VERSION);
	return err;
}

void mfr_hooks_unregister(void)
{
	mfr_unregister_ops(&mfr_policy_ops);
}
