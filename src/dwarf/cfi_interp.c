/* The CFA program interpreter: decoded instructions -> rows, in one
 * linear pass. A row is emitted each time the location advances past a
 * non-empty range; a row whose rules equal its predecessor's extends it
 * instead (memcmp: every byte of a row, padding included, is set; the
 * compare is skipped when no kept column changed since the last row).
 * Each row says which columns it shares with its predecessor
 * (cfi_row.same), so the projection redoes only what changed.
 * Only the ABI's SP, FP and RA columns are kept (and AArch64's
 * RA_SIGN_STATE as row flags); other registers are validated and
 * dropped.
 *
 * SP save provenance (cfi.h): an SP save rule set at a location takes
 * the CFA rule in force when that location's group of instructions began
 * (the row covering the saving instruction). If it was SP + k and the
 * group leaves the CFA rule unchanged, the saved value is CFA - k. If the
 * CFA changed in the same group, the order is unknown; compilers do that
 * when they restate a prologue's saves after a mid-function epilogue, so
 * then a save of a slot (CFA + n, or register r) that an earlier save in
 * this FDE settled keeps that save's k (the last 16 slots are kept). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../common/mem.h"
#include "cfi_int.h"

typedef struct {
	const cfi_table *t;
	const cfi_cie *cie;
	const abi_desc *ar;
	const cfi_row *init; /* CIE initial rules (NULL while in the CIE) */
	cfi_interp_scratch *s;
	cfi_fde *fde;        /* NULL while running the CIE */
	size_t fde_idx;      /* its index in t->fdes */
	cfi_row cur;      /* cur.end is the location */
	uint64_t end;     /* the FDE's end */
	uint64_t ca_short; /* the CIE's code alignment if below 2^32, else 0 */
	uint64_t plain;    /* registers 0-63 a rule for only needs checked:
	                    * valid, of no kept column (0 in a CIE) */
	uint32_t nrows;    /* rows made (fde->row_count once it ends) */
	cfi_row_fn row_fn; /* s->row_fn, s->row_ctx */
	void *row_ctx;
	unsigned chg; /* CFI_COL_* columns changed since the last row */
	/* The CFA rule when this location's group began (what identifies
	 * it: an expression by its bytes' place; grp_set). */
	cfi_cfa grp;
	bool sp_set;     /* an SP save rule was set in this group */
	struct sp_slot {
		uint8_t kind;
		uint16_t reg;
		int32_t k;
		int64_t off;
	} slots[16];
	unsigned nslots;
} run_t;

enum { COL_NONE, COL_SP, COL_FP, COL_SIGN };

/* The ABI column (SP, FP, AArch64 RA_SIGN_STATE) DWARF register reg
 * is, if any. The CIE's return-address column is separate: a register
 * can be both (a return column of SP or FP), and a rule for it then sets
 * both. */
static int column_of(const run_t *x, uint64_t reg)
{
	if (x->t->abi == ABI_UNKNOWN)
		return COL_NONE;
	if (reg == x->ar->sp)
		return COL_SP;
	if (reg == x->ar->fp)
		return COL_FP;
	if (x->ar->ra_sign != ABI_NO_REG && reg == x->ar->ra_sign)
		return COL_SIGN;
	return COL_NONE;
}

static cfi_rule *column(cfi_row *row, const run_t *x, uint64_t reg)
{
	switch (column_of(x, reg)) {
	case COL_SP: return &row->sp;
	case COL_FP: return &row->fp;
	default: return NULL;
	}
}

static struct sp_slot *find_slot(run_t *x, const cfi_rule *r)
{
	for (unsigned i = 0; i < x->nslots; i++) {
		struct sp_slot *sl = &x->slots[i];
		if (sl->kind == r->kind &&
		    (r->kind == CFI_RULE_REGISTER ? sl->reg == r->reg
						  : sl->off == r->off))
			return sl;
	}
	return NULL;
}

/* Only the leading fields grp_same reads: one copy of 24 bytes. */
static void grp_set(cfi_cfa *g, const cfi_cfa *c)
{
	memcpy(g, c, offsetof(cfi_cfa, expr.len) + sizeof c->expr.len);
}

