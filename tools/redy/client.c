// SPDX-License-Identifier: GPL-2.0-only
/* The Redy client's connection to a memory server: see client.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "libmrrc.h"
#include "mark_defined.h"

#define WAIT_MS		5000
#define WR_RECV		1u
#define WR_SEND		2u
#define WR_DATA		3u

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/* The next completion, waiting up to c->wait_ms for it. */
static int next_cqe(struct redy_client *c, struct mrrc_cqe *e)
{
	int n, r;

	for (;;) {
		n = mrrc_poll_cq(c->fd, e, 1);
		if (n)
			return n < 0 ? n : 0;
		r = mrrc_wait(c->fd, c->wait_ms);
		if (r < 0)
			return r;
		if (!r)
			return -ETIMEDOUT;
	}
}

/* A completion that is not an operation's: why the connection ended. */
static int event_error(const struct mrrc_cqe *e)
{
	if (e->event == MRRC_EVENT_ESTABLISHED)
		return -EPROTO;
	return e->status < 0 ? e->status : -ECONNRESET;
}

static int post_recv(struct redy_client *c, unsigned int slot)
{
	struct mrrc_wr wr = {
		.wr_id = WR_RECV << 16 | slot, .conn = c->conn,
		.opcode = MRRC_OP_RECV,
		.addr = (uintptr_t)(c->rbuf + (size_t)slot * REDY_MSG_BYTES),
		.len = REDY_MSG_BYTES,
	};

	return mrrc_post(c->fd, &wr, 1, NULL);
}

static int hello(struct redy_client *c)
{
	const struct redy_hello *h = (const void *)c->rbuf;
	struct mrrc_cqe e;
	uint64_t off = 0;
	unsigned int i;
	int r;

	do {
		r = next_cqe(c, &e);
		if (r)
			return r;
		if (e.opcode == MRRC_OP_EVENT)
			return event_error(&e);
	} while (e.opcode != MRRC_OP_RECV);
	if (e.status)
		return e.status;
	mark_defined(c->rbuf, e.byte_len);
	if (e.byte_len < sizeof(*h) || h->magic != REDY_MAGIC ||
	    h->version != REDY_VERSION || h->nsegs > REDY_SEGS_MAX ||
	    e.byte_len < sizeof(*h) + h->nsegs * sizeof(h->seg[0]) ||
	    !h->threads || h->threads > REDY_THREADS_MAX ||
	    (c->one_sided && !h->nsegs) || (!c->one_sided && h->nsegs))
		return -EPROTO;
	/* the segments must tile the memory exactly */
	for (i = 0; i < h->nsegs; i++) {
		if (h->seg[i].off != off || !h->seg[i].len ||
		    h->seg[i].len > h->bytes - off)
			return -EPROTO;
		off += h->seg[i].len;
	}
	if (c->one_sided && off != h->bytes)
		return -EPROTO;
	c->bytes = h->bytes;
	c->threads = h->threads;
	c->nsegs = h->nsegs;
	memcpy(c->seg, h->seg, h->nsegs * sizeof(h->seg[0]));
	/* one-sided, the server has nothing more to send */
	return c->one_sided ? 0 : post_recv(c, 0);
}

int redy_client_open(struct redy_client *c, const char *addr, uint16_t port,
		     int thread, unsigned int depth, const char *dev)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct mrrc_dev_info devs[8];
	unsigned int n = 8, i;
	struct mrrc_cqe e;
	int r;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->wait_ms = WAIT_MS;
	if (!depth || depth > REDY_DEPTH_MAX || thread >= (int)REDY_THREADS_MAX ||
	    inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		return -EINVAL;
	sin.sin_port = htons(port + (thread < 0 ? 0 : 1 + thread));
	c->one_sided = thread < 0;
	c->depth = depth;
	c->rbuf = aligned_alloc(4096, (size_t)depth * REDY_MSG_BYTES);
	c->sbuf = aligned_alloc(4096, (size_t)depth * REDY_MSG_BYTES);
	if (!c->rbuf || !c->sbuf) {
		r = -ENOMEM;
		goto fail;
	}
	c->fd = mrrc_open(0);
	if (c->fd < 0) {
		r = c->fd;
		goto fail;
	}
	if (!dev) {
		r = mrrc_dev_list(c->fd, devs, &n);
		if (!r && !n)
			r = -ENODEV;
		if (r)
			goto fail;
		dev = devs[0].name;
	}
	r = mrrc_bind(c->fd, dev, NULL);
	r = r ?: mrrc_connect(c->fd, (struct sockaddr *)&sin, NULL, WAIT_MS, 0,
			      &c->conn);
	if (r)
		goto fail;
	r = next_cqe(c, &e);
	if (!r && (e.opcode != MRRC_OP_EVENT || e.event != MRRC_EVENT_ESTABLISHED))
		r = e.opcode == MRRC_OP_EVENT ? event_error(&e) : -EPROTO;
	r = r ?: post_recv(c, 0);
	r = r ?: hello(c);
	for (i = 1; !r && !c->one_sided && i < depth; i++)
		r = post_recv(c, i);
	if (!r)
		return 0;
fail:
	redy_client_close(c);
	return r;
}

