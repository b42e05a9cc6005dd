// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - the data path: operations, control messages and credits.
 *
 * See conn.h for the protocol and the locking.  In short: MRRC_IOC_POST
 * registers each operation's local range through the context's cache and
 * queues the operation on its connection; mrrc_conn_kick() posts whatever
 * has what it needs (send queue slots, credits, an advertisement, a
 * matched tag), from the ioctl or from the completion path.  Completions
 * go to ctx->done (event.c) and are harvested by MRRC_IOC_POLL.  CRW and
 * STCRW (tags, matching, deadlines, cancel, withdrawal) are in crw.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/jiffies.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "mrrc.h"
#include "cache.h"
#include "conn.h"
#include "dp.h"

/* Return credits explicitly once this many are owed. */
#define MRRC_CREDIT_BATCH	(MRRC_RX_DEPTH / 8)
#define MRRC_MAX_LEN		BIT(31)

/*
 * The work request of @op's advertisement is done with (@ok: completed
 * successfully).  A chained REG_MR posted right ahead of it executed if
 * and only if it did, the queue pair being ordered and a failed REG_MR
 * failing the queue pair; one never posted never executes.  An orphan
 * (posted without the advertisement) is settled after the drain.
 */
static void mrrc_expo_settle(struct mrrc_op *op, bool ok)
{
	if (!op->expo.chained || op->expo.reg_state != MRRC_DEFER_PENDING ||
	    op->reg_orphan)
		return;
	mrrc_cache_expo_done(mrrc_conn_cache(op->conn), &op->expo,
			     ok && op->reg_posted);
}

/*
 * Finish @part of @op (conn->lock held); the first error sticks; the last
 * part reports it, unless the op is an orphan: its exposure is settled,
 * and it is reported, only once the queue pair is drained, so that POLL
 * never waits for that (mrrc_data_drained()).
 */
void mrrc_op_part_done(struct mrrc_op *op, u8 part, int status)
{
	if (!(op->parts & part))
		return;
	if (part & MRRC_PART_WR)
		mrrc_expo_settle(op, !status);
	op->parts &= ~part;
	if (status && !op->done.cqe.status)
		op->done.cqe.status = status;
	if (op->parts)
		return;
	if (op->reg_orphan)
		op->held = true;
	else
		mrrc_done_queue(op->conn->ctx, &op->done);
}

/*
 * The work request of @op is done with or will never be posted: a one-off
 * internal message is freed, a user operation finishes that part.
 */
void mrrc_op_wr_finish(struct mrrc_op *op, int status)
{
	if (op->internal == MRRC_INT_MSG) {
		op->conn->nctrl--;
		kfree(op);
	} else {
		mrrc_op_part_done(op, MRRC_PART_WR, status);
	}
}

static int mrrc_wc_errno(struct mrrc_conn *conn, enum ib_wc_status status)
{
	switch (status) {
	case IB_WC_SUCCESS:
		return 0;
	case IB_WC_WR_FLUSH_ERR:
		return conn->close_status ?: -ECONNRESET;
	case IB_WC_REM_ACCESS_ERR:
		return -EACCES;
	case IB_WC_LOC_PROT_ERR:
	case IB_WC_LOC_ACCESS_ERR:
		return -EFAULT;
	case IB_WC_REM_INV_REQ_ERR:
		return -EINVAL;
	case IB_WC_RETRY_EXC_ERR:
	case IB_WC_RNR_RETRY_EXC_ERR:
		return -ETIMEDOUT;
	default:
		return -EIO;
	}
}

/* ---- receive buffers ---------------------------------------------------- */

static void mrrc_rx_done(struct ib_cq *cq, struct ib_wc *wc);
static void mrrc_rx_handle(struct mrrc_conn *conn, struct mrrc_rx *rx);

static int mrrc_rx_post(struct mrrc_conn *conn, struct mrrc_rx *rx)
{
	struct ib_recv_wr wr = {};
	struct ib_sge sge;

	ib_dma_sync_single_for_device(conn->ibdev, rx->dma, sizeof(*rx->msg),
				      DMA_FROM_DEVICE);
	sge.addr = rx->dma;
	sge.length = sizeof(*rx->msg);
	sge.lkey = conn->pd->local_dma_lkey;
	wr.wr_cqe = &rx->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ib_post_recv(conn->qp, &wr, NULL);
}

/* Give a consumed receive buffer back to the queue pair (conn->lock). */
void mrrc_rx_repost(struct mrrc_conn *conn, struct mrrc_rx *rx)
{
	lockdep_assert_held(&conn->lock);
	if (!conn->rx_live || conn->state != MRRC_CS_ESTABLISHED)
		return;
	if (mrrc_rx_post(conn, rx))
		return;
	conn->owed++;
}

static void mrrc_unsig_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrrc_conn *conn = cq->cq_context;

	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		mrrc_conn_fail(conn, mrrc_wc_errno(conn, wc->status));
}

/* ---- keepalive ---------------------------------------------------------- */

static void mrrc_keepalive_arm(struct mrrc_conn *conn)
{
	unsigned int ms = READ_ONCE(mrrc_keepalive_ms);

	/* Disabled: look again in a second, in case it is switched on. */
	schedule_delayed_work(&conn->keepalive,
			      msecs_to_jiffies(ms ?: MSEC_PER_SEC));
}

static void mrrc_ka_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrrc_conn *conn = container_of(wc->wr_cqe, struct mrrc_conn,
					      ka_cqe);

	spin_lock_bh(&conn->lock);
	conn->sq_free++;
	conn->ka_busy = false;
	if (wc->status == IB_WC_SUCCESS)
		conn->activity++;
	mrrc_conn_kick(conn);
	spin_unlock_bh(&conn->lock);

	/* Retries exhausted: the peer is gone (-ETIMEDOUT). */
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		mrrc_conn_fail(conn, mrrc_wc_errno(conn, wc->status));
}

/**
 * mrrc_keepalive_work() - probe a connection that has been idle
 * @work: &mrrc_conn.keepalive
 *
 * A connection with no completion for a whole keepalive period gets a
 * zero-length RDMA WRITE, which needs no memory, key or receive buffer on
 * the peer, only its acknowledgment.  If the peer has vanished (its
 * machine or link died without a disconnect), the transport's retries run
 * out, the write completes in error and the connection fails with
 * ETIMEDOUT like any other transport error.
 */
