// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - CRW and STCRW: the conditional RDMA write held until the peer's
 * tagged range arrives, and its target.
 *
 * Per connection, three tag tables (conn.h): our held CRWs (conn->crw),
 * our STCRWs waiting for MSG_CRW_DONE (conn->stcrw), and the peer's
 * STCRWs no CRW has matched yet (conn->arrived, keeping their receive
 * buffers).  A CRW and the STCRW with its tag meet in either order; the
 * CRW then goes to the back of the send queue and data.c writes it from
 * the completion path.  Deadlines are kernel timers; an STCRW that
 * expires or is cancelled after the peer got it is withdrawn
 * (MSG_WITHDRAW / MSG_WITHDRAWN).  Everything here runs under conn->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "mrrc.h"
#include "cache.h"
#include "conn.h"
#include "dp.h"

static void mrrc_op_timeout(struct timer_list *t);

/* @table is conn->crw or conn->stcrw, both of MRRC_TAG_BITS. */
struct mrrc_op *mrrc_tag_lookup(struct hlist_head *table, u64 tag)
{
	struct mrrc_op *op;

	hlist_for_each_entry(op, &table[hash_min(tag, MRRC_TAG_BITS)], hnode)
		if (op->done.cqe.tag == tag)
			return op;
	return NULL;
}

static struct mrrc_rx *mrrc_arrived_find(struct mrrc_conn *conn, u64 tag)
{
	struct mrrc_rx *rx;

	hash_for_each_possible(conn->arrived, rx, hnode, tag)
		if (le64_to_cpu(rx->msg->tag) == tag)
			return rx;
	return NULL;
}

/*
 * Queue a one-off control message (conn->lock held, any context).  At
 * most MRRC_RX_DEPTH wait: a peer that sends withdrawals and never
 * returns credits does not make the queue grow without bound.
 * Return: 0, -ENOBUFS or -ENOMEM.
 */
static int mrrc_ctrl_send(struct mrrc_conn *conn, u8 type, u64 tag,
			  __le32 seq)
{
	struct mrrc_op *m;

	if (conn->nctrl >= MRRC_RX_DEPTH)
		return -ENOBUFS;
	m = kzalloc(sizeof(*m), GFP_ATOMIC);
	if (!m)
		return -ENOMEM;
	conn->nctrl++;
	m->conn = conn;
	m->internal = MRRC_INT_MSG;
	m->cqe.done = mrrc_op_wr_done;
	m->msg.type = type;
	m->msg.tag = cpu_to_le64(tag);
	m->msg.seq = seq;
	m->queued = true;
	/*
	 * Ahead of advertisements waiting for credits: the STCRW a
	 * withdrawal names has left already (one still queued is simply
	 * dropped), and the answer to one must not wait behind them.
	 */
	list_add(&m->qnode, &conn->ctrlq);
	mrrc_conn_kick(conn);
	return 0;
}

/*
 * Our STCRW @op timed out or was cancelled (conn->lock held; it is on
 * conn->stcrw).  If its message never left, it simply ends.  Otherwise
 * the peer is asked to forget it (MSG_WITHDRAW), and it completes with
 * @status when the peer says nothing more will land (MSG_WITHDRAWN), or
 * after MRRC_WITHDRAW_WAIT without an answer.
 */
static void mrrc_stcrw_withdraw(struct mrrc_conn *conn, struct mrrc_op *op,
				int status)
{
	if (op->queued) {
		list_del(&op->qnode);
		op->queued = false;
		hash_del(&op->hnode);
		op->hashed = false;
		mrrc_op_part_done(op, MRRC_PART_WR, status);
		mrrc_op_part_done(op, MRRC_PART_PEER, status);
		return;
	}
	op->withdrawing = true;
	op->wd_status = status;
	/*
	 * The peer is gone but what it sent is still being handled: a
	 * CRW_DONE may yet land.  The flush after the drain ends it.
	 */
	if (conn->state == MRRC_CS_DRAINING)
		return;
	if (conn->state == MRRC_CS_CLOSED ||
	    mrrc_ctrl_send(conn, MRRC_MSG_WITHDRAW, op->done.cqe.tag,
			   op->msg.seq)) {
		/* No way to ask: the exposure still ends at POLL. */
		hash_del(&op->hnode);
		op->hashed = false;
		conn->st.withdraw_lost++;
		mrrc_op_part_done(op, MRRC_PART_PEER, status);
		return;
	}
	if (!op->has_timer) {
		op->has_timer = true;
		timer_setup(&op->timer, mrrc_op_timeout, 0);
	}
	op->wd_deadline = jiffies + MRRC_WITHDRAW_WAIT;
	mod_timer(&op->timer, op->wd_deadline);
}

