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
 * Threads share a pool.  One lock guards the lists and the frames'
 * states; the tier is called without it, the frame it reads or writes
 * marked busy, so that FIXes of other pages go on meanwhile and a FIX of
 * that page waits for the I/O (and never reads it twice).  bm_fix() never
 * waits for another thread (it does its own miss's I/O): what cannot be
 * granted at once is -EBUSY.  bm_fix_wait() waits
 * for a conflicting fix to be dropped, an I/O to end, a frame to be
 * unfixed; while an exclusive FIX waits for a page's fixes to go, new
 * shared FIXes of it wait too (or are -EBUSY), so that readers cannot
 * starve a writer (writers that keep coming can starve readers); a
 * thread that holds a fix while it waits can deadlock with another
 * doing the same (as with any latch: fix in one order, or hold
 * one page at a time).  The tier's callbacks are called from every
 * thread that FIXes or flushes, for different pages at once, never for
 * one page twice at once.
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
	uint64_t discards;	/* bm_pool_discard()s that freed a frame */
	uint64_t to_am;		/* pages promoted from A1out's memory */
	uint64_t waits;		/* bm_fix_wait()s' waits (each wake-up) */
	uint64_t waiting;	/* bm_fix_wait()s waiting now */
};

struct bm_pool;

/* @frames >= 4, @page_size >= 1: 0, -EINVAL or -ENOMEM. */
int bm_pool_create(struct bm_pool **out, unsigned int frames, size_t page_size,
		   const struct bm_tier *tier);
void bm_pool_destroy(struct bm_pool *p);

/*
 * The page's frame, fixed: shared fixes of a page coexist, an exclusive
 * one excludes every other.  -EBUSY if the mode conflicts with the fixes
 * it has, its frame is busy with I/O, or every frame is fixed or busy;
 * the tier's error if a dirty victim could not be written (it stays in
 * its frame, dirty) or the page could not be read (it is in no frame; the
 * clean victim it was to replace is gone, its frame free): nothing lost.
 */
int bm_fix(struct bm_pool *p, uint64_t page, bool exclusive, void **frame);
/* The same, waiting where bm_fix() says -EBUSY (see above). */
int bm_fix_wait(struct bm_pool *p, uint64_t page, bool exclusive, void **frame);
/* -EINVAL if the page is not fixed; @dirty needs an exclusive fix. */
int bm_unfix(struct bm_pool *p, uint64_t page, bool dirty);
/*
 * Writes every dirty page back, unfixed or fixed shared: 0, the first
 * error, or -EBUSY once the others are written if a dirty page is fixed
 * exclusively (its bytes may be changing).
 */
int bm_flush(struct bm_pool *p);
/*
 * The page's contents are no longer valid (a copy invalidated by its
 * home): its frame is free, nothing written back, dirty or not, and the
 * page is not remembered in A1out (it did not leave for want of room).
 * 0, -ENOENT if it is in no frame, -EBUSY if it is fixed, waited for by
 * an exclusive FIX, or being read or written.
 */
int bm_pool_discard(struct bm_pool *p, uint64_t page);
void bm_pool_stats(struct bm_pool *p, struct bm_pool_stats *st);
/* Where a page is: 0 not in a frame, 1 in A1in, 2 in Am (for tests). */
int bm_pool_where(struct bm_pool *p, uint64_t page);

#endif
