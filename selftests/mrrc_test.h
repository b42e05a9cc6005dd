/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the mrrc selftests.  They run inside the test VM (see
 * tools/vm/), as root, with mrrc.ko loaded and rxe0 on veth0.
 */
#ifndef MRRC_TEST_H
#define MRRC_TEST_H

/*
 * The harness kills a test after TEST_TIMEOUT_DEFAULT seconds: a hang
 * guard, not a timing assertion.  Thirty seconds is too short for device
 * removal or a thousand-tag burst on a debug kernel (KASAN, lockdep) under
 * emulation, which runs some paths fifty times slower than a stock one.
 */
#ifdef TEST_TIMEOUT_DEFAULT
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 180
#endif

#include <errno.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "libmrrc.h"

#define RXE_DEV "rxe0"

/* Raw ioctl, bypassing libmrrc: 0 or -errno. */
static inline int raw_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/* Read a one-line file into @buf without the newline; 0 or -errno. */
static inline int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		ret = -EIO;
	else
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	return ret;
}

/* Run a shell command quietly; its exit status. */
static inline int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return st < 0 ? -1 : WEXITSTATUS(st);
}

/*
 * Iterations of a long loop: @n, or @quick when MRRC_TEST_QUICK is set.
 * The debug kernel's lane of make check sets it, so that the loops whose
 * length only buys more of the same (the bursts of thousands of tags, the
 * random workloads) stay within its time budget there; the stock kernels'
 * lanes and make check-full run them whole.
 */
static inline unsigned int test_iters(unsigned int n, unsigned int quick)
{
	const char *q = getenv("MRRC_TEST_QUICK");

	return q && *q && strcmp(q, "0") ? quick : n;
}

/* Count output lines of a shell command that contain @needle. */
static inline int count_lines(const char *cmd, const char *needle)
{
	char line[1024];
	FILE *p = popen(cmd, "r");
	int n = 0;

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (strstr(line, needle))
			n++;
	pclose(p);
	return n;
}

/* Number of live /dev/mrrc contexts, from debugfs. */
static inline int debugfs_contexts(void)
{
	char buf[32];

	if (read_line("/sys/kernel/debug/mrrc/contexts", buf, sizeof(buf)))
		return -1;
	return atoi(buf);
}

/*
 * Column @col (0: pid) of this process's lines in debugfs "caches",
 * summed over its caches; -1 if there is no such line (no root, no
 * debugfs, no cache).
 */
static inline long debugfs_cache_column(int col)
{
	FILE *f = fopen("/sys/kernel/debug/mrrc/caches", "re");
	char line[512];
	long sum = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *save, *tok = strtok_r(line, " ", &save);
		int i;

		if (!tok || atoi(tok) != getpid())
			continue;
		for (i = 0; tok && i < col; i++)
			tok = strtok_r(NULL, " ", &save);
		if (tok)
			sum = (sum < 0 ? 0 : sum) + atol(tok);
	}
	fclose(f);
	return sum;
}

/* PDs the module holds, as the RDMA resource tracker reports them. */
static inline int mrrc_pd_count(void)
{
	return count_lines("rdma resource show pd 2>/dev/null", "[mrrc]");
}

static inline int open_bound(const char *dev)
{
	int fd = mrrc_open(0);

	if (fd >= 0 && mrrc_bind(fd, dev, NULL)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read (@set false) or write a module parameter. */
static inline int param_rw(const char *name, char *val, size_t len,
			   int set)
{
	char path[128];
	int fd, r;

	snprintf(path, sizeof(path), "/sys/module/mrrc/parameters/%s", name);
	fd = open(path, set ? O_WRONLY : O_RDONLY);
	if (fd < 0)
		return -errno;
	r = set ? write(fd, val, strlen(val)) : read(fd, val, len - 1);
	if (r >= 0 && !set)
		val[r] = 0;
	close(fd);
	return r < 0 ? -errno : 0;
}

/* Whether the peer may end exposures by SEND_WITH_INV (remote_inv=Y). */
static inline int remote_inv_on(void)
{
	char v[8];

	return !param_rw("remote_inv", v, sizeof(v), 0) && v[0] == 'Y';
}

#endif
