// SPDX-License-Identifier: GPL-2.0-only
/*
 * bm fix: the buffer manager's frame pool under a database's load (issue
 * 18's BENCH=bm, after the Redy paper's FASTER experiment): Zipf page
 * accesses, some of them writes, over a working set larger than the
 * frames, with the pages kept in a tier that is either a local file, a
 * Redy cache (remote memory over the module, created from that file), a
 * file another node serves (bm fserve), or a local file with mrrcd's
 * memory in front of it (-t mrrcd over TCP, -t mrrcd_rdma over the
 * module: write-through, pages read one-sidedly where the daemon allows).
 *
 * Every page begins with its number and a version; a write FIXes the page
 * exclusively, bumps the version and UNFIXes it dirty.  Every FIX checks
 * the page it got against the versions the run wrote, and after the run
 * and a flush every page is read back from the tier and checked: a run
 * that loses or misplaces a write exits 1 (-L makes the tier drop every
 * write, to show that it does).  Timing is measured, never asserted.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "benchjson.h"
#include "bm.h"
#include "cache.h"
#include "kvclient.h"
#include "pool.h"
#include "rfile.h"

#define PROG "bm fix"
#define RF_CONNS	4u	/* connections to a file server, one per thread */

struct run {
	const char *tier;		/* "file", "remote", "rfile", "rfile_rdma(_rw)" */
	const char *path;		/* the pages' file */
	const char *fs;			/* what the file is on (a key only) */
	const char *mgr;		/* remote: the cache manager */
	unsigned int mgr_port;		/* (bm_opt_addr(): at most 65535) */
	unsigned int frames;
	size_t page_size;
	unsigned int ws;		/* pages = frames * ws */
	unsigned int write_pct;
	double theta;
	uint64_t ops, seed;
	uint64_t pages;
	int fd;
	struct redy_cache *cache;
	bool served;			/* a file server's file (rfile*) */
	struct rfile *rf[RF_CONNS];	/* and a connection to it per thread */
	unsigned int nrf;		/* connections: min(threads, RF_CONNS) */
	const char *rf_addr;
	unsigned int rf_port;
	uint64_t *version;		/* what the run wrote, per page */
	uint64_t tier_reads, tier_writes;	/* (atomic) */
	bool lose_writes;		/* -L: a tier that drops them (tests) */
	/* -t mrrcd*: the daemon in front of the file (under tier_lock) */
	struct kvc *kv;
	const char *kv_addr;
	unsigned int kv_port;
	char kv_prefix[48];		/* this run's keys: PREFIX:PAGE */
	bool kv_off;			/* given up: the file alone from then */
	uint64_t kv_hits, kv_misses;
	uint64_t kv_torn;	/* one-sided GETs torn for good: GET instead */
	uint32_t *kv_wseq;	/* per page: writes so far, its copy's flags */
	uint64_t kv_stale;	/* copies found with older flags: not used */
	bool kv_keep_stale;	/* -D (tests): writes leave the copy alone */
	unsigned int threads;		/* -j: FIXing at once */
	/* a Redy cache, and each connection to a file server, one thread's */
	pthread_mutex_t tier_lock, rf_lock[RF_CONNS];
	int stop;			/* (atomic) a thread failed */
};

/* The calling thread's connection to a file server (0: the main thread's) */
static __thread unsigned int my_conn;

/* Page @page read from, or written to, wherever the run keeps its pages. */
static int page_io(struct run *r, bool write, uint64_t page, void *buf)
{
	struct rfile *f = r->rf[my_conn];
	uint64_t off = page * r->page_size;

	if (f)
		return write ? rfile_write(f, off, buf, r->page_size) :
			       rfile_read(f, off, buf, r->page_size);
	if (r->cache)
		return write ? redy_cache_write(r->cache, off, buf, r->page_size) :
			       redy_cache_read(r->cache, off, buf, r->page_size);
	return bm_file_io(r->fd, write, off, buf, r->page_size);
}

/* mrrcd failed: from now on the file alone (it has every page). */
static void kv_give_up(struct run *r, const char *what, int err)
{
	fprintf(stderr, PROG ": mrrcd: %s: %s; the file alone from now on\n", what,
		strerror(-err));
	r->kv_off = true;
}

