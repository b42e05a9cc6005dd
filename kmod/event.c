// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - the completion and event queue of a context.
 *
 * Operations, peer WRITE_IMMs and connection events end up on ctx->done
 * (ctx->done_lock), from completion handlers, timers, CM handlers and
 * ioctls.  MRRC_IOC_POLL takes them in order, revokes what a completed
 * operation exposed to its peer, copies them out and releases what they
 * held (cache handles, receive buffers, connection references) in process
 * context; the file is readable while the queue is not empty.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/uaccess.h>

#include "mrrc.h"
#include "cache.h"
#include "conn.h"
#include "dp.h"

/* Completions copied out per chunk of MRRC_IOC_POLL. */
#define MRRC_POLL_CHUNK		64

void mrrc_done_queue(struct mrrc_ctx *ctx, struct mrrc_done *d)
{
	spin_lock_bh(&ctx->done_lock);
	list_add_tail(&d->node, &ctx->done);
	spin_unlock_bh(&ctx->done_lock);
	wake_up_interruptible(&ctx->wq);
}

/*
 * The cache a completion's operation registered in: its connection's, if
 * isolated (NULL once that connection is destroyed, when the operation
 * holds nothing of it any more), else the context's.
 */
static struct mrrc_cache *mrrc_done_cache(struct mrrc_ctx *ctx,
					  struct mrrc_done *d)
{
	return d->conn ? mrrc_conn_cache(d->conn) : ctx->cache;
}

/* Revoke what a completed operation exposes to its peer. */
static void mrrc_done_unexpose(struct mrrc_ctx *ctx, struct mrrc_done *d)
{
	struct mrrc_cache *c = mrrc_done_cache(ctx, d);
	struct mrrc_op *op;

	if (d->kind != MRRC_DONE_OP)
		return;
	op = container_of(d, struct mrrc_op, done);
	if (op->expo.n && !WARN_ON_ONCE(!c))
		mrrc_cache_unexpose(c, &op->expo);
}

/* Release what a reported completion held (process context). */
static void mrrc_done_release(struct mrrc_ctx *ctx, struct mrrc_done *d)
{
	struct mrrc_cache *c = ctx ? mrrc_done_cache(ctx, d) : NULL;
	struct mrrc_conn *conn = d->conn;

	switch (d->kind) {
	case MRRC_DONE_OP: {
		struct mrrc_op *op = container_of(d, struct mrrc_op, done);

		/* Unreachable with a live key: the cache revoked it first. */
		WARN_ON_ONCE(op->expo.n);
		if (op->has_timer)
			del_timer_sync(&op->timer);
		if (op->handle && c)
			mrrc_cache_release_op(c, op->handle);
		spin_lock_bh(&conn->lock);
		conn->nops--;
		atomic_dec(&conn->ctx->nops);
		spin_unlock_bh(&conn->lock);
		kfree(op);
		break;
	}
	case MRRC_DONE_RX: {
		struct mrrc_rx *rx = container_of(d, struct mrrc_rx, done);

		spin_lock_bh(&conn->lock);
		mrrc_rx_repost(conn, rx);
		mrrc_conn_kick(conn);
		spin_unlock_bh(&conn->lock);
		break;
	}
	default:
		break;
	}
	mrrc_conn_put(conn);
}

