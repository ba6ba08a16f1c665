// SPDX-License-Identifier: GPL-2.0-only
/*
 * tsc-khz: print this x86_64 host's TSC frequency in kHz, measured
 * against CLOCK_MONOTONIC_RAW over 200 ms.
 *
 * A TCG guest's TSC is the host's (QEMU reads the host's TSC for the
 * guest's RDTSC): run-guest passes this figure as tsc_early_khz to the
 * debug kernel, which boots without ACPI and so has no HPET or PM timer
 * to calibrate its TSC against (see there why).  Each end of the
 * interval is the TSC read between two clock reads, from the closest of
 * several tries, so a preemption between the reads does not skew it.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A TSC reading and the clock's time at it, from the tightest of 50 tries. */
static void sample(uint64_t *tsc, int64_t *ns)
{
	int64_t best = INT64_MAX;
	int i;

	for (i = 0; i < 50; i++) {
		int64_t a = now_ns();
		uint64_t t = __rdtsc();
		int64_t b = now_ns();

		if (b - a < best) {
			best = b - a;
			*tsc = t;
			*ns = a + (b - a) / 2;
		}
	}
}

int main(void)
{
	struct timespec pause = { 0, 200 * 1000 * 1000 };
	uint64_t t0, t1;
	int64_t n0, n1;

	sample(&t0, &n0);
	nanosleep(&pause, NULL);
	sample(&t1, &n1);
	if (n1 <= n0 || t1 <= t0)
		return 1;
	printf("%llu\n", (unsigned long long)((t1 - t0) * 1000000 / (uint64_t)(n1 - n0)));
	return 0;
}
