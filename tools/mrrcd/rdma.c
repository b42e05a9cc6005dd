// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrcd's RDMA side: memcached's text protocol over the module's SEND and
 * RECV, and the arena exported for one-sided READs (kvwire.h).
 *
 * Each connection keeps KV_RECV_DEPTH RECVs of KV_MSG_SIZE posted.  A
 * completed RECV joins the connection's queue of input; its bytes are fed
 * to proto.c as its input buffer takes them, and the RECV is posted again
 * once all of them have been taken, so a peer that sends faster than its
 * requests are answered is held back by the module's flow control, not by
 * our memory.  Replies are copied into at most KV_SEND_DEPTH SEND buffers
 * in flight; proto.c stops producing above its high-water mark.  The
 * buffers are ordinary memory: the module registers them through its
 * cache on first use and finds them there afterwards.
 *
 * Completions name the connection by the module's id and by the wr_id we
 * gave: a generation number that no later connection reusing the id has,
 * so late completions of a destroyed connection are recognised and
 * dropped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include "kvwire.h"
#include "libmrrc.h"
#include "rdma.h"
#include "mark_defined.h"
#include "store.h"

#define POLL_BATCH	64
#define POLL_ROUNDS	16	/* batches per event: others get their turn */
#define WR_RECV		1u
#define WR_SEND		2u
#define WR_STCRW	3u
#define RSET_DEADLINE_NS (5ULL * 1000000000)	/* a CRW that never comes */

enum rc_state {
	RC_ACCEPTING,	/* accepted, not established yet */
	RC_UP,
	RC_CLOSING,	/* quit: disconnect once the replies are out */
};

/*
 * The arena's exports to a connection: the header with the index, the
 * counters, and the heap in parts of at most RC_HEAP_PART bytes, each a
 * whole number of slab pages (an item never lies across two parts).
 */
#define RC_HEAP_PART	(1ULL << 30)
#define RC_MAX_EXPORTS	(KV_MAX_SEGS / 2)

struct rconn {
	struct rdma_srv *r;
	uint32_t id;		/* the module's connection id */
	uint64_t gen;
	enum rc_state state;
	bool disconnecting;
	struct mc_conn mc;
	enum mc_result res;
	char *rbuf;		/* KV_RECV_DEPTH messages */
	char *sbuf;		/* KV_SEND_DEPTH messages */
	uint32_t rlen[KV_RECV_DEPTH];	/* bytes of a completed RECV */
	uint32_t roff[KV_RECV_DEPTH];	/* of which fed to proto.c */
	uint8_t rq[KV_RECV_DEPTH];	/* completed RECVs, oldest first */
	unsigned int rq_head, rq_n;
	uint8_t send_busy[KV_SEND_DEPTH];
	unsigned int sends_out;
	unsigned int recvs_out;	/* posted, not completed */
	unsigned int stcrw_out;	/* an rset's STCRW, 0 or 1 */
	void *rset_buf;		/* its buffer, kept while a zombie */
	uint32_t xid[RC_MAX_EXPORTS];
	unsigned int nx;
	struct rconn *next;	/* in its bucket */
};

static void __attribute__((format(printf, 3, 4)))
rsay(struct rdma_srv *r, int level, const char *fmt, ...)
{
	va_list ap;

	if (r->srv->verbosity < level || !r->srv->log)
		return;
	va_start(ap, fmt);
	vfprintf(r->srv->log, fmt, ap);
	va_end(ap);
}

static struct rconn **slot_of(struct rdma_srv *r, uint32_t id)
{
	struct rconn **p = &r->bucket[id % RDMA_BUCKETS];

	while (*p && (*p)->id != id)
		p = &(*p)->next;
	return p;
}

static uint64_t wr_id(const struct rconn *rc, unsigned int kind,
		      unsigned int slot)
{
	return rc->gen << 16 | kind << 8 | slot;
}

/* ---- posting ----------------------------------------------------------- */

