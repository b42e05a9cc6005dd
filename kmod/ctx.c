// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - file contexts: creation, binding to a device, teardown.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/nsproxy.h>
#include <linux/pid_namespace.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "mrrc.h"
#include "cache.h"
#include "conn.h"

/*
 * Every open context by id, for MRRC_IOC_CTX_LIST and CONN_LIST.  A
 * context is looked up under the xarray's lock with kref_get_unless_zero()
 * and erased before it is freed.
 */
static DEFINE_XARRAY_ALLOC1(mrrc_ctxs);
/* Ids are handed out cyclically: a listed id names one context for long. */
static u32 mrrc_ctx_next_id;

struct mrrc_ctx *mrrc_ctx_create(void)
{
	struct mrrc_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return NULL;
	/*
	 * Only the id is reserved here (a NULL entry, which lookups skip):
	 * the context is published by the xa_store() below, once a lister
	 * may take a reference and lock it.
	 */
	if (xa_alloc_cyclic(&mrrc_ctxs, &ctx->id, NULL, xa_limit_31b,
			    &mrrc_ctx_next_id, GFP_KERNEL) < 0) {
		kfree(ctx);
		return NULL;
	}

	kref_init(&ctx->ref);
	mutex_init(&ctx->lock);
	init_rwsem(&ctx->cache_sem);
	INIT_LIST_HEAD(&ctx->dev_node);
	xa_init_flags(&ctx->conns, XA_FLAGS_ALLOC1);
	xa_init_flags(&ctx->exports, XA_FLAGS_ALLOC1);
	spin_lock_init(&ctx->done_lock);
	INIT_LIST_HEAD(&ctx->done);
	init_waitqueue_head(&ctx->wq);
	ctx->pid = task_tgid_vnr(current);
	ctx->tgid = get_pid(task_tgid(current));
	ctx->uid = current_euid();
	/* Storing over the reserved slot allocates nothing. */
	if (xa_is_err(xa_store(&mrrc_ctxs, ctx->id, ctx, GFP_KERNEL))) {
		put_pid(ctx->tgid);
		xa_erase(&mrrc_ctxs, ctx->id);
		kfree(ctx);
		return NULL;
	}
	atomic_inc(&mrrc_nr_ctx);
	return ctx;
}

static void mrrc_ctx_free(struct kref *ref)
{
	struct mrrc_ctx *ctx = container_of(ref, struct mrrc_ctx, ref);

	WARN_ON(ctx->dev || ctx->pd);
	mrrc_done_drain(ctx);
	xa_destroy(&ctx->conns);
	WARN_ON(!xa_empty(&ctx->exports));
	xa_destroy(&ctx->exports);
	mutex_destroy(&ctx->lock);
	put_pid(ctx->tgid);
	atomic_dec(&mrrc_nr_ctx);
	xa_erase(&mrrc_ctxs, ctx->id);
	kfree(ctx);
}

void mrrc_ctx_put(struct mrrc_ctx *ctx)
{
	kref_put(&ctx->ref, mrrc_ctx_free);
}

/*
 * Release everything the context owns on its device and drop the device.
 * The caller holds ctx->lock and has already taken the context off
 * dev->ctx_list.
 */
static void mrrc_ctx_detach_locked(struct mrrc_ctx *ctx)
{
	struct mrrc_device *dev = ctx->dev;

	lockdep_assert_held(&ctx->lock);

	/* Connections use the cache's registrations and the PD: first. */
	mrrc_conns_destroy(ctx);
	mrrc_done_forget(ctx, NULL);
	/* Gone with their connections; this only makes sure. */
	mrrc_exports_destroy(ctx);
	if (ctx->cache) {
		/* After every REG and RELEASE still using it. */
		down_write(&ctx->cache_sem);
		mrrc_cache_destroy(ctx->cache);
		ctx->cache = NULL;
		up_write(&ctx->cache_sem);
	}
	if (ctx->pd) {
		ib_dealloc_pd(ctx->pd);
		ctx->pd = NULL;
	}
	ctx->dev = NULL;
	mrrc_device_put(dev);
}

