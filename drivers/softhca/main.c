// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca: a software RDMA HCA.
 *
 * Module entry points, tunables and the "rdma link" type.  Devices are
 * created by user space ("rdma link add NAME type softhca netdev IF"),
 * never by loading the module.
 */
#include <linux/module.h>
#include <linux/sysfs.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>

#include "engine.h"
#include "net.h"
#include "roce_hdr.h"
#include "wire_seq.h"

struct softhca_limits softhca_limits = {
	.max_pd = 65536,
	.max_qp = 65536,
	.max_qp_wr = 16384,
	.max_sge = 32,
	.max_cq = 65536,
	.max_cqe = 65536,
	.max_mr = 65536,
	.max_srq = 65536,
	.max_srq_wr = 16384,
	.max_inline = 512,
	.max_ah = 65536,
	.max_mr_size = 1UL << 40,
};

struct softhca_engine_params softhca_engine = {
	.pollers = 1,
	.poller_cpu = -1,
	.idle_us = 200,
	.contended_us = 2000,
	.qp_budget = 16,
	.chunk = 65536,
	.wire_pkts = 256,
	.tx_batch = 64,
	.quiet_us = 100,
	.reorder_us = 4000,
	.tail_us = 1000,
};

/*
 * Each limit has a range: the bounds are what the ABI or the key/number
 * spaces can represent (24-bit object numbers, 8-bit SGE counts, a
 * 64 MiB ring), so a value outside it is refused at load time instead of
 * failing later in a confusing way.
 */
struct softhca_limit_param {
	unsigned int *val;
	unsigned int min, max;
};

static int softhca_param_set_limit(const char *val,
				   const struct kernel_param *kp)
{
	const struct softhca_limit_param *lp = kp->arg;
	unsigned int v;
	int err;

	err = kstrtouint(val, 0, &v);
	if (err)
		return err;
	if (v < lp->min || v > lp->max)
		return -EINVAL;
	*lp->val = v;
	return 0;
}

static int softhca_param_get_limit(char *buf, const struct kernel_param *kp)
{
	const struct softhca_limit_param *lp = kp->arg;

	return sysfs_emit(buf, "%u\n", *lp->val);
}

static const struct kernel_param_ops softhca_limit_ops = {
	.set = softhca_param_set_limit,
	.get = softhca_param_get_limit,
};

/* Read-only once loaded: devices report and enforce one set of limits. */
static struct softhca_limit_param softhca_lp_max_pd = {
	.val = &softhca_limits.max_pd, .min = 1, .max = 16777216,
};

static struct softhca_limit_param softhca_lp_max_qp = {
	.val = &softhca_limits.max_qp, .min = 1, .max = 16777214,
};

static struct softhca_limit_param softhca_lp_max_qp_wr = {
	.val = &softhca_limits.max_qp_wr, .min = 1, .max = 65536,
};

static struct softhca_limit_param softhca_lp_max_sge = {
	.val = &softhca_limits.max_sge, .min = 1, .max = 255,
};

static struct softhca_limit_param softhca_lp_max_cq = {
	.val = &softhca_limits.max_cq, .min = 1, .max = 16777216,
};

static struct softhca_limit_param softhca_lp_max_cqe = {
	.val = &softhca_limits.max_cqe, .min = 1, .max = 1048576,
};

static struct softhca_limit_param softhca_lp_max_mr = {
	.val = &softhca_limits.max_mr, .min = 1, .max = SOFTHCA_MR_INDEX_MAX,
};

static struct softhca_limit_param softhca_lp_max_srq = {
	.val = &softhca_limits.max_srq, .min = 1, .max = 16777215,
};

static struct softhca_limit_param softhca_lp_max_srq_wr = {
	.val = &softhca_limits.max_srq_wr, .min = 1, .max = 65536,
};

static struct softhca_limit_param softhca_lp_max_inline = {
	.val = &softhca_limits.max_inline, .min = 0, .max = 4096,
};

static struct softhca_limit_param softhca_lp_max_ah = {
	.val = &softhca_limits.max_ah, .min = 1, .max = 16777216,
};

/* The engine's tunables; all but the thread count and CPU may change at run time. */
static struct softhca_limit_param softhca_lp_pollers = {
	.val = &softhca_engine.pollers, .min = 1, .max = 64,
};

static struct softhca_limit_param softhca_lp_idle_us = {
	.val = &softhca_engine.idle_us, .min = 0, .max = 1000000,
};

static struct softhca_limit_param softhca_lp_contended_us = {
	.val = &softhca_engine.contended_us, .min = 0, .max = 1000000,
};

