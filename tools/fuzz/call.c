// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc_fuzz - one fuzz step: which call, on which context, how broken.
 *
 * A command is built in three layers.  The builder (ctl.c, dp.c) fills in
 * the structure and its nested arrays, well-formed (FZ_WELL) or with one
 * member or element broken (FZ_FIELD).  For FZ_ENV the envelope then
 * breaks what every command has in common: the size (too short, an older
 * revision, longer with a zero or non-zero tail, huge), the flags, a
 * reserved member, or the pointer itself (read-only, running into a guard
 * page, misaligned, in the churned arena, not user memory).  After a call
 * with the structure in place, the command's after() hook feeds what came
 * back (handles, ids, completions) into the pools.
 *
 * Beside the commands: ioctl numbers the module must refuse (out of range,
 * wrong type, direction or size bits, high bits the syscall drops), the
 * generic ioctls the VFS handles first, the other file operations, and
 * short-lived contexts opened and closed on the spot.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "fuzz.h"

struct fz_cmd {
	const char *name;
	uint32_t size;		/* sizeof the structure */
	uint32_t min_size;	/* the size of its first revision */
	uint16_t rsv;		/* offset of a __reserved member, 0: none */
	uint8_t weight;		/* how often it is picked */
	uint8_t well;		/* % of its calls that are well-formed */
	void (*build)(struct fz_thread *t, struct fz_call *c);
	void (*after)(struct fz_thread *t, struct fz_call *c);
};

#define FZ_END(type, member) \
	(offsetof(type, member) + sizeof(((type *)0)->member))
#define FZ_CMD(nr, type, last, rsv_, w, wp, b, a)			\
	[MRRC_CMD_##nr - MRRC_CMD_BASE] = {				\
		.name = #nr, .size = sizeof(type),			\
		.min_size = FZ_END(type, last), .rsv = rsv_,		\
		.weight = w, .well = wp, .build = b, .after = a,	\
	}
#define FZ_RSV(st)	offsetof(st, __reserved)

/*
 * Weights: how often each command is picked (the data path most); and
 * what share of its calls is well-formed: more where a well-formed call
 * is cheap or drives the data path, less where it costs (REG pins and
 * registers, CONFIG and FLUSH evict).
 */