static bool grp_same(const cfi_cfa *g, const cfi_cfa *c)
{
	return g->kind == c->kind && g->reg == c->reg && g->off == c->off &&
	       g->expr.sec_off == c->expr.sec_off &&
	       g->expr.len == c->expr.len;
}

/* Settle SP provenance when a location group with an SP save ends (see
 * the top). */
static void close_sp(run_t *x)
{
	cfi_rule *sp = &x->cur.sp;
	x->chg |= CFI_COL_SP;
	if (sp->prov == CFI_PROV_PENDING) {
		bool same = grp_same(&x->grp, &x->cur.cfa);
		sp->prov = same ? CFI_PROV_KNOWN : CFI_PROV_NONE;
		if (same) {
			struct sp_slot *sl = find_slot(x, sp);
			if (!sl && x->nslots < sizeof x->slots / sizeof x->slots[0])
				sl = &x->slots[x->nslots++];
			if (sl)
				*sl = (struct sp_slot){sp->kind, sp->reg, sp->prov_k,
						       sp->off};
		}
	}
	if (x->sp_set && sp->prov == CFI_PROV_NONE &&
	    (sp->kind == CFI_RULE_OFFSET || sp->kind == CFI_RULE_REGISTER)) {
		const struct sp_slot *sl = find_slot(x, sp);
		if (sl) {
			sp->prov = CFI_PROV_KNOWN;
			sp->prov_k = sl->k;
		}
	}
	x->sp_set = false;
}

/* A location group ends. */
static inline void close_group(run_t *x)
{
	if (x->sp_set) /* a pending save has it set (set_rule) */
		close_sp(x);
	/* The group's CFA rule is the current one unless it changed since
	 * the last row (chg is cleared only where rows are made). */
	if (x->chg & CFI_COL_CFA)
		grp_set(&x->grp, &x->cur.cfa);
}

static bool reg_ok(const run_t *x, uint64_t reg)
{
	return reg <= x->ar->max_reg;
}

static void set_expr(const run_t *x, uint32_t blk_off, uint32_t blk_len,
		     cfi_expr *e)
{
	const cfi_table *t = x->t;
	cfi_expr_classify(t->data + blk_off, blk_len, t->big_endian,
			  x->cie->addr_size, e);
	e->sec_off = blk_off;
	e->len = blk_len;
}

/* Are the rules of a and b the same, given that only the columns chg
 * may differ? Column by column (all padding is zero). */
static bool same_rules(const cfi_row *a, const cfi_row *b, unsigned chg)
{
	if ((chg & ~(unsigned)CFI_COL_CFA_BASE) == CFI_COL_CFA)
		return memcmp(&a->cfa, &b->cfa, sizeof a->cfa) == 0;
	const size_t rules = offsetof(cfi_row, same) - offsetof(cfi_row, cfa);
	return memcmp(&a->cfa, &b->cfa, rules) == 0;
}

/* Row by row (cfi_row_fn): the current rules as [loc, upto), unless
 * no column changed since the row before; loc moves to upto (before the
 * call: nothing is kept across it). */
static inline e2s_err pass_on(run_t *x, uint64_t upto)
{
	if (x->nrows && !x->chg) {
		x->cur.end = upto;
		return E2S_ERR_OK;
	}
	x->cur.start = x->cur.end;
	x->cur.end = upto;
	x->cur.same = (uint8_t)(x->chg ^ CFI_COL_ALL); /* chg: CFI_COL_* */
	x->chg = 0;
	x->nrows++;
	return x->row_fn(x->row_ctx, x->t, x->fde_idx, &x->cur);
}

/* Table mode: [loc, upto) with the current rules as a row of s->rows,
 * merged with the previous row of this FDE when the rules are the same. */
