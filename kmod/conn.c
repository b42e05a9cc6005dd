// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - connections: the in-kernel RDMA CM side.
 *
 * Active side: MRRC_IOC_CONNECT creates an RDMA CM id and resolves the
 * address; the event handler resolves the route, creates the completion
 * queue, the queue pair and the receive buffers, and connects.  Passive
 * side: MRRC_IOC_LISTEN binds and listens; each connection request becomes
 * a new connection with its queue pair already created, reported to the
 * application, which accepts or rejects it.
 *
 * Every connection and listener is an object of its context, in
 * ctx->conns.  It leaves the table only under ctx->lock (DESTROY, or the
 * context's teardown), and is torn down in this order: flush what it holds,
 * rdma_destroy_id() (after which no CM handler runs), drain and destroy the
 * queue pair, release the receive buffers, free the completion queue.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/nsproxy.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>

#include "mrrc.h"
#include "cache.h"
#include "conn.h"

#define MRRC_RESOLVE_TIMEOUT_MS	2000

/*
 * @conn, a connection request, is no longer pending on its listener:
 * accepted, rejected, closed or destroyed.  Any number of calls.
 */
static void mrrc_conn_unpend(struct mrrc_conn *conn)
{
	struct mrrc_conn *lis = xchg(&conn->lis, NULL);

	if (lis) {
		atomic_dec(&lis->pending);
		mrrc_conn_put(lis);
	}
}

static void mrrc_conn_free(struct kref *ref)
{
	struct mrrc_conn *conn = container_of(ref, struct mrrc_conn, ref);

	WARN_ON(!list_empty(&conn->orphans));
	mrrc_conn_unpend(conn);
	kfree(conn->rx);
	kfree(conn->rx_msgs);
	kfree(conn);
}

void mrrc_conn_put(struct mrrc_conn *conn)
{
	kref_put(&conn->ref, mrrc_conn_free);
}

static void mrrc_conn_err_work(struct work_struct *work)
{
	struct mrrc_conn *conn = container_of(work, struct mrrc_conn,
					      err_work);

	rdma_disconnect(conn->cm_id);
}

/**
 * mrrc_conn_err_schedule() - disconnect from process context, unless the
 *	connection is being destroyed
 * @conn: the connection, with conn->lock held
 *
 * Completion handlers run until the queue pair is drained, which is after
 * mrrc_conn_destroy() has cancelled @conn->err_work: a work queued then
 * would run on a destroyed cm_id and a freed connection.
 */
void mrrc_conn_err_schedule(struct mrrc_conn *conn)
{
	lockdep_assert_held(&conn->lock);
	if (!conn->dying)
		schedule_work(&conn->err_work);
}

static noinline struct mrrc_conn *mrrc_conn_alloc(struct mrrc_ctx *ctx,
						  bool listener)
{
	struct mrrc_conn *conn;

	conn = kzalloc(sizeof(*conn), GFP_KERNEL_ACCOUNT);
	if (!conn)
		return NULL;
	kref_init(&conn->ref);
	conn->ctx = ctx;
	conn->listener = listener;
	spin_lock_init(&conn->lock);
	INIT_LIST_HEAD(&conn->backlog);
	INIT_LIST_HEAD(&conn->ctrlq);
	INIT_LIST_HEAD(&conn->adv);
	INIT_LIST_HEAD(&conn->early);
	INIT_LIST_HEAD(&conn->recvs);
	INIT_LIST_HEAD(&conn->orphans);
	hash_init(conn->crw);
	hash_init(conn->stcrw);
	hash_init(conn->arrived);
	INIT_WORK(&conn->err_work, mrrc_conn_err_work);
	INIT_DELAYED_WORK(&conn->keepalive, mrrc_keepalive_work);
	conn->state = listener ? MRRC_CS_LISTENING : MRRC_CS_CONNECTING;
	return conn;
}

ALLOW_ERROR_INJECTION(mrrc_conn_alloc, NULL);

/*
 * Give @conn a protection domain and a registration cache of its own
 * (MRRC_CONN_ISOLATED), configured like @parent, the context's cache.
 * Process or CM work context; the queue pair is created in it afterwards.
 */
static noinline int mrrc_conn_isolate(struct mrrc_conn *conn,
				      struct mrrc_cache *parent)
{
	struct mrrc_ctx *ctx = conn->ctx;
	struct mrrc_cache *c;
	struct ib_pd *pd;
	int ret;

	/* Each cache has the per-context limits: so many caches at most. */
	if (atomic_inc_return(&ctx->nisolated) >
	    READ_ONCE(mrrc_max_isolated)) {
		ret = -EMFILE;
		goto err_count;
	}
	pd = ib_alloc_pd(conn->ibdev, 0);
	if (IS_ERR(pd)) {
		ret = PTR_ERR(pd);
		goto err_count;
	}
	c = mrrc_cache_create_child(parent, pd);
	if (IS_ERR(c)) {
		ret = PTR_ERR(c);
		goto err_pd;
	}
	conn->own_pd = pd;
	conn->pd = pd;
	conn->cache = c;
	return 0;

err_pd:
	ib_dealloc_pd(pd);
err_count:
	atomic_dec(&ctx->nisolated);
	return ret;
}

ALLOW_ERROR_INJECTION(mrrc_conn_isolate, ERRNO);

/*
 * Release an isolated connection's cache and protection domain: its queue
 * pair is gone, its exports revoked, and what its completions still on
 * ctx->done held has been released (mrrc_done_forget()).
 */
static void mrrc_conn_unisolate(struct mrrc_conn *conn)
{
	if (conn->cache) {
		mrrc_cache_destroy(conn->cache);
		conn->cache = NULL;
	}
	if (conn->own_pd) {
		ib_dealloc_pd(conn->own_pd);
		conn->own_pd = NULL;
		atomic_dec(&conn->ctx->nisolated);
	}
}

/* Each event is reported at most once per connection. */
static void __mrrc_conn_event(struct mrrc_conn *conn, int event, int status,
			      u64 wr_id, u64 tag)
{
	struct mrrc_done *d = &conn->events[event];

	if (d->kind)
		return;
	d->kind = MRRC_DONE_EVENT;
	d->conn = conn;
	d->cqe.wr_id = wr_id;
	d->cqe.conn = conn->id;
	d->cqe.opcode = MRRC_OP_EVENT;
	d->cqe.event = event;
	d->cqe.status = status;
	d->cqe.tag = tag;
	kref_get(&conn->ref);
	mrrc_done_queue(conn->ctx, d);
}

/**
 * mrrc_conn_event() - report a connection event to the application
 * @conn: the connection
 * @event: enum mrrc_event
 * @status: 0 or a negative errno
 *
 * Each event is reported at most once per connection.
 */
void mrrc_conn_event(struct mrrc_conn *conn, int event, int status)
{
	__mrrc_conn_event(conn, event, status, conn->user_data, 0);
}

/*
 * A transport error broke the connection (completion context): flush what
 * it holds, report it, and disconnect from process context.
 */
void mrrc_conn_fail(struct mrrc_conn *conn, int status)
{
	bool was_open;

	spin_lock_bh(&conn->lock);
	/* Draining after the peer's disconnect: the close flushes later. */
	was_open = conn->state != MRRC_CS_CLOSED &&
		   conn->state != MRRC_CS_DRAINING;
	spin_unlock_bh(&conn->lock);
	if (!was_open)
		return;
	mrrc_data_flush(conn, status);
	mrrc_conn_event(conn, MRRC_EVENT_ERROR, status);
	spin_lock_bh(&conn->lock);
	mrrc_conn_err_schedule(conn);
	spin_unlock_bh(&conn->lock);
}

/*
 * Close from a CM handler: flush, move the QP to error and wait.  When the
 * peer disconnected, what it sent before it went is honoured first: its
 * messages already received (a SEND_DONE, a CRW_DONE) complete their
 * operations while the queue pair drains, and only what is still waiting
 * afterwards is flushed.
 */
static void mrrc_conn_close(struct mrrc_conn *conn, int event, int status)
{
	mrrc_conn_unpend(conn);
	if (event == MRRC_EVENT_DISCONNECTED)
		mrrc_data_quiesce(conn, status);
	else
		mrrc_data_flush(conn, status);
	if (conn->qp && !conn->drained) {
		ib_drain_qp(conn->qp);
		conn->drained = true;
		mrrc_data_drained(conn);
	}
	mrrc_data_flush(conn, status);
	mrrc_conn_event(conn, event, status);
}

/* CQ, QP and receive buffers for @id, in the context's PD. */
static noinline int mrrc_conn_create_qp(struct mrrc_conn *conn,
					struct rdma_cm_id *id, struct ib_pd *pd)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	conn->ibdev = id->device;
	/* One more of each for ib_drain_qp()'s own work requests. */
	conn->cq = ib_alloc_cq(id->device, conn,
			       MRRC_SQ_DEPTH + MRRC_RX_DEPTH + 2, 0,
			       IB_POLL_SOFTIRQ);
	if (IS_ERR(conn->cq)) {
		ret = PTR_ERR(conn->cq);
		conn->cq = NULL;
		return ret;
	}

	attr.send_cq = conn->cq;
	attr.recv_cq = conn->cq;
	attr.cap.max_send_wr = MRRC_SQ_DEPTH + 1;
	attr.cap.max_recv_wr = MRRC_RX_DEPTH + 1;
	attr.cap.max_send_sge = MRRC_OP_SGE;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(id, pd, &attr);
	if (ret)
		goto out_cq;
	conn->qp = id->qp;

	ret = mrrc_data_init(conn);
	if (ret)
		goto out_qp;
	return 0;

out_qp:
	rdma_destroy_qp(id);
	conn->qp = NULL;
out_cq:
	ib_free_cq(conn->cq);
	conn->cq = NULL;
	return ret;
}

