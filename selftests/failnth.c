// SPDX-License-Identifier: GPL-2.0-only
/*
 * Systematic fault injection into every verbs command that allocates in
 * the kernel, and into "rdma link add" (failnth.sh runs it; TAP).
 *
 * For each command: for n = 1, 2, ... write n to /proc/thread-self/
 * fail-nth (the n-th fault-injectable allocation of this thread fails:
 * failslab and fail_page_alloc, with ignore-gfp-wait off so that
 * sleeping allocations count), make the call, read fail-nth back (0: the
 * fault fired).  A call the fault hit must fail with a clean errno
 * (ENOMEM; ENOBUFS from netlink) and leave nothing behind: the device's
 * object counters (RDMA netlink, what "rdma resource show" prints), this
 * process's file descriptors and its mappings of the uverbs device are
 * as before the call, and what the call was to change is unchanged (a
 * QP's state, a CQ's completions, an XRC domain's use count).  A call
 * the fault hit that still succeeded (the allocation had a fallback, or
 * its failure is ignored) is undone and counted as absorbed.  The sweep
 * ends when a call succeeds without the fault firing: n - 1 injection
 * sites were covered.  The objects the sweeps finally made must then
 * work: a SEND on RC (into the swept SRQ, with a completion event on the
 * swept channel), UD (through the swept AH) and XRC (through the swept
 * XRC QPs and SRQ); the device the link-add sweep made carries an RC
 * SEND and is deleted again.  failnth.sh checks kmemleak ("failnth
 * kmemleak", kmemleak_mode()).
 *
 * Known kernel bugs: Linux 6.1's ib_core has two error paths that leak
 * when one of its own allocations fails (known_bugs[], the one list,
 * with the evidence each needs).  A sweep's misbehaviour, or a kmemleak
 * report, is excused only when the stack of that attempt's injected
 * fault, or the leaked object's allocation backtrace, shows it is one
 * of them; it is then a "known 6.1 ib_core bug" NOTE; anything else
 * fails.  For that, the attempts of the sweeps that can hit one print
 * their fault's stack (fault-injection verbose 2), read back at once
 * from /dev/kmsg; the other attempts print nothing.
 *
 * Time: "rdma link add" has about 1680 sites on the debug kernel, most
 * of them ib_core's in code that never calls the driver (its sysfs
 * groups, ib_uverbs_add_one(), QP1's receive buffers); there one site
 * in FAILNTH_STRIDE (16) is tried, each skip backed by the stacks of
 * the faults at both ends (sweep(), link_in_region()), and every other
 * site, the driver's included, is tried.  On the debug kernel under TCG
 * the sweeps took 315 s with every site tried; sampled inside
 * ib_uverbs_add_one() alone (the evidence a missing uverbs node) 162 s
 * (1038 of 1675 tried); with the stacks' evidence 121 s at stride 8
 * (707 tried) and 102 s at 16 (581 tried, more than half of them
 * faults that printed no stack: __GFP_NOWARN allocations, most of them
 * kmemleak's own, which it absorbs).
 *
 * Environment: SOFTHCA_DEV (a softhca device whose GID 0 is usable),
 * FAILNTH_NETDEV (a free Ethernet netdev for the link-add sweep; that
 * sweep is skipped without it), FAILNTH_CAP (highest n; default 200, and
 * 2000 for link add, which makes a device with all of ib_core's
 * clients), FAILNTH_STRIDE (1: no sampling), FAILNTH_KNOWN (a file for
 * what failnth.sh's kmemleak check needs).  For chasing a failure:
 * FAILNTH_TRACE (a line per attempt), FAILNTH_STACKS=OP:N,... or OP:*
 * or * (those attempts' faults print their stack to the kernel log),
 * FAILNTH_SITES=FILE (each attempt's outcome and its fault's stack, one
 * line each; the stacks asked for), FAILNTH_VERBOSE (fault-injection
 * verbosity of the other attempts, default 0) and tap.h's TAP_ONLY.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include "tap.h"
#include "util.h"

#define LINK_NAME "shfail0"
#define MSG_LEN 1000
#define GRH_LEN 40

/* ---------------------------------------------------------------------
 * fail-nth
 */

static int nth_fd = -1;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void arm(unsigned int n)
{
	char s[16];
	int len = snprintf(s, sizeof(s), "%u", n);

	if (pwrite(nth_fd, s, (size_t)len, 0) != len) {
		printf("Bail out! cannot arm fail-nth: %s\n", strerror(errno));
		exit(1);
	}
}

