// SPDX-License-Identifier: GPL-2.0-only
/*
 * redymgr - Redy's cache manager (redy-vldb2022 §3.2, §6.1): knows the
 * memory servers (redyd), their memory, server threads and price; turns
 * Allocate(capacity, SLO, duration) into a configuration (the model's
 * search, slo.c) and regions on the cheapest servers that have the
 * threads; replaces regions; passes reclaim notices to the clients.
 *
 * One thread, one TCP listener, a line protocol (Documentation/redy.rst):
 * a request is one line; the answer's first line is "OK ..." or "ERR
 * <errno name> <text>", its last "END".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mrrc_version.h"
#include "slo.h"
#include "wire.h"

#define SERVERS_MAX	32u
#define CACHES_MAX	64u
#define CLIENTS_MAX	128u
#define LINE_MAX_BYTES	512u
#define REGIONS_MAX	1024u	/* per server */
#define MGR_PORT	7729u

enum srv_state { SRV_UP, SRV_RECLAIMING, SRV_DOWN };
static const char *const srv_state_name[] = { "up", "reclaiming", "down" };

struct server {
	bool used;
	char name[32];
	char addr[INET_ADDRSTRLEN];
	unsigned int port, threads, nregions;
	double price;		/* per region and hour, any unit */
	enum srv_state state;
	double deadline;	/* reclaiming: when it goes */
	uint32_t owner[REGIONS_MAX];	/* cache id holding the region, 0 free */
};

struct region {
	int srv;
	unsigned int idx;	/* region number on that server */
	int to_srv;		/* >= 0: reserved by a RESHAPE for its move */
	unsigned int to_idx;
};

struct cache {
	uint32_t id;		/* 0: free slot */
	uint64_t capacity;
	struct redy_slo slo;
	unsigned int duration;
	struct redy_cfg cfg;
	unsigned int nregions;
	struct region *reg;
	uint32_t gen;		/* RESIZE and RESHAPE count it up */
	double lat_ns, tput;	/* last reported by the client */
	uint64_t owner;		/* the connection that allocated it */
	char pending[96];	/* someone else's RESIZE/RESHAPE, for the owner */
};

struct client {
	int fd;
	uint64_t serial;	/* never 0, never reused */
	char in[LINE_MAX_BYTES];
	size_t len;
};

static struct {
	struct server srv[SERVERS_MAX];
	struct cache cache[CACHES_MAX];
	struct client cl[CLIENTS_MAX];
	uint64_t region_bytes;
	struct redy_model model;
	bool have_model;
	uint32_t next_id;
	uint64_t next_serial;
	uint64_t serial;	/* the connection whose request runs */
	int verbose;
} m = { .region_bytes = 1u << 20, .next_id = 1, .next_serial = 1 };

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * An answer, grown as needed (a region table has a line per region).
 * Out of memory, what does not fit is dropped and the answer becomes an
 * error (request() ends every answer with END either way).
 */
struct out {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void __attribute__((format(printf, 2, 3)))
put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	size_t want;
	char *nb;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || o->oom)
		return;
	want = o->len + n + 1;
	if (want > o->cap) {
		nb = realloc(o->buf, want * 2);
		if (!nb) {
			o->oom = true;
			return;
		}
		o->buf = nb;
		o->cap = want * 2;
	}
	va_start(ap, fmt);
	vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	o->len += n;
}

static struct server *server_named(const char *name)
{
	unsigned int i;

	for (i = 0; i < SERVERS_MAX; i++)
		if (m.srv[i].used && !strcmp(m.srv[i].name, name))
			return &m.srv[i];
	return NULL;
}

static struct cache *cache_of(uint32_t id)
{
	unsigned int i;

	for (i = 0; id && i < CACHES_MAX; i++)
		if (m.cache[i].id == id)
			return &m.cache[i];
	return NULL;
}

static unsigned int free_regions(const struct server *s)
{
	unsigned int i, n = 0;

	for (i = 0; i < s->nregions; i++)
		n += !s->owner[i];
	return n;
}

/* A server that can take a region of a cache of configuration @cfg. */
static bool eligible(const struct server *s, const struct redy_cfg *cfg,
		     int not)
{
	return s->used && s->state == SRV_UP && s->threads >= cfg->s &&
	       (int)(s - m.srv) != not && free_regions(s);
}

