// SPDX-License-Identifier: GPL-2.0-only
/*
 * Systematic fault injection into every verbs command that allocates in
 * the kernel, and into "rdma link add" (failnth.sh runs it; TAP).
 *
 * For each command: for n = 1, 2, ... write n to /proc/thread-self/
 * fail-nth (the n-th fault-injectable allocation of this thread fails:
 * failslab and fail_page_alloc, with ignore-gfp-wait off so that
 * sleeping allocations count), make the call, read fail-nth back (0: the
 * fault fired).  A call the fault hit must fail with a clean errno
 * (ENOMEM; ENOBUFS from netlink) and leave nothing behind: the device's
 * object counters (RDMA netlink, what "rdma resource show" prints), this
 * process's file descriptors and its mappings of the uverbs device are
 * as before the call, and what the call was to change is unchanged (a
 * QP's state, a CQ's completions, an XRC domain's use count).  A call
 * the fault hit that still succeeded (the allocation had a fallback, or
 * its failure is ignored) is undone and counted as absorbed.  The sweep
 * ends when a call succeeds without the fault firing: n - 1 injection
 * sites were covered.  The objects the sweeps finally made must then
 * work: a SEND on RC (into the swept SRQ, with a completion event on the
 * swept channel), UD (through the swept AH) and XRC (through the swept
 * XRC QPs and SRQ); the device the link-add sweep made carries an RC
 * SEND and is deleted again.  failnth.sh checks kmemleak ("failnth
 * kmemleak", kmemleak_mode()).
 *
 * Known kernel bugs: Linux 6.1's ib_core has two error paths that leak
 * when one of its own allocations fails (known_bugs[], the one list,
 * with the evidence each needs).  A sweep's misbehaviour, or a kmemleak
 * report, is excused only when the stack of that attempt's injected
 * fault, or the leaked object's allocation backtrace, shows it is one
 * of them; it is then a "known 6.1 ib_core bug" NOTE; anything else
 * fails.  For that, the attempts of the sweeps that can hit one print
 * their fault's stack (fault-injection verbose 2), read back at once
 * from /dev/kmsg; the other attempts print nothing.
 *
 * Time: "rdma link add" has about 1380 sites on the debug kernel, 730
 * of them inside ib_uverbs_add_one(), which never calls the driver;
 * there, one site in FAILNTH_STRIDE (8) is tried, each skip backed by
 * evidence that both ends were inside it (sweep(), TEST(rdma_link_add)),
 * and every other site, the driver's included, is tried.  On the debug
 * kernel under TCG the sweeps took 315 s with every site tried, 162 s
 * sampled (1322 of 1826 sites tried; 225 s for 1345 of 1884 after the
 * RoCEv2 wire came, with two other guests on the two cores).
 *
 * Environment: SOFTHCA_DEV (a softhca device whose GID 0 is usable),
 * FAILNTH_NETDEV (a free Ethernet netdev for the link-add sweep; that
 * sweep is skipped without it), FAILNTH_CAP (highest n; default 200, and
 * 2000 for link add, which makes a device with all of ib_core's
 * clients), FAILNTH_STRIDE (1: no sampling), FAILNTH_KNOWN (a file for
 * what failnth.sh's kmemleak check needs).  For chasing a failure:
 * FAILNTH_TRACE (a line per attempt), FAILNTH_STACKS=OP:N,... or OP:*
 * or * (those attempts' faults print their stack to the kernel log),
 * FAILNTH_SITES=FILE (each attempt's outcome and its fault's stack, one
 * line each; the stacks asked for), FAILNTH_VERBOSE (fault-injection
 * verbosity of the other attempts, default 0) and tap.h's TAP_ONLY.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include "tap.h"
#include "util.h"

#define LINK_NAME "shfail0"
#define MSG_LEN 1000
#define GRH_LEN 40

/* ---------------------------------------------------------------------
 * fail-nth
 */

static int nth_fd = -1;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void arm(unsigned int n)
{
	char s[16];
	int len = snprintf(s, sizeof(s), "%u", n);

	if (pwrite(nth_fd, s, (size_t)len, 0) != len) {
		printf("Bail out! cannot arm fail-nth: %s\n", strerror(errno));
		exit(1);
	}
}

/* Disarm; whether the armed fault fired. */
static int disarm(void)
{
	char s[16] = "";
	ssize_t r = pread(nth_fd, s, sizeof(s) - 1, 0);
	int left = atoi(s);

	if (r <= 0 || pwrite(nth_fd, "0", 1, 0) != 1) {
		printf("Bail out! cannot read fail-nth: %s\n", strerror(errno));
		exit(1);
	}
	return left == 0;
}

/* ---------------------------------------------------------------------
 * RDMA netlink, by hand: device lookup, object counters, link add/delete
 */

static int nl_fd = -1;
static uint32_t nl_seq;
static int nl_recv_err;	/* nl_answer()'s error came from recv() */

struct nlbuf {
	struct nlmsghdr h;
	char data[1024];
};

static void nl_init(struct nlbuf *b, int cmd, int flags)
{
	memset(b, 0, sizeof(*b));
	b->h.nlmsg_len = NLMSG_HDRLEN;
	b->h.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	b->h.nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
	b->h.nlmsg_seq = ++nl_seq;
}

static void nl_put(struct nlbuf *b, int type, const void *val, size_t len)
{
	struct nlattr *a = (void *)((char *)b + NLMSG_ALIGN(b->h.nlmsg_len));

	a->nla_type = (uint16_t)type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((char *)a + NLA_HDRLEN, val, len);
	b->h.nlmsg_len = NLMSG_ALIGN(b->h.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void nl_put_str(struct nlbuf *b, int type, const char *s)
{
	nl_put(b, type, s, strlen(s) + 1);
}

static int nl_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 10 };

	nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (nl_fd < 0 || bind(nl_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(nl_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -1;
	return 0;
}

static int nl_send(struct nlbuf *b)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (sendto(nl_fd, b, b->h.nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0)
		return errno;
	return 0;
}

/* Attributes of one message (top level or a nest), by type. */
static void nl_parse(const void *p, int len, const struct nlattr **tb, int max)
{
	const struct nlattr *a = p;

	memset(tb, 0, sizeof(*tb) * (size_t)max);
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= len) {
		int type = a->nla_type & NLA_TYPE_MASK;

		if (type < max)
			tb[type] = a;
		len -= NLA_ALIGN(a->nla_len);
		a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
}

#define NLA_DATA(a) ((const char *)(a) + NLA_HDRLEN)

/*
 * Read the answers to request @seq until its ACK, error or DONE, handing
 * each data message to @fn.  Returns 0 or a positive errno (the request's
 * error, or what recv() said).
 */
static int nl_answer(uint32_t seq, void (*fn)(const struct nlmsghdr *, void *),
		     void *arg)
{
	static char buf[32768];

	nl_recv_err = 0;
	for (;;) {
		ssize_t n = recv(nl_fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (void *)buf;
		int len = (int)n;

		if (n < 0) {
			nl_recv_err = 1;
			return errno;
		}
		for (; NLMSG_OK(h, (unsigned int)len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -((struct nlmsgerr *)NLMSG_DATA(h))->error;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (fn)
				fn(h, arg);
			if (!(h->nlmsg_flags & NLM_F_MULTI))
				return 0;
		}
	}
}

struct dev_find {
	const char *name;
	uint32_t index;
	int found;
};

static void dev_find_one(const struct nlmsghdr *h, void *arg)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
	struct dev_find *f = arg;

	nl_parse(NLMSG_DATA(h), (int)(h->nlmsg_len - NLMSG_HDRLEN), tb,
		 RDMA_NLDEV_ATTR_MAX);
	if (tb[RDMA_NLDEV_ATTR_DEV_NAME] && tb[RDMA_NLDEV_ATTR_DEV_INDEX] &&
	    !strcmp(NLA_DATA(tb[RDMA_NLDEV_ATTR_DEV_NAME]), f->name)) {
		memcpy(&f->index, NLA_DATA(tb[RDMA_NLDEV_ATTR_DEV_INDEX]), 4);
		f->found = 1;
	}
}

/* The index of RDMA device @name: 0 and *index, or ENODEV, or an errno. */
static int dev_index(const char *name, uint32_t *index)
{
	struct dev_find f = { .name = name };
	struct nlbuf b;
	int err;

	nl_init(&b, RDMA_NLDEV_CMD_GET, NLM_F_DUMP);
	err = nl_send(&b);
	if (!err)
		err = nl_answer(b.h.nlmsg_seq, dev_find_one, &f);
	if (err)
		return err;
	if (!f.found)
		return ENODEV;
	*index = f.index;
	return 0;
}

/* The counters "rdma resource show" prints for a device. */
static const char *const res_names[] = { "pd", "cq", "qp", "mr", "srq", "ctx" };
#define NRES (sizeof(res_names) / sizeof(res_names[0]))

static void res_one(const struct nlmsghdr *h, void *arg)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX], *e, *sum;
	long *res = arg;
	int left;

	nl_parse(NLMSG_DATA(h), (int)(h->nlmsg_len - NLMSG_HDRLEN), tb,
		 RDMA_NLDEV_ATTR_MAX);
	sum = tb[RDMA_NLDEV_ATTR_RES_SUMMARY];
	if (!sum)
		return;
	left = sum->nla_len - NLA_HDRLEN;
	for (e = (const void *)NLA_DATA(sum);
	     left >= NLA_HDRLEN && e->nla_len >= NLA_HDRLEN;
	     left -= NLA_ALIGN(e->nla_len),
	     e = (const void *)((const char *)e + NLA_ALIGN(e->nla_len))) {
		const struct nlattr *et[RDMA_NLDEV_ATTR_MAX];
		uint64_t v;
		size_t i;

		nl_parse(NLA_DATA(e), e->nla_len - NLA_HDRLEN, et,
			 RDMA_NLDEV_ATTR_MAX);
		if (!et[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME] ||
		    !et[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR])
			continue;
		memcpy(&v, NLA_DATA(et[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR]),
		       8);
		for (i = 0; i < NRES; i++)
			if (!strcmp(NLA_DATA(et[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME]),
				    res_names[i]))
				res[i] = (long)v;
	}
}

static int res_get(uint32_t index, long *res)
{
	struct nlbuf b;
	size_t i;
	int err;

	for (i = 0; i < NRES; i++)
		res[i] = -1;
	nl_init(&b, RDMA_NLDEV_CMD_RES_GET, 0);
	nl_put(&b, RDMA_NLDEV_ATTR_DEV_INDEX, &index, 4);
	err = nl_send(&b);
	return err ? err : nl_answer(b.h.nlmsg_seq, res_one, res);
}

/* The NEWLINK request of "rdma link add", built before the fault is armed. */
static void newlink_msg(struct nlbuf *b, const char *name, const char *ndev)
{
	nl_init(b, RDMA_NLDEV_CMD_NEWLINK, NLM_F_ACK);
	nl_put_str(b, RDMA_NLDEV_ATTR_DEV_NAME, name);
	nl_put_str(b, RDMA_NLDEV_ATTR_LINK_TYPE, "softhca");
	nl_put_str(b, RDMA_NLDEV_ATTR_NDEV_NAME, ndev);
}

static int dellink(const char *name)
{
	uint32_t index;
	struct nlbuf b;
	int err = dev_index(name, &index);

	if (err)
		return err;
	nl_init(&b, RDMA_NLDEV_CMD_DELLINK, NLM_F_ACK);
	nl_put(&b, RDMA_NLDEV_ATTR_DEV_INDEX, &index, 4);
	err = nl_send(&b);
	return err ? err : nl_answer(b.h.nlmsg_seq, NULL, NULL);
}

/* ---------------------------------------------------------------------
 * What a failed call may not leave behind
 */

struct snap {
	long res[NRES];
	int fds;
	int maps;	/* mappings of /dev/infiniband/... */
};

static uint32_t dev_idx;	/* SOFTHCA_DEV's index */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own */
}

static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "/dev/infiniband/") != NULL;
	fclose(f);
	return n;
}

