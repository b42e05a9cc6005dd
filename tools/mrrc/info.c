// SPDX-License-Identifier: GPL-2.0-only
/* mrrc(8) - "mrrc info": what the module sees, like ibv_devinfo. */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "mrrc_tool.h"

#define MAX_GIDS 1024

static void print_port(int fd, FILE *out, const struct mrrc_dev_info *d,
		       uint32_t port, bool verbose)
{
	struct mrrc_gid_entry *gids;
	struct mrrc_port_query pa;
	unsigned int n = MAX_GIDS, i;
	int ret;

	gids = calloc(n, sizeof(*gids));
	if (!gids) {
		fprintf(out, "\tport %u: out of memory\n", port);
		return;
	}
	ret = mrrc_port_query(fd, d->dev_index, port, &pa, gids, &n);
	if (ret) {
		fprintf(out, "\tport %u: query failed: %s\n", port,
			strerror(-ret));
		free(gids);
		return;
	}
	fprintf(out, "\tport %u:\n", port);
	fprintf(out, "\t\tstate:\t\t\t%s (%u)\n",
		mrrc_port_state_str(pa.state), pa.state);
	fprintf(out, "\t\tphys_state:\t\t%s (%u)\n",
		mrrc_phys_state_str(pa.phys_state), pa.phys_state);
	fprintf(out, "\t\tmax_mtu:\t\t%d (%u)\n", mrrc_mtu_bytes(pa.max_mtu),
		pa.max_mtu);
	fprintf(out, "\t\tactive_mtu:\t\t%d (%u)\n",
		mrrc_mtu_bytes(pa.active_mtu), pa.active_mtu);
	fprintf(out, "\t\tlink_layer:\t\t%s\n",
		mrrc_link_layer_str(pa.link_layer));
	if (verbose) {
		fprintf(out, "\t\tlid:\t\t\t%u\n", pa.lid);
		fprintf(out, "\t\tgid_tbl_len:\t\t%u\n", pa.gid_tbl_len);
		fprintf(out, "\t\tactive_speed:\t\t%u\n", pa.active_speed);
		fprintf(out, "\t\tactive_width:\t\t%u\n", pa.active_width);
	}
	if (n > MAX_GIDS)
		n = MAX_GIDS;
	for (i = 0; i < n; i++) {
		char gid[40], ifname[IF_NAMESIZE] = "";

		mrrc_fmt_gid(gid, gids[i].gid);
		if (gids[i].netdev_ifindex &&
		    !if_indextoname(gids[i].netdev_ifindex, ifname))
			snprintf(ifname, sizeof(ifname), "ifindex %u",
				 gids[i].netdev_ifindex);
		fprintf(out, "\t\tGID[%3u]:\t\t%s, %s%s%s\n", gids[i].index,
			gid, mrrc_gid_type_str(gids[i].gid_type),
			*ifname ? ", " : "", ifname);
	}
	free(gids);
}

static void print_device(int fd, FILE *out, const struct mrrc_dev_info *d,
			 bool verbose)
{
	char guid[20], sguid[20];
	uint32_t p;

	mrrc_fmt_guid(guid, d->node_guid);
	mrrc_fmt_guid(sguid, d->sys_image_guid);
	fprintf(out, "hca_id:\t%s\n", d->name);
	fprintf(out, "\tdev_index:\t\t\t%u\n", d->dev_index);
	fprintf(out, "\tnode_guid:\t\t\t%s\n", guid);
	fprintf(out, "\tsys_image_guid:\t\t\t%s\n", sguid);
	fprintf(out, "\tvendor_id:\t\t\t0x%04x\n", d->vendor_id);
	fprintf(out, "\tvendor_part_id:\t\t\t%u\n", d->vendor_part_id);
	fprintf(out, "\tphys_port_cnt:\t\t\t%u\n", d->phys_port_cnt);
	fprintf(out, "\tmax_mr:\t\t\t\t%u\n", d->max_mr);
	fprintf(out, "\tmax_mr_size:\t\t\t0x%" PRIx64 "\n",
		(uint64_t)d->max_mr_size);
	fprintf(out, "\tmax_fast_reg_page_list_len:\t%u\n",
		d->max_fast_reg_page_list_len);
	fprintf(out, "\tmax_qp:\t\t\t\t%u\n", d->max_qp);
	fprintf(out, "\tmax_qp_wr:\t\t\t%u\n", d->max_qp_wr);
	fprintf(out, "\tatomic_cap:\t\t\t%s (%u)\n",
		mrrc_atomic_cap_str(d->atomic_cap), d->atomic_cap);
	if (verbose) {
		fprintf(out, "\tfw_ver:\t\t\t\t0x%" PRIx64 "\n",
			(uint64_t)d->fw_ver);
		fprintf(out, "\tpage_size_cap:\t\t\t0x%" PRIx64 "\n",
			(uint64_t)d->page_size_cap);
		fprintf(out, "\tdevice_cap_flags:\t\t0x%" PRIx64 "\n",
			(uint64_t)d->device_cap_flags);
		fprintf(out, "\tmax_pd:\t\t\t\t%u\n", d->max_pd);
		fprintf(out, "\tmax_sge:\t\t\t%u\n", d->max_sge);
		fprintf(out, "\tmax_cq:\t\t\t\t%u\n", d->max_cq);
		fprintf(out, "\tmax_cqe:\t\t\t%u\n", d->max_cqe);
		fprintf(out, "\tmax_qp_rd_atom:\t\t\t%u\n", d->max_qp_rd_atom);
		fprintf(out, "\tmax_qp_init_rd_atom:\t\t%u\n",
			d->max_qp_init_rd_atom);
	}
	for (p = 1; p <= d->phys_port_cnt; p++)
		print_port(fd, out, d, p, verbose);
}

/*
 * Print the module's ABI and every device (or only @only_dev).
 * Returns 0, or a negative errno (-ENODEV if @only_dev is not found).
 */
int mrrc_cmd_info(int fd, FILE *out, const char *only_dev, bool verbose)
{
	struct mrrc_dev_info *devs = NULL;
	struct mrrc_query q;
	unsigned int n, i, shown = 0;
	int ret;

	ret = mrrc_query(fd, &q);
	if (ret)
		return ret;
	fprintf(out, "mrrc: ABI %u, features 0x%" PRIx64 ", %u device%s\n",
		q.abi_version, (uint64_t)q.features, q.num_devices,
		q.num_devices == 1 ? "" : "s");

	/* Devices may come and go between the two calls: retry. */
	for (;;) {
		n = 0;
		ret = mrrc_dev_list(fd, NULL, &n);
		if (ret)
			return ret;
		free(devs);
		devs = calloc(n ? n : 1, sizeof(*devs));
		if (!devs)
			return -ENOMEM;
		i = n;
		ret = mrrc_dev_list(fd, devs, &i);
		if (ret)
			goto out;
		if (i <= n)
			break;
	}
	n = i;

	for (i = 0; i < n; i++) {
		if (only_dev && strcmp(only_dev, devs[i].name))
			continue;
		fprintf(out, "\n");
		print_device(fd, out, &devs[i], verbose);
		shown++;
	}
	if (only_dev && !shown)
		ret = -ENODEV;
out:
	free(devs);
	return ret;
}
