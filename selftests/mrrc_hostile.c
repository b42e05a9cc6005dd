// SPDX-License-Identifier: GPL-2.0-only
/*
 * A hostile peer across two machines (tools/vm/pair.sh): the module in VM
 * b against a peer in VM a that does not run it.
 *
 *   mrrc_hostile serve    in VM a: the agent, plain verbs and librdmacm
 *   mrrc_hostile          in VM b: the kselftest tests, through the module
 *
 * The agent speaks the module's wire protocol itself (struct wmsg below
 * mirrors struct mrrc_msg of kmod/conn.h) and lies in it: it writes,
 * reads and adds one byte before, after and inside what is advertised to
 * it and after the operation completed, sends forged, replayed and stale
 * control messages, inflated credits and lengths, unknown types, broken
 * private data and more connection requests than a listener takes.  The
 * tests check by pattern that no byte outside an advertised range ever
 * changes, that every attack is refused by the device, that each
 * operation completes exactly once with what the peer says clamped, and
 * that the module goes on serving an honest peer (the same agent, behaving)
 * afterwards.
 *
 * A control connection (mrrc_pair.h) sequences each scenario: the test
 * says which step comes next (CTL_GO), the agent does it and reports
 * (CTL_OK: the device's verdict on its attack as -errno, or why it failed).
 */
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "mrrc_test.h"

/* Two emulated machines. */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define CTL_PORT	18901
#define RDMA_PORT	19500
#define TMO_MS		30000
#define IDLE_S		300

#include "mrrc_dp_test.h"
#include "mrrc_pair.h"

/* ---- the module's wire protocol, as a peer sees it -------------------- */

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the wire is little endian; this test assumes a little-endian host"
#endif

#define W_MAGIC		0x4d525243
#define W_VERSION	3
#define W_RX_DEPTH	128
#define W_SEGS		14

enum {
	W_CREDIT = 1, W_RECV_ADV, W_SEND_DONE, W_STCRW, W_CRW_DONE,
	W_WITHDRAW, W_WITHDRAWN,
};

struct wseg {
	uint64_t addr;
	uint32_t len;
	uint32_t rkey;
};

struct wmsg {
	uint8_t type;
	uint8_t nsegs;
	uint16_t credits;
	uint32_t len;
	uint32_t status;	/* RECV_ADV, STCRW: flags (MRRC_ADV_RINV) */
	uint32_t seq;
	uint64_t tag;
	struct wseg seg[W_SEGS];
};

struct wpdata {
	uint32_t magic;
	uint8_t version;
	uint8_t reserved[3];
	uint32_t rx_depth;
};

_Static_assert(sizeof(struct wmsg) == 248, "struct mrrc_msg is 248 bytes");
_Static_assert(sizeof(struct wpdata) == 12, "struct mrrc_cm_pdata");

#define WHDR		offsetof(struct wmsg, seg)

/* The test's ranges: 50 bytes across a page boundary in 3 pages. */
#define BLEN		(3 * 4096)
#define OFF		(4096 - 20)
#define LEN		50
#define FILLER		0x11

/* Attacks on one advertised range (CTL_GO a = attack, b = opcode). */
enum attack {
	ATK_HONEST,	/* write the range, then the *_DONE message */
	ATK_BEFORE,	/* write the byte before it */
	ATK_AFTER,	/* write the byte after it */
	ATK_READ,	/* read it (it is exposed for writing only) */
	ATK_ATOMIC,	/* fetch-and-add on it */
	ATK_LATE,	/* honest, then write it again once polled */
	ATK_INV_LATE,	/* ATK_LATE, the *_DONE as SEND_WITH_INV if asked */
	ATK_NR,
	ATK_END = 100,	/* no more connections */
};

static const char *const atk_name[] = {
	"honest", "byte before", "byte after", "read", "atomic", "late write",
	"late write after remote invalidation",
};

#define W_ADV_RINV	1	/* wmsg.status of RECV_ADV, STCRW: MRRC_ADV_RINV */

/* Steps of the forged-message scenario (CTL_GO a = step). */
enum {
	FG_FORGE = 1,	/* forged and stale messages about STCRW tag 5 */
	FG_RECV,	/* honest write into a RECV, inflated SEND_DONE */
	FG_CRW_DONE,	/* honest CRW into tag 5, CRW_DONE inflated, replayed */
	FG_STATUS,	/* CRW_DONE for tag 6 with a status no errno has */
	FG_ADV,		/* advertise a RECV for the test's honest SEND */
	FG_CHECK_SEND,	/* check what the SEND wrote */
};

/* ---- the agent: one raw verbs connection ------------------------------ */

#define MEM_LEN		65536
#define TX_SLOTS	16

struct hbuf {
	struct wmsg rx[W_RX_DEPTH];
	struct wmsg tx[TX_SLOTS];
	uint8_t mem[MEM_LEN];
};

struct hq {
	struct rdma_event_channel *ch;	/* hq_connect()'s own */
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct hbuf *b;
	unsigned int owed;		/* buffers reposted, not yet told */
	unsigned int txi;
	struct wmsg inq[2 * W_RX_DEPTH];	/* received, not yet taken */
	unsigned int in_head, in_tail;
	char why[96];
};

#define HFAIL(q, ...) ({ snprintf((q)->why, sizeof((q)->why), __VA_ARGS__); -1; })

static int wc_errno(enum ibv_wc_status st)
{
	switch (st) {
	case IBV_WC_SUCCESS:
		return 0;
	case IBV_WC_REM_ACCESS_ERR:
		return -EACCES;
	case IBV_WC_REM_INV_REQ_ERR:
		return -EINVAL;
	case IBV_WC_RETRY_EXC_ERR:
		return -ETIMEDOUT;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return -ENOBUFS;
	case IBV_WC_WR_FLUSH_ERR:
		return -ECANCELED;
	default:
		return -EIO;
	}
}

/* The next RDMA CM event on @ch within @ms: its type, or -errno. */
static int cm_next(struct rdma_event_channel *ch, int ms,
		   struct rdma_cm_id **id, struct wpdata *pd, uint8_t *pdlen)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	if (poll(&pfd, 1, ms) != 1)
		return -ETIMEDOUT;
	if (rdma_get_cm_event(ch, &ev))
		return -errno;
	type = ev->event;
	if (id)
		*id = ev->id;
	if (pd) {
		memset(pd, 0, sizeof(*pd));
		*pdlen = ev->param.conn.private_data_len;
		if (ev->param.conn.private_data)
			memcpy(pd, ev->param.conn.private_data,
			       *pdlen < sizeof(*pd) ? *pdlen : sizeof(*pd));
	}
	rdma_ack_cm_event(ev);
	return type;
}

static int hq_post_rx(struct hq *q, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&q->b->rx[i],
		.length = sizeof(struct wmsg),
		.lkey = q->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(q->id->qp, &wr, &bad) ? -EIO : 0;
}

