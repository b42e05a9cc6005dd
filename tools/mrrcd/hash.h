/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * mrrcd_hash64(): XXH64 (xxHash's 64-bit hash, as its authors specify it),
 * the hash of the arena format, for placement and for checksums.  A remote
 * reader must compute the same function.
 */
#ifndef MRRCD_HASH_H
#define MRRCD_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t mrrcd_hash64(const void *data, size_t len, uint64_t seed);

#endif /* MRRCD_HASH_H */
