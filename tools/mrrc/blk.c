// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc(8) blk - attach, detach and list mrrc_blk devices through the
 * module's sysfs files (Documentation/mrrc_blk.rst).  MRRC_SYSFS names
 * another root than /sys (for the tool's tests).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mrrc_tool.h"

#define BLK_MAX 64

static const char *sysfs(void)
{
	const char *s = getenv("MRRC_SYSFS");

	return s && *s ? s : "/sys";
}

/* SYSFS/block/NAME/FILE into @buf; false if it does not fit. */
static bool disk_path(char *buf, size_t len, const char *name,
		      const char *file)
{
	int n = snprintf(buf, len, "%s/block/%s/%s", sysfs(), name, file);

	return n > 0 && (size_t)n < len;
}

/* Write @s to @path in one write(2): 0 or -errno. */
static int write_file(const char *path, const char *s)
{
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != strlen(s))
		ret = -EIO;
	close(fd);
	return ret;
}

/* The first line of @path, without its newline: 0 or -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		ret = -EIO;
	else
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	return ret;
}

/* The names of the mrrc_blk disks, sorted by number; their count. */
static int list_disks(char names[][16], int room)
{
	char path[512];
	struct dirent *d;
	int n = 0, i, j;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/block", sysfs());
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir)) && n < room) {
		char *end;

		if (strncmp(d->d_name, "mrrcb", 5) ||
		    strtoul(d->d_name + 5, &end, 10) > 65535 || *end ||
		    end == d->d_name + 5)
			continue;
		if (strlen(d->d_name) < 16)
			memcpy(names[n++], d->d_name, strlen(d->d_name) + 1);
	}
	closedir(dir);
	for (i = 1; i < n; i++)	/* insertion sort by number */
		for (j = i; j > 0 && atoi(names[j - 1] + 5) >
				     atoi(names[j] + 5); j--) {
			char t[16];

			memcpy(t, names[j], 16);
			memcpy(names[j], names[j - 1], 16);
			memcpy(names[j - 1], t, 16);
		}
	return n;
}

struct blk_info {
	char peer[64], state[16];
	unsigned int queues, depth;
	uint64_t sectors, reads, writes, errors, reg_requests, hits, miss;
};

static void read_info(const char *name, struct blk_info *b)
{
	char path[512], line[128];
	FILE *f;

	memset(b, 0, sizeof(*b));
	if (!disk_path(path, sizeof(path), name, "size"))
		return;
	if (!read_line(path, line, sizeof(line)))
		b->sectors = strtoull(line, NULL, 10);
	if (!disk_path(path, sizeof(path), name, "mrrc/peer"))
		return;
	if (read_line(path, b->peer, sizeof(b->peer)))
		strcpy(b->peer, "?");
	if (!disk_path(path, sizeof(path), name, "mrrc/state"))
		return;
	if (read_line(path, b->state, sizeof(b->state)))
		strcpy(b->state, "?");
	if (!disk_path(path, sizeof(path), name, "mrrc/queues"))
		return;
	if (!read_line(path, line, sizeof(line)) &&
	    sscanf(line, "%u %u", &b->queues, &b->depth) != 2)
		b->queues = b->depth = 0;
	if (!disk_path(path, sizeof(path), name, "mrrc/stats"))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char key[64];
		unsigned long long v;

		if (sscanf(line, "%63s %llu", key, &v) != 2)
			continue;
		if (!strcmp(key, "reads"))
			b->reads = v;
		else if (!strcmp(key, "writes"))
			b->writes = v;
		else if (!strcmp(key, "errors"))
			b->errors = v;
		else if (!strcmp(key, "reg_requests"))
			b->reg_requests = v;
		else if (!strcmp(key, "hit_exact") ||
			 !strcmp(key, "hit_subset") ||
			 !strcmp(key, "hit_span"))
			b->hits += v;
		else if (!strcmp(key, "miss"))
			b->miss = v;
	}
	fclose(f);
}

