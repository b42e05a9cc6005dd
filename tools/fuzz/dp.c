// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc_fuzz - builders of the registration and data-path commands, the
 * ones with nested arrays: REG (requests in, segments out), RELEASE
 * (handles), POST (work requests of every opcode), POLL (completions out)
 * and CANCEL.
 *
 * Well-formed batches use arena ranges, handles and remote segments from
 * the pools and live connections; half the POSTs on a context that holds
 * both ends of a connection pair operations that meet (SEND into RECV, CRW
 * into STCRW with the same tag), so the matching paths run, in both
 * orders and with deadlines.  Broken batches get one element wrong, an
 * element size too small or too large (with a zero or non-zero tail), a
 * count beyond the array, or an array that is read-only, runs into a guard
 * page or is no memory at all.
 */
#include <string.h>

#include "fuzz.h"

#define FZ_REG_MAX	64
#define FZ_POST_MAX	64
#define FZ_POLL_MAX	64
#define FZ_MAX_LEN	(1ULL << 31)	/* longest operation */
/*
 * A remote access error breaks the connection (the QP goes to the error
 * state), so each way of making one is taken once in this many times.
 */
#define FZ_BREAK_CONN	256
#define CMD(nr)		((nr) - MRRC_CMD_BASE)

static bool fz_broken(const struct fz_call *c)
{
	return c->mode == FZ_FIELD;
}

/*
 * Mostly small batches, at times large ones: only for well-formed calls.
 * A broken call is about its checks and abort paths, and stays cheap.
 */
static uint32_t fz_batch(struct fz_thread *t, const struct fz_call *c,
			 uint32_t max)
{
	uint32_t r = fz_below(&t->rng, 32);

	if (c->mode != FZ_WELL)
		return fz_range(&t->rng, 1, 4);
	if (r < 16)
		return 1;
	if (r < 27)
		return fz_range(&t->rng, 2, 4);
	if (r < 31)
		return fz_range(&t->rng, 5, 16);
	return fz_range(&t->rng, 17, max);
}

/* Which element to break: mostly the first (nothing done before it). */
static uint32_t fz_victim(struct fz_thread *t, uint32_t n)
{
	return fz_below(&t->rng, 4) ? 0 : fz_below(&t->rng, n);
}

/* Lengths: mostly a few pages; up to MiBs rarely (they cost). */
static uint64_t fz_len(struct fz_thread *t, bool pages, bool big)
{
	uint32_t r = big ? fz_below(&t->rng, 128) : 0;

	if (r < 80)
		return pages && fz_one_in(&t->rng, 2) ?
		       fz_range(&t->rng, 1, 4) * FZ_PAGE :
		       fz_range(&t->rng, 1, 8192);
	if (r < 112)
		return fz_range(&t->rng, 1, 16) * FZ_PAGE;
	if (r < 125)
		return fz_range(&t->rng, 1, 256 << 10);
	if (r < 127)
		return fz_range(&t->rng, 1, 2 << 20);
	return fz_range(&t->rng, 1, 8 << 20);
}

/* Element size: exact, or larger as a newer caller's would be. */
static uint32_t fz_esize(struct fz_thread *t, uint32_t size)
{
	return fz_one_in(&t->rng, 8) ? size + 8 * fz_range(&t->rng, 1, 4) : size;
}

/* Pack @n elements of @ksize bytes at a stride of @usize into scratch. */
static size_t fz_pack(struct fz_thread *t, const void *src, uint32_t n,
		      uint32_t ksize, uint32_t usize)
{
	size_t len = FZ_MIN((size_t)n * usize, FZ_ARR_SIZE), i;
	uint32_t copy = FZ_MIN(ksize, usize);

	memset(t->scratch, 0, len);
	for (i = 0; i < n && (i + 1) * usize <= len; i++)
		memcpy(t->scratch + i * usize, (const uint8_t *)src + i * ksize,
		       copy);
	return len;
}