static int take_snap(struct snap *s)
{
	s->fds = count_fds();
	s->maps = count_maps();
	return res_get(dev_idx, s->res) || s->fds < 0 || s->maps < 0 ? -1 : 0;
}

/* Differences from @a, printed; 0 when none. */
static int snap_diff(const struct snap *a, const char *what, int n)
{
	struct snap b;
	int bad = 0;
	size_t i;

	if (take_snap(&b)) {
		printf("# %s n=%d: cannot read the counters\n", what, n);
		return -1;
	}
	for (i = 0; i < NRES; i++)
		if (a->res[i] != b.res[i]) {
			printf("# %s n=%d: %s count %ld -> %ld\n", what, n,
			       res_names[i], a->res[i], b.res[i]);
			bad = 1;
		}
	if (a->fds != b.fds) {
		printf("# %s n=%d: open files %d -> %d\n", what, n, a->fds,
		       b.fds);
		bad = 1;
	}
	if (a->maps != b.maps) {
		printf("# %s n=%d: uverbs mappings %d -> %d\n", what, n,
		       a->maps, b.maps);
		bad = 1;
	}
	return bad ? -1 : 0;
}

/* ---------------------------------------------------------------------
 * The sweep
 */

struct op {
	const char *name;
	/* Unarmed, before each attempt: what the call needs.  0 or errno. */
	int (*prep)(void);
	/* The armed call: 0 or the errno it failed with. */
	int (*call)(void);
	/*
	 * After an injected failure: check what the call was to change is
	 * as it was, and undo prep.  0 or -1 (printed).
	 */
	int (*failed)(void);
	/*
	 * After a success: check the result; undo it unless @keep (the
	 * sweep's final success, whose object later tests use).  0 or -1.
	 */
	int (*done)(int keep);
	/* errnos a failure may end in besides ENOMEM (0-terminated). */
	int also[3];
	/* The highest n tried (0: the default, FAILNTH_CAP or 200). */
	int cap;
	/* For simple_call/simple_done: the object the command makes. */
	const struct simple *obj;
	/*
	 * Sampling (see sweep()): whether the attempt just checked had its
	 * fault inside @region, a function that never calls the driver and
	 * runs once per call; NULL: every site is tried.
	 */
	int (*in_region)(void);
	const char *region;
};

/*
 * A command that makes one object and nothing else: make it, check it
 * works (optional), drop it, or keep it for the later tests.
 */
struct simple {
	void *(*make)(void);
	int (*check)(void *obj);
	int (*drop)(void *obj);
	void (*keep)(void *obj);
};

static const struct op *cur;	/* the op being swept */
static int in_attempt;		/* checking an attempt's outcome */
static int xrcd_leaks;		/* domains that outlived their last close */

#define MAX_ERRNO 8

struct result {
	const char *name;
	int sites, failed, absorbed, known, ok, skipped;
	int err[MAX_ERRNO], err_n[MAX_ERRNO];
	double secs;
};

static struct result results[40];
static int nresults;
static int cap = 200, cap_env;
static int stride = 8;	/* FAILNTH_STRIDE: sampling (1: none) */
static int trace;	/* FAILNTH_TRACE: a line per attempt */
static const char *stacks;	/* FAILNTH_STACKS: "op:n,...", "op:*", "*" */
static FILE *sites_log;		/* FAILNTH_SITES: each attempt's stack */

/* ---------------------------------------------------------------------
 * The injected fault's stack, from the kernel log
 *
 * With verbose 2 the injectors print the stack of the allocation they
 * fail (dump_stack(), KERN_DEFAULT, not on the console at loglevel=4),
 * unless the allocation asked for __GFP_NOWARN (kmemleak's metadata,
 * XArray's first GFP_NOWAIT try, ...): those faults leave no stack.
 * Stacks are turned on only for the attempts that need one (those of
 * sweep_needs_stacks(), and FAILNTH_STACKS's), read back from /dev/kmsg
 * at once and kept in fault_stack: the rest of the kernel log stays
 * readable.
 */

#define MAX_FRAMES 64
#define FRAME_LEN 80

struct fstack {
	int n;			/* frames, innermost first; 0: none */
	int done;		/* up to "</TASK>" */
	char inj[24];		/* failslab, fail_page_alloc */
	char f[MAX_FRAMES][FRAME_LEN];	/* "func" or "func [module]" */
};

static int kmsg_fd = -1;
static struct fstack fault_stack;
static pid_t my_tid;
static int verbose_now = -1;
static int verbose_dflt;	/* FAILNTH_VERBOSE */

static void set_verbose(int v)
{
	static const char *const files[] = {
		"/sys/kernel/debug/failslab/verbose",
		"/sys/kernel/debug/fail_page_alloc/verbose",
	};
	size_t i;

	if (v == verbose_now)
		return;
	for (i = 0; i < 2; i++) {
		FILE *f = fopen(files[i], "we");

		if (f) {
			fprintf(f, "%d", v);
			fclose(f);
		}
	}
	verbose_now = v;
}

/* Forget what the kernel log holds now. */
static void kmsg_skip(void)
{
	memset(&fault_stack, 0, sizeof(fault_stack));
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);
}

/*
 * A frame as the kernel prints it, " name+0x1/0x2 [mod]" (dump_stack)
 * or "[<addr>] name+0x1/0x2 [mod]" (kmemleak), to "name [mod]"; an
 * address no symbol covers (a module unloaded since) stays "0x...".
 * Not a frame ("RIP: ...", "<TASK>", "? ..." unreliable): -1.
 */
static int frame_name(const char *t, char *out)
{
	const char *mod;
	size_t len;

	while (*t == ' ')
		t++;
	if (t[0] == '[' && t[1] == '<') {
		t = strstr(t, "] ");
		if (!t)
			return -1;
		t += 2;
	}
	if (!strncmp(t, "0x", 2)) {
		snprintf(out, FRAME_LEN, "%.*s", (int)strcspn(t, " \n"), t);
		return 0;
	}
	if (t[0] == '?' || t[0] == '<' || !t[0])
		return -1;
	len = strcspn(t, "+ ");
	if (t[len] != '+')
		return -1;
	/* foo.cold, foo.part.0, foo.constprop.0, foo.isra.0: foo */
	if (memchr(t, '.', len) && t[0] != '.')
		len = (size_t)((const char *)memchr(t, '.', len) - t);
	if (len >= FRAME_LEN - 24)
		len = FRAME_LEN - 24;
	memcpy(out, t, len);
	out[len] = 0;
	mod = strstr(t, " [");
	if (mod && strchr(mod, ']'))
		snprintf(out + len, FRAME_LEN - len, " %.*s",
			 (int)(strchr(mod, ']') - mod), mod + 1);
	return 0;
}

/*
 * Read the kernel log written since kmsg_skip(): the stack of this
 * thread's injected fault goes to fault_stack.
 */
static void kmsg_read_fault(void)
{
	static int on;	/* inside our fault's report */
	char rec[8192], *text, *nl;
	struct fstack *st = &fault_stack;
	ssize_t r;

	if (kmsg_fd < 0)
		return;
	for (;;) {
		r = read(kmsg_fd, rec, sizeof(rec) - 1);
		if (r < 0 && errno == EPIPE)
			continue;	/* overwritten before we read it */
		if (r <= 0)
			break;
		rec[r] = 0;
		text = strchr(rec, ';');
		if (!text)
			continue;
		text++;
		nl = strchr(text, '\n');
		if (nl)
			*nl = 0;
		if (!strncmp(text, "FAULT_INJECTION: forcing a failure.", 35)) {
			const char *name = strstr(text, "name ");

			memset(st, 0, sizeof(*st));
			if (name)
				sscanf(name + 5, "%23[^,]", st->inj);
			on = 1;
		} else if (on && !strncmp(text, "CPU: ", 5)) {
			const char *pid = strstr(text, "PID: ");

			if (!pid || atoi(pid + 5) != my_tid)
				on = 0, memset(st, 0, sizeof(*st));
		} else if (on && strstr(text, "</TASK>")) {
			st->done = 1;
			on = 0;
		} else if (on && st->n < MAX_FRAMES &&
			   !frame_name(text, st->f[st->n])) {
			st->n++;
		}
	}
}

/* A frame of softhca's, or one not resolved to a symbol (a module gone). */
static int driver_frame(const char *f)
{
	return strstr(f, "[softhca]") || !strncmp(f, "0x", 2);
}

/* The frame's function, without " [module]". */
static int frame_is(const char *f, const char *func)
{
	size_t len = strlen(func);

	return !strncmp(f, func, len) && (!f[len] || f[len] == ' ');
}

/*
 * Whether frames @f[0..@n) contain @spec: function names separated by
 * spaces, innermost first, consecutive; "name+" stands for one or more
 * consecutive frames of that function (recursion).  @anchored: the match
 * must begin at f[0].  Also: no driver frame inner to the match.
 */
static int frames_match(char f[][FRAME_LEN], int n, const char *spec,
			int anchored)
{
	int start, i;

	for (start = 0; start < n && (!anchored || !start); start++) {
		const char *p = spec;
		char name[FRAME_LEN];
		int ok = 1;

		if (start && driver_frame(f[start - 1]))
			return 0;	/* the driver made this allocation */
		i = start;
		while (ok && *p) {
			int len = (int)strcspn(p, " "), plus;

			plus = p[len - 1] == '+';
			snprintf(name, sizeof(name), "%.*s", len - plus, p);
			p += len;
			while (*p == ' ')
				p++;
			if (i >= n || !frame_is(f[i], name)) {
				ok = 0;
				break;
			}
			i++;
			while (plus && i < n && frame_is(f[i], name))
				i++;
		}
		if (ok)
			return 1;
	}
	return 0;
}

