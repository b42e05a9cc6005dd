// SPDX-License-Identifier: GPL-2.0-only
/*
 * BENCH=frrwp: latency of one complete FRRWP write and read transaction of
 * p pages into a server buffer that is not yet registered, against the
 * traditional sequential process (Fig. 5), and with warm caches.
 *
 * Two processes on one RDMA device (a forked server).  "Cold" transactions
 * use a fresh buffer on both sides every time (never registered before);
 * the small message buffers stay cached in every mode, as any real
 * application's would.  One JSON line per configuration: the median of
 * ITERS transactions, and the mean, with the keys of the run (benchjson.h).
 *
 * usage: bench_frrwp [-d DEV]: on RDMA device DEV (default $MRRC_DEV, else
 * rxe0).  The server listens on 10.211.0.1 (veth0 in the test VM), which
 * must be an address of DEV's network device.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "benchconn.h"
#include "benchjson.h"
#include "libmrrc.h"

#define ITERS		40
#define PAGE		4096UL
#define ARENA		(ITERS * 64 * PAGE)	/* every cold buffer, once */
#define TMO		30000

static const unsigned int pages[] = { 1, 2, 4, 8, 16, 32 };
static const char *const mode_name[] = { "frrwp", "traditional", "frrwp_warm" };

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The buffer of transaction @i of a configuration: fresh when cold. */
static uint8_t *buf_for(uint8_t *arena, int mode, unsigned int i)
{
	return mode == 2 ? arena : arena + (size_t)(i + 1) * 64 * PAGE;
}

/*
 * The schedule, the same on both sides: configuration @k's mode, op and
 * page count.  The three modes alternate for each page count, so that a
 * burst of load on the host lands on all three columns alike, not on
 * whichever mode ran then; configuration 0 is a warm-up, not reported.
 */
#define NCONF (1 + 3 * 2 * 6)

static void conf_of(unsigned int k, int *mode, int *op, unsigned int *pi)
{
	unsigned int idx = k ? k - 1 : 0;

	*mode = idx % 3;
	*pi = (idx / 3) % 6;
	*op = idx / 18;
}

static uint8_t *arena_map(void)
{
	uint8_t *a = mmap(NULL, ARENA + 128 * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return a == MAP_FAILED ? NULL : a;
}

/* One JSON line: @value us of @mode, @op, @np pages. */
static void line(const char *metric, double value, int mode, int op,
		 unsigned int np)
{
	printf("{\"bench\":\"frrwp\",\"metric\":\"%s\",\"value\":%.1f,"
	       "\"unit\":\"us\",\"mode\":\"%s\",\"op\":\"%s\","
	       "\"pages\":%u,\"iters\":%d", metric, value, mode_name[mode],
	       op ? "read" : "write", np, ITERS);
	bench_json_end(stdout);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(18600) };
	double lat[ITERS];
	unsigned int pi, i, k;
	uint32_t lis, conn;
	int fd, mode, op, st, pfd[2];
	char ready;
	uint8_t *arena;
	pid_t pid;

	bench_options(argc, argv, "bench_frrwp", "", "", 0);
	inet_pton(AF_INET, BENCH_ADDR, &sin.sin_addr);
	arena = arena_map();
	if (!arena || pipe(pfd))
		return 1;

	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		/* The server, in its own context: serve the same schedule. */
		int r;

		fd = mrrc_open(0);
		if (fd < 0 || mrrc_bind(fd, bench_dev(), NULL) ||
		    mrrc_listen(fd, (struct sockaddr *)&sin, 1, 0, &lis) ||
		    write(pfd[1], "l", 1) != 1)
			_exit(1);
		r = bench_wait_event(fd, MRRC_EVENT_CONNECT_REQUEST);

		if (r < 0 || mrrc_accept(fd, r, 0) ||
		    bench_wait_event(fd, MRRC_EVENT_ESTABLISHED) < 0)
			_exit(1);
		conn = r;
		memset(arena, 1, ARENA + 128 * PAGE);
		for (k = 0; k < NCONF; k++) {
			conf_of(k, &mode, &op, &pi);
			/* Nothing of the last round stays. */
			mrrc_flush(fd);
			for (i = 0; i <= ITERS; i++)
				if (mrrc_frrwp_serve(fd, conn,
						     buf_for(arena, mode, i),
						     pages[pi] * PAGE, TMO) < 0)
					_exit(2);
		}
		_exit(0);
	}

	if (read(pfd[0], &ready, 1) != 1)
		return 1;
	fd = mrrc_open(0);
	if (fd < 0 || mrrc_bind(fd, bench_dev(), NULL) ||
	    mrrc_connect(fd, (struct sockaddr *)&sin, NULL, 0, 0, &conn) ||
	    bench_wait_event(fd, MRRC_EVENT_ESTABLISHED) < 0) {
		fprintf(stderr, "bench_frrwp: cannot connect on %s\n",
			bench_dev());
		return 1;
	}
	memset(arena, 2, ARENA + 128 * PAGE);
	for (k = 0; k < NCONF; k++) {
		int m;
		size_t len;
		double sum = 0;

		conf_of(k, &mode, &op, &pi);
		m = mode == 1 ? MRRC_FRRWP_TRADITIONAL : MRRC_FRRWP;
		len = pages[pi] * PAGE;
		mrrc_flush(fd);
		/* Transaction 0 warms the message buffers. */
		for (i = 0; i <= ITERS; i++) {
			uint8_t *b = buf_for(arena, mode, i);
			double t0 = now_us();
			int r = op ? mrrc_frrwp_read(fd, conn, b, len, m, TMO) :
				     mrrc_frrwp_write(fd, conn, b, len, m, TMO);

			if (r) {
				fprintf(stderr, "bench_frrwp: %s: %s\n",
					mode_name[mode], strerror(-r));
				return 1;
			}
			if (i)
				lat[i - 1] = now_us() - t0;
		}
		if (!k)
			continue;
		for (i = 0; i < ITERS; i++)
			sum += lat[i];
		qsort(lat, ITERS, sizeof(lat[0]), cmp);
		line("latency_median", lat[ITERS / 2], mode, op, pages[pi]);
		line("latency_mean", sum / ITERS, mode, op, pages[pi]);
	}
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "bench_frrwp: server failed (%d)\n", st);
		return 1;
	}
	return 0;
}
