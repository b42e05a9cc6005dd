// SPDX-License-Identifier: GPL-2.0-only
/* The global memory's allocation at a page's home: see galloc.h. */
#include <errno.h>
#include <stdlib.h>

#include "galloc.h"

int galloc_init(struct galloc *a, unsigned int self, unsigned int nodes,
		unsigned int pages)
{
	*a = (struct galloc){ .self = self, .nodes = nodes, .pages = pages,
			      .next = self };
	if (!nodes || nodes > 255 || self >= nodes)
		return -EINVAL;
	a->by = calloc(pages ? pages : 1, 1);
	if (!a->by)
		return -ENOMEM;
	a->homed = pages > self ? (pages - self + nodes - 1) / nodes : 0;
	a->nfree = a->homed;
	return 0;
}

void galloc_destroy(struct galloc *a)
{
	free(a->by);
	a->by = NULL;
}

int galloc_take(struct galloc *a, unsigned int node, unsigned int *page)
{
	unsigned int p = a->next, k;

	if (node >= a->nodes)
		return -EINVAL;
	/* round the pages homed here, from where the last search stopped */
	for (k = 0; a->nfree && k < a->homed; k++, p += a->nodes) {
		if (p >= a->pages)
			p = a->self;
		if (!a->by[p]) {
			a->by[p] = (uint8_t)(node + 1);
			a->nfree--;
			a->next = p + a->nodes;
			a->granted++;
			*page = p;
			return 0;
		}
	}
	a->refused++;
	return -ENOMEM;
}

int galloc_give(struct galloc *a, unsigned int node, unsigned int page)
{
	if (node >= a->nodes || !galloc_is_home(a, page))
		return -EINVAL;
	if (!a->by[page])
		return -ENOENT;
	if (a->by[page] != node + 1)
		return -EPERM;
	a->by[page] = 0;
	a->nfree++;
	a->released++;
	return 0;
}

unsigned int galloc_node_failed(struct galloc *a, unsigned int node)
{
	unsigned int p, k = 0;

	if (node >= a->nodes)
		return 0;
	for (p = a->self; p < a->pages; p += a->nodes) {
		if (a->by[p] == node + 1) {
			a->by[p] = 0;
			a->nfree++;
			k++;
		}
	}
	return k;
}
