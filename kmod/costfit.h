/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrrc - the least-squares fit behind a cache's measured costs
 * (kmod/cost.c).  Plain integer arithmetic on the sums of struct
 * mrrc_cost_fit, kept apart so that the host's unit tests
 * (tools/tests/test_costfit.c) run this very code.
 */
#ifndef MRRC_COSTFIT_H
#define MRRC_COSTFIT_H

#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/types.h>
#endif

#define MRRC_COST_WINDOW	32
#define MRRC_COST_MAX_X		BIT_ULL(18)	/* pages or regions */
#define MRRC_COST_MAX_NS	U32_MAX

/* Least-squares sums: x (pages or regions) against y (ns). */
struct mrrc_cost_sums {
	u64 n, sx, sy, sxx, sxy;
};

/* A measured cost: the window being filled and the one before it. */
struct mrrc_cost_fit {
	struct mrrc_cost_sums cur, prev;
};

/*
 * Fold one sample into @f; once MRRC_COST_WINDOW samples have come since
 * the last fit, fit y = icpt + slope * x through them and the window
 * before, set *@slope and *@icpt to the line and return true.  Unless the
 * sizes spread enough the slope stays as it is and only the intercept is
 * fitted.  A fit with a negative intercept gives way to a line through
 * the origin: the least-squares one where the slope was fitted, else the
 * mean ns over the mean x (clamping the intercept alone would charge
 * every size more than its samples took).  A sample beyond
 * the clamps (or of 0 pages or regions) is dropped, so that the sums
 * cannot overflow.
 */
static inline bool mrrc_cost_fold(struct mrrc_cost_fit *f, u64 x, u64 ns,
				  u32 *slope, u32 *icpt)
{
	struct mrrc_cost_sums t;
	s64 num, den, k, b;
	bool fitted;

	if (!x || x > MRRC_COST_MAX_X || ns > MRRC_COST_MAX_NS)
		return false;
	f->cur.n++;
	f->cur.sx += x;
	f->cur.sy += ns;
	f->cur.sxx += x * x;
	f->cur.sxy += x * ns;
	if (f->cur.n < MRRC_COST_WINDOW)
		return false;

	t.n = f->cur.n + f->prev.n;
	t.sx = f->cur.sx + f->prev.sx;
	t.sy = f->cur.sy + f->prev.sy;
	t.sxx = f->cur.sxx + f->prev.sxx;
	t.sxy = f->cur.sxy + f->prev.sxy;
	f->prev = f->cur;
	f->cur = (struct mrrc_cost_sums){};

	/*
	 * n <= 2 * MRRC_COST_WINDOW = 2^6, so with the clamps above n * sxy
	 * <= 2^6 * 2^6 * 2^50 and sx * sy <= 2^24 * 2^38: both within 2^62.
	 */
	num = (s64)(t.n * t.sxy) - (s64)(t.sx * t.sy);
	den = (s64)(t.n * t.sxx) - (s64)(t.sx * t.sx);
	/*
	 * den = n^2 var(x): the slope is fitted only where the sizes spread
	 * by at least a quarter of their mean; sizes nearly all alike would
	 * let the noise in the times decide it.
	 */
	fitted = den > 0 && den >= (s64)(t.sx * t.sx) / 16;
	k = fitted ? clamp_t(s64, div64_s64(num, den), 0, U32_MAX) : *slope;
	b = div64_s64((s64)t.sy - k * (s64)t.sx, t.n);
	if (b < 0) {
		/* x >= 1 in every sample: sx and sxx are not 0. */
		k = fitted ? div64_s64(t.sxy, t.sxx) : div64_s64(t.sy, t.sx);
		k = min_t(s64, k, U32_MAX);
		b = 0;
	}
	*slope = k;
	*icpt = min_t(s64, b, U32_MAX);
	return true;
}

#endif /* MRRC_COSTFIT_H */
