// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of mrrcd's store (store.c) and of the one-sided reader
 * of its arena (reader.c): semantics, expiry, eviction under the memory
 * limit, recency fed by the slot counters, and torn-read detection with a
 * writer that runs between the pieces of a simulated RDMA READ.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hash.h"
#include "reader.h"
#include "store.h"

#define NOW 1000000u
#define MiB (1u << 20)

static int setup4(void **state)
{
	struct store *s = malloc(sizeof(*s));

	if (!s || store_init(s, 4 * MiB, NOW)) {
		free(s);
		return -1;
	}
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	store_destroy(*state);
	free(*state);
	return 0;
}

static int put(struct store *s, const char *k, const char *v)
{
	return store_put(s, STORE_SET, k, strlen(k), v, strlen(v), 0, 0, 0,
			 NULL);
}

static void assert_value(struct store *s, const char *k, const char *v)
{
	struct store_item it;

	assert_int_equal(store_get(s, k, strlen(k), &it), 0);
	assert_int_equal(it.value_len, strlen(v));
	assert_memory_equal(it.value, v, it.value_len);
}

static bool present(struct store *s, const char *k)
{
	struct store_item it;

	return store_get(s, k, strlen(k), &it) == 0;
}

static void test_hash_vectors(void **state)
{
	(void)state;
	/* XXH64 reference values (libxxhash 0.8). */
	assert_true(mrrcd_hash64("", 0, 0) == 0xef46db3751d8e999ULL);
	assert_true(mrrcd_hash64("a", 1, 0) == 0xd24ec4f1a98c6e5bULL);
	assert_true(mrrcd_hash64("abc", 3, 0) == 0x44bc2cf5ad770999ULL);
	assert_true(mrrcd_hash64("memcached", 9, 0) == 0xfe38957a99699ce8ULL);
	assert_true(mrrcd_hash64("0123456789abcdef0123456789abcdef01234567",
				 40, 0) == 0x2595bf45a790442ULL);
	assert_true(mrrcd_hash64("abc", 3, 1) == 0xbea9ca8199328908ULL);
}

static void test_layout(void **state)
{
	struct store *s = *state;
	const struct mrrcd_arena_hdr *h = s->hdr;

	assert_true(h->magic == MRRCD_ARENA_MAGIC);
	assert_int_equal(h->home_slots & (h->home_slots - 1), 0);
	assert_int_equal(h->nslots, h->home_slots + MRRCD_PROBE - 1);
	assert_int_equal(h->heap_off % 4096, 0);
	assert_int_equal(h->counters_off % 4096, 0);
	assert_true(h->index_off + (uint64_t)h->nslots * MRRCD_SLOT_SIZE <=
		    h->counters_off);
	assert_true(h->counters_off + (uint64_t)h->nslots * 8 <= h->heap_off);
	assert_true(h->heap_off + (uint64_t)h->npages * MRRCD_PAGE_SIZE <=
		    h->arena_size);
	assert_int_equal(h->arena_size, 4 * MiB);
	assert_int_equal(h->class_size[h->nclasses - 1], MRRCD_ITEM_MAX);
	assert_int_equal((uintptr_t)s->arena % 4096, 0);
	assert_int_equal(h->clock, NOW);
}

static void test_set_get_delete(void **state)
{
	struct store *s = *state;
	struct store_item it;
	uint64_t cas1, cas2;

	assert_int_equal(store_get(s, "k", 1, &it), -ENOENT);
	assert_int_equal(store_put(s, STORE_SET, "k", 1, "v1", 2, 42, 0, 0,
				   &cas1), 0);
	assert_int_equal(store_get(s, "k", 1, &it), 0);
	assert_int_equal(it.flags, 42);
	assert_true(it.cas == cas1);
	assert_int_equal(store_put(s, STORE_SET, "k", 1, "value2", 6,
				   UINT32_MAX, 0, 0, &cas2), 0);
	assert_true(cas2 > cas1);
	assert_value(s, "k", "value2");
	assert_int_equal(s->st.curr_items, 1);
	assert_int_equal(s->st.bytes, MRRCD_ITEM_HDR_SIZE + 1 + 6);
	assert_int_equal(store_delete(s, "k", 1), 0);
	assert_int_equal(store_delete(s, "k", 1), -ENOENT);
	assert_int_equal(s->st.curr_items, 0);
	assert_int_equal(s->st.bytes, 0);
	/* The empty value is a value. */
	assert_int_equal(put(s, "e", ""), 0);
	assert_value(s, "e", "");
}

static void test_modes(void **state)
{
	struct store *s = *state;
	struct store_item it;
	uint64_t cas;

	assert_int_equal(store_put(s, STORE_REPLACE, "a", 1, "x", 1, 0, 0, 0,
				   NULL), -ENOENT);
	assert_int_equal(store_put(s, STORE_APPEND, "a", 1, "x", 1, 0, 0, 0,
				   NULL), -ENOENT);
	assert_int_equal(store_put(s, STORE_ADD, "a", 1, "mid", 3, 7, 0, 0,
				   NULL), 0);
	assert_int_equal(store_put(s, STORE_ADD, "a", 1, "x", 1, 0, 0, 0,
				   NULL), -EEXIST);
	/* append and prepend keep the item's flags. */
	assert_int_equal(store_put(s, STORE_APPEND, "a", 1, ">>", 2, 9, 0, 0,
				   NULL), 0);
	assert_int_equal(store_put(s, STORE_PREPEND, "a", 1, "<<", 2, 9, 0, 0,
				   NULL), 0);
	assert_int_equal(store_get(s, "a", 1, &it), 0);
	assert_int_equal(it.flags, 7);
	assert_int_equal(it.value_len, 7);
	assert_memory_equal(it.value, "<<mid>>", 7);
	cas = it.cas;
	assert_int_equal(store_put(s, STORE_CAS, "a", 1, "c", 1, 0, 0,
				   cas + 1, NULL), -EEXIST);
	assert_int_equal(store_put(s, STORE_CAS, "a", 1, "c", 1, 0, 0, cas,
				   NULL), 0);
	assert_int_equal(store_put(s, STORE_CAS, "a", 1, "d", 1, 0, 0, cas,
				   NULL), -EEXIST);
	assert_int_equal(store_put(s, STORE_CAS, "zz", 2, "d", 1, 0, 0, cas,
				   NULL), -ENOENT);
	assert_int_equal(store_put(s, STORE_REPLACE, "a", 1, "r", 1, 0, 0, 0,
				   NULL), 0);
	assert_value(s, "a", "r");
}

