// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - ioctl dispatch and the command handlers.
 *
 * Every command structure starts with "__u32 size".  The dispatcher reads
 * it, rejects anything shorter than the command's first revision, copies
 * the structure in with copy_struct_from_user() (which rejects a longer
 * structure whose unknown tail is not zero), calls the handler, and copies
 * min(user size, kernel size) bytes back.  A command with side effects has
 * an abort hook that undoes them when that copy fails, so EFAULT never
 * leaves behind a change the caller cannot see.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/nsproxy.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "mrrc.h"
#include "cache.h"
#include "conn.h"

/* Most requests or handles one REG or RELEASE call takes. */
#define MRRC_MAX_BATCH		65536
/* Most segments one registration request may produce. */
#define MRRC_MAX_SEGS		4096

union mrrc_ucmd_buffer {
	struct mrrc_query query;
	struct mrrc_dev_list dev_list;
	struct mrrc_port_query port_query;
	struct mrrc_bind bind;
	struct mrrc_ctx_query ctx_query;
	struct mrrc_cache_config cache_config;
	struct mrrc_reg reg;
	struct mrrc_release release;
	struct mrrc_flush flush;
	struct mrrc_cache_stats cache_stats;
	struct mrrc_listen listen;
	struct mrrc_connect connect;
	struct mrrc_conn_cmd conn_cmd;
	struct mrrc_post post;
	struct mrrc_poll poll;
	struct mrrc_cancel cancel;
	struct mrrc_conn_query conn_query;
	struct mrrc_export export;
	struct mrrc_unexport unexport;
	struct mrrc_ctx_list ctx_list;
	struct mrrc_conn_list conn_list;
};

struct mrrc_ucmd {
	struct mrrc_ctx *ctx;
	unsigned int nr;
	void __user *ubuffer;
	u32 user_size;
	void *cmd;
};

/* Write @n kernel records of @ksize bytes as user records of @usize bytes. */
int mrrc_copy_records(u64 uptr, u32 usize, const void *kbuf, size_t ksize,
		      unsigned int n)
{
	void __user *dst = u64_to_user_ptr(uptr);
	size_t copy = min_t(size_t, usize, ksize);
	unsigned int i;

	if (usize == ksize)
		return copy_to_user(dst, kbuf, (size_t)n * ksize) ? -EFAULT : 0;

	for (i = 0; i < n; i++) {
		if (copy_to_user(dst, kbuf + i * ksize, copy))
			return -EFAULT;
		if (usize > ksize && clear_user(dst + ksize, usize - ksize))
			return -EFAULT;
		dst += usize;
	}
	return 0;
}

static int mrrc_cmd_query(struct mrrc_ucmd *ucmd)
{
	struct mrrc_query *q = ucmd->cmd;

	if (q->flags)
		return -EOPNOTSUPP;
	if (q->__reserved)
		return -EINVAL;

	q->abi_version = MRRC_ABI_VERSION;
	q->num_devices = mrrc_device_count(current->nsproxy->net_ns);
	q->features = MRRC_FEATURE_DEVICES | MRRC_FEATURE_CACHE |
		      MRRC_FEATURE_DATA | MRRC_FEATURE_ISOLATED;
	q->last_cmd = MRRC_CMD_LAST;
	return 0;
}

/* The first revision of struct mrrc_dev_info ends at __reserved. */
#define MRRC_DEV_INFO_SIZE_V1 \
	offsetofend(struct mrrc_dev_info, __reserved)
#define MRRC_GID_ENTRY_SIZE_V1 \
	offsetofend(struct mrrc_gid_entry, __reserved)

