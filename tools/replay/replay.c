// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc-replay - feed a trace through the kernel's cache in model mode,
 * 4096 requests per ioctl, each released at once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay.h"

#define BATCH 4096

int replay_kernel(const struct trace *t, const struct replay_cfg *cfg,
		  struct replay_result *res)
{
	struct mrrc_cache_config cc = {
		.mode = MRRC_MODE_MODEL,
		.policy = cfg->policy,
		.max_pages = cfg->cache_pages,
		.max_regions = cfg->max_regions,
		.resort_pct = cfg->resort_pct,
		.evict_pct = cfg->evict_pct,
		.reg_ns_per_page = cfg->cost[0],
		.reg_ns_per_op = cfg->cost[1],
		.dereg_ns_per_page = cfg->cost[2],
		.dereg_ns_per_op = cfg->cost[3],
		.dereg_ns_per_region = cfg->cost[4],
	};
	struct mrrc_reg_req *reqs = calloc(BATCH, sizeof(*reqs));
	struct mrrc_seg *segs = calloc(BATCH * 8, sizeof(*segs));
	struct mrrc_cache_stats *st = &res->st;
	size_t i = 0;
	int fd, ret;

	if (!reqs || !segs) {
		ret = -ENOMEM;
		goto out_free;
	}
	fd = mrrc_open(0);
	if (fd < 0) {
		ret = fd;
		goto out_free;
	}
	ret = mrrc_bind(fd, cfg->device, NULL);
	if (!ret)
		ret = mrrc_cache_config(fd, &cc);
	while (!ret && i < t->n) {
		unsigned int k = t->n - i < BATCH ? t->n - i : BATCH, j;
		unsigned int nsegs = BATCH * 8;
		int done;

		for (j = 0; j < k; j++)
			reqs[j] = (struct mrrc_reg_req){
				.addr = t->r[i + j].addr,
				.length = t->r[i + j].len,
				.access = MRRC_ACCESS_LOCAL_WRITE,
				.flags = MRRC_REG_RELEASE,
			};
		done = mrrc_reg(fd, reqs, k, segs, &nsegs);
		if (done < 0)
			ret = done;
		else if ((unsigned int)done < k &&
			 !(done && reqs[done].status == -EOVERFLOW))
			ret = reqs[done].status;	/* else: segs full, go on */
		i += done > 0 ? done : 0;
	}
	if (!ret)
		ret = mrrc_cache_stats(fd, st);
	close(fd);
	if (!ret) {
		res->hit_ratio = st->requests ?
			(double)(st->hit_exact + st->hit_subset + st->hit_span) /
			st->requests : 0;
		res->cost_us = st->model_cost_ns / 1000.0;
	}
out_free:
	free(reqs);
	free(segs);
	return ret;
}