static void test_incr_decr(void **state)
{
	struct store *s = *state;
	uint64_t v;

	assert_int_equal(store_incr(s, "n", 1, false, 1, &v), -ENOENT);
	assert_int_equal(put(s, "n", "18446744073709551614"), 0);
	assert_int_equal(store_incr(s, "n", 1, false, 1, &v), 0);
	assert_true(v == UINT64_MAX);
	/* 64-bit wrap on incr, as memcached. */
	assert_int_equal(store_incr(s, "n", 1, false, 2, &v), 0);
	assert_true(v == 1);
	assert_value(s, "n", "1");
	/* decr stops at 0. */
	assert_int_equal(store_incr(s, "n", 1, true, 5, &v), 0);
	assert_true(v == 0);
	assert_int_equal(put(s, "n", "10"), 0);
	assert_int_equal(store_incr(s, "n", 1, true, 1, &v), 0);
	assert_value(s, "n", "9");
	/* Blanks around the digits are taken, as strtoull does. */
	assert_int_equal(put(s, "n", " 12 "), 0);
	assert_int_equal(store_incr(s, "n", 1, false, 1, &v), 0);
	assert_true(v == 13);
	assert_int_equal(put(s, "n", "12a"), 0);
	assert_int_equal(store_incr(s, "n", 1, false, 1, &v), -EINVAL);
	assert_int_equal(put(s, "n", "-1"), 0);
	assert_int_equal(store_incr(s, "n", 1, false, 1, &v), -EINVAL);
	assert_int_equal(put(s, "n", "18446744073709551616"), 0);
	assert_int_equal(store_incr(s, "n", 1, false, 1, &v), -EINVAL);
	assert_int_equal(put(s, "n", ""), 0);
	assert_int_equal(store_incr(s, "n", 1, false, 1, &v), -EINVAL);
}

static void test_expiry(void **state)
{
	struct store *s = *state;
	struct store_item it;

	assert_int_equal(store_put(s, STORE_SET, "t", 1, "v", 1, 0, NOW + 10,
				   0, NULL), 0);
	assert_int_equal(store_put(s, STORE_SET, "past", 4, "v", 1, 0, 1, 0,
				   NULL), 0);
	assert_false(present(s, "past"));
	store_clock(s, NOW + 9);
	assert_true(present(s, "t"));
	/* touch moves the deadline; gat-style touch returns the item. */
	assert_int_equal(store_touch(s, "t", 1, NOW + 20, &it), 0);
	assert_int_equal(it.exptime, NOW + 20);
	store_clock(s, NOW + 19);
	assert_true(present(s, "t"));
	store_clock(s, NOW + 20);
	assert_false(present(s, "t"));
	assert_int_equal(s->st.curr_items, 0);
	assert_int_equal(s->st.reclaimed, 2);
	/* Touched into the past: gone. */
	assert_int_equal(put(s, "u", "v"), 0);
	assert_int_equal(store_touch(s, "u", 1, 1, NULL), 0);
	assert_false(present(s, "u"));
	assert_int_equal(store_touch(s, "u", 1, 0, NULL), -ENOENT);
}

static void test_flush(void **state)
{
	struct store *s = *state;

	assert_int_equal(put(s, "a", "1"), 0);
	store_flush(s, 0);
	assert_false(present(s, "a"));
	assert_int_equal(s->st.flushed, 1);
	/* Delayed: whatever is stored before the deadline goes then. */
	assert_int_equal(put(s, "a", "1"), 0);
	store_flush(s, NOW + 5);
	store_clock(s, NOW + 3);
	assert_int_equal(put(s, "b", "2"), 0);
	assert_true(present(s, "a"));
	store_clock(s, NOW + 5);
	assert_false(present(s, "a"));
	assert_false(present(s, "b"));
	assert_int_equal(put(s, "c", "3"), 0);
	store_clock(s, NOW + 6);
	assert_true(present(s, "c"));
}

static int plain_read(void *ctx, uint64_t off, void *buf, size_t len);

/*
 * flush_all is O(1): it records when (memcached's oldest_live and
 * oldest_cas) and touches no slot; items it covers are invisible at once
 * to the daemon and to a one-sided reader, and reclaimed when found.
 */
