/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * What the kernel or the NIC writes into user memory (an ioctl's output
 * array, an RDMA RECV or READ target), valgrind cannot see: mark_defined()
 * tells it, so that programs on libmrrc run clean under memcheck.  A few
 * instructions when not under valgrind; nothing without its header.
 * Private to the library and the project's tools: not installed.
 */
#ifndef MRRC_MARK_DEFINED_H
#define MRRC_MARK_DEFINED_H

#if defined(__has_include) && __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define mark_defined(p, len) VALGRIND_MAKE_MEM_DEFINED(p, len)
#else
#define mark_defined(p, len) do { } while (0)
#endif

#endif /* MRRC_MARK_DEFINED_H */
