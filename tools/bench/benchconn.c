// SPDX-License-Identifier: GPL-2.0-only
/* benchconn - see benchconn.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include "benchconn.h"
#include "benchjson.h"

int bench_wait_event(int fd, int ev)
{
	struct mrrc_cqe c;
	int n;

	for (;;) {
		n = mrrc_poll_cq(fd, &c, 1);
		if (n < 0)
			return n;
		if (!n) {
			mrrc_wait(fd, 1000);
			continue;
		}
		if (c.opcode == MRRC_OP_EVENT && c.event == ev)
			return c.conn;
		if (c.opcode == MRRC_OP_EVENT)
			return -EPROTO;
	}
}

int bench_pair_open(struct bench_pair *p, uint16_t port,
		    const struct mrrc_cache_config *ccfg)
{
	return bench_pair_open_flags(p, port, ccfg, 0);
}

int bench_pair_open_flags(struct bench_pair *p, uint16_t port,
			  const struct mrrc_cache_config *ccfg,
			  uint32_t flags)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	struct mrrc_cache_config cfg;
	uint32_t lis;
	int r;

	inet_pton(AF_INET, BENCH_ADDR, &sin.sin_addr);
	p->sfd = mrrc_open(0);
	p->cfd = mrrc_open(0);
	if (p->sfd < 0 || p->cfd < 0) {
		r = p->sfd < 0 ? p->sfd : p->cfd;
		goto fail;
	}
	r = mrrc_bind(p->sfd, bench_dev(), NULL);
	r = r ?: mrrc_bind(p->cfd, bench_dev(), NULL);
	if (!r && ccfg) {
		cfg = *ccfg;
		r = mrrc_cache_config(p->cfd, &cfg);
	}
	r = r ?: mrrc_listen_flags(p->sfd, (struct sockaddr *)&sin, 1, flags,
				   0, &lis);
	r = r ?: mrrc_connect_flags(p->cfd, (struct sockaddr *)&sin, NULL, 0,
				    flags, 0, &p->cconn);
	if (r)
		goto fail;
	r = bench_wait_event(p->sfd, MRRC_EVENT_CONNECT_REQUEST);
	if (r < 0)
		goto fail;
	p->sconn = r;
	r = mrrc_accept(p->sfd, p->sconn, 0);
	if (!r && (bench_wait_event(p->sfd, MRRC_EVENT_ESTABLISHED) < 0 ||
		   bench_wait_event(p->cfd, MRRC_EVENT_ESTABLISHED) < 0))
		r = -EPROTO;
	if (!r)
		return 0;
fail:
	bench_pair_close(p);
	return r;
}

void bench_pair_close(struct bench_pair *p)
{
	if (p->sfd >= 0)
		close(p->sfd);
	if (p->cfd >= 0)
		close(p->cfd);
	p->sfd = p->cfd = -1;
}