/*
 * mrrcd in front of the file, write-through: the file is written first
 * and always holds the page; the daemon's copy is replaced, or deleted if
 * that fails (and if that fails too, the daemon is not asked again: a
 * copy it may still hold is never read).  A read the daemon has is not
 * read from the file; a miss (never stored, or evicted) is, and stored.
 * Each copy carries, as its flags, how many times the page had been
 * written when it was stored: a copy with other flags (a SET the daemon
 * acknowledged and lost, an old copy served again) is not used, and is
 * replaced from the file.  A copy with the right flags and a wrong
 * header fails the run's check of the page's header at each FIX.
 */
static int kv_io(struct run *r, bool write, uint64_t page, void *buf)
{
	const char *val;
	uint32_t flags;
	char key[80];
	size_t len;
	int err;

	snprintf(key, sizeof(key), "%s:%" PRIu64, r->kv_prefix, page);
	if (!write && !r->kv_off) {
		err = r->kv->rem_ok ? kvc_oget(r->kv, key, &val, &len, &flags) :
				      kvc_get(r->kv, key, &val, &len, &flags);
		if (err == -EAGAIN && r->kv->rem_ok) {
			/* Torn every time (SETs racing): ask the daemon. */
			r->kv_torn++;
			err = kvc_get(r->kv, key, &val, &len, &flags);
		}
		if (!err && len == r->page_size && flags == r->kv_wseq[page]) {
			memcpy(buf, val, len);
			r->kv_hits++;
			return 0;
		}
		if (!err && len == r->page_size) {
			r->kv_stale++;	/* an older copy: the file's, then */
			err = -ENOENT;
		}
		if (!err)
			err = -EPROTO;	/* not a page of this run's */
		if (err != -ENOENT)
			kv_give_up(r, "a GET", err);
		r->kv_misses++;
	}
	if (write)
		r->kv_wseq[page]++;
	err = page_io(r, write, page, buf);
	if (err || r->kv_off || (write && r->kv_keep_stale))
		return err;
	err = kvc_store(r->kv, "set", key, buf, r->page_size,
			r->kv_wseq[page], 0);
	if (err) {
		int e = kvc_delete(r->kv, key);

		if (e && e != -ENOENT)
			kv_give_up(r, "a SET, then its DELETE", e);
	}
	return 0;
}

/*
 * The pool calls the tier from every thread: a file's calls go at once, a
 * file server's over the thread's connection (shared by threads k and k +
 * RF_CONNS), a Redy cache's and mrrcd's one at a time.
 */
static int tier_io(struct run *r, bool write, uint64_t page, void *buf)
{
	pthread_mutex_t *lock = r->served ? &r->rf_lock[my_conn] :
				r->cache || r->kv ? &r->tier_lock : NULL;
	int err;

	if (!lock)
		return page_io(r, write, page, buf);
	pthread_mutex_lock(lock);
	err = r->kv ? kv_io(r, write, page, buf) : page_io(r, write, page, buf);
	pthread_mutex_unlock(lock);
	return err;
}

static int tier_read(void *arg, uint64_t page, void *buf)
{
	struct run *r = arg;

	__atomic_add_fetch(&r->tier_reads, 1, __ATOMIC_RELAXED);
	return tier_io(r, false, page, buf);
}

static int tier_write(void *arg, uint64_t page, const void *buf)
{
	struct run *r = arg;

	__atomic_add_fetch(&r->tier_writes, 1, __ATOMIC_RELAXED);
	if (r->lose_writes)
		return 0;
	return tier_io(r, true, page, (void *)buf);
}

/* A page as the run left it: its number, its version, then filler. */
static void page_fill(uint8_t *buf, size_t len, uint64_t page, uint64_t version)
{
	size_t i;

	for (i = 16; i < len; i++)
		buf[i] = (uint8_t)(page * 31 + i);
	memcpy(buf, &page, 8);
	memcpy(buf + 8, &version, 8);
}

static bool page_ok(const struct run *r, const uint8_t *buf, uint64_t page)
{
	uint64_t p, v;

	memcpy(&p, buf, 8);
	memcpy(&v, buf + 8, 8);
	if (p == page && v == r->version[page])
		return true;
	fprintf(stderr, PROG ": page %" PRIu64 " holds page %" PRIu64 " version %"
		PRIu64 ", expected version %" PRIu64 "\n", page, p, v, r->version[page]);
	return false;
}

/*
 * The file the pages begin in, every page at version 0 (rfile: the file
 * server's, written through it).
 */
