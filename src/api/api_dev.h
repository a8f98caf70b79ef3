/* Entry points for the tests and the eh2sframe command's hidden
 * developer mode (EH2SFRAME_DEV_BUILD, src/cli/cmd_sframe.c), not part
 * of the public API: they are local in both shipped libraries (the
 * shared one exports eh2s_* only, the static one is prelinked with only
 * eh2s_* global; Makefile). The command and the unit tests link the
 * library's objects directly. */
#ifndef E2S_API_DEV_H
#define E2S_API_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "eh2sframe.h"

/* Build just the bytes of an .sframe section from path's CFI, for a
 * section at vaddr (linked files). */
typedef struct {
	int debug_frame;
	int sframe_version;  /* 0 or 3: V3; 2: V2 */
	int share_fres;      /* SFE_SHARE_*; 2: also share_runs */
	uint64_t vaddr;
} api_encode_opts;

typedef struct {
	size_t functions;          /* projected functions (FDEs kept) */
	size_t outcome[EH2S_SKIP_COUNT]; /* FDEs per reason ([0] =
	                            * converted) */
	size_t bytes;
	uint64_t fre_bytes;        /* FRE sub-section as written */
	uint64_t fre_bytes_unshared; /* ... without share_fres */
	uint64_t shared_fdes;      /* FDEs pointing at another's FREs */
} api_encode_info;

/* *data (free with eh2s_free) gets the section bytes; info may be
 * NULL. */
eh2s_status api_encode_sframe_file(const char *path, const api_encode_opts *o,
				   void **data, size_t *size,
				   api_encode_info *info, eh2s_error *err);

#endif
