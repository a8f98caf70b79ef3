/* xz streams in memory through liblzma (xz.h). */
#include <lzma.h>
#include <stdlib.h>

#include "xz.h"

e2s_err e2s_xz_decode(const uint8_t *in, size_t n, const char *section,
		      uint8_t **out, size_t *out_len, e2s_diag *d)
{
	lzma_stream s = LZMA_STREAM_INIT;
	size_t cap = n < 4096 ? 16384 : 4 * n;
	uint8_t *buf = NULL;
	e2s_err e = E2S_ERR_OK;
	lzma_ret r;

	*out = NULL;
	*out_len = 0;
	/* LZMA_CONCATENATED: xz(1) reads several streams one after the
	 * other too; the decoder's memory is bounded like the output. */
	if (lzma_stream_decoder(&s, (uint64_t)E2S_XZ_MAX_OUT,
				LZMA_CONCATENATED) != LZMA_OK)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	if (cap > E2S_XZ_MAX_OUT)
		cap = E2S_XZ_MAX_OUT;
	buf = malloc(cap);
	if (!buf) {
		e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		goto out;
	}
	s.next_in = in;
	s.avail_in = n;
	s.next_out = buf;
	s.avail_out = cap;
	for (;;) {
		r = lzma_code(&s, LZMA_FINISH);
		if (r == LZMA_STREAM_END)
			break;
		if (r == LZMA_OK && s.avail_out == 0) {
			if (cap >= E2S_XZ_MAX_OUT) {
				e = e2s_fail(d, E2S_ERR_TOO_LARGE, section, 0,
					     "xz data decompresses to more "
					     "than %zu MiB", E2S_XZ_MAX_OUT >> 20);
				goto out;
			}
			size_t ncap = cap * 2 > E2S_XZ_MAX_OUT ? E2S_XZ_MAX_OUT
							       : cap * 2;
			uint8_t *p = realloc(buf, ncap);
			if (!p) {
				e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
				goto out;
			}
			buf = p;
			s.next_out = buf + cap;
			s.avail_out = ncap - cap;
			cap = ncap;
			continue;
		}
		if (r == LZMA_MEM_ERROR) {
			e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		} else if (r == LZMA_MEMLIMIT_ERROR) {
			e = e2s_fail(d, E2S_ERR_TOO_LARGE, section, 0,
				     "xz data needs too much memory");
		} else if (r == LZMA_BUF_ERROR || r == LZMA_OK) {
			/* Input used up before the stream's end. */
			e = e2s_fail(d, E2S_ERR_TRUNCATED, section, 0,
				     "xz data ends early");
		} else {
			e = e2s_fail(d, E2S_ERR_BAD_ELF, section,
				     (uint64_t)s.total_in,
				     "not xz data, or corrupt (liblzma error %d)",
				     (int)r);
		}
		goto out;
	}
	*out_len = (size_t)s.total_out;
	*out = buf;
	buf = NULL;
out:
	lzma_end(&s);
	free(buf);
	return e;
}

e2s_err e2s_xz_encode(const uint8_t *in, size_t n, uint8_t **out,
		      size_t *out_len, e2s_diag *d)
{
	size_t cap = lzma_stream_buffer_bound(n), pos = 0;
	uint8_t *buf = cap ? malloc(cap) : NULL;
	*out = NULL;
	*out_len = 0;
	if (!buf)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	lzma_ret r = lzma_easy_buffer_encode(LZMA_PRESET_DEFAULT,
					     LZMA_CHECK_CRC64, NULL, in, n,
					     buf, &pos, cap);
	if (r != LZMA_OK) {
		free(buf);
		return e2s_fail(d, r == LZMA_MEM_ERROR ? E2S_ERR_NOMEM
						       : E2S_ERR_INTERNAL,
				NULL, 0, "xz compression failed (liblzma "
				"error %d)", (int)r);
	}
	/* The bound is about the input's size: keep what was written. */
	uint8_t *fit = realloc(buf, pos ? pos : 1);
	*out = fit ? fit : buf;
	*out_len = pos;
	return E2S_ERR_OK;
}
