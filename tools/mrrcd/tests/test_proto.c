// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of mrrcd's text protocol engine (proto.c): the replies
 * memcached's clients parse, byte for byte, and its bounds against
 * hostile input.  Requests are fed as bytes, as a socket would deliver
 * them, whole or in pieces.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proto.h"

#define NOW 1000000u

struct fix {
	struct store s;
	struct mc_server srv;
	struct mc_conn c;
	char *out;		/* everything answered so far */
	size_t out_len;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	if (!f || store_init(&f->s, 8u << 20, NOW)) {
		free(f);
		return -1;
	}
	f->srv.store = &f->s;
	f->srv.set.maxbytes = 8u << 20;
	f->srv.set.maxconns = 1024;
	f->srv.set.port = 11211;
	f->srv.set.threads = 1;
	f->srv.started = NOW;
	mc_conn_init(&f->c, &f->srv, 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	mc_conn_free(&f->c);
	store_destroy(&f->s);
	free(f->out);
	free(f);
	return 0;
}

/* Take what the engine queued, answering more as the output drains. */
static enum mc_result collect(struct fix *f, enum mc_result r)
{
	for (;;) {
		size_t n = mc_out_pending(&f->c);

		if (n) {
			/* Bounded: at most the high mark plus one item. */
			assert_true(n <= MC_OUT_HIGH + MRRCD_ITEM_MAX + 512);
			f->out = realloc(f->out, f->out_len + n + 1);
			assert_non_null(f->out);
			memcpy(f->out + f->out_len, mc_out_data(&f->c), n);
			f->out_len += n;
			f->out[f->out_len] = 0;
			mc_out_consume(&f->c, n);
		}
		if (r != MC_BLOCKED)
			return r;
		r = mc_process(&f->c);
	}
}

/* Feed bytes in pieces of at most chunk, answering as they come. */
static enum mc_result feed_n(struct fix *f, const char *p, size_t len,
			     size_t chunk)
{
	enum mc_result r = mc_process(&f->c);

	while (len && r != MC_DONE) {
		size_t room;
		char *dst = mc_in_space(&f->c, &room);

		assert_non_null(dst);
		if (room > chunk)
			room = chunk;
		if (room > len)
			room = len;
		memcpy(dst, p, room);
		mc_in_commit(&f->c, room);
		p += room;
		len -= room;
		r = collect(f, mc_process(&f->c));
	}
	return r;
}

static enum mc_result feed(struct fix *f, const char *s)
{
	return feed_n(f, s, strlen(s), SIZE_MAX);
}

static void reset_out(struct fix *f)
{
	f->out_len = 0;
	if (f->out)
		f->out[0] = 0;
}

/* Send a request, expect exactly this answer. */
static void expect(struct fix *f, const char *req, const char *resp)
{
	reset_out(f);
	assert_int_equal(feed(f, req), MC_WANT_INPUT);
	assert_string_equal(f->out ? f->out : "", resp);
}

static void test_storage_replies(void **state)
{
	struct fix *f = *state;

	expect(f, "set k 5 0 3\r\nabc\r\n", "STORED\r\n");
	expect(f, "get k\r\n", "VALUE k 5 3\r\nabc\r\nEND\r\n");
	expect(f, "add k 0 0 1\r\nx\r\n", "NOT_STORED\r\n");
	expect(f, "add n 0 0 1\r\nx\r\n", "STORED\r\n");
	expect(f, "replace zz 0 0 1\r\nx\r\n", "NOT_STORED\r\n");
	expect(f, "replace n 1 0 1\r\ny\r\n", "STORED\r\n");
	expect(f, "append k 9 0 2\r\nde\r\n", "STORED\r\n");
	expect(f, "prepend k 9 0 2\r\n01\r\n", "STORED\r\n");
	expect(f, "append zz 0 0 1\r\nx\r\n", "NOT_STORED\r\n");
	expect(f, "get k n zz\r\n",
	       "VALUE k 5 7\r\n01abcde\r\nVALUE n 1 1\r\ny\r\nEND\r\n");
	expect(f, "set e 0 0 0\r\n\r\n", "STORED\r\n");
	expect(f, "get e\r\n", "VALUE e 0 0\r\n\r\nEND\r\n");
	/* Bare LF line ends are taken too. */
	expect(f, "set lf 0 0 1\nz\r\nget lf\n", "STORED\r\nVALUE lf 0 1\r\nz\r\nEND\r\n");
	/* Runs of spaces separate tokens. */
	expect(f, "  get   lf  \r\n", "VALUE lf 0 1\r\nz\r\nEND\r\n");
	expect(f, "set f 4294967295 0 1\r\nf\r\nget f\r\n",
	       "STORED\r\nVALUE f 4294967295 1\r\nf\r\nEND\r\n");
}

static void test_cas(void **state)
{
	struct fix *f = *state;
	char req[128], resp[128];
	unsigned long long cas;

	expect(f, "set c 0 0 1\r\na\r\n", "STORED\r\n");
	reset_out(f);
	feed(f, "gets c\r\n");
	assert_int_equal(sscanf(f->out, "VALUE c 0 1 %llu\r\n", &cas), 1);
	snprintf(req, sizeof(req), "cas c 0 0 1 %llu\r\nb\r\n", cas + 1);
	expect(f, req, "EXISTS\r\n");
	snprintf(req, sizeof(req), "cas c 0 0 1 %llu\r\nb\r\n", cas);
	expect(f, req, "STORED\r\n");
	expect(f, req, "EXISTS\r\n");
	expect(f, "cas nope 0 0 1 1\r\nb\r\n", "NOT_FOUND\r\n");
	snprintf(req, sizeof(req), "cas c 0 0 1 %llu noreply\r\nc\r\n",
		 cas + 1000);
	expect(f, req, "");
	expect(f, "cas c 0 0 1\r\n", "ERROR\r\n");
	expect(f, "cas c 0 0 1 x\r\n", "CLIENT_ERROR bad command line format\r\n");
	assert_int_equal(f->srv.c.cas_hits, 1);
	assert_int_equal(f->srv.c.cas_badval, 3);
	assert_int_equal(f->srv.c.cas_misses, 1);
	/* gets on many keys: each VALUE line carries its CAS. */
	reset_out(f);
	feed(f, "set d 0 0 1\r\nd\r\ngets c d\r\n");
	assert_non_null(strstr(f->out, "VALUE c 0 1 "));
	assert_non_null(strstr(f->out, "VALUE d 0 1 "));
	snprintf(resp, sizeof(resp), "%s", f->out + strlen(f->out) - 5);
	assert_string_equal(resp, "END\r\n");
}

static void test_noreply(void **state)
{
	struct fix *f = *state;

	expect(f, "set a 0 0 1 noreply\r\na\r\n", "");
	expect(f, "add a 0 0 1 noreply\r\nb\r\n", "");
	expect(f, "replace a 0 0 1 noreply\r\nc\r\n", "");
	expect(f, "append a 0 0 1 noreply\r\nd\r\n", "");
	expect(f, "prepend a 0 0 1 noreply\r\ne\r\n", "");
	expect(f, "get a\r\n", "VALUE a 0 3\r\necd\r\nEND\r\n");
	expect(f, "set n 0 0 1\r\n5\r\n", "STORED\r\n");
	expect(f, "incr n 5 noreply\r\ndecr n 1 noreply\r\nget n\r\n",
	       "VALUE n 0 1\r\n9\r\nEND\r\n");
	expect(f, "touch n 100 noreply\r\n", "");
	expect(f, "delete n noreply\r\ndelete n noreply\r\n", "");
	expect(f, "flush_all noreply\r\nget a\r\n", "END\r\n");
	expect(f, "verbosity 1 noreply\r\n", "");
	/* noreply silences the errors of that request too (memcached). */
	expect(f, "set k 0 0 1 noreply\r\nab\r\n", "ERROR\r\n");
}

static void test_arith(void **state)
{
	struct fix *f = *state;

	expect(f, "incr x 1\r\n", "NOT_FOUND\r\n");
	expect(f, "set x 0 0 20\r\n18446744073709551615\r\n", "STORED\r\n");
	expect(f, "incr x 2\r\n", "1\r\n");
	expect(f, "decr x 5\r\n", "0\r\n");
	expect(f, "incr x 18446744073709551615\r\n", "18446744073709551615\r\n");
	expect(f, "incr x 18446744073709551616\r\n",
	       "CLIENT_ERROR invalid numeric delta argument\r\n");
	expect(f, "incr x -1\r\n", "CLIENT_ERROR invalid numeric delta argument\r\n");
	expect(f, "set t 0 0 2\r\nab\r\nincr t 1\r\n",
	       "STORED\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\n");
	expect(f, "incr x\r\n", "ERROR\r\n");
	expect(f, "incr x 1 2 3\r\n", "ERROR\r\n");
	assert_int_equal(f->srv.c.incr_misses, 1);
	assert_int_equal(f->srv.c.incr_hits, 2);
	assert_int_equal(f->srv.c.decr_hits, 1);
}

static void test_delete_touch_gat(void **state)
{
	struct fix *f = *state;

	expect(f, "set k 3 0 1\r\nv\r\n", "STORED\r\n");
	expect(f, "delete k 5\r\n",
	       "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n");
	expect(f, "delete k 0\r\n", "DELETED\r\n");
	expect(f, "delete k\r\n", "NOT_FOUND\r\n");
	expect(f, "delete\r\n", "ERROR\r\n");
	expect(f, "delete a b c d e\r\n", "ERROR\r\n");
	expect(f, "set k 3 0 1\r\nv\r\n", "STORED\r\n");
	expect(f, "touch k abc\r\n", "CLIENT_ERROR invalid exptime argument\r\n");
	expect(f, "touch k 10\r\n", "TOUCHED\r\n");
	expect(f, "touch zz 10\r\n", "NOT_FOUND\r\n");
	expect(f, "gat 100 k zz\r\n", "VALUE k 3 1\r\nv\r\nEND\r\n");
	reset_out(f);
	feed(f, "gats 100 k\r\n");
	assert_memory_equal(f->out, "VALUE k 3 1 ", 12);
	expect(f, "gat\r\n", "ERROR\r\n");
	expect(f, "gat 10\r\n", "ERROR\r\n");
	expect(f, "gat abc k\r\n", "CLIENT_ERROR invalid exptime argument\r\n");
	/* gat moved the deadline to NOW + 100. */
	store_clock(&f->s, NOW + 99);
	expect(f, "get k\r\n", "VALUE k 3 1\r\nv\r\nEND\r\n");
	store_clock(&f->s, NOW + 100);
	expect(f, "get k\r\n", "END\r\n");
	expect(f, "set n 0 -1 1\r\nv\r\nget n\r\n", "STORED\r\nEND\r\n");
}

static void test_exptime(void **state)
{
	(void)state;
	assert_int_equal(mc_exptime(0, NOW), 0);
	assert_int_equal(mc_exptime(-1, NOW), 1);
	assert_int_equal(mc_exptime(10, NOW), NOW + 10);
	assert_int_equal(mc_exptime(60 * 60 * 24 * 30, NOW),
			 NOW + 60 * 60 * 24 * 30);
	/* Past 30 days it is a unix time. */
	assert_int_equal(mc_exptime(60 * 60 * 24 * 30 + 1, NOW),
			 60 * 60 * 24 * 30 + 1);
	assert_int_equal(mc_exptime(INT64_MAX, NOW), UINT32_MAX);
}

static void test_flush_all(void **state)
{
	struct fix *f = *state;

	expect(f, "set a 0 0 1\r\na\r\nflush_all\r\nget a\r\n",
	       "STORED\r\nOK\r\nEND\r\n");
	expect(f, "set a 0 0 1\r\na\r\nflush_all 10\r\n", "STORED\r\nOK\r\n");
	store_clock(&f->s, NOW + 9);
	expect(f, "get a\r\n", "VALUE a 0 1\r\na\r\nEND\r\n");
	store_clock(&f->s, NOW + 10);
	expect(f, "get a\r\n", "END\r\n");
	expect(f, "flush_all abc\r\n", "CLIENT_ERROR invalid exptime argument\r\n");
	expect(f, "flush_all 0\r\n", "OK\r\n");
	assert_int_equal(f->srv.c.cmd_flush, 3);
}

/* stats items of class 0 holding n items, every other count 0 */
#define CLASS0_ITEMS(n)							\
	"STAT items:0:number " n "\r\n"					\
	"STAT items:0:evicted 0\r\nSTAT items:0:evicted_nonzero 0\r\n"	\
	"STAT items:0:outofmemory 0\r\nSTAT items:0:reclaimed 0\r\n"	\
	"STAT items:0:crawler_reclaimed 0\r\nSTAT items:0:evicted_time 0\r\n"

static void test_misc_commands(void **state)
{
	struct fix *f = *state;

	expect(f, "version\r\n", "VERSION " MC_VERSION "\r\n");
	expect(f, "version foo bar\r\n", "VERSION " MC_VERSION "\r\n");
	expect(f, "verbosity\r\n", "ERROR\r\n");
	expect(f, "verbosity 1\r\n", "OK\r\n");
	assert_int_equal(f->srv.verbosity, 1);
	expect(f, "verbosity a\r\n", "CLIENT_ERROR bad command line format\r\n");
	expect(f, "verbosity noreply\r\n", "");
	expect(f, "bogus\r\n", "ERROR\r\n");
	expect(f, "SET k 0 0 1\r\n", "ERROR\r\n");
	expect(f, "\r\n", "ERROR\r\n");
	expect(f, "get\r\n", "ERROR\r\n");
	expect(f, "stats bogus\r\n", "ERROR\r\n");
	expect(f, "stats items\r\n", "END\r\n");
	/* An item of 66 bytes: class 0 (96-byte chunks). */
	expect(f, "set a 0 0 1\r\na\r\nstats items\r\n",
	       "STORED\r\n"
	       CLASS0_ITEMS("1")
	       "END\r\n");
	/* Reset: the counters go, the class (it has a page) stays listed. */
	expect(f, "delete a\r\nstats reset\r\nstats items\r\n",
	       "DELETED\r\nRESET\r\n"
	       CLASS0_ITEMS("0")
	       "END\r\n");
}

static void test_stats(void **state)
{
	struct fix *f = *state;
	static const char *const names[] = {
		"pid", "uptime", "time", "version", "curr_connections",
		"total_connections", "cmd_get", "cmd_set", "get_hits",
		"get_misses", "curr_items", "total_items", "bytes",
		"limit_maxbytes", "evictions", "threads", "rusage_user",
	};
	char line[128];
	size_t i;

	expect(f, "set a 0 0 1\r\na\r\nget a b\r\n",
	       "STORED\r\nVALUE a 0 1\r\na\r\nEND\r\n");
	reset_out(f);
	feed(f, "stats\r\n");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(line, sizeof(line), "STAT %s ", names[i]);
		assert_non_null(strstr(f->out, line));
	}
	assert_non_null(strstr(f->out, "STAT cmd_get 2\r\n"));
	assert_non_null(strstr(f->out, "STAT get_hits 1\r\n"));
	assert_non_null(strstr(f->out, "STAT get_misses 1\r\n"));
	assert_non_null(strstr(f->out, "STAT cmd_set 1\r\n"));
	assert_non_null(strstr(f->out, "STAT curr_items 1\r\n"));
	assert_non_null(strstr(f->out, "STAT limit_maxbytes 8388608\r\n"));
	assert_string_equal(f->out + f->out_len - 5, "END\r\n");
	reset_out(f);
	feed(f, "stats settings\r\n");
	assert_non_null(strstr(f->out, "STAT maxconns 1024\r\n"));
	assert_non_null(strstr(f->out, "STAT udpport 0\r\n"));
	expect(f, "stats reset\r\n", "RESET\r\n");
	reset_out(f);
	feed(f, "stats\r\n");
	assert_non_null(strstr(f->out, "STAT cmd_get 0\r\n"));
	assert_non_null(strstr(f->out, "STAT curr_items 1\r\n"));
}