ALLOW_ERROR_INJECTION(mrrc_conn_create_qp, ERRNO);

static void mrrc_conn_param(struct mrrc_conn *conn,
			    struct rdma_conn_param *param,
			    struct mrrc_cm_pdata *pd, u8 rd_atom)
{
	pd->magic = cpu_to_le32(MRRC_CM_MAGIC);
	pd->version = MRRC_CM_VERSION;
	pd->rx_depth = cpu_to_le32(MRRC_RX_DEPTH);
	memset(param, 0, sizeof(*param));
	param->private_data = pd;
	param->private_data_len = sizeof(*pd);
	param->responder_resources = rd_atom;
	param->initiator_depth = rd_atom;
	/*
	 * Not 7: rxe (and the spec's reading some drivers follow) takes a
	 * retry count of 7 as "retry for ever", and a peer that vanished
	 * would never be reported.  Receives are credited, so RNR cannot
	 * happen in normal operation; 7 there is harmless.
	 */
	param->retry_count = 6;
	param->rnr_retry_count = 7;
}

/*
 * The ACK timeout a slow peer must beat before the QP retries (6 times,
 * see above) and then fails: rdma_cm's default on RoCE is about 0.5 s,
 * which a debug kernel answering a burst of thousands of operations can
 * exceed.  Must be set before rdma_connect() / rdma_accept().
 */
