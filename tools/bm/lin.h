/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Linearizability of one register (a page) from a history of reads and
 * writes whose written values are all different (the checker of issue 18:
 * every read must return the latest committed write).
 *
 * lin_check() is the zone test of Gibbons and Korach ("Testing shared
 * memories", SIAM J. Comput. 26(4), 1997) for histories with a read
 * mapping: the ops returning or writing one value form a cluster; its
 * zone runs from the earliest response to the latest invocation in it
 * (forward if that is later, backward otherwise).  The history is
 * linearizable iff every read's value was written (or is the initial
 * one) by a write that began before the read ended, no two forward zones
 * overlap and no backward zone lies inside another cluster's forward
 * zone.  O(n log n).  lin_check_brute() tries every order (n <= 10),
 * to check the checker.
 */
#ifndef MRRC_BM_LIN_H
#define MRRC_BM_LIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Equal times of two operations (clocks of separate processes) count as
 * overlapping: neither is known to have ended before the other began.
 */
struct lin_op {
	bool write;
	uint64_t value;
	uint64_t inv, res;	/* times, 0 < inv < res */
};

/*
 * 0 if linearizable; 1 if not, with the reason in @why; -EINVAL for a
 * malformed history (two writes of one value, a write of the initial
 * value, times out of order), -ENOMEM.
 */
int lin_check(const struct lin_op *ops, size_t n, uint64_t initial,
	      char *why, size_t len);
int lin_check_brute(const struct lin_op *ops, size_t n, uint64_t initial);

#endif
