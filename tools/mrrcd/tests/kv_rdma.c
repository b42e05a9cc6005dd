// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrcd over RDMA, against a running daemon (tests/kv_rdma.sh starts it in
 * the test VM): two-sided requests, one-sided GETs agreeing with them,
 * readers racing writers never seeing a torn value, and recency from
 * one-sided reads reaching the daemon's eviction.  TAP on stdout.
 *
 * usage: kv_rdma HOST PORT TEST   (TEST: basic, hostile, hostile-daemon,
 *        race, recency-faa, recency-sample, recency-none)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/wait.h>

#include "kvclient.h"
#include "kvwire.h"
#include "libmrrc.h"

static const char *host;
static unsigned int port;
static int failed;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		printf("# %s:%d: %s: ", __FILE__, __LINE__, #cond);	\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		failed = 1;						\
		return -1;						\
	}								\
} while (0)

static int connect_rdma(struct kvc *k)
{
	int err = kvc_connect_rdma(k, NULL, host, port);

	CHECK(!err, "connect: %s", strerror(-err));
	CHECK(k->rem_ok, "no arena banner: one-sided reads unavailable");
	CHECK(!k->st.oget_reads, "the connect's READ counted as a GET's");
	return 0;
}

/* A value whose every byte says which version it is and how long. */
static size_t fill_value(char *buf, unsigned int version)
{
	static const size_t lens[] = { 1, 100, 4000, 5000, 70000, 300000 };
	size_t len = lens[version % 6], i;

	for (i = 0; i < len; i++)
		buf[i] = (char)('a' + version % 26);
	return len;
}

static bool value_ok(const char *v, size_t len)
{
	static const size_t lens[] = { 1, 100, 4000, 5000, 70000, 300000 };
	unsigned int ver;
	size_t i;

	if (!len || v[0] < 'a' || v[0] > 'z')
		return false;
	for (i = 0; i < len; i++)
		if (v[i] != v[0])
			return false;
	/* Some version with this letter has this length. */
	for (ver = (unsigned int)(v[0] - 'a'); ver < 26 * 6; ver += 26)
		if (lens[ver % 6] == len)
			return true;
	return false;
}

