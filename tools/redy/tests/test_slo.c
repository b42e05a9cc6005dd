// SPDX-License-Identifier: GPL-2.0-only
/*
 * Redy's configuration model and searches (tools/redy/slo.c) on synthetic
 * models: interpolation, the offline modelling's measurement plan, the
 * model file, and the searches against the exhaustive one.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "slo.h"

static const struct redy_space small = { .smax = 2, .cmax = 4, .bmax = 8,
					 .qmax = 8 };

static void test_space(void **state)
{
	struct redy_space sp = small;
	struct redy_model m;
	struct redy_cfg x;

	(void)state;
	assert_true(redy_space_valid(&sp));
	sp.smax = 5;	/* more server threads than clients */
	assert_false(redy_space_valid(&sp));
	sp = small;
	sp.qmax = REDY_QMAX + 1;
	assert_int_equal(redy_model_init(&m, &sp), -EINVAL);
	sp = small;
	sp.cmax = 0;
	assert_false(redy_space_valid(&sp));

	x = (struct redy_cfg){ 0, 1, 1, 1 };
	assert_true(redy_cfg_valid(&small, &x));
	x.b = 2;	/* one-sided: one request per operation */
	assert_false(redy_cfg_valid(&small, &x));
	x = (struct redy_cfg){ 2, 1, 1, 1 };	/* c < s */
	assert_false(redy_cfg_valid(&small, &x));
	x = (struct redy_cfg){ 1, 1, 1, 0 };
	assert_false(redy_cfg_valid(&small, &x));
	x = (struct redy_cfg){ 1, 5, 1, 1 };
	assert_false(redy_cfg_valid(&small, &x));
}

static void set(struct redy_model *m, unsigned int s, unsigned int c,
		unsigned int b, unsigned int q, double lat, double tput)
{
	struct redy_cfg x = { s, c, b, q };
	struct redy_perf p = { lat, tput };

	assert_int_equal(redy_model_set(m, &x, &p), 0);
}

static double lat_of(struct redy_model *m, unsigned int s, unsigned int c,
		     unsigned int b, unsigned int q)
{
	struct redy_cfg x = { s, c, b, q };
	struct redy_perf p;

	if (!redy_model_get(m, &x, &p))
		return -1;
	return p.lat_ns;
}

/* The paper's example: f(1,1,1,3) is the mean of f(1,1,1,2), f(1,1,1,4). */
static void test_interpolation(void **state)
{
	struct redy_model m;
	struct redy_perf p = { -1, 1 };
	struct redy_cfg x = { 1, 1, 1, 1 };

	(void)state;
	assert_int_equal(redy_model_init(&m, &small), 0);
	assert_int_equal(redy_model_set(&m, &x, &p), -EINVAL);
	set(&m, 1, 1, 1, 2, 100, 1000);
	set(&m, 1, 1, 1, 4, 200, 3000);
	set(&m, 1, 1, 2, 2, 300, 2000);
	set(&m, 1, 1, 2, 4, 500, 4000);
	set(&m, 1, 1, 4, 2, 700, 2000);
	set(&m, 1, 1, 4, 4, 900, 4000);
	redy_model_finish(&m);
	assert_true(redy_model_get(&m, &(struct redy_cfg){ 1, 1, 1, 3 }, &p));
	assert_true(p.lat_ns == 150 && p.tput_ops == 2000);
	/* two dimensions: q first, then b between the filled ones */
	assert_true(lat_of(&m, 1, 1, 2, 3) == 400);
	assert_true(lat_of(&m, 1, 1, 3, 3) == (400 + 800) / 2.0);
	assert_true(lat_of(&m, 1, 1, 3, 2) == 500);
	/* nothing is invented outside the measured box */
	assert_true(lat_of(&m, 1, 1, 1, 1) < 0);
	assert_true(lat_of(&m, 1, 1, 1, 5) < 0);
	assert_true(lat_of(&m, 1, 1, 8, 2) < 0);
	assert_true(lat_of(&m, 1, 2, 1, 2) < 0);
	assert_true(lat_of(&m, 0, 1, 1, 2) < 0);
	assert_int_equal(redy_model_leaves(&m), 3 * 4 - 0);
	assert_int_equal(m.nmeasured, 6);
	redy_model_free(&m);
}

