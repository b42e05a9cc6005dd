// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench_reg - what it costs to make a user buffer RDMA-usable and let it go.
 *
 * For sizes 4 KiB .. 1 MiB, one register + release cycle of a buffer:
 *
 *   ordinary  no cache, ib_reg_user_mr + ib_dereg_mr (the papers' baseline)
 *   fast      no cache, pooled FRWR MR: pin, map, REG_MR, LOCAL_INV, unpin
 *   cached    a cache hit (the buffer is already registered)
 *   overlap   the first half is cached (held), the second half is
 *             registered, released and deregistered every cycle; from
 *             8 KiB on (a one-page buffer has no half to cache)
 *
 * and the latency of a cache hit with 10, 1 000 and 100 000 cached regions
 * (fast mode, one page each, random region per request).  Cache hits are
 * also measured 64 per ioctl ("batch": 64), the way the data path submits
 * them; every other figure is one request per ioctl ("batch": 1).
 *
 * Each measurement is one JSON object per line: median and mean in ns, and
 * ratios against ordinary measured in the same run.  First, the cost
 * model a*p + b (register) and a'*p + b' (deregister) fitted to this
 * device for ordinary and fast registration, for the trace replay; then
 * deregistration batches of 1 to 256 regions against as many single
 * deregistrations, and the batch model b + N * c fitted to them.
 *
 * Last, a fast cache kept full (16 regions, LRU and MRE): every request is
 * a miss that evicts, measured with the eviction's LOCAL_INV chain waited
 * for (module parameter async_inval=N, "inval": "sync") and left to
 * complete in the background (Y, "inval": "async", the default).
 *
 * Then registration inside a POST, on a connection of two contexts of
 * this process (the server listens on BENCH_ADDR): WRITEs of 4 KiB posted
 * 1, 16 and 64 per ioctl from cached buffers ("hit_in_post") and from
 * buffers the cache does not hold ("miss_in_post"), each beside the same
 * POSTs from held registrations ("post_held", "post_held_beside_miss"),
 * with what the lookup or the registration adds per operation; and a
 * buffer made usable and written to completion, 4-128 KiB, by a miss
 * inside the POST ("miss_write") against an ordinary registration
 * followed by the same write ("ordinary_write").
 *
 * Last, the hits above (one per ioctl with 10 and 1 000 regions, 64 per
 * ioctl, inside a POST of 1, 16 and 64) with module parameter lockless_hit
 * on and off in the same run (key "lockless"), and 64 per ioctl from one
 * and from two threads sharing the context ("threads"; hits per second of
 * both together, "iterations" the window in ms).
 *
 * usage: bench_reg [-d DEV] [post | lockless]: on RDMA device DEV
 * (default $MRRC_DEV, else rxe0); with "post", only the measurements
 * inside a POST, with "lockless" only the last ones, each with the
 * ordinary 4 KiB register + release cycle they are compared with.
 * Every line also carries the keys of the run (benchjson.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include "benchconn.h"
#include "benchjson.h"
#include "libmrrc.h"

#define RW MRRC_ACCESS_LOCAL_WRITE
#define MAX_ITERS 3000
#define MIN_ITERS 20
#define BUDGET_NS 400000000ull	/* per configuration */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * Per-iteration timestamps.  In the test VM clock_gettime() costs about
 * 1 us (the guest runs on the emulated HPET, see tools/vm/run.sh), which
 * would be counted in every single-request figure; on x86-64 read the TSC
 * instead (about 12 ns), calibrated against CLOCK_MONOTONIC at start.
 */
#if defined(__x86_64__)
#include <x86intrin.h>
static double ns_per_tick;

static void timer_init(void)
{
	uint64_t t0 = mono_ns(), c0 = __rdtsc();

	usleep(200000);
	ns_per_tick = (double)(mono_ns() - t0) / (double)(__rdtsc() - c0);
}

static uint64_t now_ns(void)
{
	return (uint64_t)(__rdtsc() * ns_per_tick);
}
#else
static void timer_init(void)
{
}

static uint64_t now_ns(void)
{
	return mono_ns();
}
#endif

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_reg: %s: %s\n", what, strerror(-err));
	exit(1);
}

/* @len bytes of anonymous memory, faulted in. */
static char *map_populated(size_t len)
{
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (buf == MAP_FAILED)
		die("mmap", -errno);
	return buf;
}

static int open_ctx(uint32_t mode, uint32_t policy, uint64_t max_pages,
		    uint32_t max_regions)
{
	struct mrrc_cache_config cfg = {
		.mode = mode, .policy = policy,
		.max_pages = max_pages, .max_regions = max_regions,
	};
	int fd = mrrc_open(0), ret;

	if (fd < 0)
		die("open", fd);
	ret = mrrc_bind(fd, bench_dev(), NULL);
	if (ret) {
		fprintf(stderr, "bench_reg: bind %s: %s\n", bench_dev(),
			strerror(-ret));
		exit(1);
	}
	ret = mrrc_cache_config(fd, &cfg);
	if (ret)
		die("config", ret);
	return fd;
}

static int reg(int fd, void *addr, size_t len, uint32_t flags, uint32_t *handle)
{
	struct mrrc_reg_req req = {
		.addr = (uintptr_t)addr, .length = len, .access = RW,
		.flags = flags,
	};
	struct mrrc_seg seg[8];
	unsigned int n = 8;
	int ret = mrrc_reg(fd, &req, 1, seg, &n);

	if (ret != 1)
		return ret < 0 ? ret : req.status;
	if (handle)
		*handle = req.handle;
	return 0;
}

struct result {
	double median, mean;
	unsigned int iters;
};

/* Median and mean of @n samples (sorts them). */
static struct result summarize(uint64_t *t, unsigned int n)
{
	struct result res = { .iters = n };
	uint64_t sum = 0;

	for (unsigned int i = 0; i < n; i++)
		sum += t[i];
	qsort(t, n, sizeof(t[0]), cmp_u64);
	res.median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2.0;
	res.mean = (double)sum / n;
	return res;
}

enum mode { ORDINARY, FAST, CACHED, OVERLAP, NMODES };
static const char *const mode_name[] = { "ordinary", "fast", "cached", "overlap" };

static struct result measure(enum mode m, size_t size)
{
	static uint64_t t[MAX_ITERS];
	uint32_t held = 0;
	uint64_t start;
	unsigned int i, n = 0;
	char *buf;
	int fd, ret;

	buf = map_populated(size);
	fd = open_ctx(m == ORDINARY ? MRRC_MODE_ORDINARY : MRRC_MODE_FAST,
		      m <= FAST ? MRRC_POLICY_NONE : MRRC_POLICY_MRE, 65536, 1024);
	if (m == CACHED && (ret = reg(fd, buf, size, MRRC_REG_RELEASE, NULL)))
		die("prime", ret);
	if (m == OVERLAP && (ret = reg(fd, buf, size / 2, 0, &held)))
		die("prime half", ret);

	start = now_ns();
	for (i = 0; i < MAX_ITERS + 5; i++) {
		uint64_t t0 = now_ns();

		ret = reg(fd, buf, size, MRRC_REG_RELEASE, NULL);
		if (ret)
			die("reg", ret);
		if (m == OVERLAP && (ret = mrrc_flush(fd)) != 1)
			die("flush", ret < 0 ? ret : -EPROTO);
		if (i >= 5)
			t[n++] = now_ns() - t0;
		if (n >= MIN_ITERS && now_ns() - start > BUDGET_NS)
			break;
	}
	if (held)
		mrrc_release(fd, &held, 1);
	close(fd);
	munmap(buf, size);
	return summarize(t, n);
}

static unsigned int cur_batch = 1;
/* More keys for the lines being emitted: ,"key":"value"... or "". */
static const char *cur_keys = "";

static void emit(const char *metric, double value, const char *unit,
		 const char *mode, size_t size, unsigned long regions,
		 unsigned int iters)
{
	/* Ratios to 1/10 000 (a 1/119 fraction is 0.0084), times to 0.1 ns. */
	int prec = strcmp(unit, "ratio") ? 1 : 4;

	printf("{\"bench\":\"reg\",\"metric\":\"%s\",\"value\":%.*f,"
	       "\"unit\":\"%s\",\"mode\":\"%s\",\"size_bytes\":%zu,"
	       "\"regions\":%lu,\"batch\":%u,\"iterations\":%u,\"kver\":",
	       metric, prec, value, unit, mode, size, regions, cur_batch,
	       iters);
	bench_json_str(stdout, bench_kernel());
	fputs(cur_keys, stdout);
	bench_json_end(stdout);
}

/*
 * Cache hits submitted BATCH per ioctl (64 cached buffers of @size): the
 * per-request latency is the call's time divided by BATCH.
 */
#define BATCH 64
static struct result batched_hits(size_t size)
{
	static uint64_t t[MAX_ITERS];
	static struct mrrc_reg_req reqs[BATCH];
	static struct mrrc_seg segs[BATCH];
	unsigned int n = 0, i, k;
	char *buf;
	int fd;

	buf = map_populated(size * BATCH);
	fd = open_ctx(MRRC_MODE_FAST, MRRC_POLICY_MRE, 65536, 1024);
	for (i = 0; i < MAX_ITERS / 4 + 5; i++) {
		unsigned int ns = BATCH;
		uint64_t t0;
		int ret;

		for (k = 0; k < BATCH; k++)
			reqs[k] = (struct mrrc_reg_req){
				.addr = (uintptr_t)buf + k * size,
				.length = size, .access = RW,
				.flags = MRRC_REG_RELEASE,
			};
		t0 = now_ns();
		ret = mrrc_reg(fd, reqs, BATCH, segs, &ns);
		if (ret != BATCH)
			die("batched hits", ret < 0 ? ret : reqs[ret].status);
		if (i >= 5)	/* the first round registers */
			t[n++] = (now_ns() - t0) / BATCH;
	}
	close(fd);
	munmap(buf, size * BATCH);
	return summarize(t, n);
}

/* Hit latency with @nreg one-page regions cached (every other page). */
static struct result hit_latency(unsigned long nreg)
{
	static uint64_t t[MAX_ITERS];
	size_t span = nreg * 2 * 4096;
	struct mrrc_reg_req *reqs;
	struct mrrc_seg *segs;
	unsigned int seed = 7, n = 0, i;
	char *buf;
	int fd;

	buf = mmap(NULL, span, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap", -errno);
	fd = open_ctx(MRRC_MODE_FAST, MRRC_POLICY_MRE, nreg + 16, nreg + 16);

	/* Register them all, 4096 requests per call. */
	reqs = calloc(4096, sizeof(*reqs));
	segs = calloc(4096, sizeof(*segs));
	for (unsigned long done = 0; done < nreg;) {
		unsigned int k = nreg - done < 4096 ? nreg - done : 4096;
		unsigned int ns = 4096;
		int ret;

		for (i = 0; i < k; i++) {
			reqs[i] = (struct mrrc_reg_req){
				.addr = (uintptr_t)buf + (done + i) * 2 * 4096,
				.length = 4096, .access = RW,
				.flags = MRRC_REG_RELEASE,
			};
		}
		ret = mrrc_reg(fd, reqs, k, segs, &ns);
		if (ret != (int)k)
			die("prime regions", ret < 0 ? ret : reqs[ret].status);
		done += k;
	}

	for (i = 0; i < MAX_ITERS + 5; i++) {
		unsigned long r = (unsigned long)rand_r(&seed) % nreg;
		uint64_t t0 = now_ns();
		int ret = reg(fd, buf + r * 2 * 4096, 4096, MRRC_REG_RELEASE, NULL);

		if (ret)
			die("hit", ret);
		if (i >= 5)
			t[n++] = now_ns() - t0;
	}
	{
		struct mrrc_cache_stats st;

		mrrc_cache_stats(fd, &st);
		if (st.cached_regions != nreg || st.hit_exact != MAX_ITERS + 5)
			die("hit run was not all hits", -EPROTO);
	}
	close(fd);
	munmap(buf, span);
	free(reqs);
	free(segs);
	return summarize(t, n);
}

/*
 * The cost model measured on this device: median time to register one
 * region of p pages (a miss) and to deregister it (a flush of one region),
 * for p = 1 .. 256, fitted by least squares to a*p + b and a'*p + b'.
 */
/* Least squares: y = slope * x + intercept through @n points. */
static void fit_line(const double *x, const double *y, unsigned int n,
		     double *slope, double *intercept)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0;

	for (unsigned int k = 0; k < n; k++) {
		sx += x[k];
		sy += y[k];
		sxx += x[k] * x[k];
		sxy += x[k] * y[k];
	}
	*slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
	*intercept = (sy - *slope * sx) / n;
}

/*
 * The cache's own figures after a run (measured inside the module,
 * kmod/cost.c): a and b after fit_costs()' registrations (@dereg 0), b'
 * and c' after batched_dereg()'s batches (@dereg 1).
 */
static void kernel_fit(int fd, const char *name, int dereg,
		       unsigned int iters)
{
	struct mrrc_cache_config cfg = { 0 };
	int ret = mrrc_cache_config(fd, &cfg);

	if (ret)
		die("config", ret);
	/* Not measured, they would be the papers' figures: say so. */
	if (!(cfg.flags & MRRC_CACHE_COSTS_MEASURED))
		die("costs not measured", -EPROTO);
	if (dereg) {
		emit("cost_kernel_batch_b_ns", cfg.dereg_ns_per_op, "ns",
		     name, 4096, 1, iters);
		emit("cost_kernel_batch_c_ns", cfg.dereg_ns_per_region, "ns",
		     name, 4096, 1, iters);
	} else {
		emit("cost_kernel_a_ns", cfg.reg_ns_per_page, "ns", name,
		     4096, 1, iters);
		emit("cost_kernel_b_ns", cfg.reg_ns_per_op, "ns", name, 4096,
		     1, iters);
	}
}

static void fit_costs(uint32_t mode, const char *name)
{
	static const unsigned int pages[] = { 1, 4, 16, 64, 256 };
	enum { N = sizeof(pages) / sizeof(pages[0]), IT = 200 };
	static uint64_t treg[N][IT], tdereg[N][IT];
	double x[N], yr[N], yd[N], fit[4];
	char *buf;
	int fd;

	buf = map_populated(256 * 4096);
	fd = open_ctx(mode, MRRC_POLICY_MRE, 65536, 1024);
	/* The sizes in turn, as the module's own fit wants them mixed. */
	for (unsigned int i = 0; i < IT; i++) {
		for (unsigned int k = 0; k < N; k++) {
			uint32_t h;
			uint64_t t0 = now_ns(), t1;
			int ret = reg(fd, buf, pages[k] * 4096, 0, &h);

			if (ret)
				die("fit reg", ret);
			t1 = now_ns();
			mrrc_release(fd, &h, 1);
			if (mrrc_flush(fd) != 1)
				die("fit flush", -EPROTO);
			tdereg[k][i] = now_ns() - t1;
			treg[k][i] = t1 - t0;
		}
	}
	for (unsigned int k = 0; k < N; k++) {
		qsort(treg[k], IT, sizeof(treg[k][0]), cmp_u64);
		qsort(tdereg[k], IT, sizeof(tdereg[k][0]), cmp_u64);
		x[k] = pages[k];
		yr[k] = treg[k][IT / 2];
		yd[k] = tdereg[k][IT / 2];
	}
	kernel_fit(fd, name, 0, IT);
	close(fd);
	munmap(buf, 256 * 4096);

	for (int which = 0; which < 2; which++) {
		double a, b;

		fit_line(x, which ? yd : yr, N, &a, &b);
		fit[2 * which] = a > 1 ? a : 1;
		fit[2 * which + 1] = b > 1 ? b : 1;
	}
	emit("cost_model_a_ns", fit[0], "ns", name, 4096, 1, IT);
	emit("cost_model_b_ns", fit[1], "ns", name, 4096, 1, IT);
	emit("cost_model_a2_ns", fit[2], "ns", name, 4096, 1, IT);
	emit("cost_model_b2_ns", fit[3], "ns", name, 4096, 1, IT);
}

/*
 * Deregistration in batches: N one-page regions (every other page, so that
 * no two touch), registered and released,
 * let go by one FLUSH (one batch: one LOCAL_INV chain in fast mode, N
 * ib_dereg_mr() calls in ordinary mode), against the same N regions let
 * go by one FLUSH each.  A straight line through the batch medians is the
 * measured deregistration model: b (per batch) + N * c (per region).
 */
static void batched_dereg(uint32_t mode, const char *name)
{
	static const unsigned int ns[] = { 1, 4, 16, 64, 256 };
	enum { K = sizeof(ns) / sizeof(ns[0]), IT = 40 };
	static uint64_t tb[IT], tsingle[IT];
	double x[K], y[K], c, b;
	struct mrrc_cache_stats st = { .size = sizeof(st) };
	struct result rb, rs;
	char *buf;
	int fd, ret;

	buf = map_populated(512 * 4096);
	fd = open_ctx(mode, MRRC_POLICY_MRE, 65536, 1024);
	for (unsigned int k = 0; k < K; k++) {
		unsigned int n = ns[k];

		for (unsigned int it = 0; it < IT; it++) {
			uint64_t t0, sum = 0;

			for (unsigned int i = 0; i < n; i++)
				if ((ret = reg(fd, buf + 2 * i * 4096, 4096,
					       MRRC_REG_RELEASE, NULL)))
					die("batch reg", ret);
			ret = mrrc_cache_stats(fd, &st);
			if (ret || st.cached_regions != n)
				die("batch: regions", ret ? ret : -EPROTO);
			t0 = now_ns();
			if ((ret = mrrc_flush(fd)) != (int)n)
				die("batch flush", ret < 0 ? ret : -EPROTO);
			tb[it] = now_ns() - t0;
			for (unsigned int i = 0; i < n; i++) {
				if ((ret = reg(fd, buf + 2 * i * 4096, 4096,
					       MRRC_REG_RELEASE, NULL)))
					die("single reg", ret);
				t0 = now_ns();
				if ((ret = mrrc_flush(fd)) != 1)
					die("single flush",
					    ret < 0 ? ret : -EPROTO);
				sum += now_ns() - t0;
			}
			tsingle[it] = sum;
		}
		rb = summarize(tb, IT);
		rs = summarize(tsingle, IT);
		emit("dereg_batch_median", rb.median, "ns", name, 4096, n, IT);
		emit("dereg_singles_median", rs.median, "ns", name, 4096, n,
		     IT);
		emit("dereg_batch_speedup", rs.median / rb.median, "ratio",
		     name, 4096, n, IT);
		x[k] = n;
		y[k] = rb.median;
	}
	kernel_fit(fd, name, 1, IT);
	close(fd);
	munmap(buf, 512 * 4096);
	fit_line(x, y, K, &c, &b);
	emit("cost_model_batch_b_ns", b, "ns", name, 4096, 1, IT);
	emit("cost_model_batch_c_ns", c, "ns", name, 4096, 1, IT);
}

/* Set module parameter @name to @v. */
static int set_param(const char *name, const char *v)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/mrrc/parameters/%s", name);
	f = fopen(path, "we");

	if (!f)
		return -errno;
	fputs(v, f);
	return fclose(f) ? -errno : 0;
}