static void test_flush_lazy(void **state)
{
	struct store *s = *state;
	char key[32], *buf = malloc(MRRCD_ITEM_MAX);
	const struct mrrcd_slot *sl;
	struct mrrcd_remote rem;
	struct mrrcd_remote_item it;
	uint64_t version, flushed;
	unsigned int i;
	int64_t off;

	assert_non_null(buf);
	assert_int_equal(mrrcd_remote_open(&rem, plain_read, s), 0);
	for (i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "f%u", i);
		assert_int_equal(put(s, key, key), 0);
	}
	off = store_slot_of(s, "f7", 2);
	assert_true(off > 0);
	sl = (const struct mrrcd_slot *)(s->arena + off);
	version = sl->version;
	assert_int_equal(mrrcd_remote_get(&rem, "f7", 2, buf, MRRCD_ITEM_MAX,
					  1, &it), 0);

	/* Many flushes walk nothing: no slot is rewritten, none reclaimed. */
	for (i = 0; i < 20000; i++)
		store_flush(s, 0);
	assert_int_equal(s->st.flushed, 0);
	assert_int_equal(s->st.curr_items, 1000);
	assert_true(sl->version == version && sl->item_off);
	/* ...yet the reader, with the header as published now, misses... */
	assert_int_equal(mrrcd_remote_clock(&rem), 0);
	assert_int_equal(mrrcd_remote_get(&rem, "f7", 2, buf, MRRCD_ITEM_MAX,
					  1, &it), -ENOENT);
	/* ...and so does the daemon, which reclaims what it finds. */
	assert_false(present(s, "f7"));
	assert_int_equal(s->st.flushed, 1);
	assert_int_equal(s->st.curr_items, 999);
	assert_true(sl->version != version && !sl->item_off);
	for (i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "f%u", i);
		assert_false(present(s, key));
		assert_int_equal(store_put(s, STORE_ADD, key, strlen(key), "a",
					   1, 0, 0, 0, NULL), 0);
	}
	assert_int_equal(s->st.flushed, 1000);
	/* Stored again in the same second as the flush: visible. */
	assert_value(s, "f7", "a");
	assert_int_equal(mrrcd_remote_get(&rem, "f7", 2, buf, MRRCD_ITEM_MAX,
					  1, &it), 0);
	assert_memory_equal(it.value, "a", 1);
	/* Unread flushed items make room like expired ones. */
	assert_int_equal(put(s, "x", "1"), 0);
	store_flush(s, 0);
	flushed = s->st.flushed;
	assert_int_equal(put(s, "x", "2"), 0);
	assert_value(s, "x", "2");
	assert_int_equal(s->st.flushed, flushed + 1);

	/* Delayed: items stored before the deadline go when it comes. */
	assert_int_equal(put(s, "d1", "1"), 0);
	store_flush(s, NOW + 10);
	store_clock(s, NOW + 9);
	assert_int_equal(put(s, "d2", "2"), 0);
	assert_int_equal(mrrcd_remote_clock(&rem), 0);
	assert_int_equal(mrrcd_remote_get(&rem, "d1", 2, buf, MRRCD_ITEM_MAX,
					  1, &it), 0);
	assert_true(present(s, "d1"));
	assert_true(present(s, "d2"));
	store_clock(s, NOW + 10);
	assert_int_equal(mrrcd_remote_clock(&rem), 0);
	assert_int_equal(mrrcd_remote_get(&rem, "d2", 2, buf, MRRCD_ITEM_MAX,
					  1, &it), -ENOENT);
	assert_int_equal(put(s, "d3", "3"), 0);
	assert_false(present(s, "d1"));
	assert_false(present(s, "d2"));
	assert_true(present(s, "d3"));
	/* A later delayed flush does not bring the flushed items back. */
	assert_int_equal(put(s, "d4", "4"), 0);
	store_flush(s, NOW + 100);
	store_clock(s, NOW + 11);
	assert_false(present(s, "x"));
	assert_true(present(s, "d3"));
	assert_true(present(s, "d4"));
	/* flush_all with no delay cancels a pending one, as memcached's. */
	store_flush(s, 0);
	assert_int_equal(put(s, "d5", "5"), 0);
	store_clock(s, NOW + 200);
	assert_false(present(s, "d4"));
	assert_true(present(s, "d5"));
	free(buf);
}

static void test_limits(void **state)
{
	struct store *s = *state;
	size_t max = MRRCD_ITEM_MAX - MRRCD_ITEM_HDR_SIZE - 3;
	char key[MRRCD_KEY_MAX + 1];
	char *big = malloc(max + 1);
	struct store_item it;

	assert_non_null(big);
	memset(big, 'b', max + 1);
	assert_true(store_fits(3, max));
	assert_false(store_fits(3, max + 1));
	assert_int_equal(store_put(s, STORE_SET, "big", 3, big, max + 1, 0, 0,
				   0, NULL), -E2BIG);
	assert_int_equal(store_put(s, STORE_SET, "big", 3, big, max, 0, 0, 0,
				   NULL), 0);
	assert_int_equal(store_get(s, "big", 3, &it), 0);
	assert_int_equal(it.value_len, max);
	assert_memory_equal(it.value, big, max);
	/* Appending past the item limit fails and keeps the old value. */
	assert_int_equal(store_put(s, STORE_APPEND, "big", 3, "x", 1, 0, 0, 0,
				   NULL), -E2BIG);
	assert_true(present(s, "big"));
	memset(key, 'k', sizeof(key));
	assert_int_equal(store_put(s, STORE_SET, key, MRRCD_KEY_MAX, "v", 1, 0,
				   0, 0, NULL), 0);
	assert_int_equal(store_put(s, STORE_SET, key, MRRCD_KEY_MAX + 1, "v",
				   1, 0, 0, 0, NULL), -E2BIG);
	free(big);
}

/* Fill a 4 MiB store far past its size: bounded, evicting, consistent. */
static void test_eviction_limit(void **state)
{
	struct store *s = *state;
	char key[32], val[1000];
	uint64_t *remote;
	unsigned int i, n = 20000;
	int64_t off;

	/* The same size as the fill: the same class, the same pressure. */
	memset(val, 'v', sizeof(val) - 1);
	val[sizeof(val) - 1] = 0;
	assert_int_equal(put(s, "hot", val), 0);
	assert_int_equal(put(s, "remote", val), 0);
	assert_int_equal(put(s, "cold", val), 0);
	off = store_slot_of(s, "remote", 6);
	assert_true(off > 0);
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "fill%u", i);
		assert_int_equal(store_put(s, STORE_SET, key, strlen(key), val,
					   sizeof(val), 0, 0, 0, NULL), 0);
		if (i % 8 == 0) {
			/* A local read, and what a remote FETCH_AND_ADD does. */
			assert_true(present(s, "hot"));
			remote = (uint64_t *)(s->arena +
					      mrrcd_counter_off(s->hdr, off));
			__atomic_fetch_add(remote, 1, __ATOMIC_RELAXED);
		}
		assert_true(s->st.bytes <= (uint64_t)s->npages * MRRCD_PAGE_SIZE);
	}
	assert_true(s->st.evictions > 0);
	assert_int_equal(s->st.curr_items + s->st.evictions, n + 3);
	assert_true(present(s, "hot"));
	assert_value(s, "remote", val);
	assert_false(present(s, "cold"));
	/* The latest items are there. */
	snprintf(key, sizeof(key), "fill%u", n - 1);
	assert_true(present(s, key));
}

