// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests for mrrc(8): formatting helpers, and the whole tool run
 * against a fake module behind ld --wrap=ioctl / --wrap=open.
 */
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mrrc_tool.h"

int __wrap_ioctl(int fd, unsigned long req, ...);
int __wrap_open(const char *path, int flags, ...);

#define FAKE_FD 42

/* The fake module: a device table and knobs to make it misbehave. */
static struct mrrc_dev_info fake_devs[4];
static unsigned int fake_ndevs;
static unsigned int grow_after_count;	/* add a device after a count-only call */
static int fake_open_errno;
static int fake_port_errno;
static unsigned int stat_calls;

static void fake_reset(void)
{
	memset(fake_devs, 0, sizeof(fake_devs));
	strcpy(fake_devs[0].name, "rxe0");
	fake_devs[0].dev_index = 3;
	fake_devs[0].phys_port_cnt = 1;
	fake_devs[0].node_guid = htobe64(0x205b34fffe4023daULL);
	fake_devs[0].sys_image_guid = htobe64(0x205b34fffe4023daULL);
	fake_devs[0].max_mr = 524287;
	fake_devs[0].max_fast_reg_page_list_len = 512;
	fake_devs[0].atomic_cap = MRRC_ATOMIC_HCA;
	fake_devs[1] = fake_devs[0];
	strcpy(fake_devs[1].name, "rxe1");
	fake_devs[1].dev_index = 4;
	fake_ndevs = 1;
	grow_after_count = 0;
	fake_open_errno = 0;
	fake_port_errno = 0;
	stat_calls = 0;
}

static int fake_ioctl(unsigned long req, void *arg)
{
	switch (req) {
	case MRRC_IOC_QUERY: {
		struct mrrc_query *q = arg;

		q->abi_version = MRRC_ABI_VERSION;
		q->num_devices = fake_ndevs;
		q->features = MRRC_FEATURE_DEVICES;
		return 0;
	}
	case MRRC_IOC_DEV_LIST: {
		struct mrrc_dev_list *dl = arg;
		struct mrrc_dev_info *out = (void *)(uintptr_t)dl->entries;
		unsigned int i;

		for (i = 0; i < dl->count && i < fake_ndevs; i++)
			out[i] = fake_devs[i];
		if (!dl->count && grow_after_count) {
			grow_after_count = 0;
			dl->count = fake_ndevs++;
			return 0;
		}
		dl->count = fake_ndevs;
		return 0;
	}
	case MRRC_IOC_CACHE_STATS: {
		struct mrrc_cache_stats *st = arg;

		if (st->flags != MRRC_STATS_GLOBAL)
			return -EINVAL;
		st->caches = 2;
		st->requests = 400 + stat_calls * 100;
		st->hit_exact = 200 + stat_calls * 100;
		st->hit_subset = 50;
		st->hit_span = 50;
		st->miss = 100;
		st->registrations = 100;
		st->cached_pages = 256;
		st->pinned_pages = 300;
		stat_calls++;
		return 0;
	}
	case MRRC_IOC_PORT_QUERY: {
		struct mrrc_port_query *pq = arg;
		struct mrrc_gid_entry *g = (void *)(uintptr_t)pq->gids;

		if (fake_port_errno)
			return -fake_port_errno;
		pq->state = MRRC_PORT_ACTIVE;
		pq->phys_state = 5;
		pq->max_mtu = 5;
		pq->active_mtu = 3;
		pq->link_layer = MRRC_LINK_LAYER_ETHERNET;
		if (pq->gid_count >= 1) {
			memset(g, 0, sizeof(*g));
			g->gid[0] = 0xfe;
			g->gid[1] = 0x80;
			g->gid[15] = 0xda;
			g->index = 0;
			g->gid_type = MRRC_GID_TYPE_ROCE_UDP_ENCAP;
		}
		pq->gid_count = 1;
		return 0;
	}
	}
	return -ENOTTY;
}

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	assert_int_equal(fd, FAKE_FD);
	ret = fake_ioctl(req, arg);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

int __wrap_open(const char *path, int flags, ...)
{
	(void)path;
	(void)flags;
	if (fake_open_errno) {
		errno = fake_open_errno;
		return -1;
	}
	return FAKE_FD;
}

/* close(FAKE_FD) fails with EBADF, which the tool ignores. */

struct run {
	int status;
	char *out, *err;
};

static struct run run_tool(int argc, char **argv)
{
	struct run r;
	size_t lo, le;
	FILE *out = open_memstream(&r.out, &lo);
	FILE *err = open_memstream(&r.err, &le);

