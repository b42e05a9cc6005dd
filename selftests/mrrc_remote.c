// SPDX-License-Identifier: GPL-2.0-only
/*
 * The core of the data-path tests across two machines: two test VMs, two
 * kernels, two mrrc modules, rxe0 on each end of a virtual link (see
 * tools/vm/pair.sh).
 *
 *   mrrc_remote serve     in VM a: the peer agent
 *   mrrc_remote           in VM b: the kselftest tests, against the agent
 *
 * Each test opens a TCP control connection to the agent and names a
 * scenario; the agent forks a server half for it, which listens on an
 * RDMA port, accepts the test's connection(s) and plays its part.  The
 * control connection carries what RDMA cannot check by itself: addresses
 * and rkeys, "check this pattern", "post your receives", and finally the
 * server half's verdict, which the test asserts.  All data moves through
 * the two modules over rxe.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "mrrc_test.h"

/* Two emulated machines: give every test five minutes. */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define CTL_PORT	18900
#define RDMA_PORT	19000
#define TMO_MS		30000
#define IDLE_S		180	/* the agent gives up after this long idle */
#define VANISH_S	30	/* how long "vanish" keeps its link down */
#define KA_PARAM	"/sys/module/mrrc/parameters/keepalive_ms"

#include "mrrc_dp_test.h"
#include "mrrc_pair.h"
#define MiB		(1024 * 1024)
#define BUF_LEN		(4 * MiB + 8192)
#define NTAGS		3000

static void *map(size_t len)
{
	void *b = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (b == MAP_FAILED)
		return NULL;
	/* Faulted in: see FIXTURE_SETUP(data) in mrrc_data.c. */
	memset(b, 0, len);
	return b;
}

static const size_t sizes[] = {
	1, 7, 64, 4095, 4096, 4097, 65536, 200000, MiB, 4 * MiB,
};

/* The CRW tag @i's pattern and the STCRW side's slot for it. */
#define TAG(i)		(2000000 + (i))
#define SLOT(i, n)	((n) - 1 - (i))

/* ---- the agent's server halves ---------------------------------------- */

struct srv {
	int ctl, fd;
	uint32_t conn[2];
	uint8_t *buf;
	char why[96];
};

#define FAIL(s, ...) ({ snprintf((s)->why, sizeof((s)->why), __VA_ARGS__); -1; })

static int srv_connected(struct srv *s)
{
	struct mrrc_conn_query q;
	struct sockaddr_in peer = ip_addr(getenv("MRRC_LINK_PEER"), 0);

	if (mrrc_conn_query(s->fd, s->conn[0], &q))
		return FAIL(s, "conn_query: %s", strerror(errno));
	/* The client may have disconnected already: then it is closed. */
	if ((q.state != MRRC_CONN_ESTABLISHED &&
	     q.state != MRRC_CONN_CLOSED) || q.peer.family != AF_INET)
		return FAIL(s, "state %u family %u", q.state, q.peer.family);
	if (memcmp(q.peer.addr, &peer.sin_addr, 4))
		return FAIL(s, "the peer is not %s", getenv("MRRC_LINK_PEER"));
	if (wait_event(s->fd, MRRC_EVENT_DISCONNECTED, NULL) < 0)
		return FAIL(s, "no DISCONNECTED event");
	return 0;
}

/* Answer CTL_CHECK requests until CTL_GO; @zero clears what was checked. */
static int srv_checks(struct srv *s)
{
	struct ctl m;
	size_t bad;

	for (;;) {
		if (recv(s->ctl, &m, sizeof(m), MSG_WAITALL) != sizeof(m))
			return FAIL(s, "control connection lost");
		if (m.op == CTL_GO)
			return 0;
		if (m.op == CTL_FILL) {
			fill(s->buf, m.a, m.b);
			ctl_send(s->ctl, CTL_OK, 0, 0, 0, NULL);
			continue;
		}
		if (m.op != CTL_CHECK)
			return FAIL(s, "unexpected control message %u", m.op);
		bad = check(s->buf, m.a, m.b);
		if (!bad && m.a < BUF_LEN && s->buf[m.a])
			bad = m.a + 1;
		memset(s->buf, 0, m.a + 1);
		ctl_send(s->ctl, CTL_OK, bad ? -EILSEQ : 0, 0, 0,
			 bad ? "pattern differs" : NULL);
	}
}

/* Export the buffer with @access, tell the test, answer checks. */
static int srv_target(struct srv *s, uint32_t access)
{
	struct mrrc_seg seg;
	uint32_t id;
	int r;

	r = export1(s->fd, s->conn[0], s->buf, 4 * MiB, access, &seg, &id);
	if (r)
		return FAIL(s, "export: %s", strerror(-r));
	ctl_send(s->ctl, CTL_SEG, 0, seg.addr, seg.rkey, NULL);
	r = srv_checks(s);
	mrrc_unexport(s->fd, id);
	return r;
}

static int srv_write(struct srv *s)
{
	return srv_target(s, MRRC_ACCESS_REMOTE_WRITE);
}

static int srv_read(struct srv *s)
{
	return srv_target(s, MRRC_ACCESS_REMOTE_READ);
}

/*
 * Per CTL_GO (a = length, b = seed, c = imm, d = offset): post a RECV of
 * the buffer (or, at a non-zero offset, of 12 KiB across the two cached
 * regions of srv_segments()), or none for a write with immediate; wait
 * for the completion and check it, until CTL_DONE.
 */
