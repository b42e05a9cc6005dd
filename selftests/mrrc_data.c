// SPDX-License-Identifier: GPL-2.0-only
/*
 * Connections and the data path: every operation and size, segments, CRW
 * and STCRW in every order, deadlines, cancel, duplicates, disconnect,
 * closing and killing processes with operations held, and stale
 * registrations.  Server and client are two contexts on rxe0, in one
 * process or two (fork) where a process has to die.
 */
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <grp.h>

#include "kselftest_harness.h"
#include "mrrc_test.h"

#define TMO_MS		20000
#define MiB		(1024 * 1024)
/* The module's receive buffers per connection (kmod/conn.h). */
#define MRRC_TEST_RX_DEPTH	128
#define MRRC_TEST_SQ_DEPTH	1024	/* and send queue slots */

#include "mrrc_dp_test.h"

static uint16_t next_port(void)
{
	static uint16_t port;

	if (!port)
		port = 20000 + (getpid() % 20000);
	return port++;
}

struct pair {
	int sfd, cfd;		/* server and client contexts */
	uint32_t lis, sconn, cconn;
};

/* Two contexts connected; @flags (MRRC_CONN_ISOLATED) on both sides. */
static int pair_open_flags(struct pair *p, uint32_t flags)
{
	struct sockaddr_in sin = vm_addr(next_port());
	int r;

	memset(p, 0, sizeof(*p));
	p->sfd = open_bound(RXE_DEV);
	p->cfd = open_bound(RXE_DEV);
	if (p->sfd < 0 || p->cfd < 0)
		return -ENODEV;
	r = mrrc_listen_flags(p->sfd, (struct sockaddr *)&sin, 16, flags,
			      0x5e, &p->lis);
	if (!r)
		r = mrrc_connect_flags(p->cfd, (struct sockaddr *)&sin, NULL, 0,
				       flags, 0xc1, &p->cconn);
	if (r)
		return r;
	r = wait_event(p->sfd, MRRC_EVENT_CONNECT_REQUEST, NULL);
	if (r < 0)
		return r;
	p->sconn = r;
	r = mrrc_accept(p->sfd, p->sconn, 0x5c);
	if (r)
		return r;
	r = wait_event(p->sfd, MRRC_EVENT_ESTABLISHED, NULL);
	if (r >= 0)
		r = wait_event(p->cfd, MRRC_EVENT_ESTABLISHED, NULL);
	return r < 0 ? r : 0;
}

static int pair_open(struct pair *p)
{
	return pair_open_flags(p, 0);
}

static void pair_close(struct pair *p)
{
	if (p->cfd >= 0)
		close(p->cfd);
	if (p->sfd >= 0)
		close(p->sfd);
}

static void *map(size_t len)
{
	void *b = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return b == MAP_FAILED ? NULL : b;
}

static const size_t sizes[] = {
	1, 7, 64, 4095, 4096, 4097, 65536, 200000, MiB, 4 * MiB,
};

FIXTURE(data) {
	struct pair p;
	uint8_t *sbuf, *cbuf;
};

/*
 * Every test of the fixture runs twice: on connections that share their
 * context's protection domain and cache, and on isolated ones (a PD and a
 * cache each, MRRC_CONN_ISOLATED), where handles of MRRC_IOC_REG are
 * refused.
 */
FIXTURE_VARIANT(data) {
	uint32_t conn_flags;
};

FIXTURE_VARIANT_ADD(data, shared) {
	.conn_flags = 0,
};

FIXTURE_VARIANT_ADD(data, isolated) {
	.conn_flags = MRRC_CONN_ISOLATED,
};

/* What a POST naming handle @h answers: the context's cache's handle. */
static int handle_errno(const FIXTURE_VARIANT(data) *v, int shared)
{
	return v->conn_flags & MRRC_CONN_ISOLATED ? -EINVAL : shared;
}

FIXTURE_SETUP(data)
{
	int r = pair_open_flags(&self->p, variant->conn_flags);

	ASSERT_EQ(0, r) TH_LOG("connect: %s", strerror(-r));
	self->sbuf = map(4 * MiB + 8192);
	self->cbuf = map(4 * MiB + 8192);
	ASSERT_NE(NULL, self->sbuf);
	ASSERT_NE(NULL, self->cbuf);
	/*
	 * Fault the memory in: a read-only registration of untouched
	 * anonymous memory pins the zero page, and the first write then
	 * (rightly) invalidates it.
	 */
	memset(self->sbuf, 0, 4 * MiB + 8192);
	memset(self->cbuf, 0, 4 * MiB + 8192);
}

FIXTURE_TEARDOWN(data)
{
	pair_close(&self->p);
	munmap(self->sbuf, 4 * MiB + 8192);
	munmap(self->cbuf, 4 * MiB + 8192);
}

TEST_F(data, conn_query_and_events)
{
	struct mrrc_conn_query q;

	ASSERT_EQ(0, mrrc_conn_query(self->p.cfd, self->p.cconn, &q));
	EXPECT_EQ(MRRC_CONN_ESTABLISHED, q.state);
	EXPECT_EQ(AF_INET, q.peer.family);
	EXPECT_LT(1, q.credits);
	ASSERT_EQ(0, mrrc_conn_query(self->p.sfd, self->p.lis, &q));
	EXPECT_EQ(MRRC_CONN_LISTENING, q.state);
	EXPECT_EQ(-ENOENT, mrrc_conn_query(self->p.sfd, 999999, &q));
}

/* This process's contexts in MRRC_IOC_CTX_LIST, by how many connections. */
static int own_contexts(int fd, struct mrrc_ctx_info *out, unsigned int max)
{
	struct mrrc_ctx_info all[256];
	unsigned int n = 256, i, k = 0;
	int r = mrrc_ctx_list(fd, all, &n);

	if (r)
		return r;
	for (i = 0; i < n && i < 256; i++)
		if (all[i].pid == (uint32_t)getpid() && k < max)
			out[k++] = all[i];
	return k;
}

/* Run as nobody: sees its own context only, and none of root's. */
static int listed_as_nobody(uint32_t roots_ctx)
{
	struct mrrc_ctx_info ci[4];
	struct mrrc_conn_query q[4];
	unsigned int n = 4;
	int fd;

	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		return 100;
	fd = mrrc_open(0);
	if (fd < 0)
		return 101;
	if (mrrc_ctx_list(fd, ci, &n) || n != 1)
		return 102;
	if (ci[0].pid != (uint32_t)getpid() || ci[0].uid != 65534 ||
	    ci[0].dev_index != MRRC_DEV_NONE || ci[0].conns)
		return 103;
	n = 4;
	if (mrrc_conn_list(fd, roots_ctx, q, &n) != -ENOENT)
		return 104;
	n = 4;
	if (mrrc_conn_list(fd, 0, q, &n) || n)
		return 105;
	return 0;
}

TEST_F(data, contexts_and_connections_are_listed)
{
	struct mrrc_ctx_info ci[2], *srv, *cli;
	struct mrrc_conn_query q[4];
	struct mrrc_conn_list ll;
	unsigned int n, i;
	pid_t pid;
	int st;

	ASSERT_EQ(2, own_contexts(self->p.cfd, ci, 2));
	srv = ci[0].conns == 2 ? &ci[0] : &ci[1];
	cli = srv == &ci[0] ? &ci[1] : &ci[0];
	EXPECT_EQ(2, srv->conns);	/* the listener and the accepted one */
	EXPECT_EQ(1, cli->conns);
	EXPECT_NE(srv->id, cli->id);
	EXPECT_EQ(geteuid(), cli->uid);
	EXPECT_NE(MRRC_DEV_NONE, cli->dev_index);
	EXPECT_EQ(0, cli->ops);

	/* Its own connections (0), and the other context's, by id. */
	n = 4;
	ASSERT_EQ(0, mrrc_conn_list(self->p.cfd, 0, q, &n));
	ASSERT_EQ(1, n);
	EXPECT_EQ(self->p.cconn, q[0].id);
	EXPECT_EQ(MRRC_CONN_ESTABLISHED, q[0].state);
	EXPECT_EQ(sizeof(q[0]), q[0].size);
	n = 4;
	ASSERT_EQ(0, mrrc_conn_list(self->p.cfd, srv->id, q, &n));
	ASSERT_EQ(2, n);
	for (i = 0; i < 2; i++) {
		if (q[i].id == self->p.lis) {
			EXPECT_EQ(MRRC_CONN_LISTENING, q[i].state);
		} else {
			EXPECT_EQ(self->p.sconn, q[i].id);
		}
	}
	/* Counting only; then room for one of two. */
	n = 0;
	ASSERT_EQ(0, mrrc_conn_list(self->p.sfd, 0, NULL, &n));
	EXPECT_EQ(2, n);
	memset(q, 0xa5, sizeof(q));
	n = 1;
	ASSERT_EQ(0, mrrc_conn_list(self->p.sfd, 0, q, &n));
	EXPECT_EQ(2, n);
	EXPECT_EQ(0xa5a5a5a5, q[1].size);

	/* What the module refuses. */
	n = 4;
	EXPECT_EQ(-ENOENT, mrrc_conn_list(self->p.cfd, 0x7fffffff, q, &n));
	memset(&ll, 0, sizeof(ll));
	ll.size = sizeof(ll);
	ll.count = 1;
	ll.entry_size = 8;
	ll.entries = (uintptr_t)q;
	EXPECT_EQ(-1, ioctl(self->p.cfd, MRRC_IOC_CONN_LIST, &ll));
	EXPECT_EQ(EINVAL, errno);
	ll.entry_size = sizeof(q[0]);
	ll.flags = 1;
	EXPECT_EQ(-1, ioctl(self->p.cfd, MRRC_IOC_CONN_LIST, &ll));
	EXPECT_EQ(EOPNOTSUPP, errno);
	ll.flags = 0;
	ll.entries = 8;
	EXPECT_EQ(-1, ioctl(self->p.cfd, MRRC_IOC_CONN_LIST, &ll));
	EXPECT_EQ(EFAULT, errno);

	/* Another user sees its own context only. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(listed_as_nobody(srv->id));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));

	/* A closed context leaves the list. */
	close(self->p.cfd);
	self->p.cfd = -1;
	ASSERT_EQ(1, own_contexts(self->p.sfd, ci, 2));
	EXPECT_EQ(srv->id, ci[0].id);
	n = 4;
	EXPECT_EQ(-ENOENT, mrrc_conn_list(self->p.sfd, cli->id, q, &n));
}

TEST_F(data, write_every_size)
{
	struct mrrc_seg seg;
	struct mrrc_cqe c;
	uint32_t h;
	size_t i;

	ASSERT_EQ(0, export1(self->p.sfd, self->p.sconn, self->sbuf, 4 * MiB,
			     MRRC_ACCESS_REMOTE_WRITE, &seg, &h));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct mrrc_wr w = wr(self->p.cconn, MRRC_OP_WRITE,
				      self->cbuf, sizes[i], i);

		memset(self->sbuf, 0, 4 * MiB);
		fill(self->cbuf, sizes[i], i + 1);
		w.remote_addr = seg.addr;
		w.rkey = seg.rkey;
		ASSERT_EQ(0, post1(self->p.cfd, w));
		ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
		ASSERT_EQ(0, c.status) TH_LOG("size %zu", sizes[i]);
		EXPECT_EQ(i, c.wr_id);
		EXPECT_EQ(sizes[i], c.byte_len);
		ASSERT_EQ(0, check(self->sbuf, sizes[i], i + 1))
			TH_LOG("size %zu", sizes[i]);
		/* Nothing beyond the write changed. */
		if (sizes[i] < 4 * MiB)
			EXPECT_EQ(0, self->sbuf[sizes[i]]);
	}
	EXPECT_EQ(0, mrrc_unexport(self->p.sfd, h));
}

TEST_F(data, read_every_size)
{
	struct mrrc_seg seg;
	struct mrrc_cqe c;
	uint32_t h;
	size_t i;

	ASSERT_EQ(0, export1(self->p.sfd, self->p.sconn, self->sbuf, 4 * MiB,
			     MRRC_ACCESS_REMOTE_READ, &seg, &h));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct mrrc_wr w = wr(self->p.cconn, MRRC_OP_READ,
				      self->cbuf, sizes[i], i);

		fill(self->sbuf, sizes[i], 100 + i);
		memset(self->cbuf, 0, sizes[i]);
		w.remote_addr = seg.addr;
		w.rkey = seg.rkey;
		ASSERT_EQ(0, post1(self->p.cfd, w));
		ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
		ASSERT_EQ(0, c.status) TH_LOG("size %zu", sizes[i]);
		ASSERT_EQ(0, check(self->cbuf, sizes[i], 100 + i))
			TH_LOG("size %zu", sizes[i]);
	}
	EXPECT_EQ(0, mrrc_unexport(self->p.sfd, h));
}

TEST_F(data, write_imm_reaches_peer)
{
	struct mrrc_seg seg;
	struct mrrc_cqe c;
	struct mrrc_wr w;
	uint32_t h;

	ASSERT_EQ(0, export1(self->p.sfd, self->p.sconn, self->sbuf, 4096,
			     MRRC_ACCESS_REMOTE_WRITE, &seg, &h));
	fill(self->cbuf, 1000, 9);
	w = wr(self->p.cconn, MRRC_OP_WRITE_IMM, self->cbuf, 1000, 1);
	w.remote_addr = seg.addr;
	w.rkey = seg.rkey;
	w.imm = 0xdeadbeef;
	ASSERT_EQ(0, post1(self->p.cfd, w));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
	ASSERT_EQ(0, c.status);
	ASSERT_EQ(0, reap(self->p.sfd, &c, 1));
	EXPECT_EQ(MRRC_OP_RECV_IMM, c.opcode);
	EXPECT_EQ(0xdeadbeef, c.imm);
	EXPECT_EQ(1000, c.byte_len);
	EXPECT_EQ(self->p.sconn, c.conn);
	EXPECT_EQ(0, check(self->sbuf, 1000, 9));
	EXPECT_EQ(0, mrrc_unexport(self->p.sfd, h));
}

TEST_F(data, send_recv_every_size)
{
	struct mrrc_cache_stats st0, st1;
	struct mrrc_conn_query q;
	struct mrrc_cqe c[2];
	size_t i;

	ASSERT_EQ(0, mrrc_cache_stats(self->p.sfd, &st0));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		memset(self->sbuf, 0, sizes[i] + 1);
		fill(self->cbuf, sizes[i], 200 + i);
		/* Alternate which side comes first. */
		if (i & 1)
			ASSERT_EQ(0, post1(self->p.cfd,
					   wr(self->p.cconn, MRRC_OP_SEND,
					      self->cbuf, sizes[i], i)));
		ASSERT_EQ(0, post1(self->p.sfd,
				   wr(self->p.sconn, MRRC_OP_RECV, self->sbuf,
				      sizes[i] + 1, 1000 + i)));
		if (!(i & 1))
			ASSERT_EQ(0, post1(self->p.cfd,
					   wr(self->p.cconn, MRRC_OP_SEND,
					      self->cbuf, sizes[i], i)));
		ASSERT_EQ(0, reap(self->p.cfd, &c[0], 1));
		ASSERT_EQ(0, reap(self->p.sfd, &c[1], 1));
		ASSERT_EQ(0, c[0].status);
		ASSERT_EQ(0, c[1].status);
		EXPECT_EQ(MRRC_OP_RECV, c[1].opcode);
		EXPECT_EQ(1000 + i, c[1].wr_id);
		EXPECT_EQ(sizes[i], c[1].byte_len);
		ASSERT_EQ(0, check(self->sbuf, sizes[i], 200 + i))
			TH_LOG("size %zu", sizes[i]);
		EXPECT_EQ(0, self->sbuf[sizes[i]]);
	}
	/*
	 * The peer ended by its SEND_DONE (SEND_WITH_INV) only RECVs in one
	 * pooled MR: not those too large for the pools (ordinary), and not
	 * those whose range the cache holds in several regions (several
	 * segments, as here where growing ranges overlap earlier ones).
	 */
	ASSERT_EQ(0, mrrc_cache_stats(self->p.sfd, &st1));
	ASSERT_EQ(0, mrrc_conn_query(self->p.sfd, self->p.sconn, &q));
	EXPECT_GE(ARRAY_SIZE(sizes) - (st1.expo_ordinary - st0.expo_ordinary),
		  q.remote_inv);
	if (remote_inv_on()) {
		EXPECT_LT(0, q.remote_inv);
	} else {
		EXPECT_EQ(0, q.remote_inv);
	}
	ASSERT_EQ(0, mrrc_conn_query(self->p.cfd, self->p.cconn, &q));
	EXPECT_EQ(0, q.remote_inv);
}

