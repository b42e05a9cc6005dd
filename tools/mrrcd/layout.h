/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * mrrcd's arena: the in-memory format of the item table, which is also the
 * format a remote client reads with one-sided RDMA READs.  Every field is
 * little-endian and fixed-size; offsets are from the start of the arena.
 * A client needs only this header and mrrcd_hash64() (hash.c, XXH64 with
 * seed MRRCD_HASH_SEED) to find and verify an item.
 *
 * The arena is one page-aligned mapping:
 *
 *   [0, 4096)                 struct mrrcd_arena_hdr
 *   [index_off, +nslots*64)   struct mrrcd_slot[home_slots + probe - 1]
 *   [counters_off, +nslots*8) uint64_t access counters, one per slot
 *   [heap_off, +npages*1MiB)  slab pages of item chunks (struct mrrcd_item)
 *
 * The counters are the only part a client may change (FETCH_AND_ADD: the
 * recency metadata of one-sided reads); they live apart from the slots so
 * that the index and the heap can be exported for READ only.
 *
 * Finding a key: h = hash64(key); home = h & (home_slots - 1); the key, if
 * present, is in one of the probe slots [home, home + probe), which are
 * contiguous (the table has probe - 1 tail slots instead of wrapping), so
 * one READ of probe * 64 bytes fetches the whole window.
 *
 * Consistency for readers that race writers: a slot is a seqlock (version
 * odd while the daemon rewrites it) and carries a checksum of itself; an
 * item block is never modified while published except for its header's
 * exptime (touch), and carries checksums of its header and of key+value.
 * Updates are out of place: a new chunk is written completely, then the
 * slot is switched to it, then the old chunk is freed (version 0).  A
 * reader accepts an item only if (see Documentation/mrrcd.rst):
 *
 *   slot.version is even and non-zero, slot.checksum matches,
 *   slot.item_off != 0, slot.key_hash == h,
 *   item.version == slot.version, item.hdr_sum and item.data_sum match,
 *   item.key == key, 64 + key_len + value_len == slot.item_len,
 *   item.exptime is 0 or later than hdr.clock,
 *   and flush_all has not covered the item (mrrcd_flushed() below);
 *
 * anything else on a slot whose key_hash matches means "torn: read again".
 * Versions are unique for the arena's lifetime (2 * a fresh CAS number), so
 * a chunk freed and reused for another item can never match a stale slot.
 */
#ifndef MRRCD_LAYOUT_H
#define MRRCD_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define MRRCD_ARENA_MAGIC	0x31564b444352524dULL	/* "MRRCDKV1" in memory */
#define MRRCD_LAYOUT_VERSION	3	/* 2: oldest_cas, oldest_live; 3: counters */
#define MRRCD_HDR_SIZE		4096u
#define MRRCD_SLOT_SIZE		64u
#define MRRCD_ITEM_HDR_SIZE	64u
#define MRRCD_PAGE_SIZE		(1u << 20)	/* one slab page */
#define MRRCD_ITEM_MAX		MRRCD_PAGE_SIZE	/* header + key + value */
#define MRRCD_KEY_MAX		250u
#define MRRCD_PROBE		8u		/* slots in a probe window */
#define MRRCD_MAX_CLASSES	64u
#define MRRCD_HASH_SEED		0ULL

/*
 * The fields are stored in the host's byte order, which must be
 * little-endian: the daemon refuses to build elsewhere rather than carry
 * conversions nobody tests.
 */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "mrrcd's arena format is little-endian"
#endif

/*
 * The first page of the arena; written once at start, then the clock every
 * second and the flush state (oldest_cas, oldest_live) at each flush_all.
 */
struct mrrcd_arena_hdr {
	uint64_t magic;		/* MRRCD_ARENA_MAGIC */
	uint32_t layout_version;	/* MRRCD_LAYOUT_VERSION */
	uint32_t hdr_size;	/* MRRCD_HDR_SIZE */
	uint64_t arena_size;	/* bytes of the whole arena */
	uint64_t index_off;	/* offset of slot 0 */
	uint32_t home_slots;	/* power of two: hash & (home_slots - 1) */
	uint32_t nslots;	/* home_slots + probe - 1 */
	uint32_t probe;		/* MRRCD_PROBE */
	uint32_t slot_size;	/* MRRCD_SLOT_SIZE */
	uint64_t heap_off;	/* offset of slab page 0 */
	uint32_t npages;	/* slab pages in the heap */
	uint32_t page_size;	/* MRRCD_PAGE_SIZE */
	uint32_t item_max;	/* MRRCD_ITEM_MAX */
	uint32_t nclasses;	/* entries of class_size[] in use */
	uint64_t hash_seed;	/* MRRCD_HASH_SEED */
	uint64_t clock;		/* the daemon's unix time, for exptime checks */
	/*
	 * flush_all, as memcached's settings of the same names, checked
	 * lazily by the daemon and by readers alike (mrrcd_flushed()): an
	 * item whose cas is below oldest_cas is gone (flush_all: the next
	 * CAS at the time); so is one stored at or before oldest_live once
	 * clock is past it (flush_all N: the deadline - 1, 0 if none).
	 * oldest_cas only grows: when the clock passes oldest_live the
	 * daemon raises it too, so that a later flush_all replacing
	 * oldest_live brings nothing back.  clock, oldest_cas and
	 * oldest_live are contiguous: one READ refreshes them.
	 */
	uint64_t oldest_cas;
	uint32_t oldest_live;
	uint32_t reserved0;
	uint64_t counters_off;	/* offset of the access counters, 8-aligned */
	uint64_t reserved[2];
	uint32_t class_size[MRRCD_MAX_CLASSES];	/* chunk bytes per class */
};