/* FAILNTH_STACKS names this attempt. */
static int stacks_asked(const char *name, int n)
{
	char key[96];
	const char *p;
	size_t len;

	if (!stacks)
		return 0;
	if (!strcmp(stacks, "*"))
		return 1;
	for (int star = 0; star < 2; star++) {
		len = star ? (size_t)snprintf(key, sizeof(key), "%s:*", name) :
			     (size_t)snprintf(key, sizeof(key), "%s:%d", name, n);
		for (p = strstr(stacks, key); p; p = strstr(p + 1, key))
			if ((p == stacks || p[-1] == ',') &&
			    (p[len] == ',' || !p[len]))
				return 1;
	}
	return 0;
}

static void log_site(const char *name, int n, int fired, int err)
{
	int i;

	if (!sites_log)
		return;
	fprintf(sites_log, "%s\t%d\t%d\t%s\t%s\t", name, n, fired,
		err ? strerrorname_np(err) : "ok",
		fault_stack.n ? fault_stack.inj : "-");
	for (i = 0; i < fault_stack.n; i++)
		fprintf(sites_log, "%s%s", i ? " < " : "", fault_stack.f[i]);
	fputc('\n', sites_log);
	fflush(sites_log);
}

/* ---------------------------------------------------------------------
 * Known bugs of Linux 6.1 that the sweeps run into: the one place that
 * lists them.
 *
 * These and nothing else are not counted against softhca, and each only
 * on evidence: a sweep's misbehaviour (@symptom) is excused when the
 * stack of that attempt's injected fault (read from the kernel log,
 * turned on for every attempt of @sweep) matches one of @fault with no
 * softhca frame inside it, i.e. the allocation that failed was ib_core's
 * own, made after the driver had done its part; a kmemleak report is
 * excused when its allocation backtrace begins with one of @leak (so no
 * softhca frame lies between the allocation and the ib_core function
 * that leaks it; softhca's frames further out, like softhca_newlink()
 * calling ib_register_device(), are how every device registers), at most
 * @leaks_per_hit objects per @leak for each attempt excused above (when
 * @leaks_per_hit is 0, the bug has no symptom a sweep sees, and its
 * reports are excused only when @sweep ran).  Spec syntax: frames_match().
 */
enum symptom {
	SYM_NONE,
	SYM_XRCD_LEAK,	/* an XRC domain outlives its last close */
};

struct known_bug {
	const char *name;
	const char *where;	/* in linux-source-6.1 */
	const char *sweep;
	enum symptom symptom;
	const char *fault[3];
	const char *leak[3];
	int leaks_per_hit;
	int hits;		/* attempts excused in this run */
};

static struct known_bug known_bugs[] = {
	/*
	 * ib_create_qp_user() for an XRC_TGT QP: once the driver's
	 * create_qp has succeeded, create_xrc_qp_user() takes a use count
	 * on the XRC domain (atomic_inc(&xrcd->usecnt)), then allocates
	 * the creator's handle (__ib_open_qp(): kzalloc) and stores the
	 * QP in the domain (xa_store()).  When either fails,
	 * ib_create_qp_user() destroys the real QP with ib_destroy_qp(),
	 * which never drops that use count: only __ib_destroy_shared_qp()
	 * does.  The call fails with ENOMEM as it should, but the domain
	 * then outlives its last ibv_close_xrcd(): ib_uverbs keeps it and
	 * its inode-table entry (xrcd_table_insert()) for good, kmemleak
	 * reports both once the device is gone, and the driver is never
	 * asked to deallocate it (softhca_dealloc_driver() says so).  The
	 * xa_store() failure takes two failed allocations (XArray retries
	 * a failed GFP_NOWAIT node allocation with GFP_KERNEL), so a
	 * single injected fault reaches only __ib_open_qp()'s.
	 */
	{
		.name = "ib_create_qp_user() leaks an XRC domain use count when it fails after the driver made the XRC_TGT QP",
		.where = "drivers/infiniband/core/verbs.c: create_xrc_qp_user(), ib_create_qp_user()",
		.sweep = "ibv_create_qp XRC_RECV",
		.symptom = SYM_XRCD_LEAK,
		.fault = { "__ib_open_qp ib_create_qp_user",
			   "xa_store ib_create_qp_user" },
		.leak = { "__kmalloc ib_alloc_xrcd_user ib_uverbs_open_xrcd",
			  "kmalloc_trace ib_uverbs_open_xrcd" },
		.leaks_per_hit = 1,
	},
	/*
	 * uverbs_alloc_api(), ib_uverbs's table of methods for a new
	 * device: when building it fails, uverbs_destroy_api() frees the
	 * radix tree by deleting its entries (uapi_remove_range()).  A
	 * radix_tree_insert() that failed halfway (lib/radix-tree.c,
	 * __radix_tree_create(): a node allocation failed after the nodes
	 * above it were linked in) leaves empty nodes that no entry leads
	 * to; deleting the entries frees neither them nor their ancestors,
	 * whose counts they keep above zero.  ib_core ignores the failed
	 * client add (the device registers without its uverbs node), and
	 * the nodes leak.  No sweep check sees it: kmemleak does.
	 */
	{
		.name = "uverbs_alloc_api() error path leaks the radix tree nodes of a half-done insert",
		.where = "drivers/infiniband/core/uverbs_uapi.c: uverbs_alloc_api(), uverbs_destroy_api()",
		.sweep = "rdma link add",
		.fault = { "radix_tree_node_alloc radix_tree_insert uapi_add_get_elm uapi_merge_def+ uverbs_alloc_api" },
		.leak = { "radix_tree_node_alloc radix_tree_insert uapi_add_get_elm uapi_merge_def+ uverbs_alloc_api ib_uverbs_add_one" },
	},
};

#define NKNOWN ((int)(sizeof(known_bugs) / sizeof(known_bugs[0])))

/* The known bug whose @sym this fault stack shows, or NULL. */
static struct known_bug *known_fault(enum symptom sym, struct fstack *st)
{
	int i, k;

	if (!st->done)
		return NULL;
	for (i = 0; i < NKNOWN; i++)
		for (k = 0; k < 3 && known_bugs[i].fault[k]; k++)
			if (known_bugs[i].symptom == sym &&
			    frames_match(st->f, st->n, known_bugs[i].fault[k], 0))
				return &known_bugs[i];
	return NULL;
}

/* Whether attempts of sweep @name need their fault's stack. */
static int sweep_needs_stacks(const char *name)
{
	int i;

	for (i = 0; i < NKNOWN; i++)
		if (known_bugs[i].symptom != SYM_NONE &&
		    !strcmp(known_bugs[i].sweep, name))
			return 1;
	return 0;
}

/* The stack, short: from the allocator out, @max frames. */
static const char *stack_str(const struct fstack *st, int max)
{
	static char buf[1024];
	size_t len = 0;
	int i, shown = 0;

	buf[0] = 0;
	for (i = 0; i < st->n && shown < max; i++) {
		if (!strncmp(st->f[i], "dump_stack", 10) ||
		    !strncmp(st->f[i], "should_fail", 11) ||
		    !strncmp(st->f[i], "__should_fail", 13) ||
		    !strncmp(st->f[i], "__kmem_cache_alloc", 18))
			continue;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
					shown ? " < " : "", st->f[i]);
		if (len >= sizeof(buf))
			break;
		shown++;
	}
	return buf;
}

static void note_errno(struct result *r, int e)
{
	int i;

	for (i = 0; i < MAX_ERRNO; i++) {
		if (r->err[i] == e || !r->err[i]) {
			r->err[i] = e;
			r->err_n[i]++;
			return;
		}
	}
}

static int errno_ok(const struct op *op, int e)
{
	int i;

	if (e == ENOMEM)
		return 1;
	for (i = 0; i < 3 && op->also[i]; i++)
		if (op->also[i] == e)
			return 1;
	return 0;
}

static void report(const struct result *r)
{
	char errs[160] = "";
	size_t len = 0;
	int i;

	for (i = 0; i < MAX_ERRNO && r->err[i]; i++)
		len += (size_t)snprintf(errs + len, sizeof(errs) - len,
					"%s%s x%d", i ? ", " : "",
					strerrorname_np(r->err[i]), r->err_n[i]);
	printf("NOTE: %s: %d sites", r->name, r->sites);
	if (r->skipped)
		printf(" (%d tried, %d sampled out inside %s, stride %d)",
		       r->sites - r->skipped, r->skipped, cur->region, stride);
	printf(", %d failed (%s), %d absorbed", r->failed, len ? errs : "-",
	       r->absorbed);
	if (r->known)
		printf(", %d excused as a known kernel bug", r->known);
	printf(", %.1f s\n", r->secs);
}

/*
 * One attempt at site @n: arm, call, check.  Returns 0 when the fault
 * fired (*@bad set on misbehaviour), 1 when it did not and the call
 * succeeded (the result is left for the caller: done(1) or done(0)),
 * -1 when the sweep cannot go on.
 */
static int attempt(const struct op *op, struct result *r, int n, int *bad)
{
	int err, fired, leaks;
	struct snap before;

	if (take_snap(&before)) {
		printf("# %s: cannot read the counters\n", op->name);
		return -1;
	}
	err = op->prep ? op->prep() : 0;
	if (err) {
		printf("# %s n=%d: preparation failed: %s\n", op->name, n,
		       strerror(err));
		return -1;
	}
	set_verbose(stacks_asked(op->name, n) || sweep_needs_stacks(op->name) ?
		    2 : verbose_dflt);
	kmsg_skip();
	arm((unsigned int)n);
	err = op->call();
	fired = disarm();
	kmsg_read_fault();
	log_site(op->name, n, fired, err);
	if (trace)
		printf("# trace: %s n=%d fired %d: %s\n", op->name, n, fired,
		       err ? strerrorname_np(err) : "ok");
	if (!fired) {
		if (!err)
			return 1;
		printf("# %s n=%d: failed without an injected fault: %s\n",
		       op->name, n, strerror(err));
		return -1;
	}
	leaks = xrcd_leaks;
	in_attempt = 1;
	if (err) {
		r->failed++;
		note_errno(r, err);
		if (!errno_ok(op, err)) {
			printf("# %s n=%d: failed with %s (%s)\n", op->name, n,
			       strerrorname_np(err), strerror(err));
			*bad = 1;
		}
		if (op->failed && op->failed())
			*bad = 1, printf("# %s n=%d: state after the failure is wrong\n",
					 op->name, n);
	} else {
		r->absorbed++;
		if (op->done(0))
			*bad = 1, printf("# %s n=%d: the result of an absorbed fault is wrong\n",
					 op->name, n);
	}
	in_attempt = 0;
	if (xrcd_leaks != leaks) {
		struct known_bug *kb = known_fault(SYM_XRCD_LEAK, &fault_stack);

		if (kb) {
			kb->hits++;
			r->known++;
			printf("NOTE: known 6.1 ib_core bug: %s n=%d: %s (%s); the injected fault: %s\n",
			       op->name, n, kb->name, kb->where,
			       stack_str(&fault_stack, 5));
		} else {
			printf("# %s n=%d: the file's XRC domain outlived its last close: a use count leaked; the injected fault: %s\n",
			       op->name, n, fault_stack.done ?
			       stack_str(&fault_stack, 8) :
			       "no stack (__GFP_NOWARN, or not asked for)");
			*bad = 1;
		}
	}
	if (snap_diff(&before, op->name, n))
		*bad = 1;
	return 0;
}