static int mrrc_conn_set_timeout(struct rdma_cm_id *id)
{
	return mrrc_ack_timeout ? rdma_set_ack_timeout(id, mrrc_ack_timeout) : 0;
}

static bool mrrc_pdata_ok(const void *data, u8 len)
{
	const struct mrrc_cm_pdata *pd = data;

	return data && len >= sizeof(*pd) &&
	       le32_to_cpu(pd->magic) == MRRC_CM_MAGIC &&
	       pd->version == MRRC_CM_VERSION &&
	       le32_to_cpu(pd->rx_depth) == MRRC_RX_DEPTH;
}

static u8 mrrc_rd_atom(struct ib_device *dev)
{
	return min_t(u32, dev->attrs.max_qp_rd_atom, 16);
}

/*
 * A connection's id in its context.  Ids run from 1 to max_conns, so a
 * context holds at most that many connections and listeners: -EMFILE
 * beyond (incoming requests are then rejected).  They are handed out
 * cyclically, not lowest first, and DESTROY keeps an id reserved until
 * its connection is gone: a new connection given it later queues
 * nothing before the old one's last completion.  With @conn NULL the id
 * is only reserved (lookups find nothing) until xa_store().
 */
static int mrrc_conn_id_alloc(struct mrrc_ctx *ctx, struct mrrc_conn *conn,
			      u32 *id)
{
	u32 max = READ_ONCE(mrrc_max_conns);
	int ret;

	ret = xa_alloc_cyclic(&ctx->conns, id, conn, XA_LIMIT(1, max),
			      &ctx->conn_next, GFP_KERNEL_ACCOUNT);
	if (ret == -EBUSY)
		return -EMFILE;
	return ret < 0 ? ret : 0;	/* 1: the ids wrapped */
}

