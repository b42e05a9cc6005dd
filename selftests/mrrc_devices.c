// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device and port listing: what the module reports must match sysfs,
 * `rdma link` and `ibv_devinfo`.
 */
#include <dirent.h>
#include <sched.h>
#include <endian.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdint.h>

#include "kselftest_harness.h"
#include "mrrc_test.h"

#define MAX_DEVS 16
#define MAX_GIDS 1024

static void fmt_guid(char buf[20], uint64_t guid_be)
{
	uint64_t g = be64toh(guid_be);

	snprintf(buf, 20, "%04x:%04x:%04x:%04x", (unsigned int)(g >> 48) & 0xffff,
		 (unsigned int)(g >> 32) & 0xffff,
		 (unsigned int)(g >> 16) & 0xffff, (unsigned int)g & 0xffff);
}

static int list_devices(struct mrrc_dev_info *devs, unsigned int *n)
{
	int fd = mrrc_open(0), ret;

	if (fd < 0)
		return fd;
	*n = MAX_DEVS;
	ret = mrrc_dev_list(fd, devs, n);
	close(fd);
	return ret;
}

static const struct mrrc_dev_info *find_dev(const struct mrrc_dev_info *devs,
					    unsigned int n, const char *name)
{
	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(devs[i].name, name))
			return &devs[i];
	return NULL;
}

/* The same set of devices as /sys/class/infiniband, with the same GUIDs. */
TEST(list_matches_sysfs)
{
	struct mrrc_dev_info devs[MAX_DEVS];
	const struct mrrc_dev_info *d;
	unsigned int n, seen = 0;
	struct dirent *de;
	DIR *dir;

	ASSERT_EQ(0, list_devices(devs, &n));
	dir = opendir("/sys/class/infiniband");
	ASSERT_NE(NULL, dir);
	while ((de = readdir(dir))) {
		char path[300], want[64], got[20];
		int ports = 0;
		struct dirent *pe;
		DIR *pd;

		if (de->d_name[0] == '.')
			continue;
		seen++;
		d = find_dev(devs, n, de->d_name);
		ASSERT_NE(NULL, d) TH_LOG("%s missing from the list", de->d_name);

		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/node_guid",
			 de->d_name);
		ASSERT_EQ(0, read_line(path, want, sizeof(want)));
		fmt_guid(got, d->node_guid);
		ASSERT_STREQ(want, got);

		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/sys_image_guid",
			 de->d_name);
		ASSERT_EQ(0, read_line(path, want, sizeof(want)));
		fmt_guid(got, d->sys_image_guid);
		ASSERT_STREQ(want, got);

		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports",
			 de->d_name);
		pd = opendir(path);
		ASSERT_NE(NULL, pd);
		while ((pe = readdir(pd)))
			if (pe->d_name[0] != '.')
				ports++;
		closedir(pd);
		ASSERT_EQ(ports, (int)d->phys_port_cnt);
	}
	closedir(dir);
	ASSERT_EQ(seen, n);
	ASSERT_NE(NULL, find_dev(devs, n, RXE_DEV));
}

/* Every "link DEV/PORT state STATE" line of `rdma link` matches. */
TEST(ports_match_rdma_link)
{
	struct mrrc_dev_info devs[MAX_DEVS];
	char line[512], dev[64], state[32];
	unsigned int n, port, lines = 0;
	struct mrrc_port_query pq;
	int fd;
	FILE *p;

	ASSERT_EQ(0, list_devices(devs, &n));
	fd = mrrc_open(0);
	ASSERT_LE(0, fd);
	p = popen("rdma link show", "r");
	ASSERT_NE(NULL, p);
	while (fgets(line, sizeof(line), p)) {
		const struct mrrc_dev_info *d;

		if (sscanf(line, "link %63[^/]/%u state %31s", dev, &port,
			   state) != 3)
			continue;
		lines++;
		d = find_dev(devs, n, dev);
		ASSERT_NE(NULL, d);
		ASSERT_EQ(0, mrrc_port_query(fd, d->dev_index, port, &pq, NULL,
					     NULL));
		if (!strcmp(state, "ACTIVE")) {
			ASSERT_EQ(MRRC_PORT_ACTIVE, pq.state);
		} else if (!strcmp(state, "DOWN")) {
			ASSERT_EQ(MRRC_PORT_DOWN, pq.state);
		}
		ASSERT_EQ(MRRC_LINK_LAYER_ETHERNET, pq.link_layer);
	}
	pclose(p);
	close(fd);
	ASSERT_LE(1, lines);
}

