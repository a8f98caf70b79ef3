#include "buf.h"
#include "mem.h"

#include <stdlib.h>
#include <string.h>

void bw_init(bw_t *w, bool big_endian)
{
	memset(w, 0, sizeof *w);
	w->big_endian = big_endian;
}

void bw_free(bw_t *w)
{
	free(w->data);
	w->data = NULL;
	w->len = w->cap = 0;
}

bool bw_reserve(bw_t *w, size_t n)
{
	if (w->oom)
		return false;
	if (n <= w->cap - w->len)
		return true;
	size_t want = w->cap ? w->cap : 256;
	while (want - w->len < n) {
		if (want > SIZE_MAX / 2) {
			w->oom = true;
			return false;
		}
		want *= 2;
	}
	uint8_t *p = e2s_realloc_big(w->data, want);
	if (!p) {
		w->oom = true;
		return false;
	}
	w->data = p;
	w->cap = want;
	return true;
}

void bw_bytes(bw_t *w, const void *p, size_t n)
{
	if (n == 0 || !bw_reserve(w, n))
		return;
	memcpy(w->data + w->len, p, n);
	w->len += n;
}

void bw_zero(bw_t *w, size_t n)
{
	if (n == 0 || !bw_reserve(w, n))
		return;
	memset(w->data + w->len, 0, n);
	w->len += n;
}

static void put(uint8_t *p, uint64_t v, unsigned n, bool be)
{
	for (unsigned i = 0; i < n; i++) {
		unsigned shift = be ? 8 * (n - 1 - i) : 8 * i;
		p[i] = (uint8_t)(v >> shift);
	}
}

void bw_uN(bw_t *w, uint64_t v, unsigned n)
{
	if (!bw_reserve(w, n))
		return;
	put(w->data + w->len, v, n, w->big_endian);
	w->len += n;
}

void bw_put_uN(bw_t *w, size_t off, uint64_t v, unsigned n)
{
	if (w->oom || off > w->len || n > w->len - off)
		return;
	put(w->data + off, v, n, w->big_endian);
}

void bw_uleb(bw_t *w, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		bw_u8(w, (uint8_t)(b | (v ? 0x80 : 0)));
	} while (v);
}

void bw_sleb(bw_t *w, int64_t v)
{
	for (;;) {
		uint8_t b = v & 0x7f;
		v >>= 7; /* arithmetic on every compiler we support */
		bool done = (v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40));
		bw_u8(w, (uint8_t)(b | (done ? 0 : 0x80)));
		if (done)
			return;
	}
}
