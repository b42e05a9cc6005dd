// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc_fuzz - the world the commands act on: FZ_SLOTS contexts, all but
 * slot 0 bound to the RDMA device and holding real connections to
 * themselves (listen on the device's address, connect, accept, both ends
 * ESTABLISHED), and for each context samples of what it has: connection
 * ids, unanswered connection requests, REG handles, remotely accessible
 * segments and listening ports.  Well-formed commands draw their
 * arguments from these pools; their answers (handles, connection events)
 * refill them.  The pools are samples, not an inventory: a full table
 * overwrites a random entry, and an entry may be stale.
 *
 * A context is replaced as a whole ("reopen"): a new file is opened and
 * set up where no other thread can see it (so its connection events are
 * not polled away), then dup2()ed over the slot's fd, which closes the old
 * context with everything in it live.  A context is reopened when its
 * connections are gone, when it has collected FZ_BUDGET ids (a bound on
 * what the fuzzer makes the module allocate), when its device went away,
 * and now and then at random.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "fuzz.h"
#include "libmrrc.h"

#define FZ_SETUP_NS	10000000000ULL	/* one connection may take 10 s */
#define CMD(nr)		((nr) - MRRC_CMD_BASE)

void fz_lock(struct fz_slot *s)
{
	if (!fz.in_child)
		pthread_mutex_lock(&s->lock);
}

void fz_unlock(struct fz_slot *s)
{
	if (!fz.in_child)
		pthread_mutex_unlock(&s->lock);
}

int fz_open_ctx(void)
{
	return mrrc_open(0);
}

/* ---- the pools ---------------------------------------------------------- */

/* Index of a random non-zero entry of @v[@n], or -1. */
static int fz_pick_u32(struct fz_thread *t, const uint32_t *v,
		       unsigned int n, size_t stride)
{
	unsigned int start = fz_below(&t->rng, n), i;

	for (i = 0; i < n; i++) {
		unsigned int k = (start + i) % n;

		if (*(const uint32_t *)((const char *)v + k * stride))
			return (int)k;
	}
	return -1;
}

/* Index of an empty entry, or of a random one to overwrite. */
static unsigned int fz_free_u32(struct fz_thread *t, const uint32_t *v,
				unsigned int n, size_t stride)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!*(const uint32_t *)((const char *)v + i * stride))
			return i;
	return fz_below(&t->rng, n);
}

static void fz_clear_u32(uint32_t *v, unsigned int n, size_t stride,
			 uint32_t val)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint32_t *p = (uint32_t *)((char *)v + i * stride);

		if (*p == val)
			*p = 0;
	}
}

static void fz_budget(struct fz_slot *s)
{
	if (++s->p.created >= FZ_BUDGET)
		s->want_reopen = true;
}

static void fz_live_add(struct fz_thread *t, struct fz_pools *p, uint32_t id,
			uint32_t peer)
{
	unsigned int i;

	for (i = 0; i < FZ_LIVE; i++)
		if (p->live[i].id == id)
			return;
	i = fz_free_u32(t, &p->live[0].id, FZ_LIVE, sizeof(p->live[0]));
	p->live[i].id = id;
	p->live[i].peer = peer;
}

/* A connection id: established mostly, any other at times. */
uint32_t fz_pick_conn(struct fz_thread *t, struct fz_slot *s)
{
	uint32_t r = fz_below(&t->rng, 100), id = 0;
	int k;

	fz_lock(s);
	if (r < 85) {
		k = fz_pick_u32(t, &s->p.live[0].id, FZ_LIVE,
				sizeof(s->p.live[0]));
		if (k >= 0)
			id = s->p.live[k].id;
	} else if (r < 93) {
		k = fz_pick_u32(t, s->p.ids, FZ_IDS, sizeof(uint32_t));
		if (k >= 0)
			id = s->p.ids[k];
	} else if (r < 95) {
		k = fz_pick_u32(t, s->p.reqs, FZ_REQS, sizeof(uint32_t));
		if (k >= 0)
			id = s->p.reqs[k];
	}
	fz_unlock(s);
	if (!id)
		id = r < 98 ? (uint32_t)fz_range(&t->rng, 1, 64) :
			      (uint32_t)fz_rnd(&t->rng);
	return id;
}

