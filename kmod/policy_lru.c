// SPDX-License-Identifier: GPL-2.0-only
/*
 * LRU, the classic pin-down cache: the least recently used unreferenced
 * region goes, one at a time; and "none", which caches nothing.
 *
 * A replacement policy of the registration cache (struct
 * mrrc_policy_ops, kmod/cache.h).  Everything here runs with c->mutex
 * held.
 */
#include <linux/mm.h>

#include "mrrc.h"
#include "cache.h"
#include "mrrc_trace.h"

/* Classic pin-down cache: evict the LRU region, one at a time. */
static int mrrc_lru_evict(struct mrrc_cache *c, u64 pages, u32 regions)
{
	struct mrrc_region *r;

	while (!mrrc_cache_fits(c, pages, regions)) {
		r = mrrc_stack_victim(c);
		if (!r)
			return 0;
		mrrc_region_remove_cached(c, r);
		c->st.evictions++;
		c->st.eviction_rounds++;
		trace_mrrc_evict(c->pid, MRRC_POLICY_LRU, 1,
				 mrrc_region_pages(r), 0);
		mrrc_region_destroy(c, r);
	}
	return 0;
}

const struct mrrc_policy_ops mrrc_policy_lru = {
	.name = "lru",
	.caches = true,
	.evict = mrrc_lru_evict,
};

/* Register and deregister every request: the baseline without a cache. */
const struct mrrc_policy_ops mrrc_policy_none = {
	.name = "none",
	.caches = false,
	.evict = mrrc_lru_evict,
};