static int post_recv(struct rdma_srv *r, struct rconn *rc, unsigned int i)
{
	struct mrrc_wr w = {
		.wr_id = wr_id(rc, WR_RECV, i), .conn = rc->id,
		.opcode = MRRC_OP_RECV,
		.addr = (uintptr_t)(rc->rbuf + (size_t)i * KV_MSG_SIZE),
		.len = KV_MSG_SIZE,
	};
	int err = mrrc_post(r->fd, &w, 1, NULL);

	if (!err)
		rc->recvs_out++;
	return err;
}

static int post_send(struct rdma_srv *r, struct rconn *rc, const void *data,
		     size_t len)
{
	struct mrrc_wr w = {
		.conn = rc->id, .opcode = MRRC_OP_SEND, .len = len,
	};
	unsigned int i;
	int err;

	for (i = 0; i < KV_SEND_DEPTH && rc->send_busy[i]; i++)
		;
	if (i == KV_SEND_DEPTH)
		return -EAGAIN;
	memcpy(rc->sbuf + (size_t)i * KV_MSG_SIZE, data, len);
	w.wr_id = wr_id(rc, WR_SEND, i);
	w.addr = (uintptr_t)(rc->sbuf + (size_t)i * KV_MSG_SIZE);
	err = mrrc_post(r->fd, &w, 1, NULL);
	if (err)
		return err;
	rc->send_busy[i] = 1;
	rc->sends_out++;
	r->srv->c.rdma_msgs_sent++;
	return 0;
}

/* ---- connections ------------------------------------------------------- */

static void rc_release(struct rconn *rc)
{
	free(rc->rset_buf);
	mc_conn_free(&rc->mc);
	free(rc->rbuf);
	free(rc->sbuf);
	free(rc);
}

/*
 * Destroy the connection.  Its RECVs and SENDs are flushed, but each
 * RECV's exposure lives until its completion is polled (datapath.rst), so
 * the buffers are kept, on the zombie list, until every operation posted
 * has completed; rdma_stop() closes the file, which revokes them all.
 */
static void rc_free(struct rdma_srv *r, struct rconn *rc)
{
	struct rconn **p = slot_of(r, rc->id);

	if (*p == rc)
		*p = rc->next;
	mrrc_destroy(r->fd, rc->id);
	if (rc->state != RC_ACCEPTING) {
		r->srv->c.curr_connections--;
		r->srv->c.rdma_curr_connections--;
	} else {
		r->accepting--;
	}
	r->srv->c.conn_structures--;
	if (rc->stcrw_out && rc->mc.st.data) {
		/* The peer may write it until the STCRW's flush is polled. */
		rc->rset_buf = rc->mc.st.data;
		rc->mc.st.data = NULL;
		r->srv->staged -= rc->mc.st.need;
	}
	mc_conn_free(&rc->mc);	/* staging and replies go now (idempotent) */
	if (!rc->recvs_out && !rc->sends_out && !rc->stcrw_out) {
		rc_release(rc);
		return;
	}
	rc->next = r->zombies;
	r->zombies = rc;
}

/* A completion of a destroyed connection: free it after its last. */
static void zombie_done(struct rdma_srv *r, const struct mrrc_cqe *c)
{
	unsigned int kind = (c->wr_id >> 8) & 0xff;
	struct rconn **p = &r->zombies, *rc;

	while (*p && (*p)->gen != c->wr_id >> 16)
		p = &(*p)->next;
	rc = *p;
	if (!rc)
		return;
	if (kind == WR_RECV && rc->recvs_out)
		rc->recvs_out--;
	else if (kind == WR_SEND && rc->sends_out)
		rc->sends_out--;
	else if (kind == WR_STCRW && rc->stcrw_out)
		rc->stcrw_out--;
	if (!rc->recvs_out && !rc->sends_out && !rc->stcrw_out) {
		*p = rc->next;
		rc_release(rc);
	}
}