static void test_malformed_storage(void **state)
{
	struct fix *f = *state;
	char key[300], req[400];

	/* The length cannot be trusted: the block is read as commands. */
	expect(f, "set k 0 0 -1\r\n", "CLIENT_ERROR bad command line format\r\n");
	expect(f, "set k 0 0 1x\r\n", "CLIENT_ERROR bad command line format\r\n");
	expect(f, "set k -1 0 1\r\na\r\n",
	       "CLIENT_ERROR bad command line format\r\nERROR\r\n");
	expect(f, "set k 4294967296 0 1\r\na\r\n",
	       "CLIENT_ERROR bad command line format\r\nERROR\r\n");
	expect(f, "set k 0 0 99999999999\r\n",
	       "CLIENT_ERROR bad command line format\r\n");
	expect(f, "set k 0 0\r\n", "ERROR\r\n");
	expect(f, "set k 0 0 1 extra junk\r\na\r\n", "ERROR\r\nERROR\r\n");
	memset(key, 'x', 251);
	key[251] = 0;
	snprintf(req, sizeof(req), "set %s 0 0 1\r\na\r\n", key);
	expect(f, req, "CLIENT_ERROR bad command line format\r\nERROR\r\n");
	snprintf(req, sizeof(req), "get %s\r\n", key);
	expect(f, req, "CLIENT_ERROR bad command line format\r\n");
	key[250] = 0;
	snprintf(req, sizeof(req), "set %s 0 0 1\r\na\r\n", key);
	expect(f, req, "STORED\r\n");
	expect(f, "set a\x01" "b 0 0 1\r\n", "CLIENT_ERROR bad command line format\r\n");
	expect(f, "get k\x7f\r\n", "CLIENT_ERROR bad command line format\r\n");
	/* A data block without its CRLF is refused; the old value stays. */
	expect(f, "set g 0 0 1\r\ng\r\n", "STORED\r\n");
	expect(f, "set g 0 0 3\r\nabcd\r\n", "CLIENT_ERROR bad data chunk\r\nERROR\r\n");
	expect(f, "get g\r\n", "VALUE g 0 1\r\ng\r\nEND\r\n");
}