static int populate(struct run *r)
{
	uint8_t *buf = malloc(r->page_size);
	uint64_t i;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	if (!r->served) {
		r->fd = open(r->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (r->fd < 0) {
			err = -errno;
			fprintf(stderr, PROG ": %s: %s\n", r->path, strerror(errno));
			goto out;
		}
	}
	/* (no Redy cache yet: it is made from the file) */
	for (i = 0; i < r->pages && !err; i++) {
		page_fill(buf, r->page_size, i, 0);
		err = page_io(r, true, i, buf);
	}
	if (!err && !r->served && fsync(r->fd))
		err = -errno;
	if (err && r->served)
		fprintf(stderr, PROG ": writing the file at %s:%u: %s\n",
			r->rf_addr, r->rf_port, strerror(-err));
	else if (err)
		fprintf(stderr, PROG ": writing %s: %s\n", r->path, strerror(-err));
out:
	free(buf);
	return err;
}

/* One thread of the load: its share of the operations, its own stream. */
struct worker {
	struct run *r;
	struct bm_pool *pool;
	const struct bm_zipf *z;
	const uint64_t *perm;
	uint64_t *lat, ops, seed;
	unsigned int conn;		/* its connection to a file server */
	pthread_t thread;
	int err;
};

/*
 * A write FIXes its page exclusively, so that the version it bumps
 * (r->version) is the run's only one: every FIX, shared or not, finds
 * the page's bytes at the version last UNFIXed dirty.
 */
static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->r;
	uint64_t i, s = w->seed;
	int err = 0;

	my_conn = w->conn;
	for (i = 0; i < w->ops && !__atomic_load_n(&r->stop, __ATOMIC_RELAXED); i++) {
		uint64_t page = w->perm[bm_zipf_next(w->z, &s)], a;
		bool write = bm_rnd(&s) % 100 < r->write_pct, ok;
		void *frame;

		a = bm_now_ns();
		err = bm_fix_wait(w->pool, page, write, &frame);
		w->lat[i] = bm_now_ns() - a;
		if (err) {
			fprintf(stderr, PROG ": FIX of page %" PRIu64 ": %s\n", page,
				strerror(-err));
			break;
		}
		ok = page_ok(r, frame, page);
		if (ok && write) {
			r->version[page]++;
			page_fill(frame, r->page_size, page, r->version[page]);
		}
		/* unfixed even if wrong: other threads may wait for it */
		err = bm_unfix(w->pool, page, ok && write);
		if (!ok)
			err = -EIO;
		if (err)
			break;
	}
	if (err)
		__atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
	w->err = err;
	return NULL;
}

static int run_load(struct run *r, struct bm_pool *pool, uint64_t *lat,
		    uint64_t *elapsed)
{
	struct worker *w;
	struct bm_zipf z;
	uint64_t *perm, s = r->seed, t0, done = 0;
	unsigned int k, started = 0;
	int err = 0;

	perm = malloc(r->pages * sizeof(*perm));
	w = calloc(r->threads, sizeof(*w));
	if (!perm || !w) {
		free(perm);
		free(w);
		return -ENOMEM;
	}
	/* the popular pages spread over the file, not its first ones */
	bm_shuffle(perm, r->pages, &s);
	bm_zipf_init(&z, r->pages, r->theta);
	t0 = bm_now_ns();
	for (k = 0; k < r->threads; k++) {
		w[k] = (struct worker){ .r = r, .pool = pool, .z = &z, .perm = perm,
					.lat = lat + done,
					.ops = r->ops / r->threads +
					       (k < r->ops % r->threads),
					/*
					 * thread 0 draws the stream -j 1 draws;
					 * the others streams of their own (s +
					 * k * gamma would be thread 0's, k
					 * draws on)
					 */
					.seed = k ? bm_mix64(s + k) : s,
					.conn = r->nrf ? k % r->nrf : 0 };
		done += w[k].ops;
		if (r->threads == 1) {
			worker_run(&w[k]);
		} else if (pthread_create(&w[k].thread, NULL, worker_run, &w[k])) {
			__atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
			err = -EAGAIN;
			break;
		}
		started++;
	}
	for (k = 0; k < started; k++) {
		if (r->threads > 1)
			pthread_join(w[k].thread, NULL);
		err = err ?: w[k].err;
	}
	*elapsed = bm_now_ns() - t0;
	free(w);
	free(perm);
	return err;
}