/* A broken connection: tell the peer if we still can, then forget it. */
static void rc_fail(struct rdma_srv *r, struct rconn *rc, int err)
{
	rsay(r, 1, "<rdma %u: %s\n", rc->id, strerror(-err));
	rc_free(r, rc);
}

/* proto.c's rset: an STCRW over its staging buffer, 5 s to match. */
static int rc_rset(struct mc_conn *mc, void *buf, size_t len, uint64_t tag)
{
	struct rconn *rc = mc->xprt;
	struct timespec now;
	struct mrrc_wr w = {
		.wr_id = wr_id(rc, WR_STCRW, 0), .conn = rc->id,
		.opcode = MRRC_OP_STCRW, .addr = (uintptr_t)buf, .len = len,
		.tag = tag,
	};
	int err;

	if (rc->stcrw_out)
		return -EBUSY;
	clock_gettime(CLOCK_MONOTONIC, &now);
	w.deadline_ns = (uint64_t)now.tv_sec * 1000000000 + now.tv_nsec +
			RSET_DEADLINE_NS;
	err = mrrc_post(rc->r->fd, &w, 1, NULL);
	if (!err) {
		rc->stcrw_out++;
		rc->r->srv->c.rdma_rsets++;
	}
	return err;
}

static void on_connect_request(struct rdma_srv *r, uint32_t id)
{
	struct mc_server *srv = r->srv;
	struct rconn *rc;

	if (srv->c.curr_connections + r->accepting >= srv->set.maxconns ||
	    *slot_of(r, id)) {
		rsay(r, 1, "rdma: too many connections (-c %u): refused\n",
		     srv->set.maxconns);
		mrrc_reject(r->fd, id);
		mrrc_destroy(r->fd, id);
		srv->c.rejected_connections++;
		return;
	}
	rc = calloc(1, sizeof(*rc));
	if (rc) {
		rc->rbuf = aligned_alloc(4096, KV_RECV_DEPTH * KV_MSG_SIZE);
		rc->sbuf = aligned_alloc(4096, KV_SEND_DEPTH * KV_MSG_SIZE);
	}
	if (!rc || !rc->rbuf || !rc->sbuf) {
		if (rc) {
			free(rc->rbuf);
			free(rc->sbuf);
		}
		free(rc);
		mrrc_reject(r->fd, id);
		mrrc_destroy(r->fd, id);
		srv->c.rejected_connections++;
		return;
	}
	rc->r = r;
	rc->id = id;
	rc->gen = ++r->next_gen & ((1ULL << 48) - 1);
	rc->state = RC_ACCEPTING;
	rc->res = MC_WANT_INPUT;
	mc_conn_init(&rc->mc, srv, id);
	rc->mc.rset = rc_rset;
	rc->mc.xprt = rc;
	rc->next = r->bucket[id % RDMA_BUCKETS];
	r->bucket[id % RDMA_BUCKETS] = rc;
	srv->c.conn_structures++;
	r->accepting++;
	if (mrrc_accept(r->fd, id, rc->gen))
		rc_free(r, rc);
}

/* One export of the arena: @len bytes at @off with @access. */
struct rc_part {
	uint64_t off, len;
	uint32_t access;
	const char *rights;
};

/* The parts of the arena a connection gets; how many, or 0 if too many. */
static unsigned int rc_parts(const struct store *s, struct rc_part *part)
{
	const struct mrrcd_arena_hdr *h = s->hdr;
	uint64_t heap = (uint64_t)h->npages * MRRCD_PAGE_SIZE, off;
	unsigned int n = 0;

	part[n++] = (struct rc_part){
		0, h->index_off + (uint64_t)h->nslots * MRRCD_SLOT_SIZE,
		MRRC_ACCESS_REMOTE_READ, "r" };
	part[n++] = (struct rc_part){
		h->counters_off, (uint64_t)h->nslots * 8,
		MRRC_ACCESS_REMOTE_READ | MRRC_ACCESS_REMOTE_ATOMIC, "ra" };
	for (off = 0; off < heap; off += RC_HEAP_PART) {
		if (n == RC_MAX_EXPORTS)
			return 0;
		part[n++] = (struct rc_part){
			h->heap_off + off,
			heap - off < RC_HEAP_PART ? heap - off : RC_HEAP_PART,
			MRRC_ACCESS_REMOTE_READ, "r" };
	}
	return n;
}