/*
 * Sweep @op: fail its 1st, 2nd, ... allocation until it succeeds
 * without the fault.  Returns 0 when every step behaved.
 *
 * With @op->in_region, sites proven to lie inside @op->region are
 * sampled: after an attempt whose fault was inside it (at a), the next
 * is a + stride; when that one (or one of the next few tried one by
 * one) is inside too, at b, every site between a and b was inside the
 * same run of the region (it runs once per call), none was the
 * driver's, and those not tried are counted as sampled out.  When no
 * site inside is found soon after the landing, or the call ran out of
 * allocations, the skipped sites are all tried after all.
 */
static int sweep(const struct op *op)
{
	enum { WALK = 4 };
	struct result *r = &results[nresults];
	int n = 1, bad = 0, last = cap, rc;
	/* Sampling: the last site inside, where the jump from it landed,
	 * the skipped sites being tried (bt: up to bt_end, then resume). */
	int anchor = 0, land = 0, bt = 0, bt_end = 0, resume = 0;
	double t0 = now();

	if (nresults == (int)(sizeof(results) / sizeof(results[0]))) {
		printf("# more sweeps than results[] holds\n");
		return -1;
	}
	nresults++;
	cur = op;
	if (op->cap && !cap_env)
		last = op->cap;
	r->name = op->name;
	while (n <= last) {
		rc = attempt(op, r, n, &bad);
		if (rc < 0)
			return -1;
		if (bad)
			r->ok = 0;	/* go on: later steps tell more */
		if (rc == 1 && land) {
			/* The call ran out of allocations: try the skipped. */
			if (op->done(0))
				bad = 1;
			bt = 1, resume = n, bt_end = land - 1, n = anchor + 1;
			land = 0;
			continue;
		}
		if (rc == 1) {
			r->sites = n - 1;
			if (op->done(1))
				bad = 1;
			r->ok = !bad;
			r->secs = now() - t0;
			report(r);
			return bad ? -1 : 0;
		}
		if (bt) {
			if (n < bt_end) {
				n++;
			} else {
				bt = 0;
				n = resume;
			}
			continue;
		}
		if (op->in_region && stride > 1 && op->in_region()) {
			if (land)
				r->skipped += land - anchor - 1;
			anchor = n;
			land = n = n + stride;
			continue;
		}
		if (land && n - land + 1 >= WALK) {
			/* Not inside again soon: try the skipped sites. */
			bt = 1, resume = n + 1, bt_end = land - 1, n = anchor + 1;
			land = 0;
			continue;
		}
		n++;
	}
	printf("# %s: no success within %d injected faults\n", op->name, last);
	return -1;
}

/* ---------------------------------------------------------------------
 * The objects: what a sweep finally created, used by the later ones
 */

static struct ibv_device **dev_list;
static struct ibv_device *dev;
static struct ibv_context *ctx;
static struct ibv_comp_channel *ch;
static struct ibv_pd *pd;
static struct ibv_mr *mr, *mr2;
static struct ibv_cq *cq;
static struct ibv_qp *qrc, *qud, *xini, *xtgt;
static struct ibv_srq *srq, *xsrq;
static struct ibv_xrcd *xrcd;
static struct ibv_ah *ah;
static union ibv_gid gid;
static uint8_t *sbuf, *rbuf, *rbuf2;	/* 64 KiB each, touched */
#define BUFSZ (64 << 10)

/* Scratch of the current attempt. */
static struct ibv_mr *t_mr;
static struct ibv_cq *t_cq;
static struct ibv_qp *t_qp;
static struct ibv_srq *t_srq;
static struct ibv_xrcd *t_xrcd;

static int e(void *p)
{
	return p ? 0 : (errno ? errno : EIO);
}

/* Destroyers that report what went wrong. */
static int destroy_qp(struct ibv_qp **q)
{
	int err = *q ? ibv_destroy_qp(*q) : 0;

	if (err)
		printf("# destroy_qp: %s\n", strerror(err));
	*q = NULL;
	return err ? -1 : 0;
}

static int destroy_cq(struct ibv_cq **c)
{
	int err = *c ? ibv_destroy_cq(*c) : 0;

	if (err)
		printf("# destroy_cq: %s\n", strerror(err));
	*c = NULL;
	return err ? -1 : 0;
}

/* Wait up to 5 s for one completion (a clock, not a count of sleeps:
 * under TCG a short sleep takes far longer than asked). */
static int wait_wc(struct ibv_cq *c, struct ibv_wc *wc)
{
	double end = now() + 5;
	int n;

	do {
		n = ibv_poll_cq(c, 1, wc);
		if (n)
			return n;
		usleep(100);
	} while (now() < end);
	return ibv_poll_cq(c, 1, wc);
}

/* ---------------------------------------------------------------------
 * QP transitions
 */

static int qp_modify_to(struct ibv_qp *q, enum ibv_qp_state s, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = s };
	enum ibv_qp_type t = q->qp_type;
	int mask = IBV_QP_STATE;

	switch (s) {
	case IBV_QPS_INIT:
		a.port_num = 1;
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (t == IBV_QPT_UD) {
			a.qkey = 0x1234;
			mask |= IBV_QP_QKEY;
		} else {
			a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ;
			mask |= IBV_QP_ACCESS_FLAGS;
		}
		break;
	case IBV_QPS_RTR:
		if (t == IBV_QPT_UD)
			break;
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = dqpn;
		a.rq_psn = 0x111;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = gid;
		a.ah_attr.grh.hop_limit = 64;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		if (t != IBV_QPT_UC) {
			a.max_dest_rd_atomic = 4;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
		break;
	case IBV_QPS_RTS:
		a.sq_psn = 0x111;
		mask |= IBV_QP_SQ_PSN;
		if (t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND) {
			a.timeout = 14;
			a.retry_cnt = 7;
			a.rnr_retry = 7;
			a.max_rd_atomic = 4;
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		}
		break;
	default:
		break;
	}
	return ibv_modify_qp(q, &a, mask);
}

/* RESET -> INIT -> RTR (-> RTS unless @rtr_only), peer @dqpn. */
static int qp_up(struct ibv_qp *q, uint32_t dqpn, int rtr_only)
{
	int err = qp_modify_to(q, IBV_QPS_INIT, dqpn);

	if (!err)
		err = qp_modify_to(q, IBV_QPS_RTR, dqpn);
	if (!err && !rtr_only)
		err = qp_modify_to(q, IBV_QPS_RTS, dqpn);
	return err;
}

static int qp_state_now(struct ibv_qp *q)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(q, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

static struct ibv_qp *qp_new(enum ibv_qp_type t, struct ibv_context *c,
			     struct ibv_pd *p, struct ibv_cq *cc,
			     struct ibv_srq *s, struct ibv_xrcd *x)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = t, .send_cq = cc, .recv_cq = cc, .srq = s,
		.cap = { .max_send_wr = 16, .max_recv_wr = s ? 0 : 16,
			 .max_send_sge = 2, .max_recv_sge = s ? 0 : 2,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = p,
	};

	if (t == IBV_QPT_XRC_SEND) {
		a.recv_cq = NULL;
		a.cap.max_recv_wr = 0;
		a.cap.max_recv_sge = 0;
	} else if (t == IBV_QPT_XRC_RECV) {
		memset(&a, 0, sizeof(a));
		a.qp_type = t;
		a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		a.xrcd = x;
	}
	return ibv_create_qp_ex(c, &a);
}

/* ---------------------------------------------------------------------
 * A SEND through a pair of objects, byte for byte
 */

static int send_check(struct ibv_qp *from, struct ibv_send_wr *wr,
		      struct ibv_cq *rcq, struct ibv_mr *smr, uint8_t *src,
		      uint8_t *dst, size_t dst_off, unsigned int seed)
{
	struct ibv_sge sge = { (uintptr_t)src, MSG_LEN, smr->lkey };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int i, got_send = 0, got_recv = 0;
	size_t k;

	for (k = 0; k < MSG_LEN; k++)
		src[k] = (uint8_t)(seed * 31 + k * 7);
	memset(dst, 0, MSG_LEN + dst_off);
	wr->sg_list = &sge;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_SEND;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->wr_id = 1;
	if (ibv_post_send(from, wr, &bad)) {
		printf("# post_send: %s\n", strerror(errno));
		return -1;
	}
	for (i = 0; i < 2; i++) {
		if (!wait_wc(rcq, &wc)) {
			printf("# no completion (send %d, recv %d)\n", got_send,
			       got_recv);
			return -1;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			printf("# completion %llu: %s\n",
			       (unsigned long long)wc.wr_id,
			       ibv_wc_status_str(wc.status));
			return -1;
		}
		if (wc.opcode == IBV_WC_SEND)
			got_send = 1;
		else if (wc.opcode == IBV_WC_RECV &&
			 wc.byte_len == MSG_LEN + dst_off)
			got_recv = 1;
	}
	if (!got_send || !got_recv) {
		printf("# completions: send %d recv %d\n", got_send, got_recv);
		return -1;
	}
	if (memcmp(src, dst + dst_off, MSG_LEN)) {
		printf("# received bytes differ\n");
		return -1;
	}
	return 0;
}

