/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrrc_fuzz - shared definitions of the /dev/mrrc ioctl fuzzer.  The
 * strategy is described at the top of main.c.
 */
#ifndef MRRC_FUZZ_H
#define MRRC_FUZZ_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "mrrc_abi.h"

#define FZ_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define FZ_MIN(a, b)		((a) < (b) ? (a) : (b))
#define FZ_MAX(a, b)		((a) > (b) ? (a) : (b))
#define FZ_PAGE			4096UL

/* ---- pseudo-random numbers: one generator per thread ------------------ */

struct fz_rng {
	uint64_t s;
};

/* splitmix64: spreads a seed and a stream number over the state space. */
static inline uint64_t fz_splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static inline void fz_rng_init(struct fz_rng *r, uint64_t seed,
			       uint64_t stream)
{
	r->s = fz_splitmix(seed ^ fz_splitmix(stream + 1)) | 1;
}

/* xorshift64*: small, fast and good enough to pick fuzz cases. */
static inline uint64_t fz_rnd(struct fz_rng *r)
{
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [0, n); 0 when n is 0. */
static inline uint32_t fz_below(struct fz_rng *r, uint32_t n)
{
	return (uint32_t)(((fz_rnd(r) >> 32) * (uint64_t)n) >> 32);
}

static inline bool fz_one_in(struct fz_rng *r, uint32_t n)
{
	return fz_below(r, n) == 0;
}

/* Uniform in [lo, hi], hi - lo < 2^32 - 1. */
static inline uint64_t fz_range(struct fz_rng *r, uint64_t lo, uint64_t hi)
{
	return lo + fz_below(r, (uint32_t)(hi - lo + 1));
}

/* ---- statistics buckets --------------------------------------------- */

#define FZ_NCMD		(MRRC_CMD_LAST - MRRC_CMD_BASE + 1)

enum {
	FZ_B_BADNR = FZ_NCMD,	/* ioctl numbers the module must refuse */
	FZ_B_VFS,		/* generic ioctls the VFS sees first */
	FZ_B_SYS,		/* open, read, write, mmap, poll of the device */
	FZ_NBUCKET,
};

#define FZ_ERRNO_MAX	140	/* larger errnos share the last bucket */
#define FZ_CQE_OPS	12	/* completion opcodes 1..9, RECV_IMM, other */

enum fz_churn_op {
	FZ_CH_REMAP,
	FZ_CH_UNMAP,
	FZ_CH_MREMAP_MOVE,
	FZ_CH_MREMAP_DONTUNMAP,
	FZ_CH_MREMAP_RESIZE,
	FZ_CH_DONTNEED,
	FZ_CH_MADVISE,
	FZ_CH_MPROTECT,
	FZ_CH_TOUCH,
	FZ_CH_FORK,
	FZ_CH_MLOCK,
	FZ_CH_NOPS,
};

/* ---- the arena: the memory that registrations and operations use ----- */

#define FZ_CHUNK_SHIFT	21
#define FZ_CHUNK	(1UL << FZ_CHUNK_SHIFT)	/* 2 MiB, THP-sized */
#define FZ_NCHUNK	16
#define FZ_ARENA	(FZ_NCHUNK * FZ_CHUNK)

/*
 * What the churn thread knows about a chunk; nobody else reads it.  A
 * chunk's addresses are always covered by a mapping of this process (an
 * inaccessible one stands for "unmapped"), so no other mapping can ever
 * land there.
 */
struct fz_chunk {
	bool rw;		/* all of it is anonymous and read-write */
	bool file;		/* a private file mapping (never written) */
	bool dontfork;		/* some of it is MADV_DONTFORK */
};

/* ---- per-thread private memory ---------------------------------------- */

#define FZ_PAD_SIZE	(1UL << 20)	/* command structures, zero-filled */
#define FZ_ARR_SIZE	(256UL << 10)	/* nested arrays */
#define FZ_RO_SIZE	(64UL << 10)	/* memfd seen RW and read-only */

/* Where a structure or an array goes. */
enum fz_place {
	FZ_PL_NORMAL,		/* private RW memory */
	FZ_PL_RO,		/* a read-only view: copy-in works, copy-out not */
	FZ_PL_EDGE,		/* the end runs into a guard page */
	FZ_PL_BAD,		/* an unusable pointer */
	FZ_PL_NPLACE,
};

/* ---- contexts and what the fuzzer knows about them -------------------- */

#define FZ_SLOTS	4	/* slot 0 starts unbound */
#define FZ_LIVE		8	/* established connections */
#define FZ_IDS		16	/* other ids: listeners, closed, connecting */
#define FZ_REQS		8	/* connection requests not yet answered */
#define FZ_HANDLES	32
#define FZ_TARGETS	16	/* remotely accessible segments */
#define FZ_PORTS	4
#define FZ_BUDGET	48	/* ids a context may collect before a reopen */
#define FZ_REOPEN_GAP_NS 5000000000ULL	/* a context lives at least 5 s */

struct fz_live {
	uint32_t id;
	uint32_t peer;		/* the other end on the same context, or 0 */
};

struct fz_handle {
	uint32_t h;
	uint32_t access;
	uint64_t addr;
	uint64_t len;
};

struct fz_target {
	uint64_t addr;
	uint64_t len;
	uint32_t rkey;
	uint32_t h;		/* the export (top bit set) that keeps it valid */
	uint32_t access;	/* the export's MRRC_ACCESS_REMOTE_* rights */
	uint32_t conns[3];	/* its connections; it ends with the last */
};

/* Samples of valid values; a full table overwrites a random entry. */
struct fz_pools {
	bool bound;
	bool connected;		/* had connections at setup */
	int created;		/* ids made since the reopen */
	struct fz_live live[FZ_LIVE];
	uint32_t ids[FZ_IDS];
	uint32_t reqs[FZ_REQS];
	struct fz_handle handles[FZ_HANDLES];
	struct fz_target targets[FZ_TARGETS];
	uint16_t ports[FZ_PORTS];
};

struct fz_slot {
	int index;
	int fd;			/* stable: a reopen dup2()s over it */
	pthread_mutex_t lock;	/* the pools; never held across a device call */
	pthread_mutex_t setup;	/* one reopen at a time */
	bool want_reopen;
	uint64_t reopened;	/* fz_now_ns() of the last reopen */
	unsigned int gen;
	struct fz_pools p;
};

/* ---- threads ------------------------------------------------------------ */

struct fz_thread {
	int idx;
	const char *role;
	pthread_t pt;
	pid_t tid;
	struct fz_rng rng;
	uint64_t progress;	/* bumped on every step; the watchdog reads it */
	uint64_t calls;		/* device syscalls made */
	uint64_t flushed;	/* of @calls, added to fz.total_calls */
	int cur;		/* bucket of the call in flight, or -1 */
	bool running;

	uint8_t *pad;		/* FZ_PAD_SIZE bytes, then a guard page */
	uint8_t *arr;		/* FZ_ARR_SIZE bytes, then a guard page */
	uint8_t *ro_w;		/* FZ_RO_SIZE bytes, writable view */
	uint8_t *ro_u;		/* the same pages, read-only */
	uint8_t *scratch;	/* FZ_ARR_SIZE bytes where arrays are built */
	size_t arr_used;
	size_t ro_used;
	size_t pad_dirty;	/* bytes at the start of @pad not zero */
	size_t edge_dirty;	/* bytes at the end of @pad not zero */

	struct fz_slot tmp;	/* a short-lived context's slot */
	struct fz_handle taken[8];	/* handles a RELEASE took from a pool */
	uint64_t steps;

	uint64_t hist[FZ_NBUCKET][FZ_ERRNO_MAX + 1];
	uint64_t ns[FZ_NBUCKET][FZ_ERRNO_MAX + 1];	/* -P: time in calls */
	uint64_t max_ns[FZ_NBUCKET];
	uint64_t reopen_ns;
	uint64_t cqes[FZ_CQE_OPS][FZ_ERRNO_MAX + 1];
	uint64_t events[MRRC_EVENT_ERROR + 2];
	uint64_t churn[FZ_CH_NOPS];
	uint64_t reopens;
	uint64_t child_crashes;	/* forked children that died: fuzzer bugs */
	uint64_t child_hangs;	/* forked children that ran out of time */
};

/* Shared with forked children, which add their counts here. */
struct fz_shared {
	uint64_t calls;
	uint64_t hist[FZ_NBUCKET][FZ_ERRNO_MAX + 1];
};

#define FZ_MAX_THREADS	8

struct fz_global {
	uint64_t seed;
	double seconds;
	uint64_t max_calls;
	unsigned int nthreads;	/* ioctl threads */
	int watchdog_s;
	int progress_s;		/* seconds between progress lines */
	unsigned int depth;	/* % of the well-formed share of commands */
	bool unpriv;
	bool profile;
	bool no_churn;
	bool in_child;		/* this process is a forked child */
	const char *devname;
	uint32_t addr;		/* IPv4 address of devname, network order */
	uint32_t dev_index;
	int stop;		/* atomic */
	uint64_t total_calls;	/* atomic */

	uint8_t *arena;		/* FZ_ARENA bytes, inside a big reservation */
	uint8_t *spare;		/* FZ_CHUNK bytes of reserved room */
	struct fz_chunk chunk[FZ_NCHUNK];
	int exe_fd;

	struct fz_slot slot[FZ_SLOTS];
	struct fz_thread thread[FZ_MAX_THREADS + 2];	/* main, ioctl, churn */
	unsigned int nthread;
	struct fz_shared *shared;
};

extern struct fz_global fz;

/* ---- one ioctl command call being built --------------------------------- */

enum fz_mode {
	FZ_WELL,	/* well-formed */
	FZ_FIELD,	/* one member or nested element broken */
	FZ_ENV,		/* size, flags, reserved or the pointer broken */
};

struct fz_call {
	int cmd;		/* MRRC_CMD_* - MRRC_CMD_BASE */
	int mode;
	struct fz_slot *s;
	int fd;
	void *st;		/* the structure, at the start of the pad */
	uint32_t len;		/* its size as this fuzzer knows it */
	void *arg;		/* the pointer the ioctl gets */
	int err;		/* 0 or the errno */
	void *view[2];		/* readable copies of the placed arrays */
	size_t vlen[2];
	uint32_t esz[2];	/* their element sizes */
	uint32_t n;		/* elements placed in view[0] */
};

/* call.c: the command table and one fuzz step */
int fz_ioctl(struct fz_thread *t, int bucket, int fd, unsigned long req,
	     void *arg);
void fz_count(struct fz_thread *t, int bucket, int err);
void fz_step(struct fz_thread *t);
int fz_do_cmd(struct fz_thread *t, struct fz_slot *s, int cmd, int mode);
bool fz_stopping(struct fz_thread *t);
const char *fz_bucket_name(int bucket);

/* ctl.c: devices, contexts, the cache configuration, connections */
void fz_build_query(struct fz_thread *t, struct fz_call *c);
void fz_build_dev_list(struct fz_thread *t, struct fz_call *c);
void fz_build_port_query(struct fz_thread *t, struct fz_call *c);
void fz_build_bind(struct fz_thread *t, struct fz_call *c);
void fz_build_ctx_query(struct fz_thread *t, struct fz_call *c);
void fz_build_cache_config(struct fz_thread *t, struct fz_call *c);
void fz_build_flush(struct fz_thread *t, struct fz_call *c);
void fz_build_cache_stats(struct fz_thread *t, struct fz_call *c);
void fz_build_listen(struct fz_thread *t, struct fz_call *c);
void fz_after_listen(struct fz_thread *t, struct fz_call *c);
void fz_build_connect(struct fz_thread *t, struct fz_call *c);
void fz_after_connect(struct fz_thread *t, struct fz_call *c);
void fz_build_conn_cmd(struct fz_thread *t, struct fz_call *c);
void fz_after_conn_cmd(struct fz_thread *t, struct fz_call *c);
void fz_build_conn_query(struct fz_thread *t, struct fz_call *c);
void fz_after_conn_query(struct fz_thread *t, struct fz_call *c);
void fz_cache_config_sane(struct fz_thread *t, struct mrrc_cache_config *cfg);

/* dp.c: registrations and the data path */
void fz_build_reg(struct fz_thread *t, struct fz_call *c);
void fz_after_reg(struct fz_thread *t, struct fz_call *c);
void fz_build_release(struct fz_thread *t, struct fz_call *c);
void fz_after_release(struct fz_thread *t, struct fz_call *c);
void fz_build_post(struct fz_thread *t, struct fz_call *c);
void fz_build_poll(struct fz_thread *t, struct fz_call *c);
void fz_after_poll(struct fz_thread *t, struct fz_call *c);
void fz_build_cancel(struct fz_thread *t, struct fz_call *c);
void fz_build_export(struct fz_thread *t, struct fz_call *c);
void fz_build_unexport(struct fz_thread *t, struct fz_call *c);
void fz_after_export(struct fz_thread *t, struct fz_call *c);
void fz_after_unexport(struct fz_thread *t, struct fz_call *c);
void fz_release_one(struct fz_thread *t, struct fz_slot *s, uint32_t h);
void fz_drain(struct fz_thread *t, struct fz_slot *s);

/* mem.c: private memory, the arena, pointers */
int fz_mem_init(void);
int fz_thread_mem(struct fz_thread *t);
uint64_t fz_arena_addr(struct fz_thread *t, uint64_t len, bool sane);
uint64_t fz_bad_ptr(struct fz_thread *t);
int fz_pick_place(struct fz_thread *t, int mode);
uint64_t fz_place(struct fz_thread *t, const void *src, size_t len, int how,
		  void **view, size_t *vlen);
void fz_clean(struct fz_thread *t);
uint64_t fz_interesting64(struct fz_thread *t);
uint32_t fz_interesting32(struct fz_thread *t);
uint64_t fz_now_ns(void);

/* churn.c: memory churn under live registrations, fork */
void *fz_churn_main(void *arg);

/* world.c: contexts, connections and the pools */
int fz_world_init(struct fz_thread *t);
void fz_world_fini(void);
int fz_open_ctx(void);
bool fz_slot_reopen(struct fz_thread *t, struct fz_slot *s);
struct fz_slot *fz_pick_slot(struct fz_thread *t);
void fz_lock(struct fz_slot *s);
void fz_unlock(struct fz_slot *s);
uint32_t fz_pick_conn(struct fz_thread *t, struct fz_slot *s);
bool fz_pick_pair(struct fz_thread *t, struct fz_slot *s, uint32_t *a,
		  uint32_t *b);
uint32_t fz_pick_self_conn(struct fz_thread *t, struct fz_slot *s);
uint32_t fz_pick_id(struct fz_thread *t, struct fz_slot *s);
uint32_t fz_take_req(struct fz_thread *t, struct fz_slot *s);
void fz_add_id(struct fz_slot *s, uint32_t id, bool created);
void fz_forget_conn(struct fz_slot *s, uint32_t id, bool destroyed);
void fz_add_port(struct fz_slot *s, uint16_t port);
uint16_t fz_pick_port(struct fz_thread *t);
uint32_t fz_add_handle(struct fz_thread *t, struct fz_slot *s,
		       const struct fz_handle *h);
bool fz_pick_handle(struct fz_thread *t, struct fz_slot *s,
		    struct fz_handle *h, bool take);
void fz_forget_handle(struct fz_slot *s, uint32_t h);
void fz_add_target(struct fz_thread *t, struct fz_slot *s,
		   const struct mrrc_seg *seg, uint32_t h, uint32_t access,
		   const uint32_t *conns, unsigned int nconns);
bool fz_pick_target(struct fz_thread *t, struct fz_slot *s,
		    struct fz_target *tg, uint32_t access);
void fz_events(struct fz_thread *t, struct fz_slot *s,
	       const struct mrrc_cqe *cqe, unsigned int n);

/* stats.c */
void fz_report(FILE *f, double elapsed);
const char *fz_errno_name(int err);
uint64_t fz_calls_now(void);
uint64_t fz_child_crashes(void);
uint64_t fz_child_hangs(void);

#endif /* MRRC_FUZZ_H */
