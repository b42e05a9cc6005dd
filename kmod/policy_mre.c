// SPDX-License-Identifier: GPL-2.0-only
/*
 * MRE, the replacement policy of MRRC (JNCA 2008, section 5): the bottom
 * of the recency stack is resorted by size and recency, and an eviction
 * segment of it is deregistered in one batch.
 *
 * A replacement policy of the registration cache (struct
 * mrrc_policy_ops, kmod/cache.h).  Everything here runs with c->mutex
 * held.
 */
#include <linux/mm.h>
#include <linux/sort.h>

#include "mrrc.h"
#include "cache.h"
#include "mrrc_trace.h"

#define MRRC_FACTOR_ONE		BIT_ULL(32)

static int mrrc_cmp_factor(const void *a, const void *b)
{
	const struct mrrc_region *x = *(struct mrrc_region * const *)a;
	const struct mrrc_region *y = *(struct mrrc_region * const *)b;

	if (x->evictfact != y->evictfact)
		return x->evictfact < y->evictfact ? -1 : 1;
	/* Equal factors keep stack order: lower (older) first. */
	return x->sort_pos < y->sort_pos ? -1 : 1;
}

static int mrrc_sort_buf_reserve(struct mrrc_cache *c, size_t n)
{
	struct mrrc_region **buf;

	if (n <= c->sort_len)
		return 0;
	n = roundup_pow_of_two(n);
	buf = kvmalloc_array(n, sizeof(*buf), GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	kvfree(c->sort_buf);
	c->sort_buf = buf;
	c->sort_len = n;
	return 0;
}

/*
 * One MRE round.  The resorting section is the bottom of the stack holding
 * resort_pct of the cached pages.  r becomes the factor of the bottom
 * region; every region of the section whose factor is still zero gets
 * r + 1/size; the section is resorted, smallest factor at the bottom; then
 * the eviction segment, the bottom unreferenced regions holding evict_pct
 * of the capacity (and at least what the request needs), is deregistered
 * in one batch.
 */
static int mrrc_mre_evict(struct mrrc_cache *c, u64 pages, u32 regions)
{
	u64 resort_target, evict_target, freed = 0, sect_pages = 0;
	u64 need_regions, evicted = 0;
	struct mrrc_region *r, *tmp;
	LIST_HEAD(victims);
	size_t n = 0, i;
	int ret;

	mrrc_cache_segment(c, pages, regions, &evict_target, &need_regions);
	ret = mrrc_sort_buf_reserve(c, c->st.cached_regions);
	if (ret)
		return ret;

	/* The resorting section, bottom first. */
	resort_target = max_t(u64, div_u64(c->st.cached_pages *
					   c->cfg.resort_pct, 100), 1);
	list_for_each_entry_reverse(r, &c->stack, node) {
		if (sect_pages >= resort_target)
			break;
		r->sort_pos = n;
		c->sort_buf[n++] = r;
		sect_pages += mrrc_region_pages(r);
	}
	if (!n)
		return 0;

	c->recency = c->sort_buf[0]->evictfact;
	for (i = 0; i < n; i++) {
		r = c->sort_buf[i];
		if (!r->evictfact)
			r->evictfact = c->recency +
				div64_u64(MRRC_FACTOR_ONE, mrrc_region_pages(r));
	}

	/* Smallest factor first; ties broken by position (sort_pos). */
	sort(c->sort_buf, n, sizeof(*c->sort_buf), mrrc_cmp_factor, NULL);

	/* Relink: the section goes back to the bottom in sorted order. */
	for (i = 0; i < n; i++)
		list_del(&c->sort_buf[i]->node);
	for (i = n; i-- > 0;)
		list_add_tail(&c->sort_buf[i]->node, &c->stack);

	/* The eviction segment. */
	list_for_each_entry_safe_reverse(r, tmp, &c->stack, node) {
		if (freed >= evict_target && evicted >= need_regions)
			break;
		if (!mrrc_region_claim(r))
			continue;
		freed += mrrc_region_pages(r);
		evicted++;
		mrrc_region_remove_cached(c, r);
		list_add_tail(&r->node, &victims);
	}
	c->st.evictions += evicted;
	c->st.eviction_rounds++;
	c->st.mre_recency = c->recency;
	trace_mrrc_evict(c->pid, MRRC_POLICY_MRE, evicted, freed, c->recency);
	mrrc_regions_destroy(c, &victims);
	return 0;
}

/* A referenced region gets a new factor in the next round. */
static void mrrc_mre_touch(struct mrrc_cache *c, struct mrrc_region *r,
			   unsigned int n)
{
	r->evictfact = 0;
}

/* Becoming the policy: no region has a factor yet. */
static void mrrc_mre_start(struct mrrc_cache *c)
{
	struct mrrc_region *r;

	list_for_each_entry(r, &c->stack, node)
		r->evictfact = 0;
}

const struct mrrc_policy_ops mrrc_policy_mre = {
	.name = "mre",
	.caches = true,
	.start = mrrc_mre_start,
	.touch = mrrc_mre_touch,
	.evict = mrrc_mre_evict,
};