static int post_recv_to(struct ibv_qp *q, struct ibv_srq *s,
			struct ibv_mr *rmr, uint8_t *dst, size_t len)
{
	struct ibv_sge sge = { (uintptr_t)dst, (uint32_t)len, rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return s ? ibv_post_srq_recv(s, &wr, &bad) : ibv_post_recv(q, &wr, &bad);
}

/*
 * Everything on context @c made afresh: PD, CQ, MR, two RC QPs, one
 * SEND.  For a device that a sweep created.
 */
static int loopback_send(struct ibv_context *c)
{
	struct ibv_pd *p = ibv_alloc_pd(c);
	struct ibv_cq *cc = ibv_create_cq(c, 16, NULL, NULL, 0);
	struct ibv_mr *m = p ? ibv_reg_mr(p, sbuf, BUFSZ, IBV_ACCESS_LOCAL_WRITE)
			     : NULL;
	struct ibv_mr *rm = p ? ibv_reg_mr(p, rbuf2, BUFSZ, IBV_ACCESS_LOCAL_WRITE)
			      : NULL;
	struct ibv_qp *a = p && cc ? qp_new(IBV_QPT_RC, c, p, cc, NULL, NULL) : NULL;
	struct ibv_qp *b = p && cc ? qp_new(IBV_QPT_RC, c, p, cc, NULL, NULL) : NULL;
	struct ibv_send_wr wr = {};
	union ibv_gid g0 = gid;
	int bad = -1;

	if (!p || !cc || !m || !rm || !a || !b) {
		printf("# objects on the new device: %s\n", strerror(errno));
		goto out;
	}
	if (ibv_query_gid(c, 1, 0, &gid) ||
	    qp_up(a, b->qp_num, 0) || qp_up(b, a->qp_num, 0) ||
	    post_recv_to(b, NULL, rm, rbuf2, BUFSZ)) {
		printf("# connecting on the new device: %s\n", strerror(errno));
		goto out;
	}
	bad = send_check(a, &wr, cc, m, sbuf, rbuf2, 0, 99);
out:
	gid = g0;
	if (a)
		bad |= destroy_qp(&a);
	if (b)
		bad |= destroy_qp(&b);
	if (m)
		ibv_dereg_mr(m);
	if (rm)
		ibv_dereg_mr(rm);
	if (cc)
		bad |= destroy_cq(&cc);
	if (p)
		ibv_dealloc_pd(p);
	return bad ? -1 : 0;
}

/* ---------------------------------------------------------------------
 * The commands
 */

static void *t_obj;

static int simple_call(void)
{
	t_obj = cur->obj->make();
	return e(t_obj);
}

static int simple_done(int keep)
{
	int bad = cur->obj->check ? cur->obj->check(t_obj) : 0, err = 0;

	if (keep)
		cur->obj->keep(t_obj);
	else
		err = cur->obj->drop(t_obj);
	if (err)
		printf("# %s: undoing it: %s\n", cur->name, strerror(err));
	t_obj = NULL;
	return bad || err ? -1 : 0;
}

/*
 * The op @op_name for command @what: @make() makes the object, @check()
 * (or NULL) tries it, @destroy(obj) drops it, the final one is kept in
 * @var.
 */
#define SIMPLE(op_name, what, make, check, destroy, var)		\
	static int op_name##_drop(void *o) { return destroy(o); }	\
	static void op_name##_keep(void *o) { var = o; }		\
	static const struct simple op_name##_obj = {			\
		make, check, op_name##_drop, op_name##_keep,		\
	};								\
	static const struct op op_name = {				\
		.name = what, .call = simple_call, .done = simple_done, \
		.obj = &op_name##_obj,					\
	}

/* ibv_open_device: the ucontext, its async fd, the context page mmap. */
static void *open_make(void) { return ibv_open_device(dev); }

static int open_check(void *o)
{
	struct ibv_device_attr a;

	if (!ibv_query_device(o, &a))
		return 0;
	printf("# query_device on the new context: %s\n", strerror(errno));
	return -1;
}

SIMPLE(op_open, "ibv_open_device", open_make, open_check, ibv_close_device,
       ctx);

static void *chan_make(void) { return ibv_create_comp_channel(ctx); }
SIMPLE(op_chan, "ibv_create_comp_channel", chan_make, NULL,
       ibv_destroy_comp_channel, ch);

static void *pd_make(void) { return ibv_alloc_pd(ctx); }
SIMPLE(op_pd, "ibv_alloc_pd", pd_make, NULL, ibv_dealloc_pd, pd);

#define MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static void *mr_make(void) { return ibv_reg_mr(pd, sbuf, BUFSZ, MR_ACCESS); }
SIMPLE(op_mr, "ibv_reg_mr", mr_make, NULL, ibv_dereg_mr, mr);

/*
 * ibv_rereg_mr: new translation and access on an MR registered before
 * each attempt.  After a failed command ibv_rereg_mr(3) says the MR
 * should not be used: it must still deregister, and nothing may remain.
 */
static uint32_t rereg_old_key;

static int rereg_prep(void)
{
	t_mr = ibv_reg_mr(pd, rbuf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (t_mr)
		rereg_old_key = t_mr->lkey;
	return e(t_mr);
}

static int rereg_call(void)
{
	int r = ibv_rereg_mr(t_mr, IBV_REREG_MR_CHANGE_TRANSLATION |
			     IBV_REREG_MR_CHANGE_ACCESS, NULL, rbuf, BUFSZ,
			     MR_ACCESS);

	if (!r)
		return 0;
	if (r != IBV_REREG_MR_ERR_CMD)
		printf("# ibv_rereg_mr returned %d\n", r);
	return errno ? errno : EIO;
}

static int rereg_failed(void)
{
	int err = ibv_dereg_mr(t_mr);

	t_mr = NULL;
	if (err)
		printf("# dereg_mr after a failed rereg: %s\n", strerror(err));
	return err ? -1 : 0;
}

static int rereg_done(int keep)
{
	int bad = 0;

	if (t_mr->lkey == rereg_old_key || t_mr->addr != rbuf ||
	    t_mr->length != BUFSZ) {
		printf("# rereg: key %#x (was %#x), %p+%zu\n", t_mr->lkey,
		       rereg_old_key, t_mr->addr, t_mr->length);
		bad = -1;
	}
	if (keep)
		mr2 = t_mr;
	else if (ibv_dereg_mr(t_mr))
		bad = -1;
	t_mr = NULL;
	return bad;
}

static const struct op op_rereg = {
	.name = "ibv_rereg_mr",
	.prep = rereg_prep,
	.call = rereg_call,
	.failed = rereg_failed,
	.done = rereg_done,
};

static void *cq_make(void)
{
	return ibv_create_cq(ctx, 64, (void *)0xcafe, ch, 0);
}

SIMPLE(op_cq, "ibv_create_cq", cq_make, NULL, ibv_destroy_cq, cq);

/*
 * ibv_resize_cq of a CQ that holds a completion nobody polled (a
 * receive flushed by a UC QP moved to ERR): after a failed resize the
 * CQ keeps its size, after a good one it has the new size; either way
 * it still yields that completion, and the next one too (a receive
 * posted afterwards, flushed at once): the library must read the ring
 * the kernel writes.
 */
static int resize_old;

static int resize_prep(void)
{
	struct ibv_sge sge = { (uintptr_t)rbuf, 64, mr2->lkey };
	struct ibv_recv_wr wr = { .wr_id = 77, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	t_cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!t_cq)
		return errno;
	resize_old = t_cq->cqe;
	t_qp = qp_new(IBV_QPT_UC, ctx, pd, t_cq, NULL, NULL);
	if (!t_qp || qp_modify_to(t_qp, IBV_QPS_INIT, 0) ||
	    ibv_post_recv(t_qp, &wr, &bad) ||
	    qp_modify_to(t_qp, IBV_QPS_ERR, 0))
		return errno ? errno : EIO;
	return 0;
}

static int resize_call(void)
{
	return ibv_resize_cq(t_cq, 200);
}

static int resize_check(int resized)
{
	struct ibv_sge sge = { (uintptr_t)rbuf, 64, mr2->lkey };
	struct ibv_recv_wr wr = { .wr_id = 78, .sg_list = &sge, .num_sge = 1 };
	const char *how = resized ? "good" : "failed";
	struct ibv_recv_wr *bad_wr;
	struct ibv_wc wc;
	int bad = 0;

	if (resized ? t_cq->cqe < 200 : t_cq->cqe != resize_old) {
		printf("# cqe %d after a %s resize (was %d)\n", t_cq->cqe, how,
		       resize_old);
		bad = -1;
	}
	if (!wait_wc(t_cq, &wc) || wc.wr_id != 77 ||
	    wc.status != IBV_WC_WR_FLUSH_ERR) {
		printf("# the CQ lost its completion across a %s resize\n", how);
		bad = -1;
	}
	/* And the next completion lands where the library reads. */
	if (ibv_post_recv(t_qp, &wr, &bad_wr) || !wait_wc(t_cq, &wc) ||
	    wc.wr_id != 78 || wc.status != IBV_WC_WR_FLUSH_ERR) {
		printf("# no completion after a %s resize\n", how);
		bad = -1;
	} else if (ibv_poll_cq(t_cq, 1, &wc)) {
		printf("# a third completion appeared\n");
		bad = -1;
	}
	bad |= destroy_qp(&t_qp);
	bad |= destroy_cq(&t_cq);
	return bad;
}

static int resize_failed(void)
{
	return resize_check(0);
}

static int resize_done(int keep)
{
	(void)keep;
	return resize_check(1);
}

static const struct op op_resize = {
	.name = "ibv_resize_cq",
	.prep = resize_prep,
	.call = resize_call,
	.failed = resize_failed,
	.done = resize_done,
};

/* ibv_create_qp of each type; the object kept for the SENDs later. */
static enum ibv_qp_type qp_type_now;
static struct ibv_qp **qp_keep;

static int qp_call(void)
{
	t_qp = qp_new(qp_type_now, ctx, pd, cq, NULL, xrcd);
	return e(t_qp);
}

static int qp_done(int keep)
{
	int bad = 0;

	if (t_qp->qp_type != qp_type_now || t_qp->state != IBV_QPS_RESET ||
	    qp_state_now(t_qp) != IBV_QPS_RESET) {
		printf("# new QP: type %d, state %d\n", t_qp->qp_type,
		       qp_state_now(t_qp));
		bad = -1;
	}
	if (keep && qp_keep)
		*qp_keep = t_qp;
	else
		bad |= destroy_qp(&t_qp);
	t_qp = NULL;
	return bad;
}

static const struct op op_qp_rc = {
	.name = "ibv_create_qp RC",
	.call = qp_call,
	.done = qp_done,
};
static const struct op op_qp_uc = {
	.name = "ibv_create_qp UC",
	.call = qp_call,
	.done = qp_done,
};
static const struct op op_qp_ud = {
	.name = "ibv_create_qp UD",
	.call = qp_call,
	.done = qp_done,
};
static const struct op op_qp_xs = {
	.name = "ibv_create_qp XRC_SEND",
	.call = qp_call,
	.done = qp_done,
};

static void *srq_make(void)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = 16, .max_sge = 2 } };

	return ibv_create_srq(pd, &a);
}

SIMPLE(op_srq, "ibv_create_srq", srq_make, NULL, ibv_destroy_srq, srq);

/*
 * XRC domains by file.  ib_uverbs keeps one domain per inode until its
 * use count (the opens, the XRC SRQs and XRC_RECV QPs in it) drops to
 * zero; a reference that a failed call leaves behind keeps the domain,
 * and its memory, for good, while ibv_close_xrcd still returns 0.  It
 * shows: opening the file again with O_CREAT | O_EXCL fails (EINVAL)
 * while the domain exists.  Each XRC sweep has a file of its own; after
 * a leak the sweep goes on with a fresh one.
 */
static int xfile[3] = { -1, -1, -1 };
static struct ibv_xrcd *xsrq_xrcd, *xtgt_xrcd;

static int tmp_file(void)
{
	char path[] = "/tmp/failnth-xrcd-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	return fd;
}

static struct ibv_xrcd *xrcd_open(int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd, .oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &a);
}

/* The domain of xfile[@slot] is gone: it can be made anew, exclusively. */
static int xrcd_gone(int slot, const char *what)
{
	struct ibv_xrcd *x = xrcd_open(xfile[slot], O_CREAT | O_EXCL);
	int err = errno;

	if (x)
		return ibv_close_xrcd(x) ? -1 : 0;
	/* The next attempt needs a file whose domain can be made anew. */
	close(xfile[slot]);
	xfile[slot] = tmp_file();
	xrcd_leaks++;
	if (in_attempt)
		return 0;	/* sweep() tells whose bug it is */
	printf("# %s: the file's XRC domain outlived its last close (%s): "
	       "a use count leaked\n", what, strerror(err));
	return -1;
}

