// SPDX-License-Identifier: GPL-2.0-only
/*
 * redyd - a Redy memory server (redy-vldb2022 §3.2, §4.2): the server of
 * redysrv.c as a daemon of its own (mrrcd --redy runs the same one).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mrrc_version.h"
#include "redysrv.h"
#include "wire.h"

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: redyd -a ADDR [-p PORT] [-m MB] [-t THREADS] [-d DEV] [-v]\n"
		"  -a ADDR     the RDMA device's IPv4 address to listen on\n"
		"  -p PORT     one-sided port; server thread i listens on PORT+1+i (%u)\n"
		"  -m MB       cache memory to offer, 1 to 1024 MiB (64)\n"
		"  -t THREADS  server threads for two-sided requests, 1 to %u (1)\n"
		"  -d DEV      the RDMA device (the first one)\n"
		"  -v          more messages on stderr (twice: per connection)\n"
		"  -V          version\n",
		REDY_DEFAULT_PORT, REDY_THREADS_MAX);
}

static int number(const char *opt, const char *s, unsigned long min,
		  unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || *v < min || *v > max) {
		fprintf(stderr, "redyd: %s: %s is not a number from %lu to %lu\n",
			opt, s, min, max);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct redy_server_opts so = { .bytes = 64ul << 20, .threads = 1,
				       .port = REDY_DEFAULT_PORT, .name = "redyd" };
	struct sigaction sa = { .sa_handler = on_signal };
	struct redy_server_stats st;
	struct redy_server *srv;
	bool have_addr = false;
	sigset_t mask, old;
	char dev[64];
	unsigned long v;
	int opt, r;

	while ((opt = getopt(argc, argv, "a:p:m:t:d:vVh")) != -1) {
		switch (opt) {
		case 'a':
			if (inet_pton(AF_INET, optarg, &so.addr) != 1) {
				fprintf(stderr, "redyd: -a: %s is not an IPv4 address\n",
					optarg);
				return 2;
			}
			have_addr = true;
			break;
		case 'p':
			if (number("-p", optarg, 1, 65535 - REDY_THREADS_MAX - 1, &v))
				return 2;
			so.port = v;
			break;
		case 'm':
			if (number("-m", optarg, 1, 1024, &v))
				return 2;
			so.bytes = v << 20;
			break;
		case 't':
			if (number("-t", optarg, 1, REDY_THREADS_MAX, &v))
				return 2;
			so.threads = v;
			break;
		case 'd':
			so.dev = optarg;
			break;
		case 'v':
			so.verbose++;
			break;
		case 'V':
			printf("redyd %s\n", MRRC_VERSION_STRING);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !have_addr) {
		usage(stderr);
		return 2;
	}
	/* the signals wait for sigsuspend(), so that none is missed */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, &old);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	r = redy_server_start(&srv, &so);
	if (r) {
		fprintf(stderr, "redyd: %s\n", r == -ENODEV ?
			"no RDMA device (is the mrrc module loaded?)" : strerror(-r));
		return 1;
	}
	redy_server_info(srv, dev, sizeof(dev));
	fprintf(stderr, "redyd: %lu MiB, %u server threads, ports %u-%u on %s\n",
		(unsigned long)(so.bytes >> 20), so.threads, so.port,
		so.port + so.threads, dev);
	while (!stopping)
		sigsuspend(&old);
	redy_server_stop(srv, &st);
	fprintf(stderr, "redyd: exiting: %lu batches, %lu requests, %lu refused\n",
		st.batches, st.requests, st.refused);
	return 0;
}
