// SPDX-License-Identifier: GPL-2.0-only
/* The buffer manager's coherence protocol, a state machine: see coh.h. */
#include <errno.h>
#include <string.h>

#include "coh.h"

static const char *const home_state_name[] = {
	[COH_UNSHARED] = "unshared", [COH_SHARED] = "shared",
	[COH_EXCLUSIVE] = "exclusive",
};

const char *coh_home_state_name(enum coh_home_state s)
{
	return s <= COH_EXCLUSIVE ? home_state_name[s] : "?";
}

void coh_home_init(struct coh_home *h, unsigned int self, unsigned int nodes,
		   uint64_t value)
{
	memset(h, 0, sizeof(*h));
	h->self = self;
	h->nodes = nodes;
	h->value = value;
}

void coh_cache_init(struct coh_cache *c, unsigned int self, unsigned int home)
{
	memset(c, 0, sizeof(*c));
	c->self = self;
	c->home = home;
}

static void send(struct coh_out *out, enum coh_msg_type type,
		 unsigned int from, unsigned int to, uint64_t value)
{
	out->msg[out->n++] = (struct coh_msg){ .type = type, .from = from,
					       .to = to, .value = value };
}

/* The nodes other than the home and @writer that hold a copy. */
static uint32_t holders(const struct coh_home *h, unsigned int writer)
{
	uint32_t set = 0;

	if (h->state == COH_SHARED)
		set = h->sharers;
	else if (h->state == COH_EXCLUSIVE)
		set = 1u << h->owner;
	return set & ~(1u << writer) & ~(1u << h->self) & ~h->failed;
}

/* A remote read served from home memory: the reader joins the copies. */
static void serve_read(struct coh_home *h, unsigned int from, struct coh_out *out)
{
	send(out, COH_M_DATA, h->self, from, h->value);
	if (h->state == COH_UNSHARED) {
		h->state = COH_SHARED;
		h->sharers = 1u << from;
	} else if (h->state == COH_SHARED) {
		h->sharers |= 1u << from;
	} else if (h->owner != from) {	/* the writer's copy stays valid */
		h->state = COH_SHARED;
		h->sharers = 1u << h->owner | 1u << from;
	}
}

/* Applies the write in h->cur: every other copy is gone. */
static void apply(struct coh_home *h, struct coh_out *out)
{
	h->value = h->cur.value;
	h->sharers = 0;
	/* a writer that died holds no copy */
	if (h->cur.from == h->self || (h->failed & 1u << h->cur.from)) {
		h->state = COH_UNSHARED;
	} else {
		h->state = COH_EXCLUSIVE;
		h->owner = h->cur.from;
	}
	h->busy = false;
	send(out, COH_M_WRITTEN, h->self, h->cur.from, h->value);
}

/* Starts a write: applied at once, or busy until the copies are dropped. */
static void start_write(struct coh_home *h, const struct coh_req *r,
			struct coh_out *out)
{
	uint32_t set = holders(h, r->from);
	unsigned int n;

	h->cur = *r;
	h->busy = true;
	h->acks_due = set;
	if (!set) {
		apply(h, out);
		return;
	}
	for (n = 0; n < h->nodes; n++)
		if (set & 1u << n) {
			send(out, COH_M_INVALIDATE, h->self, n, 0);
			h->invalidations++;
		}
}

static int enqueue(struct coh_home *h, const struct coh_req *r)
{
	unsigned int i;

	/* a remote node has one read and one write of a page in flight */
	if (r->from != h->self) {
		if (r->write && h->cur.write && h->cur.from == r->from) {
			h->refused++;
			return -EPROTO;
		}
		for (i = 0; i < h->nwait; i++)
			if (h->wait[i].from == r->from && h->wait[i].write == r->write) {
				h->refused++;
				return -EPROTO;
			}
	}
	if (h->nwait == COH_WAIT_MAX)
		return -EBUSY;
	h->wait[h->nwait++] = *r;
	return 0;
}

/* After a write: the requests that waited, in order, until one waits again. */
static void drain(struct coh_home *h, struct coh_out *out)
{
	unsigned int i = 0;

	while (!h->busy && i < h->nwait) {
		const struct coh_req r = h->wait[i++];

		if (r.write)
			start_write(h, &r, out);
		else	/* a local read never waits: remote ones only */
			serve_read(h, r.from, out);
	}
	memmove(h->wait, h->wait + i, (h->nwait - i) * sizeof(h->wait[0]));
	h->nwait -= i;
}

static bool bad_node(const struct coh_home *h, unsigned int n)
{
	return n >= h->nodes || h->nodes > COH_NODES_MAX ||
	       (h->failed & 1u << n);	/* nothing comes from the dead */
}