/* A non-zero byte in the tail of one element (usize > ksize). */
static void fz_junk_tail(struct fz_thread *t, uint32_t n, uint32_t ksize,
			 uint32_t usize)
{
	size_t i = fz_below(&t->rng, n);

	if (usize > ksize && (i + 1) * usize <= FZ_ARR_SIZE)
		t->scratch[i * usize + ksize + fz_below(&t->rng, usize - ksize)] =
			1 + fz_below(&t->rng, 255);
}

/* ---- REG ------------------------------------------------------------------ */

/* What REG accepts: 0 or LOCAL_WRITE (remote rights come from EXPORT). */
static uint32_t fz_access(struct fz_thread *t)
{
	return fz_below(&t->rng, 2) ? MRRC_ACCESS_LOCAL_WRITE : 0;
}

static void fz_gen_req(struct fz_thread *t, struct mrrc_reg_req *r, bool big)
{
	memset(r, 0, sizeof(*r));
	r->length = fz_len(t, true, big);
	r->addr = fz_arena_addr(t, r->length, true);
	r->access = fz_access(t);
	r->flags = fz_one_in(&t->rng, 3) ? MRRC_REG_RELEASE : 0;
	if (fz_one_in(&t->rng, 16)) {	/* out members: ignored */
		r->handle = (uint32_t)fz_rnd(&t->rng);
		r->status = (int32_t)fz_rnd(&t->rng);
		r->nsegs = (uint32_t)fz_rnd(&t->rng);
	}
}

/*
 * A huge range low in the address space, where even 4-level paging has
 * room for it: page counts around 2^28 (the module's cap) and 2^32 (what
 * an unsigned int holds).
 */
static void fz_huge_req(struct fz_thread *t, struct mrrc_reg_req *r)
{
	static const uint64_t len[] = {
		1ULL << 40, (1ULL << 40) + FZ_PAGE, 1ULL << 44,
		(1ULL << 44) + FZ_PAGE, 1ULL << 46,
	};

	r->addr = 0x10000 + FZ_PAGE * fz_below(&t->rng, 16);
	r->length = len[fz_below(&t->rng, FZ_ARRAY_SIZE(len))];
}

static void fz_break_req(struct fz_thread *t, struct mrrc_reg_req *r)
{
	switch (fz_below(&t->rng, 10)) {
	case 0:
		r->flags |= 2u << fz_below(&t->rng, 31);
		break;
	case 1:
		r->__reserved = (uint32_t)fz_rnd(&t->rng) | 1;
		break;
	case 2:
		r->access |= 0x10u << fz_below(&t->rng, 28);
		break;
	case 3:		/* remote rights, which only EXPORT grants */
		r->access |= fz_range(&t->rng, 1, 7) << 1;
		break;
	case 4:
		r->length = 0;
		break;
	case 5:
		r->length = fz_interesting64(t);
		break;
	case 6:
		r->addr = fz_bad_ptr(t);
		break;
	case 7:		/* wraps around */
		r->addr = ~0ULL - fz_below(&t->rng, 8192);
		r->length = 8192;
		break;
	case 8:
		fz_huge_req(t, r);
		break;
	default:
		r->addr = fz_arena_addr(t, r->length, false);
		break;
	}
}

