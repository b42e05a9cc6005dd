// SPDX-License-Identifier: GPL-2.0-only
/* Files on other nodes, FReadF and FPrintF over the module: see rfile.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libmrrc.h"
#include "bm.h"
#include "rfile.h"

#define MSG_MAX		(sizeof(struct rfile_hdr) + RFILE_DATA_MAX)
#define WAIT_NS		30000000000ull	/* an answer this late: give up */
#define CONNS_MAX	16u		/* clients at once */
#define SLOTS		4u		/* requests in flight per client */
#define IDLE_S		120u		/* a client that asks nothing this long */

/* ---- the client ---------------------------------------------------------- */

struct rfile {
	int fd;
	uint32_t conn;
	uint32_t tag;
	bool broken;		/* a request failed half-way: nothing more */
	uint8_t *sbuf, *rbuf;
	/* rfile_map(): the file as the server exported it */
	bool writable;		/* for one-sided WRITEs too */
	unsigned int nsegs;
	struct rfile_seg seg[RFILE_SEGS];
	uint64_t mapped;	/* bytes: the segments' sum */
	uint64_t last_ns;	/* the last answer */
	uint64_t ping_ns;	/* mapped: PING when none came for this long */
};

enum { WR_SEND = 1, WR_RECV = 2, WR_EVENT = 3, WR_READ = 4, WR_READ2 = 5 };

/*
 * Waits for the completions in @want (bits 1 << WR_SEND, WR_RECV,
 * WR_READ, WR_READ2, WR_EVENT),
 * with the answer's length in *@byte_len; our connection breaking is
 * -ECONNRESET, a failed operation its status.
 */
static int wait_for(struct rfile *f, unsigned int want, uint32_t *byte_len)
{
	uint64_t t0 = bm_now_ns();
	struct mrrc_cqe cq[4];
	int k, i;

	while (want) {
		k = mrrc_poll_cq(f->fd, cq, 4);
		if (k < 0)
			return k;
		if (!k) {
			if (bm_now_ns() - t0 > WAIT_NS)
				return -ETIMEDOUT;
			k = mrrc_wait(f->fd, 1000);
			if (k < 0)
				return k;
			continue;
		}
		for (i = 0; i < k; i++) {
			const struct mrrc_cqe *e = &cq[i];

			if (e->opcode == MRRC_OP_EVENT) {
				if (e->event == MRRC_EVENT_ESTABLISHED && (want & 1u << WR_EVENT)) {
					want &= ~(1u << WR_EVENT);
					continue;
				}
				return e->status ? e->status : -ECONNRESET;
			}
			if (e->status)
				return e->status;
			if (e->wr_id != WR_SEND && e->wr_id != WR_RECV &&
			    e->wr_id != WR_READ && e->wr_id != WR_READ2)
				return -EPROTO;
			if (e->wr_id == WR_RECV)
				*byte_len = e->byte_len;
			want &= ~(1u << e->wr_id);
		}
	}
	return 0;
}

int rfile_open(struct rfile **fp, const char *dev, const char *addr,
	       unsigned int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct rfile *f;
	uint32_t len;
	int r;

	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1 || !port || port > 65535)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->sbuf = malloc(MSG_MAX);
	f->rbuf = malloc(MSG_MAX);
	f->fd = mrrc_open(0);
	if (!f->sbuf || !f->rbuf || f->fd < 0) {
		r = f->fd < 0 ? f->fd : -ENOMEM;
		goto fail;
	}
	r = mrrc_bind(f->fd, dev, NULL);
	r = r ?: mrrc_connect(f->fd, (struct sockaddr *)&sin, NULL, 10000, WR_EVENT,
			      &f->conn);
	r = r ?: wait_for(f, 1u << WR_EVENT, &len);
	if (r)
		goto fail;
	*fp = f;
	return 0;
fail:
	if (f->fd >= 0)
		mrrc_close(f->fd);
	free(f->sbuf);
	free(f->rbuf);
	free(f);
	return r;
}

/*
 * What is in sbuf (@send bytes) out, and the answer into rbuf (room for
 * @room bytes): its length in *@got.  A failure half-way breaks the
 * handle: what is still posted is not ours to reuse.
 */
