// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fault injection: every fallible step of every command fails once, in
 * turn, and the module must answer with a documented errno and leave
 * nothing behind.  In the manner of the kernel's
 * tools/testing/selftests/iommu/iommufd_fail_nth.c.
 *
 * How it works
 * ------------
 * Writing n to /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION) makes
 * the n-th fault-injection site this thread passes fail, whatever the
 * other settings of the fault attributes; reading it back gives 0 once
 * that has happened.  A sweep sets up its state, then for n = 1, 2, ...
 * writes n, runs one operation, reads fail-nth back and disarms it:
 *
 *  - if the injection fired, the operation either failed with one of the
 *    errnos its sweep lists below (the contract of Documentation/abi.rst)
 *    or succeeded (some failures are absorbed: a deregistration that
 *    cannot allocate its work-request chain invalidates one region at a
 *    time);
 *  - either way, what the operation did is undone (handles released,
 *    connections destroyed, completions reaped: each accepted operation
 *    exactly once), the cache gauges are checked (no handle, no region in
 *    use, every pinned page belongs to a cached region), and after a
 *    failure the operation is run once more without injection: the
 *    context still works;
 *  - the sweep ends at the first n the operation passes without the
 *    injection firing, so the last n that fired is the number of
 *    injection points on its path.  A sweep stops at MRRC_FAIL_NTH_MAX
 *    (default 400) points, and says so.
 *
 * At the end of every test nothing may be left: no context
 * (/sys/kernel/debug/mrrc/contexts), no pinned page (MRRC_STATS_GLOBAL
 * pinned_pages, and nr_foll_pin_acquired - nr_foll_pin_released in
 * /proc/vmstat as at the start), no protection domain of the module.
 * kmemleak, KASAN and lockdep on the debug kernel (tools/vm/debug-kernel.sh)
 * watch for the rest through the test VM's dmesg scan.
 *
 * Each sweep has two phases:
 *
 *  - allocations: failslab and fail_page_alloc, ignore-gfp-wait=N (sleeping
 *    allocations count too), fail_page_alloc min-order=0, and
 *    ignore-gfp-highmem=Y: user pages are never failed (a user page fault
 *    that fails goes to the OOM path, not to the module; every buffer is
 *    faulted in beforehand).  Allocations of debugging code (kmemleak's
 *    metadata, KASAN's stack depot) count as sites too;
 *  - functions: fail_function on the module's own fallible functions,
 *    marked ALLOW_ERROR_INJECTION() in kmod/ (fns[] below, with the error
 *    each is made to return), with failslab (cache-filter=Y and no cache
 *    marked) and fail_page_alloc (min-order=100) out of the count.
 *
 * Every fault attribute (failslab, fail_page_alloc, fail_function) gets
 * task-filter=Y, probability=100, interval=1, times=1, verbose=0, and no
 * task has make-it-fail set: nothing is ever injected outside fail-nth, in
 * any task.  The settings are restored when the program exits.
 *
 * fail-nth counts this thread's sites only, so what the module does in
 * kworkers (the RDMA CM handlers that create a connection's queue pair,
 * the FRWR pool refill) is outside those sweeps.  The CM handlers get a
 * sweep of their own (async_conn) through fail_function's "space" budget:
 * space = n makes the n-th call of a listed function fail, in any task
 * (task-filter=N, times=1), which is safe because only this test calls
 * the module.
 *
 * fail_function and fail-nth: the probe is a kprobe.  Where kprobes on
 * function entry go through ftrace (CONFIG_FUNCTION_TRACER,
 * KPROBES_ON_FTRACE) its handler runs in the task and fail-nth counts it.
 * Where they are int3 traps the handler runs in NMI context: fail-nth and
 * task-filter cannot see the task, and the "space" budget ends in
 * should_fail()'s get_random_u32_below(), which takes a local lock in NMI
 * context, a lockdep report.  The test finds out which (probe_fn_mode());
 * on an int3 kernel the function phases and async_conn are skipped, unless
 * MRRC_FAIL_NTH_INT3=1 asks for "space" sweeps anyway.
 *
 * An injected failure inside vmalloc() (rxe allocates its queues with
 * vmalloc_user(), in reg_fast_first) makes the kernel print an allocation
 * failure report with a backtrace (warn_alloc(), at most one per 10 s).
 * It is expected; the test brackets its injections with "mrrc_fail_nth:
 * fault injection starts/ends" lines in the kernel log.
 *
 * On a kernel without fault injection (no /proc/thread-self/fail-nth,
 * Debian's stock kernels) every test is skipped; MRRC_FAIL_NTH_DRY=1 then
 * runs each sweep's operation once without injection, which checks the
 * test itself.
 */
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "mrrc_test.h"

#define TMO_MS		20000

#include "mrrc_dp_test.h"

#define DBG		"/sys/kernel/debug"
#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define BUF_LEN		(4 << 20)
#define RW		MRRC_ACCESS_LOCAL_WRITE
#define REMOTE_ALL	(MRRC_ACCESS_REMOTE_WRITE | MRRC_ACCESS_REMOTE_READ | \
			 MRRC_ACCESS_REMOTE_ATOMIC)
/* Pages of a region larger than rxe's largest fast MR (512 pages). */
#define FALLBACK_PAGES	600
#define SWEEP_TIMEOUT	1200

static size_t P;

/* ---- the fault-injection configuration ---------------------------------- */

/*
 * The functions marked ALLOW_ERROR_INJECTION() in kmod/, and their error;
 * mrrc_dp_ib_post() has a test of its own (device_refuses_a_post), as
 * have mrrc_dp_ib_post_chain() (chained_registration_refused),
 * mrrc_dp_chain_cut() (chained_exposure_without_its_message) and
 * mrrc_index_clear() (index_erase_fails_then_is_retried).
 */
#define FN_SYNC		1	/* called by the command itself */
#define FN_ASYNC	2	/* called by the RDMA CM handlers */

static const struct fn {
	const char *name;
	int err;		/* 0: the function returns NULL */
	unsigned int set;
} fns[] = {
	{ "mrrc_cache_create", -ENOMEM, FN_SYNC },
	{ "mrrc_region_create", -ENOMEM, FN_SYNC },
	{ "mrrc_handle_create", -ENOMEM, FN_SYNC },
	{ "mrrc_ordinary_reg", -ENOMEM, FN_SYNC },
	{ "mrrc_frwr_create", -ENOMEM, FN_SYNC },
	{ "mrrc_frwr_qp_connect", -ENOMEM, FN_SYNC },
	{ "mrrc_frwr_pin", -EFAULT, FN_SYNC },
	{ "mrrc_frwr_post_wait", -EIO, FN_SYNC },
	{ "mrrc_frwr_wait_check", -ETIMEDOUT, FN_SYNC },
	{ "mrrc_frwr_inv_fault", 1, FN_SYNC },
	{ "mrrc_conn_alloc", 0, FN_SYNC | FN_ASYNC },
	{ "mrrc_conn_isolate", -ENOMEM, FN_SYNC | FN_ASYNC },
	{ "mrrc_conn_create_qp", -ENOMEM, FN_ASYNC },
	{ "mrrc_data_init", -ENOMEM, FN_ASYNC },
};

/* Fault attribute settings, saved at start and restored at exit. */
static const char *const knobs[] = {
	"failslab/task-filter", "failslab/probability", "failslab/interval",
	"failslab/times", "failslab/space", "failslab/verbose",
	"failslab/ignore-gfp-wait", "failslab/cache-filter",
	"fail_page_alloc/task-filter", "fail_page_alloc/probability",
	"fail_page_alloc/interval", "fail_page_alloc/times",
	"fail_page_alloc/space", "fail_page_alloc/verbose",
	"fail_page_alloc/ignore-gfp-wait",
	"fail_page_alloc/ignore-gfp-highmem", "fail_page_alloc/min-order",
	"fail_function/task-filter", "fail_function/probability",
	"fail_function/interval", "fail_function/times",
	"fail_function/space", "fail_function/verbose",
};

enum { PH_ALLOC, PH_FUNC, PH_ASYNC };
static const char *const phase_name[] = { "allocation", "function", "async" };

/*
 * How fail_function is counted: not at all (FN_NONE), by fail-nth
 * (FN_NTH), or not by fail-nth because kprobes are int3 traps (FN_INT3):
 * then only with MRRC_FAIL_NTH_INT3=1, through fail_function's budget
 * (FN_SPACE).
 */
enum { FN_UNKNOWN, FN_NONE, FN_NTH, FN_INT3, FN_SPACE };

/* Shared by the test processes the harness forks and the parent. */
struct shared {
	int fn_mode;
	unsigned int sweeps;
	unsigned int points[3];		/* by phase */
	unsigned int capped;
	double seconds;
	char saved[ARRAY_SIZE(knobs)][32];
	bool have_saved[ARRAY_SIZE(knobs)];
};

static struct shared *shm;
static pid_t parent_pid;
static bool fi_ok;		/* fail-nth and the fault attributes exist */
static bool fi_fn;		/* fail_function exists */
static bool dry;		/* MRRC_FAIL_NTH_DRY: no injection at all */
static bool int3_ok;		/* MRRC_FAIL_NTH_INT3: fail_function anyway */
static unsigned int nth_max = 400;

static int dbg_write(const char *file, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int dbg_write(const char *file, const char *fmt, ...)
{
	char path[256], val[96];
	va_list ap;
	ssize_t w;
	int fd, len;

	snprintf(path, sizeof(path), DBG "/%s", file);
	va_start(ap, fmt);
	len = vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	w = write(fd, val, len);
	if (w < 0)
		w = -errno;
	close(fd);
	return w == len ? 0 : w < 0 ? (int)w : -EIO;
}

static long dbg_read(const char *file)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), DBG "/%s", file);
	if (read_line(path, buf, sizeof(buf)))
		return LONG_MIN;
	return strtol(buf, NULL, 0);
}

/* Nothing but fail-nth injects anything, in any task. */
static void fi_base(void)
{
	static const char *const attrs[] = {
		"failslab", "fail_page_alloc", "fail_function",
	};
	char f[64];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(attrs); i++) {
		snprintf(f, sizeof(f), "%s/task-filter", attrs[i]);
		dbg_write(f, "Y");
		snprintf(f, sizeof(f), "%s/probability", attrs[i]);
		dbg_write(f, "100");
		snprintf(f, sizeof(f), "%s/interval", attrs[i]);
		dbg_write(f, "1");
		snprintf(f, sizeof(f), "%s/times", attrs[i]);
		dbg_write(f, "1");
		snprintf(f, sizeof(f), "%s/space", attrs[i]);
		dbg_write(f, "0");
		snprintf(f, sizeof(f), "%s/verbose", attrs[i]);
		dbg_write(f, "0");
	}
	dbg_write("failslab/ignore-gfp-wait", "N");
	dbg_write("failslab/cache-filter", "N");
	dbg_write("fail_page_alloc/ignore-gfp-wait", "N");
	dbg_write("fail_page_alloc/ignore-gfp-highmem", "Y");
	dbg_write("fail_page_alloc/min-order", "0");
	if (fi_fn)
		dbg_write("fail_function/inject", " ");
}

/* A line in the kernel log, for whoever reads it afterwards. */
static void kmsg(const char *msg)
{
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, msg, strlen(msg)) < 0)
			fd = -fd;
		close(fd < 0 ? -fd : fd);
	}
}

static void make_it_fail_off(void)
{
	int fd = open("/proc/thread-self/make-it-fail", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, "0", 1) != 1)
			fd = -fd;
		close(fd < 0 ? -fd : fd);
	}
}

static void __attribute__((constructor)) fi_init(void)
{
	const char *s = getenv("MRRC_FAIL_NTH_MAX");
	unsigned int i;

	parent_pid = getpid();
	P = sysconf(_SC_PAGESIZE);
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		abort();
	memset(shm, 0, sizeof(*shm));
	if (s && atoi(s) > 0)
		nth_max = atoi(s);
	s = getenv("MRRC_FAIL_NTH_DRY");
	dry = s && *s && *s != '0';
	s = getenv("MRRC_FAIL_NTH_INT3");
	int3_ok = s && *s && *s != '0';
	if (access(FAIL_NTH, R_OK | W_OK) || access(DBG "/failslab", F_OK) ||
	    access(DBG "/fail_page_alloc", F_OK))
		return;
	fi_fn = !access(DBG "/fail_function/inject", W_OK);
	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		char path[256];

		snprintf(path, sizeof(path), DBG "/%s", knobs[i]);
		shm->have_saved[i] = !read_line(path, shm->saved[i],
					       sizeof(shm->saved[i]));
	}
	make_it_fail_off();
	fi_base();
	fi_ok = true;
	dry = false;
	kmsg("mrrc_fail_nth: fault injection starts: allocation failure reports (warn_alloc) until it ends are injected failures\n");
}

static void __attribute__((destructor)) fi_exit(void)
{
	unsigned int i;

	if (!fi_ok || getpid() != parent_pid)
		return;
	if (fi_fn)
		dbg_write("fail_function/inject", " ");
	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		if (shm->have_saved[i])
			dbg_write(knobs[i], "%s", shm->saved[i]);
	kmsg("mrrc_fail_nth: fault injection ends\n");
}

/* Add @fn to fail_function's list, returning @err (0: the default). */
static int fn_arm(const char *fn, long err)
{
	char f[96];
	int ret = dbg_write("fail_function/inject", "%s", fn);

	if (ret || !err)
		return ret;
	snprintf(f, sizeof(f), "fail_function/%s/retval", fn);
	return dbg_write(f, "%lu", (unsigned long)err);
}

