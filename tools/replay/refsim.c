// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc-replay - an independent user-space LRU simulator, to check the
 * kernel's lru policy on traces whose requests never partially overlap
 * (each request is either exactly a cached range or disjoint from all).
 * Deliberately simple: a hash table of page ranges and a doubly linked
 * recency list, sharing no code with the kernel.
 */
#include <errno.h>
#include <stdlib.h>

#include "replay.h"

struct ent {
	uint64_t first, last;		/* pages */
	struct ent *prev, *next;	/* recency: head = most recent */
	struct ent *hnext;		/* hash chain */
};

struct sim {
	struct ent **table;
	size_t buckets;
	struct ent head;		/* sentinel */
	uint64_t pages, regions;
};

static size_t hash(const struct sim *s, uint64_t first, uint64_t last)
{
	return (first * 0x9E3779B97F4A7C15ULL ^ last) % s->buckets;
}

static void unlink_lru(struct ent *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
}

static void push_front(struct sim *s, struct ent *e)
{
	e->next = s->head.next;
	e->prev = &s->head;
	s->head.next->prev = e;
	s->head.next = e;
}

static void drop(struct sim *s, struct ent *e)
{
	struct ent **pp = &s->table[hash(s, e->first, e->last)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	unlink_lru(e);
	s->pages -= e->last - e->first + 1;
	s->regions--;
	free(e);
}

int refsim_lru(const struct trace *t, uint64_t cache_pages,
	       uint32_t max_regions, struct refsim_result *res)
{
	struct sim s = { .buckets = 1 << 20 };
	size_t i;
	int ret = 0;

	s.table = calloc(s.buckets, sizeof(*s.table));
	if (!s.table)
		return -ENOMEM;
	s.head.next = s.head.prev = &s.head;
	*res = (struct refsim_result){ 0 };

	for (i = 0; i < t->n; i++) {
		uint64_t first = t->r[i].addr / 4096;
		uint64_t last = (t->r[i].addr + t->r[i].len - 1) / 4096;
		uint64_t np = last - first + 1;
		struct ent *e;

		for (e = s.table[hash(&s, first, last)]; e; e = e->hnext)
			if (e->first == first && e->last == last)
				break;
		if (e) {
			res->hits++;
			unlink_lru(e);
			push_front(&s, e);
			continue;
		}
		if (np > cache_pages) {
			ret = -ENOSPC;
			break;
		}
		while (s.pages + np > cache_pages || s.regions + 1 > max_regions) {
			drop(&s, s.head.prev);
			res->deregistrations++;
		}
		e = calloc(1, sizeof(*e));
		if (!e) {
			ret = -ENOMEM;
			break;
		}
		e->first = first;
		e->last = last;
		e->hnext = s.table[hash(&s, first, last)];
		s.table[hash(&s, first, last)] = e;
		push_front(&s, e);
		s.pages += np;
		s.regions++;
		res->registrations++;
	}
	while (s.head.next != &s.head)
		drop(&s, s.head.next);
	free(s.table);
	return ret;
}
