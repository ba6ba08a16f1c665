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
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <dirent.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
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
	uint64_t beat[2];		/* progress of its two threads (main, side) */
	uint64_t cur;			/* index of the operation under way */
	struct recent recent[NRECENT];
};

struct shared {
	int stop;
	uint32_t link_gen;		/* incremented before and after each link delete */
	union ibv_gid gid[2];		/* GID 0 of each device */
	struct bent board[NBOARD];
	struct wstat w[MAXW];
	uint64_t ops, side_ops;			/* all, and the side threads' */
	uint64_t wc, wc_status[32];		/* completions polled, by status */
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

/* ---- run-wide settings ---- */
#define HANG_SECS	30
#define ULL(x)		((unsigned long long)(x))

static int W;				/* a worker's slot in S->w */
static uint64_t wseed;			/* and its seed */
static int trace;			/* replay: print every operation */
static const char *devname[2], *netdev2;

/* Into the kernel log too: a panic's console still names the seeds. */
static void klog(const char *fmt, ...)
{
	char line[160];
	va_list ap;
	int fd = open("/dev/kmsg", O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n = write(fd, line, strlen(line));	/* best effort */
	(void)n;
	close(fd);
}

static const char *op_name(uint32_t k);
static void worker_run(uint64_t seed, uint64_t nops);

/* ---- the parent ---- */
static uint64_t run_seed;
static int nw, nfail;
static double seen_t[MAXW][2], hung_t[MAXW];	/* when each beat last moved */
static uint64_t seen[MAXW][2];
static pid_t linker;
static double linker_t;
static int readds, gens;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void spawn(int i)
{
	struct wstat *w = &S->w[i];
	pid_t pid;

	memset(w->recent, 0, sizeof(w->recent));
	w->seed = mix64(run_seed ^ mix64((uint64_t)i << 32 | (uint32_t)w->gen));
	w->killed = 0;
	w->cur = 0;
	seen[i][0] = LOAD(w->beat[0]);
	seen[i][1] = LOAD(w->beat[1]);
	seen_t[i][0] = seen_t[i][1] = now_s();
	hung_t[i] = 0;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		W = i;
		worker_run(w->seed, UINT64_MAX);
		fflush(NULL);
		exit(0);
	}
	w->pid = pid;
	gens++;
	klog("<3>fuzz: worker %d generation %d pid %d seed %#llx\n", i, w->gen, pid,
	     ULL(w->seed));
}

/* The kernel side of a stuck process: each thread's state, wait channel
 * and stack. */
static void show_task(pid_t pid)
{
	static const char *const files[] = { "status", "wchan", "stack" };
	char path[320], line[256];
	struct dirent *e;
	size_t i;
	FILE *f;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && (e = readdir(dir)))
		for (i = 0; e->d_name[0] != '.' && i < ARRAY_SIZE(files); i++) {
			snprintf(path, sizeof(path), "/proc/%d/task/%s/%s", pid,
				 e->d_name, files[i]);
			f = fopen(path, "r");
			while (f && fgets(line, sizeof(line), f))
				if (i || !strncmp(line, "State:", 6))
					printf("    %s %s: %s%s", e->d_name, files[i], line,
					       strchr(line, '\n') ? "" : "\n");
			if (f)
				fclose(f);
		}
	if (dir)
		closedir(dir);
}

static void report(int i, const char *what)
{
	struct wstat *w = &S->w[i];
	uint64_t cur = LOAD(w->cur), j;

	nfail++;
	printf("FAIL: %s: worker %d generation %d, seed %#llx (run FUZZ_SEED=%llu), "
	       "at operation #%llu\n", what, i, w->gen, ULL(w->seed),
	       ULL(run_seed), ULL(cur));
	printf("  alone: fuzz replay %#llx %llu; its last operations:\n",
	       ULL(w->seed), ULL(cur + 1));
	for (j = cur + 1 > NRECENT ? cur + 1 - NRECENT : 0; j <= cur; j++) {
		struct recent *r = &w->recent[j % NRECENT];

		if (LOAD(r->idx) == j)
			printf("  #%llu %s %s(%s)\n", ULL(j), devname[r->dev & 1],
			       op_name(r->op), r->desc);
	}
}