/* Which sites count: allocations, or the module's functions. */
static int set_phase(int ph)
{
	unsigned int set = ph == PH_ASYNC ? FN_ASYNC : FN_SYNC;
	unsigned int i;
	int ret;

	dbg_write("failslab/cache-filter", ph == PH_ALLOC ? "N" : "Y");
	dbg_write("fail_page_alloc/min-order", ph == PH_ALLOC ? "0" : "100");
	if (!fi_fn)
		return ph == PH_ALLOC ? 0 : -ENOENT;
	dbg_write("fail_function/inject", " ");
	if (ph == PH_ALLOC)
		return 0;
	for (i = 0; i < ARRAY_SIZE(fns); i++) {
		if (!(fns[i].set & set))
			continue;
		ret = fn_arm(fns[i].name, fns[i].err);
		if (ret)
			return ret;
	}
	return 0;
}

/* fail-nth */
static int nth_arm(int fd, unsigned int n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%u", n);

	return pwrite(fd, b, len, 0) == len ? 0 : -errno;
}

static bool nth_disarm(int fd)
{
	char b[16] = "";
	ssize_t r = pread(fd, b, sizeof(b) - 1, 0);
	bool fired = r > 0 ? atoi(b) == 0 : errno == EFAULT;

	while (pwrite(fd, "0", 1, 0) != 1 && errno == EFAULT)
		;
	return fired;
}

/* fail_function's own budget: the n-th call of a listed function fails. */
static int space_arm(unsigned int n)
{
	int ret = dbg_write("fail_function/space", "%u", n);

	ret = ret ?: dbg_write("fail_function/times", "1");
	return ret ?: dbg_write("fail_function/task-filter", "N");
}

static bool space_disarm(void)
{
	long times;

	/* No task has make-it-fail: task-filter=Y stops it at once. */
	dbg_write("fail_function/task-filter", "Y");
	times = dbg_read("fail_function/times");
	dbg_write("fail_function/times", "1");
	dbg_write("fail_function/space", "0");
	return times == 0;
}

/* ---- helpers ------------------------------------------------------------ */

static int ctx_open(uint32_t mode, uint32_t policy)
{
	struct mrrc_cache_config cfg = {
		.mode = mode, .policy = policy,
		.max_pages = 1 << 16, .max_regions = 4096,
	};
	int fd = open_bound(RXE_DEV), r;

	if (fd < 0)
		return -ENODEV;
	r = mrrc_cache_config(fd, &cfg);
	if (r) {
		close(fd);
		return r;
	}
	return fd;
}

static struct mrrc_cache_stats stats(int fd)
{
	struct mrrc_cache_stats st;

	memset(&st, 0xff, sizeof(st));
	mrrc_cache_stats(fd, &st);
	return st;
}

static struct mrrc_cache_stats global_stats(void)
{
	struct mrrc_cache_stats st;
	int fd = mrrc_open(0);

	memset(&st, 0xff, sizeof(st));
	if (fd >= 0) {
		mrrc_global_stats(fd, &st);
		close(fd);
	}
	return st;
}

/* FOLL_PIN pages acquired and not released, system-wide. */
static long pin_imbalance(void)
{
	long acq = LONG_MIN, rel = 0, v;
	char line[128];
	FILE *f;
	int fd;

	/* Fold the per-cpu counter deltas first. */
	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1", 1) < 0)
			acq = LONG_MIN;
		close(fd);
	}
	f = fopen("/proc/vmstat", "re");
	if (!f)
		return LONG_MIN;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "nr_foll_pin_acquired %ld", &v) == 1)
			acq = v;
		else if (sscanf(line, "nr_foll_pin_released %ld", &v) == 1)
			rel = v;
	}
	fclose(f);
	return acq == LONG_MIN ? acq : acq - rel;
}

static bool errno_in(int ret, const int *errs)
{
	for (; errs && *errs; errs++)
		if (ret == -*errs)
			return true;
	return false;
}

static const char *ev_name(int ev)
{
	static const char *const names[] = {
		"?", "CONNECT_REQUEST", "ESTABLISHED", "REJECTED",
		"UNREACHABLE", "DISCONNECTED", "DEVICE_REMOVAL", "ERROR",
	};

	return ev >= 0 && ev < (int)ARRAY_SIZE(names) ? names[ev] : "?";
}

/* Throw away every completion and event of @fd. */
static unsigned int drain(int fd)
{
	struct mrrc_cqe c[64];
	unsigned int n = 0;
	int r;

	while ((r = mrrc_poll_cq(fd, c, ARRAY_SIZE(c))) > 0)
		n += r;
	return n;
}

/* The next event on @fd, skipping DISCONNECTED ones of earlier rounds. */
static int wait_ev(int fd, int want, struct mrrc_cqe *bad)
{
	struct mrrc_cqe c;
	int r;

	for (;;) {
		r = reap(fd, &c, 1);
		if (r)
			return r;
		if (c.opcode == MRRC_OP_EVENT && c.event == want)
			return c.conn;
		if (c.opcode == MRRC_OP_EVENT &&
		    c.event == MRRC_EVENT_DISCONNECTED)
			continue;
		if (bad)
			*bad = c;
		return -EPROTO;
	}
}

/* ---- the fixture -------------------------------------------------------- */

#define NREQ	4
/* A status the kernel never writes: the request was not looked at. */
#define UNTOUCHED	1
#define NWR	8

struct two_sided;

FIXTURE(fail) {
	int nth;		/* /proc/thread-self/fail-nth */
	int ctx0;		/* contexts, pinned pages and PDs at setup */
	long pins0;
	int pd0;
	int fd;			/* the context under test */
	int sfd, cfd;		/* server and client (or peer) contexts */
	uint16_t port;
	uint32_t lis, sconn, cconn;
	uint8_t *buf, *sbuf, *cbuf;
	uint32_t mode;
	bool fresh;		/* reg: a new context for every round */
	bool set_async;		/* async_inval changed: back to Y */
	/* what the operation under test made */
	int newfd;
	uint32_t id;
	unsigned int nreq, done, nw, got;
	uint64_t tag;
	struct mrrc_reg_req req[NREQ];
	struct mrrc_seg seg[64];
	uint32_t handles[8];
	struct mrrc_wr w[NWR];
	struct mrrc_cqe cqe[64];
	struct mrrc_seg rseg;	/* the server's remotely accessible region */
	uint32_t rh;		/* its export */
	uint64_t exported, exposed;	/* the server's gauges before a sweep */
	/* close: the context that is closed, and its peer's connections */
	uint32_t pc1, pc2;
	unsigned int silent;	/* closes the peer did not hear about */
	const struct two_sided *ts;	/* post_recv … post_crw */
	/* this sweep, and where it is */
	const char *cur;
	unsigned int n;
	int ph;
	bool fired;
	unsigned int absorbed[3], failed[3];
	unsigned short errs[3][134];	/* failures by errno */
};

struct sweep {
	const char *name;
	const int *alloc_errs;	/* errnos an injected allocation may give */
	const int *func_errs;	/* ... an injected function failure */
	void (*prep)(struct __test_metadata *_metadata,
		     FIXTURE_DATA(fail) *self);
	int (*op)(FIXTURE_DATA(fail) *self);
	void (*undo)(struct __test_metadata *_metadata,
		     FIXTURE_DATA(fail) *self, int ret);
};

static const int E_NOMEM[] = { ENOMEM, 0 };
/* CONNECT: the RDMA CM's address resolution needs a route (ENOBUFS). */
static const int E_CONNECT[] = { ENOMEM, ENOBUFS, 0 };
/*
 * The first fast registration creates the context's queue pair: the
 * driver's error (rxe: ENFILE when it cannot allocate the QP's socket).
 */
static const int E_REG_FIRST[] = { ENOMEM, ENFILE, 0 };
/*
 * Registration: pinning fails with EFAULT, a REG_MR work request with EIO,
 * or ETIMEDOUT when it gets no completion.
 */
static const int E_REG[] = { ENOMEM, EFAULT, EIO, ETIMEDOUT, 0 };

#define FI_REQUIRE() do {						\
	if (!fi_ok && !dry)						\
		SKIP(return, "no %s: the kernel has no fault injection", \
		     FAIL_NTH);						\
} while (0)

FIXTURE_SETUP(fail)
{
	self->fd = self->sfd = self->cfd = self->newfd = self->nth = -1;
	if (!fi_ok && !dry)
		return;
	self->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	/* Fault everything in: no user page fault under injection. */
	memset(self->buf, 0, BUF_LEN);
	self->sbuf = self->buf;
	self->cbuf = self->buf + (1 << 20);
	self->port = 20000 + getpid() % 20000;
	if (fi_ok) {
		self->nth = open(FAIL_NTH, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, self->nth);
		make_it_fail_off();
	}
	self->ctx0 = debugfs_contexts();
	self->pins0 = pin_imbalance();
	self->pd0 = mrrc_pd_count();
}

FIXTURE_TEARDOWN(fail)
{
	if (self->cur)
		ksft_print_msg("fail_nth: %s: stopped at %s injection %u%s\n",
			       self->cur, phase_name[self->ph], self->n,
			       self->fired ? "" : " (it did not fire)");
	if (self->nth >= 0) {
		nth_disarm(self->nth);
		close(self->nth);
	}
	if (fi_ok) {
		space_disarm();
		set_phase(PH_ALLOC);
	}
	if (self->set_async)
		param_rw("async_inval", "Y", 0, 1);
	if (self->newfd >= 0)
		close(self->newfd);
	if (self->fd >= 0)
		close(self->fd);
	if (self->sfd >= 0)
		close(self->sfd);
	if (self->cfd >= 0)
		close(self->cfd);
	if (self->buf && self->buf != MAP_FAILED)
		munmap(self->buf, BUF_LEN);
}

/*
 * No handle, no region in use, every pinned page in a cached region once
 * the invalidations in flight have completed (fast mode does not wait for
 * them: up to 5 s for the module's reaper).
 */
static void cache_ok(struct __test_metadata *_metadata, int fd, uint32_t mode)
{
	struct mrrc_cache_stats st = stats(fd);

	for (int i = 0; mode != MRRC_MODE_MODEL && i < 500 &&
			st.pinned_pages != st.cached_pages; i++) {
		usleep(10000);
		st = stats(fd);
	}
	ASSERT_EQ(0, st.handles);
	ASSERT_EQ(0, st.inuse_regions);
	if (mode == MRRC_MODE_MODEL) {
		ASSERT_EQ(0, st.pinned_pages);
	} else {
		ASSERT_EQ(st.cached_pages, st.pinned_pages);
	}
}

/* At the end of a test: every context closed, nothing left anywhere. */
static void all_clean(struct __test_metadata *_metadata,
		      FIXTURE_DATA(fail) *self)
{
	struct mrrc_cache_stats g;
	int *fds[] = { &self->fd, &self->sfd, &self->cfd, &self->newfd };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	ASSERT_EQ(self->ctx0, debugfs_contexts());
	g = global_stats();
	ASSERT_EQ(0, g.caches);
	ASSERT_EQ(0, g.pinned_pages);
	ASSERT_EQ(0, g.handles);
	ASSERT_EQ(0, g.inuse_regions);
	ASSERT_EQ(0, g.cached_regions);
	/* Gauges a destroyed cache keeps when they leaked. */
	ASSERT_EQ(0, g.exposed);
	ASSERT_EQ(0, g.exported);
	ASSERT_EQ(0, g.export_bytes);
	ASSERT_EQ(self->pins0, pin_imbalance())
		TH_LOG("FOLL_PIN pages left pinned");
	ASSERT_EQ(self->pd0, mrrc_pd_count())
		TH_LOG("protection domains left behind");
}

/* Run the operation with the n-th site of phase @ph failing, n = 1, ... */
static unsigned int sweep_phase(struct __test_metadata *_metadata,
				FIXTURE_DATA(fail) *self,
				const struct sweep *s, int ph)
{
	const int *errs = ph == PH_ALLOC ? s->alloc_errs : s->func_errs;
	bool space = ph != PH_ALLOC && shm->fn_mode == FN_SPACE;
	unsigned int n, last = 0;
	int ret;

	ASSERT_EQ(0, set_phase(ph));
	self->cur = s->name;
	self->ph = ph;
	for (n = 1; n <= nth_max; n++) {
		self->n = n;
		self->fired = false;
		if (s->prep)
			s->prep(_metadata, self);
		ASSERT_EQ(0, space ? space_arm(n) : nth_arm(self->nth, n));
		ret = s->op(self);
		self->fired = space ? space_disarm() : nth_disarm(self->nth);
		if (self->fired)
			last = n;
		if (ret) {
			ASSERT_TRUE(self->fired)
				TH_LOG("%s: %s without an injection (n=%u)",
				       s->name, strerror(-ret), n);
			ASSERT_TRUE(errno_in(ret, errs))
				TH_LOG("%s: %s injection %u: %s (%d) is not an error the command may give",
				       s->name, phase_name[ph], n,
				       strerror(-ret), ret);
			self->failed[ph]++;
			if (-ret < (int)ARRAY_SIZE(self->errs[ph]))
				self->errs[ph][-ret]++;
		} else if (self->fired) {
			self->absorbed[ph]++;
		}
		s->undo(_metadata, self, ret);
		if (!self->fired)
			break;
	}
	self->cur = NULL;
	ASSERT_EQ(0, set_phase(PH_ALLOC));
	if (n > nth_max) {
		ksft_print_msg("fail_nth: %s: %s sweep stopped at %u points (MRRC_FAIL_NTH_MAX)\n",
			       s->name, phase_name[ph], nth_max);
		shm->capped++;
	}
	return last;
}

