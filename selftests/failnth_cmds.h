/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The verbs commands the fault-injection sweeps fail (failnth.c): what
 * each makes, checks after a failure and after a success.
 * Included once, in order, by failnth.c.
 */
#ifndef SOFTHCA_SELFTEST_FAILNTH_CMDS_H
#define SOFTHCA_SELFTEST_FAILNTH_CMDS_H

/* ---------------------------------------------------------------------
 * The commands
 */

static void *t_obj;

static int simple_call(void)
{
	t_obj = cur->obj->make();
	return e(t_obj);
}

static int simple_done(int keep)
{
	int bad = cur->obj->check ? cur->obj->check(t_obj) : 0, err = 0;

	if (keep)
		cur->obj->keep(t_obj);
	else
		err = cur->obj->drop(t_obj);
	if (err)
		printf("# %s: undoing it: %s\n", cur->name, strerror(err));
	t_obj = NULL;
	return bad || err ? -1 : 0;
}

/*
 * The op @op_name for command @what: @make() makes the object, @check()
 * (or NULL) tries it, @destroy(obj) drops it, the final one is kept in
 * @var.
 */
/* ...: errnos a failure may end in besides ENOMEM (struct op's also). */
#define SIMPLE_ALSO(op_name, what, make, check, destroy, var, ...)	\
	static int op_name##_drop(void *o) { return destroy(o); }	\
	static void op_name##_keep(void *o) { var = o; }		\
	static const struct simple op_name##_obj = {			\
		make, check, op_name##_drop, op_name##_keep,		\
	};								\
	static const struct op op_name = {				\
		.name = what, .call = simple_call, .done = simple_done, \
		.obj = &op_name##_obj, .also = { __VA_ARGS__ },	\
	}
#define SIMPLE(op_name, what, make, check, destroy, var)		\
	SIMPLE_ALSO(op_name, what, make, check, destroy, var, 0)

/* ibv_open_device: the ucontext, its async fd, the context page mmap. */
static void *open_make(void) { return ibv_open_device(dev); }

static int open_check(void *o)
{
	struct ibv_device_attr a;

	if (!ibv_query_device(o, &a))
		return 0;
	printf("# query_device on the new context: %s\n", strerror(errno));
	return -1;
}

SIMPLE(op_open, "ibv_open_device", open_make, open_check, ibv_close_device,
       ctx);

static void *chan_make(void) { return ibv_create_comp_channel(ctx); }
SIMPLE(op_chan, "ibv_create_comp_channel", chan_make, NULL,
       ibv_destroy_comp_channel, ch);

static void *pd_make(void) { return ibv_alloc_pd(ctx); }
SIMPLE(op_pd, "ibv_alloc_pd", pd_make, NULL, ibv_dealloc_pd, pd);

#define MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static void *mr_make(void) { return ibv_reg_mr(pd, sbuf, BUFSZ, MR_ACCESS); }
SIMPLE(op_mr, "ibv_reg_mr", mr_make, NULL, ibv_dereg_mr, mr);

/*
 * ibv_rereg_mr: new translation and access on an MR registered before
 * each attempt.  After a failed command ibv_rereg_mr(3) says the MR
 * should not be used: it must still deregister, and nothing may remain.
 */
static uint32_t rereg_old_key;

