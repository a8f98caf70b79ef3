/* The verifier's own walk of CIE and FDE programs (DWARF 5 section
 * 6.4.2), written apart from src/dwarf's interpreter: it decodes the
 * instruction bytes itself and keeps, per row, the rules of the columns
 * that change what SFrame recovers (CFA, SP, FP, the CIE's return
 * column, the ABI's RA register, AArch64's RA_SIGN_STATE) plus, for a
 * saved SP, what its place holds.
 *
 * What a saved SP holds. "SP saved at CFA+n" (or "in register r") says
 * where the caller's SP went, not what it was: the place holds SP as it
 * was when the saving instruction ran. The CFI places that instruction
 * only within a step, the code between the previous location and the one
 * where the rule appears; that code ran under the previous row's CFA
 * rule. If that rule is SP + k and the step ends with it still in force,
 * SP had not moved when the save ran, so the place holds CFA - k: a value
 * of the frame, the same at every later PC. If the step moves the CFA
 * too, nothing says which came first, and the value is unknown unless
 * an earlier row of this FDE knew what the same place holds (GCC
 * restates a prologue's saves after a mid-function epilogue: the place
 * still holds what the prologue put there). The value rides in the
 * rule, so remember/restore_state carry it along. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/reader.h"
#include "vf_int.h"

enum {
	CFA_advance_loc = 0x40, CFA_offset = 0x80, CFA_restore = 0xc0,
	CFA_nop = 0x00, CFA_set_loc, CFA_advance_loc1, CFA_advance_loc2,
	CFA_advance_loc4, CFA_offset_extended, CFA_restore_extended,
	CFA_undefined, CFA_same_value, CFA_register, CFA_remember_state,
	CFA_restore_state, CFA_def_cfa, CFA_def_cfa_register,
	CFA_def_cfa_offset, CFA_def_cfa_expression, CFA_expression,
	CFA_offset_extended_sf, CFA_def_cfa_sf, CFA_def_cfa_offset_sf,
	CFA_val_offset, CFA_val_offset_sf, CFA_val_expression,
	CFA_MIPS_advance_loc8 = 0x1d,
	CFA_AARCH64_negate_ra_state_with_pc = 0x2c,
	CFA_AARCH64_negate_ra_state = 0x2d, /* GNU_window_save elsewhere */
	CFA_GNU_args_size = 0x2e,
	CFA_GNU_negative_offset_extended = 0x2f,
};

#define REG_NONE 0xffffu
/* Rows looked back for a place's known value: restated saves come right
 * after the epilogue they undo (at most 3 rows back in glibc, libstdc++
 * and the other s390x libraries here); the bound keeps a walk linear. */
#define VF_LOOKBACK 256
#define AARCH64_RA_SIGN_STATE 34

typedef struct {
	const vf_abi *a;
	const cfi_section *sec;
	const cfi_table *t;
	const cfi_cie *cie;
	const cfi_fde *fde;   /* NULL while in the CIE */
	vf_walk *w;
	vf_state cur;
	vf_state init;        /* the CIE's rules (for DW_CFA_restore) */
	vf_cfarule step_cfa;  /* the CFA rule the current step's code ran
	                       * under (the previous row's) */
	bool step_saves_sp;   /* the step states an SP save ... */
	vf_rule step_save;    /* ... to this place (kind, reg or off) */
	unsigned depth;
	uint64_t loc, end;
	bool in_cie;
} wk_t;

static bool fail(wk_t *k, const char *what, uint64_t off)
{
	snprintf(k->w->err, sizeof k->w->err, "%s at %s+0x%llx", what,
		 cfi_sec_name(k->t->kind), (unsigned long long)off);
	return false;
}

static bool cfa_same(const vf_cfarule *x, const vf_cfarule *y)
{
	return memcmp(x, y, sizeof *x) == 0;
}

