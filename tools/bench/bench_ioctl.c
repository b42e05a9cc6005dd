// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench_ioctl - what one trip through /dev/mrrc costs.
 *
 * Per-call latency of a null system call (getppid), of an ioctl the
 * dispatcher rejects (ENOTTY: entry and exit only), of MRRC_IOC_CTX_QUERY
 * on a bound context (size-first copy in, context lock, copy out), of
 * MRRC_IOC_QUERY (also walks the device list) and of MRRC_IOC_POLL with
 * nothing to harvest (what a caller spinning for a completion pays per
 * look).  Later issues batch many operations per ioctl; this is the
 * overhead they amortise.
 *
 * Output: one JSON object per line, see Documentation/testing.rst, with
 * the keys of the run (benchjson.h).
 *
 * usage: bench_ioctl [-d DEV] [ITERS]: on RDMA device DEV (default
 * $MRRC_DEV, else rxe0), ITERS calls per run (default 100000).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "benchjson.h"
#include "libmrrc.h"

#define RUNS 7

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

enum op { OP_NULL_SYSCALL, OP_ENOTTY, OP_CTX_QUERY, OP_QUERY, OP_POLL_EMPTY };

static const char *const op_name[] = {
	[OP_NULL_SYSCALL] = "null_syscall",
	[OP_ENOTTY] = "ioctl_enotty",
	[OP_CTX_QUERY] = "ctx_query",
	[OP_QUERY] = "query",
	[OP_POLL_EMPTY] = "poll_empty",
};

static int one(enum op op, int fd)
{
	struct mrrc_ctx_query cq = { .size = sizeof(cq) };
	struct mrrc_query q = { .size = sizeof(q) };
	struct mrrc_cqe c;

	switch (op) {
	case OP_NULL_SYSCALL:
		return syscall(SYS_getppid) > 0 ? 0 : -1;
	case OP_ENOTTY:
		return ioctl(fd, _IO(MRRC_TYPE, 0), NULL) < 0 && errno == ENOTTY ? 0 : -1;
	case OP_CTX_QUERY:
		return ioctl(fd, MRRC_IOC_CTX_QUERY, &cq);
	case OP_QUERY:
		return ioctl(fd, MRRC_IOC_QUERY, &q);
	case OP_POLL_EMPTY:
		return mrrc_poll_cq(fd, &c, 1) ? -1 : 0;
	}
	return -1;
}

/* The rest of a line after "bench", "metric" and "value"; @stat or NULL. */
static void keys(const char *unit, enum op op, const char *stat, long iters)
{
	printf("\"unit\":\"%s\",\"op\":\"%s\",", unit, op_name[op]);
	if (stat)
		printf("\"stat\":\"%s\",", stat);
	printf("\"iterations\":%ld,\"runs\":%d,\"kver\":", iters, RUNS);
	bench_json_str(stdout, bench_kernel());
	bench_json_end(stdout);
}

int main(int argc, char **argv)
{
	long iters = 100000;
	double per_run[RUNS], base = 0;
	int fd, ret, arg;

	arg = bench_options(argc, argv, "bench_ioctl", " [ITERS]",
			    "  ITERS   calls per run (default 100000)\n", 1);
	if (arg < argc)
		iters = bench_opt_u64("bench_ioctl", "ITERS", argv[arg], 1,
				      1000000000);

	fd = mrrc_open(0);
	if (fd < 0) {
		fprintf(stderr, "bench_ioctl: open: %s\n", strerror(-fd));
		return 1;
	}
	ret = mrrc_bind(fd, bench_dev(), NULL);
	if (ret) {
		fprintf(stderr, "bench_ioctl: bind %s: %s\n", bench_dev(),
			strerror(-ret));
		return 1;
	}

	for (int op = OP_NULL_SYSCALL; op <= OP_POLL_EMPTY; op++) {
		for (long i = 0; i < iters / 10; i++)	/* warm up */
			if (one(op, fd))
				return 1;
		for (int r = 0; r < RUNS; r++) {
			uint64_t t0 = now_ns();

			for (long i = 0; i < iters; i++)
				if (one(op, fd)) {
					fprintf(stderr, "bench_ioctl: %s failed\n",
						op_name[op]);
					return 1;
				}
			per_run[r] = (double)(now_ns() - t0) / iters;
		}
		qsort(per_run, RUNS, sizeof(per_run[0]), cmp_double);
		if (op == OP_NULL_SYSCALL)
			base = per_run[RUNS / 2];
		printf("{\"bench\":\"ioctl\",\"metric\":\"latency_ns\","
		       "\"value\":%.1f,", per_run[RUNS / 2]);
		keys("ns", op, "median_of_run_means", iters);
		printf("{\"bench\":\"ioctl\",\"metric\":\"ratio_to_null_syscall\","
		       "\"value\":%.2f,", per_run[RUNS / 2] / base);
		keys("ratio", op, NULL, iters);
	}
	close(fd);
	return 0;
}