int mrrc_dp_poll(struct mrrc_ctx *ctx, struct mrrc_poll *cmd)
{
	const size_t min_cqe = offsetofend(struct mrrc_cqe, tag);
	struct mrrc_cqe *kbuf;
	struct mrrc_done *d, *tmp;
	u32 total = 0;
	int ret = 0;

	cmd->count = 0;
	if (cmd->flags)
		return -EOPNOTSUPP;
	if (cmd->__reserved || cmd->max > MRRC_MAX_BATCH ||
	    cmd->cqe_size < min_cqe)
		return -EINVAL;

	/*
	 * Nothing ready: answer at once, without the context's lock or a
	 * buffer (a caller spinning on an empty queue is the common case).
	 * A completion queued meanwhile is found by the next call.
	 */
	if (!cmd->max || list_empty_careful(&ctx->done))
		return 0;
	kbuf = kmalloc_array(min_t(u32, cmd->max, MRRC_POLL_CHUNK),
			     sizeof(*kbuf), GFP_KERNEL);
	if (!kbuf)
		return -ENOMEM;

	mutex_lock(&ctx->lock);
	while (total < cmd->max) {
		LIST_HEAD(batch);
		u32 n = 0;

		spin_lock_bh(&ctx->done_lock);
		while (n < min_t(u32, cmd->max - total, MRRC_POLL_CHUNK) &&
		       !list_empty(&ctx->done)) {
			d = list_first_entry(&ctx->done, struct mrrc_done, node);
			list_move_tail(&d->node, &batch);
			kbuf[n++] = d->cqe;
		}
		spin_unlock_bh(&ctx->done_lock);
		if (!n)
			break;

		/* No exposure outlives the news that its operation ended. */
		list_for_each_entry(d, &batch, node)
			mrrc_done_unexpose(ctx, d);
		ret = mrrc_copy_records(cmd->cqes + (u64)total * cmd->cqe_size,
					cmd->cqe_size, kbuf, sizeof(*kbuf), n);
		if (ret) {
			/* Nothing is lost: they go back to the front. */
			spin_lock_bh(&ctx->done_lock);
			list_splice(&batch, &ctx->done);
			spin_unlock_bh(&ctx->done_lock);
			break;
		}
		total += n;
		list_for_each_entry_safe(d, tmp, &batch, node) {
			list_del(&d->node);
			mrrc_done_release(ctx, d);
		}
	}
	mutex_unlock(&ctx->lock);
	kfree(kbuf);
	cmd->count = total;
	return total ? 0 : ret;
}

/**
 * mrrc_done_drain() - release the completions nobody polled
 * @ctx: the context, going away
 */
void mrrc_done_drain(struct mrrc_ctx *ctx)
{
	struct mrrc_done *d, *tmp;
	LIST_HEAD(all);

	spin_lock_bh(&ctx->done_lock);
	list_splice_init(&ctx->done, &all);
	spin_unlock_bh(&ctx->done_lock);
	list_for_each_entry_safe(d, tmp, &all, node) {
		list_del(&d->node);
		mrrc_done_release(NULL, d);
	}
}

/**
 * mrrc_done_forget() - a cache is going away: the completions nobody
 *	polled yet let go of it
 * @ctx: the context, ctx->lock held (no POLL runs)
 * @conn: an isolated connection whose cache goes, drained (all its
 *	operations are on ctx->done); NULL for the context's cache, after
 *	every connection
 *
 * Revoke the exposures of the completions of operations that registered in
 * that cache and release their cache handles; the completions stay queued,
 * in order, for POLL.
 */
void mrrc_done_forget(struct mrrc_ctx *ctx, struct mrrc_conn *conn)
{
	struct mrrc_cache *c = conn ? mrrc_conn_cache(conn) : ctx->cache;
	struct mrrc_done *d;
	LIST_HEAD(all);

	lockdep_assert_held(&ctx->lock);
	if (!c)
		return;
	spin_lock_bh(&ctx->done_lock);
	list_splice_init(&ctx->done, &all);
	spin_unlock_bh(&ctx->done_lock);
	list_for_each_entry(d, &all, node) {
		struct mrrc_op *op;

		if (d->kind != MRRC_DONE_OP || mrrc_done_cache(ctx, d) != c)
			continue;
		op = container_of(d, struct mrrc_op, done);
		if (op->expo.n)
			mrrc_cache_unexpose(c, &op->expo);
		if (op->handle)
			mrrc_cache_release_op(c, op->handle);
		op->handle = 0;
	}
	/* Ahead of whatever other connections queued meanwhile. */
	spin_lock_bh(&ctx->done_lock);
	list_splice(&all, &ctx->done);
	spin_unlock_bh(&ctx->done_lock);
	/* poll() may have looked while the queue was spliced out. */
	wake_up_interruptible(&ctx->wq);
}