/*
 * A full fast cache of 16 one-page regions cycled over 64 pages: every
 * request misses and evicts (LRU: one region and one chain per miss; MRE:
 * an eviction segment per round).  Per-request latency, with the
 * eviction's chain waited for and not.
 */
static void evict_churn(void)
{
	static const uint32_t pol[] = { MRRC_POLICY_LRU, MRRC_POLICY_MRE };
	static const char *const pol_name[] = { "lru", "mre" };
	static uint64_t t[MAX_ITERS];
	static char keys[64];
	char *buf = map_populated(64 * 4096);

	for (unsigned int p = 0; p < 2; p++) {
		for (int async = 0; async < 2; async++) {
			unsigned int i, n = 0;
			uint64_t start;
			struct result r;
			int fd, ret;

			if ((ret = set_param("async_inval", async ? "Y" : "N"))) {
				fprintf(stderr, "bench_reg: async_inval: %s: no evict_churn lines\n",
					strerror(-ret));
				munmap(buf, 64 * 4096);
				return;
			}
			fd = open_ctx(MRRC_MODE_FAST, pol[p], 65536, 16);
			start = now_ns();
			for (i = 0; i < MAX_ITERS + 32; i++) {
				uint64_t t0 = now_ns();

				ret = reg(fd, buf + (i % 64) * 4096, 4096,
					  MRRC_REG_RELEASE, NULL);
				if (ret)
					die("evict reg", ret);
				if (i >= 32)
					t[n++] = now_ns() - t0;
				if (n >= MIN_ITERS && now_ns() - start > BUDGET_NS)
					break;
			}
			close(fd);
			r = summarize(t, n);
			snprintf(keys, sizeof(keys),
				 ",\"policy\":\"%s\",\"inval\":\"%s\"",
				 pol_name[p], async ? "async" : "sync");
			cur_keys = keys;
			emit("latency_median", r.median, "ns", "fast_evict", 4096,
			     16, r.iters);
			emit("latency_mean", r.mean, "ns", "fast_evict", 4096, 16,
			     r.iters);
			cur_keys = "";
		}
	}
	set_param("async_inval", "Y");
	munmap(buf, 64 * 4096);
}

