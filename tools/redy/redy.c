// SPDX-License-Identifier: GPL-2.0-only
/*
 * redy - Redy's client-side tool (redy(1)): run a configuration against
 * a memory server (redyd), check its data paths, model the configuration
 * space offline, search the model for an SLO, and measure how often the
 * configurations it picks meet random SLOs.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "benchjson.h"
#include "cache.h"
#include "client.h"
#include "libmrrc.h"
#include "slo.h"

#define PROG "redy"

struct opts {
	const char *addr, *dev, *model, *out;
	char mgr[INET_ADDRSTRLEN];
	unsigned int mgr_port;
	uint64_t capacity;
	int pause_all, kill_pid;
	unsigned int repeat;
	const char *reclaim;
	const char *file;	/* cache-test: Create's file */
	double reshape_ops;	/* cache-test: reshape to this throughput SLO */
	unsigned int port;
	struct redy_cfg cfg;
	struct redy_space sp;
	uint32_t record;
	unsigned int read_pct;
	double seconds, gain_pct, lat_ns, tput;
	double plan_z;		/* -Z: standard deviations planned for */
	unsigned int nslo, seed;
	uint64_t span;
	int json;
	int algo;	/* 0 bounded, 1 fig10, 2 exhaustive */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- running one configuration ----------------------------------------- */

struct worker {
	const struct opts *o;
	const struct redy_cfg *cfg;
	unsigned int idx;
	pthread_barrier_t *bar;
	struct redy_result res;
	int err;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	const struct redy_cfg *cfg = w->cfg;
	struct redy_client c;
	struct redy_load l = {
		.batch = cfg->b, .depth = cfg->q, .record = w->o->record,
		.read_pct = w->o->read_pct, .span = w->o->span,
		.seconds = w->o->seconds, .seed = w->idx + 1 + w->o->seed,
	};
	int thread = cfg->s ? (int)(w->idx % cfg->s) : -1;

	w->err = redy_client_open(&c, w->o->addr, w->o->port, thread, cfg->q,
				  w->o->dev);
	pthread_barrier_wait(w->bar);
	if (w->err)
		return NULL;
	w->err = redy_client_run(&c, &l, &w->res);
	redy_client_close(&c);
	return NULL;
}

/* Runs @cfg: the mean latency and the throughput of all client threads. */
static int run_cfg(const struct opts *o, const struct redy_cfg *cfg,
		   struct redy_perf *p, double *p99)
{
	struct worker *w = calloc(cfg->c, sizeof(*w));
	pthread_t *tid = calloc(cfg->c, sizeof(*tid));
	struct redy_result all = { 0 };
	pthread_barrier_t bar;
	unsigned int i, k, started;
	double secs = 0;
	int err = 0;

	if (!w || !tid) {
		free(w);
		free(tid);
		return -ENOMEM;
	}
	pthread_barrier_init(&bar, NULL, cfg->c);
	for (started = 0; started < cfg->c; started++) {
		w[started] = (struct worker){ .o = o, .cfg = cfg, .idx = started,
					      .bar = &bar };
		if (pthread_create(&tid[started], NULL, work, &w[started]))
			break;
	}
	if (started < cfg->c) {
		/* those started wait at the barrier for ever */
		fprintf(stderr, PROG ": cannot start %u client threads\n", cfg->c);
		exit(1);
	}
	for (i = 0; i < cfg->c; i++) {
		pthread_join(tid[i], NULL);
		if (w[i].err && !err)
			err = w[i].err;
		all.ops += w[i].res.ops;
		all.lat_sum_ns += w[i].res.lat_sum_ns;
		if (w[i].res.seconds > secs)
			secs = w[i].res.seconds;
		for (k = 0; k < REDY_LAT_BUCKETS; k++)
			all.hist[k] += w[i].res.hist[k];
	}
	pthread_barrier_destroy(&bar);
	free(w);
	free(tid);
	if (err)
		return err;
	if (!all.ops || secs <= 0)
		return -EIO;
	p->lat_ns = all.lat_sum_ns / all.ops;
	p->tput_ops = all.ops / secs;
	if (p99)
		*p99 = redy_result_pct(&all, 99);
	return 0;
}

static void cfg_json(FILE *f, const struct redy_cfg *x)
{
	fprintf(f, "\"server_threads\":%u,\"client_threads\":%u,\"batch\":%u,\"queue_depth\":%u",
		x->s, x->c, x->b, x->q);
}

/* One measurement of one configuration as a JSON line. */
static void run_json(const char *metric, double v, const char *unit,
		     const struct opts *o, const struct redy_cfg *x)
{
	printf("{\"bench\":\"redy\",\"metric\":\"%s\",\"value\":%.0f,\"unit\":\"%s\",",
	       metric, v, unit);
	cfg_json(stdout, x);
	printf(",\"record_bytes\":%u,\"read_pct\":%u", o->record, o->read_pct);
	bench_json_end(stdout);
}

static int cmd_run(const struct opts *o)
{
	struct redy_perf p;
	double p99;
	int r;

	r = run_cfg(o, &o->cfg, &p, &p99);
	if (r) {
		fprintf(stderr, PROG ": run: %s\n", strerror(-r));
		return 1;
	}
	if (o->json) {
		run_json("throughput_ops", p.tput_ops, "ops/s", o, &o->cfg);
		run_json("latency_mean_ns", p.lat_ns, "ns", o, &o->cfg);
		run_json("latency_p99_ns", p99, "ns", o, &o->cfg);
	} else {
		printf("s=%u c=%u b=%u q=%u: %.0f ops/s, mean %.1f us, p99 < %.0f us\n",
		       o->cfg.s, o->cfg.c, o->cfg.b, o->cfg.q, p.tput_ops,
		       p.lat_ns / 1e3, p99 / 1e3);
	}
	return 0;
}

/* ---- checking the data paths -------------------------------------------- */

static unsigned int checks, failed;

static void check(bool ok, const char *what, int err)
{
	checks++;
	if (ok) {
		printf("ok %u - %s\n", checks, what);
		return;
	}
	failed++;
	printf("not ok %u - %s%s%s\n", checks, what, err ? ": " : "",
	       err ? strerror(err < 0 ? -err : err) : "");
}

