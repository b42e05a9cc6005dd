// SPDX-License-Identifier: GPL-2.0-only
/*
 * memcached's text protocol (doc/protocol.txt of memcached), the replies
 * and error strings its clients parse, including its quirks where clients
 * or tests depend on them:
 *
 *   - tokens are separated by spaces (runs of them), lines end in "\r\n" or
 *     a bare "\n";
 *   - a storage command whose line is malformed gets "CLIENT_ERROR bad
 *     command line format" and its data block is NOT skipped (the length
 *     cannot be trusted), so the block is then read as commands; a block
 *     too large for an item is skipped after "SERVER_ERROR object too large
 *     for cache", and a failed set removes the key's old value;
 *   - noreply silences every reply of that request, errors included;
 *   - a command line longer than MC_LINE_MAX (a retrieval line longer than
 *     MC_GET_LINE_MAX) gets "CLIENT_ERROR line too long" and the connection
 *     is closed, as there is no way to find the next request.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include "proto.h"

#define IN_INIT 4096u
#define OUT_INIT 4096u
#define OUT_KEEP (64u * 1024)	/* larger idle buffers are given back */
#define IN_KEEP (16u * 1024)
#define IN_READ (16u * 1024)	/* room offered per read */
#define MAX_TOKENS 8u
#define MAX_REL_EXPTIME (60 * 60 * 24 * 30)	/* 30 days: memcached's */

struct tok {
	const char *p;
	size_t len;
};

/* ---- buffers ----------------------------------------------------------- */

static int buf_reserve(struct mc_buf *b, size_t n, size_t init)
{
	size_t used = b->len - b->off, cap;
	char *p;

	if (b->cap - b->len >= n)
		return 0;
	if (b->off) {
		memmove(b->data, b->data + b->off, used);
		b->off = 0;
		b->len = used;
		if (b->cap - b->len >= n)
			return 0;
	}
	cap = b->cap ? b->cap : init;
	while (cap - used < n)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

static void buf_release(struct mc_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

static void out_add(struct mc_conn *c, const void *p, size_t n)
{
	if (c->out_failed)
		return;
	if (buf_reserve(&c->out, n, OUT_INIT)) {
		/* Half an answer would desynchronise the peer: hang up. */
		c->out_failed = true;
		c->state = MC_CLOSE;
		return;
	}
	memcpy(c->out.data + c->out.len, p, n);
	c->out.len += n;
}

/* A one-line reply, unless the request said noreply. */
static void reply(struct mc_conn *c, const char *s)
{
	if (c->noreply)
		return;
	out_add(c, s, strlen(s));
	out_add(c, "\r\n", 2);
}

static void __attribute__((format(printf, 2, 3)))
reply_fmt(struct mc_conn *c, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	reply(c, line);
}

void mc_out_consume(struct mc_conn *c, size_t n)
{
	c->out.off += n;
	if (c->out.off == c->out.len) {
		c->out.off = c->out.len = 0;
		if (c->out.cap > OUT_KEEP)
			buf_release(&c->out);
	}
}

char *mc_in_space(struct mc_conn *c, size_t *room)
{
	size_t used = c->in.len - c->in.off;
	size_t max = MC_GET_LINE_MAX + 2;	/* a line and its CRLF */
	size_t want = max - used;

	*room = 0;
	if (used >= max)
		return NULL;
	if (want > IN_READ)
		want = IN_READ;
	if (buf_reserve(&c->in, want, IN_INIT))
		return NULL;
	*room = c->in.cap - c->in.len;
	if (*room > max - used)
		*room = max - used;
	return c->in.data + c->in.len;
}

/* An emptied input buffer starts again at its front, small. */
static void in_tidy(struct mc_conn *c)
{
	if (c->in.off != c->in.len)
		return;
	c->in.off = c->in.len = 0;
	if (c->in.cap > IN_KEEP)
		buf_release(&c->in);
}

void mc_in_commit(struct mc_conn *c, size_t n)
{
	c->in.len += n;
}

/* ---- connections ------------------------------------------------------- */

static void stage_release(struct mc_conn *c)
{
	if (c->st.data) {
		free(c->st.data);
		c->srv->staged -= c->st.need;
		c->st.data = NULL;
	}
}

void mc_conn_init(struct mc_conn *c, struct mc_server *srv, unsigned long id)
{
	memset(c, 0, sizeof(*c));
	c->srv = srv;
	c->id = id;
	c->state = MC_CMD;
}

void mc_conn_free(struct mc_conn *c)
{
	stage_release(c);
	buf_release(&c->in);
	buf_release(&c->out);
	buf_release(&c->logq);
}

/* One -v line: now, or queued for mc_log_flush(). */
static void __attribute__((format(printf, 2, 3)))
log_say(struct mc_conn *c, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	if (!c->log_later) {
		vfprintf(c->srv->log, fmt, ap);
		va_end(ap);
		return;
	}
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0) {
		c->log_dropped++;
		return;
	}
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';	/* cut short, still a line */
	}
	if (c->logq.len - c->logq.off + (size_t)n > MC_LOG_MAX ||
	    buf_reserve(&c->logq, (size_t)n, 4096)) {
		c->log_dropped++;
		return;
	}
	memcpy(c->logq.data + c->logq.len, line, (size_t)n);
	c->logq.len += (size_t)n;
}

