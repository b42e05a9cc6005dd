// SPDX-License-Identifier: GPL-2.0-only
/* mrrc(8) - global options, command dispatch and the commands' options. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "mrrc_tool.h"

/* What a command gets: where to print, and whether as JSON. */
struct ctx {
	FILE *out, *err;
	struct mrrc_json *json;	/* NULL: text */
};

struct cmd {
	const char *name;
	int (*run)(const struct cmd *cmd, struct ctx *c, int argc,
		   char **argv);
	const char *usage;
};

static const char usage[] =
	"usage: mrrc [-j [-p]] COMMAND [OPTIONS]\n"
	"       mrrc COMMAND --help\n"
	"\n"
	"options:\n"
	"  -j, --json      JSON output\n"
	"  -p, --pretty    with -j, indented JSON\n"
	"  -V, --version   the version command\n"
	"  -h, --help      this help\n"
	"\n"
	"commands:\n"
	"  info [-d DEVICE] [-v]   RDMA devices and ports as the module sees them\n"
	"  stat [-i SECONDS [-n COUNT]]\n"
	"                          registration counters of the whole module;\n"
	"                          with -i, rates every SECONDS like vmstat\n"
	"  ctx                     the open contexts (your own, every one for root)\n"
	"  conn [-c ID]            their connections and listeners, like ss\n"
	"  blk [list|attach ADDR[:PORT] [-q N] [-d N]|detach NAME]\n"
	"                          block devices over remote memory (mrrc_blk)\n"
	"  version                 tool version and the module's ABI version\n"
	"  help [COMMAND]          this help, or COMMAND's\n"
	"\n"
	"See mrrc(8).\n";

static const char info_usage[] =
	"usage: mrrc [-j [-p]] info [-d DEVICE] [-v]\n"
	"RDMA devices and ports as the module sees them.\n"
	"  -d, --device DEVICE     only DEVICE\n"
	"  -v, --verbose           every attribute\n"
	"  -h, --help              this help\n";

static const char stat_usage[] =
	"usage: mrrc [-j [-p]] stat [-i SECONDS [-n COUNT]]\n"
	"Registration counters of the whole module.\n"
	"  -i, --interval SECONDS  rates every SECONDS (with -j, JSON Lines)\n"
	"  -n, --count COUNT       COUNT times only (default: until interrupted)\n"
	"  -h, --help              this help\n";

static const char ctx_usage[] =
	"usage: mrrc [-j [-p]] ctx\n"
	"The open contexts of the module: those opened by your user, every one\n"
	"for root (CAP_SYS_ADMIN); mrrc's own is left out.\n"
	"  -h, --help              this help\n";

static const char conn_usage[] =
	"usage: mrrc [-j [-p]] conn [-c ID]\n"
	"The connections and listeners of the contexts mrrc ctx shows.\n"
	"  -c, --ctx ID            only those of context ID\n"
	"  -h, --help              this help\n";

static const char blk_usage[] =
	"usage: mrrc [-j [-p]] blk [list]\n"
	"       mrrc blk attach ADDR[:PORT] [-q QUEUES] [-d DEPTH]\n"
	"       mrrc blk detach NAME\n"
	"Block devices over memory lent by mrrc_blksrv on another host (root).\n"
	"  list                    the devices, their peers and cache hit ratio\n"
	"  attach                  connect to mrrc_blksrv at ADDR (IPv4, port\n"
	"                          7726 unless given) and print the new device\n"
	"  -q, --queues QUEUES     hardware queues (default: mrrc_blk's nr_queues)\n"
	"  -d, --depth DEPTH       requests per queue (default: its queue_depth)\n"
	"  detach NAME             remove the device (mrrcbN or /dev/mrrcbN)\n"
	"  -h, --help              this help\n";

static const char version_usage[] =
	"usage: mrrc [-j [-p]] version\n"
	"The tool's version and the module's ABI version.\n"
	"  -h, --help              this help\n";

static const char help_usage[] =
	"usage: mrrc help [COMMAND]\n"
	"The usage of mrrc, or of COMMAND.\n";

/* Who sets the mode of /dev/mrrc: see Documentation/admin-guide.rst. */
static const char eacces_hint[] =
	" (restricted by the module parameter dev_mode or udev: run as root or in its group)";

