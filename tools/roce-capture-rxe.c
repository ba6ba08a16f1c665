// SPDX-License-Identifier: GPL-2.0-only
/*
 * roce-capture-rxe: the rdma_rxe side of tools/roce-capture.
 *
 * Runs in the guest's initial network namespace on rxe0 (veth0,
 * 10.0.0.1 and fd00::1) against a peer at 10.0.0.2 / fd00::2 that is
 * no RDMA device at all: tools/roce-capture-peer sniffing and injecting
 * frames on veth1 in a child namespace.  For each address family:
 *
 *  - an RC requester QP aimed at a made-up QPN posts one of each request
 *    rxe can send (rxe transmits, and later retransmits, whether or not
 *    anybody answers): the request frames to capture;
 *  - a UD QP sends two datagrams to a made-up QPN;
 *  - an RC responder QP and a UD QP wait for the requests the peer
 *    builds with softhca's roce_hdr.c; their answers (ACK, NAKs, READ
 *    responses, ATOMIC ACKs) are the response frames to capture, and
 *    their completions and memory show that rxe took the frames.
 *
 * usage: roce-capture-rxe INFO DONE
 * INFO receives the numbers the peer needs; the program polls its CQ
 * until the file DONE exists (or 30 s pass), then checks what the
 * peer's requests did and exits 0 when all is as expected.
 */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUF_LEN		0x10000
#define REQ_PSN		0xfffff8	/* requester PSNs wrap mid-way */
#define RESP_PSN	0xfffffd	/* so do the peer's (tools/ peer) */
#define FAKE_RC_QPN	0x000abc
#define FAKE_UD_QPN	0x000def
#define PEER_QPN	0x000777
#define UD_QKEY		0x11111111
#define UD_QKEY_RX	0x22222222
#define ATOMIC_INIT	0x1111111111111111ull

/* Buffer layout, per family f (0: IPv4, 1: IPv6) */
#define OFF_SRC		0x0000			/* what the requester sends */
#define OFF_READ_DST(f)	(0x1000 + (f) * 0x1000)	/* its READ lands here */
#define OFF_ATOM(f)	(0x3000 + (f) * 0x100)	/* peer's atomics */
#define OFF_ATOM_RES(f)	(0x3800 + (f) * 0x100)	/* requester's results */
#define OFF_WRITE(f)	(0x4000 + (f) * 0x1000)	/* peer's WRITE */
#define OFF_RSRC(f)	(0x6000 + (f) * 0x1000)	/* peer's READ source */
#define OFF_RECV(f)	(0xc000 + (f) * 0x1000)	/* receive buffers */

static const char *const fam_name[2] = { "v4", "v6" };

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int find_gid(struct ibv_context *ctx, const char *addr)
{
	struct ibv_port_attr pa;
	union ibv_gid want, gid;
	char mapped[64];
	int i;

	if (strchr(addr, ':')) {
		inet_pton(AF_INET6, addr, &want);
	} else {
		snprintf(mapped, sizeof(mapped), "::ffff:%s", addr);
		inet_pton(AF_INET6, mapped, &want);
	}
	if (ibv_query_port(ctx, 1, &pa))
		die("ibv_query_port");
	for (i = 0; i < pa.gid_tbl_len; i++)
		if (!ibv_query_gid(ctx, 1, i, &gid) &&
		    !memcmp(&gid, &want, sizeof(gid)))
			return i;
	fprintf(stderr, "no GID for %s on rxe0\n", addr);
	exit(1);
}

static void set_av(struct ibv_ah_attr *ah, const union ibv_gid *dgid, int sgid)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->grh.dgid = *dgid;
	ah->grh.sgid_index = sgid;
	ah->grh.hop_limit = 64;
	ah->port_num = 1;
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = 32, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp)
		die("ibv_create_qp");
	return qp;
}

static void rc_connect(struct ibv_qp *qp, const union ibv_gid *dgid, int sgid,
		       uint32_t dqpn, uint32_t rq_psn, uint32_t sq_psn)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("RC INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	set_av(&a.ah_attr, dgid, sgid);
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("RC RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = 17;		/* 0.5 s: a few retransmissions at most */
	a.retry_cnt = 1;
	a.rnr_retry = 1;
	a.max_rd_atomic = 4;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die("RC RTS");
}

static void ud_ready(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = qkey;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		die("UD INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("UD RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x10;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UD RTS");
}

static uint8_t *buf;
static struct ibv_mr *mr;

static void post(struct ibv_qp *qp, struct ibv_send_wr *wr, uint64_t off,
		 uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf + off, .length = len, .lkey = mr->lkey,
	};
	struct ibv_send_wr *bad;

	wr->sg_list = &sge;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(qp, wr, &bad))
		die("ibv_post_send");
}

