// SPDX-License-Identifier: GPL-2.0-only
/* mrrc(8) - "mrrc info": what the module sees, like ibv_devinfo. */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mrrc_tool.h"

#define MAX_GIDS 1024
#define VALUE_COL 40	/* text: where values start, as in ibv_devinfo */

/* Where fields go: text lines indented by @tabs, or JSON members. */
struct pr {
	FILE *out;
	struct mrrc_json *j;	/* NULL: text */
	int tabs;
};

/* Text: "key:" indented, tabs up to VALUE_COL, the value. */
static void __attribute__((format(printf, 3, 4)))
pr_text(struct pr *p, const char *key, const char *fmt, ...)
{
	int col = p->tabs * 8 + (int)strlen(key) + 1;
	va_list ap;

	fprintf(p->out, "%.*s%s:", p->tabs, "\t\t", key);
	do {
		fputc('\t', p->out);
		col = (col / 8 + 1) * 8;
	} while (col < VALUE_COL);
	va_start(ap, fmt);
	vfprintf(p->out, fmt, ap);
	va_end(ap);
	fputc('\n', p->out);
}

static void pr_u64(struct pr *p, const char *key, uint64_t v)
{
	if (p->j)
		mrrc_json_u64(p->j, key, v);
	else
		pr_text(p, key, "%" PRIu64, v);
}

/* Hexadecimal in text, a number in JSON. */
static void pr_hex(struct pr *p, const char *key, int width, uint64_t v)
{
	if (p->j)
		mrrc_json_u64(p->j, key, v);
	else
		pr_text(p, key, "0x%0*" PRIx64, width, v);
}

static void pr_str(struct pr *p, const char *key, const char *s)
{
	if (p->j)
		mrrc_json_str(p->j, key, s);
	else
		pr_text(p, key, "%s", s);
}

/* JSON: "key_raw", the value as the module gave it. */
static void pr_raw(struct pr *p, const char *key, uint64_t raw)
{
	char name[32];

	snprintf(name, sizeof(name), "%s_raw", key);
	mrrc_json_u64(p->j, name, raw);
}

/* An enumeration: "NAME (raw)". */
static void pr_enum(struct pr *p, const char *key, const char *name,
		    uint32_t raw)
{
	if (!p->j) {
		pr_text(p, key, "%s (%u)", name, raw);
		return;
	}
	mrrc_json_str(p->j, key, name);
	pr_raw(p, key, raw);
}

/* An IB MTU: bytes, and the enumeration. */
static void pr_mtu(struct pr *p, const char *key, uint32_t mtu)
{
	if (!p->j) {
		pr_text(p, key, "%d (%u)", mrrc_mtu_bytes(mtu), mtu);
		return;
	}
	mrrc_json_u64(p->j, key, mrrc_mtu_bytes(mtu));
	pr_raw(p, key, mtu);
}

static void print_gid(struct pr *p, const struct mrrc_gid_entry *g)
{
	const char *type = mrrc_gid_type_str(g->gid_type);
	char gid[40], label[16], ifname[IF_NAMESIZE] = "";

	mrrc_fmt_gid(gid, g->gid);
	if (g->netdev_ifindex && !if_indextoname(g->netdev_ifindex, ifname))
		ifname[0] = '\0';
	if (p->j) {
		mrrc_json_open(p->j, NULL, '{');
		mrrc_json_u64(p->j, "index", g->index);
		mrrc_json_str(p->j, "gid", gid);
		mrrc_json_str(p->j, "type", type);
		if (g->netdev_ifindex)
			mrrc_json_u64(p->j, "ifindex", g->netdev_ifindex);
		if (*ifname)
			mrrc_json_str(p->j, "netdev", ifname);
		mrrc_json_close(p->j, '}');
		return;
	}
	snprintf(label, sizeof(label), "GID[%3u]", g->index);
	if (*ifname)
		pr_text(p, label, "%s, %s, %s", gid, type, ifname);
	else if (g->netdev_ifindex)
		pr_text(p, label, "%s, %s, ifindex %u", gid, type,
			g->netdev_ifindex);
	else
		pr_text(p, label, "%s, %s", gid, type);
}

static void print_port(int fd, struct pr *p, const struct mrrc_dev_info *d,
		       uint32_t port, bool verbose)
{
	struct mrrc_gid_entry *gids;
	struct mrrc_port_query pa;
	unsigned int n = MAX_GIDS, i;
	int ret = -ENOMEM;

	gids = calloc(n, sizeof(*gids));
	if (gids)
		ret = mrrc_port_query(fd, d->dev_index, port, &pa, gids, &n);
	if (p->j) {
		mrrc_json_open(p->j, NULL, '{');
		mrrc_json_u64(p->j, "port", port);
	}
	if (ret) {
		if (p->j)
			mrrc_json_str(p->j, "error", strerror(-ret));
		else
			fprintf(p->out, "\tport %u: query failed: %s\n", port,
				strerror(-ret));
		goto out;
	}
	if (!p->j)
		fprintf(p->out, "\tport %u:\n", port);
	p->tabs = 2;
	pr_enum(p, "state", mrrc_port_state_str(pa.state), pa.state);
	pr_enum(p, "phys_state", mrrc_phys_state_str(pa.phys_state),
		pa.phys_state);
	pr_mtu(p, "max_mtu", pa.max_mtu);
	pr_mtu(p, "active_mtu", pa.active_mtu);
	pr_str(p, "link_layer", mrrc_link_layer_str(pa.link_layer));
	if (verbose) {
		pr_u64(p, "lid", pa.lid);
		pr_u64(p, "gid_tbl_len", pa.gid_tbl_len);
		pr_u64(p, "active_speed", pa.active_speed);
		pr_u64(p, "active_width", pa.active_width);
	}
	if (n > MAX_GIDS)
		n = MAX_GIDS;
	if (p->j)
		mrrc_json_open(p->j, "gids", '[');
	for (i = 0; i < n; i++)
		print_gid(p, &gids[i]);
	if (p->j)
		mrrc_json_close(p->j, ']');
out:
	if (p->j)
		mrrc_json_close(p->j, '}');
	free(gids);
}

