// SPDX-License-Identifier: GPL-2.0-only
/*
 * bm - the buffer manager's nodes (issue 18, in progress): the coherence
 * protocol of coh.c between processes over the module's connections, and
 * the linearizability check of what they did.
 *
 *   bm node -i ID -n NODES -a ADDR [-p PORT] [-P PAGES] [-o OPS] ...
 *	one node: listens on ADDR:PORT+ID, connects to the nodes below it
 *	(on ADDR, or on the -A list), runs OPS random reads and writes of
 *	unique values on PAGES pages (page p's home is node p % NODES), -k
 *	at a time, keeps serving the others until every node is done, and
 *	writes its history (page, write, value, invocation and response
 *	times in CLOCK_MONOTONIC ns) to -H FILE.
 *   bm check FILE...
 *	merges the histories (of processes on one machine: one clock) and
 *	checks every page's with lin_check(): JSON lines with
 *	linearizability_ops and linearizability_violations; exit 1 if a page
 *	is not linearizable.
 *   bm lat FILE...
 *	how long the histories' operations took, by kind and by where the
 *	page's home was (local or remote).
 *   bm fix -t file|remote -f FILE ...
 *	the frame pool under a database's load (fixbench.c).
 *
 * Node j listens for node i > j on its own port, PORT + j * 32 + i, so
 * every connection's events name their peer (the listener's and the
 * connection's user_data); one connection per listener.  Messages are
 * 24-byte SENDs (struct bm_msg); the sender of a message is the node its
 * connection was set up with, never what the message says.  A malformed
 * message, or one the protocol refuses, ends the run with an error: a
 * node does not guess.  The nodes trust each other's identity (a private
 * network, as the cluster's); they do not trust the bytes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libmrrc.h"
#include "mrrc_version.h"
#include "bm.h"
#include "coh.h"
#include "lin.h"
#include "benchjson.h"

#define PROG		"bm"
#define BM_MAGIC	0x626d3031u	/* "bm01" */
#define PAGES_MAX	4096u
#define SLOTS_MAX	64u
#define RECV_SLOTS	64u
#define SEND_SLOTS	256u
#define OUTBOX_MAX	65536u	/* messages waiting for a send slot */
#define WR_RECV		1u
#define WR_SEND		2u
#define IDLE_LIMIT_NS	60000000000ull	/* no progress this long: give up */

enum { BM_DONE = COH_M_TYPES, BM_TYPES };

struct bm_msg {
	uint32_t magic;
	uint8_t type;
	uint8_t pad[3];
	uint32_t page;
	uint32_t pad2;
	uint64_t value;
};

struct peer {
	bool connected, requested, done;
	uint32_t conn, listener;
	struct bm_msg *rbuf;	/* RECV_SLOTS */
	struct bm_msg *sbuf;	/* SEND_SLOTS */
	unsigned int next_send, sends;
	/*
	 * Messages for which no send slot was free, in order: never wait for
	 * one inside a handler (that would handle newer messages first and
	 * break the order the protocol relies on).
	 */
	struct bm_msg *outbox;
	unsigned int ohead, on;
};

struct slot {
	bool busy, write;
	unsigned int page;
	uint64_t value, inv;
};

struct hist {
	uint32_t page;
	struct lin_op op;
};

static struct node {
	unsigned int id, nodes, pages, inflight, write_pct;
	unsigned long ops, completed;
	int fd;
	bool lie;		/* -L: acknowledge invalidations, keep the copy */
	struct peer peer[COH_NODES_MAX];
	struct coh_home *home;		/* [pages]: where home == id */
	struct coh_cache *cache;	/* [pages]: elsewhere */
	struct slot slot[SLOTS_MAX];
	struct hist *hist;
	size_t nhist, hcap;
	uint64_t next_value;
	unsigned int seed;
	unsigned long sent, received, lies, events;
} n;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static unsigned int home_of(unsigned int page)
{
	return page % n.nodes;
}

static int post(uint32_t conn, uint8_t op, void *buf, size_t len, uint64_t id)
{
	struct mrrc_wr w = { .wr_id = id, .conn = conn, .opcode = op,
			     .addr = (uintptr_t)buf, .len = len };

	return mrrc_post(n.fd, &w, 1, NULL);
}

static uint64_t wr_id(unsigned int peer, unsigned int kind, unsigned int slot)
{
	return (uint64_t)peer << 32 | kind << 16 | slot;
}

