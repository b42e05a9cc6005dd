// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * libmrrc - FRRWP transactions (the JNCA 2008 paper, section 6, Figs. 5-6).
 *
 * A client moves a buffer to (write) or from (read) a server buffer that
 * need not be registered yet.  The client's first message starts the
 * transaction.
 *
 * MRRC_FRRWP: both sides register in parallel and the data moves through
 * CRW/STCRW.  Write: the client posts SEND(start) and CRW(tag, buf) in one
 * call; the server, on the start message, posts STCRW(tag, buf); the
 * module of the client writes from its completion path when the STCRW
 * arrives, and the server's STCRW completes when the data has landed.
 * Read: the same with the roles of the buffers swapped, the server
 * writing into the client's buffer (read as server write).
 *
 * MRRC_FRRWP_TRADITIONAL (Fig. 5): the server registers after the start
 * message (MRRC_IOC_EXPORT of exactly the bytes served, for this
 * connection, with the one right the transfer needs) and replies with the
 * export's segments (address, length, rkey: one per cached region the
 * buffer lies in); only then does the client register (inside POST),
 * post the RDMA WRITEs or READs, wait for them, and send "done"; the
 * server then revokes the export.
 *
 * Each call waits for its own completions on the context, so a context
 * running transactions must have no other operations in flight.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "libmrrc.h"

#define MRRC_EXPORT __attribute__((visibility("default")))

#define FRRWP_MAGIC	0x46525258u	/* "FRRX": v2, segments in the reply */
#define FRRWP_WRID	(0xf7ULL << 56)
#define FRRWP_SEGS	MRRC_EXPORT_SEGS
/* wr_id bits: 0-3 messages, 4.. the transfer's segments */
#define FRRWP_XFER	4

enum { FRRWP_OP_WRITE = 1, FRRWP_OP_READ = 2 };
enum { FRRWP_START = 1, FRRWP_REPLY = 2, FRRWP_DONE = 3 };

struct frrwp_seg {
	uint64_t addr;
	uint32_t len;
	uint32_t rkey;
};

struct frrwp_msg {
	uint32_t magic;
	uint16_t type;
	uint8_t op;
	uint8_t mode;
	uint64_t tag;
	uint64_t len;
	uint32_t nsegs;		/* REPLY: entries of seg */
	int32_t status;
	struct frrwp_seg seg[FRRWP_SEGS];
};

/* Message buffers at fixed addresses, so their registrations stay cached. */
static __thread struct frrwp_msg frrwp_out, frrwp_in;
static __thread uint64_t frrwp_tag;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Take completions of @conn's operations in @want (bits of wr_id's low
 * byte) until none is left, the deadline @end (ms, -1: none) passes, or
 * an error has been seen and nothing more is ready.  Never takes more
 * completions than it waits for, so what follows the transaction (the
 * peer's disconnect, say) stays on @fd.
 */
static int frrwp_collect(int fd, uint32_t conn, unsigned int *want,
			 int64_t end, struct mrrc_cqe *last)
{
	struct mrrc_cqe cqe[8];
	int i, n, ret = 0;

	while (*want) {
		n = __builtin_popcount(*want);
		n = mrrc_poll_cq(fd, cqe, n < 8 ? n : 8);
		if (n < 0)
			return n;
		for (i = 0; i < n; i++) {
			if (cqe[i].opcode == MRRC_OP_EVENT &&
			    cqe[i].conn == conn) {
				/* A disconnect: our operations flush next. */
				ret = ret ?: (cqe[i].status ?: -ECONNRESET);
				continue;
			}
			if ((cqe[i].wr_id & ~0xffULL) != FRRWP_WRID ||
			    cqe[i].conn != conn) {
				ret = ret ?: -EPROTO;
				continue;
			}
			*want &= ~(1u << (cqe[i].wr_id & 0xff));
			if (cqe[i].status)
				ret = ret ?: cqe[i].status;
			if (last)
				*last = cqe[i];
		}
		if (n)
			continue;
		if (ret)
			return ret;
		if (end >= 0 && now_ms() >= end)
			return -ETIMEDOUT;
		n = mrrc_wait(fd, end < 0 ? -1 : (int)(end - now_ms()));
		if (n < 0)
			return n;
	}
	return ret;
}

/*
 * Wait until every operation in @want completed: 0, or the first error,
 * EPROTO for a completion that is not ours, ETIMEDOUT after @timeout_ms.
 * A transaction that fails with operations still outstanding is given
 * up: @conn is disconnected so that they flush, and they are taken here,
 * so that no later call mistakes them for its own.
 */
static int frrwp_reap(int fd, uint32_t conn, unsigned int want,
		      int timeout_ms, struct mrrc_cqe *last)
{
	int64_t end = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	int ret = frrwp_collect(fd, conn, &want, end, last);

	if (want) {
		mrrc_disconnect(fd, conn);
		frrwp_collect(fd, conn, &want, now_ms() + 5000, NULL);
	}
	return ret;
}

static void frrwp_wr(struct mrrc_wr *wr, uint32_t conn, int bit, uint8_t op,
		     const void *addr, size_t len)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = FRRWP_WRID | bit;
	wr->conn = conn;
	wr->opcode = op;
	wr->addr = (uintptr_t)addr;
	wr->len = len;
}