static int mrrc_cmd_dev_list(struct mrrc_ucmd *ucmd)
{
	struct mrrc_dev_list *dl = ucmd->cmd;
	struct mrrc_dev_info *info = NULL;
	unsigned int total, n;
	int ret;

	if (dl->flags)
		return -EOPNOTSUPP;
	if (dl->count && dl->entry_size < MRRC_DEV_INFO_SIZE_V1)
		return -EINVAL;

	/* Snapshot under the device lock, copy out without it. */
	n = min_t(u32, dl->count,
		  mrrc_device_count(current->nsproxy->net_ns) + 1);
	if (n) {
		info = kcalloc(n, sizeof(*info), GFP_KERNEL);
		if (!info)
			return -ENOMEM;
	}
	ret = mrrc_device_list(current->nsproxy->net_ns, info, n, &total);
	if (ret)
		goto out;

	ret = mrrc_copy_records(dl->entries, dl->entry_size, info,
				sizeof(*info), min(n, total));
	dl->count = total;
out:
	kfree(info);
	return ret;
}

static int mrrc_cmd_port_query(struct mrrc_ucmd *ucmd)
{
	struct mrrc_port_query *pq = ucmd->cmd;
	struct mrrc_gid_entry *gids = NULL;
	unsigned int n;
	int ret;

	if (pq->flags)
		return -EOPNOTSUPP;
	if (pq->__reserved)
		return -EINVAL;
	if (pq->gid_count && pq->gid_entry_size < MRRC_GID_ENTRY_SIZE_V1)
		return -EINVAL;

	/* No port has more GIDs than this; bound the allocation. */
	n = min_t(u32, pq->gid_count, 4096);
	if (n) {
		gids = kvcalloc(n, sizeof(*gids), GFP_KERNEL);
		if (!gids)
			return -ENOMEM;
	}
	ret = mrrc_device_port_query(current->nsproxy->net_ns, pq->dev_index,
				     pq->port_num, pq, gids, n);
	if (!ret)
		ret = mrrc_copy_records(pq->gids, pq->gid_entry_size, gids,
					sizeof(*gids), min(n, pq->gid_count));
	kvfree(gids);
	return ret;
}

static int mrrc_cmd_bind(struct mrrc_ucmd *ucmd)
{
	struct mrrc_bind *b = ucmd->cmd;

	if (b->flags)
		return -EOPNOTSUPP;
	if (b->__reserved)
		return -EINVAL;
	if (!memchr(b->dev_name, '\0', sizeof(b->dev_name)))
		return -EINVAL;

	return mrrc_ctx_bind(ucmd->ctx, b->dev_name, &b->dev_index);
}

/* The result could not be copied out: the caller never learns it bound. */
static void mrrc_cmd_bind_abort(struct mrrc_ucmd *ucmd)
{
	mrrc_ctx_unbind(ucmd->ctx);
}

static int mrrc_cmd_ctx_query(struct mrrc_ucmd *ucmd)
{
	struct mrrc_ctx_query *cq = ucmd->cmd;

	if (cq->flags)
		return -EOPNOTSUPP;
	if (cq->__reserved)
		return -EINVAL;

	return mrrc_ctx_info(ucmd->ctx, cq);
}

static int mrrc_cmd_cache_config(struct mrrc_ucmd *ucmd)
{
	struct mrrc_cache_config *cfg = ucmd->cmd;
	struct mrrc_cache *c;
	int ret;

	if (cfg->flags &
	    ~(MRRC_CACHE_MEASURE_COSTS | MRRC_CACHE_COSTS_MEASURED))
		return -EOPNOTSUPP;
	c = mrrc_ctx_lock_cache(ucmd->ctx);
	if (IS_ERR(c))
		return PTR_ERR(c);
	ret = mrrc_cache_configure(c, cfg);
	mrrc_ctx_unlock(ucmd->ctx);
	return ret;
}

/* Requests copied in and out per user copy. */
#define MRRC_REG_CHUNK		32

struct mrrc_reg_batch {
	struct mrrc_cache *c;
	const struct mrrc_reg *cmd;
	struct mrrc_seg *kseg;
	u32 kseg_len;
	u32 used;			/* segments written to user space */
	struct mrrc_reg_req req[MRRC_REG_CHUNK];
};

