/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrrc-replay: trace-driven evaluation of the kernel's registration cache.
 * Requests are byte ranges of one buffer address space; they are replayed
 * through a context in MRRC_MODE_MODEL, so every cache decision is the
 * kernel's own code and the registration cost comes from the cost model.
 */
#ifndef MRRC_REPLAY_H
#define MRRC_REPLAY_H

#include <stdint.h>
#include <stdio.h>
#include "libmrrc.h"

struct req {
	uint64_t addr;
	uint64_t len;
};

struct trace {
	struct req *r;
	size_t n, cap;
};

/* trace.c: readers return 0 or -errno and print what went wrong to @err. */
int trace_read_cloudphysics(FILE *in, struct trace *t, FILE *err);
int trace_read_msr(FILE *in, struct trace *t, FILE *err);
int trace_read_plain(FILE *in, struct trace *t, FILE *err);

struct synth {
	size_t requests;	/* how many */
	size_t objects;		/* distinct buffers */
	double zipf;		/* popularity skew */
	uint64_t seed;
};
int trace_synth_cello(const struct synth *s, struct trace *t);
int trace_synth_httpd(const struct synth *s, struct trace *t);
void trace_free(struct trace *t);

struct replay_cfg {
	const char *device;	/* RDMA device to bind to, e.g. "rxe0" */
	uint32_t policy;	/* MRRC_POLICY_* */
	uint64_t cache_pages;
	uint32_t max_regions;
	uint32_t resort_pct, evict_pct;	/* 0: kernel default */
	uint32_t cost[5];	/* a, b, a', b', c' in ns; 0: kernel default */
};

struct replay_result {
	struct mrrc_cache_stats st;
	double hit_ratio;	/* exact + subset + span over requests */
	double cost_us;		/* model cost of registrations + evictions */
};

/* replay.c: through the kernel (needs /dev/mrrc and cfg->device). */
int replay_kernel(const struct trace *t, const struct replay_cfg *cfg,
		  struct replay_result *res);

/* refsim.c: user-space LRU reference for requests that never partially
 * overlap.  Returns hits, registrations and deregistrations. */
struct refsim_result {
	uint64_t hits, registrations, deregistrations;
};
int refsim_lru(const struct trace *t, uint64_t cache_pages,
	       uint32_t max_regions, struct refsim_result *res);

#endif