void mc_log_flush(struct mc_conn *c)
{
	if (!c->srv->log)
		return;
	if (c->logq.len > c->logq.off)
		fwrite(c->logq.data + c->logq.off, 1, c->logq.len - c->logq.off,
		       c->srv->log);
	c->logq.off = c->logq.len = 0;
	if (c->logq.cap > 4096)
		buf_release(&c->logq);	/* (a burst's memory back) */
	if (c->log_dropped)
		fprintf(c->srv->log, "<%lu (%lu log lines dropped)\n", c->id,
			c->log_dropped);
	c->log_dropped = 0;
}

/* ---- parsing ----------------------------------------------------------- */

/* Split on runs of spaces; more than max tokens gives max + 1. */
static size_t tokenize(const char *p, size_t len, struct tok *t, size_t max)
{
	size_t n = 0, i = 0;

	while (i < len) {
		size_t start;

		while (i < len && p[i] == ' ')
			i++;
		if (i == len)
			break;
		if (n == max)
			return max + 1;
		start = i;
		while (i < len && p[i] != ' ')
			i++;
		t[n].p = p + start;
		t[n].len = i - start;
		n++;
	}
	return n;
}

static bool tok_is(const struct tok *t, const char *s)
{
	return t->len == strlen(s) && !memcmp(t->p, s, t->len);
}

/* 1 to 250 bytes, none of them a control character or a space. */
static bool key_ok(const struct tok *t)
{
	size_t i;

	if (!t->len || t->len > MRRCD_KEY_MAX)
		return false;
	for (i = 0; i < t->len; i++) {
		unsigned char ch = (unsigned char)t->p[i];

		if (ch <= ' ' || ch == 0x7f)
			return false;
	}
	return true;
}

