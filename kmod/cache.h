/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrrc - the memory registration region cache (MRRC).
 *
 * A cache maps user virtual page ranges to registrations.  Regions are
 * kept per access class (the MRRC_ACCESS_* bits are part of the key) in an
 * interval tree each, disjoint within a class, and on one recency stack.
 * The replacement policy (MRE, LRU or none) and the registrar (how a
 * region is registered and deregistered) are chosen per cache.
 *
 * Locking (the module's whole order is the table in mrrc.h):
 *
 *   c->mutex  ->  mmap_lock  ->  c->inval_lock
 *
 * c->mutex serialises every cache operation but three (a hit inside one
 * region, releasing a handle, and referencing a handle's regions for an
 * operation) and protects the trees, the stack, the counters in c->st
 * and each region's cached/node.
 * It may be held while pinning pages (mmap_lock) and while registering.
 * The mmu notifier callback runs under mmap_lock and takes only
 * c->inval_lock: it marks the region invalid, puts it on c->invalid and
 * queues the reaper.  Regions leave the trees only under c->mutex: by the
 * reaper, at the start of every registration request, or by eviction.
 *
 * The exception is a hit inside one cached region (module parameter
 * lockless_hit), which takes no mutex at all (mrrc_cache_hit_unlocked()):
 *
 *  - c->index[] mirrors the trees in maple trees in RCU mode; a hit looks
 *    its region up there under rcu_read_lock() and takes a reference with
 *    atomic_inc_not_zero(&r->users).  Regions are freed after a grace
 *    period (kfree_rcu()).
 *  - r->users counts references (handles, requests, deferrals) plus
 *    MRRC_REGION_CACHED while the region is cached.  A region nobody
 *    references is taken out of reach with mrrc_region_claim() (users
 *    MRRC_REGION_CACHED -> 0) before it is evicted; whoever brings users
 *    to 0 destroys the region, under c->mutex.  Nothing gets a reference
 *    from 0.
 *  - The hit's recency update is queued on c->touched (a lockless list,
 *    the region's MRRC_REGION_TOUCHED bit set while on it; its count of
 *    hits and the time of its last one in the region) and applied under
 *    c->mutex, in the order of the last hits, before a request reads the
 *    stack (mrrc_cache_sync_touches()).  A hit that comes after that,
 *    while the request is choosing its victims, is applied at the next
 *    request: like a hit that took the mutex after it.
 *  - Handles are looked up and erased under the xarray's own lock, so a
 *    handle is released without c->mutex too.
 */
#ifndef _MRRC_CACHE_H
#define _MRRC_CACHE_H

#include <linux/interval_tree.h>
#include <linux/llist.h>
#include <linux/maple_tree.h>
#include <linux/mmu_notifier.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "costfit.h"
#include "mrrc_abi.h"

#define MRRC_ACCESS_CLASSES	(MRRC_ACCESS_ALL + 1)

/*
 * Kernel-only mrrc_cache_reg() flag, outside the uapi MRRC_REG_* bits: a
 * range that would need more segments than the caller has room for is
 * registered whole, as one uncached region, instead of failing with
 * -EOVERFLOW.  The data path uses it so that an operation over a buffer
 * whose pieces were cached separately still goes out.
 */
#define MRRC_REG_WHOLE		BIT(31)
/*
 * Kernel-only: the handle pins memory for one in-flight operation.  It is
 * invisible to user-facing calls (RELEASE, a POST naming it, the exported
 * release), so a caller that guesses its number can neither drop the
 * regions under a running transfer nor borrow them; only
 * mrrc_cache_release_op() drops it.
 */
#define MRRC_REG_OP		BIT(30)

struct mrrc_cache;

