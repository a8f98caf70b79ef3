/* SFrame model: CFI rows projected onto what SFrame tracks, and the
 * encoder that writes them as a V3 section. Consumed by src/elfpatch and
 * the CLI. The reader/verifier (sfr_*.h) does not use these structs. */
#ifndef E2S_SFE_H
#define E2S_SFE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../cfi/cfi.h"
#include "../common/buf.h"
#include "../common/err.h"

/* Why a function was not converted. The first entry means "converted". */
#define SFE_SKIPS(X)                                                    \
	X(NONE, "converted")                                            \
	X(BAD_CFI, "bad-cfi")               /* FDE/CIE status not OK */  \
	X(EMPTY, "empty-range")             /* pc_range 0 */             \
	X(CFA_EXPR, "cfa-expression")       /* CFA from an unsupported expression */ \
	X(CFA_INVALID, "cfa-invalid")       /* offset applied to an expression CFA */ \
	X(CFA_UNSET, "cfa-unset")           /* no CFA rule in some row */ \
	X(CFA_REG, "cfa-register")          /* CFA base SFrame cannot name */ \
	X(RA_RULE, "ra-rule")               /* RA rule SFrame cannot express */ \
	X(FP_RULE, "fp-rule")               /* FP rule SFrame cannot express */ \
	X(OFFSET_RANGE, "offset-range")     /* a value too wide for 4-byte words */ \
	X(TOO_LARGE, "function-too-large")  /* size does not fit in 32 bits */ \
	X(DUPLICATE, "duplicate")           /* same or overlapping range as an earlier FDE */ \
	X(UNSUPPORTED_ABI, "unsupported-abi")                            \
	X(SP_RULE, "sp-rule")               /* SP column not CFA-derived */ \
	X(CFA_ALIGN, "cfa-offset-unaligned") /* s390x: (off-160) % 8 != 0 */ \
	X(PLT_SHAPE, "plt-shape")           /* PLT CFA expression in an unusable layout */ \
	X(V2, "not-in-sframe-v2")           /* --sframe-version=2: flexible FDE or signal frame */ \
	X(PC_RELATIVE, "pc-relative")       /* AMD64: rule based on DWARF register 16 (the PC) */ \
	X(RA_SIGN_PC, "ra-signed-with-pc")  /* AArch64: negate_ra_state_with_pc (PAuth_LR) */ \
	X(RA_SIGN_STATE, "ra-sign-state")   /* AArch64: register 34 not a constant 0/1 */

typedef enum {
#define SFE_X(name, text) SFE_SKIP_##name,
	SFE_SKIPS(SFE_X)
#undef SFE_X
	SFE_SKIP_COUNT_
} sfe_skip;

const char *sfe_skip_name(sfe_skip s);

/* One frame row entry, before width selection. */
typedef struct {
	uint32_t start;     /* PC offset from the function start (MASK: inside
	                     * the repeated block) */
	uint8_t ndw;        /* data words; 0 = RA undefined (outermost) */
	uint8_t base_fp;    /* default FDEs: CFA base is FP, not SP */
	uint8_t mangled_ra; /* AArch64: RA signed */
	uint8_t pad_;
	int32_t dw[6];         /* data words as stored (s390x CFA scaled;
	                         * flex: control/offset pairs: at most
	                         * CFA, RA, FP = 6) */
} sfe_fre;

typedef struct {
	uint64_t start;      /* vaddr (linked) or symbol value + addend (rel) */
	uint32_t size;
	uint8_t fde_type;    /* SF_FDE_TYPE_* */
	uint8_t pc_type;     /* SF_FDE_PCTYPE_* */
	uint8_t rep_size;    /* MASK: repeated block size */
	bool signal;
	bool pauth_b;
	uint32_t fre_first, fre_count; /* into sfe_set.fres */
	uint32_t enc_off, enc_len; /* fast path: the function's FRE data as
	                      * SFrame V3 bytes (attribute + FREs) in
	                      * sfe_set.enc; its FREs are not in fres then
	                      * (enc_len 0: they are) */
	uint32_t src_fde;    /* index into cfi_table.fdes */
	cfi_reloc_ref reloc; /* relocatable files; for a function split in
	                      * several FDEs (> 65535 FREs) or a PLT split,
	                      * the addend is moved so that symbol + addend
	                      * == start for every part */
} sfe_func;

typedef struct {
	cfi_abi abi;
	bool big_endian;
	sfe_func *funcs;     /* sorted by (reloc.shndx, start) */
	size_t nfuncs;
	sfe_fre *fres;
	size_t nfres;        /* entries of fres */
	uint8_t *enc;        /* pre-encoded FRE data of fast-path functions */
	size_t enc_len;
	size_t nfres_enc;    /* FREs held only in enc */
	size_t nfast;        /* functions the fused fast path converted */
	uint8_t *fde_skip;   /* per cfi_table FDE: sfe_skip */
	size_t nfdes;
	size_t counts[SFE_SKIP_COUNT_]; /* FDEs per outcome (NONE = converted) */
} sfe_set;

e2s_err sfe_project(const cfi_table *t, sfe_set *out, e2s_diag *diag);
void sfe_set_free(sfe_set *s);

