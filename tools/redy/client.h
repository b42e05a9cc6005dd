/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The Redy client's connection to one memory server (wire.h): one
 * context (/dev/mrrc file) and one connection, used by one thread.  A
 * one-sided connection moves records with RDMA READ and WRITE into the
 * memory the server exported to it; a two-sided one sends request
 * batches to one server thread.  Local buffers are registered through
 * the module's registration cache (no handle in the operations).
 */
#ifndef MRRC_REDY_CLIENT_H
#define MRRC_REDY_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "wire.h"

struct redy_client {
	int fd;
	uint32_t conn;
	bool one_sided;
	uint64_t bytes;			/* the server's cache memory */
	unsigned int threads;		/* its server threads */
	unsigned int nsegs;
	struct redy_seg seg[REDY_SEGS_MAX];
	unsigned int depth;		/* batches in flight at most */
	uint8_t *rbuf, *sbuf;		/* depth slots of REDY_MSG_BYTES */
	uint64_t seq;
	int wait_ms;
	/* the batches in flight, per send slot, for checking responses */
	uint64_t sent_seq[REDY_DEPTH_MAX];
	unsigned int sent_n[REDY_DEPTH_MAX];
	struct redy_req sent[REDY_DEPTH_MAX][REDY_BATCH_MAX];
};

/*
 * Connects to the server at @addr:@port, to its one-sided port
 * (@thread < 0) or to server thread @thread, for up to @depth
 * (1 to REDY_DEPTH_MAX) batches in flight; @dev NULL: the first RDMA
 * device.  0, or a negative errno: -EPROTO for a server that does not
 * speak wire.h, -ETIMEDOUT if it did not answer in time.
 */
int redy_client_open(struct redy_client *c, const char *addr, uint16_t port,
		     int thread, unsigned int depth, const char *dev);
void redy_client_close(struct redy_client *c);

/*
 * One request, waited for: @op REDY_OP_READ or _WRITE of @len bytes at
 * @off of the server's memory.  0, -EINVAL (outside the memory, too
 * long for a message, not a READ or WRITE), or the error that broke the
 * connection.
 */
int redy_client_rw(struct redy_client *c, unsigned int op, uint64_t off,
		   void *buf, uint32_t len);

/* One request of redy_client_batch(). */
struct redy_io {
	uint8_t op;		/* enum redy_op */
	uint32_t len;
	uint64_t off;
	void *buf;		/* READ: where to; WRITE: from; PULL: a redy_pull */
	int status;		/* out: 0 or a negative errno */
};

/*
 * Runs @n requests, up to @b per batch (two-sided) and c->depth batches
 * (or one-sided operations) in flight, and waits for all.  Each request's
 * status is set (-EINVAL: outside the memory, too long, PULL one-sided).
 * 0, or the error that broke the connection (statuses then undefined):
 * operations may then still be in flight, and the only thing to do with
 * the connection is redy_client_close() (which ends them).
 */
int redy_client_batch(struct redy_client *c, struct redy_io *io,
		      unsigned int n, unsigned int b);

/*
 * REDY_OP_PULL: the server copies @len bytes at @src_off of the memory
 * server @src_addr:@src_port (its one-sided port) to @off of its own
 * memory.  Two-sided connections only.  0 or a negative errno.
 */
int redy_client_pull(struct redy_client *c, uint64_t off, uint32_t len,
		     const char *src_addr, uint16_t src_port, uint64_t src_off);

/*
 * Sends @len bytes of @buf as they are, as a batch (for tests of the
 * server's checks); waits for the SEND's completion.  0 or an errno.
 */
int redy_client_send_raw(struct redy_client *c, const void *buf, uint32_t len);

/* A closed-loop measurement of one configuration (redy_client_run()). */
struct redy_load {
	unsigned int batch;		/* requests per batch (1 if one-sided) */
	unsigned int depth;		/* batches in flight */
	uint32_t record;		/* bytes per request */
	unsigned int read_pct;		/* share of READs */
	uint64_t span;			/* offsets in [0, span), record-aligned */
	double seconds;
	unsigned int seed;
};

#define REDY_LAT_BUCKETS	64

struct redy_result {
	uint64_t ops;
	double lat_sum_ns;		/* over all requests */
	double seconds;
	uint64_t hist[REDY_LAT_BUCKETS];	/* log2(ns) buckets */
};

/*
 * Keeps @l->depth batches of @l->batch random requests in flight for
 * @l->seconds; each request's latency is its batch's round trip.
 * Results are added to @res.  0 or a negative errno.
 */
int redy_client_run(struct redy_client *c, const struct redy_load *l,
		    struct redy_result *res);

/* The latency below which @pct per cent of the requests completed. */
double redy_result_pct(const struct redy_result *res, double pct);

#endif