static int exchange(struct rfile *f, size_t send, size_t room, uint32_t *got)
{
	struct mrrc_wr w[2] = {
		{ .wr_id = WR_RECV, .conn = f->conn, .opcode = MRRC_OP_RECV,
		  .addr = (uintptr_t)f->rbuf, .len = room },
		{ .wr_id = WR_SEND, .conn = f->conn, .opcode = MRRC_OP_SEND,
		  .addr = (uintptr_t)f->sbuf, .len = send },
	};
	int r = mrrc_post(f->fd, w, 2, NULL);

	r = r ?: wait_for(f, 1u << WR_SEND | 1u << WR_RECV, got);
	if (r)
		f->broken = true;
	else
		f->last_ns = bm_now_ns();
	return r;
}

/* Tells the server this client is alive (rfile.h): 0 or a negative errno. */
static int ping(struct rfile *f)
{
	const size_t hl = sizeof(struct rfile_hdr);
	struct rfile_hdr *h = (struct rfile_hdr *)f->sbuf, a;
	uint32_t got = 0;
	int r;

	*h = (struct rfile_hdr){ .magic = RFILE_MAGIC, .op = RFILE_PING, .tag = ++f->tag };
	r = exchange(f, hl, hl, &got);
	if (r)
		return r;
	memcpy(&a, f->rbuf, hl);
	if (got != hl || a.magic != RFILE_MAGIC || a.tag != f->tag ||
	    a.op != RFILE_PONG || a.status || a.len) {
		f->broken = true;
		return -EPROTO;
	}
	return 0;
}

static int request(struct rfile *f, uint8_t op, uint64_t off, void *buf, size_t len)
{
	const size_t hl = sizeof(struct rfile_hdr);
	struct rfile_hdr *h = (struct rfile_hdr *)f->sbuf, a;
	uint32_t got = 0;
	int r;

	if (f->broken)
		return -EIO;
	if (!len || len > RFILE_DATA_MAX)
		return -EINVAL;
	*h = (struct rfile_hdr){ .magic = RFILE_MAGIC, .op = op, .tag = ++f->tag,
				 .len = (uint32_t)len, .off = off };
	if (op == RFILE_WRITE)
		memcpy(f->sbuf + hl, buf, len);
	r = exchange(f, hl + (op == RFILE_WRITE ? len : 0),
		     hl + (op == RFILE_READ ? len : 0), &got);
	if (r)
		return r;
	/* the answer: to this request, of its kind, as long as it says */
	memcpy(&a, f->rbuf, hl);
	if (got < hl || a.magic != RFILE_MAGIC || a.tag != f->tag ||
	    a.op != (op == RFILE_READ ? RFILE_DATA : RFILE_WRITTEN)) {
		f->broken = true;
		return -EPROTO;
	}
	if (a.status)
		return a.status > 0 && a.status < 4096 ? -a.status : -EPROTO;
	if (a.len != len || got != hl + (op == RFILE_READ ? len : 0)) {
		f->broken = true;
		return -EPROTO;
	}
	if (op == RFILE_READ)
		memcpy(buf, f->rbuf + hl, len);
	return 0;
}

int rfile_raw(struct rfile *f, const void *msg, size_t len, struct rfile_hdr *ans)
{
	uint32_t got = 0;
	int r;

	if (f->broken)
		return -EIO;
	if (!len || len > MSG_MAX)
		return -EINVAL;
	memcpy(f->sbuf, msg, len);
	r = exchange(f, len, MSG_MAX, &got);
	if (r)
		return r;
	if (got < sizeof(*ans))
		return -EPROTO;
	memcpy(ans, f->rbuf, sizeof(*ans));
	return (int)got;
}