static unsigned int rnd(unsigned int n)
{
	return (unsigned int)(random() % n);
}

/*
 * A random model: each grid point measured with probability 3/4, random
 * performance (latency and throughput unrelated to the parameters, so the
 * bounds are all the search has), then finished.
 */
static void random_model(struct redy_model *m, const struct redy_space *sp,
			 bool monotone)
{
	struct redy_cfg x;

	assert_int_equal(redy_model_init(m, sp), 0);
	for (x.s = 0; x.s <= sp->smax; x.s++)
		for (x.c = x.s ? x.s : 1; x.c <= sp->cmax; x.c++)
			for (x.b = 1; x.b <= (x.s ? sp->bmax : 1); x.b++)
				for (x.q = 1; x.q <= sp->qmax; x.q++) {
					struct redy_perf p;

					/* the monotone models are whole, so that
					 * interpolation keeps them monotone
					 */
					if (!monotone && rnd(4) == 0)
						continue;
					if (monotone) {
						/* latency grows with every
						 * parameter, noise aside
						 */
						p.lat_ns = 1000 + 100.0 * (x.s + x.c + x.b + x.q) + rnd(50);
					} else {
						p.lat_ns = 100 + rnd(10000);
					}
					p.tput_ops = rnd(100000);
					assert_int_equal(redy_model_set(m, &x, &p), 0);
				}
	redy_model_finish(m);
}

static void random_slo(struct redy_slo *slo, bool monotone)
{
	slo->lat_ns = monotone ? 1000 + rnd(4000) : 100 + rnd(10000);
	slo->tput_ops = rnd(100000);
}

/*
 * The bounded search returns exactly what the exhaustive one returns, on
 * any model, and reads no more leaves.
 */
static void test_search_is_exact(void **state)
{
	const struct redy_space sps[] = {
		{ 0, 1, 1, 1 }, { 1, 1, 1, 4 }, { 2, 4, 8, 8 }, { 4, 6, 16, 8 },
	};
	unsigned int i, k, found = 0, missed = 0;

	(void)state;
	srandom(1);
	for (i = 0; i < 200; i++) {
		const struct redy_space *sp = &sps[i % 4];
		struct redy_model m;

		random_model(&m, sp, false);
		for (k = 0; k < 100; k++) {
			struct redy_search_stats a, b;
			struct redy_cfg x, y;
			struct redy_slo slo;
			int ra, rb;

			random_slo(&slo, false);
			ra = redy_search(&m, &slo, &x, &a);
			rb = redy_search_exhaustive(&m, &slo, &y, &b);
			assert_int_equal(ra, rb);
			if (!ra) {
				assert_memory_equal(&x, &y, sizeof(x));
				found++;
			} else {
				missed++;
			}
			assert_true(a.leaves <= b.leaves);
		}
		redy_model_free(&m);
	}
	/* the random SLOs exercised both outcomes */
	assert_true(found > 1000 && missed > 1000);
}

/* Fig. 10 as printed is exact when latency grows with every parameter. */
static void test_fig10_monotone(void **state)
{
	const struct redy_space sp = { 3, 4, 8, 8 };
	unsigned int i, k;

	(void)state;
	srandom(2);
	for (i = 0; i < 50; i++) {
		struct redy_model m;
		struct redy_cfg x, y;
		struct redy_slo slo;
		int ra, rb;

		random_model(&m, &sp, true);
		for (k = 0; k < 200; k++) {
			random_slo(&slo, true);
			ra = redy_search_fig10(&m, &slo, &x, NULL);
			rb = redy_search_exhaustive(&m, &slo, &y, NULL);
			/* one step (100 ns) outweighs the noise (< 50) */
			assert_int_equal(ra, rb);
			if (!ra)
				assert_memory_equal(&x, &y, sizeof(x));
		}
		redy_model_free(&m);
	}
}

/*
 * ... and loses the optimum when latency falls with a parameter, as it
 * does with queue depth (the paper's Fig. 7: 4 in flight beat 1): the
 * first leaf over the latency SLO prunes its siblings.
 */
