/* The DWARF -> SFrame rules (conv_rules.c): what a DWARF row becomes as
 * an SFrame row, driven by the ABI's table (src/abi), and nothing else:
 * no state, no caches. Each answer is three-way: expressible by a
 * default FDE, only by a flexible FDE, or not at all (a named skip
 * reason; never approximated). */
#ifndef E2S_CONV_RULES_H
#define E2S_CONV_RULES_H

#include "../abi/abi.h"
#include "../dwarf/cfi.h"
#include "../sframe/sfe.h"
#include "conv_skip.h"

/* Where RA or FP is found, as far as SFrame can say. */
enum {
	PL_NONE = 0, /* RA: at the ABI's fixed offset, or unchanged;
	              * FP: unchanged */
	PL_STACK,    /* saved at CFA + off */
	PL_REG,      /* value in register reg (+ off) */
	PL_DEREF,    /* saved at reg + off */
	PL_CFA_VAL,  /* value CFA + off (val_offset): conv_rule_row turns
	              * it into PL_REG on the CFA's base register */
};

/* A row reduced to what SFrame tracks. */
typedef struct {
	uint8_t kind;   /* PL_* */
	uint16_t reg;
	int64_t off;
} conv_ploc;

typedef struct {
	bool ra_undef;
	bool cfa_deref;
	bool mangled;
	uint16_t cfa_reg;
	int64_t cfa_off;
	conv_ploc ra, fp;
} conv_prow;

/* Why FDE fde of t cannot be converted whatever its rows, if so. Inline:
 * asked for every FDE (conv_memo_take), a few loads. */
static inline conv_skip conv_rule_fde(const abi_desc *a, const cfi_table *t,
				    const cfi_fde *fde)
{
	if (!abi_has_sframe(a))
		return CONV_SKIP_UNSUPPORTED_ABI;
	if (fde->status == E2S_ERR_CIE_PTR_WIDTH)
		return CONV_SKIP_CIE_PTR_WIDTH; /* its range reads as > 4 GiB */
	if (fde->status != E2S_ERR_OK || fde->cie >= t->ncies ||
	    t->cies[fde->cie].status != E2S_ERR_OK)
		return CONV_SKIP_BAD_CFI;
	if (fde->pc_range == 0)
		return CONV_SKIP_EMPTY;
	if (fde->pc_range > UINT32_MAX ||
	    fde->pc_begin + fde->pc_range < fde->pc_begin)
		return CONV_SKIP_TOO_LARGE;
	return CONV_SKIP_NONE;
}

/* Row r reduced to *p (every field written), with the CIE's
 * return-address column retcol; CONV_SKIP_NONE or why SFrame cannot
 * say it. */
conv_skip conv_rule_row(const abi_desc *a, unsigned retcol, const cfi_row *r,
		      conv_prow *p);

/* Can a default FDE say p? *why names what it lacks (a flexible FDE
 * says every row conv_rule_row accepts, SFrame V2 aside). */
bool conv_rule_default_ok(const abi_desc *a, const conv_prow *p, conv_skip *why);

/* The FRE of p with CFA offset cfa_off, in a flexible FDE if flex:
 * *f's data words (f->start is kept); CONV_SKIP_NONE or the first word
 * that does not fit. */
conv_skip conv_rule_fre(const abi_desc *a, bool flex, const conv_prow *p,
		      int64_t cfa_off, sfe_fre *f);

/* A row at or after the first PLT CFA expression of an FDE (k: the first
 * one's threshold): it must be that expression with the same k, RA at
 * its fixed place, no FP and no SP rule. */
conv_skip conv_rule_plt_row(const abi_desc *a, unsigned retcol,
			  const cfi_row *r, uint32_t k);

/* Does conv_rule_row's result for a row whose CFA differs from r's by
 * its offset alone (same register, every other rule the same) differ
 * from r's only in cfa_off? It does when no rule of r reads that
 * offset: RA and FP not CFA-valued, and an SP rule not checked against
 * it. conv_rule_default_ok does not read cfa_off either. (For the
 * CFA-only-row cache, conv_cache.h.) */
bool conv_rule_cfa_only_ok(const abi_desc *a, const cfi_row *r);

/* The CFA offset word of an FRE, or why no data word can hold it. Every
 * CFA offset from the input comes here before any arithmetic: the
 * interpreter keeps whatever int64 the CFI says (2^63 from a 10-byte
 * ULEB128 included), and beyond +/-2^40 no SFrame word could hold it
 * even scaled, while below it the scaling cannot overflow. */
#define CONV_OFF_LIMIT ((int64_t)1 << 40)

/* Does the ABI scale CFA offsets (s390x)? */
static inline bool conv_cfa_scaled(const abi_desc *a)
{
	return a->cfa_adjust || a->cfa_align != 1;
}

/* conv_cfa_word for an ABI that does not scale them. */
static inline conv_skip conv_cfa_word_plain(int64_t off, int32_t *w)
{
	if (off < INT32_MIN || off > INT32_MAX)
		return CONV_SKIP_OFFSET_RANGE;
	*w = (int32_t)off;
	return CONV_SKIP_NONE;
}

static inline conv_skip conv_cfa_word(const abi_desc *a, int64_t off,
				    int32_t *w)
{
	if (conv_cfa_scaled(a)) {
		if (off < -CONV_OFF_LIMIT || off > CONV_OFF_LIMIT)
			return CONV_SKIP_OFFSET_RANGE;
		int64_t v = off - a->cfa_adjust;
		if (v % a->cfa_align)
			return CONV_SKIP_CFA_ALIGN;
		off = v / a->cfa_align;
	}
	return conv_cfa_word_plain(off, w);
}

#endif