/**
 * struct mrrc_region - a registered, page-aligned range of user memory
 * @it: page numbers [start, last] of the range
 * @node: position on c->stack (most recent first) while cached, or on a
 *	victim list while being deregistered
 * @inval_node: entry on c->invalid, protected by c->inval_lock
 * @cache: the owning cache
 * @evictfact: MRE eviction factor, 32.32 fixed point; 0 until assigned
 * @sort_pos: position from the bottom of the stack while MRE resorts
 * @gd_node: entry on c->gd_tree (policies gdsf and gdsf-batch only)
 * @gd_h: GDSF priority H = L + freq * cost / size, fixed point (x1024)
 * @gd_freq: GDSF reference count, since the region was registered or
 *	since a GDSF policy became the cache's (then 1)
 * @users: references (handles, the request in progress, a deferral),
 *	plus MRRC_REGION_CACHED while cached; see the top of this file
 * @access: MRRC_ACCESS_* bits
 * @cached: in its class tree and on the stack
 * @indexed: in c->index[@access] too, where unlocked hits find it
 * @zombie: could not be taken out of c->index (no memory): freed once a
 *	later try erases it, or with the cache
 * @touch: MRRC_REGION_TOUCHED while on c->touched
 * @touch_node: entry on c->touched
 * @touch_list: entry on the list mrrc_cache_sync_touches() sorts
 * @hit_seq: when its last unlocked hit was (c->ul_hits then, as a word)
 * @hits: its unlocked hits not yet applied, up to MRRC_REGION_MAX_HITS
 * @rcu: frees the region after a grace period
 * @invalid: its pages changed under it; set by the notifier under
 *	c->inval_lock
 * @has_notifier: @notifier is registered
 * @notifier: the mmu interval notifier over the range
 * @mr: the registration
 * @priv: registrar-specific state (fast: the pooled MR and its pages)
 * @kpages: for a kernel page array, the caller's pages (during
 *	registration only); NULL for a virtual range
 * @lkey: local key
 * @rkey: remote key
 * @defer: its REG_MR, left to a connection to post, not yet seen complete
 *	by mrrc_cache_defer_reap() (c->mutex)
 * @defer_state: MRRC_DEFER_* of @defer; PENDING is set before @defer is
 *	published, the rest under c->defer_lock
 * @reg_failed: its registration failed or was never posted: the key may or
 *	may not be valid, so the MR is destroyed, not invalidated, and the
 *	region is no longer cached
 */
struct mrrc_region {
	struct interval_tree_node it;
	struct list_head node;
	struct list_head inval_node;
	struct mrrc_cache *cache;
	u64 evictfact;
	unsigned int sort_pos;
	struct rb_node gd_node;
	u64 gd_h;
	u32 gd_freq;
	atomic_t users;
	u8 access;
	bool cached;
	bool indexed;
	bool zombie;
	unsigned long touch;
	struct llist_node touch_node;
	struct list_head touch_list;
	unsigned long hit_seq;
	atomic_t hits;
	struct rcu_head rcu;
	bool invalid;
	bool has_notifier;
	struct mmu_interval_notifier notifier;
	struct ib_mr *mr;
	void *priv;
	struct page **kpages;
	u32 lkey;
	u32 rkey;
	struct mrrc_defer *defer;
	int defer_state;
	bool reg_failed;
};

/* The cache's own reference to a cached region, in region->users. */
#define MRRC_REGION_CACHED	BIT(30)
#define MRRC_REGION_REFS	(MRRC_REGION_CACHED - 1)
/* Bit number in region->touch. */
#define MRRC_REGION_TOUCHED	0
/* Where region->hits stops counting (racing hits may each add one more). */
#define MRRC_REGION_MAX_HITS	(INT_MAX / 2)

/* References to @r other than the cache's own; a snapshot. */
static inline unsigned int mrrc_region_refs(const struct mrrc_region *r)
{
	return atomic_read(&r->users) & MRRC_REGION_REFS;
}

/*
 * Take cached, unreferenced @r out of every hit's reach before evicting
 * it: true if users went from MRRC_REGION_CACHED to 0; false if something
 * references it (then it stays).  c->mutex held.
 */
static inline bool mrrc_region_claim(struct mrrc_region *r)
{
	return atomic_cmpxchg(&r->users, MRRC_REGION_CACHED, 0) ==
	       MRRC_REGION_CACHED;
}

enum {
	MRRC_DEFER_NONE,
	MRRC_DEFER_PENDING,
	MRRC_DEFER_DONE,
	MRRC_DEFER_FAILED,
};

struct mrrc_conn;

/**
 * struct mrrc_defer - a miss's REG_MR posted by the data path, not waited for
 * @wr: the prepared IB_WR_REG_MR; the poster sets wr_cqe and send_flags
 * @cqe: for the poster's completion handler
 * @r: the region; the deferral holds a reference to it until reaped
 * @owner: the connection whose send queue carries @wr, compared only: its
 *	later work requests are ordered behind @wr
 * @node: on c->defer_done once complete (c->defer_lock)
 *
 * A region whose REG_MR is in flight on a connection's queue pair is cached
 * like any other.  The connection's own later operations use it at once;
 * any other request meeting it registers its range privately, uncached,
 * rather than wait for a queue pair a peer may hold up.  The completion
 * (mrrc_cache_defer_done()) lets it be reaped.
 */
