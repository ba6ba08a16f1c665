// SPDX-License-Identifier: GPL-2.0-only
/*
 * uc_wire: UC or RC over the wire, every byte checked.  Built against
 * the distribution's libibverbs, so that one program runs on rdma_rxe as
 * it is and on softhca under softhca-run (selftests/wire_uc.sh,
 * wire_rc.sh).
 *
 *   uc_wire -d DEV -g GIDX [-R [-E|-D [-V MIB]|-A]] [-p PORT] [-s SIZE]
 *           [-a ASIZE] [-G] [-n ITERS] [-P PSN] [HOST]
 *
 * -R: an RC QP instead of UC (local ACK timeout 14, 67 ms; retry_cnt 7;
 * rnr_retry 7, min_rnr_timer 1), so that SIZE 0 is allowed too.
 * -T T (RC): local ACK timeout T instead of 14 (4.096 us << T): a guest
 * whose vCPUs the host starves (the sanitizer tier's, niced beside the
 * stock one) can go half a second without running the responder.
 * -W (RC, ping-pong, server): the server posts its first receives 300 ms
 * after both sides are connected, so the client's first SENDs meet RNR
 * NAKs and go again until they are taken.
 * -D (RC): RDMA READ: the server registers a source of SIZE bytes
 * (remote read) filled with its pattern; the client READs from it at
 * sizes 0 to SIZE (the edges around the MTU, the chunk, and ITERS
 * random ones), each from a random offset into a random layout of 1 to
 * 4 SGEs in its own buffer, and checks every byte, and that nothing
 * around the SGEs was written.
 * -A (RC): atomics: the server registers two 8-byte targets (remote
 * atomic) with known values; the client runs ITERS rounds of a
 * FETCH_ADD on the first (adds of up to 2^40, so the sum crosses 32
 * bits), a CMP_AND_SWP that swaps the second to a new random value and,
 * every fourth round, one whose compare misses (nothing swapped); each
 * returned original value must be the one the client expects, in its
 * 8 bytes of a guarded result buffer.  Then the server checks its
 * memory against the client's expected final values (a FETCH_ADD done
 * twice, a duplicate carried out again, shows in the sum).
 * -a ASIZE (ping-pong): the server's four answers carry ASIZE bytes each
 * (at most SIZE) instead of SIZE: the traffic goes one way, the client
 * the requester of its bulk (the bulk points against rxe, whose
 * requester under loss waits out its timeouts, wire_bulk.sh).
 * -V MIB (with -D): after the edges and ITERS random READs, more random
 * ones until MIB MiB were read in all.
 * -G: SEND and WRITE messages from, and receives into, random cuts of
 * their areas into 1 to 4 SGEs each (adjacent pieces; the READs' layouts
 * have gaps), a new cut per message and per receive.
 * -E (RC): the dead peer: the server destroys its QP once connected,
 * the client's SEND must then complete with RETRY_EXC_ERR (and within
 * the retries' time, not hang).
 *
 * Without HOST it serves: it waits on TCP PORT for the client, they
 * swap QP numbers, PSNs, GIDs and buffer addresses, and both connect a
 * UC QP (path MTU 1024).
 *
 * Ping-pong mode (default): each iteration the client sends SEND, SEND
 * with immediate, RDMA WRITE and RDMA WRITE with immediate of SIZE
 * bytes, each with its own pattern; the server checks the three
 * receive completions (opcode, length, immediate, flags) and every byte
 * of the four messages (the plain WRITE is checked once the WRITE with
 * immediate behind it arrived: a UC QP's packets are in order), then
 * answers with the same four towards the client, which checks them
 * likewise.  Receives are always posted before the peer may send.
 *
 * Stream mode (-S N, with -L K on the server): the client sends N SENDs
 * back to back, then a one-byte SEND as the end mark; the server has
 * N + 1 receives posted, collects completions until the end mark, and
 * checks each message by the index in its pattern.  The test drops one
 * packet on the way (tc); the server expects exactly message K missing
 * (-L -1: none) and every other one intact.  -Q D keeps up to D SENDs
 * outstanding (default 2): with RC on the wire, a window of trains
 * whose first WQEs retire on partial ACKs (req_train.c).  -U K signals
 * one SEND in K (and the end mark), the others unsignaled (K at most
 * D): on the wire they ask for no ACK (wire_rc.c, quiet messages).
 * -Z USEC posts one SEND at a time, USEC microseconds after the one
 * before: a quiet SEND then waits alone and must ask for its answer.
 * With -D, -U (any K above 1) puts an unsignaled RDMA WRITE before each
 * READ (quiet_write()).
 *
 * Exit status 0 on success; a message on stderr otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define NOPS 4			/* SEND, SEND_IMM, WRITE, WRITE_IMM */
#define NRECV 3			/* SEND, SEND_IMM, WRITE_IMM take one */
#define MAX_SGE 4

struct dest {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	union ibv_gid gid;
};