static int srv_recv(struct srv *s)
{
	struct mrrc_cqe c;
	struct ctl m;
	int r;

	for (;;) {
		if (recv(s->ctl, &m, sizeof(m), MSG_WAITALL) != sizeof(m))
			return FAIL(s, "control connection lost");
		if (m.op == CTL_DONE)
			return 0;
		if (!m.c) {
			r = post1(s->fd, wr(s->conn[0], MRRC_OP_RECV,
					    s->buf + m.d,
					    m.d ? 12288 : BUF_LEN, m.a));
			if (r)
				return FAIL(s, "post RECV: %s", strerror(-r));
		}
		ctl_send(s->ctl, CTL_OK, 0, 0, 0, NULL);
		r = reap(s->fd, &c, 1);
		if (r || c.status)
			return FAIL(s, "RECV %llu: %s", (unsigned long long)m.a,
				    strerror(-(r ?: c.status)));
		if (c.opcode != (m.c ? MRRC_OP_RECV_IMM : MRRC_OP_RECV) ||
		    c.byte_len != m.a || (m.c && c.imm != m.c))
			return FAIL(s, "RECV %llu: opcode %u len %u imm %x",
				    (unsigned long long)m.a, c.opcode,
				    c.byte_len, c.imm);
		if (check(s->buf + m.d, m.a, m.b))
			return FAIL(s, "RECV %llu: pattern differs",
				    (unsigned long long)m.a);
		memset(s->buf, 0, m.a + m.d);
		ctl_send(s->ctl, CTL_OK, 0, 0, 0, NULL);
	}
}

static int srv_write_imm(struct srv *s)
{
	struct mrrc_seg seg;
	uint32_t id;
	int r;

	r = export1(s->fd, s->conn[0], s->buf, 4 * MiB,
		    MRRC_ACCESS_REMOTE_WRITE, &seg, &id);
	if (r)
		return FAIL(s, "export: %s", strerror(-r));
	ctl_send(s->ctl, CTL_SEG, 0, seg.addr, seg.rkey, NULL);
	r = srv_recv(s);
	mrrc_unexport(s->fd, id);
	return r;
}

/* Two segments here: a RECV across two cached regions. */
static int srv_segments(struct srv *s)
{
	if (two_regions(s->fd, s->buf, MRRC_ACCESS_LOCAL_WRITE) != 2)
		return FAIL(s, "two_regions");
	return srv_recv(s);
}

static int srv_atomics(struct srv *s)
{
	volatile uint64_t *ctr = (uint64_t *)s->buf;
	unsigned int nseg = 1;
	struct mrrc_seg seg;
	struct ctl m;
	uint32_t id;
	int r;

	*ctr = 0;
	/* One export for both connections the client uses. */
	r = mrrc_export(s->fd, s->buf, 8, MRRC_ACCESS_REMOTE_ATOMIC, s->conn,
			2, &seg, &nseg, &id);
	if (r)
		return FAIL(s, "export: %s", strerror(-r));
	ctl_send(s->ctl, CTL_SEG, 0, seg.addr, seg.rkey, NULL);
	r = ctl_recv(s->ctl, CTL_CHECK, &m);
	if (r)
		return FAIL(s, "control: %s", strerror(-r));
	if (*ctr != m.a)
		return FAIL(s, "counter %llu, expected %llu",
			    (unsigned long long)*ctr, (unsigned long long)m.a);
	mrrc_unexport(s->fd, id);
	return 0;
}

/*
 * NTAGS STCRWs, slot SLOT(i) for tag TAG(i).  CTL_GO a = order: 0 the test
 * posts its CRWs first (this side posts on the second GO), 1 this side
 * first, 2 both at once in steps.
 */
static int srv_crw(struct srv *s)
{
	const unsigned int n = NTAGS;
	struct mrrc_wr *w = calloc(n, sizeof(*w));
	struct mrrc_cqe *c = calloc(n, sizeof(*c));
	unsigned int i, step;
	struct ctl m;
	int r;

	if (!w || !c)
		return FAIL(s, "out of memory");
	if (ctl_recv(s->ctl, CTL_GO, &m))
		return FAIL(s, "control lost");
	step = m.a == 2 ? 100 : n;
	for (i = 0; i < n; i++) {
		w[i] = wr(s->conn[0], MRRC_OP_STCRW,
			  s->buf + SLOT(i, n) * 64, 64, i);
		w[i].tag = TAG(i);
	}
	if (m.a == 0 && ctl_recv(s->ctl, CTL_GO, &m))
		return FAIL(s, "control lost");
	for (i = 0; i < n; i += step) {
		r = mrrc_post(s->fd, w + i, n - i < step ? n - i : step, NULL);
		if (r)
			return FAIL(s, "post STCRW %u: %s", i, strerror(-r));
	}
	if (m.a == 1)
		ctl_send(s->ctl, CTL_OK, 0, 0, 0, NULL);
	r = reap(s->fd, c, n);
	if (r)
		return FAIL(s, "STCRW completions: %s", strerror(-r));
	for (i = 0; i < n; i++)
		if (c[i].status || c[i].opcode != MRRC_OP_STCRW ||
		    c[i].byte_len != 64)
			return FAIL(s, "STCRW %llu: status %d len %u",
				    (unsigned long long)c[i].wr_id,
				    c[i].status, c[i].byte_len);
	for (i = 0; i < n; i++)
		if (check(s->buf + SLOT(i, n) * 64, 64, TAG(i)))
			return FAIL(s, "tag %u: pattern differs", i);
	free(w);
	free(c);
	return 0;
}

