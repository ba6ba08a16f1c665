// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca-perf: the measuring instruments.
 *
 * Time: the TSC on x86-64 (no system call even when the guest's
 * clocksource has no vDSO), scaled by CLOCK_MONOTONIC read at both ends
 * of each window; clock_gettime elsewhere.
 *
 * System calls: a counting perf event on the raw_syscalls:sys_enter
 * tracepoint for this process (root, or perf_event_paranoid <= -1, and
 * tracefs mounted to learn the tracepoint's id).  The same counter
 * serves every build, so libsofthca and libibverbs are counted alike.
 * Reading the counter is itself a system call: an empty window measured
 * once at start-up gives the offset to subtract.  Opening the first
 * event on the tracepoint patches kernel text; the test guest holds one
 * open for its whole boot (tools/vm/guest-init says why).
 *
 * CPU: this process's CPU clock; every kernel thread's run time from
 * /proc/PID/schedstat (kernel threads are the ones with PF_KTHREAD), and
 * among them softhca's pollers (named "softhca/N").
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "perf.h"

#define PF_KTHREAD_FLAG 0x00200000u

double perf_ticks_per_us = 1000;	/* calibrated by perf_meter_init() */
static int sys_fd = -1;
static long long sys_offset;
static const char *sys_why = "not tried";

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t perf_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return mono_ns();
#endif
}

static long long sys_count(void)
{
	long long v;

	if (sys_fd < 0 || read(sys_fd, &v, sizeof(v)) != sizeof(v))
		return -1;
	return v;
}

