// SPDX-License-Identifier: GPL-2.0-only
/* mrrc(8) - "mrrc stat": the module's registration counters, once or live. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mrrc_tool.h"

/* The counters "mrrc stat" shows, by their names in the ABI. */
#define F(name) { #name, offsetof(struct mrrc_cache_stats, name) }
static const struct {
	const char *name;
	size_t off;
} counters[] = {
	F(caches), F(requests), F(hit_exact), F(hit_subset), F(hit_span),
	F(overlap), F(miss), F(registrations), F(reg_pages),
	F(deregistrations), F(dereg_pages), F(dereg_batches), F(max_batch),
	F(evictions), F(eviction_rounds), F(invalidations),
	F(cached_regions), F(cached_pages), F(pinned_pages),
	F(inuse_regions), F(handles), F(pool_mrs), F(pool_free),
	F(pool_hits), F(pool_misses), F(pool_refills), F(pool_aged),
	F(reg_wrs), F(inv_wrs), F(inv_chains), F(qp_resets),
	F(fast_fallbacks), F(whole_ranges), F(exposures), F(expo_ordinary),
	F(exposed), F(reg_timeouts), F(exports), F(exported),
	F(export_bytes), F(notifier_kept), F(reg_chained),
	F(reg_chain_uncached), F(reg_chain_failures), F(expo_chained),
	F(hit_unlocked), F(evicted_early),
};

#undef F

static uint64_t hits(const struct mrrc_cache_stats *s)
{
	return s->hit_exact + s->hit_subset + s->hit_span;
}

double mrrc_hit_pct(uint64_t hit, uint64_t requests)
{
	return requests ? 100.0 * hit / requests : 0.0;
}

/* The kernel's page size: the same as ours. */
static uint64_t page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (uint64_t)ps : 4096;
}

uint64_t mrrc_pages_kb(uint64_t pages)
{
	return pages * (page_size() / 1024);
}

/* All counters, one "name value" per line. */
void mrrc_stat_print(FILE *out, const struct mrrc_cache_stats *s)
{
	fprintf(out,
		"contexts with a cache   %" PRIu64 "\n"
		"requests                %" PRIu64 "\n"
		"  exact hits            %" PRIu64 "\n"
		"  subset hits           %" PRIu64 "\n"
		"  span hits             %" PRIu64 "\n"
		"  hits without a lock   %" PRIu64 "\n"
		"  overlaps              %" PRIu64 "\n"
		"  misses                %" PRIu64 "\n"
		"hit ratio               %.1f%%\n"
		"registrations           %" PRIu64 " (%" PRIu64 " pages)\n"
		"deregistrations         %" PRIu64 " (%" PRIu64 " pages) in %" PRIu64
		" batches, largest %" PRIu64 "\n"
		"evictions               %" PRIu64 " in %" PRIu64 " rounds, %"
		PRIu64 " early\n"
		"invalidations           %" PRIu64 "\n"
		"cached                  %" PRIu64 " regions, %" PRIu64 " pages\n"
		"pinned                  %" PRIu64 " pages\n"
		"in use                  %" PRIu64 " regions, %" PRIu64 " handles\n"
		"fast MR pools           %" PRIu64 " MRs, %" PRIu64 " free; %" PRIu64
		" hits, %" PRIu64 " misses, %" PRIu64 " refilled, %" PRIu64 " aged\n"
		"work requests           %" PRIu64 " REG_MR, %" PRIu64
		" LOCAL_INV in %" PRIu64 " chains, %" PRIu64 " QP resets\n"
		"fast fallbacks          %" PRIu64 "\n"
		"whole ranges            %" PRIu64 "\n"
		"exposures               %" PRIu64 " (%" PRIu64
		" ordinary), %" PRIu64 " live\n"
		"lost registration WRs   %" PRIu64 "\n"
		"exports                 %" PRIu64 " made, %" PRIu64
		" live (%" PRIu64 " bytes)\n"
		"notifier events kept    %" PRIu64 "\n"
		"chained REG_MRs         %" PRIu64 " (%" PRIu64 " around one in flight, %"
		PRIu64 " failed), %" PRIu64 " for exposures\n",
		(uint64_t)s->caches, (uint64_t)s->requests,
		(uint64_t)s->hit_exact, (uint64_t)s->hit_subset,
		(uint64_t)s->hit_span, (uint64_t)s->hit_unlocked,
		(uint64_t)s->overlap,
		(uint64_t)s->miss,
		mrrc_hit_pct(hits(s), s->requests),
		(uint64_t)s->registrations, (uint64_t)s->reg_pages,
		(uint64_t)s->deregistrations, (uint64_t)s->dereg_pages,
		(uint64_t)s->dereg_batches, (uint64_t)s->max_batch,
		(uint64_t)s->evictions, (uint64_t)s->eviction_rounds,
		(uint64_t)s->evicted_early, (uint64_t)s->invalidations,
		(uint64_t)s->cached_regions,
		(uint64_t)s->cached_pages, (uint64_t)s->pinned_pages,
		(uint64_t)s->inuse_regions, (uint64_t)s->handles,
		(uint64_t)s->pool_mrs, (uint64_t)s->pool_free,
		(uint64_t)s->pool_hits, (uint64_t)s->pool_misses,
		(uint64_t)s->pool_refills, (uint64_t)s->pool_aged,
		(uint64_t)s->reg_wrs, (uint64_t)s->inv_wrs,
		(uint64_t)s->inv_chains, (uint64_t)s->qp_resets,
		(uint64_t)s->fast_fallbacks, (uint64_t)s->whole_ranges,
		(uint64_t)s->exposures, (uint64_t)s->expo_ordinary,
		(uint64_t)s->exposed, (uint64_t)s->reg_timeouts,
		(uint64_t)s->exports, (uint64_t)s->exported,
		(uint64_t)s->export_bytes, (uint64_t)s->notifier_kept,
		(uint64_t)s->reg_chained, (uint64_t)s->reg_chain_uncached,
		(uint64_t)s->reg_chain_failures, (uint64_t)s->expo_chained);
}

