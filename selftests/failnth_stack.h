/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The injected fault's stack, read back from the kernel log, for the
 * fault-injection sweeps (failnth.c).
 * Included once, in order, by failnth.c.
 */
#ifndef SOFTHCA_SELFTEST_FAILNTH_STACK_H
#define SOFTHCA_SELFTEST_FAILNTH_STACK_H

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
	/* As printed, "func+0x1f/0x80 [module]": a call site, for step_key() */
	char raw[MAX_FRAMES][FRAME_LEN];
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
			const char *t = text + strspn(text, " ");

			snprintf(st->raw[st->n], FRAME_LEN, "%s", t);
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

/* @h, on over the bytes of @s (djb2). */
static unsigned long hash_on(unsigned long h, const char *s)
{
	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/* step_key()'s key of a fault inside @step, a step run once per command. */
static unsigned long step_key_of(const char *step)
{
	unsigned long h = hash_on(5381, step);

	return h ? h : 1;
}

/*
 * The fault's place in a step of a call: 0 when the stack does not show
 * the fault inside function @step with no driver frame inner to it;
 * else a key (never 0) made of @step and, unless @once, the call sites
 * of @step and of every call outward (their return addresses).  Two
 * faults with one key were made in calls of @step from one place on the
 * one path from the system call: the same call when the path is not in a loop (the
 * caller's argument, see link_in_region()).  @once: @step runs once
 * per command; its name is the key.
 */
static unsigned long step_key(const struct fstack *st, const char *step,
			      int once)
{
	unsigned long h;
	int i;

	if (!st->done)
		return 0;
	for (i = 0; i < st->n && !frame_is(st->f[i], step); i++)
		if (driver_frame(st->f[i]))
			return 0;	/* the driver made this allocation */
	if (i == st->n)
		return 0;
	h = step_key_of(step);
	/* From @step's caller out: where each call was made. */
	for (i++; !once && i < st->n; i++)
		h = hash_on(h, st->raw[i]);
	return h ? h : 1;
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

#endif
