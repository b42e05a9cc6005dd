// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrrcd(8): a cache daemon speaking memcached's text protocol over TCP,
 * with its items in an arena laid out for one-sided RDMA reads (layout.h).
 *
 * The main thread's epoll set: listening sockets, a signalfd (SIGTERM,
 * SIGINT: clean exit), a one-second timerfd (the clock that expiry and
 * delayed flush_all run on, published in the arena header, and the expiry
 * crawler) and, with -t 1, the TCP connections.  With --rdma, the
 * module's /dev/mrrc file descriptor joins the same set (EV_MRRC): its
 * completions carry the same protocol over RDMA SENDs, and the arena is
 * exported to each RDMA connection for one-sided READs (rdma.c,
 * kvwire.h).  Nothing here blocks.
 *
 * With -t N > 1, N worker threads serve the TCP connections, each with
 * an epoll set of its own; the main thread accepts and hands each new
 * socket to the next worker through that worker's pipe.  Sockets are read
 * and written without a lock; the store, the counters and whatever
 * mc_process() touches are under one mutex, d->lock, which the main
 * thread takes too (clock, crawler, RDMA, accepting).  A TCP connection's
 * -vv lines are queued while the lock is held and written after.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>

#include "mrrc_version.h"
#include "proto.h"
#include "rdma.h"
#include "redysrv.h"
#include "wire.h"

#define MAX_LISTEN 8
#define MAX_EVENTS 64
#define ROUNDS_PER_EVENT 16	/* read/answer/write rounds before yielding */
#define DRAIN_MAX (1u << 20)	/* input thrown away while closing */
#define MIN_MB 2
#define MAX_MB (1u << 20)	/* 1 TiB */
#define MAX_THREADS 64

enum ev_kind {
	EV_LISTEN,
	EV_CONN,
	EV_SIGNAL,
	EV_TIMER,
	EV_MRRC,	/* /dev/mrrc: completions and connection events */
	EV_INBOX,	/* a worker's pipe of accepted sockets */
};

struct evsrc {
	enum ev_kind kind;
	int fd;
};

struct conn {
	struct evsrc ev;	/* first: epoll hands back &ev */
	int epfd;		/* the epoll set of the thread serving it */
	struct conn **head;	/* that thread's list of connections */
	uint64_t nread, nwritten;	/* not yet in the counters */
	struct mc_conn mc;
	uint32_t events;	/* the epoll mask set now */
	enum mc_result res;	/* what mc_process() said last */
	bool eof;		/* the peer sent FIN */
	bool closing;		/* close once the output is written */
	bool draining;		/* written and shut down: reading to EOF */
	uint64_t drained;
	struct conn *prev, *next;
};

struct daemon;

/* A handed-over socket: what the pipe carries (atomic: < PIPE_BUF). */
struct handover {
	int fd;
	unsigned long id;
};

struct worker {
	struct evsrc inbox;	/* first: the read end of the pipe */
	int in_w;		/* its write end, the main thread's */
	int epfd;
	pthread_t th;
	bool running;
	bool dead;		/* (atomic) it failed: hand it nothing more */
	struct daemon *d;
	struct conn *conns;
};

struct daemon {
	int epfd;
	pthread_mutex_t lock;	/* the store, srv and its counters */
	struct worker *workers;
	unsigned int nworkers, next_worker;
	struct evsrc listen[MAX_LISTEN];
	unsigned int nlisten;
	struct evsrc sig, timer, mrrc;
	struct rdma_srv rdma;
	struct redy_server *redy;	/* --redy: a Redy memory server too */
	int spare_fd;		/* given up to accept-and-close at EMFILE */
	struct store store;
	struct mc_server srv;
	struct conn *conns;
	unsigned long next_id;
	bool stop;
};

/* -v on the command line, then the live setting (the verbosity command). */
static int verbose;
static int *verbosity = &verbose;

static void __attribute__((format(printf, 2, 3)))
say(int level, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_load_n(verbosity, __ATOMIC_RELAXED) < level)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static void lock(struct daemon *d)
{
	pthread_mutex_lock(&d->lock);
}

