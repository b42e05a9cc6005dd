// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests for mrrc(8): formatting helpers, and the whole tool run
 * against a fake module behind ld --wrap=ioctl / --wrap=open.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mrrc_tool.h"

int __wrap_ioctl(int fd, unsigned long req, ...);
int __wrap_open(const char *path, int flags, ...);
int __real_open(const char *path, int flags, ...);

#define FAKE_FD 42

/* The fake module: a device table and knobs to make it misbehave. */
static struct mrrc_dev_info fake_devs[4];
static unsigned int fake_ndevs;
static unsigned int grow_after_count;	/* add a device after a count-only call */
static int fake_open_errno;
static int fake_port_errno;
static unsigned int stat_calls;
static char open_path[64];		/* what the library opened */
static char blk_root[64];		/* mrrc blk's fake sysfs tree */

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
	open_path[0] = '\0';
	unsetenv("MRRC_DEVICE");
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
	/* mrrc blk's sysfs files, in the fake tree: real files. */
	if (blk_root[0] && !strncmp(path, blk_root, strlen(blk_root)))
		return __real_open(path, flags);
	snprintf(open_path, sizeof(open_path), "%s", path);
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

/*
 * The number of JSON values in @s, each ended by a newline (JSON Lines;
 * a pretty one spans lines), brackets matched outside strings and no raw
 * control characters in strings; -1 if not so.
 */
static int json_values(const char *s)
{
	char stack[16];
	int depth = 0, values = 0;
	bool in_str = false;

	for (; *s; s++) {
		if (in_str) {
			if ((unsigned char)*s < 0x20)
				return -1;
			if (*s == '\\') {
				if (!*++s)
					return -1;
			} else if (*s == '"') {
				in_str = false;
			}
			continue;
		}
		switch (*s) {
		case '"':
			in_str = true;
			break;
		case '{':
		case '[':
			if (depth == (int)sizeof(stack))
				return -1;
			stack[depth++] = *s == '{' ? '}' : ']';
			break;
		case '}':
		case ']':
			if (!depth || stack[--depth] != *s)
				return -1;
			break;
		case '\n':
			values += !depth;
			break;
		}
	}
	return depth || in_str ? -1 : values;
}

/* mrrc_json_escape(@s), as a string to free. */
static char *escaped(const char *s)
{
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	mrrc_json_escape(f, s);
	fclose(f);
	return buf;
}