/* PD, CQ, memory and an RC QP on @id, @nrx receive buffers posted. */
static int hq_setup(struct hq *q, struct rdma_cm_id *id, unsigned int nrx)
{
	struct ibv_qp_init_attr qa = {
		.cap = {
			.max_send_wr = 64, .max_recv_wr = W_RX_DEPTH,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	unsigned int i;

	q->id = id;
	q->pd = ibv_alloc_pd(id->verbs);
	q->cq = q->pd ? ibv_create_cq(id->verbs, 256, NULL, NULL, 0) : NULL;
	q->b = mmap(NULL, sizeof(*q->b), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!q->cq || q->b == MAP_FAILED)
		return HFAIL(q, "pd, cq or memory: %s", strerror(errno));
	memset(q->b, 0, sizeof(*q->b));
	q->mr = ibv_reg_mr(q->pd, q->b, sizeof(*q->b),
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	if (!q->mr)
		return HFAIL(q, "ibv_reg_mr: %s", strerror(errno));
	qa.send_cq = q->cq;
	qa.recv_cq = q->cq;
	if (rdma_create_qp(id, q->pd, &qa))
		return HFAIL(q, "rdma_create_qp: %s", strerror(errno));
	for (i = 0; i < nrx; i++)
		if (hq_post_rx(q, i))
			return HFAIL(q, "ibv_post_recv failed");
	return 0;
}

static void hq_close(struct hq *q)
{
	if (q->id) {
		rdma_disconnect(q->id);
		if (q->id->qp)
			rdma_destroy_qp(q->id);
		rdma_destroy_id(q->id);
	}
	if (q->mr)
		ibv_dereg_mr(q->mr);
	if (q->cq)
		ibv_destroy_cq(q->cq);
	if (q->pd)
		ibv_dealloc_pd(q->pd);
	if (q->ch)
		rdma_destroy_event_channel(q->ch);
	if (q->b && q->b != MAP_FAILED)
		munmap(q->b, sizeof(*q->b));
	memset(q, 0, sizeof(*q));
}

static struct rdma_conn_param conn_param(struct wpdata *pd, uint8_t rnr)
{
	struct rdma_conn_param p = {
		.private_data = pd,
		.private_data_len = sizeof(*pd),
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 6,
		.rnr_retry_count = rnr,
	};

	pd->magic = W_MAGIC;
	pd->version = W_VERSION;
	pd->rx_depth = W_RX_DEPTH;
	return p;
}

/*
 * Take the next connection request on listener channel @ch, accept it
 * with @nrx receive buffers posted (the private data says W_RX_DEPTH
 * either way); @rnr is how often our sends retry when the module has no
 * buffer (7: for ever, as the module's own peers do).
 */
static int hq_accept_rx(struct hq *q, struct rdma_event_channel *ch,
			uint8_t rnr, unsigned int nrx)
{
	struct rdma_conn_param p;
	struct rdma_cm_id *id;
	struct wpdata pd;
	uint8_t pdlen;
	int r;

	memset(q, 0, sizeof(*q));
	r = cm_next(ch, TMO_MS, &id, &pd, &pdlen);
	if (r != RDMA_CM_EVENT_CONNECT_REQUEST)
		return HFAIL(q, "no connection request (%d)", r);
	if (pdlen < sizeof(pd) || pd.magic != W_MAGIC ||
	    pd.version != W_VERSION || pd.rx_depth != W_RX_DEPTH) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return HFAIL(q, "the module's private data is not the wire's");
	}
	if (hq_setup(q, id, nrx))
		return -1;
	p = conn_param(&pd, rnr);
	if (rdma_accept(id, &p))
		return HFAIL(q, "rdma_accept: %s", strerror(errno));
	r = cm_next(ch, TMO_MS, NULL, NULL, NULL);
	if (r != RDMA_CM_EVENT_ESTABLISHED)
		return HFAIL(q, "not established (%d)", r);
	return 0;
}

static int hq_accept(struct hq *q, struct rdma_event_channel *ch,
		     uint8_t rnr)
{
	return hq_accept_rx(q, ch, rnr, W_RX_DEPTH);
}

/*
 * Wait for the completion of send @wr_id, queueing messages that arrive
 * meanwhile: its status as -errno.  wr_id 0 waits for a message instead.
 */
static int hq_reap(struct hq *q, uint64_t wr_id)
{
	int64_t end = now_ms() + TMO_MS;
	struct ibv_wc wc;
	int n;

	for (;;) {
		n = ibv_poll_cq(q->cq, 1, &wc);
		if (n < 0)
			return -EIO;
		if (!n) {
			if (!wr_id && q->in_head != q->in_tail)
				return 0;
			if (now_ms() > end)
				return -ETIMEDOUT;
			usleep(500);
			continue;
		}
		if (wc.wr_id < W_RX_DEPTH) {	/* a receive buffer */
			/* Flushed by the QP's error: the send has the cause. */
			if (wr_id && wc.status == IBV_WC_WR_FLUSH_ERR)
				continue;
			if (wc.status != IBV_WC_SUCCESS)
				return wc_errno(wc.status);
			q->inq[q->in_tail++ % ARRAY_SIZE(q->inq)] =
				q->b->rx[wc.wr_id];
			q->owed++;
			if (hq_post_rx(q, wc.wr_id))
				return -EIO;
			continue;
		}
		if (wc.wr_id == wr_id)
			return wc_errno(wc.status);
		if (wc.status != IBV_WC_SUCCESS)
			return wc_errno(wc.status);
	}
}

/*
 * The next control message of the module but credit returns (the buffers
 * they return are all it says): 0 and *m, or -errno.
 */
static int hq_msg(struct hq *q, struct wmsg *m)
{
	int r;

	do {
		r = hq_reap(q, 0);
		if (r)
			return r;
		*m = q->inq[q->in_head++ % ARRAY_SIZE(q->inq)];
	} while (m->type == W_CREDIT);
	return 0;
}

/*
 * Send @len bytes of @m as a control message; credits as given in @m.
 * With @inv, as SEND_WITH_INV of @inv_rkey.
 */
static int hq_send_inv(struct hq *q, const struct wmsg *m, uint32_t len,
		       bool inv, uint32_t inv_rkey)
{
	struct wmsg *t = &q->b->tx[q->txi++ % TX_SLOTS];
	struct ibv_sge sge = {
		.addr = (uintptr_t)t, .length = len, .lkey = q->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1000 + q->txi, .sg_list = &sge, .num_sge = 1,
		.opcode = inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
		.invalidate_rkey = inv_rkey,
	}, *bad;

	*t = *m;
	if (ibv_post_send(q->id->qp, &wr, &bad))
		return -EIO;
	return hq_reap(q, wr.wr_id);
}

static int hq_send_raw(struct hq *q, const struct wmsg *m, uint32_t len)
{
	return hq_send_inv(q, m, len, false, 0);
}

/* An honest message: the credits we owe go with it. */
static int hq_send(struct hq *q, struct wmsg m)
{
	m.credits = q->owed;
	q->owed = 0;
	return hq_send_raw(q, &m, WHDR + m.nsegs * sizeof(struct wseg));
}

/*
 * One RDMA operation at (@raddr, @rkey) on @len bytes of our memory at
 * @loff: the device's verdict as -errno.
 */
static int hq_rdma(struct hq *q, enum ibv_wr_opcode op, size_t loff,
		   uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)q->b->mem + loff, .length = len,
		.lkey = q->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 2000 + q->txi++, .sg_list = &sge, .num_sge = 1,
		.opcode = op,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (ibv_post_send(q->id->qp, &wr, &bad))
		return -EIO;
	return hq_reap(q, wr.wr_id);
}

/* Write pattern @seed into the advertised segment, honestly. */
static int hq_write_seg(struct hq *q, const struct wseg *s, uint32_t seed)
{
	if (s->len > MEM_LEN)
		return -EMSGSIZE;
	fill(q->b->mem, s->len, seed);
	return hq_rdma(q, IBV_WR_RDMA_WRITE, 0, s->len, s->addr, s->rkey);
}

/* What completes the advertised operation @adv, @len bytes. */
static struct wmsg done_for(const struct wmsg *adv, uint32_t len)
{
	struct wmsg d = { .len = len };

	if (adv->type == W_STCRW) {
		d.type = W_CRW_DONE;
		d.tag = adv->tag;
		d.seq = adv->seq;
	} else {
		d.type = W_SEND_DONE;
	}
	return d;
}

/* ---- the agent's scenarios -------------------------------------------- */

/* Carry out attack @a on the advertisement @adv; the verdict, -errno. */
static int attack(struct hq *q, enum attack a, const struct wmsg *adv)
{
	const struct wseg *s = &adv->seg[0];
	int r;

	switch (a) {
	case ATK_BEFORE:
		q->b->mem[0] = 0xa5;
		return hq_rdma(q, IBV_WR_RDMA_WRITE, 0, 1, s->addr - 1,
			       s->rkey);
	case ATK_AFTER:
		q->b->mem[0] = 0xa5;
		return hq_rdma(q, IBV_WR_RDMA_WRITE, 0, 1, s->addr + s->len,
			       s->rkey);
	case ATK_READ:
		return hq_rdma(q, IBV_WR_RDMA_READ, 0, s->len, s->addr,
			       s->rkey);
	case ATK_ATOMIC:
		return hq_rdma(q, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8,
			       (s->addr + 7) & ~7ULL, s->rkey);
	case ATK_HONEST:
	case ATK_LATE:
		r = hq_write_seg(q, s, 7);
		return r ?: hq_send(q, done_for(adv, s->len));
	case ATK_INV_LATE: {
		/* What the module does when the advertisement allows it. */
		struct wmsg d = done_for(adv, s->len);

		r = hq_write_seg(q, s, 7);
		d.credits = q->owed;
		q->owed = 0;
		return r ?: hq_send_inv(q, &d, WHDR, adv->status & W_ADV_RINV,
					s->rkey);
	}
	default:
		return -EINVAL;
	}
}

/*
 * Scenario "attacks": per CTL_GO (a = attack) one connection, on whose
 * first advertisement (RECV or STCRW) the attack is made; the verdict goes
 * back in CTL_OK.  ATK_LATE then waits for the next CTL_GO (the test has
 * polled) and writes one byte of the range again.
 */
static int srv_attacks(int ctl, struct rdma_event_channel *ch, char *why)
{
	struct wmsg adv = {};
	struct ctl m;
	struct hq q;
	int r;

	for (;;) {
		if (ctl_recv(ctl, CTL_GO, &m))
			return snprintf(why, 96, "control connection lost"), -1;
		if (m.a == ATK_END)
			return 0;
		if (m.a >= ATK_NR)
			return snprintf(why, 96, "no attack %lu", m.a), -1;
		if (hq_accept(&q, ch, 7)) {
			snprintf(why, 96, "%s", q.why);
			hq_close(&q);
			return -1;
		}
		r = hq_msg(&q, &adv);
		if (!r && ((adv.type != W_RECV_ADV && adv.type != W_STCRW) ||
			   adv.nsegs != 1))
			r = -EPROTO;
		if (!r)
			r = attack(&q, m.a, &adv);
		ctl_send(ctl, CTL_OK, r, adv.seg[0].addr, adv.seg[0].rkey,
			 atk_name[m.a]);
		if ((m.a == ATK_LATE || m.a == ATK_INV_LATE) && !r) {
			if (ctl_recv(ctl, CTL_GO, &m)) {
				hq_close(&q);
				return snprintf(why, 96, "control lost"), -1;
			}
			q.b->mem[0] = 0xa5;
			r = hq_rdma(&q, IBV_WR_RDMA_WRITE, 0, 1,
				    adv.seg[0].addr + 1, adv.seg[0].rkey);
			ctl_send(ctl, CTL_OK, r, 0, 0, "late write");
		}
		/* The test has its completion before it asks for more. */
		hq_close(&q);
	}
}

/* Forged, stale and malformed messages about the STCRW @st. */
static int forge(struct hq *q, const struct wmsg *st)
{
	struct wmsg m;
	int r = 0;

	memset(&m, 0, sizeof(m));
	m.type = 0;
	r = r ?: hq_send_raw(q, &m, WHDR);			/* no type */
	m.type = 99;
	r = r ?: hq_send_raw(q, &m, WHDR);			/* unknown */
	m.type = W_CRW_DONE;
	r = r ?: hq_send_raw(q, &m, 4);				/* short */
	m.nsegs = W_SEGS + 1;
	r = r ?: hq_send_raw(q, &m, sizeof(m));			/* too many */
	m.nsegs = 3;
	r = r ?: hq_send_raw(q, &m, WHDR + sizeof(struct wseg)); /* cut */
	m = done_for(st, 10);
	m.seq++;
	r = r ?: hq_send_raw(q, &m, WHDR);			/* stale seq */
	m = done_for(st, 10);
	m.tag++;
	r = r ?: hq_send_raw(q, &m, WHDR);			/* other tag */
	m = done_for(st, 10);
	m.type = W_WITHDRAWN;
	r = r ?: hq_send_raw(q, &m, WHDR);	/* answer to no withdrawal */
	memset(&m, 0, sizeof(m));
	m.type = W_WITHDRAW;
	m.tag = 999;
	r = r ?: hq_send_raw(q, &m, WHDR);			/* unknown tag */
	memset(&m, 0, sizeof(m));
	m.type = W_SEND_DONE;
	m.len = 1 << 30;
	r = r ?: hq_send_raw(q, &m, WHDR);			/* no RECV */
	memset(&m, 0, sizeof(m));
	m.type = W_CREDIT;
	m.credits = 65535;
	r = r ?: hq_send_raw(q, &m, WHDR);			/* inflated */
	return r;
}

/*
 * Scenario "forged": one connection; each CTL_GO names the next step
 * (FG_*), CTL_OK reports it.
 */
static int srv_forged(int ctl, struct rdma_event_channel *ch, char *why)
{
	struct wmsg st5 = {}, m = {}, adv = {};
	struct ctl c;
	struct hq q;
	int r = 0;
	size_t bad;

	if (hq_accept(&q, ch, 7)) {
		snprintf(why, 96, "%s", q.why);
		hq_close(&q);
		return -1;
	}
	for (;;) {
		if (ctl_recv(ctl, CTL_GO, &c)) {
			r = -1;
			snprintf(why, 96, "control connection lost");
			break;
		}
		if (c.a == ATK_END)
			break;
		switch (c.a) {
		case FG_FORGE:
			r = hq_msg(&q, &st5);
			if (!r && (st5.type != W_STCRW || st5.tag != 5))
				r = -EPROTO;
			r = r ?: forge(&q, &st5);
			/* A withdrawal is answered, even of nothing. */
			r = r ?: hq_msg(&q, &m);
			if (!r && (m.type != W_WITHDRAWN || m.tag != 999))
				r = -EPROTO;
			break;
		case FG_RECV:
			r = hq_msg(&q, &adv);
			if (!r && adv.type != W_RECV_ADV)
				r = -EPROTO;
			r = r ?: hq_write_seg(&q, &adv.seg[0], 8);
			r = r ?: hq_send(&q, done_for(&adv, 1 << 30));
			break;
		case FG_CRW_DONE:
			r = hq_write_seg(&q, &st5.seg[0], 9);
			m = done_for(&st5, 1 << 30);
			r = r ?: hq_send(&q, m);
			r = r ?: hq_send(&q, m);	/* replayed */
			r = r ?: hq_send(&q, m);
			break;
		case FG_STATUS:
			r = hq_msg(&q, &adv);
			if (!r && (adv.type != W_STCRW || adv.tag != 6))
				r = -EPROTO;
			m = done_for(&adv, 0);
			m.status = 0x7fffffff;
			r = r ?: hq_send(&q, m);
			break;
		case FG_ADV:
			memset(&m, 0, sizeof(m));
			m.type = W_RECV_ADV;
			m.nsegs = 1;
			m.seg[0].addr = (uintptr_t)q.b->mem;
			m.seg[0].len = 4096;
			m.seg[0].rkey = q.mr->rkey;
			memset(q.b->mem, 0, 4096 + 1);
			r = hq_send(&q, m);
			break;
		case FG_CHECK_SEND:
			r = hq_msg(&q, &m);
			if (!r && (m.type != W_SEND_DONE || m.len != c.b))
				r = -EPROTO;
			bad = r ? 0 : check(q.b->mem, c.b, c.c);
			if (!r && (bad || q.b->mem[c.b]))
				r = -EILSEQ;
			break;
		default:
			r = -EINVAL;
		}
		snprintf(why, 96, "step %lu: %s (last messages: types %u, %u)",
			 c.a, strerror(-r), m.type, adv.type);
		ctl_send(ctl, CTL_OK, r, 0, 0, r ? why : NULL);
	}
	hq_close(&q);
	return r;
}

/* A zero-length RDMA WRITE with immediate @imm: no key, one buffer. */
static int hq_imm(struct hq *q, uint32_t imm)
{
	struct ibv_send_wr wr = {
		.wr_id = 3000 + q->txi++, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.imm_data = htonl(imm),
	}, *bad;

	if (ibv_post_send(q->id->qp, &wr, &bad))
		return -EIO;
	return hq_reap(q, wr.wr_id);
}

#define CREDIT_FLOOD	160

/*
 * Scenario "credits": a peer that ignores credits.  On CTL_GO it sends
 * CREDIT_FLOOD writes with immediate, one after the other, each taking one
 * of the module's receive buffers until the application polls it.  Once
 * W_RX_DEPTH have landed it says so (CTL_OK, a = how many); the next one
 * then waits in RNR retries (the module asks its peers to retry for ever)
 * until the application polls and the buffers come back, and so do the
 * rest.  Then CTL_OK with a = all that landed, and, on the next CTL_GO,
 * an honest write into an honest RECV on the same connection.
 */
static int srv_credits(int ctl, struct rdma_event_channel *ch, char *why)
{
	struct wmsg adv = {};
	unsigned int i;
	struct ctl c;
	struct hq q;
	int r = 0;

	if (hq_accept(&q, ch, 7) || ctl_recv(ctl, CTL_GO, &c)) {
		snprintf(why, 96, "connection: %.80s", q.why);
		hq_close(&q);
		return -1;
	}
	for (i = 0; i < CREDIT_FLOOD && !r; i++) {
		r = hq_imm(&q, i);
		if (!r && i + 1 == W_RX_DEPTH)
			ctl_send(ctl, CTL_OK, 0, i + 1, 0, NULL);
	}
	if (r && i <= W_RX_DEPTH)
		ctl_send(ctl, CTL_OK, r, i - 1, 0, strerror(-r));
	ctl_send(ctl, CTL_OK, r, r ? i - 1 : i, 0, r ? strerror(-r) : NULL);

	if (!r && ctl_recv(ctl, CTL_GO, &c))
		r = -EIO;
	r = r ?: hq_msg(&q, &adv);
	if (!r && adv.type != W_RECV_ADV)
		r = -EPROTO;
	r = r ?: hq_write_seg(&q, &adv.seg[0], 13);
	r = r ?: hq_send(&q, done_for(&adv, adv.seg[0].len));
	ctl_send(ctl, CTL_OK, r, 0, 0, r ? strerror(-r) : NULL);
	if (ctl_recv(ctl, CTL_GO, &c))
		r = r ?: -EIO;
	hq_close(&q);
	if (r)
		snprintf(why, 96, "credit flood: %s", strerror(-r));
	return r ? -1 : 0;
}

/*
 * A peer that promises receive buffers and posts none: whatever the module
 * sends that needs one waits in RNR retries for ever, and everything
 * behind it on the queue pair too.  Reports where its memory is (CTL_OK
 * a = address, b = rkey), then holds the connection until CTL_GO.
 */
static int srv_stall(int ctl, struct rdma_event_channel *ch, char *why)
{
	struct ctl c;
	struct hq q;

	if (hq_accept_rx(&q, ch, 7, 0) || ctl_recv(ctl, CTL_GO, &c)) {
		snprintf(why, 96, "connection: %.80s", q.why);
		hq_close(&q);
		return -1;
	}
	ctl_send(ctl, CTL_OK, 0, (uintptr_t)q.b, q.mr->rkey, NULL);
	ctl_recv(ctl, CTL_GO, &c);
	hq_close(&q);
	return 0;
}

/*
 * Connect to @sin with private data @pd of @pdlen bytes.  Addresses are
 * resolved on a channel of the connection's own; with @ch the id then
 * moves to @ch and the outcome is left to the caller, else it is awaited:
 * 0 (established), -ECONNREFUSED or another -errno.
 */
static int hq_connect(struct hq *q, struct rdma_event_channel *ch,
		      const struct sockaddr_in *sin, struct wpdata *pd,
		      uint8_t pdlen)
{
	struct rdma_conn_param p;
	struct wpdata unused;
	int r;

	memset(q, 0, sizeof(*q));
	q->ch = rdma_create_event_channel();
	if (!q->ch || rdma_create_id(q->ch, &q->id, NULL, RDMA_PS_TCP))
		return -errno;
	if (rdma_resolve_addr(q->id, NULL, (struct sockaddr *)sin, 5000))
		return -errno;
	if (cm_next(q->ch, 10000, NULL, NULL, NULL) !=
	    RDMA_CM_EVENT_ADDR_RESOLVED)
		return -EHOSTUNREACH;
	if (rdma_resolve_route(q->id, 5000))
		return -errno;
	if (cm_next(q->ch, 10000, NULL, NULL, NULL) !=
	    RDMA_CM_EVENT_ROUTE_RESOLVED)
		return -ENETUNREACH;
	if (hq_setup(q, q->id, W_RX_DEPTH))
		return -ENOMEM;
	if (ch && rdma_migrate_id(q->id, ch))
		return -errno;
	p = conn_param(&unused, 7);
	p.private_data = pdlen ? pd : NULL;
	p.private_data_len = pdlen;
	if (rdma_connect(q->id, &p))
		return -errno;
	if (ch)
		return 0;
	r = cm_next(q->ch, TMO_MS, NULL, NULL, NULL);
	return r == RDMA_CM_EVENT_ESTABLISHED ? 0 :
	       r == RDMA_CM_EVENT_REJECTED ? -ECONNREFUSED :
	       r < 0 ? r : -EPROTO;
}

#define FLOOD_BAD	6
#define FLOOD_N		12
#define FLOOD_BACKLOG	4

/*
 * Scenario "flood": CTL_GO a = the test's listening port.  Requests with
 * broken private data (none or 4 bytes reach the module zero-padded by the
 * CM, so they fail on the magic; then a wrong magic, version both ways,
 * receive depth), then FLOOD_N good ones the test does not answer
 * yet; reports how many were refused at once (a) and are waiting (b).
 * Then (next CTL_GO) how the waiting ones ended: established (a),
 * refused (b); then an honest exchange on the established one.
 */
static int srv_flood(int ctl, char *why)
{
	static const uint8_t lens[FLOOD_BAD] = { 0, 4, 12, 12, 12, 12 };
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct hq bad, q[FLOOD_N];
	unsigned int i, refused = 0, waiting = 0, est = 0, rej = 0, good = 0;
	struct rdma_cm_event *ev;
	struct sockaddr_in sin;
	struct wpdata pd;
	struct wmsg adv;
	struct ctl c;
	int r;

	if (!ch || ctl_recv(ctl, CTL_GO, &c))
		return snprintf(why, 96, "no channel or no GO"), -1;
	sin = ip_addr(getenv("MRRC_LINK_PEER"), c.a);
	for (i = 0; i < FLOOD_BAD; i++) {
		pd = (struct wpdata){ .magic = W_MAGIC, .version = W_VERSION,
				      .rx_depth = W_RX_DEPTH };
		if (i == 2)
			pd.magic = 0x12345678;
		if (i == 3)
			pd.version = W_VERSION + 1;
		if (i == 4)
			pd.version = W_VERSION - 1;
		if (i == 5)
			pd.rx_depth = 64;
		r = hq_connect(&bad, NULL, &sin, &pd, lens[i]);
		hq_close(&bad);
		if (r != -ECONNREFUSED)
			return snprintf(why, 96, "bad request %u: %s", i,
					strerror(-r)), -1;
	}
	pd = (struct wpdata){ .magic = W_MAGIC, .version = W_VERSION,
			      .rx_depth = W_RX_DEPTH };
	for (i = 0; i < FLOOD_N; i++) {
		r = hq_connect(&q[i], ch, &sin, &pd, sizeof(pd));
		if (r)
			return snprintf(why, 96, "request %u: %s", i,
					strerror(-r)), -1;
	}
	/* Refusals come at once; the rest wait for the application. */
	while ((r = cm_next(ch, 5000, NULL, NULL, NULL)) >= 0) {
		if (r != RDMA_CM_EVENT_REJECTED)
			return snprintf(why, 96, "event %d", r), -1;
		refused++;
	}
	waiting = FLOOD_N - refused;
	ctl_send(ctl, CTL_OK, 0, refused, waiting, NULL);

	if (ctl_recv(ctl, CTL_GO, &c))
		return snprintf(why, 96, "no second GO"), -1;
	while (est + rej < waiting) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };

		if (poll(&pfd, 1, TMO_MS) != 1 || rdma_get_cm_event(ch, &ev))
			break;
		if (ev->event == RDMA_CM_EVENT_ESTABLISHED) {
			for (i = 0; i < FLOOD_N; i++)
				if (q[i].id == ev->id)
					good = i;
			est++;
		} else if (ev->event == RDMA_CM_EVENT_REJECTED) {
			rej++;
		}
		rdma_ack_cm_event(ev);
	}
	ctl_send(ctl, CTL_OK, 0, est, rej, NULL);

	/* The one accepted: an honest write into an honest RECV. */
	r = est == 1 ? hq_msg(&q[good], &adv) : -ENOTCONN;
	if (!r && adv.type != W_RECV_ADV)
		r = -EPROTO;
	r = r ?: hq_write_seg(&q[good], &adv.seg[0], 11);
	r = r ?: hq_send(&q[good], done_for(&adv, adv.seg[0].len));
	ctl_send(ctl, CTL_OK, r, 0, 0, r ? strerror(-r) : NULL);
	if (ctl_recv(ctl, CTL_GO, &c))
		r = -1;
	for (i = 0; i < FLOOD_N; i++)
		hq_close(&q[i]);
	rdma_destroy_event_channel(ch);
	if (r)
		snprintf(why, 96, "honest exchange: %s", strerror(-r));
	return r ? -1 : 0;
}

