// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc_fuzz - builders of the control commands: module and device
 * queries, binding, the cache configuration, statistics, and connection
 * management (listen, connect, accept, reject, disconnect, destroy,
 * query).  Each builder fills in a well-formed structure from the pools
 * and, in FZ_FIELD mode, breaks one member the way a confused or hostile
 * caller would.  "Out" members get junk now and then: the kernel must
 * ignore them.
 */
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "fuzz.h"

#define FZ_LISTEN_PORTS	20000	/* well-formed listeners: 20000..59999 */

static bool fz_broken(const struct fz_call *c)
{
	return c->mode == FZ_FIELD;
}

/* Junk in @n bytes of out members at @p: ignored on input. */
static void fz_junk(struct fz_thread *t, void *p, size_t n)
{
	uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)fz_rnd(&t->rng);
}

/* An output array of @n elements of @size bytes, placed by @broken. */
static uint64_t fz_out_array(struct fz_thread *t, struct fz_call *c,
			     uint32_t n, uint32_t size, bool broken)
{
	size_t len = FZ_MIN((size_t)n * size, FZ_ARR_SIZE);

	return fz_place(t, NULL, len, fz_pick_place(t, broken), &c->view[0],
			&c->vlen[0]);
}

void fz_build_query(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_query *q = c->st;

	if (fz_broken(c))
		fz_junk(t, &q->abi_version, 20);
}

void fz_build_dev_list(struct fz_thread *t, struct fz_call *c)
{
	static const uint32_t esz[] = {
		0, 1, sizeof(struct mrrc_dev_info) - 1,
		sizeof(struct mrrc_dev_info) + 8, 4096, 0xffffffff,
	};
	struct mrrc_dev_list *d = c->st;
	bool bad_place = false;

	d->entry_size = sizeof(struct mrrc_dev_info);
	d->count = fz_below(&t->rng, 4);
	if (fz_broken(c)) {
		switch (fz_below(&t->rng, 3)) {
		case 0:
			d->entry_size = esz[fz_below(&t->rng, FZ_ARRAY_SIZE(esz))];
			break;
		case 1:
			d->count = fz_interesting32(t);
			break;
		default:
			bad_place = true;
			break;
		}
	}
	d->entries = fz_out_array(t, c, FZ_MAX(d->count, 1), d->entry_size,
				  bad_place);
	if (!d->count && fz_one_in(&t->rng, 2))
		d->entries = 0;
}

void fz_build_port_query(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_port_query *pq = c->st;
	bool bad_place = false;

	pq->dev_index = fz.dev_index;
	pq->port_num = 1;
	pq->gid_entry_size = sizeof(struct mrrc_gid_entry);
	pq->gid_count = fz_below(&t->rng, 8);
	if (fz_broken(c)) {
		switch (fz_below(&t->rng, 6)) {
		case 0:
			pq->dev_index = fz_interesting32(t);
			break;
		case 1:
			pq->port_num = fz_one_in(&t->rng, 2) ? 0 :
				       fz_interesting32(t);
			break;
		case 2:
			pq->gid_entry_size = fz_interesting32(t);
			break;
		case 3:
			pq->gid_count = fz_interesting32(t);
			break;
		case 4:
			bad_place = true;
			break;
		default:
			fz_junk(t, &pq->state, 11 * sizeof(uint32_t));
			break;
		}
	}
	pq->gids = fz_out_array(t, c, FZ_MAX(FZ_MIN(pq->gid_count, 64), 1),
				pq->gid_entry_size, bad_place);
}

void fz_build_bind(struct fz_thread *t, struct fz_call *c)
{
	static const char *const names[] = {
		"", "rxe", "rxe00", "mlx5_0", "siw0", "lo", "..", "rxe0 ",
	};
	struct mrrc_bind *b = c->st;

	strncpy(b->dev_name, fz.devname, sizeof(b->dev_name) - 1);
	if (!fz_broken(c))
		return;
	switch (fz_below(&t->rng, 4)) {
	case 0:		/* no terminating NUL */
		memset(b->dev_name, 'A' + (int)fz_below(&t->rng, 26),
		       sizeof(b->dev_name));
		break;
	case 1:
		memset(b->dev_name, 0, sizeof(b->dev_name));
		strcpy(b->dev_name, names[fz_below(&t->rng, FZ_ARRAY_SIZE(names))]);
		break;
	case 2:		/* junk after the NUL */
		fz_junk(t, b->dev_name + strlen(b->dev_name) + 1, 8);
		break;
	default:
		b->dev_index = (uint32_t)fz_rnd(&t->rng);
		break;
	}
}

