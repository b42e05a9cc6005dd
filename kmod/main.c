// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - RDMA memory registration region cache.
 *
 * Module entry points and module-wide state.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "mrrc.h"
#include "conn.h"

/* Device list: protected by mrrc_devices_lock, see mrrc.h for the order. */
DEFINE_MUTEX(mrrc_devices_lock);
LIST_HEAD(mrrc_devices);
atomic_t mrrc_nr_ctx = ATOMIC_INIT(0);

ushort mrrc_dev_mode = 0666;
module_param_named(dev_mode, mrrc_dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode,
		 "permission bits of /dev/mrrc (default 0666, like the uverbs devices)");

ulong mrrc_default_max_pages = 262144;
module_param_named(max_pages, mrrc_default_max_pages, ulong, 0644);
MODULE_PARM_DESC(max_pages,
		 "default capacity of a context's registration cache, in pages (default 262144 = 1 GiB)");

uint mrrc_default_max_regions = 65536;
module_param_named(max_regions, mrrc_default_max_regions, uint, 0644);
MODULE_PARM_DESC(max_regions,
		 "default limit on a context's cached regions (default 65536)");

uint mrrc_keepalive_ms = 5000;
module_param_named(keepalive_ms, mrrc_keepalive_ms, uint, 0644);
MODULE_PARM_DESC(keepalive_ms,
		 "probe a connection idle this long with a zero-length RDMA WRITE, so a vanished peer is reported; 0 = never (default 5000)");

uint mrrc_ack_timeout = 18;
module_param_named(ack_timeout, mrrc_ack_timeout, uint, 0444);
MODULE_PARM_DESC(ack_timeout,
		 "RC local ACK timeout of connections, 4.096 us * 2^value, retried 6 times; 0 = rdma_cm's default, 1..31 (default 18, about 1.07 s)");

uint mrrc_send_window = MRRC_SQ_DEPTH;
module_param_named(send_window, mrrc_send_window, uint, 0444);
MODULE_PARM_DESC(send_window,
		 "most work requests a connection has outstanding on the wire, 32..1024 (default 1024)");

uint mrrc_max_conns = 1024;
module_param_named(max_conns, mrrc_max_conns, uint, 0644);
MODULE_PARM_DESC(max_conns,
		 "most connections and listeners one context may have, incoming requests included; 1..1048576 (default 1024)");

uint mrrc_max_handles = 1048576;
module_param_named(max_handles, mrrc_max_handles, uint, 0644);
MODULE_PARM_DESC(max_handles,
		 "most registration handles one context may hold, those of operations in flight included; 1..16777216 (default 1048576)");

static int __init mrrc_init(void)
{
	int ret;

	if (mrrc_dev_mode & ~0666) {
		pr_err("mrrc: dev_mode %#o: only read/write bits allowed\n",
		       mrrc_dev_mode);
		return -EINVAL;
	}
	if (mrrc_ack_timeout > 31) {
		pr_err("mrrc: ack_timeout %u: must be 0..31\n", mrrc_ack_timeout);
		return -EINVAL;
	}
	if (!mrrc_max_handles || mrrc_max_handles > MRRC_MAX_HANDLES_CAP) {
		pr_err("mrrc: max_handles %u: must be 1..%u\n",
		       mrrc_max_handles, MRRC_MAX_HANDLES_CAP);
		return -EINVAL;
	}
	if (!mrrc_max_conns || mrrc_max_conns > MRRC_MAX_CONNS_CAP) {
		pr_err("mrrc: max_conns %u: must be 1..%u\n", mrrc_max_conns,
		       MRRC_MAX_CONNS_CAP);
		return -EINVAL;
	}
	if (mrrc_send_window < 32 || mrrc_send_window > MRRC_SQ_DEPTH) {
		pr_err("mrrc: send_window %u: must be 32..%u\n",
		       mrrc_send_window, MRRC_SQ_DEPTH);
		return -EINVAL;
	}

	ret = mrrc_client_register();
	if (ret)
		return ret;

	ret = mrrc_chardev_init();
	if (ret)
		goto err_client;

	mrrc_debugfs_init();
	return 0;

err_client:
	mrrc_client_unregister();
	return ret;
}

static void __exit mrrc_exit(void)
{
	mrrc_debugfs_exit();
	mrrc_chardev_exit();
	mrrc_client_unregister();
	WARN_ON(!list_empty(&mrrc_devices));
}

module_init(mrrc_init);
module_exit(mrrc_exit);

MODULE_AUTHOR("The mrrc authors");
MODULE_DESCRIPTION("RDMA memory registration region cache");
MODULE_LICENSE("GPL");