/*
 * Item headers are read back from the heap; corrupted ones must not steer
 * a write or a copy out of bounds (ASan and valgrind runs check that).
 */
static void test_heap_header_bounds(void **state)
{
	struct store *s = *state;
	char key[32], val[1000], *large = malloc(300000);
	struct mrrcd_item *it;
	struct store_item v;
	unsigned int i;
	int64_t off;

	assert_non_null(large);
	memset(val, 'v', sizeof(val) - 1);
	val[sizeof(val) - 1] = 0;
	memset(large, 'L', 300000);
	assert_int_equal(put(s, "len", "value"), 0);
	assert_int_equal(put(s, "own", val), 0);
	off = store_slot_of(s, "len", 3);
	it = (struct mrrcd_item *)(s->arena +
				   ((struct mrrcd_slot *)(s->arena + off))->item_off);
	it->value_len = UINT32_MAX;
	assert_int_equal(store_get(s, "len", 3, &v), 0);
	assert_int_equal(v.value_len, 5);
	assert_memory_equal(v.value, "value", 5);
	/* An owning slot far out of the index: the CLOCK hand and page
	 * moves pass over the chunk without following it. */
	off = store_slot_of(s, "own", 3);
	it = (struct mrrcd_item *)(s->arena +
				   ((struct mrrcd_slot *)(s->arena + off))->item_off);
	it->slot = UINT32_MAX - 7;
	for (i = 0; i < 20000; i++) {
		snprintf(key, sizeof(key), "fill%u", i);
		assert_int_equal(put(s, key, val), 0);
	}
	assert_true(s->st.evictions > 0);
	for (i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "L%u", i);
		assert_int_equal(store_put(s, STORE_SET, key, strlen(key),
					   large, 300000, 0, 0, 0, NULL), 0);
		assert_true(present(s, key));
	}
	assert_true(s->st.page_moves > 0);
	assert_int_equal(put(s, "after", "ok"), 0);
	assert_value(s, "after", "ok");
	free(large);
}

/* Classes take pages from each other when the sizes people store change. */
/* The sum of a counter over the classes, which must equal the store's. */
static uint64_t class_sum(struct store *s, size_t field)
{
	uint64_t sum = 0;
	uint32_t c;

	for (c = 0; c < s->nclasses; c++)
		sum += *(uint64_t *)((char *)&s->classes[c].st + field);
	return sum;
}

#define CSUM(s, f) class_sum(s, offsetof(struct class_stats, f))

/* No class counts more items than its chunks (a wrapped count would). */
static void assert_classes_bounded(struct store *s)
{
	uint32_t c;

	for (c = 0; c < s->nclasses; c++)
		assert_true(s->classes[c].st.number <=
			    (uint64_t)s->classes[c].npages * s->classes[c].per_page);
}

/* The class of the chunk holding a key's item. */
static int class_of(struct store *s, const char *k)
{
	int64_t off = store_slot_of(s, k, strlen(k));
	uint64_t item;

	assert_true(off > 0);
	item = s->priv[(off - MRRCD_HDR_SIZE) / MRRCD_SLOT_SIZE].item_off;
	return s->pages[(item - (uint64_t)(s->heap - s->arena)) /
			MRRCD_PAGE_SIZE].class_id;
}

static void test_page_moves(void **state)
{
	struct store *s = *state;
	char key[32], small[1000];
	char *large = malloc(300000);
	unsigned int i;

	assert_non_null(large);
	memset(small, 's', sizeof(small));
	memset(large, 'L', 300000);
	for (i = 0; i < 20000; i++) {
		snprintf(key, sizeof(key), "s%u", i);
		assert_int_equal(store_put(s, STORE_SET, key, strlen(key),
					   small, sizeof(small), 0, 0, 0,
					   NULL), 0);
	}
	assert_int_equal(s->nfree_pages, 0);
	for (i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "L%u", i);
		assert_int_equal(store_put(s, STORE_SET, key, strlen(key),
					   large, 300000, 0, 0, 0, NULL), 0);
		assert_true(present(s, key));
	}
	assert_true(s->st.page_moves > 0);
	/* Items evicted by page moves are charged to their own class. */
	assert_int_equal(CSUM(s, number), s->st.curr_items);
	assert_int_equal(CSUM(s, evicted), s->st.evictions);
	assert_classes_bounded(s);
	free(large);
}

/*
 * Per-class counters follow items from class to class (a replacement of
 * another size), through eviction, deletion and expiry, and add up to the
 * store's.
 */
static void test_class_stats(void **state)
{
	struct store *s = *state;
	char key[32], val[1000];
	unsigned int i;
	int small, big;

	memset(val, 'v', sizeof(val));
	assert_int_equal(put(s, "k", "1"), 0);
	small = class_of(s, "k");
	assert_int_equal(s->classes[small].st.number, 1);
	/* The same key, a value of another class. */
	assert_int_equal(store_put(s, STORE_SET, "k", 1, val, sizeof(val), 0,
				   0, 0, NULL), 0);
	big = class_of(s, "k");
	assert_true(big > small);
	assert_int_equal(s->classes[small].st.number, 0);
	assert_int_equal(s->classes[big].st.number, 1);
	assert_int_equal(CSUM(s, number), 1);
	assert_int_equal(s->classes[small].st.total_items, 1);
	assert_int_equal(s->classes[big].st.total_items, 1);
	assert_int_equal(store_delete(s, "k", 1), 0);
	assert_int_equal(CSUM(s, number), 0);

	/* Fill past the limit: evictions, counted where they happen. */
	for (i = 0; i < 20000; i++) {
		snprintf(key, sizeof(key), "f%u", i);
		assert_int_equal(store_put(s, STORE_SET, key, strlen(key), val,
					   sizeof(val), 0, i % 2 ? NOW + 100 : 0,
					   0, NULL), 0);
	}
	assert_true(s->st.evictions > 0);
	assert_int_equal(CSUM(s, number), s->st.curr_items);
	assert_int_equal(CSUM(s, evicted), s->st.evictions);
	assert_classes_bounded(s);
	assert_true(CSUM(s, evicted_nonzero) > 0);
	assert_true(CSUM(s, evicted_nonzero) < CSUM(s, evicted));
	snprintf(key, sizeof(key), "f%u", i - 1);
	big = class_of(s, key);
	assert_int_equal(s->classes[big].st.evicted, s->st.evictions);
	assert_int_equal(s->classes[big].st.number, s->st.curr_items);
	/* stats reset: what is stored stays counted. */
	store_stats_reset(s);
	assert_int_equal(CSUM(s, evicted), 0);
	assert_int_equal(CSUM(s, number), s->st.curr_items);
	assert_true(s->st.curr_items > 0);
}

