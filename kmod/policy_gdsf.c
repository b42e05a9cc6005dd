// SPDX-License-Identifier: GPL-2.0-only
/*
 * GreedyDual-Size-Frequency (Cherkasova): a size-aware baseline.  Each
 * cached region has the priority H = L + freq * cost / size; the
 * unreferenced region of least H goes, one at a time, and L becomes its H.
 * gdsf-batch keeps the order and evicts like MRE, a segment of the
 * capacity in one deregistration batch, the segment sized by what
 * batching earns (below).
 *
 * A replacement policy of the registration cache (struct
 * mrrc_policy_ops, kmod/cache.h).  Everything here runs with c->mutex
 * held.
 */
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/rbtree.h>
#include <linux/xarray.h>

#include "mrrc.h"
#include "cache.h"
#include "mrrc_trace.h"

/*
 * H = L + freq * cost / size, with cost the configured registration cost
 * of the region (a * pages + b) and size its pages.  Scaled by 1024, and
 * saturated: the costs are the caller's to choose and a hot region's
 * frequency grows without bound.
 */
static u64 mrrc_gdsf_h(struct mrrc_cache *c, struct mrrc_region *r)
{
	u64 p = mrrc_region_pages(r);
	/* (a * p + b) * 1024 / p, without the product that could wrap */
	u64 per_page = ((u64)c->cfg.reg_ns_per_page << 10) +
		       div64_u64((u64)c->cfg.reg_ns_per_op << 10, p);
	u64 h;

	if (check_mul_overflow(per_page, (u64)max(r->gd_freq, 1U), &h) ||
	    check_add_overflow(h, c->gd_l, &h))
		return U64_MAX;
	return h;
}

static void mrrc_gdsf_insert(struct mrrc_cache *c, struct mrrc_region *r)
{
	struct rb_node **link = &c->gd_tree.rb_node, *parent = NULL;

	r->gd_h = mrrc_gdsf_h(c, r);
	while (*link) {
		struct mrrc_region *e = rb_entry(*link, struct mrrc_region,
						 gd_node);

		parent = *link;
		/* Equal priorities: the newer one goes right (evicted later). */
		link = r->gd_h < e->gd_h ? &parent->rb_left : &parent->rb_right;
	}
	rb_link_node(&r->gd_node, parent, link);
	rb_insert_color(&r->gd_node, &c->gd_tree);
}

static void mrrc_gdsf_erase(struct mrrc_cache *c, struct mrrc_region *r)
{
	if (RB_EMPTY_NODE(&r->gd_node))
		return;
	rb_erase(&r->gd_node, &c->gd_tree);
	RB_CLEAR_NODE(&r->gd_node);
}

/* A new region: in the tree at once, even if it is never touched. */
static void mrrc_gdsf_insert_new(struct mrrc_cache *c, struct mrrc_region *r)
{
	r->gd_freq = 0;
	mrrc_gdsf_insert(c, r);
}

/* Becoming the policy: every cached region counts as referenced once. */
static void mrrc_gdsf_start(struct mrrc_cache *c)
{
	struct mrrc_region *r;

	list_for_each_entry(r, &c->stack, node) {
		r->gd_freq = 1;
		mrrc_gdsf_insert(c, r);
	}
}

static void mrrc_gdsf_stop(struct mrrc_cache *c)
{
	struct mrrc_region *r;

	list_for_each_entry(r, &c->stack, node)
		mrrc_gdsf_erase(c, r);
}

static void mrrc_gdsf_touch(struct mrrc_cache *c, struct mrrc_region *r,
			    unsigned int n)
{
	r->gd_freq = min_t(u64, (u64)r->gd_freq + n, U32_MAX);
	mrrc_gdsf_erase(c, r);
	mrrc_gdsf_insert(c, r);
}

