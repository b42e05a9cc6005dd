// SPDX-License-Identifier: GPL-2.0-only
/*
 * benchjson - the device, strict numeric options and the common JSON keys
 * of the benchmarks and mrrc-replay.  See benchjson.h.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>

#include "mrrc_abi.h"
#include "benchjson.h"

static struct {
	const char *prog, *dev, *kernel, *accel, *commit, *date;
	struct utsname uts;
	char accel_buf[64], date_buf[32];
} run = { .prog = "bench" };

int bench_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *val)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*val = v;
	return 0;
}

int bench_parse_double(const char *s, double min, double max, double *val)
{
	double v;
	char *end;

	/* No sign, blank, hex, inf or nan: a digit or a point first. */
	if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.') ||
	    strpbrk(s, "xX"))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end)
		return -EINVAL;
	if (errno == ERANGE || !isfinite(v) || v < min || v > max)
		return -ERANGE;
	*val = v;
	return 0;
}

static void __attribute__((noreturn))
bad_opt(const char *opt, const char *s, int err, const char *range)
{
	if (err == -ERANGE)
		fprintf(stderr, "%s: %s %s: out of range (%s)\n", run.prog,
			opt, s, range);
	else
		fprintf(stderr, "%s: %s '%s': not a number (want %s)\n",
			run.prog, opt, s, range);
	exit(2);
}

uint64_t bench_opt_u64(const char *prog, const char *opt, const char *s,
		       uint64_t min, uint64_t max)
{
	char range[48];
	uint64_t v;
	int ret = bench_parse_u64(s, min, max, &v);

	if (!ret)
		return v;
	run.prog = prog;
	snprintf(range, sizeof(range), "%" PRIu64 "..%" PRIu64, min, max);
	bad_opt(opt, s, ret, range);
}

double bench_opt_double(const char *prog, const char *opt, const char *s,
			double min, double max)
{
	char range[64];
	double v;
	int ret = bench_parse_double(s, min, max, &v);

	if (!ret)
		return v;
	run.prog = prog;
	snprintf(range, sizeof(range), "%g..%g", min, max);
	bad_opt(opt, s, ret, range);
}

const char *bench_device(const char *opt_dev)
{
	const char *dev = opt_dev ? opt_dev : getenv("MRRC_DEV");

	if (!dev)
		dev = BENCH_DEFAULT_DEV;
	if (!*dev || strlen(dev) >= MRRC_NAME_MAX)
		return NULL;
	return dev;
}

/* Non-empty $@name, or NULL. */
static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* MRRC_ACCEL=... on the kernel command line (the test VM puts it there). */
static const char *cmdline_accel(char *buf, size_t size)
{
	static const char key[] = "MRRC_ACCEL=";
	const size_t klen = sizeof(key) - 1;
	char line[4096], *tok, *save;
	FILE *f = fopen("/proc/cmdline", "re");
	const char *found = NULL;

	if (!f)
		return NULL;
	if (fgets(line, sizeof(line), f)) {
		/* The last one, if there are several. */
		for (tok = strtok_r(line, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save)) {
			if (!strncmp(tok, key, klen) && tok[klen]) {
				snprintf(buf, size, "%s", tok + klen);
				found = buf;
			}
		}
	}
	fclose(f);
	return found;
}

void bench_init(const char *prog, const char *opt_dev)
{
	time_t now = time(NULL);
	struct tm tm;

	run.prog = prog;
	run.dev = bench_device(opt_dev);
	if (!run.dev) {
		fprintf(stderr, "%s: device '%s' (-d or MRRC_DEV): empty or over %d characters\n",
			prog, opt_dev ? opt_dev : getenv("MRRC_DEV"),
			MRRC_NAME_MAX - 1);
		exit(2);
	}
	run.kernel = env("MRRC_KVER");
	if (!run.kernel)
		run.kernel = uname(&run.uts) ? "unknown" : run.uts.release;
	run.accel = env("MRRC_ACCEL");
	if (!run.accel)
		run.accel = cmdline_accel(run.accel_buf, sizeof(run.accel_buf));
	if (!run.accel)
		run.accel = "unknown";
	run.commit = env("MRRC_COMMIT");
	if (!run.commit)
		run.commit = "unknown";
	run.date = env("MRRC_DATE");
	if (!run.date) {
		if (gmtime_r(&now, &tm) &&
		    strftime(run.date_buf, sizeof(run.date_buf),
			     "%Y-%m-%dT%H:%M:%SZ", &tm))
			run.date = run.date_buf;
		else
			run.date = "unknown";
	}
}

int bench_options(int argc, char **argv, const char *prog,
		  const char *operands, const char *help, int max_operands)
{
	const char *dev = NULL;
	FILE *f = stderr;
	int c;

	while ((c = getopt(argc, argv, "d:h")) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'h':
			f = stdout;
			goto usage;
		default:
			goto usage;
		}
	}
	if (argc - optind > max_operands)
		goto usage;
	bench_init(prog, dev);
	return optind;
usage:
	fprintf(f, "usage: %s [-d DEV]%s\n"
		"  -d DEV  RDMA device (default $MRRC_DEV, else %s)\n%s",
		prog, operands, BENCH_DEFAULT_DEV, help);
	exit(f == stdout ? 0 : 2);
}

const char *bench_kernel(void)
{
	return run.kernel;
}

const char *bench_dev(void)
{
	return run.dev;
}

/*
 * Length of the well-formed UTF-8 sequence at @s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0.
 */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (s[0] < 0xc2)
		return 0;	/* ASCII, or not a first byte */
	if (s[0] < 0xe0) {
		n = 2;
	} else if (s[0] < 0xf0) {
		n = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;
		else if (s[0] == 0xed)
			hi = 0x9f;
	} else if (s[0] < 0xf5) {
		n = 4;
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++, lo = 0x80, hi = 0xbf)
		if (s[i] < lo || s[i] > hi)
			return 0;	/* the NUL ends it too */
	return n;
}

void bench_json_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t n;

	putc('"', f);
	while (*s) {
		switch (*s) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			n = utf8_len(s);
			if (*s < 0x20 || *s == 0x7f) {
				fprintf(f, "\\u%04x", *s);
			} else if (*s < 0x80) {
				putc(*s, f);
			} else if (n) {
				fwrite(s, 1, n, f);
				s += n;
				continue;
			} else {
				fputs("\\ufffd", f);	/* not UTF-8 */
			}
		}
		s++;
	}
	putc('"', f);
}

static void json_key(FILE *f, const char *name, const char *value)
{
	fprintf(f, ",\"%s\":", name);
	bench_json_str(f, value);
}

void bench_json_end(FILE *f)
{
	json_key(f, "kernel", run.kernel ? run.kernel : "unknown");
	json_key(f, "accel", run.accel ? run.accel : "unknown");
	json_key(f, "device", run.dev ? run.dev : BENCH_DEFAULT_DEV);
	json_key(f, "commit", run.commit ? run.commit : "unknown");
	json_key(f, "date", run.date ? run.date : "unknown");
	fputs("}\n", f);
	fflush(f);
}