static e2s_err keep_row(run_t *x, uint64_t upto)
{
	cfi_interp_scratch *s = x->s;
	if (x->nrows) {
		cfi_row *last = &s->rows[s->nrows - 1];
		if (last->end == x->cur.end &&
		    (!x->chg || same_rules(last, &x->cur, x->chg))) {
			last->end = upto;
			x->cur.end = upto;
			x->chg = 0;
			return E2S_ERR_OK;
		}
	}
	size_t n = s->nrows;
	if (n == s->rows_cap) {
		size_t cap = n ? 2 * n : 256;
		if (n > UINT32_MAX || cap > SIZE_MAX / sizeof(cfi_row))
			return E2S_ERR_NOMEM;
		cfi_row *v = realloc(s->rows, cap * sizeof *v);
		if (!v)
			return E2S_ERR_NOMEM;
		s->rows = v;
		s->rows_cap = cap;
	}
	cfi_row *row = &s->rows[n];
	*row = x->cur;
	row->start = x->cur.end;
	row->end = upto;
	row->same = (uint8_t)(x->chg ^ CFI_COL_ALL);
	s->nrows = n + 1;
	x->cur.end = upto;
	x->nrows++;
	x->chg = 0;
	return E2S_ERR_OK;
}

/* Emit [loc, upto) with the current rules: to the row consumer, or to
 * the table (kept out of line, so that the consumer's path is short).
 * loc becomes upto (but on out of memory in the table). */
static inline e2s_err emit(run_t *x, uint64_t upto)
{
	if (x->row_fn)
		return pass_on(x, upto);
	return keep_row(x, upto);
}

static inline e2s_err move_to(run_t *x, uint64_t newloc)
{
	if (!x->fde)
		return E2S_ERR_BAD_OPCODE; /* no advancing in a CIE */
	if (newloc < x->cur.end || newloc > x->end)
		return E2S_ERR_PC_BACKWARDS;
	if (newloc > x->cur.end) {
		close_group(x);
		return emit(x, newloc);
	}
	return E2S_ERR_OK;
}

static E2S_ALWAYS_INLINE e2s_err advance(run_t *x, uint64_t delta)
{
	uint64_t ca = x->cie->code_align;
	/* delta * ca > UINT64_MAX - loc, without a division in the usual
	 * case (both operands below 2^32 cannot overflow the product). */
	if (((delta | ca) >> 32) != 0 && ca && delta > UINT64_MAX / ca)
		return E2S_ERR_PC_BACKWARDS;
	if (delta * ca > UINT64_MAX - x->cur.end)
		return E2S_ERR_PC_BACKWARDS;
	return move_to(x, x->cur.end + delta * ca);
}

/* advance for the one- and two-byte forms (delta below 2^16): with a
 * code alignment below 2^32 (ca_short, else 0) the product cannot
 * overflow, and a step inside the FDE's range needs no other check.
 * The rest (no step, out of range, in a CIE) is advance's to judge. */
static E2S_ALWAYS_INLINE e2s_err advance_short(run_t *x, uint32_t delta)
{
	uint64_t d = delta * x->ca_short;
	if (d - 1 >= x->end - x->cur.end)
		return advance(x, delta);
	close_group(x);
	return emit(x, x->cur.end + d);
}

/* Factored offset; wraps instead of overflowing (bad input only). */
static int64_t factor(uint64_t v, int64_t align)
{
	return (int64_t)(v * (uint64_t)align);
}

/* RA_SIGN_STATE: a constant 0 or 1 sets it; any other rule leaves it
 * unknown. */
static void set_sign(run_t *x, const cfi_rule *r)
{
	if (r->kind == CFI_RULE_VAL_EXPR && r->expr.shape == CFI_EXPR_CONST &&
	    (r->expr.off == 0 || r->expr.off == 1)) {
		x->cur.ra_mangled = (uint8_t)r->expr.off;
		x->cur.ra_sign_bad = 0;
	} else {
		x->cur.ra_sign_bad = 1;
	}
}

