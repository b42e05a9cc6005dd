// SPDX-License-Identifier: GPL-2.0-only
/* A Redy cache: see cache.h.  The manager's protocol: mgr.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "client.h"

#define SRV_MAX		32u
#define ANSWER_MAX	(2u << 20)	/* a table of 32768 regions fits */
#define PULL_CHUNK	(16u << 20)	/* the new server serves I/O between */
#define PIECES_MAX	256u	/* requests per batch call */
#define MGR_WAIT_NS	10e9	/* for a whole answer of the manager */

enum reg_state { REG_OK, REG_MIGRATING, REG_FAILED };

struct srvconn {
	char addr[INET_ADDRSTRLEN];
	uint16_t port;
	struct redy_client io;	/* the I/O thread's */
	bool io_open;
	struct redy_client ctl;	/* the migration thread's (PULL) */
	bool ctl_open;
	bool failed;
};

struct vreg {
	int srv;
	uint64_t off;
	enum reg_state st;
	unsigned int writers;	/* writes in flight */
};

struct pending {
	int write;
	uint64_t addr;
	void *buf;
	size_t len;
	redy_cache_cb cb;
	void *arg;
};

struct redy_cache {
	int mgr;			/* TCP to the manager, under mgr_lock */
	bool mgr_broken;		/* out of step: no more requests */
	pthread_mutex_t mgr_lock;
	pthread_mutex_t mig_lock;	/* a round of migration, or a reshape */
	uint32_t id;
	uint64_t region_bytes;
	struct redy_cache_opts opts;

	pthread_mutex_t lock;		/* everything below */
	pthread_cond_t cond;
	struct redy_cfg cfg;
	uint64_t capacity;
	uint32_t gen;			/* the manager's table generation */
	bool reconnect;			/* cfg changed: new I/O connections */
	char pending[128];		/* a request the I/O thread is to make */
	unsigned int nreg;
	struct vreg *reg;
	struct srvconn *srv[SRV_MAX];
	int evacuating;			/* pause_all: this server's regions wait */
	unsigned int to_move;
	struct redy_cache_stats st;
	double lat_sum_ns;
	uint64_t lat_n;
	bool stop;
	pthread_t mig;

	struct pending *q;		/* the I/O thread's */
	unsigned int nq, qcap;
	struct redy_cfg io_cfg;		/* the I/O thread's copy of cfg */
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ---- the manager ------------------------------------------------------------ */

/*
 * One request: the answer's lines (first "OK ..." or "ERR ...", "END"
 * removed) in @ans.  0, the ERR's errno, or a transport error.
 */
static int __attribute__((format(printf, 3, 4)))
mgr_req(struct redy_cache *c, char *ans, const char *fmt, ...)
{
	char line[512];
	double deadline;
	size_t len = 0;
	va_list ap;
	ssize_t n;
	int r = 0;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) - 1)
		return -EINVAL;
	line[n++] = '\n';
	pthread_mutex_lock(&c->mgr_lock);
	if (c->mgr_broken) {
		r = -EPIPE;
		goto out;
	}
	if (write(c->mgr, line, n) != n) {
		r = -EPIPE;
		goto out;
	}
	deadline = now_ns() + MGR_WAIT_NS;
	for (;;) {
		struct pollfd pf = { .fd = c->mgr, .events = POLLIN };
		double left = deadline - now_ns();
		char *end;
		int k;

		/* one deadline for the whole answer, however it trickles in */
		k = left > 0 ? poll(&pf, 1, (int)(left / 1e6) + 1) : 0;
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			r = k ? -errno : -ETIMEDOUT;
			goto out;
		}
		n = read(c->mgr, ans + len, ANSWER_MAX - 1 - len);
		if (n <= 0) {
			r = !n ? -ECONNRESET : errno == EAGAIN ? -ETIMEDOUT : -errno;
			goto out;
		}
		len += n;
		ans[len] = '\0';
		end = strstr(ans, "END\n");
		if (end && (end == ans || end[-1] == '\n')) {
			/* one request, one answer: nothing may follow */
			if (end + 4 != ans + len)
				r = -EBADMSG;
			*end = '\0';
			break;
		}
		if (len >= ANSWER_MAX - 1) {
			r = -E2BIG;
			goto out;
		}
	}
	if (r)
		goto out;
	if (!strncmp(ans, "ERR ", 4)) {
		r = -EPROTO;
		if (!strncmp(ans + 4, "ENOENT", 6))
			r = -ENOENT;
		else if (!strncmp(ans + 4, "ENOSPC", 6))
			r = -ENOSPC;
		else if (!strncmp(ans + 4, "EINVAL", 6))
			r = -EINVAL;
	} else if (strncmp(ans, "OK", 2)) {
		r = -EPROTO;
	}