/*
 * The crawler reclaims expired and flushed items without any lookup, in
 * slices of the index, and nothing live.
 */
static void test_crawl(void **state)
{
	struct store *s = *state;
	char key[32];
	unsigned int i, n = 300, got = 0;
	uint64_t before;

	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "e%u", i);
		assert_int_equal(store_put(s, STORE_SET, key, strlen(key), "x",
					   1, 0, i % 3 ? NOW + 5 : 0, 0,
					   NULL), 0);
	}
	/* Nothing has expired yet: a whole sweep reclaims nothing. */
	assert_int_equal(store_crawl(s, s->nslots), 0);
	assert_int_equal(s->st.crawler_checked, n);
	store_clock(s, NOW + 5);
	/* Slices: a sweep in four, each slot looked at once. */
	before = s->st.crawler_checked;
	for (i = 0; i < 3; i++)
		got += store_crawl(s, s->nslots / 4);
	got += store_crawl(s, s->nslots - 3 * (s->nslots / 4));
	assert_int_equal(got, n - (n + 2) / 3);
	assert_int_equal(s->st.crawler_checked - before, n);
	assert_int_equal(s->st.curr_items, (n + 2) / 3);
	assert_int_equal(s->st.reclaimed, got);
	assert_int_equal(s->st.crawler_reclaimed, got);
	assert_int_equal(CSUM(s, crawler_reclaimed), got);
	assert_int_equal(CSUM(s, reclaimed), got);
	assert_int_equal(CSUM(s, number), (n + 2) / 3);
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "e%u", i);
		assert_true(present(s, key) == !(i % 3));
	}
	/* A flush_all: the rest goes too, and the memory is free again. */
	store_flush(s, 0);
	assert_int_equal(store_crawl(s, UINT32_MAX), (n + 2) / 3);
	assert_int_equal(s->st.curr_items, 0);
	assert_int_equal(s->st.bytes, 0);
	assert_int_equal(s->st.flushed, (n + 2) / 3);
	assert_int_equal(CSUM(s, number), 0);
	assert_int_equal(store_crawl(s, UINT32_MAX), 0);
}

/* Nine keys with one home slot: the ninth evicts the window's LRU. */
static void test_probe_window(void **state)
{
	struct store *s = *state;
	char keys[MRRCD_PROBE + 1][16];
	unsigned int n = 0, i;
	uint64_t home = UINT64_MAX;

	for (i = 0; n < MRRCD_PROBE + 1; i++) {
		char k[16];
		uint64_t h;

		snprintf(k, sizeof(k), "w%u", i);
		h = mrrcd_hash64(k, strlen(k), 0) & s->home_mask;
		if (home == UINT64_MAX)
			home = h;
		if (h == home)
			memcpy(keys[n++], k, sizeof(k));
	}
	for (i = 0; i < MRRCD_PROBE; i++)
		assert_int_equal(put(s, keys[i], "x"), 0);
	assert_true(present(s, keys[0]));	/* keys[1] is now the LRU */
	assert_int_equal(put(s, keys[MRRCD_PROBE], "x"), 0);
	assert_int_equal(s->st.evictions, 1);
	assert_true(present(s, keys[0]));
	assert_false(present(s, keys[1]));
	for (i = 2; i <= MRRCD_PROBE; i++)
		assert_true(present(s, keys[i]));
}

static uint64_t sum_of_slot(const struct mrrcd_slot *sl)
{
	return mrrcd_hash64(sl, MRRCD_SLOT_SUM_BYTES, 0);
}

static void test_slot_version_checksum(void **state)
{
	struct store *s = *state;
	const struct mrrcd_slot *sl;
	const struct mrrcd_item *it;
	uint64_t cas, v1;
	int64_t off;

	assert_int_equal(store_put(s, STORE_SET, "k", 1, "v", 1, 0, 0, 0,
				   &cas), 0);
	off = store_slot_of(s, "k", 1);
	assert_true(off >= (int64_t)MRRCD_HDR_SIZE);
	sl = (const struct mrrcd_slot *)(s->arena + off);
	assert_int_equal(sl->version & 1, 0);
	assert_true(sl->version == 2 * cas);
	assert_true(sl->checksum == sum_of_slot(sl));
	it = (const struct mrrcd_item *)(s->arena + sl->item_off);
	assert_true(it->version == sl->version);
	assert_true(it->hdr_sum == mrrcd_hash64(it, MRRCD_ITEM_SUM_BYTES, 0));
	assert_true(it->data_sum == mrrcd_hash64(it + 1, 2, 0));
	assert_true(sl->key_hash == mrrcd_hash64("k", 1, 0));
	/* Remote counter updates touch no slot: the counters are apart. */
	__atomic_fetch_add((uint64_t *)(s->arena + mrrcd_counter_off(s->hdr, off)),
			   5, __ATOMIC_RELAXED);
	assert_true(sl->checksum == sum_of_slot(sl));
	assert_true(s->hdr->counters_off >= (uint64_t)off + MRRCD_SLOT_SIZE);
	v1 = sl->version;
	assert_int_equal(put(s, "k", "w"), 0);
	assert_true(sl->version > v1);
	/* The old chunk was freed: its version no longer matches anyone. */
	assert_int_equal(store_delete(s, "k", 1), 0);
	assert_int_equal(sl->version & 1, 0);
	assert_true(sl->item_off == 0);
	assert_true(sl->checksum == sum_of_slot(sl));
}

