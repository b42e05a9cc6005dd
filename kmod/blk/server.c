// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc_blksrv - the memory server of mrrc_blk: lends size_mb MiB of this
 * host's memory to block clients, which read and write it with one-sided
 * RDMA.  This CPU is not on the data path: after a queue connects it only
 * sees the queue's disconnect.
 *
 * The memory is allocated page by page when the module loads and
 * registered through mrrc's in-kernel API (mrrc_kcache_reg_pages(), FRWR
 * MRs from mrrc's pools, remote READ and WRITE) on the RDMA device of the
 * first client that connects; clients on other devices are refused.
 * It is a deliberate export: any host that reaches the port with the
 * protocol's magic may read and write all of it, as with an nvmet port
 * open to any host (Documentation/mrrc_blk.rst).  Nothing else of this
 * host is reachable: the MRs cover the lent pages and a read-only key
 * table, nothing more.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/inet.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "mrrc_kapi.h"
#include "blk_wire.h"

/* 2 MiB chunks (rxe's biggest fast MR): 512 of them lend 1 GiB. */
#define MRRC_BLK_MAX_CHUNK_PAGES	512

static unsigned int size_mb = 256;
module_param(size_mb, uint, 0444);
MODULE_PARM_DESC(size_mb, "memory lent to clients, in MiB, 1..1024 (default 256)");

static unsigned short port = MRRC_BLK_DEFAULT_PORT;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "RDMA CM port to listen on (default 7726)");

static char *addr = "0.0.0.0";
module_param(addr, charp, 0444);
MODULE_PARM_DESC(addr, "IPv4 address to listen on (default 0.0.0.0: all)");

static unsigned int max_conns = 64;
module_param(max_conns, uint, 0444);
MODULE_PARM_DESC(max_conns, "most client queues connected at once (default 64)");

/* A client's queue: a QP the client reads and writes through. */
struct blksrv_conn {
	struct list_head node;		/* in blksrv.conns */
	struct rdma_cm_id *id;
	struct ib_cq *cq;
	struct work_struct release;
	bool releasing;			/* release queued; under blksrv.lock */
};

/*
 * The server.  @lock (a mutex: CM handlers sleep) protects @conns, @nconns,
 * @dev, @pd, @kc and the registrations; taken in CM handlers and work.
 */
static struct {
	struct mutex lock;		/* see above */
	struct list_head conns;
	unsigned int nconns;
	bool stopping;
	bool removing;			/* srv.dev is being removed */
	struct rdma_cm_id *listen;
	struct workqueue_struct *wq;
	/* the lent memory and its registration */
	struct page **pages;
	unsigned long npages;
	u32 chunk_pages;
	u32 nchunks;
	struct page *table;		/* __be32 rkeys, one per chunk */
	struct ib_device *dev;
	struct ib_pd *pd;
	struct mrrc_kcache *kc;
	u32 table_rkey;
	u64 connects, refused;
} srv;

/* Register the memory and the table on @dev; srv.lock held. */
static int blksrv_register(struct ib_device *dev)
{
	u32 access = MRRC_ACCESS_LOCAL_WRITE | MRRC_ACCESS_REMOTE_READ |
		     MRRC_ACCESS_REMOTE_WRITE;
	struct mrrc_cache_config cfg = {};
	__be32 *table = page_address(srv.table);
	struct mrrc_seg seg;
	unsigned long p;
	u32 c, handle;
	int ret;

	if (!(dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) ||
	    dev->attrs.max_fast_reg_page_list_len <
	    MRRC_BLK_MIN_CHUNK_BYTES / PAGE_SIZE)
		return -EOPNOTSUPP;
	srv.pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(srv.pd)) {
		ret = PTR_ERR(srv.pd);
		srv.pd = NULL;
		return ret;
	}
	srv.kc = mrrc_kcache_create(srv.pd);
	if (IS_ERR(srv.kc)) {
		ret = PTR_ERR(srv.kc);
		srv.kc = NULL;
		goto err_pd;
	}
	cfg.max_pages = srv.npages + 1;
	ret = mrrc_kcache_config(srv.kc, &cfg);
	if (ret)
		goto err_kc;
	srv.chunk_pages = min_t(u32, dev->attrs.max_fast_reg_page_list_len,
				MRRC_BLK_MAX_CHUNK_PAGES);
	srv.chunk_pages = rounddown_pow_of_two(srv.chunk_pages);
	srv.nchunks = DIV_ROUND_UP(srv.npages, srv.chunk_pages);
	if (srv.nchunks > MRRC_BLK_MAX_CHUNKS) {
		ret = -E2BIG;
		goto err_kc;
	}
	for (c = 0, p = 0; c < srv.nchunks; c++, p += srv.chunk_pages) {
		ret = mrrc_kcache_reg_pages(srv.kc, srv.pages + p,
					    min_t(unsigned long,
						  srv.chunk_pages,
						  srv.npages - p),
					    access, &seg, &handle);
		if (ret)
			goto err_kc;
		table[c] = cpu_to_be32(seg.rkey);
	}
	ret = mrrc_kcache_reg_pages(srv.kc, &srv.table, 1,
				    MRRC_ACCESS_REMOTE_READ, &seg, &handle);
	if (ret)
		goto err_kc;
	srv.table_rkey = seg.rkey;
	srv.dev = dev;
	pr_info("lending %lu MiB on %s: %u chunks of %u KiB\n",
		srv.npages >> (20 - PAGE_SHIFT), dev_name(&dev->dev),
		srv.nchunks, srv.chunk_pages << (PAGE_SHIFT - 10));
	return 0;

