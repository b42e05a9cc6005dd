// SPDX-License-Identifier: GPL-2.0-only
/*
 * The registration cache: every lookup case, capacity and in-use
 * invariants, the MRE and LRU policies (with a hand-computed MRE example),
 * batching, and on real memory: pinning, invalidation on munmap, mremap
 * and MADV_DONTNEED but not on fork or mprotect, RLIMIT_MEMLOCK, process
 * death, concurrency.
 *
 * Cache logic is tested with the model registrar (MRRC_MODE_MODEL): the
 * same cache code, no memory touched, so addresses are arbitrary.
 */
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "mrrc_test.h"

#define BASE 0x100000000ULL
#define RW MRRC_ACCESS_LOCAL_WRITE

static unsigned long P;

static int open_cache(uint32_t mode, uint32_t policy, uint64_t max_pages,
		      uint32_t max_regions)
{
	struct mrrc_cache_config cfg = {
		.mode = mode,
		.policy = policy,
		.max_pages = max_pages,
		.max_regions = max_regions,
	};
	int fd = open_bound(RXE_DEV);

	if (fd < 0)
		return fd;
	if (mrrc_cache_config(fd, &cfg)) {
		close(fd);
		return -1;
	}
	return fd;
}

struct one {
	struct mrrc_reg_req req;
	struct mrrc_seg seg[16];
	unsigned int nsegs;
	int ret;
};

static struct one reg1(int fd, uint64_t addr, uint64_t len, uint32_t access,
		       uint32_t flags)
{
	struct one o = { .nsegs = 16 };

	o.req.addr = addr;
	o.req.length = len;
	o.req.access = access;
	o.req.flags = flags;
	o.ret = mrrc_reg(fd, &o.req, 1, o.seg, &o.nsegs);
	if (o.ret == 1)
		o.ret = 0;
	return o;
}

static struct mrrc_cache_stats stats(int fd)
{
	struct mrrc_cache_stats st;

	mrrc_cache_stats(fd, &st);
	return st;
}

/* The segments are contiguous, in order, and cover exactly the request. */
static int segs_cover(const struct one *o)
{
	uint64_t at = o->req.addr;

	for (unsigned int i = 0; i < o->req.nsegs; i++) {
		if (o->seg[o->req.seg_index + i].addr != at)
			return 0;
		at += o->seg[o->req.seg_index + i].length;
	}
	return at == o->req.addr + o->req.length;
}

FIXTURE(model) {
	int fd;
};

