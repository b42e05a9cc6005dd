/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * mrrc - RDMA memory registration region cache: the /dev/mrrc ioctl ABI.
 *
 * Shared verbatim by the kernel module and libmrrc.
 *
 * Conventions (see Documentation/abi.rst for the full errno contract):
 *
 *  - Every command is _IO(MRRC_TYPE, nr) and takes a pointer to a structure
 *    whose first member is "__u32 size", the number of bytes user space
 *    passes, followed by "__u32 flags".  A structure may grow at its end:
 *    the kernel accepts a shorter one down to the size of its first
 *    revision, and a longer one if every byte it does not know is zero.
 *  - Only fixed-size types; pointers travel as __aligned_u64; no implicit
 *    padding.  Members named __reserved must be zero.
 *  - Unknown flags give EOPNOTSUPP, non-zero reserved members EINVAL.
 *  - Members marked "out" are ignored on input and written by the kernel.
 */
#ifndef _UAPI_MRRC_ABI_H
#define _UAPI_MRRC_ABI_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#define MRRC_ABI_VERSION	1
#define MRRC_DEVICE_PATH	"/dev/mrrc"

#define MRRC_TYPE		0xBE
#define MRRC_CMD_BASE		0x80

/* Longest RDMA device name including the terminating NUL. */
#define MRRC_NAME_MAX		64

enum {
	MRRC_CMD_QUERY = MRRC_CMD_BASE,
	MRRC_CMD_DEV_LIST,
	MRRC_CMD_PORT_QUERY,
	MRRC_CMD_BIND,
	MRRC_CMD_CTX_QUERY,
	MRRC_CMD_CACHE_CONFIG,
	MRRC_CMD_REG,
	MRRC_CMD_RELEASE,
	MRRC_CMD_FLUSH,
	MRRC_CMD_CACHE_STATS,
	MRRC_CMD_LISTEN,
	MRRC_CMD_CONNECT,
	MRRC_CMD_ACCEPT,
	MRRC_CMD_REJECT,
	MRRC_CMD_DISCONNECT,
	MRRC_CMD_DESTROY,
	MRRC_CMD_POST,
	MRRC_CMD_POLL,
	MRRC_CMD_CANCEL,
	MRRC_CMD_CONN_QUERY,
	MRRC_CMD_EXPORT,
	MRRC_CMD_UNEXPORT,
	MRRC_CMD_CTX_LIST,
	MRRC_CMD_CONN_LIST,
	MRRC_CMD_LAST = MRRC_CMD_CONN_LIST,
};

/**
 * struct mrrc_query - MRRC_IOC_QUERY: what the module is and can do
 * @size: sizeof(struct mrrc_query)
 * @flags: must be 0
 * @abi_version: out, MRRC_ABI_VERSION of the running module
 * @num_devices: out, number of RDMA devices the module currently tracks
 * @features: out, MRRC_FEATURE_* bits
 * @last_cmd: out, highest MRRC_CMD_* number the module understands
 * @__reserved: must be 0
 */
struct mrrc_query {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 num_devices;
	__aligned_u64 features;
	__u32 last_cmd;
	__u32 __reserved;
};

/* Feature bits reported in mrrc_query.features. */
/* Device listing, port query and per-context binding (ABI 1). */
#define MRRC_FEATURE_DEVICES	_BITULL(0)
/* The registration cache: CACHE_CONFIG, REG, RELEASE, FLUSH, CACHE_STATS. */
#define MRRC_FEATURE_CACHE	_BITULL(1)
/* Connections and the data path: LISTEN .. CONN_QUERY, CRW and STCRW. */
#define MRRC_FEATURE_DATA	_BITULL(2)
/* MRRC_CONN_ISOLATED connections: a protection domain and cache each. */
#define MRRC_FEATURE_ISOLATED	_BITULL(3)

enum mrrc_atomic_cap {
	MRRC_ATOMIC_NONE = 0,	/* no atomic operations */
	MRRC_ATOMIC_HCA = 1,	/* atomic with respect to this device */
	MRRC_ATOMIC_GLOB = 2,	/* atomic with respect to CPUs too */
};

/**
 * struct mrrc_dev_info - one RDMA device, as written by MRRC_IOC_DEV_LIST
 *
 * All members are written by the kernel.  GUIDs are in network byte order,
 * exactly as the device reports them.
 */
struct mrrc_dev_info {
	__u32 dev_index;		/* ib_core device index */
	__u32 phys_port_cnt;		/* ports are numbered 1..phys_port_cnt */
	char name[MRRC_NAME_MAX];	/* NUL-terminated, e.g. "rxe0" */
	__be64 node_guid;
	__be64 sys_image_guid;
	__aligned_u64 fw_ver;
	__aligned_u64 max_mr_size;
	__aligned_u64 page_size_cap;
	__aligned_u64 device_cap_flags;	/* IB_DEVICE_* bits of ib_core */
	__u32 vendor_id;
	__u32 vendor_part_id;
	__u32 max_mr;
	__u32 max_fast_reg_page_list_len;
	__u32 max_pd;
	__u32 max_qp;
	__u32 max_qp_wr;
	__u32 max_sge;
	__u32 max_cq;
	__u32 max_cqe;
	__u32 max_qp_rd_atom;
	__u32 max_qp_init_rd_atom;
	__u32 atomic_cap;		/* enum mrrc_atomic_cap */
	__u32 __reserved;
};

/**
 * struct mrrc_dev_list - MRRC_IOC_DEV_LIST: list the RDMA devices
 * @size: sizeof(struct mrrc_dev_list)
 * @flags: must be 0
 * @entry_size: size of one element of @entries as user space knows it; at
 *	least the first revision of struct mrrc_dev_info.  A smaller kernel
 *	structure is zero-padded, a larger one truncated.
 * @count: in, number of elements @entries has room for (may be 0);
 *	out, number of devices.  min(in, out) elements are written.
 * @entries: user pointer to the array (may be 0 when @count is 0)
 */
