// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * redy_cache - a Redy cache from a program, with libredy.
 *
 * Asks the cache manager (redymgr) for a cache of BYTES bytes with an
 * SLO of LAT_NS mean latency and OPS requests per second, writes it with
 * batched asynchronous requests, reads it back synchronously and checks
 * every byte, prints the configuration the manager picked, and gives the
 * cache back.
 *
 *	redy_cache [-M ADDR] [-p PORT] [-d DEVICE] BYTES [LAT_NS OPS]
 *	(the manager at 127.0.0.1:7729; the SLO 1 s and 1 request/s)
 *
 * Build:  cc -o redy_cache redy_cache.c $(pkg-config --cflags --libs libredy)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mrrc/redy/cache.h>

#define CHUNK	4096u

static int usage(void)
{
	fprintf(stderr, "usage: redy_cache [-M ADDR] [-p PORT] [-d DEVICE] BYTES [LAT_NS OPS]\n");
	return 2;
}

/* A flush's callback: counts the requests that failed. */
static void count_failed(void *arg, int status)
{
	if (status)
		++*(unsigned int *)arg;
}

static int run(struct redy_cache *c, uint8_t *in, uint8_t *out, uint64_t bytes)
{
	unsigned int failed = 0;
	struct redy_cfg cfg;
	uint64_t a;
	int err;

	for (a = 0; a < bytes; a++)
		in[a] = (uint8_t)(a * 7 + (a >> 12));
	/* queued, then run in batches of the configuration's size */
	for (a = 0; a < bytes; a += CHUNK) {
		err = redy_cache_submit(c, 1, a, in + a,
					bytes - a < CHUNK ? bytes - a : CHUNK,
					count_failed, &failed);
		if (err)
			return err;
	}
	err = redy_cache_flush(c);
	if (err < 0)
		return err;
	if (failed)
		return -EIO;
	err = redy_cache_read(c, 0, out, bytes);
	if (err)
		return err;
	if (memcmp(in, out, bytes))
		return -EBADMSG;
	redy_cache_config(c, &cfg);
	printf("cache %u: %llu bytes, %s, s=%u c=%u b=%u q=%u: every byte read back\n",
	       redy_cache_id(c), (unsigned long long)redy_cache_capacity(c),
	       cfg.s ? "two-sided" : "one-sided", cfg.s, cfg.c, cfg.b, cfg.q);
	return 0;
}

int main(int argc, char **argv)
{
	struct redy_slo slo = { .lat_ns = 1e9, .tput_ops = 1 };
	struct redy_cache_opts opts = { 0 };
	const char *mgr = "127.0.0.1";
	unsigned long port = 7729;
	struct redy_cache *c;
	uint8_t *in, *out;
	uint64_t bytes;
	char *end;
	int opt, err;

	while ((opt = getopt(argc, argv, "M:p:d:")) != -1) {
		if (opt == 'M')
			mgr = optarg;
		else if (opt == 'p')
			port = strtoul(optarg, &end, 10);
		else if (opt == 'd')
			opts.dev = optarg;
		else
			return usage();
	}
	if (argc - optind != 1 && argc - optind != 3)
		return usage();
	bytes = strtoull(argv[optind], &end, 0);
	if (*end || !bytes || bytes > (1ull << 30) || !port || port > 65535)
		return usage();
	if (argc - optind == 3) {
		slo.lat_ns = strtod(argv[optind + 1], &end);
		if (*end || !(slo.lat_ns > 0))
			return usage();
		slo.tput_ops = strtod(argv[optind + 2], &end);
		if (*end || !(slo.tput_ops >= 0))
			return usage();
	}
	in = malloc(bytes);
	out = malloc(bytes);
	if (!in || !out) {
		free(in);
		free(out);
		fprintf(stderr, "redy_cache: out of memory\n");
		return 1;
	}
	err = redy_cache_create(&c, mgr, port, bytes, &slo, 60, &opts);
	if (err) {
		fprintf(stderr, "redy_cache: create: %s\n", strerror(-err));
	} else {
		err = run(c, in, out, bytes);
		if (err)
			fprintf(stderr, "redy_cache: %s\n", strerror(-err));
		opt = redy_cache_delete(c);
		if (opt && !err) {
			fprintf(stderr, "redy_cache: delete: %s\n", strerror(-opt));
			err = opt;
		}
	}
	free(in);
	free(out);
	return err ? 1 : 0;
}