static int blk_list(FILE *out, struct mrrc_json *j)
{
	char names[BLK_MAX][16];
	int n = list_disks(names, BLK_MAX), i;
	struct blk_info b;

	if (j)
		mrrc_json_open(j, NULL, '[');
	else
		fprintf(out, "%-8s %9s %-21s %-6s %7s %10s %10s %6s %6s\n",
			"name", "size_mib", "peer", "state", "queues",
			"reads", "writes", "errors", "hit%");
	for (i = 0; i < n; i++) {
		read_info(names[i], &b);
		if (j) {
			mrrc_json_open(j, NULL, '{');
			mrrc_json_str(j, "name", names[i]);
			mrrc_json_u64(j, "size_bytes", b.sectors * 512);
			mrrc_json_str(j, "peer", b.peer);
			mrrc_json_str(j, "state", b.state);
			mrrc_json_u64(j, "queues", b.queues);
			mrrc_json_u64(j, "queue_depth", b.depth);
			mrrc_json_u64(j, "reads", b.reads);
			mrrc_json_u64(j, "writes", b.writes);
			mrrc_json_u64(j, "errors", b.errors);
			mrrc_json_u64(j, "reg_requests", b.reg_requests);
			mrrc_json_u64(j, "reg_hits", b.hits);
			mrrc_json_double(j, "hit_pct",
					 mrrc_hit_pct(b.hits, b.reg_requests));
			mrrc_json_close(j, '}');
		} else {
			char qd[24];

			snprintf(qd, sizeof(qd), "%ux%u", b.queues, b.depth);
			fprintf(out,
				"%-8s %9llu %-21s %-6s %7s %10llu %10llu %6llu %6.1f\n",
				names[i], (unsigned long long)(b.sectors >> 11),
				b.peer, b.state, qd,
				(unsigned long long)b.reads,
				(unsigned long long)b.writes,
				(unsigned long long)b.errors,
				mrrc_hit_pct(b.hits, b.reg_requests));
		}
	}
	if (j)
		mrrc_json_close(j, ']');
	return 0;
}

static const char *attach_hint(int err)
{
	switch (err) {
	case -ENOENT:
		return " (is mrrc_blk loaded? modprobe mrrc_blk)";
	case -ECONNREFUSED:
		return " (refused: is mrrc_blksrv loaded on the server, on that port?)";
	case -EHOSTUNREACH:
	case -ETIMEDOUT:
		return " (no RDMA route to the server, or it does not answer)";
	case -EPROTO:
		return " (the server speaks another protocol version)";
	case -EACCES:
		return " (root only)";
	default:
		return "";
	}
}

/* attach ADDR[:PORT] [QUEUES DEPTH]: 0 or the exit status. */
int mrrc_cmd_blk_attach(FILE *out, FILE *err, const char *addr,
			unsigned int queues, unsigned int depth)
{
	char before[BLK_MAX][16], after[BLK_MAX][16];
	int nb, na, i, k, ret;
	char path[512], req[160];

	if (strlen(addr) > 64 || strpbrk(addr, " \t\n")) {
		fprintf(err, "mrrc: blk attach: bad address '%s'\n", addr);
		return 2;
	}
	snprintf(req, sizeof(req), "%s", addr);
	if (queues)
		snprintf(req + strlen(req), sizeof(req) - strlen(req),
			 " queues=%u", queues);
	if (depth)
		snprintf(req + strlen(req), sizeof(req) - strlen(req),
			 " depth=%u", depth);
	nb = list_disks(before, BLK_MAX);
	snprintf(path, sizeof(path), "%s/kernel/mrrc_blk/attach", sysfs());
	ret = write_file(path, req);
	if (ret) {
		fprintf(err, "mrrc: blk attach %s: %s%s\n", addr,
			strerror(-ret), attach_hint(ret));
		return 1;
	}
	na = list_disks(after, BLK_MAX);
	for (i = 0; i < na; i++) {
		for (k = 0; k < nb; k++)
			if (!strcmp(after[i], before[k]))
				break;
		if (k == nb)
			fprintf(out, "/dev/%s\n", after[i]);
	}
	return 0;
}

int mrrc_cmd_blk_detach(FILE *err, const char *name)
{
	char path[512];
	int ret;

	if (strncmp(name, "/dev/", 5) == 0)
		name += 5;
	if (strlen(name) > 31) {
		fprintf(err, "mrrc: blk detach: no device '%s'\n", name);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/kernel/mrrc_blk/detach", sysfs());
	ret = write_file(path, name);
	if (ret == -ENOENT && access(path, F_OK) == 0) {
		fprintf(err, "mrrc: blk detach: no device '%s'\n", name);
		return 1;
	}
	if (ret) {
		fprintf(err, "mrrc: blk detach %s: %s%s\n", name,
			strerror(-ret), attach_hint(ret));
		return 1;
	}
	return 0;
}

int mrrc_cmd_blk_list(FILE *out, struct mrrc_json *json)
{
	return blk_list(out, json);
}
