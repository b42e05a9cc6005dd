// SPDX-License-Identifier: GPL-2.0-only
/* mrrc(8) - formatting helpers. */
#include <arpa/inet.h>
#include <endian.h>
#include <inttypes.h>
#include <math.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "mrrc_tool.h"

#define STR_OR(tbl, i, dflt) \
	((i) < ARRAY_SIZE(tbl) && (tbl)[i] ? (tbl)[i] : (dflt))

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

const char *mrrc_conn_state_str(char buf[12], uint32_t state)
{
	static const char *const s[] = {
		[MRRC_CONN_LISTENING] = "LISTENING",
		[MRRC_CONN_CONNECTING] = "CONNECTING",
		[MRRC_CONN_REQUESTED] = "REQUESTED",
		[MRRC_CONN_ESTABLISHED] = "ESTABLISHED",
		[MRRC_CONN_CLOSED] = "CLOSED",
	};

	if (state < ARRAY_SIZE(s) && s[state])
		return s[state];
	snprintf(buf, 12, "%u", state);
	return buf;
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

void mrrc_fmt_fw_ver(char buf[24], uint64_t fw_ver)
{
	snprintf(buf, 24, "%u.%u.%04u", (unsigned int)(fw_ver >> 32),
		 (unsigned int)(fw_ver >> 16) & 0xffff,
		 (unsigned int)fw_ver & 0xffff);
}

const char *mrrc_fmt_ip(char buf[INET6_ADDRSTRLEN], const struct mrrc_addr *a)
{
	if (a->family != AF_INET && a->family != AF_INET6)
		return NULL;
	return inet_ntop(a->family, a->addr, buf, INET6_ADDRSTRLEN);
}

void mrrc_fmt_addr(char buf[MRRC_ADDR_STRLEN], const struct mrrc_addr *a)
{
	char ip[INET6_ADDRSTRLEN], scope[IF_NAMESIZE + 1] = "";
	char ifname[IF_NAMESIZE];

	if (!mrrc_fmt_ip(ip, a)) {
		if (a->family || a->port)
			snprintf(buf, MRRC_ADDR_STRLEN, "%s:%u",
				 a->family ? "?" : "*", a->port);
		else
			snprintf(buf, MRRC_ADDR_STRLEN, "*");
		return;
	}
	if (a->family == AF_INET) {
		snprintf(buf, MRRC_ADDR_STRLEN, "%s:%u", ip, a->port);
		return;
	}
	if (a->scope_id && if_indextoname(a->scope_id, ifname))
		snprintf(scope, sizeof(scope), "%%%s", ifname);
	else if (a->scope_id)
		snprintf(scope, sizeof(scope), "%%%u", a->scope_id);
	snprintf(buf, MRRC_ADDR_STRLEN, "[%s%s]:%u", ip, scope, a->port);
}

/* Length of the well-formed UTF-8 sequence at @s, 0 if there is none. */
static int utf8_len(const unsigned char *s)
{
	uint32_t cp;
	int n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	cp = s[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* the NUL included */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* No overlong forms, surrogates or code points past U+10FFFF. */
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

void mrrc_json_escape(FILE *out, const char *str)
{
	static const char special[] = "\"\\\b\f\n\r\t", letter[] = "\"\\bfnrt";
	const unsigned char *s = (const unsigned char *)str;
	const char *e;
	int n;

	fputc('"', out);
	while (*s) {
		e = strchr(special, *s);
		n = utf8_len(s);
		if (e)
			fprintf(out, "\\%c", letter[e - special]);
		else if (!n || *s < 0x20 || *s == 0x7f)
			fprintf(out, "\\u%04x", *s);
		else
			fwrite(s, 1, n, out);
		s += n ? n : 1;
	}
	fputc('"', out);
}

static void json_newline(struct mrrc_json *j)
{
	if (j->pretty)
		fprintf(j->out, "\n%*s", (int)j->depth * 4, "");
}

/* A comma if needed, the indentation, the key. */
static void json_member(struct mrrc_json *j, const char *key)
{
	if (j->sep)
		fputc(',', j->out);
	if (j->depth)
		json_newline(j);
	if (key) {
		mrrc_json_escape(j->out, key);
		fputs(j->pretty ? ": " : ":", j->out);
	}
	j->sep = true;
}

void mrrc_json_open(struct mrrc_json *j, const char *key, char bracket)
{
	json_member(j, key);
	fputc(bracket, j->out);
	j->depth++;
	j->sep = false;
}

void mrrc_json_close(struct mrrc_json *j, char bracket)
{
	j->depth--;
	if (j->sep)
		json_newline(j);
	fputc(bracket, j->out);
	/* The next top-level value is a new line of JSON Lines. */
	j->sep = j->depth > 0;
	if (!j->depth)
		fputc('\n', j->out);
}

void mrrc_json_u64(struct mrrc_json *j, const char *key, uint64_t v)
{
	json_member(j, key);
	fprintf(j->out, "%" PRIu64, v);
}

/* Rates and ratios; counters are never doubles. */
void mrrc_json_double(struct mrrc_json *j, const char *key, double v)
{
	json_member(j, key);
	if (isfinite(v))
		fprintf(j->out, "%.3f", v);
	else
		fputs("null", j->out);
}

void mrrc_json_str(struct mrrc_json *j, const char *key, const char *s)
{
	json_member(j, key);
	mrrc_json_escape(j->out, s);
}
