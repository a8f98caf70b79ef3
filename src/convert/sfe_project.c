/* CFI rows -> SFrame FREs (spec section 3).
 *
 * Each DWARF row is first reduced to what SFrame tracks (prow: CFA, RA,
 * FP, mangled bit), with a per-rule verdict: expressible by a default FDE,
 * only by a flexible FDE, or not at all (skip the whole function with a
 * named reason; never approximate). The FDE type is per function: DEFAULT
 * when every row fits it, FLEX when some row needs it and the ABI has
 * flexible FDEs. Identical consecutive FREs are merged. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../common/mem.h"
#include "../common/reader.h"
#include "sfe_int.h"
#include "../sframe/sframe_fmt.h"


/* Where RA or FP is found, as far as SFrame can say. */
enum {
	PL_NONE = 0, /* AMD64 RA: fixed c-8; otherwise unchanged */
	PL_STACK,    /* saved at CFA + off */
	PL_REG,      /* value in register reg (+ off) */
	PL_DEREF,    /* saved at reg + off */
	PL_CFA_VAL,  /* value CFA + off (val_offset): project_row turns it
	              * into PL_REG on the CFA's base register */
};

typedef sfe_ploc ploc;
typedef sfe_prow prow;

/* Flexible FDEs on all three ABIs. Spec 3.2 ties the flexible FDE
 * to no ABI (its control words name DWARF registers), and it is what
 * AArch64 needs for an RA parked in a register (glibc's __clone,
 * __vfork, __sigsetjmp around their GCS calls: mov x13, x30), a CFA on
 * x0 (setcontext) or FP saved without RA. binutils 2.47 gas writes them
 * for AMD64 and s390x only; its libsframe and objdump read AArch64 ones
 * the same way as theirs (tests/e2e/interop_libsframe.sh). SFrame V2 has
 * no flexible FDE on AArch64: such functions are skipped there
 * (SFE_SKIP_V2, sfe_v2_fit). */

static bool fits_i32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* AMD64 DWARF register 16 is the return-address column; in the callee's
 * own frame a DWARF reader takes it as the current PC (GNU ld's PLT CFA
 * expression relies on that). An SFrame reader resolves a flexible rule's
 * register through its register set (Appendix A get_reg_value), for
 * topmost frames only: not the same value. Rules on it are skipped. */
static bool pc_reg(const cfi_abi_regs *regs, unsigned reg)
{
	return regs->pc != CFI_NO_REG && reg == regs->pc;
}

/* The value of (or at) register reg + off as a location: the column's own
 * register unmodified is "unchanged". */
static sfe_skip reg_loc(const cfi_abi_regs *regs, unsigned own, unsigned reg, int64_t off,
			bool deref, ploc *out)
{
	if (pc_reg(regs, reg))
		return SFE_SKIP_PC_RELATIVE;
	if (reg == own && off == 0 && !deref) {
		out->kind = PL_NONE;
		return SFE_SKIP_NONE;
	}
	out->kind = deref ? PL_DEREF : PL_REG;
	out->reg = (uint16_t)reg;
	out->off = off;
	return SFE_SKIP_NONE;
}

/* An RA/FP rule that is an expression of the BREG shape. */
static sfe_skip loc_from_expr(const cfi_abi_regs *regs, unsigned own, const cfi_rule *r,
			      bool val, ploc *out, sfe_skip why)
{
	if (r->expr.shape != CFI_EXPR_BREG)
		return why;
	return reg_loc(regs, own, r->expr.reg, r->expr.off, !val, out);
}

/* The caller's PC is the value of the CIE's return-address column
 * (retcol), which need not be the ABI's RA register: a column with no
 * rule keeps its own register's value, which SFrame's "RA unchanged"
 * means only for the ABI's register. p must be zeroed by the caller. */
static inline sfe_skip project_ra(cfi_abi abi, const cfi_abi_regs *regs,
				  unsigned retcol, const cfi_rule *r, prow *p)
{
	switch (r->kind) {
	case CFI_RULE_UNDEFINED:
		p->ra_undef = true;
		return SFE_SKIP_NONE;
	case CFI_RULE_UNSPEC:
	case CFI_RULE_SAME:
		/* AMD64's RA is never in a register SFrame can name. */
		if (abi == CFI_ABI_AMD64 && retcol == regs->ra)
			return SFE_SKIP_RA_RULE;
		return reg_loc(regs, regs->ra, retcol, 0, false, &p->ra);
	case CFI_RULE_OFFSET:
		if (abi == CFI_ABI_AMD64 && r->off == SF_AMD64_CFA_FIXED_RA_OFFSET)
			return SFE_SKIP_NONE;
		p->ra.kind = PL_STACK;
		p->ra.off = r->off;
		return SFE_SKIP_NONE;
	case CFI_RULE_REGISTER:
		if (abi == CFI_ABI_AMD64 && r->reg == regs->ra)
			return SFE_SKIP_RA_RULE;
		return reg_loc(regs, regs->ra, r->reg, 0, false, &p->ra);
	case CFI_RULE_EXPR:
		return loc_from_expr(regs, regs->ra, r, false, &p->ra, SFE_SKIP_RA_RULE);
	case CFI_RULE_VAL_EXPR:
		return loc_from_expr(regs, regs->ra, r, true, &p->ra, SFE_SKIP_RA_RULE);
	case CFI_RULE_VAL_OFFSET:
		/* RA = CFA + n: not as CFA-based (control word 0 is the
		 * padding word, spec 3.2), but on the CFA's base register
		 * (cfa_val_loc). */
		p->ra.kind = PL_CFA_VAL;
		p->ra.off = r->off;
		return SFE_SKIP_NONE;
	default:
		return SFE_SKIP_RA_RULE;
	}
}

static inline sfe_skip project_fp(const cfi_abi_regs *regs,
				  const cfi_rule *r, prow *p)
{
	switch (r->kind) {
	case CFI_RULE_UNSPEC:
	case CFI_RULE_SAME:
		return SFE_SKIP_NONE;
	case CFI_RULE_OFFSET:
		p->fp.kind = PL_STACK;
		p->fp.off = r->off;
		return SFE_SKIP_NONE;
	case CFI_RULE_REGISTER:
		return reg_loc(regs, regs->fp, r->reg, 0, false, &p->fp);
	case CFI_RULE_EXPR:
		/* "saved at the address expr": FP = *(reg + k). */
		return loc_from_expr(regs, regs->fp, r, false, &p->fp, SFE_SKIP_FP_RULE);
	case CFI_RULE_VAL_EXPR:
		return loc_from_expr(regs, regs->fp, r, true, &p->fp, SFE_SKIP_FP_RULE);
	case CFI_RULE_VAL_OFFSET:
		p->fp.kind = PL_CFA_VAL;
		p->fp.off = r->off;
		return SFE_SKIP_NONE;
	default: /* UNDEFINED: SFrame has no "FP undefined" */
		return SFE_SKIP_FP_RULE;
	}
}

/* A value CFA + off (val_offset) once the CFA is known: with CFA = reg
 * + k that is reg + (k + off), a flexible FDE's register rule; with a
 * dereferenced CFA no SFrame rule gives it. */
static sfe_skip cfa_val_loc(const cfi_abi_regs *regs, unsigned own,
			    const prow *p, ploc *l, sfe_skip why)
{
	if (l->kind != PL_CFA_VAL)
		return SFE_SKIP_NONE;
	if (p->cfa_deref)
		return why;
	if (l->off < -SFE_OFF_LIMIT || l->off > SFE_OFF_LIMIT ||
	    p->cfa_off < -SFE_OFF_LIMIT || p->cfa_off > SFE_OFF_LIMIT)
		return SFE_SKIP_OFFSET_RANGE;
	return reg_loc(regs, own, p->cfa_reg, p->cfa_off + l->off, false, l);
}