/* fail_function: counted by fail-nth, or (int3 kprobes) by its budget. */
static void probe_fn_mode(struct __test_metadata *_metadata,
			  FIXTURE_DATA(fail) *self)
{
	bool fired;
	int fd, r;

	if (shm->fn_mode != FN_UNKNOWN)
		return;
	shm->fn_mode = FN_NONE;
	if (!fi_fn || set_phase(PH_FUNC)) {
		set_phase(PH_ALLOC);
		ksft_print_msg("fail_nth: no fail_function for the module's functions: allocation sweeps only\n");
		return;
	}
	fd = mrrc_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, nth_arm(self->nth, 1));
	r = mrrc_bind(fd, RXE_DEV, NULL);	/* mrrc_cache_create() */
	fired = nth_disarm(self->nth);
	close(fd);
	ASSERT_EQ(0, set_phase(PH_ALLOC));
	if (fired && r == -ENOMEM) {
		shm->fn_mode = FN_NTH;
	} else if (int3_ok) {
		shm->fn_mode = FN_SPACE;
		ksft_print_msg("fail_nth: kprobes are int3 traps here, fail-nth does not see fail_function: counting with fail_function/space (expect a lockdep report from get_random_u8() in NMI context)\n");
	} else {
		shm->fn_mode = FN_INT3;
		ksft_print_msg("fail_nth: kprobes are int3 traps here (no CONFIG_FUNCTION_TRACER): fail-nth does not see fail_function, and its own budget would draw random numbers in NMI context, a lockdep report; function sweeps skipped (MRRC_FAIL_NTH_INT3=1 runs them anyway)\n");
	}
}

static bool fn_sweeps(void)
{
	return shm->fn_mode == FN_NTH || shm->fn_mode == FN_SPACE;
}

/* "N failed (ENOMEM N, ...), M absorbed" */
static const char *outcome(FIXTURE_DATA(fail) *self, int ph, char *buf,
			   size_t len)
{
	size_t at;
	unsigned int e;
	const char *sep = " (";

	at = snprintf(buf, len, "%u failed", self->failed[ph]);
	for (e = 1; e < ARRAY_SIZE(self->errs[ph]) && at < len; e++) {
		if (!self->errs[ph][e])
			continue;
		at += snprintf(buf + at, len - at, "%s%s %u", sep,
			       strerrorname_np(e) ?: "?", self->errs[ph][e]);
		sep = ", ";
	}
	if (at < len && *sep == ',')
		at += snprintf(buf + at, len - at, ")");
	if (at < len)
		snprintf(buf + at, len - at, ", %u %s", self->absorbed[ph],
			 ph == PH_ASYNC ? "connected on the client's retry" :
			 "absorbed");
	return buf;
}

static void report(FIXTURE_DATA(fail) *self, const char *name,
		   unsigned int a, unsigned int f, unsigned int as,
		   double secs)
{
	char o1[160], o2[160];

	if (as)
		ksft_print_msg("fail_nth: %-15s %3u points in the RDMA CM handlers: %s; %.1f s\n",
			       name, as, outcome(self, PH_ASYNC, o1, sizeof(o1)),
			       secs);
	else if (fn_sweeps())
		ksft_print_msg("fail_nth: %-15s %3u allocation points: %s; %u function points: %s; %.1f s\n",
			       name, a, outcome(self, PH_ALLOC, o1, sizeof(o1)),
			       f, outcome(self, PH_FUNC, o2, sizeof(o2)), secs);
	else
		ksft_print_msg("fail_nth: %-15s %3u allocation points: %s; %.1f s\n",
			       name, a, outcome(self, PH_ALLOC, o1, sizeof(o1)),
			       secs);
	fflush(stdout);
	shm->sweeps++;
	shm->points[PH_ALLOC] += a;
	shm->points[PH_FUNC] += f;
	shm->points[PH_ASYNC] += as;
	shm->seconds += secs;
}

static double secs_since(uint64_t t0)
{
	return (now_ns() - t0) / 1e9;
}

/* Once without injection, then both phases. */
static void sweep(struct __test_metadata *_metadata, FIXTURE_DATA(fail) *self,
		  const struct sweep *s)
{
	uint64_t t0 = now_ns();
	unsigned int a, f = 0;
	int ret;

	if (s->prep)
		s->prep(_metadata, self);
	ret = s->op(self);
	ASSERT_EQ(0, ret) TH_LOG("%s without injection: %s", s->name,
				 strerror(-ret));
	self->fired = false;
	s->undo(_metadata, self, 0);
	if (dry) {
		ksft_print_msg("fail_nth: %s: dry run, no injection\n", s->name);
		return;
	}
	probe_fn_mode(_metadata, self);
	a = sweep_phase(_metadata, self, s, PH_ALLOC);
	if (fn_sweeps())
		f = sweep_phase(_metadata, self, s, PH_FUNC);
	report(self, s->name, a, f, 0, secs_since(t0));
}

/* ---- open and bind ------------------------------------------------------ */

static int open_op(FIXTURE_DATA(fail) *self)
{
	self->newfd = mrrc_open(0);
	return self->newfd < 0 ? self->newfd : 0;
}

static void open_undo(struct __test_metadata *_metadata,
		      FIXTURE_DATA(fail) *self, int ret)
{
	if (!ret) {
		close(self->newfd);
		self->newfd = -1;
	}
	ASSERT_EQ(self->ctx0, debugfs_contexts());
}

TEST_F_TIMEOUT(fail, open, SWEEP_TIMEOUT)
{
	const struct sweep s = {
		.name = "open", .alloc_errs = E_NOMEM,
		.op = open_op, .undo = open_undo,
	};

	FI_REQUIRE();
	sweep(_metadata, self, &s);
	all_clean(_metadata, self);
}

static void bind_prep(struct __test_metadata *_metadata,
		      FIXTURE_DATA(fail) *self)
{
	self->fd = mrrc_open(0);
	ASSERT_LE(0, self->fd);
}

static int bind_op(FIXTURE_DATA(fail) *self)
{
	return mrrc_bind(self->fd, RXE_DEV, NULL);
}

static void bind_undo(struct __test_metadata *_metadata,
		      FIXTURE_DATA(fail) *self, int ret)
{
	struct mrrc_ctx_query cq;

	if (ret) {
		/* Still unbound, and it binds now. */
		ASSERT_EQ(-ENXIO, mrrc_ctx_query(self->fd, &cq));
		ASSERT_EQ(0, mrrc_bind(self->fd, RXE_DEV, NULL));
	}
	ASSERT_EQ(0, mrrc_ctx_query(self->fd, &cq));
	ASSERT_STREQ(RXE_DEV, cq.dev_name);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(self->ctx0, debugfs_contexts());
}

TEST_F_TIMEOUT(fail, bind, SWEEP_TIMEOUT)
{
	const struct sweep s = {
		.name = "bind", .alloc_errs = E_NOMEM, .func_errs = E_NOMEM,
		.prep = bind_prep, .op = bind_op, .undo = bind_undo,
	};

	FI_REQUIRE();
	sweep(_metadata, self, &s);
	all_clean(_metadata, self);
}

/* ---- the cache: configuration, registration, release, flush ------------- */

static uintptr_t pg(FIXTURE_DATA(fail) *self, unsigned int page)
{
	return (uintptr_t)self->buf + page * P;
}

/* Eight one-page regions cached, then the capacity cut to two pages. */
static void config_prep(struct __test_metadata *_metadata,
			FIXTURE_DATA(fail) *self)
{
	struct mrrc_reg_req r[8];
	unsigned int i, n = ARRAY_SIZE(self->seg);

	memset(r, 0, sizeof(r));
	for (i = 0; i < 8; i++) {
		r[i].addr = pg(self, 2 * i);
		r[i].length = P;
		r[i].access = RW;
		r[i].flags = MRRC_REG_RELEASE;
	}
	ASSERT_EQ(8, mrrc_reg(self->fd, r, 8, self->seg, &n));
	ASSERT_EQ(8, stats(self->fd).cached_regions);
}

static int config_op(FIXTURE_DATA(fail) *self)
{
	struct mrrc_cache_config cfg = {
		.policy = MRRC_POLICY_LRU, .max_pages = 2,
	};

	return mrrc_cache_config(self->fd, &cfg);
}

static void config_undo(struct __test_metadata *_metadata,
			FIXTURE_DATA(fail) *self, int ret)
{
	struct mrrc_cache_config cfg = {
		.policy = MRRC_POLICY_MRE, .max_pages = 1 << 16,
	};

	ASSERT_EQ(2, stats(self->fd).cached_regions);
	cache_ok(_metadata, self->fd, MRRC_MODE_FAST);
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	ASSERT_EQ(2, mrrc_flush(self->fd));
	cache_ok(_metadata, self->fd, MRRC_MODE_FAST);
	ASSERT_EQ(0, stats(self->fd).pinned_pages);
}

TEST_F_TIMEOUT(fail, cache_config, SWEEP_TIMEOUT)
{
	const struct sweep s = {
		.name = "cache_config",
		.prep = config_prep, .op = config_op, .undo = config_undo,
	};

	FI_REQUIRE();
	self->fd = ctx_open(MRRC_MODE_FAST, MRRC_POLICY_MRE);
	ASSERT_LE(0, self->fd);
	sweep(_metadata, self, &s);
	all_clean(_metadata, self);
}

/*
 * Cached: A = pages [2, 4), B = [6, 8), C = [10, 12), D = [12, 14).  The
 * batch: a miss ([20, 21)), an overlap ([0, 10): three gaps around A and
 * B), a span ([11, 13): C and D) and, in fast mode, a region too large for
 * any fast MR (registered the ordinary way).
 */
static void reg_fill(FIXTURE_DATA(fail) *self)
{
	struct mrrc_reg_req *q = self->req;

	memset(self->req, 0, sizeof(self->req));
	q[0].addr = pg(self, 20);
	q[0].length = P;
	q[1].addr = pg(self, 0);
	q[1].length = 10 * P;
	q[2].addr = pg(self, 11);
	q[2].length = 2 * P;
	q[3].addr = pg(self, 64);
	q[3].length = FALLBACK_PAGES * P;
	q[0].access = q[1].access = q[2].access = q[3].access = RW;
	q[0].status = q[1].status = q[2].status = q[3].status = UNTOUCHED;
	self->nreq = self->mode == MRRC_MODE_FAST ? 4 : 3;
}

static void reg_prep(struct __test_metadata *_metadata,
		     FIXTURE_DATA(fail) *self)
{
	static const unsigned int at[4][2] = {
		{ 2, 2 }, { 6, 2 }, { 10, 2 }, { 12, 2 },
	};
	struct mrrc_reg_req r[4];
	unsigned int i, n = ARRAY_SIZE(self->seg);

	if (self->fresh) {
		/*
		 * A new context: in fast mode the first registration builds
		 * the FRWR engine; in model mode the cache is full, and the
		 * first registration evicts (an MRE round, whose sort buffer
		 * is allocated the first time).
		 */
		if (self->fd >= 0)
			close(self->fd);
		self->fd = ctx_open(self->mode, MRRC_POLICY_MRE);
		ASSERT_LE(0, self->fd);
		if (self->mode == MRRC_MODE_MODEL) {
			struct mrrc_cache_config cfg = { .max_pages = 8 };

			ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
			memset(r, 0, sizeof(r));
			for (i = 0; i < 8; i++) {
				r[0].addr = pg(self, 2 * i);
				r[0].length = P;
				r[0].access = RW;
				r[0].flags = MRRC_REG_RELEASE;
				ASSERT_EQ(1, mrrc_reg(self->fd, r, 1,
						      self->seg, &n));
			}
			ASSERT_EQ(8, stats(self->fd).cached_pages);
		}
		memset(self->req, 0, sizeof(self->req));
		self->req[0].addr = pg(self, 20);
		self->req[0].length = 4 * P;
		self->req[0].access = RW;
		self->req[0].status = UNTOUCHED;
		self->nreq = 1;
		return;
	}
	ASSERT_LE(0, mrrc_flush(self->fd));
	memset(r, 0, sizeof(r));
	for (i = 0; i < 4; i++) {
		r[i].addr = pg(self, at[i][0]);
		r[i].length = at[i][1] * P;
		r[i].access = RW;
		r[i].flags = MRRC_REG_RELEASE;
	}
	ASSERT_EQ(4, mrrc_reg(self->fd, r, 4, self->seg, &n));
	reg_fill(self);
}

static int reg_op(FIXTURE_DATA(fail) *self)
{
	struct mrrc_reg r = {
		.size = sizeof(r),
		.count = self->nreq,
		.req_size = sizeof(self->req[0]),
		.reqs = (uintptr_t)self->req,
		.seg_size = sizeof(self->seg[0]),
		.seg_count = ARRAY_SIZE(self->seg),
		.segs = (uintptr_t)self->seg,
	};
	int ret = raw_ioctl(self->fd, MRRC_IOC_REG, &r);

	self->done = r.done;
	return ret;
}

static void reg_check_results(struct __test_metadata *_metadata,
			      FIXTURE_DATA(fail) *self, unsigned int done)
{
	static const uint32_t result[4] = {
		MRRC_RESULT_MISS, MRRC_RESULT_OVERLAP, MRRC_RESULT_SPAN,
		MRRC_RESULT_MISS,
	};
	static const uint32_t nsegs[4] = { 1, 5, 2, 1 };
	unsigned int i;

	for (i = 0; i < done; i++) {
		ASSERT_EQ(0, self->req[i].status);
		ASSERT_NE(0, self->req[i].handle);
		if (self->fresh && self->mode == MRRC_MODE_MODEL)
			ASSERT_LT(0, stats(self->fd).evictions);
		if (self->fresh)
			continue;
		ASSERT_EQ(result[i], self->req[i].result) TH_LOG("request %u", i);
		ASSERT_EQ(nsegs[i], self->req[i].nsegs) TH_LOG("request %u", i);
	}
}

