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
 *	times in CLOCK_MONOTONIC ns) to -H FILE.  With -K KEYS instead: the
 *	global memory's Malloc and Free (galloc.c) and the paper's hash
 *	table on it, this node the access node of KEYS keys.  With -x, a
 *	shared lock around every read and an exclusive one around every
 *	write, at lock node -l (lock.c; -Y: the lock node's words taken
 *	with RDMA atomics, no message); -C, every operation an increment.
 *	The buffer manager's levels: -f, a node's frames for copies; -M,
 *	a home's frames for its own pages, the rest in its file, in -D DIR
 *	or at a file server (bm fserve), -F ADDR[:PORT] (-m: one-sided).
 *   bm check FILE...
 *	merges the histories (of processes on one machine: one clock) and
 *	checks every page's with lin_check(): JSON lines with
 *	linearizability_ops and linearizability_violations, and its lock
 *	holds for mutual exclusion; exit 1 if a page is not linearizable or
 *	its locks were not exclusive.
 *   bm lat FILE...
 *	how long the histories' operations took, by kind and by where the
 *	page's home was (local or remote).
 *   bm fix -t file|remote -f FILE ... | bm fix -t rfile -R ADDR ...
 *	the frame pool under a database's load (fixbench.c).
 *   bm fserve -a ADDR -f FILE -s BYTES, bm fprobe -R ADDR
 *	a file for other nodes (FReadF/FPrintF, rfile.c), and what a
 *	hostile client sends one.
 *
 * Node j listens for node i > j on its own port, PORT + j * 32 + i, so
 * every connection's events name their peer (the listener's and the
 * connection's user_data); one connection per listener.  Messages are
 * 24-byte SENDs (struct bm_msg), a WRITE and a DATA followed by the page's
 * body with -B (pages of more than the 8-byte value, whose every read is
 * checked against its value); the sender of a message is the node its
 * connection was set up with, never what the message says.  A malformed
 * message, or one the protocol refuses, ends the run with an error: a
 * node does not guess.  The nodes trust each other's identity (a private
 * network, as the cluster's); they do not trust the bytes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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
#include "galloc.h"
#include "lock.h"
#include "pool.h"
#include "rfile.h"
#include "lin.h"
#include "benchjson.h"

#define PROG		"bm"
#define BM_MAGIC	0x626d3031u	/* "bm01" */
#define PAGES_MAX	4096u
#define SLOTS_MAX	64u
#define RECV_SLOTS	64u
#define SEND_SLOTS	256u
#define OUTBOX_MAX	65536u	/* messages waiting for a send slot */
#define OUTBOX_BYTES	(16u << 20)	/* and their bytes, with -B */
#define PAGE_BYTES_MAX	4096u	/* -B */
/*
 * A RECV takes the largest message of any -B, so that a peer of another
 * page size is refused by its length (EPROTO), not taken for dead.
 */
#define RECV_LEN	(sizeof(struct bm_msg) + PAGE_BYTES_MAX - 8)
#define WR_RECV		1u
#define WR_SEND		2u
#define WR_READ		3u
#define WR_ATOM		4u	/* -Y: a lock asked for */
#define WR_UNDO		5u	/* -Y: a shared one taken back */
#define WR_REL		6u	/* -Y: a lock given back */
#define WR_WAIT		7u	/* -Y: a writer says it waits */
#define WR_PROBE	8u	/* -Y: a reader looks */
#define READ_AGAIN_MAX	1000u	/* torn READs of one read: a home that lies */
#define IDLE_LIMIT_NS	60000000000ull	/* no progress this long: give up */

/*
 * Beside the protocol's messages: DONE; and the global memory's
 * allocation (-K): ALLOC asks a node for a page it is home to, ALLOCATED
 * answers (page, or UINT32_MAX and ENOMEM), FREE gives one back, FREED
 * answers; their value carries the asking slot and, back, an errno.
 * The locks (-x): LOCK asks the lock node for a page's lock (value 1:
 * exclusive, 0: shared), GRANTED gives it (the same value), UNLOCK gives
 * it back; a node has at most one of a page's at a time (lock.h).
 * The clocks (-T): SYNC asks node 0 for its clock (page: a sequence
 * number), SYNCED answers with it (value) and the same number.
 * One-sided reads (-R): EXPORT tells a node where this one's table of
 * published pages is (value: address, page: key, len: its length).
 * One-sided locks (-Y): LOCKTAB, from the lock node, where its lock
 * words are (the same fields).
 */
enum { BM_DONE = COH_M_TYPES, BM_ALLOC, BM_ALLOCATED, BM_FREE, BM_FREED,
       BM_LOCK, BM_GRANTED, BM_UNLOCK, BM_SYNC, BM_SYNCED, BM_EXPORT, BM_LOCKTAB,
       BM_TYPES };

/* What a slot is doing: a random operation, or a step of a table's one. */
enum { S_RW, S_ALLOC, S_WRITE, S_READ, S_TOMB, S_FREE };
/* The hash table's phases (-K), each over every key. */
enum { P_INSERT, P_LOOKUP, P_UPDATE, P_LOOKUP2, P_ERASE, P_END };
static const char *const phase_name[] = {
	"insert", "lookup", "update", "lookup_again", "erase" };
/*
 * Kinds of operation in a history: a read, a write, a Malloc, a Free; a
 * lock held (shared or exclusive: from its grant to its release, with
 * the time it was asked for as the value); a read done as an RDMA READ
 * of the home's table (-R).
 */
enum { K_READ, K_WRITE, K_MALLOC, K_FREE, K_SHARED, K_EXCL, K_READ_1S, K_KINDS };
static const char *const kind_name[] = { "read", "write", "malloc", "free",
	"shared_lock", "exclusive_lock", "one_sided_read" };
/* A slot's lock (-x): none, waiting behind another slot of ours, asked, held. */
enum { LK_NONE, LK_WANT, LK_ASKED, LK_HELD };
/* A random operation's stages with -x or -C: its lock, its go, under way. */
enum { RW_OP, RW_LOCK, RW_GO };

struct bm_msg {
	uint32_t magic;
	uint8_t type;
	uint8_t pad[3];
	uint32_t page;
	uint32_t len;		/* EXPORT only; 0 otherwise */
	uint64_t value;
};

/*
 * -R: a page as its home publishes it for one-sided reads, in a table
 * exported for remote READ: its value (the home's, always the last
 * committed one: writes go through to the home) and a check word that
 * depends on the value and the page, so that a READ that raced the
 * home's update of either word, or landed on another page, is seen.
 */
struct bm_pub {
	uint64_t value;
	uint64_t check;
};

struct peer {
	bool connected, requested, done;
	bool exported;		/* -R: its table's place is known */
	uint64_t pub_addr;
	uint32_t pub_rkey;
	bool lkw_known;		/* -Y: the lock node's words' place is known */
	uint64_t lkw_addr;
	uint32_t lkw_rkey;
	bool dead;		/* gone before it said it was done */
	uint32_t conn, listener;
	/* messages of n.msg_len bytes each: a header and room for a body */
	uint8_t *rbuf;		/* RECV_SLOTS */
	uint8_t *sbuf;		/* SEND_SLOTS */
	unsigned int next_send, sends;
	/*
	 * Messages for which no send slot was free, in order: never wait for
	 * one inside a handler (that would handle newer messages first and
	 * break the order the protocol relies on).
	 */
	uint8_t *outbox;	/* n.outbox_max */
	unsigned int ohead, on;
};

struct slot {
	bool busy, write;
	unsigned int page;
	uint64_t value, inv;
	/* -K: the step of the table's operation; its key; since when */
	unsigned int step, key, peer, tries;
	uint64_t op_inv;
	bool ready;		/* the step is over: the next one may go */
	bool rdma;		/* -R: its READ of the home's table is posted */
	unsigned int rereads;	/* -R: of this read, found torn */
	uint64_t got;		/* what it read */
	/* -x, -C: the lock, how it is wanted, since when; the stage */
	unsigned int lk, stage;
	bool excl, doomed;	/* doomed: the page's home died while it asked */
	uint64_t ticket, ask_ns, hold_ns;
	/* -Y: a writer counted among the waiting; the lock word last seen */
	bool lk_queued;
	uint64_t lk_seen;
};

/*
 * The hash table's index at its access node (§4 of the paper): a fixed
 * number of buckets, each a chain of entries; an entry is a key and the
 * global address (page) of its value.  Entry i is key i's.
 */
struct dht_entry {
	uint64_t key, value;	/* the value: what the last write wrote */
	unsigned int page;
	int next;		/* in the bucket's chain; -1 ends */
	bool in;		/* in the table */
};

/*
 * Where node 0's clock was, seen from this node's: at local time @at, node
 * 0's read @at + @offset, give or take @err (half the shortest of
 * CLOCK_ROUNDS round trips: Cristian's method).  0 everywhere at node 0.
 */
struct clock_fix {
	uint64_t at, err;
	int64_t offset;
};

#define CLOCK_ROUNDS	16u
#define CLOCK_ERR_MAX_NS	10000000000ull	/* a round trip of 20 s: none */
/* the most two clocks may drift apart, in parts per million */
#define CLOCK_DRIFT_PPM	1000u

struct hist {
	uint32_t page;
	unsigned int kind;	/* K_* */
	struct lin_op op;
};

static struct node {
	unsigned int id, nodes, pages, inflight, write_pct;
	unsigned long ops, completed;
	int fd;
	bool lie;		/* -L: acknowledge invalidations, keep the copy */
	unsigned int forge;	/* -X: one forged message to node 0 (tests) */
	unsigned long die_at;	/* -Z: die after this many operations */
	/*
	 * -x: every read under the page's shared lock and every write under
	 * its exclusive one, at lock node -l; -C: every operation an
	 * increment (a read, then a write of one more), under the exclusive
	 * lock with -x.  At the lock node, its table; at every node, which
	 * pages a slot of ours has asked for or holds.
	 */
	bool locking, counter;
	unsigned int lock_node;
	struct lock_entry *locks;	/* [pages], at the lock node */
	bool *lk_page;			/* [pages] */
	uint64_t tickets;
	unsigned long locks_of_dead;	/* released by a node's death */
	unsigned long locks_taken;
	unsigned long lost;		/* messages to a connection already closed */
	bool sent_done;		/* our DONE is sent (or queued) */
	unsigned long abandoned;	/* operations a dead home never answers */
	struct peer peer[COH_NODES_MAX];
	struct coh_home *home;		/* [pages]: where home == id */
	struct coh_cache *cache;	/* [pages]: elsewhere */
	struct slot slot[SLOTS_MAX];
	/* -K: the hash table (§4): its keys' pages and values, the memory */
	bool dht;
	unsigned int keys, phase, next_key, keys_done, local_keys;
	bool *held;			/* [pages]: Malloc'd here, not yet freed */
	unsigned int hint;		/* the node that lent the last page */
	unsigned long lent, refused;	/* pages lent to others, refused them */
	struct dht_entry *ent;		/* [keys] */
	int *bucket;			/* [nbuckets] */
	unsigned int nbuckets;
	uint64_t phase_ns[P_END];
	struct galloc ga;
	struct hist *hist;
	size_t nhist, hcap;
	uint64_t next_value;
	unsigned int seed;
	unsigned long sent, received, lies, events;
	/*
	 * -T: the nodes' clocks are apart (separate machines): node 0's is
	 * the cluster's, and the others measure how far theirs is from it
	 * before and after the workload (struct clock_fix, in the history).
	 */
	bool clocks;
	struct clock_fix fix[2];
	/*
	 * -R: reads of pages homed elsewhere with no copy here are RDMA
	 * READs of the home's table (pub, exported to every peer), each
	 * slot's into rd[]; -S (tests): the home never updates its table.
	 */
	bool onesided, stale;
	uint8_t *pub;			/* [pages][pub_stride] */
	size_t pub_len, pub_stride;
	uint8_t *rd;			/* [SLOTS_MAX][pub_stride] */
	/*
	 * A READ into rd[i] accepted and its completion not yet polled: the
	 * buffer is the device's, and slot i is not reused, even after its
	 * operation was abandoned to a dead home (whose flush comes later).
	 */
	bool read_out[SLOTS_MAX];
	unsigned long reads_1s, torn;
	/*
	 * -Y: the locks as words at the lock node (lkw, one per page),
	 * taken and given back with RDMA atomics; what an atomic of slot i
	 * found (atom[i]: the slot is not reused while it is out), where
	 * the releases' old words go, how many atomics are out, how many
	 * tries found the lock taken.
	 */
	bool one_lock;
	uint64_t *lkw;
	size_t lkw_len;
	uint64_t *atom, *atom_sink;
	bool atom_out[SLOTS_MAX];
	unsigned long atoms, lock_refused;
	uint32_t sync_seq;		/* the SYNC awaited */
	bool sync_wait;
	uint64_t sync_got;
	/*
	 * -B: pages of page_bytes bytes (8: the value alone).  The first 8
	 * are the page's value, which the protocol moves; the other
	 * body_len bytes (its body) travel with every WRITE and DATA and
	 * are kept beside the value: body[page] is the committed body at
	 * the home and the copy's elsewhere; a node's write waits at the
	 * home in pend[page][node] until it is applied; a slot's write is
	 * in wbody[slot].  msg_len: a header and a body; outbox_max: how
	 * many wait for a send slot, per peer.  The workload writes a body
	 * that is a function of the page and the value (body_fill()), and
	 * every read checks the body it got against the value it got
	 * (-EIO if they do not match); -X 14 makes a home's DATA lie.
	 */
	unsigned int page_bytes, body_len, msg_len, outbox_max;
	uint8_t *body, *pend, *wbody;
	uint8_t *scratch, *msg, *rbody;	/* a body, a message, a body received */
	bool body_lie;
	unsigned long bodies_checked;
	/*
	 * The buffer manager's levels (§5): -f, at most this many copies of
	 * pages homed elsewhere (the node's frames), chosen by 2Q (a frame
	 * pool, pool.c, as their index: a victim's write-back drops its
	 * copy); -M with -D, at most this many of the pages homed here in
	 * memory (the home's frames, the other nodes' remote frames), the
	 * others in the node's file, DIR/node.ID (each page's value and body
	 * at page * page_bytes), read back when the protocol needs one and
	 * written when its frame is taken.  A page is found in the node's
	 * frames, else in its home's, else in its home's file.  With -F
	 * instead of -D, the file is on another node (bm fserve; FReadF and
	 * FPrintF, rfile.c), one for every home, each page at the same
	 * place; with -m, read and written there with RDMA READs and WRITEs
	 * if the server's file allows (tmpfs), READs alone or through the
	 * server (what it says) if not.
	 */
	unsigned int frames, home_frames;
	struct bm_pool *copies, *homes;
	int file;
	struct rfile *rf;
	uint8_t *iobuf;			/* a page as it is in the file */
	uint64_t *filed;		/* [pages]: the value the file has */
	uint64_t work_ns;		/* how long our own operations took */
	unsigned long copy_hits, home_reads, copies_dropped, copies_invalidated;
	unsigned long home_loads, home_stores;
	/*
	 * -z: the random operations' pages drawn from a Zipf distribution
	 * of this skew, its popular pages scattered by a permutation that
	 * is the same at every node (a database's hot pages are everyone's).
	 */
	double theta;
	struct bm_zipf zipf;
	uint64_t *perm, zseed;
} n;

static unsigned int home_of(unsigned int page)
{
	return page % n.nodes;
}

/* -B: whether a message of @type carries a page's body */
static bool has_body(unsigned int type)
{
	return type == COH_M_WRITE || type == COH_M_DATA;
}

static size_t msg_len_of(unsigned int type)
{
	return sizeof(struct bm_msg) + (has_body(type) ? n.body_len : 0);
}

static uint8_t *body_of(unsigned int page)
{
	return n.body + (size_t)page * n.body_len;
}

/*
 * At the home: node @node's write of @page, until it is applied (pages
 * homed here only: page / nodes tells them apart).
 */
static uint8_t *pend_of(unsigned int page, unsigned int node)
{
	return n.pend + ((size_t)(page / n.nodes) * n.nodes + node) * n.body_len;
}

static uint8_t *wbody_of(const struct slot *sl)
{
	return n.wbody + (size_t)(sl - n.slot) * n.body_len;
}

static uint64_t pub_check(unsigned int page, uint64_t value);

/*
 * -B: the body the workload writes with @value into @page: words that
 * depend on both (pub_check() of the value and the word's place), so a
 * body that went with another value, or another page, or was torn or
 * changed on the way, does not match it.
 */
static void body_fill(uint8_t *b, unsigned int page, uint64_t value)
{
	unsigned int i;
	uint64_t w;

	for (i = 0; i < n.body_len; i += sizeof(w)) {
		w = pub_check(page, value ^ (uint64_t)(i + 8) << 48);
		memcpy(b + i, &w, sizeof(w));
	}
}

/* -B: whether @b is the body the write of @value into @page wrote */
static bool body_ok(const uint8_t *b, unsigned int page, uint64_t value)
{
	if (!n.body_len)
		return true;
	n.bodies_checked++;
	body_fill(n.scratch, page, value);
	return !memcmp(b, n.scratch, n.body_len);
}

/* A read got @value with body @b: 0, or -EIO if they do not belong together. */
static int read_body(const uint8_t *b, unsigned int page, uint64_t value)
{
	if (body_ok(b, page, value))
		return 0;
	fprintf(stderr, PROG ": node %u: page %u: a body that is not value %#llx's\n",
		n.id, page, (unsigned long long)value);
	return -EIO;
}

