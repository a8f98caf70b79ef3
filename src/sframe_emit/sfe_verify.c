/* --verify: DWARF rules vs the rules the .sframe yields (see header).
 * DWARF rules are mapped straight to the reader's symbolic form (sfr_loc)
 * and compared field by field; nothing here knows how FREs are built. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sfe_verify.h"
#include "sframe_fmt.h"

/* DWARF register rule -> symbolic location; false if no SFrame rule can
 * mean the same thing. own_reg: the column's own register. */
static bool dwarf_loc(const cfi_rule *r, uint16_t own_reg, sfr_loc *l)
{
	memset(l, 0, sizeof *l);
	l->kind = SFR_LOC_RULE;
	switch (r->kind) {
	case CFI_RULE_UNSPEC:
	case CFI_RULE_SAME:
		l->kind = SFR_LOC_UNCHANGED;
		return true;
	case CFI_RULE_OFFSET:
		l->base_cfa = true;
		l->deref = true;
		l->off = r->off;
		return true;
	case CFI_RULE_VAL_OFFSET:
		l->base_cfa = true;
		l->off = r->off;
		return true;
	case CFI_RULE_REGISTER:
		if (r->reg == own_reg) {
			l->kind = SFR_LOC_UNCHANGED;
			return true;
		}
		l->reg = r->reg;
		return true;
	case CFI_RULE_EXPR:
	case CFI_RULE_VAL_EXPR:
		if (r->expr.shape != CFI_EXPR_BREG)
			return false;
		l->reg = r->expr.reg;
		l->off = r->expr.off;
		l->deref = r->kind == CFI_RULE_EXPR;
		return true;
	default:
		return false;
	}
}

static bool loc_eq(const sfr_loc *a, const sfr_loc *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == SFR_LOC_UNCHANGED)
		return true;
	return a->base_cfa == b->base_cfa && a->deref == b->deref &&
	       a->off == b->off && (a->base_cfa || a->reg == b->reg);
}

static void loc_text(const sfr_loc *l, char *buf, size_t len)
{
	if (l->kind == SFR_LOC_UNCHANGED)
		snprintf(buf, len, "unchanged");
	else if (l->base_cfa)
		snprintf(buf, len, "%sCFA%+" PRId64 "%s", l->deref ? "*(" : "",
			 l->off, l->deref ? ")" : "");
	else
		snprintf(buf, len, "%sr%u%+" PRId64 "%s", l->deref ? "*(" : "",
			 l->reg, l->off, l->deref ? ")" : "");
}

/* The CFA DWARF gives at pc: reg + off, dereferenced or not. */
static bool dwarf_cfa(const cfi_row *row, uint64_t pc, uint16_t *reg,
		      int64_t *off, bool *deref)
{
	*deref = false;
	if (row->cfa.kind == CFI_CFA_REG_OFF) {
		*reg = row->cfa.reg;
		*off = row->cfa.off;
		return true;
	}
	if (row->cfa.kind != CFI_CFA_EXPR)
		return false;
	switch (row->cfa.expr.shape) {
	case CFI_EXPR_BREG_DEREF:
		*deref = true;
		/* fall through */
	case CFI_EXPR_BREG:
		*reg = row->cfa.expr.reg;
		*off = row->cfa.expr.off;
		return true;
	case CFI_EXPR_PLT:
		/* rsp + 8 + ((rip & 15) >= K) << 3, evaluated at this pc */
		*reg = row->cfa.expr.reg;
		*off = row->cfa.expr.off + ((pc & 15) >= row->cfa.expr.plt_k ? 8 : 0);
		return true;
	default:
		return false;
	}
}

/* Caller SP per DWARF agrees with SP = CFA + sp_off: no rule (the CFA
 * convention), the explicit value rule, or a saved copy on the stack
 * (s390x stmg saves r15 itself; the slot holds the caller SP). On s390x
 * also a copy in a register: GCC's leaf functions park r15 in an FPR,
 * and that copy is the caller SP, i.e. CFA - 160 by the ABI's CFA. */
static bool sp_ok(const cfi_rule *r, int64_t sp_off, cfi_abi abi)
{
	return r->kind == CFI_RULE_UNSPEC || r->kind == CFI_RULE_OFFSET ||
	       (r->kind == CFI_RULE_VAL_OFFSET && r->off == sp_off) ||
	       (r->kind == CFI_RULE_REGISTER && abi == CFI_ABI_S390X);
}