void fz_build_reg(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_reg_req req[FZ_REG_MAX];
	struct mrrc_reg *g = c->st;
	uint32_t n = fz_batch(t, c, FZ_REG_MAX), i, nseg;
	uint32_t rsz = fz_esize(t, sizeof(req[0]));
	uint32_t ssz = fz_esize(t, sizeof(struct mrrc_seg));
	int brk = fz_broken(c) ? (int)fz_below(&t->rng, 10) : -1;
	int rhow = fz_pick_place(t, brk == 3), show = fz_pick_place(t, brk == 4);
	size_t len;

	for (i = 0; i < n; i++)
		fz_gen_req(t, &req[i], c->mode == FZ_WELL);
	nseg = FZ_MIN(n * 4, 512);
	if (brk == 0)
		rsz = fz_below(&t->rng, sizeof(req[0]));
	else if (brk == 1)
		ssz = fz_below(&t->rng, sizeof(struct mrrc_seg));
	else if (brk == 2)
		rsz = sizeof(req[0]) + 8 * fz_range(&t->rng, 1, 8);
	else if (brk == 5)
		fz_break_req(t, &req[fz_victim(t, n)]);
	else if (brk == 6)
		nseg = fz_below(&t->rng, n);	/* too few: EOVERFLOW */

	len = fz_pack(t, req, n, sizeof(req[0]), rsz);
	if (brk == 2)
		fz_junk_tail(t, n, sizeof(req[0]), rsz);
	g->count = n;
	g->req_size = rsz;
	g->reqs = fz_place(t, t->scratch, len, rhow, &c->view[0], &c->vlen[0]);
	g->seg_size = ssz;
	g->seg_count = nseg;
	g->segs = fz_place(t, NULL, FZ_MIN((size_t)nseg * ssz, FZ_ARR_SIZE),
			   show, &c->view[1], &c->vlen[1]);
	if (brk == 7)		/* more than the array holds */
		g->count = fz_one_in(&t->rng, 2) ? 65537 : fz_interesting32(t);
	else if (brk == 8)
		g->done = (uint32_t)fz_rnd(&t->rng);
	else if (brk == 9 && !nseg)
		g->segs = 0;
	c->esz[0] = rsz;
	c->esz[1] = ssz;
	c->n = n;
}

/*
 * Element @i of a placed array, copied out: a view at the guard page need
 * not be aligned.  False if it is not all readable.
 */
static bool fz_elem(const struct fz_call *c, unsigned int v, size_t i,
		    void *dst, size_t size)
{
	size_t stride = c->esz[v];

	if (stride < size || (i + 1) * stride > c->vlen[v])
		return false;
	memcpy(dst, (const uint8_t *)c->view[v] + i * stride, size);
	return true;
}

/* Requests [0, done) are registered: their handles and segments go to the
 * pools; a handle pushed out of the pool is released.
 */
void fz_after_reg(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_reg *g = c->st;
	struct mrrc_reg_req r;
	uint32_t i, old;

	for (i = 0; i < FZ_MIN(g->done, c->n) &&
	     fz_elem(c, 0, i, &r, sizeof(r)); i++) {
		struct fz_handle h = {
			.h = r.handle, .access = r.access, .addr = r.addr,
			.len = r.length,
		};

		if (r.status)
			break;
		if (!r.handle)
			continue;
		old = fz_add_handle(t, c->s, &h);
		if (old)
			fz_release_one(t, c->s, old);
	}
}

/* ---- RELEASE -------------------------------------------------------------- */

void fz_release_one(struct fz_thread *t, struct fz_slot *s, uint32_t h)
{
	uint32_t handles[1] = { h };
	struct mrrc_release r = {
		.size = sizeof(r), .count = 1, .handles = (uintptr_t)handles,
	};

	fz_forget_handle(s, h);
	fz_ioctl(t, CMD(MRRC_CMD_RELEASE), s->fd, MRRC_IOC_RELEASE, &r);
}

