// SPDX-License-Identifier: GPL-2.0-only
/*
 * BENCH=ops, the module path: latency and throughput of WRITE, READ and
 * SEND through /dev/mrrc, 64 B to 64 KiB, batches of 1 and 16.  Client and
 * server are two contexts of this process on one RDMA device; the buffers
 * are registered once (cache hits), so this measures the data path, not
 * registration.  Run by bench_ops.sh, which adds the libibverbs reference.
 *
 * latency: one operation posted, then polled to completion, ITERS times.
 * throughput: OPS operations, posted @batch per MRRC_IOC_POST with at most
 * WINDOW outstanding, completions harvested many per MRRC_IOC_POLL.
 *
 * With the operand "isolated", both sides' connections are
 * MRRC_CONN_ISOLATED (a PD and a cache each); every line says which in
 * "conn", and "pair_setup" lines time making a connected pair (two
 * contexts opened and bound, LISTEN, CONNECT, ACCEPT, both ESTABLISHED)
 * and closing it.
 *
 * usage: mrrc_ops [-d DEV] [isolated]: on RDMA device DEV (default
 * $MRRC_DEV, else rxe0).  The server listens on BENCH_ADDR (veth0 in the test VM), which
 * must be an address of DEV's network device.  One JSON line per
 * measurement, with the keys of the run (benchjson.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchconn.h"
#include "benchjson.h"
#include "libmrrc.h"

#define ITERS	300
#define OPS	4000
#define WINDOW	64
#define PAIRS	10

static const unsigned int sizes[] = { 64, 512, 4096, 16384, 65536 };
static const uint8_t ops[] = { MRRC_OP_WRITE, MRRC_OP_READ, MRRC_OP_SEND };
static const char *const op_name[] = { "write", "read", "send" };

static int sfd, cfd;
static uint32_t sconn, cconn;
static uint32_t conn_flags;
static const char *conn_name = "shared";
static struct mrrc_seg rseg;
static uint8_t *sbuf, *cbuf;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int setup(void)
{
	struct bench_pair pr;
	unsigned int n = 1;
	uint32_t xid;
	int r;

	r = bench_pair_open_flags(&pr, 18516, NULL, conn_flags);
	if (r)
		return r;
	sfd = pr.sfd;
	cfd = pr.cfd;
	sconn = pr.sconn;
	cconn = pr.cconn;

	sbuf = aligned_alloc(4096, WINDOW * 65536);
	cbuf = aligned_alloc(4096, WINDOW * 65536);
	if (!sbuf || !cbuf)
		return -ENOMEM;
	memset(sbuf, 1, WINDOW * 65536);
	memset(cbuf, 2, WINDOW * 65536);
	/* The server's window, exported to the client once for the run. */
	return mrrc_export(sfd, sbuf, WINDOW * 65536,
			   MRRC_ACCESS_REMOTE_WRITE | MRRC_ACCESS_REMOTE_READ,
			   &sconn, 1, &rseg, &n, &xid);
}

static struct mrrc_wr make(uint8_t op, unsigned int size, unsigned int slot)
{
	struct mrrc_wr w = {
		.wr_id = slot, .conn = cconn, .opcode = op,
		.addr = (uintptr_t)cbuf + (size_t)slot * 65536, .len = size,
	};

	if (op != MRRC_OP_SEND) {
		w.remote_addr = rseg.addr + (size_t)slot * 65536;
		w.rkey = rseg.rkey;
	}
	return w;
}

/* Post @n RECVs of @size on the server side. */
static int recvs(unsigned int n, unsigned int size)
{
	struct mrrc_wr w[WINDOW];
	unsigned int i;

	for (i = 0; i < n; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].conn = sconn;
		w[i].opcode = MRRC_OP_RECV;
		w[i].addr = (uintptr_t)sbuf + (size_t)i * 65536;
		w[i].len = size;
	}
	return mrrc_post(sfd, w, n, NULL);
}

/* Harvest whatever is there on both sides; returns client completions. */
static int harvest(void)
{
	struct mrrc_cqe c[WINDOW];
	int n, i;

	n = mrrc_poll_cq(sfd, c, WINDOW);
	if (n < 0)
		return n;
	n = mrrc_poll_cq(cfd, c, WINDOW);
	for (i = 0; i < n; i++)
		if (c[i].status)
			return c[i].status;
	return n;
}

static double latency(uint8_t op, unsigned int size)
{
	double t0, total = 0;
	struct mrrc_wr w;
	unsigned int i;
	int n;

	for (i = 0; i <= ITERS; i++) {
		if (op == MRRC_OP_SEND && recvs(1, size))
			return -1;
		w = make(op, size, 0);
		t0 = now_us();
		if (mrrc_post(cfd, &w, 1, NULL))
			return -1;
		do {
			n = harvest();
		} while (!n);
		if (n < 0)
			return -1;
		if (i)
			total += now_us() - t0;
	}
	return total / ITERS;
}

