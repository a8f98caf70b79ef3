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

#include "sfe.h"
#include "sframe_fmt.h"

const char *sfe_skip_name(sfe_skip s)
{
	static const char *const names[] = {
#define SFE_X(name, text) text,
		SFE_SKIPS(SFE_X)
#undef SFE_X
	};
	if ((unsigned)s >= SFE_SKIP_COUNT_)
		return "?";
	return names[s];
}

/* Where RA or FP is found, as far as SFrame can say. */
enum {
	PL_NONE = 0, /* AMD64 RA: fixed c-8; otherwise unchanged */
	PL_STACK,    /* saved at CFA + off */
	PL_REG,      /* value in register reg (+ off) */
	PL_DEREF,    /* saved at reg + off */
};

typedef struct {
	uint8_t kind;
	uint16_t reg;
	int64_t off;
} ploc;

typedef struct {
	bool ra_undef;
	bool cfa_deref;
	uint16_t cfa_reg;
	int64_t cfa_off;
	ploc ra, fp;
	bool mangled;
} prow;

typedef struct {
	size_t n, cap;
} grow_t;

static bool grow(void **p, grow_t *g, size_t elem, size_t need)
{
	if (need <= g->cap)
		return true;
	size_t cap = g->cap ? g->cap : 64;
	while (cap < need)
		cap *= 2;
	void *np = realloc(*p, cap * elem);
	if (!np)
		return false;
	*p = np;
	g->cap = cap;
	return true;
}

/* ABIs with flexible FDEs. Like binutils 2.47 gas (sframe_support_flex_fde_p
 * for AMD64 and s390x only), AArch64 gets default FDEs only. */
static bool abi_has_flex(cfi_abi abi)
{
	return abi == CFI_ABI_AMD64 || abi == CFI_ABI_S390X;
}

static bool fits_i32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* An RA/FP rule that is an expression of the BREG shape. */
static sfe_skip loc_from_expr(const cfi_rule *r, bool val, ploc *out,
			      sfe_skip why)
{
	if (r->expr.shape != CFI_EXPR_BREG)
		return why;
	out->kind = val ? PL_REG : PL_DEREF;
	out->reg = r->expr.reg;
	out->off = r->expr.off;
	return SFE_SKIP_NONE;
}

static sfe_skip project_ra(cfi_abi abi, const cfi_abi_regs *regs,
			   const cfi_rule *r, prow *p)
{
	memset(&p->ra, 0, sizeof p->ra);
	switch (r->kind) {
	case CFI_RULE_UNDEFINED:
		p->ra_undef = true;
		return SFE_SKIP_NONE;
	case CFI_RULE_UNSPEC:
	case CFI_RULE_SAME:
		/* RA still in its register: only meaningful where RA is a
		 * register (LR on AArch64, r14 on s390x). */
		return abi == CFI_ABI_AMD64 ? SFE_SKIP_RA_RULE : SFE_SKIP_NONE;
	case CFI_RULE_OFFSET:
		if (abi == CFI_ABI_AMD64 && r->off == SF_AMD64_CFA_FIXED_RA_OFFSET)
			return SFE_SKIP_NONE;
		p->ra.kind = PL_STACK;
		p->ra.off = r->off;
		return SFE_SKIP_NONE;
	case CFI_RULE_REGISTER:
		if (r->reg == regs->ra)
			return abi == CFI_ABI_AMD64 ? SFE_SKIP_RA_RULE
						    : SFE_SKIP_NONE;
		p->ra.kind = PL_REG;
		p->ra.reg = r->reg;
		return SFE_SKIP_NONE;
	case CFI_RULE_EXPR:
		return loc_from_expr(r, false, &p->ra, SFE_SKIP_RA_RULE);
	case CFI_RULE_VAL_EXPR:
		return loc_from_expr(r, true, &p->ra, SFE_SKIP_RA_RULE);
	default:
		/* VAL_OFFSET: RA = CFA + n would need control word 0, which
		 * is the padding word (spec 3.2). */
		return SFE_SKIP_RA_RULE;
	}
}

