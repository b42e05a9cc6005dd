// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc - registrars: how a cache turns a region into a registration.
 *
 * ordinary  ib_reg_user_mr() / ib_dereg_mr() per region: the baseline
 *           the papers compare against.  ib_core pins the pages and
 *           charges them to RLIMIT_MEMLOCK (unless CAP_IPC_LOCK).
 * model     touches no memory: registering p pages costs a*p + b,
 *           deregistering a batch of regions a'*pages + b' (b' once per
 *           batch).  Used by tests and trace replay so that every cache
 *           decision runs the real code without a NIC.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/mm.h>

#include "mrrc.h"
#include "cache.h"

/* MRRC_ACCESS_* to IB_ACCESS_* */
int mrrc_ib_access(u32 access)
{
	int ib = 0;

	if (access & MRRC_ACCESS_LOCAL_WRITE)
		ib |= IB_ACCESS_LOCAL_WRITE;
	if (access & MRRC_ACCESS_REMOTE_WRITE)
		ib |= IB_ACCESS_REMOTE_WRITE;
	if (access & MRRC_ACCESS_REMOTE_READ)
		ib |= IB_ACCESS_REMOTE_READ;
	if (access & MRRC_ACCESS_REMOTE_ATOMIC)
		ib |= IB_ACCESS_REMOTE_ATOMIC;
	return ib;
}

static noinline int mrrc_ordinary_reg(struct mrrc_cache *c,
				      struct mrrc_region *r)
{
	u64 start = (u64)r->it.start << PAGE_SHIFT;
	u64 len = mrrc_region_pages(r) << PAGE_SHIFT;
	struct ib_mr *mr;

	mr = ib_reg_user_mr(c->pd, start, len, start, mrrc_ib_access(r->access));
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	r->mr = mr;
	r->lkey = mr->lkey;
	r->rkey = mr->rkey;
	return 0;
}

ALLOW_ERROR_INJECTION(mrrc_ordinary_reg, ERRNO);

static u64 mrrc_ordinary_dereg(struct mrrc_cache *c, struct list_head *list,
			       unsigned int n, u64 pages)
{
	struct mrrc_region *r;

	list_for_each_entry(r, list, node) {
		ib_dereg_mr(r->mr);
		r->mr = NULL;
	}
	return 0;
}

const struct mrrc_registrar mrrc_registrar_ordinary = {
	.name = "ordinary",
	.pins = true,
	.reg = mrrc_ordinary_reg,
	.dereg = mrrc_ordinary_dereg,
};

static int mrrc_model_reg(struct mrrc_cache *c, struct mrrc_region *r)
{
	c->st.model_cost_ns += (u64)c->cfg.reg_ns_per_page *
			       mrrc_region_pages(r) + c->cfg.reg_ns_per_op;
	r->lkey = ++c->key_seq;
	r->rkey = r->lkey;
	return 0;
}

static u64 mrrc_model_dereg(struct mrrc_cache *c, struct list_head *list,
			    unsigned int n, u64 pages)
{
	c->st.model_cost_ns += (u64)c->cfg.dereg_ns_per_page * pages +
			       (u64)c->cfg.dereg_ns_per_region * n +
			       c->cfg.dereg_ns_per_op;
	return 0;
}

const struct mrrc_registrar mrrc_registrar_model = {
	.name = "model",
	.pins = false,
	.reg = mrrc_model_reg,
	.dereg = mrrc_model_dereg,
};
