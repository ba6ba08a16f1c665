/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Minimal TAP producer for softhca's C selftests.
 *
 *   TEST(name) { ... CHECK(cond, "fmt", ...); ... }
 *   int main(void) { return tap_run(); }
 *
 * Each TEST is one TAP test point.  CHECK failures print a diagnostic
 * and fail the test point but let it continue; SKIP(reason) ends it as
 * skipped.  tap_run() prints the plan, every result and returns non-zero
 * when any test point failed.
 */
#ifndef SOFTHCA_TAP_H
#define SOFTHCA_TAP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tap_test {
	const char *name;
	void (*fn)(void);
	struct tap_test *next;
};

static struct tap_test *tap_head, **tap_tail = &tap_head;
static int tap_failed_now;
static const char *tap_skip_now;

#define TEST(fn_name)							\
	static void test_##fn_name(void);				\
	static struct tap_test tap_##fn_name = { #fn_name, test_##fn_name, NULL }; \
	__attribute__((constructor)) static void tap_reg_##fn_name(void) \
	{								\
		*tap_tail = &tap_##fn_name;				\
		tap_tail = &tap_##fn_name.next;				\
	}								\
	static void test_##fn_name(void)

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("# %s:%d: check failed: %s: ", __FILE__,	\
			       __LINE__, #cond);			\
			printf(__VA_ARGS__);				\
			printf(" (errno %d %s)\n", errno, strerror(errno)); \
			tap_failed_now = 1;				\
		}							\
	} while (0)

/* Like CHECK, but a failure ends the test point. */
#define REQUIRE(cond, ...)						\
	do {								\
		CHECK(cond, __VA_ARGS__);				\
		if (tap_failed_now)					\
			return;						\
	} while (0)

#define SKIP(reason)							\
	do {								\
		tap_skip_now = (reason);				\
		return;							\
	} while (0)

static inline int tap_run(void)
{
	struct tap_test *t;
	int n = 0, i = 0, failed = 0;

	for (t = tap_head; t; t = t->next)
		n++;
	printf("TAP version 13\n1..%d\n", n);
	fflush(stdout);
	for (t = tap_head; t; t = t->next) {
		i++;
		tap_failed_now = 0;
		tap_skip_now = NULL;
		/* TAP_ONLY=NAME[,NAME...]: run those test points only. */
		if (getenv("TAP_ONLY") && !strstr(getenv("TAP_ONLY"), t->name))
			tap_skip_now = "not in TAP_ONLY";
		else
			t->fn();
		if (tap_skip_now)
			printf("ok %d %s # SKIP %s\n", i, t->name, tap_skip_now);
		else if (tap_failed_now)
			printf("not ok %d %s\n", i, t->name);
		else
			printf("ok %d %s\n", i, t->name);
		failed += tap_failed_now && !tap_skip_now;
		fflush(stdout);
	}
	return failed ? 1 : 0;
}

#endif