void redy_client_close(struct redy_client *c)
{
	/* closing the context ends the connection and what it had posted */
	if (c->fd >= 0)
		mrrc_close(c->fd);
	c->fd = -1;
	free(c->rbuf);
	free(c->sbuf);
	c->rbuf = c->sbuf = NULL;
}

/* The segment holding [off, off + len), or NULL. */
static const struct redy_seg *seg_of(const struct redy_client *c, uint64_t off,
				     uint32_t len)
{
	unsigned int i;

	for (i = 0; i < c->nsegs; i++)
		if (off >= c->seg[i].off && off - c->seg[i].off < c->seg[i].len &&
		    len <= c->seg[i].len - (off - c->seg[i].off))
			return &c->seg[i];
	return NULL;
}

static int one_sided_post(struct redy_client *c, unsigned int op,
			  uint64_t off, void *buf, uint32_t len, uint64_t id)
{
	const struct redy_seg *s = seg_of(c, off, len);
	struct mrrc_wr wr = {
		.wr_id = id, .conn = c->conn,
		.opcode = op == REDY_OP_READ ? MRRC_OP_READ : MRRC_OP_WRITE,
		.addr = (uintptr_t)buf, .len = len,
	};

	if (!s || !len)
		return -EINVAL;
	wr.remote_addr = s->addr + (off - s->off);
	wr.rkey = s->rkey;
	return mrrc_post(c->fd, &wr, 1, NULL);
}

/* Builds a batch in send slot @slot: its length. */
static uint32_t batch_build(struct redy_client *c, unsigned int slot,
			    const struct redy_req *rq, unsigned int n,
			    const void *const *data)
{
	uint8_t *m = c->sbuf + (size_t)slot * REDY_MSG_BYTES;
	struct redy_req_hdr *h = (void *)m;
	uint32_t off = sizeof(*h) + n * sizeof(*rq);
	unsigned int i;

	h->magic = REDY_MAGIC;
	h->count = n;
	h->pad = 0;
	h->seq = (uint64_t)slot << 48 | (c->seq++ & 0xffffffffffffull);
	memcpy(h + 1, rq, n * sizeof(*rq));
	/* what the response must match */
	c->sent_seq[slot] = h->seq;
	c->sent_n[slot] = n;
	memcpy(c->sent[slot], rq, n * sizeof(*rq));
	for (i = 0; i < n; i++) {
		uint32_t len = rq[i].op == REDY_OP_WRITE ? rq[i].len :
			       rq[i].op == REDY_OP_PULL ? sizeof(struct redy_pull) : 0;

		if (data && data[i] && len)
			memcpy(m + off, data[i], len);
		else
			memset(m + off, 0, len);
		memset(m + off + len, 0, redy_align8(len) - len);
		off += redy_align8(len);
	}
	return off;
}

static int batch_send(struct redy_client *c, unsigned int slot, uint32_t len)
{
	struct mrrc_wr wr = {
		.wr_id = WR_SEND << 16 | slot, .conn = c->conn,
		.opcode = MRRC_OP_SEND,
		.addr = (uintptr_t)(c->sbuf + (size_t)slot * REDY_MSG_BYTES),
		.len = len,
	};

	return mrrc_post(c->fd, &wr, 1, NULL);
}

/* Size checks for a batch: 0 if it fits in one message both ways. */
static int batch_fits(const struct redy_req *rq, unsigned int n)
{
	uint64_t in = sizeof(struct redy_req_hdr) + n * sizeof(*rq);
	uint64_t out = sizeof(struct redy_rsp_hdr) + n * sizeof(struct redy_rsp);
	unsigned int i;

	if (!n || n > REDY_BATCH_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (rq[i].op == REDY_OP_WRITE)
			in += redy_align8(rq[i].len);
		else
			out += redy_align8(rq[i].len);
	}
	return in <= REDY_MSG_BYTES && out <= REDY_MSG_BYTES ? 0 : -EINVAL;
}

