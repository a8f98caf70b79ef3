#include "reader.h"

#include <string.h>

void br_init(br_t *r, const void *data, size_t size, bool big_endian)
{
	r->base = data;
	r->end = size;
	r->pos = 0;
	r->big_endian = big_endian;
	r->err = E2S_ERR_OK;
	r->err_pos = 0;
}

void br_set_error(br_t *r, e2s_err e)
{
	if (r->err == E2S_ERR_OK) {
		r->err = e;
		r->err_pos = r->pos;
	}
}

bool br_sub(br_t *r, size_t len, br_t *sub)
{
	size_t start = r->pos;
	if (!br_take(r, len)) {
		br_init(sub, r->base, 0, r->big_endian);
		sub->pos = start;
		sub->end = start;
		return false;
	}
	*sub = *r;
	sub->pos = start;
	sub->end = start + len;
	return true;
}

uint64_t br_uN(br_t *r, unsigned n) { return br_take_uN(r, n); }

int64_t br_sN(br_t *r, unsigned n)
{
	uint64_t v = br_uN(r, n);
	if (n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~(uint64_t)0 << (8 * n);
	return (int64_t)v;
}

/* At most 10 bytes; the 10th may only carry bit 63 (uleb) or the sign
 * (sleb). Padding bytes such as 0x80 0x00 within that limit are valid. */
uint64_t br_uleb_long(br_t *r)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < 10; i++) {
		const uint8_t *p = br_take(r, 1);
		if (!p)
			return 0;
		uint8_t b = *p;
		if (i == 9 && (b & 0x7e)) {
			br_set_error(r, E2S_ERR_LEB_OVERLONG);
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return v;
	}
	br_set_error(r, E2S_ERR_LEB_OVERLONG);
	return 0;
}

int64_t br_sleb(br_t *r)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < 10; i++) {
		const uint8_t *p = br_take(r, 1);
		if (!p)
			return 0;
		uint8_t b = *p;
		if (i == 9) {
			uint8_t low = b & 0x7f;
			if (b & 0x80 || (low != 0 && low != 0x7f)) {
				br_set_error(r, E2S_ERR_LEB_OVERLONG);
				return 0;
			}
			v |= (uint64_t)(b & 1) << 63;
			return (int64_t)v;
		}
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			unsigned shift = 7 * (i + 1);
			if (b & 0x40)
				v |= ~(uint64_t)0 << shift;
			return (int64_t)v;
		}
	}
	br_set_error(r, E2S_ERR_LEB_OVERLONG);
	return 0;
}

const char *br_cstr(br_t *r)
{
	if (r->err)
		return NULL;
	if (r->pos >= r->end) {
		br_set_error(r, E2S_ERR_TRUNCATED);
		return NULL;
	}
	const uint8_t *s = r->base + r->pos;
	const uint8_t *nul = memchr(s, 0, r->end - r->pos);
	if (!nul) {
		br_set_error(r, E2S_ERR_TRUNCATED);
		return NULL;
	}
	r->pos += (size_t)(nul - s) + 1;
	return (const char *)s;
}

const uint8_t *br_bytes(br_t *r, size_t n) { return br_take(r, n); }

void br_skip(br_t *r, size_t n) { (void)br_take(r, n); }

void br_seek(br_t *r, size_t pos)
{
	if (r->err)
		return;
	if (pos > r->end) {
		br_set_error(r, E2S_ERR_TRUNCATED);
		return;
	}
	r->pos = pos;
}