TEST_F(data, send_larger_than_recv_fails_both)
{
	struct mrrc_cqe c;

	ASSERT_EQ(0, post1(self->p.sfd, wr(self->p.sconn, MRRC_OP_RECV,
					   self->sbuf, 100, 1)));
	ASSERT_EQ(0, post1(self->p.cfd, wr(self->p.cconn, MRRC_OP_SEND,
					   self->cbuf, 101, 2)));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
	EXPECT_EQ(-EMSGSIZE, c.status);
	ASSERT_EQ(0, reap(self->p.sfd, &c, 1));
	EXPECT_EQ(-EMSGSIZE, c.status);
}

TEST_F(data, sends_match_recvs_in_order)
{
	struct mrrc_conn_query q;
	struct mrrc_wr w[64];
	struct mrrc_cqe c[64];
	unsigned int i, done;

	for (i = 0; i < 64; i++)
		w[i] = wr(self->p.sconn, MRRC_OP_RECV, self->sbuf + i * 256,
			  256, i);
	ASSERT_EQ(0, mrrc_post(self->p.sfd, w, 64, &done));
	for (i = 0; i < 64; i++) {
		fill(self->cbuf + i * 100, 100, i);
		w[i] = wr(self->p.cconn, MRRC_OP_SEND, self->cbuf + i * 100,
			  100, i);
	}
	ASSERT_EQ(0, mrrc_post(self->p.cfd, w, 64, &done));
	EXPECT_EQ(64, done);
	ASSERT_EQ(0, reap(self->p.cfd, c, 64));
	ASSERT_EQ(0, reap(self->p.sfd, c, 64));
	for (i = 0; i < 64; i++) {
		EXPECT_EQ(i, c[i].wr_id);
		EXPECT_EQ(0, c[i].status);
		EXPECT_EQ(0, check(self->sbuf + i * 256, 100, i));
	}
	/*
	 * Each RECV lies in one page, one cached region, one pooled MR: the
	 * peer's SEND_DONE ended every one (SEND_WITH_INV of its key).
	 */
	ASSERT_EQ(0, mrrc_conn_query(self->p.sfd, self->p.sconn, &q));
	EXPECT_EQ(remote_inv_on() ? 64 : 0, q.remote_inv);
}

TEST_F(data, atomics)
{
	uint64_t *ctr = (uint64_t *)self->sbuf, *old = (uint64_t *)self->cbuf;
	struct mrrc_seg seg;
	struct mrrc_cqe c;
	struct mrrc_wr w;
	uint32_t h;

	*ctr = 40;
	ASSERT_EQ(0, export1(self->p.sfd, self->p.sconn, self->sbuf, 4096,
			     MRRC_ACCESS_REMOTE_ATOMIC, &seg, &h));
	w = wr(self->p.cconn, MRRC_OP_FETCH_ADD, old, 8, 1);
	w.remote_addr = seg.addr;
	w.rkey = seg.rkey;
	w.compare_add = 2;
	ASSERT_EQ(0, post1(self->p.cfd, w));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
	ASSERT_EQ(0, c.status);
	EXPECT_EQ(40, *old);
	EXPECT_EQ(42, *ctr);

	w.opcode = MRRC_OP_CMP_SWAP;
	w.compare_add = 42;
	w.swap = 7;
	ASSERT_EQ(0, post1(self->p.cfd, w));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
	EXPECT_EQ(42, *old);
	EXPECT_EQ(7, *ctr);
	/* A failed compare leaves the value alone. */
	ASSERT_EQ(0, post1(self->p.cfd, w));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
	EXPECT_EQ(7, *old);
	EXPECT_EQ(7, *ctr);
	/* Misaligned or wrong-sized atomics are refused. */
	w.len = 4;
	EXPECT_EQ(-EINVAL, post1(self->p.cfd, w));
	EXPECT_EQ(0, mrrc_unexport(self->p.sfd, h));
}

TEST_F(data, concurrent_atomics_from_two_connections)
{
	const unsigned int n = 500;
	uint64_t *ctr = (uint64_t *)self->sbuf;
	struct mrrc_wr w[2][500];
	struct mrrc_cqe c[500];
	struct mrrc_seg seg, seg2;
	struct mrrc_conn_query lq;
	struct sockaddr_in sin;
	uint64_t *old = (uint64_t *)self->cbuf;
	uint8_t seen[1000] = { 0 };
	unsigned int i, k, nseg = 1;
	uint32_t h, h2 = 0, conns[2];
	struct pair q;
	int id;

	/* A second client context, connected to the same server context. */
	q = self->p;
	q.cfd = open_bound(RXE_DEV);
	ASSERT_LE(0, q.cfd);
	ASSERT_EQ(0, mrrc_conn_query(q.sfd, q.lis, &lq));
	sin = vm_addr(lq.local.port);
	ASSERT_EQ(0, mrrc_connect_flags(q.cfd, (struct sockaddr *)&sin, NULL, 0,
					variant->conn_flags, 0, &q.cconn));
	id = wait_event(q.sfd, MRRC_EVENT_CONNECT_REQUEST, NULL);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, mrrc_accept(q.sfd, id, 0));
	ASSERT_LE(0, wait_event(q.sfd, MRRC_EVENT_ESTABLISHED, NULL));
	ASSERT_LE(0, wait_event(q.cfd, MRRC_EVENT_ESTABLISHED, NULL));
	*ctr = 0;
	/*
	 * One export for both connections of the server; isolated, which
	 * is refused, one export for each (two keys, two PDs, one word).
	 */
	conns[0] = self->p.sconn;
	conns[1] = id;
	if (variant->conn_flags & MRRC_CONN_ISOLATED) {
		EXPECT_EQ(-EINVAL, mrrc_export(self->p.sfd, self->sbuf, 8,
					       MRRC_ACCESS_REMOTE_ATOMIC, conns,
					       2, &seg, &nseg, &h));
		ASSERT_EQ(0, export1(self->p.sfd, self->p.sconn, self->sbuf, 8,
				     MRRC_ACCESS_REMOTE_ATOMIC, &seg, &h));
		ASSERT_EQ(0, export1(self->p.sfd, id, self->sbuf, 8,
				     MRRC_ACCESS_REMOTE_ATOMIC, &seg2, &h2));
	} else {
		ASSERT_EQ(0, mrrc_export(self->p.sfd, self->sbuf, 8,
					 MRRC_ACCESS_REMOTE_ATOMIC, conns, 2,
					 &seg, &nseg, &h));
		seg2 = seg;
	}
	for (k = 0; k < 2; k++) {
		for (i = 0; i < n; i++) {
			w[k][i] = wr(k ? q.cconn : self->p.cconn,
				     MRRC_OP_FETCH_ADD,
				     self->cbuf + (k * n + i) * 8, 8, i);
			w[k][i].remote_addr = k ? seg2.addr : seg.addr;
			w[k][i].rkey = k ? seg2.rkey : seg.rkey;
			w[k][i].compare_add = 1;
		}
	}
	/* Interleave the two connections' batches. */
	for (i = 0; i < n; i += 50) {
		ASSERT_EQ(0, mrrc_post(self->p.cfd, &w[0][i], 50, NULL));
		ASSERT_EQ(0, mrrc_post(q.cfd, &w[1][i], 50, NULL));
	}
	ASSERT_EQ(0, reap(self->p.cfd, c, n));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, c[i].status);
	ASSERT_EQ(0, reap(q.cfd, c, n));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, c[i].status);
	EXPECT_EQ(2 * n, *ctr);
	/* Every fetched value is distinct: each add was atomic. */
	for (i = 0; i < 2 * n; i++) {
		ASSERT_LT(old[i], 2 * n);
		EXPECT_EQ(0, seen[old[i]]);
		seen[old[i]] = 1;
	}
	EXPECT_EQ(0, mrrc_unexport(self->p.sfd, h));
	if (h2)
		EXPECT_EQ(0, mrrc_unexport(self->p.sfd, h2));
	close(q.cfd);
}

TEST_F(data, ranges_spanning_several_segments)
{
	const uint32_t rw = MRRC_ACCESS_LOCAL_WRITE;
	struct mrrc_cache_stats st0, st1;
	struct mrrc_cqe c[2];

	if (variant->conn_flags & MRRC_CONN_ISOLATED)
		SKIP(return, "shapes the context's cache, which isolated connections do not use");

	/* Local side: a SEND from two cached regions (two SGEs)... */
	ASSERT_EQ(2, two_regions(self->p.cfd, self->cbuf, 0));
	/* ...into a RECV over two cached regions (two remote segments). */
	ASSERT_EQ(2, two_regions(self->p.sfd, self->sbuf, rw));
	ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st0));
	fill(self->cbuf + 4096, 8192, 77);
	memset(self->sbuf, 0, 16384);
	ASSERT_EQ(0, post1(self->p.sfd, wr(self->p.sconn, MRRC_OP_RECV,
					   self->sbuf + 2048, 12288, 1)));
	ASSERT_EQ(0, post1(self->p.cfd, wr(self->p.cconn, MRRC_OP_SEND,
					   self->cbuf + 4096, 8192, 2)));
	ASSERT_EQ(0, reap(self->p.cfd, &c[0], 1));
	ASSERT_EQ(0, reap(self->p.sfd, &c[1], 1));
	ASSERT_EQ(0, c[0].status);
	ASSERT_EQ(0, c[1].status);
	EXPECT_EQ(0, check(self->sbuf + 2048, 8192, 77));
	ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st1));
	EXPECT_EQ(st0.hit_span + 1, st1.hit_span)
		TH_LOG("requests %llu -> %llu, span %llu -> %llu",
		       (unsigned long long)st0.requests,
		       (unsigned long long)st1.requests,
		       (unsigned long long)st0.hit_span,
		       (unsigned long long)st1.hit_span);
}

/* @n CRWs of 64 bytes and @n STCRWs, posted in the given order. */
static int crw_run(struct __test_metadata *_metadata, struct pair *p,
		   uint8_t *cbuf, uint8_t *sbuf, unsigned int n, int order)
{
	struct mrrc_wr *cw = calloc(n, sizeof(*cw));
	struct mrrc_wr *sw = calloc(n, sizeof(*sw));
	struct mrrc_cqe *c = calloc(n, sizeof(*c));
	unsigned int i, step = order == 2 ? 100 : n;
	int ret = 0;

	for (i = 0; i < n; i++) {
		fill(cbuf + i * 64, 64, i + 5);
		cw[i] = wr(p->cconn, MRRC_OP_CRW, cbuf + i * 64, 64, i);
		cw[i].tag = 1000000 + i;
		sw[i] = wr(p->sconn, MRRC_OP_STCRW, sbuf + i * 64, 64, i);
		sw[i].tag = 1000000 + (n - 1 - i);
		sw[i].addr = (uintptr_t)sbuf + (n - 1 - i) * 64;
	}
	memset(sbuf, 0, n * 64);
	for (i = 0; i < n; i += step) {
		unsigned int k = n - i < step ? n - i : step;

		if (order == 1)
			ret = mrrc_post(p->sfd, sw + i, k, NULL);
		ret = ret ?: mrrc_post(p->cfd, cw + i, k, NULL);
		if (order != 1)
			ret = ret ?: mrrc_post(p->sfd, sw + i, k, NULL);
		if (ret)
			goto out;
	}
	ret = reap(p->cfd, c, n);
	for (i = 0; !ret && i < n; i++)
		if (c[i].status || c[i].opcode != MRRC_OP_CRW)
			ret = -EIO;
	ret = ret ?: reap(p->sfd, c, n);
	for (i = 0; !ret && i < n; i++)
		if (c[i].status || c[i].byte_len != 64)
			ret = -EIO;
	for (i = 0; !ret && i < n; i++)
		if (check(sbuf + i * 64, 64, i + 5))
			ret = -EILSEQ;
out:
	free(cw);
	free(sw);
	free(c);
	return ret;
}

/*
 * A range the cache holds in more pieces than an operation has SGEs goes
 * out registered whole, and the data is right.
 */
TEST_F(data, range_in_more_pieces_than_sges)
{
	struct mrrc_cache_stats st0, st1;
	struct mrrc_reg_req r[12];
	struct mrrc_seg seg[12];
	struct mrrc_cqe c[2];
	unsigned int i, n = 12;

	if (variant->conn_flags & MRRC_CONN_ISOLATED)
		SKIP(return, "shapes the context's cache, which isolated connections do not use");

	/* Twelve separate cached pages, every other page of 96 KiB. */
	for (i = 0; i < 12; i++)
		r[i] = (struct mrrc_reg_req){
			.addr = (uintptr_t)self->cbuf + i * 8192,
			.length = 4096, .flags = MRRC_REG_RELEASE,
		};
	ASSERT_EQ(12, mrrc_reg(self->p.cfd, r, 12, seg, &n));
	ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st0));
	fill(self->cbuf, 96 * 1024, 31);
	memset(self->sbuf, 0, 96 * 1024);
	ASSERT_EQ(0, post1(self->p.sfd, wr(self->p.sconn, MRRC_OP_RECV,
					   self->sbuf, 96 * 1024, 1)));
	ASSERT_EQ(0, post1(self->p.cfd, wr(self->p.cconn, MRRC_OP_SEND,
					   self->cbuf, 96 * 1024, 2)));
	ASSERT_EQ(0, reap(self->p.cfd, &c[0], 1));
	ASSERT_EQ(0, reap(self->p.sfd, &c[1], 1));
	ASSERT_EQ(0, c[0].status);
	ASSERT_EQ(0, c[1].status);
	EXPECT_EQ(0, check(self->sbuf, 96 * 1024, 31));
	ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st1));
	EXPECT_EQ(st0.whole_ranges + 1, st1.whole_ranges);
	/* The pieces are still cached; the whole range was not. */
	EXPECT_EQ(st0.cached_regions, st1.cached_regions);
	EXPECT_EQ(0, st1.handles);
}

TEST_F(data, crw_first_thousands_of_tags)
{
	ASSERT_EQ(0, crw_run(_metadata, &self->p, self->cbuf, self->sbuf,
			     test_iters(3000, 1500), 0));
}

TEST_F(data, stcrw_first_thousands_of_tags)
{
	unsigned int n = test_iters(3000, 1500);
	struct mrrc_conn_query q;

	ASSERT_EQ(0, crw_run(_metadata, &self->p, self->cbuf, self->sbuf,
			     n, 1));
	ASSERT_EQ(0, mrrc_conn_query(self->p.cfd, self->p.cconn, &q));
	EXPECT_EQ(n, q.crw_matched);
	/* Every STCRW's exposure was ended by its CRW_DONE. */
	ASSERT_EQ(0, mrrc_conn_query(self->p.sfd, self->p.sconn, &q));
	EXPECT_EQ(remote_inv_on() ? n : 0, q.remote_inv);
}

TEST_F(data, crw_and_stcrw_interleaved)
{
	ASSERT_EQ(0, crw_run(_metadata, &self->p, self->cbuf, self->sbuf,
			     test_iters(3000, 1500), 2));
}

TEST_F(data, crw_larger_than_stcrw_fails_both)
{
	struct mrrc_wr w = wr(self->p.cconn, MRRC_OP_CRW, self->cbuf, 8192, 1);
	struct mrrc_cqe c;

	w.tag = 5;
	ASSERT_EQ(0, post1(self->p.cfd, w));
	w = wr(self->p.sconn, MRRC_OP_STCRW, self->sbuf, 4096, 2);
	w.tag = 5;
	ASSERT_EQ(0, post1(self->p.sfd, w));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
	EXPECT_EQ(-EMSGSIZE, c.status);
	ASSERT_EQ(0, reap(self->p.sfd, &c, 1));
	EXPECT_EQ(-EMSGSIZE, c.status);
}