struct mrrc_defer {
	struct ib_reg_wr wr;
	struct ib_cqe cqe;
	struct mrrc_region *r;
	const struct mrrc_conn *owner;
	struct list_head node;
};

#define MRRC_DEFER_MAX		8	/* deferrals per request (MRRC_OP_SGE) */

/* What one mrrc_cache_reg_defer() call left to its caller to post. */
struct mrrc_defer_list {
	const struct mrrc_conn *owner;
	unsigned int n;
	struct mrrc_defer *d[MRRC_DEFER_MAX];
};

/*
 * Upper bound of a cache's capacity, and so of one region, in pages:
 * 2^28 pages (1 TiB with 4 KiB pages).  Page counts of a region then fit
 * an unsigned int everywhere below the cache (MR pools, scatterlists).
 * A page array that large (2 GiB) is past kvmalloc()'s INT_MAX bytes and
 * fails with -ENOMEM; page arrays are allocated with __GFP_NOWARN.
 */
#define MRRC_MAX_CACHE_PAGES	BIT(28)

static inline u64 mrrc_region_pages(const struct mrrc_region *r)
{
	return r->it.last - r->it.start + 1;
}

/**
 * struct mrrc_registrar - how a cache registers memory
 * @name: for debugfs
 * @pins: registers real user memory: regions get mmu notifiers and
 *	requests must come from the cache's mm
 * @reg: register @r; fill r->lkey, r->rkey
 * @reg_prep: as @reg, but leave the REG_MR in @wr for the caller to post
 *	on a queue pair of the cache's PD (optional); -EOPNOTSUPP when @r
 *	can only be registered by @reg
 * @dereg: deregister every region on @list (linked by ->node) as one
 *	batch; @pages is their total size.  Returns how many of those pages
 *	stay pinned because their invalidation is still in flight; @reap
 *	gives them back
 * @reap: give back what finished invalidations held (optional); returns
 *	true while invalidations are still in flight
 * @quiesce: wait for every invalidation in flight and give back what it
 *	held (optional)
 */
struct mrrc_registrar {
	const char *name;
	bool pins;
	int (*reg)(struct mrrc_cache *c, struct mrrc_region *r);
	int (*reg_prep)(struct mrrc_cache *c, struct mrrc_region *r,
			struct ib_reg_wr *wr);
	u64 (*dereg)(struct mrrc_cache *c, struct list_head *list,
		     unsigned int n, u64 pages);
	bool (*reap)(struct mrrc_cache *c);
	void (*quiesce)(struct mrrc_cache *c);
};

/**
 * struct mrrc_policy_ops - a replacement policy (kmod/policy_*.c)
 * @name: as shown in debugfs
 * @caches: false for a policy that registers and deregisters every request
 * @start: it becomes the cache's policy, with regions cached: set up its
 *	state for them (optional)
 * @stop: it stops being the policy: drop that state (optional)
 * @miss: pages [start, last] are not cached and are about to be
 *	registered, once room is made for them (optional)
 * @insert: @r was just cached, at the top of c->stack, and is about to
 *	be touched; a request that fails later leaves it cached untouched
 *	(optional)
 * @touch: @r was just referenced, @n times (unlocked hits are applied
 *	together), and is at the top of c->stack now (optional)
 * @erase: @r leaves the cache (optional)
 * @evict: select victims and deregister them until @pages more pages in
 *	@regions more regions fit, or no unreferenced region is left; an
 *	errno only when the policy itself fails (the caller returns -ENOSPC
 *	if the room is still not there)
 *
 * Every operation runs with c->mutex held.
 */
struct mrrc_policy_ops {
	const char *name;
	bool caches;
	void (*start)(struct mrrc_cache *c);
	void (*stop)(struct mrrc_cache *c);
	void (*miss)(struct mrrc_cache *c, unsigned long start,
		     unsigned long last);
	void (*insert)(struct mrrc_cache *c, struct mrrc_region *r);
	void (*touch)(struct mrrc_cache *c, struct mrrc_region *r,
		      unsigned int n);
	void (*erase)(struct mrrc_cache *c, struct mrrc_region *r);
	int (*evict)(struct mrrc_cache *c, u64 pages, u32 regions);
};

