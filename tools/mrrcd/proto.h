/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * memcached's text protocol, as a transport-free state machine: bytes go
 * into a connection's input buffer, mc_process() answers every complete
 * request into its output buffer.  The event loop (mrrcd.c) moves the
 * bytes; the unit tests (tests/test_proto.c) feed them directly.
 *
 * Bounds, per connection: a command line is at most MC_LINE_MAX bytes, a
 * retrieval line (get, gets, gat, gats) at most MC_GET_LINE_MAX; output
 * stops being produced above MC_OUT_HIGH (one value may overshoot it by an
 * item); a data block is staged in at most one item-sized buffer, and all
 * connections' staged blocks together stay under the server's budget.
 */
#ifndef MRRCD_PROTO_H
#define MRRCD_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "store.h"

#define MC_LINE_MAX	2048u
#define MC_GET_LINE_MAX	(64u * 1024)
#define MC_OUT_HIGH	(256u * 1024)
#define MC_STAGE_MAX	(64u * 1024 * 1024)
#define MC_LOG_MAX	(64u * 1024)	/* a connection's queued -v lines */
#define MC_VERSION	"1.6.0-mrrcd"	/* memcached's protocol, mrrcd's code */

struct mc_counters {
	uint64_t cmd_get, cmd_set, cmd_flush, cmd_touch;
	uint64_t get_hits, get_misses;
	uint64_t delete_hits, delete_misses;
	uint64_t incr_hits, incr_misses, decr_hits, decr_misses;
	uint64_t cas_hits, cas_misses, cas_badval;
	uint64_t touch_hits, touch_misses;
	uint64_t bytes_read, bytes_written;
	uint64_t curr_connections, total_connections, rejected_connections;
	uint64_t conn_structures;
	/* mrrcd's own: connections over RDMA (rdma.c) */
	uint64_t rdma_curr_connections, rdma_total_connections;
	uint64_t rdma_msgs_received, rdma_msgs_sent;
	uint64_t rdma_exports, rdma_export_failures;
	uint64_t rdma_rsets, rdma_rset_failures;
};

struct mc_settings {
	size_t maxbytes;
	unsigned int maxconns;
	unsigned int port;
	const char *inter;	/* -l, or NULL: every address */
	unsigned int threads;
};

/* What all connections share. */
struct mc_server {
	struct store *store;
	struct mc_settings set;
	struct mc_counters c;
	time_t started;
	int verbosity;
	size_t staged;		/* bytes of data blocks being received */
	FILE *log;		/* -v output, or NULL */
};

struct mc_buf {
	char *data;
	size_t off;		/* consumed from the front */
	size_t len;		/* end of valid bytes */
	size_t cap;
};

enum mc_state {
	MC_CMD,		/* waiting for a command line */
	MC_DATA,	/* receiving a storage command's data block */
	MC_SWALLOW,	/* dropping a data block that will not be stored */
	MC_GET,		/* answering a retrieval line, key by key */
	MC_RDMA,	/* rset: the value is being written by the peer */
	MC_CLOSE,	/* done: write what is queued, then close */
};

enum mc_result {
	MC_WANT_INPUT,	/* everything complete is answered */
	MC_BLOCKED,	/* output above MC_OUT_HIGH: drain it first */
	MC_DONE,	/* close once the output is written */
};

struct mc_store_req {
	enum store_mode mode;
	char key[MRRCD_KEY_MAX + 1];
	size_t key_len;
	uint32_t flags;
	uint32_t exptime;
	uint64_t cas;
	size_t need;		/* value bytes + 2 for the CRLF */
	size_t have;
	char *data;		/* staging buffer, need bytes */
};

struct mc_get_req {
	size_t line_len;	/* the line stays at in.data + in.off */
	size_t pos;		/* next key's offset in the line */
	size_t eol;		/* bytes to consume with the line: CRLF or LF */
	bool cas;		/* gets, gats: VALUE lines carry the CAS */
	bool touch;		/* gat, gats */
	uint32_t exptime;
};

struct mc_conn;

/*
 * rset over RDMA (rdma.c): expose buf for the peer's CRW with this tag;
 * 0 if it is under way (mc_rset_done() follows), else -errno.
 */
typedef int (*mc_rset_fn)(struct mc_conn *c, void *buf, size_t len,
			  uint64_t tag);

struct mc_conn {
	struct mc_server *srv;
	unsigned long id;
	mc_rset_fn rset;	/* NULL: rset is not offered (TCP) */
	void *xprt;		/* the transport's, for rset */
	struct mc_buf in, out;
	enum mc_state state;
	bool noreply;		/* of the request being answered */
	bool first_byte_seen;
	bool out_failed;	/* an allocation for output failed */
	/*
	 * log_later: -v lines are queued in logq (at most MC_LOG_MAX bytes,
	 * the rest counted in log_dropped) for mc_log_flush(), which the
	 * caller runs without its lock; else they go to srv->log at once.
	 */
	bool log_later;
	struct mc_buf logq;
	unsigned long log_dropped;
	uint64_t swallow;
	struct mc_store_req st;
	struct mc_get_req get;
};

void mc_conn_init(struct mc_conn *c, struct mc_server *srv, unsigned long id);
void mc_conn_free(struct mc_conn *c);
/* Write the -v lines queued (log_later) to srv->log. */
void mc_log_flush(struct mc_conn *c);

/* Where to read into, and how much; NULL if no room (or -ENOMEM). */
char *mc_in_space(struct mc_conn *c, size_t *room);
void mc_in_commit(struct mc_conn *c, size_t n);
/* Answer what the input holds. */
enum mc_result mc_process(struct mc_conn *c);

/* The output queued for the peer, and marking some of it written. */
static inline size_t mc_out_pending(const struct mc_conn *c)
{
	return c->out.len - c->out.off;
}

static inline const char *mc_out_data(const struct mc_conn *c)
{
	return c->out.data + c->out.off;
}

void mc_out_consume(struct mc_conn *c, size_t n);

/*
 * The peer's CRW for an rset ended: status 0 and len bytes written, or
 * the STCRW's error (timeout, cancel, flush).  Stores and answers.
 */
void mc_rset_done(struct mc_conn *c, int status, size_t len);

/* memcached's exptime: 0 never, <= 30 days relative, else absolute. */
uint32_t mc_exptime(int64_t e, uint32_t now);

#endif /* MRRCD_PROTO_H */