/* Copy requests [first, first + *n) in; *n shrinks to what was readable. */
static int mrrc_reg_copy_in(struct mrrc_reg_batch *b, u32 first, u32 *n)
{
	const struct mrrc_reg *cmd = b->cmd;
	void __user *ureq = u64_to_user_ptr(cmd->reqs) + (u64)first * cmd->req_size;
	u32 i;
	int ret;

	if (cmd->req_size == sizeof(b->req[0]) &&
	    !copy_from_user(b->req, ureq, *n * sizeof(b->req[0])))
		return 0;
	/* Another size, or a fault somewhere: find the first bad one. */
	for (i = 0; i < *n; i++) {
		ret = copy_struct_from_user(&b->req[i], sizeof(b->req[i]),
					    ureq + (u64)i * cmd->req_size,
					    cmd->req_size);
		if (ret) {
			*n = i;
			return i ? 0 : ret;
		}
	}
	return 0;
}

static int mrrc_reg_copy_out(struct mrrc_reg_batch *b, u32 first, u32 n)
{
	const struct mrrc_reg *cmd = b->cmd;
	void __user *ureq = u64_to_user_ptr(cmd->reqs) + (u64)first * cmd->req_size;
	u32 i;

	if (cmd->req_size == sizeof(b->req[0]))
		return copy_to_user(ureq, b->req, n * sizeof(b->req[0])) ?
		       -EFAULT : 0;
	/* A longer user structure: its tail was checked to be zero. */
	for (i = 0; i < n; i++)
		if (copy_to_user(ureq + (u64)i * cmd->req_size, &b->req[i],
				 sizeof(b->req[i])))
			return -EFAULT;
	return 0;
}

/*
 * Serve requests [first, first + n): copy them in at once, register, copy
 * the segments and the requests out at once.  *done is set to the number
 * served; an error is the error of request first + *done (whose status is
 * written out with the others) or of copying.  A chunk whose results
 * cannot be copied out is undone.
 */
static int mrrc_reg_chunk(struct mrrc_reg_batch *b, u32 first, u32 n, u32 *done)
{
	const struct mrrc_reg *cmd = b->cmd;
	u32 seg0 = b->used, segs = 0, i, written;
	struct mrrc_reg_out out;
	int ret, err;

	*done = 0;
	ret = mrrc_reg_copy_in(b, first, &n);
	if (ret)
		return ret;

	for (i = 0; i < n; i++) {
		struct mrrc_reg_req *r = &b->req[i];
		u32 room_user = cmd->seg_count - seg0 - segs;
		u32 room_k = b->kseg_len - segs;

		if (r->flags & ~MRRC_REG_RELEASE)
			ret = -EOPNOTSUPP;
		else if (r->__reserved)
			ret = -EINVAL;
		else if (r->access & ~MRRC_ACCESS_LOCAL_WRITE)
			/*
			 * Cached registrations are the host's business: a
			 * peer gets a key only through an operation's
			 * exposure or MRRC_IOC_EXPORT.
			 */
			ret = -EINVAL;
		else
			ret = mrrc_cache_reg(b->c, r->addr, r->length,
					     r->access, r->flags, b->kseg + segs,
					     min(room_user, room_k), &out);
		if (ret == -EOVERFLOW && room_k < room_user && i) {
			/* Our buffer is full, not the caller's: next chunk. */
			ret = 0;
			break;
		}
		if (ret) {
			r->status = ret;
			break;
		}
		r->handle = out.handle;
		r->result = out.result;
		r->nsegs = out.nsegs;
		r->seg_index = seg0 + segs;
		r->status = 0;
		segs += out.nsegs;
	}

	written = min(i + (ret ? 1 : 0), n);
	err = mrrc_copy_records(cmd->segs + (u64)seg0 * cmd->seg_size,
				cmd->seg_size, b->kseg, sizeof(*b->kseg), segs);
	if (!err)
		err = mrrc_reg_copy_out(b, first, written);
	if (err) {
		/* The caller cannot learn about these: undo them. */
		while (i-- > 0)
			if (b->req[i].handle)
				mrrc_cache_release(b->c, b->req[i].handle);
		return err;
	}
	*done = i;
	b->used += segs;
	return ret;
}