/* Do rules a and b (saves) name the same place? */
static bool same_place(const vf_rule *a, const vf_rule *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == VR_REG)
		return a->reg == b->reg;
	return a->kind == VR_OFFSET && a->off == b->off;
}

/* What the latest earlier row of this FDE that knew it said r's place
 * holds (CFA + *held). */
static bool earlier_held(const wk_t *k, const vf_rule *r, int64_t *held)
{
	size_t stop = k->w->nrows > VF_LOOKBACK ? k->w->nrows - VF_LOOKBACK : 0;
	for (size_t i = k->w->nrows; i-- > stop;) {
		const vf_rule *q = &k->w->rows[i].st.col[COL_SP];
		if (q->held_known && same_place(q, r)) {
			*held = q->held;
			return true;
		}
	}
	return false;
}

/* SP during the step as CFA + *held: known when the step ran under
 * SP + k and leaves that rule as it found it (see the top). */
static bool step_sp(const wk_t *k, int64_t *held)
{
	const vf_cfarule *c = &k->step_cfa;
	if (c->kind != VC_REG || c->reg != k->a->sp ||
	    !cfa_same(c, &k->cur.cfa))
		return false;
	*held = (int64_t)(0 - (uint64_t)c->off);
	return true;
}

/* A step ends (the location advances, or the FDE ends): if it saved SP
 * to the place the SP rule now names, say what that place holds. */
static void end_step(wk_t *k)
{
	vf_rule *sp = &k->cur.col[COL_SP];
	int64_t held;
	if (k->step_saves_sp && !sp->held_known &&
	    same_place(sp, &k->step_save) &&
	    (step_sp(k, &held) || earlier_held(k, sp, &held))) {
		sp->held_known = 1;
		sp->held = held;
	}
	k->step_saves_sp = false;
	k->step_cfa = k->cur.cfa;
}

static bool push_row(wk_t *k, uint64_t upto)
{
	vf_walk *w = k->w;
	if (w->nrows && w->rows[w->nrows - 1].end == k->loc &&
	    memcmp(&w->rows[w->nrows - 1].st, &k->cur, sizeof k->cur) == 0) {
		w->rows[w->nrows - 1].end = upto;
		return true;
	}
	if (!vf_room((void **)&w->rows, w->nrows, &w->cap, sizeof *w->rows, 16))
		return false;
	vf_row *r = &w->rows[w->nrows++];
	r->start = k->loc;
	r->end = upto;
	r->st = k->cur;
	return true;
}

static bool move_to(wk_t *k, uint64_t to, uint64_t at)
{
	if (k->in_cie)
		return fail(k, "location advance in a CIE", at);
	if (to < k->loc || to > k->end)
		return fail(k, "location moves backwards or past the FDE end", at);
	if (to == k->loc)
		return true;
	end_step(k);
	if (!push_row(k, to))
		return fail(k, "out of memory", at);
	k->loc = to;
	return true;
}

static bool advance(wk_t *k, uint64_t delta, uint64_t at)
{
	uint64_t ca = k->cie->code_align;
	if (ca && delta > UINT64_MAX / ca)
		return fail(k, "location overflow", at);
	if (delta * ca > UINT64_MAX - k->loc)
		return fail(k, "location overflow", at);
	return move_to(k, k->loc + delta * ca, at);
}

static void set_rule(wk_t *k, uint64_t reg, uint8_t kind, int64_t off,
		     uint64_t reg2, uint32_t eoff, uint32_t elen)
{
	for (int c = 0; c < VF_NCOL; c++) {
		if (k->w->colreg[c] == REG_NONE || k->w->colreg[c] != reg)
			continue;
		vf_rule *r = &k->cur.col[c];
		memset(r, 0, sizeof *r);
		r->kind = kind;
		r->off = off;
		r->reg = reg2 > UINT16_MAX ? REG_NONE : (uint16_t)reg2;
		r->expr_off = eoff;
		r->expr_len = elen;
		if (c == COL_SP && (kind == VR_OFFSET || kind == VR_REG) &&
		    !k->in_cie) {
			k->step_saves_sp = true;
			k->step_save = *r;
		}
		if (c == COL_SIGN && kind == VR_VALEXPR)
			k->cur.sign_toggle = 0;
	}
}