void fz_build_release(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_release *r = c->st;
	uint32_t n = fz_range(&t->rng, 1, FZ_ARRAY_SIZE(t->taken)), i;
	uint32_t *h = (uint32_t *)t->scratch;
	int brk = fz_broken(c) ? (int)fz_below(&t->rng, 5) : -1;

	/* Only a well-formed call takes its handles out of the pool. */
	for (i = 0; i < n; i++) {
		if (!fz_pick_handle(t, c->s, &t->taken[i], c->mode == FZ_WELL))
			t->taken[i] = (struct fz_handle){
				.h = fz_range(&t->rng, 1, 1000),
			};
		h[i] = t->taken[i].h;
	}
	if (brk == 0)
		h[fz_below(&t->rng, n)] = fz_one_in(&t->rng, 2) ? 0 :
					  fz_interesting32(t);
	else if (brk == 1 && n > 1)
		h[n - 1] = h[0];	/* released twice */
	r->count = n;
	r->handles = fz_place(t, h, n * sizeof(*h), fz_pick_place(t, brk == 2),
			      &c->view[0], &c->vlen[0]);
	c->esz[0] = sizeof(*h);
	if (brk == 3)
		r->count = fz_interesting32(t);
	else if (brk == 4)
		r->done = (uint32_t)fz_rnd(&t->rng);
	c->n = n;
}

/*
 * Handles [0, done) are gone: out of the pools with their keys, whatever
 * the mode.  A well-formed batch that stopped at a stale handle puts the
 * ones after it back.
 */
void fz_after_release(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_release *r = c->st;
	uint32_t i, h, old;

	for (i = 0; i < FZ_MIN(r->done, c->n) &&
	     fz_elem(c, 0, i, &h, sizeof(h)); i++)
		fz_forget_handle(c->s, h);
	if (!c->err || c->mode != FZ_WELL)
		return;
	for (i = r->done + 1; i < c->n; i++) {
		old = fz_add_handle(t, c->s, &t->taken[i]);
		if (old)
			fz_release_one(t, c->s, old);
	}
}

/* ---- POST ------------------------------------------------------------------ */

static bool fz_atomic(uint8_t op)
{
	return op == MRRC_OP_FETCH_ADD || op == MRRC_OP_CMP_SWAP;
}

static bool fz_one_sided(uint8_t op)
{
	return fz_atomic(op) || op == MRRC_OP_WRITE ||
	       op == MRRC_OP_WRITE_IMM || op == MRRC_OP_READ;
}

/* The local range: an arena range, or a piece of a registered handle. */
static void fz_wr_local(struct fz_thread *t, struct fz_slot *s,
			struct mrrc_wr *w, bool big)
{
	struct fz_handle h;
	uint64_t off;

	w->len = fz_atomic(w->opcode) ? 8 : fz_len(t, false, big);
	w->addr = fz_arena_addr(t, w->len, true);
	if (fz_one_in(&t->rng, 4) && fz_pick_handle(t, s, &h, false) &&
	    h.len && h.len < FZ_MAX_LEN) {
		off = fz_rnd(&t->rng) % h.len;
		w->flags = MRRC_WR_HANDLE;
		w->handle = h.h;
		w->addr = h.addr + off;
		if (!fz_atomic(w->opcode))
			w->len = 1 + fz_rnd(&t->rng) % (h.len - off);
	}
	if (fz_atomic(w->opcode))
		w->addr &= ~7ULL;
}

static uint32_t fz_remote_access(uint8_t op)
{
	if (fz_atomic(op))
		return MRRC_ACCESS_REMOTE_ATOMIC;
	return op == MRRC_OP_READ ? MRRC_ACCESS_REMOTE_READ :
				    MRRC_ACCESS_REMOTE_WRITE;
}

/* An atomic's 8 aligned bytes inside the target, if there are any. */
static void fz_atomic_target(struct fz_thread *t, struct mrrc_wr *w,
			     const struct fz_target *tg)
{
	uint64_t first = (tg->addr + 7) & ~7ULL, end = tg->addr + tg->len;

	w->remote_addr = first;
	if (first + 8 <= end)
		w->remote_addr += 8 * (fz_rnd(&t->rng) % ((end - first) / 8));
}

/*
 * The remote range: a segment this context registered with the access
 * the operation needs, in bounds.  A remote access error breaks the
 * connection (as it must), so a bad key, a wrong access or a range out of
 * bounds is made only now and then.
 */
