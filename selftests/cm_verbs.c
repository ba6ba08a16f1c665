// SPDX-License-Identifier: GPL-2.0-only
/*
 * cm_verbs: librdmacm's verbs helpers (<rdma/rdma_verbs.h>) end to end,
 * every byte checked.  Built on the distribution's librdmacm and
 * libibverbs, so it runs on rdma_rxe as it is and on softhca under
 * softhca-run (selftests/rdma_cm.sh).
 *
 *   cm_verbs -s ADDR [-p PORT]    server
 *   cm_verbs -c ADDR [-p PORT]    client
 *
 * One RC connection from rdma_create_ep(); per round:
 *   1. the client sends a header and a payload from two buffers with
 *      rdma_post_sendv() (2 SGEs); the server checks the bytes arrived
 *      as one message, in order;
 *   2. the server answers (rdma_post_send) with the address and rkey of
 *      a buffer it registered for remote read and write;
 *   3. the client rdma_post_write()s a pattern there, rdma_post_read()s
 *      it back into another buffer and compares;
 *   4. the client says done (rdma_post_send), the server checks its
 *      buffer holds the pattern and answers with its verdict.
 * Completions come from rdma_get_send_comp()/rdma_get_recv_comp(),
 * which sleep on completion events.  Exit 0 and "cm_verbs: N rounds
 * checked" when every check passed.
 */
#include <endian.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define ROUNDS	20
#define HDR	16
#define PAYLOAD	1000
#define WLEN	8192

struct advert {
	uint64_t addr;
	uint32_t rkey;
	uint32_t round;
};

static int fail(const char *what)
{
	perror(what);
	exit(1);
}

static uint8_t pat(uint32_t round, uint32_t i, uint8_t salt)
{
	return (uint8_t)(i * 7 + round * 13 + salt);
}

/* One completion of @id's send (@send) or receive CQ, checked. */
static void comp(struct rdma_cm_id *id, int send, uint32_t *len)
{
	struct ibv_wc wc;
	int n;

	n = send ? rdma_get_send_comp(id, &wc) : rdma_get_recv_comp(id, &wc);
	if (n <= 0)
		fail(send ? "rdma_get_send_comp" : "rdma_get_recv_comp");
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "cm_verbs: %s completion: %s\n",
			send ? "send" : "receive", ibv_wc_status_str(wc.status));
		exit(1);
	}
	if (len)
		*len = wc.byte_len;
}

static void recv_post(struct rdma_cm_id *id, void *buf, size_t len,
		      struct ibv_mr *mr)
{
	if (rdma_post_recv(id, NULL, buf, len, mr))
		fail("rdma_post_recv");
}

/* A SEND of @buf, waited for. */
static void send_wait(struct rdma_cm_id *id, void *buf, size_t len,
		      struct ibv_mr *mr)
{
	if (rdma_post_send(id, NULL, buf, len, mr, 0))
		fail("rdma_post_send");
	comp(id, 1, NULL);
}

static struct rdma_cm_id *listen_id;

static struct rdma_cm_id *endpoint(const char *addr, const char *port,
				   int server)
{
	struct rdma_addrinfo hints = {}, *res;
	struct ibv_qp_init_attr attr = {};
	struct rdma_cm_id *id;

	hints.ai_port_space = RDMA_PS_TCP;
	if (server)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(addr, port, &hints, &res))
		fail("rdma_getaddrinfo");
	attr.cap.max_send_wr = 4;
	attr.cap.max_recv_wr = 4;
	attr.cap.max_send_sge = 2;
	attr.cap.max_recv_sge = 1;
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 1;
	if (!server) {
		if (rdma_create_ep(&id, res, NULL, &attr))
			fail("rdma_create_ep");
		rdma_freeaddrinfo(res);
		return id;
	}
	if (rdma_create_ep(&listen_id, res, NULL, &attr))
		fail("rdma_create_ep");
	rdma_freeaddrinfo(res);
	if (rdma_listen(listen_id, 0))
		fail("rdma_listen");
	if (rdma_get_request(listen_id, &id))
		fail("rdma_get_request");
	return id;
}

static int server(struct rdma_cm_id *id)
{
	static uint8_t rbuf[HDR + PAYLOAD + 64], win[WLEN];
	static struct advert msgs[2];	/* one MR: the advert, the verdict */
	struct advert *adv = &msgs[0], *verdict = &msgs[1];
	struct ibv_mr *rmr, *wmr, *amr;
	uint32_t round, i, len;

	rmr = rdma_reg_msgs(id, rbuf, sizeof(rbuf));
	amr = rdma_reg_msgs(id, msgs, sizeof(msgs));
	wmr = ibv_reg_mr(id->pd, win, sizeof(win), IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!rmr || !amr || !wmr)
		fail("register");
	recv_post(id, rbuf, sizeof(rbuf), rmr);
	if (rdma_accept(id, NULL))
		fail("rdma_accept");
	for (round = 0; round < ROUNDS; round++) {
		/* 1: the two-SGE message */
		comp(id, 0, &len);
		if (len != HDR + PAYLOAD) {
			fprintf(stderr, "round %u: %u bytes, not %u\n", round,
				len, HDR + PAYLOAD);
			return 1;
		}
		for (i = 0; i < HDR + PAYLOAD; i++)
			if (rbuf[i] != pat(round, i, i < HDR ? 1 : 2)) {
				fprintf(stderr, "round %u: byte %u wrong\n",
					round, i);
				return 1;
			}
		recv_post(id, rbuf, sizeof(rbuf), rmr);
		/* 2: the window */
		memset(win, 0, sizeof(win));
		adv->addr = htobe64((uintptr_t)win);
		adv->rkey = htobe32(wmr->rkey);
		adv->round = htobe32(round);
		send_wait(id, adv, sizeof(*adv), amr);
		/* 4: done?  then the verdict */
		comp(id, 0, &len);
		verdict->round = htobe32(round);
		verdict->rkey = 0;
		for (i = 0; i < WLEN; i++)
			if (win[i] != pat(round, i, 3))
				verdict->rkey = htobe32(i + 1);
		recv_post(id, rbuf, sizeof(rbuf), rmr);
		send_wait(id, verdict, sizeof(*verdict), amr);
		if (verdict->rkey) {
			fprintf(stderr, "round %u: window byte %u wrong\n",
				round, be32toh(verdict->rkey) - 1);
			return 1;
		}
	}
	comp(id, 0, &len);	/* the client's goodbye */
	rdma_disconnect(id);
	rdma_dereg_mr(rmr);
	rdma_dereg_mr(amr);
	rdma_dereg_mr(wmr);
	return 0;
}