/* ---- one-sided reads racing writes ------------------------------------- */

struct race {
	struct store *s;
	unsigned int seed;
	unsigned int budget;	/* writes still allowed in this GET */
	uint64_t seq;
	uint64_t writes;
};

/* A value that says which write it is: "<seq>:" then bytes from seq. */
static size_t make_value(uint64_t seq, char *buf)
{
	size_t len = 1 + (seq * 7919) % 3000, i;
	int n = snprintf(buf, 32, "%llu:", (unsigned long long)seq);

	for (i = (size_t)n; i < len; i++)
		buf[i] = (char)('a' + (seq + i) % 26);
	return len < (size_t)n ? (size_t)n : len;
}

static bool value_ok(const char *v, size_t len)
{
	char expect[3100], head[24];
	unsigned long long seq;
	size_t n = len < sizeof(head) - 1 ? len : sizeof(head) - 1;

	/* The value is not a C string: parse a terminated copy of its head. */
	memcpy(head, v, n);
	head[n] = 0;
	if (sscanf(head, "%llu:", &seq) != 1)
		return false;
	return make_value(seq, expect) == len && !memcmp(expect, v, len);
}

static void race_write(struct race *r)
{
	char val[3100];
	size_t len;

	switch (rand_r(&r->seed) % 8) {
	case 0:
		store_delete(r->s, "key", 3);
		break;
	case 1:
		/* Churn another key so that freed chunks get reused. */
		len = make_value(++r->seq, val);
		store_put(r->s, STORE_SET, "other", 5, val, len, 0, 0, 0, NULL);
		break;
	default:
		len = make_value(++r->seq, val);
		assert_int_equal(store_put(r->s, STORE_SET, "key", 3, val, len,
					   0, 0, 0, NULL), 0);
		break;
	}
	r->writes++;
}

/* An RDMA READ in random pieces, with the writer running between them. */
static int race_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct race *r = ctx;
	size_t done = 0;

	assert_true(off + len <= r->s->arena_size);
	while (done < len) {
		size_t n = 1 + (size_t)rand_r(&r->seed) % (len - done);

		memcpy((char *)buf + done, r->s->arena + off + done, n);
		done += n;
		if (r->budget && rand_r(&r->seed) % 3 == 0) {
			r->budget--;
			race_write(r);
		}
	}
	return 0;
}

static void test_torn_reads_detected(void **state)
{
	struct store *s = *state;
	struct race r = { .s = s, .seed = 1 };
	struct mrrcd_remote rem;
	struct mrrcd_remote_item it;
	unsigned int i, hits = 0, misses = 0;
	char *buf = malloc(MRRCD_ITEM_MAX);

	assert_non_null(buf);
	assert_int_equal(mrrcd_remote_open(&rem, race_read, &r), 0);
	for (i = 0; i < 20000; i++) {
		int err;

		r.budget = 3;
		err = mrrcd_remote_get(&rem, "key", 3, buf, MRRCD_ITEM_MAX,
				       100, &it);
		if (err == -ENOENT) {
			misses++;
			continue;
		}
		assert_int_equal(err, 0);
		assert_true(value_ok(it.value, it.value_len));
		hits++;
	}
	/* Both outcomes happened, and races were caught, not returned. */
	assert_true(hits > 1000);
	assert_true(misses > 0);
	assert_true(rem.retries > 100);
	assert_true(r.writes > 10000);
	free(buf);
}

/*
 * The torture test of issue 15: one-sided GETs racing SETs of the same
 * keys for real, a writer thread against a reader thread, each on its
 * own core.  The reader's READ is a memcpy() from the arena while the
 * writer changes it, which is what a NIC's DMA read of exported memory
 * sees; nothing orders the two but the store's own protocol (versions
 * and checksums).  Every value a GET returns is checked by content: it
 * must be one whole value that was written to that key.
 */
#define TORTURE_KEYS 16

struct torture {
	struct store *s;
	volatile int stop;	/* the reader is done */
	uint64_t writes;
	uint64_t bad_reads;	/* reads outside the arena */
};

/* "<key>/<seq>:" then bytes that follow from both; 1 to 3000 bytes. */
static size_t torture_value(unsigned int key, uint64_t seq, char *buf)
{
	size_t len = 1 + (seq * 7919 + key * 131) % 3000, i;
	int n = snprintf(buf, 40, "%u/%llu:", key, (unsigned long long)seq);

	for (i = (size_t)n; i < len; i++)
		buf[i] = (char)('a' + (seq + key + i) % 26);
	return len < (size_t)n ? (size_t)n : len;
}

static bool torture_value_ok(unsigned int key, const char *v, size_t len)
{
	char expect[3100], head[40];
	unsigned long long seq;
	size_t n = len < sizeof(head) - 1 ? len : sizeof(head) - 1;
	unsigned int k;

	memcpy(head, v, n);
	head[n] = 0;
	if (sscanf(head, "%u/%llu:", &k, &seq) != 2 || k != key)
		return false;
	return torture_value(key, seq, expect) == len &&
	       !memcmp(expect, v, len);
}

static void torture_key(unsigned int k, char *name)
{
	snprintf(name, 16, "key%u", k);
}

static void *torture_writer(void *arg)
{
	struct torture *t = arg;
	unsigned int seed = 7, k;
	uint64_t seq = 0;
	char val[3100], name[16];
	size_t len;

	while (!t->stop) {
		k = rand_r(&seed) % TORTURE_KEYS;
		torture_key(k, name);
		switch (rand_r(&seed) % 16) {
		case 0:
			store_delete(t->s, name, strlen(name));
			break;
		case 1:
			/* Another key, so that freed chunks are reused. */
			len = torture_value(TORTURE_KEYS, ++seq, val);
			store_put(t->s, STORE_SET, "other", 5, val, len, 0, 0,
				  0, NULL);
			break;
		default:
			len = torture_value(k, ++seq, val);
			if (store_put(t->s, STORE_SET, name, strlen(name), val,
				      len, 0, 0, 0, NULL))
				return (void *)1;
			break;
		}
		t->writes++;
	}
	return NULL;
}