static void reg_release(struct __test_metadata *_metadata,
			FIXTURE_DATA(fail) *self, unsigned int done)
{
	uint32_t h[NREQ];
	unsigned int i;

	for (i = 0; i < done; i++)
		h[i] = self->req[i].handle;
	if (done)
		ASSERT_EQ((int)done, mrrc_release(self->fd, h, done));
	cache_ok(_metadata, self->fd, self->mode);
}

static void reg_undo(struct __test_metadata *_metadata,
		     FIXTURE_DATA(fail) *self, int ret)
{
	unsigned int done = ret ? self->done : self->nreq;

	if (ret) {
		/*
		 * Requests before the failing one stay done; the failing one
		 * has its status, unless the batch itself failed (before
		 * any request).
		 */
		ASSERT_LT(self->done, self->nreq);
		if (self->req[self->done].status == UNTOUCHED) {
			ASSERT_EQ(0, self->done);
		} else {
			ASSERT_EQ(ret, self->req[self->done].status);
		}
	} else {
		ASSERT_EQ(self->nreq, self->done);
	}
	reg_check_results(_metadata, self, done);
	reg_release(_metadata, self, done);
	if (!ret)
		return;
	/* The context still works: the same batch, without injection. */
	if (!self->fresh)
		reg_prep(_metadata, self);
	else
		self->req[0].status = UNTOUCHED;
	ASSERT_EQ(0, reg_op(self));
	reg_check_results(_metadata, self, self->nreq);
	reg_release(_metadata, self, self->nreq);
}

static void reg_sweep(struct __test_metadata *_metadata,
		      FIXTURE_DATA(fail) *self, const char *name,
		      uint32_t mode, bool fresh)
{
	const struct sweep s = {
		.name = name,
		.alloc_errs = fresh && mode == MRRC_MODE_FAST ? E_REG_FIRST :
			      E_NOMEM,
		.func_errs = E_REG,
		.prep = reg_prep, .op = reg_op, .undo = reg_undo,
	};

	self->mode = mode;
	self->fresh = fresh;
	if (!fresh) {
		self->fd = ctx_open(mode, MRRC_POLICY_MRE);
		ASSERT_LE(0, self->fd);
	}
	sweep(_metadata, self, &s);
	if (self->fd >= 0) {
		ASSERT_LE(0, mrrc_flush(self->fd));
		ASSERT_EQ(0, stats(self->fd).pinned_pages);
	}
	all_clean(_metadata, self);
}

TEST_F_TIMEOUT(fail, reg_model, SWEEP_TIMEOUT)
{
	FI_REQUIRE();
	reg_sweep(_metadata, self, "reg_model", MRRC_MODE_MODEL, false);
}

TEST_F_TIMEOUT(fail, reg_ordinary, SWEEP_TIMEOUT)
{
	FI_REQUIRE();
	reg_sweep(_metadata, self, "reg_ordinary", MRRC_MODE_ORDINARY, false);
}

TEST_F_TIMEOUT(fail, reg_fast, SWEEP_TIMEOUT)
{
	FI_REQUIRE();
	reg_sweep(_metadata, self, "reg_fast", MRRC_MODE_FAST, false);
}

TEST_F_TIMEOUT(fail, reg_fast_first, SWEEP_TIMEOUT)
{
	FI_REQUIRE();
	reg_sweep(_metadata, self, "reg_fast_first", MRRC_MODE_FAST, true);
}

TEST_F_TIMEOUT(fail, reg_evict, SWEEP_TIMEOUT)
{
	FI_REQUIRE();
	reg_sweep(_metadata, self, "reg_evict", MRRC_MODE_MODEL, true);
}

/*
 * Four handles in a cache without caching (policy none): releasing them
 * deregisters, fast ones in a LOCAL_INV chain, the large one the ordinary
 * way.
 */
static const unsigned int four[4][2] = {
	{ 0, 1 }, { 2, 2 }, { 8, 3 }, { 64, FALLBACK_PAGES },
};

static void release_prep(struct __test_metadata *_metadata,
			 FIXTURE_DATA(fail) *self)
{
	unsigned int i, n = ARRAY_SIZE(self->seg);

	memset(self->req, 0, sizeof(self->req));
	for (i = 0; i < 4; i++) {
		self->req[i].addr = pg(self, four[i][0]);
		self->req[i].length = four[i][1] * P;
		self->req[i].access = RW;
	}
	ASSERT_EQ(4, mrrc_reg(self->fd, self->req, 4, self->seg, &n));
	for (i = 0; i < 4; i++)
		self->handles[i] = self->req[i].handle;
}

static int release_op(FIXTURE_DATA(fail) *self)
{
	int r = mrrc_release(self->fd, self->handles, 4);

	return r == 4 ? 0 : r < 0 ? r : -EIO;
}

static void release_undo(struct __test_metadata *_metadata,
			 FIXTURE_DATA(fail) *self, int ret)
{
	struct mrrc_cache_stats st;

	cache_ok(_metadata, self->fd, MRRC_MODE_FAST);
	st = stats(self->fd);
	ASSERT_EQ(0, st.cached_regions);
	ASSERT_EQ(0, st.pinned_pages);
}

TEST_F_TIMEOUT(fail, release, SWEEP_TIMEOUT)
{
	const struct sweep s = {
		.name = "release",
		.prep = release_prep, .op = release_op, .undo = release_undo,
	};

	FI_REQUIRE();
	self->fd = ctx_open(MRRC_MODE_FAST, MRRC_POLICY_NONE);
	ASSERT_LE(0, self->fd);
	sweep(_metadata, self, &s);
	all_clean(_metadata, self);
}

static void flush_prep(struct __test_metadata *_metadata,
		       FIXTURE_DATA(fail) *self)
{
	unsigned int i, n = ARRAY_SIZE(self->seg);

	memset(self->req, 0, sizeof(self->req));
	for (i = 0; i < 4; i++) {
		self->req[i].addr = pg(self, four[i][0]);
		self->req[i].length = four[i][1] * P;
		self->req[i].access = RW;
		self->req[i].flags = MRRC_REG_RELEASE;
	}
	ASSERT_EQ(4, mrrc_reg(self->fd, self->req, 4, self->seg, &n));
	ASSERT_EQ(4, stats(self->fd).cached_regions);
}

static int flush_op(FIXTURE_DATA(fail) *self)
{
	int r = mrrc_flush(self->fd);

	return r == 4 ? 0 : r < 0 ? r : -EIO;
}

static void flush_undo(struct __test_metadata *_metadata,
		       FIXTURE_DATA(fail) *self, int ret)
{
	release_undo(_metadata, self, ret);
}

TEST_F_TIMEOUT(fail, flush, SWEEP_TIMEOUT)
{
	const struct sweep s = {
		.name = "flush",
		.prep = flush_prep, .op = flush_op, .undo = flush_undo,
	};

	FI_REQUIRE();
	self->fd = ctx_open(MRRC_MODE_FAST, MRRC_POLICY_MRE);
	ASSERT_LE(0, self->fd);
	sweep(_metadata, self, &s);
	all_clean(_metadata, self);
}

/* ---- connections -------------------------------------------------------- */

/* MRRC_CONN_ISOLATED for the *_isolated sweeps: listeners and connects. */
static uint32_t conn_flags;

static int listen_on(int fd, uint16_t port, uint32_t *id)
{
	struct sockaddr_in sin = vm_addr(port);

	return mrrc_listen_flags(fd, (struct sockaddr *)&sin, 16, conn_flags,
				 0x5e, id);
}

static int connect_to(int fd, uint16_t port, uint32_t *id)
{
	struct sockaddr_in sin = vm_addr(port);

	return mrrc_connect_flags(fd, (struct sockaddr *)&sin, NULL, 0,
				  conn_flags, 0xc1, id);
}

/*
 * After CONNECT from @cfd to a listener of @sfd: accept the request and
 * wait until both sides are established.  0; -ECONNABORTED when the client
 * got a failure event first (in *bad); or another -errno.
 */
static int complete_connect(int sfd, int cfd, uint32_t *sconn,
			    struct mrrc_cqe *bad)
{
	struct pollfd pfd[2] = {
		{ .fd = sfd, .events = POLLIN },
		{ .fd = cfd, .events = POLLIN },
	};
	int64_t end = now_ms() + TMO_MS;
	struct mrrc_cqe c;
	int r;

	*sconn = 0;
	memset(bad, 0, sizeof(*bad));
	while (!*sconn) {
		if (now_ms() > end)
			return -ETIMEDOUT;
		poll(pfd, 2, 100);
		if (mrrc_poll_cq(cfd, &c, 1) == 1 &&
		    !(c.opcode == MRRC_OP_EVENT &&
		      c.event == MRRC_EVENT_DISCONNECTED)) {
			*bad = c;
			return -ECONNABORTED;
		}
		if (mrrc_poll_cq(sfd, &c, 1) != 1)
			continue;
		if (c.opcode == MRRC_OP_EVENT &&
		    c.event == MRRC_EVENT_CONNECT_REQUEST)
			*sconn = c.conn;
		else if (!(c.opcode == MRRC_OP_EVENT &&
			   c.event == MRRC_EVENT_DISCONNECTED)) {
			*bad = c;
			return -EPROTO;
		}
	}
	r = mrrc_accept(sfd, *sconn, 0x5c);
	if (r)
		return r;
	r = wait_ev(sfd, MRRC_EVENT_ESTABLISHED, bad);
	if (r >= 0)
		r = wait_ev(cfd, MRRC_EVENT_ESTABLISHED, bad);
	return r < 0 ? r : 0;
}

/* Destroy a pair of connections and forget their events. */
static void unpair(struct __test_metadata *_metadata, int sfd, uint32_t s,
		   int cfd, uint32_t c)
{
	if (c)
		ASSERT_EQ(0, mrrc_destroy(cfd, c));
	if (s)
		ASSERT_EQ(0, mrrc_destroy(sfd, s));
	drain(cfd);
	drain(sfd);
}

/* A fresh connection from self->cfd to self->sfd's listener. */
static void handshake(struct __test_metadata *_metadata,
		      FIXTURE_DATA(fail) *self)
{
	struct mrrc_cqe bad;
	int r;

	ASSERT_EQ(0, connect_to(self->cfd, self->port, &self->cconn));
	r = complete_connect(self->sfd, self->cfd, &self->sconn, &bad);
	ASSERT_EQ(0, r) TH_LOG("handshake: %s; event %s status %d",
			       strerror(-r), ev_name(bad.event), bad.status);
}

static void two_contexts(struct __test_metadata *_metadata,
			 FIXTURE_DATA(fail) *self, uint32_t cpolicy)
{
	self->sfd = ctx_open(MRRC_MODE_FAST, MRRC_POLICY_MRE);
	self->cfd = ctx_open(MRRC_MODE_FAST, cpolicy);
	ASSERT_LE(0, self->sfd);
	ASSERT_LE(0, self->cfd);
}

static int listen_op(FIXTURE_DATA(fail) *self)
{
	return listen_on(self->sfd, self->port, &self->id);
}

static void listen_undo(struct __test_metadata *_metadata,
			FIXTURE_DATA(fail) *self, int ret)
{
	struct mrrc_conn_query q;

	if (!ret) {
		ASSERT_EQ(0, mrrc_conn_query(self->sfd, self->id, &q));
		ASSERT_EQ(MRRC_CONN_LISTENING, q.state);
		ASSERT_EQ(self->port, q.local.port);
		ASSERT_EQ(0, mrrc_destroy(self->sfd, self->id));
		return;
	}
	ASSERT_EQ(0, drain(self->sfd));
	/* The port was not left bound: the same listen works now. */
	ASSERT_EQ(0, listen_op(self)) TH_LOG("listen after a failed one");
	ASSERT_EQ(0, mrrc_destroy(self->sfd, self->id));
}

TEST_F_TIMEOUT(fail, listen, SWEEP_TIMEOUT)
{
	const struct sweep s = {
		.name = "listen", .alloc_errs = E_NOMEM, .func_errs = E_NOMEM,
		.op = listen_op, .undo = listen_undo,
	};

	FI_REQUIRE();
	self->sfd = ctx_open(MRRC_MODE_FAST, MRRC_POLICY_MRE);
	ASSERT_LE(0, self->sfd);
	sweep(_metadata, self, &s);
	all_clean(_metadata, self);
}

static int connect_op(FIXTURE_DATA(fail) *self)
{
	return connect_to(self->cfd, self->port, &self->cconn);
}

/* An absorbed failure may still break the connection later: how? */
static void outcome_ok(struct __test_metadata *_metadata, int r,
		       const struct mrrc_cqe *bad)
{
	ASSERT_EQ(-ECONNABORTED, r) TH_LOG("%s; event %s status %d",
					   strerror(-r), ev_name(bad->event),
					   bad->status);
	ASSERT_EQ(MRRC_OP_EVENT, bad->opcode);
	ASSERT_TRUE(bad->event == MRRC_EVENT_UNREACHABLE ||
		    bad->event == MRRC_EVENT_REJECTED)
		TH_LOG("event %s", ev_name(bad->event));
	ASSERT_GT(0, bad->status);
}

static void connect_undo(struct __test_metadata *_metadata,
			 FIXTURE_DATA(fail) *self, int ret)
{
	struct mrrc_cqe bad;
	int r;

	if (!ret) {
		r = complete_connect(self->sfd, self->cfd, &self->sconn, &bad);
		if (r) {
			ASSERT_TRUE(self->fired) TH_LOG("%s", strerror(-r));
			outcome_ok(_metadata, r, &bad);
		}
		unpair(_metadata, self->sfd, self->sconn, self->cfd,
		       self->cconn);
		return;
	}
	ASSERT_EQ(0, drain(self->cfd));
	handshake(_metadata, self);
	unpair(_metadata, self->sfd, self->sconn, self->cfd, self->cconn);
}