/* Disarm; whether the armed fault fired. */
static int disarm(void)
{
	char s[16] = "";
	ssize_t r = pread(nth_fd, s, sizeof(s) - 1, 0);
	int left = atoi(s);

	if (r <= 0 || pwrite(nth_fd, "0", 1, 0) != 1) {
		printf("Bail out! cannot read fail-nth: %s\n", strerror(errno));
		exit(1);
	}
	return left == 0;
}

#include "failnth_nl.h"

/* ---------------------------------------------------------------------
 * What a failed call may not leave behind
 */

struct snap {
	long res[NRES];
	int fds;
	int maps;	/* mappings of /dev/infiniband/... */
};

static uint32_t dev_idx;	/* SOFTHCA_DEV's index */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own */
}

static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "/dev/infiniband/") != NULL;
	fclose(f);
	return n;
}

/* The device's counts before the tests: ib_mad's QP1, CQ and PD. */
static struct snap base;

static int take_snap(struct snap *s)
{
	s->fds = count_fds();
	s->maps = count_maps();
	return res_get(dev_idx, s->res) || s->fds < 0 || s->maps < 0 ? -1 : 0;
}

/* Differences from @a, printed; 0 when none. */
static int snap_diff(const struct snap *a, const char *what, int n)
{
	struct snap b;
	int bad = 0;
	size_t i;

	if (take_snap(&b)) {
		printf("# %s n=%d: cannot read the counters\n", what, n);
		return -1;
	}
	for (i = 0; i < NRES; i++)
		if (a->res[i] != b.res[i]) {
			printf("# %s n=%d: %s count %ld -> %ld\n", what, n,
			       res_names[i], a->res[i], b.res[i]);
			bad = 1;
		}
	if (a->fds != b.fds) {
		printf("# %s n=%d: open files %d -> %d\n", what, n, a->fds,
		       b.fds);
		bad = 1;
	}
	if (a->maps != b.maps) {
		printf("# %s n=%d: uverbs mappings %d -> %d\n", what, n,
		       a->maps, b.maps);
		bad = 1;
	}
	return bad ? -1 : 0;
}

/* ---------------------------------------------------------------------
 * The sweep
 */

struct op {
	const char *name;
	/* Unarmed, before each attempt: what the call needs.  0 or errno. */
	int (*prep)(void);
	/* The armed call: 0 or the errno it failed with. */
	int (*call)(void);
	/*
	 * After an injected failure: check what the call was to change is
	 * as it was, and undo prep.  0 or -1 (printed).
	 */
	int (*failed)(void);
	/*
	 * After a success: check the result; undo it unless @keep (the
	 * sweep's final success, whose object later tests use).  0 or -1.
	 */
	int (*done)(int keep);
	/* errnos a failure may end in besides ENOMEM (0-terminated). */
	int also[3];
	/* The highest n tried (0: the default, FAILNTH_CAP or 200). */
	int cap;
	/* For simple_call/simple_done: the object the command makes. */
	const struct simple *obj;
	/*
	 * Sampling (see sweep()): whether the attempt just checked had its
	 * fault inside @region: 0 if not, else a key; faults with one key
	 * were made in one run of code that never calls the driver.  NULL:
	 * every site is tried.
	 */
	unsigned long (*in_region)(void);
	const char *region;
};

/*
 * A command that makes one object and nothing else: make it, check it
 * works (optional), drop it, or keep it for the later tests.
 */
struct simple {
	void *(*make)(void);
	int (*check)(void *obj);
	int (*drop)(void *obj);
	void (*keep)(void *obj);
};

static const struct op *cur;	/* the op being swept */
static int in_attempt;		/* checking an attempt's outcome */
static int xrcd_leaks;		/* domains that outlived their last close */

#define MAX_ERRNO 8

struct result {
	const char *name;
	int sites, failed, absorbed, known, ok, skipped;
	int err[MAX_ERRNO], err_n[MAX_ERRNO];
	double secs;
};

static struct result results[40];
static int nresults;
static int cap = 200, cap_env;
static int stride = 16;	/* FAILNTH_STRIDE: sampling (1: none) */
static int trace;	/* FAILNTH_TRACE: a line per attempt */
static const char *stacks;	/* FAILNTH_STACKS: "op:n,...", "op:*", "*" */
static FILE *sites_log;		/* FAILNTH_SITES: each attempt's stack */