/* A STCRW that expires here, while the test's CRW expires there. */
static int srv_deadlines(struct srv *s)
{
	struct mrrc_wr w = wr(s->conn[0], MRRC_OP_STCRW, s->buf, 64, 1);
	uint64_t t0 = now_ns();
	struct mrrc_cqe c;
	int r;

	w.tag = 12;
	w.deadline_ns = t0 + 200000000;
	r = post1(s->fd, w);
	r = r ?: reap(s->fd, &c, 1);
	if (r)
		return FAIL(s, "STCRW: %s", strerror(-r));
	if (c.status != -ETIMEDOUT || c.tag != 12 || now_ns() < t0 + 200000000)
		return FAIL(s, "STCRW: status %d tag %llu", c.status,
			    (unsigned long long)c.tag);
	/* Then a held one the test's disconnect flushes. */
	w.tag = 13;
	w.deadline_ns = 0;
	r = post1(s->fd, w);
	if (r)
		return FAIL(s, "STCRW: %s", strerror(-r));
	ctl_send(s->ctl, CTL_OK, 0, 0, 0, NULL);
	r = reap(s->fd, &c, 1);
	if (r || c.status != -ECONNRESET || c.tag != 13)
		return FAIL(s, "held STCRW: %d, status %d", r, c.status);
	if (wait_event(s->fd, MRRC_EVENT_DISCONNECTED, NULL) < 0)
		return FAIL(s, "no DISCONNECTED event");
	return 0;
}

/* Hold STCRWs, then die on CTL_GO. */
static int srv_die(struct srv *s)
{
	struct ctl m;

	if (ctl_recv(s->ctl, CTL_GO, &m))
		return FAIL(s, "control lost");
	kill(getpid(), SIGKILL);
	return FAIL(s, "still alive");
}

/*
 * Vanish without a word: take the link down (no disconnect can reach the
 * client) for VANISH_S seconds, then bring it back for the verdict.
 */
static int srv_vanish(struct srv *s)
{
	char cmd[320];

	snprintf(cmd, sizeof(cmd),
		 "dev=$(ip -o -4 addr show to %s | awk '{ print $2 }'); "
		 "[ -n \"$dev\" ] && ip link set \"$dev\" down && sleep %d && "
		 "ip link set \"$dev\" up", getenv("MRRC_LINK_IP"), VANISH_S);
	if (system(cmd))
		return FAIL(s, "cannot take the link down and up again");
	return 0;
}

/* Hold 100 STCRWs; the test's process holding the other end is killed. */
static int srv_peer_killed(struct srv *s)
{
	struct mrrc_cqe c[100];
	unsigned int i;
	int r;

	for (i = 0; i < 100; i++) {
		struct mrrc_wr w = wr(s->conn[0], MRRC_OP_STCRW,
				      s->buf + i * 4096, 4096, i);

		w.tag = i + 1;
		r = post1(s->fd, w);
		if (r)
			return FAIL(s, "STCRW: %s", strerror(-r));
	}
	ctl_send(s->ctl, CTL_OK, 0, 0, 0, NULL);
	r = reap(s->fd, c, 100);
	if (r)
		return FAIL(s, "flushes: %s", strerror(-r));
	for (i = 0; i < 100; i++)
		if (c[i].status != -ECONNRESET)
			return FAIL(s, "STCRW %u: status %d", i, c[i].status);
	if (wait_event(s->fd, MRRC_EVENT_DISCONNECTED, NULL) < 0)
		return FAIL(s, "no DISCONNECTED event");
	return 0;
}

static int srv_frrwp(struct srv *s)
{
	const size_t len = 8 * 4096;
	int i, r;

	for (i = 0; i < 4; i++) {
		memset(s->buf, 0, len);
		r = mrrc_frrwp_serve(s->fd, s->conn[0], s->buf, len, TMO_MS);
		if (r != (int)len)
			return FAIL(s, "serve write %d: %d", i, r);
		if (check(s->buf, len, 40 + i))
			return FAIL(s, "write %d: pattern differs", i);
		fill(s->buf, len, 60 + i);
		r = mrrc_frrwp_serve(s->fd, s->conn[0], s->buf, len, TMO_MS);
		if (r != (int)len)
			return FAIL(s, "serve read %d: %d", i, r);
	}
	return 0;
}

static const struct scenario {
	const char *name;
	int (*serve)(struct srv *s);
	int dies;		/* killed by SIGKILL on purpose */
} scenarios[] = {
	{ "connected", srv_connected, 0 },
	{ "write", srv_write, 0 },
	{ "read", srv_read, 0 },
	{ "send", srv_recv, 0 },
	{ "write_imm", srv_write_imm, 0 },
	{ "segments", srv_segments, 0 },
	{ "atomics", srv_atomics, 0 },
	{ "crw", srv_crw, 0 },
	{ "deadlines", srv_deadlines, 0 },
	{ "die", srv_die, 1 },
	{ "peer_killed", srv_peer_killed, 0 },
	{ "frrwp", srv_frrwp, 0 },
	{ "vanish", srv_vanish, 0 },
};

/* Read @ctl until its peer closes it or @ms pass. */
static void ctl_linger(int ctl, int ms)
{
	struct pollfd pfd = { .fd = ctl, .events = POLLIN };
	int64_t end = now_ms() + ms;
	char b[256];

	while (now_ms() < end &&
	       poll(&pfd, 1, (int)(end - now_ms())) > 0 &&
	       read(ctl, b, sizeof(b)) > 0)
		;
}