static struct softhca_limit_param softhca_lp_qp_budget = {
	.val = &softhca_engine.qp_budget, .min = 1, .max = 4096,
};

static struct softhca_limit_param softhca_lp_chunk = {
	.val = &softhca_engine.chunk, .min = 4096, .max = 16 << 20,
};

static struct softhca_limit_param softhca_lp_wire_pkts = {
	.val = &softhca_engine.wire_pkts, .min = 1, .max = SOFTHCA_SEQ_CHUNK_PKTS,
};

static struct softhca_limit_param softhca_lp_quiet_us = {
	.val = &softhca_engine.quiet_us, .min = 0, .max = 1000000,
};

static struct softhca_limit_param softhca_lp_reorder_us = {
	.val = &softhca_engine.reorder_us, .min = 0, .max = 1000000,
};

static struct softhca_limit_param softhca_lp_tail_us = {
	.val = &softhca_engine.tail_us, .min = 0, .max = 1000000,
};

static struct softhca_limit_param softhca_lp_tx_batch = {
	.val = &softhca_engine.tx_batch, .min = 1, .max = 64,
};

module_param_cb(pollers, &softhca_limit_ops, &softhca_lp_pollers, 0444);
MODULE_PARM_DESC(pollers, "poller threads of the host, shared by every softhca device, default 1 (1..64); QPs are spread over them by number");
module_param_named(poller_cpu, softhca_engine.poller_cpu, int, 0444);
MODULE_PARM_DESC(poller_cpu, "bind poller i to CPU poller_cpu + i, default -1 (no binding)");
module_param_cb(poll_idle_us, &softhca_limit_ops, &softhca_lp_idle_us, 0644);
MODULE_PARM_DESC(poll_idle_us, "microseconds a poller keeps watching a QP without work before it hands it back to the doorbell, default 200 (0..1000000); doubled per QP, up to 64 times, while its releases prove premature");
module_param_cb(poll_contended_us, &softhca_limit_ops, &softhca_lp_contended_us, 0644);
MODULE_PARM_DESC(poll_contended_us, "microseconds another task must wait for a poller's CPU before the poller gives its QPs back to the doorbell and backs off for 20 ms, default 2000 (0: never, for a dedicated poller CPU)");
module_param_cb(qp_budget, &softhca_limit_ops, &softhca_lp_qp_budget, 0644);
MODULE_PARM_DESC(qp_budget, "steps per QP per poller visit (a work request, or 16 KiB of a long message), default 16 (1..4096)");
module_param_cb(chunk_bytes, &softhca_limit_ops, &softhca_lp_chunk, 0644);
MODULE_PARM_DESC(chunk_bytes, "bytes of a long message moved per step, default 65536 (4096..16777216)");
module_param_cb(wire_chunk_pkts, &softhca_limit_ops, &softhca_lp_wire_pkts, 0644);
MODULE_PARM_DESC(wire_chunk_pkts, "path-MTU packets of a long message sent per step on the wire (RC: answered by one ACK), default 256 (1..512)");
module_param_cb(tx_batch, &softhca_limit_ops, &softhca_lp_tx_batch, 0644);
MODULE_PARM_DESC(tx_batch, "RoCEv2 packets to one peer sent as one UDP GSO skb, default 64 (1..64; 1: each alone, for a NIC whose UDP segmentation numbers IPv4 IDs unlike Linux)");
module_param_cb(ack_quiet_us, &softhca_limit_ops, &softhca_lp_quiet_us, 0644);
MODULE_PARM_DESC(ack_quiet_us, "RC on the wire: an unsignaled SEND or WRITE asks for no ACK, and what is posted behind it within this many microseconds joins it before its ACK is asked for (0..1000000; 0: every message asks; default 100, see Documentation/wire.rst)");
module_param_cb(read_reorder_us, &softhca_limit_ops, &softhca_lp_reorder_us, 0644);
MODULE_PARM_DESC(read_reorder_us, "RC on the wire: an RDMA READ whose responses stopped coming for this many microseconds (half the local ACK timeout at most) with some missing is asked again for the rest without waiting out the timeout (0..1000000; 0: only the timeout; default 4000, see Documentation/wire.rst)");
module_param_cb(tail_probe_us, &softhca_limit_ops, &softhca_lp_tail_us, 0644);
MODULE_PARM_DESC(tail_probe_us, "RC on the wire: what is in flight and unanswered for twice the smoothed round trip (or it plus four deviations), and at least this many microseconds, goes again once as a probe without waiting out the local ACK timeout (0..1000000; 0: only the timeout; default 1000, see Documentation/wire.rst)");