static int rereg_prep(void)
{
	t_mr = ibv_reg_mr(pd, rbuf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (t_mr)
		rereg_old_key = t_mr->lkey;
	return e(t_mr);
}

static int rereg_call(void)
{
	int r = ibv_rereg_mr(t_mr, IBV_REREG_MR_CHANGE_TRANSLATION |
			     IBV_REREG_MR_CHANGE_ACCESS, NULL, rbuf, BUFSZ,
			     MR_ACCESS);

	if (!r)
		return 0;
	if (r != IBV_REREG_MR_ERR_CMD)
		printf("# ibv_rereg_mr returned %d\n", r);
	return errno ? errno : EIO;
}

static int rereg_failed(void)
{
	int err = ibv_dereg_mr(t_mr);

	t_mr = NULL;
	if (err)
		printf("# dereg_mr after a failed rereg: %s\n", strerror(err));
	return err ? -1 : 0;
}

static int rereg_done(int keep)
{
	int bad = 0;

	if (t_mr->lkey == rereg_old_key || t_mr->addr != rbuf ||
	    t_mr->length != BUFSZ) {
		printf("# rereg: key %#x (was %#x), %p+%zu\n", t_mr->lkey,
		       rereg_old_key, t_mr->addr, t_mr->length);
		bad = -1;
	}
	if (keep)
		mr2 = t_mr;
	else if (ibv_dereg_mr(t_mr))
		bad = -1;
	t_mr = NULL;
	return bad;
}

static const struct op op_rereg = {
	.name = "ibv_rereg_mr",
	.prep = rereg_prep,
	.call = rereg_call,
	.failed = rereg_failed,
	.done = rereg_done,
};

static void *cq_make(void)
{
	return ibv_create_cq(ctx, 64, (void *)0xcafe, ch, 0);
}

SIMPLE(op_cq, "ibv_create_cq", cq_make, NULL, ibv_destroy_cq, cq);

/*
 * ibv_resize_cq of a CQ that holds a completion nobody polled (a
 * receive flushed by a UC QP moved to ERR): after a failed resize the
 * CQ keeps its size, after a good one it has the new size; either way
 * it still yields that completion, and the next one too (a receive
 * posted afterwards, flushed at once): the library must read the ring
 * the kernel writes.
 */
static int resize_old;

static int resize_prep(void)
{
	struct ibv_sge sge = { (uintptr_t)rbuf, 64, mr2->lkey };
	struct ibv_recv_wr wr = { .wr_id = 77, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	t_cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!t_cq)
		return errno;
	resize_old = t_cq->cqe;
	t_qp = qp_new(IBV_QPT_UC, ctx, pd, t_cq, NULL, NULL);
	if (!t_qp || qp_modify_to(t_qp, IBV_QPS_INIT, 0) ||
	    ibv_post_recv(t_qp, &wr, &bad) ||
	    qp_modify_to(t_qp, IBV_QPS_ERR, 0))
		return errno ? errno : EIO;
	return 0;
}

static int resize_call(void)
{
	return ibv_resize_cq(t_cq, 200);
}

static int resize_check(int resized)
{
	struct ibv_sge sge = { (uintptr_t)rbuf, 64, mr2->lkey };
	struct ibv_recv_wr wr = { .wr_id = 78, .sg_list = &sge, .num_sge = 1 };
	const char *how = resized ? "good" : "failed";
	struct ibv_recv_wr *bad_wr;
	struct ibv_wc wc;
	int bad = 0;

	if (resized ? t_cq->cqe < 200 : t_cq->cqe != resize_old) {
		printf("# cqe %d after a %s resize (was %d)\n", t_cq->cqe, how,
		       resize_old);
		bad = -1;
	}
	if (!wait_wc(t_cq, &wc) || wc.wr_id != 77 ||
	    wc.status != IBV_WC_WR_FLUSH_ERR) {
		printf("# the CQ lost its completion across a %s resize\n", how);
		bad = -1;
	}
	/* And the next completion lands where the library reads. */
	if (ibv_post_recv(t_qp, &wr, &bad_wr) || !wait_wc(t_cq, &wc) ||
	    wc.wr_id != 78 || wc.status != IBV_WC_WR_FLUSH_ERR) {
		printf("# no completion after a %s resize\n", how);
		bad = -1;
	} else if (ibv_poll_cq(t_cq, 1, &wc)) {
		printf("# a third completion appeared\n");
		bad = -1;
	}
	bad |= destroy_qp(&t_qp);
	bad |= destroy_cq(&t_cq);
	return bad;
}

static int resize_failed(void)
{
	return resize_check(0);
}

static int resize_done(int keep)
{
	(void)keep;
	return resize_check(1);
}

static const struct op op_resize = {
	.name = "ibv_resize_cq",
	.prep = resize_prep,
	.call = resize_call,
	.failed = resize_failed,
	.done = resize_done,
};

/* ibv_create_qp of each type; the object kept for the SENDs later. */
static enum ibv_qp_type qp_type_now;
static struct ibv_qp **qp_keep;

static int qp_call(void)
{
	t_qp = qp_new(qp_type_now, ctx, pd, cq, NULL, xrcd);
	return e(t_qp);
}

static int qp_done(int keep)
{
	int bad = 0;

	if (t_qp->qp_type != qp_type_now || t_qp->state != IBV_QPS_RESET ||
	    qp_state_now(t_qp) != IBV_QPS_RESET) {
		printf("# new QP: type %d, state %d\n", t_qp->qp_type,
		       qp_state_now(t_qp));
		bad = -1;
	}
	if (keep && qp_keep)
		*qp_keep = t_qp;
	else
		bad |= destroy_qp(&t_qp);
	t_qp = NULL;
	return bad;
}

static const struct op op_qp_rc = {
	.name = "ibv_create_qp RC",
	.call = qp_call,
	.done = qp_done,
};
static const struct op op_qp_uc = {
	.name = "ibv_create_qp UC",
	.call = qp_call,
	.done = qp_done,
};
static const struct op op_qp_ud = {
	.name = "ibv_create_qp UD",
	.call = qp_call,
	.done = qp_done,
};
static const struct op op_qp_xs = {
	.name = "ibv_create_qp XRC_SEND",
	.call = qp_call,
	.done = qp_done,
};

static void *srq_make(void)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = 16, .max_sge = 2 } };

	return ibv_create_srq(pd, &a);
}

