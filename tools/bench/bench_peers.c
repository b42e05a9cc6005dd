// SPDX-License-Identifier: GPL-2.0-only
/*
 * BENCH=peers: a registration-heavy workload through mrrc and through UCX
 * (Debian's UCX 1.13, ucp_put_nbx over rc_verbs) on the same RDMA device.
 *
 * The sender owns NBUF buffers of each size (4 KiB, 64 KiB, 1 MiB), each
 * its own anonymous mapping, and RDMA-writes each of them to the
 * receiver's window, one operation outstanding at a time:
 *
 *   steady  one unmeasured warm-up round, then ROUNDS measured rounds over
 *           the same buffers (new contents every round, same mappings)
 *   churn   ROUNDS rounds in which every buffer is unmapped and mapped
 *           again at the same address (MAP_FIXED) with new contents
 *           before it is written: a registration cache that missed the
 *           unmap would send the old pages
 *
 * After each write completes, the receiver compares its window with what
 * the sender's buffer held when the write was posted; a difference counts
 * as a stale hit.  The window is then poisoned, so a write that moved
 * nothing is caught too.
 *
 * Systems, each in a child process of its own (so that UCX's memory hooks
 * never see the mrrc runs):
 *
 *   mrrc  cache on   two contexts of the process connected over the device
 *                    (as in mrrc_ops), the module's default policy
 *   mrrc  cache off  the same with MRRC_POLICY_NONE
 *   ucx   cache on   two UCP workers of one context, connected through a
 *                    ucp_listener (RDMA CM), UCX_TLS=rc_verbs
 *   ucx   cache off  the same with UCX_RCACHE_ENABLE=n and
 *                    UCX_IB_REG_METHODS=direct
 *
 * UCX's defaults decide how a put moves (copied through its pre-registered
 * bounce buffers below its zero-copy threshold, 16 KiB on rxe; registered
 * through its cache above); its TLS and device can be overridden with the
 * usual UCX_TLS and UCX_NET_DEVICES.  The UD transport is left out by
 * default: UCX 1.13 drops every UD packet rxe delivers on a RoCEv2 IPv4
 * GID (Documentation/benchmarks.rst, "Against UCX").
 *
 * Per system, cache, phase and size one JSON line: throughput_mbps (bytes
 * over the time of the operations, plus the unmap and map in churn),
 * latency_p50_ns and latency_p99_ns (post to completion of one write),
 * remap_p50_ns (churn: munmap + mmap), stale_hits, pinned_pages (the most
 * pages the process had pinned, VmPin, between operations), and for mrrc
 * the cache's misses and invalidations in the phase.
 *
 * The four systems run in turn, and the whole round of them REPS times
 * (key "rep"), so that a slow stretch of the emulated machine does not
 * fall on one system only; the tables take the median over the runs.
 *
 * usage: bench_peers [-d DEV] [ROUNDS [NBUF [REPS]]]: on RDMA device DEV
 * (default $MRRC_DEV, else rxe0), whose network device has the address
 * 10.211.0.1.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <ucp/api/ucp.h>

#include "benchconn.h"
#include "benchjson.h"
#include "libmrrc.h"

#define MRRC_PORT	18600
#define UCX_PORT	18640
#define MAX_SIZE	(1u << 20)
#define MAX_NBUF	64

static const size_t sizes[] = { 4096, 65536, MAX_SIZE };

static unsigned int rounds = 16, nbuf = 16, reps = 3, rep;

/* One system under test: set up, write one buffer, tear down. */
struct sys {
	const char *name, *cache;
	int (*setup)(void);
	int (*write)(void *src, size_t len);	/* to the window, completed */
	void (*stats)(uint64_t *miss, uint64_t *inval);	/* may be NULL */
	uint8_t *window;			/* the receiver's, MAX_SIZE */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/* Pages the process has pinned now (VmPin in /proc/self/status). */
static uint64_t pinned_pages(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb / 4;
}

static void fill(void *buf, size_t len, uint64_t seed)
{
	uint64_t *w = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		w[i] = seed * 0x9e3779b97f4a7c15ull + i;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, unsigned int n, unsigned int p)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(size_t)(n - 1) * p / 100];
}