/* Close the attempt's domain; it must be gone. */
static int xrcd_release(int slot, const char *what)
{
	int err = t_xrcd ? ibv_close_xrcd(t_xrcd) : 0;

	t_xrcd = NULL;
	if (err) {
		printf("# %s: close_xrcd: %s\n", what, strerror(err));
		return -1;
	}
	return xrcd_gone(slot, what);
}

/* ibv_open_xrcd on a file (ib_uverbs's per-inode domain table). */
static int xrcd_call(void)
{
	t_xrcd = xrcd_open(xfile[0], O_CREAT);
	return e(t_xrcd);
}

static int xrcd_failed(void)
{
	return xrcd_gone(0, "ibv_open_xrcd");
}

static int xrcd_done(int keep)
{
	if (!keep)
		return xrcd_release(0, "ibv_open_xrcd");
	xrcd = t_xrcd;
	t_xrcd = NULL;
	return 0;
}

static const struct op op_xrcd = {
	.name = "ibv_open_xrcd",
	.call = xrcd_call,
	.failed = xrcd_failed,
	.done = xrcd_done,
};

static struct ibv_srq *xsrq_new(struct ibv_xrcd *x)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 16, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = x, .cq = cq,
	};

	return ibv_create_srq_ex(ctx, &a);
}

/* XRC SRQ and XRC_RECV QP, each attempt in a new domain of its own. */
static int xrc_slot;

static int xrc_prep(void)
{
	t_xrcd = xrcd_open(xfile[xrc_slot], O_CREAT | O_EXCL);
	return e(t_xrcd);
}

static int xsrq_call(void)
{
	t_srq = xsrq_new(t_xrcd);
	return e(t_srq);
}

static int xsrq_failed(void)
{
	return xrcd_release(1, "ibv_create_srq_ex XRC");
}

static int xsrq_done(int keep)
{
	uint32_t num = 0;
	int bad = 0;

	if (ibv_get_srq_num(t_srq, &num) || !num) {
		printf("# XRC SRQ without a number\n");
		bad = -1;
	}
	if (keep) {
		xsrq = t_srq;
		xsrq_xrcd = t_xrcd;
		t_xrcd = NULL;
	} else {
		if (ibv_destroy_srq(t_srq))
			bad = -1;
		bad |= xrcd_release(1, "ibv_create_srq_ex XRC");
	}
	t_srq = NULL;
	return bad;
}

static const struct op op_xsrq = {
	.name = "ibv_create_srq_ex XRC",
	.prep = xrc_prep,
	.call = xsrq_call,
	.failed = xsrq_failed,
	.done = xsrq_done,
};

static int xtgt_call(void)
{
	t_qp = qp_new(IBV_QPT_XRC_RECV, ctx, NULL, NULL, NULL, t_xrcd);
	return e(t_qp);
}

static int xtgt_failed(void)
{
	return xrcd_release(2, "ibv_create_qp XRC_RECV");
}

static int xtgt_done(int keep)
{
	int bad = 0;

	if (t_qp->qp_type != IBV_QPT_XRC_RECV ||
	    qp_state_now(t_qp) != IBV_QPS_RESET) {
		printf("# new XRC_RECV QP: type %d, state %d\n", t_qp->qp_type,
		       qp_state_now(t_qp));
		bad = -1;
	}
	if (keep) {
		xtgt = t_qp;
		xtgt_xrcd = t_xrcd;
		t_xrcd = NULL;
		t_qp = NULL;
		return bad;
	}
	bad |= destroy_qp(&t_qp);
	return bad | xrcd_release(2, "ibv_create_qp XRC_RECV");
}

static const struct op op_xtgt = {
	.name = "ibv_create_qp XRC_RECV",
	.prep = xrc_prep,
	.call = xtgt_call,
	.failed = xtgt_failed,
	.done = xtgt_done,
};

/* ibv_open_qp: another handle on the XRC_RECV QP. */
static int openqp_call(void)
{
	struct ibv_qp_open_attr a = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = xtgt->qp_num, .xrcd = xtgt_xrcd,
		.qp_type = IBV_QPT_XRC_RECV,
	};

	t_qp = ibv_open_qp(ctx, &a);
	return e(t_qp);
}

static int openqp_done(int keep)
{
	int bad = 0;

	(void)keep;
	if (t_qp->qp_num != xtgt->qp_num) {
		printf("# opened QP %u, not %u\n", t_qp->qp_num, xtgt->qp_num);
		bad = -1;
	}
	return bad | destroy_qp(&t_qp);
}

static const struct op op_openqp = {
	.name = "ibv_open_qp",
	.call = openqp_call,
	.done = openqp_done,
};

static void *ah_make(void)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = gid, .hop_limit = 64 },
	};

	return ibv_create_ah(pd, &a);
}

SIMPLE(op_ah, "ibv_create_ah", ah_make, NULL, ibv_destroy_ah, ah);

/*
 * ibv_modify_qp, one transition of one QP type: a fresh QP brought to
 * the state before it (unarmed), then the armed step.  After a failure
 * the QP is still in the old state and the same step, unarmed, works.
 */
static enum ibv_qp_state mod_from, mod_to;
static char mod_name[16][48];
static struct op mod_ops[16];

static int mod_prep(void)
{
	enum ibv_qp_state s;

	t_qp = qp_new(qp_type_now, ctx, pd, cq, NULL, xrcd);
	if (!t_qp)
		return errno;
	for (s = IBV_QPS_INIT; s <= mod_from; s++)
		if (qp_modify_to(t_qp, s, t_qp->qp_num))
			return errno ? errno : EIO;
	return 0;
}

static int mod_call(void)
{
	return qp_modify_to(t_qp, mod_to, t_qp->qp_num);
}

static int mod_failed(void)
{
	int s = qp_state_now(t_qp), bad = 0, err;

	if (s != (int)mod_from || t_qp->state != mod_from) {
		printf("# QP state %d (library: %d) after a failed move %d -> %d\n",
		       s, t_qp->state, mod_from, mod_to);
		bad = -1;
	}
	err = qp_modify_to(t_qp, mod_to, t_qp->qp_num);
	if (err) {
		printf("# the same move, not armed: %s\n", strerror(err));
		bad = -1;
	}
	return bad | destroy_qp(&t_qp);
}

static int mod_done(int keep)
{
	int s = qp_state_now(t_qp), bad = 0;

	(void)keep;
	if (s != (int)mod_to) {
		printf("# QP state %d after a move to %d\n", s, mod_to);
		bad = -1;
	}
	return bad | destroy_qp(&t_qp);
}

/*
 * "rdma link add": one RDMA_NLDEV_CMD_NEWLINK, the socket and the
 * message made before the fault is armed.  A reply lost to the fault
 * (recv() says ENOBUFS: the kernel could not allocate the ACK) leaves
 * the outcome unknown to the caller, as netlink(7) says; the device is
 * then looked up: if it exists, the call is counted as absorbed.
 */
static const char *link_ndev;
static struct nlbuf link_msg;
static int link_ack_lost, link_ack_lost_made, link_no_uverbs;
static int link_in_uverbs;	/* the attempt's fault was in ib_uverbs_add_one() */

static int link_exists(void)
{
	uint32_t i;

	return dev_index(LINK_NAME, &i) == 0 ||
	       access("/sys/class/infiniband/" LINK_NAME, F_OK) == 0;
}

static int link_prep(void)
{
	newlink_msg(&link_msg, LINK_NAME, link_ndev);
	return 0;
}

static int link_err_recv;	/* the error came from recv(): the reply */

static int link_call(void)
{
	int err = nl_send(&link_msg);

	link_err_recv = 0;
	if (err)
		return err;
	err = nl_answer(link_msg.h.nlmsg_seq, NULL, NULL);
	link_err_recv = err == ENOBUFS && nl_recv_err;
	return err;
}

static int link_delete(void)
{
	int err = dellink(LINK_NAME), i;

	if (err) {
		printf("# link delete: %s\n", strerror(err));
		return -1;
	}
	for (i = 0; i < 100 && link_exists(); i++)
		usleep(50000);
	if (link_exists()) {
		printf("# " LINK_NAME " still there after delete\n");
		return -1;
	}
	return 0;
}

static int link_failed(void)
{
	int made = link_exists();

	link_in_uverbs = 0;
	if (link_err_recv) {
		/* The reply, not the request, was lost. */
		link_ack_lost++;
		link_ack_lost_made += made;
		return made ? link_delete() : 0;
	}
	if (!made)
		return 0;
	printf("# link add failed, but " LINK_NAME " exists\n");
	link_delete();
	return -1;
}

static int link_use(void)
{
	struct ibv_device **l;
	struct ibv_context *c = NULL;
	union ibv_gid g;
	int i, bad;

	/* GID 0 comes from ib_core's GID worker, after registration. */
	l = ibv_get_device_list(NULL);
	for (i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), LINK_NAME))
			c = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	if (!c) {
		printf("# cannot open " LINK_NAME ": %s\n", strerror(errno));
		return -1;
	}
	for (i = 0; i < 100; i++) {
		if (!ibv_query_gid(c, 1, 0, &g) &&
		    (g.global.subnet_prefix || g.global.interface_id))
			break;
		usleep(50000);
	}
	bad = loopback_send(c);
	ibv_close_device(c);
	return bad;
}