void mrrc_keepalive_work(struct work_struct *work)
{
	struct mrrc_conn *conn = container_of(to_delayed_work(work),
					      struct mrrc_conn, keepalive);
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe = &conn->ka_cqe,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
	};

	spin_lock_bh(&conn->lock);
	if (conn->state != MRRC_CS_ESTABLISHED) {
		spin_unlock_bh(&conn->lock);
		return;
	}
	if (READ_ONCE(mrrc_keepalive_ms) && conn->activity == conn->ka_seen &&
	    !conn->ka_busy && conn->sq_free >= 1 &&
	    !ib_post_send(conn->qp, &wr.wr, NULL)) {
		conn->sq_free--;
		conn->ka_busy = true;
		conn->st.keepalives++;
	}
	conn->ka_seen = conn->activity;
	spin_unlock_bh(&conn->lock);
	mrrc_keepalive_arm(conn);
}

/**
 * mrrc_data_init() - allocate and post a new connection's receive buffers
 * @conn: a connection whose queue pair was just created
 *
 * Return: 0 or a negative errno; nothing is left allocated on error.
 */
int mrrc_data_init(struct mrrc_conn *conn)
{
	struct ib_device *dev = conn->ibdev;
	struct mrrc_op *cop;
	unsigned int i;
	int ret;

	conn->rx = kcalloc(MRRC_RX_DEPTH, sizeof(*conn->rx), GFP_KERNEL_ACCOUNT);
	conn->rx_msgs = kcalloc(MRRC_RX_DEPTH, sizeof(*conn->rx_msgs),
				GFP_KERNEL_ACCOUNT);
	cop = kzalloc(sizeof(*cop), GFP_KERNEL_ACCOUNT);
	if (!conn->rx || !conn->rx_msgs || !cop) {
		ret = -ENOMEM;
		goto out_free;
	}
	conn->rx_dma = ib_dma_map_single(dev, conn->rx_msgs,
					 MRRC_RX_DEPTH * sizeof(*conn->rx_msgs),
					 DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, conn->rx_dma)) {
		ret = -ENOMEM;
		goto out_free;
	}

	cop->conn = conn;
	cop->internal = MRRC_INT_CREDIT;
	cop->cqe.done = mrrc_op_wr_done;
	cop->msg.type = MRRC_MSG_CREDIT;
	conn->credit_op = cop;
	conn->unsig_cqe.done = mrrc_unsig_done;
	conn->ka_cqe.done = mrrc_ka_done;
	conn->credits = MRRC_RX_DEPTH;
	conn->sq_free = mrrc_send_window;

	for (i = 0; i < MRRC_RX_DEPTH; i++) {
		struct mrrc_rx *rx = &conn->rx[i];

		rx->conn = conn;
		rx->msg = &conn->rx_msgs[i];
		rx->dma = conn->rx_dma + i * sizeof(*rx->msg);
		rx->cqe.done = mrrc_rx_done;
		INIT_LIST_HEAD(&rx->node);
		ret = mrrc_rx_post(conn, rx);
		if (ret)
			goto out_unmap;
	}
	conn->rx_live = true;
	return 0;

out_unmap:
	/* Buffers already posted are flushed when the QP is destroyed. */
	ib_dma_unmap_single(dev, conn->rx_dma,
			    MRRC_RX_DEPTH * sizeof(*conn->rx_msgs),
			    DMA_FROM_DEVICE);
out_free:
	kfree(cop);
	conn->credit_op = NULL;
	kfree(conn->rx_msgs);
	conn->rx_msgs = NULL;
	kfree(conn->rx);
	conn->rx = NULL;
	return ret;
}

ALLOW_ERROR_INJECTION(mrrc_data_init, ERRNO);

/**
 * mrrc_data_cleanup() - release what mrrc_data_init() set up
 * @conn: a connection whose queue pair is drained and destroyed
 */
void mrrc_data_cleanup(struct mrrc_conn *conn)
{
	if (!conn->credit_op)
		return;
	spin_lock_bh(&conn->lock);
	conn->rx_live = false;
	spin_unlock_bh(&conn->lock);
	ib_dma_unmap_single(conn->ibdev, conn->rx_dma,
			    MRRC_RX_DEPTH * sizeof(*conn->rx_msgs),
			    DMA_FROM_DEVICE);
	kfree(conn->credit_op);
	conn->credit_op = NULL;
}

/**
 * mrrc_data_start() - the connection is established: start sending
 * @conn: the connection
 */
void mrrc_data_start(struct mrrc_conn *conn)
{
	struct mrrc_rx *rx, *tmp;

	spin_lock_bh(&conn->lock);
	if (conn->state != MRRC_CS_CLOSED) {
		conn->state = MRRC_CS_ESTABLISHED;
		list_for_each_entry_safe(rx, tmp, &conn->early, node) {
			list_del_init(&rx->node);
			mrrc_rx_handle(conn, rx);
		}
		mrrc_conn_kick(conn);
		mrrc_keepalive_arm(conn);
	}
	spin_unlock_bh(&conn->lock);
}

/**
 * mrrc_data_flush() - fail everything a connection holds
 * @conn: the connection
 * @status: the negative errno held operations complete with
 *
 * Marks the connection closed.  Operations already posted complete when
 * the queue pair is drained.
 */
void mrrc_data_flush(struct mrrc_conn *conn, int status)
{
	struct mrrc_op *op, *tmp;
	struct hlist_node *n;
	unsigned int bkt;

	spin_lock_bh(&conn->lock);
	if (conn->state == MRRC_CS_CLOSED) {
		spin_unlock_bh(&conn->lock);
		return;
	}
	conn->state = MRRC_CS_CLOSED;
	conn->close_status = status;

	list_for_each_entry_safe(op, tmp, &conn->ctrlq, qnode) {
		list_del(&op->qnode);
		op->queued = false;
		mrrc_op_wr_finish(op, status);
	}
	list_for_each_entry_safe(op, tmp, &conn->backlog, qnode) {
		list_del(&op->qnode);
		op->queued = false;
		mrrc_op_part_done(op, MRRC_PART_WR, status);
	}
	hash_for_each_safe(conn->crw, bkt, n, op, hnode) {
		hash_del(&op->hnode);
		op->hashed = false;
		mrrc_op_part_done(op, MRRC_PART_WR, status);
	}
	hash_for_each_safe(conn->stcrw, bkt, n, op, hnode) {
		hash_del(&op->hnode);
		op->hashed = false;
		mrrc_op_part_done(op, MRRC_PART_PEER,
				  op->withdrawing ? op->wd_status : status);
	}
	list_for_each_entry_safe(op, tmp, &conn->recvs, wnode) {
		list_del_init(&op->wnode);
		mrrc_op_part_done(op, MRRC_PART_PEER, status);
	}
	/* The peer's advertisements and STCRWs are simply dropped. */
	INIT_LIST_HEAD(&conn->adv);
	hash_init(conn->arrived);
	spin_unlock_bh(&conn->lock);
}

