/* SPDX-License-Identifier: GPL-2.0-only */
/* The subcommands of bm that live in files of their own. */
#ifndef MRRC_BM_H
#define MRRC_BM_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds */
static inline uint64_t bm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* splitmix64's finalizer: @z's bits scattered, the same on every machine */
static inline uint64_t bm_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* For qsort() of uint64_t */
static inline int bm_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The @pct-th percentile (nearest rank) of @n > 0 sorted values */
static inline uint64_t bm_percentile(const uint64_t *sorted, size_t n,
				     unsigned int pct)
{
	return sorted[(n * pct + 99) / 100 - 1];
}

/*
 * An "ADDR[:PORT]" option: @arg cut at its colon, returned as the
 * address; the port, if given, checked (1 to 65535) into *@port (exits 2
 * if it is not one).
 */
const char *bm_opt_addr(const char *prog, const char *opt, char *arg,
			unsigned int *port);

/* bm fix: the frame pool's load over a file or a Redy cache (fixbench.c) */
int cmd_fix(int argc, char **argv);

#endif
