/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * The one-sided reader of the arena format (layout.h): what a client does
 * with RDMA READs to GET a key without the daemon's CPU.  The transport is
 * a callback, so the same code runs over RDMA later and over a local copy
 * (with a simulated racing writer) in the unit tests.
 */
#ifndef MRRCD_READER_H
#define MRRCD_READER_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"

/* Copy len bytes at arena offset off into buf: one RDMA READ.  0 or -errno. */
typedef int (*mrrcd_read_fn)(void *ctx, uint64_t off, void *buf, size_t len);

/* Several READs in one round trip, carried out in order. */
struct mrrcd_iov {
	uint64_t off;
	void *buf;
	size_t len;
};
typedef int (*mrrcd_readv_fn)(void *ctx, const struct mrrcd_iov *iov,
			      unsigned int n);

struct mrrcd_remote {
	mrrcd_read_fn read;
	mrrcd_readv_fn readv;	/* optional: else one read after another */
	void *ctx;
	struct mrrcd_arena_hdr hdr;	/* as read by mrrcd_remote_open() */
	uint64_t retries;		/* torn reads seen, in total */
	int err;			/* the last read's error, 0 if none */
};

struct mrrcd_remote_item {
	const char *value;	/* inside the caller's buffer */
	size_t value_len;
	uint32_t flags;
	uint64_t cas;
	uint64_t slot_off;	/* the item's slot */
	uint64_t counter_off;	/* its access counter: FETCH_AND_ADD here */
	uint64_t item_off;	/* where the item is: for mrrcd_remote_get_at() */
	uint32_t item_len;
};

/* Read and check the arena header; -EPROTO if it is not one. */
int mrrcd_remote_open(struct mrrcd_remote *r, mrrcd_read_fn read, void *ctx);
/* Re-read the header's clock and flush state (expiry and flush checks). */
int mrrcd_remote_clock(struct mrrcd_remote *r);
/*
 * GET key: 0 and *it on a hit, -ENOENT on a miss, -EAGAIN after max_tries
 * torn reads in a row, -EPROTO on a slot that is consistent but
 * impossible, a read's own error if one failed.  buf must hold
 * hdr.item_max bytes.
 */
int mrrcd_remote_get(struct mrrcd_remote *r, const char *key, size_t key_len,
		     void *buf, size_t buf_len, unsigned int max_tries,
		     struct mrrcd_remote_item *it);

/*
 * GET key from where an earlier GET found it (slot_off, item_off and
 * item_len of its mrrcd_remote_item): the slot and the item in one round
 * trip (readv).  0 and *it on a hit: the slot, consistent, still names
 * this item of this length and key hash, and the item carries the slot's
 * version, as on the two-READ path.  -ESTALE when not (moved, deleted,
 * evicted, caught mid-write: do a mrrcd_remote_get()); -ENOENT when the
 * item has expired or was flushed; a read's error.  Refresh the header's
 * clock in the same round trip for flush_all and expiry to be seen (see
 * kvclient.c).
 */
int mrrcd_remote_get_at(struct mrrcd_remote *r, const char *key,
			size_t key_len, uint64_t slot_off, uint64_t item_off,
			uint32_t item_len, void *buf, size_t buf_len,
			struct mrrcd_remote_item *it);

#endif /* MRRCD_READER_H */