/*
 * Post @n operations.  If only some are accepted, the transaction is given
 * up and their completions taken (frrwp_reap()) before the error returns.
 */
static int frrwp_post(int fd, struct mrrc_wr *wrs, unsigned int n,
		      int timeout_ms)
{
	unsigned int done = 0, mask = 0, i;
	int ret = mrrc_post(fd, wrs, n, &done);

	if (!ret && done == n)
		return 0;
	for (i = 0; i < done && i < n; i++)
		mask |= 1u << (wrs[i].wr_id & 0xff);
	if (mask)
		frrwp_reap(fd, wrs[0].conn, mask, timeout_ms, NULL);
	return ret ?: -EIO;
}

/* A status from the peer: 0, its negative errno, or EPROTO for garbage. */
static int frrwp_status(int32_t st)
{
	if (!st || (st < 0 && st >= -4095))
		return st;
	return -EPROTO;
}

/*
 * The server's reply is a peer's word: 1 to FRRWP_SEGS segments, each
 * non-empty, end to end, adding up to its length.  Returns the bytes to
 * move (at most @len), or a negative errno.
 */
static int64_t frrwp_reply_len(const struct frrwp_msg *m, size_t len, int op)
{
	uint64_t total = 0;
	uint32_t i;

	if (!m->nsegs || m->nsegs > FRRWP_SEGS)
		return -EPROTO;
	for (i = 0; i < m->nsegs; i++) {
		if (!m->seg[i].len ||
		    m->seg[i].addr + m->seg[i].len < m->seg[i].addr ||
		    (i && m->seg[i].addr !=
			  m->seg[i - 1].addr + m->seg[i - 1].len))
			return -EPROTO;
		total += m->seg[i].len;
	}
	if (total != m->len)
		return -EPROTO;
	/* As with CRW into a shorter STCRW: a write must fit whole. */
	if (op == FRRWP_OP_WRITE && total < len)
		return -EMSGSIZE;
	return total < len ? (int64_t)total : (int64_t)len;
}

