// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc_ktest - exercises mrrc's in-kernel API (mrrc_kapi.h) on every RDMA
 * device present when it loads, the way a kernel storage client would use
 * it: its own PD, kmalloc() and vmalloc() buffers; and from several
 * threads at once, hits (taken without the cache's mutex) racing
 * invalidations, flushes and evictions.  Prints "mrrc_ktest: N passed, N
 * failed" and refuses to load if anything failed.
 */
#include <linux/completion.h>
#include <linux/gfp.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

#include "mrrc_kapi.h"

static unsigned int passed, failed, devices;

#define CHECK(cond)							\
	do {								\
		if (cond) {						\
			passed++;					\
		} else {						\
			failed++;					\
			pr_err("mrrc_ktest: %s:%d: failed: %s\n",	\
			       __func__, __LINE__, #cond);		\
		}							\
	} while (0)

#define RW MRRC_ACCESS_LOCAL_WRITE

static void ktest_cases(struct mrrc_kcache *kc, char *km, char *vm)
{
	struct mrrc_cache_config cfg = { .mode = MRRC_MODE_ORDINARY };
	struct mrrc_cache_stats st = {};
	struct mrrc_seg segs[8];
	u32 n = 0, h = 0, h2;
	int ret;

	/* Direct-mapped memory: miss, exact, subset, handles. */
	ret = mrrc_kcache_reg(kc, km, 4 * PAGE_SIZE, RW, 0, segs, 8, &n, &h);
	CHECK(ret == MRRC_RESULT_MISS);
	CHECK(n == 1 && h != 0);
	CHECK(segs[0].addr == (unsigned long)km &&
	      segs[0].length == 4 * PAGE_SIZE && segs[0].lkey);
	ret = mrrc_kcache_reg(kc, km, 4 * PAGE_SIZE, RW, MRRC_REG_RELEASE,
			      segs, 8, &n, &h2);
	CHECK(ret == MRRC_RESULT_EXACT && h2 == 0);
	ret = mrrc_kcache_reg(kc, km + PAGE_SIZE + 8, 100, RW,
			      MRRC_REG_RELEASE, segs, 8, &n, &h2);
	CHECK(ret == MRRC_RESULT_SUBSET);
	CHECK(segs[0].addr == (unsigned long)km + PAGE_SIZE + 8 &&
	      segs[0].length == 100);
	CHECK(mrrc_kcache_release(kc, h) == 0);
	CHECK(mrrc_kcache_release(kc, h) == -ENOENT);

	/* vmalloc memory: pages 0-7 cached, 4-11 asked: only 8-11 registered. */
	ret = mrrc_kcache_reg(kc, vm, 8 * PAGE_SIZE, RW, MRRC_REG_RELEASE,
			      segs, 8, &n, &h2);
	CHECK(ret == MRRC_RESULT_MISS);
	ret = mrrc_kcache_reg(kc, vm + 4 * PAGE_SIZE, 8 * PAGE_SIZE, RW,
			      MRRC_REG_RELEASE, segs, 8, &n, &h2);
	CHECK(ret == MRRC_RESULT_OVERLAP && n == 2);
	CHECK(segs[0].lkey != segs[1].lkey);
	CHECK(segs[1].addr == (unsigned long)vm + 8 * PAGE_SIZE);

	/* Before "freeing" the buffer: both regions over it go. */
	CHECK(mrrc_kcache_invalidate(kc, vm, 16 * PAGE_SIZE) == 2);
	ret = mrrc_kcache_reg(kc, vm, 8 * PAGE_SIZE, RW, MRRC_REG_RELEASE,
			      segs, 8, &n, &h2);
	CHECK(ret == MRRC_RESULT_MISS);

	/* Not kernel memory; not ordinary registration. */
	CHECK(mrrc_kcache_reg(kc, NULL, PAGE_SIZE, RW, 0, segs, 8, &n,
			      &h2) == -EFAULT);
	CHECK(mrrc_kcache_reg(kc, (void *)0x10000, PAGE_SIZE, RW, 0, segs, 8,
			      &n, &h2) == -EFAULT);
	CHECK(mrrc_kcache_reg(kc, km, PAGE_SIZE, RW, 0x8, segs, 8, &n,
			      &h2) == -EINVAL);
	CHECK(mrrc_kcache_config(kc, &cfg) == -EINVAL);

	/* A page array: non-contiguous pages, one uncached registration. */
	{
		struct page *pg[3] = {};
		u32 ph = 0;
		int k;

		for (k = 0; k < 3; k++)
			pg[k] = alloc_page(GFP_KERNEL);
		if (pg[0] && pg[1] && pg[2]) {
			ret = mrrc_kcache_reg_pages(kc, pg, 3, RW, &segs[0],
						    &ph);
			CHECK(ret == 0 && ph != 0);
			CHECK(segs[0].addr == 0 &&
			      segs[0].length == 3 * PAGE_SIZE && segs[0].lkey);
			CHECK(mrrc_kcache_release(kc, ph) == 0);
		} else {
			failed++;
		}
		CHECK(mrrc_kcache_reg_pages(kc, pg, 0, RW, &segs[0], &ph) ==
		      -EINVAL);
		for (k = 0; k < 3; k++)
			if (pg[k])
				__free_page(pg[k]);
	}

	mrrc_kcache_stats(kc, &st);
	CHECK(st.registrations == 5 && st.reg_wrs == 5);
	CHECK(st.invalidations == 2 && st.pinned_pages == 0);
	CHECK(mrrc_kcache_flush(kc) == 2);
	mrrc_kcache_stats(kc, &st);
	CHECK(st.registrations == st.deregistrations);
	CHECK(st.cached_regions == 0 && st.handles == 0);
	CHECK(st.inv_chains == 3);
}

/* Threads that register and release, and one that churns the cache. */
#define KT_THREADS	4
#define KT_ITERS	3000
#define KT_SLOTS	8	/* of 8 pages each */

struct ktest_worker {
	struct mrrc_kcache *kc;
	char *buf;
	bool churn;
	unsigned int errors;
	unsigned int hits;
	struct completion done;
};

/* The segments cover [a, a + len) in order, each with a key. */
static bool ktest_covers(const struct mrrc_seg *segs, u32 n, char *a,
			 size_t len)
{
	u64 at = (unsigned long)a;
	u32 i;

	for (i = 0; i < n; i++) {
		if (segs[i].addr != at || !segs[i].lkey)
			return false;
		at += segs[i].length;
	}
	return n && at == (unsigned long)a + len;
}

static void ktest_churn_once(struct ktest_worker *w, u32 r)
{
	struct mrrc_cache_config cfg = {};
	unsigned int slot = r % KT_SLOTS;

	switch ((r >> 8) % 3) {
	case 0:
		mrrc_kcache_invalidate(w->kc, w->buf + slot * 8 * PAGE_SIZE,
				       8 * PAGE_SIZE);
		break;
	case 1:
		mrrc_kcache_flush(w->kc);
		break;
	default:
		/*
		 * Shrinking evicts whatever no handle holds (-EBUSY if the
		 * regions in use do not fit); growing always works.
		 */
		cfg.max_pages = (r & BIT(16)) ? 24 : 1024;
		if (mrrc_kcache_config(w->kc, &cfg) && !(r & BIT(16)))
			w->errors++;
		break;
	}
}

static int ktest_worker_fn(void *arg)
{
	struct ktest_worker *w = arg;
	struct mrrc_seg segs[8];
	unsigned int i;
	u32 n, h;
	int ret;

	for (i = 0; i < KT_ITERS; i++) {
		u32 r = get_random_u32();
		unsigned int first = (r % KT_SLOTS) * 8 + (r >> 4) % 4;
		size_t len = (1 + (r >> 8) % 4) * PAGE_SIZE - (r >> 12) % 64;
		char *a = w->buf + first * PAGE_SIZE + (r >> 20) % 64;

		if (w->churn) {
			ktest_churn_once(w, r);
		} else {
			ret = mrrc_kcache_reg(w->kc, a, len, RW, 0, segs, 8,
					      &n, &h);
			/* The churner may have shrunk the cache under us. */
			if (ret == -ENOSPC)
				continue;
			if (ret < 0 || !ktest_covers(segs, n, a, len)) {
				w->errors++;
				continue;
			}
			w->hits += ret == MRRC_RESULT_EXACT ||
				   ret == MRRC_RESULT_SUBSET;
			if (mrrc_kcache_release(w->kc, h))
				w->errors++;
		}
		cond_resched();
	}
	kthread_complete_and_exit(&w->done, 0);
}

static void ktest_concurrent(struct mrrc_kcache *kc, char *buf)
{
	struct ktest_worker w[KT_THREADS + 1] = {};
	struct mrrc_cache_config cfg = { .max_pages = 1024 };
	struct mrrc_cache_stats st = {};
	unsigned int i, errors = 0, hits = 0;

	for (i = 0; i <= KT_THREADS; i++) {
		struct task_struct *t;

		w[i].kc = kc;
		w[i].buf = buf;
		w[i].churn = i == KT_THREADS;
		init_completion(&w[i].done);
		t = kthread_run(ktest_worker_fn, &w[i], "mrrc_ktest/%u", i);
		if (IS_ERR(t)) {
			failed++;
			complete(&w[i].done);
		}
	}
	for (i = 0; i <= KT_THREADS; i++) {
		wait_for_completion(&w[i].done);
		errors += w[i].errors;
		hits += w[i].hits;
	}
	CHECK(errors == 0);
	CHECK(mrrc_kcache_config(kc, &cfg) == 0);
	mrrc_kcache_stats(kc, &st);
	CHECK(st.handles == 0 && st.inuse_regions == 0);
	CHECK(st.hit_exact + st.hit_subset >= hits);
	/* Every hit here is inside one region: most went without the lock. */
	CHECK(st.hit_unlocked > 0);
	CHECK(st.cached_pages <= 1024);
	mrrc_kcache_flush(kc);
	mrrc_kcache_stats(kc, &st);
	CHECK(st.cached_regions == 0 && st.cached_pages == 0);
	CHECK(st.registrations == st.deregistrations);
	pr_info("mrrc_ktest: concurrent: %u hits seen, %llu of %llu requests hit without the lock, %llu evictions, %llu invalidations\n",
		hits, st.hit_unlocked, st.requests, st.evictions,
		st.invalidations);
}

static int ktest_add(struct ib_device *dev)
{
	struct mrrc_kcache *kc;
	struct ib_pd *pd;
	char *km, *vm;

	devices++;
	pd = ib_alloc_pd(dev, 0);
	km = kmalloc(4 * PAGE_SIZE, GFP_KERNEL);
	vm = vmalloc(KT_SLOTS * 8 * PAGE_SIZE + PAGE_SIZE);
	if (IS_ERR(pd) || !km || !vm) {
		failed++;
		goto out;
	}
	kc = mrrc_kcache_create(pd);
	CHECK(!IS_ERR(kc));
	if (!IS_ERR(kc)) {
		ktest_cases(kc, km, vm);
		mrrc_kcache_destroy(kc);
	}
	kc = mrrc_kcache_create(pd);
	CHECK(!IS_ERR(kc));
	if (!IS_ERR(kc)) {
		ktest_concurrent(kc, vm);
		mrrc_kcache_destroy(kc);
	}
out:
	vfree(vm);
	kfree(km);
	if (!IS_ERR(pd))
		ib_dealloc_pd(pd);
	return 0;
}

static void ktest_remove(struct ib_device *dev, void *client_data)
{
}

static struct ib_client ktest_client = {
	.name = "mrrc_ktest",
	.add = ktest_add,
	.remove = ktest_remove,
};

static int __init mrrc_ktest_init(void)
{
	int ret = ib_register_client(&ktest_client);

	if (ret)
		return ret;
	ib_unregister_client(&ktest_client);
	pr_info("mrrc_ktest: %u devices, %u passed, %u failed\n", devices,
		passed, failed);
	if (!devices)
		return -ENODEV;
	return failed ? -EINVAL : 0;
}

static void __exit mrrc_ktest_exit(void)
{
}

module_init(mrrc_ktest_init);
module_exit(mrrc_ktest_exit);

MODULE_DESCRIPTION("Tests of mrrc's in-kernel API");
MODULE_LICENSE("GPL");
