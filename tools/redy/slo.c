// SPDX-License-Identifier: GPL-2.0-only
/* Redy's configuration model and searches: see slo.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "slo.h"

enum { DS, DC, DB, DQ, NDIM };

bool redy_space_valid(const struct redy_space *sp)
{
	return sp->smax <= REDY_SMAX && sp->cmax >= 1 &&
	       sp->cmax <= REDY_CMAX && sp->smax <= sp->cmax &&
	       sp->bmax >= 1 && sp->bmax <= REDY_BMAX &&
	       sp->qmax >= 1 && sp->qmax <= REDY_QMAX;
}

static unsigned int cmin(unsigned int s)
{
	return s ? s : 1;
}

static unsigned int bmax_of(const struct redy_space *sp, unsigned int s)
{
	return s ? sp->bmax : 1;
}

bool redy_cfg_valid(const struct redy_space *sp, const struct redy_cfg *cfg)
{
	return cfg->s <= sp->smax && cfg->c >= cmin(cfg->s) &&
	       cfg->c <= sp->cmax && cfg->b >= 1 &&
	       cfg->b <= bmax_of(sp, cfg->s) && cfg->q >= 1 &&
	       cfg->q <= sp->qmax;
}

static size_t idx_scb(const struct redy_space *sp, unsigned int s,
		      unsigned int c, unsigned int b)
{
	return ((size_t)s * (sp->cmax + 1) + c) * (sp->bmax + 1) + b;
}

static size_t idx(const struct redy_space *sp, const unsigned int v[NDIM])
{
	return idx_scb(sp, v[DS], v[DC], v[DB]) * (sp->qmax + 1) + v[DQ];
}

static size_t cfg_idx(const struct redy_space *sp, const struct redy_cfg *cfg)
{
	const unsigned int v[NDIM] = { cfg->s, cfg->c, cfg->b, cfg->q };

	return idx(sp, v);
}

int redy_model_init(struct redy_model *m, const struct redy_space *sp)
{
	size_t n, i;

	memset(m, 0, sizeof(*m));
	if (!redy_space_valid(sp))
		return -EINVAL;
	m->sp = *sp;
	n = idx_scb(sp, sp->smax + 1, 0, 0) * (sp->qmax + 1);
	m->leaf = calloc(n, sizeof(*m->leaf));
	m->mean = calloc(n, sizeof(*m->mean));
	m->measured = calloc(n, 1);
	m->bs = calloc(sp->smax + 1, sizeof(*m->bs));
	m->bsc = calloc((size_t)(sp->smax + 1) * (sp->cmax + 1),
			sizeof(*m->bsc));
	m->bscb = calloc(idx_scb(sp, sp->smax + 1, 0, 0), sizeof(*m->bscb));
	if (!m->leaf || !m->mean || !m->measured || !m->bs || !m->bsc || !m->bscb) {
		redy_model_free(m);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		m->leaf[i].lat_ns = -1;
	return 0;
}

void redy_model_free(struct redy_model *m)
{
	free(m->leaf);
	free(m->mean);
	free(m->measured);
	free(m->bs);
	free(m->bsc);
	free(m->bscb);
	memset(m, 0, sizeof(*m));
}

/* What the planning makes of a mean (struct redy_model). */
static void plan_factors(const struct redy_model *m, double *fl, double *ft)
{
	*fl = 1 + m->z * m->cv_lat;
	*ft = 1 - m->z * m->cv_tput;
	if (*ft < 0.05)		/* noise this large: plan for a twentieth */
		*ft = 0.05;
}

static bool perf_ok(const struct redy_perf *p)
{
	return isfinite(p->lat_ns) && isfinite(p->tput_ops) &&
	       p->lat_ns >= 0 && p->tput_ops >= 0;
}

int redy_model_set(struct redy_model *m, const struct redy_cfg *cfg,
		   const struct redy_perf *p)
{
	double fl, ft;
	size_t i;

	if (!redy_cfg_valid(&m->sp, cfg) || !perf_ok(p))
		return -EINVAL;
	i = cfg_idx(&m->sp, cfg);
	if (!m->measured[i])
		m->nmeasured++;
	plan_factors(m, &fl, &ft);
	m->mean[i] = *p;
	m->leaf[i] = (struct redy_perf){ p->lat_ns * fl, p->tput_ops * ft };
	m->measured[i] = 1;
	return 0;
}