struct mrrc_dev_list {
	__u32 size;
	__u32 flags;
	__u32 entry_size;
	__u32 count;
	__aligned_u64 entries;
};

enum mrrc_port_state {
	MRRC_PORT_NOP = 0,
	MRRC_PORT_DOWN = 1,
	MRRC_PORT_INIT = 2,
	MRRC_PORT_ARMED = 3,
	MRRC_PORT_ACTIVE = 4,
	MRRC_PORT_ACTIVE_DEFER = 5,
};

enum mrrc_link_layer {
	MRRC_LINK_LAYER_UNSPECIFIED = 0,
	MRRC_LINK_LAYER_INFINIBAND = 1,
	MRRC_LINK_LAYER_ETHERNET = 2,
};

enum mrrc_gid_type {
	MRRC_GID_TYPE_IB = 0,
	MRRC_GID_TYPE_ROCE = 1,		/* RoCE v1 */
	MRRC_GID_TYPE_ROCE_UDP_ENCAP = 2,	/* RoCE v2 */
};

/**
 * struct mrrc_gid_entry - one populated GID table entry
 * @gid: the GID, in network byte order
 * @index: its index in the port's GID table
 * @gid_type: enum mrrc_gid_type
 * @netdev_ifindex: ifindex of the associated netdev, 0 if none
 * @__reserved: written as 0
 */
struct mrrc_gid_entry {
	__u8 gid[16];
	__u32 index;
	__u32 gid_type;
	__u32 netdev_ifindex;
	__u32 __reserved;
};

/**
 * struct mrrc_port_query - MRRC_IOC_PORT_QUERY: one port and its GIDs
 * @size: sizeof(struct mrrc_port_query)
 * @flags: must be 0
 * @dev_index: in, mrrc_dev_info.dev_index of the device
 * @port_num: in, 1..phys_port_cnt
 * @state: out, enum mrrc_port_state
 * @phys_state: out, IB physical port state (5 = LinkUp)
 * @max_mtu: out, IB MTU enum (1 = 256 .. 5 = 4096)
 * @active_mtu: out, IB MTU enum
 * @link_layer: out, enum mrrc_link_layer
 * @gid_tbl_len: out, size of the port's GID table
 * @lid: out, LID (InfiniBand only, else 0)
 * @active_speed: out, IB speed code
 * @active_width: out, IB width code
 * @gid_entry_size: in, size of one element of @gids as user space knows it
 * @gid_count: in, room in @gids; out, number of populated GID entries.
 *	min(in, out) elements are written, lowest table index first.
 * @__reserved: must be 0
 * @gids: user pointer to struct mrrc_gid_entry[] (may be 0 if @gid_count
 *	is 0)
 */
struct mrrc_port_query {
	__u32 size;
	__u32 flags;
	__u32 dev_index;
	__u32 port_num;
	__u32 state;
	__u32 phys_state;
	__u32 max_mtu;
	__u32 active_mtu;
	__u32 link_layer;
	__u32 gid_tbl_len;
	__u32 lid;
	__u32 active_speed;
	__u32 active_width;
	__u32 gid_entry_size;
	__u32 gid_count;
	__u32 __reserved;
	__aligned_u64 gids;
};

/**
 * struct mrrc_bind - MRRC_IOC_BIND: bind this context to an RDMA device
 * @size: sizeof(struct mrrc_bind)
 * @flags: must be 0
 * @dev_name: in, NUL-terminated device name, e.g. "rxe0"
 * @dev_index: out, ib_core index of the device
 * @__reserved: must be 0
 *
 * A context (one open file description of /dev/mrrc) binds at most once.
 * Binding allocates the context's protection domain on the device; every
 * later object of the context lives there.
 */
struct mrrc_bind {
	__u32 size;
	__u32 flags;
	char dev_name[MRRC_NAME_MAX];
	__u32 dev_index;
	__u32 __reserved;
};

/**
 * struct mrrc_ctx_query - MRRC_IOC_CTX_QUERY: the device this context uses
 * @size: sizeof(struct mrrc_ctx_query)
 * @flags: must be 0
 * @dev_index: out, ib_core index of the bound device
 * @__reserved: must be 0
 * @dev_name: out, current name of the bound device
 */
struct mrrc_ctx_query {
	__u32 size;
	__u32 flags;
	__u32 dev_index;
	__u32 __reserved;
	char dev_name[MRRC_NAME_MAX];
};

/* Replacement policies of the registration cache. */
enum mrrc_policy {
	MRRC_POLICY_KEEP = 0,	/* CACHE_CONFIG: leave unchanged */
	MRRC_POLICY_MRE = 1,	/* MRRC: frequent + resorting sections, batched */
	MRRC_POLICY_LRU = 2,	/* classic pin-down cache, one region at a time */
	MRRC_POLICY_NONE = 3,	/* no cache: register and deregister every time */
	MRRC_POLICY_GDSF = 4,	/* GreedyDual-Size-Frequency, a size-aware baseline */
	MRRC_POLICY_GDSF_BATCH = 5, /* GDSF order, batches sized by their worth */
};

/* How the cache registers memory. */
enum mrrc_reg_mode {
	MRRC_MODE_KEEP = 0,	/* CACHE_CONFIG: leave unchanged */
	MRRC_MODE_ORDINARY = 1,	/* ib_reg_user_mr / ib_dereg_mr per region */
	MRRC_MODE_MODEL = 2,	/* no memory touched: cost model a*p + b */
	MRRC_MODE_FAST = 3,	/* pooled FRWR MRs, IB_WR_REG_MR (default) */
};