/* -f: the copy of @page is dropped, its frame needed for another page's */
static int copy_in(void *arg, uint64_t page, void *buf)
{
	(void)arg;
	(void)page;
	(void)buf;
	return 0;	/* the copy came with the protocol's DATA or WRITTEN */
}

/*
 * -f, -M: a body that left its frame, overwritten, so that a path that
 * read it without bringing the page back would fail the body checks.
 */
static void poison(unsigned int page)
{
	memset(body_of(page), 0xa5, n.body_len);
}

static int copy_out(void *arg, uint64_t page, const void *buf)
{
	(void)arg;
	(void)buf;
	if (coh_cache_drop(&n.cache[page]))
		n.copies_dropped++;
	poison(page);
	return 0;
}

/*
 * -M: page @page homed here goes to the file (its value and body, unless
 * the file has that value already), or comes back from it into a frame:
 * what the file has must be its last committed value (a page is written
 * there when its frame is taken) and that value's body, or -EIO.  The
 * file having the value means having the body: every body this
 * workload writes is body_fill() of its page and value (a WRITE whose
 * body is not is refused where it comes in), so a page back at a value
 * it had (-C without -x loses updates) has the same body again.
 */
static int home_io(uint64_t page, bool write)
{
	uint64_t v = n.home[page].value, off = (uint64_t)page * n.page_bytes;
	int r;

	if (write && n.filed[page] == v) {	/* clean */
		poison(page);
		return 0;
	}
	if (write) {
		memcpy(n.iobuf, &v, sizeof(v));
		memcpy(n.iobuf + sizeof(v), body_of(page), n.body_len);
	}
	if (n.rf)
		r = write ? rfile_write(n.rf, off, n.iobuf, n.page_bytes) :
			    rfile_read(n.rf, off, n.iobuf, n.page_bytes);
	else
		r = bm_file_io(n.file, write, off, n.iobuf, n.page_bytes);
	if (r)
		return r;
	if (!write) {
		memcpy(&v, n.iobuf, sizeof(v));
		memcpy(body_of(page), n.iobuf + sizeof(v), n.body_len);
	}
	if (write) {
		n.filed[page] = v;
		n.home_stores++;
		poison(page);
		return 0;
	}
	n.home_loads++;
	if (v != n.home[page].value) {
		fprintf(stderr, PROG ": node %u: page %u: the file has %#llx, not %#llx\n",
			n.id, (unsigned int)page, (unsigned long long)v,
			(unsigned long long)n.home[page].value);
		return -EIO;
	}
	return read_body(body_of(page), page, v);
}

static int home_in(void *arg, uint64_t page, void *buf)
{
	(void)arg;
	(void)buf;
	return home_io(page, false);
}

static int home_out(void *arg, uint64_t page, const void *buf)
{
	(void)arg;
	(void)buf;
	return home_io(page, true);
}

/*
 * -f, -M: @page is used: its frame is the most recent in @pool's 2Q,
 * taken from another page (whose copy is dropped, or which goes to the
 * file) if it had none, and read from the file (-M) if it was there.
 * Every frame counts as dirty, so that a victim is always handed to
 * copy_out() or home_out().
 */
static int frame_use(struct bm_pool *pool, unsigned int page)
{
	void *frame;
	int r;

	if (!pool)
		return 0;
	r = bm_fix(pool, page, true, &frame);
	return r ?: bm_unfix(pool, page, true);
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

/*
 * Into the next send slot of node @to's connection (one is free): the
 * message @msg (n.msg_len bytes: a header and, for a WRITE or a DATA, a
 * body).
 */
static int post_send(unsigned int to, const uint8_t *msg)
{
	struct peer *p = &n.peer[to];
	unsigned int s = p->next_send;
	uint8_t *buf = p->sbuf + (size_t)s * n.msg_len;
	size_t len = msg_len_of(((const struct bm_msg *)msg)->type);
	int r;

	p->next_send = (s + 1) % SEND_SLOTS;
	memcpy(buf, msg, len);
	r = post(p->conn, MRRC_OP_SEND, buf, len, wr_id(to, WR_SEND, s));
	if (!r) {
		p->sends++;
		n.sent++;
	}
	/*
	 * Its connection is already closed, and the event that says so not
	 * yet handled: the message is lost with the node, whose death the
	 * event will bring (peer_failed()).  With -K a death is an error.
	 */
	if (r == -ENOTCONN && !n.dht) {
		n.lost++;
		r = 0;
	}
	return r;
}

/* A message to node @to; a WRITE or a DATA with the body @body. */
static int send_body(unsigned int to, uint8_t type, uint32_t page, uint64_t value,
		     const uint8_t *body)
{
	const struct bm_msg m = { .magic = BM_MAGIC, .type = type, .page = page,
				  .value = value };
	struct peer *p = &n.peer[to];
	uint8_t *buf;

	if (to >= n.nodes || to == n.id || !p->connected || p->dead)
		return -EPROTO;
	if (p->sends < SEND_SLOTS && !p->on)
		buf = n.msg;
	else if (p->on == n.outbox_max)
		return -ENOBUFS;	/* the peer takes nothing: give up */
	else
		buf = p->outbox + (size_t)((p->ohead + p->on++) % n.outbox_max) * n.msg_len;
	memcpy(buf, &m, sizeof(m));
	if (has_body(type) && n.body_len) {
		if (body)
			memcpy(buf + sizeof(m), body, n.body_len);
		else		/* a forgery's (-X 4) */
			memset(buf + sizeof(m), 0, n.body_len);
		if (n.body_lie && type == COH_M_DATA)
			buf[sizeof(m)] ^= 1;	/* -X 14 */
	}
	return buf == n.msg ? post_send(to, buf) : 0;
}

static int send_msg(unsigned int to, uint8_t type, uint32_t page, uint64_t value)
{
	return send_body(to, type, page, value, NULL);
}

/* A send slot of node @to's connection is free: the oldest waiting message. */
static int drain_outbox(unsigned int to)
{
	struct peer *p = &n.peer[to];
	int r = 0;

	while (!r && p->on && p->sends < SEND_SLOTS) {
		r = post_send(to, p->outbox + (size_t)p->ohead * n.msg_len);
		p->ohead = (p->ohead + 1) % n.outbox_max;
		p->on--;
	}
	return r;
}

static void log_op(unsigned int page, unsigned int kind, uint64_t value,
		   uint64_t inv)
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
	t = bm_now_ns();
	/* a hit may take less than the clock's tick: it did end after it began */
	n.hist[n.nhist++] = (struct hist){ .page = page, .kind = kind, .op = {
		.write = kind == K_WRITE, .value = value, .inv = inv,
		.res = t > inv ? t : inv + 1 } };
}

/* The slot's read or write is over (@value: what a read returned). */
static void finish(struct slot *sl, uint64_t value)
{
	log_op(sl->page, sl->write ? K_WRITE : sl->rdma ? K_READ_1S : K_READ,
	       sl->write ? sl->value : value, sl->inv);
	/*
	 * The table's next step (dht_run()), or the lock's release or the
	 * increment's write (advance()): never from inside a handler, whose
	 * messages must go out first.
	 */
	if (n.dht || n.locking || n.counter) {
		sl->ready = true;
		sl->got = value;
		return;
	}
	sl->busy = false;
	n.completed++;
}

static bool in_protocol(const struct slot *sl)
{
	return sl->busy && !sl->ready && !sl->rdma && sl->stage == RW_OP &&
	       (sl->step == S_RW || sl->step == S_WRITE || sl->step == S_READ ||
		sl->step == S_TOMB);
}

/* The slot waiting for an answer about @page (a write: by its value). */
static struct slot *asker(unsigned int page, bool write, uint64_t value)
{
	unsigned int i;

	for (i = 0; i < n.inflight; i++) {
		struct slot *sl = &n.slot[i];

		if (in_protocol(sl) && sl->page == page && sl->write == write &&
		    (!write || sl->value == value))
			return sl;
	}
	return NULL;
}

/*
 * The answer has come: the slot waiting for it is done.  A write of ours
 * to a page homed elsewhere made our copy (-B: its body is the one we
 * wrote).
 */
static int complete(unsigned int page, bool write, uint64_t value)
{
	struct slot *sl = asker(page, write, value);
	const struct coh_cache *c = &n.cache[page];

	if (!sl)
		return -EPROTO;	/* nobody asked */
	if (write && home_of(page) != n.id && c->state != COH_INVALID &&
	    c->value == value) {
		int r = frame_use(n.copies, page);

		if (r)
			return r;
		memcpy(body_of(page), wbody_of(sl), n.body_len);
	}
	finish(sl, value);
	return 0;
}

/*
 * The check word: a bijective mix of the value and the page (splitmix64's
 * finalizer), so that words torn at any bytes, or a READ of another
 * page's entry, match it only by a 2^-64 chance.
 */