/* Two ends of one connection on this context. */
bool fz_pick_pair(struct fz_thread *t, struct fz_slot *s, uint32_t *a,
		  uint32_t *b)
{
	unsigned int start = fz_below(&t->rng, FZ_LIVE), i;
	bool found = false;

	fz_lock(s);
	for (i = 0; i < FZ_LIVE && !found; i++) {
		struct fz_live *l = &s->p.live[(start + i) % FZ_LIVE];

		if (l->id && l->peer) {
			*a = l->id;
			*b = l->peer;
			found = true;
		}
	}
	fz_unlock(s);
	return found;
}

/*
 * A connection whose other end is this context too: its remote keys are
 * valid there (another context's protection domain knows none of them).
 * 0 if there is none.
 */
uint32_t fz_pick_self_conn(struct fz_thread *t, struct fz_slot *s)
{
	uint32_t a = 0, b;

	fz_pick_pair(t, s, &a, &b);
	return a;
}

/* Any id this context has had: listeners, closed and live connections. */
uint32_t fz_pick_id(struct fz_thread *t, struct fz_slot *s)
{
	uint32_t id = 0;
	int k;

	fz_lock(s);
	k = fz_pick_u32(t, s->p.ids, FZ_IDS, sizeof(uint32_t));
	if (k >= 0)
		id = s->p.ids[k];
	fz_unlock(s);
	return id ? id : fz_pick_conn(t, s);
}

/* An unanswered connection request, taken out of the pool; 0 if none. */
uint32_t fz_take_req(struct fz_thread *t, struct fz_slot *s)
{
	uint32_t id = 0;
	int k;

	fz_lock(s);
	k = fz_pick_u32(t, s->p.reqs, FZ_REQS, sizeof(uint32_t));
	if (k >= 0) {
		id = s->p.reqs[k];
		s->p.reqs[k] = 0;
	}
	fz_unlock(s);
	return id;
}

/* With the lock held. */
static void fz_ids_put(struct fz_slot *s, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < FZ_IDS; i++)
		if (!s->p.ids[i] || s->p.ids[i] == id)
			break;
	if (i == FZ_IDS)
		i = (id * 2654435761u) % FZ_IDS;
	s->p.ids[i] = id;
}

void fz_add_id(struct fz_slot *s, uint32_t id, bool created)
{
	fz_lock(s);
	fz_ids_put(s, id);
	if (created)
		fz_budget(s);
	fz_unlock(s);
}

/* A connection that is gone: out of the live pool, kept as an id. */
static void fz_conn_gone(struct fz_slot *s, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < FZ_LIVE; i++) {
		if (s->p.live[i].id == id)
			s->p.live[i].id = 0;
		if (s->p.live[i].peer == id)
			s->p.live[i].peer = 0;
	}
	fz_clear_u32(s->p.reqs, FZ_REQS, sizeof(uint32_t), id);
	fz_ids_put(s, id);
}

/* Connection @id is gone: exports for no other connection end with it. */
static void fz_targets_conn_gone(struct fz_slot *s, uint32_t id)
{
	unsigned int i, k, left;

	for (i = 0; i < FZ_TARGETS; i++) {
		struct fz_target *e = &s->p.targets[i];

		for (k = 0, left = 0; k < FZ_ARRAY_SIZE(e->conns); k++) {
			if (e->conns[k] == id)
				e->conns[k] = 0;
			left += !!e->conns[k];
		}
		if (!left)
			e->len = 0;
	}
}

/* DISCONNECT or DESTROY succeeded: no need to wait for the event. */
void fz_forget_conn(struct fz_slot *s, uint32_t id, bool destroyed)
{
	fz_lock(s);
	fz_conn_gone(s, id);
	if (destroyed) {
		fz_clear_u32(s->p.ids, FZ_IDS, sizeof(uint32_t), id);
		fz_targets_conn_gone(s, id);
	}
	fz_unlock(s);
}

void fz_add_port(struct fz_slot *s, uint16_t port)
{
	unsigned int i;

	fz_lock(s);
	for (i = 0; i < FZ_PORTS; i++)
		if (!s->p.ports[i] || s->p.ports[i] == port)
			break;
	s->p.ports[i < FZ_PORTS ? i : port % FZ_PORTS] = port;
	fz_unlock(s);
}

/* A port some context of this process listens on; 0 if none. */
uint16_t fz_pick_port(struct fz_thread *t)
{
	struct fz_slot *s = &fz.slot[fz_below(&t->rng, FZ_SLOTS)];
	uint16_t port;

	fz_lock(s);
	port = s->p.ports[fz_below(&t->rng, FZ_PORTS)];
	fz_unlock(s);
	return port;
}