static int handle_cqe(const struct mrrc_cqe *e);

/* Handles what completed, or waits up to @timeout_ms for something to. */
static int progress(int timeout_ms)
{
	struct mrrc_cqe cq[32];
	int i, k, r;

	k = mrrc_poll_cq(n.fd, cq, 32);
	if (k < 0)
		return k;
	if (!k) {
		r = mrrc_wait(n.fd, timeout_ms);
		return r < 0 ? r : 0;
	}
	for (i = 0; i < k; i++) {
		r = handle_cqe(&cq[i]);
		if (r)
			return r;
	}
	return 0;
}

/* Into the next send slot of node @to's connection (one is free). */
static int post_send(unsigned int to, const struct bm_msg *msg)
{
	struct peer *p = &n.peer[to];
	unsigned int s = p->next_send;
	int r;

	p->next_send = (s + 1) % SEND_SLOTS;
	p->sbuf[s] = *msg;
	r = post(p->conn, MRRC_OP_SEND, &p->sbuf[s], sizeof(*msg),
		 wr_id(to, WR_SEND, s));
	if (!r) {
		p->sends++;
		n.sent++;
	}
	return r;
}

static int send_msg(unsigned int to, uint8_t type, uint32_t page, uint64_t value)
{
	const struct bm_msg m = { .magic = BM_MAGIC, .type = type, .page = page,
				  .value = value };
	struct peer *p = &n.peer[to];

	if (to >= n.nodes || to == n.id || !p->connected)
		return -EPROTO;
	if (p->sends < SEND_SLOTS && !p->on)
		return post_send(to, &m);
	if (p->on == OUTBOX_MAX)
		return -ENOBUFS;	/* the peer takes nothing: give up */
	p->outbox[(p->ohead + p->on++) % OUTBOX_MAX] = m;
	return 0;
}

/* A send slot of node @to's connection is free: the oldest waiting message. */
static int drain_outbox(unsigned int to)
{
	struct peer *p = &n.peer[to];
	int r = 0;

	while (!r && p->on && p->sends < SEND_SLOTS) {
		r = post_send(to, &p->outbox[p->ohead]);
		p->ohead = (p->ohead + 1) % OUTBOX_MAX;
		p->on--;
	}
	return r;
}

static void record(struct slot *sl, uint64_t value)
{
	uint64_t t;

	if (n.nhist == n.hcap) {
		struct hist *h;

		n.hcap = n.hcap ? n.hcap * 2 : 4096;
		h = realloc(n.hist, n.hcap * sizeof(*h));
		if (!h) {
			fprintf(stderr, PROG ": node %u: out of memory\n", n.id);
			exit(1);
		}
		n.hist = h;
	}
	t = now_ns();
	/* a hit may take less than the clock's tick: it did end after it began */
	n.hist[n.nhist++] = (struct hist){ .page = sl->page, .op = {
		.write = sl->write, .value = sl->write ? sl->value : value,
		.inv = sl->inv, .res = t > sl->inv ? t : sl->inv + 1 } };
	sl->busy = false;
	n.completed++;
}

/* The slot waiting for this answer (a write: by its value). */
static int complete(unsigned int page, bool write, uint64_t value)
{
	unsigned int i;

	for (i = 0; i < n.inflight; i++) {
		struct slot *sl = &n.slot[i];

		if (sl->busy && sl->page == page && sl->write == write &&
		    (!write || sl->value == value)) {
			record(sl, value);
			return 0;
		}
	}
	return -EPROTO;	/* nobody asked */
}

/* Sends what a protocol step asked for; completes our own local write. */
static int emit(unsigned int page, const struct coh_out *out)
{
	unsigned int i;
	int r;

	for (i = 0; i < out->n; i++) {
		const struct coh_msg *m = &out->msg[i];

		if (m->to == n.id)	/* the home's own write is applied */
			r = m->type == COH_M_WRITTEN ?
			    complete(page, true, m->value) : -EPROTO;
		else
			r = send_msg(m->to, m->type, page, m->value);
		if (r)
			return r;
	}
	return 0;
}