#include "failnth_stack.h"

#include "failnth_sweep.h"

#include "failnth_objs.h"

#include "failnth_cmds.h"

#include "failnth_link.h"

/* ---------------------------------------------------------------------
 * The tests
 */

/* An XRC SEND from @ini through @tgt into @s (of @tgt's domain). */
static int xrc_send(struct ibv_qp *ini, struct ibv_qp *tgt, struct ibv_srq *s,
		    unsigned int seed)
{
	struct ibv_send_wr wr = {};
	uint32_t srqn = 0;

	if (ibv_get_srq_num(s, &srqn) || qp_up(tgt, ini->qp_num, 1) ||
	    qp_up(ini, tgt->qp_num, 0) ||
	    post_recv_to(NULL, s, mr2, rbuf, BUFSZ)) {
		printf("# XRC setup: %s\n", strerror(errno));
		return -1;
	}
	wr.qp_type.xrc.remote_srqn = srqn;
	return send_check(ini, &wr, cq, mr, sbuf, rbuf, 0, seed);
}

#define NEED(cond)							\
	do {								\
		if (!(cond))						\
			SKIP("an earlier sweep did not leave its object"); \
	} while (0)


TEST(open_device)
{
	CHECK(sweep(&op_open) == 0, "ibv_open_device");
	REQUIRE(ctx, "a context");
	CHECK(!ibv_query_gid(ctx, 1, 0, &gid), "GID 0");
}

TEST(comp_channel)
{
	NEED(ctx);
	CHECK(sweep(&op_chan) == 0, "ibv_create_comp_channel");
}

TEST(alloc_pd)
{
	NEED(ctx);
	CHECK(sweep(&op_pd) == 0, "ibv_alloc_pd");
}

TEST(reg_mr)
{
	NEED(pd);
	CHECK(sweep(&op_mr) == 0, "ibv_reg_mr");
	CHECK(sweep(&op_rereg) == 0, "ibv_rereg_mr");
}

TEST(create_cq)
{
	NEED(ch);
	CHECK(sweep(&op_cq) == 0, "ibv_create_cq");
}

TEST(resize_cq)
{
	NEED(cq && mr2);
	CHECK(sweep(&op_resize) == 0, "ibv_resize_cq");
}

TEST(create_qp)
{
	NEED(cq);
	qp_type_now = IBV_QPT_RC;
	qp_keep = &qrc;
	CHECK(sweep(&op_qp_rc) == 0, "RC");
	qp_type_now = IBV_QPT_UC;
	qp_keep = NULL;
	CHECK(sweep(&op_qp_uc) == 0, "UC");
	qp_type_now = IBV_QPT_UD;
	qp_keep = &qud;
	CHECK(sweep(&op_qp_ud) == 0, "UD");
	qp_keep = NULL;
}

TEST(create_srq)
{
	NEED(pd);
	CHECK(sweep(&op_srq) == 0, "ibv_create_srq");
}

TEST(xrc_objects)
{
	int i;

	NEED(cq);
	for (i = 0; i < 3; i++) {
		xfile[i] = tmp_file();
		REQUIRE(xfile[i] >= 0, "temporary file");
	}
	CHECK(sweep(&op_xrcd) == 0, "ibv_open_xrcd");
	xrc_slot = 1;
	CHECK(sweep(&op_xsrq) == 0, "XRC SRQ");
	qp_type_now = IBV_QPT_XRC_SEND;
	qp_keep = &xini;
	CHECK(sweep(&op_qp_xs) == 0, "XRC_SEND");
	qp_keep = NULL;
	xrc_slot = 2;
	CHECK(sweep(&op_xtgt) == 0, "XRC_RECV");
	REQUIRE(xtgt, "XRC_RECV QP");
	CHECK(sweep(&op_openqp) == 0, "ibv_open_qp");
}

TEST(create_ah)
{
	NEED(pd);
	CHECK(sweep(&op_ah) == 0, "ibv_create_ah");
}