static struct {
	const char *dev, *host;
	int gidx, port, iters, stream, depth, lost, rc, dead, rnr, read, atomic;
	int timeout, sig_every, gap_us, sges;
	unsigned int sge_seed;
	uint32_t size, asize, psn;
	uint64_t volume;
} o = { .port = 18800, .size = 64, .asize = UINT32_MAX, .iters = 100, .lost = -1,
	.psn = 0x100, .timeout = 14, .depth = 2, .sig_every = 1 };

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_comp_channel *chan;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t *buf;
/*
 * The buffer: NOPS source areas, then the receive areas (SEND, SEND_IMM;
 * in stream mode one per message), then the WRITE targets (WRITE,
 * WRITE_IMM), each o.size bytes.
 */
static size_t nareas;

static uint8_t *area(size_t i)
{
	return buf + i * o.size;
}

#define SRC(op)		area(op)
#define RECV_AREA(i)	area(NOPS + (i))
#define WRITE_AREA(i)	area(NOPS + nrecv_areas() + (i))

static size_t nrecv_areas(void)
{
	return o.stream ? (size_t)o.stream + 1 : 2;
}

static int die(const char *what)
{
	fprintf(stderr, "uc_wire: %s: %s\n", what, errno ? strerror(errno) : "failed");
	exit(1);
}

/* The byte @k of message @msg's operation @op, from the @from side. */
static uint8_t pat(uint32_t msg, int op, int from, size_t k)
{
	return (uint8_t)(k * 7 + msg * 13 + (unsigned int)op * 31 +
			 (unsigned int)from * 101 + (k >> 8) * 3);
}

/* The bytes of each message the @from side sends (0: the client). */
static uint32_t msize(int from)
{
	return from ? o.asize : o.size;
}

static void fill(uint8_t *p, uint32_t msg, int op, int from)
{
	size_t k;

	for (k = 0; k < msize(from); k++)
		p[k] = pat(msg, op, from, k);
	/* The message's index up front, for the stream mode. */
	if (msize(from) >= 4)
		memcpy(p, &msg, 4);
}

static int check(const uint8_t *p, uint32_t msg, int op, int from)
{
	size_t k = msize(from) >= 4 ? 4 : 0;
	uint32_t m;

	if (msize(from) >= 4) {
		memcpy(&m, p, 4);
		if (m != msg) {
			fprintf(stderr, "uc_wire: op %d: message %u where %u was expected\n",
				op, m, msg);
			return -1;
		}
	}
	for (; k < msize(from); k++) {
		if (p[k] != pat(msg, op, from, k)) {
			fprintf(stderr, "uc_wire: message %u op %d: byte %zu is 0x%02x, not 0x%02x\n",
				msg, op, k, p[k], pat(msg, op, from, k));
			return -1;
		}
	}
	return 0;
}

/* TCP: the server listens, the client connects; swap @me for the peer's. */
static int exchange(const struct dest *me, struct dest *peer)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	char port[16];
	int fd, s, one = 1;

	snprintf(port, sizeof(port), "%d", o.port);
	if (!o.host)
		hints.ai_flags = AI_PASSIVE;
	if (getaddrinfo(o.host, port, &hints, &res))
		die("getaddrinfo");
	fd = socket(res->ai_family, res->ai_socktype, 0);
	if (fd < 0)
		die("socket");
	if (o.host) {
		int tries;

		for (tries = 0; connect(fd, res->ai_addr, res->ai_addrlen); tries++) {
			if (tries == 100)
				die("connect");
			usleep(100000);
		}
		s = fd;
	} else {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 1))
			die("bind");
		s = accept(fd, NULL, NULL);
		if (s < 0)
			die("accept");
		close(fd);
	}
	freeaddrinfo(res);
	if (write(s, me, sizeof(*me)) != sizeof(*me) ||
	    read(s, peer, sizeof(*peer)) != sizeof(*peer))
		die("exchange");
	return s;
}

/* A one-byte TCP handshake: both sides reached the same point. */
static void sync_peer(int s)
{
	char c = 's';

	if (write(s, &c, 1) != 1 || read(s, &c, 1) != 1)
		die("sync");
}

/* RESET -> INIT: receives may be posted from INIT on. */
static void init_qp(void)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	};

	if (o.rc)
		a.qp_access_flags |= IBV_ACCESS_REMOTE_READ;
	if (o.atomic)
		a.qp_access_flags |= IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("modify to INIT");
}

static void connect_qp(const struct dest *peer)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };

	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)o.gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  (o.rc ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0)))
		die("modify to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = o.psn;
	a.timeout = (uint8_t)o.timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  (o.rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0)))
		die("modify to RTS");
}

/*
 * @len bytes at @p as SGEs in @sge (MAX_SGE of them): one, or with -G a
 * random cut into 1 to MAX_SGE adjacent pieces (none empty).  Return:
 * how many.
 */
