// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - the memory registration region cache (MRRC) and its replacement
 * policies: MRE (Memory Resorting and Eviction), LRU and none.
 *
 * A request for [addr, addr + len) with some access rights becomes a page
 * range.  Against the cached regions of the same access class it is
 *
 *   exact    one cached region with exactly that range,
 *   subset   inside one cached region,
 *   span     covered by several adjacent cached regions,
 *   overlap  partly covered: only the uncovered gaps are registered,
 *   miss     not covered at all: registered whole.
 *
 * The result is a list of segments in address order, one per region
 * piece, each usable as one SGE.  Regions used by a request move to the
 * top of the stack (a hit taken without c->mutex moves its region when
 * the next locked request applies it, see cache.h).  When a registration
 * would exceed the capacity (pages or regions), the policy evicts
 * unreferenced regions: LRU the bottom one at a time, MRE a whole
 * eviction segment in one deregistration batch after resorting the
 * bottom of the stack by evictfact = r + 1/size.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/list_sort.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "mrrc.h"
#include "cache.h"

#define CREATE_TRACE_POINTS
#include "mrrc_trace.h"

#define MRRC_REG_RETRIES	3

/*
 * Every cache, for module-wide statistics.  mrrc_caches_lock nests
 * outside c->mutex; counters of destroyed caches accumulate in
 * mrrc_retired.
 */
static DEFINE_MUTEX(mrrc_caches_lock);
static LIST_HEAD(mrrc_caches);
static struct mrrc_cache_stats mrrc_retired;

struct mrrc_handle {
	unsigned int n;
	bool op;		/* MRRC_REG_OP: an in-flight operation's */
	struct mrrc_region *r[];
};

/* A piece of a request: pages [start, last], cached in @r or a gap. */
struct mrrc_piece {
	unsigned long start;
	unsigned long last;
	struct mrrc_region *r;
};

/* Registrations of user memory: pinned, charged and watched by notifiers. */
static bool mrrc_cache_user(const struct mrrc_cache *c)
{
	return c->mm && c->reg->pins;
}

static const struct mrrc_registrar *mrrc_registrar_for(u32 mode)
{
	switch (mode) {
	case MRRC_MODE_MODEL:
		return &mrrc_registrar_model;
	case MRRC_MODE_ORDINARY:
		return &mrrc_registrar_ordinary;
	default:
		return &mrrc_registrar_fast;
	}
}

/* ---- region lifetime ----------------------------------------------------- */

/*
 * Whether @range must drop region @r.  A protection change (mprotect(),
 * NUMA-balancing hints, userfaultfd and PAGEMAP_SCAN write-protection,
 * fork write-protecting the parent, writeback cleaning a shared page,
 * soft-dirty tracking) only changes what the CPU may do with the page it
 * maps: the region holds that page pinned, and pinned pages are neither
 * migrated nor merged by KSM, while fork copies a pinned anonymous page
 * for the child instead of sharing it.  So a region the device only reads
 * stays.  A writable one goes on MMU_NOTIFY_PROTECTION_VMA and
 * MMU_NOTIFY_SOFT_DIRTY all the same: its next registration pins with
 * FOLL_WRITE again, which refuses memory made read-only and raises the
 * soft-dirty and userfaultfd write faults that the device's writes would
 * otherwise bypass (the event does not say which of these it is).  Fork
 * and writeback (MMU_NOTIFY_PROTECTION_PAGE) never need that.  Everything
 * else (munmap, mremap, zapping, copy-on-write, migration, exclusive
 * device access, the address space going away) may put another page
 * there.
 */
static bool mrrc_range_drops(const struct mmu_notifier_range *range,
			     const struct mrrc_region *r)
{
	switch (range->event) {
	case MMU_NOTIFY_PROTECTION_PAGE:
		return false;
	case MMU_NOTIFY_PROTECTION_VMA:
	case MMU_NOTIFY_SOFT_DIRTY:
		return r->access & MRRC_ACCESS_LOCAL_WRITE;
	default:
		return true;
	}
}

static bool mrrc_region_invalidate(struct mmu_interval_notifier *mni,
				   const struct mmu_notifier_range *range,
				   unsigned long cur_seq)
{
	struct mrrc_region *r = container_of(mni, struct mrrc_region, notifier);
	struct mrrc_cache *c = r->cache;
	bool queue = false;

	spin_lock(&c->inval_lock);
	if (!mrrc_range_drops(range, r)) {
		c->kept++;
		spin_unlock(&c->inval_lock);
		return true;
	}
	mmu_interval_set_seq(mni, cur_seq);
	if (!r->invalid) {
		r->invalid = true;
		list_add_tail(&r->inval_node, &c->invalid);
		queue = !c->dying;
	}
	spin_unlock(&c->inval_lock);
	if (queue)
		mod_delayed_work(system_wq, &c->reap_work, 0);
	return true;
}

static const struct mmu_interval_notifier_ops mrrc_region_notifier_ops = {
	.invalidate = mrrc_region_invalidate,
};

/*
 * c->index[] mirrors the class trees for hits taken without c->mutex.  A
 * region it has no room for (no memory) is only found under c->mutex.
 * One it cannot let go of (a "zombie") stays allocated, on c->zombies,
 * until a later locked request manages to erase it (mrrc_index_retry()) or
 * the cache goes: a hit that finds it fails to take a reference (users 0),
 * or sees it no longer cached, and takes the locked path.  Its range gets
 * no unlocked hits meanwhile: a region cached over it cannot be indexed
 * (nor one the tree had no memory for) until a locked hit on it tries
 * again.  The tries after the first do not wait for memory.
 */
static void mrrc_index_insert(struct mrrc_cache *c, struct mrrc_region *r,
			      gfp_t gfp)
{
	r->indexed = !mtree_insert_range(&c->index[r->access], r->it.start,
					 r->it.last, r, gfp);
}

/* Take @r's range out of its index; a maple tree may need memory for it. */
static noinline int mrrc_index_clear(struct mrrc_cache *c,
				     struct mrrc_region *r, gfp_t gfp)
{
	return mtree_store_range(&c->index[r->access], r->it.start,
				 r->it.last, NULL, gfp);
}

/* mrrc_fail_nth: index_erase_fails_then_is_retried */
ALLOW_ERROR_INJECTION(mrrc_index_clear, ERRNO);

static void mrrc_index_erase(struct mrrc_cache *c, struct mrrc_region *r)
{
	if (!r->indexed)
		return;
	r->indexed = false;
	if (mrrc_index_clear(c, r, GFP_KERNEL))
		r->zombie = true;
}

/* Try again to erase the zombies; those erased go after a grace period. */
static void mrrc_index_retry(struct mrrc_cache *c)
{
	struct mrrc_region *r, *tmp;

	lockdep_assert_held(&c->mutex);
	list_for_each_entry_safe(r, tmp, &c->zombies, node) {
		if (mrrc_index_clear(c, r, GFP_NOWAIT | __GFP_NOWARN))
			break;	/* still no memory: next time */
		list_del(&r->node);
		c->nzombies--;
		kfree_rcu(r, rcu);
	}
}

static void mrrc_cache_touch(struct mrrc_cache *c, struct mrrc_region *r,
			     unsigned int n);

static int mrrc_cmp_hit_seq(void *priv, const struct list_head *a,
			    const struct list_head *b)
{
	const struct mrrc_region *x = list_entry(a, struct mrrc_region,
						 touch_list);
	const struct mrrc_region *y = list_entry(b, struct mrrc_region,
						 touch_list);

	/* Word-sized, so never torn; compared as a wrapping clock. */
	return (long)(READ_ONCE(x->hit_seq) - READ_ONCE(y->hit_seq)) > 0;
}

/*
 * Apply the hits taken without c->mutex: each region as often as it was
 * hit (GDSF counts them), the regions in the order of their last hits, so
 * that the stack and the priorities are what they would be had every hit
 * taken the mutex.  Called before anything reads the stack, and before a
 * region that may be on c->touched is freed.
 */
static void mrrc_cache_sync_touches(struct mrrc_cache *c)
{
	struct mrrc_region *r, *tmp;
	struct llist_node *first;
	LIST_HEAD(todo);
	int n;

	lockdep_assert_held(&c->mutex);
	first = llist_del_all(&c->touched);
	if (!first)
		return;
	llist_for_each_entry_safe(r, tmp, first, touch_node) {
		/* After reading ->next: a new hit may queue it again. */
		clear_bit_unlock(MRRC_REGION_TOUCHED, &r->touch);
		list_add_tail(&r->touch_list, &todo);
	}
	list_sort(NULL, &todo, mrrc_cmp_hit_seq);
	list_for_each_entry_safe(r, tmp, &todo, touch_list) {
		list_del(&r->touch_list);
		/* 0 if a hit since the bit was cleared came first. */
		n = atomic_xchg(&r->hits, 0);
		if (r->cached && n > 0)
			mrrc_cache_touch(c, r, n);
	}
}

void mrrc_region_remove_cached(struct mrrc_cache *c, struct mrrc_region *r)
{
	lockdep_assert_held(&c->mutex);
	if (c->policy->erase)
		c->policy->erase(c, r);
	interval_tree_remove(&r->it, &c->tree[r->access]);
	mrrc_index_erase(c, r);
	list_del_init(&r->node);
	WRITE_ONCE(r->cached, false);
	c->st.cached_pages -= mrrc_region_pages(r);
	c->st.cached_regions--;
}

/*
 * Take @r out of the cache and drop the cache's reference: true if nothing
 * else referenced it (the caller destroys it); else its last user does.
 * Unlike a policy's eviction, which claims an unreferenced region first.
 */
static bool mrrc_region_uncache(struct mrrc_cache *c, struct mrrc_region *r)
{
	mrrc_region_remove_cached(c, r);
	return !atomic_sub_return(MRRC_REGION_CACHED, &r->users);
}

/*
 * Deregister every region on @list (all unreferenced, none cached) as one
 * batch and free them.
 */
