/* The verifier behind --verify: checks a decoded .sframe (ours or any
 * other producer's: gas, ld, LLVM, mold...) against the DWARF CFI by
 * unwinding one frame from both sides and comparing the results.
 *
 * Independent of the converter by construction: it shares only byte
 * reading and record framing (cfi_parse_records, sfr_decode). It walks
 * the CFI programs itself, evaluates DWARF expressions itself, and
 * interprets SFrame rows strictly per the spec's Appendix A (with the
 * errata in shared/seeds/README.md).
 *
 * For each DWARF FDE, at every DWARF row start, every FRE start, every
 * SFrame FDE boundary, and every PC of MASK FDEs and of PC-dependent
 * DWARF rows, it computes the caller's CFA, SP, PC (return address), FP
 * and RA signing state as symbolic values over the callee's registers
 * and memory, once from DWARF and once from SFrame, and requires them
 * equal. A row SFrame cannot express must have no FRE. */
#ifndef E2S_VF_H
#define E2S_VF_H

#include <stdbool.h>
#include <stddef.h>

#include "../elf/elfr_cfi.h"
#include "../elf/elfr_sframe.h"

typedef struct {
	size_t functions; /* DWARF FDEs */
	size_t match;     /* in .sframe, equal at every check point */
	size_t mismatch;  /* some check point differs */
	size_t missing;   /* every row expressible, no FRE (coverage) */
	size_t skipped;   /* some row not expressible (or bad CFI), no FRE */
	size_t extra;     /* .sframe functions no DWARF FDE covers */
	size_t points;    /* check points compared */
} vf_counts;

enum { VF_MISMATCH, VF_MISSING, VF_SKIPPED, VF_EXTRA };

typedef struct {
	int kind;         /* VF_* */
	uint32_t fde;     /* cfi_table FDE index (not for VF_EXTRA) */
	uint64_t pc;      /* where */
	uint32_t shndx;   /* relocatable files: pc's section */
	char what[240];
} vf_issue;

typedef void (*vf_issue_cb)(void *ctx, const vf_issue *issue);

/* t: records of sec (cfi_parse_records; rows are not used). t and s both
 * from a linked file (vaddrs) or both from a relocatable one (keyed by
 * section index + offset). cb (may be NULL) gets every issue, skipped
 * functions included. */
/* The SFrame ABI/arch id a section for this CFI ABI (abi_id) and byte
 * order must carry, by the verifier's own reading (0: none). */
unsigned vf_sframe_abi(int abi, bool big_endian);

e2s_err vf_verify(const cfi_section *sec, const cfi_table *t,
		  const sfr_section *s, vf_issue_cb cb, void *ctx,
		  vf_counts *out, e2s_diag *diag);

#endif