/* The server half of one scenario, in its own process; never returns. */
static void serve_one(int ctl, const struct scenario *sc, unsigned int nconn,
		      uint16_t port)
{
	struct sockaddr_in sin = ip_addr(getenv("MRRC_LINK_IP"), port);
	struct srv s = { .ctl = ctl };
	unsigned int i;
	uint32_t lis;
	int r;

	s.fd = open_bound(RXE_DEV);
	s.buf = map(BUF_LEN);
	if (s.fd < 0 || !s.buf) {
		ctl_send(ctl, CTL_READY, -ENODEV, 0, 0, "cannot open rxe0");
		_exit(1);
	}
	r = mrrc_listen(s.fd, (struct sockaddr *)&sin, 4, 0, &lis);
	ctl_send(ctl, CTL_READY, r, port, 0, r ? "listen failed" : NULL);
	if (r)
		_exit(1);
	for (i = 0; i < nconn; i++) {
		r = wait_event(s.fd, MRRC_EVENT_CONNECT_REQUEST, NULL);
		if (r < 0)
			break;
		s.conn[i] = r;
		r = mrrc_accept(s.fd, s.conn[i], 0);
		r = r ?: wait_event(s.fd, MRRC_EVENT_ESTABLISHED, NULL);
		if (r < 0)
			break;
	}
	if (r < 0)
		r = FAIL(&s, "accept: %s", strerror(-r));
	else
		r = sc->serve(&s);
	/* In the log too: the test half may not live to read the verdict. */
	if (r) {
		printf("# %s: server half failed: %s\n", sc->name, s.why);
		fflush(stdout);
	}
	ctl_send(ctl, CTL_DONE, r ? -EIO : 0, 0, 0, r ? s.why : NULL);
	/*
	 * Keep the connection until the test half has closed the control
	 * connection, after its own context: closing first flushes the
	 * test half's last work requests while their acknowledgments are
	 * still on the way (ECONNRESET there, though all arrived here).
	 */
	ctl_linger(ctl, 60000);
	close(s.fd);
	_exit(r ? 1 : 0);
}

static uint64_t contexts_left(void)
{
	return debugfs_contexts();
}

/* The agent: serve scenarios one at a time until CTL_QUIT. */
static int serve(void)
{
	uint16_t port = RDMA_PORT;
	int ls, s, failed = 0;
	unsigned int i;
	struct ctl m;
	pid_t pid;
	int st;

	ls = agent_socket("mrrc_remote", CTL_PORT);
	if (ls < 0)
		return 1;
	for (;;) {
		s = agent_next("mrrc_remote", ls, IDLE_S, contexts_left, &m);
		if (s < 0)
			return s == AGENT_QUIT ? failed : 1;
		for (i = 0; i < ARRAY_SIZE(scenarios); i++)
			if (!strcmp(m.text, scenarios[i].name))
				break;
		if (i == ARRAY_SIZE(scenarios) || m.a < 1 || m.a > 2) {
			ctl_send(s, CTL_READY, -EINVAL, 0, 0, "no such scenario");
			close(s);
			continue;
		}
		printf("# serving %s\n", m.text);
		fflush(stdout);
		pid = fork();
		if (!pid) {
			close(ls);
			serve_one(s, &scenarios[i], m.a, port);
		}
		port++;
		waitpid(pid, &st, 0);
		if (WIFSIGNALED(st) && !(scenarios[i].dies &&
					 WTERMSIG(st) == SIGKILL)) {
			char why[96];

			snprintf(why, sizeof(why), "server half died (signal %d)",
				 WTERMSIG(st));
			ctl_send(s, CTL_DONE, -EIO, 0, 0, why);
		}
		if (WIFSIGNALED(st) && scenarios[i].dies)
			ctl_send(s, CTL_DONE, 0, 0, 0, NULL);
		if (!WIFEXITED(st) ? !scenarios[i].dies : WEXITSTATUS(st))
			failed = 1;
		close(s);
	}
}

/* ---- the tests (VM b) -------------------------------------------------- */

struct peer {
	int ctl, fd;
	uint32_t conn;
	uint16_t port;
	uint8_t *buf;
};


/*
 * Start @scenario with @nconn connections on the agent (main() has seen it
 * up).  With @connect, open a context and connect it.
 */
static int peer_start(struct peer *p, const char *scenario,
		      unsigned int nconn, int connect_now)
{
	struct ctl m;
	int r;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	p->ctl = agent_dial(CTL_PORT, 10000);
	if (p->ctl < 0)
		return p->ctl;
	r = ctl_send(p->ctl, CTL_HELLO, 0, nconn, 0, scenario);
	r = r ?: ctl_recv(p->ctl, CTL_READY, &m);
	if (r)
		return r;
	if (m.status)
		return m.status;
	p->port = m.a;
	p->buf = map(BUF_LEN);
	if (!p->buf)
		return -ENOMEM;
	if (!connect_now)
		return 0;
	p->fd = open_bound(RXE_DEV);
	if (p->fd < 0)
		return -ENODEV;
	r = peer_connect(p->fd, p->port);
	if (r < 0)
		return r;
	p->conn = r;
	return 0;
}

/* The server half's verdict: 0, or its status with @why filled. */
static int peer_verdict(struct peer *p, char *why)
{
	struct ctl m;
	int r = ctl_recv(p->ctl, CTL_DONE, &m);

	snprintf(why, 96, "%s", r ? "no verdict from the agent" : m.text);
	return r ?: m.status;
}

static void peer_close(struct peer *p)
{
	if (p->fd >= 0)
		close(p->fd);
	if (p->ctl >= 0)
		close(p->ctl);
	if (p->buf)
		munmap(p->buf, BUF_LEN);
}

FIXTURE(remote) {
	struct peer p;
	char why[96];
};

