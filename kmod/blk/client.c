// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc_blk - a blk-mq block device over memory lent by mrrc_blksrv on a
 * remote host (Documentation/mrrc_blk.rst).
 *
 * Each hardware queue has its own RC queue pair to the server.  A request
 * becomes RDMA READs or WRITEs straight to the server's memory: the
 * server's CPU takes no part.  Its pages are made RDMA-usable through
 * mrrc's in-kernel API (mrrc_kcache_reg() on their direct-map addresses):
 * page-cache and user pages come back again and again, so most requests
 * hit the registration cache and cost a lookup, and a miss costs one
 * FRWR registration from mrrc's pools.  Each request holds its handles
 * until its last work request completes, so nothing it uses is evicted
 * under it.
 *
 * Control: /sys/kernel/mrrc_blk/attach and .../detach, or `mrrc blk`.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/completion.h>
#include <linux/idr.h>
#include <linux/inet.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/dma-map-ops.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/swiotlb.h>
#include <linux/sysfs.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "mrrc_kapi.h"
#include "blk_wire.h"

#define MRRC_BLK_MAX_QUEUES	16
#define MRRC_BLK_MAX_DEPTH	256
#define MRRC_BLK_MINORS		16
/* A request: at most 128 KiB in at most 32 physical segments. */
#define MRRC_BLK_MAX_SECTORS	(MRRC_BLK_MIN_CHUNK_BYTES >> SECTOR_SHIFT)
#define MRRC_BLK_MAX_SEGS	32
/* Cached pieces per request (a range may span several regions). */
#define MRRC_BLK_MAX_PIECES	64
/* SGEs: the pieces, each split at most once at a chunk boundary. */
#define MRRC_BLK_MAX_SGES	(MRRC_BLK_MAX_PIECES + 2)
/* Work requests: a device offers at least 8 SGEs per RDMA READ. */
#define MRRC_BLK_MIN_SGE	8
#define MRRC_BLK_MAX_WRS	(MRRC_BLK_MAX_SGES / MRRC_BLK_MIN_SGE + 3)
#define MRRC_BLK_CM_TIMEOUT_MS	10000
/* RC ACK timeout 4.096 us * 2^16 (268 ms), retried 7 times: ~2 s. */
#define MRRC_BLK_ACK_TIMEOUT	16

static unsigned int nr_queues;
module_param(nr_queues, uint, 0644);
MODULE_PARM_DESC(nr_queues,
		 "hardware queues (one RC QP each) of a new device, 1..16; 0 = one per online CPU, at most 4 (default 0)");

static unsigned int queue_depth = 64;
module_param(queue_depth, uint, 0644);
MODULE_PARM_DESC(queue_depth,
		 "requests in flight per hardware queue of a new device, 1..256 (default 64)");

static unsigned int io_timeout = 30;
module_param(io_timeout, uint, 0644);
MODULE_PARM_DESC(io_timeout,
		 "seconds before a request times out and the device fails its I/O with EIO, 1..3600 (default 30)");

struct mrrc_blk_dev;

struct mrrc_blk_queue {
	struct mrrc_blk_dev *dev;
	struct rdma_cm_id *id;
	struct ib_cq *cq;
	struct completion cm_done;
	int cm_status;
	struct mrrc_blk_welcome welcome;
	unsigned int index;
};

/* A request's state: blk-mq's per-request payload. */
struct mrrc_blk_cmd {
	struct ib_cqe cqe;
	atomic_t pending;		/* work requests not yet completed */
	blk_status_t status;
	bool faked;			/* completion dropped: fake timeout */
	u32 nh;
	u32 handles[MRRC_BLK_MAX_SEGS];
	struct mrrc_seg segs[MRRC_BLK_MAX_PIECES];
	struct ib_sge sge[MRRC_BLK_MAX_SGES + 1];
	struct ib_rdma_wr wr[MRRC_BLK_MAX_WRS];
};

enum { MRRC_BLK_DEAD };

struct mrrc_blk_stats {
	atomic64_t reads, writes, flushes, fua, read_bytes, write_bytes;
	atomic64_t errors, timeouts, requeues, map_errors;
};

/*
 * A device.  Set up by attach and torn down by detach, both under
 * mrrc_blk_lock; @flags (MRRC_BLK_DEAD) and @err_work are used from CM
 * handlers, completions and the block layer's timeout handler.
 */
struct mrrc_blk_dev {
	struct list_head node;		/* in mrrc_blk_devs */
	int index;
	unsigned long flags;
	struct work_struct err_work;
	struct sockaddr_in peer;
	unsigned int nr_queues, depth;
	struct mrrc_blk_queue *queues;
	/* RDMA state, all on the device queue 0 resolved to */
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct mrrc_kcache *kc;
	u32 max_sge;
	/* A page: the key table as read, then scratch for flush READs. */
	void *buf;
	u32 buf_lkey;
	u32 buf_handle;
	struct ib_cqe table_cqe;
	struct completion table_done;
	int table_status;
	/* the server's memory */
	u64 size;
	unsigned int chunk_shift;
	u32 nchunks;
	u32 *rkeys;
	struct blk_mq_tag_set tag_set;
	struct gendisk *disk;
	struct mrrc_blk_stats st;
};

static DEFINE_MUTEX(mrrc_blk_lock);	/* the device list, attach, detach */
static LIST_HEAD(mrrc_blk_devs);
static DEFINE_IDA(mrrc_blk_ida);
static int mrrc_blk_major;
/* Failure work: may run while memory is reclaimed through a device. */
static struct workqueue_struct *mrrc_blk_wq;
static struct kobject *mrrc_blk_kobj;

/* ---- failure ----------------------------------------------------------- */