/*
 * The peer withdraws its STCRW @tag (conn->lock held): free its entry, or
 * fail the CRW matched to it that has not been posted yet; then answer.
 * A CRW already posted has written and sent MSG_CRW_DONE before the
 * answer, so the peer learns that first.
 */
static void mrrc_stcrw_withdrawn_by_peer(struct mrrc_conn *conn, u64 tag,
					 __le32 seq)
{
	struct mrrc_rx *rx = mrrc_arrived_find(conn, tag);
	struct mrrc_op *op;

	if (rx && rx->msg->seq == seq) {
		hash_del(&rx->hnode);
		mrrc_rx_repost(conn, rx);
	} else if (!rx) {
		list_for_each_entry(op, &conn->backlog, qnode) {
			if (op->opcode != MRRC_OP_CRW || !op->peer ||
			    le64_to_cpu(op->peer->msg->tag) != tag ||
			    op->peer->msg->seq != seq)
				continue;
			list_del(&op->qnode);
			op->queued = false;
			mrrc_rx_repost(conn, op->peer);
			op->peer = NULL;
			mrrc_op_part_done(op, MRRC_PART_WR, -ECANCELED);
			break;
		}
	}
	/* Without memory the peer gives up waiting after a while. */
	mrrc_ctrl_send(conn, MRRC_MSG_WITHDRAWN, tag, seq);
}

/* A CRW meets its STCRW: it goes to the back of the send queue. */
static void mrrc_crw_match(struct mrrc_conn *conn, struct mrrc_op *op,
			   struct mrrc_rx *rx)
{
	op->peer = rx;
	op->queued = true;
	list_add_tail(&op->qnode, &conn->backlog);
}

/* A CRW or STCRW deadline. */
static void mrrc_op_timeout(struct timer_list *t)
{
	struct mrrc_op *op = from_timer(op, t, timer);
	struct mrrc_conn *conn = op->conn;

	spin_lock_bh(&conn->lock);
	if (!op->hashed) {
		/* Matched, answered or flushed meanwhile. */
	} else if (op->withdrawing) {
		/*
		 * The deadline's run that lost the race with a cancel, which
		 * re-armed the timer: wait for the re-armed one.
		 */
		if (time_before(jiffies, op->wd_deadline))
			goto out;
		/* The peer never answered the withdrawal. */
		hash_del(&op->hnode);
		op->hashed = false;
		conn->st.withdraw_lost++;
		mrrc_op_part_done(op, MRRC_PART_PEER, op->wd_status);
	} else if (op->opcode == MRRC_OP_STCRW) {
		mrrc_stcrw_withdraw(conn, op, -ETIMEDOUT);
	} else {
		hash_del(&op->hnode);
		op->hashed = false;
		mrrc_op_part_done(op, MRRC_PART_WR, -ETIMEDOUT);
	}
out:
	spin_unlock_bh(&conn->lock);
}

/* Queue a CRW or an STCRW on its connection (conn->lock held). */
void mrrc_crw_submit(struct mrrc_conn *conn, struct mrrc_op *op,
		     u64 deadline_ns)
{
	u64 tag = op->done.cqe.tag;
	struct mrrc_rx *rx;

	if (op->opcode == MRRC_OP_STCRW) {
		op->parts = MRRC_PART_WR | MRRC_PART_PEER;
		op->msg.type = MRRC_MSG_STCRW;
		op->msg.tag = cpu_to_le64(tag);
		op->msg.seq = cpu_to_le32(++conn->stcrw_seq);
		hash_add(conn->stcrw, &op->hnode, tag);
		op->hashed = true;
		op->queued = true;
		list_add_tail(&op->qnode, &conn->ctrlq);
	} else {
		op->parts = MRRC_PART_WR;
		rx = mrrc_arrived_find(conn, tag);
		if (rx) {
			hash_del(&rx->hnode);
			mrrc_crw_match(conn, op, rx);
		} else {
			hash_add(conn->crw, &op->hnode, tag);
			op->hashed = true;
		}
	}

	if (deadline_ns && op->hashed) {
		s64 left = deadline_ns - ktime_get_ns();

		op->has_timer = true;
		timer_setup(&op->timer, mrrc_op_timeout, 0);
		/* Round up: a deadline never fires early. */
		mod_timer(&op->timer, jiffies +
			  (left > 0 ? nsecs_to_jiffies(left) + 1 : 0));
	}
}

