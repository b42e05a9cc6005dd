// SPDX-License-Identifier: GPL-2.0-only
/* The buffer manager's frames, FIX/UNFIX and 2Q replacement: see pool.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

enum { L_NONE, L_A1IN, L_AM };

struct frame {
	uint64_t page;
	bool used, excl, dirty;
	bool io;		/* its page being read or written: wait */
	unsigned int fixes;
	unsigned int xwait;	/* exclusive FIXes waiting for its page */
	int list;		/* L_A1IN or L_AM when used */
	int prev, next;		/* in its list; -1 ends */
	int chain;		/* next frame in the hash bucket */
};

struct dlist {
	int head, tail;		/* head: newest (A1in) / most recent (Am) */
	unsigned int len;
};

struct bm_pool {
	/*
	 * Everything below, the frames' bytes aside; the tier is called
	 * without it, its frame marked io.
	 */
	pthread_mutex_t lock;
	pthread_cond_t changed;	/* a fix dropped, an I/O ended */
	unsigned int waiting;	/* bm_fix_wait()s waiting now */
	unsigned int nframes, kin, kout;
	size_t page_size;
	struct bm_tier tier;
	struct frame *f;
	uint8_t *mem;
	int *bucket;
	unsigned int nbuckets;	/* a power of two */
	struct dlist a1in, am;
	/* A1out: the ids of the last kout pages A1in gave up, oldest first */
	uint64_t *a1out;
	unsigned int ohead, on;
	struct bm_pool_stats st;
};

static unsigned int hash(const struct bm_pool *p, uint64_t page)
{
	return (unsigned int)((page * 0x9e3779b97f4a7c15ull) >> 32) & (p->nbuckets - 1);
}

static int lookup(const struct bm_pool *p, uint64_t page)
{
	int i;

	for (i = p->bucket[hash(p, page)]; i >= 0; i = p->f[i].chain)
		if (p->f[i].page == page)
			return i;
	return -1;
}

static void hash_del(struct bm_pool *p, int i)
{
	int *link = &p->bucket[hash(p, p->f[i].page)];

	while (*link != i)
		link = &p->f[*link].chain;
	*link = p->f[i].chain;
}

static struct dlist *list_of(struct bm_pool *p, int list)
{
	return list == L_AM ? &p->am : &p->a1in;
}

static void list_del(struct bm_pool *p, int i)
{
	struct dlist *l = list_of(p, p->f[i].list);
	struct frame *x = &p->f[i];

	if (x->prev >= 0)
		p->f[x->prev].next = x->next;
	else
		l->head = x->next;
	if (x->next >= 0)
		p->f[x->next].prev = x->prev;
	else
		l->tail = x->prev;
	l->len--;
	x->list = L_NONE;
}

static void list_push(struct bm_pool *p, int i, int list)
{
	struct dlist *l = list_of(p, list);
	struct frame *x = &p->f[i];

	x->list = list;
	x->prev = -1;
	x->next = l->head;
	if (l->head >= 0)
		p->f[l->head].prev = i;
	else
		l->tail = i;
	l->head = i;
	l->len++;
}

/* The oldest / least recent frame of @list nobody has fixed, or -1. */
static int unfixed_tail(const struct bm_pool *p, const struct dlist *l)
{
	int i;

	for (i = l->tail; i >= 0; i = p->f[i].prev)
		if (!p->f[i].fixes && !p->f[i].io && !p->f[i].xwait)
			return i;
	return -1;
}

static int a1out_take(struct bm_pool *p, uint64_t page)
{
	unsigned int k, j;

	for (k = 0; k < p->on; k++) {
		j = (p->ohead + k) % p->kout;
		if (p->a1out[j] == page) {
			/* close the gap: later ids move up one */
			for (; k + 1 < p->on; k++)
				p->a1out[(p->ohead + k) % p->kout] =
					p->a1out[(p->ohead + k + 1) % p->kout];
			p->on--;
			return 1;
		}
	}
	return 0;
}

static void a1out_add(struct bm_pool *p, uint64_t page)
{
	if (p->on == p->kout) {		/* forget the oldest */
		p->ohead = (p->ohead + 1) % p->kout;
		p->on--;
	}
	p->a1out[(p->ohead + p->on++) % p->kout] = page;
}

