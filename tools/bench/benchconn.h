/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * benchconn - the connections the benchmarks measure over: events awaited
 * one at a time, and a pair of contexts connected to each other through
 * the test VM's address on veth0, which rxe0 runs on (tools/vm/guest.sh).
 */
#ifndef MRRC_BENCHCONN_H
#define MRRC_BENCHCONN_H

#include <stdint.h>

#include "libmrrc.h"

#define BENCH_ADDR "10.211.0.1"

/*
 * Waits for the next event on @fd: its connection if it is @ev,
 * -EPROTO if it is another event, or a negative errno.  Completions of
 * operations that come first are dropped.
 */
int bench_wait_event(int fd, int ev);

/* Two contexts of this process connected to each other. */
struct bench_pair {
	int sfd, cfd;
	uint32_t sconn, cconn;
};

/*
 * Two contexts bound to bench_dev(): @p->cfd connected to @p->sfd, which
 * listened on BENCH_ADDR:@port and accepted; both saw ESTABLISHED.  With
 * @ccfg the client's cache is configured before it connects.  0, or a
 * negative errno with nothing left open.
 */
int bench_pair_open(struct bench_pair *p, uint16_t port,
		    const struct mrrc_cache_config *ccfg);
/* The same with @flags (MRRC_CONN_ISOLATED) on the listener and connect. */
int bench_pair_open_flags(struct bench_pair *p, uint16_t port,
			  const struct mrrc_cache_config *ccfg,
			  uint32_t flags);
/* Closes both contexts (and with them the connection and the listener). */
void bench_pair_close(struct bench_pair *p);

#endif