/* Returns the handle it displaced, which the caller releases; or 0. */
uint32_t fz_add_handle(struct fz_thread *t, struct fz_slot *s,
		       const struct fz_handle *h)
{
	uint32_t old;
	unsigned int i;

	fz_lock(s);
	i = fz_free_u32(t, &s->p.handles[0].h, FZ_HANDLES,
			sizeof(s->p.handles[0]));
	old = s->p.handles[i].h;
	s->p.handles[i] = *h;
	fz_unlock(s);
	return old;
}

bool fz_pick_handle(struct fz_thread *t, struct fz_slot *s,
		    struct fz_handle *h, bool take)
{
	int k;

	fz_lock(s);
	k = fz_pick_u32(t, &s->p.handles[0].h, FZ_HANDLES,
			sizeof(s->p.handles[0]));
	if (k >= 0) {
		*h = s->p.handles[k];
		if (take)
			s->p.handles[k].h = 0;
	}
	fz_unlock(s);
	return k >= 0;
}

/*
 * Handle @h was released, or the export @h names revoked: out of the
 * pools, and the export's segments, whose keys die with it, too.  A
 * remote access with a dead key breaks the connection, which is worth
 * doing now and then, not all the time.
 */
void fz_forget_handle(struct fz_slot *s, uint32_t h)
{
	unsigned int i;

	fz_lock(s);
	fz_clear_u32(&s->p.handles[0].h, FZ_HANDLES, sizeof(s->p.handles[0]),
		     h);
	for (i = 0; i < FZ_TARGETS; i++)
		if (s->p.targets[i].h == h)
			s->p.targets[i].len = 0;
	fz_unlock(s);
}

void fz_add_target(struct fz_thread *t, struct fz_slot *s,
		   const struct mrrc_seg *seg, uint32_t h, uint32_t access,
		   const uint32_t *conns, unsigned int nconns)
{
	unsigned int i = fz_below(&t->rng, FZ_TARGETS), k;
	struct fz_target *e = &s->p.targets[i];

	if (!seg->length)
		return;
	fz_lock(s);
	e->addr = seg->addr;
	e->len = seg->length;
	e->rkey = seg->rkey;
	e->h = h;
	e->access = access;
	for (k = 0; k < FZ_ARRAY_SIZE(e->conns); k++)
		e->conns[k] = k < nconns ? conns[k] : 0;
	fz_unlock(s);
}

/* A remote segment that allows @access (0: any segment). */
bool fz_pick_target(struct fz_thread *t, struct fz_slot *s,
		    struct fz_target *tg, uint32_t access)
{
	unsigned int start = fz_below(&t->rng, FZ_TARGETS), i;
	bool found = false;

	fz_lock(s);
	for (i = 0; i < FZ_TARGETS && !found; i++) {
		struct fz_target *e = &s->p.targets[(start + i) % FZ_TARGETS];

		if (e->len && (e->access & access) == access) {
			*tg = *e;
			found = true;
		}
	}
	fz_unlock(s);
	return found;
}

static void fz_event(struct fz_thread *t, struct fz_slot *s,
		     const struct mrrc_cqe *c)
{
	t->events[c->event <= MRRC_EVENT_ERROR ? c->event : 0]++;
	switch (c->event) {
	case MRRC_EVENT_CONNECT_REQUEST:
		s->p.reqs[fz_free_u32(t, s->p.reqs, FZ_REQS,
				      sizeof(uint32_t))] = c->conn;
		fz_budget(s);
		break;
	case MRRC_EVENT_ESTABLISHED:
		fz_clear_u32(s->p.reqs, FZ_REQS, sizeof(uint32_t), c->conn);
		fz_live_add(t, &s->p, c->conn, 0);
		break;
	case MRRC_EVENT_DEVICE_REMOVAL:
		s->want_reopen = true;
		fz_conn_gone(s, c->conn);
		break;
	default:
		fz_conn_gone(s, c->conn);
		break;
	}
}

static unsigned int fz_cqe_op(uint8_t op)
{
	if (op >= MRRC_OP_WRITE && op <= MRRC_OP_LAST)
		return op - 1;
	return op == MRRC_OP_RECV_IMM ? MRRC_OP_LAST : MRRC_OP_LAST + 1;
}

/* What POLL returned: completions are counted, events update the pools. */
void fz_events(struct fz_thread *t, struct fz_slot *s,
	       const struct mrrc_cqe *cqe, unsigned int n)
{
	unsigned int i, k;
	bool live = false;

	fz_lock(s);
	for (i = 0; i < n; i++) {
		int st = cqe[i].status < 0 ? -cqe[i].status : cqe[i].status;

		if (cqe[i].opcode == MRRC_OP_EVENT) {
			fz_event(t, s, &cqe[i]);
			continue;
		}
		t->cqes[fz_cqe_op(cqe[i].opcode)][FZ_MIN(st, FZ_ERRNO_MAX)]++;
	}
	for (k = 0; k < FZ_LIVE; k++)
		live |= s->p.live[k].id != 0;
	if (s->p.connected && !live)
		s->want_reopen = true;
	fz_unlock(s);
}

