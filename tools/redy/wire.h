/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a Redy memory server (redyd.c) and its clients (client.c) say to
 * each other over the module's connections (MRRC_IOC_CONNECT, SEND, RECV).
 * All fields are little-endian, as on the hosts that run this.
 *
 * The server offers one contiguous cache memory of `bytes` bytes and
 * listens on port P for one-sided connections and on P + 1 + i for the
 * two-sided connections of server thread i.  After ESTABLISHED it SENDs
 * a hello.  On a one-sided connection the hello names the memory's
 * segments as the module exported them for that connection only, READ
 * and WRITE (MRRC_IOC_EXPORT; revoked when the connection ends), and the
 * client moves data with RDMA READ and WRITE: the server's CPU does
 * nothing more.  On a two-sided connection the hello has no segment; the
 * client SENDs request batches and the server thread that owns the
 * connection executes them in order and SENDs one response batch for
 * each.  A server thread keeps REDY_DEPTH_MAX RECVs posted per
 * connection: a client never has more batches than that in flight.
 *
 * A batch that is not well formed (magic, sizes, counts) ends the
 * connection; a request outside the memory or of an unknown kind gets
 * -EINVAL in its response entry and touches nothing.  A server trusts
 * its clients as memcached does: any of them may read and write all of
 * the memory and make it PULL from any address it can reach.
 */
#ifndef MRRC_REDY_WIRE_H
#define MRRC_REDY_WIRE_H

#include <stdint.h>

#define REDY_MAGIC		0x59444552u	/* "REDY" */
#define REDY_VERSION		1u
#define REDY_MSG_BYTES		16384u	/* one SEND or RECV at most */
#define REDY_DEPTH_MAX		16u	/* batches in flight per connection */
#define REDY_BATCH_MAX		64u	/* requests per batch */
#define REDY_SEGS_MAX		8u	/* segments a hello names */
#define REDY_THREADS_MAX	16u	/* server threads */
#define REDY_DEFAULT_PORT	7730u

enum redy_op {
	REDY_OP_READ = 1,
	REDY_OP_WRITE = 2,
	REDY_OP_PULL = 3,	/* two-sided only: see struct redy_pull */
};

/*
 * REDY_OP_PULL: the server copies @len bytes from another memory server
 * (@addr, @port: its one-sided port) at @src_off into its own memory at
 * the request's @off, with RDMA READs (migration, redy-vldb2022 §6.2).
 * The request's data is this struct; the response has no data.  The
 * server thread that runs it serves nothing else meanwhile.  A batch
 * holds at most one PULL (a second makes the batch malformed).
 */
struct redy_pull {
	uint32_t addr;		/* IPv4, network order */
	uint16_t port;
	uint16_t pad;
	uint64_t src_off;
};

#define REDY_PULL_MAX		(256u << 20)	/* bytes per PULL request */

struct redy_seg {
	uint64_t off;		/* where in the cache memory it starts */
	uint64_t addr;		/* the address to use with @rkey */
	uint64_t len;
	uint32_t rkey;
	uint32_t pad;
};

struct redy_hello {
	uint32_t magic;
	uint32_t version;
	uint64_t bytes;		/* the cache memory's size */
	uint32_t threads;	/* server threads (two-sided ports) */
	uint32_t nsegs;		/* one-sided: segments that follow */
	struct redy_seg seg[];
};

/* A batch: header, count entries, then the WRITEs' data, each 8-aligned. */
struct redy_req_hdr {
	uint32_t magic;
	uint16_t count;
	uint16_t pad;
	uint64_t seq;		/* echoed in the response */
};

struct redy_req {
	uint8_t op;		/* enum redy_op */
	uint8_t pad[3];
	uint32_t len;
	uint64_t off;
};

/* A response: header, count entries, then the READs' data, 8-aligned. */
struct redy_rsp_hdr {
	uint32_t magic;
	uint16_t count;
	uint16_t pad;
	uint64_t seq;
};

struct redy_rsp {
	int32_t status;		/* 0 or a negative errno */
	uint32_t len;		/* READ: bytes of data that follow */
};

static inline uint32_t redy_align8(uint32_t n)
{
	return (n + 7u) & ~7u;
}

#endif
