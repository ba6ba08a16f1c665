// SPDX-License-Identifier: GPL-2.0-only
/*
 * Object lifetime under stress, driven by objects.sh:
 *   hold            create one of every object, print "ready", wait to be
 *                   killed (the kernel must clean up after the process)
 *   cycles N        N create/destroy rounds of every object
 *   isolate         a child process with its own context cannot reach
 *                   the parent's objects by handle or by mmap offset
 *   scribble SECS   one thread writes random bytes over every writable
 *                   ring page of the process while another creates,
 *                   flushes, resizes and destroys objects
 * Exit status 0 on success; messages on stderr say what failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>

#include "util.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;

#define DIE(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

struct objs {
	struct ibv_cq *cq;
	struct ibv_qp *qp, *ud;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
};

static char buf[4096];

static void create_all(struct objs *o, int cqe)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_recv_wr rwr = {}, *bad;
	int i;

	o->cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
	o->srq = ibv_create_srq(pd, &sa);
	o->mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!o->cq || !o->srq || !o->mr)
		DIE("create: %s", strerror(errno));
	qa.send_cq = qa.recv_cq = o->cq;
	o->qp = ibv_create_qp(pd, &qa);
	qa.qp_type = IBV_QPT_UD;
	qa.srq = o->srq;
	o->ud = ibv_create_qp(pd, &qa);
	if (!o->qp || !o->ud)
		DIE("create_qp: %s", strerror(errno));
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
	if (ibv_modify_qp(o->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		DIE("modify");
	for (i = 0; i < 8; i++)
		ibv_post_recv(o->qp, &rwr, &bad);
	ibv_post_srq_recv(o->srq, &rwr, &bad);
	o->ah = NULL;
	if (!ibv_query_gid(ctx, 1, 0, &aa.grh.dgid))
		o->ah = ibv_create_ah(pd, &aa);
}

static void destroy_all(struct objs *o)
{
	if ((o->ah && ibv_destroy_ah(o->ah)) || ibv_destroy_qp(o->ud) ||
	    ibv_destroy_qp(o->qp) || ibv_destroy_srq(o->srq) ||
	    ibv_destroy_cq(o->cq) || ibv_dereg_mr(o->mr))
		DIE("destroy failed");
}

static int cycles(long n)
{
	struct objs o;
	long i;

	for (i = 0; i < n; i++) {
		create_all(&o, 32);
		destroy_all(&o);
	}
	return 0;
}

static int hold(void)
{
	struct objs o;
	char path[] = "/tmp/softhca-hold-XXXXXX";
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.oflags = O_CREAT,
	};

	create_all(&o, 32);
	xa.fd = mkstemp(path);
	if (xa.fd < 0 || !ibv_open_xrcd(ctx, &xa))
		DIE("xrcd: %s", strerror(errno));
	unlink(path);
	if (!ibv_create_comp_channel(ctx))
		DIE("channel");
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

static int isolate(void)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_qp cmd;
	} w;
	uint32_t resp[2];
	struct objs o;
	int p[2], st, i, bad = 0;
	pid_t pid;

	create_all(&o, 32);
	if (pipe(p))
		DIE("pipe");
	pid = fork();
	if (pid == 0) {
		struct ibv_context *c = open_by_name(getenv("SOFTHCA_DEV"));
		uint32_t handle = o.qp->handle;
		void *m;

		if (!c)
			_exit(2);
		/* The parent's QP handle means nothing in this context. */
		memset(&w, 0, sizeof(w));
		w.hdr.command = IB_USER_VERBS_CMD_DESTROY_QP;
		w.hdr.in_words = sizeof(w) / 4;
		w.hdr.out_words = sizeof(resp) / 4;
		w.cmd.response = (uintptr_t)resp;
		w.cmd.qp_handle = handle;
		if (write(c->cmd_fd, &w, sizeof(w)) >= 0)
			bad |= 1;
		/* Nor do the parent's mmap offsets: try a range of them. */
		for (i = 1; i < 64; i++) {
			m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, c->cmd_fd,
				 (off_t)i * 4096);
			if (m != MAP_FAILED) {
				bad |= 2;
				munmap(m, 4096);
			}
		}
		_exit(bad);
	}
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		DIE("child reached the parent's objects (status %#x)", st);
	/* And the parent's objects are intact. */
	destroy_all(&o);
	return 0;
}

/* ---- scribble ---- */
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;

static void scribble_pass(unsigned int *seed)
{
	char line[512], path[256], perms[8];
	unsigned long lo, hi, a;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi,
			   perms, path) < 3)
			continue;
		if (!strstr(path, "/dev/infiniband/uverbs") || perms[1] != 'w')
			continue;
		for (a = lo; a < hi; a += 4)
			*(volatile uint32_t *)a = (uint32_t)rand_r(seed);
	}
	fclose(f);
}

static void *scribbler(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!stop) {
		pthread_mutex_lock(&map_lock);
		scribble_pass(&seed);
		pthread_mutex_unlock(&map_lock);
		/* Let the other thread in: it needs the lock to make progress. */
		usleep(200);
	}
	return NULL;
}

static int scribble(int secs)
{
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ibv_recv_wr rwr = {}, *bad;
	struct ibv_wc wc[16];
	pthread_t t;
	time_t end = time(NULL) + secs;
	long rounds = 0;
	struct objs o;
	int i;

	pthread_create(&t, NULL, scribbler, (void *)(uintptr_t)getpid());
	while (time(NULL) < end) {
		pthread_mutex_lock(&map_lock);
		create_all(&o, 4);
		pthread_mutex_unlock(&map_lock);
		for (i = 0; i < 4; i++)
			ibv_post_recv(o.qp, &rwr, &bad);
		/* The flush reads the scribbled rings. */
		ibv_modify_qp(o.qp, &err, IBV_QP_STATE);
		ibv_post_recv(o.qp, &rwr, &bad);
		ibv_poll_cq(o.cq, 16, wc);
		pthread_mutex_lock(&map_lock);
		ibv_resize_cq(o.cq, 64);
		pthread_mutex_unlock(&map_lock);
		ibv_modify_qp(o.qp, &err, IBV_QP_STATE);
		pthread_mutex_lock(&map_lock);
		destroy_all(&o);
		pthread_mutex_unlock(&map_lock);
		rounds++;
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("NOTE: %ld create/flush/resize/destroy rounds under scribbling\n",
	       rounds);
	return 0;
}

int main(int argc, char **argv)
{
	const char *name = getenv("SOFTHCA_DEV");

	if (!name || argc < 2)
		DIE("usage: SOFTHCA_DEV=dev %s hold|cycles N|isolate|scribble S",
		    argv[0]);
	ctx = open_by_name(name);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd)
		DIE("open %s: %s", name, strerror(errno));
	if (!strcmp(argv[1], "hold"))
		return hold();
	if (!strcmp(argv[1], "cycles") && argc > 2)
		return cycles(atol(argv[2]));
	if (!strcmp(argv[1], "isolate"))
		return isolate();
	if (!strcmp(argv[1], "scribble") && argc > 2)
		return scribble(atoi(argv[2]));
	DIE("unknown mode %s", argv[1]);
}
