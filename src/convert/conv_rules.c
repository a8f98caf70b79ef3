/* CFI rows -> SFrame rows (spec section 3), by the ABI's table.
 *
 * Each DWARF row is first reduced to what SFrame tracks (conv_prow: CFA,
 * RA, FP, mangled bit), with a per-rule verdict: expressible by a
 * default FDE, only by a flexible FDE, or not at all (skip the whole
 * function with a named reason; never approximate).
 *
 * Flexible FDEs on every ABI: spec 3.2 ties the flexible FDE to no ABI
 * (its control words name DWARF registers), and it is what AArch64
 * needs for an RA parked in a register (glibc's __clone, __vfork,
 * __sigsetjmp around their GCS calls: mov x13, x30), a CFA on x0
 * (setcontext) or FP saved without RA. binutils 2.47 gas writes them for
 * AMD64 and s390x only; its libsframe and objdump read AArch64 ones the
 * same way as theirs (tests/e2e/interop_libsframe.sh). SFrame V2 has no
 * flexible FDE: such functions are skipped there unless the ABI's V2
 * says registers in its words (sfe_v2_fit). */
#include <string.h>

#include "conv_rules.h"
#include "../sframe/sframe_fmt.h"

static bool fits_i32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* A DWARF reader takes the ABI's PC column (AMD64: 16, the return
 * address column) as the current PC in the callee's own frame (GNU ld's
 * PLT CFA expression relies on that). An SFrame reader resolves a
 * flexible rule's register through its register set (Appendix A
 * get_reg_value), for topmost frames only: not the same value. Rules on
 * it are skipped. */
static bool pc_reg(const abi_desc *a, unsigned reg)
{
	return a->pc != ABI_NO_REG && reg == a->pc;
}

/* The return-address column is the PC column: an RA said to be held in
 * it is in no register SFrame can name. */
static bool ra_col_is_pc(const abi_desc *a, unsigned reg)
{
	return reg == a->ra && pc_reg(a, reg);
}

/* The value of (or at) register reg + off as a location: the column's own
 * register unmodified is "unchanged". */
static conv_skip reg_loc(const abi_desc *a, unsigned own, unsigned reg,
			int64_t off, bool deref, conv_ploc *out)
{
	if (pc_reg(a, reg))
		return CONV_SKIP_PC_RELATIVE;
	if (reg == own && off == 0 && !deref) {
		out->kind = PL_NONE;
		return CONV_SKIP_NONE;
	}
	out->kind = deref ? PL_DEREF : PL_REG;
	out->reg = (uint16_t)reg;
	out->off = off;
	return CONV_SKIP_NONE;
}

/* An RA/FP rule that is an expression of the BREG shape. */
static conv_skip loc_from_expr(const abi_desc *a, unsigned own,
			      const cfi_rule *r, bool val, conv_ploc *out,
			      conv_skip why)
{
	if (r->expr.shape != CFI_EXPR_BREG)
		return why;
	return reg_loc(a, own, r->expr.reg, r->expr.off, !val, out);
}

/* The caller's PC is the value of the CIE's return-address column
 * (retcol), which need not be the ABI's RA register: a column with no
 * rule keeps its own register's value, which SFrame's "RA unchanged"
 * means only for the ABI's register. p must be zeroed by the caller. */