/**
 * struct mrrc_cache_config - MRRC_IOC_CACHE_CONFIG: set and read the
 *	context's cache configuration
 * @size: sizeof(struct mrrc_cache_config)
 * @flags: in, MRRC_CACHE_MEASURE_COSTS or 0 (MRRC_CACHE_COSTS_MEASURED is
 *	ignored); out, MRRC_CACHE_COSTS_MEASURED while the costs are being
 *	measured, else 0
 * @policy: in, enum mrrc_policy (KEEP: unchanged); out, current
 * @mode: in, enum mrrc_reg_mode (KEEP: unchanged); out, current.  Can only
 *	change while nothing is registered (EBUSY)
 * @max_pages: in, capacity in pages (0: unchanged); out, current.  A
 *	capacity below what is cached evicts down to it (EBUSY if regions in
 *	use prevent that)
 * @max_regions: in, limit on cached regions (0: unchanged); out, current
 * @resort_pct: in, MRE resorting section, % of cached pages at the bottom
 *	of the stack (0: unchanged, 1..100); out, current
 * @evict_pct: in, MRE eviction segment, % of @max_pages freed per round,
 *	and the most gdsf-batch frees beyond the need (0: unchanged,
 *	1..100); out, current
 * @reg_ns_per_page: model a, ns (0: unchanged); out, current
 * @reg_ns_per_op: model b, ns (0: unchanged); out, current
 * @dereg_ns_per_page: model a', ns (0: unchanged); out, current
 * @dereg_ns_per_op: model b', ns per batch (0: unchanged); out, current
 * @dereg_ns_per_region: model c', ns per region of a batch (0: unchanged;
 *	the default is 0, the papers' model, where a batch costs b' however
 *	many regions it holds); out, current.  Was __reserved (must be 0)
 *
 * The five costs start as the papers' figures.  In the modes that register
 * for real the cache measures them (a' is then 0), until a caller changes
 * any of them without MRRC_CACHE_MEASURE_COSTS; a figure equal to the
 * current one changes nothing (Documentation/cache.rst, "Cost model").
 */
struct mrrc_cache_config {
	__u32 size;
	__u32 flags;
	__u32 policy;
	__u32 mode;
	__aligned_u64 max_pages;
	__u32 max_regions;
	__u32 resort_pct;
	__u32 evict_pct;
	__u32 reg_ns_per_page;
	__u32 reg_ns_per_op;
	__u32 dereg_ns_per_page;
	__u32 dereg_ns_per_op;
	__u32 dereg_ns_per_region;
};

/*
 * struct mrrc_cache_config.flags.  In: measure the costs (the five figures
 * are ignored); from the current figures if they were not measured.
 * Out: never set.
 */
#define MRRC_CACHE_MEASURE_COSTS	_BITUL(0)
/* Out only (ignored in): the costs are being measured. */
#define MRRC_CACHE_COSTS_MEASURED	_BITUL(1)

/*
 * Access rights.  MRRC_IOC_REG takes LOCAL_WRITE only (part of the cache
 * key); the REMOTE_* rights are what MRRC_IOC_EXPORT grants a peer.
 */
#define MRRC_ACCESS_LOCAL_WRITE		_BITUL(0)
#define MRRC_ACCESS_REMOTE_WRITE	_BITUL(1)
#define MRRC_ACCESS_REMOTE_READ		_BITUL(2)
#define MRRC_ACCESS_REMOTE_ATOMIC	_BITUL(3)
#define MRRC_ACCESS_ALL			0xfU

/* Per-request flags of struct mrrc_reg_req. */
/* Release at once: no handle, the registration stays cached. */
#define MRRC_REG_RELEASE		_BITUL(0)

/* How a request was served (struct mrrc_reg_req.result). */
enum mrrc_reg_result {
	MRRC_RESULT_EXACT = 1,	/* one cached region, exactly */
	MRRC_RESULT_SUBSET = 2,	/* inside one cached region */
	MRRC_RESULT_SPAN = 3,	/* covered by several cached regions */
	MRRC_RESULT_OVERLAP = 4,	/* partly cached: the rest registered */
	MRRC_RESULT_MISS = 5,	/* nothing cached: registered whole */
};

/**
 * struct mrrc_reg_req - one registration request of MRRC_IOC_REG
 * @addr: in, start of the range, a user virtual address
 * @length: in, bytes, > 0
 * @access: in, 0 or MRRC_ACCESS_LOCAL_WRITE.  The REMOTE_* rights are
 *	refused (EINVAL): a cached registration's key never leaves the
 *	host; peers get keys from an operation's exposure or from
 *	MRRC_IOC_EXPORT
 * @flags: in, MRRC_REG_*
 * @handle: out, names the registration for MRRC_IOC_RELEASE (0 with
 *	MRRC_REG_RELEASE)
 * @result: out, enum mrrc_reg_result
 * @seg_index: out, index of the request's first segment in mrrc_reg.segs
 * @nsegs: out, number of segments, in address order
 * @status: out, 0 or the negative errno that stopped the batch here
 * @__reserved: must be 0
 */
struct mrrc_reg_req {
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 access;
	__u32 flags;
	__u32 handle;
	__u32 result;
	__u32 seg_index;
	__u32 nsegs;
	__s32 status;
	__u32 __reserved;
};

/**
 * struct mrrc_seg - one segment of a registration: use it as one SGE
 * @addr: first byte
 * @length: bytes
 * @lkey: local key (0 in MRRC_IOC_EXPORT's segments)
 * @rkey: remote key: from MRRC_IOC_EXPORT, the key peers use; from
 *	MRRC_IOC_REG, equal to @lkey and of no use to a peer (a cached
 *	registration has no remote rights)
 */
struct mrrc_seg {
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 lkey;
	__u32 rkey;
};