static e2s_err set_rule(run_t *x, uint64_t reg, const cfi_rule *r)
{
	if (!reg_ok(x, reg))
		return E2S_ERR_BAD_REGISTER;
	if (reg == x->cie->ra_reg) {
		x->cur.ra = *r;
		x->chg |= CFI_COL_RA;
	}
	int cn = column_of(x, reg);
	if (cn == COL_SIGN) {
		set_sign(x, r);
		x->chg |= CFI_COL_SIGN;
		return E2S_ERR_OK;
	}
	if (cn == COL_NONE)
		return E2S_ERR_OK;
	cfi_rule *col = cn == COL_SP ? &x->cur.sp : &x->cur.fp;
	x->chg |= cn == COL_SP ? CFI_COL_SP : CFI_COL_FP;
	*col = *r;
	if (col == &x->cur.sp && x->fde &&
	    (r->kind == CFI_RULE_OFFSET || r->kind == CFI_RULE_REGISTER)) {
		x->sp_set = true;
		const cfi_cfa *g = &x->grp;
		if (g->kind == CFI_CFA_REG_OFF && g->reg == x->ar->sp &&
		    g->off >= INT32_MIN && g->off <= INT32_MAX) {
			col->prov = CFI_PROV_PENDING;
			col->prov_k = (int32_t)g->off;
		}
	}
	return E2S_ERR_OK;
}

static e2s_err rule_off_col(run_t *x, uint64_t reg, uint8_t kind,
			    int64_t off)
{
	if (reg != x->cie->ra_reg && column_of(x, reg) == COL_NONE)
		return reg_ok(x, reg) ? E2S_ERR_OK : E2S_ERR_BAD_REGISTER;
	cfi_rule r;
	memset(&r, 0, sizeof r);
	r.kind = kind;
	r.off = off;
	return set_rule(x, reg, &r);
}

/* Most saves are of registers no kept column is: only checked, here
 * by one bit of x->plain. */
static E2S_ALWAYS_INLINE e2s_err rule_off(run_t *x, uint64_t reg, uint8_t kind,
					  int64_t off)
{
	if (reg < 64 && (x->plain >> reg & 1))
		return E2S_ERR_OK;
	return rule_off_col(x, reg, kind, off);
}

static e2s_err def_cfa(run_t *x, uint64_t reg, int64_t off)
{
	if (!reg_ok(x, reg))
		return E2S_ERR_BAD_REGISTER;
	x->chg |= CFI_COL_CFA | CFI_COL_CFA_BASE;
	memset(&x->cur.cfa, 0, sizeof x->cur.cfa);
	x->cur.cfa.kind = CFI_CFA_REG_OFF;
	x->cur.cfa.reg = (uint16_t)reg;
	x->cur.cfa.off = off;
	return E2S_ERR_OK;
}

/* def_cfa_offset / def_cfa_register only modify a register CFA; on an
 * expression CFA DWARF leaves the result undefined, so the CFA becomes
 * CFI_CFA_INVALID (row kept, unusable; see cfi.h). def_cfa_offset with
 * no CFA at all is treated the same way; def_cfa_register with none
 * gives reg + 0. Out of line: def_cfa_offset's usual path then marks
 * its change with one or to memory. */
static E2S_OUT_OF_LINE void cfa_invalidate(run_t *x)
{
	x->chg |= CFI_COL_CFA | CFI_COL_CFA_BASE;
	memset(&x->cur.cfa, 0, sizeof x->cur.cfa);
	x->cur.cfa.kind = CFI_CFA_INVALID;
}

static e2s_err def_cfa_offset(run_t *x, int64_t off)
{
	if (x->cur.cfa.kind == CFI_CFA_REG_OFF) {
		x->chg |= CFI_COL_CFA;
		x->cur.cfa.off = off;
	} else {
		cfa_invalidate(x);
	}
	return E2S_ERR_OK;
}

/* Every rule and CFA rule starts zeroed and only an expression one sets
 * its expr, so past equal kinds the expr bytes need comparing only in
 * those: the same answer as a memcmp of the whole. */
_Static_assert(CFI_RULE_EXPR > CFI_RULE_REGISTER &&
		       CFI_RULE_VAL_EXPR == CFI_RULE_EXPR + 1,
	       "rule_same: the expression kinds come last");
/* restore_row copies the rules from cfa on, past the location, and
 * compares the three signing flags as one run of bytes. */