/**
 * mrrc_data_quiesce() - the peer is gone: post nothing more, yet handle
 *	what it sent before, until mrrc_data_flush()
 * @conn: the connection
 * @status: what flushed work requests complete with meanwhile
 */
void mrrc_data_quiesce(struct mrrc_conn *conn, int status)
{
	spin_lock_bh(&conn->lock);
	if (conn->state == MRRC_CS_ESTABLISHED) {
		conn->state = MRRC_CS_DRAINING;
		conn->close_status = status;
	}
	spin_unlock_bh(&conn->lock);
}

/* ---- sending ------------------------------------------------------------ */

static void mrrc_msg_unmap(struct mrrc_conn *conn, struct mrrc_op *op)
{
	if (op->msg_mapped) {
		ib_dma_unmap_single(conn->ibdev, op->msg_dma, sizeof(op->msg),
				    DMA_TO_DEVICE);
		op->msg_mapped = false;
	}
}

/*
 * Every work request of an operation goes through here: a device that
 * refuses a post can be simulated (fail_function) to test that the
 * operation still completes exactly once.  The keepalive's probe does
 * not (a refused probe is simply tried again on the next tick), nor do
 * receive buffers.
 */
static noinline int mrrc_dp_ib_post(struct mrrc_conn *conn,
				    const struct ib_send_wr *wr)
{
	return ib_post_send(conn->qp, wr, NULL);
}

ALLOW_ERROR_INJECTION(mrrc_dp_ib_post, ERRNO);

/* A chain of work requests; *@bad is the first one not posted. */
static noinline int mrrc_dp_ib_post_chain(struct mrrc_conn *conn,
					  const struct ib_send_wr *wr,
					  const struct ib_send_wr **bad)
{
	*bad = wr;
	return ib_post_send(conn->qp, wr, bad);
}

ALLOW_ERROR_INJECTION(mrrc_dp_ib_post_chain, ERRNO);

/*
 * Fault injection only: an error makes the device take the first work
 * request of a chain and refuse the rest with that error, which no device
 * does on demand (mrrc_fail_nth: chained_exposure_without_its_message).
 */
static noinline int mrrc_dp_chain_cut(struct mrrc_conn *conn)
{
	return 0;
}

ALLOW_ERROR_INJECTION(mrrc_dp_chain_cut, ERRNO);

/* Whether @conn's device sends and honours SEND_WITH_INV. */
static bool mrrc_conn_rinv(const struct mrrc_conn *conn)
{
	return conn->ibdev->attrs.device_cap_flags &
	       IB_DEVICE_MEM_MGT_EXTENSIONS;
}

/* Whether @op's message carries its exposure's REG_MR in front of it. */
static bool mrrc_msg_chains_reg(const struct mrrc_op *op)
{
	return !op->internal && op->expo.chained && !op->reg_posted &&
	       op->expo.reg_state == MRRC_DEFER_PENDING;
}

/*
 * Post @op's control message, signalled; uses one credit and one slot,
 * and a second slot for its exposure's chained REG_MR, posted unsignalled
 * in the same call right ahead of it (as xprtrdma chains FastReg WRs to
 * its Send): a failed REG_MR fails the queue pair and so the message.
 * With @inv, as IB_WR_SEND_WITH_INV of @inv_rkey (see MRRC_ADV_RINV).
 */
static int __mrrc_post_msg(struct mrrc_conn *conn, struct mrrc_op *op,
			   bool inv, u32 inv_rkey)
{
	const struct ib_send_wr *bad = NULL;
	bool reg = mrrc_msg_chains_reg(op);
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	int ret;

	op->msg.credits = cpu_to_le16(conn->owed);
	op->msg_dma = ib_dma_map_single(conn->ibdev, &op->msg, sizeof(op->msg),
					DMA_TO_DEVICE);
	if (ib_dma_mapping_error(conn->ibdev, op->msg_dma))
		return -ENOMEM;
	op->msg_mapped = true;

	sge.addr = op->msg_dma;
	sge.length = offsetof(struct mrrc_msg, seg) +
		     op->msg.nsegs * sizeof(struct mrrc_wire_seg);
	sge.lkey = conn->pd->local_dma_lkey;
	wr.wr_cqe = &op->cqe;
	wr.opcode = inv ? IB_WR_SEND_WITH_INV : IB_WR_SEND;
	wr.ex.invalidate_rkey = inv_rkey;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (reg) {
		op->reg_wr.wr.next = &wr;
		op->reg_wr.wr.wr_cqe = &conn->unsig_cqe;	/* errors only */
		op->reg_wr.wr.send_flags = 0;
		ret = mrrc_dp_chain_cut(conn);
		if (unlikely(ret)) {
			int cut = ret;

			op->reg_wr.wr.next = NULL;
			ret = mrrc_dp_ib_post_chain(conn, &op->reg_wr.wr, &bad);
			if (!ret) {
				ret = cut;
				bad = &wr;
			}
		} else {
			ret = mrrc_dp_ib_post_chain(conn, &op->reg_wr.wr, &bad);
		}
	} else {
		ret = mrrc_dp_ib_post(conn, &wr);
	}
	if (reg && (!ret || bad == &wr)) {
		op->reg_posted = true;
		conn->sq_free--;
		if (!ret) {
			op->nwr++;
		} else {
			/* Nothing will say whether it ran: wait for the drain. */
			op->reg_orphan = true;
			list_add_tail(&op->onode, &conn->orphans);
		}
	}
	if (ret) {
		mrrc_msg_unmap(conn, op);
		return ret;
	}
	conn->rx_unreturned -= conn->owed;
	conn->owed = 0;
	conn->credits--;
	conn->sq_free--;
	op->nwr++;
	conn->st.ctrl_sent++;
	return 0;
}

static int mrrc_post_msg(struct mrrc_conn *conn, struct mrrc_op *op)
{
	return __mrrc_post_msg(conn, op, false, 0);
}