/*
 * The send slot a response in receive slot @rslot answers: its echoed
 * sequence number must be that of a batch in flight (@busy), or -EPROTO.
 */
static int response_slot(struct redy_client *c, unsigned int rslot, uint32_t len,
			 const bool *busy)
{
	const uint8_t *m = c->rbuf + (size_t)rslot * REDY_MSG_BYTES;
	const struct redy_rsp_hdr *h = (const void *)m;
	unsigned int slot;

	if (rslot >= c->depth || len > REDY_MSG_BYTES || len < sizeof(*h))
		return -EPROTO;
	mark_defined(m, len);
	slot = h->seq >> 48;
	if (h->magic != REDY_MAGIC || slot >= c->depth || !busy[slot] ||
	    h->seq != c->sent_seq[slot])
		return -EPROTO;
	return slot;
}

/*
 * Checks the response in receive slot @rslot to the batch of send slot
 * @slot (response_slot() first): one entry per request, a status that is
 * 0 or an errno, exactly the bytes a READ asked for and none otherwise.
 * With @out, READ data are copied there.  0, -EREMOTEIO if a request
 * failed (its entry says why), or -EPROTO.
 */
static int response(struct redy_client *c, unsigned int rslot, uint32_t len,
		    unsigned int slot, void *const *out)
{
	const uint8_t *m = c->rbuf + (size_t)rslot * REDY_MSG_BYTES;
	const struct redy_rsp_hdr *h = (const void *)m;
	const struct redy_rsp *rs = (const void *)(h + 1);
	const struct redy_req *rq = c->sent[slot];
	unsigned int i, n = c->sent_n[slot];
	uint64_t off = sizeof(*h) + (uint64_t)n * sizeof(*rs);
	int st = 0;

	if (len < off || h->count != n)
		return -EPROTO;
	for (i = 0; i < n; i++) {
		uint32_t want = rq[i].op == REDY_OP_READ && !rs[i].status ?
				rq[i].len : 0;

		if (rs[i].status > 0 || rs[i].status < -4095 ||
		    rs[i].len != want || redy_align8(want) > len - off)
			return -EPROTO;
		if (out && out[i] && want)
			memcpy(out[i], m + off, want);
		off += redy_align8(want);
		if (rs[i].status)
			st = -EREMOTEIO;
	}
	return st;
}

/* The requests from @i that fit in one batch of at most @b: how many. */
static unsigned int batch_span(const struct redy_io *io, unsigned int i,
			       unsigned int n, unsigned int b)
{
	uint64_t in = sizeof(struct redy_req_hdr), out = sizeof(struct redy_rsp_hdr);
	unsigned int k;

	for (k = 0; k < b && i + k < n; k++) {
		const struct redy_io *x = &io[i + k];
		uint64_t din = sizeof(struct redy_req), dout = sizeof(struct redy_rsp);

		if (x->op != REDY_OP_PULL && x->len > REDY_MSG_BYTES)
			break;
		if (x->op == REDY_OP_PULL && k)	/* a PULL goes alone */
			break;

		if (x->op == REDY_OP_WRITE)
			din += redy_align8(x->len);
		else if (x->op == REDY_OP_PULL)
			din += sizeof(struct redy_pull);
		else
			dout += redy_align8(x->len);
		if (in + din > REDY_MSG_BYTES || out + dout > REDY_MSG_BYTES)
			break;
		in += din;
		out += dout;
	}
	return k;
}

