// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc_fuzz - memory: the arena that registrations and operations use,
 * each thread's private buffers with a guard page behind them, a
 * read-only view of writable pages, and pointers that are no memory at all.
 *
 * The kernel writes through the pointers it is given (structures,
 * segments, completions, RDMA into registered ranges), so every pointer
 * this fuzzer hands out is one of: the arena (only the churn thread
 * touches it from user space, so the kernel may scribble there), a
 * thread's own buffers (a guard page stops a runaway copy), a read-only
 * view, or something that is not mapped user memory.  Never the stack or
 * the heap with a wrong size: a kernel write there would crash the fuzzer,
 * and that is no finding.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

/*
 * Reserved, inaccessible address space around the arena: any range that
 * starts in the arena and is at most 2^31 bytes long (the longest
 * operation) ends in memory of the arena or in this reservation, never in
 * other memory of the process.
 */
#define FZ_RESV_BEFORE	(1UL << 30)
#define FZ_RESV_AFTER	((4UL << 30) + 4 * FZ_CHUNK)

static uint8_t *fz_reserve(size_t len)
{
	void *p = mmap(NULL, len, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* @len bytes of private read-write memory, then a guard page. */
static uint8_t *fz_guarded(size_t len)
{
	uint8_t *p = fz_reserve(len + FZ_PAGE);

	if (p && mprotect(p, len, PROT_READ | PROT_WRITE)) {
		munmap(p, len + FZ_PAGE);
		return NULL;
	}
	return p;
}

static int fz_arena_init(void)
{
	size_t total = FZ_RESV_BEFORE + FZ_ARENA + FZ_RESV_AFTER + FZ_CHUNK;
	uint8_t *r = fz_reserve(total);
	uintptr_t base;
	unsigned int i;

	if (!r)
		return -errno;
	base = ((uintptr_t)r + FZ_RESV_BEFORE + FZ_CHUNK - 1) & ~(FZ_CHUNK - 1);
	fz.arena = (uint8_t *)base;
	/* One chunk of reserved gap, then the room mremap moves chunks to. */
	fz.spare = fz.arena + FZ_ARENA + FZ_CHUNK;

	for (i = 0; i < FZ_NCHUNK; i++) {
		uint8_t *c = fz.arena + (size_t)i * FZ_CHUNK;

		if (mmap(c, FZ_CHUNK, PROT_READ | PROT_WRITE,
			 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != c)
			return -errno;
		/* Faulted in: a read-only pin of untouched memory pins the
		 * zero page, which is less interesting.
		 */
		memset(c, (int)i + 1, FZ_CHUNK);
		fz.chunk[i].rw = true;
	}
	return 0;
}

int fz_mem_init(void)
{
	int ret = fz_arena_init();

	if (ret)
		return ret;
	fz.shared = mmap(NULL, sizeof(*fz.shared), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (fz.shared == MAP_FAILED)
		return -errno;
	/* A file to map read-only into the arena; optional. */
	fz.exe_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	return 0;
}

/* The read-only view: one memfd mapped twice, each with a guard page. */
static int fz_ro_views(struct fz_thread *t)
{
	int fd = memfd_create("mrrc_fuzz", MFD_CLOEXEC);
	uint8_t *w, *u;
	int ret = 0;

	if (fd < 0)
		return -errno;
	w = fz_reserve(FZ_RO_SIZE + FZ_PAGE);
	u = fz_reserve(FZ_RO_SIZE + FZ_PAGE);
	if (ftruncate(fd, FZ_RO_SIZE) || !w || !u ||
	    mmap(w, FZ_RO_SIZE, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_SHARED,
		 fd, 0) != w ||
	    mmap(u, FZ_RO_SIZE, PROT_READ, MAP_FIXED | MAP_SHARED, fd, 0) != u)
		ret = -ENOMEM;
	close(fd);
	t->ro_w = w;
	t->ro_u = u;
	return ret;
}

int fz_thread_mem(struct fz_thread *t)
{
	t->pad = fz_guarded(FZ_PAD_SIZE);
	t->arr = fz_guarded(FZ_ARR_SIZE);
	t->scratch = fz_guarded(FZ_ARR_SIZE);
	if (!t->pad || !t->arr || !t->scratch)
		return -ENOMEM;
	return fz_ro_views(t);
}

uint64_t fz_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- values ------------------------------------------------------------ */

static const uint64_t fz_interesting[] = {
	0, 1, 2, 7, 8, 63, 64, 255, 256, 4095, 4096, 4097, 65535, 65536,
	65537, 1UL << 20, 1UL << 21, 0x7fffffff, 0x80000000, 0x80000001,
	0xffffffff, 0x100000000ULL, 1ULL << 47, 1ULL << 63, ~0ULL, ~0ULL - 1,
	~0ULL - 4095,
};

uint64_t fz_interesting64(struct fz_thread *t)
{
	if (fz_one_in(&t->rng, 4))
		return fz_rnd(&t->rng);
	return fz_interesting[fz_below(&t->rng, FZ_ARRAY_SIZE(fz_interesting))];
}

uint32_t fz_interesting32(struct fz_thread *t)
{
	return (uint32_t)fz_interesting64(t);
}

/* ---- addresses ---------------------------------------------------------- */

/*
 * A range of @len bytes for a registration or an operation: inside the
 * arena (whatever the churn thread has done to it), or, unless @sane,
 * running over one of its ends.
 */
uint64_t fz_arena_addr(struct fz_thread *t, uint64_t len, bool sane)
{
	uint64_t room = len < FZ_ARENA ? FZ_ARENA - len : 0, off;
	uintptr_t base = (uintptr_t)fz.arena;

	if (sane || fz_below(&t->rng, 4)) {
		off = fz_rnd(&t->rng) % (room + 1);
		switch (fz_below(&t->rng, 4)) {
		case 0:
			off &= ~(FZ_CHUNK - 1);
			break;
		case 1:
		case 2:
			off &= ~(FZ_PAGE - 1);
			break;
		}
		return base + off;
	}
	switch (fz_below(&t->rng, 3)) {
	case 0:
		return base + FZ_ARENA - fz_range(&t->rng, 1, FZ_PAGE);
	case 1:
		return base - fz_range(&t->rng, 1, 2 * FZ_PAGE);
	default:
		return (uintptr_t)fz.spare + fz_below(&t->rng, FZ_CHUNK);
	}
}

/*
 * A pointer the kernel cannot use, or can use only in part.  Never random
 * user addresses above 4 GiB: they might be this process's own memory.
 */
uint64_t fz_bad_ptr(struct fz_thread *t)
{
	static const uint64_t fixed[] = {
		0, 1, 8, 0xfff, 0x1000, 0x10000,
		0x0000800000000000ULL,	/* the first non-canonical address */
		0x8000000000000000ULL,
		0xffff800000000000ULL,	/* kernel space */
		0xffff888000000000ULL,	/* the direct map */
		0xffffffff81000000ULL,	/* kernel text */
		0xffffffffff600000ULL,	/* the vsyscall page */
		~0ULL, ~0ULL - 7, ~0ULL - 4095,
	};

	switch (fz_below(&t->rng, 8)) {
	case 0:
	case 1:
		return fixed[fz_below(&t->rng, FZ_ARRAY_SIZE(fixed))];
	case 2:
		return (uintptr_t)(t->pad + FZ_PAD_SIZE);	/* the guard */
	case 3:
		return (uintptr_t)(t->arr + FZ_ARR_SIZE) -
		       fz_range(&t->rng, 1, 64);	/* runs into it */
	case 4:
		return fz_arena_addr(t, FZ_PAGE, false);
	case 5:
		return (uintptr_t)t->ro_u + fz_below(&t->rng, FZ_RO_SIZE);
	case 6:
		return fz_rnd(&t->rng) & 0xffffffffULL;	/* nothing there */
	default:
		return fz_rnd(&t->rng) | (1ULL << 63);
	}
}

/* ---- placing arrays ------------------------------------------------------ */

/* Usually normal memory; a broken placement when @broken. */
int fz_pick_place(struct fz_thread *t, int broken)
{
	if (!broken)
		return FZ_PL_NORMAL;
	return 1 + (int)fz_below(&t->rng, FZ_PL_NPLACE - 1);
}

static uint64_t fz_place_normal(struct fz_thread *t, const void *src,
				size_t len, void **view, size_t *vlen)
{
	size_t off = (t->arr_used + 63) & ~63UL, n;

	if (off + len > FZ_ARR_SIZE)
		off = len < FZ_ARR_SIZE ? FZ_ARR_SIZE - len : 0;
	n = FZ_MIN(len, FZ_ARR_SIZE - off);
	if (src)
		memcpy(t->arr + off, src, n);
	t->arr_used = off + n;
	*view = t->arr + off;
	*vlen = n;
	return (uintptr_t)(t->arr + off);
}

static uint64_t fz_place_ro(struct fz_thread *t, const void *src,
			    size_t len, void **view, size_t *vlen)
{
	size_t off = (t->ro_used + 63) & ~63UL, n;

	if (off >= FZ_RO_SIZE)
		off = 0;
	n = FZ_MIN(len, FZ_RO_SIZE - off);
	if (src)
		memcpy(t->ro_w + off, src, n);
	t->ro_used = FZ_MAX(t->ro_used, off + n);
	*view = t->ro_w + off;
	*vlen = n;
	return (uintptr_t)(t->ro_u + off);
}

/* Only the first bytes are mapped: the rest of the array is in the guard. */
static uint64_t fz_place_edge(struct fz_thread *t, const void *src,
			      size_t len, void **view, size_t *vlen)
{
	size_t n = len > 1 ? fz_below(&t->rng, (uint32_t)FZ_MIN(len, FZ_ARR_SIZE)) : 0;
	uint8_t *p = t->arr + FZ_ARR_SIZE - n;

	if (src)
		memcpy(p, src, n);
	*view = p;
	*vlen = n;
	return (uintptr_t)p;
}

/*
 * Copy @len bytes from @src (NULL: an output array, nothing to copy) to
 * where @how says; returns the pointer for the kernel.  @view and @vlen are
 * the part this process can read back afterwards.
 */
uint64_t fz_place(struct fz_thread *t, const void *src, size_t len, int how,
		  void **view, size_t *vlen)
{
	*view = NULL;
	*vlen = 0;
	switch (how) {
	case FZ_PL_NORMAL:
		return fz_place_normal(t, src, len, view, vlen);
	case FZ_PL_RO:
		return fz_place_ro(t, src, len, view, vlen);
	case FZ_PL_EDGE:
		return fz_place_edge(t, src, len, view, vlen);
	default:
		return fz_bad_ptr(t);
	}
}

/* Zero what the last call wrote, so tails stay zero unless broken. */
void fz_clean(struct fz_thread *t)
{
	if (t->pad_dirty) {
		memset(t->pad, 0, FZ_MIN(t->pad_dirty, FZ_PAD_SIZE));
		t->pad_dirty = 0;
	}
	if (t->edge_dirty) {
		size_t n = FZ_MIN(t->edge_dirty, FZ_PAD_SIZE);

		memset(t->pad + FZ_PAD_SIZE - n, 0, n);
		t->edge_dirty = 0;
	}
	if (t->ro_used) {
		memset(t->ro_w, 0, FZ_MIN(t->ro_used, FZ_RO_SIZE));
		t->ro_used = 0;
	}
	t->arr_used = 0;
}