static void restore_reg(wk_t *k, uint64_t reg)
{
	for (int c = 0; c < VF_NCOL; c++) {
		if (k->w->colreg[c] == REG_NONE || k->w->colreg[c] != reg)
			continue;
		if (k->in_cie)
			memset(&k->cur.col[c], 0, sizeof k->cur.col[c]);
		else
			k->cur.col[c] = k->init.col[c];
		if (c == COL_SIGN)
			k->cur.sign_toggle = k->in_cie ? 0 : k->init.sign_toggle;
	}
}

static void def_cfa(wk_t *k, uint64_t reg, int64_t off)
{
	memset(&k->cur.cfa, 0, sizeof k->cur.cfa);
	k->cur.cfa.kind = reg > UINT16_MAX ? VC_BROKEN : VC_REG;
	k->cur.cfa.reg = (uint16_t)reg;
	k->cur.cfa.off = reg > UINT16_MAX ? 0 : off;
}

/* A register the ABI's DWARF mapping does not define: malformed CFI. */
static bool bad_reg(wk_t *k, uint64_t reg, uint64_t at)
{
	if (reg <= k->a->max_reg)
		return false;
	fail(k, "register number out of range", at);
	return true;
}

static int64_t fac(uint64_t v, int64_t f)
{
	return (int64_t)(v * (uint64_t)f);
}

