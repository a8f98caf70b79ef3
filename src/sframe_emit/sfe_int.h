/* Internal interfaces of the conversion (src/sframe_emit, not installed):
 * the projection's working state (sfe_project.c: DWARF rows -> FREs),
 * the FRE writer it calls once per function (sfe_encode.c) and the
 * claimed-range set for duplicate FDEs (sfe_claim.c). */
#ifndef E2S_SFE_INT_H
#define E2S_SFE_INT_H

#include <stdlib.h>
#include <string.h>

#include "../common/mem.h"
#include "sfe.h"
#include "sframe_fmt.h"

typedef struct {
	size_t n, cap;
} grow_t;

/* Room for need elements in *p (doubling); false on OOM. */
static inline bool sfe_grow(void **p, grow_t *g, size_t elem, size_t need)
{
	if (need <= g->cap)
		return true;
	size_t cap = g->cap ? g->cap : 64;
	while (cap < need)
		cap *= 2;
	void *np = e2s_realloc_big(*p, cap * elem);
	if (!np)
		return false;
	*p = np;
	g->cap = cap;
	return true;
}

/* ---- Claimed ranges (sfe_claim.c) ------------------------------------ */

/* Ranges of FDEs already converted or skipped as converted-to-be, keyed
 * by (section, start): a treap, so FDEs in any order cost O(log n) each,
 * with an O(1) path for FDEs in address order. */
typedef struct {
	struct sfe_claim {
		uint64_t start, end;
		uint32_t left, right, prio;
		uint32_t shndx;
	} *v;
	grow_t g;
	uint32_t root;
	uint32_t max;  /* the claim with the largest key */
	uint32_t rng;  /* treap priorities: xorshift, fixed seed */
	uint32_t *spine; /* right spine, root first (ends at max) */
	grow_t gsp;
	bool spine_ok;
} sfe_claims;

void sfe_claims_init(sfe_claims *c);
void sfe_claims_free(sfe_claims *c);
/* Reserve room for n claims (a hint). false on OOM. */
bool sfe_claims_reserve(sfe_claims *c, size_t n);
/* Claim [start, end) of section shndx: 1 done, 0 it overlaps an earlier
 * claim (first in section order wins), -1 out of memory. */
int sfe_claim(sfe_claims *c, uint32_t shndx, uint64_t start, uint64_t end);

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

/* ---- Working state of one projection ---------------------------------- */

/* A program converted before (sfe_project.c, "Programs seen before"). */
#define SFE_MEMO_SLOTS 32768
typedef struct {
	uint64_t hash;
	uint32_t cie, pc_range, insn_off, insn_len; /* insn_len 0: empty */
	uint32_t enc_off, enc_len, fre_count;
	uint8_t skip, fde_type, fre_type;
} sfe_memo;

typedef struct {
	const cfi_table *t;
	cfi_abi abi;
	const cfi_abi_regs *regs;
	bool v2;         /* writing SFrame V2 */
	unsigned retcol; /* the current FDE's CIE return-address column */
	sfe_set *set;
	grow_t gf;       /* set->funcs */
	sfe_fre *fres;   /* the current FDE's FREs (sfe_func.enc_off indexes
	                  * them until its FRE data is written) */
	grow_t gr;
	sfe_claims claims;
	grow_t gs; /* set->fde_skip */
	grow_t ge; /* set->enc */
	bool started;
	bool memo_on;    /* streaming: remember programs (sfe_memo) */
	sfe_memo *memo;  /* SFE_MEMO_SLOTS, direct-mapped, NULL until used */
	size_t hash_fde; /* the FDE whose key hash_val is (SIZE_MAX: none) */
	uint64_t hash_val;
	bool plt_rows;   /* the FDE just projected had a PLT CFA expression */
} sfe_pctx;

/* The CFA offset word of an FRE, or why no data word can hold it. Every CFA offset from the input comes here before any arithmetic:
 * the interpreter keeps whatever int64 the CFI says (2^63 from a
 * 10-byte ULEB128 included), and beyond +/-2^40 no SFrame word could
 * hold it even scaled, while below it the s390x scaling cannot
 * overflow. s390x stores (off - 160) / 8 in default and flexible FDEs
 * alike (interoperability with gas/libsframe 2.47, seeds/README.md). */
#define SFE_OFF_LIMIT ((int64_t)1 << 40)
static inline sfe_skip sfe_cfa_word(bool s390x, int64_t off, int32_t *w)
{
	if (off < -SFE_OFF_LIMIT || off > SFE_OFF_LIMIT)
		return SFE_SKIP_OFFSET_RANGE;
	if (s390x) {
		int64_t a = off - SF_S390X_CFA_OFFSET_ADJUSTMENT;
		if (a % SF_S390X_CFA_OFFSET_ALIGNMENT_FACTOR)
			return SFE_SKIP_CFA_ALIGN;
		off = a / SF_S390X_CFA_OFFSET_ALIGNMENT_FACTOR;
	}
	if (off < INT32_MIN || off > INT32_MAX)
		return SFE_SKIP_OFFSET_RANGE;
	*w = (int32_t)off;
	return SFE_SKIP_NONE;
}

#define SFE_MAX_FRES 65535u
#define SFE_MAX_MASK_SIZE (1u << 20)

static inline bool sfe_fre_same(const sfe_fre *a, const sfe_fre *b)
{
	return a->ndw == b->ndw && a->base_fp == b->base_fp &&
	       a->mangled_ra == b->mangled_ra &&
	       memcmp(a->dw, b->dw, sizeof a->dw) == 0;
}

/* Most bytes one FRE takes: 4-byte start, info, 6 4-byte words. */
#define SFE_FRE_MAX_BYTES (4 + 1 + 6 * 4)
/* Bytes of the V3 function attribute before the FREs. */
#define SFE_ATTR_BYTES 5

/* Write fn's FRE data for the set's version at p (room: SFE_ATTR_BYTES
 * + SFE_FRE_MAX_BYTES per FRE), each FRE with the narrowest start type
 * of its function (fn->fre_type, set here) and the narrowest data-word
 * width holding its words; returns the end. (sfe_encode.c) */
/* SFrame V2: can fn, whose FREs are fres, be written? s390x flexible
 * FREs are rewritten in place as V2 default ones (V2's encoded register
 * words). (sfe_encode.c) */
bool sfe_v2_fit(cfi_abi abi, sfe_func *fn, sfe_fre *fres);

uint8_t *sfe_put_fres(uint8_t *p, const sfe_fre *fres, sfe_func *fn, bool v2,
		      bool be);

#endif