/* ---- setting a context up ------------------------------------------------ */

static int fz_setup_ioctl(struct fz_thread *t, int fd, unsigned int nr,
			  void *arg)
{
	return fz_ioctl(t, CMD(nr), fd, _IO(MRRC_TYPE, nr), arg);
}

static int fz_ctx_bind(struct fz_thread *t, int fd)
{
	struct mrrc_bind b = { .size = sizeof(b) };

	strncpy(b.dev_name, fz.devname, sizeof(b.dev_name) - 1);
	return fz_setup_ioctl(t, fd, MRRC_CMD_BIND, &b);
}

static void fz_ctx_config(struct fz_thread *t, int fd)
{
	struct mrrc_cache_config cfg = { .size = sizeof(cfg) };

	fz_cache_config_sane(t, &cfg);
	fz_setup_ioctl(t, fd, MRRC_CMD_CACHE_CONFIG, &cfg);
}

static void fz_sin(struct mrrc_addr *a, uint32_t addr, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	a->port = port;
	memcpy(a->addr, &addr, 4);
}

/* Listen on the device's address, port 0: the port chosen, or 0. */
static uint16_t fz_ctx_listen(struct fz_thread *t, int fd,
			      struct fz_pools *p)
{
	struct mrrc_listen l = { .size = sizeof(l), .backlog = 16 };
	struct mrrc_conn_query q = { .size = sizeof(q) };

	fz_sin(&l.addr, fz.addr, 0);
	l.user_data = fz_rnd(&t->rng);
	if (fz_setup_ioctl(t, fd, MRRC_CMD_LISTEN, &l))
		return 0;
	p->ids[0] = l.id;
	q.id = l.id;
	if (fz_setup_ioctl(t, fd, MRRC_CMD_CONN_QUERY, &q))
		return 0;
	p->ports[0] = q.local.port;
	return q.local.port;
}

static int fz_ctx_poll(struct fz_thread *t, int fd, struct mrrc_cqe *cqe,
		       unsigned int max)
{
	struct mrrc_poll pl = {
		.size = sizeof(pl), .max = max, .cqe_size = sizeof(*cqe),
		.cqes = (uintptr_t)cqe,
	};
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	poll(&pfd, 1, 100);
	if (fz_setup_ioctl(t, fd, MRRC_CMD_POLL, &pl))
		return 0;
	return (int)pl.count;
}

static int fz_ctx_accept(struct fz_thread *t, int fd, uint32_t id)
{
	struct mrrc_conn_cmd a = {
		.size = sizeof(a), .id = id, .user_data = fz_rnd(&t->rng),
	};

	return fz_setup_ioctl(t, fd, MRRC_CMD_ACCEPT, &a);
}

/*
 * The context connects to its own listener: accept the request, wait for
 * both ends to be established.  Both ends go to the live pool, each
 * knowing the other.
 */
static bool fz_ctx_self_connect(struct fz_thread *t, int fd, uint16_t port,
				struct fz_pools *p)
{
	struct mrrc_connect c = { .size = sizeof(c) };
	uint64_t end = fz_now_ns() + FZ_SETUP_NS;
	bool c_ok = false, x_ok = false;
	struct mrrc_cqe cqe[16];
	uint32_t x = 0;
	int i, n;

	fz_sin(&c.dst, fz.addr, port);
	c.user_data = fz_rnd(&t->rng);
	if (fz_setup_ioctl(t, fd, MRRC_CMD_CONNECT, &c))
		return false;
	while (!(c_ok && x_ok) && fz_now_ns() < end &&
	       !__atomic_load_n(&fz.stop, __ATOMIC_RELAXED)) {
		n = fz_ctx_poll(t, fd, cqe, FZ_ARRAY_SIZE(cqe));
		for (i = 0; i < n; i++) {
			const struct mrrc_cqe *e = &cqe[i];

			if (e->opcode != MRRC_OP_EVENT)
				continue;
			if (e->event == MRRC_EVENT_CONNECT_REQUEST && !x) {
				x = e->conn;
				if (fz_ctx_accept(t, fd, x))
					return false;
			} else if (e->event == MRRC_EVENT_ESTABLISHED) {
				c_ok |= e->conn == c.id;
				x_ok |= x && e->conn == x;
			} else if (e->conn == c.id || (x && e->conn == x)) {
				return false;
			}
		}
	}
	if (!(c_ok && x_ok))
		return false;
	fz_live_add(t, p, c.id, x);
	fz_live_add(t, p, x, c.id);
	return true;
}

