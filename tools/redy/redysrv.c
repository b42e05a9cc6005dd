// SPDX-License-Identifier: GPL-2.0-only
/*
 * A Redy memory server (redy-vldb2022 §3.2, §4.2), for redyd and mrrcd:
 * cache memory offered to clients one-sidedly (exported for RDMA READ and
 * WRITE) and two-sidedly (request batches executed by a chosen number of
 * server threads).  Wire format: wire.h.  Each thread has its own context
 * (/dev/mrrc file) and listener; the memory is shared.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libmrrc.h"
#include "mark_defined.h"
#include "client.h"
#include "redysrv.h"
#include "wire.h"

#define CONNS_MAX	64u	/* connections per thread */
#define SEND_SLOTS	(2 * REDY_DEPTH_MAX)
#define WR_RECV		1u
#define WR_SEND		2u

struct sconn {
	uint32_t id;
	bool established;
	uint8_t *rbuf;		/* REDY_DEPTH_MAX receive slots */
	uint8_t *sbuf;		/* SEND_SLOTS send slots */
	unsigned int next_send, sends;	/* slot to use, in flight */
	uint32_t export_id;
	bool exported;
};

struct sthread {
	struct redy_server *srv;
	unsigned int idx;	/* 0: one-sided; i + 1: server thread i */
	int fd;
	uint16_t port;
	pthread_t tid;
	struct sconn *conns[CONNS_MAX];
	unsigned long batches, requests, bad, pulled;
	struct redy_client src;	/* where PULLs come from */
	bool src_open;
	uint32_t src_addr;
	uint16_t src_port;
};

struct redy_server {
	uint8_t *mem;
	uint64_t bytes;
	unsigned int threads;
	struct in_addr addr;
	uint16_t port;
	char dev[64];
	char name[32];
	int verbose;
	bool stop;		/* __atomic: the threads end */
	unsigned int running;	/* threads started */
	struct sthread *th;
};

static void __attribute__((format(printf, 3, 4)))
say(const struct sthread *t, int level, const char *fmt, ...)
{
	va_list ap;

	if (t->srv->verbose < level)
		return;
	fprintf(stderr, "%s[%u]: ", t->srv->name, t->idx);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t wr_id(uint32_t conn, unsigned int kind, unsigned int slot)
{
	return (uint64_t)conn << 32 | kind << 16 | slot;
}

static struct sconn **find(struct sthread *t, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < CONNS_MAX; i++)
		if (t->conns[i] && t->conns[i]->id == id)
			return &t->conns[i];
	return NULL;
}

static int post_recv(struct sthread *t, struct sconn *c, unsigned int slot)
{
	struct mrrc_wr wr = {
		.wr_id = wr_id(c->id, WR_RECV, slot), .conn = c->id,
		.opcode = MRRC_OP_RECV,
		.addr = (uintptr_t)(c->rbuf + (size_t)slot * REDY_MSG_BYTES),
		.len = REDY_MSG_BYTES,
	};

	return mrrc_post(t->fd, &wr, 1, NULL);
}

static int post_send(struct sthread *t, struct sconn *c, unsigned int slot,
		     uint32_t len)
{
	struct mrrc_wr wr = {
		.wr_id = wr_id(c->id, WR_SEND, slot), .conn = c->id,
		.opcode = MRRC_OP_SEND,
		.addr = (uintptr_t)(c->sbuf + (size_t)slot * REDY_MSG_BYTES),
		.len = len,
	};
	int r;

	r = mrrc_post(t->fd, &wr, 1, NULL);
	if (!r)
		c->sends++;
	return r;
}

static void conn_free(struct sthread *t, struct sconn **pc)
{
	struct sconn *c = *pc;

	/* destroying it revokes its export and flushes what it had posted */
	mrrc_destroy(t->fd, c->id);
	free(c->rbuf);
	free(c->sbuf);
	free(c);
	*pc = NULL;
}