static const struct fz_cmd fz_cmds[FZ_NCMD] = {
	FZ_CMD(QUERY, struct mrrc_query, __reserved,
	       FZ_RSV(struct mrrc_query), 2, 2,
	       fz_build_query, NULL),
	FZ_CMD(DEV_LIST, struct mrrc_dev_list, entries,
	       0, 2, 2,
	       fz_build_dev_list, NULL),
	FZ_CMD(PORT_QUERY, struct mrrc_port_query, gids,
	       FZ_RSV(struct mrrc_port_query), 1, 2,
	       fz_build_port_query, NULL),
	FZ_CMD(BIND, struct mrrc_bind, __reserved,
	       FZ_RSV(struct mrrc_bind), 2, 2,
	       fz_build_bind, NULL),
	FZ_CMD(CTX_QUERY, struct mrrc_ctx_query, dev_name,
	       FZ_RSV(struct mrrc_ctx_query), 2, 2,
	       fz_build_ctx_query, NULL),
	FZ_CMD(CACHE_CONFIG, struct mrrc_cache_config, dereg_ns_per_region,
	       0, 1, 2,
	       fz_build_cache_config, NULL),
	FZ_CMD(REG, struct mrrc_reg, __reserved,
	       FZ_RSV(struct mrrc_reg), 4, 3,
	       fz_build_reg, fz_after_reg),
	FZ_CMD(RELEASE, struct mrrc_release, handles,
	       0, 5, 5,
	       fz_build_release, fz_after_release),
	FZ_CMD(FLUSH, struct mrrc_flush, __reserved,
	       FZ_RSV(struct mrrc_flush), 1, 2,
	       fz_build_flush, NULL),
	FZ_CMD(CACHE_STATS, struct mrrc_cache_stats, mre_recency,
	       0, 3, 2,
	       fz_build_cache_stats, NULL),
	FZ_CMD(LISTEN, struct mrrc_listen, user_data,
	       0, 1, 2,
	       fz_build_listen, fz_after_listen),
	FZ_CMD(CONNECT, struct mrrc_connect, user_data,
	       0, 1, 2,
	       fz_build_connect, fz_after_connect),
	FZ_CMD(ACCEPT, struct mrrc_conn_cmd, user_data,
	       FZ_RSV(struct mrrc_conn_cmd), 2, 10,
	       fz_build_conn_cmd, fz_after_conn_cmd),
	FZ_CMD(REJECT, struct mrrc_conn_cmd, user_data,
	       FZ_RSV(struct mrrc_conn_cmd), 1, 5,
	       fz_build_conn_cmd, fz_after_conn_cmd),
	FZ_CMD(DISCONNECT, struct mrrc_conn_cmd, user_data,
	       FZ_RSV(struct mrrc_conn_cmd), 1, 2,
	       fz_build_conn_cmd, fz_after_conn_cmd),
	FZ_CMD(DESTROY, struct mrrc_conn_cmd, user_data,
	       FZ_RSV(struct mrrc_conn_cmd), 2, 5,
	       fz_build_conn_cmd, fz_after_conn_cmd),
	FZ_CMD(POST, struct mrrc_post, __reserved,
	       FZ_RSV(struct mrrc_post), 10, 8,
	       fz_build_post, NULL),
	FZ_CMD(POLL, struct mrrc_poll, __reserved,
	       FZ_RSV(struct mrrc_poll), 3, 2,
	       fz_build_poll, fz_after_poll),
	FZ_CMD(CANCEL, struct mrrc_cancel, tag,
	       0, 4, 10,
	       fz_build_cancel, NULL),
	FZ_CMD(CONN_QUERY, struct mrrc_conn_query, ctrl_recv,
	       0, 3, 2,
	       fz_build_conn_query, fz_after_conn_query),
	FZ_CMD(EXPORT, struct mrrc_export, segs,
	       0, 3, 4,
	       fz_build_export, fz_after_export),
	FZ_CMD(UNEXPORT, struct mrrc_unexport, __reserved,
	       FZ_RSV(struct mrrc_unexport), 2, 2,
	       fz_build_unexport, fz_after_unexport),
};

const char *fz_bucket_name(int bucket)
{
	static const char *const other[] = {
		[FZ_B_BADNR - FZ_NCMD] = "bad-ioctl-nr",
		[FZ_B_VFS - FZ_NCMD] = "vfs-ioctl",
		[FZ_B_SYS - FZ_NCMD] = "file-ops",
	};

	if (bucket >= 0 && bucket < FZ_NCMD)
		return fz_cmds[bucket].name;
	if (bucket >= FZ_NCMD && bucket < FZ_NBUCKET)
		return other[bucket - FZ_NCMD];
	return "?";
}

void fz_count(struct fz_thread *t, int bucket, int err)
{
	t->hist[bucket][FZ_MIN(err, FZ_ERRNO_MAX)]++;
	/* Only this thread writes them; the main thread reads. */
	__atomic_store_n(&t->calls, t->calls + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&t->progress, t->progress + 1, __ATOMIC_RELAXED);
}

/* Every device syscall goes through here: counted, and watched. */
int fz_ioctl(struct fz_thread *t, int bucket, int fd, unsigned long req,
	     void *arg)
{
	uint64_t t0 = fz.profile ? fz_now_ns() : 0, dt;
	int err;

	__atomic_store_n(&t->cur, bucket, __ATOMIC_RELAXED);
	err = ioctl(fd, req, arg) < 0 ? errno : 0;
	__atomic_store_n(&t->cur, -1, __ATOMIC_RELAXED);
	fz_count(t, bucket, err);
	if (fz.profile) {
		dt = fz_now_ns() - t0;
		t->ns[bucket][FZ_MIN(err, FZ_ERRNO_MAX)] += dt;
		t->max_ns[bucket] = FZ_MAX(t->max_ns[bucket], dt);
	}
	return err;
}

