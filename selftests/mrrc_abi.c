// SPDX-License-Identifier: GPL-2.0-only
/*
 * ABI validation: every rule of Documentation/abi.rst, for every command.
 *
 * The "cmd" fixture runs each generic rule against each command; every
 * variant's prepare() builds a request that succeeds, so each rule test
 * changes exactly one thing about a valid request.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "mrrc_test.h"

#define BUF_SIZE 8192

static uint32_t rxe_index(void)
{
	struct mrrc_dev_info devs[16];
	unsigned int n = 16, i;
	int fd = mrrc_open(0);

	if (fd < 0 || mrrc_dev_list(fd, devs, &n))
		return UINT32_MAX;
	close(fd);
	for (i = 0; i < n && i < 16; i++)
		if (!strcmp(devs[i].name, RXE_DEV))
			return devs[i].dev_index;
	return UINT32_MAX;
}

static void prep_query(int fd, void *buf)
{
	(void)fd;
	(void)buf;
}

static void prep_dev_list(int fd, void *buf)
{
	struct mrrc_dev_list *dl = buf;

	(void)fd;
	dl->entry_size = sizeof(struct mrrc_dev_info);
}

static void prep_port_query(int fd, void *buf)
{
	struct mrrc_port_query *pq = buf;

	(void)fd;
	pq->dev_index = rxe_index();
	pq->port_num = 1;
}

static void prep_bind(int fd, void *buf)
{
	struct mrrc_bind *b = buf;

	(void)fd;
	strcpy(b->dev_name, RXE_DEV);
}

static void prep_ctx_query(int fd, void *buf)
{
	(void)buf;
	mrrc_bind(fd, RXE_DEV, NULL);
}

static void prep_ctx_list(int fd, void *buf)
{
	struct mrrc_ctx_list *cl = buf;

	(void)fd;
	cl->entry_size = sizeof(struct mrrc_ctx_info);
}

static void prep_conn_list(int fd, void *buf)
{
	struct mrrc_conn_list *ll = buf;

	(void)fd;
	ll->entry_size = sizeof(struct mrrc_conn_query);
}

FIXTURE(cmd) {
	int fd;
	unsigned char *buf;
};

FIXTURE_VARIANT(cmd) {
	const char *name;
	unsigned long ioc;
	unsigned int size;
	unsigned int min_size;
	int reserved_off;	/* -1: the command has no reserved member */
	void (*prepare)(int fd, void *buf);
};

FIXTURE_VARIANT_ADD(cmd, query) {
	.name = "MRRC_IOC_QUERY",
	.ioc = MRRC_IOC_QUERY,
	.size = sizeof(struct mrrc_query),
	.min_size = sizeof(struct mrrc_query),
	.reserved_off = offsetof(struct mrrc_query, __reserved),
	.prepare = prep_query,
};

FIXTURE_VARIANT_ADD(cmd, dev_list) {
	.name = "MRRC_IOC_DEV_LIST",
	.ioc = MRRC_IOC_DEV_LIST,
	.size = sizeof(struct mrrc_dev_list),
	.min_size = sizeof(struct mrrc_dev_list),
	.reserved_off = -1,
	.prepare = prep_dev_list,
};

FIXTURE_VARIANT_ADD(cmd, port_query) {
	.name = "MRRC_IOC_PORT_QUERY",
	.ioc = MRRC_IOC_PORT_QUERY,
	.size = sizeof(struct mrrc_port_query),
	.min_size = sizeof(struct mrrc_port_query),
	.reserved_off = offsetof(struct mrrc_port_query, __reserved),
	.prepare = prep_port_query,
};

FIXTURE_VARIANT_ADD(cmd, bind) {
	.name = "MRRC_IOC_BIND",
	.ioc = MRRC_IOC_BIND,
	.size = sizeof(struct mrrc_bind),
	.min_size = sizeof(struct mrrc_bind),
	.reserved_off = offsetof(struct mrrc_bind, __reserved),
	.prepare = prep_bind,
};

FIXTURE_VARIANT_ADD(cmd, ctx_query) {
	.name = "MRRC_IOC_CTX_QUERY",
	.ioc = MRRC_IOC_CTX_QUERY,
	.size = sizeof(struct mrrc_ctx_query),
	.min_size = sizeof(struct mrrc_ctx_query),
	.reserved_off = offsetof(struct mrrc_ctx_query, __reserved),
	.prepare = prep_ctx_query,
};

FIXTURE_VARIANT_ADD(cmd, ctx_list) {
	.name = "MRRC_IOC_CTX_LIST",
	.ioc = MRRC_IOC_CTX_LIST,
	.size = sizeof(struct mrrc_ctx_list),
	.min_size = sizeof(struct mrrc_ctx_list),
	.reserved_off = -1,
	.prepare = prep_ctx_list,
};