/* Whether ib_uverbs gave device @ibdev its character device. */
static int has_uverbs(const char *ibdev)
{
	DIR *d = opendir("/sys/class/infiniband_verbs");
	struct dirent *de;
	char path[300], name[64];
	int found = 0;
	FILE *f;

	while (d && (de = readdir(d)) && !found) {
		if (strncmp(de->d_name, "uverbs", 6))
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%s/ibdev",
			 de->d_name);
		f = fopen(path, "re");
		if (f && fgets(name, sizeof(name), f))
			found = !strncmp(name, ibdev, strlen(ibdev)) &&
				!strcmp(name + strlen(ibdev), "\n");
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

static int link_in_region(void)
{
	return link_in_uverbs;
}

static int link_done(int keep)
{
	int bad = 0;

	link_in_uverbs = 0;
	if (!link_exists()) {
		printf("# link add succeeded, but no " LINK_NAME "\n");
		return -1;
	}
	/*
	 * ib_core registers a device even when a client's add fails (the
	 * error is ignored by design): counted, not failed.  Only
	 * ib_uverbs_add_one()'s failure leaves the device without its
	 * uverbs node: the fault was inside that function (the sampling's
	 * evidence, see TEST(rdma_link_add)).
	 */
	if (!keep && !has_uverbs(LINK_NAME))
		link_no_uverbs++, link_in_uverbs = 1;
	if (keep)
		bad = link_use();
	return bad | link_delete();
}

/* ---------------------------------------------------------------------
 * The tests
 */

/* An XRC SEND from @ini through @tgt into @s (of @tgt's domain). */
static int xrc_send(struct ibv_qp *ini, struct ibv_qp *tgt, struct ibv_srq *s,
		    unsigned int seed)
{
	struct ibv_send_wr wr = {};
	uint32_t srqn = 0;

	if (ibv_get_srq_num(s, &srqn) || qp_up(tgt, ini->qp_num, 1) ||
	    qp_up(ini, tgt->qp_num, 0) ||
	    post_recv_to(NULL, s, mr2, rbuf, BUFSZ)) {
		printf("# XRC setup: %s\n", strerror(errno));
		return -1;
	}
	wr.qp_type.xrc.remote_srqn = srqn;
	return send_check(ini, &wr, cq, mr, sbuf, rbuf, 0, seed);
}

#define NEED(cond)							\
	do {								\
		if (!(cond))						\
			SKIP("an earlier sweep did not leave its object"); \
	} while (0)


TEST(open_device)
{
	CHECK(sweep(&op_open) == 0, "ibv_open_device");
	REQUIRE(ctx, "a context");
	CHECK(!ibv_query_gid(ctx, 1, 0, &gid), "GID 0");
}

TEST(comp_channel)
{
	NEED(ctx);
	CHECK(sweep(&op_chan) == 0, "ibv_create_comp_channel");
}

TEST(alloc_pd)
{
	NEED(ctx);
	CHECK(sweep(&op_pd) == 0, "ibv_alloc_pd");
}

TEST(reg_mr)
{
	NEED(pd);
	CHECK(sweep(&op_mr) == 0, "ibv_reg_mr");
	CHECK(sweep(&op_rereg) == 0, "ibv_rereg_mr");
}

TEST(create_cq)
{
	NEED(ch);
	CHECK(sweep(&op_cq) == 0, "ibv_create_cq");
}

TEST(resize_cq)
{
	NEED(cq && mr2);
	CHECK(sweep(&op_resize) == 0, "ibv_resize_cq");
}

TEST(create_qp)
{
	NEED(cq);
	qp_type_now = IBV_QPT_RC;
	qp_keep = &qrc;
	CHECK(sweep(&op_qp_rc) == 0, "RC");
	qp_type_now = IBV_QPT_UC;
	qp_keep = NULL;
	CHECK(sweep(&op_qp_uc) == 0, "UC");
	qp_type_now = IBV_QPT_UD;
	qp_keep = &qud;
	CHECK(sweep(&op_qp_ud) == 0, "UD");
	qp_keep = NULL;
}

TEST(create_srq)
{
	NEED(pd);
	CHECK(sweep(&op_srq) == 0, "ibv_create_srq");
}

TEST(xrc_objects)
{
	int i;

	NEED(cq);
	for (i = 0; i < 3; i++) {
		xfile[i] = tmp_file();
		REQUIRE(xfile[i] >= 0, "temporary file");
	}
	CHECK(sweep(&op_xrcd) == 0, "ibv_open_xrcd");
	xrc_slot = 1;
	CHECK(sweep(&op_xsrq) == 0, "XRC SRQ");
	qp_type_now = IBV_QPT_XRC_SEND;
	qp_keep = &xini;
	CHECK(sweep(&op_qp_xs) == 0, "XRC_SEND");
	qp_keep = NULL;
	xrc_slot = 2;
	CHECK(sweep(&op_xtgt) == 0, "XRC_RECV");
	REQUIRE(xtgt, "XRC_RECV QP");
	CHECK(sweep(&op_openqp) == 0, "ibv_open_qp");
}

TEST(create_ah)
{
	NEED(pd);
	CHECK(sweep(&op_ah) == 0, "ibv_create_ah");
}

TEST(modify_qp)
{
	static const struct {
		enum ibv_qp_type type;
		const char *name;
		enum ibv_qp_state last;
	} types[] = {
		{ IBV_QPT_RC, "RC", IBV_QPS_RTS },
		{ IBV_QPT_UC, "UC", IBV_QPS_RTS },
		{ IBV_QPT_UD, "UD", IBV_QPS_RTS },
		{ IBV_QPT_XRC_SEND, "XRC_SEND", IBV_QPS_RTS },
		{ IBV_QPT_XRC_RECV, "XRC_RECV", IBV_QPS_RTR },
	};
	static const char *const sname[] = { "RESET", "INIT", "RTR", "RTS" };
	size_t i;
	int k = 0;

	NEED(cq && xrcd);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		qp_type_now = types[i].type;
		for (mod_to = IBV_QPS_INIT; mod_to <= types[i].last; mod_to++) {
			struct op *op = &mod_ops[k];

			mod_from = mod_to - 1;
			snprintf(mod_name[k], sizeof(mod_name[0]),
				 "ibv_modify_qp %s %s->%s", types[i].name,
				 sname[mod_from], sname[mod_to]);
			*op = (struct op){
				.name = mod_name[k], .prep = mod_prep,
				.call = mod_call, .failed = mod_failed,
				.done = mod_done,
			};
			CHECK(sweep(op) == 0, "%s", op->name);
			k++;
		}
	}
}

/* The objects the sweeps made carry traffic. */
TEST(swept_objects_work)
{
	struct ibv_send_wr wr = {};
	struct ibv_qp *rb = NULL, *ub = NULL, *t2, *i2;
	struct ibv_srq *s2;
	struct ibv_cq *ev_cq;
	struct pollfd pfd;
	void *ev_ctx;

	NEED(qrc && qud && srq && mr && mr2 && ah && xini && xtgt && xsrq);

	/* RC: the swept QP to a QP on the swept SRQ; a completion event. */
	rb = qp_new(IBV_QPT_RC, ctx, pd, cq, srq, NULL);
	REQUIRE(rb, "RC responder");
	CHECK(!qp_up(qrc, rb->qp_num, 0) && !qp_up(rb, qrc->qp_num, 0),
	      "connect RC");
	CHECK(!post_recv_to(rb, srq, mr2, rbuf, BUFSZ), "SRQ receive");
	CHECK(!ibv_req_notify_cq(cq, 0), "arm CQ");
	CHECK(!send_check(qrc, &wr, cq, mr, sbuf, rbuf, 0, 1), "RC SEND");
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	CHECK(poll(&pfd, 1, 5000) == 1 && !ibv_get_cq_event(ch, &ev_cq, &ev_ctx) &&
	      ev_cq == cq && ev_ctx == (void *)0xcafe, "completion event");
	if (pfd.revents)
		ibv_ack_cq_events(cq, 1);
	CHECK(!destroy_qp(&rb), "destroy responder");

	/* UD: through the swept AH. */
	ub = qp_new(IBV_QPT_UD, ctx, pd, cq, NULL, NULL);
	REQUIRE(ub, "UD responder");
	CHECK(!qp_up(qud, 0, 0) && !qp_up(ub, 0, 0), "UD to RTS");
	CHECK(!post_recv_to(ub, NULL, mr2, rbuf, MSG_LEN + GRH_LEN),
	      "UD receive");
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = ub->qp_num;
	wr.wr.ud.remote_qkey = 0x1234;
	CHECK(!send_check(qud, &wr, cq, mr, sbuf, rbuf, GRH_LEN, 2), "UD SEND");
	CHECK(!destroy_qp(&ub), "destroy UD responder");

	/*
	 * XRC: the swept XRC_SEND QP to the swept XRC_RECV QP, into a new
	 * SRQ of its domain; a new XRC_SEND QP to a new XRC_RECV QP in the
	 * swept SRQ's domain, into that SRQ.
	 */
	s2 = xsrq_new(xtgt_xrcd);
	t2 = qp_new(IBV_QPT_XRC_RECV, ctx, NULL, NULL, NULL, xsrq_xrcd);
	i2 = qp_new(IBV_QPT_XRC_SEND, ctx, pd, cq, NULL, NULL);
	REQUIRE(s2 && t2 && i2, "XRC objects");
	CHECK(!xrc_send(xini, xtgt, s2, 3), "XRC SEND, swept QPs");
	CHECK(!xrc_send(i2, t2, xsrq, 4), "XRC SEND, swept SRQ");
	CHECK(!destroy_qp(&i2) && !destroy_qp(&t2) && !ibv_destroy_srq(s2),
	      "destroy");
}

TEST(rdma_link_add)
{
	/*
	 * Sampled (sweep()): more than half of the sites (730 of 1377 on
	 * the debug kernel) are ib_uverbs's, in ib_uverbs_add_one(), which
	 * ib_core calls once per registration and which never calls the
	 * driver (linux 6.1 uverbs_main.c, uverbs_uapi.c: it tests
	 * device->ops for presence only; softhca has no driver_def), and
	 * whose failure ib_core ignores: the device registers without its
	 * uverbs node, which is how an attempt is known to have had its
	 * fault in there.  Every other site is tried.
	 */
	static const struct op op_link = {
		.name = "rdma link add", .prep = link_prep, .call = link_call,
		.failed = link_failed, .done = link_done,
		/* The request's skb (sendmsg) or the ACK (recv). */
		.also = { ENOBUFS }, .cap = 2000,
		.in_region = link_in_region,
		.region = "ib_uverbs_add_one()",
	};
	const char *name = getenv("SOFTHCA_DEV");

	link_ndev = getenv("FAILNTH_NETDEV");
	if (!link_ndev)
		SKIP("FAILNTH_NETDEV not set");
	/* The sampling's evidence needs uverbs nodes where nothing failed. */
	REQUIRE(has_uverbs(name), "%s has a uverbs node (ib_uverbs loaded)",
		name);
	REQUIRE(!link_exists(), LINK_NAME " exists before the sweep");
	CHECK(sweep(&op_link) == 0, "rdma link add");
	CHECK(!link_exists(), LINK_NAME " left behind");
	if (link_ack_lost)
		printf("NOTE: rdma link add: %d replies lost to the fault, "
		       "%d of them after the device was made\n", link_ack_lost,
		       link_ack_lost_made);
	if (link_no_uverbs)
		printf("NOTE: rdma link add: %d absorbed faults left a device "
		       "without its uverbs node (ib_core ignores a failed "
		       "client add)\n", link_no_uverbs);
}

