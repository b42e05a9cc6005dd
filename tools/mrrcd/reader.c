// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * One-sided GET over the arena format; see layout.h for the rules.  Two
 * READs per attempt: the probe window, then the item chunk.  Any
 * inconsistency on a slot whose key hash matches means a writer raced the
 * reads: the whole GET starts again.  mrrcd_remote_get_at() reads an item
 * where an earlier GET found it: its slot and item in one round trip.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "hash.h"
#include "reader.h"

enum verdict { V_SKIP, V_TORN, V_HIT, V_MISS, V_BAD };

int mrrcd_remote_open(struct mrrcd_remote *r, mrrcd_read_fn read, void *ctx)
{
	struct mrrcd_arena_hdr *h = &r->hdr;
	int err;

	memset(r, 0, sizeof(*r));
	r->read = read;
	r->ctx = ctx;
	err = read(ctx, 0, h, sizeof(*h));
	if (err)
		return err;
	/* Offsets first bounded, so that none of the sums below can wrap. */
	if (h->magic != MRRCD_ARENA_MAGIC ||
	    h->layout_version != MRRCD_LAYOUT_VERSION ||
	    h->arena_size > (1ULL << 48) || h->index_off > h->arena_size ||
	    h->counters_off > h->arena_size || h->heap_off > h->arena_size ||
	    h->slot_size != MRRCD_SLOT_SIZE || h->probe != MRRCD_PROBE ||
	    h->page_size != MRRCD_PAGE_SIZE ||
	    !h->home_slots || (h->home_slots & (h->home_slots - 1)) ||
	    h->nslots != h->home_slots + h->probe - 1 ||
	    h->index_off + (uint64_t)h->nslots * h->slot_size >
	    h->counters_off || h->counters_off % 8 ||
	    h->counters_off + (uint64_t)h->nslots * 8 > h->heap_off ||
	    h->heap_off + (uint64_t)h->npages * h->page_size > h->arena_size ||
	    h->item_max < MRRCD_ITEM_HDR_SIZE || h->item_max > h->page_size)
		return -EPROTO;
	return 0;
}

int mrrcd_remote_clock(struct mrrcd_remote *r)
{
	return r->read(r->ctx, MRRCD_HDR_CLOCK_OFF,
		       (unsigned char *)&r->hdr + MRRCD_HDR_CLOCK_OFF,
		       MRRCD_HDR_CLOCK_LEN);
}

static bool slot_ok(const struct mrrcd_slot *sl)
{
	return !(sl->version & 1) && sl->version &&
	       mrrcd_hash64(sl, MRRCD_SLOT_SUM_BYTES, MRRCD_HASH_SEED) ==
	       sl->checksum;
}

/*
 * Judge an item chunk read into buf (len bytes): its own checksums, the
 * version its slot gave, its key, expiry and flush_all.
 */
static enum verdict judge_item(const struct mrrcd_remote *r,
			       const unsigned char *buf, size_t len,
			       uint64_t version, const char *key, size_t klen,
			       struct mrrcd_remote_item *out)
{
	const struct mrrcd_arena_hdr *h = &r->hdr;
	struct mrrcd_item it;

	memcpy(&it, buf, sizeof(it));
	if (it.version != version ||
	    mrrcd_hash64(&it, MRRCD_ITEM_SUM_BYTES, MRRCD_HASH_SEED) !=
	    it.hdr_sum ||
	    MRRCD_ITEM_HDR_SIZE + (uint64_t)it.key_len + it.value_len != len ||
	    mrrcd_hash64(buf + MRRCD_ITEM_HDR_SIZE, it.key_len + it.value_len,
			 MRRCD_HASH_SEED) != it.data_sum)
		return V_TORN;
	if (it.key_len != klen || memcmp(buf + MRRCD_ITEM_HDR_SIZE, key, klen))
		return V_SKIP;	/* another key with the same hash */
	if (it.exptime && it.exptime <= h->clock)
		return V_MISS;
	/* flush_all leaves slots in place: its record says what is gone. */
	if (mrrcd_flushed(it.cas, it.stored, h->oldest_cas, h->oldest_live,
			  h->clock))
		return V_MISS;
	out->value = (const char *)buf + MRRCD_ITEM_HDR_SIZE + klen;
	out->value_len = it.value_len;
	out->flags = it.flags;
	out->cas = it.cas;
	return V_HIT;
}

/* Whether [off, off + len) is an item-sized range inside the heap. */
static bool item_range_ok(const struct mrrcd_arena_hdr *h, uint64_t off,
			  uint64_t len, size_t buf_len)
{
	return len >= MRRCD_ITEM_HDR_SIZE && len <= h->item_max &&
	       len <= buf_len && off >= h->heap_off &&
	       off - h->heap_off <= (uint64_t)h->npages * h->page_size &&
	       len <= h->heap_off + (uint64_t)h->npages * h->page_size - off;
}

