// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lifetimes: unprivileged use, what closing an fd or dying releases,
 * device removal with fds open, module unload and load.
 *
 * The tests that unload the module run last; the file leaves the module
 * loaded with its default parameters.
 */
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "mrrc_test.h"

#define NOBODY 65534

static int drop_privileges(void)
{
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		return -errno;
	return 0;
}

/* Run @fn as user nobody in a child; its return value is the result. */
static int as_nobody(int (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(drop_privileges() ? 100 : fn());
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int use_device(void)
{
	struct mrrc_ctx_query cq;
	struct mrrc_query q;
	int fd = mrrc_open(0);

	if (fd < 0)
		return 1;
	if (mrrc_query(fd, &q) || mrrc_bind(fd, RXE_DEV, NULL) ||
	    mrrc_ctx_query(fd, &cq))
		return 2;
	return close(fd) ? 3 : 0;
}

static int open_denied(void)
{
	return mrrc_open(0) == -EACCES ? 0 : 1;
}

static int mod_unload(void)
{
	return syscall(__NR_delete_module, "mrrc", O_NONBLOCK) ? -errno : 0;
}

static int mod_load(const char *params)
{
	const char *ko = getenv("MRRC_KO");
	int fd, ret = 0;

	if (!ko)
		return -ENOENT;
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(__NR_finit_module, fd, params, 0))
		ret = -errno;
	close(fd);
	/* devtmpfs creates the node asynchronously. */
	for (int i = 0; !ret && i < 100 && access(MRRC_DEVICE_PATH, F_OK); i++)
		usleep(10000);
	return ret;
}

TEST(unprivileged_user)
{
	ASSERT_EQ(0, as_nobody(use_device));
}

/* Closing the fds releases every context and every PD. */
TEST(close_releases_everything)
{
	int base_ctx = debugfs_contexts(), base_pd = mrrc_pd_count();
	int fds[32];

	ASSERT_LE(0, base_ctx);
	ASSERT_LE(0, base_pd);
	for (int i = 0; i < 32; i++) {
		fds[i] = open_bound(RXE_DEV);
		ASSERT_LE(0, fds[i]);
	}
	ASSERT_EQ(base_ctx + 32, debugfs_contexts());
	ASSERT_EQ(base_pd + 32, mrrc_pd_count());
	for (int i = 0; i < 32; i++)
		close(fds[i]);
	ASSERT_EQ(base_ctx, debugfs_contexts());
	ASSERT_EQ(base_pd, mrrc_pd_count());
}

/* A process killed with bound contexts open leaves nothing behind. */
TEST(process_death_releases_everything)
{
	int base_ctx = debugfs_contexts(), base_pd = mrrc_pd_count();
	int pipefd[2], st;
	char c;
	pid_t pid;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		for (int i = 0; i < 16; i++)
			if (open_bound(RXE_DEV) < 0)
				_exit(1);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	ASSERT_EQ(base_ctx + 16, debugfs_contexts());
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(base_ctx, debugfs_contexts());
	ASSERT_EQ(base_pd, mrrc_pd_count());
	close(pipefd[0]);
	close(pipefd[1]);
}

/* A context shared across fork() is one context, released by the last close. */
TEST(fork_shares_context)
{
	int base = debugfs_contexts();
	int fd = open_bound(RXE_DEV), st;
	pid_t pid;

	ASSERT_LE(0, fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct mrrc_ctx_query cq;

		_exit(mrrc_ctx_query(fd, &cq) || mrrc_bind(fd, RXE_DEV, NULL) != -EBUSY);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(0, WEXITSTATUS(st));
	ASSERT_EQ(base + 1, debugfs_contexts());
	close(fd);
	ASSERT_EQ(base, debugfs_contexts());
}

struct hammer {
	int fd;
	atomic_bool stop;
	atomic_long ok, enodev, other;
};

static void *hammer_fn(void *arg)
{
	struct hammer *h = arg;
	struct mrrc_ctx_query cq;

	while (!atomic_load(&h->stop)) {
		int ret = mrrc_ctx_query(h->fd, &cq);

		if (!ret)
			atomic_fetch_add(&h->ok, 1);
		else if (ret == -ENODEV)
			atomic_fetch_add(&h->enodev, 1);
		else
			atomic_fetch_add(&h->other, 1);
	}
	return NULL;
}

/*
 * Remove a device while fds are bound to it and threads are in ioctls on
 * them: no crash, no leak, later calls fail with ENODEV.
 */
TEST(device_removal_with_fds_open)
{
	int base_ctx = debugfs_contexts(), base_pd = mrrc_pd_count();
	struct hammer h[4] = {};
	pthread_t th[4];
	struct mrrc_ctx_query cq;
	int fds[8], unbound;

	ASSERT_EQ(0, sh("rdma link add rxe1 type rxe netdev veth1"));
	for (int i = 0; i < 8; i++) {
		fds[i] = open_bound("rxe1");
		ASSERT_LE(0, fds[i]);
	}
	unbound = mrrc_open(0);
	ASSERT_LE(0, unbound);
	ASSERT_EQ(base_pd + 8, mrrc_pd_count());

	for (int i = 0; i < 4; i++) {
		h[i].fd = fds[i];
		ASSERT_EQ(0, pthread_create(&th[i], NULL, hammer_fn, &h[i]));
	}
	usleep(100000);
	ASSERT_EQ(0, sh("rdma link delete rxe1"));
	usleep(100000);
	for (int i = 0; i < 4; i++) {
		atomic_store(&h[i].stop, true);
		pthread_join(th[i], NULL);
		ASSERT_EQ(0, h[i].other);
		ASSERT_LT(0, h[i].enodev);
	}

	ASSERT_EQ(base_pd, mrrc_pd_count());
	for (int i = 0; i < 8; i++) {
		ASSERT_EQ(-ENODEV, mrrc_ctx_query(fds[i], &cq));
		ASSERT_EQ(-ENODEV, mrrc_bind(fds[i], RXE_DEV, NULL));
	}
	/* Unbound fds and new fds are unaffected; the device is gone. */
	ASSERT_EQ(-ENODEV, mrrc_bind(unbound, "rxe1", NULL));
	ASSERT_EQ(0, mrrc_bind(unbound, RXE_DEV, NULL));
	ASSERT_EQ(base_ctx + 9, debugfs_contexts());
	for (int i = 0; i < 8; i++)
		close(fds[i]);
	close(unbound);
	ASSERT_EQ(base_ctx, debugfs_contexts());
	ASSERT_EQ(base_pd, mrrc_pd_count());
}

/* Devices added and removed in a loop while contexts bind and unbind. */
TEST(device_churn)
{
	int base_pd = mrrc_pd_count();
	pid_t pid = fork();
	int st;

	ASSERT_LE(0, pid);
	if (!pid) {
		for (int i = 0; i < 200; i++) {
			int fd = open_bound("rxe1");

			if (fd >= 0)
				close(fd);
		}
		_exit(0);
	}
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(0, sh("rdma link add rxe1 type rxe netdev veth1"));
		usleep(20000);
		ASSERT_EQ(0, sh("rdma link delete rxe1"));
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(0, WEXITSTATUS(st));
	ASSERT_EQ(base_pd, mrrc_pd_count());
}

/* The module cannot go while an fd is open, and goes after the last close. */
TEST(rmmod_after_last_close)
{
	int fd = open_bound(RXE_DEV);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-EWOULDBLOCK, mod_unload());
	ASSERT_EQ(0, access(MRRC_DEVICE_PATH, F_OK));
	close(fd);
	ASSERT_EQ(0, mod_unload());
	ASSERT_EQ(-1, access(MRRC_DEVICE_PATH, F_OK));
	ASSERT_EQ(0, mod_load(""));
	ASSERT_EQ(0, use_device());
}

/* Load/unload cycles, with the rxe device present throughout. */
TEST(load_unload_cycles)
{
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(0, mod_unload());
		ASSERT_EQ(0, mod_load(""));
		ASSERT_EQ(0, use_device());
	}
}