/* One scenario in its own process: listens (except "flood"), plays it. */
static void serve_one(int ctl, const char *name, uint16_t port)
{
	struct sockaddr_in sin = ip_addr(getenv("MRRC_LINK_IP"), port);
	struct rdma_event_channel *ch = NULL;
	struct rdma_cm_id *lid = NULL;
	char why[96] = "";
	int r;

	if (strcmp(name, "flood")) {
		ch = rdma_create_event_channel();
		r = ch ? rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) : -1;
		r = r ?: rdma_bind_addr(lid, (struct sockaddr *)&sin);
		r = r ?: rdma_listen(lid, 8);
		if (r) {
			ctl_send(ctl, CTL_READY, -errno, 0, 0,
				 "rdma_cm listen failed");
			_exit(1);
		}
	}
	ctl_send(ctl, CTL_READY, 0, port, 0, NULL);
	if (!strcmp(name, "attacks"))
		r = srv_attacks(ctl, ch, why);
	else if (!strcmp(name, "forged"))
		r = srv_forged(ctl, ch, why);
	else if (!strcmp(name, "credits"))
		r = srv_credits(ctl, ch, why);
	else if (!strcmp(name, "stall"))
		r = srv_stall(ctl, ch, why);
	else
		r = srv_flood(ctl, why);
	ctl_send(ctl, CTL_DONE, r ? -EIO : 0, 0, 0, r ? why : NULL);
	if (lid)
		rdma_destroy_id(lid);
	if (ch)
		rdma_destroy_event_channel(ch);
	_exit(r ? 1 : 0);
}

