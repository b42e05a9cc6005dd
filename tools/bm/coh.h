/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The coherence protocol of the distributed buffer manager (issue 18,
 * papers/distributed-buffer-manager-coherence.txt §3.3, after GAM), as a
 * state machine with no transport: the home node of a page keeps its
 * directory entry and the page's memory; every node keeps a cache state
 * for the pages of others.  Writes go through to the home node (so home
 * memory always holds the last committed value and a read at the home
 * is always local, as the paper has it); remote copies are invalidated,
 * and every invalidation acknowledged, before a write is applied.
 *
 *  home     UNSHARED   no remote copy
 *           SHARED     read-only copies at the nodes of @sharers
 *           EXCLUSIVE  one remote copy, at @owner, its last writer's
 *  cache    INVALID, SHARED (a copy), EXCLUSIVE (the copy of the last
 *           write, known to be the only remote one)
 *
 * Messages between two nodes are delivered in order (one RC queue pair
 * per pair of nodes); a request that reaches a page whose write is still
 * collecting acknowledgements waits behind it, in arrival order.
 *
 * A step takes one event and says what to send (struct coh_out); it never
 * blocks.  Anything a peer could forge (an ack from a node that owes none,
 * a message for a state it cannot be in, a node number out of range) is
 * refused with -EPROTO and changes nothing.
 */
#ifndef MRRC_BM_COH_H
#define MRRC_BM_COH_H

#include <stdbool.h>
#include <stdint.h>

#define COH_NODES_MAX	32u
/*
 * Requests waiting at one page: a read and a write from each other node
 * (a node has at most one of each in flight per page: a second is a
 * forgery) and up to 64 of the home's own writes.
 */
#define COH_WAIT_MAX	(2 * (COH_NODES_MAX - 1) + 66)

enum coh_home_state { COH_UNSHARED, COH_SHARED, COH_EXCLUSIVE };
enum coh_cache_state { COH_INVALID, COH_C_SHARED, COH_C_EXCLUSIVE };

/* What travels between nodes (all about one page). */
enum coh_msg_type {
	COH_M_READ,		/* requester -> home */
	COH_M_WRITE,		/* requester -> home, with the value */
	COH_M_DATA,		/* home -> requester: the value (a read) */
	COH_M_WRITTEN,		/* home -> writer: applied (the value) */
	COH_M_INVALIDATE,	/* home -> holder of a copy */
	COH_M_ACK,		/* holder -> home: copy dropped */
	COH_M_TYPES
};

struct coh_msg {
	enum coh_msg_type type;
	unsigned int from, to;
	uint64_t value;
};

/*
 * What a step asks to be sent: an invalidation per node, or the answers
 * to every request that waited behind a write.
 */
struct coh_out {
	unsigned int n;
	struct coh_msg msg[COH_WAIT_MAX + COH_NODES_MAX + 1];
};

struct coh_req {
	bool write;
	unsigned int from;
	uint64_t value;
};

struct coh_home {
	unsigned int self, nodes;	/* this node; nodes 0 .. nodes-1 */
	enum coh_home_state state;
	uint32_t sharers;		/* SHARED: bit per node with a copy */
	unsigned int owner;		/* EXCLUSIVE */
	uint64_t value;			/* the page (its last committed value) */
	/* a write collecting acknowledgements */
	bool busy;
	struct coh_req cur;
	uint32_t acks_due;
	/* requests that came meanwhile, oldest first */
	struct coh_req wait[COH_WAIT_MAX];
	unsigned int nwait;
	uint32_t failed;		/* nodes gone (coh_home_node_failed) */
	unsigned long invalidations, refused;
};

struct coh_cache {
	unsigned int self, home;
	enum coh_cache_state state;
	uint64_t value;
	bool reading, writing;		/* a request to the home in flight */
	uint64_t wvalue;		/* what the write in flight writes */
};

void coh_home_init(struct coh_home *h, unsigned int self, unsigned int nodes,
		   uint64_t value);
void coh_cache_init(struct coh_cache *c, unsigned int self, unsigned int home);

/*
 * The home's side: a request from node @from (the home itself for a
 * local read or write) or an ACK.  A read it can answer at once: 1 and
 * *@value (a local read never waits: home memory is current).  Otherwise
 * 0 with messages in @out (COH_M_DATA / COH_M_WRITTEN to the requester,
 * to itself for a local write, when done).  -EPROTO for a forged or
 * impossible message (a node's second read or write of the page while
 * one waits), -EBUSY if COH_WAIT_MAX requests already wait (the home's
 * own: more than 64 local writes in flight).
 */
int coh_home_read(struct coh_home *h, unsigned int from, uint64_t *value,
		  struct coh_out *out);
int coh_home_write(struct coh_home *h, unsigned int from, uint64_t value,
		   struct coh_out *out);
int coh_home_ack(struct coh_home *h, unsigned int from, struct coh_out *out);

/*
 * A node's side for a page homed elsewhere.  coh_cache_read(): 1 and
 * *@value from the copy, or 0 with a READ for the home in @out.
 * coh_cache_write(): 0 with a WRITE for the home; the copy is dropped
 * (until WRITTEN, reads go to the home, which answers them after the
 * write).  -EBUSY if a request
 * of the same kind is in flight.  coh_cache_recv(): a message from the
 * home: DATA or WRITTEN (of the value written) completes the request (1,
 * the value), an INVALIDATE drops the copy and answers ACK (0); -EPROTO,
 * nothing changed, otherwise.
 */
int coh_cache_read(struct coh_cache *c, uint64_t *value, struct coh_out *out);
int coh_cache_write(struct coh_cache *c, uint64_t value, struct coh_out *out);
int coh_cache_recv(struct coh_cache *c, const struct coh_msg *m, uint64_t *value,
		   struct coh_out *out);

/*
 * Node @node is gone (its connection broke before it said it was done):
 * at a page homed here, its copy is gone with it (it leaves the sharers;
 * an exclusive page of its becomes unshared), the requests of it that
 * wait are dropped, and an acknowledgement it owes counts as given (a
 * write waiting only for it is applied, in @out).  Its own write under
 * way still applies: nobody is told, so it may or may not have taken
 * effect, as for any write whose writer died.  0, or -EINVAL for
 * ourselves or a node out of range.
 */
int coh_home_node_failed(struct coh_home *h, unsigned int node,
			 struct coh_out *out);
/*
 * The home of a page cached here is gone: the copy is dropped (nobody
 * can invalidate it any more, and nobody can write the page either: it
 * stays valid, but a page whose home is gone is not read here again) and
 * which of a read and a write were in flight is returned in *@reading and
 * *@writing: they will never complete.
 */
void coh_cache_home_failed(struct coh_cache *c, bool *reading, bool *writing);

/*
 * The node needs the copy's frame for another page: the copy is dropped,
 * without a message.  The home still counts this node as a sharer (or
 * the owner) and may send it an INVALIDATE, which is acknowledged as for
 * any copy; the next read asks the home again (which answers a read from
 * a node it counts already).  True if there was a copy.
 */
bool coh_cache_drop(struct coh_cache *c);

const char *coh_home_state_name(enum coh_home_state s);

#endif