static void pattern(uint8_t *b, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

static int cmd_verify(const struct opts *o)
{
	static uint8_t a[4096], b[4096], tail[64], after[64];
	struct redy_client one, two, two2, bad;
	struct redy_req_hdr junk = { .magic = 0xdeadbeef, .count = 1 };
	struct redy_load l = { .batch = 8, .depth = 4, .record = 128,
			       .read_pct = 50, .span = 1 << 20, .seconds = 0.3 };
	struct redy_result res = { 0 };
	uint64_t end;
	int r, r2;

	r = redy_client_open(&one, o->addr, o->port, -1, 4, o->dev);
	check(!r, "one-sided connection: hello with the exported segments", r);
	r2 = redy_client_open(&two, o->addr, o->port, 0, 4, o->dev);
	check(!r2, "two-sided connection to server thread 0", r2);
	if (r || r2)
		return 1;
	end = one.bytes;
	check(one.bytes == two.bytes && one.bytes >= (1 << 20),
	      "both paths see the same memory", 0);

	pattern(a, sizeof(a), 1);
	r = redy_client_rw(&two, REDY_OP_WRITE, 8192, a, sizeof(a));
	memset(b, 0, sizeof(b));
	r = r ?: redy_client_rw(&one, REDY_OP_READ, 8192, b, sizeof(b));
	check(!r && !memcmp(a, b, sizeof(a)),
	      "two-sided WRITE, one-sided READ: same bytes", r);

	pattern(a, sizeof(a), 2);
	r = redy_client_rw(&one, REDY_OP_WRITE, 12288 + 100, a, 1000);
	memset(b, 0, sizeof(b));
	r = r ?: redy_client_rw(&two, REDY_OP_READ, 12288 + 100, b, 1000);
	check(!r && !memcmp(a, b, 1000),
	      "one-sided WRITE (unaligned), two-sided READ: same bytes", r);

	/* the edges of the memory */
	pattern(tail, sizeof(tail), 3);
	r = redy_client_rw(&two, REDY_OP_WRITE, end - sizeof(tail), tail,
			   sizeof(tail));
	check(!r, "two-sided WRITE of the memory's last bytes", r);
	r = redy_client_rw(&two, REDY_OP_WRITE, end - 8, a, 16);
	check(r == -EINVAL, "two-sided WRITE across the end: EINVAL", r == -EINVAL ? 0 : r);
	r = redy_client_rw(&two, REDY_OP_READ, UINT64_MAX - 4, b, 16);
	check(r == -EINVAL, "two-sided READ at a wrapping offset: EINVAL",
	      r == -EINVAL ? 0 : r);
	r = redy_client_rw(&one, REDY_OP_WRITE, end - 8, a, 16);
	check(r == -EINVAL, "one-sided WRITE across the end: refused locally",
	      r == -EINVAL ? 0 : r);
	r = redy_client_rw(&one, REDY_OP_READ, end - sizeof(after), after,
			   sizeof(after));
	check(!r && !memcmp(tail, after, sizeof(tail)),
	      "refused writes changed nothing (one-sided READ of the end)", r);
	r = redy_client_rw(&two, 7, 0, b, 8);
	check(r == -EINVAL, "unknown operation: EINVAL", r == -EINVAL ? 0 : r);
	r = redy_client_pull(&two, 0, 4096, o->addr, o->port, 0);
	check(r == -EINVAL, "a PULL from the server itself: EINVAL",
	      r == -EINVAL ? 0 : r);
	r = redy_client_pull(&two, end - 100, 4096, "10.211.0.99", 7730, 0);
	check(r == -EINVAL, "a PULL beyond the memory: EINVAL, nothing connected",
	      r == -EINVAL ? 0 : r);

	/* both paths under load, batches of 8 */
	r = redy_client_run(&two, &l, &res);
	check(!r && res.ops > 0, "two-sided batches under load", r);
	l.batch = 1;
	r = redy_client_run(&one, &l, &res);
	check(!r, "one-sided operations under load", r);

	/* a malformed batch ends that connection, not the server (the load
	 * above wrote over the patterns: write one again first)
	 */
	pattern(a, sizeof(a), 4);
	r = redy_client_rw(&one, REDY_OP_WRITE, 8192, a, sizeof(a));
	check(!r, "one-sided WRITE after the load", r);
	r = redy_client_open(&bad, o->addr, o->port, 0, 1, o->dev);
	if (!r) {
		r = redy_client_send_raw(&bad, &junk, sizeof(junk));
		if (!r)
			r = redy_client_rw(&bad, REDY_OP_READ, 0, b, 8);
		redy_client_close(&bad);
	}
	check(r && r != -EINVAL, "a malformed batch ends its connection", 0);
	r = redy_client_open(&bad, o->addr, o->port, 0, 1, o->dev);
	if (!r) {
		r = redy_client_send_raw(&bad, &junk, 3);
		if (!r)
			r = redy_client_rw(&bad, REDY_OP_READ, 0, b, 8);
		redy_client_close(&bad);
	}
	check(r && r != -EINVAL, "a truncated batch ends its connection", 0);
	r = redy_client_rw(&two, REDY_OP_READ, 8192, b, sizeof(b));
	check(!r && !memcmp(a, b, sizeof(a)),
	      "the other connections keep being served", r);
	if (two.threads > 1) {
		r = redy_client_open(&two2, o->addr, o->port, 1, 1, o->dev);
		r = r ?: redy_client_rw(&two2, REDY_OP_READ, 8192, b, sizeof(b));
		check(!r && !memcmp(a, b, sizeof(a)),
		      "server thread 1 serves the same memory", r);
		if (two2.fd >= 0)
			redy_client_close(&two2);
	}
	redy_client_close(&one);
	redy_client_close(&two);
	printf("1..%u\n", checks);
	return failed ? 1 : 0;
}

/* ---- a lying memory server, and what the client makes of it ---------------- */

#define EVIL_SCENARIOS	7

/*
 * The next completion of @fd, waiting up to 60 s: 0 or -ETIMEDOUT.  The
 * client may run under valgrind in an emulated VM, where starting it
 * alone has taken more than 10 s.
 */
static int evil_next(int fd, struct mrrc_cqe *e)
{
	int n;

	for (;;) {
		n = mrrc_poll_cq(fd, e, 1);
		if (n)
			return n < 0 ? n : 0;
		n = mrrc_wait(fd, 60000);
		if (n <= 0)
			return n ? n : -ETIMEDOUT;
	}
}

static int evil_send(int fd, uint32_t conn, void *buf, uint32_t len)
{
	struct mrrc_wr wr = { .conn = conn, .opcode = MRRC_OP_SEND,
			      .addr = (uintptr_t)buf, .len = len };

	return mrrc_post(fd, &wr, 1, NULL);
}

/*
 * Serves EVIL_SCENARIOS connections on -p (one-sided) and -p + 1
 * (two-sided), the k-th one lying in way k: a hello with too many
 * segments; segments that do not cover the memory; then, to a batch, a
 * response with a sequence number of no batch, one with more bytes than
 * were asked for, a positive status, one entry too many, and one
 * shorter than its header.
 */
static int cmd_evil_server(const struct opts *o)
{
	static uint8_t rbuf[REDY_MSG_BYTES], sbuf[REDY_MSG_BYTES];
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct redy_hello *h = (void *)sbuf;
	struct redy_rsp_hdr *rh = (void *)sbuf;
	struct redy_rsp *rs = (void *)(rh + 1);
	const struct redy_req_hdr *qh = (const void *)rbuf;
	struct mrrc_wr rwr = { .opcode = MRRC_OP_RECV,
			       .addr = (uintptr_t)rbuf, .len = sizeof(rbuf) };
	struct mrrc_cqe e = {};
	unsigned int k, i;
	uint32_t lis, conn, len;
	int fd, r;

	fd = mrrc_open(0);
	inet_pton(AF_INET, o->addr, &sin.sin_addr);
	r = fd < 0 ? fd : mrrc_bind(fd, bench_dev(), NULL);
	for (i = 0; !r && i < 2; i++) {
		sin.sin_port = htons(o->port + i);
		r = mrrc_listen(fd, (struct sockaddr *)&sin, 4, 0, &lis);
	}
	if (r) {
		fprintf(stderr, PROG ": evil-server: %s\n", strerror(-r));
		return 1;
	}
	fprintf(stderr, PROG ": evil-server: listening\n");
	for (k = 0; k < EVIL_SCENARIOS; k++) {
		do {
			r = evil_next(fd, &e);
		} while (!r && !(e.opcode == MRRC_OP_EVENT &&
				 e.event == MRRC_EVENT_CONNECT_REQUEST));
		conn = e.conn;
		r = r ?: mrrc_accept(fd, conn, 0);
		do {
			r = r ?: evil_next(fd, &e);
		} while (!r && !(e.opcode == MRRC_OP_EVENT && e.conn == conn));
		rwr.conn = conn;
		r = r ?: mrrc_post(fd, &rwr, 1, NULL);
		if (r)
			break;
		memset(sbuf, 0, sizeof(sbuf));
		*h = (struct redy_hello){ .magic = REDY_MAGIC, .version = REDY_VERSION,
					  .bytes = 1 << 20, .threads = 1 };
		len = sizeof(*h);
		if (k == 0) {
			h->nsegs = REDY_SEGS_MAX + 1;
			len += h->nsegs * sizeof(h->seg[0]);
		} else if (k == 1) {
			h->nsegs = 1;
			h->seg[0] = (struct redy_seg){ .len = 1 << 19, .rkey = 1 };
			len += sizeof(h->seg[0]);
		}
		r = evil_send(fd, conn, sbuf, len);
		if (k >= 2) {	/* answer the client's first batch, wrongly */
			do {
				r = r ?: evil_next(fd, &e);
			} while (!r && !(e.opcode == MRRC_OP_RECV && e.conn == conn));
			r = r ?: e.status;
			if (r)
				break;
			memset(sbuf, 0, sizeof(sbuf));
			*rh = (struct redy_rsp_hdr){ .magic = REDY_MAGIC,
						     .count = qh->count, .seq = qh->seq };
			rs[0].len = qh->count ? ((const struct redy_req *)(qh + 1))->len : 0;
			len = sizeof(*rh) + qh->count * sizeof(*rs) + redy_align8(rs[0].len);
			if (k == 2)
				rh->seq ^= 1;
			if (k == 3) {
				rs[0].len += 4096;
				len += 4096;
			}
			if (k == 4)
				rs[0].status = 5;
			if (k == 5) {
				rh->count++;
				len += sizeof(*rs);
			}
			if (k == 6)
				len = sizeof(*rh) - 4;
			r = evil_send(fd, conn, sbuf, len < REDY_MSG_BYTES ? len : REDY_MSG_BYTES);
		}
		/* let the client see it before the connection goes */
		do {
			r = r ?: evil_next(fd, &e);
		} while (!r && !(e.opcode == MRRC_OP_EVENT && e.conn == conn));
		mrrc_destroy(fd, conn);
		if (r && r != -ETIMEDOUT)
			break;
		r = 0;
	}
	if (r)
		fprintf(stderr, PROG ": evil-server: scenario %u: %s (last completion: opcode %u event %u conn %u status %d)\n",
			k, strerror(-r), e.opcode, e.event, e.conn, e.status);
	mrrc_close(fd);
	return r ? 1 : 0;
}

/* The client against cmd_evil_server(): every lie refused (TAP). */
static int cmd_evil_test(const struct opts *o)
{
	static const char *const what[EVIL_SCENARIOS] = {
		"a hello with more segments than may be",
		"a hello whose segments do not cover the memory",
		"a response with the sequence number of no batch",
		"a response with more bytes than the READ asked for",
		"a response with a positive status",
		"a response with an entry too many",
		"a response shorter than its header",
	};
	struct redy_client c;
	unsigned int k;
	uint8_t *buf;
	int r;

	for (k = 0; k < EVIL_SCENARIOS; k++) {
		/* exactly the bytes asked for: an overrun shows under valgrind */
		buf = malloc(64);
		if (!buf)
			return 1;
		r = redy_client_open(&c, o->addr, o->port, k < 2 ? -1 : 0, 1, o->dev);
		if (!r) {
			r = redy_client_rw(&c, REDY_OP_READ, 0, buf, 64);
			redy_client_close(&c);
		}
		check(r == -EPROTO, what[k], r == -EPROTO ? 0 : r ? r : -EILSEQ);
		free(buf);
	}
	printf("1..%u\n", checks);
	return failed ? 1 : 0;
}

/* ---- offline modelling and search ------------------------------------------ */

struct modelling {
	const struct opts *o;
	double cv2_lat, cv2_tput;	/* sums of squared relative deviations */
	unsigned int leaves;		/* that went into them */
};

/*
 * One leaf of the model: the configuration run -k times; the means go
 * into the model, the runs' relative standard deviations into the pooled
 * noise the search plans for (struct redy_model): under emulation the
 * same configuration differs by 10 % and more from one run to the next,
 * and a model that promises the mean picks configurations that miss
 * their SLO about half the time they are at its edge.
 */
static int measure(void *arg, const struct redy_cfg *cfg, struct redy_perf *p)
{
	struct modelling *ml = arg;
	const struct opts *o = ml->o;
	double lat[100], tput[100], sl = 0, st = 0, vl = 0, vt = 0;
	struct redy_perf one;
	unsigned int k;
	int r = 0;

	for (k = 0; !r && k < o->repeat; k++) {
		r = run_cfg(o, cfg, &one, NULL);
		lat[k] = one.lat_ns;
		tput[k] = one.tput_ops;
		sl += one.lat_ns;
		st += one.tput_ops;
	}
	if (!r) {
		p->lat_ns = sl / k;
		p->tput_ops = st / k;
	}
	if (!r && k >= 2 && p->lat_ns > 0 && p->tput_ops > 0) {
		while (k--) {
			vl += (lat[k] - p->lat_ns) * (lat[k] - p->lat_ns);
			vt += (tput[k] - p->tput_ops) * (tput[k] - p->tput_ops);
		}
		ml->cv2_lat += vl / (o->repeat - 1) / (p->lat_ns * p->lat_ns);
		ml->cv2_tput += vt / (o->repeat - 1) / (p->tput_ops * p->tput_ops);
		ml->leaves++;
	}

	if (r)
		fprintf(stderr, PROG ": model: s=%u c=%u b=%u q=%u: %s\n",
			cfg->s, cfg->c, cfg->b, cfg->q, strerror(-r));
	else
		fprintf(stderr, PROG ": model: s=%u c=%u b=%u q=%u: %.0f ops/s, %.1f us\n",
			cfg->s, cfg->c, cfg->b, cfg->q, p->tput_ops,
			p->lat_ns / 1e3);
	return r;
}

static int cmd_model(const struct opts *o)
{
	struct modelling ml = { .o = o };
	struct redy_model m;
	double t0 = now_s();
	FILE *f;
	int r;

	r = redy_model_init(&m, &o->sp);
	if (r) {
		fprintf(stderr, PROG ": model: bad space\n");
		return 2;
	}
	m.record_bytes = o->record;
	m.read_pct = o->read_pct;
	r = redy_model_build(&m, measure, &ml, o->gain_pct);
	if (r) {
		redy_model_free(&m);
		return 1;
	}
	/* plan for the noise measured (-Z standard deviations, 2) */
	if (ml.leaves) {
		double z = o->plan_z >= 0 ? o->plan_z : 2;

		redy_model_replan(&m, z, sqrt(ml.cv2_lat / ml.leaves),
				  sqrt(ml.cv2_tput / ml.leaves));
		fprintf(stderr, PROG ": model: run-to-run deviation %.1f %% (latency), %.1f %% (throughput) over %u configurations; planning for %g of them\n",
			m.cv_lat * 100, m.cv_tput * 100, ml.leaves, z);
	}
	f = o->out ? fopen(o->out, "w") : stdout;
	r = f ? redy_model_save(&m, f) : -errno;
	if (f && f != stdout && fclose(f))
		r = -EIO;
	if (r)
		fprintf(stderr, PROG ": model: %s: %s\n", o->out, strerror(-r));
	else
		fprintf(stderr, PROG ": model: %lu configurations measured in %.0f s, %lu in the model\n",
			m.nmeasured, now_s() - t0, redy_model_leaves(&m));
	redy_model_free(&m);
	return r ? 1 : 0;
}

/* The model of -m; with -Z, planning for that many deviations instead. */
static int load_model(const struct opts *o, struct redy_model *m)
{
	unsigned int line = 0;
	FILE *f = fopen(o->model, "r");
	int r;

	if (!f) {
		fprintf(stderr, PROG ": %s: %s\n", o->model, strerror(errno));
		return -errno;
	}
	r = redy_model_load(m, f, &line);
	fclose(f);
	if (r)
		fprintf(stderr, PROG ": %s:%u: not a model (%s)\n", o->model, line,
			strerror(-r));
	else if (o->plan_z >= 0)
		redy_model_replan(m, o->plan_z, m->cv_lat, m->cv_tput);
	return r;
}

typedef int (*search_fn)(const struct redy_model *, const struct redy_slo *,
			 struct redy_cfg *, struct redy_search_stats *);
static const search_fn searches[] = {
	redy_search, redy_search_fig10, redy_search_exhaustive,
};
static const char *const search_names[] = { "bounded", "fig10", "exhaustive" };

/* The search's mean time over enough repetitions to be measurable. */
static double time_search(search_fn fn, const struct redy_model *m,
			  const struct redy_slo *slo, struct redy_cfg *x,
			  struct redy_search_stats *st, int *r)
{
	unsigned int n = 0;
	double t0 = now_s(), t;

	do {
		*r = fn(m, slo, x, st);
		n++;
		t = now_s() - t0;
	} while (t < 0.01 && n < 100000);
	return t / n * 1e3;
}

static int cmd_search(const struct opts *o)
{
	const struct redy_slo slo = { o->lat_ns, o->tput };
	struct redy_search_stats st;
	struct redy_model m;
	struct redy_perf p;
	struct redy_cfg x;
	double ms;
	int r;

	if (load_model(o, &m))
		return 1;
	ms = time_search(searches[o->algo], &m, &slo, &x, &st, &r);
	if (r) {
		printf("no configuration meets %.0f ns, %.0f ops/s (%s search, %lu leaves, %.3f ms)\n",
		       slo.lat_ns, slo.tput_ops, search_names[o->algo], st.leaves, ms);
		redy_model_free(&m);
		return 3;
	}
	redy_model_get(&m, &x, &p);
	printf("s=%u c=%u b=%u q=%u: modelled %.0f ops/s, mean %.1f us (%s search, %lu leaves, %lu pruned, %.3f ms)\n",
	       x.s, x.c, x.b, x.q, p.tput_ops, p.lat_ns / 1e3,
	       search_names[o->algo], st.leaves, st.pruned, ms);
	redy_model_free(&m);
	return 0;
}

static double uniform(unsigned int *seed, double lo, double hi)
{
	return lo + (hi - lo) * (rand_r(seed) / ((double)RAND_MAX + 1));
}

/* A random leaf of the model (one it has). */
static void random_leaf(const struct redy_model *m, unsigned int *seed,
			struct redy_cfg *x, struct redy_perf *p)
{
	const struct redy_space *sp = &m->sp;

	do {
		x->s = rand_r(seed) % (sp->smax + 1);
		x->c = rand_r(seed) % sp->cmax + 1;
		x->b = rand_r(seed) % sp->bmax + 1;
		x->q = rand_r(seed) % sp->qmax + 1;
	} while (!redy_model_get(m, x, p));
}

/*
 * SLO accuracy (the paper's Figs. 13-14): random SLOs each met by some
 * leaf of the model (a leaf's latency made up to 50 % looser, its
 * throughput up to 50 % lower), the configuration the search picks for
 * each, run for -T seconds and compared with the SLO.
 */
static int cmd_slo(const struct opts *opts)
{
	unsigned int seed = opts->seed, i, met = 0, met_l = 0, met_t = 0, ran = 0;
	double ms_sum = 0, ms_max = 0, threads = 0;
	struct opts run = *opts, *o = &run;
	struct redy_model m;
	int r;

	if (load_model(o, &m))
		return 1;
	/* deployed as modelled */
	run.record = m.record_bytes;
	run.read_pct = m.read_pct;
	if (!run.record || run.record > REDY_MSG_BYTES / 2) {
		fprintf(stderr, PROG ": slo: %s: record size %u\n", o->model,
			run.record);
		redy_model_free(&m);
		return 1;
	}
	for (i = 0; i < o->nslo; i++) {
		struct redy_search_stats st;
		struct redy_perf leaf, mp, got;
		struct redy_cfg x;
		struct redy_slo slo;
		double ms;

		random_leaf(&m, &seed, &x, &leaf);
		slo.lat_ns = leaf.lat_ns * uniform(&seed, 1.0, 1.5);
		slo.tput_ops = leaf.tput_ops * uniform(&seed, 0.5, 1.0);
		ms = time_search(redy_search, &m, &slo, &x, &st, &r);
		ms_sum += ms;
		if (ms > ms_max)
			ms_max = ms;
		if (r) {	/* cannot happen: the leaf meets it */
			fprintf(stderr, PROG ": slo: no configuration for a feasible SLO\n");
			redy_model_free(&m);
			return 1;
		}
		redy_model_get(&m, &x, &mp);
		r = run_cfg(o, &x, &got, NULL);
		if (r) {
			fprintf(stderr, PROG ": slo: running s=%u c=%u b=%u q=%u: %s\n",
				x.s, x.c, x.b, x.q, strerror(-r));
			redy_model_free(&m);
			return 1;
		}
		ran++;
		threads += x.s + x.c;
		met_l += got.lat_ns <= slo.lat_ns;
		met_t += got.tput_ops >= slo.tput_ops;
		met += got.lat_ns <= slo.lat_ns && got.tput_ops >= slo.tput_ops;
		printf("{\"bench\":\"redy\",\"metric\":\"slo_met\",\"value\":%d,\"unit\":\"bool\",\"slo\":%u,",
		       got.lat_ns <= slo.lat_ns && got.tput_ops >= slo.tput_ops, i);
		cfg_json(stdout, &x);
		printf(",\"record_bytes\":%u,\"read_pct\":%u,\"slo_latency_ns\":%.0f,"
		       "\"slo_throughput_ops\":%.0f,\"model_latency_ns\":%.0f,"
		       "\"model_throughput_ops\":%.0f,\"latency_mean_ns\":%.0f,"
		       "\"throughput_ops\":%.0f,\"search_ms\":%.4f,"
		       "\"search_leaves\":%lu,\"plan_z\":%g",
		       m.record_bytes, m.read_pct, slo.lat_ns, slo.tput_ops,
		       mp.lat_ns, mp.tput_ops, got.lat_ns, got.tput_ops, ms,
		       st.leaves, m.z);
		bench_json_end(stdout);
	}
	printf("{\"bench\":\"redy\",\"metric\":\"slo_met_fraction\",\"value\":%.3f,\"unit\":\"fraction\",\"slos\":%u,\"plan_z\":%g", (double)met / ran, ran, m.z);
	bench_json_end(stdout);
	printf("{\"bench\":\"redy\",\"metric\":\"slo_latency_met_fraction\",\"value\":%.3f,\"unit\":\"fraction\",\"slos\":%u,\"plan_z\":%g", (double)met_l / ran, ran, m.z);
	bench_json_end(stdout);
	printf("{\"bench\":\"redy\",\"metric\":\"slo_throughput_met_fraction\",\"value\":%.3f,\"unit\":\"fraction\",\"slos\":%u,\"plan_z\":%g", (double)met_t / ran, ran, m.z);
	bench_json_end(stdout);
	/* what the planning costs: client and server threads chosen */
	printf("{\"bench\":\"redy\",\"metric\":\"slo_threads_mean\",\"value\":%.2f,\"unit\":\"threads\",\"slos\":%u,\"plan_z\":%g", threads / ran, ran, m.z);
	bench_json_end(stdout);
	printf("{\"bench\":\"redy\",\"metric\":\"search_ms_mean\",\"value\":%.4f,\"unit\":\"ms\",\"model\":\"measured\",\"leaves\":%lu,\"slos\":%u,\"plan_z\":%g", ms_sum / ran, redy_model_leaves(&m), ran, m.z);
	bench_json_end(stdout);
	printf("{\"bench\":\"redy\",\"metric\":\"search_ms_max\",\"value\":%.4f,\"unit\":\"ms\",\"model\":\"measured\",\"leaves\":%lu,\"slos\":%u,\"plan_z\":%g", ms_max, redy_model_leaves(&m), ran, m.z);
	bench_json_end(stdout);
	redy_model_free(&m);
	return 0;
}

/*
 * Search time on a model of the paper's size (§5.2: 30 server and client
 * threads, queue depth 16; batches up to 256 here, 1.9 million leaves),
 * synthetic, with each algorithm, over -n random SLOs.
 */
static int cmd_search_bench(const struct opts *o)
{
	const struct redy_space sp = { 30, 30, 256, 16 };
	unsigned int seed = o->seed, i, a;
	struct redy_model m;
	struct redy_cfg x;
	struct redy_perf p;
	double ms[3] = { 0 }, leaves[3] = { 0 };
	unsigned int found = 0, agree = 0;

	if (redy_model_init(&m, &sp))
		return 1;
	/* every leaf, from a smooth made-up law: only the size matters */
	for (x.s = 0; x.s <= sp.smax; x.s++)
		for (x.c = x.s ? x.s : 1; x.c <= sp.cmax; x.c++)
			for (x.b = 1; x.b <= (x.s ? sp.bmax : 1); x.b++)
				for (x.q = 1; x.q <= sp.qmax; x.q++) {
					double work = (double)x.c * x.b * x.q / (x.s + 1);

					p.lat_ns = (2000 + 150 * work) * uniform(&seed, 0.9, 1.1);
					p.tput_ops = 1e9 * x.c * x.q * x.b / p.lat_ns /
						     (1 + x.c * 0.05);
					redy_model_set(&m, &x, &p);
				}
	redy_model_finish(&m);
	for (i = 0; i < o->nslo; i++) {
		struct redy_cfg y[3];
		struct redy_search_stats st;
		struct redy_slo slo;
		int r[3];

		random_leaf(&m, &seed, &x, &p);
		slo.lat_ns = p.lat_ns * uniform(&seed, 1.0, 1.5);
		slo.tput_ops = p.tput_ops * uniform(&seed, 0.5, 1.0);
		for (a = 0; a < 3; a++) {
			ms[a] += time_search(searches[a], &m, &slo, &y[a], &st, &r[a]);
			leaves[a] += st.leaves;
		}
		found += !r[0];
		agree += r[0] == r[2] && (r[0] || !memcmp(&y[0], &y[2], sizeof(x)));
	}
	for (a = 0; a < 3; a++) {
		printf("{\"bench\":\"redy\",\"metric\":\"search_ms_mean\",\"value\":%.4f,\"unit\":\"ms\",\"model\":\"synthetic\",\"algorithm\":\"%s\",\"leaves\":%lu,\"leaves_read_mean\":%.0f,\"slos\":%u",
		       ms[a] / o->nslo, search_names[a], redy_model_leaves(&m),
		       leaves[a] / o->nslo, o->nslo);
		bench_json_end(stdout);
	}
	fprintf(stderr, PROG ": search-bench: %u of %u found; bounded agreed with exhaustive on %u\n",
		found, o->nslo, agree);
	redy_model_free(&m);
	return agree == o->nslo ? 0 : 1;
}

/* ---- the cache manager and caches ------------------------------------------ */

/* Sends one request line to the manager; prints the answer. */
static int mgr_line(const struct opts *o, const char *line, bool quiet)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(o->mgr_port) };
	char buf[65536];
	size_t len = 0;
	ssize_t n;
	int fd;

	inet_pton(AF_INET, o->mgr, &sin.sin_addr);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		fprintf(stderr, PROG ": manager %s:%u: %s\n", o->mgr, o->mgr_port,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	if (dprintf(fd, "%s\n", line) < 0)
		goto broken;
	for (;;) {
		char *end;

		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			goto broken;
		len += n;
		buf[len] = '\0';
		end = strstr(buf, "END\n");
		if (end && (end == buf || end[-1] == '\n')) {
			*end = '\0';
			break;
		}
		if (len == sizeof(buf) - 1)
			goto broken;
	}
	close(fd);
	if (!quiet || strncmp(buf, "OK", 2))
		fputs(buf, strncmp(buf, "OK", 2) ? stderr : stdout);
	return strncmp(buf, "OK", 2) ? 1 : 0;
broken:
	fprintf(stderr, PROG ": manager %s:%u: no answer\n", o->mgr, o->mgr_port);
	close(fd);
	return 1;
}