static uint64_t nothing(void)
{
	return 0;
}

/* The agent: scenarios one at a time until CTL_QUIT. */
static int serve(void)
{
	int ls, s, failed = 0, st;
	uint16_t port = RDMA_PORT;
	struct ctl m;
	pid_t pid;

	ls = agent_socket("mrrc_hostile", CTL_PORT);
	if (ls < 0)
		return 1;
	for (;;) {
		s = agent_next("mrrc_hostile", ls, IDLE_S, nothing, &m);
		if (s < 0)
			return s == AGENT_QUIT ? failed : 1;
		if (strcmp(m.text, "attacks") && strcmp(m.text, "forged") &&
		    strcmp(m.text, "credits") && strcmp(m.text, "flood") &&
		    strcmp(m.text, "stall")) {
			ctl_send(s, CTL_READY, -EINVAL, 0, 0, "no such scenario");
			close(s);
			continue;
		}
		printf("# serving %s\n", m.text);
		fflush(stdout);
		pid = fork();
		if (!pid) {
			close(ls);
			serve_one(s, m.text, port);
		}
		port++;
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			failed = 1;
			if (WIFSIGNALED(st))
				ctl_send(s, CTL_DONE, -EIO, 0, 0,
					 "agent half died");
		}
		close(s);
	}
}