/* SFrame always recovers the caller's SP as CFA + sp_off (s390x: -160).
 * Accept exactly the SP rules whose value is that:
 *   no rule (the ABI's definition of the CFA);
 *   val_offset sp_off;
 *   a saved copy (on the stack, or s390x leaf code's copy in an FPR) made
 *   while the CFA was SP + k with CFA - k == CFA + sp_off (provenance,
 *   cfi.h), e.g. s390x stmg %r6,%r15 at entry;
 *   same value, while the CFA is SP - sp_off;
 *   *(reg + k) while the CFA is *(reg + k) (signal trampolines), or
 *   reg + k while the CFA is reg + k - sp_off.
 * x86-64 setcontext (CFA = rdx, SP restored from the context) and saves
 * made after the frame was allocated are not. */
static sfe_skip check_sp(cfi_abi abi, const cfi_abi_regs *regs,
			 const cfi_rule *r, const prow *p)
{
	int64_t want = abi == CFI_ABI_S390X ? SF_S390X_SP_VAL_OFFSET : 0;
	bool cfa_sp = !p->cfa_deref && p->cfa_reg == regs->sp &&
		      p->cfa_off == -want;
	switch (r->kind) {
	case CFI_RULE_UNSPEC:
		return SFE_SKIP_NONE;
	case CFI_RULE_VAL_OFFSET:
		return r->off == want ? SFE_SKIP_NONE : SFE_SKIP_SP_RULE;
	case CFI_RULE_SAME:
		return cfa_sp ? SFE_SKIP_NONE : SFE_SKIP_SP_RULE;
	case CFI_RULE_REGISTER:
		if (r->reg == regs->sp)
			return cfa_sp ? SFE_SKIP_NONE : SFE_SKIP_SP_RULE;
		/* fall through */
	case CFI_RULE_OFFSET:
		return r->prov == CFI_PROV_KNOWN && -(int64_t)r->prov_k == want
			       ? SFE_SKIP_NONE : SFE_SKIP_SP_RULE;
	case CFI_RULE_EXPR:
		return r->expr.shape == CFI_EXPR_BREG && want == 0 && p->cfa_deref &&
		       p->cfa_reg == r->expr.reg && p->cfa_off == r->expr.off
			       ? SFE_SKIP_NONE : SFE_SKIP_SP_RULE;
	case CFI_RULE_VAL_EXPR:
		return r->expr.shape == CFI_EXPR_BREG && !p->cfa_deref &&
		       p->cfa_reg == r->expr.reg && p->cfa_off >= -SFE_OFF_LIMIT &&
		       p->cfa_off <= SFE_OFF_LIMIT && p->cfa_off + want == r->expr.off
			       ? SFE_SKIP_NONE : SFE_SKIP_SP_RULE;
	default:
		return SFE_SKIP_SP_RULE;
	}
}

static inline sfe_skip project_row(cfi_abi abi, const cfi_abi_regs *regs,
				   unsigned retcol, const cfi_row *row, prow *p)
{
	sfe_skip s;
	/* Field by field (no padding to clear): this runs for every row. */
	p->ra_undef = p->cfa_deref = p->mangled = false;
	p->cfa_reg = 0;
	p->cfa_off = 0;
	p->ra = p->fp = (ploc){PL_NONE, 0, 0};
	s = project_ra(abi, regs, retcol, &row->ra, p);
	if (s)
		return s;
	if (p->ra_undef) {
		/* Outermost frame: nothing else is recovered. */
		p->ra.kind = PL_NONE;
		return SFE_SKIP_NONE;
	}
	switch (row->cfa.kind) {
	case CFI_CFA_UNSET:
		return SFE_SKIP_CFA_UNSET;
	case CFI_CFA_INVALID:
		return SFE_SKIP_CFA_INVALID;
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
		return SFE_SKIP_CFA_EXPR;
	default:
		return SFE_SKIP_CFA_EXPR;
	}
	if (pc_reg(regs, p->cfa_reg))
		return SFE_SKIP_PC_RELATIVE;
	if ((s = cfa_val_loc(regs, regs->ra, p, &p->ra, SFE_SKIP_RA_RULE)))
		return s;
	s = project_fp(regs, &row->fp, p);
	if (s)
		return s;
	if ((s = cfa_val_loc(regs, regs->fp, p, &p->fp, SFE_SKIP_FP_RULE)))
		return s;
	s = check_sp(abi, regs, &row->sp, p);
	if (s)
		return s;
	if (abi == CFI_ABI_AARCH64) {
		if (row->ra_sign_pc)
			return SFE_SKIP_RA_SIGN_PC;
		if (row->ra_sign_bad)
			return SFE_SKIP_RA_SIGN_STATE;
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
	return SFE_SKIP_NONE;
}

/* Does project_row's result for a row differ from its result for r, the
 * row projected before it, only in cfa_off, if the CFA changed by its
 * offset alone? It does when no rule of r reads that offset: RA and FP
 * not CFA-valued, and an SP rule that is not checked against it
 * (check_sp). default_ok does not read cfa_off either. cfa_off_only
 * adds the row's side. */
static bool cfa_run_ok(const cfi_abi_regs *regs, const cfi_row *r)
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
		return r->sp.reg != regs->sp;
	default:
		return false;
	}
}

/* Does r share all but its CFA offset with the row projected before it
 * (f->cfa_run: one cfa_run_ok accepted)? same: the CFI_COL_* bits r and
 * every row since share with their predecessors. */
static inline bool cfa_off_only(unsigned same, const sfe_fdeproj *f,
				const cfi_row *r)
{
	return f->cfa_run && (same | CFI_COL_CFA) == CFI_COL_ALL &&
	       r->cfa.kind == CFI_CFA_REG_OFF && r->cfa.reg == f->prev_cfa_reg;
}

/* Can a default FDE express p? *why names what a default FDE lacks: the
 * skip reason where no flexible FDE may be used (SFrame V2 aside, every
 * ABI has them: abi_has_flex). */
static inline bool default_ok(cfi_abi abi, const cfi_abi_regs *regs, const prow *p,
		       sfe_skip *why)
{
	*why = SFE_SKIP_NONE;
	if (p->ra_undef)
		return true;
	bool ok = true;
	if (p->cfa_deref) {
		ok = false;
		*why = SFE_SKIP_CFA_EXPR;
	} else if (p->cfa_reg != regs->sp && p->cfa_reg != regs->fp) {
		ok = false;
		*why = SFE_SKIP_CFA_REG;
	}
	if (p->fp.kind != PL_NONE && p->fp.kind != PL_STACK) {
		ok = false;
		*why = SFE_SKIP_FP_RULE;
	}
	switch (abi) {
	case CFI_ABI_AMD64:
		if (p->ra.kind != PL_NONE) {
			ok = false;
			*why = SFE_SKIP_RA_RULE;
		}
		break;
	case CFI_ABI_AARCH64:
		/* RA word 0 reads as SFRAME_FRE_RA_OFFSET_INVALID. */
		if ((p->ra.kind != PL_NONE && p->ra.kind != PL_STACK) ||
		    (p->ra.kind == PL_STACK && p->ra.off == SF_FRE_RA_OFFSET_INVALID)) {
			ok = false;
			*why = SFE_SKIP_RA_RULE;
		}
		/* Word 2 is RA, so FP cannot come without RA; binutils gas
		 * skips such functions too ("FP without RA on stack"). */
		if (p->fp.kind == PL_STACK && p->ra.kind != PL_STACK) {
			ok = false;
			*why = SFE_SKIP_FP_RULE;
		}
		break;
	case CFI_ABI_S390X:
		/* RA word 0 means "RA not saved". */
		if (p->ra.kind != PL_NONE &&
		    !(p->ra.kind == PL_STACK && p->ra.off != SF_FRE_RA_OFFSET_INVALID)) {
			ok = false;
			*why = SFE_SKIP_RA_RULE;
		}
		break;
	default:
		ok = false;
		*why = SFE_SKIP_UNSUPPORTED_ABI;
	}
	return ok;
}


static sfe_skip push_w(sfe_fre *f, int64_t v)
{
	if (!fits_i32(v))
		return SFE_SKIP_OFFSET_RANGE;
	f->dw[f->ndw++] = (int32_t)v;
	return SFE_SKIP_NONE;
}