int bm_pool_create(struct bm_pool **out, unsigned int frames, size_t page_size,
		   const struct bm_tier *tier)
{
	struct bm_pool *p;
	unsigned int i;

	if (frames < 4 || frames > (1u << 24) || !page_size ||
	    page_size > ((size_t)1 << 30) / frames || !tier || !tier->read ||
	    !tier->write)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (pthread_mutex_init(&p->lock, NULL)) {
		free(p);
		return -ENOMEM;
	}
	if (pthread_cond_init(&p->changed, NULL)) {
		pthread_mutex_destroy(&p->lock);
		free(p);
		return -ENOMEM;
	}
	p->nframes = frames;
	p->kin = frames / 4;
	p->kout = frames / 2;
	p->page_size = page_size;
	p->tier = *tier;
	for (p->nbuckets = 1; p->nbuckets < 2 * frames; p->nbuckets <<= 1)
		;
	p->f = calloc(frames, sizeof(*p->f));
	p->mem = calloc(frames, page_size);
	p->bucket = malloc(p->nbuckets * sizeof(*p->bucket));
	p->a1out = calloc(p->kout, sizeof(*p->a1out));
	if (!p->f || !p->mem || !p->bucket || !p->a1out) {
		bm_pool_destroy(p);
		return -ENOMEM;
	}
	for (i = 0; i < p->nbuckets; i++)
		p->bucket[i] = -1;
	p->a1in = (struct dlist){ -1, -1, 0 };
	p->am = (struct dlist){ -1, -1, 0 };
	*out = p;
	return 0;
}

void bm_pool_destroy(struct bm_pool *p)
{
	if (!p)
		return;
	free(p->f);
	free(p->mem);
	free(p->bucket);
	free(p->a1out);
	pthread_cond_destroy(&p->changed);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/*
 * A frame for a new page: a free one, or 2Q's victim; -1 if all are
 * fixed or busy with I/O.
 */
static int victim(const struct bm_pool *p)
{
	unsigned int i;
	int v = -1;

	for (i = 0; i < p->nframes; i++)
		if (!p->f[i].used)
			return i;
	if (p->a1in.len > p->kin)
		v = unfixed_tail(p, &p->a1in);
	if (v < 0)
		v = unfixed_tail(p, &p->am);
	if (v < 0)	/* Am all fixed: A1in below its share still gives */
		v = unfixed_tail(p, &p->a1in);
	return v;
}

static uint8_t *bytes(const struct bm_pool *p, int i)
{
	return p->mem + (size_t)i * p->page_size;
}

/*
 * Frame @i written to the tier, the lock dropped meanwhile: its page stays
 * where FIX finds it, and waits for it (io).  0 or the tier's error (the
 * page then still dirty).  Called with the lock, returns with it.
 */
static int write_back(struct bm_pool *p, int i)
{
	struct frame *x = &p->f[i];
	int r;

	x->io = true;
	pthread_mutex_unlock(&p->lock);
	r = p->tier.write(p->tier.arg, x->page, bytes(p, i));
	pthread_mutex_lock(&p->lock);
	x->io = false;
	if (!r) {
		x->dirty = false;
		p->st.writebacks++;
	}
	pthread_cond_broadcast(&p->changed);
	return r;
}

/*
 * @page read into frame @i, a victim neither fixed nor dirty: its page
 * leaves, @page is where FIX finds it and waits for it while it is read.
 * If the read fails, the frame is free.  With the lock, as write_back().
 */
static int load(struct bm_pool *p, int i, uint64_t page)
{
	struct frame *x = &p->f[i];
	int r;

	if (x->used) {
		if (x->list == L_A1IN)
			a1out_add(p, x->page);
		list_del(p, i);
		hash_del(p, i);
		p->st.evictions++;
	}
	*x = (struct frame){ .page = page, .used = true, .io = true,
			     .prev = -1, .next = -1 };
	x->chain = p->bucket[hash(p, page)];
	p->bucket[hash(p, page)] = i;
	pthread_mutex_unlock(&p->lock);
	r = p->tier.read(p->tier.arg, page, bytes(p, i));
	pthread_mutex_lock(&p->lock);
	x->io = false;
	pthread_cond_broadcast(&p->changed);
	if (r) {
		hash_del(p, i);
		x->used = false;
		return r;
	}
	if (a1out_take(p, page)) {	/* seen again: a hot page */
		list_push(p, i, L_AM);
		p->st.to_am++;
	} else {
		list_push(p, i, L_A1IN);
	}
	p->st.misses++;
	return 0;
}

/*
 * An exclusive FIX waiting for a page's fixes to go keeps new shared ones
 * out (else a stream of readers could keep it waiting forever), and its
 * frame from being taken meanwhile (xwait).
 */
static int fix(struct bm_pool *p, uint64_t page, bool exclusive, bool wait,
	       void **frame)
{
	struct frame *x;
	int i, r = 0, xw = -1;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		if (xw >= 0) {		/* looked at again from the start */
			p->f[xw].xwait--;
			xw = -1;
		}
		i = lookup(p, page);
		if (i >= 0) {
			x = &p->f[i];
			if (!x->io && !x->excl && !(exclusive && x->fixes) &&
			    (exclusive || !x->xwait)) {
				if (x->list == L_AM && p->am.head != i) {
					list_del(p, i);	/* most recent */
					list_push(p, i, L_AM);
				}
				p->st.hits++;
				break;
			}
		} else {
			i = victim(p);
			/*
			 * A dirty victim is written back first (and looked
			 * at again: the lock was dropped); if that fails, or
			 * the read does, nothing is lost.
			 */
			if (i >= 0 && p->f[i].used && p->f[i].dirty) {
				r = write_back(p, i);
				if (r)
					goto out;
				continue;
			}
			if (i >= 0) {
				r = load(p, i, page);
				if (r)
					goto out;
				break;
			}
		}
		if (!wait) {
			r = -EBUSY;
			goto out;
		}
		if (i >= 0 && exclusive && !p->f[i].io) {
			p->f[i].xwait++;
			xw = i;
		}
		p->st.waits++;
		p->waiting++;
		pthread_cond_wait(&p->changed, &p->lock);
		p->waiting--;
	}
	x = &p->f[i];
	x->fixes++;
	x->excl = exclusive;
	*frame = bytes(p, i);
out:
	pthread_mutex_unlock(&p->lock);
	return r;
}