static void test_fig10_loses(void **state)
{
	const struct redy_space sp = { 0, 1, 1, 2 };
	const struct redy_slo slo = { 60, 1500 };
	struct redy_model m;
	struct redy_cfg x;

	(void)state;
	assert_int_equal(redy_model_init(&m, &sp), 0);
	set(&m, 0, 1, 1, 1, 100, 1000);
	set(&m, 0, 1, 1, 2, 50, 2000);
	redy_model_finish(&m);
	assert_int_equal(redy_search_fig10(&m, &slo, &x, NULL), -ENOENT);
	assert_int_equal(redy_search_exhaustive(&m, &slo, &x, NULL), 0);
	assert_int_equal(redy_search(&m, &slo, &x, NULL), 0);
	assert_true(x.s == 0 && x.c == 1 && x.b == 1 && x.q == 2);
	redy_model_free(&m);
}

/* The cheapest configuration wins: fewest server, then client threads. */
static void test_cheapest(void **state)
{
	const struct redy_space sp = { 2, 2, 2, 2 };
	struct redy_slo slo = { 1000, 5000 };
	struct redy_search_stats st;
	struct redy_model m;
	struct redy_cfg x;

	(void)state;
	assert_int_equal(redy_model_init(&m, &sp), 0);
	set(&m, 0, 1, 1, 1, 500, 1000);
	set(&m, 0, 2, 1, 2, 900, 4000);
	set(&m, 1, 1, 2, 2, 800, 6000);
	set(&m, 2, 2, 1, 1, 100, 90000);
	redy_model_finish(&m);
	assert_int_equal(redy_search(&m, &slo, &x, &st), 0);
	assert_true(x.s == 1 && x.c == 1 && x.b == 2 && x.q == 2);
	assert_true(st.pruned >= 1);	/* s = 0 could not reach 5000/s */
	slo.lat_ns = 200;
	assert_int_equal(redy_search(&m, &slo, &x, NULL), 0);
	assert_true(x.s == 2);
	slo.tput_ops = 100000;
	assert_int_equal(redy_search(&m, &slo, &x, NULL), -ENOENT);
	redy_model_free(&m);
}

struct fake_bench {
	unsigned int calls;
	unsigned int flat_q;	/* throughput stops growing at this q */
	int fail_at;		/* return an error on this call */
	struct redy_cfg seen[4096];
};

static int fake_measure(void *arg, const struct redy_cfg *x,
			struct redy_perf *p)
{
	struct fake_bench *fb = arg;
	unsigned int q = x->q < fb->flat_q ? x->q : fb->flat_q;

	if ((int)++fb->calls == fb->fail_at)
		return -EIO;
	fb->seen[fb->calls - 1] = *x;
	p->lat_ns = 1000.0 * x->b * x->q / (x->s + 1);
	/* server threads beyond 2 and clients beyond 4 do not help */
	p->tput_ops = 1000.0 * (x->s < 2 ? x->s + 1 : 3) *
		      (x->c < 4 ? x->c : 4) * x->b * q;
	return 0;
}

static bool pow2_or(unsigned int v, unsigned int max)
{
	return v == max || (v && !(v & (v - 1)));
}

static void test_build(void **state)
{
	const struct redy_space sp = { 8, 8, 16, 16 };
	struct fake_bench *fb = calloc(1, sizeof(*fb));
	struct redy_model m;
	unsigned int i, max_s = 0, max_c = 0, max_q = 0;

	(void)state;
	assert_non_null(fb);
	fb->flat_q = 4;
	assert_int_equal(redy_model_init(&m, &sp), 0);
	assert_int_equal(redy_model_build(&m, fake_measure, fb, 5), 0);
	assert_int_equal(m.nmeasured, fb->calls);
	for (i = 0; i < fb->calls; i++) {
		const struct redy_cfg *x = &fb->seen[i];

		assert_true(x->s == 0 || pow2_or(x->s, sp.smax));
		assert_true(pow2_or(x->c, sp.cmax) && pow2_or(x->b, sp.bmax) &&
			    pow2_or(x->q, sp.qmax));
		max_s = x->s > max_s ? x->s : max_s;
		max_c = x->c > max_c ? x->c : max_c;
		max_q = x->q > max_q ? x->q : max_q;
	}
	/* early termination: q stops after the first flat step (8 after 4),
	 * c after 8 (no gain over 4), s after 4 (no gain over 2)
	 */
	assert_int_equal(max_q, 8);
	assert_int_equal(max_c, 8);
	assert_int_equal(max_s, 4);
	/* the grid has 270 points; s = 8 and, per (s, c, b), q = 16 were
	 * not measured: 16 + 80 + 60 + 40
	 */
	assert_int_equal(fb->calls, 196);
	/* interpolated leaves exist between measured ones */
	assert_true(lat_of(&m, 1, 3, 3, 3) > 0);
	assert_true(redy_model_leaves(&m) > m.nmeasured);
	redy_model_free(&m);

	memset(fb, 0, sizeof(*fb));
	fb->flat_q = 100;
	fb->fail_at = 7;
	assert_int_equal(redy_model_init(&m, &sp), 0);
	assert_int_equal(redy_model_build(&m, fake_measure, fb, 5), -EIO);
	redy_model_free(&m);
	free(fb);
}