static uint64_t kb(uint64_t pages)
{
	return pages * (sysconf(_SC_PAGESIZE) / 1024);
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
	char *out, want[128];
	size_t len;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	b.requests += 100;
	b.hit_exact += 100;
	b.cached_pages = 10;
	b.caches = 1;
	mrrc_stat_line(f, &a, &b, 2.0);
	fclose(f);
	snprintf(want, sizeof(want), "       50 100.0        0        0        0"
		 "        0       0 %9" PRIu64 "         0      1\n", kb(10));
	assert_string_equal(out, want);
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

#define FW_VER ((2ULL << 32) | (42 << 16) | 5)

static void test_fmt_fw_ver(void **state)
{
	char buf[24];

	(void)state;
	mrrc_fmt_fw_ver(buf, FW_VER);
	assert_string_equal(buf, "2.42.0005");
	mrrc_fmt_fw_ver(buf, (16ULL << 32) | (35 << 16) | 2000);
	assert_string_equal(buf, "16.35.2000");
	mrrc_fmt_fw_ver(buf, 0);
	assert_string_equal(buf, "0.0.0000");
	mrrc_fmt_fw_ver(buf, UINT64_MAX);
	assert_string_equal(buf, "4294967295.65535.65535");
}

static void assert_escaped(const char *in, const char *want)
{
	char *got = escaped(in);

	assert_string_equal(got, want);
	free(got);
}

static void test_json_escape(void **state)
{
	(void)state;
	assert_escaped("", "\"\"");
	assert_escaped("rxe0", "\"rxe0\"");
	assert_escaped("a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
	assert_escaped("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
	assert_escaped("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	/* Well-formed UTF-8 passes: é, €, U+1F600. */
	assert_escaped("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
		       "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
	/* Anything else byte by byte: stray, truncated, overlong, surrogate,
	 * past U+10FFFF.
	 */
	assert_escaped("\xff", "\"\\u00ff\"");
	assert_escaped("x\x80y", "\"x\\u0080y\"");
	assert_escaped("\xc3", "\"\\u00c3\"");
	assert_escaped("\xe2\x82", "\"\\u00e2\\u0082\"");
	assert_escaped("\xc0\xaf", "\"\\u00c0\\u00af\"");
	assert_escaped("\xe0\x80\xaf", "\"\\u00e0\\u0080\\u00af\"");
	assert_escaped("\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"");
	assert_escaped("\xf4\x90\x80\x80",
		       "\"\\u00f4\\u0090\\u0080\\u0080\"");
}

static void test_json_writer(void **state)
{
	struct mrrc_json j = { 0 };
	char *out;
	size_t len;

	(void)state;
	j.out = open_memstream(&out, &len);
	mrrc_json_open(&j, NULL, '{');
	mrrc_json_u64(&j, "max", UINT64_MAX);
	mrrc_json_str(&j, "s", "x");
	mrrc_json_double(&j, "d", 12.5);
	mrrc_json_open(&j, "empty", '[');
	mrrc_json_close(&j, ']');
	mrrc_json_open(&j, "a", '[');
	mrrc_json_u64(&j, NULL, 1);
	mrrc_json_open(&j, NULL, '{');
	mrrc_json_close(&j, '}');
	mrrc_json_close(&j, ']');
	mrrc_json_close(&j, '}');
	/* JSON Lines: the next value starts a line, no comma. */
	mrrc_json_open(&j, NULL, '{');
	mrrc_json_close(&j, '}');
	j.pretty = true;
	mrrc_json_open(&j, NULL, '{');
	mrrc_json_u64(&j, "n", 0);
	mrrc_json_open(&j, "a", '[');
	mrrc_json_str(&j, NULL, "v");
	mrrc_json_close(&j, ']');
	mrrc_json_close(&j, '}');
	fclose(j.out);
	assert_string_equal(out, "{\"max\":18446744073709551615,\"s\":\"x\","
			    "\"d\":12.500,\"empty\":[],\"a\":[1,{}]}\n"
			    "{}\n"
			    "{\n    \"n\": 0,\n    \"a\": [\n        \"v\"\n"
			    "    ]\n}\n");
	assert_int_equal(json_values(out), 3);
	free(out);
}

static void test_info_json(void **state)
{
	char *argv[] = { "mrrc", "-j", "info", NULL };
	struct run r;

	(void)state;
	fake_devs[0].max_mr_size = UINT64_MAX;
	r = run_tool(3, argv);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_int_equal(json_values(r.out), 1);
	assert_non_null(strstr(r.out, "{\"abi_version\":1,\"features\":1,"
			       "\"num_devices\":1,\"devices\":[{"
			       "\"hca_id\":\"rxe0\",\"dev_index\":3,"));
	assert_non_null(strstr(r.out, "\"node_guid\":\"205b:34ff:fe40:23da\","));
	assert_non_null(strstr(r.out, "\"max_mr_size\":18446744073709551615,"));
	assert_non_null(strstr(r.out, "\"max_fast_reg_page_list_len\":512,"));
	assert_non_null(strstr(r.out, "\"atomic_cap\":\"ATOMIC_HCA\","
			       "\"atomic_cap_raw\":1,\"ports\":[{\"port\":1,"
			       "\"state\":\"PORT_ACTIVE\",\"state_raw\":4,"));
	assert_non_null(strstr(r.out, "\"active_mtu\":1024,\"active_mtu_raw\":3,"));
	assert_non_null(strstr(r.out, "\"link_layer\":\"Ethernet\",\"gids\":[{"
			       "\"index\":0,\"gid\":\"fe80:0000:0000:0000:"
			       "0000:0000:0000:00da\",\"type\":\"RoCE v2\"}]}]}]}\n"));
	assert_null(strstr(r.out, "max_cqe"));	/* -v only */
	assert_null(strstr(r.out, "fw_ver"));
	assert_null(strstr(r.out, "\"lid\""));
	free_run(&r);
}

static void test_info_json_verbose(void **state)
{
	char *argv[] = { "mrrc", "--json", "info", "--verbose", NULL };
	char raw[64];
	struct run r;

	(void)state;
	fake_devs[0].fw_ver = FW_VER;
	fake_devs[0].max_cqe = 32767;
	r = run_tool(4, argv);
	assert_int_equal(r.status, 0);
	assert_int_equal(json_values(r.out), 1);
	snprintf(raw, sizeof(raw), "\"fw_ver\":\"2.42.0005\",\"fw_ver_raw\":%"
		 PRIu64 ",", (uint64_t)FW_VER);
	assert_non_null(strstr(r.out, raw));
	assert_non_null(strstr(r.out, "\"max_cqe\":32767,"));
	assert_non_null(strstr(r.out, "\"lid\":0,\"gid_tbl_len\":0,"));
	free_run(&r);
}

/* Text shows the firmware version the same way. */
static void test_info_fw_ver_text(void **state)
{
	char *argv[] = { "mrrc", "info", "-v", NULL };
	struct run r;

	(void)state;
	fake_devs[0].fw_ver = FW_VER;
	r = run_tool(3, argv);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\tfw_ver:\t\t\t\t2.42.0005\n"));
	free_run(&r);
}

static void test_info_json_pretty(void **state)
{
	char *argv[] = { "mrrc", "-j", "-p", "info", NULL };
	struct run r;

	(void)state;
	fake_ndevs = 2;
	r = run_tool(4, argv);
	assert_int_equal(r.status, 0);
	assert_int_equal(json_values(r.out), 1);
	assert_non_null(strstr(r.out, "{\n    \"abi_version\": 1,\n"));
	assert_non_null(strstr(r.out, "\n    \"devices\": [\n        {\n"
			       "            \"hca_id\": \"rxe0\",\n"));
	assert_non_null(strstr(r.out, "\n        },\n        {\n"
			       "            \"hca_id\": \"rxe1\",\n"));
	assert_non_null(strstr(r.out, "\n    ]\n}\n"));
	free_run(&r);
}

/* A device name with odd bytes stays valid JSON. */
static void test_info_json_odd_name(void **state)
{
	char *argv[] = { "mrrc", "-j", "info", "-d", "r\"x\\e\n\xff", NULL };
	struct run r;

	(void)state;
	strcpy(fake_devs[0].name, "r\"x\\e\n\xff");
	r = run_tool(5, argv);
	assert_int_equal(r.status, 0);
	assert_int_equal(json_values(r.out), 1);
	assert_non_null(strstr(r.out, "\"hca_id\":\"r\\\"x\\\\e\\n\\u00ff\","));
	free_run(&r);
}

static void test_info_json_port_error(void **state)
{
	char *argv[] = { "mrrc", "-j", "info", NULL };
	struct run r;

	(void)state;
	fake_port_errno = ENODEV;
	r = run_tool(3, argv);
	assert_int_equal(r.status, 0);
	assert_int_equal(json_values(r.out), 1);
	assert_non_null(strstr(r.out, "\"ports\":[{\"port\":1,"
			       "\"error\":\"No such device\"}]"));
	free_run(&r);
}

/* An unknown device prints nothing: no half JSON document. */
static void test_info_json_unknown_device(void **state)
{
	char *argv[] = { "mrrc", "-j", "info", "--device=nosuch0", NULL };
	struct run r;

	(void)state;
	r = run_tool(4, argv);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "mrrc: no device nosuch0\n");
	free_run(&r);
}

static void test_stat_json(void **state)
{
	char *argv[] = { "mrrc", "-j", "stat", NULL };
	char page[32];
	struct run r;

	(void)state;
	r = run_tool(3, argv);
	assert_int_equal(r.status, 0);
	assert_int_equal(json_values(r.out), 1);
	snprintf(page, sizeof(page), "{\"page_size\":%ld,",
		 sysconf(_SC_PAGESIZE));
	assert_ptr_equal(strstr(r.out, page), r.out);
	assert_non_null(strstr(r.out, ",\"caches\":2,\"requests\":400,"
			       "\"hit_exact\":200,\"hit_subset\":50,"));
	assert_non_null(strstr(r.out, "\"cached_pages\":256,"
			       "\"pinned_pages\":300,"));
	assert_non_null(strstr(r.out, "\"notifier_kept\":0,"
			       "\"reg_chained\":0,\"reg_chain_uncached\":0,"
			       "\"reg_chain_failures\":0,\"expo_chained\":0,"
			       "\"hit_unlocked\":0,\"evicted_early\":0,"
			       "\"hit_pct\":75.000}\n"));
	free_run(&r);
}

static void test_stat_json_line(void **state)
{
	struct mrrc_cache_stats a = { .requests = 400, .hit_exact = 300,
				      .miss = 100 };
	struct mrrc_cache_stats b = a;
	char *out, want[256];
	size_t len;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	b.requests += 100;
	b.hit_exact += 100;
	b.cached_pages = 10;
	b.caches = 1;
	mrrc_stat_json_line(f, &a, &b, 2.0);
	mrrc_stat_json_line(f, &b, &b, 2.0);
	fclose(f);
	assert_int_equal(json_values(out), 2);
	snprintf(want, sizeof(want), "{\"seconds\":2.000,\"req_per_s\":50.000,"
		 "\"hit_pct\":100.000,\"miss_per_s\":0.000,\"reg_per_s\":0.000,"
		 "\"dereg_per_s\":0.000,\"evict_per_s\":0.000,"
		 "\"inval_per_s\":0.000,\"cached_kb\":%" PRIu64 ",", kb(10));
	assert_ptr_equal(strstr(out, want), out);
	assert_non_null(strstr(out, "\"pinned_kb\":0,\"caches\":1,"
			       "\"stats\":{\"page_size\":"));
	assert_non_null(strstr(out, "}}\n{\"seconds\":2.000,\"req_per_s\":0.000,"
			       "\"hit_pct\":0.000,"));
	free(out);
}

/* -i with -j: JSON Lines, no header, one line even with -p. */
static void test_stat_json_interval(void **state)
{
	char *argv[] = { "mrrc", "-jp", "stat", "--interval", "1",
			 "--count=1", NULL };
	struct run r;

	(void)state;
	r = run_tool(6, argv);
	assert_int_equal(r.status, 0);
	assert_int_equal(json_values(r.out), 1);
	assert_non_null(strstr(r.out, "\"req_per_s\":"));
	assert_null(strstr(r.out, "req/s"));
	assert_ptr_equal(strchr(r.out, '\n'), r.out + strlen(r.out) - 1);
	free_run(&r);
}

static void test_version_json(void **state)
{
	char *argv[] = { "mrrc", "-j", "version", NULL };
	struct run r;

	(void)state;
	r = run_tool(3, argv);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "{\"tool_version\":\"" MRRC_TOOL_VERSION
			    "\",\"abi_version\":1,\"module_abi_version\":1}\n");
	free_run(&r);
}

/* --version and -V are the version command, JSON included. */
static void test_version_option(void **state)
{
	char *cmd[] = { "mrrc", "version", NULL };
	char *lng[] = { "mrrc", "--version", NULL };
	char *shrt[] = { "mrrc", "-V", NULL };
	char *json[] = { "mrrc", "--json", "--version", NULL };
	char *extra[] = { "mrrc", "--version", "junk", NULL };
	struct run want, r;

	(void)state;
	want = run_tool(2, cmd);
	assert_int_equal(want.status, 0);
	assert_non_null(strstr(want.out, "mrrc tool " MRRC_TOOL_VERSION
			       ", ABI 1\nmodule ABI 1\n"));
	r = run_tool(2, lng);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, want.out);
	free_run(&r);
	r = run_tool(2, shrt);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, want.out);
	free_run(&r);
	r = run_tool(3, json);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"module_abi_version\":1}\n"));
	free_run(&r);
	r = run_tool(3, extra);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "unexpected argument 'junk'"));
	free_run(&r);
	free_run(&want);
}