static int torture_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct torture *t = ctx;

	if (off > t->s->arena_size || len > t->s->arena_size - off) {
		t->bad_reads++;
		return -EFAULT;
	}
	memcpy(buf, t->s->arena + off, len);
	return 0;
}

static void test_torn_reads_racing_writer(void **state)
{
	const char *env = getenv("MRRCD_RACE_GETS");
	unsigned long gets = env ? strtoul(env, NULL, 10) : 1000000;
	struct store *s = malloc(sizeof(*s));
	struct torture t = { .s = s };
	unsigned long i, hits = 0, misses = 0, busy = 0;
	struct mrrcd_remote rem;
	struct mrrcd_remote_item it;
	unsigned int seed = 3, k;
	char *buf = malloc(MRRCD_ITEM_MAX), name[16];
	void *wret;
	pthread_t w;

	(void)state;
	assert_non_null(buf);
	assert_non_null(s);
	/* A page for every size class the values use: nothing is evicted. */
	assert_int_equal(store_init(s, 64 * MiB, NOW), 0);
	assert_int_equal(mrrcd_remote_open(&rem, torture_read, &t), 0);
	/*
	 * Every key there before the writer starts: where threads do not
	 * run at once (valgrind runs one at a time), GETs still find them.
	 */
	for (k = 0; k < TORTURE_KEYS; k++) {
		char val[3100];
		size_t len = torture_value(k, 0, val);

		torture_key(k, name);
		assert_int_equal(store_put(s, STORE_SET, name, strlen(name),
					   val, len, 0, 0, 0, NULL), 0);
	}
	assert_int_equal(pthread_create(&w, NULL, torture_writer, &t), 0);
	/* At least @gets; on, up to 5 x, until a few races were seen. */
	for (i = 0; i < gets || (rem.retries < 10 && i < 5 * gets); i++) {
		int err;

		k = rand_r(&seed) % TORTURE_KEYS;
		torture_key(k, name);
		err = mrrcd_remote_get(&rem, name, strlen(name), buf,
				       MRRCD_ITEM_MAX, 100, &it);
		if (err == -ENOENT) {
			misses++;
		} else if (err == -EAGAIN) {
			busy++;		/* torn 100 times in a row: no value */
		} else {
			assert_int_equal(err, 0);
			if (!torture_value_ok(k, it.value, it.value_len))
				fail_msg("GET %lu of %s returned a value that was never written to it (%zu bytes)",
					 i, name, it.value_len);
			hits++;
		}
	}
	t.stop = 1;
	assert_int_equal(pthread_join(w, &wret), 0);
	assert_null(wret);
	assert_true(t.bad_reads == 0);
	print_message("%lu racing GETs: %lu values checked, %lu misses, %lu given up, %llu torn reads retried; %llu writes\n",
		      i, hits, misses, busy, (unsigned long long)rem.retries,
		      (unsigned long long)t.writes);
	assert_true(hits > i / 2);
	/* A run long enough to race: the races were seen and retried. */
	if (gets >= 100000)
		assert_true(rem.retries > 0);
	store_destroy(s);
	free(s);
	free(buf);
}

static int plain_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct store *s = ctx;

	memcpy(buf, s->arena + off, len);
	return 0;
}

static void test_remote_reader(void **state)
{
	struct store *s = *state;
	struct mrrcd_remote rem;
	struct mrrcd_remote_item it;
	char *buf = malloc(MRRCD_ITEM_MAX);
	uint64_t cas;

	assert_non_null(buf);
	assert_int_equal(mrrcd_remote_open(&rem, plain_read, s), 0);
	assert_int_equal(store_put(s, STORE_SET, "k", 1, "hello", 5, 3, 0, 0,
				   &cas), 0);
	assert_int_equal(mrrcd_remote_get(&rem, "k", 1, buf, MRRCD_ITEM_MAX,
					  1, &it), 0);
	assert_int_equal(it.value_len, 5);
	assert_memory_equal(it.value, "hello", 5);
	assert_int_equal(it.flags, 3);
	assert_true(it.cas == cas);
	assert_true((int64_t)it.slot_off == store_slot_of(s, "k", 1));
	assert_int_equal(mrrcd_remote_get(&rem, "nope", 4, buf,
					  MRRCD_ITEM_MAX, 1, &it), -ENOENT);
	/* Expired by the daemon's published clock. */
	assert_int_equal(store_put(s, STORE_SET, "t", 1, "x", 1, 0, NOW + 1,
				   0, NULL), 0);
	assert_int_equal(mrrcd_remote_get(&rem, "t", 1, buf, MRRCD_ITEM_MAX,
					  1, &it), 0);
	store_clock(s, NOW + 1);
	assert_int_equal(mrrcd_remote_clock(&rem), 0);
	assert_int_equal(mrrcd_remote_get(&rem, "t", 1, buf, MRRCD_ITEM_MAX,
					  1, &it), -ENOENT);
	/* A slot caught odd (mid-write) is a retry, never a value. */
	{
		int64_t off = store_slot_of(s, "k", 1);
		uint64_t *ver = (uint64_t *)(s->arena + off);

		(*ver)++;
		assert_int_equal(mrrcd_remote_get(&rem, "k", 1, buf,
						  MRRCD_ITEM_MAX, 3, &it),
				 -EAGAIN);
		(*ver)--;
	}
	/* Not an arena: refused. */
	s->hdr->magic ^= 1;
	assert_int_equal(mrrcd_remote_open(&rem, plain_read, s), -EPROTO);
	s->hdr->magic ^= 1;
	/* Offsets whose sums would wrap: refused, not believed. */
	{
		uint64_t io = s->hdr->index_off, ho = s->hdr->heap_off;

		s->hdr->index_off = UINT64_MAX - 64;
		assert_int_equal(mrrcd_remote_open(&rem, plain_read, s),
				 -EPROTO);
		s->hdr->index_off = io;
		s->hdr->heap_off = UINT64_MAX - 4096;
		assert_int_equal(mrrcd_remote_open(&rem, plain_read, s),
				 -EPROTO);
		s->hdr->heap_off = ho;
		assert_int_equal(mrrcd_remote_open(&rem, plain_read, s), 0);
	}
	free(buf);
}