/* Bytes the segments of a peer message can take, and WRs to fill @len. */
static u64 mrrc_peer_room(const struct mrrc_msg *m, u32 len, u16 *nwr)
{
	u64 room = 0;
	unsigned int i;

	*nwr = 0;
	for (i = 0; i < m->nsegs; i++) {
		if (room < len)
			(*nwr)++;
		room += le32_to_cpu(m->seg[i].len);
	}
	return room;
}

/* RDMA-write @op's local range into the segments of @m, unsignalled. */
static int mrrc_post_writes(struct mrrc_conn *conn, struct mrrc_op *op,
			    const struct mrrc_msg *m)
{
	struct ib_sge sg[MRRC_OP_SGE];
	struct ib_rdma_wr wr = {};
	unsigned int j, li = 0;
	u32 left = op->len, loff = 0;
	int ret;

	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.wr_cqe = &conn->unsig_cqe;
	wr.wr.sg_list = sg;
	for (j = 0; left && j < m->nsegs; j++) {
		u32 need = min(le32_to_cpu(m->seg[j].len), left);
		unsigned int ns = 0;

		wr.remote_addr = le64_to_cpu(m->seg[j].addr);
		wr.rkey = le32_to_cpu(m->seg[j].rkey);
		left -= need;
		while (need) {
			u32 take = min(op->sge[li].length - loff, need);

			sg[ns].addr = op->sge[li].addr + loff;
			sg[ns].length = take;
			sg[ns].lkey = op->sge[li].lkey;
			ns++;
			need -= take;
			loff += take;
			if (loff == op->sge[li].length) {
				li++;
				loff = 0;
			}
		}
		wr.wr.num_sge = ns;
		ret = mrrc_dp_ib_post(conn, &wr.wr);
		if (ret)
			return ret;
		conn->sq_free--;
		op->nwr++;
	}
	return 0;
}

/*
 * SEND into the oldest advertisement, or a matched CRW into its STCRW:
 * the writes, then the message that tells the peer they landed.
 */
static int mrrc_post_into_peer(struct mrrc_conn *conn, struct mrrc_op *op,
			       struct mrrc_rx *peer)
{
	const struct mrrc_msg *m = peer->msg;
	bool fits, inv;
	u16 nwr;
	int ret;

	fits = mrrc_peer_room(m, op->len, &nwr) >= op->len;
	if (!fits)
		nwr = 0;
	if (conn->sq_free < nwr + 1 || conn->credits < 2)
		return -EAGAIN;

	op->msg.type = op->opcode == MRRC_OP_SEND ? MRRC_MSG_SEND_DONE :
						    MRRC_MSG_CRW_DONE;
	op->msg.tag = m->tag;
	op->msg.seq = m->seq;
	if (fits) {
		ret = mrrc_post_writes(conn, op, m);
		if (ret)
			return ret;
		op->msg.len = cpu_to_le32(op->len);
	} else {
		/* Both sides fail; the data moves nowhere. */
		op->msg.status = cpu_to_le32(EMSGSIZE);
		op->done.cqe.status = -EMSGSIZE;
	}
	/*
	 * The peer's one MR is done with once the data has landed: end it
	 * with the message, so the peer need not invalidate it itself.
	 */
	inv = fits && m->nsegs == 1 &&
	      (le32_to_cpu(m->flags) & MRRC_ADV_RINV) && mrrc_conn_rinv(conn);
	ret = __mrrc_post_msg(conn, op, inv, le32_to_cpu(m->seg[0].rkey));
	if (ret)
		return ret;
	if (op->opcode == MRRC_OP_CRW)
		conn->st.crw_matched++;
	/* The peer's buffer is consumed: its receive buffer is free again. */
	mrrc_rx_repost(conn, peer);
	op->peer = NULL;
	return 0;
}

/* One-sided operations: one signalled work request. */
static int mrrc_post_one_sided(struct mrrc_conn *conn, struct mrrc_op *op)
{
	struct ib_atomic_wr awr = {};
	struct ib_rdma_wr rwr = {};
	struct ib_send_wr *wr;
	int ret;

	if (conn->sq_free < 1)
		return -EAGAIN;
	/* The peer holds its buffer until polled, as for an advertisement. */
	if (op->opcode == MRRC_OP_WRITE_IMM && conn->credits < 3)
		return -EAGAIN;

	switch (op->opcode) {
	case MRRC_OP_FETCH_ADD:
	case MRRC_OP_CMP_SWAP:
		awr.wr.opcode = op->opcode == MRRC_OP_FETCH_ADD ?
				IB_WR_ATOMIC_FETCH_AND_ADD :
				IB_WR_ATOMIC_CMP_AND_SWP;
		awr.remote_addr = op->remote_addr;
		awr.rkey = op->rkey;
		awr.compare_add = op->compare_add;
		awr.swap = op->swap;
		wr = &awr.wr;
		break;
	default:
		rwr.wr.opcode = op->opcode == MRRC_OP_READ ?
				IB_WR_RDMA_READ :
				op->opcode == MRRC_OP_WRITE_IMM ?
				IB_WR_RDMA_WRITE_WITH_IMM : IB_WR_RDMA_WRITE;
		rwr.wr.ex.imm_data = cpu_to_be32(op->imm);
		rwr.remote_addr = op->remote_addr;
		rwr.rkey = op->rkey;
		wr = &rwr.wr;
		break;
	}
	wr->wr_cqe = &op->cqe;
	wr->send_flags = IB_SEND_SIGNALED;
	wr->sg_list = op->sge;
	wr->num_sge = op->nsge;
	ret = mrrc_dp_ib_post(conn, wr);
	if (ret)
		return ret;
	conn->sq_free--;
	op->nwr++;
	if (op->opcode == MRRC_OP_WRITE_IMM)
		conn->credits--;
	return 0;
}

/* Post @op if it has what it needs: 0, -EAGAIN to wait, or an error. */
static int mrrc_op_try_post(struct mrrc_conn *conn, struct mrrc_op *op)
{
	struct mrrc_rx *peer;
	int ret;

	switch (op->opcode) {
	case MRRC_OP_SEND:
		if (list_empty(&conn->adv))
			return -EAGAIN;
		peer = list_first_entry(&conn->adv, struct mrrc_rx, node);
		ret = mrrc_post_into_peer(conn, op, peer);
		/*
		 * On success the advertisement is used up; on an error the
		 * operation fails (the caller completes it) and the
		 * connection goes down with the advertisement still listed.
		 */
		if (!ret)
			list_del_init(&peer->node);
		return ret;
	case MRRC_OP_CRW:
		return mrrc_post_into_peer(conn, op, op->peer);
	default:
		return mrrc_post_one_sided(conn, op);
	}
}