static void unlock(struct daemon *d)
{
	pthread_mutex_unlock(&d->lock);
}

/* For rdma.c, which drops the lock while it pins the arena. */
static void lock_cb(void *arg)
{
	lock(arg);
}

static void unlock_cb(void *arg)
{
	unlock(arg);
}

/* Under d->lock. */
static void tick(struct daemon *d)
{
	store_clock(&d->store, (uint32_t)time(NULL));
}

static int ep_set_in(int epfd, int op, struct evsrc *src, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.ptr = src };

	return epoll_ctl(epfd, op, src->fd, &e) ? -errno : 0;
}

static int ep_set(struct daemon *d, int op, struct evsrc *src, uint32_t ev)
{
	return ep_set_in(d->epfd, op, src, ev);
}

/* Bytes moved since the counters last saw them; under d->lock. */
static void conn_account(struct daemon *d, struct conn *cn)
{
	d->srv.c.bytes_read += cn->nread;
	d->srv.c.bytes_written += cn->nwritten;
	cn->nread = cn->nwritten = 0;
}

/* ---- connections ------------------------------------------------------- */

/* By the thread serving it. */
static void conn_close(struct daemon *d, struct conn *cn)
{
	say(1, "<%lu connection closed\n", cn->mc.id);
	epoll_ctl(cn->epfd, EPOLL_CTL_DEL, cn->ev.fd, NULL);
	close(cn->ev.fd);
	if (cn->prev)
		cn->prev->next = cn->next;
	else
		*cn->head = cn->next;
	if (cn->next)
		cn->next->prev = cn->prev;
	mc_log_flush(&cn->mc);
	lock(d);
	conn_account(d, cn);
	mc_conn_free(&cn->mc);
	d->srv.c.curr_connections--;
	d->srv.c.conn_structures--;
	unlock(d);
	free(cn);
}