_Static_assert(offsetof(cfi_row, end) < offsetof(cfi_row, cfa) &&
		       offsetof(cfi_row, start) < offsetof(cfi_row, cfa),
	       "restore_row: the location before the rules");
_Static_assert(offsetof(cfi_row, ra_sign_bad) == offsetof(cfi_row, ra_mangled) + 1 &&
		       offsetof(cfi_row, ra_sign_pc) == offsetof(cfi_row, ra_mangled) + 2,
	       "restore_row: the signing flags together");
static bool rule_same(const cfi_rule *a, const cfi_rule *b)
{
	return memcmp(a, b, offsetof(cfi_rule, expr)) == 0 &&
	       (a->kind < CFI_RULE_EXPR ||
		memcmp(&a->expr, &b->expr, sizeof a->expr) == 0);
}

/* Do a and b differ in their offsets at most? */
static bool cfa_base_same(const cfi_cfa *a, const cfi_cfa *b)
{
	return a->kind == b->kind && a->reg == b->reg &&
	       (a->kind != CFI_CFA_EXPR ||
		memcmp(&a->expr, &b->expr, sizeof a->expr) == 0);
}

/* Make the rules those of r (a remembered row), marking in x->chg the
 * columns whose rules differ from the current ones. */
static void restore_row(run_t *x, const cfi_row *r)
{
	cfi_row *c = &x->cur;
	const cfi_rule *rsp = &r->sp;
	cfi_rule sp;
	if (rsp->prov == CFI_PROV_PENDING) {
		sp = *rsp;
		sp.prov = CFI_PROV_NONE;
		rsp = &sp;
	}
	if (memcmp(&c->cfa, &r->cfa, sizeof c->cfa))
		x->chg |= CFI_COL_CFA;
	if (!cfa_base_same(&c->cfa, &r->cfa))
		x->chg |= CFI_COL_CFA_BASE;
	if (!rule_same(&c->ra, &r->ra))
		x->chg |= CFI_COL_RA;
	if (!rule_same(&c->fp, &r->fp))
		x->chg |= CFI_COL_FP;
	if (!rule_same(&c->sp, rsp))
		x->chg |= CFI_COL_SP;
	if (memcmp(&c->ra_mangled, &r->ra_mangled, 3))
		x->chg |= CFI_COL_SIGN;
	/* The rules on (the location stays; start is set at each row). */
	memcpy(&c->cfa, &r->cfa, sizeof *c - offsetof(cfi_row, cfa));
	if (c->sp.prov == CFI_PROV_PENDING)
		c->sp.prov = CFI_PROV_NONE;
}

static e2s_err def_cfa_register(run_t *x, uint64_t reg)
{
	if (!reg_ok(x, reg))
		return E2S_ERR_BAD_REGISTER;
	x->chg |= CFI_COL_CFA | CFI_COL_CFA_BASE;
	if (x->cur.cfa.kind == CFI_CFA_REG_OFF)
		x->cur.cfa.reg = (uint16_t)reg;
	else if (x->cur.cfa.kind == CFI_CFA_UNSET)
		return def_cfa(x, reg, 0);
	else
		cfa_invalidate(x);
	return E2S_ERR_OK;
}

/* DW_CFA_restore: register reg's rule back to the CIE's. */
static e2s_err restore_reg(run_t *x, uint64_t reg)
{
	if (!reg_ok(x, reg))
		return E2S_ERR_BAD_REGISTER;
	if (column_of(x, reg) == COL_SIGN) {
		x->chg |= CFI_COL_SIGN;
		x->cur.ra_mangled = x->init ? x->init->ra_mangled : 0;
		x->cur.ra_sign_bad = x->init ? x->init->ra_sign_bad : 0;
		return E2S_ERR_OK;
	}
	if (reg == x->cie->ra_reg) {
		x->chg |= CFI_COL_RA;
		if (x->init)
			x->cur.ra = x->init->ra;
		else
			memset(&x->cur.ra, 0, sizeof x->cur.ra);
	}
	cfi_rule *col = column(&x->cur, x, reg);
	if (col) {
		x->chg |= col == &x->cur.sp ? CFI_COL_SP : CFI_COL_FP;
		if (x->init)
			*col = *column((cfi_row *)x->init, x, reg);
		else
			memset(col, 0, sizeof *col);
	}
	return E2S_ERR_OK;
}