void fz_build_ctx_query(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_ctx_query *q = c->st;

	if (fz_broken(c)) {
		q->dev_index = (uint32_t)fz_rnd(&t->rng);
		fz_junk(t, q->dev_name, sizeof(q->dev_name));
	}
}

/* Capacities at the edges: 1, around 2^28 and 2^32 pages, unbounded. */
static const uint64_t fz_huge_pages[] = {
	1, 1ULL << 28, (1ULL << 28) + 1, 1ULL << 32, ~0ULL,
};

/* A valid configuration that keeps pinned memory bounded. */
void fz_cache_config_sane(struct fz_thread *t, struct mrrc_cache_config *cfg)
{
	static const uint64_t pages[] = { 0, 64, 256, 1024, 4096, 16384 };
	static const uint32_t regions[] = { 0, 8, 64, 1024, 65536 };
	static const uint32_t modes[] = {
		MRRC_MODE_KEEP, MRRC_MODE_KEEP, MRRC_MODE_FAST, MRRC_MODE_FAST,
		MRRC_MODE_FAST, MRRC_MODE_ORDINARY, MRRC_MODE_ORDINARY,
	};

	if (fz_one_in(&t->rng, 2))
		return;		/* all KEEP: just read it */
	cfg->policy = fz_below(&t->rng, MRRC_POLICY_GDSF_BATCH + 1);
	cfg->mode = fz_one_in(&t->rng, 40) ? MRRC_MODE_MODEL :
		    modes[fz_below(&t->rng, FZ_ARRAY_SIZE(modes))];
	cfg->max_pages = pages[fz_below(&t->rng, FZ_ARRAY_SIZE(pages))];
	cfg->max_regions = regions[fz_below(&t->rng, FZ_ARRAY_SIZE(regions))];
	cfg->resort_pct = fz_below(&t->rng, 101);
	cfg->evict_pct = fz_below(&t->rng, 101);
	cfg->reg_ns_per_page = fz_below(&t->rng, 1000);
	cfg->reg_ns_per_op = fz_below(&t->rng, 10000);
	cfg->dereg_ns_per_page = fz_below(&t->rng, 1000);
	cfg->dereg_ns_per_op = fz_below(&t->rng, 10000);
	cfg->dereg_ns_per_region = fz_below(&t->rng, 10000);
	/* Measured costs: the figures above are then ignored. */
	if (fz_one_in(&t->rng, 3))
		cfg->flags = MRRC_CACHE_MEASURE_COSTS;
}

void fz_build_cache_config(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_cache_config *cfg = c->st;

	fz_cache_config_sane(t, cfg);
	if (!fz_broken(c))
		return;
	switch (fz_below(&t->rng, 7)) {
	case 0:
		cfg->policy = MRRC_POLICY_GDSF_BATCH + 1 +
			      fz_below(&t->rng, 1000);
		break;
	case 1:
		cfg->mode = MRRC_MODE_FAST + 1 + fz_below(&t->rng, 1000);
		break;
	case 2:
		cfg->resort_pct = 101 + fz_below(&t->rng, 1000);
		break;
	case 3:
		cfg->evict_pct = fz_interesting32(t);
		break;
	case 4:
		cfg->max_regions = fz_interesting32(t);
		break;
	case 5:		/* tiny, at the module's cap (2^28), or unbounded */
		cfg->max_pages = fz_huge_pages[fz_below(&t->rng,
					FZ_ARRAY_SIZE(fz_huge_pages))];
		break;
	default:
		cfg->reg_ns_per_page = fz_interesting32(t);
		cfg->dereg_ns_per_op = fz_interesting32(t);
		cfg->dereg_ns_per_region = fz_interesting32(t);
		break;
	}
}