FIXTURE_SETUP(remote)
{
	/* Each test starts its own scenario. */
	self->p.ctl = -1;
	self->p.fd = -1;
}

FIXTURE_TEARDOWN(remote)
{
	peer_close(&self->p);
}

#define START(name, nconn, connect_now) do {				\
	int __r = peer_start(&self->p, name, nconn, connect_now);	\
	ASSERT_EQ(0, __r) TH_LOG("%s: %s", name, strerror(-__r));	\
} while (0)

#define VERDICT() \
	ASSERT_EQ(0, peer_verdict(&self->p, self->why)) \
		TH_LOG("server half: %s", self->why)

TEST_F(remote, connect_query_disconnect)
{
	struct sockaddr_in peer = ip_addr(peer_ip(), 0);
	struct mrrc_conn_query q;

	START("connected", 1, 1);
	ASSERT_EQ(0, mrrc_conn_query(self->p.fd, self->p.conn, &q));
	EXPECT_EQ(MRRC_CONN_ESTABLISHED, q.state);
	EXPECT_EQ(AF_INET, q.peer.family);
	EXPECT_EQ(self->p.port, q.peer.port);
	EXPECT_EQ(0, memcmp(q.peer.addr, &peer.sin_addr, 4));
	EXPECT_LT(1, q.credits);
	ASSERT_EQ(0, mrrc_disconnect(self->p.fd, self->p.conn));
	ASSERT_LE(0, wait_event(self->p.fd, MRRC_EVENT_DISCONNECTED, NULL));
	VERDICT();
}

TEST_F(remote, write_every_size)
{
	struct mrrc_cqe c;
	struct ctl seg;
	size_t i;

	START("write", 1, 1);
	ASSERT_EQ(0, ctl_recv(self->p.ctl, CTL_SEG, &seg));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct mrrc_wr w = wr(self->p.conn, MRRC_OP_WRITE,
				      self->p.buf, sizes[i], i);

		fill(self->p.buf, sizes[i], i + 1);
		w.remote_addr = seg.a;
		w.rkey = seg.b;
		ASSERT_EQ(0, post1(self->p.fd, w));
		ASSERT_EQ(0, reap(self->p.fd, &c, 1));
		ASSERT_EQ(0, c.status) TH_LOG("size %zu", sizes[i]);
		EXPECT_EQ(sizes[i], c.byte_len);
		ASSERT_EQ(0, ctl_call(self->p.ctl, CTL_CHECK, sizes[i], i + 1,
				      self->why))
			TH_LOG("size %zu: %s", sizes[i], self->why);
	}
	ASSERT_EQ(0, ctl_send(self->p.ctl, CTL_GO, 0, 0, 0, NULL));
	VERDICT();
}

TEST_F(remote, read_every_size)
{
	struct mrrc_cqe c;
	struct ctl seg;
	size_t i;

	START("read", 1, 1);
	ASSERT_EQ(0, ctl_recv(self->p.ctl, CTL_SEG, &seg));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct mrrc_wr w = wr(self->p.conn, MRRC_OP_READ,
				      self->p.buf, sizes[i], i);

		ASSERT_EQ(0, ctl_call(self->p.ctl, CTL_FILL, sizes[i], 100 + i,
				      NULL));
		memset(self->p.buf, 0, sizes[i]);
		w.remote_addr = seg.a;
		w.rkey = seg.b;
		ASSERT_EQ(0, post1(self->p.fd, w));
		ASSERT_EQ(0, reap(self->p.fd, &c, 1));
		ASSERT_EQ(0, c.status) TH_LOG("size %zu", sizes[i]);
		ASSERT_EQ(0, check(self->p.buf, sizes[i], 100 + i))
			TH_LOG("size %zu", sizes[i]);
	}
	ASSERT_EQ(0, ctl_send(self->p.ctl, CTL_GO, 0, 0, 0, NULL));
	VERDICT();
}

/* Ask the agent to receive @len (pattern @seed, at offset @off, @imm). */
static int expect_recv(int ctl, size_t len, uint32_t seed, uint32_t imm,
		       size_t off)
{
	struct ctl m = { .op = CTL_GO, .a = len, .b = seed, .c = imm,
			 .d = off };

	if (send(ctl, &m, sizeof(m), MSG_NOSIGNAL) != sizeof(m))
		return -EIO;
	return ctl_recv(ctl, CTL_OK, &m) ?: m.status;
}

TEST_F(remote, send_recv_every_size)
{
	struct mrrc_cqe c;
	struct ctl m;
	size_t i;

	START("send", 1, 1);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		fill(self->p.buf, sizes[i], 200 + i);
		ASSERT_EQ(0, expect_recv(self->p.ctl, sizes[i], 200 + i, 0, 0));
		ASSERT_EQ(0, post1(self->p.fd, wr(self->p.conn, MRRC_OP_SEND,
						  self->p.buf, sizes[i], i)));
		ASSERT_EQ(0, reap(self->p.fd, &c, 1));
		ASSERT_EQ(0, c.status) TH_LOG("size %zu", sizes[i]);
		ASSERT_EQ(0, ctl_recv(self->p.ctl, CTL_OK, &m));
		ASSERT_EQ(0, m.status) TH_LOG("size %zu", sizes[i]);
	}
	ASSERT_EQ(0, ctl_send(self->p.ctl, CTL_DONE, 0, 0, 0, NULL));
	VERDICT();
}