FIXTURE_VARIANT_ADD(cmd, conn_list) {
	.name = "MRRC_IOC_CONN_LIST",
	.ioc = MRRC_IOC_CONN_LIST,
	.size = sizeof(struct mrrc_conn_list),
	.min_size = sizeof(struct mrrc_conn_list),
	.reserved_off = offsetof(struct mrrc_conn_list, __reserved),
	.prepare = prep_conn_list,
};

FIXTURE_SETUP(cmd)
{
	self->fd = mrrc_open(0);
	ASSERT_LE(0, self->fd);
	/* Room for a long struct, followed by an inaccessible guard page. */
	self->buf = mmap(NULL, 2 * BUF_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	ASSERT_EQ(0, mprotect(self->buf + BUF_SIZE, BUF_SIZE, PROT_NONE));
	variant->prepare(self->fd, self->buf);
	*(uint32_t *)self->buf = variant->size;
}

FIXTURE_TEARDOWN(cmd)
{
	munmap(self->buf, 2 * BUF_SIZE);
	close(self->fd);
}

static uint32_t *flags_of(void *buf)
{
	return (uint32_t *)buf + 1;
}

TEST_F(cmd, valid_request)
{
	ASSERT_EQ(0, raw_ioctl(self->fd, variant->ioc, self->buf));
	/* The size member is left as it was. */
	ASSERT_EQ(variant->size, *(uint32_t *)self->buf);
}

TEST_F(cmd, size_zero)
{
	*(uint32_t *)self->buf = 0;
	ASSERT_EQ(-EINVAL, raw_ioctl(self->fd, variant->ioc, self->buf));
}

TEST_F(cmd, short_struct)
{
	*(uint32_t *)self->buf = variant->min_size - 1;
	ASSERT_EQ(-EINVAL, raw_ioctl(self->fd, variant->ioc, self->buf));
	*(uint32_t *)self->buf = 8;
	ASSERT_EQ(-EINVAL, raw_ioctl(self->fd, variant->ioc, self->buf));
}

TEST_F(cmd, long_struct_zero_tail)
{
	*(uint32_t *)self->buf = variant->size + 256;
	ASSERT_EQ(0, raw_ioctl(self->fd, variant->ioc, self->buf));
	/* The kernel never writes past its own structure. */
	for (unsigned int i = variant->size; i < variant->size + 256; i++)
		ASSERT_EQ(0, self->buf[i]);
}

TEST_F(cmd, long_struct_nonzero_tail)
{
	*(uint32_t *)self->buf = variant->size + 256;
	self->buf[variant->size + 255] = 1;
	ASSERT_EQ(-E2BIG, raw_ioctl(self->fd, variant->ioc, self->buf));
	self->buf[variant->size + 255] = 0;
	self->buf[variant->size] = 0x80;
	ASSERT_EQ(-E2BIG, raw_ioctl(self->fd, variant->ioc, self->buf));
}

TEST_F(cmd, unknown_flag)
{
	for (int bit = 0; bit < 32; bit++) {
		*flags_of(self->buf) = 1U << bit;
		ASSERT_EQ(-EOPNOTSUPP,
			  raw_ioctl(self->fd, variant->ioc, self->buf)) {
			TH_LOG("flag bit %d accepted", bit);
		}
	}
}

TEST_F(cmd, reserved_nonzero)
{
	if (variant->reserved_off < 0)
		SKIP(return, "%s has no reserved member", variant->name);
	self->buf[variant->reserved_off] = 1;
	ASSERT_EQ(-EINVAL, raw_ioctl(self->fd, variant->ioc, self->buf));
	self->buf[variant->reserved_off] = 0;
	self->buf[variant->reserved_off + 3] = 0x80;
	ASSERT_EQ(-EINVAL, raw_ioctl(self->fd, variant->ioc, self->buf));
}

TEST_F(cmd, null_pointer)
{
	ASSERT_EQ(-EFAULT, raw_ioctl(self->fd, variant->ioc, NULL));
}

TEST_F(cmd, unmapped_pointer)
{
	ASSERT_EQ(-EFAULT,
		  raw_ioctl(self->fd, variant->ioc, self->buf + BUF_SIZE));
}

/* A struct that ends exactly at the guard page works; one more byte not. */
TEST_F(cmd, struct_at_guard_page)
{
	unsigned char *at = self->buf + BUF_SIZE - variant->size;

	memmove(at, self->buf, variant->size);
	ASSERT_EQ(0, raw_ioctl(self->fd, variant->ioc, at));

	at -= 8;
	memmove(at, at + 8, variant->size);
	memset(at + variant->size, 0, 8);
	*(uint32_t *)at = variant->size + 16;
	ASSERT_EQ(-EFAULT, raw_ioctl(self->fd, variant->ioc, at));
}

TEST(unknown_command)
{
	struct mrrc_query q = { .size = sizeof(q) };
	unsigned long bad[] = {
		_IO(MRRC_TYPE, MRRC_CMD_LAST + 1),
		_IO(MRRC_TYPE, MRRC_CMD_BASE - 1),
		_IO(MRRC_TYPE, 0),
		_IO(MRRC_TYPE, 0xff),
		_IO(MRRC_TYPE + 1, MRRC_CMD_QUERY),
		_IOWR(MRRC_TYPE, MRRC_CMD_QUERY, struct mrrc_query),
		_IOR(MRRC_TYPE, MRRC_CMD_BIND, struct mrrc_bind),
	};
	int fd = mrrc_open(0);

	ASSERT_LE(0, fd);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(-ENOTTY, raw_ioctl(fd, bad[i], &q))
			TH_LOG("command %#lx accepted", bad[i]);
	}
	close(fd);
}