int redy_model_replan(struct redy_model *m, double z, double cv_lat,
		      double cv_tput)
{
	const struct redy_space *sp = &m->sp;
	double nl, nt;
	size_t i, n;

	if (!(z >= 0) || !(cv_lat >= 0) || !(cv_tput >= 0) || !isfinite(z) ||
	    !isfinite(cv_lat) || !isfinite(cv_tput))
		return -EINVAL;
	m->z = z;
	m->cv_lat = cv_lat;
	m->cv_tput = cv_tput;
	plan_factors(m, &nl, &nt);
	n = idx_scb(sp, sp->smax + 1, 0, 0) * (sp->qmax + 1);
	for (i = 0; i < n; i++) {
		if (!m->measured[i]) {
			m->leaf[i].lat_ns = -1;	/* interpolated again */
			continue;
		}
		m->leaf[i].lat_ns = m->mean[i].lat_ns * nl;
		m->leaf[i].tput_ops = m->mean[i].tput_ops * nt;
	}
	redy_model_finish(m);
	return 0;
}

bool redy_model_get(const struct redy_model *m, const struct redy_cfg *cfg,
		    struct redy_perf *p)
{
	const struct redy_perf *l;

	if (!m->leaf || !redy_cfg_valid(&m->sp, cfg))
		return false;
	l = &m->leaf[cfg_idx(&m->sp, cfg)];
	if (l->lat_ns < 0)
		return false;
	if (p)
		*p = *l;
	return true;
}

/* The range of dimension @d on the line through @v (inclusive). */
static void line_range(const struct redy_space *sp, const unsigned int v[NDIM],
		       int d, unsigned int *lo, unsigned int *hi)
{
	switch (d) {
	case DS:	/* b > 1 needs a server thread; c >= s */
		*lo = v[DB] > 1 ? 1 : 0;
		*hi = v[DC] < sp->smax ? v[DC] : sp->smax;
		break;
	case DC:
		*lo = cmin(v[DS]);
		*hi = sp->cmax;
		break;
	case DB:
		*lo = 1;
		*hi = bmax_of(sp, v[DS]);
		break;
	default:
		*lo = 1;
		*hi = sp->qmax;
	}
}

/* Fills the absent leaves of one line between two known ones. */
static void fill_line(struct redy_model *m, unsigned int v[NDIM], int d)
{
	unsigned int lo, hi, x, prev = 0, k;
	bool have_prev = false;
	struct redy_perf *a, *b, *t;
	double w;

	line_range(&m->sp, v, d, &lo, &hi);
	for (x = lo; x <= hi; x++) {
		v[d] = x;
		b = &m->leaf[idx(&m->sp, v)];
		if (b->lat_ns < 0)
			continue;
		if (have_prev && x > prev + 1) {
			v[d] = prev;
			a = &m->leaf[idx(&m->sp, v)];
			for (k = prev + 1; k < x; k++) {
				v[d] = k;
				t = &m->leaf[idx(&m->sp, v)];
				w = (double)(k - prev) / (x - prev);
				t->lat_ns = a->lat_ns + w * (b->lat_ns - a->lat_ns);
				t->tput_ops = a->tput_ops +
					      w * (b->tput_ops - a->tput_ops);
			}
		}
		prev = x;
		have_prev = true;
	}
}

/* Calls fill_line() on every line along dimension @d, from its first point. */
static void fill_dim(struct redy_model *m, int d)
{
	const struct redy_space *sp = &m->sp;
	unsigned int v[NDIM], lo, hi;
	struct redy_cfg x;

	for (x.s = 0; x.s <= sp->smax; x.s++)
		for (x.c = cmin(x.s); x.c <= sp->cmax; x.c++)
			for (x.b = 1; x.b <= bmax_of(sp, x.s); x.b++)
				for (x.q = 1; x.q <= sp->qmax; x.q++) {
					v[DS] = x.s;
					v[DC] = x.c;
					v[DB] = x.b;
					v[DQ] = x.q;
					line_range(sp, v, d, &lo, &hi);
					if (v[d] == lo)
						fill_line(m, v, d);
				}
}

static void bound_init(struct redy_bound *bd)
{
	bd->lat_min = INFINITY;
	bd->tput_max = -1;
}