static void fz_wr_remote(struct fz_thread *t, struct fz_slot *s,
			 struct mrrc_wr *w)
{
	bool exact = !fz_one_in(&t->rng, FZ_BREAK_CONN);
	struct fz_target tg;
	uint64_t off;

	if (!fz_pick_target(t, s, &tg,
			    exact ? fz_remote_access(w->opcode) : 0)) {
		w->remote_addr = fz_arena_addr(t, w->len, true) & ~7ULL;
		w->rkey = (uint32_t)fz_rnd(&t->rng);
		return;
	}
	w->rkey = tg.rkey;
	if (fz_atomic(w->opcode)) {
		fz_atomic_target(t, w, &tg);
		return;
	}
	off = fz_rnd(&t->rng) % tg.len;
	w->remote_addr = tg.addr + off;
	if (exact && w->len > tg.len - off)
		w->len = tg.len - off;
}

/* None, soon, past, or never. */
static uint64_t fz_deadline(struct fz_thread *t)
{
	uint32_t r = fz_below(&t->rng, 10);

	if (r < 5)
		return 0;
	if (r < 8)
		return fz_now_ns() + fz_range(&t->rng, 1, 100) * 1000000ULL;
	if (r < 9)
		return fz_one_in(&t->rng, 2) ? 1 : fz_now_ns() - 1000000;
	return fz_one_in(&t->rng, 2) ? ~0ULL : fz_now_ns() + 3600000000000ULL;
}

/*
 * A one-sided operation needs a segment with the right access: without
 * one it would only break the connection, so it mostly becomes a
 * two-sided one.
 */
static uint8_t fz_feasible_op(struct fz_thread *t, struct fz_slot *s,
			      uint8_t op)
{
	static const uint8_t two_sided[] = {
		MRRC_OP_SEND, MRRC_OP_RECV, MRRC_OP_CRW, MRRC_OP_STCRW,
	};
	struct fz_target tg;

	if (!fz_one_sided(op) || fz_one_in(&t->rng, FZ_BREAK_CONN) ||
	    fz_pick_target(t, s, &tg, fz_remote_access(op)))
		return op;
	return two_sided[fz_below(&t->rng, FZ_ARRAY_SIZE(two_sided))];
}

static void fz_gen_wr(struct fz_thread *t, const struct fz_call *c,
		      struct mrrc_wr *w, uint32_t conn, uint8_t op)
{
	uint32_t self;

	op = fz_feasible_op(t, c->s, op);
	/* Our keys are good only where the other end is this context. */
	if (fz_one_sided(op) && !fz_one_in(&t->rng, FZ_BREAK_CONN)) {
		self = fz_pick_self_conn(t, c->s);
		conn = self ? self : conn;
	}
	memset(w, 0, sizeof(*w));
	w->wr_id = fz_rnd(&t->rng);
	w->conn = conn;
	w->opcode = op;
	fz_wr_local(t, c->s, w, c->mode == FZ_WELL);
	if (fz_one_sided(op))
		fz_wr_remote(t, c->s, w);
	if (op == MRRC_OP_WRITE_IMM)
		w->imm = (uint32_t)fz_rnd(&t->rng);
	if (fz_atomic(op))
		w->compare_add = fz_rnd(&t->rng);
	if (op == MRRC_OP_CMP_SWAP)
		w->swap = fz_rnd(&t->rng);
	if (op == MRRC_OP_CRW || op == MRRC_OP_STCRW) {
		w->tag = fz_range(&t->rng, 1, 64);
		w->deadline_ns = fz_deadline(t);
	}
}

/* Two operations that meet on one connection: SEND into RECV, CRW into
 * STCRW; in either order in the batch.
 */
static void fz_gen_pair(struct fz_thread *t, const struct fz_call *c,
			struct mrrc_wr *w, uint32_t a, uint32_t b)
{
	bool tagged = fz_one_in(&t->rng, 2), swap = fz_one_in(&t->rng, 2);
	struct mrrc_wr *x = &w[swap], *y = &w[!swap];

