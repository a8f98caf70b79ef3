/* One frame unwound from DWARF: the caller's CFA, SP, PC, FP and RA
 * signing state from a row's rules; and whether SFrame can say the same.
 *
 * Conventions (the ABIs' definitions of the CFA): with no rule for SP the
 * caller's SP is the CFA on AMD64 and AArch64 and CFA - 160 on s390x; any
 * other register with no rule keeps its value (the return column too:
 * AArch64 LR, s390x r14 hold the return address until saved). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../sframe/sfr_spec.h"
#include "vf_int.h"

bool vf_abi_init(int abi, vf_abi *out)
{
	memset(out, 0, sizeof *out);
	out->abi = abi;
	switch (abi) {
	case ABI_AMD64:
		out->sp = 7;
		out->fp = 6;
		out->ra = 16;
		out->pc_is_reg16 = true;
		out->has_flex = true;
		out->max_reg = 130; /* psABI: up to the mask registers k0-k7 */
		out->sframe_le = SFR_ABI_AMD64_LE;
		return true;
	case ABI_AARCH64:
		/* Flexible FDEs (spec 3.2) name no ABI: V3 has them here
		 * too (V2 has none). */
		out->sp = 31;
		out->fp = 29;
		out->ra = 30;
		out->has_flex = true;
		out->max_reg = 127; /* DWARF for AArch64: 0-127 */
		out->sframe_le = SFR_ABI_AARCH64_LE;
		out->sframe_be = SFR_ABI_AARCH64_BE;
		return true;
	case ABI_S390X:
		out->sp = 15;
		out->fp = 11;
		out->ra = 14;
		out->sp_val_off = -160;
		out->has_flex = true;
		out->max_reg = 65; /* s390x ABI: up to the PSW address */
		out->sframe_be = SFR_ABI_S390X_BE;
		return true;
	default:
		return false;
	}
}

unsigned vf_sframe_abi(int abi, bool big_endian)
{
	vf_abi a;
	if (!vf_abi_init(abi, &a))
		return 0;
	return big_endian ? a.sframe_be : a.sframe_le;
}

static void why(vf_frame *f, const char *fmt, const char *s)
{
	if (!f->why[0])
		snprintf(f->why, sizeof f->why, fmt, s);
}

/* The value a rule gives for a column whose register is regno. */
static vf_val rule_value(const vf_abi *a, vf_eval *e, const vf_rule *r,
			 unsigned regno, bool is_sp, const vf_val *cfa,
			 vf_frame *f)
{
	switch (r->kind) {
	case VR_UNSPEC:
		if (is_sp)
			return vf_add(*cfa, a->sp_val_off);
		return vf_regval(e, regno);
	case VR_SAME:
		return vf_regval(e, regno);
	case VR_UNDEF:
		return vf_undef();
	case VR_OFFSET:
	case VR_REG:
		if (is_sp) {
			if (r->held_known)
				return vf_add(*cfa, r->held);
			why(f, "%s", "SP saved while the CFA was not SP-based "
				     "(or changed at the same step)");
		}
		if (r->kind == VR_REG)
			return vf_regval(e, r->reg);
		return vf_deref(vf_add(*cfa, r->off));
	case VR_VALOFF:
		return vf_add(*cfa, r->off);
	case VR_EXPR:
		return vf_deref(vf_eval_expr(e, r->expr_off, r->expr_len, cfa));
	case VR_VALEXPR:
		return vf_eval_expr(e, r->expr_off, r->expr_len, cfa);
	default:
		return vf_opaque();
	}
}

