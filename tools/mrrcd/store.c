// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrcd's item store over the arena of layout.h.
 *
 * Memory: the arena is one anonymous mapping of exactly the -m limit;
 * slab pages are handed to size classes on demand and carved into chunks.
 * When a class has no free chunk and no page is free, a CLOCK hand over the
 * class's chunks evicts the first item not read since the hand last passed
 * (reads are counted in the slot's access counter, by the daemon and
 * by remote FETCH_AND_ADDs, so both feed eviction), or, when the class has
 * been evicting a page's worth while others hold more pages, a page is
 * taken from the class with the most pages and all its items evicted.
 *
 * The index is bounded linear probing: a key lives in one of the MRRCD_PROBE
 * slots from its home slot; a new key finding its window full evicts the
 * window's least recently used item.
 *
 * Publication order for readers that do not take part (one-sided RDMA):
 * chunks are written completely before a slot points at them; a slot is
 * rewritten under its seqlock; a chunk is marked free (version 0) only after
 * no slot points at it.  See layout.h for the reader's checks.
 *
 * flush_all is O(1), as memcached's: it records oldest_cas / oldest_live
 * (private, and published in the arena header for readers) and every
 * lookup treats an item they cover as gone; such items are reclaimed like
 * expired ones, when a lookup, a full probe window, the CLOCK hand or a
 * page move comes across them, or the crawler (store_crawl(), a slice of
 * the index a second) does.  No request walks the index.
 *
 * Trust: the heap is published (exported for READ only), so its headers
 * are the daemon's own writing; still, a field read back from it that
 * steers a write or a length (a chunk's owning slot, its free-list link,
 * its key and value lengths) is bound-checked against the daemon's
 * private bookkeeping, so that a corrupted header cannot become an
 * out-of-bounds access.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hash.h"
#include "store.h"

#define NONE UINT32_MAX
/* Index slots per byte of the limit: one 64-byte slot per 512 bytes. */
#define BYTES_PER_SLOT 512u
#define MIN_HOME_SLOTS 64u
#define MIN_CHUNK 96u
#define GROWTH_NUM 5u	/* chunk sizes grow by 5/4 */
#define GROWTH_DEN 4u

static struct mrrcd_item *chunk_at(struct store *s, uint64_t off)
{
	return (struct mrrcd_item *)(s->arena + off);
}

static uint64_t chunk_off(struct store *s, uint32_t page, uint32_t idx,
			  uint32_t size)
{
	uint64_t heap_off = (uint64_t)(s->heap - s->arena);

	return heap_off + (uint64_t)page * MRRCD_PAGE_SIZE +
	       (uint64_t)idx * size;
}

static uint32_t page_of(struct store *s, uint64_t off)
{
	return (uint32_t)((off - (uint64_t)(s->heap - s->arena)) /
			  MRRCD_PAGE_SIZE);
}

static bool expired(const struct store *s, const struct mrrcd_item *it)
{
	return it->exptime != 0 && it->exptime <= s->now;
}

static bool flushed(const struct store *s, const struct mrrcd_item *it)
{
	return mrrcd_flushed(it->cas, it->stored, s->oldest_cas,
			     s->oldest_live, s->now);
}

static uint64_t fresh_version(struct store *s)
{
	return 2 * s->next_cas++;
}

/* ---- the index: slots, seqlock publication --------------------------- */

static uint64_t slot_sum(const struct mrrcd_slot *sl)
{
	return mrrcd_hash64(sl, MRRCD_SLOT_SUM_BYTES, MRRCD_HASH_SEED);
}

/*
 * Rewrite a slot under its seqlock: odd version, fields, even version.  The
 * checksum is computed over the final contents so that a reader seeing an
 * even version with a matching checksum has a consistent slot.
 */
