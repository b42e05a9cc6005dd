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

#include <stddef.h>
#include <stdint.h>
#include "mrrc_abi.h"
#include "mrrc_version.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The library's own version, as MRRC_VERSION_NUM and MRRC_VERSION_STRING
 * were when it was built (the headers a program was compiled with may be
 * older): compare with MRRC_MKVERSION().
 */
unsigned int mrrc_version(void);
const char *mrrc_version_string(void);

/* Names for the ABI's numbers: static strings, never NULL. */
const char *mrrc_opcode_str(unsigned int opcode);	/* "WRITE", ... */
const char *mrrc_event_str(unsigned int event);	/* "ESTABLISHED", ... */
const char *mrrc_status_str(int status);	/* a completion's status */

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
/*
 * Calls that fill a structure the ABI may grow take the caller's size
 * (sizeof as it was compiled): the inline wrappers below pass it, so a
 * program keeps working with a later libmrrc whose structures grew.
 */
int mrrc_cache_stats_sized(int fd, struct mrrc_cache_stats *st,
			   size_t size);
int mrrc_global_stats_sized(int fd, struct mrrc_cache_stats *st,
			    size_t size);

/* Connections and the data path (MRRC_FEATURE_DATA). */
struct sockaddr;
int mrrc_listen(int fd, const struct sockaddr *addr, uint32_t backlog,
		uint64_t user_data, uint32_t *id);
int mrrc_connect(int fd, const struct sockaddr *dst,
		 const struct sockaddr *src, uint32_t timeout_ms,
		 uint64_t user_data, uint32_t *id);
/* With flags: MRRC_CONN_ISOLATED (MRRC_FEATURE_ISOLATED), or 0. */
int mrrc_listen_flags(int fd, const struct sockaddr *addr, uint32_t backlog,
		      uint32_t flags, uint64_t user_data, uint32_t *id);
int mrrc_connect_flags(int fd, const struct sockaddr *dst,
		       const struct sockaddr *src, uint32_t timeout_ms,
		       uint32_t flags, uint64_t user_data, uint32_t *id);
int mrrc_accept(int fd, uint32_t id, uint64_t user_data);
int mrrc_reject(int fd, uint32_t id);
int mrrc_disconnect(int fd, uint32_t id);
int mrrc_destroy(int fd, uint32_t id);
int mrrc_conn_query_sized(int fd, uint32_t id, struct mrrc_conn_query *q,
			  size_t size);
/*
 * The contexts the caller may see (its own uid's; all with CAP_SYS_ADMIN)
 * and a context's connections (ctx 0: this one): *count in, room; out,
 * how many there are.  Through the inline wrappers below.
 */
int mrrc_ctx_list_sized(int fd, struct mrrc_ctx_info *ctxs,
			unsigned int *count, size_t entry_size);
int mrrc_conn_list_sized(int fd, uint32_t ctx, struct mrrc_conn_query *conns,
			 unsigned int *count, size_t entry_size);
int mrrc_post(int fd, const struct mrrc_wr *wrs, unsigned int count,
	      unsigned int *done);
int mrrc_poll_cq(int fd, struct mrrc_cqe *cqes, unsigned int max);
int mrrc_wait(int fd, int timeout_ms);
int mrrc_cancel(int fd, uint32_t conn, uint8_t opcode, uint64_t tag);
int mrrc_export(int fd, const void *addr, size_t len, uint32_t access,
		const uint32_t *conns, unsigned int nconns,
		struct mrrc_seg *segs, unsigned int *nsegs, uint32_t *id);
int mrrc_unexport(int fd, uint32_t id);

/* FRRWP transactions (see mrrc_frrwp(3)). */
enum mrrc_frrwp_mode {
	MRRC_FRRWP = 0,			/* CRW/STCRW, registrations overlap */
	MRRC_FRRWP_TRADITIONAL = 1,	/* Fig. 5: sequential, rkey messages */
};

int mrrc_frrwp_write(int fd, uint32_t conn, const void *buf, size_t len,
		     int mode, int timeout_ms);
int mrrc_frrwp_read(int fd, uint32_t conn, void *buf, size_t len, int mode,
		    int timeout_ms);
int mrrc_frrwp_serve(int fd, uint32_t conn, void *buf, size_t len,
		     int timeout_ms);

#ifndef LIBMRRC_INTERNAL
static inline int mrrc_cache_stats(int fd, struct mrrc_cache_stats *st)
{
	return mrrc_cache_stats_sized(fd, st, sizeof(*st));
}

/* Counters summed over every context of the module; any fd will do. */
static inline int mrrc_global_stats(int fd, struct mrrc_cache_stats *st)
{
	return mrrc_global_stats_sized(fd, st, sizeof(*st));
}

static inline int mrrc_ctx_list(int fd, struct mrrc_ctx_info *ctxs,
				unsigned int *count)
{
	return mrrc_ctx_list_sized(fd, ctxs, count, sizeof(*ctxs));
}

static inline int mrrc_conn_list(int fd, uint32_t ctx,
				 struct mrrc_conn_query *conns,
				 unsigned int *count)
{
	return mrrc_conn_list_sized(fd, ctx, conns, count, sizeof(*conns));
}

static inline int mrrc_conn_query(int fd, uint32_t id,
				  struct mrrc_conn_query *q)
{
	return mrrc_conn_query_sized(fd, id, q, sizeof(*q));
}
#endif

#ifdef __cplusplus
}
#endif
#endif /* LIBMRRC_H */
