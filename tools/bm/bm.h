/* SPDX-License-Identifier: GPL-2.0-only */
/* The subcommands of bm that live in files of their own. */
#ifndef MRRC_BM_H
#define MRRC_BM_H

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

/* CLOCK_MONOTONIC in nanoseconds */
static inline uint64_t bm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * @len bytes of file @fd at @off read into or written from @buf, however
 * many calls it takes; -EIO where the file ends first.
 */
static inline int bm_file_io(int fd, bool write, uint64_t off, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = write ? pwrite(fd, p, len, (off_t)off) :
				    pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* splitmix64's finalizer: @z's bits scattered, the same on every machine */
static inline uint64_t bm_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* splitmix64: a seeded stream, the same on every machine */
static inline uint64_t bm_rnd(uint64_t *s)
{
	return bm_mix64(*s += 0x9e3779b97f4a7c15ull);
}

static inline double bm_rnd01(uint64_t *s)
{
	return (double)(bm_rnd(s) >> 11) / 9007199254740992.0;	/* 2^53 */
}

/*
 * Zipf over [0, n) with skew theta (Gray et al., SIGMOD 1994, as YCSB
 * draws it): rank 0 the most popular.
 */
struct bm_zipf {
	uint64_t n;
	double theta, alpha, zetan, eta;
};

static inline void bm_zipf_init(struct bm_zipf *z, uint64_t n, double theta)
{
	double zeta2 = 1.0 + pow(0.5, theta);
	uint64_t i;

	z->n = n;
	z->theta = theta;
	z->zetan = 0;
	for (i = 1; i <= n; i++)
		z->zetan += 1.0 / pow((double)i, theta);
	z->alpha = 1.0 / (1.0 - theta);
	z->eta = (1.0 - pow(2.0 / (double)n, 1.0 - theta)) / (1.0 - zeta2 / z->zetan);
}

static inline uint64_t bm_zipf_next(const struct bm_zipf *z, uint64_t *s)
{
	double u = bm_rnd01(s), uz = u * z->zetan;
	uint64_t r;

	if (uz < 1.0)
		return 0;
	if (uz < 1.0 + pow(0.5, z->theta))
		return 1;
	r = (uint64_t)((double)z->n * pow(z->eta * u - z->eta + 1.0, z->alpha));
	return r < z->n ? r : z->n - 1;
}

/*
 * @perm: 0 .. @n - 1 in an order drawn from @s, so that the popular
 * ranks of a Zipf draw land anywhere, not on the first pages.
 */
static inline void bm_shuffle(uint64_t *perm, uint64_t n, uint64_t *s)
{
	uint64_t i, j, t;

	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n ? n - 1 : 0; i > 0; i--) {
		j = bm_rnd(s) % (i + 1);
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
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
