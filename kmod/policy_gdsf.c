// SPDX-License-Identifier: GPL-2.0-only
/*
 * GreedyDual-Size-Frequency (Cherkasova): a size-aware baseline.  Each
 * cached region has the priority H = L + freq * cost / size; the
 * unreferenced region of least H goes, one at a time, and L becomes its H.
 * gdsf-batch keeps the order and evicts like MRE: a whole segment of the
 * capacity in one deregistration batch.
 *
 * A replacement policy of the registration cache (struct
 * mrrc_policy_ops, kmod/cache.h).  Everything here runs with c->mutex
 * held.
 */
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/rbtree.h>

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
 * GDSF order, MRE's batch: the unreferenced regions of least H, as many as
 * hold evict_pct of the capacity (and at least what the request needs),
 * go in one deregistration batch; L becomes the H of the last of them.
 */
static int mrrc_gdsf_batch_evict(struct mrrc_cache *c, u64 pages, u32 regions)
{
	u64 need_regions, target, freed = 0, evicted = 0;
	struct mrrc_region *r;
	struct rb_node *n, *next;
	LIST_HEAD(victims);

	mrrc_cache_segment(c, pages, regions, &target, &need_regions);
	for (n = rb_first(&c->gd_tree);
	     n && (freed < target || evicted < need_regions); n = next) {
		next = rb_next(n);
		r = rb_entry(n, struct mrrc_region, gd_node);
		if (!mrrc_region_claim(r))
			continue;
		c->gd_l = r->gd_h;
		freed += mrrc_region_pages(r);
		evicted++;
		mrrc_region_remove_cached(c, r);
		list_add_tail(&r->node, &victims);
	}
	if (!evicted)
		return 0;
	c->st.evictions += evicted;
	c->st.eviction_rounds++;
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
	.start = mrrc_gdsf_start,
	.stop = mrrc_gdsf_stop,
	.insert = mrrc_gdsf_insert_new,
	.touch = mrrc_gdsf_touch,
	.erase = mrrc_gdsf_erase,
	.evict = mrrc_gdsf_batch_evict,
};
