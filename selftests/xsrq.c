// SPDX-License-Identifier: GPL-2.0-only
/*
 * XRC ping-pong between processes, many rounds, on a busy CPU.  TAP.
 *
 * The traffic pattern of the XRC ping-pong programs users run (one
 * server for several clients), written here for softhca:
 *
 *  - every process opens one XRC domain through a shared file and has
 *    one XRC SRQ (the server's holds one receive per client, a client's
 *    one receive), and per peer a receive QP (XRC_TGT) and a send QP
 *    (XRC_INI);
 *  - the server answers client c through its send QPs in turn
 *    ((c + count) % clients), so most of its messages for client c
 *    cross a receive QP that another client process created: deliveries
 *    into one process's SRQ through QPs of other processes;
 *  - the server starts sending as soon as its own side is connected,
 *    while a client may still be taking its receive QP to RTR (on a
 *    fabric, such a message is dropped and sent again after the local
 *    ACK timeout: it must not fail, nor be lost);
 *  - only the last send to each peer is signaled; receives are reposted
 *    before the answer is sent, so no receiver ever runs dry.
 *
 * Each message carries (from, to, sequence) and a pattern derived from
 * them; the receiver checks every byte and the order.  A process that
 * sees no completion for WATCHDOG_S seconds prints what it was waiting
 * for (and any error completion on its send CQ) and fails the round.
 *
 * Test points: ROUNDS rounds in a row while BUSY processes spin on the
 * CPUs (as many busy processes as vCPUs, on top of the server and the
 * clients, which busy-poll too); a round killed with SIGKILL in the
 * middle, then rounds again (nothing the killed processes left may
 * block them); larger messages (several chunks per SEND) with every
 * client sending through the server's first receive QP, so that senders
 * meet a receive WQE another sender is filling.
 *
 * SOFTHCA_DEV names the device (server and clients); SOFTHCA_DEV2, when
 * set, the clients' device.  XSRQ_ROUNDS overrides the number of rounds.
 */
#include <infiniband/verbs.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "tap.h"
#include "util.h"

#define MAX_CLIENTS	8
#define WATCHDOG_S	10
#define MAGIC		0x5873524fU

struct cfg {
	int clients;
	int iters;
	uint32_t size;
	bool shared_tgt;	/* every client sends through server TGT 0 */
	const char *dev_s, *dev_c;
	const char *xrcd_path;
};

/* What one side tells the other over its socket. */
struct wire_dest {
	uint32_t tgt_qpn;
	uint32_t ini_qpn;
	uint32_t srqn;
	union ibv_gid gid;
};

struct hdr {
	uint32_t magic, from, to, seq;
};

struct proc {
	const struct cfg *cfg;
	int id;				/* 0: server, 1..: client */
	int npeers;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	uint32_t srqn;
	struct ibv_qp *tgt[MAX_CLIENTS], *ini[MAX_CLIENTS];
	struct wire_dest rem[MAX_CLIENTS];
	int sock[MAX_CLIENTS];
	uint8_t *buf;			/* receive slots, then send slots */
	size_t buflen;
	struct ibv_mr *mr;
	union ibv_gid gid;
	int sent[MAX_CLIENTS], rcvd[MAX_CLIENTS];
};

static uint8_t pattern(uint32_t from, uint32_t to, uint32_t seq, size_t i)
{
	return (uint8_t)((from * 131 + to * 31 + seq * 7 + i * 13) ^ (i >> 8));
}

static uint8_t *rslot(struct proc *p, int i)
{
	return p->buf + (size_t)i * p->cfg->size;
}

static uint8_t *sslot(struct proc *p, int peer)
{
	return p->buf + (size_t)(p->npeers + peer) * p->cfg->size;
}

static int xfer(int fd, void *b, size_t n, bool wr)
{
	size_t done = 0;
	ssize_t r;

	while (done < n) {
		r = wr ? write(fd, (char *)b + done, n - done) :
			 read(fd, (char *)b + done, n - done);
		if (r <= 0)
			return -1;
		done += r;
	}
	return 0;
}