static void test_too_large(void **state)
{
	struct fix *f = *state;
	size_t max = MRRCD_ITEM_MAX - MRRCD_ITEM_HDR_SIZE - 1;
	size_t len = max + 200;
	char head[64];
	char *req = malloc(len + 64);
	int n;

	assert_non_null(req);
	expect(f, "set b 0 0 1\r\nb\r\n", "STORED\r\n");
	n = snprintf(head, sizeof(head), "set b 0 0 %zu\r\n", max + 1);
	memcpy(req, head, (size_t)n);
	memset(req + n, 'v', max + 1);
	memcpy(req + n + max + 1, "\r\nget b\r\n", 10);
	/* Refused, the block skipped whole, and (memcached) the old b gone. */
	reset_out(f);
	assert_int_equal(feed_n(f, req, strlen(req), 4096), MC_WANT_INPUT);
	assert_string_equal(f->out,
			    "SERVER_ERROR object too large for cache\r\nEND\r\n");
	/* The largest item fits. */
	n = snprintf(head, sizeof(head), "set b 0 0 %zu\r\n", max);
	memcpy(req, head, (size_t)n);
	memset(req + n, 'v', max);
	memcpy(req + n + max, "\r\n", 3);
	expect(f, req, "STORED\r\n");
	reset_out(f);
	feed(f, "get b\r\n");
	assert_int_equal(f->out_len, strlen("VALUE b 0 \r\n\r\nEND\r\n") + 7 +
			 max);
	free(req);
}