TEST(teardown)
{
	struct snap s;
	size_t i;
	int r, sites = 0, bad = 0, skipped = 0, failed = 0, absorbed = 0;
	int known = 0;

	CHECK(!qrc || !destroy_qp(&qrc), "RC QP");
	CHECK(!qud || !destroy_qp(&qud), "UD QP");
	CHECK(!xini || !destroy_qp(&xini), "XRC_SEND QP");
	CHECK(!xtgt || !destroy_qp(&xtgt), "XRC_RECV QP");
	CHECK(!srq || !ibv_destroy_srq(srq), "SRQ");
	CHECK(!xsrq || !ibv_destroy_srq(xsrq), "XRC SRQ");
	CHECK(!xrcd || !ibv_close_xrcd(xrcd), "XRC domain");
	CHECK(!xsrq_xrcd || !ibv_close_xrcd(xsrq_xrcd), "XRC SRQ's domain");
	CHECK(!xtgt_xrcd || !ibv_close_xrcd(xtgt_xrcd), "XRC_RECV's domain");
	for (i = 0; i < 3 && ctx; i++)
		CHECK(xfile[i] < 0 || !xrcd_gone((int)i, "at the end"),
		      "XRC domain %zu gone", i);
	CHECK(!ah || !ibv_destroy_ah(ah), "AH");
	CHECK(!cq || !destroy_cq(&cq), "CQ");
	CHECK(!ch || !ibv_destroy_comp_channel(ch), "channel");
	CHECK(!mr || !ibv_dereg_mr(mr), "MR");
	CHECK(!mr2 || !ibv_dereg_mr(mr2), "rereg'd MR");
	CHECK(!pd || !ibv_dealloc_pd(pd), "PD");
	CHECK(!ctx || !ibv_close_device(ctx), "context");
	ctx = NULL;
	REQUIRE(!take_snap(&s), "counters");
	for (i = 0; i < NRES; i++)
		CHECK(s.res[i] == 0, "%s count %ld at the end", res_names[i],
		      s.res[i]);
	CHECK(s.maps == 0, "%d uverbs mappings at the end", s.maps);
	for (r = 0; r < nresults; r++) {
		sites += results[r].sites;
		skipped += results[r].skipped;
		failed += results[r].failed;
		absorbed += results[r].absorbed;
		known += results[r].known;
		bad += !results[r].ok;
	}
	printf("%s fail-nth: %d injection sites over %d commands, %d tried "
	       "(%d failed the call, %d absorbed, %d of them excused as a known "
	       "6.1 ib_core bug), %d sampled out; %d commands misbehaved\n",
	       !bad && !tap_failed_now ? "NOTE:" : "#", sites, nresults,
	       sites - skipped, failed, absorbed, known, skipped, bad);
}

/* ---------------------------------------------------------------------
 * kmemleak's report, against the known bugs (failnth.sh: "failnth
 * kmemleak REPORT NEW KNOWN": the report, the addresses of the objects
 * new since the sweeps began, what the sweeps' run wrote to
 * FAILNTH_KNOWN).  Exit 0 when every new object is explained.
 */

#define MAX_GROUPS 64

struct leak_group {
	char sig[600];
	int count;
};

static struct leak_group groups[MAX_GROUPS];
static int ngroups;
static char swept[64][48];
static int nswept;

static void group_add(char f[][FRAME_LEN], int n)
{
	char sig[600];
	size_t len = 0;
	int i;

	sig[0] = 0;
	for (i = 0; i < n && i < 8 && len < sizeof(sig); i++)
		len += (size_t)snprintf(sig + len, sizeof(sig) - len, "%s%s",
					i ? " < " : "", f[i]);
	for (i = 0; i < ngroups; i++)
		if (!strcmp(groups[i].sig, sig))
			break;
	if (i == ngroups) {
		if (ngroups == MAX_GROUPS)
			i = MAX_GROUPS - 1;
		else
			snprintf(groups[ngroups++].sig, sizeof(sig), "%s", sig);
	}
	groups[i].count++;
}

static int was_swept(const char *name)
{
	int i;

	for (i = 0; i < nswept; i++)
		if (!strcmp(swept[i], name))
			return 1;
	return 0;
}

/* One reported object: 1 when a known bug explains it. */
static int leak_known(char f[][FRAME_LEN], int n, int used[][3])
{
	int i, k;

	for (i = 0; i < NKNOWN; i++) {
		struct known_bug *kb = &known_bugs[i];

		for (k = 0; k < 3 && kb->leak[k]; k++) {
			if (!frames_match(f, n, kb->leak[k], 1))
				continue;
			if (kb->leaks_per_hit ?
			    used[i][k] >= kb->hits * kb->leaks_per_hit :
			    !was_swept(kb->sweep))
				return 0;
			used[i][k]++;
			return 1;
		}
	}
	return 0;
}

static int kmemleak_mode(const char *report, const char *newlist,
			 const char *knownf)
{
	static char addrs[4096][24];
	static char fr[MAX_FRAMES][FRAME_LEN];
	int used[NKNOWN][3], naddr = 0, n = 0, want = 0, bt = 0, bad = 0;
	int i, k, idx, hits;
	char line[512];
	FILE *f;

	memset(used, 0, sizeof(used));
	f = fopen(knownf, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "hits %d %d", &idx, &hits) == 2 && idx >= 0 &&
		    idx < NKNOWN)
			known_bugs[idx].hits = hits;
		else if (!strncmp(line, "swept ", 6) && nswept < 64)
			snprintf(swept[nswept++], sizeof(swept[0]), "%.*s",
				 (int)strcspn(line + 6, "\n"), line + 6);
	}
	if (f)
		fclose(f);
	f = fopen(newlist, "re");
	while (f && naddr < 4096 && fgets(line, sizeof(line), f))
		snprintf(addrs[naddr++], sizeof(addrs[0]), "%.*s",
			 (int)strcspn(line, "\n"), line);
	if (f)
		fclose(f);
	f = fopen(report, "re");
	if (!f) {
		printf("cannot read %s: %s\n", report, strerror(errno));
		return 1;
	}
	for (;;) {
		int eof = !fgets(line, sizeof(line), f);

		if (eof || !strncmp(line, "unreferenced object ", 20)) {
			if (want && !leak_known(fr, n, used)) {
				group_add(fr, n);
				bad++;
			}
			if (eof)
				break;
			want = 0;
			for (i = 0; i < naddr; i++)
				if (!strncmp(line + 20, addrs[i], strlen(addrs[i])) &&
				    line[20 + strlen(addrs[i])] == ' ')
					want = 1;
			n = 0;
			bt = 0;
		} else if (want && strstr(line, "backtrace:")) {
			bt = 1;
		} else if (want && bt && n < MAX_FRAMES &&
			   !frame_name(line, fr[n])) {
			n++;
		}
	}
	fclose(f);
	for (i = 0; i < NKNOWN; i++)
		for (k = 0; k < 3; k++)
			if (used[i][k])
				printf("NOTE: known 6.1 ib_core bug: kmemleak: %d x %s: %s (%s)\n",
				       used[i][k], known_bugs[i].leak[k],
				       known_bugs[i].name, known_bugs[i].where);
	if (!bad)
		return 0;
	printf("kmemleak: %d new suspected leaks no known kernel bug explains, by backtrace:\n",
	       bad);
	for (i = 0; i < ngroups; i++)
		printf("%d x %s\n", groups[i].count, groups[i].sig);
	return 1;
}

/* For kmemleak_mode() later: what this run excused, what it swept. */
static void write_known(const char *path)
{
	FILE *f = fopen(path, "we");
	int i, leaks = 0;

	if (!f)
		return;
	for (i = 0; i < NKNOWN; i++) {
		fprintf(f, "hits %d %d\n", i, known_bugs[i].hits);
		if (known_bugs[i].symptom == SYM_XRCD_LEAK)
			leaks += known_bugs[i].hits;
	}
	/* Domains leaked on SOFTHCA_DEV: softhca_dealloc_driver() counts them. */
	fprintf(f, "xrcd_leaks_excused %d\n", leaks);
	for (i = 0; i < nresults; i++)
		if (results[i].sites)
			fprintf(f, "swept %s\n", results[i].name);
	fclose(f);
}

/* Fault the stack in: a fault in the kernel's copy to a stack page not
 * yet present would turn into EFAULT, not the error under test. */
static void __attribute__((noinline)) touch_stack(void)
{
	volatile char pad[256 << 10];
	size_t i;

	for (i = 0; i < sizeof(pad); i += 512)
		pad[i] = 0;
}

static int read_flag(const char *path, char *val, size_t len)
{
	FILE *f = fopen(path, "re");
	int ok = f && fgets(val, (int)len, f);

	if (f)
		fclose(f);
	if (ok)
		val[strcspn(val, "\n")] = 0;
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *name = getenv("SOFTHCA_DEV");
	const char *c = getenv("FAILNTH_CAP");
	static const char *const flags[] = {
		"/sys/kernel/debug/failslab/ignore-gfp-wait",
		"/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait",
		"/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem",
	};
	char val[16];
	size_t i;
	int k, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "kmemleak"))
		return kmemleak_mode(argv[2], argv[3], argv[4]);
	if (!name) {
		printf("1..0 # SKIP SOFTHCA_DEV not set\n");
		return 0;
	}
	if (c)
		cap = atoi(c), cap_env = 1;
	if (getenv("FAILNTH_STRIDE"))
		stride = atoi(getenv("FAILNTH_STRIDE"));
	trace = getenv("FAILNTH_TRACE") != NULL;
	stacks = getenv("FAILNTH_STACKS");
	if (getenv("FAILNTH_VERBOSE"))
		verbose_dflt = atoi(getenv("FAILNTH_VERBOSE"));
	if (getenv("FAILNTH_SITES"))
		sites_log = fopen(getenv("FAILNTH_SITES"), "we");
	my_tid = gettid();
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth_fd < 0) {
		printf("1..0 # SKIP no /proc/thread-self/fail-nth (kernel without CONFIG_FAULT_INJECTION)\n");
		return 0;
	}
	if (access("/sys/kernel/debug/failslab", F_OK) ||
	    access("/sys/kernel/debug/fail_page_alloc", F_OK)) {
		printf("1..0 # SKIP no /sys/kernel/debug/failslab or fail_page_alloc (FAILSLAB, FAIL_PAGE_ALLOC, FAULT_INJECTION_DEBUG_FS)\n");
		return 0;
	}
	/* Sleeping allocations are what the commands make. */
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (read_flag(flags[i], val, sizeof(val)) || strcmp(val, "N")) {
			printf("Bail out! %s is not N (failnth.sh sets it)\n",
			       flags[i]);
			return 1;
		}
	dev_list = ibv_get_device_list(NULL);
	for (k = 0; dev_list && dev_list[k]; k++)
		if (!strcmp(ibv_get_device_name(dev_list[k]), name))
			dev = dev_list[k];
	sbuf = aligned_alloc(4096, BUFSZ);
	rbuf = aligned_alloc(4096, BUFSZ);
	rbuf2 = aligned_alloc(4096, BUFSZ);
	if (!dev || nl_open() || dev_index(name, &dev_idx) || !sbuf ||
	    !rbuf || !rbuf2) {
		printf("Bail out! no device %s: %s\n", name, strerror(errno));
		return 1;
	}
	memset(sbuf, 1, BUFSZ);
	memset(rbuf, 2, BUFSZ);
	memset(rbuf2, 3, BUFSZ);
	touch_stack();
	rc = tap_run();
	if (getenv("FAILNTH_KNOWN"))
		write_known(getenv("FAILNTH_KNOWN"));
	ibv_free_device_list(dev_list);
	free(sbuf);
	free(rbuf);
	free(rbuf2);
	close(nl_fd);
	close(nth_fd);
	for (k = 0; k < 3; k++)
		if (xfile[k] >= 0)
			close(xfile[k]);
	return rc;
}
