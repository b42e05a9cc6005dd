/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrrc - connections and the kernel-mediated data path.
 *
 * A connection is one RC queue pair made with the in-kernel RDMA CM, in
 * its context's protection domain, so registrations from the context's
 * cache work on it.  Applications post operations on it through
 * MRRC_IOC_POST and harvest completions through MRRC_IOC_POLL; the context
 * file is readable while completions are ready.
 *
 * The two modules of a connection talk through control messages (struct
 * mrrc_msg, SENDs into module-owned receive buffers).  The receive queue
 * belongs to the module alone, so user SEND/RECV are built from them: a
 * user RECV registers its buffer for remote write and advertises it
 * (MSG_RECV_ADV); a SEND waits for the oldest advertisement, RDMA-writes
 * into it and tells the peer (MSG_SEND_DONE).  CRW and STCRW work the same
 * way with tags: STCRW advertises a range under a tag (MSG_STCRW), a CRW
 * with that tag is written into it from the completion path and the peer
 * learns it landed (MSG_CRW_DONE).  Each side may consume only as many of
 * the peer's receive buffers as it has credits; credits come back on every
 * control message, and in an explicit MSG_CREDIT when the peer runs low.
 * The last credit is kept for MSG_CREDIT, so credits can always flow.
 *
 * Locking (the module's whole order is the table in mrrc.h):
 *
 *   ctx->lock  ->  conn->lock  ->  ctx->done_lock
 *
 * ctx->lock serialises the context's commands and is held while
 * connections are created and destroyed.  RDMA CM event handlers never take
 * it (rdma_destroy_id() waits for them under it).  conn->lock (taken in
 * softirq by completion handlers and deadline timers) protects everything
 * of the connection's data path.  ctx->done_lock protects ctx->done.
 */
#ifndef _MRRC_CONN_H
#define _MRRC_CONN_H

#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <rdma/rdma_cm.h>

#include "mrrc_abi.h"
#include "mrrc.h"
#include "cache.h"

#define MRRC_RX_DEPTH		128	/* receive buffers = initial credits */
#define MRRC_SQ_DEPTH		1024	/* send queue work requests */
#define MRRC_OP_SGE		8	/* local segments per operation */
#define MRRC_MSG_SEGS		14	/* remote segments per message */
#define MRRC_TAG_BITS		8
#define MRRC_BACKLOG_DEFAULT	128	/* LISTEN with backlog 0 */
#define MRRC_BACKLOG_MAX	4096
#define MRRC_CM_MAGIC		0x4d525243	/* "MRRC" */
#define MRRC_CM_VERSION		3	/* 2: MSG_WITHDRAW(N); 3: MRRC_ADV_RINV */
/* How long an STCRW being withdrawn waits for the peer's MSG_WITHDRAWN. */
#define MRRC_WITHDRAW_WAIT	(5 * HZ)

struct mrrc_ctx;
struct mrrc_conn;

/* A remote segment on the wire, little endian. */
struct mrrc_wire_seg {
	__le64 addr;
	__le32 len;
	__le32 rkey;
};

enum mrrc_msg_type {
	MRRC_MSG_CREDIT = 1,	/* credits only */
	MRRC_MSG_RECV_ADV,	/* a RECV buffer: segs */
	MRRC_MSG_SEND_DONE,	/* the oldest advertised buffer got len bytes */
	MRRC_MSG_STCRW,		/* tag: segs */
	MRRC_MSG_CRW_DONE,	/* tag: len bytes written */
	MRRC_MSG_WITHDRAW,	/* tag: forget my STCRW, write nothing more */
	MRRC_MSG_WITHDRAWN,	/* tag: forgotten; nothing more will land */
};

/* A control message between the two modules. */
struct mrrc_msg {
	u8 type;
	u8 nsegs;
	__le16 credits;		/* receive buffers returned */
	__le32 len;		/* *_DONE: bytes */
	union {
		__le32 status;	/* *_DONE: 0 or a positive errno */
		__le32 flags;	/* RECV_ADV, STCRW: MRRC_ADV_* */
	};
	__le32 seq;		/* STCRW, and CRW_DONE, WITHDRAW(N) about it */
	__le64 tag;
	struct mrrc_wire_seg seg[MRRC_MSG_SEGS];
};

/*
 * RECV_ADV and STCRW flags.  MRRC_ADV_RINV: the message has one segment,
 * an FRWR MR of its own; the peer may end it with the *_DONE message sent
 * as IB_WR_SEND_WITH_INV of seg[0].rkey (remote invalidation), so that
 * the receiver need not invalidate it itself before completing.
 */
#define MRRC_ADV_RINV		BIT(0)

/* Private data of connect and accept. */
struct mrrc_cm_pdata {
	__le32 magic;
	u8 version;
	u8 reserved[3];
	__le32 rx_depth;
};

/* Something to report through MRRC_IOC_POLL; on ctx->done. */
struct mrrc_done {
	struct list_head node;
	struct mrrc_conn *conn;	/* holds a reference while queued */
	struct mrrc_cqe cqe;
	u8 kind;		/* enum mrrc_done_kind */
};

enum mrrc_done_kind {
	MRRC_DONE_OP = 1,
	MRRC_DONE_RX,
	MRRC_DONE_EVENT,
};

/* A receive buffer of the module. */
struct mrrc_rx {
	struct ib_cqe cqe;
	struct mrrc_conn *conn;
	struct mrrc_msg *msg;
	u64 dma;
	struct list_head node;		/* conn->adv or conn->early */
	struct hlist_node hnode;	/* conn->arrived */
	struct mrrc_done done;		/* a peer WRITE_IMM to report */
	u32 inv_rkey;			/* the key its SEND invalidated ... */
	bool inv;			/* ... if it was a SEND_WITH_INV */
};

/* Parts an operation waits for before it completes. */
#define MRRC_PART_WR		BIT(0)	/* its signalled work request */
#define MRRC_PART_PEER		BIT(1)	/* the peer's *_DONE message */

/**
 * struct mrrc_op - one operation of MRRC_IOC_POST
 * @done: its completion, on ctx->done once @parts is empty
 * @qnode: entry on conn->backlog or conn->ctrlq while queued
 * @wnode: entry on conn->recvs (RECV waiting for data)
 * @hnode: entry on conn->crw or conn->stcrw (by tag)
 * @conn: the connection (a reference is held)
 * @cqe: completion of the operation's signalled work request
 * @timer: deadline of a CRW or STCRW
 * @parts: MRRC_PART_* still outstanding
 * @opcode: enum mrrc_opcode
 * @queued: on @qnode
 * @hashed: on @hnode
 * @has_timer: @timer was set up
 * @msg_mapped: @msg is DMA-mapped at @msg_dma
 * @internal: not a user operation: the connection's credit message
 *	(MRRC_INT_CREDIT) or a one-off control message freed once sent
 *	(MRRC_INT_MSG)
 * @withdrawing: an STCRW that timed out or was cancelled, waiting for the
 *	peer's MSG_WITHDRAWN (still on conn->stcrw)
 * @wd_status: the errno it then completes with
 * @wd_deadline: jiffies when waiting for the answer ends
 * @nsge: entries of @sge
 * @nwr: send queue slots the posted operation holds
 * @handle: cache handle to release when the completion is polled
 * @len: bytes of the local range
 * @remote_addr: remote address (one-sided operations)
 * @rkey: remote key (one-sided operations)
 * @imm: immediate data
 * @compare_add: atomic operand
 * @swap: atomic operand
 * @peer: the matched advertisement (SEND) or STCRW (CRW)
 * @expo: what a RECV or STCRW exposes to the peer, revoked before the
 *	completion is reported
 * @reg_posted: @expo is chained and @reg_wr went on the queue pair,
 *	unsignalled, right ahead of the advertisement: that message's
 *	successful completion is the proof that it executed
 * @reg_orphan: @reg_wr was posted but the advertisement behind it was
 *	not; on conn->orphans (@onode) until the queue pair is drained
 * @onode: entry on conn->orphans
 * @held: every part ended while it was an orphan: mrrc_data_drained()
 *	reports it
 * @reg_wr: @expo's REG_MR while chained (mrrc_cache_expose() with @prep)
 * @sge: local segments
 * @msg_dma: DMA address of @msg
 * @msg: control message this operation sends
 */
struct mrrc_op {
	struct mrrc_done done;
	struct list_head qnode;
	struct list_head wnode;
	struct hlist_node hnode;
	struct mrrc_conn *conn;
	struct ib_cqe cqe;
	struct timer_list timer;
	u8 parts;
	u8 opcode;
	bool queued;
	bool hashed;
	bool has_timer;
	bool msg_mapped;
	u8 internal;
	bool withdrawing;
	int wd_status;
	unsigned long wd_deadline;
	u8 nsge;
	u16 nwr;
	u32 handle;
	u32 len;
	u64 remote_addr;
	u32 rkey;
	u32 imm;
	u64 compare_add;
	u64 swap;
	struct mrrc_rx *peer;
	struct mrrc_expo expo;
	bool reg_posted;
	bool reg_orphan;
	bool held;
	struct list_head onode;
	struct ib_reg_wr reg_wr;
	struct ib_sge sge[MRRC_OP_SGE];
	u64 msg_dma;
	struct mrrc_msg msg;
};

enum mrrc_op_internal {
	MRRC_INT_CREDIT = 1,
	MRRC_INT_MSG,
};

enum mrrc_conn_kstate {
	MRRC_CS_LISTENING = MRRC_CONN_LISTENING,
	MRRC_CS_CONNECTING = MRRC_CONN_CONNECTING,
	MRRC_CS_REQUESTED = MRRC_CONN_REQUESTED,
	MRRC_CS_ESTABLISHED = MRRC_CONN_ESTABLISHED,
	MRRC_CS_CLOSED = MRRC_CONN_CLOSED,
	/*
	 * The peer disconnected: what it sent before is still handled while
	 * the queue pair drains, nothing new is posted; shown as CLOSED.
	 */
	MRRC_CS_DRAINING = 100,
};

#define MRRC_EVENT_SLOTS	(MRRC_EVENT_ERROR + 1)

/**
 * struct mrrc_conn - a connection or a listener
 * @ref: lifetime; the context's table holds one reference, every
 *	operation and queued completion one more
 * @ctx: the owning context
 * @id: id in ctx->conns
 * @user_data: reported in wr_id of the connection's events
 * @listener: this is a listener
 * @lis: a connection request: the listener it is pending on (a reference
 *	is held) until accepted, rejected, closed or destroyed; then NULL
 * @pending: a listener: requests pending on it
 * @max_pending: a listener: requests it holds at most (its backlog)
 * @active: this side connected (rather than accepted)
 * @drained: the queue pair was drained
 * @cm_id: the RDMA CM id; NULL once destroyed
 * @cq: completion queue (send and receive), polled in softirq
 * @qp: the queue pair; NULL until created, and after destruction
 * @ibdev: the device of @qp, for DMA mapping
 * @pd: the protection domain of @qp: @own_pd, or the context's
 * @isolated: MRRC_CONN_ISOLATED (a listener: its connections are)
 * @own_pd: an isolated connection's own protection domain, or NULL
 * @cache: an isolated connection's own registration cache, or NULL; all
 *	its operations and exports register there (mrrc_conn_cache())
 * @unsig_cqe: completion of unsignalled work requests (errors only)
 * @lock: see the locking comment at the top of this file
 * @state: enum mrrc_conn_kstate, under @lock
 * @close_status: the errno held operations are flushed with
 * @credits: receive buffers of the peer this side may still use
 * @owed: own receive buffers reposted but not yet returned to the peer
 * @rx_unreturned: buffers the peer consumed and we have not returned
 * @sq_free: free send queue slots
 * @nops: operations outstanding (accepted, not yet polled)
 * @nctrl: one-off control messages queued or in flight
 * @stcrw_seq: sequence number of our last STCRW: messages about an STCRW
 *	name its tag and its number, so one about an old STCRW never
 *	matches a new one with the same tag
 * @credit_busy: @credit_op is posted
 * @rx_live: @rx is DMA-mapped and may be reposted
 * @backlog: user operations waiting for the send queue, credits or an
 *	advertisement, in order
 * @ctrlq: control messages waiting for credits or send queue slots
 * @adv: the peer's RECV advertisements, oldest first
 * @early: receives completed before the ESTABLISHED event (passive side:
 *	the peer may send as soon as it has seen the REP), handled in order
 *	when it comes
 * @recvs: our RECVs waiting for the peer's SEND_DONE, oldest first
 * @orphans: operations whose exposure's REG_MR went on the queue pair
 *	without the advertisement behind it (struct mrrc_op @reg_orphan)
 * @crw: our held CRWs, by tag
 * @stcrw: our STCRWs waiting for CRW_DONE, by tag
 * @arrived: the peer's STCRWs that no CRW matched yet, by tag
 * @rx: receive buffers
 * @rx_msgs: their memory
 * @rx_dma: DMA address of @rx_msgs
 * @credit_op: the explicit credit message
 * @err_work: disconnects after a transport error
 * @dying: being destroyed: @err_work is not queued any more (@lock)
 * @events: one preallocated completion per event type
 * @local: local address
 * @peer_addr: the peer's address
 * @st: counters for MRRC_IOC_CONN_QUERY
 */
struct mrrc_conn {
	struct kref ref;
	struct mrrc_ctx *ctx;
	u32 id;
	u64 user_data;
	bool listener;
	struct mrrc_conn *lis;
	atomic_t pending;
	unsigned int max_pending;
	bool active;
	bool drained;
	bool dying;
	struct rdma_cm_id *cm_id;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	bool isolated;
	struct ib_pd *own_pd;
	struct mrrc_cache *cache;
	struct ib_cqe unsig_cqe;

	spinlock_t lock;		/* see the top of this file */
	int state;
	int close_status;
	int credits;
	unsigned int owed;
	unsigned int rx_unreturned;
	unsigned int sq_free;
	unsigned int nops;
	unsigned int nctrl;
	u32 stcrw_seq;
	bool credit_busy;
	bool rx_live;
	struct list_head backlog;
	struct list_head ctrlq;
	struct list_head adv;
	struct list_head early;
	struct list_head recvs;
	struct list_head orphans;
	DECLARE_HASHTABLE(crw, MRRC_TAG_BITS);
	DECLARE_HASHTABLE(stcrw, MRRC_TAG_BITS);
	DECLARE_HASHTABLE(arrived, MRRC_TAG_BITS);
	struct mrrc_rx *rx;
	struct mrrc_msg *rx_msgs;
	u64 rx_dma;
	struct mrrc_op *credit_op;
	struct work_struct err_work;
	struct delayed_work keepalive;
	struct ib_cqe ka_cqe;
	u64 activity;			/* completions seen: the peer is alive */
	u64 ka_seen;			/* @activity at the last keepalive tick */
	bool ka_busy;			/* a probe is in flight */
	struct mrrc_done events[MRRC_EVENT_SLOTS];
	struct sockaddr_storage local;
	struct sockaddr_storage peer_addr;
	struct {
		u64 posted;
		u64 crw_matched;
		u64 ctrl_sent;
		u64 ctrl_recv;
		u64 keepalives;
		u64 withdrawn;		/* our STCRWs taken back */
		u64 withdraw_lost;	/* ... without the peer's answer */
		u64 refused;		/* listener: requests refused */
		u64 remote_inv;		/* exposures the peer invalidated */
	} st;
};

/*
 * The cache @conn's operations and exports register in: its own if it is
 * isolated, else its context's.  Stable while the connection is in
 * ctx->conns (ctx->lock) or has operations outstanding.
 */
static inline struct mrrc_cache *mrrc_conn_cache(struct mrrc_conn *conn)
{
	return conn->isolated ? conn->cache : conn->ctx->cache;
}

/* conn.c */
void mrrc_conn_put(struct mrrc_conn *conn);
void mrrc_conns_add_stats(struct mrrc_ctx *ctx, struct mrrc_cache_stats *st);
u32 mrrc_conns_flush(struct mrrc_ctx *ctx);
struct mrrc_conn *mrrc_conn_lookup(struct mrrc_ctx *ctx, u32 id);
void mrrc_conns_destroy(struct mrrc_ctx *ctx);
void mrrc_conn_event(struct mrrc_conn *conn, int event, int status);
void mrrc_conn_fail(struct mrrc_conn *conn, int status);
void mrrc_conn_err_schedule(struct mrrc_conn *conn);
int mrrc_conn_listen(struct mrrc_ctx *ctx, struct mrrc_listen *cmd);
int mrrc_conn_connect(struct mrrc_ctx *ctx, struct mrrc_connect *cmd);
int mrrc_conn_cmd(struct mrrc_ctx *ctx, unsigned int nr,
		  struct mrrc_conn_cmd *cmd);
int mrrc_conn_info(struct mrrc_ctx *ctx, struct mrrc_conn_query *q);
int mrrc_conn_list(struct mrrc_ctx *ctx, unsigned long start,
		   struct mrrc_conn_query *q, unsigned int max,
		   unsigned long *next, unsigned int *total);

/* data.c */
int mrrc_data_init(struct mrrc_conn *conn);
void mrrc_data_start(struct mrrc_conn *conn);
void mrrc_data_flush(struct mrrc_conn *conn, int status);
void mrrc_data_drained(struct mrrc_conn *conn);
void mrrc_data_quiesce(struct mrrc_conn *conn, int status);
void mrrc_data_cleanup(struct mrrc_conn *conn);
void mrrc_keepalive_work(struct work_struct *work);
void mrrc_done_queue(struct mrrc_ctx *ctx, struct mrrc_done *d);
int mrrc_dp_post(struct mrrc_ctx *ctx, struct mrrc_post *cmd);
int mrrc_dp_poll(struct mrrc_ctx *ctx, struct mrrc_poll *cmd);
int mrrc_dp_cancel(struct mrrc_ctx *ctx, struct mrrc_cancel *cmd);
void mrrc_done_drain(struct mrrc_ctx *ctx);
void mrrc_done_forget(struct mrrc_ctx *ctx, struct mrrc_conn *conn);

#endif /* _MRRC_CONN_H */
