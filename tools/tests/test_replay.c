// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests for mrrc-replay: trace readers, synthetic generators,
 * the user-space LRU reference simulator, and what it shares with the
 * benchmarks (tools/bench/benchjson.c): strict numbers, the device, JSON.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "benchjson.h"
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

static void test_parse_u64(void **state)
{
	static const char *const bad[] = {
		"", " 1", "1 ", "+1", "-1", "-0", "1x", "0x10", "1.0", "1e3",
		"abc", "1,2",
	};
	uint64_t v = 77;
	size_t i;

	(void)state;
	assert_int_equal(bench_parse_u64("0", 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(bench_parse_u64("42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(bench_parse_u64("007", 0, 100, &v), 0);
	assert_int_equal(v, 7);		/* decimal, not octal */
	assert_int_equal(bench_parse_u64("18446744073709551615", 0,
					 UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 77;
		assert_int_equal(bench_parse_u64(bad[i], 0, UINT64_MAX, &v),
				 -EINVAL);
		assert_int_equal(v, 77);	/* untouched */
	}
	assert_int_equal(bench_parse_u64(NULL, 0, 1, &v), -EINVAL);
	assert_int_equal(bench_parse_u64("18446744073709551616", 0,
					 UINT64_MAX, &v), -ERANGE);
	assert_int_equal(bench_parse_u64("0", 1, 10, &v), -ERANGE);
	assert_int_equal(bench_parse_u64("11", 1, 10, &v), -ERANGE);
	assert_int_equal(bench_parse_u64("10", 1, 10, &v), 0);
	assert_int_equal(v, 10);
}

static void test_parse_double(void **state)
{
	static const char *const bad[] = {
		"", " 1", "1 ", "+1", "-1", "-0.5", "inf", "nan", "infinity",
		"0x1p3", "1.5.", "1e", ".", "0.8x", "e5",
	};
	double v = 7;
	size_t i;

	(void)state;
	assert_int_equal(bench_parse_double("0.8", 0, 100, &v), 0);
	assert_true(v == 0.8);
	assert_int_equal(bench_parse_double(".5", 0, 100, &v), 0);
	assert_true(v == 0.5);
	assert_int_equal(bench_parse_double("2e-1", 0, 100, &v), 0);
	assert_true(v == 0.2);
	assert_int_equal(bench_parse_double("0", 0, 100, &v), 0);
	assert_true(v == 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 7;
		assert_int_equal(bench_parse_double(bad[i], 0, 1e9, &v),
				 -EINVAL);
		assert_true(v == 7);
	}
	assert_int_equal(bench_parse_double(NULL, 0, 1, &v), -EINVAL);
	assert_int_equal(bench_parse_double("100.5", 0, 100, &v), -ERANGE);
	assert_int_equal(bench_parse_double("1e999", 0, 1e308, &v), -ERANGE);
	assert_int_equal(bench_parse_double("0.5", 1, 2, &v), -ERANGE);
}

/*
 * A bad option value: a message on stderr and exit status 2.  Tried in a
 * fresh copy of this program (main() below), which exits holding nothing
 * that valgrind's leak check would count.
 */
static const char *self;

static int opt_child(const char *kind, const char *arg)
{
	if (!freopen("/dev/null", "w", stderr))
		return 99;
	if (!strcmp(kind, "double"))
		bench_opt_double("test", "-z", arg, 0, 100);
	else
		bench_opt_u64("test", "-n", arg, 1, 1000);
	return 0;
}

static int opt_status(int dbl, const char *arg)
{
	int st;
	pid_t pid = fork();

	if (!pid) {
		execlp(self, self, "--opt", dbl ? "double" : "u64", arg,
		       (char *)NULL);
		_exit(98);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void test_opt_exit(void **state)
{
	(void)state;
	assert_int_equal(bench_opt_u64("test", "-n", "1000", 1, 1000), 1000);
	assert_true(bench_opt_double("test", "-z", "0.25", 0, 1) == 0.25);
	assert_int_equal(opt_status(0, "foo"), 2);
	assert_int_equal(opt_status(0, "5x"), 2);
	assert_int_equal(opt_status(0, "-3"), 2);
	assert_int_equal(opt_status(0, "0"), 2);
	assert_int_equal(opt_status(0, "1001"), 2);
	assert_int_equal(opt_status(0, "500"), 0);
	assert_int_equal(opt_status(1, "foo"), 2);
	assert_int_equal(opt_status(1, "-0.1"), 2);
	assert_int_equal(opt_status(1, "101"), 2);
	assert_int_equal(opt_status(1, "0.8"), 0);
}

/* What bench_json_str() makes of @s. */
static char *json(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	bench_json_str(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void assert_json(const char *in, const char *out)
{
	char *s = json(in);

	assert_string_equal(s, out);
	free(s);
}

static void test_json_str(void **state)
{
	(void)state;
	assert_json("", "\"\"");
	assert_json(NULL, "\"\"");
	assert_json("cello", "\"cello\"");
	assert_json("a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
	assert_json("l1\nl2\r\t", "\"l1\\nl2\\r\\t\"");
	assert_json("\x01\x1f\x7f\b\f",
		    "\"\\u0001\\u001f\\u007f\\u0008\\u000c\"");
	/* Well-formed UTF-8 passes: 2, 3 and 4 bytes. */
	assert_json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e",
		    "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e\"");
	/* Anything else is U+FFFD, one per byte that starts no sequence. */
	assert_json("a\x80z", "\"a\\ufffdz\"");
	assert_json("\xc0\xaf", "\"\\ufffd\\ufffd\"");	/* overlong */
	assert_json("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");
	assert_json("\xed\xa0\x80",	/* a surrogate */
		    "\"\\ufffd\\ufffd\\ufffd\"");
	assert_json("\xf4\x90\x80\x80",	/* above U+10FFFF */
		    "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	assert_json("\xf5", "\"\\ufffd\"");
	assert_json("x\xe2\x82", "\"x\\ufffd\\ufffd\"");	/* cut short */
	assert_json("\xff\"", "\"\\ufffd\\\"\"");
}

static void test_device(void **state)
{
	char name[80];

	(void)state;
	assert_int_equal(unsetenv("MRRC_DEV"), 0);
	assert_string_equal(bench_device(NULL), "rxe0");
	assert_string_equal(bench_device("mlx5_0"), "mlx5_0");
	assert_int_equal(setenv("MRRC_DEV", "rxe1", 1), 0);
	assert_string_equal(bench_device(NULL), "rxe1");
	assert_string_equal(bench_device("siw0"), "siw0");	/* -d wins */
	assert_null(bench_device(""));
	assert_int_equal(setenv("MRRC_DEV", "", 1), 0);
	assert_null(bench_device(NULL));
	memset(name, 'x', sizeof(name));
	name[63] = 0;
	assert_string_equal(bench_device(name), name);	/* 63: fits */
	name[63] = 'x';
	name[64] = 0;
	assert_null(bench_device(name));
	assert_int_equal(unsetenv("MRRC_DEV"), 0);
}

/* A line as a program writes it, with the keys of the run. */
static char *line(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fputs("{\"bench\":\"t\"", f);
	bench_json_end(f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_json_end(void **state)
{
	struct utsname u;
	char want[512], *s, *p;

	(void)state;
	setenv("MRRC_KVER", "6.1.0-\"x\"", 1);
	setenv("MRRC_ACCEL", "kvm", 1);
	setenv("MRRC_COMMIT", "abc1234", 1);
	setenv("MRRC_DATE", "2026-01-02T03:04:05Z", 1);
	setenv("MRRC_DEV", "rxe1", 1);
	bench_init("test", NULL);
	assert_string_equal(bench_dev(), "rxe1");
	assert_string_equal(bench_kernel(), "6.1.0-\"x\"");
	s = line();
	assert_string_equal(s, "{\"bench\":\"t\","
			    "\"kernel\":\"6.1.0-\\\"x\\\"\","
			    "\"accel\":\"kvm\",\"device\":\"rxe1\","
			    "\"commit\":\"abc1234\","
			    "\"date\":\"2026-01-02T03:04:05Z\"}\n");
	free(s);

	/* -d wins; unset (or empty) variables: uname, unknown, now. */
	unsetenv("MRRC_KVER");
	setenv("MRRC_COMMIT", "", 1);
	unsetenv("MRRC_DATE");
	bench_init("test", "siw0");
	assert_int_equal(uname(&u), 0);
	assert_string_equal(bench_kernel(), u.release);
	s = line();
	snprintf(want, sizeof(want),
		 "{\"bench\":\"t\",\"kernel\":\"%s\",\"accel\":\"kvm\","
		 "\"device\":\"siw0\",\"commit\":\"unknown\",\"date\":\"",
		 u.release);
	assert_memory_equal(s, want, strlen(want));
	p = s + strlen(want);
	/* YYYY-MM-DDTHH:MM:SSZ */
	assert_int_equal(strlen(p), 20 + 3);
	assert_true(p[4] == '-' && p[7] == '-' && p[10] == 'T' &&
		    p[13] == ':' && p[16] == ':' && p[19] == 'Z');
	assert_string_equal(p + 20, "\"}\n");
	free(s);

	/* No MRRC_ACCEL: the kernel command line's, else "unknown". */
	unsetenv("MRRC_ACCEL");
	unsetenv("MRRC_DEV");
	unsetenv("MRRC_COMMIT");
	bench_init("test", NULL);
	assert_string_equal(bench_dev(), "rxe0");
	s = line();
	assert_non_null(strstr(s, ",\"accel\":\""));
	assert_null(strstr(s, ",\"accel\":\"\""));
	free(s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cloudphysics),
		cmocka_unit_test(test_msr_and_plain),
		cmocka_unit_test(test_synthetic),
		cmocka_unit_test(test_refsim),
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_parse_double),
		cmocka_unit_test(test_opt_exit),
		cmocka_unit_test(test_json_str),
		cmocka_unit_test(test_device),
		cmocka_unit_test(test_json_end),
	};

	self = argv[0];
	if (argc == 4 && !strcmp(argv[1], "--opt"))
		return opt_child(argv[2], argv[3]);
	return cmocka_run_group_tests_name("mrrc-replay", tests, NULL, NULL);
}