static void mrrc_conn_refused(struct mrrc_conn *lis)
{
	spin_lock_bh(&lis->lock);
	lis->st.refused++;
	spin_unlock_bh(&lis->lock);
}

/* A connection request on a listener: make the connection, report it. */
static int mrrc_conn_request(struct mrrc_conn *lis, struct rdma_cm_id *id,
			     struct rdma_cm_event *ev)
{
	struct mrrc_ctx *ctx = lis->ctx;
	struct mrrc_conn *conn;
	u32 cid;
	int ret;

	/*
	 * An error return makes the RDMA CM destroy @id, which rejects the
	 * request.  Nothing is built for a request that is refused: not
	 * beyond the listener's backlog, not beyond max_conns.
	 */
	if (id->device != lis->ibdev ||
	    !mrrc_pdata_ok(ev->param.conn.private_data,
			   ev->param.conn.private_data_len)) {
		mrrc_conn_refused(lis);
		return -EINVAL;
	}
	if (atomic_inc_return(&lis->pending) > lis->max_pending) {
		atomic_dec(&lis->pending);
		mrrc_conn_refused(lis);
		return -EBUSY;
	}

	conn = mrrc_conn_alloc(ctx, false);
	if (!conn) {
		atomic_dec(&lis->pending);
		return -ENOMEM;
	}
	kref_get(&lis->ref);
	conn->lis = lis;
	conn->state = MRRC_CS_REQUESTED;
	conn->pd = lis->pd;
	conn->ibdev = lis->ibdev;
	conn->cm_id = id;
	id->context = conn;
	memcpy(&conn->local, &id->route.addr.src_addr, sizeof(conn->local));
	memcpy(&conn->peer_addr, &id->route.addr.dst_addr,
	       sizeof(conn->peer_addr));

	ret = mrrc_conn_id_alloc(ctx, NULL, &cid);
	if (ret) {
		mrrc_conn_refused(lis);
		goto out_free;
	}
	/*
	 * The context's cache outlives its listeners: they are destroyed,
	 * waiting for this handler, before it is.
	 */
	if (lis->isolated) {
		conn->isolated = true;
		ret = mrrc_conn_isolate(conn, ctx->cache);
		if (ret) {
			mrrc_conn_refused(lis);
			goto out_id;
		}
	}
	ret = mrrc_conn_create_qp(conn, id, conn->pd);
	if (ret)
		goto out_id;
	conn->id = cid;
	/* Into the reserved slot: no allocation, cannot fail. */
	WARN_ON(xa_is_err(xa_store(&ctx->conns, cid, conn, GFP_ATOMIC)));

	/* Reported under the new connection, with the listener's cookie. */
	__mrrc_conn_event(conn, MRRC_EVENT_CONNECT_REQUEST, 0, lis->user_data,
			  lis->id);
	return 0;

out_id:
	xa_erase(&ctx->conns, cid);
out_free:
	mrrc_conn_unisolate(conn);
	mrrc_conn_put(conn);
	return ret;
}

static int mrrc_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct mrrc_conn *conn = id->context;
	struct rdma_conn_param param;
	struct mrrc_cm_pdata pd;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (id->device != conn->ibdev) {
			mrrc_conn_close(conn, MRRC_EVENT_UNREACHABLE, -EXDEV);
			break;
		}
		ret = rdma_resolve_route(id, MRRC_RESOLVE_TIMEOUT_MS);
		if (ret)
			mrrc_conn_close(conn, MRRC_EVENT_UNREACHABLE, ret);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = mrrc_conn_create_qp(conn, id, conn->pd);
		if (!ret)
			ret = mrrc_conn_set_timeout(id);
		if (!ret) {
			mrrc_conn_param(conn, &param, &pd,
					mrrc_rd_atom(id->device));
			ret = rdma_connect_locked(id, &param);
		}
		if (ret)
			mrrc_conn_close(conn, MRRC_EVENT_UNREACHABLE, ret);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		mrrc_conn_close(conn, MRRC_EVENT_UNREACHABLE,
				ev->status < 0 ? ev->status : -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_REJECTED:
		mrrc_conn_close(conn, MRRC_EVENT_REJECTED, -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return mrrc_conn_request(conn, id, ev);
	case RDMA_CM_EVENT_ESTABLISHED:
		/* The active side checks the acceptor's private data. */
		if (conn->active &&
		    !mrrc_pdata_ok(ev->param.conn.private_data,
				   ev->param.conn.private_data_len)) {
			rdma_disconnect(id);
			mrrc_conn_close(conn, MRRC_EVENT_REJECTED, -EPROTO);
			break;
		}
		memcpy(&conn->local, &id->route.addr.src_addr,
		       sizeof(conn->local));
		/* The event first: early messages may complete operations. */
		mrrc_conn_event(conn, MRRC_EVENT_ESTABLISHED, 0);
		mrrc_data_start(conn);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		rdma_disconnect(id);
		mrrc_conn_close(conn, MRRC_EVENT_DISCONNECTED, -ECONNRESET);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * Our ib_client is removed before the RDMA CM's and destroys
		 * every id first, so this is not expected; be safe anyway.
		 */
		mrrc_conn_close(conn, MRRC_EVENT_DEVICE_REMOVAL, -ENODEV);
		break;
	default:
		break;
	}
	return 0;
}