int coh_home_read(struct coh_home *h, unsigned int from, uint64_t *value,
		  struct coh_out *out)
{
	out->n = 0;
	if (bad_node(h, from)) {
		h->refused++;
		return -EPROTO;
	}
	if (from == h->self) {	/* home memory is always current */
		*value = h->value;
		return 1;
	}
	if (h->busy)	/* it would miss the invalidations under way */
		return enqueue(h, &(struct coh_req){ .from = from });
	serve_read(h, from, out);
	return 0;
}

int coh_home_write(struct coh_home *h, unsigned int from, uint64_t value,
		   struct coh_out *out)
{
	const struct coh_req r = { .write = true, .from = from, .value = value };

	out->n = 0;
	if (bad_node(h, from)) {
		h->refused++;
		return -EPROTO;
	}
	if (h->busy)
		return enqueue(h, &r);
	start_write(h, &r, out);
	return 0;
}

int coh_home_ack(struct coh_home *h, unsigned int from, struct coh_out *out)
{
	out->n = 0;
	if (bad_node(h, from) || !h->busy || !(h->acks_due & 1u << from)) {
		h->refused++;	/* nobody owed this acknowledgement */
		return -EPROTO;
	}
	h->acks_due &= ~(1u << from);
	if (!h->acks_due) {
		apply(h, out);
		drain(h, out);
	}
	return 0;
}

int coh_home_node_failed(struct coh_home *h, unsigned int node,
			 struct coh_out *out)
{
	unsigned int i, k = 0;

	out->n = 0;
	if (bad_node(h, node) || node == h->self)
		return -EINVAL;
	h->failed |= 1u << node;
	h->sharers &= ~(1u << node);
	if ((h->state == COH_SHARED && !h->sharers) ||
	    (h->state == COH_EXCLUSIVE && h->owner == node))
		h->state = COH_UNSHARED;
	for (i = 0; i < h->nwait; i++)	/* its waiting requests go */
		if (h->wait[i].from != node)
			h->wait[k++] = h->wait[i];
	h->nwait = k;
	if (h->busy && (h->acks_due & 1u << node)) {
		h->acks_due &= ~(1u << node);
		if (!h->acks_due) {
			apply(h, out);
			drain(h, out);
		}
	}
	return 0;
}

void coh_cache_home_failed(struct coh_cache *c, bool *reading, bool *writing)
{
	*reading = c->reading;
	*writing = c->writing;
	c->reading = c->writing = false;
	c->state = COH_INVALID;
}

bool coh_cache_drop(struct coh_cache *c)
{
	bool had = c->state != COH_INVALID;

	c->state = COH_INVALID;
	return had;
}

int coh_cache_read(struct coh_cache *c, uint64_t *value, struct coh_out *out)
{
	out->n = 0;
	if (c->state != COH_INVALID) {
		*value = c->value;
		return 1;
	}
	if (c->reading)
		return -EBUSY;
	c->reading = true;
	send(out, COH_M_READ, c->self, c->home, 0);
	return 0;
}

int coh_cache_write(struct coh_cache *c, uint64_t value, struct coh_out *out)
{
	out->n = 0;
	if (c->writing)
		return -EBUSY;
	c->writing = true;
	c->wvalue = value;
	/*
	 * Our copy is the old value: once the home applies the write, others
	 * read the new one while WRITTEN is still on its way here, and a hit
	 * on the old copy then would go back in time.  Reads meanwhile go to
	 * the home, behind the write.
	 */
	c->state = COH_INVALID;
	send(out, COH_M_WRITE, c->self, c->home, value);
	return 0;
}

int coh_cache_recv(struct coh_cache *c, const struct coh_msg *m, uint64_t *value,
		   struct coh_out *out)
{
	out->n = 0;
	if (m->from != c->home || m->to != c->self)
		return -EPROTO;
	switch (m->type) {
	case COH_M_DATA:
		if (!c->reading)
			return -EPROTO;
		c->reading = false;
		*value = m->value;
		/*
		 * A read sent before our write comes back with the old value:
		 * it answers the read but is no copy to keep (the write may
		 * be applied already).  After our WRITTEN, the copy stays the
		 * only one.
		 */
		if (c->writing)
			return 1;
		if (c->state != COH_C_EXCLUSIVE)
			c->state = COH_C_SHARED;
		c->value = m->value;
		return 1;
	case COH_M_WRITTEN:
		if (!c->writing || m->value != c->wvalue)
			return -EPROTO;
		c->writing = false;
		c->state = COH_C_EXCLUSIVE;
		c->value = m->value;
		*value = m->value;
		return 1;
	case COH_M_INVALIDATE:
		/*
		 * With a copy, or without one (a READ of ours waits at the
		 * home behind this write): the home waits for the answer.
		 */
		c->state = COH_INVALID;
		send(out, COH_M_ACK, c->self, c->home, 0);
		return 0;
	default:
		return -EPROTO;
	}
}