typedef struct {
	cfi_abi abi;
	const cfi_abi_regs *regs;
	int64_t sp_off; /* caller SP - CFA */
	bool v2;        /* the .sframe is SFrame V2: no flexible FDEs */
} vabi;

/* Independent judgement of whether SFrame V3 can express a row, used only
 * to tell "missing" from "skipped". */
static bool row_expressible(const vabi *v, const cfi_row *row)
{
	bool flex_abi = v->abi == CFI_ABI_AMD64 || v->abi == CFI_ABI_S390X;
	sfr_loc ra, fp;
	uint16_t reg;
	int64_t off;
	bool deref;
	if (row->ra.kind == CFI_RULE_UNDEFINED)
		return true;
	if (!dwarf_cfa(row, 0, &reg, &off, &deref))
		return false;
	if (row->cfa.kind == CFI_CFA_EXPR && row->cfa.expr.shape == CFI_EXPR_PLT)
		return v->abi == CFI_ABI_AMD64 && row->cfa.expr.reg == v->regs->sp &&
		       row->cfa.expr.off == 8 && row->cfa.expr.plt_k > 0 &&
		       row->cfa.expr.plt_k < 16;
	bool need_flex = deref || (reg != v->regs->sp && reg != v->regs->fp);
	if (v->abi == CFI_ABI_S390X) {
		if ((off - 160) % 8)
			return false;
		off = (off - 160) / 8;
	}
	if (off < INT32_MIN || off > INT32_MAX)
		return false;
	if (!sp_ok(&row->sp, v->sp_off, v->abi))
		return false;
	if (!dwarf_loc(&row->ra, v->regs->ra, &ra) || !dwarf_loc(&row->fp, v->regs->fp, &fp))
		return false;
	/* value = CFA + off would need control word 0 (padding) */
	if ((ra.kind == SFR_LOC_RULE && ra.base_cfa && !ra.deref) ||
	    (fp.kind == SFR_LOC_RULE && fp.base_cfa && !fp.deref))
		return false;
	if (ra.off < INT32_MIN || ra.off > INT32_MAX || fp.off < INT32_MIN ||
	    fp.off > INT32_MAX)
		return false;
	bool ra_stack = ra.kind == SFR_LOC_RULE && ra.base_cfa;
	bool fp_stack = fp.kind == SFR_LOC_RULE && fp.base_cfa;
	switch (v->abi) {
	case CFI_ABI_AMD64:
		if (ra.kind == SFR_LOC_UNCHANGED)
			return false;
		if (!(ra_stack && ra.off == -8))
			need_flex = true;
		if (fp.kind == SFR_LOC_RULE && !fp_stack)
			need_flex = true;
		break;
	case CFI_ABI_AARCH64:
		if ((ra.kind == SFR_LOC_RULE && !ra_stack) ||
		    (fp.kind == SFR_LOC_RULE && !fp_stack) || (fp_stack && !ra_stack))
			return false;
		break;
	case CFI_ABI_S390X:
		if ((ra.kind == SFR_LOC_RULE && !ra_stack) || (ra_stack && ra.off == 0) ||
		    (fp.kind == SFR_LOC_RULE && !fp_stack))
			need_flex = true;
		break;
	default:
		return false;
	}
	if (need_flex && v->v2) {
		/* V2 s390x: CFA on SP/FP, RA/FP on the stack or in a register
		 * (encoded register number); nothing else. */
		bool plain_ra = ra.kind == SFR_LOC_UNCHANGED || ra_stack ||
				(!ra.deref && ra.off == 0);
		bool plain_fp = fp.kind == SFR_LOC_UNCHANGED || fp_stack ||
				(!fp.deref && fp.off == 0);
		return v->abi == CFI_ABI_S390X && !deref &&
		       (reg == v->regs->sp || reg == v->regs->fp) && plain_ra &&
		       plain_fp && !(ra_stack && ra.off == 0);
	}
	return !need_flex || flex_abi;
}

/* The section an FDE's addresses are in: 0 for linked files. */
static uint32_t fde_sec(const cfi_table *t, const cfi_fde *fde)
{
	return t->relocatable ? fde->reloc.shndx : 0;
}

