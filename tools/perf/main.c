// SPDX-License-Identifier: GPL-2.0-only
/*
 * softhca-perf: options, the test table, running the sizes, the output
 * (a perftest-like table, or one JSON object per line with --json).
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "perf.h"

#ifndef PERF_LIB
#define PERF_LIB "libibverbs"
#endif

static const struct {
	const char *name, *title;
	enum perf_op op;
	enum perf_kind kind;
} tests[] = {
	{ "send_lat", "Send Latency", OP_SEND, KIND_LAT },
	{ "write_lat", "RDMA_Write Latency", OP_WRITE, KIND_LAT },
	{ "read_lat", "RDMA_Read Latency", OP_READ, KIND_LAT },
	{ "atomic_lat", "Atomic Latency", OP_ATOMIC, KIND_LAT },
	{ "send_bw", "Send BW", OP_SEND, KIND_BW },
	{ "write_bw", "RDMA_Write BW", OP_WRITE, KIND_BW },
	{ "read_bw", "RDMA_Read BW", OP_READ, KIND_BW },
	{ "atomic_bw", "Atomic BW", OP_ATOMIC, KIND_BW },
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: softhca-perf TEST -d DEV [options]\n"
"  TEST: send_lat write_lat read_lat atomic_lat send_bw write_bw read_bw atomic_bw\n"
"  -d, --dev DEV        the requester's device\n"
"  -D, --dev2 DEV       the responder's device (default: DEV)\n"
"  -c, --connection T   RC (default) or UD (send_lat, send_bw)\n"
"  -s, --size LIST      message sizes, e.g. 64 or 2,64,4K,1M (default: 2 for\n"
"                       latency, 64K for bandwidth)\n"
"  -a, --all            every power of two from 2 to --max-size\n"
"      --max-size N     largest size of --all (default 1M)\n"
"  -n, --iters N        operations per size (default: 1000 for latency; for\n"
"                       bandwidth 256 MiB worth, between 100 and 20000)\n"
"  -t, --depth N        operations in flight per QP (bandwidth, default 128)\n"
"  -q, --qps N          QP pairs carrying traffic (bandwidth, default 1)\n"
"      --idle-qps N     N more QPs in RTS that never carry traffic (one process)\n"
"  -I, --inline N       post sends and writes up to N bytes inline (default 0)\n"
"  -e, --events         wait for completions on a completion channel\n"
"      --cas            atomics: compare-and-swap (default fetch-and-add)\n"
"      --fork           one process per end (default: one thread drives both)\n"
"      --cpu N[,M]      pin the requester (and with --fork the responder)\n"
"  -g, --gid-index N    GID index (default 0)\n"
"  -i, --ib-port N      port (default 1)\n"
"      --json           one JSON object per size instead of the table\n"
"Latency of SEND and WRITE is one-way (posted to seen by the peer); READ and\n"
"atomics are round trips.  Built against " PERF_LIB ".\n");
}

static int parse_size(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (end == s)
		return -1;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end || v > (1ul << 30))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_sizes(struct perf_opts *o, char *list)
{
	char *tok, *save = NULL;

	o->nsizes = 0;
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == (int)(sizeof(o->sizes) / sizeof(o->sizes[0])) ||
		    parse_size(tok, &o->sizes[o->nsizes]))
			return -1;
		o->nsizes++;
	}
	return o->nsizes ? 0 : -1;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "softhca-perf: cannot pin to CPU %d: %s\n",
			cpu, strerror(errno));
}

static long iters_for(const struct perf_opts *o, uint32_t bytes)
{
	long n;

	if (o->iters)
		return o->iters;
	if (o->kind == KIND_LAT)
		return 1000;
	n = (256l << 20) / (bytes ? bytes : 1);
	return n < 100 ? 100 : n > 20000 ? 20000 : n;
}

static const char *title_of(const struct perf_opts *o)
{
	unsigned int i;

	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!strcmp(tests[i].name, o->test))
			return tests[i].title;
	return o->test;
}

static void header(const struct perf_opts *o)
{
	const char *line = "---------------------------------------------------------------------------------------";

	printf("%s\n                    %s Test (softhca-perf)\n", line,
	       title_of(o));
	printf(" Library         : %-18s Devices : %s -> %s\n", PERF_LIB,
	       o->dev, o->dev2 ? o->dev2 : o->dev);
	printf(" Connection type : %-18s Ends    : %s\n",
	       o->qpt == IBV_QPT_UD ? "UD" : "RC",
	       o->mode == MODE_LOCAL ? "one thread drives both QPs" :
	       "one process each (--fork)");
	if (o->kind == KIND_BW)
		printf(" TX depth        : %-18d QPs     : %d (+%d idle)\n",
		       o->depth, o->qps, o->idle_qps);
	printf(" Completions     : %-18s Inline  : up to %d bytes\n",
	       o->events ? "events" : "busy polling", o->inline_max);
	if (perf_syscalls_counted())
		printf(" System calls    : counted (raw_syscalls:sys_enter)\n");
	else
		printf(" System calls    : not counted: %s\n", perf_syscalls_why());
	printf("%s\n", line);
	if (o->kind == KIND_LAT)
		printf(" #bytes #iterations  t_min[us] t_median[us] t_avg[us]  99%%[us] 99.9%%[us] t_max[us]  syscalls/op cpu[us/op] kthreads[us/op] poller[us/op]\n");
	else
		printf(" #bytes #iterations  BW average[MiB/s] MsgRate[Mpps]  syscalls/op cpu[us/op] kthreads[us/op] poller[us/op]\n");
}

static void row(const struct perf_opts *o, const struct perf_result *r)
{
	char sys[32];

	if (r->sys_per_op < 0)
		snprintf(sys, sizeof(sys), "%s", o->json ? "null" : "n/a");
	else
		snprintf(sys, sizeof(sys), "%.3f", r->sys_per_op);
	if (o->json) {
		printf("{\"lib\":\"%s\",\"test\":\"%s\",\"dev\":\"%s\",\"dev2\":\"%s\","
		       "\"conn\":\"%s\",\"mode\":\"%s\",\"events\":%s,\"qps\":%d,"
		       "\"idle_qps\":%d,\"depth\":%d,\"inline\":%d,\"bytes\":%u,"
		       "\"iters\":%ld,",
		       PERF_LIB, o->test, o->dev, o->dev2 ? o->dev2 : o->dev,
		       o->qpt == IBV_QPT_UD ? "UD" : "RC",
		       o->mode == MODE_LOCAL ? "local" : "fork",
		       o->events ? "true" : "false", o->qps, o->idle_qps,
		       o->depth, o->inline_max, r->bytes, r->iters);
		if (o->kind == KIND_LAT)
			printf("\"t_min_us\":%.3f,\"t_median_us\":%.3f,\"t_avg_us\":%.3f,"
			       "\"t_p99_us\":%.3f,\"t_p999_us\":%.3f,\"t_max_us\":%.3f,",
			       r->t_min, r->t_med, r->t_avg, r->t_p99, r->t_p999,
			       r->t_max);
		else
			printf("\"bw_mib_s\":%.3f,\"msg_rate_mpps\":%.5f,",
			       r->mib_s, r->mpps);
		printf("\"syscalls_per_op\":%s,\"cpu_us_per_op\":%.3f,"
		       "\"kthread_us_per_op\":%.3f,\"poller_us_per_op\":%.3f}\n",
		       sys, r->cpu_us_per_op, r->kthread_us_per_op,
		       r->poller_us_per_op);
	} else if (o->kind == KIND_LAT) {
		printf(" %-6u %-11ld  %9.2f %12.2f %9.2f %8.2f %9.2f %9.2f  %11s %10.2f %15.2f %13.2f\n",
		       r->bytes, r->iters, r->t_min, r->t_med, r->t_avg,
		       r->t_p99, r->t_p999, r->t_max, sys, r->cpu_us_per_op,
		       r->kthread_us_per_op, r->poller_us_per_op);
	} else {
		printf(" %-6u %-11ld  %17.2f %13.5f  %11s %10.2f %15.2f %13.2f\n",
		       r->bytes, r->iters, r->mib_s, r->mpps, sys,
		       r->cpu_us_per_op, r->kthread_us_per_op,
		       r->poller_us_per_op);
	}
	fflush(stdout);
}

/* Every size, on this end (and in MODE_LOCAL on both). */
static int run_sizes(struct perf_run *r)
{
	const struct perf_opts *o = r->o;
	int i;

	for (i = 0; i < o->nsizes; i++) {
		struct perf_result res = { .bytes = o->sizes[i] };
		long n = iters_for(o, o->sizes[i]);
		int rc;

		if (o->kind == KIND_LAT)
			rc = perf_lat(r, o->sizes[i], n, &res);
		else
			rc = perf_bw(r, o->sizes[i], n, &res);
		if (rc) {
			fprintf(stderr, "softhca-perf: %s failed at %u bytes\n",
				o->test, o->sizes[i]);
			return -1;
		}
		if (!r->server)
			row(o, &res);
	}
	return 0;
}

