/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemleak's report against the known bugs, for failnth.sh (failnth.c).
 * Included once, in order, by failnth.c.
 */
#ifndef SOFTHCA_SELFTEST_FAILNTH_LEAK_H
#define SOFTHCA_SELFTEST_FAILNTH_LEAK_H

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

#endif
