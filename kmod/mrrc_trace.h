/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mrrc - tracepoints on the slow paths of the registration cache:
 * /sys/kernel/tracing/events/mrrc/
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM mrrc

#if !defined(_MRRC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _MRRC_TRACE_H

#include <linux/tracepoint.h>

/* A request that had to register: a miss or the gaps of an overlap. */
TRACE_EVENT(mrrc_miss,
	    TP_PROTO(pid_t pid, unsigned long start, unsigned long npages,
		     u32 access, u32 result, u64 reg_pages),
	TP_ARGS(pid, start, npages, access, result, reg_pages),
	TP_STRUCT__entry(__field(pid_t, pid)
		__field(unsigned long, start)
		__field(unsigned long, npages)
		__field(u32, access)
		__field(u32, result)
		__field(u64, reg_pages)
	),
	TP_fast_assign(__entry->pid = pid;
		__entry->start = start;
		__entry->npages = npages;
		__entry->access = access;
		__entry->result = result;
		__entry->reg_pages = reg_pages;
	),
	TP_printk("pid=%d page=%#lx npages=%lu access=%#x %s registered=%llu",
		  __entry->pid, __entry->start, __entry->npages,
		  __entry->access,
		  __entry->result == MRRC_RESULT_MISS ? "miss" : "overlap",
		  __entry->reg_pages)
);

/* One eviction round: LRU frees one region, MRE a whole segment. */
TRACE_EVENT(mrrc_evict,
	    TP_PROTO(pid_t pid, u32 policy, u64 regions, u64 pages,
		     u64 recency),
	TP_ARGS(pid, policy, regions, pages, recency),
	TP_STRUCT__entry(__field(pid_t, pid)
		__field(u32, policy)
		__field(u64, regions)
		__field(u64, pages)
		__field(u64, recency)
	),
	TP_fast_assign(__entry->pid = pid;
		__entry->policy = policy;
		__entry->regions = regions;
		__entry->pages = pages;
		__entry->recency = recency;
	),
	TP_printk("pid=%d policy=%s regions=%llu pages=%llu r=%#llx",
		  __entry->pid,
		  __entry->policy == MRRC_POLICY_MRE ? "mre" :
		  __entry->policy == MRRC_POLICY_GDSF ? "gdsf" :
		  __entry->policy == MRRC_POLICY_GDSF_BATCH ? "gdsf-batch" :
		  "lru",
		  __entry->regions, __entry->pages, __entry->recency)
);

/* A cached region dropped because its pages changed under it. */
TRACE_EVENT(mrrc_invalidate,
	    TP_PROTO(pid_t pid, unsigned long start, unsigned long npages,
		     unsigned int users),
	TP_ARGS(pid, start, npages, users),
	TP_STRUCT__entry(__field(pid_t, pid)
		__field(unsigned long, start)
		__field(unsigned long, npages)
		__field(unsigned int, users)
	),
	TP_fast_assign(__entry->pid = pid;
		__entry->start = start;
		__entry->npages = npages;
		__entry->users = users;
	),
	TP_printk("pid=%d page=%#lx npages=%lu users=%u", __entry->pid,
		  __entry->start, __entry->npages, __entry->users)
);

/*
 * A byte range exposed to a peer under its own key.  The key is in the
 * trace (root only) so that tests and debugging can check what a peer
 * was given.
 */
TRACE_EVENT(mrrc_expose,
	    TP_PROTO(pid_t pid, u64 addr, u32 len, u32 rkey, bool fast),
	TP_ARGS(pid, addr, len, rkey, fast),
	TP_STRUCT__entry(__field(pid_t, pid)
		__field(u64, addr)
		__field(u32, len)
		__field(u32, rkey)
		__field(bool, fast)
	),
	TP_fast_assign(__entry->pid = pid;
		__entry->addr = addr;
		__entry->len = len;
		__entry->rkey = rkey;
		__entry->fast = fast;
	),
	TP_printk("pid=%d addr=%#llx len=%u rkey=%#x by=%s", __entry->pid,
		  __entry->addr, __entry->len, __entry->rkey,
		  __entry->fast ? "fast" : "ordinary")
);

#endif /* _MRRC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE mrrc_trace
#include <trace/define_trace.h>
