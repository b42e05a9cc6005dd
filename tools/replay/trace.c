// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc-replay - trace readers and synthetic generators.
 *
 * Every request becomes a byte range of one buffer address space, the way
 * the MRRC papers replay disk traces: requests that touch the same blocks
 * touch the same buffers.  Ranges are offset by TRACE_BASE so that they are
 * never zero.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

#define TRACE_BASE (1ULL << 32)
#define PAGE 4096ULL

static int push(struct trace *t, uint64_t addr, uint64_t len)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 65536;
		struct req *r = realloc(t->r, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		t->r = r;
		t->cap = cap;
	}
	t->r[t->n].addr = TRACE_BASE + addr;
	t->r[t->n].len = len;
	t->n++;
	return 0;
}

void trace_free(struct trace *t)
{
	free(t->r);
	memset(t, 0, sizeof(*t));
}

/* version,time,op,size,lbn: [lbn * 512, lbn * 512 + size). */
int trace_read_cloudphysics(FILE *in, struct trace *t, FILE *err)
{
	char line[512];
	unsigned long lineno = 0;

	while (fgets(line, sizeof(line), in)) {
		uint64_t ver, time, size, lbn;
		char op[16];
		int ret;

		lineno++;
		if (lineno == 1 && !strncmp(line, "version", 7))
			continue;
		if (sscanf(line, "%" SCNu64 ",%" SCNu64 ",%15[^,],%" SCNu64
			   ",%" SCNu64, &ver, &time, op, &size, &lbn) != 5 ||
		    !size) {
			fprintf(err, "line %lu: not version,time,op,size,lbn\n",
				lineno);
			return -EINVAL;
		}
		ret = push(t, lbn * 512, size);
		if (ret)
			return ret;
	}
	return 0;
}

/* SNIA MSR Cambridge: timestamp,host,disk,type,offset,size,latency. */
int trace_read_msr(FILE *in, struct trace *t, FILE *err)
{
	char line[512], host[64], type[16];
	unsigned long lineno = 0;

	while (fgets(line, sizeof(line), in)) {
		uint64_t ts, disk, off, size, lat;
		int ret;

		lineno++;
		if (sscanf(line, "%" SCNu64 ",%63[^,],%" SCNu64 ",%15[^,],%"
			   SCNu64 ",%" SCNu64 ",%" SCNu64, &ts, host, &disk,
			   type, &off, &size, &lat) != 7 || !size) {
			fprintf(err, "line %lu: not an MSR Cambridge record\n",
				lineno);
			return -EINVAL;
		}
		ret = push(t, off, size);
		if (ret)
			return ret;
	}
	return 0;
}

/* offset,length per line; '#' starts a comment. */
int trace_read_plain(FILE *in, struct trace *t, FILE *err)
{
	char line[256];
	unsigned long lineno = 0;

	while (fgets(line, sizeof(line), in)) {
		uint64_t off, len;
		int ret;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%" SCNu64 ",%" SCNu64, &off, &len) != 2 ||
		    !len) {
			fprintf(err, "line %lu: not offset,length\n", lineno);
			return -EINVAL;
		}
		ret = push(t, off, len);
		if (ret)
			return ret;
	}
	return 0;
}

/* xorshift64*: small, seeded, the same on every machine. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static double unit(uint64_t *s)
{
	return (rnd(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Zipf over [0, n): cumulative weights 1 / (i + 1)^alpha. */
static double *zipf_cdf(size_t n, double alpha)
{
	double *cdf = malloc(n * sizeof(*cdf)), sum = 0;
	size_t i;

	if (!cdf)
		return NULL;
	for (i = 0; i < n; i++)
		cdf[i] = (sum += 1.0 / pow((double)(i + 1), alpha));
	for (i = 0; i < n; i++)
		cdf[i] /= sum;
	return cdf;
}

static size_t zipf_draw(const double *cdf, size_t n, uint64_t *s)
{
	double u = unit(s);
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Objects are buffers of a fixed size each, 64 pages apart (so no two
 * overlap), ranked by popularity; which buffer is rank k is shuffled so
 * that popularity does not follow the address.  A request is one whole
 * buffer.
 */
static int synth(const struct synth *s, struct trace *t,
		 unsigned int (*size_of)(uint64_t *rng))
{
	uint64_t rng = s->seed ? s->seed : 1;
	unsigned int *pages;
	size_t *slot, i;
	double *cdf;
	int ret = 0;

	if (!s->objects || !s->requests)
		return -EINVAL;
	cdf = zipf_cdf(s->objects, s->zipf);
	pages = malloc(s->objects * sizeof(*pages));
	slot = malloc(s->objects * sizeof(*slot));
	if (!cdf || !pages || !slot) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < s->objects; i++) {
		pages[i] = size_of(&rng);
		slot[i] = i;
	}
	for (i = s->objects - 1; i > 0; i--) {
		size_t j = rnd(&rng) % (i + 1), tmp = slot[i];

		slot[i] = slot[j];
		slot[j] = tmp;
	}
	for (i = 0; !ret && i < s->requests; i++) {
		size_t o = zipf_draw(cdf, s->objects, &rng);

		ret = push(t, slot[o] * 64 * PAGE, pages[o] * PAGE);
	}
out:
	free(cdf);
	free(pages);
	free(slot);
	return ret;
}

/* Cello92-like: 1 or 2 pages, 80 % two pages. */
static unsigned int cello_size(uint64_t *rng)
{
	return unit(rng) < 0.8 ? 2 : 1;
}

/*
 * HTTPD-like: 1 to 32 pages, sizes rounded down to powers of two equally
 * likely (1, 2-3, 4-7, 8-15, 16-31, 32), uniform within each.
 */
static unsigned int httpd_size(uint64_t *rng)
{
	unsigned int k = rnd(rng) % 6, lo = 1u << k;

	return k == 5 ? 32 : lo + rnd(rng) % lo;
}

int trace_synth_cello(const struct synth *s, struct trace *t)
{
	return synth(s, t, cello_size);
}

int trace_synth_httpd(const struct synth *s, struct trace *t)
{
	return synth(s, t, httpd_size);
}
