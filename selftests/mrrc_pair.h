/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The two-VM tests' control channel (mrrc_remote.c, mrrc_hostile.c): a TCP
 * connection from the tests in VM b to the agent in VM a, carrying what
 * RDMA cannot check by itself (addresses, keys, patterns to check) and
 * the agent's verdicts.  Fixed-size messages, one struct ctl each.
 * Include after mrrc_dp_test.h (TMO_MS, now_ms()).
 */
#ifndef MRRC_PAIR_H
#define MRRC_PAIR_H

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

enum {
	CTL_HELLO = 1,	/* test -> agent: text = scenario, a = connections */
	CTL_READY,	/* agent -> test: a = RDMA port to connect to */
	CTL_SEG,	/* a = addr, b = rkey, c = length */
	CTL_CHECK,	/* a = length, b = seed: check the pattern */
	CTL_FILL,	/* a = length, b = seed: write the pattern */
	CTL_GO,		/* a, b: scenario specific */
	CTL_OK,		/* status = 0 or -errno, text = why */
	CTL_DONE,	/* the server half's verdict: status, text */
	CTL_QUIT,	/* test -> agent: reply a = contexts left, then exit */
};

struct ctl {
	uint32_t op;
	int32_t status;
	uint64_t a, b, c, d;
	char text[96];
};

static inline int ctl_send(int s, uint32_t op, int32_t status, uint64_t a,
		    uint64_t b, const char *text)
{
	struct ctl m = { .op = op, .status = status, .a = a, .b = b };

	if (text)
		snprintf(m.text, sizeof(m.text), "%s", text);
	return send(s, &m, sizeof(m), MSG_NOSIGNAL) == sizeof(m) ? 0 : -EIO;
}

/* Receive one message of type @op (-EPROTO if another comes). */
static inline int ctl_recv(int s, uint32_t op, struct ctl *m)
{
	ssize_t n = recv(s, m, sizeof(*m), MSG_WAITALL);

	if (n != sizeof(*m))
		return n < 0 ? -errno : -ECONNRESET;
	m->text[sizeof(m->text) - 1] = '\0';
	return m->op == op ? 0 : -EPROTO;
}

/* Send @op and wait for the CTL_OK answer; its status. */
static inline int ctl_call(int s, uint32_t op, uint64_t a, uint64_t b, char *why)
{
	struct ctl m;
	int r = ctl_send(s, op, 0, a, b, NULL);

	r = r ?: ctl_recv(s, CTL_OK, &m);
	if (r)
		return r;
	if (why)
		snprintf(why, 96, "%s", m.text);
	return m.status;
}

static inline void ctl_timeouts(int s)
{
	struct timeval tv = { .tv_sec = TMO_MS / 1000 * 2 };
	int one = 1;

	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static inline struct sockaddr_in ip_addr(const char *ip, uint16_t port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};

	inet_pton(AF_INET, ip ?: "0.0.0.0", &sin.sin_addr);
	return sin;
}

static inline const char *peer_ip(void)
{
	return getenv("MRRC_LINK_PEER") ?: "10.212.0.1";
}

/*
 * A control connection to the agent on @port, retried for up to @wait_ms: a socket,
 * or -errno.
 */
static inline int agent_dial(uint16_t port, int wait_ms)
{
	struct sockaddr_in sin = ip_addr(peer_ip(), port);
	int64_t end = now_ms() + wait_ms;
	int s, r;

	for (;;) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s < 0)
			return -errno;
		if (!connect(s, (struct sockaddr *)&sin, sizeof(sin)))
			break;
		r = -errno;
		close(s);
		if (now_ms() > end)
			return r;
		usleep(200000);
	}
	ctl_timeouts(s);
	return s;
}

/* Connect @fd to the agent's listener on @port: the connection id or -errno. */
static inline int peer_connect(int fd, uint16_t port)
{
	struct sockaddr_in sin = ip_addr(peer_ip(), port);
	uint32_t conn;
	int r;

	r = mrrc_connect(fd, (struct sockaddr *)&sin, NULL, 0, 0, &conn);
	if (r)
		return r;
	r = wait_event(fd, MRRC_EVENT_ESTABLISHED, NULL);
	return r < 0 ? r : (int)conn;
}

/* The agent's control socket on @port of MRRC_LINK_IP, or -1. */
static inline int agent_socket(const char *who, uint16_t port)
{
	struct sockaddr_in sin = ip_addr(getenv("MRRC_LINK_IP"), port);
	int ls, one = 1;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one,
				 sizeof(one)) ||
	    bind(ls, (struct sockaddr *)&sin, sizeof(sin)) || listen(ls, 4)) {
		fprintf(stderr, "%s: control socket: %s\n", who,
			strerror(errno));
		return -1;
	}
	return ls;
}

#define AGENT_IDLE	(-1)
#define AGENT_QUIT	(-2)

/*
 * The agent's next test: its control connection, with its CTL_HELLO in
 * *m; AGENT_QUIT after a CTL_QUIT (answered with a = @quit_a); AGENT_IDLE
 * when nothing came for @idle_s seconds.
 */
static inline int agent_next(const char *who, int ls, int idle_s,
			     uint64_t (*quit_a)(void), struct ctl *m)
{
	struct pollfd pfd;
	int s;

	for (;;) {
		pfd = (struct pollfd){ .fd = ls, .events = POLLIN };
		if (poll(&pfd, 1, idle_s * 1000) != 1) {
			fprintf(stderr, "%s: idle for %d s\n", who, idle_s);
			return AGENT_IDLE;
		}
		s = accept(ls, NULL, NULL);
		if (s < 0)
			continue;
		ctl_timeouts(s);
		memset(m, 0, sizeof(*m));
		if (!ctl_recv(s, CTL_HELLO, m))
			return s;
		if (m->op == CTL_QUIT) {
			ctl_send(s, CTL_OK, 0, quit_a(), 0, NULL);
			close(s);
			return AGENT_QUIT;
		}
		close(s);
	}
}

/*
 * main() of a two-VM test program: "serve" runs the agent (@serve);
 * otherwise the tests (@tests, the kselftest harness's main) once the
 * agent answers on @port.  That wait is up to two minutes (VM a may still
 * be booting), and if it never comes the program bails out at once
 * rather than letting every test wait for it in turn.
 */
static inline int pair_main(int argc, char **argv, uint16_t port,
			    int (*serve)(void), int (*tests)(int, char **))
{
	int s;

	if (argc == 2 && !strcmp(argv[1], "serve"))
		return serve();
	s = agent_dial(port, 120000);
	if (s < 0) {
		printf("TAP version 13\nBail out! no agent at %s:%d: %s\n",
		       peer_ip(), port, strerror(-s));
		return 1;
	}
	close(s);
	return tests(argc, argv);
}

#endif /* MRRC_PAIR_H */