/* ---- registration inside a POST ------------------------------------ */

#define POST_PORT	18530
#define POST_WINDOW	(64 * 4096)	/* the largest batch * size */
#define STRIDE(size)	((size) + 4096)	/* a gap page between buffers */

static struct bench_pair pp;
static struct mrrc_seg pwin;	/* the server's window, exported */
static char *pwin_buf;

/* Client context of mode @mode (policy MRE, or none when ordinary). */
static void post_pair_open(uint32_t mode)
{
	struct mrrc_cache_config cfg = {
		.mode = mode, .max_pages = 65536, .max_regions = 1024,
		.policy = mode == MRRC_MODE_ORDINARY ? MRRC_POLICY_NONE :
						       MRRC_POLICY_MRE,
	};
	unsigned int n = 1;
	uint32_t xid;
	int ret;

	ret = bench_pair_open(&pp, POST_PORT + mode, &cfg);
	if (ret)
		die("connect to self", ret);
	ret = mrrc_export(pp.sfd, pwin_buf, POST_WINDOW,
			  MRRC_ACCESS_REMOTE_WRITE, &pp.sconn, 1, &pwin, &n,
			  &xid);
	if (ret)
		die("export", ret);
}

/* Polls the client until @n operations completed, every one with 0. */
static void reap_ops(unsigned int n)
{
	struct mrrc_cqe c[64];

	while (n) {
		int k = mrrc_poll_cq(pp.cfd, c, n < 64 ? n : 64);

		if (k < 0)
			die("poll", k);
		for (int i = 0; i < k; i++)
			if (c[i].opcode == MRRC_OP_EVENT || c[i].status)
				die("write completion",
				    c[i].opcode == MRRC_OP_EVENT ? -EPROTO :
								   c[i].status);
		n -= k;
	}
}

