/* The DWARF -> SFrame rules (sfe_rules.c): what a DWARF row becomes as
 * an SFrame row, driven by the ABI's table (src/abi), and nothing else:
 * no state, no caches. Each answer is three-way: expressible by a
 * default FDE, only by a flexible FDE, or not at all (a named skip
 * reason; never approximated). */
#ifndef E2S_SFE_RULES_H
#define E2S_SFE_RULES_H

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
	PL_CFA_VAL,  /* value CFA + off (val_offset): sfe_rule_row turns
	              * it into PL_REG on the CFA's base register */
};

/* A row reduced to what SFrame tracks. */
typedef struct {
	uint8_t kind;   /* PL_* */
	uint16_t reg;
	int64_t off;
} sfe_ploc;

typedef struct {
	bool ra_undef;
	bool cfa_deref;
	bool mangled;
	uint16_t cfa_reg;
	int64_t cfa_off;
	sfe_ploc ra, fp;
} sfe_prow;

/* Why FDE fde of t cannot be converted whatever its rows, if so. */
sfe_skip sfe_rule_fde(const abi_desc *a, const cfi_table *t,
		      const cfi_fde *fde);

/* Row r reduced to *p (every field written), with the CIE's
 * return-address column retcol; SFE_SKIP_NONE or why SFrame cannot
 * say it. */
sfe_skip sfe_rule_row(const abi_desc *a, unsigned retcol, const cfi_row *r,
		      sfe_prow *p);

/* Can a default FDE say p? *why names what it lacks (a flexible FDE
 * says every row sfe_rule_row accepts, SFrame V2 aside). */
bool sfe_rule_default_ok(const abi_desc *a, const sfe_prow *p, sfe_skip *why);

/* The FRE of p with CFA offset cfa_off, in a flexible FDE if flex:
 * *f's data words (f->start is kept); SFE_SKIP_NONE or the first word
 * that does not fit. */
sfe_skip sfe_rule_fre(const abi_desc *a, bool flex, const sfe_prow *p,
		      int64_t cfa_off, sfe_fre *f);

/* A row at or after the first PLT CFA expression of an FDE (k: the first
 * one's threshold): it must be that expression with the same k, RA at
 * its fixed place, no FP and no SP rule. */
sfe_skip sfe_rule_plt_row(const abi_desc *a, unsigned retcol,
			  const cfi_row *r, uint32_t k);

/* Does sfe_rule_row's result for a row whose CFA differs from r's by
 * its offset alone (same register, every other rule the same) differ
 * from r's only in cfa_off? It does when no rule of r reads that
 * offset: RA and FP not CFA-valued, and an SP rule not checked against
 * it. sfe_rule_default_ok does not read cfa_off either. (For the
 * CFA-only-row cache, sfe_cache.h.) */
bool sfe_rule_cfa_only_ok(const abi_desc *a, const cfi_row *r);

/* The CFA offset word of an FRE, or why no data word can hold it. Every
 * CFA offset from the input comes here before any arithmetic: the
 * interpreter keeps whatever int64 the CFI says (2^63 from a 10-byte
 * ULEB128 included), and beyond +/-2^40 no SFrame word could hold it
 * even scaled, while below it the scaling cannot overflow. */
#define SFE_OFF_LIMIT ((int64_t)1 << 40)
static inline sfe_skip sfe_cfa_word(const abi_desc *a, int64_t off,
				    int32_t *w)
{
	if (a->cfa_adjust || a->cfa_align != 1) {
		if (off < -SFE_OFF_LIMIT || off > SFE_OFF_LIMIT)
			return SFE_SKIP_OFFSET_RANGE;
		int64_t v = off - a->cfa_adjust;
		if (v % a->cfa_align)
			return SFE_SKIP_CFA_ALIGN;
		off = v / a->cfa_align;
	}
	if (off < INT32_MIN || off > INT32_MAX)
		return SFE_SKIP_OFFSET_RANGE;
	*w = (int32_t)off;
	return SFE_SKIP_NONE;
}

#endif