static void on_request(struct sthread *t, uint32_t id)
{
	struct sconn *c;
	unsigned int i;

	for (i = 0; i < CONNS_MAX && t->conns[i]; i++)
		;
	c = i < CONNS_MAX ? calloc(1, sizeof(*c)) : NULL;
	if (c && t->idx) {
		c->rbuf = aligned_alloc(4096, (size_t)REDY_DEPTH_MAX * REDY_MSG_BYTES);
		c->sbuf = aligned_alloc(4096, (size_t)SEND_SLOTS * REDY_MSG_BYTES);
	} else if (c) {
		c->sbuf = aligned_alloc(4096, REDY_MSG_BYTES);
	}
	if (!c || !c->sbuf || (t->idx && !c->rbuf) || mrrc_accept(t->fd, id, 0)) {
		say(t, 1, "refusing connection %u", id);
		if (c) {
			free(c->rbuf);
			free(c->sbuf);
			free(c);
		}
		mrrc_reject(t->fd, id);
		mrrc_destroy(t->fd, id);
		return;
	}
	c->id = id;
	t->conns[i] = c;
}

static void on_established(struct sthread *t, struct sconn **pc)
{
	struct sconn *c = *pc;
	struct redy_hello *h = (struct redy_hello *)c->sbuf;
	struct mrrc_seg segs[MRRC_EXPORT_SEGS];
	unsigned int i, nsegs = MRRC_EXPORT_SEGS;
	uint64_t off = 0;
	int r = 0;

	c->established = true;
	memset(h, 0, sizeof(*h));
	h->magic = REDY_MAGIC;
	h->version = REDY_VERSION;
	h->bytes = t->srv->bytes;
	h->threads = t->srv->threads;
	if (!t->idx) {
		r = mrrc_export(t->fd, t->srv->mem, t->srv->bytes,
				MRRC_ACCESS_REMOTE_READ | MRRC_ACCESS_REMOTE_WRITE,
				&c->id, 1, segs, &nsegs, &c->export_id);
		c->exported = !r;
		for (i = 0; !r && i < nsegs; i++) {
			h->seg[i] = (struct redy_seg){ .off = off,
				.addr = segs[i].addr, .len = segs[i].length,
				.rkey = segs[i].rkey };
			off += segs[i].length;
		}
		h->nsegs = r ? 0 : nsegs;
	}
	for (i = 0; !r && t->idx && i < REDY_DEPTH_MAX; i++)
		r = post_recv(t, c, i);
	if (!r) {
		c->next_send = 1 % SEND_SLOTS;
		r = post_send(t, c, 0, sizeof(*h) + h->nsegs * sizeof(h->seg[0]));
	}
	if (r) {
		say(t, 1, "connection %u: set-up failed: %s", c->id, strerror(-r));
		conn_free(t, pc);
		return;
	}
	say(t, 2, "connection %u established", c->id);
}

/* A free send slot, or NULL while all are in flight. */
static uint8_t *send_slot(struct sconn *c, unsigned int *slot)
{
	if (c->sends >= SEND_SLOTS)
		return NULL;
	*slot = c->next_send;
	c->next_send = (c->next_send + 1) % SEND_SLOTS;
	return c->sbuf + (size_t)*slot * REDY_MSG_BYTES;
}

/*
 * REDY_OP_PULL: RDMA READs from the source server's one-sided port into
 * our memory, 1 MiB at a time, on a connection of this thread's own (kept
 * for the next PULL from the same server).
 */
