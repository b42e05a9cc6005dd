// SPDX-License-Identifier: GPL-2.0-only
/*
 * The coherence protocol (coh.c) and the linearizability checker (lin.c):
 * every home state against every request, every cache state against
 * every message; the checker against known histories and against brute
 * force; and a simulated cluster (3 nodes, messages delivered in a random
 * interleaving, in order per pair of nodes) whose history must be
 * linearizable, and must not be once a node acknowledges an invalidation
 * without dropping its copy.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "coh.h"
#include "lin.h"

#define NODES	4

/* A count from the environment (shorter runs under valgrind), else @def. */
static unsigned long env_count(const char *name, unsigned long def)
{
	const char *s = getenv(name);
	unsigned long v = s ? strtoul(s, NULL, 10) : 0;

	return v ? v : def;
}

/* The messages of @out as "I2 D1 W0" (type letter, destination). */
static void fmt_out(const struct coh_out *out, char *buf, size_t len)
{
	static const char letter[] = { 'R', 'V', 'D', 'W', 'I', 'A' };
	size_t k = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < out->n && k + 8 < len; i++)
		k += snprintf(buf + k, len - k, "%s%c%u", i ? " " : "",
			      letter[out->msg[i].type], out->msg[i].to);
}

enum setup { U, S1, S2, S12, X1, X2, BUSY, SETUPS };
static const char *const setup_name[] = { "unshared", "shared{1}", "shared{2}",
	"shared{1,2}", "exclusive(1)", "exclusive(2)", "busy" };

/* Home node 0 of four, brought to a state by requests. */
static void make(struct coh_home *h, enum setup s)
{
	struct coh_out out;
	uint64_t v;

	coh_home_init(h, 0, NODES, 100);
	switch (s) {
	case U:
		break;
	case S1:
		coh_home_read(h, 1, &v, &out);
		break;
	case S2:
		coh_home_read(h, 2, &v, &out);
		break;
	case S12:
		coh_home_read(h, 1, &v, &out);
		coh_home_read(h, 2, &v, &out);
		break;
	case X1:
		coh_home_write(h, 1, 101, &out);
		break;
	case X2:
		coh_home_write(h, 2, 102, &out);
		break;
	case BUSY:	/* node 3 writes; node 2's copy is being invalidated */
		coh_home_read(h, 2, &v, &out);
		coh_home_write(h, 3, 103, &out);
		assert_true(h->busy);
		break;
	default:
		fail();
	}
}

enum req { LREAD, LWRITE, RREAD, RWRITE, ACK2, ACK1, FORGED, REQS };
static const char *const req_name[] = { "local read", "local write",
	"read from 1", "write from 1", "ack from 2", "ack from 1", "node 99" };

struct expect {
	int ret;
	const char *msgs;
	enum coh_home_state state;	/* after the step */
	uint32_t sharers;		/* SHARED */
	unsigned int owner;		/* EXCLUSIVE */
	int busy;
};