/* ---- mrrc ------------------------------------------------------------- */

static int sfd = -1, cfd = -1;
static uint32_t cconn;
static struct mrrc_seg rseg;
static uint8_t *mwin;
static uint32_t mrrc_policy;

static int mrrc_setup(void)
{
	struct mrrc_cache_config cfg = {
		.size = sizeof(cfg), .policy = mrrc_policy,
	};
	struct bench_pair pr;
	unsigned int n = 1;
	uint32_t xid;
	int r;

	r = bench_pair_open(&pr, MRRC_PORT + mrrc_policy, &cfg);
	if (r)
		return r;
	sfd = pr.sfd;
	cfd = pr.cfd;
	cconn = pr.cconn;
	mwin = aligned_alloc(4096, MAX_SIZE);
	if (!mwin)
		return -ENOMEM;
	memset(mwin, 0, MAX_SIZE);
	/* The receiver's window, exported to the sender once for the run. */
	return mrrc_export(sfd, mwin, MAX_SIZE, MRRC_ACCESS_REMOTE_WRITE,
			   &pr.sconn, 1, &rseg, &n, &xid);
}

static int mrrc_write(void *src, size_t len)
{
	struct mrrc_wr w = {
		.wr_id = 1, .conn = cconn, .opcode = MRRC_OP_WRITE,
		.addr = (uintptr_t)src, .len = len,
		.remote_addr = rseg.addr, .rkey = rseg.rkey,
	};
	struct mrrc_cqe c;
	int n, r;

	r = mrrc_post(cfd, &w, 1, NULL);
	if (r)
		return r;
	do {
		n = mrrc_poll_cq(cfd, &c, 1);
	} while (!n);
	if (n < 0)
		return n;
	return c.status ? -EIO : 0;
}

static void mrrc_stats(uint64_t *miss, uint64_t *inval)
{
	struct mrrc_cache_stats st = { .size = sizeof(st) };

	if (mrrc_cache_stats(cfd, &st))
		return;
	*miss = st.miss + st.overlap;
	*inval = st.invalidations;
}

/* ---- UCX -------------------------------------------------------------- */

static ucp_context_h uctx;
static ucp_worker_h uw[2];	/* 0: sender, 1: receiver */
static ucp_ep_h uep, userver_ep;
static ucp_rkey_h urkey;
static uint8_t *uwin;
static ucs_status_t ucx_ep_status = UCS_OK;

static void ucx_progress(void)
{
	ucp_worker_progress(uw[0]);
	ucp_worker_progress(uw[1]);
}

static void ucx_err(void *arg, ucp_ep_h ep, ucs_status_t st)
{
	(void)arg;
	(void)ep;
	ucx_ep_status = st;
}

static void ucx_conn(ucp_conn_request_h req, void *arg)
{
	ucp_ep_params_t p = {
		.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST |
			      UCP_EP_PARAM_FIELD_ERR_HANDLER |
			      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
		.conn_request = req,
		.err_handler = { .cb = ucx_err },
		.err_mode = UCP_ERR_HANDLING_MODE_PEER,
	};

	(void)arg;
	if (ucp_ep_create(uw[1], &p, &userver_ep) != UCS_OK)
		ucx_ep_status = UCS_ERR_UNREACHABLE;
}

/* Wait for @r (a request, NULL or an error) to complete. */
static ucs_status_t ucx_wait(ucs_status_ptr_t r)
{
	ucs_status_t st;

	if (!UCS_PTR_IS_PTR(r))
		return UCS_PTR_STATUS(r);
	do {
		ucx_progress();
		st = ucp_request_check_status(r);
	} while (st == UCS_INPROGRESS && ucx_ep_status == UCS_OK);
	ucp_request_free(r);
	return ucx_ep_status != UCS_OK ? ucx_ep_status : st;
}