static void linker_end(int st)
{
	linker = 0;
	if (WIFEXITED(st) && !WEXITSTATUS(st)) {
		klog("<3>fuzz: %s added again\n", devname[1]);
		readds++;
		return;
	}
	nfail++;
	printf("FAIL: rdma link %s %s failed (status %#x, run FUZZ_SEED=%llu)\n",
	       WIFEXITED(st) && WEXITSTATUS(st) == 2 ? "add" : "delete",
	       devname[1], st, ULL(run_seed));
}

static void reap(void)
{
	char what[96];
	pid_t pid;
	int st, i;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (pid == linker) {
			linker_end(st);
			continue;
		}
		for (i = 0; i < nw && S->w[i].pid != pid; i++)
			;
		if (i == nw)
			continue;
		S->w[i].pid = 0;
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && S->w[i].killed)
			;
		else if (WIFEXITED(st) && !WEXITSTATUS(st) && LOAD(S->stop))
			;
		else if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
			report(i, "the worker's check failed (above)");
		else {
			if (WIFSIGNALED(st))
				snprintf(what, sizeof(what), "killed by signal %d (%s)",
					 WTERMSIG(st), strsignal(WTERMSIG(st)));
			else
				snprintf(what, sizeof(what), "exited with status %d "
					 "(a sanitizer report above?)", WEXITSTATUS(st));
			report(i, what);
		}
		if (!LOAD(S->stop)) {
			S->w[i].gen++;
			spawn(i);
		}
	}
}

/* Since when a thread of worker @i makes no progress (the side thread
 * ends at the stop). */
static double stuck_since(int i)
{
	return LOAD(S->stop) || seen_t[i][0] < seen_t[i][1] ? seen_t[i][0] : seen_t[i][1];
}

/* A worker whose beat stands still for HANG_SECS is reported and killed. */
static void watchdog(double now)
{
	int i, t;

	for (i = 0; i < nw; i++) {
		struct wstat *w = &S->w[i];

		if (!w->pid)
			continue;
		for (t = 0; t < 2; t++)
			if (LOAD(w->beat[t]) != seen[i][t]) {
				seen[i][t] = LOAD(w->beat[t]);
				seen_t[i][t] = now;
			}
		if (!hung_t[i] && now - stuck_since(i) > HANG_SECS) {
			report(i, "no progress for 30 s");
			show_task(w->pid);
			hung_t[i] = now;
			w->killed = 1;
			kill(w->pid, SIGKILL);
		} else if (hung_t[i] > 0 && now - hung_t[i] > 10) {
			printf("FAIL: worker %d (pid %d) does not die: stuck in the kernel\n",
			       i, w->pid);
			show_task(w->pid);
			hung_t[i] = -1;
			nfail++;
		}
	}
	if (linker && linker_t > 0 && now - linker_t > HANG_SECS) {
		printf("FAIL: rdma link delete/add of %s hangs (run FUZZ_SEED=%llu)\n",
		       devname[1], ULL(run_seed));
		show_task(linker);
		linker_t = -1;
		nfail++;
	}
}

static int run_prog(char *const argv[])
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       !WEXITSTATUS(st) ? 0 : -1;
}

static int link_add(void)
{
	char *add[] = { "rdma", "link", "add", (char *)devname[1], "type",
			"softhca", "netdev", (char *)netdev2, NULL };

	return run_prog(add);
}

/* The second device's link deleted, and @pause_ms later added again. */
static void link_cycle(unsigned int pause_ms)
{
	char *del[] = { "rdma", "link", "delete", (char *)devname[1], NULL };

	__atomic_add_fetch(&S->link_gen, 1, __ATOMIC_SEQ_CST);
	klog("<3>fuzz: deleting %s\n", devname[1]);
	fflush(NULL);
	linker = fork();
	if (linker == 0) {
		if (run_prog(del))
			_exit(1);
		/* A context opened while the delete ran was the old device's. */
		__atomic_add_fetch(&S->link_gen, 1, __ATOMIC_SEQ_CST);
		klog("<3>fuzz: %s deleted\n", devname[1]);
		usleep(pause_ms * 1000);
		_exit(link_add() ? 2 : 0);
	}
	linker_t = now_s();
}