static sfe_skip project_fp(const cfi_abi_regs *regs, const cfi_rule *r,
			   prow *p)
{
	memset(&p->fp, 0, sizeof p->fp);
	switch (r->kind) {
	case CFI_RULE_UNSPEC:
	case CFI_RULE_SAME:
		return SFE_SKIP_NONE;
	case CFI_RULE_OFFSET:
		p->fp.kind = PL_STACK;
		p->fp.off = r->off;
		return SFE_SKIP_NONE;
	case CFI_RULE_REGISTER:
		if (r->reg == regs->fp)
			return SFE_SKIP_NONE;
		p->fp.kind = PL_REG;
		p->fp.reg = r->reg;
		return SFE_SKIP_NONE;
	case CFI_RULE_EXPR:
		/* "saved at the address expr": FP = *(reg + k). */
		return loc_from_expr(r, false, &p->fp, SFE_SKIP_FP_RULE);
	case CFI_RULE_VAL_EXPR:
		return loc_from_expr(r, true, &p->fp, SFE_SKIP_FP_RULE);
	default: /* UNDEFINED, VAL_OFFSET */
		return SFE_SKIP_FP_RULE;
	}
}

/* SFrame always recovers SP from the CFA (s390x: CFA - 160). A saved
 * copy of SP on the stack (s390x stmg %r6,%r15 gives "r15 at c-40") holds
 * that same value by the ABI's definition of the CFA, so like gas we
 * accept it. */
static sfe_skip check_sp(cfi_abi abi, const cfi_rule *r)
{
	int64_t want = abi == CFI_ABI_S390X ? SF_S390X_SP_VAL_OFFSET : 0;
	if (r->kind == CFI_RULE_UNSPEC || r->kind == CFI_RULE_OFFSET)
		return SFE_SKIP_NONE;
	if (r->kind == CFI_RULE_VAL_OFFSET && r->off == want)
		return SFE_SKIP_NONE;
	return SFE_SKIP_SP_RULE;
}