static void mrrc_blk_qp_error(struct mrrc_blk_queue *q)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (!q->id || !q->id->qp)
		return;
	rdma_disconnect(q->id);
	ib_modify_qp(q->id->qp, &attr, IB_QP_STATE);
}

static void mrrc_blk_err_work(struct work_struct *w)
{
	struct mrrc_blk_dev *dev = container_of(w, struct mrrc_blk_dev,
						err_work);
	unsigned int i, noio = memalloc_noio_save();

	/*
	 * Every QP to the error state, which flushes what is in flight (the
	 * disconnect alone may not: it fails before the connection exists).
	 * Attach and detach cancel this work before they touch the queues.
	 */
	for (i = 0; i < dev->nr_queues; i++)
		mrrc_blk_qp_error(&dev->queues[i]);
	memalloc_noio_restore(noio);
}

/* The peer or the link failed: fail all I/O from now on, once. */
static void mrrc_blk_fail(struct mrrc_blk_dev *dev, const char *why)
{
	if (test_and_set_bit(MRRC_BLK_DEAD, &dev->flags))
		return;
	pr_err("mrrcb%d: %s: failing all I/O\n", dev->index, why);
	queue_work(mrrc_blk_wq, &dev->err_work);
}

/* ---- the data path ----------------------------------------------------- */

static void mrrc_blk_release_handles(struct mrrc_blk_dev *dev,
				     struct mrrc_blk_cmd *cmd)
{
	/* A release may free and allocate: never recurse into I/O. */
	unsigned int noio = memalloc_noio_save();

	while (cmd->nh)
		mrrc_kcache_release(dev->kc, cmd->handles[--cmd->nh]);
	memalloc_noio_restore(noio);
}

static void mrrc_blk_finish(struct mrrc_blk_dev *dev, struct mrrc_blk_cmd *cmd)
{
	struct request *rq = blk_mq_rq_from_pdu(cmd);

	mrrc_blk_release_handles(dev, cmd);
	if (cmd->status)
		atomic64_inc(&dev->st.errors);
	if (unlikely(blk_should_fake_timeout(rq->q))) {
		/* Fault injection: the timeout handler completes it. */
		WRITE_ONCE(cmd->faked, true);
		return;
	}
	blk_mq_complete_request(rq);
}

/* A work request completed (CQ polled in a workqueue: may sleep). */
static void mrrc_blk_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrrc_blk_cmd *cmd = container_of(wc->wr_cqe,
						struct mrrc_blk_cmd, cqe);
	struct mrrc_blk_queue *q = cq->cq_context;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		cmd->status = BLK_STS_IOERR;
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			mrrc_blk_fail(q->dev, ib_wc_status_msg(wc->status));
	}
	if (atomic_dec_and_test(&cmd->pending))
		mrrc_blk_finish(q->dev, cmd);
}

static void mrrc_blk_complete_rq(struct request *rq)
{
	struct mrrc_blk_cmd *cmd = blk_mq_rq_to_pdu(rq);

	blk_mq_end_request(rq, cmd->status);
}

/* Make one contiguous kernel range usable and add its pieces. */
static blk_status_t mrrc_blk_reg(struct mrrc_blk_dev *dev,
				 struct mrrc_blk_cmd *cmd, unsigned long start,
				 unsigned long len, u32 *npieces)
{
	unsigned int noio;
	u32 got, h;
	int ret;

	if (cmd->nh == MRRC_BLK_MAX_SEGS || *npieces == MRRC_BLK_MAX_PIECES)
		return BLK_STS_IOERR;
	/* A miss allocates: never recurse into I/O for that. */
	noio = memalloc_noio_save();
	ret = mrrc_kcache_reg(dev->kc, (void *)start, len,
			      MRRC_ACCESS_LOCAL_WRITE, 0, cmd->segs + *npieces,
			      MRRC_BLK_MAX_PIECES - *npieces, &got, &h);
	memalloc_noio_restore(noio);
	if (ret < 0) {
		/* No room or memory now: the block layer tries again. */
		if (ret == -ENOMEM || ret == -ENOSPC || ret == -EMFILE) {
			atomic64_inc(&dev->st.requeues);
			return BLK_STS_RESOURCE;
		}
		atomic64_inc(&dev->st.map_errors);
		pr_err_ratelimited("mrrcb%d: registration failed: %d\n",
				   dev->index, ret);
		return BLK_STS_IOERR;
	}
	cmd->handles[cmd->nh++] = h;
	*npieces += got;
	return BLK_STS_OK;
}

/* The request's pages as cached pieces, in order. */
static blk_status_t mrrc_blk_map(struct mrrc_blk_dev *dev, struct request *rq,
				 struct mrrc_blk_cmd *cmd, u32 *npieces)
{
	unsigned long start = 0, len = 0, a;
	struct req_iterator iter;
	struct bio_vec bv;
	blk_status_t st;

	*npieces = 0;
	rq_for_each_segment(bv, rq, iter) {
		a = (unsigned long)bvec_virt(&bv);
		if (len && start + len == a) {
			len += bv.bv_len;
			continue;
		}
		if (len) {
			st = mrrc_blk_reg(dev, cmd, start, len, npieces);
			if (st)
				return st;
		}
		start = a;
		len = bv.bv_len;
	}
	return len ? mrrc_blk_reg(dev, cmd, start, len, npieces) : BLK_STS_OK;
}

static struct ib_rdma_wr *mrrc_blk_new_wr(struct mrrc_blk_dev *dev,
					  struct mrrc_blk_cmd *cmd, u32 *nwr,
					  enum ib_wr_opcode op, u64 off)
{
	struct ib_rdma_wr *wr;