static int basic(void)
{
	static const size_t sizes[] = { 0, 1, 100, 4095, 65536, 200000,
					(1u << 20) - 64 - 8 };
	char *buf = malloc(1u << 20);
	const char *v, *o;
	size_t len, olen, i, j;
	struct kvc k;
	uint32_t fl;
	int err;

	CHECK(buf, "malloc");
	if (connect_rdma(&k))
		return -1;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char key[16];

		snprintf(key, sizeof(key), "size:%zu", i);
		for (j = 0; j < sizes[i]; j++)
			buf[j] = (char)(j * 7 + i);
		err = kvc_store(&k, "set", key, buf, sizes[i], 42, 0);
		CHECK(!err, "set %zu bytes: %s", sizes[i], strerror(-err));
		err = kvc_get(&k, key, &v, &len, &fl);
		CHECK(!err && len == sizes[i] && fl == 42 &&
		      !memcmp(v, buf, len), "two-sided get of %zu bytes: %s",
		      sizes[i], strerror(-err));
		err = kvc_oget(&k, key, &o, &olen, &fl);
		CHECK(!err && olen == sizes[i] && fl == 42 &&
		      !memcmp(o, buf, olen), "one-sided get of %zu bytes: %s",
		      sizes[i], strerror(-err));
	}
	/* The same sizes by FRRWP (rset): the module writes the value. */
	for (i = 1; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char key[16];

		snprintf(key, sizeof(key), "rset:%zu", i);
		for (j = 0; j < sizes[i]; j++)
			buf[j] = (char)(j * 13 + i);
		err = kvc_rset(&k, key, buf, sizes[i], 7, 0);
		CHECK(!err, "rset %zu bytes: %s", sizes[i], strerror(-err));
		err = kvc_get(&k, key, &v, &len, &fl);
		CHECK(!err && len == sizes[i] && fl == 7 &&
		      !memcmp(v, buf, len), "get after rset of %zu bytes: %s",
		      sizes[i], strerror(-err));
	}
	/*
	 * rset noreply, then a get in a SEND of its own that arrives while
	 * the value is still to come: answered once it has come.  On a
	 * connection of its own, as the stream is left one reply ahead.
	 */
	{
		static const char a[] = "rset nr 0 0 3000 900 noreply\r\n";
		static const char b[] = "get nr\r\n";
		struct mrrc_wr w = {
			.opcode = MRRC_OP_CRW, .addr = (uintptr_t)buf,
			.len = 3000, .tag = 900, .wr_id = 0xff00,
		};
		struct kvc q;
		bool got;

		if (connect_rdma(&q))
			return -1;
		w.conn = q.conn;
		memset(buf, 'n', 3000);
		err = kvc_send(&q, a, sizeof(a) - 1);
		err = err ?: kvc_send(&q, b, sizeof(b) - 1);
		err = err ?: mrrc_post(q.fd, &w, 1, NULL);
		CHECK(!err, "rset noreply: %s", strerror(-err));
		/* Its reply must come with nothing more sent: 5 s. */
		for (j = 0, got = 0; j < 50 && !got; j++) {
			struct mrrc_cqe c;

			if (mrrc_poll_cq(q.fd, &c, 1) == 1)
				got = c.opcode == MRRC_OP_RECV && !c.status &&
				      c.byte_len >= 3000;
			else
				mrrc_wait(q.fd, 100);
		}
		CHECK(got, "a get queued behind rset noreply was not answered");
		kvc_close(&q);
	}
	err = kvc_rset(&k, "toobig", buf, 1u << 20, 0, 0);
	CHECK(err == -E2BIG, "rset of 1 MiB: %s", strerror(-err));
	err = kvc_store(&k, "set", "toobig", buf, 1u << 20, 0, 0);
	CHECK(err == -E2BIG, "1 MiB value: %s", strerror(-err));
	err = kvc_store(&k, "add", "size:1", "x", 1, 0, 0);
	CHECK(err == -EEXIST, "add on a present key: %s", strerror(-err));
	/* a mode is one of five: nothing else reaches the request line */
	CHECK(kvc_store(&k, "cas", "size:1", "x", 1, 0, 0) == -EINVAL &&
	      kvc_store(&k, "set size:1 0 0 1\r\nx\r\nset", "size:2", "y", 1, 0, 0) ==
	      -EINVAL, "bad store modes refused");
	err = kvc_delete(&k, "size:1");
	CHECK(!err, "delete: %s", strerror(-err));
	err = kvc_oget(&k, "size:1", &o, &olen, NULL);
	CHECK(err == -ENOENT, "one-sided get after delete: %s", strerror(-err));
	err = kvc_oget(&k, "never-stored", &o, &olen, NULL);
	CHECK(err == -ENOENT, "one-sided get of a missing key: %s",
	      strerror(-err));
	/* flush_all is seen by one-sided readers at once (layout.h). */
	err = kvc_command(&k, "flush_all", &v, &len);
	CHECK(!err && !strcmp(v, "OK") && len == 2, "flush_all: %s", strerror(-err));
	err = kvc_oget(&k, "size:2", &o, &olen, NULL);
	CHECK(err == -ENOENT, "one-sided get after flush_all: %s",
	      strerror(-err));
	/* Metadata modes: each read posts what the mode says. */
	err = kvc_store(&k, "set", "m", "v", 1, 0, 0);
	CHECK(!err, "set: %s", strerror(-err));
	for (i = 0; i < 3; i++) {
		static const char *const mode[] = { "none", "faa", "sample:2" };
		uint64_t before = k.st.oget_atomics;

		CHECK(!kvc_set_meta(&k, mode[i]), "mode %s", mode[i]);
		for (j = 0; j < 64; j++)
			CHECK(!kvc_oget(&k, "m", &o, &olen, NULL), "oget");
		j = k.st.oget_atomics - before;
		CHECK(i == 0 ? j == 0 : i == 1 ? j == 64 : j > 0 && j < 64,
		      "%s: %zu atomics for 64 reads", mode[i], j);
	}
	/*
	 * A counter the banner grants no atomics on: the FETCH_AND_ADD is not
	 * posted, and the GET returns the value it read all the same.
	 */
	{
		uint64_t posted = k.st.oget_atomics;
		bool atomic[KV_MAX_SEGS];

		for (j = 0; j < k.nseg; j++) {
			atomic[j] = k.seg[j].atomic;
			k.seg[j].atomic = false;
		}
		CHECK(!kvc_set_meta(&k, "faa"), "mode faa");
		err = kvc_oget(&k, "m", &o, &olen, NULL);
		CHECK(!err && olen == 1 && *o == 'v',
		      "oget without atomics: %s", strerror(-err));
		CHECK(k.st.oget_atomic_errors == 1 &&
		      k.st.oget_atomics == posted,
		      "oget without atomics: %llu errors, %llu posted",
		      (unsigned long long)k.st.oget_atomic_errors,
		      (unsigned long long)(k.st.oget_atomics - posted));
		for (j = 0; j < k.nseg; j++)
			k.seg[j].atomic = atomic[j];
		err = kvc_oget(&k, "m", &o, &olen, NULL);
		CHECK(!err && k.st.oget_atomic_errors == 1 &&
		      k.st.oget_atomics == posted + 1,
		      "oget with atomics again: %s", strerror(-err));
	}
	CHECK(kvc_set_meta(&k, "sample:1") == -EINVAL &&
	      kvc_set_meta(&k, "sample:+8") == -EINVAL &&
	      kvc_set_meta(&k, "sample: 8") == -EINVAL &&
	      kvc_set_meta(&k, "lru") == -EINVAL, "bad modes refused");
	kvc_close(&k);
	free(buf);
	return 0;
}