static int on_msg(unsigned int from, const struct bm_msg *m)
{
	struct coh_out out = { 0 };
	uint64_t v;
	int r;

	n.received++;
	if (m->magic != BM_MAGIC || m->type >= BM_TYPES)
		return -EPROTO;
	if (m->type == BM_DONE) {
		n.peer[from].done = true;
		return 0;
	}
	if (m->page >= n.pages)
		return -EPROTO;
	if (home_of(m->page) == n.id) {
		struct coh_home *h = &n.home[m->page];

		if (m->type == COH_M_READ)
			r = coh_home_read(h, from, &v, &out);
		else if (m->type == COH_M_WRITE)
			r = coh_home_write(h, from, m->value, &out);
		else if (m->type == COH_M_ACK)
			r = coh_home_ack(h, from, &out);
		else
			r = -EPROTO;
	} else {
		struct coh_cache *c = &n.cache[m->page];
		const struct coh_cache keep = *c;
		const struct coh_msg cm = { .type = m->type, .from = from,
					    .to = n.id, .value = m->value };

		r = coh_cache_recv(c, &cm, &v, &out);
		if (r >= 0 && n.lie && m->type == COH_M_INVALIDATE &&
		    keep.state != COH_INVALID) {
			c->state = keep.state;	/* the lie: the copy stays */
			c->value = keep.value;
			n.lies++;
		}
		if (r == 1)
			r = complete(m->page, m->type == COH_M_WRITTEN, v);
	}
	return r < 0 ? r : emit(m->page, &out);
}

/* A connection is up: its buffers, every receive buffer posted. */
static int established(unsigned int i, uint32_t conn)
{
	struct peer *p = &n.peer[i];
	unsigned int s;
	int r = 0;

	if (p->connected || p->conn != conn)
		return -EPROTO;
	p->rbuf = calloc(RECV_SLOTS, sizeof(*p->rbuf));
	p->sbuf = calloc(SEND_SLOTS, sizeof(*p->sbuf));
	p->outbox = calloc(OUTBOX_MAX, sizeof(*p->outbox));
	if (!p->rbuf || !p->sbuf || !p->outbox)
		return -ENOMEM;
	p->connected = true;
	for (s = 0; !r && s < RECV_SLOTS; s++)
		r = post(conn, MRRC_OP_RECV, &p->rbuf[s], sizeof(p->rbuf[s]),
			 wr_id(i, WR_RECV, s));
	return r;
}

static int handle_cqe(const struct mrrc_cqe *e)
{
	unsigned int peer = e->wr_id >> 32, kind = e->wr_id >> 16 & 0xffff,
		     slot = e->wr_id & 0xffff;
	struct bm_msg m;
	int r;

	n.events++;
	if (e->opcode == MRRC_OP_EVENT) {
		/* wr_id: the user_data of the listener or connection, a node */
		unsigned int i = e->wr_id;

		if (e->wr_id >= n.nodes || i == n.id)
			return -EPROTO;
		if (e->event == MRRC_EVENT_CONNECT_REQUEST) {
			/* node i's own listener: one connection, node i's */
			if (i < n.id || n.peer[i].requested) {
				mrrc_reject(n.fd, e->conn);
				mrrc_destroy(n.fd, e->conn);
				return 0;
			}
			n.peer[i].requested = true;
			n.peer[i].conn = e->conn;
			return mrrc_accept(n.fd, e->conn, i);
		}
		if (e->conn != n.peer[i].conn)	/* one we turned away */
			return 0;
		switch (e->event) {
		case MRRC_EVENT_ESTABLISHED:
			return established(i, e->conn);
		case MRRC_EVENT_DISCONNECTED:
			/* the end, once it said it was done; an error before */
			if (n.peer[i].done)
				return 0;
			/* fallthrough */
		default:
			fprintf(stderr, PROG ": node %u: node %u's connection: event %u (%s)\n",
				n.id, i, e->event, strerror(-e->status));
			return e->status ? e->status : -ECONNRESET;
		}
	}
	if (peer >= n.nodes || peer == n.id || n.peer[peer].conn != e->conn)
		return -EPROTO;
	if (e->status) {
		/* what a node that is done flushed by leaving */
		if (n.peer[peer].done) {
			if (kind == WR_SEND && n.peer[peer].sends)
				n.peer[peer].sends--;
			return 0;
		}
		fprintf(stderr, PROG ": node %u: node %u's connection: %s\n", n.id,
			peer, strerror(-e->status));
		return e->status;
	}
	if (kind == WR_SEND) {
		if (!n.peer[peer].sends)
			return -EPROTO;
		n.peer[peer].sends--;
		return drain_outbox(peer);
	}
	if (kind != WR_RECV || slot >= RECV_SLOTS ||
	    e->byte_len != sizeof(struct bm_msg))
		return -EPROTO;
	m = n.peer[peer].rbuf[slot];
	r = post(e->conn, MRRC_OP_RECV, &n.peer[peer].rbuf[slot], sizeof(m),
		 wr_id(peer, WR_RECV, slot));
	return r ?: on_msg(peer, &m);
}

