/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * A client of mrrcd (and of memcached, over TCP): memcached's text
 * protocol over TCP or over the module's SEND/RECV (kvwire.h), and GET by
 * one-sided RDMA READs of the daemon's exported arena (reader.c), with the
 * recency metadata modes of Documentation/mrrcd.rst.  Synchronous, one
 * request at a time; functions return 0 or a negative errno.
 */
#ifndef MRRCD_KVCLIENT_H
#define MRRCD_KVCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvwire.h"
#include "reader.h"

enum kvc_transport { KVC_TCP, KVC_RDMA };

/* What a one-sided GET tells the daemon about the read. */
enum kvc_meta {
	KVC_META_NONE,		/* nothing: the daemon never learns of it */
	KVC_META_FAA,		/* one FETCH_AND_ADD of 1 per read (the paper) */
	KVC_META_SAMPLE,	/* one FETCH_AND_ADD of N per N reads, at random */
};

struct kvc_seg {
	uint64_t off, addr, len;	/* arena offset, remote address, bytes */
	uint32_t rkey;
	bool atomic;
};

struct kvc_stats {
	uint64_t oget_reads;	/* RDMA READs of one-sided GETs */
	uint64_t oget_atomics;	/* FETCH_AND_ADDs they posted */
	uint64_t oget_atomic_errors;	/* ... or could not: value returned */
	uint64_t oget_retries;	/* torn reads retried */
	uint64_t oget_at;	/* GETs done in one round trip where the key was */
	uint64_t oget_stale;	/* ... that found it gone: a full GET */
};

/*
 * Where one-sided GETs last found keys (by hash, direct-mapped): the next
 * GET of such a key reads that slot and the item in one round trip, and
 * falls back to the probe window when it has moved (mrrcd_remote_get_at()).
 */
#define KVC_LOC_SLOTS	4096u
struct kvc_loc {
	uint64_t hash, slot, off;	/* key hash, its slot, its item */
	uint32_t len;		/* 0: empty */
};

struct kvc {
	enum kvc_transport tr;
	bool dead;		/* the connection broke: every call fails */
	int sock;		/* TCP */
	int fd;			/* RDMA: /dev/mrrc */
	uint32_t conn;
	char *rbuf, *sbuf;	/* RECV and SEND buffers */
	uint8_t send_busy[KV_SEND_DEPTH];
	unsigned int sends_out;
	int wait_ms;		/* RDMA: how long a receive may take */
	char *in;		/* received, not yet consumed */
	size_t in_off, in_len, in_cap;
	/* The arena, as the banner described it (RDMA only). */
	struct kvc_seg seg[KV_MAX_SEGS];
	unsigned int nseg;
	uint64_t arena_size;
	struct mrrcd_remote rem;
	bool rem_ok;
	unsigned char *item;	/* one-sided GET buffer: hdr.item_max */
	uint64_t *atomic_buf;	/* FETCH_AND_ADD's result lands here */
	unsigned char *win;	/* one-sided READ staging */
	uint64_t seq;		/* wr_id of the READ being waited for */
	uint64_t tag;		/* the last rset's CRW tag */
	bool crw_pending;	/* its CRW has not completed yet */
	uint64_t crw_seq;	/* and its wr_id's sequence number */
	int crw_status;		/* how it completed */
	bool clock_due;		/* refresh the header's clock with next READ */
	enum kvc_meta meta;
	unsigned int sample;	/* KVC_META_SAMPLE: N */
	uint64_t rng;
	struct kvc_loc *loc;	/* KVC_LOC_SLOTS, NULL: hints off */
	struct kvc_stats st;
};

int kvc_connect_tcp(struct kvc *k, const char *host, unsigned int port);
/* dev NULL: the first RDMA device.  Reads the arena banner. */
int kvc_connect_rdma(struct kvc *k, const char *dev, const char *host,
		     unsigned int port);
void kvc_close(struct kvc *k);

/* mode: "set", "add", "replace", "append", "prepend". -EEXIST / -ENOENT
 * for NOT_STORED, -E2BIG, -EPROTO for anything unexpected. */
int kvc_store(struct kvc *k, const char *mode, const char *key,
	      const void *val, size_t len, uint32_t flags, uint32_t exptime);
/* Two-sided (or TCP) GET: *val points into k, valid until the next call. */
int kvc_get(struct kvc *k, const char *key, const char **val, size_t *len,
	    uint32_t *flags);
int kvc_delete(struct kvc *k, const char *key);
/*
 * set over FRRWP (RDMA only): the request line goes out and a CRW with a
 * fresh tag is posted at once; the daemon's STCRW lets the module write
 * the value straight into its buffer (no extra round trip, no copy in
 * the stream).  len from 1 byte; -EOPNOTSUPP over TCP.
 */
int kvc_rset(struct kvc *k, const char *key, const void *val, size_t len,
	     uint32_t flags, uint32_t exptime);
/*
 * One command line (without CRLF); in *reply the reply: its only line,
 * or for stats, get(s) and gat(s) its lines up to END, RESET or an error
 * line, value blocks included; the last line's CRLF replaced by a NUL.
 */
int kvc_command(struct kvc *k, const char *line, const char **reply,
		size_t *len);

/* Raw bytes into the request stream (over RDMA, one SEND per 64 KiB). */
int kvc_send(struct kvc *k, const void *p, size_t len);

/* One-sided GET; -ENOENT on a miss, -EOPNOTSUPP without an arena. */
int kvc_oget(struct kvc *k, const char *key, const char **val, size_t *len,
	     uint32_t *flags);
/* "none", "faa", "sample:N" (N from 2 to 65536); -EINVAL otherwise. */
int kvc_set_meta(struct kvc *k, const char *mode);
/* Remember where keys were found (the default once connected), or not. */
void kvc_set_hints(struct kvc *k, bool on);

#endif /* MRRCD_KVCLIENT_H */