/* Run [off, off+len) of the section. */
static bool run(wk_t *k, uint32_t off, uint32_t len)
{
	const cfi_table *t = k->t;
	int64_t da = k->cie->data_align;
	br_t r;
	if ((uint64_t)off + len > t->size)
		return fail(k, "program past the section end", off);
	br_init(&r, t->data, (size_t)off + len, t->big_endian);
	br_seek(&r, off);
	while (!br_at_end(&r)) {
		uint64_t at = r.pos;
		uint8_t op = br_u8(&r);
		uint64_t reg, u;
		int64_t s;
		bool ok = true;
		switch (op & 0xc0) {
		case CFA_advance_loc:
			ok = advance(k, op & 0x3f, at);
			goto next;
		case CFA_offset:
			u = br_uleb(&r);
			if (bad_reg(k, op & 0x3f, at))
				return false;
			set_rule(k, op & 0x3f, VR_OFFSET, fac(u, da), 0, 0, 0);
			goto next;
		case CFA_restore:
			if (bad_reg(k, op & 0x3f, at))
				return false;
			restore_reg(k, op & 0x3f);
			goto next;
		default:
			break;
		}
		switch (op) {
		case CFA_nop:
		case CFA_GNU_args_size: /* SP at call sites, not the rules */
			if (op == CFA_GNU_args_size)
				br_uleb(&r);
			break;
		case CFA_set_loc: {
			uint64_t to, n;
			if (k->in_cie || !k->fde)
				return fail(k, "DW_CFA_set_loc in a CIE", at);
			if (cfi_read_fde_addr(k->sec, t, k->fde, r.pos, &to, &n) !=
			    E2S_ERR_OK)
				return fail(k, "unreadable DW_CFA_set_loc", at);
			br_skip(&r, (size_t)n);
			ok = move_to(k, to, at);
			break;
		}
		case CFA_advance_loc1: ok = advance(k, br_u8(&r), at); break;
		case CFA_advance_loc2: ok = advance(k, br_u16(&r), at); break;
		case CFA_advance_loc4: ok = advance(k, br_u32(&r), at); break;
		case CFA_MIPS_advance_loc8: ok = advance(k, br_u64(&r), at); break;
		case CFA_offset_extended:
			reg = br_uleb(&r);
			u = br_uleb(&r);
			if (br_ok(&r) && bad_reg(k, reg, at))
				return false;
			set_rule(k, reg, VR_OFFSET, fac(u, da), 0, 0, 0);
			break;
		case CFA_offset_extended_sf:
			reg = br_uleb(&r);
			s = br_sleb(&r);
			if (br_ok(&r) && bad_reg(k, reg, at))
				return false;
			set_rule(k, reg, VR_OFFSET, fac((uint64_t)s, da), 0, 0, 0);
			break;
		case CFA_GNU_negative_offset_extended:
			reg = br_uleb(&r);
			u = br_uleb(&r);
			if (br_ok(&r) && bad_reg(k, reg, at))
				return false;
			set_rule(k, reg, VR_OFFSET, fac(0 - u, da), 0, 0, 0);
			break;
		case CFA_val_offset:
			reg = br_uleb(&r);
			u = br_uleb(&r);
			if (br_ok(&r) && bad_reg(k, reg, at))
				return false;
			set_rule(k, reg, VR_VALOFF, fac(u, da), 0, 0, 0);
			break;
		case CFA_val_offset_sf:
			reg = br_uleb(&r);
			s = br_sleb(&r);
			if (br_ok(&r) && bad_reg(k, reg, at))
				return false;
			set_rule(k, reg, VR_VALOFF, fac((uint64_t)s, da), 0, 0, 0);
			break;
		case CFA_restore_extended:
			reg = br_uleb(&r);
			if (br_ok(&r) && bad_reg(k, reg, at))
				return false;
			restore_reg(k, reg);
			break;
		case CFA_undefined:
		case CFA_same_value:
			reg = br_uleb(&r);
			if (br_ok(&r) && bad_reg(k, reg, at))
				return false;
			set_rule(k, reg, op == CFA_undefined ? VR_UNDEF : VR_SAME, 0, 0, 0, 0);
			break;
		case CFA_register:
			reg = br_uleb(&r);
			u = br_uleb(&r);
			if (br_ok(&r) && (bad_reg(k, reg, at) || bad_reg(k, u, at)))
				return false;
			set_rule(k, reg, VR_REG, 0, u, 0, 0);
			break;
		case CFA_expression:
		case CFA_val_expression: {
			reg = br_uleb(&r);
			u = br_uleb(&r);
			if (br_ok(&r) && bad_reg(k, reg, at))
				return false;
			uint64_t eoff = r.pos;
			if (u > br_left(&r))
				return fail(k, "expression past the record end", at);
			br_skip(&r, (size_t)u);
			set_rule(k, reg, op == CFA_expression ? VR_EXPR : VR_VALEXPR,
				 0, 0, (uint32_t)eoff, (uint32_t)u);
			break;
		}
		case CFA_remember_state:
			if (k->depth == sizeof k->w->stack / sizeof k->w->stack[0])
				return fail(k, "DW_CFA_remember_state nested too deep", at);
			k->w->stack[k->depth++] = k->cur;
			break;
		case CFA_restore_state:
			if (!k->depth)
				return fail(k, "DW_CFA_restore_state with nothing remembered", at);
			k->cur = k->w->stack[--k->depth];
			break;
		case CFA_def_cfa:
			reg = br_uleb(&r);
			u = br_uleb(&r);
			if (br_ok(&r) && bad_reg(k, reg, at))
				return false;
			def_cfa(k, reg, (int64_t)u);
			break;
		case CFA_def_cfa_sf:
			reg = br_uleb(&r);
			s = br_sleb(&r);
			if (br_ok(&r) && bad_reg(k, reg, at))
				return false;
			def_cfa(k, reg, fac((uint64_t)s, da));
			break;
		case CFA_def_cfa_register:
			reg = br_uleb(&r);
			if (br_ok(&r) && bad_reg(k, reg, at))
				return false;
			if (k->cur.cfa.kind == VC_REG || k->cur.cfa.kind == VC_UNSET)
				def_cfa(k, reg, k->cur.cfa.kind == VC_REG ? k->cur.cfa.off : 0);
			else
				k->cur.cfa.kind = VC_BROKEN;
			break;
		case CFA_def_cfa_offset:
		case CFA_def_cfa_offset_sf:
			if (op == CFA_def_cfa_offset)
				s = (int64_t)br_uleb(&r);
			else
				s = fac((uint64_t)br_sleb(&r), da);
			if (k->cur.cfa.kind == VC_REG)
				k->cur.cfa.off = s;
			else
				k->cur.cfa.kind = VC_BROKEN;
			break;
		case CFA_def_cfa_expression:
			u = br_uleb(&r);
			if (u > br_left(&r))
				return fail(k, "expression past the record end", at);
			memset(&k->cur.cfa, 0, sizeof k->cur.cfa);
			k->cur.cfa.kind = VC_EXPR;
			k->cur.cfa.expr_off = (uint32_t)r.pos;
			k->cur.cfa.expr_len = (uint32_t)u;
			br_skip(&r, (size_t)u);
			break;
		case CFA_AARCH64_negate_ra_state:
		case CFA_AARCH64_negate_ra_state_with_pc:
			if (k->a->abi != ABI_AARCH64)
				return fail(k, "opcode with no meaning on this machine", at);
			k->cur.sign_toggle ^= 1;
			if (op == CFA_AARCH64_negate_ra_state_with_pc)
				k->cur.pauth_lr = 1;
			break;
		default:
			return fail(k, "unknown DW_CFA opcode", at);
		}
	next:
		if (!br_ok(&r))
			return fail(k, "truncated instruction", at);
		if (!ok)
			return false;
	}
	return true;
}