/* A new read or write on a free slot; -EBUSY if none could start. */
static int start_op(void)
{
	unsigned int i, p = rand_r(&n.seed) % n.pages;
	bool write = (unsigned int)(rand_r(&n.seed) % 100) < n.write_pct;
	struct coh_out out = { 0 };
	struct slot *sl;
	uint64_t v = 0;
	int r;

	for (i = 0; i < n.inflight && n.slot[i].busy; i++)
		;
	if (i == n.inflight)
		return -EBUSY;
	sl = &n.slot[i];
	/* unique over the cluster, never the initial 0 */
	if (write)
		v = (uint64_t)(n.id + 1) << 40 | ++n.next_value;
	*sl = (struct slot){ .busy = true, .write = write, .page = p, .value = v,
			     .inv = now_ns() };
	if (home_of(p) == n.id)
		r = write ? coh_home_write(&n.home[p], n.id, v, &out) :
			    coh_home_read(&n.home[p], n.id, &v, &out);
	else
		r = write ? coh_cache_write(&n.cache[p], v, &out) :
			    coh_cache_read(&n.cache[p], &v, &out);
	if (r < 0) {
		sl->busy = false;
		return r;
	}
	if (r == 1)
		record(sl, v);
	return emit(p, &out);
}

static bool all(bool (*pred)(const struct peer *))
{
	unsigned int i;

	for (i = 0; i < n.nodes; i++)
		if (i != n.id && !pred(&n.peer[i]))
			return false;
	return true;
}

static bool is_connected(const struct peer *p)
{
	return p->connected;
}

static bool is_done(const struct peer *p)
{
	return p->done;
}

static bool is_quiet(const struct peer *p)
{
	return !p->sends && !p->on;
}

static int addr_of(const char *list, unsigned int i, struct sockaddr_in *sin)
{
	char buf[256], *t, *save = NULL;
	unsigned int k = 0;

	snprintf(buf, sizeof(buf), "%s", list);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save), k++)
		if (k == i || !strchr(list, ','))
			return inet_pton(AF_INET, t, &sin->sin_addr) == 1 ? 0 : -EINVAL;
	return -EINVAL;
}

static int write_history(const char *path)
{
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f)
		return -errno;
	fprintf(f, "# bm-history 1 node %u nodes %u pages %u ops %zu inflight %u write_pct %u\n",
		n.id, n.nodes, n.pages, n.nhist, n.inflight, n.write_pct);
	for (i = 0; i < n.nhist; i++)
		fprintf(f, "%u %d %llu %llu %llu\n", n.hist[i].page,
			n.hist[i].op.write, (unsigned long long)n.hist[i].op.value,
			(unsigned long long)n.hist[i].op.inv,
			(unsigned long long)n.hist[i].op.res);
	return fclose(f) ? -errno : 0;
}