/* The cheapest eligible server with a free region, or NULL. */
static struct server *cheapest(const struct redy_cfg *cfg, int not)
{
	struct server *best = NULL;
	unsigned int i;

	for (i = 0; i < SERVERS_MAX; i++)
		if (eligible(&m.srv[i], cfg, not) &&
		    (!best || m.srv[i].price < best->price))
			best = &m.srv[i];
	return best;
}

static int take_region(struct cache *c, struct region *r, int not)
{
	struct server *s = cheapest(&c->cfg, not);
	unsigned int i;

	if (!s)
		return -ENOSPC;
	for (i = 0; s->owner[i]; i++)
		;
	s->owner[i] = c->id;
	r->srv = s - m.srv;
	r->idx = i;
	r->to_srv = -1;
	return 0;
}

static void free_slot(const struct cache *c, int srv, unsigned int idx)
{
	struct server *s = &m.srv[srv];

	if (idx < s->nregions && s->owner[idx] == c->id)
		s->owner[idx] = 0;
}

/* Gives up a region and the move target reserved for it. */
static void drop_region(const struct cache *c, struct region *r)
{
	free_slot(c, r->srv, r->idx);
	if (r->to_srv >= 0)
		free_slot(c, r->to_srv, r->to_idx);
	r->to_srv = -1;
}

/*
 * May this connection change the cache's shape now?  Not while the
 * connection that allocated it is open: it is using the regions a
 * shrink or a move would free.  The change is kept for the owner, who
 * finds it in NOTICES ("PENDING ...") and makes it itself.
 */
static bool owner_elsewhere(const struct cache *c)
{
	unsigned int i;

	if (c->owner == m.serial)
		return false;
	for (i = 0; i < CLIENTS_MAX; i++)
		if (m.cl[i].fd >= 0 && m.cl[i].serial == c->owner)
			return true;
	return false;
}

static bool defer(struct out *o, struct cache *c, char **a, int n)
{
	size_t len = 0;
	int k;

	if (!owner_elsewhere(c))
		return false;
	for (k = 0; k < n; k++)
		len += snprintf(c->pending + len, sizeof(c->pending) - len, "%s%s",
				k ? " " : "", a[k]);
	put(o, "OK pending: the owner makes the change\n");
	return true;
}

static void region_table(struct out *o, const struct cache *c)
{
	unsigned int i;

	put(o, "OK %u %u %u %u %u %u %llu %llu %u\n", c->id, c->cfg.s, c->cfg.c,
	    c->cfg.b, c->cfg.q, c->nregions, (unsigned long long)m.region_bytes,
	    (unsigned long long)c->capacity, c->gen);
	for (i = 0; i < c->nregions; i++) {
		const struct server *s = &m.srv[c->reg[i].srv];

		put(o, "REGION %u %s %u %llu %s\n", i, s->addr, s->port,
		    (unsigned long long)c->reg[i].idx * m.region_bytes,
		    srv_state_name[s->state]);
	}
}

static int resize(struct cache *c, unsigned int n)
{
	struct region *reg;
	unsigned int i;
	int r = 0;

	if (n > c->nregions) {
		reg = realloc(c->reg, n * sizeof(*reg));
		if (!reg)
			return -ENOMEM;
		c->reg = reg;
		for (i = c->nregions; i < n; i++) {
			r = take_region(c, &c->reg[i], -1);
			if (r)
				break;
		}
		if (r) {	/* all or nothing */
			while (i-- > c->nregions)
				drop_region(c, &c->reg[i]);
			return r;
		}
	} else {
		for (i = n; i < c->nregions; i++)
			drop_region(c, &c->reg[i]);
	}
	c->nregions = n;
	return 0;
}

static void cache_free(struct cache *c)
{
	unsigned int i;

	for (i = 0; i < c->nregions; i++)
		drop_region(c, &c->reg[i]);
	free(c->reg);
	memset(c, 0, sizeof(*c));
}

static int err_out(struct out *o, int err, const char *why)
{
	put(o, "ERR %s %s\n", strerrorname_np(-err) ?: "EINVAL", why);
	return err;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	errno = 0;
	if (!s || *s == '-')
		return -EINVAL;
	*v = strtoull(s, &end, 10);
	return errno || end == s || *end || *v > max ? -EINVAL : 0;
}