static void post_wrs(struct mrrc_wr *w, unsigned int n)
{
	int ret = mrrc_post(pp.cfd, w, n, NULL);

	if (ret)
		die("post", ret);
}

enum post_kind { POST_HELD, POST_HIT, POST_MISS };
static const char *const post_name[] = { "post_held", "hit_in_post",
					 "miss_in_post" };
/* The held POSTs measured beside each kind, by that kind. */
static const char *const held_name[] = { NULL, "post_held",
					 "post_held_beside_miss" };

/* Every held buffer released and every unheld region flushed. */
static void post_cleanup(uint32_t *held, unsigned int n)
{
	int ret = mrrc_release(pp.cfd, held, n);

	if (ret != (int)n)
		die("release", ret < 0 ? ret : -EPROTO);
	ret = mrrc_flush(pp.cfd);
	if (ret < 0)
		die("flush", ret);
}

/* The client's cache policy from now on. */
static void set_policy(uint32_t policy)
{
	struct mrrc_cache_config cfg = {
		.size = sizeof(cfg), .policy = policy,
	};
	int ret = mrrc_cache_config(pp.cfd, &cfg);

	if (ret)
		die("policy", ret);
}

/* The next @batch buffers of @mbuf for misses, taken in turn. */
#define MISS_SLOTS 4096
static void next_misses(struct mrrc_wr *w, unsigned int batch, char *mbuf,
			unsigned int *slot)
{
	for (unsigned int k = 0; k < batch; k++, (*slot)++)
		w[k].addr = (uintptr_t)mbuf +
			    (uintptr_t)(*slot % MISS_SLOTS) * 8192;
}