#define E(r, m, st, sh, ow, b) { r, m, st, sh, ow, b }
static const struct expect table[SETUPS][REQS] = {
	[U] = {
		[LREAD] = E(1, "", COH_UNSHARED, 0, 0, 0),
		[LWRITE] = E(0, "W0", COH_UNSHARED, 0, 0, 0),
		[RREAD] = E(0, "D1", COH_SHARED, 0x2, 0, 0),
		[RWRITE] = E(0, "W1", COH_EXCLUSIVE, 0, 1, 0),
		[ACK2] = E(-EPROTO, "", COH_UNSHARED, 0, 0, 0),
		[ACK1] = E(-EPROTO, "", COH_UNSHARED, 0, 0, 0),
		[FORGED] = E(-EPROTO, "", COH_UNSHARED, 0, 0, 0),
	},
	[S1] = {
		[LREAD] = E(1, "", COH_SHARED, 0x2, 0, 0),
		[LWRITE] = E(0, "I1", COH_SHARED, 0x2, 0, 1),
		[RREAD] = E(0, "D1", COH_SHARED, 0x2, 0, 0),
		[RWRITE] = E(0, "W1", COH_EXCLUSIVE, 0, 1, 0),
		[ACK2] = E(-EPROTO, "", COH_SHARED, 0x2, 0, 0),
		[ACK1] = E(-EPROTO, "", COH_SHARED, 0x2, 0, 0),
		[FORGED] = E(-EPROTO, "", COH_SHARED, 0x2, 0, 0),
	},
	[S2] = {
		[LREAD] = E(1, "", COH_SHARED, 0x4, 0, 0),
		[LWRITE] = E(0, "I2", COH_SHARED, 0x4, 0, 1),
		[RREAD] = E(0, "D1", COH_SHARED, 0x6, 0, 0),
		[RWRITE] = E(0, "I2", COH_SHARED, 0x4, 0, 1),
		[ACK2] = E(-EPROTO, "", COH_SHARED, 0x4, 0, 0),
		[ACK1] = E(-EPROTO, "", COH_SHARED, 0x4, 0, 0),
		[FORGED] = E(-EPROTO, "", COH_SHARED, 0x4, 0, 0),
	},
	[S12] = {
		[LREAD] = E(1, "", COH_SHARED, 0x6, 0, 0),
		[LWRITE] = E(0, "I1 I2", COH_SHARED, 0x6, 0, 1),
		[RREAD] = E(0, "D1", COH_SHARED, 0x6, 0, 0),
		[RWRITE] = E(0, "I2", COH_SHARED, 0x6, 0, 1),
		[ACK2] = E(-EPROTO, "", COH_SHARED, 0x6, 0, 0),
		[ACK1] = E(-EPROTO, "", COH_SHARED, 0x6, 0, 0),
		[FORGED] = E(-EPROTO, "", COH_SHARED, 0x6, 0, 0),
	},
	[X1] = {
		[LREAD] = E(1, "", COH_EXCLUSIVE, 0, 1, 0),
		[LWRITE] = E(0, "I1", COH_EXCLUSIVE, 0, 1, 1),
		[RREAD] = E(0, "D1", COH_EXCLUSIVE, 0, 1, 0),
		[RWRITE] = E(0, "W1", COH_EXCLUSIVE, 0, 1, 0),
		[ACK2] = E(-EPROTO, "", COH_EXCLUSIVE, 0, 1, 0),
		[ACK1] = E(-EPROTO, "", COH_EXCLUSIVE, 0, 1, 0),
		[FORGED] = E(-EPROTO, "", COH_EXCLUSIVE, 0, 1, 0),
	},
	[X2] = {
		[LREAD] = E(1, "", COH_EXCLUSIVE, 0, 2, 0),
		[LWRITE] = E(0, "I2", COH_EXCLUSIVE, 0, 2, 1),
		[RREAD] = E(0, "D1", COH_SHARED, 0x6, 0, 0),
		[RWRITE] = E(0, "I2", COH_EXCLUSIVE, 0, 2, 1),
		[ACK2] = E(-EPROTO, "", COH_EXCLUSIVE, 0, 2, 0),
		[ACK1] = E(-EPROTO, "", COH_EXCLUSIVE, 0, 2, 0),
		[FORGED] = E(-EPROTO, "", COH_EXCLUSIVE, 0, 2, 0),
	},
	[BUSY] = {	/* requests wait; the awaited ack applies node 3's write */
		[LREAD] = E(1, "", COH_SHARED, 0x4, 0, 1),
		[LWRITE] = E(0, "", COH_SHARED, 0x4, 0, 1),
		[RREAD] = E(0, "", COH_SHARED, 0x4, 0, 1),
		[RWRITE] = E(0, "", COH_SHARED, 0x4, 0, 1),
		[ACK2] = E(0, "W3", COH_EXCLUSIVE, 0, 3, 0),
		[ACK1] = E(-EPROTO, "", COH_SHARED, 0x4, 0, 1),
		[FORGED] = E(-EPROTO, "", COH_SHARED, 0x4, 0, 1),
	},
};

static void test_home_table(void **state)
{
	struct coh_out out;
	struct coh_home h;
	unsigned int s, q;
	char got[256];
	uint64_t v;
	int r;

	(void)state;
	for (s = 0; s < SETUPS; s++)
		for (q = 0; q < REQS; q++) {
			const struct expect *e = &table[s][q];

			make(&h, s);
			switch (q) {
			case LREAD:
				r = coh_home_read(&h, 0, &v, &out);
				break;
			case LWRITE:
				r = coh_home_write(&h, 0, 200, &out);
				break;
			case RREAD:
				r = coh_home_read(&h, 1, &v, &out);
				break;
			case RWRITE:
				r = coh_home_write(&h, 1, 201, &out);
				break;
			case ACK2:
				r = coh_home_ack(&h, 2, &out);
				break;
			case ACK1:
				r = coh_home_ack(&h, 1, &out);
				break;
			default:
				r = coh_home_write(&h, 99, 1, &out);
			}
			fmt_out(&out, got, sizeof(got));
			print_message("%-12s x %-12s: %d [%s] -> %s%s\n", setup_name[s],
				      req_name[q], r, got, coh_home_state_name(h.state),
				      h.busy ? " (busy)" : "");
			assert_int_equal(r, e->ret);
			assert_string_equal(got, e->msgs);
			assert_int_equal(h.state, e->state);
			assert_int_equal(h.busy, e->busy);
			if (h.state == COH_SHARED)
				assert_int_equal(h.sharers, e->sharers);
			if (h.state == COH_EXCLUSIVE)
				assert_int_equal(h.owner, e->owner);
			/* a read answered at once is the page's current value */
			if (r == 1)
				assert_int_equal(v, s == X1 ? 101 : s == X2 ? 102 : 100);
			if (r == -EPROTO)
				assert_int_equal(h.refused, 1);
		}
}