static void post_recv(struct ibv_qp *qp, uint64_t off, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf + off, .length = len, .lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = off, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		die("ibv_post_recv");
}

/* One of each request rxe sends on RC, then two UD datagrams. */
static void requests(struct ibv_qp *rc, struct ibv_qp *ud, struct ibv_ah *ah,
		     int f)
{
	const uint64_t raddr = 0x7f0000001000ull;
	const uint32_t rkey = 0x00abcdef;
	struct ibv_send_wr wr;

#define WR(op) do { memset(&wr, 0, sizeof(wr)); wr.opcode = (op); } while (0)
	WR(IBV_WR_SEND);			/* SEND_ONLY, pad 3 */
	post(rc, &wr, OFF_SRC, 37);
	WR(IBV_WR_SEND_WITH_IMM);		/* SEND_ONLY_WITH_IMMEDIATE */
	wr.imm_data = htonl(0x12345678);
	post(rc, &wr, OFF_SRC, 8);
	WR(IBV_WR_RDMA_WRITE);			/* RDMA_WRITE_ONLY */
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	post(rc, &wr, OFF_SRC, 64);
	WR(IBV_WR_RDMA_WRITE_WITH_IMM);		/* ..._ONLY_WITH_IMMEDIATE */
	wr.imm_data = htonl(0xcafe0001);
	wr.wr.rdma.remote_addr = raddr + 0x100;
	wr.wr.rdma.rkey = rkey;
	post(rc, &wr, OFF_SRC, 18);
	WR(IBV_WR_RDMA_READ);			/* RDMA_READ_REQUEST */
	wr.wr.rdma.remote_addr = raddr + 0x1000;
	wr.wr.rdma.rkey = rkey;
	post(rc, &wr, OFF_READ_DST(f), 2500);
	WR(IBV_WR_ATOMIC_CMP_AND_SWP);		/* COMPARE_SWAP */
	wr.wr.atomic.remote_addr = raddr + 0x2000;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = 0x0102030405060708ull;
	wr.wr.atomic.swap = 0x1112131415161718ull;
	post(rc, &wr, OFF_ATOM_RES(f), 8);
	WR(IBV_WR_ATOMIC_FETCH_AND_ADD);	/* FETCH_ADD */
	wr.wr.atomic.remote_addr = raddr + 0x2008;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = 3;
	post(rc, &wr, OFF_ATOM_RES(f) + 8, 8);
	WR(IBV_WR_SEND_WITH_INV);		/* SEND_ONLY_WITH_INVALIDATE */
	wr.invalidate_rkey = 0x00123456;
	post(rc, &wr, OFF_SRC, 4);
	WR(IBV_WR_SEND);			/* SEND_FIRST/MIDDLE/LAST */
	post(rc, &wr, OFF_SRC, 2501);

	WR(IBV_WR_SEND);			/* UD SEND_ONLY */
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = FAKE_UD_QPN;
	wr.wr.ud.remote_qkey = UD_QKEY;
	post(ud, &wr, OFF_SRC, 20);
	WR(IBV_WR_SEND_WITH_IMM);		/* UD SEND_ONLY_WITH_IMMEDIATE */
	wr.imm_data = htonl(0xabad1dea);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = FAKE_UD_QPN;
	wr.wr.ud.remote_qkey = UD_QKEY;
	post(ud, &wr, OFF_SRC, 21);
#undef WR
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

int main(int argc, char **argv)
{
	static const char *const peer[2] = { "10.0.0.2", "fd00::2" };
	static const char *const self[2] = { "10.0.0.1", "fd00::1" };
	struct ibv_qp *rc_req[2], *ud_req[2], *rc_resp[2], *ud_resp[2];
	int recv_ok[2] = { 0, 0 }, imm_ok[2] = { 0, 0 }, ud_ok[2] = { 0, 0 };
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_ah *ah[2];
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	int f, i, n, fail = 0;
	time_t end;
	FILE *info;

	if (argc != 3) {
		fprintf(stderr, "usage: %s INFO DONE\n", argv[0]);
		return 2;
	}
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "rxe0"))
			break;
	if (!list || i == n) {
		fprintf(stderr, "no rxe0\n");
		return 1;
	}
	ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("ibv_open_device");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	buf = aligned_alloc(4096, BUF_LEN);
	if (!pd || !cq || !buf)
		die("pd/cq/buf");
	for (i = 0; i < BUF_LEN; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC);
	if (!mr)
		die("ibv_reg_mr");

	info = fopen(argv[1], "w");
	if (!info)
		die(argv[1]);
	for (f = 0; f < 2; f++) {
		int sgid = find_gid(ctx, self[f]);
		union ibv_gid dgid;
		struct ibv_ah_attr aa;

		*(uint64_t *)(buf + OFF_ATOM(f)) = ATOMIC_INIT;
		inet_pton(AF_INET6, f ? peer[f] : "::ffff:10.0.0.2", &dgid);

		rc_resp[f] = make_qp(pd, cq, IBV_QPT_RC);
		rc_connect(rc_resp[f], &dgid, sgid, PEER_QPN, RESP_PSN, 0x200);
		post_recv(rc_resp[f], OFF_RECV(f), 256);
		post_recv(rc_resp[f], OFF_RECV(f) + 0x100, 256);
		ud_resp[f] = make_qp(pd, cq, IBV_QPT_UD);
		ud_ready(ud_resp[f], UD_QKEY_RX);
		post_recv(ud_resp[f], OFF_RECV(f) + 0x200, 256);

		rc_req[f] = make_qp(pd, cq, IBV_QPT_RC);
		rc_connect(rc_req[f], &dgid, sgid, FAKE_RC_QPN, 0, REQ_PSN);
		ud_req[f] = make_qp(pd, cq, IBV_QPT_UD);
		ud_ready(ud_req[f], UD_QKEY);
		set_av(&aa, &dgid, sgid);
		ah[f] = ibv_create_ah(pd, &aa);
		if (!ah[f])
			die("ibv_create_ah");

		/* what the peer needs to aim its requests */
		fprintf(info, "%s rc_qpn=%u ud_qpn=%u rkey=%u write=%" PRIu64
			" read=%" PRIu64 " atomic=%" PRIu64 " psn=%u"
			" qkey=%u peer_qpn=%u\n", fam_name[f],
			rc_resp[f]->qp_num, ud_resp[f]->qp_num, mr->rkey,
			(uint64_t)(uintptr_t)buf + OFF_WRITE(f),
			(uint64_t)(uintptr_t)buf + OFF_RSRC(f),
			(uint64_t)(uintptr_t)buf + OFF_ATOM(f), RESP_PSN,
			UD_QKEY_RX, PEER_QPN);
		printf("rxe %s: requester RC QP %u, UD QP %u (sgid %d); "
		       "responder RC QP %u, UD QP %u\n", fam_name[f],
		       rc_req[f]->qp_num, ud_req[f]->qp_num, sgid,
		       rc_resp[f]->qp_num, ud_resp[f]->qp_num);
	}
	for (f = 0; f < 2; f++)
		requests(rc_req[f], ud_req[f], ah[f], f);
	fclose(info);
	fflush(stdout);

	end = time(NULL) + 30;
	while (!exists(argv[2]) && time(NULL) < end) {
		while ((n = ibv_poll_cq(cq, 1, &wc)) > 0) {
			for (f = 0; f < 2; f++) {
				if (wc.qp_num == rc_resp[f]->qp_num &&
				    wc.status == IBV_WC_SUCCESS) {
					if (wc.wc_flags & IBV_WC_WITH_IMM)
						imm_ok[f] = wc.byte_len == 8 &&
						    ntohl(wc.imm_data) ==
						    0xfeedbeef;
					else
						recv_ok[f] = wc.byte_len == 13;
				}
				if (wc.qp_num == ud_resp[f]->qp_num &&
				    wc.status == IBV_WC_SUCCESS)
					ud_ok[f] = wc.byte_len == 40 + 21 &&
						   wc.src_qp == 0x999 &&
						   ntohl(wc.imm_data) ==
						   0xabad1dea;
			}
			printf("wc qp %u opcode %d status %s len %u imm %#x\n",
			       wc.qp_num, wc.opcode,
			       ibv_wc_status_str(wc.status), wc.byte_len,
			       ntohl(wc.imm_data));
		}
		usleep(10000);
	}

	/* What the peer's requests must have done (tools/roce-capture-peer). */
	for (f = 0; f < 2; f++) {
		uint64_t atom = *(uint64_t *)(buf + OFF_ATOM(f));
		const uint8_t *w = buf + OFF_WRITE(f);
		int write_ok = 1;

		for (i = 0; i < 100; i++)
			if (w[i] != (uint8_t)(0xa0 + i))
				write_ok = 0;
		/* CMP_SWAP 0x11.. -> 0x22.., then FETCH_ADD 5 */
		printf("rxe %s took the peer's frames: SEND %s, SEND+IMM %s, "
		       "WRITE %s, atomics %s (%#" PRIx64 "), UD SEND+IMM %s\n",
		       fam_name[f], recv_ok[f] ? "ok" : "MISSING",
		       imm_ok[f] ? "ok" : "MISSING",
		       write_ok ? "ok" : "MISSING",
		       atom == 0x2222222222222227ull ? "ok" : "WRONG", atom,
		       ud_ok[f] ? "ok" : "MISSING");
		fail |= !recv_ok[f] || !imm_ok[f] || !write_ok ||
			atom != 0x2222222222222227ull || !ud_ok[f];
	}
	return fail;
}