/* The banner of a connection that gets no exports: two-sided only. */
static size_t rc_no_export(struct rdma_srv *r, struct rconn *rc, char *out,
			   size_t cap, const char *why)
{
	rsay(r, 1, "<rdma %u: export: %s: one-sided reads off\n", rc->id, why);
	r->srv->c.rdma_export_failures++;
	while (rc->nx)
		mrrc_unexport(r->fd, rc->xid[--rc->nx]);
	return (size_t)snprintf(out, cap, "%s %u %zu 0\r\nEND\r\n", KV_BANNER,
				KV_BANNER_VERSION, r->store->arena_size);
}

/* Parts *i on, counted in rc->nx and *total; -errno at the first refused. */
static int rc_export_from(struct rdma_srv *r, struct rconn *rc,
			  const struct rc_part *part, unsigned int nparts,
			  struct mrrc_seg (*segs)[MRRC_EXPORT_SEGS],
			  unsigned int *nsegs, unsigned int *i,
			  unsigned int *total)
{
	for (; *i < nparts; (*i)++) {
		int err;

		nsegs[*i] = MRRC_EXPORT_SEGS;
		err = mrrc_export(r->fd, r->store->arena + part[*i].off,
				  part[*i].len, part[*i].access, &rc->id, 1,
				  segs[*i], &nsegs[*i], &rc->xid[*i]);
		if (err)
			return err;
		rc->nx++;
		*total += nsegs[*i];
	}
	return 0;
}

/*
 * Export the arena to this connection alone: the header and the index,
 * then the heap, for READ only; the access counters for READ and atomics,
 * the one thing a peer may change (layout.h).  The daemon reads the
 * counters as numbers and nothing else (store.h).  The banner tells the
 * peer the keys.
 */
static size_t rc_export(struct rdma_srv *r, struct rconn *rc, char *out,
			size_t cap)
{
	static struct mrrc_seg segs[RC_MAX_EXPORTS][MRRC_EXPORT_SEGS];
	struct rc_part part[RC_MAX_EXPORTS];
	unsigned int nsegs[RC_MAX_EXPORTS], nparts, i, j, total = 0;
	size_t n = 0;
	int err = 0;

	rc->nx = 0;
	nparts = rc_parts(r->store, part);
	if (!nparts)
		return rc_no_export(r, rc, out, cap, "arena in too many parts");
	/*
	 * Pinning the arena can take a while: the caller's other threads
	 * go on meanwhile.  Its place and size never change, and what the
	 * module pins is pages, not what they hold; but a page they fault
	 * in meanwhile (a heap page's first store) makes the module give
	 * up on that part (-EAGAIN): it and the rest are then pinned with
	 * them held off.
	 */
	i = 0;
	if (r->unlock)
		r->unlock(r->lock_arg);
	err = rc_export_from(r, rc, part, nparts, segs, nsegs, &i, &total);
	if (r->relock)
		r->relock(r->lock_arg);
	if (err == -EAGAIN && r->unlock)
		err = rc_export_from(r, rc, part, nparts, segs, nsegs, &i,
				     &total);
	if (err)
		return rc_no_export(r, rc, out, cap, strerror(-err));
	if (total > KV_MAX_SEGS)
		return rc_no_export(r, rc, out, cap, "too many segments");
	r->srv->c.rdma_exports += nparts;
	n += (size_t)snprintf(out + n, cap - n, "%s %u %zu %u\r\n", KV_BANNER,
			      KV_BANNER_VERSION, r->store->arena_size, total);
	for (i = 0; i < nparts; i++) {
		uint64_t off = part[i].off;

		for (j = 0; j < nsegs[i]; j++) {
			n += (size_t)snprintf(out + n, cap - n,
					      "SEG %" PRIu64 " %llu %llu %u %s\r\n",
					      off,
					      (unsigned long long)segs[i][j].addr,
					      (unsigned long long)segs[i][j].length,
					      segs[i][j].rkey, part[i].rights);
			off += segs[i][j].length;
		}
	}
	n += (size_t)snprintf(out + n, cap - n, "END\r\n");
	return n;
}