/* Compare at one pc; fills why and returns false on a difference. */
static bool compare_at(const vabi *v, const sfr_section *s, const cfi_table *t,
		       const cfi_fde *fde, const cfi_row *row, uint64_t pc,
		       char *why, size_t len)
{
	size_t fi, ri;
	sfr_rules ru;
	const cfi_cie *cie = &t->cies[fde->cie];
	if (!sfr_find_fre_sec(s, fde_sec(t, fde), pc, &fi, &ri)) {
		snprintf(why, len, "no FRE covers this pc");
		return false;
	}
	const sfr_fde *sf = &s->fdes[fi];
	if (sfr_recover(s, sf, &s->fres[ri], &ru, NULL) != E2S_ERR_OK) {
		snprintf(why, len, "FRE has an undefined word layout");
		return false;
	}
	if (sf->signal != cie->signal_frame) {
		snprintf(why, len, "signal flag %d, DWARF %d", sf->signal,
			 cie->signal_frame);
		return false;
	}
	if (v->abi == CFI_ABI_AARCH64 && sf->pauth_b != cie->pauth_b_key) {
		snprintf(why, len, "pauth key B %d, DWARF %d", sf->pauth_b,
			 cie->pauth_b_key);
		return false;
	}
	bool undef = row->ra.kind == CFI_RULE_UNDEFINED;
	if (undef != ru.outermost) {
		snprintf(why, len, "RA undefined: sframe %d, DWARF %d",
			 ru.outermost, undef);
		return false;
	}
	if (undef)
		return true;
	uint16_t reg;
	int64_t off;
	bool deref;
	if (!dwarf_cfa(row, pc, &reg, &off, &deref)) {
		snprintf(why, len, "DWARF CFA has no SFrame form");
		return false;
	}
	if (reg != ru.cfa_reg || off != ru.cfa_off || deref != ru.cfa_deref) {
		snprintf(why, len, "CFA %s r%u%+" PRId64 "%s, DWARF %s r%u%+" PRId64 "%s",
			 ru.cfa_deref ? "*(" : "", ru.cfa_reg, ru.cfa_off,
			 ru.cfa_deref ? ")" : "", deref ? "*(" : "", reg, off,
			 deref ? ")" : "");
		return false;
	}
	if (!sp_ok(&row->sp, ru.sp_off, v->abi)) {
		snprintf(why, len, "DWARF SP rule is not CFA%+" PRId64, ru.sp_off);
		return false;
	}
	sfr_loc d;
	char a[64], b[64];
	if (!dwarf_loc(&row->ra, v->regs->ra, &d) || !loc_eq(&d, &ru.ra)) {
		loc_text(&ru.ra, a, sizeof a);
		if (dwarf_loc(&row->ra, v->regs->ra, &d))
			loc_text(&d, b, sizeof b);
		else
			snprintf(b, sizeof b, "(no SFrame form)");
		snprintf(why, len, "RA %s, DWARF %s", a, b);
		return false;
	}
	if (!dwarf_loc(&row->fp, v->regs->fp, &d) || !loc_eq(&d, &ru.fp)) {
		loc_text(&ru.fp, a, sizeof a);
		if (dwarf_loc(&row->fp, v->regs->fp, &d))
			loc_text(&d, b, sizeof b);
		else
			snprintf(b, sizeof b, "(no SFrame form)");
		snprintf(why, len, "FP %s, DWARF %s", a, b);
		return false;
	}
	bool mangled = v->abi == CFI_ABI_AARCH64 && row->ra_mangled;
	if (mangled != ru.mangled) {
		snprintf(why, len, "RA signed %d, DWARF %d", ru.mangled, mangled);
		return false;
	}
	return true;
}

static const cfi_row *row_at(const cfi_table *t, const cfi_fde *fde, uint64_t pc)
{
	if (!t->rows || !fde->row_count)
		return NULL;
	const cfi_row *rows = t->rows + fde->row_first;
	size_t lo = 0, hi = fde->row_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rows[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* Several rows may share a start (empty rows): the last one wins. */
	return &rows[lo - 1];
}

struct claim { uint32_t sec; uint64_t start, end; };

/* Record [start, end) of section sec; 0 if it overlaps an earlier one. */
static int claim(struct claim **cl, size_t *n, size_t *cap, uint32_t sec,
		 uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = *n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct claim *m = &(*cl)[mid];
		if (m->sec < sec || (m->sec == sec && m->start < start))
			lo = mid + 1;
		else
			hi = mid;
	}
	if ((lo > 0 && (*cl)[lo - 1].sec == sec && (*cl)[lo - 1].end > start) ||
	    (lo < *n && (*cl)[lo].sec == sec && (*cl)[lo].start < end))
		return 0;
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct claim *p = realloc(*cl, nc * sizeof *p);
		if (!p)
			return -1;
		*cl = p;
		*cap = nc;
	}
	memmove(&(*cl)[lo + 1], &(*cl)[lo], (*n - lo) * sizeof **cl);
	(*cl)[lo] = (struct claim){sec, start, end};
	(*n)++;
	return 1;
}