/* Write what is queued; -errno if the connection is broken. */
static int conn_write(struct conn *cn, bool *progress)
{
	while (mc_out_pending(&cn->mc)) {
		ssize_t n = send(cn->ev.fd, mc_out_data(&cn->mc),
				 mc_out_pending(&cn->mc), MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		mc_out_consume(&cn->mc, (size_t)n);
		cn->nwritten += (uint64_t)n;
		*progress = true;
	}
	return 0;
}

/* Read once into the input buffer; -errno if broken. */
static int conn_read(struct conn *cn, bool *progress)
{
	size_t room;
	char *p = mc_in_space(&cn->mc, &room);
	ssize_t n;

	if (!p)
		return room ? 0 : -ENOMEM;
	do {
		n = recv(cn->ev.fd, p, room, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	if (n == 0) {
		/*
		 * FIN: what was complete has been answered; a request cut
		 * short is dropped.  Queued replies still go out (the peer
		 * may only have shut down its sending side).
		 */
		cn->eof = true;
		*progress = true;
		return 0;
	}
	mc_in_commit(&cn->mc, (size_t)n);
	cn->nread += (uint64_t)n;
	*progress = true;
	return 0;
}

/*
 * Close after our last reply without losing it: closing a socket with
 * unread input makes the kernel send a reset, which can destroy the reply
 * (say "CLIENT_ERROR line too long") before the peer reads it.  So: shut
 * down our side, read and drop what the peer still sends, close at its
 * EOF, or after DRAIN_MAX bytes.
 */
static void conn_drain(struct daemon *d, struct conn *cn)
{
	char scratch[16384];

	for (;;) {
		ssize_t n = recv(cn->ev.fd, scratch, sizeof(scratch), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0 || (cn->drained += (uint64_t)n) > DRAIN_MAX) {
			conn_close(d, cn);
			return;
		}
	}
}

static void conn_linger(struct daemon *d, struct conn *cn)
{
	cn->draining = true;
	if (shutdown(cn->ev.fd, SHUT_WR) ||
	    (cn->events != EPOLLIN && ep_set_in(cn->epfd, EPOLL_CTL_MOD,
						&cn->ev, EPOLLIN))) {
		conn_close(d, cn);
		return;
	}
	cn->events = EPOLLIN;
	conn_drain(d, cn);
}

/*
 * Move a connection on as far as it goes without blocking: read, answer,
 * write, a bounded number of rounds so that one busy peer cannot starve
 * the others.  Whatever a round reads it also answers unless the reply is
 * blocked (MC_BLOCKED: output above the high-water mark), so the only work
 * that can be left in our buffers is a blocked reply and the input queued
 * behind it; what is left in the socket, level-triggered epoll reports
 * again.
 *
 * A blocked reply keeps EPOLLOUT armed even when everything queued so far
 * has been written, which is how the last round can end: the rounds ran
 * out, not the work.  A socket with room reports EPOLLOUT at the next
 * epoll_wait, so such a connection comes back for more rounds after the
 * others that are ready, without waiting for input, and never sits with
 * an empty mask that nothing would wake.
 */
static void conn_service(struct daemon *d, struct conn *cn)
{
	uint32_t want;
	int round, err;

	if (cn->draining) {
		conn_drain(d, cn);
		return;
	}
	for (round = 0; round < ROUNDS_PER_EVENT; round++) {
		bool progress = false;

		err = 0;
		if (!cn->closing && !cn->eof && cn->res == MC_WANT_INPUT)
			err = conn_read(cn, &progress);
		if (!err) {
			lock(d);
			if (d->nworkers)
				tick(d);	/* (the main thread's is idle) */
			conn_account(d, cn);
			cn->res = mc_process(&cn->mc);
			unlock(d);
			mc_log_flush(&cn->mc);	/* (-vv: not under the lock) */
			if (cn->res == MC_DONE)
				cn->closing = true;
			err = conn_write(cn, &progress);
		}
		if (err) {
			say(1, "<%lu %s\n", cn->mc.id, strerror(-err));
			conn_close(d, cn);
			return;
		}
		if (!progress)
			break;
	}
	if ((cn->closing || cn->eof) && !mc_out_pending(&cn->mc) &&
	    cn->res != MC_BLOCKED) {
		if (cn->eof)
			conn_close(d, cn);
		else
			conn_linger(d, cn);
		return;
	}
	want = 0;
	if (!cn->closing && !cn->eof && cn->res == MC_WANT_INPUT)
		want |= EPOLLIN;
	if (mc_out_pending(&cn->mc) || cn->res == MC_BLOCKED)
		want |= EPOLLOUT;
	if (want != cn->events) {
		if (ep_set_in(cn->epfd, EPOLL_CTL_MOD, &cn->ev, want)) {
			conn_close(d, cn);
			return;
		}
		cn->events = want;
	}
}

static void reject(struct daemon *d, int fd)
{
	static const char msg[] = "SERVER_ERROR Too many open connections\r\n";

	/* Best effort: a fresh socket's buffer takes this much. */
	if (send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		say(2, "reject: %s\n", strerror(errno));
	close(fd);
	lock(d);
	d->srv.c.rejected_connections++;
	unlock(d);
}

/*
 * Take back what conn_new() counted for a connection that was never
 * served: it was refused after all, or the daemon stopped first.
 */
static void conn_uncount(struct daemon *d)
{
	lock(d);
	d->srv.c.curr_connections--;
	d->srv.c.total_connections--;
	d->srv.c.conn_structures--;
	unlock(d);
}

/* A counted connection that cannot be served: uncounted and refused. */
static void conn_refuse(struct daemon *d, int fd)
{
	conn_uncount(d);
	reject(d, fd);
}

/*
 * A connection the counters already count, served from now on by the
 * thread of epfd and head (the one calling); on failure it is uncounted.
 */
static void conn_start(struct daemon *d, int fd, unsigned long id, int epfd,
		       struct conn **head)
{
	struct conn *cn = calloc(1, sizeof(*cn));
	int one = 1;

	if (cn) {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		cn->ev.kind = EV_CONN;
		cn->ev.fd = fd;
		cn->epfd = epfd;
		cn->head = head;
		mc_conn_init(&cn->mc, &d->srv, id);
		cn->mc.log_later = true;
		cn->events = EPOLLIN;
		cn->res = MC_WANT_INPUT;
		if (!ep_set_in(epfd, EPOLL_CTL_ADD, &cn->ev, cn->events)) {
			cn->next = *head;
			if (*head)
				(*head)->prev = cn;
			*head = cn;
			say(1, "<%lu new connection\n", id);
			return;
		}
		lock(d);
		mc_conn_free(&cn->mc);
		unlock(d);
		free(cn);
	}
	conn_refuse(d, fd);
}

/* The main thread's: count the connection, then serve or hand it over. */
static void conn_new(struct daemon *d, int fd)
{
	struct handover h = { .fd = fd };
	struct worker *w;
	unsigned int i;

	lock(d);
	/* RDMA connections being accepted count too (rdma.c). */
	if (d->srv.c.curr_connections + d->rdma.accepting >=
	    d->srv.set.maxconns) {
		unlock(d);
		say(1, "too many connections (-c %u): refused\n",
		    d->srv.set.maxconns);
		reject(d, fd);
		return;
	}
	d->srv.c.curr_connections++;
	d->srv.c.total_connections++;
	d->srv.c.conn_structures++;
	h.id = d->next_id++;
	unlock(d);
	if (!d->nworkers) {
		conn_start(d, fd, h.id, d->epfd, &d->conns);
		return;
	}
	for (i = 0, w = NULL; i < d->nworkers && !w; i++) {
		w = &d->workers[d->next_worker++ % d->nworkers];
		if (__atomic_load_n(&w->dead, __ATOMIC_ACQUIRE))
			w = NULL;
	}
	if (!w || write(w->in_w, &h, sizeof(h)) != sizeof(h)) {
		/* No worker left, or the next that far behind: refuse. */
		say(1, "<%lu handover: %s\n", h.id,
		    w ? strerror(errno) : "no worker thread left");
		conn_refuse(d, fd);
	}
}

static void do_accept(struct daemon *d, struct evsrc *l)
{
	for (;;) {
		int fd = accept4(l->fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			conn_new(d, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if ((errno == EMFILE || errno == ENFILE) && d->spare_fd >= 0) {
			/* Out of descriptors: refuse this one politely. */
			close(d->spare_fd);
			fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0)
				reject(d, fd);
			d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			continue;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			say(1, "accept: %s\n", strerror(errno));
		return;
	}
}

/* ---- worker threads (-t N > 1) ----------------------------------------- */

/* Sockets handed over; false once the main thread closed the pipe. */
static bool worker_inbox(struct worker *w)
{
	struct handover h[32];
	ssize_t n;
	size_t i;

	for (;;) {
		n = read(w->inbox.fd, h, sizeof(h));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK;
		if (n == 0)
			return false;
		/* Whole records: each write was one, and atomic. */
		for (i = 0; i < (size_t)n / sizeof(h[0]); i++)
			conn_start(w->d, h[i].fd, h[i].id, w->epfd, &w->conns);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct epoll_event ev[MAX_EVENTS];
	bool more = true;

	while (more) {
		int i, n = epoll_wait(w->epfd, ev, MAX_EVENTS, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			say(0, "mrrcd: a worker's epoll_wait: %s; its connections closed\n",
			    strerror(errno));
			__atomic_store_n(&w->dead, true, __ATOMIC_RELEASE);
			break;
		}
		for (i = 0; i < n; i++) {
			struct evsrc *src = ev[i].data.ptr;

			if (src->kind == EV_INBOX)
				more = worker_inbox(w) && more;
			else
				conn_service(w->d, (struct conn *)src);
		}
	}
	while (w->conns)
		conn_close(w->d, w->conns);
	return NULL;
}

/* nworkers threads, started after the signals are blocked (inherited). */
static int workers_start(struct daemon *d, unsigned int n)
{
	unsigned int i;
	int fds[2], err;

	d->workers = calloc(n, sizeof(*d->workers));
	if (!d->workers)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct worker *w = &d->workers[i];

		w->d = d;
		w->inbox.kind = EV_INBOX;
		w->inbox.fd = w->in_w = w->epfd = -1;
		d->nworkers++;
		if (pipe2(fds, O_NONBLOCK | O_CLOEXEC))
			return -errno;
		w->inbox.fd = fds[0];
		w->in_w = fds[1];
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (w->epfd < 0)
			return -errno;
		err = ep_set_in(w->epfd, EPOLL_CTL_ADD, &w->inbox, EPOLLIN);
		if (err)
			return err;
		err = -pthread_create(&w->th, NULL, worker_main, w);
		if (err)
			return err;
		w->running = true;
	}
	return 0;
}

/* Close their pipes: each closes its connections and ends. */
static void workers_stop(struct daemon *d)
{
	struct handover h;
	unsigned int i;

	for (i = 0; i < d->nworkers; i++) {
		struct worker *w = &d->workers[i];

		if (w->in_w >= 0)
			close(w->in_w);
		if (w->running)
			pthread_join(w->th, NULL);
		/* Sockets handed over that it never took. */
		while (w->inbox.fd >= 0 &&
		       read(w->inbox.fd, &h, sizeof(h)) == sizeof(h)) {
			close(h.fd);
			conn_uncount(d);
		}
		if (w->inbox.fd >= 0)
			close(w->inbox.fd);
		if (w->epfd >= 0)
			close(w->epfd);
	}
	free(d->workers);
	d->workers = NULL;
	d->nworkers = 0;
}

/* ---- setup ------------------------------------------------------------- */

static int listen_on(struct daemon *d, const char *addr, unsigned int port)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	}, *res, *ai;
	char portstr[16];
	int err, one = 1;

	snprintf(portstr, sizeof(portstr), "%u", port);
	err = getaddrinfo(addr, portstr, &hints, &res);
	if (err) {
		fprintf(stderr, "mrrcd: -l %s: %s\n", addr ? addr : "",
			gai_strerror(err));
		return -EINVAL;
	}
	for (ai = res; ai && d->nlisten < MAX_LISTEN; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
				SOCK_CLOEXEC, ai->ai_protocol);
		struct evsrc *l;

		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		/* Separate IPv4 and IPv6 sockets, as getaddrinfo lists them. */
		if (ai->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
				   sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) ||
		    listen(fd, 1024)) {
			fprintf(stderr, "mrrcd: cannot listen on %s port %u: %s\n",
				addr ? addr : "*", port, strerror(errno));
			close(fd);
			continue;
		}
		l = &d->listen[d->nlisten++];
		l->kind = EV_LISTEN;
		l->fd = fd;
		if (ep_set(d, EPOLL_CTL_ADD, l, EPOLLIN)) {
			freeaddrinfo(res);
			return -errno;
		}
	}
	freeaddrinfo(res);
	return d->nlisten ? 0 : -EADDRNOTAVAIL;
}

static int setup_signals(struct daemon *d)
{
	sigset_t set;

	/* Replies go with MSG_NOSIGNAL; SIGHUP does not stop a cache. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	d->sig.kind = EV_SIGNAL;
	d->sig.fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->sig.fd < 0)
		return -errno;
	return ep_set(d, EPOLL_CTL_ADD, &d->sig, EPOLLIN);
}

static int setup_timer(struct daemon *d)
{
	struct itimerspec its = {
		.it_interval = { .tv_sec = 1 },
		.it_value = { .tv_sec = 1 },
	};

	d->timer.kind = EV_TIMER;
	d->timer.fd = timerfd_create(CLOCK_MONOTONIC,
				     TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->timer.fd < 0)
		return -errno;
	if (timerfd_settime(d->timer.fd, 0, &its, NULL))
		return -errno;
	return ep_set(d, EPOLL_CTL_ADD, &d->timer, EPOLLIN);
}

/* Enough descriptors for -c connections, our own few, a worker's 3. */
static int raise_nofile(unsigned int maxconns, unsigned int threads)
{
	rlim_t need = (rlim_t)maxconns + 16 + MAX_LISTEN +
		      (threads > 1 ? 3 * (rlim_t)threads : 0);
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
		fprintf(stderr, "mrrcd: -c %u needs %llu file descriptors, the hard limit is %llu\n",
			maxconns, (unsigned long long)need,
			(unsigned long long)rl.rlim_max);
		return -EMFILE;
	}
	rl.rlim_cur = need;
	return setrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0;
}

/* ---- the loop ---------------------------------------------------------- */

static void on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sig.fd, &si, sizeof(si)) == sizeof(si)) {
		say(1, "mrrcd: %s: shutting down\n",
		    strsignal((int)si.ssi_signo));
		d->stop = true;
	}
}