/* JSON: an object of the counters, the hit ratio and the page size. */
void mrrc_stat_json(struct mrrc_json *j, const char *key,
		    const struct mrrc_cache_stats *s)
{
	unsigned int i;
	uint64_t v;

	mrrc_json_open(j, key, '{');
	mrrc_json_u64(j, "page_size", page_size());
	for (i = 0; i < ARRAY_SIZE(counters); i++) {
		memcpy(&v, (const char *)s + counters[i].off, sizeof(v));
		mrrc_json_u64(j, counters[i].name, v);
	}
	mrrc_json_double(j, "hit_pct", mrrc_hit_pct(hits(s), s->requests));
	mrrc_json_close(j, '}');
}

#define RATE(f) ((double)(b->f - a->f) / secs)
#define HIT_PCT mrrc_hit_pct(hits(b) - hits(a), b->requests - a->requests)

/* One line of "mrrc stat -i": rates over @secs and the gauges now. */
void mrrc_stat_line(FILE *out, const struct mrrc_cache_stats *a,
		    const struct mrrc_cache_stats *b, double secs)
{
	fprintf(out, "%9.0f %5.1f %8.0f %8.0f %8.0f %8.0f %7.0f %9" PRIu64
		" %9" PRIu64 " %6" PRIu64 "\n",
		RATE(requests), HIT_PCT, RATE(miss) + RATE(overlap),
		RATE(registrations), RATE(deregistrations), RATE(evictions),
		RATE(invalidations), mrrc_pages_kb(b->cached_pages),
		mrrc_pages_kb(b->pinned_pages), (uint64_t)b->caches);
}

/*
 * The same as one JSON object on one line (never pretty: JSON Lines), with
 * the counters now under "stats".
 */
void mrrc_stat_json_line(FILE *out, const struct mrrc_cache_stats *a,
			 const struct mrrc_cache_stats *b, double secs)
{
	struct mrrc_json j = { .out = out };

	mrrc_json_open(&j, NULL, '{');
	mrrc_json_double(&j, "seconds", secs);
	mrrc_json_double(&j, "req_per_s", RATE(requests));
	mrrc_json_double(&j, "hit_pct", HIT_PCT);
	mrrc_json_double(&j, "miss_per_s", RATE(miss) + RATE(overlap));
	mrrc_json_double(&j, "reg_per_s", RATE(registrations));
	mrrc_json_double(&j, "dereg_per_s", RATE(deregistrations));
	mrrc_json_double(&j, "evict_per_s", RATE(evictions));
	mrrc_json_double(&j, "inval_per_s", RATE(invalidations));
	mrrc_json_u64(&j, "cached_kb", mrrc_pages_kb(b->cached_pages));
	mrrc_json_u64(&j, "pinned_kb", mrrc_pages_kb(b->pinned_pages));
	mrrc_json_u64(&j, "caches", b->caches);
	mrrc_stat_json(&j, "stats", b);
	mrrc_json_close(&j, '}');
}

#undef HIT_PCT
#undef RATE

void mrrc_stat_header(FILE *out)
{
	fprintf(out, "%9s %5s %8s %8s %8s %8s %7s %9s %9s %6s\n", "req/s",
		"hit%", "miss/s", "reg/s", "dereg/s", "evict/s", "inval/s",
		"cachedKB", "pinnedKB", "caches");
}

/*
 * "mrrc stat": print the counters once, or every @interval seconds
 * @count times (0: until interrupted) as rates; as text, or JSON if @json.
 */
int mrrc_cmd_stat(int fd, FILE *out, struct mrrc_json *json,
		  unsigned int interval, unsigned int count)
{
	struct mrrc_cache_stats a, b;
	struct timespec t0, t1;
	unsigned int i;
	double secs;
	int ret;

	ret = mrrc_global_stats(fd, &a);
	if (ret)
		return ret;
	if (!interval) {
		if (json)
			mrrc_stat_json(json, NULL, &a);
		else
			mrrc_stat_print(out, &a);
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; !count || i < count; i++) {
		if (!json && i % 20 == 0)
			mrrc_stat_header(out);
		sleep(interval);
		ret = mrrc_global_stats(fd, &b);
		if (ret)
			return ret;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		secs = (t1.tv_sec - t0.tv_sec) +
		       (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (json)
			mrrc_stat_json_line(out, &a, &b, secs);
		else
			mrrc_stat_line(out, &a, &b, secs);
		fflush(out);
		a = b;
		t0 = t1;
	}
	return 0;
}
