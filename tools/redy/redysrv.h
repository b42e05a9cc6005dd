/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A Redy memory server (redysrv.c), as redyd runs it and as mrrcd runs it
 * beside its key-value store (mrrcd --redy): -m MiB of memory offered
 * one-sidedly on ADDR:PORT and two-sidedly by THREADS server threads on
 * PORT+1 .. PORT+THREADS.  The wire format is wire.h's.
 */
#ifndef MRRC_REDY_SRV_H
#define MRRC_REDY_SRV_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

struct redy_server;

struct redy_server_opts {
	struct in_addr addr;	/* the RDMA device's address */
	unsigned int port;	/* one-sided; PORT+1+i: server thread i */
	uint64_t bytes;
	unsigned int threads;	/* 1 .. REDY_THREADS_MAX */
	const char *dev;	/* NULL: the first RDMA device */
	int verbose;		/* 1: refusals and errors, 2: connections */
	const char *name;	/* in messages: "NAME[thread]: ..." */
};

struct redy_server_stats {
	unsigned long batches, requests, refused, pulled;
};

/*
 * Maps the memory, opens a context and a listener per thread and starts
 * the threads: 0, -EINVAL, -ENODEV (no RDMA device), -ENOMEM, or the
 * listen's error (a message on stderr names the port).
 */
int redy_server_start(struct redy_server **out,
		      const struct redy_server_opts *o);
/* The device it serves on. */
void redy_server_info(const struct redy_server *srv, char *dev, size_t len);
/*
 * Stops the threads (within 200 ms), ends every connection and export,
 * frees everything; the counters in @st if not NULL.
 */
void redy_server_stop(struct redy_server *srv, struct redy_server_stats *st);

#endif