static int cut_sges(struct ibv_sge *sge, uint8_t *p, uint32_t len)
{
	uint32_t cut[MAX_SGE + 1], t;
	int n = 1, i, j, k;

	cut[0] = 0;
	if (o.sges && len > 1) {
		n = 1 + rand() % MAX_SGE;
		for (i = 1; i < n; i++)
			cut[i] = 1 + (uint32_t)rand() % (len - 1);
		/* Sorted, duplicates dropped: n pieces, none empty. */
		for (i = 1; i < n; i++)
			for (j = i + 1; j < n; j++)
				if (cut[j] < cut[i]) {
					t = cut[i];
					cut[i] = cut[j];
					cut[j] = t;
				}
		for (i = k = 1; i < n; i++)
			if (cut[i] != cut[k - 1])
				cut[k++] = cut[i];
		n = k;
	}
	cut[n] = len;
	for (i = 0; i < n; i++)
		sge[i] = (struct ibv_sge){
			.addr = (uintptr_t)(p + cut[i]),
			.length = cut[i + 1] - cut[i], .lkey = mr->lkey,
		};
	return n;
}

static void post_recv(size_t i)
{
	struct ibv_sge sge[MAX_SGE];
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = sge }, *bad;

	wr.num_sge = cut_sges(sge, RECV_AREA(i), o.size);

	if (ibv_post_recv(qp, &wr, &bad))
		die("post_recv");
}

/*
 * Build op @op's send WR of message @msg into @wr, its buffer in @sge
 * (MAX_SGE of them: cut_sges()).
 */
static void build_send(struct ibv_send_wr *wr, struct ibv_sge *sge, int op,
		       uint32_t msg, const struct dest *peer, uint8_t *src,
		       uint32_t len)
{
	static const enum ibv_wr_opcode code[NOPS] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM,
	};

	*wr = (struct ibv_send_wr){
		.wr_id = (uint64_t)op, .sg_list = sge, .num_sge = cut_sges(sge, src, len),
		.opcode = code[op], .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(0x1000 * (uint32_t)op + msg),
	};
	if (op >= 2) {
		/* WRITE into the peer's area 0, WRITE_IMM into its area 1. */
		wr->wr.rdma.remote_addr = peer->addr +
			(NOPS + nrecv_areas() + (size_t)(op - 2)) * o.size;
		wr->wr.rdma.rkey = peer->rkey;
	}
}

static void post_send(int op, uint32_t msg, const struct dest *peer, uint8_t *src,
		      uint32_t len)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge[MAX_SGE];

	build_send(&wr, sge, op, msg, peer, src, len);
	if (ibv_post_send(qp, &wr, &bad))
		die("post_send");
}

/* Any one completion, within @ms milliseconds; 0 when none came. */
static int poll_any(struct ibv_wc *wc, int ms)
{
	int n = cq_wait(cq, wc, ms);

	if (n < 0)
		die("waiting for a completion");
	return n;
}

/* One successful completion, within @ms milliseconds; 0 when none came. */
static int poll_one(struct ibv_wc *wc, int ms)
{
	if (!poll_any(wc, ms))
		return 0;
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "uc_wire: completion %llu: %s\n",
			(unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status));
		exit(1);
	}
	return 1;
}

/* Post message @msg's four operations (their completions: wait_msg()). */
static void send_four(uint32_t msg, int from, const struct dest *peer)
{
	struct ibv_send_wr wr[NOPS], *bad;
	struct ibv_sge sge[NOPS][MAX_SGE];
	int op;

	/*
	 * One list, one ibv_post_send(): the four are posted together (the
	 * device sees them at once: an RC requester takes the three behind
	 * the first into its train), not one at a time as the poller takes
	 * them.
	 */
	for (op = 0; op < NOPS; op++) {
		fill(SRC(op), msg, op, from);
		build_send(&wr[op], sge[op], op, msg, peer, SRC(op), msize(from));
		wr[op].next = op + 1 < NOPS ? &wr[op + 1] : NULL;
	}
	if (ibv_post_send(qp, wr, &bad))
		die("post_send");
}

/*
 * A receive completion of message @msg, @len bytes each: which of the
 * three it is.
 */
static int recv_kind(const struct ibv_wc *wc, uint32_t msg, uint32_t len)
{
	int which;

	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		which = 2;
		if (wc->byte_len != len) {
			fprintf(stderr, "uc_wire: WRITE_IMM byte_len %u\n", wc->byte_len);
			exit(1);
		}
	} else if (wc->opcode == IBV_WC_RECV) {
		which = (int)wc->wr_id;
		if (wc->byte_len != len ||
		    !!(wc->wc_flags & IBV_WC_WITH_IMM) != (which == 1)) {
			fprintf(stderr, "uc_wire: RECV %d: byte_len %u flags 0x%x\n",
				which, wc->byte_len, wc->wc_flags);
			exit(1);
		}
	} else {
		fprintf(stderr, "uc_wire: unexpected completion opcode %d\n", wc->opcode);
		exit(1);
	}
	if (which && ntohl(wc->imm_data) != 0x1000u * (which == 1 ? 1u : 3u) + msg) {
		fprintf(stderr, "uc_wire: immediate 0x%x\n", ntohl(wc->imm_data));
		exit(1);
	}
	return which;
}