/* Decimal digits only, no sign, no blanks, at most max. */
static bool parse_u64(const struct tok *t, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!t->len)
		return false;
	for (i = 0; i < t->len; i++) {
		unsigned int d = (unsigned int)(t->p[i] - '0');

		if (d > 9 || v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

static bool parse_i64(const struct tok *t, int64_t *out)
{
	struct tok digits = *t;
	bool neg = t->len && t->p[0] == '-';
	uint64_t v;

	if (neg) {
		digits.p++;
		digits.len--;
	}
	if (!parse_u64(&digits, (uint64_t)INT64_MAX, &v))
		return false;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

uint32_t mc_exptime(int64_t e, uint32_t now)
{
	if (e == 0)
		return 0;
	if (e < 0)
		return 1;	/* in the past, and not "never" */
	if (e <= MAX_REL_EXPTIME)
		e += now;
	return e > UINT32_MAX ? UINT32_MAX : (uint32_t)e;
}

static uint32_t now32(const struct mc_conn *c)
{
	return c->srv->store->now;
}

static void log_line(struct mc_conn *c, const char *p, size_t len)
{
	size_t i, n = len > 200 ? 200 : len;
	char safe[201];

	if (!c->srv->log || c->srv->verbosity < 2)
		return;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];

		safe[i] = ch >= ' ' && ch < 0x7f ? (char)ch : '.';
	}
	safe[n] = '\0';
	log_say(c, "<%lu %s%s\n", c->id, safe, n < len ? "..." : "");
}

/* ---- storage commands -------------------------------------------------- */

static void store_reply(struct mc_conn *c, int err)
{
	struct mc_counters *k = &c->srv->c;
	enum store_mode mode = c->st.mode;

	switch (err) {
	case 0:
		if (mode == STORE_CAS)
			k->cas_hits++;
		reply(c, "STORED");
		break;
	case -EEXIST:
		if (mode == STORE_CAS)
			k->cas_badval++;
		reply(c, mode == STORE_CAS ? "EXISTS" : "NOT_STORED");
		break;
	case -ENOENT:
		if (mode == STORE_CAS)
			k->cas_misses++;
		reply(c, mode == STORE_CAS ? "NOT_FOUND" : "NOT_STORED");
		break;
	case -E2BIG:
		reply(c, "SERVER_ERROR object too large for cache");
		break;
	default:
		reply(c, "SERVER_ERROR out of memory storing object");
		break;
	}
}

/* Answer a storage request that failed; a failed set, as memcached's,
 * does not leave the old value behind. */
static void store_fail(struct mc_conn *c, const char *why)
{
	reply(c, why);
	if (c->st.mode == STORE_SET)
		store_delete(c->srv->store, c->st.key, c->st.key_len);
}

/* Store the request's value, len bytes at data, and answer. */
static void store_value(struct mc_conn *c, const char *data, size_t len)
{
	struct mc_store_req *r = &c->st;
	int err;

	err = store_put(c->srv->store, r->mode, r->key, r->key_len, data, len,
			r->flags, r->exptime, r->cas, NULL);
	if (err && err != -EEXIST && err != -ENOENT && r->mode == STORE_SET)
		store_delete(c->srv->store, r->key, r->key_len);
	store_reply(c, err);
}

/* The data block is all there: check its CRLF and store it. */
static void store_complete(struct mc_conn *c, const char *data)
{
	size_t len = c->st.need - 2;

	if (data[len] != '\r' || data[len + 1] != '\n') {
		reply(c, "CLIENT_ERROR bad data chunk");
		return;
	}
	store_value(c, data, len);
}

/* Refuse a well-formed storage request and skip its data block. */
static void store_refuse(struct mc_conn *c, const char *why, uint64_t bytes)
{
	store_fail(c, why);
	c->swallow = bytes + 2;
	c->state = MC_SWALLOW;
}

/*
 * What storage lines share, into c->st: <key> <flags> <exptime> <bytes>,
 * one more number if extra is not NULL (cas's unique, rset's tag), then
 * noreply.  false after answering a malformed line.
 */
static bool store_line(struct mc_conn *c, const struct tok *t, size_t nt,
		       enum store_mode mode, uint64_t *bytes, uint64_t *extra)
{
	struct mc_store_req *r = &c->st;
	size_t want = extra ? 6 : 5;
	uint64_t flags;
	int64_t exptime;

	if (nt != want && nt != want + 1) {
		reply(c, "ERROR");
		return false;
	}
	c->noreply = nt == want + 1 && tok_is(&t[want], "noreply");
	if (!key_ok(&t[1]) || !parse_u64(&t[2], UINT32_MAX, &flags) ||
	    !parse_i64(&t[3], &exptime) ||
	    !parse_u64(&t[4], INT32_MAX - 2, bytes) ||
	    (extra && !parse_u64(&t[5], UINT64_MAX, extra))) {
		reply(c, "CLIENT_ERROR bad command line format");
		return false;
	}
	r->mode = mode;
	memcpy(r->key, t[1].p, t[1].len);
	r->key_len = t[1].len;
	r->flags = (uint32_t)flags;
	r->exptime = mc_exptime(exptime, now32(c));
	r->cas = 0;
	return true;
}

static void cmd_store(struct mc_conn *c, const struct tok *t, size_t nt,
		      enum store_mode mode)
{
	struct mc_store_req *r = &c->st;
	uint64_t bytes, cas = 0;
	size_t avail;

	if (!store_line(c, t, nt, mode, &bytes,
			mode == STORE_CAS ? &cas : NULL))
		return;
	c->srv->c.cmd_set++;
	r->cas = cas;
	if (!store_fits(r->key_len, bytes)) {
		store_refuse(c, "SERVER_ERROR object too large for cache",
			     bytes);
		return;
	}
	r->need = bytes + 2;
	r->have = 0;
	avail = c->in.len - c->in.off;
	if (avail >= r->need) {
		/* The usual case for small values: no copy. */
		store_complete(c, c->in.data + c->in.off);
		c->in.off += r->need;
		return;
	}
	if (c->srv->staged + r->need > MC_STAGE_MAX ||
	    !(r->data = malloc(r->need))) {
		store_refuse(c, "SERVER_ERROR out of memory storing object",
			     bytes);
		return;
	}
	c->srv->staged += r->need;
	c->state = MC_DATA;
}

/*
 * rset <key> <flags> <exptime> <bytes> <tag> [noreply]: mrrcd's, over
 * RDMA only.  The value does not follow in the stream: the client posts
 * a CRW with <tag> as it sends the line, and the daemon's STCRW over a
 * staging buffer of <bytes> lets the module write it there (FRRWP,
 * Documentation/mrrcd.rst).  The connection takes no other request
 * until it ends; then it is stored as a set.
 */
static void cmd_rset(struct mc_conn *c, const struct tok *t, size_t nt)
{
	struct mc_store_req *r = &c->st;
	uint64_t bytes, tag;
	char why[96];
	int err;

	if (!c->rset) {
		reply(c, "ERROR");
		return;
	}
	if (!store_line(c, t, nt, STORE_SET, &bytes, &tag))
		return;
	if (!bytes) {
		reply(c, "CLIENT_ERROR bad command line format");
		return;
	}
	c->srv->c.cmd_set++;
	if (!store_fits(r->key_len, bytes)) {
		store_fail(c, "SERVER_ERROR object too large for cache");
		return;
	}
	r->need = bytes;
	if (c->srv->staged + r->need > MC_STAGE_MAX ||
	    !(r->data = aligned_alloc(4096, (bytes + 4095) & ~4095ULL))) {
		store_fail(c, "SERVER_ERROR out of memory storing object");
		return;
	}
	c->srv->staged += r->need;
	err = c->rset(c, r->data, bytes, tag);
	if (err) {
		stage_release(c);
		snprintf(why, sizeof(why), "SERVER_ERROR rset: %s",
			 strerror(-err));
		store_fail(c, why);
		return;
	}
	c->state = MC_RDMA;
}

void mc_rset_done(struct mc_conn *c, int status, size_t len)
{
	struct mc_store_req *r = &c->st;
	char why[96];

	if (c->state != MC_RDMA)
		return;
	c->state = MC_CMD;
	if (status || len != r->need) {
		snprintf(why, sizeof(why), "SERVER_ERROR rset: %s",
			 status ? strerror(-status) : "short write");
		store_fail(c, why);
	} else {
		store_value(c, r->data, len);
	}
	stage_release(c);
}

static void data_continue(struct mc_conn *c)
{
	struct mc_store_req *r = &c->st;
	size_t avail = c->in.len - c->in.off;
	size_t n = r->need - r->have;

	if (n > avail)
		n = avail;
	memcpy(r->data + r->have, c->in.data + c->in.off, n);
	r->have += n;
	c->in.off += n;
	if (r->have < r->need)
		return;
	store_complete(c, r->data);
	stage_release(c);
	c->state = MC_CMD;
}

static void swallow_continue(struct mc_conn *c)
{
	size_t avail = c->in.len - c->in.off;
	size_t n = c->swallow < avail ? (size_t)c->swallow : avail;

	c->in.off += n;
	c->swallow -= n;
	if (!c->swallow)
		c->state = MC_CMD;
}

/* ---- retrieval --------------------------------------------------------- */

static void emit_value(struct mc_conn *c, const struct store_item *it,
		       bool with_cas)
{
	char head[128];
	int n;

	out_add(c, "VALUE ", 6);
	out_add(c, it->key, it->key_len);
	if (with_cas)
		n = snprintf(head, sizeof(head), " %" PRIu32 " %zu %" PRIu64
			     "\r\n", it->flags, it->value_len, it->cas);
	else
		n = snprintf(head, sizeof(head), " %" PRIu32 " %zu\r\n",
			     it->flags, it->value_len);
	out_add(c, head, (size_t)n);
	out_add(c, it->value, it->value_len);
	out_add(c, "\r\n", 2);
}

static void get_one(struct mc_conn *c, const struct tok *key)
{
	struct mc_counters *k = &c->srv->c;
	struct store_item it;
	int err;

	if (c->get.touch) {
		k->cmd_touch++;
		err = store_touch(c->srv->store, key->p, key->len,
				  c->get.exptime, &it);
		if (err)
			k->touch_misses++;
		else
			k->touch_hits++;
	} else {
		k->cmd_get++;
		err = store_get(c->srv->store, key->p, key->len, &it);
		if (err)
			k->get_misses++;
		else
			k->get_hits++;
	}
	if (!err)
		emit_value(c, &it, c->get.cas);
}

/* The next key of the line from pos, or false at its end. */
static bool next_key(const char *line, size_t len, size_t *pos,
		     struct tok *t)
{
	size_t i = *pos;

	while (i < len && line[i] == ' ')
		i++;
	if (i == len)
		return false;
	t->p = line + i;
	while (i < len && line[i] != ' ')
		i++;
	t->len = (size_t)(t->p - line);
	t->len = i - t->len;
	*pos = i;
	return true;
}

/* Answer keys until the line ends or the output is full. */
static enum mc_result get_continue(struct mc_conn *c)
{
	const char *line = c->in.data + c->in.off;
	struct tok key;

	for (;;) {
		if (mc_out_pending(c) > MC_OUT_HIGH)
			return MC_BLOCKED;
		if (!next_key(line, c->get.line_len, &c->get.pos, &key))
			break;
		get_one(c, &key);
		if (c->state == MC_CLOSE)
			return MC_DONE;
	}
	out_add(c, "END\r\n", 5);
	c->in.off += c->get.line_len + c->get.eol;
	if (c->state != MC_CLOSE)
		c->state = MC_CMD;
	return MC_WANT_INPUT;
}

/*
 * Start a get, gets, gat or gats: every key is checked before anything is
 * answered, then the keys are answered one by one (get_continue), the line
 * staying in the input buffer until its END.
 */
static void cmd_get(struct mc_conn *c, const char *line, size_t len,
		    size_t eol, const struct tok *cmd, bool cas, bool touch)
{
	size_t pos = (size_t)(cmd->p + cmd->len - line), first;
	struct tok t;
	int64_t e;
	bool any = false;

	c->get.cas = cas;
	c->get.touch = touch;
	if (touch) {
		if (!next_key(line, len, &pos, &t)) {
			reply(c, "ERROR");
			goto consume;
		}
		if (!parse_i64(&t, &e)) {
			reply(c, "CLIENT_ERROR invalid exptime argument");
			goto consume;
		}
		c->get.exptime = mc_exptime(e, now32(c));
	}
	first = pos;
	while (next_key(line, len, &pos, &t)) {
		if (!key_ok(&t)) {
			reply(c, "CLIENT_ERROR bad command line format");
			goto consume;
		}
		any = true;
	}
	if (!any) {
		reply(c, "ERROR");
		goto consume;
	}
	c->get.line_len = len;
	c->get.eol = eol;
	c->get.pos = first;
	c->state = MC_GET;
	return;
consume:
	c->in.off += len + eol;
}

/* ---- other commands ---------------------------------------------------- */

static void cmd_arith(struct mc_conn *c, const struct tok *t, size_t nt,
		      bool decr)
{
	struct mc_counters *k = &c->srv->c;
	uint64_t delta, v;
	int err;

	if (nt != 3 && nt != 4) {
		reply(c, "ERROR");
		return;
	}
	c->noreply = nt == 4 && tok_is(&t[3], "noreply");
	if (!key_ok(&t[1])) {
		reply(c, "CLIENT_ERROR bad command line format");
		return;
	}
	if (!parse_u64(&t[2], UINT64_MAX, &delta)) {
		reply(c, "CLIENT_ERROR invalid numeric delta argument");
		return;
	}
	err = store_incr(c->srv->store, t[1].p, t[1].len, decr, delta, &v);
	switch (err) {
	case 0:
		if (decr)
			k->decr_hits++;
		else
			k->incr_hits++;
		reply_fmt(c, "%" PRIu64, v);
		break;
	case -ENOENT:
		if (decr)
			k->decr_misses++;
		else
			k->incr_misses++;
		reply(c, "NOT_FOUND");
		break;
	case -EINVAL:
		reply(c, "CLIENT_ERROR cannot increment or decrement non-numeric value");
		break;
	default:
		reply(c, "SERVER_ERROR out of memory");
		break;
	}
}

static void cmd_delete(struct mc_conn *c, const struct tok *t, size_t nt)
{
	struct mc_counters *k = &c->srv->c;
	bool ok;

	if (nt < 2 || nt > 4) {
		reply(c, "ERROR");
		return;
	}
	c->noreply = nt > 2 && tok_is(&t[nt - 1], "noreply");
	/* memcached still takes the old "delete <key> 0". */
	ok = nt == 2 || (nt == 3 && (c->noreply || tok_is(&t[2], "0"))) ||
	     (nt == 4 && c->noreply && tok_is(&t[2], "0"));
	if (!ok) {
		reply(c, "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]");
		return;
	}
	if (!key_ok(&t[1])) {
		reply(c, "CLIENT_ERROR bad command line format");
		return;
	}
	if (store_delete(c->srv->store, t[1].p, t[1].len)) {
		k->delete_misses++;
		reply(c, "NOT_FOUND");
	} else {
		k->delete_hits++;
		reply(c, "DELETED");
	}
}

static void cmd_touch(struct mc_conn *c, const struct tok *t, size_t nt)
{
	struct mc_counters *k = &c->srv->c;
	int64_t e;

	if (nt != 3 && nt != 4) {
		reply(c, "ERROR");
		return;
	}
	c->noreply = nt == 4 && tok_is(&t[3], "noreply");
	if (!key_ok(&t[1])) {
		reply(c, "CLIENT_ERROR bad command line format");
		return;
	}
	if (!parse_i64(&t[2], &e)) {
		reply(c, "CLIENT_ERROR invalid exptime argument");
		return;
	}
	k->cmd_touch++;
	if (store_touch(c->srv->store, t[1].p, t[1].len,
			mc_exptime(e, now32(c)), NULL)) {
		k->touch_misses++;
		reply(c, "NOT_FOUND");
	} else {
		k->touch_hits++;
		reply(c, "TOUCHED");
	}
}

/* flush_all [delay] [noreply]; memcached ignores anything further. */
static void cmd_flush(struct mc_conn *c, const struct tok *t, size_t nt)
{
	int64_t delay = 0;

	c->noreply = nt > 1 && tok_is(&t[nt - 1], "noreply");
	if (nt > 1 && !tok_is(&t[1], "noreply") && !parse_i64(&t[1], &delay)) {
		reply(c, "CLIENT_ERROR invalid exptime argument");
		return;
	}
	c->srv->c.cmd_flush++;
	store_flush(c->srv->store, delay > 0 ? mc_exptime(delay, now32(c)) : 0);
	reply(c, "OK");
}

static void cmd_verbosity(struct mc_conn *c, const struct tok *t, size_t nt)
{
	uint64_t level;

	if (nt != 2 && nt != 3) {
		reply(c, "ERROR");
		return;
	}
	c->noreply = tok_is(&t[nt - 1], "noreply");
	if (nt == 2 && c->noreply)
		return;	/* memcached: silently nothing */
	if (!parse_u64(&t[1], INT32_MAX, &level)) {
		reply(c, "CLIENT_ERROR bad command line format");
		return;
	}
	/* (say() in mrrcd.c reads it without the lock) */
	__atomic_store_n(&c->srv->verbosity, (int)level, __ATOMIC_RELAXED);
	reply(c, "OK");
}

/* ---- stats ------------------------------------------------------------- */

static void __attribute__((format(printf, 3, 4)))
stat_line(struct mc_conn *c, const char *name, const char *fmt, ...)
{
	char val[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	reply_fmt(c, "STAT %s %s", name, val);
}

#define STAT_U64(c, name, v) stat_line(c, name, "%" PRIu64, (uint64_t)(v))

static void stats_general(struct mc_conn *c)
{
	struct mc_server *srv = c->srv;
	struct mc_counters *k = &srv->c;
	struct store *s = srv->store;
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	STAT_U64(c, "pid", getpid());
	/* The wall clock may have been set back since the start. */
	STAT_U64(c, "uptime", s->now > srv->started ?
		 (uint64_t)(s->now - srv->started) : 0);
	STAT_U64(c, "time", s->now);
	stat_line(c, "version", "%s", MC_VERSION);
	STAT_U64(c, "pointer_size", 8 * sizeof(void *));
	stat_line(c, "rusage_user", "%ld.%06ld", (long)ru.ru_utime.tv_sec,
	     (long)ru.ru_utime.tv_usec);
	stat_line(c, "rusage_system", "%ld.%06ld", (long)ru.ru_stime.tv_sec,
	     (long)ru.ru_stime.tv_usec);
	STAT_U64(c, "max_connections", srv->set.maxconns);
	STAT_U64(c, "curr_connections", k->curr_connections);
	STAT_U64(c, "total_connections", k->total_connections);
	STAT_U64(c, "rejected_connections", k->rejected_connections);
	STAT_U64(c, "connection_structures", k->conn_structures);
	STAT_U64(c, "cmd_get", k->cmd_get);
	STAT_U64(c, "cmd_set", k->cmd_set);
	STAT_U64(c, "cmd_flush", k->cmd_flush);
	STAT_U64(c, "cmd_touch", k->cmd_touch);
	STAT_U64(c, "get_hits", k->get_hits);
	STAT_U64(c, "get_misses", k->get_misses);
	STAT_U64(c, "delete_misses", k->delete_misses);
	STAT_U64(c, "delete_hits", k->delete_hits);
	STAT_U64(c, "incr_misses", k->incr_misses);
	STAT_U64(c, "incr_hits", k->incr_hits);
	STAT_U64(c, "decr_misses", k->decr_misses);
	STAT_U64(c, "decr_hits", k->decr_hits);
	STAT_U64(c, "cas_misses", k->cas_misses);
	STAT_U64(c, "cas_hits", k->cas_hits);
	STAT_U64(c, "cas_badval", k->cas_badval);
	STAT_U64(c, "touch_hits", k->touch_hits);
	STAT_U64(c, "touch_misses", k->touch_misses);
	STAT_U64(c, "bytes_read", k->bytes_read);
	STAT_U64(c, "bytes_written", k->bytes_written);
	STAT_U64(c, "limit_maxbytes", srv->set.maxbytes);
	STAT_U64(c, "threads", srv->set.threads);
	STAT_U64(c, "bytes", s->st.bytes);
	STAT_U64(c, "curr_items", s->st.curr_items);
	STAT_U64(c, "total_items", s->st.total_items);
	STAT_U64(c, "evictions", s->st.evictions);
	STAT_U64(c, "reclaimed", s->st.reclaimed);
	STAT_U64(c, "crawler_reclaimed", s->st.crawler_reclaimed);
	STAT_U64(c, "crawler_items_checked", s->st.crawler_checked);
	/* mrrcd's own: the arena that one-sided readers will see. */
	STAT_U64(c, "flushed_items", s->st.flushed);
	STAT_U64(c, "arena_bytes", s->arena_size);
	STAT_U64(c, "index_slots", s->nslots);
	STAT_U64(c, "probe_window", MRRCD_PROBE);
	STAT_U64(c, "slab_pages", s->npages);
	STAT_U64(c, "slab_pages_free", s->nfree_pages);
	STAT_U64(c, "slab_page_moves", s->st.page_moves);
	STAT_U64(c, "staged_bytes", srv->staged);
	STAT_U64(c, "rdma_curr_connections", k->rdma_curr_connections);
	STAT_U64(c, "rdma_total_connections", k->rdma_total_connections);
	STAT_U64(c, "rdma_msgs_received", k->rdma_msgs_received);
	STAT_U64(c, "rdma_msgs_sent", k->rdma_msgs_sent);
	STAT_U64(c, "rdma_exports", k->rdma_exports);
	STAT_U64(c, "rdma_export_failures", k->rdma_export_failures);
	STAT_U64(c, "rdma_rsets", k->rdma_rsets);
	STAT_U64(c, "rdma_rset_failures", k->rdma_rset_failures);
}

static void stats_settings(struct mc_conn *c)
{
	struct mc_server *srv = c->srv;

	STAT_U64(c, "maxbytes", srv->set.maxbytes);
	STAT_U64(c, "maxconns", srv->set.maxconns);
	STAT_U64(c, "tcpport", srv->set.port);
	STAT_U64(c, "udpport", 0);
	stat_line(c, "inter", "%s", srv->set.inter ? srv->set.inter : "NULL");
	STAT_U64(c, "verbosity", srv->verbosity);
	stat_line(c, "evictions", "on");
	stat_line(c, "growth_factor", "1.25");
	STAT_U64(c, "chunk_size", 96 - MRRCD_ITEM_HDR_SIZE);
	STAT_U64(c, "num_threads", srv->set.threads);
	stat_line(c, "cas_enabled", "yes");
	STAT_U64(c, "item_size_max", MRRCD_ITEM_MAX);
	stat_line(c, "binding_protocol", "ascii");
}

static void stats_slabs(struct mc_conn *c)
{
	struct store *s = c->srv->store;
	uint32_t i;
	char name[64];

	for (i = 0; i < s->nclasses; i++) {
		struct class_meta *cm = &s->classes[i];

		if (!cm->npages)
			continue;
		snprintf(name, sizeof(name), "%u:chunk_size", i);
		STAT_U64(c, name, cm->size);
		snprintf(name, sizeof(name), "%u:chunks_per_page", i);
		STAT_U64(c, name, cm->per_page);
		snprintf(name, sizeof(name), "%u:total_pages", i);
		STAT_U64(c, name, cm->npages);
		snprintf(name, sizeof(name), "%u:total_chunks", i);
		STAT_U64(c, name, (uint64_t)cm->npages * cm->per_page);
		snprintf(name, sizeof(name), "%u:used_chunks", i);
		STAT_U64(c, name, cm->st.number);
		snprintf(name, sizeof(name), "%u:free_chunks", i);
		STAT_U64(c, name, (uint64_t)cm->npages * cm->per_page -
			 cm->st.number);
	}
	STAT_U64(c, "active_slabs", s->npages - s->nfree_pages);
	STAT_U64(c, "total_malloced", (uint64_t)(s->npages - s->nfree_pages) *
		 MRRCD_PAGE_SIZE);
}

/* memcached's per-class lines, of the classes with pages or counts. */
static void stats_items(struct mc_conn *c)
{
	struct store *s = c->srv->store;
	static const struct {
		const char *name;
		size_t off;
	} f[] = {
#define F(n, m) { n, offsetof(struct class_stats, m) }
		F("evicted", evicted),
		F("evicted_nonzero", evicted_nonzero),
		F("outofmemory", outofmemory),
		F("reclaimed", reclaimed),
		F("crawler_reclaimed", crawler_reclaimed),
#undef F
	};
	uint32_t i;
	size_t j;
	char name[64];

	for (i = 0; i < s->nclasses; i++) {
		const struct class_stats *cs = &s->classes[i].st;

		if (!s->classes[i].npages && !cs->number && !cs->total_items &&
		    !cs->outofmemory && !cs->evicted && !cs->reclaimed)
			continue;
		snprintf(name, sizeof(name), "items:%u:number", i);
		STAT_U64(c, name, cs->number);
		for (j = 0; j < sizeof(f) / sizeof(f[0]); j++) {
			snprintf(name, sizeof(name), "items:%u:%s", i,
				 f[j].name);
			STAT_U64(c, name, *(const uint64_t *)
				 ((const char *)cs + f[j].off));
		}
		snprintf(name, sizeof(name), "items:%u:evicted_time", i);
		STAT_U64(c, name, cs->evicted_time);
	}
}

static void stats_reset(struct mc_server *srv)
{
	struct mc_counters *k = &srv->c;
	uint64_t cur = k->curr_connections, structs = k->conn_structures;
	uint64_t rcur = k->rdma_curr_connections;

	memset(k, 0, sizeof(*k));
	k->curr_connections = cur;
	k->conn_structures = structs;
	k->rdma_curr_connections = rcur;
	store_stats_reset(srv->store);
}

static void cmd_stats(struct mc_conn *c, const struct tok *t, size_t nt)
{
	if (nt == 1) {
		stats_general(c);
	} else if (tok_is(&t[1], "settings")) {
		stats_settings(c);
	} else if (tok_is(&t[1], "slabs")) {
		stats_slabs(c);
	} else if (tok_is(&t[1], "items")) {
		stats_items(c);
	} else if (tok_is(&t[1], "sizes")) {
		stat_line(c, "sizes_status", "disabled");
	} else if (tok_is(&t[1], "reset")) {
		stats_reset(c->srv);
		reply(c, "RESET");
		return;
	} else {
		reply(c, "ERROR");
		return;
	}
	reply(c, "END");
}

/* ---- dispatch ---------------------------------------------------------- */

static void dispatch(struct mc_conn *c, const char *line, size_t len,
		     size_t eol)
{
	struct tok t[MAX_TOKENS];
	size_t nt = tokenize(line, len, t, MAX_TOKENS);
	const struct tok *cmd = &t[0];

	c->noreply = false;
	log_line(c, line, len);
	if (nt == 0) {
		c->in.off += eol + len;
		reply(c, "ERROR");
		return;
	}
	/* Retrieval lines stay in the buffer while they are answered. */
	if (tok_is(cmd, "get") || tok_is(cmd, "gets") ||
	    tok_is(cmd, "gat") || tok_is(cmd, "gats")) {
		bool cas = cmd->len == 4 && cmd->p[3] == 's';

		cmd_get(c, line, len, eol, cmd, cas, cmd->p[1] == 'a');
		return;
	}
	c->in.off += len + eol;
	if (nt > MAX_TOKENS) {
		reply(c, "ERROR");
	} else if (tok_is(cmd, "set")) {
		cmd_store(c, t, nt, STORE_SET);
	} else if (tok_is(cmd, "add")) {
		cmd_store(c, t, nt, STORE_ADD);
	} else if (tok_is(cmd, "replace")) {
		cmd_store(c, t, nt, STORE_REPLACE);
	} else if (tok_is(cmd, "append")) {
		cmd_store(c, t, nt, STORE_APPEND);
	} else if (tok_is(cmd, "prepend")) {
		cmd_store(c, t, nt, STORE_PREPEND);
	} else if (tok_is(cmd, "cas")) {
		cmd_store(c, t, nt, STORE_CAS);
	} else if (tok_is(cmd, "rset")) {
		cmd_rset(c, t, nt);
	} else if (tok_is(cmd, "delete")) {
		cmd_delete(c, t, nt);
	} else if (tok_is(cmd, "incr") || tok_is(cmd, "decr")) {
		cmd_arith(c, t, nt, cmd->p[0] == 'd');
	} else if (tok_is(cmd, "touch")) {
		cmd_touch(c, t, nt);
	} else if (tok_is(cmd, "flush_all")) {
		cmd_flush(c, t, nt);
	} else if (tok_is(cmd, "stats")) {
		cmd_stats(c, t, nt);
	} else if (tok_is(cmd, "version")) {
		/* memcached ignores anything after it, noreply included. */
		reply(c, "VERSION " MC_VERSION);
	} else if (tok_is(cmd, "verbosity")) {
		cmd_verbosity(c, t, nt);
	} else if (tok_is(cmd, "quit")) {
		c->state = MC_CLOSE;
	} else {
		reply(c, "ERROR");
	}
}

static bool retrieval_prefix(const char *p, size_t len)
{
	while (len && *p == ' ') {
		p++;
		len--;
	}
	return (len >= 4 && (!memcmp(p, "get ", 4) || !memcmp(p, "gat ", 4))) ||
	       (len >= 5 && (!memcmp(p, "gets ", 5) || !memcmp(p, "gats ", 5)));
}

static void line_too_long(struct mc_conn *c)
{
	c->noreply = false;
	reply(c, "CLIENT_ERROR line too long");
	c->state = MC_CLOSE;
}

/* Take one command line from the input; false if none is complete. */
static bool next_command(struct mc_conn *c)
{
	const char *start = c->in.data + c->in.off;
	size_t avail = c->in.len - c->in.off, len, eol;
	const char *nl;

	if (!avail)
		return false;
	nl = memchr(start, '\n', avail);
	if (!nl) {
		if (avail > MC_GET_LINE_MAX ||
		    (avail > MC_LINE_MAX && !retrieval_prefix(start, avail)))
			line_too_long(c);
		return false;
	}
	len = (size_t)(nl - start);
	eol = 1;
	if (len && start[len - 1] == '\r') {
		len--;
		eol = 2;
	}
	if (len > MC_GET_LINE_MAX ||
	    (len > MC_LINE_MAX && !retrieval_prefix(start, len))) {
		line_too_long(c);
		return false;
	}
	dispatch(c, start, len, eol);
	return true;
}

enum mc_result mc_process(struct mc_conn *c)
{
	if (!c->first_byte_seen && c->in.len > c->in.off) {
		c->first_byte_seen = true;
		/* memcached's binary protocol: not spoken here. */
		if ((unsigned char)c->in.data[c->in.off] == 0x80) {
			if (c->srv->log && c->srv->verbosity)
				log_say(c, "<%lu binary protocol request: closing\n",
					c->id);
			c->state = MC_CLOSE;
		}
	}
	for (;;) {
		if (c->state == MC_CLOSE)
			return MC_DONE;
		if (mc_out_pending(c) > MC_OUT_HIGH)
			return MC_BLOCKED;
		switch (c->state) {
		case MC_GET:
			if (get_continue(c) == MC_BLOCKED)
				return MC_BLOCKED;
			break;
		case MC_DATA:
			data_continue(c);
			if (c->state == MC_DATA)
				goto want_input;
			break;
		case MC_SWALLOW:
			swallow_continue(c);
			if (c->state == MC_SWALLOW)
				goto want_input;
			break;
		case MC_RDMA:
			/* No input taken until mc_rset_done(). */
			return MC_BLOCKED;
		case MC_CMD:
			if (!next_command(c) && c->state == MC_CMD)
				goto want_input;
			break;
		case MC_CLOSE:
			return MC_DONE;
		}
	}
want_input:
	in_tidy(c);
	return MC_WANT_INPUT;
}