out:
	/*
	 * Anything but a whole answer (a timeout, a short or long one) leaves
	 * the stream out of step: a late answer would be taken for the next
	 * request's.  The cache talks to the manager no more.
	 */
	if (r && r != -ENOENT && r != -ENOSPC && r != -EINVAL &&
	    (r != -EPROTO || strncmp(ans, "ERR ", 4)) && !c->mgr_broken) {
		c->mgr_broken = true;
		shutdown(c->mgr, SHUT_RDWR);
	}
	pthread_mutex_unlock(&c->mgr_lock);
	return r;
}

/* The server index for @addr:@port, added if new (under c->lock). */
static int srv_index(struct redy_cache *c, const char *addr, unsigned int port)
{
	unsigned int i;

	for (i = 0; i < SRV_MAX && c->srv[i]; i++)
		if (!strcmp(c->srv[i]->addr, addr) && c->srv[i]->port == port)
			return i;
	if (i == SRV_MAX)
		return -ENOSPC;
	c->srv[i] = calloc(1, sizeof(*c->srv[i]));
	if (!c->srv[i])
		return -ENOMEM;
	snprintf(c->srv[i]->addr, sizeof(c->srv[i]->addr), "%s", addr);
	c->srv[i]->port = port;
	return i;
}

/*
 * Reads a region table ("OK id s c b q n region_bytes capacity gen",
 * "REGION ..." lines), of @want bytes unless 0 (a change made elsewhere).
 */
static int parse_table(struct redy_cache *c, const char *ans, uint64_t want)
{
	unsigned int id, n, i, idx, port, gen;
	unsigned long long rb, off, capacity;
	char addr[INET_ADDRSTRLEN], state[16];
	struct redy_cfg cfg;
	struct vreg *reg;
	const char *p;
	int s;

	if (sscanf(ans, "OK %u %u %u %u %u %u %llu %llu %u", &id, &cfg.s, &cfg.c,
		   &cfg.b, &cfg.q, &n, &rb, &capacity, &gen) != 9 || !n || !rb ||
	    (c->id && id != c->id) || cfg.q > REDY_DEPTH_MAX || !cfg.q ||
	    cfg.b > REDY_BATCH_MAX || !cfg.b || cfg.s > REDY_THREADS_MAX ||
	    n > (1u << 20) || rb > (1ull << 40) || !capacity ||
	    (want && capacity != want) || (c->region_bytes && rb != c->region_bytes) ||
	    (uint64_t)n * rb < capacity)
		return -EPROTO;	/* the regions must cover the capacity */
	reg = calloc(n, sizeof(*reg));
	if (!reg)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	for (i = 0, p = strchr(ans, '\n'); i < n && p; i++, p = strchr(p + 1, '\n')) {
		if (sscanf(p + 1, "REGION %u %15s %u %llu %15s", &idx, addr, &port,
			   &off, state) != 5 || idx != i || port > 65535) {
			s = -EPROTO;
			goto fail;
		}
		s = srv_index(c, addr, port);
		if (s < 0)
			goto fail;
		reg[i].srv = s;
		reg[i].off = off;
		/* keep what is known of regions that did not move */
		if (i < c->nreg && c->reg[i].srv == s && c->reg[i].off == off)
			reg[i].st = c->reg[i].st;
	}
	if (i < n) {
		s = -EPROTO;
		goto fail;
	}
	free(c->reg);
	c->reg = reg;
	c->nreg = n;
	c->id = id;
	if (c->cfg.s != cfg.s || c->cfg.b != cfg.b || c->cfg.q != cfg.q)
		c->reconnect = true;
	c->cfg = cfg;
	c->region_bytes = rb;
	c->capacity = capacity;
	c->gen = gen;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return 0;
fail:
	pthread_mutex_unlock(&c->lock);
	free(reg);
	return s;
}