/* ---- the tests (VM b): the module is the victim ----------------------- */

struct victim {
	int ctl, fd;
	uint16_t port;
	uint8_t *buf, *want;
	char why[96];
};

static int victim_start(struct victim *v, const char *scenario)
{
	struct ctl m;
	int r;

	v->ctl = agent_dial(CTL_PORT, 10000);
	if (v->ctl < 0)
		return v->ctl;
	r = ctl_send(v->ctl, CTL_HELLO, 0, 1, 0, scenario);
	r = r ?: ctl_recv(v->ctl, CTL_READY, &m);
	if (r)
		return r;
	v->port = m.a;
	v->fd = open_bound(RXE_DEV);
	v->buf = mmap(NULL, BLEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	v->want = malloc(BLEN);
	if (v->fd < 0 || v->buf == MAP_FAILED || !v->want)
		return -ENOMEM;
	memset(v->buf, FILLER, BLEN);
	memcpy(v->want, v->buf, BLEN);
	return m.status;
}

/* The agent's verdict on the scenario. */
static int victim_verdict(struct victim *v)
{
	struct ctl m;
	int r = ctl_recv(v->ctl, CTL_DONE, &m);

	snprintf(v->why, sizeof(v->why), "%s",
		 r ? "no verdict from the agent" : m.text);
	return r ?: m.status;
}

/* CTL_GO (a, b, c) and the agent's CTL_OK; its status, *m filled. */
static int go(struct victim *v, uint64_t a, uint64_t b, uint64_t c,
	      struct ctl *m)
{
	struct ctl g = { .op = CTL_GO, .a = a, .b = b, .c = c };

	if (send(v->ctl, &g, sizeof(g), MSG_NOSIGNAL) != sizeof(g))
		return -EIO;
	if (ctl_recv(v->ctl, CTL_OK, m))
		return -EIO;
	snprintf(v->why, sizeof(v->why), "%s", m->text);
	return m->status;
}

static void go_only(struct victim *v, uint64_t a)
{
	struct ctl g = { .op = CTL_GO, .a = a };

	send(v->ctl, &g, sizeof(g), MSG_NOSIGNAL);
}

static int connect_agent(struct victim *v)
{
	return peer_connect(v->fd, v->port);
}

/*
 * Connection events until none came for @ms: how many, their
 * connections in @ids (up to @max); -EPROTO for anything but @ev.
 */
static int events(int fd, int ev, uint32_t *ids, unsigned int max, int ms)
{
	int64_t end = now_ms() + ms;
	unsigned int n = 0;
	struct mrrc_cqe c;

	while (now_ms() < end) {
		if (mrrc_poll_cq(fd, &c, 1) != 1) {
			mrrc_wait(fd, 100);
			continue;
		}
		if (c.opcode != MRRC_OP_EVENT || c.event != ev || n >= max)
			return -EPROTO;
		ids[n++] = c.conn;
		end = now_ms() + ms;
	}
	return n;
}

/* No completion comes for @ms: 0, or the completion's wr_id + 1. */
static int quiet(int fd, int ms)
{
	struct mrrc_cqe c;
	int64_t end = now_ms() + ms;

	while (now_ms() < end) {
		if (mrrc_poll_cq(fd, &c, 1) == 1)
			return (int)c.wr_id + 1;
		mrrc_wait(fd, 50);
	}
	return 0;
}

static void victim_close(struct victim *v)
{
	if (v->ctl >= 0)
		close(v->ctl);
	if (v->fd >= 0)
		close(v->fd);
	if (v->buf && v->buf != MAP_FAILED)
		munmap(v->buf, BLEN);
	free(v->want);
}

FIXTURE(hostile) {
	struct victim v;
};

FIXTURE_SETUP(hostile)
{
	memset(&self->v, 0, sizeof(self->v));
	self->v.ctl = -1;
	self->v.fd = -1;
}

FIXTURE_TEARDOWN(hostile)
{
	victim_close(&self->v);
}

#define START(name) do {						\
	int __r = victim_start(&self->v, name);				\
	ASSERT_EQ(0, __r) TH_LOG("%s: %s", name, strerror(-__r));	\
} while (0)