SIMPLE(op_srq, "ibv_create_srq", srq_make, NULL, ibv_destroy_srq, srq);

/*
 * XRC domains by file.  ib_uverbs keeps one domain per inode until its
 * use count (the opens, the XRC SRQs and XRC_RECV QPs in it) drops to
 * zero; a reference that a failed call leaves behind keeps the domain,
 * and its memory, for good, while ibv_close_xrcd still returns 0.  It
 * shows: opening the file again with O_CREAT | O_EXCL fails (EINVAL)
 * while the domain exists.  Each XRC sweep has a file of its own; after
 * a leak the sweep goes on with a fresh one.
 */
static int xfile[3] = { -1, -1, -1 };
static struct ibv_xrcd *xsrq_xrcd, *xtgt_xrcd;

static int tmp_file(void)
{
	char path[] = "/tmp/failnth-xrcd-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	return fd;
}

static struct ibv_xrcd *xrcd_open(int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd, .oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &a);
}

/* The domain of xfile[@slot] is gone: it can be made anew, exclusively. */
static int xrcd_gone(int slot, const char *what)
{
	struct ibv_xrcd *x = xrcd_open(xfile[slot], O_CREAT | O_EXCL);
	int err = errno;

	if (x)
		return ibv_close_xrcd(x) ? -1 : 0;
	/* The next attempt needs a file whose domain can be made anew. */
	close(xfile[slot]);
	xfile[slot] = tmp_file();
	xrcd_leaks++;
	if (in_attempt)
		return 0;	/* sweep() tells whose bug it is */
	printf("# %s: the file's XRC domain outlived its last close (%s): "
	       "a use count leaked\n", what, strerror(err));
	return -1;
}

/* Close the attempt's domain; it must be gone. */
static int xrcd_release(int slot, const char *what)
{
	int err = t_xrcd ? ibv_close_xrcd(t_xrcd) : 0;

	t_xrcd = NULL;
	if (err) {
		printf("# %s: close_xrcd: %s\n", what, strerror(err));
		return -1;
	}
	return xrcd_gone(slot, what);
}

/* ibv_open_xrcd on a file (ib_uverbs's per-inode domain table). */
static int xrcd_call(void)
{
	t_xrcd = xrcd_open(xfile[0], O_CREAT);
	return e(t_xrcd);
}

static int xrcd_failed(void)
{
	return xrcd_gone(0, "ibv_open_xrcd");
}

static int xrcd_done(int keep)
{
	if (!keep)
		return xrcd_release(0, "ibv_open_xrcd");
	xrcd = t_xrcd;
	t_xrcd = NULL;
	return 0;
}

static const struct op op_xrcd = {
	.name = "ibv_open_xrcd",
	.call = xrcd_call,
	.failed = xrcd_failed,
	.done = xrcd_done,
};

static struct ibv_srq *xsrq_new(struct ibv_xrcd *x)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 16, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = x, .cq = cq,
	};

	return ibv_create_srq_ex(ctx, &a);
}

/* XRC SRQ and XRC_RECV QP, each attempt in a new domain of its own. */
static int xrc_slot;

static int xrc_prep(void)
{
	t_xrcd = xrcd_open(xfile[xrc_slot], O_CREAT | O_EXCL);
	return e(t_xrcd);
}

static int xsrq_call(void)
{
	t_srq = xsrq_new(t_xrcd);
	return e(t_srq);
}

static int xsrq_failed(void)
{
	return xrcd_release(1, "ibv_create_srq_ex XRC");
}

static int xsrq_done(int keep)
{
	uint32_t num = 0;
	int bad = 0;

	if (ibv_get_srq_num(t_srq, &num) || !num) {
		printf("# XRC SRQ without a number\n");
		bad = -1;
	}
	if (keep) {
		xsrq = t_srq;
		xsrq_xrcd = t_xrcd;
		t_xrcd = NULL;
	} else {
		if (ibv_destroy_srq(t_srq))
			bad = -1;
		bad |= xrcd_release(1, "ibv_create_srq_ex XRC");
	}
	t_srq = NULL;
	return bad;
}

static const struct op op_xsrq = {
	.name = "ibv_create_srq_ex XRC",
	.prep = xrc_prep,
	.call = xsrq_call,
	.failed = xsrq_failed,
	.done = xsrq_done,
};

static int xtgt_call(void)
{
	t_qp = qp_new(IBV_QPT_XRC_RECV, ctx, NULL, NULL, NULL, t_xrcd);
	return e(t_qp);
}

static int xtgt_failed(void)
{
	return xrcd_release(2, "ibv_create_qp XRC_RECV");
}

