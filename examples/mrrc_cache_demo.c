// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * mrrc_cache_demo - the registration cache from an application's side.
 *
 * Opens a context on an RDMA device, registers parts of one buffer and
 * prints how the cache served each request: a miss registers, the same
 * range again is an exact hit, a range inside it a subset hit, a range
 * reaching past it an overlap (only the uncovered pages are registered).
 * Then the cache's counters, a flush, and a munmap that the cache sees.
 *
 *	mrrc_cache_demo [-d DEVICE]	(default: the first device)
 *
 * Build:  cc -o mrrc_cache_demo mrrc_cache_demo.c \
 *		$(pkg-config --cflags --libs libmrrc)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <mrrc/libmrrc.h>

#include "example.h"

static const char *const result_name[] = {
	[MRRC_RESULT_EXACT] = "exact hit",
	[MRRC_RESULT_SUBSET] = "subset hit",
	[MRRC_RESULT_SPAN] = "span of cached regions",
	[MRRC_RESULT_OVERLAP] = "overlap: remainder registered",
	[MRRC_RESULT_MISS] = "miss: registered",
};

/*
 * Register [addr, addr + len) for local writes and release it at once
 * (MRRC_REG_RELEASE): the region stays cached for the next request.
 */
static int reg(int fd, char *base, size_t off, size_t len)
{
	struct mrrc_reg_req req = {
		.addr = (uintptr_t)base + off, .length = len,
		.access = MRRC_ACCESS_LOCAL_WRITE, .flags = MRRC_REG_RELEASE,
	};
	struct mrrc_seg seg[8];
	unsigned int nseg = 8, i;
	int ret = mrrc_reg(fd, &req, 1, seg, &nseg);

	if (ret != 1) {
		ret = ret < 0 ? ret : req.status;
		fprintf(stderr, "mrrc_reg: %s\n", strerror(-ret));
		return ret;
	}
	printf("[+%7zu, %7zu bytes) %-30s %u segment(s):", off, len,
	       result_name[req.result], req.nsegs);
	for (i = 0; i < req.nsegs; i++)
		printf(" lkey %#x", seg[req.seg_index + i].lkey);
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	const size_t len = 64 * 4096;
	struct mrrc_cache_config cfg = {
		.mode = MRRC_MODE_FAST, .policy = MRRC_POLICY_MRE,
	};
	struct mrrc_cache_stats st;
	const char *dev = NULL;
	char *buf;
	int fd, ret, opt;

	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd') {
			fprintf(stderr, "usage: %s [-d DEVICE]\n", argv[0]);
			return 2;
		}
		dev = optarg;
	}

	fd = mrrc_open(0);
	if (fd < 0) {
		fprintf(stderr, "mrrc_open: %s (is the mrrc module loaded?)\n",
			strerror(-fd));
		return 1;
	}
	ret = mrrc_bind_first(fd, dev);
	if (!ret)
		ret = mrrc_cache_config(fd, &cfg);
	if (ret) {
		fprintf(stderr, "bind/config: %s\n", strerror(-ret));
		return 1;
	}
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		return perror("mmap"), 1;

	if (reg(fd, buf, 0, 16 * 4096) ||		/* miss */
	    reg(fd, buf, 0, 16 * 4096) ||		/* exact */
	    reg(fd, buf, 4096 + 100, 3000) ||		/* subset */
	    reg(fd, buf, 8 * 4096, 16 * 4096) ||	/* overlap */
	    reg(fd, buf, 0, 24 * 4096))			/* span */
		return 1;

	ret = mrrc_cache_stats(fd, &st);
	if (ret)
		return fprintf(stderr, "stats: %s\n", strerror(-ret)), 1;
	printf("requests %llu: exact %llu, subset %llu, span %llu, overlap %llu, miss %llu\n",
	       (unsigned long long)st.requests,
	       (unsigned long long)st.hit_exact,
	       (unsigned long long)st.hit_subset,
	       (unsigned long long)st.hit_span,
	       (unsigned long long)st.overlap, (unsigned long long)st.miss);
	printf("cached: %llu regions, %llu pages; pinned %llu pages\n",
	       (unsigned long long)st.cached_regions,
	       (unsigned long long)st.cached_pages,
	       (unsigned long long)st.pinned_pages);

	/*
	 * The cache watches the address space: unmapped memory leaves it (in
	 * the background, or at the next call, as here: FLUSH takes what
	 * the notifier dropped first, then whatever else is cached).
	 */
	munmap(buf, len);
	ret = mrrc_flush(fd);
	if (ret >= 0)
		ret = mrrc_cache_stats(fd, &st) ?: ret;
	if (ret < 0)
		return fprintf(stderr, "flush: %s\n", strerror(-ret)), 1;
	printf("after munmap: %llu regions cached, %llu invalidations, %d flushed\n",
	       (unsigned long long)st.cached_regions,
	       (unsigned long long)st.invalidations, ret);
	mrrc_close(fd);
	return 0;
}