void vf_dwarf_frame(const vf_abi *a, vf_eval *e, const vf_walk *w,
		    const vf_row *r, const cfi_cie *cie, vf_frame *f)
{
	const vf_state *st = &r->st;
	memset(f, 0, sizeof *f);
	f->signal = cie->signal_frame;
	if (st->col[COL_RET].kind == VR_UNDEF) {
		f->outermost = true;
		return;
	}
	switch (st->cfa.kind) {
	case VC_REG:
		f->cfa = vf_add(vf_regval(e, st->cfa.reg), st->cfa.off);
		break;
	case VC_EXPR:
		f->cfa = vf_eval_expr(e, st->cfa.expr_off, st->cfa.expr_len, NULL);
		break;
	case VC_UNSET:
		f->cfa = vf_opaque();
		why(f, "%s", "no CFA rule");
		break;
	default:
		f->cfa = vf_opaque();
		why(f, "%s", "CFA offset or register changed on an expression CFA");
		break;
	}
	f->sp = rule_value(a, e, &st->col[COL_SP], a->sp, true, &f->cfa, f);
	f->pc = rule_value(a, e, &st->col[COL_RET], w->colreg[COL_RET], false,
			   &f->cfa, f);
	f->fp = rule_value(a, e, &st->col[COL_FP], a->fp, false, &f->cfa, f);
	f->retcol_other = w->sep_abira;
	f->retcol = w->colreg[COL_RET];
	if (a->abi != ABI_AARCH64)
		return;
	/* RA_SIGN_STATE (DWARF register 34): 0 unsigned, 1 signed. */
	if (st->pauth_lr) {
		f->sign = SIGN_PAUTH_LR;
		return;
	}
	int64_t v = st->sign_toggle;
	const vf_rule *sr = &st->col[COL_SIGN];
	if (sr->kind == VR_VALEXPR) {
		vf_val x = vf_eval_expr(e, sr->expr_off, sr->expr_len, &f->cfa);
		int64_t c;
		if (!vf_is_const(&x, &c)) {
			f->sign = SIGN_UNKNOWN;
			return;
		}
		v ^= c;
	} else if (sr->kind != VR_UNSPEC) {
		f->sign = SIGN_UNKNOWN;
		return;
	}
	if (v == 0)
		f->sign = SIGN_NONE;
	else if (v == 1)
		f->sign = cie->pauth_b_key ? SIGN_B : SIGN_A;
	else
		f->sign = SIGN_UNKNOWN;
}

static bool fits32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* Can a flexible control/offset pair give v? */
static bool flex_loc_ok(const vf_val *v, const vf_val *cfa)
{
	int64_t k;
	bool deref;
	/* *(CFA + k): control word 2 */
	if (vf_rel(v, cfa, &k, &deref) && deref && fits32(k))
		return true;
	/* [*](reg + k): reg_p set, so the control word is never 0 */
	if (v->kind != VF_REG)
		return false;
	if (v->nderef == 0)
		return fits32(v->off[0]);
	return v->nderef == 1 && v->off[1] == 0 && fits32(v->off[0]);
}

/* v == *(CFA + k) with k a usable stack-slot word. */
static bool stack_slot(const vf_val *v, const vf_val *cfa, int64_t *k)
{
	bool deref;
	return vf_rel(v, cfa, k, &deref) && deref && fits32(*k);
}

static bool no(char *why_out, size_t len, const char *fmt, const char *s)
{
	snprintf(why_out, len, fmt, s);
	return false;
}

