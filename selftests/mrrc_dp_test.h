/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers of the data-path selftests (mrrc_data.c, mrrc_remote.c): clocks,
 * completions, the test pattern, registrations.  The including file
 * defines TMO_MS, how long reap() waits.
 */
#ifndef MRRC_DP_TEST_H
#define MRRC_DP_TEST_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <time.h>

#include "libmrrc.h"

static inline int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Collect exactly @n completions from @fd: 0, or -ETIMEDOUT after TMO_MS
 * without one.
 */
static inline int reap(int fd, struct mrrc_cqe *cqe, unsigned int n)
{
	int64_t end = now_ms() + TMO_MS;
	unsigned int got = 0;
	int r;

	while (got < n) {
		r = mrrc_poll_cq(fd, cqe + got, n - got);
		if (r < 0)
			return r;
		got += r;
		if (got == n)
			break;
		/* A hang guard: TMO_MS without any completion, not in all. */
		if (r > 0)
			end = now_ms() + TMO_MS;
		else if (now_ms() > end)
			return -ETIMEDOUT;
		mrrc_wait(fd, 100);
	}
	return 0;
}

/* The next completion of an operation on @fd, events skipped: 0 or -errno. */
static inline int reap_op(int fd, struct mrrc_cqe *c)
{
	int r;

	do {
		r = reap(fd, c, 1);
	} while (!r && c->opcode == MRRC_OP_EVENT);
	return r;
}

static inline struct mrrc_wr wr(uint32_t conn, uint8_t op, void *addr, size_t len,
			 uint64_t wr_id)
{
	struct mrrc_wr w = {
		.wr_id = wr_id, .conn = conn, .opcode = op,
		.addr = (uintptr_t)addr, .len = len,
	};

	return w;
}

static inline int post1(int fd, struct mrrc_wr w)
{
	return mrrc_post(fd, &w, 1, NULL);
}

/* The test VM's own address (tools/vm/guest.sh) and a port on it. */
#define VM_ADDR		"10.211.0.1"

static inline struct sockaddr_in vm_addr(uint16_t port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};

	inet_pton(AF_INET, VM_ADDR, &sin.sin_addr);
	return sin;
}

/* Wait for connection event @ev on @fd; returns its cqe's conn or -err. */
static inline int wait_event(int fd, int ev, struct mrrc_cqe *out)
{
	struct mrrc_cqe c;
	int r;

	for (;;) {
		r = reap(fd, &c, 1);
		if (r)
			return r;
		if (c.opcode == MRRC_OP_EVENT && c.event == ev) {
			if (out)
				*out = c;
			return c.conn;
		}
		if (c.opcode == MRRC_OP_EVENT)
			return -EPROTO;
	}
}

/* The test pattern: byte @i of a buffer filled with @seed. */
static inline uint8_t pat(uint32_t seed, size_t i)
{
	return (uint8_t)(seed * 2654435761u + i * 40503u + (i >> 8));
}

static inline void fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *b = buf;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = pat(seed, i);
}

/* 0, or 1 + the offset of the first wrong byte. */
static inline size_t check(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *b = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != pat(seed, i))
			return i + 1;
	return 0;
}

/* Register @len bytes at @buf on @fd: one segment, or -EOVERFLOW. */
static inline int reg1(int fd, void *buf, size_t len, uint32_t access,
		       struct mrrc_seg *seg, uint32_t *handle)
{
	struct mrrc_reg_req req = {
		.addr = (uintptr_t)buf, .length = len, .access = access,
	};
	unsigned int n = 1;
	int r = mrrc_reg(fd, &req, 1, seg, &n);

	if (r != 1)
		return r < 0 ? r : -EIO;
	*handle = req.handle;
	return req.nsegs == 1 ? 0 : -EOVERFLOW;
}

/*
 * Export @len bytes at @buf with the remote rights @access to the peer of
 * @conn: one segment and the export's id, or -EOVERFLOW (revoked).
 */
static inline int export1(int fd, uint32_t conn, void *buf, size_t len,
			  uint32_t access, struct mrrc_seg *seg, uint32_t *id)
{
	unsigned int n = 1;

	return mrrc_export(fd, buf, len, access, &conn, 1, seg, &n, id);
}

/* Cache two separate regions, so a range across them has two segments. */
static inline int two_regions(int fd, uint8_t *buf, uint32_t access)
{
	struct mrrc_reg_req r[2] = {
		{ .addr = (uintptr_t)buf, .length = 8192, .access = access,
		  .flags = MRRC_REG_RELEASE },
		{ .addr = (uintptr_t)buf + 8192, .length = 8192,
		  .access = access, .flags = MRRC_REG_RELEASE },
	};
	struct mrrc_seg seg[2];
	unsigned int n = 2;

	return mrrc_reg(fd, r, 2, seg, &n);
}

#endif /* MRRC_DP_TEST_H */