static e2s_err remember_state(run_t *x)
{
	cfi_interp_scratch *s = x->s;
	if (s->depth >= CFI_MAX_STATE_DEPTH)
		return E2S_ERR_STACK_OVERFLOW;
	if (s->depth == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		cfi_row *v = realloc(s->stack, cap * sizeof *v);
		if (!v)
			return E2S_ERR_NOMEM;
		s->stack = v;
		s->cap = cap;
	}
	s->stack[s->depth++] = x->cur;
	return E2S_ERR_OK;
}

/* The whole rule set, CFA and RA signing state included; a save still
 * pending belongs to another group. Only the columns it changes count as
 * changed (an epilogue's restore often changes the CFA offset alone). */
static e2s_err restore_state(run_t *x)
{
	cfi_interp_scratch *s = x->s;
	if (s->depth == 0)
		return E2S_ERR_STACK_UNDERFLOW;
	restore_row(x, &s->stack[--s->depth]);
	return E2S_ERR_OK;
}

/* One decoded instruction: any opcode (cfi_dec_next), or a short form
 * (cfi_dec_short: no block operand). Inlined where it is called, so that
 * a short form's operands stay in registers. */
static E2S_ALWAYS_INLINE e2s_err exec_one(run_t *x, const cfi_insn *in)
{
	const cfi_cie *cie = x->cie;
	cfi_rule r;

	/* The opcodes of nearly every prologue and epilogue first, as plain
	 * branches: a jump table over a program alternating among them is
	 * mispredicted at almost every instruction. */
	if (in->op == DW_CFA_advance_loc)
		return advance_short(x, (uint32_t)in->a);
	if (in->op == DW_CFA_def_cfa_offset)
		return def_cfa_offset(x, (int64_t)in->a);
	if (in->op == DW_CFA_offset)
		return rule_off(x, in->a, CFI_RULE_OFFSET,
				factor(in->b, cie->data_align));
	switch (in->op) {
	case DW_CFA_advance_loc1:
	case DW_CFA_advance_loc2:
	case DW_CFA_advance_loc4:
	case DW_CFA_MIPS_advance_loc8:
		return advance(x, in->a);
	case DW_CFA_set_loc:
		if (x->fde)
			x->fde->set_loc = true;
		return move_to(x, in->a);
	case DW_CFA_offset_extended:
		return rule_off(x, in->a, CFI_RULE_OFFSET,
				factor(in->b, cie->data_align));
	case DW_CFA_offset_extended_sf:
		return rule_off(x, in->a, CFI_RULE_OFFSET,
				factor(in->b, cie->data_align));
	case DW_CFA_GNU_negative_offset_extended:
		return rule_off(x, in->a, CFI_RULE_OFFSET,
				factor(0 - in->b, cie->data_align));
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
		return rule_off(x, in->a, CFI_RULE_VAL_OFFSET,
				factor(in->b, cie->data_align));
	case DW_CFA_restore:
	case DW_CFA_restore_extended:
		return restore_reg(x, in->a);
	case DW_CFA_undefined:
		return rule_off(x, in->a, CFI_RULE_UNDEFINED, 0);
	case DW_CFA_same_value:
		return rule_off(x, in->a, CFI_RULE_SAME, 0);
	case DW_CFA_register:
		if (!reg_ok(x, in->b))
			return E2S_ERR_BAD_REGISTER;
		memset(&r, 0, sizeof r);
		r.kind = CFI_RULE_REGISTER;
		r.reg = (uint16_t)in->b;
		return set_rule(x, in->a, &r);
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		memset(&r, 0, sizeof r);
		r.kind = in->op == DW_CFA_expression ? CFI_RULE_EXPR
						     : CFI_RULE_VAL_EXPR;
		set_expr(x, in->blk_off, in->blk_len, &r.expr);
		return set_rule(x, in->a, &r);
	case DW_CFA_remember_state:
		return remember_state(x);
	case DW_CFA_restore_state:
		return restore_state(x);
	case DW_CFA_def_cfa:
		return def_cfa(x, in->a, (int64_t)in->b);
	case DW_CFA_def_cfa_sf:
		return def_cfa(x, in->a, factor(in->b, cie->data_align));
	case DW_CFA_def_cfa_register:
		return def_cfa_register(x, in->a);
	case DW_CFA_def_cfa_offset_sf:
		return def_cfa_offset(x, factor(in->a, cie->data_align));
	case DW_CFA_def_cfa_expression:
		x->chg |= CFI_COL_CFA | CFI_COL_CFA_BASE;
		memset(&x->cur.cfa, 0, sizeof x->cur.cfa);
		x->cur.cfa.kind = CFI_CFA_EXPR;
		set_expr(x, in->blk_off, in->blk_len, &x->cur.cfa.expr);
		return E2S_ERR_OK;
	case DW_CFA_AARCH64_negate_ra_state:
	case DW_CFA_AARCH64_negate_ra_state_with_pc:
		/* 0x2d is DW_CFA_GNU_window_save (SPARC register windows)
		 * outside AArch64: no SFrame meaning, so unsupported. */
		if (x->ar->ra_sign == ABI_NO_REG)
			return E2S_ERR_BAD_OPCODE;
		x->cur.ra_mangled ^= 1;
		x->chg |= CFI_COL_SIGN;
		/* PAuth_LR: the PC is a second signing modifier, which SFrame
		 * cannot say; the flag stays for the rest of the FDE. */
		if (in->op == DW_CFA_AARCH64_negate_ra_state_with_pc)
			x->cur.ra_sign_pc = 1;
		return E2S_ERR_OK;
	case DW_CFA_nop:
	case DW_CFA_GNU_args_size: /* affects the SP at calls, not rows */
		return E2S_ERR_OK;
	default:
		return E2S_ERR_BAD_OPCODE;
	}
}