/* ---- data ------------------------------------------------------------------------ */

/* The I/O thread's connection to server @s (opened on first use). */
static struct redy_client *io_conn(struct redy_cache *c, int s)
{
	struct srvconn *sc = c->srv[s];
	int r;

	if (sc->io_open)
		return &sc->io;
	if (sc->failed)
		return NULL;
	r = redy_client_open(&sc->io, sc->addr, sc->port, c->io_cfg.s ? 0 : -1,
			     c->io_cfg.q, c->opts.dev);
	if (r)
		return NULL;
	sc->io_open = true;
	return &sc->io;
}

/* The connection to @s broke: its regions fail (under c->lock). */
static void srv_failed(struct redy_cache *c, int s)
{
	unsigned int i;

	c->srv[s]->failed = true;
	for (i = 0; i < c->nreg; i++)
		if (c->reg[i].srv == s)
			c->reg[i].st = REG_FAILED;
	pthread_cond_broadcast(&c->cond);
}

/* A piece of a request inside one region, resolved to a server. */
struct piece {
	struct pending *p;	/* the request it is part of */
	int srv;
	unsigned int reg;
	struct redy_io io;
};

/*
 * May a piece in region @i go now (under c->lock)?  0 yes, -EAGAIN wait,
 * -EIO the region failed.
 */
static int may_go(struct redy_cache *c, unsigned int i, int write)
{
	const struct vreg *r = &c->reg[i];

	if (r->st == REG_FAILED)
		return -EIO;
	if (c->opts.pause_all && c->evacuating == r->srv)
		return -EAGAIN;
	if (write && r->st == REG_MIGRATING)
		return -EAGAIN;
	return 0;
}

/* Runs @n pieces, grouped by server; releases their writers. */
static void run_pieces(struct redy_cache *c, struct piece *pc, unsigned int n)
{
	struct redy_io io[PIECES_MAX];
	unsigned int i, k, done = 0;
	double t0 = now_ns(), dt;
	int s, r;

	while (done < n) {
		/* the first piece not run yet picks the server */
		for (i = 0; pc[i].srv < 0; i++)
			;
		s = pc[i].srv;
		for (k = 0; i < n; i++) {
			if (pc[i].srv != s)
				continue;
			io[k++] = pc[i].io;
		}
		r = -EIO;
		{
			struct redy_client *cl = io_conn(c, s);

			if (cl)
				r = redy_client_batch(cl, io, k,
						      c->io_cfg.s ? c->io_cfg.b : 1);
		}
		if (r && c->srv[s]->io_open) {
			/* ends what the connection still had in flight */
			redy_client_close(&c->srv[s]->io);
			c->srv[s]->io_open = false;
		}
		pthread_mutex_lock(&c->lock);
		if (r && !c->srv[s]->failed) {
			srv_failed(c, s);
			c->st.failed += k;
		}
		for (i = 0, k = 0; i < n; i++) {
			if (pc[i].srv != s)
				continue;
			pc[i].io.status = r ? -EIO : io[k].status;
			k++;
			if (pc[i].io.op == REDY_OP_WRITE && pc[i].reg < c->nreg &&
			    c->reg[pc[i].reg].writers)
				c->reg[pc[i].reg].writers--;
			pc[i].srv = -1;
			done++;
		}
		pthread_cond_broadcast(&c->cond);
		pthread_mutex_unlock(&c->lock);
	}
	dt = now_ns() - t0;
	pthread_mutex_lock(&c->lock);
	c->lat_sum_ns += dt * n;
	c->lat_n += n;
	pthread_mutex_unlock(&c->lock);
}

/* Runs the pieces gathered; each request keeps its first error: 0. */
static unsigned int run_gathered(struct redy_cache *c, struct piece *pc,
				 unsigned int np, const struct pending *p,
				 int *status)
{
	unsigned int j;

	run_pieces(c, pc, np);
	for (j = 0; j < np; j++)
		if (pc[j].io.status && !status[pc[j].p - p])
			status[pc[j].p - p] = pc[j].io.status;
	return 0;
}