static void slot_publish(struct store *s, uint32_t idx, uint64_t key_hash,
			 uint64_t off, uint32_t len, uint64_t version)
{
	struct mrrcd_slot *sl = &s->slots[idx];
	struct mrrcd_slot next = {
		.version = version,
		.key_hash = key_hash,
		.item_off = off,
		.item_len = len,
	};

	next.checksum = slot_sum(&next);
	__atomic_store_n(&sl->version, version - 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	sl->reserved2 = 0;
	sl->key_hash = next.key_hash;
	sl->item_off = next.item_off;
	sl->item_len = next.item_len;
	sl->reserved0 = 0;
	sl->reserved1[0] = 0;
	sl->reserved1[1] = 0;
	sl->checksum = next.checksum;
	__atomic_store_n(&sl->version, version, __ATOMIC_RELEASE);
}

#define REF_READ 3	/* chances a read gives (slot_refresh()) */

static uint64_t slot_accesses(struct store *s, uint32_t idx)
{
	return __atomic_load_n(&s->counters[idx], __ATOMIC_RELAXED);
}

/*
 * Fold the slot's access counter into the daemon's recency, as the CLOCK
 * hand passes: true if the item has a chance left.  A store gives one
 * chance; a read (counted by the daemon or by a peer's FETCH_AND_ADD)
 * since the hand last passed gives REF_READ, so that an item read often
 * survives the sweep that finds every item referenced (the first
 * eviction after a fill, say) and the hand's next passes until it is
 * read again, where a single reference bit would evict it next.
 */
static bool slot_refresh(struct store *s, uint32_t idx)
{
	struct slot_priv *p = &s->priv[idx];
	uint64_t n = slot_accesses(s, idx);

	if (n != p->seen) {
		p->last = ++s->tick;
		p->ref = REF_READ;
	}
	p->seen = n;
	if (!p->ref)
		return false;
	p->ref--;
	return true;
}

/* ---- chunks and pages -------------------------------------------------- */

static void list_del(struct store *s, uint32_t *head, uint32_t pg)
{
	struct page_meta *p = &s->pages[pg];

	if (p->prev != NONE)
		s->pages[p->prev].next = p->next;
	else
		*head = p->next;
	if (p->next != NONE)
		s->pages[p->next].prev = p->prev;
	p->prev = p->next = NONE;
}

static void list_add_tail(struct store *s, uint32_t *head, uint32_t pg)
{
	struct page_meta *p = &s->pages[pg];
	uint32_t last = *head;

	p->next = NONE;
	if (last == NONE) {
		p->prev = NONE;
		*head = pg;
		return;
	}
	while (s->pages[last].next != NONE)
		last = s->pages[last].next;
	s->pages[last].next = pg;
	p->prev = last;
}

static void partial_add(struct store *s, struct class_meta *cm, uint32_t pg)
{
	struct page_meta *p = &s->pages[pg];

	if (p->in_partial)
		return;
	p->pprev = NONE;
	p->pnext = cm->partial;
	if (cm->partial != NONE)
		s->pages[cm->partial].pprev = pg;
	cm->partial = pg;
	p->in_partial = true;
}

static void partial_del(struct store *s, struct class_meta *cm, uint32_t pg)
{
	struct page_meta *p = &s->pages[pg];

	if (!p->in_partial)
		return;
	if (p->pprev != NONE)
		s->pages[p->pprev].pnext = p->pnext;
	else
		cm->partial = p->pnext;
	if (p->pnext != NONE)
		s->pages[p->pnext].pprev = p->pprev;
	p->pprev = p->pnext = NONE;
	p->in_partial = false;
}

static void chunk_free(struct store *s, uint64_t off)
{
	struct mrrcd_item *it = chunk_at(s, off);
	uint32_t pg = page_of(s, off);
	struct page_meta *p = &s->pages[pg];
	struct class_meta *cm = &s->classes[p->class_id];
	uint64_t rel = off - chunk_off(s, pg, 0, cm->size);

	/* Readers holding a stale slot see version 0 and retry. */
	__atomic_store_n(&it->version, 0, __ATOMIC_RELEASE);
	/* Never a link out of the page (see chunk_pop()): leak it instead. */
	if (rel % cm->size || rel / cm->size >= cm->per_page)
		return;
	it->slot = p->free_head;
	p->free_head = (uint32_t)(rel / cm->size);
	p->nfree++;
	partial_add(s, cm, pg);
}

/* Give a free page to a class: every chunk header is written as free. */
static void page_carve(struct store *s, uint32_t pg, uint32_t cls)
{
	struct class_meta *cm = &s->classes[cls];
	struct page_meta *p = &s->pages[pg];
	uint32_t i;

	for (i = 0; i < cm->per_page; i++) {
		uint64_t off = chunk_off(s, pg, i, cm->size);
		struct mrrcd_item *it = chunk_at(s, off);

		__atomic_store_n(&it->version, 0, __ATOMIC_RELEASE);
		it->slot = i + 1 < cm->per_page ? i + 1 : NONE;
	}
	p->class_id = (int32_t)cls;
	p->free_head = 0;
	p->nfree = cm->per_page;
	list_add_tail(s, &cm->head, pg);
	partial_add(s, cm, pg);
	cm->npages++;
	cm->evicted_since_grow = 0;
}

static uint64_t chunk_pop(struct store *s, uint32_t cls)
{
	struct class_meta *cm = &s->classes[cls];
	uint32_t pg = cm->partial;
	struct page_meta *p;
	struct mrrcd_item *it;
	uint64_t off;

	if (pg == NONE)
		return 0;
	p = &s->pages[pg];
	off = chunk_off(s, pg, p->free_head, cm->size);
	it = chunk_at(s, off);
	p->free_head = it->slot;
	/*
	 * The link to the next free chunk lives in the heap: one out of the
	 * page would make the next pop write outside it.  Should it ever be
	 * bad, the page's other free chunks are given up (until the page
	 * moves to another class and is carved again).
	 */
	if (--p->nfree == 0 || p->free_head >= cm->per_page) {
		p->nfree = 0;
		partial_del(s, cm, pg);
	}
	return off;
}

/* ---- unlinking items --------------------------------------------------- */

enum why { WHY_LIVE, WHY_DELETE, WHY_EVICT, WHY_EXPIRE, WHY_FLUSH };

/* Why an item is to be reclaimed when found (flush_all, expiry), if it is. */
static enum why gone(const struct store *s, const struct mrrcd_item *it)
{
	if (flushed(s, it))
		return WHY_FLUSH;
	return expired(s, it) ? WHY_EXPIRE : WHY_LIVE;
}

static void unlink_slot(struct store *s, uint32_t idx, enum why why)
{
	struct slot_priv *p = &s->priv[idx];
	uint64_t off = p->item_off;
	/* (the class as commit() recorded it, never the heap's word) */
	struct class_stats *cs = &s->classes[p->cls].st;
	const struct mrrcd_item *it = chunk_at(s, off);

	slot_publish(s, idx, 0, 0, 0, fresh_version(s));
	s->st.curr_items--;
	s->st.bytes -= p->item_len;
	cs->number--;
	if (why == WHY_EVICT) {
		s->st.evictions++;
		cs->evicted++;
		if (it->exptime)
			cs->evicted_nonzero++;
		cs->evicted_time = s->now > it->stored ? s->now - it->stored : 0;
	} else if (why == WHY_EXPIRE) {
		s->st.reclaimed++;
		cs->reclaimed++;
	} else if (why == WHY_FLUSH) {
		s->st.flushed++;
		cs->reclaimed++;
	}
	memset(p, 0, sizeof(*p));
	chunk_free(s, off);
}

/* ---- eviction ---------------------------------------------------------- */

/*
 * The slot owning the item in the chunk at off, if the chunk holds one:
 * its header's slot number is used only if it is a slot and that slot,
 * in the daemon's private copy, points back at this chunk.
 */
static bool chunk_owner(struct store *s, uint64_t off, uint32_t *idx)
{
	const struct mrrcd_item *it = chunk_at(s, off);

	if (!it->version || it->slot >= s->nslots ||
	    s->priv[it->slot].item_off != off)
		return false;
	*idx = it->slot;
	return true;
}

/* One step of a class's CLOCK hand; the chunk under it, or 0. */
static uint64_t hand_next(struct store *s, struct class_meta *cm)
{
	uint64_t off;

	if (cm->hand_page == NONE || s->pages[cm->hand_page].class_id < 0 ||
	    &s->classes[s->pages[cm->hand_page].class_id] != cm) {
		cm->hand_page = cm->head;
		cm->hand_chunk = 0;
	}
	if (cm->hand_page == NONE)
		return 0;
	off = chunk_off(s, cm->hand_page, cm->hand_chunk, cm->size);
	if (++cm->hand_chunk == cm->per_page) {
		cm->hand_chunk = 0;
		cm->hand_page = s->pages[cm->hand_page].next;
	}
	return off;
}

/* CLOCK over the class: free one chunk by evicting (or reclaiming) an item. */
static int clock_evict(struct store *s, uint32_t cls)
{
	struct class_meta *cm = &s->classes[cls];
	/* Every item can need REF_READ + 1 passes (slot_refresh()). */
	uint64_t budget = (REF_READ + 1ULL) * cm->npages * cm->per_page + 1;

	while (cm->npages && budget--) {
		uint64_t off = hand_next(s, cm);
		struct mrrcd_item *it;
		enum why why;
		uint32_t idx;

		if (!off)
			break;
		if (!chunk_owner(s, off, &idx))
			continue;
		it = chunk_at(s, off);
		if (s->priv[idx].pinned)
			continue;
		why = gone(s, it);
		if (why != WHY_LIVE) {
			unlink_slot(s, idx, why);
			return 0;
		}
		if (slot_refresh(s, idx))
			continue;
		unlink_slot(s, idx, WHY_EVICT);
		cm->evicted_since_grow++;
		return 0;
	}
	return -ENOMEM;
}

/* Empty one of victim's pages (none holding a pinned item) for cls. */
static int steal_from(struct store *s, uint32_t victim, uint32_t cls)
{
	struct class_meta *vm = &s->classes[victim];
	uint32_t pg, tries, i, idx;

	for (tries = 0; tries < vm->npages; tries++) {
		bool busy = false;

		pg = vm->head;
		/* Round robin: the page goes to the back either way. */
		list_del(s, &vm->head, pg);
		list_add_tail(s, &vm->head, pg);
		for (i = 0; i < vm->per_page && !busy; i++)
			busy = chunk_owner(s, chunk_off(s, pg, i, vm->size),
					   &idx) && s->priv[idx].pinned;
		if (busy)
			continue;
		for (i = 0; i < vm->per_page; i++) {
			uint64_t off = chunk_off(s, pg, i, vm->size);
			enum why why;

			if (!chunk_owner(s, off, &idx))
				continue;
			why = gone(s, chunk_at(s, off));
			unlink_slot(s, idx, why != WHY_LIVE ? why : WHY_EVICT);
		}
		partial_del(s, vm, pg);
		list_del(s, &vm->head, pg);
		vm->npages--;
		if (vm->hand_page == pg)
			vm->hand_page = NONE;
		s->st.page_moves++;
		page_carve(s, pg, cls);
		return 0;
	}
	return -ENOMEM;
}

/* Take a page from the class with the most, else from any other. */
static int steal_page(struct store *s, uint32_t cls)
{
	uint32_t victim = NONE, best = 0, c;

	for (c = 0; c < s->nclasses; c++) {
		if (c != cls && s->classes[c].npages > best) {
			best = s->classes[c].npages;
			victim = c;
		}
	}
	if (victim == NONE)
		return -ENOMEM;
	if (!steal_from(s, victim, cls))
		return 0;
	for (c = 0; c < s->nclasses; c++)
		if (c != cls && c != victim && s->classes[c].npages &&
		    !steal_from(s, c, cls))
			return 0;
	return -ENOMEM;
}

/*
 * Whether cls should grow at another class's expense instead of evicting
 * its own items: when it has no page, or has evicted a page's worth since
 * it last grew while some class holds more than one page more than it.
 */
static bool should_steal(struct store *s, uint32_t cls)
{
	struct class_meta *cm = &s->classes[cls];
	uint32_t c;

	if (!cm->npages)
		return true;
	if (cm->evicted_since_grow < cm->per_page)
		return false;
	for (c = 0; c < s->nclasses; c++)
		if (c != cls && s->classes[c].npages > cm->npages + 1)
			return true;
	return false;
}

static uint64_t chunk_alloc(struct store *s, uint32_t cls)
{
	uint64_t off = chunk_pop(s, cls);

	if (off)
		return off;
	if (s->free_pages != NONE) {
		uint32_t pg = s->free_pages;

		list_del(s, &s->free_pages, pg);
		s->nfree_pages--;
		page_carve(s, pg, cls);
		return chunk_pop(s, cls);
	}
	if (should_steal(s, cls) && !steal_page(s, cls))
		return chunk_pop(s, cls);
	if (!clock_evict(s, cls))
		return chunk_pop(s, cls);
	if (!steal_page(s, cls))
		return chunk_pop(s, cls);
	return 0;
}

static int class_for(struct store *s, size_t total)
{
	uint32_t c;

	for (c = 0; c < s->nclasses; c++)
		if (s->classes[c].size >= total)
			return (int)c;
	return -E2BIG;
}

/* ---- lookup ------------------------------------------------------------ */

static uint32_t home_of(struct store *s, uint64_t h)
{
	return (uint32_t)(h & s->home_mask);
}

/*
 * The slot holding key, or -ENOENT; expired and flushed items are
 * reclaimed here.  The key is compared within the item's length as the
 * daemon recorded it, whatever the heap's header says.
 */
static int64_t find(struct store *s, const char *key, size_t klen,
		    uint64_t h)
{
	uint32_t home = home_of(s, h), i;

	for (i = 0; i < MRRCD_PROBE; i++) {
		struct slot_priv *p = &s->priv[home + i];
		struct mrrcd_item *it;
		enum why why;

		if (!p->item_off || p->key_hash != h)
			continue;
		it = chunk_at(s, p->item_off);
		if (it->key_len != klen ||
		    MRRCD_ITEM_HDR_SIZE + klen > p->item_len ||
		    memcmp((const char *)(it + 1), key, klen))
			continue;
		why = gone(s, it);
		if (why != WHY_LIVE) {
			unlink_slot(s, home + i, why);
			return -ENOENT;
		}
		return home + i;
	}
	return -ENOENT;
}

/* A slot for a new key: an empty one, else the window's expired or LRU. */
static uint32_t pick_slot(struct store *s, uint64_t h)
{
	uint32_t home = home_of(s, h), i, victim = NONE;
	uint64_t oldest = UINT64_MAX;

	for (i = 0; i < MRRCD_PROBE; i++)
		if (!s->priv[home + i].item_off)
			return home + i;
	for (i = 0; i < MRRCD_PROBE; i++) {
		uint32_t idx = home + i;
		struct slot_priv *p = &s->priv[idx];
		enum why why;

		if (p->pinned)
			continue;
		why = gone(s, chunk_at(s, p->item_off));
		if (why != WHY_LIVE) {
			unlink_slot(s, idx, why);
			return idx;
		}
		slot_refresh(s, idx);
		if (p->last < oldest) {
			oldest = p->last;
			victim = idx;
		}
	}
	/* At most one slot is pinned and the window has more than one. */
	unlink_slot(s, victim, WHY_EVICT);
	return victim;
}

/*
 * The item of a slot.  Its lengths come from the heap's header but are
 * kept within the item's length as the daemon recorded it (they always
 * add up to it unless the header was corrupted), so that they never make
 * a copy run past the chunk.
 */
static void view(struct store *s, uint32_t idx, struct store_item *v)
{
	const struct slot_priv *p = &s->priv[idx];
	const struct mrrcd_item *it = chunk_at(s, p->item_off);
	size_t room = p->item_len - MRRCD_ITEM_HDR_SIZE;
	size_t klen = it->key_len < room ? it->key_len : room;

	v->key = (const char *)(it + 1);
	v->key_len = klen;
	v->value = v->key + klen;
	v->value_len = it->value_len < room - klen ? it->value_len :
		       room - klen;
	v->flags = it->flags;
	v->exptime = it->exptime;
	v->cas = it->cas;
}

/* ---- storing ----------------------------------------------------------- */

bool store_fits(size_t key_len, size_t value_len)
{
	return key_len <= MRRCD_KEY_MAX &&
	       value_len <= MRRCD_ITEM_MAX - MRRCD_ITEM_HDR_SIZE - key_len;
}

static void item_seal(struct mrrcd_item *it)
{
	it->hdr_sum = mrrcd_hash64(it, MRRCD_ITEM_SUM_BYTES, MRRCD_HASH_SEED);
}

/*
 * Store key with value a || b into a new chunk and point the key's slot
 * (old, or a new one when old < 0) at it.  a and b may point into the old
 * item, which is pinned so that making room does not evict it.
 */
static int commit(struct store *s, int64_t old, uint64_t h, const char *key,
		  size_t klen, const void *a, size_t alen, const void *b,
		  size_t blen, uint32_t flags, uint32_t exptime,
		  uint64_t *cas_out)
{
	size_t total = MRRCD_ITEM_HDR_SIZE + klen + alen + blen;
	struct mrrcd_item *it;
	struct slot_priv *p;
	uint64_t off, cas;
	int cls;
	uint32_t idx;

	if (!store_fits(klen, alen + blen))
		return -E2BIG;
	cls = class_for(s, total);
	if (cls < 0)
		return cls;
	if (old >= 0)
		s->priv[old].pinned = 1;
	off = chunk_alloc(s, (uint32_t)cls);
	if (old >= 0)
		s->priv[old].pinned = 0;
	if (!off) {
		s->classes[cls].st.outofmemory++;
		return -ENOMEM;
	}

	cas = s->next_cas++;
	it = chunk_at(s, off);
	memset(it, 0, sizeof(*it));
	it->cas = cas;
	it->flags = flags;
	it->exptime = exptime;
	it->value_len = (uint32_t)(alen + blen);
	it->key_len = (uint16_t)klen;
	it->class_id = (uint8_t)cls;
	it->stored = s->now;
	memcpy((char *)(it + 1), key, klen);
	if (alen)
		memcpy((char *)(it + 1) + klen, a, alen);
	if (blen)
		memcpy((char *)(it + 1) + klen + alen, b, blen);
	it->data_sum = mrrcd_hash64(it + 1, klen + alen + blen,
				    MRRCD_HASH_SEED);

	if (old >= 0) {
		uint64_t old_off = s->priv[old].item_off;

		idx = (uint32_t)old;
		s->st.bytes -= s->priv[idx].item_len;
		s->classes[s->priv[idx].cls].st.number--;
		it->slot = idx;
		it->version = 2 * cas;
		item_seal(it);
		slot_publish(s, idx, h, off, (uint32_t)total, 2 * cas);
		chunk_free(s, old_off);
	} else {
		idx = pick_slot(s, h);
		it->slot = idx;
		it->version = 2 * cas;
		item_seal(it);
		slot_publish(s, idx, h, off, (uint32_t)total, 2 * cas);
		s->st.curr_items++;
		p = &s->priv[idx];
		p->seen = slot_accesses(s, idx);
		p->ref = 0;	/* nothing of the slot's last item */
	}
	p = &s->priv[idx];
	p->key_hash = h;
	p->item_off = off;
	p->item_len = (uint32_t)total;
	if (!p->ref)
		p->ref = 1;
	p->last = ++s->tick;
	p->cls = (uint8_t)cls;
	s->st.bytes += total;
	s->st.total_items++;
	s->classes[cls].st.number++;
	s->classes[cls].st.total_items++;
	if (cas_out)
		*cas_out = cas;
	return 0;
}

int store_put(struct store *s, enum store_mode mode, const char *key,
	      size_t key_len, const void *data, size_t len, uint32_t flags,
	      uint32_t exptime, uint64_t cas, uint64_t *cas_out)
{
	uint64_t h;
	int64_t old;
	struct store_item v;

	if (!key_len || !store_fits(key_len, len))
		return key_len ? -E2BIG : -EINVAL;
	h = mrrcd_hash64(key, key_len, MRRCD_HASH_SEED);
	old = find(s, key, key_len, h);
	if (old >= 0)
		view(s, (uint32_t)old, &v);
	switch (mode) {
	case STORE_SET:
		break;
	case STORE_ADD:
		if (old >= 0) {
			/* memcached: a failed add counts as an access. */
			if (!s->priv[old].ref)
				s->priv[old].ref = 1;
			return -EEXIST;
		}
		break;
	case STORE_REPLACE:
		if (old < 0)
			return -ENOENT;
		break;
	case STORE_CAS:
		if (old < 0)
			return -ENOENT;
		if (v.cas != cas)
			return -EEXIST;
		break;
	case STORE_APPEND:
	case STORE_PREPEND:
		if (old < 0)
			return -ENOENT;
		/* The old item's flags and exptime stay. */
		if (mode == STORE_APPEND)
			return commit(s, old, h, key, key_len, v.value,
				      v.value_len, data, len, v.flags,
				      v.exptime, cas_out);
		return commit(s, old, h, key, key_len, data, len, v.value,
			      v.value_len, v.flags, v.exptime, cas_out);
	default:
		return -EINVAL;
	}
	return commit(s, old, h, key, key_len, data, len, NULL, 0, flags,
		      exptime, cas_out);
}

int store_get(struct store *s, const char *key, size_t key_len,
	      struct store_item *it)
{
	uint64_t h = mrrcd_hash64(key, key_len, MRRCD_HASH_SEED);
	int64_t idx = find(s, key, key_len, h);

	if (idx < 0)
		return (int)idx;
	/* The same counter a remote FETCH_AND_ADD bumps. */
	__atomic_fetch_add(&s->counters[idx], 1, __ATOMIC_RELAXED);
	view(s, (uint32_t)idx, it);
	return 0;
}

int store_delete(struct store *s, const char *key, size_t key_len)
{
	uint64_t h = mrrcd_hash64(key, key_len, MRRCD_HASH_SEED);
	int64_t idx = find(s, key, key_len, h);

	if (idx < 0)
		return (int)idx;
	unlink_slot(s, (uint32_t)idx, WHY_DELETE);
	return 0;
}

/*
 * memcached's notion of a number (strtoull's): optional leading white
 * space, digits that fit 64 bits, optional trailing white space (memcached
 * pads a shrinking decr result with blanks).
 */
static bool blank(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static int parse_counter(const char *p, size_t len, uint64_t *out)
{
	size_t i = 0, digits = 0;
	uint64_t v = 0;

	while (i < len && blank(p[i]))
		i++;
	for (; i < len && p[i] >= '0' && p[i] <= '9'; i++, digits++) {
		unsigned int d = (unsigned int)(p[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	while (i < len && blank(p[i]))
		i++;
	if (!digits || i != len)
		return -EINVAL;
	*out = v;
	return 0;
}

int store_incr(struct store *s, const char *key, size_t key_len, bool decr,
	       uint64_t delta, uint64_t *result)
{
	uint64_t h = mrrcd_hash64(key, key_len, MRRCD_HASH_SEED);
	int64_t idx = find(s, key, key_len, h);
	struct store_item v;
	char num[24];
	uint64_t n;
	int len, err;

	if (idx < 0)
		return (int)idx;
	view(s, (uint32_t)idx, &v);
	if (parse_counter(v.value, v.value_len, &n))
		return -EINVAL;
	if (decr)
		n = n < delta ? 0 : n - delta;
	else
		n += delta;	/* wraps at 2^64, as memcached's does */
	len = snprintf(num, sizeof(num), "%llu", (unsigned long long)n);
	err = commit(s, idx, h, key, key_len, num, (size_t)len, NULL, 0,
		     v.flags, v.exptime, NULL);
	if (err)
		return err;
	*result = n;
	return 0;
}

int store_touch(struct store *s, const char *key, size_t key_len,
		uint32_t exptime, struct store_item *v)
{
	uint64_t h = mrrcd_hash64(key, key_len, MRRCD_HASH_SEED);
	int64_t idx = find(s, key, key_len, h);
	struct mrrcd_item *it;

	if (idx < 0)
		return (int)idx;
	/*
	 * In place: a reader racing this sees either header whole or a
	 * header checksum that does not match, and reads again.
	 */
	it = chunk_at(s, s->priv[idx].item_off);
	it->exptime = exptime;
	item_seal(it);
	__atomic_fetch_add(&s->counters[idx], 1, __ATOMIC_RELAXED);
	if (v)
		view(s, (uint32_t)idx, v);
	if (expired(s, it)) {
		/* Touched into the past: gone, as a get would find it. */
		unlink_slot(s, (uint32_t)idx, WHY_EXPIRE);
		return v ? -ENOENT : 0;
	}
	return 0;
}

/* For readers: oldest_cas first, so that it never lags oldest_live. */
static void flush_publish(struct store *s)
{
	__atomic_store_n(&s->hdr->oldest_cas, s->oldest_cas, __ATOMIC_RELEASE);
	__atomic_store_n(&s->hdr->oldest_live, s->oldest_live,
			 __ATOMIC_RELEASE);
}

/*
 * O(1), as memcached's: record what is gone, touch no item.  Everything
 * stored so far has a lower CAS than the next one, which covers the items
 * stored in the current second before the flush and none stored after it.
 * A delay sets oldest_live to the deadline - 1: items stored at or before
 * it go once the clock passes it (memcached would take them a second
 * early).  Either replaces a deadline still to come.
 */
void store_flush(struct store *s, uint32_t when)
{
	if (when <= s->now || when == 1) {
		s->oldest_cas = s->next_cas;
		s->oldest_live = 0;
		s->flush_pending = false;
	} else {
		s->oldest_live = when - 1;
		s->flush_pending = true;
	}
	flush_publish(s);
}

void store_clock(struct store *s, uint32_t now)
{
	s->now = now;
	if (s->flush_pending && now > s->oldest_live) {
		/*
		 * The first clock past the deadline: every item there is
		 * was stored at or before oldest_live, so raising oldest_cas
		 * covers the same items, and keeps them covered when a later
		 * flush_all replaces oldest_live.
		 */
		s->oldest_cas = s->next_cas;
		s->flush_pending = false;
		flush_publish(s);
	}
	__atomic_store_n(&s->hdr->clock, (uint64_t)now, __ATOMIC_RELEASE);
}

unsigned int store_crawl(struct store *s, uint32_t budget)
{
	unsigned int reclaimed = 0;

	if (budget > s->nslots)
		budget = s->nslots;
	while (budget--) {
		uint32_t idx = s->crawl_next;
		const struct slot_priv *p = &s->priv[idx];
		const struct mrrcd_item *it;
		enum why why;

		if (++s->crawl_next == s->nslots)
			s->crawl_next = 0;
		if (!p->item_off || p->pinned)
			continue;
		/*
		 * Only an item that is where the slot says, in a page of its
		 * class, claiming the slot back (as chunk_owner() checks):
		 * nothing else is read as an expiry time or freed.
		 */
		it = chunk_at(s, p->item_off);
		if (s->pages[page_of(s, p->item_off)].class_id != p->cls ||
		    !it->version || it->slot != idx)
			continue;
		s->st.crawler_checked++;
		why = gone(s, it);
		if (why == WHY_LIVE)
			continue;
		s->classes[p->cls].st.crawler_reclaimed++;
		unlink_slot(s, idx, why);
		reclaimed++;
	}
	s->st.crawler_reclaimed += reclaimed;
	return reclaimed;
}

void store_stats_reset(struct store *s)
{
	uint32_t c;

	s->st = (struct store_stats){
		.curr_items = s->st.curr_items,
		.bytes = s->st.bytes,
	};
	for (c = 0; c < s->nclasses; c++)
		s->classes[c].st = (struct class_stats){
			.number = s->classes[c].st.number,
		};
}

int64_t store_slot_of(struct store *s, const char *key, size_t key_len)
{
	uint64_t h = mrrcd_hash64(key, key_len, MRRCD_HASH_SEED);
	int64_t idx = find(s, key, key_len, h);

	if (idx < 0)
		return idx;
	return (int64_t)((unsigned char *)&s->slots[idx] - s->arena);
}

/* ---- setup ------------------------------------------------------------- */

static void classes_init(struct store *s)
{
	uint32_t size = MIN_CHUNK, c;

	for (c = 0; c < MRRCD_MAX_CLASSES; c++) {
		struct class_meta *cm = &s->classes[c];

		if (c == MRRCD_MAX_CLASSES - 1 || size >= MRRCD_PAGE_SIZE)
			size = MRRCD_PAGE_SIZE;
		cm->size = size;
		cm->per_page = MRRCD_PAGE_SIZE / size;
		cm->head = cm->partial = cm->hand_page = NONE;
		s->hdr->class_size[c] = size;
		if (size == MRRCD_PAGE_SIZE)
			break;
		/* Grow by 5/4, in whole multiples of 8 bytes. */
		size = (size * GROWTH_NUM / GROWTH_DEN + 7) & ~7u;
	}
	s->nclasses = c + 1;
}

static size_t round_up(size_t v, size_t to)
{
	return (v + to - 1) / to * to;
}

int store_init(struct store *s, size_t limit, uint32_t now)
{
	size_t home = MIN_HOME_SLOTS, index_bytes, counters_off, heap_off;
	size_t npages;
	uint32_t i;
	void *m;

	memset(s, 0, sizeof(*s));
	while (home * 2 <= limit / BYTES_PER_SLOT && home < (1u << 30))
		home *= 2;
	index_bytes = (home + MRRCD_PROBE - 1) * MRRCD_SLOT_SIZE;
	counters_off = round_up(MRRCD_HDR_SIZE + index_bytes, 4096);
	heap_off = round_up(counters_off + (home + MRRCD_PROBE - 1) * 8, 4096);
	if (limit < heap_off + MRRCD_PAGE_SIZE)
		return -EINVAL;
	npages = (limit - heap_off) / MRRCD_PAGE_SIZE;
	if (npages >= NONE)
		return -EINVAL;

	m = mmap(NULL, limit, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	s->arena = m;
	s->arena_size = limit;
	s->limit = limit;
	s->hdr = m;
	s->slots = (struct mrrcd_slot *)(s->arena + MRRCD_HDR_SIZE);
	s->counters = (uint64_t *)(s->arena + counters_off);
	s->heap = s->arena + heap_off;
	s->home_mask = (uint32_t)home - 1;
	s->nslots = (uint32_t)home + MRRCD_PROBE - 1;
	s->npages = (uint32_t)npages;
	s->priv = calloc(s->nslots, sizeof(*s->priv));
	s->pages = calloc(s->npages, sizeof(*s->pages));
	if (!s->priv || !s->pages) {
		store_destroy(s);
		return -ENOMEM;
	}
	s->free_pages = NONE;
	for (i = 0; i < s->npages; i++) {
		s->pages[i].class_id = -1;
		s->pages[i].prev = i ? i - 1 : NONE;
		s->pages[i].next = i + 1 < s->npages ? i + 1 : NONE;
		s->pages[i].pprev = s->pages[i].pnext = NONE;
	}
	s->free_pages = 0;
	s->nfree_pages = s->npages;
	/* CAS 1 (version 2) is the empty slots' first version. */
	s->next_cas = 2;

	s->hdr->magic = MRRCD_ARENA_MAGIC;
	s->hdr->layout_version = MRRCD_LAYOUT_VERSION;
	s->hdr->hdr_size = MRRCD_HDR_SIZE;
	s->hdr->arena_size = limit;
	s->hdr->index_off = MRRCD_HDR_SIZE;
	s->hdr->home_slots = (uint32_t)home;
	s->hdr->nslots = s->nslots;
	s->hdr->probe = MRRCD_PROBE;
	s->hdr->slot_size = MRRCD_SLOT_SIZE;
	s->hdr->counters_off = counters_off;
	s->hdr->heap_off = heap_off;
	s->hdr->npages = s->npages;
	s->hdr->page_size = MRRCD_PAGE_SIZE;
	s->hdr->item_max = MRRCD_ITEM_MAX;
	s->hdr->hash_seed = MRRCD_HASH_SEED;
	classes_init(s);
	s->hdr->nclasses = s->nclasses;
	/* Every slot starts published as empty, with a valid checksum. */
	for (i = 0; i < s->nslots; i++)
		slot_publish(s, i, 0, 0, 0, 2);
	store_clock(s, now);
	return 0;
}

void store_destroy(struct store *s)
{
	if (s->arena)
		munmap(s->arena, s->arena_size);
	free(s->priv);
	free(s->pages);
	memset(s, 0, sizeof(*s));
}