/**
 * struct mrrc_reg - MRRC_IOC_REG: make user memory RDMA-usable, many
 *	requests per call
 * @size: sizeof(struct mrrc_reg)
 * @flags: must be 0
 * @count: in, number of requests in @reqs
 * @req_size: in, sizeof(struct mrrc_reg_req) as user space knows it
 * @reqs: in/out, user pointer to the requests
 * @seg_size: in, sizeof(struct mrrc_seg) as user space knows it
 * @seg_count: in, room in @segs; out, segments written
 * @segs: out, user pointer to the segment array (may be 0 if every
 *	request has MRRC_REG_RELEASE and @seg_count is 0)
 * @done: out, requests completed
 * @__reserved: must be 0
 *
 * Requests are served in order.  The first one that fails stops the batch:
 * its status is set, @done is its index, the ioctl fails with its error and
 * requests [0, @done) stay registered with their handles.
 */
struct mrrc_reg {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 req_size;
	__aligned_u64 reqs;
	__u32 seg_size;
	__u32 seg_count;
	__aligned_u64 segs;
	__u32 done;
	__u32 __reserved;
};

/**
 * struct mrrc_release - MRRC_IOC_RELEASE: give registrations back
 * @size: sizeof(struct mrrc_release)
 * @flags: must be 0
 * @count: in, number of handles
 * @done: out, handles released; the first unknown handle stops the batch
 * @handles: in, user pointer to __u32 handles
 *
 * Released regions stay cached (policies mre and lru) or are deregistered
 * at once (policy none).
 */
struct mrrc_release {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 done;
	__aligned_u64 handles;
};

/**
 * struct mrrc_flush - MRRC_IOC_FLUSH: deregister every cached region no
 *	handle uses, in one batch, and finish pending invalidations
 * @size: sizeof(struct mrrc_flush)
 * @flags: must be 0
 * @regions: out, regions deregistered
 * @__reserved: must be 0
 */
struct mrrc_flush {
	__u32 size;
	__u32 flags;
	__u32 regions;
	__u32 __reserved;
};

/* struct mrrc_cache_stats.flags */
/* Sum over every context of the module (closed ones included); no bind needed. */
#define MRRC_STATS_GLOBAL		_BITUL(0)

/**
 * struct mrrc_cache_stats - MRRC_IOC_CACHE_STATS: the context's counters,
 *	or with MRRC_STATS_GLOBAL in @flags the module's
 *
 * All members after @flags are out.  Counters count since bind (or, global,
 * since the module was loaded); "now" members are gauges.
 */
struct mrrc_cache_stats {
	__u32 size;
	__u32 flags;
	__aligned_u64 requests;		/* registration requests served */
	__aligned_u64 hit_exact;
	__aligned_u64 hit_subset;
	__aligned_u64 hit_span;
	__aligned_u64 overlap;
	__aligned_u64 miss;
	__aligned_u64 registrations;	/* regions registered */
	__aligned_u64 reg_pages;
	__aligned_u64 deregistrations;	/* regions deregistered */
	__aligned_u64 dereg_pages;
	__aligned_u64 dereg_batches;	/* deregistration calls */
	__aligned_u64 max_batch;	/* largest batch, in regions */
	__aligned_u64 evictions;	/* regions evicted for space */
	__aligned_u64 eviction_rounds;
	__aligned_u64 invalidations;	/* regions dropped by the mm notifier */
	__aligned_u64 cached_regions;	/* now */
	__aligned_u64 cached_pages;	/* now */
	__aligned_u64 pinned_pages;	/* now, evicted ones until invalidated */
	__aligned_u64 inuse_regions;	/* now: referenced by handles */
	__aligned_u64 handles;		/* now */
	__aligned_u64 model_cost_ns;	/* MRRC_MODE_MODEL: total cost */
	__aligned_u64 mre_recency;	/* MRE r, 32.32 fixed point */
	/* MRRC_MODE_FAST: the context's FRWR pools */
	__aligned_u64 pool_mrs;		/* now: MRs allocated, free + in use */
	__aligned_u64 pool_free;	/* now: MRs ready in the pools */
	__aligned_u64 pool_hits;	/* registrations served from a pool */
	__aligned_u64 pool_misses;	/* pool empty: MR allocated inline */
	__aligned_u64 pool_refills;	/* MRs added by the background refill */
	__aligned_u64 pool_aged;	/* idle MRs freed by aging */
	__aligned_u64 reg_wrs;		/* IB_WR_REG_MR posted */
	__aligned_u64 inv_wrs;		/* IB_WR_LOCAL_INV posted */
	__aligned_u64 inv_chains;	/* LOCAL_INV chains (one signalled WR each) */
	__aligned_u64 qp_resets;	/* registration QP recovered from an error */
	__aligned_u64 fast_fallbacks;	/* regions too large: ordinary registration */
	__aligned_u64 caches;		/* global: contexts with a cache now */
	/* data-path ranges in more cached pieces than SGEs: registered whole */
	__aligned_u64 whole_ranges;
	/* byte-exact remote exposures of RECV and STCRW ranges */
	__aligned_u64 exposures;	/* exposure MRs registered */
	__aligned_u64 exposed;		/* now: exposure MRs with a live key */
	__aligned_u64 expo_ordinary;	/* of @exposures: by ib_reg_user_mr() */
	/* registration chains lost: no completion in 30 s (QP restarted) */
	__aligned_u64 reg_timeouts;
	/* MRRC_IOC_EXPORT (their ranges count in @exposures and @exposed) */
	__aligned_u64 exports;		/* exports made */
	__aligned_u64 exported;		/* now: exports not yet revoked */
	__aligned_u64 export_bytes;	/* now: bytes they expose */
	/* mm notifier callbacks that kept a region (fork, mprotect, ...) */
	__aligned_u64 notifier_kept;
	/*
	 * Data-path misses whose IB_WR_REG_MR went on the connection's own
	 * queue pair ahead of the operation, not waited for (module
	 * parameter chain_reg); requests that met such a region of another
	 * connection still registering and registered their range
	 * privately, uncached, instead of waiting; and REG_MRs that failed
	 * or could not be posted (the region dropped)
	 */
	__aligned_u64 reg_chained;
	__aligned_u64 reg_chain_uncached;
	__aligned_u64 reg_chain_failures;
	/* RECV and STCRW exposures whose REG_MR went the same way */
	__aligned_u64 expo_chained;
	/*
	 * Hits (counted in @hit_exact or @hit_subset too) served without
	 * the cache's lock (module parameter lockless_hit)
	 */
	__aligned_u64 hit_unlocked;
	/*
	 * Policy gdsf-batch: regions a round evicted beyond what was needed
	 * that were asked for again before the next round
	 */
	__aligned_u64 evicted_early;
	/*
	 * Policy gdsf-batch: the pages its last round set out to free beyond
	 * the need (the segment it sizes by what batching earns); 0 in sums,
	 * so also for a context with isolated connections
	 */
	__aligned_u64 evict_segment;
};