/* Run the program in dec: the short forms (cfi_dec_short) decoded and
 * run one by one with the position in a register, the rest decoded by
 * cfi_dec_next. A decoding problem later in the program wins over an
 * interpretation one (the whole program is validated as bytes first, as
 * an instruction array would be). */
static E2S_ALWAYS_INLINE e2s_err exec(run_t *x, cfi_dec *dec, uint64_t *err_off)
{
	br_t *r = &dec->r;
	const uint8_t *base = r->base, *end = r->base + r->end;
	const bool be = r->big_endian;
	const uint8_t *p = base + r->pos;
	cfi_insn in;
	e2s_err e, de = E2S_ERR_OK;
	const bool bad = r->err != E2S_ERR_OK;
	x->s->depth = 0;
	if (bad)
		p = end; /* cfi_dec_next reports it */
	const uint8_t *at; /* the failing instruction, found at its failure
			    * (only the position is live across a step) */
	for (;;) {
		unsigned n;
		/* A short form's, in registers (never out of line). */
		cfi_insn o = {.op = 0};
		/* Each branch goes on by itself: one test of its result, no
		 * join of the results before it. */
		if (p < end && (p[0] & 0xc0) == DW_CFA_advance_loc) {
			/* The commonest, its operand in its opcode: run at
			 * once, no instruction filled. */
			p++;
			if ((e = advance_short(x, p[-1] & 0x3fu)) != E2S_ERR_OK) {
				at = p - 1;
				break;
			}
		} else if (p < end && (n = cfi_dec_short(p, end, be, &o))) {
			p += n;
			if ((e = exec_one(x, &o)) != E2S_ERR_OK) {
				at = p - n;
				break;
			}
		} else if (p == end && !bad) {
			return E2S_ERR_OK; /* as cfi_dec_next says there */
		} else {
			r->pos = (size_t)(p - base);
			if (!cfi_dec_next(dec, &in, &de, err_off))
				return de;
			p = base + r->pos;
			if ((e = exec_one(x, &in)) != E2S_ERR_OK) {
				at = base + in.off;
				break;
			}
		}
	}
	/* The rest of the program decoded, for a problem there. */
	r->pos = (size_t)(p - base);
	uint64_t doff;
	while (cfi_dec_next(dec, &in, &de, &doff))
		;
	if (de != E2S_ERR_OK) {
		*err_off = doff;
		return de;
	}
	*err_off = (uint64_t)(at - base);
	return e;
}