static void bound_add(struct redy_bound *bd, double lat, double tput)
{
	if (lat < bd->lat_min)
		bd->lat_min = lat;
	if (tput > bd->tput_max)
		bd->tput_max = tput;
}

void redy_model_finish(struct redy_model *m)
{
	const struct redy_space *sp = &m->sp;
	struct redy_bound *bs, *bsc, *bscb;
	const struct redy_perf *l;
	unsigned int s, c, b, q;

	fill_dim(m, DQ);
	fill_dim(m, DB);
	fill_dim(m, DC);
	fill_dim(m, DS);
	for (s = 0; s <= sp->smax; s++) {
		bs = &m->bs[s];
		bound_init(bs);
		for (c = 0; c <= sp->cmax; c++) {
			bsc = &m->bsc[(size_t)s * (sp->cmax + 1) + c];
			bound_init(bsc);
			for (b = 0; b <= sp->bmax; b++) {
				bscb = &m->bscb[idx_scb(sp, s, c, b)];
				bound_init(bscb);
				if (c < cmin(s) || !b || b > bmax_of(sp, s))
					continue;
				for (q = 1; q <= sp->qmax; q++) {
					const unsigned int v[NDIM] = { s, c, b, q };

					l = &m->leaf[idx(sp, v)];
					if (l->lat_ns >= 0)
						bound_add(bscb, l->lat_ns,
							  l->tput_ops);
				}
				bound_add(bsc, bscb->lat_min, bscb->tput_max);
			}
			bound_add(bs, bsc->lat_min, bsc->tput_max);
		}
	}
}

unsigned long redy_model_leaves(const struct redy_model *m)
{
	const struct redy_space *sp = &m->sp;
	struct redy_cfg cfg;
	unsigned long n = 0;

	for (cfg.s = 0; cfg.s <= sp->smax; cfg.s++)
		for (cfg.c = cmin(cfg.s); cfg.c <= sp->cmax; cfg.c++)
			for (cfg.b = 1; cfg.b <= bmax_of(sp, cfg.s); cfg.b++)
				for (cfg.q = 1; cfg.q <= sp->qmax; cfg.q++)
					n += redy_model_get(m, &cfg, NULL);
	return n;
}

static bool meets(const struct redy_perf *p, const struct redy_slo *slo)
{
	return p->lat_ns <= slo->lat_ns && p->tput_ops >= slo->tput_ops;
}

static bool may_meet(const struct redy_bound *bd, const struct redy_slo *slo)
{
	return bd->lat_min <= slo->lat_ns && bd->tput_max >= slo->tput_ops;
}

static void stats_clear(struct redy_search_stats *st)
{
	if (st)
		memset(st, 0, sizeof(*st));
}

int redy_search(const struct redy_model *m, const struct redy_slo *slo,
		struct redy_cfg *cfg, struct redy_search_stats *st)
{
	const struct redy_space *sp = &m->sp;
	struct redy_search_stats dummy;
	struct redy_perf p;
	struct redy_cfg x;

	if (!st)
		st = &dummy;
	stats_clear(st);
	for (x.s = 0; x.s <= sp->smax; x.s++) {
		if (!may_meet(&m->bs[x.s], slo)) {
			st->pruned++;
			continue;
		}
		for (x.c = cmin(x.s); x.c <= sp->cmax; x.c++) {
			if (!may_meet(&m->bsc[(size_t)x.s * (sp->cmax + 1) + x.c],
				      slo)) {
				st->pruned++;
				continue;
			}
			for (x.b = 1; x.b <= bmax_of(sp, x.s); x.b++) {
				if (!may_meet(&m->bscb[idx_scb(sp, x.s, x.c, x.b)],
					      slo)) {
					st->pruned++;
					continue;
				}
				for (x.q = 1; x.q <= sp->qmax; x.q++) {
					st->leaves++;
					if (redy_model_get(m, &x, &p) &&
					    meets(&p, slo)) {
						*cfg = x;
						return 0;
					}
				}
			}
		}
	}
	return -ENOENT;
}

int redy_search_exhaustive(const struct redy_model *m,
			   const struct redy_slo *slo, struct redy_cfg *cfg,
			   struct redy_search_stats *st)
{
	const struct redy_space *sp = &m->sp;
	struct redy_perf p;
	struct redy_cfg x;
	unsigned long leaves = 0;

