// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc(8) - "mrrc ctx" and "mrrc conn": the open contexts and their
 * connections, like ss(8).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mrrc_tool.h"

/* Calls of a list that keeps growing: the first only counts. */
#define LIST_TRIES 5

int mrrc_fetch_list(int fd, mrrc_list_fn fn, uint32_t arg, size_t size,
		    void **list)
{
	unsigned int room = 0, n, i;
	void *buf = NULL;
	int ret = -EAGAIN;

	*list = NULL;
	for (i = 0; i < LIST_TRIES; i++) {
		n = room;
		ret = fn(fd, arg, buf, &n);
		if (ret)
			break;
		if (n <= room) {
			*list = buf;
			return n;
		}
		if (n > INT_MAX) {
			ret = -EOVERFLOW;
			break;
		}
		free(buf);
		buf = calloc(n, size);
		if (!buf)
			return -ENOMEM;
		room = n;
		ret = -EAGAIN;
	}
	free(buf);
	return ret;
}

static int ctx_lister(int fd, uint32_t arg, void *buf, unsigned int *count)
{
	(void)arg;
	return mrrc_ctx_list(fd, buf, count);
}

static int conn_lister(int fd, uint32_t ctx_id, void *buf,
		       unsigned int *count)
{
	return mrrc_conn_list(fd, ctx_id, buf, count);
}

/*
 * The contexts to show, into a new array in *@ctxs: the visible ones but
 * the tool's own (the one it opened, which has nothing to show).  Returns
 * the count or -errno.
 */
static int list_contexts(int fd, struct mrrc_ctx_info **ctxs)
{
	uint32_t self = (uint32_t)getpid();
	struct mrrc_ctx_info *c;
	int n, i, k = 0;
	void *buf;

	n = mrrc_fetch_list(fd, ctx_lister, 0, sizeof(*c), &buf);
	*ctxs = buf;
	if (n < 0)
		return n;
	c = buf;
	for (i = 0; i < n; i++)
		if (c[i].pid != self)
			c[k++] = c[i];
	return k;
}

/* The name of device @index, NULL if it is not listed. */
static const char *find_dev(const struct mrrc_dev_info *devs, int ndevs,
			    uint32_t index)
{
	int i;

	for (i = 0; i < ndevs; i++)
		if (devs[i].dev_index == index)
			return devs[i].name;
	return NULL;
}

/* Text: the device's name, "-" if unbound, its number if not listed. */
static const char *dev_text(const struct mrrc_dev_info *devs, int ndevs,
			    uint32_t index, char num[12])
{
	const char *name;

	if (index == MRRC_DEV_NONE)
		return "-";
	name = find_dev(devs, ndevs, index);
	if (name)
		return name;
	snprintf(num, 12, "%u", index);
	return num;
}

static void ctx_json(struct mrrc_json *j, const struct mrrc_ctx_info *c,
		     const struct mrrc_dev_info *devs, int ndevs)
{
	const char *name = NULL;

	if (c->dev_index != MRRC_DEV_NONE)
		name = find_dev(devs, ndevs, c->dev_index);
	mrrc_json_open(j, NULL, '{');
	mrrc_json_u64(j, "id", c->id);
	mrrc_json_u64(j, "pid", c->pid);
	mrrc_json_u64(j, "uid", c->uid);
	mrrc_json_u64(j, "dev_index", c->dev_index);
	if (name)
		mrrc_json_str(j, "device", name);
	mrrc_json_u64(j, "conns", c->conns);
	mrrc_json_u64(j, "ops", c->ops);
	mrrc_json_u64(j, "exports", c->exports);
	mrrc_json_u64(j, "cached_regions", c->cached_regions);
	mrrc_json_u64(j, "cached_pages", c->cached_pages);
	mrrc_json_u64(j, "pinned_pages", c->pinned_pages);
	mrrc_json_u64(j, "cached_kb", mrrc_pages_kb(c->cached_pages));
	mrrc_json_u64(j, "pinned_kb", mrrc_pages_kb(c->pinned_pages));
	mrrc_json_u64(j, "requests", c->requests);
	mrrc_json_u64(j, "hits", c->hits);
	mrrc_json_double(j, "hit_pct", mrrc_hit_pct(c->hits, c->requests));
	mrrc_json_close(j, '}');
}