static void test_file(void **state)
{
	const struct redy_space sp = { 2, 3, 4, 4 };
	static const char *const bad[] = {
		"",
		"redy-model 2 1 1 1 1 64 50\n",
		"redy-model 1 1 1 1 1 64 101\n",
		"redy-model 1 1 1 1 1 64 50 x\n",
		"redy-model 1 9 1 1 1 64 50\n",
		"redy-model 1 1 1 1 1 64 50\n0 1 1 1 100\n",
		"redy-model 1 1 1 1 1 64 50\n0 1 2 1 100 100\n",
		"redy-model 1 1 1 1 1 64 50\n0 1 1 1 -5 100\n",
		"redy-model 1 1 1 1 1 64 50\n0 1 1 1 nan 100\n",
		"redy-model 1 1 1 1 1 64 50\n0 1 1 1 5 100 7\n",
	};
	struct redy_model m, n;
	struct redy_cfg x;
	struct redy_perf p, r;
	unsigned int i, line;
	char *buf;
	size_t len;
	FILE *f;

	(void)state;
	srandom(3);
	random_model(&m, &sp, false);
	m.record_bytes = 64;
	m.read_pct = 90;
	f = open_memstream(&buf, &len);
	assert_int_equal(redy_model_save(&m, f), 0);
	fclose(f);
	f = fmemopen(buf, len, "r");
	assert_int_equal(redy_model_load(&n, f, &line), 0);
	fclose(f);
	free(buf);
	assert_int_equal(n.record_bytes, 64);
	assert_int_equal(n.read_pct, 90);
	assert_int_equal(n.nmeasured, m.nmeasured);
	for (x.s = 0; x.s <= sp.smax; x.s++)
		for (x.c = x.s ? x.s : 1; x.c <= sp.cmax; x.c++)
			for (x.b = 1; x.b <= (x.s ? sp.bmax : 1); x.b++)
				for (x.q = 1; x.q <= sp.qmax; x.q++) {
					bool a = redy_model_get(&m, &x, &p);

					assert_int_equal(a, redy_model_get(&n, &x, &r));
					/* one decimal in the file */
					if (a)
						assert_true(p.lat_ns - r.lat_ns < 0.06 &&
							    r.lat_ns - p.lat_ns < 0.06);
				}
	redy_model_free(&m);
	redy_model_free(&n);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f = tmpfile();
		assert_non_null(f);
		fputs(bad[i], f);
		rewind(f);
		assert_int_equal(redy_model_load(&n, f, &line), -EINVAL);
		fclose(f);
		assert_null(n.leaf);
	}
}

/*
 * Planning for noise: a measured leaf is kept as its mean made worse by z
 * deviations; the file holds the means and the parameters; replanning
 * and loading give the same leaves; z = 0 gives the means back.  A
 * search under a plan picks what the planned values meet.
 */
