// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - RDMA memory registration region cache.
 *
 * Module entry points and module-wide state.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

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

bool mrrc_async_inval = true;
module_param_named(async_inval, mrrc_async_inval, bool, 0644);
MODULE_PARM_DESC(async_inval,
		 "fast mode: evicted regions are invalidated by unsignalled LOCAL_INV chains completed in the background, and their pages unpinned then; N waits for every chain in the evicting call (default Y)");

bool mrrc_chain_reg = true;
module_param_named(chain_reg, mrrc_chain_reg, bool, 0644);
MODULE_PARM_DESC(chain_reg,
		 "fast mode: a data-path miss's REG_MR goes on the connection's own queue pair ahead of the operation and is not waited for; N: it is waited for on the context's registration queue pair (default Y)");

bool mrrc_chain_expo = true;
module_param_named(chain_expo, mrrc_chain_expo, bool, 0644);
MODULE_PARM_DESC(chain_expo,
		 "fast mode: a RECV's or STCRW's exposure REG_MR goes on the connection's queue pair, unsignalled, in the same post as its advertisement, not waited for; N: it is waited for on the context's registration queue pair (default Y)");

bool mrrc_lockless_hit = true;
module_param_named(lockless_hit, mrrc_lockless_hit, bool, 0644);
MODULE_PARM_DESC(lockless_hit,
		 "a request inside one cached region is served without the cache's mutex: an RCU lookup and a reference count; N: every request takes the mutex (default Y)");

bool mrrc_remote_inv = true;
module_param_named(remote_inv, mrrc_remote_inv, bool, 0644);
MODULE_PARM_DESC(remote_inv,
		 "a RECV or STCRW in one pooled MR lets the peer end its key with the message that completes it (SEND_WITH_INV); N: this side invalidates every exposure itself (default Y)");

/*
 * An unsigned parameter with a range: a value outside it is refused with
 * -EINVAL, at load time (the module does not load) and through sysfs.
 */
#define MRRC_UINT_PARAM(name, var, min, max, perm)			\
static int mrrc_param_set_##name(const char *val,			\
				 const struct kernel_param *kp)		\
{									\
	return param_set_uint_minmax(val, kp, min, max);		\
}									\
static const struct kernel_param_ops mrrc_param_ops_##name = {		\
	.set = mrrc_param_set_##name,					\
	.get = param_get_uint,						\
};									\
module_param_cb(name, &mrrc_param_ops_##name, &(var), perm)

uint mrrc_ack_timeout = 18;
MRRC_UINT_PARAM(ack_timeout, mrrc_ack_timeout, 0, 31, 0444);
MODULE_PARM_DESC(ack_timeout,
		 "RC local ACK timeout of connections, 4.096 us * 2^value, retried 6 times; 0 = rdma_cm's default, 1..31 (default 18, about 1.07 s)");

uint mrrc_send_window = MRRC_SQ_DEPTH;
MRRC_UINT_PARAM(send_window, mrrc_send_window, 32, MRRC_SQ_DEPTH, 0444);
MODULE_PARM_DESC(send_window,
		 "most work requests a connection has outstanding on the wire, 32..1024 (default 1024)");

uint mrrc_max_conns = 1024;
MRRC_UINT_PARAM(max_conns, mrrc_max_conns, 1, MRRC_MAX_CONNS_CAP, 0644);
MODULE_PARM_DESC(max_conns,
		 "most connections and listeners one context may have, incoming requests included; 1..1048576 (default 1024)");

uint mrrc_max_isolated = 16;
MRRC_UINT_PARAM(max_isolated, mrrc_max_isolated, 0, MRRC_MAX_CONNS_CAP,
		0644);
MODULE_PARM_DESC(max_isolated,
		 "most isolated connections one context may have (each has its own cache, with the per-context limits of its own); 0 refuses them, 0..1048576 (default 16)");

uint mrrc_max_handles = 1048576;
MRRC_UINT_PARAM(max_handles, mrrc_max_handles, 1, MRRC_MAX_HANDLES_CAP,
		0644);
MODULE_PARM_DESC(max_handles,
		 "most registration handles one context may hold, those of operations in flight included; 1..16777216 (default 1048576)");

uint mrrc_max_ops = 65536;
MRRC_UINT_PARAM(max_ops, mrrc_max_ops, 1, MRRC_MAX_OPS_CAP, 0644);
MODULE_PARM_DESC(max_ops,
		 "most operations one context may have outstanding (posted, not yet polled) over all its connections; 1..16777216 (default 65536)");

uint mrrc_max_exposed = 8192;
MRRC_UINT_PARAM(max_exposed, mrrc_max_exposed, 1, MRRC_MAX_OPS_CAP, 0644);
MODULE_PARM_DESC(max_exposed,
		 "most byte ranges one context may have exposed to peers at once (RECV and STCRW segments, one MR each); 1..16777216 (default 8192)");

static int __init mrrc_init(void)
{
	int ret;

	if (mrrc_dev_mode & ~0666) {
		pr_err("dev_mode %#o: only read/write bits allowed\n",
		       mrrc_dev_mode);
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
MODULE_VERSION(MRRC_VERSION);
