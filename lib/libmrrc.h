/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * libmrrc - thin user-space library for /dev/mrrc.
 *
 * Every function returns 0 (or a non-negative value where documented) on
 * success and a negative errno on failure; errno itself is not used as the
 * error channel.  See libmrrc(3) and the per-function man pages.
 */
#ifndef LIBMRRC_H
#define LIBMRRC_H

#include <stdint.h>
#include "mrrc_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Open /dev/mrrc (or $MRRC_DEVICE when set): a new, unbound context. */
int mrrc_open(unsigned int flags);
int mrrc_close(int fd);

int mrrc_query(int fd, struct mrrc_query *q);
int mrrc_dev_list(int fd, struct mrrc_dev_info *devs, unsigned int *count);
int mrrc_port_query(int fd, uint32_t dev_index, uint32_t port_num,
		    struct mrrc_port_query *attr, struct mrrc_gid_entry *gids,
		    unsigned int *ngids);
int mrrc_bind(int fd, const char *dev_name, uint32_t *dev_index);
int mrrc_ctx_query(int fd, struct mrrc_ctx_query *cq);

/* The registration cache (MRRC_FEATURE_CACHE). */
int mrrc_cache_config(int fd, struct mrrc_cache_config *cfg);
int mrrc_reg(int fd, struct mrrc_reg_req *reqs, unsigned int count,
	     struct mrrc_seg *segs, unsigned int *nsegs);
int mrrc_release(int fd, const uint32_t *handles, unsigned int count);
int mrrc_flush(int fd);
int mrrc_cache_stats(int fd, struct mrrc_cache_stats *st);
int mrrc_global_stats(int fd, struct mrrc_cache_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* LIBMRRC_H */
