/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrrckv's load generator (`mrrckv load`, used by BENCH=kv): clients
 * processes, each with its own connection, run get_ratio GETs and the
 * rest SETs of value_bytes-byte values on keys load:0 .. load:keys-1
 * picked by a Zipf law (exponent zipf), closed loop, for seconds
 * seconds after all have connected.  load_fill() stores every key once
 * before (over any path: the keys are the daemon's, not the connection's);
 * a GET that finds nothing is counted as a miss.
 * Prints one JSON line per operation kind that ran: throughput_ops (its
 * operations over the longest client's run time), latency_p50_ns,
 * latency_p99_ns, misses and oget_retries (GETs).  A GET that returns a
 * value of the wrong length or bytes fails the run (-EBADMSG).
 */
#ifndef MRRCD_LOAD_H
#define MRRCD_LOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kvclient.h"

#define LOAD_MAX_VALUE	(1u << 20)

struct load_cfg {
	/* Opens one client's connection (called in each client process). */
	int (*connect)(struct kvc *k, void *arg);
	void *connect_arg;
	bool one_sided;		/* GETs by one-sided READs (kvc_oget) */
	const char *meta;	/* their metadata mode (kvc_set_meta) */
	unsigned int clients, keys, seconds;
	uint32_t value_bytes;
	double get_ratio;	/* 0 .. 1 */
	double zipf;		/* exponent; 0: uniform */
};

/* 0, or a negative errno (-EINVAL for a configuration out of range). */
int load_run(const struct load_cfg *c, FILE *out);
/* Store keys load:0 .. load:keys-1 with value_bytes-byte values, in order. */
int load_fill(const struct load_cfg *c);

#endif /* MRRCD_LOAD_H */
