// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - fast registration (FRWR) with pooled MRs.
 *
 * Each cache in MRRC_MODE_FAST gets, on first use, a struct mrrc_frwr in
 * its context's protection domain: pools of pre-allocated IB_MR_TYPE_MEM_REG
 * MRs in size classes up to the device's max_fast_reg_page_list_len, and a
 * self-connected RC queue pair that carries the registration work requests.
 * The MRs live in the context's PD, so one context's keys are useless on
 * another context's queue pairs.
 *
 * Registering a region: pin the pages (FOLL_LONGTERM, charged to
 * RLIMIT_MEMLOCK unless CAP_IPC_LOCK), DMA-map them, take an MR of the
 * smallest class that fits, give it a fresh key byte, ib_map_mr_sg(), set
 * the iova to the user address, post IB_WR_REG_MR and wait for it.
 * Deregistering a batch: one chain of IB_WR_LOCAL_INV, only the last one
 * signalled (as net/sunrpc/xprtrdma does), then unmap, unpin, uncharge and
 * return the MRs to their pools.  For user memory nobody waits for the
 * chain (async_inval): it joins the engine's pending list, and whoever
 * polls the CQ next (a registration, the cache's reaper a tick later,
 * FLUSH, close) gives its pages and MRs back once it has completed; pages
 * are never unpinned before their MR is invalidated.  A cache's regions
 * carry no remote rights, so nothing but the module could use such a key
 * in the meantime, and the module no longer does.  Kernel memory is
 * invalidated synchronously: its owner frees it as soon as we return.
 * A work request that fails moves the QP to
 * the error state: the QP is reset and reconnected and the MRs involved are
 * destroyed instead of being reused, so an error never wedges the pool.
 *
 * A background work item keeps every class the context has used between
 * its low and high watermark and ages idle MRs away.  Regions larger than the biggest class
 * fall back to ordinary registration.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/delay.h>
#include <linux/error-injection.h>
#include <linux/interrupt.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>

#include "mrrc.h"
#include "cache.h"

#define MRRC_FRWR_CLASSES	5
#define MRRC_FRWR_SQ_DEPTH	256
#define MRRC_FRWR_CHAIN		128	/* LOCAL_INVs per posted chain */
#define MRRC_FRWR_LOW		4
#define MRRC_FRWR_HIGH		16
#define MRRC_FRWR_AGE_PERIOD	(10 * HZ)
/*
 * How long a chain may take before it counts as lost, and then how long
 * its flush may take before the queue pair is replaced.
 */
#define MRRC_FRWR_WAIT_S	30
#define MRRC_FRWR_WAIT_NS	((u64)MRRC_FRWR_WAIT_S * NSEC_PER_SEC)

struct mrrc_frwr_class {
	unsigned int pages;		/* MR capacity in pages */
	struct list_head free;		/* struct mrrc_frwr_mr, ->node */
	unsigned int nfree;
	unsigned int total;		/* free + in use */
	unsigned int used_since_age;	/* takes since the last aging tick */
};

/* A pooled MR, and the pages it maps while in use. */
struct mrrc_frwr_mr {
	struct list_head node;
	struct ib_mr *mr;
	unsigned int cls;
	struct page **pages;
	unsigned int npages;
	struct sg_table sgt;
	int nents;
	bool dirty;			/* pinned writable */
};

/**
 * struct mrrc_frwr - one context's FRWR engine
 * @lock: protects the class free lists and counts
 * @cls: the size classes, smallest first
 * @nclasses: classes in use
 * @pd: the context's PD
 * @cq: completion queue of @qp, polled directly by the waiter
 * @qp: self-connected RC QP carrying REG_MR and LOCAL_INV; NULL when it
 *	could not be replaced (registrations then fail with -EIO)
 * @lost_qp: a QP that could not be destroyed, tried again at the end
 * @port: port @qp uses
 * @work: background refill and aging
 * @cache: the cache the engine works for
 * @pending: invalidation chains nobody waits for (struct mrrc_frwr_batch),
 *	in the order they were posted
 * @qp_gen: bumped whenever @qp is reset or replaced
 * @sq_used: work requests posted on @qp and not yet completed
 * @sq_room: most work requests @qp and @cq can hold at once
 * @inv_failed: a pending chain failed on the current @qp, which is in the
 *	error state until the chains behind it have flushed and it is reset
 * @st: pool counters, copied into struct mrrc_cache_stats
 *
 * Everything but the pool lists is used under the cache's mutex.
 */
struct mrrc_frwr {
	spinlock_t lock;		/* see above */
	struct mrrc_frwr_class cls[MRRC_FRWR_CLASSES];
	unsigned int nclasses;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_qp *lost_qp;
	u32 port;
	struct delayed_work work;
	struct mrrc_cache *cache;
	struct list_head pending;
	u32 qp_gen;
	u32 sq_used;
	u32 sq_room;
	bool inv_failed;
	struct mrrc_frwr_stats st;
};

/* One posted chain: the last WR completes @done; any error is recorded. */
struct mrrc_frwr_wait {
	struct ib_cqe cqe_mid;
	struct ib_cqe cqe_last;
	struct completion done;
	int error;			/* first ib_wc_status that was not success */
	bool abandoned;			/* left to a QP that would not die */
};

static void mrrc_frwr_wc_mid(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrrc_frwr_wait *w = container_of(wc->wr_cqe,
						struct mrrc_frwr_wait, cqe_mid);

	if (wc->status != IB_WC_SUCCESS && !w->error)
		w->error = wc->status;
}

static void mrrc_frwr_wc_last(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mrrc_frwr_wait *w = container_of(wc->wr_cqe,
						struct mrrc_frwr_wait, cqe_last);

	if (wc->status != IB_WC_SUCCESS && !w->error)
		w->error = wc->status;
	complete(&w->done);
}

static void mrrc_frwr_wait_init(struct mrrc_frwr_wait *w)
{
	w->cqe_mid.done = mrrc_frwr_wc_mid;
	w->cqe_last.done = mrrc_frwr_wc_last;
	init_completion(&w->done);
	w->error = 0;
	w->abandoned = false;
}

/*
 * Waits live on the heap: if a queue pair that still holds a chain cannot
 * be destroyed, its wait is left to it (leaked) rather than freed while
 * the device may still complete into it.
 */
static struct mrrc_frwr_wait *mrrc_frwr_wait_new(void)
{
	struct mrrc_frwr_wait *w = kmalloc(sizeof(*w), GFP_KERNEL);

	if (w)
		mrrc_frwr_wait_init(w);
	return w;
}

static void mrrc_frwr_wait_free(struct mrrc_frwr_wait *w)
{
	if (!w->abandoned)
		kfree(w);
}

/*
 * An invalidation chain posted without waiting: its MRs still map their
 * pages (pinned, charged and DMA-mapped) until the chain has completed.
 */
struct mrrc_frwr_batch {
	struct mrrc_frwr_wait w;
	struct list_head node;		/* f->pending */
	u32 qp_gen;			/* f->qp_gen when posted */
	u64 posted_ns;
	bool posted;			/* holds n of f->sq_used */
	unsigned int n;
	u64 pages;
	struct mrrc_frwr_mr *fms[];
};