#define VERDICT() \
	ASSERT_EQ(0, victim_verdict(&self->v)) TH_LOG("agent: %s", self->v.why)

/*
 * Every attack on a RECV's and an STCRW's range, fast and ordinary
 * registration, each on a connection of its own: outside the range, a
 * read, an atomic, or a write once the completion was polled is refused by
 * the device (a remote access error that ends the connection and
 * completes the operation with an error); an honest write lands exactly
 * in the range.  No byte outside what honest writes wrote ever changes.
 */
TEST_F(hostile, attacks_on_advertised_ranges)
{
	static const uint32_t modes[] = { MRRC_MODE_FAST, MRRC_MODE_ORDINARY };
	static const uint8_t ops[] = { MRRC_OP_RECV, MRRC_OP_STCRW };
	struct victim *v = &self->v;
	unsigned int mi, oi, a;
	struct mrrc_cqe c;
	struct mrrc_wr w;
	struct ctl m;
	int conn, r;

	START("attacks");
	for (mi = 0; mi < ARRAY_SIZE(modes); mi++) {
		struct mrrc_cache_config cfg = { .mode = modes[mi] };

		/* A new context: a cache with regions keeps its mode. */
		close(v->fd);
		v->fd = open_bound(RXE_DEV);
		ASSERT_LE(0, v->fd);
		ASSERT_EQ(0, mrrc_cache_config(v->fd, &cfg));
		for (oi = 0; oi < ARRAY_SIZE(ops); oi++) {
			for (a = 0; a < ATK_NR; a++) {
				go_only(v, a);
				conn = connect_agent(v);
				ASSERT_LT(0, conn) TH_LOG("connect: %s",
							  strerror(-conn));
				w = wr(conn, ops[oi], v->buf + OFF, LEN, a + 1);
				if (ops[oi] == MRRC_OP_STCRW)
					w.tag = 40 + a;
				ASSERT_EQ(0, post1(v->fd, w));
				r = ctl_recv(v->ctl, CTL_OK, &m);
				ASSERT_EQ(0, r);
				TH_LOG("mode %u op %u %s: %s", modes[mi],
				       ops[oi], atk_name[a], strerror(-m.status));
				EXPECT_EQ((uintptr_t)(v->buf + OFF), m.a);
				if (a == ATK_HONEST || a == ATK_LATE ||
				    a == ATK_INV_LATE) {
					ASSERT_EQ(0, m.status);
				} else {
					EXPECT_EQ(-EACCES, m.status);
				}
				ASSERT_EQ(0, reap_op(v->fd, &c));
				EXPECT_EQ(a + 1, c.wr_id);
				if (a == ATK_HONEST || a == ATK_LATE ||
				    a == ATK_INV_LATE) {
					EXPECT_EQ(0, c.status);
					EXPECT_EQ(LEN, c.byte_len);
					EXPECT_EQ(0, check(v->buf + OFF, LEN, 7));
					memcpy(v->want + OFF, v->buf + OFF, LEN);
				} else {
					/* The connection broke under it. */
					EXPECT_GT(0, c.status);
				}
				if (a == ATK_LATE || a == ATK_INV_LATE) {
					/* Polled: the key is dead now. */
					EXPECT_EQ(-EACCES, go(v, 0, 0, 0, &m));
				}
				if (a == ATK_INV_LATE) {
					struct mrrc_conn_query q;

					/* Pooled MRs only, and only if asked. */
					ASSERT_EQ(0, mrrc_conn_query(v->fd, conn,
								     &q));
					EXPECT_EQ(modes[mi] == MRRC_MODE_FAST &&
						  remote_inv_on(), q.remote_inv);
				}
				EXPECT_EQ(0, memcmp(v->buf, v->want, BLEN))
					TH_LOG("%s changed memory", atk_name[a]);
				mrrc_destroy(v->fd, conn);
				/* Only what was polled was there: events. */
				while (mrrc_poll_cq(v->fd, &c, 1) == 1)
					EXPECT_EQ(MRRC_OP_EVENT, c.opcode);
			}
		}
	}
	go_only(v, ATK_END);
	VERDICT();
}