static int cmd_node(int argc, char **argv)
{
	const char *addr = NULL, *peers = NULL, *dev = NULL, *out = NULL;
	unsigned int port = 7900, i;
	uint64_t last_change = now_ns(), last_count = 0, t0, t1;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	bool sent_done = false;
	int opt, r = 0;

	n = (struct node){ .nodes = 3, .pages = 8, .inflight = 4, .write_pct = 50,
			   .ops = 10000, .seed = 1 };
	while ((opt = getopt(argc, argv, "i:n:a:A:p:P:k:o:w:s:H:d:L")) != -1) {
		switch (opt) {
		case 'i': n.id = bench_opt_u64(PROG, "-i", optarg, 0, COH_NODES_MAX - 1); break;
		case 'n': n.nodes = bench_opt_u64(PROG, "-n", optarg, 2, COH_NODES_MAX); break;
		case 'a': addr = optarg; break;
		case 'A': peers = optarg; break;
		case 'p': port = bench_opt_u64(PROG, "-p", optarg, 1, 65535 - COH_NODES_MAX * COH_NODES_MAX); break;
		case 'P': n.pages = bench_opt_u64(PROG, "-P", optarg, 1, PAGES_MAX); break;
		case 'k': n.inflight = bench_opt_u64(PROG, "-k", optarg, 1, SLOTS_MAX); break;
		case 'o': n.ops = bench_opt_u64(PROG, "-o", optarg, 0, 1ull << 32); break;
		case 'w': n.write_pct = bench_opt_u64(PROG, "-w", optarg, 0, 100); break;
		case 's': n.seed = bench_opt_u64(PROG, "-s", optarg, 0, UINT32_MAX); break;
		case 'H': out = optarg; break;
		case 'd': dev = optarg; break;
		case 'L': n.lie = true; break;
		default: return 2;
		}
	}
	if (!addr || optind != argc || n.id >= n.nodes) {
		fprintf(stderr, "usage: " PROG " node -i ID -n NODES -a ADDR [-A ADDR,...] [-p PORT]\n"
			"  [-P PAGES] [-k INFLIGHT] [-o OPS] [-w WRITE_PCT] [-s SEED] [-H FILE] [-d DEV] [-L]\n");
		return 2;
	}
	n.seed ^= n.id * 2654435761u;
	n.home = calloc(n.pages, sizeof(*n.home));
	n.cache = calloc(n.pages, sizeof(*n.cache));
	if (!n.home || !n.cache)
		return 1;
	for (i = 0; i < n.pages; i++) {
		coh_home_init(&n.home[i], n.id, n.nodes, 0);
		coh_cache_init(&n.cache[i], n.id, home_of(i));
	}
	n.fd = mrrc_open(0);
	if (n.fd < 0) {
		fprintf(stderr, PROG ": /dev/mrrc: %s\n", strerror(-n.fd));
		return 1;
	}
	r = mrrc_bind(n.fd, bench_device(dev), NULL);
	/* a listener for each node above us, on a port of its own */
	for (i = n.id + 1; !r && i < n.nodes; i++) {
		r = addr_of(addr, 0, &sin);
		sin.sin_port = htons(port + n.id * COH_NODES_MAX + i);
		r = r ?: mrrc_listen(n.fd, (struct sockaddr *)&sin, 1, i,
				     &n.peer[i].listener);
	}
	if (r) {
		fprintf(stderr, PROG ": node %u: listening: %s\n", n.id, strerror(-r));
		return 1;
	}
	fprintf(stderr, PROG ": node %u of %u: listening\n", n.id, n.nodes);
	/* and a connection to each node below */
	for (i = 0; !r && i < n.id; i++) {
		r = addr_of(peers ? peers : addr, i, &sin);
		sin.sin_port = htons(port + i * COH_NODES_MAX + n.id);
		r = r ?: mrrc_connect(n.fd, (struct sockaddr *)&sin, NULL, 10000, i,
				      &n.peer[i].conn);
		n.peer[i].requested = true;
	}
	for (t0 = now_ns(); !r && !all(is_connected);) {
		r = progress(100);
		if (!r && now_ns() - t0 > 30000000000ull)
			r = -ETIMEDOUT;
	}
	if (r) {
		fprintf(stderr, PROG ": node %u: connecting: %s\n", n.id, strerror(-r));
		return 1;
	}
	/* nobody else may connect */
	for (i = n.id + 1; i < n.nodes; i++)
		mrrc_destroy(n.fd, n.peer[i].listener);
	fprintf(stderr, PROG ": node %u: connected to %u nodes\n", n.id, n.nodes - 1);
	t0 = now_ns();
	/* the workload, then serving the others until they are done too */
	while (!r && !(sent_done && all(is_done))) {
		for (;;) {	/* start what may start */
			unsigned long busy = 0;

			for (i = 0; i < n.inflight; i++)
				busy += n.slot[i].busy;
			if (n.completed + busy >= n.ops)
				break;
			r = start_op();
			if (r) {
				r = r == -EBUSY ? 0 : r;
				break;
			}
		}
		if (!r && !sent_done && n.completed >= n.ops) {
			for (i = 0; !r && i < n.nodes; i++)
				if (i != n.id)
					r = send_msg(i, BM_DONE, 0, 0);
			sent_done = true;
		}
		r = r ?: progress(100);
		if (n.events != last_count) {
			last_count = n.events;
			last_change = now_ns();
		} else if (now_ns() - last_change > IDLE_LIMIT_NS) {
			r = -ETIMEDOUT;
		}
	}
	/* our last messages (DONE among them) delivered before we go */
	for (t1 = now_ns(); !r && !all(is_quiet);) {
		r = progress(100);
		if (!r && now_ns() - t1 > IDLE_LIMIT_NS)
			r = -ETIMEDOUT;
	}
	if (r) {
		fprintf(stderr, PROG ": node %u: %s after %lu operations\n", n.id,
			strerror(-r), n.completed);
		return 1;
	}
	fprintf(stderr, PROG ": node %u: %lu operations in %.2f s, %lu messages sent, %lu received%s\n",
		n.id, n.completed, (now_ns() - t0) / 1e9, n.sent, n.received,
		n.lie ? " (lying)" : "");
	if (out) {
		r = write_history(out);
		if (r) {
			fprintf(stderr, PROG ": %s: %s\n", out, strerror(-r));
			return 1;
		}
	}
	mrrc_close(n.fd);
	for (i = 0; i < n.nodes; i++) {
		free(n.peer[i].rbuf);
		free(n.peer[i].sbuf);
		free(n.peer[i].outbox);
	}
	free(n.home);
	free(n.cache);
	free(n.hist);
	return 0;
}