static void ctx_line(FILE *out, const struct mrrc_ctx_info *c,
		     const char *dev, int dev_width)
{
	char pid[12] = "-";

	if (c->pid)
		snprintf(pid, sizeof(pid), "%u", c->pid);
	fprintf(out, "%5u %7s %6u %-*s %5u %5u %7u %8" PRIu64 " %9" PRIu64
		" %9" PRIu64 " %10" PRIu64 " %5.1f\n", c->id, pid, c->uid,
		dev_width, dev, c->conns, c->ops, c->exports,
		(uint64_t)c->cached_regions, mrrc_pages_kb(c->cached_pages),
		mrrc_pages_kb(c->pinned_pages), (uint64_t)c->requests,
		mrrc_hit_pct(c->hits, c->requests));
}

/*
 * "mrrc ctx": one line (or JSON object) per context the caller may see,
 * the tool's own left out.  Everything is fetched first, so that an error
 * prints nothing.  Returns 0 or a negative errno.
 */
int mrrc_cmd_ctx(int fd, FILE *out, struct mrrc_json *json)
{
	struct mrrc_dev_info *devs = NULL;
	int n, ndevs = 0, i, width = 6;	/* "device" */
	struct mrrc_ctx_info *ctxs;
	char num[12];
	const char *dev;

	n = list_contexts(fd, &ctxs);
	if (n > 0)
		ndevs = mrrc_list_devices(fd, &devs);
	if (n < 0 || ndevs < 0) {
		free(ctxs);
		return n < 0 ? n : ndevs;
	}

	if (json) {
		mrrc_json_open(json, NULL, '[');
		for (i = 0; i < n; i++)
			ctx_json(json, &ctxs[i], devs, ndevs);
		mrrc_json_close(json, ']');
		goto out;
	}
	for (i = 0; i < n; i++) {
		dev = dev_text(devs, ndevs, ctxs[i].dev_index, num);
		if ((int)strlen(dev) > width)
			width = strlen(dev);
	}
	fprintf(out, "%5s %7s %6s %-*s %5s %5s %7s %8s %9s %9s %10s %5s\n",
		"id", "pid", "uid", width, "device", "conns", "ops", "exports",
		"regions", "cachedKB", "pinnedKB", "requests", "hit%");
	for (i = 0; i < n; i++)
		ctx_line(out, &ctxs[i],
			 dev_text(devs, ndevs, ctxs[i].dev_index, num), width);
out:
	free(devs);
	free(ctxs);
	return 0;
}

/* An address as an object: none for no address at all (family 0). */
static void addr_json(struct mrrc_json *j, const char *key,
		      const struct mrrc_addr *a)
{
	char ip[INET6_ADDRSTRLEN];

	if (!a->family && !a->port)
		return;
	mrrc_json_open(j, key, '{');
	if (mrrc_fmt_ip(ip, a)) {
		mrrc_json_str(j, "family",
			      a->family == AF_INET ? "inet" : "inet6");
		mrrc_json_str(j, "addr", ip);
	} else if (a->family) {
		mrrc_json_u64(j, "family_raw", a->family);
	}
	mrrc_json_u64(j, "port", a->port);
	if (a->scope_id)
		mrrc_json_u64(j, "scope_id", a->scope_id);
	mrrc_json_close(j, '}');
}

static void conn_json(struct mrrc_json *j, uint32_t ctx_id,
		      const struct mrrc_conn_query *q)
{
	char num[12];

	mrrc_json_open(j, NULL, '{');
	mrrc_json_u64(j, "ctx", ctx_id);
	mrrc_json_u64(j, "id", q->id);
	mrrc_json_str(j, "state", mrrc_conn_state_str(num, q->state));
	mrrc_json_u64(j, "state_raw", q->state);
	addr_json(j, "local", &q->local);
	addr_json(j, "peer", &q->peer);
	mrrc_json_u64(j, "ops", q->ops);
	mrrc_json_u64(j, "credits", q->credits);
	mrrc_json_u64(j, "posted", q->posted);
	mrrc_json_u64(j, "crw_matched", q->crw_matched);
	mrrc_json_u64(j, "ctrl_sent", q->ctrl_sent);
	mrrc_json_u64(j, "ctrl_recv", q->ctrl_recv);
	mrrc_json_u64(j, "keepalives", q->keepalives);
	mrrc_json_u64(j, "withdrawn", q->withdrawn);
	mrrc_json_u64(j, "withdraw_lost", q->withdraw_lost);
	mrrc_json_u64(j, "refused", q->refused);
	mrrc_json_u64(j, "remote_inv", q->remote_inv);
	/* 1: MRRC_CONN_ISOLATED (0 from a module that predates it). */
	mrrc_json_u64(j, "isolated",
		      !!(q->conn_flags & MRRC_CONN_ISOLATED));
	mrrc_json_close(j, '}');
}