static int parse_num(const char *s, double max, double *v)
{
	char *end;

	if (!s)
		return -EINVAL;
	*v = strtod(s, &end);
	return end == s || *end || !(*v >= 0) || *v > max ? -EINVAL : 0;
}

/* ALLOCATE capacity lat_ns tput_ops duration_s */
static void cmd_allocate(struct out *o, char **a, int n)
{
	uint64_t cap, dur;
	struct redy_slo slo;
	struct cache *c = NULL;
	struct redy_cfg cfg;
	unsigned int i, want;
	int r;

	if (n != 5 || parse_u64(a[1], 1ull << 40, &cap) || !cap ||
	    parse_num(a[2], 1e12, &slo.lat_ns) ||
	    parse_num(a[3], 1e12, &slo.tput_ops) || parse_u64(a[4], 1u << 30, &dur)) {
		err_out(o, -EINVAL, "usage: ALLOCATE BYTES LAT_NS OPS SECONDS");
		return;
	}
	if (!m.have_model) {
		err_out(o, -ENOENT, "no model (redymgr -m FILE)");
		return;
	}
	if (redy_search(&m.model, &slo, &cfg, NULL)) {
		err_out(o, -ENOENT, "no configuration meets the SLO");
		return;
	}
	for (i = 0; i < CACHES_MAX && m.cache[i].id; i++)
		;
	if (i == CACHES_MAX) {
		err_out(o, -EMFILE, "too many caches");
		return;
	}
	c = &m.cache[i];
	/* ids are never 0 (a free slot) nor one in use */
	for (;;) {
		unsigned int j;

		c->id = m.next_id++;
		for (j = 0; j < CACHES_MAX; j++)
			if (j != i && m.cache[j].id == c->id)
				break;
		if (c->id && j == CACHES_MAX)
			break;
	}
	c->capacity = cap;
	c->slo = slo;
	c->duration = dur;
	c->cfg = cfg;
	c->owner = m.serial;
	want = (cap + m.region_bytes - 1) / m.region_bytes;
	r = want > REGIONS_MAX * SERVERS_MAX ? -ENOSPC : resize(c, want);
	if (r) {
		cache_free(c);
		err_out(o, r, "not enough memory on servers with the threads");
		return;
	}
	region_table(o, c);
}

/* RESIZE id capacity: grow or shrink (same configuration). */
static void cmd_resize(struct out *o, char **a, int n)
{
	uint64_t id, cap;
	struct cache *c;
	int r;

	if (n != 3 || parse_u64(a[1], UINT32_MAX, &id) ||
	    parse_u64(a[2], 1ull << 40, &cap) || !cap) {
		err_out(o, -EINVAL, "usage: RESIZE ID BYTES");
		return;
	}
	c = cache_of(id);
	if (!c) {
		err_out(o, -ENOENT, "no such cache");
		return;
	}
	if (defer(o, c, a, n))
		return;
	r = (cap + m.region_bytes - 1) / m.region_bytes > REGIONS_MAX * SERVERS_MAX ?
	    -ENOSPC : resize(c, (cap + m.region_bytes - 1) / m.region_bytes);
	if (r) {
		err_out(o, r, "not enough memory");
		return;
	}
	c->capacity = cap;
	c->gen++;
	if (c->owner == m.serial)
		c->pending[0] = '\0';
	region_table(o, c);
}

/* Does region @r sit on a server that cannot serve configuration @cfg? */
static bool misplaced(const struct region *r, const struct redy_cfg *cfg)
{
	return m.srv[r->srv].threads < cfg->s;
}

/*
 * RESHAPE id capacity lat_ns tput_ops: a new SLO (and capacity).  The
 * search picks the configuration; new regions come from servers with its
 * threads, and the regions on servers with too few get a region reserved
 * on one that has them and are announced to the client as "move" notices
 * (REPLACE then gives the reserved region; the move is a reclaim's).  All
 * or nothing: if the servers that qualify have too few free regions for
 * both, the cache keeps its shape (ENOSPC).
 */
