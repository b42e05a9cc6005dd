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
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "mrrc.h"

union mrrc_ucmd_buffer {
	struct mrrc_query query;
	struct mrrc_dev_list dev_list;
	struct mrrc_port_query port_query;
	struct mrrc_bind bind;
	struct mrrc_ctx_query ctx_query;
};

struct mrrc_ucmd {
	struct mrrc_ctx *ctx;
	void __user *ubuffer;
	u32 user_size;
	void *cmd;
};

/* Write @n kernel records of @ksize bytes as user records of @usize bytes. */
static int mrrc_copy_records(u64 uptr, u32 usize, const void *kbuf,
			     size_t ksize, unsigned int n)
{
	void __user *dst = u64_to_user_ptr(uptr);
	size_t copy = min_t(size_t, usize, ksize);
	unsigned int i;

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
	q->num_devices = mrrc_device_count();
	q->features = MRRC_FEATURE_DEVICES;
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
	n = min_t(u32, dl->count, mrrc_device_count() + 1);
	if (n) {
		info = kcalloc(n, sizeof(*info), GFP_KERNEL);
		if (!info)
			return -ENOMEM;
	}
	ret = mrrc_device_list(info, n, &total);
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
	ret = mrrc_port_query(pq->dev_index, pq->port_num, pq, gids, n);
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

	return mrrc_ctx_query(ucmd->ctx, cq);
}

struct mrrc_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	int (*execute)(struct mrrc_ucmd *ucmd);
	void (*abort)(struct mrrc_ucmd *ucmd);
};

#define MRRC_IOCTL_OP_ABORT(_nr, _fn, _abort, _struct, _last)		\
	[(_nr) - MRRC_CMD_BASE] = {					\
		.size = sizeof(_struct) +				\
			BUILD_BUG_ON_ZERO(sizeof(union mrrc_ucmd_buffer) < \
					  sizeof(_struct)) +		\
			BUILD_BUG_ON_ZERO(sizeof(_struct) % 8),		\
		.min_size = offsetofend(_struct, _last),		\
		.execute = _fn,						\
		.abort = _abort,					\
	}
#define MRRC_IOCTL_OP(_nr, _fn, _struct, _last)				\
	MRRC_IOCTL_OP_ABORT(_nr, _fn, NULL, _struct, _last)

static const struct mrrc_ioctl_op mrrc_ioctl_ops[] = {
	MRRC_IOCTL_OP(MRRC_CMD_QUERY, mrrc_cmd_query, struct mrrc_query,
		      __reserved),
	MRRC_IOCTL_OP(MRRC_CMD_DEV_LIST, mrrc_cmd_dev_list,
		      struct mrrc_dev_list, entries),
	MRRC_IOCTL_OP(MRRC_CMD_PORT_QUERY, mrrc_cmd_port_query,
		      struct mrrc_port_query, gids),
	MRRC_IOCTL_OP_ABORT(MRRC_CMD_BIND, mrrc_cmd_bind, mrrc_cmd_bind_abort,
			    struct mrrc_bind, __reserved),
	MRRC_IOCTL_OP(MRRC_CMD_CTX_QUERY, mrrc_cmd_ctx_query,
		      struct mrrc_ctx_query, dev_name),
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
	if (ret)
		return ret;

	if (copy_to_user(ucmd.ubuffer, ucmd.cmd,
			 min_t(u32, ucmd.user_size, op->size))) {
		if (op->abort)
			op->abort(&ucmd);
		return -EFAULT;
	}
	return 0;
}
