// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lock node's table (lock.c): every lock state against every request
 * (shared and exclusive requests of a holder and of a stranger, releases,
 * a holder's and a waiter's death, a node out of range), and a random
 * model run that checks, after every step, that an exclusive holder is
 * alone, that grants follow the order of the requests, and that nothing
 * waits that could be granted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lock.h"

#define NODES	4

/* "S{1,2} [X2 S3]": the holders, then what waits, oldest first. */
static void fmt_entry(const struct lock_entry *e, char *buf, size_t len)
{
	size_t k = 0;
	unsigned int i, first = 1;

	switch (lock_state(e)) {
	case LOCK_UNLOCKED:
		k = snprintf(buf, len, "-");
		break;
	case LOCK_EXCLUSIVE:
		k = snprintf(buf, len, "X%u", e->excl);
		break;
	case LOCK_SHARED:
		k = snprintf(buf, len, "S{");
		for (i = 0; i < NODES; i++) {
			if (e->shared & 1u << i) {
				k += snprintf(buf + k, len - k, "%s%u", first ? "" : ",", i);
				first = 0;
			}
		}
		k += snprintf(buf + k, len - k, "}");
		break;
	}
	for (i = 0; i < e->nwait; i++)
		k += snprintf(buf + k, len - k, "%s%c%u", i ? " " : " [",
			      e->wait[i].excl ? 'X' : 'S', e->wait[i].node);
	if (e->nwait)
		snprintf(buf + k, len - k, "]");
}

/* The grants of @out as "+S2 +S3". */
static void fmt_out(const struct lock_out *out, char *buf, size_t len)
{
	size_t k = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < out->n; i++)
		k += snprintf(buf + k, len - k, "%s+%c%u", i ? " " : "",
			      out->grant[i].excl ? 'X' : 'S', out->grant[i].node);
}

enum setup { UNL, SH1, SH12, EX1, EX1_W, SH1_W, SETUPS };
static const char *const setup_name[] = { "-", "S{1}", "S{1,2}", "X1",
	"X1 [S2 S3]", "S{1} [X2 S3]" };

static void make(struct lock_entry *e, enum setup s)
{
	struct lock_out out = { 0 };

	lock_init(e);
	switch (s) {
	case UNL:
		break;
	case SH1:
		assert_int_equal(lock_acquire(e, NODES, 1, false, &out), 1);
		break;
	case SH12:
		assert_int_equal(lock_acquire(e, NODES, 1, false, &out), 1);
		assert_int_equal(lock_acquire(e, NODES, 2, false, &out), 1);
		break;
	case EX1:
		assert_int_equal(lock_acquire(e, NODES, 1, true, &out), 1);
		break;
	case EX1_W:
		assert_int_equal(lock_acquire(e, NODES, 1, true, &out), 1);
		assert_int_equal(lock_acquire(e, NODES, 2, false, &out), 0);
		assert_int_equal(lock_acquire(e, NODES, 3, false, &out), 0);
		break;
	case SH1_W:
		assert_int_equal(lock_acquire(e, NODES, 1, false, &out), 1);
		assert_int_equal(lock_acquire(e, NODES, 2, true, &out), 0);
		/* compatible with S{1}, but behind X2: it waits */
		assert_int_equal(lock_acquire(e, NODES, 3, false, &out), 0);
		break;
	default:
		fail();
	}
}

enum req { RS1, RX1, RS0, RX0, REL1, REL3, FAIL1, FAIL2, FAIL3, RS9, REQS };
static const char *const req_name[] = { "shared from 1", "exclusive from 1",
	"shared from 0", "exclusive from 0", "release by 1", "release by 3",
	"node 1 fails", "node 2 fails", "node 3 fails", "shared from 9" };

struct expect {
	int ret;
	const char *grants;
	const char *after;
};

