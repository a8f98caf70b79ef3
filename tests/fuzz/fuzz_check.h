/* Oracle failures in the fuzz targets: say which check failed, then
 * abort (libFuzzer and the replay driver both report the signal). */
#ifndef E2S_FUZZ_CHECK_H
#define E2S_FUZZ_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/err.h"
#include "sframe/sfr.h"
#include "sframe/sfr_spec.h"

#define FUZZ_FAIL(msg)                                                  \
	do {                                                            \
		fprintf(stderr, "%s:%d: oracle failed: %s\n", __FILE__, \
			__LINE__, msg);                                 \
		abort();                                                \
	} while (0)

/* The same with the library's diagnostic. */
#define FUZZ_FAIL_DIAG(msg, diag)                                       \
	do {                                                            \
		char fz_buf_[300];                                      \
		e2s_diag_format((diag), fz_buf_, sizeof fz_buf_);       \
		fprintf(stderr, "%s:%d: oracle failed: %s: %s\n",      \
			__FILE__, __LINE__, msg, fz_buf_);              \
		abort();                                                \
	} while (0)

/* vf_verify checks a MASK FDE at every PC (vf_check.c, gather): the
 * projection allows 1 MiB per FDE (CONV_MAX_MASK_SIZE) and any number of
 * FDEs, some 16 us a PC in a fuzzing build. Real PLTs are a few KiB, so
 * the targets verify only sections whose MASK FDEs stay below this. */
#define FUZZ_MAX_MASK_BYTES (1u << 16)

static inline bool fuzz_mask_small(const sfr_section *s)
{
	uint64_t mask = 0;
	for (size_t i = 0; i < s->nfdes; i++)
		if (sfr_info_pctype(s->fdes[i].info) == SFR_PCTYPE_MASK)
			mask += s->fdes[i].size;
	return mask <= FUZZ_MAX_MASK_BYTES;
}

#endif