void mrrc_regions_destroy(struct mrrc_cache *c, struct list_head *list)
{
	struct mrrc_region *r, *tmp;
	unsigned int n = 0;
	u64 pages = 0, deferred, t0;

	lockdep_assert_held(&c->mutex);
	if (list_empty(list))
		return;

	list_for_each_entry(r, list, node) {
		if (test_bit(MRRC_REGION_TOUCHED, &r->touch))
			mrrc_cache_sync_touches(c);
		if (r->has_notifier) {
			mmu_interval_notifier_remove(&r->notifier);
			r->has_notifier = false;
		}
		spin_lock(&c->inval_lock);
		list_del_init(&r->inval_node);
		spin_unlock(&c->inval_lock);
		n++;
		pages += mrrc_region_pages(r);
	}

	t0 = mrrc_cost_clock(c);
	deferred = c->reg->dereg(c, list, n, pages);
	mrrc_cost_dereg(c, n, t0);
	c->st.deregistrations += n;
	c->st.dereg_pages += pages;
	c->st.dereg_batches++;
	c->st.max_batch = max_t(u64, c->st.max_batch, n);
	c->st.pinned_pages -= mrrc_cache_user(c) ? pages - deferred : 0;
	/* The reaper unpins them once their invalidation has completed. */
	if (deferred && !c->dying)
		queue_delayed_work(system_wq, &c->reap_work, 1);

	/* An unlocked hit may still be looking at them. */
	list_for_each_entry_safe(r, tmp, list, node) {
		list_del(&r->node);
		if (r->zombie) {
			list_add(&r->node, &c->zombies);
			c->nzombies++;
		} else {
			kfree_rcu(r, rcu);
		}
	}
}

void mrrc_region_destroy(struct mrrc_cache *c, struct mrrc_region *r)
{
	LIST_HEAD(one);

	list_add(&r->node, &one);
	mrrc_regions_destroy(c, &one);
}

/*
 * Drop a reference: true if it was the last one, the region no longer
 * cached (nothing can take a reference from 0): the caller then destroys
 * it under c->mutex with mrrc_region_last_put().  Until then the region
 * still counts in ninuse, so that no mode change slips in between.
 */
static bool mrrc_region_unref(struct mrrc_cache *c, struct mrrc_region *r)
{
	int v = atomic_dec_return(&r->users);

	if (v && !(v & MRRC_REGION_REFS))
		atomic_long_dec(&c->ninuse);
	return !v;
}

static void mrrc_region_last_put(struct mrrc_cache *c, struct mrrc_region *r)
{
	lockdep_assert_held(&c->mutex);
	mrrc_region_destroy(c, r);
	atomic_long_dec(&c->ninuse);
}

/* Drop a reference; an uncached region goes with its last user. */
static void mrrc_region_put(struct mrrc_cache *c, struct mrrc_region *r)
{
	lockdep_assert_held(&c->mutex);
	if (mrrc_region_unref(c, r))
		mrrc_region_last_put(c, r);
}

/* mrrc_region_put() without c->mutex held. */
static void mrrc_region_put_unlocked(struct mrrc_cache *c,
				     struct mrrc_region *r)
{
	if (!mrrc_region_unref(c, r))
		return;
	mutex_lock(&c->mutex);
	mrrc_region_last_put(c, r);
	mutex_unlock(&c->mutex);
}

/*
 * Take a reference to a region that has one already (under a handle's
 * xarray lock) or is cached (under c->mutex).  Either keeps a mode change
 * out, so ninuse may count the first reference after it is taken; unlike
 * in mrrc_region_tryget(), which races one.
 */
static void mrrc_region_get(struct mrrc_cache *c, struct mrrc_region *r)
{
	if ((atomic_inc_return(&r->users) & MRRC_REGION_REFS) == 1)
		atomic_long_inc(&c->ninuse);
}

/*
 * Take a reference unless @r is on its way out (users 0); under RCU.
 * ninuse goes up first: CACHE_CONFIG changes the mode only while it is 0
 * and nothing is cached, and a region this reference keeps alive must be
 * deregistered by the registrar that registered it.
 */
static bool mrrc_region_tryget(struct mrrc_cache *c, struct mrrc_region *r)
{
	int old;

	atomic_long_inc(&c->ninuse);
	smp_mb__after_atomic();	/* before the reference is seen */
	old = atomic_fetch_add_unless(&r->users, 1, 0);
	if (!old || ((old + 1) & MRRC_REGION_REFS) != 1)
		atomic_long_dec(&c->ninuse);
	return old;
}

/* ---- registrations posted by the data path ------------------------------ */

/* How long a request waits for another connection's REG_MR. */
#define MRRC_DEFER_WAIT_S	30

/**
 * mrrc_cache_defer_done() - a deferred REG_MR completed, or never will
 * @d: from mrrc_cache_reg_defer(); not to be touched after this call
 * @ok: it completed successfully
 *
 * Any context.  The region's reference is dropped later, under c->mutex.
 */
void mrrc_cache_defer_done(struct mrrc_defer *d, bool ok)
{
	struct mrrc_region *r = d->r;
	struct mrrc_cache *c = r->cache;

	spin_lock_bh(&c->defer_lock);
	WRITE_ONCE(r->defer_state, ok ? MRRC_DEFER_DONE : MRRC_DEFER_FAILED);
	list_add_tail(&d->node, &c->defer_done);
	spin_unlock_bh(&c->defer_lock);
	/*
	 * The next request reaps it; the reaper a tick later if none comes.
	 * Cache destroy reaps every deferral before it cancels the reaper.
	 */
	queue_delayed_work(system_wq, &c->reap_work, 1);
}

static bool mrrc_cache_has_deferred(struct mrrc_cache *c)
{
	return !list_empty_careful(&c->defer_done);
}

/*
 * Drop the references of completed deferrals.  A failed one leaves its
 * region broken: out of the cache, its MR destroyed with it.
 */
static void mrrc_cache_defer_reap(struct mrrc_cache *c)
{
	struct mrrc_defer *d, *tmp;
	LIST_HEAD(todo);

	lockdep_assert_held(&c->mutex);
	spin_lock_bh(&c->defer_lock);
	list_splice_init(&c->defer_done, &todo);
	spin_unlock_bh(&c->defer_lock);

	list_for_each_entry_safe(d, tmp, &todo, node) {
		struct mrrc_region *r = d->r;

		if (r->defer_state == MRRC_DEFER_FAILED) {
			r->reg_failed = true;
			c->st.reg_chain_failures++;
			/* The deferral's reference keeps it. */
			if (r->cached)
				WARN_ON(mrrc_region_uncache(c, r));
		}
		/*
		 * Last: an unlocked hit that sees no deferral (acquire) sees
		 * a failed region out of the cache.
		 */
		smp_store_release(&r->defer, NULL);
		c->ndefer--;
		kfree(d);
		mrrc_region_put(c, r);
	}
}

/* A request failed after some of its misses were prepared: none is posted. */
static void mrrc_defer_abort(struct mrrc_cache *c, struct mrrc_defer_list *dl)
{
	unsigned int i;

	if (!dl || !dl->n)
		return;
	for (i = 0; i < dl->n; i++)
		mrrc_cache_defer_done(dl->d[i], false);
	dl->n = 0;
	mrrc_cache_defer_reap(c);
}

/* Take every invalidated region out of the trees. */
static void mrrc_cache_reap(struct mrrc_cache *c)
{
	struct mrrc_region *r, *tmp;
	LIST_HEAD(victims);
	LIST_HEAD(todo);

	lockdep_assert_held(&c->mutex);
	spin_lock(&c->inval_lock);
	list_splice_init(&c->invalid, &todo);
	spin_unlock(&c->inval_lock);

	/*
	 * @todo is ours: the notifier never adds a region twice, and every
	 * other user of ->inval_node holds c->mutex.
	 */
	list_for_each_entry_safe(r, tmp, &todo, inval_node) {
		list_del_init(&r->inval_node);
		if (!r->cached)
			continue;	/* uncached and in use: goes on release */
		c->st.invalidations++;
		trace_mrrc_invalidate(c->pid, r->it.start, mrrc_region_pages(r),
				      mrrc_region_refs(r));
		if (mrrc_region_uncache(c, r))
			list_add_tail(&r->node, &victims);
	}
	mrrc_regions_destroy(c, &victims);
}

static void mrrc_cache_reap_work(struct work_struct *work)
{
	struct mrrc_cache *c = container_of(to_delayed_work(work),
					    struct mrrc_cache, reap_work);

	mutex_lock(&c->mutex);
	if (!c->dying) {
		mrrc_cache_defer_reap(c);
		mrrc_cache_reap(c);
		/* Invalidations still in flight: look again in a tick. */
		if (c->reg->reap && c->reg->reap(c))
			queue_delayed_work(system_wq, &c->reap_work, 1);
	}
	mutex_unlock(&c->mutex);
}

/* Wait for every invalidation in flight; c->mutex held. */
static void mrrc_cache_quiesce(struct mrrc_cache *c)
{
	lockdep_assert_held(&c->mutex);
	if (c->reg->quiesce)
		c->reg->quiesce(c);
}

/*
 * Whether the notifier has queued anything.  Lockless: a thread that
 * unmapped memory sees its own invalidation here, because the notifier ran
 * in its munmap() before this request; an invalidation racing with the
 * request from another thread is a race in the application either way.
 */
static bool mrrc_cache_has_invalid(struct mrrc_cache *c)
{
	return !list_empty_careful(&c->invalid);
}

/* ---- replacement policies ----------------------------------------------- */

bool mrrc_cache_fits(struct mrrc_cache *c, u64 pages, u32 regions)
{
	return c->st.cached_pages + pages <= c->cfg.max_pages &&
	       c->st.cached_regions + regions <= c->cfg.max_regions;
}

/**
 * mrrc_cache_need() - what must go for a request to fit
 * @c: the cache, c->mutex held
 * @pages: pages the request needs room for
 * @regions: regions it needs room for
 * @need_pages: the pages missing
 * @need_regions: the regions missing
 */
void mrrc_cache_need(struct mrrc_cache *c, u64 pages, u32 regions,
		     u64 *need_pages, u64 *need_regions)
{
	*need_pages = 0;
	*need_regions = 0;
	if (c->st.cached_pages + pages > c->cfg.max_pages)
		*need_pages = c->st.cached_pages + pages - c->cfg.max_pages;
	if (c->st.cached_regions + regions > c->cfg.max_regions)
		*need_regions = c->st.cached_regions + regions -
				c->cfg.max_regions;
}