	if (*nwr == MRRC_BLK_MAX_WRS)
		return NULL;
	wr = &cmd->wr[(*nwr)++];
	memset(wr, 0, sizeof(*wr));
	wr->wr.opcode = op;
	wr->wr.wr_cqe = &cmd->cqe;
	wr->wr.send_flags = IB_SEND_SIGNALED;
	wr->remote_addr = off & ((1ULL << dev->chunk_shift) - 1);
	wr->rkey = dev->rkeys[off >> dev->chunk_shift];
	return wr;
}

/*
 * Work requests for the pieces: one per run of pieces inside one of the
 * server's chunks, at most max_sge SGEs each.
 */
static int mrrc_blk_build(struct mrrc_blk_dev *dev, struct mrrc_blk_cmd *cmd,
			  enum ib_wr_opcode op, u64 off, u32 npieces,
			  u32 *nwr, u32 *nsge)
{
	u64 chunk_bytes = 1ULL << dev->chunk_shift;
	struct ib_rdma_wr *wr = NULL;
	u32 i;

	for (i = 0; i < npieces; i++) {
		u64 addr = cmd->segs[i].addr, left = cmd->segs[i].length;

		while (left) {
			u64 coff = off & (chunk_bytes - 1);
			u64 piece = min(left, chunk_bytes - coff);
			struct ib_sge *sge;

			if (!wr || !coff || wr->wr.num_sge == dev->max_sge) {
				wr = mrrc_blk_new_wr(dev, cmd, nwr, op, off);
				if (!wr)
					return -E2BIG;
				wr->wr.sg_list = &cmd->sge[*nsge];
			}
			if (*nsge == MRRC_BLK_MAX_SGES)
				return -E2BIG;
			sge = &cmd->sge[(*nsge)++];
			sge->addr = addr;
			sge->length = piece;
			sge->lkey = cmd->segs[i].lkey;
			wr->wr.num_sge++;
			addr += piece;
			left -= piece;
			off += piece;
		}
	}
	return 0;
}

/*
 * An 8-byte RDMA READ at @off into the scratch buffer: behind the WRITEs
 * posted before it on this QP, it completes only once they are placed in
 * the server's memory (a READ does not pass earlier WRITEs).
 */
static int mrrc_blk_add_fence(struct mrrc_blk_dev *dev,
			      struct mrrc_blk_cmd *cmd, u64 off, u32 *nwr,
			      u32 *nsge)
{
	struct ib_rdma_wr *wr;
	struct ib_sge *sge;

	wr = mrrc_blk_new_wr(dev, cmd, nwr, IB_WR_RDMA_READ, off);
	if (!wr || *nsge > MRRC_BLK_MAX_SGES)
		return -E2BIG;
	sge = &cmd->sge[(*nsge)++];
	sge->addr = (uintptr_t)dev->buf + PAGE_SIZE - 8;
	sge->length = 8;
	sge->lkey = dev->buf_lkey;
	wr->wr.sg_list = sge;
	wr->wr.num_sge = 1;
	return 0;
}

static blk_status_t mrrc_blk_queue_rq(struct blk_mq_hw_ctx *hctx,
				      const struct blk_mq_queue_data *bd)
{
	struct mrrc_blk_queue *q = hctx->driver_data;
	struct mrrc_blk_dev *dev = q->dev;
	struct request *rq = bd->rq;
	struct mrrc_blk_cmd *cmd = blk_mq_rq_to_pdu(rq);
	u64 off = (u64)blk_rq_pos(rq) << SECTOR_SHIFT;
	const struct ib_send_wr *bad = NULL;
	u32 npieces = 0, nwr = 0, nsge = 0, i, posted;
	enum ib_wr_opcode op;
	blk_status_t st;
	int ret;

	if (test_bit(MRRC_BLK_DEAD, &dev->flags))
		return BLK_STS_IOERR;
	cmd->status = BLK_STS_OK;
	cmd->faked = false;
	cmd->nh = 0;
	cmd->cqe.done = mrrc_blk_done;

	switch (req_op(rq)) {
	case REQ_OP_READ:
		op = IB_WR_RDMA_READ;
		break;
	case REQ_OP_WRITE:
		op = IB_WR_RDMA_WRITE;
		break;
	case REQ_OP_FLUSH:
		blk_mq_start_request(rq);
		atomic64_inc(&dev->st.flushes);
		ret = mrrc_blk_add_fence(dev, cmd, 0, &nwr, &nsge);
		goto post;
	default:
		return BLK_STS_NOTSUPP;
	}

	st = mrrc_blk_map(dev, rq, cmd, &npieces);
	if (st) {
		mrrc_blk_release_handles(dev, cmd);
		return st;
	}
	blk_mq_start_request(rq);
	ret = mrrc_blk_build(dev, cmd, op, off, npieces, &nwr, &nsge);
	if (op == IB_WR_RDMA_READ) {
		atomic64_inc(&dev->st.reads);
		atomic64_add(blk_rq_bytes(rq), &dev->st.read_bytes);
	} else {
		atomic64_inc(&dev->st.writes);
		atomic64_add(blk_rq_bytes(rq), &dev->st.write_bytes);
		if (!ret && (rq->cmd_flags & REQ_FUA)) {
			atomic64_inc(&dev->st.fua);
			ret = mrrc_blk_add_fence(dev, cmd, off, &nwr, &nsge);
		}
	}
post:
	if (ret) {
		atomic64_inc(&dev->st.map_errors);
		mrrc_blk_release_handles(dev, cmd);
		return BLK_STS_IOERR;
	}
	if (unlikely(!nwr)) {
		/* Nothing to move (no data): done. */
		mrrc_blk_release_handles(dev, cmd);
		blk_mq_end_request(rq, BLK_STS_OK);
		return BLK_STS_OK;
	}
	for (i = 0; i + 1 < nwr; i++)
		cmd->wr[i].wr.next = &cmd->wr[i + 1].wr;
	atomic_set(&cmd->pending, nwr);
	ret = ib_post_send(q->id->qp, &cmd->wr[0].wr, &bad);
	if (unlikely(ret)) {
		for (posted = 0; posted < nwr && &cmd->wr[posted].wr != bad;
		     posted++)
			;
		cmd->status = BLK_STS_IOERR;
		mrrc_blk_fail(dev, "post failed");
		/* What was posted completes (flushed) and ends the request. */
		if (atomic_sub_and_test(nwr - posted, &cmd->pending)) {
			if (!posted) {
				mrrc_blk_release_handles(dev, cmd);
				return BLK_STS_IOERR;
			}
			mrrc_blk_finish(dev, cmd);
		}
	}
	return BLK_STS_OK;
}