bool fz_stopping(struct fz_thread *t)
{
	uint64_t total;

	if (__atomic_load_n(&fz.stop, __ATOMIC_RELAXED))
		return true;
	if (t->calls - t->flushed < 256)
		return false;
	total = __atomic_add_fetch(&fz.total_calls, t->calls - t->flushed,
				   __ATOMIC_RELAXED);
	t->flushed = t->calls;
	if (fz.max_calls && total >= fz.max_calls) {
		__atomic_store_n(&fz.stop, 1, __ATOMIC_RELAXED);
		return true;
	}
	return false;
}

/* ---- the envelope -------------------------------------------------------- */

/* Bytes of the structure (and of a tail after it) to move with it. */
static size_t fz_env_bytes(const struct fz_call *c)
{
	uint32_t size = *(const uint32_t *)c->st;

	return size > c->len && size <= c->len + 256 ? size : c->len;
}

static void fz_env_tail(struct fz_thread *t, struct fz_call *c, bool junk)
{
	uint32_t extra = fz_range(&t->rng, 1, 256);
	uint8_t *p = c->st;

	*(uint32_t *)c->st = c->len + extra;
	t->pad_dirty = FZ_MAX(t->pad_dirty, c->len + extra);
	if (junk)
		p[c->len + fz_below(&t->rng, extra)] = 1 + fz_below(&t->rng, 255);
}

/*
 * A huge size: its tail is checked for zeros up to the first fault.  Mostly
 * near the guard page so the check is short; a long scan now and then.
 */
static void fz_env_huge(struct fz_thread *t, struct fz_call *c)
{
	static const uint32_t huge[] = {
		4096, 65536, 0x7fffffff, 0x80000000, 0xfffffff8, 0xffffffff,
	};
	uint32_t size = huge[fz_below(&t->rng, FZ_ARRAY_SIZE(huge))];
	size_t gap = fz_below(&t->rng, 256), at;

	if (fz_one_in(&t->rng, 256)) {
		/* All the way: zero up to the guard, or to exactly there. */
		*(uint32_t *)c->st = fz_one_in(&t->rng, 2) ? FZ_PAD_SIZE : size;
		return;
	}
	*(uint32_t *)c->st = size;
	at = FZ_PAD_SIZE - c->len - gap;
	memcpy(t->pad + at, c->st, c->len);
	t->edge_dirty = FZ_MAX(t->edge_dirty, c->len + gap);
	c->arg = t->pad + at;
}

/*
 * Move the structure where the kernel can read it but not write it back,
 * misaligned, or into the churned arena (@usable); or where it cannot be
 * read whole: into the guard page, or nowhere.
 */
static void fz_env_place(struct fz_thread *t, struct fz_call *c, bool usable)
{
	size_t n = fz_env_bytes(c), k;
	uint32_t r = fz_below(&t->rng, usable ? 3 : 2);
	uint8_t *p;

	if (usable && r == 0) {			/* copied in, never out */
		memcpy(t->ro_w, c->st, n);
		t->ro_used = FZ_MAX(t->ro_used, n);
		c->arg = t->ro_u;
	} else if (usable && r == 1) {		/* still what after() reads */
		k = 1 + fz_below(&t->rng, 7);
		memmove((uint8_t *)c->st + k, c->st, n);
		t->pad_dirty = FZ_MAX(t->pad_dirty, n + k);
		c->st = (uint8_t *)c->st + k;
		c->arg = c->st;
	} else if (usable) {			/* whatever is there, if mapped */
		c->arg = (void *)(uintptr_t)fz_arena_addr(t, c->len, true);
	} else if (r == 0) {			/* the end is in the guard page */
		k = fz_below(&t->rng, (uint32_t)n);
		p = t->pad + FZ_PAD_SIZE - k;
		memcpy(p, c->st, k);
		t->edge_dirty = FZ_MAX(t->edge_dirty, k);
		c->arg = p;
	} else {
		c->arg = (void *)(uintptr_t)fz_bad_ptr(t);
	}
}