TEST_F(data, deadlines_expire)
{
	struct mrrc_wr w[2];
	struct mrrc_cqe c;
	uint64_t t0 = now_ns();

	w[0] = wr(self->p.cconn, MRRC_OP_CRW, self->cbuf, 64, 1);
	w[0].tag = 11;
	w[0].deadline_ns = t0 + 100000000;
	ASSERT_EQ(0, post1(self->p.cfd, w[0]));
	w[1] = wr(self->p.sconn, MRRC_OP_STCRW, self->sbuf, 64, 2);
	w[1].tag = 12;
	w[1].deadline_ns = t0 + 100000000;
	ASSERT_EQ(0, post1(self->p.sfd, w[1]));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
	EXPECT_EQ(-ETIMEDOUT, c.status);
	EXPECT_EQ(11, c.tag);
	EXPECT_LE(t0 + 100000000, now_ns());
	ASSERT_EQ(0, reap(self->p.sfd, &c, 1));
	EXPECT_EQ(-ETIMEDOUT, c.status);
	EXPECT_EQ(12, c.tag);
	/* The tags are free again. */
	w[0].deadline_ns = 0;
	ASSERT_EQ(0, post1(self->p.cfd, w[0]));
	ASSERT_EQ(0, mrrc_cancel(self->p.cfd, self->p.cconn, MRRC_OP_CRW, 11));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
}

TEST_F(data, cancel_and_duplicates)
{
	struct mrrc_wr w = wr(self->p.cconn, MRRC_OP_CRW, self->cbuf, 64, 1);
	struct mrrc_cqe c;
	unsigned int done = 9;

	w.tag = 77;
	ASSERT_EQ(0, post1(self->p.cfd, w));
	EXPECT_EQ(-EEXIST, mrrc_post(self->p.cfd, &w, 1, &done));
	EXPECT_EQ(0, done);
	EXPECT_EQ(-ENOENT, mrrc_cancel(self->p.cfd, self->p.cconn,
				       MRRC_OP_CRW, 78));
	EXPECT_EQ(-ENOENT, mrrc_cancel(self->p.cfd, self->p.cconn,
				       MRRC_OP_STCRW, 77));
	EXPECT_EQ(-EINVAL, mrrc_cancel(self->p.cfd, self->p.cconn,
				       MRRC_OP_WRITE, 77));
	ASSERT_EQ(0, mrrc_cancel(self->p.cfd, self->p.cconn, MRRC_OP_CRW, 77));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
	EXPECT_EQ(-ECANCELED, c.status);
	EXPECT_EQ(1, c.wr_id);
	EXPECT_EQ(-ENOENT, mrrc_cancel(self->p.cfd, self->p.cconn,
				       MRRC_OP_CRW, 77));

	/* STCRW: the same. */
	w = wr(self->p.sconn, MRRC_OP_STCRW, self->sbuf, 64, 2);
	w.tag = 77;
	ASSERT_EQ(0, post1(self->p.sfd, w));
	EXPECT_EQ(-EEXIST, post1(self->p.sfd, w));
	ASSERT_EQ(0, mrrc_cancel(self->p.sfd, self->p.sconn, MRRC_OP_STCRW,
				 77));
	ASSERT_EQ(0, reap(self->p.sfd, &c, 1));
	EXPECT_EQ(-ECANCELED, c.status);
}

/*
 * STCRWs that time out are withdrawn from the peer: more of them than the
 * peer has receive buffers leave the connection working (without the
 * withdrawal each kept a buffer and a credit, and 127 stalled the control
 * channel), and a CRW posted afterwards under one of their tags matches
 * nothing and writes nothing.
 */
TEST_F(data, stale_stcrws_are_withdrawn)
{
	const unsigned int n = 200;
	uint64_t t0 = now_ns();
	struct mrrc_conn_query q;
	struct mrrc_cqe c;
	struct mrrc_wr w;
	unsigned int i;

	memset(self->sbuf, 0x33, 8192);
	for (i = 0; i < n; i++) {
		w = wr(self->p.sconn, MRRC_OP_STCRW, self->sbuf, 64, i);
		w.tag = 1 + i;
		w.deadline_ns = t0 + 300000000;
		ASSERT_EQ(0, post1(self->p.sfd, w));
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, reap(self->p.sfd, &c, 1));
		ASSERT_EQ(-ETIMEDOUT, c.status) TH_LOG("tag %llu",
						       (unsigned long long)c.tag);
	}
	ASSERT_EQ(0, mrrc_conn_query(self->p.sfd, self->p.sconn, &q));
	EXPECT_EQ(0, q.withdraw_lost);
	/* All that reached the peer: all it could hold. */
	EXPECT_LE(MRRC_TEST_RX_DEPTH - 3, q.withdrawn);

	/* A late CRW under a withdrawn tag waits, expires, writes nothing. */
	fill(self->cbuf, 64, 5);
	w = wr(self->p.cconn, MRRC_OP_CRW, self->cbuf, 64, 1000);
	w.tag = 5;
	w.deadline_ns = now_ns() + 300000000;
	ASSERT_EQ(0, post1(self->p.cfd, w));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
	EXPECT_EQ(-ETIMEDOUT, c.status);
	for (i = 0; i < 64; i++)
		ASSERT_EQ(0x33, self->sbuf[i]);

	/* The connection still carries CRW/STCRW. */
	w = wr(self->p.sconn, MRRC_OP_STCRW, self->sbuf + 4096, 64, 2000);
	w.tag = 9999;
	ASSERT_EQ(0, post1(self->p.sfd, w));
	w = wr(self->p.cconn, MRRC_OP_CRW, self->cbuf, 64, 2001);
	w.tag = 9999;
	ASSERT_EQ(0, post1(self->p.cfd, w));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
	EXPECT_EQ(0, c.status);
	ASSERT_EQ(0, reap(self->p.sfd, &c, 1));
	EXPECT_EQ(0, c.status);
	EXPECT_EQ(64, c.byte_len);
	EXPECT_EQ(0, check(self->sbuf + 4096, 64, 5));
}

/* A cancelled STCRW the peer already holds is withdrawn the same way. */
TEST_F(data, cancelled_stcrw_is_withdrawn)
{
	struct mrrc_conn_query q0, q;
	struct mrrc_cqe c;
	struct mrrc_wr w;
	int64_t end;
	int r;

	memset(self->sbuf, 0x44, 64);
	ASSERT_EQ(0, mrrc_conn_query(self->p.cfd, self->p.cconn, &q0));
	w = wr(self->p.sconn, MRRC_OP_STCRW, self->sbuf, 64, 1);
	w.tag = 7;
	ASSERT_EQ(0, post1(self->p.sfd, w));
	/* Wait until the peer has it. */
	end = now_ms() + TMO_MS;
	do {
		ASSERT_EQ(0, mrrc_conn_query(self->p.cfd, self->p.cconn, &q));
		ASSERT_GT(end, now_ms());
	} while (q.ctrl_recv == q0.ctrl_recv && !usleep(1000));

	ASSERT_EQ(0, mrrc_cancel(self->p.sfd, self->p.sconn, MRRC_OP_STCRW,
				 7));
	/* Being withdrawn, or already gone. */
	r = mrrc_cancel(self->p.sfd, self->p.sconn, MRRC_OP_STCRW, 7);
	EXPECT_TRUE(r == -EALREADY || r == -ENOENT) TH_LOG("%d", r);
	ASSERT_EQ(0, reap(self->p.sfd, &c, 1));
	EXPECT_EQ(-ECANCELED, c.status);
	ASSERT_EQ(0, mrrc_conn_query(self->p.sfd, self->p.sconn, &q));
	EXPECT_EQ(1, q.withdrawn);

	w = wr(self->p.cconn, MRRC_OP_CRW, self->cbuf, 64, 2);
	w.tag = 7;
	w.deadline_ns = now_ns() + 300000000;
	ASSERT_EQ(0, post1(self->p.cfd, w));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
	EXPECT_EQ(-ETIMEDOUT, c.status);
	EXPECT_EQ(0x44, self->sbuf[0]);
	EXPECT_EQ(0x44, self->sbuf[63]);
}

/* A context exposes at most max_exposed ranges at once: EAGAIN beyond. */
TEST_F(data, exposures_are_bounded)
{
	struct mrrc_cqe c[2];
	char old[32];

	ASSERT_EQ(0, param_rw("max_exposed", old, sizeof(old), 0));
	ASSERT_EQ(0, param_rw("max_exposed", (char *)"2", 0, 1));
	EXPECT_EQ(0, post1(self->p.sfd, wr(self->p.sconn, MRRC_OP_RECV,
					   self->sbuf, 64, 1)));
	EXPECT_EQ(0, post1(self->p.sfd, wr(self->p.sconn, MRRC_OP_RECV,
					   self->sbuf + 4096, 64, 2)));
	EXPECT_EQ(-EAGAIN, post1(self->p.sfd, wr(self->p.sconn, MRRC_OP_RECV,
						 self->sbuf + 8192, 64, 3)));
	/* A polled completion gives its exposure back. */
	ASSERT_EQ(0, post1(self->p.cfd, wr(self->p.cconn, MRRC_OP_SEND,
					   self->cbuf, 8, 4)));
	ASSERT_EQ(0, reap(self->p.cfd, &c[0], 1));
	ASSERT_EQ(0, reap(self->p.sfd, &c[1], 1));
	EXPECT_EQ(1, c[1].wr_id);
	EXPECT_EQ(0, post1(self->p.sfd, wr(self->p.sconn, MRRC_OP_RECV,
					   self->sbuf + 8192, 64, 3)));
	ASSERT_EQ(0, param_rw("max_exposed", old, 0, 1));
}

/* A context holds at most max_ops operations over all connections. */
TEST_F(data, operations_per_context_are_bounded)
{
	struct mrrc_wr w = wr(self->p.cconn, MRRC_OP_CRW, self->cbuf, 64, 1);
	struct mrrc_cqe c;
	char old[32];

	ASSERT_EQ(0, param_rw("max_ops", old, sizeof(old), 0));
	ASSERT_EQ(0, param_rw("max_ops", (char *)"2", 0, 1));
	w.tag = 1;
	EXPECT_EQ(0, post1(self->p.cfd, w));
	w.tag = 2;
	EXPECT_EQ(0, post1(self->p.cfd, w));
	w.tag = 3;
	EXPECT_EQ(-EAGAIN, post1(self->p.cfd, w));
	/* Polling one makes room. */
	ASSERT_EQ(0, mrrc_cancel(self->p.cfd, self->p.cconn, MRRC_OP_CRW, 1));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
	EXPECT_EQ(0, post1(self->p.cfd, w));
	ASSERT_EQ(0, param_rw("max_ops", old, 0, 1));
}

TEST_F(data, bad_operations_are_refused)
{
	struct mrrc_wr w = wr(self->p.cconn, MRRC_OP_WRITE, self->cbuf, 64, 1);
	struct mrrc_post p = { .size = sizeof(p), .count = 1,
			       .wr_size = sizeof(w), .wrs = (uintptr_t)&w };

	w.conn = 424242;
	EXPECT_EQ(-ENOENT, post1(self->p.cfd, w));
	w.conn = self->p.cconn;
	w.opcode = 0;
	EXPECT_EQ(-EINVAL, post1(self->p.cfd, w));
	w.opcode = MRRC_OP_LAST + 1;
	EXPECT_EQ(-EINVAL, post1(self->p.cfd, w));
	w.opcode = MRRC_OP_WRITE;
	w.flags = 0x80;
	EXPECT_EQ(-EOPNOTSUPP, post1(self->p.cfd, w));
	w.flags = 0;
	w.__reserved = 1;
	EXPECT_EQ(-EINVAL, post1(self->p.cfd, w));
	w.__reserved = 0;
	w.len = 0;
	EXPECT_EQ(-EINVAL, post1(self->p.cfd, w));
	w.len = 64;
	w.tag = 3;
	EXPECT_EQ(-EINVAL, post1(self->p.cfd, w));
	w.tag = 0;
	w.opcode = MRRC_OP_SEND;
	w.rkey = 5;
	EXPECT_EQ(-EINVAL, post1(self->p.cfd, w));
	w.rkey = 0;
	w.opcode = MRRC_OP_WRITE;
	w.addr = 8;		/* not mapped */
	EXPECT_EQ(-EFAULT, post1(self->p.cfd, w));
	w.addr = (uintptr_t)self->cbuf;
	w.flags = MRRC_WR_HANDLE;
	w.handle = 12345;
	EXPECT_EQ(handle_errno(variant, -ENOENT), post1(self->p.cfd, w));
	/* A listener takes no operations. */
	w.flags = 0;
	w.handle = 0;
	w.conn = self->p.lis;
	EXPECT_EQ(-EINVAL, post1(self->p.sfd, w));
	/* Structure rules. */
	p.flags = 1;
	EXPECT_EQ(-EOPNOTSUPP, raw_ioctl(self->p.cfd, MRRC_IOC_POST, &p));
	p.flags = 0;
	p.wr_size = 8;
	EXPECT_EQ(-EINVAL, raw_ioctl(self->p.cfd, MRRC_IOC_POST, &p));
}

TEST_F(data, operations_by_handle)
{
	struct mrrc_seg sseg, cseg;
	struct mrrc_cqe c;
	struct mrrc_wr w;
	uint32_t sh_, ch;

	ASSERT_EQ(0, export1(self->p.sfd, self->p.sconn, self->sbuf, 8192,
			     MRRC_ACCESS_REMOTE_WRITE, &sseg, &sh_));
	ASSERT_EQ(0, reg1(self->p.cfd, self->cbuf, 8192, 0, &cseg, &ch));
	fill(self->cbuf + 100, 5000, 3);
	w = wr(self->p.cconn, MRRC_OP_WRITE, self->cbuf + 100, 5000, 1);
	w.flags = MRRC_WR_HANDLE;
	w.handle = ch;
	w.remote_addr = sseg.addr + 100;
	w.rkey = sseg.rkey;
	if (variant->conn_flags & MRRC_CONN_ISOLATED) {
		/* The handle's keys are of the context's PD, not the QP's. */
		EXPECT_EQ(-EINVAL, post1(self->p.cfd, w));
		EXPECT_EQ(1, mrrc_release(self->p.cfd, &ch, 1));
		EXPECT_EQ(0, mrrc_unexport(self->p.sfd, sh_));
		return;
	}
	ASSERT_EQ(0, post1(self->p.cfd, w));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
	ASSERT_EQ(0, c.status);
	EXPECT_EQ(0, check(self->sbuf + 100, 5000, 3));
	/* Outside the handle's range. */
	w.len = 9000;
	EXPECT_EQ(-EINVAL, post1(self->p.cfd, w));
	/* Released handles are gone. */
	EXPECT_EQ(1, mrrc_release(self->p.cfd, &ch, 1));
	w.len = 10;
	EXPECT_EQ(-ENOENT, post1(self->p.cfd, w));
	EXPECT_EQ(0, mrrc_unexport(self->p.sfd, sh_));
}

/*
 * An operation in flight holds its memory through a handle of its own.
 * The caller cannot name it: not to release it (which would drop the
 * regions under a running transfer, and later release somebody else's
 * handle with the same number), not to post with it.
 */
TEST_F(data, operation_handles_are_not_the_callers)
{
	struct mrrc_wr w = wr(self->p.cconn, MRRC_OP_CRW, self->cbuf, 4096, 1);
	struct mrrc_cache_stats st;
	struct mrrc_cqe c;
	uint32_t h;

	w.tag = 5;
	ASSERT_EQ(0, post1(self->p.cfd, w));
	ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st));
	ASSERT_EQ(1, st.handles);
	for (h = 1; h <= 64; h++) {
		struct mrrc_wr u = wr(self->p.cconn, MRRC_OP_WRITE,
				      self->cbuf, 64, 2);

		EXPECT_EQ(-ENOENT, mrrc_release(self->p.cfd, &h, 1));
		u.flags = MRRC_WR_HANDLE;
		u.handle = h;
		u.remote_addr = (uintptr_t)self->sbuf;
		u.rkey = 1;
		EXPECT_EQ(handle_errno(variant, -ENOENT), post1(self->p.cfd, u));
	}
	ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st));
	EXPECT_EQ(1, st.handles);
	/* The operation still completes, and gives its handle back. */
	ASSERT_EQ(0, mrrc_cancel(self->p.cfd, self->p.cconn, MRRC_OP_CRW, 5));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
	EXPECT_EQ(-ECANCELED, c.status);
	ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st));
	EXPECT_EQ(0, st.handles);
}