/*
 * Forged, stale, replayed and malformed control messages on an honest
 * connection change nothing: an STCRW completes once, only on the message
 * with its tag and sequence number, with lengths clamped to its range;
 * credits never exceed the receive buffers; a status that is no errno
 * still fails the operation; and the connection goes on working both
 * ways.
 */
TEST_F(hostile, forged_messages_change_nothing)
{
	struct victim *v = &self->v;
	uint8_t *recv_at = NULL, *send_from;
	struct mrrc_conn_query q = { .size = sizeof(q) };
	struct mrrc_cqe c;
	struct mrrc_wr w;
	struct ctl m;
	int conn;

	START("forged");
	recv_at = v->buf + 2 * 4096 + 100;
	send_from = v->buf + 2 * 4096 + 1024;
	fill(send_from, 64, 12);
	memcpy(v->want, v->buf, BLEN);
	conn = connect_agent(v);
	ASSERT_LT(0, conn);

	w = wr(conn, MRRC_OP_STCRW, v->buf + OFF, LEN, 5);
	w.tag = 5;
	ASSERT_EQ(0, post1(v->fd, w));
	ASSERT_EQ(0, go(v, FG_FORGE, 0, 0, &m)) TH_LOG("%s", v->why);
	EXPECT_EQ(0, quiet(v->fd, 1000)) TH_LOG("a forged message completed");
	ASSERT_EQ(0, mrrc_conn_query(v->fd, conn, &q));
	EXPECT_EQ(MRRC_CONN_ESTABLISHED, q.state);
	EXPECT_GE(W_RX_DEPTH, q.credits);

	/* SEND_DONE says 1 GiB: the RECV reports its own length. */
	ASSERT_EQ(0, post1(v->fd, wr(conn, MRRC_OP_RECV, recv_at, 100, 6)));
	ASSERT_EQ(0, go(v, FG_RECV, 0, 0, &m)) TH_LOG("%s", v->why);
	ASSERT_EQ(0, reap(v->fd, &c, 1));
	EXPECT_EQ(6, c.wr_id);
	EXPECT_EQ(0, c.status);
	EXPECT_EQ(100, c.byte_len);
	EXPECT_EQ(0, check(recv_at, 100, 8));
	memcpy(v->want + (recv_at - v->buf), recv_at, 100);

	/* CRW_DONE for tag 5, inflated and replayed: one completion. */
	ASSERT_EQ(0, go(v, FG_CRW_DONE, 0, 0, &m)) TH_LOG("%s", v->why);
	ASSERT_EQ(0, reap(v->fd, &c, 1));
	EXPECT_EQ(5, c.wr_id);
	EXPECT_EQ(5, c.tag);
	EXPECT_EQ(0, c.status);
	EXPECT_EQ(LEN, c.byte_len);
	EXPECT_EQ(0, check(v->buf + OFF, LEN, 9));
	memcpy(v->want + OFF, v->buf + OFF, LEN);
	EXPECT_EQ(0, quiet(v->fd, 1000)) TH_LOG("a replay completed again");

	/* A status no errno has still fails the operation. */
	w = wr(conn, MRRC_OP_STCRW, v->buf + OFF, LEN, 7);
	w.tag = 6;
	ASSERT_EQ(0, post1(v->fd, w));
	ASSERT_EQ(0, go(v, FG_STATUS, 0, 0, &m)) TH_LOG("%s", v->why);
	ASSERT_EQ(0, reap(v->fd, &c, 1));
	EXPECT_EQ(7, c.wr_id);
	EXPECT_GT(0, c.status);
	EXPECT_LE(-4095, c.status);

	/* And the connection still carries an honest SEND. */
	ASSERT_EQ(0, go(v, FG_ADV, 0, 0, &m)) TH_LOG("%s", v->why);
	ASSERT_EQ(0, post1(v->fd, wr(conn, MRRC_OP_SEND, send_from, 64, 8)));
	ASSERT_EQ(0, reap(v->fd, &c, 1));
	EXPECT_EQ(8, c.wr_id);
	EXPECT_EQ(0, c.status);
	ASSERT_EQ(0, go(v, FG_CHECK_SEND, 64, 12, &m)) TH_LOG("%s", v->why);

	EXPECT_EQ(0, memcmp(v->buf, v->want, BLEN)) TH_LOG("memory changed");
	ASSERT_EQ(0, mrrc_conn_query(v->fd, conn, &q));
	EXPECT_EQ(MRRC_CONN_ESTABLISHED, q.state);
	EXPECT_GE(W_RX_DEPTH, q.credits);
	go_only(v, ATK_END);
	VERDICT();
}

/*
 * A listener under a flood: requests with missing, short or wrong private
 * data are refused before the application hears of them; of FLOOD_N good
 * ones, the backlog's worth wait for the application and the rest are
 * refused at once (counted in the listener's "refused").  The application
 * accepts one and rejects the others, and the accepted one works.
 */
TEST_F(hostile, listener_survives_a_request_flood)
{
	struct sockaddr_in sin = ip_addr(getenv("MRRC_LINK_IP") ?: "0.0.0.0",
					 RDMA_PORT + 400);
	struct mrrc_conn_query q = { .size = sizeof(q) };
	struct victim *v = &self->v;
	uint32_t lis, ids[FLOOD_N];
	unsigned int n, i;
	struct mrrc_cqe c;
	struct ctl m;
	int r;

	START("flood");
	ASSERT_EQ(0, mrrc_listen(v->fd, (struct sockaddr *)&sin, FLOOD_BACKLOG,
				 0, &lis));
	ASSERT_EQ(0, go(v, RDMA_PORT + 400, 0, 0, &m)) TH_LOG("%s", v->why);
	EXPECT_EQ(FLOOD_N - FLOOD_BACKLOG, m.a) TH_LOG("refused at once");
	EXPECT_EQ(FLOOD_BACKLOG, m.b) TH_LOG("waiting");
	r = events(v->fd, MRRC_EVENT_CONNECT_REQUEST, ids, FLOOD_N, 2000);
	ASSERT_EQ(FLOOD_BACKLOG, r);
	n = r;
	ASSERT_EQ(0, mrrc_conn_query(v->fd, lis, &q));
	EXPECT_EQ(FLOOD_N - FLOOD_BACKLOG + FLOOD_BAD, q.refused);
	ASSERT_EQ(0, mrrc_accept(v->fd, ids[0], 0));
	for (i = 1; i < n; i++)
		EXPECT_EQ(0, mrrc_reject(v->fd, ids[i]));
	/* The agent's library finishes the handshake when it looks. */
	ASSERT_EQ(0, go(v, 0, 0, 0, &m));
	EXPECT_EQ(1, m.a) TH_LOG("established");
	EXPECT_EQ(n - 1, m.b) TH_LOG("rejected");
	ASSERT_EQ(ids[0], wait_event(v->fd, MRRC_EVENT_ESTABLISHED, NULL));
	ASSERT_EQ(0, post1(v->fd, wr(ids[0], MRRC_OP_RECV, v->buf + OFF, LEN,
				     9)));
	ASSERT_EQ(0, ctl_recv(v->ctl, CTL_OK, &m));
	ASSERT_EQ(0, m.status) TH_LOG("honest exchange: %s", m.text);
	ASSERT_EQ(0, reap_op(v->fd, &c));
	EXPECT_EQ(9, c.wr_id);
	EXPECT_EQ(0, c.status);
	EXPECT_EQ(LEN, c.byte_len);
	EXPECT_EQ(0, check(v->buf + OFF, LEN, 11));
	go_only(v, ATK_END);
	VERDICT();
}