/*
 * @batch WRITEs of 4 KiB from distinct buffers in one POST; the ioctl's
 * time divided by @batch, completions reaped outside it:
 *   held  buffers of @hbuf registered once and held, the handle in the WR
 *   hit   other buffers of @hbuf, cached: handle 0, one lookup each
 *   miss  handle 0, buffers of @mbuf taken in turn from MISS_SLOTS: each
 *         was evicted long before it comes round again (the cache holds
 *         at most 1024 regions, and is filled before the measurement), so
 *         each operation registers its buffer on the way, in a full
 *         cache, which evicts one region per miss: LRU for this pass
 *         (MRE's round would evict every unheld region at once, once per
 *         thousand misses, and most misses would find room)
 * Held and @other (hit or miss) are interleaved, one POST of each per
 * round in alternating order, so that what drifts in the emulated machine
 * (the POST itself carries the WRITE through rxe inline on some kernels
 * and costs far more than a lookup) drifts for both alike.  Hits are not
 * measured beside misses: the background work a miss's eviction leaves
 * would be charged to whichever POST comes next.  r[POST_HELD] and
 * r[@other] are filled in.
 */
static void post_cost(unsigned int batch, enum post_kind other, char *hbuf,
		      char *mbuf, struct result *r)
{
	const enum post_kind kinds[2] = { POST_HELD, other };
	static uint64_t t[3][MAX_ITERS];
	static struct mrrc_wr w[3][64];
	unsigned int i, j, k, n = 0, slot = 0;
	uint32_t held[64] = { 0 };
	uint64_t start;
	int ret;

	for (j = 0; j < 3; j++)
		for (k = 0; k < batch; k++)
			w[j][k] = (struct mrrc_wr){
				.wr_id = k, .conn = pp.cconn,
				.opcode = MRRC_OP_WRITE, .len = 4096,
				.addr = (uintptr_t)hbuf + (j * 64 + k) * 8192,
				.remote_addr = pwin.addr + k * 4096,
				.rkey = pwin.rkey,
			};
	for (k = 0; k < batch; k++) {
		char *b = (char *)(uintptr_t)w[POST_HELD][k].addr;

		ret = reg(pp.cfd, b, 4096, 0, &held[k]);
		if (ret)
			die("hold", ret);
		w[POST_HELD][k].handle = held[k];
		w[POST_HELD][k].flags = MRRC_WR_HANDLE;
	}
	if (other == POST_MISS)
		set_policy(MRRC_POLICY_LRU);
	/* Misses from the first: fill the cache, unmeasured. */
	for (k = 0; other == POST_MISS && k < 1024 / batch + 1; k++) {
		next_misses(w[POST_MISS], batch, mbuf, &slot);
		post_wrs(w[POST_MISS], batch);
		reap_ops(batch);
	}
	start = now_ns();
	for (i = 0; i < MAX_ITERS + 5; i++) {
		for (j = 0; j < 2; j++) {
			enum post_kind kind = kinds[(i + j) % 2];
			uint64_t t0;

			if (kind == POST_MISS)
				next_misses(w[kind], batch, mbuf, &slot);
			t0 = now_ns();
			post_wrs(w[kind], batch);
			/* The first rounds register the hit buffers. */
			if (i >= 5)
				t[kind][n] = (now_ns() - t0) / batch;
			reap_ops(batch);
		}
		if (i >= 5)
			n++;
		if (n >= MIN_ITERS && now_ns() - start > 2 * BUDGET_NS)
			break;
	}
	post_cleanup(held, batch);
	set_policy(MRRC_POLICY_MRE);
	for (j = 0; j < 2; j++)
		r[kinds[j]] = summarize(t[kinds[j]], n);
}