	fz_gen_wr(t, c, x, a, tagged ? MRRC_OP_CRW : MRRC_OP_SEND);
	fz_gen_wr(t, c, y, b, tagged ? MRRC_OP_STCRW : MRRC_OP_RECV);
	if (fz_below(&t->rng, 4) && !(y->flags & MRRC_WR_HANDLE)) {
		/* Mostly room enough on the receiving side. */
		y->len = x->len + fz_below(&t->rng, 64);
		y->addr = fz_arena_addr(t, y->len, true);
	}
	y->tag = x->tag;
	y->deadline_ns = x->deadline_ns ? fz_deadline(t) : 0;
}

static void fz_break_wr(struct fz_thread *t, struct mrrc_wr *w)
{
	static const uint8_t ops[] = {
		0, MRRC_OP_LAST + 1, MRRC_OP_RECV_IMM, MRRC_OP_EVENT, 255,
	};

	switch (fz_below(&t->rng, 16)) {
	case 0:
		w->flags |= 2 << fz_below(&t->rng, 7);
		break;
	case 1:
		w->__reserved = 1 + fz_below(&t->rng, 0xfffe);
		break;
	case 2:
		w->__reserved2 = (uint32_t)fz_rnd(&t->rng) | 1;
		break;
	case 3:
		w->opcode = fz_one_in(&t->rng, 4) ? (uint8_t)fz_rnd(&t->rng) :
			    ops[fz_below(&t->rng, FZ_ARRAY_SIZE(ops))];
		break;
	case 4:
		w->len = 0;
		break;
	case 5:
		w->len = fz_one_in(&t->rng, 2) ? FZ_MAX_LEN + 1 :
			 fz_interesting64(t);
		break;
	case 6:		/* wraps around */
		w->addr = ~0ULL - fz_below(&t->rng, 4096);
		break;
	case 7:		/* a handle without the flag */
		w->flags &= ~MRRC_WR_HANDLE;
		w->handle = (uint32_t)fz_rnd(&t->rng) | 1;
		break;
	case 8:
		w->flags |= MRRC_WR_HANDLE;
		w->handle = fz_one_in(&t->rng, 2) ? 0 : fz_interesting32(t);
		break;
	case 9:		/* atomics: wrong length or misaligned */
		w->opcode = MRRC_OP_FETCH_ADD + fz_below(&t->rng, 2);
		w->len = fz_one_in(&t->rng, 2) ? 4 : 8;
		w->addr |= 1 + fz_below(&t->rng, 7);
		break;
	case 10:	/* remote members on a two-sided operation */
		w->opcode = MRRC_OP_SEND + fz_below(&t->rng, 2);
		w->rkey = (uint32_t)fz_rnd(&t->rng) | 1;
		break;
	case 11:
		w->opcode = MRRC_OP_WRITE;
		w->imm = (uint32_t)fz_rnd(&t->rng) | 1;
		break;
	case 12:
		w->opcode = MRRC_OP_READ;
		w->swap = fz_rnd(&t->rng) | 1;
		break;
	case 13:
		w->opcode = MRRC_OP_SEND;
		w->tag = fz_rnd(&t->rng) | 1;
		break;
	case 14:
		w->addr = fz_bad_ptr(t);
		break;
	default:
		w->conn = fz_interesting32(t);
		break;
	}
}