/*
 * A peer that ignores credits and fills every receive buffer with writes
 * with immediate the application does not poll: exactly the 128 buffers
 * take them and the next waits (RNR) until the application polls; every
 * one is reported once, in order, and the connection goes on working.
 */
TEST_F(hostile, credit_flood_waits_for_the_application)
{
	struct mrrc_conn_query q = { .size = sizeof(q) };
	struct mrrc_cqe c[2 * W_RX_DEPTH];
	struct victim *v = &self->v;
	unsigned int got = 0, i;
	struct ctl m;
	int conn, n;

	START("credits");
	conn = connect_agent(v);
	ASSERT_LT(0, conn);
	ASSERT_EQ(0, go(v, 1, 0, 0, &m)) TH_LOG("%s", v->why);
	ASSERT_EQ(W_RX_DEPTH, m.a);
	/* The next one waits in RNR retries: nothing beyond the buffers. */
	usleep(500000);
	n = mrrc_poll_cq(v->fd, c, ARRAY_SIZE(c));
	ASSERT_EQ(W_RX_DEPTH, n);
	for (i = 0; i < (unsigned int)n; i++) {
		ASSERT_EQ(MRRC_OP_RECV_IMM, c[i].opcode);
		ASSERT_EQ(i, c[i].imm);
	}
	got = n;
	/* Polled: the buffers are back, the rest land. */
	while (got < CREDIT_FLOOD) {
		ASSERT_EQ(0, reap(v->fd, c, 1));
		ASSERT_EQ(MRRC_OP_RECV_IMM, c[0].opcode);
		ASSERT_EQ(got, c[0].imm);
		got++;
	}
	ASSERT_EQ(0, ctl_recv(v->ctl, CTL_OK, &m));
	ASSERT_EQ(0, m.status) TH_LOG("%s", m.text);
	EXPECT_EQ(CREDIT_FLOOD, m.a);
	EXPECT_EQ(0, quiet(v->fd, 500));
	ASSERT_EQ(0, mrrc_conn_query(v->fd, conn, &q));
	EXPECT_EQ(MRRC_CONN_ESTABLISHED, q.state);
	EXPECT_GE(W_RX_DEPTH, q.credits);

	ASSERT_EQ(0, post1(v->fd, wr(conn, MRRC_OP_RECV, v->buf + OFF, LEN, 9)));
	ASSERT_EQ(0, go(v, 2, 0, 0, &m)) TH_LOG("%s", v->why);
	ASSERT_EQ(0, reap_op(v->fd, c));
	EXPECT_EQ(9, c[0].wr_id);
	EXPECT_EQ(0, c[0].status);
	EXPECT_EQ(LEN, c[0].byte_len);
	EXPECT_EQ(0, check(v->buf + OFF, LEN, 13));
	go_only(v, ATK_END);
	VERDICT();
}

/*
 * DESTROY with the whole send window stuck at the device (issue 12,
 * finding 7).  The agent posts no receive buffer, so the module's
 * WRITE_IMM waits in RNR retries for ever and the writes behind it with
 * it: 1024 work requests fill the send window and 64 more wait in the
 * backlog.  DESTROY drains the queue pair, which needs a slot of its own:
 * every operation completes exactly once, flushed, and none after.
 */
#define STALL_N		(1024 + 64)
TEST_F(hostile, destroy_with_a_stuck_send_queue)
{
	struct mrrc_conn_query q = { .size = sizeof(q) };
	struct mrrc_wr *w = calloc(STALL_N, sizeof(*w));
	uint8_t *seen = calloc(STALL_N, 1);
	struct victim *v = &self->v;
	unsigned int i, done = 0;
	struct mrrc_cqe c;
	struct ctl m;
	int conn;

	ASSERT_NE(NULL, w);
	ASSERT_NE(NULL, seen);
	START("stall");
	conn = connect_agent(v);
	ASSERT_LT(0, conn);
	ASSERT_EQ(0, go(v, 1, 0, 0, &m)) TH_LOG("%s", v->why);
	for (i = 0; i < STALL_N; i++) {
		w[i] = wr(conn, i ? MRRC_OP_WRITE : MRRC_OP_WRITE_IMM,
			  v->buf + OFF, LEN, i);
		w[i].remote_addr = m.a;
		w[i].rkey = m.b;
	}
	ASSERT_EQ(0, mrrc_post(v->fd, w, STALL_N, &done));
	ASSERT_EQ(STALL_N, done);
	usleep(300000);
	ASSERT_EQ(0, mrrc_conn_query(v->fd, conn, &q));
	EXPECT_EQ(MRRC_CONN_ESTABLISHED, q.state);
	EXPECT_EQ(STALL_N, q.ops) TH_LOG("an operation completed past the stall");
	ASSERT_EQ(0, mrrc_destroy(v->fd, conn));
	for (i = 0; i < STALL_N; i++) {
		ASSERT_EQ(0, reap_op(v->fd, &c))
			TH_LOG("%u of %u operations completed", i, STALL_N);
		ASSERT_GT(STALL_N, c.wr_id);
		EXPECT_EQ(0, seen[c.wr_id]++)
			TH_LOG("operation %llu completed twice",
			       (unsigned long long)c.wr_id);
		EXPECT_EQ(-ECONNRESET, c.status)
			TH_LOG("operation %llu", (unsigned long long)c.wr_id);
	}
	/* Events of the destroyed connection may follow; nothing else. */
	for (i = 0; i < 16 && mrrc_wait(v->fd, 300) == 1; i++)
		if (mrrc_poll_cq(v->fd, &c, 1) == 1)
			ASSERT_EQ(MRRC_OP_EVENT, c.opcode)
				TH_LOG("operation %llu completed after the flush",
				       (unsigned long long)c.wr_id);
	go_only(v, ATK_END);
	free(w);
	free(seen);
	VERDICT();
}

TEST_F(hostile, zz_agent_quits)
{
	struct ctl m;
	int s = agent_dial(CTL_PORT, 10000);

	ASSERT_LE(0, s);
	ASSERT_EQ(0, ctl_send(s, CTL_QUIT, 0, 0, 0, NULL));
	ASSERT_EQ(0, ctl_recv(s, CTL_OK, &m));
	close(s);
	EXPECT_EQ(0, debugfs_contexts());
}

#define main harness_main
TEST_HARNESS_MAIN
#undef main

int main(int argc, char **argv)
{
	return pair_main(argc, argv, CTL_PORT, serve, harness_main);
}
