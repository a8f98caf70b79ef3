/* SFrame model: the functions a conversion keeps, each with its FRE data
 * written once (sfe_put_fres), and the encoder that lays them out as a
 * V3 (or V2) section. Produced by src/convert, which keeps why a
 * function was not converted (conv_skip.h); the reader and the verifier
 * (sfr.h) do not use these structs. */
#ifndef E2S_SFE_H
#define E2S_SFE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../abi/abi.h"
#include "../common/buf.h"
#include "../common/err.h"
#include "../common/mem.h"

/* Where a relocatable file's function starts: symbol sym + addend, in
 * section shndx (the relocation the section's FDE had; see
 * conv_func_reloc). */
typedef struct {
	int64_t addend;
	uint32_t sym;
	uint32_t shndx;
	bool present;     /* false: no relocation gives it (not written) */
} sfe_reloc_ref;

typedef struct {
	uint64_t start;      /* vaddr (linked) or symbol value + addend (rel) */
	uint32_t size;
	uint8_t fde_type;    /* SF_FDE_TYPE_* */
	uint8_t pc_type;     /* SF_FDE_PCTYPE_* */
	uint8_t rep_size;    /* MASK: repeated block size */
	bool signal;
	bool pauth_b;
	uint8_t fre_type;    /* SF_FRE_TYPE_*: width of its FRE starts */
	uint32_t fre_count;
	uint32_t enc_off, enc_len; /* its FRE data as written in the
	                      * section, in sfe_set.enc: V3 the attribute
	                      * and the FREs, V2 the FREs (functions of the
	                      * same program may share it: read-only) */
	uint32_t src_fde;    /* the conversion's FDE index (its relocation
	                      * is kept with the FDEs: 40 bytes, not 64) */
	uint32_t shndx;      /* relocatable files: the section of its start
	                      * (its relocation's shndx), else 0 */
} sfe_func;
_Static_assert(sizeof(sfe_func) <= 40, "sfe_func: one per function");

typedef struct {
	abi_id abi;
	bool big_endian;
	sfe_func *funcs;     /* sorted by (shndx, start) */
	size_t nfuncs;
	uint8_t version;     /* SFrame version the FRE data is written for */
	size_t nfres;        /* FREs of all functions */
	uint8_t *enc;        /* every function's FRE data (sfe_func.enc_*) */
	size_t enc_len;
	/* A reference to the memory funcs and enc may lie in, with other
	 * arrays of the conversion (conv_project.c, pctx_block), so that a
	 * mid-size conversion's arrays share one huge page; NULL if none. */
	e2s_block *block;
} sfe_set;

/* Does p point into s's block? */
static inline bool sfe_in_block(const sfe_set *s, const void *p)
{
	return e2s_block_has(s->block, p);
}

void sfe_set_free(sfe_set *s);

/* One frame row entry of the function being converted, before width
 * selection (the projection's scratch; never kept past its FDE). */
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

/* Most bytes one FRE takes: 4-byte start, info, 6 4-byte words. */
#define SFE_FRE_MAX_BYTES (4 + 1 + 6 * 4)
/* Bytes of the V3 function attribute before the FREs. */
#define SFE_ATTR_BYTES 5

/* SFrame V2: can fn, whose FREs are fres, be written? s390x flexible
 * FREs are rewritten in place as V2 default ones (V2's encoded register
 * words); outermost FREs are dropped (a function may end earlier, see
 * sfe_v2.c). (sfe_v2.c) */
bool sfe_v2_fit(const abi_desc *abi, sfe_func *fn, sfe_fre *fres);

/* Write fn's FRE data for the set's version at p (room: SFE_ATTR_BYTES
 * + SFE_FRE_MAX_BYTES per FRE), each FRE with the narrowest start type
 * of its function (fn->fre_type, set here) and the narrowest data-word
 * width holding its words; returns the end. (sfe_encode.c) */
uint8_t *sfe_put_fres(uint8_t *p, const sfe_fre *fres, sfe_func *fn, bool v2,
		      bool be);

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

/* sfe_encode_opts.share_fres (and the public share_fres, which maps
 * onto it unchanged): */
#define SFE_SHARE_DEFAULT 0  /* little-endian targets share, big-endian
                              * do not: libsframe 2.47 rejects shared FRE
                              * data it has to byte-swap */
#define SFE_SHARE_ALWAYS 1   /* any value > 0 */
#define SFE_SHARE_NEVER (-1) /* any value < 0 */

typedef struct {
	bool relocatable;     /* function starts come from relocations */
	uint64_t section_vaddr; /* linked files: final address of .sframe */
	const uint32_t *only; /* encode only these funcs (sorted), or NULL */
	size_t nonly;
	/* FDEs whose attribute + FREs are byte-identical point at one stored
	 * copy (the first, in index order). sfh_num_fres still counts the
	 * FREs of every FDE (see sfe_encode.c for why). SFE_SHARE_*: by
	 * default (0) only where every reader accepts it. */
	int share_fres;
	/* With sharing: a function whose bytes equal a run anywhere in the
	 * FRE data already laid out points into it (sfe_layout.c). */
	bool share_runs;
	/* 0: the set's version; else it must be the set's. */
	uint8_t sframe_version;
	/* The layout already made for this set and these options
	 * (sfe_plan_make), or NULL: sfe_encode makes its own. */
	const struct sfe_plan *plan;
	/* Memory the layout may use for its tables (overwritten, not
	 * kept), or NULL: the caller's, its pages faulted in already,
	 * spare the tables' first touches (sfe_layout.c). */
	void *scratch;
	size_t scratch_bytes;
} sfe_encode_opts;

/* Whether sfe_encode shares FRE data for this set with these options
 * (o may be NULL: the defaults). */
bool sfe_share_p(const sfe_set *s, const sfe_encode_opts *o);

/* The layout sfe_encode gives a set for some options, made once: its
 * size lets the ELF layout place the section, and sfe_encode_opts.plan
 * writes it without laying it out again (the same set and options). */
typedef struct sfe_plan sfe_plan;
e2s_err sfe_plan_make(const sfe_set *s, const sfe_encode_opts *o,
		      sfe_plan **out, e2s_diag *diag);
size_t sfe_plan_size(const sfe_plan *p); /* 0: nothing selected */
void sfe_plan_free(sfe_plan *p);

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
/* Write the section: header, sorted FDE index, the functions' FRE data.
 * relocs/nrelocs may be NULL for linked output. */
e2s_err sfe_encode(const sfe_set *s, const sfe_encode_opts *o, bw_t *out,
		   sfe_reloc **relocs, size_t *nrelocs, e2s_diag *diag);
/* The same, also filling *st (may be NULL). */
e2s_err sfe_encode_ex(const sfe_set *s, const sfe_encode_opts *o, bw_t *out,
		      sfe_reloc **relocs, size_t *nrelocs,
		      sfe_encode_stats *st, e2s_diag *diag);

#endif