static void on_established(struct rdma_srv *r, struct rconn *rc)
{
	char banner[128 + KV_MAX_SEGS * 96];
	size_t len;
	unsigned int i;
	int err = 0;

	if (rc->state != RC_ACCEPTING)
		return;
	rc->state = RC_UP;
	r->accepting--;
	r->srv->c.curr_connections++;
	r->srv->c.total_connections++;
	r->srv->c.rdma_curr_connections++;
	r->srv->c.rdma_total_connections++;
	rsay(r, 1, "<rdma %u new connection\n", rc->id);
	for (i = 0; i < KV_RECV_DEPTH && !err; i++)
		err = post_recv(r, rc, i);
	if (!err) {
		len = rc_export(r, rc, banner, sizeof(banner));
		err = post_send(r, rc, banner, len);
	}
	if (err)
		rc_fail(r, rc, err);
}

/*
 * Move a connection on as far as it goes: feed completed RECVs to
 * proto.c, answer, send; until nothing moves.  Everything is bounded by
 * the RECV and SEND buffers, so this ends.  -errno if it broke.
 */
static int rc_pump(struct rdma_srv *r, struct rconn *rc)
{
	for (;;) {
		bool progress = false;

		if (rc->state == RC_UP && rc->res == MC_WANT_INPUT &&
		    rc->rq_n) {
			unsigned int i = rc->rq[rc->rq_head];
			size_t room, n;
			char *p = mc_in_space(&rc->mc, &room);

			if (!p)
				return room ? 0 : -ENOMEM;
			n = rc->rlen[i] - rc->roff[i];
			if (n > room)
				n = room;
			memcpy(p, rc->rbuf + (size_t)i * KV_MSG_SIZE +
			       rc->roff[i], n);
			mc_in_commit(&rc->mc, n);
			r->srv->c.bytes_read += n;
			rc->roff[i] += (uint32_t)n;
			if (rc->roff[i] == rc->rlen[i]) {
				rc->rq_head = (rc->rq_head + 1) % KV_RECV_DEPTH;
				rc->rq_n--;
				int err = post_recv(r, rc, i);

				if (err)
					return err;
			}
			progress = true;
		}
		if (rc->state != RC_ACCEPTING) {
			enum mc_result was = rc->res;

			rc->res = mc_process(&rc->mc);
			if (rc->res == MC_DONE)
				rc->state = RC_CLOSING;
			/*
			 * Unblocked (an rset done, replies drained) with
			 * input queued: go round to feed it, even if this
			 * produced nothing to send (noreply).
			 */
			if (was != MC_WANT_INPUT && rc->res == MC_WANT_INPUT &&
			    rc->rq_n)
				progress = true;
		}
		while (mc_out_pending(&rc->mc) && rc->sends_out < KV_SEND_DEPTH) {
			size_t n = mc_out_pending(&rc->mc);
			int err;

			if (n > KV_MSG_SIZE)
				n = KV_MSG_SIZE;
			err = post_send(r, rc, mc_out_data(&rc->mc), n);
			if (err)
				return err < 0 ? err : -EIO;
			mc_out_consume(&rc->mc, n);
			r->srv->c.bytes_written += n;
			progress = true;
		}
		if (!progress)
			break;
	}
	if (rc->state == RC_CLOSING && !rc->disconnecting &&
	    !mc_out_pending(&rc->mc) && !rc->sends_out) {
		rc->disconnecting = true;
		mrrc_disconnect(r->fd, rc->id);
	}
	return 0;
}

