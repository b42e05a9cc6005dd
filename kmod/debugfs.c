// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - debugfs introspection: /sys/kernel/debug/mrrc/
 *
 *   devices    one line per RDMA device: index, name, bound file contexts
 *              and the pids that opened them
 *   contexts   number of open /dev/mrrc file descriptions
 *   caches     one line per registration cache: owner, mode, policy, gauges
 *              and counters (header line first)
 *   stats      module-wide counters, "name value" per line
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "mrrc.h"
#include "cache.h"

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

static int caches_show(struct seq_file *s, void *unused)
{
	mrrc_cache_debugfs_show(s);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(caches);

static int stats_show(struct seq_file *s, void *unused)
{
	struct mrrc_cache_stats st = {};
	const u64 *v = &st.requests;
	static const char *const names[] = {
		"requests", "hit_exact", "hit_subset", "hit_span", "overlap",
		"miss", "registrations", "reg_pages", "deregistrations",
		"dereg_pages", "dereg_batches", "max_batch", "evictions",
		"eviction_rounds", "invalidations", "cached_regions",
		"cached_pages", "pinned_pages", "inuse_regions", "handles",
		"model_cost_ns", "mre_recency", "pool_mrs", "pool_free",
		"pool_hits", "pool_misses", "pool_refills", "pool_aged",
		"reg_wrs", "inv_wrs", "inv_chains", "qp_resets",
		"fast_fallbacks", "caches", "whole_ranges", "exposures",
		"exposed", "expo_ordinary", "reg_timeouts", "exports",
		"exported", "export_bytes", "notifier_kept", "reg_chained",
		"reg_chain_uncached", "reg_chain_failures", "expo_chained",
		"hit_unlocked", "evicted_early", "evict_segment",
	};
	unsigned int i;

	BUILD_BUG_ON(ARRAY_SIZE(names) !=
		     (sizeof(st) - offsetof(struct mrrc_cache_stats, requests)) /
		     sizeof(u64));
	mrrc_cache_global_stats(&st);
	for (i = 0; i < ARRAY_SIZE(names); i++)
		seq_printf(s, "%s %llu\n", names[i], v[i]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(stats);

void mrrc_debugfs_init(void)
{
	mrrc_debugfs_root = debugfs_create_dir("mrrc", NULL);
	debugfs_create_file("devices", 0400, mrrc_debugfs_root, NULL,
			    &devices_fops);
	debugfs_create_file("contexts", 0400, mrrc_debugfs_root, NULL,
			    &contexts_fops);
	debugfs_create_file("caches", 0400, mrrc_debugfs_root, NULL,
			    &caches_fops);
	debugfs_create_file("stats", 0400, mrrc_debugfs_root, NULL,
			    &stats_fops);
}

void mrrc_debugfs_exit(void)
{
	debugfs_remove_recursive(mrrc_debugfs_root);
}