static int frrwp_client(int fd, uint32_t conn, void *buf, size_t len,
			int op, int mode, int timeout_ms)
{
	struct mrrc_wr wr[FRRWP_SEGS];
	unsigned int want = 0;
	uint64_t off = 0;
	int64_t n;
	uint32_t i;
	int ret;

	if (!buf || !len || (mode != MRRC_FRRWP &&
			     mode != MRRC_FRRWP_TRADITIONAL))
		return -EINVAL;

	memset(&frrwp_out, 0, sizeof(frrwp_out));
	frrwp_out.magic = FRRWP_MAGIC;
	frrwp_out.type = FRRWP_START;
	frrwp_out.op = op;
	frrwp_out.mode = mode;
	frrwp_out.tag = ++frrwp_tag;
	frrwp_out.len = len;

	if (mode == MRRC_FRRWP) {
		/* Start the server, then register and hold our side. */
		frrwp_wr(&wr[0], conn, 0, MRRC_OP_SEND, &frrwp_out,
			 sizeof(frrwp_out));
		frrwp_wr(&wr[1], conn, 1, op == FRRWP_OP_WRITE ?
			 MRRC_OP_CRW : MRRC_OP_STCRW, buf, len);
		wr[1].tag = frrwp_out.tag;
		ret = frrwp_post(fd, wr, 2, timeout_ms);
		if (!ret)
			ret = frrwp_reap(fd, conn, 0x3, timeout_ms, NULL);
		return ret;
	}

	/* Traditional: ask, wait for the server's keys, then go. */
	/* A short or missing message leaves nothing of an earlier one. */
	memset(&frrwp_in, 0, sizeof(frrwp_in));
	frrwp_wr(&wr[0], conn, 0, MRRC_OP_RECV, &frrwp_in, sizeof(frrwp_in));
	frrwp_wr(&wr[1], conn, 1, MRRC_OP_SEND, &frrwp_out,
		 sizeof(frrwp_out));
	ret = frrwp_post(fd, wr, 2, timeout_ms);
	if (!ret)
		ret = frrwp_reap(fd, conn, 0x3, timeout_ms, NULL);
	if (ret)
		return ret;
	if (frrwp_in.magic != FRRWP_MAGIC || frrwp_in.type != FRRWP_REPLY ||
	    frrwp_in.tag != frrwp_out.tag)
		return -EPROTO;
	if (frrwp_in.status)
		return frrwp_status(frrwp_in.status);

	/* One WRITE or READ per segment of the server's export. */
	n = frrwp_reply_len(&frrwp_in, len, op);
	ret = n < 0 ? (int)n : 0;
	for (i = 0; !ret && off < (uint64_t)n; i++) {
		uint64_t k = frrwp_in.seg[i].len;

		if (k > (uint64_t)n - off)
			k = (uint64_t)n - off;
		frrwp_wr(&wr[i], conn, FRRWP_XFER + i, op == FRRWP_OP_WRITE ?
			 MRRC_OP_WRITE : MRRC_OP_READ, (char *)buf + off, k);
		wr[i].remote_addr = frrwp_in.seg[i].addr;
		wr[i].rkey = frrwp_in.seg[i].rkey;
		want |= 1u << (FRRWP_XFER + i);
		off += k;
	}
	if (!ret)
		ret = frrwp_post(fd, wr, i, timeout_ms);
	if (!ret)
		ret = frrwp_reap(fd, conn, want, timeout_ms, NULL);

	/* Tell the server, even after a failure, so it stops waiting. */
	frrwp_out.type = FRRWP_DONE;
	frrwp_out.status = ret;
	frrwp_wr(&wr[0], conn, 3, MRRC_OP_SEND, &frrwp_out, sizeof(frrwp_out));
	if (!frrwp_post(fd, wr, 1, timeout_ms)) {
		int r = frrwp_reap(fd, conn, 0x8, timeout_ms, NULL);

		ret = ret ?: r;
	}
	return ret;
}

MRRC_EXPORT int mrrc_frrwp_write(int fd, uint32_t conn, const void *buf,
				 size_t len, int mode, int timeout_ms)
{
	return frrwp_client(fd, conn, (void *)buf, len, FRRWP_OP_WRITE, mode,
			    timeout_ms);
}

MRRC_EXPORT int mrrc_frrwp_read(int fd, uint32_t conn, void *buf, size_t len,
				int mode, int timeout_ms)
{
	return frrwp_client(fd, conn, buf, len, FRRWP_OP_READ, mode,
			    timeout_ms);
}

/*
 * Serve one transaction: returns the number of bytes the client wrote or
 * read, or a negative errno.
 */