static int pull(struct sthread *t, const struct redy_req *r,
		const struct redy_pull *p)
{
	struct in_addr a = { .s_addr = p->addr };
	char host[INET_ADDRSTRLEN];
	uint64_t done;
	uint32_t n;
	int err = 0;

	/* not from this server: its own threads would wait for each other */
	if (p->addr == t->srv->addr.s_addr && p->port >= t->srv->port &&
	    p->port <= t->srv->port + t->srv->threads)
		return -EINVAL;
	if (t->src_open && (t->src_addr != p->addr || t->src_port != p->port)) {
		redy_client_close(&t->src);
		t->src_open = false;
	}
	if (!t->src_open) {
		inet_ntop(AF_INET, &a, host, sizeof(host));
		err = redy_client_open(&t->src, host, p->port, -1, 1, t->srv->dev);
		if (err) {
			say(t, 1, "pull: connecting to %s:%u: %s", host, p->port,
			    strerror(-err));
			return err;
		}
		t->src_open = true;
		t->src_addr = p->addr;
		t->src_port = p->port;
	}
	for (done = 0; !err && done < r->len; done += n) {
		n = r->len - done < (1u << 20) ? r->len - done : 1u << 20;
		err = redy_client_rw(&t->src, REDY_OP_READ, p->src_off + done,
				     t->srv->mem + r->off + done, n);
	}
	if (err) {
		say(t, 1, "pull: %s", strerror(-err));
		redy_client_close(&t->src);
		t->src_open = false;
	}
	t->pulled += done;
	return err;
}

/*
 * Executes one batch and builds its response in @out: the response's
 * length, or 0 if the batch is not well formed.
 */
static uint32_t execute(struct sthread *t, const uint8_t *in, uint32_t len,
			uint8_t *out)
{
	const struct redy_req_hdr *h = (const void *)in;
	const struct redy_req *rq = (const void *)(h + 1);
	struct redy_rsp_hdr *oh = (void *)out;
	struct redy_rsp *rs = (void *)(oh + 1);
	uint32_t i, din, dout, need, pulls;
	const uint64_t bytes = t->srv->bytes;

	if (len < sizeof(*h) || h->magic != REDY_MAGIC || !h->count ||
	    h->count > REDY_BATCH_MAX ||
	    len < sizeof(*h) + h->count * sizeof(*rq))
		return 0;
	din = sizeof(*h) + h->count * sizeof(*rq);
	dout = sizeof(*oh) + h->count * sizeof(*rs);
	/* the sizes first: a batch is executed whole or not at all; at
	 * most one PULL per batch (each holds this thread for a while)
	 */
	for (i = 0, need = din, pulls = 0; i < h->count; i++) {
		if (rq[i].len > REDY_MSG_BYTES && rq[i].op != REDY_OP_PULL)
			return 0;
		if (rq[i].op == REDY_OP_WRITE)
			need += redy_align8(rq[i].len);
		else if (rq[i].op == REDY_OP_PULL && ++pulls > 1)
			return 0;
		else if (rq[i].op == REDY_OP_PULL)
			need += sizeof(struct redy_pull);
	}
	if (need > len)
		return 0;
	for (i = 0, need = dout; i < h->count; i++)
		if (rq[i].op == REDY_OP_READ)
			need += redy_align8(rq[i].len);
	if (need > REDY_MSG_BYTES)
		return 0;
	oh->magic = REDY_MAGIC;
	oh->count = h->count;
	oh->pad = 0;
	oh->seq = h->seq;
	for (i = 0; i < h->count; i++) {
		const struct redy_req *r = &rq[i];
		bool inside = r->off <= bytes && r->len <= bytes - r->off;

		rs[i].status = 0;
		rs[i].len = 0;
		if (r->op == REDY_OP_WRITE) {
			if (inside)
				memcpy(t->srv->mem + r->off, in + din, r->len);
			else
				rs[i].status = -EINVAL;
			din += redy_align8(r->len);
		} else if (r->op == REDY_OP_PULL) {
			rs[i].status = inside && r->len <= REDY_PULL_MAX ?
				       pull(t, r, (const void *)(in + din)) : -EINVAL;
			din += sizeof(struct redy_pull);
		} else if (r->op == REDY_OP_READ && inside) {
			memcpy(out + dout, t->srv->mem + r->off, r->len);
			/* no stale bytes of an earlier response in the padding */
			memset(out + dout + r->len, 0, redy_align8(r->len) - r->len);
			rs[i].len = r->len;
			dout += redy_align8(r->len);
		} else {
			rs[i].status = -EINVAL;
		}
		if (rs[i].status)
			t->bad++;
	}
	t->batches++;
	t->requests += h->count;
	return dout;
}