/*
 * A writer replacing one key with values of other sizes and contents as
 * fast as it can, readers getting it one-sidedly: every value read must
 * be one of those written, whole.
 */
static int race(void)
{
	char *buf = malloc(1u << 20);
	unsigned long reads = 0;
	struct kvc k;
	const char *v;
	size_t len;
	time_t end;
	pid_t pid;
	int err, st;

	CHECK(buf, "malloc");
	if (connect_rdma(&k))
		return -1;
	err = kvc_store(&k, "set", "race", buf, fill_value(buf, 0), 0, 0);
	CHECK(!err, "set: %s", strerror(-err));
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		struct kvc w;
		unsigned int ver;

		if (kvc_connect_rdma(&w, NULL, host, port))
			_exit(1);
		for (ver = 1;; ver++)
			if (kvc_store(&w, "set", "race", buf,
				      fill_value(buf, ver), 0, 0))
				_exit(2);
	}
	end = time(NULL) + 5;
	while (time(NULL) < end) {
		err = kvc_oget(&k, "race", &v, &len, NULL);
		if (err || !value_ok(v, len))
			break;
		reads++;
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	CHECK(!err, "one-sided get racing a writer: %s", strerror(-err));
	CHECK(value_ok(v, len), "torn value of %zu bytes", len);
	printf("# %lu one-sided reads racing the writer, %llu torn ones retried\n",
	       reads, (unsigned long long)k.st.oget_retries);
	CHECK(reads > 10, "only %lu reads", reads);
	kvc_close(&k);
	free(buf);
	return 0;
}

/*
 * Fill a small daemon (-m 2) past its capacity while reading a few hot
 * keys one-sidedly after each cold batch.  With a metadata mode the
 * daemon sees those reads and keeps the hot keys; with none it evicts
 * them like the rest.  Prints how many hot keys survived.
 */