MRRC_EXPORT int mrrc_frrwp_serve(int fd, uint32_t conn, void *buf, size_t len,
				 int timeout_ms)
{
	struct mrrc_seg segs[FRRWP_SEGS];
	unsigned int nsegs = FRRWP_SEGS, i;
	struct mrrc_wr wr[2];
	struct mrrc_cqe cqe;
	uint32_t xid;
	size_t n;
	int ret;

	if (!buf || !len || len > INT32_MAX)
		return -EINVAL;
	/* A short or missing message leaves nothing of an earlier one. */
	memset(&frrwp_in, 0, sizeof(frrwp_in));
	frrwp_wr(&wr[0], conn, 0, MRRC_OP_RECV, &frrwp_in, sizeof(frrwp_in));
	ret = frrwp_post(fd, wr, 1, timeout_ms);
	if (!ret)
		ret = frrwp_reap(fd, conn, 0x1, timeout_ms, NULL);
	if (ret)
		return ret;
	if (frrwp_in.magic != FRRWP_MAGIC || frrwp_in.type != FRRWP_START ||
	    (frrwp_in.op != FRRWP_OP_WRITE && frrwp_in.op != FRRWP_OP_READ))
		return -EPROTO;
	n = frrwp_in.len < len ? frrwp_in.len : len;

	if (frrwp_in.mode == MRRC_FRRWP) {
		frrwp_wr(&wr[0], conn, 1, frrwp_in.op == FRRWP_OP_WRITE ?
			 MRRC_OP_STCRW : MRRC_OP_CRW, buf, n);
		wr[0].tag = frrwp_in.tag;
		ret = frrwp_post(fd, wr, 1, timeout_ms);
		if (!ret)
			ret = frrwp_reap(fd, conn, 0x2, timeout_ms, &cqe);
		if (ret)
			return ret;
		return frrwp_in.op == FRRWP_OP_WRITE ? (int)cqe.byte_len :
						      (int)n;
	}

	/* Traditional: expose now, reply with the keys, wait for "done". */
	memset(&frrwp_out, 0, sizeof(frrwp_out));
	frrwp_out.magic = FRRWP_MAGIC;
	frrwp_out.type = FRRWP_REPLY;
	frrwp_out.tag = frrwp_in.tag;
	ret = mrrc_export(fd, buf, n, frrwp_in.op == FRRWP_OP_WRITE ?
			  MRRC_ACCESS_REMOTE_WRITE : MRRC_ACCESS_REMOTE_READ,
			  &conn, 1, segs, &nsegs, &xid);
	if (ret) {
		frrwp_out.status = ret;
	} else {
		for (i = 0; i < nsegs; i++) {
			frrwp_out.seg[i].addr = segs[i].addr;
			frrwp_out.seg[i].len = (uint32_t)segs[i].length;
			frrwp_out.seg[i].rkey = segs[i].rkey;
		}
		frrwp_out.nsegs = nsegs;
		frrwp_out.len = n;
	}
	memset(&frrwp_in, 0, sizeof(frrwp_in));
	frrwp_wr(&wr[0], conn, 2, MRRC_OP_RECV, &frrwp_in, sizeof(frrwp_in));
	frrwp_wr(&wr[1], conn, 3, MRRC_OP_SEND, &frrwp_out,
		 sizeof(frrwp_out));
	if (ret) {
		/* No "done" follows a refusal. */
		if (!frrwp_post(fd, &wr[1], 1, timeout_ms))
			frrwp_reap(fd, conn, 0x8, timeout_ms, NULL);
		return ret;
	}
	ret = frrwp_post(fd, wr, 2, timeout_ms);
	if (!ret)
		ret = frrwp_reap(fd, conn, 0xc, timeout_ms, NULL);
	/* Revoked before we look at "done": the key is dead by then. */
	mrrc_unexport(fd, xid);
	/*
	 * The client's "done" proves it had the reply: the buffer was
	 * zeroed above and advertised for this transaction alone, and the
	 * client sends it (with this tag) only after the reply.  A client
	 * that exits right after can have our SEND of the reply flushed
	 * before its ACK was processed (ECONNRESET), or the RECV itself
	 * flushed after its bytes were written: the transaction happened
	 * all the same.
	 */
	if (frrwp_in.magic == FRRWP_MAGIC && frrwp_in.type == FRRWP_DONE &&
	    frrwp_in.tag == frrwp_out.tag)
		return frrwp_in.status ? frrwp_status(frrwp_in.status) : (int)n;
	return ret ?: -EPROTO;
}