TEST(query_values)
{
	struct mrrc_query q;
	int fd = mrrc_open(0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mrrc_query(fd, &q));
	ASSERT_EQ(MRRC_ABI_VERSION, q.abi_version);
	ASSERT_EQ(MRRC_CMD_LAST, q.last_cmd);
	ASSERT_TRUE(q.features & MRRC_FEATURE_DEVICES);
	ASSERT_LE(1, q.num_devices);
	close(fd);
}

TEST(not_seekable)
{
	int fd = mrrc_open(0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-1, lseek(fd, 0, SEEK_SET));
	ASSERT_EQ(ESPIPE, errno);
	close(fd);
}

TEST(dev_list_entry_size)
{
	struct mrrc_dev_list dl = { .size = sizeof(dl), .count = 1 };
	struct mrrc_dev_info info[2];
	unsigned char *tail = (unsigned char *)info + sizeof(info[0]);
	int fd = mrrc_open(0);

	ASSERT_LE(0, fd);
	dl.entries = (uintptr_t)info;

	/* Smaller than the first revision: rejected. */
	dl.entry_size = offsetof(struct mrrc_dev_info, __reserved);
	ASSERT_EQ(-EINVAL, raw_ioctl(fd, MRRC_IOC_DEV_LIST, &dl));

	/* Larger than the kernel's: the tail is zeroed. */
	memset(info, 0xa5, sizeof(info));
	dl.entry_size = sizeof(info[0]) + 32;
	dl.count = 1;
	ASSERT_EQ(0, raw_ioctl(fd, MRRC_IOC_DEV_LIST, &dl));
	for (int i = 0; i < 32; i++)
		ASSERT_EQ(0, tail[i]);
	ASSERT_EQ(0xa5, tail[32]);

	/* entry_size does not matter when nothing is written. */
	dl.entry_size = 0;
	dl.count = 0;
	dl.entries = 0;
	ASSERT_EQ(0, raw_ioctl(fd, MRRC_IOC_DEV_LIST, &dl));
	ASSERT_LE(1, dl.count);
	close(fd);
}

TEST(dev_list_bad_entries)
{
	struct mrrc_dev_list dl = {
		.size = sizeof(dl),
		.entry_size = sizeof(struct mrrc_dev_info),
		.count = 4,
		.entries = 8,
	};
	int fd = mrrc_open(0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-EFAULT, raw_ioctl(fd, MRRC_IOC_DEV_LIST, &dl));
	close(fd);
}

/*
 * CTX_LIST: entry_size below the first revision is refused, entries that
 * cannot be written give EFAULT, a larger entry gets a zeroed tail, and
 * the caller's own context is listed with its id.
 */
TEST(ctx_list_errors)
{
	struct mrrc_ctx_list cl = { .size = sizeof(cl), .count = 1 };
	struct mrrc_ctx_info info[2], all[64];
	unsigned char *tail = (unsigned char *)info + sizeof(info[0]);
	int fd = mrrc_open(0);
	bool own = false;

	ASSERT_LE(0, fd);
	cl.entries = (uintptr_t)info;
	cl.entry_size = offsetof(struct mrrc_ctx_info, hits);
	ASSERT_EQ(-EINVAL, raw_ioctl(fd, MRRC_IOC_CTX_LIST, &cl));

	memset(info, 0xa5, sizeof(info));
	cl.entry_size = sizeof(info[0]) + 32;
	cl.count = 1;
	ASSERT_EQ(0, raw_ioctl(fd, MRRC_IOC_CTX_LIST, &cl));
	ASSERT_LE(1, cl.count);
	for (int i = 0; i < 32; i++) {
		ASSERT_EQ(0, tail[i]);
	}
	ASSERT_EQ(0xa5, tail[32]);

	/* The caller's own context is among them, with an id. */
	cl.entry_size = sizeof(all[0]);
	cl.count = 64;
	cl.entries = (uintptr_t)all;
	ASSERT_EQ(0, raw_ioctl(fd, MRRC_IOC_CTX_LIST, &cl));
	for (unsigned int i = 0; i < cl.count && i < 64; i++)
		if (all[i].pid == (uint32_t)getpid() && all[i].id)
			own = true;
	ASSERT_TRUE(own);

	cl.entry_size = sizeof(info[0]);
	cl.count = 4;
	cl.entries = 8;
	ASSERT_EQ(-EFAULT, raw_ioctl(fd, MRRC_IOC_CTX_LIST, &cl));
	close(fd);
}