/* Flex control/offset pair for an RA/FP location (spec 3.2). */
static sfe_skip push_flex_loc(sfe_fre *f, const ploc *l)
{
	unsigned ctrl;
	switch (l->kind) {
	case PL_STACK: ctrl = SF_FLEX_CTRL(0, 1, 0); break;
	case PL_REG: ctrl = SF_FLEX_CTRL(l->reg, 0, 1); break;
	case PL_DEREF: ctrl = SF_FLEX_CTRL(l->reg, 1, 1); break;
	default: return SFE_SKIP_RA_RULE;
	}
	if (ctrl > INT32_MAX)
		return SFE_SKIP_OFFSET_RANGE;
	f->dw[f->ndw++] = (int32_t)ctrl;
	return push_w(f, l->off);
}

/* The data words of a flexible FDE's FRE (kept out of line: rare). */
static sfe_skip flex_words(const prow *p, int32_t cw, sfe_fre *f)
{
	sfe_skip s;
	unsigned ctrl = SF_FLEX_CTRL(p->cfa_reg, p->cfa_deref, 1);
	if (ctrl > INT32_MAX)
		return SFE_SKIP_CFA_REG;
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
			return s == SFE_SKIP_RA_RULE ? SFE_SKIP_FP_RULE : s;
	}
	return SFE_SKIP_NONE;
}

static inline sfe_skip make_fre(cfi_abi abi, const cfi_abi_regs *regs, bool flex,
			 const prow *p, int64_t cfa_off, sfe_fre *f)
{
	sfe_skip s;
	int32_t cw;
	uint32_t start = f->start;
	memset(f, 0, sizeof *f);
	f->start = start;
	if (p->ra_undef)
		return SFE_SKIP_NONE; /* 0 data words, info byte 0 */
	s = sfe_cfa_word(abi == CFI_ABI_S390X, cfa_off, &cw);
	if (s)
		return s;
	f->mangled_ra = p->mangled;
	if (flex)
		return flex_words(p, cw, f);
	f->base_fp = p->cfa_reg == regs->fp && p->cfa_reg != regs->sp;
	f->dw[f->ndw++] = cw;
	switch (abi) {
	case CFI_ABI_AMD64:
		if (p->fp.kind == PL_STACK)
			return push_w(f, p->fp.off);
		return SFE_SKIP_NONE;
	case CFI_ABI_AARCH64:
		if (p->ra.kind == PL_STACK && (s = push_w(f, p->ra.off)))
			return s;
		if (p->fp.kind == PL_STACK)
			return push_w(f, p->fp.off);
		return SFE_SKIP_NONE;
	case CFI_ABI_S390X:
		if (p->ra.kind == PL_STACK) {
			if ((s = push_w(f, p->ra.off)))
				return s;
		} else if (p->fp.kind == PL_STACK) {
			f->dw[f->ndw++] = SF_FRE_RA_OFFSET_INVALID;
		}
		if (p->fp.kind == PL_STACK)
			return push_w(f, p->fp.off);
		return SFE_SKIP_NONE;
	default:
		return SFE_SKIP_UNSUPPORTED_ABI;
	}
}


/* A new function of FDE fdeidx; its FREs follow in c->fres (enc_off
 * holds the index of its first one until its FRE data is written). */
static sfe_func *new_func(sfe_pctx *c, const cfi_fde *fde, uint32_t fdeidx,
			  uint64_t start, uint64_t size)
{
	if (!sfe_grow((void **)&c->set->funcs, &c->gf, sizeof(sfe_func), c->gf.n + 1))
		return NULL;
	sfe_func *fn = &c->set->funcs[c->gf.n++];
	memset(fn, 0, sizeof *fn);
	const cfi_cie *cie = &c->t->cies[fde->cie];
	fn->start = start;
	fn->size = (uint32_t)size;
	fn->fde_type = SF_FDE_TYPE_DEFAULT;
	fn->pc_type = SF_FDE_PCTYPE_INC;
	fn->signal = cie->signal_frame;
	fn->pauth_b = c->abi == CFI_ABI_AARCH64 && cie->pauth_b_key;
	fn->enc_off = (uint32_t)c->gr.n;
	fn->src_fde = fdeidx;
	fn->reloc = fde->reloc;
	fn->reloc.addend += (int64_t)(start - fde->pc_begin);
	return fn;
}

/* The slot of the next FRE, with room for n more (built in place, then
 * keep_fres); NULL on OOM. */
static sfe_fre *fre_slots(sfe_pctx *c, size_t n)
{
	if (!sfe_grow((void **)&c->fres, &c->gr, sizeof(sfe_fre), c->gr.n + n))
		return NULL;
	return &c->fres[c->gr.n];
}

/* The FRE just built in v[*n] after the *n kept ones: one equal to the
 * FRE before it is merged into it, and one at the previous one's start
 * replaces it; otherwise it is kept. */
static inline void fre_keep(sfe_fre *v, size_t *n)
{
	size_t w = *n;
	if (w > 0 && sfe_fre_same(&v[w - 1], &v[w]))
		return;
	if (w > 0 && v[w - 1].start == v[w].start) {
		v[w - 1] = v[w];
		return;
	}
	*n = w + 1;
}

/* Does some PC of [pc, end) use this row? Empty rows are dropped. */
static bool row_live(const cfi_row *r, uint64_t pc, uint64_t end)
{
	uint64_t rs = r->start < pc ? pc : r->start;
	uint64_t re = r->end > end ? end : r->end;
	return rs < re;
}

/* Split functions with more FREs than sfda_func_num_fres holds into
 * consecutive FDEs, each starting at its first FRE. false on OOM. */
static bool split_func(sfe_pctx *c, const cfi_fde *fde, uint32_t fdeidx,
		       size_t fi)
{
	while (c->set->funcs[fi].fre_count > SFE_MAX_FRES) {
		sfe_func *cur = &c->set->funcs[fi];
		uint32_t first = cur->enc_off + SFE_MAX_FRES;
		uint32_t rest = cur->fre_count - SFE_MAX_FRES;
		uint32_t delta = c->fres[first].start;
		uint64_t total = cur->size;
		cur->fre_count = SFE_MAX_FRES;
		cur->size = delta;
		sfe_func *nf = new_func(c, fde, fdeidx, cur->start + delta,
					total - delta);
		if (!nf)
			return false;
		cur = &c->set->funcs[fi];
		nf->fde_type = cur->fde_type;
		nf->enc_off = first;
		nf->fre_count = rest;
		for (uint32_t k = 0; k < rest; k++)
			c->fres[first + k].start -= delta;
		fi = (size_t)(nf - c->set->funcs);
	}
	return true;
}

/* Why FDE fde cannot be converted whatever its rows, if so. */
static sfe_skip fde_precheck(const sfe_pctx *c, const cfi_fde *fde)
{
	const cfi_table *t = c->t;
	if (c->abi != CFI_ABI_AMD64 && c->abi != CFI_ABI_AARCH64 &&
	    c->abi != CFI_ABI_S390X)
		return SFE_SKIP_UNSUPPORTED_ABI;
	if (fde->status == E2S_ERR_CIE_PTR_WIDTH)
		return SFE_SKIP_CIE_PTR_WIDTH; /* its range reads as > 4 GiB */
	if (fde->status != E2S_ERR_OK || fde->cie >= t->ncies ||
	    t->cies[fde->cie].status != E2S_ERR_OK)
		return SFE_SKIP_BAD_CFI;
	if (fde->pc_range == 0)
		return SFE_SKIP_EMPTY;
	if (fde->pc_range > UINT32_MAX ||
	    fde->pc_begin + fde->pc_range < fde->pc_begin)
		return SFE_SKIP_TOO_LARGE;
	return SFE_SKIP_NONE;
}

/* ---- One FDE's rows, as they come --------------------------------------
 * fde_begin, then fde_row for each row in order, then fde_end: each row
 * is reduced to what SFrame tracks (prow) at once, and only rows whose
 * rules changed are projected in full (cfa_off_only). The functions and
 * their FREs are made when the FDE ends and its status is known. Every
 * caller goes this way: the interpreter's rows one by one (cfi_row_fn),
 * an FDE's rows in one array, or a whole table (sfe_project). */