/* redy ctl|create|list|inspect|reshape|delete|reclaim|fail WORDS... */
static int cmd_mgr(const struct opts *o, const char *cmd, int argc, char **argv)
{
	static const struct { const char *cmd, *req; int words; } map[] = {
		{ "create", "ALLOCATE", 4 }, { "list", "LIST", 0 },
		{ "inspect", "INSPECT", 1 }, { "reshape", "RESIZE", 2 },
		{ "delete", "DEALLOCATE", 1 }, { "reclaim", "RECLAIM", 2 },
		{ "fail", "FAIL", 1 }, { "restore", "RESTORE", 1 },
		{ "server", "SERVER", 6 }, { "ctl", "", -1 },
	};
	const char *req;
	char line[512];
	size_t len = 0;
	unsigned int i;
	int k;

	for (i = 0; strcmp(map[i].cmd, cmd); i++)
		;
	req = map[i].req;
	if (!strcmp(cmd, "reshape") && argc == 4) {	/* with a new SLO */
		req = "RESHAPE";
	} else if (map[i].words >= 0 && argc != map[i].words) {
		fprintf(stderr, PROG ": %s takes %d operands (see redy -h)\n", cmd,
			map[i].words);
		return 2;
	}
	len = snprintf(line, sizeof(line), "%s", req);
	for (k = 0; k < argc && len < sizeof(line); k++)
		len += snprintf(line + len, sizeof(line) - len, "%s%s",
				len ? " " : "", argv[k]);
	if (len >= sizeof(line) || strchr(line, '\n')) {
		fprintf(stderr, PROG ": %s: request too long\n", cmd);
		return 2;
	}
	return mgr_line(o, line, false);
}