/*
 * A change someone else asked the manager for (redy reshape), made by
 * the owner: the I/O thread, between requests, so that no piece is in
 * flight to a region the new table gives up.  Not while a migration
 * round runs (its region indices are the old table's): then at the next
 * request.
 */
static void io_follow(struct redy_cache *c)
{
	char req[sizeof(c->pending)], *ans;
	int r;

	pthread_mutex_lock(&c->lock);
	snprintf(req, sizeof(req), "%s", c->pending);
	pthread_mutex_unlock(&c->lock);
	if (!req[0] || pthread_mutex_trylock(&c->mig_lock))
		return;
	ans = malloc(ANSWER_MAX);
	r = ans ? mgr_req(c, ans, "%s", req) : -ENOMEM;
	r = r ?: parse_table(c, ans, 0);
	if (r)
		fprintf(stderr, "redy: cache %u: %s: %s\n", c->id, req, strerror(-r));
	pthread_mutex_lock(&c->lock);
	if (!strcmp(c->pending, req))
		c->pending[0] = '\0';
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&c->mig_lock);
	free(ans);
}

/*
 * The I/O thread picks up a new configuration (a reshape's): connections
 * of the old one (one- or two-sided, another depth) are closed, to be
 * opened anew on first use.  The capacity it checks requests against.
 */
static uint64_t io_refresh(struct redy_cache *c)
{
	struct srvconn *sc[SRV_MAX];
	unsigned int i, n = 0;
	uint64_t cap;

	io_follow(c);
	pthread_mutex_lock(&c->lock);
	if (c->reconnect)
		for (; n < SRV_MAX && c->srv[n]; n++)
			sc[n] = c->srv[n];
	c->reconnect = false;
	c->io_cfg = c->cfg;
	cap = c->capacity;
	pthread_mutex_unlock(&c->lock);
	for (i = 0; i < n; i++) {
		if (sc[i]->io_open)
			redy_client_close(&sc[i]->io);
		sc[i]->io_open = false;
	}
	return cap;
}

/*
 * Runs requests @p[0..n) in order: cut into pieces per region, batched
 * per server, waiting where a migration says so (after running what was
 * gathered, so that the migration's wait for writers can end).
 */
static void run_requests(struct redy_cache *c, struct pending *p, unsigned int n,
			 int *status)
{
	static __thread struct piece pc[PIECES_MAX];
	uint64_t a, end, reg, within, len, cap = io_refresh(c);
	unsigned int np = 0, i;
	bool waited;
	int r;

	for (i = 0; i < n; i++) {
		status[i] = 0;
		if (!p[i].len || p[i].addr >= cap || p[i].len > cap - p[i].addr) {
			status[i] = -EINVAL;
			continue;
		}
		end = p[i].addr + p[i].len;
		for (a = p[i].addr; a < end; a += len) {
			reg = a / c->region_bytes;
			within = a % c->region_bytes;
			len = c->region_bytes - within;
			if (len > end - a)
				len = end - a;
			if (len > REDY_MSG_BYTES / 2)
				len = REDY_MSG_BYTES / 2;
			waited = false;
			pthread_mutex_lock(&c->lock);
			while ((r = reg < c->nreg ? may_go(c, reg, p[i].write) : -EIO) ==
			       -EAGAIN) {
				if (np) {	/* let the migration go on */
					pthread_mutex_unlock(&c->lock);
					np = run_gathered(c, pc, np, p, status);
					pthread_mutex_lock(&c->lock);
					continue;
				}
				waited = true;
				pthread_cond_wait(&c->cond, &c->lock);
			}
			c->st.waits += waited;
			if (r) {
				c->st.failed++;
				pthread_mutex_unlock(&c->lock);
				status[i] = r;
				continue;
			}
			if (p[i].write)
				c->reg[reg].writers++;
			pc[np] = (struct piece){ .p = &p[i], .srv = c->reg[reg].srv,
				.reg = reg, .io = {
					.op = p[i].write ? REDY_OP_WRITE : REDY_OP_READ,
					.len = len, .off = c->reg[reg].off + within,
					.buf = (uint8_t *)p[i].buf + (a - p[i].addr) } };
			np++;
			pthread_mutex_unlock(&c->lock);
			if (np == PIECES_MAX)
				np = run_gathered(c, pc, np, p, status);
		}
		pthread_mutex_lock(&c->lock);
		if (p[i].write)
			c->st.writes++;
		else
			c->st.reads++;
		pthread_mutex_unlock(&c->lock);
	}
	run_gathered(c, pc, np, p, status);
}