static void fde_begin(sfe_pctx *c, size_t i)
{
	sfe_fdeproj *f = &c->f;
	const cfi_fde *fde = &c->t->fdes[i];
	f->fde = i;
	f->pc = fde->pc_begin;
	f->end = fde->pc_begin + fde->pc_range;
	/* As memo_take found it before the program ran, unless the
	 * program failed since (nothing else it reads changes). */
	bool seen = c->checked_fde == i && fde->status == E2S_ERR_OK;
	f->active = (seen ? c->checked : fde_precheck(c, fde)) == SFE_SKIP_NONE;
	f->rows_bad = false;
	f->nrows = 0;
	f->row_skip = SFE_SKIP_NONE;
	f->flex = false;
	f->same = 0;
	f->cfa_run = false;
	f->gp.n = 0;
	f->gfull.n = 0;
	f->nfre = 0;
	f->word_skip = SFE_SKIP_NONE;
	c->gr.n = 0;
	f->plt = false;
	f->plt_skip = SFE_SKIP_NONE;
	if (f->active)
		c->retcol = c->t->cies[fde->cie].ra_reg;
}

/* A row at or after the first PLT CFA expression (x86-64 PLT: rsp + 8 +
 * ((rip & 15) >= K) << 3): each must be that expression with the first
 * one's K, RA at its fixed slot, no FP rule and no SP rule (the CFA
 * offset changes inside a block). */
static void plt_row(sfe_pctx *c, const cfi_row *r)
{
	sfe_fdeproj *f = &c->f;
	if (!f->plt) {
		f->plt = true;
		f->pstart = r->start;
		f->plt_k = r->cfa.expr.plt_k;
	}
	if (f->plt_skip)
		return;
	prow p;
	memset(&p, 0, sizeof p);
	sfe_skip s;
	if (r->cfa.kind != CFI_CFA_EXPR || r->cfa.expr.shape != CFI_EXPR_PLT ||
	    r->cfa.expr.plt_k != f->plt_k || r->cfa.expr.off != 8 ||
	    r->cfa.expr.reg != c->regs->sp)
		f->plt_skip = SFE_SKIP_PLT_SHAPE;
	else if ((s = project_ra(c->abi, c->regs, c->retcol, &r->ra, &p)))
		f->plt_skip = s;
	else if (p.ra_undef || p.ra.kind != PL_NONE ||
		 project_fp(c->regs, &r->fp, &p) || p.fp.kind != PL_NONE ||
		 r->sp.kind != CFI_RULE_UNSPEC)
		f->plt_skip = SFE_SKIP_PLT_SHAPE;
}

/* Project r in full into *p; false if SFrame cannot express it (the
 * first such row decides the reason). Apart from fde_row, so that the
 * usual row (cfa_off_only) does not pay for its registers. */
static bool project_full(sfe_pctx *c, const cfi_row *r, prow *p)
{
	sfe_fdeproj *f = &c->f;
	sfe_skip s = project_row(c->abi, c->regs, c->retcol, r, p);
	if (s) {
		f->row_skip = s;
		return false;
	}
	if (!f->flex && !default_ok(c->abi, c->regs, p, &s))
		f->flex = true;
	return true;
}

/* An FRE's start: from the FDE's start to its row's (rows cover it). */
static inline uint32_t fre_start(const sfe_fdeproj *f, uint64_t start)
{
	uint64_t rs = start < f->pc ? f->pc : start;
	return (uint32_t)(rs - f->pc);
}

/* The FRE of projected row pa, built after the FDE's FREs so far
 * (c->fres, room for it made): a data word that does not fit is
 * remembered (the first one), not built. */
static inline void put_fre(sfe_pctx *c, const sfe_prow_at *pa)
{
	sfe_fdeproj *f = &c->f;
	if (f->word_skip)
		return; /* no function: no more FREs needed */
	sfe_fre *fr = &c->fres[f->nfre];
	fr->start = fre_start(f, pa->start);
	sfe_skip word = make_fre(c->abi, c->regs, f->flex, &f->full[pa->base],
				 pa->cfa_off, fr);
	if (word) {
		f->word_skip = word;
		return;
	}
	fre_keep(c->fres, &f->nfre);
}

/* put_fre for a row whose projection differs from the one before only in
 * its CFA offset (cfa_off_only), after an FRE (f->nfre > 0): that row's
 * FRE is the last one kept, or one equal to it. The new one is that FRE
 * with its CFA word changed, kept as fre_keep would: nothing if the word
 * is the same, in place if it starts where that one does. */
static inline void put_fre_cfa(sfe_pctx *c, const sfe_prow_at *pa)
{
	sfe_fdeproj *f = &c->f;
	if (f->word_skip)
		return;
	sfe_fre *last = &c->fres[f->nfre - 1];
	if (!last->ndw)
		return; /* RA undefined: no CFA word */
	int32_t cw;
	sfe_skip word = sfe_cfa_word(c->abi == CFI_ABI_S390X, pa->cfa_off, &cw);
	if (word) {
		f->word_skip = word;
		return;
	}
	unsigned k = f->flex ? 1 : 0;
	if (last->dw[k] == cw)
		return;
	uint32_t start = fre_start(f, pa->start);
	if (last->start != start) {
		last[1] = last[0];
		last++;
		last->start = start;
		f->nfre++;
	}
	last->dw[k] = cw;
}

/* put_fre with room made for it; false on OOM. */
static bool add_fre(sfe_pctx *c, const sfe_prow_at *pa)
{
	if (!sfe_grow((void **)&c->fres, &c->gr, sizeof(sfe_fre), c->f.nfre + 1))
		return false;
	put_fre(c, pa);
	return true;
}

/* The FDE's FREs again from its projected rows, as a row just made it
 * flexible. false on OOM. */
static bool rebuild_fres(sfe_pctx *c)
{
	sfe_fdeproj *f = &c->f;
	f->nfre = 0;
	f->word_skip = SFE_SKIP_NONE;
	for (size_t k = 0; k < f->gp.n; k++)
		if (!add_fre(c, &f->pv[k]))
			return false;
	return true;
}

static e2s_err fde_row_gen(sfe_pctx *c, const cfi_row *r);

/* The FDE's first row, its rules its CIE's initial ones (r->same ==
 * CFI_COL_ALL): what fde_row_gen made of the first such row of the CIE,
 * at r's start. Only allocation failures are errors. */
static e2s_err first_row(sfe_pctx *c, const cfi_row *r)
{
	sfe_fdeproj *f = &c->f;
	uint32_t ci = c->t->fdes[f->fde].cie;
	if (ci >= c->gfirst.n) {
		if (!sfe_grow((void **)&c->first, &c->gfirst, sizeof *c->first, ci + 1))
			return E2S_ERR_NOMEM;
		memset(&c->first[c->gfirst.n], 0,
		       (ci + 1 - c->gfirst.n) * sizeof *c->first);
		c->gfirst.n = ci + 1;
	}
	sfe_first *k = &c->first[ci];
	if (k->state == SFE_FIRST_NEVER || !row_live(r, f->pc, f->end) ||
	    !sfe_grow((void **)&f->pv, &f->gp, sizeof *f->pv, 1) ||
	    !sfe_grow((void **)&f->full, &f->gfull, sizeof *f->full, 1) ||
	    !sfe_grow((void **)&c->fres, &c->gr, sizeof(sfe_fre), 1))
		return fde_row_gen(c, r); /* it reports OOM */
	if (k->state == SFE_FIRST_NONE) {
		e2s_err e = fde_row_gen(c, r);
		if (e || f->plt) {
			k->state = SFE_FIRST_NEVER;
			return e;
		}
		k->state = SFE_FIRST_KEPT;
		k->skip = f->row_skip;
		if (!k->skip) {
			k->flex = f->flex;
			k->cfa_run = f->cfa_run;
			k->cfa_reg = f->prev_cfa_reg;
			k->full = f->full[0];
			k->word_skip = f->word_skip;
			if (!k->word_skip)
				k->fre = c->fres[0];
		}
		return E2S_ERR_OK;
	}
	f->same = 0;
	f->nrows = 1;
	if (k->skip) {
		f->row_skip = k->skip;
		return E2S_ERR_OK;
	}
	f->full[0] = k->full;
	f->gfull.n = 1;
	f->pv[0] = (sfe_prow_at){r->start, k->full.cfa_off, 0};
	f->gp.n = 1;
	f->flex = k->flex;
	f->word_skip = k->word_skip;
	if (!k->word_skip) {
		c->fres[0] = k->fre;
		c->fres[0].start = fre_start(f, r->start);
		f->nfre = 1;
	}
	f->cfa_run = k->cfa_run;
	f->prev_cfa_reg = k->cfa_reg;
	f->same = CFI_COL_ALL;
	return E2S_ERR_OK;
}