/*
 * A buffer made usable and written once, to completion, as the
 * application sees it: a miss inside the POST (fast mode, the cache
 * flushed before), against an ordinary registration (ib_reg_user_mr)
 * followed by the same write.  The deregistration is left out of both.
 */
static struct result write_cold(int ordinary, char *buf, size_t size)
{
	static uint64_t t[MAX_ITERS];
	struct mrrc_wr w = {
		.conn = pp.cconn, .opcode = MRRC_OP_WRITE,
		.addr = (uintptr_t)buf, .len = size,
		.remote_addr = pwin.addr, .rkey = pwin.rkey,
	};
	unsigned int i, n = 0;
	uint64_t start = now_ns();
	uint32_t h = 0;
	int ret;

	for (i = 0; i < MAX_ITERS + 5; i++) {
		uint64_t t0, t1;

		if (!ordinary) {
			ret = mrrc_flush(pp.cfd);
			if (ret < 0)
				die("flush", ret);
		}
		t0 = now_ns();
		if (ordinary) {
			ret = reg(pp.cfd, buf, size, 0, &h);
			if (ret)
				die("ordinary reg", ret);
			w.handle = h;
			w.flags = MRRC_WR_HANDLE;
		}
		post_wrs(&w, 1);
		reap_ops(1);
		t1 = now_ns();
		if (ordinary)
			mrrc_release(pp.cfd, &h, 1);
		if (i >= 5)
			t[n++] = t1 - t0;
		if (n >= MIN_ITERS && now_ns() - start > BUDGET_NS)
			break;
	}
	return summarize(t, n);
}

/* The lines of one kind of POST beside its held POSTs, at 4 KiB. */
static void post_lines(enum post_kind k, const struct result *r, double ord)
{
	double add = r[k].median - r[POST_HELD].median;

	emit("latency_median", r[POST_HELD].median, "ns", held_name[k], 4096,
	     1, r[POST_HELD].iters);
	emit("latency_median", r[k].median, "ns", post_name[k], 4096, 1,
	     r[k].iters);
	emit("added_latency_median", add, "ns", post_name[k], 4096, 1,
	     r[k].iters);
	emit("added_fraction_of_ordinary", add / ord, "ratio", post_name[k],
	     4096, 1, r[k].iters);
}

/*
 * Module parameter chain_reg for what follows, and the "chain" key of the
 * lines it concerns: a miss's REG_MR on the connection's queue pair ahead
 * of the operation ("on", the default), or waited for on the
 * registration queue pair ("off").  False if the module has no such
 * parameter (then only "on" lines are written: the module's only way).
 */
static bool set_chain(bool on)
{
	int ret = set_param("chain_reg", on ? "Y" : "N");

	if (ret && !on)
		return false;
	cur_keys = on ? ",\"chain\":\"on\"" : ",\"chain\":\"off\"";
	return true;
}

/*
 * miss_write (chain_reg on and off) and ordinary_write at 4-128 KiB (fast,
 * then ordinary).
 */
static void cold_writes(char *buf)
{
	static const size_t wsizes[] = { 4096, 16384, 65536, 131072 };
	struct result m[2][4], o;
	unsigned int s, on, ran[2] = { 0 };

	for (on = 2; on-- > 0;) {
		if (!set_chain(on))
			continue;
		ran[on] = 1;
		for (s = 0; s < 4; s++) {
			m[on][s] = write_cold(0, buf, wsizes[s]);
			emit("latency_median", m[on][s].median, "ns",
			     "miss_write", wsizes[s], 1, m[on][s].iters);
		}
	}
	set_chain(true);
	cur_keys = "";
	bench_pair_close(&pp);
	post_pair_open(MRRC_MODE_ORDINARY);
	for (s = 0; s < 4; s++) {
		o = write_cold(1, buf, wsizes[s]);
		emit("latency_median", o.median, "ns", "ordinary_write",
		     wsizes[s], 1, o.iters);
		for (on = 2; on-- > 0;) {
			if (!ran[on])
				continue;
			set_chain(on);
			emit("speedup_vs_ordinary_write",
			     o.median / m[on][s].median, "ratio", "miss_write",
			     wsizes[s], 1, m[on][s].iters);
		}
		set_chain(true);
		cur_keys = "";
	}
	bench_pair_close(&pp);
}

