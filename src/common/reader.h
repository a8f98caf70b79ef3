/* Bounds-checked byte reader with a sticky error.
 *
 * Every parse in eh2sframe goes through this: a read past the end sets
 * the error once, returns 0, and all later reads return 0 too, so callers
 * check br_ok() after a group of reads instead of after each one. */
#ifndef E2S_READER_H
#define E2S_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "err.h"

typedef struct {
	const uint8_t *base; /* start of the whole buffer (offsets are from here) */
	size_t end;          /* one past the last readable offset */
	size_t pos;          /* next offset to read */
	bool big_endian;
	e2s_err err;         /* first error, E2S_ERR_OK while none */
	size_t err_pos;      /* offset at which the first error happened */
} br_t;

void br_init(br_t *r, const void *data, size_t size, bool big_endian);

/* A reader over [pos, pos+len) of r sharing r's base, so offsets stay
 * section offsets. Fails (sticky on r) if len runs past r's end; r's
 * position is advanced past the sub-range either way it succeeds. */
bool br_sub(br_t *r, size_t len, br_t *sub);

static inline bool br_ok(const br_t *r) { return r->err == E2S_ERR_OK; }
static inline size_t br_left(const br_t *r)
{
	return r->err || r->pos >= r->end ? 0 : r->end - r->pos;
}
static inline bool br_at_end(const br_t *r) { return br_left(r) == 0; }

/* The n-byte integer at p (the caller has checked the bounds). Widths
 * 2, 4 and 8 are one load and at most a byte swap: the byte loop costs
 * some 70 instructions per 8-byte field, and symbol tables and
 * relocations are read field by field. */
static inline uint64_t e2s_load_uN(const uint8_t *p, unsigned n, bool be)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__)
	bool swap = be != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	if (n == 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		return swap ? __builtin_bswap64(v) : v;
	}
	if (n == 4) {
		uint32_t v;
		memcpy(&v, p, 4);
		return swap ? __builtin_bswap32(v) : v;
	}
	if (n == 2) {
		uint16_t v;
		memcpy(&v, p, 2);
		return swap ? __builtin_bswap16(v) : v;
	}
#endif
	uint64_t v = 0;
	if (be)
		for (unsigned i = 0; i < n; i++)
			v = v << 8 | p[i];
	else
		for (unsigned i = n; i-- > 0;)
			v = v << 8 | p[i];
	return v;
}

void br_set_error(br_t *r, e2s_err e);

/* Reserve n bytes; NULL (error set) if they are not all there. Inline
 * with the fixed-width readers below, so that a field costs a compare
 * and a load, not a call. */
static inline const uint8_t *br_take(br_t *r, size_t n)
{
	if (r->err)
		return NULL;
	if (r->pos > r->end || n > r->end - r->pos) {
		br_set_error(r, E2S_ERR_TRUNCATED);
		return NULL;
	}
	const uint8_t *p = r->base + r->pos;
	r->pos += n;
	return p;
}

static inline uint64_t br_take_uN(br_t *r, unsigned n)
{
	const uint8_t *p = br_take(r, n);
	return p ? e2s_load_uN(p, n, r->big_endian) : 0;
}

static inline uint8_t br_u8(br_t *r) { return (uint8_t)br_take_uN(r, 1); }
static inline uint16_t br_u16(br_t *r) { return (uint16_t)br_take_uN(r, 2); }
static inline uint32_t br_u32(br_t *r) { return (uint32_t)br_take_uN(r, 4); }
static inline uint64_t br_u64(br_t *r) { return br_take_uN(r, 8); }
/* Unsigned of n bytes (1, 2, 4 or 8), in the reader's byte order. */
uint64_t br_uN(br_t *r, unsigned n);
/* Signed of n bytes (1, 2, 4 or 8), sign-extended. */
int64_t br_sN(br_t *r, unsigned n);
/* LEB128: overlong encodings (more than 10 bytes, or bits past 64) fail
 * with E2S_ERR_LEB_OVERLONG; running off the end with TRUNCATED. */
uint64_t br_uleb_long(br_t *r);
int64_t br_sleb(br_t *r);
/* br_uleb_long with the one-byte form (most lengths and registers)
 * inline. */
static inline uint64_t br_uleb(br_t *r)
{
	if (r->err == E2S_ERR_OK && r->pos < r->end && r->base[r->pos] < 0x80)
		return r->base[r->pos++];
	return br_uleb_long(r);
}
/* NUL-terminated string; returns NULL (and sets TRUNCATED) if no NUL. */
const char *br_cstr(br_t *r);
/* Pointer to n raw bytes, or NULL on truncation. */
const uint8_t *br_bytes(br_t *r, size_t n);
void br_skip(br_t *r, size_t n);
/* Move to an absolute offset inside [0, end]. */
void br_seek(br_t *r, size_t pos);

#endif