/* Requests that waited behind a write are answered in order when it ends. */
static void test_home_waiting(void **state)
{
	struct coh_out out;
	struct coh_home h;
	char got[256];
	unsigned int i;
	uint64_t v;

	(void)state;
	make(&h, BUSY);
	assert_int_equal(coh_home_read(&h, 1, &v, &out), 0);
	assert_int_equal(coh_home_write(&h, 1, 300, &out), 0);
	assert_int_equal(coh_home_read(&h, 2, &v, &out), 0);
	assert_int_equal(h.nwait, 3);
	assert_int_equal(coh_home_ack(&h, 2, &out), 0);
	fmt_out(&out, got, sizeof(got));
	/* 3's write applied; 1 reads it (shared{1,3}); 1's write invalidates 3 */
	assert_string_equal(got, "W3 D1 I3");
	assert_int_equal(out.msg[1].value, 103);
	assert_true(h.busy);
	assert_int_equal(h.nwait, 1);
	assert_int_equal(coh_home_ack(&h, 3, &out), 0);
	fmt_out(&out, got, sizeof(got));
	assert_string_equal(got, "W1 D2");
	assert_int_equal(out.msg[1].value, 300);
	assert_int_equal(h.state, COH_SHARED);
	assert_int_equal(h.sharers, 0x6);
	/*
	 * A node has one read and one write of a page in flight: a second
	 * one waiting is a forgery.  The home's own writes may wait up to
	 * COH_WAIT_MAX.
	 */
	make(&h, BUSY);
	assert_int_equal(coh_home_read(&h, 1, &v, &out), 0);
	assert_int_equal(coh_home_read(&h, 1, &v, &out), -EPROTO);
	assert_int_equal(coh_home_write(&h, 3, 104, &out), -EPROTO);
	assert_int_equal(coh_home_write(&h, 1, 105, &out), 0);
	assert_int_equal(coh_home_write(&h, 1, 106, &out), -EPROTO);
	assert_int_equal(h.refused, 3);
	for (i = 2; i < COH_WAIT_MAX; i++)
		assert_int_equal(coh_home_write(&h, 0, 1000 + i, &out), 0);
	assert_int_equal(coh_home_write(&h, 0, 1, &out), -EBUSY);
	assert_int_equal(coh_home_ack(&h, 2, &out), 0);
	fmt_out(&out, got, sizeof(got));
	/* 3's write, 1 reads it, 1's write invalidates 3 and the rest wait */
	assert_string_equal(got, "W3 D1 I3");
	assert_int_equal(h.nwait, COH_WAIT_MAX - 2);
}

/* A node dies: its copies, its waiting requests and the acks it owes. */
static void test_node_failed(void **state)
{
	struct coh_out out;
	struct coh_home h;
	struct coh_cache c;
	bool rd, wr;
	char got[256];
	uint64_t v;

	(void)state;
	make(&h, S12);
	assert_int_equal(coh_home_node_failed(&h, 2, &out), 0);
	assert_int_equal(h.state, COH_SHARED);
	assert_int_equal(h.sharers, 0x2);
	assert_int_equal(coh_home_node_failed(&h, 1, &out), 0);
	assert_int_equal(h.state, COH_UNSHARED);
	assert_int_equal(coh_home_node_failed(&h, 1, &out), -EINVAL);
	assert_int_equal(coh_home_node_failed(&h, 0, &out), -EINVAL);
	assert_int_equal(coh_home_read(&h, 1, &v, &out), -EPROTO);
	assert_int_equal(coh_home_write(&h, 2, 7, &out), -EPROTO);
	/* the only owner dies: unshared; a later write invalidates nobody */
	make(&h, X2);
	assert_int_equal(coh_home_node_failed(&h, 2, &out), 0);
	assert_int_equal(h.state, COH_UNSHARED);
	assert_int_equal(coh_home_write(&h, 1, 9, &out), 0);
	fmt_out(&out, got, sizeof(got));
	assert_string_equal(got, "W1");
	/* a write waiting only for the dead node's ack is applied */
	make(&h, BUSY);
	assert_int_equal(coh_home_read(&h, 2, &v, &out), 0);	/* queued */
	assert_int_equal(coh_home_read(&h, 1, &v, &out), 0);	/* queued */
	assert_int_equal(coh_home_node_failed(&h, 2, &out), 0);
	fmt_out(&out, got, sizeof(got));
	assert_string_equal(got, "W3 D1");
	assert_int_equal(h.nwait, 0);
	assert_int_equal(coh_home_ack(&h, 2, &out), -EPROTO);
	/* the dead node's own write still applies, and leaves no owner */
	make(&h, S1);
	assert_int_equal(coh_home_write(&h, 2, 8, &out), 0);	/* I1 */
	assert_int_equal(coh_home_node_failed(&h, 2, &out), 0);
	assert_true(h.busy);
	assert_int_equal(coh_home_ack(&h, 1, &out), 0);
	fmt_out(&out, got, sizeof(got));
	assert_string_equal(got, "W2");
	assert_int_equal(h.state, COH_UNSHARED);
	assert_int_equal(h.value, 8);
	/* a cache whose home died: what was in flight never completes */
	coh_cache_init(&c, 1, 0);
	assert_int_equal(coh_cache_write(&c, 5, &out), 0);
	c.reading = true;
	coh_cache_home_failed(&c, &rd, &wr);
	assert_true(rd && wr);
	assert_false(c.reading || c.writing);
	assert_int_equal(c.state, COH_INVALID);
}

