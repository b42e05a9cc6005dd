// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc_fuzz - a structure-aware fuzzer for the /dev/mrrc ioctl ABI.
 *
 * Strategy
 *
 * Random bytes mostly exercise the first check of a command.  This fuzzer
 * knows the ABI (uapi/mrrc_abi.h), so it builds each command the way a
 * correct caller would and then breaks one thing at a time: a member or a
 * nested element (FZ_FIELD), or what all commands share, the size, the
 * flags, a reserved member or the pointer (FZ_ENV).  About a third of the
 * commands stay well-formed and reach the deep paths with real arguments.
 * Most calls are cheap (they fail at a check, or find nothing to do), so
 * the rate stays high even on a debug kernel under emulation.
 *
 * The commands act on real state (world.c): FZ_SLOTS contexts, slot 0
 * unbound, the others bound to the RDMA device (rxe0) and connected to
 * themselves over it, several times (listen on the device's address,
 * connect, accept, both ends established).  What the kernel hands back
 * (REG handles and remote segments, connection ids, requests and events)
 * goes into per-context pools that later commands draw from, so POSTs of
 * every opcode run on live connections with registered memory and valid
 * remote keys, SENDs meet RECVs and CRWs meet STCRWs with their tags and
 * deadlines, handles are used and released twice, and ids are mixed up
 * between contexts.  Contexts are replaced as a whole (closed with
 * everything live) now and then, and when they have made as many ids as
 * the budget allows, which bounds what the fuzzer makes the module hold.
 *
 * Memory churn (churn.c) runs in its own thread on the arena that
 * registrations and operations use: munmap, mremap, MADV_DONTNEED,
 * mprotect, new memory at the same address, and fork, whose child writes
 * the memory and makes calls on the inherited contexts.  The ioctl
 * threads (-j) share the contexts, so commands race each other and the
 * churn.
 *
 * Every thread has its own generator, derived from the seed (-s): for a
 * seed, each thread makes the same sequence of decisions, although what
 * the kernel answers, and when, varies.  The run stops by itself after -t
 * seconds or -n calls.  A watchdog reports a thread that makes no progress
 * for -w seconds (a hang in a syscall) with its kernel stack, and exits 3.
 * A syscall that fails is never a finding; findings are kernel splats (the
 * test VM scans dmesg), hangs, and what tools/fuzz/run.sh checks after the
 * fuzzer has exited: contexts or pinned pages left, a module that does not
 * unload.
 *
 * Exit status: 0 done; 1 setup failed; 2 usage; 3 a hang (a thread, or
 * a forked child that did not finish its few calls in a minute); 4 a
 * forked child died (a fuzzer bug, not a kernel one).
 */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/prctl.h>

#include "fuzz.h"

#define FZ_NOBODY		65534
#define FZ_TICK_NS		200000000L

struct fz_global fz;

static volatile sig_atomic_t fz_signalled;

static void fz_usage(FILE *f)
{
	fprintf(f,
		"usage: mrrc_fuzz [-t SECONDS] [-s SEED] [-n MAXCALLS] [-j THREADS] [-u]\n"
		"                 [-w WATCHDOG] [-p SECONDS] [-d DEVICE] [-a ADDRESS]\n"
		"                 [-D PERCENT] [-M] [-P]\n"
		"\n"
		"  -t SECONDS   run this long (default 60)\n"
		"  -s SEED      seed of the per-thread generators (default: time and pid)\n"
		"  -n MAXCALLS  stop after about this many calls (default: no limit)\n"
		"  -j THREADS   ioctl threads sharing the contexts, 1..%d (default 2),\n"
		"               plus one memory churn thread\n"
		"  -u           drop to nobody (%d) before opening anything\n"
		"  -w WATCHDOG  a thread without progress this long is a hang (default 60)\n"
		"  -p SECONDS   a progress line (calls so far) this often (default 10)\n"
		"  -d DEVICE    RDMA device to bind and connect on (default rxe0)\n"
		"  -a ADDRESS   its IPv4 address (default 10.211.0.1)\n"
		"  -D PERCENT   scale the share of well-formed (deep, slow) commands:\n"
		"               0 only broken ones, 100 the default, 1000 ten times more\n"
		"  -M           no memory churn thread\n"
		"  -P           profile: time every call, report the cost per command\n",
		FZ_MAX_THREADS, FZ_NOBODY);
}

static void fz_on_signal(int sig)
{
	fz_signalled = sig;
	__atomic_store_n(&fz.stop, 1, __ATOMIC_RELAXED);
}

/* The last resort: the run took far longer than it may. */
static void fz_on_alarm(int sig)
{
	static const char msg[] =
		"mrrc_fuzz: HANG: the run did not finish in time (alarm)\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(3);
}