static sfe_skip project_row(cfi_abi abi, const cfi_abi_regs *regs,
			    const cfi_row *row, prow *p)
{
	sfe_skip s;
	memset(p, 0, sizeof *p);
	s = project_ra(abi, regs, &row->ra, p);
	if (s)
		return s;
	if (p->ra_undef) {
		/* Outermost frame: nothing else is recovered. */
		memset(p, 0, sizeof *p);
		p->ra_undef = true;
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
	s = project_fp(regs, &row->fp, p);
	if (s)
		return s;
	s = check_sp(abi, &row->sp);
	if (s)
		return s;
	p->mangled = abi == CFI_ABI_AARCH64 && row->ra_mangled;
	return SFE_SKIP_NONE;
}

/* Can a default FDE express p? *why gets the reason when no FDE type can
 * (AArch64 has no flex, so its limits are final). */
static bool default_ok(cfi_abi abi, const cfi_abi_regs *regs, const prow *p,
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
		if (p->ra.kind != PL_NONE && p->ra.kind != PL_STACK) {
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

/* s390x stores CFA offsets as (off - 160) / 8, also in flexible FDEs
 * (interoperability with gas/libsframe 2.47, see seeds/README.md). */
static sfe_skip cfa_word(cfi_abi abi, int64_t off, int32_t *w)
{
	if (abi == CFI_ABI_S390X) {
		int64_t a = off - SF_S390X_CFA_OFFSET_ADJUSTMENT;
		if (a % SF_S390X_CFA_OFFSET_ALIGNMENT_FACTOR)
			return SFE_SKIP_CFA_ALIGN;
		off = a / SF_S390X_CFA_OFFSET_ALIGNMENT_FACTOR;
	}
	if (!fits_i32(off))
		return SFE_SKIP_OFFSET_RANGE;
	*w = (int32_t)off;
	return SFE_SKIP_NONE;
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

static sfe_skip make_fre(cfi_abi abi, const cfi_abi_regs *regs, bool flex,
			 const prow *p, sfe_fre *f)
{
	sfe_skip s;
	int32_t cw;
	uint32_t start = f->start;
	memset(f, 0, sizeof *f);
	f->start = start;
	if (p->ra_undef)
		return SFE_SKIP_NONE; /* 0 data words, info byte 0 */
	s = cfa_word(abi, p->cfa_off, &cw);
	if (s)
		return s;
	f->mangled_ra = p->mangled;
	if (flex) {
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

static bool fre_same(const sfe_fre *a, const sfe_fre *b)
{
	return a->ndw == b->ndw && a->base_fp == b->base_fp &&
	       a->mangled_ra == b->mangled_ra &&
	       memcmp(a->dw, b->dw, sizeof a->dw) == 0;
}

/* Working state of one projection. */
typedef struct {
	const cfi_table *t;
	cfi_abi abi;
	const cfi_abi_regs *regs;
	sfe_set *set;
	grow_t gf, gr;
	prow *pr; /* scratch: projected rows of one FDE */
	size_t npr_cap;
	/* claimed ranges, sorted by (shndx, start) */
	struct claim { uint16_t shndx; uint64_t start, end; } *claims;
	grow_t gc;
} pctx;

/* Overlap with an earlier FDE of the same section: first in section
 * order wins. Returns false (no claim) on overlap; -1 on OOM. */
static int claim_range(pctx *c, uint16_t shndx, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = c->gc.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct claim *m = &c->claims[mid];
		if (m->shndx < shndx || (m->shndx == shndx && m->start < start))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0) {
		const struct claim *p = &c->claims[lo - 1];
		if (p->shndx == shndx && p->end > start)
			return 0;
	}
	if (lo < c->gc.n) {
		const struct claim *n = &c->claims[lo];
		if (n->shndx == shndx && n->start < end)
			return 0;
	}
	if (!grow((void **)&c->claims, &c->gc, sizeof *c->claims, c->gc.n + 1))
		return -1;
	memmove(&c->claims[lo + 1], &c->claims[lo],
		(c->gc.n - lo) * sizeof *c->claims);
	c->claims[lo] = (struct claim){shndx, start, end};
	c->gc.n++;
	return 1;
}

static sfe_func *new_func(pctx *c, const cfi_fde *fde, uint32_t fdeidx,
			  uint64_t start, uint64_t size)
{
	if (!grow((void **)&c->set->funcs, &c->gf, sizeof(sfe_func), c->gf.n + 1))
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
	fn->fre_first = (uint32_t)c->gr.n;
	fn->src_fde = fdeidx;
	fn->reloc = fde->reloc;
	fn->reloc.addend += (int64_t)(start - fde->pc_begin);
	return fn;
}

static sfe_fre *new_fre(pctx *c)
{
	if (!grow((void **)&c->set->fres, &c->gr, sizeof(sfe_fre), c->gr.n + 1))
		return NULL;
	sfe_fre *f = &c->set->fres[c->gr.n++];
	memset(f, 0, sizeof *f);
	return f;
}

#define SFE_MAX_FRES 65535u

/* Does some PC of [pc, end) use this row? Empty rows are dropped. */
static bool row_live(const cfi_row *r, uint64_t pc, uint64_t end)
{
	uint64_t rs = r->start < pc ? pc : r->start;
	uint64_t re = r->end > end ? end : r->end;
	return rs < re;
}

/* Convert one FDE's rows [pc, end) into funcs/FREs. Returns a skip
 * reason; on failure the caller rolls back c->gf.n / c->gr.n. *oom set
 * on allocation failure. */
static sfe_skip convert_rows(pctx *c, const cfi_fde *fde, uint32_t fdeidx,
			     const cfi_row *rows, size_t nrows, uint64_t pc,
			     uint64_t end, bool *oom)
{
	if (nrows == 0)
		return SFE_SKIP_CFA_UNSET;
	if (nrows > c->npr_cap) {
		prow *np = realloc(c->pr, nrows * sizeof *np);
		if (!np) {
			*oom = true;
			return SFE_SKIP_NONE;
		}
		c->pr = np;
		c->npr_cap = nrows;
	}
	bool need_flex = false;
	sfe_skip hard = SFE_SKIP_NONE;
	for (size_t i = 0; i < nrows; i++) {
		if (!row_live(&rows[i], pc, end))
			continue;
		sfe_skip s = project_row(c->abi, c->regs, &rows[i], &c->pr[i]);
		if (s)
			return s;
		if (!default_ok(c->abi, c->regs, &c->pr[i], &s)) {
			need_flex = true;
			if (!hard)
				hard = s;
		}
	}
	if (need_flex && !abi_has_flex(c->abi))
		return hard;

	sfe_func *fn = new_func(c, fde, fdeidx, pc, end - pc);
	if (!fn) {
		*oom = true;
		return SFE_SKIP_NONE;
	}
	fn->fde_type = need_flex ? SF_FDE_TYPE_FLEX : SF_FDE_TYPE_DEFAULT;
	size_t fi = (size_t)(fn - c->set->funcs);
	for (size_t i = 0; i < nrows; i++) {
		const cfi_row *r = &rows[i];
		if (!row_live(r, pc, end))
			continue;
		uint64_t rs = r->start < pc ? pc : r->start;
		sfe_fre tmp;
		tmp.start = (uint32_t)(rs - pc);
		sfe_skip s = make_fre(c->abi, c->regs, need_flex, &c->pr[i], &tmp);
		if (s)
			return s;
		sfe_func *cur = &c->set->funcs[fi];
		if (cur->fre_count > 0) {
			sfe_fre *last = &c->set->fres[cur->fre_first + cur->fre_count - 1];
			if (fre_same(last, &tmp))
				continue;
			if (last->start == tmp.start) {
				*last = tmp; /* a zero-length row was replaced */
				continue;
			}
		}
		sfe_fre *f = new_fre(c);
		if (!f) {
			*oom = true;
			return SFE_SKIP_NONE;
		}
		*f = tmp;
		c->set->funcs[fi].fre_count++;
	}
	/* Split functions with more FREs than sfda_func_num_fres holds into
	 * consecutive FDEs, each starting at its first FRE. */
	while (c->set->funcs[fi].fre_count > SFE_MAX_FRES) {
		sfe_func *cur = &c->set->funcs[fi];
		uint32_t first = cur->fre_first + SFE_MAX_FRES;
		uint32_t rest = cur->fre_count - SFE_MAX_FRES;
		uint32_t delta = c->set->fres[first].start;
		uint64_t total = cur->size;
		cur->fre_count = SFE_MAX_FRES;
		cur->size = delta;
		sfe_func *nf = new_func(c, fde, fdeidx, cur->start + delta,
					total - delta);
		if (!nf) {
			*oom = true;
			return SFE_SKIP_NONE;
		}
		cur = &c->set->funcs[fi];
		nf->fde_type = cur->fde_type;
		nf->fre_first = first;
		nf->fre_count = rest;
		for (uint32_t k = 0; k < rest; k++)
			c->set->fres[first + k].start -= delta;
		fi = (size_t)(nf - c->set->funcs);
	}
	return SFE_SKIP_NONE;
}

/* x86-64 PLT: the CFA expression rsp + 8 + ((rip & 15) >= K) << 3 becomes
 * one MASK FDE with 16-byte blocks: FRE 0 sp+8, FRE K sp+16 (the shape
 * GNU ld writes for its own .plt entries). Rows before the expression
 * (PLT0) stay an ordinary function. */
static sfe_skip convert_plt(pctx *c, const cfi_fde *fde, uint32_t fdeidx,
			    const cfi_row *rows, size_t nrows, size_t first,
			    bool *oom)
{
	uint64_t end = fde->pc_begin + fde->pc_range;
	uint64_t pstart = rows[first].start;
	const cfi_expr *e0 = &rows[first].cfa.expr;
	for (size_t i = first; i < nrows; i++) {
		const cfi_row *r = &rows[i];
		prow p;
		memset(&p, 0, sizeof p);
		if (r->cfa.kind != CFI_CFA_EXPR || r->cfa.expr.shape != CFI_EXPR_PLT ||
		    r->cfa.expr.plt_k != e0->plt_k || r->cfa.expr.off != 8 ||
		    r->cfa.expr.reg != c->regs->sp)
			return SFE_SKIP_PLT_SHAPE;
		sfe_skip s = project_ra(c->abi, c->regs, &r->ra, &p);
		if (s)
			return s;
		if (p.ra_undef || p.ra.kind != PL_NONE)
			return SFE_SKIP_PLT_SHAPE;
		if (project_fp(c->regs, &r->fp, &p) || p.fp.kind != PL_NONE ||
		    check_sp(c->abi, &r->sp))
			return SFE_SKIP_PLT_SHAPE;
	}
	if (c->abi != CFI_ABI_AMD64 || pstart % 16 || e0->plt_k == 0 ||
	    e0->plt_k >= 16 || pstart >= end)
		return SFE_SKIP_PLT_SHAPE;
	if (first > 0 && pstart > fde->pc_begin) {
		sfe_skip s = convert_rows(c, fde, fdeidx, rows, first,
					  fde->pc_begin, pstart, oom);
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
	/* A stub shorter than K never reaches the second row; consumers
	 * (libsframe asserts it) want FRE starts within the function. */
	int nfres = e0->plt_k < end - pstart ? 2 : 1;
	for (int k = 0; k < nfres; k++) {
		size_t fi = (size_t)(fn - c->set->funcs);
		sfe_fre *f = new_fre(c);
		if (!f) {
			*oom = true;
			return SFE_SKIP_NONE;
		}
		fn = &c->set->funcs[fi];
		f->start = k ? e0->plt_k : 0;
		f->ndw = 1;
		f->dw[0] = k ? 16 : 8;
		fn->fre_count++;
	}
	return SFE_SKIP_NONE;
}

static int func_cmp(const void *a, const void *b)
{
	const sfe_func *x = a, *y = b;
	if (x->reloc.shndx != y->reloc.shndx)
		return x->reloc.shndx < y->reloc.shndx ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

e2s_err sfe_project(const cfi_table *t, sfe_set *out, e2s_diag *diag)
{
	pctx c;
	memset(out, 0, sizeof *out);
	memset(&c, 0, sizeof c);
	c.t = t;
	c.abi = t->abi;
	c.regs = cfi_abi_info(t->abi);
	c.set = out;
	out->abi = t->abi;
	out->big_endian = t->big_endian;
	out->nfdes = t->nfdes;
	out->fde_skip = calloc(t->nfdes ? t->nfdes : 1, 1);
	if (!out->fde_skip)
		goto oom;

	for (size_t i = 0; i < t->nfdes; i++) {
		const cfi_fde *fde = &t->fdes[i];
		sfe_skip s = SFE_SKIP_NONE;
		size_t save_f = c.gf.n, save_r = c.gr.n;
		bool oom = false;

		if (c.abi != CFI_ABI_AMD64 && c.abi != CFI_ABI_AARCH64 &&
		    c.abi != CFI_ABI_S390X)
			s = SFE_SKIP_UNSUPPORTED_ABI;
		else if (fde->status != E2S_ERR_OK || fde->cie >= t->ncies ||
			 t->cies[fde->cie].status != E2S_ERR_OK ||
			 (uint64_t)fde->row_first + fde->row_count > t->nrows)
			s = SFE_SKIP_BAD_CFI;
		else if (fde->pc_range == 0)
			s = SFE_SKIP_EMPTY;
		else if (fde->pc_range > UINT32_MAX ||
			 fde->pc_begin + fde->pc_range < fde->pc_begin)
			s = SFE_SKIP_TOO_LARGE;
		if (!s) {
			uint16_t shndx = fde->reloc.present ? fde->reloc.shndx : 0;
			int cl = claim_range(&c, shndx, fde->pc_begin,
					     fde->pc_begin + fde->pc_range);
			if (cl < 0)
				goto oom;
			if (cl == 0)
				s = SFE_SKIP_DUPLICATE;
		}
		if (!s) {
			const cfi_row *rows = t->rows + fde->row_first;
			size_t n = fde->row_count, plt = n;
			for (size_t k = 0; k < n; k++) {
				if (rows[k].cfa.kind == CFI_CFA_EXPR &&
				    rows[k].cfa.expr.shape == CFI_EXPR_PLT) {
					plt = k;
					break;
				}
			}
			if (plt < n)
				s = convert_plt(&c, fde, (uint32_t)i, rows, n, plt, &oom);
			else
				s = convert_rows(&c, fde, (uint32_t)i, rows, n,
						 fde->pc_begin,
						 fde->pc_begin + fde->pc_range, &oom);
			if (oom)
				goto oom;
		}
		if (s) {
			c.gf.n = save_f;
			c.gr.n = save_r;
		}
		out->fde_skip[i] = (uint8_t)s;
		out->counts[s]++;
	}
	out->nfuncs = c.gf.n;
	out->nfres = c.gr.n;
	/* Stable order: qsort is not stable, but starts never tie after the
	 * overlap check (each part of a split FDE starts later). */
	if (out->nfuncs > 1)
		qsort(out->funcs, out->nfuncs, sizeof *out->funcs, func_cmp);
	free(c.pr);
	free(c.claims);
	return E2S_ERR_OK;
oom:
	free(c.pr);
	free(c.claims);
	sfe_set_free(out);
	return e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, "projecting CFI rows");
}

void sfe_set_free(sfe_set *s)
{
	free(s->funcs);
	free(s->fres);
	free(s->fde_skip);
	memset(s, 0, sizeof *s);
}