/* Send credits back if the peer is running low (conn->lock held). */
static void mrrc_credit_return(struct mrrc_conn *conn)
{
	unsigned int peer_left = MRRC_RX_DEPTH - conn->rx_unreturned;

	if (!conn->owed || conn->credit_busy || conn->credits < 1 ||
	    conn->sq_free < 1)
		return;
	if (conn->owed < MRRC_CREDIT_BATCH && peer_left > 2)
		return;
	if (!mrrc_post_msg(conn, conn->credit_op))
		conn->credit_busy = true;
}

/*
 * Credits a control message needs before it may go.  The last credit is
 * kept for credit returns (MSG_CREDIT).  The one before it is kept from
 * messages the peer holds on to (RECV and STCRW advertisements keep a
 * receive buffer until used), so that however many the peer holds, a
 * withdrawal and its answer can always go.
 */
static int mrrc_msg_credits_needed(const struct mrrc_op *op)
{
	if (!op->internal && (op->msg.type == MRRC_MSG_RECV_ADV ||
			      op->msg.type == MRRC_MSG_STCRW))
		return 3;
	return 2;
}

/*
 * Post what can be posted: control messages first (keeping the last
 * credits as above), then user operations in order.
 */
void mrrc_conn_kick(struct mrrc_conn *conn)
{
	struct mrrc_op *op;
	bool failed = false;
	int ret;

	lockdep_assert_held(&conn->lock);
	if (conn->state != MRRC_CS_ESTABLISHED)
		return;

	while (!list_empty(&conn->ctrlq) && conn->sq_free >= 1) {
		op = list_first_entry(&conn->ctrlq, struct mrrc_op, qnode);
		if (conn->credits < mrrc_msg_credits_needed(op) ||
		    conn->sq_free < 1 + mrrc_msg_chains_reg(op))
			break;
		list_del(&op->qnode);
		op->queued = false;
		ret = mrrc_post_msg(conn, op);
		if (ret) {
			/*
			 * A RECV the peer never heard of: off the list its
			 * SEND_DONEs are matched against, in order.
			 */
			if (!op->internal && op->opcode == MRRC_OP_RECV &&
			    !list_empty(&op->wnode)) {
				list_del_init(&op->wnode);
				mrrc_op_part_done(op, MRRC_PART_PEER, ret);
			}
			mrrc_op_wr_finish(op, ret);
			failed = true;
		}
	}
	while (!list_empty(&conn->backlog)) {
		op = list_first_entry(&conn->backlog, struct mrrc_op, qnode);
		ret = mrrc_op_try_post(conn, op);
		if (ret == -EAGAIN)
			break;
		list_del(&op->qnode);
		op->queued = false;
		if (ret) {
			mrrc_op_part_done(op, MRRC_PART_WR, ret);
			failed = true;
		}
	}
	mrrc_credit_return(conn);
	if (failed)
		mrrc_conn_err_schedule(conn);
}

/* ---- completions -------------------------------------------------------- */

void mrrc_op_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrrc_op *op = container_of(wc->wr_cqe, struct mrrc_op, cqe);
	struct mrrc_conn *conn = op->conn;
	int status = mrrc_wc_errno(conn, wc->status);

	spin_lock_bh(&conn->lock);
	conn->activity++;
	conn->sq_free += op->nwr;
	op->nwr = 0;
	mrrc_msg_unmap(conn, op);
	if (op->internal == MRRC_INT_CREDIT)
		conn->credit_busy = false;
	else
		mrrc_op_wr_finish(op, status);
	mrrc_conn_kick(conn);
	spin_unlock_bh(&conn->lock);

	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		mrrc_conn_fail(conn, status);
}

/*
 * @op's peer ended its exposure with the *_DONE in @rx (SEND_WITH_INV of
 * the one key we advertised, see MRRC_ADV_RINV): the MR is already
 * invalid, and revoking the exposure need not post anything for it.  Only
 * the key we advertised counts; anything else the peer invalidated is
 * invalidated again locally as usual.  conn->lock held.
 */
void mrrc_op_remote_inv(struct mrrc_conn *conn, struct mrrc_op *op,
			const struct mrrc_rx *rx)
{
	if (rx->inv && op->expo.n == 1 && op->expo.fm[0] &&
	    (le32_to_cpu(op->msg.flags) & MRRC_ADV_RINV) &&
	    rx->inv_rkey == le32_to_cpu(op->msg.seg[0].rkey)) {
		op->expo.rinv = true;
		conn->st.remote_inv++;
	}
}

/* Handle one control message (conn->lock held). */
static void mrrc_msg_recv(struct mrrc_conn *conn, struct mrrc_rx *rx,
			  u32 byte_len)
{
	struct mrrc_msg *m = rx->msg;
	struct mrrc_op *op;
	int status;

	if (byte_len < offsetof(struct mrrc_msg, seg) ||
	    m->nsegs > MRRC_MSG_SEGS ||
	    byte_len < offsetof(struct mrrc_msg, seg) +
		       m->nsegs * sizeof(struct mrrc_wire_seg)) {
		pr_warn_ratelimited("conn %u: malformed control message\n",
				    conn->id);
		mrrc_rx_repost(conn, rx);
		return;
	}
	/*
	 * The peer has MRRC_RX_DEPTH receive buffers: more credits than that
	 * is a lie, and believing it would overrun the peer (RNR retries for
	 * ever).  Never hold more.
	 */
	if (conn->credits + le16_to_cpu(m->credits) > MRRC_RX_DEPTH) {
		pr_warn_ratelimited("conn %u: peer granted credits it does not have\n",
				    conn->id);
		conn->credits = MRRC_RX_DEPTH;
	} else {
		conn->credits += le16_to_cpu(m->credits);
	}
	conn->st.ctrl_recv++;
	status = -(int)min_t(u32, le32_to_cpu(m->status), MAX_ERRNO);

	switch (m->type) {
	case MRRC_MSG_RECV_ADV:
		list_add_tail(&rx->node, &conn->adv);
		return;
	case MRRC_MSG_STCRW:
	case MRRC_MSG_CRW_DONE:
	case MRRC_MSG_WITHDRAW:
	case MRRC_MSG_WITHDRAWN:
		if (mrrc_crw_msg(conn, rx, status))
			return;
		break;
	case MRRC_MSG_SEND_DONE:
		op = list_first_entry_or_null(&conn->recvs, struct mrrc_op,
					      wnode);
		if (op) {
			list_del_init(&op->wnode);
			/* The peer's count: never more than the buffer. */
			op->done.cqe.byte_len = min_t(u32, le32_to_cpu(m->len),
						      op->len);
			mrrc_op_remote_inv(conn, op, rx);
			mrrc_op_part_done(op, MRRC_PART_PEER, status);
		}
		break;
	default:
		break;
	}
	mrrc_rx_repost(conn, rx);
}