static void connect_sweep(struct __test_metadata *_metadata,
			  FIXTURE_DATA(fail) *self)
{
	const struct sweep s = {
		.name = conn_flags ? "connect_isolated" : "connect",
		.alloc_errs = E_CONNECT, .func_errs = E_NOMEM,
		.op = connect_op, .undo = connect_undo,
	};

	FI_REQUIRE();
	two_contexts(_metadata, self, MRRC_POLICY_MRE);
	ASSERT_EQ(0, listen_on(self->sfd, self->port, &self->lis));
	sweep(_metadata, self, &s);
	all_clean(_metadata, self);
}

TEST_F_TIMEOUT(fail, connect, SWEEP_TIMEOUT)
{
	connect_sweep(_metadata, self);
}

/* Each side also makes a protection domain and a cache (isolate). */
TEST_F_TIMEOUT(fail, connect_isolated, SWEEP_TIMEOUT)
{
	conn_flags = MRRC_CONN_ISOLATED;
	connect_sweep(_metadata, self);
}

static void accept_prep(struct __test_metadata *_metadata,
			FIXTURE_DATA(fail) *self)
{
	int r;

	ASSERT_EQ(0, connect_to(self->cfd, self->port, &self->cconn));
	r = wait_ev(self->sfd, MRRC_EVENT_CONNECT_REQUEST, NULL);
	ASSERT_LT(0, r);
	self->sconn = r;
}

static int accept_op(FIXTURE_DATA(fail) *self)
{
	return mrrc_accept(self->sfd, self->sconn, 0x5c);
}

static void accept_undo(struct __test_metadata *_metadata,
			FIXTURE_DATA(fail) *self, int ret)
{
	struct mrrc_conn_query q;
	struct mrrc_cqe bad;
	int r;

	if (!ret) {
		r = wait_ev(self->sfd, MRRC_EVENT_ESTABLISHED, &bad);
		if (r >= 0)
			r = wait_ev(self->cfd, MRRC_EVENT_ESTABLISHED, &bad);
		ASSERT_LE(0, r) TH_LOG("%s; event %s status %d (%s)",
				       strerror(-r), ev_name(bad.event),
				       bad.status,
				       self->fired ? "injected" : "no injection");
		unpair(_metadata, self->sfd, self->sconn, self->cfd,
		       self->cconn);
		return;
	}
	/* The request is refused, the client learns it, nothing hangs on. */
	r = wait_ev(self->cfd, MRRC_EVENT_REJECTED, &bad);
	if (r < 0)
		ASSERT_TRUE(bad.opcode == MRRC_OP_EVENT &&
			    bad.event == MRRC_EVENT_UNREACHABLE)
			TH_LOG("client after a failed accept: %s, event %s status %d",
			       strerror(-r), ev_name(bad.event), bad.status);
	ASSERT_EQ(0, mrrc_conn_query(self->sfd, self->sconn, &q));
	ASSERT_EQ(MRRC_CONN_CLOSED, q.state)
		TH_LOG("a connection whose accept failed is in state %u", q.state);
	ASSERT_EQ(-EINVAL, accept_op(self));
	unpair(_metadata, self->sfd, self->sconn, self->cfd, self->cconn);
	handshake(_metadata, self);
	unpair(_metadata, self->sfd, self->sconn, self->cfd, self->cconn);
}

TEST_F_TIMEOUT(fail, accept, SWEEP_TIMEOUT)
{
	const struct sweep s = {
		.name = "accept", .alloc_errs = E_NOMEM, .func_errs = E_NOMEM,
		.prep = accept_prep, .op = accept_op, .undo = accept_undo,
	};

	FI_REQUIRE();
	two_contexts(_metadata, self, MRRC_POLICY_MRE);
	ASSERT_EQ(0, listen_on(self->sfd, self->port, &self->lis));
	sweep(_metadata, self, &s);
	all_clean(_metadata, self);
}

/*
 * The RDMA CM handlers: a connection's queue pair is made in the client's
 * ROUTE_RESOLVED and the server's CONNECT_REQUEST handler, in kworkers.
 * fail_function's budget fails the k-th call of mrrc_conn_alloc(),
 * mrrc_conn_create_qp() or mrrc_data_init() in any task.  A failure on the
 * client ends in UNREACHABLE (its errno); one in the server's handler is
 * refused (REJECTED, ECONNREFUSED), except that ib_cm does not reject an
 * ENOMEM: the client's CM sends the REQ again, and the connection is made.
 */
static void async_conn_sweep(struct __test_metadata *_metadata,
			     FIXTURE_DATA(fail) *self)
{
	uint64_t t0 = now_ns();
	unsigned int k, last = 0;
	struct mrrc_cqe bad;
	bool fired;
	int r;

	FI_REQUIRE();
	two_contexts(_metadata, self, MRRC_POLICY_MRE);
	ASSERT_EQ(0, listen_on(self->sfd, self->port, &self->lis));
	handshake(_metadata, self);
	unpair(_metadata, self->sfd, self->sconn, self->cfd, self->cconn);
	if (!dry)
		probe_fn_mode(_metadata, self);
	if (dry || !fn_sweeps()) {
		ksft_print_msg("fail_nth: async_conn: %s\n",
			       dry ? "dry run, no injection" :
			       "skipped, no usable fail_function");
		all_clean(_metadata, self);
		return;
	}
	ASSERT_EQ(0, set_phase(PH_ASYNC));
	self->cur = "async_conn";
	self->ph = PH_ASYNC;
	for (k = 1; k <= nth_max; k++) {
		self->n = k;
		self->fired = false;
		self->sconn = self->cconn = 0;
		ASSERT_EQ(0, space_arm(k));
		r = connect_to(self->cfd, self->port, &self->cconn);
		if (!r)
			r = complete_connect(self->sfd, self->cfd,
					     &self->sconn, &bad);
		fired = space_disarm();
		self->fired = fired;
		if (!fired) {
			ASSERT_EQ(0, r) TH_LOG("%s without an injection (k=%u)",
					       strerror(-r), k);
			unpair(_metadata, self->sfd, self->sconn, self->cfd,
			       self->cconn);
			break;
		}
		last = k;
		if (r == -ENOMEM) {
			/* mrrc_conn_alloc() in CONNECT itself */
			self->failed[PH_ASYNC]++;
			self->errs[PH_ASYNC][ENOMEM]++;
		} else if (!r) {
			/*
			 * The server's CONNECT_REQUEST handler failed with
			 * ENOMEM: ib_cm then does not reject, the client's
			 * CM sends its REQ again, and that one goes through.
			 */
			self->absorbed[PH_ASYNC]++;
		} else {
			self->failed[PH_ASYNC]++;
			outcome_ok(_metadata, r, &bad);
			/* Failed on the server: refused, and no event there. */
			if (bad.event == MRRC_EVENT_REJECTED) {
				ASSERT_EQ(-ECONNREFUSED, bad.status);
			} else {
				ASSERT_EQ(-ENOMEM, bad.status);
			}
			self->errs[PH_ASYNC][-bad.status]++;
		}
		unpair(_metadata, self->sfd, self->sconn, self->cfd,
		       self->cconn);
		/* Both contexts still work. */
		handshake(_metadata, self);
		unpair(_metadata, self->sfd, self->sconn, self->cfd,
		       self->cconn);
	}
	self->cur = NULL;
	ASSERT_EQ(0, set_phase(PH_ALLOC));
	report(self, conn_flags ? "async_conn_isolated" : "async_conn", 0, 0,
	       last, secs_since(t0));
	all_clean(_metadata, self);
}

TEST_F_TIMEOUT(fail, async_conn, SWEEP_TIMEOUT)
{
	async_conn_sweep(_metadata, self);
}

/* The server's request handler also makes a PD and a cache. */
TEST_F_TIMEOUT(fail, async_conn_isolated, SWEEP_TIMEOUT)
{
	conn_flags = MRRC_CONN_ISOLATED;
	async_conn_sweep(_metadata, self);
}

/* ---- the data path ------------------------------------------------------ */

/* Two contexts, a connection between them, a region the client may use. */
static void pair_up(struct __test_metadata *_metadata,
		    FIXTURE_DATA(fail) *self, uint32_t cpolicy)
{
	two_contexts(_metadata, self, cpolicy);
	ASSERT_EQ(0, listen_on(self->sfd, self->port, &self->lis));
	handshake(_metadata, self);
	ASSERT_EQ(0, export1(self->sfd, self->sconn, self->sbuf, 64 << 10,
			     REMOTE_ALL, &self->rseg, &self->rh));
}

static void conn_alive(struct __test_metadata *_metadata,
		       FIXTURE_DATA(fail) *self)
{
	struct mrrc_conn_query q;

	ASSERT_EQ(0, mrrc_conn_query(self->cfd, self->cconn, &q));
	ASSERT_EQ(MRRC_CONN_ESTABLISHED, q.state);
	ASSERT_EQ(0, mrrc_conn_query(self->sfd, self->sconn, &q));
	ASSERT_EQ(MRRC_CONN_ESTABLISHED, q.state);
}

/* Reap @n completions of @fd, all successful. */
static void reap_ok(struct __test_metadata *_metadata, int fd, unsigned int n)
{
	struct mrrc_cqe c[NWR];
	unsigned int i;

	ASSERT_GE(NWR, n);
	ASSERT_EQ(0, reap(fd, c, n));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, c[i].status) TH_LOG("wr_id %llu opcode %u",
						  (unsigned long long)c[i].wr_id,
						  c[i].opcode);
}

static int post_raw(int fd, struct mrrc_wr *w, unsigned int n,
		    unsigned int *done)
{
	struct mrrc_post p = {
		.size = sizeof(p),
		.count = n,
		.wr_size = sizeof(*w),
		.wrs = (uintptr_t)w,
	};
	int ret = raw_ioctl(fd, MRRC_IOC_POST, &p);

	*done = p.done;
	return ret;
}

/* WRITE, READ, WRITE_IMM, FETCH_ADD, CMP_SWAP on the client. */
static void one_sided_prep(struct __test_metadata *_metadata,
			   FIXTURE_DATA(fail) *self)
{
	static const struct { uint8_t op; uint32_t off, len; } o[5] = {
		{ MRRC_OP_WRITE, 0, 4096 },
		{ MRRC_OP_READ, 8192, 4096 },
		{ MRRC_OP_WRITE_IMM, 16384, 100 },
		{ MRRC_OP_FETCH_ADD, 24576, 8 },
		{ MRRC_OP_CMP_SWAP, 24584, 8 },
	};
	unsigned int i;

	ASSERT_LE(0, mrrc_flush(self->cfd));
	for (i = 0; i < 5; i++) {
		self->w[i] = wr(self->cconn, o[i].op, self->cbuf + o[i].off,
				o[i].len, i);
		self->w[i].remote_addr = self->rseg.addr + o[i].off;
		self->w[i].rkey = self->rseg.rkey;
	}
	self->w[2].imm = 42;
	self->w[3].compare_add = 1;
	self->nw = 5;
}

static int one_sided_op(FIXTURE_DATA(fail) *self)
{
	return post_raw(self->cfd, self->w, self->nw, &self->done);
}

static void one_sided_reap(struct __test_metadata *_metadata,
			   FIXTURE_DATA(fail) *self, unsigned int from,
			   unsigned int to)
{
	reap_ok(_metadata, self->cfd, to - from);
	if (from <= 2 && 2 < to)
		reap_ok(_metadata, self->sfd, 1);	/* RECV_IMM */
	ASSERT_EQ(0, mrrc_poll_cq(self->cfd, self->cqe, 1));
	ASSERT_EQ(0, mrrc_poll_cq(self->sfd, self->cqe, 1));
}

static void one_sided_undo(struct __test_metadata *_metadata,
			   FIXTURE_DATA(fail) *self, int ret)
{
	unsigned int done = ret ? self->done : self->nw;

	if (ret) {
		ASSERT_LT(done, self->nw);
	} else {
		ASSERT_EQ(self->nw, self->done);
	}
	/* Every accepted operation completes, exactly once. */
	one_sided_reap(_metadata, self, 0, done);
	if (ret) {
		ASSERT_EQ(0, mrrc_post(self->cfd, self->w + done,
				       self->nw - done, NULL));
		one_sided_reap(_metadata, self, done, self->nw);
	}
	conn_alive(_metadata, self);
	cache_ok(_metadata, self->cfd, MRRC_MODE_FAST);
}

static void data_sweep(struct __test_metadata *_metadata,
		       FIXTURE_DATA(fail) *self, const struct sweep *s,
		       uint32_t cpolicy)
{
	pair_up(_metadata, self, cpolicy);
	sweep(_metadata, self, s);
	ASSERT_EQ(0, mrrc_unexport(self->sfd, self->rh));
	unpair(_metadata, self->sfd, self->sconn, self->cfd, self->cconn);
	all_clean(_metadata, self);
}

TEST_F_TIMEOUT(fail, post_one_sided, SWEEP_TIMEOUT)
{
	const struct sweep s = {
		.name = "post_one_sided", .alloc_errs = E_NOMEM,
		.func_errs = E_REG, .prep = one_sided_prep,
		.op = one_sided_op, .undo = one_sided_undo,
	};

	FI_REQUIRE();
	data_sweep(_metadata, self, &s, MRRC_POLICY_MRE);
}

/* Two-sided: the operation under test on one side, its partner after. */
static struct mrrc_wr recv_wr(FIXTURE_DATA(fail) *self)
{
	return wr(self->sconn, MRRC_OP_RECV, self->sbuf + (128 << 10), 4096,
		  77);
}