int redy_cache_read(struct redy_cache *c, uint64_t addr, void *buf, size_t len)
{
	struct pending p = { .addr = addr, .buf = buf, .len = len };
	int st;

	run_requests(c, &p, 1, &st);
	return st;
}

int redy_cache_write(struct redy_cache *c, uint64_t addr, const void *buf,
		     size_t len)
{
	struct pending p = { .write = 1, .addr = addr, .buf = (void *)buf,
			     .len = len };
	int st;

	run_requests(c, &p, 1, &st);
	return st;
}

int redy_cache_submit(struct redy_cache *c, int write, uint64_t addr,
		      void *buf, size_t len, redy_cache_cb cb, void *arg)
{
	struct pending *q;

	if (c->nq == c->qcap) {
		q = realloc(c->q, (c->qcap ? c->qcap * 2 : 64) * sizeof(*q));
		if (!q)
			return -ENOMEM;
		c->q = q;
		c->qcap = c->qcap ? c->qcap * 2 : 64;
	}
	c->q[c->nq++] = (struct pending){ .write = write, .addr = addr,
		.buf = buf, .len = len, .cb = cb, .arg = arg };
	return 0;
}

int redy_cache_flush(struct redy_cache *c)
{
	unsigned int i, n = c->nq;
	struct pending *q;
	int *st;

	if (!n)
		return 0;
	st = calloc(n, sizeof(*st));
	if (!st)
		return -ENOMEM;
	run_requests(c, c->q, n, st);
	/* callbacks may submit again: they get a fresh queue */
	q = c->q;
	c->q = NULL;
	c->nq = c->qcap = 0;
	for (i = 0; i < n; i++)
		if (q[i].cb)
			q[i].cb(q[i].arg, st[i]);
	free(q);
	free(st);
	return n;
}

/* ---- migration ------------------------------------------------------------------- */

/* Moves region @i away from its server: 0 or a negative errno. */
static int migrate(struct redy_cache *c, unsigned int i, char *ans)
{
	char addr[INET_ADDRSTRLEN];
	unsigned int port;
	unsigned long long off;
	struct srvconn *old, *nw;
	uint64_t old_off, done, n;
	int s, r = 0;

	r = mgr_req(c, ans, "REPLACE %u %u", c->id, i);
	if (r)
		return r;
	if (sscanf(ans, "OK %15s %u %llu", addr, &port, &off) != 3 || port > 65535)
		return -EPROTO;
	pthread_mutex_lock(&c->lock);
	s = i < c->nreg ? srv_index(c, addr, port) : -ENOENT;
	if (s < 0) {
		pthread_mutex_unlock(&c->lock);
		return s;
	}
	old = c->srv[c->reg[i].srv];
	nw = c->srv[s];
	c->reg[i].st = REG_MIGRATING;
	while (c->reg[i].writers)
		pthread_cond_wait(&c->cond, &c->lock);
	old_off = c->reg[i].off;
	pthread_mutex_unlock(&c->lock);
	if (!nw->ctl_open) {
		r = redy_client_open(&nw->ctl, nw->addr, nw->port, 0, 1, c->opts.dev);
		nw->ctl_open = !r;
		/* a 16 MiB PULL may take more than the usual 5 s */
		nw->ctl.wait_ms = 60000;
	}
	for (done = 0; !r && done < c->region_bytes; done += n) {
		n = c->region_bytes - done < PULL_CHUNK ?
		    c->region_bytes - done : PULL_CHUNK;
		r = redy_client_pull(&nw->ctl, off + done, n, old->addr,
				     old->port, old_off + done);
	}
	if (r && nw->ctl_open) {
		redy_client_close(&nw->ctl);
		nw->ctl_open = false;
	}
	pthread_mutex_lock(&c->lock);
	if (r) {
		c->reg[i].st = REG_FAILED;
	} else {
		c->reg[i] = (struct vreg){ .srv = s, .off = off, .st = REG_OK };
		c->st.regions_migrated++;
		c->st.bytes_migrated += c->region_bytes;
	}
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return r;
}