	r.status = mrrc_tool_run(argc, argv, out, err);
	fclose(out);
	fclose(err);
	return r;
}

static void free_run(struct run *r)
{
	free(r->out);
	free(r->err);
}

static int setup(void **state)
{
	(void)state;
	fake_reset();
	return 0;
}

static void test_fmt_guid(void **state)
{
	char buf[20];

	(void)state;
	mrrc_fmt_guid(buf, htobe64(0x0002c90300a1b2c3ULL));
	assert_string_equal(buf, "0002:c903:00a1:b2c3");
	mrrc_fmt_guid(buf, 0);
	assert_string_equal(buf, "0000:0000:0000:0000");
	mrrc_fmt_guid(buf, UINT64_MAX);
	assert_string_equal(buf, "ffff:ffff:ffff:ffff");
}

static void test_fmt_gid(void **state)
{
	uint8_t gid[16] = { 0xfe, 0x80, [8] = 0x20, 0x5b, 0x34, 0xff,
			    0xfe, 0x40, 0x23, 0xda };
	char buf[40];

	(void)state;
	mrrc_fmt_gid(buf, gid);
	assert_string_equal(buf, "fe80:0000:0000:0000:205b:34ff:fe40:23da");
}

static void test_enum_strings(void **state)
{
	(void)state;
	assert_string_equal(mrrc_port_state_str(MRRC_PORT_ACTIVE), "PORT_ACTIVE");
	assert_string_equal(mrrc_port_state_str(99), "invalid state");
	assert_string_equal(mrrc_phys_state_str(5), "LINK_UP");
	assert_string_equal(mrrc_phys_state_str(0), "invalid physical state");
	assert_string_equal(mrrc_link_layer_str(MRRC_LINK_LAYER_ETHERNET), "Ethernet");
	assert_string_equal(mrrc_link_layer_str(7), "Unknown");
	assert_string_equal(mrrc_gid_type_str(MRRC_GID_TYPE_ROCE_UDP_ENCAP), "RoCE v2");
	assert_string_equal(mrrc_gid_type_str(3), "unknown");
	assert_string_equal(mrrc_atomic_cap_str(MRRC_ATOMIC_GLOB), "ATOMIC_GLOB");
	assert_string_equal(mrrc_atomic_cap_str(UINT32_MAX), "invalid");
	assert_int_equal(mrrc_mtu_bytes(1), 256);
	assert_int_equal(mrrc_mtu_bytes(5), 4096);
	assert_int_equal(mrrc_mtu_bytes(0), 0);
	assert_int_equal(mrrc_mtu_bytes(6), 0);
}

static void test_info(void **state)
{
	char *argv[] = { "mrrc", "info", NULL };
	struct run r;

	(void)state;
	r = run_tool(2, argv);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "mrrc: ABI 1, features 0x1, 1 device\n"));
	assert_non_null(strstr(r.out, "hca_id:\trxe0\n"));
	assert_non_null(strstr(r.out, "dev_index:\t\t\t3\n"));
	assert_non_null(strstr(r.out, "node_guid:\t\t\t205b:34ff:fe40:23da\n"));
	assert_non_null(strstr(r.out, "max_fast_reg_page_list_len:\t512\n"));
	assert_non_null(strstr(r.out, "atomic_cap:\t\t\tATOMIC_HCA (1)\n"));
	assert_non_null(strstr(r.out, "state:\t\t\tPORT_ACTIVE (4)\n"));
	assert_non_null(strstr(r.out, "active_mtu:\t\t1024 (3)\n"));
	assert_non_null(strstr(r.out, "GID[  0]:\t\tfe80:0000:0000:0000:0000:0000:0000:00da, RoCE v2\n"));
	assert_null(strstr(r.out, "max_cqe"));	/* -v only */
	assert_string_equal(r.err, "");
	free_run(&r);
}

static void test_info_verbose_one_device(void **state)
{
	char *argv[] = { "mrrc", "info", "-v", "-d", "rxe1", NULL };
	struct run r;

	(void)state;
	fake_ndevs = 2;
	r = run_tool(5, argv);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "hca_id:\trxe0"));
	assert_non_null(strstr(r.out, "hca_id:\trxe1"));
	assert_non_null(strstr(r.out, "max_cqe:"));
	free_run(&r);
}

static void test_info_unknown_device(void **state)
{
	char *argv[] = { "mrrc", "info", "-d", "nosuch0", NULL };
	struct run r;

	(void)state;
	r = run_tool(4, argv);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err, "mrrc: no device nosuch0\n");
	free_run(&r);
}