static void test_long_options(void **state)
{
	char *info[] = { "mrrc", "info", "--device", "rxe1", "--verbose", NULL };
	char *info_eq[] = { "mrrc", "info", "--device=rxe1", NULL };
	char *abbrev[] = { "mrrc", "--js", "info", "--verb", NULL };
	char *count[] = { "mrrc", "stat", "--interval=0", NULL };
	struct run r;

	(void)state;
	fake_ndevs = 2;
	r = run_tool(5, info);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "hca_id:\trxe0"));
	assert_non_null(strstr(r.out, "hca_id:\trxe1"));
	assert_non_null(strstr(r.out, "max_cqe:"));
	free_run(&r);
	r = run_tool(3, info_eq);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "hca_id:\trxe0"));
	assert_non_null(strstr(r.out, "hca_id:\trxe1"));
	free_run(&r);
	r = run_tool(4, abbrev);
	assert_int_equal(r.status, 0);
	assert_int_equal(json_values(r.out), 1);
	assert_non_null(strstr(r.out, "\"max_cqe\":"));
	free_run(&r);
	r = run_tool(3, count);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "bad interval '0'"));
	free_run(&r);
}

/* COMMAND --help, -h and help COMMAND: that command's usage, on stdout. */
static void test_command_help(void **state)
{
	static const struct {
		int argc;
		char *argv[4];
		const char *usage;
	} cases[] = {
		{ 3, { "mrrc", "info", "--help" }, "usage: mrrc [-j [-p]] info " },
		{ 3, { "mrrc", "info", "-h" }, "usage: mrrc [-j [-p]] info " },
		{ 3, { "mrrc", "stat", "--help" }, "usage: mrrc [-j [-p]] stat " },
		{ 3, { "mrrc", "version", "-h" }, "usage: mrrc [-j [-p]] version\n" },
		{ 3, { "mrrc", "help", "stat" }, "usage: mrrc [-j [-p]] stat " },
		{ 2, { "mrrc", "help" }, "usage: mrrc [-j [-p]] COMMAND " },
	};
	unsigned int i;
	struct run r;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		r = run_tool(cases[i].argc, (char **)cases[i].argv);
		assert_int_equal(r.status, 0);
		assert_ptr_equal(strstr(r.out, cases[i].usage), r.out);
		assert_string_equal(r.err, "");
		free_run(&r);
	}
	assert_string_equal(open_path, "");	/* help opens nothing */
	r = run_tool(3, (char *[]){ "mrrc", "info", "--help", NULL });
	assert_null(strstr(r.out, "commands:"));
	assert_non_null(strstr(r.out, "--device DEVICE"));
	free_run(&r);
}