TEST_F(data, queue_full_gives_eagain_and_loses_nothing)
{
	struct mrrc_wr *w = calloc(MRRC_CONN_MAX_OPS + 1, sizeof(*w));
	struct mrrc_cqe *c = calloc(MRRC_CONN_MAX_OPS, sizeof(*c));
	unsigned int i, done = 0;

	ASSERT_NE(NULL, w);
	for (i = 0; i <= MRRC_CONN_MAX_OPS; i++) {
		w[i] = wr(self->p.cconn, MRRC_OP_CRW, self->cbuf, 64, i);
		w[i].tag = i + 1;
	}
	EXPECT_EQ(-EAGAIN, mrrc_post(self->p.cfd, w, MRRC_CONN_MAX_OPS + 1,
				     &done));
	EXPECT_EQ(MRRC_CONN_MAX_OPS, done);
	/* Disconnecting flushes every held one, exactly once. */
	ASSERT_EQ(0, mrrc_disconnect(self->p.cfd, self->p.cconn));
	ASSERT_EQ(0, reap(self->p.cfd, c, MRRC_CONN_MAX_OPS));
	memset(w, 0, sizeof(*w) * MRRC_CONN_MAX_OPS);
	for (i = 0; i < MRRC_CONN_MAX_OPS; i++) {
		ASSERT_LT(c[i].wr_id, MRRC_CONN_MAX_OPS);
		EXPECT_EQ(0, w[c[i].wr_id].wr_id++);
		EXPECT_EQ(-ECONNRESET, c[i].status);
	}
	w[0] = wr(self->p.cconn, MRRC_OP_CRW, self->cbuf, 64, 0);
	w[0].tag = 1;
	ASSERT_LE(0, wait_event(self->p.cfd, MRRC_EVENT_DISCONNECTED, NULL));
	ASSERT_LE(0, wait_event(self->p.sfd, MRRC_EVENT_DISCONNECTED, NULL));
	EXPECT_EQ(-ENOTCONN, post1(self->p.cfd, w[0]));
	EXPECT_EQ(0, mrrc_destroy(self->p.cfd, self->p.cconn));
	EXPECT_EQ(-ENOENT, mrrc_destroy(self->p.cfd, self->p.cconn));
	free(w);
	free(c);
}

/*
 * DESTROY right after a whole send window of writes and a backlog: every
 * write completes exactly once, done or flushed, and none after.  Over
 * rxe's loopback 6.1 has done them all before the drain, 6.12 few; the
 * two-VM hostile.destroy_with_a_stuck_send_queue holds the window full.
 */
TEST_F(data, destroy_with_the_send_window_in_use)
{
	const unsigned int n = MRRC_TEST_SQ_DEPTH + 64;
	struct mrrc_wr *w = calloc(n, sizeof(*w));
	struct mrrc_cqe *c = calloc(n, sizeof(*c));
	unsigned int i, done = 0, flushed = 0;
	struct mrrc_seg seg;
	uint32_t h;
	int r;

	ASSERT_NE(NULL, w);
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, export1(self->p.sfd, self->p.sconn, self->sbuf, 64 << 10,
			     MRRC_ACCESS_REMOTE_WRITE, &seg, &h));
	for (i = 0; i < n; i++) {
		w[i] = wr(self->p.cconn, MRRC_OP_WRITE, self->cbuf, 64 << 10,
			  i);
		w[i].remote_addr = seg.addr;
		w[i].rkey = seg.rkey;
	}
	ASSERT_EQ(0, mrrc_post(self->p.cfd, w, n, &done));
	ASSERT_EQ(n, done);
	ASSERT_EQ(0, mrrc_destroy(self->p.cfd, self->p.cconn));
	memset(w, 0, sizeof(*w) * n);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, reap_op(self->p.cfd, &c[i]))
			TH_LOG("%u of %u writes completed", i, n);
		ASSERT_LT(c[i].wr_id, n);
		EXPECT_EQ(0, w[c[i].wr_id].wr_id++)
			TH_LOG("write %llu completed twice",
			       (unsigned long long)c[i].wr_id);
		if (c[i].status) {
			EXPECT_EQ(-ECONNRESET, c[i].status);
			flushed++;
		}
	}
	/* And nothing after. */
	mrrc_wait(self->p.cfd, 300);
	while ((r = mrrc_poll_cq(self->p.cfd, c, 1)) == 1)
		EXPECT_EQ(MRRC_OP_EVENT, c[0].opcode);
	EXPECT_EQ(0, r);
	EXPECT_EQ(0, mrrc_unexport(self->p.sfd, h));
	ksft_print_msg("%u of %u writes were flushed by DESTROY\n", flushed,
		       n);
	fflush(stdout);
	free(w);
	free(c);
}

TEST_F(data, fd_is_pollable)
{
	struct pollfd pfd = { .fd = self->p.sfd, .events = POLLIN };
	struct mrrc_cqe c;

	EXPECT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_EQ(0, post1(self->p.sfd, wr(self->p.sconn, MRRC_OP_RECV,
					   self->sbuf, 64, 1)));
	ASSERT_EQ(0, post1(self->p.cfd, wr(self->p.cconn, MRRC_OP_SEND,
					   self->cbuf, 64, 1)));
	ASSERT_EQ(1, poll(&pfd, 1, TMO_MS));
	EXPECT_TRUE(pfd.revents & POLLIN);
	ASSERT_EQ(0, reap(self->p.sfd, &c, 1));
	ASSERT_EQ(0, reap(self->p.cfd, &c, 1));
	EXPECT_EQ(0, poll(&pfd, 1, 0));
}

/*
 * The worst bug registration caches have had: the same address, new
 * memory.  The peer must see the new content.
 */
TEST_F(data, stale_registration_safety_end_to_end)
{
	const size_t len = 64 * 1024;
	struct mrrc_cqe c[2];
	uint8_t *a;
	int round;

	a = map(len);
	ASSERT_NE(NULL, a);
	for (round = 0; round < 3; round++) {
		fill(a, len, 500 + round);
		memset(self->sbuf, 0, len);
		ASSERT_EQ(0, post1(self->p.sfd, wr(self->p.sconn,
						   MRRC_OP_RECV, self->sbuf,
						   len, 1)));
		ASSERT_EQ(0, post1(self->p.cfd, wr(self->p.cconn,
						   MRRC_OP_SEND, a, len, 2)));
		ASSERT_EQ(0, reap(self->p.cfd, &c[0], 1));
		ASSERT_EQ(0, reap(self->p.sfd, &c[1], 1));
		ASSERT_EQ(0, c[0].status);
		ASSERT_EQ(0, c[1].status);
		ASSERT_EQ(0, check(self->sbuf, len, 500 + round))
			TH_LOG("round %d: the peer got stale data", round);
		/* New memory at the same address, other content. */
		ASSERT_EQ(0, munmap(a, len));
		ASSERT_EQ(a, mmap(a, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				  -1, 0));
	}
	munmap(a, len);
}

/* WRITE @len bytes of @src to @seg and wait: the completion's status. */
static int write_wait(struct pair *p, void *src, size_t len,
		      const struct mrrc_seg *seg)
{
	struct mrrc_wr w = wr(p->cconn, MRRC_OP_WRITE, src, len, 3);
	struct mrrc_cqe c;
	int r;

	w.remote_addr = seg->addr;
	w.rkey = seg->rkey;
	r = post1(p->cfd, w);
	if (!r)
		r = reap_op(p->cfd, &c);
	return r ? r : c.status;
}


/* Set a boolean module parameter; the old value in @old (Y or N). */
static int param_set(const char *name, const char *v, char *old)
{
	int r = param_rw(name, old, 8, 0);

	return r ?: param_rw(name, (char *)v, 0, 1);
}

/*
 * A miss on the data path (issue 13, item 1): with chain_reg (the
 * default) its REG_MR goes on the connection's queue pair ahead of the
 * WRITE and the registration queue pair is not used; with chain_reg=N it
 * is waited for there.  Either way the data arrives, and the second round
 * over the same buffers hits and registers nothing.  RECVs' exposures
 * (chain_expo on) go on the connection too, with their advertisements,
 * chain_reg on or off.
 */
TEST_F(data, chained_miss_registers_on_the_connection)
{
	const size_t len = 16 << 10;
	struct mrrc_cache_stats st0, st1;
	struct mrrc_seg seg;
	unsigned int k, i, round;
	char old[8], old_expo[8];
	uint32_t h;

	ASSERT_EQ(0, export1(self->p.sfd, self->p.sconn, self->sbuf, 8 * len,
			     MRRC_ACCESS_REMOTE_WRITE, &seg, &h));
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, param_set("chain_reg", k ? "N" : "Y", old));
		for (round = 0; round < 2; round++) {
			ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st0));
			for (i = 0; i < 4; i++) {
				uint8_t *src = self->cbuf + (k * 4 + i) * len;
				struct mrrc_seg at = seg;

				at.addr += i * len;
				fill(src, len, 10 * k + i + round);
				ASSERT_EQ(0, write_wait(&self->p, src, len, &at));
				ASSERT_EQ(0, check(self->sbuf + i * len, len,
						   10 * k + i + round));
			}
			ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st1));
			if (round) {
				/* Hits: nothing registered either way. */
				EXPECT_EQ(st0.registrations, st1.registrations);
				EXPECT_EQ(st0.reg_chained, st1.reg_chained);
			} else if (!k) {
				EXPECT_EQ(st0.reg_chained + 4, st1.reg_chained);
				EXPECT_EQ(st0.reg_wrs, st1.reg_wrs);
			} else {
				EXPECT_EQ(st0.reg_chained, st1.reg_chained);
				EXPECT_EQ(st0.reg_wrs + 4, st1.reg_wrs);
			}
			EXPECT_EQ(st0.reg_chain_failures,
				  st1.reg_chain_failures);
		}
		/*
		 * A RECV's exposure (one range, pooled) goes on the
		 * connection with chain_expo, whatever chain_reg says.
		 */
		ASSERT_EQ(0, param_set("chain_expo", "Y", old_expo));
		ASSERT_EQ(0, mrrc_cache_stats(self->p.sfd, &st0));
		for (i = 0; i < 4; i++) {
			uint8_t *dst = self->sbuf + 2 * MiB;
			struct mrrc_cqe c[2];

			memset(dst, 0, len + 1);
			fill(self->cbuf, len, 40 + i);
			ASSERT_EQ(0, post1(self->p.sfd,
					   wr(self->p.sconn, MRRC_OP_RECV, dst,
					      len + 1, 7)));
			ASSERT_EQ(0, post1(self->p.cfd,
					   wr(self->p.cconn, MRRC_OP_SEND,
					      self->cbuf, len, 8)));
			ASSERT_EQ(0, reap(self->p.cfd, &c[0], 1));
			ASSERT_EQ(0, reap(self->p.sfd, &c[1], 1));
			ASSERT_EQ(0, c[0].status);
			ASSERT_EQ(0, c[1].status);
			ASSERT_EQ(len, c[1].byte_len);
			ASSERT_EQ(0, check(dst, len, 40 + i));
			ASSERT_EQ(0, dst[len]);
		}
		ASSERT_EQ(0, mrrc_cache_stats(self->p.sfd, &st1));
		EXPECT_EQ(st0.expo_chained + 4, st1.expo_chained);
		EXPECT_EQ(st0.exposures + 4, st1.exposures);
		EXPECT_EQ(st0.exposed, st1.exposed);
		ASSERT_EQ(0, param_rw("chain_expo", old_expo, 0, 1));
		ASSERT_EQ(0, param_rw("chain_reg", old, 0, 1));
	}
	EXPECT_EQ(0, mrrc_unexport(self->p.sfd, h));
}

/* Event @ev on @fd, other events (of earlier connections) skipped. */
static int reap_event(int fd, int ev)
{
	struct mrrc_cqe c;
	int r;

	do {
		r = reap(fd, &c, 1);
	} while (!r && (c.opcode != MRRC_OP_EVENT || c.event != ev));
	return r ? r : (int)c.conn;
}

/*
 * A connection destroyed while the REG_MRs of its misses (and, chain_expo
 * on, of a RECV's exposure) are still queued on it: each operation completes exactly
 * once, flushed or not, the flushed REG_MRs leave nothing registered or
 * pinned behind (FLUSH then leaves no pinned page), and the context's
 * other connection goes on working.
 */
TEST_F(data, destroy_with_chained_registrations_in_flight)
{
	const size_t len = 16 << 10;
	struct mrrc_cache_stats st;
	struct mrrc_conn_query q;
	struct sockaddr_in sin;
	struct mrrc_seg seg;
	unsigned int i, k;
	uint32_t h, c2, s2;
	char old[8];
	int r;

	ASSERT_EQ(0, param_set("chain_expo", "Y", old));
	ASSERT_EQ(0, mrrc_conn_query(self->p.sfd, self->p.lis, &q));
	sin = vm_addr(q.local.port);
	for (i = 0; i < 16; i++) {
		uint8_t *src = self->cbuf + 2 * i * len;
		struct mrrc_wr w[3];
		unsigned int seen[3] = { 0 };
		struct mrrc_cqe c;

		ASSERT_EQ(0, mrrc_connect(self->p.cfd, (struct sockaddr *)&sin,
					  NULL, 0, 0xc3, &c2));
		r = reap_event(self->p.sfd, MRRC_EVENT_CONNECT_REQUEST);
		ASSERT_LT(0, r);
		s2 = r;
		ASSERT_EQ(0, mrrc_accept(self->p.sfd, s2, 0x5e));
		ASSERT_LE(0, reap_event(self->p.sfd, MRRC_EVENT_ESTABLISHED));
		ASSERT_LE(0, reap_event(self->p.cfd, MRRC_EVENT_ESTABLISHED));
		ASSERT_EQ(0, export1(self->p.sfd, s2, self->sbuf, 2 * len,
				     MRRC_ACCESS_REMOTE_WRITE, &seg, &h));
		/* Two misses and a RECV (an exposure), then at once DESTROY. */
		for (k = 0; k < 2; k++) {
			w[k] = wr(c2, MRRC_OP_WRITE, src + k * len / 2, len / 2,
				  k);
			w[k].remote_addr = seg.addr + k * len;
			w[k].rkey = seg.rkey;
		}
		w[2] = wr(c2, MRRC_OP_RECV, self->cbuf + 3 * MiB + i * len,
			  len, 2);
		ASSERT_EQ(0, mrrc_post(self->p.cfd, w, 3, &k));
		ASSERT_EQ(3, k);
		ASSERT_EQ(0, mrrc_destroy(self->p.cfd, c2));
		for (k = 0; k < 3; k++) {
			ASSERT_EQ(0, reap_op(self->p.cfd, &c)) TH_LOG("round %u", i);
			ASSERT_GT(3, c.wr_id);
			seen[c.wr_id]++;
		}
		for (k = 0; k < 3; k++)
			ASSERT_EQ(1, seen[k]) TH_LOG("round %u, op %u", i, k);
		EXPECT_EQ(0, mrrc_unexport(self->p.sfd, h));
		ASSERT_EQ(0, mrrc_destroy(self->p.sfd, s2));
	}
	ASSERT_EQ(0, param_rw("chain_expo", old, 0, 1));
	/* Nothing stays pinned once flushed. */
	ASSERT_LE(0, mrrc_flush(self->p.cfd));
	ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st));
	EXPECT_EQ(0, st.pinned_pages);
	EXPECT_EQ(0, st.exposed);
	EXPECT_EQ(0, st.inuse_regions);
	TH_LOG("%llu chained, %llu failed (flushed)",
	       (unsigned long long)st.reg_chained,
	       (unsigned long long)st.reg_chain_failures);
	k = 1;
	ASSERT_EQ(0, mrrc_export(self->p.sfd, self->sbuf, len,
				 MRRC_ACCESS_REMOTE_WRITE, &self->p.sconn, 1,
				 &seg, &k, &h));
	fill(self->cbuf, len, 77);
	ASSERT_EQ(0, write_wait(&self->p, self->cbuf, len, &seg));
	ASSERT_EQ(0, check(self->sbuf, len, 77));
	EXPECT_EQ(0, mrrc_unexport(self->p.sfd, h));
}

