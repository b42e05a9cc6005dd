// SPDX-License-Identifier: GPL-2.0-only
/*
 * The global memory's allocation at a home (galloc.c): only pages homed
 * here are handed out, each to one node at a time; a page comes back only
 * from the node that has it; a dead node's pages come back; and a random
 * sequence of takes and gives agrees with a model.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "galloc.h"

static void test_init(void **state)
{
	struct galloc a;

	(void)state;
	assert_int_equal(galloc_init(&a, 3, 3, 10), -EINVAL);
	assert_int_equal(galloc_init(&a, 0, 0, 10), -EINVAL);
	assert_int_equal(galloc_init(&a, 0, 256, 10), -EINVAL);
	assert_int_equal(galloc_init(&a, 2, 3, 10), 0);
	assert_int_equal(a.homed, 3);		/* 2, 5, 8 */
	galloc_destroy(&a);
	assert_int_equal(galloc_init(&a, 2, 3, 2), 0);
	assert_int_equal(a.homed, 0);		/* none: every take refused */
	galloc_destroy(&a);
}

static void test_take_give(void **state)
{
	struct galloc a;
	unsigned int p[4], i;

	(void)state;
	assert_int_equal(galloc_init(&a, 1, 3, 10), 0);	/* 1, 4, 7 */
	for (i = 0; i < 3; i++) {
		assert_int_equal(galloc_take(&a, i, &p[i]), 0);
		assert_true(galloc_is_home(&a, p[i]));
	}
	assert_int_not_equal(p[0], p[1]);
	assert_int_not_equal(p[1], p[2]);
	assert_int_not_equal(p[0], p[2]);
	assert_int_equal(galloc_take(&a, 0, &p[3]), -ENOMEM);
	assert_int_equal(galloc_take(&a, 3, &p[3]), -EINVAL);
	assert_int_equal(a.refused, 1);
	/* only from the node that has it */
	assert_int_equal(galloc_give(&a, 1, p[0]), -EPERM);
	assert_int_equal(galloc_give(&a, 3, p[0]), -EINVAL);
	assert_int_equal(galloc_give(&a, 0, 2), -EINVAL);	/* homed at 2 */
	assert_int_equal(galloc_give(&a, 0, 10), -EINVAL);	/* no such page */
	assert_int_equal(galloc_give(&a, 0, p[0]), 0);
	assert_int_equal(galloc_give(&a, 0, p[0]), -ENOENT);	/* twice */
	/* and then it is the one handed out */
	assert_int_equal(galloc_take(&a, 2, &p[3]), 0);
	assert_int_equal(p[3], p[0]);
	/* node 2 dies: its two pages come back, node 1's stays */
	assert_int_equal(galloc_node_failed(&a, 2), 2);
	assert_int_equal(a.nfree, 2);
	assert_int_equal(galloc_give(&a, 2, p[2]), -ENOENT);
	assert_int_equal(galloc_give(&a, 1, p[1]), 0);
	assert_int_equal(galloc_node_failed(&a, 7), 0);
	galloc_destroy(&a);
}

static void test_model(void **state)
{
	enum { NODES = 4, PAGES = 61, SELF = 3 };
	int model[PAGES];	/* -1 free, else the taker */
	struct galloc a;
	unsigned int i, page, nfree = 0, seed = 7;

	(void)state;
	assert_int_equal(galloc_init(&a, SELF, NODES, PAGES), 0);
	for (i = 0; i < PAGES; i++) {
		model[i] = -1;
		nfree += i % NODES == SELF;
	}
	for (i = 0; i < 20000; i++) {
		unsigned int node = rand_r(&seed) % NODES;
		int r;

		if (rand_r(&seed) % 2) {
			r = galloc_take(&a, node, &page);
			if (!nfree) {
				assert_int_equal(r, -ENOMEM);
				continue;
			}
			assert_int_equal(r, 0);
			assert_int_equal(page % NODES, SELF);
			assert_int_equal(model[page], -1);
			model[page] = (int)node;
			nfree--;
		} else {
			int want;

			page = rand_r(&seed) % PAGES;
			want = page % NODES != SELF ? -EINVAL : model[page] < 0 ? -ENOENT :
			       model[page] != (int)node ? -EPERM : 0;
			assert_int_equal(galloc_give(&a, node, page), want);
			if (!want) {
				model[page] = -1;
				nfree++;
			}
		}
		assert_int_equal(a.nfree, nfree);
	}
	galloc_destroy(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_take_give),
		cmocka_unit_test(test_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