static int xtgt_done(int keep)
{
	int bad = 0;

	if (t_qp->qp_type != IBV_QPT_XRC_RECV ||
	    qp_state_now(t_qp) != IBV_QPS_RESET) {
		printf("# new XRC_RECV QP: type %d, state %d\n", t_qp->qp_type,
		       qp_state_now(t_qp));
		bad = -1;
	}
	if (keep) {
		xtgt = t_qp;
		xtgt_xrcd = t_xrcd;
		t_xrcd = NULL;
		t_qp = NULL;
		return bad;
	}
	bad |= destroy_qp(&t_qp);
	return bad | xrcd_release(2, "ibv_create_qp XRC_RECV");
}

static const struct op op_xtgt = {
	.name = "ibv_create_qp XRC_RECV",
	.prep = xrc_prep,
	.call = xtgt_call,
	.failed = xtgt_failed,
	.done = xtgt_done,
};

/* ibv_open_qp: another handle on the XRC_RECV QP. */
static int openqp_call(void)
{
	struct ibv_qp_open_attr a = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = xtgt->qp_num, .xrcd = xtgt_xrcd,
		.qp_type = IBV_QPT_XRC_RECV,
	};

	t_qp = ibv_open_qp(ctx, &a);
	return e(t_qp);
}

static int openqp_done(int keep)
{
	int bad = 0;

	(void)keep;
	if (t_qp->qp_num != xtgt->qp_num) {
		printf("# opened QP %u, not %u\n", t_qp->qp_num, xtgt->qp_num);
		bad = -1;
	}
	return bad | destroy_qp(&t_qp);
}

static const struct op op_openqp = {
	.name = "ibv_open_qp",
	.call = openqp_call,
	.done = openqp_done,
};

static void *ah_make(void)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = gid, .hop_limit = 64 },
	};

	return ibv_create_ah(pd, &a);
}

/*
 * ENETUNREACH: ib_core resolves a RoCE AH's destination MAC through an
 * IPv6 route lookup (GID 0 is the netdev's link-local address), and
 * IPv6 makes a per-CPU copy of a route the first time a CPU uses it;
 * when that allocation fails, ip6_pol_route() returns its null entry,
 * whose error is -ENETUNREACH (net/ipv6/route.c).  Only a CPU without
 * its copy yet allocates: one sweep in many meets it.
 */
SIMPLE_ALSO(op_ah, "ibv_create_ah", ah_make, NULL, ibv_destroy_ah, ah,
	    ENETUNREACH);

/*
 * ibv_modify_qp, one transition of one QP type: a fresh QP brought to
 * the state before it (unarmed), then the armed step.  After a failure
 * the QP is still in the old state and the same step, unarmed, works.
 */
static enum ibv_qp_state mod_from, mod_to;
static char mod_name[16][48];
static struct op mod_ops[16];

static int mod_prep(void)
{
	enum ibv_qp_state s;

	t_qp = qp_new(qp_type_now, ctx, pd, cq, NULL, xrcd);
	if (!t_qp)
		return errno;
	for (s = IBV_QPS_INIT; s <= mod_from; s++)
		if (qp_modify_to(t_qp, s, t_qp->qp_num))
			return errno ? errno : EIO;
	return 0;
}

static int mod_call(void)
{
	return qp_modify_to(t_qp, mod_to, t_qp->qp_num);
}

static int mod_failed(void)
{
	int s = qp_state_now(t_qp), bad = 0, err;

	if (s != (int)mod_from || t_qp->state != mod_from) {
		printf("# QP state %d (library: %d) after a failed move %d -> %d\n",
		       s, t_qp->state, mod_from, mod_to);
		bad = -1;
	}
	err = qp_modify_to(t_qp, mod_to, t_qp->qp_num);
	if (err) {
		printf("# the same move, not armed: %s\n", strerror(err));
		bad = -1;
	}
	return bad | destroy_qp(&t_qp);
}

static int mod_done(int keep)
{
	int s = qp_state_now(t_qp), bad = 0;

	(void)keep;
	if (s != (int)mod_to) {
		printf("# QP state %d after a move to %d\n", s, mod_to);
		bad = -1;
	}
	return bad | destroy_qp(&t_qp);
}

/*
 * "rdma link add": one RDMA_NLDEV_CMD_NEWLINK, the socket and the
 * message made before the fault is armed.  A reply lost to the fault
 * (recv() says ENOBUFS: the kernel could not allocate the ACK) leaves
 * the outcome unknown to the caller, as netlink(7) says; the device is
 * then looked up: if it exists, the call is counted as absorbed.
 */
static const char *link_ndev;
static struct nlbuf link_msg;
static int link_ack_lost, link_ack_lost_made, link_no_uverbs, link_no_gsi;

#endif