static void conn_line(FILE *out, uint32_t ctx_id,
		      const struct mrrc_conn_query *q, int lw, int pw)
{
	char local[MRRC_ADDR_STRLEN], peer[MRRC_ADDR_STRLEN];
	char state[12], refused[24] = "-";

	mrrc_fmt_addr(local, &q->local);
	mrrc_fmt_addr(peer, &q->peer);
	if (q->state == MRRC_CONN_LISTENING)
		snprintf(refused, sizeof(refused), "%" PRIu64,
			 (uint64_t)q->refused);
	fprintf(out, "%5u %5u %-11s %-*s %-*s %5u %7u %10" PRIu64 " %7s\n",
		ctx_id, q->id, mrrc_conn_state_str(state, q->state), lw,
		local, pw, peer, q->ops, q->credits, (uint64_t)q->posted,
		refused);
}

/* One context's connections. */
struct ctx_conns {
	uint32_t ctx_id;
	int n;
	struct mrrc_conn_query *conns;
};

static void conn_text(FILE *out, const struct ctx_conns *cc, int nctx)
{
	char addr[MRRC_ADDR_STRLEN];
	int lw = 5, pw = 4;	/* "local", "peer" */
	int i, k, len;

	for (i = 0; i < nctx; i++) {
		for (k = 0; k < cc[i].n; k++) {
			mrrc_fmt_addr(addr, &cc[i].conns[k].local);
			len = strlen(addr);
			lw = len > lw ? len : lw;
			mrrc_fmt_addr(addr, &cc[i].conns[k].peer);
			len = strlen(addr);
			pw = len > pw ? len : pw;
		}
	}
	fprintf(out, "%5s %5s %-11s %-*s %-*s %5s %7s %10s %7s\n", "ctx",
		"id", "state", lw, "local", pw, "peer", "ops", "credits",
		"posted", "refused");
	for (i = 0; i < nctx; i++)
		for (k = 0; k < cc[i].n; k++)
			conn_line(out, cc[i].ctx_id, &cc[i].conns[k], lw, pw);
}

/*
 * "mrrc conn": the connections and listeners of context @ctx_id, or with
 * @ctx_id 0 of every context "mrrc ctx" shows; one that closes meanwhile
 * is left out.  Everything is fetched first.  Returns 0 or a negative
 * errno (-ENOENT: no context @ctx_id that the caller may see).
 */
int mrrc_cmd_conn(int fd, FILE *out, struct mrrc_json *json,
		  uint32_t ctx_id)
{
	struct mrrc_ctx_info *ctxs = NULL;
	struct ctx_conns *cc = NULL;
	int nctx = 1, ret = 0, i, k;
	void *buf;

	if (!ctx_id) {
		nctx = list_contexts(fd, &ctxs);
		if (nctx < 0)
			return nctx;
	}
	cc = calloc(nctx ? nctx : 1, sizeof(*cc));
	if (!cc) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nctx; i++) {
		cc[i].ctx_id = ctx_id ? ctx_id : ctxs[i].id;
		cc[i].n = mrrc_fetch_list(fd, conn_lister, cc[i].ctx_id,
					  sizeof(*cc[i].conns), &buf);
		cc[i].conns = buf;
		if (cc[i].n == -ENOENT && !ctx_id) {
			cc[i].n = 0;	/* closed since it was listed */
		} else if (cc[i].n < 0) {
			ret = cc[i].n;
			goto out;
		}
	}

	if (!json) {
		conn_text(out, cc, nctx);
		goto out;
	}
	mrrc_json_open(json, NULL, '[');
	for (i = 0; i < nctx; i++)
		for (k = 0; k < cc[i].n; k++)
			conn_json(json, cc[i].ctx_id, &cc[i].conns[k]);
	mrrc_json_close(json, ']');
out:
	for (i = 0; cc && i < nctx; i++)
		free(cc[i].conns);
	free(cc);
	free(ctxs);
	return ret;
}