/* Every usage error exits with 2 and says what was wrong. */
static void test_bad_options(void **state)
{
	static const struct {
		int argc;
		char *argv[5];
		const char *err;
	} cases[] = {
		{ 2, { "mrrc", "-x" }, "mrrc: unknown option '-x'\n" },
		{ 2, { "mrrc", "--bogus" }, "mrrc: unknown option '--bogus'\n" },
		{ 3, { "mrrc", "info", "-vx" }, "mrrc: info: unknown option '-x'\n" },
		{ 3, { "mrrc", "info", "--verbose=1" },
		  "mrrc: info: unknown option '--verbose=1'\n" },
		{ 3, { "mrrc", "info", "--device" },
		  "mrrc: info: missing argument to '--device'\n" },
		{ 3, { "mrrc", "stat", "-i" },
		  "mrrc: stat: missing argument to '-i'\n" },
		{ 3, { "mrrc", "stat", "--nope" },
		  "mrrc: stat: unknown option '--nope'\n" },
		{ 4, { "mrrc", "stat", "-n", "2" },
		  "mrrc: stat: --count needs --interval\n" },
		{ 3, { "mrrc", "version", "-q" },
		  "mrrc: version: unknown option '-q'\n" },
		{ 3, { "mrrc", "info", "-j" }, "mrrc: info: unknown option '-j'\n" },
		{ 3, { "mrrc", "help", "nope" }, "mrrc: unknown command 'nope'\n" },
		{ 2, { "mrrc", "-j" }, "mrrc: no command\n" },
	};
	unsigned int i;
	struct run r;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		r = run_tool(cases[i].argc, (char **)cases[i].argv);
		assert_int_equal(r.status, 2);
		assert_ptr_equal(strstr(r.err, cases[i].err), r.err);
		assert_non_null(strstr(r.err, "usage: mrrc"));
		assert_string_equal(r.out, "");
		free_run(&r);
	}
}