static int client(struct rdma_cm_id *id)
{
	static uint8_t hdr[HDR], payload[PAYLOAD], wbuf[WLEN], rdbuf[WLEN];
	static struct advert adv;
	struct ibv_mr *hmr, *pmr, *amr, *wmr, *rdmr;
	struct ibv_sge sgl[2];
	uint32_t round, i, len;

	hmr = rdma_reg_msgs(id, hdr, sizeof(hdr));
	pmr = rdma_reg_msgs(id, payload, sizeof(payload));
	amr = rdma_reg_msgs(id, &adv, sizeof(adv));
	wmr = rdma_reg_write(id, wbuf, sizeof(wbuf));
	rdmr = rdma_reg_read(id, rdbuf, sizeof(rdbuf));
	if (!hmr || !pmr || !amr || !wmr || !rdmr)
		fail("register");
	recv_post(id, &adv, sizeof(adv), amr);
	if (rdma_connect(id, NULL))
		fail("rdma_connect");
	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < HDR; i++)
			hdr[i] = pat(round, i, 1);
		for (i = 0; i < PAYLOAD; i++)
			payload[i] = pat(round, HDR + i, 2);
		sgl[0].addr = (uintptr_t)hdr;
		sgl[0].length = HDR;
		sgl[0].lkey = hmr->lkey;
		sgl[1].addr = (uintptr_t)payload;
		sgl[1].length = PAYLOAD;
		sgl[1].lkey = pmr->lkey;
		/* 1 */
		if (rdma_post_sendv(id, NULL, sgl, 2, 0))
			fail("rdma_post_sendv");
		comp(id, 1, NULL);
		/* 2 */
		comp(id, 0, &len);
		if (len != sizeof(adv) || be32toh(adv.round) != round) {
			fprintf(stderr, "round %u: a bad advert\n", round);
			return 1;
		}
		/* 3 */
		for (i = 0; i < WLEN; i++)
			wbuf[i] = pat(round, i, 3);
		memset(rdbuf, 0, sizeof(rdbuf));
		if (rdma_post_write(id, NULL, wbuf, WLEN, wmr, 0,
				    be64toh(adv.addr), be32toh(adv.rkey)))
			fail("rdma_post_write");
		comp(id, 1, NULL);
		if (rdma_post_read(id, NULL, rdbuf, WLEN, rdmr, 0,
				   be64toh(adv.addr), be32toh(adv.rkey)))
			fail("rdma_post_read");
		comp(id, 1, &len);
		if (memcmp(rdbuf, wbuf, WLEN)) {
			fprintf(stderr, "round %u: read back differs\n", round);
			return 1;
		}
		/* 4 */
		recv_post(id, &adv, sizeof(adv), amr);
		send_wait(id, hdr, HDR, hmr);
		comp(id, 0, &len);
		if (adv.rkey) {
			fprintf(stderr, "round %u: the server saw byte %u wrong\n",
				round, be32toh(adv.rkey) - 1);
			return 1;
		}
		recv_post(id, &adv, sizeof(adv), amr);
	}
	send_wait(id, hdr, HDR, hmr);
	rdma_disconnect(id);
	rdma_dereg_mr(hmr);
	rdma_dereg_mr(pmr);
	rdma_dereg_mr(amr);
	rdma_dereg_mr(wmr);
	rdma_dereg_mr(rdmr);
	return 0;
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *port = "7471";
	struct rdma_cm_id *id;
	int opt, srv = -1, rc;

	while ((opt = getopt(argc, argv, "s:c:p:")) != -1) {
		switch (opt) {
		case 's':
		case 'c':
			srv = opt == 's';
			addr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		default:
			srv = -1;
			addr = NULL;
			optind = argc;
		}
	}
	if (srv < 0 || !addr) {
		fprintf(stderr, "usage: cm_verbs -s|-c ADDR [-p PORT]\n");
		return 2;
	}
	id = endpoint(addr, port, srv);
	rc = srv ? server(id) : client(id);
	rdma_destroy_ep(id);
	if (listen_id)
		rdma_destroy_ep(listen_id);
	if (!rc)
		printf("cm_verbs: %d rounds checked (%s)\n", ROUNDS,
		       srv ? "server" : "client");
	return rc;
}