static bool is_mgr_cmd(const char *cmd)
{
	static const char *const cmds[] = { "create", "list", "inspect", "reshape",
		"delete", "reclaim", "fail", "restore", "server", "ctl" };
	unsigned int i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmd, cmds[i]))
			return true;
	return false;
}

static void fill(uint8_t *b, size_t n, uint64_t addr, uint32_t gen)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)((addr + i) * 11 + gen * 101 + ((addr + i) >> 9));
}

static void count_cb(void *arg, int status)
{
	int *bad = arg;

	if (status)
		(*bad)++;
}

/*
 * The cache's semantics and its survival of migration and failure
 * (tools/redy/tests/redy.sh): TAP on stdout.
 */
static int cmd_cache_test(const struct opts *o)
{
	const struct redy_slo slo = { o->lat_ns >= 0 ? o->lat_ns : 1e9,
				      o->tput >= 0 ? o->tput : 1 };
	struct redy_cache_opts co = { .pause_all = o->pause_all, .dev = o->dev,
				      .file = o->file };
	uint64_t cap = o->capacity, a, rb;
	uint8_t *shadow, *buf, blk[4096], *chk;
	struct redy_cache_stats st;
	struct redy_cache *c;
	struct redy_cfg cfg;
	unsigned int i, stale = 0, eio = 0, okio = 0;
	int r, bad = 0;
	char line[128];
	double t0;

	r = redy_cache_create(&c, o->mgr, o->mgr_port, cap, &slo, 3600, &co);
	check(!r, "Create: the manager allocates a cache", r);
	if (r)
		return 1;
	redy_cache_config(c, &cfg);
	printf("# cache %u: s=%u c=%u b=%u q=%u\n", redy_cache_id(c), cfg.s,
	       cfg.c, cfg.b, cfg.q);
	shadow = malloc(cap * 2);
	buf = malloc(cap * 2);
	chk = malloc(cap * 2);
	if (!shadow || !buf || !chk)
		return 1;

	/* Create's file: its bytes at address 0 on */
	if (o->file) {
		FILE *f = fopen(o->file, "r");
		size_t n = f ? fread(shadow, 1, cap, f) : 0;

		if (f)
			fclose(f);
		r = redy_cache_read(c, 0, buf, n);
		check(n && !r && !memcmp(buf, shadow, n),
		      "Create with a file: the cache holds the file's bytes", r);
	}

	/* the whole cache, written with batched asynchronous requests */
	fill(shadow, cap, 0, 1);
	for (a = 0; a < cap; a += 4096)
		redy_cache_submit(c, 1, a, shadow + a, cap - a < 4096 ? cap - a : 4096,
				  count_cb, &bad);
	r = redy_cache_flush(c);
	check(r > 0 && !bad, "Write: batched asynchronous writes of the whole cache", r < 0 ? r : 0);
	memset(buf, 0, cap);
	r = redy_cache_read(c, 0, buf, cap);
	check(!r && !memcmp(buf, shadow, cap), "Read: every byte as written", r);
	/* unaligned, across region boundaries */
	rb = cap / 4;
	fill(blk, sizeof(blk), rb - 100, 2);
	r = redy_cache_write(c, rb - 100, blk, 3000);
	memcpy(shadow + rb - 100, blk, 3000);
	r = r ?: redy_cache_read(c, rb - 1000, buf, 5000);
	check(!r && !memcmp(buf, shadow + rb - 1000, 5000),
	      "a write and a read across a region boundary", r);
	r = redy_cache_read(c, cap - 10, buf, 20);
	check(r == -EINVAL, "a read beyond the capacity: EINVAL", r == -EINVAL ? 0 : r);
	r = redy_cache_write(c, UINT64_MAX - 5, blk, 10);
	check(r == -EINVAL, "a write at a wrapping address: EINVAL", r == -EINVAL ? 0 : r);

	/* Reshape: grow, the old bytes stay; shrink */
	r = redy_cache_reshape(c, cap * 2);
	fill(shadow + cap, cap, cap, 3);
	r = r ?: redy_cache_write(c, cap, shadow + cap, cap);
	r = r ?: redy_cache_read(c, 0, buf, cap * 2);
	check(!r && !memcmp(buf, shadow, cap * 2),
	      "Reshape: grown to twice the capacity, old and new bytes right", r);
	r = redy_cache_reshape(c, cap);
	check(!r && redy_cache_read(c, cap, buf, 1) == -EINVAL &&
	      !redy_cache_read(c, 0, buf, cap) && !memcmp(buf, shadow, cap),
	      "Reshape: shrunk back, beyond it EINVAL, the rest intact", r);

	/*
	 * Reshape with a new SLO that needs server threads some of the
	 * cache's servers lack: their regions move, the bytes stay, the new
	 * configuration serves; then back to the first SLO (nothing moves).
	 */
	if (o->reshape_ops > 0) {
		const struct redy_slo hi = { slo.lat_ns, o->reshape_ops };
		struct redy_cfg nc;

		r = redy_cache_reshape_slo(c, cap, &hi);
		redy_cache_config(c, &nc);
		redy_cache_stats(c, &st);
		printf("# new SLO: s=%u c=%u b=%u q=%u, %llu regions moved\n", nc.s,
		       nc.c, nc.b, nc.q, (unsigned long long)st.regions_migrated);
		check(!r && nc.s > cfg.s && st.regions_migrated > 0,
		      "Reshape to a new SLO: a configuration with more server threads, regions moved", r);
		fill(blk, sizeof(blk), 77, 4);
		r = redy_cache_write(c, 77, blk, sizeof(blk));
		memcpy(shadow + 77, blk, sizeof(blk));
		r = r ?: redy_cache_read(c, 0, buf, cap);
		check(!r && !memcmp(buf, shadow, cap),
		      "Reshape to a new SLO: every byte kept, reads and writes over the new configuration", r);
		r = redy_cache_reshape_slo(c, cap, &(struct redy_slo){ 1, 1e12 });
		check(r == -ENOENT, "Reshape to an SLO no configuration meets: ENOENT",
		      r == -ENOENT ? 0 : r);
		redy_cache_stats(c, &st);
		a = st.regions_migrated;
		r = redy_cache_reshape_slo(c, cap, &slo);
		redy_cache_config(c, &nc);
		redy_cache_stats(c, &st);
		r = r ?: redy_cache_read(c, 0, buf, cap);
		check(!r && nc.s == cfg.s && st.regions_migrated == a &&
		      !memcmp(buf, shadow, cap),
		      "Reshape back to the first SLO: its configuration, nothing moved, bytes kept", r);
	}

	/*
	 * A reshape by someone else (redy reshape): the manager keeps it for
	 * the owner, whose migration thread hears of it and whose I/O thread
	 * makes it between two requests.
	 */
	snprintf(line, sizeof(line), "RESIZE %u %llu", redy_cache_id(c),
		 (unsigned long long)cap * 2);
	r = mgr_line(o, line, true);
	for (t0 = now_s(); !r && redy_cache_capacity(c) != cap * 2 &&
	     now_s() - t0 < 10;) {
		r = redy_cache_read(c, 0, buf, 64);
		usleep(10000);
	}
	check(!r && redy_cache_capacity(c) == cap * 2 &&
	      !redy_cache_write(c, cap, shadow, 4096) &&
	      !redy_cache_read(c, cap, buf, 4096) && !memcmp(buf, shadow, 4096),
	      "a reshape through the manager (redy reshape): the cache takes the new table", r);
	r = redy_cache_reshape(c, cap);
	r = r ?: redy_cache_read(c, 0, buf, cap);
	check(!r && !memcmp(buf, shadow, cap), "... and is shrunk back, bytes kept", r);

	/* migration under reads and writes: nothing stale, ever */
	if (o->reclaim) {
		unsigned int gen = 10;
		uint64_t mig0;

		redy_cache_stats(c, &st);
		mig0 = st.regions_migrated;	/* a reshape's moves before */

		snprintf(line, sizeof(line), "RECLAIM %s 30", o->reclaim);
		check(!mgr_line(o, line, true), "the manager takes the reclaim notice", 0);
		t0 = now_s();
		i = 0;
		do {
			a = (uint64_t)rand() % (cap - 256);
			if (i++ % 2) {
				fill(blk, 256, a, gen++);
				if (redy_cache_write(c, a, blk, 256))
					bad++;
				else
					memcpy(shadow + a, blk, 256);
			} else {
				r = redy_cache_read(c, a, buf, 256);
				if (r)
					bad++;
				else if (memcmp(buf, shadow + a, 256))
					stale++;
			}
			redy_cache_stats(c, &st);
		} while ((st.regions_migrated == mig0 || redy_cache_migrating(c)) &&
			 now_s() - t0 < 30 && !bad);
		printf("# %u requests during the migration, %llu regions moved\n", i,
		       (unsigned long long)(st.regions_migrated - mig0));
		check(st.regions_migrated > mig0 && !redy_cache_migrating(c),
		      "Migration: the reclaimed server's regions moved", 0);
		check(!bad && !stale, "Migration: no request failed, no read stale", 0);
		r = redy_cache_read(c, 0, buf, cap);
		check(!r && !memcmp(buf, shadow, cap),
		      "Migration: every byte right afterwards", r);
	}

	/* a server killed without notice */
	if (o->kill_pid > 0) {
		check(!kill(o->kill_pid, SIGKILL), "a memory server killed", errno);
		/* dead once it is a zombie or gone: its contexts are closed */
		for (t0 = now_s(); now_s() - t0 < 10;) {
			char path[64], stat[256] = "";
			FILE *f;

			snprintf(path, sizeof(path), "/proc/%d/stat", o->kill_pid);
			f = fopen(path, "r");
			if (!f)
				break;
			if (!fgets(stat, sizeof(stat), f))
				stat[0] = '\0';
			fclose(f);
			if (strstr(stat, ") Z "))
				break;
			usleep(10000);
		}
		/* the failure is seen when a request to it fails: probe */
		for (t0 = now_s(); now_s() - t0 < 20;) {
			eio = okio = 0;
			for (a = 0; a < cap; a += rb / 4) {
				r = redy_cache_read(c, a, buf, 64);
				if (r == -EIO)
					eio++;
				else if (!r && !memcmp(buf, shadow + a, 64))
					okio++;
			}
			if (eio)
				break;
			usleep(20000);
		}
		printf("# %.2f s after the kill: %u reads -EIO, %u right\n",
		       now_s() - t0, eio, okio);
		check(eio > 0 && eio + okio == (cap + rb / 4 - 1) / (rb / 4),
		      "Failure: only that server's regions fail, the others serve", 0);
		r = redy_cache_repopulate(c);
		check(r > 0, "Failure: new regions for the failed ones", r < 0 ? r : 0);
		for (a = 0; a < cap; a += 4096)
			redy_cache_submit(c, 1, a, shadow + a, cap - a < 4096 ? cap - a : 4096,
					  count_cb, &bad);
		redy_cache_flush(c);
		r = redy_cache_read(c, 0, buf, cap);
		check(!r && !bad && !memcmp(buf, shadow, cap),
		      "Failure: repopulated, the cache serves every byte again", r);
	}
	redy_cache_stats(c, &st);
	printf("# %llu reads, %llu writes, %llu failed, %llu waited for a migration\n",
	       (unsigned long long)st.reads, (unsigned long long)st.writes,
	       (unsigned long long)st.failed, (unsigned long long)st.waits);
	r = redy_cache_delete(c);
	check(!r, "Delete: the manager takes the cache back", r);
	free(shadow);
	free(buf);
	free(chk);
	printf("1..%u\n", checks);
	return failed ? 1 : 0;
}