/* The path in the message is the one the library opened. */
static void test_open_error_path(void **state)
{
	char *argv[] = { "mrrc", "info", NULL };
	struct run r;

	(void)state;
	setenv("MRRC_DEVICE", "/tmp/elsewhere", 1);
	fake_open_errno = ENOENT;
	r = run_tool(2, argv);
	assert_int_equal(r.status, 1);
	assert_string_equal(open_path, "/tmp/elsewhere");
	assert_string_equal(r.err, "mrrc: cannot open /tmp/elsewhere "
			    "($MRRC_DEVICE): No such file or directory\n");
	free_run(&r);

	unsetenv("MRRC_DEVICE");
	r = run_tool(2, argv);
	assert_string_equal(open_path, MRRC_DEVICE_PATH);
	assert_string_equal(r.err, "mrrc: cannot open " MRRC_DEVICE_PATH
			    ": No such file or directory"
			    " (is the mrrc module loaded?)\n");
	free_run(&r);

	fake_open_errno = EACCES;
	r = run_tool(2, argv);
	assert_int_equal(r.status, 1);
	assert_ptr_equal(strstr(r.err, "mrrc: cannot open " MRRC_DEVICE_PATH
				": Permission denied ("), r.err);
	assert_non_null(strstr(r.err, "dev_mode"));
	free_run(&r);
}