/*
 * Two connections of one context write from the same fresh buffers, the
 * second posted while the first's chained REG_MR may still be in flight.
 * The second must not wait for a queue pair the first connection's peer
 * could hold up: it registers its range privately (reg_chain_uncached)
 * or, if the REG_MR has completed, uses the cached region.  Either way
 * both writes carry the right bytes; which way a round went depends on
 * timing, and every round must succeed.
 */
TEST_F(data, second_connection_never_waits_for_a_chained_registration)
{
	const size_t len = 16 << 10;
	struct sockaddr_in sin;
	struct mrrc_cache_stats st0, st1;
	struct mrrc_conn_query q;
	struct mrrc_seg seg, seg2;
	uint32_t h, h2 = 0, c2, s2, conns[2];
	unsigned int i, n;
	int r;

	/* A second connection from the client context to the listener. */
	ASSERT_EQ(0, mrrc_conn_query(self->p.sfd, self->p.lis, &q));
	sin = vm_addr(q.local.port);
	ASSERT_EQ(0, mrrc_connect_flags(self->p.cfd, (struct sockaddr *)&sin,
					NULL, 0, variant->conn_flags, 0xc2,
					&c2));
	r = wait_event(self->p.sfd, MRRC_EVENT_CONNECT_REQUEST, NULL);
	ASSERT_LT(0, r);
	s2 = r;
	ASSERT_EQ(0, mrrc_accept(self->p.sfd, s2, 0x5d));
	ASSERT_LE(0, wait_event(self->p.sfd, MRRC_EVENT_ESTABLISHED, NULL));
	ASSERT_LE(0, wait_event(self->p.cfd, MRRC_EVENT_ESTABLISHED, NULL));
	conns[0] = self->p.sconn;
	conns[1] = s2;
	n = 1;
	if (variant->conn_flags & MRRC_CONN_ISOLATED) {
		/* A key per connection. */
		ASSERT_EQ(0, export1(self->p.sfd, self->p.sconn, self->sbuf,
				     128 * len, MRRC_ACCESS_REMOTE_WRITE, &seg,
				     &h));
		ASSERT_EQ(0, export1(self->p.sfd, s2, self->sbuf, 128 * len,
				     MRRC_ACCESS_REMOTE_WRITE, &seg2, &h2));
	} else {
		ASSERT_EQ(0, mrrc_export(self->p.sfd, self->sbuf, 128 * len,
					 MRRC_ACCESS_REMOTE_WRITE, conns, 2,
					 &seg, &n, &h));
		seg2 = seg;
	}
	ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st0));
	for (i = 0; i < 64; i++) {
		uint8_t *src = self->cbuf + i * len;
		struct mrrc_wr a = wr(self->p.cconn, MRRC_OP_WRITE, src, len, 1);
		struct mrrc_wr b = wr(c2, MRRC_OP_WRITE, src, len, 2);
		struct mrrc_cqe c[2];

		fill(src, len, 500 + i);
		a.remote_addr = seg.addr + 2 * i * len;
		b.remote_addr = seg2.addr + (2 * i + 1) * len;
		a.rkey = seg.rkey;
		b.rkey = seg2.rkey;
		ASSERT_EQ(0, post1(self->p.cfd, a));
		ASSERT_EQ(0, post1(self->p.cfd, b));
		ASSERT_EQ(0, reap(self->p.cfd, c, 2));
		ASSERT_EQ(0, c[0].status) TH_LOG("round %u", i);
		ASSERT_EQ(0, c[1].status) TH_LOG("round %u", i);
		ASSERT_EQ(0, check(self->sbuf + 2 * i * len, len, 500 + i));
		ASSERT_EQ(0, check(self->sbuf + (2 * i + 1) * len, len,
				   500 + i));
	}
	ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st1));
	EXPECT_EQ(st0.reg_chain_failures, st1.reg_chain_failures);
	TH_LOG("%llu of 64 rounds chained, %llu registered privately around the other connection's",
	       (unsigned long long)(st1.reg_chained - st0.reg_chained),
	       (unsigned long long)(st1.reg_chain_uncached -
				    st0.reg_chain_uncached));
	EXPECT_EQ(0, mrrc_unexport(self->p.sfd, h));
	if (h2)
		EXPECT_EQ(0, mrrc_unexport(self->p.sfd, h2));
}

/*
 * The cache keeps a region across changes that leave every page in
 * place, mprotect() and fork(), and drops it when a page is replaced, as
 * copy-on-write does (issue 13, item 6).  Checked by data: the peer
 * always gets what this process last wrote, never the child's copy.
 */
TEST_F(data, cached_source_follows_protection_fork_and_cow)
{
	const size_t len = 64 << 10;
	struct mrrc_cache_stats st0, st1;
	struct mrrc_seg seg;
	char path[] = "/tmp/mrrc-cow-XXXXXX";
	uint8_t *f, *src = map(len);
	int fd, wst;
	uint32_t h;
	pid_t pid;

	/*
	 * A mapping of its own, too small for a huge page: splitting one
	 * (as mprotect() of part of it would) replaces the page table entry
	 * and rightly drops the region.  (MADV_NOHUGEPAGE fails on a kernel
	 * without transparent huge pages; there is nothing to split then.)
	 */
	ASSERT_NE(NULL, src);
	if (madvise(src, len, MADV_NOHUGEPAGE))
		TH_LOG("no transparent huge pages here");
	ASSERT_EQ(0, export1(self->p.sfd, self->p.sconn, self->sbuf, len,
			     MRRC_ACCESS_REMOTE_WRITE, &seg, &h));
	fill(src, len, 1);
	ASSERT_EQ(0, write_wait(&self->p, src, len, &seg));
	ASSERT_EQ(0, check(self->sbuf, len, 1));
	ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st0));

	/* An mprotect() round trip keeps the region and its pages. */
	ASSERT_EQ(0, mprotect(src, len, PROT_READ));
	ASSERT_EQ(0, mprotect(src, len, PROT_READ | PROT_WRITE));
	fill(src, len, 2);
	ASSERT_EQ(0, write_wait(&self->p, src, len, &seg));
	ASSERT_EQ(0, check(self->sbuf, len, 2));

	/* fork() too; the child's writes go to its own copy. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		fill(src, len, 9);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &wst, 0));
	ASSERT_EQ(0, write_wait(&self->p, src, len, &seg));
	ASSERT_EQ(0, check(self->sbuf, len, 2)) TH_LOG("the child's data");
	fill(src, len, 3);
	ASSERT_EQ(0, write_wait(&self->p, src, len, &seg));
	ASSERT_EQ(0, check(self->sbuf, len, 3));
	ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st1));
	EXPECT_EQ(st0.registrations, st1.registrations);
	EXPECT_EQ(st0.invalidations, st1.invalidations);
	EXPECT_LE(st0.notifier_kept + 3, st1.notifier_kept)
		TH_LOG("two mprotect() calls and a fork()");

	/*
	 * Copy-on-write: a private mapping of a file, read-pinned as the
	 * source of a WRITE, then written.  Either the pin took a private
	 * copy at once (newer kernels) or the write replaces the page and
	 * the region goes; the peer sees the new bytes both ways.
	 */
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	unlink(path);
	fill(self->sbuf, len, 4);	/* any content for the file */
	ASSERT_EQ((ssize_t)len, write(fd, self->sbuf, len));
	f = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, f);
	memset(self->sbuf, 0, len);
	ASSERT_EQ(0, write_wait(&self->p, f, len, &seg));
	ASSERT_EQ(0, check(self->sbuf, len, 4));
	ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st0));
	fill(f, len, 5);
	ASSERT_EQ(0, write_wait(&self->p, f, len, &seg));
	ASSERT_EQ(0, check(self->sbuf, len, 5)) TH_LOG("a stale page after COW");
	ASSERT_EQ(0, mrrc_cache_stats(self->p.cfd, &st1));
	ksft_print_msg("copy-on-write: %llu region(s) invalidated\n",
		       (unsigned long long)(st1.invalidations -
					    st0.invalidations));
	fflush(stdout);
	munmap(f, len);
	munmap(src, len);
	close(fd);
	EXPECT_EQ(0, mrrc_unexport(self->p.sfd, h));
}

TEST_F(data, close_with_operations_held)
{
	struct mrrc_wr w = wr(self->p.cconn, MRRC_OP_CRW, self->cbuf, 64, 1);
	int ctxs = debugfs_contexts();
	struct mrrc_cqe c;

	w.tag = 1;
	ASSERT_EQ(0, post1(self->p.cfd, w));
	w = wr(self->p.sconn, MRRC_OP_STCRW, self->sbuf, 64, 2);
	w.tag = 2;
	ASSERT_EQ(0, post1(self->p.sfd, w));
	close(self->p.cfd);
	self->p.cfd = -1;
	/* The held STCRW fails first, then the event. */
	ASSERT_EQ(0, reap(self->p.sfd, &c, 1));
	EXPECT_EQ(2, c.wr_id);
	EXPECT_EQ(-ECONNRESET, c.status);
	ASSERT_LE(0, wait_event(self->p.sfd, MRRC_EVENT_DISCONNECTED, NULL));
	EXPECT_EQ(ctxs - 1, debugfs_contexts());
}

/* ---- what a peer can reach ---------------------------------------------- */

static const char *const trace_dirs[] = {
	"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
};

/* Turn the mrrc_expose trace event on and empty the trace: its dir. */
static const char *expose_trace_on(void)
{
	char path[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(trace_dirs); i++) {
		snprintf(path, sizeof(path),
			 "%s/events/mrrc/mrrc_expose/enable", trace_dirs[i]);
		if (access(path, W_OK))
			continue;
		if (sh("echo 1 > %s && : > %s/trace", path, trace_dirs[i]))
			return NULL;
		return trace_dirs[i];
	}
	return NULL;
}

/* The key [addr, addr + len) was last exposed under, from the trace; 0. */
static uint32_t traced_rkey(const char *dir, void *addr, uint32_t len)
{
	char path[128], line[512], needle[64];
	unsigned int rkey = 0;
	char *at;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", dir);
	snprintf(needle, sizeof(needle), "addr=%#llx len=%u rkey=",
		 (unsigned long long)(uintptr_t)addr, len);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		at = strstr(line, needle);
		if (at)
			sscanf(at + strlen(needle), "%x", &rkey);
	}
	fclose(f);
	return rkey;
}

enum probe { BEFORE, AFTER, LATE };

/*
 * The server posts a RECV of 50 bytes across a page boundary and the
 * client, holding the key the server's module advertised (read from the
 * trace), RDMA-writes one byte: before the range, after it, or inside it
 * (which must work) and then again once the server has polled the RECV's
 * completion.  Returns the status of the probing write; *changed is set
 * when a byte outside what the server's RECV and the client's honest
 * operations could write has changed.
 */
static int expose_probe(struct __test_metadata *_metadata, const char *dir,
			uint32_t mode, enum probe probe, bool *changed)
{
	struct mrrc_cache_config cfg = { .mode = mode };
	const size_t blen = 3 * 4096, off = 4096 - 20, len = 50;
	uint8_t *buf = map(blen), *cbuf = map(4096), *want = malloc(blen);
	struct mrrc_cache_stats st = { .size = sizeof(st) };
	struct mrrc_wr w;
	struct mrrc_cqe c;
	struct pair p;
	uint32_t rkey;
	int status;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, cbuf);
	ASSERT_NE(NULL, want);
	memset(buf, 0x11, blen);
	memset(cbuf, 0xee, 4096);
	memcpy(want, buf, blen);
	ASSERT_EQ(0, pair_open(&p));
	ASSERT_EQ(0, mrrc_cache_config(p.sfd, &cfg));
	ASSERT_EQ(0, sh(": > %s/trace", dir));

	ASSERT_EQ(0, post1(p.sfd, wr(p.sconn, MRRC_OP_RECV, buf + off, len,
				     1)));
	rkey = traced_rkey(dir, buf + off, len);
	ASSERT_NE(0, rkey);

	if (probe == LATE) {
		/* The key works inside the range while the RECV is posted. */
		w = wr(p.cconn, MRRC_OP_WRITE, cbuf, 1, 2);
		w.remote_addr = (uintptr_t)(buf + off);
		w.rkey = rkey;
		ASSERT_EQ(0, post1(p.cfd, w));
		ASSERT_EQ(0, reap(p.cfd, &c, 1));
		ASSERT_EQ(0, c.status);
		EXPECT_EQ(0xee, buf[off]);
		/* An honest SEND completes the RECV; the server polls it. */
		ASSERT_EQ(0, post1(p.cfd, wr(p.cconn, MRRC_OP_SEND, cbuf, 10,
					     3)));
		ASSERT_EQ(0, reap(p.cfd, &c, 1));
		ASSERT_EQ(0, c.status);
		ASSERT_EQ(0, reap(p.sfd, &c, 1));
		ASSERT_EQ(0, c.status);
		ASSERT_EQ(1, c.wr_id);
		memset(want + off, 0xee, 10);
		ASSERT_EQ(0, mrrc_cache_stats(p.sfd, &st));
		EXPECT_EQ(0, st.exposed);
		EXPECT_LE(1, st.exposures);
		if (mode == MRRC_MODE_ORDINARY)
			EXPECT_LE(1, st.expo_ordinary);
	}

	/* A byte no honest transfer here writes. */
	cbuf[2048] = 0x5a;
	w = wr(p.cconn, MRRC_OP_WRITE, cbuf + 2048, 1, 4);
	w.remote_addr = (uintptr_t)buf + (probe == BEFORE ? off - 1 :
					  probe == AFTER ? off + len : off + 1);
	w.rkey = rkey;
	ASSERT_EQ(0, post1(p.cfd, w));
	ASSERT_EQ(0, reap(p.cfd, &c, 1));
	status = c.status;
	*changed = memcmp(buf, want, blen) != 0;
	pair_close(&p);
	munmap(buf, blen);
	munmap(cbuf, 4096);
	free(want);
	return status;
}

/*
 * What a RECV exposes is exactly its bytes, and only until the
 * application has its completion: with the advertised key, one byte
 * before or after the range, or any byte once the RECV was polled, is out
 * of reach (the write fails with a remote access error) and nothing
 * outside the honest transfers changes.  Fast and ordinary registration.
 */
TEST(exposure_is_byte_exact_and_ends_with_the_operation)
{
	static const uint32_t modes[] = { MRRC_MODE_FAST, MRRC_MODE_ORDINARY };
	static const char *const names[] = { "before", "after", "late" };
	const char *dir = expose_trace_on();
	bool changed;
	size_t m;
	int pr;

	if (!dir)
		SKIP(return, "no tracefs with the mrrc_expose event");
	for (m = 0; m < ARRAY_SIZE(modes); m++) {
		for (pr = BEFORE; pr <= LATE; pr++) {
			EXPECT_EQ(-EACCES, expose_probe(_metadata, dir, modes[m],
							pr, &changed))
				TH_LOG("mode %u, %s", modes[m], names[pr]);
			EXPECT_FALSE(changed)
				TH_LOG("mode %u, %s: memory changed", modes[m],
				       names[pr]);
		}
	}
	sh("echo 0 > %s/events/mrrc/mrrc_expose/enable", dir);
}

/* ---- MRRC_IOC_EXPORT ---------------------------------------------------- */

/* What the client does with the server's export. */
enum xprobe {
	X_READ, X_WRITE, X_ATOMIC, X_BEFORE, X_AFTER, X_WBEFORE, X_WAFTER,
	X_REVOKED,
};

static const char *const xprobe_name[] = {
	"read inside", "write inside", "atomic inside", "read of the byte before",
	"read of the byte after", "write of the byte before",
	"write of the byte after", "read after UNEXPORT",
};

/*
 * The server exports 56 bytes across a page boundary with @access; the
 * client uses the key once as @probe says: the completion's status.
 * *changed is set if a server byte changed that the probe had no right to
 * change.  A successful read must see the server's bytes.
 */