/*
 * Wait for @sends send completions and, with @recvs, for the three
 * receive completions of the peer's message @msg; then check every byte
 * of its four operations and post the receives for the next one.
 */
static void wait_msg(int sends, bool recvs, uint32_t msg, int from)
{
	bool seen[NRECV] = { false };
	int nrecv = 0, which;
	struct ibv_wc wc;

	while (sends || (recvs && nrecv < NRECV)) {
		if (!poll_one(&wc, 20000)) {
			fprintf(stderr, "uc_wire: message %u: %d sends and %d of %d receives missing\n",
				msg, sends, recvs ? NRECV - nrecv : 0, recvs ? NRECV : 0);
			exit(1);
		}
		if (wc.opcode == IBV_WC_SEND || wc.opcode == IBV_WC_RDMA_WRITE) {
			if (!sends--) {
				fprintf(stderr, "uc_wire: a send completion too many\n");
				exit(1);
			}
			continue;
		}
		which = recv_kind(&wc, msg, msize(from));
		if (!recvs || seen[which]) {
			fprintf(stderr, "uc_wire: an unexpected receive of kind %d\n", which);
			exit(1);
		}
		seen[which] = true;
		nrecv++;
	}
	if (!recvs)
		return;
	if (check(RECV_AREA(0), msg, 0, from) || check(RECV_AREA(1), msg, 1, from) ||
	    check(WRITE_AREA(0), msg, 2, from) || check(WRITE_AREA(1), msg, 3, from))
		exit(1);
	/* Clean for the next message, then room for it. */
	memset(RECV_AREA(0), 0, o.size * 2);
	memset(WRITE_AREA(0), 0, o.size * 2);
	post_recv(0);
	post_recv(1);
	post_recv(1);	/* WRITE_IMM's (its data is in the WRITE area) */
}

static void pingpong(const struct dest *peer)
{
	int i, me = o.host ? 0 : 1;

	for (i = 0; i < o.iters; i++) {
		if (o.host) {
			send_four((uint32_t)i, me, peer);
			wait_msg(NOPS, true, (uint32_t)i, !me);
		} else {
			wait_msg(i ? NOPS : 0, true, (uint32_t)i, !me);
			send_four((uint32_t)i, me, peer);
		}
	}
	if (!o.host)
		wait_msg(NOPS, false, 0, 0);
	if (o.asize == o.size)
		printf("uc_wire: %s: %d iterations of 4 x %u bytes each way checked",
		       o.rc ? "RC" : "UC", o.iters, o.size);
	else
		printf("uc_wire: %s: %d iterations of 4 x %u bytes to the server, 4 x %u back, checked",
		       o.rc ? "RC" : "UC", o.iters, o.size, o.asize);
	if (o.sges)
		printf(", random SGE cuts (seed %u)", o.sge_seed);
	printf("\n");
}

static void stream_client(const struct dest *peer)
{
	struct ibv_send_wr *wrs, *bad;
	struct ibv_sge *sges;
	struct ibv_wc wc;
	int i = 0, done = 0, k;

	wrs = calloc((size_t)o.depth, sizeof(*wrs));
	sges = calloc((size_t)o.depth * MAX_SGE, sizeof(*sges));
	if (!wrs || !sges)
		die("calloc");
	/*
	 * At most -Q sends outstanding (2: the sources alternate; more:
	 * each message has its own, the client's receive area of the same
	 * index, which it does not receive into).  Whatever has room is
	 * posted as one list: one publish, so a requester finds them all
	 * posted at once (an RC train on the wire takes them together);
	 * with -Z, one at a time.  A completion (of a signaled SEND, its
	 * wr_id its index) says every SEND up to it is done.
	 */
	while (i <= o.stream) {
		for (k = 0; i <= o.stream && i - done < o.depth &&
			    (!o.gap_us || !k); k++, i++) {
			uint8_t *src = o.depth > 2 ? RECV_AREA(i) : SRC(i & 1);

			fill(src, (uint32_t)i, 0, 0);
			build_send(&wrs[k], &sges[k * MAX_SGE], 0, (uint32_t)i, peer, src,
				   i == o.stream ? 1 : o.size);
			wrs[k].wr_id = (uint64_t)i;
			if (i % o.sig_every != o.sig_every - 1 && i != o.stream)
				wrs[k].send_flags = 0;
			wrs[k].next = NULL;
			if (k)
				wrs[k - 1].next = &wrs[k];
		}
		if (o.gap_us)
			usleep((useconds_t)o.gap_us);
		if (k && ibv_post_send(qp, wrs, &bad))
			die("post_send");
		if (i <= o.stream && i - done >= o.depth) {
			if (!poll_one(&wc, 20000))
				die("send completion");
			done = (int)wc.wr_id + 1;
		}
	}
	while (done < o.stream + 1) {
		if (!poll_one(&wc, 20000))
			die("send completion");
		done = (int)wc.wr_id + 1;
	}
	free(wrs);
	free(sges);
	printf("uc_wire: %d messages of %u bytes and an end mark sent\n", o.stream, o.size);
}