/*
 * A tagged control message from the peer (conn->lock held): MSG_STCRW,
 * MSG_CRW_DONE, MSG_WITHDRAW or MSG_WITHDRAWN.  Returns true when @rx is
 * kept (an STCRW waiting for its CRW), false when the caller reposts it.
 */
bool mrrc_crw_msg(struct mrrc_conn *conn, struct mrrc_rx *rx, int status)
{
	const struct mrrc_msg *m = rx->msg;
	u64 tag = le64_to_cpu(m->tag);
	struct mrrc_op *op;

	switch (m->type) {
	case MRRC_MSG_STCRW: {
		/*
		 * The peer reuses a tag only after its STCRW ended: an entry
		 * still here under it is one whose withdrawal never reached
		 * us.  The new one replaces it.
		 */
		struct mrrc_rx *old = mrrc_arrived_find(conn, tag);

		if (old) {
			hash_del(&old->hnode);
			mrrc_rx_repost(conn, old);
		}
		op = mrrc_tag_lookup(conn->crw, tag);
		if (op) {
			hash_del(&op->hnode);
			op->hashed = false;
			mrrc_crw_match(conn, op, rx);
		} else {
			hash_add(conn->arrived, &rx->hnode, tag);
		}
		return true;
	}
	case MRRC_MSG_CRW_DONE:
		/*
		 * Unknown tags ended here without a withdrawal: ignore.  One
		 * being withdrawn landed before the peer saw the withdrawal:
		 * it completes as it went.
		 */
		op = mrrc_tag_lookup(conn->stcrw, tag);
		if (op && op->msg.seq == m->seq) {
			hash_del(&op->hnode);
			op->hashed = false;
			op->done.cqe.byte_len = min_t(u32, le32_to_cpu(m->len),
						      op->len);
			mrrc_op_remote_inv(conn, op, rx);
			mrrc_op_part_done(op, MRRC_PART_PEER, status);
		}
		return false;
	case MRRC_MSG_WITHDRAW:
		mrrc_stcrw_withdrawn_by_peer(conn, tag, m->seq);
		return false;
	case MRRC_MSG_WITHDRAWN:
		/* Only for a withdrawal we asked for. */
		op = mrrc_tag_lookup(conn->stcrw, tag);
		if (op && op->withdrawing && op->msg.seq == m->seq) {
			hash_del(&op->hnode);
			op->hashed = false;
			conn->st.withdrawn++;
			mrrc_op_part_done(op, MRRC_PART_PEER, op->wd_status);
		}
		return false;
	default:
		return false;
	}
}

int mrrc_dp_cancel(struct mrrc_ctx *ctx, struct mrrc_cancel *cmd)
{
	struct mrrc_conn *conn;
	struct mrrc_op *op;
	int ret = 0;

	if (cmd->flags)
		return -EOPNOTSUPP;
	if (cmd->opcode != MRRC_OP_CRW && cmd->opcode != MRRC_OP_STCRW)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	conn = mrrc_conn_lookup(ctx, cmd->conn);
	if (!conn || conn->listener) {
		ret = -ENOENT;
		goto out;
	}
	spin_lock_bh(&conn->lock);
	op = cmd->opcode == MRRC_OP_CRW ? mrrc_tag_lookup(conn->crw, cmd->tag) :
					  mrrc_tag_lookup(conn->stcrw, cmd->tag);
	if (!op) {
		ret = -ENOENT;
	} else if (op->withdrawing) {
		ret = -EALREADY;
	} else if (op->opcode == MRRC_OP_STCRW) {
		mrrc_stcrw_withdraw(conn, op, -ECANCELED);
	} else {
		hash_del(&op->hnode);
		op->hashed = false;
		mrrc_op_part_done(op, MRRC_PART_WR, -ECANCELED);
	}
	spin_unlock_bh(&conn->lock);
out:
	mutex_unlock(&ctx->lock);
	return ret;
}
