// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - the /dev/mrrc misc device.  Each open file description is a
 * context that owns every object created through it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>

#include "mrrc.h"

static int mrrc_fop_open(struct inode *inode, struct file *filp)
{
	struct mrrc_ctx *ctx;

	ctx = mrrc_ctx_create();
	if (!ctx)
		return -ENOMEM;
	filp->private_data = ctx;
	return nonseekable_open(inode, filp);
}

static int mrrc_fop_release(struct inode *inode, struct file *filp)
{
	mrrc_ctx_release(filp->private_data);
	return 0;
}

/* Readable while completions or connection events wait for MRRC_IOC_POLL. */
static __poll_t mrrc_poll(struct file *filp, poll_table *wait)
{
	struct mrrc_ctx *ctx = filp->private_data;

	poll_wait(filp, &ctx->wq, wait);
	return list_empty_careful(&ctx->done) ? 0 : EPOLLIN | EPOLLRDNORM;
}

static const struct file_operations mrrc_fops = {
	.owner = THIS_MODULE,
	.open = mrrc_fop_open,
	.release = mrrc_fop_release,
	.poll = mrrc_poll,
	.unlocked_ioctl = mrrc_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice mrrc_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "mrrc",
	.fops = &mrrc_fops,
};

int mrrc_chardev_init(void)
{
	mrrc_miscdev.mode = mrrc_dev_mode & 0666;
	return misc_register(&mrrc_miscdev);
}

void mrrc_chardev_exit(void)
{
	misc_deregister(&mrrc_miscdev);
}