/* ---- connections and the data path (MRRC_FEATURE_DATA) ---------------- */

/**
 * struct mrrc_addr - an IP address and port of an RDMA-capable netdev
 * @family: AF_INET or AF_INET6; 0 in an optional address means "any"
 * @port: port in host byte order (the RDMA CM port space is TCP's)
 * @scope_id: IPv6 scope (interface index), 0 otherwise
 * @addr: 4 bytes (AF_INET) or 16 bytes (AF_INET6), network byte order;
 *	unused bytes must be zero
 */
struct mrrc_addr {
	__u16 family;
	__u16 port;
	__u32 scope_id;
	__u8 addr[16];
};

/*
 * An isolated connection has a protection domain and a registration cache
 * of its own: no key of it, local or remote, works on another queue pair,
 * and no key of the context's works on it.  Its operations cannot name
 * MRRC_IOC_REG handles (those are the context's cache's).
 */
#define MRRC_CONN_ISOLATED	_BITUL(0)

/**
 * struct mrrc_listen - MRRC_IOC_LISTEN: accept connections on an address
 * @size: sizeof(struct mrrc_listen)
 * @flags: 0 or MRRC_CONN_ISOLATED (every connection it accepts is)
 * @addr: in, local address (may be the wildcard); port 0 picks one
 * @backlog: in, connection requests the listener holds before they are
 *	accepted or rejected (0: 128; at most 4096, more is taken as 4096);
 *	further requests are refused (the peer sees MRRC_EVENT_REJECTED)
 * @id: out, the listener's id, for MRRC_IOC_DESTROY and CONN_QUERY
 * @user_data: in, copied to wr_id of the listener's CONNECT_REQUEST events
 *
 * Connection requests arrive as MRRC_EVENT_CONNECT_REQUEST completions
 * naming a new connection, which is then accepted or rejected.  Requests
 * that arrive on another device than the context's are rejected.
 */
struct mrrc_listen {
	__u32 size;
	__u32 flags;
	struct mrrc_addr addr;
	__u32 backlog;
	__u32 id;
	__aligned_u64 user_data;
};

/**
 * struct mrrc_connect - MRRC_IOC_CONNECT: start connecting to a listener
 * @size: sizeof(struct mrrc_connect)
 * @flags: 0 or MRRC_CONN_ISOLATED
 * @dst: in, the peer's address
 * @src: in, local address to use; family 0 lets routing choose
 * @timeout_ms: in, address and route resolution timeout (0: 2000 ms)
 * @id: out, the connection's id
 * @user_data: in, copied to wr_id of the connection's events
 *
 * Returns at once; MRRC_EVENT_ESTABLISHED, or an error event, follows.
 */
struct mrrc_connect {
	__u32 size;
	__u32 flags;
	struct mrrc_addr dst;
	struct mrrc_addr src;
	__u32 timeout_ms;
	__u32 id;
	__aligned_u64 user_data;
};

/**
 * struct mrrc_conn_cmd - MRRC_IOC_ACCEPT, REJECT, DISCONNECT and DESTROY
 * @size: sizeof(struct mrrc_conn_cmd)
 * @flags: must be 0
 * @id: in, a connection (or, for DESTROY, a listener)
 * @__reserved: must be 0
 * @user_data: in, ACCEPT: copied to wr_id of the connection's events;
 *	must be 0 for the other commands
 */
struct mrrc_conn_cmd {
	__u32 size;
	__u32 flags;
	__u32 id;
	__u32 __reserved;
	__aligned_u64 user_data;
};

/* Operations (struct mrrc_wr.opcode) and completions (mrrc_cqe.opcode). */
enum mrrc_opcode {
	MRRC_OP_WRITE = 1,	/* RDMA WRITE to remote_addr/rkey */
	MRRC_OP_WRITE_IMM = 2,	/* RDMA WRITE with immediate @imm */
	MRRC_OP_READ = 3,	/* RDMA READ from remote_addr/rkey */
	MRRC_OP_SEND = 4,	/* into the peer's oldest RECV */
	MRRC_OP_RECV = 5,	/* a buffer for one peer SEND */
	MRRC_OP_FETCH_ADD = 6,	/* 8 bytes at remote_addr += compare_add */
	MRRC_OP_CMP_SWAP = 7,	/* if == compare_add then = swap */
	MRRC_OP_CRW = 8,	/* conditional write, held until STCRW @tag */
	MRRC_OP_STCRW = 9,	/* expose the range for the peer's CRW @tag */
	MRRC_OP_LAST = MRRC_OP_STCRW,
	/* completion-only opcodes */
	MRRC_OP_RECV_IMM = 64,	/* the peer's WRITE_IMM landed: @imm */
	MRRC_OP_EVENT = 65,	/* a connection event: mrrc_cqe.event */
};

/* struct mrrc_wr.flags */
/* Local memory is MRRC_IOC_REG handle @handle; @addr/@len lie inside it. */
#define MRRC_WR_HANDLE		_BITUL(0)