static void test_cache_table(void **state)
{
	static const enum coh_msg_type types[] = { COH_M_DATA, COH_M_WRITTEN,
		COH_M_INVALIDATE, COH_M_READ, COH_M_WRITE, COH_M_ACK };
	struct coh_out out;
	struct coh_cache c;
	struct coh_msg m;
	unsigned int s, t;
	uint64_t v;
	int r;

	(void)state;
	for (s = COH_INVALID; s <= COH_C_EXCLUSIVE; s++) {
		for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
			coh_cache_init(&c, 1, 0);
			c.state = s;
			c.value = 5;
			m = (struct coh_msg){ .type = types[t], .from = 0, .to = 1,
					      .value = 9 };
			/* not asked for: DATA and WRITTEN are refused */
			r = coh_cache_recv(&c, &m, &v, &out);
			if (types[t] == COH_M_INVALIDATE) {
				assert_int_equal(r, 0);
				assert_int_equal(c.state, COH_INVALID);
				assert_int_equal(out.n, 1);
				assert_int_equal(out.msg[0].type, COH_M_ACK);
				assert_int_equal(out.msg[0].to, 0);
			} else {
				assert_int_equal(r, -EPROTO);
				assert_int_equal(c.state, s);
				assert_int_equal(c.value, 5);
			}
			/* from a node that is not the home: refused */
			coh_cache_init(&c, 1, 0);
			c.state = s;
			m.from = 2;
			assert_int_equal(coh_cache_recv(&c, &m, &v, &out), -EPROTO);
			assert_int_equal(c.state, s);
		}
		/* a read: a hit, or a READ to the home, then DATA */
		coh_cache_init(&c, 1, 0);
		c.state = s;
		c.value = 5;
		r = coh_cache_read(&c, &v, &out);
		if (s != COH_INVALID) {
			assert_int_equal(r, 1);
			assert_int_equal(v, 5);
			assert_int_equal(out.n, 0);
		} else {
			assert_int_equal(r, 0);
			assert_int_equal(out.msg[0].type, COH_M_READ);
			assert_int_equal(coh_cache_read(&c, &v, &out), -EBUSY);
			m = (struct coh_msg){ .type = COH_M_DATA, .from = 0, .to = 1,
					      .value = 7 };
			assert_int_equal(coh_cache_recv(&c, &m, &v, &out), 1);
			assert_int_equal(v, 7);
			assert_int_equal(c.state, COH_C_SHARED);
		}
		/* a copy dropped for its frame: the next read asks the home */
		coh_cache_init(&c, 1, 0);
		c.state = s;
		c.value = 5;
		assert_int_equal(coh_cache_drop(&c), s != COH_INVALID);
		assert_int_equal(c.state, COH_INVALID);
		assert_int_equal(coh_cache_read(&c, &v, &out), 0);
		assert_int_equal(out.n, 1);
		assert_int_equal(out.msg[0].type, COH_M_READ);
		/*
		 * A write always goes to the home and drops the copy (a read
		 * meanwhile asks the home); WRITTEN makes it exclusive.
		 */
		coh_cache_init(&c, 1, 0);
		c.state = s;
		assert_int_equal(coh_cache_write(&c, 8, &out), 0);
		assert_int_equal(out.msg[0].type, COH_M_WRITE);
		assert_int_equal(out.msg[0].value, 8);
		assert_int_equal(c.state, COH_INVALID);
		assert_int_equal(coh_cache_write(&c, 9, &out), -EBUSY);
		assert_int_equal(coh_cache_read(&c, &v, &out), 0);
		assert_int_equal(out.msg[0].type, COH_M_READ);
		/* a WRITTEN of another value than ours is a forgery */
		m = (struct coh_msg){ .type = COH_M_WRITTEN, .from = 0, .to = 1,
				      .value = 9 };
		assert_int_equal(coh_cache_recv(&c, &m, &v, &out), -EPROTO);
		assert_int_equal(c.state, COH_INVALID);
		assert_true(c.writing);
		m.value = 8;
		assert_int_equal(coh_cache_recv(&c, &m, &v, &out), 1);
		assert_int_equal(c.state, COH_C_EXCLUSIVE);
		assert_int_equal(c.value, 8);
		/* the read's DATA (after the write, so its value) keeps it so */
		m.type = COH_M_DATA;
		assert_int_equal(coh_cache_recv(&c, &m, &v, &out), 1);
		assert_int_equal(c.state, COH_C_EXCLUSIVE);
	}
}