#define P (-EPROTO)
static const struct expect table[SETUPS][REQS] = {
	[UNL] = {
		{ 1, "+S1", "S{1}" }, { 1, "+X1", "X1" }, { 1, "+S0", "S{0}" },
		{ 1, "+X0", "X0" }, { P, "", "-" }, { P, "", "-" },
		{ 0, "", "-" }, { 0, "", "-" }, { 0, "", "-" }, { P, "", "-" },
	},
	[SH1] = {
		{ P, "", "S{1}" }, { P, "", "S{1}" }, { 1, "+S0", "S{0,1}" },
		{ 0, "", "S{1} [X0]" }, { 0, "", "-" }, { P, "", "S{1}" },
		{ 1, "", "-" }, { 0, "", "S{1}" }, { 0, "", "S{1}" },
		{ P, "", "S{1}" },
	},
	[SH12] = {
		{ P, "", "S{1,2}" }, { P, "", "S{1,2}" }, { 1, "+S0", "S{0,1,2}" },
		{ 0, "", "S{1,2} [X0]" }, { 0, "", "S{2}" }, { P, "", "S{1,2}" },
		{ 1, "", "S{2}" }, { 1, "", "S{1}" }, { 0, "", "S{1,2}" },
		{ P, "", "S{1,2}" },
	},
	[EX1] = {
		{ P, "", "X1" }, { P, "", "X1" }, { 0, "", "X1 [S0]" },
		{ 0, "", "X1 [X0]" }, { 0, "", "-" }, { P, "", "X1" },
		{ 1, "", "-" }, { 0, "", "X1" }, { 0, "", "X1" }, { P, "", "X1" },
	},
	[EX1_W] = {
		{ P, "", "X1 [S2 S3]" }, { P, "", "X1 [S2 S3]" },
		{ 0, "", "X1 [S2 S3 S0]" }, { 0, "", "X1 [S2 S3 X0]" },
		{ 0, "+S2 +S3", "S{2,3}" }, { P, "", "X1 [S2 S3]" },
		{ 1, "+S2 +S3", "S{2,3}" }, { 0, "", "X1 [S3]" },
		{ 0, "", "X1 [S2]" }, { P, "", "X1 [S2 S3]" },
	},
	[SH1_W] = {
		{ P, "", "S{1} [X2 S3]" }, { P, "", "S{1} [X2 S3]" },
		{ 0, "", "S{1} [X2 S3 S0]" }, { 0, "", "S{1} [X2 S3 X0]" },
		{ 0, "+X2", "X2 [S3]" }, { P, "", "S{1} [X2 S3]" },
		{ 1, "+X2", "X2 [S3]" }, { 0, "+S3", "S{1,3}" },
		{ 0, "", "S{1} [X2]" }, { P, "", "S{1} [X2 S3]" },
	},
};

static int step(struct lock_entry *e, enum req q, struct lock_out *out)
{
	switch (q) {
	case RS1: return lock_acquire(e, NODES, 1, false, out);
	case RX1: return lock_acquire(e, NODES, 1, true, out);
	case RS0: return lock_acquire(e, NODES, 0, false, out);
	case RX0: return lock_acquire(e, NODES, 0, true, out);
	case REL1: return lock_release(e, NODES, 1, out);
	case REL3: return lock_release(e, NODES, 3, out);
	case FAIL1: return lock_node_failed(e, NODES, 1, out);
	case FAIL2: return lock_node_failed(e, NODES, 2, out);
	case FAIL3: return lock_node_failed(e, NODES, 3, out);
	case RS9: return lock_acquire(e, NODES, 9, false, out);
	default: fail();
	}
	return 0;
}

static void test_table(void **state)
{
	unsigned int s, q, bad = 0;

	(void)state;
	for (s = 0; s < SETUPS; s++) {
		for (q = 0; q < REQS; q++) {
			const struct expect *x = &table[s][q];
			struct lock_entry e, before;
			struct lock_out out = { 0 };
			char g[128], a[128];
			int r;

			make(&e, s);
			before = e;
			r = step(&e, q, &out);
			fmt_out(&out, g, sizeof(g));
			fmt_entry(&e, a, sizeof(a));
			if (r != x->ret || strcmp(g, x->grants) || strcmp(a, x->after)) {
				print_error("%s, %s: %d \"%s\" -> %s; expected %d \"%s\" -> %s\n",
					    setup_name[s], req_name[q], r, g, a,
					    x->ret, x->grants, x->after);
				bad++;
			}
			/* granted at once (1) iff granted to the asker in @out */
			if ((q == RS1 || q == RX1 || q == RS0 || q == RX0) && r >= 0 &&
			    (r == 1) != (out.n == 1 &&
					 out.grant[0].node == (q == RS0 || q == RX0 ? 0u : 1u))) {
				print_error("%s, %s: returned %d with \"%s\"\n",
					    setup_name[s], req_name[q], r, g);
				bad++;
			}
			/* a refused request changes nothing */
			if (r == -EPROTO && memcmp(&e, &before, sizeof(e))) {
				print_error("%s, %s: refused, but changed\n",
					    setup_name[s], req_name[q]);
				bad++;
			}
		}
	}
	assert_int_equal(bad, 0);
}

