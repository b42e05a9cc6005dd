// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * libmrrc - thin user-space library for /dev/mrrc.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#define LIBMRRC_INTERNAL
#include "libmrrc.h"
#include "mark_defined.h"

#define MRRC_EXPORT __attribute__((visibility("default")))

/*
 * An entry point of an older symbol version, kept for programs linked
 * against the shared library: @impl becomes name@ver (not the default
 * version).  Only in the shared library's objects (MRRC_SHARED): in the
 * archive such aliases would break whoever links it into a library of
 * their own.
 */
#ifdef MRRC_SHARED
#define MRRC_COMPAT(impl, name, ver) \
	__asm__(".symver " #impl ", " #name "@" #ver)
#endif

/* A caller's size: at least the members the call sets, and a __u32. */
static int mrrc_size_ok(const void *p, size_t size, size_t min)
{
	return p && size >= min && size <= UINT32_MAX;
}

/* The one place every command goes through. */
static int mrrc_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, cmd, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

MRRC_EXPORT int mrrc_open(unsigned int flags)
{
	const char *path = getenv("MRRC_DEVICE");
	int fd;

	if (flags)
		return -EINVAL;
	if (!path || !*path)
		path = MRRC_DEVICE_PATH;
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

MRRC_EXPORT int mrrc_close(int fd)
{
	return close(fd) < 0 ? -errno : 0;
}

MRRC_EXPORT int mrrc_query(int fd, struct mrrc_query *q)
{
	if (!q)
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	return mrrc_ioctl(fd, MRRC_IOC_QUERY, q);
}

MRRC_EXPORT int mrrc_dev_list(int fd, struct mrrc_dev_info *devs,
			      unsigned int *count)
{
	struct mrrc_dev_list dl = {
		.size = sizeof(dl),
		.entry_size = sizeof(*devs),
	};
	int ret;

	if (!count || (*count && !devs))
		return -EINVAL;
	dl.count = *count;
	dl.entries = (uintptr_t)devs;
	ret = mrrc_ioctl(fd, MRRC_IOC_DEV_LIST, &dl);
	if (!ret) {
		mark_defined(devs, sizeof(*devs) *
			     (dl.count < *count ? dl.count : *count));
		*count = dl.count;
	}
	return ret;
}

MRRC_EXPORT int mrrc_port_query(int fd, uint32_t dev_index, uint32_t port_num,
				struct mrrc_port_query *attr,
				struct mrrc_gid_entry *gids,
				unsigned int *ngids)
{
	unsigned int room = ngids ? *ngids : 0;
	int ret;

	if (!attr || (room && !gids))
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->dev_index = dev_index;
	attr->port_num = port_num;
	attr->gid_entry_size = sizeof(*gids);
	attr->gid_count = room;
	attr->gids = (uintptr_t)gids;
	ret = mrrc_ioctl(fd, MRRC_IOC_PORT_QUERY, attr);
	if (!ret && ngids)
		*ngids = attr->gid_count;
	return ret;
}

MRRC_EXPORT int mrrc_bind(int fd, const char *dev_name, uint32_t *dev_index)
{
	struct mrrc_bind b = { .size = sizeof(b) };
	size_t len;
	int ret;

	if (!dev_name)
		return -EINVAL;
	len = strlen(dev_name);
	if (len >= sizeof(b.dev_name))
		return -ENAMETOOLONG;
	memcpy(b.dev_name, dev_name, len);
	ret = mrrc_ioctl(fd, MRRC_IOC_BIND, &b);
	if (!ret && dev_index)
		*dev_index = b.dev_index;
	return ret;
}

MRRC_EXPORT int mrrc_ctx_query(int fd, struct mrrc_ctx_query *cq)
{
	if (!cq)
		return -EINVAL;
	memset(cq, 0, sizeof(*cq));
	cq->size = sizeof(*cq);
	return mrrc_ioctl(fd, MRRC_IOC_CTX_QUERY, cq);
}

MRRC_EXPORT int mrrc_cache_config(int fd, struct mrrc_cache_config *cfg)
{
	if (!cfg)
		return -EINVAL;
	cfg->size = sizeof(*cfg);
	cfg->flags &= MRRC_CACHE_MEASURE_COSTS;
	return mrrc_ioctl(fd, MRRC_IOC_CACHE_CONFIG, cfg);
}

/*
 * Returns the number of requests completed; if that is less than @count,
 * reqs[ret].status says why.  A batch whose first request fails returns
 * that request's error.
 */
MRRC_EXPORT int mrrc_reg(int fd, struct mrrc_reg_req *reqs, unsigned int count,
			 struct mrrc_seg *segs, unsigned int *nsegs)
{
	struct mrrc_reg r = {
		.size = sizeof(r),
		.count = count,
		.req_size = sizeof(*reqs),
		.reqs = (uintptr_t)reqs,
		.seg_size = sizeof(*segs),
		.segs = (uintptr_t)segs,
	};
	int ret;

	if ((count && !reqs) || (nsegs && *nsegs && !segs) ||
	    count > INT32_MAX)
		return -EINVAL;
	r.seg_count = nsegs ? *nsegs : 0;
	ret = mrrc_ioctl(fd, MRRC_IOC_REG, &r);
	if (ret && !r.done)
		return ret;
	if (nsegs)
		*nsegs = r.seg_count;
	return r.done;
}

/* Returns the number of handles released, or the first one's error. */
MRRC_EXPORT int mrrc_release(int fd, const uint32_t *handles,
			     unsigned int count)
{
	struct mrrc_release r = {
		.size = sizeof(r),
		.count = count,
		.handles = (uintptr_t)handles,
	};
	int ret;

	if ((count && !handles) || count > INT32_MAX)
		return -EINVAL;
	ret = mrrc_ioctl(fd, MRRC_IOC_RELEASE, &r);
	if (ret && !r.done)
		return ret;
	return r.done;
}

/* Returns the number of regions deregistered. */
MRRC_EXPORT int mrrc_flush(int fd)
{
	struct mrrc_flush f = { .size = sizeof(f) };
	int ret;

	ret = mrrc_ioctl(fd, MRRC_IOC_FLUSH, &f);
	return ret ? ret : (int)f.regions;
}

/* The first sizes of the structures, the smallest the module accepts. */
#define MRRC_CACHE_STATS_SIZE_0_2	184
#define MRRC_CONN_QUERY_SIZE_0_3	104

static int mrrc_stats(int fd, struct mrrc_cache_stats *st, size_t size,
		      uint32_t flags)
{
	if (!mrrc_size_ok(st, size, MRRC_CACHE_STATS_SIZE_0_2))
		return -EINVAL;
	/* Never a byte past the caller's structure. */
	memset(st, 0, size);
	st->size = size;
	st->flags = flags;
	return mrrc_ioctl(fd, MRRC_IOC_CACHE_STATS, st);
}

MRRC_EXPORT int mrrc_cache_stats_sized(int fd, struct mrrc_cache_stats *st,
				       size_t size)
{
	return mrrc_stats(fd, st, size, 0);
}

MRRC_EXPORT int mrrc_global_stats_sized(int fd, struct mrrc_cache_stats *st,
					size_t size)
{
	return mrrc_stats(fd, st, size, MRRC_STATS_GLOBAL);
}

#ifdef MRRC_COMPAT
/*
 * libmrrc 0.1.0's mrrc_cache_stats@MRRC_0.2 and mrrc_global_stats@MRRC_0.2
 * took no size and filled the structure as the library knew it, which
 * overran programs built against an older header.  They now fill it as
 * it was when each came: 184 bytes (up to mre_recency) for the cache's,
 * 280 (up to caches) for the global one, never more.
 */
#define MRRC_GLOBAL_STATS_SIZE_0_2	280

MRRC_EXPORT int mrrc_cache_stats_0_2(int fd, struct mrrc_cache_stats *st);
MRRC_EXPORT int mrrc_global_stats_0_2(int fd, struct mrrc_cache_stats *st);
MRRC_COMPAT(mrrc_cache_stats_0_2, mrrc_cache_stats, MRRC_0.2);
MRRC_COMPAT(mrrc_global_stats_0_2, mrrc_global_stats, MRRC_0.2);

MRRC_EXPORT int mrrc_cache_stats_0_2(int fd, struct mrrc_cache_stats *st)
{
	return mrrc_stats(fd, st, MRRC_CACHE_STATS_SIZE_0_2, 0);
}

MRRC_EXPORT int mrrc_global_stats_0_2(int fd, struct mrrc_cache_stats *st)
{
	return mrrc_stats(fd, st, MRRC_GLOBAL_STATS_SIZE_0_2,
			  MRRC_STATS_GLOBAL);
}
#endif

/* ---- connections and the data path ------------------------------------- */

static int mrrc_addr_set(struct mrrc_addr *a, const struct sockaddr *sa)
{
	memset(a, 0, sizeof(*a));
	if (!sa)
		return 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;

		a->family = AF_INET;
		a->port = ntohs(sin->sin_port);
		memcpy(a->addr, &sin->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		a->family = AF_INET6;
		a->port = ntohs(sin6->sin6_port);
		a->scope_id = sin6->sin6_scope_id;
		memcpy(a->addr, &sin6->sin6_addr, 16);
		return 0;
	}
	return -EAFNOSUPPORT;
}

MRRC_EXPORT int mrrc_listen_flags(int fd, const struct sockaddr *addr,
				  uint32_t backlog, uint32_t flags,
				  uint64_t user_data, uint32_t *id)
{
	struct mrrc_listen l = {
		.size = sizeof(l),
		.flags = flags,
		.backlog = backlog,
		.user_data = user_data,
	};
	int ret;

	if (!addr || !id)
		return -EINVAL;
	ret = mrrc_addr_set(&l.addr, addr);
	if (!ret)
		ret = mrrc_ioctl(fd, MRRC_IOC_LISTEN, &l);
	if (!ret)
		*id = l.id;
	return ret;
}

MRRC_EXPORT int mrrc_listen(int fd, const struct sockaddr *addr,
			    uint32_t backlog, uint64_t user_data, uint32_t *id)
{
	return mrrc_listen_flags(fd, addr, backlog, 0, user_data, id);
}

MRRC_EXPORT int mrrc_connect_flags(int fd, const struct sockaddr *dst,
				   const struct sockaddr *src,
				   uint32_t timeout_ms, uint32_t flags,
				   uint64_t user_data, uint32_t *id)
{
	struct mrrc_connect c = {
		.size = sizeof(c),
		.flags = flags,
		.timeout_ms = timeout_ms,
		.user_data = user_data,
	};
	int ret;

	if (!dst || !id)
		return -EINVAL;
	ret = mrrc_addr_set(&c.dst, dst);
	if (!ret)
		ret = mrrc_addr_set(&c.src, src);
	if (!ret)
		ret = mrrc_ioctl(fd, MRRC_IOC_CONNECT, &c);
	if (!ret)
		*id = c.id;
	return ret;
}

MRRC_EXPORT int mrrc_connect(int fd, const struct sockaddr *dst,
			     const struct sockaddr *src, uint32_t timeout_ms,
			     uint64_t user_data, uint32_t *id)
{
	return mrrc_connect_flags(fd, dst, src, timeout_ms, 0, user_data, id);
}

static int mrrc_conn_ioctl(int fd, unsigned long cmd, uint32_t id,
			   uint64_t user_data)
{
	struct mrrc_conn_cmd c = {
		.size = sizeof(c),
		.id = id,
		.user_data = user_data,
	};

	return mrrc_ioctl(fd, cmd, &c);
}

MRRC_EXPORT int mrrc_accept(int fd, uint32_t id, uint64_t user_data)
{
	return mrrc_conn_ioctl(fd, MRRC_IOC_ACCEPT, id, user_data);
}

MRRC_EXPORT int mrrc_reject(int fd, uint32_t id)
{
	return mrrc_conn_ioctl(fd, MRRC_IOC_REJECT, id, 0);
}

MRRC_EXPORT int mrrc_disconnect(int fd, uint32_t id)
{
	return mrrc_conn_ioctl(fd, MRRC_IOC_DISCONNECT, id, 0);
}

MRRC_EXPORT int mrrc_destroy(int fd, uint32_t id)
{
	return mrrc_conn_ioctl(fd, MRRC_IOC_DESTROY, id, 0);
}

MRRC_EXPORT int mrrc_conn_query_sized(int fd, uint32_t id,
				      struct mrrc_conn_query *q, size_t size)
{
	if (!mrrc_size_ok(q, size, MRRC_CONN_QUERY_SIZE_0_3))
		return -EINVAL;
	memset(q, 0, size);
	q->size = size;
	q->id = id;
	return mrrc_ioctl(fd, MRRC_IOC_CONN_QUERY, q);
}

#ifdef MRRC_COMPAT
/* As for the statistics: mrrc_conn_query@MRRC_0.3 fills 0.3's 104 bytes. */
MRRC_EXPORT int mrrc_conn_query_0_3(int fd, uint32_t id,
				    struct mrrc_conn_query *q);
MRRC_COMPAT(mrrc_conn_query_0_3, mrrc_conn_query, MRRC_0.3);

MRRC_EXPORT int mrrc_conn_query_0_3(int fd, uint32_t id,
				    struct mrrc_conn_query *q)
{
	return mrrc_conn_query_sized(fd, id, q, MRRC_CONN_QUERY_SIZE_0_3);
}
#endif

/* struct mrrc_ctx_info as 0.6 defined it. */
#define MRRC_CTX_INFO_SIZE_0_6	72
_Static_assert(sizeof(struct mrrc_ctx_info) >= MRRC_CTX_INFO_SIZE_0_6,
	       "struct mrrc_ctx_info shrank");

/* A list whose entries may grow: the caller's entry size goes through. */
static int mrrc_list_ok(const void *entries, const unsigned int *count,
			size_t entry_size, size_t min)
{
	return count && (!*count || entries) && entry_size >= min &&
	       entry_size <= UINT32_MAX;
}

MRRC_EXPORT int mrrc_ctx_list_sized(int fd, struct mrrc_ctx_info *ctxs,
				    unsigned int *count, size_t entry_size)
{
	struct mrrc_ctx_list cl = { .size = sizeof(cl) };
	int ret;

	if (!mrrc_list_ok(ctxs, count, entry_size, MRRC_CTX_INFO_SIZE_0_6))
		return -EINVAL;
	cl.entry_size = entry_size;
	cl.count = *count;
	cl.entries = (uintptr_t)ctxs;
	ret = mrrc_ioctl(fd, MRRC_IOC_CTX_LIST, &cl);
	if (!ret)
		*count = cl.count;
	return ret;
}

MRRC_EXPORT int mrrc_conn_list_sized(int fd, uint32_t ctx,
				     struct mrrc_conn_query *conns,
				     unsigned int *count, size_t entry_size)
{
	struct mrrc_conn_list ll = { .size = sizeof(ll), .ctx = ctx };
	int ret;

	if (!mrrc_list_ok(conns, count, entry_size,
			  MRRC_CONN_QUERY_SIZE_0_3))
		return -EINVAL;
	ll.entry_size = entry_size;
	ll.count = *count;
	ll.entries = (uintptr_t)conns;
	ret = mrrc_ioctl(fd, MRRC_IOC_CONN_LIST, &ll);
	if (!ret)
		*count = ll.count;
	return ret;
}

MRRC_EXPORT int mrrc_post(int fd, const struct mrrc_wr *wrs,
			  unsigned int count, unsigned int *done)
{
	struct mrrc_post p = {
		.size = sizeof(p),
		.count = count,
		.wr_size = sizeof(*wrs),
		.wrs = (uintptr_t)wrs,
	};
	int ret;

	if (count && !wrs)
		return -EINVAL;
	ret = mrrc_ioctl(fd, MRRC_IOC_POST, &p);
	if (done)
		*done = p.done;
	return ret;
}

MRRC_EXPORT int mrrc_poll_cq(int fd, struct mrrc_cqe *cqes, unsigned int max)
{
	struct mrrc_poll p = {
		.size = sizeof(p),
		.max = max,
		.cqe_size = sizeof(*cqes),
		.cqes = (uintptr_t)cqes,
	};
	int ret;

	if ((max && !cqes) || max > INT32_MAX)
		return -EINVAL;
	ret = mrrc_ioctl(fd, MRRC_IOC_POLL, &p);
	if (ret)
		return ret;
	mark_defined(cqes, sizeof(*cqes) * p.count);
	return (int)p.count;
}

/* 1 when completions are ready, 0 on timeout (-1 waits for ever). */
MRRC_EXPORT int mrrc_wait(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret;

	do {
		ret = poll(&pfd, 1, timeout_ms);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	return ret > 0 && (pfd.revents & POLLIN) ? 1 : 0;
}

MRRC_EXPORT int mrrc_cancel(int fd, uint32_t conn, uint8_t opcode,
			    uint64_t tag)
{
	struct mrrc_cancel c = {
		.size = sizeof(c),
		.conn = conn,
		.opcode = opcode,
		.tag = tag,
	};

	return mrrc_ioctl(fd, MRRC_IOC_CANCEL, &c);
}

MRRC_EXPORT int mrrc_export(int fd, const void *addr, size_t len,
			    uint32_t access, const uint32_t *conns,
			    unsigned int nconns, struct mrrc_seg *segs,
			    unsigned int *nsegs, uint32_t *id)
{
	struct mrrc_export x = {
		.size = sizeof(x),
		.addr = (uintptr_t)addr,
		.len = len,
		.access = access,
		.nconns = nconns,
		.conns = (uintptr_t)conns,
	};
	unsigned int i;
	int ret;

	if (!id || !nsegs || (*nsegs && !segs) || (nconns && !conns))
		return -EINVAL;
	ret = mrrc_ioctl(fd, MRRC_IOC_EXPORT, &x);
	if (ret)
		return ret;
	if (x.nsegs > *nsegs) {
		/* Keys the caller cannot learn must not stay live. */
		mrrc_unexport(fd, x.id);
		*nsegs = x.nsegs;
		return -EOVERFLOW;
	}
	for (i = 0; i < x.nsegs; i++)
		segs[i] = x.segs[i];
	*nsegs = x.nsegs;
	*id = x.id;
	return 0;
}

MRRC_EXPORT int mrrc_unexport(int fd, uint32_t id)
{
	struct mrrc_unexport u = { .size = sizeof(u), .id = id };

	return mrrc_ioctl(fd, MRRC_IOC_UNEXPORT, &u);
}