/* ---- the checker ---------------------------------------------------------- */

#define W(v, a, b) { true, v, a, b }
#define R(v, a, b) { false, v, a, b }

static void test_lin_known(void **state)
{
	static const struct { struct lin_op op[4]; size_t n; int bad; } h[] = {
		{ { W(1, 1, 2), R(1, 3, 4), W(2, 5, 6), R(2, 7, 8) }, 4, 0 },
		{ { W(1, 1, 2), W(2, 3, 4), R(1, 5, 6) }, 3, 1 },	/* stale */
		{ { W(1, 1, 10), R(1, 2, 3), R(0, 4, 5) }, 3, 1 },	/* new, then old */
		{ { W(1, 1, 10), R(0, 2, 3), R(1, 4, 5) }, 3, 0 },	/* old, then new */
		{ { R(1, 1, 2), W(1, 3, 4) }, 2, 1 },		/* before its write */
		{ { R(7, 1, 2) }, 1, 1 },				/* never written */
		{ { W(1, 1, 4), W(2, 2, 5), R(2, 6, 7), R(1, 8, 9) }, 4, 1 },
		{ { W(1, 1, 4), W(2, 2, 5), R(1, 3, 7), R(2, 6, 9) }, 4, 0 },
	};
	static const struct lin_op bad[][2] = {
		{ W(1, 1, 2), W(1, 3, 4) },	/* one value written twice */
		{ W(0, 1, 2), R(0, 3, 4) },	/* the initial value written */
		{ W(1, 2, 2), R(1, 3, 4) },	/* ends when it begins */
	};
	char why[160];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(h) / sizeof(h[0]); i++) {
		why[0] = '\0';
		assert_int_equal(lin_check(h[i].op, h[i].n, 0, why, sizeof(why)), h[i].bad);
		assert_int_equal(lin_check_brute(h[i].op, h[i].n, 0), h[i].bad);
		if (h[i].bad)
			print_message("history %u: %s\n", i, why);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(lin_check(bad[i], 2, 0, why, sizeof(why)), -EINVAL);
}

/* The zone test agrees with brute force on random small histories. */
static void test_lin_vs_brute(void **state)
{
	unsigned int seed = 7, i, k, n, nw, agree = 0, non = 0;
	struct lin_op op[8];
	uint64_t t[16];
	char why[160];

	(void)state;
	for (i = 0; i < env_count("COH_LIN_HISTORIES", 50000); i++) {
		n = 2 + rand_r(&seed) % 7;
		/* 2n distinct times, shuffled into intervals */
		for (k = 0; k < 2 * n; k++)
			t[k] = k + 1;
		for (k = 2 * n - 1; k > 0; k--) {
			unsigned int j = rand_r(&seed) % (k + 1);
			uint64_t x = t[k];

			t[k] = t[j];
			t[j] = x;
		}
		nw = 0;
		for (k = 0; k < n; k++) {
			uint64_t a = t[2 * k], b = t[2 * k + 1];

			op[k].inv = a < b ? a : b;
			op[k].res = a < b ? b : a;
			op[k].write = rand_r(&seed) % 2;
			op[k].value = op[k].write ? ++nw : 0;
		}
		for (k = 0; k < n; k++)
			if (!op[k].write)
				op[k].value = rand_r(&seed) % (nw + 1);
		assert_int_equal(lin_check(op, n, 0, why, sizeof(why)),
				 lin_check_brute(op, n, 0));
		agree++;
		non += lin_check_brute(op, n, 0);
	}
	print_message("%u random histories, %u not linearizable: both checkers agree\n",
		      agree, non);
	assert_true(non > agree / 5 && non < agree - agree / 5);
	/* times from a few clock ticks: ties between operations */
	for (i = 0, non = 0; i < env_count("COH_LIN_HISTORIES", 50000); i++) {
		n = 2 + rand_r(&seed) % 7;
		nw = 0;
		for (k = 0; k < n; k++) {
			op[k].inv = 1 + rand_r(&seed) % 6;
			op[k].res = op[k].inv + 1 + rand_r(&seed) % 4;
			op[k].write = rand_r(&seed) % 2;
			op[k].value = op[k].write ? ++nw : 0;
		}
		for (k = 0; k < n; k++)
			if (!op[k].write)
				op[k].value = rand_r(&seed) % (nw + 1);
		assert_int_equal(lin_check(op, n, 0, why, sizeof(why)),
				 lin_check_brute(op, n, 0));
		non += lin_check_brute(op, n, 0);
	}
	print_message("and with ties: %u not linearizable, both agree\n", non);
	assert_true(non > 0);
}

