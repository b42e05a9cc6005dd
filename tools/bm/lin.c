// SPDX-License-Identifier: GPL-2.0-only
/* Linearizability of a register history: see lin.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lin.h"

struct cluster {
	uint64_t value;
	uint64_t winv;		/* its write's invocation (0: the initial) */
	uint64_t f, s;		/* earliest response, latest invocation */
};

static int by_value(const void *a, const void *b)
{
	const struct cluster *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

static int by_f(const void *a, const void *b)
{
	const struct cluster *x = a, *y = b;

	return x->f < y->f ? -1 : x->f > y->f;
}

static struct cluster *find(struct cluster *c, size_t n, uint64_t value)
{
	const struct cluster key = { .value = value };

	return bsearch(&key, c, n, sizeof(*c), by_value);
}

int lin_check(const struct lin_op *ops, size_t n, uint64_t initial,
	      char *why, size_t len)
{
	struct cluster *c, *fw, *bw, *k;
	size_t nc = 1, i, nf = 0, nb = 0, lo, hi;
	int r = 0;

	c = calloc(n + 1, sizeof(*c));
	fw = calloc(n + 1, sizeof(*fw));
	bw = calloc(n + 1, sizeof(*bw));
	if (!c || !fw || !bw) {
		r = -ENOMEM;
		goto out;
	}
	/* one cluster per written value, and the initial one (time 0) */
	c[0] = (struct cluster){ .value = initial, .f = 0, .s = 0 };
	for (i = 0; i < n; i++) {
		if (!ops[i].inv || ops[i].res <= ops[i].inv ||
		    (ops[i].write && ops[i].value == initial)) {
			r = -EINVAL;
			goto out;
		}
		if (ops[i].write)
			c[nc++] = (struct cluster){ .value = ops[i].value,
				.winv = ops[i].inv, .f = ops[i].res, .s = ops[i].inv };
	}
	qsort(c, nc, sizeof(*c), by_value);
	for (i = 1; i < nc; i++)
		if (c[i].value == c[i - 1].value) {
			r = -EINVAL;	/* two writes of one value */
			goto out;
		}
	for (i = 0; i < n; i++) {
		if (ops[i].write)
			continue;
		k = find(c, nc, ops[i].value);
		if (!k) {
			snprintf(why, len, "a read [%llu, %llu] returned %llu, never written",
				 (unsigned long long)ops[i].inv,
				 (unsigned long long)ops[i].res,
				 (unsigned long long)ops[i].value);
			r = 1;
			goto out;
		}
		if (k->value != initial && ops[i].res < k->winv) {
			snprintf(why, len, "a read [%llu, %llu] returned %llu, written only from %llu",
				 (unsigned long long)ops[i].inv,
				 (unsigned long long)ops[i].res,
				 (unsigned long long)ops[i].value,
				 (unsigned long long)k->winv);
			r = 1;
			goto out;
		}
		if (ops[i].res < k->f)
			k->f = ops[i].res;
		if (ops[i].inv > k->s)
			k->s = ops[i].inv;
	}
	for (i = 0; i < nc; i++) {
		if (c[i].f < c[i].s)
			fw[nf++] = c[i];
		else
			bw[nb++] = c[i];
	}
	/* forward zones: pairwise apart */
	qsort(fw, nf, sizeof(*fw), by_f);
	for (i = 1; i < nf; i++)
		if (fw[i].f < fw[i - 1].s) {
			snprintf(why, len, "values %llu and %llu: both must be current over [%llu, %llu]",
				 (unsigned long long)fw[i - 1].value,
				 (unsigned long long)fw[i].value,
				 (unsigned long long)fw[i].f,
				 (unsigned long long)(fw[i].s < fw[i - 1].s ?
						      fw[i].s : fw[i - 1].s));
			r = 1;
			goto out;
		}
	/* backward zones: none inside a forward one (the last starting before it) */
	for (i = 0; i < nb; i++) {
		lo = 0;
		hi = nf;
		while (lo < hi) {	/* forward zones with f < bw.s */
			size_t mid = (lo + hi) / 2;

			if (fw[mid].f < bw[i].s)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && bw[i].f < fw[lo - 1].s && fw[lo - 1].value != bw[i].value) {
			snprintf(why, len, "value %llu, current over [%llu, %llu], was overwritten by %llu then",
				 (unsigned long long)fw[lo - 1].value,
				 (unsigned long long)fw[lo - 1].f,
				 (unsigned long long)fw[lo - 1].s,
				 (unsigned long long)bw[i].value);
			r = 1;
			goto out;
		}
	}
out:
	free(c);
	free(fw);
	free(bw);
	return r;
}

/* Depth-first over the orders that respect real time. */
static bool brute(const struct lin_op *ops, size_t n, uint64_t cur,
		  unsigned int done)
{
	size_t i, j;

	if (done == (1u << n) - 1)
		return true;
	for (i = 0; i < n; i++) {
		if (done & 1u << i)
			continue;
		/* every op not placed yet must not have ended before i began */
		for (j = 0; j < n; j++)
			if (j != i && !(done & 1u << j) && ops[j].res < ops[i].inv)
				break;
		if (j < n)
			continue;
		if (ops[i].write ? brute(ops, n, ops[i].value, done | 1u << i) :
		    ops[i].value == cur && brute(ops, n, cur, done | 1u << i))
			return true;
	}
	return false;
}

int lin_check_brute(const struct lin_op *ops, size_t n, uint64_t initial)
{
	if (n > 10)
		return -EINVAL;
	return brute(ops, n, initial, 0) ? 0 : 1;
}