static int recency(const char *mode, bool expect_kept)
{
	char *val = calloc(1, 2000), key[32];
	unsigned int i, h, kept = 0;
	struct kvc k;
	const char *v;
	size_t len;
	int err;

	CHECK(val, "malloc");
	if (connect_rdma(&k))
		return -1;
	CHECK(!kvc_set_meta(&k, mode), "mode %s", mode);
	err = kvc_command(&k, "flush_all", &v, &len);
	CHECK(!err, "flush_all");
	for (h = 0; h < 8; h++) {
		snprintf(key, sizeof(key), "hot:%u", h);
		CHECK(!kvc_store(&k, "set", key, val, 1500, 0, 0), "set hot");
	}
	for (i = 0; i < 2400; i++) {
		snprintf(key, sizeof(key), "cold:%u", i);
		err = kvc_store(&k, "set", key, val, 1500, 0, 0);
		CHECK(!err, "set cold %u: %s", i, strerror(-err));
		if (i % 50)
			continue;
		for (h = 0; h < 8; h++) {
			snprintf(key, sizeof(key), "hot:%u", h);
			err = kvc_oget(&k, key, &v, &len, NULL);
			/* 64 reads per round: sample:N counts some of them */
			if (!err && strcmp(mode, "none"))
				for (unsigned int r = 0; r < 15; r++)
					kvc_oget(&k, key, &v, &len, NULL);
		}
	}
	for (h = 0; h < 8; h++) {
		snprintf(key, sizeof(key), "hot:%u", h);
		kept += !kvc_get(&k, key, &v, &len, NULL);
	}
	err = kvc_command(&k, "stats", &v, &len);
	CHECK(!err && strstr(v, "STAT evictions "), "stats");
	printf("# -m %s: %u of 8 hot keys kept; %s\n", mode, kept,
	       strstr(v, "STAT evictions "));
	if (expect_kept)
		CHECK(kept == 8, "hot keys evicted although read (%s)", mode);
	else
		CHECK(kept < 8, "hot keys kept with no metadata: the test cannot tell");
	kvc_close(&k);
	free(val);
	return 0;
}

/*
 * Hostile clients: one sends a message larger than the daemon's RECVs,
 * one sends a storage command with a negative length and an rset whose
 * CRW never comes, one tries an atomic
 * on the READ-only index; the daemon ends the first connection, answers
 * the second with an error, the third's atomic fails at the NIC, and it
 * keeps serving.
 */
static int hostile(void)
{
	char *big = calloc(1, 2 * KV_MSG_SIZE);
	struct mrrc_wr w = { .opcode = MRRC_OP_SEND };
	struct mrrc_cqe c;
	struct kvc h, ok;
	const char *v;
	size_t len, i;
	int err, n;

	CHECK(big, "malloc");
	if (connect_rdma(&h))
		return -1;
	w.conn = h.conn;
	w.addr = (uintptr_t)big;
	w.len = KV_MSG_SIZE + 1;
	w.wr_id = 1;
	err = mrrc_post(h.fd, &w, 1, NULL);
	CHECK(!err, "post an oversized SEND: %s", strerror(-err));
	/* Ours fails, then the daemon disconnects. */
	for (i = 0, n = 0; i < 200; i++) {
		n = mrrc_poll_cq(h.fd, &c, 1);
		if (n == 1 && c.opcode == MRRC_OP_EVENT)
			break;
		if (n == 0)
			mrrc_wait(h.fd, 100);
	}
	CHECK(n == 1 && c.opcode == MRRC_OP_EVENT &&
	      c.event != MRRC_EVENT_ESTABLISHED,
	      "the daemon did not end the connection of the oversized SEND");
	kvc_close(&h);

	if (connect_rdma(&h))
		return -1;
	err = kvc_command(&h, "set x 0 0 -5", &v, &len);
	CHECK(!err && strstr(v, "ERROR"), "a negative length: %s",
	      err ? strerror(-err) : v);
	/* An rset whose CRW never comes: refused after its deadline. */
	err = kvc_command(&h, "rset lonely 0 0 100 77", &v, &len);
	CHECK(!err && strstr(v, "SERVER_ERROR rset"), "a lonely rset: %s",
	      err ? strerror(-err) : v);
	err = kvc_command(&h, "version", &v, &len);
	CHECK(!err && strstr(v, "VERSION"), "served after it: %s",
	      err ? strerror(-err) : v);
	kvc_close(&h);

	/* Atomics only on the counters: the index refuses them. */
	if (connect_rdma(&h))
		return -1;
	for (i = 0; i < h.nseg && (h.seg[i].atomic ||
				   h.seg[i].off > h.rem.hdr.index_off); i++)
		;
	CHECK(i < h.nseg, "no READ-only segment holds the index");
	memset(&w, 0, sizeof(w));
	w.conn = h.conn;
	w.opcode = MRRC_OP_FETCH_ADD;
	w.addr = (uintptr_t)h.atomic_buf;
	w.len = 8;
	w.remote_addr = h.seg[i].addr + (h.rem.hdr.index_off - h.seg[i].off);
	w.rkey = h.seg[i].rkey;
	w.compare_add = 1;
	w.wr_id = 7;
	err = mrrc_post(h.fd, &w, 1, NULL);
	CHECK(!err, "post a FETCH_AND_ADD on the index: %s", strerror(-err));
	for (i = 0, n = 0; i < 200; i++) {
		n = mrrc_poll_cq(h.fd, &c, 1);
		if (n == 1 && c.opcode != MRRC_OP_EVENT)
			break;
		if (n == 0)
			mrrc_wait(h.fd, 100);
	}
	CHECK(n == 1 && c.wr_id == 7 && c.status,
	      "a FETCH_AND_ADD on the READ-only index was not refused");
	kvc_close(&h);

	if (connect_rdma(&ok))
		return -1;
	err = kvc_store(&ok, "set", "after", "fine", 4, 0, 0);
	CHECK(!err, "an honest client after the hostile ones: %s",
	      strerror(-err));
	err = kvc_oget(&ok, "after", &v, &len, NULL);
	CHECK(!err && len == 4 && !memcmp(v, "fine", 4), "oget: %s",
	      strerror(-err));
	CHECK(kvc_get(&ok, "bad key", &v, &len, NULL) == -EINVAL &&
	      kvc_command(&ok, "get a\r\nflush_all", &v, &len) == -EINVAL,
	      "the client refuses keys and lines that would inject commands");
	kvc_close(&ok);
	free(big);
	return 0;
}