/* ---- bm check ------------------------------------------------------------- */

static int cmd_check(int argc, char **argv)
{
	unsigned int pages = 0, nodes = 0, node, nn, np, page, files = 0, i;
	struct lin_op **ops = NULL;
	size_t *nops = NULL, *cap = NULL, total = 0, cnt;
	unsigned long bad = 0;
	unsigned long long v, a, b;
	char line[256], why[256];
	int w, r = 0, k;

	bench_init(PROG, NULL);
	for (k = 1; k < argc; k++) {
		FILE *f = fopen(argv[k], "r");

		if (!f || !fgets(line, sizeof(line), f) ||
		    sscanf(line, "# bm-history 1 node %u nodes %u pages %u ops %zu",
			   &node, &nn, &np, &cnt) != 4 || !np || np > PAGES_MAX ||
		    (pages && (np != pages || nn != nodes))) {
			fprintf(stderr, PROG ": %s: not a history of this cluster\n", argv[k]);
			return 2;
		}
		if (!pages) {
			pages = np;
			nodes = nn;
			ops = calloc(pages, sizeof(*ops));
			nops = calloc(pages, sizeof(*nops));
			cap = calloc(pages, sizeof(*cap));
			if (!ops || !nops || !cap)
				return 1;
		}
		files++;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%u %d %llu %llu %llu", &page, &w, &v, &a, &b) != 5 ||
			    page >= pages || (w != 0 && w != 1)) {
				fprintf(stderr, PROG ": %s: a bad line\n", argv[k]);
				return 2;
			}
			if (nops[page] == cap[page]) {
				cap[page] = cap[page] ? cap[page] * 2 : 4096;
				ops[page] = realloc(ops[page], cap[page] * sizeof(**ops));
				if (!ops[page])
					return 1;
			}
			ops[page][nops[page]++] = (struct lin_op){ .write = w, .value = v,
								  .inv = a, .res = b };
			total++;
		}
		fclose(f);
	}
	if (!files) {
		fprintf(stderr, "usage: " PROG " check HISTORY...\n");
		return 2;
	}
	for (i = 0; i < pages; i++) {
		why[0] = '\0';
		k = lin_check(ops[i], nops[i], 0, why, sizeof(why));
		if (k < 0) {
			fprintf(stderr, PROG ": page %u: a malformed history (%s)\n", i,
				strerror(-k));
			r = 2;
		} else if (k) {
			fprintf(stderr, PROG ": page %u: not linearizable: %s\n", i, why);
			bad++;
		}
		free(ops[i]);
	}
	printf("{\"bench\":\"bm\",\"metric\":\"linearizability_ops\",\"value\":%zu,\"unit\":\"ops\",\"nodes\":%u,\"pages\":%u,\"histories\":%u",
	       total, nodes, pages, files);
	bench_json_end(stdout);
	printf("{\"bench\":\"bm\",\"metric\":\"linearizability_violations\",\"value\":%lu,\"unit\":\"pages\",\"nodes\":%u,\"pages\":%u,\"histories\":%u",
	       bad, nodes, pages, files);
	bench_json_end(stdout);
	free(ops);
	free(nops);
	free(cap);
	return r ? r : bad ? 1 : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * bm lat HISTORY...: how long the operations of the histories took, by
 * kind (read, write) and by where the page's home was (local: the node
 * that ran the operation, remote: another), as the paper's §6.1 reports
 * Read and Write: metrics op_mean_us, op_p50_us, op_p99_us and op_count.
 */