int rfile_map(struct rfile *f, bool writable)
{
	const size_t hl = sizeof(struct rfile_hdr);
	struct rfile_hdr *h = (struct rfile_hdr *)f->sbuf, a;
	uint32_t got = 0;
	unsigned int k, n;
	uint64_t sum = 0;
	int r;

	if (f->broken)
		return -EIO;
	*h = (struct rfile_hdr){ .magic = RFILE_MAGIC,
				 .op = writable ? RFILE_MAP_RW : RFILE_MAP, .tag = ++f->tag };
	r = exchange(f, hl, hl + RFILE_SEGS * sizeof(struct rfile_seg), &got);
	if (r)
		return r;
	memcpy(&a, f->rbuf, hl);
	/* a server that does not MAP says EPROTO: two-sided reads go on */
	if (got == hl && a.magic == RFILE_MAGIC && a.tag == f->tag &&
	    a.op == RFILE_WRITTEN && a.status == EPROTO)
		return -EPROTO;
	if (got < hl || a.magic != RFILE_MAGIC || a.tag != f->tag || a.op != RFILE_MAPPED) {
		f->broken = true;
		return -EPROTO;
	}
	if (a.status)
		return a.status > 0 && a.status < 4096 ? -a.status : -EPROTO;
	/* segments: 1 to 8, each not empty, in order, contiguous */
	n = a.len / sizeof(struct rfile_seg);
	if (!n || n > RFILE_SEGS || a.len != n * sizeof(struct rfile_seg) ||
	    got != hl + a.len) {
		f->broken = true;
		return -EPROTO;
	}
	memcpy(f->seg, f->rbuf + hl, a.len);
	for (k = 0; k < n; k++) {
		if (!f->seg[k].len ||
		    (k && f->seg[k].addr != f->seg[k - 1].addr + f->seg[k - 1].len)) {
			f->broken = true;
			return -EPROTO;
		}
		sum += f->seg[k].len;
	}
	f->nsegs = n;
	f->mapped = sum;
	f->writable = writable;
	/* the server's idle time, in ms (0: it has none) */
	f->ping_ns = a.off <= UINT32_MAX ? a.off * 1000000ull / 4 : 0;
	return 0;
}

/*
 * Posts @nw RDMA READs or WRITEs on the export and waits for the
 * completions in @want.  On an error after the module took any of them
 * (@done), a READ may still be posted into the caller's buffer (a WRITE
 * out of it): the context goes, and with it every registration and
 * queue pair, before the caller has its buffer back.
 */
static int post_mapped(struct rfile *f, struct mrrc_wr *w, unsigned int nw,
		       unsigned int want)
{
	unsigned int done = 0;
	uint32_t got;
	int r;

	r = mrrc_post(f->fd, w, nw, &done);
	r = r ?: wait_for(f, want, &got);
	if (r) {
		f->broken = true;
		if (done) {
			mrrc_close(f->fd);
			f->fd = -1;
		}
	}
	return r;
}

/* @len bytes at @off with RDMA READs or WRITEs on the export (two at most). */
static int rw_mapped(struct rfile *f, bool write, uint64_t off, void *buf, size_t len)
{
	struct mrrc_wr w[2];
	unsigned int k, nw = 0, want = 0;
	uint64_t start = 0, pos = off;
	size_t left = len;

	if (!len || len > RFILE_DATA_MAX || off > f->mapped || len > f->mapped - off)
		return -EINVAL;
	/* nothing asked for a while: the server is told this client lives */
	if (f->ping_ns && bm_now_ns() - f->last_ns > f->ping_ns) {
		int r = ping(f);

		if (r)
			return r;
	}
	/* more than two segments: through the server */
	for (k = 0, nw = 0; k < f->nsegs; start += f->seg[k].len, k++)
		nw += start < off + len && start + f->seg[k].len > off;
	if (nw > 2)
		return request(f, write ? RFILE_WRITE : RFILE_READ, off, buf, len);
	start = 0;
	nw = 0;
	for (k = 0; k < f->nsegs && left; start += f->seg[k].len, k++) {
		uint64_t end = start + f->seg[k].len;
		size_t n;

		if (pos >= end)
			continue;
		n = end - pos < left ? (size_t)(end - pos) : left;
		w[nw] = (struct mrrc_wr){ .wr_id = WR_READ + nw, .conn = f->conn,
					  .opcode = write ? MRRC_OP_WRITE : MRRC_OP_READ,
					  .addr = (uintptr_t)buf + (pos - off), .len = n,
					  .remote_addr = f->seg[k].addr + (pos - start),
					  .rkey = f->seg[k].rkey };
		want |= 1u << (WR_READ + nw);
		nw++;
		pos += n;
		left -= n;
	}
	return post_mapped(f, w, nw, want);
}