/*
 * A GET where the key was found last time: the slot and the item in one
 * round trip, right while the slot still names that item; anything else
 * (re-set, deleted, another key, mid-write, another length, a forged item
 * where a chunk once began) is -ESTALE, never an old or foreign value;
 * expired or flushed is a miss.
 */
#define GET_AT(key, so, io, il, blen) \
	mrrcd_remote_get_at(&rem, key, strlen(key), so, io, il, buf, blen, &at)

static void test_remote_get_at(void **state)
{
	struct store *s = *state;
	struct mrrcd_remote rem;
	struct mrrcd_remote_item it, at;
	char *buf = malloc(MRRCD_ITEM_MAX);
	uint64_t so, off, *ver;
	char saved[MRRCD_ITEM_HDR_SIZE + 6];
	struct mrrcd_item *fake;
	uint32_t len;

	assert_non_null(buf);
	assert_int_equal(mrrcd_remote_open(&rem, plain_read, s), 0);
	assert_int_equal(put(s, "k", "first"), 0);
	assert_int_equal(mrrcd_remote_get(&rem, "k", 1, buf, MRRCD_ITEM_MAX,
					  1, &it), 0);
	so = it.slot_off;
	off = it.item_off;
	len = it.item_len;
	assert_true(len == MRRCD_ITEM_HDR_SIZE + 1 + 5);
	assert_int_equal(GET_AT("k", so, off, len, MRRCD_ITEM_MAX), 0);
	assert_memory_equal(at.value, "first", 5);
	assert_true(at.slot_off == so && at.counter_off == it.counter_off);
	/* Another key's name at this place: not ours. */
	assert_int_equal(GET_AT("j", so, off, len, MRRCD_ITEM_MAX), -ESTALE);
	/* Caught mid-write (the header's sum no longer matches): retry. */
	ver = (uint64_t *)(s->arena + off);
	(*ver) += 2;
	assert_int_equal(GET_AT("k", so, off, len, MRRCD_ITEM_MAX), -ESTALE);
	(*ver) -= 2;
	/* Out of the heap or the index, or longer than the buffer. */
	assert_int_equal(GET_AT("k", so, 64, len, MRRCD_ITEM_MAX), -ESTALE);
	assert_int_equal(GET_AT("k", so + 1, off, len, MRRCD_ITEM_MAX),
			 -ESTALE);
	assert_int_equal(GET_AT("k", 0, off, len, MRRCD_ITEM_MAX), -ESTALE);
	assert_int_equal(GET_AT("k", so, off, len, len - 1), -ESTALE);
	/* Another length than the slot's: refused, not truncated. */
	assert_int_equal(GET_AT("k", so, off, len + 1, MRRCD_ITEM_MAX),
			 -ESTALE);
	/* Set again: the slot names the new chunk. */
	assert_int_equal(put(s, "k", "again"), 0);
	assert_int_equal(GET_AT("k", so, off, len, MRRCD_ITEM_MAX), -ESTALE);
	assert_int_equal(mrrcd_remote_get(&rem, "k", 1, buf, MRRCD_ITEM_MAX,
					  1, &it), 0);
	assert_memory_equal(it.value, "again", 5);
	/*
	 * A perfect forgery at the old place (as a client's value could
	 * hold where a chunk began before its page changed class): a live
	 * item of this key with valid sums.  The slot does not name it.
	 */
	fake = (struct mrrcd_item *)(s->arena + off);
	memcpy(saved, fake, len);
	memcpy(fake, s->arena + it.item_off, len);
	memcpy((char *)(fake + 1) + 1, "forge", 5);
	fake->version += 2;
	fake->data_sum = mrrcd_hash64(fake + 1, 1 + 5, MRRCD_HASH_SEED);
	fake->hdr_sum = mrrcd_hash64(fake, MRRCD_ITEM_SUM_BYTES,
				     MRRCD_HASH_SEED);
	assert_int_equal(GET_AT("k", so, off, len, MRRCD_ITEM_MAX), -ESTALE);
	memcpy(fake, saved, len);	/* the free chunk as it was */
	/* Flushed: a miss, as by the probe window. */
	off = it.item_off;
	len = it.item_len;
	so = it.slot_off;
	store_flush(s, 0);
	assert_int_equal(mrrcd_remote_clock(&rem), 0);
	assert_int_equal(GET_AT("k", so, off, len, MRRCD_ITEM_MAX), -ENOENT);
	/* Deleted: the slot is empty. */
	assert_int_equal(put(s, "d", "gone"), 0);
	assert_int_equal(mrrcd_remote_get(&rem, "d", 1, buf, MRRCD_ITEM_MAX,
					  1, &it), 0);
	assert_int_equal(store_delete(s, "d", 1), 0);
	assert_int_equal(GET_AT("d", it.slot_off, it.item_off, it.item_len,
				MRRCD_ITEM_MAX), -ESTALE);
	free(buf);
}

static void test_init_limits(void **state)
{
	struct store s;

	(void)state;
	assert_int_equal(store_init(&s, 1 * MiB, NOW), -EINVAL);
	assert_int_equal(store_init(&s, 2 * MiB, NOW), 0);
	assert_true(s.npages >= 1);
	assert_int_equal(put(&s, "k", "v"), 0);
	store_destroy(&s);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup4, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_vectors),
		T(test_layout),
		T(test_set_get_delete),
		T(test_modes),
		T(test_incr_decr),
		T(test_expiry),
		T(test_flush),
		T(test_flush_lazy),
		T(test_limits),
		T(test_eviction_limit),
		T(test_page_moves),
		T(test_class_stats),
		T(test_crawl),
		T(test_heap_header_bounds),
		T(test_probe_window),
		T(test_slot_version_checksum),
		T(test_torn_reads_detected),
		cmocka_unit_test(test_torn_reads_racing_writer),
		T(test_remote_reader),
		T(test_remote_get_at),
		cmocka_unit_test(test_init_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
