// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Host unit tests for libmrrc: ioctl() and open() are replaced through
 * ld --wrap, so every request the library builds can be inspected.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "libmrrc.h"

int __wrap_ioctl(int fd, unsigned long req, ...);
int __wrap_open(const char *path, int flags, ...);

/* The mock: checks the command, lets a test hook look at the argument. */
static void (*on_ioctl)(unsigned long req, void *arg);

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);

	check_expected(fd);
	check_expected(req);
	if (on_ioctl)
		on_ioctl(req, arg);
	ret = mock_type(int);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

int __wrap_open(const char *path, int flags, ...)
{
	int ret;

	check_expected(path);
	check_expected(flags);
	ret = mock_type(int);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

static void expect_ioctl(unsigned long req, int ret)
{
	expect_value(__wrap_ioctl, fd, 7);
	expect_value(__wrap_ioctl, req, req);
	will_return(__wrap_ioctl, ret);
}

static int reset(void **state)
{
	(void)state;
	on_ioctl = NULL;
	unsetenv("MRRC_DEVICE");
	return 0;
}

static void hook_query(unsigned long req, void *arg)
{
	struct mrrc_query *q = arg;

	(void)req;
	assert_int_equal(q->size, sizeof(*q));
	assert_int_equal(q->flags, 0);
	assert_int_equal(q->__reserved, 0);
	q->abi_version = MRRC_ABI_VERSION;
	q->num_devices = 3;
}

static void test_query(void **state)
{
	struct mrrc_query q;

	(void)state;
	memset(&q, 0xff, sizeof(q));
	on_ioctl = hook_query;
	expect_ioctl(MRRC_IOC_QUERY, 0);
	assert_int_equal(mrrc_query(7, &q), 0);
	assert_int_equal(q.abi_version, MRRC_ABI_VERSION);
	assert_int_equal(q.num_devices, 3);
	assert_int_equal(mrrc_query(7, NULL), -EINVAL);
}

static void test_errno_returned_negative(void **state)
{
	struct mrrc_query q;

	(void)state;
	expect_ioctl(MRRC_IOC_QUERY, -ENOTTY);
	assert_int_equal(mrrc_query(7, &q), -ENOTTY);
	expect_ioctl(MRRC_IOC_CTX_QUERY, -ENODEV);
	struct mrrc_ctx_query cq;
	assert_int_equal(mrrc_ctx_query(7, &cq), -ENODEV);
}

static void test_eintr_retried(void **state)
{
	struct mrrc_query q;

	(void)state;
	expect_ioctl(MRRC_IOC_QUERY, -EINTR);
	expect_ioctl(MRRC_IOC_QUERY, 0);
	assert_int_equal(mrrc_query(7, &q), 0);
}

static struct mrrc_dev_info *expected_entries;

static void hook_dev_list(unsigned long req, void *arg)
{
	struct mrrc_dev_list *dl = arg;

	(void)req;
	assert_int_equal(dl->size, sizeof(*dl));
	assert_int_equal(dl->flags, 0);
	assert_int_equal(dl->entry_size, sizeof(struct mrrc_dev_info));
	assert_ptr_equal((void *)(uintptr_t)dl->entries, expected_entries);
	if (dl->count)
		strcpy(expected_entries[0].name, "rxe0");
	dl->count = 2;
}

static void test_dev_list(void **state)
{
	struct mrrc_dev_info devs[4];
	unsigned int n = 4;

	(void)state;
	on_ioctl = hook_dev_list;
	expected_entries = devs;
	expect_ioctl(MRRC_IOC_DEV_LIST, 0);
	assert_int_equal(mrrc_dev_list(7, devs, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(devs[0].name, "rxe0");

	/* Counting only. */
	n = 0;
	expected_entries = NULL;
	expect_ioctl(MRRC_IOC_DEV_LIST, 0);
	assert_int_equal(mrrc_dev_list(7, NULL, &n), 0);
	assert_int_equal(n, 2);

	/* Bad arguments never reach the kernel. */
	assert_int_equal(mrrc_dev_list(7, devs, NULL), -EINVAL);
	n = 1;
	assert_int_equal(mrrc_dev_list(7, NULL, &n), -EINVAL);
	assert_int_equal(n, 1);

	/* Count untouched on failure. */
	expected_entries = devs;
	expect_ioctl(MRRC_IOC_DEV_LIST, -EFAULT);
	n = 4;
	assert_int_equal(mrrc_dev_list(7, devs, &n), -EFAULT);
	assert_int_equal(n, 4);
}

static void hook_port_query(unsigned long req, void *arg)
{
	struct mrrc_port_query *pq = arg;

	(void)req;
	assert_int_equal(pq->size, sizeof(*pq));
	assert_int_equal(pq->dev_index, 5);
	assert_int_equal(pq->port_num, 1);
	assert_int_equal(pq->gid_entry_size, sizeof(struct mrrc_gid_entry));
	pq->state = MRRC_PORT_ACTIVE;
	pq->gid_count = 9;
}

static void test_port_query(void **state)
{
	struct mrrc_gid_entry gids[2];
	struct mrrc_port_query pq;
	unsigned int n = 2;

	(void)state;
	on_ioctl = hook_port_query;
	expect_ioctl(MRRC_IOC_PORT_QUERY, 0);
	assert_int_equal(mrrc_port_query(7, 5, 1, &pq, gids, &n), 0);
	assert_int_equal(pq.state, MRRC_PORT_ACTIVE);
	assert_int_equal(n, 9);

	/* No GID array: attributes only. */
	expect_ioctl(MRRC_IOC_PORT_QUERY, 0);
	assert_int_equal(mrrc_port_query(7, 5, 1, &pq, NULL, NULL), 0);
	assert_int_equal(pq.gid_count, 9);

	assert_int_equal(mrrc_port_query(7, 5, 1, NULL, gids, &n), -EINVAL);
	n = 2;
	assert_int_equal(mrrc_port_query(7, 5, 1, &pq, NULL, &n), -EINVAL);
}

static void hook_bind(unsigned long req, void *arg)
{
	struct mrrc_bind *b = arg;

	(void)req;
	assert_int_equal(b->size, sizeof(*b));
	assert_int_equal(b->flags, 0);
	assert_string_equal(b->dev_name, "rxe0");
	/* The rest of the name is zero: no stack garbage reaches the kernel. */
	for (size_t i = strlen("rxe0"); i < sizeof(b->dev_name); i++)
		assert_int_equal(b->dev_name[i], 0);
	b->dev_index = 4;
}

static void test_bind(void **state)
{
	char longname[MRRC_NAME_MAX + 1];
	uint32_t idx = 0;

	(void)state;
	on_ioctl = hook_bind;
	expect_ioctl(MRRC_IOC_BIND, 0);
	assert_int_equal(mrrc_bind(7, "rxe0", &idx), 0);
	assert_int_equal(idx, 4);

	expect_ioctl(MRRC_IOC_BIND, 0);
	assert_int_equal(mrrc_bind(7, "rxe0", NULL), 0);

	memset(longname, 'x', MRRC_NAME_MAX);
	longname[MRRC_NAME_MAX] = '\0';
	assert_int_equal(mrrc_bind(7, longname, &idx), -ENAMETOOLONG);
	longname[MRRC_NAME_MAX - 1] = '\0';
	on_ioctl = NULL;
	expect_ioctl(MRRC_IOC_BIND, -ENODEV);
	assert_int_equal(mrrc_bind(7, longname, &idx), -ENODEV);
	assert_int_equal(mrrc_bind(7, NULL, &idx), -EINVAL);
}

static void test_open(void **state)
{
	(void)state;
	expect_string(__wrap_open, path, MRRC_DEVICE_PATH);
	expect_value(__wrap_open, flags, O_RDWR | O_CLOEXEC);
	will_return(__wrap_open, 7);
	assert_int_equal(mrrc_open(0), 7);

	setenv("MRRC_DEVICE", "/tmp/other", 1);
	expect_string(__wrap_open, path, "/tmp/other");
	expect_value(__wrap_open, flags, O_RDWR | O_CLOEXEC);
	will_return(__wrap_open, -EACCES);
	assert_int_equal(mrrc_open(0), -EACCES);

	assert_int_equal(mrrc_open(1), -EINVAL);
}

static void test_close(void **state)
{
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(mrrc_close(p[0]), 0);
	assert_int_equal(mrrc_close(p[0]), -EBADF);
	close(p[1]);
}

static void hook_reg_partial(unsigned long req, void *arg)
{
	struct mrrc_reg *r = arg;
	struct mrrc_reg_req *reqs = (void *)(uintptr_t)r->reqs;

	(void)req;
	assert_int_equal(r->size, sizeof(*r));
	assert_int_equal(r->count, 3);
	assert_int_equal(r->req_size, sizeof(struct mrrc_reg_req));
	assert_int_equal(r->seg_size, sizeof(struct mrrc_seg));
	assert_int_equal(r->seg_count, 8);
	/* One done, the second failed. */
	r->done = 1;
	r->seg_count = 2;
	reqs[1].status = -ENOSPC;
}

static void hook_reg_none(unsigned long req, void *arg)
{
	struct mrrc_reg *r = arg;

	(void)req;
	r->done = 0;
}

static void test_reg(void **state)
{
	struct mrrc_reg_req reqs[3] = { 0 };
	struct mrrc_seg segs[8];
	unsigned int n = 8;

	(void)state;
	/* A partial batch returns how many were done, not the error. */
	on_ioctl = hook_reg_partial;
	expect_ioctl(MRRC_IOC_REG, -ENOSPC);
	assert_int_equal(mrrc_reg(7, reqs, 3, segs, &n), 1);
	assert_int_equal(n, 2);
	assert_int_equal(reqs[1].status, -ENOSPC);

	/* Nothing done: the error. */
	on_ioctl = hook_reg_none;
	n = 8;
	expect_ioctl(MRRC_IOC_REG, -EINVAL);
	assert_int_equal(mrrc_reg(7, reqs, 3, segs, &n), -EINVAL);
	assert_int_equal(n, 8);

	assert_int_equal(mrrc_reg(7, NULL, 3, segs, &n), -EINVAL);
	assert_int_equal(mrrc_reg(7, reqs, 3, NULL, &n), -EINVAL);
}

static void hook_release(unsigned long req, void *arg)
{
	struct mrrc_release *r = arg;

	(void)req;
	assert_int_equal(r->size, sizeof(*r));
	assert_int_equal(r->count, 4);
	r->done = 2;
}

static void test_release_flush(void **state)
{
	uint32_t h[4] = { 1, 2, 3, 4 };

	(void)state;
	on_ioctl = hook_release;
	expect_ioctl(MRRC_IOC_RELEASE, -ENOENT);
	assert_int_equal(mrrc_release(7, h, 4), 2);
	assert_int_equal(mrrc_release(7, NULL, 1), -EINVAL);

	on_ioctl = NULL;
	expect_ioctl(MRRC_IOC_FLUSH, -ENXIO);
	assert_int_equal(mrrc_flush(7), -ENXIO);
}

/* EXPORT gives two segments; UNEXPORT must name its id. */
static void hook_export(unsigned long req, void *arg)
{
	if (req == MRRC_IOC_EXPORT) {
		struct mrrc_export *x = arg;

		assert_int_equal(x->size, sizeof(*x));
		assert_int_equal(x->nconns, 2);
		assert_int_equal(x->access, MRRC_ACCESS_REMOTE_READ);
		x->id = 42;
		x->nsegs = 2;
		x->segs[0].rkey = 0x1234;
		x->segs[1].rkey = 0x5678;
	} else {
		struct mrrc_unexport *u = arg;

		assert_int_equal(req, MRRC_IOC_UNEXPORT);
		assert_int_equal(u->id, 42);
	}
}

static void test_export(void **state)
{
	static char buf[64];
	uint32_t conns[2] = { 1, 2 }, id = 0;
	struct mrrc_seg segs[2];
	unsigned int n = 2;

	(void)state;
	on_ioctl = hook_export;
	expect_ioctl(MRRC_IOC_EXPORT, 0);
	assert_int_equal(mrrc_export(7, buf, 64, MRRC_ACCESS_REMOTE_READ,
				     conns, 2, segs, &n, &id), 0);
	assert_int_equal(n, 2);
	assert_int_equal(id, 42);
	assert_int_equal(segs[1].rkey, 0x5678);

	/* No room for both: revoked at once, and the count is told. */
	n = 1;
	expect_ioctl(MRRC_IOC_EXPORT, 0);
	expect_ioctl(MRRC_IOC_UNEXPORT, 0);
	assert_int_equal(mrrc_export(7, buf, 64, MRRC_ACCESS_REMOTE_READ,
				     conns, 2, segs, &n, &id), -EOVERFLOW);
	assert_int_equal(n, 2);

	assert_int_equal(mrrc_export(7, buf, 64, 0, conns, 2, segs, NULL,
				     &id), -EINVAL);
	expect_ioctl(MRRC_IOC_UNEXPORT, -ENOENT);
	assert_int_equal(mrrc_unexport(7, 42), -ENOENT);
}

static void hook_stats(unsigned long req, void *arg)
{
	struct mrrc_cache_stats *st = arg;

	(void)req;
	assert_int_equal(st->size, sizeof(*st));
	assert_int_equal(st->requests, 0);	/* the library zeroes it */
	st->requests = 5;
}

static void test_stats_and_config(void **state)
{
	struct mrrc_cache_config cfg = { .policy = MRRC_POLICY_LRU,
					 .dereg_ns_per_region = 9, .flags = 3 };
	struct mrrc_cache_stats st;

	(void)state;
	on_ioctl = hook_stats;
	expect_ioctl(MRRC_IOC_CACHE_STATS, 0);
	assert_int_equal(mrrc_cache_stats(7, &st), 0);
	assert_int_equal(st.flags, 0);
	assert_int_equal(st.requests, 5);
	expect_ioctl(MRRC_IOC_CACHE_STATS, 0);
	assert_int_equal(mrrc_global_stats(7, &st), 0);
	assert_int_equal(st.flags, MRRC_STATS_GLOBAL);

	on_ioctl = NULL;
	expect_ioctl(MRRC_IOC_CACHE_CONFIG, 0);
	assert_int_equal(mrrc_cache_config(7, &cfg), 0);
	assert_int_equal(cfg.size, sizeof(cfg));
	/* Flags it does not know are cleared, MEASURE_COSTS is passed on. */
	assert_int_equal(cfg.flags, MRRC_CACHE_MEASURE_COSTS);
	/* What was __reserved is a member now: passed on untouched. */
	assert_int_equal(cfg.dereg_ns_per_region, 9);
	assert_int_equal(cfg.policy, MRRC_POLICY_LRU);
	assert_int_equal(mrrc_cache_config(7, NULL), -EINVAL);
	assert_int_equal(mrrc_cache_stats(7, NULL), -EINVAL);
}

/* The caller's element size and the context id reach the kernel. */
static size_t list_entry_size;

static void hook_ctx_list(unsigned long req, void *arg)
{
	struct mrrc_ctx_list *cl = arg;

	(void)req;
	assert_int_equal(cl->size, sizeof(*cl));
	assert_int_equal(cl->entry_size, list_entry_size);
	assert_int_equal(cl->count, 3);
	cl->count = 5;
}

static void hook_conn_list(unsigned long req, void *arg)
{
	struct mrrc_conn_list *ll = arg;

	(void)req;
	assert_int_equal(ll->size, sizeof(*ll));
	assert_int_equal(ll->ctx, 42);
	assert_int_equal(ll->entry_size, list_entry_size);
	ll->count = 2;
}

static void test_lists(void **state)
{
	struct mrrc_conn_query conns[3];
	struct mrrc_ctx_info ctxs[3];
	unsigned char big[3 * 200];
	unsigned int n = 3;

	(void)state;
	on_ioctl = hook_ctx_list;
	list_entry_size = sizeof(ctxs[0]);
	expect_ioctl(MRRC_IOC_CTX_LIST, 0);
	assert_int_equal(mrrc_ctx_list(7, ctxs, &n), 0);
	assert_int_equal(n, 5);
	/* A program built against a later header passes its own size. */
	n = 3;
	list_entry_size = 200;
	expect_ioctl(MRRC_IOC_CTX_LIST, 0);
	assert_int_equal(mrrc_ctx_list_sized(7, (void *)big, &n, 200), 0);
	/* Smaller than the first revision, or no room: never sent. */
	assert_int_equal(mrrc_ctx_list_sized(7, ctxs, &n, 64), -EINVAL);
	n = 1;
	assert_int_equal(mrrc_ctx_list(7, NULL, &n), -EINVAL);
	assert_int_equal(mrrc_ctx_list(7, ctxs, NULL), -EINVAL);

	on_ioctl = hook_conn_list;
	list_entry_size = sizeof(conns[0]);
	n = 3;
	expect_ioctl(MRRC_IOC_CONN_LIST, 0);
	assert_int_equal(mrrc_conn_list(7, 42, conns, &n), 0);
	assert_int_equal(n, 2);
	n = 3;
	expect_ioctl(MRRC_IOC_CONN_LIST, -ENOENT);
	assert_int_equal(mrrc_conn_list(7, 42, conns, &n), -ENOENT);
	assert_int_equal(n, 3);
	assert_int_equal(mrrc_conn_list_sized(7, 42, conns, &n, 100), -EINVAL);
}

static void test_version(void **state)
{
	(void)state;
	assert_int_equal(mrrc_version(), MRRC_VERSION_NUM);
	assert_string_equal(mrrc_version_string(), MRRC_VERSION_STRING);
	assert_int_equal(MRRC_VERSION_NUM,
			 (MRRC_VERSION_MAJOR << 16) |
			 (MRRC_VERSION_MINOR << 8) | MRRC_VERSION_PATCH);
	assert_true(MRRC_MKVERSION(0, 6, 0) < MRRC_MKVERSION(0, 6, 1));
	assert_true(MRRC_MKVERSION(0, 255, 255) < MRRC_MKVERSION(1, 0, 0));
}

/* Every name the ABI defines has a string, distinct; the rest have none. */
static void test_strings(void **state)
{
	const char *seen[80] = { 0 };
	unsigned int i, j, n = 0;
	int status;

	(void)state;
	for (i = 0; i < 128; i++) {
		const char *s = mrrc_opcode_str(i);
		bool defined = (i >= MRRC_OP_WRITE && i <= MRRC_OP_LAST) ||
			       i == MRRC_OP_RECV_IMM || i == MRRC_OP_EVENT;

		assert_non_null(s);
		if (!defined) {
			assert_string_equal(s, "unknown opcode");
			continue;
		}
		for (j = 0; j < n; j++)
			assert_string_not_equal(s, seen[j]);
		seen[n++] = s;
	}
	assert_string_equal(mrrc_opcode_str(MRRC_OP_STCRW), "STCRW");
	assert_string_equal(mrrc_opcode_str(~0u), "unknown opcode");

	n = 0;
	for (i = 0; i < 16; i++) {
		const char *s = mrrc_event_str(i);

		assert_non_null(s);
		if (i < MRRC_EVENT_CONNECT_REQUEST || i > MRRC_EVENT_ERROR) {
			assert_string_equal(s, "unknown event");
			continue;
		}
		for (j = 0; j < n; j++)
			assert_string_not_equal(s, seen[j]);
		seen[n++] = s;
	}
	assert_string_equal(mrrc_event_str(MRRC_EVENT_ESTABLISHED),
			    "ESTABLISHED");

	assert_string_equal(mrrc_status_str(0), "success");
	assert_string_equal(mrrc_status_str(-ECANCELED), "cancelled");
	assert_string_equal(mrrc_status_str(-EDOM), "unknown error");
	assert_string_equal(mrrc_status_str(5), "not a status");
	for (status = -200; status <= 0; status++)
		assert_non_null(mrrc_status_str(status));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_query, reset),
		cmocka_unit_test_setup(test_errno_returned_negative, reset),
		cmocka_unit_test_setup(test_eintr_retried, reset),
		cmocka_unit_test_setup(test_dev_list, reset),
		cmocka_unit_test_setup(test_port_query, reset),
		cmocka_unit_test_setup(test_bind, reset),
		cmocka_unit_test_setup(test_open, reset),
		cmocka_unit_test_setup(test_close, reset),
		cmocka_unit_test_setup(test_reg, reset),
		cmocka_unit_test_setup(test_release_flush, reset),
		cmocka_unit_test_setup(test_stats_and_config, reset),
		cmocka_unit_test_setup(test_export, reset),
		cmocka_unit_test_setup(test_lists, reset),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_strings),
	};

	return cmocka_run_group_tests_name("libmrrc", tests, NULL, NULL);
}
