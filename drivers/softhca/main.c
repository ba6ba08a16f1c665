// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: a software RDMA HCA.
 *
 * Module entry points, tunables and the "rdma link" type.  Devices are
 * created by user space ("rdma link add NAME type softhca netdev IF"),
 * never by loading the module.
 */
#include <linux/module.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>

#include "softhca.h"

struct softhca_limits softhca_limits = {
	.max_pd = 65536,
};

static int softhca_param_set_limit(const char *val,
				   const struct kernel_param *kp)
{
	unsigned int v;
	int err;

	err = kstrtouint(val, 0, &v);
	if (err)
		return err;
	if (v < 1 || v > (1U << 24))
		return -EINVAL;
	*(unsigned int *)kp->arg = v;
	return 0;
}

static const struct kernel_param_ops softhca_limit_ops = {
	.set = softhca_param_set_limit,
	.get = param_get_uint,
};

/* Read-only once loaded: devices report and enforce one set of limits. */
module_param_cb(max_pd, &softhca_limit_ops, &softhca_limits.max_pd, 0444);
MODULE_PARM_DESC(max_pd, "protection domains per device (1..16777216, default 65536)");

static struct rdma_link_ops softhca_link_ops = {
	.type = SOFTHCA_DRV_NAME,
	.newlink = softhca_newlink,
};

static int __init softhca_init(void)
{
	int err;

	err = softhca_netdev_notifier_register();
	if (err)
		return err;
	rdma_link_register(&softhca_link_ops);
	pr_info("%s %s loaded\n", SOFTHCA_DRV_NAME, SOFTHCA_DRV_VERSION);
	return 0;
}

static void __exit softhca_exit(void)
{
	/* First stop new devices, then remove the existing ones. */
	rdma_link_unregister(&softhca_link_ops);
	softhca_remove_all();
	softhca_netdev_notifier_unregister();
}

module_init(softhca_init);
module_exit(softhca_exit);

MODULE_AUTHOR("softhca developers");
MODULE_DESCRIPTION("softhca: software RDMA host channel adapter");
MODULE_LICENSE("GPL");
MODULE_VERSION(SOFTHCA_DRV_VERSION);
MODULE_ALIAS_RDMA_LINK("softhca");