/* ---- a simulated cluster ---------------------------------------------------- */

#define SIM_NODES	3
#define SIM_PAGES	4
#define SIM_SLOTS	3	/* operations in flight per node */
#define QCAP		1024u

struct simmsg {
	unsigned int page;
	struct coh_msg m;
};

struct chan {
	struct simmsg q[QCAP];
	unsigned int head, n;
};

struct slot {
	bool busy, write;
	unsigned int page;
	uint64_t value, inv;
};

struct sim {
	struct coh_home home[SIM_PAGES];
	struct coh_cache cache[SIM_NODES][SIM_PAGES];
	struct chan chan[SIM_NODES][SIM_NODES];
	struct slot slot[SIM_NODES][SIM_SLOTS];
	struct lin_op *hist[SIM_PAGES];
	size_t nhist[SIM_PAGES], cap[SIM_PAGES];
	uint64_t now, next_value;
	unsigned long done, faults;
	unsigned int seed;
	bool bug;	/* node 1 acknowledges invalidations, keeps its copy */
	bool drops;	/* copies dropped at random (frames needed elsewhere) */
	unsigned long dropped;
	unsigned long kill_at;	/* node 2 dies after this many operations */
	int dead;		/* -1, or the node that died */
	unsigned long pending;	/* writes whose writer or home died */
};

static unsigned int home_of(unsigned int page)
{
	return page % SIM_NODES;
}

static void record_at(struct sim *s, struct slot *sl, uint64_t value,
		      uint64_t res);

static void record(struct sim *s, struct slot *sl, uint64_t value)
{
	record_at(s, sl, value, ++s->now);
}

/*
 * An operation that will never complete (its node or the page's home
 * died): a write may or may not have taken effect, so it stays in the
 * history with no end; a read is dropped.
 */
static void abandon(struct sim *s, struct slot *sl)
{
	if (sl->write) {
		record_at(s, sl, 0, UINT64_MAX);
		s->done--;
		s->pending++;
	}
	sl->busy = false;
}

static void record_at(struct sim *s, struct slot *sl, uint64_t value,
		      uint64_t res)
{
	unsigned int p = sl->page;

	if (s->nhist[p] == s->cap[p]) {
		s->cap[p] = s->cap[p] ? s->cap[p] * 2 : 1024;
		s->hist[p] = realloc(s->hist[p], s->cap[p] * sizeof(struct lin_op));
		assert_non_null(s->hist[p]);
	}
	s->hist[p][s->nhist[p]++] = (struct lin_op){ .write = sl->write,
		.value = sl->write ? sl->value : value, .inv = sl->inv, .res = res };
	sl->busy = false;
	s->done++;
}

/* The op of node @n waiting for this answer (a write: by its value). */
static void complete(struct sim *s, unsigned int n, unsigned int page, bool write,
		     uint64_t value)
{
	unsigned int i;

	for (i = 0; i < SIM_SLOTS; i++) {
		struct slot *sl = &s->slot[n][i];

		if (sl->busy && sl->page == page && sl->write == write &&
		    (!write || sl->value == value)) {
			record(s, sl, value);
			return;
		}
	}
	fail_msg("node %u: an answer nobody waits for (page %u)", n, page);
}

static void post(struct sim *s, unsigned int page, const struct coh_out *out)
{
	unsigned int i;

	for (i = 0; i < out->n; i++) {
		const struct coh_msg *m = &out->msg[i];
		struct chan *c;

		if ((int)m->to == s->dead)	/* lost with it */
			continue;
		if (m->to == m->from) {	/* the home's own write is done */
			assert_int_equal(m->type, COH_M_WRITTEN);
			complete(s, m->to, page, true, m->value);
			continue;
		}
		c = &s->chan[m->from][m->to];
		assert_true(c->n < QCAP);
		c->q[(c->head + c->n++) % QCAP] = (struct simmsg){ page, *m };
	}
}