/*
 * Migration's effect on latency over time (the paper's Figs. 15-16):
 * synchronous 50/50 reads and writes of -r bytes at random addresses; a
 * reclaim notice for server -X after 1 s; lines per 50 ms: mean read and
 * write latency and operations, until 1 s after the last region moved.
 */
static int cmd_migrate_bench(const struct opts *o)
{
	const struct redy_slo slo = { 1e9, 1 };
	struct redy_cache_opts co = { .pause_all = o->pause_all, .dev = o->dev,
				      .poll_ms = 20 };
	enum { BUCKET_MS = 50, BUCKETS = 1200 };
	static double sum[BUCKETS][2], mx[BUCKETS][2];
	static uint64_t cnt[BUCKETS][2];
	uint8_t buf[REDY_MSG_BYTES / 2];
	struct redy_cache_stats st;
	double t0, t, t_done = 0, t_notice = 0;
	struct redy_cache *c;
	char line[128];
	unsigned int b, k, last = 0;
	int r;

	r = redy_cache_create(&c, o->mgr, o->mgr_port, o->capacity, &slo, 3600, &co);
	if (r) {
		fprintf(stderr, PROG ": migrate-bench: create: %s\n", strerror(-r));
		return 1;
	}
	memset(buf, 7, sizeof(buf));
	t0 = now_s();
	for (;;) {
		uint64_t a = (uint64_t)rand() % (o->capacity - o->record);
		int w = rand() & 1;
		double s = now_s();

		r = w ? redy_cache_write(c, a, buf, o->record) :
			redy_cache_read(c, a, buf, o->record);
		t = now_s();
		if (r) {
			fprintf(stderr, PROG ": migrate-bench: %s\n", strerror(-r));
			break;
		}
		b = (t - t0) * 1000 / BUCKET_MS;
		if (b >= BUCKETS)
			break;
		sum[b][w] += (t - s) * 1e9;
		cnt[b][w]++;
		if ((t - s) * 1e9 > mx[b][w])
			mx[b][w] = (t - s) * 1e9;
		last = b;
		if (!t_notice && t - t0 >= 1) {
			snprintf(line, sizeof(line), "RECLAIM %s 60", o->reclaim);
			if (mgr_line(o, line, true))
				break;
			t_notice = t - t0;
		}
		redy_cache_stats(c, &st);
		if (t_notice && !t_done && st.regions_migrated &&
		    !redy_cache_migrating(c))
			t_done = t - t0;
		if (t_done && t - t0 > t_done + 1)
			break;
	}
	redy_cache_stats(c, &st);
	for (b = 0; b <= last; b++)
		for (k = 0; k < 2; k++) {
			if (!cnt[b][k])
				continue;
			printf("{\"bench\":\"redy\",\"metric\":\"migration_latency_mean_ns\",\"value\":%.0f,\"unit\":\"ns\",\"mode\":\"%s\",\"op\":\"%s\",\"t_ms\":%u,\"ops\":%llu,\"latency_max_ns\":%.0f,\"notice_ms\":%.0f,\"migrated_ms\":%.0f,\"regions\":%llu,\"record_bytes\":%u",
			       sum[b][k] / cnt[b][k], o->pause_all ? "baseline" : "optimized",
			       k ? "write" : "read", b * BUCKET_MS,
			       (unsigned long long)cnt[b][k], mx[b][k], t_notice * 1e3,
			       t_done * 1e3, (unsigned long long)st.regions_migrated,
			       o->record);
			bench_json_end(stdout);
		}
	redy_cache_delete(c);
	return r || !t_done ? 1 : 0;
}