static int tracepoint_id(void)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
		"/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id",
	};
	unsigned int i;
	int id = -1;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]) && id < 0; i++) {
		FILE *f = fopen(paths[i], "r");

		if (!f)
			continue;
		if (fscanf(f, "%d", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

/* Open the system call counter; call once per process, after any fork. */
void perf_meter_init(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(a),
	};
	uint64_t t0, n0, dn;
	long long x, y;
	int id;

	/* Ticks per microsecond, for the busy-poll time-outs. */
	t0 = perf_ticks();
	n0 = mono_ns();
	usleep(20000);
	dn = mono_ns() - n0;
	if (dn)
		perf_ticks_per_us = (double)(perf_ticks() - t0) * 1e3 / (double)dn;

	if (sys_fd >= 0)
		return;
	id = tracepoint_id();
	if (id < 0) {
		sys_why = "no raw_syscalls tracepoint (mount tracefs on /sys/kernel/tracing)";
		return;
	}
	a.config = (unsigned int)id;
	sys_fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (sys_fd < 0) {
		sys_why = errno == EACCES || errno == EPERM ?
			"perf_event_open not permitted (root, or kernel.perf_event_paranoid=-1)" :
			"perf_event_open failed";
		return;
	}
	/* What an empty window counts: the read that closes it. */
	x = sys_count();
	y = sys_count();
	sys_offset = y - x;
	sys_why = NULL;
}

bool perf_syscalls_counted(void)
{
	return sys_fd >= 0;
}

const char *perf_syscalls_why(void)
{
	return sys_why;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_kthread(const void *a, const void *b)
{
	const struct perf_kthread *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * Every kernel thread's run time.  With @then (sorted by pid, the
 * threads at the window's start, @nthen of them), add each thread's run
 * time since then to *all (and, for softhca's pollers, to *pollers): a
 * thread that appeared in the window counts whole, one that ended in it
 * is lost (its time cannot be read any more; a sum over the threads alive
 * at each end would go negative when a busy one exits, as rxe's workers
 * do).  Without @then, return the threads (sorted, malloc'd) in *now.
 */
static size_t kthreads_scan(const struct perf_kthread *then, size_t nthen,
			    struct perf_kthread **now, uint64_t *all,
			    uint64_t *pollers)
{
	struct perf_kthread *v = NULL, *grown, key;
	DIR *d = opendir("/proc");
	char path[300], line[512];
	size_t n = 0, cap = 0;
	struct dirent *de;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		const struct perf_kthread *was;
		unsigned long long run = 0;
		unsigned int flags = 0;
		char *comm, *end;
		uint64_t delta;
		FILE *f;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
		comm = strchr(line, '(');
		end = strrchr(line, ')');
		/* ") S ppid pgrp session tty tpgid flags" */
		if (!comm || !end ||
		    sscanf(end + 2, "%*c %*d %*d %*d %*d %*d %u", &flags) != 1 ||
		    !(flags & PF_KTHREAD_FLAG))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/schedstat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &run) != 1)
			run = 0;
		fclose(f);
		key.pid = atoi(de->d_name);
		key.run_ns = run;
		if (!then) {
			if (n == cap) {
				cap = cap ? cap * 2 : 256;
				grown = realloc(v, cap * sizeof(*v));
				if (!grown)
					break;
				v = grown;
			}
			v[n++] = key;
			continue;
		}
		was = bsearch(&key, then, nthen, sizeof(*then), cmp_kthread);
		delta = !was ? run : run >= was->run_ns ? run - was->run_ns : 0;
		*all += delta;
		if (!strncmp(comm + 1, "softhca/", 8))
			*pollers += delta;
	}
	closedir(d);
	if (v)
		qsort(v, n, sizeof(*v), cmp_kthread);
	if (now)
		*now = v;
	else
		free(v);
	return n;
}

/*
 * The slow part of opening a window (every kernel thread's /proc files:
 * milliseconds under TCG).  A latency run takes it before its warm-up,
 * so that the timed operations start from a warm steady state, not after
 * a pause long enough for a poller to give the QPs back.
 */
void perf_meter_begin(struct perf_meter *m)
{
	m->kth0 = NULL;
	m->nkth0 = kthreads_scan(NULL, 0, &m->kth0, NULL, NULL);
	m->kth_begun = true;
}

void perf_meter_start(struct perf_meter *m)
{
	if (!m->kth_begun)
		perf_meter_begin(m);
	m->kth_begun = false;
	m->cpu0 = cpu_ns();
	m->ns0 = mono_ns();
	m->sys0 = sys_count();
	m->tsc0 = perf_ticks();
}

void perf_meter_stop(struct perf_meter *m)
{
	m->tsc1 = perf_ticks();
	m->sys1 = sys_count();
	m->ns1 = mono_ns();
	m->cpu1 = cpu_ns();
	m->kth = m->poll = 0;
	kthreads_scan(m->kth0, m->nkth0, NULL, &m->kth, &m->poll);
	free(m->kth0);
	m->kth0 = NULL;
}

double perf_ticks_to_us(const struct perf_meter *m, uint64_t ticks)
{
	if (m->tsc1 <= m->tsc0)
		return 0;
	return (double)ticks * (double)(m->ns1 - m->ns0) /
	       (double)(m->tsc1 - m->tsc0) / 1e3;
}

void perf_meter_result(const struct perf_meter *m, long ops,
		       struct perf_result *res)
{
	double n = ops > 0 ? (double)ops : 1;

	res->iters = ops;
	res->sys_per_op = m->sys0 < 0 || m->sys1 < 0 ? -1 :
		(double)(m->sys1 - m->sys0 - sys_offset) / n;
	res->cpu_us_per_op = (double)(m->cpu1 - m->cpu0) / 1e3 / n;
	res->kthread_us_per_op = (double)m->kth / 1e3 / n;
	res->poller_us_per_op = (double)m->poll / 1e3 / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sort @us (n samples) and fill the latency fields of @res. */
void perf_stats(double *us, long n, struct perf_result *res)
{
	double sum = 0;
	long i;

	if (n <= 0)
		return;
	qsort(us, (size_t)n, sizeof(*us), cmp_double);
	for (i = 0; i < n; i++)
		sum += us[i];
	res->t_min = us[0];
	res->t_max = us[n - 1];
	res->t_med = us[n / 2];
	res->t_avg = sum / (double)n;
	res->t_p99 = us[(long)((double)(n - 1) * 0.99)];
	res->t_p999 = us[(long)((double)(n - 1) * 0.999)];
}
