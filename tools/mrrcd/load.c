// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrckv's load generator (`mrrckv load`, BENCH=kv): CLIENTS processes,
 * each with its own connection, run a GET/SET mix on Zipf-distributed
 * keys for a fixed time, closed loop (one request outstanding per
 * client); the parent gathers every latency and prints, per operation,
 * throughput and p50/p99 as one JSON line.  load_fill() stores the keys
 * first.  See load.h.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "load.h"

#define LOAD_MAX_CLIENTS	64
#define LOAD_MAX_KEYS		1000000u
#define LOAD_MAX_SECONDS	3600u

/* What a client reports to the parent, then its latencies (ns). */
struct load_result {
	int err;		/* 0, or the negative errno that ended it */
	int op_failed;		/* LOAD_GET, LOAD_SET or LOAD_CONNECT */
	uint64_t elapsed_ns;	/* from the start signal to its last reply */
	uint64_t n[2];		/* latencies that follow, per op */
	uint64_t misses;	/* GETs that found nothing */
	uint64_t retries;	/* one-sided torn reads retried */
	uint64_t at;		/* one-sided GETs done in one round trip */
};

enum { LOAD_GET, LOAD_SET, LOAD_CONNECT };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A uniform double in [0, 1). */
static double uniform(uint64_t *s)
{
	return (double)(xorshift(s) >> 11) / 9007199254740992.0;
}

/* The Zipf CDF over keys ranks 0..n-1 with exponent theta. */
static double *zipf_cdf(unsigned int n, double theta)
{
	double *cdf = malloc(n * sizeof(*cdf)), sum = 0;
	unsigned int i;

	if (!cdf)
		return NULL;
	for (i = 0; i < n; i++) {
		sum += 1.0 / pow(i + 1.0, theta);
		cdf[i] = sum;
	}
	for (i = 0; i < n; i++)
		cdf[i] /= sum;
	return cdf;
}

