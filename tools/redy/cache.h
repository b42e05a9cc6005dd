/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A Redy cache (redy-vldb2022 Table 1): a byte-addressable space of a
 * given capacity, spread as regions over memory servers (redyd) by the
 * cache manager (redymgr), with the configuration the manager's search
 * picked for the SLO, optionally populated from a file.  Read and write
 * synchronously, or submit requests and flush them in batches; reshape
 * (grow, shrink, a new SLO); delete.  A reshape asked of the
 * manager by someone else (redy reshape) is made by the handle's thread
 * itself, between two requests, once the migration thread hears of it.
 *
 * A background thread asks the manager for reclaim notices and migrates
 * the regions of a server being reclaimed to the replacements the
 * manager gives: the new server copies each region with RDMA READs from
 * the old one (REDY_OP_PULL).  Reads keep going to the old server until a
 * region has moved ("unpaused reads"); writes wait only for the region
 * being copied ("pause-on-migration writes").  With pause_all, the
 * baseline: every read and write to the reclaimed server's regions waits
 * until all of them have moved.  When a server fails without notice, its
 * regions fail with -EIO (nothing else does) until
 * redy_cache_repopulate() gives them new, empty ones.
 *
 * One thread does a cache's I/O (one connection per server, the
 * configuration's b and q; its c is the number of such threads, each
 * with a cache of its own); the migration thread is the cache's own.
 */
#ifndef MRRC_REDY_CACHE_H
#define MRRC_REDY_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "slo.h"

struct redy_cache;

struct redy_cache_opts {
	int pause_all;		/* baseline migration (see above) */
	unsigned int poll_ms;	/* how often to ask for notices (100) */
	const char *dev;	/* the RDMA device (the first) */
	/*
	 * Create's file (optional): its bytes are written at address 0 on
	 * before create returns; the rest of the cache is undefined.
	 */
	const char *file;
};

struct redy_cache_stats {
	uint64_t reads, writes, failed;
	uint64_t regions_migrated, bytes_migrated;
	uint64_t waits;		/* requests that waited for a migration */
};

/*
 * Asks the manager at @mgr:@port for a cache of @capacity bytes meeting
 * @slo for about @duration_s seconds.  0, or -ENOENT (no configuration
 * meets the SLO), -ENOSPC (not enough memory), -ECONNREFUSED, ...; with
 * o->file, also -EFBIG (larger than @capacity), -EINVAL (not a regular
 * file), its open's errors, or the first write's (the cache is given
 * back).
 */
int redy_cache_create(struct redy_cache **out, const char *mgr, uint16_t port,
		      uint64_t capacity, const struct redy_slo *slo,
		      unsigned int duration_s, const struct redy_cache_opts *o);
uint32_t redy_cache_id(const struct redy_cache *c);
uint64_t redy_cache_capacity(struct redy_cache *c);
void redy_cache_config(struct redy_cache *c, struct redy_cfg *cfg);
void redy_cache_stats(struct redy_cache *c, struct redy_cache_stats *st);

/*
 * 0, -EINVAL (outside [0, capacity)), or -EIO (a region on a failed
 * server; the other regions' parts were done).
 */
int redy_cache_read(struct redy_cache *c, uint64_t addr, void *buf, size_t len);
int redy_cache_write(struct redy_cache *c, uint64_t addr, const void *buf,
		     size_t len);

/* Asynchronous requests: queued by submit, run in batches by flush. */
typedef void (*redy_cache_cb)(void *arg, int status);
int redy_cache_submit(struct redy_cache *c, int write, uint64_t addr,
		      void *buf, size_t len, redy_cache_cb cb, void *arg);
/* Runs what was submitted, in order; calls each callback: how many. */
int redy_cache_flush(struct redy_cache *c);

/*
 * Grows or shrinks the cache (same configuration): 0 or -ENOSPC.  Waits
 * for the migrations under way (no region moves while it runs).
 */
int redy_cache_reshape(struct redy_cache *c, uint64_t capacity);
/*
 * A new SLO (and capacity): the manager searches its model again; the
 * regions on servers without the threads of the new configuration move
 * (as on a reclaim: reads unpaused, writes paused per region) before it
 * returns; the next request uses the new configuration's connections.
 * 0; -ENOENT (no configuration meets @slo) or -ENOSPC (too few regions
 * on servers with the threads): nothing changed; or the error of a region
 * that could not move (the cache has its new shape; that region fails
 * with -EIO until redy_cache_repopulate(), as a failed server's).
 */
int redy_cache_reshape_slo(struct redy_cache *c, uint64_t capacity,
			   const struct redy_slo *slo);
/* New, empty regions for those of failed servers: how many, or -errno. */
int redy_cache_repopulate(struct redy_cache *c);
/* Regions still to move (reclaim notices being handled). */
unsigned int redy_cache_migrating(struct redy_cache *c);
/* Gives the cache back to the manager and frees it. */
int redy_cache_delete(struct redy_cache *c);

#endif