/* The next row of the FDE begun, in general. Only allocation failures
 * are errors. */
static e2s_err fde_row_gen(sfe_pctx *c, const cfi_row *r)
{
	sfe_fdeproj *f = &c->f;
	f->same &= r->same;
	if (!f->active)
		return E2S_ERR_OK;
	if (f->plt || (r->cfa.kind == CFI_CFA_EXPR &&
		       r->cfa.expr.shape == CFI_EXPR_PLT)) {
		f->cfa_run = false;
		plt_row(c, r);
		return E2S_ERR_OK;
	}
	f->nrows++;
	if (f->row_skip || !row_live(r, f->pc, f->end))
		return E2S_ERR_OK;
	if (!sfe_grow((void **)&f->pv, &f->gp, sizeof *f->pv, f->gp.n + 1))
		return E2S_ERR_NOMEM;
	sfe_prow_at *pa = &f->pv[f->gp.n];
	bool flex = f->flex;
	if (cfa_off_only(f->same, f, r)) {
		pa->base = pa[-1].base; /* verdicts as for that row */
		pa->cfa_off = r->cfa.off;
	} else {
		if (!sfe_grow((void **)&f->full, &f->gfull, sizeof *f->full,
			      f->gfull.n + 1))
			return E2S_ERR_NOMEM;
		/* Projected in its slot: no copy of a row just written. */
		if (!project_full(c, r, &f->full[f->gfull.n])) {
			f->cfa_run = false;
			return E2S_ERR_OK;
		}
		pa->base = f->gfull.n++;
		pa->cfa_off = f->full[pa->base].cfa_off;
	}
	pa->start = r->start;
	/* The FREs so far were built for a default FDE. */
	if (f->flex != flex && !rebuild_fres(c))
		return E2S_ERR_NOMEM;
	if (!add_fre(c, pa))
		return E2S_ERR_NOMEM;
	f->gp.n++;
	f->cfa_run = cfa_run_ok(c->regs, r);
	f->prev_cfa_reg = r->cfa.reg;
	f->same = CFI_COL_ALL;
	return E2S_ERR_OK;
}

/* The next row of the FDE begun: an FDE's first row with its CIE's
 * initial rules from what the CIE's first such row gave. */
static E2S_OUT_OF_LINE e2s_err fde_row_any(sfe_pctx *c, const cfi_row *r)
{
	sfe_fdeproj *f = &c->f;
	if (f->nrows == 0 && r->same == CFI_COL_ALL && f->active && !f->plt)
		return first_row(c, r);
	return fde_row_gen(c, r);
}

/* fde_row_any, with the usual row inline: one whose CFA offset alone
 * changed (cfa_off_only) with room for it. */
static inline e2s_err fde_row(sfe_pctx *c, const cfi_row *r)
{
	sfe_fdeproj *f = &c->f;
	if (cfa_off_only(f->same & r->same, f, r) && f->gp.n < f->gp.cap &&
	    f->nfre > 0 && f->nfre < c->gr.cap && row_live(r, f->pc, f->end)) {
		sfe_prow_at *pa = &f->pv[f->gp.n++];
		pa->start = r->start;
		pa->cfa_off = r->cfa.off;
		pa->base = pa[-1].base;
		put_fre_cfa(c, pa);
		f->nrows++;
		f->same = CFI_COL_ALL;
		return E2S_ERR_OK;
	}
	return fde_row_any(c, r);
}

/* The function [pc, end) of the projected rows: a row SFrame cannot
 * express decides the skip reason, else the FDE is FLEX if some row
 * needs it (every ABI has them: see the top) and DEFAULT otherwise; a
 * data word that does not fit (make_fre) comes last. On failure the
 * caller rolls back; *oom is set on allocation failure. */
static sfe_skip prows_to_func(sfe_pctx *c, const cfi_fde *fde,
			      uint32_t fdeidx, uint64_t pc, uint64_t end,
			      bool *oom)
{
	sfe_fdeproj *f = &c->f;
	if (f->row_skip)
		return f->row_skip;
	if (f->nrows == 0)
		return SFE_SKIP_CFA_UNSET;
	if (f->word_skip)
		return f->word_skip;
	/* Its FREs were built as the rows came, from c->fres[0]. */
	sfe_func *fn = new_func(c, fde, fdeidx, pc, end - pc);
	if (!fn) {
		*oom = true;
		return SFE_SKIP_NONE;
	}
	size_t fi = (size_t)(fn - c->set->funcs);
	fn->fre_count = (uint32_t)f->nfre;
	c->gr.n = f->nfre;
	c->set->funcs[fi].fde_type = f->flex ? SF_FDE_TYPE_FLEX : SF_FDE_TYPE_DEFAULT;
	if (!split_func(c, fde, fdeidx, fi))
		*oom = true;
	return SFE_SKIP_NONE;
}

/* x86-64 PLT: the CFA expression becomes one MASK FDE with 16-byte
 * blocks: FRE 0 sp+8, FRE K sp+16 (the shape GNU ld writes for its own
 * .plt entries). Rows before the expression (PLT0) stay an ordinary
 * function. */
static sfe_skip plt_to_funcs(sfe_pctx *c, const cfi_fde *fde, uint32_t fdeidx,
			     bool *oom)
{
	sfe_fdeproj *f = &c->f;
	uint64_t end = fde->pc_begin + fde->pc_range;
	uint64_t pstart = f->pstart;
	if (f->plt_skip)
		return f->plt_skip;
	/* Real PLTs are a few KiB (libstdc++: 16 KiB); one past 1 MiB is
	 * hostile, and --verify checks a MASK FDE at every PC. */
	if (c->abi != CFI_ABI_AMD64 || pstart % 16 || f->plt_k == 0 ||
	    f->plt_k >= 16 || pstart >= end || end - pstart > SFE_MAX_MASK_SIZE)
		return SFE_SKIP_PLT_SHAPE;
	if (f->nrows > 0 && pstart > fde->pc_begin) {
		sfe_skip s = prows_to_func(c, fde, fdeidx, fde->pc_begin, pstart,
					   oom);
		if (s || *oom)
			return s;
	}
	sfe_func *fn = new_func(c, fde, fdeidx, pstart, end - pstart);
	if (!fn) {
		*oom = true;
		return SFE_SKIP_NONE;
	}
	fn->pc_type = SF_FDE_PCTYPE_MASK;
	fn->rep_size = 16;
	size_t fi = (size_t)(fn - c->set->funcs);
	/* A stub shorter than K never reaches the second row; consumers
	 * (libsframe asserts it) want FRE starts within the function. */
	int nfres = f->plt_k < end - pstart ? 2 : 1;
	sfe_fre *fr = fre_slots(c, 2);
	if (!fr) {
		*oom = true;
		return SFE_SKIP_NONE;
	}
	size_t kept = 0;
	for (int k = 0; k < nfres; k++) {
		memset(&fr[kept], 0, sizeof fr[kept]);
		fr[kept].start = k ? f->plt_k : 0;
		fr[kept].ndw = 1;
		fr[kept].dw[0] = k ? 16 : 8;
		fre_keep(fr, &kept);
	}
	c->gr.n += kept;
	c->set->funcs[fi].fre_count = (uint32_t)kept;
	return SFE_SKIP_NONE;
}

/* The functions [first, gf.n) of the FDE just converted: restricted to
 * V2 if asked, then their FRE data written once into set->enc. */