static int mrrc_cmd_reg(struct mrrc_ucmd *ucmd)
{
	struct mrrc_reg *cmd = ucmd->cmd;
	struct mrrc_reg_batch *b;
	u32 i = 0, done;
	int ret = 0;

	if (cmd->flags)
		return -EOPNOTSUPP;
	if (cmd->__reserved)
		return -EINVAL;
	if (cmd->count > MRRC_MAX_BATCH)
		return -EINVAL;
	if (cmd->count && cmd->req_size < sizeof(struct mrrc_reg_req))
		return -EINVAL;
	if (cmd->seg_count && cmd->seg_size < sizeof(struct mrrc_seg))
		return -EINVAL;

	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return -ENOMEM;
	b->cmd = cmd;
	b->kseg_len = max_t(u32, min_t(u32, cmd->seg_count, MRRC_MAX_SEGS), 1);
	b->kseg = kvmalloc_array(b->kseg_len, sizeof(*b->kseg),
				 GFP_KERNEL_ACCOUNT);
	if (!b->kseg) {
		kfree(b);
		return -ENOMEM;
	}

	/* Not under ctx->lock: threads sharing the file go in parallel. */
	b->c = mrrc_ctx_use_cache(ucmd->ctx);
	if (IS_ERR(b->c)) {
		ret = PTR_ERR(b->c);
		goto out;
	}
	while (i < cmd->count) {
		ret = mrrc_reg_chunk(b, i, min_t(u32, cmd->count - i,
						 MRRC_REG_CHUNK), &done);
		i += done;
		if (ret)
			break;
	}
	mrrc_ctx_unuse_cache(ucmd->ctx);
	cmd->done = i;
	cmd->seg_count = b->used;
out:
	kvfree(b->kseg);
	kfree(b);
	return ret;
}

static int mrrc_cmd_release(struct mrrc_ucmd *ucmd)
{
	struct mrrc_release *cmd = ucmd->cmd;
	u32 __user *uh = u64_to_user_ptr(cmd->handles);
	struct mrrc_cache *c;
	u32 i, h;
	int ret = 0;

	if (cmd->flags)
		return -EOPNOTSUPP;
	if (cmd->count > MRRC_MAX_BATCH)
		return -EINVAL;

	c = mrrc_ctx_use_cache(ucmd->ctx);
	if (IS_ERR(c))
		return PTR_ERR(c);
	for (i = 0; i < cmd->count; i++) {
		ret = get_user(h, uh + i);
		if (!ret)
			ret = mrrc_cache_release(c, h);
		if (ret)
			break;
	}
	mrrc_ctx_unuse_cache(ucmd->ctx);
	cmd->done = i;
	return ret;
}

static int mrrc_cmd_flush(struct mrrc_ucmd *ucmd)
{
	struct mrrc_flush *cmd = ucmd->cmd;
	struct mrrc_cache *c;

	if (cmd->flags)
		return -EOPNOTSUPP;
	if (cmd->__reserved)
		return -EINVAL;
	c = mrrc_ctx_lock_cache(ucmd->ctx);
	if (IS_ERR(c))
		return PTR_ERR(c);
	cmd->regions = mrrc_cache_flush(c) + mrrc_conns_flush(ucmd->ctx);
	mrrc_ctx_unlock(ucmd->ctx);
	return 0;
}

static int mrrc_cmd_cache_stats(struct mrrc_ucmd *ucmd)
{
	struct mrrc_cache_stats *st = ucmd->cmd;
	struct mrrc_cache *c;

	if (st->flags & ~MRRC_STATS_GLOBAL)
		return -EOPNOTSUPP;
	if (st->flags & MRRC_STATS_GLOBAL) {
		mrrc_cache_global_stats(st);
		return 0;
	}
	c = mrrc_ctx_lock_cache(ucmd->ctx);
	if (IS_ERR(c))
		return PTR_ERR(c);
	mrrc_cache_get_stats(c, st);
	/* With the caches of its isolated connections. */
	mrrc_conns_add_stats(ucmd->ctx, st);
	mrrc_ctx_unlock(ucmd->ctx);
	return 0;
}

static int mrrc_cmd_listen(struct mrrc_ucmd *ucmd)
{
	return mrrc_conn_listen(ucmd->ctx, ucmd->cmd);
}

