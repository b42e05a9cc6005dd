/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrrc - in-kernel API: the registration cache and FRWR pools for kernel
 * memory, for kernel-space storage clients.
 *
 * A client allocates its own protection domain (ib_alloc_pd()) and creates
 * a cache on it.  Requests name kernel virtual ranges: the direct map
 * (kmalloc(), page_address()) or vmalloc space; an array of pages can be
 * registered too (uncached: it has no address).  Registrations are FRWR
 * (MRRC_MODE_FAST, the default) with MRs in the client's PD, so the keys
 * work on the client's queue pairs.  The cache cannot see kernel memory
 * being freed: call mrrc_kcache_invalidate() before freeing or reusing
 * memory it may hold, after releasing every handle over it.
 *
 * All functions may sleep.  A cache serialises its own callers.
 */
#ifndef _MRRC_KAPI_H
#define _MRRC_KAPI_H

#include <linux/types.h>
#include "mrrc_abi.h"

struct ib_pd;
struct page;
struct mrrc_kcache;

struct mrrc_kcache *mrrc_kcache_create(struct ib_pd *pd);
void mrrc_kcache_destroy(struct mrrc_kcache *kc);
int mrrc_kcache_config(struct mrrc_kcache *kc, struct mrrc_cache_config *cfg);
int mrrc_kcache_reg(struct mrrc_kcache *kc, void *addr, size_t len,
		    u32 access, u32 flags, struct mrrc_seg *segs, u32 room,
		    u32 *nsegs, u32 *handle);
int mrrc_kcache_reg_pages(struct mrrc_kcache *kc, struct page **pages,
			  unsigned int npages, u32 access, struct mrrc_seg *seg,
			  u32 *handle);
int mrrc_kcache_release(struct mrrc_kcache *kc, u32 handle);
int mrrc_kcache_invalidate(struct mrrc_kcache *kc, void *addr, size_t len);
u32 mrrc_kcache_flush(struct mrrc_kcache *kc);
void mrrc_kcache_stats(struct mrrc_kcache *kc, struct mrrc_cache_stats *st);

#endif /* _MRRC_KAPI_H */