/*
 * getopt_long() for options up to the first argument that is not one
 * ('+'), errors left to us (':', opterr 0); *@arg is where the option
 * came from, for bad_option().  optind 0 before the first call starts over.
 */
static int next_option(int argc, char **argv, const char *shortopts,
		       const struct option *longopts, const char **arg)
{
	*arg = argv[optind ? optind : 1];
	opterr = 0;
	return getopt_long(argc, argv, shortopts, longopts, NULL);
}

/* getopt_long() returned @ch, '?' or ':': say why, return the status. */
static int bad_option(struct ctx *c, const struct cmd *cmd, int ch,
		      const char *arg)
{
	char name[3] = { '-', (char)optopt, '\0' };
	/* A long option as written; a short one alone, not its cluster. */
	const char *opt = strncmp(arg, "--", 2) ? name : arg;

	fprintf(c->err, "mrrc: %s%s%s '%s'\n", cmd ? cmd->name : "",
		cmd ? ": " : "", ch == ':' ? "missing argument to" :
		"unknown option", opt);
	fputs(cmd ? cmd->usage : usage, c->err);
	return 2;
}

static int extra_argument(struct ctx *c, const struct cmd *cmd,
			  const char *arg)
{
	fprintf(c->err, "mrrc: %s: unexpected argument '%s'\n", cmd->name,
		arg);
	fputs(cmd->usage, c->err);
	return 2;
}

/* Open the module, or say which path failed and why. */
static int open_ctx(struct ctx *c)
{
	const char *path = getenv("MRRC_DEVICE");
	bool env = path && *path;	/* as mrrc_open() decides */
	int fd = mrrc_open(0);
	const char *hint = "";

	if (fd >= 0)
		return fd;
	if (fd == -ENOENT && !env)
		hint = " (is the mrrc module loaded?)";
	else if (fd == -EACCES)
		hint = eacces_hint;
	fprintf(c->err, "mrrc: cannot open %s%s: %s%s\n",
		env ? path : MRRC_DEVICE_PATH, env ? " ($MRRC_DEVICE)" : "",
		strerror(-fd), hint);
	return fd;
}