TEST_F(remote, write_imm_reaches_peer)
{
	struct mrrc_cqe c;
	struct ctl seg, m;
	struct mrrc_wr w;

	START("write_imm", 1, 1);
	ASSERT_EQ(0, ctl_recv(self->p.ctl, CTL_SEG, &seg));
	fill(self->p.buf, 100000, 9);
	ASSERT_EQ(0, expect_recv(self->p.ctl, 100000, 9, 0xdeadbeef, 0));
	w = wr(self->p.conn, MRRC_OP_WRITE_IMM, self->p.buf, 100000, 1);
	w.remote_addr = seg.a;
	w.rkey = seg.b;
	w.imm = 0xdeadbeef;
	ASSERT_EQ(0, post1(self->p.fd, w));
	ASSERT_EQ(0, reap(self->p.fd, &c, 1));
	ASSERT_EQ(0, c.status);
	ASSERT_EQ(0, ctl_recv(self->p.ctl, CTL_OK, &m));
	ASSERT_EQ(0, m.status);
	ASSERT_EQ(0, ctl_send(self->p.ctl, CTL_DONE, 0, 0, 0, NULL));
	VERDICT();
}

TEST_F(remote, ranges_spanning_several_segments)
{
	struct mrrc_cache_stats st0, st1;
	struct mrrc_cqe c;
	struct ctl m;

	START("segments", 1, 1);
	/* A SEND from two cached regions into a RECV across two there. */
	ASSERT_EQ(2, two_regions(self->p.fd, self->p.buf, 0));
	ASSERT_EQ(0, mrrc_cache_stats(self->p.fd, &st0));
	fill(self->p.buf + 4096, 8192, 77);
	ASSERT_EQ(0, expect_recv(self->p.ctl, 8192, 77, 0, 2048));
	ASSERT_EQ(0, post1(self->p.fd, wr(self->p.conn, MRRC_OP_SEND,
					  self->p.buf + 4096, 8192, 2)));
	ASSERT_EQ(0, reap(self->p.fd, &c, 1));
	ASSERT_EQ(0, c.status);
	ASSERT_EQ(0, ctl_recv(self->p.ctl, CTL_OK, &m));
	ASSERT_EQ(0, m.status);
	ASSERT_EQ(0, mrrc_cache_stats(self->p.fd, &st1));
	EXPECT_EQ(st0.hit_span + 1, st1.hit_span);
	ASSERT_EQ(0, ctl_send(self->p.ctl, CTL_DONE, 0, 0, 0, NULL));
	VERDICT();
}

struct atomic_thread {
	int fd;
	uint32_t conn;
	struct ctl seg;
	uint64_t *old;
	unsigned int n;
	int ret;
};

static void *atomic_adds(void *arg)
{
	struct atomic_thread *t = arg;
	struct mrrc_wr w[50];
	struct mrrc_cqe c[50];
	unsigned int i, k;

	for (i = 0; i < t->n && !t->ret; i += 50) {
		for (k = 0; k < 50; k++) {
			w[k] = wr(t->conn, MRRC_OP_FETCH_ADD, &t->old[i + k],
				  8, i + k);
			w[k].remote_addr = t->seg.a;
			w[k].rkey = t->seg.b;
			w[k].compare_add = 1;
		}
		t->ret = mrrc_post(t->fd, w, 50, NULL) ?: reap(t->fd, c, 50);
		for (k = 0; !t->ret && k < 50; k++)
			if (c[k].status)
				t->ret = c[k].status;
	}
	return NULL;
}

TEST_F(remote, concurrent_atomics_from_two_connections)
{
	const unsigned int n = 1000;
	struct atomic_thread t[2];
	uint64_t *old;
	struct mrrc_cqe c;
	struct mrrc_wr w;
	uint8_t *seen;
	pthread_t th;
	unsigned int i;
	int r;

	/* Two contexts, two connections, the same remote counter. */
	START("atomics", 2, 1);
	old = (uint64_t *)self->p.buf;
	memset(t, 0, sizeof(t));
	t[0].fd = self->p.fd;
	t[0].conn = self->p.conn;
	t[1].fd = open_bound(RXE_DEV);
	ASSERT_LE(0, t[1].fd);
	r = peer_connect(t[1].fd, self->p.port);
	ASSERT_LE(0, r);
	t[1].conn = r;
	ASSERT_EQ(0, ctl_recv(self->p.ctl, CTL_SEG, &t[0].seg));
	t[1].seg = t[0].seg;
	t[0].old = old;
	t[1].old = old + n;
	t[0].n = t[1].n = n;
	ASSERT_EQ(0, pthread_create(&th, NULL, atomic_adds, &t[1]));
	atomic_adds(&t[0]);
	pthread_join(th, NULL);
	ASSERT_EQ(0, t[0].ret);
	ASSERT_EQ(0, t[1].ret);
	/* Every fetched value is distinct: each add was atomic. */
	seen = calloc(2 * n, 1);
	ASSERT_NE(NULL, seen);
	for (i = 0; i < 2 * n; i++) {
		ASSERT_LT(old[i], 2 * n);
		EXPECT_EQ(0, seen[old[i]]);
		seen[old[i]] = 1;
	}
	free(seen);
	/* A compare-and-swap that matches, then one that does not. */
	w = wr(t[1].conn, MRRC_OP_CMP_SWAP, old, 8, 1);
	w.remote_addr = t[0].seg.a;
	w.rkey = t[0].seg.b;
	w.compare_add = 2 * n;
	w.swap = 7;
	ASSERT_EQ(0, post1(t[1].fd, w));
	ASSERT_EQ(0, reap(t[1].fd, &c, 1));
	EXPECT_EQ(2 * n, *old);
	ASSERT_EQ(0, post1(t[1].fd, w));
	ASSERT_EQ(0, reap(t[1].fd, &c, 1));
	EXPECT_EQ(7, *old);
	ASSERT_EQ(0, ctl_send(self->p.ctl, CTL_CHECK, 0, 7, 0, NULL));
	close(t[1].fd);
	VERDICT();
}