/*
 * One slot of the index: 64 bytes, one cache line.  Empty when item_off
 * is 0.  Its access counter is counters_off + 8 * (slot number).
 */
struct mrrcd_slot {
	uint64_t version;	/* seqlock: odd while written; 2 * CAS */
	uint64_t reserved2;	/* 0 (the access counter before version 3) */
	uint64_t key_hash;	/* hash64 of the key */
	uint64_t item_off;	/* arena offset of the item chunk, 0: empty */
	uint32_t item_len;	/* 64 + key_len + value_len */
	uint32_t reserved0;
	uint64_t reserved1[2];
	uint64_t checksum;	/* hash64 of bytes [0, 56) */
};

/*
 * The header of an item chunk, followed by key_len bytes of key and
 * value_len bytes of value (no CRLF).  A free chunk has version 0.
 */
struct mrrcd_item {
	uint64_t version;	/* the slot's version when published; 0: free */
	uint64_t cas;		/* memcached's CAS unique; version == 2 * cas */
	uint32_t flags;		/* memcached's client flags */
	uint32_t exptime;	/* absolute unix time, 0: never */
	uint32_t value_len;
	uint16_t key_len;
	uint8_t class_id;	/* size class of the chunk */
	uint8_t reserved0;
	uint32_t slot;		/* owning slot; next free chunk while free */
	uint32_t stored;	/* unix time of the store (flush_all) */
	uint64_t data_sum;	/* hash64 of key || value */
	uint64_t reserved1;
	uint64_t hdr_sum;	/* hash64 of bytes [0, 56) */
};

/*
 * Whether flush_all covers an item of this cas and store time, by a
 * header's oldest_cas, oldest_live and clock: the same rule for the daemon
 * and for remote readers.
 */
static inline int mrrcd_flushed(uint64_t cas, uint32_t stored,
				uint64_t oldest_cas, uint32_t oldest_live,
				uint64_t clock)
{
	return cas < oldest_cas ||
	       (oldest_live && clock > oldest_live && stored <= oldest_live);
}

/* The arena offset of the access counter of the slot at slot_off. */
static inline uint64_t mrrcd_counter_off(const struct mrrcd_arena_hdr *h,
					 uint64_t slot_off)
{
	return h->counters_off + (slot_off - h->index_off) / MRRCD_SLOT_SIZE * 8;
}

/* Header bytes of clock, oldest_cas and oldest_live: one READ refreshes them. */
#define MRRCD_HDR_CLOCK_OFF	offsetof(struct mrrcd_arena_hdr, clock)
#define MRRCD_HDR_CLOCK_LEN	(offsetof(struct mrrcd_arena_hdr, reserved0) - \
				 MRRCD_HDR_CLOCK_OFF)

#define MRRCD_SLOT_SUM_BYTES	offsetof(struct mrrcd_slot, checksum)
#define MRRCD_ITEM_SUM_BYTES	offsetof(struct mrrcd_item, hdr_sum)

_Static_assert(sizeof(struct mrrcd_arena_hdr) <= MRRCD_HDR_SIZE,
	       "arena header fits its page");
_Static_assert(offsetof(struct mrrcd_arena_hdr, clock) == 80,
	       "arena header layout");
_Static_assert(offsetof(struct mrrcd_arena_hdr, oldest_cas) == 88 &&
	       offsetof(struct mrrcd_arena_hdr, oldest_live) == 96 &&
	       offsetof(struct mrrcd_arena_hdr, reserved0) == 100,
	       "clock and flush state contiguous, read together");
_Static_assert(offsetof(struct mrrcd_arena_hdr, counters_off) == 104,
	       "arena header layout");
_Static_assert(offsetof(struct mrrcd_arena_hdr, class_size) == 128,
	       "arena header layout");
_Static_assert(offsetof(struct mrrcd_item, stored) == 36, "item layout");
_Static_assert(sizeof(struct mrrcd_slot) == MRRCD_SLOT_SIZE, "slot size");
_Static_assert(offsetof(struct mrrcd_slot, item_len) == 32, "slot layout");
_Static_assert(offsetof(struct mrrcd_slot, checksum) == 56, "slot layout");
_Static_assert(sizeof(struct mrrcd_item) == MRRCD_ITEM_HDR_SIZE,
	       "item header size");
_Static_assert(offsetof(struct mrrcd_item, key_len) == 28, "item layout");
_Static_assert(offsetof(struct mrrcd_item, slot) == 32, "item layout");
_Static_assert(offsetof(struct mrrcd_item, hdr_sum) == 56, "item layout");
_Static_assert((MRRCD_PROBE & (MRRCD_PROBE - 1)) == 0, "probe power of 2");

#endif /* MRRCD_LAYOUT_H */