static int ucx_fail(const char *what, ucs_status_t st)
{
	fprintf(stderr, "bench_peers: ucx: %s: %s\n", what,
		ucs_status_string(st));
	return -EIO;
}

static int ucx_setup(void)
{
	ucp_params_t p = { .field_mask = UCP_PARAM_FIELD_FEATURES,
			   .features = UCP_FEATURE_RMA };
	ucp_worker_params_t wp = {
		.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
		.thread_mode = UCS_THREAD_MODE_SINGLE,
	};
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(UCX_PORT) };
	ucp_listener_params_t lp = {
		.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR |
			      UCP_LISTENER_PARAM_FIELD_CONN_HANDLER,
		.sockaddr = { .addr = (struct sockaddr *)&sin,
			      .addrlen = sizeof(sin) },
		.conn_handler = { .cb = ucx_conn },
	};
	ucp_ep_params_t ep = {
		.field_mask = UCP_EP_PARAM_FIELD_SOCK_ADDR |
			      UCP_EP_PARAM_FIELD_FLAGS |
			      UCP_EP_PARAM_FIELD_ERR_HANDLER |
			      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
		.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER,
		.sockaddr = { .addr = (struct sockaddr *)&sin,
			      .addrlen = sizeof(sin) },
		.err_handler = { .cb = ucx_err },
		.err_mode = UCP_ERR_HANDLING_MODE_PEER,
	};
	ucp_mem_map_params_t mp = {
		.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
			      UCP_MEM_MAP_PARAM_FIELD_LENGTH,
		.length = MAX_SIZE,
	};
	ucp_request_param_t rp = { .op_attr_mask = 0 };
	char devs[64];
	ucp_listener_h lis;
	ucp_config_t *cfg;
	ucp_mem_h memh;
	ucs_status_t st;
	size_t rklen;
	void *rkbuf;

	/* The environment wins: UCX_TLS, UCX_NET_DEVICES as the user set. */
	snprintf(devs, sizeof(devs), "%s:1", bench_dev());
	setenv("UCX_TLS", "rc_verbs", 0);
	setenv("UCX_NET_DEVICES", devs, 0);
	st = ucp_config_read(NULL, NULL, &cfg);
	if (st != UCS_OK)
		return ucx_fail("ucp_config_read", st);
	st = ucp_init(&p, cfg, &uctx);
	ucp_config_release(cfg);
	if (st != UCS_OK)
		return ucx_fail("ucp_init", st);
	st = ucp_worker_create(uctx, &wp, &uw[0]);
	if (st == UCS_OK)
		st = ucp_worker_create(uctx, &wp, &uw[1]);
	if (st != UCS_OK)
		return ucx_fail("ucp_worker_create", st);
	inet_pton(AF_INET, BENCH_ADDR, &sin.sin_addr);
	st = ucp_listener_create(uw[1], &lp, &lis);
	if (st != UCS_OK)
		return ucx_fail("ucp_listener_create", st);
	st = ucp_ep_create(uw[0], &ep, &uep);
	if (st != UCS_OK)
		return ucx_fail("ucp_ep_create", st);
	/* Connected when a flush completes (the wireup is done). */
	st = ucx_wait(ucp_ep_flush_nbx(uep, &rp));
	if (st != UCS_OK)
		return ucx_fail("connect", st);

	uwin = aligned_alloc(4096, MAX_SIZE);
	if (!uwin)
		return -ENOMEM;
	memset(uwin, 0, MAX_SIZE);
	mp.address = uwin;
	st = ucp_mem_map(uctx, &mp, &memh);
	if (st != UCS_OK)
		return ucx_fail("ucp_mem_map", st);
	st = ucp_rkey_pack(uctx, memh, &rkbuf, &rklen);
	if (st != UCS_OK)
		return ucx_fail("ucp_rkey_pack", st);
	st = ucp_ep_rkey_unpack(uep, rkbuf, &urkey);
	ucp_rkey_buffer_release(rkbuf);
	if (st != UCS_OK)
		return ucx_fail("ucp_ep_rkey_unpack", st);
	return 0;
}

