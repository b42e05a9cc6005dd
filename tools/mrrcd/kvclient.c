// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * mrrcd's client: see kvclient.h.  Over RDMA the byte stream is carried
 * by the module's SEND/RECV exactly as the daemon's side does (rdma.c);
 * completions are harvested by one loop, kvc_poll(), whatever they are
 * for: received bytes are appended to the input buffer, finished SENDs
 * free their buffer, a READ or atomic ends the wait for it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "hash.h"
#include "kvclient.h"
#include "libmrrc.h"
#include "mark_defined.h"

#define WR_RECV		1u
#define WR_SEND		2u
#define WR_READ		3u
#define WR_ATOMIC	4u
#define WR_CRW		5u
#define RSET_DEADLINE_NS (5ULL * 1000000000)
#define WAIT_MS		10000	/* no completion for this long: dead */
/*
 * The banner may take longer: the daemon exports its arena to each new
 * connection first (on an emulated machine, seconds per GiB).
 */
#define BANNER_WAIT_MS	60000
#define MAX_TRIES	1000	/* torn one-sided reads before -EAGAIN */
#define IN_MAX		(64u << 20)	/* a reply larger than this is refused */

static int resolve(const char *host, unsigned int port, struct addrinfo **res)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	char portstr[16];

	int r;

	snprintf(portstr, sizeof(portstr), "%u", port);
	r = getaddrinfo(host, portstr, &hints, res);
	switch (r) {
	case 0:
		return 0;
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_AGAIN:
		return -EAGAIN;
	case EAI_SYSTEM:
		return errno ? -errno : -EHOSTUNREACH;
	default:
		return -EHOSTUNREACH;
	}
}

/* A TCP socket's errno: its timeouts (SO_RCVTIMEO) are RDMA's ETIMEDOUT. */
static int sock_err(int e)
{
	return e == EAGAIN || e == EWOULDBLOCK ? -ETIMEDOUT : -e;
}

static void init(struct kvc *k, enum kvc_transport tr)
{
	struct timespec now;

	memset(k, 0, sizeof(*k));
	k->tr = tr;
	k->sock = -1;
	k->fd = -1;
	k->wait_ms = WAIT_MS;
	/* each connection its own sample (KVC_META_SAMPLE) */
	clock_gettime(CLOCK_MONOTONIC, &now);
	k->rng = 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid() ^ (uintptr_t)k ^
		 ((uint64_t)now.tv_sec << 30) ^ (uint64_t)now.tv_nsec;
}

