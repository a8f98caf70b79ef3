/* Growable output byte buffer with explicit-endian writers. */
#ifndef E2S_BUF_H
#define E2S_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
	uint8_t *data;
	size_t len;
	size_t cap;
	bool big_endian;
	bool oom; /* sticky: a failed growth; later writes are dropped */
} bw_t;

void bw_init(bw_t *w, bool big_endian);
void bw_free(bw_t *w);
/* Make room for n more bytes; false (and oom set) on failure. */
bool bw_reserve(bw_t *w, size_t n);
void bw_bytes(bw_t *w, const void *p, size_t n);
void bw_zero(bw_t *w, size_t n);
/* Write v as n bytes (1, 2, 4 or 8) in the buffer's byte order. */
void bw_uN(bw_t *w, uint64_t v, unsigned n);
static inline void bw_u8(bw_t *w, uint8_t v) { bw_uN(w, v, 1); }
static inline void bw_u16(bw_t *w, uint16_t v) { bw_uN(w, v, 2); }
static inline void bw_u32(bw_t *w, uint32_t v) { bw_uN(w, v, 4); }
static inline void bw_u64(bw_t *w, uint64_t v) { bw_uN(w, v, 8); }
/* Overwrite n bytes at offset off (must already be written). */
/* Store the low n bytes of v at p in the given byte order (the writer's
 * counterpart of e2s_load_uN): widths 2, 4 and 8 one store and at most
 * a byte swap. */
static inline void e2s_store_uN(uint8_t *p, uint64_t v, unsigned n, bool be)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__)
	bool swap = be != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	if (n == 8) {
		v = swap ? __builtin_bswap64(v) : v;
		memcpy(p, &v, 8);
		return;
	}
	if (n == 4) {
		uint32_t x = swap ? __builtin_bswap32((uint32_t)v) : (uint32_t)v;
		memcpy(p, &x, 4);
		return;
	}
	if (n == 2) {
		uint16_t x = swap ? __builtin_bswap16((uint16_t)v) : (uint16_t)v;
		memcpy(p, &x, 2);
		return;
	}
#endif
	for (unsigned i = 0; i < n; i++)
		p[be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

void bw_put_uN(bw_t *w, size_t off, uint64_t v, unsigned n);
void bw_uleb(bw_t *w, uint64_t v);
void bw_sleb(bw_t *w, int64_t v);

#endif