static unsigned int zipf_pick(const double *cdf, unsigned int n, uint64_t *s)
{
	double u = uniform(s);
	unsigned int lo = 0, hi = n - 1;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void key_name(char *buf, size_t len, unsigned int rank)
{
	snprintf(buf, len, "load:%u", rank);
}

/* Every value of a key is its rank's byte repeated: checked on GET. */
static unsigned char key_byte(unsigned int rank)
{
	return (unsigned char)('a' + rank % 26);
}

static int write_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t w = write(fd, c, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		c += w;
		len -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t len)
{
	char *c = p;

	while (len) {
		ssize_t r = read(fd, c, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;
		c += r;
		len -= (size_t)r;
	}
	return 0;
}

struct lat {
	uint64_t *v;
	uint64_t n, cap;
};

/* Room for @more latencies after the @n there are. */
static int lat_room(struct lat *l, uint64_t more)
{
	uint64_t cap = l->cap ? l->cap : 65536;
	uint64_t *v;

	if (more > SIZE_MAX / sizeof(*v) / 2 - l->n)
		return -ENOMEM;
	if (l->n + more <= l->cap)
		return 0;
	while (cap < l->n + more)
		cap *= 2;	/* below SIZE_MAX / sizeof(*v): checked above */
	v = realloc(l->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->v = v;
	l->cap = cap;
	return 0;
}

static int lat_add(struct lat *l, uint64_t ns)
{
	int err = lat_room(l, 1);

	if (!err)
		l->v[l->n++] = ns;
	return err;
}

static int one_op(struct kvc *k, const struct load_cfg *c, int op,
		  unsigned int rank, char *val, struct load_result *res)
{
	char key[32];
	const char *v;
	size_t len;
	int err;

	key_name(key, sizeof(key), rank);
	if (op == LOAD_SET) {
		memset(val, key_byte(rank), c->value_bytes);
		return kvc_store(k, "set", key, val, c->value_bytes, 0, 0);
	}
	err = c->one_sided ? kvc_oget(k, key, &v, &len, NULL) :
			     kvc_get(k, key, &v, &len, NULL);
	if (err == -ENOENT) {
		res->misses++;
		return 0;
	}
	if (err)
		return err;
	if (len != c->value_bytes ||
	    (len && (v[0] != (char)key_byte(rank) ||
		     v[len - 1] != (char)key_byte(rank))))
		return -EBADMSG;
	return 0;
}

/* One client: connect, say ready, wait for the start, run, report. */
static int client(const struct load_cfg *c, const double *cdf, unsigned int id,
		  int ready_fd, int go_fd, int out_fd)
{
	struct load_result res = { 0 };
	struct lat lat[2] = { 0 };
	uint64_t rng = 0x9e3779b97f4a7c15ULL * (id + 1), t0, t, end;
	char *val = malloc(c->value_bytes ? c->value_bytes : 1);
	bool connected = false;
	struct kvc k;
	char b = 1;
	int err = -ENOMEM;

	if (val) {
		err = c->connect(&k, c->connect_arg);
		connected = true;	/* kvc_close() after a failure is harmless */
	}
	if (!err && c->one_sided)
		err = kvc_set_meta(&k, c->meta);
	res.err = err;
	res.op_failed = LOAD_CONNECT;
	if (write_all(ready_fd, &b, 1))
		err = res.err = err ?: -EIO;
	close(ready_fd);	/* the parent sees EOF once all are ready */
	if (read_all(go_fd, &b, 1))
		err = res.err = err ?: -EIO;
	t0 = now_ns();
	end = t0 + (uint64_t)c->seconds * 1000000000u;
	t = t0;
	while (!err && t < end) {
		int op = uniform(&rng) < c->get_ratio ? LOAD_GET : LOAD_SET;
		unsigned int rank = zipf_pick(cdf, c->keys, &rng);
		uint64_t s = t;

		err = one_op(&k, c, op, rank, val, &res);
		t = now_ns();
		if (err)
			res.op_failed = op;
		else
			err = lat_add(&lat[op], t - s);
	}
	res.err = err;
	res.elapsed_ns = t - t0;
	res.n[0] = lat[0].n;
	res.n[1] = lat[1].n;
	if (c->one_sided && !res.err) {
		res.retries = k.st.oget_retries;
		res.at = k.st.oget_at;
	}
	if (connected)
		kvc_close(&k);
	err = write_all(out_fd, &res, sizeof(res));
	err = err ?: write_all(out_fd, lat[0].v, lat[0].n * sizeof(uint64_t));
	err = err ?: write_all(out_fd, lat[1].v, lat[1].n * sizeof(uint64_t));
	free(lat[0].v);
	free(lat[1].v);
	free(val);
	return err || res.err;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int load_fill(const struct load_cfg *c)
{
	char *val = malloc(c->value_bytes ? c->value_bytes : 1);
	struct load_result res = { 0 };
	unsigned int i;
	struct kvc k;
	int err;

	if (!val)
		return -ENOMEM;
	if (!c->keys || c->keys > LOAD_MAX_KEYS ||
	    c->value_bytes > LOAD_MAX_VALUE) {
		free(val);
		return -EINVAL;
	}
	err = c->connect(&k, c->connect_arg);
	for (i = 0; i < c->keys && !err; i++)
		err = one_op(&k, c, LOAD_SET, i, val, &res);
	kvc_close(&k);	/* harmless after a failed connect */
	free(val);
	return err;
}

static const char *const op_name[] = { "get", "set", "connect" };

int load_run(const struct load_cfg *c, FILE *out)
{
	int ready[2] = { -1, -1 }, go[2] = { -1, -1 };
	int res_fd[LOAD_MAX_CLIENTS];
	pid_t pid[LOAD_MAX_CLIENTS];
	struct lat all[2] = { 0 };
	uint64_t elapsed = 0, misses = 0, retries = 0, at = 0;
	unsigned int i, started = 0;
	double *cdf = NULL;
	int err = 0, op, st;
	char b;

	if (!c->clients || c->clients > LOAD_MAX_CLIENTS || !c->keys ||
	    c->keys > LOAD_MAX_KEYS || !c->seconds ||
	    c->seconds > LOAD_MAX_SECONDS || c->get_ratio < 0 ||
	    c->get_ratio > 1 || c->value_bytes > LOAD_MAX_VALUE)
		return -EINVAL;
	cdf = zipf_cdf(c->keys, c->zipf);
	if (!cdf)
		return -ENOMEM;
	if (pipe(ready) || pipe(go)) {
		err = -errno;
		goto out;
	}
	/* Clients that died must not kill us on the start signal. */
	signal(SIGPIPE, SIG_IGN);
	fflush(out);
	for (i = 0; i < c->clients; i++) {
		int p[2];

		if (pipe(p)) {
			err = -errno;
			break;
		}
		pid[i] = fork();
		if (pid[i] < 0) {
			err = -errno;
			close(p[0]);
			close(p[1]);
			break;
		}
		if (!pid[i]) {
			close(p[0]);
			close(ready[0]);
			close(go[1]);
			_exit(client(c, cdf, i, ready[1], go[0], p[1]));
		}
		close(p[1]);
		res_fd[i] = p[0];
		started++;
	}
	close(ready[1]);
	close(go[0]);
	ready[1] = go[0] = -1;
	/*
	 * All connected (or failed) first: then everyone starts at once.  A
	 * client that died before its byte leaves EOF here once the others
	 * have written theirs: the start goes out all the same, and its
	 * missing result fails the run.
	 */
	for (i = 0; i < started; i++)
		if (read_all(ready[0], &b, 1)) {
			err = err ?: -EIO;
			break;
		}
	for (i = 0; i < started; i++)
		if (write_all(go[1], &b, 1))
			err = err ?: -EIO;
	for (i = 0; i < started; i++) {
		struct load_result r;

		if (read_all(res_fd[i], &r, sizeof(r))) {
			err = err ?: -EIO;
			continue;
		}
		if (r.op_failed < LOAD_GET || r.op_failed > LOAD_CONNECT)
			r.op_failed = LOAD_CONNECT;
		if (r.err && !err) {
			fprintf(stderr, "mrrckv: load: client %u: %s: %s\n", i,
				op_name[r.op_failed], strerror(-r.err));
			err = r.err;
		}
		/* Each kind's latencies in one read, after the others'. */
		for (op = 0; op < 2; op++) {
			if (lat_room(&all[op], r.n[op])) {
				err = err ?: -ENOMEM;
				break;
			}
			if (read_all(res_fd[i], all[op].v + all[op].n,
				     r.n[op] * sizeof(uint64_t))) {
				err = err ?: -EIO;
				break;
			}
			all[op].n += r.n[op];
		}
		if (r.elapsed_ns > elapsed)
			elapsed = r.elapsed_ns;
		misses += r.misses;
		retries += r.retries;
		at += r.at;
	}
	for (i = 0; i < started; i++) {
		close(res_fd[i]);
		while (waitpid(pid[i], &st, 0) < 0 && errno == EINTR)
			;
	}
	if (err)
		goto out;
	for (op = 0; op < 2; op++) {
		struct lat *l = &all[op];

		if (!l->n)
			continue;
		qsort(l->v, l->n, sizeof(*l->v), cmp_u64);
		fprintf(out,
			"{\"op\":\"%s\",\"value_bytes\":%u,\"clients\":%u,\"get_ratio\":%.2f,\"keys\":%u,\"zipf\":%.2f,\"seconds\":%.3f,\"ops\":%llu,\"throughput_ops\":%.0f,\"latency_p50_ns\":%llu,\"latency_p99_ns\":%llu,\"misses\":%llu,\"oget_retries\":%llu,\"oget_one_read\":%llu}\n",
			op_name[op], c->value_bytes, c->clients, c->get_ratio,
			c->keys, c->zipf, elapsed / 1e9,
			(unsigned long long)l->n, l->n / (elapsed / 1e9),
			(unsigned long long)l->v[l->n / 2],
			(unsigned long long)l->v[l->n * 99 / 100],
			(unsigned long long)(op == LOAD_GET ? misses : 0),
			(unsigned long long)(op == LOAD_GET ? retries : 0),
			(unsigned long long)(op == LOAD_GET ? at : 0));
	}
	fflush(out);
out:
	if (ready[0] >= 0)
		close(ready[0]);
	if (ready[1] >= 0)
		close(ready[1]);
	if (go[0] >= 0)
		close(go[0]);
	if (go[1] >= 0)
		close(go[1]);
	free(all[0].v);
	free(all[1].v);
	free(cdf);
	return err;
}
