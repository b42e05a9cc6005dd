/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Files on other nodes (issue 18; the paper's FReadF and FPrintF, §3.4
 * and §5: the buffer manager reads its pages from, and writes them back
 * to, files that may live on another node).  A file server (bm fserve)
 * serves one file, of a fixed size, to the nodes that connect to it
 * through the module; a node reads and writes byte ranges of it, one
 * request at a time, each answered with a status.
 *
 * On the wire, a request is a header (struct rfile_hdr) and, for a write,
 * its data; the answer is a header and, for a read, the data.  The server
 * trusts no field: a bad magic, an unknown op, a length over
 * RFILE_DATA_MAX or not matching what arrived, a range past the end of
 * the file: the answer is EINVAL (EPROTO for what is not a request: too
 * short, a bad magic, an op that is not READ, WRITE, MAP, MAP_RW or a
 * PING of a header alone), nothing is read or written.  The client checks the answer the same
 * way: its tag, its op, its length.
 */
#ifndef MRRC_BM_RFILE_H
#define MRRC_BM_RFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RFILE_MAGIC	0x72666c31u	/* "rfl1" */
#define RFILE_DATA_MAX	16384u		/* bytes per request */

enum { RFILE_READ = 1, RFILE_WRITE, RFILE_DATA, RFILE_WRITTEN, RFILE_MAP, RFILE_MAPPED,
       RFILE_MAP_RW, RFILE_PING, RFILE_PONG };

/*
 * The server drops a client that asks nothing for its idle time (bm
 * fserve -I, 120 s by default), a mapped one too: its slot is one of
 * 16, and a client that only holds its export must not keep others out.
 * MAPPED tells the client that time, in milliseconds, in its @off; a
 * client reading one-sidedly sends a PING (a header alone, answered by
 * a PONG) when a quarter of it has passed without a message.
 */

/*
 * MAP asks the server to export its file for one-sided READs, the
 * export tied to this client's connection (read-only, the module's
 * explicit export: revoked when the client goes; like every key of the
 * server's context, usable on its other connections too: they may read
 * the file anyway).  EFBIG for a file over RFILE_MAP_MAX, or why the
 * server could not map or pin it (on Linux 6.5 and later only a tmpfs
 * file can be pinned so: EFAULT otherwise).  MAPPED answers with the
 * file's segments as the peer
 * addresses them, in order and contiguous (at most RFILE_SEGS).
 *
 * MAP_RW exports it for one-sided WRITEs as well (answered with MAPPED):
 * only a file on tmpfs, whose pages are memory and may be written
 * behind the file system's back while pinned (EOPNOTSUPP otherwise:
 * on other file systems the page cache must see its writes).  A WRITE
 * lands in the file when it completes, as a pwrite() the server makes
 * would; the server neither sees nor counts it.
 */
#define RFILE_SEGS	8u
/*
 * The largest file MAP exports: the export keeps the whole file's region
 * in the server's registration cache (1 GiB by default), which must keep
 * room for its other clients' buffers; and every client's export pins
 * the file once more.
 */
#define RFILE_MAP_MAX	(256ull << 20)
struct rfile_seg {
	uint64_t addr;
	uint32_t len;
	uint32_t rkey;
};

struct rfile_hdr {
	uint32_t magic;
	uint8_t op;
	uint8_t pad[3];
	uint32_t tag;		/* the request's, in its answer */
	uint32_t len;		/* bytes to read or written; in an answer, sent */
	uint64_t off;
	int32_t status;		/* answers: 0 or an errno */
	uint32_t pad2;
};

struct rfile;

/*
 * Connects to the file server at @addr:@port on device @dev (NULL: the
 * first): 0 and *@f, or a negative errno.
 */
int rfile_open(struct rfile **f, const char *dev, const char *addr,
	       unsigned int port);
/*
 * @len bytes at @off of the server's file: 0 or a negative errno (mapped,
 * also a PING's: EPROTO for a wrong answer, which breaks the handle).
 */
int rfile_read(struct rfile *f, uint64_t off, void *buf, size_t len);
int rfile_write(struct rfile *f, uint64_t off, const void *buf, size_t len);
void rfile_close(struct rfile *f);
/*
 * From now on, rfile_read() reads with one-sided RDMA READs from the
 * server's export of its file, and with @writable rfile_write() writes
 * with RDMA WRITEs (else through the server): 0, -EFBIG for a file over
 * RFILE_MAP_MAX, -EOPNOTSUPP for @writable and a file not on tmpfs,
 * -EPROTO from a server that does not MAP (or, @writable, MAP_RW: the
 * handle stays usable, two-sided), or a negative errno.  A READ or WRITE that fails half-way
 * closes the handle's context first, so that nothing is left posted
 * into, or out of, the caller's buffer.
 */
int rfile_map(struct rfile *f, bool writable);
/*
 * Tests: an RDMA WRITE of @len bytes at @delta from the start of the
 * export, with the key of the segment @delta falls in (before the
 * export: the first; past it: the last), unchecked (what a hostile
 * client can post): 0 if it completed, else its error.
 */
int rfile_poke(struct rfile *f, int64_t delta, const void *buf, size_t len);
/* The bytes rfile_map() exported (0: none). */
uint64_t rfile_mapped(const struct rfile *f);
/*
 * Tests: sends @len bytes of @msg as they are and waits for the answer:
 * its length (its header in *@ans), or a negative errno.
 */
int rfile_raw(struct rfile *f, const void *msg, size_t len, struct rfile_hdr *ans);

/*
 * The server: serves @path (made @size bytes long) at @addr:@port on
 * device @dev until SIGTERM or SIGINT, dropping clients idle for @idle_s
 * seconds: 0, or a negative errno.  Prints "serving" on stderr when it
 * listens.
 */
int rfile_serve(const char *dev, const char *addr, unsigned int port,
		const char *path, uint64_t size, unsigned int idle_s);

#endif