void fz_build_flush(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_flush *f = c->st;

	if (fz_broken(c))
		f->regions = (uint32_t)fz_rnd(&t->rng);
}

void fz_build_cache_stats(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_cache_stats *st = c->st;
	uint32_t min = FZ_MIN(offsetof(struct mrrc_cache_stats, mre_recency) + 8,
			      sizeof(*st));

	st->flags = fz_one_in(&t->rng, 2) ? MRRC_STATS_GLOBAL : 0;
	if (!fz_broken(c))
		return;
	if (fz_one_in(&t->rng, 2))	/* an older revision */
		st->size = min + 8 * fz_below(&t->rng,
					      (sizeof(*st) - min) / 8 + 1);
	else
		fz_junk(t, &st->requests, sizeof(*st) - 8);
}

/* ---- connections --------------------------------------------------------- */

static void fz_addr4(struct mrrc_addr *a, uint32_t addr, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	a->port = port;
	memcpy(a->addr, &addr, 4);
}

/* Mostly the device's address; at times any, loopback or a stranger. */
static uint32_t fz_pick_ip(struct fz_thread *t)
{
	switch (fz_below(&t->rng, 20)) {
	case 0:
		return htonl(INADDR_ANY);
	case 1:
		return htonl(INADDR_LOOPBACK);
	case 2:		/* the same subnet, nobody there */
		return htonl(ntohl(fz.addr) + 1 + fz_below(&t->rng, 3));
	case 3:
		return (uint32_t)fz_rnd(&t->rng);
	default:
		return fz.addr;
	}
}

/* Break an address the way callers get struct mrrc_addr wrong. */
static void fz_break_addr(struct fz_thread *t, struct mrrc_addr *a)
{
	static const uint16_t fam[] = {
		0, AF_UNIX, AF_INET6, AF_IB, AF_PACKET, 0xffff,
	};

	switch (fz_below(&t->rng, 5)) {
	case 0:
		a->family = fam[fz_below(&t->rng, FZ_ARRAY_SIZE(fam))];
		break;
	case 1:		/* junk beyond the 4 bytes of AF_INET */
		a->addr[4 + fz_below(&t->rng, 12)] = 1 + fz_below(&t->rng, 255);
		break;
	case 2:
		a->scope_id = (uint32_t)fz_rnd(&t->rng) | 1;
		break;
	case 3:		/* IPv6: loopback, link-local, random */
		a->family = AF_INET6;
		memset(a->addr, 0, sizeof(a->addr));
		if (fz_one_in(&t->rng, 2)) {
			a->addr[15] = 1;
		} else {
			a->addr[0] = 0xfe;
			a->addr[1] = 0x80;
			fz_junk(t, a->addr + 8, 8);
			a->scope_id = fz_below(&t->rng, 8);
		}
		break;
	default:	/* a privileged port */
		a->port = fz_below(&t->rng, 1024);
		break;
	}
}

void fz_build_listen(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_listen *l = c->st;
	uint16_t port = fz_one_in(&t->rng, 3) ? 0 :
			FZ_LISTEN_PORTS + fz_below(&t->rng, 40000);

	fz_addr4(&l->addr, fz_pick_ip(t), port);
	l->backlog = fz_below(&t->rng, 64);
	l->user_data = fz_rnd(&t->rng);
	if (!fz_broken(c))
		return;
	switch (fz_below(&t->rng, 3)) {
	case 0:
		l->backlog = fz_interesting32(t);
		break;
	case 1:
		l->id = (uint32_t)fz_rnd(&t->rng);
		break;
	default:
		fz_break_addr(t, &l->addr);
		break;
	}
}

void fz_after_listen(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_listen *l = c->st;

	(void)t;
	if (c->err)
		return;
	fz_add_id(c->s, l->id, true);
	if (l->addr.family == AF_INET && l->addr.port)
		fz_add_port(c->s, l->addr.port);
}

