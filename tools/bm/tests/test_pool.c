// SPDX-License-Identifier: GPL-2.0-only
/*
 * The buffer manager's frames (pool.c): FIX/UNFIX modes, fixed frames
 * never taken, 2Q's lists and its resistance to a scan (against LRU),
 * every FIX seeing the last UNFIXed contents with dirty pages written
 * back, a discarded page's frame freed, the tier's errors losing
 * nothing, and threads sharing a pool.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pool.h"

#define PAGES	64
#define PSIZE	16

/* A tier in memory: the pages' bytes, and the calls it had. */
struct store {
	uint8_t page[PAGES][PSIZE];
	unsigned long reads, writes[PAGES];
	int fail_read, fail_write;	/* the next call fails with this */
};

static int st_read(void *arg, uint64_t page, void *buf)
{
	struct store *s = arg;

	if (s->fail_read)
		return s->fail_read;
	assert_true(page < PAGES);
	memcpy(buf, s->page[page], PSIZE);
	__atomic_add_fetch(&s->reads, 1, __ATOMIC_RELAXED);
	return 0;
}

static int st_write(void *arg, uint64_t page, const void *buf)
{
	struct store *s = arg;

	if (s->fail_write)
		return s->fail_write;
	assert_true(page < PAGES);
	memcpy(s->page[page], buf, PSIZE);
	__atomic_add_fetch(&s->writes[page], 1, __ATOMIC_RELAXED);
	return 0;
}

static struct bm_pool *make(struct store *s, unsigned int frames)
{
	const struct bm_tier t = { st_read, st_write, s };
	struct bm_pool *p;

	assert_int_equal(bm_pool_create(&p, frames, PSIZE, &t), 0);
	return p;
}

static void touch(struct bm_pool *p, uint64_t page)
{
	void *f;

	assert_int_equal(bm_fix(p, page, false, &f), 0);
	assert_int_equal(bm_unfix(p, page, false), 0);
}

/* Pages 0..@n-1 UNFIXed dirty, page i's bytes all 0x40 + i. */
static void fill_dirty(struct bm_pool *p, unsigned int n)
{
	unsigned int i;
	void *f;

	for (i = 0; i < n; i++) {
		assert_int_equal(bm_fix(p, i, true, &f), 0);
		memset(f, 0x40 + i, PSIZE);
		assert_int_equal(bm_unfix(p, i, true), 0);
	}
}

static void test_modes(void **state)
{
	static struct store s;
	const struct bm_tier t = { st_read, st_write, &s };
	struct bm_pool *p = make(&s, 8), *q;
	void *a, *b;

	(void)state;
	assert_int_equal(bm_pool_create(&q, 3, PSIZE, &t), -EINVAL);
	assert_int_equal(bm_pool_create(&q, 8, 0, &t), -EINVAL);
	/* shared fixes coexist; an exclusive one waits for none */
	assert_int_equal(bm_fix(p, 1, false, &a), 0);
	assert_int_equal(bm_fix(p, 1, false, &b), 0);
	assert_ptr_equal(a, b);
	assert_int_equal(bm_fix(p, 1, true, &b), -EBUSY);
	assert_int_equal(bm_unfix(p, 1, true), -EINVAL);	/* dirty, shared */
	assert_int_equal(bm_unfix(p, 1, false), 0);
	assert_int_equal(bm_unfix(p, 1, false), 0);
	assert_int_equal(bm_unfix(p, 1, false), -EINVAL);	/* not fixed */
	assert_int_equal(bm_unfix(p, 2, false), -EINVAL);	/* not here */
	assert_int_equal(bm_fix(p, 1, true, &a), 0);
	assert_int_equal(bm_fix(p, 1, false, &b), -EBUSY);
	assert_int_equal(bm_fix(p, 1, true, &b), -EBUSY);
	memset(a, 0x5a, PSIZE);
	assert_int_equal(bm_unfix(p, 1, true), 0);
	assert_int_equal(bm_flush(p), 0);
	assert_int_equal(s.writes[1], 1);
	assert_int_equal(s.page[1][0], 0x5a);
	assert_int_equal(bm_flush(p), 0);			/* clean now */
	assert_int_equal(s.writes[1], 1);
	bm_pool_destroy(p);
}