static int mrrc_cmd_connect(struct mrrc_ucmd *ucmd)
{
	return mrrc_conn_connect(ucmd->ctx, ucmd->cmd);
}

static int mrrc_cmd_conn(struct mrrc_ucmd *ucmd)
{
	return mrrc_conn_cmd(ucmd->ctx, ucmd->nr, ucmd->cmd);
}

static int mrrc_cmd_post(struct mrrc_ucmd *ucmd)
{
	return mrrc_dp_post(ucmd->ctx, ucmd->cmd);
}

static int mrrc_cmd_poll(struct mrrc_ucmd *ucmd)
{
	return mrrc_dp_poll(ucmd->ctx, ucmd->cmd);
}

static int mrrc_cmd_cancel(struct mrrc_ucmd *ucmd)
{
	return mrrc_dp_cancel(ucmd->ctx, ucmd->cmd);
}

static int mrrc_cmd_conn_query(struct mrrc_ucmd *ucmd)
{
	return mrrc_conn_info(ucmd->ctx, ucmd->cmd);
}

static int mrrc_cmd_export(struct mrrc_ucmd *ucmd)
{
	return mrrc_export_create(ucmd->ctx, ucmd->cmd);
}

/* The caller never learns the export's id: revoke it. */
static void mrrc_cmd_export_abort(struct mrrc_ucmd *ucmd)
{
	struct mrrc_unexport un = {
		.size = sizeof(un),
		.id = ((struct mrrc_export *)ucmd->cmd)->id,
	};

	mrrc_export_revoke(ucmd->ctx, &un);
}

static int mrrc_cmd_unexport(struct mrrc_ucmd *ucmd)
{
	return mrrc_export_revoke(ucmd->ctx, ucmd->cmd);
}

/* The first revisions of the list entries. */
#define MRRC_CTX_INFO_SIZE_V1 offsetofend(struct mrrc_ctx_info, hits)
#define MRRC_CONN_QUERY_SIZE_V1 offsetofend(struct mrrc_conn_query, ctrl_recv)

static int mrrc_cmd_ctx_list(struct mrrc_ucmd *ucmd)
{
	struct mrrc_ctx_list *cl = ucmd->cmd;

	if (cl->flags)
		return -EOPNOTSUPP;
	if (cl->count && cl->entry_size < MRRC_CTX_INFO_SIZE_V1)
		return -EINVAL;
	return mrrc_ctx_list(cl);
}

/*
 * Answers copied out per round of CONN_LIST: a fixed buffer within one
 * page (26 * 152 bytes), short holds of ctx->lock.
 */
#define MRRC_CONN_LIST_CHUNK 26

static int mrrc_cmd_conn_list(struct mrrc_ucmd *ucmd)
{
	struct mrrc_conn_list *ll = ucmd->cmd;
	unsigned int done = 0, total = 0;
	struct mrrc_conn_query *q;
	unsigned long next = 0;
	struct mrrc_ctx *ctx;
	int ret;

	if (ll->flags)
		return -EOPNOTSUPP;
	if (ll->__reserved)
		return -EINVAL;
	if (ll->count && ll->entry_size < MRRC_CONN_QUERY_SIZE_V1)
		return -EINVAL;
	ctx = mrrc_ctx_get_visible(ucmd->ctx, ll->ctx);
	if (!ctx)
		return -ENOENT;
	BUILD_BUG_ON(MRRC_CONN_LIST_CHUNK * sizeof(*q) > PAGE_SIZE);
	q = kcalloc(MRRC_CONN_LIST_CHUNK, sizeof(*q), GFP_KERNEL);
	if (!q) {
		ret = -ENOMEM;
		goto out;
	}
	/*
	 * The list may change between rounds: what is written is always
	 * min(count in, count out) answers.  A list that ended before the
	 * caller's room did reports what was written; a caller whose room
	 * filled up learns how many there are now.
	 */
	for (;;) {
		unsigned int want = min(ll->count - done, MRRC_CONN_LIST_CHUNK);
		bool last = ll->count - done <= MRRC_CONN_LIST_CHUNK;

		ret = mrrc_conn_list(ctx, next, q, want, &next,
				     last ? &total : NULL);
		if (ret < 0)
			goto out;
		if (mrrc_copy_records(ll->entries + (u64)done * ll->entry_size,
				      ll->entry_size, q, sizeof(*q), ret)) {
			ret = -EFAULT;
			goto out;
		}
		done += ret;
		if (ret < want) {
			total = done;
			break;
		}
		if (last) {
			total = max(total, done);
			break;
		}
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto out;
		}
		cond_resched();
	}
	ll->count = total;
	ret = 0;
