// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Host test of libmrrc.so's old symbol versions: a program built against
 * an older header, bound to mrrc_cache_stats@MRRC_0.2 and friends, gets
 * no byte written past its smaller structure; one built against this
 * header passes its own size.  ioctl() is this program's, which the
 * shared library's calls resolve to.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "libmrrc.h"

/* What an older program calls: the old versions, bound by name. */
int old_cache_stats(int fd, void *st);
int old_global_stats(int fd, void *st);
int old_conn_query(int fd, uint32_t id, void *q);
__asm__(".symver old_cache_stats, mrrc_cache_stats@MRRC_0.2");
__asm__(".symver old_global_stats, mrrc_global_stats@MRRC_0.2");
__asm__(".symver old_conn_query, mrrc_conn_query@MRRC_0.3");

static uint32_t seen_size, seen_flags;

/* The kernel's side: it writes back as many bytes as it was told. */
int ioctl(int fd, unsigned long req, ...);
int ioctl(int fd, unsigned long req, ...)
{
	uint32_t *hdr;
	va_list ap;

	(void)fd;
	(void)req;
	va_start(ap, req);
	hdr = va_arg(ap, uint32_t *);
	va_end(ap);
	seen_size = hdr[0];
	seen_flags = hdr[1];
	memset(hdr + 3, 0x11, seen_size - 12);
	return 0;
}

#define CANARY 0x5a

static void assert_untouched(const unsigned char *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		assert_int_equal(p[i], CANARY);
}

static void test_old_stats_stay_within_0_2(void **state)
{
	unsigned char buf[sizeof(struct mrrc_cache_stats) + 64];

	(void)state;
	memset(buf, CANARY, sizeof(buf));
	assert_int_equal(old_cache_stats(3, buf), 0);
	assert_int_equal(seen_size, 184);
	assert_int_equal(seen_flags, 0);
	assert_untouched(buf, 184, sizeof(buf));

	/* mrrc_global_stats() came later, with 280 bytes (up to caches). */
	memset(buf, CANARY, sizeof(buf));
	assert_int_equal(old_global_stats(3, buf), 0);
	assert_int_equal(seen_size, 280);
	assert_int_equal(seen_flags, MRRC_STATS_GLOBAL);
	assert_untouched(buf, 280, sizeof(buf));
}

static void test_old_conn_query_stays_within_0_3(void **state)
{
	unsigned char buf[sizeof(struct mrrc_conn_query) + 64];

	(void)state;
	memset(buf, CANARY, sizeof(buf));
	assert_int_equal(old_conn_query(3, 7, buf), 0);
	assert_int_equal(seen_size, 104);
	assert_untouched(buf, 104, sizeof(buf));
}

/* Built against this header: the caller's own sizeof travels. */
static void test_new_callers_pass_their_size(void **state)
{
	struct {
		struct mrrc_cache_stats st;
		unsigned char after[32];
	} s;
	struct mrrc_conn_query q;

	(void)state;
	memset(&s, CANARY, sizeof(s));
	assert_int_equal(mrrc_cache_stats(3, &s.st), 0);
	assert_int_equal(seen_size, sizeof(s.st));
	assert_untouched(s.after, 0, sizeof(s.after));
	assert_int_equal(mrrc_global_stats(3, &s.st), 0);
	assert_int_equal(seen_flags, MRRC_STATS_GLOBAL);
	assert_int_equal(mrrc_conn_query(3, 9, &q), 0);
	assert_int_equal(seen_size, sizeof(q));
	assert_int_equal(q.id, 9);
	/* Smaller than the first version of the structure, or none. */
	assert_int_equal(mrrc_cache_stats_sized(3, &s.st, 183), -EINVAL);
	assert_int_equal(mrrc_conn_query_sized(3, 1, &q, 103), -EINVAL);
	assert_int_equal(mrrc_cache_stats_sized(3, NULL, sizeof(s.st)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_old_stats_stay_within_0_2),
		cmocka_unit_test(test_old_conn_query_stays_within_0_3),
		cmocka_unit_test(test_new_callers_pass_their_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