void cfi_scratch_init(cfi_interp_scratch *s, abi_id abi)
{
	const abi_desc *ar = abi_get(abi);
	run_t x = {.t = &(cfi_table){.abi = abi}, .ar = ar};
	s->ar = ar;
	s->plain = 0;
	for (unsigned reg = 0; reg < 64; reg++)
		if (reg_ok(&x, reg) && column_of(&x, reg) == COL_NONE)
			s->plain |= UINT64_C(1) << reg;
}

/* A program's run: an FDE's (fde set) from its CIE's st, or a CIE's
 * (fde and st NULL) into *cie_rules. One function around the one call
 * of exec (inlined: x is a local here, addressed off the stack pointer
 * in its loop, not through a register). */
static E2S_OUT_OF_LINE e2s_err run(const cfi_table *t, const cfi_cie *cie,
				   const cfi_cie_start *st, cfi_fde *fde,
				   size_t idx, cfi_dec *dec,
				   cfi_interp_scratch *s, uint64_t *err_off,
				   cfi_row *cie_rules)
{
	run_t x;
	if (fde) {
		/* Set field by field: the slots need no clearing (nslots 0),
		 * and this runs once per FDE. */
		x.t = t;
		x.cie = cie;
		x.ar = s->ar;
		x.init = &st->init;
		x.s = s;
		x.fde = fde;
		x.fde_idx = idx;
		x.cur = st->init;
		grp_set(&x.grp, &st->init.cfa);
		x.chg = 0;
		x.sp_set = false;
		x.nslots = 0;
		x.ca_short = st->ca_short;
		x.plain = st->plain;
		x.cur.end = fde->pc_begin;
		x.end = fde->pc_begin + fde->pc_range;
		if (x.end < x.cur.end)
			x.end = UINT64_MAX;
		x.nrows = 0;
		x.row_fn = s->row_fn;
		x.row_ctx = s->row_ctx;
		fde->row_first = (uint32_t)s->nrows;
	} else {
		memset(&x, 0, sizeof x);
		x.t = t;
		x.cie = cie;
		x.ar = s->ar;
		x.s = s;
	}
	e2s_err e = exec(&x, dec, err_off);
	if (!fde) {
		*cie_rules = x.cur;
		return e;
	}
	fde->reach = x.cur.end - fde->pc_begin < UINT32_MAX
			     ? (uint32_t)(x.cur.end - fde->pc_begin) : UINT32_MAX;
	if (e == E2S_ERR_OK)
		close_group(&x);
	if (e == E2S_ERR_OK && x.end > x.cur.end && (e = emit(&x, x.end)))
		*err_off = fde->sec_off;
	fde->row_count = x.nrows;
	if (e != E2S_ERR_OK) {
		s->nrows = fde->row_first;
		fde->row_count = 0;
	}
	return e;
}

e2s_err cfi_run_cie(const cfi_table *t, const cfi_cie *cie, cfi_dec *dec,
		    cfi_interp_scratch *s, cfi_cie_start *st,
		    uint64_t *err_off)
{
	e2s_err e = run(t, cie, NULL, NULL, 0, dec, s, err_off, &st->init);
	st->ca_short = cie->code_align <= UINT32_MAX ? cie->code_align : 0;
	st->plain = s->plain;
	if (cie->ra_reg < 64) /* the return column is kept */
		st->plain &= ~(UINT64_C(1) << cie->ra_reg);
	return e;
}

e2s_err cfi_run_fde(const cfi_table *t, const cfi_cie *cie,
		    const cfi_cie_start *st, cfi_fde *fde, size_t idx,
		    cfi_dec *dec, cfi_interp_scratch *s, uint64_t *err_off)
{
	return run(t, cie, st, fde, idx, dec, s, err_off, NULL);
}