TEST(modify_qp)
{
	static const struct {
		enum ibv_qp_type type;
		const char *name;
		enum ibv_qp_state last;
	} types[] = {
		{ IBV_QPT_RC, "RC", IBV_QPS_RTS },
		{ IBV_QPT_UC, "UC", IBV_QPS_RTS },
		{ IBV_QPT_UD, "UD", IBV_QPS_RTS },
		{ IBV_QPT_XRC_SEND, "XRC_SEND", IBV_QPS_RTS },
		{ IBV_QPT_XRC_RECV, "XRC_RECV", IBV_QPS_RTR },
	};
	static const char *const sname[] = { "RESET", "INIT", "RTR", "RTS" };
	size_t i;
	int k = 0;

	NEED(cq && xrcd);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		qp_type_now = types[i].type;
		for (mod_to = IBV_QPS_INIT; mod_to <= types[i].last; mod_to++) {
			struct op *op = &mod_ops[k];

			mod_from = mod_to - 1;
			snprintf(mod_name[k], sizeof(mod_name[0]),
				 "ibv_modify_qp %s %s->%s", types[i].name,
				 sname[mod_from], sname[mod_to]);
			*op = (struct op){
				.name = mod_name[k], .prep = mod_prep,
				.call = mod_call, .failed = mod_failed,
				.done = mod_done,
			};
			/*
			 * INIT->RTR of a connected QP: before the driver's
			 * modify, ib_core resolves the destination's MAC
			 * (ib_resolve_eth_dmac(), a route and neighbour
			 * lookup) and passes its errors on.  A fault inside
			 * it once came back as ENETUNREACH (UC, a make check
			 * run on the debug kernel; not reproduced in a rerun,
			 * its stack not captured).  softhca's modify routes
			 * nothing: it cannot be the driver's errno.
			 */
			if (mod_to == IBV_QPS_RTR && types[i].type != IBV_QPT_UD)
				op->also[0] = ENETUNREACH;
			CHECK(sweep(op) == 0, "%s", op->name);
			k++;
		}
	}
}

/* The objects the sweeps made carry traffic. */
TEST(swept_objects_work)
{
	struct ibv_send_wr wr = {};
	struct ibv_qp *rb = NULL, *ub = NULL, *t2, *i2;
	struct ibv_srq *s2;
	struct ibv_cq *ev_cq;
	struct pollfd pfd;
	void *ev_ctx;

	NEED(qrc && qud && srq && mr && mr2 && ah && xini && xtgt && xsrq);

	/* RC: the swept QP to a QP on the swept SRQ; a completion event. */
	rb = qp_new(IBV_QPT_RC, ctx, pd, cq, srq, NULL);
	REQUIRE(rb, "RC responder");
	CHECK(!qp_up(qrc, rb->qp_num, 0) && !qp_up(rb, qrc->qp_num, 0),
	      "connect RC");
	CHECK(!post_recv_to(rb, srq, mr2, rbuf, BUFSZ), "SRQ receive");
	CHECK(!ibv_req_notify_cq(cq, 0), "arm CQ");
	CHECK(!send_check(qrc, &wr, cq, mr, sbuf, rbuf, 0, 1), "RC SEND");
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	CHECK(poll(&pfd, 1, 5000) == 1 && !ibv_get_cq_event(ch, &ev_cq, &ev_ctx) &&
	      ev_cq == cq && ev_ctx == (void *)0xcafe, "completion event");
	if (pfd.revents)
		ibv_ack_cq_events(cq, 1);
	CHECK(!destroy_qp(&rb), "destroy responder");

	/* UD: through the swept AH. */
	ub = qp_new(IBV_QPT_UD, ctx, pd, cq, NULL, NULL);
	REQUIRE(ub, "UD responder");
	CHECK(!qp_up(qud, 0, 0) && !qp_up(ub, 0, 0), "UD to RTS");
	CHECK(!post_recv_to(ub, NULL, mr2, rbuf, MSG_LEN + GRH_LEN),
	      "UD receive");
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = ub->qp_num;
	wr.wr.ud.remote_qkey = 0x1234;
	CHECK(!send_check(qud, &wr, cq, mr, sbuf, rbuf, GRH_LEN, 2), "UD SEND");
	CHECK(!destroy_qp(&ub), "destroy UD responder");

	/*
	 * XRC: the swept XRC_SEND QP to the swept XRC_RECV QP, into a new
	 * SRQ of its domain; a new XRC_SEND QP to a new XRC_RECV QP in the
	 * swept SRQ's domain, into that SRQ.
	 */
	s2 = xsrq_new(xtgt_xrcd);
	t2 = qp_new(IBV_QPT_XRC_RECV, ctx, NULL, NULL, NULL, xsrq_xrcd);
	i2 = qp_new(IBV_QPT_XRC_SEND, ctx, pd, cq, NULL, NULL);
	REQUIRE(s2 && t2 && i2, "XRC objects");
	CHECK(!xrc_send(xini, xtgt, s2, 3), "XRC SEND, swept QPs");
	CHECK(!xrc_send(i2, t2, xsrq, 4), "XRC SEND, swept SRQ");
	CHECK(!destroy_qp(&i2) && !destroy_qp(&t2) && !ibv_destroy_srq(s2),
	      "destroy");
}

