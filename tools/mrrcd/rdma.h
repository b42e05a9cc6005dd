/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrrcd's RDMA side (rdma.c): connections through /dev/mrrc that carry
 * memcached's text protocol in SENDs (kvwire.h), answered by the same
 * proto.c state machine as TCP, and the arena exported to each of them
 * for one-sided READs.  The event loop polls rdma_fd() and calls
 * rdma_service() when it is readable.
 */
#ifndef MRRCD_RDMA_H
#define MRRCD_RDMA_H

#include <stdint.h>

#include "proto.h"

#define RDMA_BUCKETS 256

struct rconn;

struct rdma_srv {
	int fd;			/* /dev/mrrc, -1 when RDMA is off */
	uint32_t lis;		/* the listener's id */
	struct mc_server *srv;
	struct store *store;
	struct rconn *bucket[RDMA_BUCKETS];	/* by the module's conn id */
	struct rconn *zombies;	/* destroyed, operations still to complete */
	unsigned int accepting;	/* accepted, not established: count in -c */
	uint64_t next_gen;	/* tells this connection's completions apart */
	/*
	 * The caller's lock over the store and srv, which rdma_service()
	 * is called under: dropped while the arena is exported (pinned)
	 * for a new connection, which touches neither.  NULL: no lock.
	 * rdma_service() is one thread's (the lock held once, not
	 * recursive), as is everything here.
	 */
	void (*unlock)(void *arg);
	void (*relock)(void *arg);
	void *lock_arg;
};

/*
 * Open /dev/mrrc, bind to dev (NULL: the first RDMA device) and listen on
 * addr:port.  0 or a negative errno, with the reason on stderr.
 */
int rdma_start(struct rdma_srv *r, struct mc_server *srv, struct store *st,
	       const char *dev, const char *addr, unsigned int port);
/* Harvest completions and events, answer what they bring (the caller's
 * lock held, see above; it is dropped and taken again inside). */
void rdma_service(struct rdma_srv *r);
/* Destroy every connection and close the file. */
void rdma_stop(struct rdma_srv *r);

#endif /* MRRCD_RDMA_H */
