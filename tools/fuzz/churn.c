// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc_fuzz - memory churn under live registrations.
 *
 * One thread owns the mappings of the arena and changes them while the
 * ioctl threads register arena ranges and post operations on them: new
 * memory at the same address (MAP_FIXED, private, shared or a file),
 * munmap, mremap away and back or onto another chunk, MREMAP_DONTUNMAP,
 * shrinking and growing, MADV_DONTNEED and the other advice, mprotect,
 * writes that break COW sharing, mlock, and fork: the child writes the
 * memory, makes fuzz calls on the inherited contexts (whose caches belong
 * to another mm) and in contexts of its own, and exits or is killed.
 *
 * Only this thread touches arena memory from user space, so it always
 * knows what it may write; a chunk's addresses are always covered by some
 * mapping of ours (an inaccessible one stands for "unmapped"), so nothing
 * else of the process can land there.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

#ifndef MADV_COLD
#define MADV_COLD		20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP	4
#endif

/* Forks at most this often. */
#define FZ_FORK_GAP_NS		100000000ULL
/* A forked child makes at most this many steps, in at most this long. */
#define FZ_CHILD_STEPS		50
#define FZ_CHILD_SECONDS	60

static uint8_t *chunk_addr(unsigned int i)
{
	return fz.arena + (size_t)i * FZ_CHUNK;
}