static void mrrc_ctx_unlink(struct mrrc_ctx *ctx, struct mrrc_device *dev)
{
	mutex_lock(&dev->lock);
	if (!list_empty(&ctx->dev_node)) {
		list_del_init(&ctx->dev_node);
		dev->nr_ctx--;
	}
	mutex_unlock(&dev->lock);
}

/**
 * mrrc_ctx_unbind() - undo mrrc_ctx_bind()
 * @ctx: the context; nothing happens if it is not bound
 */
void mrrc_ctx_unbind(struct mrrc_ctx *ctx)
{
	mutex_lock(&ctx->lock);
	if (ctx->dev) {
		mrrc_ctx_unlink(ctx, ctx->dev);
		mrrc_ctx_detach_locked(ctx);
	}
	mutex_unlock(&ctx->lock);
}

/**
 * mrrc_ctx_release() - tear down a context when its file is released
 * @ctx: the context; the file's reference is dropped
 */
void mrrc_ctx_release(struct mrrc_ctx *ctx)
{
	mrrc_ctx_unbind(ctx);
	mrrc_ctx_put(ctx);
}

/**
 * mrrc_device_detach_all() - detach every context bound to a device
 * @dev: a device whose ib_device is being removed
 *
 * Called from the ib_client remove callback.  Afterwards no context
 * references @dev->ibdev, and every bound context is marked dead, so its
 * later commands fail with -ENODEV.  Waits for commands in progress on
 * those contexts to finish.
 */
void mrrc_device_detach_all(struct mrrc_device *dev)
{
	struct mrrc_ctx *ctx;

	mutex_lock(&dev->lock);
	dev->removing = true;
	while (!list_empty(&dev->ctx_list)) {
		ctx = list_first_entry(&dev->ctx_list, struct mrrc_ctx,
				       dev_node);
		list_del_init(&ctx->dev_node);
		dev->nr_ctx--;
		kref_get(&ctx->ref);
		mutex_unlock(&dev->lock);

		mutex_lock(&ctx->lock);
		/* The file may have been released meanwhile. */
		if (ctx->dev == dev) {
			/* First: a REG finding no cache says why. */
			WRITE_ONCE(ctx->dead, true);
			mrrc_ctx_detach_locked(ctx);
		}
		mutex_unlock(&ctx->lock);
		mrrc_ctx_put(ctx);

		mutex_lock(&dev->lock);
	}
	mutex_unlock(&dev->lock);
}

/**
 * mrrc_ctx_bind() - bind a context to a device and allocate its PD
 * @ctx: the context
 * @name: NUL-terminated device name
 * @dev_index: set to the device's ib_core index on success
 *
 * The context's registration cache is created here, for the calling
 * process's address space.
 *
 * Return: 0; -EBUSY if the context is already bound; -ENODEV if no such
 * device exists, it is going away, or the context's device was removed;
 * or the error of ib_alloc_pd() or mrrc_cache_create().
 */
