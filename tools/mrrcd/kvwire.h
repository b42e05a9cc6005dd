/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * mrrcd over RDMA: what the daemon (rdma.c) and its clients (kvclient.c)
 * agree on.  A connection is made with the module's RDMA CM wrappers
 * (MRRC_IOC_LISTEN/CONNECT); over it both sides use the module's SEND and
 * RECV, and the byte stream they carry is memcached's text protocol,
 * exactly as over TCP: a request may span SENDs, a SEND may hold several
 * requests, and replies are cut into SENDs the same way.
 *
 * The daemon's first bytes on a new connection are the arena banner,
 * before any reply:
 *
 *   MRRCD-ARENA <version> <arena_bytes> <nsegs>\r\n
 *   SEG <arena_off> <addr> <len> <rkey> <rights>\r\n     (nsegs times)
 *   END\r\n
 *
 * Each SEG is one exported range of the arena (layout.h), as the module
 * returned it from MRRC_IOC_EXPORT for this connection only (the heap is
 * exported in parts of at most 1 GiB, each a whole number of slab pages,
 * so that no item lies across two; at most KV_MAX_SEGS): <rights> is
 * "r" (remote READ: the header and index, the heap) or "ra" (READ and
 * atomics: the access counters, which a client may FETCH_AND_ADD).
 * Numbers are decimal.  The
 * keys are revoked when the connection ends.
 *
 * One command exists only here: "rset <key> <flags> <exptime> <bytes>
 * <tag> [noreply]", a set whose value is not in the stream: the client
 * posts a CRW of <bytes> with <tag> as it sends the line, the daemon an
 * STCRW with <tag> over a staging buffer (5 s deadline); the module
 * writes the value across (FRRWP), then the daemon stores it and answers
 * as for set ("SERVER_ERROR rset: ..." if the write never came).
 */
#ifndef MRRCD_KVWIRE_H
#define MRRCD_KVWIRE_H

#define KV_MSG_SIZE	(64u * 1024)	/* bytes of one SEND, one RECV */
#define KV_RECV_DEPTH	8u	/* RECVs each side keeps posted */
#define KV_SEND_DEPTH	8u	/* SENDs each side keeps in flight */
#define KV_BANNER	"MRRCD-ARENA"
#define KV_BANNER_VERSION 1u
#define KV_MAX_SEGS	64u	/* segments a banner may name */
#define KV_DEFAULT_PORT	11211u

#endif /* MRRCD_KVWIRE_H */