static void deliver(struct sim *s, unsigned int from, unsigned int to)
{
	struct chan *c = &s->chan[from][to];
	struct simmsg sm = c->q[c->head];
	unsigned int p = sm.page;
	struct coh_out out;
	uint64_t v;
	int r;

	c->head = (c->head + 1) % QCAP;
	c->n--;
	if (home_of(p) == to) {
		struct coh_home *h = &s->home[p];

		if (sm.m.type == COH_M_READ)
			r = coh_home_read(h, from, &v, &out);
		else if (sm.m.type == COH_M_WRITE)
			r = coh_home_write(h, from, sm.m.value, &out);
		else
			r = coh_home_ack(h, from, &out);
		assert_true(r == 0);
	} else {
		struct coh_cache *cc = &s->cache[to][p];
		struct coh_cache keep = *cc;

		r = coh_cache_recv(cc, &sm.m, &v, &out);
		assert_true(r >= 0);
		if (sm.m.type == COH_M_INVALIDATE && s->bug && to == 1 &&
		    keep.state != COH_INVALID) {
			cc->state = keep.state;	/* the fault: the copy stays */
			cc->value = keep.value;
			s->faults++;
		}
		if (r == 1)
			complete(s, to, p, sm.m.type == COH_M_WRITTEN, v);
	}
	post(s, p, &out);
}

/* A new read or write on an idle slot of node @n; false if none could start. */
static bool start(struct sim *s, unsigned int n)
{
	unsigned int i, p = rand_r(&s->seed) % SIM_PAGES;
	bool write = rand_r(&s->seed) % 2;
	struct coh_out out;
	struct slot *sl;
	uint64_t v = 0;
	int r;

	if ((int)n == s->dead || (int)home_of(p) == s->dead)
		return false;	/* the dead do nothing; their pages are gone */

	for (i = 0; i < SIM_SLOTS && s->slot[n][i].busy; i++)
		;
	if (i == SIM_SLOTS)
		return false;
	sl = &s->slot[n][i];
	if (write)
		v = ++s->next_value;
	if (home_of(p) == n)
		r = write ? coh_home_write(&s->home[p], n, v, &out) :
			    coh_home_read(&s->home[p], n, &v, &out);
	else
		r = write ? coh_cache_write(&s->cache[n][p], v, &out) :
			    coh_cache_read(&s->cache[n][p], &v, &out);
	if (r == -EBUSY)
		return false;
	assert_true(r >= 0);
	*sl = (struct slot){ .busy = true, .write = write, .page = p, .value = v,
			     .inv = ++s->now };
	if (r == 1)
		record(s, sl, v);
	post(s, p, &out);
	return true;
}

/* Node 2 dies: its queues are lost, the others learn it at once. */
static void kill_node(struct sim *s)
{
	const unsigned int k = 2;
	struct coh_out out;
	unsigned int n, p, i;
	bool rd, wr;

	s->dead = k;
	for (n = 0; n < SIM_NODES; n++)
		s->chan[k][n].n = s->chan[n][k].n = 0;
	for (i = 0; i < SIM_SLOTS; i++)
		if (s->slot[k][i].busy)
			abandon(s, &s->slot[k][i]);
	for (p = 0; p < SIM_PAGES; p++) {
		if (home_of(p) != k) {
			assert_int_equal(coh_home_node_failed(&s->home[p], k, &out), 0);
			post(s, p, &out);
			continue;
		}
		for (n = 0; n < SIM_NODES; n++) {
			if (n == k)
				continue;
			coh_cache_home_failed(&s->cache[n][p], &rd, &wr);
			for (i = 0; i < SIM_SLOTS; i++)
				if (s->slot[n][i].busy && s->slot[n][i].page == p)
					abandon(s, &s->slot[n][i]);
		}
	}
}

static unsigned long simulate(struct sim *s, unsigned long ops)
{
	unsigned int n, p, a, b, pending;
	unsigned long violations = 0, idle = 0;
	char why[200];

	s->dead = -1;
	for (p = 0; p < SIM_PAGES; p++)
		coh_home_init(&s->home[p], home_of(p), SIM_NODES, 0);
	for (n = 0; n < SIM_NODES; n++)
		for (p = 0; p < SIM_PAGES; p++)
			coh_cache_init(&s->cache[n][p], n, home_of(p));
	for (;;) {
		/* at a moment a write waits for node 2's acknowledgement */
		if (s->kill_at && s->dead < 0 && s->done >= s->kill_at) {
			for (p = 0; p < SIM_PAGES; p++)
				if (s->home[p].busy && (s->home[p].acks_due & 1u << 2))
					break;
			if (p < SIM_PAGES || s->done >= 2 * s->kill_at)
				kill_node(s);
		}
		pending = 0;	/* (after a death: its queues are gone) */
		for (a = 0; a < SIM_NODES; a++)
			for (b = 0; b < SIM_NODES; b++)
				pending += s->chan[a][b].n;
		if (s->drops && rand_r(&s->seed) % 8 == 0) {
			n = rand_r(&s->seed) % SIM_NODES;
			p = rand_r(&s->seed) % SIM_PAGES;
			if ((int)n != s->dead && home_of(p) != n &&
			    coh_cache_drop(&s->cache[n][p]))
				s->dropped++;
		}
		if (s->done < ops && rand_r(&s->seed) % 3 == 0 &&
		    start(s, rand_r(&s->seed) % SIM_NODES)) {
			idle = 0;
			continue;
		}
		if (!pending) {
			if (s->done >= ops)
				break;
			/* nothing to deliver, nothing could start: stuck */
			if (++idle > 1000000)
				fail_msg("stuck after %lu operations", s->done);
			continue;
		}
		idle = 0;
		/* a random non-empty channel: any interleaving between pairs */
		do {
			a = rand_r(&s->seed) % SIM_NODES;
			b = rand_r(&s->seed) % SIM_NODES;
		} while (!s->chan[a][b].n);
		deliver(s, a, b);
	}
	for (n = 0; n < SIM_NODES; n++)
		for (p = 0; p < SIM_SLOTS; p++)
			assert_false(s->slot[n][p].busy);
	for (p = 0; p < SIM_PAGES; p++) {
		int r = lin_check(s->hist[p], s->nhist[p], 0, why, sizeof(why));

		assert_true(r >= 0);
		if (r) {
			violations++;
			print_message("page %u: %s\n", p, why);
		}
		free(s->hist[p]);
	}
	return violations;
}