/* Streaming projection: the same result as sfe_project, built one FDE at
 * a time from cfi_parse_stream / cfi_file_open_view / _stream, so no row
 * table is ever held. sfe_stream_fde is a cfi_fde_fn (ctx = the stream). */
typedef struct sfe_stream sfe_stream;
e2s_err sfe_stream_new(sfe_stream **out); /* NOMEM only */
e2s_err sfe_stream_fde(void *ctx, const cfi_table *t, size_t fde,
		       const cfi_row *rows, size_t nrows);
/* The fused fast path for the same stream, a cfi_fde_fast_fn: FDEs it
 * cannot take go to sfe_stream_fde with their rows. */
int sfe_stream_fast(void *ctx, const cfi_table *t, size_t fde,
		    const cfi_section *sec);
/* After the parse: *out receives the set (sfe_set_free). t is the
 * parsed table (its FDE count must match what the stream saw). */
e2s_err sfe_stream_finish(sfe_stream *s, const cfi_table *t, sfe_set *out,
			  e2s_diag *diag);
void sfe_stream_free(sfe_stream *s);

/* cfi_file_open_view + sfe_project in one pass over the CFI, streaming,
 * with the fused fast path (sfe_stream_fast) unless lo->general_path.
 * img is borrowed: it must stay valid and unchanged until
 * cfi_file_close(*cf). *cf's table has CIEs and FDEs (status, pc range,
 * relocation) but no rows. lo may be NULL. */
e2s_err sfe_project_view(const void *img, size_t size,
			 const cfi_load_opts *lo, cfi_file **cf, sfe_set *set,
			 e2s_diag *diag);

/* A relocation the ELF layer must emit for a relocatable output: the
 * 64-bit PC-relative field at `offset` in the section refers to the
 * function of `func`. */
typedef struct {
	uint64_t offset;
	uint32_t func;       /* index into sfe_set.funcs */
	uint8_t width;       /* 8: 64-bit field (V3: R_X86_64_PC64,
	                      * R_AARCH64_PREL64, R_390_PC64); 4: 32-bit
	                      * (V2: R_X86_64_PC32, R_AARCH64_PREL32,
	                      * R_390_PC32) */
} sfe_reloc;

typedef struct {
	bool relocatable;     /* function starts come from relocations */
	uint64_t section_vaddr; /* linked files: final address of .sframe */
	const uint32_t *only; /* encode only these funcs (sorted), or NULL */
	size_t nonly;
	/* FDEs whose attribute + FREs are byte-identical point at one stored
	 * copy (the first, in index order). sfh_num_fres still counts the
	 * FREs of every FDE (see sfe_encode.c for why). */
	bool share_fres;
	/* 0 or 3: SFrame V3; 2: V2 (call sfe_restrict first). */
	uint8_t sframe_version;
} sfe_encode_opts;

/* Drop (as skip reason V2) the functions the requested version cannot
 * express, rewriting the rest as needed. A no-op for V3. For V2: flexible
 * FDEs and signal frames cannot be written, except s390x flexible FDEs
 * whose CFA is SP/FP-based and whose RA/FP are in registers or on the
 * stack (V2's encoded-register-number words). Outermost rows (RA
 * undefined) get no FRE in V2 (see v2_outermost). Must be called between
 * sfe_project and sfe_encode* for V2 (sfe_build does it); sfe_encode
 * refuses a function V2 cannot express. */
void sfe_restrict(sfe_set *s, const sfe_encode_opts *o);

/* Bytes the FRE data takes with and without sharing (for statistics). */
typedef struct {
	uint64_t fre_bytes;      /* FRE sub-section as written */
	uint64_t fre_bytes_unshared;
	uint64_t shared_fdes;    /* FDEs pointing at an earlier copy */
} sfe_encode_stats;

/* Size in bytes of the section sfe_encode would write; 0 when no
 * function is selected (sfe_encode then fails with E2S_ERR_NO_FUNCS: an
 * empty .sframe is never produced, the caller decides what to do). */
size_t sfe_encoded_size(const sfe_set *s, const sfe_encode_opts *o);
/* Encode a V3 section. relocs/nrelocs may be NULL for linked output. */
e2s_err sfe_encode(const sfe_set *s, const sfe_encode_opts *o, bw_t *out,
		   sfe_reloc **relocs, size_t *nrelocs, e2s_diag *diag);
/* The same, also filling *st (may be NULL). */
e2s_err sfe_encode_ex(const sfe_set *s, const sfe_encode_opts *o, bw_t *out,
		      sfe_reloc **relocs, size_t *nrelocs,
		      sfe_encode_stats *st, e2s_diag *diag);

/* sfe_project + sfe_encode in one call. *set_out (may be NULL) receives
 * the projected set (free with sfe_set_free); relocs as for sfe_encode.
 * out must be bw_init'ed with t's byte order. */
e2s_err sfe_build(const cfi_table *t, const sfe_encode_opts *o, bw_t *out,
		  sfe_set *set_out, sfe_reloc **relocs, size_t *nrelocs,
		  e2s_diag *diag);

#endif
