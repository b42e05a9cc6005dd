// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - the cost model of a cache, measured.
 *
 * A cache charges a registration of p pages a * p + b and a batch of n
 * deregistrations b' + c' * n (struct mrrc_cache_config).  The defaults
 * are the papers' figures, taken on a particular adapter; in the modes
 * that register for real (ordinary, fast) the cache measures what its own
 * registrar takes instead, as its requester sees it (pinning, mapping and
 * the verbs call, or preparing a REG_MR that is then chained; posting an
 * invalidation chain that is not waited for), and fits the model to it.
 * GDSF's priorities and gdsf-batch's segment then weigh what this cache
 * pays on this device.
 *
 * Each fit is a least-squares line (nanoseconds against pages or regions)
 * through the last two windows of MRRC_COST_WINDOW samples, made at the
 * end of each (kmod/costfit.h).  A caller that changes a cost figure
 * without MRRC_CACHE_MEASURE_COSTS keeps its figures: measuring stops
 * (Documentation/cache.rst, "Cost model").
 */
#include <linux/ktime.h>

#include "mrrc.h"
#include "cache.h"

/**
 * mrrc_cost_measuring() - whether @c's cost figures are being measured
 * @c: the cache
 */
bool mrrc_cost_measuring(struct mrrc_cache *c)
{
	return c->cost_measured && c->cfg.mode != MRRC_MODE_MODEL;
}

/**
 * mrrc_cost_clock() - start timing a registration or a batch
 * @c: the cache, c->mutex held
 *
 * Return: the time, for mrrc_cost_reg() or mrrc_cost_dereg(); 0 when @c's
 * costs are not measured (nothing is timed then).
 */
u64 mrrc_cost_clock(struct mrrc_cache *c)
{
	lockdep_assert_held(&c->mutex);
	return mrrc_cost_measuring(c) ? ktime_get_ns() : 0;
}

/**
 * mrrc_cost_reg() - a registration of @pages pages is done
 * @c: the cache, c->mutex held since mrrc_cost_clock()
 * @pages: pages registered
 * @t0: mrrc_cost_clock() before it began
 */
void mrrc_cost_reg(struct mrrc_cache *c, u64 pages, u64 t0)
{
	lockdep_assert_held(&c->mutex);
	if (t0)
		mrrc_cost_fold(&c->cost_reg, pages, ktime_get_ns() - t0,
			       &c->cfg.reg_ns_per_page, &c->cfg.reg_ns_per_op);
}

/**
 * mrrc_cost_dereg() - a batch of @n deregistrations is done
 * @c: the cache, c->mutex held since mrrc_cost_clock()
 * @n: regions in the batch
 * @t0: mrrc_cost_clock() before it began
 *
 * The measured model charges a batch b' + c' * n, and its a' is 0 from
 * the first fit on: what unpinning costs, where the requester pays it,
 * is in c'.
 */
void mrrc_cost_dereg(struct mrrc_cache *c, u64 n, u64 t0)
{
	lockdep_assert_held(&c->mutex);
	if (t0 && mrrc_cost_fold(&c->cost_dereg, n, ktime_get_ns() - t0,
				 &c->cfg.dereg_ns_per_region,
				 &c->cfg.dereg_ns_per_op))
		c->cfg.dereg_ns_per_page = 0;
}

/**
 * mrrc_cost_defaults() - the papers' figures (Wu et al., as both papers
 *	quote them): a = 0.77 us, b = 7.42 us, a' = 0.22 us, b' = 1.1 us,
 *	c' = 0
 * @k: the configuration to set them in
 */
void mrrc_cost_defaults(struct mrrc_cache_config_k *k)
{
	k->reg_ns_per_page = 770;
	k->reg_ns_per_op = 7420;
	k->dereg_ns_per_page = 220;
	k->dereg_ns_per_op = 1100;
	k->dereg_ns_per_region = 0;
}

/*
 * Set *@v to @want unless that is 0 (unchanged) or @cur, the figure in
 * force; whether it was set.
 */
static bool mrrc_cost_set(u32 *v, u32 cur, u32 want)
{
	if (!want || want == cur)
		return false;
	*v = want;
	return true;
}

/**
 * mrrc_cost_apply() - the figures @cfg changes, into @k
 * @k: the configuration being built
 * @cur: the configuration in force
 * @cfg: what the caller asked for
 *
 * Return: whether a figure changed.  One equal to the figure in force does
 * not: a caller that reads the configuration, changes something else and
 * passes it all back keeps the costs measured (and, switching to model
 * mode, gets the papers' figures @k was given).
 */
bool mrrc_cost_apply(struct mrrc_cache_config_k *k,
		     const struct mrrc_cache_config_k *cur,
		     const struct mrrc_cache_config *cfg)
{
	bool changed = false;

	changed |= mrrc_cost_set(&k->reg_ns_per_page, cur->reg_ns_per_page,
				 cfg->reg_ns_per_page);
	changed |= mrrc_cost_set(&k->reg_ns_per_op, cur->reg_ns_per_op,
				 cfg->reg_ns_per_op);
	changed |= mrrc_cost_set(&k->dereg_ns_per_page, cur->dereg_ns_per_page,
				 cfg->dereg_ns_per_page);
	changed |= mrrc_cost_set(&k->dereg_ns_per_op, cur->dereg_ns_per_op,
				 cfg->dereg_ns_per_op);
	changed |= mrrc_cost_set(&k->dereg_ns_per_region,
				 cur->dereg_ns_per_region,
				 cfg->dereg_ns_per_region);
	return changed;
}

/**
 * mrrc_cost_copy() - the five figures of @from, into @to
 * @to: configuration to change
 * @from: configuration to take them from
 */
void mrrc_cost_copy(struct mrrc_cache_config_k *to,
		    const struct mrrc_cache_config_k *from)
{
	to->reg_ns_per_page = from->reg_ns_per_page;
	to->reg_ns_per_op = from->reg_ns_per_op;
	to->dereg_ns_per_page = from->dereg_ns_per_page;
	to->dereg_ns_per_op = from->dereg_ns_per_op;
	to->dereg_ns_per_region = from->dereg_ns_per_region;
}

/**
 * mrrc_cost_restart() - start measuring afresh, or stop
 * @c: the cache, c->mutex held
 * @measure: measure from now on (while its mode registers for real)
 */
void mrrc_cost_restart(struct mrrc_cache *c, bool measure)
{
	lockdep_assert_held(&c->mutex);
	c->cost_measured = measure;
	memset(&c->cost_reg, 0, sizeof(c->cost_reg));
	memset(&c->cost_dereg, 0, sizeof(c->cost_dereg));
}