static int export_probe(struct __test_metadata *_metadata, uint32_t access,
			enum xprobe probe, bool *changed)
{
	const size_t blen = 3 * 4096, off = 4096 - 24, len = 56;
	uint8_t *buf = map(blen), *cbuf = map(4096), *want = malloc(blen);
	struct mrrc_cache_stats st = { .size = sizeof(st) };
	struct mrrc_seg seg[MRRC_EXPORT_SEGS];
	unsigned int nsegs = MRRC_EXPORT_SEGS;
	uint64_t raddr;
	struct mrrc_cqe c;
	struct mrrc_wr w;
	struct pair p;
	uint32_t id;
	int status;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, cbuf);
	ASSERT_NE(NULL, want);
	fill(buf, blen, 21);
	memset(cbuf, 0xee, 4096);
	memcpy(want, buf, blen);
	ASSERT_EQ(0, pair_open(&p));
	ASSERT_EQ(0, mrrc_export(p.sfd, buf + off, len, access, &p.sconn, 1,
				 seg, &nsegs, &id));
	ASSERT_EQ(1, nsegs);
	EXPECT_EQ((uintptr_t)(buf + off), seg[0].addr);
	EXPECT_EQ(len, seg[0].length);
	EXPECT_EQ(0, seg[0].lkey);
	ASSERT_EQ(0, mrrc_cache_stats(p.sfd, &st));
	EXPECT_EQ(1, st.exports);
	EXPECT_EQ(1, st.exported);
	EXPECT_EQ(len, st.export_bytes);
	EXPECT_EQ(1, st.exposed);
	if (probe == X_REVOKED) {
		ASSERT_EQ(0, mrrc_unexport(p.sfd, id));
		ASSERT_EQ(0, mrrc_cache_stats(p.sfd, &st));
		EXPECT_EQ(0, st.exported);
		EXPECT_EQ(0, st.export_bytes);
		EXPECT_EQ(0, st.exposed);
		EXPECT_EQ(-ENOENT, mrrc_unexport(p.sfd, id));
	}

	raddr = seg[0].addr + (probe == X_BEFORE || probe == X_WBEFORE ? -1 :
			       probe == X_AFTER || probe == X_WAFTER ?
			       (int64_t)len : 8);
	w = wr(p.cconn, probe == X_WRITE || probe == X_WBEFORE ||
			probe == X_WAFTER ? MRRC_OP_WRITE :
			probe == X_ATOMIC ? MRRC_OP_FETCH_ADD : MRRC_OP_READ,
	       cbuf, probe >= X_BEFORE && probe <= X_WAFTER ? 1 : 8, 1);
	w.remote_addr = raddr;
	w.rkey = seg[0].rkey;
	if (probe == X_ATOMIC)
		w.compare_add = 1;
	ASSERT_EQ(0, post1(p.cfd, w));
	ASSERT_EQ(0, reap(p.cfd, &c, 1));
	status = c.status;
	if (!status && probe == X_READ)
		EXPECT_EQ(0, memcmp(cbuf, buf + off + 8, 8));
	if (!status && probe == X_WRITE)
		memset(want + off + 8, 0xee, 8);
	if (!status && probe == X_ATOMIC) {
		uint64_t old, now;

		/* The old value comes back; the server's is one more. */
		memcpy(&old, want + off + 8, 8);
		memcpy(&now, buf + off + 8, 8);
		EXPECT_EQ(0, memcmp(cbuf, &old, 8));
		EXPECT_EQ(old + 1, now);
		memcpy(want + off + 8, buf + off + 8, 8);
	}
	*changed = memcmp(buf, want, blen) != 0;
	if (probe != X_REVOKED)
		EXPECT_EQ(0, mrrc_unexport(p.sfd, id));
	pair_close(&p);
	munmap(buf, blen);
	munmap(cbuf, 4096);
	free(want);
	return status;
}

/*
 * An export reaches exactly its bytes with exactly its rights: remote
 * read only unless asked; one byte before or after, or anything once
 * revoked, is a remote access error and changes nothing.
 */
TEST(export_is_byte_exact_with_its_rights_until_revoked)
{
	static const struct {
		uint32_t access;
		enum xprobe probe;
		int status;
	} cases[] = {
		{ 0, X_READ, 0 },
		{ 0, X_WRITE, -EACCES },
		{ 0, X_ATOMIC, -EACCES },
		{ 0, X_BEFORE, -EACCES },
		{ 0, X_AFTER, -EACCES },
		{ 0, X_REVOKED, -EACCES },
		{ MRRC_ACCESS_REMOTE_WRITE, X_WRITE, 0 },
		{ MRRC_ACCESS_REMOTE_WRITE, X_WBEFORE, -EACCES },
		{ MRRC_ACCESS_REMOTE_WRITE, X_WAFTER, -EACCES },
		{ MRRC_ACCESS_REMOTE_WRITE, X_READ, -EACCES },
		{ MRRC_ACCESS_REMOTE_WRITE | MRRC_ACCESS_REMOTE_READ, X_READ, 0 },
		{ MRRC_ACCESS_REMOTE_ATOMIC, X_ATOMIC, 0 },
		{ MRRC_ACCESS_REMOTE_WRITE, X_REVOKED, -EACCES },
	};
	unsigned int i;
	bool changed;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		EXPECT_EQ(cases[i].status,
			  export_probe(_metadata, cases[i].access,
				       cases[i].probe, &changed))
			TH_LOG("access %#x, %s", cases[i].access,
			       xprobe_name[cases[i].probe]);
		EXPECT_FALSE(changed)
			TH_LOG("access %#x, %s: memory changed",
			       cases[i].access, xprobe_name[cases[i].probe]);
	}
}

/* One WRITE of 4 KiB with seed @seed from @cbuf to @seg over @conn. */
static int write_to(int cfd, uint32_t conn, uint8_t *cbuf,
		    const struct mrrc_seg *seg, uint32_t seed)
{
	struct mrrc_wr w = wr(conn, MRRC_OP_WRITE, cbuf, 4096, seed);
	struct mrrc_cqe c;
	int r;

	fill(cbuf, 4096, seed);
	w.remote_addr = seg->addr;
	w.rkey = seg->rkey;
	r = post1(cfd, w);
	if (!r)
		r = reap_op(cfd, &c);
	return r ? r : c.status;
}

/*
 * All connections of a context share its protection domain, so a key
 * given to the peer of one connection works from the peer of another
 * (the first round, which shows the probe can tell).  An isolated
 * connection's keys work on its own queue pair only: the same WRITE from
 * another connection is a remote access error and changes nothing, and
 * the connection the key was for keeps working.
 */
TEST(isolated_connection_keys_work_on_no_other_queue_pair)
{
	struct mrrc_conn_query q = { .size = sizeof(q) };
	uint8_t *sbuf = map(8192), *cbuf = map(4096);
	int round;

	ASSERT_NE(NULL, sbuf);
	ASSERT_NE(NULL, cbuf);
	for (round = 0; round < 2; round++) {
		uint32_t flags = round ? MRRC_CONN_ISOLATED : 0;
		struct sockaddr_in sin = vm_addr(next_port());
		uint32_t lis, c[2], s[2], c1, c2, s1, s2, xid, both[2], h;
		struct mrrc_seg seg, seg2;
		unsigned int n = 1, i;
		int r;
		int sfd = open_bound(RXE_DEV), cfd = open_bound(RXE_DEV);
		struct mrrc_wr w;

		ASSERT_LE(0, sfd);
		ASSERT_LE(0, cfd);
		ASSERT_EQ(0, mrrc_listen_flags(sfd, (struct sockaddr *)&sin, 16,
					       flags, 1, &lis));
		/* Two connections from the client context: c[i] to s[i]. */
		for (i = 0; i < 2; i++) {
			ASSERT_EQ(0, mrrc_connect(cfd, (struct sockaddr *)&sin,
						  NULL, 0, 2, &c[i]));
			r = wait_event(sfd, MRRC_EVENT_CONNECT_REQUEST, NULL);
			ASSERT_LT(0, r);
			s[i] = r;
			ASSERT_EQ(0, mrrc_accept(sfd, s[i], 3));
			ASSERT_EQ(s[i], wait_event(sfd, MRRC_EVENT_ESTABLISHED,
						   NULL));
			ASSERT_EQ(c[i], wait_event(cfd, MRRC_EVENT_ESTABLISHED,
						   NULL));
		}
		c1 = c[0];
		c2 = c[1];
		s1 = s[0];
		s2 = s[1];
		ASSERT_EQ(0, mrrc_conn_query(sfd, s1, &q));
		EXPECT_EQ(flags, q.conn_flags);
		ASSERT_EQ(0, mrrc_conn_query(sfd, lis, &q));
		EXPECT_EQ(flags, q.conn_flags);
		ASSERT_EQ(0, mrrc_conn_query(cfd, c1, &q));
		EXPECT_EQ(0, q.conn_flags);

		/* A key for the peer of s1. */
		memset(sbuf, 0x5a, 8192);
		ASSERT_EQ(0, export1(sfd, s1, sbuf, 4096,
				     MRRC_ACCESS_REMOTE_WRITE, &seg, &xid));
		ASSERT_EQ(0, write_to(cfd, c1, cbuf, &seg, 7));
		EXPECT_EQ(0, check(sbuf, 4096, 7));
		/* An isolated connection is exported to alone. */
		both[0] = s1;
		both[1] = s2;
		EXPECT_EQ(round ? -EINVAL : 0,
			  mrrc_export(sfd, sbuf + 4096, 64, 0, both, 2, &seg2,
				      &n, &h));
		if (!round)
			EXPECT_EQ(0, mrrc_unexport(sfd, h));
		/* The same key from the peer of s2. */
		if (!round) {
			EXPECT_EQ(0, write_to(cfd, c2, cbuf, &seg, 9));
			EXPECT_EQ(0, check(sbuf, 4096, 9));
		} else {
			EXPECT_EQ(-EACCES, write_to(cfd, c2, cbuf, &seg, 9));
			EXPECT_EQ(0, check(sbuf, 4096, 7));
			/* ... which still works for the peer it was for. */
			EXPECT_EQ(0, write_to(cfd, c1, cbuf, &seg, 11));
			EXPECT_EQ(0, check(sbuf, 4096, 11));
			/* A handle is of the context's cache, not s1's. */
			ASSERT_EQ(0, reg1(sfd, sbuf + 4096, 4096, 0, &seg, &h));
			w = wr(s1, MRRC_OP_SEND, sbuf + 4096, 64, 1);
			w.flags = MRRC_WR_HANDLE;
			w.handle = h;
			EXPECT_EQ(-EINVAL, post1(sfd, w));
			EXPECT_EQ(1, mrrc_release(sfd, &h, 1));
		}
		for (n = 4096; n < 8192; n++)
			if (sbuf[n] != 0x5a)
				break;
		EXPECT_EQ(8192, n) TH_LOG("byte %u beyond the export changed",
					  n);
		EXPECT_EQ(0, mrrc_unexport(sfd, xid));
		close(cfd);
		close(sfd);
	}
	munmap(sbuf, 8192);
	munmap(cbuf, 4096);
}

/*
 * Bad EXPORT and UNEXPORT requests get their documented errno and leave
 * nothing behind; an export ends with its last connection, and exports
 * count against max_exposed.
 */
TEST_F(data, export_requests_checked_limited_and_tied_to_connections)
{
	struct mrrc_cache_stats st = { .size = sizeof(st) };
	struct mrrc_export x = { .size = sizeof(x) };
	struct mrrc_unexport u = { .size = sizeof(u) };
	struct mrrc_seg seg[MRRC_EXPORT_SEGS];
	uint32_t conns[MRRC_EXPORT_CONNS + 1] = {}, id, id2, id3;
	unsigned int nsegs = MRRC_EXPORT_SEGS, i;
	uint8_t *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	struct mrrc_cache_config model = { .mode = MRRC_MODE_MODEL };
	uint8_t *b = self->sbuf;
	char old[32];
	int mfd;

#define XPORT(ptr, len, acc, cs, n) \
	(nsegs = MRRC_EXPORT_SEGS, \
	 mrrc_export(self->p.sfd, ptr, len, acc, cs, n, seg, &nsegs, &id))
	conns[0] = self->p.sconn;
	EXPECT_EQ(-EINVAL, XPORT(b, 64, MRRC_ACCESS_LOCAL_WRITE, conns, 1));
	EXPECT_EQ(-EINVAL, XPORT(b, 64, 1U << 7, conns, 1));
	EXPECT_EQ(-EINVAL, XPORT(b, 0, 0, conns, 1));
	EXPECT_EQ(-EINVAL, XPORT((void *)-64UL, 128, 0, conns, 1));
	EXPECT_EQ(-EINVAL, XPORT(b, (1UL << 31) + 1, 0, conns, 1));
	EXPECT_EQ(-EINVAL, XPORT(b, 64, 0, conns, 0));
	for (i = 0; i <= MRRC_EXPORT_CONNS; i++)
		conns[i] = self->p.sconn;
	EXPECT_EQ(-EINVAL, XPORT(b, 64, 0, conns, MRRC_EXPORT_CONNS + 1));
	EXPECT_EQ(-EINVAL, XPORT(b, 64, 0, conns, 2));	/* twice */
	conns[1] = 999;
	EXPECT_EQ(-ENOENT, XPORT(b, 64, 0, conns, 2));
	EXPECT_EQ(-EINVAL, XPORT(b, 64, 0, &self->p.lis, 1));
	x.addr = (uintptr_t)b;
	x.len = 64;
	x.nconns = 1;
	x.conns = 8;	/* unmapped */
	EXPECT_EQ(-EFAULT, raw_ioctl(self->p.sfd, MRRC_IOC_EXPORT, &x));
	x.conns = (uintptr_t)conns;
	x.flags = 1;
	EXPECT_EQ(-EOPNOTSUPP, raw_ioctl(self->p.sfd, MRRC_IOC_EXPORT, &x));
	u.id = 1;
	u.__reserved = 1;
	EXPECT_EQ(-EINVAL, raw_ioctl(self->p.sfd, MRRC_IOC_UNEXPORT, &u));
	u.__reserved = 0;
	u.flags = 1;
	EXPECT_EQ(-EOPNOTSUPP, raw_ioctl(self->p.sfd, MRRC_IOC_UNEXPORT, &u));
	EXPECT_EQ(-ENOENT, mrrc_unexport(self->p.sfd, 1));
	/* A model cache registers nothing. */
	mfd = open_bound(RXE_DEV);
	ASSERT_LE(0, mfd);
	ASSERT_EQ(0, mrrc_cache_config(mfd, &model));
	nsegs = MRRC_EXPORT_SEGS;
	EXPECT_EQ(-EOPNOTSUPP, mrrc_export(mfd, b, 64, 0, conns, 1, seg,
					   &nsegs, &id));
	close(mfd);
	/*
	 * Memory that is not there, and read-only memory, even for readers:
	 * exports are pinned for writing.
	 */
	EXPECT_EQ(-EFAULT, XPORT((void *)4096, 64, 0, &self->p.sconn, 1));
	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_EQ(-EFAULT, XPORT(ro, 64, MRRC_ACCESS_REMOTE_WRITE,
				 &self->p.sconn, 1));
	EXPECT_EQ(-EFAULT, XPORT(ro, 64, 0, &self->p.sconn, 1));
	munmap(ro, 4096);
	ASSERT_EQ(0, mrrc_cache_stats(self->p.sfd, &st));
	EXPECT_EQ(0, st.exports);
	EXPECT_EQ(0, st.exposed);

	/* Limits: each segment is an exposed range. */
	ASSERT_EQ(0, param_rw("max_exposed", old, sizeof(old), 0));
	ASSERT_EQ(0, param_rw("max_exposed", (char *)"2", 0, 1));
	EXPECT_EQ(0, XPORT(b, 64, 0, &self->p.sconn, 1));
	id2 = id;
	EXPECT_EQ(0, XPORT(b + 4096, 64, MRRC_ACCESS_REMOTE_WRITE,
			   &self->p.sconn, 1));
	id3 = id;
	EXPECT_EQ(-EAGAIN, XPORT(b + 8192, 64, 0, &self->p.sconn, 1));
	ASSERT_EQ(0, param_rw("max_exposed", old, 0, 1));
	ASSERT_EQ(0, mrrc_unexport(self->p.sfd, id2));
	ASSERT_EQ(0, mrrc_cache_stats(self->p.sfd, &st));
	EXPECT_EQ(2, st.exports);
	EXPECT_EQ(1, st.exported);
	EXPECT_EQ(64, st.export_bytes);

	/* Destroying the only connection it is for revokes it. */
	ASSERT_EQ(0, mrrc_destroy(self->p.sfd, self->p.sconn));
	ASSERT_EQ(0, mrrc_cache_stats(self->p.sfd, &st));
	EXPECT_EQ(0, st.exported);
	EXPECT_EQ(0, st.exposed);
	EXPECT_EQ(-ENOENT, mrrc_unexport(self->p.sfd, id3));
#undef XPORT
}