out:
	kfree(q);
	mrrc_ctx_put(ctx);
	return ret;
}

/* The id a failed LISTEN or CONNECT would have had is never reported. */
static void mrrc_cmd_conn_abort(struct mrrc_ucmd *ucmd)
{
	struct mrrc_conn_cmd destroy = {
		.size = sizeof(destroy),
		.id = ucmd->nr == MRRC_CMD_LISTEN ?
		      ((struct mrrc_listen *)ucmd->cmd)->id :
		      ((struct mrrc_connect *)ucmd->cmd)->id,
	};

	mrrc_conn_cmd(ucmd->ctx, MRRC_CMD_DESTROY, &destroy);
}

struct mrrc_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	int (*execute)(struct mrrc_ucmd *ucmd);
	void (*abort)(struct mrrc_ucmd *ucmd);
	bool partial;
};

#define MRRC_IOCTL_OP_FULL(_nr, _fn, _abort, _partial, _struct, _last)	\
	[(_nr) - MRRC_CMD_BASE] = {					\
		.size = sizeof(_struct) +				\
			BUILD_BUG_ON_ZERO(sizeof(union mrrc_ucmd_buffer) < \
					  sizeof(_struct)) +		\
			BUILD_BUG_ON_ZERO(sizeof(_struct) % 8),		\
		.min_size = offsetofend(_struct, _last),		\
		.execute = _fn,						\
		.abort = _abort,					\
		.partial = _partial,					\
	}
#define MRRC_IOCTL_OP(_nr, _fn, _struct, _last)				\
	MRRC_IOCTL_OP_FULL(_nr, _fn, NULL, false, _struct, _last)
/* A batch command: its structure is copied out even when it fails. */
#define MRRC_IOCTL_OP_BATCH(_nr, _fn, _struct, _last)			\
	MRRC_IOCTL_OP_FULL(_nr, _fn, NULL, true, _struct, _last)