static void on_event(struct rdma_srv *r, const struct mrrc_cqe *c)
{
	struct rconn *rc;

	if (c->event == MRRC_EVENT_CONNECT_REQUEST) {
		on_connect_request(r, c->conn);
		return;
	}
	rc = *slot_of(r, c->conn);
	if (!rc || rc->gen != c->wr_id)
		return;
	switch (c->event) {
	case MRRC_EVENT_ESTABLISHED:
		on_established(r, rc);
		break;
	default:	/* disconnected, error, device removal */
		rsay(r, 1, "<rdma %u connection closed (%s)\n", rc->id,
		     mrrc_event_str(c->event));
		rc_free(r, rc);
		break;
	}
}

/*
 * A completion of ours: the connection to pump, or NULL.  Any failure on a
 * live connection ends it: a RECV the peer overflowed (EMSGSIZE) would
 * otherwise never be posted again, a SEND that did not land would lose
 * reply bytes, and the stream could not go on either way.
 */
static struct rconn *on_completion(struct rdma_srv *r,
				   const struct mrrc_cqe *c)
{
	struct rconn *rc = *slot_of(r, c->conn);
	unsigned int kind = (c->wr_id >> 8) & 0xff, i = c->wr_id & 0xff;

	if (!rc || rc->gen != c->wr_id >> 16) {
		zombie_done(r, c);	/* of a connection already gone */
		return NULL;
	}
	if (kind == WR_STCRW && rc->stcrw_out) {
		/* Timed out or cancelled is the rset's failure, not ours. */
		rc->stcrw_out--;
		if (c->status)
			r->srv->c.rdma_rset_failures++;
		mc_rset_done(&rc->mc, c->status, c->byte_len);
		return rc;
	}
	if (kind == WR_RECV && i < KV_RECV_DEPTH && rc->recvs_out)
		rc->recvs_out--;
	else if (kind == WR_SEND && i < KV_SEND_DEPTH && rc->send_busy[i]) {
		rc->send_busy[i] = 0;
		rc->sends_out--;
	}
	if (c->status) {
		rsay(r, 1, "<rdma %u: %s: %s\n", rc->id,
		     mrrc_opcode_str(c->opcode), mrrc_status_str(c->status));
		rc_free(r, rc);
		return NULL;
	}
	if (kind == WR_RECV && i < KV_RECV_DEPTH) {
		rc->rlen[i] = c->byte_len <= KV_MSG_SIZE ? c->byte_len : 0;
		rc->roff[i] = 0;
		mark_defined(rc->rbuf + (size_t)i * KV_MSG_SIZE, rc->rlen[i]);
		r->srv->c.rdma_msgs_received++;
		if (!rc->rlen[i]) {
			/* An empty message: nothing to feed, post it again. */
			int err = post_recv(r, rc, i);

			if (err)
				rc_fail(r, rc, err);
			return NULL;
		}
		rc->rq[(rc->rq_head + rc->rq_n) % KV_RECV_DEPTH] = (uint8_t)i;
		rc->rq_n++;
	}
	return rc;
}

void rdma_service(struct rdma_srv *r)
{
	struct mrrc_cqe c[POLL_BATCH];
	unsigned int round = 0;
	int n, i;

	/* Level-triggered: what is left reports the file readable again. */
	while (round++ < POLL_ROUNDS &&
	       (n = mrrc_poll_cq(r->fd, c, POLL_BATCH)) > 0) {
		for (i = 0; i < n; i++) {
			struct rconn *rc;
			int err;

			if (c[i].opcode == MRRC_OP_EVENT) {
				on_event(r, &c[i]);
				continue;
			}
			rc = on_completion(r, &c[i]);
			if (!rc)
				continue;
			err = rc_pump(r, rc);
			if (err)
				rc_fail(r, rc, err);
		}
	}
	if (round <= POLL_ROUNDS && n < 0)
		rsay(r, 1, "rdma: poll: %s\n", strerror(-n));
}