/**
 * struct mrrc_wr - one operation of MRRC_IOC_POST
 * @wr_id: in, returned in the operation's completion
 * @conn: in, connection id
 * @opcode: in, enum mrrc_opcode up to MRRC_OP_LAST
 * @flags: in, MRRC_WR_*
 * @__reserved: must be 0
 * @addr: in, local range: first byte (user virtual address)
 * @len: in, local range: bytes, 1 .. 2^31 (8 for atomics, 8-aligned)
 * @handle: in, with MRRC_WR_HANDLE: a handle of MRRC_IOC_REG covering
 *	the range; otherwise 0 and the range is registered through the cache
 * @imm: in, WRITE_IMM: the immediate value
 * @remote_addr: in, WRITE, WRITE_IMM, READ and atomics
 * @rkey: in, WRITE, WRITE_IMM, READ and atomics
 * @__reserved2: must be 0
 * @compare_add: in, FETCH_ADD: the addend; CMP_SWAP: the compare value
 * @swap: in, CMP_SWAP: the new value
 * @tag: in, CRW and STCRW: the tag, unique per connection and side
 * @deadline_ns: in, CRW and STCRW: CLOCK_MONOTONIC time at which a still
 *	unmatched operation completes with -ETIMEDOUT; 0 for none
 */
struct mrrc_wr {
	__aligned_u64 wr_id;
	__u32 conn;
	__u8 opcode;
	__u8 flags;
	__u16 __reserved;
	__aligned_u64 addr;
	__aligned_u64 len;
	__u32 handle;
	__u32 imm;
	__aligned_u64 remote_addr;
	__u32 rkey;
	__u32 __reserved2;
	__aligned_u64 compare_add;
	__aligned_u64 swap;
	__aligned_u64 tag;
	__aligned_u64 deadline_ns;
};

/**
 * struct mrrc_post - MRRC_IOC_POST: submit operations, many per call
 * @size: sizeof(struct mrrc_post)
 * @flags: must be 0
 * @count: in, operations in @wrs (at most 65536)
 * @wr_size: in, sizeof(struct mrrc_wr) as user space knows it
 * @wrs: in, user pointer to the operations
 * @done: out, operations accepted
 * @__reserved: must be 0
 *
 * Operations are accepted in order; every accepted one completes exactly
 * once through MRRC_IOC_POLL.  The first one that cannot be accepted stops
 * the batch: @done is its index and the ioctl fails with its error
 * (EAGAIN when the connection has MRRC_CONN_MAX_OPS operations
 * outstanding; nothing is lost, post it again later).
 */
struct mrrc_post {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 wr_size;
	__aligned_u64 wrs;
	__u32 done;
	__u32 __reserved;
};

/* Operations one connection may have outstanding (posted, not polled). */
#define MRRC_CONN_MAX_OPS	4096

/* Connection events (struct mrrc_cqe.event with opcode MRRC_OP_EVENT). */
enum mrrc_event {
	MRRC_EVENT_CONNECT_REQUEST = 1,	/* @conn new, @tag the listener */
	MRRC_EVENT_ESTABLISHED = 2,
	MRRC_EVENT_REJECTED = 3,	/* status -ECONNREFUSED */
	MRRC_EVENT_UNREACHABLE = 4,	/* status: why */
	MRRC_EVENT_DISCONNECTED = 5,	/* the peer or we disconnected */
	MRRC_EVENT_DEVICE_REMOVAL = 6,	/* the device went away */
	MRRC_EVENT_ERROR = 7,		/* a transport error broke it */
};

/**
 * struct mrrc_cqe - one completion written by MRRC_IOC_POLL
 * @wr_id: the operation's wr_id; for events the connection's user_data
 *	(for CONNECT_REQUEST the listener's)
 * @conn: connection id
 * @opcode: enum mrrc_opcode
 * @event: MRRC_OP_EVENT: enum mrrc_event; otherwise 0
 * @__reserved: 0
 * @status: 0, or a negative errno (see Documentation/abi.rst)
 * @byte_len: bytes moved: the write, read or send length; for RECV the
 *	bytes received; for STCRW the bytes the peer wrote; for
 *	RECV_IMM the length of the peer's write
 * @imm: RECV_IMM: the immediate value
 * @__reserved2: 0
 * @tag: CRW, STCRW: the tag; CONNECT_REQUEST: the listener's id
 */
struct mrrc_cqe {
	__aligned_u64 wr_id;
	__u32 conn;
	__u8 opcode;
	__u8 event;
	__u16 __reserved;
	__s32 status;
	__u32 byte_len;
	__u32 imm;
	__u32 __reserved2;
	__aligned_u64 tag;
};

/**
 * struct mrrc_poll - MRRC_IOC_POLL: harvest completions, many per call
 * @size: sizeof(struct mrrc_poll)
 * @flags: must be 0
 * @max: in, room in @cqes (at most 65536)
 * @cqe_size: in, sizeof(struct mrrc_cqe) as user space knows it
 * @cqes: out, user pointer to the completion array
 * @count: out, completions written; 0 when none is ready
 * @__reserved: must be 0
 *
 * Never blocks: wait with poll(2) or epoll on the file, which is readable
 * while completions are ready.
 */
struct mrrc_poll {
	__u32 size;
	__u32 flags;
	__u32 max;
	__u32 cqe_size;
	__aligned_u64 cqes;
	__u32 count;
	__u32 __reserved;
};

/**
 * struct mrrc_cancel - MRRC_IOC_CANCEL: cancel an unmatched CRW or STCRW
 * @size: sizeof(struct mrrc_cancel)
 * @flags: must be 0
 * @conn: in, connection id
 * @opcode: in, MRRC_OP_CRW or MRRC_OP_STCRW
 * @tag: in, the operation's tag
 *
 * The operation completes with -ECANCELED.  ENOENT if no such operation
 * is waiting (it may have matched already).
 */