static void print_device(int fd, struct pr *p, const struct mrrc_dev_info *d,
			 bool verbose)
{
	char guid[20], fw[24];
	uint32_t port;

	if (p->j) {
		mrrc_json_open(p->j, NULL, '{');
		mrrc_json_str(p->j, "hca_id", d->name);
	} else {
		fprintf(p->out, "\nhca_id:\t%s\n", d->name);
	}
	p->tabs = 1;
	pr_u64(p, "dev_index", d->dev_index);
	mrrc_fmt_guid(guid, d->node_guid);
	pr_str(p, "node_guid", guid);
	mrrc_fmt_guid(guid, d->sys_image_guid);
	pr_str(p, "sys_image_guid", guid);
	pr_hex(p, "vendor_id", 4, d->vendor_id);
	pr_u64(p, "vendor_part_id", d->vendor_part_id);
	pr_u64(p, "phys_port_cnt", d->phys_port_cnt);
	pr_u64(p, "max_mr", d->max_mr);
	pr_hex(p, "max_mr_size", 0, d->max_mr_size);
	pr_u64(p, "max_fast_reg_page_list_len", d->max_fast_reg_page_list_len);
	pr_u64(p, "max_qp", d->max_qp);
	pr_u64(p, "max_qp_wr", d->max_qp_wr);
	pr_enum(p, "atomic_cap", mrrc_atomic_cap_str(d->atomic_cap),
		d->atomic_cap);
	if (verbose) {
		mrrc_fmt_fw_ver(fw, d->fw_ver);
		pr_str(p, "fw_ver", fw);
		if (p->j)
			pr_raw(p, "fw_ver", d->fw_ver);
		pr_hex(p, "page_size_cap", 0, d->page_size_cap);
		pr_hex(p, "device_cap_flags", 0, d->device_cap_flags);
		pr_u64(p, "max_pd", d->max_pd);
		pr_u64(p, "max_sge", d->max_sge);
		pr_u64(p, "max_cq", d->max_cq);
		pr_u64(p, "max_cqe", d->max_cqe);
		pr_u64(p, "max_qp_rd_atom", d->max_qp_rd_atom);
		pr_u64(p, "max_qp_init_rd_atom", d->max_qp_init_rd_atom);
	}
	if (p->j)
		mrrc_json_open(p->j, "ports", '[');
	for (port = 1; port <= d->phys_port_cnt; port++)
		print_port(fd, p, d, port, verbose);
	if (p->j) {
		mrrc_json_close(p->j, ']');
		mrrc_json_close(p->j, '}');
	}
}

static int dev_lister(int fd, uint32_t arg, void *buf, unsigned int *count)
{
	(void)arg;
	return mrrc_dev_list(fd, buf, count);
}

/* Devices may come and go between the count and the listing. */
int mrrc_list_devices(int fd, struct mrrc_dev_info **devs)
{
	void *buf;
	int n = mrrc_fetch_list(fd, dev_lister, 0, sizeof(**devs), &buf);

	*devs = buf;
	return n;
}

/*
 * Print the module's ABI and every device (or only @only_dev), as text or
 * as one JSON object.  Everything is fetched first, so that an error prints
 * nothing.  Returns 0, or a negative errno (-ENODEV: no @only_dev).
 */
int mrrc_cmd_info(int fd, FILE *out, struct mrrc_json *json,
		  const char *only_dev, bool verbose)
{
	struct pr p = { .out = out, .j = json };
	struct mrrc_dev_info *devs;
	struct mrrc_query q;
	int ret, n, i;

	ret = mrrc_query(fd, &q);
	if (ret)
		return ret;
	n = mrrc_list_devices(fd, &devs);
	if (n < 0)
		return n;
	for (i = 0; only_dev && i < n; i++)
		if (!strcmp(only_dev, devs[i].name))
			break;
	if (only_dev && i == n) {
		free(devs);
		return -ENODEV;
	}

	if (json) {
		mrrc_json_open(json, NULL, '{');
		mrrc_json_u64(json, "abi_version", q.abi_version);
		mrrc_json_u64(json, "features", q.features);
		mrrc_json_u64(json, "num_devices", q.num_devices);
		mrrc_json_open(json, "devices", '[');
	} else {
		fprintf(out, "mrrc: ABI %u, features 0x%" PRIx64
			", %u device%s\n", q.abi_version, (uint64_t)q.features,
			q.num_devices, q.num_devices == 1 ? "" : "s");
	}
	for (i = 0; i < n; i++)
		if (!only_dev || !strcmp(only_dev, devs[i].name))
			print_device(fd, &p, &devs[i], verbose);
	if (json) {
		mrrc_json_close(json, ']');
		mrrc_json_close(json, '}');
	}
	free(devs);
	return 0;
}
