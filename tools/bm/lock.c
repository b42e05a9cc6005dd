// SPDX-License-Identifier: GPL-2.0-only
/* The lock node's table: see lock.h. */
#include <errno.h>

#include "lock.h"

void lock_init(struct lock_entry *e)
{
	*e = (struct lock_entry){ .excl = LOCK_NOBODY };
}

enum lock_state lock_state(const struct lock_entry *e)
{
	if (e->excl != LOCK_NOBODY)
		return LOCK_EXCLUSIVE;
	return e->shared ? LOCK_SHARED : LOCK_UNLOCKED;
}

static bool holds(const struct lock_entry *e, unsigned int node)
{
	return e->excl == node || (e->shared & 1u << node);
}

static int waiting(const struct lock_entry *e, unsigned int node)
{
	unsigned int i;

	for (i = 0; i < e->nwait; i++)
		if (e->wait[i].node == node)
			return i;
	return -1;
}

bool lock_involves(const struct lock_entry *e, unsigned int node)
{
	return node < COH_NODES_MAX && (holds(e, node) || waiting(e, node) >= 0);
}

static bool compatible(const struct lock_entry *e, bool excl)
{
	return e->excl == LOCK_NOBODY && (!excl || !e->shared);
}

static void grant(struct lock_entry *e, unsigned int node, bool excl,
		  struct lock_out *out)
{
	if (excl)
		e->excl = node;
	else
		e->shared |= 1u << node;
	out->grant[out->n++] = (struct lock_req){ .node = node, .excl = excl };
}

/* The oldest waiting requests, as many as the lock now allows. */
static void grant_waiting(struct lock_entry *e, struct lock_out *out)
{
	unsigned int k = 0, i;

	while (k < e->nwait && compatible(e, e->wait[k].excl)) {
		grant(e, e->wait[k].node, e->wait[k].excl, out);
		k++;
	}
	for (i = k; i < e->nwait; i++)
		e->wait[i - k] = e->wait[i];
	e->nwait -= k;
}

int lock_acquire(struct lock_entry *e, unsigned int nodes, unsigned int node,
		 bool excl, struct lock_out *out)
{
	if (nodes > COH_NODES_MAX || node >= nodes || holds(e, node) ||
	    waiting(e, node) >= 0)
		return -EPROTO;
	/* behind anything that waits: first come, first served */
	if (!e->nwait && compatible(e, excl)) {
		grant(e, node, excl, out);
		return 1;
	}
	e->wait[e->nwait++] = (struct lock_req){ .node = node, .excl = excl };
	return 0;
}

static void drop(struct lock_entry *e, unsigned int node)
{
	if (e->excl == node)
		e->excl = LOCK_NOBODY;
	e->shared &= ~(1u << node);
}

int lock_release(struct lock_entry *e, unsigned int nodes, unsigned int node,
		 struct lock_out *out)
{
	if (nodes > COH_NODES_MAX || node >= nodes || !holds(e, node))
		return -EPROTO;
	drop(e, node);
	grant_waiting(e, out);
	return 0;
}

int lock_node_failed(struct lock_entry *e, unsigned int nodes,
		     unsigned int node, struct lock_out *out)
{
	int i, held;

	if (nodes > COH_NODES_MAX || node >= nodes)
		return -EPROTO;
	held = holds(e, node);
	drop(e, node);
	i = waiting(e, node);
	if (i >= 0) {
		for (; (unsigned int)i + 1 < e->nwait; i++)
			e->wait[i] = e->wait[i + 1];
		e->nwait--;
	}
	grant_waiting(e, out);
	return held;
}