/* POST batches of post_costs() and lockless_costs(). */
static const unsigned int post_batches[] = { 1, 16, 64 };
#define NPOST_BATCHES (sizeof(post_batches) / sizeof(post_batches[0]))

/* The buffers of post_cost(): cached ones, missed ones, the window. */
struct post_bufs {
	char *buf, *mbuf;
};

/* Map them and open a pair in fast mode. */
static struct post_bufs post_setup(void)
{
	struct post_bufs b = {
		.buf = map_populated(64 * STRIDE(131072)),
		.mbuf = map_populated(MISS_SLOTS * 8192),
	};

	pwin_buf = map_populated(POST_WINDOW);
	post_pair_open(MRRC_MODE_FAST);
	return b;
}

/* Unmap them; the pair is the caller's to close. */
static void post_teardown(struct post_bufs *b)
{
	munmap(b->buf, 64 * STRIDE(131072));
	munmap(b->mbuf, MISS_SLOTS * 8192);
	munmap(pwin_buf, POST_WINDOW);
}

/*
 * Lines of mode post_held, hit_in_post, post_held_beside_miss and
 * miss_in_post (4 KiB, batches of 1, 16 and 64; "added" is what the lookup
 * or the registration adds to the held POST measured beside it, per
 * operation, also as a fraction of @ord4k, an ordinary 4 KiB register +
 * release cycle measured in this run), then miss_write and ordinary_write
 * at 4-128 KiB.
 */
static void post_costs(double ord4k)
{
	const unsigned int *batches = post_batches;
	struct post_bufs pb = post_setup();
	char *buf = pb.buf, *mbuf = pb.mbuf;
	struct result r[3];

	for (unsigned int b = 0; b < NPOST_BATCHES; b++) {
		cur_batch = batches[b];
		post_cost(batches[b], POST_HIT, buf, mbuf, r);
		post_lines(POST_HIT, r, ord4k);
		for (int on = 2; on-- > 0;) {
			if (!set_chain(on))
				continue;
			post_cost(batches[b], POST_MISS, buf, mbuf, r);
			post_lines(POST_MISS, r, ord4k);
		}
		set_chain(true);
		cur_keys = "";
	}
	cur_batch = 1;
	cold_writes(buf);
	post_teardown(&pb);
}

/*
 * Threads of one process hitting one context at once, each on 64 cached
 * buffers of its own, 64 per ioctl, for PAR_NS.
 */
#define PAR_NS 400000000ull
struct par_arg {
	int fd;
	char *buf;
	uint64_t hits;
	pthread_barrier_t *go;
};

static void *par_fn(void *p)
{
	struct par_arg *a = p;
	struct mrrc_reg_req reqs[BATCH];
	struct mrrc_seg segs[BATCH];
	uint64_t end = 0;

	for (int round = 0; !round || mono_ns() < end; round++) {
		unsigned int ns = BATCH;
		int ret;

		for (unsigned int k = 0; k < BATCH; k++)
			reqs[k] = (struct mrrc_reg_req){
				.addr = (uintptr_t)a->buf + k * 4096,
				.length = 4096, .access = RW,
				.flags = MRRC_REG_RELEASE,
			};
		ret = mrrc_reg(a->fd, reqs, BATCH, segs, &ns);
		if (ret != BATCH)
			die("parallel hits", ret < 0 ? ret : reqs[ret].status);
		if (!round) {	/* that one registered them */
			pthread_barrier_wait(a->go);
			end = mono_ns() + PAR_NS;
		} else {
			a->hits += BATCH;
		}
	}
	return NULL;
}

/* Hits per second, all @n threads together. */
static double parallel_hits(unsigned int n)
{
	struct par_arg a[8];
	pthread_t th[8];
	pthread_barrier_t go;
	uint64_t hits = 0;
	int fd;

	fd = open_ctx(MRRC_MODE_FAST, MRRC_POLICY_MRE, 65536, 1024);
	pthread_barrier_init(&go, NULL, n);
	for (unsigned int i = 0; i < n; i++) {
		a[i] = (struct par_arg){ .fd = fd, .go = &go,
					 .buf = map_populated(BATCH * 4096) };
		if (pthread_create(&th[i], NULL, par_fn, &a[i]))
			die("pthread_create", -EAGAIN);
	}
	for (unsigned int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		hits += a[i].hits;
		munmap(a[i].buf, BATCH * 4096);
	}
	pthread_barrier_destroy(&go);
	close(fd);
	return hits * 1e9 / PAR_NS;
}

/*
 * Hits with module parameter lockless_hit on and off, in the same run
 * (key "lockless", and "round": on, off, then off, on, so that drift
 * shows): one per ioctl with 10 and 1 000 regions cached, 64 per ioctl,
 * and inside a POST of 1, 16 and 64 WRITEs.
 */