static enum blk_eh_timer_return mrrc_blk_timeout(struct request *rq)
{
	struct mrrc_blk_dev *dev = rq->q->queuedata;
	struct mrrc_blk_cmd *cmd = blk_mq_rq_to_pdu(rq);

	/* Every work request is done and the completion was dropped. */
	if (READ_ONCE(cmd->faked)) {
		blk_mq_complete_request(rq);
		return BLK_EH_DONE;
	}
	/* Done, and mrrc_blk_finish() is completing it. */
	if (!atomic_read(&cmd->pending))
		return BLK_EH_RESET_TIMER;
	atomic64_inc(&dev->st.timeouts);
	/* The QPs go to error; the flush completes this request with EIO. */
	mrrc_blk_fail(dev, "I/O timeout");
	return BLK_EH_RESET_TIMER;
}

static int mrrc_blk_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			      unsigned int index)
{
	struct mrrc_blk_dev *dev = data;

	hctx->driver_data = &dev->queues[index];
	return 0;
}

static const struct blk_mq_ops mrrc_blk_mq_ops = {
	.queue_rq = mrrc_blk_queue_rq,
	.complete = mrrc_blk_complete_rq,
	.timeout = mrrc_blk_timeout,
	.init_hctx = mrrc_blk_init_hctx,
};

static const struct block_device_operations mrrc_blk_fops = {
	.owner = THIS_MODULE,
};

/* ---- connection set-up ------------------------------------------------- */

static int mrrc_blk_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct mrrc_blk_queue *q = id->context;
	const struct rdma_conn_param *p = &ev->param.conn;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		q->cm_status = 0;
		complete(&q->cm_done);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		q->cm_status = -EPROTO;
		/* p->initiator_depth: the READs the server takes at once. */
		if (p->private_data_len >= sizeof(q->welcome) &&
		    p->initiator_depth) {
			memcpy(&q->welcome, p->private_data,
			       sizeof(q->welcome));
			q->cm_status = 0;
		}
		complete(&q->cm_done);
		break;
	case RDMA_CM_EVENT_REJECTED:
		q->cm_status = -ECONNREFUSED;
		complete(&q->cm_done);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		q->cm_status = -EHOSTUNREACH;
		complete(&q->cm_done);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		mrrc_blk_fail(q->dev, rdma_event_msg(ev->event));
		break;
	default:
		break;
	}
	return 0;
}

static int mrrc_blk_cm_wait(struct mrrc_blk_queue *q)
{
	unsigned long tmo = msecs_to_jiffies(MRRC_BLK_CM_TIMEOUT_MS);

	if (!wait_for_completion_timeout(&q->cm_done, tmo))
		return -ETIMEDOUT;
	reinit_completion(&q->cm_done);
	return q->cm_status;
}

static void mrrc_blk_table_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrrc_blk_queue *q = cq->cq_context;

	q->dev->table_status = wc->status == IB_WC_SUCCESS ? 0 : -EIO;
	complete(&q->dev->table_done);
}

/* Queue 0 resolved @ibdev: the PD, the cache and the buffer page. */
static int mrrc_blk_setup_rdma(struct mrrc_blk_dev *dev,
			       struct ib_device *ibdev)
{
	struct mrrc_seg seg;
	u32 n;
	int ret;

	dev->max_sge = min3(ibdev->attrs.max_send_sge, ibdev->attrs.max_sge_rd,
			    32);
	if (dev->max_sge < MRRC_BLK_MIN_SGE ||
	    !(ibdev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return -EOPNOTSUPP;
	/*
	 * The cache keeps pages DMA-mapped after their I/O: right only where
	 * a mapping needs no sync, i.e. coherent DMA without bounce buffers
	 * (or a software device, which does no DMA).
	 */
	if (!ib_uses_virt_dma(ibdev) &&
	    (!dev_is_dma_coherent(ibdev->dma_device) ||
	     is_swiotlb_force_bounce(ibdev->dma_device)))
		return -EOPNOTSUPP;
	dev->ibdev = ibdev;
	dev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(dev->pd)) {
		ret = PTR_ERR(dev->pd);
		dev->pd = NULL;
		return ret;
	}
	dev->kc = mrrc_kcache_create(dev->pd);
	if (IS_ERR(dev->kc)) {
		ret = PTR_ERR(dev->kc);
		dev->kc = NULL;
		return ret;
	}
	dev->buf = (void *)get_zeroed_page(GFP_KERNEL);
	if (!dev->buf)
		return -ENOMEM;
	ret = mrrc_kcache_reg(dev->kc, dev->buf, PAGE_SIZE,
			      MRRC_ACCESS_LOCAL_WRITE, 0, &seg, 1, &n,
			      &dev->buf_handle);
	if (ret < 0)
		return ret;
	dev->buf_lkey = seg.lkey;
	return 0;
}

static int mrrc_blk_create_qp(struct mrrc_blk_dev *dev,
			      struct mrrc_blk_queue *q)
{
	u32 wrs = dev->depth * MRRC_BLK_MAX_WRS + 1;	/* +1: ib_drain_qp */
	struct ib_qp_init_attr init = {};