struct mrrc_cancel {
	__u32 size;
	__u32 flags;
	__u32 conn;
	__u32 opcode;
	__aligned_u64 tag;
};

/* Most connections one export is for, and most segments it has. */
#define MRRC_EXPORT_CONNS	16
#define MRRC_EXPORT_SEGS	8

/**
 * struct mrrc_export - MRRC_IOC_EXPORT: let peers reach a range until
 *	it is revoked
 * @size: sizeof(struct mrrc_export)
 * @flags: must be 0
 * @addr: in, the range's first byte
 * @len: in, its length in bytes, 1 to 2^31
 * @access: in, MRRC_ACCESS_REMOTE_READ, _WRITE and _ATOMIC in any
 *	combination; 0 means MRRC_ACCESS_REMOTE_READ.  LOCAL_WRITE is
 *	refused (local rights are the module's business).
 * @nconns: in, entries of @conns, 1 to MRRC_EXPORT_CONNS
 * @conns: in, user pointer to the ids (__u32) of the connections of this
 *	context the export is for; each must be established
 * @id: out, the export, for MRRC_IOC_UNEXPORT
 * @nsegs: out, entries of @segs: one per cached region the range lies in
 * @segs: out, the range as peers address it: each segment's addr, length
 *	and rkey (lkey is 0).  Together they are exactly [@addr, @addr +
 *	@len).
 *
 * The only way a key outlives an operation: RECV and STCRW expose their
 * bytes until their completion is polled; an export exposes its bytes
 * until MRRC_IOC_UNEXPORT, until every connection it is for has been
 * destroyed (MRRC_IOC_DESTROY, or the context closing), or until the
 * device goes away.  The memory must be writable by the process (it is
 * pinned for writing, so that later writes are what peers read).  Each
 * segment is a registration of its own (counted in
 * max_exposed: EAGAIN beyond).  All connections of a context share its
 * protection domain, so the device lets any of them use the key; what
 * @conns decides is how long it lives.
 */
struct mrrc_export {
	__u32 size;
	__u32 flags;
	__aligned_u64 addr;
	__aligned_u64 len;
	__u32 access;
	__u32 nconns;
	__aligned_u64 conns;
	__u32 id;
	__u32 nsegs;
	struct mrrc_seg segs[MRRC_EXPORT_SEGS];
};

/**
 * struct mrrc_unexport - MRRC_IOC_UNEXPORT: revoke an export
 * @size: sizeof(struct mrrc_unexport)
 * @flags: must be 0
 * @id: in, from MRRC_IOC_EXPORT
 * @__reserved: must be 0
 *
 * When it returns no key of the export reaches memory any more (the
 * device has invalidated or destroyed its registrations).  ENOENT for an
 * id that is not a live export of this context.
 */
struct mrrc_unexport {
	__u32 size;
	__u32 flags;
	__u32 id;
	__u32 __reserved;
};

enum mrrc_conn_state {
	MRRC_CONN_LISTENING = 1,
	MRRC_CONN_CONNECTING = 2,	/* resolving or waiting for the peer */
	MRRC_CONN_REQUESTED = 3,	/* incoming: waiting for ACCEPT */
	MRRC_CONN_ESTABLISHED = 4,
	MRRC_CONN_CLOSED = 5,		/* disconnected, rejected or failed */
};

/**
 * struct mrrc_conn_query - MRRC_IOC_CONN_QUERY: a connection's state
 * @size: sizeof(struct mrrc_conn_query)
 * @flags: must be 0
 * @id: in, connection or listener id
 * @state: out, enum mrrc_conn_state
 * @local: out, local address (the bound one for a listener)
 * @peer: out, the peer's address; zero for a listener
 * @ops: out, operations outstanding (posted, not polled)
 * @credits: out, receive buffers of the peer module this side may use
 * @posted: out, operations accepted since the connection was made
 * @crw_matched: out, CRWs posted from the completion path on a match
 * @ctrl_sent: out, control messages sent to the peer module
 * @ctrl_recv: out, control messages received from it
 * @keepalives: out, keepalive probes sent
 * @withdrawn: out, timed-out or cancelled STCRWs the peer confirmed it
 *	forgot
 * @withdraw_lost: out, ones that completed without that confirmation
 *	(no answer in 5 s, no memory to ask, or the connection closed)
 * @refused: out, a listener: connection requests refused because they
 *	came on another device or without the module's private data, its
 *	backlog was full or the context had max_conns connections
 * @remote_inv: out, exposures of RECVs and STCRWs the peer ended with its
 *	message (IB_WR_SEND_WITH_INV), so that this side posted no
 *	invalidation for them
 * @conn_flags: out, MRRC_CONN_ISOLATED if it is (a listener: if the
 *	connections it accepts are)
 */
struct mrrc_conn_query {
	__u32 size;
	__u32 flags;
	__u32 id;
	__u32 state;
	struct mrrc_addr local;
	struct mrrc_addr peer;
	__u32 ops;
	__u32 credits;
	__aligned_u64 posted;
	__aligned_u64 crw_matched;
	__aligned_u64 ctrl_sent;
	__aligned_u64 ctrl_recv;
	__aligned_u64 keepalives;
	__aligned_u64 withdrawn;
	__aligned_u64 withdraw_lost;
	__aligned_u64 refused;
	__aligned_u64 remote_inv;
	__aligned_u64 conn_flags;
};