/*
 * One round (under mig_lock): asks for notices, sending the measured
 * latency and throughput if @lat >= 0, and moves every region announced
 * for a reclaim or a reshape ("move").  A change someone else asked for
 * ("PENDING ...", or a table generation not ours) is left to the I/O
 * thread (io_follow).  The number of regions it tried to move, or a
 * negative errno (the first failure).
 */
static int mig_round(struct redy_cache *c, char *ans, double lat, double tput)
{
	unsigned int idx[1024], n = 0, i, gen;
	const char *p;
	char kind[16];
	int r, first = 0;

	if (lat >= 0)
		r = mgr_req(c, ans, "NOTICES %u %.0f %.0f", c->id, lat, tput);
	else
		r = mgr_req(c, ans, "NOTICES %u", c->id);
	if (r)
		return r;
	if (sscanf(ans, "OK %u", &gen) != 1)
		return -EPROTO;
	pthread_mutex_lock(&c->lock);
	/* only a change of shape: what a manager may ask the owner to do */
	p = strstr(ans, "\nPENDING ");
	if (p && (sscanf(p + 9, "%127[^\n]", c->pending) != 1 ||
		  (strncmp(c->pending, "RESIZE ", 7) &&
		   strncmp(c->pending, "RESHAPE ", 8))))
		c->pending[0] = '\0';
	else if (!p && gen != c->gen && !c->pending[0])
		snprintf(c->pending, sizeof(c->pending), "INSPECT %u", c->id);
	for (p = strchr(ans, '\n'); p && n < 1024; p = strchr(p + 1, '\n')) {
		if (sscanf(p + 1, "NOTICE %u %15s", &idx[n], kind) != 2 ||
		    idx[n] >= c->nreg)
			continue;
		if (!strcmp(kind, "reclaim") || !strcmp(kind, "move"))
			n++;
		else if (c->reg[idx[n]].st == REG_OK)	/* down */
			c->reg[idx[n]].st = REG_FAILED;
	}
	c->to_move = n;
	/* the baseline pauses the whole server being evacuated */
	if (n && c->opts.pause_all)
		c->evacuating = c->reg[idx[0]].srv;
	pthread_mutex_unlock(&c->lock);
	for (i = 0; i < n; i++) {
		r = idx[i] < c->nreg ? migrate(c, idx[i], ans) : 0;
		if (r) {
			fprintf(stderr, "redy: cache %u: region %u could not move: %s\n",
				c->id, idx[i], strerror(-r));
			first = first ?: r;
		}
		pthread_mutex_lock(&c->lock);
		c->to_move--;
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_lock(&c->lock);
	c->evacuating = -1;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return first ?: (int)n;
}

static void *mig_thread(void *arg)
{
	struct redy_cache *c = arg;
	char *ans = malloc(ANSWER_MAX);
	double lat, tput, last = now_ns();
	uint64_t ops0 = 0;
	int r;

	if (!ans)
		return NULL;
	for (;;) {
		struct timespec ts = { c->opts.poll_ms / 1000,
				       (long)(c->opts.poll_ms % 1000) * 1000000 };
		double now;

		pthread_mutex_lock(&c->lock);
		if (c->stop) {
			pthread_mutex_unlock(&c->lock);
			break;
		}
		now = now_ns();
		lat = c->lat_n ? c->lat_sum_ns / c->lat_n : 0;
		tput = (c->st.reads + c->st.writes - ops0) / ((now - last) / 1e9);
		ops0 = c->st.reads + c->st.writes;
		last = now;
		c->lat_sum_ns = 0;
		c->lat_n = 0;
		pthread_mutex_unlock(&c->lock);
		pthread_mutex_lock(&c->mig_lock);
		r = mig_round(c, ans, lat, tput);
		pthread_mutex_unlock(&c->mig_lock);
		if (r <= 0)
			nanosleep(&ts, NULL);
	}
	free(ans);
	return NULL;
}

/* ---- the cache ------------------------------------------------------------------- */

/* Create's file: its bytes at the cache's address 0 on.  0 or -errno. */
static int populate(struct redy_cache *c, int fd)
{
	const size_t chunk = 256u << 10;
	uint8_t *buf = malloc(chunk);
	uint64_t a = 0;
	ssize_t n;
	int r = 0;

	if (!buf)
		return -ENOMEM;
	while (!r && (n = read(fd, buf, chunk)) != 0) {
		if (n < 0) {
			r = errno == EINTR ? 0 : -errno;
			continue;
		}
		if ((uint64_t)n > redy_cache_capacity(c) - a) {
			r = -EFBIG;	/* it grew since it was measured */
			break;
		}
		r = redy_cache_write(c, a, buf, n);
		a += n;
	}
	free(buf);
	return r;
}

int redy_cache_create(struct redy_cache **out, const char *mgr, uint16_t port,
		      uint64_t capacity, const struct redy_slo *slo,
		      unsigned int duration_s, const struct redy_cache_opts *o)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tmo = { .tv_sec = 10 };
	struct redy_cache *c;
	int r, fd = -1;
	unsigned int i;
	struct stat sb;
	char *ans;

	if (!capacity || inet_pton(AF_INET, mgr, &sin.sin_addr) != 1)
		return -EINVAL;
	if (o && o->file) {
		fd = open(o->file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (fstat(fd, &sb))
			r = -errno;
		else if (!S_ISREG(sb.st_mode))
			r = -EINVAL;
		else
			r = (uint64_t)sb.st_size > capacity ? -EFBIG : 0;
		if (r) {
			close(fd);
			return r;
		}
	}
	c = calloc(1, sizeof(*c));
	ans = malloc(ANSWER_MAX);
	if (!c || !ans) {
		free(c);
		free(ans);
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	if (o)
		c->opts = *o;
	if (!c->opts.poll_ms)
		c->opts.poll_ms = 100;
	c->evacuating = -1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->mgr_lock, NULL);
	pthread_mutex_init(&c->mig_lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	c->mgr = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->mgr < 0 || connect(c->mgr, (struct sockaddr *)&sin, sizeof(sin)) ||
	    setsockopt(c->mgr, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo))) {
		r = -errno;
		goto fail;
	}
	r = mgr_req(c, ans, "ALLOCATE %llu %.0f %.0f %u",
		    (unsigned long long)capacity, slo->lat_ns, slo->tput_ops,
		    duration_s);
	if (r)
		goto fail;
	r = parse_table(c, ans, capacity);
	if (r) {
		unsigned int id;

		/* give back what the manager allocated */
		if (sscanf(ans, "OK %u", &id) == 1)
			mgr_req(c, ans, "DEALLOCATE %u", id);
		goto fail;
	}
	r = -pthread_create(&c->mig, NULL, mig_thread, c);
	if (r) {
		mgr_req(c, ans, "DEALLOCATE %u", c->id);
		goto fail;
	}
	free(ans);
	if (fd >= 0) {
		r = populate(c, fd);
		close(fd);
		if (r) {
			redy_cache_delete(c);
			return r;
		}
	}
	*out = c;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	if (c->mgr >= 0)
		close(c->mgr);
	free(c->reg);
	for (i = 0; i < SRV_MAX; i++)
		free(c->srv[i]);
	free(c);
	free(ans);
	return r ? r : -EIO;
}

