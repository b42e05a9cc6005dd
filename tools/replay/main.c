// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrc-replay - replay a block-I/O trace, or a synthetic one, through the
 * kernel's registration cache and print one JSON line of results.
 * See mrrc-replay(1) and Documentation/evaluation.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "benchjson.h"
#include "replay.h"

#define PROG "mrrc-replay"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mrrc-replay [options]\n"
		"  -d DEV      RDMA device (default $MRRC_DEV, else rxe0)\n"
		"  -f FORMAT   cloudphysics | msr | plain (read -t FILE, '-' = stdin)\n"
		"              cello | httpd (synthetic, see -n -N -z -s)\n"
		"  -t FILE     trace file\n"
		"  -n N        synthetic: requests (default 100000)\n"
		"  -N N        synthetic: distinct buffers (default 10000)\n"
		"  -z ALPHA    synthetic: Zipf skew (default 0.8)\n"
		"  -s SEED     synthetic: seed (default 1)\n"
		"  -p POLICY   mre (default) | lru | none | gdsf | gdsf-batch\n"
		"  -c PAGES    cache capacity in pages (default 4096)\n"
		"  -r N        cache capacity in regions (default 65536)\n"
		"  -R PCT      MRE resorting section, %% of cached pages\n"
		"  -E PCT      MRE eviction segment, %% of the capacity\n"
		"  -C a,b,a',b'[,c']  cost model in ns\n"
		"              (default 770,7420,220,1100,0)\n"
		"  -M NAME     name of the cost model in the output (default papers,\n"
		"              or custom with -C)\n"
		"  -l NAME     trace name in the output\n"
		"  -x          also run the user-space LRU reference and fail if\n"
		"              it disagrees (requests must not partially overlap)\n");
}

/* -C a,b,a',b'[,c']: four or five numbers, each 0 .. 2^32 - 1. */
static int parse_costs(const char *arg, uint32_t cost[5])
{
	char buf[128], *tok, *save;
	unsigned int n = 0;
	uint64_t v;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, arg);
	/* strtok_r() would pass over empty fields: "1,,2,3". */
	if (buf[0] == ',' || strstr(buf, ",,") || buf[strlen(buf) - 1] == ',')
		return -EINVAL;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == 5 || bench_parse_u64(tok, 0, UINT32_MAX, &v))
			return -EINVAL;
		cost[n++] = v;
	}
	if (n < 4)
		return -EINVAL;
	while (n < 5)
		cost[n++] = 0;
	return 0;
}

static const char *const policies[] = {
	[MRRC_POLICY_MRE] = "mre", [MRRC_POLICY_LRU] = "lru",
	[MRRC_POLICY_NONE] = "none", [MRRC_POLICY_GDSF] = "gdsf",
	[MRRC_POLICY_GDSF_BATCH] = "gdsf-batch",
};