static void fz_signals(void)
{
	struct sigaction sa = { .sa_handler = fz_on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = fz_on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

static int fz_drop_privileges(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "mrrc_fuzz: -u: not root; running as uid %d\n",
			(int)getuid());
		return 0;
	}
	if (setgroups(0, NULL) ||
	    setresgid(FZ_NOBODY, FZ_NOBODY, FZ_NOBODY) ||
	    setresuid(FZ_NOBODY, FZ_NOBODY, FZ_NOBODY))
		return -errno;
	/* Our own /proc files stay readable for the hang report. */
	prctl(PR_SET_DUMPABLE, 1);
	return 0;
}

static int fz_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || !*s || *end ? -EINVAL : 0;
}

static int fz_options(int argc, char **argv)
{
	uint64_t v;
	int c;

	fz.seconds = 60;
	fz.nthreads = 2;
	fz.watchdog_s = 60;
	fz.progress_s = 10;
	fz.depth = 100;
	fz.devname = "rxe0";
	fz.seed = (uint64_t)time(NULL) * 1000003ULL ^ (uint64_t)getpid();
	inet_pton(AF_INET, "10.211.0.1", &fz.addr);
	while ((c = getopt(argc, argv, "t:s:n:j:uw:p:d:a:D:MPh")) != -1) {
		switch (c) {
		case 't':
			if (fz_parse_u64(optarg, &v) || !v)
				return -EINVAL;
			fz.seconds = (double)v;
			break;
		case 's':
			if (fz_parse_u64(optarg, &fz.seed))
				return -EINVAL;
			break;
		case 'n':
			if (fz_parse_u64(optarg, &fz.max_calls))
				return -EINVAL;
			break;
		case 'j':
			if (fz_parse_u64(optarg, &v) || !v || v > FZ_MAX_THREADS)
				return -EINVAL;
			fz.nthreads = (unsigned int)v;
			break;
		case 'u':
			fz.unpriv = true;
			break;
		case 'D':
			if (fz_parse_u64(optarg, &v) || v > 5000)
				return -EINVAL;
			fz.depth = (unsigned int)v;
			break;
		case 'M':
			fz.no_churn = true;
			break;
		case 'P':
			fz.profile = true;
			break;
		case 'w':
			if (fz_parse_u64(optarg, &v) || !v || v > 3600)
				return -EINVAL;
			fz.watchdog_s = (int)v;
			break;
		case 'p':
			if (fz_parse_u64(optarg, &v) || !v || v > 3600)
				return -EINVAL;
			fz.progress_s = (int)v;
			break;
		case 'd':
			if (strlen(optarg) >= MRRC_NAME_MAX)
				return -EINVAL;
			fz.devname = optarg;
			break;
		case 'a':
			if (inet_pton(AF_INET, optarg, &fz.addr) != 1)
				return -EINVAL;
			break;
		case 'h':
			fz_usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	return optind == argc ? 0 : -EINVAL;
}

/* ---- threads and the watchdog -------------------------------------------- */

static void *fz_ioctl_main(void *arg)
{
	struct fz_thread *t = arg;

	t->tid = gettid();
	while (!fz_stopping(t))
		fz_step(t);
	return NULL;
}

static int fz_thread_init(struct fz_thread *t, int idx, const char *role)
{
	t->idx = idx;
	t->role = role;
	t->cur = -1;
	t->tmp.fd = -1;
	t->tmp.index = -1;
	pthread_mutex_init(&t->tmp.lock, NULL);
	pthread_mutex_init(&t->tmp.setup, NULL);
	fz_rng_init(&t->rng, fz.seed, (uint64_t)idx);
	return fz_thread_mem(t);
}

static int fz_start_threads(void)
{
	unsigned int i, n = fz.nthreads + !fz.no_churn;

	for (i = 1; i <= n; i++) {
		struct fz_thread *t = &fz.thread[i];
		bool churn = !fz.no_churn && i == n;

		if (fz_thread_init(t, (int)i, churn ? "churn" : "ioctl"))
			return -ENOMEM;
		fz.nthread = i + 1;
		if (pthread_create(&t->pt, NULL,
				   churn ? fz_churn_main : fz_ioctl_main, t))
			return -EAGAIN;
		t->running = true;
	}
	return 0;
}

/* Print one /proc file of a thread, for the hang report. */
static void fz_dump_task(pid_t tid, const char *what)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, what);
	f = fopen(path, "re");
	if (!f) {
		printf("  %s: %s\n", what, strerror(errno));
		return;
	}
	printf("  %s:\n", what);
	while (fgets(line, sizeof(line), f))
		printf("    %s%s", line, strchr(line, '\n') ? "" : "\n");
	fclose(f);
}