/* ---- setup ------------------------------------------------------------- */

static int first_device(int fd, char *name, size_t len)
{
	struct mrrc_dev_info devs[16];
	unsigned int n = 16;
	int err = mrrc_dev_list(fd, devs, &n);

	if (err)
		return err;
	if (!n)
		return -ENODEV;
	snprintf(name, len, "%s", devs[0].name);
	return 0;
}

/*
 * The exports are taken through the context's registration cache, whose
 * capacity (1 GiB by default) must hold the whole arena, which every live
 * connection's exports keep in use, and still leave the connections'
 * message and staging buffers the room they had: the arena is added to
 * the capacity.  If that fails, the exports will, and connections are
 * two-sided only (rdma_export_failures).
 */
static void raise_capacity(struct rdma_srv *r)
{
	struct mrrc_cache_config cfg = { .size = sizeof(cfg) };
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t arena = (r->store->arena_size + page - 1) / page;
	int err = mrrc_cache_config(r->fd, &cfg);

	if (err)
		goto out;
	cfg = (struct mrrc_cache_config){ .size = sizeof(cfg),
					  .max_pages = cfg.max_pages + arena };
	err = mrrc_cache_config(r->fd, &cfg);
out:
	if (err)
		fprintf(stderr, "mrrcd: --rdma: cache capacity for a %zu-byte arena: %s\n",
			r->store->arena_size, strerror(-err));
}

int rdma_start(struct rdma_srv *r, struct mc_server *srv, struct store *st,
	       const char *dev, const char *addr, unsigned int port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV },
			*res;
	char portstr[16], name[MRRC_NAME_MAX];
	int err;

	memset(r, 0, sizeof(*r));
	r->srv = srv;
	r->store = st;
	r->fd = mrrc_open(0);
	if (r->fd < 0) {
		fprintf(stderr, "mrrcd: --rdma: cannot open /dev/mrrc: %s (is the mrrc module loaded?)\n",
			strerror(-r->fd));
		return r->fd;
	}
	if (!dev) {
		err = first_device(r->fd, name, sizeof(name));
		if (err) {
			fprintf(stderr, "mrrcd: --rdma: no RDMA device: %s\n",
				strerror(-err));
			goto fail;
		}
		dev = name;
	}
	err = mrrc_bind(r->fd, dev, NULL);
	if (err) {
		fprintf(stderr, "mrrcd: --rdma-dev %s: %s\n", dev,
			strerror(-err));
		goto fail;
	}
	raise_capacity(r);
	snprintf(portstr, sizeof(portstr), "%u", port);
	err = getaddrinfo(addr, portstr, &hints, &res);
	if (err) {
		fprintf(stderr, "mrrcd: --rdma %s: %s\n", addr ? addr : "",
			gai_strerror(err));
		err = -EINVAL;
		goto fail;
	}
	err = mrrc_listen(r->fd, res->ai_addr, 0, 0, &r->lis);
	freeaddrinfo(res);
	if (err) {
		fprintf(stderr, "mrrcd: cannot listen for RDMA on %s port %u (%s): %s\n",
			addr ? addr : "*", port, dev, strerror(-err));
		goto fail;
	}
	return 0;
fail:
	mrrc_close(r->fd);
	r->fd = -1;
	return err;
}

void rdma_stop(struct rdma_srv *r)
{
	struct rconn *rc;
	unsigned int b;

	if (r->fd < 0)
		return;
	/* Closing destroys every connection and revokes every exposure. */
	mrrc_close(r->fd);
	for (b = 0; b < RDMA_BUCKETS; b++) {
		while ((rc = r->bucket[b])) {
			r->bucket[b] = rc->next;
			rc_release(rc);
		}
	}
	while ((rc = r->zombies)) {
		r->zombies = rc->next;
		rc_release(rc);
	}
	r->fd = -1;
}