module_param_cb(max_pd, &softhca_limit_ops, &softhca_lp_max_pd, 0444);
MODULE_PARM_DESC(max_pd, "protection domains (and XRC domains) per device, default 65536 (1..16777216)");
module_param_cb(max_qp, &softhca_limit_ops, &softhca_lp_max_qp, 0444);
MODULE_PARM_DESC(max_qp, "queue pairs per device, default 65536 (1..16777214)");
module_param_cb(max_qp_wr, &softhca_limit_ops, &softhca_lp_max_qp_wr, 0444);
MODULE_PARM_DESC(max_qp_wr, "work requests per send or receive queue, default 16384 (1..65536)");
module_param_cb(max_sge, &softhca_limit_ops, &softhca_lp_max_sge, 0444);
MODULE_PARM_DESC(max_sge, "scatter/gather entries per work request, default 32 (1..255)");
module_param_cb(max_cq, &softhca_limit_ops, &softhca_lp_max_cq, 0444);
MODULE_PARM_DESC(max_cq, "completion queues per device, default 65536 (1..16777216)");
module_param_cb(max_cqe, &softhca_limit_ops, &softhca_lp_max_cqe, 0444);
MODULE_PARM_DESC(max_cqe, "entries per completion queue, default 65536 (1..1048576)");
module_param_cb(max_mr, &softhca_limit_ops, &softhca_lp_max_mr, 0444);
MODULE_PARM_DESC(max_mr, "memory regions per device, default 65536 (1..8388607)");
module_param_cb(max_srq, &softhca_limit_ops, &softhca_lp_max_srq, 0444);
MODULE_PARM_DESC(max_srq, "shared receive queues per device, default 65536 (1..16777215)");
module_param_cb(max_srq_wr, &softhca_limit_ops, &softhca_lp_max_srq_wr, 0444);
MODULE_PARM_DESC(max_srq_wr, "work requests per shared receive queue, default 16384 (1..65536)");
module_param_cb(max_inline, &softhca_limit_ops, &softhca_lp_max_inline, 0444);
MODULE_PARM_DESC(max_inline, "inline data bytes per send work request, default 512 (0..4096)");
module_param_cb(max_ah, &softhca_limit_ops, &softhca_lp_max_ah, 0444);
MODULE_PARM_DESC(max_ah, "address handles per device, default 65536 (1..16777216)");

static int softhca_param_set_mr_size(const char *val,
				     const struct kernel_param *kp)
{
	unsigned long v;
	int err;

	err = kstrtoul(val, 0, &v);
	if (err)
		return err;
	if (v < PAGE_SIZE || v > (1UL << 46))
		return -EINVAL;
	softhca_limits.max_mr_size = v;
	return 0;
}

static const struct kernel_param_ops softhca_mr_size_ops = {
	.set = softhca_param_set_mr_size,
	.get = param_get_ulong,
};

module_param_cb(max_mr_size, &softhca_mr_size_ops, &softhca_limits.max_mr_size,
		0444);
MODULE_PARM_DESC(max_mr_size, "largest memory region in bytes (4096..2^46, default 2^40)");

static struct rdma_link_ops softhca_link_ops = {
	.type = SOFTHCA_DRV_NAME,
	.newlink = softhca_newlink,
};

static int __init softhca_init(void)
{
	int err;

	softhca_icrc_init();
	err = softhca_net_init();
	if (err)
		goto err_icrc;
	err = softhca_netdev_notifier_register();
	if (err)
		goto err_net;
	rdma_link_register(&softhca_link_ops);
	pr_info("%s %s loaded (ICRC: %s)\n", SOFTHCA_DRV_NAME,
		SOFTHCA_DRV_VERSION, softhca_icrc_impl());
	return 0;

err_net:
	softhca_net_exit();
err_icrc:
	softhca_icrc_exit();
	return err;
}

static void __exit softhca_exit(void)
{
	/* First stop new devices, then remove the existing ones. */
	rdma_link_unregister(&softhca_link_ops);
	softhca_remove_all();
	softhca_netdev_notifier_unregister();
	softhca_net_exit();
	softhca_icrc_exit();
}

module_init(softhca_init);
module_exit(softhca_exit);

MODULE_AUTHOR("softhca developers");
MODULE_DESCRIPTION("softhca: software RDMA host channel adapter");
MODULE_LICENSE("GPL");
MODULE_VERSION(SOFTHCA_DRV_VERSION);
MODULE_ALIAS_RDMA_LINK("softhca");