static void stream_server(void)
{
	bool *got = calloc((size_t)o.stream, sizeof(bool));
	struct ibv_wc wc;
	int i, missing = 0;
	uint32_t m;

	if (!got)
		die("calloc");
	for (;;) {
		if (!poll_one(&wc, 20000)) {
			fprintf(stderr, "uc_wire: no end mark\n");
			exit(1);
		}
		if (wc.byte_len == 1)
			break;
		if (wc.opcode != IBV_WC_RECV || wc.byte_len != o.size)
			die("stream completion");
		memcpy(&m, RECV_AREA(wc.wr_id), 4);
		if (m >= (uint32_t)o.stream || got[m] ||
		    check(RECV_AREA(wc.wr_id), m, 0, 0)) {
			fprintf(stderr, "uc_wire: receive %llu holds message %u\n",
				(unsigned long long)wc.wr_id, m);
			exit(1);
		}
		got[m] = true;
	}
	for (i = 0; i < o.stream; i++) {
		if (got[i] == (i != o.lost))
			continue;
		fprintf(stderr, "uc_wire: message %d %s\n", i,
			got[i] ? "arrived (it should have been lost)" : "is missing");
		missing++;
	}
	if (missing)
		exit(1);
	printf("uc_wire: %d messages, %s, all others intact\n", o.stream,
	       o.lost < 0 ? "none lost" : "exactly the one expected lost");
	free(got);
}

/* -D: READ's source, its MR, and the client's target (guards around). */
#define RD_SLACK	4096
#define RD_GUARD	0xee
static uint8_t *rd_buf;
static struct ibv_mr *rd_mr;

static size_t rd_bytes(void)
{
	return ((size_t)o.size + 2 * RD_SLACK + 4095) / 4096 * 4096;
}

/*
 * -D -U: an unsignaled RDMA WRITE of the server source's first bytes,
 * with the bytes already there (the READs' checks hold), posted alone
 * just before a READ: on the wire the WRITE goes quiet (no AckReq) and
 * the READ cannot join its train, so the requester must ask for the
 * WRITE's answer at once (wire_rc.c) instead of waiting ack_quiet_us.
 */
static void quiet_write(const struct dest *peer)
{
	static uint8_t src[64];
	static struct ibv_mr *src_mr;
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = sizeof(src) };
	struct ibv_send_wr wr = {
		.wr_id = 6, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
	}, *bad;
	size_t k;

	if (!src_mr) {
		for (k = 0; k < sizeof(src); k++)
			src[k] = pat(0, 5, 1, k);
		src_mr = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
		if (!src_mr)
			die("quiet WRITE MR");
	}
	sge.lkey = src_mr->lkey;
	wr.wr.rdma.remote_addr = peer->addr;
	wr.wr.rdma.rkey = peer->rkey;
	if (ibv_post_send(qp, &wr, &bad))
		die("post quiet WRITE");
}

/* One READ of @len bytes from the server's source at @roff, checked. */
static void read_one(const struct dest *peer, uint32_t len, uint32_t roff)
{
	struct ibv_sge sge[4];
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = sge, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint32_t cut[5], doff = (uint32_t)(rand() % RD_SLACK), left = len;
	int n = 1 + rand() % 4, i;
	struct ibv_wc wc;
	size_t k, j;

	/* A random layout: @n pieces, gaps of up to 64 bytes between. */
	memset(rd_buf, RD_GUARD, rd_bytes());
	wr.num_sge = 0;
	for (i = 0; i < n && (left || !i); i++) {
		cut[i] = i == n - 1 ? left : (uint32_t)(rand() % (left + 1));
		left -= cut[i];
		if (!cut[i] && len)
			continue;
		if (len) {
			sge[wr.num_sge].addr = (uintptr_t)rd_buf + doff;
			sge[wr.num_sge].length = cut[i];
			sge[wr.num_sge].lkey = rd_mr->lkey;
			wr.num_sge++;
		}
		doff += cut[i] + (uint32_t)(rand() % 64);
	}
	if (doff > rd_bytes())
		die("READ layout");
	if (o.sig_every > 1)
		quiet_write(peer);
	wr.wr.rdma.remote_addr = peer->addr + roff;
	wr.wr.rdma.rkey = peer->rkey;
	if (ibv_post_send(qp, &wr, &bad))
		die("post READ");
	if (!poll_one(&wc, 60000)) {
		fprintf(stderr, "uc_wire: READ of %u bytes: no completion\n", len);
		exit(1);
	}
	if (wc.opcode != IBV_WC_RDMA_READ || wc.byte_len != len) {
		fprintf(stderr, "uc_wire: READ of %u bytes: opcode %d byte_len %u\n",
			len, wc.opcode, wc.byte_len);
		exit(1);
	}
	/* Every byte where the SGEs said, the guard bytes elsewhere. */
	for (k = 0, j = roff, i = 0; i < wr.num_sge; i++) {
		const uint8_t *p = (const uint8_t *)(uintptr_t)sge[i].addr;
		size_t m;

		for (; k < (size_t)(p - rd_buf); k++)
			if (rd_buf[k] != RD_GUARD)
				goto bad_guard;
		for (m = 0; m < sge[i].length; m++, j++, k++)
			if (p[m] != pat(0, 5, 1, j)) {
				fprintf(stderr, "uc_wire: READ of %u at %u: byte %zu is 0x%02x, not 0x%02x\n",
					len, roff, j - roff, p[m], pat(0, 5, 1, j));
				exit(1);
			}
	}
	for (; k < rd_bytes(); k++)
		if (rd_buf[k] != RD_GUARD)
			goto bad_guard;
	return;
bad_guard:
	fprintf(stderr, "uc_wire: READ of %u at %u: byte %zu of the target written outside the SGEs\n",
		len, roff, k);
	exit(1);
}