static int proc_open(struct proc *p)
{
	const struct cfg *c = p->cfg;
	const char *dev = p->id ? c->dev_c : c->dev_s;
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.oflags = O_CREAT,
	};
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = p->npeers, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
	};
	int i, fd;

	p->ctx = open_by_name(dev);
	if (!p->ctx || ibv_query_gid(p->ctx, 1, 0, &p->gid))
		return -1;
	p->pd = ibv_alloc_pd(p->ctx);
	/* Send completions: the signaled last sends, and any error. */
	p->scq = ibv_create_cq(p->ctx, 256, NULL, NULL, 0);
	p->rcq = ibv_create_cq(p->ctx, p->npeers, NULL, NULL, 0);
	p->buflen = (size_t)2 * p->npeers * c->size;
	p->buf = mmap(NULL, p->buflen, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!p->pd || !p->scq || !p->rcq || p->buf == MAP_FAILED)
		return -1;
	p->mr = ibv_reg_mr(p->pd, p->buf, p->buflen, IBV_ACCESS_LOCAL_WRITE);
	fd = open(c->xrcd_path, O_RDONLY);
	if (!p->mr || fd < 0)
		return -1;
	xa.fd = fd;
	p->xrcd = ibv_open_xrcd(p->ctx, &xa);
	close(fd);
	if (!p->xrcd)
		return -1;
	sa.pd = p->pd;
	sa.xrcd = p->xrcd;
	sa.cq = p->rcq;
	p->srq = ibv_create_srq_ex(p->ctx, &sa);
	if (!p->srq || ibv_get_srq_num(p->srq, &p->srqn))
		return -1;

	for (i = 0; i < p->npeers; i++) {
		struct ibv_qp_init_attr_ex ta = {
			.qp_type = IBV_QPT_XRC_RECV,
			.comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = p->xrcd,
		};
		struct ibv_qp_init_attr_ex ia = {
			.qp_type = IBV_QPT_XRC_SEND, .send_cq = p->scq,
			.cap = { .max_send_wr = 128, .max_send_sge = 1 },
			.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = p->pd,
		};
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT, .port_num = 1,
		};
		int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			   IBV_QP_ACCESS_FLAGS;

		p->tgt[i] = ibv_create_qp_ex(p->ctx, &ta);
		p->ini[i] = ibv_create_qp_ex(p->ctx, &ia);
		if (!p->tgt[i] || !p->ini[i] ||
		    ibv_modify_qp(p->tgt[i], &a, mask) ||
		    ibv_modify_qp(p->ini[i], &a, mask))
			return -1;
	}
	return 0;
}