int mrrc_ctx_bind(struct mrrc_ctx *ctx, const char *name, u32 *dev_index)
{
	struct mrrc_cache *cache;
	struct mrrc_device *dev;
	struct ib_pd *pd;
	int ret;

	mutex_lock(&ctx->lock);
	if (ctx->dead) {
		ret = -ENODEV;
		goto out_unlock;
	}
	if (ctx->dev) {
		ret = -EBUSY;
		goto out_unlock;
	}

	dev = mrrc_device_get_by_name(current->nsproxy->net_ns, name);
	if (!dev) {
		ret = -ENODEV;
		goto out_unlock;
	}

	/*
	 * Once on ctx_list the remove callback waits for ctx->lock before
	 * it lets the ib_device go, so dev->ibdev stays valid below.
	 */
	mutex_lock(&dev->lock);
	if (dev->removing) {
		mutex_unlock(&dev->lock);
		ret = -ENODEV;
		goto out_put;
	}
	list_add_tail(&ctx->dev_node, &dev->ctx_list);
	dev->nr_ctx++;
	mutex_unlock(&dev->lock);

	pd = ib_alloc_pd(dev->ibdev, 0);
	if (IS_ERR(pd)) {
		ret = PTR_ERR(pd);
		goto out_unlink;
	}
	cache = mrrc_cache_create(pd, current->mm);
	if (IS_ERR(cache)) {
		ret = PTR_ERR(cache);
		goto out_pd;
	}

	ctx->dev = dev;
	ctx->pd = pd;
	down_write(&ctx->cache_sem);
	ctx->cache = cache;
	up_write(&ctx->cache_sem);
	*dev_index = dev->index;
	mutex_unlock(&ctx->lock);
	return 0;

out_pd:
	ib_dealloc_pd(pd);
out_unlink:
	mrrc_ctx_unlink(ctx, dev);
out_put:
	mrrc_device_put(dev);
out_unlock:
	mutex_unlock(&ctx->lock);
	return ret;
}

/**
 * mrrc_ctx_info() - report the device a context is bound to
 * @ctx: the context
 * @cq: @dev_index and @dev_name are filled in
 *
 * Return: 0; -ENXIO if the context is not bound; -ENODEV if its device
 * was removed.
 */
int mrrc_ctx_info(struct mrrc_ctx *ctx, struct mrrc_ctx_query *cq)
{
	int ret = 0;

	mutex_lock(&ctx->lock);
	if (ctx->dead) {
		ret = -ENODEV;
	} else if (!ctx->dev) {
		ret = -ENXIO;
	} else {
		cq->dev_index = ctx->dev->index;
		mutex_lock(&mrrc_devices_lock);
		strscpy(cq->dev_name, ctx->dev->name, sizeof(cq->dev_name));
		mutex_unlock(&mrrc_devices_lock);
	}
	mutex_unlock(&ctx->lock);
	return ret;
}

/**
 * mrrc_ctx_lock_cache() - lock a context and return its cache
 * @ctx: the context
 *
 * Return: the cache with ctx->lock held (drop it with mrrc_ctx_unlock()),
 * or ERR_PTR(-ENXIO) if the context is not bound, ERR_PTR(-ENODEV) if its
 * device was removed, with the lock not held.
 */
struct mrrc_cache *mrrc_ctx_lock_cache(struct mrrc_ctx *ctx)
{
	mutex_lock(&ctx->lock);
	if (ctx->cache)
		return ctx->cache;
	mutex_unlock(&ctx->lock);
	return ERR_PTR(ctx->dead ? -ENODEV : -ENXIO);
}

void mrrc_ctx_unlock(struct mrrc_ctx *ctx)
{
	mutex_unlock(&ctx->lock);
}

/**
 * mrrc_ctx_use_cache() - a context's cache, without its lock
 * @ctx: the context
 *
 * For commands that touch nothing of the context but its cache (REG,
 * RELEASE): the cache serialises itself, so threads sharing the file go
 * in parallel.  The cache stays until mrrc_ctx_unuse_cache().
 *
 * Return: the cache, or ERR_PTR(-ENXIO) if the context is not bound,
 * ERR_PTR(-ENODEV) if its device was removed, with nothing held.
 */
struct mrrc_cache *mrrc_ctx_use_cache(struct mrrc_ctx *ctx)
{
	down_read(&ctx->cache_sem);
	if (ctx->cache)
		return ctx->cache;
	up_read(&ctx->cache_sem);
	return ERR_PTR(READ_ONCE(ctx->dead) ? -ENODEV : -ENXIO);
}

void mrrc_ctx_unuse_cache(struct mrrc_ctx *ctx)
{
	up_read(&ctx->cache_sem);
}

/* What MRRC_IOC_CTX_LIST shows: the caller's own uid, or all to an admin. */
static bool mrrc_ctx_visible(const struct mrrc_ctx *ctx, bool all)
{
	return all || uid_eq(ctx->uid, current_euid());
}

