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
	MRRC_CMD_LAST = MRRC_CMD_CTX_QUERY,
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

#define MRRC_IOC_QUERY		_IO(MRRC_TYPE, MRRC_CMD_QUERY)
#define MRRC_IOC_DEV_LIST	_IO(MRRC_TYPE, MRRC_CMD_DEV_LIST)
#define MRRC_IOC_PORT_QUERY	_IO(MRRC_TYPE, MRRC_CMD_PORT_QUERY)
#define MRRC_IOC_BIND		_IO(MRRC_TYPE, MRRC_CMD_BIND)
#define MRRC_IOC_CTX_QUERY	_IO(MRRC_TYPE, MRRC_CMD_CTX_QUERY)

#endif /* _UAPI_MRRC_ABI_H */