/*
 * Every second: the clock, and a slice of the index crawled for expired
 * and flushed items, so that a sweep takes at most about 4 s (up to 2^22
 * slots), no slice more than 2^20 slots, taken 4096 at a time so that
 * the lock is never held long for it.
 */
static void on_timer(struct daemon *d)
{
	uint32_t budget = d->store.nslots / 4, step;
	unsigned int n;
	uint64_t ticks;

	if (read(d->timer.fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		say(1, "timerfd: %s\n", strerror(errno));
	if (budget < 8192)
		budget = 8192;
	if (budget > 1u << 20)
		budget = 1u << 20;
	lock(d);
	tick(d);
	unlock(d);
	for (n = 0; budget; budget -= step) {
		step = budget < 4096 ? budget : 4096;
		lock(d);
		n += store_crawl(&d->store, step);
		unlock(d);
	}
	if (n)
		say(2, "crawler: %u items reclaimed\n", n);
}

static int run(struct daemon *d)
{
	struct epoll_event ev[MAX_EVENTS];

	while (!d->stop) {
		int i, n = epoll_wait(d->epfd, ev, MAX_EVENTS, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("mrrcd: epoll_wait");
			return -1;
		}
		lock(d);
		tick(d);
		unlock(d);
		for (i = 0; i < n; i++) {
			struct evsrc *src = ev[i].data.ptr;

			switch (src->kind) {
			case EV_LISTEN:
				do_accept(d, src);
				break;
			case EV_CONN:
				conn_service(d, (struct conn *)src);
				break;
			case EV_SIGNAL:
				on_signal(d);
				break;
			case EV_TIMER:
				on_timer(d);
				break;
			case EV_MRRC:
				lock(d);
				rdma_service(&d->rdma);
				unlock(d);
				break;
			case EV_INBOX:	/* (workers' only) */
				break;
			}
		}
	}
	return 0;
}

static void teardown(struct daemon *d)
{
	unsigned int i;

	workers_stop(d);
	while (d->conns)
		conn_close(d, d->conns);
	if (d->redy) {
		struct redy_server_stats st;

		redy_server_stop(d->redy, &st);
		say(1, "mrrcd: Redy memory server: %lu batches, %lu requests, %lu refused\n",
		    st.batches, st.requests, st.refused);
	}
	lock(d);
	rdma_stop(&d->rdma);
	unlock(d);
	for (i = 0; i < d->nlisten; i++)
		close(d->listen[i].fd);
	if (d->sig.fd >= 0)
		close(d->sig.fd);
	if (d->timer.fd >= 0)
		close(d->timer.fd);
	if (d->spare_fd >= 0)
		close(d->spare_fd);
	if (d->epfd >= 0)
		close(d->epfd);
	store_destroy(&d->store);
}

/* ---- options ----------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mrrcd [options]\n"
		"  -p, --port=PORT          TCP port (default 11211)\n"
		"  -l, --listen=ADDR        address to listen on (default: all)\n"
		"  -m, --memory-limit=MB    arena size in MiB, items and index (default 64)\n"
		"  -c, --conn-limit=N       most simultaneous connections (default 1024)\n"
		"  -t, --threads=N          threads serving TCP connections (default 1)\n"
		"  -U, --udp-port=0         UDP is not supported: only 0 is accepted\n"
		"  -R, --rdma=ADDR          also serve over RDMA through /dev/mrrc, on ADDR\n"
		"      --rdma-port=PORT     RDMA CM port (default: the TCP port)\n"
		"      --rdma-dev=NAME      RDMA device (default: the first one)\n"
		"      --redy=PORT          also a Redy memory server (redyd(8)) on the\n"
		"                           --rdma address, ports PORT to PORT+THREADS\n"
		"      --redy-memory=MB     its memory in MiB (default 64)\n"
		"      --redy-threads=N     its server threads (default 1)\n"
		"  -v, --verbose            errors and connections; -vv: also requests\n"
		"  -h, --help               this help\n"
		"  -V, --version            print the version\n");
}

static int number(const char *opt, const char *s, unsigned long min,
		  unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min || v > max) {
		fprintf(stderr, "mrrcd: %s: '%s' is not a number from %lu to %lu\n",
			opt, s, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

struct options {
	unsigned long port, mb, maxconns, threads, rdma_port;
	unsigned long redy_port, redy_mb, redy_threads;
	const char *listen, *rdma, *rdma_dev;
};

enum { OPT_RDMA_PORT = 256, OPT_RDMA_DEV, OPT_REDY, OPT_REDY_MB, OPT_REDY_THREADS };

/* 0 to run, 1 to exit successfully (-h, -V), -EINVAL on a usage error. */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "listen", required_argument, NULL, 'l' },
		{ "memory-limit", required_argument, NULL, 'm' },
		{ "conn-limit", required_argument, NULL, 'c' },
		{ "threads", required_argument, NULL, 't' },
		{ "udp-port", required_argument, NULL, 'U' },
		{ "rdma", required_argument, NULL, 'R' },
		{ "rdma-port", required_argument, NULL, OPT_RDMA_PORT },
		{ "rdma-dev", required_argument, NULL, OPT_RDMA_DEV },
		{ "redy", required_argument, NULL, OPT_REDY },
		{ "redy-memory", required_argument, NULL, OPT_REDY_MB },
		{ "redy-threads", required_argument, NULL, OPT_REDY_THREADS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long udp;
	int opt;

	*o = (struct options){ .port = 11211, .mb = 64, .maxconns = 1024,
			       .threads = 1, .redy_mb = 64, .redy_threads = 1 };
	while ((opt = getopt_long(argc, argv, "p:l:m:c:t:U:R:vhV", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (number("-p", optarg, 1, 65535, &o->port))
				return -EINVAL;
			break;
		case 'l':
			o->listen = optarg;
			break;
		case 'm':
			if (number("-m", optarg, MIN_MB, MAX_MB, &o->mb))
				return -EINVAL;
			break;
		case 'c':
			if (number("-c", optarg, 1, 1u << 20, &o->maxconns))
				return -EINVAL;
			break;
		case 't':
			if (number("-t", optarg, 1, MAX_THREADS, &o->threads))
				return -EINVAL;
			break;
		case 'U':
			if (number("-U", optarg, 0, 65535, &udp))
				return -EINVAL;
			if (udp) {
				fprintf(stderr, "mrrcd: -U %lu: UDP is not supported, only -U 0\n",
					udp);
				return -EINVAL;
			}
			break;
		case 'R':
			o->rdma = optarg;
			break;
		case OPT_RDMA_PORT:
			if (number("--rdma-port", optarg, 1, 65535,
				   &o->rdma_port))
				return -EINVAL;
			break;
		case OPT_RDMA_DEV:
			o->rdma_dev = optarg;
			break;
		case OPT_REDY:
			if (number("--redy", optarg, 1, 65535 - REDY_THREADS_MAX - 1,
				   &o->redy_port))
				return -EINVAL;
			break;
		case OPT_REDY_MB:
			if (number("--redy-memory", optarg, 1, 1024, &o->redy_mb))
				return -EINVAL;
			break;
		case OPT_REDY_THREADS:
			if (number("--redy-threads", optarg, 1, REDY_THREADS_MAX,
				   &o->redy_threads))
				return -EINVAL;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("mrrcd %s (memcached text protocol)\n",
			       MRRC_VERSION_STRING);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if ((o->rdma_port || o->rdma_dev || o->redy_port) && !o->rdma) {
		fprintf(stderr, "mrrcd: --rdma-port, --rdma-dev and --redy need --rdma\n");
		return -EINVAL;
	}
	if (optind < argc) {
		fprintf(stderr, "mrrcd: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct daemon d = { .epfd = -1, .sig.fd = -1, .timer.fd = -1,
			    .spare_fd = -1, .next_id = 1, .rdma.fd = -1,
			    .lock = PTHREAD_MUTEX_INITIALIZER };
	struct options o;
	int err;

	err = parse_options(argc, argv, &o);
	if (err)
		return err > 0 ? 0 : 2;
	if (raise_nofile((unsigned int)o.maxconns, (unsigned int)o.threads))
		return 1;
	err = store_init(&d.store, (size_t)o.mb << 20, (uint32_t)time(NULL));
	if (err) {
		fprintf(stderr, "mrrcd: cannot set up %lu MiB: %s\n", o.mb,
			strerror(-err));
		return 1;
	}
	d.srv.store = &d.store;
	d.srv.set.maxbytes = (size_t)o.mb << 20;
	d.srv.set.maxconns = (unsigned int)o.maxconns;
	d.srv.set.port = (unsigned int)o.port;
	d.srv.set.inter = o.listen;
	d.srv.set.threads = (unsigned int)o.threads;
	d.srv.started = time(NULL);
	d.srv.verbosity = verbose;
	d.srv.log = stderr;
	verbosity = &d.srv.verbosity;
	d.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	d.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d.epfd < 0) {
		perror("mrrcd: epoll_create1");
		teardown(&d);
		return 1;
	}
	err = setup_signals(&d);
	if (!err)
		err = setup_timer(&d);
	if (err) {
		fprintf(stderr, "mrrcd: setup: %s\n", strerror(-err));
		teardown(&d);
		return 1;
	}
	if (listen_on(&d, o.listen, (unsigned int)o.port)) {
		teardown(&d);
		return 1;
	}
	if (o.threads > 1) {
		err = workers_start(&d, (unsigned int)o.threads);
		if (err) {
			fprintf(stderr, "mrrcd: -t %lu: %s\n", o.threads,
				strerror(-err));
			teardown(&d);
			return 1;
		}
	}
	if (o.rdma) {
		unsigned int rport = (unsigned int)(o.rdma_port ?: o.port);

		if (rdma_start(&d.rdma, &d.srv, &d.store, o.rdma_dev, o.rdma,
			       rport)) {
			teardown(&d);
			return 1;
		}
		d.rdma.unlock = unlock_cb;
		d.rdma.relock = lock_cb;
		d.rdma.lock_arg = &d;
		d.mrrc.kind = EV_MRRC;
		d.mrrc.fd = d.rdma.fd;
		if (ep_set(&d, EPOLL_CTL_ADD, &d.mrrc, EPOLLIN)) {
			perror("mrrcd: epoll_ctl /dev/mrrc");
			teardown(&d);
			return 1;
		}
		say(1, "mrrcd: RDMA on %s port %u\n", o.rdma, rport);
	}
	if (o.redy_port) {
		struct redy_server_opts ro = {
			.port = (unsigned int)o.redy_port, .bytes = o.redy_mb << 20,
			.threads = (unsigned int)o.redy_threads, .dev = o.rdma_dev,
			.verbose = verbose, .name = "mrrcd-redy",
		};

		err = inet_pton(AF_INET, o.rdma, &ro.addr) == 1 ? 0 : -EAFNOSUPPORT;
		err = err ?: redy_server_start(&d.redy, &ro);
		if (err) {
			fprintf(stderr, "mrrcd: --redy: %s\n", err == -EAFNOSUPPORT ?
				"--rdma must be an IPv4 address" : strerror(-err));
			teardown(&d);
			return 1;
		}
		say(1, "mrrcd: Redy memory server: %lu MiB, %lu server threads, ports %lu-%lu\n",
		    o.redy_mb, o.redy_threads, o.redy_port, o.redy_port + o.redy_threads);
	}
	say(1, "mrrcd %s: port %lu, %lu MiB, %u index slots, %u slab pages\n",
	    MRRC_VERSION_STRING, o.port, o.mb, d.store.nslots, d.store.npages);
	err = run(&d);
	teardown(&d);
	return err ? 1 : 0;
}