/* -D: the client READs at sizes 0 to SIZE; the server only serves. */
static void reads(const struct dest *peer)
{
	static const uint32_t edges[] = {
		0, 1, 3, 4, 1023, 1024, 1025, 2048, 4095, 4096, 4097, 16384,
		65535, 65536, 65537, 131072 + 1000,
	};
	unsigned int seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	uint64_t total = o.size;
	int i, n = 0;
	uint32_t len;

	if (!o.host)
		return;
	srand(seed);
	for (i = 0; i < (int)(sizeof(edges) / sizeof(edges[0])); i++, n++)
		if (edges[i] <= o.size) {
			read_one(peer, edges[i], (uint32_t)(rand() % (RD_SLACK + 1)) * (edges[i] < o.size));
			total += edges[i];
		}
	read_one(peer, o.size, 0);
	for (i = 0; i < o.iters || total < o.volume; i++, n++) {
		len = (uint32_t)(rand() % (o.size + 1));
		read_one(peer, len, (uint32_t)(rand() % (o.size - len + 1)));
		total += len;
	}
	printf("uc_wire: RC: %d READs of 0 to %u bytes checked, %llu bytes in all (seed %u)\n",
	       n + 1, o.size, (unsigned long long)total, seed);
}

/* -A: the server's two targets, the client's guarded results. */
#define ATM_ADD0	0x00000000fffffff0ULL
#define ATM_CAS0	0x0123456789abcdefULL
#define ATM_GUARD	0xeeeeeeeeeeeeeeeeULL
static uint64_t *atm_buf;
static struct ibv_mr *atm_mr;

static uint64_t rand64(void)
{
	return (uint64_t)rand() << 42 ^ (uint64_t)rand() << 21 ^ (uint64_t)rand();
}

/*
 * One atomic on the server's target @slot, its original value checked
 * against @want; the result lands in atm_buf[1], between guards.
 */
static void atomic_one(const struct dest *peer, enum ibv_wr_opcode op, int slot,
		       uint64_t cmp_add, uint64_t swap, uint64_t want)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&atm_buf[1], .length = 8, .lkey = atm_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	const char *name = op == IBV_WR_ATOMIC_FETCH_AND_ADD ? "FETCH_ADD" : "CMP_SWP";
	struct ibv_wc wc;

	atm_buf[0] = atm_buf[1] = atm_buf[2] = ATM_GUARD;
	wr.wr.atomic.remote_addr = peer->addr + 8 * (uint64_t)slot;
	wr.wr.atomic.rkey = peer->rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	if (ibv_post_send(qp, &wr, &bad))
		die("post atomic");
	if (!poll_one(&wc, 60000)) {
		fprintf(stderr, "uc_wire: %s: no completion\n", name);
		exit(1);
	}
	if (wc.opcode != (op == IBV_WR_ATOMIC_FETCH_AND_ADD ? IBV_WC_FETCH_ADD :
			  IBV_WC_COMP_SWAP)) {
		fprintf(stderr, "uc_wire: %s: completion opcode %d\n", name, wc.opcode);
		exit(1);
	}
	if (atm_buf[1] != want || atm_buf[0] != ATM_GUARD || atm_buf[2] != ATM_GUARD) {
		fprintf(stderr, "uc_wire: %s: returned 0x%llx, expected 0x%llx (guards 0x%llx 0x%llx)\n",
			name, (unsigned long long)atm_buf[1], (unsigned long long)want,
			(unsigned long long)atm_buf[0], (unsigned long long)atm_buf[2]);
		exit(1);
	}
}

/*
 * -A: the client's atomics, each original value checked; then the
 * server compares its targets with the final values the client expects.
 */