uint32_t redy_cache_id(const struct redy_cache *c)
{
	return c->id;
}

uint64_t redy_cache_capacity(struct redy_cache *c)
{
	uint64_t cap;

	pthread_mutex_lock(&c->lock);
	cap = c->capacity;
	pthread_mutex_unlock(&c->lock);
	return cap;
}

void redy_cache_config(struct redy_cache *c, struct redy_cfg *cfg)
{
	pthread_mutex_lock(&c->lock);
	*cfg = c->cfg;
	pthread_mutex_unlock(&c->lock);
}

void redy_cache_stats(struct redy_cache *c, struct redy_cache_stats *st)
{
	pthread_mutex_lock(&c->lock);
	*st = c->st;
	pthread_mutex_unlock(&c->lock);
}

unsigned int redy_cache_migrating(struct redy_cache *c)
{
	unsigned int n;

	pthread_mutex_lock(&c->lock);
	n = c->to_move;
	pthread_mutex_unlock(&c->lock);
	return n;
}

int redy_cache_reshape(struct redy_cache *c, uint64_t capacity)
{
	char *ans = malloc(ANSWER_MAX);
	int r;

	if (!ans)
		return -ENOMEM;
	/* after the migrations under way, and none begins meanwhile */
	pthread_mutex_lock(&c->mig_lock);
	r = capacity ? mgr_req(c, ans, "RESIZE %u %llu", c->id,
			       (unsigned long long)capacity) : -EINVAL;
	r = r ?: parse_table(c, ans, capacity);
	pthread_mutex_unlock(&c->mig_lock);
	free(ans);
	return r;
}