	stats_clear(st);
	for (x.s = 0; x.s <= sp->smax; x.s++)
		for (x.c = cmin(x.s); x.c <= sp->cmax; x.c++)
			for (x.b = 1; x.b <= bmax_of(sp, x.s); x.b++)
				for (x.q = 1; x.q <= sp->qmax; x.q++) {
					leaves++;
					if (redy_model_get(m, &x, &p) &&
					    meets(&p, slo)) {
						*cfg = x;
						if (st)
							st->leaves = leaves;
						return 0;
					}
				}
	if (st)
		st->leaves = leaves;
	return -ENOENT;
}

enum fig10 { F_INVALID, F_CONTINUE, F_SUCCESS };

static enum fig10 traverse(const struct redy_model *m,
			   const struct redy_slo *slo, struct redy_cfg *x,
			   int level, struct redy_search_stats *st)
{
	const struct redy_space *sp = &m->sp;
	enum fig10 node = F_INVALID, r;
	unsigned int lo, hi, *p, v;
	struct redy_perf perf;

	if (level == NDIM) {
		st->leaves++;
		/* an absent leaf says nothing either way: skip it */
		if (!redy_model_get(m, x, &perf))
			return F_CONTINUE;
		if (perf.lat_ns > slo->lat_ns)
			return F_INVALID;
		return perf.tput_ops >= slo->tput_ops ? F_SUCCESS : F_CONTINUE;
	}
	switch (level) {
	case DS:
		p = &x->s, lo = 0, hi = sp->smax;
		break;
	case DC:
		p = &x->c, lo = cmin(x->s), hi = sp->cmax;
		break;
	case DB:
		p = &x->b, lo = 1, hi = bmax_of(sp, x->s);
		break;
	default:
		p = &x->q, lo = 1, hi = sp->qmax;
	}
	for (v = lo; v <= hi; v++) {
		*p = v;
		r = traverse(m, slo, x, level + 1, st);
		if (r == F_SUCCESS)
			return F_SUCCESS;
		if (r == F_INVALID) {
			if (v < hi)
				st->pruned++;
			return node;
		}
		node = F_CONTINUE;
	}
	return node;
}

int redy_search_fig10(const struct redy_model *m, const struct redy_slo *slo,
		      struct redy_cfg *cfg, struct redy_search_stats *st)
{
	struct redy_search_stats dummy;
	struct redy_cfg x = { 0 };

	if (!st)
		st = &dummy;
	stats_clear(st);
	if (traverse(m, slo, &x, DS, st) != F_SUCCESS)
		return -ENOENT;
	*cfg = x;
	return 0;
}

/* Grid values of a dimension: [0,] 1, 2, 4, ... and @max itself. */
static unsigned int grid(unsigned int from, unsigned int max,
			 unsigned int *out)
{
	unsigned int n = 0, v;

	if (!from)
		out[n++] = 0;
	for (v = 1; v < max; v *= 2)
		out[n++] = v;
	out[n++] = max;
	return n;
}

static bool gained(double now, double before, double gain_pct)
{
	return now > before * (1 + gain_pct / 100);
}

int redy_model_build(struct redy_model *m, redy_measure_fn measure,
		     void *arg, double gain_pct)
{
	const struct redy_space *sp = &m->sp;
	unsigned int gs[16], gc[16], gb[16], gq[16];
	unsigned int ns, nc, nb, nq, i, j, k, l;
	double best_s, best_c, best_b, prev_s = -1, prev_c, prev_b, prev_q;
	struct redy_perf p;
	struct redy_cfg x;
	int r;

	ns = grid(0, sp->smax, gs);
	if (sp->smax == 0)
		ns = 1;
	nc = grid(1, sp->cmax, gc);
	nb = grid(1, sp->bmax, gb);
	nq = grid(1, sp->qmax, gq);
	for (i = 0; i < ns; i++) {
		x.s = gs[i];
		best_s = -1;
		prev_c = -1;
		for (j = 0; j < nc; j++) {
			x.c = gc[j];
			if (x.c < cmin(x.s))
				continue;
			best_c = -1;
			prev_b = -1;
			for (k = 0; k < nb && gb[k] <= bmax_of(sp, x.s); k++) {
				x.b = gb[k];
				best_b = -1;
				prev_q = -1;
				for (l = 0; l < nq; l++) {
					x.q = gq[l];
					r = measure(arg, &x, &p);
					if (r)
						return r;
					r = redy_model_set(m, &x, &p);
					if (r)
						return r;
					if (p.tput_ops > best_b)
						best_b = p.tput_ops;
					if (prev_q >= 0 &&
					    !gained(p.tput_ops, prev_q, gain_pct))
						break;
					prev_q = p.tput_ops;
				}
				if (best_b > best_c)
					best_c = best_b;
				if (prev_b >= 0 && !gained(best_b, prev_b, gain_pct))
					break;
				prev_b = best_b;
			}
			if (best_c > best_s)
				best_s = best_c;
			if (prev_c >= 0 && !gained(best_c, prev_c, gain_pct))
				break;
			prev_c = best_c;
		}
		/* s = 0 (one-sided) and s >= 1 (two-sided) are two modes:
		 * only server threads beyond the first must earn their place.
		 */
		if (x.s >= 2 && !gained(best_s, prev_s, gain_pct))
			break;
		if (x.s >= 1)
			prev_s = best_s;
	}
	redy_model_finish(m);
	return 0;
}