/* ---- a hostile daemon ------------------------------------------------ */

/* The next event on fd: its connection if it is ev, else -EPROTO. */
static int next_event(int fd, int ev)
{
	struct mrrc_cqe c;
	int n, tries = 0;

	for (;;) {
		n = mrrc_poll_cq(fd, &c, 1);
		if (n < 0)
			return n;
		if (!n) {
			if (++tries > 100)
				return -ETIMEDOUT;
			mrrc_wait(fd, 100);
			continue;
		}
		if (c.opcode != MRRC_OP_EVENT)
			continue;
		return c.event == ev ? (int)c.conn : -EPROTO;
	}
}

/*
 * A fake daemon on the next port: accepts one connection and sends
 * @banner (its own export's address and key put in for "%llu %u", when
 * @seg is set: 4 KiB that are not an arena), then waits until the client
 * goes.  Exits 0 if all of that worked.
 */
static pid_t fake_daemon(unsigned int fport, const char *banner, size_t len,
			 bool seg)
{
	static char out[80 * 1024];
	int pfd[2] = { -1, -1 };
	pid_t pid;
	char ready;
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(fport) };
	struct mrrc_seg sg;
	unsigned int n = 1;
	uint32_t lis, conn, xid;
	struct mrrc_wr w;
	struct mrrc_cqe c;
	int fd, r, tries;
	char *arena;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid) {
		/* Once it listens; -1 if it failed before (EOF). */
		close(pfd[1]);
		if (pid > 0 && read(pfd[0], &ready, 1) != 1) {
			waitpid(pid, NULL, 0);
			pid = -1;
		}
		close(pfd[0]);
		return pid;
	}
	close(pfd[0]);
	inet_pton(AF_INET, host, &sin.sin_addr);
	arena = aligned_alloc(4096, 4096);
	fd = mrrc_open(0);
	if (!arena || fd < 0 || mrrc_bind(fd, "rxe0", NULL) ||
	    mrrc_listen(fd, (struct sockaddr *)&sin, 1, 0, &lis) ||
	    write(pfd[1], "l", 1) != 1)
		_exit(10);
	r = next_event(fd, MRRC_EVENT_CONNECT_REQUEST);
	if (r < 0 || mrrc_accept(fd, r, 0) ||
	    next_event(fd, MRRC_EVENT_ESTABLISHED) != r)
		_exit(11);
	conn = r;
	memset(arena, 0x5a, 4096);
	if (seg) {
		if (mrrc_export(fd, arena, 4096, MRRC_ACCESS_REMOTE_READ,
				&conn, 1, &sg, &n, &xid))
			_exit(12);
		len = (size_t)snprintf(out, sizeof(out), banner,
				       (unsigned long long)sg.addr, sg.rkey);
	} else {
		memcpy(out, banner, len);
	}
	/* In SENDs of at most the client's RECV size. */
	for (size_t off = 0; off < len; off += KV_MSG_SIZE) {
		w = (struct mrrc_wr){
			.wr_id = off, .conn = conn, .opcode = MRRC_OP_SEND,
			.addr = (uintptr_t)out + off,
			.len = len - off < KV_MSG_SIZE ? len - off : KV_MSG_SIZE,
		};
		if (mrrc_post(fd, &w, 1, NULL))
			_exit(13);
		/* The client's RECVs take it within 10 s, or it failed. */
		for (tries = 0; tries < 100; tries++) {
			r = mrrc_poll_cq(fd, &c, 1);
			if (r == 1 && c.opcode != MRRC_OP_EVENT)
				break;
			if (!r)
				mrrc_wait(fd, 100);
		}
		if (r != 1 || c.opcode == MRRC_OP_EVENT || c.status)
			_exit(14);
	}
	/* Until the client has gone (or 10 s). */
	next_event(fd, MRRC_EVENT_DISCONNECTED);
	_exit(0);
}