static int cmd_info(const struct cmd *cmd, struct ctx *c, int argc,
		    char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *dev = NULL, *arg;
	bool verbose = false;
	int ch, fd, ret;

	while ((ch = next_option(argc, argv, "+:d:vh", opts, &arg)) != -1) {
		switch (ch) {
		case 'd':
			dev = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			fputs(cmd->usage, c->out);
			return 0;
		default:
			return bad_option(c, cmd, ch, arg);
		}
	}
	if (optind != argc)
		return extra_argument(c, cmd, argv[optind]);

	fd = open_ctx(c);
	if (fd < 0)
		return 1;
	ret = mrrc_cmd_info(fd, c->out, c->json, dev, verbose);
	mrrc_close(fd);
	if (ret == -ENODEV && dev)
		fprintf(c->err, "mrrc: no device %s\n", dev);
	else if (ret)
		fprintf(c->err, "mrrc: info: %s\n", strerror(-ret));
	return ret ? 1 : 0;
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

static int bad_value(struct ctx *c, const struct cmd *cmd, const char *what,
		     const char *value)
{
	fprintf(c->err, "mrrc: %s: bad %s '%s'\n", cmd->name, what, value);
	return 2;
}

static int cmd_stat(const struct cmd *cmd, struct ctx *c, int argc,
		    char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	unsigned int interval = 0, count = 0;
	const char *arg;
	int ch, fd, ret;

	while ((ch = next_option(argc, argv, "+:i:n:h", opts, &arg)) != -1) {
		switch (ch) {
		case 'i':
			if (parse_uint(optarg, &interval) || !interval)
				return bad_value(c, cmd, "interval", optarg);
			break;
		case 'n':
			if (parse_uint(optarg, &count) || !count)
				return bad_value(c, cmd, "count", optarg);
			break;
		case 'h':
			fputs(cmd->usage, c->out);
			return 0;
		default:
			return bad_option(c, cmd, ch, arg);
		}
	}
	if (optind != argc)
		return extra_argument(c, cmd, argv[optind]);
	if (count && !interval) {
		fprintf(c->err, "mrrc: stat: --count needs --interval\n");
		fputs(cmd->usage, c->err);
		return 2;
	}

	fd = open_ctx(c);
	if (fd < 0)
		return 1;
	ret = mrrc_cmd_stat(fd, c->out, c->json, interval, count);
	mrrc_close(fd);
	if (ret) {
		fprintf(c->err, "mrrc: stat: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}

static int cmd_ctx(const struct cmd *cmd, struct ctx *c, int argc,
		   char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *arg;
	int ch, fd, ret;

	while ((ch = next_option(argc, argv, "+:h", opts, &arg)) != -1) {
		if (ch != 'h')
			return bad_option(c, cmd, ch, arg);
		fputs(cmd->usage, c->out);
		return 0;
	}
	if (optind != argc)
		return extra_argument(c, cmd, argv[optind]);

	fd = open_ctx(c);
	if (fd < 0)
		return 1;
	ret = mrrc_cmd_ctx(fd, c->out, c->json);
	mrrc_close(fd);
	if (ret) {
		fprintf(c->err, "mrrc: ctx: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}

/* Decimal digits only, 1 to @max: a context id, a queue count. */
static int parse_positive(const char *s, uint32_t max, uint32_t *v)
{
	unsigned long long x;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end || !x || x > max)
		return -1;
	*v = x;
	return 0;
}

static int cmd_conn(const struct cmd *cmd, struct ctx *c, int argc,
		    char **argv)
{
	static const struct option opts[] = {
		{ "ctx", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	uint32_t id = 0;
	const char *arg;
	int ch, fd, ret;

	while ((ch = next_option(argc, argv, "+:c:h", opts, &arg)) != -1) {
		switch (ch) {
		case 'c':
			if (parse_positive(optarg, UINT32_MAX, &id))
				return bad_value(c, cmd, "context id", optarg);
			break;
		case 'h':
			fputs(cmd->usage, c->out);
			return 0;
		default:
			return bad_option(c, cmd, ch, arg);
		}
	}
	if (optind != argc)
		return extra_argument(c, cmd, argv[optind]);

	fd = open_ctx(c);
	if (fd < 0)
		return 1;
	ret = mrrc_cmd_conn(fd, c->out, c->json, id);
	mrrc_close(fd);
	if (ret == -ENOENT && id)
		fprintf(c->err,
			"mrrc: conn: no context %u (not open, or another user's)\n",
			id);
	else if (ret)
		fprintf(c->err, "mrrc: conn: %s\n", strerror(-ret));
	return ret ? 1 : 0;
}

static int cmd_blk(const struct cmd *cmd, struct ctx *c, int argc,
		   char **argv)
{
	static const struct option opts[] = {
		{ "queues", required_argument, NULL, 'q' },
		{ "depth", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	uint32_t queues = 0, depth = 0;
	const char *arg, *sub = "list";
	int ch;

	if (argc > 1 && argv[1][0] != '-') {
		sub = argv[1];
		argc--;
		argv++;
	}
	while ((ch = next_option(argc, argv, ":q:d:h", opts, &arg)) != -1) {
		switch (ch) {
		case 'q':
			if (parse_positive(optarg, 65535, &queues))
				return bad_value(c, cmd, "queue count", optarg);
			break;
		case 'd':
			if (parse_positive(optarg, 65535, &depth))
				return bad_value(c, cmd, "queue depth", optarg);
			break;
		case 'h':
			fputs(cmd->usage, c->out);
			return 0;
		default:
			return bad_option(c, cmd, ch, arg);
		}
	}
	if (!strcmp(sub, "list")) {
		if (optind != argc)
			return extra_argument(c, cmd, argv[optind]);
		return mrrc_cmd_blk_list(c->out, c->json);
	}
	if (!strcmp(sub, "attach") || !strcmp(sub, "detach")) {
		if (optind == argc) {
			fprintf(c->err, "mrrc: blk %s: missing %s\n", sub,
				sub[0] == 'a' ? "ADDR" : "NAME");
			fputs(cmd->usage, c->err);
			return 2;
		}
		if (optind + 1 != argc)
			return extra_argument(c, cmd, argv[optind + 1]);
		if (sub[0] == 'd' && (queues || depth))
			return extra_argument(c, cmd, queues ? "-q" : "-d");
		return sub[0] == 'a' ?
			mrrc_cmd_blk_attach(c->out, c->err, argv[optind],
					    queues, depth) :
			mrrc_cmd_blk_detach(c->err, argv[optind]);
	}
	fprintf(c->err, "mrrc: blk: unknown subcommand '%s'\n", sub);
	fputs(cmd->usage, c->err);
	return 2;
}

static int cmd_version(const struct cmd *cmd, struct ctx *c, int argc,
		       char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct mrrc_query q;
	const char *arg;
	int ch, fd, ret;

	while ((ch = next_option(argc, argv, "+:h", opts, &arg)) != -1) {
		if (ch != 'h')
			return bad_option(c, cmd, ch, arg);
		fputs(cmd->usage, c->out);
		return 0;
	}
	if (optind != argc)
		return extra_argument(c, cmd, argv[optind]);

	fd = open_ctx(c);
	ret = fd;
	if (fd >= 0) {
		ret = mrrc_query(fd, &q);
		mrrc_close(fd);
		if (ret)
			fprintf(c->err, "mrrc: query: %s\n", strerror(-ret));
	}
	if (c->json) {
		mrrc_json_open(c->json, NULL, '{');
		mrrc_json_str(c->json, "tool_version", MRRC_TOOL_VERSION);
		mrrc_json_u64(c->json, "abi_version", MRRC_ABI_VERSION);
		if (!ret)
			mrrc_json_u64(c->json, "module_abi_version",
				      q.abi_version);
		mrrc_json_close(c->json, '}');
	} else {
		fprintf(c->out, "mrrc tool %s, ABI %u\n", MRRC_TOOL_VERSION,
			MRRC_ABI_VERSION);
		if (!ret)
			fprintf(c->out, "module ABI %u\n", q.abi_version);
	}
	return ret ? 1 : 0;
}

static int cmd_help(const struct cmd *cmd, struct ctx *c, int argc,
		    char **argv);

static const struct cmd cmds[] = {
	{ "info", cmd_info, info_usage },
	{ "stat", cmd_stat, stat_usage },
	{ "ctx", cmd_ctx, ctx_usage },
	{ "conn", cmd_conn, conn_usage },
	{ "blk", cmd_blk, blk_usage },
	{ "version", cmd_version, version_usage },
	{ "help", cmd_help, help_usage },
};

static const struct cmd *find_cmd(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

static int unknown_cmd(struct ctx *c, const char *name)
{
	fprintf(c->err, "mrrc: unknown command '%s'\n", name);
	fputs(usage, c->err);
	return 2;
}

static int cmd_help(const struct cmd *cmd, struct ctx *c, int argc,
		    char **argv)
{
	const struct cmd *of;

	if (argc > 2)
		return extra_argument(c, cmd, argv[2]);
	if (argc < 2) {
		fputs(usage, c->out);
		return 0;
	}
	of = find_cmd(argv[1]);
	if (!of)
		return unknown_cmd(c, argv[1]);
	fputs(of->usage, c->out);
	return 0;
}

int mrrc_tool_run(int argc, char **argv, FILE *out, FILE *err)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct mrrc_json json = { .out = out };
	struct ctx c = { .out = out, .err = err };
	const struct cmd *cmd;
	bool version = false;
	const char *arg;
	int ch, first;

	optind = 0;
	while ((ch = next_option(argc, argv, "+:jpVh", opts, &arg)) != -1) {
		switch (ch) {
		case 'j':
			c.json = &json;
			break;
		case 'p':
			json.pretty = true;
			break;
		case 'V':
			version = true;
			break;
		case 'h':
			fputs(usage, out);
			return 0;
		default:
			return bad_option(&c, NULL, ch, arg);
		}
	}
	/*
	 * A command sees its name as argv[0]; for --version, the option
	 * stands in for it, so that what follows is the version command's.
	 */
	if (version) {
		cmd = find_cmd("version");
		first = optind - 1;
	} else if (optind < argc) {
		cmd = find_cmd(argv[optind]);
		if (!cmd)
			return unknown_cmd(&c, argv[optind]);
		first = optind;
	} else {
		fprintf(err, "mrrc: no command\n");
		fputs(usage, err);
		return 2;
	}
	optind = 0;
	return cmd->run(cmd, &c, argc - first, argv + first);
}