int rfile_read(struct rfile *f, uint64_t off, void *buf, size_t len)
{
	if (f->nsegs && !f->broken)
		return rw_mapped(f, false, off, buf, len);
	return request(f, RFILE_READ, off, buf, len);
}

int rfile_write(struct rfile *f, uint64_t off, const void *buf, size_t len)
{
	if (f->nsegs && f->writable && !f->broken)
		return rw_mapped(f, true, off, (void *)buf, len);
	return request(f, RFILE_WRITE, off, (void *)buf, len);
}

uint64_t rfile_mapped(const struct rfile *f)
{
	return f->mapped;
}

int rfile_poke(struct rfile *f, int64_t delta, const void *buf, size_t len)
{
	struct mrrc_wr w = { .wr_id = WR_READ, .conn = f->conn,
			     .opcode = MRRC_OP_WRITE, .addr = (uintptr_t)buf,
			     .len = len };
	unsigned int k = 0;
	uint64_t start = 0;

	if (f->broken || !f->nsegs)
		return -EIO;
	/* the key of the segment @delta falls in (the first, or the last) */
	while (delta >= 0 && k + 1 < f->nsegs &&
	       (uint64_t)delta >= start + f->seg[k].len)
		start += f->seg[k++].len;
	w.remote_addr = f->seg[0].addr + (uint64_t)delta;
	w.rkey = f->seg[k].rkey;
	return post_mapped(f, &w, 1, 1u << WR_READ);
}

void rfile_close(struct rfile *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		mrrc_close(f->fd);	/* the module tears the connection down */
	free(f->sbuf);
	free(f->rbuf);
	free(f);
}

/* ---- the server ---------------------------------------------------------- */

/*
 * A client's buffers stay until every operation posted on them has
 * completed: the module revokes a RECV's exposure only when its
 * completion is polled, so a buffer freed earlier could still be
 * written by the peer (or by anyone holding its key).  A client being
 * dropped is "dying" until then, and its slot is not reused.
 */
struct client {
	bool used, up, dying, exported;
	uint32_t conn, export;		/* exported: its export of the file */
	unsigned int outstanding;	/* operations posted, not completed */
	unsigned int answers;		/* of them, answer SENDs */
	uint64_t last_ns;		/* its last completion or request */
	uint8_t *rbuf[SLOTS], *sbuf[SLOTS];
};

static struct server {
	int fd, file;
	uint64_t size;
	void *map;			/* the file, for exports (MAP) */
	int map_err;			/* why not: EFBIG, or mmap()'s */
	bool tmpfs;			/* MAP_RW: only then */
	uint32_t listener;
	struct client c[CONNS_MAX];
	unsigned long requests, refused, clients, turned_away, timed_out, exports;
	unsigned long exports_rw;	/* of them, writable */
	uint64_t bytes_read, bytes_written;
	uint64_t idle_ns;		/* -I: a client silent this long goes */
} s;

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t srv_wr(unsigned int c, unsigned int kind, unsigned int slot)
{
	return (uint64_t)c << 16 | kind << 8 | slot;
}

static int srv_post(unsigned int i, struct mrrc_wr *w)
{
	int r = mrrc_post(s.fd, w, 1, NULL);

	if (!r) {
		s.c[i].outstanding++;
		s.c[i].answers += w->opcode == MRRC_OP_SEND;
	}
	return r;
}

static int post_recv(unsigned int i, unsigned int slot)
{
	struct mrrc_wr w = { .wr_id = srv_wr(i, WR_RECV, slot), .conn = s.c[i].conn,
			     .opcode = MRRC_OP_RECV, .addr = (uintptr_t)s.c[i].rbuf[slot],
			     .len = MSG_MAX };

	return srv_post(i, &w);
}

/* Nothing of client @i is in the module any more: its slot is free. */
static void release(unsigned int i)
{
	struct client *c = &s.c[i];
	unsigned int k;

	for (k = 0; k < SLOTS; k++) {
		free(c->rbuf[k]);
		free(c->sbuf[k]);
	}
	*c = (struct client){ 0 };
}