/* The first live context with an id >= *id, with a reference; or NULL. */
static struct mrrc_ctx *mrrc_ctx_get_next(unsigned long *id)
{
	struct mrrc_ctx *ctx;

	xa_lock(&mrrc_ctxs);
	xa_for_each_start(&mrrc_ctxs, *id, ctx, *id) {
		if (kref_get_unless_zero(&ctx->ref))
			break;
	}
	xa_unlock(&mrrc_ctxs);
	return ctx;
}

static int mrrc_ctx_fill(struct mrrc_ctx *ctx, struct mrrc_ctx_info *info)
{
	struct mrrc_cache_stats st = {};
	unsigned long i;
	void *entry;

	memset(info, 0, sizeof(*info));
	info->id = ctx->id;
	info->pid = pid_nr_ns(ctx->tgid, task_active_pid_ns(current));
	info->uid = from_kuid_munged(current_user_ns(), ctx->uid);
	if (mutex_lock_killable(&ctx->lock))
		return -EINTR;
	info->dev_index = ctx->dev ? ctx->dev->index : MRRC_DEV_NONE;
	xa_for_each(&ctx->conns, i, entry)
		info->conns++;
	xa_for_each(&ctx->exports, i, entry)
		info->exports++;
	info->ops = atomic_read(&ctx->nops);
	if (ctx->cache) {
		mrrc_cache_get_stats(ctx->cache, &st);
		mrrc_conns_add_stats(ctx, &st);
	}
	mutex_unlock(&ctx->lock);
	info->cached_regions = st.cached_regions;
	info->cached_pages = st.cached_pages;
	info->pinned_pages = st.pinned_pages;
	info->requests = st.requests;
	info->hits = st.hit_exact + st.hit_subset + st.hit_span;
	return 0;
}

/**
 * mrrc_ctx_list() - MRRC_IOC_CTX_LIST
 * @cl: the command; @entries gets min(@count, visible) records of
 *	@entry_size bytes, @count the number of visible contexts
 *
 * Return: 0, -EFAULT, or -EINTR on a fatal signal.
 */
int mrrc_ctx_list(struct mrrc_ctx_list *cl)
{
	bool all = capable(CAP_SYS_ADMIN);
	struct mrrc_ctx_info info;
	unsigned long id = 0;
	struct mrrc_ctx *ctx;
	u32 n = 0;
	int ret = 0;

	while ((ctx = mrrc_ctx_get_next(&id))) {
		if (mrrc_ctx_visible(ctx, all)) {
			if (n < cl->count) {
				ret = mrrc_ctx_fill(ctx, &info);
				if (!ret)
					ret = mrrc_copy_records(cl->entries +
						(u64)n * cl->entry_size,
						cl->entry_size, &info,
						sizeof(info), 1);
			}
			n++;
		}
		mrrc_ctx_put(ctx);
		if (ret)
			return ret;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
		id++;
	}
	cl->count = n;
	return 0;
}

/**
 * mrrc_ctx_get_visible() - a context of MRRC_IOC_CONN_LIST, by id
 * @self: the caller's context, for id 0
 * @id: a context id
 *
 * Return: the context with a reference, or NULL if there is none the
 * caller may see.
 */
struct mrrc_ctx *mrrc_ctx_get_visible(struct mrrc_ctx *self, u32 id)
{
	struct mrrc_ctx *ctx;

	if (!id || id == self->id) {
		kref_get(&self->ref);
		return self;
	}
	xa_lock(&mrrc_ctxs);
	ctx = xa_load(&mrrc_ctxs, id);
	if (ctx && !kref_get_unless_zero(&ctx->ref))
		ctx = NULL;
	xa_unlock(&mrrc_ctxs);
	if (ctx && !mrrc_ctx_visible(ctx, capable(CAP_SYS_ADMIN))) {
		mrrc_ctx_put(ctx);
		ctx = NULL;
	}
	return ctx;
}