/* After a flush, every page in the tier is what the run last wrote, whole. */
static int verify_tier(struct run *r)
{
	uint8_t *buf = malloc(r->page_size), *want = malloc(r->page_size);
	uint64_t i;
	int err = 0;

	if (!buf || !want) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < r->pages && !err; i++) {
		err = tier_read(r, i, buf);
		if (err || !page_ok(r, buf, i))
			err = err ?: -EIO;
		page_fill(want, r->page_size, i, r->version[i]);
		if (!err && memcmp(buf, want, r->page_size)) {
			fprintf(stderr, PROG ": page %" PRIu64 ": its bytes are not what was written\n",
				i);
			err = -EIO;
		}
	}
out:
	free(want);
	free(buf);
	return err;
}

static void emit(const struct run *r, const char *metric, double value,
		 const char *unit)
{
	printf("{\"bench\":\"bm\",\"metric\":\"%s\",\"value\":%.6g,\"unit\":\"%s\","
	       "\"tier\":\"%s\",\"file\":", metric, value, unit, r->tier);
	bench_json_str(stdout, r->fs);
	printf(",\"frames\":%u,\"pages\":%" PRIu64 ",\"ws_factor\":%u,\"page_size\":%zu,"
	       "\"write_pct\":%u,\"zipf_theta\":%.3g,\"ops\":%" PRIu64 ",\"seed\":%" PRIu64
	       ",\"threads\":%u",
	       r->frames, r->pages, r->ws, r->page_size, r->write_pct, r->theta,
	       r->ops, r->seed, r->threads);
	if (r->cache) {
		struct redy_cfg cfg;

		redy_cache_config(r->cache, &cfg);
		printf(",\"redy_cfg\":\"s%u c%u b%u q%u\"", cfg.s, cfg.c, cfg.b, cfg.q);
	}
	bench_json_end(stdout);
}

const char *bm_opt_addr(const char *prog, const char *opt, char *arg,
			unsigned int *port)
{
	char *colon = strchr(arg, ':');

	if (colon) {
		*colon = '\0';
		*port = (unsigned int)bench_opt_u64(prog, opt, colon + 1, 1, 65535);
	}
	return arg;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: " PROG " -t file|remote -f FILE [-M ADDR[:PORT]] [-d DEV] [-F FRAMES]\n"
		"       " PROG " -t mrrcd|mrrcd_rdma -f FILE -R ADDR[:PORT] [-d DEV] [-F FRAMES]\n"
		"       " PROG " -t rfile|rfile_rdma|rfile_rdma_rw -R ADDR[:PORT] [-d DEV] [-F FRAMES]\n"
		"  (FILE is created, or emptied: it holds the run's pages; rfile: the\n"
		"   file of bm fserve at ADDR, PORT 7960, written over; rfile_rdma:\n"
		"   its pages read with RDMA READs from the server's export;\n"
		"   rfile_rdma_rw: and written with RDMA WRITEs; mrrcd: FILE with\n"
		"   the mrrcd at ADDR, PORT 11211, in front, over TCP; mrrcd_rdma:\n"
		"   over the module, GETs one-sided)\n"
		"              [-S PAGE_SIZE] [-x WS_FACTOR] [-w WRITE_PCT] [-z THETA]\n"
		"              [-o OPS] [-s SEED] [-j THREADS] [-K FS_NAME] [-L] [-D]\n");
	exit(2);
}