/* What the envelope breaks, and how often (out of FZ_ENV_TOTAL). */
enum fz_env {
	FZ_ENV_SHORT,		/* size below the first revision */
	FZ_ENV_FLAGS,		/* an unknown flag */
	FZ_ENV_RESERVED,	/* a reserved member not zero */
	FZ_ENV_JUNK_TAIL,	/* longer, with a non-zero byte beyond */
	FZ_ENV_UNUSABLE,	/* a pointer the kernel cannot read whole */
	FZ_ENV_OLD,		/* an older revision: goes through */
	FZ_ENV_ZERO_TAIL,	/* longer, zero beyond: goes through */
	FZ_ENV_HUGE,		/* a huge size */
	FZ_ENV_USABLE,		/* read-only, misaligned, in the arena */
	FZ_ENV_N,
};

/* Mostly what must fail before the command does anything: cheap. */
static const uint8_t fz_env_weight[FZ_ENV_N] = {
	[FZ_ENV_SHORT] = 8, [FZ_ENV_FLAGS] = 7, [FZ_ENV_RESERVED] = 5,
	[FZ_ENV_JUNK_TAIL] = 4, [FZ_ENV_UNUSABLE] = 4, [FZ_ENV_OLD] = 1,
	[FZ_ENV_ZERO_TAIL] = 1, [FZ_ENV_HUGE] = 1, [FZ_ENV_USABLE] = 1,
};

static int fz_env_pick(struct fz_thread *t)
{
	uint32_t r = fz_below(&t->rng, 32);
	int k;

	for (k = 0; k < FZ_ENV_N - 1 && r >= fz_env_weight[k]; k++)
		r -= fz_env_weight[k];
	return k;
}

/* Returns false once the structure has moved: no more changes then. */
static bool fz_env_one(struct fz_thread *t, struct fz_call *c,
		       const struct fz_cmd *cmd)
{
	uint32_t *u = c->st;

	switch (fz_env_pick(t)) {
	case FZ_ENV_SHORT:
		u[0] = fz_below(&t->rng, cmd->min_size);
		break;
	case FZ_ENV_FLAGS:
		u[1] |= fz_one_in(&t->rng, 4) ? (uint32_t)fz_rnd(&t->rng) :
			1u << fz_below(&t->rng, 32);
		break;
	case FZ_ENV_RESERVED:
		if (cmd->rsv)
			*(uint32_t *)((uint8_t *)c->st + cmd->rsv) =
				(uint32_t)fz_rnd(&t->rng) | 1;
		else
			u[1] = (uint32_t)fz_rnd(&t->rng);
		break;
	case FZ_ENV_JUNK_TAIL:
		fz_env_tail(t, c, true);
		break;
	case FZ_ENV_UNUSABLE:
		fz_env_place(t, c, false);
		return false;
	case FZ_ENV_OLD:
		u[0] = fz_range(&t->rng, cmd->min_size, cmd->size);
		break;
	case FZ_ENV_ZERO_TAIL:
		fz_env_tail(t, c, false);
		break;
	case FZ_ENV_HUGE:
		fz_env_huge(t, c);
		return false;
	default:
		fz_env_place(t, c, true);
		return false;
	}
	return true;
}

/* One change to the envelope, sometimes two. */
static void fz_envelope(struct fz_thread *t, struct fz_call *c,
			const struct fz_cmd *cmd)
{
	if (fz_env_one(t, c, cmd) && fz_one_in(&t->rng, 3))
		fz_env_one(t, c, cmd);
}

/* ---- commands ------------------------------------------------------------ */

