// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * XXH64, written from the algorithm's description: four lanes over 32-byte
 * stripes, then the tail in 8-, 4- and 1-byte steps, then an avalanche.
 * Unaligned input is read with memcpy (the arena's keys are not aligned).
 */
#include <string.h>

#include "hash.h"

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static inline uint64_t rotl64(uint64_t x, unsigned int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t read64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;	/* little-endian host: see layout.h */
}

static inline uint32_t read32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t round64(uint64_t acc, uint64_t input)
{
	acc += input * P2;
	acc = rotl64(acc, 31);
	return acc * P1;
}

static inline uint64_t merge64(uint64_t acc, uint64_t v)
{
	acc ^= round64(0, v);
	return acc * P1 + P4;
}

uint64_t mrrcd_hash64(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	const unsigned char *end = p + len;
	uint64_t h;

	if (len >= 32) {
		uint64_t v1 = seed + P1 + P2, v2 = seed + P2;
		uint64_t v3 = seed, v4 = seed - P1;

		do {
			v1 = round64(v1, read64(p));
			v2 = round64(v2, read64(p + 8));
			v3 = round64(v3, read64(p + 16));
			v4 = round64(v4, read64(p + 24));
			p += 32;
		} while (end - p >= 32);
		h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) +
		    rotl64(v4, 18);
		h = merge64(h, v1);
		h = merge64(h, v2);
		h = merge64(h, v3);
		h = merge64(h, v4);
	} else {
		h = seed + P5;
	}
	h += (uint64_t)len;
	for (; end - p >= 8; p += 8)
		h = rotl64(h ^ round64(0, read64(p)), 27) * P1 + P4;
	if (end - p >= 4) {
		h = rotl64(h ^ ((uint64_t)read32(p) * P1), 23) * P2 + P3;
		p += 4;
	}
	for (; p < end; p++)
		h = rotl64(h ^ (*p * P5), 11) * P1;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}