static int cmd_lat(int argc, char **argv)
{
	struct { uint64_t *v; size_t n, cap; } g[2][2] = { 0 };
	unsigned int node, nn, np, page, files = 0, w, l;
	unsigned int inflight = 0, wpct = 0, kk, ww;
	unsigned long long v, a, b;
	char line[256];
	size_t cnt;
	int k, r = 0;

	bench_init(PROG, NULL);
	for (k = 1; k < argc && !r; k++) {
		FILE *f = fopen(argv[k], "r");

		if (!f || !fgets(line, sizeof(line), f) ||
		    sscanf(line, "# bm-history 1 node %u nodes %u pages %u ops %zu",
			   &node, &nn, &np, &cnt) != 4 || !nn || node >= nn ||
		    !np || np > PAGES_MAX) {
			fprintf(stderr, PROG ": %s: not a history\n", argv[k]);
			if (f)
				fclose(f);
			r = 2;
			break;
		}
		/* what the nodes ran with, if the history says (the first's) */
		if (sscanf(line, "# bm-history 1 node %*u nodes %*u pages %*u ops %*u inflight %u write_pct %u",
			   &kk, &ww) == 2 && !files) {
			inflight = kk;
			wpct = ww;
		}
		files++;
		while (fgets(line, sizeof(line), f)) {
			void *nv;

			if (sscanf(line, "%u %u %llu %llu %llu", &page, &w, &v, &a, &b) != 5 ||
			    page >= np || w > 1 || b < a) {
				fprintf(stderr, PROG ": %s: a bad line\n", argv[k]);
				r = 2;
				break;
			}
			l = page % nn == node;
			if (g[w][l].n == g[w][l].cap) {
				g[w][l].cap = g[w][l].cap ? 2 * g[w][l].cap : 4096;
				nv = realloc(g[w][l].v, g[w][l].cap * sizeof(uint64_t));
				if (!nv) {
					r = 1;
					break;
				}
				g[w][l].v = nv;
			}
			g[w][l].v[g[w][l].n++] = b - a;
		}
		fclose(f);
	}
	if (!r && !files) {
		fprintf(stderr, "usage: " PROG " lat HISTORY...\n");
		r = 2;
	}
	for (w = 0; w < 2; w++) {
		for (l = 0; l < 2; l++) {
			static const char *const metric[] = {
				"op_count", "op_mean_us", "op_p50_us", "op_p99_us" };
			uint64_t *x = g[w][l].v, sum = 0;
			size_t nx = g[w][l].n, i, m;
			double val;

			if (r || !nx)
				goto next;
			qsort(x, nx, sizeof(*x), cmp_u64);
			for (i = 0; i < nx; i++)
				sum += x[i];
			for (m = 0; m < 4; m++) {
				val = m == 0 ? (double)nx :
				      m == 1 ? (double)sum / (double)nx / 1e3 :
				      m == 2 ? (double)x[(nx + 1) / 2 - 1] / 1e3 :
				      (double)x[(nx * 99 + 99) / 100 - 1] / 1e3;
				printf("{\"bench\":\"bm\",\"metric\":\"%s\",\"value\":%.6g,"
				       "\"unit\":\"%s\",\"op\":\"%s\",\"where\":\"%s\","
				       "\"nodes\":%u,\"pages\":%u,\"histories\":%u,\"inflight\":%u,"
				       "\"write_pct\":%u", metric[m], val, m ? "us" : "ops",
				       w ? "write" : "read", l ? "local" : "remote", nn, np, files,
				       inflight, wpct);
				bench_json_end(stdout);
			}
next:
			free(x);
		}
	}
	return r;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "node"))
		return cmd_node(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return cmd_check(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "lat"))
		return cmd_lat(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "fix"))
		return cmd_fix(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "-V")) {
		printf(PROG " %s\n", MRRC_VERSION_STRING);
		return 0;
	}
	fprintf(stderr, "usage: " PROG " node -i ID -n NODES -a ADDR ... | " PROG " check HISTORY...\n"
		"       " PROG " lat HISTORY... | " PROG " fix -t file|remote -f FILE ...\n");
	return 2;
}