/* Fixed frames are never taken: with all fixed, a new page waits. */
static void test_fixed_stay(void **state)
{
	static struct store s;
	struct bm_pool *p = make(&s, 8);
	struct bm_pool_stats st;
	unsigned int i;
	void *f;

	(void)state;
	for (i = 0; i < 8; i++)
		assert_int_equal(bm_fix(p, i, false, &f), 0);
	assert_int_equal(bm_fix(p, 8, false, &f), -EBUSY);
	assert_int_equal(bm_unfix(p, 5, false), 0);
	assert_int_equal(bm_fix(p, 8, false, &f), 0);
	assert_int_equal(bm_pool_where(p, 5), 0);	/* the one unfixed went */
	for (i = 0; i < 8; i++)
		assert_int_equal(bm_pool_where(p, i), i == 5 ? 0 : 1);
	bm_pool_stats(p, &st);
	assert_int_equal(st.evictions, 1);
	bm_pool_destroy(p);
}

/*
 * A discarded page (a copy its home invalidated) frees its frame without
 * a write-back, dirty or not, and without a place in A1out: the next
 * page takes the free frame (no eviction), and the discarded page comes
 * back from the tier into A1in, not Am.  A fixed page is not discarded.
 */
static void test_discard(void **state)
{
	static struct store s;
	struct bm_pool *p = make(&s, 4);
	struct bm_pool_stats st;
	unsigned int i;
	void *f;

	(void)state;
	fill_dirty(p, 4);
	assert_int_equal(bm_fix(p, 1, false, &f), 0);
	assert_int_equal(bm_pool_discard(p, 1), -EBUSY);
	assert_int_equal(bm_unfix(p, 1, false), 0);
	assert_int_equal(bm_pool_discard(p, 2), 0);
	assert_int_equal(bm_pool_discard(p, 2), -ENOENT);
	assert_int_equal(bm_pool_discard(p, 9), -ENOENT);
	assert_int_equal(bm_pool_where(p, 2), 0);
	assert_int_equal(s.writes[2], 0);		/* dropped, not written */
	touch(p, 5);					/* into the free frame */
	bm_pool_stats(p, &st);
	assert_int_equal(st.discards, 1);
	assert_int_equal(st.evictions, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(bm_pool_where(p, i), i == 2 ? 0 : 1);
	s.reads = 0;
	touch(p, 2);					/* from the tier again */
	assert_int_equal(s.reads, 1);
	assert_int_equal(bm_pool_where(p, 2), 1);	/* A1in: not remembered */
	assert_int_equal(s.page[2][0], 0);
	assert_int_equal(bm_flush(p), 0);
	assert_int_equal(s.writes[2], 0);
	for (i = 0; i < 4; i++)
		if (i != 2)
			assert_int_equal(s.page[i][0], 0x40 + i);
	bm_pool_destroy(p);
}

/*
 * 2Q's lists: pages seen once queue in A1in; one that left A1in and
 * comes back while remembered goes to Am, and stays there while pages
 * seen once come and go.
 */
static void test_two_queues(void **state)
{
	static struct store s;
	struct bm_pool *p = make(&s, 8);	/* A1in 2, A1out 4 */
	struct bm_pool_stats st;
	unsigned int i;

	(void)state;
	for (i = 0; i < 8; i++)
		touch(p, i);
	touch(p, 8);			/* A1in over its share: page 0 goes */
	assert_int_equal(bm_pool_where(p, 0), 0);
	touch(p, 0);			/* remembered: to Am */
	assert_int_equal(bm_pool_where(p, 0), 2);
	bm_pool_stats(p, &st);
	assert_int_equal(st.to_am, 1);
	/* a scan of pages seen once never takes page 0 */
	for (i = 36; i < PAGES; i++)
		touch(p, i);
	assert_int_equal(bm_pool_where(p, 0), 2);
	/* a page forgotten by A1out comes back into A1in */
	touch(p, 1);
	assert_int_equal(bm_pool_where(p, 1), 1);
	bm_pool_destroy(p);
}

/*
 * Scan resistance against LRU: a hot set of 4 pages read once a round,
 * between scans of 14 pages read once: more than LRU's 16 frames hold
 * between two reads of a hot page, so LRU hits nothing; 2Q remembers a
 * hot page that left A1in, takes it into Am when it comes back, and
 * keeps it there while the scans go through A1in.
 */
static void test_scan_resistance(void **state)
{
	static struct store s;
	struct bm_pool *p = make(&s, 16);
	struct bm_pool_stats st;
	unsigned int round, i, lru_hits = 0, lru[16], nlru = 0, k, j;
	uint64_t page;

	(void)state;
	for (round = 0; round < 20; round++)
		for (k = 0; k < 18; k++)	/* hot 0..3, then a scan */
			touch(p, k < 4 ? k : 4 + (round * 14 + k - 4) % (PAGES - 4));
	bm_pool_stats(p, &st);
	/* the same accesses on an LRU of 16 frames */
	for (round = 0; round < 20; round++) {
		for (k = 0; k < 18; k++) {
			page = k < 4 ? k : 4 + (round * 14 + k - 4) % (PAGES - 4);
			for (j = 0; j < nlru && lru[j] != page; j++)
				;
			if (j < nlru)
				lru_hits++;
			else if (nlru < 16)
				j = nlru++;
			else
				j = nlru - 1;		/* the least recent goes */
			for (; j > 0; j--)
				lru[j] = lru[j - 1];
			lru[0] = page;
		}
	}
	print_message("2Q: %llu hits of %u; LRU: %u\n",
		      (unsigned long long)st.hits, 20 * 18, lru_hits);
	for (i = 0; i < 4; i++)
		assert_int_equal(bm_pool_where(p, i), 2);
	assert_int_equal(lru_hits, 0);
	assert_true(st.hits >= 4 * 16);
	bm_pool_destroy(p);
}

/* Random FIX/UNFIX: every FIX sees the last bytes UNFIXed dirty. */
static void test_contents(void **state)
{
	static struct store s;
	static uint8_t model[PAGES][PSIZE];
	struct bm_pool *p = make(&s, 8);
	struct bm_pool_stats st;
	unsigned int seed = 5, i, dirtied = 0;
	uint64_t page;
	uint8_t *f;
	bool dirty;

	(void)state;
	for (i = 0; i < PAGES; i++)
		memset(model[i], i, PSIZE), memset(s.page[i], i, PSIZE);
	for (i = 0; i < 20000; i++) {
		page = rand_r(&seed) % 3 ? rand_r(&seed) % 12 : rand_r(&seed) % PAGES;
		dirty = rand_r(&seed) % 3 == 0;
		assert_int_equal(bm_fix(p, page, dirty, (void **)&f), 0);
		assert_memory_equal(f, model[page], PSIZE);
		if (dirty) {
			memset(f, (int)(i & 0xff), PSIZE);
			memcpy(model[page], f, PSIZE);
			dirtied++;
		}
		assert_int_equal(bm_unfix(p, page, dirty), 0);
	}
	assert_int_equal(bm_flush(p), 0);
	for (i = 0; i < PAGES; i++)
		assert_memory_equal(s.page[i], model[i], PSIZE);
	bm_pool_stats(p, &st);
	print_message("%llu hits, %llu misses, %llu evictions, %llu write-backs for %u dirtying fixes\n",
		      (unsigned long long)st.hits, (unsigned long long)st.misses,
		      (unsigned long long)st.evictions,
		      (unsigned long long)st.writebacks, dirtied);
	assert_true(st.writebacks <= dirtied && st.writebacks > 0);
	assert_int_equal(st.misses, s.reads);
	bm_pool_destroy(p);
}

/*
 * The tier failing, nothing lost: a dirty victim that cannot be written
 * stays in its frame, dirty; a page that cannot be read is in no frame,
 * the clean victim it was to replace gone (its frame free).
 */
static void test_tier_errors(void **state)
{
	static struct store s;
	struct bm_pool *p = make(&s, 4);
	struct bm_pool_stats a, b;
	unsigned int i;
	void *f;

	(void)state;
	fill_dirty(p, 4);
	bm_pool_stats(p, &a);
	s.fail_write = -ENOSPC;		/* the dirty victim cannot be written */
	assert_int_equal(bm_fix(p, 9, false, &f), -ENOSPC);
	s.fail_write = 0;
	bm_pool_stats(p, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	for (i = 0; i < 4; i++)
		assert_int_equal(bm_pool_where(p, i), 1);
	assert_int_equal(bm_pool_where(p, 9), 0);
	/* the victim (page 0, oldest) is written, then the read fails */
	s.fail_read = -EIO;
	assert_int_equal(bm_fix(p, 9, false, &f), -EIO);
	s.fail_read = 0;
	bm_pool_stats(p, &b);
	assert_int_equal(b.writebacks, a.writebacks + 1);
	assert_int_equal(b.evictions, a.evictions + 1);
	assert_int_equal(b.misses, a.misses);
	assert_int_equal(s.writes[0], 1);
	assert_int_equal(s.page[0][0], 0x40);
	assert_int_equal(bm_pool_where(p, 0), 0);
	assert_int_equal(bm_pool_where(p, 9), 0);
	assert_int_equal(bm_fix(p, 9, false, &f), 0);	/* and then it works */
	assert_int_equal(bm_unfix(p, 9, false), 0);
	assert_int_equal(bm_flush(p), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(s.writes[i], 1);
		assert_int_equal(s.page[i][0], 0x40 + i);
	}
	/* a dirty page fixed exclusively is not written: -EBUSY */
	assert_int_equal(bm_fix(p, 1, true, &f), 0);
	assert_int_equal(bm_unfix(p, 1, true), 0);
	assert_int_equal(bm_fix(p, 2, true, &f), 0);
	assert_int_equal(bm_unfix(p, 2, true), 0);
	assert_int_equal(bm_fix(p, 2, true, &f), 0);
	assert_int_equal(bm_flush(p), -EBUSY);
	assert_int_equal(s.writes[1], 2);
	assert_int_equal(s.writes[2], 1);
	assert_int_equal(bm_unfix(p, 2, false), 0);
	assert_int_equal(bm_flush(p), 0);
	assert_int_equal(s.writes[2], 2);
	bm_pool_destroy(p);
}

/*
 * An exclusive FIX waiting for a page's readers keeps new readers out:
 * with a shared fix held and a writer waiting (seen in the stats, not
 * by timing), a shared bm_fix() is -EBUSY; once the reader unfixes, the
 * writer has the page, and after it, readers again.
 */
struct writer {
	struct bm_pool *p;
	int r;
	bool released;		/* the reader had unfixed when it got it */
	bool *flag;
};

static void *write_one(void *arg)
{
	struct writer *w = arg;
	void *f;

	w->r = bm_fix_wait(w->p, 1, true, &f);
	w->released = __atomic_load_n(w->flag, __ATOMIC_ACQUIRE);
	if (!w->r)
		w->r = bm_unfix(w->p, 1, false);
	return NULL;
}

static void test_writer_first(void **state)
{
	static struct store s;
	struct bm_pool *p = make(&s, 8);
	struct bm_pool_stats st;
	struct writer w = { .p = p };
	bool flag = false;
	pthread_t t;
	void *f;

	(void)state;
	w.flag = &flag;
	assert_int_equal(bm_fix(p, 1, false, &f), 0);
	assert_int_equal(pthread_create(&t, NULL, write_one, &w), 0);
	do {
		sched_yield();
		bm_pool_stats(p, &st);
	} while (!st.waiting);
	assert_int_equal(bm_fix(p, 1, false, &f), -EBUSY);	/* writer first */
	assert_int_equal(bm_fix(p, 2, false, &f), 0);		/* other pages go on */
	assert_int_equal(bm_unfix(p, 2, false), 0);
	__atomic_store_n(&flag, true, __ATOMIC_RELEASE);
	assert_int_equal(bm_unfix(p, 1, false), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(w.r, 0);
	assert_true(w.released);
	assert_int_equal(bm_fix(p, 1, false, &f), 0);
	assert_int_equal(bm_unfix(p, 1, false), 0);
	bm_pool_stats(p, &st);
	assert_true(st.waits >= 1);
	assert_int_equal(st.waiting, 0);
	bm_pool_destroy(p);
}

/*
 * Threads: several FIX and UNFIX random pages at once over few frames,
 * waiting where they conflict.  A page's holders are counted beside the
 * pool: an exclusive fix finds none, a shared one no exclusive holder.
 * Every page holds a version and its complement; a FIX finds the version
 * last UNFIXed dirty (the writers count under their exclusive fix), and
 * after a flush the tier holds every page's last version.  The tier is
 * slow (a yield per call), so I/O of one page overlaps FIXes of others,
 * and a quarter of the fixes are held over a yield.
 */
#define THREADS	4
#define T_OPS	20000
#define T_PAGES	48

struct shared {
	struct bm_pool *p;
	struct store *s;
	int holders[T_PAGES];		/* -1: one exclusive holder */
	uint64_t version[T_PAGES];	/* last UNFIXed dirty */
	unsigned long writes, bad;
};

/* (called from the workers: no cmocka assertion, which must not jump) */
static int slow_read(void *arg, uint64_t page, void *buf)
{
	struct store *s = arg;

	sched_yield();
	if (page >= T_PAGES)
		return -EINVAL;
	memcpy(buf, s->page[page], PSIZE);
	__atomic_add_fetch(&s->reads, 1, __ATOMIC_RELAXED);
	return 0;
}

static int slow_write(void *arg, uint64_t page, const void *buf)
{
	struct store *s = arg;

	sched_yield();
	if (page >= T_PAGES)
		return -EINVAL;
	memcpy(s->page[page], buf, PSIZE);
	__atomic_add_fetch(&s->writes[page], 1, __ATOMIC_RELAXED);
	return 0;
}

static void *worker(void *arg)
{
	struct shared *sh = arg;
	unsigned int seed = (unsigned int)(uintptr_t)&seed;
	uint64_t v[2];
	unsigned int i;
	int h;

	for (i = 0; i < T_OPS; i++) {
		uint64_t page = rand_r(&seed) % 3 ? rand_r(&seed) % 8 :
				rand_r(&seed) % T_PAGES;
		bool excl = rand_r(&seed) % 4 == 0;
		uint8_t *f;

		if (bm_fix_wait(sh->p, page, excl, (void **)&f)) {
			__atomic_add_fetch(&sh->bad, 1, __ATOMIC_RELAXED);
			break;
		}
		if (excl) {
			h = 0;
			if (!__atomic_compare_exchange_n(&sh->holders[page], &h, -1,
							 false, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE))
				__atomic_add_fetch(&sh->bad, 1, __ATOMIC_RELAXED);
		} else if (__atomic_fetch_add(&sh->holders[page], 1,
					      __ATOMIC_ACQ_REL) < 0) {
			__atomic_add_fetch(&sh->bad, 1, __ATOMIC_RELAXED);
		}
		if (rand_r(&seed) % 4 == 0)	/* hold it a while */
			sched_yield();
		memcpy(v, f, sizeof(v));
		if (v[0] != sh->version[page] || v[1] != ~v[0])
			__atomic_add_fetch(&sh->bad, 1, __ATOMIC_RELAXED);
		if (excl) {
			v[0] = ++sh->version[page];
			v[1] = ~v[0];
			memcpy(f, v, sizeof(v));
			__atomic_add_fetch(&sh->writes, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&sh->holders[page], 0, __ATOMIC_RELEASE);
		} else {
			__atomic_fetch_sub(&sh->holders[page], 1, __ATOMIC_ACQ_REL);
		}
		if (bm_unfix(sh->p, page, excl)) {
			__atomic_add_fetch(&sh->bad, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	return NULL;
}

static void test_threads(void **state)
{
	static struct store s;
	static struct shared sh;
	const struct bm_tier t = { slow_read, slow_write, &s };
	struct bm_pool_stats st;
	pthread_t th[THREADS];
	unsigned int i;
	uint64_t v[2];

	(void)state;
	for (i = 0; i < T_PAGES; i++) {
		v[0] = 0;
		v[1] = ~0ull;
		memcpy(s.page[i], v, sizeof(v));
	}
	assert_int_equal(bm_pool_create(&sh.p, 6, PSIZE, &t), 0);
	sh.s = &s;
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, worker, &sh), 0);
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	assert_int_equal(sh.bad, 0);
	assert_int_equal(bm_flush(sh.p), 0);
	for (i = 0; i < T_PAGES; i++) {
		memcpy(v, s.page[i], sizeof(v));
		assert_int_equal(v[0], sh.version[i]);
		assert_int_equal(v[1], ~v[0]);
	}
	bm_pool_stats(sh.p, &st);
	print_message("%u threads: %llu hits, %llu misses, %llu write-backs for %lu writes\n",
		      THREADS, (unsigned long long)st.hits,
		      (unsigned long long)st.misses,
		      (unsigned long long)st.writebacks, sh.writes);
	assert_int_equal(st.hits + st.misses, THREADS * T_OPS);
	assert_int_equal(st.misses, s.reads);
	bm_pool_destroy(sh.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_fixed_stay),
		cmocka_unit_test(test_discard),
		cmocka_unit_test(test_two_queues),
		cmocka_unit_test(test_scan_resistance),
		cmocka_unit_test(test_contents),
		cmocka_unit_test(test_tier_errors),
		cmocka_unit_test(test_writer_first),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