static uint64_t devinfo_u64(const char *out, const char *key)
{
	const char *at = strstr(out, key);

	return at ? strtoull(at + strlen(key), NULL, 0) : UINT64_MAX;
}

/* The attributes later issues rely on agree with `ibv_devinfo -v`. */
TEST(attrs_match_ibv_devinfo)
{
	struct mrrc_dev_info devs[MAX_DEVS];
	const struct mrrc_dev_info *d;
	char out[65536], guid[20];
	unsigned int n;
	size_t len;
	FILE *p;

	if (sh("command -v ibv_devinfo >/dev/null"))
		SKIP(return, "ibv_devinfo not installed");
	ASSERT_EQ(0, list_devices(devs, &n));
	d = find_dev(devs, n, RXE_DEV);
	ASSERT_NE(NULL, d);

	p = popen("ibv_devinfo -v -d " RXE_DEV " 2>&1", "r");
	ASSERT_NE(NULL, p);
	len = fread(out, 1, sizeof(out) - 1, p);
	out[len] = '\0';
	pclose(p);
	ASSERT_NE(NULL, strstr(out, "hca_id:")) TH_LOG("ibv_devinfo: %.200s", out);

	fmt_guid(guid, d->node_guid);
	ASSERT_NE(NULL, strstr(out, guid)) TH_LOG("node_guid %s", guid);
	ASSERT_EQ(d->max_mr, devinfo_u64(out, "max_mr:"));
	ASSERT_EQ(d->max_qp, devinfo_u64(out, "max_qp:"));
	ASSERT_EQ(d->max_qp_wr, devinfo_u64(out, "max_qp_wr:"));
	ASSERT_EQ(d->max_cq, devinfo_u64(out, "max_cq:"));
	ASSERT_EQ(d->max_pd, devinfo_u64(out, "max_pd:"));
	ASSERT_EQ(d->phys_port_cnt, devinfo_u64(out, "phys_port_cnt:"));
	ASSERT_EQ(d->vendor_id, devinfo_u64(out, "vendor_id:"));
	ASSERT_EQ(d->max_mr_size, devinfo_u64(out, "max_mr_size:"));
	ASSERT_EQ(d->atomic_cap, devinfo_u64(strstr(out, "atomic_cap:"), "("));
}

/* Each populated GID entry matches ports/N/gids/M and its attributes. */
TEST(gids_match_sysfs)
{
	struct mrrc_dev_info devs[MAX_DEVS];
	static struct mrrc_gid_entry gids[MAX_GIDS];
	static const char *const type[] = { "IB/RoCE v1", "IB/RoCE v1",
					     "RoCE v2" };
	const struct mrrc_dev_info *d;
	struct mrrc_port_query pq;
	unsigned int n, ng = MAX_GIDS, i;
	int fd;

	ASSERT_EQ(0, list_devices(devs, &n));
	d = find_dev(devs, n, RXE_DEV);
	ASSERT_NE(NULL, d);
	fd = mrrc_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mrrc_port_query(fd, d->dev_index, 1, &pq, gids, &ng));
	ASSERT_LE(1, ng);
	ASSERT_LE(ng, pq.gid_tbl_len);

	for (i = 0; i < ng; i++) {
		char path[256], want[64], got[40], ifname[IF_NAMESIZE];
		int k, o = 0;

		for (k = 0; k < 16; k += 2)
			o += snprintf(got + o, sizeof(got) - o, "%s%02x%02x",
				      k ? ":" : "", gids[i].gid[k],
				      gids[i].gid[k + 1]);
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/gids/%u", RXE_DEV,
			 gids[i].index);
		ASSERT_EQ(0, read_line(path, want, sizeof(want)));
		ASSERT_STREQ(want, got);

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/gid_attrs/types/%u",
			 RXE_DEV, gids[i].index);
		ASSERT_EQ(0, read_line(path, want, sizeof(want)));
		ASSERT_GT(3, gids[i].gid_type);
		ASSERT_STREQ(want, type[gids[i].gid_type]);

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/gid_attrs/ndevs/%u",
			 RXE_DEV, gids[i].index);
		ASSERT_EQ(0, read_line(path, want, sizeof(want)));
		ASSERT_NE(NULL, if_indextoname(gids[i].netdev_ifindex, ifname));
		ASSERT_STREQ(want, ifname);
	}

	/* Asking for fewer entries returns the same total and the first one. */
	{
		struct mrrc_gid_entry one;
		unsigned int n1 = 1;

		ASSERT_EQ(0, mrrc_port_query(fd, d->dev_index, 1, &pq, &one,
					     &n1));
		ASSERT_EQ(ng, n1);
		ASSERT_EQ(0, memcmp(&one, &gids[0], sizeof(one)));
	}
	close(fd);
}