/**
 * mrrc_cache_segment() - what a batched eviction round must free
 * @c: the cache, c->mutex held
 * @pages: pages the request needs room for
 * @regions: regions it needs room for
 * @seg_pages: evict_pct of the capacity, and at least the pages missing
 * @seg_regions: the regions missing
 */
void mrrc_cache_segment(struct mrrc_cache *c, u64 pages, u32 regions,
			u64 *seg_pages, u64 *seg_regions)
{
	u64 need_pages;

	mrrc_cache_need(c, pages, regions, &need_pages, seg_regions);
	*seg_pages = max_t(u64, div_u64(c->cfg.max_pages * c->cfg.evict_pct,
					100), need_pages);
}

/*
 * The bottom-most unreferenced region of the stack, claimed
 * (mrrc_region_claim()), or NULL.
 */
struct mrrc_region *mrrc_stack_victim(struct mrrc_cache *c)
{
	struct mrrc_region *r;

	list_for_each_entry_reverse(r, &c->stack, node)
		if (mrrc_region_claim(r))
			return r;
	return NULL;
}

static const struct mrrc_policy_ops *const mrrc_policies[] = {
	[MRRC_POLICY_MRE] = &mrrc_policy_mre,
	[MRRC_POLICY_LRU] = &mrrc_policy_lru,
	[MRRC_POLICY_NONE] = &mrrc_policy_none,
	[MRRC_POLICY_GDSF] = &mrrc_policy_gdsf,
	[MRRC_POLICY_GDSF_BATCH] = &mrrc_policy_gdsf_batch,
};

/* Make room for @pages in @regions new regions, or fail with -ENOSPC. */
static int mrrc_cache_make_room(struct mrrc_cache *c, u64 pages, u32 regions)
{
	int ret;

	if (mrrc_cache_fits(c, pages, regions))
		return 0;
	ret = c->policy->evict(c, pages, regions);
	if (ret)
		return ret;
	return mrrc_cache_fits(c, pages, regions) ? 0 : -ENOSPC;
}

/* @r was referenced @n times: to the top, and the policy counts them. */
static void mrrc_cache_touch(struct mrrc_cache *c, struct mrrc_region *r,
			     unsigned int n)
{
	list_move(&r->node, &c->stack);
	if (c->policy->touch)
		c->policy->touch(c, r, n);
}

/* Hand the cached regions from the current policy to @to. */
static void mrrc_policy_switch(struct mrrc_cache *c,
			       const struct mrrc_policy_ops *to)
{
	if (to == c->policy)
		return;
	if (c->policy->stop)
		c->policy->stop(c);
	WRITE_ONCE(c->policy, to);
	if (to->start)
		to->start(c);
}

/* ---- registration -------------------------------------------------------- */

/*
 * Prepare @r's registration for @dl's owner to post, if the registrar can:
 * 0 with the deferral in *@dp, or the registrar's error; *@dp stays NULL
 * when @r is registered the usual way, waited for.
 */
static int mrrc_region_reg(struct mrrc_cache *c, struct mrrc_region *r,
			   struct mrrc_defer_list *dl, struct mrrc_defer **dp)
{
	struct mrrc_defer *d;
	int ret;

	*dp = NULL;
	if (!dl || !c->reg->reg_prep || dl->n >= ARRAY_SIZE(dl->d))
		return c->reg->reg(c, r);
	d = kzalloc(sizeof(*d), GFP_KERNEL_ACCOUNT);
	if (!d)
		return c->reg->reg(c, r);
	ret = c->reg->reg_prep(c, r, &d->wr);
	if (ret) {
		kfree(d);
		return ret == -EOPNOTSUPP ? c->reg->reg(c, r) : ret;
	}
	d->r = r;
	d->owner = dl->owner;
	*dp = d;
	return 0;
}

/*
 * Register pages [start, last]; the region comes back with one user.  With
 * @dl, its REG_MR may be left in @dl for the caller to post (the deferral
 * holds a second reference).
 */
static noinline int mrrc_region_create(struct mrrc_cache *c,
				       unsigned long start, unsigned long last,
				       u32 access, bool cached,
				       struct mrrc_region **out,
				       struct page **kpages,
				       struct mrrc_defer_list *dl)
{
	bool watch = mrrc_cache_user(c) && cached;
	struct mrrc_defer *d;
	unsigned long seq = 0;
	struct mrrc_region *r;
	int ret, tries = 0;
	u64 t0;

	/* Callers check the capacity; this also covers uncached ranges. */
	if (last - start >= MRRC_MAX_CACHE_PAGES)
		return -ENOSPC;
again:
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return -ENOMEM;
	r->it.start = start;
	r->it.last = last;
	r->cache = c;
	r->access = access;
	r->kpages = kpages;
	INIT_LIST_HEAD(&r->node);
	INIT_LIST_HEAD(&r->inval_node);
	RB_CLEAR_NODE(&r->gd_node);

	/*
	 * Only a region that will be cached needs to learn about changes to
	 * its pages: an uncached one lives exactly as long as its user.
	 */
	if (watch) {
		ret = mmu_interval_notifier_insert(&r->notifier, c->mm,
						   start << PAGE_SHIFT,
						   (last - start + 1) << PAGE_SHIFT,
						   &mrrc_region_notifier_ops);
		if (ret)
			goto err_free;
		r->has_notifier = true;
		seq = mmu_interval_read_begin(&r->notifier);
	}

	t0 = mrrc_cost_clock(c);
	ret = mrrc_region_reg(c, r, dl, &d);
	if (!ret)
		mrrc_cost_reg(c, mrrc_region_pages(r), t0);
	r->kpages = NULL;	/* the caller's array; only used to register */
	if (ret)
		goto err_notifier;

	c->st.registrations++;
	c->st.reg_pages += mrrc_region_pages(r);
	c->st.pinned_pages += mrrc_cache_user(c) ? mrrc_region_pages(r) : 0;

	if (watch) {
		bool stale;

		/* Did the mapping change while we pinned it? */
		spin_lock(&c->inval_lock);
		stale = mmu_interval_read_retry(&r->notifier, seq);
		spin_unlock(&c->inval_lock);
		if (stale) {
			/* Never posted: destroyed with its MR. */
			r->reg_failed = !!d;
			kfree(d);
			mrrc_region_destroy(c, r);
			if (++tries < MRRC_REG_RETRIES)
				goto again;
			return -EAGAIN;
		}
	}

	mrrc_region_get(c, r);
	if (d) {
		mrrc_region_get(c, r);
		r->defer = d;
		r->defer_state = MRRC_DEFER_PENDING;
		dl->d[dl->n++] = d;
		c->ndefer++;
		c->st.reg_chained++;
	}
	*out = r;
	return 0;

err_notifier:
	if (r->has_notifier) {
		mmu_interval_notifier_remove(&r->notifier);
		spin_lock(&c->inval_lock);
		list_del_init(&r->inval_node);
		spin_unlock(&c->inval_lock);
	}
err_free:
	kfree(r);
	return ret;
}

ALLOW_ERROR_INJECTION(mrrc_region_create, ERRNO);

static void mrrc_cache_insert(struct mrrc_cache *c, struct mrrc_region *r)
{
	interval_tree_insert(&r->it, &c->tree[r->access]);
	list_add(&r->node, &c->stack);
	if (c->policy->insert)
		c->policy->insert(c, r);
	r->cached = true;
	atomic_add(MRRC_REGION_CACHED, &r->users);
	c->st.cached_pages += mrrc_region_pages(r);
	c->st.cached_regions++;
	/* Last: publishes it to unlocked hits. */
	mrrc_index_insert(c, r, GFP_KERNEL_ACCOUNT);
}

static void mrrc_fill_seg(struct mrrc_seg *s, const struct mrrc_piece *p,
			  u64 addr, u64 end)
{
	u64 first = max_t(u64, addr, (u64)p->start << PAGE_SHIFT);
	u64 past = min_t(u64, end, ((u64)p->last + 1) << PAGE_SHIFT);

	s->addr = first;
	s->length = past - first;
	s->lkey = p->r->lkey;
	s->rkey = p->r->rkey;
}

static noinline int mrrc_handle_create(struct mrrc_cache *c,
				       struct mrrc_piece *pieces,
				       unsigned int n, bool op, u32 *id)
{
	struct mrrc_handle *h;
	unsigned int i;
	int ret;

	h = kmalloc(struct_size(h, r, n), GFP_KERNEL_ACCOUNT);
	if (!h)
		return -ENOMEM;
	h->n = n;
	h->op = op;
	for (i = 0; i < n; i++)
		h->r[i] = pieces[i].r;
	/*
	 * Ids 1..max_handles: the context holds at most that many.  Cyclic:
	 * a released id is not handed out again at once, so a REG undoing
	 * its own handles never drops another thread's (RELEASE and REG run
	 * in parallel).
	 */
	ret = xa_alloc_cyclic(&c->handles, id, h,
			      XA_LIMIT(1, READ_ONCE(mrrc_max_handles)),
			      &c->handle_next, GFP_KERNEL_ACCOUNT);
	if (ret < 0) {
		kfree(h);
		return ret == -EBUSY ? -EMFILE : ret;
	}
	atomic_long_inc(&c->nhandles);
	return 0;
}

ALLOW_ERROR_INJECTION(mrrc_handle_create, ERRNO);

static void mrrc_piece_set(struct mrrc_piece *p, unsigned int n,
			   unsigned int room, unsigned long start,
			   unsigned long last, struct mrrc_region *r)
{
	if (n < room) {
		p[n].start = start;
		p[n].last = last;
		p[n].r = r;
	}
}

/*
 * Build the pieces of pages [s, l] against @root into @p, writing at most
 * @room of them.  Returns how many there are: if that is more than @room,
 * the caller makes room and plans again.
 */