static void test_staging_budget(void **state)
{
	struct fix *f = *state;

	/* Other connections hold almost all of the staging budget. */
	f->srv.staged = MC_STAGE_MAX - 10;
	expect(f, "set s 0 0 100\r\n",
	       "SERVER_ERROR out of memory storing object\r\n");
	expect(f, "version\r\n", "");	/* swallowed as data */
	f->srv.staged = 0;
	reset_out(f);
	/* The rest of the 102 bytes (block and CRLF) after the 9 above. */
	feed(f, "0123456789012345678901234567890123456789"
		"0123456789012345678901234567890123456789"
		"01234567890\r\nversion\r\n");
	assert_string_equal(f->out, "VERSION " MC_VERSION "\r\n");
	/* A block in pieces is staged, and released once stored. */
	expect(f, "set s 0 0 5\r\n", "");
	assert_int_equal(f->srv.staged, 7);
	expect(f, "ab", "");
	expect(f, "cde\r\n", "STORED\r\n");
	assert_int_equal(f->srv.staged, 0);
}

static void test_line_limits(void **state)
{
	struct fix *f = *state;
	char *line = malloc(MC_GET_LINE_MAX + 16);
	size_t i;

	assert_non_null(line);
	/* A long retrieval line is fine... */
	strcpy(line, "get");
	for (i = 3; i < 10000; i += 2)
		memcpy(line + i, " k", 2);
	memcpy(line + i, "\r\n", 3);
	expect(f, line, "END\r\n");
	/* ...a long command line is not, and ends the connection. */
	memset(line, 'a', MC_LINE_MAX + 1);
	line[MC_LINE_MAX + 1] = 0;
	reset_out(f);
	assert_int_equal(feed(f, line), MC_DONE);
	assert_string_equal(f->out, "CLIENT_ERROR line too long\r\n");
	free(line);
}