	if (q->id->device != dev->ibdev)
		return -EXDEV;
	q->cq = ib_alloc_cq(dev->ibdev, q, wrs + 2,
			    q->index % dev->ibdev->num_comp_vectors,
			    IB_POLL_WORKQUEUE);
	if (IS_ERR(q->cq)) {
		int ret = PTR_ERR(q->cq);

		q->cq = NULL;
		return ret;
	}
	init.send_cq = q->cq;
	init.recv_cq = q->cq;
	init.cap.max_send_wr = wrs;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = dev->max_sge;
	init.cap.max_recv_sge = 1;
	init.sq_sig_type = IB_SIGNAL_REQ_WR;
	init.qp_type = IB_QPT_RC;
	return rdma_create_qp(q->id, dev->pd, &init);
}

static int mrrc_blk_check_welcome(const struct mrrc_blk_welcome *w)
{
	u64 size = be64_to_cpu(w->size);
	u32 chunk = be32_to_cpu(w->chunk_bytes);
	u32 nchunks = be32_to_cpu(w->nchunks);

	if (be32_to_cpu(w->magic) != MRRC_BLK_MAGIC ||
	    be16_to_cpu(w->version) != MRRC_BLK_WIRE_VERSION ||
	    !size || size & 4095 || !is_power_of_2(chunk) ||
	    !nchunks || nchunks > MRRC_BLK_MAX_CHUNKS ||
	    nchunks != DIV_ROUND_UP_ULL(size, chunk) ||
	    /* A request crosses at most one chunk boundary. */
	    chunk < MRRC_BLK_MIN_CHUNK_BYTES ||
	    be32_to_cpu(w->table_len) != nchunks * sizeof(__be32))
		return -EPROTO;
	return 0;
}

/* Read the server's key table over queue 0. */
static int mrrc_blk_read_table(struct mrrc_blk_dev *dev)
{
	const struct mrrc_blk_welcome *w = &dev->queues[0].welcome;
	struct ib_sge sge = {
		.addr = (uintptr_t)dev->buf,
		.length = be32_to_cpu(w->table_len),
		.lkey = dev->buf_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = IB_WR_RDMA_READ,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.wr_cqe = &dev->table_cqe,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = 0,
		.rkey = be32_to_cpu(w->table_rkey),
	};
	unsigned long tmo = msecs_to_jiffies(MRRC_BLK_CM_TIMEOUT_MS);
	const __be32 *t = dev->buf;
	u32 i;
	int ret;

	dev->size = be64_to_cpu(w->size);
	dev->chunk_shift = ilog2(be32_to_cpu(w->chunk_bytes));
	dev->nchunks = be32_to_cpu(w->nchunks);
	dev->rkeys = kcalloc(dev->nchunks, sizeof(u32), GFP_KERNEL);
	if (!dev->rkeys)
		return -ENOMEM;
	dev->table_cqe.done = mrrc_blk_table_done;
	init_completion(&dev->table_done);
	ret = ib_post_send(dev->queues[0].id->qp, &wr.wr, NULL);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&dev->table_done, tmo)) {
		/*
		 * Flush it: the READ may write into dev->buf until it ends,
		 * and a QP in the error state completes it at once.
		 */
		mrrc_blk_qp_error(&dev->queues[0]);
		wait_for_completion(&dev->table_done);
		return -ETIMEDOUT;
	}
	if (dev->table_status)
		return dev->table_status;
	for (i = 0; i < dev->nchunks; i++)
		dev->rkeys[i] = be32_to_cpu(t[i]);
	return 0;
}