/* ---- the registration queue pair ---------------------------------------- */

static noinline int mrrc_frwr_qp_connect(struct mrrc_frwr *f)
{
	struct ib_device *dev = f->pd->device;
	const struct ib_gid_attr *sgid;
	struct ib_qp_attr attr = {};
	struct net_device *ndev;
	int ret;

	attr.qp_state = IB_QPS_INIT;
	attr.port_num = f->port;
	ret = ib_modify_qp(f->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	/* Connected to itself: its own QPN, GID and MAC. */
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = f->qp->qp_num;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = rdma_ah_find_type(dev, f->port);
	rdma_ah_set_port_num(&attr.ah_attr, f->port);
	if (rdma_protocol_roce(dev, f->port)) {
		union ib_gid gid;

		sgid = rdma_get_gid_attr(dev, f->port, 0);
		if (IS_ERR(sgid))
			return PTR_ERR(sgid);
		gid = sgid->gid;
		rdma_ah_set_grh(&attr.ah_attr, &gid, 0, 0, 64, 0);
		rcu_read_lock();
		ndev = rdma_read_gid_attr_ndev_rcu(sgid);
		if (!IS_ERR(ndev))
			ether_addr_copy(attr.ah_attr.roce.dmac, ndev->dev_addr);
		rcu_read_unlock();
		rdma_put_gid_attr(sgid);
		if (IS_ERR(ndev))
			return PTR_ERR(ndev);
	} else {
		struct ib_port_attr pa;

		ret = ib_query_port(dev, f->port, &pa);
		if (ret)
			return ret;
		rdma_ah_set_dlid(&attr.ah_attr, pa.lid);
	}
	ret = ib_modify_qp(f->qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	return ib_modify_qp(f->qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

ALLOW_ERROR_INJECTION(mrrc_frwr_qp_connect, ERRNO);

/* A work request failed: the QP is in the error state; start it over. */
static int mrrc_frwr_qp_recover(struct mrrc_frwr *f)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	int ret;

	f->st.qp_resets++;
	f->qp_gen++;
	f->sq_used = 0;		/* called with nothing outstanding */
	f->inv_failed = false;
	ret = ib_modify_qp(f->qp, &attr, IB_QP_STATE);
	if (!ret)
		ret = mrrc_frwr_qp_connect(f);
	if (ret)
		pr_warn_ratelimited("cannot recover the registration QP: %d\n",
				    ret);
	return ret;
}

/*
 * Wait for @w by polling the CQ ourselves.  Posting to a kernel QP only
 * schedules rxe's requester: on Linux 6.1 a tasklet on this CPU, which
 * re-enabling bottom halves runs right here; on later kernels a work item
 * on an unbound workqueue, which another CPU usually finishes within a few
 * microseconds.  So: run pending softirqs, poll; spin briefly, polling;
 * then sleep between polls.  Busy-polling with bottom halves held off
 * would stall a tasklet-based device, hence the explicit softirq run.
 * The cache mutex serialises every user of the CQ, as IB_POLL_DIRECT
 * requires.
 */
static bool mrrc_frwr_poll_until(struct mrrc_frwr *f, struct mrrc_frwr_wait *w,
				 u64 give_up)
{
	u64 spin_until = ktime_get_ns() + 50 * NSEC_PER_USEC;

	for (;;) {
		local_bh_disable();
		local_bh_enable();
		ib_process_cq_direct(f->cq, -1);
		if (completion_done(&w->done))
			return true;
		if (ktime_get_ns() > give_up)
			return false;
		if (ktime_get_ns() < spin_until)
			cpu_relax();
		else
			usleep_range(5, 20);
	}
}

/* Fault injection: -ETIMEDOUT makes the next wait count as lost at once. */
static noinline int mrrc_frwr_wait_check(void)
{
	return 0;
}

ALLOW_ERROR_INJECTION(mrrc_frwr_wait_check, ERRNO);

static int mrrc_frwr_qp_open(struct mrrc_frwr *f);

/*
 * Destroy the registration QP, after which nothing posted on it completes
 * any more, reap what the CQ still holds, and make a new one.  Pending
 * chains that had not completed count as failed.  A QP that cannot be
 * destroyed keeps @w (if any) and every pending chain (abandoned, never
 * freed) and is kept aside for mrrc_frwr_destroy(); the engine then has
 * no QP and registrations fail with -EIO.
 */
static void mrrc_frwr_qp_replace(struct mrrc_frwr *f, struct mrrc_frwr_wait *w)
{
	int ret = ib_destroy_qp(f->qp);
	struct mrrc_frwr_batch *b;

	f->st.qp_resets++;
	f->qp_gen++;
	f->sq_used = 0;
	f->inv_failed = false;
	if (ret) {
		pr_warn_ratelimited("cannot destroy the registration QP: %d\n",
				    ret);
		f->lost_qp = f->qp;
		f->qp = NULL;
		if (w)
			w->abandoned = true;
		list_for_each_entry(b, &f->pending, node) {
			if (completion_done(&b->w.done))
				continue;
			b->w.abandoned = true;
			if (!b->w.error)
				b->w.error = IB_WC_WR_FLUSH_ERR;
			complete(&b->w.done);
		}
		return;
	}
	f->qp = NULL;
	ib_process_cq_direct(f->cq, -1);
	list_for_each_entry(b, &f->pending, node) {
		if (completion_done(&b->w.done))
			continue;
		b->w.error = IB_WC_WR_FLUSH_ERR;
		complete(&b->w.done);
	}
	if (mrrc_frwr_qp_open(f))
		pr_warn_ratelimited("cannot replace the registration QP\n");
}

/*
 * Wait for @w.  A chain that has not completed in MRRC_FRWR_WAIT_NS is
 * lost (a device that stopped answering): the queue pair goes to the
 * error state, which flushes it, and is started over; if even the flush
 * does not come, the queue pair is destroyed (after which nothing refers
 * to @w) and a new one made.  Either way nobody waits for ever with the
 * context's locks held.
 *
 * Return: 0, or -ETIMEDOUT when the chain was lost: whatever it did to its
 * MRs is unknown.
 */
static int mrrc_frwr_wait_done(struct mrrc_frwr *f, struct mrrc_frwr_wait *w)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	u64 give_up = ktime_get_ns() + MRRC_FRWR_WAIT_NS;

	if (!mrrc_frwr_wait_check() && mrrc_frwr_poll_until(f, w, give_up))
		return 0;

	f->st.timeouts++;
	pr_warn_ratelimited("a registration work request got no completion in %d s\n",
			    MRRC_FRWR_WAIT_S);
	if (!ib_modify_qp(f->qp, &attr, IB_QP_STATE) &&
	    mrrc_frwr_poll_until(f, w, ktime_get_ns() + MRRC_FRWR_WAIT_NS)) {
		mrrc_frwr_qp_recover(f);
		return -ETIMEDOUT;
	}
	mrrc_frwr_qp_replace(f, w);
	return -ETIMEDOUT;
}

static bool mrrc_frwr_reap(struct mrrc_frwr *f, bool poll);
static void mrrc_frwr_drain(struct mrrc_frwr *f);

/*
 * Wait for the oldest pending chains until @n more work requests fit on
 * the queue pair (and their completions, flushed ones included, on the
 * CQ).  Only pending chains hold room: synchronous posts are waited for.
 */
static void mrrc_frwr_make_room(struct mrrc_frwr *f, unsigned int n)
{
	struct mrrc_frwr_batch *b;

	while (f->sq_used + n > f->sq_room && mrrc_frwr_reap(f, true)) {
		b = list_first_entry(&f->pending, struct mrrc_frwr_batch, node);
		mrrc_frwr_wait_done(f, &b->w);
	}
}

/*
 * Post a chain of @n work requests and wait for its last one.  The caller
 * frees @w with mrrc_frwr_wait_free() afterwards, whatever the result.
 * Pending chains ahead of it complete first and are reaped on the way; if
 * one of them failed, unseen yet, and this chain was flushed behind it,
 * the queue pair is reset and the chain posted once more.
 */
static noinline int mrrc_frwr_post_wait(struct mrrc_frwr *f,
					struct ib_send_wr *first,
					unsigned int n,
					struct mrrc_frwr_wait *w)
{
	bool ahead, retried = false;
	u32 gen;
	int ret;

again:
	/* A pending chain broke the QP: let it flush and start over first. */
	mrrc_frwr_reap(f, true);
	if (f->inv_failed)
		mrrc_frwr_drain(f);
	mrrc_frwr_make_room(f, n);
	if (!f->qp)
		return -EIO;
	ahead = !list_empty(&f->pending);
	gen = f->qp_gen;
	ret = ib_post_send(f->qp, first, NULL);
	if (ret) {
		/*
		 * WRs before the failing one may be posted and still refer
		 * to @w: the QP goes with them.  (Draining instead would wait
		 * for ever on a device that stopped answering.)
		 */
		mrrc_frwr_qp_replace(f, w);
		mrrc_frwr_reap(f, false);
		return ret;
	}
	f->sq_used += n;
	ret = mrrc_frwr_wait_done(f, w);
	if (f->qp_gen == gen)
		f->sq_used -= n;
	if (!ret && w->error) {
		mrrc_frwr_qp_recover(f);
		ret = -EIO;
		if (w->error == IB_WC_WR_FLUSH_ERR && ahead && !retried) {
			retried = true;
			mrrc_frwr_reap(f, false);
			mrrc_frwr_wait_init(w);
			goto again;
		}
	}
	mrrc_frwr_reap(f, false);
	return ret;
}

ALLOW_ERROR_INJECTION(mrrc_frwr_post_wait, ERRNO);

/* ---- the MR pools ------------------------------------------------------- */

static struct mrrc_frwr_mr *mrrc_frwr_mr_alloc(struct mrrc_frwr *f,
					       unsigned int cls)
{
	struct mrrc_frwr_mr *fm;

	fm = kzalloc(sizeof(*fm), GFP_KERNEL_ACCOUNT);
	if (!fm)
		return NULL;
	fm->mr = ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, f->cls[cls].pages);
	if (IS_ERR(fm->mr)) {
		kfree(fm);
		return NULL;
	}
	fm->cls = cls;
	return fm;
}

static void mrrc_frwr_mr_free(struct mrrc_frwr *f, struct mrrc_frwr_mr *fm)
{
	if (fm->mr)
		ib_dereg_mr(fm->mr);
	kfree(fm);
	f->st.mr_frees++;
}

/* Take an MR of the smallest class with room for @pages. */
static struct mrrc_frwr_mr *mrrc_frwr_get(struct mrrc_frwr *f,
					  unsigned int pages)
{
	struct mrrc_frwr_mr *fm = NULL;
	unsigned int c;
	bool refill;

	for (c = 0; c < f->nclasses; c++)
		if (f->cls[c].pages >= pages)
			break;
	if (c == f->nclasses)
		return ERR_PTR(-E2BIG);

	spin_lock(&f->lock);
	fm = list_first_entry_or_null(&f->cls[c].free, struct mrrc_frwr_mr,
				      node);
	if (fm) {
		list_del(&fm->node);
		f->cls[c].nfree--;
		f->st.pool_hits++;
	} else {
		f->cls[c].total++;
		f->st.pool_misses++;
	}
	f->cls[c].used_since_age++;
	refill = f->cls[c].nfree < MRRC_FRWR_LOW;
	spin_unlock(&f->lock);

	if (refill)
		mod_delayed_work(system_wq, &f->work, 0);
	if (fm)
		return fm;

	fm = mrrc_frwr_mr_alloc(f, c);
	if (fm) {
		f->st.mr_allocs++;
		return fm;
	}
	spin_lock(&f->lock);
	f->cls[c].total--;
	spin_unlock(&f->lock);
	return ERR_PTR(-ENOMEM);
}

static void mrrc_frwr_put(struct mrrc_frwr *f, struct mrrc_frwr_mr *fm,
			  bool broken)
{
	struct mrrc_frwr_class *cls = &f->cls[fm->cls];

	if (broken) {
		spin_lock(&f->lock);
		cls->total--;
		spin_unlock(&f->lock);
		mrrc_frwr_mr_free(f, fm);
		return;
	}
	spin_lock(&f->lock);
	list_add(&fm->node, &cls->free);
	cls->nfree++;
	spin_unlock(&f->lock);
}

/* Refill every class to its high watermark; age idle MRs away. */
static void mrrc_frwr_work(struct work_struct *work)
{
	struct mrrc_frwr *f = container_of(to_delayed_work(work),
					   struct mrrc_frwr, work);
	struct mrrc_frwr_mr *fm;
	unsigned int c, want, idle;
	LIST_HEAD(old);

	for (c = 0; c < f->nclasses; c++) {
		/* Only classes the context has used are kept stocked. */
		spin_lock(&f->lock);
		want = f->cls[c].total && f->cls[c].nfree < MRRC_FRWR_LOW ?
		       MRRC_FRWR_HIGH - f->cls[c].nfree : 0;
		f->cls[c].total += want;
		spin_unlock(&f->lock);

		while (want--) {
			fm = mrrc_frwr_mr_alloc(f, c);
			if (!fm) {
				spin_lock(&f->lock);
				f->cls[c].total -= want + 1;
				spin_unlock(&f->lock);
				break;
			}
			f->st.mr_allocs++;
			f->st.refills++;
			mrrc_frwr_put(f, fm, false);
		}

		/* Halve what an idle class keeps above its high watermark. */
		spin_lock(&f->lock);
		idle = !f->cls[c].used_since_age && f->cls[c].nfree > MRRC_FRWR_HIGH ?
		       (f->cls[c].nfree - MRRC_FRWR_HIGH + 1) / 2 : 0;
		f->cls[c].used_since_age = 0;
		while (idle--) {
			fm = list_last_entry(&f->cls[c].free,
					     struct mrrc_frwr_mr, node);
			list_move(&fm->node, &old);
			f->cls[c].nfree--;
			f->cls[c].total--;
			f->st.aged++;
		}
		spin_unlock(&f->lock);
	}
	while ((fm = list_first_entry_or_null(&old, struct mrrc_frwr_mr, node))) {
		list_del(&fm->node);
		mrrc_frwr_mr_free(f, fm);
	}
	schedule_delayed_work(&f->work, MRRC_FRWR_AGE_PERIOD);
}

/* ---- lifetime ----------------------------------------------------------- */

/* Make the registration queue pair and connect it to itself. */
static int mrrc_frwr_qp_open(struct mrrc_frwr *f)
{
	struct ib_qp_init_attr init = {};
	struct ib_qp *qp;
	int ret;

	init.send_cq = f->cq;
	init.recv_cq = f->cq;
	init.cap.max_send_wr = MRRC_FRWR_SQ_DEPTH;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	init.sq_sig_type = IB_SIGNAL_REQ_WR;
	init.qp_type = IB_QPT_RC;
	init.port_num = f->port;
	qp = ib_create_qp(f->pd, &init);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	f->qp = qp;
	ret = mrrc_frwr_qp_connect(f);
	if (ret) {
		ib_destroy_qp(qp);
		f->qp = NULL;
	}
	return ret;
}

static noinline struct mrrc_frwr *mrrc_frwr_create(struct mrrc_cache *c)
{
	struct ib_device *dev = c->pd->device;
	u32 maxp = dev->attrs.max_fast_reg_page_list_len;
	struct mrrc_frwr *f;
	unsigned int p;
	int ret;

	if (!(dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) ||
	    !maxp)
		return ERR_PTR(-EOPNOTSUPP);

	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&f->lock);
	INIT_DELAYED_WORK(&f->work, mrrc_frwr_work);
	f->pd = c->pd;
	f->cache = c;
	INIT_LIST_HEAD(&f->pending);
	f->sq_room = MRRC_FRWR_SQ_DEPTH;
	f->port = rdma_start_port(dev);

	/* Classes 4, 16, 64, 256 pages ... and the device maximum. */
	for (p = 4; p < maxp && f->nclasses < MRRC_FRWR_CLASSES - 1; p *= 4)
		f->cls[f->nclasses++].pages = p;
	f->cls[f->nclasses++].pages = maxp;
	for (p = 0; p < f->nclasses; p++)
		INIT_LIST_HEAD(&f->cls[p].free);

	f->cq = ib_alloc_cq(dev, f, MRRC_FRWR_SQ_DEPTH + 1, 0, IB_POLL_DIRECT);
	if (IS_ERR(f->cq)) {
		ret = PTR_ERR(f->cq);
		goto err_free;
	}
	ret = mrrc_frwr_qp_open(f);
	if (ret)
		goto err_cq;

	mod_delayed_work(system_wq, &f->work, 0);
	return f;

err_cq:
	ib_free_cq(f->cq);
err_free:
	kfree(f);
	return ERR_PTR(ret);
}

