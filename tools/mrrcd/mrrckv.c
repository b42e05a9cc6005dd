// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrckv(1): talk to mrrcd (or memcached, over TCP) from the shell, and
 * measure it: set, get, one-sided get, delete, any other command, bench.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kvclient.h"
#include "load.h"
#include "mrrc_version.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mrrckv [options] COMMAND [ARGS]\n"
		"  -s, --server=HOST        mrrcd's address (default 127.0.0.1)\n"
		"  -p, --port=PORT          its port (default 11211)\n"
		"  -r, --rdma               over RDMA through /dev/mrrc (default TCP)\n"
		"  -d, --device=NAME        RDMA device (default: the first one)\n"
		"  -m, --meta=MODE          one-sided reads report: none, faa, sample:N\n"
		"  -F, --frrwp              set by FRRWP (rset: the value by CRW, -r)\n"
		"  -H, --no-hints           one-sided GETs always read the probe window\n"
		"  -h, --help, -V, --version\n"
		"commands:\n"
		"  set KEY VALUE [FLAGS [EXPTIME]]   VALUE '-': standard input\n"
		"  get KEY                           print the value\n"
		"  oget KEY                          get by one-sided READs (-r)\n"
		"  delete KEY\n"
		"  cmd 'LINE'                        any command; print the reply\n"
		"  bench OP SIZE COUNT               OP: set, rset, get, oget; one JSON line\n"
		"  fill SIZE [KEYS]                  store keys load:0 .. load:KEYS-1\n"
		"  load OP SIZE CLIENTS GETPCT SECONDS [KEYS]\n"
		"                                    OP: get, oget; a Zipf GET/SET mix\n");
}

static int number(const char *what, const char *s, unsigned long max,
		  unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || *out > max) {
		fprintf(stderr, "mrrckv: %s: '%s' is not a number up to %lu\n",
			what, s, max);
		return -EINVAL;
	}
	return 0;
}