int fz_do_cmd(struct fz_thread *t, struct fz_slot *s, int cmd, int mode)
{
	const struct fz_cmd *k = &fz_cmds[cmd];
	struct fz_call c = {
		.cmd = cmd, .mode = mode, .s = s, .fd = s->fd,
		.st = t->pad, .len = k->size, .arg = t->pad,
	};

	t->pad_dirty = k->size;
	*(uint32_t *)c.st = k->size;
	k->build(t, &c);
	if (mode == FZ_ENV)
		fz_envelope(t, &c, k);
	c.err = fz_ioctl(t, cmd, c.fd, _IO(MRRC_TYPE, MRRC_CMD_BASE + cmd),
			 c.arg);
	if (c.arg == c.st && k->after) {
		/* A misaligned structure is read back where it is aligned. */
		if (c.st != t->pad) {
			memmove(t->pad, c.st, k->size);
			c.st = t->pad;
		}
		k->after(t, &c);
	}
	fz_clean(t);
	return c.err;
}

static int fz_pick_cmd(struct fz_thread *t)
{
	static unsigned int total;
	unsigned int i;
	uint32_t r;

	if (!total)
		for (i = 0; i < FZ_NCMD; i++)
			__atomic_add_fetch(&total, fz_cmds[i].weight,
					   __ATOMIC_RELAXED);
	r = fz_below(&t->rng, __atomic_load_n(&total, __ATOMIC_RELAXED));
	for (i = 0; i < FZ_NCMD - 1 && r >= fz_cmds[i].weight; i++)
		r -= fz_cmds[i].weight;
	return (int)i;
}

/*
 * Well-formed as often as the command says (scaled by -D); broken
 * otherwise, a third of those in a member, the rest in the envelope.
 */
static int fz_pick_mode(struct fz_thread *t, int cmd)
{
	uint32_t r = fz_below(&t->rng, 10000);

	if (r < fz_cmds[cmd].well * fz.depth)
		return FZ_WELL;
	return fz_below(&t->rng, 3) ? FZ_ENV : FZ_FIELD;
}

static void fz_step_cmd(struct fz_thread *t, struct fz_slot *s)
{
	int cmd = fz_pick_cmd(t);

	fz_do_cmd(t, s, cmd, fz_pick_mode(t, cmd));
}

/* ---- other calls ------------------------------------------------------- */

/* Ioctl numbers the module must refuse (and one it must not). */
static unsigned long fz_bad_req(struct fz_thread *t)
{
	unsigned int nr = MRRC_CMD_BASE + fz_below(&t->rng, FZ_NCMD);
	unsigned int type = fz_below(&t->rng, 256);

	switch (fz_below(&t->rng, 8)) {
	case 0:
		return _IO(MRRC_TYPE, fz_below(&t->rng, MRRC_CMD_BASE));
	case 1:
		return _IO(MRRC_TYPE, MRRC_CMD_LAST + 1 +
			   fz_below(&t->rng, 0xff - MRRC_CMD_LAST));
	case 2:		/* a direction, with any size */
		return _IOC(1 + fz_below(&t->rng, 3), MRRC_TYPE, nr,
			    fz_below(&t->rng, 1 << _IOC_SIZEBITS));
	case 3:		/* no direction, a size */
		return _IOC(_IOC_NONE, MRRC_TYPE, nr,
			    1 + fz_below(&t->rng, (1 << _IOC_SIZEBITS) - 1));
	case 4:
		return _IO(type == MRRC_TYPE ? type + 1 : type, nr);
	case 5:
		return (uint32_t)fz_rnd(&t->rng);
	case 6:		/* what a careless caller would write */
		return _IOWR(MRRC_TYPE, nr, struct mrrc_reg);
	default:	/* the syscall drops the high bits: a valid command */
		return _IO(MRRC_TYPE, nr) | (fz_rnd(&t->rng) << 32);
	}
}