void fz_build_post(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_wr w[FZ_POST_MAX];
	struct mrrc_post *p = c->st;
	uint32_t n = fz_batch(t, c, FZ_POST_MAX), i = 0, a, b;
	uint32_t wsz = fz_esize(t, sizeof(w[0]));
	int brk = fz_broken(c) ? (int)fz_below(&t->rng, 12) : -1;
	bool pairs = fz_one_in(&t->rng, 2) && fz_pick_pair(t, c->s, &a, &b);
	size_t len;

	while (i < n) {
		if (pairs && i + 1 < n && fz_below(&t->rng, 3)) {
			if (fz_one_in(&t->rng, 2))
				fz_gen_pair(t, c, &w[i], a, b);
			else
				fz_gen_pair(t, c, &w[i], b, a);
			i += 2;
		} else {
			fz_gen_wr(t, c, &w[i], fz_pick_conn(t, c->s),
				  1 + fz_below(&t->rng, MRRC_OP_LAST));
			i++;
		}
	}
	if (brk == 0)
		wsz = fz_below(&t->rng, sizeof(w[0]));
	else if (brk == 1)
		wsz = sizeof(w[0]) + 8 * fz_range(&t->rng, 1, 4);
	else if (brk >= 5)
		fz_break_wr(t, &w[fz_victim(t, n)]);

	len = fz_pack(t, w, n, sizeof(w[0]), wsz);
	if (brk == 1)
		fz_junk_tail(t, n, sizeof(w[0]), wsz);
	p->count = n;
	p->wr_size = wsz;
	p->wrs = fz_place(t, t->scratch, len, fz_pick_place(t, brk == 2),
			  &c->view[0], &c->vlen[0]);
	if (brk == 3)
		p->count = fz_one_in(&t->rng, 2) ? 65537 : fz_interesting32(t);
	else if (brk == 4)
		p->done = (uint32_t)fz_rnd(&t->rng);
}

/* ---- POLL and CANCEL ------------------------------------------------------- */

void fz_build_poll(struct fz_thread *t, struct fz_call *c)
{
	static const uint32_t huge[] = { 4096, 1 << 20, 0x80000000, 0xffffffff };
	struct mrrc_poll *p = c->st;
	uint32_t max = fz_range(&t->rng, 1, FZ_POLL_MAX);
	uint32_t csz = fz_esize(t, sizeof(struct mrrc_cqe));
	int brk = fz_broken(c) ? (int)fz_below(&t->rng, 6) : -1;

	if (brk == 0)
		max = fz_one_in(&t->rng, 2) ? 0 : fz_interesting32(t);
	else if (brk == 1)
		csz = fz_below(&t->rng, sizeof(struct mrrc_cqe));
	else if (brk == 2)
		csz = huge[fz_below(&t->rng, FZ_ARRAY_SIZE(huge))];
	else if (brk == 3)	/* more than the array has room for */
		max = FZ_ARR_SIZE / csz + fz_below(&t->rng, 1000);
	p->max = max;
	p->cqe_size = csz;
	p->cqes = fz_place(t, NULL, FZ_MIN((size_t)max * csz, FZ_ARR_SIZE),
			   fz_pick_place(t, brk == 4), &c->view[0], &c->vlen[0]);
	if (brk == 5)
		p->count = (uint32_t)fz_rnd(&t->rng);
	c->esz[0] = csz;
}

void fz_after_poll(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_cqe cqe[FZ_POLL_MAX];
	struct mrrc_poll *p = c->st;
	uint32_t i, n = 0;

	if (c->err)
		return;
	for (i = 0; i < p->count; i++) {
		if (!fz_elem(c, 0, i, &cqe[n], sizeof(cqe[0])))
			break;
		if (++n == FZ_POLL_MAX) {
			fz_events(t, c->s, cqe, n);
			n = 0;
		}
	}
	if (n)
		fz_events(t, c->s, cqe, n);
}

/* A well-formed POLL, so that completions never pile up. */
void fz_drain(struct fz_thread *t, struct fz_slot *s)
{
	fz_do_cmd(t, s, CMD(MRRC_CMD_POLL), FZ_WELL);
}