/* Bind, configure, listen and connect to itself once or more. */
static void fz_ctx_setup(struct fz_thread *t, int fd, struct fz_pools *p)
{
	unsigned int i, n = 1 + fz_below(&t->rng, 3);
	uint16_t port;

	if (fz_ctx_bind(t, fd))
		return;
	p->bound = true;
	if (fz_below(&t->rng, 4))
		fz_ctx_config(t, fd);
	port = fz_ctx_listen(t, fd, p);
	if (!port)
		return;
	for (i = 0; i < n; i++)
		p->connected |= fz_ctx_self_connect(t, fd, port, p);
}

/*
 * Replace slot @s's context by a new one.  False if another thread is at
 * it already (or this is a forked child, which leaves the slots alone).
 */
bool fz_slot_reopen(struct fz_thread *t, struct fz_slot *s)
{
	uint64_t t0 = fz_now_ns();
	struct fz_pools np;
	int fd, old;

	if (fz.in_child || pthread_mutex_trylock(&s->setup))
		return false;
	if (s->reopened && t0 - s->reopened < FZ_REOPEN_GAP_NS) {
		/* Too soon: it goes on with what it has (cheap failures). */
		pthread_mutex_unlock(&s->setup);
		return false;
	}
	memset(&np, 0, sizeof(np));
	fd = fz_open_ctx();
	fz_count(t, FZ_B_SYS, fd < 0 ? -fd : 0);
	if (fd < 0)
		goto out;
	if (s->index || fz_one_in(&t->rng, 4))
		fz_ctx_setup(t, fd, &np);

	/* Keep the old file open: it is released below, not under the lock. */
	old = dup(s->fd);
	fz_lock(s);
	dup2(fd, s->fd);
	s->p = np;
	s->want_reopen = false;
	s->reopened = fz_now_ns();
	s->gen++;
	fz_unlock(s);
	close(fd);
	if (old >= 0)
		close(old);
	t->reopens++;
	t->reopen_ns += fz_now_ns() - t0;
out:
	pthread_mutex_unlock(&s->setup);
	return true;
}

struct fz_slot *fz_pick_slot(struct fz_thread *t)
{
	if (fz_one_in(&t->rng, 12))
		return &fz.slot[0];
	return &fz.slot[1 + fz_below(&t->rng, FZ_SLOTS - 1)];
}

/* The device's index, for PORT_QUERY; -ENODEV if it is not there. */
static int fz_find_device(struct fz_thread *t, int fd)
{
	struct mrrc_dev_info info[8];
	struct mrrc_dev_list dl = {
		.size = sizeof(dl), .entry_size = sizeof(info[0]),
		.count = FZ_ARRAY_SIZE(info), .entries = (uintptr_t)info,
	};
	unsigned int i;

	if (fz_setup_ioctl(t, fd, MRRC_CMD_DEV_LIST, &dl))
		return -ENODEV;
	for (i = 0; i < FZ_MIN(dl.count, FZ_ARRAY_SIZE(info)); i++) {
		if (!strncmp(info[i].name, fz.devname, sizeof(info[i].name))) {
			fz.dev_index = info[i].dev_index;
			return 0;
		}
	}
	return -ENODEV;
}

int fz_world_init(struct fz_thread *t)
{
	unsigned int i;
	int fd;

	for (i = 0; i < FZ_SLOTS; i++) {
		struct fz_slot *s = &fz.slot[i];

		s->index = (int)i;
		pthread_mutex_init(&s->lock, NULL);
		pthread_mutex_init(&s->setup, NULL);
		s->fd = fz_open_ctx();
		if (s->fd < 0)
			return s->fd;
	}
	fd = fz.slot[0].fd;
	if (fz_find_device(t, fd))
		fprintf(stderr, "mrrc_fuzz: no RDMA device %s: contexts stay unbound\n",
			fz.devname);
	for (i = 0; i < FZ_SLOTS; i++)
		fz_slot_reopen(t, &fz.slot[i]);
	return 0;
}

void fz_world_fini(void)
{
	unsigned int i;

	for (i = 0; i < FZ_SLOTS; i++)
		close(fz.slot[i].fd);
}
