// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests for mrrc-replay: trace readers, synthetic generators
 * and the user-space LRU reference simulator.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "replay.h"

#define BASE (1ULL << 32)

static FILE *text(const char *s)
{
	return fmemopen((void *)s, strlen(s), "r");
}

static void test_cloudphysics(void **state)
{
	FILE *f = text("version,time,op,size,lbn\n"
		       "1,5633898,2a,512,42932745\n"
		       "1,5633899,28,6656,40409911\n");
	FILE *bad = text("version,time,op,size,lbn\n1,2,28,0,5\n");
	struct trace t = { 0 };

	(void)state;
	assert_int_equal(trace_read_cloudphysics(f, &t, stderr), 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.r[0].addr, BASE + 42932745ULL * 512);
	assert_int_equal(t.r[0].len, 512);
	assert_int_equal(t.r[1].len, 6656);
	trace_free(&t);
	assert_int_equal(trace_read_cloudphysics(bad, &t, stderr), -EINVAL);
	trace_free(&t);
	fclose(f);
	fclose(bad);
}

static void test_msr_and_plain(void **state)
{
	FILE *m = text("128166372003061629,hm,1,Read,3154132992,4096,1234\n");
	FILE *p = text("# offset,length\n8192,4096\n\n0,100\n");
	FILE *pbad = text("8192\n");
	struct trace t = { 0 };

	(void)state;
	assert_int_equal(trace_read_msr(m, &t, stderr), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.r[0].addr, BASE + 3154132992ULL);
	assert_int_equal(t.r[0].len, 4096);
	trace_free(&t);
	assert_int_equal(trace_read_plain(p, &t, stderr), 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.r[1].addr, BASE);
	assert_int_equal(t.r[1].len, 100);
	trace_free(&t);
	assert_int_equal(trace_read_plain(pbad, &t, stderr), -EINVAL);
	trace_free(&t);
	fclose(m);
	fclose(p);
	fclose(pbad);
}

/* Seeded, so the same trace every time; sizes as documented. */
static void test_synthetic(void **state)
{
	struct synth s = { .requests = 50000, .objects = 2000, .zipf = 0.8,
			   .seed = 5 };
	struct trace a = { 0 }, b = { 0 }, h = { 0 };
	size_t two = 0, i;

	(void)state;
	assert_int_equal(trace_synth_cello(&s, &a), 0);
	assert_int_equal(trace_synth_cello(&s, &b), 0);
	assert_int_equal(a.n, 50000);
	assert_memory_equal(a.r, b.r, a.n * sizeof(a.r[0]));
	for (i = 0; i < a.n; i++) {
		assert_true(a.r[i].len == 4096 || a.r[i].len == 8192);
		assert_int_equal((a.r[i].addr - BASE) % (64 * 4096), 0);
		two += a.r[i].len == 8192;
	}
	/* About 80 % two-page requests (over buffers, weighted by use). */
	assert_in_range(two * 100 / a.n, 70, 90);

	assert_int_equal(trace_synth_httpd(&s, &h), 0);
	for (i = 0; i < h.n; i++)
		assert_in_range(h.r[i].len / 4096, 1, 32);
	trace_free(&a);
	trace_free(&b);
	trace_free(&h);
	s.objects = 0;
	assert_int_equal(trace_synth_cello(&s, &a), -EINVAL);
}

/* A hand-checked LRU run: capacity 3 pages. */
static void test_refsim(void **state)
{
	struct req r[] = {
		{ BASE, 4096 }, { BASE + 65536, 8192 }, { BASE, 4096 },
		{ BASE + 131072, 4096 },	/* evicts B, the LRU */
		{ BASE + 65536, 8192 },		/* miss: evicts A */
		{ BASE, 4096 },			/* miss: evicts C */
	};
	struct trace t = { .r = r, .n = 6 };
	struct refsim_result res;

	(void)state;
	assert_int_equal(refsim_lru(&t, 3, 100, &res), 0);
	assert_int_equal(res.hits, 1);
	assert_int_equal(res.registrations, 5);
	assert_int_equal(res.deregistrations, 3);
	/* The region limit counts too. */
	assert_int_equal(refsim_lru(&t, 100, 1, &res), 0);
	assert_int_equal(res.hits, 0);
	assert_int_equal(res.deregistrations, 5);
	/* Larger than the cache. */
	assert_int_equal(refsim_lru(&t, 1, 100, &res), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cloudphysics),
		cmocka_unit_test(test_msr_and_plain),
		cmocka_unit_test(test_synthetic),
		cmocka_unit_test(test_refsim),
	};

	return cmocka_run_group_tests_name("mrrc-replay", tests, NULL, NULL);
}
