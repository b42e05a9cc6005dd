// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * mrrc_pingpong - a message ping-pong over an mrrc connection, in the
 * spirit of rdma-core's ibv_rc_pingpong.
 *
 * The server listens; the client connects and sends SIZE bytes, the
 * server sends them back, ITERS times; the client checks every byte it
 * gets back and reports the round-trip time.  The buffers are plain
 * memory: the module registers them through its cache on the first
 * send and finds them cached ever after.
 *
 *	mrrc_pingpong [-d DEV] [-p PORT] [-s SIZE] [-n ITERS] -l ADDR
 *						server, listening on ADDR
 *	mrrc_pingpong [-d DEV] [-p PORT] [-s SIZE] [-n ITERS] ADDR
 *						client of the server at ADDR
 *
 * ADDR is the IPv4 address of the device's network interface (the RDMA
 * CM resolves the device from it).  Exit status 0 when every iteration
 * came back intact.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <mrrc/libmrrc.h>

#include "example.h"

#define TIMEOUT_MS	10000

static int fd;

/* The next completion or event, waiting up to TIMEOUT_MS for it. */
static int next(struct mrrc_cqe *c)
{
	int ret;

	for (;;) {
		ret = mrrc_poll_cq(fd, c, 1);
		if (ret)
			return ret < 0 ? ret : 0;
		ret = mrrc_wait(fd, TIMEOUT_MS);
		if (ret < 0)
			return ret;
		if (!ret)
			return -ETIMEDOUT;
	}
}

/* Wait for event @ev; return the connection it is about. */
static int event(int ev, uint32_t *conn)
{
	struct mrrc_cqe c;
	int ret = next(&c);

	if (ret)
		return ret;
	if (c.opcode != MRRC_OP_EVENT || c.event != ev)
		return c.status ? c.status : -EPROTO;
	*conn = c.conn;
	return 0;
}

static int post(uint32_t conn, uint8_t op, void *buf, size_t len,
		uint64_t id)
{
	struct mrrc_wr w = {
		.wr_id = id, .conn = conn, .opcode = op,
		.addr = (uintptr_t)buf, .len = len,
	};

	return mrrc_post(fd, &w, 1, NULL);
}

/* Wait for the completions of @n operations; all must succeed. */
static int reap(unsigned int n, uint32_t *byte_len)
{
	struct mrrc_cqe c;
	int ret;

	while (n) {
		ret = next(&c);
		if (ret)
			return ret;
		if (c.opcode == MRRC_OP_EVENT)
			return c.status ? c.status : -ECONNRESET;
		if (c.status)
			return c.status;
		if (c.opcode == MRRC_OP_RECV && byte_len)
			*byte_len = c.byte_len;
		n--;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-d DEV] [-p PORT] [-s SIZE] [-n ITERS] (-l ADDR | ADDR)\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	size_t size = 4096;
	unsigned int iters = 1000, i, port = 18515;
	const char *dev = NULL, *addr = NULL;
	bool server = false;
	uint32_t conn, id, got;
	unsigned char *tx, *rx;
	double t0;
	int opt, ret;

	while ((opt = getopt(argc, argv, "d:p:s:n:l:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'p':
			port = strtoul(optarg, NULL, 0);
			break;
		case 's':
			size = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			iters = strtoul(optarg, NULL, 0);
			break;
		case 'l':
			server = true;
			addr = optarg;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (!server && optind < argc)
		addr = argv[optind];
	if (!addr || !size || !iters || port > 65535 ||
	    inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		usage(argv[0]);
	sin.sin_port = htons(port);

	tx = malloc(size);
	rx = malloc(size);
	if (!tx || !rx)
		return perror("malloc"), 1;
	fd = mrrc_open(0);
	if (fd < 0)
		return fprintf(stderr, "mrrc_open: %s\n", strerror(-fd)), 1;
	ret = mrrc_bind_first(fd, dev);
	if (ret)
		return fprintf(stderr, "bind: %s\n", strerror(-ret)), 1;

	if (server) {
		ret = mrrc_listen(fd, (struct sockaddr *)&sin, 1, 0, &id);
		if (!ret)
			ret = event(MRRC_EVENT_CONNECT_REQUEST, &conn);
		if (!ret)
			ret = mrrc_accept(fd, conn, 0);
	} else {
		ret = mrrc_connect(fd, (struct sockaddr *)&sin, NULL,
				   TIMEOUT_MS, 0, &conn);
	}
	if (!ret)
		ret = event(MRRC_EVENT_ESTABLISHED, &conn);
	if (ret)
		return fprintf(stderr, "connection: %s\n", strerror(-ret)), 1;

	t0 = now_s();
	for (i = 0; i < iters; i++) {
		/* A RECV is posted before the message it is for is sent. */
		ret = post(conn, MRRC_OP_RECV, rx, size, 2 * i);
		if (ret)
			break;
		if (server) {
			ret = reap(1, &got);
			if (!ret)
				ret = post(conn, MRRC_OP_SEND, rx, got,
					   2 * i + 1);
			if (!ret)
				ret = reap(1, NULL);
		} else {
			memset(tx, (int)(i * 7 + 1), size);
			ret = post(conn, MRRC_OP_SEND, tx, size, 2 * i + 1);
			if (!ret)
				ret = reap(2, &got);
			if (!ret && (got != size || memcmp(tx, rx, size)))
				ret = -EBADMSG;
		}
		if (ret)
			break;
	}
	if (ret) {
		fprintf(stderr, "iteration %u: %s\n", i, strerror(-ret));
		return 1;
	}
	if (!server) {
		double t = now_s() - t0;

		printf("%u iters of %zu bytes in %.2f s = %.1f usec/iter\n",
		       iters, size, t, t * 1e6 / iters);
	}
	mrrc_disconnect(fd, conn);
	mrrc_close(fd);
	free(tx);
	free(rx);
	return 0;
}