/*
 * Client @i goes: its connection is destroyed (what it had posted is
 * flushed, and completes), and its buffers go once all of it has.
 */
static void drop(unsigned int i)
{
	struct client *c = &s.c[i];

	if (!c->used || c->dying)
		return;
	/* revoked before it returns (destroying the connection would, too) */
	if (c->exported && mrrc_unexport(s.fd, c->export))
		fprintf(stderr, "bm fserve: revoking client %u's export failed\n", i);
	mrrc_destroy(s.fd, c->conn);
	c->dying = true;
	c->up = false;
	if (!c->outstanding)
		release(i);
}

static int established(unsigned int i)
{
	struct client *c = &s.c[i];
	unsigned int k;
	int r = 0;

	for (k = 0; k < SLOTS; k++) {
		c->rbuf[k] = malloc(MSG_MAX);
		c->sbuf[k] = malloc(MSG_MAX);
		if (!c->rbuf[k] || !c->sbuf[k])
			return -ENOMEM;
	}
	c->up = true;
	for (k = 0; !r && k < SLOTS; k++)
		r = post_recv(i, k);
	return r;
}

/*
 * Clients that hold their slot without moving: an answer not taken for
 * WAIT_NS (it never posts a RECV for it), or nothing asked for the idle
 * time (a mapped client too: it PINGs while it reads, see rfile.h).
 */
static void reap(void)
{
	uint64_t now = bm_now_ns();
	unsigned int i;

	for (i = 0; i < CONNS_MAX; i++) {
		const struct client *c = &s.c[i];

		if (c->up && now - c->last_ns > (c->answers ? WAIT_NS : s.idle_ns)) {
			s.timed_out++;
			drop(i);
		}
	}
}

/*
 * MAP: the file exported to client @i alone, read-only (MAP_RW: and for
 * WRITEs, a tmpfs file only), once; its segments in the answer.  EFBIG
 * for a file over the export's 2 GiB, EINVAL for a second MAP,
 * EOPNOTSUPP for MAP_RW of a file elsewhere than on tmpfs.
 */
static int map_file(unsigned int i, unsigned int slot, struct rfile_hdr *a,
		    struct mrrc_wr *w, bool writable)
{
	const uint32_t access = MRRC_ACCESS_REMOTE_READ |
				(writable ? MRRC_ACCESS_REMOTE_WRITE : 0);
	struct client *c = &s.c[i];
	struct mrrc_seg seg[RFILE_SEGS];
	unsigned int n = RFILE_SEGS, k;
	int status = 0, r;

	a->op = RFILE_MAPPED;
	a->off = s.idle_ns / 1000000;	/* (rfile.h: how often to PING) */
	if (c->exported)
		status = EINVAL;
	else if (!s.map)
		status = s.map_err;
	else if (writable && !s.tmpfs)
		status = EOPNOTSUPP;
	if (!status) {
		r = mrrc_export(s.fd, s.map, s.size, access, &c->conn, 1,
				seg, &n, &c->export);
		status = r < 0 ? -r : 0;
	}
	if (!status) {
		struct rfile_seg *out = (struct rfile_seg *)(c->sbuf[slot] + sizeof(*a));

		c->exported = true;
		s.exports++;
		s.exports_rw += writable;
		for (k = 0; k < n; k++)
			out[k] = (struct rfile_seg){ .addr = seg[k].addr,
						     .len = (uint32_t)seg[k].length,
						     .rkey = seg[k].rkey };
		a->len = n * sizeof(*out);
		w->len += a->len;
	} else {
		s.refused++;
	}
	a->status = status;
	return srv_post(i, w);
}

