/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * softhca-perf: latency, bandwidth and message rate over the libibverbs
 * API.  The same sources build against libsofthca (softhca-perf) and
 * against the distribution's libibverbs (softhca-perf-ibverbs), so one
 * program measures softhca and any other RDMA device on equal terms.
 *
 * Files: main.c (options, the test table, output), setup.c (devices,
 * QPs, connecting them in one process or across two), lat.c (latency
 * loops), bw.c (bandwidth and message rate loops), meter.c (clock,
 * percentiles, system calls and CPU time per operation).
 */
#ifndef SOFTHCA_PERF_H
#define SOFTHCA_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#define PERF_QKEY	0x11111111
#define PERF_GRH	40	/* UD receive buffers start with the GRH */

enum perf_op { OP_SEND, OP_WRITE, OP_READ, OP_ATOMIC };
enum perf_kind { KIND_LAT, KIND_BW };

/* How the two ends run: both in one thread, or one process each. */
enum perf_mode { MODE_LOCAL, MODE_FORK };

struct perf_opts {
	const char *test;		/* e.g. "send_lat" */
	enum perf_op op;
	enum perf_kind kind;
	enum ibv_qp_type qpt;
	enum perf_mode mode;
	const char *dev, *dev2;		/* requester's, responder's device */
	int ib_port, gid_index;
	uint32_t sizes[32];
	int nsizes;
	long iters;			/* 0: a default per test and size */
	int depth;			/* outstanding operations (bw) */
	int qps;			/* QP pairs carrying traffic (bw) */
	int idle_qps;			/* extra QPs that never carry any */
	int inline_max;			/* sends up to this size go inline */
	bool events;			/* wait on a completion channel */
	bool cas;			/* atomic: compare-and-swap, not FAA */
	bool json;
	int cpu, cpu2;			/* pin the driving thread(s), -1: no */
};

/* One end: a device context and what hangs off it. */
struct perf_end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;	/* send and receive completions */
	struct ibv_cq *idle_cq;
	uint8_t *buf;			/* registered, page aligned */
	size_t buf_len;
	struct ibv_mr *mr;
	union ibv_gid gid;
	int nqps, nidle;
	struct ibv_qp **qp;		/* nqps traffic QPs */
	struct ibv_qp **idle;		/* nidle QPs that stay idle */
	struct ibv_ah *ah;		/* UD: to the peer's GID */
	uint32_t max_rd;		/* READs/atomics in flight per QP */
	uint32_t active_mtu;		/* bytes */
	uint32_t rlen;			/* the receive half's size: receives
					 * take all of it, the source half
					 * starts there */
	int *rq_out;			/* receives outstanding per QP */
};

/* What one end tells the other to connect to it. */
struct perf_wire {
	union ibv_gid gid;
	uint64_t addr;
	uint32_t rkey;
	uint32_t nqps;
	uint32_t active_mtu;
};				/* then nqps QP numbers */

/* The peer as this end knows it. */
struct perf_peer {
	union ibv_gid gid;
	uint64_t addr;
	uint32_t rkey;
	uint32_t active_mtu;
	uint32_t *qpn;
};

/* A kernel thread's run time (meter.c). */
struct perf_kthread {
	int pid;
	uint64_t run_ns;
};

/* A measurement window: time, system calls, CPU of us and of kthreads. */
struct perf_meter {
	uint64_t tsc0, tsc1;
	uint64_t ns0, ns1;
	long long sys0, sys1;		/* raw_syscalls:sys_enter count */
	uint64_t cpu0, cpu1;		/* this process, ns */
	uint64_t kth;			/* all kernel threads, ns in the window */
	uint64_t poll;			/* softhca pollers among them */
	struct perf_kthread *kth0;	/* each one's run time at the start */
	size_t nkth0;
	bool kth_begun;			/* perf_meter_begin() took them */
};

/* One line of results. */
struct perf_result {
	uint32_t bytes;
	long iters;			/* operations measured */
	double t_min, t_med, t_avg, t_p99, t_p999, t_max;	/* us */
	double mib_s, mpps;
	double sys_per_op;		/* < 0: not counted */
	double cpu_us_per_op;		/* the application (both ends) */
	double kthread_us_per_op;	/* kernel threads, all of them */
	double poller_us_per_op;	/* of which softhca pollers */
};

/* setup.c */
int perf_end_open(struct perf_end *e, const struct perf_opts *o,
		  const char *dev, size_t buf_len);
void perf_end_close(struct perf_end *e);
int perf_end_qps(struct perf_end *e, const struct perf_opts *o);
int perf_connect(struct perf_end *e, const struct perf_opts *o,
		 const struct perf_peer *p);
int perf_connect_idle(struct perf_end *a, struct perf_end *b,
		      const struct perf_opts *o);
int perf_peer_of(const struct perf_end *e, struct perf_peer *p);
int perf_exchange(int fd, const struct perf_end *e, struct perf_peer *p);
int perf_sync(int fd);
int perf_send_all(int fd, const void *buf, size_t len);
int perf_recv_all(int fd, void *buf, size_t len);

/* Completions: busy polling, or through the completion channel. */
int perf_poll(struct perf_end *e, struct ibv_cq *cq, int n, struct ibv_wc *wc,
	      bool events);
int perf_post_recv(struct perf_end *e, int q);
int perf_fill_rq(struct perf_end *e, int want);

/* lat.c, bw.c: run one size; the peer (if any) is behind @fd. */
struct perf_run {
	const struct perf_opts *o;
	struct perf_end *a, *b;		/* b: NULL unless MODE_LOCAL */
	struct perf_peer pa, pb;	/* what a knows of b, b of a */
	int fd;				/* MODE_FORK: the other process */
	bool server;			/* MODE_FORK: this is the responder */
};

/* ops.c */
int perf_post(struct perf_run *r, struct perf_end *e,
	      const struct perf_peer *p, int q, uint32_t bytes, bool signaled,
	      uint64_t wr_id, uint64_t cmp);
int perf_wc_ok(const struct ibv_wc *wc, int n);
int perf_window_close(struct perf_run *r, struct perf_meter *m, long ops,
		      struct perf_result *res);

int perf_lat(struct perf_run *r, uint32_t bytes, long iters,
	     struct perf_result *res);
int perf_bw(struct perf_run *r, uint32_t bytes, long iters,
	    struct perf_result *res);

/* meter.c */
void perf_meter_init(void);
void perf_meter_begin(struct perf_meter *m);
void perf_meter_start(struct perf_meter *m);
void perf_meter_stop(struct perf_meter *m);
uint64_t perf_ticks(void);
extern double perf_ticks_per_us;
double perf_ticks_to_us(const struct perf_meter *m, uint64_t ticks);
void perf_meter_result(const struct perf_meter *m, long ops,
		       struct perf_result *res);
void perf_stats(double *us, long n, struct perf_result *res);
bool perf_syscalls_counted(void);
const char *perf_syscalls_why(void);

#endif
