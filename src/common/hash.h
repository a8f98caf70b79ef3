/* A 64-bit hash of bytes for tables whose keys are then compared in
 * full (the projection's programs seen before, the encoder's stored FRE
 * data): it only needs to spread. */
#ifndef E2S_HASH_H
#define E2S_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t e2s_hash_step(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0xd6e8feb86659fd93ull;
	return h >> 32 | h << 32; /* one rotate: high bits down */
}

/* The n bytes at p into seed h: over 16 bytes, two lanes of eight
 * bytes a step (independent multiplies), the last sixteen overlapping
 * the step before; up to 16, eight bytes a step; shorter keys from
 * their first, middle and last bytes (n itself belongs in the seed). */
static inline uint64_t e2s_hash_bytes(uint64_t h, const uint8_t *p, size_t n)
{
	uint64_t w;
	if (n > 16) {
		uint64_t g = ~h, a, b;
		for (size_t k = 0; k + 16 < n; k += 16) {
			memcpy(&a, p + k, 8);
			memcpy(&b, p + k + 8, 8);
			h = e2s_hash_step(h, a);
			g = e2s_hash_step(g, b);
		}
		memcpy(&a, p + n - 16, 8);
		h = e2s_hash_step(h, a) ^ g;
		memcpy(&w, p + n - 8, 8);
	} else if (n >= 8) {
		if (n > 8) {
			memcpy(&w, p, 8);
			h = e2s_hash_step(h, w);
		}
		memcpy(&w, p + n - 8, 8);
	} else if (n >= 4) {
		uint32_t a, b;
		memcpy(&a, p, 4);
		memcpy(&b, p + n - 4, 4);
		w = (uint64_t)a << 32 | b;
	} else {
		w = n ? p[0] | (uint64_t)p[n / 2] << 8 | (uint64_t)p[n - 1] << 16 : 0;
	}
	h = (h ^ w) * 0xd6e8feb86659fd93ull;
	h ^= h >> 31;
	h *= 0x9e3779b97f4a7c15ull;
	h ^= h >> 32;
	return h;
}

#endif