/*
 * A daemon that lies in its banner: every malformed one is refused with
 * EPROTO, and a well-formed one whose segment is not an arena leaves
 * one-sided GETs unavailable (EOPNOTSUPP), not reading from it; one
 * whose segment was never exported fails the connect (err 1: with the
 * READ's error, whatever the device makes it).
 */
static int hostile_daemon(void)
{
	static char longline[70 * 1024], manysegs[(KV_MAX_SEGS + 2) * 32];
	static const struct {
		const char *what, *banner;
		bool seg;
		int err;
	} cases[] = {
		/* KV_MAX_SEGS + 1 well-formed segments, built below. */
		{ "too many segments", manysegs, false, -EPROTO },
		{ "another version", "MRRCD-ARENA 2 4096 0\r\nEND\r\n", false,
		  -EPROTO },
		{ "a segment past the arena",
		  "MRRCD-ARENA 1 4096 1\r\nSEG 4000 4096 200 5 r\r\nEND\r\n",
		  false, -EPROTO },
		{ "a segment whose end wraps",
		  "MRRCD-ARENA 1 4096 1\r\nSEG 1 4096 18446744073709551615 5 r\r\nEND\r\n",
		  false, -EPROTO },
		{ "no END", "MRRCD-ARENA 1 4096 0\r\nVERSION 1\r\n", false,
		  -EPROTO },
		{ "not a banner", "VERSION 1.6\r\n", false, -EPROTO },
		{ "a line longer than 64 KiB", NULL, false, -EPROTO },
		{ "a segment that is not an arena",
		  "MRRCD-ARENA 1 4096 1\r\nSEG 0 %llu 4096 %u r\r\nEND\r\n",
		  true, 0 },
		{ "a segment never exported",
		  "MRRCD-ARENA 1 4096 1\r\nSEG 0 4096 4096 12345 r\r\nEND\r\n",
		  false, 1 },
	};
	unsigned int fport = port + 100, i;
	const char *v;
	size_t len;

	memset(longline, 'x', sizeof(longline));
	len = (size_t)sprintf(manysegs, "MRRCD-ARENA 1 %u %u\r\n",
			      (KV_MAX_SEGS + 1) * 4096, KV_MAX_SEGS + 1);
	for (i = 0; i <= KV_MAX_SEGS; i++)
		len += (size_t)sprintf(manysegs + len,
				       "SEG %u 4096 4096 5 r\r\n", i * 4096);
	strcpy(manysegs + len, "END\r\n");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++, fport++) {
		const char *b = cases[i].banner ?: longline;
		size_t blen = cases[i].banner ? strlen(b) : sizeof(longline);
		pid_t pid = fake_daemon(fport, b, blen, cases[i].seg);
		struct kvc k;
		int err, st;

		CHECK(pid > 0, "%s: the fake daemon did not listen",
		      cases[i].what);
		err = kvc_connect_rdma(&k, NULL, host, fport);
		if (cases[i].err) {
			CHECK(cases[i].err == 1 ? err < 0 : err == cases[i].err,
			      "%s: connect: %s", cases[i].what, strerror(-err));
		} else {
			CHECK(!err, "%s: connect: %s", cases[i].what,
			      strerror(-err));
			CHECK(!k.rem_ok, "%s: one-sided reads enabled",
			      cases[i].what);
			/* Refused for what it read, not for failing to read. */
			CHECK(k.rem.hdr.magic == 0x5a5a5a5a5a5a5a5aULL,
			      "%s: the header was not read", cases[i].what);
			err = kvc_oget(&k, "k", &v, &len, NULL);
			CHECK(err == -EOPNOTSUPP, "%s: oget: %s", cases[i].what,
			      strerror(-err));
			kvc_close(&k);
		}
		CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		      !WEXITSTATUS(st), "%s: the fake daemon failed (%d)",
		      cases[i].what, st);
		printf("# %s: %s%s\n", cases[i].what,
		       cases[i].err ? "refused: " : "connected, one-sided GETs refused",
		       cases[i].err ? strerror(-err) : "");
	}
	return 0;
}

