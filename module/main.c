// SPDX-License-Identifier: GPL-2.0-only
/*
 * mfr: per-memfd memory-failure recovery policy for HugeTLB memory.
 *
 * Module init and exit only; each concern lives in its own file.
 */
#include <linux/module.h>

#include "events.h"
#include "hooks.h"
#include "netlink.h"
#include "poison.h"
#include "policy.h"
#include "ratelimit.h"
#include "rules.h"
#include "version.h"

static int __init mfr_init(void)
{
	int err;

	mfr_ratelimit_init();
	mfr_events_init();
	err = mfr_policy_init();
	if (err)
		return err;

	err = mfr_netlink_init();
	if (err)
		goto err_policy;

	/*
	 * Last: from here the kernel calls into the module, and every hook
	 * may send events and make records the rest must be ready for.
	 */
	err = mfr_hooks_register();
	if (err)
		goto err_netlink;
	mfr_policy_go_live();

	pr_info("version %s loaded\n", MFR_VERSION);
	return 0;

err_netlink:
	mfr_events_flush();
	mfr_netlink_exit();
	/* Rules may have come over netlink meanwhile. */
	mfr_rules_flush();
err_policy:
	mfr_policy_exit();
	return err;
}

/*
 * Only reached with no kept memfd and no pending folio left.  The hooks
 * go first, so that nothing raises an event or a record past this point.
 */
static void __exit mfr_exit(void)
{
	mfr_hooks_unregister();
	mfr_events_flush();
	mfr_netlink_exit();
	mfr_poison_flush();
	mfr_rules_flush();
	mfr_policy_exit();
}

module_init(mfr_init);
module_exit(mfr_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Per-memfd memory-failure recovery policy for HugeTLB memory");
MODULE_AUTHOR("The mfr developers");
MODULE_VERSION(MFR_VERSION);
/*
 * No MODULE_ALIAS_GENL_FAMILY: any user looking the family up would load
 * the module, which changes what memfd_create() accepts host-wide and,
 * through udev, starts mfrd.  Loading is the operator's decision:
 * modprobe, or modules-load.d at boot (systemd/modules-load.d/mfr.conf).
 */