static inline conv_skip project_ra(const abi_desc *a, unsigned retcol,
				  const cfi_rule *r, conv_prow *p)
{
	switch (r->kind) {
	case CFI_RULE_UNDEFINED:
		p->ra_undef = true;
		return CONV_SKIP_NONE;
	case CFI_RULE_UNSPEC:
	case CFI_RULE_SAME:
		if (ra_col_is_pc(a, retcol))
			return CONV_SKIP_RA_RULE;
		return reg_loc(a, a->ra, retcol, 0, false, &p->ra);
	case CFI_RULE_OFFSET:
		if (a->fixed_ra_off && r->off == a->fixed_ra_off)
			return CONV_SKIP_NONE; /* the header says it */
		p->ra.kind = PL_STACK;
		p->ra.off = r->off;
		return CONV_SKIP_NONE;
	case CFI_RULE_REGISTER:
		if (ra_col_is_pc(a, r->reg))
			return CONV_SKIP_RA_RULE;
		return reg_loc(a, a->ra, r->reg, 0, false, &p->ra);
	case CFI_RULE_EXPR:
		return loc_from_expr(a, a->ra, r, false, &p->ra, CONV_SKIP_RA_RULE);
	case CFI_RULE_VAL_EXPR:
		return loc_from_expr(a, a->ra, r, true, &p->ra, CONV_SKIP_RA_RULE);
	case CFI_RULE_VAL_OFFSET:
		/* RA = CFA + n: not as CFA-based (control word 0 is the
		 * padding word, spec 3.2), but on the CFA's base register
		 * (cfa_val_loc). */
		p->ra.kind = PL_CFA_VAL;
		p->ra.off = r->off;
		return CONV_SKIP_NONE;
	default:
		return CONV_SKIP_RA_RULE;
	}
}

static inline conv_skip project_fp(const abi_desc *a, const cfi_rule *r,
				  conv_prow *p)
{
	switch (r->kind) {
	case CFI_RULE_UNSPEC:
	case CFI_RULE_SAME:
		return CONV_SKIP_NONE;
	case CFI_RULE_OFFSET:
		p->fp.kind = PL_STACK;
		p->fp.off = r->off;
		return CONV_SKIP_NONE;
	case CFI_RULE_REGISTER:
		return reg_loc(a, a->fp, r->reg, 0, false, &p->fp);
	case CFI_RULE_EXPR:
		/* "saved at the address expr": FP = *(reg + k). */
		return loc_from_expr(a, a->fp, r, false, &p->fp, CONV_SKIP_FP_RULE);
	case CFI_RULE_VAL_EXPR:
		return loc_from_expr(a, a->fp, r, true, &p->fp, CONV_SKIP_FP_RULE);
	case CFI_RULE_VAL_OFFSET:
		p->fp.kind = PL_CFA_VAL;
		p->fp.off = r->off;
		return CONV_SKIP_NONE;
	default: /* UNDEFINED: SFrame has no "FP undefined" */
		return CONV_SKIP_FP_RULE;
	}
}

/* A value CFA + off (val_offset) once the CFA is known: with CFA = reg
 * + k that is reg + (k + off), a flexible FDE's register rule; with a
 * dereferenced CFA no SFrame rule gives it. */
static conv_skip cfa_val_loc(const abi_desc *a, unsigned own,
			    const conv_prow *p, conv_ploc *l, conv_skip why)
{
	if (l->kind != PL_CFA_VAL)
		return CONV_SKIP_NONE;
	if (p->cfa_deref)
		return why;
	if (l->off < -CONV_OFF_LIMIT || l->off > CONV_OFF_LIMIT ||
	    p->cfa_off < -CONV_OFF_LIMIT || p->cfa_off > CONV_OFF_LIMIT)
		return CONV_SKIP_OFFSET_RANGE;
	return reg_loc(a, own, p->cfa_reg, p->cfa_off + l->off, false, l);
}

/* SFrame always recovers the caller's SP as CFA + sp_val_off. Accept
 * exactly the SP rules whose value is that:
 *   no rule (the ABI's definition of the CFA);
 *   val_offset sp_val_off;
 *   a saved copy (on the stack, or s390x leaf code's copy in an FPR) made
 *   while the CFA was SP + k with CFA - k == CFA + sp_val_off
 *   (provenance, cfi.h), e.g. s390x stmg %r6,%r15 at entry;
 *   same value, while the CFA is SP - sp_val_off;
 *   *(reg + k) while the CFA is *(reg + k) (signal trampolines), or
 *   reg + k while the CFA is reg + k - sp_val_off.
 * x86-64 setcontext (CFA = rdx, SP restored from the context) and saves
 * made after the frame was allocated are not. */