static void on_recv(struct sthread *t, struct sconn **pc, unsigned int slot,
		    uint32_t len)
{
	struct sconn *c = *pc;
	unsigned int sslot;
	uint8_t *out;
	uint32_t n;
	int r;

	if (slot >= REDY_DEPTH_MAX || !t->idx)
		return;
	out = send_slot(c, &sslot);
	if (!out) {
		say(t, 1, "connection %u: more batches than %u in flight",
		    c->id, REDY_DEPTH_MAX);
		conn_free(t, pc);
		return;
	}
	if (len > REDY_MSG_BYTES)
		len = 0;	/* cannot be: the buffer is that long */
	mark_defined(c->rbuf + (size_t)slot * REDY_MSG_BYTES, len);
	n = execute(t, c->rbuf + (size_t)slot * REDY_MSG_BYTES, len, out);
	if (!n) {
		say(t, 1, "connection %u: malformed batch (%u bytes)", c->id, len);
		conn_free(t, pc);
		return;
	}
	r = post_send(t, c, sslot, n);
	r = r ?: post_recv(t, c, slot);
	if (r) {
		say(t, 1, "connection %u: %s", c->id, strerror(-r));
		conn_free(t, pc);
	}
}

static void on_cqe(struct sthread *t, const struct mrrc_cqe *e)
{
	struct sconn **pc;
	unsigned int kind = (e->wr_id >> 16) & 0xffff;

	if (e->opcode == MRRC_OP_EVENT && e->event == MRRC_EVENT_CONNECT_REQUEST) {
		on_request(t, e->conn);
		return;
	}
	pc = find(t, e->conn);
	if (!pc)
		return;		/* completions of a connection already gone */
	if (e->opcode == MRRC_OP_EVENT) {
		if (e->event == MRRC_EVENT_ESTABLISHED && !(*pc)->established) {
			on_established(t, pc);
		} else {
			say(t, 2, "connection %u: %s", e->conn,
			    mrrc_event_str(e->event));
			conn_free(t, pc);
		}
		return;
	}
	if (kind == WR_SEND && (*pc)->sends)
		(*pc)->sends--;
	if (e->status) {
		/* flushed by a disconnect, or a transport error */
		if (e->status != -ECANCELED)
			say(t, 2, "connection %u: %s %s", e->conn,
			    mrrc_opcode_str(e->opcode), mrrc_status_str(e->status));
		conn_free(t, pc);
		return;
	}
	if (e->opcode == MRRC_OP_RECV)
		on_recv(t, pc, e->wr_id & 0xffff, e->byte_len);
}

static void *serve(void *arg)
{
	struct sthread *t = arg;
	struct mrrc_cqe cq[32];
	int i, n;

	while (!__atomic_load_n(&t->srv->stop, __ATOMIC_RELAXED)) {
		n = mrrc_poll_cq(t->fd, cq, 32);
		if (n < 0) {
			say(t, 0, "poll: %s", strerror(-n));
			break;
		}
		if (!n) {
			mrrc_wait(t->fd, 200);
			continue;
		}
		for (i = 0; i < n; i++)
			on_cqe(t, &cq[i]);
	}
	return NULL;
}