static int write_outcomes(const char *path)
{
	FILE *f = fopen(path, "w");
	int m = 0, e;
	size_t k;

	for (k = 0; k < MAXOPS; k++)
		for (e = 0; e < NERR; e++) {
			if (!S->outcome[k][e])
				continue;
			m++;
			if (f)
				fprintf(f, "%s:%s %llu\n", op_name((uint32_t)k),
					e == NERR - 1 ? "other" : errname(e),
					ULL(S->outcome[k][e]));
		}
	for (e = 0; f && e < 32; e++)
		if (S->wc_status[e])
			fprintf(f, "poll_cq:wc %s %llu\n",
				ibv_wc_status_str((enum ibv_wc_status)e),
				ULL(S->wc_status[e]));
	if (f)
		fclose(f);
	return m;
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static int alive(void)
{
	int i, n = linker > 0;

	for (i = 0; i < nw; i++)
		n += S->w[i].pid > 0;
	return n;
}

static int run(void)
{
	uint64_t pk, pl;
	double now, end, next_kill, next_link, stop_t;
	int kills = 0, v, m;
	char path[128];

	run_seed = strtoull(env_or("FUZZ_SEED", "0"), NULL, 0);
	if (!run_seed)
		run_seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
	nw = atoi(env_or("FUZZ_WORKERS", "3"));
	nw = nw < 1 ? 1 : nw > MAXW ? MAXW : nw;
	now = now_s();
	end = now + atof(env_or("FUZZ_SECS", "60"));
	printf("fuzz: FUZZ_SEED=%llu, %d workers, %s s, %s and %s (link of %s: %s)\n",
	       ULL(run_seed), nw, env_or("FUZZ_SECS", "60"), devname[0],
	       devname[1], devname[1], netdev2);
	fflush(stdout);
	klog("<3>fuzz: FUZZ_SEED=%llu\n", ULL(run_seed));
	pk = mix64(run_seed ^ 1);		/* kill times and victims */
	pl = mix64(run_seed ^ 2);		/* link times and pauses */
	for (v = 0; v < nw; v++)
		spawn(v);
	next_kill = now + 0.2 + rnd(&pk, 2300) / 1e3;
	next_link = now + 3 + rnd(&pl, 9000) / 1e3;
	while ((now = now_s()) < end) {
		reap();
		if (now >= next_kill) {
			v = (int)rnd(&pk, (uint64_t)nw);
			/* One stuck in a call is left to the watchdog. */
			if (S->w[v].pid > 0 && !hung_t[v] && now - stuck_since(v) < 2) {
				S->w[v].killed = 1;
				kill(S->w[v].pid, SIGKILL);
				kills++;
			}
			next_kill = now + 0.2 + rnd(&pk, 2300) / 1e3;
		}
		if (now >= next_link && !linker) {
			link_cycle(100 + rnd(&pl, 2000));
			next_link = now + 4 + rnd(&pl, 12000) / 1e3;
		}
		watchdog(now);
		usleep(20000);
	}
	STORE(S->stop, 1);
	stop_t = now_s();
	while (alive()) {
		reap();
		watchdog(now = now_s());
		if (now - stop_t > 2 * HANG_SECS) {
			printf("FAIL: %d processes still run %d s after the stop\n",
			       alive(), 2 * HANG_SECS);
			nfail++;
			break;
		}
		usleep(20000);
	}
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s", devname[1]);
	if (access(path, F_OK))
		link_add();		/* its add failed: reported, tried once more */
	m = write_outcomes(env_or("FUZZ_OUT", "/tmp/fuzz-outcomes.txt"));
	printf("NOTE: fuzz: %llu operations, %d distinct (command, errno) outcomes, "
	       "%d kills, %d link re-adds\n", ULL(S->ops), m, kills, readds);
	printf("NOTE: fuzz: FUZZ_SEED=%llu, %d worker generations, %llu operations by "
	       "side threads, %llu completions polled (%llu successful)\n",
	       ULL(run_seed), gens, ULL(S->side_ops), ULL(S->wc),
	       ULL(S->wc_status[IBV_WC_SUCCESS]));
	if (nfail)
		printf("fuzz: %d failures; FUZZ_SEED=%llu runs it again\n", nfail,
		       ULL(run_seed));
	return nfail ? 1 : 0;
}

#endif