static void fz_bad_nr(struct fz_thread *t, struct fz_slot *s)
{
	unsigned long req = fz_bad_req(t);
	void *arg = t->pad;

	/* Freezing the device's file system would hang everyone. */
	if ((unsigned int)req == FIFREEZE || (unsigned int)req == FITHAW)
		return;
	if (fz_one_in(&t->rng, 3))
		arg = (void *)(uintptr_t)fz_bad_ptr(t);
	fz_ioctl(t, FZ_B_BADNR, s->fd, req, arg);
	t->pad_dirty = 64;	/* a generic ioctl writes a few bytes at most */
	fz_clean(t);
}

/* Generic ioctls the VFS sees before the driver does. */
static void fz_vfs(struct fz_thread *t, struct fz_slot *s)
{
	static const unsigned long req[] = {
		FIONBIO, FIOASYNC, FIOCLEX, FIONCLEX, FIONREAD, FIOQSIZE,
		FIGETBSZ, FS_IOC_FIEMAP, FS_IOC_GETFLAGS, FS_IOC_FSGETXATTR,
	};

	*(int *)t->pad = (int)fz_below(&t->rng, 2);
	fz_ioctl(t, FZ_B_VFS, s->fd,
		 req[fz_below(&t->rng, FZ_ARRAY_SIZE(req))], t->pad);
	t->pad_dirty = 64;
	fz_clean(t);
}

/* The file operations the device does not have, and poll(2), which it has. */
static void fz_sys(struct fz_thread *t, struct fz_slot *s)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN | POLLOUT };
	long ret;
	void *p;

	switch (fz_below(&t->rng, 5)) {
	case 0:
		ret = read(s->fd, t->arr, 64);
		break;
	case 1:
		ret = write(s->fd, t->pad, 16);
		break;
	case 2:
		p = mmap(NULL, FZ_PAGE, PROT_READ, MAP_SHARED, s->fd, 0);
		ret = p == MAP_FAILED ? -1 : 0;
		if (p != MAP_FAILED)
			munmap(p, FZ_PAGE);
		break;
	case 3:
		ret = lseek(s->fd, 0, SEEK_SET);
		break;
	default:
		ret = poll(&pfd, 1, 0);
		break;
	}
	fz_count(t, FZ_B_SYS, ret < 0 ? errno : 0);
}

/* A context that lives for a few calls: open, maybe bind, close. */
static void fz_quick(struct fz_thread *t)
{
	struct fz_slot *s = &t->tmp;
	unsigned int i, n = fz_below(&t->rng, 4);
	int fd = fz_open_ctx();

	fz_count(t, FZ_B_SYS, fd < 0 ? -fd : 0);
	if (fd < 0)
		return;
	s->fd = fd;
	memset(&s->p, 0, sizeof(s->p));
	if (fz_one_in(&t->rng, 3))
		fz_do_cmd(t, s, MRRC_CMD_BIND - MRRC_CMD_BASE, FZ_WELL);
	for (i = 0; i < n; i++)
		fz_step_cmd(t, s);
	close(fd);
	s->fd = -1;
}

/*
 * One step of an ioctl thread (or of a forked child): mostly a command,
 * often one that fails early, so the rate stays high; every few steps a
 * well-formed POLL so completions keep flowing.
 */
void fz_step(struct fz_thread *t)
{
	struct fz_slot *s = fz_pick_slot(t);
	uint32_t d = fz_below(&t->rng, 1000);

	if ((++t->steps & 63) == 0) {
		fz_drain(t, s);
		return;
	}
	if ((__atomic_load_n(&s->want_reopen, __ATOMIC_RELAXED) ||
	     fz_one_in(&t->rng, 100000)) && fz_slot_reopen(t, s))
		return;
	if (d < 350)
		fz_bad_nr(t, s);
	else if (d < 380)
		fz_vfs(t, s);
	else if (d < 410)
		fz_sys(t, s);
	else if (d < 411)
		fz_quick(t);
	else
		fz_step_cmd(t, s);
}
