// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - debugfs introspection: /sys/kernel/debug/mrrc/
 *
 *   devices    one line per RDMA device: index, name, bound file contexts
 *              and the pids that opened them
 *   contexts   number of open /dev/mrrc file descriptions
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "mrrc.h"

static struct dentry *mrrc_debugfs_root;

static int devices_show(struct seq_file *s, void *unused)
{
	struct mrrc_device *dev;

	mutex_lock(&mrrc_devices_lock);
	list_for_each_entry(dev, &mrrc_devices, node) {
		struct mrrc_ctx *ctx;

		mutex_lock(&dev->lock);
		seq_printf(s, "%u %s contexts %u pids", dev->index, dev->name,
			   dev->nr_ctx);
		list_for_each_entry(ctx, &dev->ctx_list, dev_node)
			seq_printf(s, " %d", ctx->pid);
		seq_putc(s, '\n');
		mutex_unlock(&dev->lock);
	}
	mutex_unlock(&mrrc_devices_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(devices);

static int contexts_show(struct seq_file *s, void *unused)
{
	seq_printf(s, "%d\n", atomic_read(&mrrc_nr_ctx));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(contexts);

void mrrc_debugfs_init(void)
{
	mrrc_debugfs_root = debugfs_create_dir("mrrc", NULL);
	debugfs_create_file("devices", 0400, mrrc_debugfs_root, NULL,
			    &devices_fops);
	debugfs_create_file("contexts", 0400, mrrc_debugfs_root, NULL,
			    &contexts_fops);
}

void mrrc_debugfs_exit(void)
{
	debugfs_remove_recursive(mrrc_debugfs_root);
}