int redy_client_batch(struct redy_client *c, struct redy_io *io,
		      unsigned int n, unsigned int b)
{
	unsigned int first[REDY_DEPTH_MAX], cnt[REDY_DEPTH_MAX];
	struct redy_req rq[REDY_BATCH_MAX];
	const void *data[REDY_BATCH_MAX];
	void *out[REDY_BATCH_MAX];
	unsigned int next = 0, inflight = 0, slot, k, j;
	struct mrrc_cqe e;
	bool busy[REDY_DEPTH_MAX] = { false };
	int r, st;

	if (!b || b > REDY_BATCH_MAX)
		return -EINVAL;
	for (k = 0; k < n; k++) {
		io[k].status = -EINPROGRESS;
		/* two-sided, the server judges the kind of request */
		if (c->one_sided && io[k].op != REDY_OP_READ &&
		    io[k].op != REDY_OP_WRITE)
			io[k].status = -EINVAL;
		else if (!c->one_sided && !batch_span(io, k, k + 1, 1))
			io[k].status = -EINVAL;	/* longer than a message */
	}
	while (next < n || inflight) {
		/* skip what was refused */
		while (next < n && io[next].status != -EINPROGRESS)
			next++;
		for (slot = 0; slot < c->depth && next < n; slot++) {
			if (busy[slot])
				continue;
			/* what was refused before it was sent stays refused */
			while (next < n && io[next].status != -EINPROGRESS)
				next++;
			if (next == n)
				break;
			if (c->one_sided) {
				r = one_sided_post(c, io[next].op, io[next].off,
						   io[next].buf, io[next].len,
						   WR_DATA << 16 | slot);
				if (r == -EINVAL) {
					io[next++].status = r;
					slot--;
					continue;
				}
				k = 1;
			} else {
				k = batch_span(io, next, n, b);
				for (j = 0; j < k && io[next + j].status == -EINPROGRESS; j++) {
					struct redy_io *x = &io[next + j];

					rq[j] = (struct redy_req){ .op = x->op, .len = x->len,
								   .off = x->off };
					data[j] = x->buf;
					if (x->op == REDY_OP_PULL)
						rq[j].len = x->len;
				}
				k = j;
				r = batch_send(c, slot, batch_build(c, slot, rq, k, data));
			}
			if (r)
				return r;
			busy[slot] = true;
			first[slot] = next;
			cnt[slot] = k;
			next += k;
			inflight++;
			while (next < n && io[next].status != -EINPROGRESS)
				next++;
		}
		if (!inflight)
			break;
		r = next_cqe(c, &e);
		if (r)
			return r;
		if (e.opcode == MRRC_OP_EVENT)
			return event_error(&e);
		if (e.status)
			return e.status;
		k = (e.wr_id >> 16) & 0xffff;
		if (k == WR_SEND)
			continue;
		if (k == WR_RECV && c->one_sided)
			return -EPROTO;	/* the server has nothing to send */
		if (k == WR_DATA) {
			slot = e.wr_id & 0xffff;
			if (slot >= c->depth || !busy[slot])
				return -EPROTO;
			io[first[slot]].status = 0;
			if (e.opcode == MRRC_OP_READ)
				mark_defined(io[first[slot]].buf, io[first[slot]].len);
		} else {
			unsigned int rs = e.wr_id & 0xffff;
			const struct redy_rsp *rsp;

			r = response_slot(c, rs, e.byte_len, busy);
			if (r < 0)
				return r;
			slot = r;
			for (j = 0; j < cnt[slot]; j++)
				out[j] = io[first[slot] + j].op == REDY_OP_READ ?
					 io[first[slot] + j].buf : NULL;
			st = response(c, rs, e.byte_len, slot, out);
			if (st < 0 && st != -EREMOTEIO)
				return st;
			rsp = (const void *)(c->rbuf + (size_t)rs * REDY_MSG_BYTES +
					     sizeof(struct redy_rsp_hdr));
			for (j = 0; j < cnt[slot]; j++)
				io[first[slot] + j].status = rsp[j].status;
			r = post_recv(c, rs);
			if (r)
				return r;
		}
		busy[slot] = false;
		inflight--;
	}
	return 0;
}

int redy_client_rw(struct redy_client *c, unsigned int op, uint64_t off,
		   void *buf, uint32_t len)
{
	struct redy_io io = { .op = op, .len = len, .off = off, .buf = buf };
	int r;

	r = redy_client_batch(c, &io, 1, 1);
	return r ? r : io.status;
}

int redy_client_pull(struct redy_client *c, uint64_t off, uint32_t len,
		     const char *src_addr, uint16_t src_port, uint64_t src_off)
{
	struct redy_pull p = { .port = src_port, .src_off = src_off };
	struct redy_io io = { .op = REDY_OP_PULL, .len = len, .off = off,
			      .buf = &p };
	int r;

	if (inet_pton(AF_INET, src_addr, &p.addr) != 1)
		return -EINVAL;
	r = redy_client_batch(c, &io, 1, 1);
	return r ? r : io.status;
}

int redy_client_send_raw(struct redy_client *c, const void *buf, uint32_t len)
{
	struct mrrc_cqe e;
	int r;

	if (c->one_sided || len > REDY_MSG_BYTES)
		return -EINVAL;
	memcpy(c->sbuf, buf, len);
	r = batch_send(c, 0, len);
	while (!r) {
		r = next_cqe(c, &e);
		if (r)
			break;
		if (e.opcode == MRRC_OP_EVENT)
			return event_error(&e);
		if (e.opcode == MRRC_OP_SEND)
			return e.status;
	}
	return r;
}

static uint64_t rnd64(uint64_t *x)
{
	/* xorshift64* */
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 2685821657736338717ull;
}