static void test_plan(void **state)
{
	const struct redy_space sp = { 1, 1, 1, 1 };
	static const char *const bad[] = {
		"redy-model 2 1 1 1 1 64 50 2 0.1\n",
		"redy-model 2 1 1 1 1 64 50 nan 0.1 0.1\n",
		"redy-model 2 1 1 1 1 64 50 2 -0.1 0.1\n",
		"redy-model 2 1 1 1 1 64 50 2 0.1 inf\n",
		"redy-model 2 1 1 1 1 64 50 2 0.1 0.1 x\n",
	};
	const struct redy_cfg one = { 0, 1, 1, 1 }, two = { 1, 1, 1, 1 };
	const struct redy_slo slo = { 1e6, 950 };
	struct redy_perf p = { 1000, 1000 }, q = { 2000, 2000 }, r;
	struct redy_model m, n;
	struct redy_cfg x;
	unsigned int i, line;
	char *buf;
	size_t len;
	FILE *f;

	(void)state;
	assert_int_equal(redy_model_init(&m, &sp), 0);
	assert_int_equal(redy_model_set(&m, &one, &p), 0);
	assert_int_equal(redy_model_set(&m, &two, &q), 0);
	redy_model_finish(&m);
	/* the means: one-sided meets 950 ops/s */
	assert_int_equal(redy_search(&m, &slo, &x, NULL), 0);
	assert_int_equal(x.s, 0);
	assert_int_equal(redy_model_replan(&m, 2, 0.1, 0.05), 0);
	assert_true(redy_model_get(&m, &one, &r));
	assert_true(fabs(r.lat_ns - 1200) < 1e-6 && fabs(r.tput_ops - 900) < 1e-6);
	/* planned: 900 ops/s do not meet it, the two-sided leaf does */
	assert_int_equal(redy_search(&m, &slo, &x, NULL), 0);
	assert_int_equal(x.s, 1);
	assert_int_equal(redy_model_replan(&m, -1, 0.1, 0.1), -EINVAL);
	assert_int_equal(redy_model_replan(&m, 2, NAN, 0.1), -EINVAL);

	f = open_memstream(&buf, &len);
	assert_int_equal(redy_model_save(&m, f), 0);
	fclose(f);
	assert_true(!strncmp(buf, "redy-model 2 1 1 1 1 0 0 2 0.1000 0.0500\n", 41));
	assert_non_null(strstr(buf, "\n0 1 1 1 1000.0 1000.0\n"));
	f = fmemopen(buf, len, "r");
	assert_int_equal(redy_model_load(&n, f, &line), 0);
	fclose(f);
	free(buf);
	assert_true(redy_model_get(&n, &one, &r));
	assert_true(fabs(r.lat_ns - 1200) < 1e-6 && fabs(r.tput_ops - 900) < 1e-6);
	assert_int_equal(redy_model_replan(&n, 0, n.cv_lat, n.cv_tput), 0);
	assert_true(redy_model_get(&n, &two, &r));
	assert_true(fabs(r.lat_ns - 2000) < 1e-6 && fabs(r.tput_ops - 2000) < 1e-6);
	/* noise beyond reason plans for a twentieth of the mean, not less */
	assert_int_equal(redy_model_replan(&n, 10, 0, 1), 0);
	assert_true(redy_model_get(&n, &two, &r));
	assert_true(fabs(r.tput_ops - 100) < 1e-6);
	redy_model_free(&m);
	redy_model_free(&n);

	/*
	 * Replanning to z = 0 gives back each mean exactly, not a rounding
	 * away from it: an SLO of exactly a measured mean is met (x * f / f
	 * is not x for many x; redy.sh searches for such an SLO).
	 */
	assert_int_equal(redy_model_init(&m, &sp), 0);
	for (i = 0; i < 1000; i++) {
		p.lat_ns = 1000 + i * 0.1;
		p.tput_ops = 3000 - i * 0.7;
		assert_int_equal(redy_model_set(&m, &one, &p), 0);
		assert_int_equal(redy_model_replan(&m, 2, 0.1234, 0.0567), 0);
		assert_int_equal(redy_model_replan(&m, 3, 0.0711, 0.0333), 0);
		assert_int_equal(redy_model_replan(&m, 0, 0.0711, 0.0333), 0);
		assert_true(redy_model_get(&m, &one, &r));
		assert_true(r.lat_ns == p.lat_ns && r.tput_ops == p.tput_ops);
		assert_int_equal(redy_model_replan(&m, 2, 0.1234, 0.0567), 0);
	}
	redy_model_free(&m);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f = fmemopen((void *)bad[i], strlen(bad[i]), "r");
		assert_int_equal(redy_model_load(&n, f, &line), -EINVAL);
		fclose(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_space),
		cmocka_unit_test(test_interpolation),
		cmocka_unit_test(test_search_is_exact),
		cmocka_unit_test(test_fig10_monotone),
		cmocka_unit_test(test_fig10_loses),
		cmocka_unit_test(test_cheapest),
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_plan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