/*
 * A reader's export of memory never written, written afterwards: the peer
 * reads what the process wrote (the pages are not the shared zero page).
 */
TEST(export_of_fresh_memory_shows_later_writes)
{
	struct mrrc_seg seg[MRRC_EXPORT_SEGS];
	unsigned int nsegs = MRRC_EXPORT_SEGS;
	uint8_t *buf = map(4 * 4096), *cbuf = map(4096);
	struct mrrc_cqe c;
	struct mrrc_wr w;
	struct pair p;
	uint32_t id;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, cbuf);
	ASSERT_EQ(0, pair_open(&p));
	ASSERT_EQ(0, mrrc_export(p.sfd, buf + 4096, 2 * 4096, 0, &p.sconn, 1,
				 seg, &nsegs, &id));
	ASSERT_EQ(1, nsegs);
	fill(buf + 4096, 2 * 4096, 33);
	w = wr(p.cconn, MRRC_OP_READ, cbuf, 4096, 1);
	w.remote_addr = seg[0].addr + 2048;
	w.rkey = seg[0].rkey;
	ASSERT_EQ(0, post1(p.cfd, w));
	ASSERT_EQ(0, reap(p.cfd, &c, 1));
	ASSERT_EQ(0, c.status);
	EXPECT_EQ(0, memcmp(cbuf, buf + 4096 + 2048, 4096))
		TH_LOG("the peer reads pages the process does not write");
	EXPECT_EQ(0, mrrc_unexport(p.sfd, id));
	pair_close(&p);
	munmap(buf, 4 * 4096);
	munmap(cbuf, 4096);
}

/*
 * Closing a context with live exports revokes them and leaks nothing.  A
 * leak would show twice: as the cache's WARN on destruction (the dmesg
 * scan fails the run) and in the global gauges, which keep what a
 * destroyed cache still counted.
 */
TEST(exports_end_with_their_context)
{
	struct mrrc_cache_stats g0 = { .size = sizeof(g0) }, g1 = g0;
	struct mrrc_seg seg[MRRC_EXPORT_SEGS];
	uint8_t *buf = map(64 * 4096);
	unsigned int nsegs, i, segs = 0;
	struct pair p;
	uint32_t id;

	ASSERT_NE(NULL, buf);
	memset(buf, 1, 64 * 4096);
	ASSERT_EQ(0, pair_open(&p));
	ASSERT_EQ(0, mrrc_global_stats(p.sfd, &g0));
	for (i = 0; i < 16; i++) {
		nsegs = MRRC_EXPORT_SEGS;
		ASSERT_EQ(0, mrrc_export(p.sfd, buf + i * 4096 + 7, 3 * 4096,
					 i & 1 ? MRRC_ACCESS_REMOTE_WRITE : 0,
					 &p.sconn, 1, seg, &nsegs, &id));
		/* Overlapping exports meet regions cached before: pieces. */
		segs += nsegs;
	}
	ASSERT_EQ(0, mrrc_cache_stats(p.sfd, &g1));
	EXPECT_EQ(16, g1.exported);
	EXPECT_EQ(segs, g1.exposed);
	pair_close(&p);
	p.sfd = open_bound(RXE_DEV);
	ASSERT_LE(0, p.sfd);
	ASSERT_EQ(0, mrrc_global_stats(p.sfd, &g1));
	EXPECT_EQ(g0.exports + 16, g1.exports);
	EXPECT_EQ(0, g1.exported);
	EXPECT_EQ(0, g1.export_bytes);
	EXPECT_EQ(0, g1.exposed);
	EXPECT_EQ(0, g1.pinned_pages);
	close(p.sfd);
	munmap(buf, 64 * 4096);
}

/* A peer process killed with writes held. */
TEST(peer_killed_with_writes_held)
{
	struct sockaddr_in sin = vm_addr(next_port());
	struct mrrc_cqe c;
	struct mrrc_wr w;
	uint32_t lis, conn;
	int sfd, st, r, pfd[2];
	uint8_t *buf = map(MiB);
	char ready;
	pid_t pid;

	memset(buf, 1, MiB);
	ASSERT_EQ(0, pipe(pfd));
	sfd = open_bound(RXE_DEV);
	ASSERT_LE(0, sfd);
	ASSERT_EQ(0, mrrc_listen(sfd, (struct sockaddr *)&sin, 4, 0, &lis));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = open_bound(RXE_DEV);
		unsigned int i;

		w = wr(0, MRRC_OP_CRW, buf, 4096, 1);
		if (fd < 0 || mrrc_connect(fd, (struct sockaddr *)&sin, NULL,
					   0, 0, &w.conn) ||
		    wait_event(fd, MRRC_EVENT_ESTABLISHED, NULL) < 0)
			_exit(1);
		for (i = 0; i < 100; i++) {
			w.tag = i + 1;
			if (post1(fd, w))
				_exit(2);
		}
		/* And a send the server has no receive for. */
		if (post1(fd, wr(w.conn, MRRC_OP_SEND, buf, MiB, 9)))
			_exit(3);
		if (write(pfd[1], "r", 1) != 1)
			_exit(4);
		pause();
		_exit(0);
	}
	r = wait_event(sfd, MRRC_EVENT_CONNECT_REQUEST, NULL);
	ASSERT_LE(0, r);
	conn = r;
	ASSERT_EQ(0, mrrc_accept(sfd, conn, 0));
	ASSERT_LE(0, wait_event(sfd, MRRC_EVENT_ESTABLISHED, NULL));
	ASSERT_EQ(1, read(pfd[0], &ready, 1));
	w = wr(conn, MRRC_OP_STCRW, buf, 4096, 2);
	w.tag = 1000;
	ASSERT_EQ(0, post1(sfd, w));
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	/* The server hears of it, and what it held is flushed. */
	ASSERT_EQ(0, reap(sfd, &c, 1));
	EXPECT_EQ(MRRC_OP_STCRW, c.opcode);
	EXPECT_EQ(-ECONNRESET, c.status);
	ASSERT_LE(0, wait_event(sfd, MRRC_EVENT_DISCONNECTED, NULL));
	close(sfd);
	close(pfd[0]);
	close(pfd[1]);
	munmap(buf, MiB);
}

/*
 * A transport error racing the connection's destruction (issue 12,
 * finding 6): a write with a revoked key fails at the peer, which breaks
 * the connection from the completion handler and queues the disconnect
 * work, while the connection is destroyed after a delay that sweeps
 * across the moment the error arrives.  That work must never run on a
 * destroyed connection (on the debug kernel KASAN and lockdep watch it),
 * and the write completes exactly once, with an error.
 */
TEST(transport_error_racing_destroy)
{
	uint8_t *buf = map(3 * 4096);
	struct mrrc_seg seg;
	struct mrrc_cqe c;
	struct mrrc_wr w;
	unsigned int i;
	struct pair p;
	uint32_t h;
	int r;

	ASSERT_NE(NULL, buf);
	memset(buf, 1, 2 * 4096);
	memset(buf + 8192, 2, 4096);	/* what a write that got through brings */
	for (i = 0; i < 40; i++) {
		r = pair_open(&p);
		ASSERT_EQ(0, r) TH_LOG("connect: %s", strerror(-r));
		ASSERT_EQ(0, export1(p.sfd, p.sconn, buf, 4096,
				     MRRC_ACCESS_REMOTE_WRITE, &seg, &h));
		ASSERT_EQ(0, mrrc_unexport(p.sfd, h));
		w = wr(p.cconn, MRRC_OP_WRITE, buf + 8192, 4096, 1);
		w.remote_addr = seg.addr;
		w.rkey = seg.rkey;
		ASSERT_EQ(0, post1(p.cfd, w));
		usleep(i * 50);
		ASSERT_EQ(0, mrrc_destroy(p.cfd, p.cconn));
		ASSERT_EQ(0, reap_op(p.cfd, &c)) TH_LOG("delay %u us", i * 50);
		EXPECT_EQ(1, c.wr_id);
		EXPECT_GT(0, c.status) TH_LOG("a write with a revoked key succeeded");
		mrrc_wait(p.cfd, 100);
		while ((r = mrrc_poll_cq(p.cfd, &c, 1)) == 1)
			EXPECT_EQ(MRRC_OP_EVENT, c.opcode)
				TH_LOG("delay %u us: the write completed twice",
				       i * 50);
		EXPECT_EQ(0, r);
		pair_close(&p);
		for (r = 0; r < 4096; r++)
			ASSERT_EQ(1, buf[r]) TH_LOG("byte %d changed", r);
	}
	munmap(buf, 3 * 4096);
}

/* FRRWP transactions across two processes, both modes, data checked. */
TEST(frrwp_transactions_two_processes)
{
	struct sockaddr_in sin = vm_addr(next_port());
	struct mrrc_cache_stats st0, st1;
	const size_t len = 8 * 4096;
	uint64_t expo1 = 0;
	uint8_t *buf = map(len);
	uint32_t lis, conn;
	int sfd, st, r, i;
	pid_t pid;

	sfd = open_bound(RXE_DEV);
	ASSERT_LE(0, sfd);
	ASSERT_EQ(0, mrrc_listen(sfd, (struct sockaddr *)&sin, 4, 0, &lis));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = open_bound(RXE_DEV);
		uint32_t c;

		if (fd < 0 || mrrc_connect(fd, (struct sockaddr *)&sin, NULL,
					   0, 0, &c) ||
		    wait_event(fd, MRRC_EVENT_ESTABLISHED, NULL) < 0)
			_exit(1);
		for (i = 0; i < 4; i++) {
			int mode = i & 1 ? MRRC_FRRWP_TRADITIONAL : MRRC_FRRWP;

			fill(buf, len, 40 + i);
			if (mrrc_frrwp_write(fd, c, buf, len, mode, TMO_MS))
				_exit(10 + i);
			memset(buf, 0, len);
			if (mrrc_frrwp_read(fd, c, buf, len, mode, TMO_MS))
				_exit(20 + i);
			if (check(buf, len, 60 + i))
				_exit(30 + i);
		}
		/* Traditional, the server's buffer in three cached pieces. */
		fill(buf, len, 50);
		if (mrrc_frrwp_write(fd, c, buf, len, MRRC_FRRWP_TRADITIONAL,
				     TMO_MS))
			_exit(40);
		memset(buf, 0, len);
		if (mrrc_frrwp_read(fd, c, buf, len, MRRC_FRRWP_TRADITIONAL,
				    TMO_MS))
			_exit(41);
		if (check(buf, len, 51))
			_exit(42);
		/* Its buffer half as long: a write must fit, a read takes
		 * what there is.
		 */
		if (mrrc_frrwp_write(fd, c, buf, len, MRRC_FRRWP_TRADITIONAL,
				     TMO_MS) != -EMSGSIZE)
			_exit(43);
		memset(buf, 0, len);
		if (mrrc_frrwp_read(fd, c, buf, len, MRRC_FRRWP_TRADITIONAL,
				    TMO_MS))
			_exit(44);
		if (check(buf, len / 2, 52) || buf[len / 2])
			_exit(45);
		_exit(0);
	}
	r = wait_event(sfd, MRRC_EVENT_CONNECT_REQUEST, NULL);
	ASSERT_LE(0, r);
	conn = r;
	ASSERT_EQ(0, mrrc_accept(sfd, conn, 0));
	ASSERT_LE(0, wait_event(sfd, MRRC_EVENT_ESTABLISHED, NULL));
	for (i = 0; i < 4; i++) {
		memset(buf, 0, len);
		ASSERT_EQ(0, mrrc_cache_stats(sfd, &st0));
		ASSERT_EQ((int)len, mrrc_frrwp_serve(sfd, conn, buf, len,
						     TMO_MS));
		ASSERT_EQ(0, mrrc_cache_stats(sfd, &st1));
		/* Exposures of a traditional write: its RECVs and one. */
		expo1 = st1.exposures - st0.exposures;
		EXPECT_EQ(0, check(buf, len, 40 + i)) TH_LOG("write %d", i);
		fill(buf, len, 60 + i);
		ASSERT_EQ((int)len, mrrc_frrwp_serve(sfd, conn, buf, len,
						     TMO_MS));
	}
	/*
	 * [0, 8K) and [8K, 16K) cached apart: the export, and the reply,
	 * have three segments.
	 */
	ASSERT_LE(0, mrrc_flush(sfd));
	ASSERT_EQ(2, two_regions(sfd, buf, MRRC_ACCESS_LOCAL_WRITE));
	ASSERT_EQ(0, mrrc_cache_stats(sfd, &st0));
	memset(buf, 0, len);
	ASSERT_EQ((int)len, mrrc_frrwp_serve(sfd, conn, buf, len, TMO_MS));
	ASSERT_EQ(0, mrrc_cache_stats(sfd, &st1));
	EXPECT_EQ(expo1 + 2, st1.exposures - st0.exposures);
	EXPECT_EQ(0, check(buf, len, 50));
	fill(buf, len, 51);
	ASSERT_EQ((int)len, mrrc_frrwp_serve(sfd, conn, buf, len, TMO_MS));
	EXPECT_EQ(-EMSGSIZE, mrrc_frrwp_serve(sfd, conn, buf, len / 2,
					      TMO_MS));
	fill(buf, len / 2, 52);
	EXPECT_EQ((int)len / 2, mrrc_frrwp_serve(sfd, conn, buf, len / 2,
						 TMO_MS));
	/* Every export was revoked. */
	ASSERT_EQ(0, mrrc_cache_stats(sfd, &st1));
	EXPECT_EQ(0, st1.exported);
	EXPECT_EQ(0, st1.exposed);
	waitpid(pid, &st, 0);
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	/* The client's exit is left on the fd, not eaten by the library. */
	EXPECT_LE(0, wait_event(sfd, MRRC_EVENT_DISCONNECTED, NULL));
	close(sfd);
	munmap(buf, len);
}

/*
 * The active side may send as soon as it sees ESTABLISHED, which can be
 * before the passive side's ESTABLISHED event: its first message (here an
 * STCRW) must not be lost then.  Twenty connections, each client posting
 * at once, with no wait for the server.
 */
TEST(first_message_before_passive_established)
{
	struct sockaddr_in sin = vm_addr(next_port());
	int sfd = open_bound(RXE_DEV), cfd = open_bound(RXE_DEV);
	uint8_t *sb = map(8192), *cb = map(8192);
	uint32_t lis, sc, cc;
	struct mrrc_cqe c;
	int r, i;

	ASSERT_LE(0, sfd);
	ASSERT_LE(0, cfd);
	ASSERT_NE(NULL, sb);
	ASSERT_NE(NULL, cb);
	memset(sb, 0, 8192);
	fill(cb, 8192, 9);
	ASSERT_EQ(0, mrrc_listen(sfd, (struct sockaddr *)&sin, 16, 0, &lis));
	for (i = 0; i < 20; i++) {
		struct mrrc_wr crw, st;

		ASSERT_EQ(0, mrrc_connect(cfd, (struct sockaddr *)&sin, NULL, 0,
					  0, &cc));
		r = reap_event(sfd, MRRC_EVENT_CONNECT_REQUEST);
		ASSERT_LE(0, r);
		sc = r;
		ASSERT_EQ(0, mrrc_accept(sfd, sc, 0));
		/* The server's CRW waits, unmatched, for the client's tag. */
		crw = wr(sc, MRRC_OP_CRW, cb, 4096, 1);
		crw.tag = i + 1;
		ASSERT_EQ(0, post1(sfd, crw));
		ASSERT_LE(0, reap_event(cfd, MRRC_EVENT_ESTABLISHED));
		st = wr(cc, MRRC_OP_STCRW, sb, 8192, 2);
		st.tag = i + 1;
		ASSERT_EQ(0, post1(cfd, st));
		ASSERT_EQ(0, reap_op(cfd, &c)) TH_LOG("round %d: STCRW lost", i);
		ASSERT_EQ(0, c.status);
		ASSERT_EQ(4096, c.byte_len);
		ASSERT_EQ(0, reap_op(sfd, &c));
		ASSERT_EQ(0, c.status);
		ASSERT_EQ(0, check(sb, 4096, 9));
		memset(sb, 0, 8192);
		ASSERT_EQ(0, mrrc_destroy(cfd, cc));
		ASSERT_EQ(0, mrrc_destroy(sfd, sc));
	}
	close(cfd);
	close(sfd);
	munmap(sb, 8192);
	munmap(cb, 8192);
}