/* ---- command line --------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: redy COMMAND [OPTIONS]\n"
		"  run     -a ADDR -s S -c C -b B -q Q   measure one configuration\n"
		"  verify  -a ADDR                       check both data paths\n"
		"  evil-server -a ADDR / evil-test -a ADDR   a lying server and the\n"
		"                                        client's refusals (TAP)\n"
		"  model   -a ADDR -S SMAX,CMAX,BMAX,QMAX [-g GAIN%%] [-k RUNS] [-Z SD] [-o FILE]\n"
		"                                        offline modelling\n"
		"  search  -m FILE -l LAT_NS -t OPS [-A bounded|fig10|exhaustive] [-Z SD]\n"
		"  slo     -a ADDR -m FILE [-n N] [-Z SD]   SLO accuracy, N random SLOs\n"
		"  search-bench [-n N]                   search time, paper-size model\n"
		"with the cache manager (-M ADDR[:PORT], default 127.0.0.1:7729):\n"
		"  server NAME ADDR PORT MEM_MB THREADS PRICE   offer a memory server\n"
		"  create BYTES LAT_NS OPS SECONDS       allocate a cache, print its regions\n"
		"  list | inspect ID | reshape ID BYTES [LAT_NS OPS] | delete ID\n"
		"  reclaim NAME SECONDS | fail NAME | restore NAME   server events\n"
		"  cache-test -C BYTES [-F FILE] [-G OPS] [-X NAME] [-K PID] [-P]\n"
		"                                        a cache's semantics, a new SLO,\n"
		"                                        migration, a failed server (TAP)\n"
		"  migrate-bench -C BYTES -X NAME [-P]   latency over a migration\n"
		"options: -p PORT (%u)  -d DEV  -r RECORD_BYTES (64)  -R READ_PCT (50)\n"
		"         -T SECONDS per measurement (1)  -z SEED  -j (JSON)\n"
		"         -P: migrate as the baseline (pause everything on the server)\n",
		REDY_DEFAULT_PORT);
}

static void parse_space(const char *s, struct redy_space *sp)
{
	if (sscanf(s, "%u,%u,%u,%u", &sp->smax, &sp->cmax, &sp->bmax,
		   &sp->qmax) != 4 || !redy_space_valid(sp) ||
	    sp->qmax > REDY_DEPTH_MAX || sp->bmax > REDY_BATCH_MAX ||
	    sp->smax > REDY_THREADS_MAX) {
		fprintf(stderr, PROG ": -S: %s: want SMAX,CMAX,BMAX,QMAX with SMAX <= CMAX, "
			"SMAX <= %u, BMAX <= %u, QMAX <= %u\n", s, REDY_THREADS_MAX,
			REDY_BATCH_MAX, REDY_DEPTH_MAX);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct opts o = {
		.port = REDY_DEFAULT_PORT, .record = 64, .read_pct = 50,
		.seconds = 1, .gain_pct = 5, .nslo = 50, .seed = 1,
		.span = 64ull << 20, .cfg = { 0, 1, 1, 1 },
		.sp = { 2, 2, 16, 8 }, .lat_ns = -1, .tput = -1,
		.mgr = "127.0.0.1", .mgr_port = 7729, .capacity = 8u << 20,
		.repeat = 1, .plan_z = -1,
	};
	const char *cmd, *colon;
	int opt;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	cmd = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "+a:p:d:s:c:b:q:r:R:T:S:g:o:m:l:t:A:n:z:jhM:C:PK:X:k:F:G:Z:")) != -1) {
		switch (opt) {
		case 'a': o.addr = optarg; break;
		case 'p': o.port = bench_opt_u64(PROG, "-p", optarg, 1, 65535 - REDY_THREADS_MAX - 1); break;
		case 'd': o.dev = optarg; break;
		case 's': o.cfg.s = bench_opt_u64(PROG, "-s", optarg, 0, REDY_THREADS_MAX); break;
		case 'c': o.cfg.c = bench_opt_u64(PROG, "-c", optarg, 1, REDY_CMAX); break;
		case 'b': o.cfg.b = bench_opt_u64(PROG, "-b", optarg, 1, REDY_BATCH_MAX); break;
		case 'q': o.cfg.q = bench_opt_u64(PROG, "-q", optarg, 1, REDY_DEPTH_MAX); break;
		case 'r': o.record = bench_opt_u64(PROG, "-r", optarg, 1, REDY_MSG_BYTES / 2); break;
		case 'R': o.read_pct = bench_opt_u64(PROG, "-R", optarg, 0, 100); break;
		case 'T': o.seconds = bench_opt_double(PROG, "-T", optarg, 0.01, 3600); break;
		case 'S': parse_space(optarg, &o.sp); break;
		case 'g': o.gain_pct = bench_opt_double(PROG, "-g", optarg, 0, 1000); break;
		case 'o': o.out = optarg; break;
		case 'm': o.model = optarg; break;
		case 'l': o.lat_ns = bench_opt_double(PROG, "-l", optarg, 0, 1e12); break;
		case 't': o.tput = bench_opt_double(PROG, "-t", optarg, 0, 1e12); break;
		case 'A':
			for (o.algo = 0; o.algo < 3 && strcmp(optarg, search_names[o.algo]); o.algo++)
				;
			if (o.algo == 3) {
				fprintf(stderr, PROG ": -A: %s: bounded, fig10 or exhaustive\n", optarg);
				return 2;
			}
			break;
		case 'n': o.nslo = bench_opt_u64(PROG, "-n", optarg, 1, 100000); break;
		case 'z': o.seed = bench_opt_u64(PROG, "-z", optarg, 0, UINT32_MAX); break;
		case 'j': o.json = 1; break;
		case 'M':
			colon = strchr(optarg, ':');
			if (colon)
				o.mgr_port = bench_opt_u64(PROG, "-M port", colon + 1, 1, 65535);
			snprintf(o.mgr, sizeof(o.mgr), "%.*s",
				 (int)(colon ? colon - optarg : (ptrdiff_t)strlen(optarg)), optarg);
			if (inet_pton(AF_INET, o.mgr, &(struct in_addr){ 0 }) != 1) {
				fprintf(stderr, PROG ": -M: %s is not ADDR[:PORT]\n", optarg);
				return 2;
			}
			break;
		case 'C': o.capacity = bench_opt_u64(PROG, "-C", optarg, 65536, 1ull << 32); break;
		case 'P': o.pause_all = 1; break;
		case 'K': o.kill_pid = bench_opt_u64(PROG, "-K", optarg, 2, 1u << 22); break;
		case 'X': o.reclaim = optarg; break;
		case 'F': o.file = optarg; break;
		case 'G': o.reshape_ops = bench_opt_double(PROG, "-G", optarg, 1, 1e12); break;
		case 'k': o.repeat = bench_opt_u64(PROG, "-k", optarg, 1, 100); break;
		case 'Z': o.plan_z = bench_opt_double(PROG, "-Z", optarg, 0, 10); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (is_mgr_cmd(cmd))
		return cmd_mgr(&o, cmd, argc - optind, argv + optind);
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	bench_init(PROG, o.dev);
	if (!strcmp(cmd, "cache-test"))
		return cmd_cache_test(&o);
	if (!strcmp(cmd, "migrate-bench")) {
		if (!o.reclaim || o.record > REDY_MSG_BYTES / 2 ||
		    o.capacity <= o.record) {
			fprintf(stderr, PROG ": migrate-bench needs -X NAME, -r below -C\n");
			return 2;
		}
		return cmd_migrate_bench(&o);
	}
	if (!strcmp(cmd, "search-bench"))
		return cmd_search_bench(&o);
	if (!strcmp(cmd, "search")) {
		if (!o.model || o.lat_ns < 0 || o.tput < 0) {
			fprintf(stderr, PROG ": search needs -m FILE -l LAT_NS -t OPS\n");
			return 2;
		}
		return cmd_search(&o);
	}
	if (!o.addr) {
		fprintf(stderr, PROG ": %s needs -a ADDR\n", cmd);
		return 2;
	}
	if (!strcmp(cmd, "run")) {
		if (!redy_cfg_valid(&(struct redy_space){ REDY_THREADS_MAX, REDY_CMAX,
							  REDY_BATCH_MAX, REDY_DEPTH_MAX },
				    &o.cfg)) {
			fprintf(stderr, PROG ": run: not a configuration (c >= s, b = 1 when s = 0)\n");
			return 2;
		}
		return cmd_run(&o);
	}
	if (!strcmp(cmd, "verify"))
		return cmd_verify(&o);
	if (!strcmp(cmd, "evil-server"))
		return cmd_evil_server(&o);
	if (!strcmp(cmd, "evil-test"))
		return cmd_evil_test(&o);
	if (!strcmp(cmd, "model"))
		return cmd_model(&o);
	if (!strcmp(cmd, "slo")) {
		if (!o.model) {
			fprintf(stderr, PROG ": slo needs -m FILE\n");
			return 2;
		}
		return cmd_slo(&o);
	}
	fprintf(stderr, PROG ": %s: no such command\n", cmd);
	usage(stderr);
	return 2;
}