static uint64_t pub_check(unsigned int page, uint64_t value)
{
	uint64_t x = value ^ ((uint64_t)page + 1) * 0x9e3779b97f4a7c15ull;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * -R: entry @page of a table (the value, the check word, then the body
 * with -B).  The check word covers the body too: 0 without one.
 */
static struct bm_pub *pub_at(uint8_t *table, unsigned int page)
{
	return (struct bm_pub *)(table + (size_t)page * n.pub_stride);
}

static uint64_t body_hash(const uint8_t *b)
{
	uint64_t h = 0, w;
	unsigned int i;

	for (i = 0; i < n.body_len; i += sizeof(w)) {
		memcpy(&w, b + i, sizeof(w));
		h = pub_check(i, h ^ w);
	}
	return h;
}

/*
 * -R: the home's page as one-sided readers see it, updated whenever a
 * step of the protocol may have changed it: before the step's messages
 * (the writer's WRITTEN among them) go out, so a write is visible to
 * READs before it completes.  A reader that finds the words of two
 * values, or a body that is not the value's, reads again.
 */
static void publish(unsigned int page, const uint8_t *body)
{
	struct bm_pub *e;
	uint64_t v;

	if (!n.pub || n.stale || home_of(page) != n.id)
		return;
	e = pub_at(n.pub, page);
	v = n.home[page].value;
	if (__atomic_load_n(&e->value, __ATOMIC_RELAXED) == v)
		return;
	__atomic_store_n(&e->value, v, __ATOMIC_RELEASE);
	memcpy(e + 1, body, n.body_len);
	__atomic_store_n(&e->check, pub_check(page, v ^ body_hash(body)),
			 __ATOMIC_RELEASE);
}

/*
 * -B, at the home: the body of a write the protocol applied, WRITTEN
 * to node @to: its own write waited in pend, ours in its slot.
 */
static const uint8_t *applied_body(unsigned int page, const struct coh_msg *m)
{
	const struct slot *sl;

	if (m->to != n.id)
		return m->to < n.nodes ? pend_of(page, m->to) : NULL;
	sl = asker(page, true, m->value);
	return sl ? wbody_of(sl) : NULL;
}

/*
 * Sends what a protocol step asked for; completes our own local write.
 * -B: a write applied here puts its body in the page, and a DATA takes
 * the body the page has at its place in the step (a waiting read is
 * answered before the write behind it is applied); a WRITE takes the
 * body its slot writes.
 */
static int emit(unsigned int page, const struct coh_out *out)
{
	const uint8_t *b = body_of(page);
	const struct slot *sl;
	unsigned int i;
	int r;

	/* where the step leaves the page */
	for (i = 0; n.body_len && home_of(page) == n.id && i < out->n; i++) {
		if (out->msg[i].type != COH_M_WRITTEN)
			continue;
		b = applied_body(page, &out->msg[i]);
		if (!b)
			return -EPROTO;	/* a write nobody wrote */
	}
	publish(page, b);
	for (i = 0; i < out->n; i++) {
		const struct coh_msg *m = &out->msg[i];

		if (n.body_len && m->type == COH_M_WRITTEN && home_of(page) == n.id)
			memcpy(body_of(page), applied_body(page, m), n.body_len);
		if (m->to == n.id) {	/* the home's own write is applied */
			r = m->type == COH_M_WRITTEN ?
			    complete(page, true, m->value) : -EPROTO;
		} else if (m->to < n.nodes && n.peer[m->to].dead) {
			r = 0;	/* a dead writer's write applied: nobody to tell */
		} else if (m->type == COH_M_WRITE && n.body_len) {
			sl = asker(page, true, m->value);
			r = sl ? send_body(m->to, m->type, page, m->value, wbody_of(sl)) :
				 -EPROTO;
		} else {
			r = send_body(m->to, m->type, page, m->value, body_of(page));
		}
		if (r)
			return r;
	}
	return 0;
}

/*
 * -R, -Y: an EXPORT or a LOCKTAB (@type) to node @to (a table of @len
 * bytes at @addr, key @rkey), sent before any other message of ours to
 * it but the other, so a send slot is free.
 */
static int send_export(unsigned int to, uint8_t type, uint32_t rkey, uint32_t len,
		       uint64_t addr)
{
	const struct bm_msg m = { .magic = BM_MAGIC, .type = type,
				  .page = rkey, .len = len, .value = addr };

	return n.peer[to].sends < SEND_SLOTS ? post_send(to, (const uint8_t *)&m) : -ENOBUFS;
}

/* -R: @sl's READ of its page in the home's table. */
static int post_read(struct slot *sl)
{
	unsigned int home = home_of(sl->page), i = sl - n.slot;
	const struct peer *p = &n.peer[home];
	struct mrrc_wr w = { .wr_id = wr_id(home, WR_READ, i), .conn = p->conn,
			     .opcode = MRRC_OP_READ, .addr = (uintptr_t)pub_at(n.rd, i),
			     .len = n.pub_stride,
			     .remote_addr = p->pub_addr + sl->page * n.pub_stride,
			     .rkey = p->pub_rkey };
	int r;

	sl->rdma = true;
	r = mrrc_post(n.fd, &w, 1, NULL);
	if (!r)
		n.read_out[i] = true;
	/* closed already: the home's death, when its event comes, abandons it */
	return r == -ENOTCONN ? 0 : r;
}

/* -R: @sl's READ came back from node @from. */
static int read_done(unsigned int from, unsigned int i)
{
	const struct bm_pub *got;
	struct slot *sl;
	int r;

	if (i >= n.inflight)
		return -EPROTO;
	sl = &n.slot[i];
	if (!sl->busy || !sl->rdma || home_of(sl->page) != from)
		return -EPROTO;
	got = pub_at(n.rd, i);
	if (got->check != pub_check(sl->page, got->value ^ body_hash((const uint8_t *)(got + 1)))) {
		/* it raced the home's update: again; always: the table is not one */
		n.torn++;
		return ++sl->rereads > READ_AGAIN_MAX ? -EPROTO : post_read(sl);
	}
	r = read_body((const uint8_t *)(got + 1), sl->page, got->value);
	if (r)
		return r;
	n.reads_1s++;
	finish(sl, got->value);	/* as a one-sided read */
	sl->rdma = false;
	return 0;
}

/* ---- the locks (-x) ---- */

/*
 * A lock @sl held, into the history: asked at (the value), held from, to
 * now; the times as read (a hold may be shorter than the clock's tick).
 */
static void log_hold(const struct slot *sl)
{
	log_op(sl->page, sl->excl ? K_EXCL : K_SHARED, sl->ask_ns, sl->hold_ns);
	n.hist[n.nhist - 1].op.res = bm_now_ns();
}

static int lock_emit(unsigned int page, const struct lock_out *out);
static int lock_try(struct slot *sl);

/* @sl asks for its page's lock, or waits behind the slot of ours that has. */
static int lock_ask(struct slot *sl)
{
	unsigned int p = sl->page;
	struct lock_out out = { 0 };
	int r;

	if (n.lk_page[p]) {
		sl->lk = LK_WANT;
		sl->ticket = ++n.tickets;
		return 0;
	}
	if (n.lock_node != n.id && n.peer[n.lock_node].dead)
		return -EHOSTDOWN;
	n.lk_page[p] = true;
	sl->lk = LK_ASKED;
	if (n.one_lock)
		return lock_try(sl);
	if (n.lock_node != n.id)
		return send_msg(n.lock_node, BM_LOCK, p, sl->excl);
	r = lock_acquire(&n.locks[p], n.nodes, n.id, sl->excl, &out);
	return r < 0 ? r : lock_emit(p, &out);
}

/* The lock of @page is ours: the slot that asked for it may go. */
static int granted_here(unsigned int page, bool excl)
{
	unsigned int k;

	for (k = 0; k < n.inflight; k++) {
		struct slot *sl = &n.slot[k];

		if (sl->busy && sl->lk == LK_ASKED && sl->page == page) {
			if (sl->excl != excl)
				return -EPROTO;
			sl->lk = LK_HELD;
			sl->hold_ns = bm_now_ns();
			n.locks_taken += !sl->doomed;
			sl->stage = RW_GO;
			return 0;
		}
	}
	return -EPROTO;		/* nobody asked */
}

/* Sends the grants of a step of the lock table; ours go to their slot. */
static int lock_emit(unsigned int page, const struct lock_out *out)
{
	unsigned int i;
	int r = 0;

	for (i = 0; !r && i < out->n; i++) {
		unsigned int to = out->grant[i].node;

		r = to == n.id ? granted_here(page, out->grant[i].excl) :
		    send_msg(to, BM_GRANTED, page, out->grant[i].excl);
	}
	return r;
}

/*
 * -Y: the locks without the lock node's CPU (the paper's "atomics where
 * the protocol allows").  Page p's lock is word p of the lock node's
 * table, exported for RDMA atomics: bits 0-31 the nodes holding it
 * shared or trying to (node i's bit 1 << i: a node has at most one
 * request per page, its slots queue behind each other here), bits 32-39
 * one more than the node holding it exclusive, bits 40-47 how many
 * writers wait.
 *
 * A reader adds its bit (FETCH_ADD) and has the lock if the word it
 * found had no holder and no writer waiting; else it takes the bit back
 * and looks (a FETCH_ADD of 0) until the word has neither, then adds it
 * again: it sets no bit while a writer waits, so that the writer's
 * CMP_SWAP can find the word without readers (writers first, as
 * lock.c's queue).  A writer swaps 0 for its holder byte (CMP_SWAP);
 * if the word was not 0 it counts itself among the waiting (FETCH_ADD)
 * and swaps "the waiting, nothing else" for "one fewer waiting, and its
 * byte", with the count it last saw, until that is what the word is.
 * Given back with a FETCH_ADD: minus the bit, or minus the byte.
 *
 * Each node's adds and subtractions of its own bit, byte and count
 * alternate (one request per page, and one QP, executed in order), so
 * the word is always the sum of what is held, tried and waited for.
 * Among readers, and among writers, no order: who tries first when the
 * word comes free.  The lock node takes no locks itself (its CPU's
 * stores would not be atomic with the device's atomics: rxe's are
 * ATOMIC_HCA); a node that dies holding a lock, or counted as waiting,
 * leaves it so (-Y is not for deaths: an asker gives up IDLE_LIMIT_NS
 * after its operation began); and every peer can change every word: the
 * nodes trust each other with the locks, as with the messages' senders.
 */
#define LKW_SHARED(node)	(1ull << (node))
#define LKW_EXCL(node)		((uint64_t)((node) + 1) << 32)
#define LKW_EXCL_MASK		(0xffull << 32)
#define LKW_WAIT_ONE		(1ull << 40)
#define LKW_WAIT_MASK		(0xffull << 40)

static bool is_atom(unsigned int kind)
{
	return kind >= WR_ATOM && kind <= WR_PROBE;
}

static int post_atomic(unsigned int kind, unsigned int i, unsigned int page, uint8_t op,
		       uint64_t add, uint64_t swap)
{
	const struct peer *p = &n.peer[n.lock_node];
	struct mrrc_wr w = { .wr_id = wr_id(n.lock_node, kind, i), .conn = p->conn,
			     .opcode = op, .len = 8,
			     .addr = (uintptr_t)(kind == WR_REL ? n.atom_sink : &n.atom[i]),
			     .remote_addr = p->lkw_addr + (uint64_t)page * 8,
			     .rkey = p->lkw_rkey, .compare_add = add, .swap = swap };
	int r = mrrc_post(n.fd, &w, 1, NULL);

	if (!r) {
		n.atoms++;
		n.atom_out[i] |= kind != WR_REL;
	}
	/* closed already: the lock node's death, when its event comes, ends it */
	return r == -ENOTCONN ? 0 : r;
}

/* -Y: -ETIMEDOUT if @sl has waited too long for its lock (a holder, or a waiting writer, dead?) */
static int lock_late(const struct slot *sl)
{
	if (bm_now_ns() - sl->ask_ns <= IDLE_LIMIT_NS)
		return 0;
	fprintf(stderr, PROG ": node %u: page %u's lock not had %llu s after its operation began (its holder dead?)\n",
		n.id, sl->page, IDLE_LIMIT_NS / 1000000000ull);
	return -ETIMEDOUT;
}

/* -Y: slot @sl asks for its page's lock, or again */
static int lock_try(struct slot *sl)
{
	unsigned int i = sl - n.slot;
	uint64_t w = sl->lk_seen & LKW_WAIT_MASK;	/* writers waiting, we among them */
	int r = lock_late(sl);

	if (r)
		return r;
	if (!sl->excl)
		return post_atomic(WR_ATOM, i, sl->page, MRRC_OP_FETCH_ADD, LKW_SHARED(n.id), 0);
	if (!sl->lk_queued)
		return post_atomic(WR_ATOM, i, sl->page, MRRC_OP_CMP_SWAP, 0, LKW_EXCL(n.id));
	return post_atomic(WR_ATOM, i, sl->page, MRRC_OP_CMP_SWAP, w,
			   w - LKW_WAIT_ONE + LKW_EXCL(n.id));
}

/* -Y: slot @i's atomic of kind @kind is back; -EPROTO if none was out. */
static int atom_back(unsigned int kind, unsigned int i)
{
	if (!n.atoms || (kind != WR_REL && (i >= n.inflight || !n.atom_out[i])))
		return -EPROTO;
	n.atoms--;
	if (kind != WR_REL)
		n.atom_out[i] = false;
	return 0;
}

/* Slot @i looks at its page's lock word again (FETCH_ADD 0). */
static int probe(unsigned int i)
{
	return post_atomic(WR_PROBE, i, n.slot[i].page, MRRC_OP_FETCH_ADD, 0, 0);
}

/* -Y: what slot @i's atomic of kind @kind found (atom_back() done) */
static int atom_done(unsigned int kind, unsigned int i)
{
	struct slot *sl = &n.slot[i];
	uint64_t old = n.atom[i];
	bool taken = old & (LKW_EXCL_MASK | LKW_WAIT_MASK);

	if (kind == WR_REL)
		return 0;
	if (!sl->busy || sl->lk != LK_ASKED || (kind == WR_WAIT && !sl->excl) ||
	    ((kind == WR_UNDO || kind == WR_PROBE) && sl->excl))
		return -EPROTO;
	switch (kind) {
	case WR_UNDO:		/* our bit taken back: look until it is free */
		return probe(i);
	case WR_PROBE:
		if (!taken)
			return lock_try(sl);
		return lock_late(sl) ?: probe(i);
	case WR_WAIT:		/* counted among the waiting */
		sl->lk_queued = true;
		sl->lk_seen = old + LKW_WAIT_ONE;
		return lock_try(sl);
	}
	if (!sl->excl) {
		if (!taken)
			return granted_here(sl->page, false);
		n.lock_refused++;
		return post_atomic(WR_UNDO, i, sl->page, MRRC_OP_FETCH_ADD, -LKW_SHARED(n.id), 0);
	}
	if (old == (sl->lk_queued ? sl->lk_seen & LKW_WAIT_MASK : 0)) {
		sl->lk_queued = false;
		return granted_here(sl->page, true);
	}
	n.lock_refused++;
	sl->lk_seen = old;
	return sl->lk_queued ? lock_try(sl) :
	       post_atomic(WR_WAIT, i, sl->page, MRRC_OP_FETCH_ADD, LKW_WAIT_ONE, 0);
}

/*
 * @sl gives its lock back (it is recorded in the history: when it was
 * asked for, held, released); the next slot of ours that waits for the
 * page's lock asks for it.
 */
static int unlock(struct slot *sl)
{
	unsigned int p = sl->page, k;
	struct slot *next = NULL;
	int r = 0;

	log_hold(sl);
	sl->lk = LK_NONE;
	n.lk_page[p] = false;
	if (n.one_lock) {
		if (!n.peer[n.lock_node].dead)
			r = post_atomic(WR_REL, sl - n.slot, p, MRRC_OP_FETCH_ADD,
					-(sl->excl ? LKW_EXCL(n.id) : LKW_SHARED(n.id)), 0);
	} else if (n.lock_node == n.id) {
		struct lock_out out = { 0 };

		r = lock_release(&n.locks[p], n.nodes, n.id, &out);
		r = r ?: lock_emit(p, &out);
	} else if (!n.peer[n.lock_node].dead) {
		r = send_msg(n.lock_node, BM_UNLOCK, p, 0);
	}
	for (k = 0; k < n.inflight; k++) {
		struct slot *o = &n.slot[k];

		if (o->busy && o->lk == LK_WANT && o->page == p &&
		    (!next || o->ticket < next->ticket))
			next = o;
	}
	return r ?: next ? lock_ask(next) : 0;
}

/* LOCK and UNLOCK at the lock node, GRANTED from it. */
static int on_lock_msg(unsigned int from, const struct bm_msg *m)
{
	struct lock_out out = { 0 };
	int r;

	/* every node of a cluster that locks has -x (-Y: none sends these); nobody locks once done */
	if (!n.locking || n.one_lock || m->page >= n.pages || m->value > 1 ||
	    (m->type != BM_GRANTED && n.peer[from].done))
		return -EPROTO;
	switch (m->type) {
	case BM_LOCK:
		if (n.id != n.lock_node)
			return -EPROTO;
		r = lock_acquire(&n.locks[m->page], n.nodes, from, m->value, &out);
		return r < 0 ? r : lock_emit(m->page, &out);
	case BM_UNLOCK:
		if (n.id != n.lock_node || m->value)
			return -EPROTO;
		r = lock_release(&n.locks[m->page], n.nodes, from, &out);
		return r ?: lock_emit(m->page, &out);
	case BM_GRANTED:
		if (from != n.lock_node)
			return -EPROTO;
		return granted_here(m->page, m->value);
	}
	return -EPROTO;
}

/*
 * The slot's operation will never complete (its node or the page's home
 * died): a write may or may not have taken effect, so it stays in the
 * history with no end; a read is dropped.  A lock it holds is given back
 * (a dying node's ends with it: the lock node releases it); one it asked
 * for is given back when it comes (the slot stays, doomed, until then).
 */
static int abandon(struct slot *sl, bool dying)
{
	int r = 0;

	/* over, and in the history, but for giving its lock back */
	if (!dying && sl->step == S_RW && sl->stage == RW_OP && sl->ready &&
	    (!n.counter || sl->write)) {
		r = sl->lk == LK_HELD ? unlock(sl) : 0;
		sl->busy = false;
		n.completed++;
		return r;
	}

	if (sl->write && !sl->ready &&
	    (sl->step == S_RW || sl->step == S_WRITE || sl->step == S_TOMB)) {
		log_op(sl->page, K_WRITE, sl->value, sl->inv);
		n.hist[n.nhist - 1].op.res = UINT64_MAX;
	}
	if (sl->lk == LK_ASKED && !dying) {
		sl->doomed = true;
		return 0;
	}
	if (sl->lk == LK_HELD) {
		if (dying)
			log_hold(sl);
		else
			r = unlock(sl);
	}
	sl->lk = LK_NONE;
	sl->busy = false;
	sl->rdma = false;	/* its READ, if any, is flushed with the home */
	n.abandoned++;
	return r;
}

/* The slot a node's answer is for: busy with @step, waiting on @from. */
static struct slot *asked(unsigned int from, uint64_t value, unsigned int step)
{
	unsigned int tag = value & 0xffff;
	struct slot *sl;

	if (tag >= n.inflight)
		return NULL;
	sl = &n.slot[tag];
	if (!sl->busy || sl->ready || sl->step != step || sl->peer != from)
		return NULL;
	return sl;
}

/* Malloc and Free between nodes (-K only). */
static int on_alloc_msg(unsigned int from, const struct bm_msg *m)
{
	uint32_t status = m->value >> 32;
	unsigned int page;
	struct slot *sl;
	int e, r;

	if (!n.dht)
		return -EPROTO;
	switch (m->type) {
	case BM_ALLOC:
		e = galloc_take(&n.ga, from, &page);
		if (e)
			n.refused++;
		else
			n.lent++;
		return send_msg(from, BM_ALLOCATED, e ? UINT32_MAX : page,
				(m->value & 0xffff) | (uint64_t)(uint32_t)-e << 32);
	case BM_ALLOCATED:
		/* a page of its own that we do not have already, or none */
		sl = asked(from, m->value, S_ALLOC);
		if (!sl || (status && (status != ENOMEM || m->page != UINT32_MAX)) ||
		    (!status && (m->page >= n.pages || home_of(m->page) != from ||
				 n.held[m->page])))
			return -EPROTO;
		if (!status)
			sl->page = m->page;
		sl->got = status;
		sl->ready = true;
		return 0;
	case BM_FREE:
		/* only what it has: anything else is a lie, answered, then refused */
		e = galloc_give(&n.ga, from, m->page);
		r = send_msg(from, BM_FREED, m->page,
			     (m->value & 0xffff) | (uint64_t)(uint32_t)-e << 32);
		return e ? -EPROTO : r;
	case BM_FREED:
		/* we give back only what we have: a refusal is a lie */
		sl = asked(from, m->value, S_FREE);
		if (!sl || status || m->page != sl->page)
			return -EPROTO;
		sl->ready = true;
		return 0;
	}
	return -EPROTO;
}

/* -T: node 0 tells its clock; a node answered takes the time it came. */
static int on_sync_msg(unsigned int from, const struct bm_msg *m)
{
	if (!n.clocks)
		return -EPROTO;
	/* only node 0 keeps the cluster's clock; a node done asks nothing */
	if (m->type == BM_SYNC)
		return n.id || m->value || n.peer[from].done ? -EPROTO :
		       send_msg(from, BM_SYNCED, m->page, bm_now_ns());
	if (from || !n.sync_wait || m->page != n.sync_seq)
		return -EPROTO;	/* not asked, or not that time */
	n.sync_got = m->value;
	n.sync_wait = false;
	return 0;
}

/* A message from node @from; a WRITE's or a DATA's body in @body (-B). */
static int on_msg(unsigned int from, const struct bm_msg *m, const uint8_t *body)
{
	struct coh_out out = { 0 };
	uint64_t v;
	int r;

	n.received++;
	if (m->magic != BM_MAGIC || m->type >= BM_TYPES ||
	    (m->type != BM_EXPORT && m->type != BM_LOCKTAB && m->len))	/* only they have one */
		return -EPROTO;
	/* a write of a body that is not its value's: refused where it comes in */
	if (m->type == COH_M_WRITE && !body_ok(body, m->page, m->value)) {
		fprintf(stderr, PROG ": node %u: node %u's WRITE of page %u: a body that is not value %#llx's\n",
			n.id, from, m->page, (unsigned long long)m->value);
		return -EPROTO;
	}
	if (m->type == BM_DONE) {
		n.peer[from].done = true;
		return 0;
	}
	if (m->type == BM_SYNC || m->type == BM_SYNCED)
		return on_sync_msg(from, m);
	if (m->type == BM_EXPORT) {	/* once, with -R, of a table like ours */
		struct peer *p = &n.peer[from];

		if (!n.onesided || p->exported || m->len != n.pages * n.pub_stride ||
		    !m->value)
			return -EPROTO;
		p->pub_addr = m->value;
		p->pub_rkey = m->page;
		p->exported = true;
		return 0;
	}
	if (m->type == BM_LOCKTAB) {	/* once, with -Y, from the lock node */
		struct peer *p = &n.peer[from];

		if (!n.one_lock || from != n.lock_node || p->lkw_known ||
		    m->len != n.pages * 8 || !m->value || m->value % 8)
			return -EPROTO;
		p->lkw_addr = m->value;
		p->lkw_rkey = m->page;
		p->lkw_known = true;
		return 0;
	}
	if (m->type >= BM_LOCK)
		return on_lock_msg(from, m);
	if (m->type >= BM_ALLOC)
		return on_alloc_msg(from, m);
	if (m->page >= n.pages)
		return -EPROTO;
	if (home_of(m->page) == n.id) {
		struct coh_home *h = &n.home[m->page];

		/* -K: a page is read and written by the node that has it */
		if (n.dht && m->type != COH_M_ACK && n.ga.by[m->page] != from + 1)
			return -EPROTO;
		r = frame_use(n.homes, m->page);	/* -M: in memory for the step */
		if (r)
			return r;
		if (m->type == COH_M_READ)
			r = coh_home_read(h, from, &v, &out);
		else if (m->type == COH_M_WRITE)
			r = coh_home_write(h, from, m->value, &out);
		else if (m->type == COH_M_ACK)
			r = coh_home_ack(h, from, &out);
		else
			r = -EPROTO;
		/* a write's body waits with it (a second write of the node is refused) */
		if (m->type == COH_M_WRITE && r >= 0)
			memcpy(pend_of(m->page, from), body, n.body_len);
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
		/* -f: an invalidated copy's frame is free at once, its body poisoned */
		if (r >= 0 && n.copies && m->type == COH_M_INVALIDATE &&
		    keep.state != COH_INVALID && c->state == COH_INVALID) {
			int d = bm_pool_discard(n.copies, m->page);

			if (!d) {
				n.copies_invalidated++;
				poison(m->page);
			} else if (d != -ENOENT) {	/* (-ENOENT: never kept) */
				r = d;
			}
		}
		/* a read's answer: its body, the copy's if it is kept (-f: in a frame) */
		if (r == 1 && m->type == COH_M_DATA) {
			r = read_body(body, m->page, v) ?: 1;
			if (r == 1 && c->state != COH_INVALID && c->value == v) {
				r = frame_use(n.copies, m->page) ?: 1;
				if (r == 1)
					memcpy(body_of(m->page), body, n.body_len);
			}
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
	p->rbuf = calloc(RECV_SLOTS, RECV_LEN);
	p->sbuf = calloc(SEND_SLOTS, n.msg_len);
	p->outbox = calloc(n.outbox_max, n.msg_len);
	if (!p->rbuf || !p->sbuf || !p->outbox)
		return -ENOMEM;
	p->connected = true;
	for (s = 0; !r && s < RECV_SLOTS; s++)
		r = post(conn, MRRC_OP_RECV, p->rbuf + (size_t)s * RECV_LEN, RECV_LEN,
			 wr_id(i, WR_RECV, s));
	return r;
}

/*
 * Whether node @i holds or waits for a lock here: a node that is done
 * has given back every lock (its UNLOCKs came before its DONE).
 */
static bool locks_of(unsigned int i)
{
	unsigned int p;

	for (p = 0; n.locks && p < n.pages; p++)
		if (lock_involves(&n.locks[p], i))
			return true;
	return false;
}

/* Whether an operation of ours waits for an answer of node @i. */
static bool waits_on(unsigned int i)
{
	unsigned int k;

	for (k = 0; k < n.inflight; k++) {
		const struct slot *sl = &n.slot[k];

		if (!sl->busy || sl->ready)
			continue;
		if ((sl->step == S_ALLOC || sl->step == S_FREE) && sl->peer == i)
			return true;
		if (in_protocol(sl) && home_of(sl->page) == i)
			return true;
		if (sl->lk == LK_ASKED && n.lock_node == i)
			return true;
	}
	return false;
}

static unsigned int busy_slots(void)
{
	unsigned int k, b = 0;

	for (k = 0; k < n.inflight; k++)
		b += n.slot[k].busy;
	return b;
}

/*
 * Node @i is gone before it said it was done (its connection broke): the
 * pages homed here forget it (coh_home_node_failed(): what it owed counts
 * as given, what it asked for is dropped), the operations on pages homed
 * at it never complete (abandoned), and nothing of it is handled again.
 * At the lock node, the locks it held are released and its requests
 * dropped.  With -K (Malloc and Free) a death is an error: -ECONNRESET;
 * so is the lock node's with -x (the locks are gone with it):
 * -EHOSTDOWN.
 */
static int peer_failed(unsigned int i)
{
	struct peer *pr = &n.peer[i];
	unsigned int p, k;
	int r = 0;

	if (n.dht)
		return -ECONNRESET;
	if (pr->dead)
		return 0;
	pr->dead = pr->done = true;
	pr->on = pr->sends = 0;		/* what it was sent goes with it */
	fprintf(stderr, PROG ": node %u: node %u is gone; going on without it\n", n.id, i);
	if (n.locking && i == n.lock_node && !(n.sent_done && !busy_slots())) {
		fprintf(stderr, PROG ": node %u: the lock node is gone, and its locks\n", n.id);
		return -EHOSTDOWN;
	}
	for (p = 0; p < n.pages && !r; p++) {
		if (n.locks) {
			struct lock_out out = { 0 };

			r = lock_node_failed(&n.locks[p], n.nodes, i, &out);
			if (r > 0)
				n.locks_of_dead++;
			r = r < 0 ? r : lock_emit(p, &out);
		}
		if (r) {
			break;
		} else if (home_of(p) == n.id) {
			struct coh_out out = { 0 };

			/* a write applied (its body in the page) needs it in memory */
			r = n.home[p].busy ? frame_use(n.homes, p) : 0;
			r = r ?: coh_home_node_failed(&n.home[p], i, &out);
			r = r ?: emit(p, &out);
		} else if (home_of(p) == i) {
			bool reading, writing;

			coh_cache_home_failed(&n.cache[p], &reading, &writing);
			/* the holders of its lock last: nobody of ours wants it then */
			for (k = 0; !r && k < 2 * n.inflight; k++) {
				struct slot *sl = &n.slot[k % n.inflight];

				if (sl->busy && sl->page == p &&
				    (sl->lk == LK_HELD) == (k >= n.inflight))
					r = abandon(sl, false);
			}
		}
	}
	if (!r && n.locks_of_dead)
		fprintf(stderr, PROG ": node %u: %lu locks of dead nodes released\n",
			n.id, n.locks_of_dead);
	return r;
}

static int handle_cqe(const struct mrrc_cqe *e)
{
	unsigned int peer = e->wr_id >> 32, kind = e->wr_id >> 16 & 0xffff,
		     slot = e->wr_id & 0xffff;
	struct bm_msg m;
	uint8_t *buf;
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
			/*
			 * The end, once it said it was done, unless we still
			 * wait for it (a peer leaves after everyone's DONE);
			 * an error before.
			 */
			/*
			 * A node leaves only after everyone's DONE, ours
			 * included: before ours, it died.
			 */
			if (n.peer[i].done && n.sent_done)
				return waits_on(i) || locks_of(i) ? -EPROTO : 0;
			/* fallthrough */
		case MRRC_EVENT_ERROR:
			if (n.peer[i].connected && !n.peer[i].dead && !n.dht) {
				fprintf(stderr, PROG ": node %u: node %u's connection: event %u (%s)\n",
					n.id, i, e->event, strerror(-e->status));
				return peer_failed(i);
			}
			/* fallthrough */
		default:	/* our device going away among them: the end */
			if (n.peer[i].dead)
				return 0;
			fprintf(stderr, PROG ": node %u: node %u's connection: event %u (%s)\n",
				n.id, i, e->event, strerror(-e->status));
			return e->status ? e->status : -ECONNRESET;
		}
	}
	if (peer >= n.nodes || peer == n.id || n.peer[peer].conn != e->conn)
		return -EPROTO;
	if (kind == WR_READ && slot < n.inflight) {
		if (!n.read_out[slot])
			return -EPROTO;
		n.read_out[slot] = false;	/* the buffer is ours again */
	}
	/*
	 * An atomic is accounted for here, before the dead-peer and error
	 * returns below, so that every one is counted back exactly once;
	 * what it found is acted on after them (atom_done()).
	 */
	if (is_atom(kind)) {
		if (!n.one_lock || peer != n.lock_node || atom_back(kind, slot))
			return -EPROTO;
	}
	if (n.peer[peer].dead)		/* what it sent is lost with it */
		return 0;
	if (e->status) {
		/* what a node that is done flushed by leaving (after our DONE) */
		if (n.peer[peer].done && (n.sent_done || n.dht)) {
			if (kind == WR_SEND && n.peer[peer].sends)
				n.peer[peer].sends--;
			return 0;
		}
		fprintf(stderr, PROG ": node %u: node %u's connection: %s\n", n.id,
			peer, strerror(-e->status));
		return n.dht ? e->status : peer_failed(peer);
	}
	if (kind == WR_SEND) {
		if (!n.peer[peer].sends)
			return -EPROTO;
		n.peer[peer].sends--;
		return drain_outbox(peer);
	}
	if (kind == WR_READ)
		return read_done(peer, slot);
	if (is_atom(kind))
		return atom_done(kind, slot);
	if (kind != WR_RECV || slot >= RECV_SLOTS || e->byte_len < sizeof(m))
		return -EPROTO;
	buf = n.peer[peer].rbuf + (size_t)slot * RECV_LEN;
	memcpy(&m, buf, sizeof(m));
	/* a WRITE or a DATA with a body, -B's; anything else without */
	if (e->byte_len != msg_len_of(m.type))
		return -EPROTO;
	memcpy(n.rbody, buf + sizeof(m), e->byte_len - sizeof(m));
	r = post(e->conn, MRRC_OP_RECV, buf, RECV_LEN, wr_id(peer, WR_RECV, slot));
	if (r == -ENOTCONN && !n.dht)	/* closed since: see post_send() */
		r = 0;
	return r ?: on_msg(peer, &m, n.rbody);
}

/* A read or a write of @page for @sl (a write of @v, unique). */
static int issue(struct slot *sl, bool write, unsigned int page, uint64_t v)
{
	const struct slot keep = *sl;
	struct coh_out out = { 0 };
	int r;

	sl->write = write;
	sl->page = page;
	sl->value = write ? v : 0;
	sl->inv = bm_now_ns();
	sl->ready = false;
	if (write)
		body_fill(wbody_of(sl), page, v);
	if (home_of(page) == n.id) {
		r = frame_use(n.homes, page);
		if (r)
			return r;
		r = write ? coh_home_write(&n.home[page], n.id, v, &out) :
			    coh_home_read(&n.home[page], n.id, &v, &out);
	}
	else if (!write && n.onesided && n.cache[page].state == COH_INVALID) {
		sl->rereads = 0;
		return post_read(sl);	/* no copy: the home's, without its CPU */
	}
	else
		r = write ? coh_cache_write(&n.cache[page], v, &out) :
			    coh_cache_read(&n.cache[page], &v, &out);
	if (r < 0) {
		*sl = keep;	/* as it was: -EBUSY is tried again */
		return r;
	}
	if (r == 1) {		/* a read of the home's page or of our copy */
		if (home_of(page) != n.id) {
			n.copy_hits++;
			r = frame_use(n.copies, page);
			if (r)
				return r;
		} else {
			n.home_reads++;
		}
		r = read_body(body_of(page), page, v);
		if (r)
			return r;
		finish(sl, v);
	}
	return emit(page, &out);
}

/* Unique over the cluster, never the initial 0. */
static uint64_t new_value(void)
{
	return (uint64_t)(n.id + 1) << 40 | ++n.next_value;
}

/*
 * -X: what a lying node sends node 0 (which must stop with EPROTO): an
 * ALLOCATED nobody asked for, a FREED nobody asked for, a FREE of a page
 * it does not have, a WRITE of a page it does not have (all with -K), an
 * ALLOC without -K; to node 0 as the lock node: an UNLOCK of a lock it
 * does not hold, a GRANTED (it is not the lock node), a second LOCK of a
 * page; a SYNCED nobody asked for; an EXPORT of a table of another
 * length (or to a node without -R); with -R, a table whose check words
 * never match (read again and again), and a second EXPORT right after
 * the real one (sent then: one sent before it would be taken as the
 * table, and node 0's READs with its made-up key could fail before the
 * real one came); with -T, a SYNC with a value; with -B, DATA whose
 * bodies are not their values' (one bit flipped, in every DATA it sends),
 * and a WRITE of page 0 (node 0's) whose body is not its value's; with
 * -Y, a LOCKTAB from a node that is not the lock node, and one from the
 * lock node at an address no atomic can use (not a multiple of 8).
 */
#define FORGE_KINDS 17u
static int forge(unsigned int kind)
{
	static const uint8_t type[FORGE_KINDS] = {
		BM_ALLOCATED, BM_FREED, BM_FREE, COH_M_WRITE, BM_ALLOC,
		BM_UNLOCK, BM_GRANTED, BM_LOCK, BM_SYNCED, BM_EXPORT, 0, BM_EXPORT,
		BM_SYNC, 0, COH_M_WRITE, BM_LOCKTAB, BM_LOCKTAB };
	uint64_t value = kind == 4 || kind == 15 ? new_value() : kind == 13 ? 1 : 0;
	unsigned int p;
	int r = 0;

	if (kind == 10 || kind == 12)	/* a table one page too long; or a second */
		return send_export(0, BM_EXPORT, 1, (n.pages + (kind == 10)) * n.pub_stride,
				   4096);
	if (kind == 16)		/* where lock words are, from a node that has none */
		return send_export(0, BM_LOCKTAB, 1, n.pages * 8, 4096);
	if (kind == 17)		/* the lock node's, instead of the real one: misaligned */
		return send_export(0, BM_LOCKTAB, 1, n.pages * 8, 4100);
	if (kind == 11) {	/* -R: our table's check words lie, for good */
		if (!n.pub)
			return -EINVAL;
		for (p = 0; p < n.pages; p++)
			pub_at(n.pub, p)->check ^= 1;
		n.stale = true;
		return 0;
	}
	if (kind == 14) {	/* -B: our DATA's bodies lie, for good */
		n.body_lie = true;
		return 0;
	}
	if (kind == 8 && !n.one_lock)	/* the first is an honest one (-Y: the only one) */
		r = send_msg(0, BM_LOCK, 0, 1);
	return r ?: send_msg(0, type[kind - 1], kind == 1 ? n.id : 0, value);
}

/* -X: forge(), said on stderr; nonzero if it could not be sent. */
static int send_forgery(void)
{
	int r = forge(n.forge);

	if (r)
		fprintf(stderr, PROG ": node %u: forging: %s\n", n.id, strerror(-r));
	else
		fprintf(stderr, PROG ": node %u: sent node 0 a forgery (%u)\n", n.id, n.forge);
	return r;
}

static struct slot *free_slot(void)
{
	unsigned int i;

	for (i = 0; i < n.inflight; i++)
		if (!n.slot[i].busy && !n.read_out[i] && !n.atom_out[i])
			return &n.slot[i];
	return NULL;
}

/*
 * The next stage of a slot's random operation with -x or -C (outside any
 * handler): its lock is granted: the read or write; the operation is
 * over: the increment's write (-C), or the lock given back and the slot
 * free.  -EBUSY from the protocol (a read or write of the page in flight
 * here) is tried again later.  1 if the slot went a step further, 0 if
 * not, or a negative errno.
 */
static int advance(struct slot *sl)
{
	int r;

	if (!sl->busy || sl->step != S_RW)
		return 0;
	if (sl->stage == RW_GO && sl->doomed) {	/* nothing to do on it now */
		r = unlock(sl);
		sl->busy = false;
		n.abandoned++;
		return r ?: 1;
	}
	if (sl->stage == RW_GO) {
		sl->stage = RW_OP;
		r = n.counter ? issue(sl, false, sl->page, 0) :
		    issue(sl, sl->excl, sl->page, sl->excl ? new_value() : 0);
		if (r == -EBUSY)
			sl->stage = RW_GO;
		return r == -EBUSY ? 0 : r ?: 1;
	}
	if (sl->stage != RW_OP || !sl->ready)
		return 0;
	if (n.counter && !sl->write) {
		/* the increment: one more than what it read */
		r = issue(sl, true, sl->page, sl->got + 1);
		return r == -EBUSY ? 0 : r ?: 1;
	}
	r = sl->lk == LK_HELD ? unlock(sl) : 0;
	sl->busy = false;
	n.completed++;
	return r ?: 1;
}

/* A new read or write on a free slot; -EBUSY if none could start. */
static int start_op(void)
{
	unsigned int p = n.perm ? n.perm[bm_zipf_next(&n.zipf, &n.zseed)] :
				  rand_r(&n.seed) % n.pages;
	bool write = (unsigned int)(rand_r(&n.seed) % 100) < n.write_pct;
	struct slot *sl = free_slot();
	unsigned int k;
	int r;

	if (!sl)
		return -EBUSY;
	/* not a page whose home is gone */
	for (k = 0; home_of(p) != n.id && n.peer[home_of(p)].dead; k++) {
		if (k == n.pages) {
			fprintf(stderr, PROG ": node %u: every page's home is gone\n", n.id);
			return -EHOSTDOWN;
		}
		p = (p + 1) % n.pages;
	}
	*sl = (struct slot){ .busy = true, .step = S_RW, .page = p,
			     .excl = write || n.counter, .ask_ns = bm_now_ns() };
	if (n.locking) {
		sl->stage = RW_LOCK;
		r = lock_ask(sl);
	} else if (n.counter) {
		r = issue(sl, false, p, 0);
	} else {
		r = issue(sl, write, p, write ? new_value() : 0);
	}
	if (r < 0)
		sl->busy = false;
	return r;
}

/* Random operations on every free slot, up to -o of them. */
static int start_ops(void)
{
	unsigned int i;
	bool moved;
	int r;

	/* until nothing moves: a release here may grant here, and so on */
	do {
		moved = false;
		for (i = 0; i < n.inflight; i++) {
			r = advance(&n.slot[i]);
			if (r < 0)
				return r;
			moved |= r;
		}
		while (n.completed + busy_slots() < n.ops) {
			r = start_op();
			if (r == -EBUSY)
				break;
			if (r)
				return r;
			moved = true;
		}
	} while (moved);
	return 0;
}

/* The node after @i, not this one. */
static unsigned int next_peer(unsigned int i)
{
	i = (i + 1) % n.nodes;
	return i == n.id ? (i + 1) % n.nodes : i;
}

/*
 * Malloc for @sl: a page of ours; else one of the node that lent the
 * last, then of the ones after it, each asked once.
 */
static int dht_malloc(struct slot *sl)
{
	unsigned int page;

	sl->step = S_ALLOC;
	if (!sl->tries && !galloc_take(&n.ga, n.id, &page)) {
		sl->page = page;
		sl->got = 0;
		sl->ready = true;
		return 0;
	}
	if (sl->tries + 1 >= n.nodes) {
		fprintf(stderr, PROG ": node %u: Malloc: no node has a free page\n", n.id);
		return -ENOMEM;
	}
	sl->peer = sl->tries ? next_peer(sl->peer) : n.hint;
	sl->tries++;
	sl->ready = false;
	return send_msg(sl->peer, BM_ALLOC, 0, sl - n.slot);
}

/* Key number @k: scattered over 64 bits, different at every node. */
static uint64_t key_of(unsigned int k)
{
	return bm_mix64(((uint64_t)n.id << 32 | k) + 0x9e3779b97f4a7c15ull);
}

static int *dht_chain(uint64_t key)
{
	return &n.bucket[(key * 0x9e3779b97f4a7c15ull >> 32) % n.nbuckets];
}

/* The entry of @key in the table, or NULL. */
static struct dht_entry *dht_find(uint64_t key)
{
	int i;

	for (i = *dht_chain(key); i >= 0; i = n.ent[i].next)
		if (n.ent[i].key == key)
			return &n.ent[i];
	return NULL;
}

static void dht_insert(unsigned int k, unsigned int page, uint64_t value)
{
	struct dht_entry *e = &n.ent[k];
	int *head = dht_chain(key_of(k));

	*e = (struct dht_entry){ .key = key_of(k), .value = value, .page = page,
				 .next = *head, .in = true };
	*head = (int)k;
}

static void dht_erase(unsigned int k)
{
	int *link = dht_chain(n.ent[k].key);

	while (*link != (int)k)
		link = &n.ent[*link].next;
	*link = n.ent[k].next;
	n.ent[k].in = false;
}

static void key_done(struct slot *sl)
{
	sl->busy = false;
	n.keys_done++;
	n.completed++;
}

/* The step after the one @sl finished. */
static int dht_next(struct slot *sl)
{
	unsigned int page = sl->page, k = sl->key;
	int r;

	switch (sl->step) {
	case S_ALLOC:
		if (sl->got == ENOMEM)		/* that node had none: the next */
			return dht_malloc(sl);
		log_op(page, K_MALLOC, 0, sl->op_inv);
		n.held[page] = true;
		if (home_of(page) == n.id)
			n.local_keys++;
		else
			n.hint = sl->peer;
		sl->step = S_WRITE;
		return issue(sl, true, page, new_value());
	case S_WRITE:
		/* Insert: the value is written, the key goes in */
		if (n.phase == P_INSERT)
			dht_insert(k, page, sl->value);
		else
			n.ent[k].value = sl->value;
		key_done(sl);
		return 0;
	case S_READ:
		if (sl->got != n.ent[k].value) {
			fprintf(stderr, PROG ": node %u: key %u (page %u) holds %llu, not %llu\n",
				n.id, k, page, (unsigned long long)sl->got,
				(unsigned long long)n.ent[k].value);
			return -EIO;
		}
		key_done(sl);
		return 0;
	case S_TOMB:
		/* every copy invalidated: the page goes back to its home */
		if (home_of(page) != n.id) {
			/*
			 * Our copy of what we wrote goes too: after the FREE
			 * the page is not ours (an INVALIDATE that comes for
			 * it later is still acknowledged).
			 */
			n.cache[page].state = COH_INVALID;
			sl->step = S_FREE;
			sl->peer = home_of(page);
			sl->ready = false;
			return send_msg(sl->peer, BM_FREE, page, sl - n.slot);
		}
		r = galloc_give(&n.ga, n.id, page);
		if (r)
			return r;
		/* fallthrough */
	case S_FREE:
		log_op(page, K_FREE, 0, sl->op_inv);
		n.held[page] = false;
		dht_erase(k);
		key_done(sl);
		return 0;
	}
	return -EPROTO;
}

/* Key @k's operation of this phase, on @sl. */
static int dht_start(struct slot *sl, unsigned int k)
{
	struct dht_entry *e = NULL;

	*sl = (struct slot){ .busy = true, .key = k, .op_inv = bm_now_ns() };
	if (n.phase == P_INSERT)
		return dht_malloc(sl);
	e = dht_find(key_of(k));
	if (!e || e != &n.ent[k]) {
		fprintf(stderr, PROG ": node %u: key %u is not in the table\n", n.id, k);
		return -EIO;
	}
	switch (n.phase) {
	case P_LOOKUP:
	case P_LOOKUP2:
		sl->step = S_READ;
		return issue(sl, false, e->page, 0);
	case P_UPDATE:
		sl->step = S_WRITE;
		return issue(sl, true, e->page, new_value());
	case P_ERASE:
		/* Free: a write first, which invalidates every copy */
		sl->step = S_TOMB;
		return issue(sl, true, e->page, new_value());
	}
	return -EPROTO;
}

/*
 * The hash table: every slot whose step is over takes its next, free
 * slots take the phase's next keys, and a phase whose keys are all done
 * gives way to the next; until nothing more can go without an answer.
 */
static int dht_run(void)
{
	bool more = true;
	unsigned int i;
	struct slot *sl;
	int r = 0;

	while (!r && more && n.phase < P_END) {
		more = false;
		for (i = 0; !r && i < n.inflight; i++) {
			if (n.slot[i].busy && n.slot[i].ready) {
				r = dht_next(&n.slot[i]);
				more = true;
			}
		}
		while (!r && n.next_key < n.keys && (sl = free_slot())) {
			r = dht_start(sl, n.next_key++);
			more = true;
		}
		if (!r && n.keys_done == n.keys) {
			n.phase_ns[n.phase] = bm_now_ns() - n.phase_ns[n.phase];
			if (++n.phase < P_END)
				n.phase_ns[n.phase] = bm_now_ns();
			n.next_key = n.keys_done = 0;
			more = true;
		}
	}
	return r;
}

/*
 * -T: where node 0's clock is, from CLOCK_ROUNDS round trips of SYNC and
 * SYNCED, the shortest kept; everything else is served meanwhile.
 */
static int clock_measure(struct clock_fix *f)
{
	uint64_t best = UINT64_MAX, t0, t1;
	unsigned int k;
	int r = 0;

	for (k = 0; !r && k < CLOCK_ROUNDS; k++) {
		n.sync_seq++;
		n.sync_wait = true;
		t0 = bm_now_ns();
		r = send_msg(0, BM_SYNC, n.sync_seq, 0);
		while (!r && n.sync_wait) {
			r = progress(100);
			if (!r && n.peer[0].dead)
				r = -EHOSTDOWN;
			if (!r && bm_now_ns() - t0 > CLOCK_ERR_MAX_NS)
				r = -ETIMEDOUT;
		}
		t1 = bm_now_ns();
		if (!r && t1 - t0 < best) {
			best = t1 - t0;
			f->at = t0 + best / 2;
			f->offset = (int64_t)(n.sync_got - f->at);
			f->err = best / 2 + 1;
		}
	}
	n.sync_wait = false;
	return r;
}

/*
 * -R, -Y: @len bytes at @addr exported with @access on every peer's
 * connection (for as long as they last), and where they are (@tlen of
 * them used) to each of them in a message of @type.
 */
static int export_to_peers(void *addr, size_t len, uint32_t access, uint8_t type,
			   uint32_t tlen, unsigned int skip)
{
	uint32_t conns[COH_NODES_MAX], id;
	unsigned int i, k = 0, nseg = 1;
	struct mrrc_seg seg;
	int r;

	for (i = 0; i < n.nodes; i++)
		if (i != n.id)
			conns[k++] = n.peer[i].conn;
	if (!k)
		return 0;
	r = mrrc_export(n.fd, addr, len, access, conns, k, &seg, &nseg,
			&id);	/* it lives as long as the context */
	if (r < 0)
		return r;
	for (i = 0; !r && i < n.nodes; i++)
		if (i != n.id && i != skip)
			r = send_export(i, type, seg.rkey, tlen, seg.addr);
	return r;
}

/* -R: our table, for remote READ */
static int export_table(void)
{
	return export_to_peers(n.pub, n.pub_len, MRRC_ACCESS_REMOTE_READ, BM_EXPORT,
			       n.pages * n.pub_stride, n.nodes);
}

/* -Y, at the lock node: the lock words, for RDMA atomics */
static int export_locks(void)
{
	/* -X 17: node 0 has the forged one instead */
	return export_to_peers(n.lkw, n.lkw_len,
			       MRRC_ACCESS_REMOTE_READ | MRRC_ACCESS_REMOTE_ATOMIC,
			       BM_LOCKTAB, n.pages * 8, n.forge == 17 ? 0 : n.nodes);
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

static bool is_alive(const struct peer *p)
{
	return !p->dead;
}

static bool is_exported(const struct peer *p)
{
	return p->exported;
}

static bool is_done(const struct peer *p)
{
	return p->done;
}

static bool is_quiet(const struct peer *p)
{
	return !p->sends && !p->on;
}

/*
 * -F: the homes' file at the file server @addr:@port, on device @dev,
 * mapped for one-sided READs (and WRITEs where the server allows) with
 * @map.  Every home writes its pages there at the same places: the file
 * must hold them all (the server refuses a range past its end, EINVAL).
 */
static int fserve_open(const char *dev, const char *addr, unsigned int port, bool map)
{
	bool rw = true;
	int r;

	r = rfile_open(&n.rf, bench_device(dev), addr, port);
	if (r || !map)
		return r;
	r = rfile_map(n.rf, true);
	if (r == -EOPNOTSUPP) {	/* not on tmpfs: written through the server */
		rw = false;
		r = rfile_map(n.rf, false);
	}
	if (r) {
		/*
		 * Cannot be mapped (not tmpfs on Linux 6.5 and later, over
		 * RFILE_MAP_MAX, a server that does not MAP): through the
		 * server.  A connection that broke fails the first request.
		 */
		fprintf(stderr, PROG ": node %u: the file at %s:%u not mapped (%s): read and written through the server\n",
			n.id, addr, port, strerror(-r));
		return 0;
	}
	fprintf(stderr, PROG ": node %u: the file at %s:%u mapped, %llu bytes, %s\n",
		n.id, addr, port, (unsigned long long)rfile_mapped(n.rf),
		rw ? "RDMA READs and WRITEs" : "RDMA READs, writes through the server");
	return 0;
}

/*
 * -f, -M: the frames' pools; with -M the node's file in @dir (or at the
 * file server, -F, already open), every page homed here written to it
 * (the initial 0 and its body), none in a frame.
 */
static int frames_init(const char *dir)
{
	static const struct bm_tier copy_tier = { copy_in, copy_out, NULL };
	static const struct bm_tier home_tier = { home_in, home_out, NULL };
	char path[4096];
	unsigned int p;
	int r;

	if (n.frames) {
		r = bm_pool_create(&n.copies, n.frames, 1, &copy_tier);
		if (r)
			return r;
	}
	if (!n.home_frames)
		return 0;
	r = bm_pool_create(&n.homes, n.home_frames, 1, &home_tier);
	if (r)
		return r;
	if (!n.rf &&
	    (size_t)snprintf(path, sizeof(path), "%s/node.%u", dir, n.id) >= sizeof(path))
		return -ENAMETOOLONG;
	n.file = n.rf ? -1 : open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (!n.rf && n.file < 0)
		return -errno;
	n.iobuf = malloc(n.page_bytes);
	if (!n.iobuf)
		return -ENOMEM;
	n.filed = malloc(n.pages * sizeof(*n.filed));
	if (!n.filed)
		return -ENOMEM;
	for (p = 0; p < n.pages; p++)
		n.filed[p] = UINT64_MAX;	/* no value: never there yet */
	for (p = n.id, r = 0; p < n.pages && !r; p += n.nodes)
		r = home_out(NULL, p, NULL);
	if (r == -EINVAL && n.rf)	/* the server's answer to a range past its file */
		fprintf(stderr, PROG ": node %u: page %u past the end of the file at the server (-F)\n",
			n.id, p - n.nodes);
	n.home_stores = 0;
	return r;
}

/* The mean, p50 and p99 of @k latencies in ns at @x (sorted here), in µs. */
struct lat_stats {
	double mean_us, p50_us, p99_us;
};

static struct lat_stats lat_stats(uint64_t *x, size_t k)
{
	struct lat_stats st = { 0 };
	long double sum = 0;
	size_t i;

	if (!k)
		return st;
	qsort(x, k, sizeof(*x), bm_cmp_u64);
	for (i = 0; i < k; i++)
		sum += x[i];
	st.mean_us = (double)(sum / k) / 1e3;
	st.p50_us = (double)bm_percentile(x, k, 50) / 1e3;
	st.p99_us = (double)bm_percentile(x, k, 99) / 1e3;
	return st;
}

/*
 * -f, -M: what the buffer manager's levels did, as JSON lines: the
 * node's reads and writes (FIX and UNFIX) per second over @ns, their
 * latency (mean, p50, p99; the abandoned ones left out), and how often
 * a copy (the node's frames), the node's own home pages (reads answered
 * without a message: with the copies', what sits below the p50 or not)
 * or the file served.
 */
static int frames_report(uint64_t ns)
{
	uint64_t *lat = malloc((n.nhist + 1) * sizeof(*lat));
	struct lat_stats st;
	size_t i, k = 0;
	unsigned int m;

	if (!lat)
		return -ENOMEM;
	for (i = 0; i < n.nhist; i++) {
		const struct hist *h = &n.hist[i];

		if (h->op.res != UINT64_MAX &&
		    (h->kind == K_READ || h->kind == K_WRITE || h->kind == K_READ_1S))
			lat[k++] = h->op.res - h->op.inv;
	}
	st = lat_stats(lat, k);
	for (m = 0; m < 8; m++) {
		static const char *const metric[] = {
			"throughput_ops", "fix_mean_us", "fix_p50_us", "fix_p99_us",
			"copy_reads", "home_reads", "file_reads", "file_writes" };
		static const char *const unit[] = {
			"ops/s", "us", "us", "us", "ops", "ops", "pages", "pages" };
		double v = m == 0 ? n.completed * 1e9 / (double)(ns ? ns : 1) :
			   m == 1 ? st.mean_us : m == 2 ? st.p50_us : m == 3 ? st.p99_us :
			   m == 4 ? (double)n.copy_hits :
			   m == 5 ? (double)n.home_reads :
			   m == 6 ? (double)n.home_loads : (double)n.home_stores;

		printf("{\"bench\":\"bm\",\"metric\":\"%s\",\"value\":%.6g,\"unit\":\"%s\","
		       "\"node\":%u,\"nodes\":%u,\"pages\":%u,\"page_bytes\":%u,"
		       "\"frames\":%u,\"home_frames\":%u,\"write_pct\":%u,"
		       "\"zipf_theta\":%.3g,\"inflight\":%u,\"locking\":%d,\"ops\":%lu",
		       metric[m], v, unit[m], n.id, n.nodes, n.pages, n.page_bytes,
		       n.frames, n.home_frames, n.write_pct, n.theta, n.inflight,
		       n.locking, n.completed);
		bench_json_end(stdout);
	}
	free(lat);
	return 0;
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
	fprintf(f, "# bm-history 1 node %u nodes %u pages %u ops %zu inflight %u write_pct %u keys %u lock_node %u locking %u counter %u clocks %u %llu %lld %llu %llu %lld %llu one_sided %u page_bytes %u\n",
		n.id, n.nodes, n.pages, n.nhist, n.inflight, n.dht ? 0 : n.write_pct,
		n.keys, n.lock_node, n.locking, n.counter, n.clocks,
		(unsigned long long)n.fix[0].at, (long long)n.fix[0].offset,
		(unsigned long long)n.fix[0].err, (unsigned long long)n.fix[1].at,
		(long long)n.fix[1].offset, (unsigned long long)n.fix[1].err, n.onesided,
		n.page_bytes);
	for (i = 0; i < n.nhist; i++)
		fprintf(f, "%u %u %llu %llu %llu\n", n.hist[i].page,
			n.hist[i].kind, (unsigned long long)n.hist[i].op.value,
			(unsigned long long)n.hist[i].op.inv,
			(unsigned long long)n.hist[i].op.res);
	if (ferror(f)) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) ? -errno : 0;
}

/*
 * -Z: the node dies in the middle of its work, as a crashed one would
 * (its process ends, and the module tears its connections down; it
 * never says DONE).  First its history, with the writes in flight left
 * open (they may or may not take effect), so that the check can account
 * for what it did.
 */
static void die(const char *hist)
{
	unsigned int k;

	for (k = 0; k < n.inflight; k++)
		if (n.slot[k].busy)
			abandon(&n.slot[k], true);
	if (hist && write_history(hist))
		fprintf(stderr, PROG ": %s: cannot write the history\n", hist);
	fprintf(stderr, PROG ": node %u: dying after %lu operations (-Z)\n", n.id,
		n.completed);
	_exit(3);
}

/* -Z: time to die (with -x, holding a lock, to show what that does) */
static bool dies(void)
{
	unsigned int k;

	if (!n.die_at || n.completed < n.die_at)
		return false;
	for (k = 0; n.locking && k < n.inflight; k++)
		if (n.slot[k].busy && n.slot[k].lk == LK_HELD)
			return true;
	/* none held, and no more operations to come: die all the same */
	return !n.locking || n.completed + n.inflight >= n.ops;
}

static int cmd_node(int argc, char **argv)
{
	const char *addr = NULL, *peers = NULL, *dev = NULL, *out = NULL, *dir = NULL;
	const char *fsrv = NULL;
	unsigned int port = 7900, fport = 7960, i;
	bool map = false;
	uint64_t last_change = bm_now_ns(), last_count = 0, t0, t1;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int opt, r = 0;

	n = (struct node){ .nodes = 3, .pages = 8, .inflight = 4, .write_pct = 50,
			   .ops = 10000, .seed = 1, .page_bytes = 8, .file = -1 };
	while ((opt = getopt(argc, argv, "i:n:a:A:p:P:k:o:w:s:H:d:LK:X:Z:xYCl:TRSB:f:M:D:F:mz:")) != -1) {
		switch (opt) {
		case 'i': n.id = bench_opt_u64(PROG, "-i", optarg, 0, COH_NODES_MAX - 1); break;
		case 'n': n.nodes = bench_opt_u64(PROG, "-n", optarg, 1, COH_NODES_MAX); break;
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
		case 'K':
			n.keys = bench_opt_u64(PROG, "-K", optarg, 0, PAGES_MAX);
			n.dht = true;
			break;
		case 'X': n.forge = bench_opt_u64(PROG, "-X", optarg, 1, FORGE_KINDS); break;
		case 'Z': n.die_at = bench_opt_u64(PROG, "-Z", optarg, 1, 1ull << 32); break;
		case 'x': n.locking = true; break;
		case 'Y': n.one_lock = true; break;
		case 'C': n.counter = true; break;
		case 'T': n.clocks = true; break;
		case 'R': n.onesided = true; break;
		case 'S': n.stale = true; break;
		case 'B': n.page_bytes = bench_opt_u64(PROG, "-B", optarg, 8, PAGE_BYTES_MAX); break;
		case 'f': n.frames = bench_opt_u64(PROG, "-f", optarg, 4, PAGES_MAX); break;
		case 'M': n.home_frames = bench_opt_u64(PROG, "-M", optarg, 4, PAGES_MAX); break;
		case 'D': dir = optarg; break;
		case 'F':
			fsrv = bm_opt_addr(PROG, "-F", optarg, &fport);
			break;
		case 'm': map = true; break;
		case 'z': n.theta = bench_opt_double(PROG, "-z", optarg, 0, 0.999); break;
		case 'l': n.lock_node = bench_opt_u64(PROG, "-l", optarg, 0, COH_NODES_MAX - 1); break;
		default: return 2;
		}
	}
	if (!addr || optind != argc || n.id >= n.nodes || n.lock_node >= n.nodes ||
	    (n.die_at && (n.dht || n.counter || n.clocks || n.die_at >= n.ops)) ||
	    (n.dht && (n.locking || n.counter || n.onesided)) || (n.stale && !n.onesided) ||
	    (n.onesided && n.nodes > MRRC_EXPORT_CONNS + 1) ||
	    ((n.forge == 11 || n.forge == 12) && !n.onesided) || (n.forge == 13 && !n.clocks) ||
	    ((n.forge == 14 || n.forge == 15) && n.page_bytes == 8) || n.page_bytes % 8 ||
	    (n.one_lock && (!n.locking || n.die_at || (n.id == n.lock_node && n.ops) ||
			    n.nodes > MRRC_EXPORT_CONNS + 1)) ||
	    (n.forge && !n.id) ||	/* forgeries go to node 0 */
	    (n.forge == 16 && (!n.one_lock || n.id == n.lock_node)) ||
	    (n.forge == 17 && (!n.one_lock || n.id != n.lock_node)) ||
	    (!n.home_frames != !(dir || fsrv)) || (dir && fsrv) || (map && !fsrv) ||
	    (n.home_frames && n.onesided) ||
	    ((n.frames || n.home_frames) && n.dht)) {
		fprintf(stderr, "usage: " PROG " node -i ID -n NODES -a ADDR [-A ADDR,...] [-p PORT]\n"
			"  [-P PAGES] [-B PAGE_BYTES] [-k INFLIGHT] [-o OPS] [-w WRITE_PCT] [-s SEED]\n"
			"  [-H FILE] [-d DEV] [-L] [-x [-Y]] [-C] [-l LOCK_NODE] [-K KEYS] [-X FORGERY]\n"
			"  [-Z DIE_AFTER] [-T] [-R [-S]] [-f FRAMES] [-M HOME_FRAMES -D DIR|-F ADDR[:PORT] [-m]]\n"
			"  [-z THETA]\n");
		return 2;
	}
	bench_init(PROG, dev);
	n.seed ^= n.id * 2654435761u;
	n.home = calloc(n.pages, sizeof(*n.home));
	n.cache = calloc(n.pages, sizeof(*n.cache));
	n.nbuckets = n.keys / 4 + 1;
	n.ent = calloc(n.keys ? n.keys : 1, sizeof(*n.ent));
	n.bucket = malloc(n.nbuckets * sizeof(*n.bucket));
	n.held = calloc(n.pages, sizeof(*n.held));
	n.lk_page = calloc(n.pages, sizeof(*n.lk_page));
	/* the lock node serves locks whether it takes them or not */
	if (n.id == n.lock_node)
		n.locks = calloc(n.pages, sizeof(*n.locks));
	n.hint = (n.id + 1) % n.nodes;
	/* -B: the bodies (one byte more than nothing without it) */
	n.body_len = n.page_bytes - sizeof(uint64_t);
	n.msg_len = sizeof(struct bm_msg) + n.body_len;
	n.outbox_max = OUTBOX_BYTES / n.msg_len < OUTBOX_MAX ? OUTBOX_BYTES / n.msg_len :
		       OUTBOX_MAX;
	n.body = calloc((size_t)n.pages * n.body_len + 1, 1);
	n.pend = calloc((size_t)(n.pages / n.nodes + 1) * n.nodes * n.body_len + 1, 1);
	n.wbody = calloc((size_t)SLOTS_MAX * n.body_len + 1, 1);
	n.scratch = calloc(n.body_len + 1, 1);
	n.rbody = calloc(n.body_len + 1, 1);
	n.msg = calloc(n.msg_len, 1);
	n.atom = aligned_alloc(64, SLOTS_MAX * sizeof(*n.atom) + 64);
	n.atom_sink = n.atom ? n.atom + SLOTS_MAX : NULL;
	n.lkw_len = ((size_t)n.pages * 8 + 4095) & ~(size_t)4095;
	if (n.one_lock && n.id == n.lock_node) {
		n.lkw = aligned_alloc(4096, n.lkw_len);
		if (n.lkw)
			memset(n.lkw, 0, n.lkw_len);
	}
	n.pub_stride = sizeof(struct bm_pub) + n.body_len;
	if (!n.home || !n.cache || !n.ent || !n.bucket || !n.held || !n.lk_page ||
	    !n.body || !n.pend || !n.wbody || !n.scratch || !n.rbody || !n.msg ||
	    (n.id == n.lock_node && !n.locks) || !n.atom ||
	    (n.one_lock && n.id == n.lock_node && !n.lkw) ||
	    galloc_init(&n.ga, n.id, n.nodes, n.pages)) {
		fprintf(stderr, PROG ": node %u: out of memory\n", n.id);
		return 1;
	}
	for (i = 0; i < n.pages; i++)	/* the initial 0's */
		body_fill(body_of(i), i, 0);
	if (n.theta > 0) {	/* the same permutation at every node */
		uint64_t s = 1;

		n.perm = malloc(n.pages * sizeof(*n.perm));
		if (!n.perm) {
			fprintf(stderr, PROG ": node %u: out of memory\n", n.id);
			return 1;
		}
		bm_shuffle(n.perm, n.pages, &s);
		bm_zipf_init(&n.zipf, n.pages, n.theta);
		n.zseed = n.seed;
	}
	if (n.onesided) {	/* the table, page-aligned: one segment */
		n.pub_len = (n.pages * n.pub_stride + 4095) & ~(size_t)4095;
		n.pub = aligned_alloc(4096, n.pub_len);
		n.rd = calloc(SLOTS_MAX, n.pub_stride);
		if (!n.pub || !n.rd) {
			fprintf(stderr, PROG ": node %u: out of memory\n", n.id);
			return 1;
		}
		memset(n.pub, 0, n.pub_len);
		for (i = 0; i < n.pages; i++) {	/* the initial 0 */
			memcpy(pub_at(n.pub, i) + 1, body_of(i), n.body_len);
			pub_at(n.pub, i)->check = pub_check(i, body_hash(body_of(i)));
		}
	}
	for (i = 0; i < n.nbuckets; i++)
		n.bucket[i] = -1;
	for (i = 0; i < n.pages; i++) {
		if (n.locks)
			lock_init(&n.locks[i]);
		coh_home_init(&n.home[i], n.id, n.nodes, 0);
		coh_cache_init(&n.cache[i], n.id, home_of(i));
	}
	r = fsrv ? fserve_open(dev, fsrv, fport, map) : 0;
	if (r) {
		fprintf(stderr, PROG ": node %u: the file at %s:%u (-F): %s\n", n.id, fsrv,
			fport, strerror(-r));
		return 1;
	}
	r = frames_init(dir);	/* the homes' values known: into the file */
	if (r) {
		fprintf(stderr, PROG ": node %u: frames (-f, -M): %s\n", n.id, strerror(-r));
		return 1;
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
	for (t0 = bm_now_ns(); !r && !all(is_connected);) {
		r = progress(100);
		if (!r && bm_now_ns() - t0 > 30000000000ull)
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
	if (n.forge && n.forge != 12 && n.id && send_forgery())
		return 1;
	if (n.clocks && n.id)
		r = clock_measure(&n.fix[0]);
	if (r) {
		fprintf(stderr, PROG ": node %u: node 0's clock: %s\n", n.id, strerror(-r));
		return 1;
	}
	/* -R: every node's table exported to us, ours to them */
	r = n.onesided ? export_table() : 0;
	for (t1 = bm_now_ns(); !r && n.onesided && !all(is_exported);) {
		r = progress(100);
		if (!r && !all(is_alive))
			r = -EHOSTDOWN;	/* it did not take ours: no -R there */
		if (!r && bm_now_ns() - t1 > 30000000000ull)
			r = -ETIMEDOUT;
	}
	if (r) {
		fprintf(stderr, PROG ": node %u: exporting the table (-R): %s\n", n.id,
			strerror(-r));
		return 1;
	}
	if (n.forge == 12 && n.id && send_forgery())	/* behind the real EXPORT */
		return 1;
	/* -Y: the lock node's words exported, their place known here */
	r = n.one_lock && n.id == n.lock_node ? export_locks() : 0;
	for (t1 = bm_now_ns(); !r && n.one_lock && n.id != n.lock_node &&
	     !n.peer[n.lock_node].lkw_known;) {
		r = progress(100);
		if (!r && n.peer[n.lock_node].dead)
			r = -EHOSTDOWN;
		if (!r && bm_now_ns() - t1 > 30000000000ull)
			r = -ETIMEDOUT;
	}
	if (r) {
		fprintf(stderr, PROG ": node %u: the lock words (-Y): %s\n", n.id, strerror(-r));
		return 1;
	}
	t0 = bm_now_ns();
	n.phase_ns[P_INSERT] = t0;
	/* the workload, then serving the others until they are done too */
	while (!r && !(n.sent_done && all(is_done))) {
		r = n.dht ? dht_run() : start_ops();
		if (!r && dies())
			die(out);
		if (!r && !n.sent_done && (n.dht ? n.phase == P_END : n.completed >= n.ops)) {
			if (n.clocks && n.id)
				r = clock_measure(&n.fix[1]);
			for (i = 0; !r && i < n.nodes; i++)
				if (i != n.id && !n.peer[i].dead)
					r = send_msg(i, BM_DONE, 0, 0);
			n.sent_done = true;
			n.work_ns = bm_now_ns() - t0;
		}
		r = r ?: progress(100);
		if (!r && dies())
			die(out);
		if (n.events != last_count) {
			last_count = n.events;
			last_change = bm_now_ns();
		} else if (bm_now_ns() - last_change > IDLE_LIMIT_NS) {
			r = -ETIMEDOUT;
		}
	}
	/* our last messages (DONE among them) and atomics delivered before we go */
	for (t1 = bm_now_ns(); !r && (!all(is_quiet) || n.atoms);) {
		r = progress(100);
		if (!r && bm_now_ns() - t1 > IDLE_LIMIT_NS)
			r = -ETIMEDOUT;
	}
	if (r) {
		fprintf(stderr, PROG ": node %u: %s after %lu operations\n", n.id,
			strerror(-r), n.completed);
		return 1;
	}
	fprintf(stderr, PROG ": node %u: %lu operations in %.2f s, %lu messages sent, %lu received%s\n",
		n.id, n.completed, (bm_now_ns() - t0) / 1e9, n.sent, n.received,
		n.lie ? " (lying)" : "");
	if (n.body_len)
		fprintf(stderr, PROG ": node %u: pages of %u bytes, %lu bodies checked\n",
			n.id, n.page_bytes, n.bodies_checked);
	if (n.copies) {
		unsigned int held = 0;

		for (i = 0; i < n.pages; i++)
			held += home_of(i) != n.id && n.cache[i].state != COH_INVALID;
		fprintf(stderr, PROG ": node %u: frames (-f %u): %lu reads of a copy, %lu copies dropped for a frame, %u held at the end, %lu frames freed by invalidations\n",
			n.id, n.frames, n.copy_hits, n.copies_dropped, held, n.copies_invalidated);
		if (held > n.frames) {
			fprintf(stderr, PROG ": node %u: more copies than frames\n", n.id);
			return 1;
		}
	}
	if (n.homes)
		fprintf(stderr, PROG ": node %u: home frames (-M %u): %lu pages read from the file, %lu written to it\n",
			n.id, n.home_frames, n.home_loads, n.home_stores);
	if ((n.copies || n.homes) && frames_report(n.work_ns))
		return 1;
	if (n.onesided)
		fprintf(stderr, PROG ": node %u: %lu one-sided reads, %lu read again (torn)%s\n",
			n.id, n.reads_1s, n.torn, n.stale ? " (its table stale)" : "");
	if (n.clocks && n.id)
		fprintf(stderr, PROG ": node %u: node 0's clock %+.3f ms from ours (within %.3f ms) before, %+.3f ms (within %.3f ms) after\n",
			n.id, n.fix[0].offset / 1e6, n.fix[0].err / 1e6,
			n.fix[1].offset / 1e6, n.fix[1].err / 1e6);
	if (n.abandoned)
		fprintf(stderr, PROG ": node %u: %lu operations abandoned to a dead node\n",
			n.id, n.abandoned);
	if (n.locking)
		fprintf(stderr, PROG ": node %u: %lu locks taken at node %u%s\n", n.id,
			n.locks_taken, n.lock_node, n.counter ? ", every operation an increment" : "");
	if (n.one_lock && n.id != n.lock_node)
		fprintf(stderr, PROG ": node %u: one-sided locks (-Y): %lu tries found the lock taken\n",
			n.id, n.lock_refused);
	if (n.locking)
		fprintf(stderr, PROG ": node %u: its own operations took %.2f s\n", n.id,
			n.work_ns / 1e9);
	/*
	 * -Y, at the lock node: every node's DONE came after its releases
	 * (one connection, in order), so every word is 0 again, or a take,
	 * a give-back or a count was lost or made twice (a dead node's
	 * stay: not checked then).
	 */
	if (n.lkw && all(is_alive)) {
		for (i = 0; i < n.pages; i++) {
			if (n.lkw[i]) {
				fprintf(stderr, PROG ": node %u: page %u's lock word is %#llx at the end, not 0\n",
					n.id, i, (unsigned long long)n.lkw[i]);
				return 1;
			}
		}
	}
	if (n.dht)
		fprintf(stderr, PROG ": node %u: pages lent to others: %lu, refused them: %lu\n",
			n.id, n.lent, n.refused);
	if (n.dht && n.keys) {
		fprintf(stderr, PROG ": node %u: hash table of %u keys, %u of them in its own memory\n",
			n.id, n.keys, n.local_keys);
		for (i = 0; i < P_END; i++) {
			printf("{\"bench\":\"bm\",\"metric\":\"dht_throughput_ops\",\"value\":%.6g,"
			       "\"unit\":\"ops/s\",\"phase\":\"%s\",\"nodes\":%u,\"node\":%u,"
			       "\"keys\":%u,\"pages\":%u,\"inflight\":%u,\"local_keys\":%u",
			       n.keys * 1e9 / (double)(n.phase_ns[i] ? n.phase_ns[i] : 1),
			       phase_name[i], n.nodes, n.id, n.keys, n.pages, n.inflight,
			       n.local_keys);
			bench_json_end(stdout);
		}
	}
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
	free(n.ent);
	free(n.bucket);
	free(n.held);
	free(n.lk_page);
	free(n.locks);
	free(n.pub);
	free(n.rd);
	free(n.body);
	free(n.pend);
	free(n.wbody);
	free(n.scratch);
	free(n.rbody);
	free(n.msg);
	free(n.atom);
	free(n.lkw);
	free(n.perm);
	free(n.filed);
	if (n.copies)
		bm_pool_destroy(n.copies);
	if (n.homes)
		bm_pool_destroy(n.homes);
	if (n.file >= 0)
		close(n.file);
	if (n.rf)
		rfile_close(n.rf);
	free(n.iobuf);
	galloc_destroy(&n.ga);
	free(n.hist);
	return 0;
}

/* ---- bm check ------------------------------------------------------------- */

/* What a history's header says of its locks (all 0 in older histories). */
struct hist_locks {
	unsigned int lock_node, locking, counter;
};

/*
 * A number a history's header gives after " @key " (a header of an older
 * bm that has no such key: @dflt).
 */
static unsigned int hist_key(const char *header, const char *key, unsigned int dflt)
{
	size_t k = strlen(key);
	const char *p;
	unsigned int v;

	for (p = strstr(header, key); p; p = strstr(p + 1, key))
		if (p > header && p[-1] == ' ' && p[k] == ' ')
			return sscanf(p + k + 1, "%u", &v) == 1 ? v : dflt;
	return dflt;
}

static struct hist_locks hist_locks(const char *header)
{
	struct hist_locks h = {
		.lock_node = hist_key(header, "lock_node", 0),
		.locking = hist_key(header, "locking", 0),
		.counter = hist_key(header, "counter", 0),
	};

	return h;
}

/* Whether a history's header says its reads were one-sided (-R). */
static bool hist_one_sided(const char *header)
{
	return hist_key(header, "one_sided", 0) == 1;
}

/* How many bytes a history's pages had (-B; 8 if it does not say). */
static unsigned int hist_page_bytes(const char *header)
{
	return hist_key(header, "page_bytes", 8);
}

/*
 * What a history's header says of its clock (-T): whether the run's
 * nodes had clocks apart, and this node's two measurements of node 0's.
 */
struct hist_clock {
	unsigned int on;
	bool moved;		/* the node's times to be moved onto node 0's */
	struct clock_fix fix[2];
	uint64_t err;		/* the larger of the two */
};

/* 0, or -EINVAL for measurements that cannot be (a forged header). */
static int hist_clock(const char *header, unsigned int node, struct hist_clock *c)
{
	unsigned long long a0, e0, a1, e1;
	const char *p = strstr(header, " clocks ");
	long long o0, o1;

	memset(c, 0, sizeof(*c));
	if (!p)
		return 0;	/* an older history: one clock */
	if (sscanf(p, " clocks %u %llu %lld %llu %llu %lld %llu", &c->on,
		   &a0, &o0, &e0, &a1, &o1, &e1) != 7 || c->on > 1)
		return -EINVAL;
	c->fix[0] = (struct clock_fix){ .at = a0, .offset = o0, .err = e0 };
	c->fix[1] = (struct clock_fix){ .at = a1, .offset = o1, .err = e1 };
	/* two more: the times are rounded on the way (doubles, below 2^53) */
	c->err = (e0 > e1 ? e0 : e1) + 2;
	/* node 0's is the cluster's clock; the others measured theirs */
	if (!c->on || !node) {
		c->err = 0;
		return a0 || o0 || e0 || a1 || o1 || e1 ? -EINVAL : 0;
	}
	c->moved = true;
	/*
	 * Two measurements, the second after the first, offsets that a
	 * double holds exactly, and clocks that drifted apart no faster than
	 * CLOCK_DRIFT_PPM (beyond the measurements' error): the straight line
	 * through them is then the model; otherwise refused.
	 */
	if (!e0 || !e1 || e0 > CLOCK_ERR_MAX_NS || e1 > CLOCK_ERR_MAX_NS ||
	    a1 <= a0 || a1 > 1ull << 52 || o0 < -(1ll << 52) || o0 > 1ll << 52 ||
	    o1 < -(1ll << 52) || o1 > 1ll << 52 ||
	    (uint64_t)(o1 > o0 ? o1 - o0 : o0 - o1) > (a1 - a0) / 1000000 * CLOCK_DRIFT_PPM + e0 + e1)
		return -EINVAL;
	return 0;
}

/*
 * A time of a node's history on node 0's clock: the offset drawn as a
 * straight line through its two measurements (a clock that drifts at a
 * steady rate).  0 if that is not a time of node 0's, or not one between
 * the measurements (where the node did all it logged: the line is not
 * drawn beyond them).
 */
static uint64_t on_clock0(const struct hist_clock *c, uint64_t t)
{
	double off = (double)c->fix[0].offset, x;

	if (!c->moved)
		return t;
	if (t < c->fix[0].at || t > c->fix[1].at)
		return 0;
	off += ((double)c->fix[1].offset - (double)c->fix[0].offset) *
	       ((double)t - (double)c->fix[0].at) /
	       (double)(c->fix[1].at - c->fix[0].at);
	x = (double)t + off;
	return x > 0 && x < 4.6e18 ? (uint64_t)x : 0;
}

struct hold {
	uint64_t inv, res;
	bool excl;
};

static int cmp_hold(const void *a, const void *b)
{
	const struct hold *x = a, *y = b;

	return x->inv < y->inv ? -1 : x->inv > y->inv;
}

/*
 * Whether the lock holds of one page ever broke mutual exclusion: an
 * exclusive hold overlapping any other, a shared one overlapping an
 * exclusive one (one clock).  A hold that starts when another ends does
 * not overlap it: a release and the next grant at the lock node itself
 * can be closer than the clock's tick.  Sorted by start, each hold meets
 * the latest end of those before it.
 */
static bool holds_overlap(struct hold *h, size_t nh, char *why, size_t len)
{
	uint64_t end_any = 0, end_x = 0;
	size_t i;

	if (!nh)
		return false;
	qsort(h, nh, sizeof(*h), cmp_hold);
	for (i = 0; i < nh; i++) {
		if (i && (h[i].excl ? end_any : end_x) > h[i].inv) {
			snprintf(why, len, "a%s lock held from %llu overlaps a%s one",
				 h[i].excl ? "n exclusive" : " shared",
				 (unsigned long long)h[i].inv,
				 end_x > h[i].inv ? "n exclusive" : " shared");
			return true;
		}
		if (h[i].res > end_any)
			end_any = h[i].res;
		if (h[i].excl && h[i].res > end_x)
			end_x = h[i].res;
	}
	return false;
}

/*
 * Two completed writes of one value on a page: with -C (increments), an
 * update lost.  (A write that never completed may or may not have taken
 * effect: it is not counted.)
 */
static bool lost_update(const struct lin_op *ops, size_t nops, char *why, size_t len)
{
	uint64_t *v = malloc((nops ? nops : 1) * sizeof(*v));
	size_t i, k = 0;
	bool lost = false;

	if (!v)
		return false;	/* lin_check() will say -ENOMEM */
	for (i = 0; i < nops; i++)
		if (ops[i].write && ops[i].res != UINT64_MAX)
			v[k++] = ops[i].value;
	qsort(v, k, sizeof(*v), bm_cmp_u64);
	for (i = 1; i < k && !lost; i++) {
		if (v[i] == v[i - 1]) {
			snprintf(why, len, "two writes of %llu: an update was lost",
				 (unsigned long long)v[i]);
			lost = true;
		}
	}
	free(v);
	return lost;
}

static int cmd_check(int argc, char **argv)
{
	unsigned int pages = 0, nodes = 0, node, nn, np, page, files = 0, i;
	struct lin_op **ops = NULL;
	struct hold **hl = NULL;
	size_t *nops = NULL, *cap = NULL, *nhl = NULL, *hcap = NULL, total = 0, cnt, lines;
	size_t holds = 0;
	unsigned long bad = 0, bad_lock = 0;
	struct hist_locks hlk, lock_cfg = { 0 };
	struct hist_clock clk;
	unsigned int clocks = 0;
	uint32_t seen = 0;	/* the nodes whose history came */
	struct hist_clock nclk[COH_NODES_MAX] = { 0 };	/* each node's */
	int onesided = 0;	/* the histories' reads: -R */
	unsigned int page_bytes = 8;	/* the first's pages (-B) */
	uint64_t clock_err = 0;
	size_t holds_unproven = 0;
	unsigned long long v, a, b;
	char line[512], why[256];
	int w, r = 0, k;

	bench_init(PROG, NULL);
	for (k = 1; k < argc; k++) {
		FILE *f = fopen(argv[k], "r");

		node = COH_NODES_MAX;
		if (!f || !fgets(line, sizeof(line), f) ||
		    sscanf(line, "# bm-history 1 node %u nodes %u pages %u ops %zu",
			   &node, &nn, &np, &cnt) != 4 || !np || np > PAGES_MAX ||
		    !nn || nn > COH_NODES_MAX || node >= nn || seen >> node & 1 ||
		    (pages && (np != pages || nn != nodes))) {
			fprintf(stderr, PROG ": %s: not a history of this cluster%s\n", argv[k],
				node < COH_NODES_MAX && seen >> node & 1 ? " (its node's twice)" : "");
			return 2;
		}
		seen |= 1u << node;
		/* the lock node, -x and -C: the same at every node */
		hlk = hist_locks(line);
		if (files && (hlk.lock_node != lock_cfg.lock_node ||
			      hlk.locking != lock_cfg.locking || hlk.counter != lock_cfg.counter)) {
			fprintf(stderr, PROG ": %s: another lock node, -x or -C than %s\n",
				argv[k], argv[1]);
			return 2;
		}
		lock_cfg = hlk;
		/* -T: every node's times onto node 0's clock, give or take err */
		if (hist_clock(line, node, &clk) || (files && clk.on != clocks)) {
			fprintf(stderr, PROG ": %s: %s\n", argv[k], files && clk.on != clocks ?
				"clocks apart (-T) in some histories only" :
				"a clock measurement that cannot be");
			return 2;
		}
		clocks = clk.on;
		nclk[node] = clk;
		if (hist_one_sided(line))
			onesided = 1;
		if (files && hist_page_bytes(line) != page_bytes) {
			fprintf(stderr, PROG ": %s: pages of another size (-B) than %s's\n",
				argv[k], argv[1]);
			return 2;
		}
		page_bytes = hist_page_bytes(line);
		if (clk.err > clock_err)
			clock_err = clk.err;
		if (!pages) {
			pages = np;
			nodes = nn;
			ops = calloc(pages, sizeof(*ops));
			nops = calloc(pages, sizeof(*nops));
			cap = calloc(pages, sizeof(*cap));
			hl = calloc(pages, sizeof(*hl));
			nhl = calloc(pages, sizeof(*nhl));
			hcap = calloc(pages, sizeof(*hcap));
			if (!ops || !nops || !cap || !hl || !nhl || !hcap)
				return 1;
		}
		files++;
		for (lines = 0; fgets(line, sizeof(line), f); lines++) {
			if (sscanf(line, "%u %d %llu %llu %llu", &page, &w, &v, &a, &b) != 5 ||
			    page >= pages || w < 0 || w >= K_KINDS) {
				fprintf(stderr, PROG ": %s: a bad line\n", argv[k]);
				return 2;
			}
			if (w == K_SHARED || w == K_EXCL) {	/* a lock held */
				uint64_t a0 = on_clock0(&clk, a), b0 = on_clock0(&clk, b);

				if (v > a || a > b || !a0 || !b0) {
					fprintf(stderr, PROG ": %s: a bad line\n", argv[k]);
					return 2;
				}
				/*
				 * Clocks apart: only what surely was held
				 * (shrunk by the clock's error) can be
				 * shown to overlap.
				 */
				if (clk.moved) {
					a = a0 + clk.err;
					b = b0 > clk.err ? b0 - clk.err : 0;
					if (a >= b) {
						holds++;
						holds_unproven++;
						continue;
					}
				}
				if (nhl[page] == hcap[page]) {
					hcap[page] = hcap[page] ? hcap[page] * 2 : 1024;
					hl[page] = realloc(hl[page], hcap[page] * sizeof(**hl));
					if (!hl[page])
						return 1;
				}
				hl[page][nhl[page]++] = (struct hold){ .inv = a, .res = b,
								       .excl = w == K_EXCL };
				holds++;
				continue;
			}
			if (w != K_READ && w != K_WRITE && w != K_READ_1S)	/* Malloc, Free */
				continue;
			/*
			 * Clocks apart: every time the operation may have
			 * been running (widened by the clock's error), so
			 * a violation found is one whatever the error was.
			 */
			if (clk.moved) {
				uint64_t a0 = on_clock0(&clk, a);
				uint64_t b0 = b == UINT64_MAX ? b : on_clock0(&clk, b);

				if (a0 <= clk.err || !b0 || b0 > UINT64_MAX - clk.err) {
					fprintf(stderr, PROG ": %s: a bad line\n", argv[k]);
					return 2;
				}
				a = a0 - clk.err;
				b = b == UINT64_MAX ? b : b0 + clk.err;
			}
			if (nops[page] == cap[page]) {
				cap[page] = cap[page] ? cap[page] * 2 : 4096;
				ops[page] = realloc(ops[page], cap[page] * sizeof(**ops));
				if (!ops[page])
					return 1;
			}
			ops[page][nops[page]++] = (struct lin_op){ .write = w == K_WRITE, .value = v,
								  .inv = a, .res = b };
			total++;
		}
		fclose(f);
		if (lines != cnt) {
			fprintf(stderr, PROG ": %s: %zu operations, not %zu: cut short\n",
				argv[k], lines, cnt);
			return 2;
		}
	}
	if (!files) {
		fprintf(stderr, "usage: " PROG " check HISTORY...\n");
		return 2;
	}
	for (i = 0; i < pages; i++) {
		why[0] = '\0';
		if (holds_overlap(hl[i], nhl[i], why, sizeof(why))) {
			fprintf(stderr, PROG ": page %u: not mutually exclusive: %s\n", i, why);
			bad_lock++;
		}
		free(hl[i]);
		k = lock_cfg.counter && lost_update(ops[i], nops[i], why, sizeof(why)) ? 1 :
		    lin_check(ops[i], nops[i], 0, why, sizeof(why));
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
	/* locking: whether the histories held locks (bm node -x) */
	printf("{\"bench\":\"bm\",\"metric\":\"linearizability_ops\",\"value\":%zu,\"unit\":\"ops\",\"nodes\":%u,\"pages\":%u,\"histories\":%u,\"locking\":%d,\"one_sided\":%d,\"page_bytes\":%u",
	       total, nodes, pages, files, holds > 0, onesided, page_bytes);
	bench_json_end(stdout);
	printf("{\"bench\":\"bm\",\"metric\":\"linearizability_violations\",\"value\":%lu,\"unit\":\"pages\",\"nodes\":%u,\"pages\":%u,\"histories\":%u,\"locking\":%d,\"one_sided\":%d,\"page_bytes\":%u",
	       bad, nodes, pages, files, holds > 0, onesided, page_bytes);
	bench_json_end(stdout);
	if (holds) {
		printf("{\"bench\":\"bm\",\"metric\":\"lock_holds\",\"value\":%zu,\"unit\":\"holds\",\"nodes\":%u,\"pages\":%u,\"histories\":%u",
		       holds, nodes, pages, files);
		bench_json_end(stdout);
		printf("{\"bench\":\"bm\",\"metric\":\"mutual_exclusion_violations\",\"value\":%lu,\"unit\":\"pages\",\"nodes\":%u,\"pages\":%u,\"histories\":%u",
		       bad_lock, nodes, pages, files);
		bench_json_end(stdout);
	}
	if (clocks) {	/* nodes on machines of their own (-T) */
		printf("{\"bench\":\"bm\",\"metric\":\"clock_error_us\",\"value\":%.3f,\"unit\":\"us\",\"nodes\":%u,\"pages\":%u,\"histories\":%u",
		       clock_err / 1e3, nodes, pages, files);
		bench_json_end(stdout);
		/* each node's: node 0's clock ahead of it, how that moved, the errors */
		for (i = 0; i < nodes && i < COH_NODES_MAX; i++) {
			const struct hist_clock *c = &nclk[i];
			const double x[4] = {
				c->fix[0].offset / 1e6,
				((double)c->fix[1].offset - (double)c->fix[0].offset) * 1e6 /
				(double)(c->fix[1].at - c->fix[0].at),
				c->fix[0].err / 1e3, c->fix[1].err / 1e3 };
			static const char *const name[4] = {
				"clock_offset_ms", "clock_drift_ppm",
				"clock_error_before_us", "clock_error_after_us" };
			static const char *const unit[4] = { "ms", "ppm", "us", "us" };

			for (k = 0; c->moved && k < 4; k++) {
				printf("{\"bench\":\"bm\",\"metric\":\"%s\",\"value\":%.3f,\"unit\":\"%s\",\"node\":%u,\"nodes\":%u,\"pages\":%u,\"histories\":%u",
				       name[k], x[k], unit[k], i, nodes, pages, files);
				bench_json_end(stdout);
			}
		}
		if (holds) {
			printf("{\"bench\":\"bm\",\"metric\":\"lock_holds_unproven\",\"value\":%zu,\"unit\":\"holds\",\"nodes\":%u,\"pages\":%u,\"histories\":%u",
			       holds_unproven, nodes, pages, files);
			bench_json_end(stdout);
			fprintf(stderr, PROG ": %zu lock holds shorter than twice the clocks' error (%.3f ms) cannot be shown to overlap\n",
				holds_unproven, clock_err / 1e6);
		}
	}
	free(ops);
	free(nops);
	free(cap);
	free(hl);
	free(nhl);
	free(hcap);
	return r ? r : bad || bad_lock ? 1 : 0;
}

/*
 * bm lat HISTORY...: how long the operations of the histories took, by
 * kind (read, write, malloc, free) and by where the page's home was
 * (local: the node that ran the operation, remote: another), as the
 * paper's §6.1 reports them: metrics op_mean_us, op_p50_us, op_p99_us
 * and op_count.
 */
static int cmd_lat(int argc, char **argv)
{
	struct { uint64_t *v; size_t n, cap; } g[K_KINDS][2] = { 0 };
	unsigned int node, nn, np, page, files = 0, w, l;
	unsigned int inflight = 0, wpct = 0, keys = 0, kk, ww, kx = 0;
	unsigned int nodes = 0, pages = 0;
	struct hist_locks hlk, first = { 0 };
	size_t lines;
	unsigned long long v, a, b;
	char line[512];
	bool onesided = false;	/* the first history's reads: -R */
	unsigned int page_bytes = 8;	/* and its pages (-B) */
	size_t cnt;
	int k, r = 0;

	bench_init(PROG, NULL);
	for (k = 1; k < argc && !r; k++) {
		FILE *f = fopen(argv[k], "r");

		if (!f || !fgets(line, sizeof(line), f) ||
		    sscanf(line, "# bm-history 1 node %u nodes %u pages %u ops %zu",
			   &node, &nn, &np, &cnt) != 4 || !nn || node >= nn ||
		    !np || np > PAGES_MAX || (files && (nn != nodes || np != pages ||
						     hist_page_bytes(line) != page_bytes))) {
			fprintf(stderr, PROG ": %s: not a history of this cluster\n", argv[k]);
			if (f)
				fclose(f);
			r = 2;
			break;
		}
		/* what the nodes ran with, if the history says (the first's) */
		if (sscanf(line, "# bm-history 1 node %*u nodes %*u pages %*u ops %*u inflight %u write_pct %u keys %u",
			   &kk, &ww, &kx) >= 2 && !files) {
			inflight = kk;
			wpct = ww;
			keys = kx;
		}
		/* where its locks were: local if this node was the lock node */
		hlk = hist_locks(line);
		if (!files) {
			first = hlk;
			onesided = hist_one_sided(line);
			page_bytes = hist_page_bytes(line);
		}
		nodes = nn;
		pages = np;
		files++;
		for (lines = 0; fgets(line, sizeof(line), f); lines++) {
			void *nv;

			if (sscanf(line, "%u %u %llu %llu %llu", &page, &w, &v, &a, &b) != 5 ||
			    page >= np || w >= K_KINDS || b < a) {
				fprintf(stderr, PROG ": %s: a bad line\n", argv[k]);
				r = 2;
				break;
			}
			if (b == UINT64_MAX)	/* never completed: no latency */
				continue;
			l = page % nn == node;
			if (w == K_SHARED || w == K_EXCL) {
				/* a lock: how long it took to get (asked at v) */
				if (v > a) {
					fprintf(stderr, PROG ": %s: a bad line\n", argv[k]);
					r = 2;
					break;
				}
				l = hlk.lock_node == node;
				b = a;
				a = v;
			}
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
		if (!r && lines != cnt) {
			fprintf(stderr, PROG ": %s: %zu operations, not %zu: cut short\n",
				argv[k], lines, cnt);
			r = 2;
		}
	}
	if (!r && !files) {
		fprintf(stderr, "usage: " PROG " lat HISTORY...\n");
		r = 2;
	}
	for (w = 0; w < K_KINDS; w++) {
		for (l = 0; l < 2; l++) {
			static const char *const metric[] = {
				"op_count", "op_mean_us", "op_p50_us", "op_p99_us" };
			uint64_t *x = g[w][l].v;
			size_t nx = g[w][l].n, m;
			struct lat_stats st;
			double val;

			if (r || !nx)
				goto next;
			st = lat_stats(x, nx);
			for (m = 0; m < 4; m++) {
				val = m == 0 ? (double)nx : m == 1 ? st.mean_us :
				      m == 2 ? st.p50_us : st.p99_us;
				printf("{\"bench\":\"bm\",\"metric\":\"%s\",\"value\":%.6g,"
				       "\"unit\":\"%s\",\"op\":\"%s\",\"where\":\"%s\","
				       "\"nodes\":%u,\"pages\":%u,\"histories\":%u,\"inflight\":%u,"
				       "\"write_pct\":%u,\"keys\":%u,\"locking\":%u,\"lock_node\":%u,"
				       "\"one_sided\":%d,\"page_bytes\":%u",
				       metric[m], val, m ? "us" : "ops", kind_name[w],
				       l ? "local" : "remote", nodes, pages, files, inflight,
				       wpct, keys, first.locking, first.lock_node, onesided,
				       page_bytes);
				bench_json_end(stdout);
			}
next:
			free(x);
		}
	}
	return r;
}

/*
 * bm fserve -a ADDR [-p PORT] -f FILE -s BYTES [-I SECONDS] [-d DEV]: a
 * file on this node for the others (FReadF and FPrintF, rfile.h), until
 * SIGTERM; a client that asks nothing for -I seconds (120) is dropped.
 */
static int cmd_fserve(int argc, char **argv)
{
	const char *addr = NULL, *path = NULL, *dev = NULL;
	unsigned int port = 7960, idle = 120;
	uint64_t size = 0;
	int opt, r;

	while ((opt = getopt(argc, argv, "a:p:f:s:I:d:")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'p': port = bench_opt_u64(PROG, "-p", optarg, 1, 65535); break;
		case 'f': path = optarg; break;
		case 's': size = bench_opt_u64(PROG, "-s", optarg, 1, 1ull << 40); break;
		case 'I': idle = bench_opt_u64(PROG, "-I", optarg, 1, 86400); break;
		case 'd': dev = optarg; break;
		default: return 2;
		}
	}
	if (!addr || !path || !size || optind != argc) {
		fprintf(stderr, "usage: " PROG " fserve -a ADDR [-p PORT] -f FILE -s BYTES [-I SECONDS] [-d DEV]\n");
		return 2;
	}
	bench_init(PROG, dev);
	r = rfile_serve(bench_device(dev), addr, port, path, size, idle);
	if (r) {
		fprintf(stderr, PROG " fserve: %s: %s\n", path, strerror(-r));
		return 1;
	}
	return 0;
}

/*
 * bm fprobe -I SECONDS, against a server started with the same -I: the
 * clients that hold its 16 slots.  16 clients map the file; a 17th is
 * turned away; one of the 16 goes on reading one-sidedly (and PINGs, see
 * rfile.h) for twice the idle time and more while the 15 others say
 * nothing: they are dropped (a read of theirs fails), the reader is not,
 * and a new client is served.  The number of wrong outcomes (of 5).
 */
static unsigned int probe_idle(const char *dev, const char *addr, unsigned int port,
			       unsigned int idle_s)
{
	struct rfile *f[16] = { NULL }, *late = NULL;
	unsigned int i, bad = 0, reads = 0, still = 0;
	uint64_t t0;
	uint8_t b[32];
	int r = 0;

	/* (the reader reads after each: it is not to go idle meanwhile) */
	for (i = 0; i < 16 && !r; i++) {
		r = rfile_open(&f[i], dev, addr, port);
		r = r ?: rfile_map(f[i], false);
		r = r ?: rfile_read(f[0], 0, b, sizeof(b));
	}
	/*
	 * Each reads once more: one whose MAP is older than a quarter of
	 * the idle time PINGs, so that a slow start cannot have the first
	 * of them dropped before the 17th knocks.
	 */
	for (i = 0; i < 16 && !r; i++)
		r = rfile_read(f[i], 0, b, sizeof(b));
	if (r) {
		fprintf(stderr, PROG " fprobe: mapped client %u: %s\n", i - 1, strerror(-r));
		bad = 5;
		goto out;
	}
	r = rfile_open(&late, dev, addr, port);
	if (!r) {
		fprintf(stderr, PROG " fprobe: a 17th client was served\n");
		rfile_close(late);
		late = NULL;
		bad++;
	} else {
		fprintf(stderr, PROG " fprobe: a 17th client turned away: %s\n", strerror(-r));
	}
	/* reads at an eighth of the idle time: a PING every other one */
	t0 = bm_now_ns();
	while (bm_now_ns() - t0 < (2ull * idle_s + 2) * 1000000000ull) {
		r = rfile_read(f[0], 0, b, sizeof(b));
		if (r)
			break;
		reads++;
		nanosleep(&(struct timespec){ .tv_sec = idle_s / 8,
					      .tv_nsec = idle_s % 8 * 125000000l }, NULL);
	}
	if (r) {
		fprintf(stderr, PROG " fprobe: the reading client, read %u: %s\n", reads + 1,
			strerror(-r));
		bad++;
	}
	/* and it is still served at the end of it */
	r = rfile_read(f[0], 0, b, sizeof(b));
	if (r) {
		fprintf(stderr, PROG " fprobe: the reading client, at the end: %s\n", strerror(-r));
		bad++;
	}
	for (i = 1; i < 16; i++)
		still += !rfile_read(f[i], 0, b, sizeof(b));
	fprintf(stderr, PROG " fprobe: %u reads over %u s; %u of the 15 silent clients still read\n",
		reads, 2 * idle_s + 2, still);
	bad += still > 0;
	r = rfile_open(&late, dev, addr, port);
	r = r ?: rfile_map(late, false);
	r = r ?: rfile_read(late, 0, b, sizeof(b));
	if (r) {
		fprintf(stderr, PROG " fprobe: a new client after them: %s\n", strerror(-r));
		bad++;
	}
out:
	rfile_close(late);
	for (i = 0; i < 16; i++)
		rfile_close(f[i]);
	return bad;
}

/*
 * bm fprobe -R ADDR[:PORT]: what a hostile client sends a file server
 * (a message shorter than a header, a bad magic, an unknown op, lengths
 * of 0, over the limit and not what arrived, ranges past the end and
 * wrapping around), each of which must be answered with EPROTO or
 * EINVAL, then an honest write and read back, which must work.  Exit
 * status 0 if all did.
 */
/* What fprobe writes at the start of the file and reads back every way. */
static const char fprobe_rec[33] = "an honest write, then read back.";

/*
 * One-sided WRITEs on a file server's export (fprobe), as a hostile
 * client would post them: with a read-only export's key, or straddling
 * either end of a writable export.  Each must fail, end that client's
 * connection (a new client each time) and leave the file's bytes as
 * they were; a WRITE inside a writable export lands in the file (read
 * back through the server).  The number of wrong outcomes.
 */
static unsigned int probe_writes(const char *dev, const char *addr, unsigned int port)
{
	static const char good[33] = "a one-sided WRITE, read back....";
	static const char junk[33] = "a write nobody should ever get..";
	struct { const char *what; bool rw; int end; } w[] = {
		{ "a WRITE with a read-only export's key", false, 0 },
		{ "a WRITE across a writable export's end", true, 1 },
		{ "a WRITE across a writable export's start", true, -1 },
	};
	uint8_t tail[16], back[32];
	unsigned int i, bad = 0;
	struct rfile *f;
	uint64_t size;
	int r;

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		f = NULL;
		r = rfile_open(&f, dev, addr, port);
		r = r ?: rfile_map(f, w[i].rw);
		size = r ? 0 : rfile_mapped(f);
		r = r ?: size < 64 ? -EFBIG : 0;
		/* the file's last 16 bytes, before */
		r = r ?: rfile_read(f, size - 16, tail, 16);
		if (r) {
			fprintf(stderr, PROG " fprobe: %s: could not begin: %s\n", w[i].what,
				strerror(-r));
			rfile_close(f);
			bad++;
			continue;
		}
		r = rfile_poke(f, w[i].end > 0 ? (int64_t)size - 16 :
				  w[i].end < 0 ? -16 : 0, junk, 32);
		fprintf(stderr, PROG " fprobe: %s: %s\n", w[i].what,
			r ? strerror(r < 0 ? -r : r) : "done (wrong)");
		bad += !r;
		rfile_close(f);
		/* the file as it was: its first 32 bytes and its last 16 */
		f = NULL;
		r = rfile_open(&f, dev, addr, port);
		r = r ?: rfile_read(f, 0, back, 32);
		r = r ?: memcmp(back, fprobe_rec, 32) ? -EIO : 0;
		r = r ?: rfile_read(f, size - 16, back, 16);
		r = r ?: memcmp(back, tail, 16) ? -EIO : 0;
		if (r) {
			fprintf(stderr, PROG " fprobe: %s: the file after it: %s\n",
				w[i].what, strerror(-r));
			bad++;
		}
		rfile_close(f);
	}
	/* a WRITE where it may write: in the file, as the server reads it */
	f = NULL;
	r = rfile_open(&f, dev, addr, port);
	r = r ?: rfile_map(f, true);
	r = r ?: rfile_write(f, 64, good, 32);
	rfile_close(f);
	f = NULL;
	r = r ?: rfile_open(&f, dev, addr, port);
	r = r ?: rfile_read(f, 64, back, 32);
	rfile_close(f);
	if (r || memcmp(back, good, 32)) {
		fprintf(stderr, PROG " fprobe: a one-sided WRITE read back through the server: %s\n",
			r ? strerror(-r) : "not what was written");
		bad++;
	}
	return bad;
}

static int cmd_fprobe(int argc, char **argv)
{
	struct probe { const char *what; uint8_t op; uint32_t magic, len; uint64_t off;
		       size_t extra, cut; int status; };
	static const struct probe p[] = {
		{ "a message shorter than a header", RFILE_READ, RFILE_MAGIC, 8, 0, 0, 10, EPROTO },
		{ "a bad magic", RFILE_READ, 0x12345678, 8, 0, 0, 0, EPROTO },
		{ "an unknown op", 99, RFILE_MAGIC, 8, 0, 0, 0, EPROTO },
		{ "a PING with a length", RFILE_PING, RFILE_MAGIC, 8, 0, 0, 0, EPROTO },
		{ "an answer's op", RFILE_DATA, RFILE_MAGIC, 8, 0, 0, 0, EPROTO },
		{ "a read of 0 bytes", RFILE_READ, RFILE_MAGIC, 0, 0, 0, 0, EINVAL },
		{ "a read over the limit", RFILE_READ, RFILE_MAGIC, RFILE_DATA_MAX + 1, 0, 0, 0, EINVAL },
		{ "a read past the end", RFILE_READ, RFILE_MAGIC, 8, 1ull << 40, 0, 0, EINVAL },
		{ "a range that wraps around", RFILE_READ, RFILE_MAGIC, 16, UINT64_MAX - 7, 0, 0, EINVAL },
		{ "a read carrying data", RFILE_READ, RFILE_MAGIC, 8, 0, 8, 0, EINVAL },
		{ "a write shorter than it says", RFILE_WRITE, RFILE_MAGIC, 64, 0, 32, 0, EINVAL },
		{ "a write longer than it says", RFILE_WRITE, RFILE_MAGIC, 8, 0, 64, 0, EINVAL },
	};
	uint8_t msg[sizeof(struct rfile_hdr) + 64] = { 0 }, back[64];
	const char *addr = NULL, *dev = NULL;
	unsigned int port = 7960, i, bad = 0, idle = 0;
	struct rfile_hdr *h = (struct rfile_hdr *)msg, ans;
	struct rfile *f;
	int opt, r;

	while ((opt = getopt(argc, argv, "R:I:d:")) != -1) {
		switch (opt) {
		case 'R':
			addr = bm_opt_addr(PROG, "-R", optarg, &port);
			break;
		case 'I': idle = bench_opt_u64(PROG, "-I", optarg, 1, 60); break;
		case 'd': dev = optarg; break;
		default: return 2;
		}
	}
	if (!addr || optind != argc) {
		fprintf(stderr, "usage: " PROG " fprobe -R ADDR[:PORT] [-I SECONDS] [-d DEV]\n");
		return 2;
	}
	bench_init(PROG, dev);
	if (idle) {
		bad = probe_idle(bench_device(dev), addr, port, idle);
		fprintf(stderr, PROG " fprobe: %u of 5 outcomes wrong\n", bad);
		return bad ? 1 : 0;
	}
	r = rfile_open(&f, bench_device(dev), addr, port);
	if (r) {
		fprintf(stderr, PROG " fprobe: %s:%u: %s\n", addr, port, strerror(-r));
		return 1;
	}
	for (i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
		*h = (struct rfile_hdr){ .magic = p[i].magic, .op = p[i].op, .tag = 100 + i,
					 .len = p[i].len, .off = p[i].off };
		r = rfile_raw(f, msg, p[i].cut ? p[i].cut : sizeof(*h) + p[i].extra, &ans);
		if (r < 0 || ans.status != p[i].status || ans.len ||
		    (p[i].cut ? 0 : ans.tag != 100 + i)) {
			fprintf(stderr, PROG " fprobe: %s: answered %d, status %d, tag %u; expected status %d\n",
				p[i].what, r, r < 0 ? 0 : ans.status, ans.tag, p[i].status);
			bad++;
		} else {
			fprintf(stderr, PROG " fprobe: %s: %s\n", p[i].what,
				strerror(ans.status));
		}
	}
	/* and the server still serves */
	memcpy(back, fprobe_rec, 32);
	r = rfile_write(f, 0, back, 32);
	memset(back, 0, sizeof(back));
	r = r ?: rfile_read(f, 0, back, 32);
	if (r || memcmp(back, fprobe_rec, 32)) {
		fprintf(stderr, PROG " fprobe: the honest write and read: %s\n",
			r ? strerror(-r) : "not what was written");
		bad++;
	}
	/*
	 * The file exported for one-sided reads: the record read back with
	 * an RDMA READ; a read past the export refused here; a second MAP
	 * refused by the server.
	 */
	r = rfile_map(f, false);
	memset(back, 0, sizeof(back));
	r = r ?: rfile_read(f, 0, back, 32);
	if (r || memcmp(back, fprobe_rec, 32)) {
		fprintf(stderr, PROG " fprobe: the read with RDMA READ: %s\n",
			r ? strerror(-r) : "not what was written");
		bad++;
	}
	if (rfile_read(f, 1ull << 40, back, 8) != -EINVAL) {
		fprintf(stderr, PROG " fprobe: a read past the export was not refused\n");
		bad++;
	}
	*h = (struct rfile_hdr){ .magic = RFILE_MAGIC, .op = RFILE_MAP, .tag = 999 };
	r = rfile_raw(f, msg, sizeof(*h), &ans);
	if (r < 0 || ans.status != EINVAL || ans.op != RFILE_MAPPED) {
		fprintf(stderr, PROG " fprobe: a second MAP: answered %d, status %d\n", r,
			r < 0 ? 0 : ans.status);
		bad++;
	}
	rfile_close(f);
	bad += probe_writes(bench_device(dev), addr, port);
	fprintf(stderr, PROG " fprobe: %u of %zu answers wrong\n", bad,
		sizeof(p) / sizeof(p[0]) + 8);
	return bad ? 1 : 0;
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
	if (argc >= 2 && !strcmp(argv[1], "fserve"))
		return cmd_fserve(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "fprobe"))
		return cmd_fprobe(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "-V")) {
		printf(PROG " %s\n", MRRC_VERSION_STRING);
		return 0;
	}
	fprintf(stderr, "usage: " PROG " node -i ID -n NODES -a ADDR ... | " PROG " check HISTORY...\n"
		"       " PROG " lat HISTORY... | " PROG " fix -t file|remote|rfile ...\n"
		"       " PROG " fserve -a ADDR -f FILE -s BYTES ...\n");
	return 2;
}