static char *read_stdin(size_t *len)
{
	size_t cap = 65536, n = 0, r;
	char *buf = malloc(cap), *q;

	while (buf && (r = fread(buf + n, 1, cap - n, stdin)) > 0) {
		n += r;
		if (n == cap) {
			q = realloc(buf, cap *= 2);
			if (!q) {
				free(buf);
				return NULL;
			}
			buf = q;
		}
	}
	*len = n;
	return buf;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * COUNT operations of SIZE-byte values on keys bench:0 .. bench:63, one at
 * a time: the latency of each; gets and ogets first store the keys.
 */
static int bench(struct kvc *k, const char *op, unsigned long size,
		 unsigned long count, const char *tr, const char *meta)
{
	double *lat, t0, total = 0;
	char key[32], *val;
	unsigned long i;
	const char *v;
	size_t vlen;
	int err = 0;

	lat = calloc(count ? count : 1, sizeof(*lat));
	val = malloc(size ? size : 1);
	if (!lat || !val) {
		free(lat);
		free(val);
		return -ENOMEM;
	}
	memset(val, 'v', size);
	for (i = 0; i < 64 && strcmp(op, "set") && strcmp(op, "rset") &&
	     !err; i++) {
		snprintf(key, sizeof(key), "bench:%lu", i);
		err = kvc_store(k, "set", key, val, size, 0, 0);
	}
	for (i = 0; i < count && !err; i++) {
		snprintf(key, sizeof(key), "bench:%lu", i % 64);
		t0 = now_us();
		if (!strcmp(op, "set"))
			err = kvc_store(k, "set", key, val, size, 0, 0);
		else if (!strcmp(op, "rset"))
			err = kvc_rset(k, key, val, size, 0, 0);
		else if (!strcmp(op, "get"))
			err = kvc_get(k, key, &v, &vlen, NULL);
		else
			err = kvc_oget(k, key, &v, &vlen, NULL);
		lat[i] = now_us() - t0;
		total += lat[i];
		if (!err && strcmp(op, "set") && strcmp(op, "rset") &&
		    vlen != size)
			err = -EPROTO;
	}
	if (!err) {
		qsort(lat, count, sizeof(*lat), cmp_double);
		printf("{\"bench\":\"kv\",\"op\":\"%s\",\"transport\":\"%s\",\"meta\":\"%s\",\"value_bytes\":%lu,\"count\":%lu,\"ops_per_sec\":%.0f,\"lat_p50_us\":%.2f,\"lat_p99_us\":%.2f,\"oget_retries\":%llu}\n",
		       op, tr, meta, size, count, count / (total / 1e6),
		       lat[count / 2], lat[count * 99 / 100],
		       (unsigned long long)k->st.oget_retries);
	}
	free(lat);
	free(val);
	return err;
}

struct target {
	const char *host, *dev;
	unsigned int port;
	bool rdma, hints;
};

static int target_connect(struct kvc *k, void *arg)
{
	const struct target *t = arg;
	int err;

	err = t->rdma ? kvc_connect_rdma(k, t->dev, t->host, t->port) :
			kvc_connect_tcp(k, t->host, t->port);
	if (!err && !t->hints)
		kvc_set_hints(k, false);
	return err;
}

/* fill SIZE [KEYS]: see load.h. */
static int fill(struct target *t, int argc, char **argv)
{
	struct load_cfg c = {
		.connect = target_connect, .connect_arg = t, .keys = 1000,
	};
	unsigned long size, keys = 1000;
	int err;

	if (argc < 1 || argc > 2) {
		usage(stderr);
		return 2;
	}
	if (number("SIZE", argv[0], LOAD_MAX_VALUE, &size) ||
	    (argc > 1 && (number("KEYS", argv[1], 1000000, &keys) || !keys)))
		return 2;
	c.value_bytes = (uint32_t)size;
	c.keys = (unsigned int)keys;
	err = load_fill(&c);
	if (err) {
		fprintf(stderr, "mrrckv: fill: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}

/* load OP SIZE CLIENTS GETPCT SECONDS [KEYS]: see load.h. */
static int load(struct target *t, const char *meta, int argc, char **argv)
{
	struct load_cfg c = {
		.connect = target_connect, .connect_arg = t, .meta = meta,
		.keys = 1000, .zipf = 0.99,
	};
	unsigned long size, clients, pct, secs, keys = 1000;
	struct kvc k;
	int err;

	if (argc < 5 || argc > 6 ||
	    (strcmp(argv[0], "get") && strcmp(argv[0], "oget"))) {
		usage(stderr);
		return 2;
	}
	if (number("SIZE", argv[1], LOAD_MAX_VALUE, &size) ||
	    number("CLIENTS", argv[2], 64, &clients) || !clients ||
	    number("GETPCT", argv[3], 100, &pct) ||
	    number("SECONDS", argv[4], 3600, &secs) || !secs ||
	    (argc > 5 && (number("KEYS", argv[5], 1000000, &keys) || !keys)))
		return 2;
	c.one_sided = argv[0][0] == 'o';
	if (c.one_sided && !t->rdma) {
		fprintf(stderr, "mrrckv: load oget: one-sided GETs need -r\n");
		return 2;
	}
	/* The mode is checked here, once, rather than in every client. */
	memset(&k, 0, sizeof(k));
	if (kvc_set_meta(&k, meta)) {
		fprintf(stderr, "mrrckv: -m %s: none, faa or sample:N (2..65536)\n",
			meta);
		return 2;
	}
	c.value_bytes = (uint32_t)size;
	c.clients = (unsigned int)clients;
	c.get_ratio = pct / 100.0;
	c.seconds = (unsigned int)secs;
	c.keys = (unsigned int)keys;
	err = load_run(&c, stdout);
	if (err) {
		fprintf(stderr, "mrrckv: load: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "server", required_argument, NULL, 's' },
		{ "port", required_argument, NULL, 'p' },
		{ "rdma", no_argument, NULL, 'r' },
		{ "device", required_argument, NULL, 'd' },
		{ "meta", required_argument, NULL, 'm' },
		{ "frrwp", no_argument, NULL, 'F' },
		{ "no-hints", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *host = "127.0.0.1", *dev = NULL, *meta = "none", *cmd;
	unsigned long port = 11211, a, b;
	bool rdma = false, frrwp = false, hints = true;
	struct kvc k;
	const char *v;
	size_t len;
	int opt, err;

	while ((opt = getopt_long(argc, argv, "s:p:rd:m:FHhV", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 's':
			host = optarg;
			break;
		case 'p':
			if (number("-p", optarg, 65535, &port) || !port)
				return 2;
			break;
		case 'r':
			rdma = true;
			break;
		case 'd':
			dev = optarg;
			break;
		case 'm':
			meta = optarg;
			break;
		case 'F':
			frrwp = true;
			break;
		case 'H':
			hints = false;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("mrrckv %s\n", MRRC_VERSION_STRING);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	cmd = argv[optind++];
	if (!strcmp(cmd, "load") || !strcmp(cmd, "fill")) {
		struct target t = { host, dev, (unsigned int)port, rdma,
				    hints };

		if (cmd[0] == 'f')
			return fill(&t, argc - optind, argv + optind);
		return load(&t, meta, argc - optind, argv + optind);
	}
	err = rdma ? kvc_connect_rdma(&k, dev, host, (unsigned int)port) :
		     kvc_connect_tcp(&k, host, (unsigned int)port);
	if (err) {
		fprintf(stderr, "mrrckv: cannot connect to %s port %lu over %s: %s\n",
			host, port, rdma ? "RDMA" : "TCP", strerror(-err));
		return 1;
	}
	if (kvc_set_meta(&k, meta)) {
		fprintf(stderr, "mrrckv: -m %s: none, faa or sample:N (2..65536)\n",
			meta);
		kvc_close(&k);
		return 2;
	}
	if (!hints)
		kvc_set_hints(&k, false);
	argc -= optind;
	argv += optind;
	err = -EINVAL;
	if (!strcmp(cmd, "set") && argc >= 2 && argc <= 4) {
		unsigned long fl = 0, ex = 0;
		char *in = NULL;

		if ((argc > 2 && number("FLAGS", argv[2], UINT32_MAX, &fl)) ||
		    (argc > 3 && number("EXPTIME", argv[3], UINT32_MAX, &ex)))
			goto out;
		if (!strcmp(argv[1], "-")) {
			in = read_stdin(&len);
			err = in ? 0 : -ENOMEM;
		} else {
			len = strlen(argv[1]);
			err = 0;
		}
		if (!err && frrwp)
			err = kvc_rset(&k, argv[0], in ? in : argv[1], len,
				       (uint32_t)fl, (uint32_t)ex);
		else if (!err)
			err = kvc_store(&k, "set", argv[0], in ? in : argv[1],
					len, (uint32_t)fl, (uint32_t)ex);
		free(in);
	} else if ((!strcmp(cmd, "get") || !strcmp(cmd, "oget")) &&
		   argc == 1) {
		err = cmd[0] == 'o' ? kvc_oget(&k, argv[0], &v, &len, NULL) :
				      kvc_get(&k, argv[0], &v, &len, NULL);
		if (!err && fwrite(v, 1, len, stdout) != len)
			err = -EIO;
	} else if (!strcmp(cmd, "delete") && argc == 1) {
		err = kvc_delete(&k, argv[0]);
	} else if (!strcmp(cmd, "cmd") && argc == 1) {
		err = kvc_command(&k, argv[0], &v, &len);
		if (!err)
			printf("%s\n", v);
	} else if (!strcmp(cmd, "bench") && argc == 3 &&
		   (!strcmp(argv[0], "set") || !strcmp(argv[0], "get") ||
		    !strcmp(argv[0], "oget") || !strcmp(argv[0], "rset"))) {
		if (number("SIZE", argv[1], 1u << 20, &a) ||
		    number("COUNT", argv[2], 10000000, &b) || !b)
			goto out;
		err = bench(&k, argv[0], a, b, rdma ? "rdma" : "tcp", meta);
	} else {
		usage(stderr);
		kvc_close(&k);
		return 2;
	}
out:
	kvc_close(&k);
	if (err == -ENOENT) {
		fprintf(stderr, "mrrckv: %s: not found\n", argc ? argv[0] : "");
		return 1;
	}
	if (err) {
		fprintf(stderr, "mrrckv: %s: %s\n", cmd, strerror(-err));
		return 1;
	}
	return 0;
}