static double throughput(uint8_t op, unsigned int size, unsigned int batch)
{
	unsigned int posted = 0, done = 0, out = 0, i, k;
	struct mrrc_wr w[16];
	double t0;
	int n;

	t0 = now_us();
	while (done < OPS) {
		while (posted < OPS && out + batch <= WINDOW) {
			k = OPS - posted < batch ? OPS - posted : batch;
			if (op == MRRC_OP_SEND && recvs(k, size))
				return -1;
			for (i = 0; i < k; i++)
				w[i] = make(op, size, (posted + i) % WINDOW);
			if (mrrc_post(cfd, w, k, NULL))
				return -1;
			posted += k;
			out += k;
		}
		n = harvest();
		if (n < 0)
			return -1;
		done += n;
		out -= n;
	}
	return OPS / ((now_us() - t0) / 1e6);
}

/* One JSON line: @value (@prec decimals) of ops[@oi] and sizes[@si]. */
static void line(const char *metric, double value, int prec,
		 const char *unit, unsigned int oi, unsigned int si,
		 unsigned int batch)
{
	printf("{\"bench\":\"ops\",\"metric\":\"%s\",\"value\":%.*f,"
	       "\"unit\":\"%s\",\"path\":\"mrrc\",\"op\":\"%s\","
	       "\"size_bytes\":%u,\"batch\":%u,\"conn\":\"%s\"", metric,
	       prec, value, unit, op_name[oi], sizes[si], batch, conn_name);
	bench_json_end(stdout);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The median over PAIRS of making a connected pair and of closing it,
 * in ms, before the measured pair exists.
 */
static int pair_setup(void)
{
	double open_ms[PAIRS], close_ms[PAIRS], t0;
	struct bench_pair pr;
	unsigned int i;
	int r;

	for (i = 0; i < PAIRS; i++) {
		t0 = now_us();
		r = bench_pair_open_flags(&pr, 18530 + i, NULL, conn_flags);
		if (r)
			return r;
		open_ms[i] = (now_us() - t0) / 1e3;
		t0 = now_us();
		bench_pair_close(&pr);
		close_ms[i] = (now_us() - t0) / 1e3;
	}
	qsort(open_ms, PAIRS, sizeof(double), cmp_double);
	qsort(close_ms, PAIRS, sizeof(double), cmp_double);
	printf("{\"bench\":\"ops\",\"metric\":\"pair_setup\","
	       "\"value\":%.2f,\"unit\":\"ms\",\"path\":\"mrrc\","
	       "\"conn\":\"%s\",\"pairs\":%u", open_ms[PAIRS / 2],
	       conn_name, PAIRS);
	bench_json_end(stdout);
	printf("{\"bench\":\"ops\",\"metric\":\"pair_close\","
	       "\"value\":%.2f,\"unit\":\"ms\",\"path\":\"mrrc\","
	       "\"conn\":\"%s\",\"pairs\":%u", close_ms[PAIRS / 2],
	       conn_name, PAIRS);
	bench_json_end(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int oi, si, b;
	int r;

	r = bench_options(argc, argv, "mrrc_ops", " [isolated]",
			  "  isolated  MRRC_CONN_ISOLATED connections\n", 1);
	if (r < argc) {
		if (strcmp(argv[r], "isolated")) {
			fprintf(stderr, "mrrc_ops: unknown operand '%s'\n",
				argv[r]);
			return 2;
		}
		conn_flags = MRRC_CONN_ISOLATED;
		conn_name = "isolated";
	}
	r = pair_setup();
	if (r) {
		fprintf(stderr, "bench_ops: pairs on %s: %s\n", bench_dev(),
			strerror(-r));
		return 1;
	}
	r = setup();
	if (r) {
		fprintf(stderr, "bench_ops: setup on %s: %s\n", bench_dev(),
			strerror(-r));
		return 1;
	}
	for (oi = 0; oi < 3; oi++) {
		for (si = 0; si < 5; si++) {
			double lat = latency(ops[oi], sizes[si]);

			if (lat < 0)
				return 1;
			line("latency", lat, 2, "us", oi, si, 1);
			for (b = 1; b <= 16; b += 15) {
				double tp = throughput(ops[oi], sizes[si], b);

				if (tp < 0)
					return 1;
				line("throughput", tp, 0, "ops_per_s", oi, si,
				     b);
			}
		}
	}
	return 0;
}