int kvc_connect_tcp(struct kvc *k, const char *host, unsigned int port)
{
	struct addrinfo *res, *ai;
	int one = 1, err;

	init(k, KVC_TCP);
	err = resolve(host, port, &res);
	if (err)
		return err;
	err = -ECONNREFUSED;
	for (ai = res; ai; ai = ai->ai_next) {
		k->sock = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
				 ai->ai_protocol);
		if (k->sock < 0) {
			err = -errno;
			continue;
		}
		if (!connect(k->sock, ai->ai_addr, ai->ai_addrlen)) {
			err = 0;
			break;
		}
		err = -errno;
		close(k->sock);
		k->sock = -1;
	}
	freeaddrinfo(res);
	if (!err) {
		struct timeval tv = { .tv_sec = WAIT_MS / 1000 };

		setsockopt(k->sock, IPPROTO_TCP, TCP_NODELAY, &one,
			   sizeof(one));
		setsockopt(k->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(k->sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	return err;
}

void kvc_close(struct kvc *k)
{
	if (k->sock >= 0)
		close(k->sock);
	if (k->fd >= 0)
		mrrc_close(k->fd);	/* destroys the connection */
	free(k->rbuf);
	free(k->sbuf);
	free(k->in);
	free(k->item);
	free(k->atomic_buf);
	free(k->win);
	free(k->loc);
	init(k, k->tr);
}

/* ---- RDMA plumbing ----------------------------------------------------- */

static int post_recv(struct kvc *k, unsigned int i)
{
	struct mrrc_wr w = {
		.wr_id = WR_RECV << 8 | i, .conn = k->conn,
		.opcode = MRRC_OP_RECV,
		.addr = (uintptr_t)(k->rbuf + (size_t)i * KV_MSG_SIZE),
		.len = KV_MSG_SIZE,
	};

	return mrrc_post(k->fd, &w, 1, NULL);
}

static int in_append(struct kvc *k, const void *p, size_t n)
{
	if (!n)
		return 0;
	if (k->in_len - k->in_off + n > IN_MAX)
		return -EPROTO;
	if (k->in_off && k->in_off == k->in_len)
		k->in_off = k->in_len = 0;
	if (k->in_len + n > k->in_cap) {
		size_t cap = k->in_cap ? k->in_cap : 65536;
		char *q;

		if (k->in_off) {	/* slide down first */
			memmove(k->in, k->in + k->in_off, k->in_len - k->in_off);
			k->in_len -= k->in_off;
			k->in_off = 0;
		}
		while (cap < k->in_len + n)
			cap *= 2;
		if (cap != k->in_cap) {
			q = realloc(k->in, cap);
			if (!q)
				return -ENOMEM;
			k->in = q;
			k->in_cap = cap;
		}
	}
	memcpy(k->in + k->in_len, p, n);
	k->in_len += n;
	return 0;
}

/*
 * Harvest completions; wait up to k->wait_ms for one if there is none.
 * *done_seq gets set when the READ/atomic with wr_id seq completed (its
 * status in *done_status).
 */
static int kvc_poll(struct kvc *k, uint64_t seq, bool *done, int *status)
{
	struct mrrc_cqe c[32];
	int n, i, err;

	if (k->dead)
		return -ECONNRESET;
	n = mrrc_poll_cq(k->fd, c, 32);
	if (n == 0) {
		err = mrrc_wait(k->fd, k->wait_ms);
		if (err < 0) {
			k->dead = true;
			return err;
		}
		n = mrrc_poll_cq(k->fd, c, 32);
		if (n == 0) {
			k->dead = true;	/* a late reply would be misread */
			return -ETIMEDOUT;
		}
	}
	if (n < 0) {
		k->dead = true;	/* what completed is not known */
		return n;
	}
	for (i = 0; i < n; i++) {
		unsigned int kind = (c[i].wr_id >> 8) & 0xff;
		unsigned int slot = c[i].wr_id & 0xff;

		if (c[i].opcode == MRRC_OP_EVENT) {
			/* (not of an address the connect tried before) */
			if (c[i].conn == k->conn &&
			    c[i].event != MRRC_EVENT_ESTABLISHED)
				k->dead = true;
			continue;
		}
		if (kind == WR_SEND && slot < KV_SEND_DEPTH &&
		    k->send_busy[slot]) {
			k->send_busy[slot] = 0;
			k->sends_out--;
		}
		if (kind == WR_CRW) {
			/* Whoever polls: kvc_rset() may be reading a line. */
			if (c[i].wr_id >> 16 == k->crw_seq) {
				k->crw_pending = false;
				k->crw_status = c[i].status;
			}
			continue;
		}
		if (c[i].status) {
			if (kind == WR_READ || kind == WR_ATOMIC) {
				if (done && c[i].wr_id >> 16 == seq) {
					*done = true;
					*status = c[i].status;
				}
				continue;
			}
			k->dead = true;
			continue;
		}
		if (kind == WR_RECV && slot < KV_RECV_DEPTH) {
			size_t len = c[i].byte_len;

			if (len > KV_MSG_SIZE)
				len = KV_MSG_SIZE;
			mark_defined(k->rbuf + (size_t)slot * KV_MSG_SIZE, len);
			err = in_append(k, k->rbuf + (size_t)slot * KV_MSG_SIZE,
					len);
			err = err ?: post_recv(k, slot);
			if (err)
				k->dead = true;	/* the stream has a hole now */
		} else if ((kind == WR_READ || kind == WR_ATOMIC) && done &&
			   c[i].wr_id >> 16 == seq) {
			*done = true;
			*status = 0;
		}
	}
	return k->dead ? -ECONNRESET : 0;
}

static int rdma_send(struct kvc *k, const char *p, size_t len)
{
	while (len) {
		size_t n = len < KV_MSG_SIZE ? len : KV_MSG_SIZE;
		struct mrrc_wr w = { .conn = k->conn, .opcode = MRRC_OP_SEND,
				     .len = n };
		unsigned int i;
		int err;

		while (k->sends_out == KV_SEND_DEPTH) {
			err = kvc_poll(k, 0, NULL, NULL);
			if (err)
				return err;
		}
		for (i = 0; k->send_busy[i]; i++)
			;
		memcpy(k->sbuf + (size_t)i * KV_MSG_SIZE, p, n);
		w.wr_id = WR_SEND << 8 | i;
		w.addr = (uintptr_t)(k->sbuf + (size_t)i * KV_MSG_SIZE);
		err = mrrc_post(k->fd, &w, 1, NULL);
		if (err) {
			k->dead = true;	/* a request cut short: the stream is lost */
			return err;
		}
		k->send_busy[i] = 1;
		k->sends_out++;
		p += n;
		len -= n;
	}
	return 0;
}

/* ---- the byte stream --------------------------------------------------- */

static int send_all(struct kvc *k, const char *p, size_t len)
{
	if (k->dead)
		return -ECONNRESET;
	if (k->tr == KVC_RDMA)
		return rdma_send(k, p, len);
	while (len) {
		ssize_t n = send(k->sock, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			k->dead = true;
			return n < 0 ? sock_err(errno) : -ECONNRESET;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int kvc_send(struct kvc *k, const void *p, size_t len)
{
	return send_all(k, p, len);
}

/* More input: at least one byte, or an error. */
static int fill(struct kvc *k)
{
	char buf[65536];
	size_t before = k->in_len - k->in_off;
	ssize_t n;
	int err;

	if (k->tr == KVC_RDMA) {
		while (k->in_len - k->in_off == before) {
			err = kvc_poll(k, 0, NULL, NULL);
			if (err)
				return err;
		}
		return 0;
	}
	do {
		n = recv(k->sock, buf, sizeof(buf), 0);
	} while (n < 0 && errno == EINTR);
	if (n <= 0) {
		k->dead = true;
		return n < 0 ? sock_err(errno) : -ECONNRESET;
	}
	err = in_append(k, buf, (size_t)n);
	if (err)
		k->dead = true;	/* bytes dropped: the stream is lost */
	return err;
}

/*
 * The next line (LF included) from rel bytes past in_off; its length in
 * *len.  Input is only ever appended (fill() may move the buffer, not
 * what lies past in_off), so offsets stay valid, pointers do not.
 */
static int line_at(struct kvc *k, size_t rel, size_t *len)
{
	size_t scanned = rel;
	int err;

	for (;;) {
		char *s = k->in + k->in_off, *nl;
		size_t have = k->in_len - k->in_off;

		nl = have > scanned ? memchr(s + scanned, '\n', have - scanned) :
		     NULL;
		if (nl) {
			*len = (size_t)(nl - s) + 1 - rel;
			return 0;
		}
		if (have > scanned)
			scanned = have;
		if (have - rel > 64 * 1024) {
			k->dead = true;	/* no line: the stream is lost */
			return -EPROTO;
		}
		err = fill(k);
		if (err)
			return err;
	}
}

static int line(struct kvc *k, size_t *len)
{
	return line_at(k, 0, len);
}

/* At least n bytes past in_off. */
static int need(struct kvc *k, size_t n)
{
	while (k->in_len - k->in_off < n) {
		int err = fill(k);

		if (err)
			return err;
	}
	return 0;
}

static bool line_is(struct kvc *k, size_t len, const char *what)
{
	size_t w = strlen(what);

	return len == w + 2 && !memcmp(k->in + k->in_off, what, w) &&
	       k->in[k->in_off + w] == '\r';
}

/* ---- connecting over RDMA ---------------------------------------------- */

static int wait_established(struct kvc *k)
{
	struct mrrc_cqe c;
	int n, err;

	for (;;) {
		n = mrrc_poll_cq(k->fd, &c, 1);
		if (n < 0)
			return n;
		if (!n) {
			err = mrrc_wait(k->fd, WAIT_MS);
			if (err < 0)
				return err;
			if (!err)
				return -ETIMEDOUT;
			continue;
		}
		/* (or an event of an address tried before) */
		if (c.opcode != MRRC_OP_EVENT || c.conn != k->conn)
			continue;
		if (c.event == MRRC_EVENT_ESTABLISHED)
			return 0;
		return c.status < 0 ? c.status : -ECONNREFUSED;
	}
}

/* The banner (kvwire.h): the arena's segments. */
static int read_banner(struct kvc *k)
{
	unsigned int version, nsegs, i;
	unsigned long long size;
	size_t len;
	int err;

	err = line(k, &len);
	if (err)
		return err;
	k->in[k->in_off + len - 1] = '\0';
	if (sscanf(k->in + k->in_off, KV_BANNER " %u %llu %u", &version,
		   &size, &nsegs) != 3 || version != KV_BANNER_VERSION ||
	    nsegs > KV_MAX_SEGS)
		return -EPROTO;
	k->in_off += len;
	k->arena_size = size;
	for (i = 0; i < nsegs; i++) {
		unsigned long long off, addr, slen;
		unsigned int rkey;
		char rights[4];

		err = line(k, &len);
		if (err)
			return err;
		k->in[k->in_off + len - 1] = '\0';
		if (sscanf(k->in + k->in_off, "SEG %llu %llu %llu %u %3s", &off,
			   &addr, &slen, &rkey, rights) != 5 ||
		    off > size || slen > size - off)
			return -EPROTO;
		k->in_off += len;
		k->seg[i] = (struct kvc_seg){ .off = off, .addr = addr,
					      .len = slen, .rkey = rkey,
					      .atomic = !strcmp(rights, "ra") };
	}
	k->nseg = nsegs;
	err = line(k, &len);
	if (err)
		return err;
	if (!line_is(k, len, "END"))
		return -EPROTO;
	k->in_off += len;
	return 0;
}

static int oread(void *ctx, uint64_t off, void *buf, size_t len);
static int oreadv(void *ctx, const struct mrrcd_iov *iov, unsigned int n);

int kvc_connect_rdma(struct kvc *k, const char *dev, const char *host,
		     unsigned int port)
{
	struct mrrc_dev_info devs[8];
	unsigned int n = 8, i;
	struct addrinfo *res, *ai;
	int err;

	init(k, KVC_RDMA);
	k->fd = mrrc_open(0);
	if (k->fd < 0)
		return k->fd;
	if (!dev) {
		err = mrrc_dev_list(k->fd, devs, &n);
		if (!err && !n)
			err = -ENODEV;
		if (err)
			goto fail;
		dev = devs[0].name;
	}
	err = mrrc_bind(k->fd, dev, NULL);
	if (err)
		goto fail;
	err = resolve(host, port, &res);
	if (err)
		goto fail;
	/* Each address in turn, as over TCP; the last one's error. */
	err = -ECONNREFUSED;
	for (ai = res; ai; ai = ai->ai_next) {
		err = mrrc_connect(k->fd, ai->ai_addr, NULL, 5000, 0, &k->conn);
		if (err)
			continue;
		err = wait_established(k);
		if (!err)
			break;
		mrrc_destroy(k->fd, k->conn);
	}
	freeaddrinfo(res);
	if (err)
		goto fail;
	k->rbuf = aligned_alloc(4096, KV_RECV_DEPTH * KV_MSG_SIZE);
	k->sbuf = aligned_alloc(4096, KV_SEND_DEPTH * KV_MSG_SIZE);
	k->atomic_buf = aligned_alloc(64, 64);
	k->win = aligned_alloc(4096, 4096);
	if (!k->rbuf || !k->sbuf || !k->atomic_buf || !k->win) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < KV_RECV_DEPTH && !err; i++)
		err = post_recv(k, i);
	k->wait_ms = BANNER_WAIT_MS;
	err = err ?: read_banner(k);
	k->wait_ms = WAIT_MS;
	if (err)
		goto fail;
	/*
	 * What the banner names is not an arena (EPROTO) or has no segment
	 * at its start (EFAULT): two-sided only.  A READ that failed: the
	 * connection went with it (a queue pair in error), and so does this.
	 */
	err = k->nseg ? mrrcd_remote_open(&k->rem, oread, k) : -EPROTO;
	k->st = (struct kvc_stats){ 0 };	/* (the header's READ) */
	if (err && err != -EPROTO && err != -EFAULT)
		goto fail;
	if (!err && k->rem.hdr.item_max <= MRRCD_ITEM_MAX) {
		k->item = malloc(k->rem.hdr.item_max);
		if (!k->item) {
			err = -ENOMEM;
			goto fail;
		}
		k->rem.readv = oreadv;
		k->rem_ok = true;
		kvc_set_hints(k, true);	/* without memory: two READs a GET */
	}
	return 0;
fail:
	kvc_close(k);
	return err;
}

/* ---- requests ---------------------------------------------------------- */

/* memcached's keys: 1 to 250 bytes, no space or control character. */
static bool key_ok(const char *key)
{
	size_t i, n = strlen(key);

	if (!n || n > MRRCD_KEY_MAX)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)key[i] <= ' ' || key[i] == 0x7f)
			return false;
	return true;
}

/* A reply that cannot be parsed: nothing after it can be trusted. */
static int broken(struct kvc *k)
{
	k->dead = true;
	return -EPROTO;
}

int kvc_store(struct kvc *k, const char *mode, const char *key,
	      const void *val, size_t len, uint32_t flags, uint32_t exptime)
{
	char hdr[512];
	size_t l;
	int n, err;

	/* (a mode of the caller's is not copied into the line unchecked) */
	if (!key_ok(key) || !mode || (strcmp(mode, "set") && strcmp(mode, "add") &&
			     strcmp(mode, "replace") && strcmp(mode, "append") &&
			     strcmp(mode, "prepend")))
		return -EINVAL;
	n = snprintf(hdr, sizeof(hdr), "%s %s %" PRIu32 " %" PRIu32 " %zu\r\n",
		     mode, key, flags, exptime, len);
	if (n < 0 || (size_t)n >= sizeof(hdr))
		return -EINVAL;
	err = send_all(k, hdr, (size_t)n);
	err = err ?: send_all(k, val, len);
	err = err ?: send_all(k, "\r\n", 2);
	err = err ?: line(k, &l);
	if (err)
		return err;
	if (line_is(k, l, "STORED"))
		err = 0;
	else if (line_is(k, l, "NOT_STORED"))
		err = strcmp(mode, "add") ? -ENOENT : -EEXIST;
	else if (line_is(k, l, "SERVER_ERROR object too large for cache"))
		err = -E2BIG;
	else if (l > 13 && !memcmp(k->in + k->in_off, "SERVER_ERROR", 12))
		err = -ENOMEM;
	else
		return broken(k);
	k->in_off += l;
	return err;
}

int kvc_get(struct kvc *k, const char *key, const char **val, size_t *len,
	    uint32_t *flags)
{
	unsigned long long bytes;
	size_t l, at, klen = strlen(key);
	unsigned int fl;
	char req[300];
	int n, err;

	if (!key_ok(key))
		return -EINVAL;
	n = snprintf(req, sizeof(req), "get %s\r\n", key);
	err = send_all(k, req, (size_t)n);
	err = err ?: line(k, &l);
	if (err)
		return err;
	if (line_is(k, l, "END")) {
		k->in_off += l;
		return -ENOENT;
	}
	/* VALUE <our key> <flags> <bytes> */
	k->in[k->in_off + l - 1] = '\0';
	if (l < 6 + klen + 1 || memcmp(k->in + k->in_off, "VALUE ", 6) ||
	    memcmp(k->in + k->in_off + 6, key, klen) ||
	    k->in[k->in_off + 6 + klen] != ' ' ||
	    sscanf(k->in + k->in_off + 6 + klen, " %u %llu", &fl, &bytes) != 2 ||
	    bytes > MRRCD_ITEM_MAX)
		return broken(k);
	k->in_off += l;
	err = need(k, bytes + 2 + 5);	/* data, CRLF, END\r\n */
	if (err)
		return err;
	at = k->in_off;
	if (memcmp(k->in + at + bytes, "\r\nEND\r\n", 7))
		return broken(k);
	k->in_off += bytes + 7;
	*val = k->in + at;
	*len = bytes;
	if (flags)
		*flags = fl;
	return 0;
}

/*
 * Take back an rset's CRW: cancelled, and its completion seen; if that
 * cannot be had, the connection destroyed, which flushes it.  Either way
 * the module no longer reads the caller's buffer when this returns.
 */
static void crw_abort(struct kvc *k)
{
	mrrc_cancel(k->fd, k->conn, MRRC_OP_CRW, k->tag);
	while (k->crw_pending) {
		if (kvc_poll(k, 0, NULL, NULL)) {
			mrrc_destroy(k->fd, k->conn);
			k->crw_pending = false;
			k->dead = true;
		}
	}
}

int kvc_rset(struct kvc *k, const char *key, const void *val, size_t len,
	     uint32_t flags, uint32_t exptime)
{
	struct mrrc_wr w = { .conn = k->conn, .opcode = MRRC_OP_CRW };
	struct timespec now;
	int n, err, st;
	char hdr[512];
	size_t l;

	if (k->tr != KVC_RDMA)
		return -EOPNOTSUPP;
	if (!key_ok(key) || !len)
		return -EINVAL;
	if (k->dead)
		return -ECONNRESET;
	k->tag++;
	n = snprintf(hdr, sizeof(hdr), "rset %s %" PRIu32 " %" PRIu32 " %zu %" PRIu64 "\r\n",
		     key, flags, exptime, len, k->tag);
	err = send_all(k, hdr, (size_t)n);
	if (err)
		return err;
	clock_gettime(CLOCK_MONOTONIC, &now);
	k->seq++;
	k->crw_seq = k->seq;
	w.wr_id = k->seq << 16 | WR_CRW << 8;
	w.addr = (uintptr_t)val;
	w.len = len;
	w.tag = k->tag;
	w.deadline_ns = (uint64_t)now.tv_sec * 1000000000 + now.tv_nsec +
			RSET_DEADLINE_NS;
	k->crw_pending = true;
	err = mrrc_post(k->fd, &w, 1, NULL);
	if (err) {
		k->crw_pending = false;
		k->dead = true;	/* the daemon waits for a write never coming */
		return err;
	}
	err = line(k, &l);
	if (err) {
		crw_abort(k);
		return err;
	}
	if (line_is(k, l, "STORED")) {
		st = 0;
	} else if (line_is(k, l, "SERVER_ERROR object too large for cache")) {
		st = -E2BIG;
	} else if (l > 13 && !memcmp(k->in + k->in_off, "SERVER_ERROR", 12)) {
		st = -EIO;
	} else {
		crw_abort(k);
		return broken(k);
	}
	k->in_off += l;
	/* A refused rset leaves our CRW unmatched: take it back. */
	if (st) {
		crw_abort(k);
		return st;
	}
	/*
	 * STORED: the daemon had the value, which only our CRW could have
	 * written.  What remains is to know the module no longer reads
	 * @val; the CRW's own status may be a flush after the write landed
	 * (a connection ending), which is not the caller's concern.
	 */
	while (k->crw_pending) {
		err = kvc_poll(k, 0, NULL, NULL);
		if (err) {
			crw_abort(k);
			return 0;
		}
	}
	return 0;
}

int kvc_delete(struct kvc *k, const char *key)
{
	char req[300];
	size_t l;
	int n, err;

	if (!key_ok(key))
		return -EINVAL;
	n = snprintf(req, sizeof(req), "delete %s\r\n", key);
	err = send_all(k, req, (size_t)n);
	err = err ?: line(k, &l);
	if (err)
		return err;
	if (line_is(k, l, "DELETED"))
		err = 0;
	else if (line_is(k, l, "NOT_FOUND"))
		err = -ENOENT;
	else
		return broken(k);
	k->in_off += l;
	return err;
}

/* Replies that go on until a terminator line. */
static bool multi_line(const char *cmd)
{
	return !strncmp(cmd, "stats", 5) || !strncmp(cmd, "get", 3) ||
	       !strncmp(cmd, "gat", 3);
}

int kvc_command(struct kvc *k, const char *cmdline, const char **reply,
		size_t *len)
{
	size_t rel = 0, l;
	int err;

	if (strpbrk(cmdline, "\r\n"))
		return -EINVAL;
	err = send_all(k, cmdline, strlen(cmdline));
	err = err ?: send_all(k, "\r\n", 2);
	while (!err) {
		const char *p;

		err = line_at(k, rel, &l);
		if (err)
			break;
		p = k->in + k->in_off + rel;
		rel += l;
		if (!multi_line(cmdline) || (l == 5 && !memcmp(p, "END", 3)) ||
		    (l == 7 && !memcmp(p, "RESET", 5)) ||
		    !memcmp(p, "ERROR", l < 5 ? l : 5) ||
		    !memcmp(p, "CLIENT_ERROR", l < 12 ? l : 12) ||
		    !memcmp(p, "SERVER_ERROR", l < 12 ? l : 12))
			break;
		if (l > 6 && !memcmp(p, "VALUE ", 6)) {
			unsigned long long b;
			char tmp[320];

			memcpy(tmp, p, l < sizeof(tmp) ? l : sizeof(tmp) - 1);
			tmp[l < sizeof(tmp) ? l : sizeof(tmp) - 1] = '\0';
			if (sscanf(tmp, "VALUE %*s %*u %llu", &b) != 1 ||
			    b > MRRCD_ITEM_MAX)
				return broken(k);
			err = need(k, rel + b + 2);
			rel += b + 2;
		}
	}
	if (err)
		return err;
	/*
	 * NUL-terminated in place of the last line's CRLF (or a bare LF),
	 * consumed with the rest.
	 */
	l = rel >= 2 && k->in[k->in_off + rel - 2] == '\r' ? rel - 2 : rel - 1;
	k->in[k->in_off + l] = '\0';
	*reply = k->in + k->in_off;
	*len = l;
	k->in_off += rel;
	return 0;
}

/* ---- one-sided GET ----------------------------------------------------- */

static const struct kvc_seg *seg_of(struct kvc *k, uint64_t off, size_t len)
{
	unsigned int i;

	for (i = 0; i < k->nseg; i++)
		if (off >= k->seg[i].off && len <= k->seg[i].len &&
		    off - k->seg[i].off <= k->seg[i].len - len)
			return &k->seg[i];
	return NULL;
}

/* Post wrs and wait until the last one (wr_id seq) has completed. */
static int post_wait(struct kvc *k, struct mrrc_wr *w, unsigned int n)
{
	bool done = false;
	int status = 0, err;

	err = mrrc_post(k->fd, w, n, NULL);
	while (!err && !done)
		err = kvc_poll(k, k->seq, &done, &status);
	return err ?: status;
}

/*
 * The reader's transport: RDMA READs, small ones into staging buffers the
 * module has cached, posted together and waited for once (the responder
 * runs them in order).  The first post of a GET also refreshes the
 * header's clock and flush state, first in the same post.
 */
static int oreadv(void *ctx, const struct mrrcd_iov *iov, unsigned int n)
{
	struct kvc *k = ctx;
	struct mrrc_wr w[3];
	unsigned char *dst[2];
	unsigned int i, nw = 0;
	bool clock = false;
	int err;

	if (!n || n > 2)
		return -EINVAL;
	k->seq++;
	memset(w, 0, sizeof(w));
	if (k->clock_due) {
		const struct kvc_seg *h = seg_of(k, MRRCD_HDR_CLOCK_OFF,
						 MRRCD_HDR_CLOCK_LEN);

		if (h) {
			w[nw++] = (struct mrrc_wr){
				.wr_id = WR_READ << 8, .conn = k->conn,
				.opcode = MRRC_OP_READ,
				.addr = (uintptr_t)k->win,
				.len = MRRCD_HDR_CLOCK_LEN,
				.remote_addr = h->addr + MRRCD_HDR_CLOCK_OFF -
					       h->off,
				.rkey = h->rkey,
			};
			clock = true;
		}
	}
	for (i = 0; i < n; i++) {
		const struct kvc_seg *s = seg_of(k, iov[i].off, iov[i].len);

		if (!s)
			return -EFAULT;
		/* Staging: [128, 2048) and [2048, 4096) of the window page. */
		dst[i] = iov[i].len <= 1920 ? k->win + 128 + i * 1920 :
					      iov[i].buf;
		w[nw++] = (struct mrrc_wr){
			.wr_id = (i + 1 == n ? k->seq << 16 : 0) |
				 WR_READ << 8,
			.conn = k->conn, .opcode = MRRC_OP_READ,
			.addr = (uintptr_t)dst[i], .len = iov[i].len,
			.remote_addr = s->addr + (iov[i].off - s->off),
			.rkey = s->rkey,
		};
	}
	k->st.oget_reads += nw;
	err = post_wait(k, w, nw);
	if (err)
		return err;
	if (clock) {
		mark_defined(k->win, MRRCD_HDR_CLOCK_LEN);
		memcpy((unsigned char *)&k->rem.hdr + MRRCD_HDR_CLOCK_OFF,
		       k->win, MRRCD_HDR_CLOCK_LEN);
		k->clock_due = false;
	}
	for (i = 0; i < n; i++) {
		mark_defined(dst[i], iov[i].len);
		if (dst[i] != iov[i].buf)
			memcpy(iov[i].buf, dst[i], iov[i].len);
	}
	return 0;
}

static int oread(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct mrrcd_iov iov = { off, buf, len };

	return oreadv(ctx, &iov, 1);
}

/* Tell the daemon about a read: FETCH_AND_ADD on the slot's counter. */
static int count_read(struct kvc *k, uint64_t off)
{
	const struct kvc_seg *s = seg_of(k, off, 8);
	uint64_t add = 1;
	struct mrrc_wr w = { 0 };

	if (k->meta == KVC_META_NONE)
		return 0;
	if (k->meta == KVC_META_SAMPLE) {
		/* xorshift64: one in N reads counts N. */
		k->rng ^= k->rng << 13;
		k->rng ^= k->rng >> 7;
		k->rng ^= k->rng << 17;
		if (k->rng % k->sample)
			return 0;
		add = k->sample;
	}
	if (!s || !s->atomic)
		return -EFAULT;
	k->seq++;
	w = (struct mrrc_wr){
		.wr_id = k->seq << 16 | WR_ATOMIC << 8, .conn = k->conn,
		.opcode = MRRC_OP_FETCH_ADD, .addr = (uintptr_t)k->atomic_buf,
		.len = 8, .remote_addr = s->addr + (off - s->off),
		.rkey = s->rkey, .compare_add = add,
	};
	k->st.oget_atomics++;
	return post_wait(k, &w, 1);
}

int kvc_oget(struct kvc *k, const char *key, const char **val, size_t *len,
	     uint32_t *flags)
{
	struct mrrcd_remote_item it;
	struct kvc_loc *loc = NULL;
	uint64_t before, h;
	int err = -ESTALE;
	size_t klen;

	if (!key_ok(key))
		return -EINVAL;
	if (!k->rem_ok)
		return -EOPNOTSUPP;
	if (k->dead)
		return -ECONNRESET;
	k->clock_due = true;
	before = k->rem.retries;
	/* Where this key was last found: one round trip if it is still there. */
	klen = strlen(key);
	h = mrrcd_hash64(key, klen, MRRCD_HASH_SEED);
	if (k->loc) {
		loc = &k->loc[h & (KVC_LOC_SLOTS - 1)];
		if (loc->len && loc->hash == h) {
			err = mrrcd_remote_get_at(&k->rem, key, klen,
						  loc->slot, loc->off,
						  loc->len, k->item,
						  k->rem.hdr.item_max, &it);
			if (err == -ESTALE)
				k->st.oget_stale++;
			else if (!err)
				k->st.oget_at++;
		}
	}
	if (err == -ESTALE)
		err = mrrcd_remote_get(&k->rem, key, klen, k->item,
				       k->rem.hdr.item_max, MAX_TRIES, &it);
	k->st.oget_retries += k->rem.retries - before;
	if (loc && !err) {
		loc->hash = h;
		loc->slot = it.slot_off;
		loc->off = it.item_off;
		loc->len = it.item_len;
	} else if (loc && err == -ENOENT && loc->hash == h) {
		loc->len = 0;
	}
	if (err)
		return err;
	/*
	 * The value was read and checked: recency is advice to the daemon,
	 * and a failed update of it is counted, not the GET's error (a
	 * connection it broke fails the next call).
	 */
	if (count_read(k, it.counter_off))
		k->st.oget_atomic_errors++;
	*val = it.value;
	*len = it.value_len;
	if (flags)
		*flags = it.flags;
	return 0;
}

void kvc_set_hints(struct kvc *k, bool on)
{
	if (!on || !k->rem_ok) {
		free(k->loc);
		k->loc = NULL;
		return;
	}
	if (!k->loc)
		k->loc = calloc(KVC_LOC_SLOTS, sizeof(*k->loc));
}

int kvc_set_meta(struct kvc *k, const char *mode)
{
	unsigned long n;
	char *end;

	if (!strcmp(mode, "none")) {
		k->meta = KVC_META_NONE;
	} else if (!strcmp(mode, "faa")) {
		k->meta = KVC_META_FAA;
	} else if (!strncmp(mode, "sample:", 7)) {
		errno = 0;
		n = strtoul(mode + 7, &end, 10);
		/* digits only: strtoul() would take " 8" and "+8" */
		if (mode[7] < '0' || mode[7] > '9' || errno || *end || n < 2 ||
		    n > 65536)
			return -EINVAL;
		k->meta = KVC_META_SAMPLE;
		k->sample = (unsigned int)n;
	} else {
		return -EINVAL;
	}
	return 0;
}