extern const struct mrrc_policy_ops mrrc_policy_mre;
extern const struct mrrc_policy_ops mrrc_policy_lru;
extern const struct mrrc_policy_ops mrrc_policy_none;
extern const struct mrrc_policy_ops mrrc_policy_gdsf;
extern const struct mrrc_policy_ops mrrc_policy_gdsf_batch;

/* For the policies: the cache's side of an eviction (c->mutex held). */
bool mrrc_cache_fits(struct mrrc_cache *c, u64 pages, u32 regions);
void mrrc_cache_need(struct mrrc_cache *c, u64 pages, u32 regions,
		     u64 *need_pages, u64 *need_regions);
void mrrc_cache_segment(struct mrrc_cache *c, u64 pages, u32 regions,
			u64 *seg_pages, u64 *seg_regions);
struct mrrc_region *mrrc_stack_victim(struct mrrc_cache *c);
void mrrc_region_remove_cached(struct mrrc_cache *c, struct mrrc_region *r);
void mrrc_region_destroy(struct mrrc_cache *c, struct mrrc_region *r);
void mrrc_regions_destroy(struct mrrc_cache *c, struct list_head *list);

extern const struct mrrc_registrar mrrc_registrar_ordinary;
extern const struct mrrc_registrar mrrc_registrar_model;
extern const struct mrrc_registrar mrrc_registrar_fast;

/* Counters of a context's FRWR pools; see struct mrrc_cache_stats. */
struct mrrc_frwr_stats {
	u64 pool_mrs;
	u64 pool_free;
	u64 pool_hits;
	u64 pool_misses;
	u64 mr_allocs;
	u64 mr_frees;
	u64 refills;
	u64 aged;
	u64 reg_wrs;
	u64 inv_wrs;
	u64 inv_chains;
	u64 inv_async;		/* chains posted without waiting */
	u64 inv_pending;	/* regions whose invalidation is in flight */
	u64 inv_pending_pages;
	u64 qp_resets;
	u64 timeouts;
	u64 fallbacks;
};

struct mrrc_frwr;
struct mrrc_frwr_mr;

/* Ranges one exposure may have: an operation's segments. */
#define MRRC_EXPO_MAX		8

/**
 * struct mrrc_expo - what one operation exposes to its peer
 * @n: ranges exposed; 0 once revoked
 * @fm: the pooled fast MR of each range, or NULL when @mr is an
 *	ordinary registration of its own
 * @mr: the MR of each range
 *
 * Each range has an MR of its own whose iova is the range's first byte
 * and whose length is the range's: its key reaches those bytes and no
 * others, and only until mrrc_cache_unexpose().
 */
struct mrrc_expo {
	u8 n;
	bool rinv;		/* fm[0] was invalidated by the peer */
	/*
	 * fm[0]'s REG_MR goes on the operation's connection, not waited for
	 * (mrrc_cache_expose() with @prep): revoking waits for @reg_state to
	 * leave MRRC_DEFER_PENDING (mrrc_cache_expo_done(), once the data
	 * path knows whether it executed).
	 */
	bool chained;
	int reg_state;
	struct mrrc_frwr_mr *fm[MRRC_EXPO_MAX];
	struct ib_mr *mr[MRRC_EXPO_MAX];
};

int mrrc_ib_access(u32 access);
u32 mrrc_frwr_max_pages(struct mrrc_frwr *f);
int mrrc_frwr_expose(struct mrrc_cache *c, struct mrrc_region **rs,
		     struct mrrc_seg *segs, unsigned int n, u32 access,
		     struct mrrc_frwr_mr **fms, struct ib_reg_wr *prep);
void mrrc_frwr_unexpose(struct mrrc_cache *c, struct mrrc_frwr_mr **fms,
			unsigned int n);
void mrrc_frwr_unexposed(struct mrrc_cache *c, struct mrrc_frwr_mr *fm);
void mrrc_frwr_unexpose_broken(struct mrrc_cache *c, struct mrrc_frwr_mr *fm);
void mrrc_frwr_destroy(struct mrrc_frwr *f);
void mrrc_frwr_stats(struct mrrc_frwr *f, struct mrrc_frwr_stats *st);

struct mrrc_cache_config_k {
	u32 policy;
	u32 mode;
	u64 max_pages;
	u32 max_regions;
	u32 resort_pct;
	u32 evict_pct;
	u32 reg_ns_per_page;
	u32 reg_ns_per_op;
	u32 dereg_ns_per_page;
	u32 dereg_ns_per_op;
	u32 dereg_ns_per_region;
};