/* A receive completed on an established connection (conn->lock held). */
static void mrrc_rx_handle(struct mrrc_conn *conn, struct mrrc_rx *rx)
{
	conn->rx_unreturned++;
	conn->activity++;
	if (rx->done.cqe.opcode == MRRC_OP_RECV_IMM) {
		/* The peer's WRITE_IMM: reposted when the application polls. */
		rx->done.kind = MRRC_DONE_RX;
		rx->done.conn = conn;
		rx->done.cqe.conn = conn->id;
		kref_get(&conn->ref);
		mrrc_done_queue(conn->ctx, &rx->done);
	} else {
		ib_dma_sync_single_for_cpu(conn->ibdev, rx->dma,
					   sizeof(*rx->msg), DMA_FROM_DEVICE);
		mrrc_msg_recv(conn, rx, rx->done.cqe.byte_len);
	}
}

static void mrrc_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrrc_rx *rx = container_of(wc->wr_cqe, struct mrrc_rx, cqe);
	struct mrrc_conn *conn = rx->conn;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			mrrc_conn_fail(conn, mrrc_wc_errno(conn, wc->status));
		return;
	}

	memset(&rx->done.cqe, 0, sizeof(rx->done.cqe));
	rx->done.cqe.byte_len = wc->byte_len;
	rx->inv = wc->wc_flags & IB_WC_WITH_INVALIDATE;
	rx->inv_rkey = rx->inv ? wc->ex.invalidate_rkey : 0;
	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {
		rx->done.cqe.opcode = MRRC_OP_RECV_IMM;
		rx->done.cqe.imm = be32_to_cpu(wc->ex.imm_data);
	}

	spin_lock_bh(&conn->lock);
	switch (conn->state) {
	case MRRC_CS_ESTABLISHED:
		mrrc_rx_handle(conn, rx);
		mrrc_conn_kick(conn);
		break;
	case MRRC_CS_DRAINING:
		/* Sent before the peer left: handled; nothing is posted. */
		mrrc_rx_handle(conn, rx);
		break;
	case MRRC_CS_CLOSED:
		break;
	default:
		/* Before our ESTABLISHED event: mrrc_data_start() takes it. */
		list_add_tail(&rx->node, &conn->early);
		break;
	}
	spin_unlock_bh(&conn->lock);
}

/* ---- MRRC_IOC_POST ------------------------------------------------------ */

static int mrrc_wr_check(const struct mrrc_wr *wr)
{
	bool one_sided, atomic, tagged;

	if (wr->flags & ~MRRC_WR_HANDLE)
		return -EOPNOTSUPP;
	if (wr->__reserved || wr->__reserved2)
		return -EINVAL;
	if (wr->opcode < MRRC_OP_WRITE || wr->opcode > MRRC_OP_LAST)
		return -EINVAL;
	if (!wr->len || wr->len > MRRC_MAX_LEN || wr->addr + wr->len < wr->addr)
		return -EINVAL;
	if (!(wr->flags & MRRC_WR_HANDLE) && wr->handle)
		return -EINVAL;

	atomic = wr->opcode == MRRC_OP_FETCH_ADD ||
		 wr->opcode == MRRC_OP_CMP_SWAP;
	one_sided = atomic || wr->opcode == MRRC_OP_WRITE ||
		    wr->opcode == MRRC_OP_WRITE_IMM ||
		    wr->opcode == MRRC_OP_READ;
	tagged = wr->opcode == MRRC_OP_CRW || wr->opcode == MRRC_OP_STCRW;

	if (atomic && (wr->len != 8 || (wr->addr | wr->remote_addr) & 7))
		return -EINVAL;
	if (!one_sided && (wr->remote_addr || wr->rkey))
		return -EINVAL;
	if (wr->opcode != MRRC_OP_WRITE_IMM && wr->imm)
		return -EINVAL;
	if (!atomic && wr->compare_add)
		return -EINVAL;
	if (wr->opcode != MRRC_OP_CMP_SWAP && wr->swap)
		return -EINVAL;
	if (!tagged && (wr->tag || wr->deadline_ns))
		return -EINVAL;
	return 0;
}

static u32 mrrc_wr_access(u8 opcode)
{
	switch (opcode) {
	case MRRC_OP_READ:
	case MRRC_OP_FETCH_ADD:
	case MRRC_OP_CMP_SWAP:
		return MRRC_ACCESS_LOCAL_WRITE;
	case MRRC_OP_RECV:
	case MRRC_OP_STCRW:
		/* The peer's rights come from the exposure, not the cache. */
		return MRRC_ACCESS_LOCAL_WRITE;
	default:
		return 0;
	}
}

/* Queue a registered operation on its connection (conn->lock held). */
static void mrrc_op_submit(struct mrrc_conn *conn, struct mrrc_op *op,
			   u64 deadline_ns)
{
	switch (op->opcode) {
	case MRRC_OP_RECV:
		op->parts = MRRC_PART_WR | MRRC_PART_PEER;
		op->msg.type = MRRC_MSG_RECV_ADV;
		list_add_tail(&op->wnode, &conn->recvs);
		op->queued = true;
		list_add_tail(&op->qnode, &conn->ctrlq);
		break;
	case MRRC_OP_STCRW:
	case MRRC_OP_CRW:
		mrrc_crw_submit(conn, op, deadline_ns);
		break;
	default:
		op->parts = MRRC_PART_WR;
		op->queued = true;
		list_add_tail(&op->qnode, &conn->backlog);
		break;
	}
	mrrc_conn_kick(conn);
}

