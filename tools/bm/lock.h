/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The distributed locks of the coherence protocol (issue 18, §3.4.3 of
 * the paper): one pre-defined lock node keeps, for every global address
 * (a page), who holds its lock and in which mode: shared (any number of
 * nodes, read-only) or exclusive (one node, which may write).  This is
 * the lock node's side, one entry per page, with no transport.
 *
 * A node has at most one request per page at the lock node, waiting or
 * granted (its own threads queue behind each other locally), so the
 * entry knows its holders by node.  Requests that cannot be granted wait
 * in arrival order and are granted in that order: a shared request does
 * not overtake an exclusive one that waits, so writers are not starved;
 * a release grants the waiting requests from the oldest on, as many as
 * are compatible (a run of shared ones, or one exclusive).  Anything a
 * peer could forge (a second request for a page, releasing a lock it
 * does not hold, a node out of range) is refused with -EPROTO and
 * changes nothing.
 */
#ifndef MRRC_BM_LOCK_H
#define MRRC_BM_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "coh.h"

#define LOCK_NOBODY	UINT32_MAX

enum lock_state { LOCK_UNLOCKED, LOCK_SHARED, LOCK_EXCLUSIVE };

struct lock_req {
	uint8_t node;
	bool excl;
};

struct lock_entry {
	uint32_t shared;		/* the nodes holding it shared */
	uint32_t excl;			/* the node holding it exclusive */
	struct lock_req wait[COH_NODES_MAX];	/* oldest first */
	unsigned int nwait;
};

/* The requests a step granted, in the order they were made. */
struct lock_out {
	unsigned int n;
	struct lock_req grant[COH_NODES_MAX];
};

void lock_init(struct lock_entry *e);
enum lock_state lock_state(const struct lock_entry *e);
/*
 * Node @node (of @nodes) asks for the lock, exclusive if @excl: 1 if it
 * is granted at once (and in @out), 0 if it waits, -EPROTO if the node
 * is out of range or already holds or waits for this lock.
 */
int lock_acquire(struct lock_entry *e, unsigned int nodes, unsigned int node,
		 bool excl, struct lock_out *out);
/*
 * Node @node releases the lock it holds: 0, with what that granted in
 * @out; -EPROTO if it holds none (waiting for it is not holding it).
 */
int lock_release(struct lock_entry *e, unsigned int nodes, unsigned int node,
		 struct lock_out *out);
/* Whether node @node holds the lock or waits for it. */
bool lock_involves(const struct lock_entry *e, unsigned int node);
/*
 * Node @node is gone: the lock it held is released and its waiting
 * request dropped, granting what that allows (@out).  1 if it held the
 * lock, else 0; -EPROTO for a node out of range.
 */
int lock_node_failed(struct lock_entry *e, unsigned int nodes,
		     unsigned int node, struct lock_out *out);

#endif