static void cmd_reshape(struct out *o, char **a, int n)
{
	struct redy_cfg cfg, old_cfg;
	struct redy_slo slo;
	uint64_t id, cap;
	/* regions kept that must move, new ones; free on servers that can */
	unsigned int i, want, need, avail = 0;
	struct cache *c;
	int r;

	if (n != 5 || parse_u64(a[1], UINT32_MAX, &id) ||
	    parse_u64(a[2], 1ull << 40, &cap) || !cap ||
	    parse_num(a[3], 1e12, &slo.lat_ns) || parse_num(a[4], 1e12, &slo.tput_ops)) {
		err_out(o, -EINVAL, "usage: RESHAPE ID BYTES LAT_NS OPS");
		return;
	}
	c = cache_of(id);
	if (!c) {
		err_out(o, -ENOENT, "no such cache");
		return;
	}
	if (defer(o, c, a, n))
		return;
	if (!m.have_model || redy_search(&m.model, &slo, &cfg, NULL)) {
		err_out(o, -ENOENT, "no configuration meets the SLO");
		return;
	}
	want = (cap + m.region_bytes - 1) / m.region_bytes;
	if (want > REGIONS_MAX * SERVERS_MAX) {
		err_out(o, -ENOSPC, "not enough memory");
		return;
	}
	/* the regions kept that must move, and the new ones */
	need = want > c->nregions ? want - c->nregions : 0;
	for (i = 0; i < c->nregions && i < want; i++)
		need += misplaced(&c->reg[i], &cfg);
	for (i = 0; i < SERVERS_MAX; i++)
		if (eligible(&m.srv[i], &cfg, -1))
			avail += free_regions(&m.srv[i]);
	if (need > avail) {
		err_out(o, -ENOSPC, "not enough memory on servers with the threads");
		return;
	}
	old_cfg = c->cfg;
	c->cfg = cfg;
	r = resize(c, want);
	if (r) {
		c->cfg = old_cfg;
		err_out(o, r, "not enough memory");
		return;
	}
	/*
	 * A target for every region that must move, taken now (the count
	 * above leaves room for all); reservations no longer needed go back.
	 */
	for (i = 0; i < c->nregions; i++) {
		struct region *g = &c->reg[i], t;

		if (g->to_srv >= 0 && (!misplaced(g, &cfg) ||
				       m.srv[g->to_srv].threads < cfg.s)) {
			free_slot(c, g->to_srv, g->to_idx);
			g->to_srv = -1;
		}
		if (misplaced(g, &cfg) && g->to_srv < 0 && !take_region(c, &t, g->srv)) {
			g->to_srv = t.srv;
			g->to_idx = t.idx;
		}
	}
	c->capacity = cap;
	c->slo = slo;
	c->gen++;
	if (c->owner == m.serial)
		c->pending[0] = '\0';
	region_table(o, c);
}

/* REPLACE id region: a new region elsewhere; the old one is given up. */
static void cmd_replace(struct out *o, char **a, int n)
{
	struct region nr, old;
	uint64_t id, idx;
	struct cache *c;

	if (n != 3 || parse_u64(a[1], UINT32_MAX, &id) ||
	    parse_u64(a[2], UINT32_MAX, &idx)) {
		err_out(o, -EINVAL, "usage: REPLACE ID REGION");
		return;
	}
	c = cache_of(id);
	if (!c || idx >= c->nregions) {
		err_out(o, -ENOENT, "no such cache or region");
		return;
	}
	old = c->reg[idx];
	if (old.to_srv >= 0 && m.srv[old.to_srv].state == SRV_UP) {
		/* the target a RESHAPE reserved */
		nr = (struct region){ .srv = old.to_srv, .idx = old.to_idx,
				      .to_srv = -1 };
		old.to_srv = -1;
	} else if (take_region(c, &nr, old.srv)) {
		err_out(o, -ENOSPC, "no other server has a free region");
		return;
	}
	drop_region(c, &old);
	c->reg[idx] = nr;
	put(o, "OK %s %u %llu\n", m.srv[nr.srv].addr, m.srv[nr.srv].port,
	    (unsigned long long)nr.idx * m.region_bytes);
}

/*
 * NOTICES id [lat_ns ops]: "OK gen", then the regions on servers being
 * reclaimed or down, or on servers with too few threads for the cache's
 * configuration (after a RESHAPE).
 */