int redy_cache_reshape_slo(struct redy_cache *c, uint64_t capacity,
			   const struct redy_slo *slo)
{
	char *ans = malloc(ANSWER_MAX);
	unsigned int round;
	int r;

	if (!ans)
		return -ENOMEM;
	pthread_mutex_lock(&c->mig_lock);
	r = capacity && slo ? mgr_req(c, ans, "RESHAPE %u %llu %.0f %.0f", c->id,
				      (unsigned long long)capacity, slo->lat_ns,
				      slo->tput_ops) : -EINVAL;
	r = r ?: parse_table(c, ans, capacity);
	/*
	 * The regions on servers without the new configuration's threads
	 * move now (a round moves all that are announced; more rounds only
	 * if a reclaim notice came meanwhile).
	 */
	for (round = 0; !r && round < 4; round++) {
		r = mig_round(c, ans, -1, 0);
		if (r <= 0)
			break;
		r = 0;
	}
	pthread_mutex_unlock(&c->mig_lock);
	free(ans);
	return r < 0 ? r : 0;
}

int redy_cache_repopulate(struct redy_cache *c)
{
	char *ans = malloc(ANSWER_MAX), addr[INET_ADDRSTRLEN];
	unsigned int i, port, n = 0;
	unsigned long long off;
	int r = 0, s;

	if (!ans)
		return -ENOMEM;
	pthread_mutex_lock(&c->mig_lock);
	for (i = 0; i < c->nreg && !r; i++) {
		pthread_mutex_lock(&c->lock);
		s = c->reg[i].st == REG_FAILED;
		pthread_mutex_unlock(&c->lock);
		if (!s)
			continue;
		r = mgr_req(c, ans, "REPLACE %u %u", c->id, i);
		if (!r && (sscanf(ans, "OK %15s %u %llu", addr, &port, &off) != 3 ||
			   port > 65535))
			r = -EPROTO;
		if (r)
			break;
		pthread_mutex_lock(&c->lock);
		s = srv_index(c, addr, port);
		if (s >= 0) {
			c->reg[i] = (struct vreg){ .srv = s, .off = off, .st = REG_OK };
			n++;
		}
		pthread_mutex_unlock(&c->lock);
		r = s < 0 ? s : 0;
	}
	pthread_mutex_unlock(&c->mig_lock);
	free(ans);
	return r ? r : (int)n;
}

int redy_cache_delete(struct redy_cache *c)
{
	char *ans = malloc(ANSWER_MAX);
	unsigned int i;
	int r;

	/* no PULL may still be copying into a region given back */
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->mig, NULL);
	r = ans ? mgr_req(c, ans, "DEALLOCATE %u", c->id) : -ENOMEM;
	for (i = 0; i < SRV_MAX && c->srv[i]; i++) {
		if (c->srv[i]->io_open)
			redy_client_close(&c->srv[i]->io);
		if (c->srv[i]->ctl_open)
			redy_client_close(&c->srv[i]->ctl);
		free(c->srv[i]);
	}
	close(c->mgr);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->mgr_lock);
	pthread_mutex_destroy(&c->mig_lock);
	free(c->reg);
	free(c->q);
	free(c);
	free(ans);
	return r;
}