/**
 * struct mrrc_ctx_info - one context, as written by MRRC_IOC_CTX_LIST
 * @id: the context's id, unique while it is open; MRRC_IOC_CONN_LIST
 *	takes it
 * @pid: the process that opened it, in the caller's PID namespace; 0 if
 *	it is not visible there
 * @uid: the opener's effective uid, in the caller's user namespace
 * @dev_index: the device it is bound to; MRRC_DEV_NONE if unbound or its
 *	device was removed
 * @conns: connections and listeners
 * @ops: operations posted and not yet polled
 * @exports: live exports (MRRC_IOC_EXPORT)
 * @__reserved: 0
 * @cached_regions: regions in its registration cache
 * @cached_pages: pages they cover
 * @pinned_pages: pages it keeps pinned
 * @requests: registration requests the cache has served
 * @hits: requests served without registering anything (exact, subset and
 *	span hits)
 */
struct mrrc_ctx_info {
	__u32 id;
	__u32 pid;
	__u32 uid;
	__u32 dev_index;
	__u32 conns;
	__u32 ops;
	__u32 exports;
	__u32 __reserved;
	__aligned_u64 cached_regions;
	__aligned_u64 cached_pages;
	__aligned_u64 pinned_pages;
	__aligned_u64 requests;
	__aligned_u64 hits;
};

#define MRRC_DEV_NONE	0xffffffffU

/**
 * struct mrrc_ctx_list - MRRC_IOC_CTX_LIST: the open contexts
 * @size: sizeof(struct mrrc_ctx_list)
 * @flags: must be 0
 * @entry_size: size of one element of @entries as user space knows it;
 *	at least the first revision of struct mrrc_ctx_info.  A smaller
 *	kernel structure is zero-padded, a larger one truncated.
 * @count: in, number of elements @entries has room for (may be 0); out,
 *	number of contexts the caller may see.  min(in, out) are written.
 * @entries: user pointer to the array (may be 0 when @count is 0)
 *
 * The caller sees the contexts opened with its effective uid, its own
 * included; with CAP_SYS_ADMIN, every context.  Contexts come in the order
 * of their ids; one that closes meanwhile is left out.
 */
struct mrrc_ctx_list {
	__u32 size;
	__u32 flags;
	__u32 entry_size;
	__u32 count;
	__aligned_u64 entries;
};

/**
 * struct mrrc_conn_list - MRRC_IOC_CONN_LIST: a context's connections
 * @size: sizeof(struct mrrc_conn_list)
 * @flags: must be 0
 * @ctx: in, a context id of MRRC_IOC_CTX_LIST; 0 means the caller's own
 * @entry_size: size of one element of @entries: at least the first
 *	revision of struct mrrc_conn_query, whose members each element has
 *	(@size is the kernel's, @flags 0)
 * @count: in, room in @entries; out, number of connections and listeners
 * @__reserved: 0
 * @entries: user pointer to the array
 *
 * ENOENT for a context that does not exist or that the caller may not see
 * (the rule of MRRC_IOC_CTX_LIST).  Connections come in the order of their
 * ids.
 */
struct mrrc_conn_list {
	__u32 size;
	__u32 flags;
	__u32 ctx;
	__u32 entry_size;
	__u32 count;
	__u32 __reserved;
	__aligned_u64 entries;
};

#define MRRC_IOC_QUERY		_IO(MRRC_TYPE, MRRC_CMD_QUERY)
#define MRRC_IOC_DEV_LIST	_IO(MRRC_TYPE, MRRC_CMD_DEV_LIST)
#define MRRC_IOC_PORT_QUERY	_IO(MRRC_TYPE, MRRC_CMD_PORT_QUERY)
#define MRRC_IOC_BIND		_IO(MRRC_TYPE, MRRC_CMD_BIND)
#define MRRC_IOC_CTX_QUERY	_IO(MRRC_TYPE, MRRC_CMD_CTX_QUERY)
#define MRRC_IOC_CACHE_CONFIG	_IO(MRRC_TYPE, MRRC_CMD_CACHE_CONFIG)
#define MRRC_IOC_REG		_IO(MRRC_TYPE, MRRC_CMD_REG)
#define MRRC_IOC_RELEASE	_IO(MRRC_TYPE, MRRC_CMD_RELEASE)
#define MRRC_IOC_FLUSH		_IO(MRRC_TYPE, MRRC_CMD_FLUSH)
#define MRRC_IOC_CACHE_STATS	_IO(MRRC_TYPE, MRRC_CMD_CACHE_STATS)
#define MRRC_IOC_LISTEN		_IO(MRRC_TYPE, MRRC_CMD_LISTEN)
#define MRRC_IOC_CONNECT	_IO(MRRC_TYPE, MRRC_CMD_CONNECT)
#define MRRC_IOC_ACCEPT		_IO(MRRC_TYPE, MRRC_CMD_ACCEPT)
#define MRRC_IOC_REJECT		_IO(MRRC_TYPE, MRRC_CMD_REJECT)
#define MRRC_IOC_DISCONNECT	_IO(MRRC_TYPE, MRRC_CMD_DISCONNECT)
#define MRRC_IOC_DESTROY	_IO(MRRC_TYPE, MRRC_CMD_DESTROY)
#define MRRC_IOC_POST		_IO(MRRC_TYPE, MRRC_CMD_POST)
#define MRRC_IOC_POLL		_IO(MRRC_TYPE, MRRC_CMD_POLL)
#define MRRC_IOC_CANCEL		_IO(MRRC_TYPE, MRRC_CMD_CANCEL)
#define MRRC_IOC_CONN_QUERY	_IO(MRRC_TYPE, MRRC_CMD_CONN_QUERY)
#define MRRC_IOC_EXPORT		_IO(MRRC_TYPE, MRRC_CMD_EXPORT)
#define MRRC_IOC_UNEXPORT	_IO(MRRC_TYPE, MRRC_CMD_UNEXPORT)
#define MRRC_IOC_CTX_LIST	_IO(MRRC_TYPE, MRRC_CMD_CTX_LIST)
#define MRRC_IOC_CONN_LIST	_IO(MRRC_TYPE, MRRC_CMD_CONN_LIST)

#endif /* _UAPI_MRRC_ABI_H */