/* ---- commands ----------------------------------------------------------- */

static int mrrc_addr_to_sockaddr(const struct mrrc_addr *a,
				 struct sockaddr_storage *ss, bool optional)
{
	static const u8 zero[16];

	memset(ss, 0, sizeof(*ss));
	switch (a->family) {
	case 0:
		if (!optional || a->port || a->scope_id ||
		    memcmp(a->addr, zero, 16))
			return -EINVAL;
		return 0;
	case AF_INET: {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (a->scope_id || memcmp(a->addr + 4, zero, 12))
			return -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(a->port);
		memcpy(&sin->sin_addr, a->addr, 4);
		return 0;
	}
	case AF_INET6: {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(a->port);
		sin6->sin6_scope_id = a->scope_id;
		memcpy(&sin6->sin6_addr, a->addr, 16);
		return 0;
	}
	default:
		return -EAFNOSUPPORT;
	}
}

static void mrrc_sockaddr_to_addr(const struct sockaddr_storage *ss,
				  struct mrrc_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ss;

		a->family = AF_INET;
		a->port = ntohs(sin->sin_port);
		memcpy(a->addr, &sin->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)ss;

		a->family = AF_INET6;
		a->port = ntohs(sin6->sin6_port);
		a->scope_id = sin6->sin6_scope_id;
		memcpy(a->addr, &sin6->sin6_addr, 16);
	}
}

/* The context's device and PD, with ctx->lock held. */
static int mrrc_ctx_ready(struct mrrc_ctx *ctx)
{
	lockdep_assert_held(&ctx->lock);
	if (ctx->dead)
		return -ENODEV;
	if (!ctx->dev)
		return -ENXIO;
	if (ctx->cache && mrrc_cache_mode(ctx->cache) == MRRC_MODE_MODEL)
		return -EOPNOTSUPP;
	return 0;
}

int mrrc_conn_listen(struct mrrc_ctx *ctx, struct mrrc_listen *cmd)
{
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;
	struct mrrc_conn *conn;
	int ret;

	if (cmd->flags & ~MRRC_CONN_ISOLATED)
		return -EOPNOTSUPP;
	ret = mrrc_addr_to_sockaddr(&cmd->addr, &ss, false);
	if (ret)
		return ret;

	mutex_lock(&ctx->lock);
	ret = mrrc_ctx_ready(ctx);
	if (ret)
		goto out_unlock;
	conn = mrrc_conn_alloc(ctx, true);
	if (!conn) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	conn->user_data = cmd->user_data;
	conn->ibdev = ctx->dev->ibdev;
	conn->pd = ctx->pd;
	conn->isolated = cmd->flags & MRRC_CONN_ISOLATED;

	id = rdma_create_id(current->nsproxy->net_ns, mrrc_cm_handler, conn,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		ret = PTR_ERR(id);
		goto out_free;
	}
	conn->cm_id = id;
	ret = rdma_bind_addr(id, (struct sockaddr *)&ss);
	if (ret)
		goto out_id;
	/* A listener bound to another device's address is refused. */
	if (id->device && id->device != conn->ibdev) {
		ret = -EXDEV;
		goto out_id;
	}
	conn->max_pending = cmd->backlog ? min_t(u32, cmd->backlog,
						 MRRC_BACKLOG_MAX) :
					   MRRC_BACKLOG_DEFAULT;
	ret = rdma_listen(id, conn->max_pending);
	if (ret)
		goto out_id;
	memcpy(&conn->local, &id->route.addr.src_addr, sizeof(conn->local));
	ret = mrrc_conn_id_alloc(ctx, conn, &conn->id);
	if (ret)
		goto out_id;
	cmd->id = conn->id;
	mutex_unlock(&ctx->lock);
	return 0;

out_id:
	rdma_destroy_id(id);
out_free:
	mrrc_conn_put(conn);
out_unlock:
	mutex_unlock(&ctx->lock);
	return ret;
}

