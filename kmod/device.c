// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - the ib_client: tracks RDMA devices as they come and go.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/string.h>
#include <linux/netdevice.h>
#include <rdma/ib_cache.h>

#include "mrrc.h"

static struct ib_client mrrc_client;

static void mrrc_device_free(struct kref *ref)
{
	struct mrrc_device *dev = container_of(ref, struct mrrc_device, ref);

	WARN_ON(!list_empty(&dev->ctx_list));
	mutex_destroy(&dev->lock);
	kfree(dev);
}

void mrrc_device_put(struct mrrc_device *dev)
{
	kref_put(&dev->ref, mrrc_device_free);
}

static int mrrc_add_one(struct ib_device *ibdev)
{
	struct mrrc_device *dev;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;

	kref_init(&dev->ref);
	dev->ibdev = ibdev;
	dev->index = ibdev->index;
	mutex_init(&dev->lock);
	INIT_LIST_HEAD(&dev->ctx_list);

	mutex_lock(&mrrc_devices_lock);
	strscpy(dev->name, dev_name(&ibdev->dev), sizeof(dev->name));
	list_add_tail(&dev->node, &mrrc_devices);
	mutex_unlock(&mrrc_devices_lock);

	ib_set_client_data(ibdev, &mrrc_client, dev);
	return 0;
}

static void mrrc_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct mrrc_device *dev = client_data;

	/* No new lookups: after this only bound contexts reach @dev. */
	mutex_lock(&mrrc_devices_lock);
	list_del_init(&dev->node);
	mutex_unlock(&mrrc_devices_lock);

	/* Release every object that lives on the device, then forget it. */
	mrrc_device_detach_all(dev);
	dev->ibdev = NULL;
	mrrc_device_put(dev);
}

static void mrrc_rename_one(struct ib_device *ibdev, void *client_data)
{
	struct mrrc_device *dev = client_data;

	mutex_lock(&mrrc_devices_lock);
	strscpy(dev->name, dev_name(&ibdev->dev), sizeof(dev->name));
	mutex_unlock(&mrrc_devices_lock);
}

static struct ib_client mrrc_client = {
	.name = "mrrc",
	.add = mrrc_add_one,
	.remove = mrrc_remove_one,
	.rename = mrrc_rename_one,
};

int mrrc_client_register(void)
{
	return ib_register_client(&mrrc_client);
}

void mrrc_client_unregister(void)
{
	ib_unregister_client(&mrrc_client);
}

/**
 * mrrc_device_get_by_name() - look up a registered device by name
 * @net: the caller's network namespace
 * @name: NUL-terminated device name
 *
 * A device the RDMA subsystem does not let @net use (exclusive netns mode,
 * device in another namespace: rdma_dev_access_netns()) is not there.
 *
 * Return: the device with a reference the caller must drop with
 * mrrc_device_put(), or NULL if no registered device has that name.
 */
struct mrrc_device *mrrc_device_get_by_name(const struct net *net,
					    const char *name)
{
	struct mrrc_device *dev, *found = NULL;

	mutex_lock(&mrrc_devices_lock);
	list_for_each_entry(dev, &mrrc_devices, node) {
		if (!strcmp(dev->name, name) &&
		    rdma_dev_access_netns(dev->ibdev, net)) {
			kref_get(&dev->ref);
			found = dev;
			break;
		}
	}
	mutex_unlock(&mrrc_devices_lock);
	return found;
}

/* How many registered devices @net may use. */
unsigned int mrrc_device_count(const struct net *net)
{
	struct mrrc_device *dev;
	unsigned int n = 0;

	mutex_lock(&mrrc_devices_lock);
	list_for_each_entry(dev, &mrrc_devices, node)
		n += rdma_dev_access_netns(dev->ibdev, net);
	mutex_unlock(&mrrc_devices_lock);
	return n;
}

static u32 mrrc_atomic_cap(enum ib_atomic_cap cap)
{
	switch (cap) {
	case IB_ATOMIC_HCA:
		return MRRC_ATOMIC_HCA;
	case IB_ATOMIC_GLOB:
		return MRRC_ATOMIC_GLOB;
	default:
		return MRRC_ATOMIC_NONE;
	}
}

static void mrrc_fill_dev_info(const struct mrrc_device *dev,
			       struct mrrc_dev_info *info)
{
	const struct ib_device *ibdev = dev->ibdev;
	const struct ib_device_attr *a = &ibdev->attrs;

	memset(info, 0, sizeof(*info));
	info->dev_index = dev->index;
	info->phys_port_cnt = rdma_end_port(ibdev);
	strscpy(info->name, dev->name, sizeof(info->name));
	info->node_guid = ibdev->node_guid;
	info->sys_image_guid = a->sys_image_guid;
	info->fw_ver = a->fw_ver;
	info->max_mr_size = a->max_mr_size;
	info->page_size_cap = a->page_size_cap;
	info->device_cap_flags = a->device_cap_flags;
	info->vendor_id = a->vendor_id;
	info->vendor_part_id = a->vendor_part_id;
	info->max_mr = a->max_mr;
	info->max_fast_reg_page_list_len = a->max_fast_reg_page_list_len;
	info->max_pd = a->max_pd;
	info->max_qp = a->max_qp;
	info->max_qp_wr = a->max_qp_wr;
	info->max_sge = a->max_send_sge;
	info->max_cq = a->max_cq;
	info->max_cqe = a->max_cqe;
	info->max_qp_rd_atom = a->max_qp_rd_atom;
	info->max_qp_init_rd_atom = a->max_qp_init_rd_atom;
	info->atomic_cap = mrrc_atomic_cap(a->atomic_cap);
}