static conv_skip check_sp(const abi_desc *a, const cfi_rule *r,
			 const conv_prow *p)
{
	int64_t want = a->sp_val_off;
	bool cfa_sp = !p->cfa_deref && p->cfa_reg == a->sp &&
		      p->cfa_off == -want;
	switch (r->kind) {
	case CFI_RULE_UNSPEC:
		return CONV_SKIP_NONE;
	case CFI_RULE_VAL_OFFSET:
		return r->off == want ? CONV_SKIP_NONE : CONV_SKIP_SP_RULE;
	case CFI_RULE_SAME:
		return cfa_sp ? CONV_SKIP_NONE : CONV_SKIP_SP_RULE;
	case CFI_RULE_REGISTER:
		if (r->reg == a->sp)
			return cfa_sp ? CONV_SKIP_NONE : CONV_SKIP_SP_RULE;
		/* fall through */
	case CFI_RULE_OFFSET:
		return r->prov == CFI_PROV_KNOWN && -(int64_t)r->prov_k == want
			       ? CONV_SKIP_NONE : CONV_SKIP_SP_RULE;
	case CFI_RULE_EXPR:
		return r->expr.shape == CFI_EXPR_BREG && want == 0 && p->cfa_deref &&
		       p->cfa_reg == r->expr.reg && p->cfa_off == r->expr.off
			       ? CONV_SKIP_NONE : CONV_SKIP_SP_RULE;
	case CFI_RULE_VAL_EXPR:
		return r->expr.shape == CFI_EXPR_BREG && !p->cfa_deref &&
		       p->cfa_reg == r->expr.reg && p->cfa_off >= -CONV_OFF_LIMIT &&
		       p->cfa_off <= CONV_OFF_LIMIT && p->cfa_off + want == r->expr.off
			       ? CONV_SKIP_NONE : CONV_SKIP_SP_RULE;
	default:
		return CONV_SKIP_SP_RULE;
	}
}

conv_skip conv_rule_row(const abi_desc *a, unsigned retcol, const cfi_row *row,
		      conv_prow *p)
{
	conv_skip s;
	/* Field by field (no padding to clear): this runs for most rows. */
	p->ra_undef = p->cfa_deref = p->mangled = false;
	p->cfa_reg = 0;
	p->cfa_off = 0;
	p->ra = p->fp = (conv_ploc){PL_NONE, 0, 0};
	s = project_ra(a, retcol, &row->ra, p);
	if (s)
		return s;
	if (p->ra_undef) {
		/* Outermost frame: nothing else is recovered. */
		p->ra.kind = PL_NONE;
		return CONV_SKIP_NONE;
	}
	switch (row->cfa.kind) {
	case CFI_CFA_UNSET:
		return CONV_SKIP_CFA_UNSET;
	case CFI_CFA_INVALID:
		return CONV_SKIP_CFA_INVALID;
	case CFI_CFA_REG_OFF:
		p->cfa_reg = row->cfa.reg;
		p->cfa_off = row->cfa.off;
		break;
	case CFI_CFA_EXPR:
		if (row->cfa.expr.shape == CFI_EXPR_BREG ||
		    row->cfa.expr.shape == CFI_EXPR_BREG_DEREF) {
			p->cfa_reg = row->cfa.expr.reg;
			p->cfa_off = row->cfa.expr.off;
			p->cfa_deref = row->cfa.expr.shape == CFI_EXPR_BREG_DEREF;
			break;
		}
		return CONV_SKIP_CFA_EXPR;
	default:
		return CONV_SKIP_CFA_EXPR;
	}
	if (pc_reg(a, p->cfa_reg))
		return CONV_SKIP_PC_RELATIVE;
	if ((s = cfa_val_loc(a, a->ra, p, &p->ra, CONV_SKIP_RA_RULE)))
		return s;
	s = project_fp(a, &row->fp, p);
	if (s)
		return s;
	if ((s = cfa_val_loc(a, a->fp, p, &p->fp, CONV_SKIP_FP_RULE)))
		return s;
	s = check_sp(a, &row->sp, p);
	if (s)
		return s;
	if (a->ra_sign != ABI_NO_REG) {
		if (row->ra_sign_pc)
			return CONV_SKIP_RA_SIGN_PC;
		if (row->ra_sign_bad)
			return CONV_SKIP_RA_SIGN_STATE;
		/* The mangled bit says the recovered RA value carries a PAC,
		 * wherever the RA rule found it: on the stack, or in a
		 * register such as x13 after glibc's "mov x13, x30" under
		 * pac-ret (and the bit stays exact, never widened). A
		 * consumer strips the PAC from that value (XPACLRI, or by
		 * masking the address bits) or authenticates it with the
		 * FDE's key and the CFA as modifier, the SP at the PACIASP of
		 * the function's entry; where the value was parked changes
		 * neither. */
		p->mangled = row->ra_mangled;
	}
	return CONV_SKIP_NONE;
}

