// SPDX-License-Identifier: GPL-2.0-only
/* mrrc(8) - formatting helpers. */
#include <endian.h>
#include <stdio.h>

#include "mrrc_tool.h"

#define STR_OR(tbl, i, dflt) \
	((i) < sizeof(tbl) / sizeof((tbl)[0]) && (tbl)[i] ? (tbl)[i] : (dflt))

const char *mrrc_port_state_str(uint32_t state)
{
	static const char *const s[] = {
		[MRRC_PORT_NOP] = "PORT_NOP",
		[MRRC_PORT_DOWN] = "PORT_DOWN",
		[MRRC_PORT_INIT] = "PORT_INIT",
		[MRRC_PORT_ARMED] = "PORT_ARMED",
		[MRRC_PORT_ACTIVE] = "PORT_ACTIVE",
		[MRRC_PORT_ACTIVE_DEFER] = "PORT_ACTIVE_DEFER",
	};

	return STR_OR(s, state, "invalid state");
}

const char *mrrc_phys_state_str(uint32_t state)
{
	static const char *const s[] = {
		[1] = "SLEEP",
		[2] = "POLLING",
		[3] = "DISABLED",
		[4] = "PORT_CONFIGURATION_TRAINING",
		[5] = "LINK_UP",
		[6] = "LINK_ERROR_RECOVERY",
		[7] = "PHY_TEST",
	};

	return STR_OR(s, state, "invalid physical state");
}

const char *mrrc_link_layer_str(uint32_t ll)
{
	static const char *const s[] = {
		[MRRC_LINK_LAYER_UNSPECIFIED] = "Unspecified",
		[MRRC_LINK_LAYER_INFINIBAND] = "InfiniBand",
		[MRRC_LINK_LAYER_ETHERNET] = "Ethernet",
	};

	return STR_OR(s, ll, "Unknown");
}

const char *mrrc_gid_type_str(uint32_t type)
{
	static const char *const s[] = {
		[MRRC_GID_TYPE_IB] = "IB",
		[MRRC_GID_TYPE_ROCE] = "RoCE v1",
		[MRRC_GID_TYPE_ROCE_UDP_ENCAP] = "RoCE v2",
	};

	return STR_OR(s, type, "unknown");
}

const char *mrrc_atomic_cap_str(uint32_t cap)
{
	static const char *const s[] = {
		[MRRC_ATOMIC_NONE] = "ATOMIC_NONE",
		[MRRC_ATOMIC_HCA] = "ATOMIC_HCA",
		[MRRC_ATOMIC_GLOB] = "ATOMIC_GLOB",
	};

	return STR_OR(s, cap, "invalid");
}

/* IB MTU enum (1..5) to bytes, 0 if invalid. */
int mrrc_mtu_bytes(uint32_t mtu)
{
	return mtu >= 1 && mtu <= 5 ? 128 << mtu : 0;
}

void mrrc_fmt_guid(char buf[20], uint64_t guid_be)
{
	uint64_t g = be64toh(guid_be);

	snprintf(buf, 20, "%04x:%04x:%04x:%04x",
		 (unsigned int)(g >> 48) & 0xffff,
		 (unsigned int)(g >> 32) & 0xffff,
		 (unsigned int)(g >> 16) & 0xffff,
		 (unsigned int)g & 0xffff);
}

void mrrc_fmt_gid(char buf[40], const uint8_t gid[16])
{
	int i, n = 0;

	for (i = 0; i < 16; i += 2)
		n += snprintf(buf + n, 40 - n, "%s%02x%02x", i ? ":" : "",
			      gid[i], gid[i + 1]);
}