/**
 * struct mrrc_cache - one context's registration cache
 * @mutex: see the locking comment at the top of this file
 * @inval_lock: protects @invalid, region->invalid, notifier sequences
 * @tree: one interval tree of cached regions per access class
 * @index: the same regions, in maple trees in RCU mode, for unlocked hits
 * @touched: regions hit without c->mutex whose recency is not applied yet
 * @zombies: regions @index could not let go of (no memory)
 * @nzombies: regions on @zombies (debugfs "caches")
 * @nhandles: handles
 * @ninuse: regions with references other than the cache's
 * @ul_hits: unlocked hits, also their clock (region->hit_seq)
 * @ul_exact: unlocked exact hits
 * @stack: cached regions, most recently used first
 * @invalid: regions the notifier invalidated, not yet reaped
 * @reap_work: drops invalidated regions from the trees
 * @handles: id -> struct mrrc_handle
 * @handle_next: where the cyclic allocation of handle ids goes on
 * @pd: protection domain registrations live in
 * @frwr: the FRWR engine, created on the first fast registration
 * @mm: address space the registrations belong to (mmgrab'ed), NULL for a
 *	cache of kernel memory
 * @reg: the registrar for @cfg.mode
 * @policy: the replacement policy for @cfg.policy
 * @cfg: configuration
 * @cost_measured: the cost figures in @cfg follow what this cache's
 *	registrations take (kmod/cost.c), while its mode registers for real;
 *	cleared when a caller sets a figure
 * @cost_reg: the registrations' window
 * @cost_dereg: the deregistration batches' window
 * @recency: MRE's global recency value r, 32.32 fixed point
 * @gd_tree: cached regions by GDSF priority, while the policy is gdsf or
 *	gdsf-batch
 * @gd_l: GDSF's inflation value L
 * @gb_extra: gdsf-batch: the regions its last round evicted beyond what
 *	was needed, by last page (value: first page), until the next round
 * @gb_seg: gdsf-batch: pages a round frees beyond what is needed
 * @gb_seg_max: the most @gb_seg may be, evict_pct of the capacity when
 *	the segment last started
 * @gb_misses: ranges missed since gdsf-batch's last round
 * @gb_waste_ns: the registration cost of the regions of @gb_extra asked
 *	for again since the last round
 * @gb_judge: gdsf-batch has had a round since its segment started, whose
 *	extras the next round weighs
 * @sort_buf: scratch array for MRE resorting
 * @sort_len: entries @sort_buf has room for
 * @key_seq: keys handed out by the model registrar
 * @dying: set by destroy: the reaper must not run any more
 * @kept: notifier events that moved no page (c->inval_lock)
 * @defer_lock: protects @defer_done and region->defer_state
 * @defer_done: completed deferrals (struct mrrc_defer), not yet reaped
 * @defer_wq: woken by every completed exposure REG_MR (struct mrrc_expo)
 * @ndefer: deferrals not yet reaped
 * @node: entry on the module's list of caches, for global statistics
 * @pid: thread group of the creator, for debugfs
 * @st: counters and gauges, as reported by MRRC_IOC_CACHE_STATS; its
 *	@handles, @inuse_regions and @hit_unlocked stay 0 here: the snapshot
 *	reads them from @nhandles, @ninuse and @ul_hits
 */
struct mrrc_cache {
	struct mutex mutex;		/* see the top of this file */
	spinlock_t inval_lock;		/* see the top of this file */
	struct rb_root_cached tree[MRRC_ACCESS_CLASSES];
	struct maple_tree index[MRRC_ACCESS_CLASSES];
	struct llist_head touched;
	struct list_head zombies;
	unsigned int nzombies;
	atomic_long_t nhandles;
	atomic_long_t ninuse;
	atomic64_t ul_hits;
	atomic64_t ul_exact;
	struct list_head stack;
	struct list_head invalid;
	struct delayed_work reap_work;
	struct xarray handles;
	u32 handle_next;
	struct ib_pd *pd;
	struct mrrc_frwr *frwr;
	struct mm_struct *mm;
	const struct mrrc_registrar *reg;
	const struct mrrc_policy_ops *policy;
	struct mrrc_cache_config_k cfg;
	bool cost_measured;
	struct mrrc_cost_fit cost_reg;
	struct mrrc_cost_fit cost_dereg;
	u64 recency;
	struct rb_root gd_tree;
	u64 gd_l;
	struct xarray gb_extra;
	u64 gb_seg;
	u64 gb_seg_max;
	u64 gb_misses;
	u64 gb_waste_ns;
	bool gb_judge;
	struct mrrc_region **sort_buf;
	size_t sort_len;
	u32 key_seq;
	bool dying;
	u64 kept;
	spinlock_t defer_lock;		/* see above */
	struct list_head defer_done;
	wait_queue_head_t defer_wq;
	unsigned int ndefer;
	struct list_head node;
	pid_t pid;
	struct mrrc_cache_stats st;
};