static struct mrrc_wr send_wr(FIXTURE_DATA(fail) *self)
{
	return wr(self->cconn, MRRC_OP_SEND, self->cbuf + (128 << 10), 1000,
		  78);
}

static struct mrrc_wr stcrw_wr(FIXTURE_DATA(fail) *self)
{
	struct mrrc_wr w = wr(self->sconn, MRRC_OP_STCRW,
			      self->sbuf + (256 << 10), 4096, 79);

	w.tag = self->tag;
	return w;
}

static struct mrrc_wr crw_wr(FIXTURE_DATA(fail) *self)
{
	struct mrrc_wr w = wr(self->cconn, MRRC_OP_CRW,
			      self->cbuf + (256 << 10), 512, 80);

	w.tag = self->tag;
	return w;
}

static void two_sided_done(struct __test_metadata *_metadata,
			   FIXTURE_DATA(fail) *self)
{
	struct mrrc_cqe c;

	ASSERT_EQ(0, reap(self->cfd, &c, 1));
	ASSERT_EQ(0, c.status);
	ASSERT_EQ(0, reap(self->sfd, &c, 1));
	ASSERT_EQ(0, c.status);
	ASSERT_EQ(c.opcode == MRRC_OP_RECV ? 1000 : 512, c.byte_len);
	ASSERT_EQ(0, mrrc_poll_cq(self->cfd, self->cqe, 1));
	ASSERT_EQ(0, mrrc_poll_cq(self->sfd, self->cqe, 1));
	conn_alive(_metadata, self);
	cache_ok(_metadata, self->cfd, MRRC_MODE_FAST);
	self->tag++;
}

static void flush_both(struct __test_metadata *_metadata,
		       FIXTURE_DATA(fail) *self)
{
	ASSERT_LE(0, mrrc_flush(self->cfd));
	ASSERT_LE(0, mrrc_flush(self->sfd));
}

/*
 * A two-sided pair: the server's half (RECV or STCRW) and the client's
 * (SEND or CRW).  The operation under test is one half; the other is
 * posted before it (the server's) or after it (the client's).
 */
struct two_sided {
	struct mrrc_wr (*rx)(FIXTURE_DATA(fail) *self);
	struct mrrc_wr (*tx)(FIXTURE_DATA(fail) *self);
	bool op_is_tx;
};

static void ts_prep(struct __test_metadata *_metadata,
		    FIXTURE_DATA(fail) *self)
{
	flush_both(_metadata, self);
	if (self->ts->op_is_tx)
		ASSERT_EQ(0, post1(self->sfd, self->ts->rx(self)));
}

static int ts_post(FIXTURE_DATA(fail) *self, bool raw)
{
	const struct two_sided *ts = self->ts;
	struct mrrc_wr w = ts->op_is_tx ? ts->tx(self) : ts->rx(self);
	int fd = ts->op_is_tx ? self->cfd : self->sfd;

	return raw ? post_raw(fd, &w, 1, &self->done) : post1(fd, w);
}

static int ts_op(FIXTURE_DATA(fail) *self)
{
	return ts_post(self, true);
}

static void ts_undo(struct __test_metadata *_metadata,
		    FIXTURE_DATA(fail) *self, int ret)
{
	if (ret)
		ASSERT_EQ(0, ts_post(self, false));
	if (!self->ts->op_is_tx)
		ASSERT_EQ(0, post1(self->cfd, self->ts->tx(self)));
	two_sided_done(_metadata, self);
}

static void ts_sweep(struct __test_metadata *_metadata,
		     FIXTURE_DATA(fail) *self, const char *name,
		     const struct two_sided *ts)
{
	const struct sweep s = {
		.name = name, .alloc_errs = E_NOMEM, .func_errs = E_REG,
		.prep = ts_prep, .op = ts_op, .undo = ts_undo,
	};

	self->ts = ts;
	data_sweep(_metadata, self, &s, MRRC_POLICY_MRE);
}

TEST_F_TIMEOUT(fail, post_recv, SWEEP_TIMEOUT)
{
	static const struct two_sided ts = { recv_wr, send_wr, false };

	FI_REQUIRE();
	ts_sweep(_metadata, self, "post_recv", &ts);
}

TEST_F_TIMEOUT(fail, post_send, SWEEP_TIMEOUT)
{
	static const struct two_sided ts = { recv_wr, send_wr, true };

	FI_REQUIRE();
	ts_sweep(_metadata, self, "post_send", &ts);
}

TEST_F_TIMEOUT(fail, post_stcrw, SWEEP_TIMEOUT)
{
	static const struct two_sided ts = { stcrw_wr, crw_wr, false };

	FI_REQUIRE();
	self->tag = 1000;
	ts_sweep(_metadata, self, "post_stcrw", &ts);
}

TEST_F_TIMEOUT(fail, post_crw, SWEEP_TIMEOUT)
{
	static const struct two_sided ts = { stcrw_wr, crw_wr, true };

	FI_REQUIRE();
	self->tag = 2000;
	ts_sweep(_metadata, self, "post_crw", &ts);
}

/*
 * Arm fail_function with @fn alone, returning @err when it fires, for a
 * test that targets one point rather than a sweep.
 */
static int arm_one_fn(const char *fn, int err)
{
	int ret = set_phase(PH_FUNC);

	if (!ret)
		ret = dbg_write("fail_function/inject", " ");
	return ret ?: fn_arm(fn, err);
}

/* For a single-point test: fault injection counted by fail-nth. */
#define FN_NTH_REQUIRE() do {						\
	FI_REQUIRE();							\
	probe_fn_mode(_metadata, self);					\
	if (shm->fn_mode != FN_NTH)					\
		SKIP(return, "fail_function is not counted by fail-nth here"); \
} while (0)

/* Wait until the client has heard @n more control messages than @base. */
static int ctrl_heard(int fd, uint32_t conn, uint64_t base, unsigned int n)
{
	int64_t end = now_ms() + TMO_MS;
	struct mrrc_conn_query q;

	do {
		if (mrrc_conn_query(fd, conn, &q))
			return -EIO;
		if (q.ctrl_recv >= base + n)
			return 0;
		usleep(1000);
	} while (now_ms() < end);
	return -ETIMEDOUT;
}

/*
 * Completions of @fd until both its connection's DISCONNECTED event and
 * operation @wr_id have come (in either order), then whatever else comes
 * within 300 ms: 0 and how often @wr_id completed (with the status it
 * had), or reap()'s error when either never came.
 */
static int until_down(int fd, uint64_t wr_id, unsigned int *seen,
		      int *status)
{
	int64_t quiet = 0;
	bool down = false;
	struct mrrc_cqe c;
	int r;

	*seen = 0;
	*status = 0;
	for (;;) {
		if (down && *seen) {
			if (!quiet)
				quiet = now_ms() + 300;
			if (now_ms() > quiet)
				return 0;
			r = mrrc_poll_cq(fd, &c, 1);
			if (r < 0)
				return r;
			if (!r) {
				mrrc_wait(fd, 50);
				continue;
			}
		} else {
			r = reap(fd, &c, 1);
			if (r)
				return r;
		}
		if (c.opcode == MRRC_OP_EVENT) {
			down |= c.event == MRRC_EVENT_DISCONNECTED;
		} else if (c.wr_id == wr_id) {
			(*seen)++;
			*status = c.status;
		}
	}
}

/* The client's count of control messages heard, once it stops moving. */
static uint64_t ctrl_quiet(int fd, uint32_t conn)
{
	int64_t end = now_ms() + TMO_MS;
	struct mrrc_conn_query q;
	uint64_t last = UINT64_MAX;

	while (now_ms() < end) {
		if (mrrc_conn_query(fd, conn, &q))
			return 0;
		if (q.ctrl_recv == last)
			break;
		last = q.ctrl_recv;
		usleep(20000);
	}
	return last;
}

/*
 * The device refuses a post (issue 12, finding 4): the n-th work request
 * the module posts for a SEND fails, for n = 1, 2, ... (its write into the
 * peer's buffer, then its message) until the SEND goes through.  A
 * refused SEND completes exactly once, with an error, before its
 * connection goes down; the peer's RECV completes exactly once too; and
 * nothing is left behind.
 */
TEST_F_TIMEOUT(fail, device_refuses_a_post, SWEEP_TIMEOUT)
{
	uint64_t t0 = now_ns(), heard;
	unsigned int n, seen, last = 0;
	int ret, status;
	bool fired;

	FN_NTH_REQUIRE();
	pair_up(_metadata, self, MRRC_POLICY_MRE);
	/* Once through, so that the SEND's memory is cached: no registration. */
	ASSERT_EQ(0, post1(self->sfd, recv_wr(self)));
	ASSERT_EQ(0, post1(self->cfd, send_wr(self)));
	two_sided_done(_metadata, self);
	for (n = 1; n <= 8; n++) {
		/*
		 * The RECV's advertisement has reached the client, so that
		 * the SEND is posted by the POST itself, in this thread.
		 */
		heard = ctrl_quiet(self->cfd, self->cconn);
		ASSERT_EQ(0, post1(self->sfd, recv_wr(self)));
		ASSERT_EQ(0, ctrl_heard(self->cfd, self->cconn, heard, 1));

		ASSERT_EQ(0, arm_one_fn("mrrc_dp_ib_post", -EIO));
		ASSERT_EQ(0, nth_arm(self->nth, n));
		ret = post1(self->cfd, send_wr(self));
		fired = nth_disarm(self->nth);
		ASSERT_EQ(0, set_phase(PH_ALLOC));
		/* Accepted either way: the post happens after acceptance. */
		ASSERT_EQ(0, ret) TH_LOG("n=%u: %s", n, strerror(-ret));
		if (!fired) {
			two_sided_done(_metadata, self);
			break;
		}
		last = n;
		ret = until_down(self->cfd, 78, &seen, &status);
		ASSERT_EQ(0, ret) TH_LOG("n=%u: client: %s (the SEND completed %u times)",
					 n, strerror(-ret), seen);
		ASSERT_EQ(1, seen) TH_LOG("n=%u: the SEND completed %u times",
					  n, seen);
		ASSERT_GT(0, status) TH_LOG("n=%u: a refused SEND succeeded",
					    n);
		ret = until_down(self->sfd, 77, &seen, &status);
		ASSERT_EQ(0, ret) TH_LOG("n=%u: server: %s (the RECV completed %u times)",
					 n, strerror(-ret), seen);
		ASSERT_EQ(1, seen) TH_LOG("n=%u: the RECV completed %u times",
					  n, seen);
		ASSERT_GT(0, status) TH_LOG("n=%u: a RECV that got no message succeeded",
					    n);
		/* Nothing more of either, once both are gone. */
		unpair(_metadata, self->sfd, self->sconn, self->cfd,
		       self->cconn);
		cache_ok(_metadata, self->cfd, MRRC_MODE_FAST);
		handshake(_metadata, self);
		ASSERT_EQ(0, export1(self->sfd, self->sconn, self->sbuf,
				     64 << 10, REMOTE_ALL, &self->rseg,
				     &self->rh));
	}
	ASSERT_LE(2, last) TH_LOG("the write and the message: two points");
	ASSERT_GT(8, n);
	ksft_print_msg("fail_nth: %-15s %3u function points (the device refusing a post): each refused SEND completed once; %.1f s\n",
		       "device_post", last, secs_since(t0));
	shm->sweeps++;
	shm->points[PH_FUNC] += last;
	ASSERT_EQ(0, mrrc_unexport(self->sfd, self->rh));
	unpair(_metadata, self->sfd, self->sconn, self->cfd, self->cconn);
	all_clean(_metadata, self);
}

/*
 * A RECV whose exposure's REG_MR (chain_expo) goes with its advertisement,
 * and the device refuses the pair (@fn: mrrc_dp_ib_post_chain) or takes
 * the REG_MR alone (mrrc_dp_chain_cut): the POST is accepted (the message
 * is queued), the RECV completes once with the device's error, nothing
 * stays exposed or in use, and the connection goes down, as for any
 * control message the device refuses.  Its region is cached first, so
 * that the pair is the only post.
 */
static void chained_recv_refused(struct __test_metadata *_metadata,
				 FIXTURE_DATA(fail) *self, const char *fn)
{
	struct mrrc_cache_stats st0, st1;
	struct mrrc_cqe c;
	char v[8];
	bool fired;
	int ret;

	ASSERT_EQ(0, param_rw("chain_expo", v, sizeof(v), 0));
	ASSERT_EQ(0, param_rw("chain_expo", "Y", 0, 1));
	ASSERT_EQ(0, post1(self->sfd, recv_wr(self)));
	ASSERT_EQ(0, post1(self->cfd, send_wr(self)));
	two_sided_done(_metadata, self);
	st0 = stats(self->sfd);
	ASSERT_EQ(0, arm_one_fn(fn, -EIO));
	ASSERT_EQ(0, nth_arm(self->nth, 1));
	ret = post1(self->sfd, recv_wr(self));
	fired = nth_disarm(self->nth);
	ASSERT_EQ(0, set_phase(PH_ALLOC));
	ASSERT_EQ(0, param_rw("chain_expo", v, 0, 1));
	ASSERT_TRUE(fired);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, reap_op(self->sfd, &c));
	EXPECT_EQ(-EIO, c.status);
	/* Once: what else comes is the connection's events. */
	usleep(200 * 1000);
	while (mrrc_poll_cq(self->sfd, &c, 1) == 1)
		ASSERT_EQ(MRRC_OP_EVENT, c.opcode) TH_LOG("completed twice");
	st1 = stats(self->sfd);
	EXPECT_EQ(st0.expo_chained + 1, st1.expo_chained);
	EXPECT_EQ(st0.exposed, st1.exposed);
	EXPECT_EQ(st0.inuse_regions, st1.inuse_regions);
}