bool vf_expressible(const vf_abi *a, unsigned version, const vf_frame *f,
		    char *why_out, size_t len)
{
	char b[80];
	if (f->outermost)
		return true;
	if (f->signal && version < 3)
		return no(why_out, len, "%s", "signal frame (SFrame V2 has no flag)");
	const vf_val *cfa = &f->cfa;
	if (!vf_is_known(cfa) || cfa->kind != VF_REG ||
	    !(cfa->nderef == 0 || (cfa->nderef == 1 && cfa->off[1] == 0))) {
		vf_str(cfa, a->abi, b, sizeof b);
		return no(why_out, len, f->why[0] ? "%s" : "CFA %s has no SFrame form",
			  f->why[0] ? f->why : b);
	}
	bool cfa_deref = cfa->nderef == 1;
	int64_t k = cfa->off[0];
	/* Any int64 may come from the CFI: bound it before the arithmetic
	 * (no SFrame word holds 2^31 * 8 + 160 or more). */
	if (k < -((int64_t)1 << 40) || k > ((int64_t)1 << 40))
		return no(why_out, len, "%s", "CFA offset too large");
	if (a->abi == ABI_S390X) {
		if ((k - 160) % 8)
			return no(why_out, len, "%s", "CFA offset - 160 not a multiple of 8");
		k = (k - 160) / 8;
	}
	if (!fits32(k))
		return no(why_out, len, "%s", "CFA offset too large");
	bool flex = a->has_flex && version >= 3;
	bool dflt = !cfa_deref && (cfa->reg == a->sp || cfa->reg == a->fp);
	if (!dflt && !flex)
		return no(why_out, len, "%s", "CFA not SP/FP + offset");

	vf_val want = vf_add(*cfa, a->sp_val_off);
	if (!vf_eq(&f->sp, &want)) {
		char s[80];
		vf_str(&f->sp, a->abi, s, sizeof s);
		snprintf(why_out, len, "caller SP %s is not CFA%+d%s%s", s,
			 (int)a->sp_val_off, f->why[0] ? ": " : "", f->why);
		return false;
	}

	/* Return address. */
	vf_val ra_reg = vf_reg(a->ra);
	int64_t rk, fk;
	bool ra_unch = vf_eq(&f->pc, &ra_reg);
	bool ra_slot = stack_slot(&f->pc, cfa, &rk);
	bool ra_dflt, ra_flex = flex_loc_ok(&f->pc, cfa);
	switch (a->abi) {
	case ABI_AMD64:
		ra_dflt = ra_slot && rk == SFR_AMD64_FIXED_RA;
		ra_flex = ra_flex || ra_dflt;
		break;
	case ABI_S390X:
		/* Word 0 reads as "RA not saved" (SFRAME_FRE_RA_OFFSET_INVALID);
		 * V2 also encodes a register number in an odd word. */
		ra_dflt = ra_unch || (ra_slot && rk != 0) ||
			  (version < 3 && f->pc.kind == VF_REG && f->pc.nderef == 0 &&
			   f->pc.off[0] == 0);
		ra_flex = ra_flex || ra_unch;
		break;
	default: /* AArch64: word 0 reads as SFRAME_FRE_RA_OFFSET_INVALID */
		ra_dflt = ra_unch || (ra_slot && rk != 0);
		break;
	}
	/* Frame pointer. */
	vf_val fp_reg = vf_reg(a->fp);
	bool fp_unch = vf_eq(&f->fp, &fp_reg);
	bool fp_slot = stack_slot(&f->fp, cfa, &fk);
	bool fp_dflt = fp_unch || fp_slot;
	bool fp_flex = fp_unch || flex_loc_ok(&f->fp, cfa);
	if (a->abi == ABI_AARCH64 && fp_slot && !ra_slot)
		fp_dflt = false; /* word 3 is FP only after an RA word */
	if (a->abi == ABI_S390X && version < 3 && f->fp.kind == VF_REG &&
	    f->fp.nderef == 0 && f->fp.off[0] == 0)
		fp_dflt = true;

	bool sign_ok = f->sign == SIGN_NONE || f->sign == SIGN_A || f->sign == SIGN_B;
	if (!sign_ok)
		return no(why_out, len, "%s", f->sign == SIGN_PAUTH_LR ?
			  "RA signed with the PC as a second modifier (PAuth_LR)" :
			  "RA signing state is not a constant 0 or 1");
	if (dflt && ra_dflt && fp_dflt)
		return true;
	if (flex && ra_flex && fp_flex)
		return true;
	if (!(ra_dflt || (flex && ra_flex))) {
		char rn[16];
		vf_str(&f->pc, a->abi, b, sizeof b);
		if (f->retcol_other)
			snprintf(why_out, len, "return address %s (return column %s, "
				 "not the ABI's RA register) has no SFrame form", b,
				 vf_reg_name(a->abi, f->retcol, rn, sizeof rn));
		else
			snprintf(why_out, len, "return address %s has no SFrame form", b);
		return false;
	}
	if (!(fp_dflt || (flex && fp_flex))) {
		vf_str(&f->fp, a->abi, b, sizeof b);
		return no(why_out, len, "caller FP %s has no SFrame form", b);
	}
	return no(why_out, len, "%s", "CFA, RA and FP need different FDE types");
}