/* A chained REG_MR's slot is free again; an error fails the connection. */
static void mrrc_chain_reg_done(struct mrrc_conn *conn, struct ib_wc *wc)
{
	spin_lock_bh(&conn->lock);
	conn->sq_free++;
	mrrc_conn_kick(conn);
	spin_unlock_bh(&conn->lock);
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		mrrc_conn_fail(conn, mrrc_wc_errno(conn, wc->status));
}

/* A miss's chained REG_MR completed on the connection's queue pair. */
static void mrrc_defer_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrrc_defer *d = container_of(wc->wr_cqe, struct mrrc_defer, cqe);

	mrrc_cache_defer_done(d, wc->status == IB_WC_SUCCESS);
	mrrc_chain_reg_done(cq->cq_context, wc);
}

/* Give back send queue slots reserved for chained REG_MRs and not used. */
static void mrrc_sq_unreserve(struct mrrc_conn *conn, unsigned int n)
{
	if (!n)
		return;
	spin_lock_bh(&conn->lock);
	conn->sq_free += n;
	mrrc_conn_kick(conn);
	spin_unlock_bh(&conn->lock);
}

/* Post a chained REG_MR in a reserved slot (conn->lock held). */
static int mrrc_chain_post(struct mrrc_conn *conn, struct ib_reg_wr *wr,
			   struct ib_cqe *cqe, unsigned int *reserved)
{
	int ret;

	lockdep_assert_held(&conn->lock);
	if (conn->state != MRRC_CS_ESTABLISHED)
		return -ENOTCONN;
	wr->wr.wr_cqe = cqe;
	wr->wr.send_flags = IB_SEND_SIGNALED;
	ret = mrrc_dp_ib_post(conn, &wr->wr);
	if (!ret)
		(*reserved)--;
	return ret;
}

/*
 * Post the REG_MRs mrrc_cache_reg_defer() left in @dl on @conn's queue
 * pair, in send queue slots reserved for them (*@reserved), and give back
 * the slots they did not take (*@reserved is then 0).  Later work
 * requests on this queue pair are ordered behind them.
 * Return: 0, or -ENOTCONN / the post's error: then every one not posted
 * is ended as failed, and the operation must not go.
 */
static int mrrc_defer_post(struct mrrc_conn *conn, struct mrrc_defer_list *dl,
			   unsigned int *reserved)
{
	unsigned int i;
	int ret = 0;

	spin_lock_bh(&conn->lock);
	for (i = 0; i < dl->n; i++) {
		struct mrrc_defer *d = dl->d[i];

		d->cqe.done = mrrc_defer_reg_done;
		if (!ret)
			ret = mrrc_chain_post(conn, &d->wr, &d->cqe, reserved);
		if (ret)
			mrrc_cache_defer_done(d, false);
	}
	dl->n = 0;
	/* The slots no REG_MR took go back under the same lock. */
	conn->sq_free += *reserved;
	*reserved = 0;
	mrrc_conn_kick(conn);
	spin_unlock_bh(&conn->lock);
	return ret;
}

/*
 * Expose a RECV's or STCRW's range; with chain_expo, a single fast range's
 * REG_MR is left in @op, to go on @conn's queue pair with the
 * advertisement that carries its key (__mrrc_post_msg()).
 */
static int mrrc_op_expose(struct mrrc_conn *conn, struct mrrc_cache *c,
			  struct mrrc_op *op, struct mrrc_reg_out *out,
			  struct mrrc_seg *segs)
{
	bool chain = READ_ONCE(mrrc_chain_expo) && conn->pd == c->pd;

	return mrrc_cache_expose(c, out->handle, segs, out->nsegs,
				 MRRC_ACCESS_LOCAL_WRITE |
				 MRRC_ACCESS_REMOTE_WRITE, &op->expo,
				 chain ? &op->reg_wr : NULL);
}

/*
 * @conn's queue pair is drained: the chained REG_MRs whose advertisement
 * never went have run or been flushed, so their exposures can be revoked.
 */
void mrrc_data_drained(struct mrrc_conn *conn)
{
	struct mrrc_op *op, *tmp;

	spin_lock_bh(&conn->lock);
	list_for_each_entry_safe(op, tmp, &conn->orphans, onode) {
		list_del_init(&op->onode);
		op->reg_orphan = false;
		mrrc_cache_expo_done(mrrc_conn_cache(conn), &op->expo, false);
		/* Ended meanwhile: report it now (else when it ends). */
		if (op->held)
			mrrc_done_queue(conn->ctx, &op->done);
	}
	spin_unlock_bh(&conn->lock);
}