/* The cost model, measured (kmod/cost.c). */
bool mrrc_cost_measuring(struct mrrc_cache *c);
u64 mrrc_cost_clock(struct mrrc_cache *c);
void mrrc_cost_reg(struct mrrc_cache *c, u64 pages, u64 t0);
void mrrc_cost_dereg(struct mrrc_cache *c, u64 n, u64 t0);
void mrrc_cost_defaults(struct mrrc_cache_config_k *k);
bool mrrc_cost_apply(struct mrrc_cache_config_k *k,
		     const struct mrrc_cache_config_k *cur,
		     const struct mrrc_cache_config *cfg);
void mrrc_cost_copy(struct mrrc_cache_config_k *to,
		    const struct mrrc_cache_config_k *from);
void mrrc_cost_restart(struct mrrc_cache *c, bool measure);

/* One registration request's outcome. */
struct mrrc_reg_out {
	u32 handle;
	u32 result;
	u32 nsegs;
};

struct mrrc_cache *mrrc_cache_create(struct ib_pd *pd, struct mm_struct *mm);
struct mrrc_cache *mrrc_cache_create_child(struct mrrc_cache *parent,
					   struct ib_pd *pd);
void mrrc_cache_add_stats(struct mrrc_cache *c, struct mrrc_cache_stats *acc);
int mrrc_cache_invalidate(struct mrrc_cache *c, u64 addr, u64 len);
int mrrc_cache_reg_pages(struct mrrc_cache *c, struct page **pages,
			 unsigned int npages, u32 access, struct mrrc_seg *seg,
			 u32 *handle);
void mrrc_cache_destroy(struct mrrc_cache *c);
int mrrc_cache_configure(struct mrrc_cache *c, struct mrrc_cache_config *cfg);

int mrrc_cache_reg(struct mrrc_cache *c, u64 addr, u64 len, u32 access,
		   u32 flags, struct mrrc_seg *segs, u32 room,
		   struct mrrc_reg_out *out);
int mrrc_cache_reg_defer(struct mrrc_cache *c, u64 addr, u64 len, u32 access,
			 u32 flags, struct mrrc_seg *segs, u32 room,
			 struct mrrc_reg_out *out, struct mrrc_defer_list *dl);
void mrrc_cache_defer_done(struct mrrc_defer *d, bool ok);
int mrrc_cache_release(struct mrrc_cache *c, u32 handle);
void mrrc_cache_release_op(struct mrrc_cache *c, u32 handle);
int mrrc_cache_expose(struct mrrc_cache *c, u32 handle, struct mrrc_seg *segs,
		      unsigned int n, u32 access, struct mrrc_expo *e,
		      struct ib_reg_wr *prep);
void mrrc_cache_expo_done(struct mrrc_cache *c, struct mrrc_expo *e, bool ok);
void mrrc_cache_unexpose(struct mrrc_cache *c, struct mrrc_expo *e);
void mrrc_cache_export_count(struct mrrc_cache *c, int n, u64 bytes);
int mrrc_cache_handle_ref(struct mrrc_cache *c, u32 id, u64 addr, u64 len,
			  u32 access, struct mrrc_seg *segs, u32 room,
			  struct mrrc_reg_out *out);

/* The registration mode; stable while the owning context's lock is held. */
static inline u32 mrrc_cache_mode(const struct mrrc_cache *c)
{
	return c->cfg.mode;
}

u32 mrrc_cache_flush(struct mrrc_cache *c);
void mrrc_cache_get_stats(struct mrrc_cache *c, struct mrrc_cache_stats *st);
void mrrc_cache_global_stats(struct mrrc_cache_stats *st);
struct seq_file;
void mrrc_cache_debugfs_show(struct seq_file *s);

#endif /* _MRRC_CACHE_H */