FIXTURE_SETUP(model)
{
	P = sysconf(_SC_PAGESIZE);
	self->fd = open_cache(MRRC_MODE_MODEL, MRRC_POLICY_MRE, 1024, 1024);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(model)
{
	close(self->fd);
}

TEST_F(model, miss_then_exact)
{
	struct one a = reg1(self->fd, BASE, 4 * P, RW, MRRC_REG_RELEASE);
	struct one b = reg1(self->fd, BASE, 4 * P, RW, MRRC_REG_RELEASE);

	ASSERT_EQ(0, a.ret);
	ASSERT_EQ(MRRC_RESULT_MISS, a.req.result);
	ASSERT_EQ(1, a.req.nsegs);
	ASSERT_EQ(0, a.req.handle);
	ASSERT_TRUE(segs_cover(&a));
	ASSERT_EQ(0, b.ret);
	ASSERT_EQ(MRRC_RESULT_EXACT, b.req.result);
	ASSERT_EQ(a.seg[0].lkey, b.seg[0].lkey);
	ASSERT_EQ(1, stats(self->fd).registrations);
	ASSERT_EQ(4, stats(self->fd).cached_pages);
}

TEST_F(model, subset)
{
	struct one b;

	ASSERT_EQ(0, reg1(self->fd, BASE, 4 * P, RW, MRRC_REG_RELEASE).ret);
	b = reg1(self->fd, BASE + P + 100, P, RW, MRRC_REG_RELEASE);
	ASSERT_EQ(0, b.ret);
	ASSERT_EQ(MRRC_RESULT_SUBSET, b.req.result);
	ASSERT_EQ(1, b.req.nsegs);
	ASSERT_EQ(BASE + P + 100, b.seg[0].addr);
	ASSERT_EQ(P, b.seg[0].length);
	ASSERT_EQ(1, stats(self->fd).registrations);
}

/* Cached [0,4P), request [2P,6P): only [4P,6P) is registered. */
TEST_F(model, overlap_right)
{
	struct one a = reg1(self->fd, BASE, 4 * P, RW, MRRC_REG_RELEASE);
	struct one b = reg1(self->fd, BASE + 2 * P, 4 * P, RW, MRRC_REG_RELEASE);
	struct mrrc_cache_stats st = stats(self->fd);

	ASSERT_EQ(0, b.ret);
	ASSERT_EQ(MRRC_RESULT_OVERLAP, b.req.result);
	ASSERT_EQ(2, b.req.nsegs);
	ASSERT_TRUE(segs_cover(&b));
	ASSERT_EQ(a.seg[0].lkey, b.seg[0].lkey);
	ASSERT_EQ(2 * P, b.seg[0].length);
	ASSERT_NE(a.seg[0].lkey, b.seg[1].lkey);
	ASSERT_EQ(2, st.registrations);
	ASSERT_EQ(6, st.reg_pages);
	ASSERT_EQ(6, st.cached_pages);
	ASSERT_EQ(1, st.overlap);
}

/* Cached [4P,8P), request [2P,6P): only [2P,4P) is registered. */
TEST_F(model, overlap_left)
{
	struct one a = reg1(self->fd, BASE + 4 * P, 4 * P, RW, MRRC_REG_RELEASE);
	struct one b = reg1(self->fd, BASE + 2 * P, 4 * P, RW, MRRC_REG_RELEASE);

	ASSERT_EQ(0, b.ret);
	ASSERT_EQ(MRRC_RESULT_OVERLAP, b.req.result);
	ASSERT_EQ(2, b.req.nsegs);
	ASSERT_TRUE(segs_cover(&b));
	ASSERT_NE(a.seg[0].lkey, b.seg[0].lkey);
	ASSERT_EQ(a.seg[0].lkey, b.seg[1].lkey);
	ASSERT_EQ(6, stats(self->fd).reg_pages);
}

/* Cached pages 0, 2, 4; request 0..4: two one-page gaps registered. */
TEST_F(model, overlap_spanning_several_regions)
{
	struct one b;

	for (int i = 0; i < 5; i += 2)
		ASSERT_EQ(0, reg1(self->fd, BASE + i * P, P, RW,
				  MRRC_REG_RELEASE).ret);
	b = reg1(self->fd, BASE, 5 * P, RW, MRRC_REG_RELEASE);
	ASSERT_EQ(0, b.ret);
	ASSERT_EQ(MRRC_RESULT_OVERLAP, b.req.result);
	ASSERT_EQ(5, b.req.nsegs);
	ASSERT_TRUE(segs_cover(&b));
	ASSERT_EQ(5, stats(self->fd).registrations);
	ASSERT_EQ(5, stats(self->fd).cached_regions);
	/* Now fully covered by five regions. */
	b = reg1(self->fd, BASE, 5 * P, RW, MRRC_REG_RELEASE);
	ASSERT_EQ(MRRC_RESULT_SPAN, b.req.result);
	ASSERT_EQ(5, stats(self->fd).registrations);
}

TEST_F(model, span_registers_nothing)
{
	struct one b;

	ASSERT_EQ(0, reg1(self->fd, BASE, 2 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, reg1(self->fd, BASE + 2 * P, 2 * P, RW, MRRC_REG_RELEASE).ret);
	b = reg1(self->fd, BASE + P, 2 * P, RW, MRRC_REG_RELEASE);
	ASSERT_EQ(MRRC_RESULT_SPAN, b.req.result);
	ASSERT_EQ(2, b.req.nsegs);
	ASSERT_TRUE(segs_cover(&b));
	ASSERT_EQ(2, stats(self->fd).registrations);
}

TEST_F(model, unaligned_range_rounds_to_pages)
{
	struct one a = reg1(self->fd, BASE + 100, P, RW, MRRC_REG_RELEASE);

	ASSERT_EQ(0, a.ret);
	ASSERT_EQ(BASE + 100, a.seg[0].addr);
	ASSERT_EQ(P, a.seg[0].length);
	ASSERT_EQ(2, stats(self->fd).cached_pages);
}

/*
 * Access rights are part of the key; REG grants no remote rights (a peer
 * gets keys only from an operation's exposure or an export).
 */
TEST_F(model, access_is_part_of_the_key)
{
	struct mrrc_cache_stats st;
	uint32_t a;

	ASSERT_EQ(0, reg1(self->fd, BASE, 4 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(MRRC_RESULT_MISS,
		  reg1(self->fd, BASE, 4 * P, 0, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(self->fd, BASE, 4 * P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(MRRC_RESULT_SUBSET,
		  reg1(self->fd, BASE + P, P, 0, MRRC_REG_RELEASE).req.result);
	st = stats(self->fd);
	for (a = MRRC_ACCESS_REMOTE_WRITE; a <= MRRC_ACCESS_ALL; a++) {
		struct one o = reg1(self->fd, BASE, P, a, 0);

		ASSERT_EQ(-EINVAL, o.ret) TH_LOG("access %#x", a);
		ASSERT_EQ(-EINVAL, o.req.status);
	}
	ASSERT_EQ(-EINVAL, reg1(self->fd, BASE, P, 0x10, 0).ret);
	/* Nothing was registered or looked up for them. */
	ASSERT_EQ(st.cached_regions, stats(self->fd).cached_regions);
	ASSERT_EQ(st.requests, stats(self->fd).requests);
}

TEST_F(model, bad_requests)
{
	ASSERT_EQ(-EINVAL, reg1(self->fd, BASE, 0, RW, 0).ret);
	ASSERT_EQ(-EINVAL, reg1(self->fd, UINT64_MAX - 10, 100, RW, 0).ret);
	ASSERT_EQ(-ENOSPC, reg1(self->fd, BASE, 1025 * P, RW, 0).ret);
	ASSERT_EQ(-EOPNOTSUPP, reg1(self->fd, BASE, P, RW, 0x80).ret);
	ASSERT_EQ(0, stats(self->fd).cached_regions);
}

/* Not enough room for the segments: EOVERFLOW and nothing happens. */
TEST_F(model, segment_room)
{
	struct mrrc_reg_req req = { .addr = BASE, .length = 3 * P, .access = RW };
	struct mrrc_seg seg[2];
	unsigned int n = 2;

	ASSERT_EQ(0, reg1(self->fd, BASE + P, P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(-EOVERFLOW, mrrc_reg(self->fd, &req, 1, seg, &n));
	ASSERT_EQ(-EOVERFLOW, req.status);
	ASSERT_EQ(1, stats(self->fd).registrations);
}

TEST_F(model, handles)
{
	struct one a = reg1(self->fd, BASE, P, RW, 0);
	uint32_t bad = 12345;

	ASSERT_EQ(0, a.ret);
	ASSERT_NE(0, a.req.handle);
	ASSERT_EQ(1, stats(self->fd).handles);
	ASSERT_EQ(1, stats(self->fd).inuse_regions);
	ASSERT_EQ(-ENOENT, mrrc_release(self->fd, &bad, 1));
	ASSERT_EQ(1, mrrc_release(self->fd, &a.req.handle, 1));
	ASSERT_EQ(-ENOENT, mrrc_release(self->fd, &a.req.handle, 1));
	ASSERT_EQ(0, stats(self->fd).handles);
	ASSERT_EQ(0, stats(self->fd).inuse_regions);
	/* Released, still cached. */
	ASSERT_EQ(1, stats(self->fd).cached_regions);
}

/* A context holds at most max_handles handles. */
TEST_F(model, handle_limit)
{
	struct one a, b, c, d;
	char old[32];

	ASSERT_EQ(0, param_rw("max_handles", old, sizeof(old), 0));
	ASSERT_EQ(0, param_rw("max_handles", (char *)"2", 0, 1));
	a = reg1(self->fd, BASE, P, RW, 0);
	b = reg1(self->fd, BASE + 2 * P, P, RW, 0);
	c = reg1(self->fd, BASE + 4 * P, P, RW, 0);
	mrrc_release(self->fd, &a.req.handle, 1);
	d = reg1(self->fd, BASE + 4 * P, P, RW, 0);
	ASSERT_EQ(0, param_rw("max_handles", old, 0, 1));
	EXPECT_EQ(0, a.ret);
	EXPECT_EQ(0, b.ret);
	EXPECT_EQ(-EMFILE, c.ret);
	EXPECT_EQ(0, d.ret);
	EXPECT_EQ(2, stats(self->fd).handles);
}

/* A batch stops at the first failure; earlier requests stay done. */
TEST_F(model, batch_partial_failure)
{
	struct mrrc_reg_req req[3] = {
		{ .addr = BASE, .length = P, .access = RW },
		{ .addr = BASE, .length = 0, .access = RW },
		{ .addr = BASE + P, .length = P, .access = RW },
	};
	struct mrrc_seg seg[8];
	unsigned int n = 8;

	ASSERT_EQ(1, mrrc_reg(self->fd, req, 3, seg, &n));
	ASSERT_EQ(1, n);
	ASSERT_EQ(0, req[0].status);
	ASSERT_NE(0, req[0].handle);
	ASSERT_EQ(-EINVAL, req[1].status);
	ASSERT_EQ(0, req[2].handle);
	ASSERT_EQ(1, stats(self->fd).handles);
}

/* REG copies requests in chunks: failures and sizes at chunk boundaries. */
TEST_F(model, batch_failure_in_a_later_chunk)
{
	static struct mrrc_reg_req req[100];
	static struct mrrc_seg seg[100];
	unsigned int n = 100;

	for (int i = 0; i < 100; i++)
		req[i] = (struct mrrc_reg_req){ .addr = BASE + i * 2 * P,
						.length = P, .access = RW };
	req[40].length = 0;
	ASSERT_EQ(40, mrrc_reg(self->fd, req, 100, seg, &n));
	ASSERT_EQ(40, n);
	ASSERT_EQ(-EINVAL, req[40].status);
	for (int i = 0; i < 40; i++) {
		ASSERT_NE(0, req[i].handle);
		ASSERT_EQ(i, req[i].seg_index);
		ASSERT_EQ(BASE + i * 2 * P, seg[i].addr);
	}
	ASSERT_EQ(40, stats(self->fd).handles);
}

/* A longer request structure works if its tail is zero. */
TEST_F(model, longer_request_struct)
{
	struct { struct mrrc_reg_req r; uint64_t tail[2]; } req[40] = {};
	struct mrrc_reg cmd = { .size = sizeof(cmd), .count = 40,
				.req_size = sizeof(req[0]),
				.reqs = (uintptr_t)req,
				.seg_size = sizeof(struct mrrc_seg) };
	static struct mrrc_seg seg[40];

	for (int i = 0; i < 40; i++)
		req[i].r = (struct mrrc_reg_req){ .addr = BASE + i * P,
						  .length = P, .access = RW,
						  .flags = MRRC_REG_RELEASE };
	cmd.seg_count = 40;
	cmd.segs = (uintptr_t)seg;
	ASSERT_EQ(0, raw_ioctl(self->fd, MRRC_IOC_REG, &cmd));
	ASSERT_EQ(40, cmd.done);
	ASSERT_EQ(MRRC_RESULT_MISS, req[39].r.result);
	ASSERT_EQ(0, req[39].tail[0]);

	req[35].tail[1] = 1;
	cmd.seg_count = 40;
	ASSERT_EQ(-E2BIG, raw_ioctl(self->fd, MRRC_IOC_REG, &cmd));
	ASSERT_EQ(35, cmd.done);
}

/* Results that cannot be written back are undone: no handle leaks. */
TEST_F(model, unwritable_segments_undo)
{
	struct mrrc_reg_req req[4];
	unsigned int n = 4;
	struct mrrc_seg *ro = mmap(NULL, 4096, PROT_READ,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, ro);
	for (int i = 0; i < 4; i++)
		req[i] = (struct mrrc_reg_req){ .addr = BASE + i * P,
						.length = P, .access = RW };
	ASSERT_EQ(-EFAULT, mrrc_reg(self->fd, req, 4, ro, &n));
	ASSERT_EQ(0, stats(self->fd).handles);
	ASSERT_EQ(0, stats(self->fd).inuse_regions);
	munmap(ro, 4096);
}

/* Requests running into an unreadable page: the readable ones are done. */
TEST_F(model, requests_run_into_a_guard_page)
{
	size_t sz = sizeof(struct mrrc_reg_req);
	char *map = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned int fit = 4096 / sz, n = 128;
	struct mrrc_reg_req *req;
	static struct mrrc_seg seg[128];

	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + 4096, 4096, PROT_NONE));
	req = (struct mrrc_reg_req *)(map + 4096 - fit * sz);
	for (unsigned int i = 0; i < fit; i++)
		req[i] = (struct mrrc_reg_req){ .addr = BASE + i * P,
						.length = P, .access = RW,
						.flags = MRRC_REG_RELEASE };
	ASSERT_EQ((int)fit, mrrc_reg(self->fd, req, fit + 10, seg, &n));
	ASSERT_EQ(fit, n);
	munmap(map, 2 * 4096);
}

/* More segments in one chunk than the kernel buffers at once. */
TEST_F(model, many_segments_across_chunks)
{
	static struct mrrc_reg_req req[20];
	static struct mrrc_seg seg[6100];
	unsigned int n = 6100;

	for (int i = 0; i < 300; i += 2)
		ASSERT_EQ(0, reg1(self->fd, BASE + i * P, P, RW,
				  MRRC_REG_RELEASE).ret);
	for (int i = 0; i < 20; i++)
		req[i] = (struct mrrc_reg_req){ .addr = BASE, .length = 300 * P,
						.access = RW,
						.flags = MRRC_REG_RELEASE };
	ASSERT_EQ(20, mrrc_reg(self->fd, req, 20, seg, &n));
	ASSERT_EQ(20 * 300, n);
	ASSERT_EQ(MRRC_RESULT_OVERLAP, req[0].result);
	for (int i = 0; i < 20; i++) {
		ASSERT_EQ(300, req[i].nsegs);
		ASSERT_EQ(i * 300, req[i].seg_index);
	}
	ASSERT_EQ(MRRC_RESULT_SPAN, req[19].result);
	ASSERT_EQ(BASE + 299 * P, seg[n - 1].addr);
}

TEST_F(model, big_batch)
{
	static struct mrrc_reg_req req[4096];
	static struct mrrc_seg seg[4096];
	unsigned int n = 4096;

	for (int i = 0; i < 4096; i++) {
		req[i].addr = BASE + (uint64_t)(i % 512) * P;
		req[i].length = P;
		req[i].access = RW;
		req[i].flags = MRRC_REG_RELEASE;
	}
	ASSERT_EQ(4096, mrrc_reg(self->fd, req, 4096, seg, &n));
	ASSERT_EQ(4096, n);
	ASSERT_EQ(512, stats(self->fd).registrations);
	ASSERT_EQ(4096 - 512, stats(self->fd).hit_exact);
}

TEST_F(model, flush_keeps_regions_in_use)
{
	struct one held = reg1(self->fd, BASE, P, RW, 0);

	ASSERT_EQ(0, reg1(self->fd, BASE + P, P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, reg1(self->fd, BASE + 2 * P, P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(2, mrrc_flush(self->fd));
	ASSERT_EQ(1, stats(self->fd).cached_regions);
	ASSERT_EQ(1, stats(self->fd).dereg_batches);
	ASSERT_EQ(MRRC_RESULT_EXACT, reg1(self->fd, BASE, P, RW,
					  MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(1, mrrc_release(self->fd, &held.req.handle, 1));
}

TEST_F(model, config)
{
	struct mrrc_cache_config cfg = { 0 };

	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	ASSERT_EQ(MRRC_POLICY_MRE, cfg.policy);
	ASSERT_EQ(MRRC_MODE_MODEL, cfg.mode);
	ASSERT_EQ(1024, cfg.max_pages);
	ASSERT_EQ(770, cfg.reg_ns_per_page);

	memset(&cfg, 0, sizeof(cfg));
	cfg.policy = MRRC_POLICY_GDSF_BATCH + 1;
	ASSERT_EQ(-EINVAL, mrrc_cache_config(self->fd, &cfg));
	cfg.policy = 0;
	cfg.resort_pct = 101;
	ASSERT_EQ(-EINVAL, mrrc_cache_config(self->fd, &cfg));

	/* Mode changes only while nothing is registered. */
	ASSERT_EQ(0, reg1(self->fd, BASE, 8 * P, RW, MRRC_REG_RELEASE).ret);
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = MRRC_MODE_ORDINARY;
	ASSERT_EQ(-EBUSY, mrrc_cache_config(self->fd, &cfg));
	memset(&cfg, 0, sizeof(cfg));
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	ASSERT_EQ(MRRC_MODE_MODEL, cfg.mode);

	/* Shrinking evicts down to the new capacity. */
	memset(&cfg, 0, sizeof(cfg));
	cfg.max_pages = 4;
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	ASSERT_EQ(0, stats(self->fd).cached_pages);
	ASSERT_EQ(4, cfg.max_pages);
}

/*
 * Capacities and ranges so large that page counts would wrap 32 bits are
 * refused cleanly (this oopsed before: a 2^32-page REG after max_pages
 * = ~0).
 */
TEST_F(model, huge_capacity_and_ranges_refused)
{
	struct mrrc_cache_config cfg = { .max_pages = ~0ULL };

	ASSERT_EQ(-EINVAL, mrrc_cache_config(self->fd, &cfg));
	memset(&cfg, 0, sizeof(cfg));
	cfg.max_pages = (1ULL << 28) + 1;
	ASSERT_EQ(-EINVAL, mrrc_cache_config(self->fd, &cfg));
	memset(&cfg, 0, sizeof(cfg));
	cfg.max_pages = 1ULL << 28;
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	ASSERT_EQ(1ULL << 28, cfg.max_pages);
	ASSERT_EQ(-ENOSPC, reg1(self->fd, BASE, 1ULL << 44, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(-ENOSPC, reg1(self->fd, BASE, ((1ULL << 28) + 1) * P, RW,
				MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, stats(self->fd).cached_pages);
}

/* Model costs: a*p + b per registration, a'*pages + b' per batch. */
TEST_F(model, cost_model)
{
	struct mrrc_cache_config cfg = {
		.reg_ns_per_page = 10, .reg_ns_per_op = 1000,
		.dereg_ns_per_page = 1, .dereg_ns_per_op = 100,
	};

	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	ASSERT_EQ(0, reg1(self->fd, BASE, 4 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, reg1(self->fd, BASE + 8 * P, 2 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(1040 + 1020, stats(self->fd).model_cost_ns);
	ASSERT_EQ(2, mrrc_flush(self->fd));
	ASSERT_EQ(1040 + 1020 + 6 + 100, stats(self->fd).model_cost_ns);
	EXPECT_EQ(0, cfg.dereg_ns_per_region);

	/* With c', a batch of two regions costs it twice. */
	memset(&cfg, 0, sizeof(cfg));
	cfg.dereg_ns_per_region = 30;
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	EXPECT_EQ(30, cfg.dereg_ns_per_region);
	EXPECT_EQ(100, cfg.dereg_ns_per_op);
	ASSERT_EQ(0, reg1(self->fd, BASE, 4 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, reg1(self->fd, BASE + 8 * P, 2 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(2, mrrc_flush(self->fd));
	ASSERT_EQ(2 * (1040 + 1020 + 6 + 100) + 2 * 30,
		  stats(self->fd).model_cost_ns);
}

/* Register and flush @n times at @addr, 1 to 16 pages in turn. */
static void reg_flush_cycle(struct __test_metadata *_metadata, int fd,
			    uint64_t addr, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, reg1(fd, addr, (1 + i % 16) * P, RW,
				  MRRC_REG_RELEASE).ret);
		ASSERT_EQ(1, mrrc_flush(fd));
	}
}

/* @cfg has the papers' cost figures, not measured. */
static void expect_papers_costs(struct __test_metadata *_metadata,
				const struct mrrc_cache_config *cfg)
{
	EXPECT_EQ(0, cfg->flags);
	EXPECT_EQ(770, cfg->reg_ns_per_page);
	EXPECT_EQ(7420, cfg->reg_ns_per_op);
	EXPECT_EQ(220, cfg->dereg_ns_per_page);
	EXPECT_EQ(1100, cfg->dereg_ns_per_op);
	EXPECT_EQ(0, cfg->dereg_ns_per_region);
}

/*
 * A model cache's figures are the model: registering and evicting never
 * change them (the real modes measure theirs, see real.costs_measured).
 */
TEST_F(model, costs_not_measured)
{
	struct mrrc_cache_config cfg = { 0 };

	reg_flush_cycle(_metadata, self->fd, BASE, 80);
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	expect_papers_costs(_metadata, &cfg);
}

/* Regions a handle references are never evicted. */
TEST(in_use_never_evicted)
{
	uint32_t policies[] = { MRRC_POLICY_MRE, MRRC_POLICY_LRU,
				MRRC_POLICY_GDSF, MRRC_POLICY_GDSF_BATCH };

	P = sysconf(_SC_PAGESIZE);
	for (int k = 0; k < 4; k++) {
		int fd = open_cache(MRRC_MODE_MODEL, policies[k], 16, 64);
		struct one held;

		ASSERT_LE(0, fd);
		held = reg1(fd, BASE, 4 * P, RW, 0);
		ASSERT_EQ(0, held.ret);
		for (int i = 0; i < 200; i++)
			ASSERT_EQ(0, reg1(fd, BASE + (8 + i) * P, P, RW,
					  MRRC_REG_RELEASE).ret);
		ASSERT_LT(0, stats(fd).evictions);
		ASSERT_EQ(MRRC_RESULT_EXACT,
			  reg1(fd, BASE, 4 * P, RW, MRRC_REG_RELEASE).req.result);
		/* 12 pages left for the rest: a 13-page request cannot fit. */
		ASSERT_EQ(-ENOSPC, reg1(fd, BASE + 1000 * P, 13 * P, RW, 0).ret);
		ASSERT_EQ(1, mrrc_release(fd, &held.req.handle, 1));
		close(fd);
	}
}

/* Random workload; after every step capacity and region limits hold. */
TEST(capacity_never_exceeded)
{
	uint32_t policies[] = { MRRC_POLICY_MRE, MRRC_POLICY_LRU,
				MRRC_POLICY_GDSF, MRRC_POLICY_GDSF_BATCH };

	P = sysconf(_SC_PAGESIZE);
	for (int k = 0; k < 4; k++) {
		int fd = open_cache(MRRC_MODE_MODEL, policies[k], 64, 20);
		uint32_t held[8] = { 0 };
		unsigned int seed = 42, iters = test_iters(3000, 1000);

		ASSERT_LE(0, fd);
		for (unsigned int i = 0; i < iters; i++) {
			uint64_t page = rand_r(&seed) % 256;
			uint64_t len = (1 + rand_r(&seed) % 8) * P -
				       rand_r(&seed) % 100;
			int slot = rand_r(&seed) % 8;
			struct mrrc_cache_stats st;
			struct one o;

			if (held[slot]) {
				ASSERT_EQ(1, mrrc_release(fd, &held[slot], 1));
				held[slot] = 0;
			}
			o = reg1(fd, BASE + page * P + rand_r(&seed) % 64, len,
				 RW, (i & 1) ? MRRC_REG_RELEASE : 0);
			if (o.ret == -ENOSPC)
				continue;	/* held regions fill it */
			ASSERT_EQ(0, o.ret);
			ASSERT_TRUE(segs_cover(&o));
			held[slot] = o.req.handle;
			st = stats(fd);
			ASSERT_LE(st.cached_pages, 64);
			ASSERT_LE(st.cached_regions, 20);
			ASSERT_EQ(st.requests, st.hit_exact + st.hit_subset +
				  st.hit_span + st.overlap + st.miss);
			ASSERT_EQ(st.registrations - st.deregistrations,
				  st.cached_regions);
		}
		close(fd);
	}
}

TEST(mre_one_batch_per_round)
{
	struct mrrc_cache_config cfg = { .evict_pct = 20 };
	struct mrrc_cache_stats st;
	int fd;

	P = sysconf(_SC_PAGESIZE);
	fd = open_cache(MRRC_MODE_MODEL, MRRC_POLICY_MRE, 100, 1000);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mrrc_cache_config(fd, &cfg));
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(0, reg1(fd, BASE + i * P, P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, stats(fd).deregistrations);
	ASSERT_EQ(0, reg1(fd, BASE + 500 * P, P, RW, MRRC_REG_RELEASE).ret);
	st = stats(fd);
	ASSERT_EQ(1, st.eviction_rounds);
	ASSERT_EQ(1, st.dereg_batches);
	ASSERT_EQ(20, st.deregistrations);
	ASSERT_EQ(20, st.max_batch);
	ASSERT_EQ(81, st.cached_pages);
	close(fd);
}

TEST(lru_one_region_at_a_time)
{
	struct mrrc_cache_stats st;
	int fd;

	P = sysconf(_SC_PAGESIZE);
	fd = open_cache(MRRC_MODE_MODEL, MRRC_POLICY_LRU, 100, 1000);
	ASSERT_LE(0, fd);
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(0, reg1(fd, BASE + i * P, P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, reg1(fd, BASE + 500 * P, P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, reg1(fd, BASE + 501 * P, P, RW, MRRC_REG_RELEASE).ret);
	st = stats(fd);
	ASSERT_EQ(2, st.dereg_batches);
	ASSERT_EQ(2, st.deregistrations);
	ASSERT_EQ(1, st.max_batch);
	/* The two oldest went. */
	ASSERT_EQ(MRRC_RESULT_EXACT, reg1(fd, BASE + 2 * P, P, RW,
					  MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(MRRC_RESULT_MISS, reg1(fd, BASE, P, RW,
					 MRRC_REG_RELEASE).req.result);
	close(fd);
}

/*
 * Hits taken without the cache's mutex (lockless_hit=Y) move their region
 * up the stack all the same, once the next locked request applies them,
 * in the order of their last hits: four two-page regions R0-R3 in an LRU
 * cache of four, hits on R0 (one page of it, holding a handle), R1, R2,
 * R3 and R0 again, then a fifth region: R1 goes (applied in the order of
 * the first hits, R0 would).  Then the same with lockless_hit=N, the
 * control, where no hit goes unlocked.
 */
TEST(unlocked_hits_keep_the_policy_order)
{
	char old[8] = "Y";

	P = sysconf(_SC_PAGESIZE);
	ASSERT_EQ(0, param_rw("lockless_hit", old, sizeof(old), 0));
	for (int on = 1; on >= 0; on--) {
		struct mrrc_cache_stats st;
		struct one h;
		int fd;

		ASSERT_EQ(0, param_rw("lockless_hit", on ? "Y" : "N", 0, 1));
		fd = open_cache(MRRC_MODE_MODEL, MRRC_POLICY_LRU, 8, 4);
		ASSERT_LE(0, fd);
		for (int i = 0; i < 4; i++)
			ASSERT_EQ(MRRC_RESULT_MISS,
				  reg1(fd, BASE + 2 * i * P, 2 * P, RW,
				       MRRC_REG_RELEASE).req.result);
		h = reg1(fd, BASE + 100, 200, RW, 0);
		ASSERT_EQ(0, h.ret);
		ASSERT_EQ(MRRC_RESULT_SUBSET, h.req.result);
		ASSERT_EQ(BASE + 100, h.seg[0].addr);
		ASSERT_EQ(200, h.seg[0].length);
		st = stats(fd);
		ASSERT_EQ(on ? 1 : 0, st.hit_unlocked);
		ASSERT_EQ(1, st.hit_subset);
		ASSERT_EQ(5, st.requests);
		ASSERT_EQ(1, st.handles);
		ASSERT_EQ(1, st.inuse_regions);
		ASSERT_EQ(1, mrrc_release(fd, &h.req.handle, 1));
		ASSERT_EQ(0, stats(fd).inuse_regions);
		ASSERT_EQ(0, stats(fd).handles);
		for (int i = 1; i <= 4; i++)
			ASSERT_EQ(MRRC_RESULT_EXACT,
				  reg1(fd, BASE + 2 * (i % 4) * P, 2 * P, RW,
				       MRRC_REG_RELEASE).req.result);
		ASSERT_EQ(MRRC_RESULT_MISS, reg1(fd, BASE + 20 * P, 2 * P, RW,
						 MRRC_REG_RELEASE).req.result);
		ASSERT_EQ(MRRC_RESULT_EXACT, reg1(fd, BASE, 2 * P, RW,
						  MRRC_REG_RELEASE).req.result);
		ASSERT_EQ(MRRC_RESULT_MISS, reg1(fd, BASE + 2 * P, 2 * P, RW,
						 MRRC_REG_RELEASE).req.result);
		st = stats(fd);
		ASSERT_EQ(on ? 6 : 0, st.hit_unlocked);
		ASSERT_EQ(5, st.hit_exact);
		ASSERT_EQ(2, st.evictions);
		close(fd);
	}
	ASSERT_EQ(0, param_rw("lockless_hit", old, 0, 1));
}

/*
 * The MRE rules, by hand.  Capacity 10 pages, the whole stack is the
 * resorting section, the eviction segment 1 page (at least the need).
 * Insert B(1 page), A(4), C(2), D(3): the stack, bottom to top, is
 * B A C D.  E(1 page) does not fit: r = factor of the bottom region = 0,
 * so B = 1, A = 1/4, C = 1/2, D = 1/3; resorted bottom up A D C B; the
 * segment is A (4 pages), evicted although B is older.  LRU evicts B.
 * Stack now D(1/3) C(1/2) B(1) E(0).  F(4 pages) needs 1 page: r = 1/3
 * (D's factor, kept: factors are not renewed), E = 1/3 + 1 = 4/3; D goes.
 */
TEST(mre_hand_computed_example)
{
	struct mrrc_cache_config cfg = { .resort_pct = 100, .evict_pct = 10 };
	const uint64_t ps = sysconf(_SC_PAGESIZE);
	const uint64_t b = BASE, a = BASE + 10 * ps, c = BASE + 20 * ps;
	const uint64_t d = BASE + 30 * ps, e = BASE + 40 * ps, f = BASE + 50 * ps;
	struct mrrc_cache_stats st;
	int fd, lru;

	P = ps;
	fd = open_cache(MRRC_MODE_MODEL, MRRC_POLICY_MRE, 10, 100);
	lru = open_cache(MRRC_MODE_MODEL, MRRC_POLICY_LRU, 10, 100);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, lru);
	ASSERT_EQ(0, mrrc_cache_config(fd, &cfg));
	for (int i = 0; i < 2; i++) {
		int x = i ? lru : fd;

		ASSERT_EQ(0, reg1(x, b, 1 * P, RW, MRRC_REG_RELEASE).ret);
		ASSERT_EQ(0, reg1(x, a, 4 * P, RW, MRRC_REG_RELEASE).ret);
		ASSERT_EQ(0, reg1(x, c, 2 * P, RW, MRRC_REG_RELEASE).ret);
		ASSERT_EQ(0, reg1(x, d, 3 * P, RW, MRRC_REG_RELEASE).ret);
		ASSERT_EQ(0, reg1(x, e, 1 * P, RW, MRRC_REG_RELEASE).ret);
	}
	/* MRE evicted A (large), LRU evicted B (old). */
	st = stats(fd);
	ASSERT_EQ(1, st.evictions);
	ASSERT_EQ(7, st.cached_pages);
	ASSERT_EQ(0, st.mre_recency);
	st = stats(lru);
	ASSERT_EQ(1, st.evictions);
	ASSERT_EQ(10, st.cached_pages);
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(lru, a, 4 * P, RW, MRRC_REG_RELEASE).req.result);
	close(lru);

	ASSERT_EQ(0, reg1(fd, f, 4 * P, RW, MRRC_REG_RELEASE).ret);
	st = stats(fd);
	ASSERT_EQ(2, st.evictions);
	ASSERT_EQ((1ULL << 32) / 3, st.mre_recency);
	ASSERT_EQ(8, st.cached_pages);
	/* B, C, E, F are cached; D and A are not. */
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(fd, b, 1 * P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(fd, c, 2 * P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(fd, e, 1 * P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(fd, f, 4 * P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(2, stats(fd).evictions);
	ASSERT_EQ(MRRC_RESULT_MISS,
		  reg1(fd, d, 3 * P, RW, MRRC_REG_RELEASE).req.result);
	close(fd);
}

/*
 * GDSF by hand: H = L + freq * (a*p + b) / p with a = 770, b = 7420 ns.
 * B(1 page) 8190, A(4) 2625, C(2) 4480, D(3) 3243: E(1 page) evicts A,
 * the least H, and L becomes 2625.  Then D is used twice more (freq 3,
 * H = 2625 + 3 * 3243) and F(4 pages) evicts C, whose H = 2625 + 4480 is
 * now the least (B, E: 2625 + 8190).
 */
TEST(gdsf_hand_computed_example)
{
	const uint64_t ps = sysconf(_SC_PAGESIZE);
	const uint64_t b = BASE, a = BASE + 10 * ps, c = BASE + 20 * ps;
	const uint64_t d = BASE + 30 * ps, e = BASE + 40 * ps, f = BASE + 50 * ps;
	int fd;

	P = ps;
	fd = open_cache(MRRC_MODE_MODEL, MRRC_POLICY_GDSF, 10, 100);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, reg1(fd, b, 1 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, reg1(fd, a, 4 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, reg1(fd, c, 2 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, reg1(fd, d, 3 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, reg1(fd, e, 1 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(1, stats(fd).evictions);
	ASSERT_EQ(7, stats(fd).cached_pages);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(MRRC_RESULT_EXACT,
			  reg1(fd, d, 3 * P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(0, reg1(fd, f, 4 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(2, stats(fd).evictions);
	ASSERT_EQ(9, stats(fd).cached_pages);
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(fd, b, 1 * P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(fd, d, 3 * P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(fd, e, 1 * P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(2, stats(fd).evictions);
	close(fd);
}

/*
 * gdsf-batch's first round is GDSF's, one region: with b (1 page), a (4),
 * c (2), d (3) cached in a 10-page cache, e (1) needs a page and a, the
 * least H (cost/size 2625 against 8190, 4480 and 3243, x1024, L = 0,
 * each used once; the default costs a = 770 ns, b = 7420 ns), goes alone.
 */
TEST(gdsf_batch_hand_computed_example)
{
	const uint64_t ps = sysconf(_SC_PAGESIZE);
	const uint64_t b = BASE, a = BASE + 10 * ps, c = BASE + 20 * ps;
	const uint64_t d = BASE + 30 * ps, e = BASE + 40 * ps;
	struct mrrc_cache_config cfg = { .evict_pct = 50 };
	struct mrrc_cache_stats st;
	int fd;

	P = ps;
	fd = open_cache(MRRC_MODE_MODEL, MRRC_POLICY_GDSF_BATCH, 10, 100);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mrrc_cache_config(fd, &cfg));
	ASSERT_EQ(0, reg1(fd, b, 1 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, reg1(fd, a, 4 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, reg1(fd, c, 2 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, reg1(fd, d, 3 * P, RW, MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, stats(fd).evictions);
	ASSERT_EQ(0, reg1(fd, e, 1 * P, RW, MRRC_REG_RELEASE).ret);
	st = stats(fd);
	ASSERT_EQ(1, st.evictions);
	ASSERT_EQ(1, st.eviction_rounds);
	ASSERT_EQ(0, st.evict_segment);
	ASSERT_EQ(7, st.cached_pages);
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(fd, b, 1 * P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(fd, c, 2 * P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(fd, d, 3 * P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(MRRC_RESULT_MISS,
		  reg1(fd, a, 4 * P, RW, MRRC_REG_RELEASE).req.result);
	close(fd);
}

/*
 * While batches pay, the segment doubles.  A scan of one-page regions
 * never asked for again, in a 100-page cache with evict_pct 20: round r
 * frees the page needed and s(r) more in one batch, s = 0, 1, 2, 4, 8,
 * 16, then 20 (the bound), as each round's extras let s(r) misses fit
 * (s(r) times b' saved) and none comes back.
 */
TEST(gdsf_batch_segment_grows_while_batches_pay)
{
	static const uint64_t seg[] = { 0, 1, 2, 4, 8, 16, 20, 20, 20 };
	struct mrrc_cache_config cfg = { .evict_pct = 20 };
	struct mrrc_cache_stats st, last;
	unsigned int round = 0;
	int fd;

	P = sysconf(_SC_PAGESIZE);
	fd = open_cache(MRRC_MODE_MODEL, MRRC_POLICY_GDSF_BATCH, 100, 1000);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mrrc_cache_config(fd, &cfg));
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(0, reg1(fd, BASE + i * 2 * P, P, RW,
				  MRRC_REG_RELEASE).ret);
	last = stats(fd);
	ASSERT_EQ(0, last.eviction_rounds);
	for (int i = 100; round < ARRAY_SIZE(seg); i++) {
		ASSERT_EQ(0, reg1(fd, BASE + i * 2 * P, P, RW,
				  MRRC_REG_RELEASE).ret);
		st = stats(fd);
		if (st.eviction_rounds == last.eviction_rounds)
			continue;
		ASSERT_EQ(last.eviction_rounds + 1, st.eviction_rounds);
		ASSERT_EQ(seg[round], st.evict_segment) TH_LOG("round %u", round);
		ASSERT_EQ(last.evictions + 1 + seg[round], st.evictions);
		ASSERT_EQ(last.dereg_batches + 1, st.dereg_batches);
		ASSERT_EQ(0, st.evicted_early);
		last = st;
		round++;
	}
	close(fd);
}

/*
 * gdsf-batch's segment follows what batching earns.  A loop over 101
 * one-page regions in a 100-page cache (segment 20 pages, evict_pct 20):
 * GDSF's least H is the region used longest ago, the next one the loop
 * asks for, so every region a round evicts beyond the need comes back
 * before the next round.  With a batch's fixed cost b' of 1 ns that never
 * pays for the registrations it causes: the segment, which starts at 0,
 * halves every round it is tried, and ends at 0 or 1 page.  With b' =
 * 4 ms every round saves far more than the extras cost: the segment grows
 * to 20 pages and stays there.
 */
/* A 100-page gdsf-batch cache, evict_pct 20, a batch's b' @batch_ns. */
static int gdsf_batch_open(uint32_t batch_ns)
{
	struct mrrc_cache_config cfg = {
		.evict_pct = 20, .dereg_ns_per_op = batch_ns,
	};
	int fd;

	P = sysconf(_SC_PAGESIZE);
	fd = open_cache(MRRC_MODE_MODEL, MRRC_POLICY_GDSF_BATCH, 100, 1000);
	if (fd >= 0 && mrrc_cache_config(fd, &cfg)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* @n requests of the loop over 101 one-page regions. */
static void gdsf_batch_cycle(struct __test_metadata *_metadata, int fd,
			     unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		ASSERT_EQ(0, reg1(fd, BASE + (i % 101) * 2 * P, P, RW,
				  MRRC_REG_RELEASE).ret);
}

static void gdsf_batch_loop(struct __test_metadata *_metadata,
			    uint32_t batch_ns, struct mrrc_cache_stats *st)
{
	int fd = gdsf_batch_open(batch_ns);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, stats(fd).evict_segment);
	gdsf_batch_cycle(_metadata, fd, 101 * 20);
	*st = stats(fd);
	ASSERT_GE(100, st->cached_pages);
	close(fd);
}

TEST(gdsf_batch_segment_shrinks_when_extras_come_back)
{
	struct mrrc_cache_stats st;

	gdsf_batch_loop(_metadata, 1, &st);
	ASSERT_GE(1, st.evict_segment);
	ASSERT_LT(0, st.evicted_early);
	/* near GDSF's one region per round by the end */
	ASSERT_LT(st.evictions / 2, st.eviction_rounds);
}

TEST(gdsf_batch_segment_stays_when_batches_pay)
{
	struct mrrc_cache_stats st;

	gdsf_batch_loop(_metadata, 4000000, &st);
	ASSERT_EQ(20, st.evict_segment);
	ASSERT_LT(0, st.evicted_early);
	ASSERT_GT(st.evictions / 10, st.eviction_rounds);
}

/* One miss that starts a round: it evicts 1 + @seg regions. */
static void gdsf_batch_one_round(struct __test_metadata *_metadata, int fd,
				 uint64_t seg)
{
	struct mrrc_cache_stats st0 = stats(fd), st;

	for (unsigned int i = 0; i < 1000; i++) {
		ASSERT_EQ(0, reg1(fd, BASE + (1000 + i) * 2 * P, P, RW,
				  MRRC_REG_RELEASE).ret);
		st = stats(fd);
		if (st.eviction_rounds != st0.eviction_rounds)
			break;
	}
	ASSERT_EQ(st0.eviction_rounds + 1, st.eviction_rounds);
	ASSERT_EQ(seg, st.evict_segment);
	ASSERT_EQ(st0.evictions + 1 + seg, st.evictions);
}

/*
 * gdsf-batch's segment starts again at nothing when the policy is chosen
 * again and when its bound (evict_pct of the capacity) changes; setting
 * the configuration again unchanged keeps it.  The loop of
 * gdsf_batch_loop(), b' = 4 ms, grows it to 20 pages first.
 */
TEST(gdsf_batch_segment_restarts)
{
	struct mrrc_cache_config cfg;
	int fd = gdsf_batch_open(4000000);

	ASSERT_LE(0, fd);
	gdsf_batch_cycle(_metadata, fd, 101 * 5);
	ASSERT_EQ(20, stats(fd).evict_segment);
	/* set again, its bound unchanged: what it learnt stays */
	cfg = (struct mrrc_cache_config){ .evict_pct = 20 };
	ASSERT_EQ(0, mrrc_cache_config(fd, &cfg));
	gdsf_batch_one_round(_metadata, fd, 20);
	/* another policy and back */
	cfg = (struct mrrc_cache_config){ .policy = MRRC_POLICY_GDSF };
	ASSERT_EQ(0, mrrc_cache_config(fd, &cfg));
	ASSERT_EQ(0, stats(fd).evict_segment);
	cfg.policy = MRRC_POLICY_GDSF_BATCH;
	ASSERT_EQ(0, mrrc_cache_config(fd, &cfg));
	gdsf_batch_one_round(_metadata, fd, 0);
	gdsf_batch_one_round(_metadata, fd, 1);
	/* a new bound: 10 % of 100 pages */
	gdsf_batch_cycle(_metadata, fd, 101 * 5);
	ASSERT_EQ(20, stats(fd).evict_segment);
	cfg = (struct mrrc_cache_config){ .evict_pct = 10 };
	ASSERT_EQ(0, mrrc_cache_config(fd, &cfg));
	gdsf_batch_one_round(_metadata, fd, 0);
	gdsf_batch_cycle(_metadata, fd, 101 * 5);
	ASSERT_EQ(10, stats(fd).evict_segment);
	close(fd);
}

/*
 * GDSF's priority saturates instead of wrapping.  With a = b = 2^32 - 1 ns
 * a one-page region's cost/size is (a + b) * 1024 = 2^43 - 2^11.  A used
 * 2^21 + 1 times would have freq * cost/size = 2^64 + 2^43 - 2^32 - 2^11,
 * which wraps to less than a fresh region's 2^43 - 2^11: C would then
 * evict A, the hottest region, instead of B.
 */
TEST(gdsf_priority_saturates)
{
	const uint64_t ps = sysconf(_SC_PAGESIZE);
	const uint64_t a = BASE, b = BASE + 10 * ps, c = BASE + 20 * ps;
	struct mrrc_cache_config cfg = {
		.reg_ns_per_page = UINT32_MAX, .reg_ns_per_op = UINT32_MAX,
	};
	enum { K = 4096 };
	struct mrrc_reg_req *req = calloc(K, sizeof(*req));
	struct mrrc_seg *seg = calloc(K, sizeof(*seg));
	int fd;

	P = ps;
	ASSERT_TRUE(req && seg);
	fd = open_cache(MRRC_MODE_MODEL, MRRC_POLICY_GDSF, 2, 100);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mrrc_cache_config(fd, &cfg));
	ASSERT_EQ(MRRC_RESULT_MISS,
		  reg1(fd, a, P, RW, MRRC_REG_RELEASE).req.result);
	for (int i = 0; i < K; i++)
		req[i] = (struct mrrc_reg_req){
			.addr = a, .length = P, .access = RW,
			.flags = MRRC_REG_RELEASE,
		};
	/* 2^21 hits: A's frequency becomes 2^21 + 1. */
	for (int i = 0; i < (1 << 21) / K; i++) {
		unsigned int n = K;

		ASSERT_EQ(K, mrrc_reg(fd, req, K, seg, &n));
	}
	ASSERT_EQ(1 << 21, stats(fd).hit_exact);
	ASSERT_EQ(MRRC_RESULT_MISS,
		  reg1(fd, b, P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(MRRC_RESULT_MISS,
		  reg1(fd, c, P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(1, stats(fd).evictions);
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(fd, a, P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(fd, c, P, RW, MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(1, stats(fd).evictions);
	close(fd);
	free(req);
	free(seg);
}

/* Switching policy with regions cached keeps every invariant. */
TEST(policy_switch_with_regions_cached)
{
	uint32_t order[] = { MRRC_POLICY_LRU, MRRC_POLICY_GDSF, MRRC_POLICY_MRE,
			     MRRC_POLICY_GDSF_BATCH, MRRC_POLICY_GDSF,
			     MRRC_POLICY_LRU };
	int fd;

	P = sysconf(_SC_PAGESIZE);
	fd = open_cache(MRRC_MODE_MODEL, MRRC_POLICY_LRU, 32, 16);
	ASSERT_LE(0, fd);
	for (unsigned int k = 0; k < ARRAY_SIZE(order); k++) {
		struct mrrc_cache_config cfg = { .policy = order[k] };

		ASSERT_EQ(0, mrrc_cache_config(fd, &cfg));
		for (int i = 0; i < 100; i++) {
			ASSERT_EQ(0, reg1(fd, BASE + (i % 40) * 4 * P,
					  (1 + i % 3) * P, RW,
					  MRRC_REG_RELEASE).ret);
			ASSERT_LE(stats(fd).cached_pages, 32);
			ASSERT_LE(stats(fd).cached_regions, 16);
		}
	}
	close(fd);
}

TEST(policy_none_registers_every_time)
{
	struct mrrc_cache_stats st;
	struct one o;
	int fd;

	P = sysconf(_SC_PAGESIZE);
	fd = open_cache(MRRC_MODE_MODEL, MRRC_POLICY_NONE, 1024, 1024);
	ASSERT_LE(0, fd);
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(MRRC_RESULT_MISS,
			  reg1(fd, BASE, 2 * P, RW, MRRC_REG_RELEASE).req.result);
	o = reg1(fd, BASE, 2 * P, RW, 0);
	ASSERT_EQ(1, stats(fd).inuse_regions);
	ASSERT_EQ(1, mrrc_release(fd, &o.req.handle, 1));
	st = stats(fd);
	ASSERT_EQ(11, st.registrations);
	ASSERT_EQ(11, st.deregistrations);
	ASSERT_EQ(0, st.cached_regions);
	close(fd);
}

/* The slow paths are traced. */
TEST(tracepoints)
{
	const char *t = "/sys/kernel/tracing";
	int fd;

	if (access("/sys/kernel/tracing/events/mrrc", F_OK))
		SKIP(return, "tracefs not mounted");
	ASSERT_EQ(0, sh("echo 1 > %s/events/mrrc/enable && echo > %s/trace", t, t));
	P = sysconf(_SC_PAGESIZE);
	fd = open_cache(MRRC_MODE_MODEL, MRRC_POLICY_LRU, 4, 100);
	ASSERT_LE(0, fd);
	for (int i = 0; i < 6; i++)
		ASSERT_EQ(0, reg1(fd, BASE + i * P, P, RW, MRRC_REG_RELEASE).ret);
	close(fd);
	ASSERT_EQ(0, sh("echo 0 > %s/events/mrrc/enable", t));
	ASSERT_EQ(6, count_lines("cat /sys/kernel/tracing/trace", "mrrc_miss:"));
	ASSERT_EQ(2, count_lines("cat /sys/kernel/tracing/trace",
				 "mrrc_evict: pid="));
	ASSERT_EQ(6, count_lines("cat /sys/kernel/tracing/trace",
				 "npages=1 access=0x1 miss registered=1"));
}

/* The in-kernel API, exercised by its test module. */
TEST(kernel_api)
{
	char path[512], *slash;
	const char *ko = getenv("MRRC_KO");
	int fd, ret, err, unload, before;

	ASSERT_NE(NULL, ko);
	snprintf(path, sizeof(path), "%s", ko);
	slash = strrchr(path, '/');
	ASSERT_NE(NULL, slash);
	snprintf(slash + 1, sizeof(path) - (slash + 1 - path), "mrrc_ktest.ko");
	before = count_lines("dmesg", "mrrc_ktest: 1 devices, 38 passed, 0 failed");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("%s", path);
	ret = syscall(__NR_finit_module, fd, "", 0);
	err = errno;
	close(fd);
	/* Unload before judging, so that a failure leaves mrrc unloadable. */
	unload = ret ? 0 : syscall(__NR_delete_module, "mrrc_ktest", O_NONBLOCK);
	ASSERT_EQ(0, ret) TH_LOG("mrrc_ktest failed: %s", strerror(err));
	ASSERT_EQ(0, unload);
	ASSERT_EQ(before + 1, count_lines("dmesg",
					  "mrrc_ktest: 1 devices, 38 passed, 0 failed"));
}

TEST(unbound_context)
{
	struct mrrc_cache_stats st;
	struct one o;
	int fd = mrrc_open(0);

	ASSERT_LE(0, fd);
	o = reg1(fd, BASE, 4096, RW, 0);
	ASSERT_EQ(-ENXIO, o.ret);
	ASSERT_EQ(-ENXIO, mrrc_cache_stats(fd, &st));
	ASSERT_EQ(-ENXIO, mrrc_flush(fd));
	close(fd);
}

/* ---- real memory (ordinary registration) -------------------------------- */

static long vm_pin_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Wait (up to 5 s) for the reaper to drop invalidated regions. */
static int wait_regions(int fd, uint64_t want)
{
	for (int i = 0; i < 500; i++) {
		if (stats(fd).cached_regions == want)
			return 0;
		usleep(10000);
	}
	return -1;
}

/*
 * Wait (up to 5 s) until the cache holds @want pages pinned: in fast mode
 * a region that leaves keeps its pages pinned until its LOCAL_INV chain
 * has completed, which the module does not wait for (async_inval).
 */
static int wait_pinned(int fd, uint64_t want)
{
	for (int i = 0; i < 500; i++) {
		if (stats(fd).pinned_pages == want)
			return 0;
		usleep(10000);
	}
	return -1;
}

FIXTURE(real) {
	int fd;
	char *buf;
	size_t len;
	long pin0;
	bool set_async;		/* async_inval changed: back to Y */
};

FIXTURE_VARIANT(real) {
	uint32_t mode;
};

FIXTURE_VARIANT_ADD(real, ordinary) {
	.mode = MRRC_MODE_ORDINARY,
};

FIXTURE_VARIANT_ADD(real, fast) {
	.mode = MRRC_MODE_FAST,
};

FIXTURE_SETUP(real)
{
	P = sysconf(_SC_PAGESIZE);
	self->len = 16 * P;
	self->fd = open_cache(variant->mode, MRRC_POLICY_MRE, 4096, 1024);
	ASSERT_LE(0, self->fd);
	self->buf = mmap(NULL, self->len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	self->pin0 = vm_pin_kb();
}

FIXTURE_TEARDOWN(real)
{
	munmap(self->buf, self->len);
	close(self->fd);
	if (self->set_async)
		param_rw("async_inval", "Y", 0, 1);
}

TEST_F(real, registration_pins_and_flush_unpins)
{
	struct one o = reg1(self->fd, (uintptr_t)self->buf, self->len, RW, 0);

	ASSERT_EQ(0, o.ret);
	ASSERT_EQ(MRRC_RESULT_MISS, o.req.result);
	ASSERT_NE(0, o.seg[0].lkey);
	ASSERT_EQ(16, stats(self->fd).pinned_pages);
	ASSERT_EQ(self->pin0 + (long)(self->len / 1024), vm_pin_kb());
	ASSERT_EQ(1, mrrc_release(self->fd, &o.req.handle, 1));
	/* Released: cached and pinned still. */
	ASSERT_EQ(self->pin0 + (long)(self->len / 1024), vm_pin_kb());
	ASSERT_EQ(MRRC_RESULT_SUBSET,
		  reg1(self->fd, (uintptr_t)self->buf + P, P, RW,
		       MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(1, mrrc_flush(self->fd));
	ASSERT_EQ(self->pin0, vm_pin_kb());
	ASSERT_EQ(0, stats(self->fd).pinned_pages);
}

/*
 * A real mode measures its cost figures (kmod/cost.c): after a window of
 * registrations of 1 to 16 pages and of one-region batches the papers'
 * a and b are gone and a' is 0 (the measured model charges unpinning per
 * region).  A configuration read back and passed again keeps the
 * measuring, and so does any with MRRC_CACHE_MEASURE_COSTS, whose figures
 * are ignored; a figure that changes without it stops the measuring, and
 * every figure then stays as it was however much is registered;
 * MRRC_CACHE_MEASURE_COSTS starts it again; switching to model mode puts
 * the papers' figures back, under any the caller changes (passing back
 * the measured ones read changes none).
 */
TEST_F(real, costs_measured)
{
	struct mrrc_cache_config cfg = { 0 }, set = { .reg_ns_per_op = 5 };
	uint32_t b;

	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	ASSERT_EQ(MRRC_CACHE_COSTS_MEASURED, cfg.flags);
	ASSERT_EQ(770, cfg.reg_ns_per_page);
	ASSERT_EQ(7420, cfg.reg_ns_per_op);
	ASSERT_EQ(220, cfg.dereg_ns_per_page);

	reg_flush_cycle(_metadata, self->fd, (uintptr_t)self->buf, 40);
	memset(&cfg, 0, sizeof(cfg));
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	EXPECT_EQ(MRRC_CACHE_COSTS_MEASURED, cfg.flags);
	EXPECT_EQ(0, cfg.dereg_ns_per_page);
	EXPECT_TRUE(cfg.reg_ns_per_page != 770 || cfg.reg_ns_per_op != 7420);

	/* Read, change the policy, pass it all back: still measured. */
	cfg.policy = MRRC_POLICY_LRU;
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	EXPECT_EQ(MRRC_CACHE_COSTS_MEASURED, cfg.flags);
	EXPECT_EQ(MRRC_POLICY_LRU, cfg.policy);

	/* Straight to the ioctl: COSTS_MEASURED is ignored in, others not. */
	ASSERT_EQ(MRRC_CACHE_COSTS_MEASURED, cfg.flags);
	cfg.size = sizeof(cfg);
	ASSERT_EQ(0, raw_ioctl(self->fd, MRRC_IOC_CACHE_CONFIG, &cfg));
	EXPECT_EQ(MRRC_CACHE_COSTS_MEASURED, cfg.flags);
	cfg.flags = 1U << 2;
	ASSERT_EQ(-EOPNOTSUPP,
		  raw_ioctl(self->fd, MRRC_IOC_CACHE_CONFIG, &cfg));

	/* With MEASURE_COSTS a figure passed is ignored. */
	b = cfg.reg_ns_per_op;
	cfg.flags = MRRC_CACHE_MEASURE_COSTS;
	cfg.reg_ns_per_op = b + 1;
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	EXPECT_EQ(MRRC_CACHE_COSTS_MEASURED, cfg.flags);
	EXPECT_EQ(b, cfg.reg_ns_per_op);

	ASSERT_EQ(0, mrrc_cache_config(self->fd, &set));
	ASSERT_EQ(5, set.reg_ns_per_op);
	ASSERT_EQ(0, set.flags);
	reg_flush_cycle(_metadata, self->fd, (uintptr_t)self->buf, 80);
	memset(&cfg, 0, sizeof(cfg));
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	EXPECT_EQ(0, memcmp(&set, &cfg, sizeof(cfg)));

	/* Measured again from the figures of the moment. */
	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = MRRC_CACHE_MEASURE_COSTS;
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	EXPECT_EQ(MRRC_CACHE_COSTS_MEASURED, cfg.flags);
	EXPECT_EQ(5, cfg.reg_ns_per_op);
	reg_flush_cycle(_metadata, self->fd, (uintptr_t)self->buf, 40);
	memset(&cfg, 0, sizeof(cfg));
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	EXPECT_NE(5, cfg.reg_ns_per_op);

	/* To model with the measured figures read back: the papers'. */
	memset(&cfg, 0, sizeof(cfg));
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	cfg.mode = MRRC_MODE_MODEL;
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	expect_papers_costs(_metadata, &cfg);

	/* Back to the real mode, measured; to model with one figure set. */
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = variant->mode;
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	EXPECT_EQ(MRRC_CACHE_COSTS_MEASURED, cfg.flags);
	reg_flush_cycle(_metadata, self->fd, (uintptr_t)self->buf, 40);
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = MRRC_MODE_MODEL;
	cfg.reg_ns_per_page = 99;
	ASSERT_EQ(0, mrrc_cache_config(self->fd, &cfg));
	EXPECT_EQ(99, cfg.reg_ns_per_page);
	cfg.reg_ns_per_page = 770;	/* the others are the papers' */
	expect_papers_costs(_metadata, &cfg);
}

/* munmap, then new memory at the same address: never a stale hit. */
TEST_F(real, munmap_invalidates)
{
	struct one o = reg1(self->fd, (uintptr_t)self->buf, self->len, RW,
			    MRRC_REG_RELEASE);
	char *again;

	ASSERT_EQ(0, o.ret);
	ASSERT_EQ(0, munmap(self->buf, self->len));
	ASSERT_EQ(0, wait_regions(self->fd, 0));
	ASSERT_EQ(1, stats(self->fd).invalidations);
	ASSERT_EQ(0, wait_pinned(self->fd, 0));
	ASSERT_EQ(self->pin0, vm_pin_kb());

	again = mmap(self->buf, self->len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(self->buf, again);
	o = reg1(self->fd, (uintptr_t)self->buf, self->len, RW,
		 MRRC_REG_RELEASE);
	ASSERT_EQ(0, o.ret);
	ASSERT_EQ(MRRC_RESULT_MISS, o.req.result);
}

TEST_F(real, partial_munmap_invalidates)
{
	ASSERT_EQ(0, reg1(self->fd, (uintptr_t)self->buf, self->len, RW,
			  MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, munmap(self->buf + 4 * P, P));
	ASSERT_EQ(0, wait_regions(self->fd, 0));
	ASSERT_EQ(0, wait_pinned(self->fd, 0));
	ASSERT_EQ(self->pin0, vm_pin_kb());
	/* The unmapped hole cannot be registered any more. */
	ASSERT_NE(0, reg1(self->fd, (uintptr_t)self->buf, self->len, RW,
			  MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, reg1(self->fd, (uintptr_t)self->buf, 4 * P, RW,
			  MRRC_REG_RELEASE).ret);
}

TEST_F(real, mremap_invalidates)
{
	char *moved;

	ASSERT_EQ(0, reg1(self->fd, (uintptr_t)self->buf, self->len, RW,
			  MRRC_REG_RELEASE).ret);
	moved = mremap(self->buf, self->len, self->len,
		       MREMAP_MAYMOVE | MREMAP_FIXED, self->buf + 64 * P);
	ASSERT_NE(MAP_FAILED, moved);
	ASSERT_EQ(0, wait_regions(self->fd, 0));
	ASSERT_EQ(0, wait_pinned(self->fd, 0));
	ASSERT_EQ(self->pin0, vm_pin_kb());
	self->buf = moved;
}

TEST_F(real, madv_dontneed_invalidates)
{
	ASSERT_EQ(0, reg1(self->fd, (uintptr_t)self->buf, self->len, RW,
			  MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, madvise(self->buf, self->len, MADV_DONTNEED));
	ASSERT_EQ(0, wait_regions(self->fd, 0));
	ASSERT_EQ(0, wait_pinned(self->fd, 0));
	ASSERT_EQ(self->pin0, vm_pin_kb());
	ASSERT_EQ(1, stats(self->fd).invalidations);
}

/*
 * fork() and mprotect() change what the CPU may do with a page, not which
 * page it is: the region stays, pinned, and the next request is a hit.
 */
TEST_F(real, fork_keeps_the_region)
{
	int st;
	pid_t pid;

	ASSERT_EQ(0, reg1(self->fd, (uintptr_t)self->buf, self->len, RW,
			  MRRC_REG_RELEASE).ret);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		memset(self->buf, 7, self->len);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(self->fd, (uintptr_t)self->buf, self->len, RW,
		       MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(0, stats(self->fd).invalidations);
	ASSERT_LE(1, stats(self->fd).notifier_kept);
	ASSERT_EQ(self->pin0 + (long)(self->len / 1024), vm_pin_kb());
}

/*
 * An mprotect() round trip keeps a region the device only reads.  A
 * writable one goes, so that registering memory made read-only for
 * writing fails as it does uncached.
 */
TEST_F(real, mprotect_keeps_read_regions_and_rechecks_writable_ones)
{
	struct mrrc_cache_stats st;
	struct one o;

	ASSERT_EQ(0, reg1(self->fd, (uintptr_t)self->buf, self->len, 0,
			  MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, reg1(self->fd, (uintptr_t)self->buf, self->len, RW,
			  MRRC_REG_RELEASE).ret);
	ASSERT_EQ(0, mprotect(self->buf, self->len, PROT_READ));
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(self->fd, (uintptr_t)self->buf, self->len, 0,
		       MRRC_REG_RELEASE).req.result);
	o = reg1(self->fd, (uintptr_t)self->buf, self->len, RW,
		 MRRC_REG_RELEASE);
	ASSERT_NE(0, o.ret) TH_LOG("a writable hit on read-only memory");
	ASSERT_EQ(0, mprotect(self->buf, self->len, PROT_READ | PROT_WRITE));
	ASSERT_EQ(MRRC_RESULT_EXACT,
		  reg1(self->fd, (uintptr_t)self->buf, self->len, 0,
		       MRRC_REG_RELEASE).req.result);
	ASSERT_EQ(MRRC_RESULT_MISS,
		  reg1(self->fd, (uintptr_t)self->buf, self->len, RW,
		       MRRC_REG_RELEASE).req.result);
	st = stats(self->fd);
	EXPECT_EQ(1, st.invalidations);
	EXPECT_EQ(3, st.registrations);
	EXPECT_LE(2, st.notifier_kept);
}

/* A thousand mprotect() round trips: not one registration more. */
TEST_F(real, mprotect_churn_registers_nothing)
{
	int i;

	for (i = 0; i < 1000; i++) {
		ASSERT_EQ(0, mprotect(self->buf, self->len,
				      i & 1 ? PROT_READ | PROT_WRITE :
					      PROT_READ));
		ASSERT_EQ(0, reg1(self->fd, (uintptr_t)self->buf, P, 0,
				  MRRC_REG_RELEASE).ret);
	}
	ASSERT_EQ(1, stats(self->fd).registrations);
	ASSERT_EQ(0, stats(self->fd).invalidations);
}

/* An invalidated region in use stays pinned until its handle goes. */
TEST_F(real, invalidated_in_use_goes_on_release)
{
	struct one o = reg1(self->fd, (uintptr_t)self->buf, self->len, RW, 0);

	ASSERT_EQ(0, o.ret);
	ASSERT_EQ(0, madvise(self->buf, self->len, MADV_DONTNEED));
	ASSERT_EQ(0, wait_regions(self->fd, 0));
	ASSERT_EQ(16, stats(self->fd).pinned_pages);
	ASSERT_EQ(1, mrrc_release(self->fd, &o.req.handle, 1));
	ASSERT_EQ(0, wait_pinned(self->fd, 0));
	ASSERT_EQ(self->pin0, vm_pin_kb());
}

TEST_F(real, other_process_gets_eperm)
{
	int st;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		_exit(reg1(self->fd, (uintptr_t)self->buf, P, RW, 0).ret != -EPERM);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(0, WEXITSTATUS(st));
}

TEST_F(real, read_only_memory)
{
	char *ro = mmap(NULL, P, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(0, reg1(self->fd, (uintptr_t)ro, P, 0, MRRC_REG_RELEASE).ret);
	ASSERT_NE(0, reg1(self->fd, (uintptr_t)ro, P, RW, MRRC_REG_RELEASE).ret);
	munmap(ro, P);
}

TEST_F(real, unmapped_memory_fails_cleanly)
{
	struct one o = reg1(self->fd, 0x1000, P, RW, 0);

	ASSERT_NE(0, o.ret);
	ASSERT_EQ(0, stats(self->fd).pinned_pages);
	ASSERT_EQ(0, stats(self->fd).cached_regions);
}

/* A reused fast MR never comes back with the same key. */
TEST_F(real, fresh_key_on_reuse)
{
	struct one a, b;

	if (variant->mode != MRRC_MODE_FAST)
		SKIP(return, "FRWR only");
	a = reg1(self->fd, (uintptr_t)self->buf, 4 * P, RW, MRRC_REG_RELEASE);
	ASSERT_EQ(0, a.ret);
	ASSERT_EQ(1, mrrc_flush(self->fd));
	b = reg1(self->fd, (uintptr_t)self->buf, 4 * P, RW, MRRC_REG_RELEASE);
	ASSERT_EQ(0, b.ret);
	ASSERT_NE(a.seg[0].rkey, b.seg[0].rkey);
	ASSERT_EQ(2, stats(self->fd).reg_wrs);
	ASSERT_LE(1, stats(self->fd).pool_mrs);
}

/* One flush of many regions is one LOCAL_INV chain. */
TEST_F(real, one_invalidate_chain_per_batch)
{
	struct mrrc_cache_stats st;

	if (variant->mode != MRRC_MODE_FAST)
		SKIP(return, "FRWR only");
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(0, reg1(self->fd, (uintptr_t)self->buf + i * P, P, RW,
				  MRRC_REG_RELEASE).ret);
	ASSERT_EQ(10, mrrc_flush(self->fd));
	st = stats(self->fd);
	ASSERT_EQ(10, st.inv_wrs);
	ASSERT_EQ(1, st.inv_chains);
	ASSERT_EQ(0, st.qp_resets);
	ASSERT_EQ(self->pin0, vm_pin_kb());
}

/*
 * This process's chains posted without waiting, summed over its caches
 * (debugfs "caches", column inv_async); -1 if there is none.
 */
static long debugfs_inv_async(void)
{
	return debugfs_cache_column(18);
}

/*
 * Eviction does not wait for its invalidation (async_inval=Y): the pages
 * stay pinned until the LOCAL_INV chain has completed and are unpinned in
 * the background, with no further call.  With async_inval=N they are
 * unpinned before the evicting call returns.  FLUSH waits either way.
 */
TEST_F(real, evicted_pages_are_unpinned_in_the_background)
{
	struct mrrc_cache_stats st;

	if (variant->mode != MRRC_MODE_FAST)
		SKIP(return, "FRWR only");
	if (debugfs_inv_async() < 0)
		SKIP(return, "needs root and debugfs");
	self->set_async = true;
	for (int async = 0; async < 2; async++) {
		int fd = open_cache(MRRC_MODE_FAST, MRRC_POLICY_LRU, 4096, 4);
		int i;

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, param_rw("async_inval", async ? "Y" : "N", 0, 1));
		for (i = 0; i < 16; i++)
			ASSERT_EQ(0, reg1(fd, (uintptr_t)self->buf + i * P, P,
					  RW, MRRC_REG_RELEASE).ret);
		st = stats(fd);
		ASSERT_EQ(4, st.cached_regions);
		ASSERT_EQ(12, st.evictions);
		/* LRU evicts one region at a time: a chain each. */
		ASSERT_EQ(12, st.inv_chains);
		if (!async) {
			ASSERT_EQ(4, st.pinned_pages);
			ASSERT_EQ(0, debugfs_inv_async());
		} else {
			ASSERT_EQ(0, wait_pinned(fd, 4))
				TH_LOG("evicted pages still pinned after 5 s");
			ASSERT_EQ(12, debugfs_inv_async());
		}
		ASSERT_EQ(self->pin0 + (long)(4 * P / 1024), vm_pin_kb());
		ASSERT_EQ(0, stats(fd).qp_resets);
		ASSERT_EQ(4, mrrc_flush(fd));
		ASSERT_EQ(0, stats(fd).pinned_pages);
		ASSERT_EQ(self->pin0, vm_pin_kb());
		close(fd);
	}
}

/*
 * A process that evicts and dies at once, without FLUSH or close: the
 * context's end waits for whatever chains are still in flight (how many
 * are is up to the device's timing), and nothing stays pinned or
 * allocated.
 */
TEST_F(real, exit_with_invalidations_in_flight)
{
	struct mrrc_cache_stats g0 = { .size = sizeof(g0) }, g1 = g0;
	int st;
	pid_t pid;

	if (variant->mode != MRRC_MODE_FAST)
		SKIP(return, "FRWR only");
	ASSERT_EQ(0, mrrc_global_stats(self->fd, &g0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = open_cache(MRRC_MODE_FAST, MRRC_POLICY_MRE, 4096, 4);

		if (fd < 0)
			_exit(10);
		for (int r = 0; r < 20; r++)
			for (int i = 0; i < 16; i++)
				if (reg1(fd, (uintptr_t)self->buf + i * P, P,
					 r & 1 ? RW : 0, MRRC_REG_RELEASE).ret)
					_exit(11);
		_exit(0);	/* no FLUSH, no close */
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));
	ASSERT_EQ(0, mrrc_global_stats(self->fd, &g1));
	ASSERT_EQ(g0.pinned_pages, g1.pinned_pages);
	ASSERT_EQ(g0.pool_mrs, g1.pool_mrs);
	ASSERT_LT(g0.inv_chains, g1.inv_chains);
}

/* Larger than the biggest fast MR: registered the ordinary way. */
TEST_F(real, large_region_falls_back)
{
	size_t len = 1024 * P;
	char *big;
	struct one o;

	if (variant->mode != MRRC_MODE_FAST)
		SKIP(return, "FRWR only");
	big = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, big);
	o = reg1(self->fd, (uintptr_t)big, len, RW, MRRC_REG_RELEASE);
	ASSERT_EQ(0, o.ret);
	ASSERT_EQ(1, stats(self->fd).fast_fallbacks);
	ASSERT_EQ(1, mrrc_flush(self->fd));
	ASSERT_EQ(self->pin0, vm_pin_kb());
	munmap(big, len);
}

/* Over RLIMIT_MEMLOCK without CAP_IPC_LOCK: clean error, nothing pinned. */
TEST(memlock_limit)
{
	int st;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		struct rlimit rl = { 64 * 1024, 64 * 1024 };
		size_t len = 1 << 20;
		char *buf;
		int fd;
		struct one o;

		if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
		    setgid(65534) || setuid(65534))
			_exit(10);
		buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		for (uint32_t mode = MRRC_MODE_ORDINARY; mode <= MRRC_MODE_FAST;
		     mode += MRRC_MODE_FAST - MRRC_MODE_ORDINARY) {
			fd = open_cache(mode, MRRC_POLICY_MRE, 4096, 1024);
			if (fd < 0 || buf == MAP_FAILED)
				_exit(11);
			/* 256 pages: within one fast MR class. */
			o = reg1(fd, (uintptr_t)buf, 256 * 4096, RW, 0);
			if (o.ret != -ENOMEM || o.req.status != -ENOMEM)
				_exit(12);
			if (vm_pin_kb() != 0 || stats(fd).pinned_pages)
				_exit(13);
			/* Under the limit it works. */
			o = reg1(fd, (uintptr_t)buf, 8 * 4096, RW, 0);
			if (o.ret)
				_exit(14);
			close(fd);
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));
}

/* A process killed while it registers leaves no MR behind. */
TEST(killed_while_registering)
{
	int mr0 = count_lines("rdma resource show mr 2>/dev/null", "mrn");
	int ctx0 = debugfs_contexts();
	int st, pipefd[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		size_t len = 256 * 4096;
		int fd = open_cache(MRRC_MODE_FAST, MRRC_POLICY_LRU, 64, 1024);
		char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
				 -1, 0);

		if (fd < 0 || buf == MAP_FAILED)
			_exit(1);
		for (int i = 0;; i++) {
			reg1(fd, (uintptr_t)buf + (i % 200) * 4096,
			     (1 + i % 7) * 4096, RW, (i & 3) ? 0 : MRRC_REG_RELEASE);
			if (i == 100 && write(pipefd[1], "x", 1) != 1)
				_exit(1);
		}
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	usleep(50000);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(ctx0, debugfs_contexts());
	ASSERT_EQ(mr0, count_lines("rdma resource show mr 2>/dev/null", "mrn"));
	close(pipefd[0]);
	close(pipefd[1]);
}

struct worker {
	int fd;
	char *buf;
	int errors;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	unsigned int seed = (uintptr_t)w;

	for (int i = 0; i < 300; i++) {
		size_t off = (rand_r(&seed) % 60) * 4096;
		struct one o = reg1(w->fd, (uintptr_t)w->buf + off,
				    (1 + rand_r(&seed) % 4) * 4096, RW, 0);

		if (o.ret || !segs_cover(&o) ||
		    mrrc_release(w->fd, &o.req.handle, 1) != 1)
			w->errors++;
	}
	return NULL;
}

/* Many threads on one fd, several processes each with their own. */
TEST(concurrent_threads_and_processes)
{
	pid_t pids[3];
	int st;

	for (int p = 0; p < 3; p++) {
		pids[p] = fork();
		ASSERT_LE(0, pids[p]);
		if (!pids[p]) {
			int fd = open_cache(p ? MRRC_MODE_FAST :
					    MRRC_MODE_ORDINARY, MRRC_POLICY_MRE,
					    128, 1024);
			struct worker w[4];
			pthread_t th[4];
			int errors = 0;

			if (fd < 0)
				_exit(100);
			for (int t = 0; t < 4; t++) {
				w[t].fd = fd;
				w[t].errors = 0;
				w[t].buf = mmap(NULL, 64 * 4096,
						PROT_READ | PROT_WRITE,
						MAP_PRIVATE | MAP_ANONYMOUS |
						MAP_POPULATE, -1, 0);
				pthread_create(&th[t], NULL, worker_fn, &w[t]);
			}
			for (int t = 0; t < 4; t++) {
				pthread_join(th[t], NULL);
				errors += w[t].errors;
			}
			if (stats(fd).handles || stats(fd).cached_pages > 128)
				errors++;
			_exit(errors ? 1 : 0);
		}
	}
	for (int p = 0; p < 3; p++) {
		ASSERT_EQ(pids[p], waitpid(pids[p], &st, 0));
		ASSERT_TRUE(WIFEXITED(st));
		ASSERT_EQ(0, WEXITSTATUS(st));
	}
}

TEST_HARNESS_MAIN
