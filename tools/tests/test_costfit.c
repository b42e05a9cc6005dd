// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of the least-squares fit behind a cache's measured
 * costs: kmod/costfit.h itself, with the few kernel helpers it uses
 * defined here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
#define BIT_ULL(n)	(1ULL << (n))
#define U32_MAX		UINT32_MAX
#define clamp_t(type, v, lo, hi) \
	((type)(v) < (type)(lo) ? (type)(lo) : \
	 (type)(v) > (type)(hi) ? (type)(hi) : (type)(v))
#define min_t(type, a, b) ((type)(a) < (type)(b) ? (type)(a) : (type)(b))
static inline s64 div64_s64(s64 a, s64 b)
{
	return a / b;
}

#include "../../kmod/costfit.h"

/* Fold @n samples of y = a * x + b, x cycling 1..@span; fits done. */
static unsigned int feed(struct mrrc_cost_fit *f, unsigned int n, u64 span,
			 u64 a, u64 b, u32 *slope, u32 *icpt)
{
	unsigned int i, fits = 0;

	for (i = 0; i < n; i++) {
		u64 x = 1 + i % span;

		fits += mrrc_cost_fold(f, x, a * x + b, slope, icpt);
	}
	return fits;
}

/* An exact line comes back exactly, after the first fit and for ever. */
static void test_exact_line(void **state)
{
	static const u64 lines[][3] = {	/* span, a, b */
		{ 16, 770, 7420 }, { 16, 50, 2000 }, { 4, 100, 3000 },
		{ 256, 1605, 354899 }, { 2, 1, 0 },
	};
	unsigned int i, w;

	(void)state;
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct mrrc_cost_fit f = { 0 };
		u32 slope = 0, icpt = 0;

		for (w = 0; w < 40; w++) {
			assert_int_equal(1, feed(&f, MRRC_COST_WINDOW, lines[i][0],
						 lines[i][1], lines[i][2],
						 &slope, &icpt));
			assert_int_equal(lines[i][1], slope);
			assert_int_equal(lines[i][2], icpt);
		}
	}
}

/* Nothing changes before a window is full. */
static void test_window(void **state)
{
	struct mrrc_cost_fit f = { 0 };
	u32 slope = 7, icpt = 9;

	(void)state;
	assert_int_equal(0, feed(&f, MRRC_COST_WINDOW - 1, 8, 100, 1000,
				 &slope, &icpt));
	assert_int_equal(7, slope);
	assert_int_equal(9, icpt);
	assert_true(mrrc_cost_fold(&f, 3, 1300, &slope, &icpt));
	assert_int_equal(100, slope);
	assert_int_equal(1000, icpt);
}

/*
 * One size only, or sizes that spread by less than a quarter of their
 * mean: the slope stays, the intercept is fitted through the mean.
 */
static void test_slope_kept_without_spread(void **state)
{
	struct mrrc_cost_fit f = { 0 };
	u32 slope = 770, icpt = 7420;
	unsigned int i;

	(void)state;
	assert_int_equal(1, feed(&f, MRRC_COST_WINDOW, 1, 0, 5000, &slope,
				 &icpt));
	assert_int_equal(770, slope);
	assert_int_equal(5000 - 770, icpt);

	/* 100 and 110 pages: a standard deviation of 5 % of the mean. */
	memset(&f, 0, sizeof(f));
	slope = 770;
	for (i = 0; i < MRRC_COST_WINDOW; i++)
		mrrc_cost_fold(&f, 100 + 10 * (i & 1), 90000 + 10000 * (i & 1),
			       &slope, &icpt);
	assert_int_equal(770, slope);
	assert_int_equal(95000 - 770 * 105, icpt);
}

/*
 * Costs that fall with size: the slope is 0, never negative, and the
 * intercept the mean.
 */
static void test_negative_slope(void **state)
{
	struct mrrc_cost_fit f = { 0 };
	u32 slope = 1, icpt = 1;
	unsigned int i;

	(void)state;
	for (i = 0; i < MRRC_COST_WINDOW; i++)
		mrrc_cost_fold(&f, 1 + i % 8, 10000 - 100 * (i % 8), &slope,
			       &icpt);
	assert_int_equal(0, slope);
	/* The mean of 10000 - 100 * (0..7). */
	assert_int_equal(9650, icpt);
}

/*
 * A negative intercept: the best line through the origin instead,
 * sum(x y) / sum(x^2) with a fitted slope, sum(y) / sum(x) with a kept
 * one.
 */
