/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrrc - RDMA memory registration region cache: module-internal interfaces.
 *
 * Object model
 * ------------
 * struct mrrc_device  one per ib_device, created by the ib_client add
 *                     callback, unlinked by remove.  Refcounted: contexts
 *                     bound to it hold a reference until they detach.
 * struct mrrc_ctx     one per open file description of /dev/mrrc.  Owns
 *                     every object it creates; closing the fd (or the
 *                     process dying) releases all of them.
 *
 * Lock order: the one table
 * -------------------------
 * Every lock of the module, outermost first; a lock is only ever taken
 * while holding locks above it in its column.  Each structure's comment
 * points here.
 *
 *   lock                 kind          protects
 *   ctx->lock            mutex         a context's commands, its
 *                                      connections' creation and
 *                                      destruction (struct mrrc_ctx)
 *   ctx->cache_sem       rw_semaphore  ctx->cache's lifetime: REG and
 *                                      RELEASE use the cache under it
 *                                      (read), without ctx->lock; bind
 *                                      and detach write it (ctx.c)
 *   mrrc_devices_lock    mutex         the device list (device.c)
 *   dev->lock            mutex         a device's contexts, removing
 *   mrrc_caches_lock     mutex         the list of caches, retired
 *                                      statistics (cache.c)
 *   c->mutex             mutex         everything of a cache and its
 *                                      FRWR engine (cache.h)
 *   mmap_lock            rw_semaphore  (mm) pinning under c->mutex; the
 *                                      MMU notifier runs under it
 *   c->inval_lock        spinlock      invalidated regions (cache.h)
 *   c->index[]'s lock    spinlock      (maple tree) the index of unlocked
 *                                      hits, written under c->mutex,
 *                                      read under RCU (cache.h)
 *   c->handles' xa_lock  spinlock      a cache's handles: looked up and
 *                                      erased under it, also without
 *                                      c->mutex (cache.h)
 *   f->lock              spinlock      FRWR pool lists (frwr.c)
 *   conn->lock           spinlock, bh  a connection's data path (conn.h)
 *   ctx->done_lock       spinlock, bh  completions ready for POLL
 *   mrrc_ctxs' xa_lock   spinlock      every context by id (ctx.c); taken
 *                                      alone, to look a context up and
 *                                      take a reference, and to erase it
 *
 * Pairs that occur:
 *   ctx->lock -> mrrc_devices_lock -> dev->lock      bind, queries
 *   ctx->lock -> mrrc_caches_lock -> c->mutex        cache creation and
 *                                                    destruction
 *   ctx->lock -> ctx->cache_sem -> mrrc_caches_lock  detach
 *   ctx->cache_sem -> c->mutex                       REG, RELEASE
 *   ctx->lock -> c->mutex -> mmap_lock -> c->inval_lock
 *   ctx->lock -> c->mutex -> f->lock                 registration
 *   ctx->lock -> conn->lock -> ctx->done_lock        POST, CANCEL
 *   conn->lock -> ctx->done_lock                     completion handlers,
 *                                                    timers (softirq)
 * Never: c->mutex or any mutex under conn->lock or a spinlock; ctx->lock
 * in an RDMA CM handler (rdma_destroy_id() waits for handlers while
 * ctx->lock is held); ctx->lock under dev->lock or mrrc_devices_lock (the
 * remove callback drops them and pins the context with a reference
 * before it takes ctx->lock).
 */
#ifndef _MRRC_H
#define _MRRC_H

#include <linux/kref.h>
#include <linux/uidgid.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/atomic.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "mrrc_abi.h"

struct dentry;
struct mrrc_cache;

/**
 * struct mrrc_device - the module's view of one RDMA device
 * @ref: lifetime of this structure (not of @ibdev)
 * @ibdev: the ib_device; valid while the device is registered, i.e. while
 *	@node is on the device list or a bound context holds its ctx->lock
 * @node: entry on mrrc_devices, protected by mrrc_devices_lock
 * @name: copy of the device name, kept current by the rename callback;
 *	protected by mrrc_devices_lock
 * @index: ib_core device index
 * @lock: protects @ctx_list, @removing and @nr_ctx
 * @ctx_list: contexts bound to this device
 * @removing: set by the remove callback; no context may bind afterwards
 * @nr_ctx: number of contexts on @ctx_list
 */
struct mrrc_device {
	struct kref ref;
	struct ib_device *ibdev;
	struct list_head node;
	char name[MRRC_NAME_MAX];
	u32 index;

	struct mutex lock;		/* see @lock above */
	struct list_head ctx_list;
	bool removing;
	unsigned int nr_ctx;
};