TEST(port_query_bad_port)
{
	struct mrrc_port_query pq;
	uint32_t idx = rxe_index();
	int fd = mrrc_open(0);

	ASSERT_LE(0, fd);
	ASSERT_NE(UINT32_MAX, idx);
	ASSERT_EQ(-EINVAL, mrrc_port_query(fd, idx, 0, &pq, NULL, NULL));
	ASSERT_EQ(-EINVAL, mrrc_port_query(fd, idx, 2, &pq, NULL, NULL));
	ASSERT_EQ(-EINVAL, mrrc_port_query(fd, idx, UINT32_MAX, &pq, NULL,
					   NULL));
	ASSERT_EQ(-ENODEV, mrrc_port_query(fd, idx + 1000, 1, &pq, NULL,
					   NULL));
	close(fd);
}

TEST(port_query_gid_entry_size)
{
	struct mrrc_port_query pq = { .size = sizeof(pq), .port_num = 1 };
	struct mrrc_gid_entry g[1];
	int fd = mrrc_open(0);

	ASSERT_LE(0, fd);
	pq.dev_index = rxe_index();
	pq.gids = (uintptr_t)g;
	pq.gid_count = 1;
	pq.gid_entry_size = sizeof(g[0]) - 1;
	ASSERT_EQ(-EINVAL, raw_ioctl(fd, MRRC_IOC_PORT_QUERY, &pq));

	pq.gid_entry_size = sizeof(g[0]);
	pq.gids = 8;
	ASSERT_EQ(-EFAULT, raw_ioctl(fd, MRRC_IOC_PORT_QUERY, &pq));
	close(fd);
}

TEST(bind_errors)
{
	struct mrrc_bind b = { .size = sizeof(b) };
	struct mrrc_ctx_query cq;
	uint32_t idx;
	int fd = mrrc_open(0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-ENXIO, mrrc_ctx_query(fd, &cq));

	/* Name without a terminating NUL. */
	memset(b.dev_name, 'x', sizeof(b.dev_name));
	ASSERT_EQ(-EINVAL, raw_ioctl(fd, MRRC_IOC_BIND, &b));
	ASSERT_EQ(-ENODEV, mrrc_bind(fd, "", NULL));
	ASSERT_EQ(-ENODEV, mrrc_bind(fd, "nosuchdev0", NULL));
	ASSERT_EQ(-ENAMETOOLONG,
		  mrrc_bind(fd, "a-name-that-is-longer-than-sixty-three-"
			    "characters-is-rejected-by-libmrrc", NULL));
	ASSERT_EQ(-ENXIO, mrrc_ctx_query(fd, &cq));

	ASSERT_EQ(0, mrrc_bind(fd, RXE_DEV, &idx));
	ASSERT_EQ(rxe_index(), idx);
	ASSERT_EQ(-EBUSY, mrrc_bind(fd, RXE_DEV, NULL));
	ASSERT_EQ(0, mrrc_ctx_query(fd, &cq));
	ASSERT_EQ(idx, cq.dev_index);
	ASSERT_STREQ(RXE_DEV, cq.dev_name);
	close(fd);
}

/* A bind whose result cannot be copied out is undone. */
TEST(bind_efault_has_no_effect)
{
	struct mrrc_ctx_query cq;
	struct mrrc_bind *b;
	int fd = mrrc_open(0);

	ASSERT_LE(0, fd);
	b = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, b);
	b->size = sizeof(*b);
	strcpy(b->dev_name, RXE_DEV);
	ASSERT_EQ(0, mprotect(b, 4096, PROT_READ));

	ASSERT_EQ(-EFAULT, raw_ioctl(fd, MRRC_IOC_BIND, b));
	ASSERT_EQ(-ENXIO, mrrc_ctx_query(fd, &cq));
	ASSERT_EQ(0, mrrc_bind(fd, RXE_DEV, NULL));
	munmap(b, 4096);
	close(fd);
}

TEST_HARNESS_MAIN