int bm_fix(struct bm_pool *p, uint64_t page, bool exclusive, void **frame)
{
	return fix(p, page, exclusive, false, frame);
}

int bm_fix_wait(struct bm_pool *p, uint64_t page, bool exclusive, void **frame)
{
	return fix(p, page, exclusive, true, frame);
}

int bm_unfix(struct bm_pool *p, uint64_t page, bool dirty)
{
	struct frame *x;
	int i, r = 0;

	pthread_mutex_lock(&p->lock);
	i = lookup(p, page);
	if (i < 0 || !p->f[i].fixes || (dirty && !p->f[i].excl)) {
		r = -EINVAL;
		goto out;
	}
	x = &p->f[i];
	x->dirty |= dirty;
	if (!--x->fixes) {
		x->excl = false;
		pthread_cond_broadcast(&p->changed);
	}
out:
	pthread_mutex_unlock(&p->lock);
	return r;
}

int bm_flush(struct bm_pool *p)
{
	bool busy = false;
	unsigned int i;
	int r = 0;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->nframes && !r; i++) {
		struct frame *x = &p->f[i];

		while (x->used && x->io)	/* a load or write-back under way */
			pthread_cond_wait(&p->changed, &p->lock);
		if (!x->used || !x->dirty)
			continue;
		if (x->excl) {		/* its bytes may be changing */
			busy = true;
			continue;
		}
		r = write_back(p, (int)i);
	}
	pthread_mutex_unlock(&p->lock);
	return r ?: busy ? -EBUSY : 0;
}

void bm_pool_stats(struct bm_pool *p, struct bm_pool_stats *st)
{
	pthread_mutex_lock(&p->lock);
	*st = p->st;
	st->waiting = p->waiting;
	pthread_mutex_unlock(&p->lock);
}

int bm_pool_discard(struct bm_pool *p, uint64_t page)
{
	struct frame *x;
	int i, r = 0;

	pthread_mutex_lock(&p->lock);
	i = lookup(p, page);
	x = i < 0 ? NULL : &p->f[i];
	if (!x) {
		r = -ENOENT;
	} else if (x->fixes || x->io || x->xwait) {
		r = -EBUSY;
	} else {
		list_del(p, i);
		hash_del(p, i);
		x->used = false;
		x->dirty = false;
		p->st.discards++;
		pthread_cond_broadcast(&p->changed);	/* a frame free */
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

int bm_pool_where(struct bm_pool *p, uint64_t page)
{
	int i, w;

	pthread_mutex_lock(&p->lock);
	i = lookup(p, page);
	w = i < 0 ? 0 : p->f[i].list == L_AM ? 2 : 1;
	pthread_mutex_unlock(&p->lock);
	return w;
}