/* A context holds at most max_conns connections and listeners. */
TEST(max_conns_per_context)
{
	struct sockaddr_in sin = vm_addr(next_port());
	int sfd = open_bound(RXE_DEV), cfd = open_bound(RXE_DEV);
	uint32_t lis, c1, c2, c3;
	char old[32], cur[32];

	ASSERT_LE(0, sfd);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0, param_rw("max_conns", old, sizeof(old), 0));
	/* Out of range: refused, the value stays. */
	EXPECT_EQ(-EINVAL, param_rw("max_conns", (char *)"0", 0, 1));
	EXPECT_EQ(-EINVAL, param_rw("max_conns", (char *)"1048577", 0, 1));
	EXPECT_EQ(-EINVAL, param_rw("max_handles", (char *)"0", 0, 1));
	EXPECT_EQ(-EINVAL, param_rw("max_handles", (char *)"16777217", 0,
				    1));
	ASSERT_EQ(0, param_rw("max_conns", cur, sizeof(cur), 0));
	EXPECT_STREQ(old, cur);
	ASSERT_EQ(0, param_rw("max_conns", (char *)"2", 0, 1));
	EXPECT_EQ(0, mrrc_listen(sfd, (struct sockaddr *)&sin, 16, 0, &lis));
	EXPECT_EQ(0, mrrc_connect(cfd, (struct sockaddr *)&sin, NULL, 0, 0,
				  &c1));
	EXPECT_EQ(0, mrrc_connect(cfd, (struct sockaddr *)&sin, NULL, 0, 0,
				  &c2));
	EXPECT_EQ(-EMFILE, mrrc_connect(cfd, (struct sockaddr *)&sin, NULL,
					0, 0, &c3));
	/* A destroyed connection makes room. */
	EXPECT_EQ(0, mrrc_destroy(cfd, c2));
	EXPECT_EQ(0, mrrc_connect(cfd, (struct sockaddr *)&sin, NULL, 0, 0,
				  &c3));
	ASSERT_EQ(0, param_rw("max_conns", old, 0, 1));
	close(cfd);
	close(sfd);
}

/*
 * Isolated connections are bounded per context (max_isolated: each has a
 * cache with the per-context limits of its own), and a context whose
 * cache is in model mode (made-up keys) gets none, even through an
 * isolated listener made before the mode changed: the request is refused.
 */
TEST(isolated_connections_are_bounded_and_never_model)
{
	struct sockaddr_in sin = vm_addr(next_port());
	struct mrrc_cache_config model = { .mode = MRRC_MODE_MODEL };
	struct mrrc_conn_query q = { .size = sizeof(q) };
	int sfd = open_bound(RXE_DEV), cfd = open_bound(RXE_DEV);
	uint32_t lis, c1, c2;
	struct mrrc_cqe c;
	char old[32];
	int r;

	ASSERT_LE(0, sfd);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0, param_rw("max_isolated", old, sizeof(old), 0));
	ASSERT_EQ(0, param_rw("max_isolated", (char *)"1", 0, 1));
	ASSERT_EQ(0, mrrc_listen(sfd, (struct sockaddr *)&sin, 16, 0, &lis));
	EXPECT_EQ(0, mrrc_connect_flags(cfd, (struct sockaddr *)&sin, NULL, 0,
					MRRC_CONN_ISOLATED, 0, &c1));
	EXPECT_EQ(-EMFILE, mrrc_connect_flags(cfd, (struct sockaddr *)&sin,
					      NULL, 0, MRRC_CONN_ISOLATED, 0,
					      &c2));
	/* A shared one is not counted; a destroyed one makes room. */
	EXPECT_EQ(0, mrrc_connect(cfd, (struct sockaddr *)&sin, NULL, 0, 0,
				  &c2));
	EXPECT_EQ(0, mrrc_destroy(cfd, c1));
	EXPECT_EQ(0, mrrc_connect_flags(cfd, (struct sockaddr *)&sin, NULL, 0,
					MRRC_CONN_ISOLATED, 0, &c1));
	ASSERT_EQ(0, param_rw("max_isolated", old, 0, 1));
	close(cfd);
	close(sfd);

	/* An isolated listener, then model mode: its requests are refused. */
	sin = vm_addr(next_port());
	sfd = open_bound(RXE_DEV);
	cfd = open_bound(RXE_DEV);
	ASSERT_LE(0, sfd);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0, mrrc_listen_flags(sfd, (struct sockaddr *)&sin, 16,
				       MRRC_CONN_ISOLATED, 0, &lis));
	ASSERT_EQ(0, mrrc_cache_config(sfd, &model));
	ASSERT_EQ(0, mrrc_connect(cfd, (struct sockaddr *)&sin, NULL, 0, 0,
				  &c1));
	r = wait_event(cfd, MRRC_EVENT_REJECTED, NULL);
	EXPECT_TRUE(r == (int)c1 || r == -EPROTO) TH_LOG("%d", r);
	/* No CONNECT_REQUEST reached the server. */
	EXPECT_EQ(0, mrrc_poll_cq(sfd, &c, 1));
	ASSERT_EQ(0, mrrc_conn_query(sfd, lis, &q));
	EXPECT_LE(1, q.refused);
	close(cfd);
	close(sfd);
}

/*
 * A destroyed listener's id is not the next listener's: ids are handed
 * out cyclically (a server matching completions by connection id would
 * otherwise take the old one's late completions for the new one's).
 */
TEST(conn_ids_not_reused_at_once)
{
	struct sockaddr_in s1 = vm_addr(next_port()), s2 = vm_addr(next_port());
	int fd = open_bound(RXE_DEV);
	uint32_t a, b, c;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mrrc_listen(fd, (struct sockaddr *)&s1, 1, 0, &a));
	ASSERT_EQ(0, mrrc_destroy(fd, a));
	ASSERT_EQ(0, mrrc_listen(fd, (struct sockaddr *)&s2, 1, 0, &b));
	EXPECT_NE(a, b);
	ASSERT_EQ(0, mrrc_destroy(fd, b));
	ASSERT_EQ(0, mrrc_listen(fd, (struct sockaddr *)&s1, 1, 0, &c));
	EXPECT_NE(a, c);
	EXPECT_NE(b, c);
	close(fd);
}

/*
 * CONN_LIST reads a context's list 28 at a time: 70 listeners come back
 * whole, in id order, through any room; with room for fewer the count
 * still says 70; lowering max_conns afterwards changes nothing of that.
 */
TEST(conn_list_across_rounds)
{
	int fd = open_bound(RXE_DEV);
	struct mrrc_conn_query q[80];
	uint32_t lis[70], prev = 0;
	char old[32];
	unsigned int n, i;

	ASSERT_LE(0, fd);
	for (i = 0; i < 70; i++) {
		struct sockaddr_in sin = vm_addr(next_port());

		ASSERT_EQ(0, mrrc_listen(fd, (struct sockaddr *)&sin, 1, i,
					 &lis[i]));
	}
	n = 80;
	ASSERT_EQ(0, mrrc_conn_list(fd, 0, q, &n));
	ASSERT_EQ(70, n);
	for (i = 0; i < 70; i++) {
		EXPECT_GT(q[i].id, prev);
		prev = q[i].id;
		EXPECT_EQ(MRRC_CONN_LISTENING, q[i].state);
	}
	memset(q, 0xa5, sizeof(q));
	n = 33;
	ASSERT_EQ(0, mrrc_conn_list(fd, 0, q, &n));
	EXPECT_EQ(70, n);
	EXPECT_EQ(sizeof(q[0]), q[32].size);
	EXPECT_EQ(0xa5a5a5a5, q[33].size);

	ASSERT_EQ(0, param_rw("max_conns", old, sizeof(old), 0));
	ASSERT_EQ(0, param_rw("max_conns", (char *)"1", 0, 1));
	n = 70;
	EXPECT_EQ(0, mrrc_conn_list(fd, 0, q, &n));
	EXPECT_EQ(70, n);
	EXPECT_EQ(sizeof(q[0]), q[69].size);
	ASSERT_EQ(0, param_rw("max_conns", old, 0, 1));
	close(fd);
}

/* Wait for event @ev on @fd, skipping other events: its conn, or -err. */
static int wait_event_skip(int fd, int ev)
{
	struct mrrc_cqe c;
	int r;

	for (;;) {
		r = reap(fd, &c, 1);
		if (r)
			return r;
		if (c.opcode == MRRC_OP_EVENT && c.event == ev)
			return c.conn;
	}
}

/*
 * A listener holds at most its backlog of requests not yet accepted or
 * rejected: the next one is refused before anything is built for it (the
 * peer sees REJECTED), and accepting one makes room.
 */
TEST(listener_backlog_refuses_beyond)
{
	struct sockaddr_in sin = vm_addr(next_port());
	int sfd = open_bound(RXE_DEV), cfd = open_bound(RXE_DEV);
	struct mrrc_conn_query q;
	uint32_t lis, c[4];
	int r1, r2, i;

	ASSERT_LE(0, sfd);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0, mrrc_listen(sfd, (struct sockaddr *)&sin, 2, 0, &lis));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, mrrc_connect(cfd, (struct sockaddr *)&sin, NULL,
					  0, i + 1, &c[i]));
	r1 = wait_event(sfd, MRRC_EVENT_CONNECT_REQUEST, NULL);
	ASSERT_LT(0, r1);
	r2 = wait_event(sfd, MRRC_EVENT_CONNECT_REQUEST, NULL);
	ASSERT_LT(0, r2);
	ASSERT_LT(0, wait_event(cfd, MRRC_EVENT_REJECTED, NULL));
	ASSERT_EQ(0, mrrc_conn_query(sfd, lis, &q));
	EXPECT_EQ(1, q.refused);

	ASSERT_EQ(0, mrrc_accept(sfd, r1, 0));
	ASSERT_EQ(0, mrrc_connect(cfd, (struct sockaddr *)&sin, NULL, 0, 4,
				  &c[3]));
	EXPECT_LT(0, wait_event_skip(sfd, MRRC_EVENT_CONNECT_REQUEST));
	ASSERT_EQ(0, mrrc_conn_query(sfd, lis, &q));
	EXPECT_EQ(1, q.refused);
	close(cfd);
	close(sfd);
}

TEST(connect_errors)
{
	struct sockaddr_in sin = vm_addr(next_port());
	struct mrrc_cqe c;
	uint32_t id;
	int fd = mrrc_open(0);

	ASSERT_LE(0, fd);
	/* Unbound. */
	EXPECT_EQ(-ENXIO, mrrc_connect(fd, (struct sockaddr *)&sin, NULL, 0, 0,
				       &id));
	ASSERT_EQ(0, mrrc_bind(fd, RXE_DEV, NULL));
	/* Nobody listens: rejected. */
	ASSERT_EQ(0, mrrc_connect(fd, (struct sockaddr *)&sin, NULL, 0, 7,
				  &id));
	ASSERT_EQ(0, reap(fd, &c, 1));
	EXPECT_EQ(MRRC_OP_EVENT, c.opcode);
	EXPECT_EQ(MRRC_EVENT_REJECTED, c.event);
	EXPECT_EQ(7, c.wr_id);
	EXPECT_EQ(0, mrrc_destroy(fd, id));
	/* An address on no RDMA device: unreachable. */
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	{
		int r = mrrc_connect(fd, (struct sockaddr *)&sin, NULL, 500, 8,
				     &id);

		if (!r) {
			ASSERT_EQ(0, reap(fd, &c, 1));
			EXPECT_EQ(MRRC_EVENT_UNREACHABLE, c.event);
			EXPECT_GT(0, c.status);
			mrrc_destroy(fd, id);
		} else {
			EXPECT_GT(0, r);
		}
	}
	/* Model mode has no real keys. */
	{
		struct mrrc_cache_config cfg = { .mode = MRRC_MODE_MODEL };

		ASSERT_EQ(0, mrrc_cache_config(fd, &cfg));
		EXPECT_EQ(-EOPNOTSUPP, mrrc_listen(fd, (struct sockaddr *)&sin,
						   1, 0, &id));
	}
	close(fd);
}

/* Reject, and a listener on an address that is not ours. */
TEST(reject_and_listen_errors)
{
	struct sockaddr_in sin = vm_addr(next_port());
	struct mrrc_cqe c;
	uint32_t lis, id;
	int sfd = open_bound(RXE_DEV), cfd = open_bound(RXE_DEV), r;

	ASSERT_LE(0, sfd);
	ASSERT_LE(0, cfd);
	ASSERT_EQ(0, mrrc_listen(sfd, (struct sockaddr *)&sin, 4, 0, &lis));
	EXPECT_EQ(-EADDRINUSE, mrrc_listen(cfd, (struct sockaddr *)&sin, 4, 0,
					   &id));
	ASSERT_EQ(0, mrrc_connect(cfd, (struct sockaddr *)&sin, NULL, 0, 0,
				  &id));
	r = wait_event(sfd, MRRC_EVENT_CONNECT_REQUEST, &c);
	ASSERT_LE(0, r);
	EXPECT_EQ(lis, c.tag);
	ASSERT_EQ(0, mrrc_reject(sfd, r));
	EXPECT_EQ(-EINVAL, mrrc_accept(sfd, r, 0));
	ASSERT_LE(0, wait_event(cfd, MRRC_EVENT_REJECTED, &c));
	EXPECT_EQ(-ECONNREFUSED, c.status);
	EXPECT_EQ(0, mrrc_destroy(sfd, r));
	EXPECT_EQ(0, mrrc_destroy(sfd, lis));
	sin.sin_addr.s_addr = htonl(0x0a0b0c0d);
	EXPECT_GT(0, mrrc_listen(sfd, (struct sockaddr *)&sin, 4, 0, &lis));
	close(sfd);
	close(cfd);
}

/* Device removal with operations held, then a process killed mid-transfer
 * and rmmod: nothing is left behind.  Runs last: it reloads the module.
 */
TEST(zz_device_removal_and_rmmod)
{
	struct pair p;
	struct mrrc_wr w;
	struct mrrc_cqe c;
	uint8_t *buf = map(MiB);
	int r, st;
	pid_t pid;

	ASSERT_EQ(0, pair_open(&p));
	w = wr(p.cconn, MRRC_OP_CRW, buf, 64, 1);
	w.tag = 1;
	ASSERT_EQ(0, post1(p.cfd, w));
	ASSERT_EQ(0, sh("rdma link delete rxe0"));
	ASSERT_EQ(0, reap(p.cfd, &c, 1));
	EXPECT_EQ(1, c.wr_id);
	EXPECT_GT(0, c.status);
	EXPECT_EQ(-ENODEV, post1(p.cfd, w));
	pair_close(&p);
	ASSERT_EQ(0, sh("rdma link add rxe0 type rxe netdev veth0"));

	/* A process streaming to itself, killed. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (pair_open(&p))
			_exit(1);
		for (;;) {
			post1(p.sfd, wr(p.sconn, MRRC_OP_RECV, buf, MiB, 1));
			post1(p.cfd, wr(p.cconn, MRRC_OP_SEND, buf, MiB, 2));
			mrrc_poll_cq(p.sfd, &c, 1);
			mrrc_poll_cq(p.cfd, &c, 1);
		}
	}
	usleep(500000);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	r = sh("rmmod mrrc && insmod \"$MRRC_KO\"");
	ASSERT_EQ(0, r);
	munmap(buf, MiB);
}

TEST_HARNESS_MAIN