void fz_build_cancel(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_cancel *k = c->st;

	k->conn = fz_pick_conn(t, c->s);
	k->opcode = fz_one_in(&t->rng, 2) ? MRRC_OP_CRW : MRRC_OP_STCRW;
	k->tag = fz_range(&t->rng, 1, 64);
	if (!fz_broken(c))
		return;
	switch (fz_below(&t->rng, 3)) {
	case 0:
		k->opcode = fz_one_in(&t->rng, 2) ? fz_below(&t->rng, 256) :
			    fz_interesting32(t);
		break;
	case 1:
		k->conn = fz_interesting32(t);
		break;
	default:
		k->tag = fz_interesting64(t);
		break;
	}
}

/*
 * EXPORT: a range of the arena for 1-3 connections of the slot, with
 * rights mostly valid; broken ones get bad rights, lengths, connection
 * arrays or pointers.
 */
void fz_build_export(struct fz_thread *t, struct fz_call *c)
{
	static const uint32_t rights[] = {
		0, MRRC_ACCESS_REMOTE_READ, MRRC_ACCESS_REMOTE_WRITE,
		MRRC_ACCESS_REMOTE_WRITE | MRRC_ACCESS_REMOTE_READ,
		MRRC_ACCESS_REMOTE_ATOMIC,
	};
	struct mrrc_export *x = c->st;
	uint32_t n = fz_range(&t->rng, 1, 3), i;
	uint32_t *ids = (uint32_t *)t->scratch;
	int brk = fz_broken(c) ? (int)fz_below(&t->rng, 6) : -1;

	x->len = fz_range(&t->rng, 1, 3 * 4096);
	x->addr = fz_arena_addr(t, x->len, brk != 0);
	x->access = rights[fz_below(&t->rng, FZ_ARRAY_SIZE(rights))];
	for (i = 0; i < n; i++)
		ids[i] = fz_pick_conn(t, c->s);
	if (brk == 1)
		x->access = fz_interesting32(t);
	else if (brk == 2)
		x->len = fz_interesting64(t);
	else if (brk == 3)
		n = fz_one_in(&t->rng, 2) ? 0 : fz_interesting32(t);
	else if (brk == 4)
		ids[0] = fz_interesting32(t);
	x->nconns = n;
	x->conns = fz_place(t, ids, FZ_MIN(n, 3) * sizeof(*ids),
			    fz_pick_place(t, brk == 5), &c->view[0],
			    &c->vlen[0]);
	c->esz[0] = sizeof(*ids);
	c->n = FZ_MIN(n, 3);
}

/*
 * An export's segments are the remote targets of one-sided operations
 * (REG grants no remote rights).  They are named by the export's id with
 * the top bit set, so that UNEXPORT forgets them.
 */
#define FZ_EXPORT_H(id)	(0x80000000u | (id))

void fz_after_export(struct fz_thread *t, struct fz_call *c)
{
	const struct mrrc_export *x = c->st;
	uint32_t access = x->access ?: MRRC_ACCESS_REMOTE_READ, i, n;
	uint32_t conns[3] = { 0 };

	if (c->err)
		return;
	for (n = 0; n < FZ_MIN(c->n, 3) &&
	     fz_elem(c, 0, n, &conns[n], sizeof(conns[n])); n++)
		;
	for (i = 0; i < FZ_MIN(x->nsegs, MRRC_EXPORT_SEGS); i++)
		fz_add_target(t, c->s, &x->segs[i], FZ_EXPORT_H(x->id),
			      access, conns, n);
}

void fz_after_unexport(struct fz_thread *t, struct fz_call *c)
{
	const struct mrrc_unexport *u = c->st;

	(void)t;
	if (!c->err)
		fz_forget_handle(c->s, FZ_EXPORT_H(u->id));
}

/* UNEXPORT: ids are small numbers per context, or anything. */
void fz_build_unexport(struct fz_thread *t, struct fz_call *c)
{
	struct mrrc_unexport *u = c->st;

	u->id = fz_range(&t->rng, 1, 64);
	if (!fz_broken(c))
		return;
	if (fz_one_in(&t->rng, 2))
		u->id = fz_interesting32(t);
	else
		u->__reserved = (uint32_t)fz_rnd(&t->rng);
}