/* GDSF: evict the unreferenced region of least H, one at a time; L = H. */
static int mrrc_gdsf_evict(struct mrrc_cache *c, u64 pages, u32 regions)
{
	struct mrrc_region *r;
	struct rb_node *n;

	while (!mrrc_cache_fits(c, pages, regions)) {
		for (n = rb_first(&c->gd_tree); n; n = rb_next(n)) {
			r = rb_entry(n, struct mrrc_region, gd_node);
			if (mrrc_region_claim(r))
				break;
		}
		if (!n)
			return 0;
		c->gd_l = r->gd_h;
		mrrc_region_remove_cached(c, r);
		c->st.evictions++;
		c->st.eviction_rounds++;
		trace_mrrc_evict(c->pid, MRRC_POLICY_GDSF, 1,
				 mrrc_region_pages(r), c->gd_l);
		mrrc_region_destroy(c, r);
	}
	return 0;
}

/*
 * gdsf-batch: GDSF's order, MRE's batch, a segment sized by what batching
 * earns.  A round that frees more than the request needs saves, for every
 * miss that fits before the next round, the round that miss would have
 * needed: a deregistration call's fixed cost b' (dereg_ns_per_op).  It
 * loses when a region it evicted beyond the need (an "extra") is asked for
 * again before the next round, which costs a registration (a * pages + b)
 * that GDSF, evicting one region at a time, would not have paid.  Each
 * round weighs the two since the last round: the segment halves when the
 * loss was larger, else doubles, up to evict_pct of the capacity.  It
 * starts at nothing, GDSF's own round, so that a cache that evicts a few
 * times only (one nearly as large as what the workload uses) never
 * evicts a large segment on trust, and starts again when its bound
 * changes.  With a large b' (a batch that waits for its LOCAL_INV chain)
 * it grows to the bound; with a small one (the measured b' of a real mode
 * with async_inval, where the requester only posts the chain) it stays
 * near GDSF's single evictions.
 *
 * The extras of the last round are in c->gb_extra by last page, the value
 * their first page (page numbers are below LONG_MAX, as xa_mk_value()
 * wants).  Regions of one access class never overlap; extras of two
 * classes may, and then one hides the other: the accounting is a hint.
 */
static u64 mrrc_gb_max_seg(struct mrrc_cache *c)
{
	return div_u64(c->cfg.max_pages * c->cfg.evict_pct, 100);
}

static void mrrc_gb_forget_extras(struct mrrc_cache *c)
{
	xa_destroy(&c->gb_extra);
}

static void mrrc_gb_restart(struct mrrc_cache *c)
{
	c->gb_seg_max = mrrc_gb_max_seg(c);
	c->gb_seg = 0;
	c->gb_misses = 0;
	c->gb_waste_ns = 0;
	c->gb_judge = false;
	c->st.evict_segment = 0;
	mrrc_gb_forget_extras(c);
}

static void mrrc_gb_start(struct mrrc_cache *c)
{
	mrrc_gdsf_start(c);
	mrrc_gb_restart(c);
}

static void mrrc_gb_stop(struct mrrc_cache *c)
{
	mrrc_gdsf_stop(c);
	mrrc_gb_restart(c);
}

/* @r, evicted beyond the need, is remembered until the next round. */
static void mrrc_gb_note_extra(struct mrrc_cache *c, struct mrrc_region *r)
{
	/* Only a hint: without memory at hand, it is not remembered. */
	xa_store(&c->gb_extra, r->it.last, xa_mk_value(r->it.start),
		 GFP_NOWAIT | __GFP_NOWARN);
}

/*
 * Pages [start, last] are to be registered: any extra of the last round
 * they reach was evicted early.  Before room is made for them, so that
 * the round this miss may start weighs it too.  Each extra found is
 * forgotten, and the walk ends at the first extra past @last: a request
 * visits what it reaches and one more.
 */