static void test_negative_intercept(void **state)
{
	struct mrrc_cost_fit f = { 0 };
	u64 sxy = 0, sxx = 0;
	u32 slope = 1, icpt = 1;
	unsigned int i;

	(void)state;
	for (i = 0; i < MRRC_COST_WINDOW; i++) {
		u64 x = 10 + 10 * (i % 4), y = 1000 * x - 5000;

		mrrc_cost_fold(&f, x, y, &slope, &icpt);
		sxy += x * y;
		sxx += x * x;
	}
	assert_int_equal(sxy / sxx, slope);
	assert_int_equal(0, icpt);

	/* 256 pages every time, 60 us each: 770 ns a page would be 197 us. */
	memset(&f, 0, sizeof(f));
	slope = 770;
	icpt = 7420;
	for (i = 0; i < MRRC_COST_WINDOW; i++)
		mrrc_cost_fold(&f, 256, 60000, &slope, &icpt);
	assert_int_equal(60000 / 256, slope);
	assert_int_equal(0, icpt);
}

/*
 * The slope is fitted from a spread of a quarter of the mean on: two
 * sizes 2d apart around m spread by d.
 */
static void test_spread_threshold(void **state)
{
	static const struct { u64 lo, hi; bool fitted; } cases[] = {
		{ 75, 125, true },	/* sd 25 = m / 4 */
		{ 76, 124, false },	/* sd 24 */
		{ 1, 3, true },
		{ 100, 110, false },
	};
	unsigned int c, i;

	(void)state;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct mrrc_cost_fit f = { 0 };
		u32 slope = 7, icpt = 0;

		for (i = 0; i < MRRC_COST_WINDOW; i++) {
			u64 x = i & 1 ? cases[c].hi : cases[c].lo;

			mrrc_cost_fold(&f, x, 100 * x + 100000, &slope, &icpt);
		}
		assert_int_equal(cases[c].fitted ? 100 : 7, slope);
	}
}

/* Samples beyond the clamps are dropped; the largest kept never wrap. */
static void test_clamps(void **state)
{
	struct mrrc_cost_fit f = { 0 };
	u32 slope = 5, icpt = 6;
	unsigned int i;

	(void)state;
	assert_false(mrrc_cost_fold(&f, MRRC_COST_MAX_X + 1, 1, &slope, &icpt));
	assert_false(mrrc_cost_fold(&f, 1, (u64)MRRC_COST_MAX_NS + 1, &slope,
				    &icpt));
	assert_false(mrrc_cost_fold(&f, 0, 1, &slope, &icpt));
	assert_int_equal(0, f.cur.n);

	/* The most a sample may be, for many windows: no overflow. */
	for (i = 0; i < 100 * MRRC_COST_WINDOW; i++)
		mrrc_cost_fold(&f, i & 1 ? MRRC_COST_MAX_X : MRRC_COST_MAX_X / 2,
			       MRRC_COST_MAX_NS, &slope, &icpt);
	assert_true(f.cur.n < MRRC_COST_WINDOW && f.prev.n == MRRC_COST_WINDOW);
	assert_int_equal(0, slope);
	assert_int_equal(MRRC_COST_MAX_NS, icpt);

	/* About the steepest line the clamps let through, exactly. */
	memset(&f, 0, sizeof(f));
	for (i = 0; i < 100 * MRRC_COST_WINDOW; i++)
		mrrc_cost_fold(&f, 1 + (i & 1), (1 + (i & 1)) * (U32_MAX / 2),
			       &slope, &icpt);
	assert_int_equal(U32_MAX / 2, slope);
	assert_int_equal(0, icpt);
}

/*
 * Each fit is of the last two windows: a new line is half of the next fit
 * and the whole of the one after.
 */
static void test_follows_change(void **state)
{
	struct mrrc_cost_fit f = { 0 };
	u32 slope = 0, icpt = 0;

	(void)state;
	feed(&f, 10 * MRRC_COST_WINDOW, 16, 100, 1000, &slope, &icpt);
	assert_int_equal(100, slope);
	feed(&f, MRRC_COST_WINDOW, 16, 300, 5000, &slope, &icpt);
	assert_true(slope > 100 && slope < 300);
	assert_true(icpt > 1000 && icpt < 5000);
	feed(&f, MRRC_COST_WINDOW, 16, 300, 5000, &slope, &icpt);
	assert_int_equal(300, slope);
	assert_int_equal(5000, icpt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_line),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_slope_kept_without_spread),
		cmocka_unit_test(test_negative_slope),
		cmocka_unit_test(test_negative_intercept),
		cmocka_unit_test(test_spread_threshold),
		cmocka_unit_test(test_clamps),
		cmocka_unit_test(test_follows_change),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