/* version prints what it knows without the module, and fails. */
static void test_version_no_module(void **state)
{
	char *argv[] = { "mrrc", "-j", "version", NULL };
	struct run r;

	(void)state;
	fake_open_errno = ENOENT;
	r = run_tool(3, argv);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "{\"tool_version\":\"" MRRC_TOOL_VERSION
			    "\",\"abi_version\":1}\n");
	assert_non_null(strstr(r.err, "cannot open"));
	free_run(&r);
}

/* ---- mrrc blk: a fake sysfs tree under MRRC_SYSFS ---------------------- */


static void put_file(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", blk_root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *get_file(const char *rel)
{
	static char buf[256];
	char path[256];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", blk_root, rel);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void fake_disk(const char *name, const char *size, const char *stats)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "%s/block/%s", blk_root, name);
	assert_int_equal(mkdir(rel, 0755), 0);
	strcat(rel, "/mrrc");
	assert_int_equal(mkdir(rel, 0755), 0);
	snprintf(rel, sizeof(rel), "block/%s/size", name);
	put_file(rel, size);
	snprintf(rel, sizeof(rel), "block/%s/mrrc/peer", name);
	put_file(rel, "10.0.0.2:7726\n");
	snprintf(rel, sizeof(rel), "block/%s/mrrc/state", name);
	put_file(rel, "live\n");
	snprintf(rel, sizeof(rel), "block/%s/mrrc/queues", name);
	put_file(rel, "2 64\n");
	snprintf(rel, sizeof(rel), "block/%s/mrrc/stats", name);
	put_file(rel, stats);
}

static int blk_setup(void **state)
{
	char dir[128];

	(void)state;
	strcpy(blk_root, "/tmp/mrrc-blk-test.XXXXXX");
	assert_non_null(mkdtemp(blk_root));
	snprintf(dir, sizeof(dir), "%s/block", blk_root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/kernel", blk_root);
	assert_int_equal(mkdir(dir, 0755), 0);
	strcat(dir, "/mrrc_blk");
	assert_int_equal(mkdir(dir, 0755), 0);
	put_file("kernel/mrrc_blk/attach", "");
	put_file("kernel/mrrc_blk/detach", "");
	setenv("MRRC_SYSFS", blk_root, 1);
	return 0;
}

static int blk_teardown(void **state)
{
	char cmd[128];

	(void)state;
	unsetenv("MRRC_SYSFS");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", blk_root);
	assert_int_equal(system(cmd), 0);
	blk_root[0] = '\0';
	return 0;
}

static void test_blk_list(void **state)
{
	char *argv[] = { "mrrc", "blk", NULL };
	char *jargv[] = { "mrrc", "-j", "blk", "list", NULL };
	struct run r;

	(void)state;
	fake_disk("mrrcb10", "131072\n",
		  "reads 7\nwrites 3\nerrors 0\nreg_requests 200\nhit_exact 150\nhit_subset 40\nhit_span 0\nmiss 10\n");
	fake_disk("mrrcb2", "2048\n", "reads 1\nreg_requests 0\n");
	fake_disk("mrrcbx", "1\n", "");		/* not ours: skipped */
	r = run_tool(2, argv);
	assert_int_equal(r.status, 0);
	/* Sorted by number; 64 MiB; 190 of 200 hit. */
	assert_non_null(strstr(r.out, "\nmrrcb2 "));
	assert_true(strstr(r.out, "mrrcb2 ") < strstr(r.out, "mrrcb10 "));
	assert_non_null(strstr(r.out, "mrrcb10         64 10.0.0.2:7726         live      2x64          7          3      0   95.0\n"));
	assert_null(strstr(r.out, "mrrcbx"));
	free_run(&r);
	r = run_tool(4, jargv);
	assert_int_equal(r.status, 0);
	assert_int_equal(json_values(r.out), 1);
	assert_non_null(strstr(r.out, "\"name\":\"mrrcb10\",\"size_bytes\":67108864,\"peer\":\"10.0.0.2:7726\",\"state\":\"live\",\"queues\":2,\"queue_depth\":64,\"reads\":7,\"writes\":3,\"errors\":0,\"reg_requests\":200,\"reg_hits\":190,\"hit_pct\":95"));
	free_run(&r);
}

static void test_blk_attach_detach(void **state)
{
	char *att[] = { "mrrc", "blk", "attach", "10.0.0.2:7000", "-q", "2",
			"-d", "8", NULL };
	char *det[] = { "mrrc", "blk", "detach", "/dev/mrrcb3", NULL };
	struct run r;

	(void)state;
	r = run_tool(8, att);
	assert_int_equal(r.status, 0);
	assert_string_equal(get_file("kernel/mrrc_blk/attach"),
			    "10.0.0.2:7000 queues=2 depth=8");
	free_run(&r);
	r = run_tool(4, det);
	assert_int_equal(r.status, 0);
	assert_string_equal(get_file("kernel/mrrc_blk/detach"), "mrrcb3");
	free_run(&r);
}

static void test_blk_errors(void **state)
{
	char *noaddr[] = { "mrrc", "blk", "attach", NULL };
	char *badq[] = { "mrrc", "blk", "attach", "1.2.3.4", "-q", "0", NULL };
	char *detq[] = { "mrrc", "blk", "detach", "mrrcb0", "-q", "2", NULL };
	char *sub[] = { "mrrc", "blk", "frob", NULL };
	char *att[] = { "mrrc", "blk", "attach", "1.2.3.4", NULL };
	struct run r;

	(void)state;
	r = run_tool(3, noaddr);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "missing ADDR"));
	free_run(&r);
	r = run_tool(6, badq);
	assert_int_equal(r.status, 2);
	free_run(&r);
	r = run_tool(6, detq);
	assert_int_equal(r.status, 2);
	free_run(&r);
	r = run_tool(3, sub);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "unknown subcommand 'frob'"));
	free_run(&r);
	/* The module is not loaded: no control file. */
	strcat(blk_root, "/none");
	setenv("MRRC_SYSFS", blk_root, 1);
	blk_root[strlen(blk_root) - 5] = '\0';
	r = run_tool(4, att);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "is mrrc_blk loaded?"));
	free_run(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt_guid),
		cmocka_unit_test_setup_teardown(test_blk_list, blk_setup,
						blk_teardown),
		cmocka_unit_test_setup_teardown(test_blk_attach_detach,
						blk_setup, blk_teardown),
		cmocka_unit_test_setup_teardown(test_blk_errors, blk_setup,
						blk_teardown),
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
		cmocka_unit_test(test_fmt_fw_ver),
		cmocka_unit_test(test_json_escape),
		cmocka_unit_test(test_json_writer),
		cmocka_unit_test_setup(test_info_json, setup),
		cmocka_unit_test_setup(test_info_json_verbose, setup),
		cmocka_unit_test_setup(test_info_fw_ver_text, setup),
		cmocka_unit_test_setup(test_info_json_pretty, setup),
		cmocka_unit_test_setup(test_info_json_odd_name, setup),
		cmocka_unit_test_setup(test_info_json_port_error, setup),
		cmocka_unit_test_setup(test_info_json_unknown_device, setup),
		cmocka_unit_test_setup(test_stat_json, setup),
		cmocka_unit_test(test_stat_json_line),
		cmocka_unit_test_setup(test_stat_json_interval, setup),
		cmocka_unit_test_setup(test_version_json, setup),
		cmocka_unit_test_setup(test_version_option, setup),
		cmocka_unit_test_setup(test_long_options, setup),
		cmocka_unit_test_setup(test_command_help, setup),
		cmocka_unit_test_setup(test_bad_options, setup),
		cmocka_unit_test_setup(test_open_error_path, setup),
		cmocka_unit_test_setup(test_version_no_module, setup),
	};

	return cmocka_run_group_tests_name("mrrc tool", tests, NULL, NULL);
}