/* Check every sample point of one DWARF FDE. */
static bool check_fde(const vabi *v, const cfi_table *t, const sfr_section *s,
		      const cfi_fde *fde, const size_t *sidx, size_t ns,
		      uint64_t *bad_pc, char *why, size_t len)
{
	uint64_t b = fde->pc_begin, e = fde->pc_begin + fde->pc_range;
	/* The .sframe functions must lie inside the DWARF range. */
	for (size_t k = 0; k < ns; k++) {
		const sfr_fde *sf = &s->fdes[sidx[k]];
		if (sf->pc < b || sf->pc + sf->size > e) {
			*bad_pc = sf->pc;
			snprintf(why, len, ".sframe function [0x%" PRIx64 ",0x%" PRIx64
				 ") exceeds DWARF [0x%" PRIx64 ",0x%" PRIx64 ")",
				 sf->pc, sf->pc + sf->size, b, e);
			return false;
		}
	}
	/* DWARF row starts (and the FDE start). */
	for (uint32_t r = 0; r <= fde->row_count; r++) {
		uint64_t pc = r == fde->row_count ? b : t->rows[fde->row_first + r].start;
		if (pc < b || pc >= e)
			continue;
		const cfi_row *row = row_at(t, fde, pc);
		if (!row || row->end <= pc)
			continue;
		if (!compare_at(v, s, t, fde, row, pc, why, len)) {
			*bad_pc = pc;
			return false;
		}
	}
	/* FRE starts; MASK FREs repeat in every block. Both sides are
	 * periodic inside a DWARF row (SFrame by construction, the PLT
	 * expression in rip & 15), so the blocks holding each row's first and
	 * last PC and the one after its first cover every case: bounded by
	 * the row count, not the function size (a hostile size of 2^31 would
	 * otherwise mean 10^8 comparisons). */
	for (size_t k = 0; k < ns; k++) {
		const sfr_fde *sf = &s->fdes[sidx[k]];
		uint64_t step = sf->pc_type == SF_FDE_PCTYPE_MASK ? sf->rep_size : 0;
		uint32_t nblk = step ? 3 * fde->row_count + 2 : 1;
		for (uint32_t bi = 0; bi < nblk; bi++) {
			uint64_t blk = 0;
			if (step && bi == 1) {
				blk = (sf->size - 1) / step * step;
			} else if (step && bi >= 2) {
				const cfi_row *rw = &t->rows[fde->row_first + (bi - 2) / 3];
				uint64_t at = (bi - 2) % 3 == 2 ? rw->end - 1 : rw->start;
				if (at < sf->pc || at - sf->pc >= sf->size)
					continue;
				blk = (at - sf->pc) / step * step;
				if ((bi - 2) % 3 == 1)
					blk += step;
				if (blk >= sf->size)
					continue;
			}
			for (uint32_t j = 0; j < sf->nfres; j++) {
				uint64_t pc = sf->pc + blk + s->fres[sf->fre_first + j].start;
				if (pc >= sf->pc + sf->size)
					continue;
				const cfi_row *row = row_at(t, fde, pc);
				if (!row) {
					*bad_pc = pc;
					snprintf(why, len, "FRE before the first DWARF row");
					return false;
				}
				if (!compare_at(v, s, t, fde, row, pc, why, len)) {
					*bad_pc = pc;
					return false;
				}
			}
		}
	}
	return true;
}