static sfe_skip finish_fde(sfe_pctx *c, size_t first, bool *oom)
{
	sfe_func *fv = c->set->funcs;
	if (c->v2)
		for (size_t k = first; k < c->gf.n; k++)
			if (!sfe_v2_fit(c->abi, &fv[k], c->fres + fv[k].enc_off))
				return SFE_SKIP_V2;
	for (size_t k = first; k < c->gf.n; k++) {
		sfe_func *fn = &fv[k];
		size_t most = SFE_ATTR_BYTES + (size_t)fn->fre_count * SFE_FRE_MAX_BYTES;
		if (c->ge.n > UINT32_MAX ||
		    !sfe_grow((void **)&c->set->enc, &c->ge, 1, c->ge.n + most)) {
			*oom = true;
			return SFE_SKIP_NONE;
		}
		const sfe_fre *fres = c->fres + fn->enc_off;
		uint8_t *p = c->set->enc + c->ge.n;
		uint8_t *end = sfe_put_fres(p, fres, fn, c->v2, c->set->big_endian);
		fn->enc_off = (uint32_t)c->ge.n;
		fn->enc_len = (uint32_t)(end - p);
		c->ge.n += fn->enc_len;
		c->set->nfres += fn->fre_count;
	}
	return SFE_SKIP_NONE;
}

static bool note(sfe_pctx *c, size_t i, sfe_skip s);

/* Claim FDE i's range, its functions to follow from set->funcs[gf.n]
 * (up to the next claim's). Whether an earlier FDE has it is decided at
 * the end (pctx_finish). false on OOM. */
static inline bool claim(sfe_pctx *c, size_t i, const cfi_fde *fde)
{
	if (c->gcl.n >= c->gcl.cap &&
	    (c->gcl.n >= UINT32_MAX ||
	     !sfe_grow((void **)&c->cl, &c->gcl, sizeof *c->cl, c->gcl.n + 1)))
		return false;
	c->cl[c->gcl.n++] = (sfe_fclaim){
		fde->pc_begin, fde->pc_begin + fde->pc_range,
		fde->reloc.present ? fde->reloc.shndx : 0, (uint32_t)i,
		(uint32_t)c->gf.n};
	return true;
}

/* ---- Programs seen before --------------------------------------------
 * An FDE whose program bytes and CIE equal an earlier FDE's, and whose
 * size is the same or, for both, beyond the last location the program
 * reaches (cfi_fde.reach), gets the same FRE data or the same skip
 * reason: the rows differ at most in the last one's end, and
 * interpretation and projection depend on nothing else, except where a
 * row's place depends on the FDE's address (DW_CFA_set_loc, the PLT
 * mask's 16-byte blocks); those, functions split in parts and FDEs with
 * bad programs are not remembered. The streaming projection asks before
 * the program runs (cfi_fde_pre_fn) and copies the earlier result. Over
 * half the FDEs of a large C++ library repeat an earlier program
 * (libLLVM-14: 59%), most of them one of a few hundred: a small two-way
 * table (a set is one cache line) keeps a lookup cheap, and the key's
 * bytes are compared in the section only when its hash bits match. */

static bool memo_key_ok(const cfi_fde *fde)
{
	return fde->insn_len > 0 && fde->insn_len <= UINT16_MAX &&
	       fde->cie <= UINT16_MAX && fde->pc_range <= UINT32_MAX;
}

static uint64_t memo_hash(sfe_pctx *c, size_t i)
{
	if (c->hash_fde == i)
		return c->hash_val;
	const cfi_fde *fde = &c->t->fdes[i];
	const uint8_t *p = c->t->data + fde->insn_off;
	uint32_t n = fde->insn_len;
	uint64_t h = (uint64_t)fde->cie << 40 ^ n, w;
	/* Eight bytes a step, the last eight overlapping the step before
	 * (the key's bytes are compared on a match, so the hash only needs
	 * to spread; n is in it). */
	if (n >= 8) {
		for (uint32_t k = 0; k + 8 < n; k += 8) {
			memcpy(&w, p + k, 8);
			h = (h ^ w) * 0xd6e8feb86659fd93ull;
			h ^= h >> 32;
		}
		memcpy(&w, p + n - 8, 8);
	} else if (n >= 4) {
		uint32_t a, b;
		memcpy(&a, p, 4);
		memcpy(&b, p + n - 4, 4);
		w = (uint64_t)a << 32 | b;
	} else {
		w = n ? p[0] | (uint64_t)p[n / 2] << 8 | (uint64_t)p[n - 1] << 16 : 0;
	}
	h = (h ^ w) * 0xd6e8feb86659fd93ull;
	h ^= h >> 31;
	h *= 0x9e3779b97f4a7c15ull;
	h ^= h >> 32;
	c->hash_fde = i;
	c->hash_val = h;
	return h;
}

/* The set of two for hash h: the first holds the newer entry. */
static sfe_memo *memo_set(const sfe_pctx *c, uint64_t h)
{
	return &c->memo[2 * ((size_t)h & (c->memo_sets - 1))];
}

static uint32_t memo_tag(uint64_t h)
{
	return (uint32_t)(h >> 32) | 1;
}

/* A program of up to 8 bytes as a number (the rest 0). */
static uint64_t short_insns(const uint8_t *p, uint32_t n)
{
	return e2s_load_uN(p, n, false);
}

/* Kept in the entry, a short program is compared without reading the
 * earlier FDE's bytes (a cache miss each, on the most common hits). */
static bool memo_same(const sfe_pctx *c, const sfe_memo *m, const cfi_fde *fde,
		      uint32_t tag)
{
	const uint8_t *p = c->t->data + fde->insn_off;
	if (m->tag != tag || m->insn_len != fde->insn_len || m->cie != fde->cie)
		return false;
	if (m->pc_range != fde->pc_range &&
	    !(m->reach != SFE_MEMO_FAR &&
	      (m->pc_range > m->reach && fde->pc_range > m->reach)))
		return false;
	if (m->insn_len <= 8)
		return m->insn == short_insns(p, m->insn_len);
	return memcmp(c->t->data + m->insn, p, m->insn_len) == 0;
}

/* Remember FDE i's outcome s (its function, if any, from funcs[first]).
 * false on OOM. */
static bool memo_put(sfe_pctx *c, size_t i, sfe_skip s, size_t first)
{
	const cfi_fde *fde = &c->t->fdes[i];
	if (fde->status != E2S_ERR_OK || fde->set_loc || c->f.plt ||
	    !memo_key_ok(fde))
		return true;
	switch (s) {
	case SFE_SKIP_NONE:
		/* One function over the whole FDE (V2 may shorten it, and
		 * a function split in parts has more FREs than fre_count
		 * holds). */
		if (c->gf.n != first + 1 ||
		    c->set->funcs[first].pc_type != SF_FDE_PCTYPE_INC ||
		    c->set->funcs[first].size != fde->pc_range ||
		    c->set->funcs[first].enc_len > UINT16_MAX)
			return true;
		break;
	case SFE_SKIP_BAD_CFI:
	case SFE_SKIP_EMPTY:
	case SFE_SKIP_TOO_LARGE:
	case SFE_SKIP_DUPLICATE:
	case SFE_SKIP_UNSUPPORTED_ABI:
	case SFE_SKIP_PLT_SHAPE:
		return true; /* not from the program, or not remembered */
	default:
		break;
	}
	if (!c->memo) {
		/* About one entry per 64 bytes of section (an FDE takes
		 * 40 to 60), so that a small file pays for a small table. */
		size_t sets = 64;
		while (sets < SFE_MEMO_SETS && sets < c->t->size / 128)
			sets *= 2;
		size_t bytes = 2 * sets * sizeof *c->memo;
		sfe_memo *v = aligned_alloc(64, bytes);
		uint16_t *tags = calloc(2 * sets, sizeof *tags);
		if (!v || !tags) {
			free(v);
			free(tags);
			return false;
		}
		memset(v, 0, bytes);
		c->memo = v;
		c->memo_tags = tags;
		c->memo_sets = sets;
	}
	uint64_t h = memo_hash(c, i);
	sfe_memo *m = memo_set(c, h);
	uint16_t *mt = &c->memo_tags[m - c->memo];
	m[1] = m[0];
	mt[1] = mt[0];
	m->tag = memo_tag(h);
	mt[0] = (uint16_t)m->tag;
	m->cie = (uint16_t)fde->cie;
	m->pc_range = (uint32_t)fde->pc_range;
	m->reach = fde->reach < SFE_MEMO_FAR ? (uint16_t)fde->reach : SFE_MEMO_FAR;
	m->insn_len = (uint16_t)fde->insn_len;
	m->insn = fde->insn_len <= 8
			  ? short_insns(c->t->data + fde->insn_off, fde->insn_len)
			  : fde->insn_off;
	m->out = (uint8_t)s;
	m->enc_off = 0;
	m->enc_len = m->fre_count = 0;
	if (!s) {
		const sfe_func *fn = &c->set->funcs[first];
		m->enc_off = fn->enc_off;
		m->enc_len = (uint16_t)fn->enc_len;
		m->fre_count = (uint16_t)fn->fre_count;
		m->out |= (uint8_t)(fn->fde_type << 5 | fn->fre_type << 6);
	}
	return true;
}

