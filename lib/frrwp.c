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
 * message and replies with address and rkey; only then does the client
 * register, post the RDMA WRITE or READ, wait for it, and send "done".
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

#define FRRWP_MAGIC	0x46525257u	/* "FRRW" */
#define FRRWP_WRID	(0xf7ULL << 56)

enum { FRRWP_OP_WRITE = 1, FRRWP_OP_READ = 2 };
enum { FRRWP_START = 1, FRRWP_REPLY = 2, FRRWP_DONE = 3 };

struct frrwp_msg {
	uint32_t magic;
	uint16_t type;
	uint8_t op;
	uint8_t mode;
	uint64_t tag;
	uint64_t len;
	uint64_t addr;
	uint32_t rkey;
	int32_t status;
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
 * Wait until every operation in @want (bits of wr_id low byte) completed.
 * Fails on the first error, on a completion that is not ours, or on the
 * deadline.  Never takes more completions than it waits for, so what
 * follows the transaction (the peer's disconnect, say) stays on @fd.
 */
static int frrwp_reap(int fd, uint32_t conn, unsigned int want,
		      int timeout_ms, struct mrrc_cqe *last)
{
	int64_t end = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	struct mrrc_cqe cqe[8];
	int i, n, ret = 0;

	while (want) {
		n = mrrc_poll_cq(fd, cqe, __builtin_popcount(want));
		if (n < 0)
			return n;
		for (i = 0; i < n; i++) {
			if (cqe[i].opcode == MRRC_OP_EVENT &&
			    cqe[i].conn == conn) {
				/* A disconnect: our operations flush next. */
				ret = ret ?: (cqe[i].status ?: -ECONNRESET);
				continue;
			}
			if ((cqe[i].wr_id & ~0xffULL) != FRRWP_WRID) {
				ret = ret ?: -EPROTO;
				continue;
			}
			want &= ~(1u << (cqe[i].wr_id & 0xff));
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

static int frrwp_post(int fd, struct mrrc_wr *wrs, unsigned int n)
{
	unsigned int done = 0;
	int ret = mrrc_post(fd, wrs, n, &done);

	return ret ?: (done == n ? 0 : -EIO);
}

/* Register @buf for the traditional process: one segment, its handle. */
static int frrwp_reg(int fd, const void *buf, size_t len, uint32_t access,
		     struct mrrc_seg *seg, uint32_t *handle)
{
	struct mrrc_reg_req req = {
		.addr = (uintptr_t)buf,
		.length = len,
		.access = access,
	};
	unsigned int nsegs = 1;
	int ret;

	ret = mrrc_reg(fd, &req, 1, seg, &nsegs);
	if (ret < 0)
		return ret;
	*handle = req.handle;
	if (req.nsegs != 1) {
		mrrc_release(fd, handle, 1);
		return -EOVERFLOW;
	}
	return 0;
}

static int frrwp_client(int fd, uint32_t conn, void *buf, size_t len,
			int op, int mode, int timeout_ms)
{
	struct mrrc_wr wr[3];
	struct mrrc_seg seg;
	uint32_t handle;
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
		ret = frrwp_post(fd, wr, 2);
		if (!ret)
			ret = frrwp_reap(fd, conn, 0x3, timeout_ms, NULL);
		return ret;
	}

	/* Traditional: ask, wait for the server's rkey, then go. */
	frrwp_wr(&wr[0], conn, 0, MRRC_OP_RECV, &frrwp_in, sizeof(frrwp_in));
	frrwp_wr(&wr[1], conn, 1, MRRC_OP_SEND, &frrwp_out,
		 sizeof(frrwp_out));
	ret = frrwp_post(fd, wr, 2);
	if (!ret)
		ret = frrwp_reap(fd, conn, 0x3, timeout_ms, NULL);
	if (ret)
		return ret;
	if (frrwp_in.magic != FRRWP_MAGIC || frrwp_in.type != FRRWP_REPLY ||
	    frrwp_in.tag != frrwp_out.tag)
		return -EPROTO;
	if (frrwp_in.status)
		return frrwp_in.status;

	ret = frrwp_reg(fd, buf, len, op == FRRWP_OP_READ ?
			MRRC_ACCESS_LOCAL_WRITE : 0, &seg, &handle);
	if (ret)
		return ret;
	frrwp_wr(&wr[0], conn, 2, op == FRRWP_OP_WRITE ? MRRC_OP_WRITE :
		 MRRC_OP_READ, buf, len);
	wr[0].flags = MRRC_WR_HANDLE;
	wr[0].handle = handle;
	wr[0].remote_addr = frrwp_in.addr;
	wr[0].rkey = frrwp_in.rkey;
	ret = frrwp_post(fd, wr, 1);
	if (!ret)
		ret = frrwp_reap(fd, conn, 0x4, timeout_ms, NULL);
	mrrc_release(fd, &handle, 1);

	/* Tell the server, even after a failure, so it stops waiting. */
	frrwp_out.type = FRRWP_DONE;
	frrwp_out.status = ret;
	frrwp_wr(&wr[0], conn, 3, MRRC_OP_SEND, &frrwp_out, sizeof(frrwp_out));
	if (!frrwp_post(fd, wr, 1)) {
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
	struct mrrc_wr wr[2];
	struct mrrc_cqe cqe;
	struct mrrc_seg seg;
	uint32_t handle;
	size_t n;
	int ret;

	if (!buf || !len || len > INT32_MAX)
		return -EINVAL;
	frrwp_wr(&wr[0], conn, 0, MRRC_OP_RECV, &frrwp_in, sizeof(frrwp_in));
	ret = frrwp_post(fd, wr, 1);
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
		ret = frrwp_post(fd, wr, 1);
		if (!ret)
			ret = frrwp_reap(fd, conn, 0x2, timeout_ms, &cqe);
		if (ret)
			return ret;
		return frrwp_in.op == FRRWP_OP_WRITE ? (int)cqe.byte_len :
						      (int)n;
	}

	/* Traditional: register now, reply with the rkey, wait for "done". */
	memset(&frrwp_out, 0, sizeof(frrwp_out));
	frrwp_out.magic = FRRWP_MAGIC;
	frrwp_out.type = FRRWP_REPLY;
	frrwp_out.tag = frrwp_in.tag;
	ret = frrwp_reg(fd, buf, n, frrwp_in.op == FRRWP_OP_WRITE ?
			MRRC_ACCESS_LOCAL_WRITE | MRRC_ACCESS_REMOTE_WRITE :
			MRRC_ACCESS_REMOTE_READ, &seg, &handle);
	if (ret) {
		frrwp_out.status = ret;
	} else {
		frrwp_out.addr = seg.addr;
		frrwp_out.rkey = seg.rkey;
		frrwp_out.len = n;
	}
	frrwp_wr(&wr[0], conn, 2, MRRC_OP_RECV, &frrwp_in, sizeof(frrwp_in));
	frrwp_wr(&wr[1], conn, 3, MRRC_OP_SEND, &frrwp_out,
		 sizeof(frrwp_out));
	if (ret) {
		/* No "done" follows a refusal. */
		if (!frrwp_post(fd, &wr[1], 1))
			frrwp_reap(fd, conn, 0x8, timeout_ms, NULL);
		return ret;
	}
	ret = frrwp_post(fd, wr, 2);
	if (!ret)
		ret = frrwp_reap(fd, conn, 0xc, timeout_ms, NULL);
	mrrc_release(fd, &handle, 1);
	if (ret)
		return ret;
	if (frrwp_in.magic != FRRWP_MAGIC || frrwp_in.type != FRRWP_DONE)
		return -EPROTO;
	return frrwp_in.status ? frrwp_in.status : (int)n;
}