/* A device registered between the count and the listing is not lost. */
static void test_info_device_appears(void **state)
{
	char *argv[] = { "mrrc", "info", NULL };
	struct run r;

	(void)state;
	grow_after_count = 1;
	r = run_tool(2, argv);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "hca_id:\trxe0"));
	assert_non_null(strstr(r.out, "hca_id:\trxe1"));
	free_run(&r);
}

static void test_info_port_error(void **state)
{
	char *argv[] = { "mrrc", "info", NULL };
	struct run r;

	(void)state;
	fake_port_errno = ENODEV;
	r = run_tool(2, argv);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "port 1: query failed: No such device"));
	free_run(&r);
}

static void test_module_not_loaded(void **state)
{
	char *argv[] = { "mrrc", "info", NULL };
	struct run r;

	(void)state;
	fake_open_errno = ENOENT;
	r = run_tool(2, argv);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "is the mrrc module loaded?"));
	free_run(&r);
}

static void test_usage_errors(void **state)
{
	char *none[] = { "mrrc", NULL };
	char *bad[] = { "mrrc", "frobnicate", NULL };
	char *badopt[] = { "mrrc", "info", "-x", NULL };
	char *extra[] = { "mrrc", "info", "junk", NULL };
	char *help[] = { "mrrc", "--help", NULL };
	struct run r;

	(void)state;
	r = run_tool(1, none);
	assert_int_equal(r.status, 2);
	free_run(&r);
	r = run_tool(2, bad);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "unknown command 'frobnicate'"));
	free_run(&r);
	r = run_tool(3, badopt);
	assert_int_equal(r.status, 2);
	free_run(&r);
	r = run_tool(3, extra);
	assert_int_equal(r.status, 2);
	free_run(&r);
	r = run_tool(2, help);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage: mrrc"));
	free_run(&r);
}

static void test_version(void **state)
{
	char *argv[] = { "mrrc", "version", NULL };
	struct run r;

	(void)state;
	r = run_tool(2, argv);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "module ABI 1\n"));
	free_run(&r);
}

static void test_stat_once(void **state)
{
	char *argv[] = { "mrrc", "stat", NULL };
	struct run r;

	(void)state;
	r = run_tool(2, argv);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "contexts with a cache   2\n"));
	assert_non_null(strstr(r.out, "requests                400\n"));
	assert_non_null(strstr(r.out, "hit ratio               75.0%\n"));
	assert_non_null(strstr(r.out, "pinned                  300 pages\n"));
	free_run(&r);
}

/* Rates are deltas over the interval: 100 requests, all hits, in 2 s. */
static void test_stat_line(void **state)
{
	struct mrrc_cache_stats a = { .requests = 400, .hit_exact = 300,
				      .miss = 100 };
	struct mrrc_cache_stats b = a;
	char *out;
	size_t len;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	b.requests += 100;
	b.hit_exact += 100;
	b.cached_pages = 10;
	b.caches = 1;
	mrrc_stat_line(f, &a, &b, 2.0);
	fclose(f);
	assert_string_equal(out, "       50 100.0        0        0        0"
			    "        0       0        40         0      1\n");
	free(out);
}

static void test_stat_usage(void **state)
{
	char *zero[] = { "mrrc", "stat", "-i", "0", NULL };
	char *junk[] = { "mrrc", "stat", "-i", "x", NULL };
	char *count_only[] = { "mrrc", "stat", "-n", "3", NULL };
	struct run r;

	(void)state;
	r = run_tool(4, zero);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "bad interval '0'"));
	free_run(&r);
	r = run_tool(4, junk);
	assert_int_equal(r.status, 2);
	free_run(&r);
	r = run_tool(4, count_only);
	assert_int_equal(r.status, 2);
	free_run(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt_guid),
		cmocka_unit_test(test_fmt_gid),
		cmocka_unit_test(test_enum_strings),
		cmocka_unit_test_setup(test_info, setup),
		cmocka_unit_test_setup(test_info_verbose_one_device, setup),
		cmocka_unit_test_setup(test_info_unknown_device, setup),
		cmocka_unit_test_setup(test_info_device_appears, setup),
		cmocka_unit_test_setup(test_info_port_error, setup),
		cmocka_unit_test_setup(test_module_not_loaded, setup),
		cmocka_unit_test_setup(test_usage_errors, setup),
		cmocka_unit_test_setup(test_version, setup),
		cmocka_unit_test_setup(test_stat_once, setup),
		cmocka_unit_test(test_stat_line),
		cmocka_unit_test_setup(test_stat_usage, setup),
	};

	return cmocka_run_group_tests_name("mrrc tool", tests, NULL, NULL);
}