/* Cover [p, p + len) with an inaccessible mapping: "unmapped", but ours. */
static void fz_hold(void *p, size_t len)
{
	mmap(p, len, PROT_NONE,
	     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

/* A random page-aligned piece of chunk @i; the whole chunk at times. */
static size_t chunk_sub(struct fz_thread *t, unsigned int i, uint8_t **p)
{
	size_t pages = FZ_CHUNK / FZ_PAGE, first, n;

	if (fz_one_in(&t->rng, 4)) {
		*p = chunk_addr(i);
		return FZ_CHUNK;
	}
	first = fz_below(&t->rng, (uint32_t)pages);
	n = fz_range(&t->rng, 1, FZ_MIN(pages - first, 64));
	*p = chunk_addr(i) + first * FZ_PAGE;
	return n * FZ_PAGE;
}

static void chunk_touch(struct fz_thread *t, unsigned int i)
{
	uint8_t *p;
	size_t len;

	if (!fz.chunk[i].rw)
		return;
	len = chunk_sub(t, i, &p);
	memset(p, (int)fz_rnd(&t->rng), len);
}

static void chunk_forget(struct fz_chunk *c)
{
	c->rw = false;
	c->file = false;
	c->dontfork = false;
}

/* New memory at the chunk's address: a cache must never confuse it with
 * the old.
 */
static void churn_remap(struct fz_thread *t, unsigned int i)
{
	int flags = MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS;
	int prot = PROT_READ | PROT_WRITE, fd = -1;
	struct fz_chunk *c = &fz.chunk[i];
	uint32_t kind = fz_below(&t->rng, 10);

	if (kind == 9 && fz.exe_fd >= 0) {
		flags = MAP_FIXED | MAP_PRIVATE;
		prot = PROT_READ;
		fd = fz.exe_fd;
	} else if (kind >= 7) {
		flags = MAP_FIXED | MAP_SHARED | MAP_ANONYMOUS;
	}
	chunk_forget(c);
	if (mmap(chunk_addr(i), FZ_CHUNK, prot, flags, fd, 0) == MAP_FAILED) {
		fz_hold(chunk_addr(i), FZ_CHUNK);
		return;
	}
	c->rw = fd < 0;
	c->file = fd >= 0;
	if (fz_one_in(&t->rng, 2))
		chunk_touch(t, i);
}

static void churn_unmap(struct fz_thread *t, unsigned int i)
{
	uint8_t *p;
	size_t len = chunk_sub(t, i, &p);

	munmap(p, len);
	fz_hold(p, len);
	fz.chunk[i].rw = false;
}

/*
 * mremap(MREMAP_FIXED) unmaps the destination before it looks at the
 * source: when it fails (a source of several VMAs, say), the destination
 * may be gone.  Cover it again.
 */
static void *fz_mremap_fixed(void *from, void *to, int flags)
{
	void *p = mremap(from, FZ_CHUNK, FZ_CHUNK,
			 MREMAP_MAYMOVE | MREMAP_FIXED | flags, to);

	if (p == MAP_FAILED)
		fz_hold(to, FZ_CHUNK);
	return p;
}

/* mremap onto another chunk (whose memory goes), or away and back. */
static void churn_move(struct fz_thread *t, unsigned int i)
{
	unsigned int j = fz_below(&t->rng, FZ_NCHUNK);
	struct fz_chunk *c = &fz.chunk[i];
	uint8_t *home = chunk_addr(i);

	if (j != i && fz_one_in(&t->rng, 2)) {
		if (fz_mremap_fixed(home, chunk_addr(j), 0) == MAP_FAILED) {
			chunk_forget(&fz.chunk[j]);
			return;
		}
		fz_hold(home, FZ_CHUNK);
		fz.chunk[j] = *c;
		chunk_forget(c);
		return;
	}
	if (fz_mremap_fixed(home, fz.spare, 0) == MAP_FAILED)
		return;
	if (c->rw && fz_one_in(&t->rng, 2))
		memset(fz.spare, (int)fz_rnd(&t->rng), FZ_PAGE);
	if (mremap(fz.spare, FZ_CHUNK, FZ_CHUNK, MREMAP_MAYMOVE | MREMAP_FIXED,
		   home) == MAP_FAILED) {
		munmap(fz.spare, FZ_CHUNK);
		fz_hold(home, FZ_CHUNK);
		chunk_forget(c);
	}
	fz_hold(fz.spare, FZ_CHUNK);
}

/* The pages move away, the (now empty) mapping stays. */
static void churn_dontunmap(struct fz_thread *t, unsigned int i)
{
	(void)t;
	if (fz_mremap_fixed(chunk_addr(i), fz.spare,
			    MREMAP_DONTUNMAP) == MAP_FAILED)
		return;
	munmap(fz.spare, FZ_CHUNK);
	fz_hold(fz.spare, FZ_CHUNK);
}

/* Shrink in place, then grow back into the hole. */
static void churn_resize(struct fz_thread *t, unsigned int i)
{
	size_t keep = fz_range(&t->rng, 1, FZ_CHUNK / FZ_PAGE - 1) * FZ_PAGE;
	uint8_t *home = chunk_addr(i);

	if (mremap(home, FZ_CHUNK, keep, 0) == MAP_FAILED)
		return;
	if (mremap(home, keep, FZ_CHUNK, 0) == MAP_FAILED) {
		fz_hold(home + keep, FZ_CHUNK - keep);
		fz.chunk[i].rw = false;
	}
}

static void churn_dontneed(struct fz_thread *t, unsigned int i)
{
	uint8_t *p;
	size_t len = chunk_sub(t, i, &p);

	madvise(p, len, MADV_DONTNEED);
}

static void churn_madvise(struct fz_thread *t, unsigned int i)
{
	static const int advice[] = {
		MADV_FREE, MADV_COLD, MADV_PAGEOUT, MADV_HUGEPAGE,
		MADV_NOHUGEPAGE, MADV_WIPEONFORK, MADV_KEEPONFORK,
		MADV_DONTFORK, MADV_DOFORK, MADV_POPULATE_READ,
		MADV_POPULATE_WRITE, MADV_REMOVE, MADV_COLLAPSE,
		MADV_WILLNEED,
	};
	int adv = advice[fz_below(&t->rng, FZ_ARRAY_SIZE(advice))];
	struct fz_chunk *c = &fz.chunk[i];
	uint8_t *p;
	size_t len = chunk_sub(t, i, &p);

	if (madvise(p, len, adv))
		return;
	if (adv == MADV_DONTFORK)
		c->dontfork = true;
	else if (adv == MADV_DOFORK && len == FZ_CHUNK)
		c->dontfork = false;
}

static void churn_mprotect(struct fz_thread *t, unsigned int i)
{
	static const int prots[] = {
		PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE,
	};
	int prot = prots[fz_below(&t->rng, FZ_ARRAY_SIZE(prots))];
	struct fz_chunk *c = &fz.chunk[i];
	uint8_t *p;
	size_t len = chunk_sub(t, i, &p);

	if (mprotect(p, len, prot))
		return;
	/* Writable as a whole again only if all of it is anonymous. */
	c->rw = len == FZ_CHUNK && (prot & PROT_WRITE) && !c->file;
}

static void churn_mlock(struct fz_thread *t, unsigned int i)
{
	uint8_t *p;
	size_t len = chunk_sub(t, i, &p);

	switch (fz_below(&t->rng, 3)) {
	case 0:
		mlock(p, len);
		break;
	case 1:
		munlock(p, len);
		break;
	default:
		mlock2(p, len, MLOCK_ONFAULT);
		break;
	}
}

/* A child's counts go to the shared page, where the parent finds them. */
static void fz_child_account(struct fz_thread *t)
{
	unsigned int b, e;

	__atomic_add_fetch(&fz.shared->calls, t->calls, __ATOMIC_RELAXED);
	for (b = 0; b < FZ_NBUCKET; b++)
		for (e = 0; e <= FZ_ERRNO_MAX; e++)
			if (t->hist[b][e])
				__atomic_add_fetch(&fz.shared->hist[b][e],
						   t->hist[b][e],
						   __ATOMIC_RELAXED);
}

/*
 * The forked child: one thread, a copy of the parent's memory.  It writes
 * the arena (breaking COW sharing with pinned pages), makes fuzz calls on
 * the inherited contexts (their caches belong to the parent's mm) and in
 * contexts of its own, and exits with them open, or is killed.  Only
 * async-signal-safe calls from here on: no stdio, no malloc.
 */
static void __attribute__((noreturn)) fz_child(struct fz_thread *t)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	unsigned int i, n;

	fz.in_child = true;
	/* Not the parent's handler: a child that takes too long just dies. */
	sigaction(SIGALRM, &dfl, NULL);
	alarm(FZ_CHILD_SECONDS);
	t->rng.s = fz_splitmix(t->rng.s ^ 0xc41dULL) | 1;
	t->calls = 0;
	memset(t->hist, 0, sizeof(t->hist));
	for (i = 0; i < FZ_NCHUNK; i++)
		if (!fz.chunk[i].dontfork && fz_one_in(&t->rng, 2))
			chunk_touch(t, i);
	n = fz_below(&t->rng, FZ_CHILD_STEPS + 1);
	for (i = 0; i < n; i++)
		fz_step(t);
	if (fz_one_in(&t->rng, 4))
		for (i = 0; i < FZ_SLOTS; i++)
			close(fz.slot[i].fd);
	fz_child_account(t);
	_exit(0);
}

static void churn_fork(struct fz_thread *t)
{
	pid_t pid;
	int st;

	pid = fork();
	if (pid < 0)
		return;
	if (!pid)
		fz_child(t);
	fz_rnd(&t->rng);
	if (fz_one_in(&t->rng, 3)) {
		struct timespec ts = {
			.tv_nsec = fz_below(&t->rng, 20000000),
		};

		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return;
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) {
		/* A few calls took a minute: a kernel call hangs, or nearly. */
		t->child_hangs++;
		printf("mrrc_fuzz: HANG: forked child %d did not finish %d steps in %d s\n",
		       (int)pid, FZ_CHILD_STEPS, FZ_CHILD_SECONDS);
	} else if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) {
		t->child_crashes++;
		fprintf(stderr, "mrrc_fuzz: forked child %d died of signal %d\n",
			(int)pid, WTERMSIG(st));
	} else if (WIFEXITED(st) && WEXITSTATUS(st)) {
		t->child_crashes++;
		fprintf(stderr, "mrrc_fuzz: forked child %d exited with %d\n",
			(int)pid, WEXITSTATUS(st));
	}
}

