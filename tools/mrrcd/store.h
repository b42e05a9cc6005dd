/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrrcd's item store: the arena of layout.h plus the daemon's private
 * bookkeeping (which never lives in the arena: a remote peer with atomic
 * access to the index could change anything there but must not be able to
 * steer the daemon's own pointers).  Not thread-safe: mrrcd calls it under
 * one lock (mrrcd.c).  Functions return 0 or a negative errno.
 */
#ifndef MRRCD_STORE_H
#define MRRCD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"

/* What the daemon knows about a slot; the arena's copy is publication. */
struct slot_priv {
	uint64_t key_hash;
	uint64_t item_off;	/* 0: empty */
	uint64_t seen;		/* the slot's counter when last looked at */
	uint64_t last;		/* recency tick of the last access seen */
	uint32_t item_len;
	uint8_t ref;		/* CLOCK chances left: stored (1) or read (3) */
	uint8_t pinned;		/* being replaced: not to be evicted */
	uint8_t cls;		/* the item's size class (its counters) */
};

struct page_meta {
	int32_t class_id;	/* -1: free page */
	uint32_t nfree;		/* free chunks */
	uint32_t free_head;	/* first free chunk, NONE if full */
	uint32_t prev, next;	/* the class's pages, or the free pages */
	uint32_t pprev, pnext;	/* the class's pages with free chunks */
	bool in_partial;
};

/* A size class's counters (``stats items``); number is never reset. */
struct class_stats {
	uint64_t number;	/* items in the class */
	uint64_t total_items;	/* items stored in it */
	uint64_t evicted;	/* live items removed to make room */
	uint64_t evicted_nonzero;	/* of them, with an expiry time */
	uint32_t evicted_time;	/* the last one evicted: seconds stored */
	uint64_t reclaimed;	/* expired or flushed items removed (both) */
	uint64_t crawler_reclaimed;	/* of them, by store_crawl() */
	uint64_t outofmemory;	/* stores refused: no chunk to be had */
};

struct class_meta {
	uint32_t size;		/* chunk bytes */
	uint32_t per_page;	/* chunks in a page */
	uint32_t npages;
	uint32_t head;		/* the class's pages (round robin for steals) */
	uint32_t partial;	/* pages with a free chunk */
	uint32_t hand_page;	/* CLOCK hand: page and chunk */
	uint32_t hand_chunk;
	uint64_t evicted_since_grow;
	struct class_stats st;
};

struct store_stats {
	uint64_t curr_items;
	uint64_t total_items;
	uint64_t bytes;		/* item bytes: 64 + key + value each */
	uint64_t evictions;	/* live items removed to make room */
	uint64_t reclaimed;	/* expired items removed */
	uint64_t flushed;	/* items flush_all covered, reclaimed since */
	uint64_t page_moves;	/* slab pages given to another class */
	uint64_t crawler_checked;	/* items store_crawl() looked at */
	uint64_t crawler_reclaimed;	/* items it reclaimed */
};

struct store {
	unsigned char *arena;
	size_t arena_size;
	size_t limit;
	struct mrrcd_arena_hdr *hdr;
	struct mrrcd_slot *slots;
	uint64_t *counters;	/* access counters, one per slot (layout.h) */
	unsigned char *heap;
	uint32_t home_mask;
	uint32_t nslots;
	uint32_t npages;
	uint32_t nclasses;
	struct slot_priv *priv;
	struct page_meta *pages;
	struct class_meta classes[MRRCD_MAX_CLASSES];
	uint32_t free_pages;	/* list of free pages */
	uint32_t nfree_pages;
	uint64_t next_cas;
	uint64_t tick;		/* logical clock of recency */
	uint32_t now;		/* unix time, from store_clock() */
	/* flush_all, as published in the arena header (layout.h). */
	uint64_t oldest_cas;
	uint32_t oldest_live;
	bool flush_pending;	/* oldest_live not passed yet */
	uint32_t crawl_next;	/* the slot store_crawl() goes on from */
	struct store_stats st;
};

/* A stored item, pointing into the arena: valid until the next change. */
struct store_item {
	const char *key;
	size_t key_len;
	const char *value;
	size_t value_len;
	uint32_t flags;
	uint32_t exptime;
	uint64_t cas;
};

enum store_mode {
	STORE_SET,
	STORE_ADD,
	STORE_REPLACE,
	STORE_APPEND,
	STORE_PREPEND,
	STORE_CAS,
};

/* limit: bytes of the whole arena (index and heap); now: unix time. */
int store_init(struct store *s, size_t limit, uint32_t now);
void store_destroy(struct store *s);
/* Advance the clock (and a flush_all whose deadline it passes): O(1). */
void store_clock(struct store *s, uint32_t now);

/*
 * Look at the next `budget` slots (cyclically) and reclaim the items
 * there that have expired or that flush_all covers, which would otherwise
 * hold their memory until found by a lookup or by eviction.  Returns the
 * number reclaimed.  The daemon calls it every second.
 */
unsigned int store_crawl(struct store *s, uint32_t budget);
/* stats reset: every counter but those of what is stored now. */
void store_stats_reset(struct store *s);

/* Whether an item of this key and value length can ever be stored. */
bool store_fits(size_t key_len, size_t value_len);

int store_get(struct store *s, const char *key, size_t key_len,
	      struct store_item *it);
/* -EEXIST: add on a present key, or cas on another CAS value; -ENOENT:
 * replace, append, prepend or cas on a missing key; -E2BIG; -ENOMEM. */
int store_put(struct store *s, enum store_mode mode, const char *key,
	      size_t key_len, const void *data, size_t len, uint32_t flags,
	      uint32_t exptime, uint64_t cas, uint64_t *cas_out);
int store_delete(struct store *s, const char *key, size_t key_len);
/* -EINVAL: the value is not a decimal number that fits 64 bits. */
int store_incr(struct store *s, const char *key, size_t key_len, bool decr,
	       uint64_t delta, uint64_t *result);
/* New exptime; it may be NULL, else it gets the item (gat). */
int store_touch(struct store *s, const char *key, size_t key_len,
		uint32_t exptime, struct store_item *it);
/*
 * flush_all: everything stored before `when` goes when it comes; when <=
 * now: everything stored so far, at once.  O(1): it only records this
 * (memcached's oldest_live, oldest_cas); items it covers are invisible
 * from then on and reclaimed as they are found.  A later call replaces a
 * deadline that has not come yet.
 */
void store_flush(struct store *s, uint32_t when);

/* For tests and the later export: the arena offset of a key's slot. */
int64_t store_slot_of(struct store *s, const char *key, size_t key_len);

#endif /* MRRCD_STORE_H */