err_kc:
	/* Destroying the cache deregisters every MR made so far. */
	mrrc_kcache_destroy(srv.kc);
	srv.kc = NULL;
err_pd:
	ib_dealloc_pd(srv.pd);
	srv.pd = NULL;
	return ret;
}

static void blksrv_conn_release(struct work_struct *w)
{
	struct blksrv_conn *conn = container_of(w, struct blksrv_conn,
						release);

	rdma_disconnect(conn->id);
	if (conn->id->qp) {
		ib_drain_qp(conn->id->qp);
		rdma_destroy_qp(conn->id);
	}
	if (conn->cq)
		ib_free_cq(conn->cq);
	rdma_destroy_id(conn->id);
	mutex_lock(&srv.lock);
	list_del(&conn->node);
	srv.nconns--;
	mutex_unlock(&srv.lock);
	kfree(conn);
}

/* Queue @conn's release once; srv.lock held. */
static void blksrv_conn_drop(struct blksrv_conn *conn)
{
	if (conn->releasing)
		return;
	conn->releasing = true;
	queue_work(srv.wq, &conn->release);
}

/* A connect request: check it, give it a QP, accept it.  srv.lock held. */
static int blksrv_connect(struct rdma_cm_id *id,
			  const struct rdma_conn_param *req)
{
	const struct mrrc_blk_hello *hello = req->private_data;
	struct mrrc_blk_welcome w = {
		.magic = cpu_to_be32(MRRC_BLK_MAGIC),
		.version = cpu_to_be16(MRRC_BLK_WIRE_VERSION),
	};
	struct ib_qp_init_attr init = {};
	struct rdma_conn_param param = {};
	struct blksrv_conn *conn;
	int ret;

	if (req->private_data_len < sizeof(*hello) ||
	    be32_to_cpu(hello->magic) != MRRC_BLK_MAGIC ||
	    be16_to_cpu(hello->version) != MRRC_BLK_WIRE_VERSION)
		return -EPROTO;
	if (srv.stopping || srv.removing)
		return -ESHUTDOWN;
	if (srv.nconns >= max_conns)
		return -EMFILE;
	if (!srv.dev) {
		ret = blksrv_register(id->device);
		if (ret)
			return ret;
	} else if (srv.dev != id->device) {
		return -EXDEV;
	}

	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		return -ENOMEM;
	conn->id = id;
	INIT_WORK(&conn->release, blksrv_conn_release);
	/* Nothing is posted here but the drain's WRs. */
	conn->cq = ib_alloc_cq(id->device, conn, 4, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(conn->cq)) {
		ret = PTR_ERR(conn->cq);
		kfree(conn);
		return ret;
	}
	init.send_cq = conn->cq;
	init.recv_cq = conn->cq;
	init.cap.max_send_wr = 1;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	init.sq_sig_type = IB_SIGNAL_REQ_WR;
	init.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(id, srv.pd, &init);
	if (ret) {
		ib_free_cq(conn->cq);
		kfree(conn);
		return ret;
	}

	w.size = cpu_to_be64((u64)srv.npages << PAGE_SHIFT);
	w.chunk_bytes = cpu_to_be32(srv.chunk_pages << PAGE_SHIFT);
	w.nchunks = cpu_to_be32(srv.nchunks);
	w.table_rkey = cpu_to_be32(srv.table_rkey);
	w.table_len = cpu_to_be32(srv.nchunks * sizeof(__be32));
	param.private_data = &w;
	param.private_data_len = sizeof(w);
	/* The client's initiator depth (seen from here: our responder side). */
	param.responder_resources = min_t(u32, req->responder_resources,
					  id->device->attrs.max_qp_rd_atom);
	param.initiator_depth = 0;
	param.rnr_retry_count = 7;

	id->context = conn;
	list_add_tail(&conn->node, &srv.conns);
	srv.nconns++;
	ret = rdma_accept(id, &param);
	if (ret) {
		/* The CM destroys the id; the QP and CQ are ours. */
		list_del(&conn->node);
		srv.nconns--;
		id->context = NULL;
		rdma_destroy_qp(id);
		ib_free_cq(conn->cq);
		kfree(conn);
		return ret;
	}
	srv.connects++;
	return 0;
}