void fz_build_connect(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_connect *k = c->st;
	uint16_t port = fz_pick_port(t);

	if (!port || fz_one_in(&t->rng, 5))
		port = FZ_LISTEN_PORTS + fz_below(&t->rng, 40000);
	fz_addr4(&k->dst, fz_below(&t->rng, 4) ? fz.addr : fz_pick_ip(t),
		 port);
	if (fz_one_in(&t->rng, 5))
		fz_addr4(&k->src, fz.addr, 0);
	k->timeout_ms = fz_one_in(&t->rng, 2) ? 0 : fz_range(&t->rng, 1, 3000);
	k->user_data = fz_rnd(&t->rng);
	if (!fz_broken(c))
		return;
	switch (fz_below(&t->rng, 4)) {
	case 0:
		fz_break_addr(t, &k->dst);
		break;
	case 1:		/* "any" must be all zero */
		memset(&k->src, 0, sizeof(k->src));
		if (fz_one_in(&t->rng, 2))
			k->src.port = 1 + fz_below(&t->rng, 65535);
		else
			k->src.addr[fz_below(&t->rng, 16)] = 1;
		break;
	case 2:
		fz_break_addr(t, &k->src);
		break;
	default:
		k->timeout_ms = fz_interesting32(t);
		k->id = (uint32_t)fz_rnd(&t->rng);
		break;
	}
}

void fz_after_connect(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_connect *k = c->st;

	(void)t;
	if (!c->err)
		fz_add_id(c->s, k->id, true);
}

/* ACCEPT, REJECT, DISCONNECT, DESTROY: which id each usually gets. */
static uint32_t fz_conn_cmd_id(struct fz_thread *t, struct fz_call *c)
{
	uint32_t id = 0;

	switch (c->cmd + MRRC_CMD_BASE) {
	case MRRC_CMD_ACCEPT:
	case MRRC_CMD_REJECT:
		if (fz_below(&t->rng, 5))
			id = fz_take_req(t, c->s);
		break;
	case MRRC_CMD_DISCONNECT:
		/* Rarely a live one: it costs a connection. */
		if (fz_one_in(&t->rng, 16))
			return fz_pick_conn(t, c->s);
		return fz_pick_id(t, c->s);
	default:
		if (fz_one_in(&t->rng, 32))
			return fz_pick_conn(t, c->s);
		return fz_pick_id(t, c->s);
	}
	return id ? id : fz_pick_id(t, c->s);
}

void fz_build_conn_cmd(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_conn_cmd *k = c->st;

	k->id = fz_conn_cmd_id(t, c);
	if (c->cmd + MRRC_CMD_BASE == MRRC_CMD_ACCEPT)
		k->user_data = fz_rnd(&t->rng);
	if (!fz_broken(c))
		return;
	if (fz_one_in(&t->rng, 2))
		k->user_data = fz_rnd(&t->rng) | 1;	/* only ACCEPT takes it */
	else
		k->id = fz_one_in(&t->rng, 2) ? 0 : fz_interesting32(t);
}

void fz_after_conn_cmd(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_conn_cmd *k = c->st;

	(void)t;
	if (c->err)
		return;
	switch (c->cmd + MRRC_CMD_BASE) {
	case MRRC_CMD_DISCONNECT:
		fz_forget_conn(c->s, k->id, false);
		break;
	case MRRC_CMD_DESTROY:
		fz_forget_conn(c->s, k->id, true);
		break;
	}
}

void fz_build_conn_query(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_conn_query *q = c->st;

	q->id = fz_one_in(&t->rng, 3) ? fz_pick_id(t, c->s) :
					fz_pick_conn(t, c->s);
	if (!fz_broken(c))
		return;
	if (fz_one_in(&t->rng, 2))	/* the first revision */
		q->size = FZ_MIN(offsetof(struct mrrc_conn_query, ctrl_recv) + 8,
				 sizeof(*q));
	fz_junk(t, &q->state, sizeof(*q) - offsetof(struct mrrc_conn_query, state));
}

/* A listener tells its port: the pools learn ports that were 0. */
void fz_after_conn_query(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_conn_query *q = c->st;

	(void)t;
	if (!c->err && q->state == MRRC_CONN_LISTENING &&
	    q->local.family == AF_INET && q->local.port)
		fz_add_port(c->s, q->local.port);
}