/* Read and judge the item a matching, consistent slot points at. */
static enum verdict read_item(struct mrrcd_remote *r,
			      const struct mrrcd_slot *sl, const char *key,
			      size_t klen, unsigned char *buf, size_t buf_len,
			      struct mrrcd_remote_item *out)
{
	/* A consistent slot with impossible fields is not a race. */
	if (!item_range_ok(&r->hdr, sl->item_off, sl->item_len, buf_len))
		return V_BAD;
	r->err = r->read(r->ctx, sl->item_off, buf, sl->item_len);
	if (r->err)
		return V_BAD;
	return judge_item(r, buf, sl->item_len, sl->version, key, klen, out);
}

static enum verdict try_get(struct mrrcd_remote *r, uint64_t hash,
			    const char *key, size_t klen, void *buf,
			    size_t buf_len, struct mrrcd_remote_item *out)
{
	struct mrrcd_slot win[MRRCD_PROBE];
	uint64_t home = hash & (r->hdr.home_slots - 1);
	uint64_t base = r->hdr.index_off + home * MRRCD_SLOT_SIZE;
	enum verdict torn = V_MISS;
	unsigned int i;

	r->err = r->read(r->ctx, base, win, sizeof(win));
	if (r->err)
		return V_BAD;
	for (i = 0; i < MRRCD_PROBE; i++) {
		const struct mrrcd_slot *sl = &win[i];
		enum verdict v;

		/*
		 * A slot caught mid-write is only ours to wait for if it
		 * names our key; a slot becoming ours is a miss for now.
		 */
		if (!slot_ok(sl)) {
			if (sl->key_hash == hash)
				torn = V_TORN;
			continue;
		}
		if (!sl->item_off || sl->key_hash != hash)
			continue;
		v = read_item(r, sl, key, klen, buf, buf_len, out);
		if (v == V_SKIP)
			continue;
		if (v == V_HIT) {
			out->slot_off = base + i * MRRCD_SLOT_SIZE;
			out->counter_off = mrrcd_counter_off(&r->hdr,
							     out->slot_off);
			out->item_off = sl->item_off;
			out->item_len = sl->item_len;
			return V_HIT;
		}
		if (v == V_MISS || v == V_BAD)
			return v;
		torn = V_TORN;
	}
	return torn;
}

int mrrcd_remote_get(struct mrrcd_remote *r, const char *key, size_t key_len,
		     void *buf, size_t buf_len, unsigned int max_tries,
		     struct mrrcd_remote_item *it)
{
	uint64_t hash = mrrcd_hash64(key, key_len, MRRCD_HASH_SEED);
	unsigned int tries;

	r->err = 0;
	for (tries = 0; tries < max_tries; tries++) {
		switch (try_get(r, hash, key, key_len, buf, buf_len, it)) {
		case V_HIT:
			return 0;
		case V_MISS:
			return -ENOENT;
		case V_BAD:
			/* The transport's error, or an impossible slot. */
			return r->err ? r->err : -EPROTO;
		default:
			r->retries++;
			break;
		}
	}
	return -EAGAIN;
}

int mrrcd_remote_get_at(struct mrrcd_remote *r, const char *key,
			size_t key_len, uint64_t slot_off, uint64_t item_off,
			uint32_t item_len, void *buf, size_t buf_len,
			struct mrrcd_remote_item *it)
{
	const struct mrrcd_arena_hdr *h = &r->hdr;
	uint64_t hash = mrrcd_hash64(key, key_len, MRRCD_HASH_SEED);
	struct mrrcd_slot sl;
	struct mrrcd_iov iov[2] = {
		{ slot_off, &sl, sizeof(sl) }, { item_off, buf, item_len },
	};
	enum verdict v;

	r->err = 0;
	if (slot_off < h->index_off || (slot_off - h->index_off) %
	    MRRCD_SLOT_SIZE || (slot_off - h->index_off) / MRRCD_SLOT_SIZE >=
	    h->nslots || !item_range_ok(h, item_off, item_len, buf_len))
		return -ESTALE;
	/* The slot first: the responder runs the two READs in order. */
	if (r->readv)
		r->err = r->readv(r->ctx, iov, 2);
	else
		r->err = r->read(r->ctx, slot_off, &sl, sizeof(sl)) ?:
			 r->read(r->ctx, item_off, buf, item_len);
	if (r->err)
		return r->err;
	/*
	 * The daemon's slot, not the item, says where the key is: an item
	 * header read on its own could be bytes a client stored in a value
	 * where a chunk once began.  So the same rule as the two READs.
	 */
	if (!slot_ok(&sl) || sl.item_off != item_off ||
	    sl.item_len != item_len || sl.key_hash != hash)
		return -ESTALE;
	v = judge_item(r, buf, item_len, sl.version, key, key_len, it);
	if (v == V_MISS)
		return -ENOENT;
	if (v != V_HIT)
		return -ESTALE;
	it->slot_off = slot_off;
	it->counter_off = mrrcd_counter_off(h, slot_off);
	it->item_off = item_off;
	it->item_len = item_len;
	return 0;
}