/* NTAGS CRWs here against the agent's STCRWs, in the given @order. */
static int crw_run(struct peer *p, int order)
{
	const unsigned int n = NTAGS;
	struct mrrc_wr *w = calloc(n, sizeof(*w));
	struct mrrc_cqe *c = calloc(n, sizeof(*c));
	unsigned int i, step = order == 2 ? 100 : n;
	struct ctl m;
	int ret;

	if (!w || !c)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		fill(p->buf + i * 64, 64, TAG(i));
		w[i] = wr(p->conn, MRRC_OP_CRW, p->buf + i * 64, 64, i);
		w[i].tag = TAG(i);
	}
	ret = ctl_send(p->ctl, CTL_GO, 0, order, 0, NULL);
	if (!ret && order == 1)
		ret = ctl_recv(p->ctl, CTL_OK, &m);
	for (i = 0; !ret && i < n; i += step)
		ret = mrrc_post(p->fd, w + i, n - i < step ? n - i : step,
				NULL);
	if (!ret && order == 0)
		ret = ctl_send(p->ctl, CTL_GO, 0, 0, 0, NULL);
	ret = ret ?: reap(p->fd, c, n);
	for (i = 0; !ret && i < n; i++)
		if (c[i].status || c[i].opcode != MRRC_OP_CRW)
			ret = c[i].status ?: -EPROTO;
	free(w);
	free(c);
	return ret;
}

TEST_F(remote, crw_first_thousands_of_tags)
{
	START("crw", 1, 1);
	ASSERT_EQ(0, crw_run(&self->p, 0));
	VERDICT();
}

TEST_F(remote, stcrw_first_thousands_of_tags)
{
	struct mrrc_conn_query q;

	START("crw", 1, 1);
	ASSERT_EQ(0, crw_run(&self->p, 1));
	ASSERT_EQ(0, mrrc_conn_query(self->p.fd, self->p.conn, &q));
	EXPECT_EQ(NTAGS, q.crw_matched);
	VERDICT();
}

TEST_F(remote, crw_and_stcrw_racing)
{
	START("crw", 1, 1);
	ASSERT_EQ(0, crw_run(&self->p, 2));
	VERDICT();
}

TEST_F(remote, deadlines_cancel_duplicates_disconnect)
{
	struct mrrc_cqe c;
	struct mrrc_wr w;
	struct ctl m;
	uint64_t t0;

	START("deadlines", 1, 1);
	/* Tag 11 has no STCRW there: the deadline expires. */
	w = wr(self->p.conn, MRRC_OP_CRW, self->p.buf, 64, 1);
	w.tag = 11;
	t0 = now_ns();
	w.deadline_ns = t0 + 200000000;
	ASSERT_EQ(0, post1(self->p.fd, w));
	ASSERT_EQ(0, reap(self->p.fd, &c, 1));
	EXPECT_EQ(-ETIMEDOUT, c.status);
	EXPECT_EQ(11, c.tag);
	EXPECT_LE(t0 + 200000000, now_ns());
	/* Held, duplicated, cancelled. */
	w.deadline_ns = 0;
	ASSERT_EQ(0, post1(self->p.fd, w));
	EXPECT_EQ(-EEXIST, post1(self->p.fd, w));
	ASSERT_EQ(0, mrrc_cancel(self->p.fd, self->p.conn, MRRC_OP_CRW, 11));
	ASSERT_EQ(0, reap(self->p.fd, &c, 1));
	EXPECT_EQ(-ECANCELED, c.status);
	/* Held here and there, then a disconnect flushes both. */
	ASSERT_EQ(0, ctl_recv(self->p.ctl, CTL_OK, &m));
	w.tag = 14;
	ASSERT_EQ(0, post1(self->p.fd, w));
	ASSERT_EQ(0, mrrc_disconnect(self->p.fd, self->p.conn));
	ASSERT_EQ(0, reap(self->p.fd, &c, 1));
	EXPECT_EQ(14, c.tag);
	EXPECT_NE(0, c.status);
	ASSERT_LE(0, wait_event(self->p.fd, MRRC_EVENT_DISCONNECTED, NULL));
	VERDICT();
}

/*
 * The worst bug registration caches have had: the same address, new
 * memory.  The peer must see the new content.
 */
TEST_F(remote, stale_registration_safety_end_to_end)
{
	const size_t len = 64 * 1024;
	struct mrrc_cqe c;
	struct ctl seg;
	uint8_t *a;
	int round;

	START("write", 1, 1);
	ASSERT_EQ(0, ctl_recv(self->p.ctl, CTL_SEG, &seg));
	a = map(len);
	ASSERT_NE(NULL, a);
	for (round = 0; round < 3; round++) {
		struct mrrc_wr w = wr(self->p.conn, MRRC_OP_WRITE, a, len, 1);

		fill(a, len, 500 + round);
		w.remote_addr = seg.a;
		w.rkey = seg.b;
		ASSERT_EQ(0, post1(self->p.fd, w));
		ASSERT_EQ(0, reap(self->p.fd, &c, 1));
		ASSERT_EQ(0, c.status);
		ASSERT_EQ(0, ctl_call(self->p.ctl, CTL_CHECK, len, 500 + round,
				      self->why))
			TH_LOG("round %d: the peer got stale data", round);
		/* New memory at the same address, other content. */
		ASSERT_EQ(0, munmap(a, len));
		ASSERT_EQ(a, mmap(a, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				  -1, 0));
	}
	munmap(a, len);
	ASSERT_EQ(0, ctl_send(self->p.ctl, CTL_GO, 0, 0, 0, NULL));
	VERDICT();
}