int cmd_fix(int argc, char **argv)
{
	struct run r = {
		.fs = "unknown", .mgr = "127.0.0.1", .mgr_port = 7729,
		.frames = 256, .page_size = 4096, .ws = 4, .write_pct = 10,
		.theta = 0.99, .ops = 100000, .seed = 1, .fd = -1,
		.threads = 1, .tier_lock = PTHREAD_MUTEX_INITIALIZER,
	};
	struct bm_tier tier = { .read = tier_read, .write = tier_write, .arg = &r };
	const char *dev = NULL;
	struct bm_pool_stats st;
	struct bm_pool *pool = NULL;
	uint64_t *lat = NULL, elapsed = 0, i, sum = 0;
	bool mgr_set = false, rf, kv;
	int c, err;

	while ((c = getopt(argc, argv, "t:f:M:R:d:F:S:x:w:z:o:s:j:K:LD")) != -1) {
		switch (c) {
		case 't':
			r.tier = optarg;
			break;
		case 'f':
			r.path = optarg;
			break;
		case 'M':
			mgr_set = true;
			r.mgr = bm_opt_addr(PROG, "-M", optarg, &r.mgr_port);
			break;
		case 'R':
			r.rf_addr = bm_opt_addr(PROG, "-R", optarg, &r.rf_port);
			break;
		case 'd':
			dev = optarg;
			break;
		case 'F':
			r.frames = (unsigned int)bench_opt_u64(PROG, "-F", optarg, 4, 1u << 20);
			break;
		case 'S':
			r.page_size = bench_opt_u64(PROG, "-S", optarg, 16, 1u << 20);
			break;
		case 'x':
			r.ws = (unsigned int)bench_opt_u64(PROG, "-x", optarg, 1, 64);
			break;
		case 'w':
			r.write_pct = (unsigned int)bench_opt_u64(PROG, "-w", optarg, 0, 100);
			break;
		case 'z':
			r.theta = bench_opt_double(PROG, "-z", optarg, 0.01, 0.999);
			break;
		case 'o':
			r.ops = bench_opt_u64(PROG, "-o", optarg, 1, 100000000);
			break;
		case 's':
			r.seed = bench_opt_u64(PROG, "-s", optarg, 0, UINT64_MAX);
			break;
		case 'j':
			r.threads = (unsigned int)bench_opt_u64(PROG, "-j", optarg, 1, 64);
			break;
		case 'K':
			r.fs = optarg;
			break;
		case 'L':
			r.lose_writes = true;
			break;
		case 'D':
			r.kv_keep_stale = true;
			break;
		default:
			usage();
		}
	}
	rf = r.tier && (!strcmp(r.tier, "rfile") || !strcmp(r.tier, "rfile_rdma") ||
			!strcmp(r.tier, "rfile_rdma_rw"));
	kv = r.tier && (!strcmp(r.tier, "mrrcd") || !strcmp(r.tier, "mrrcd_rdma"));
	r.served = rf;
	if (optind != argc || !r.tier ||
	    (kv ? !r.path || !r.rf_addr || mgr_set :
	     !rf ? !r.path || r.rf_addr : !r.rf_addr || r.path || mgr_set) ||
	    (strcmp(r.tier, "file") && strcmp(r.tier, "remote") && !rf && !kv) ||
	    (rf && r.page_size > RFILE_DATA_MAX) || r.threads > r.ops ||
	    (r.kv_keep_stale && !kv))
		usage();
	if (!r.rf_port)		/* -R's port unless given: the tier's */
		r.rf_port = kv ? 11211 : 7960;
	if (kv) {
		r.kv_addr = r.rf_addr;
		r.kv_port = r.rf_port;
		r.rf_addr = NULL;
	}
	bench_init(PROG, dev);
	r.pages = (uint64_t)r.frames * r.ws;
	if (r.pages * r.page_size > (1ull << 32)) {
		fprintf(stderr, PROG ": %" PRIu64 " pages of %zu bytes: more than 4 GiB\n",
			r.pages, r.page_size);
		return 2;
	}
	r.version = calloc(r.pages, sizeof(*r.version));
	lat = malloc(r.ops * sizeof(*lat));
	if (!r.version || !lat) {
		fprintf(stderr, PROG ": out of memory\n");
		err = -ENOMEM;
		goto out;
	}
	/* a connection (and its own export) per thread, RF_CONNS at most */
	for (i = 0; rf && i < RF_CONNS && i < r.threads; i++) {
		pthread_mutex_init(&r.rf_lock[i], NULL);
		err = rfile_open(&r.rf[i], bench_device(dev), r.rf_addr, r.rf_port);
		if (!err && strcmp(r.tier, "rfile"))
			err = rfile_map(r.rf[i], !strcmp(r.tier, "rfile_rdma_rw"));
		if (err) {
			fprintf(stderr, PROG ": the file server at %s:%u: %s\n", r.rf_addr,
				r.rf_port, strerror(-err));
			goto out;
		}
		r.nrf++;
	}
	if (kv) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		snprintf(r.kv_prefix, sizeof(r.kv_prefix), "bm.%d.%lld.%ld", (int)getpid(),
			 (long long)now.tv_sec, now.tv_nsec);
		r.kv = calloc(1, sizeof(*r.kv));
		r.kv_wseq = calloc(r.pages, sizeof(*r.kv_wseq));
		err = !r.kv || !r.kv_wseq ? -ENOMEM : strcmp(r.tier, "mrrcd") ?
		      kvc_connect_rdma(r.kv, bench_device(dev), r.kv_addr, r.kv_port) :
		      kvc_connect_tcp(r.kv, r.kv_addr, r.kv_port);
		if (err) {
			fprintf(stderr, PROG ": mrrcd at %s:%u: %s\n", r.kv_addr, r.kv_port,
				strerror(-err));
			goto out;
		}
	}
	err = populate(&r);
	if (err)
		goto out;
	if (!strcmp(r.tier, "remote")) {
		/*
		 * Any configuration will do (a FIX waits for one page): the
		 * manager's model says which one it gives.
		 */
		struct redy_slo slo = { .lat_ns = 1e9, .tput_ops = 1 };
		struct redy_cache_opts o = { .dev = dev, .file = r.path };

		err = redy_cache_create(&r.cache, r.mgr, (uint16_t)r.mgr_port,
					r.pages * r.page_size, &slo, 3600, &o);
		if (err) {
			fprintf(stderr, PROG ": a Redy cache of %" PRIu64 " bytes at %s:%u: %s\n",
				r.pages * r.page_size, r.mgr, r.mgr_port, strerror(-err));
			goto out;
		}
	}
	err = bm_pool_create(&pool, r.frames, r.page_size, &tier);
	if (err) {
		fprintf(stderr, PROG ": a pool of %u frames: %s\n", r.frames, strerror(-err));
		goto out;
	}
	err = run_load(&r, pool, lat, &elapsed);
	if (!err)
		err = bm_flush(pool);
	if (!err)
		err = verify_tier(&r);
	if (err) {
		fprintf(stderr, PROG ": the run failed: %s\n", strerror(-err));
		goto out;
	}
	bm_pool_stats(pool, &st);
	for (i = 0; i < r.ops; i++)
		sum += lat[i];
	qsort(lat, r.ops, sizeof(*lat), bm_cmp_u64);
	fprintf(stderr, PROG ": %s tier (%s), %u frames, %" PRIu64 " pages, %u threads: %"
		PRIu64 " FIX, %" PRIu64 " hits, %" PRIu64 " write-backs, %" PRIu64
		" waits, %.3f s; the tier read %" PRIu64 " pages, wrote %" PRIu64
		" (the check's included)\n", r.tier, r.fs, r.frames, r.pages, r.threads,
		r.ops, st.hits, st.writebacks, st.waits, (double)elapsed / 1e9,
		r.tier_reads, r.tier_writes);
	emit(&r, "throughput_ops", (double)r.ops * 1e9 / (double)elapsed, "ops/s");
	emit(&r, "fix_p99_us", (double)bm_percentile(lat, r.ops, 99) / 1e3, "us");
	emit(&r, "fix_p50_us", (double)bm_percentile(lat, r.ops, 50) / 1e3, "us");
	emit(&r, "fix_mean_us", (double)sum / (double)r.ops / 1e3, "us");
	emit(&r, "hit_ratio", (double)st.hits / (double)r.ops, "ratio");
	if (r.kv) {
		fprintf(stderr, PROG ": mrrcd%s: %" PRIu64 " pages read from it, %" PRIu64
			" from the file%s\n", r.kv->rem_ok ? " (one-sided GETs)" : "",
			r.kv_hits, r.kv_misses, r.kv_off ? " (it failed)" : "");
		if (r.kv_stale)
			fprintf(stderr, PROG ": mrrcd: %" PRIu64 " stale copies found"
				" (older flags), read from the file\n", r.kv_stale);
		if (r.kv_torn)
			fprintf(stderr, PROG ": mrrcd: %" PRIu64 " one-sided GETs torn"
				" every time, asked for two-sided\n", r.kv_torn);
		emit(&r, "tier_hit_ratio", r.kv_hits + r.kv_misses ?
		     (double)r.kv_hits / (double)(r.kv_hits + r.kv_misses) : 0, "ratio");
	}
out:
	bm_pool_destroy(pool);
	if (r.cache) {
		int e = redy_cache_delete(r.cache);

		if (e && !err) {
			fprintf(stderr, PROG ": giving the cache back: %s\n", strerror(-e));
			err = e;
		}
	}
	if (r.fd >= 0)
		close(r.fd);
	for (i = 0; i < RF_CONNS; i++)
		rfile_close(r.rf[i]);
	if (r.kv) {
		kvc_close(r.kv);
		free(r.kv);
	}
	free(lat);
	free(r.version);
	free(r.kv_wseq);
	return err ? 1 : 0;
}
