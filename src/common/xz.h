/* xz streams (liblzma) in memory: Fedora's mini debuginfo, the ELF file
 * compressed into a program's .gnu_debugdata section. */
#ifndef E2S_XZ_H
#define E2S_XZ_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Most bytes a stream may decompress to (a mini debuginfo holds function
 * symbols: kilobytes; a bigger one is refused rather than trusted). */
#define E2S_XZ_MAX_OUT ((size_t)256 << 20)

/* Decompress the whole .xz stream (or concatenated streams) in[0..n)
 * into *out (malloc'd, free it), *out_len bytes. TRUNCATED when the
 * stream ends early, BAD_ELF when it is not xz data or is corrupt,
 * TOO_LARGE past E2S_XZ_MAX_OUT; section names the section in d. */
e2s_err e2s_xz_decode(const uint8_t *in, size_t n, const char *section,
		      uint8_t **out, size_t *out_len, e2s_diag *d);
/* Compress in[0..n) as one .xz stream, as `xz` does by default (preset
 * 6, CRC64), single-threaded: the same input always gives the same
 * bytes. */
e2s_err e2s_xz_encode(const uint8_t *in, size_t n, uint8_t **out,
		      size_t *out_len, e2s_diag *d);

#endif