/* A request in slot @slot of client @i, @got bytes: its answer. */
static int serve(unsigned int i, unsigned int slot, uint32_t got)
{
	const size_t hl = sizeof(struct rfile_hdr);
	struct client *c = &s.c[i];
	struct rfile_hdr q = { 0 }, *a = (struct rfile_hdr *)c->sbuf[slot];
	struct mrrc_wr w = { .wr_id = srv_wr(i, WR_SEND, slot), .conn = c->conn,
			     .opcode = MRRC_OP_SEND, .addr = (uintptr_t)c->sbuf[slot],
			     .len = hl };
	int status = 0;

	s.requests++;
	if (got >= hl)
		memcpy(&q, c->rbuf[slot], hl);
	*a = (struct rfile_hdr){ .magic = RFILE_MAGIC, .tag = q.tag, .len = 0,
				 .off = q.off };
	if (got == hl && q.magic == RFILE_MAGIC &&
	    (q.op == RFILE_MAP || q.op == RFILE_MAP_RW))
		return map_file(i, slot, a, &w, q.op == RFILE_MAP_RW);
	if (got == hl && q.magic == RFILE_MAGIC && q.op == RFILE_PING && !q.len) {
		a->op = RFILE_PONG;	/* (its arrival was the point) */
		return srv_post(i, &w);
	}
	if (got < hl || q.magic != RFILE_MAGIC ||
	    (q.op != RFILE_READ && q.op != RFILE_WRITE)) {
		status = EPROTO;
		a->op = RFILE_WRITTEN;
	} else if (!q.len || q.len > RFILE_DATA_MAX || q.off > s.size ||
		   q.len > s.size - q.off ||
		   got != hl + (q.op == RFILE_WRITE ? q.len : 0)) {
		status = EINVAL;
	}
	if (!a->op)
		a->op = q.op == RFILE_READ ? RFILE_DATA : RFILE_WRITTEN;
	if (!status && q.op == RFILE_READ) {
		status = -bm_file_io(s.file, false, q.off, c->sbuf[slot] + hl, q.len);
		if (!status) {
			a->len = q.len;
			w.len += q.len;
			s.bytes_read += q.len;
		}
	} else if (!status) {
		status = -bm_file_io(s.file, true, q.off, c->rbuf[slot] + hl, q.len);
		if (!status) {
			a->len = q.len;
			s.bytes_written += q.len;
		}
	}
	if (status)
		s.refused++;
	a->status = status;
	return srv_post(i, &w);
}

static int handle(const struct mrrc_cqe *e)
{
	unsigned int kind = (e->wr_id >> 8) & 0xff, slot = e->wr_id & 0xff, i, k;
	struct client *c;

	if (e->opcode == MRRC_OP_EVENT && e->event == MRRC_EVENT_CONNECT_REQUEST) {
		for (k = 0; k < CONNS_MAX && s.c[k].used; k++)
			;
		if (k == CONNS_MAX) {	/* full: turned away */
			s.turned_away++;
			mrrc_reject(s.fd, e->conn);
			mrrc_destroy(s.fd, e->conn);
			return 0;
		}
		s.c[k] = (struct client){ .used = true, .conn = e->conn,
					  .last_ns = bm_now_ns() };
		s.clients++;
		if (mrrc_accept(s.fd, e->conn, srv_wr(k, WR_EVENT, 0)))
			drop(k);
		return 0;
	}
	if (e->opcode == MRRC_OP_EVENT && e->event == MRRC_EVENT_DEVICE_REMOVAL)
		return -ENODEV;
	if (e->opcode == MRRC_OP_EVENT && e->conn == s.listener)
		return e->status ? e->status : -ECONNABORTED;	/* no more clients */
	/*
	 * Whose: a SEND's or RECV's by its wr_id's slot, which must hold
	 * that connection (a dropped client's slot holds it until its
	 * flushes are in); an event, or a WRITE_IMM (its wr_id is not
	 * ours), by the connection, the live client's first.
	 */
	if (e->opcode == MRRC_OP_SEND || e->opcode == MRRC_OP_RECV) {
		i = e->wr_id >> 16;
		if (i >= CONNS_MAX || !s.c[i].used || s.c[i].conn != e->conn)
			return -EPROTO;		/* not one of ours: a bug here */
	} else {
		for (i = 0; i < CONNS_MAX; i++)
			if (s.c[i].used && s.c[i].conn == e->conn && !s.c[i].dying)
				break;
		if (i == CONNS_MAX)
			return 0;	/* nobody's, or going anyway */
	}
	c = &s.c[i];
	if (e->opcode == MRRC_OP_EVENT) {
		if (e->event == MRRC_EVENT_ESTABLISHED && !c->up && !c->dying) {
			if (established(i))
				drop(i);
			return 0;
		}
		drop(i);	/* gone, broken, or an event out of place */
		return 0;
	}
	if (e->opcode != MRRC_OP_SEND && e->opcode != MRRC_OP_RECV) {
		drop(i);	/* a WRITE_IMM: nothing we serve */
		return 0;
	}
	/* an operation of the client's, posted by srv_post() */
	if (!c->outstanding || (e->wr_id >> 16) != i || slot >= SLOTS || (kind != WR_SEND && kind != WR_RECV))
		return -EPROTO;		/* not one of ours: a bug here */
	c->outstanding--;
	if (kind == WR_SEND)
		c->answers--;
	if (c->dying) {
		if (!c->outstanding)
			release(i);
		return 0;
	}
	if (e->status) {
		drop(i);
		return 0;
	}
	c->last_ns = bm_now_ns();
	/* the answer went out: the slot takes the next request */
	if (kind == WR_SEND ? post_recv(i, slot) : serve(i, slot, e->byte_len))
		drop(i);
	return 0;
}