static void __attribute__((noreturn)) fz_hang(struct fz_thread *t,
					      double secs, double elapsed)
{
	int cur = __atomic_load_n(&t->cur, __ATOMIC_RELAXED);

	printf("mrrc_fuzz: HANG: %s thread %d (tid %d) made no progress for %.0f s, %s %s\n",
	       t->role, t->idx, (int)t->tid, secs,
	       cur >= 0 ? "in a call of" : "not in a device call:",
	       cur >= 0 ? fz_bucket_name(cur) : t->role);
	fz_dump_task(t->tid, "wchan");
	fz_dump_task(t->tid, "syscall");
	fz_dump_task(t->tid, "stack");
	fz_report(stdout, elapsed);
	fflush(stdout);
	_exit(3);
}

static double fz_secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* Watch the threads until the time is up, the calls are made or a signal. */
static void fz_monitor(uint64_t start)
{
	uint64_t last[FZ_MAX_THREADS + 2] = { 0 }, since[FZ_MAX_THREADS + 2];
	uint64_t printed = start, limit = (uint64_t)(fz.seconds * 1e9), now;
	struct timespec tick = { .tv_nsec = FZ_TICK_NS };
	unsigned int i;

	for (i = 0; i < FZ_ARRAY_SIZE(since); i++)
		since[i] = start;
	while (!__atomic_load_n(&fz.stop, __ATOMIC_RELAXED)) {
		nanosleep(&tick, NULL);
		now = fz_now_ns();
		if (now - start >= limit)
			__atomic_store_n(&fz.stop, 1, __ATOMIC_RELAXED);
		for (i = 1; i < fz.nthread; i++) {
			uint64_t p = __atomic_load_n(&fz.thread[i].progress,
						     __ATOMIC_RELAXED);

			if (p != last[i]) {
				last[i] = p;
				since[i] = now;
			} else if (now - since[i] >
				   (uint64_t)fz.watchdog_s * 1000000000ULL) {
				fz_hang(&fz.thread[i], fz_secs(now - since[i]),
					fz_secs(now - start));
			}
		}
		if (now - printed >= (uint64_t)fz.progress_s * 1000000000ULL) {
			uint64_t calls = fz_calls_now();

			printed = now;
			printf("mrrc_fuzz: progress %.0f s: calls=%llu rate=%.0f/s\n",
			       fz_secs(now - start), (unsigned long long)calls,
			       (double)calls / fz_secs(now - start));
			fflush(stdout);
		}
	}
}

/* Join every thread; one that does not stop within the watchdog hangs. */
static void fz_join(uint64_t start)
{
	unsigned int i;

	for (i = 1; i < fz.nthread; i++) {
		struct fz_thread *t = &fz.thread[i];
		struct timespec dl;

		if (!t->running)
			continue;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += fz.watchdog_s;
		if (pthread_timedjoin_np(t->pt, NULL, &dl))
			fz_hang(t, fz.watchdog_s, fz_secs(fz_now_ns() - start));
		t->running = false;
	}
}

int main(int argc, char **argv)
{
	uint64_t start, t0;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (fz_options(argc, argv)) {
		fz_usage(stderr);
		return 2;
	}
	ret = fz.unpriv ? fz_drop_privileges() : 0;
	if (ret) {
		fprintf(stderr, "mrrc_fuzz: cannot drop privileges: %s\n",
			strerror(-ret));
		return 1;
	}
	fz_signals();
	alarm((unsigned int)fz.seconds + 3 * (unsigned int)fz.watchdog_s + 120);
	printf("mrrc_fuzz: seed %llu, %.0f s, %u ioctl threads + churn, max calls %llu, uid %d, pid %d, device %s\n",
	       (unsigned long long)fz.seed, fz.seconds, fz.nthreads,
	       (unsigned long long)fz.max_calls, (int)geteuid(), (int)getpid(),
	       fz.devname);

	ret = fz_mem_init();
	if (!ret)
		ret = fz_thread_init(&fz.thread[0], 0, "main");
	fz.nthread = 1;
	if (!ret)
		ret = fz_world_init(&fz.thread[0]);
	if (ret) {
		fprintf(stderr, "mrrc_fuzz: setup: %s\n", strerror(-ret));
		return 1;
	}
	start = fz_now_ns();
	ret = fz_start_threads();
	if (ret) {
		fprintf(stderr, "mrrc_fuzz: threads: %s\n", strerror(-ret));
		__atomic_store_n(&fz.stop, 1, __ATOMIC_RELAXED);
	}
	fz_monitor(start);
	fz_join(start);
	t0 = fz_now_ns();
	fz_world_fini();
	printf("mrrc_fuzz: stopped%s%s; contexts closed in %.3f s\n",
	       fz_signalled ? " by signal " : "",
	       fz_signalled ? strsignal(fz_signalled) : "",
	       fz_secs(fz_now_ns() - t0));
	fz_report(stdout, fz_secs(t0 - start));
	if (fz_child_hangs())
		return 3;
	if (fz_child_crashes()) {
		printf("mrrc_fuzz: %llu forked children died: a fuzzer bug\n",
		       (unsigned long long)fz_child_crashes());
		return 4;
	}
	return ret ? 1 : 0;
}