static int blksrv_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct blksrv_conn *conn = id->context;
	int ret = 0;

	if (id == srv.listen)
		return 0;	/* the listener's own events: nothing to do */

	mutex_lock(&srv.lock);
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		ret = blksrv_connect(id, &ev->param.conn);
		if (ret) {
			srv.refused++;
			pr_debug("connect request refused: %d\n", ret);
			rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
			/* Non-zero: the CM destroys this id. */
			ret = 1;
		}
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		if (conn)
			blksrv_conn_drop(conn);
		break;
	default:
		break;
	}
	mutex_unlock(&srv.lock);
	return ret;
}

/*
 * An RDMA device goes away (or the module unloads): if it is the one the
 * memory is registered on, disconnect its clients and deregister.  The
 * next client, on any device, registers the memory again.
 */
static void blksrv_remove_one(struct ib_device *dev, void *client_data)
{
	struct blksrv_conn *conn;

	mutex_lock(&srv.lock);
	if (srv.dev != dev) {
		mutex_unlock(&srv.lock);
		return;
	}
	srv.removing = true;
	list_for_each_entry(conn, &srv.conns, node)
		blksrv_conn_drop(conn);
	mutex_unlock(&srv.lock);
	flush_workqueue(srv.wq);	/* every release has run */

	mutex_lock(&srv.lock);
	WARN_ON(!list_empty(&srv.conns));
	mrrc_kcache_destroy(srv.kc);	/* every key ends here */
	ib_dealloc_pd(srv.pd);
	srv.kc = NULL;
	srv.pd = NULL;
	srv.dev = NULL;
	srv.removing = false;
	mutex_unlock(&srv.lock);
}

static struct ib_client blksrv_client = {
	.name = "mrrc_blksrv",
	.remove = blksrv_remove_one,
};

static int blksrv_listen(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int ret;

	if (!in4_pton(addr, -1, (u8 *)&sin.sin_addr.s_addr, -1, NULL)) {
		pr_err("addr=%s is not an IPv4 address\n", addr);
		return -EINVAL;
	}
	sin.sin_port = htons(port);
	srv.listen = rdma_create_id(&init_net, blksrv_cm_handler, NULL,
				    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(srv.listen))
		return PTR_ERR(srv.listen);
	ret = rdma_bind_addr(srv.listen, (struct sockaddr *)&sin);
	if (!ret)
		ret = rdma_listen(srv.listen, 64);
	if (ret) {
		pr_err("cannot listen on %pI4:%u: %d\n", &sin.sin_addr, port,
		       ret);
		rdma_destroy_id(srv.listen);
		srv.listen = NULL;
	}
	return ret;
}

static void blksrv_free_pages(void)
{
	unsigned long i;

	for (i = 0; i < srv.npages; i++)
		if (srv.pages[i])
			__free_page(srv.pages[i]);
	kvfree(srv.pages);
	if (srv.table)
		__free_page(srv.table);
}

static int __init blksrv_init(void)
{
	unsigned long i;
	int ret;

	if (!size_mb || size_mb > 1024) {
		pr_err("size_mb=%u: must be 1..1024\n", size_mb);
		return -EINVAL;
	}
	mutex_init(&srv.lock);
	INIT_LIST_HEAD(&srv.conns);
	srv.npages = (unsigned long)size_mb << (20 - PAGE_SHIFT);
	srv.pages = kvcalloc(srv.npages, sizeof(*srv.pages), GFP_KERNEL);
	if (!srv.pages)
		return -ENOMEM;
	for (i = 0; i < srv.npages; i++) {
		srv.pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!srv.pages[i]) {
			ret = -ENOMEM;
			goto err_pages;
		}
		cond_resched();
	}
	srv.table = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!srv.table) {
		ret = -ENOMEM;
		goto err_pages;
	}
	srv.wq = alloc_workqueue("mrrc_blksrv", WQ_UNBOUND, 0);
	if (!srv.wq) {
		ret = -ENOMEM;
		goto err_pages;
	}
	ret = ib_register_client(&blksrv_client);
	if (ret)
		goto err_wq;
	ret = blksrv_listen();
	if (ret)
		goto err_client;
	pr_info("%u MiB, listening on %s:%u\n", size_mb, addr, port);
	return 0;

err_client:
	ib_unregister_client(&blksrv_client);
err_wq:
	destroy_workqueue(srv.wq);
err_pages:
	blksrv_free_pages();
	return ret;
}

static void __exit blksrv_exit(void)
{
	/* No new connections; then every client gone, the memory freed. */
	rdma_destroy_id(srv.listen);
	mutex_lock(&srv.lock);
	srv.stopping = true;
	mutex_unlock(&srv.lock);
	ib_unregister_client(&blksrv_client);	/* blksrv_remove_one() */
	destroy_workqueue(srv.wq);
	WARN_ON(!list_empty(&srv.conns) || srv.kc);
	blksrv_free_pages();
	pr_info("stopped: %llu queues served, %llu refused\n", srv.connects,
		srv.refused);
}

module_init(blksrv_init);
module_exit(blksrv_exit);

MODULE_AUTHOR("mrrc developers");
MODULE_DESCRIPTION("mrrc_blk memory server: lends memory to mrrc_blk clients over one-sided RDMA");
MODULE_LICENSE("GPL");
MODULE_VERSION(MRRC_VERSION);