static unsigned int mrrc_plan(struct rb_root_cached *root, unsigned long s,
			      unsigned long l, struct mrrc_piece *p,
			      unsigned int room, unsigned int *ncached)
{
	struct interval_tree_node *it;
	unsigned long cur = s;
	unsigned int n = 0;

	*ncached = 0;
	for (it = interval_tree_iter_first(root, s, l); it;
	     it = interval_tree_iter_next(it, s, l)) {
		if (it->start > cur)
			mrrc_piece_set(p, n++, room, cur, it->start - 1, NULL);
		mrrc_piece_set(p, n++, room, max(cur, it->start),
			       min(l, it->last),
			       container_of(it, struct mrrc_region, it));
		(*ncached)++;
		cur = it->last + 1;
	}
	if (cur <= l)
		mrrc_piece_set(p, n++, room, cur, l, NULL);
	return n;
}

static int mrrc_check_range(struct mrrc_cache *c, u64 addr, u64 len,
			    u32 access)
{
	if (!len || addr + len < addr)
		return -EINVAL;
	if (access & ~MRRC_ACCESS_ALL)
		return -EINVAL;
	if ((access & (MRRC_ACCESS_REMOTE_WRITE | MRRC_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & MRRC_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (!c->mm) {
		/* Kernel memory: the direct map or vmalloc space. */
		unsigned long first = addr, last = addr + len - 1;

		if (c->reg == &mrrc_registrar_model)
			return 0;
		if (!((virt_addr_valid((void *)first) &&
		       virt_addr_valid((void *)last)) ||
		      (is_vmalloc_addr((void *)first) &&
		       is_vmalloc_addr((void *)last))))
			return -EFAULT;
	} else if (c->reg->pins) {
		if (current->mm != c->mm)
			return -EPERM;
		if (addr + len > TASK_SIZE)
			return -EFAULT;
	}
	return 0;
}

/* Policy none: register the whole range, uncached, every time. */
static int mrrc_reg_uncached(struct mrrc_cache *c, unsigned long s,
			     unsigned long l, u64 addr, u64 len, u32 access,
			     u32 flags, struct mrrc_seg *segs,
			     struct mrrc_reg_out *out)
{
	struct mrrc_piece p = { .start = s, .last = l };
	int ret;

	ret = mrrc_region_create(c, s, l, access, false, &p.r, NULL,
				 NULL);
	if (ret)
		return ret;
	mrrc_fill_seg(&segs[0], &p, addr, addr + len);
	out->result = MRRC_RESULT_MISS;
	out->nsegs = 1;
	out->handle = 0;
	c->st.miss++;
	if (!(flags & MRRC_REG_RELEASE)) {
		ret = mrrc_handle_create(c, &p, 1, flags & MRRC_REG_OP,
					 &out->handle);
		if (!ret)
			return 0;
	}
	mrrc_region_put(c, p.r);
	return ret;
}

/*
 * A request inside one cached region, served without c->mutex: the region
 * is found in c->index[] under RCU and referenced with
 * mrrc_region_tryget(); its recency goes on c->touched.  Returns 1 when the
 * request needs the locked path (anything but such a hit, or anything
 * that path has to look at first), else what mrrc_cache_reg() returns.
 */
static int mrrc_cache_hit_unlocked(struct mrrc_cache *c, u64 addr, u64 len,
				   u32 access, u32 flags, struct mrrc_seg *segs,
				   u32 room, struct mrrc_reg_out *out)
{
	struct mrrc_defer *defer;
	struct mrrc_region *r;
	struct mrrc_piece p;
	unsigned long s, l;
	bool exact;
	int ret = 0;

	if (!READ_ONCE(mrrc_lockless_hit) || !room || !len ||
	    addr + len < addr || (access & ~MRRC_ACCESS_ALL))
		return 1;
	/* The locked path's -EPERM; and what it reaps first. */
	if ((c->mm && current->mm != c->mm) || mrrc_cache_has_invalid(c) ||
	    mrrc_cache_has_deferred(c) || !READ_ONCE(c->policy)->caches)
		return 1;
	s = addr >> PAGE_SHIFT;
	l = (addr + len - 1) >> PAGE_SHIFT;
	if (l - s + 1 > READ_ONCE(c->cfg.max_pages))
		return 1;

	rcu_read_lock();
	r = mtree_load(&c->index[access], s);
	if (r && (r->it.last < l || !mrrc_region_tryget(c, r)))
		r = NULL;
	rcu_read_unlock();
	if (!r)
		return 1;
	/*
	 * Referenced, it stays allocated.  Out of the cache, invalidated
	 * (the notifier ran in this thread's munmap() before this request,
	 * if this thread unmapped it), or its REG_MR in flight: the locked
	 * path decides.
	 */
	/* Pairs with mrrc_cache_defer_reap(): a failed region is uncached. */
	defer = smp_load_acquire(&r->defer);
	if (defer || !READ_ONCE(r->cached) || READ_ONCE(r->invalid)) {
		mrrc_region_put_unlocked(c, r);
		return 1;
	}

	p.start = s;
	p.last = l;
	p.r = r;
	mrrc_fill_seg(&segs[0], &p, addr, addr + len);
	exact = r->it.start == s && r->it.last == l;
	out->result = exact ? MRRC_RESULT_EXACT : MRRC_RESULT_SUBSET;
	out->nsegs = 1;
	out->handle = 0;
	/* The hit's time (the count of unlocked hits) orders the touches. */
	WRITE_ONCE(r->hit_seq,
		   (unsigned long)atomic64_inc_return(&c->ul_hits));
	if (exact)
		atomic64_inc(&c->ul_exact);
	/*
	 * Saturating, without a cmpxchg loop: racing hits can pass the
	 * bound by one each, far from overflowing.  A region already queued
	 * is not written again.
	 */
	if (atomic_read(&r->hits) < MRRC_REGION_MAX_HITS) {
		atomic_inc(&r->hits);
		/*
		 * Before the bit is read, as the sync clears the bit before
		 * it takes the count: one of them sees the other.
		 */
		smp_mb__after_atomic();
	}
	if (!test_bit(MRRC_REGION_TOUCHED, &r->touch) &&
	    !test_and_set_bit(MRRC_REGION_TOUCHED, &r->touch))
		llist_add(&r->touch_node, &c->touched);

	if (!(flags & MRRC_REG_RELEASE))
		ret = mrrc_handle_create(c, &p, 1, flags & MRRC_REG_OP,
					 &out->handle);
	if (ret || (flags & MRRC_REG_RELEASE))
		mrrc_region_put_unlocked(c, r);
	return ret;
}

/**
 * mrrc_cache_reg() - make [addr, addr + len) usable with @access
 * @c: the cache
 * @addr: first byte
 * @len: bytes
 * @access: MRRC_ACCESS_* bits
 * @flags: MRRC_REG_* flags
 * @segs: receives the segments, in address order
 * @room: entries @segs has
 * @out: handle, result and number of segments
 *
 * Return: 0; -EINVAL for a bad range or access; -EPERM when called from
 * another mm than the cache's; -EFAULT for a range beyond user space;
 * -ENOSPC when the range exceeds the capacity or regions in use leave no
 * room; -EOVERFLOW when @room is too small (nothing is done) unless
 * @flags has MRRC_REG_WHOLE; -EAGAIN when
 * the range kept changing while it was being registered; or the
 * registrar's error.  On error nothing is left referenced.
 */
int mrrc_cache_reg(struct mrrc_cache *c, u64 addr, u64 len, u32 access,
		   u32 flags, struct mrrc_seg *segs, u32 room,
		   struct mrrc_reg_out *out)
{
	return mrrc_cache_reg_defer(c, addr, len, access, flags, segs, room,
				    out, NULL);
}

/**
 * mrrc_cache_reg_defer() - mrrc_cache_reg(), leaving misses' REG_MRs to post
 * @c: the cache
 * @addr: first byte
 * @len: bytes
 * @access: MRRC_ACCESS_* bits
 * @flags: MRRC_REG_* flags
 * @segs: receives the segments, in address order
 * @room: entries @segs has
 * @out: handle, result and number of segments
 * @dl: NULL, or @dl->owner (n 0) set: regions registered for this request
 *	may come back unregistered, their REG_MRs in @dl, which the caller
 *	posts on @dl->owner's queue pair before anything that uses the
 *	segments, and ends each with mrrc_cache_defer_done() (from its
 *	completion, or with false if it could not be posted)
 *
 * A range that meets a cached region whose REG_MR is still in flight on
 * another owner's queue pair is registered whole, uncached, instead of
 * waiting for it.
 *
 * Return: as mrrc_cache_reg().  On error @dl is empty.
 */
int mrrc_cache_reg_defer(struct mrrc_cache *c, u64 addr, u64 len, u32 access,
			 u32 flags, struct mrrc_seg *segs, u32 room,
			 struct mrrc_reg_out *out, struct mrrc_defer_list *dl)
{
	struct rb_root_cached *root = &c->tree[access & MRRC_ACCESS_ALL];
	struct mrrc_piece small[8], *pieces = small;
	unsigned int n, i, ncached, ngaps;
	unsigned long s, l;
	u64 gap_pages = 0;
	int ret;

	ret = mrrc_cache_hit_unlocked(c, addr, len, access, flags, segs, room,
				      out);
	if (ret <= 0)
		return ret;

	mutex_lock(&c->mutex);
	ret = mrrc_check_range(c, addr, len, access);
	if (ret)
		goto out_unlock;
	s = addr >> PAGE_SHIFT;
	l = (addr + len - 1) >> PAGE_SHIFT;
	if (l - s + 1 > c->cfg.max_pages) {
		ret = -ENOSPC;
		goto out_unlock;
	}
	c->st.requests++;
	if (mrrc_cache_has_invalid(c))
		mrrc_cache_reap(c);
	if (mrrc_cache_has_deferred(c))
		mrrc_cache_defer_reap(c);
	mrrc_cache_sync_touches(c);
	if (unlikely(!list_empty(&c->zombies)))
		mrrc_index_retry(c);

	if (!c->policy->caches) {
		ret = room ? mrrc_reg_uncached(c, s, l, addr, len, access,
					       flags, segs, out) : -EOVERFLOW;
		goto out_unlock;
	}

	/* One tree walk in the common case; a second only to fill a bigger array. */
	n = mrrc_plan(root, s, l, small, ARRAY_SIZE(small), &ncached);
	if (n > room) {
		/* Before any allocation: n is the caller's to make huge. */
		if ((flags & MRRC_REG_WHOLE) && room) {
			c->st.whole_ranges++;
			ret = mrrc_reg_uncached(c, s, l, addr, len, access,
						flags, segs, out);
		} else {
			ret = -EOVERFLOW;
		}
		goto out_unlock;
	}
	if (n > ARRAY_SIZE(small)) {
		pieces = kmalloc_array(n, sizeof(*pieces), GFP_KERNEL_ACCOUNT);
		if (!pieces) {
			ret = -ENOMEM;
			goto out_unlock;
		}
		mrrc_plan(root, s, l, pieces, n, &ncached);
	}
	ngaps = n - ncached;

	/*
	 * A cached piece still registering on another connection's queue
	 * pair, which its peer may hold up for as long as it likes, is not
	 * waited for: this request registers its range privately instead.
	 */
	for (i = 0; i < n; i++) {
		struct mrrc_region *r = pieces[i].r;

		if (!r || !r->defer || (dl && r->defer->owner == dl->owner))
			continue;
		c->st.reg_chain_uncached++;
		ret = mrrc_reg_uncached(c, s, l, addr, len, access, flags,
					segs, out);
		goto out_free;
	}

	/* Pin the cached pieces against eviction, then make room. */
	for (i = 0; i < n; i++) {
		if (pieces[i].r) {
			mrrc_region_get(c, pieces[i].r);
			continue;
		}
		gap_pages += pieces[i].last - pieces[i].start + 1;
		if (c->policy->miss)
			c->policy->miss(c, pieces[i].start, pieces[i].last);
	}
	ret = mrrc_cache_make_room(c, gap_pages, ngaps);

	for (i = 0; !ret && i < n; i++) {
		if (pieces[i].r)
			continue;
		ret = mrrc_region_create(c, pieces[i].start, pieces[i].last,
					 access, true, &pieces[i].r, NULL, dl);
		if (!ret)
			mrrc_cache_insert(c, pieces[i].r);
	}
	if (ret) {
		mrrc_defer_abort(c, dl);
		for (i = 0; i < n; i++)
			if (pieces[i].r)
				mrrc_region_put(c, pieces[i].r);
		goto out_free;
	}

	/* Most recently used at the top, in address order. */
	for (i = n; i-- > 0;) {
		struct mrrc_region *r = pieces[i].r;

		mrrc_cache_touch(c, r, 1);
		/* Kept out of the index by a zombie, or by want of memory. */
		if (unlikely(r->cached && !r->indexed))
			mrrc_index_insert(c, r, GFP_NOWAIT | __GFP_ACCOUNT |
					  __GFP_NOWARN);
	}
	for (i = 0; i < n; i++)
		mrrc_fill_seg(&segs[i], &pieces[i], addr, addr + len);

	if (!ncached) {
		out->result = MRRC_RESULT_MISS;
		c->st.miss++;
		trace_mrrc_miss(c->pid, s, l - s + 1, access, out->result,
				gap_pages);
	} else if (ngaps) {
		out->result = MRRC_RESULT_OVERLAP;
		c->st.overlap++;
		trace_mrrc_miss(c->pid, s, l - s + 1, access, out->result,
				gap_pages);
	} else if (n > 1) {
		out->result = MRRC_RESULT_SPAN;
		c->st.hit_span++;
	} else if (pieces[0].r->it.start == s && pieces[0].r->it.last == l) {
		out->result = MRRC_RESULT_EXACT;
		c->st.hit_exact++;
	} else {
		out->result = MRRC_RESULT_SUBSET;
		c->st.hit_subset++;
	}
	out->nsegs = n;
	out->handle = 0;

	if (!(flags & MRRC_REG_RELEASE))
		ret = mrrc_handle_create(c, pieces, n, flags & MRRC_REG_OP,
					 &out->handle);
	if (ret)
		mrrc_defer_abort(c, dl);
	if (ret || (flags & MRRC_REG_RELEASE))
		for (i = 0; i < n; i++)
			mrrc_region_put(c, pieces[i].r);
out_free:
	if (pieces != small)
		kfree(pieces);
out_unlock:
	mutex_unlock(&c->mutex);
	return ret;
}

/**
 * mrrc_cache_reg_pages() - register a kernel page array, uncached
 * @c: a cache of kernel memory in fast mode
 * @pages: the pages, in order; they need not be contiguous
 * @npages: how many
 * @access: MRRC_ACCESS_* bits
 * @seg: receives the one segment: iova 0, @npages pages long
 * @handle: receives the handle; releasing it deregisters
 *
 * Pages have no address to key a cache on, so the registration is not
 * cached; it uses the same FRWR pools as every other one.
 *
 * Return: 0; -EINVAL for no pages, bad access, a user-memory cache or a
 * mode other than fast; -E2BIG for more pages than the largest fast MR;
 * or the registrar's error.
 */
int mrrc_cache_reg_pages(struct mrrc_cache *c, struct page **pages,
			 unsigned int npages, u32 access, struct mrrc_seg *seg,
			 u32 *handle)
{
	struct mrrc_piece p = { .start = 0, .last = npages - 1 };
	int ret;

	if (!npages || c->mm || access & ~MRRC_ACCESS_ALL)
		return -EINVAL;
	if (npages > MRRC_MAX_CACHE_PAGES)
		return -E2BIG;
	mutex_lock(&c->mutex);
	if (c->reg != &mrrc_registrar_fast) {
		ret = -EINVAL;
		goto out;
	}
	c->st.requests++;
	c->st.miss++;
	ret = mrrc_region_create(c, 0, npages - 1, access, false, &p.r, pages,
				 NULL);
	if (ret)
		goto out;
	mrrc_fill_seg(seg, &p, 0, (u64)npages << PAGE_SHIFT);
	ret = mrrc_handle_create(c, &p, 1, false, handle);
	if (ret)
		mrrc_region_put(c, p.r);
out:
	mutex_unlock(&c->mutex);
	return ret;
}

/*
 * Handles are looked up under the xarray's lock: one is released without
 * c->mutex, so whoever looks at a handle it does not own does so under
 * that lock (or takes it out, as here).  The one exception is
 * mrrc_cache_expose(), whose caller owns the operation's handle: no one
 * else can release it.
 */
static struct mrrc_handle *mrrc_handle_take(struct mrrc_cache *c, u32 id,
					    bool op)
{
	struct mrrc_handle *h;

	xa_lock(&c->handles);
	h = xa_load(&c->handles, id);
	if (h && h->op == op)
		__xa_erase(&c->handles, id);
	else
		h = NULL;
	xa_unlock(&c->handles);
	return h;
}

/* Without c->mutex unless a region goes with the handle. */
static int __mrrc_cache_release(struct mrrc_cache *c, u32 id, bool op)
{
	struct mrrc_handle *h;
	unsigned int i;

	if (mrrc_cache_has_deferred(c)) {
		mutex_lock(&c->mutex);
		mrrc_cache_defer_reap(c);
		mutex_unlock(&c->mutex);
	}
	h = mrrc_handle_take(c, id, op);
	if (!h)
		return -ENOENT;
	for (i = 0; i < h->n; i++)
		mrrc_region_put_unlocked(c, h->r[i]);
	atomic_long_dec(&c->nhandles);
	kfree(h);
	return 0;
}

/**
 * mrrc_cache_release() - drop a handle
 * @c: the cache
 * @id: handle from mrrc_cache_reg()
 *
 * Return: 0, or -ENOENT if @id names no handle (an operation's handle,
 * see MRRC_REG_OP, counts as none).
 */
int mrrc_cache_release(struct mrrc_cache *c, u32 id)
{
	return __mrrc_cache_release(c, id, false);
}

/**
 * mrrc_cache_release_op() - drop an in-flight operation's handle
 * @c: the cache
 * @id: handle from mrrc_cache_reg() with MRRC_REG_OP or from
 *	mrrc_cache_handle_ref()
 */
void mrrc_cache_release_op(struct mrrc_cache *c, u32 id)
{
	WARN_ON_ONCE(__mrrc_cache_release(c, id, true));
}

/*
 * @e's chained REG_MR failed or was never posted: its key may or may not
 * be valid, so the MR is destroyed, not invalidated.  c->mutex held.
 */
static void mrrc_expo_revoke_broken(struct mrrc_cache *c, struct mrrc_expo *e)
{
	WARN_ON_ONCE(e->n != 1);
	mrrc_frwr_unexpose_broken(c, e->fm[0]);
	e->fm[0] = NULL;
	c->st.exposed -= e->n;
	e->n = 0;
	e->rinv = false;
	e->chained = false;
}

/* Revoke every range of @e; c->mutex held. */
static void mrrc_expo_revoke(struct mrrc_cache *c, struct mrrc_expo *e)
{
	struct mrrc_frwr_mr *fms[MRRC_EXPO_MAX];
	unsigned int i, nf = 0;

	for (i = 0; i < e->n; i++) {
		if (e->fm[i] && !i && e->rinv) {
			/* The peer's SEND_WITH_INV ended this key already. */
			mrrc_frwr_unexposed(c, e->fm[0]);
		} else if (e->fm[i]) {
			fms[nf++] = e->fm[i];
		} else {
			/* Destroying the MR ends its key. */
			ib_dereg_mr(e->mr[i]);
		}
		e->fm[i] = NULL;
		e->mr[i] = NULL;
	}
	mrrc_frwr_unexpose(c, fms, nf);
	c->st.exposed -= e->n;
	e->n = 0;
	e->rinv = false;
	e->chained = false;
}

/**
 * mrrc_cache_expose() - give a peer exactly an operation's bytes
 * @c: the cache
 * @id: the operation's handle (MRRC_REG_OP), from mrrc_cache_reg() or
 *	mrrc_cache_handle_ref()
 * @segs: the segments that call returned, one per region of the handle;
 *	each one's rkey becomes its exposure's key
 * @n: entries of @segs
 * @access: MRRC_ACCESS_* rights the peer gets
 * @e: receives the exposure; revoke it with mrrc_cache_unexpose()
 * @prep: NULL, or room for one REG_MR: a single fast range may then be
 *	left unregistered with e->chained set, its REG_MR in @prep for the
 *	caller to post on the operation's connection before anything that
 *	tells the peer the key; the caller then calls mrrc_cache_expo_done()
 *	once it knows whether the REG_MR executed, or that it never will
 *
 * The regions of the cache stay local (their keys carry no remote rights
 * for the data path).  Each segment gets a registration of its own over
 * exactly its bytes: in a fast cache a pooled MR mapped onto the region's
 * pages (one work request), otherwise, or when the segment is larger than
 * the biggest pooled MR, an ordinary registration of the byte range.
 *
 * Return: 0 or a negative errno (-EAGAIN beyond max_exposed, -EPERM from
 * another address space, -ENOMEM, -EIO, -ETIMEDOUT, or what
 * ib_reg_user_mr() returns); nothing is exposed on error.
 */
int mrrc_cache_expose(struct mrrc_cache *c, u32 id, struct mrrc_seg *segs,
		      unsigned int n, u32 access, struct mrrc_expo *e,
		      struct ib_reg_wr *prep)
{
	struct mrrc_frwr_mr *fms[MRRC_EXPO_MAX];
	struct mrrc_region *frs[MRRC_EXPO_MAX];
	struct mrrc_seg fsegs[MRRC_EXPO_MAX];
	unsigned int fidx[MRRC_EXPO_MAX];
	unsigned int i, nf = 0;
	struct mrrc_handle *h;
	int ret = 0;

	memset(e, 0, sizeof(*e));
	/* ib_reg_user_mr() pins current->mm's pages. */
	if (current->mm != c->mm)
		return -EPERM;
	mutex_lock(&c->mutex);
	h = xa_load(&c->handles, id);
	if (WARN_ON_ONCE(!h || !h->op || h->n != n || n > MRRC_EXPO_MAX ||
			 !c->mm)) {
		ret = -EINVAL;
		goto out;
	}
	/* Each range is an MR of the device: a context's share is bounded. */
	if (c->st.exposed + n > READ_ONCE(mrrc_max_exposed)) {
		ret = -EAGAIN;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct mrrc_region *r = h->r[i];
		u64 pages = ((segs[i].addr + segs[i].length - 1) >> PAGE_SHIFT) -
			    (segs[i].addr >> PAGE_SHIFT) + 1;

		if (c->reg == &mrrc_registrar_fast && r->priv && c->frwr &&
		    pages <= mrrc_frwr_max_pages(c->frwr)) {
			frs[nf] = r;
			fsegs[nf] = segs[i];
			fidx[nf++] = i;
			continue;
		}
		e->mr[i] = ib_reg_user_mr(c->pd, segs[i].addr, segs[i].length,
					  segs[i].addr, mrrc_ib_access(access));
		if (PTR_ERR_OR_ZERO(e->mr[i]) == -ENOMEM && c->reg->quiesce) {
			/* Evicted pages may hold the memlock budget: free it. */
			c->reg->quiesce(c);
			e->mr[i] = ib_reg_user_mr(c->pd, segs[i].addr,
						  segs[i].length, segs[i].addr,
						  mrrc_ib_access(access));
		}
		if (IS_ERR(e->mr[i])) {
			ret = PTR_ERR(e->mr[i]);
			e->mr[i] = NULL;
			break;
		}
		segs[i].rkey = e->mr[i]->rkey;
		c->st.expo_ordinary++;
	}
	if (prep && (n != 1 || nf != 1))
		prep = NULL;
	if (!ret && nf)
		ret = mrrc_frwr_expose(c, frs, fsegs, nf, access, fms, prep);
	if (ret) {
		for (i = 0; i < n; i++)
			if (e->mr[i])
				ib_dereg_mr(e->mr[i]);
		memset(e, 0, sizeof(*e));
		goto out;
	}
	for (i = 0; i < nf; i++) {
		e->fm[fidx[i]] = fms[i];
		segs[fidx[i]].rkey = fsegs[i].rkey;
	}
	for (i = 0; i < n; i++)
		trace_mrrc_expose(c->pid, segs[i].addr, segs[i].length,
				  segs[i].rkey, e->fm[i]);
	e->n = n;
	if (prep) {
		e->chained = true;
		e->reg_state = MRRC_DEFER_PENDING;
		c->st.expo_chained++;
	}
	c->st.exposures += n;
	c->st.exposed += n;
out:
	mutex_unlock(&c->mutex);
	return ret;
}

/**
 * mrrc_cache_unexpose() - end an exposure
 * @c: the cache
 * @e: from mrrc_cache_expose(); nothing happens when already revoked
 *
 * When it returns, no key of @e reaches memory any more: the fast MRs are
 * invalidated (or destroyed if that failed), the ordinary ones destroyed.
 */
void mrrc_cache_unexpose(struct mrrc_cache *c, struct mrrc_expo *e)
{
	if (!e->n)
		return;
	/*
	 * A REG_MR still queued on the connection must not execute after the
	 * invalidation: wait for its completion, or its flush when the
	 * connection fails or goes (the transport bounds both).
	 */
	while (e->chained &&
	       !wait_event_timeout(c->defer_wq,
				   /* pairs with mrrc_cache_expo_done() */
				   smp_load_acquire(&e->reg_state) !=
				   MRRC_DEFER_PENDING,
				   MRRC_DEFER_WAIT_S * HZ))
		pr_warn_ratelimited("an exposure's REG_MR has not completed in %d s\n",
				    MRRC_DEFER_WAIT_S);
	mutex_lock(&c->mutex);
	if (e->chained && e->reg_state != MRRC_DEFER_DONE)
		mrrc_expo_revoke_broken(c, e);
	else
		mrrc_expo_revoke(c, e);
	mutex_unlock(&c->mutex);
}

/**
 * mrrc_cache_expo_done() - an exposure's chained REG_MR completed, or never
 *	will
 * @c: the cache
 * @e: the exposure (e->chained); not to be touched after this call
 * @ok: it completed successfully
 *
 * Any context.
 */
void mrrc_cache_expo_done(struct mrrc_cache *c, struct mrrc_expo *e, bool ok)
{
	/* The MR's state, seen by mrrc_cache_unexpose() with the state. */
	smp_store_release(&e->reg_state,
			  ok ? MRRC_DEFER_DONE : MRRC_DEFER_FAILED);
	wake_up_all(&c->defer_wq);
}

/**
 * mrrc_cache_export_count() - account an export made (@n 1) or revoked (-1)
 * @c: the cache
 * @n: 1 or -1
 * @bytes: the export's length
 */
void mrrc_cache_export_count(struct mrrc_cache *c, int n, u64 bytes)
{
	mutex_lock(&c->mutex);
	if (n > 0) {
		c->st.exports++;
		c->st.exported++;
		c->st.export_bytes += bytes;
	} else {
		c->st.exported--;
		c->st.export_bytes -= bytes;
	}
	mutex_unlock(&c->mutex);
}

/**
 * mrrc_cache_handle_ref() - take a new handle on part of a handle's range
 * @c: the cache
 * @id: an existing handle
 * @addr: first byte, inside the handle's range
 * @len: bytes
 * @access: MRRC_ACCESS_* bits the regions must have
 * @segs: receives the segments, in address order
 * @room: entries @segs has
 * @out: the new handle and the number of segments
 *
 * For operations that name memory by handle: the new handle keeps the
 * regions alive while the operation runs, whatever happens to @id.  It is
 * an operation's handle (MRRC_REG_OP): only mrrc_cache_release_op() drops
 * it.
 *
 * Return: 0; -ENOENT if @id names no handle (or an operation's); -EINVAL if the range is empty
 * or not inside the handle, or a region lacks @access; -ESTALE if the
 * memory under a region changed since it was registered; -EOVERFLOW when
 * @room is too small; -ENOMEM.
 */
int mrrc_cache_handle_ref(struct mrrc_cache *c, u32 id, u64 addr, u64 len,
			  u32 access, struct mrrc_seg *segs, u32 room,
			  struct mrrc_reg_out *out)
{
	struct mrrc_piece pieces[8];
	struct mrrc_handle *h;
	unsigned long s, l, next;
	unsigned int i, n = 0;
	int ret = 0;

	if (!len || addr + len < addr)
		return -EINVAL;
	s = addr >> PAGE_SHIFT;
	l = (addr + len - 1) >> PAGE_SHIFT;
	room = min_t(u32, room, ARRAY_SIZE(pieces));

	/* The handle may be released meanwhile: its regions are ours first. */
	xa_lock(&c->handles);
	h = xa_load(&c->handles, id);
	if (!h || h->op) {
		xa_unlock(&c->handles);
		return -ENOENT;
	}
	next = s;
	for (i = 0; i < h->n && next <= l; i++) {
		struct mrrc_region *r = h->r[i];

		if (r->it.last < next || r->it.start > l)
			continue;
		if (r->it.start > next || (r->access & access) != access) {
			ret = -EINVAL;
			break;
		}
		if (READ_ONCE(r->invalid)) {
			ret = -ESTALE;
			break;
		}
		if (n == room) {
			ret = -EOVERFLOW;
			break;
		}
		pieces[n].start = next;
		pieces[n].last = min(l, r->it.last);
		pieces[n].r = r;
		next = pieces[n].last + 1;
		n++;
	}
	if (!ret && next <= l)
		ret = -EINVAL;
	for (i = 0; !ret && i < n; i++)
		mrrc_region_get(c, pieces[i].r);
	xa_unlock(&c->handles);
	if (ret)
		return ret;

	for (i = 0; i < n; i++)
		mrrc_fill_seg(&segs[i], &pieces[i], addr, addr + len);
	ret = mrrc_handle_create(c, pieces, n, true, &out->handle);
	if (ret) {
		for (i = 0; i < n; i++)
			mrrc_region_put_unlocked(c, pieces[i].r);
		return ret;
	}
	out->nsegs = n;
	out->result = n > 1 ? MRRC_RESULT_SPAN : MRRC_RESULT_SUBSET;
	return 0;
}

/**
 * mrrc_cache_invalidate() - drop every cached region over a range
 * @c: the cache
 * @addr: first byte
 * @len: bytes
 *
 * For memory the cache cannot watch (kernel memory) that is about to be
 * freed or reused.  Unreferenced regions are deregistered in one batch;
 * regions still referenced by handles leave the cache and are deregistered
 * when their last handle is released.
 *
 * Return: the number of regions dropped, or -EINVAL for an empty or
 * wrapping range.
 */
int mrrc_cache_invalidate(struct mrrc_cache *c, u64 addr, u64 len)
{
	struct interval_tree_node *it, *next;
	unsigned long s, l;
	LIST_HEAD(victims);
	int i, n = 0;

	if (!len || addr + len < addr)
		return -EINVAL;
	s = addr >> PAGE_SHIFT;
	l = (addr + len - 1) >> PAGE_SHIFT;

	mutex_lock(&c->mutex);
	for (i = 0; i < MRRC_ACCESS_CLASSES; i++) {
		for (it = interval_tree_iter_first(&c->tree[i], s, l); it;
		     it = next) {
			struct mrrc_region *r =
				container_of(it, struct mrrc_region, it);

			next = interval_tree_iter_next(it, s, l);
			c->st.invalidations++;
			trace_mrrc_invalidate(c->pid, r->it.start,
					      mrrc_region_pages(r),
					      mrrc_region_refs(r));
			if (mrrc_region_uncache(c, r))
				list_add_tail(&r->node, &victims);
			n++;
		}
	}
	mrrc_regions_destroy(c, &victims);
	mutex_unlock(&c->mutex);
	return n;
}

/**
 * mrrc_cache_flush() - deregister every unreferenced cached region
 * @c: the cache
 *
 * Pending invalidations are reaped first.  One deregistration batch.
 *
 * Return: the number of regions deregistered.
 */
u32 mrrc_cache_flush(struct mrrc_cache *c)
{
	struct mrrc_region *r, *tmp;
	LIST_HEAD(victims);
	u32 n = 0;

	mutex_lock(&c->mutex);
	mrrc_cache_defer_reap(c);
	mrrc_cache_reap(c);
	mrrc_cache_sync_touches(c);
	list_for_each_entry_safe(r, tmp, &c->stack, node) {
		if (!mrrc_region_claim(r))
			continue;
		mrrc_region_remove_cached(c, r);
		list_add_tail(&r->node, &victims);
		n++;
	}
	mrrc_regions_destroy(c, &victims);
	mrrc_cache_quiesce(c);
	mutex_unlock(&c->mutex);
	return n;
}

/* Snapshot @c's counters, pool counters included; c->mutex held. */
static void mrrc_cache_snapshot(struct mrrc_cache *c, struct mrrc_cache_stats *st)
{
	struct mrrc_frwr_stats fs;
	u64 exact;

	lockdep_assert_held(&c->mutex);
	*st = c->st;
	/* Exact ones first: @ul_hits is counted first. */
	exact = atomic64_read(&c->ul_exact);
	st->hit_unlocked = max_t(u64, atomic64_read(&c->ul_hits), exact);
	st->requests += st->hit_unlocked;
	st->hit_exact += exact;
	st->hit_subset += st->hit_unlocked - exact;
	st->handles = atomic_long_read(&c->nhandles);
	st->inuse_regions = atomic_long_read(&c->ninuse);
	mrrc_frwr_stats(c->frwr, &fs);
	st->pool_mrs = fs.pool_mrs;
	st->pool_free = fs.pool_free;
	st->pool_hits = fs.pool_hits;
	st->pool_misses = fs.pool_misses;
	st->pool_refills = fs.refills;
	st->pool_aged = fs.aged;
	st->reg_wrs = fs.reg_wrs;
	st->inv_wrs = fs.inv_wrs;
	st->inv_chains = fs.inv_chains;
	st->qp_resets = fs.qp_resets;
	st->fast_fallbacks = fs.fallbacks;
	st->reg_timeouts = fs.timeouts;
	spin_lock(&c->inval_lock);
	st->notifier_kept = c->kept;
	spin_unlock(&c->inval_lock);
}

void mrrc_cache_get_stats(struct mrrc_cache *c, struct mrrc_cache_stats *st)
{
	u32 size = st->size, flags = st->flags;

	mutex_lock(&c->mutex);
	mrrc_cache_snapshot(c, st);
	mutex_unlock(&c->mutex);
	st->size = size;
	st->flags = flags;
}

/* @acc += @st, member by member (every member after flags is a u64). */
static void mrrc_stats_add(struct mrrc_cache_stats *acc,
			   const struct mrrc_cache_stats *st)
{
	const u64 *from = &st->requests;
	u64 *to = &acc->requests;
	size_t i, n = (sizeof(*st) - offsetof(struct mrrc_cache_stats,
					      requests)) / sizeof(u64);
	u64 max_batch = max(acc->max_batch, st->max_batch);

	for (i = 0; i < n; i++)
		to[i] += from[i];
	/* Not sums: the largest batch, and no single recency or segment. */
	acc->max_batch = max_batch;
	acc->mre_recency = 0;
	acc->evict_segment = 0;
}

/**
 * mrrc_cache_add_stats() - add a cache's counters to a sum
 * @c: the cache
 * @acc: the sum (an isolated connection's cache to its context's)
 */
void mrrc_cache_add_stats(struct mrrc_cache *c, struct mrrc_cache_stats *acc)
{
	struct mrrc_cache_stats one;

	mutex_lock(&c->mutex);
	mrrc_cache_snapshot(c, &one);
	mutex_unlock(&c->mutex);
	mrrc_stats_add(acc, &one);
}

/**
 * mrrc_cache_global_stats() - counters summed over every cache
 * @st: filled in; @st->size and @st->flags are kept
 */
void mrrc_cache_global_stats(struct mrrc_cache_stats *st)
{
	u32 size = st->size, flags = st->flags;
	struct mrrc_cache_stats one;
	struct mrrc_cache *c;

	mutex_lock(&mrrc_caches_lock);
	*st = mrrc_retired;
	st->caches = 0;
	list_for_each_entry(c, &mrrc_caches, node) {
		mutex_lock(&c->mutex);
		mrrc_cache_snapshot(c, &one);
		mutex_unlock(&c->mutex);
		mrrc_stats_add(st, &one);
		st->caches++;
	}
	mutex_unlock(&mrrc_caches_lock);
	st->size = size;
	st->flags = flags;
}

/* debugfs "caches": one line per cache. */
void mrrc_cache_debugfs_show(struct seq_file *s)
{
	struct mrrc_frwr_stats fs;
	struct mrrc_cache_stats st;
	struct mrrc_cache *c;

	seq_puts(s, "pid mode policy regions pages pinned handles requests hits overlap miss reg dereg batches evictions invalidations pool_mrs pool_free inv_async inv_pending inv_pending_pages zombies costs\n");
	mutex_lock(&mrrc_caches_lock);
	list_for_each_entry(c, &mrrc_caches, node) {
		mutex_lock(&c->mutex);
		mrrc_cache_snapshot(c, &st);
		mrrc_frwr_stats(c->frwr, &fs);
		seq_printf(s, "%d %s %s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %u %s\n",
			   c->pid, c->reg->name,
			   c->policy->name,
			   st.cached_regions, st.cached_pages, st.pinned_pages,
			   st.handles, st.requests,
			   st.hit_exact + st.hit_subset + st.hit_span,
			   st.overlap, st.miss, st.registrations,
			   st.deregistrations, st.dereg_batches, st.evictions,
			   st.invalidations, st.pool_mrs, st.pool_free,
			   fs.inv_async, fs.inv_pending, fs.inv_pending_pages,
			   c->nzombies,
			   mrrc_cost_measuring(c) ? "measured" : "fixed");
		mutex_unlock(&c->mutex);
	}
	mutex_unlock(&mrrc_caches_lock);
}

/* ---- configuration and lifetime ---------------------------------------- */

/**
 * mrrc_cache_configure() - change the configuration, report the result
 * @c: the cache
 * @cfg: fields that are 0 (or KEEP) are left unchanged; all are written
 *	back with the configuration in force
 *
 * Return: 0; -EINVAL for an out-of-range value; -EBUSY to change the mode
 * while regions are registered, or to shrink the capacity below what
 * regions in use hold.  On error the configuration stays as it was, but
 * what a failed shrink evicted stays evicted (and the cost figures those
 * evictions fitted stand).
 */
int mrrc_cache_configure(struct mrrc_cache *c, struct mrrc_cache_config *cfg)
{
	struct mrrc_cache_config_k k;
	bool set_costs, measure, to_model;
	u32 old_mode;
	int ret = 0;

	if (!c->mm && cfg->mode == MRRC_MODE_ORDINARY)
		return -EINVAL;	/* ib_reg_user_mr() takes user memory only */
	if (cfg->policy >= ARRAY_SIZE(mrrc_policies) ||
	    cfg->mode > MRRC_MODE_FAST ||
	    cfg->resort_pct > 100 || cfg->evict_pct > 100 ||
	    cfg->max_regions > INT_MAX || cfg->max_pages > MRRC_MAX_CACHE_PAGES)
		return -EINVAL;

	mutex_lock(&c->mutex);
	/* Reaping may fit new figures: before they are taken. */
	mrrc_cache_defer_reap(c);
	mrrc_cache_sync_touches(c);
	k = c->cfg;
	old_mode = c->cfg.mode;
	if (cfg->policy)
		k.policy = cfg->policy;
	if (cfg->mode)
		k.mode = cfg->mode;
	if (cfg->max_pages)
		k.max_pages = cfg->max_pages;
	if (cfg->max_regions)
		k.max_regions = cfg->max_regions;
	if (cfg->resort_pct)
		k.resort_pct = cfg->resort_pct;
	if (cfg->evict_pct)
		k.evict_pct = cfg->evict_pct;
	measure = cfg->flags & MRRC_CACHE_MEASURE_COSTS;
	/* A cache that measured its costs leaves them for the model's. */
	to_model = k.mode == MRRC_MODE_MODEL && old_mode != MRRC_MODE_MODEL &&
		   c->cost_measured;
	if (to_model)
		mrrc_cost_defaults(&k);
	/* With MEASURE_COSTS the figures are the cache's to measure. */
	set_costs = !measure && mrrc_cost_apply(&k, &c->cfg, cfg);

	if (k.mode != c->cfg.mode &&
	    (c->st.cached_regions || atomic_long_read(&c->ninuse))) {
		ret = -EBUSY;
		goto out;
	}
	if (k.max_pages < c->st.cached_pages ||
	    k.max_regions < c->st.cached_regions) {
		struct mrrc_cache_config_k old = c->cfg;

		/*
		 * Evict down to the new limits, least recently used first.
		 * The figures stay the cache's meanwhile: the evictions may
		 * fit new ones, which stand even if this fails.
		 */
		c->cfg = k;
		mrrc_cost_copy(&c->cfg, &old);
		while (c->st.cached_pages > k.max_pages ||
		       c->st.cached_regions > k.max_regions) {
			struct mrrc_region *r = mrrc_stack_victim(c);

			if (!r) {
				mrrc_cost_copy(&old, &c->cfg);
				c->cfg = old;
				ret = -EBUSY;
				goto out;
			}
			mrrc_region_remove_cached(c, r);
			c->st.evictions++;
			mrrc_region_destroy(c, r);
		}
	}
	/* Figures the evictions fitted stand. */
	if (!set_costs && !to_model)
		mrrc_cost_copy(&k, &c->cfg);
	c->cfg = k;
	mrrc_policy_switch(c, mrrc_policies[k.policy]);
	if (k.mode != old_mode) {
		/* What the old registrar has in flight is its to finish. */
		mrrc_cache_quiesce(c);
		c->reg = mrrc_registrar_for(k.mode);
	}
	/*
	 * A caller's figures are kept; another mode costs what it costs; a
	 * cache told to measure that was not starts afresh.
	 */
	if (set_costs || k.mode != old_mode || (measure && !c->cost_measured))
		mrrc_cost_restart(c, !set_costs && (measure || c->cost_measured));
out:
	cfg->policy = c->cfg.policy;
	cfg->mode = c->cfg.mode;
	cfg->max_pages = c->cfg.max_pages;
	cfg->max_regions = c->cfg.max_regions;
	cfg->resort_pct = c->cfg.resort_pct;
	cfg->evict_pct = c->cfg.evict_pct;
	cfg->reg_ns_per_page = c->cfg.reg_ns_per_page;
	cfg->reg_ns_per_op = c->cfg.reg_ns_per_op;
	cfg->dereg_ns_per_page = c->cfg.dereg_ns_per_page;
	cfg->dereg_ns_per_op = c->cfg.dereg_ns_per_op;
	cfg->dereg_ns_per_region = c->cfg.dereg_ns_per_region;
	cfg->flags = mrrc_cost_measuring(c) ? MRRC_CACHE_COSTS_MEASURED : 0;
	mutex_unlock(&c->mutex);
	return ret;
}

static struct mrrc_cache *__mrrc_cache_create(struct ib_pd *pd,
					      struct mm_struct *mm, pid_t pid)
{
	struct mrrc_cache *c;
	int i;

	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		return ERR_PTR(-ENOMEM);
	mutex_init(&c->mutex);
	spin_lock_init(&c->inval_lock);
	for (i = 0; i < MRRC_ACCESS_CLASSES; i++) {
		c->tree[i] = RB_ROOT_CACHED;
		mt_init_flags(&c->index[i], MT_FLAGS_USE_RCU);
	}
	init_llist_head(&c->touched);
	INIT_LIST_HEAD(&c->zombies);
	INIT_LIST_HEAD(&c->stack);
	INIT_LIST_HEAD(&c->invalid);
	INIT_DELAYED_WORK(&c->reap_work, mrrc_cache_reap_work);
	spin_lock_init(&c->defer_lock);
	INIT_LIST_HEAD(&c->defer_done);
	init_waitqueue_head(&c->defer_wq);
	xa_init_flags(&c->handles, XA_FLAGS_ALLOC1);
	c->pd = pd;
	c->mm = mm;
	if (mm)
		mmgrab(mm);

	c->gd_tree = RB_ROOT;
	xa_init_flags(&c->gb_extra, XA_FLAGS_ACCOUNT);
	c->policy = mrrc_policies[MRRC_POLICY_MRE];
	c->cfg.policy = MRRC_POLICY_MRE;
	c->cfg.mode = MRRC_MODE_FAST;
	c->cfg.max_pages = min_t(u64, mrrc_default_max_pages,
				 MRRC_MAX_CACHE_PAGES);
	c->cfg.max_regions = mrrc_default_max_regions;
	c->cfg.resort_pct = 50;
	c->cfg.evict_pct = 10;
	mrrc_cost_defaults(&c->cfg);
	/* ... until its own registrations say otherwise (kmod/cost.c). */
	c->cost_measured = true;
	c->reg = mrrc_registrar_for(c->cfg.mode);
	c->pid = pid;

	mutex_lock(&mrrc_caches_lock);
	list_add_tail(&c->node, &mrrc_caches);
	mutex_unlock(&mrrc_caches_lock);
	return c;
}

/**
 * mrrc_cache_create() - a cache for user or kernel memory
 * @pd: the protection domain registrations go to
 * @mm: the address space of the registered memory (the caller's, which
 *	is grabbed), or NULL for kernel virtual addresses
 *
 * Return: the cache or an ERR_PTR.
 */
struct mrrc_cache *mrrc_cache_create(struct ib_pd *pd, struct mm_struct *mm)
{
	if (mm && mm != current->mm)
		return ERR_PTR(-EINVAL);
	return __mrrc_cache_create(pd, mm, task_tgid_vnr(current));
}

ALLOW_ERROR_INJECTION(mrrc_cache_create, ERRNO);

/**
 * mrrc_cache_create_child() - a cache for an isolated connection
 * @parent: the context's cache, whose address space and configuration
 *	the new cache takes
 * @pd: the connection's protection domain
 *
 * May be called from the RDMA CM's work context (a connection request):
 * the address space is @parent's, not the current task's.
 *
 * Return: the cache or an ERR_PTR: -EOPNOTSUPP if @parent is in model
 * mode (its keys are made up), -ENOMEM.
 */
struct mrrc_cache *mrrc_cache_create_child(struct mrrc_cache *parent,
					   struct ib_pd *pd)
{
	struct mrrc_cache_config_k k;
	struct mrrc_cache *c;
	bool measure;

	mutex_lock(&parent->mutex);
	k = parent->cfg;
	measure = parent->cost_measured;
	mutex_unlock(&parent->mutex);
	/* A model cache's keys are not real: nothing to isolate with. */
	if (k.mode == MRRC_MODE_MODEL)
		return ERR_PTR(-EOPNOTSUPP);
	c = __mrrc_cache_create(pd, parent->mm, parent->pid);
	if (IS_ERR(c))
		return c;
	/* Empty: nothing to re-sort or hand over. */
	mutex_lock(&c->mutex);
	c->cfg = k;
	c->cost_measured = measure;
	c->policy = mrrc_policies[k.policy];
	c->reg = mrrc_registrar_for(k.mode);
	mutex_unlock(&c->mutex);
	return c;
}

/**
 * mrrc_cache_destroy() - release every handle and registration
 * @c: the cache; freed
 */
void mrrc_cache_destroy(struct mrrc_cache *c)
{
	struct mrrc_cache_stats final;
	struct mrrc_region *r, *tmp;
	struct mrrc_handle *h;
	unsigned long id;
	LIST_HEAD(victims);
	unsigned int k;

	mutex_lock(&c->mutex);
	xa_for_each(&c->handles, id, h) {
		unsigned int i;

		xa_erase(&c->handles, id);
		for (i = 0; i < h->n; i++)
			mrrc_region_put(c, h->r[i]);
		atomic_long_dec(&c->nhandles);
		kfree(h);
	}
	/* The connections are gone: every deferral has completed... */
	mrrc_cache_defer_reap(c);
	/* ...unless a drain gave up on a dead device: those pages stay. */
	if (c->ndefer)
		pr_warn("%u registrations never completed: their regions stay pinned\n",
			c->ndefer);
	spin_lock(&c->inval_lock);
	c->dying = true;
	spin_unlock(&c->inval_lock);
	mutex_unlock(&c->mutex);

	cancel_delayed_work_sync(&c->reap_work);

	mutex_lock(&c->mutex);
	list_for_each_entry_safe(r, tmp, &c->stack, node) {
		/* A deferral that never completed keeps its region. */
		if (mrrc_region_uncache(c, r))
			list_add_tail(&r->node, &victims);
	}
	mrrc_regions_destroy(c, &victims);
	mrrc_cache_quiesce(c);
	mutex_unlock(&c->mutex);

	WARN_ON(c->st.cached_regions || atomic_long_read(&c->ninuse) ||
		c->st.pinned_pages || c->st.exposed || c->st.exported ||
		c->st.export_bytes);

	mutex_lock(&mrrc_caches_lock);
	list_del(&c->node);
	mutex_lock(&c->mutex);
	mrrc_cache_snapshot(c, &final);
	mutex_unlock(&c->mutex);
	/*
	 * Pool gauges go with its pools.  The others are zero unless
	 * something leaked (see the WARN above): then they stay in the
	 * global statistics, where tests see them.
	 */
	final.pool_mrs = 0;
	final.pool_free = 0;
	mrrc_stats_add(&mrrc_retired, &final);
	mutex_unlock(&mrrc_caches_lock);

	mrrc_frwr_destroy(c->frwr);
	xa_destroy(&c->handles);
	xa_destroy(&c->gb_extra);
	for (k = 0; k < MRRC_ACCESS_CLASSES; k++)
		mtree_destroy(&c->index[k]);
	list_for_each_entry_safe(r, tmp, &c->zombies, node)
		kfree_rcu(r, rcu);
	kvfree(c->sort_buf);
	if (c->mm)
		mmdrop(c->mm);
	mutex_destroy(&c->mutex);
	kfree(c);
}
