// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc_ktest - exercises mrrc's in-kernel API (mrrc_kapi.h) on every RDMA
 * device present when it loads, the way a kernel storage client would use
 * it: its own PD, kmalloc() and vmalloc() buffers.  Prints "mrrc_ktest:
 * N passed, N failed" and refuses to load if anything failed.
 */
#include <linux/gfp.h>
#include <linux/module.h>
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

static int ktest_add(struct ib_device *dev)
{
	struct mrrc_kcache *kc;
	struct ib_pd *pd;
	char *km, *vm;

	devices++;
	pd = ib_alloc_pd(dev, 0);
	km = kmalloc(4 * PAGE_SIZE, GFP_KERNEL);
	vm = vmalloc(16 * PAGE_SIZE);
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