/**
 * mrrc_device_list() - snapshot the registered devices @net may use
 * @net: the caller's network namespace
 * @info: array of @max entries to fill (may be NULL if @max is 0)
 * @max: room in @info
 * @total: set to the number of those devices
 *
 * Return: 0.  min(@max, *@total) entries are written, in registration order.
 */
int mrrc_device_list(const struct net *net, struct mrrc_dev_info *info,
		     unsigned int max, unsigned int *total)
{
	struct mrrc_device *dev;
	unsigned int n = 0;

	mutex_lock(&mrrc_devices_lock);
	list_for_each_entry(dev, &mrrc_devices, node) {
		if (!rdma_dev_access_netns(dev->ibdev, net))
			continue;
		if (n < max)
			mrrc_fill_dev_info(dev, &info[n]);
		n++;
	}
	mutex_unlock(&mrrc_devices_lock);
	*total = n;
	return 0;
}

static struct mrrc_device *
mrrc_device_find_locked(const struct net *net, u32 index)
{
	struct mrrc_device *dev;

	lockdep_assert_held(&mrrc_devices_lock);
	list_for_each_entry(dev, &mrrc_devices, node) {
		if (dev->index != index)
			continue;
		if (!rdma_dev_access_netns(dev->ibdev, net))
			return NULL;
		return dev;
	}
	return NULL;
}

static u32 mrrc_gid_type(enum ib_gid_type type)
{
	switch (type) {
	case IB_GID_TYPE_ROCE:
		return MRRC_GID_TYPE_ROCE;
	case IB_GID_TYPE_ROCE_UDP_ENCAP:
		return MRRC_GID_TYPE_ROCE_UDP_ENCAP;
	default:
		return MRRC_GID_TYPE_IB;
	}
}

static unsigned int mrrc_read_gids(struct ib_device *ibdev, u32 port,
				   unsigned int tbl_len,
				   struct mrrc_gid_entry *gids,
				   unsigned int max)
{
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	unsigned int i, n = 0;

	for (i = 0; i < tbl_len; i++) {
		attr = rdma_get_gid_attr(ibdev, port, i);
		if (IS_ERR(attr))
			continue;	/* empty or invalid entry */
		if (n < max) {
			struct mrrc_gid_entry *e = &gids[n];

			memset(e, 0, sizeof(*e));
			memcpy(e->gid, attr->gid.raw, sizeof(e->gid));
			e->index = attr->index;
			e->gid_type = mrrc_gid_type(attr->gid_type);
			rcu_read_lock();
			ndev = rdma_read_gid_attr_ndev_rcu(attr);
			if (!IS_ERR(ndev))
				e->netdev_ifindex = ndev->ifindex;
			rcu_read_unlock();
		}
		n++;
		rdma_put_gid_attr(attr);
	}
	return n;
}

static u32 mrrc_link_layer(struct ib_device *ibdev, u32 port)
{
	switch (rdma_port_get_link_layer(ibdev, port)) {
	case IB_LINK_LAYER_INFINIBAND:
		return MRRC_LINK_LAYER_INFINIBAND;
	case IB_LINK_LAYER_ETHERNET:
		return MRRC_LINK_LAYER_ETHERNET;
	default:
		return MRRC_LINK_LAYER_UNSPECIFIED;
	}
}

/**
 * mrrc_device_port_query() - query one port of a device and its populated GIDs
 * @net: the caller's network namespace: a device it may not use is not there
 * @dev_index: ib_core index of the device
 * @port: port number
 * @pq: output attributes; @pq->gid_count is set to the number of
 *	populated GID entries
 * @gids: array of @max entries to fill (may be NULL if @max is 0)
 * @max: room in @gids
 *
 * The device list lock is held across the query, so the device cannot
 * finish unregistering underneath it.
 *
 * Return: 0, -ENODEV if no registered device has @dev_index, -EINVAL if
 * @port is not a port of the device, or the error of ib_query_port().
 */
int mrrc_device_port_query(const struct net *net, u32 dev_index, u32 port,
			   struct mrrc_port_query *pq,
			   struct mrrc_gid_entry *gids, unsigned int max)
{
	struct ib_port_attr attr;
	struct mrrc_device *dev;
	struct ib_device *ibdev;
	int ret;

	mutex_lock(&mrrc_devices_lock);
	dev = mrrc_device_find_locked(net, dev_index);
	if (!dev) {
		ret = -ENODEV;
		goto out_unlock;
	}
	ibdev = dev->ibdev;
	if (!rdma_is_port_valid(ibdev, port)) {
		ret = -EINVAL;
		goto out_unlock;
	}
	ret = ib_query_port(ibdev, port, &attr);
	if (ret)
		goto out_unlock;

	pq->state = attr.state;
	pq->phys_state = attr.phys_state;
	pq->max_mtu = attr.max_mtu;
	pq->active_mtu = attr.active_mtu;
	pq->link_layer = mrrc_link_layer(ibdev, port);
	pq->gid_tbl_len = attr.gid_tbl_len;
	pq->lid = attr.lid;
	pq->active_speed = attr.active_speed;
	pq->active_width = attr.active_width;
	pq->gid_count = mrrc_read_gids(ibdev, port, attr.gid_tbl_len, gids,
				       max);
out_unlock:
	mutex_unlock(&mrrc_devices_lock);
	return ret;
}