int mrrc_conn_connect(struct mrrc_ctx *ctx, struct mrrc_connect *cmd)
{
	struct sockaddr_storage dst, src;
	struct rdma_cm_id *id;
	struct mrrc_conn *conn;
	u32 timeout;
	int ret;

	if (cmd->flags & ~MRRC_CONN_ISOLATED)
		return -EOPNOTSUPP;
	ret = mrrc_addr_to_sockaddr(&cmd->dst, &dst, false);
	if (!ret)
		ret = mrrc_addr_to_sockaddr(&cmd->src, &src, true);
	if (ret)
		return ret;
	timeout = cmd->timeout_ms ?: MRRC_RESOLVE_TIMEOUT_MS;

	mutex_lock(&ctx->lock);
	ret = mrrc_ctx_ready(ctx);
	if (ret)
		goto out_unlock;
	conn = mrrc_conn_alloc(ctx, false);
	if (!conn) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	conn->user_data = cmd->user_data;
	conn->ibdev = ctx->dev->ibdev;
	conn->pd = ctx->pd;
	conn->active = true;
	memcpy(&conn->peer_addr, &dst, sizeof(dst));
	if (cmd->flags & MRRC_CONN_ISOLATED) {
		conn->isolated = true;
		ret = mrrc_conn_isolate(conn, ctx->cache);
		if (ret)
			goto out_free;
	}

	id = rdma_create_id(current->nsproxy->net_ns, mrrc_cm_handler, conn,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		ret = PTR_ERR(id);
		goto out_free;
	}
	conn->cm_id = id;
	/* Insert first: events may be reported as soon as we resolve. */
	ret = mrrc_conn_id_alloc(ctx, conn, &conn->id);
	if (ret)
		goto out_id;
	ret = rdma_resolve_addr(id, cmd->src.family ?
				(struct sockaddr *)&src : NULL,
				(struct sockaddr *)&dst, timeout);
	if (ret)
		goto out_erase;
	cmd->id = conn->id;
	mutex_unlock(&ctx->lock);
	return 0;

out_erase:
	xa_erase(&ctx->conns, conn->id);
out_id:
	rdma_destroy_id(id);
out_free:
	mrrc_conn_unisolate(conn);
	mrrc_conn_put(conn);
out_unlock:
	mutex_unlock(&ctx->lock);
	return ret;
}

/*
 * Tear a connection or listener down; it is already out of ctx->conns.
 * Its completions still queued on ctx->done keep the structure alive.
 */
static void mrrc_conn_destroy(struct mrrc_conn *conn)
{
	if (!conn->listener)
		mrrc_export_conn_gone(conn->ctx, conn->id);
	mrrc_conn_unpend(conn);
	mrrc_data_flush(conn, -ECONNRESET);
	cancel_delayed_work_sync(&conn->keepalive);
	spin_lock_bh(&conn->lock);
	conn->dying = true;
	spin_unlock_bh(&conn->lock);
	cancel_work_sync(&conn->err_work);
	if (conn->cm_id) {
		rdma_destroy_id(conn->cm_id);
		conn->cm_id = NULL;
	}
	if (conn->qp) {
		if (!conn->drained) {
			ib_drain_qp(conn->qp);
			conn->drained = true;
			mrrc_data_drained(conn);
		}
		ib_destroy_qp(conn->qp);
		conn->qp = NULL;
		mrrc_data_cleanup(conn);
	}
	if (conn->cq) {
		ib_free_cq(conn->cq);
		conn->cq = NULL;
	}
	if (conn->cache) {
		/* Its completions stay queued, holding nothing of the cache. */
		mrrc_done_forget(conn->ctx, conn);
		mrrc_conn_unisolate(conn);
	}
	mrrc_conn_put(conn);
}