/* FDE i's program was seen before: its outcome, without running it.
 * 1 done, 0 not seen (run it), -1 OOM. */
static int memo_take(sfe_pctx *c, size_t i)
{
	const cfi_fde *fde = &c->t->fdes[i];
	if (!c->memo || !memo_key_ok(fde))
		return 0;
	c->checked_fde = i; /* for fde_begin */
	c->checked = fde_precheck(c, fde);
	if (c->checked != SFE_SKIP_NONE)
		return 0;
	uint64_t h = memo_hash(c, i);
	const sfe_memo *m = memo_set(c, h);
	uint32_t tag = memo_tag(h);
	/* The entries are read only where a short tag matches; else the
	 * program runs, and memo_put writes the set afterwards. */
	const uint16_t *mt = &c->memo_tags[m - c->memo];
	if (mt[0] != (uint16_t)tag && mt[1] != (uint16_t)tag) {
		E2S_PREFETCH_W(m);
		return 0;
	}
	if (!memo_same(c, m, fde, tag) && !memo_same(c, ++m, fde, tag))
		return 0;
	if (!claim(c, i, fde))
		return -1;
	sfe_skip s = (sfe_skip)(m->out & 0x1f);
	if (!s) {
		/* Its FRE data is shared, not copied (a copy would be read
		 * from wherever the first one is, a cache miss each): enc is
		 * read-only once written, and the encoder writes each
		 * function's data from where enc_off says. */
		sfe_func *fn = new_func(c, fde, (uint32_t)i, fde->pc_begin,
					fde->pc_range);
		if (!fn)
			return -1;
		fn->enc_off = m->enc_off;
		fn->enc_len = m->enc_len;
		fn->fre_count = m->fre_count;
		fn->fde_type = (m->out >> 5) & 1;
		fn->fre_type = (uint8_t)(m->out >> 6);
		c->set->nfres += m->fre_count;
	}
	return note(c, i, s) ? 1 : -1;
}

/* FDE i has no more rows, and its status is final: its functions, or
 * why not. Only allocation failures are errors. */
static e2s_err fde_end(sfe_pctx *c, size_t i)
{
	const cfi_fde *fde = &c->t->fdes[i];
	sfe_fdeproj *f = &c->f;
	sfe_skip s = SFE_SKIP_NONE;
	size_t save_f = c->gf.n, save_e = c->ge.n, save_n = c->set->nfres;
	bool oom = false;

	c->gr.n = 0;
	f->fde = SIZE_MAX;
	/* fde_begin's check passed unless the program failed since. */
	s = f->active && fde->status == E2S_ERR_OK ? SFE_SKIP_NONE
						   : fde_precheck(c, fde);
	if (!s && f->rows_bad)
		s = SFE_SKIP_BAD_CFI;
	bool claimed = !s;
	if (claimed && !claim(c, i, fde))
		return E2S_ERR_NOMEM;
	if (!s) {
		if (f->plt)
			s = plt_to_funcs(c, fde, (uint32_t)i, &oom);
		else
			s = prows_to_func(c, fde, (uint32_t)i, fde->pc_begin,
					  fde->pc_begin + fde->pc_range, &oom);
		if (!s && !oom)
			s = finish_fde(c, save_f, &oom);
		if (oom)
			return E2S_ERR_NOMEM;
	}
	if (s) {
		c->gf.n = save_f;
		c->ge.n = save_e;
		c->set->nfres = save_n;
	}
	if (c->memo_on && !memo_put(c, i, s, save_f))
		return E2S_ERR_NOMEM;
	return note(c, i, s) ? E2S_ERR_OK : E2S_ERR_NOMEM;
}

/* FDE i with its rows in one array. */
static e2s_err project_fde(sfe_pctx *c, size_t i, const cfi_row *rows,
			   size_t n)
{
	if (c->f.fde != i)
		fde_begin(c, i);
	for (size_t k = 0; k < n; k++)
		if (fde_row(c, &rows[k]))
			return E2S_ERR_NOMEM;
	return fde_end(c, i);
}

static bool note(sfe_pctx *c, size_t i, sfe_skip s)
{
	if (!sfe_grow((void **)&c->set->fde_skip, &c->gs, 1, i + 1))
		return false;
	c->set->fde_skip[i] = (uint8_t)s;
	if (i >= c->gs.n)
		c->gs.n = i + 1;
	c->set->counts[s]++;
	return true;
}

static void pctx_init(sfe_pctx *c, sfe_set *out, unsigned version)
{
	memset(out, 0, sizeof *out);
	memset(c, 0, sizeof *c);
	c->set = out;
	c->v2 = version == SF_VERSION_2;
	out->version = c->v2 ? SF_VERSION_2 : SF_VERSION_3;
	c->hash_fde = SIZE_MAX;
	c->checked_fde = SIZE_MAX;
	c->f.fde = SIZE_MAX;
}

/* Free the scratch (not the set). */
static void pctx_scratch_free(sfe_pctx *c)
{
	free(c->fres);
	c->fres = NULL;
	free(c->f.pv);
	c->f.pv = NULL;
	free(c->f.full);
	c->f.full = NULL;
	free(c->memo);
	c->memo = NULL;
	free(c->memo_tags);
	c->memo_tags = NULL;
	free(c->first);
	c->first = NULL;
	free(c->cl);
	c->cl = NULL;
}

/* First FDE: learn the ABI and reserve from the section size (about
 * 6 bytes of .eh_frame per FRE written in about as many bytes, and 40
 * per function; untouched reserve costs address space only). */
static e2s_err pctx_start(sfe_pctx *c, const cfi_table *t)
{
	c->t = t;
	c->abi = t->abi;
	c->regs = cfi_abi_info(t->abi);
	c->set->abi = t->abi;
	c->set->big_endian = t->big_endian;
	c->started = true;
	if (t->size >= 4096 &&
	    (!sfe_grow((void **)&c->set->funcs, &c->gf, sizeof(sfe_func), t->size / 32) ||
	     !sfe_grow((void **)&c->cl, &c->gcl, sizeof *c->cl, t->size / 32) ||
	     !sfe_grow((void **)&c->set->enc, &c->ge, 1, t->size + t->size / 8) ||
	     !sfe_grow((void **)&c->set->fde_skip, &c->gs, 1, t->size / 32)))
		return E2S_ERR_NOMEM;
	return E2S_ERR_OK;
}


/* Finish: counts, order; frees the scratch. nfdes: FDEs seen. */
/* The claims decided: an FDE whose range overlaps an earlier kept one
 * is a duplicate, its functions dropped; the others' functions in
 * (section, start) order, as the encoder writes them. Each claim's
 * functions lie in its range in ascending order, and kept claims do not
 * overlap, so the claims' order is theirs. false on OOM. */
/* Where claim k's functions end: at the next claim's first (they are
 * made in claim order). */
static size_t claim_end(const sfe_pctx *c, size_t k)
{
	return k + 1 < c->gcl.n ? c->cl[k + 1].func : c->gf.n;
}