int rfile_serve(const char *dev, const char *addr, unsigned int port,
		const char *path, uint64_t size, unsigned int idle_s)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct sigaction sa = { .sa_handler = on_signal };
	struct mrrc_cqe cq[32];
	uint64_t last_reap = bm_now_ns();
	struct statfs fs;
	unsigned int i;
	int r, k;

	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1 || !port || port > 65535)
		return -EINVAL;
	s = (struct server){ .size = size, .fd = -1,
			     .idle_ns = (idle_s ? idle_s : IDLE_S) * 1000000000ull };
	s.file = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s.file < 0)
		return -errno;
	if (ftruncate(s.file, (off_t)size)) {
		r = -errno;
		close(s.file);
		return r;
	}
	/* for one-sided reads (MAP): the export's limit is 2 GiB */
	s.tmpfs = !fstatfs(s.file, &fs) && fs.f_type == TMPFS_MAGIC;
	s.map_err = EFBIG;
	if (size <= RFILE_MAP_MAX) {
		s.map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, s.file, 0);
		if (s.map == MAP_FAILED) {
			s.map_err = errno;	/* a file system without it: 9p */
			s.map = NULL;
		}
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	s.fd = mrrc_open(0);
	if (s.fd < 0) {
		if (s.map)
			munmap(s.map, size);
		close(s.file);
		return s.fd;
	}
	r = mrrc_bind(s.fd, dev, NULL);
	r = r ?: mrrc_listen(s.fd, (struct sockaddr *)&sin, CONNS_MAX, UINT64_MAX,
			     &s.listener);
	if (!r)
		fprintf(stderr, "bm fserve: serving %s (%llu bytes) at %s:%u\n", path,
			(unsigned long long)size, addr, port);
	while (!r && !stop) {
		if (bm_now_ns() - last_reap > 1000000000ull) {
			reap();
			last_reap = bm_now_ns();
		}
		k = mrrc_poll_cq(s.fd, cq, 32);
		if (k < 0) {
			r = k;
			break;
		}
		if (!k) {
			k = mrrc_wait(s.fd, 200);
			if (k < 0)
				r = k;
			continue;
		}
		for (i = 0; !r && i < (unsigned int)k; i++)
			r = handle(&cq[i]);
	}
	fprintf(stderr, "bm fserve: %lu clients (%lu turned away, %lu timed out, %lu mapped, %lu of them writable), %lu requests (%lu refused), %llu bytes read, %llu written (one-sided WRITEs not counted)\n",
		s.clients, s.turned_away, s.timed_out, s.exports, s.exports_rw, s.requests, s.refused,
		(unsigned long long)s.bytes_read, (unsigned long long)s.bytes_written);
	/* closing revokes everything of the context: then the buffers go */
	mrrc_close(s.fd);
	for (i = 0; i < CONNS_MAX; i++)
		if (s.c[i].used)
			release(i);
	if (s.map)
		munmap(s.map, size);
	if (fsync(s.file) && !r)
		r = -errno;
	close(s.file);
	return r;
}