TEST(rdma_link_add)
{
	/*
	 * Sampled (sweep(), link_in_region()): most sites are ib_core's
	 * own, in code that never calls the driver: the sysfs files of its
	 * attribute groups (about 670 of 1680 on the debug kernel, most of
	 * them failing the registration: the driver sees one failed
	 * ib_register_device() for all), ib_uverbs_add_one() (about 680;
	 * linux 6.1 uverbs_main.c, uverbs_uapi.c: it tests device->ops for
	 * presence only, softhca has no driver_def; ib_core ignores its
	 * failure) and QP1's receive buffers (ib_mad).  Every attempt's
	 * fault prints its stack, which tells; every site whose stack shows
	 * the driver, and every other site, is tried.
	 */
	static const struct op op_link = {
		.name = "rdma link add", .prep = link_prep, .call = link_call,
		.failed = link_failed, .done = link_done,
		/* The request's skb (sendmsg) or the ACK (recv). */
		.also = { ENOBUFS }, .cap = 2000,
		.in_region = link_in_region,
		.region = "ib_core's sysfs groups, uverbs' or ib_mad's add",
	};
	const char *name = getenv("SOFTHCA_DEV");

	link_ndev = getenv("FAILNTH_NETDEV");
	if (!link_ndev)
		SKIP("FAILNTH_NETDEV not set");
	/* The sampling's evidence needs uverbs nodes where nothing failed. */
	REQUIRE(has_uverbs(name), "%s has a uverbs node (ib_uverbs loaded)",
		name);
	REQUIRE(!link_exists(), LINK_NAME " exists before the sweep");
	CHECK(sweep(&op_link) == 0, "rdma link add");
	CHECK(!link_exists(), LINK_NAME " left behind");
	if (link_ack_lost)
		printf("NOTE: rdma link add: %d replies lost to the fault, "
		       "%d of them after the device was made\n", link_ack_lost,
		       link_ack_lost_made);
	if (link_no_uverbs)
		printf("NOTE: rdma link add: %d absorbed faults left a device "
		       "without its uverbs node (ib_core ignores a failed "
		       "client add)\n", link_no_uverbs);
	if (link_no_gsi)
		printf("NOTE: rdma link add: %d absorbed faults left a device "
		       "without ib_mad's GSI QP\n", link_no_gsi);
}

TEST(teardown)
{
	struct snap s;
	size_t i;
	int r, sites = 0, bad = 0, skipped = 0, failed = 0, absorbed = 0;
	int known = 0;

	CHECK(!qrc || !destroy_qp(&qrc), "RC QP");
	CHECK(!qud || !destroy_qp(&qud), "UD QP");
	CHECK(!xini || !destroy_qp(&xini), "XRC_SEND QP");
	CHECK(!xtgt || !destroy_qp(&xtgt), "XRC_RECV QP");
	CHECK(!srq || !ibv_destroy_srq(srq), "SRQ");
	CHECK(!xsrq || !ibv_destroy_srq(xsrq), "XRC SRQ");
	CHECK(!xrcd || !ibv_close_xrcd(xrcd), "XRC domain");
	CHECK(!xsrq_xrcd || !ibv_close_xrcd(xsrq_xrcd), "XRC SRQ's domain");
	CHECK(!xtgt_xrcd || !ibv_close_xrcd(xtgt_xrcd), "XRC_RECV's domain");
	for (i = 0; i < 3 && ctx; i++)
		CHECK(xfile[i] < 0 || !xrcd_gone((int)i, "at the end"),
		      "XRC domain %zu gone", i);
	CHECK(!ah || !ibv_destroy_ah(ah), "AH");
	CHECK(!cq || !destroy_cq(&cq), "CQ");
	CHECK(!ch || !ibv_destroy_comp_channel(ch), "channel");
	CHECK(!mr || !ibv_dereg_mr(mr), "MR");
	CHECK(!mr2 || !ibv_dereg_mr(mr2), "rereg'd MR");
	CHECK(!pd || !ibv_dealloc_pd(pd), "PD");
	CHECK(!ctx || !ibv_close_device(ctx), "context");
	ctx = NULL;
	REQUIRE(!take_snap(&s), "counters");
	for (i = 0; i < NRES; i++)
		CHECK(s.res[i] == base.res[i], "%s count %ld at the end, %ld "
		      "before the tests", res_names[i], s.res[i], base.res[i]);
	CHECK(s.maps == 0, "%d uverbs mappings at the end", s.maps);
	for (r = 0; r < nresults; r++) {
		sites += results[r].sites;
		skipped += results[r].skipped;
		failed += results[r].failed;
		absorbed += results[r].absorbed;
		known += results[r].known;
		bad += !results[r].ok;
	}
	printf("%s fail-nth: %d injection sites over %d commands, %d tried "
	       "(%d failed the call, %d absorbed, %d of them excused as a known "
	       "6.1 ib_core bug), %d sampled out; %d commands misbehaved\n",
	       !bad && !tap_failed_now ? "NOTE:" : "#", sites, nresults,
	       sites - skipped, failed, absorbed, known, skipped, bad);
}