static void record(struct redy_result *res, uint64_t lat, unsigned int n)
{
	unsigned int b = 0;

	while (b < REDY_LAT_BUCKETS - 1 && (2ull << b) <= lat)
		b++;
	res->hist[b] += n;
	res->lat_sum_ns += (double)lat * n;
	res->ops += n;
}

double redy_result_pct(const struct redy_result *res, double pct)
{
	uint64_t want = (uint64_t)ceil(res->ops * pct / 100), seen = 0;
	unsigned int b;

	for (b = 0; b < REDY_LAT_BUCKETS; b++) {
		seen += res->hist[b];
		if (seen >= want && seen)
			return (double)(2ull << b);
	}
	return 0;
}

int redy_client_run(struct redy_client *c, const struct redy_load *l,
		    struct redy_result *res)
{
	struct redy_req rq[REDY_BATCH_MAX];
	uint64_t t0[REDY_DEPTH_MAX], start, end, x = l->seed * 2654435761u + 1;
	uint64_t nrec;
	unsigned int inflight = 0, slot, i, b = c->one_sided ? 1 : l->batch;
	struct mrrc_cqe e[32];
	bool busy[REDY_DEPTH_MAX];
	uint8_t *buf;
	int n, k, r = 0;

	nrec = l->record ? (l->span < c->bytes ? l->span : c->bytes) / l->record : 0;
	if (!nrec || l->depth > c->depth || !l->depth || !b ||
	    b > REDY_BATCH_MAX || l->record > REDY_MSG_BYTES)
		return -EINVAL;
	for (i = 0; i < b; i++) {
		rq[i] = (struct redy_req){ .op = REDY_OP_READ, .len = l->record };
	}
	if (!c->one_sided && batch_fits(rq, b))
		return -EINVAL;
	for (i = 0; i < b; i++)
		rq[i].op = REDY_OP_WRITE;
	if (!c->one_sided && batch_fits(rq, b))
		return -EINVAL;
	/* one-sided: slot i's record lives at the start of send slot i */
	buf = c->sbuf;
	memset(t0, 0, sizeof(t0));
	start = now_ns();
	end = start + (uint64_t)(l->seconds * 1e9);
	for (;;) {
		uint64_t now = now_ns();

		for (slot = 0; slot < l->depth && now < end; slot++) {
			if (t0[slot])
				continue;
			for (i = 0; i < b; i++) {
				rq[i].op = rnd64(&x) % 100 < l->read_pct ?
					   REDY_OP_READ : REDY_OP_WRITE;
				rq[i].off = rnd64(&x) % nrec * l->record;
			}
			t0[slot] = now;
			if (c->one_sided)
				r = one_sided_post(c, rq[0].op, rq[0].off,
						   buf + (size_t)slot * REDY_MSG_BYTES,
						   l->record, WR_DATA << 16 | slot);
			else
				r = batch_send(c, slot, batch_build(c, slot, rq, b, NULL));
			if (r)
				return r;
			inflight++;
		}
		if (!inflight)
			break;
		n = mrrc_poll_cq(c->fd, e, 32);
		if (n < 0)
			return n;
		if (!n) {
			r = mrrc_wait(c->fd, c->wait_ms);
			if (r < 0)
				return r;
			if (!r)
				return -ETIMEDOUT;
			continue;
		}
		now = now_ns();
		for (k = 0; k < n; k++) {
			unsigned int kind = (e[k].wr_id >> 16) & 0xffff;

			if (e[k].opcode == MRRC_OP_EVENT)
				return event_error(&e[k]);
			if (e[k].status)
				return e[k].status;
			if (kind == WR_SEND)
				continue;
			if (kind == WR_RECV && c->one_sided)
				return -EPROTO;
			if (kind == WR_DATA) {
				slot = e[k].wr_id & 0xffff;
			} else {
				for (i = 0; i < REDY_DEPTH_MAX; i++)
					busy[i] = t0[i] != 0;
				r = response_slot(c, e[k].wr_id & 0xffff, e[k].byte_len,
						  busy);
				if (r < 0)
					return r;
				slot = r;
				r = response(c, e[k].wr_id & 0xffff, e[k].byte_len,
					     slot, NULL);
				if (r)
					return r;
				r = post_recv(c, e[k].wr_id & 0xffff);
				if (r)
					return r;
			}
			if (slot >= l->depth || !t0[slot])
				return -EPROTO;
			record(res, now - t0[slot], b);
			t0[slot] = 0;
			inflight--;
		}
	}
	res->seconds += (now_ns() - start) / 1e9;
	return 0;
}