static void atomics(const struct dest *peer, int s)
{
	unsigned int seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	uint64_t sum = ATM_ADD0, cur = ATM_CAS0, add, next, want[2];
	int i, n = 0, fadd = 0;
	char ok = 0;

	if (!o.host) {
		/* The responder: idle until the client says what to expect. */
		if (read(s, want, sizeof(want)) != sizeof(want))
			die("read expected values");
		ok = atm_buf[0] == want[0] && atm_buf[1] == want[1];
		if (!ok)
			fprintf(stderr, "uc_wire: server: targets 0x%llx 0x%llx, expected 0x%llx 0x%llx\n",
				(unsigned long long)atm_buf[0], (unsigned long long)atm_buf[1],
				(unsigned long long)want[0], (unsigned long long)want[1]);
		else
			printf("uc_wire: server: final values 0x%llx 0x%llx as expected\n",
			       (unsigned long long)want[0], (unsigned long long)want[1]);
		if (write(s, &ok, 1) != 1)
			die("write verdict");
		if (!ok)
			exit(1);
		return;
	}
	srand(seed);
	for (i = 0; i < o.iters; i++) {
		add = (rand64() & ((1ULL << 40) - 1)) + 1;
		atomic_one(peer, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, add, 0, sum);
		sum += add;
		fadd++;
		next = rand64();
		atomic_one(peer, IBV_WR_ATOMIC_CMP_AND_SWP, 1, cur, next, cur);
		cur = next;
		n += 2;
		if (i % 4 == 3) {
			/* A compare that misses: nothing swapped. */
			atomic_one(peer, IBV_WR_ATOMIC_CMP_AND_SWP, 1, cur ^ 1, rand64(), cur);
			n++;
		}
	}
	want[0] = sum;
	want[1] = cur;
	if (write(s, want, sizeof(want)) != sizeof(want) || read(s, &ok, 1) != 1)
		die("final values exchange");
	if (!ok) {
		fprintf(stderr, "uc_wire: the server's final values differ\n");
		exit(1);
	}
	printf("uc_wire: RC: %d atomics checked (%d FETCH_ADD, sum 0x%llx; CMP_SWP 0x%llx; seed %u)\n",
	       n, fadd, (unsigned long long)sum, (unsigned long long)cur, seed);
}

/*
 * -E: the server's QP goes away; the client's SEND to it must end in
 * RETRY_EXC_ERR after its retries (8 timeouts of 67 ms), not hang.
 */