static int mrrc_blk_connect(struct mrrc_blk_dev *dev, struct mrrc_blk_queue *q)
{
	struct mrrc_blk_hello hello = {
		.magic = cpu_to_be32(MRRC_BLK_MAGIC),
		.version = cpu_to_be16(MRRC_BLK_WIRE_VERSION),
		.queue = cpu_to_be16(q->index),
	};
	struct rdma_conn_param param = {
		.private_data = &hello,
		.private_data_len = sizeof(hello),
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct rdma_cm_id *id;
	int ret;

	init_completion(&q->cm_done);
	/* err_work may look at q->id meanwhile: never an ERR_PTR there. */
	id = rdma_create_id(&init_net, mrrc_blk_cm_handler, q, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	q->id = id;
	ret = rdma_set_ack_timeout(q->id, MRRC_BLK_ACK_TIMEOUT);
	if (ret)
		return ret;
	ret = rdma_resolve_addr(q->id, NULL, (struct sockaddr *)&dev->peer,
				MRRC_BLK_CM_TIMEOUT_MS / 2);
	if (!ret)
		ret = mrrc_blk_cm_wait(q);
	if (!ret)
		ret = rdma_resolve_route(q->id, MRRC_BLK_CM_TIMEOUT_MS / 2);
	if (!ret)
		ret = mrrc_blk_cm_wait(q);
	if (ret)
		return ret;
	if (!q->index) {
		ret = mrrc_blk_setup_rdma(dev, q->id->device);
		if (ret)
			return ret;
	}
	ret = mrrc_blk_create_qp(dev, q);
	if (ret)
		return ret;
	param.initiator_depth = min_t(u32, 16,
				      dev->ibdev->attrs.max_qp_init_rd_atom);
	ret = rdma_connect(q->id, &param);
	if (!ret)
		ret = mrrc_blk_cm_wait(q);
	if (!ret)
		ret = mrrc_blk_check_welcome(&q->welcome);
	if (ret)
		return ret;
	/* Every queue must reach the same memory. */
	if (q->index && memcmp(&q->welcome, &dev->queues[0].welcome,
			       sizeof(q->welcome)))
		return -EPROTO;
	return 0;
}

/* Undo the queues' connections; nothing of the block device is left. */
static void mrrc_blk_destroy_queues(struct mrrc_blk_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_queues; i++) {
		struct mrrc_blk_queue *q = &dev->queues[i];

		if (!q->id)
			continue;
		if (q->id->qp) {
			rdma_disconnect(q->id);
			ib_drain_qp(q->id->qp);
			rdma_destroy_qp(q->id);
		}
		rdma_destroy_id(q->id);
		q->id = NULL;
		if (q->cq)
			ib_free_cq(q->cq);
		q->cq = NULL;
	}
}

static void mrrc_blk_free(struct mrrc_blk_dev *dev)
{
	if (dev->kc)
		mrrc_kcache_destroy(dev->kc);
	if (dev->pd)
		ib_dealloc_pd(dev->pd);
	free_page((unsigned long)dev->buf);
	kfree(dev->rkeys);
	kfree(dev->queues);
	if (dev->index >= 0)
		ida_free(&mrrc_blk_ida, dev->index);
	kfree(dev);
}

/* ---- sysfs: /sys/block/mrrcbN/mrrc/ ------------------------------------ */

static struct mrrc_blk_dev *to_blk_dev(struct device *d)
{
	return dev_to_disk(d)->private_data;
}

static ssize_t peer_show(struct device *d, struct device_attribute *attr,
			 char *buf)
{
	struct mrrc_blk_dev *dev = to_blk_dev(d);

	return sysfs_emit(buf, "%pI4:%u\n", &dev->peer.sin_addr,
			  ntohs(dev->peer.sin_port));
}
static DEVICE_ATTR_RO(peer);

static ssize_t state_show(struct device *d, struct device_attribute *attr,
			  char *buf)
{
	struct mrrc_blk_dev *dev = to_blk_dev(d);

	return sysfs_emit(buf, "%s\n", test_bit(MRRC_BLK_DEAD, &dev->flags) ?
			  "failed" : "live");
}
static DEVICE_ATTR_RO(state);

static ssize_t queues_show(struct device *d, struct device_attribute *attr,
			   char *buf)
{
	struct mrrc_blk_dev *dev = to_blk_dev(d);

	return sysfs_emit(buf, "%u %u\n", dev->nr_queues, dev->depth);
}
static DEVICE_ATTR_RO(queues);

static int mrrc_blk_emit(char *buf, int n, const char *name, atomic64_t *v)
{
	return sysfs_emit_at(buf, n, "%s %lld\n", name, atomic64_read(v));
}

static ssize_t stats_show(struct device *d, struct device_attribute *attr,
			  char *buf)
{
	struct mrrc_blk_dev *dev = to_blk_dev(d);
	struct mrrc_cache_stats cs = { .size = sizeof(cs) };
	struct mrrc_blk_stats *st = &dev->st;
	int n = 0;

	mrrc_kcache_stats(dev->kc, &cs);
	n += mrrc_blk_emit(buf, n, "reads", &st->reads);
	n += mrrc_blk_emit(buf, n, "writes", &st->writes);
	n += mrrc_blk_emit(buf, n, "flushes", &st->flushes);
	n += mrrc_blk_emit(buf, n, "fua", &st->fua);
	n += mrrc_blk_emit(buf, n, "read_bytes", &st->read_bytes);
	n += mrrc_blk_emit(buf, n, "write_bytes", &st->write_bytes);
	n += mrrc_blk_emit(buf, n, "errors", &st->errors);
	n += mrrc_blk_emit(buf, n, "timeouts", &st->timeouts);
	n += mrrc_blk_emit(buf, n, "requeues", &st->requeues);
	n += mrrc_blk_emit(buf, n, "map_errors", &st->map_errors);
	n += sysfs_emit_at(buf, n,
			   "reg_requests %llu\nhit_exact %llu\nhit_subset %llu\nhit_span %llu\noverlap %llu\nmiss %llu\n",
			   cs.requests, cs.hit_exact, cs.hit_subset,
			   cs.hit_span, cs.overlap, cs.miss);
	n += sysfs_emit_at(buf, n,
			   "registrations %llu\nderegistrations %llu\nevictions %llu\ncached_regions %llu\ncached_pages %llu\nhandles %llu\n",
			   cs.registrations, cs.deregistrations, cs.evictions,
			   cs.cached_regions, cs.cached_pages, cs.handles);
	n += sysfs_emit_at(buf, n,
			   "pool_mrs %llu\npool_free %llu\npool_hits %llu\npool_misses %llu\nreg_wrs %llu\ninv_wrs %llu\n",
			   cs.pool_mrs, cs.pool_free, cs.pool_hits,
			   cs.pool_misses, cs.reg_wrs, cs.inv_wrs);
	return n;
}
static DEVICE_ATTR_RO(stats);

static struct attribute *mrrc_blk_attrs[] = {
	&dev_attr_peer.attr,
	&dev_attr_state.attr,
	&dev_attr_queues.attr,
	&dev_attr_stats.attr,
	NULL,
};

static const struct attribute_group mrrc_blk_attr_group = {
	.name = "mrrc",
	.attrs = mrrc_blk_attrs,
};

static const struct attribute_group *mrrc_blk_attr_groups[] = {
	&mrrc_blk_attr_group,
	NULL,
};

/* ---- attach and detach ------------------------------------------------- */

static int mrrc_blk_add_disk(struct mrrc_blk_dev *dev)
{
	struct blk_mq_tag_set *set = &dev->tag_set;
	struct gendisk *disk;
	int ret;

	set->ops = &mrrc_blk_mq_ops;
	set->nr_hw_queues = dev->nr_queues;
	set->queue_depth = dev->depth;
	set->cmd_size = sizeof(struct mrrc_blk_cmd);
	set->numa_node = NUMA_NO_NODE;
	set->flags = BLK_MQ_F_SHOULD_MERGE | BLK_MQ_F_BLOCKING;
	set->driver_data = dev;
	set->timeout = clamp(READ_ONCE(io_timeout), 1U, 3600U) * HZ;
	ret = blk_mq_alloc_tag_set(set);
	if (ret)
		return ret;

#ifdef MRRC_HAVE_BLK_FEATURES	/* Linux 6.11+: limits at allocation */
	{
		struct queue_limits lim = {
			.logical_block_size = 512,
			.physical_block_size = PAGE_SIZE,
			.max_hw_sectors = MRRC_BLK_MAX_SECTORS,
			.max_segments = MRRC_BLK_MAX_SEGS,
			.features = BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA,
		};

		disk = blk_mq_alloc_disk(set, &lim, dev);
	}
#else
	disk = blk_mq_alloc_disk(set, dev);
	if (!IS_ERR(disk)) {
		blk_queue_logical_block_size(disk->queue, 512);
		blk_queue_physical_block_size(disk->queue, PAGE_SIZE);
		blk_queue_max_hw_sectors(disk->queue, MRRC_BLK_MAX_SECTORS);
		blk_queue_max_segments(disk->queue, MRRC_BLK_MAX_SEGS);
		blk_queue_write_cache(disk->queue, true, true);
	}
#endif
	if (IS_ERR(disk)) {
		ret = PTR_ERR(disk);
		goto err_set;
	}
	disk->major = mrrc_blk_major;
	disk->first_minor = dev->index * MRRC_BLK_MINORS;
	disk->minors = MRRC_BLK_MINORS;
	disk->fops = &mrrc_blk_fops;
	disk->private_data = dev;
	snprintf(disk->disk_name, DISK_NAME_LEN, "mrrcb%d", dev->index);
	set_capacity(disk, dev->size >> SECTOR_SHIFT);
	ret = device_add_disk(NULL, disk, mrrc_blk_attr_groups);
	if (ret) {
		put_disk(disk);
		goto err_set;
	}
	dev->disk = disk;
	return 0;

err_set:
	blk_mq_free_tag_set(set);
	return ret;
}

static int mrrc_blk_attach(struct sockaddr_in *peer, unsigned int queues,
			   unsigned int depth)
{
	struct mrrc_blk_dev *dev;
	unsigned int i;
	int ret;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	dev->index = -1;
	INIT_WORK(&dev->err_work, mrrc_blk_err_work);
	dev->peer = *peer;
	dev->nr_queues = queues;
	dev->depth = depth;
	dev->queues = kcalloc(queues, sizeof(*dev->queues), GFP_KERNEL);
	if (!dev->queues) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = ida_alloc_max(&mrrc_blk_ida, (1 << MINORBITS) / MRRC_BLK_MINORS - 1,
			    GFP_KERNEL);
	if (ret < 0)
		goto err_free;
	dev->index = ret;

	for (i = 0; i < queues; i++) {
		dev->queues[i].dev = dev;
		dev->queues[i].index = i;
		ret = mrrc_blk_connect(dev, &dev->queues[i]);
		if (ret)
			goto err_queues;
		if (!i) {
			ret = mrrc_blk_read_table(dev);
			if (ret)
				goto err_queues;
		}
	}
	/* The server went while the later queues connected. */
	ret = -ECONNRESET;
	if (test_bit(MRRC_BLK_DEAD, &dev->flags))
		goto err_queues;
	ret = mrrc_blk_add_disk(dev);
	if (ret)
		goto err_queues;
	list_add_tail(&dev->node, &mrrc_blk_devs);
	pr_info("mrrcb%d: %llu MiB at %pI4:%u, %u queues of %u\n", dev->index,
		dev->size >> 20, &peer->sin_addr, ntohs(peer->sin_port),
		queues, depth);
	return dev->index;

err_queues:
	/* A queue's disconnect may have marked the device failed. */
	set_bit(MRRC_BLK_DEAD, &dev->flags);
	cancel_work_sync(&dev->err_work);
	mrrc_blk_destroy_queues(dev);
err_free:
	mrrc_blk_free(dev);
	return ret;
}

static void mrrc_blk_detach(struct mrrc_blk_dev *dev)
{
	list_del(&dev->node);
	/* Writes back and waits for what is in flight, on live QPs. */
	del_gendisk(dev->disk);
	set_bit(MRRC_BLK_DEAD, &dev->flags);
	cancel_work_sync(&dev->err_work);
	mrrc_blk_destroy_queues(dev);
	put_disk(dev->disk);
	blk_mq_free_tag_set(&dev->tag_set);
	pr_info("mrrcb%d: detached\n", dev->index);
	mrrc_blk_free(dev);
}

/*
 * "ADDR[:PORT] [queues=N] [depth=N]": ADDR an IPv4 address, PORT 7726
 * unless given.
 */
static ssize_t attach_store(struct kobject *kobj, struct kobj_attribute *attr,
			    const char *buf, size_t count)
{
	struct sockaddr_in peer = { .sin_family = AF_INET };
	unsigned int queues = nr_queues, depth = queue_depth;
	char *opts, *s, *tok;
	const char *end;
	u16 port = MRRC_BLK_DEFAULT_PORT;
	int ret = -EINVAL;

	opts = kstrndup(buf, min_t(size_t, count, 256), GFP_KERNEL);
	if (!opts)
		return -ENOMEM;
	s = strim(opts);
	tok = strsep(&s, " \t");
	if (!tok || !in4_pton(tok, -1, (u8 *)&peer.sin_addr.s_addr, ':', &end))
		goto out;
	if (*end == ':' && kstrtou16(end + 1, 10, &port))
		goto out;
	if (*end && *end != ':')
		goto out;
	while ((tok = strsep(&s, " \t"))) {
		if (!*tok)
			continue;
		if (!strncmp(tok, "queues=", 7)) {
			if (kstrtouint(tok + 7, 10, &queues))
				goto out;
		} else if (!strncmp(tok, "depth=", 6)) {
			if (kstrtouint(tok + 6, 10, &depth))
				goto out;
		} else {
			goto out;
		}
	}
	if (!queues)
		queues = min(num_online_cpus(), 4U);
	if (!port || queues > MRRC_BLK_MAX_QUEUES || !depth ||
	    depth > MRRC_BLK_MAX_DEPTH)
		goto out;
	peer.sin_port = htons(port);
	mutex_lock(&mrrc_blk_lock);
	ret = mrrc_blk_attach(&peer, queues, depth);
	mutex_unlock(&mrrc_blk_lock);
out:
	kfree(opts);
	return ret < 0 ? ret : count;
}

static struct kobj_attribute attach_attr = __ATTR_WO(attach);

/* "mrrcbN" */
static ssize_t detach_store(struct kobject *kobj, struct kobj_attribute *attr,
			    const char *buf, size_t count)
{
	struct mrrc_blk_dev *dev;
	char name[DISK_NAME_LEN], *want;
	int ret = -ENOENT;

	if (count >= sizeof(name))
		return -EINVAL;
	memcpy(name, buf, count);
	name[count] = '\0';
	want = strim(name);
	mutex_lock(&mrrc_blk_lock);
	list_for_each_entry(dev, &mrrc_blk_devs, node) {
		if (!strcmp(dev->disk->disk_name, want)) {
			mrrc_blk_detach(dev);
			ret = 0;
			break;
		}
	}
	mutex_unlock(&mrrc_blk_lock);
	return ret ? ret : count;
}

static struct kobj_attribute detach_attr = __ATTR_WO(detach);

static struct attribute *mrrc_blk_ctl_attrs[] = {
	&attach_attr.attr,
	&detach_attr.attr,
	NULL,
};

static const struct attribute_group mrrc_blk_ctl_group = {
	.attrs = mrrc_blk_ctl_attrs,
};

/* An RDMA device goes away: its block devices go first. */
static void mrrc_blk_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct mrrc_blk_dev *dev, *tmp;

	mutex_lock(&mrrc_blk_lock);
	list_for_each_entry_safe(dev, tmp, &mrrc_blk_devs, node) {
		if (dev->ibdev != ibdev)
			continue;
		pr_warn("mrrcb%d: %s is going away: detaching\n", dev->index,
			dev_name(&ibdev->dev));
		mrrc_blk_detach(dev);
	}
	mutex_unlock(&mrrc_blk_lock);
}