static void lockless_costs(double ord4k)
{
	const unsigned int *batches = post_batches;
	struct post_bufs pb = post_setup();
	char *buf = pb.buf, *mbuf = pb.mbuf;
	static char keys[64];
	struct result r[3];

	for (unsigned int round = 1; round <= 2; round++) {
		for (unsigned int k = 0; k < 2; k++) {
			bool on = (round == 1) == (k == 0);
			struct result h, b;
			int ret;

			ret = set_param("lockless_hit", on ? "Y" : "N");
			if (ret) {
				fprintf(stderr, "bench_reg: lockless_hit: %s: no lockless lines\n",
					strerror(-ret));
				goto out;
			}
			snprintf(keys, sizeof(keys),
				 ",\"lockless\":\"%s\",\"round\":%u",
				 on ? "on" : "off", round);
			cur_keys = keys;
			cur_batch = 1;
			for (unsigned int n = 10; n <= 1000; n *= 100) {
				h = hit_latency(n);
				emit("hit_latency_median", h.median, "ns",
				     "cached", 4096, n, h.iters);
				emit("hit_fraction_of_ordinary", h.median / ord4k,
				     "ratio", "cached", 4096, n, h.iters);
			}
			b = batched_hits(4096);
			cur_batch = BATCH;
			emit("latency_median", b.median, "ns", "cached", 4096, 1,
			     b.iters);
			emit("hit_fraction_of_ordinary", b.median / ord4k,
			     "ratio", "cached", 4096, 1, b.iters);
			for (unsigned int j = 0; j < NPOST_BATCHES; j++) {
				cur_batch = batches[j];
				post_cost(batches[j], POST_HIT, buf, mbuf, r);
				post_lines(POST_HIT, r, ord4k);
			}
			cur_batch = BATCH;
			for (unsigned int t = 1; t <= 2; t++) {
				double hps = parallel_hits(t);

				snprintf(keys, sizeof(keys),
					 ",\"lockless\":\"%s\",\"round\":%u,\"threads\":%u",
					 on ? "on" : "off", round, t);
				emit("hits_per_second", hps, "1/s", "cached", 4096,
				     BATCH * t, PAR_NS / 1000000);
			}
		}
	}
out:
	set_param("lockless_hit", "Y");
	cur_keys = "";
	cur_batch = 1;
	bench_pair_close(&pp);
	post_teardown(&pb);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 4096, 16384, 65536, 131072, 262144,
					1048576 };
	static const unsigned long nregs[] = { 10, 1000, 100000 };
	struct result r[NMODES], h[3];
	double ord4k = 0;
	int op;

	op = bench_options(argc, argv, "bench_reg", " [post | lockless]",
			   "  post      only the registrations inside a POST\n"
			   "            (and the ordinary 4 KiB register + release\n"
			   "            cycle they are compared with)\n"
			   "  lockless  only hits with module parameter\n"
			   "            lockless_hit on and off (and the same\n"
			   "            ordinary cycle)\n", 1);
	timer_init();
	if (op < argc) {
		bool post = !strcmp(argv[op], "post");

		if (!post && strcmp(argv[op], "lockless")) {
			fprintf(stderr, "bench_reg: %s: not an operand (post, lockless)\n",
				argv[op]);
			return 2;
		}
		r[ORDINARY] = measure(ORDINARY, 4096);
		emit("latency_median", r[ORDINARY].median, "ns", "ordinary",
		     4096, 1, r[ORDINARY].iters);
		if (post)
			post_costs(r[ORDINARY].median);
		else
			lockless_costs(r[ORDINARY].median);
		return 0;
	}
	fit_costs(MRRC_MODE_ORDINARY, "ordinary");
	fit_costs(MRRC_MODE_FAST, "fast");
	batched_dereg(MRRC_MODE_ORDINARY, "ordinary");
	batched_dereg(MRRC_MODE_FAST, "fast");
	for (unsigned int s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (int m = 0; m < NMODES; m++) {
			if (m == OVERLAP && sizes[s] < 2 * 4096)
				continue;
			r[m] = measure(m, sizes[s]);
			if (m == ORDINARY && sizes[s] == 4096)
				ord4k = r[m].median;
			emit("latency_median", r[m].median, "ns", mode_name[m],
			     sizes[s], 1, r[m].iters);
			emit("latency_mean", r[m].mean, "ns", mode_name[m],
			     sizes[s], 1, r[m].iters);
		}
		{
			struct result b = batched_hits(sizes[s]);

			cur_batch = BATCH;
			emit("latency_median", b.median, "ns", "cached", sizes[s],
			     1, b.iters);
			emit("latency_mean", b.mean, "ns", "cached", sizes[s], 1,
			     b.iters);
			emit("speedup_vs_ordinary", r[ORDINARY].median / b.median,
			     "ratio", "cached", sizes[s], 1, b.iters);
			cur_batch = 1;
		}
		for (int m = FAST; m < NMODES; m++)
			if (m != OVERLAP || sizes[s] >= 2 * 4096)
				emit("speedup_vs_ordinary",
				     r[ORDINARY].median / r[m].median, "ratio",
				     mode_name[m], sizes[s], 1, r[m].iters);
	}
	for (int k = 0; k < 3; k++) {
		h[k] = hit_latency(nregs[k]);
		emit("hit_latency_median", h[k].median, "ns", "cached", 4096,
		     nregs[k], h[k].iters);
		emit("hit_latency_mean", h[k].mean, "ns", "cached", 4096,
		     nregs[k], h[k].iters);
		emit("hit_latency_ratio_vs_10", h[k].median / h[0].median,
		     "ratio", "cached", 4096, nregs[k], h[k].iters);
	}
	evict_churn();
	post_costs(ord4k);
	lockless_costs(ord4k);
	return 0;
}