static int dead_peer(int s)
{
	struct timespec t0;
	struct ibv_wc wc;
	double secs;
	int n;

	if (!o.host) {
		if (ibv_destroy_qp(qp))
			die("destroy QP");
		sync_peer(s);
		sync_peer(s);
		printf("uc_wire: QP destroyed under the client\n");
		return 0;
	}
	sync_peer(s);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fill(SRC(0), 0, 0, 0);
	post_send(0, 0, NULL, SRC(0), o.size);
	n = poll_any(&wc, 20000);
	secs = us_since(&t0) / 1e6;
	if (!n) {
		fprintf(stderr, "uc_wire: no completion in 20 s\n");
		return 1;
	}
	if (wc.status != IBV_WC_RETRY_EXC_ERR) {
		fprintf(stderr, "uc_wire: dead peer: %s, not RETRY_EXC_ERR\n",
			ibv_wc_status_str(wc.status));
		return 1;
	}
	printf("uc_wire: dead peer: %s after %.2f s\n", ibv_wc_status_str(wc.status), secs);
	sync_peer(s);
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct dest me = { 0 }, peer;
	int c, i, s;

	while ((c = getopt(argc, argv, "d:g:p:s:a:n:P:S:Q:L:T:U:V:Z:GREWDA")) != -1) {
		switch (c) {
		case 'd': o.dev = optarg; break;
		case 'g': o.gidx = atoi(optarg); break;
		case 'p': o.port = atoi(optarg); break;
		case 's': o.size = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'a': o.asize = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'V': o.volume = strtoull(optarg, NULL, 0) << 20; break;
		case 'n': o.iters = atoi(optarg); break;
		case 'P': o.psn = (uint32_t)strtoul(optarg, NULL, 0) & 0xffffff; break;
		case 'S': o.stream = atoi(optarg); break;
		case 'Q': o.depth = atoi(optarg); break;
		case 'U': o.sig_every = atoi(optarg); break;
		case 'Z': o.gap_us = atoi(optarg); break;
		case 'L': o.lost = atoi(optarg); break;
		case 'T': o.timeout = atoi(optarg); break;
		case 'G': o.sges = 1; break;
		case 'R': o.rc = 1; break;
		case 'E': o.dead = 1; break;
		case 'W': o.rnr = 1; break;
		case 'D': o.read = 1; break;
		case 'A': o.atomic = 1; break;
		default:
			fprintf(stderr, "usage: uc_wire -d DEV -g GIDX [-R [-E|-D [-V MIB]|-A] [-T T]] [-p PORT] [-s SIZE] [-a ASIZE] [-G] [-n ITERS] [-P PSN] [-S N [-Q DEPTH] [-U K] [-Z USEC] [-L K]] [HOST]\n");
			return 2;
		}
	}
	if (optind < argc)
		o.host = argv[optind];
	if (!o.dev || (!o.size && o.stream))
		die("-d and a non-zero -s (ping-pong: any) are needed");
	if (o.asize == UINT32_MAX)
		o.asize = o.size;
	else if (o.asize > o.size || o.stream || o.read || o.atomic || o.dead)
		die("-a is at most SIZE, for the ping-pong");
	if (o.volume && !o.read)
		die("-V is for -D");
	if (o.sges) {
		o.sge_seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
		srand(o.sge_seed);
	}
	if (o.depth < 2 || o.depth > 1024)
		die("-Q is 2..1024");
	if (o.sig_every < 1 || o.sig_every > o.depth)
		die("-U is 1..DEPTH (one signaled SEND at least per DEPTH)");
	if (o.gap_us < 0)
		die("-Z is 0 or more");

	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), o.dev))
			break;
	if (!list || !list[i])
		die("no such device");
	ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("open device");
	nareas = NOPS + nrecv_areas() + 2;
	buf = aligned_alloc(4096, (nareas * o.size + 4096) / 4096 * 4096);
	if (!buf)
		die("buffer");
	memset(buf, 0, nareas * o.size + 1);
	pd = ibv_alloc_pd(ctx);
	chan = pd ? ibv_create_comp_channel(ctx) : NULL;
	/* A channel for cq_wait() (util.h) to sleep on. */
	cq = chan ? ibv_create_cq(ctx, 2 * (o.stream + o.depth + 16), NULL, chan, 0) : NULL;
	mr = cq ? ibv_reg_mr(pd, buf, nareas * o.size + 1,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (!mr)
		die("PD, completion channel, CQ or MR");
	if (o.read) {
		rd_buf = aligned_alloc(4096, rd_bytes());
		if (!rd_buf)
			die("READ buffer");
		/* The server's source: its pattern at every offset. */
		for (size_t k = 0; k < rd_bytes(); k++)
			rd_buf[k] = pat(0, 5, 1, k);
		/* -U: the client also WRITEs the pattern's first bytes. */
		rd_mr = ibv_reg_mr(pd, rd_buf, o.host ? rd_bytes() : o.size + RD_SLACK,
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				   (o.sig_every > 1 ? IBV_ACCESS_REMOTE_WRITE : 0));
		if (!rd_mr)
			die("READ MR");
	}
	if (o.atomic) {
		atm_buf = aligned_alloc(4096, 4096);
		if (!atm_buf)
			die("atomic buffer");
		atm_buf[0] = ATM_ADD0;
		atm_buf[1] = ATM_CAS0;
		atm_mr = ibv_reg_mr(pd, atm_buf, 4096,
				    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
		if (!atm_mr)
			die("atomic MR");
	}
	{
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq,
			.qp_type = o.rc ? IBV_QPT_RC : IBV_QPT_UC,
			.cap = { .max_send_wr = (uint32_t)o.depth + 16,
				 .max_recv_wr = (uint32_t)o.stream + 16,
				 .max_send_sge = MAX_SGE, .max_recv_sge = MAX_SGE },
		};

		qp = ibv_create_qp(pd, &ia);
		if (!qp)
			die("create QP");
	}
	if (ibv_query_gid(ctx, 1, o.gidx, &me.gid))
		die("query_gid");
	me.qpn = qp->qp_num;
	me.psn = o.psn;
	me.rkey = o.read ? rd_mr->rkey : o.atomic ? atm_mr->rkey : mr->rkey;
	me.addr = o.read ? (uintptr_t)rd_buf : o.atomic ? (uintptr_t)atm_buf : (uintptr_t)buf;

	/* Receives first: the peer may send as soon as it is connected. */
	init_qp();
	if (o.stream) {
		if (!o.host)
			for (i = 0; i <= o.stream; i++)
				post_recv((size_t)i);
	} else if (!o.rnr || o.host) {
		post_recv(0);
		post_recv(1);
		post_recv(1);
	}
	s = exchange(&me, &peer);
	connect_qp(&peer);
	/* Both at RTS before anything is sent. */
	sync_peer(s);
	if (o.rnr && !o.host && !o.stream) {
		usleep(300000);
		post_recv(0);
		post_recv(1);
		post_recv(1);
	}
	if (o.dead)
		return dead_peer(s);
	if (o.read)
		reads(&peer);
	else if (o.atomic)
		atomics(&peer, s);
	else if (o.stream && o.host)
		stream_client(&peer);
	else if (o.stream)
		stream_server();
	else
		pingpong(&peer);
	/* Neither side goes away while the other still needs it. */
	sync_peer(s);
	close(s);
	ibv_destroy_qp(qp);
	if (rd_mr)
		ibv_dereg_mr(rd_mr);
	free(rd_buf);
	if (atm_mr)
		ibv_dereg_mr(atm_mr);
	free(atm_buf);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(chan);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return 0;
}
