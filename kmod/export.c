// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - exports: the one way a peer's key outlives an operation.
 *
 * MRRC_IOC_EXPORT takes an exact byte range of the caller's memory through
 * the registration cache (an operation's internal handle keeps its regions
 * and pages) and exposes it with mrrc_cache_expose(): one registration per
 * cached region the range lies in, whose iova is the segment's first byte
 * and whose length is the segment's, with the rights asked for (remote
 * READ unless more are asked).  It lives until MRRC_IOC_UNEXPORT, until
 * every connection named at export time has been destroyed, or until the
 * context goes or its device is removed; revoking invalidates the keys
 * before it returns.  The pages are pinned for writing whatever the peer
 * may do (see mrrc_export_create()), so only writable memory is exported.
 *
 * Exports are kept in ctx->exports and changed only under ctx->lock (the
 * lock order is the table in mrrc.h; the cache's mutex is taken inside).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/uaccess.h>

#include "mrrc.h"
#include "cache.h"
#include "conn.h"

#define MRRC_EXPORT_MAX_LEN	BIT_ULL(31)
#define MRRC_EXPORT_REMOTE	(MRRC_ACCESS_REMOTE_READ | \
				 MRRC_ACCESS_REMOTE_WRITE | \
				 MRRC_ACCESS_REMOTE_ATOMIC)

/**
 * struct mrrc_xport - one export
 * @cache: the cache it is registered in: its connection's if that is
 *	isolated, else the context's
 * @handle: the cache handle that keeps its regions (MRRC_REG_OP)
 * @len: bytes exposed
 * @nconns: entries of @conns still alive
 * @conns: the connections it is for
 * @expo: its registrations
 */
struct mrrc_xport {
	struct mrrc_cache *cache;
	u32 handle;
	u64 len;
	unsigned int nconns;
	u32 conns[MRRC_EXPORT_CONNS];
	struct mrrc_expo expo;
};

/* Revoke @x and free it; it is off ctx->exports already. */
static void mrrc_xport_free(struct mrrc_xport *x)
{
	struct mrrc_cache *c = x->cache;

	mrrc_cache_unexpose(c, &x->expo);
	mrrc_cache_release_op(c, x->handle);
	mrrc_cache_export_count(c, -1, x->len);
	kfree(x);
}

/* The connections of @cmd, read once, checked for duplicates. */
static int mrrc_export_conns(struct mrrc_xport *x,
			     const struct mrrc_export *cmd)
{
	const u32 __user *u = u64_to_user_ptr(cmd->conns);
	unsigned int i, j;

	for (i = 0; i < cmd->nconns; i++) {
		if (get_user(x->conns[i], u + i))
			return -EFAULT;
		for (j = 0; j < i; j++)
			if (x->conns[j] == x->conns[i])
				return -EINVAL;
	}
	x->nconns = cmd->nconns;
	return 0;
}

/*
 * Each named connection is an established one of @ctx (ctx->lock held),
 * and they share one cache, @x->cache: an isolated connection is named
 * alone.
 */
static int mrrc_export_conns_check(struct mrrc_ctx *ctx, struct mrrc_xport *x)
{
	bool isolated = false;
	struct mrrc_conn *conn;
	unsigned int i;

	for (i = 0; i < x->nconns; i++) {
		conn = mrrc_conn_lookup(ctx, x->conns[i]);
		if (!conn)
			return -ENOENT;
		if (conn->listener)
			return -EINVAL;
		if (READ_ONCE(conn->state) != MRRC_CS_ESTABLISHED)
			return -ENOTCONN;
		isolated |= conn->isolated;
		x->cache = mrrc_conn_cache(conn);
	}
	return isolated && x->nconns > 1 ? -EINVAL : 0;
}

/**
 * mrrc_export_create() - MRRC_IOC_EXPORT
 * @ctx: the context
 * @cmd: the command; @cmd->id, nsegs and segs are filled on success
 *
 * Return: 0 or -EOPNOTSUPP (flags, a cache in model mode), -EINVAL
 * (access, length, connection count, a listener, the same connection
 * twice, or an isolated connection with others), -EFAULT (@cmd->conns,
 * or memory not mapped writable), -ENXIO (not bound), -ENODEV (device
 * gone), -ENOENT (no such connection),
 * -ENOTCONN (not established), -EAGAIN (beyond max_exposed, or the range
 * kept changing while it was registered), -ENOSPC (beyond the cache's
 * max_pages), -EBUSY (no id left), -EPERM (another address space),
 * -ENOMEM, or what registration returns (-EIO, -ETIMEDOUT, ...).
 */