/* Both QPs toward @peer to RTS, as the ping-pong programs set them. */
static int proc_connect(struct proc *p, int peer)
{
	const struct wire_dest *r = &p->rem[peer];
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = r->ini_qpn, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = r->gid, .hop_limit = 5 } },
	};

	if (ibv_modify_qp(p->tgt[peer], &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	if (ibv_modify_qp(p->tgt[peer], &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_SQ_PSN))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = r->tgt_qpn;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = r->gid;
	a.ah_attr.grh.hop_limit = 5;
	if (ibv_modify_qp(p->ini[peer], &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	return ibv_modify_qp(p->ini[peer], &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_SQ_PSN | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int post_recv(struct proc *p, int slot)
{
	struct ibv_sge sge = { (uintptr_t)rslot(p, slot), p->cfg->size,
			       p->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(p->srq, &wr, &bad);
}

/*
 * The next message to @peer (the server's peer c is client c + 1; a
 * client's only peer, 0, is the server) through send QP @qpi.
 */
static int post_send(struct proc *p, int peer, int qpi)
{
	uint32_t from = p->id, to = p->id ? 0 : peer + 1;
	uint32_t seq = p->sent[peer]++;
	uint8_t *b = sslot(p, peer);
	struct hdr h = { MAGIC, from, to, seq };
	struct ibv_sge sge = { (uintptr_t)b, p->cfg->size, p->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = ((uint64_t)peer << 32) | seq, .sg_list = &sge,
		.num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = p->sent[peer] == p->cfg->iters ?
			      IBV_SEND_SIGNALED : 0,
	}, *bad;
	size_t i;

	for (i = sizeof(h); i < p->cfg->size; i++)
		b[i] = pattern(from, to, seq, i);
	memcpy(b, &h, sizeof(h));
	wr.qp_type.xrc.remote_srqn = p->rem[peer].srqn;
	return ibv_post_send(p->ini[qpi], &wr, &bad);
}

/* Check a received message; return the sender's peer index or -1. */
static int check_recv(struct proc *p, const struct ibv_wc *wc)
{
	uint8_t *b = rslot(p, (int)wc->wr_id);
	struct hdr h;
	int peer;
	size_t i;

	if (wc->status != IBV_WC_SUCCESS || wc->byte_len != p->cfg->size ||
	    wc->wr_id >= (uint64_t)p->npeers) {
		printf("# proc %d: receive: status %s len %u id %llu\n", p->id,
		       ibv_wc_status_str(wc->status), wc->byte_len,
		       (unsigned long long)wc->wr_id);
		return -1;
	}
	memcpy(&h, b, sizeof(h));
	peer = p->id ? 0 : (int)h.from - 1;
	if (h.magic != MAGIC || h.to != (uint32_t)p->id || peer < 0 ||
	    peer >= p->npeers || h.seq != (uint32_t)p->rcvd[peer]) {
		printf("# proc %d: bad header magic %x from %u to %u seq %u (want %d)\n",
		       p->id, h.magic, h.from, h.to, h.seq,
		       peer >= 0 && peer < p->npeers ? p->rcvd[peer] : -1);
		return -1;
	}
	for (i = sizeof(h); i < p->cfg->size; i++) {
		if (b[i] != pattern(h.from, h.to, h.seq, i)) {
			printf("# proc %d: message %u from %u: byte %zu differs\n",
			       p->id, h.seq, h.from, i);
			return -1;
		}
	}
	p->rcvd[peer]++;
	return peer;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* No progress for WATCHDOG_S: say what this process was waiting for. */
static void stalled(struct proc *p, const char *what)
{
	struct ibv_wc wc;
	int i;

	printf("# proc %d: no completion for %d s while %s\n", p->id,
	       WATCHDOG_S, what);
	for (i = 0; i < p->npeers; i++)
		printf("#   peer %d: sent %d received %d\n", i, p->sent[i],
		       p->rcvd[i]);
	while (ibv_poll_cq(p->scq, 1, &wc) > 0)
		printf("#   send completion: id %llx status %s\n",
		       (unsigned long long)wc.wr_id,
		       ibv_wc_status_str(wc.status));
	fflush(stdout);
}

/*
 * The next completion on @cq.  Return: 0 with *@wc filled; -1 on an error
 * or when none came for WATCHDOG_S seconds since *@last (it says so).
 */
static int next_wc(struct proc *p, struct ibv_cq *cq, struct ibv_wc *wc,
		   double *last, const char *what)
{
	int n;

	while (!(n = ibv_poll_cq(cq, 1, wc))) {
		if (now_s() - *last > WATCHDOG_S) {
			stalled(p, what);
			return -1;
		}
	}
	*last = now_s();
	return n < 0 ? -1 : 0;
}

/* The ping-pong itself; returns 0 when every message came back right. */
static int proc_run(struct proc *p)
{
	const struct cfg *c = p->cfg;
	int total = p->npeers * c->iters, got, i, peer;
	double last = now_s();
	struct ibv_wc wc;

	if (!p->id)
		for (i = 0; i < p->npeers; i++)
			if (post_send(p, i, i))
				return -1;
	for (got = 0; got < total; got++) {
		if (next_wc(p, p->rcq, &wc, &last, "receiving"))
			return -1;
		peer = check_recv(p, &wc);
		if (peer < 0 || post_recv(p, (int)wc.wr_id))
			return -1;
		if (p->sent[peer] < c->iters &&
		    post_send(p, peer, p->id || c->shared_tgt ? peer :
				 (peer + p->sent[peer]) % p->npeers))
			return -1;
	}
	/* One signaled send per peer; any error completion fails. */
	for (i = 0; i < p->npeers; i++) {
		if (next_wc(p, p->scq, &wc, &last,
			    "waiting for send completions"))
			return -1;
		if (wc.status != IBV_WC_SUCCESS) {
			printf("# proc %d: send %llx: %s\n", p->id,
			       (unsigned long long)wc.wr_id,
			       ibv_wc_status_str(wc.status));
			return -1;
		}
	}
	return 0;
}

static void proc_close(struct proc *p)
{
	int i;

	for (i = 0; i < p->npeers; i++) {
		if (p->ini[i])
			ibv_destroy_qp(p->ini[i]);
		if (p->tgt[i])
			ibv_destroy_qp(p->tgt[i]);
	}
	if (p->srq)
		ibv_destroy_srq(p->srq);
	if (p->xrcd)
		ibv_close_xrcd(p->xrcd);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->scq)
		ibv_destroy_cq(p->scq);
	if (p->rcq)
		ibv_destroy_cq(p->rcq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->ctx)
		ibv_close_device(p->ctx);
}

/*
 * One process of a round.  The server connects its clients one by one
 * (a client's socket says where the client is, the answer where the
 * server is), then sends at once; a client connects after the answer.
 * The last exchange (a byte each way) keeps every process's QPs alive
 * until all are done: a message in flight to a process that left would
 * be lost.
 */
static int proc_main(const struct cfg *c, int id, int *socks)
{
	struct proc p = { .cfg = c, .id = id };
	struct wire_dest me;
	char end = 'e';
	int i, rc = 1;

	p.npeers = id ? 1 : c->clients;
	for (i = 0; i < p.npeers; i++)
		p.sock[i] = socks[i];
	if (proc_open(&p)) {
		printf("# proc %d: setup failed: %s\n", id, strerror(errno));
		goto out;
	}
	for (i = 0; i < p.npeers; i++)
		if (post_recv(&p, i))
			goto out;
	for (i = 0; i < p.npeers; i++) {
		me.tgt_qpn = p.tgt[c->shared_tgt ? 0 : i]->qp_num;
		me.ini_qpn = p.ini[i]->qp_num;
		me.srqn = p.srqn;
		me.gid = p.gid;
		if (id ? xfer(p.sock[i], &me, sizeof(me), true) ||
			 xfer(p.sock[i], &p.rem[i], sizeof(me), false) :
			 xfer(p.sock[i], &p.rem[i], sizeof(me), false) ||
			 xfer(p.sock[i], &me, sizeof(me), true))
			goto out;
		if (proc_connect(&p, i)) {
			printf("# proc %d: connect: %s\n", id, strerror(errno));
			goto out;
		}
	}
	if (proc_run(&p))
		goto out;
	for (i = 0; i < p.npeers; i++)
		if (xfer(p.sock[i], &end, 1, id))
			goto out;
	for (i = 0; i < p.npeers; i++)
		if (xfer(p.sock[i], &end, 1, !id))
			goto out;
	rc = 0;
out:
	fflush(stdout);
	proc_close(&p);
	return rc;
}

static pid_t spawn_busy(void)
{
	pid_t pid = fork();

	if (!pid) {
		volatile unsigned long x = 0;

		for (;;)
			x++;
	}
	return pid;
}

/*
 * One round: a server and c->clients clients.  @kill_after_ms > 0: kill
 * every process of the round that long after it starts (the round then
 * counts as passed if nothing else went wrong).  Return: 0 on success.
 */
static int round_run(const struct cfg *c, int kill_after_ms)
{
	int sv[MAX_CLIENTS][2], ssock[MAX_CLIENTS], i, status, rc = 0;
	pid_t pids[MAX_CLIENTS + 1];
	double start = now_s();
	int left = c->clients + 1;

	for (i = 0; i < c->clients; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]))
			return -1;
		ssock[i] = sv[i][0];
	}
	for (i = 0; i <= c->clients; i++) {
		pids[i] = fork();
		if (!pids[i]) {
			int s = i ? sv[i - 1][1] : -1;

			_exit(proc_main(c, i, i ? &s : ssock));
		}
	}
	for (i = 0; i < c->clients; i++) {
		close(sv[i][0]);
		close(sv[i][1]);
	}
	while (left) {
		pid_t pid = waitpid(-1, &status, WNOHANG);
		double t = now_s() - start;

		if (pid > 0) {
			for (i = 0; i <= c->clients; i++)
				if (pids[i] == pid)
					pids[i] = 0;
			left--;
			if (!kill_after_ms &&
			    (!WIFEXITED(status) || WEXITSTATUS(status)))
				rc = -1;
			continue;
		}
		if ((kill_after_ms && t * 1000 >= kill_after_ms) ||
		    t > 3 * WATCHDOG_S) {
			if (!kill_after_ms) {
				printf("# round still running after %d s\n",
				       3 * WATCHDOG_S);
				rc = -1;
			}
			for (i = 0; i <= c->clients; i++)
				if (pids[i])
					kill(pids[i], SIGKILL);
			kill_after_ms = kill_after_ms ?: 1;
		}
		usleep(2000);
	}
	return rc;
}

static struct cfg base;
static int rounds = 12;

/* @n rounds of @c; stop at the first failure and say which. */
static int rounds_run(const struct cfg *c, int n, double *secs)
{
	double start = now_s();
	int r;

	for (r = 0; r < n; r++) {
		if (round_run(c, 0)) {
			printf("# round %d of %d failed\n", r + 1, n);
			return -1;
		}
	}
	*secs = now_s() - start;
	return 0;
}

static pid_t busy[16];
static int nbusy;

static void busy_start(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int i;

	nbusy = ncpu > 0 && ncpu < 16 ? (int)ncpu : 2;
	for (i = 0; i < nbusy; i++)
		busy[i] = spawn_busy();
}

static void busy_stop(void)
{
	int i;

	for (i = 0; i < nbusy; i++) {
		if (busy[i] > 0) {
			kill(busy[i], SIGKILL);
			waitpid(busy[i], NULL, 0);
		}
	}
	nbusy = 0;
}

TEST(rounds_busy_cpu)
{
	double secs = 0;

	int n;

	busy_start();
	n = nbusy;
	CHECK(!rounds_run(&base, rounds, &secs),
	      "%d rounds of 1 server + %d clients, %d messages of %u B each way",
	      rounds, base.clients, base.iters, base.size);
	busy_stop();
	printf("# %d rounds in %.1f s (%d busy processes beside them)\n",
	       rounds, secs, n);
}

TEST(killed_round_then_rounds)
{
	double secs = 0;
	int r;

	busy_start();
	for (r = 0; r < 3 && !tap_failed_now; r++) {
		/* Killed somewhere between setup and the end of traffic. */
		round_run(&base, 20 + 60 * r);
		CHECK(!rounds_run(&base, 2, &secs), "rounds after kill %d",
		      r + 1);
	}
	busy_stop();
}

TEST(multi_chunk_sends_share_one_tgt)
{
	struct cfg c = base;
	double secs = 0;

	c.size = 200000;	/* more than one engine chunk */
	c.iters = 20;
	c.clients = 3;
	c.shared_tgt = true;
	busy_start();
	CHECK(!rounds_run(&c, rounds / 3 ? rounds / 3 : 1, &secs),
	      "3 clients through one receive QP, %u B messages", c.size);
	busy_stop();
}

int main(void)
{
	char path[] = "/tmp/softhca-xsrq-XXXXXX";
	const char *r = getenv("XSRQ_ROUNDS");
	int fd, ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	base.dev_s = getenv("SOFTHCA_DEV") ?: "sh0";
	base.dev_c = getenv("SOFTHCA_DEV2") ?: base.dev_s;
	base.clients = 2;
	base.iters = 100;
	base.size = 512;
	if (r && atoi(r) > 0)
		rounds = atoi(r);
	fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	base.xrcd_path = path;
	ret = tap_run();
	busy_stop();
	unlink(path);
	return ret;
}