#include "failnth_leak.h"

int main(int argc, char **argv)
{
	const char *name = getenv("SOFTHCA_DEV");
	const char *c = getenv("FAILNTH_CAP");
	static const char *const flags[] = {
		"/sys/kernel/debug/failslab/ignore-gfp-wait",
		"/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait",
		"/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem",
	};
	char val[16];
	size_t i;
	int k, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "kmemleak"))
		return kmemleak_mode(argv[2], argv[3], argv[4]);
	if (!name) {
		printf("1..0 # SKIP SOFTHCA_DEV not set\n");
		return 0;
	}
	if (c)
		cap = atoi(c), cap_env = 1;
	if (getenv("FAILNTH_STRIDE"))
		stride = atoi(getenv("FAILNTH_STRIDE"));
	trace = getenv("FAILNTH_TRACE") != NULL;
	stacks = getenv("FAILNTH_STACKS");
	if (getenv("FAILNTH_VERBOSE"))
		verbose_dflt = atoi(getenv("FAILNTH_VERBOSE"));
	if (getenv("FAILNTH_SITES"))
		sites_log = fopen(getenv("FAILNTH_SITES"), "we");
	my_tid = gettid();
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth_fd < 0) {
		printf("1..0 # SKIP no /proc/thread-self/fail-nth (kernel without CONFIG_FAULT_INJECTION)\n");
		return 0;
	}
	if (access("/sys/kernel/debug/failslab", F_OK) ||
	    access("/sys/kernel/debug/fail_page_alloc", F_OK)) {
		printf("1..0 # SKIP no /sys/kernel/debug/failslab or fail_page_alloc (FAILSLAB, FAIL_PAGE_ALLOC, FAULT_INJECTION_DEBUG_FS)\n");
		return 0;
	}
	/* Sleeping allocations are what the commands make. */
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (read_flag(flags[i], val, sizeof(val)) || strcmp(val, "N")) {
			printf("Bail out! %s is not N (failnth.sh sets it)\n",
			       flags[i]);
			return 1;
		}
	dev_list = ibv_get_device_list(NULL);
	for (k = 0; dev_list && dev_list[k]; k++)
		if (!strcmp(ibv_get_device_name(dev_list[k]), name))
			dev = dev_list[k];
	sbuf = aligned_alloc(4096, BUFSZ);
	rbuf = aligned_alloc(4096, BUFSZ);
	rbuf2 = aligned_alloc(4096, BUFSZ);
	if (!dev || nl_open() || dev_index(name, &dev_idx) || !sbuf ||
	    !rbuf || !rbuf2) {
		printf("Bail out! no device %s: %s\n", name, strerror(errno));
		return 1;
	}
	memset(sbuf, 1, BUFSZ);
	memset(rbuf, 2, BUFSZ);
	memset(rbuf2, 3, BUFSZ);
	if (take_snap(&base)) {
		printf("Bail out! cannot read the counters of %s\n", name);
		return 1;
	}
	touch_stack();
	rc = tap_run();
	if (getenv("FAILNTH_KNOWN"))
		write_known(getenv("FAILNTH_KNOWN"));
	ibv_free_device_list(dev_list);
	free(sbuf);
	free(rbuf);
	free(rbuf2);
	close(nl_fd);
	close(nth_fd);
	for (k = 0; k < 3; k++)
		if (xfile[k] >= 0)
			close(xfile[k]);
	return rc;
}