static void test_get_line_too_long(void **state)
{
	struct fix *f = *state;
	char *line = malloc(MC_GET_LINE_MAX + 16);
	size_t i;

	assert_non_null(line);
	strcpy(line, "get");
	for (i = 3; i < MC_GET_LINE_MAX + 8; i += 2)
		memcpy(line + i, " k", 2);
	line[i] = 0;
	reset_out(f);
	assert_int_equal(feed_n(f, line, i, 1000), MC_DONE);
	assert_string_equal(f->out, "CLIENT_ERROR line too long\r\n");
	free(line);
}

static void test_quit_and_binary(void **state)
{
	struct fix *f = *state;

	reset_out(f);
	assert_int_equal(feed(f, "version\r\nquit\r\nversion\r\n"), MC_DONE);
	assert_string_equal(f->out, "VERSION " MC_VERSION "\r\n");
	mc_conn_free(&f->c);
	mc_conn_init(&f->c, &f->srv, 2);
	reset_out(f);
	assert_int_equal(feed_n(f, "\x80\x01\x00\x00", 4, SIZE_MAX), MC_DONE);
	assert_int_equal(f->out_len, 0);
}

/* The same requests, byte by byte, give the same answers. */
static void test_fragmented_input(void **state)
{
	struct fix *f = *state;
	static const char script[] =
		"set a 1 0 5\r\nhello\r\nget a\r\nappend a 0 0 1\r\n!\r\n"
		"get a b\r\nincr n 1\r\nset n 0 0 1\r\n7\r\nincr n 1\r\n"
		"delete a\r\nbogus line\r\nget a n\r\nstats settings\r\n";
	char *whole;

	reset_out(f);
	feed(f, script);
	whole = strdup(f->out);
	assert_non_null(whole);
	expect(f, "flush_all\r\n", "OK\r\n");
	reset_out(f);
	feed_n(f, script, strlen(script), 1);
	assert_string_equal(whole, f->out);
	free(whole);
}

