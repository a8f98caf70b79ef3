/* Internal interfaces of the projection (src/sframe_emit, not installed):
 * the working state shared by the general path (sfe_project.c: DWARF
 * rows -> FREs) and the fused fast path (sfe_fast.c: CFI bytes -> FREs),
 * and the claimed-range set both use for duplicate FDEs. */
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

/* ---- Working state of one projection ---------------------------------- */

typedef struct sfe_fast sfe_fast;

typedef struct {
	const cfi_table *t;
	cfi_abi abi;
	const cfi_abi_regs *regs;
	unsigned retcol; /* the current FDE's CIE return-address column */
	sfe_set *set;
	grow_t gf, gr;
	void *pr; /* scratch: projected rows of one FDE (sfe_project.c) */
	size_t npr_cap;
	sfe_claims claims;
	grow_t gs; /* set->fde_skip */
	grow_t ge; /* set->enc */
	bool started;
	sfe_fast *fast; /* fused path state (sfe_fast.c), NULL until used */
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

sfe_func *sfe_new_func(sfe_pctx *c, const cfi_fde *fde, uint32_t fdeidx,
		       uint64_t start, uint64_t size);
/* Split functions with more FREs than sfda_func_num_fres holds. */
bool sfe_split_func(sfe_pctx *c, const cfi_fde *fde, uint32_t fdeidx,
		    size_t fi);
/* Record FDE i's outcome (fde_skip, counts). false on OOM. */
bool sfe_note(sfe_pctx *c, size_t i, sfe_skip s);
/* First FDE: learn the ABI, reserve from the section size. */
e2s_err sfe_pctx_start(sfe_pctx *c, const cfi_table *t);

static inline bool sfe_fre_same(const sfe_fre *a, const sfe_fre *b)
{
	return a->ndw == b->ndw && a->base_fp == b->base_fp &&
	       a->mangled_ra == b->mangled_ra &&
	       memcmp(a->dw, b->dw, sizeof a->dw) == 0;
}

/* Append tmp (every byte set) as the next FRE of funcs[fi], merged
 * with the previous one when equal; a row at the previous one's start
 * replaces it. false on OOM. */
static inline bool sfe_add_fre(sfe_pctx *c, size_t fi, const sfe_fre *tmp)
{
	sfe_func *cur = &c->set->funcs[fi];
	if (cur->fre_count > 0) {
		sfe_fre *last = &c->set->fres[cur->fre_first + cur->fre_count - 1];
		if (sfe_fre_same(last, tmp))
			return true;
		if (last->start == tmp->start) {
			*last = *tmp;
			return true;
		}
	}
	if (!sfe_grow((void **)&c->set->fres, &c->gr, sizeof(sfe_fre), c->gr.n + 1))
		return false;
	c->set->fres[c->gr.n++] = *tmp;
	cur->fre_count++;
	return true;
}

/* SFrame V3 attribute and FREs of fn (its FREs are fres[0..fre_count))
 * at p, as sfe_encode writes them; returns the end. Room: 5 bytes +
 * SFE_FRE_MAX_BYTES per FRE. (sfe_encode.c) */
#define SFE_FRE_MAX_BYTES (4 + 1 + 6 * 4)
uint8_t *sfe_put_v3_fres(uint8_t *p, const sfe_fre *fres, const sfe_func *fn,
			 bool be);

/* ---- The fused fast path (sfe_fast.c) --------------------------------- */

/* Convert FDE i of the table being parsed straight from its CFI bytes,
 * when every row is a plain default-FDE row: 1 done (outcome noted), 0
 * not for the fast path (nothing changed: run the general path), -1 out
 * of memory. */
int sfe_fast_fde(sfe_pctx *c, const cfi_section *sec, size_t i);
void sfe_fast_free(sfe_fast *f);

#endif
