/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The verbs fuzzer's harness (fuzz.c): its PRNG, the memory the parent
 * shares with its workers (the board where workers publish QP and SRQ
 * numbers and memory keys for each other, each worker's progress and
 * last operations, the outcome table) and raw ib_uverbs commands, for
 * handles the library no longer (or never) knew.
 */
#ifndef SOFTHCA_SELFTEST_FUZZ_H
#define SOFTHCA_SELFTEST_FUZZ_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define ADD(x, v) __atomic_fetch_add(&(x), (v), __ATOMIC_RELAXED)

/* splitmix64: a scrambler, and a generator stepping a 64-bit state. */
static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t rnd64(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ULL;
	return mix64(*s);
}

/* Uniform in [0, n); 0 for n == 0. */
static inline uint32_t rnd(uint64_t *s, uint64_t n)
{
	return n ? (uint32_t)(rnd64(s) % n) : 0;
}

static inline int chance(uint64_t *s, int pct)
{
	return (int)rnd(s, 100) < pct;
}

/* A value from the edges where size checks go wrong, or any value. */
static inline uint64_t wild(uint64_t *s)
{
	static const uint64_t v[] = {
		0, 1, 2, 31, 32, 33, 255, 256, 257, 511, 512, 513, 4095, 4096,
		16383, 16384, 16385, 65535, 65536, 65537, 1u << 20, 0x7fffffff,
		0x80000000u, 0xffffffffu, 1ULL << 32, 1ULL << 40,
		(1ULL << 40) + 1, INT64_MAX, UINT64_MAX, UINT64_MAX - 4095,
	};

	return chance(s, 80) ? v[rnd(s, ARRAY_SIZE(v))] : rnd64(s);
}

/* ---- shared memory ---- */
#define MAXW		8	/* workers */
#define NRECENT		16	/* operations remembered per worker */
#define DESCLEN		96
#define NBOARD		256
#define MAXOPS		80
#define NERR		136	/* [0] success, [e] errno e, last: any other */

enum { BK_QPN = 1, BK_SRQN, BK_MR };

/* A published number: QPN (aux: type | xrcd file << 8), XRC SRQN (aux:
 * xrcd file), MR (num: rkey, aux: lkey, addr/len: its range). */
struct bent {
	uint32_t kind, dev, num, aux;
	uint64_t addr, len;
};

struct recent {
	uint64_t idx;			/* operation index */
	uint32_t op, dev;
	char desc[DESCLEN];		/* its arguments, written before the call */
};

struct wstat {
	int pid, gen, killed;
	uint64_t seed;
	uint64_t beat;			/* grows with every operation and teardown step */
	uint64_t cur;			/* index of the operation under way */
	struct recent recent[NRECENT];
};

struct shared {
	int stop;
	uint32_t link_gen;		/* incremented before and after each link delete */
	union ibv_gid gid[2];		/* GID 0 of each device */
	struct bent board[NBOARD];
	struct wstat w[MAXW];
	uint64_t ops, wc, wc_ok;
	uint64_t outcome[MAXOPS][NERR];
};

static struct shared *S;

static inline void board_put(uint64_t *r, uint32_t kind, int dev, uint32_t num,
			     uint32_t aux, uint64_t addr, uint64_t len)
{
	struct bent *b = &S->board[rnd(r, NBOARD)];

	STORE(b->kind, 0);
	STORE(b->dev, (uint32_t)dev);
	STORE(b->num, num);
	STORE(b->aux, aux);
	STORE(b->addr, addr);
	STORE(b->len, len);
	__atomic_store_n(&b->kind, kind, __ATOMIC_RELEASE);
}

/* A published entry of @kind (on device @dev, or any for -1); 0 if none. */
static inline int board_get(uint64_t *r, uint32_t kind, int dev, struct bent *out)
{
	uint32_t i, k = rnd(r, NBOARD);

	for (i = 0; i < NBOARD; i++, k = (k + 1) % NBOARD) {
		struct bent *b = &S->board[k];

		if (__atomic_load_n(&b->kind, __ATOMIC_ACQUIRE) != kind ||
		    (dev >= 0 && LOAD(b->dev) != (uint32_t)dev))
			continue;
		out->kind = kind;
		out->dev = LOAD(b->dev);
		out->num = LOAD(b->num);
		out->aux = LOAD(b->aux);
		out->addr = LOAD(b->addr);
		out->len = LOAD(b->len);
		return 1;
	}
	return 0;
}

static inline void outcome(int op, int err)
{
	ADD(S->outcome[op][err >= 0 && err < NERR - 1 ? err : NERR - 1], 1);
}

static inline const char *errname(int e)
{
	const char *n = e ? strerrorname_np(e) : "ok";

	return n ? n : "other";
}

/* ---- raw ib_uverbs commands ---- */

/*
 * One legacy command written as it is: @req (@len bytes, a multiple of
 * 4) starts with its response pointer when @resp_len is not zero (the
 * caller fills it in).  Returns 0 or an errno.
 */
static inline int raw_cmd(int fd, uint32_t cmd, const void *req, size_t len,
			  size_t resp_len)
{
	uint32_t buf[256];
	struct ib_uverbs_cmd_hdr *h = (void *)buf;

	if (len > sizeof(buf) - sizeof(*h))
		len = sizeof(buf) - sizeof(*h);
	h->command = cmd;
	h->in_words = (uint16_t)((sizeof(*h) + len) / 4);
	h->out_words = (uint16_t)(resp_len / 4);
	memcpy(h + 1, req, len);
	return write(fd, buf, sizeof(*h) + len) < 0 ? errno : 0;
}

/* The destroy command of each kind of object, for raw handles. */
enum kind { K_PD, K_CQ, K_MR, K_SRQ, K_QP, K_AH, K_XRCD, NKIND };

static const struct { uint32_t cmd; uint8_t len, resp, hoff; } kill_cmd[NKIND] = {
	[K_PD] = { IB_USER_VERBS_CMD_DEALLOC_PD, 4, 0, 0 },
	[K_CQ] = { IB_USER_VERBS_CMD_DESTROY_CQ, 16, 8, 8 },
	[K_MR] = { IB_USER_VERBS_CMD_DEREG_MR, 4, 0, 0 },
	[K_SRQ] = { IB_USER_VERBS_CMD_DESTROY_SRQ, 16, 4, 8 },
	[K_QP] = { IB_USER_VERBS_CMD_DESTROY_QP, 16, 4, 8 },
	[K_AH] = { IB_USER_VERBS_CMD_DESTROY_AH, 4, 0, 0 },
	[K_XRCD] = { IB_USER_VERBS_CMD_CLOSE_XRCD, 4, 0, 0 },
};

static inline int raw_destroy(int fd, int kind, uint32_t handle)
{
	uint64_t req[2] = { 0, 0 }, resp[1];

	if (kill_cmd[kind].resp)
		req[0] = (uintptr_t)resp;
	memcpy((char *)req + kill_cmd[kind].hoff, &handle, 4);
	return raw_cmd(fd, kill_cmd[kind].cmd, req, kill_cmd[kind].len,
		       kill_cmd[kind].resp);
}

#endif