/* A multi-get of big values: output is produced as it drains. */
static void test_output_backpressure(void **state)
{
	struct fix *f = *state;
	size_t vlen = 200000, i;
	char *req = malloc(vlen + 64);
	char head[64];
	enum mc_result r;
	int n;

	assert_non_null(req);
	for (i = 0; i < 10; i++) {
		n = snprintf(head, sizeof(head), "set big%zu 0 0 %zu\r\n", i,
			     vlen);
		memcpy(req, head, (size_t)n);
		memset(req + n, (int)('a' + i), vlen);
		memcpy(req + n + vlen, "\r\n", 3);
		expect(f, req, "STORED\r\n");
	}
	strcpy(req, "get big0 big1 big2 big3 big4 big5 big6 big7 big8 big9\r\n");
	{
		size_t room;
		char *dst = mc_in_space(&f->c, &room);

		memcpy(dst, req, strlen(req));
		mc_in_commit(&f->c, strlen(req));
	}
	/* Without draining, it stops with a bounded output queue. */
	r = mc_process(&f->c);
	assert_int_equal(r, MC_BLOCKED);
	assert_true(mc_out_pending(&f->c) <= MC_OUT_HIGH + vlen + 100);
	assert_true(mc_out_pending(&f->c) < 10 * vlen);
	reset_out(f);
	r = collect(f, r);
	assert_int_equal(r, MC_WANT_INPUT);
	assert_int_equal(f->out_len, 10 * (vlen + strlen("VALUE big0 0 200000\r\n\r\n")) + 5);
	assert_string_equal(f->out + f->out_len - 5, "END\r\n");
	free(req);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_storage_replies),
		T(test_cas),
		T(test_noreply),
		T(test_arith),
		T(test_delete_touch_gat),
		cmocka_unit_test(test_exptime),
		T(test_flush_all),
		T(test_misc_commands),
		T(test_stats),
		T(test_malformed_storage),
		T(test_too_large),
		T(test_staging_budget),
		T(test_line_limits),
		T(test_get_line_too_long),
		T(test_quit_and_binary),
		T(test_fragmented_input),
		T(test_output_backpressure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