static int ucx_write(void *src, size_t len)
{
	ucp_request_param_t rp = { .op_attr_mask = 0 };
	ucs_status_t st;

	st = ucx_wait(ucp_put_nbx(uep, src, len, (uintptr_t)uwin, urkey, &rp));
	if (st == UCS_OK)
		st = ucx_wait(ucp_ep_flush_nbx(uep, &rp));
	return st == UCS_OK ? 0 : ucx_fail("put", st);
}

/*
 * Cache off: UCX_RCACHE_ENABLE=n, and the IB memory domain told to
 * register directly (its own "rcache" method would otherwise stay).
 */
static int ucx_setup_rcache_off(void)
{
	setenv("UCX_RCACHE_ENABLE", "n", 1);
	setenv("UCX_IB_REG_METHODS", "direct", 1);
	return ucx_setup();
}

static int mrrc_setup_none(void)
{
	mrrc_policy = MRRC_POLICY_NONE;
	return mrrc_setup();
}

/* ---- the workload ----------------------------------------------------- */

struct result {
	uint64_t bytes, time_ns, stale, pinned, miss, inval;
	uint64_t *lat, *remap;
	unsigned int n, nremap;
};

/* One measurement: a JSON line with the configuration's keys. */
static void emit(const struct sys *s, const char *phase, size_t size,
		 const struct result *r, const char *metric, double value,
		 const char *unit)
{
	printf("{\"bench\":\"peers\",\"metric\":\"%s\",\"value\":%.1f,"
	       "\"unit\":\"%s\",\"system\":\"%s\",\"cache\":\"%s\","
	       "\"phase\":\"%s\",\"size_bytes\":%zu,\"buffers\":%u,"
	       "\"rounds\":%u,\"ops\":%u,\"rep\":%u", metric, value, unit,
	       s->name, s->cache, phase, size, nbuf, rounds, r->n, rep);
	bench_json_end(stdout);
}

static void report(const struct sys *s, const char *phase, size_t size,
		   struct result *r)
{
	emit(s, phase, size, r, "throughput_mbps",
	     r->time_ns ? r->bytes * 1e3 / r->time_ns : 0.0, "MB/s");
	emit(s, phase, size, r, "latency_p50_ns", pct(r->lat, r->n, 50), "ns");
	emit(s, phase, size, r, "latency_p99_ns", pct(r->lat, r->n, 99), "ns");
	if (r->nremap)
		emit(s, phase, size, r, "remap_p50_ns",
		     pct(r->remap, r->nremap, 50), "ns");
	if (s->stats) {
		emit(s, phase, size, r, "misses", r->miss, "count");
		emit(s, phase, size, r, "invalidations", r->inval, "count");
	}
	emit(s, phase, size, r, "stale_hits", r->stale, "count");
	emit(s, phase, size, r, "pinned_pages", r->pinned, "pages");
}

/*
 * One phase at one size over @bufs: @warm unmeasured rounds, then
 * `rounds` measured ones; @churn remaps every buffer before its write.
 */
static int phase(const struct sys *s, uint8_t **bufs, size_t size,
		 int churn, unsigned int warm, uint64_t *gen,
		 struct result *r)
{
	uint64_t t0, t1, t2, m0 = 0, i0 = 0, m1 = 0, i1 = 0, p;
	unsigned int round, b;
	int ret;

