/* Semantic check of a decoded .sframe against DWARF CFI rows.
 *
 * For every DWARF FDE, at each DWARF row start and each FRE start inside
 * it, the rules Appendix A recovers from the SFrame (sfr_recover) are
 * compared with the DWARF rules: CFA base/offset/dereference, caller SP,
 * RA and FP location, RA signing, signal/pauth flags. The encoder's
 * projection code is not used. */
#ifndef E2S_SFE_VERIFY_H
#define E2S_SFE_VERIFY_H

#include "../cfi/cfi.h"
#include "sfr.h"

typedef struct {
	size_t functions; /* DWARF FDEs */
	size_t match;     /* present in .sframe and equal at every point */
	size_t mismatch;  /* present but some point differs */
	size_t missing;   /* expressible in SFrame but absent */
	size_t skipped;   /* not expressible (or bad/duplicate) and absent */
	size_t extra;     /* .sframe functions no DWARF FDE covers */
} sfe_verify_counts;

typedef struct {
	bool extra;       /* an .sframe function without DWARF (fde unused) */
	bool missing;
	uint32_t fde;     /* cfi_table FDE index (not for extra) */
	uint64_t pc;      /* where the difference is */
	uint32_t shndx;   /* relocatable files: pc's section */
	char what[200];
} sfe_verify_issue;

typedef void (*sfe_verify_cb)(void *ctx, const sfe_verify_issue *issue);

/* t and s both from a linked file (addresses are vaddrs) or both from a
 * relocatable one (functions keyed by section index + offset: cfi_fde
 * reloc.shndx / pc_begin against sfr_fde shndx / pc). cb (may be NULL)
 * is called for each mismatch, missing and extra function. */
e2s_err sfe_verify(const cfi_table *t, const sfr_section *s,
		   sfe_verify_cb cb, void *ctx, sfe_verify_counts *out,
		   e2s_diag *diag);

#endif