/**
 * struct mrrc_ctx - a /dev/mrrc file context
 * @ref: lifetime; the file holds one reference, device removal a
 *	temporary one while it detaches the context
 * @lock: serialises every command of the context against each other and
 *	against detach, but REG and RELEASE; protects @dev, @pd and @dead
 * @cache_sem: REG and RELEASE hold it for reading while they use @cache,
 *	so that threads sharing the file register and hit in parallel;
 *	bind and detach hold it for writing (with @lock) to set @cache
 * @dev: bound device, NULL when unbound or detached
 * @pd: protection domain on @dev->ibdev, NULL when unbound
 * @cache: the registration cache, NULL when unbound; written under @lock
 *	and @cache_sem
 * @dead: the bound device was removed; the context is unusable
 * @dev_node: entry on @dev->ctx_list, protected by @dev->lock
 * @pid: thread group id of the opener, for introspection
 * @tgid: the opener's thread group, for MRRC_IOC_CTX_LIST
 * @uid: the opener's effective uid: who may see the context in
 *	MRRC_IOC_CTX_LIST
 * @id: the context's id in the module's list of contexts (ctx.c)
 * @conns: connections and listeners by id; changed under @lock, except
 *	that a listener's connection requests add to it
 * @conn_next: where the cyclic allocation of connection ids goes on
 *	(under the xarray's own lock)
 * @done_lock: protects @done
 * @done: completions and events not yet polled (struct mrrc_done)
 * @wq: woken when @done gains an entry; poll(2) waits here
 * @nops: operations accepted on its connections and not yet polled
 * @nisolated: its isolated connections that have their own cache now
 *	(at most max_isolated)
 *	(POST checks it against max_ops under @lock)
 * @exports: MRRC_IOC_EXPORT's exports by id (export.c), under @lock
 * @export_next: where the cyclic allocation of export ids goes on
 */
struct mrrc_ctx {
	struct kref ref;
	struct mutex lock;		/* see @lock above */
	struct rw_semaphore cache_sem;	/* see @cache_sem above */
	struct mrrc_device *dev;
	struct ib_pd *pd;
	struct mrrc_cache *cache;
	bool dead;
	struct list_head dev_node;
	pid_t pid;
	struct pid *tgid;
	kuid_t uid;
	u32 id;
	struct xarray conns;
	u32 conn_next;
	spinlock_t done_lock;		/* see @done_lock above */
	struct list_head done;
	wait_queue_head_t wq;
	atomic_t nops;
	atomic_t nisolated;
	struct xarray exports;
	u32 export_next;
};

/* Global state, see main.c */
extern struct mutex mrrc_devices_lock;
extern struct list_head mrrc_devices;
extern atomic_t mrrc_nr_ctx;
extern ulong mrrc_default_max_pages;
extern uint mrrc_default_max_regions;
extern uint mrrc_keepalive_ms;
extern bool mrrc_async_inval;
extern bool mrrc_remote_inv;
extern bool mrrc_lockless_hit;
extern bool mrrc_chain_reg;
extern bool mrrc_chain_expo;
extern uint mrrc_ack_timeout;
extern uint mrrc_send_window;
extern uint mrrc_max_conns;
extern uint mrrc_max_isolated;
#define MRRC_MAX_CONNS_CAP	1048576U	/* 2^20 */
extern uint mrrc_max_handles;
#define MRRC_MAX_HANDLES_CAP	16777216U	/* 2^24 */
extern uint mrrc_max_ops;
extern uint mrrc_max_exposed;
#define MRRC_MAX_OPS_CAP	16777216U	/* 2^24 */

/* device.c */
int mrrc_client_register(void);
void mrrc_client_unregister(void);
struct mrrc_device *mrrc_device_get_by_name(const struct net *net,
					    const char *name);
void mrrc_device_put(struct mrrc_device *dev);
unsigned int mrrc_device_count(const struct net *net);
int mrrc_device_list(const struct net *net, struct mrrc_dev_info *info,
		     unsigned int max, unsigned int *total);
int mrrc_device_port_query(const struct net *net, u32 dev_index, u32 port,
			   struct mrrc_port_query *pq,
			   struct mrrc_gid_entry *gids, unsigned int max);

/* export.c */
struct mrrc_export;
struct mrrc_unexport;
int mrrc_export_create(struct mrrc_ctx *ctx, struct mrrc_export *cmd);
int mrrc_export_revoke(struct mrrc_ctx *ctx, struct mrrc_unexport *cmd);
void mrrc_export_conn_gone(struct mrrc_ctx *ctx, u32 conn_id);
void mrrc_exports_destroy(struct mrrc_ctx *ctx);

/* ctx.c */
struct mrrc_ctx *mrrc_ctx_create(void);
void mrrc_ctx_put(struct mrrc_ctx *ctx);
void mrrc_ctx_release(struct mrrc_ctx *ctx);
int mrrc_ctx_bind(struct mrrc_ctx *ctx, const char *name, u32 *dev_index);
void mrrc_ctx_unbind(struct mrrc_ctx *ctx);
int mrrc_ctx_info(struct mrrc_ctx *ctx, struct mrrc_ctx_query *cq);
int mrrc_ctx_list(struct mrrc_ctx_list *cl);
struct mrrc_ctx *mrrc_ctx_get_visible(struct mrrc_ctx *self, u32 id);
struct mrrc_cache *mrrc_ctx_lock_cache(struct mrrc_ctx *ctx);
void mrrc_ctx_unlock(struct mrrc_ctx *ctx);
struct mrrc_cache *mrrc_ctx_use_cache(struct mrrc_ctx *ctx);
void mrrc_ctx_unuse_cache(struct mrrc_ctx *ctx);
void mrrc_device_detach_all(struct mrrc_device *dev);

/* ioctl.c */
long mrrc_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);
int mrrc_copy_records(u64 uptr, u32 usize, const void *kbuf, size_t ksize,
		      unsigned int n);

/* chardev.c */
extern ushort mrrc_dev_mode;
int mrrc_chardev_init(void);
void mrrc_chardev_exit(void);

/* debugfs.c */
void mrrc_debugfs_init(void);
void mrrc_debugfs_exit(void);

#endif /* _MRRC_H */