/* The largest message must fit a receive (with a UD GRH) and the MTU. */
static int check_sizes(const struct perf_opts *o, const struct perf_end *a,
		       const struct perf_peer *p)
{
	uint32_t mtu = a->active_mtu < p->active_mtu ? a->active_mtu :
		       p->active_mtu;
	int i;

	for (i = 0; i < o->nsizes && o->qpt == IBV_QPT_UD; i++) {
		if (o->sizes[i] > mtu) {
			fprintf(stderr, "softhca-perf: UD messages are limited to the path MTU (%u bytes), not %u\n",
				mtu, o->sizes[i]);
			return -1;
		}
	}
	return 0;
}

static int run_local(struct perf_opts *o, size_t half)
{
	struct perf_end a, b;
	struct perf_run r = { .o = o, .a = &a, .b = &b };
	int rc = -1;

	memset(&b, 0, sizeof(b));
	perf_meter_init();
	pin(o->cpu);
	if (perf_end_open(&a, o, o->dev, 2 * half) ||
	    perf_end_open(&b, o, o->dev2 ? o->dev2 : o->dev, 2 * half) ||
	    perf_end_qps(&a, o) || perf_end_qps(&b, o) ||
	    perf_peer_of(&b, &r.pa) || perf_peer_of(&a, &r.pb) ||
	    check_sizes(o, &a, &r.pa) ||
	    perf_connect(&a, o, &r.pa) || perf_connect(&b, o, &r.pb) ||
	    perf_connect_idle(&a, &b, o))
		goto out;
	if (!o->json)
		header(o);
	rc = run_sizes(&r);
out:
	free(r.pa.qpn);
	free(r.pb.qpn);
	perf_end_close(&a);
	perf_end_close(&b);
	return rc;
}