/*
 * A miss's REG_MR that the device refuses on the connection's queue pair
 * (chain_reg, issue 13 item 1): the POST fails with the device's error
 * and posts nothing, the region is dropped, not cached with a key that was
 * never registered, nothing stays pinned, and the same POST then goes
 * through, registered anew.  Then a RECV's exposure and advertisement
 * refused together (chained_recv_refused()).
 */
TEST_F_TIMEOUT(fail, chained_registration_refused, SWEEP_TIMEOUT)
{
	uint8_t *src = self->cbuf + (512 << 10);
	struct mrrc_cache_stats st0, st1;
	struct mrrc_wr w;
	char v[8];
	bool fired;
	int ret;

	FN_NTH_REQUIRE();
	if (param_rw("chain_reg", v, sizeof(v), 0) || v[0] != 'Y')
		SKIP(return, "chain_reg is off");
	pair_up(_metadata, self, MRRC_POLICY_MRE);
	st0 = stats(self->cfd);
	fill(src, 4096, 9);
	w = wr(self->cconn, MRRC_OP_WRITE, src, 4096, 1);
	w.remote_addr = self->rseg.addr;
	w.rkey = self->rseg.rkey;
	ASSERT_EQ(0, arm_one_fn("mrrc_dp_ib_post", -EIO));
	ASSERT_EQ(0, nth_arm(self->nth, 1));
	ret = post1(self->cfd, w);
	fired = nth_disarm(self->nth);
	ASSERT_EQ(0, set_phase(PH_ALLOC));
	ASSERT_TRUE(fired);
	ASSERT_EQ(-EIO, ret);
	st1 = stats(self->cfd);
	EXPECT_EQ(st0.reg_chained + 1, st1.reg_chained);
	EXPECT_EQ(st0.reg_chain_failures + 1, st1.reg_chain_failures);
	EXPECT_EQ(st0.cached_regions, st1.cached_regions);
	EXPECT_EQ(st0.pinned_pages, st1.pinned_pages);
	EXPECT_EQ(st0.inuse_regions, st1.inuse_regions);

	ASSERT_EQ(0, post1(self->cfd, w));
	reap_ok(_metadata, self->cfd, 1);
	ASSERT_EQ(0, check(self->sbuf, 4096, 9));
	EXPECT_EQ(st1.reg_chained + 1, stats(self->cfd).reg_chained);
	conn_alive(_metadata, self);

	chained_recv_refused(_metadata, self, "mrrc_dp_ib_post_chain");
	ASSERT_EQ(0, mrrc_unexport(self->sfd, self->rh));
	unpair(_metadata, self->sfd, self->sconn, self->cfd, self->cconn);
	all_clean(_metadata, self);
}

/*
 * A RECV's chained REG_MR taken by the device without the advertisement
 * behind it (mrrc_dp_chain_cut: no device does this on demand).  Nothing
 * tells whether the REG_MR ran until the queue pair is drained: the
 * RECV's completion is held until the drain has settled its exposure,
 * and then reported once, with the error.
 */
TEST_F_TIMEOUT(fail, chained_exposure_without_its_message, SWEEP_TIMEOUT)
{
	FN_NTH_REQUIRE();
	pair_up(_metadata, self, MRRC_POLICY_MRE);
	chained_recv_refused(_metadata, self, "mrrc_dp_chain_cut");
	ASSERT_EQ(0, mrrc_unexport(self->sfd, self->rh));
	unpair(_metadata, self->sfd, self->sconn, self->cfd, self->cconn);
	all_clean(_metadata, self);
}

/*
 * A revocation whose invalidation fails (issue 12, finding 8): the
 * LOCAL_INV chain of UNEXPORT is made to fail (mrrc_frwr_post_wait), so
 * the export's MR must be destroyed instead, before its pages are let go.
 * When UNEXPORT returns, the old key reaches nothing: a write with it
 * fails at the peer and changes no byte.
 */
TEST_F_TIMEOUT(fail, revocation_survives_a_failed_invalidation,
	       SWEEP_TIMEOUT)
{
	struct mrrc_cache_stats st;
	struct mrrc_cqe c;
	struct mrrc_wr w;
	bool fired;
	size_t i;
	int ret;

	FN_NTH_REQUIRE();
	pair_up(_metadata, self, MRRC_POLICY_MRE);
	/* The key works. */
	fill(self->cbuf, 4096, 3);
	w = wr(self->cconn, MRRC_OP_WRITE, self->cbuf, 4096, 1);
	w.remote_addr = self->rseg.addr;
	w.rkey = self->rseg.rkey;
	ASSERT_EQ(0, post1(self->cfd, w));
	reap_ok(_metadata, self->cfd, 1);
	ASSERT_EQ(0, check(self->sbuf, 4096, 3));
	memset(self->sbuf, 0x5a, 64 << 10);

	ASSERT_EQ(0, arm_one_fn("mrrc_frwr_post_wait", -EIO));
	ASSERT_EQ(0, nth_arm(self->nth, 1));
	ret = mrrc_unexport(self->sfd, self->rh);
	fired = nth_disarm(self->nth);
	ASSERT_EQ(0, set_phase(PH_ALLOC));
	ASSERT_TRUE(fired) TH_LOG("UNEXPORT posted no invalidation");
	ASSERT_EQ(0, ret) TH_LOG("a revocation cannot fail: %s",
				 strerror(-ret));
	st = stats(self->sfd);
	ASSERT_EQ(0, st.exported);
	ASSERT_EQ(0, st.exposed);

	/* The old key reaches nothing. */
	fill(self->cbuf, 4096, 4);
	ASSERT_EQ(0, post1(self->cfd, w));
	ASSERT_EQ(0, reap_op(self->cfd, &c));
	ASSERT_EQ(-EACCES, c.status);
	for (i = 0; i < (64 << 10); i++)
		ASSERT_EQ(0x5a, self->sbuf[i]) TH_LOG("byte %zu changed", i);
	ksft_print_msg("fail_nth: %-15s   1 function point (UNEXPORT's invalidation): the key died with its MR\n",
		       "revoke_broken");
	shm->sweeps++;
	shm->points[PH_FUNC]++;
	unpair(_metadata, self->sfd, self->sconn, self->cfd, self->cconn);
	all_clean(_metadata, self);
}

/*
 * A LOCAL_INV chain that the device fails on the wire (mrrc_frwr_inv_fault
 * makes its first work request name a wrong key), whether the release
 * waits for it (async_inval=N) or leaves it in flight (Y): the chain's MRs
 * are destroyed rather than reused, their pages are unpinned, the
 * registration queue pair starts over and the next registration works.
 */
TEST_F_TIMEOUT(fail, a_failed_invalidation_destroys_its_mrs, SWEEP_TIMEOUT)
{
	FN_NTH_REQUIRE();
	self->set_async = true;
	for (int async = 0; async < 2; async++) {
		struct mrrc_cache_stats st0, st;
		unsigned int i, n = ARRAY_SIZE(self->seg);
		struct mrrc_reg_req again[8];
		uint32_t mr[4];
		bool fired;
		int ret;

		ASSERT_EQ(0, param_rw("async_inval", async ? "Y" : "N", 0, 1));
		self->fd = ctx_open(MRRC_MODE_FAST, MRRC_POLICY_NONE);
		ASSERT_LE(0, self->fd);
		memset(self->req, 0, sizeof(self->req));
		for (i = 0; i < 4; i++) {
			self->req[i].addr = pg(self, 2 * i);
			self->req[i].length = P;
			self->req[i].access = RW;
		}
		ASSERT_EQ(4, mrrc_reg(self->fd, self->req, 4, self->seg, &n));
		for (i = 0; i < 4; i++) {
			self->handles[i] = self->req[i].handle;
			mr[i] = self->seg[i].lkey >> 8;
		}
		st0 = stats(self->fd);
		ASSERT_EQ(4, st0.pinned_pages);

		ASSERT_EQ(0, arm_one_fn("mrrc_frwr_inv_fault", 1));
		ASSERT_EQ(0, nth_arm(self->nth, 1));
		ret = mrrc_release(self->fd, self->handles, 4);
		fired = nth_disarm(self->nth);
		ASSERT_EQ(0, set_phase(PH_ALLOC));
		ASSERT_TRUE(fired) TH_LOG("the release posted no invalidation");
		ASSERT_EQ(4, ret);
		cache_ok(_metadata, self->fd, MRRC_MODE_FAST);
		st = stats(self->fd);
		ASSERT_EQ(0, st.pinned_pages);
		/* Policy none: each region goes in a chain of its own. */
		ASSERT_EQ(st0.inv_chains + 4, st.inv_chains);
		ASSERT_LE(st0.qp_resets + 1, st.qp_resets)
			TH_LOG("the failed chain did not reset the queue pair");

		/*
		 * The engine works again, and the failed chain's MR (policy
		 * none: each region goes in a chain of its own, the first
		 * one is the failed one) does not come back from the pools,
		 * by its index (the key without its key byte): it was
		 * destroyed, not reused.
		 */
		n = ARRAY_SIZE(self->seg);
		memset(again, 0, sizeof(again));
		for (i = 0; i < 8; i++) {
			again[i].addr = pg(self, 2 * i);
			again[i].length = P;
			again[i].access = RW;
		}
		ASSERT_EQ(8, mrrc_reg(self->fd, again, 8, self->seg, &n));
		ASSERT_EQ(st.reg_wrs + 8, stats(self->fd).reg_wrs);
		for (i = 0; i < 8; i++) {
			self->handles[i] = again[i].handle;
			ASSERT_NE(mr[0], self->seg[i].lkey >> 8)
				TH_LOG("the failed chain's MR was reused");
		}
		ASSERT_EQ(8, mrrc_release(self->fd, self->handles, 8));
		cache_ok(_metadata, self->fd, MRRC_MODE_FAST);
		close(self->fd);
		self->fd = -1;
		ksft_print_msg("fail_nth: %-15s   1 function point (async_inval=%s): MRs destroyed, pages unpinned\n",
			       "inv_broken", async ? "Y" : "N");
		fflush(stdout);
		shm->sweeps++;
		shm->points[PH_FUNC]++;
	}
	all_clean(_metadata, self);
}

/*
 * One REG of @page's page that releases its handle: how it was served
 * (MRRC_RESULT_*), or a negative errno.
 */
static int reg_page(FIXTURE_DATA(fail) *self, unsigned int page)
{
	struct mrrc_reg_req r = {
		.addr = pg(self, page), .length = P, .access = RW,
		.flags = MRRC_REG_RELEASE,
	};
	unsigned int n = ARRAY_SIZE(self->seg);
	int ret = mrrc_reg(self->fd, &r, 1, self->seg, &n);

	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	return r.status ? r.status : (int)r.result;
}

/*
 * Regions of this process's caches the unlocked hits' index could not let
 * go of yet (debugfs "caches", column zombies); -1 if there is no line.
 */
static long debugfs_zombies(void)
{
	return debugfs_cache_column(21);
}

/*
 * The unlocked hits' index cannot let go of a region (its maple tree finds
 * no memory: mrrc_index_clear fails once).  The region stays allocated,
 * out of reach of hits; a later locked request erases it, and a region
 * cached over the same range is indexed and hit without the mutex again.
 * Without that the range would get no unlocked hit until the context
 * closes.  Twice: an evicted region (FLUSH), the next request registering
 * the range anew; and a held region invalidated (MADV_DONTNEED), whose
 * failed erase comes in the very request that registers the range anew,
 * so the new region is kept out of the index until a locked hit on it.
 */
TEST_F_TIMEOUT(fail, index_erase_fails_then_is_retried, SWEEP_TIMEOUT)
{
	struct mrrc_reg_req held = {
		.addr = pg(self, 5), .length = P, .access = RW,
	};
	struct mrrc_cache_stats st0, st;
	unsigned int n;
	char v[8];
	bool fired;
	int ret;

	FN_NTH_REQUIRE();
	ASSERT_EQ(0, param_rw("lockless_hit", v, sizeof(v), 0));
	if (v[0] != 'Y')
		SKIP(return, "lockless_hit is off");
	self->fd = ctx_open(MRRC_MODE_FAST, MRRC_POLICY_LRU);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(MRRC_RESULT_MISS, reg_page(self, 3));
	ASSERT_EQ(MRRC_RESULT_EXACT, reg_page(self, 3));
	st0 = stats(self->fd);
	ASSERT_EQ(1, st0.hit_unlocked) TH_LOG("the hit took the mutex");

	ASSERT_EQ(0, arm_one_fn("mrrc_index_clear", -ENOMEM));
	ASSERT_EQ(0, nth_arm(self->nth, 1));
	ret = mrrc_flush(self->fd);
	fired = nth_disarm(self->nth);
	ASSERT_EQ(0, set_phase(PH_ALLOC));
	ASSERT_TRUE(fired) TH_LOG("the flush erased nothing from the index");
	ASSERT_EQ(1, ret);
	st = stats(self->fd);
	EXPECT_EQ(0, st.cached_regions);
	EXPECT_EQ(0, st.pinned_pages);
	EXPECT_EQ(1, debugfs_zombies());

	/* The old region is found, refused and freed; this one is indexed. */
	ASSERT_EQ(MRRC_RESULT_MISS, reg_page(self, 3));
	EXPECT_EQ(0, debugfs_zombies());
	ASSERT_EQ(MRRC_RESULT_EXACT, reg_page(self, 3));
	st = stats(self->fd);
	EXPECT_EQ(st0.hit_unlocked + 1, st.hit_unlocked)
		TH_LOG("the range gets no unlocked hits any more");

	/* A held region: invalidated, erased in the request that re-registers. */
	n = ARRAY_SIZE(self->seg);
	ASSERT_EQ(1, mrrc_reg(self->fd, &held, 1, self->seg, &n));
	ASSERT_EQ(MRRC_RESULT_MISS, held.result);
	/*
	 * The notifier's reaper may take the region out before the REG
	 * does, in a worker: the first erase by any task fails (another
	 * process's cache erasing meanwhile would take it: this program
	 * wants the machine to itself, as its sweeps do).
	 */
	ASSERT_EQ(0, arm_one_fn("mrrc_index_clear", -ENOMEM));
	ASSERT_EQ(0, space_arm(1));
	ASSERT_EQ(0, madvise((void *)pg(self, 5), P, MADV_DONTNEED));
	ret = reg_page(self, 5);
	fired = space_disarm();
	ASSERT_EQ(0, set_phase(PH_ALLOC));
	ASSERT_TRUE(fired) TH_LOG("the invalidated region was not erased");
	ASSERT_EQ(MRRC_RESULT_MISS, ret);
	ASSERT_EQ(1, mrrc_release(self->fd, &held.handle, 1));
	EXPECT_EQ(1, debugfs_zombies());
	st0 = stats(self->fd);
	/* Locked (the old region is refused); it indexes this one. */
	ASSERT_EQ(MRRC_RESULT_EXACT, reg_page(self, 5));
	EXPECT_EQ(0, debugfs_zombies());
	ASSERT_EQ(MRRC_RESULT_EXACT, reg_page(self, 5));
	st = stats(self->fd);
	EXPECT_EQ(st0.hit_unlocked + 1, st.hit_unlocked)
		TH_LOG("a region cached over a zombie is never indexed");
	EXPECT_EQ(2, st.cached_regions);	/* pages 3 and 5 */
	EXPECT_EQ(0, st.handles);
	EXPECT_EQ(0, st.inuse_regions);
	cache_ok(_metadata, self->fd, MRRC_MODE_FAST);
	all_clean(_metadata, self);
}