static void cmd_notices(struct out *o, char **a, int n)
{
	struct cache *c;
	uint64_t id;
	unsigned int i;
	double now = now_s();

	if (n < 2 || n > 4 || parse_u64(a[1], UINT32_MAX, &id)) {
		err_out(o, -EINVAL, "usage: NOTICES ID [LAT_NS OPS]");
		return;
	}
	c = cache_of(id);
	if (!c) {
		err_out(o, -ENOENT, "no such cache");
		return;
	}
	/* the client's measurements, for INSPECT */
	if (n == 4 && (parse_num(a[2], 1e15, &c->lat_ns) ||
		       parse_num(a[3], 1e15, &c->tput)))
		c->lat_ns = c->tput = 0;
	put(o, "OK %u\n", c->gen);
	if (c->pending[0] && c->owner == m.serial) {	/* told once */
		put(o, "PENDING %s\n", c->pending);
		c->pending[0] = '\0';
	}
	for (i = 0; i < c->nregions; i++) {
		const struct server *s = &m.srv[c->reg[i].srv];

		if (s->state == SRV_RECLAIMING)
			put(o, "NOTICE %u reclaim %.0f\n", i,
			    s->deadline > now ? (s->deadline - now) * 1e3 : 0);
		else if (s->state == SRV_DOWN)
			put(o, "NOTICE %u down 0\n", i);
		else if (misplaced(&c->reg[i], &c->cfg))	/* a RESHAPE's */
			put(o, "NOTICE %u move 0\n", i);
	}
}

static void cmd_deallocate(struct out *o, char **a, int n)
{
	struct cache *c;
	uint64_t id;

	if (n != 2 || parse_u64(a[1], UINT32_MAX, &id) || !(c = cache_of(id))) {
		err_out(o, -ENOENT, "usage: DEALLOCATE ID (a live cache)");
		return;
	}
	cache_free(c);
	put(o, "OK\n");
}

/* SERVER name addr port mem_mb threads price */
static void cmd_server(struct out *o, char **a, int n)
{
	struct in_addr ia;
	uint64_t port, mb, th;
	double price;
	struct server *s;
	unsigned int i;

	if (n != 7 || strlen(a[1]) >= sizeof(s->name) ||
	    inet_pton(AF_INET, a[2], &ia) != 1 ||
	    parse_u64(a[3], 65535, &port) || !port ||
	    parse_u64(a[4], 1u << 20, &mb) || !mb ||
	    parse_u64(a[5], REDY_THREADS_MAX, &th) ||
	    parse_num(a[6], 1e9, &price)) {
		err_out(o, -EINVAL, "usage: SERVER NAME ADDR PORT MEM_MB THREADS PRICE");
		return;
	}
	if (server_named(a[1])) {
		err_out(o, -EEXIST, "a server of that name exists");
		return;
	}
	for (i = 0; i < SERVERS_MAX; i++)
		if (m.srv[i].used && !strcmp(m.srv[i].addr, a[2]) &&
		    m.srv[i].port == port) {
			err_out(o, -EEXIST, "a server at that address and port exists");
			return;
		}
	for (i = 0; i < SERVERS_MAX && m.srv[i].used; i++)
		;
	if (i == SERVERS_MAX) {
		err_out(o, -ENOSPC, "too many servers");
		return;
	}
	s = &m.srv[i];
	memset(s, 0, sizeof(*s));
	s->used = true;
	snprintf(s->name, sizeof(s->name), "%s", a[1]);
	snprintf(s->addr, sizeof(s->addr), "%s", a[2]);
	s->port = port;
	s->threads = th;
	s->price = price;
	s->nregions = (mb << 20) / m.region_bytes;
	if (s->nregions > REGIONS_MAX)
		s->nregions = REGIONS_MAX;
	put(o, "OK %u regions\n", s->nregions);
}

/* RECLAIM name notice_s | FAIL name | RESTORE name */
static void cmd_state(struct out *o, char **a, int n)
{
	struct server *s = n >= 2 ? server_named(a[1]) : NULL;
	double notice = 0;

	if (!s || (!strcmp(a[0], "RECLAIM") &&
		   (n != 3 || parse_num(a[2], 86400, &notice))) ||
	    (strcmp(a[0], "RECLAIM") && n != 2)) {
		err_out(o, -EINVAL, "usage: RECLAIM NAME SECONDS | FAIL NAME | RESTORE NAME");
		return;
	}
	if (!strcmp(a[0], "RECLAIM")) {
		s->state = SRV_RECLAIMING;
		s->deadline = now_s() + notice;
	} else {
		s->state = strcmp(a[0], "FAIL") ? SRV_UP : SRV_DOWN;
	}
	put(o, "OK\n");
}