static void test_sim_linearizable(void **state)
{
	struct sim *s = calloc(1, sizeof(*s));
	unsigned long inv = 0, v, ops;
	unsigned int p;

	(void)state;
	assert_non_null(s);
	s->seed = 11;
	ops = env_count("COH_SIM_OPS", 120000);
	v = simulate(s, ops);
	for (p = 0; p < SIM_PAGES; p++) {
		inv += s->home[p].invalidations;
		assert_int_equal(s->home[p].refused, 0);
	}
	print_message("%lu operations on %u pages over %u nodes, %lu invalidations, %lu not linearizable\n",
		      s->done, SIM_PAGES, SIM_NODES, inv, v);
	assert_true(s->done >= ops);
	assert_true(inv > ops / 10);
	assert_int_equal(v, 0);
	free(s);
}

/*
 * Copies dropped at random moments, without a message (a node that
 * needs the frame: bm node -f): the homes' INVALIDATEs to nodes that
 * no longer hold a copy are acknowledged, reads ask again, and every
 * page stays linearizable.
 */
static void test_sim_copies_dropped(void **state)
{
	struct sim *s = calloc(1, sizeof(*s));
	unsigned long v, ops = env_count("COH_SIM_OPS", 120000) / 2;
	unsigned int p;

	(void)state;
	assert_non_null(s);
	s->seed = 31;
	s->drops = true;
	v = simulate(s, ops);
	for (p = 0; p < SIM_PAGES; p++)
		assert_int_equal(s->home[p].refused, 0);
	print_message("%lu operations, %lu copies dropped, %lu not linearizable\n",
		      s->done, s->dropped, v);
	assert_true(s->done >= ops);
	assert_true(s->dropped > ops / 20);
	assert_int_equal(v, 0);
	free(s);
}

/*
 * Node 2 dies in the middle: the others go on with the pages homed
 * elsewhere, every history (with the writes that never completed left
 * open) stays linearizable, and nothing from the dead is refused late.
 */
static void test_sim_node_dies(void **state)
{
	unsigned long v, ops = env_count("COH_SIM_OPS", 120000) / 2;
	unsigned int seed, p;

	(void)state;
	for (seed = 21; seed < 25; seed++) {
		struct sim *s = calloc(1, sizeof(*s));

		assert_non_null(s);
		s->seed = seed;
		s->kill_at = ops / 4;
		v = simulate(s, ops);
		for (p = 0; p < SIM_PAGES; p++)
			assert_int_equal(s->home[p].refused, 0);
		print_message("node 2 died after %lu operations: %lu done, %lu writes left open, %lu not linearizable\n",
			      s->kill_at, s->done, s->pending, v);
		assert_int_equal(s->dead, 2);
		assert_int_equal(v, 0);
		free(s);
	}
}

/* The same with a node that lies: the checker must see it. */
static void test_sim_catches_a_lie(void **state)
{
	struct sim *s = calloc(1, sizeof(*s));
	unsigned long v;

	(void)state;
	assert_non_null(s);
	s->seed = 11;
	s->bug = true;
	v = simulate(s, 20000);
	print_message("%lu invalidations acknowledged but ignored: %lu pages not linearizable\n",
		      s->faults, v);
	assert_true(s->faults > 0);
	assert_true(v > 0);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_home_table),
		cmocka_unit_test(test_home_waiting),
		cmocka_unit_test(test_node_failed),
		cmocka_unit_test(test_cache_table),
		cmocka_unit_test(test_lin_known),
		cmocka_unit_test(test_lin_vs_brute),
		cmocka_unit_test(test_sim_linearizable),
		cmocka_unit_test(test_sim_copies_dropped),
		cmocka_unit_test(test_sim_node_dies),
		cmocka_unit_test(test_sim_catches_a_lie),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
