/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The global memory's allocation (issue 18, §3.4.1-2 of the paper): page
 * p of the global memory has its home at node p % nodes, and each node
 * hands out the pages it is home to.  Malloc takes a page of the node's
 * own while one is free and else asks the other nodes in turn; Free first
 * writes the page through the coherence protocol (which invalidates every
 * copy) and then gives it back to its home, which takes it only from the
 * node it gave it to.  This is the home's book: who has which page.
 */
#ifndef MRRC_BM_GALLOC_H
#define MRRC_BM_GALLOC_H

#include <stdbool.h>
#include <stdint.h>

struct galloc {
	unsigned int self, nodes, pages;	/* pages of the whole memory */
	uint8_t *by;		/* [pages]: 0 free, else the taker + 1 */
	unsigned int next;	/* where the search for a free page goes on */
	unsigned int homed;	/* pages homed here */
	unsigned int nfree;	/* of those, free */
	unsigned long granted, refused, released;
};

/* 0, -EINVAL (@self >= @nodes, no node, more than 255 nodes) or -ENOMEM. */
int galloc_init(struct galloc *a, unsigned int self, unsigned int nodes,
		unsigned int pages);
void galloc_destroy(struct galloc *a);
static inline bool galloc_is_home(const struct galloc *a, unsigned int page)
{
	return page < a->pages && page % a->nodes == a->self;
}
/* A free page homed here for node @node: 0, -ENOMEM or -EINVAL. */
int galloc_take(struct galloc *a, unsigned int node, unsigned int *page);
/*
 * Node @node gives @page back: 0, -EINVAL (not a page homed here, or no
 * such node), -ENOENT (it is free) or -EPERM (another node has it).
 */
int galloc_give(struct galloc *a, unsigned int node, unsigned int page);
/* The pages node @node had go back: how many. */
unsigned int galloc_node_failed(struct galloc *a, unsigned int node);

#endif