/* A second rxe device shows up and goes away; count semantics. */
TEST(second_device)
{
	struct mrrc_dev_info devs[MAX_DEVS], one;
	struct mrrc_query q;
	unsigned int n, n1 = 1;
	int fd;

	ASSERT_EQ(0, sh("rdma link add rxe1 type rxe netdev veth1"));
	ASSERT_EQ(0, list_devices(devs, &n));
	ASSERT_EQ(2, n);
	ASSERT_NE(NULL, find_dev(devs, n, "rxe1"));

	fd = mrrc_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mrrc_query(fd, &q));
	ASSERT_EQ(2, q.num_devices);
	/* Room for one of two: one written, total reported. */
	ASSERT_EQ(0, mrrc_dev_list(fd, &one, &n1));
	ASSERT_EQ(2, n1);
	ASSERT_EQ(0, memcmp(&one, &devs[0], sizeof(one)));
	close(fd);

	ASSERT_EQ(0, sh("rdma link delete rxe1"));
	ASSERT_EQ(0, list_devices(devs, &n));
	ASSERT_EQ(1, n);
	ASSERT_EQ(NULL, find_dev(devs, n, "rxe1"));
}

/*
 * In a network namespace of its own a process sees the devices the RDMA
 * subsystem lets it use: all of them in shared mode (rdma system netns
 * shared, the default), none of init_net's in exclusive mode.  Returns
 * what the child found: devices listed, or the negative errno of bind.
 */
static int in_new_netns(bool bind)
{
	unsigned int n = 0;
	struct mrrc_query q;
	int st, fd, r;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		if (unshare(CLONE_NEWNET))
			_exit(200);
		fd = mrrc_open(0);
		if (fd < 0)
			_exit(201);
		if (bind) {
			r = mrrc_bind(fd, RXE_DEV, NULL);
			_exit(r < 0 ? -r : 0);
		}
		if (mrrc_query(fd, &q) || mrrc_dev_list(fd, NULL, &n) ||
		    q.num_devices != n)
			_exit(202);
		_exit(n);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -ECHILD;
	r = WEXITSTATUS(st);
	return bind ? -r : r;
}

TEST(devices_follow_rdma_netns_mode)
{
	int i;

	if (sh("rdma system show 2>/dev/null | grep -q 'netns shared'"))
		SKIP(return, "rdma netns mode is not shared, or no rdma tool");
	EXPECT_EQ(1, in_new_netns(false));
	EXPECT_EQ(0, in_new_netns(true));
	/* Only while no other network namespace exists. */
	if (sh("rdma system set netns exclusive"))
		SKIP(return, "cannot switch to exclusive netns mode");
	EXPECT_EQ(0, in_new_netns(false));
	EXPECT_EQ(-ENODEV, in_new_netns(true));
	/* init_net still has its device. */
	EXPECT_LE(0, close(open_bound(RXE_DEV)));
	/* Back to shared once the child's namespace is gone (async). */
	for (i = 0; i < 100 && sh("rdma system set netns shared"); i++)
		usleep(100000);
	EXPECT_EQ(0, sh("rdma system show | grep -q 'netns shared'"));
}

/* The tool prints what the module reports. */
TEST(tool_info)
{
	struct mrrc_dev_info devs[MAX_DEVS];
	char cmd[512], guid[20];
	unsigned int n;

	ASSERT_EQ(0, list_devices(devs, &n));
	fmt_guid(guid, find_dev(devs, n, RXE_DEV)->node_guid);
	snprintf(cmd, sizeof(cmd),
		 "%s/build/tools/mrrc info -d %s | grep -q 'node_guid:.*%s'",
		 getenv("MRRC_REPO") ? getenv("MRRC_REPO") : ".", RXE_DEV, guid);
	ASSERT_EQ(0, sh("%s", cmd));
	snprintf(cmd, sizeof(cmd), "%s/build/tools/mrrc info -d nosuch0",
		 getenv("MRRC_REPO") ? getenv("MRRC_REPO") : ".");
	ASSERT_EQ(1, sh("%s >/dev/null 2>&1", cmd));
}

TEST_HARNESS_MAIN