static void cmd_list(struct out *o)
{
	unsigned int i;

	put(o, "OK\n");
	for (i = 0; i < SERVERS_MAX; i++) {
		const struct server *s = &m.srv[i];

		if (s->used)
			put(o, "SERVER %s %s %u threads=%u price=%g regions=%u free=%u %s\n",
			    s->name, s->addr, s->port, s->threads, s->price,
			    s->nregions, free_regions(s), srv_state_name[s->state]);
	}
	for (i = 0; i < CACHES_MAX; i++) {
		const struct cache *c = &m.cache[i];

		if (c->id)
			put(o, "CACHE %u bytes=%llu regions=%u s=%u c=%u b=%u q=%u slo_lat_ns=%.0f slo_ops=%.0f measured_lat_ns=%.0f measured_ops=%.0f\n",
			    c->id, (unsigned long long)c->capacity, c->nregions,
			    c->cfg.s, c->cfg.c, c->cfg.b, c->cfg.q, c->slo.lat_ns,
			    c->slo.tput_ops, c->lat_ns, c->tput);
	}
}

static void cmd_inspect(struct out *o, char **a, int n)
{
	struct cache *c;
	uint64_t id;

	if (n != 2 || parse_u64(a[1], UINT32_MAX, &id) || !(c = cache_of(id))) {
		err_out(o, -ENOENT, "usage: INSPECT ID (a live cache)");
		return;
	}
	region_table(o, c);
}

/* One request line (NUL-terminated, no newline): the answer in @o. */
static void request(char *line, struct out *o)
{
	char *a[8], *save = NULL, *t;
	int n = 0;

	for (t = strtok_r(line, " \t\r", &save); t && n < 8;
	     t = strtok_r(NULL, " \t\r", &save))
		a[n++] = t;
	if (!n || t) {
		err_out(o, -EINVAL, "empty or too many words");
		return;
	}
	if (!strcmp(a[0], "ALLOCATE"))
		cmd_allocate(o, a, n);
	else if (!strcmp(a[0], "RESIZE"))
		cmd_resize(o, a, n);
	else if (!strcmp(a[0], "RESHAPE"))
		cmd_reshape(o, a, n);
	else if (!strcmp(a[0], "REPLACE"))
		cmd_replace(o, a, n);
	else if (!strcmp(a[0], "NOTICES"))
		cmd_notices(o, a, n);
	else if (!strcmp(a[0], "DEALLOCATE"))
		cmd_deallocate(o, a, n);
	else if (!strcmp(a[0], "SERVER"))
		cmd_server(o, a, n);
	else if (!strcmp(a[0], "RECLAIM") || !strcmp(a[0], "FAIL") ||
		 !strcmp(a[0], "RESTORE"))
		cmd_state(o, a, n);
	else if (!strcmp(a[0], "LIST") && n == 1)
		cmd_list(o);
	else if (!strcmp(a[0], "INSPECT"))
		cmd_inspect(o, a, n);
	else
		err_out(o, -EINVAL, "unknown request");
	if (o->oom) {
		o->oom = false;
		o->len = 0;
		err_out(o, -ENOMEM, "no memory for the answer");
	}
	put(o, "END\n");
}

static void client_close(struct client *c)
{
	close(c->fd);
	c->fd = -1;
	c->len = 0;
}