ALLOW_ERROR_INJECTION(mrrc_frwr_create, ERRNO);

/**
 * mrrc_frwr_destroy() - free the pools and the queue pair
 * @f: the engine; every MR must be back in its pool
 */
void mrrc_frwr_destroy(struct mrrc_frwr *f)
{
	struct mrrc_frwr_mr *fm, *tmp;
	unsigned int c;

	if (!f)
		return;
	cancel_delayed_work_sync(&f->work);
	WARN_ON(!list_empty(&f->pending));
	for (c = 0; c < f->nclasses; c++) {
		WARN_ON(f->cls[c].nfree != f->cls[c].total);
		list_for_each_entry_safe(fm, tmp, &f->cls[c].free, node)
			mrrc_frwr_mr_free(f, fm);
	}
	if (f->qp)
		ib_destroy_qp(f->qp);
	if (f->lost_qp)
		ib_destroy_qp(f->lost_qp);
	ib_free_cq(f->cq);
	kfree(f);
}

void mrrc_frwr_stats(struct mrrc_frwr *f, struct mrrc_frwr_stats *st)
{
	unsigned int c;

	if (!f) {
		memset(st, 0, sizeof(*st));
		return;
	}
	spin_lock(&f->lock);
	*st = f->st;
	st->pool_mrs = 0;
	st->pool_free = 0;
	for (c = 0; c < f->nclasses; c++) {
		st->pool_mrs += f->cls[c].total;
		st->pool_free += f->cls[c].nfree;
	}
	spin_unlock(&f->lock);
}