	memset(r, 0, sizeof(*r));
	r->lat = calloc((size_t)rounds * nbuf, sizeof(uint64_t));
	r->remap = calloc((size_t)rounds * nbuf, sizeof(uint64_t));
	if (!r->lat || !r->remap)
		return -ENOMEM;
	for (round = 0; round < warm + rounds; round++) {
		int measured = round >= warm;

		if (round == warm && s->stats)
			s->stats(&m0, &i0);
		for (b = 0; b < nbuf; b++) {
			t0 = now_ns();
			if (churn) {
				if (munmap(bufs[b], size) ||
				    mmap(bufs[b], size, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
					 -1, 0) != bufs[b])
					return -errno;
			}
			t1 = now_ns();
			fill(bufs[b], size, ++*gen);
			t2 = now_ns();
			ret = s->write(bufs[b], size);
			if (ret)
				return ret;
			if (!measured)
				continue;
			r->lat[r->n++] = now_ns() - t2;
			r->time_ns += now_ns() - t2 + (t1 - t0);
			if (churn)
				r->remap[r->nremap++] = t1 - t0;
			r->bytes += size;
			if (memcmp(s->window, bufs[b], size))
				r->stale++;
			memset(s->window, 0, size);
			p = pinned_pages();
			if (p > r->pinned)
				r->pinned = p;
		}
	}
	if (s->stats) {
		s->stats(&m1, &i1);
		r->miss = m1 - m0;
		r->inval = i1 - i0;
	}
	return 0;
}

static int run(struct sys *s)
{
	uint8_t *bufs[MAX_NBUF];
	struct result r;
	uint64_t gen = 0;
	unsigned int si, b;
	int ret;

	ret = s->setup();
	if (ret) {
		fprintf(stderr, "bench_peers: %s cache %s: setup on %s: %s\n",
			s->name, s->cache, bench_dev(), strerror(-ret));
		return 1;
	}
	s->window = s->setup == mrrc_setup || s->setup == mrrc_setup_none ?
		    mwin : uwin;
	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t size = sizes[si];

		for (b = 0; b < nbuf; b++) {
			bufs[b] = mmap(NULL, size, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (bufs[b] == MAP_FAILED)
				return perror("bench_peers: mmap"), 1;
		}
		ret = phase(s, bufs, size, 0, 1, &gen, &r);
		if (!ret) {
			report(s, "steady", size, &r);
			free(r.lat);
			free(r.remap);
			ret = phase(s, bufs, size, 1, 0, &gen, &r);
		}
		if (ret) {
			fprintf(stderr, "bench_peers: %s cache %s, %zu bytes: %s\n",
				s->name, s->cache, size, strerror(-ret));
			return 1;
		}
		report(s, "churn", size, &r);
		free(r.lat);
		free(r.remap);
		for (b = 0; b < nbuf; b++)
			munmap(bufs[b], size);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct sys systems[] = {
		{ "mrrc", "on", mrrc_setup, mrrc_write, mrrc_stats, NULL },
		{ "mrrc", "off", mrrc_setup_none, mrrc_write, mrrc_stats, NULL },
		{ "ucx", "on", ucx_setup, ucx_write, NULL, NULL },
		{ "ucx", "off", ucx_setup_rcache_off, ucx_write, NULL, NULL },
	};
	const unsigned int nsys = sizeof(systems) / sizeof(systems[0]);
	unsigned int i;
	int arg, st, failed = 0;
	pid_t pid;

	arg = bench_options(argc, argv, "bench_peers", " [ROUNDS [NBUF [REPS]]]",
			    "  ROUNDS  measured rounds per phase (default 16)\n"
			    "  NBUF    buffers of each size (default 16)\n"
			    "  REPS    runs of every system, in turn (default 3)\n",
			    3);
	if (arg < argc)
		rounds = bench_opt_u64("bench_peers", "ROUNDS", argv[arg++],
				       1, 1000);
	if (arg < argc)
		nbuf = bench_opt_u64("bench_peers", "NBUF", argv[arg++], 1,
				     MAX_NBUF);
	if (arg < argc)
		reps = bench_opt_u64("bench_peers", "REPS", argv[arg++], 1, 100);
	for (i = 0; i < reps * nsys; i++) {
		struct sys *s = &systems[i % nsys];

		rep = i / nsys;
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return perror("bench_peers: fork"), 1;
		if (!pid)
			_exit(run(s));
		if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st)) {
			fprintf(stderr, "bench_peers: %s cache %s failed\n",
				s->name, s->cache);
			failed = 1;
		}
	}
	return failed;
}