/**
 * mrrc_conns_destroy() - destroy every connection and listener of a context
 * @ctx: the context, with ctx->lock held
 *
 * Listeners go first, so no connection request adds a connection while
 * the others are torn down.
 */
void mrrc_conns_destroy(struct mrrc_ctx *ctx)
{
	struct mrrc_conn *conn;
	unsigned long id;
	int pass;

	lockdep_assert_held(&ctx->lock);
	for (pass = 0; pass < 2; pass++) {
		xa_for_each(&ctx->conns, id, conn) {
			if (pass == 0 && !conn->listener)
				continue;
			xa_erase(&ctx->conns, id);
			mrrc_conn_destroy(conn);
		}
	}
}

/* With ctx->lock held: the connection @id, or NULL. */
struct mrrc_conn *mrrc_conn_lookup(struct mrrc_ctx *ctx, u32 id)
{
	lockdep_assert_held(&ctx->lock);
	return xa_load(&ctx->conns, id);
}

/**
 * mrrc_conns_add_stats() - add the caches of isolated connections
 * @ctx: the context, ctx->lock held
 * @st: the context's cache's statistics, summed into
 */
void mrrc_conns_add_stats(struct mrrc_ctx *ctx, struct mrrc_cache_stats *st)
{
	struct mrrc_conn *conn;
	unsigned long id;

	lockdep_assert_held(&ctx->lock);
	xa_for_each(&ctx->conns, id, conn)
		if (conn->cache)
			mrrc_cache_add_stats(conn->cache, st);
}

/**
 * mrrc_conns_flush() - flush the caches of isolated connections
 * @ctx: the context, ctx->lock held
 *
 * Return: the regions dropped.
 */
u32 mrrc_conns_flush(struct mrrc_ctx *ctx)
{
	struct mrrc_conn *conn;
	unsigned long id;
	u32 n = 0;

	lockdep_assert_held(&ctx->lock);
	xa_for_each(&ctx->conns, id, conn)
		if (conn->cache)
			n += mrrc_cache_flush(conn->cache);
	return n;
}

int mrrc_conn_cmd(struct mrrc_ctx *ctx, unsigned int nr,
		  struct mrrc_conn_cmd *cmd)
{
	struct rdma_conn_param param;
	struct mrrc_cm_pdata pd;
	struct mrrc_conn *conn;
	int ret = 0;

	if (cmd->flags)
		return -EOPNOTSUPP;
	if (cmd->__reserved || (nr != MRRC_CMD_ACCEPT && cmd->user_data))
		return -EINVAL;

	mutex_lock(&ctx->lock);
	conn = mrrc_conn_lookup(ctx, cmd->id);
	if (!conn) {
		ret = ctx->dead ? -ENODEV : -ENOENT;
		goto out;
	}
	if (nr == MRRC_CMD_DESTROY) {
		u32 id = conn->id;

		/*
		 * The id stays reserved (lookups find nothing) until the
		 * connection is gone: all it queues on ctx->done, flushes
		 * and events, is then ahead of anything of a connection
		 * that is given the id next.
		 */
		WARN_ON(xa_is_err(xa_store(&ctx->conns, id, NULL, GFP_KERNEL)));
		mrrc_conn_destroy(conn);
		xa_erase(&ctx->conns, id);
		goto out;
	}
	if (conn->listener) {
		ret = -EINVAL;
		goto out;
	}