/* Loaded before the RDMA device exists: the client sees it arrive. */
TEST(load_before_device)
{
	ASSERT_EQ(0, sh("rdma link delete " RXE_DEV));
	ASSERT_EQ(0, mod_unload());
	ASSERT_EQ(0, mod_load(""));
	ASSERT_NE(0, use_device());
	ASSERT_EQ(0, sh("rdma link add " RXE_DEV " type rxe netdev veth0"));
	ASSERT_EQ(0, use_device());
}

/* dev_mode=0600 restricts the device to root; bad values are refused. */
TEST(dev_mode_parameter)
{
	struct stat st;

	ASSERT_EQ(0, mod_unload());
	ASSERT_EQ(-EINVAL, mod_load("dev_mode=0777"));
	ASSERT_EQ(0, mod_load("dev_mode=0600"));
	ASSERT_EQ(0, stat(MRRC_DEVICE_PATH, &st));
	ASSERT_EQ(0600, st.st_mode & 0777);
	ASSERT_EQ(0, as_nobody(open_denied));
	ASSERT_EQ(0, use_device());

	ASSERT_EQ(0, mod_unload());
	ASSERT_EQ(0, mod_load(""));
	ASSERT_EQ(0, stat(MRRC_DEVICE_PATH, &st));
	ASSERT_EQ(0666, st.st_mode & 0777);
	ASSERT_EQ(0, as_nobody(use_device));
}

/* Ranged parameters: a value outside the range keeps the module out. */
TEST(ranged_parameters_refused_at_load)
{
	static const char *const bad[] = {
		"ack_timeout=32", "send_window=31", "send_window=1025",
		"max_conns=0", "max_conns=1048577", "max_handles=0",
		"max_handles=16777217",
	};
	size_t i;

	ASSERT_EQ(0, mod_unload());
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		EXPECT_EQ(-EINVAL, mod_load(bad[i])) TH_LOG("bad[%zu]", i);
	ASSERT_EQ(0, mod_load("ack_timeout=31 send_window=32 max_conns=1 max_handles=1"));
	ASSERT_EQ(0, mod_unload());
	ASSERT_EQ(0, mod_load(""));
	ASSERT_EQ(0, use_device());
}

TEST_HARNESS_MAIN
