// SPDX-License-Identifier: GPL-2.0-only
/*
 * A test module that registers an empty generic netlink family named
 * "mfr", so that mfr.ko's own registration fails (-EEXIST) on load: the
 * module must then unwind with no hook called, no record made and no
 * warning.  Never loaded outside the VM tests.
 */
#include <linux/module.h>
#include <net/genetlink.h>

static struct genl_family squatter_family __ro_after_init = {
	.name = "mfr",
	.version = 1,
	.module = THIS_MODULE,
};

static int __init squatter_init(void)
{
	return genl_register_family(&squatter_family);
}

static void __exit squatter_exit(void)
{
	genl_unregister_family(&squatter_family);
}

module_init(squatter_init);
module_exit(squatter_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("mfr tests: a generic netlink family named mfr");
