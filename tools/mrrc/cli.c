// SPDX-License-Identifier: GPL-2.0-only
/* mrrc(8) - command dispatch and the commands' argument handling. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "mrrc_tool.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mrrc [-h] [-V] COMMAND [options]\n"
		"\n"
		"commands:\n"
		"  info [-d DEVICE] [-v]   RDMA devices and ports as the module sees them\n"
		"  stat [-i SECONDS [-n COUNT]]\n"
		"                          registration counters of the whole module;\n"
		"                          with -i, rates every SECONDS like vmstat\n"
		"  version                 tool version and the module's ABI version\n"
		"\n"
		"See mrrc(8).\n");
}

static int open_ctx(FILE *err)
{
	int fd = mrrc_open(0);

	if (fd < 0)
		fprintf(err, "mrrc: cannot open %s: %s%s\n", MRRC_DEVICE_PATH,
			strerror(-fd),
			fd == -ENOENT ? " (is the mrrc module loaded?)" : "");
	return fd;
}

static int cmd_info(int argc, char **argv, FILE *out, FILE *err)
{
	const char *dev = NULL;
	bool verbose = false;
	int c, fd, ret;

	optind = 1;
	while ((c = getopt(argc, argv, "d:vh")) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(out);
			return 0;
		default:
			usage(err);
			return 2;
		}
	}
	if (optind != argc) {
		usage(err);
		return 2;
	}

	fd = open_ctx(err);
	if (fd < 0)
		return 1;
	ret = mrrc_cmd_info(fd, out, dev, verbose);
	mrrc_close(fd);
	if (ret) {
		if (ret == -ENODEV && dev)
			fprintf(err, "mrrc: no device %s\n", dev);
		else
			fprintf(err, "mrrc: info: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}

static int parse_uint(const char *s, unsigned int *v)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno || *end || !*s || x > 86400 * 365)
		return -1;
	*v = x;
	return 0;
}

static int cmd_stat(int argc, char **argv, FILE *out, FILE *err)
{
	unsigned int interval = 0, count = 0;
	int c, fd, ret;

	optind = 1;
	while ((c = getopt(argc, argv, "i:n:h")) != -1) {
		switch (c) {
		case 'i':
			if (parse_uint(optarg, &interval) || !interval) {
				fprintf(err, "mrrc: stat: bad interval '%s'\n", optarg);
				return 2;
			}
			break;
		case 'n':
			if (parse_uint(optarg, &count) || !count) {
				fprintf(err, "mrrc: stat: bad count '%s'\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(out);
			return 0;
		default:
			usage(err);
			return 2;
		}
	}
	if (optind != argc || (count && !interval)) {
		usage(err);
		return 2;
	}
	fd = open_ctx(err);
	if (fd < 0)
		return 1;
	ret = mrrc_cmd_stat(fd, out, interval, count);
	mrrc_close(fd);
	if (ret) {
		fprintf(err, "mrrc: stat: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}

static int cmd_version(FILE *out, FILE *err)
{
	struct mrrc_query q;
	int fd, ret;

	fprintf(out, "mrrc tool %s, ABI %u\n", MRRC_TOOL_VERSION,
		MRRC_ABI_VERSION);
	fd = open_ctx(err);
	if (fd < 0)
		return 1;
	ret = mrrc_query(fd, &q);
	mrrc_close(fd);
	if (ret) {
		fprintf(err, "mrrc: query: %s\n", strerror(-ret));
		return 1;
	}
	fprintf(out, "module ABI %u\n", q.abi_version);
	return 0;
}

int mrrc_tool_run(int argc, char **argv, FILE *out, FILE *err)
{
	if (argc < 2) {
		usage(err);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(out);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "version"))
		return cmd_version(out, err);
	if (!strcmp(argv[1], "info"))
		return cmd_info(argc - 1, argv + 1, out, err);
	if (!strcmp(argv[1], "stat"))
		return cmd_stat(argc - 1, argv + 1, out, err);

	fprintf(err, "mrrc: unknown command '%s'\n", argv[1]);
	usage(err);
	return 2;
}
