// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - the in-kernel API (see mrrc_kapi.h): thin, documented wrappers
 * around the same cache and FRWR code that serves /dev/mrrc.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/export.h>

#include "mrrc.h"
#include "cache.h"
#include "mrrc_kapi.h"

static struct mrrc_cache *to_cache(struct mrrc_kcache *kc)
{
	return (struct mrrc_cache *)kc;
}

/**
 * mrrc_kcache_create() - create a registration cache for kernel memory
 * @pd: the caller's protection domain; must outlive the cache
 *
 * The cache starts with policy MRE, mode MRRC_MODE_FAST and the module's
 * default capacity (parameters max_pages and max_regions).
 *
 * Return: the cache, or an ERR_PTR (-ENOMEM).
 */
struct mrrc_kcache *mrrc_kcache_create(struct ib_pd *pd)
{
	struct mrrc_cache *c = mrrc_cache_create(pd, NULL);

	return IS_ERR(c) ? ERR_CAST(c) : (struct mrrc_kcache *)c;
}
EXPORT_SYMBOL_GPL(mrrc_kcache_create);

/**
 * mrrc_kcache_destroy() - release every handle and registration
 * @kc: the cache; freed.  Its memory may be freed afterwards.
 */
void mrrc_kcache_destroy(struct mrrc_kcache *kc)
{
	mrrc_cache_destroy(to_cache(kc));
}
EXPORT_SYMBOL_GPL(mrrc_kcache_destroy);

/**
 * mrrc_kcache_config() - change and read the configuration
 * @kc: the cache
 * @cfg: as for MRRC_IOC_CACHE_CONFIG (size is ignored, and so are flags
 *	other than MRRC_CACHE_MEASURE_COSTS)
 *
 * Return: 0; -EINVAL for a bad value or MRRC_MODE_ORDINARY (user memory
 * only); -EBUSY as for the ioctl.
 */
int mrrc_kcache_config(struct mrrc_kcache *kc, struct mrrc_cache_config *cfg)
{
	return mrrc_cache_configure(to_cache(kc), cfg);
}
EXPORT_SYMBOL_GPL(mrrc_kcache_config);

/**
 * mrrc_kcache_reg() - make a kernel virtual range usable for RDMA
 * @kc: the cache
 * @addr: first byte, in the direct map or vmalloc space
 * @len: bytes, > 0
 * @access: MRRC_ACCESS_* bits
 * @flags: MRRC_REG_RELEASE, or 0 to get a handle
 * @segs: receives the segments (SGEs) in address order
 * @room: entries in @segs
 * @nsegs: set to the number of segments written
 * @handle: set to the handle (0 with MRRC_REG_RELEASE)
 *
 * Return: how the request was served (enum mrrc_reg_result, > 0), or
 * -EINVAL (bad range or access), -EFAULT (not kernel memory),
 * -ENOSPC (no room in the cache), -EOVERFLOW (@room too small),
 * -E2BIG (a gap larger than the biggest fast MR), -EMFILE (max_handles
 * reached), -ENOMEM, -EIO (the registration work request failed; the
 * pool recovered).
 */
int mrrc_kcache_reg(struct mrrc_kcache *kc, void *addr, size_t len,
		    u32 access, u32 flags, struct mrrc_seg *segs, u32 room,
		    u32 *nsegs, u32 *handle)
{
	struct mrrc_reg_out out;
	int ret;

	if (flags & ~MRRC_REG_RELEASE)
		return -EINVAL;
	ret = mrrc_cache_reg(to_cache(kc), (unsigned long)addr, len, access,
			     flags, segs, room, &out);
	if (ret)
		return ret;
	*nsegs = out.nsegs;
	*handle = out.handle;
	return out.result;
}
EXPORT_SYMBOL_GPL(mrrc_kcache_reg);

/**
 * mrrc_kcache_reg_pages() - register an array of kernel pages
 * @kc: the cache (mode MRRC_MODE_FAST)
 * @pages: @npages pages, in order; they need not be contiguous
 * @npages: at most the device's max_fast_reg_page_list_len
 * @access: MRRC_ACCESS_* bits
 * @seg: receives the segment: address 0 (the MR's iova), @npages pages
 * @handle: receives the handle; mrrc_kcache_release() deregisters it
 *
 * Not cached: pages have no address to look them up by.  The pages must
 * stay allocated until the handle is released.
 *
 * Return: 0, -EINVAL, -E2BIG (too many pages), -EMFILE (max_handles
 * reached), -ENOMEM or -EIO.
 */
int mrrc_kcache_reg_pages(struct mrrc_kcache *kc, struct page **pages,
			  unsigned int npages, u32 access, struct mrrc_seg *seg,
			  u32 *handle)
{
	return mrrc_cache_reg_pages(to_cache(kc), pages, npages, access, seg,
				    handle);
}
EXPORT_SYMBOL_GPL(mrrc_kcache_reg_pages);

/**
 * mrrc_kcache_release() - give a registration back to the cache
 * @kc: the cache
 * @handle: from mrrc_kcache_reg()
 *
 * Return: 0, or -ENOENT if @handle names nothing.
 */
int mrrc_kcache_release(struct mrrc_kcache *kc, u32 handle)
{
	return mrrc_cache_release(to_cache(kc), handle);
}
EXPORT_SYMBOL_GPL(mrrc_kcache_release);

/**
 * mrrc_kcache_invalidate() - forget every registration over a range
 * @kc: the cache
 * @addr: first byte
 * @len: bytes
 *
 * Call before freeing or reusing memory the cache may hold.  Regions still
 * referenced by handles are deregistered when those are released.
 *
 * Return: the number of regions dropped, or -EINVAL.
 */
int mrrc_kcache_invalidate(struct mrrc_kcache *kc, void *addr, size_t len)
{
	return mrrc_cache_invalidate(to_cache(kc), (unsigned long)addr, len);
}
EXPORT_SYMBOL_GPL(mrrc_kcache_invalidate);

/**
 * mrrc_kcache_flush() - deregister every unreferenced region, one batch
 * @kc: the cache
 *
 * Return: the number of regions deregistered.
 */
u32 mrrc_kcache_flush(struct mrrc_kcache *kc)
{
	return mrrc_cache_flush(to_cache(kc));
}
EXPORT_SYMBOL_GPL(mrrc_kcache_flush);

/**
 * mrrc_kcache_stats() - the cache's counters
 * @kc: the cache
 * @st: filled in, as for MRRC_IOC_CACHE_STATS
 */
void mrrc_kcache_stats(struct mrrc_kcache *kc, struct mrrc_cache_stats *st)
{
	mrrc_cache_get_stats(to_cache(kc), st);
}
EXPORT_SYMBOL_GPL(mrrc_kcache_stats);