/* EXPORT of 20000 bytes across pages, for writing; the client uses it. */
#define XP_OFF		((256 << 10) + 100)
#define XP_LEN		20000

static void export_prep(struct __test_metadata *_metadata,
			FIXTURE_DATA(fail) *self)
{
	ASSERT_LE(0, mrrc_flush(self->sfd));
	/* pair_up()'s export stays: what this one adds is measured. */
	self->exported = stats(self->sfd).exported;
	self->exposed = stats(self->sfd).exposed;
}

static int export_op(FIXTURE_DATA(fail) *self)
{
	struct mrrc_export x = {
		.size = sizeof(x),
		.addr = (uintptr_t)self->sbuf + XP_OFF,
		.len = XP_LEN,
		.access = MRRC_ACCESS_REMOTE_WRITE,
		.nconns = 1,
		.conns = (uintptr_t)&self->sconn,
	};
	int ret = raw_ioctl(self->sfd, MRRC_IOC_EXPORT, &x);

	self->id = x.id;
	self->rseg = x.segs[0];
	self->done = x.nsegs;
	return ret;
}

static void export_undo(struct __test_metadata *_metadata,
			FIXTURE_DATA(fail) *self, int ret)
{
	struct mrrc_wr w;

	if (ret) {
		/* Nothing of it is left. */
		ASSERT_EQ(self->exported, stats(self->sfd).exported);
		ASSERT_EQ(self->exposed, stats(self->sfd).exposed);
		ASSERT_EQ(0, export_op(self));
	}
	ASSERT_EQ(1, self->done);
	ASSERT_EQ((uintptr_t)self->sbuf + XP_OFF, self->rseg.addr);
	ASSERT_EQ(XP_LEN, self->rseg.length);
	w = wr(self->cconn, MRRC_OP_WRITE, self->cbuf, XP_LEN, 1);
	w.remote_addr = self->rseg.addr;
	w.rkey = self->rseg.rkey;
	ASSERT_EQ(0, post1(self->cfd, w));
	reap_ok(_metadata, self->cfd, 1);
	ASSERT_EQ(0, mrrc_unexport(self->sfd, self->id));
	ASSERT_EQ(self->exported, stats(self->sfd).exported);
	ASSERT_EQ(self->exposed, stats(self->sfd).exposed);
	conn_alive(_metadata, self);
}

TEST_F_TIMEOUT(fail, export, SWEEP_TIMEOUT)
{
	const struct sweep s = {
		.name = "export", .alloc_errs = E_NOMEM, .func_errs = E_REG,
		.prep = export_prep, .op = export_op, .undo = export_undo,
	};

	FI_REQUIRE();
	data_sweep(_metadata, self, &s, MRRC_POLICY_MRE);
}

/*
 * POLL with eight completions waiting (six WRITEs, two WRITE_IMMs) on a
 * client without caching, so that releasing each one deregisters.
 */
static void poll_prep(struct __test_metadata *_metadata,
		      FIXTURE_DATA(fail) *self)
{
	unsigned int i;

	for (i = 0; i < 8; i++) {
		self->w[i] = wr(self->cconn, i < 6 ? MRRC_OP_WRITE :
				MRRC_OP_WRITE_IMM, self->cbuf + i * 8192,
				4096, 100 + i);
		self->w[i].remote_addr = self->rseg.addr + i * 8192;
		self->w[i].rkey = self->rseg.rkey;
	}
	ASSERT_EQ(0, mrrc_post(self->cfd, self->w, 8, NULL));
	ASSERT_EQ(1, mrrc_wait(self->cfd, TMO_MS));
	self->got = 0;
}

static int poll_op(FIXTURE_DATA(fail) *self)
{
	int r = mrrc_poll_cq(self->cfd, self->cqe, ARRAY_SIZE(self->cqe));

	self->got = r > 0 ? r : 0;
	return r < 0 ? r : 0;
}

static void poll_undo(struct __test_metadata *_metadata,
		      FIXTURE_DATA(fail) *self, int ret)
{
	unsigned int i, seen = 0;

	/* Nothing lost, nothing twice. */
	ASSERT_GE(8, self->got);
	ASSERT_EQ(0, reap(self->cfd, self->cqe + self->got, 8 - self->got));
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, self->cqe[i].status);
		ASSERT_LE(100, self->cqe[i].wr_id);
		ASSERT_GT(108, self->cqe[i].wr_id);
		seen |= 1u << (self->cqe[i].wr_id - 100);
	}
	ASSERT_EQ(0xff, seen);
	ASSERT_EQ(0, mrrc_poll_cq(self->cfd, self->cqe, 1));
	reap_ok(_metadata, self->sfd, 2);	/* RECV_IMM */
	conn_alive(_metadata, self);
	cache_ok(_metadata, self->cfd, MRRC_MODE_FAST);
	ASSERT_EQ(0, stats(self->cfd).pinned_pages);
}

TEST_F_TIMEOUT(fail, poll, SWEEP_TIMEOUT)
{
	const struct sweep s = {
		.name = "poll", .alloc_errs = E_NOMEM,
		.prep = poll_prep, .op = poll_op, .undo = poll_undo,
	};

	FI_REQUIRE();
	data_sweep(_metadata, self, &s, MRRC_POLICY_NONE);
}

/* ---- close -------------------------------------------------------------- */

/*
 * A context H (self->fd) that holds everything: a listener, a connection
 * it accepted and one it made (both to the peer, self->cfd), the FRWR
 * engine and pools, an export, cached regions and handles, a RECV and an
 * STCRW waiting for the peer, a held CRW, and a RECV_IMM nobody polled.
 */
static void close_prep(struct __test_metadata *_metadata,
		       FIXTURE_DATA(fail) *self)
{
	uint8_t *h = self->buf + (2 << 20);
	uint16_t hport = self->port + 1;
	struct mrrc_reg_req r[2];
	struct mrrc_seg hseg, lseg;
	struct mrrc_cqe bad;
	struct mrrc_wr w;
	uint32_t hh, hx, hl, hc;
	unsigned int n = ARRAY_SIZE(self->seg);
	int ret;

	self->fd = ctx_open(MRRC_MODE_FAST, MRRC_POLICY_MRE);
	ASSERT_LE(0, self->fd);
	/* The peer connects to H, H to the peer. */
	ASSERT_EQ(0, listen_on(self->fd, hport, &hl));
	ASSERT_EQ(0, connect_to(self->cfd, hport, &self->pc1));
	ret = complete_connect(self->fd, self->cfd, &hc, &bad);
	ASSERT_EQ(0, ret) TH_LOG("%s event %s", strerror(-ret),
				 ev_name(bad.event));
	ASSERT_EQ(0, connect_to(self->fd, self->port, &self->id));
	ret = complete_connect(self->cfd, self->fd, &self->pc2, &bad);
	ASSERT_EQ(0, ret) TH_LOG("%s event %s", strerror(-ret),
				 ev_name(bad.event));
	/* An export for the peer, a handle, and two cached regions. */
	ASSERT_EQ(0, export1(self->fd, hc, h, 16 << 10, REMOTE_ALL, &hseg,
			     &hx));
	ASSERT_EQ(0, reg1(self->fd, h + (32 << 10), 16 << 10, RW, &lseg,
			  &hh));
	memset(r, 0, sizeof(r));
	r[0].addr = (uintptr_t)h + (512 << 10);
	r[1].addr = (uintptr_t)h + (600 << 10);
	r[0].length = r[1].length = 3 * P;
	r[0].access = r[1].access = RW;
	r[0].flags = r[1].flags = MRRC_REG_RELEASE;
	ASSERT_EQ(2, mrrc_reg(self->fd, r, 2, self->seg, &n));
	/* Waiting: a RECV and an STCRW on one connection, a CRW on the other. */
	ASSERT_EQ(0, post1(self->fd, wr(hc, MRRC_OP_RECV, h + (64 << 10),
					4096, 1)));
	w = wr(hc, MRRC_OP_STCRW, h + (128 << 10), 4096, 2);
	w.tag = 7;
	ASSERT_EQ(0, post1(self->fd, w));
	w = wr(self->id, MRRC_OP_CRW, h + (192 << 10), 64, 3);
	w.tag = 8;
	ASSERT_EQ(0, post1(self->fd, w));
	/* The peer's WRITE_IMM: a completion H does not poll. */
	w = wr(self->pc1, MRRC_OP_WRITE_IMM, self->cbuf, 256, 4);
	w.remote_addr = hseg.addr;
	w.rkey = hseg.rkey;
	w.imm = 9;
	ASSERT_EQ(0, post1(self->cfd, w));
	reap_ok(_metadata, self->cfd, 1);
	ASSERT_EQ(1, mrrc_wait(self->fd, TMO_MS));
}

static int close_op(FIXTURE_DATA(fail) *self)
{
	int r = close(self->fd) ? -errno : 0;

	self->fd = -1;
	return r;
}

/* The peer hears of it (unless the injection ate the DREQ); all gone. */
static void close_undo(struct __test_metadata *_metadata,
		       FIXTURE_DATA(fail) *self, int ret)
{
	int64_t end = now_ms() + 2000;
	unsigned int down = 0;
	struct mrrc_cqe c;

	while (down < 2 && now_ms() < end) {
		if (mrrc_poll_cq(self->cfd, &c, 1) != 1) {
			mrrc_wait(self->cfd, 100);
			continue;
		}
		ASSERT_EQ(MRRC_OP_EVENT, c.opcode);
		ASSERT_TRUE(c.conn == self->pc1 || c.conn == self->pc2);
		ASSERT_TRUE(c.event == MRRC_EVENT_DISCONNECTED ||
			    c.event == MRRC_EVENT_ERROR)
			TH_LOG("peer: event %s status %d", ev_name(c.event),
			       c.status);
		down++;
	}
	if (down < 2)
		self->silent++;
	unpair(_metadata, self->cfd, self->pc1, self->cfd, self->pc2);
	ASSERT_EQ(self->ctx0 + 1, debugfs_contexts());
	ASSERT_LE(0, mrrc_flush(self->cfd));
	ASSERT_EQ(0, global_stats().pinned_pages);
	ASSERT_EQ(0, global_stats().handles);
	ASSERT_EQ(1, global_stats().caches);
}

TEST_F_TIMEOUT(fail, close, SWEEP_TIMEOUT)
{
	const struct sweep s = {
		.name = "close",
		.prep = close_prep, .op = close_op, .undo = close_undo,
	};

	FI_REQUIRE();
	self->cfd = ctx_open(MRRC_MODE_FAST, MRRC_POLICY_MRE);
	ASSERT_LE(0, self->cfd);
	ASSERT_EQ(0, listen_on(self->cfd, self->port, &self->lis));
	sweep(_metadata, self, &s);
	if (self->silent)
		ksft_print_msg("fail_nth: close: the peer was not told of %u closes (its DREQ was the injected failure)\n",
			       self->silent);
	all_clean(_metadata, self);
}

/* ---- the total ---------------------------------------------------------- */

FIXTURE(summary) {
	int unused;
};

FIXTURE_SETUP(summary)
{
}

FIXTURE_TEARDOWN(summary)
{
}

TEST_F(summary, total)
{
	if (!fi_ok)
		SKIP(return, "no %s: the kernel has no fault injection",
		     FAIL_NTH);
	ksft_print_msg("fail_nth: total: %u injection points in %u sweeps (%u allocation, %u function, %u in the CM handlers), %.0f s%s\n",
		       shm->points[PH_ALLOC] + shm->points[PH_FUNC] +
		       shm->points[PH_ASYNC], shm->sweeps,
		       shm->points[PH_ALLOC], shm->points[PH_FUNC],
		       shm->points[PH_ASYNC], shm->seconds,
		       shm->capped ? ", some sweeps capped" : "");
	fflush(stdout);
}

TEST_HARNESS_MAIN