e2s_err sfe_verify(const cfi_table *t, const sfr_section *s,
		   sfe_verify_cb cb, void *ctx, sfe_verify_counts *out,
		   e2s_diag *diag)
{
	vabi v;
	struct claim *cl = NULL;
	size_t ncl = 0, capcl = 0;
	bool *used = NULL;
	size_t *sidx = NULL, scap = 0;
	e2s_err err = E2S_ERR_OK;

	memset(out, 0, sizeof *out);
	if (t->relocatable != s->relocatable)
		return e2s_fail(diag, E2S_ERR_USAGE, NULL, 0,
				"CFI from a %s file, .sframe from a %s one",
				t->relocatable ? "relocatable" : "linked",
				s->relocatable ? "relocatable" : "linked");
	v.abi = t->abi;
	v.regs = cfi_abi_info(t->abi);
	v.sp_off = t->abi == CFI_ABI_S390X ? SF_S390X_SP_VAL_OFFSET : 0;
	v.v2 = s->nblocks > 0;
	for (size_t k = 0; k < s->nblocks; k++)
		if (s->blocks[k].version != SF_VERSION_2)
			v.v2 = false;
	used = calloc(s->nfdes ? s->nfdes : 1, sizeof *used);
	if (!used)
		return e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);

	for (size_t i = 0; i < t->nfdes; i++) {
		const cfi_fde *fde = &t->fdes[i];
		sfe_verify_issue is;
		bool usable = fde->status == E2S_ERR_OK && fde->cie < t->ncies &&
			      t->cies[fde->cie].status == E2S_ERR_OK &&
			      fde->pc_range > 0 && fde->pc_range <= UINT32_MAX &&
			      (!t->relocatable || fde->reloc.present);
		uint64_t b = fde->pc_begin, e = b + fde->pc_range;
		uint32_t sec = fde_sec(t, fde);
		out->functions++;
		if (usable) {
			int c = claim(&cl, &ncl, &capcl, sec, b, e);
			if (c < 0) {
				err = e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);
				goto out;
			}
			usable = c > 0; /* later duplicates: skipped */
		}
		/* .sframe functions overlapping [b, e) of section sec */
		size_t ns = 0, lo = 0, hi = s->nfdes;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const sfr_fde *m = &s->fdes[s->by_pc[mid]];
			if (m->shndx < sec || (m->shndx == sec && m->pc <= b))
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = lo ? lo - 1 : 0; usable && k < s->nfdes; k++) {
			const sfr_fde *sf = &s->fdes[s->by_pc[k]];
			if (sf->shndx > sec || (sf->shndx == sec && sf->pc >= e))
				break;
			if (sf->shndx < sec || sf->pc + sf->size <= b)
				continue;
			if (ns == scap) {
				size_t nc = scap ? scap * 2 : 16;
				size_t *p = realloc(sidx, nc * sizeof *p);
				if (!p) {
					err = e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);
					goto out;
				}
				sidx = p;
				scap = nc;
			}
			sidx[ns++] = s->by_pc[k];
			used[s->by_pc[k]] = true;
		}
		memset(&is, 0, sizeof is);
		is.fde = (uint32_t)i;
		is.pc = b;
		is.shndx = sec;
		if (!usable) {
			out->skipped++;
			continue;
		}
		if (ns == 0) {
			/* V2 has no signal-frame bit */
			bool expr = fde->row_count > 0 &&
				    !(v.v2 && t->cies[fde->cie].signal_frame);
			for (uint32_t r = 0; expr && r < fde->row_count; r++) {
				const cfi_row *row = &t->rows[fde->row_first + r];
				if (row->end > row->start &&
				    !row_expressible(&v, row))
					expr = false;
			}
			if (expr) {
				out->missing++;
				is.missing = true;
				snprintf(is.what, sizeof is.what,
					 "expressible in SFrame but absent");
				if (cb)
					cb(ctx, &is);
			} else {
				out->skipped++;
			}
			continue;
		}
		if (check_fde(&v, t, s, fde, sidx, ns, &is.pc, is.what, sizeof is.what)) {
			out->match++;
		} else {
			out->mismatch++;
			if (cb)
				cb(ctx, &is);
		}
	}
	for (size_t k = 0; k < s->nfdes; k++) {
		if (used[k])
			continue;
		sfe_verify_issue is;
		memset(&is, 0, sizeof is);
		is.extra = true;
		is.pc = s->fdes[k].pc;
		is.shndx = s->fdes[k].shndx;
		snprintf(is.what, sizeof is.what,
			 ".sframe function of %u bytes without a DWARF FDE",
			 s->fdes[k].size);
		out->extra++;
		if (cb)
			cb(ctx, &is);
	}
out:
	free(cl);
	free(used);
	free(sidx);
	return err;
}