static void mrrc_gb_miss(struct mrrc_cache *c, unsigned long start,
			 unsigned long last)
{
	unsigned long idx;
	void *e;

	c->gb_misses++;
	xa_for_each_start(&c->gb_extra, idx, e, start) {
		unsigned long first = xa_to_value(e);

		if (first > last)
			break;
		c->gb_waste_ns += (u64)(idx - first + 1) *
				  c->cfg.reg_ns_per_page + c->cfg.reg_ns_per_op;
		c->st.evicted_early++;
		xa_erase(&c->gb_extra, idx);
	}
}

/*
 * The segment for a round that needs room for @regions new regions: what
 * the last round's extras earned weighed against what they cost (nothing
 * to weigh before the first round, or after the bound changed).
 */
static u64 mrrc_gb_next_seg(struct mrrc_cache *c, u32 regions)
{
	u64 saved;

	if (mrrc_gb_max_seg(c) != c->gb_seg_max)
		mrrc_gb_restart(c);
	if (!c->gb_judge)
		return c->gb_seg;
	/* the misses that fitted: not this request's own */
	if (check_mul_overflow(c->gb_misses - min_t(u64, c->gb_misses, regions),
			       (u64)c->cfg.dereg_ns_per_op, &saved))
		saved = U64_MAX;
	if (c->gb_waste_ns > saved)
		return c->gb_seg / 2;
	return min(c->gb_seg ? c->gb_seg * 2 : 1, c->gb_seg_max);
}

/*
 * The unreferenced regions of least H, as many as hold what the request
 * needs and the segment beyond it, go in one deregistration batch; L
 * becomes the H of the last of them.  A round that evicts nothing (every
 * region in use) changes nothing.
 */
static int mrrc_gdsf_batch_evict(struct mrrc_cache *c, u64 pages, u32 regions)
{
	u64 need_pages, need_regions, seg, target, freed = 0, evicted = 0;
	struct mrrc_region *r;
	struct rb_node *n, *next;
	LIST_HEAD(victims);

	seg = mrrc_gb_next_seg(c, regions);
	mrrc_cache_need(c, pages, regions, &need_pages, &need_regions);
	target = need_pages + seg;
	for (n = rb_first(&c->gd_tree);
	     n && (freed < target || evicted < need_regions); n = next) {
		next = rb_next(n);
		r = rb_entry(n, struct mrrc_region, gd_node);
		if (!mrrc_region_claim(r))
			continue;
		if (!evicted)	/* the last round's extras are judged */
			mrrc_gb_forget_extras(c);
		if (freed >= need_pages && evicted >= need_regions)
			mrrc_gb_note_extra(c, r);
		c->gd_l = r->gd_h;
		freed += mrrc_region_pages(r);
		evicted++;
		mrrc_region_remove_cached(c, r);
		list_add_tail(&r->node, &victims);
	}
	if (!evicted)
		return 0;
	c->gb_seg = seg;
	c->gb_judge = true;
	c->gb_misses = 0;
	c->gb_waste_ns = 0;
	c->st.evictions += evicted;
	c->st.eviction_rounds++;
	c->st.evict_segment = seg;
	trace_mrrc_evict(c->pid, MRRC_POLICY_GDSF_BATCH, evicted, freed,
			 c->gd_l);
	mrrc_regions_destroy(c, &victims);
	return 0;
}

const struct mrrc_policy_ops mrrc_policy_gdsf = {
	.name = "gdsf",
	.caches = true,
	.start = mrrc_gdsf_start,
	.stop = mrrc_gdsf_stop,
	.insert = mrrc_gdsf_insert_new,
	.touch = mrrc_gdsf_touch,
	.erase = mrrc_gdsf_erase,
	.evict = mrrc_gdsf_evict,
};

const struct mrrc_policy_ops mrrc_policy_gdsf_batch = {
	.name = "gdsf-batch",
	.caches = true,
	.start = mrrc_gb_start,
	.stop = mrrc_gb_stop,
	.miss = mrrc_gb_miss,
	.insert = mrrc_gdsf_insert_new,
	.touch = mrrc_gdsf_touch,
	.erase = mrrc_gdsf_erase,
	.evict = mrrc_gdsf_batch_evict,
};