static bool settle_claims(sfe_pctx *c)
{
	sfe_set *out = c->set;
	const sfe_fclaim *cv = c->cl;
	size_t n = c->gcl.n, nwin, nf = c->gf.n, w = 0;
	/* Claims in address order, none overlapping the one before (the
	 * usual case): nothing to decide or move. */
	size_t in_order = 1;
	while (in_order < n &&
	       (cv[in_order - 1].shndx < cv[in_order].shndx ||
		(cv[in_order - 1].shndx == cv[in_order].shndx &&
		 cv[in_order - 1].end <= cv[in_order].start)))
		in_order++;
	if (in_order >= n)
		return true;
	uint8_t *lost = malloc(n);
	uint32_t *order = malloc(n * sizeof *order);
	uint32_t *from = e2s_alloc_big((nf ? nf : 1) * sizeof *from);
	bool ok = lost && order && from &&
		  sfe_claims_resolve(cv, n, lost, order, &nwin);
	for (size_t k = 0; k < n && ok; k++) {
		if (!lost[k])
			continue;
		out->counts[out->fde_skip[cv[k].fde]]--;
		out->fde_skip[cv[k].fde] = SFE_SKIP_DUPLICATE;
		out->counts[SFE_SKIP_DUPLICATE]++;
		for (size_t q = cv[k].func; q < claim_end(c, k); q++)
			out->nfres -= out->funcs[q].fre_count;
	}
	for (size_t r = 0; r < nwin && ok; r++)
		for (size_t q = cv[order[r]].func; q < claim_end(c, order[r]); q++)
			from[w++] = (uint32_t)q;
	if (ok) {
		/* The losers' functions after, to be dropped. */
		size_t m = w;
		for (size_t k = 0; k < n; k++)
			for (size_t q = cv[k].func; lost[k] && q < claim_end(c, k); q++)
				from[w++] = (uint32_t)q;
		sfe_permute_funcs(out->funcs, w, from);
		c->gf.n = m;
	}
	free(lost);
	free(order);
	free(from);
	return ok;
}

static e2s_err pctx_finish(sfe_pctx *c, size_t nfdes)
{
	sfe_set *out = c->set;
	if (!out->fde_skip && !(out->fde_skip = calloc(1, 1)))
		return E2S_ERR_NOMEM;
	if (!settle_claims(c))
		return E2S_ERR_NOMEM;
	pctx_scratch_free(c);
	out->nfdes = nfdes;
	out->nfuncs = c->gf.n;
	out->enc_len = c->ge.n;
	return E2S_ERR_OK;
}

static e2s_err proj_oom(sfe_pctx *c, e2s_diag *diag)
{
	pctx_scratch_free(c);
	sfe_set_free(c->set);
	return e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, "projecting CFI rows");
}

e2s_err sfe_project(const cfi_table *t, unsigned version, sfe_set *out,
		    e2s_diag *diag)
{
	sfe_pctx c;
	pctx_init(&c, out, version);
	if (pctx_start(&c, t))
		return proj_oom(&c, diag);
	for (size_t i = 0; i < t->nfdes; i++) {
		const cfi_fde *fde = &t->fdes[i];
		bool ok = (uint64_t)fde->row_first + fde->row_count <= t->nrows;
		/* No pointer arithmetic on a NULL rows array (empty table). */
		const cfi_row *rows = ok && fde->row_count ?
				      t->rows + fde->row_first : NULL;
		fde_begin(&c, i);
		c.f.rows_bad = !ok;
		if (project_fde(&c, i, rows, ok ? fde->row_count : 0))
			return proj_oom(&c, diag);
	}
	if (pctx_finish(&c, t->nfdes))
		return proj_oom(&c, diag);
	out->abi = t->abi;
	out->big_endian = t->big_endian;
	return E2S_ERR_OK;
}

/* ---- Streaming ------------------------------------------------------- */

struct sfe_stream {
	sfe_pctx c;
	sfe_set set;
	size_t nfdes;
};

e2s_err sfe_stream_new(sfe_stream **out, unsigned version)
{
	sfe_stream *s = calloc(1, sizeof *s);
	*out = s;
	if (!s)
		return E2S_ERR_NOMEM;
	pctx_init(&s->c, &s->set, version);
	s->c.memo_on = true;
	return E2S_ERR_OK;
}

/* Every stream callback: the first one learns the ABI; the table's
 * arrays move as it grows. false on OOM. */
static bool stream_at(sfe_stream *s, const cfi_table *t, size_t fde)
{
	if (!s->c.started && pctx_start(&s->c, t))
		return false;
	s->c.t = t;
	if (fde + 1 > s->nfdes)
		s->nfdes = fde + 1;
	return true;
}

e2s_err sfe_stream_fde(void *ctx, const cfi_table *t, size_t fde,
		       const cfi_row *rows, size_t nrows)
{
	sfe_stream *s = ctx;
	if (!stream_at(s, t, fde))
		return E2S_ERR_NOMEM;
	/* Rows one by one (sfe_stream_row) come with no array here. */
	return project_fde(&s->c, fde, rows, rows ? nrows : 0);
}

/* An FDE's first row: the rest need no bookkeeping. */
static E2S_OUT_OF_LINE e2s_err stream_first_row(sfe_stream *s,
						const cfi_table *t, size_t fde,
						const cfi_row *row)
{
	if (!stream_at(s, t, fde))
		return E2S_ERR_NOMEM;
	fde_begin(&s->c, fde);
	return fde_row_any(&s->c, row);
}

e2s_err sfe_stream_row(void *ctx, const cfi_table *t, size_t fde,
		       const cfi_row *row)
{
	sfe_stream *s = ctx;
	if (s->c.f.fde != fde)
		return stream_first_row(s, t, fde, row);
	return fde_row(&s->c, row);
}

int sfe_stream_pre(void *ctx, const cfi_table *t, size_t fde)
{
	sfe_stream *s = ctx;
	if (!stream_at(s, t, fde))
		return -1;
	return memo_take(&s->c, fde);
}

e2s_err sfe_stream_finish(sfe_stream *s, const cfi_table *t, sfe_set *out,
			  e2s_diag *diag)
{
	memset(out, 0, sizeof *out);
	if (!s->c.started && pctx_start(&s->c, t))
		return proj_oom(&s->c, diag);
	if (s->nfdes != t->nfdes) {
		sfe_set_free(&s->set);
		return e2s_fail(diag, E2S_ERR_USAGE, NULL, 0,
				"stream saw %zu of %zu FDEs", s->nfdes,
				t->nfdes);
	}
	if (pctx_finish(&s->c, t->nfdes))
		return proj_oom(&s->c, diag);
	*out = s->set;
	memset(&s->set, 0, sizeof s->set);
	return E2S_ERR_OK;
}

void sfe_stream_free(sfe_stream *s)
{
	if (!s)
		return;
	pctx_scratch_free(&s->c);
	sfe_set_free(&s->set);
	free(s);
}

e2s_err sfe_project_view(const void *img, size_t size,
			 const cfi_load_opts *lo, unsigned version,
			 cfi_file **cf, sfe_set *set, e2s_diag *diag)
{
	sfe_stream *s;
	e2s_err e;

	*cf = NULL;
	memset(set, 0, sizeof *set);
	if (sfe_stream_new(&s, version))
		return e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);
	cfi_load_opts o = {false, false, NULL, NULL};
	if (lo)
		o = *lo;
	o.pre_fde = sfe_stream_pre;
	o.on_row = sfe_stream_row;
	e = cfi_file_open_view(img, size, &o, sfe_stream_fde, s, cf, diag);
	if (!e)
		e = sfe_stream_finish(s, cfi_file_table(*cf), set, diag);
	sfe_stream_free(s);
	if (e) {
		cfi_file_close(*cf);
		*cf = NULL;
	}
	return e;
}

e2s_err sfe_build(const cfi_table *t, const sfe_encode_opts *o, bw_t *out,
		  sfe_set *set_out, sfe_reloc **relocs, size_t *nrelocs,
		  e2s_diag *diag)
{
	sfe_set s;
	e2s_err e = sfe_project(t, o ? o->sframe_version : 0, &s, diag);
	if (e)
		return e;
	e = sfe_encode(&s, o, out, relocs, nrelocs, diag);
	if (set_out)
		*set_out = s;
	else
		sfe_set_free(&s);
	return e;
}
