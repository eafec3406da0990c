// SPDX-License-Identifier: GPL-2.0
/*
 * Prints this machine's TSC frequency in kHz, measured against
 * CLOCK_MONOTONIC_RAW over 200 ms (scripts/vm-run). A TCG guest reads the
 * host's TSC, but cannot calibrate it: with no PIT result and no HPET or PM
 * timer (the guest kernels have no ACPI), it marks the TSC unstable and keeps
 * time with jiffies, 4 ms steps at HZ=250. tsc_early_khz= gives it the rate.
 */
#include <stdio.h>
#include <stdint.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(void)
{
	uint64_t t0 = now_ns(), c0 = __rdtsc(), t1, c1;

	do {
		t1 = now_ns();
	} while (t1 - t0 < 200000000ull);
	c1 = __rdtsc();
	if (c1 <= c0)
		return 1;
	printf("%llu\n", (unsigned long long)((c1 - c0) * 1000000ull / (t1 - t0)));
	return 0;
}