	switch (nr) {
	case MRRC_CMD_ACCEPT:
	case MRRC_CMD_REJECT:
		rdma_lock_handler(conn->cm_id);
		if (conn->state != MRRC_CS_REQUESTED) {
			ret = -EINVAL;
		} else if (nr == MRRC_CMD_ACCEPT) {
			conn->user_data = cmd->user_data;
			mrrc_conn_param(conn, &param, &pd,
					mrrc_rd_atom(conn->ibdev));
			ret = mrrc_conn_set_timeout(conn->cm_id);
			if (!ret)
				ret = rdma_accept(conn->cm_id, &param);
			if (!ret) {
				/* A receive error may have closed it since. */
				spin_lock_bh(&conn->lock);
				if (conn->state == MRRC_CS_REQUESTED)
					conn->state = MRRC_CS_CONNECTING;
				spin_unlock_bh(&conn->lock);
			} else {
				/*
				 * The ioctl returns why; operations held
				 * complete as for any refused connection.
				 */
				mrrc_data_flush(conn, -ECONNABORTED);
			}
		} else {
			ret = rdma_reject(conn->cm_id, NULL, 0,
					  IB_CM_REJ_CONSUMER_DEFINED);
			mrrc_data_flush(conn, -ECONNREFUSED);
		}
		rdma_unlock_handler(conn->cm_id);
		/* Answered, or failed trying: no longer pending either way. */
		mrrc_conn_unpend(conn);
		break;
	case MRRC_CMD_DISCONNECT:
		if (conn->state != MRRC_CS_ESTABLISHED &&
		    conn->state != MRRC_CS_CONNECTING) {
			ret = -ENOTCONN;
			break;
		}
		mrrc_data_flush(conn, -ECONNRESET);
		/* DISCONNECTED follows, from the peer's reply or a timeout. */
		rdma_disconnect(conn->cm_id);
		break;
	}
out:
	mutex_unlock(&ctx->lock);
	return ret;
}

/* A connection's CONN_QUERY answer (ctx->lock held). */
static void mrrc_conn_fill(struct mrrc_conn *conn, struct mrrc_conn_query *q)
{
	q->id = conn->id;
	mrrc_sockaddr_to_addr(&conn->local, &q->local);
	mrrc_sockaddr_to_addr(&conn->peer_addr, &q->peer);
	spin_lock_bh(&conn->lock);
	q->state = conn->state == MRRC_CS_DRAINING ? MRRC_CS_CLOSED :
						      conn->state;
	q->ops = conn->nops;
	q->credits = max(conn->credits, 0);
	q->posted = conn->st.posted;
	q->crw_matched = conn->st.crw_matched;
	q->ctrl_sent = conn->st.ctrl_sent;
	q->ctrl_recv = conn->st.ctrl_recv;
	q->keepalives = conn->st.keepalives;
	q->withdrawn = conn->st.withdrawn;
	q->withdraw_lost = conn->st.withdraw_lost;
	q->refused = conn->st.refused;
	q->remote_inv = conn->st.remote_inv;
	q->conn_flags = conn->isolated ? MRRC_CONN_ISOLATED : 0;
	spin_unlock_bh(&conn->lock);
}

int mrrc_conn_info(struct mrrc_ctx *ctx, struct mrrc_conn_query *q)
{
	struct mrrc_conn *conn;
	int ret = 0;

	if (q->flags)
		return -EOPNOTSUPP;
	mutex_lock(&ctx->lock);
	conn = mrrc_conn_lookup(ctx, q->id);
	if (conn)
		mrrc_conn_fill(conn, q);
	else
		ret = ctx->dead ? -ENODEV : -ENOENT;
	mutex_unlock(&ctx->lock);
	return ret;
}

/**
 * mrrc_conn_list() - CONN_QUERY answers of a context's connections
 * @ctx: the context (a reference held; ctx->lock not held)
 * @start: the first connection id to look at
 * @q: receives up to @max answers, in id order
 * @max: room in @q
 * @next: set past the id of the last answer
 * @total: if not NULL, set to the number of connections and listeners
 *
 * A chunk at a time, so that neither the work under ctx->lock nor the
 * buffer depends on the caller's count.
 *
 * Return: the number of answers in @q, or -EINTR on a fatal signal.
 */
int mrrc_conn_list(struct mrrc_ctx *ctx, unsigned long start,
		   struct mrrc_conn_query *q, unsigned int max,
		   unsigned long *next, unsigned int *total)
{
	struct mrrc_conn *conn;
	unsigned int n = 0;
	unsigned long id;

	if (mutex_lock_killable(&ctx->lock))
		return -EINTR;
	xa_for_each_start(&ctx->conns, id, conn, start) {
		if (n == max)
			break;
		q[n].size = sizeof(*q);
		mrrc_conn_fill(conn, &q[n]);
		n++;
		*next = id + 1;
	}
	if (total) {
		*total = 0;
		xa_for_each(&ctx->conns, id, conn)
			(*total)++;
	}
	mutex_unlock(&ctx->lock);
	return n;
}