/*
 * One connection, a one-sided GET of key every 100 ms for up to secs
 * seconds (kv_pair.sh kills the daemon meanwhile): exit 3 when a GET
 * fails with a transport error after at least 10 good ones, with how
 * long it took; 1 otherwise (never failed, failed early, or failed as if
 * the daemon still answered: a miss, a bad slot, torn for ever).
 */
static int oget_loop(const char *key, int secs)
{
	struct timespec t0, t1;
	struct kvc k;
	const char *v;
	size_t len;
	int err = 0;
	long i;

	if (connect_rdma(&k))
		return 1;
	for (i = 0; i < secs * 10L; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		err = kvc_oget(&k, key, &v, &len, NULL);
		if (err)
			break;
		usleep(100000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	kvc_close(&k);
	if (!err) {
		printf("# the connection outlived the daemon for %d s\n", secs);
		return 1;
	}
	printf("# after %ld good reads, the next failed in %.1f s: %s\n", i,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       strerror(-err));
	if (i < 10 || err == -ENOENT || err == -EPROTO || err == -EFAULT ||
	    err == -EAGAIN || err == -EINVAL)
		return 1;
	return 3;
}

int main(int argc, char **argv)
{
	const char *t;
	int r;

	if (argc == 6 && !strcmp(argv[3], "oget-loop")) {
		host = argv[1];
		port = (unsigned int)atoi(argv[2]);
		return oget_loop(argv[4], atoi(argv[5]));
	}
	if (argc != 4) {
		fprintf(stderr, "usage: kv_rdma HOST PORT TEST | HOST PORT oget-loop KEY SECS\n");
		return 2;
	}
	host = argv[1];
	port = (unsigned int)atoi(argv[2]);
	t = argv[3];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(t, "basic"))
		r = basic();
	else if (!strcmp(t, "hostile"))
		r = hostile();
	else if (!strcmp(t, "race"))
		r = race();
	else if (!strcmp(t, "hostile-daemon"))
		r = hostile_daemon();
	else if (!strcmp(t, "recency-faa"))
		r = recency("faa", true);
	else if (!strcmp(t, "recency-sample"))
		r = recency("sample:4", true);
	else if (!strcmp(t, "recency-none"))
		r = recency("none", false);
	else
		return 2;
	return r || failed ? 1 : 0;
}