TEST_F(remote, peer_killed_with_writes_held)
{
	struct mrrc_cqe c[101];
	unsigned int i, ok;

	START("die", 1, 1);
	for (i = 0; i < 100; i++) {
		struct mrrc_wr w = wr(self->p.conn, MRRC_OP_CRW,
				      self->p.buf + i * 4096, 4096, i);

		w.tag = i + 1;
		ASSERT_EQ(0, post1(self->p.fd, w));
	}
	/* And a send the server has no receive for. */
	ASSERT_EQ(0, post1(self->p.fd, wr(self->p.conn, MRRC_OP_SEND,
					  self->p.buf, MiB, 100)));
	ASSERT_EQ(0, ctl_send(self->p.ctl, CTL_GO, 0, 0, 0, NULL));
	ASSERT_EQ(0, reap(self->p.fd, c, 101));
	for (i = 0, ok = 0; i < 101; i++)
		ok += c[i].status != 0;
	EXPECT_EQ(101, ok) TH_LOG("only %u of 101 failed", ok);
	ASSERT_LE(0, wait_event(self->p.fd, MRRC_EVENT_DISCONNECTED, NULL));
	VERDICT();
}

TEST_F(remote, process_killed_with_stcrw_held_there)
{
	struct ctl m;
	int pfd[2], st;
	char ready;
	pid_t pid;

	START("peer_killed", 1, 0);
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = open_bound(RXE_DEV);

		if (fd < 0 || peer_connect(fd, self->p.port) < 0)
			_exit(1);
		if (write(pfd[1], "r", 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(pfd[0], &ready, 1));
	ASSERT_EQ(0, ctl_recv(self->p.ctl, CTL_OK, &m));
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(pfd[0]);
	close(pfd[1]);
	VERDICT();
}

TEST_F(remote, frrwp_transactions_both_modes)
{
	const size_t len = 8 * 4096;
	int i;

	START("frrwp", 1, 1);
	for (i = 0; i < 4; i++) {
		int mode = i & 1 ? MRRC_FRRWP_TRADITIONAL : MRRC_FRRWP;

		fill(self->p.buf, len, 40 + i);
		ASSERT_EQ(0, mrrc_frrwp_write(self->p.fd, self->p.conn,
					      self->p.buf, len, mode, TMO_MS))
			TH_LOG("write %d", i);
		memset(self->p.buf, 0, len);
		ASSERT_EQ(0, mrrc_frrwp_read(self->p.fd, self->p.conn,
					     self->p.buf, len, mode, TMO_MS))
			TH_LOG("read %d", i);
		ASSERT_EQ(0, check(self->p.buf, len, 60 + i))
			TH_LOG("read %d", i);
	}
	VERDICT();
}

static int ka_param(int ms)
{
	FILE *f = fopen(KA_PARAM, "r+");
	int old = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &old) != 1)
		old = -1;
	rewind(f);
	if (ms >= 0)
		fprintf(f, "%d\n", ms);
	fclose(f);
	return old;
}

/*
 * The peer's machine drops off the network with the connection idle: the
 * keepalive probe runs out of retries and the connection fails with
 * ETIMEDOUT, well before the peer comes back.
 */
TEST_F(remote, vanished_peer_detected_by_keepalive)
{
	struct mrrc_conn_query q;
	struct mrrc_cqe c;
	int64_t t0;
	int old, r;

	old = ka_param(500);
	ASSERT_LE(0, old);
	START("vanish", 1, 1);
	t0 = now_ms();
	do {
		r = reap(self->p.fd, &c, 1);
	} while (!r && c.opcode != MRRC_OP_EVENT);
	ka_param(old);
	ASSERT_EQ(0, r) TH_LOG("no event within %d s", TMO_MS / 1000);
	EXPECT_EQ(MRRC_EVENT_ERROR, c.event);
	EXPECT_EQ(-ETIMEDOUT, c.status);
	TH_LOG("peer loss reported after %lld ms", (long long)(now_ms() - t0));
	ASSERT_EQ(0, mrrc_conn_query(self->p.fd, self->p.conn, &q));
	EXPECT_EQ(MRRC_CONN_CLOSED, q.state);
	EXPECT_LE(1, q.keepalives);
	VERDICT();
}

TEST_F(remote, unknown_scenario_is_refused)
{
	EXPECT_EQ(-EINVAL, peer_start(&self->p, "no-such-scenario", 1, 0));
}

/* Last: both ends have released every context; the agent exits. */
TEST_F(remote, zz_nothing_left_behind)
{
	struct ctl m;
	int s = agent_dial(CTL_PORT, 10000);

	ASSERT_LE(0, s);
	ASSERT_EQ(0, ctl_send(s, CTL_QUIT, 0, 0, 0, NULL));
	ASSERT_EQ(0, ctl_recv(s, CTL_OK, &m));
	EXPECT_EQ(0, m.a) TH_LOG("contexts left on the agent's side");
	EXPECT_EQ(0, debugfs_contexts());
	close(s);
}

#define main harness_main
TEST_HARNESS_MAIN
#undef main

int main(int argc, char **argv)
{
	return pair_main(argc, argv, CTL_PORT, serve, harness_main);
}