bool conv_rule_cfa_only_ok(const abi_desc *a, const cfi_row *r)
{
	if (r->cfa.kind != CFI_CFA_REG_OFF || r->ra.kind == CFI_RULE_VAL_OFFSET ||
	    r->fp.kind == CFI_RULE_VAL_OFFSET)
		return false;
	switch (r->sp.kind) {
	case CFI_RULE_UNSPEC:
	case CFI_RULE_VAL_OFFSET:
	case CFI_RULE_OFFSET:
		return true;
	case CFI_RULE_REGISTER:
		return r->sp.reg != a->sp;
	default:
		return false;
	}
}

bool conv_rule_default_ok(const abi_desc *a, const conv_prow *p, conv_skip *why)
{
	*why = CONV_SKIP_NONE;
	if (p->ra_undef)
		return true;
	bool ok = true;
	if (p->cfa_deref) {
		ok = false;
		*why = CONV_SKIP_CFA_EXPR;
	} else if (p->cfa_reg != a->sp && p->cfa_reg != a->fp) {
		ok = false;
		*why = CONV_SKIP_CFA_REG;
	}
	if (p->fp.kind != PL_NONE && p->fp.kind != PL_STACK) {
		ok = false;
		*why = CONV_SKIP_FP_RULE;
	}
	if (a->ra_form == ABI_RA_FIXED) {
		/* No RA word: the header's fixed offset or nothing. */
		if (p->ra.kind != PL_NONE) {
			ok = false;
			*why = CONV_SKIP_RA_RULE;
		}
		return ok;
	}
	/* An RA word: a stack slot, where word 0 reads as
	 * SFRAME_FRE_RA_OFFSET_INVALID ("not saved"). */
	if ((p->ra.kind != PL_NONE && p->ra.kind != PL_STACK) ||
	    (p->ra.kind == PL_STACK && p->ra.off == SF_FRE_RA_OFFSET_INVALID)) {
		ok = false;
		*why = CONV_SKIP_RA_RULE;
	}
	if (a->ra_form == ABI_RA_WORD && p->fp.kind == PL_STACK &&
	    p->ra.kind != PL_STACK) {
		ok = false;
		*why = CONV_SKIP_FP_RULE;
	}
	return ok;
}

static conv_skip push_w(sfe_fre *f, int64_t v)
{
	if (!fits_i32(v))
		return CONV_SKIP_OFFSET_RANGE;
	f->dw[f->ndw++] = (int32_t)v;
	return CONV_SKIP_NONE;
}

