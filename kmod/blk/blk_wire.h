/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrrc_blk - what the block client and its memory server say to each other
 * when a queue connects (RDMA CM private data).  Nothing else crosses the
 * wire but one-sided RDMA READs and WRITEs.
 *
 * The server's memory is split into chunks of chunk_bytes, each one FRWR MR
 * with iova 0: device offset o lives in chunk o / chunk_bytes at remote
 * address o % chunk_bytes.  The chunks' rkeys are a table of __be32 the
 * client reads once, with one RDMA READ of table_len bytes at iova 0 of
 * table_rkey (a read-only MR).
 */
#ifndef _MRRC_BLK_WIRE_H
#define _MRRC_BLK_WIRE_H

#include <linux/types.h>

#define MRRC_BLK_MAGIC		0x6d72626bU	/* "mrbk" */
#define MRRC_BLK_WIRE_VERSION	1
#define MRRC_BLK_DEFAULT_PORT	7726

/* Chunks are at least this big: a client's request crosses one boundary. */
#define MRRC_BLK_MIN_CHUNK_BYTES	(128 * 1024)

/* Most chunks a server offers: the table fits one page. */
#define MRRC_BLK_MAX_CHUNKS	1024

/* Connect request: the client's queue. */
struct mrrc_blk_hello {
	__be32 magic;
	__be16 version;
	__be16 queue;
};

/* Accept: the device's geometry and where its key table is. */
struct mrrc_blk_welcome {
	__be32 magic;
	__be16 version;
	__be16 reserved;
	__be64 size;		/* bytes, a multiple of 4096 */
	__be32 chunk_bytes;	/* a power of two, >= 4096 */
	__be32 nchunks;		/* size / chunk_bytes, rounded up */
	__be32 table_rkey;
	__be32 table_len;	/* nchunks * 4 */
};

#endif /* _MRRC_BLK_WIRE_H */