/*
 * Random requests, releases and deaths of 4 nodes on one lock against
 * the rules: after every step an exclusive holder is alone; a grant is
 * for the oldest request still waiting; the head of the queue is never
 * one the lock could grant; a node holds or waits at most once.
 */
static void test_model(void **state)
{
	struct lock_entry e;
	unsigned long seq[NODES], next = 0, granted = 0, steps;
	int holds[NODES], waits[NODES];		/* what the model thinks */
	unsigned int seed = 7, i, k;

	(void)state;
	lock_init(&e);
	for (i = 0; i < NODES; i++)
		holds[i] = waits[i] = 0;
	for (steps = 0; steps < 200000; steps++) {
		struct lock_out out = { 0 };
		unsigned int node = rand_r(&seed) % NODES, what = rand_r(&seed) % 10;
		int r;

		if (what < 5) {
			bool excl = what < 2;

			r = lock_acquire(&e, NODES, node, excl, &out);
			if (holds[node] || waits[node]) {
				assert_int_equal(r, -EPROTO);
				continue;
			}
			assert_true(r == 0 || r == 1);
			seq[node] = ++next;
			waits[node] = excl ? 2 : 1;
		} else if (what < 9) {
			r = lock_release(&e, NODES, node, &out);
			assert_int_equal(r, holds[node] ? 0 : -EPROTO);
			holds[node] = 0;
		} else {
			r = lock_node_failed(&e, NODES, node, &out);
			assert_int_equal(r, holds[node] ? 1 : 0);
			holds[node] = waits[node] = 0;
		}
		/* grants: of waiting requests, oldest first, as asked */
		for (k = 0; k < out.n; k++) {
			unsigned int g = out.grant[k].node;

			assert_true(waits[g]);
			assert_int_equal(out.grant[k].excl, waits[g] == 2);
			for (i = 0; i < NODES; i++)
				if (waits[i] && i != g)
					assert_true(seq[i] > seq[g]);
			holds[g] = waits[g];
			waits[g] = 0;
			granted++;
		}
		/* the table agrees with the model, and is consistent */
		for (i = 0; i < NODES; i++) {
			assert_int_equal(holds[i] == 2, e.excl == i);
			assert_int_equal(holds[i] == 1, !!(e.shared & 1u << i));
		}
		assert_true(e.excl == LOCK_NOBODY || !e.shared);
		if (e.nwait) {
			bool excl = e.wait[0].excl;

			assert_false(e.excl == LOCK_NOBODY && (!excl || !e.shared));
		}
		for (i = 0, k = 0; i < NODES; i++)
			k += !!waits[i];
		assert_int_equal(k, e.nwait);
	}
	assert_true(granted > 10000);
}

/* Nodes at and past the edge, and tables of too many nodes. */
static void test_bounds(void **state)
{
	struct lock_entry e, before;
	struct lock_out out = { 0 };

	(void)state;
	lock_init(&e);
	assert_int_equal(lock_acquire(&e, NODES, 2, false, &out), 1);
	before = e;
	assert_int_equal(lock_acquire(&e, NODES, NODES, false, &out), -EPROTO);
	assert_int_equal(lock_acquire(&e, NODES, COH_NODES_MAX, true, &out), -EPROTO);
	assert_int_equal(lock_acquire(&e, COH_NODES_MAX + 1, COH_NODES_MAX, true, &out),
			 -EPROTO);
	assert_int_equal(lock_release(&e, NODES, NODES, &out), -EPROTO);
	assert_int_equal(lock_release(&e, NODES, UINT32_MAX, &out), -EPROTO);
	assert_int_equal(lock_node_failed(&e, NODES, NODES, &out), -EPROTO);
	assert_int_equal(lock_node_failed(&e, NODES, 1000, &out), -EPROTO);
	assert_int_equal(lock_release(&e, COH_NODES_MAX + 1, 2, &out), -EPROTO);
	assert_int_equal(lock_node_failed(&e, COH_NODES_MAX + 1, 2, &out), -EPROTO);
	assert_false(lock_involves(&e, COH_NODES_MAX));
	assert_true(lock_involves(&e, 2));
	assert_int_equal(out.n, 1);
	assert_memory_equal(&e, &before, sizeof(e));
	/* the largest cluster: node 31 */
	assert_int_equal(lock_acquire(&e, COH_NODES_MAX, COH_NODES_MAX - 1, false, &out), 1);
	assert_true(lock_involves(&e, COH_NODES_MAX - 1));
	assert_int_equal(lock_release(&e, COH_NODES_MAX, COH_NODES_MAX - 1, &out), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