static const struct mrrc_ioctl_op mrrc_ioctl_ops[] = {
	MRRC_IOCTL_OP(MRRC_CMD_QUERY, mrrc_cmd_query, struct mrrc_query,
		      __reserved),
	MRRC_IOCTL_OP(MRRC_CMD_DEV_LIST, mrrc_cmd_dev_list,
		      struct mrrc_dev_list, entries),
	MRRC_IOCTL_OP(MRRC_CMD_PORT_QUERY, mrrc_cmd_port_query,
		      struct mrrc_port_query, gids),
	MRRC_IOCTL_OP_FULL(MRRC_CMD_BIND, mrrc_cmd_bind, mrrc_cmd_bind_abort,
			   false, struct mrrc_bind, __reserved),
	MRRC_IOCTL_OP(MRRC_CMD_CTX_QUERY, mrrc_cmd_ctx_query,
		      struct mrrc_ctx_query, dev_name),
	MRRC_IOCTL_OP(MRRC_CMD_CACHE_CONFIG, mrrc_cmd_cache_config,
		      struct mrrc_cache_config, dereg_ns_per_region),
	MRRC_IOCTL_OP_BATCH(MRRC_CMD_REG, mrrc_cmd_reg, struct mrrc_reg,
			    __reserved),
	MRRC_IOCTL_OP_BATCH(MRRC_CMD_RELEASE, mrrc_cmd_release,
			    struct mrrc_release, handles),
	MRRC_IOCTL_OP(MRRC_CMD_FLUSH, mrrc_cmd_flush, struct mrrc_flush,
		      __reserved),
	MRRC_IOCTL_OP(MRRC_CMD_CACHE_STATS, mrrc_cmd_cache_stats,
		      struct mrrc_cache_stats, mre_recency),
	MRRC_IOCTL_OP_FULL(MRRC_CMD_LISTEN, mrrc_cmd_listen,
			   mrrc_cmd_conn_abort, false, struct mrrc_listen,
			   user_data),
	MRRC_IOCTL_OP_FULL(MRRC_CMD_CONNECT, mrrc_cmd_connect,
			   mrrc_cmd_conn_abort, false, struct mrrc_connect,
			   user_data),
	MRRC_IOCTL_OP(MRRC_CMD_ACCEPT, mrrc_cmd_conn, struct mrrc_conn_cmd,
		      user_data),
	MRRC_IOCTL_OP(MRRC_CMD_REJECT, mrrc_cmd_conn, struct mrrc_conn_cmd,
		      user_data),
	MRRC_IOCTL_OP(MRRC_CMD_DISCONNECT, mrrc_cmd_conn,
		      struct mrrc_conn_cmd, user_data),
	MRRC_IOCTL_OP(MRRC_CMD_DESTROY, mrrc_cmd_conn, struct mrrc_conn_cmd,
		      user_data),
	MRRC_IOCTL_OP_BATCH(MRRC_CMD_POST, mrrc_cmd_post, struct mrrc_post,
			    __reserved),
	MRRC_IOCTL_OP(MRRC_CMD_POLL, mrrc_cmd_poll, struct mrrc_poll,
		      __reserved),
	MRRC_IOCTL_OP(MRRC_CMD_CANCEL, mrrc_cmd_cancel, struct mrrc_cancel,
		      tag),
	MRRC_IOCTL_OP(MRRC_CMD_CONN_QUERY, mrrc_cmd_conn_query,
		      struct mrrc_conn_query, ctrl_recv),
	MRRC_IOCTL_OP_FULL(MRRC_CMD_EXPORT, mrrc_cmd_export,
			   mrrc_cmd_export_abort, false, struct mrrc_export,
			   segs),
	MRRC_IOCTL_OP(MRRC_CMD_UNEXPORT, mrrc_cmd_unexport,
		      struct mrrc_unexport, __reserved),
	MRRC_IOCTL_OP(MRRC_CMD_CTX_LIST, mrrc_cmd_ctx_list,
		      struct mrrc_ctx_list, entries),
	MRRC_IOCTL_OP(MRRC_CMD_CONN_LIST, mrrc_cmd_conn_list,
		      struct mrrc_conn_list, entries),
};

long mrrc_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct mrrc_ctx *ctx = filp->private_data;
	const struct mrrc_ioctl_op *op;
	union mrrc_ucmd_buffer buf;
	struct mrrc_ucmd ucmd = {};
	unsigned int nr;
	int ret;

	/* Commands are plain _IO(): the size travels in the structure. */
	nr = _IOC_NR(cmd);
	if (cmd != _IO(MRRC_TYPE, nr) || nr < MRRC_CMD_BASE ||
	    nr - MRRC_CMD_BASE >= ARRAY_SIZE(mrrc_ioctl_ops))
		return -ENOTTY;
	op = &mrrc_ioctl_ops[nr - MRRC_CMD_BASE];
	if (!op->execute)
		return -ENOTTY;

	ucmd.ctx = ctx;
	ucmd.nr = nr;
	ucmd.ubuffer = (void __user *)arg;
	ret = get_user(ucmd.user_size, (u32 __user *)ucmd.ubuffer);
	if (ret)
		return ret;
	if (ucmd.user_size < op->min_size)
		return -EINVAL;

	ucmd.cmd = &buf;
	ret = copy_struct_from_user(ucmd.cmd, op->size, ucmd.ubuffer,
				    ucmd.user_size);
	if (ret)
		return ret;

	ret = op->execute(&ucmd);
	if (ret && !op->partial)
		return ret;

	if (copy_to_user(ucmd.ubuffer, ucmd.cmd,
			 min_t(u32, ucmd.user_size, op->size))) {
		if (!ret && op->abort)
			op->abort(&ucmd);
		return -EFAULT;
	}
	return ret;
}