bool vf_walk_fde(const vf_abi *a, const cfi_section *sec, const cfi_table *t,
		 const cfi_fde *fde, vf_walk *w)
{
	wk_t k;
	memset(&k, 0, sizeof k);
	w->nrows = 0;
	w->err[0] = '\0';
	k.a = a;
	k.sec = sec;
	k.t = t;
	k.w = w;
	if (fde->cie >= t->ncies)
		return fail(&k, "FDE without CIE", fde->sec_off);
	k.cie = &t->cies[fde->cie];
	w->colreg[COL_SP] = a->sp;
	w->colreg[COL_FP] = a->fp;
	w->colreg[COL_RET] = k.cie->ra_reg > UINT16_MAX ? REG_NONE - 1
							 : (uint16_t)k.cie->ra_reg;
	w->sep_abira = k.cie->ra_reg != a->ra;
	w->colreg[COL_ABIRA] = w->sep_abira ? a->ra : REG_NONE;
	w->colreg[COL_SIGN] = a->abi == ABI_AARCH64 ? AARCH64_RA_SIGN_STATE
							: REG_NONE;
	k.in_cie = true;
	if (!run(&k, k.cie->insn_off, k.cie->insn_len))
		return false;
	if (k.depth)
		k.depth = 0; /* remembered state does not cross into FDEs */
	k.init = k.cur;
	k.in_cie = false;
	k.step_saves_sp = false;
	k.fde = fde;
	k.step_cfa = k.cur.cfa;
	k.loc = fde->pc_begin;
	k.end = fde->pc_begin + fde->pc_range;
	if (k.end < k.loc)
		return fail(&k, "FDE range wraps around", fde->sec_off);
	if (!run(&k, fde->insn_off, fde->insn_len))
		return false;
	end_step(&k);
	if (k.end > k.loc && !push_row(&k, k.end))
		return fail(&k, "out of memory", fde->sec_off);
	return true;
}

void vf_walk_free(vf_walk *w)
{
	free(w->rows);
	w->rows = NULL;
	w->nrows = w->cap = 0;
}

const vf_row *vf_row_at(const vf_walk *w, uint64_t pc)
{
	size_t lo = 0, hi = w->nrows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->rows[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || pc >= w->rows[lo - 1].end)
		return NULL;
	return &w->rows[lo - 1];
}