int redy_model_save(const struct redy_model *m, FILE *f)
{
	const struct redy_space *sp = &m->sp;
	struct redy_cfg x;
	struct redy_perf p;

	/* the means; version 2 also the planning parameters */
	if (m->z > 0)
		fprintf(f, "redy-model 2 %u %u %u %u %u %u %g %.4f %.4f\n", sp->smax,
			sp->cmax, sp->bmax, sp->qmax, m->record_bytes, m->read_pct,
			m->z, m->cv_lat, m->cv_tput);
	else
		fprintf(f, "redy-model 1 %u %u %u %u %u %u\n", sp->smax, sp->cmax,
			sp->bmax, sp->qmax, m->record_bytes, m->read_pct);
	for (x.s = 0; x.s <= sp->smax; x.s++)
		for (x.c = cmin(x.s); x.c <= sp->cmax; x.c++)
			for (x.b = 1; x.b <= bmax_of(sp, x.s); x.b++)
				for (x.q = 1; x.q <= sp->qmax; x.q++) {
					if (!m->measured[cfg_idx(sp, &x)])
						continue;
					p = m->mean[cfg_idx(sp, &x)];
					fprintf(f, "%u %u %u %u %.1f %.1f\n", x.s,
						x.c, x.b, x.q, p.lat_ns,
						p.tput_ops);
				}
	return fflush(f) || ferror(f) ? -EIO : 0;
}

int redy_model_load(struct redy_model *m, FILE *f, unsigned int *line)
{
	struct redy_space sp;
	unsigned int rb, rp, n = 1;
	double z = 0, cvl = 0, cvt = 0;
	struct redy_perf p;
	struct redy_cfg x;
	char buf[256], tail;
	int r;

	memset(m, 0, sizeof(*m));
	*line = 1;
	if (!fgets(buf, sizeof(buf), f))
		return -EINVAL;
	if ((sscanf(buf, "redy-model 1 %u %u %u %u %u %u %c", &sp.smax,
		    &sp.cmax, &sp.bmax, &sp.qmax, &rb, &rp, &tail) != 6 &&
	     sscanf(buf, "redy-model 2 %u %u %u %u %u %u %lf %lf %lf %c", &sp.smax,
		    &sp.cmax, &sp.bmax, &sp.qmax, &rb, &rp, &z, &cvl, &cvt,
		    &tail) != 9) || rp > 100 ||
	    !(z >= 0 && z <= 10 && cvl >= 0 && cvl <= 10 && cvt >= 0 && cvt <= 10))
		return -EINVAL;
	r = redy_model_init(m, &sp);
	if (r)
		return r;
	m->record_bytes = rb;
	m->read_pct = rp;
	m->z = z;
	m->cv_lat = cvl;
	m->cv_tput = cvt;
	while (fgets(buf, sizeof(buf), f)) {
		*line = ++n;
		if (!strchr(buf, '\n') && !feof(f))
			goto bad;
		if (sscanf(buf, "%u %u %u %u %lf %lf %c", &x.s, &x.c, &x.b,
			   &x.q, &p.lat_ns, &p.tput_ops, &tail) != 6 ||
		    redy_model_set(m, &x, &p))
			goto bad;
	}
	if (ferror(f))
		goto bad;
	redy_model_finish(m);
	return 0;
bad:
	redy_model_free(m);
	return -EINVAL;
}
