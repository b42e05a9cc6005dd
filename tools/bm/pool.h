/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The buffer manager's frames (issue 18, §5 of the paper): FIX a page in
 * shared or exclusive mode, UNFIX it (dirty or not); a page not in a
 * frame is read from its tier (a callback: the local file, a remote
 * node's memory, ...), a dirty one written back when its frame is taken
 * or on flush.  Replacement is 2Q (Johnson and Shasha, VLDB 1994, "full"
 * version): a page seen once waits in a FIFO (A1in, a quarter of the
 * frames); one seen again while its id is remembered after leaving it
 * (A1out, ids of half as many pages as there are frames) goes to an LRU
 * (Am); a frame is taken from A1in's oldest page if A1in is over its
 * share, else from Am's least recently used; fixed frames are skipped.
 *
 * One thread uses a pool: nothing blocks; a FIX that cannot be granted
 * now says so (-EBUSY) and the caller retries after an UNFIX.
 */
#ifndef MRRC_BM_POOL_H
#define MRRC_BM_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bm_tier {
	/* 0 or a negative errno; @buf is the pool's page_size bytes */
	int (*read)(void *arg, uint64_t page, void *buf);
	int (*write)(void *arg, uint64_t page, const void *buf);
	void *arg;
};

struct bm_pool_stats {
	uint64_t hits, misses, evictions, writebacks;
	uint64_t to_am;		/* pages promoted from A1out's memory */
};

struct bm_pool;

/* @frames >= 4, @page_size >= 1: 0, -EINVAL or -ENOMEM. */
int bm_pool_create(struct bm_pool **out, unsigned int frames, size_t page_size,
		   const struct bm_tier *tier);
void bm_pool_destroy(struct bm_pool *p);

/*
 * The page's frame, fixed: shared fixes of a page coexist, an exclusive
 * one excludes every other.  -EBUSY if the mode conflicts with the fixes
 * it has, or every frame is fixed; the tier's error if the page could not
 * be read or a dirty victim not written (nothing changed then).
 */
int bm_fix(struct bm_pool *p, uint64_t page, bool exclusive, void **frame);
/* -EINVAL if the page is not fixed; @dirty needs an exclusive fix. */
int bm_unfix(struct bm_pool *p, uint64_t page, bool dirty);
/* Writes every dirty page back (fixed or not): 0 or the first error. */
int bm_flush(struct bm_pool *p);
void bm_pool_stats(const struct bm_pool *p, struct bm_pool_stats *st);
/* Where a page is: 0 not in a frame, 1 in A1in, 2 in Am (for tests). */
int bm_pool_where(const struct bm_pool *p, uint64_t page);

#endif
