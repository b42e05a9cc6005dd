/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Redy's SLO-driven configuration (redy-vldb2022 §5): a performance model
 * over the configuration space and the searches over it.
 *
 * A configuration is (s, c, b, q): server threads (0 = one-sided, no
 * server CPU on the data path), client threads (connections), requests
 * per batch and batches in flight per connection.  The space is the
 * paper's five-level tree: s from 0 to smax; c from max(s, 1) to cmax
 * (a server thread serves at least one connection); b from 1 to bmax,
 * but only b = 1 under s = 0 (a one-sided request is one READ or WRITE);
 * q from 1 to qmax.  Its pre-order visits configurations that use fewer
 * server threads, then fewer client threads, first: the first leaf in
 * pre-order that meets an SLO is the cheapest.
 *
 * A model holds the measured leaves (powers of two and the maxima, as the
 * offline modelling measures them, redy_model_build()) and fills the rest
 * by linear interpolation between measured neighbours, one dimension at a
 * time (q, then b, c, s).  A leaf neither measured nor between two known
 * ones is absent: no search returns it.
 */
#ifndef MRRC_REDY_SLO_H
#define MRRC_REDY_SLO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct redy_cfg {
	unsigned int s, c, b, q;
};

/* Mean latency of one I/O and I/Os per second, as measured or modelled. */
struct redy_perf {
	double lat_ns;
	double tput_ops;
};

/* An SLO: a mean latency at most lat_ns and a throughput at least tput. */
struct redy_slo {
	double lat_ns;
	double tput_ops;
};

struct redy_space {
	unsigned int smax, cmax, bmax, qmax;
};

/* The most each dimension may have (a model is a dense array). */
#define REDY_SMAX	64u
#define REDY_CMAX	64u
#define REDY_BMAX	256u
#define REDY_QMAX	64u

struct redy_bound {
	double lat_min;		/* the lowest latency of a subtree's leaves */
	double tput_max;	/* the highest throughput */
};

struct redy_model {
	struct redy_space sp;
	unsigned int record_bytes;	/* what was measured: record size */
	unsigned int read_pct;		/* and the share of reads */
	struct redy_perf *leaf;		/* [s][c][b][q], lat_ns < 0: absent */
	struct redy_perf *mean;		/* same index: the means measured */
	uint8_t *measured;		/* same index: 1 if measured */
	struct redy_bound *bs, *bsc, *bscb;	/* subtree bounds per level */
	unsigned long nmeasured;
	/*
	 * Planning for the run-to-run noise of the testbed: a measured
	 * leaf's mean latency and throughput (redy_model_set(), the file)
	 * are kept as lat * (1 + z * cv_lat) and tput * (1 - z * cv_tput),
	 * where cv_* are the relative standard deviations of single runs
	 * (pooled over the model's leaves); z = 0: the means themselves.
	 * The means are kept as well: replanning starts from them, never
	 * from a leaf divided by the old factor (off by a rounding).
	 */
	double z, cv_lat, cv_tput;
};

/* What a search did: leaves whose performance it read, subtrees skipped. */
struct redy_search_stats {
	unsigned long leaves;
	unsigned long pruned;
};

bool redy_space_valid(const struct redy_space *sp);
bool redy_cfg_valid(const struct redy_space *sp, const struct redy_cfg *cfg);

/* 0, -EINVAL for a space beyond the REDY_*MAX, or -ENOMEM. */
int redy_model_init(struct redy_model *m, const struct redy_space *sp);
void redy_model_free(struct redy_model *m);
/* Records a measured leaf: 0, or -EINVAL (not in the space, bad values). */
int redy_model_set(struct redy_model *m, const struct redy_cfg *cfg,
		   const struct redy_perf *p);
/* Interpolates the unmeasured leaves and computes the subtree bounds. */
void redy_model_finish(struct redy_model *m);
/*
 * New planning parameters (see struct redy_model): every measured leaf
 * re-derived from its mean, the others interpolated again, the bounds
 * recomputed.  -EINVAL for a negative or non-finite one.
 */
int redy_model_replan(struct redy_model *m, double z, double cv_lat,
		      double cv_tput);
/* The leaf's performance: true if the model has it. */
bool redy_model_get(const struct redy_model *m, const struct redy_cfg *cfg,
		    struct redy_perf *p);
/* Leaves the model has (measured or interpolated). */
unsigned long redy_model_leaves(const struct redy_model *m);

/*
 * The searches: 0 and *cfg set, or -ENOENT if no leaf meets @slo.
 *
 * redy_search_exhaustive() reads every leaf in pre-order and returns the
 * first that meets the SLO: the reference.  redy_search_fig10() is the
 * paper's Fig. 10 as printed: a leaf over the latency SLO is INVALID and
 * prunes its later siblings, INVALID climbing while no sibling said
 * CONTINUE, which is exact only if latency never falls as a parameter
 * grows.  redy_search() prunes a subtree only when its bounds show that
 * no leaf in it can meet the SLO, so it returns what the exhaustive search
 * returns on every model (tests/test_slo.c checks both claims).
 */
int redy_search(const struct redy_model *m, const struct redy_slo *slo,
		struct redy_cfg *cfg, struct redy_search_stats *st);
int redy_search_fig10(const struct redy_model *m, const struct redy_slo *slo,
		      struct redy_cfg *cfg, struct redy_search_stats *st);
int redy_search_exhaustive(const struct redy_model *m,
			   const struct redy_slo *slo, struct redy_cfg *cfg,
			   struct redy_search_stats *st);

/*
 * Offline modelling with the paper's two savings: only powers of two
 * (and each maximum) are measured, and a dimension stops growing as soon
 * as growing it did not raise the best throughput by more than
 * @gain_pct per cent ("early termination").  @measure returns 0 and the
 * configuration's performance, or a negative errno, which stops the
 * modelling and is returned.  Finishes the model.
 */
typedef int (*redy_measure_fn)(void *arg, const struct redy_cfg *cfg,
			       struct redy_perf *p);
int redy_model_build(struct redy_model *m, redy_measure_fn measure,
		     void *arg, double gain_pct);

/*
 * The model file: a header line
 *   redy-model 1 smax cmax bmax qmax record_bytes read_pct
 * then one line per measured leaf: "s c b q lat_ns tput_ops".  Load
 * returns 0 (the model finished), -EINVAL for a malformed file (line
 * number in *line), -ENOMEM.
 */
int redy_model_save(const struct redy_model *m, FILE *f);
int redy_model_load(struct redy_model *m, FILE *f, unsigned int *line);

#endif