int main(int argc, char **argv)
{
	struct replay_cfg cfg = { .policy = MRRC_POLICY_MRE,
				  .cache_pages = 4096, .max_regions = 65536 };
	struct synth syn = { .requests = 100000, .objects = 10000,
			     .zipf = 0.8, .seed = 1 };
	const char *format = "cello", *file = NULL, *name = NULL, *model = NULL;
	const char *dev = NULL;
	struct replay_result res;
	struct trace t = { 0 };
	int c, ret, check = 0;
	unsigned int p;

	while ((c = getopt(argc, argv,
			   "d:f:t:n:N:z:s:p:c:r:R:E:C:M:l:xh")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'f': format = optarg; break;
		case 't': file = optarg; break;
		case 'n':
			syn.requests = bench_opt_u64(PROG, "-n", optarg, 1,
						     UINT32_MAX);
			break;
		case 'N':
			syn.objects = bench_opt_u64(PROG, "-N", optarg, 1,
						    UINT32_MAX);
			break;
		case 'z':
			syn.zipf = bench_opt_double(PROG, "-z", optarg, 0, 100);
			break;
		case 's':
			syn.seed = bench_opt_u64(PROG, "-s", optarg, 0,
						 UINT64_MAX);
			break;
		case 'c':
			cfg.cache_pages = bench_opt_u64(PROG, "-c", optarg, 1,
							UINT64_MAX);
			break;
		case 'r':
			cfg.max_regions = bench_opt_u64(PROG, "-r", optarg, 1,
							UINT32_MAX);
			break;
		case 'R':
			cfg.resort_pct = bench_opt_u64(PROG, "-R", optarg, 0,
						       100);
			break;
		case 'E':
			cfg.evict_pct = bench_opt_u64(PROG, "-E", optarg, 0,
						      100);
			break;
		case 'l': name = optarg; break;
		case 'M': model = optarg; break;
		case 'x': check = 1; break;
		case 'C':
			if (parse_costs(optarg, cfg.cost)) {
				fprintf(stderr, "mrrc-replay: -C %s: want a,b,a',b'[,c'] (each 0..%u)\n",
					optarg, UINT32_MAX);
				return 2;
			}
			break;
		case 'p':
			for (p = 1; p < sizeof(policies) / sizeof(policies[0]); p++)
				if (policies[p] && !strcmp(optarg, policies[p]))
					break;
			if (p == sizeof(policies) / sizeof(policies[0])) {
				fprintf(stderr, "mrrc-replay: unknown policy %s\n", optarg);
				return 2;
			}
			cfg.policy = p;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	bench_init(PROG, dev);
	cfg.device = bench_dev();

	if (!strcmp(format, "cello") || !strcmp(format, "httpd")) {
		ret = format[0] == 'c' ? trace_synth_cello(&syn, &t) :
					 trace_synth_httpd(&syn, &t);
	} else {
		int (*rd)(FILE *, struct trace *, FILE *) =
			!strcmp(format, "cloudphysics") ? trace_read_cloudphysics :
			!strcmp(format, "msr") ? trace_read_msr :
			!strcmp(format, "plain") ? trace_read_plain : NULL;
		FILE *in;

		if (!rd || !file) {
			fprintf(stderr, "mrrc-replay: %s\n", rd ? "-t FILE needed" :
				"unknown format");
			return 2;
		}
		in = strcmp(file, "-") ? fopen(file, "re") : stdin;
		if (!in) {
			fprintf(stderr, "mrrc-replay: %s: %s\n", file, strerror(errno));
			return 1;
		}
		ret = rd(in, &t, stderr);
		if (in != stdin)
			fclose(in);
	}
	if (ret) {
		fprintf(stderr, "mrrc-replay: reading the trace: %s\n", strerror(-ret));
		return 1;
	}

	ret = replay_kernel(&t, &cfg, &res);
	if (ret) {
		fprintf(stderr, "mrrc-replay: replay on %s: %s\n", cfg.device,
			strerror(-ret));
		trace_free(&t);
		return 1;
	}
	/* Pages asked for, pages registered: how much the cache served. */
	uint64_t asked = 0;
	for (size_t i = 0; i < t.n; i++)
		asked += (t.r[i].addr + t.r[i].len - 1) / 4096 - t.r[i].addr / 4096 + 1;
	printf("{\"bench\":\"trace\",\"trace\":");
	bench_json_str(stdout, name ? name : format);
	printf(",\"policy\":\"%s\","
	       "\"cache_pages\":%" PRIu64 ",\"requests\":%" PRIu64 ","
	       "\"request_pages\":%" PRIu64 ",\"reg_pages\":%" PRIu64 ","
	       "\"page_hit_ratio\":%.6f,"
	       "\"hit_ratio\":%.6f,\"cost_us\":%.1f,\"registrations\":%" PRIu64
	       ",\"deregistrations\":%" PRIu64 ",\"dereg_batches\":%" PRIu64
	       ",\"overlaps\":%" PRIu64 ",\"misses\":%" PRIu64 ",\"evictions\":%"
	       PRIu64 ",\"eviction_rounds\":%" PRIu64 ",\"evicted_early\":%"
	       PRIu64 ",\"evict_segment\":%" PRIu64
	       ",\"resort_pct\":%u,\"evict_pct\":%u,\"cost_model\":",
	       policies[cfg.policy],
	       cfg.cache_pages, (uint64_t)res.st.requests, asked,
	       (uint64_t)res.st.reg_pages,
	       asked ? 1.0 - (double)res.st.reg_pages / asked : 0.0,
	       res.hit_ratio,
	       res.cost_us, (uint64_t)res.st.registrations,
	       (uint64_t)res.st.deregistrations, (uint64_t)res.st.dereg_batches,
	       (uint64_t)res.st.overlap, (uint64_t)res.st.miss,
	       (uint64_t)res.st.evictions, (uint64_t)res.st.eviction_rounds,
	       (uint64_t)res.st.evicted_early, (uint64_t)res.st.evict_segment,
	       cfg.resort_pct, cfg.evict_pct);
	bench_json_str(stdout, model ? model :
		       cfg.cost[0] ? "custom" : "papers");
	printf(",\"costs_ns\":\"%u,%u,%u,%u,%u\"", cfg.cost[0], cfg.cost[1],
	       cfg.cost[2], cfg.cost[3], cfg.cost[4]);
	bench_json_end(stdout);

	if (check) {
		struct refsim_result ref;
		uint64_t hits = res.st.hit_exact + res.st.hit_subset +
				res.st.hit_span;

		ret = refsim_lru(&t, cfg.cache_pages, cfg.max_regions, &ref);
		if (ret || cfg.policy != MRRC_POLICY_LRU || ref.hits != hits ||
		    ref.registrations != res.st.registrations ||
		    ref.deregistrations != res.st.deregistrations ||
		    res.st.overlap || res.st.hit_subset || res.st.hit_span) {
			fprintf(stderr, "mrrc-replay: reference LRU disagrees: "
				"hits %" PRIu64 "/%" PRIu64 ", registrations %"
				PRIu64 "/%" PRIu64 ", deregistrations %" PRIu64
				"/%" PRIu64 " (reference/kernel)%s\n", ref.hits,
				hits, ref.registrations,
				(uint64_t)res.st.registrations, ref.deregistrations,
				(uint64_t)res.st.deregistrations,
				cfg.policy != MRRC_POLICY_LRU ? "; -x needs -p lru" : "");
			trace_free(&t);
			return 1;
		}
		fprintf(stderr, "mrrc-replay: reference LRU agrees: %" PRIu64
			" hits, %" PRIu64 " registrations, %" PRIu64
			" deregistrations\n", ref.hits, ref.registrations,
			ref.deregistrations);
	}
	trace_free(&t);
	return 0;
}