/* ---- the registrar ------------------------------------------------------ */

static int mrrc_frwr_charge(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (atomic64_add_return(npages, &mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Why not ib_umem_get()/ib_umem_release(), which do the same pin, charge
 * and DMA mapping for drivers:
 *
 * - On 6.1 ib_umem_get() pins every page with FOLL_WRITE, adding
 *   FOLL_FORCE for read-only access: a read-only registration of a shared
 *   mapping of a file opened read-only fails, and one of private memory
 *   takes a forced write fault on every page, which separates a parent's
 *   pages from a forked child's.  6.12 pins read-only memory without
 *   FOLL_WRITE.  Here a region pins with FOLL_WRITE exactly when it is
 *   writable, on every kernel, which the notifier's keep-or-drop rules
 *   (cache.c) and the mprotect and fork tests rely on.
 * - It refuses with -EPERM when RLIMIT_MEMLOCK is 0 (can_do_mlock()),
 *   where the ABI documents -ENOMEM for every memlock refusal, and its
 *   -ENOMEM for the limit cannot be told from an allocation failure,
 *   which matters to the caller: over the limit it reaps the pending
 *   invalidation chains (whose pages are still charged) and retries.
 * - Kernel memory (the in-kernel API) takes the same sg and map path with
 *   no pinning; ib_umem is for user memory only.
 * - ib_umem merges pages into segments for the best page size; the pools'
 *   MRs are sized in PAGE_SIZE entries, so that gains nothing here.
 */
static noinline int mrrc_frwr_pin(struct mrrc_frwr_mr *fm, unsigned long start,
				  bool write)
{
	unsigned int gup = FOLL_LONGTERM | (write ? FOLL_WRITE : 0);
	unsigned int done = 0;
	int ret;

	/* Sized by the caller's request: failing is an answer, not news. */
	fm->pages = kvmalloc_array(fm->npages, sizeof(*fm->pages),
				   GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!fm->pages)
		return -ENOMEM;
	while (done < fm->npages) {
		ret = pin_user_pages_fast(start + ((unsigned long)done << PAGE_SHIFT),
					  fm->npages - done, gup,
					  fm->pages + done);
		if (ret <= 0) {
			if (done)
				unpin_user_pages(fm->pages, done);
			kvfree(fm->pages);
			fm->pages = NULL;
			return ret ? ret : -EFAULT;
		}
		done += ret;
	}
	fm->dirty = write;
	return 0;
}

ALLOW_ERROR_INJECTION(mrrc_frwr_pin, ERRNO);

static void mrrc_frwr_unpin(struct mrrc_cache *c, struct mrrc_frwr_mr *fm)
{
	unpin_user_pages_dirty_lock(fm->pages, fm->npages, fm->dirty);
	atomic64_sub(fm->npages, &c->mm->pinned_vm);
	kvfree(fm->pages);
	fm->pages = NULL;
}

/*
 * Kernel memory: the caller owns the pages, nothing to pin or charge.  A
 * page array comes as it is; a virtual range is looked up page by page.
 */
static int mrrc_frwr_kernel_pages(struct mrrc_frwr_mr *fm, unsigned long start,
				  struct page **kpages)
{
	unsigned int i;

	/* Sized by the caller's request: failing is an answer, not news. */
	fm->pages = kvmalloc_array(fm->npages, sizeof(*fm->pages),
				   GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!fm->pages)
		return -ENOMEM;
	if (kpages) {
		memcpy(fm->pages, kpages, fm->npages * sizeof(*fm->pages));
		return 0;
	}
	for (i = 0; i < fm->npages; i++) {
		void *va = (void *)(start + ((unsigned long)i << PAGE_SHIFT));

		fm->pages[i] = is_vmalloc_addr(va) ? vmalloc_to_page(va) :
						     virt_to_page(va);
		if (!fm->pages[i]) {
			kvfree(fm->pages);
			fm->pages = NULL;
			return -EFAULT;
		}
	}
	return 0;
}

/* Release what mrrc_frwr_pin() or mrrc_frwr_kernel_pages() took. */
static void mrrc_frwr_release_pages(struct mrrc_cache *c,
				    struct mrrc_frwr_mr *fm)
{
	if (c->mm) {
		mrrc_frwr_unpin(c, fm);
		return;
	}
	kvfree(fm->pages);
	fm->pages = NULL;
}

/*
 * Pin, map and post REG_MR for @fm over the region, and wait; with @prep,
 * leave the REG_MR there for the caller to post instead.
 */
static int mrrc_frwr_map(struct mrrc_cache *c, struct mrrc_region *r,
			 struct mrrc_frwr_mr *fm, struct ib_reg_wr *prep)
{
	struct ib_device *dev = c->frwr->pd->device;
	unsigned long start = r->it.start << PAGE_SHIFT;
	struct mrrc_frwr *f = c->frwr;
	struct mrrc_frwr_wait *w;
	struct ib_reg_wr rw = {};
	u32 old_key;
	int ret, n;

	fm->npages = mrrc_region_pages(r);
	if (!c->mm) {
		ret = mrrc_frwr_kernel_pages(fm, start, r->kpages);
		if (ret)
			return ret;
	} else {
		ret = mrrc_frwr_charge(c->mm, fm->npages);
		if (ret == -ENOMEM && !list_empty(&f->pending)) {
			/* Evicted pages are still charged until reaped. */
			mrrc_frwr_drain(f);
			ret = mrrc_frwr_charge(c->mm, fm->npages);
		}
		if (ret)
			return ret;
		ret = mrrc_frwr_pin(fm, start,
				    r->access & MRRC_ACCESS_LOCAL_WRITE);
		if (ret)
			goto err_uncharge;
	}

	ret = sg_alloc_table_from_pages(&fm->sgt, fm->pages, fm->npages, 0,
					(unsigned long)fm->npages << PAGE_SHIFT,
					GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_unpin;
	fm->nents = ib_dma_map_sg(dev, fm->sgt.sgl, fm->sgt.orig_nents,
				  DMA_BIDIRECTIONAL);
	if (!fm->nents) {
		ret = -EIO;
		goto err_sg;
	}

	/*
	 * A new key byte, never the one this MR had (an old rkey must not
	 * reach the new registration) and not guessable from the last one.
	 */
	old_key = fm->mr->rkey;
	ib_update_fast_reg_key(fm->mr, (u8)(old_key + 1 +
					    get_random_u32_below(255)));
	n = ib_map_mr_sg(fm->mr, fm->sgt.sgl, fm->nents, NULL, PAGE_SIZE);
	if (n != fm->nents) {
		ret = n < 0 ? n : -EINVAL;
		goto err_unmap;
	}
	/* Address the MR by the user's virtual address. */
	fm->mr->iova = start;

	if (prep) {
		memset(prep, 0, sizeof(*prep));
		prep->wr.opcode = IB_WR_REG_MR;
		prep->mr = fm->mr;
		prep->key = fm->mr->rkey;
		prep->access = mrrc_ib_access(r->access);
		return 0;
	}
	w = mrrc_frwr_wait_new();
	if (!w) {
		ret = -ENOMEM;
		goto err_unmap;
	}
	rw.wr.opcode = IB_WR_REG_MR;
	rw.wr.send_flags = IB_SEND_SIGNALED;
	rw.wr.wr_cqe = &w->cqe_last;
	rw.mr = fm->mr;
	rw.key = fm->mr->rkey;
	rw.access = mrrc_ib_access(r->access);
	f->st.reg_wrs++;
	ret = mrrc_frwr_post_wait(f, &rw.wr, 1, w);
	mrrc_frwr_wait_free(w);
	if (ret == -EIO || ret == -ETIMEDOUT) {
		/*
		 * The REG_MR failed on the wire: its rkey may be valid.  The
		 * MR goes before the pages are given back, never after.
		 */
		ib_dereg_mr(fm->mr);
		fm->mr = NULL;
	}
	if (ret)
		goto err_unmap;
	return 0;

err_unmap:
	/* The MR keeps the key it last had registered, not an unused one. */
	if (fm->mr)
		ib_update_fast_reg_key(fm->mr, (u8)old_key);
	ib_dma_unmap_sg(dev, fm->sgt.sgl, fm->sgt.orig_nents, DMA_BIDIRECTIONAL);
err_sg:
	sg_free_table(&fm->sgt);
err_unpin:
	if (!c->mm) {
		kvfree(fm->pages);
		fm->pages = NULL;
		return ret;
	}
	unpin_user_pages(fm->pages, fm->npages);
	kvfree(fm->pages);
	fm->pages = NULL;
err_uncharge:
	atomic64_sub(fm->npages, &c->mm->pinned_vm);
	return ret;
}

static int __mrrc_frwr_reg(struct mrrc_cache *c, struct mrrc_region *r,
			   struct ib_reg_wr *prep)
{
	struct mrrc_frwr_mr *fm;
	int ret;

	if (!c->frwr) {
		struct mrrc_frwr *f = mrrc_frwr_create(c);

		if (IS_ERR(f))
			return PTR_ERR(f);
		c->frwr = f;
	}

	/* MRs whose invalidation has completed go back to the pools first. */
	mrrc_frwr_reap(c->frwr, true);
	fm = mrrc_frwr_get(c->frwr, mrrc_region_pages(r));
	if (IS_ERR(fm)) {
		/* ib_reg_user_mr() cannot register kernel memory. */
		if (PTR_ERR(fm) != -E2BIG || !c->mm)
			return PTR_ERR(fm);
		if (prep)
			return -EOPNOTSUPP;
		/* Larger than any fast MR: register it the ordinary way. */
		c->frwr->st.fallbacks++;
		ret = mrrc_registrar_ordinary.reg(c, r);
		if (ret == -ENOMEM && !list_empty(&c->frwr->pending)) {
			/* Evicted pages are still charged until reaped. */
			mrrc_frwr_drain(c->frwr);
			ret = mrrc_registrar_ordinary.reg(c, r);
		}
		return ret;
	}

	ret = mrrc_frwr_map(c, r, fm, prep);
	if (ret) {
		/* A failed REG_MR has destroyed the MR already. */
		mrrc_frwr_put(c->frwr, fm, !fm->mr);
		return ret;
	}
	r->mr = fm->mr;
	r->priv = fm;
	r->lkey = fm->mr->lkey;
	r->rkey = fm->mr->rkey;
	return 0;
}

static int mrrc_frwr_reg(struct mrrc_cache *c, struct mrrc_region *r)
{
	return __mrrc_frwr_reg(c, r, NULL);
}

/*
 * The data path posts the REG_MR of a user region on its connection's
 * queue pair (same PD) ahead of the operation.  Kernel memory is left to
 * mrrc_frwr_reg(): its callers do not post through the data path.
 */
static int mrrc_frwr_reg_prep(struct mrrc_cache *c, struct mrrc_region *r,
			      struct ib_reg_wr *wr)
{
	if (!c->mm)
		return -EOPNOTSUPP;
	return __mrrc_frwr_reg(c, r, wr);
}

/*
 * Fault injection: true makes the next chain's first LOCAL_INV name a key
 * its MR does not have, so that the device fails the chain on the wire.
 */
static noinline bool mrrc_frwr_inv_fault(void)
{
	return false;
}

ALLOW_ERROR_INJECTION(mrrc_frwr_inv_fault, TRUE);

/*
 * Post @wrs[0..n-1], whose invalidate_rkey is set, as one chain of
 * IB_WR_LOCAL_INV (only the last signalled) and wait for it.  Returns true
 * when the chain broke or could not be posted (no memory to wait with):
 * the keys may still be valid and their MRs must be destroyed.
 */
static bool mrrc_frwr_inv_post(struct mrrc_frwr *f, struct ib_send_wr *wrs,
			       unsigned int n)
{
	struct mrrc_frwr_wait *w = mrrc_frwr_wait_new();
	unsigned int i;
	bool broken;

	if (!w)
		return true;
	for (i = 0; i < n; i++) {
		wrs[i].opcode = IB_WR_LOCAL_INV;
		wrs[i].send_flags = 0;
		wrs[i].wr_cqe = &w->cqe_mid;
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
	}
	wrs[n - 1].wr_cqe = &w->cqe_last;
	wrs[n - 1].send_flags = IB_SEND_SIGNALED;
	if (mrrc_frwr_inv_fault())
		wrs[0].ex.invalidate_rkey ^= 1;
	f->st.inv_wrs += n;
	f->st.inv_chains++;
	broken = mrrc_frwr_post_wait(f, &wrs[0], n, w) != 0;
	mrrc_frwr_wait_free(w);
	return broken;
}

/* Unmap, unpin and uncharge what @fm mapped, and give it back to its pool. */
static void mrrc_frwr_unmap(struct mrrc_cache *c, struct mrrc_frwr_mr *fm,
			    bool broken)
{
	struct mrrc_frwr *f = c->frwr;

	/*
	 * A broken chain may have left this rkey valid: a peer could still
	 * write through it.  Destroy the MR before its pages are unmapped
	 * and unpinned, never after.
	 */
	if (broken) {
		int ret = ib_dereg_mr(fm->mr);

		fm->mr = NULL;
		if (ret) {
			/* The key may still reach the pages: they stay. */
			pr_warn_ratelimited("cannot destroy an MR whose invalidation failed (%d): its pages stay pinned\n",
					    ret);
			mrrc_frwr_put(f, fm, true);
			return;
		}
	}
	ib_dma_unmap_sg(f->pd->device, fm->sgt.sgl, fm->sgt.orig_nents,
			DMA_BIDIRECTIONAL);
	sg_free_table(&fm->sgt);
	mrrc_frwr_release_pages(c, fm);
	mrrc_frwr_put(f, fm, broken);
}

/* Invalidate up to MRRC_FRWR_CHAIN fast regions in one chain, and wait. */
static void mrrc_frwr_inv_chain(struct mrrc_cache *c, struct mrrc_region **rs,
				unsigned int n, struct ib_send_wr *wrs)
{
	unsigned int i;
	bool broken;

	for (i = 0; i < n; i++) {
		struct mrrc_frwr_mr *fm = rs[i]->priv;

		memset(&wrs[i], 0, sizeof(wrs[i]));
		wrs[i].ex.invalidate_rkey = fm->mr->rkey;
	}
	broken = mrrc_frwr_inv_post(c->frwr, wrs, n);

	for (i = 0; i < n; i++) {
		mrrc_frwr_unmap(c, rs[i]->priv, broken);
		rs[i]->priv = NULL;
		rs[i]->mr = NULL;
	}
}

/* Give back what a completed (or failed, or lost) pending chain held. */
static void mrrc_frwr_batch_finish(struct mrrc_frwr *f,
				   struct mrrc_frwr_batch *b)
{
	struct mrrc_cache *c = f->cache;
	bool broken = b->w.error;
	unsigned int i;

	if (broken && b->qp_gen == f->qp_gen)
		f->inv_failed = true;
	if (b->posted && b->qp_gen == f->qp_gen)
		f->sq_used -= b->n;
	for (i = 0; i < b->n; i++)
		mrrc_frwr_unmap(c, b->fms[i], broken);
	c->st.pinned_pages -= b->pages;
	f->st.inv_pending -= b->n;
	f->st.inv_pending_pages -= b->pages;
	list_del(&b->node);
	if (!b->w.abandoned)
		kfree(b);
}

/*
 * Finish every pending chain that has completed, oldest first (chains
 * complete in the order they were posted), after polling the CQ if @poll.
 * A QP that a chain left in the error state is reset once nothing is
 * posted on it any more.
 *
 * Return: whether chains are still pending.
 */
static bool mrrc_frwr_reap(struct mrrc_frwr *f, bool poll)
{
	struct mrrc_frwr_batch *b, *tmp;

	lockdep_assert_held(&f->cache->mutex);
	if (list_empty(&f->pending))
		return false;
	if (poll)
		ib_process_cq_direct(f->cq, -1);
	list_for_each_entry_safe(b, tmp, &f->pending, node) {
		if (!completion_done(&b->w.done))
			break;
		mrrc_frwr_batch_finish(f, b);
	}
	if (f->inv_failed && list_empty(&f->pending) && f->qp)
		mrrc_frwr_qp_recover(f);
	return !list_empty(&f->pending);
}

/*
 * Wait for every pending chain, oldest first, and finish them: a lost one
 * is flushed or its QP replaced by mrrc_frwr_wait_done(), so this ends.
 */
static void mrrc_frwr_drain(struct mrrc_frwr *f)
{
	struct mrrc_frwr_batch *b;

	lockdep_assert_held(&f->cache->mutex);
	/* reap() stops at the oldest chain that has not completed. */
	while (mrrc_frwr_reap(f, true)) {
		b = list_first_entry(&f->pending, struct mrrc_frwr_batch, node);
		mrrc_frwr_wait_done(f, &b->w);
	}
}

/*
 * Post one chain of LOCAL_INV over @rs[0..n-1] without waiting; the MRs
 * and their pages move from the regions to a batch on f->pending.
 *
 * Return: the user pages that stay pinned until the chain is reaped, or 0
 * when it was invalidated synchronously instead (no memory for a batch).
 */
static u64 mrrc_frwr_inv_async(struct mrrc_cache *c, struct mrrc_region **rs,
			       unsigned int n, struct ib_send_wr *wrs)
{
	struct mrrc_frwr *f = c->frwr;
	struct mrrc_frwr_batch *b;
	unsigned int i;
	u64 pages;

	/* The QP must be out of the error state before anything is posted. */
	mrrc_frwr_reap(f, true);
	if (f->inv_failed)
		mrrc_frwr_drain(f);
	mrrc_frwr_make_room(f, n);
	b = kmalloc(struct_size(b, fms, n), GFP_KERNEL_ACCOUNT);
	if (!b) {
		mrrc_frwr_inv_chain(c, rs, n, wrs);
		return 0;
	}
	mrrc_frwr_wait_init(&b->w);
	b->n = n;
	b->pages = 0;
	b->posted = false;
	for (i = 0; i < n; i++) {
		struct mrrc_frwr_mr *fm = rs[i]->priv;

		b->fms[i] = fm;
		b->pages += fm->npages;
		memset(&wrs[i], 0, sizeof(wrs[i]));
		wrs[i].opcode = IB_WR_LOCAL_INV;
		wrs[i].ex.invalidate_rkey = fm->mr->rkey;
		wrs[i].wr_cqe = &b->w.cqe_mid;
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
		rs[i]->priv = NULL;
		rs[i]->mr = NULL;
	}
	wrs[n - 1].wr_cqe = &b->w.cqe_last;
	wrs[n - 1].send_flags = IB_SEND_SIGNALED;
	if (mrrc_frwr_inv_fault())
		wrs[0].ex.invalidate_rkey ^= 1;
	pages = b->pages;
	b->qp_gen = f->qp_gen;
	list_add_tail(&b->node, &f->pending);
	f->st.inv_wrs += n;
	f->st.inv_chains++;
	f->st.inv_async++;
	f->st.inv_pending += n;
	f->st.inv_pending_pages += pages;

	b->posted_ns = ktime_get_ns();
	if (!f->qp) {
		b->w.error = IB_WC_WR_FLUSH_ERR;
		complete(&b->w.done);
	} else if (ib_post_send(f->qp, wrs, NULL)) {
		/* Part of the chain may be posted: the QP goes with it. */
		mrrc_frwr_qp_replace(f, NULL);
	} else {
		b->posted = true;
		f->sq_used += n;
	}
	/* Earlier chains, and on some devices this one, may be done. */
	mrrc_frwr_reap(f, true);
	return pages;
}

static u64 mrrc_frwr_dereg(struct mrrc_cache *c, struct list_head *list,
			   unsigned int n, u64 pages)
{
	struct mrrc_region *rs[MRRC_FRWR_CHAIN], *r;
	bool async = mrrc_async_inval && c->mm;
	struct ib_send_wr *wrs;
	unsigned int k = 0;
	u64 deferred = 0;

	wrs = kcalloc(MRRC_FRWR_CHAIN, sizeof(*wrs), GFP_KERNEL);
	list_for_each_entry(r, list, node) {
		if (!r->priv) {
			/* A fallback region, registered the ordinary way. */
			ib_dereg_mr(r->mr);
			r->mr = NULL;
			continue;
		}
		if (r->reg_failed) {
			/* Its key may or may not be valid: the MR goes first. */
			mrrc_frwr_unmap(c, r->priv, true);
			r->priv = NULL;
			r->mr = NULL;
			continue;
		}
		if (!wrs) {
			/* No memory for a chain: one at a time, on the stack. */
			struct ib_send_wr one;

			mrrc_frwr_inv_chain(c, &r, 1, &one);
			continue;
		}
		rs[k++] = r;
		if (k < MRRC_FRWR_CHAIN)
			continue;
		if (async)
			deferred += mrrc_frwr_inv_async(c, rs, k, wrs);
		else
			mrrc_frwr_inv_chain(c, rs, k, wrs);
		k = 0;
	}
	if (k && async)
		deferred += mrrc_frwr_inv_async(c, rs, k, wrs);
	else if (k)
		mrrc_frwr_inv_chain(c, rs, k, wrs);
	kfree(wrs);
	return deferred;
}

/*
 * The cache's reaper, every tick while chains are pending.  A chain that
 * has waited MRRC_FRWR_WAIT_S is lost: mrrc_frwr_drain() flushes it or
 * replaces the queue pair, so that its pages do not stay pinned until the
 * process happens to call again.
 */
static bool mrrc_frwr_reap_cache(struct mrrc_cache *c)
{
	struct mrrc_frwr *f = c->frwr;
	struct mrrc_frwr_batch *b;

	if (!f || !mrrc_frwr_reap(f, true))
		return false;
	b = list_first_entry(&f->pending, struct mrrc_frwr_batch, node);
	if (ktime_get_ns() - b->posted_ns > MRRC_FRWR_WAIT_NS)
		mrrc_frwr_drain(f);
	return !list_empty(&f->pending);
}

static void mrrc_frwr_quiesce(struct mrrc_cache *c)
{
	if (c->frwr)
		mrrc_frwr_drain(c->frwr);
}

const struct mrrc_registrar mrrc_registrar_fast = {
	.name = "fast",
	.pins = true,
	.reg = mrrc_frwr_reg,
	.reg_prep = mrrc_frwr_reg_prep,
	.dereg = mrrc_frwr_dereg,
	.reap = mrrc_frwr_reap_cache,
	.quiesce = mrrc_frwr_quiesce,
};

/* ---- byte-exact exposures ----------------------------------------------- */

/* Pages of the biggest pooled MR. */
u32 mrrc_frwr_max_pages(struct mrrc_frwr *f)
{
	return f->cls[f->nclasses - 1].pages;
}

/*
 * Map @fm over bytes [@addr, @addr + @len) of fast region @r: the region's
 * DMA entries, clipped to the range, become the MR's page list, and the
 * iova is the user address, so the key reaches exactly those bytes.  The
 * first entry may start and the last may end inside a page; the ones in
 * between are whole pages, as ib_map_mr_sg() requires.
 */
static int mrrc_frwr_map_range(struct mrrc_region *r, struct mrrc_frwr_mr *fm,
			       u64 addr, u32 len)
{
	struct mrrc_frwr_mr *rfm = r->priv;
	u64 off = addr - ((u64)r->it.start << PAGE_SHIFT);
	u64 end = off + len, pos = 0;
	struct scatterlist *sgl, *sg;
	unsigned int i, k = 0;
	int n, ret = 0;

	sgl = kmalloc_array(rfm->nents, sizeof(*sgl), GFP_KERNEL);
	if (!sgl)
		return -ENOMEM;
	sg_init_table(sgl, rfm->nents);
	for_each_sg(rfm->sgt.sgl, sg, rfm->nents, i) {
		u64 s = pos, e = pos + sg_dma_len(sg);

		pos = e;
		if (s >= end)
			break;
		if (e <= off)
			continue;
		sg_dma_address(&sgl[k]) = sg_dma_address(sg) +
					  (max(s, off) - s);
		sg_dma_len(&sgl[k]) = min(e, end) - max(s, off);
		k++;
	}
	n = ib_map_mr_sg(fm->mr, sgl, k, NULL, PAGE_SIZE);
	if (n != k)
		ret = n < 0 ? n : -EINVAL;
	else
		fm->mr->iova = addr;
	kfree(sgl);
	return ret;
}

/**
 * mrrc_frwr_expose() - byte-exact fast MRs over parts of fast regions
 * @c: the cache; c->mutex held
 * @rs: the fast region holding each range
 * @segs: the ranges; each one's rkey is set to its exposure's key
 * @n: ranges, at most MRRC_EXPO_MAX
 * @access: MRRC_ACCESS_* rights of the exposures
 * @fms: receives each range's MR
 * @prep: NULL, or where a single range's REG_MR is left for the caller
 *
 * Each range gets an MR of its own from the pools, a fresh random key byte
 * and one IB_WR_REG_MR; the chain is waited for once.  With @prep (one
 * range), the REG_MR is left there for the caller to post instead.
 *
 * Return: 0; -E2BIG if a range is larger than the biggest pooled MR;
 * -ENOMEM; -EIO if the registration failed on the wire.  Nothing is
 * exposed on error.
 */
int mrrc_frwr_expose(struct mrrc_cache *c, struct mrrc_region **rs,
		     struct mrrc_seg *segs, unsigned int n, u32 access,
		     struct mrrc_frwr_mr **fms, struct ib_reg_wr *prep)
{
	struct ib_reg_wr rw[MRRC_EXPO_MAX] = {};
	struct mrrc_frwr *f = c->frwr;
	struct mrrc_frwr_wait *w;
	u32 old_key[MRRC_EXPO_MAX];
	unsigned int i, got = 0;
	int ret = 0;

	if (WARN_ON_ONCE(!f || n > MRRC_EXPO_MAX || (prep && n != 1)))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		u64 first = segs[i].addr >> PAGE_SHIFT;
		u64 last = (segs[i].addr + segs[i].length - 1) >> PAGE_SHIFT;

		fms[i] = mrrc_frwr_get(f, last - first + 1);
		if (IS_ERR(fms[i])) {
			ret = PTR_ERR(fms[i]);
			break;
		}
		got++;
		old_key[i] = fms[i]->mr->rkey;
		ib_update_fast_reg_key(fms[i]->mr,
				       (u8)(old_key[i] + 1 +
					    get_random_u32_below(255)));
		ret = mrrc_frwr_map_range(rs[i], fms[i], segs[i].addr,
					  segs[i].length);
		if (ret)
			break;
	}
	if (ret) {
		for (i = 0; i < got; i++) {
			ib_update_fast_reg_key(fms[i]->mr, (u8)old_key[i]);
			mrrc_frwr_put(f, fms[i], false);
		}
		return ret;
	}

	if (prep) {
		memset(prep, 0, sizeof(*prep));
		prep->wr.opcode = IB_WR_REG_MR;
		prep->mr = fms[0]->mr;
		prep->key = fms[0]->mr->rkey;
		prep->access = mrrc_ib_access(access);
		segs[0].rkey = fms[0]->mr->rkey;
		return 0;
	}
	w = mrrc_frwr_wait_new();
	if (!w) {
		for (i = 0; i < n; i++) {
			ib_update_fast_reg_key(fms[i]->mr, (u8)old_key[i]);
			mrrc_frwr_put(f, fms[i], false);
		}
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		rw[i].wr.opcode = IB_WR_REG_MR;
		rw[i].wr.wr_cqe = &w->cqe_mid;
		rw[i].wr.next = i + 1 < n ? &rw[i + 1].wr : NULL;
		rw[i].mr = fms[i]->mr;
		rw[i].key = fms[i]->mr->rkey;
		rw[i].access = mrrc_ib_access(access);
		segs[i].rkey = fms[i]->mr->rkey;
	}
	rw[n - 1].wr.wr_cqe = &w->cqe_last;
	rw[n - 1].wr.send_flags = IB_SEND_SIGNALED;
	f->st.reg_wrs += n;
	ret = mrrc_frwr_post_wait(f, &rw[0].wr, n, w);
	mrrc_frwr_wait_free(w);
	if (ret) {
		/* Some of the chain may have registered: destroy them all. */
		for (i = 0; i < n; i++) {
			ib_dereg_mr(fms[i]->mr);
			fms[i]->mr = NULL;
			mrrc_frwr_put(f, fms[i], true);
		}
		return ret;
	}
	return 0;
}

/**
 * mrrc_frwr_unexposed() - return an exposure's MR the peer invalidated
 * @c: the cache; c->mutex held
 * @fm: the MR, from mrrc_frwr_expose(); its key was the one a
 *	completion reported invalidated (IB_WC_WITH_INVALIDATE)
 */
void mrrc_frwr_unexposed(struct mrrc_cache *c, struct mrrc_frwr_mr *fm)
{
	mrrc_frwr_put(c->frwr, fm, false);
}

/**
 * mrrc_frwr_unexpose_broken() - destroy an exposure's MR whose REG_MR failed
 * @c: the cache; c->mutex held
 * @fm: the MR, from mrrc_frwr_expose()
 */
void mrrc_frwr_unexpose_broken(struct mrrc_cache *c, struct mrrc_frwr_mr *fm)
{
	ib_dereg_mr(fm->mr);
	fm->mr = NULL;
	mrrc_frwr_put(c->frwr, fm, true);
}

/**
 * mrrc_frwr_unexpose() - invalidate exposures and return their MRs
 * @c: the cache; c->mutex held
 * @fms: the MRs from mrrc_frwr_expose()
 * @n: how many
 *
 * When it returns, no key of @fms reaches memory: the MRs were invalidated
 * (one chain of IB_WR_LOCAL_INV) or, if that failed, destroyed.
 */
void mrrc_frwr_unexpose(struct mrrc_cache *c, struct mrrc_frwr_mr **fms,
			unsigned int n)
{
	struct ib_send_wr wrs[MRRC_EXPO_MAX] = {};
	struct mrrc_frwr *f = c->frwr;
	unsigned int i;
	bool broken;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		wrs[i].ex.invalidate_rkey = fms[i]->mr->rkey;
	broken = mrrc_frwr_inv_post(f, wrs, n);
	for (i = 0; i < n; i++) {
		if (broken) {
			ib_dereg_mr(fms[i]->mr);
			fms[i]->mr = NULL;
		}
		mrrc_frwr_put(f, fms[i], broken);
	}
}