static unsigned int churn_pick(struct fz_thread *t, uint64_t *last_fork)
{
	static const uint8_t weight[FZ_CH_NOPS] = {
		[FZ_CH_REMAP] = 10, [FZ_CH_UNMAP] = 6,
		[FZ_CH_MREMAP_MOVE] = 5, [FZ_CH_MREMAP_DONTUNMAP] = 3,
		[FZ_CH_MREMAP_RESIZE] = 3, [FZ_CH_DONTNEED] = 8,
		[FZ_CH_MADVISE] = 6, [FZ_CH_MPROTECT] = 8, [FZ_CH_TOUCH] = 10,
		[FZ_CH_FORK] = 3, [FZ_CH_MLOCK] = 2,
	};
	unsigned int total = 0, op;
	uint32_t r;
	uint64_t now;

	for (op = 0; op < FZ_CH_NOPS; op++)
		total += weight[op];
	r = fz_below(&t->rng, total);
	for (op = 0; r >= weight[op]; op++)
		r -= weight[op];
	if (op == FZ_CH_FORK) {
		now = fz_now_ns();
		if (now - *last_fork < FZ_FORK_GAP_NS)
			return FZ_CH_TOUCH;
		*last_fork = now;
	}
	return op;
}

static void churn_do(struct fz_thread *t, unsigned int op, unsigned int i)
{
	switch (op) {
	case FZ_CH_REMAP:
		churn_remap(t, i);
		break;
	case FZ_CH_UNMAP:
		churn_unmap(t, i);
		break;
	case FZ_CH_MREMAP_MOVE:
		churn_move(t, i);
		break;
	case FZ_CH_MREMAP_DONTUNMAP:
		churn_dontunmap(t, i);
		break;
	case FZ_CH_MREMAP_RESIZE:
		churn_resize(t, i);
		break;
	case FZ_CH_DONTNEED:
		churn_dontneed(t, i);
		break;
	case FZ_CH_MADVISE:
		churn_madvise(t, i);
		break;
	case FZ_CH_MPROTECT:
		churn_mprotect(t, i);
		break;
	case FZ_CH_TOUCH:
		chunk_touch(t, i);
		break;
	case FZ_CH_FORK:
		churn_fork(t);
		break;
	default:
		churn_mlock(t, i);
		break;
	}
}

void *fz_churn_main(void *arg)
{
	struct fz_thread *t = arg;
	uint64_t last_fork = 0;

	t->tid = gettid();
	while (!fz_stopping(t)) {
		unsigned int op = churn_pick(t, &last_fork);
		struct timespec ts = {
			.tv_nsec = fz_below(&t->rng, 2000) * 1000,
		};

		churn_do(t, op, fz_below(&t->rng, FZ_NCHUNK));
		t->churn[op]++;
		__atomic_add_fetch(&t->progress, 1, __ATOMIC_RELAXED);
		nanosleep(&ts, NULL);
	}
	return NULL;
}