static int mrrc_post_one(struct mrrc_ctx *ctx, struct mrrc_cache *c,
			 const struct mrrc_wr *wr)
{
	struct mrrc_defer_list dl = { .owner = NULL };
	struct mrrc_seg segs[MRRC_OP_SGE];
	struct mrrc_reg_out out = {};
	unsigned int reserved = 0;
	struct mrrc_conn *conn;
	struct mrrc_op *op;
	unsigned int i;
	u32 access;
	int ret;

	BUILD_BUG_ON(MRRC_DEFER_MAX < MRRC_OP_SGE);
	ret = mrrc_wr_check(wr);
	if (ret)
		return ret;
	conn = mrrc_conn_lookup(ctx, wr->conn);
	if (!conn)
		return -ENOENT;
	if (conn->listener)
		return -EINVAL;
	if (conn->isolated) {
		/* A handle is the context's cache's, its keys its PD's. */
		if (wr->flags & MRRC_WR_HANDLE)
			return -EINVAL;
		c = conn->cache;
		/* Made keys never go on the wire (not made so: checked). */
		if (WARN_ON_ONCE(mrrc_cache_mode(c) == MRRC_MODE_MODEL))
			return -EOPNOTSUPP;
	}

	/* POSTs hold ctx->lock: nothing else adds to ctx->nops meanwhile. */
	if (atomic_read(&ctx->nops) >= READ_ONCE(mrrc_max_ops))
		return -EAGAIN;
	spin_lock_bh(&conn->lock);
	if (conn->state == MRRC_CS_CLOSED || conn->state == MRRC_CS_DRAINING)
		ret = -ENOTCONN;
	else if (conn->nops >= MRRC_CONN_MAX_OPS)
		ret = -EAGAIN;
	else if (wr->opcode == MRRC_OP_CRW &&
		 mrrc_tag_lookup(conn->crw, wr->tag))
		ret = -EEXIST;
	else if (wr->opcode == MRRC_OP_STCRW &&
		 mrrc_tag_lookup(conn->stcrw, wr->tag))
		ret = -EEXIST;
	/*
	 * Slots for the REG_MRs of misses, chained ahead of the operation on
	 * this queue pair (same PD as the cache's) instead of waited for.
	 */
	if (!ret && READ_ONCE(mrrc_chain_reg) && conn->pd == c->pd &&
	    conn->state == MRRC_CS_ESTABLISHED &&
	    !(wr->flags & MRRC_WR_HANDLE) &&
	    conn->sq_free >= 2 * MRRC_DEFER_MAX) {
		reserved = MRRC_DEFER_MAX;
		conn->sq_free -= reserved;
		dl.owner = conn;
	}
	spin_unlock_bh(&conn->lock);
	if (ret)
		return ret;

	op = kzalloc(sizeof(*op), GFP_KERNEL_ACCOUNT);
	if (!op) {
		mrrc_sq_unreserve(conn, reserved);
		return -ENOMEM;
	}
	access = mrrc_wr_access(wr->opcode);
	if (wr->flags & MRRC_WR_HANDLE)
		ret = mrrc_cache_handle_ref(c, wr->handle, wr->addr, wr->len,
					    access, segs, MRRC_OP_SGE, &out);
	else
		ret = mrrc_cache_reg_defer(c, wr->addr, wr->len, access,
					   MRRC_REG_WHOLE | MRRC_REG_OP, segs,
					   MRRC_OP_SGE, &out,
					   reserved ? &dl : NULL);
	/* A hit left nothing to post: no lock for it. */
	if (dl.n) {
		int err = mrrc_defer_post(conn, &dl, &reserved);

		if (!ret && err) {
			mrrc_cache_release_op(c, out.handle);
			ret = err;
		}
	}
	if (ret) {
		mrrc_sq_unreserve(conn, reserved);
		goto err_free;
	}
	if (wr->opcode == MRRC_OP_RECV || wr->opcode == MRRC_OP_STCRW) {
		/* Not held while the exposure may register and wait. */
		mrrc_sq_unreserve(conn, reserved);
		reserved = 0;
		ret = mrrc_op_expose(conn, c, op, &out, segs);
		if (ret)
			goto err_release;
	}
	op->handle = out.handle;
	op->opcode = wr->opcode;
	op->len = wr->len;
	op->nsge = out.nsegs;
	for (i = 0; i < out.nsegs; i++) {
		op->sge[i].addr = segs[i].addr;
		op->sge[i].length = segs[i].length;
		op->sge[i].lkey = segs[i].lkey;
		op->msg.seg[i].addr = cpu_to_le64(segs[i].addr);
		op->msg.seg[i].len = cpu_to_le32(segs[i].length);
		op->msg.seg[i].rkey = cpu_to_le32(segs[i].rkey);
	}
	if (wr->opcode == MRRC_OP_RECV || wr->opcode == MRRC_OP_STCRW) {
		op->msg.nsegs = out.nsegs;
		/* One FRWR MR: the peer may end it with its *_DONE. */
		if (out.nsegs == 1 && op->expo.fm[0] &&
		    READ_ONCE(mrrc_remote_inv) && mrrc_conn_rinv(conn))
			op->msg.flags = cpu_to_le32(MRRC_ADV_RINV);
	}
	op->remote_addr = wr->remote_addr;
	op->rkey = wr->rkey;
	op->imm = wr->imm;
	op->compare_add = wr->compare_add;
	op->swap = wr->swap;
	op->cqe.done = mrrc_op_wr_done;
	INIT_LIST_HEAD(&op->wnode);
	op->done.kind = MRRC_DONE_OP;
	op->done.conn = conn;
	op->done.cqe.wr_id = wr->wr_id;
	op->done.cqe.conn = conn->id;
	op->done.cqe.opcode = wr->opcode;
	op->done.cqe.tag = wr->tag;
	if (wr->opcode != MRRC_OP_RECV && wr->opcode != MRRC_OP_STCRW)
		op->done.cqe.byte_len = wr->len;
	op->conn = conn;
	kref_get(&conn->ref);

	spin_lock_bh(&conn->lock);
	if (conn->state == MRRC_CS_CLOSED || conn->state == MRRC_CS_DRAINING) {
		spin_unlock_bh(&conn->lock);
		mrrc_conn_put(conn);
		ret = -ENOTCONN;
		goto err_unexpose;
	}
	/*
	 * A hit's reserved slots go back here, not under a lock of their
	 * own; the submission's kick may use them.
	 */
	conn->sq_free += reserved;
	conn->nops++;
	atomic_inc(&ctx->nops);
	conn->st.posted++;
	mrrc_op_submit(conn, op, wr->deadline_ns);
	spin_unlock_bh(&conn->lock);
	return 0;

err_unexpose:
	if (op->expo.chained)	/* never posted */
		mrrc_cache_expo_done(c, &op->expo, false);
	mrrc_cache_unexpose(c, &op->expo);
err_release:
	mrrc_sq_unreserve(conn, reserved);
	mrrc_cache_release_op(c, out.handle);
err_free:
	kfree(op);
	return ret;
}

int mrrc_dp_post(struct mrrc_ctx *ctx, struct mrrc_post *cmd)
{
	const size_t min_wr = offsetofend(struct mrrc_wr, deadline_ns);
	struct mrrc_cache *c;
	struct mrrc_wr wr;
	unsigned int i;
	int ret = 0;

	cmd->done = 0;
	if (cmd->flags)
		return -EOPNOTSUPP;
	if (cmd->__reserved || cmd->count > MRRC_MAX_BATCH ||
	    cmd->wr_size < min_wr)
		return -EINVAL;

	c = mrrc_ctx_lock_cache(ctx);
	if (IS_ERR(c))
		return PTR_ERR(c);
	/* The model registrar's keys are not real. */
	if (mrrc_cache_mode(c) == MRRC_MODE_MODEL)
		ret = -EOPNOTSUPP;
	for (i = 0; !ret && i < cmd->count; i++) {
		ret = copy_struct_from_user(&wr, sizeof(wr),
					    u64_to_user_ptr(cmd->wrs) +
					    (u64)i * cmd->wr_size,
					    cmd->wr_size);
		if (!ret)
			ret = mrrc_post_one(ctx, c, &wr);
		if (!ret)
			cmd->done++;
	}
	mrrc_ctx_unlock(ctx);
	return ret;
}