static int thread_open(struct redy_server *srv, struct sthread *t, unsigned int idx)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr = srv->addr };
	uint32_t lis;
	int r;

	t->srv = srv;
	t->idx = idx;
	t->port = srv->port + idx;
	sin.sin_port = htons(t->port);
	t->fd = mrrc_open(0);
	if (t->fd < 0)
		return t->fd;
	r = mrrc_bind(t->fd, srv->dev, NULL);
	r = r ?: mrrc_listen(t->fd, (struct sockaddr *)&sin, 16, 0, &lis);
	if (r) {
		mrrc_close(t->fd);
		t->fd = -1;
	}
	return r;
}

static const char *first_device(char *name, size_t len)
{
	struct mrrc_dev_info devs[8];
	unsigned int n = 8;
	int fd = mrrc_open(0);

	if (fd < 0)
		return NULL;
	if (mrrc_dev_list(fd, devs, &n) || !n) {
		mrrc_close(fd);
		return NULL;
	}
	snprintf(name, len, "%s", devs[0].name);
	mrrc_close(fd);
	return name;
}

int redy_server_start(struct redy_server **out,
		      const struct redy_server_opts *o)
{
	struct redy_server *srv;
	unsigned int i;
	int r = 0;

	if (!o->bytes || !o->threads || o->threads > REDY_THREADS_MAX ||
	    !o->port || o->port > 65535 - REDY_THREADS_MAX - 1)
		return -EINVAL;
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->bytes = o->bytes;
	srv->threads = o->threads;
	srv->addr = o->addr;
	srv->port = o->port;
	srv->verbose = o->verbose;
	snprintf(srv->name, sizeof(srv->name), "%s", o->name ?: "redy");
	if (o->dev)
		snprintf(srv->dev, sizeof(srv->dev), "%s", o->dev);
	else if (!first_device(srv->dev, sizeof(srv->dev)))
		r = -ENODEV;	/* is the mrrc module loaded? */
	srv->mem = r ? MAP_FAILED :
		   mmap(NULL, srv->bytes, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	srv->th = calloc(srv->threads + 1, sizeof(*srv->th));
	if (r || srv->mem == MAP_FAILED || !srv->th) {
		r = r ?: -ENOMEM;
		goto fail;
	}
	for (i = 0; i <= srv->threads; i++) {
		r = thread_open(srv, &srv->th[i], i);
		if (r) {
			fprintf(stderr, "%s: listening on port %u: %s\n", srv->name,
				srv->port + i, strerror(-r));
			break;
		}
		r = -pthread_create(&srv->th[i].tid, NULL, serve, &srv->th[i]);
		if (r) {
			mrrc_close(srv->th[i].fd);
			break;
		}
		srv->running++;
	}
	if (r) {
		redy_server_stop(srv, NULL);
		return r;
	}
	*out = srv;
	return 0;
fail:
	if (srv->mem != MAP_FAILED)
		munmap(srv->mem, srv->bytes);
	free(srv->th);
	free(srv);
	return r;
}

void redy_server_info(const struct redy_server *srv, char *dev, size_t len)
{
	snprintf(dev, len, "%s", srv->dev);
}

void redy_server_stop(struct redy_server *srv, struct redy_server_stats *st)
{
	unsigned int i, j;

	if (st)
		memset(st, 0, sizeof(*st));
	__atomic_store_n(&srv->stop, true, __ATOMIC_RELAXED);
	for (i = 0; i < srv->running; i++) {
		struct sthread *t = &srv->th[i];

		pthread_join(t->tid, NULL);
		if (st) {
			st->requests += t->requests;
			st->batches += t->batches;
			st->refused += t->bad;
			st->pulled += t->pulled;
		}
		/* closing the context ends its connections and exports */
		mrrc_close(t->fd);
		if (t->src_open)
			redy_client_close(&t->src);
		/* and nothing is posted into their buffers any more */
		for (j = 0; j < CONNS_MAX; j++) {
			if (!t->conns[j])
				continue;
			free(t->conns[j]->rbuf);
			free(t->conns[j]->sbuf);
			free(t->conns[j]);
		}
	}
	free(srv->th);
	munmap(srv->mem, srv->bytes);
	free(srv);
}