/* Flex control/offset pair for an RA/FP location (spec 3.2). */
static conv_skip push_flex_loc(sfe_fre *f, const conv_ploc *l)
{
	unsigned ctrl;
	switch (l->kind) {
	case PL_STACK: ctrl = SF_FLEX_CTRL(0, 1, 0); break;
	case PL_REG: ctrl = SF_FLEX_CTRL(l->reg, 0, 1); break;
	case PL_DEREF: ctrl = SF_FLEX_CTRL(l->reg, 1, 1); break;
	default: return CONV_SKIP_RA_RULE;
	}
	if (ctrl > INT32_MAX)
		return CONV_SKIP_OFFSET_RANGE;
	f->dw[f->ndw++] = (int32_t)ctrl;
	return push_w(f, l->off);
}

/* The data words of a flexible FDE's FRE: pairs CFA, RA (or one padding
 * word 0), FP. */
static conv_skip flex_words(const conv_prow *p, int32_t cw, sfe_fre *f)
{
	conv_skip s;
	unsigned ctrl = SF_FLEX_CTRL(p->cfa_reg, p->cfa_deref, 1);
	if (ctrl > INT32_MAX)
		return CONV_SKIP_CFA_REG;
	f->dw[f->ndw++] = (int32_t)ctrl;
	f->dw[f->ndw++] = cw;
	if (p->ra.kind != PL_NONE) {
		if ((s = push_flex_loc(f, &p->ra)))
			return s;
	} else if (p->fp.kind != PL_NONE) {
		f->dw[f->ndw++] = 0; /* RA padding word */
	}
	if (p->fp.kind != PL_NONE) {
		if ((s = push_flex_loc(f, &p->fp)))
			return s == CONV_SKIP_RA_RULE ? CONV_SKIP_FP_RULE : s;
	}
	return CONV_SKIP_NONE;
}

conv_skip conv_rule_fre(const abi_desc *a, bool flex, const conv_prow *p,
		      int64_t cfa_off, sfe_fre *f)
{
	conv_skip s;
	int32_t cw;
	uint32_t start = f->start;
	memset(f, 0, sizeof *f);
	f->start = start;
	if (p->ra_undef)
		return CONV_SKIP_NONE; /* 0 data words, info byte 0 */
	s = conv_cfa_word(a, cfa_off, &cw);
	if (s)
		return s;
	f->mangled_ra = p->mangled;
	if (flex)
		return flex_words(p, cw, f);
	/* Default FDE (spec 3.1): CFA, then RA if the ABI has an RA word,
	 * then FP. */
	f->base_fp = p->cfa_reg == a->fp && p->cfa_reg != a->sp;
	f->dw[f->ndw++] = cw;
	if (a->ra_form != ABI_RA_FIXED) {
		if (p->ra.kind == PL_STACK) {
			if ((s = push_w(f, p->ra.off)))
				return s;
		} else if (p->fp.kind == PL_STACK) {
			/* ABI_RA_WORD_PADDED (conv_rule_default_ok) */
			f->dw[f->ndw++] = SF_FRE_RA_OFFSET_INVALID;
		}
	}
	if (p->fp.kind == PL_STACK)
		return push_w(f, p->fp.off);
	return CONV_SKIP_NONE;
}

conv_skip conv_rule_plt_row(const abi_desc *a, unsigned retcol,
			  const cfi_row *r, uint32_t k)
{
	conv_prow p;
	memset(&p, 0, sizeof p);
	conv_skip s;
	if (r->cfa.kind != CFI_CFA_EXPR || r->cfa.expr.shape != CFI_EXPR_PLT ||
	    r->cfa.expr.plt_k != k || r->cfa.expr.off != 8 ||
	    r->cfa.expr.reg != a->sp)
		return CONV_SKIP_PLT_SHAPE;
	if ((s = project_ra(a, retcol, &r->ra, &p)))
		return s;
	if (p.ra_undef || p.ra.kind != PL_NONE ||
	    project_fp(a, &r->fp, &p) || p.fp.kind != PL_NONE ||
	    r->sp.kind != CFI_RULE_UNSPEC)
		return CONV_SKIP_PLT_SHAPE;
	return CONV_SKIP_NONE;
}