int mrrc_export_create(struct mrrc_ctx *ctx, struct mrrc_export *cmd)
{
	struct mrrc_seg segs[MRRC_EXPORT_SEGS];
	u32 access = cmd->access ?: MRRC_ACCESS_REMOTE_READ;
	struct mrrc_reg_out out;
	struct mrrc_xport *x;
	struct mrrc_cache *c;
	u32 local, id, i;
	int ret;

	if (cmd->flags)
		return -EOPNOTSUPP;
	if (access & ~MRRC_EXPORT_REMOTE)
		return -EINVAL;
	if (!cmd->len || cmd->len > MRRC_EXPORT_MAX_LEN ||
	    cmd->addr + cmd->len < cmd->addr)
		return -EINVAL;
	if (!cmd->nconns || cmd->nconns > MRRC_EXPORT_CONNS)
		return -EINVAL;

	x = kzalloc(sizeof(*x), GFP_KERNEL_ACCOUNT);
	if (!x)
		return -ENOMEM;
	ret = mrrc_export_conns(x, cmd);
	if (ret)
		goto out_free;

	c = mrrc_ctx_lock_cache(ctx);
	if (IS_ERR(c)) {
		ret = PTR_ERR(c);
		goto out_free;
	}
	/* A model cache registers nothing: no key to give. */
	ret = mrrc_cache_mode(c) == MRRC_MODE_MODEL ? -EOPNOTSUPP :
	      mrrc_export_conns_check(ctx, x);
	if (ret)
		goto out_unlock;
	c = x->cache;
	if (mrrc_cache_mode(c) == MRRC_MODE_MODEL) {
		ret = -EOPNOTSUPP;
		goto out_unlock;
	}
	/* Reserved until it is ready; lookups find nothing meanwhile. */
	/*
	 * Ids are not reused soon, so that an EXPORT whose result could not
	 * be copied out revokes its own export, not a newer one that got
	 * the id meanwhile (mrrc_cmd_export_abort()).
	 */
	ret = xa_alloc_cyclic(&ctx->exports, &id, NULL, xa_limit_32b,
			      &ctx->export_next, GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto out_unlock;
	ret = 0;

	/*
	 * Pinned for writing even when the peer only reads: a read-only
	 * long-term pin of a page never written may pin the shared zero
	 * page, and the process's later writes would land in a copy the
	 * peer never sees.
	 */
	local = MRRC_ACCESS_LOCAL_WRITE;
	BUILD_BUG_ON(MRRC_EXPORT_SEGS > MRRC_EXPO_MAX);
	ret = mrrc_cache_reg(c, cmd->addr, cmd->len, local,
			     MRRC_REG_WHOLE | MRRC_REG_OP, segs,
			     MRRC_EXPORT_SEGS, &out);
	if (ret)
		goto out_id;
	ret = mrrc_cache_expose(c, out.handle, segs, out.nsegs, access | local,
				&x->expo, NULL);
	if (ret) {
		mrrc_cache_release_op(c, out.handle);
		goto out_id;
	}
	x->handle = out.handle;
	x->len = cmd->len;
	/* Into the reserved slot: no allocation, cannot fail. */
	WARN_ON(xa_is_err(xa_store(&ctx->exports, id, x, GFP_KERNEL)));
	mrrc_cache_export_count(c, 1, x->len);
	mrrc_ctx_unlock(ctx);

	cmd->id = id;
	cmd->nsegs = out.nsegs;
	memset(cmd->segs, 0, sizeof(cmd->segs));
	for (i = 0; i < out.nsegs; i++) {
		cmd->segs[i].addr = segs[i].addr;
		cmd->segs[i].length = segs[i].length;
		cmd->segs[i].rkey = segs[i].rkey;
	}
	return 0;

out_id:
	xa_erase(&ctx->exports, id);
out_unlock:
	mrrc_ctx_unlock(ctx);
out_free:
	kfree(x);
	return ret;
}

static int mrrc_export_put(struct mrrc_ctx *ctx, u32 id)
{
	struct mrrc_xport *x;
	struct mrrc_cache *c;

	c = mrrc_ctx_lock_cache(ctx);
	if (IS_ERR(c))
		return PTR_ERR(c);
	x = xa_erase(&ctx->exports, id);
	if (x)
		mrrc_xport_free(x);
	mrrc_ctx_unlock(ctx);
	return x ? 0 : -ENOENT;
}

/**
 * mrrc_export_revoke() - MRRC_IOC_UNEXPORT
 * @ctx: the context
 * @cmd: the command
 *
 * Return: 0 once no key of the export reaches memory, or -EOPNOTSUPP
 * (flags), -EINVAL (reserved), -ENXIO (not bound), -ENODEV (device gone:
 * its exports are revoked already) or -ENOENT (no such export).
 */
int mrrc_export_revoke(struct mrrc_ctx *ctx, struct mrrc_unexport *cmd)
{
	if (cmd->flags)
		return -EOPNOTSUPP;
	if (cmd->__reserved)
		return -EINVAL;
	return mrrc_export_put(ctx, cmd->id);
}

/**
 * mrrc_export_conn_gone() - a connection is being destroyed
 * @ctx: its context, ctx->lock held
 * @conn_id: its id
 *
 * Exports for which it was the last connection alive are revoked.
 */
void mrrc_export_conn_gone(struct mrrc_ctx *ctx, u32 conn_id)
{
	struct mrrc_xport *x;
	unsigned long id;
	unsigned int i;

	lockdep_assert_held(&ctx->lock);
	xa_for_each(&ctx->exports, id, x) {
		for (i = 0; i < x->nconns; i++)
			if (x->conns[i] == conn_id)
				break;
		if (i == x->nconns)
			continue;
		x->conns[i] = x->conns[--x->nconns];
		if (!x->nconns) {
			xa_erase(&ctx->exports, id);
			mrrc_xport_free(x);
		}
	}
}

/**
 * mrrc_exports_destroy() - revoke every export of a context
 * @ctx: the context, ctx->lock held, its cache still there
 */
void mrrc_exports_destroy(struct mrrc_ctx *ctx)
{
	struct mrrc_xport *x;
	unsigned long id;

	lockdep_assert_held(&ctx->lock);
	xa_for_each(&ctx->exports, id, x) {
		xa_erase(&ctx->exports, id);
		mrrc_xport_free(x);
	}
}