/* One end in this process, its peer in the other, over @fd. */
static int run_end(struct perf_opts *o, size_t half, int fd, bool server)
{
	struct perf_end e;
	struct perf_run r = { .o = o, .a = &e, .fd = fd, .server = server };
	const char *dev = server && o->dev2 ? o->dev2 : o->dev;
	int rc = -1;

	perf_meter_init();
	pin(server ? o->cpu2 : o->cpu);
	if (perf_end_open(&e, o, dev, 2 * half) || perf_end_qps(&e, o) ||
	    perf_exchange(fd, &e, &r.pa) || check_sizes(o, &e, &r.pa) ||
	    perf_connect(&e, o, &r.pa) || perf_sync(fd))
		goto out;
	if (!server && !o->json)
		header(o);
	rc = run_sizes(&r);
	/* Neither end tears down while the other may still be working. */
	if (perf_sync(fd))
		rc = -1;
out:
	free(r.pa.qpn);
	perf_end_close(&e);
	return rc;
}

static int run_fork(struct perf_opts *o, size_t half)
{
	int sv[2], status, rc;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		perror("softhca-perf: socketpair");
		return -1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("softhca-perf: fork");
		return -1;
	}
	if (!pid) {
		close(sv[0]);
		/* Our own context: uverbs serves only the opener's process. */
		_exit(run_end(o, half, sv[1], true) ? 1 : 0);
	}
	close(sv[1]);
	rc = run_end(o, half, sv[0], false);
	close(sv[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		rc = -1;
	return rc;
}

static int check_opts(struct perf_opts *o)
{
	int i;

	if (!o->dev)
		return fprintf(stderr, "softhca-perf: -d DEV is required\n"), -1;
	if (!o->nsizes) {
		o->sizes[0] = o->kind == KIND_LAT ? 2 : 65536;
		o->nsizes = 1;
	}
	if (o->op == OP_ATOMIC) {
		o->sizes[0] = 8;
		o->nsizes = 1;
	}
	if (o->qpt == IBV_QPT_UD && o->op != OP_SEND)
		return fprintf(stderr, "softhca-perf: UD carries SEND only\n"), -1;
	for (i = 0; i < o->nsizes && o->op == OP_WRITE && o->kind == KIND_LAT; i++)
		if (!o->sizes[i])
			return fprintf(stderr, "softhca-perf: write_lat needs at least 1 byte (it polls the last one)\n"), -1;
	if (o->op == OP_WRITE && o->kind == KIND_LAT && o->events)
		return fprintf(stderr, "softhca-perf: write_lat polls memory; --events does not apply\n"), -1;
	if (o->kind == KIND_LAT && o->qps != 1)
		return fprintf(stderr, "softhca-perf: latency runs on one QP pair\n"), -1;
	if (o->qps < 1 || o->qps > 256 || o->depth < 1 || o->depth > 4096)
		return fprintf(stderr, "softhca-perf: --qps is 1..256, --depth 1..4096\n"), -1;
	if (o->idle_qps && o->mode != MODE_LOCAL)
		return fprintf(stderr, "softhca-perf: --idle-qps needs both ends in one process\n"), -1;
	if (o->kind == KIND_BW && o->qpt == IBV_QPT_UD && o->mode != MODE_LOCAL)
		return fprintf(stderr, "softhca-perf: UD bandwidth runs in one process (no flow control to end on)\n"), -1;
	if (o->kind == KIND_BW && o->op == OP_SEND && o->events &&
	    o->mode == MODE_LOCAL)
		return fprintf(stderr, "softhca-perf: send_bw --events needs --fork (one thread cannot sleep on both ends)\n"), -1;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "dev", 1, NULL, 'd' }, { "dev2", 1, NULL, 'D' },
		{ "connection", 1, NULL, 'c' }, { "size", 1, NULL, 's' },
		{ "all", 0, NULL, 'a' }, { "max-size", 1, NULL, 'M' },
		{ "iters", 1, NULL, 'n' }, { "depth", 1, NULL, 't' },
		{ "qps", 1, NULL, 'q' }, { "idle-qps", 1, NULL, 'Q' },
		{ "inline", 1, NULL, 'I' }, { "events", 0, NULL, 'e' },
		{ "cas", 0, NULL, 'C' }, { "fork", 0, NULL, 'F' },
		{ "cpu", 1, NULL, 'P' }, { "gid-index", 1, NULL, 'g' },
		{ "ib-port", 1, NULL, 'i' }, { "json", 0, NULL, 'j' },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct perf_opts o = {
		.qpt = IBV_QPT_RC, .mode = MODE_LOCAL, .ib_port = 1,
		.depth = 128, .qps = 1, .cpu = -1, .cpu2 = -1,
	};
	uint32_t max_size = 1 << 20, max = 0;
	bool all = false;
	unsigned int i;
	size_t half;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	while ((c = getopt_long(argc, argv, "d:D:c:s:an:t:q:I:eg:i:h", lopts,
				NULL)) != -1) {
		switch (c) {
		case 'd': o.dev = optarg; break;
		case 'D': o.dev2 = optarg; break;
		case 'c':
			if (!strcasecmp(optarg, "UD"))
				o.qpt = IBV_QPT_UD;
			else if (strcasecmp(optarg, "RC"))
				goto bad;
			break;
		case 's': if (parse_sizes(&o, optarg)) goto bad; break;
		case 'a': all = true; break;
		case 'M': if (parse_size(optarg, &max_size)) goto bad; break;
		case 'n': o.iters = atol(optarg); if (o.iters < 1) goto bad; break;
		case 't': o.depth = atoi(optarg); break;
		case 'q': o.qps = atoi(optarg); break;
		case 'Q': o.idle_qps = atoi(optarg); if (o.idle_qps < 0) goto bad; break;
		case 'I': o.inline_max = atoi(optarg); if (o.inline_max < 0) goto bad; break;
		case 'e': o.events = true; break;
		case 'C': o.cas = true; break;
		case 'F': o.mode = MODE_FORK; break;
		case 'P':
			if (sscanf(optarg, "%d,%d", &o.cpu, &o.cpu2) < 1)
				goto bad;
			break;
		case 'g': o.gid_index = atoi(optarg); break;
		case 'i': o.ib_port = atoi(optarg); break;
		case 'j': o.json = true; break;
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (optind != argc - 1)
		goto bad;
	o.test = argv[optind];
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (!strcmp(tests[i].name, o.test)) {
			o.op = tests[i].op;
			o.kind = tests[i].kind;
			break;
		}
	}
	if (i == sizeof(tests) / sizeof(tests[0]))
		goto bad;
	if (all) {
		o.nsizes = 0;
		for (max = 2; max <= max_size && o.nsizes < 32; max <<= 1)
			o.sizes[o.nsizes++] = max;
	}
	if (check_opts(&o))
		return 2;
	for (max = 0, i = 0; i < (unsigned int)o.nsizes; i++)
		if (o.sizes[i] > max)
			max = o.sizes[i];
	/* Each half holds the largest message, a UD GRH, and the atomic word. */
	half = ((size_t)max + PERF_GRH + 4095) & ~(size_t)4095;
	if (o.mode == MODE_LOCAL)
		return run_local(&o, half) ? 1 : 0;
	return run_fork(&o, half) ? 1 : 0;
bad:
	usage(stderr);
	return 2;
}