static struct ib_client mrrc_blk_client = {
	.name = "mrrc_blk",
	.remove = mrrc_blk_remove_one,
};

static int __init mrrc_blk_init(void)
{
	int ret;

	if (nr_queues > MRRC_BLK_MAX_QUEUES || !queue_depth ||
	    queue_depth > MRRC_BLK_MAX_DEPTH || !io_timeout ||
	    io_timeout > 3600)
		return -EINVAL;
	mrrc_blk_wq = alloc_workqueue("mrrc_blk", WQ_MEM_RECLAIM | WQ_UNBOUND,
				      0);
	if (!mrrc_blk_wq)
		return -ENOMEM;
	mrrc_blk_major = register_blkdev(0, "mrrcb");
	if (mrrc_blk_major < 0) {
		destroy_workqueue(mrrc_blk_wq);
		return mrrc_blk_major;
	}
	mrrc_blk_kobj = kobject_create_and_add("mrrc_blk", kernel_kobj);
	if (!mrrc_blk_kobj) {
		ret = -ENOMEM;
		goto err_blkdev;
	}
	ret = ib_register_client(&mrrc_blk_client);
	if (ret)
		goto err_kobj;
	ret = sysfs_create_group(mrrc_blk_kobj, &mrrc_blk_ctl_group);
	if (ret)
		goto err_client;
	return 0;

err_client:
	ib_unregister_client(&mrrc_blk_client);
err_kobj:
	kobject_put(mrrc_blk_kobj);
err_blkdev:
	unregister_blkdev(mrrc_blk_major, "mrrcb");
	destroy_workqueue(mrrc_blk_wq);
	return ret;
}

static void __exit mrrc_blk_exit(void)
{
	struct mrrc_blk_dev *dev, *tmp;

	/* No attach or detach can start once the files are gone. */
	sysfs_remove_group(mrrc_blk_kobj, &mrrc_blk_ctl_group);
	kobject_put(mrrc_blk_kobj);
	mutex_lock(&mrrc_blk_lock);
	list_for_each_entry_safe(dev, tmp, &mrrc_blk_devs, node)
		mrrc_blk_detach(dev);
	mutex_unlock(&mrrc_blk_lock);
	ib_unregister_client(&mrrc_blk_client);
	unregister_blkdev(mrrc_blk_major, "mrrcb");
	ida_destroy(&mrrc_blk_ida);
	destroy_workqueue(mrrc_blk_wq);
}

module_init(mrrc_blk_init);
module_exit(mrrc_blk_exit);

MODULE_AUTHOR("mrrc developers");
MODULE_DESCRIPTION("mrrc_blk: a block device over remote memory, registered through mrrc");
MODULE_LICENSE("GPL");
MODULE_VERSION(MRRC_VERSION);
