/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * benchjson - what every benchmark and mrrc-replay share: the device they
 * run on, strict parsing of numeric options, and the JSON lines they print.
 *
 * Every line ends with the keys of the run (bench_json_end()):
 *
 *   "kernel"  $MRRC_KVER, else uname -r
 *   "accel"   $MRRC_ACCEL, else MRRC_ACCEL= on /proc/cmdline (the test
 *             VM's kernel command line, tools/vm/run.sh), else "unknown"
 *   "device"  -d DEV, else $MRRC_DEV, else rxe0
 *   "commit"  $MRRC_COMMIT (tools/bench/run.sh: git rev-parse --short
 *             HEAD on the host), else "unknown"
 *   "date"    $MRRC_DATE (tools/bench/run.sh: when the run began), else
 *             the program's start; UTC, ISO 8601
 *
 * (an empty variable counts as unset; an empty MRRC_DEV is an error), and
 * is flushed at once, so a run that dies keeps what it measured.
 */
#ifndef MRRC_BENCHJSON_H
#define MRRC_BENCHJSON_H

#include <stdint.h>
#include <stdio.h>

#define BENCH_DEFAULT_DEV "rxe0"

/*
 * A decimal number, the whole of @s, in [@min, @max]: no sign, no
 * leading blanks, no trailing characters.  0, -EINVAL (not such a
 * number) or -ERANGE (out of range).
 */
int bench_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *val);
/* A finite decimal fraction ("0.8", "1", "2e-1"), the whole of @s. */
int bench_parse_double(const char *s, double min, double max, double *val);

/*
 * The same for option @opt ("-z", or an operand's name) of program @prog:
 * the value, or a message on stderr and exit status 2.
 */
uint64_t bench_opt_u64(const char *prog, const char *opt, const char *s,
		       uint64_t min, uint64_t max);
double bench_opt_double(const char *prog, const char *opt, const char *s,
			double min, double max);

/*
 * The device: @opt_dev (-d) if not NULL, else $MRRC_DEV if set, else
 * rxe0.  NULL if that is empty or longer than a device name can be.
 */
const char *bench_device(const char *opt_dev);

/*
 * Records the keys of the run (see above), the device from @opt_dev as
 * bench_device() finds it; @prog names the program in messages.  A bad
 * device name is a usage error: a message and exit status 2.  Call once,
 * before the first measurement.
 */
void bench_init(const char *prog, const char *opt_dev);

/*
 * The command line of a benchmark whose only option is -d DEV (and -h):
 * at most @max_operands operands follow, shown as @operands in the usage
 * line (" [ITERS]", or "") and explained by @help (lines, or "").  Calls
 * bench_init() and returns the index of the first operand; exits 0 after
 * -h, 2 on a usage error.
 */
int bench_options(int argc, char **argv, const char *prog,
		  const char *operands, const char *help, int max_operands);

/* What bench_init() found. */
const char *bench_kernel(void);
const char *bench_dev(void);

/*
 * @s as a JSON string, quotes included: '"', '\\' and control characters
 * escaped, bytes that are not UTF-8 written as U+FFFD.
 */
void bench_json_str(FILE *f, const char *s);

/*
 * Ends a JSON object begun by the caller ("{" and its own keys, no
 * trailing comma): the keys of the run, "}", newline, flush.
 */
void bench_json_end(FILE *f);

#endif