/* Reads what came; answers each whole line.  A line too long ends it. */
static void client_read(struct client *c)
{
	static struct out o;
	char *nl;
	ssize_t w;
	ssize_t n;

	n = read(c->fd, c->in + c->len, sizeof(c->in) - 1 - c->len);
	if (n <= 0) {
		client_close(c);
		return;
	}
	c->len += n;
	c->in[c->len] = '\0';
	while ((nl = memchr(c->in, '\n', c->len))) {
		*nl = '\0';
		o.len = 0;
		m.serial = c->serial;
		request(c->in, &o);
		if (m.verbose && o.buf && !o.oom)
			fprintf(stderr, "redymgr: %s -> %.*s", c->in,
				(int)(strchr(o.buf, '\n') - o.buf + 1), o.buf);
		/* SO_SNDTIMEO: a client that does not read is dropped */
		if (o.oom || !o.len) {	/* not even the error fitted */
			static const char enomem[] = "ERR ENOMEM no memory\nEND\n";

			o.oom = false;
			w = write(c->fd, enomem, sizeof(enomem) - 1);
			if (w != sizeof(enomem) - 1)
				client_close(c);
			if (w != sizeof(enomem) - 1)
				return;
			o.len = 0;
		}
		w = o.len ? write(c->fd, o.buf, o.len) : 0;
		if (w != (ssize_t)o.len) {
			client_close(c);
			return;
		}
		c->len -= nl + 1 - c->in;
		memmove(c->in, nl + 1, c->len);
	}
	if (c->len >= sizeof(c->in) - 1) {
		dprintf(c->fd, "ERR E2BIG line too long\n");
		client_close(c);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: redymgr -m MODEL [-l ADDR] [-p PORT] [-r REGION_KB] [-v]\n"
		"  -m MODEL      the configuration model (redy model -o)\n"
		"  -l ADDR       the address to listen on (127.0.0.1)\n"
		"  -p PORT       the TCP port (%u)\n"
		"  -r REGION_KB  region size, 4 KiB to 1 GiB (1024)\n"
		"  -v            log every request\n", MGR_PORT);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(MGR_PORT) };
	struct sigaction sa = { .sa_handler = on_signal };
	struct pollfd pf[CLIENTS_MAX + 1];
	const struct timeval tmo = { .tv_sec = 2 };
	const char *model = NULL;
	unsigned int i, line;
	unsigned long v;
	int opt, lfd, one = 1;
	char *end;
	FILE *f;

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	while ((opt = getopt(argc, argv, "m:l:p:r:vVh")) != -1) {
		switch (opt) {
		case 'm':
			model = optarg;
			break;
		case 'l':
			if (inet_pton(AF_INET, optarg, &sin.sin_addr) != 1) {
				fprintf(stderr, "redymgr: -l: %s is not an IPv4 address\n", optarg);
				return 2;
			}
			break;
		case 'p':
		case 'r':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || !v ||
			    v > (opt == 'p' ? 65535ul : 1ul << 20) ||
			    (opt == 'r' && v < 4)) {
				fprintf(stderr, "redymgr: -%c: %s is out of range\n", opt, optarg);
				return 2;
			}
			if (opt == 'p')
				sin.sin_port = htons(v);
			else
				m.region_bytes = (uint64_t)v << 10;
			break;
		case 'v':
			m.verbose = 1;
			break;
		case 'V':
			printf("redymgr %s\n", MRRC_VERSION_STRING);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !model) {
		usage(stderr);
		return 2;
	}
	f = fopen(model, "r");
	if (!f || redy_model_load(&m.model, f, &line)) {
		fprintf(stderr, "redymgr: %s: %s\n", model,
			f ? "not a model" : strerror(errno));
		return 1;
	}
	fclose(f);
	m.have_model = true;
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) || listen(lfd, 16)) {
		perror("redymgr: listen");
		return 1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < CLIENTS_MAX; i++)
		m.cl[i].fd = -1;
	fprintf(stderr, "redymgr: listening on port %u, regions of %llu KiB\n",
		ntohs(sin.sin_port), (unsigned long long)m.region_bytes >> 10);
	while (!stopping) {
		pf[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (i = 0; i < CLIENTS_MAX; i++)
			pf[i + 1] = (struct pollfd){ .fd = m.cl[i].fd, .events = POLLIN };
		if (poll(pf, CLIENTS_MAX + 1, 500) <= 0)
			continue;
		if (pf[0].revents & POLLIN) {
			int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			for (i = 0; fd >= 0 && i < CLIENTS_MAX && m.cl[i].fd >= 0; i++)
				;
			if (fd >= 0 && (i == CLIENTS_MAX ||
					setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tmo,
						   sizeof(tmo))))
				close(fd);
			else if (fd >= 0)
				m.cl[i] = (struct client){ .fd = fd,
							   .serial = m.next_serial++ };
		}
		for (i = 0; i < CLIENTS_MAX; i++)
			if (m.cl[i].fd >= 0 && (pf[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
				client_read(&m.cl[i]);
	}
	for (i = 0; i < CLIENTS_MAX; i++)
		if (m.cl[i].fd >= 0)
			client_close(&m.cl[i]);
	for (i = 0; i < CACHES_MAX; i++)
		if (m.cache[i].id)
			cache_free(&m.cache[i]);
	redy_model_free(&m.model);
	close(lfd);
	fprintf(stderr, "redymgr: exiting\n");
	return 0;
}
