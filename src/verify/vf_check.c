/* The verifier's driver (see vf.h): per DWARF FDE, choose the check
 * points, unwind one frame from both sides at each, compare. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sframe/sfr_spec.h"
#include "vf_int.h"

/* Check points per DWARF function; beyond this a MASK FDE or a
 * PC-dependent DWARF rule is too large to check at every PC and the
 * function is reported, not passed. */
#define VF_MAX_POINTS (1u << 21)

typedef struct {
	vf_abi a;
	const cfi_section *sec;
	const cfi_table *t;
	const sfr_section *s;
	unsigned version;
	vf_index ix;
	vf_issue_cb cb;
	void *ctx;
	vf_counts *out;
	vf_walk w;
	uint64_t *pts;
	size_t npts, cap;
	uint32_t *sidx;   /* SFrame FDEs overlapping the current function */
	size_t ns, scap;
	bool *used;
	struct claim { uint32_t sec; uint64_t start, end; } *cl;
	size_t ncl, capcl;
} ck_t;

static void issue(ck_t *c, int kind, uint32_t fde, uint32_t shndx,
		  uint64_t pc, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void issue(ck_t *c, int kind, uint32_t fde, uint32_t shndx,
		  uint64_t pc, const char *fmt, ...)
{
	vf_issue is;
	va_list ap;
	switch (kind) {
	case VF_MISMATCH: c->out->mismatch++; break;
	case VF_MISSING: c->out->missing++; break;
	case VF_SKIPPED: c->out->skipped++; break;
	default: c->out->extra++; break;
	}
	if (!c->cb)
		return;
	memset(&is, 0, sizeof is);
	is.kind = kind;
	is.fde = fde;
	is.pc = pc;
	is.shndx = shndx;
	va_start(ap, fmt);
	vsnprintf(is.what, sizeof is.what, fmt, ap);
	va_end(ap);
	c->cb(c->ctx, &is);
}

/* First FDE in section order wins an overlap (as unwinders searching a
 * sorted table see only one). 1 claimed, 0 overlap, -1 out of memory. */
static int claim(ck_t *c, uint32_t sec, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = c->ncl;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct claim *m = &c->cl[mid];
		if (m->sec < sec || (m->sec == sec && m->start < start))
			lo = mid + 1;
		else
			hi = mid;
	}
	if ((lo > 0 && c->cl[lo - 1].sec == sec && c->cl[lo - 1].end > start) ||
	    (lo < c->ncl && c->cl[lo].sec == sec && c->cl[lo].start < end))
		return 0;
	if (!vf_room((void **)&c->cl, c->ncl, &c->capcl, sizeof *c->cl, 256))
		return -1;
	memmove(&c->cl[lo + 1], &c->cl[lo], (c->ncl - lo) * sizeof *c->cl);
	c->cl[lo] = (struct claim){sec, start, end};
	c->ncl++;
	return 1;
}

static bool add_pt(ck_t *c, uint64_t pc)
{
	if (!vf_room((void **)&c->pts, c->npts, &c->cap, sizeof *c->pts, 256))
		return false;
	c->pts[c->npts++] = pc;
	return true;
}

static int u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* SFrame FDEs overlapping [b, e) of section sec, by start. */
static bool overlapping(ck_t *c, uint32_t sec, uint64_t b, uint64_t e)
{
	const vf_index *ix = &c->ix;
	size_t lo = 0, hi = ix->n;
	c->ns = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const sfr_fde *m = &c->s->fdes[ix->order[mid]];
		if (m->shndx < sec || (m->shndx == sec && m->pc < b))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Earlier starts may still reach into [b, e). */
	while (lo > 0) {
		const sfr_fde *p = &c->s->fdes[ix->order[lo - 1]];
		if (p->shndx != sec || p->pc + p->size <= b)
			break;
		lo--;
	}
	for (size_t k = lo; k < ix->n; k++) {
		const sfr_fde *f = &c->s->fdes[ix->order[k]];
		if (f->shndx != sec || f->pc >= e)
			break;
		if (f->pc + f->size <= b)
			continue;
		if (!vf_room((void **)&c->sidx, c->ns, &c->scap,
			     sizeof *c->sidx, 16))
			return false;
		c->sidx[c->ns++] = ix->order[k];
		c->used[ix->order[k]] = true;
	}
	return true;
}

static bool covered(const ck_t *c, uint64_t lo, uint64_t hi)
{
	for (size_t k = 0; k < c->ns; k++) {
		const sfr_fde *f = &c->s->fdes[c->sidx[k]];
		if (f->pc < hi && f->pc + f->size > lo)
			return true;
	}
	return false;
}

/* Check points of one function; false on OOM, *big when over budget. */
static bool gather(ck_t *c, const cfi_fde *fde, uint64_t b, uint64_t e,
		   bool *big)
{
	c->npts = 0;
	*big = false;
	for (size_t r = 0; r < c->w.nrows; r++) {
		const vf_row *row = &c->w.rows[r];
		if (row->start >= e || row->end <= b)
			continue;
		if (!add_pt(c, row->start))
			return false;
		/* A rule reading the PC (AMD64 register 16) may change at
		 * every instruction: check each PC SFrame covers. */
		vf_eval ev = {&c->a, c->t->data, c->t->size, c->t->big_endian,
			      c->t->cies[fde->cie].addr_size, row->start, false};
		vf_frame f;
		vf_dwarf_frame(&c->a, &ev, &c->w, row, &c->t->cies[fde->cie], &f);
		if (ev.used_pc && covered(c, row->start, row->end)) {
			if (row->end - row->start > VF_MAX_POINTS) {
				*big = true;
				return true;
			}
			for (uint64_t pc = row->start + 1; pc < row->end; pc++)
				if (!add_pt(c, pc))
					return false;
		}
	}
	for (size_t k = 0; k < c->ns; k++) {
		const sfr_fde *sf = &c->s->fdes[c->sidx[k]];
		uint64_t lo = sf->pc < b ? b : sf->pc;
		uint64_t hi = sf->pc + sf->size > e ? e : sf->pc + sf->size;
		if (!add_pt(c, lo) || (hi < e && !add_pt(c, hi)))
			return false;
		if (sfr_info_pctype(sf->info) == SFR_PCTYPE_MASK) {
			if (hi - lo > VF_MAX_POINTS) {
				*big = true;
				return true;
			}
			for (uint64_t pc = lo + 1; pc < hi; pc++)
				if (!add_pt(c, pc))
					return false;
			continue;
		}
		for (uint32_t j = 0; j < sf->nfres; j++) {
			uint64_t pc = sf->pc + c->s->fres[sf->fre_first + j].start;
			if (pc >= lo && pc < hi && !add_pt(c, pc))
				return false;
		}
	}
	if (c->npts > 4 * (size_t)VF_MAX_POINTS) {
		*big = true;
		return true;
	}
	qsort(c->pts, c->npts, sizeof *c->pts, u64_cmp);
	size_t n = 0;
	for (size_t i = 0; i < c->npts; i++)
		if (i == 0 || c->pts[i] != c->pts[n - 1])
			c->pts[n++] = c->pts[i];
	c->npts = n;
	return true;
}

static const char *sign_name(uint8_t s)
{
	static const char *const n[] = {"unsigned", "signed (key A)",
		"signed (key B)", "unknown", "signed with PC (PAuth_LR)"};
	return s < 5 ? n[s] : "?";
}

/* Equal caller frames? Otherwise *why names the first difference. */
static bool same_frame(const vf_abi *a, const vf_frame *d, const vf_frame *s,
		       char *why, size_t len)
{
	char x[80], y[80];
	if (d->signal != s->signal) {
		snprintf(why, len, "signal-frame flag: DWARF %d, SFrame %d",
			 d->signal, s->signal);
		return false;
	}
	if (d->outermost != s->outermost) {
		snprintf(why, len, "RA undefined (outermost frame): DWARF %s, SFrame %s",
			 d->outermost ? "yes" : "no", s->outermost ? "yes" : "no");
		return false;
	}
	if (d->outermost)
		return true;
	const struct { const char *name; const vf_val *dv, *sv; } v[] = {
		{"CFA", &d->cfa, &s->cfa},
		{"caller SP", &d->sp, &s->sp},
		{"return address", &d->pc, &s->pc},
		{"caller FP", &d->fp, &s->fp},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		if (vf_eq(v[i].dv, v[i].sv))
			continue;
		vf_str(v[i].dv, a->abi, x, sizeof x);
		vf_str(v[i].sv, a->abi, y, sizeof y);
		snprintf(why, len, "%s: DWARF %s, SFrame %s", v[i].name, x, y);
		return false;
	}
	if (d->sign != s->sign) {
		snprintf(why, len, "return address %s in DWARF, %s in SFrame",
			 sign_name(d->sign), sign_name(s->sign));
		return false;
	}
	return true;
}

/* One usable DWARF FDE, walked into c->w. false only on OOM. */
static bool check_fde(ck_t *c, uint32_t i, uint32_t sec)
{
	const cfi_fde *fde = &c->t->fdes[i];
	const cfi_cie *cie = &c->t->cies[fde->cie];
	uint64_t b = fde->pc_begin, e = b + fde->pc_range;
	char why[200];
	if (!overlapping(c, sec, b, e))
		return false;
	for (size_t k = 0; k < c->ns; k++) {
		const sfr_fde *sf = &c->s->fdes[c->sidx[k]];
		if (sf->pc < b || sf->pc + sf->size > e) {
			issue(c, VF_MISMATCH, i, sec, sf->pc, ".sframe function "
			      "[0x%" PRIx64 ",0x%" PRIx64 ") exceeds DWARF [0x%"
			      PRIx64 ",0x%" PRIx64 ")", sf->pc, sf->pc + sf->size, b, e);
			return true;
		}
		if (k && sf->pc < c->s->fdes[c->sidx[k - 1]].pc +
					  c->s->fdes[c->sidx[k - 1]].size) {
			issue(c, VF_MISMATCH, i, sec, sf->pc, "overlapping .sframe functions");
			return true;
		}
		if (!vf_fde_sane(c->s, sf, why, sizeof why)) {
			issue(c, VF_MISMATCH, i, sec, sf->pc, "%s", why);
			return true;
		}
	}
	bool big;
	if (!gather(c, fde, b, e, &big))
		return false;
	if (big) {
		issue(c, VF_MISMATCH, i, sec, b, "too many PCs to check one by one "
		      "(MASK FDE or PC-dependent CFA over more than %u bytes)",
		      VF_MAX_POINTS);
		return true;
	}
	bool any_fre = false, all_expr = true;
	char skip_why[200] = "";
	uint64_t skip_pc = b;
	vf_eval ev = {&c->a, c->t->data, c->t->size, c->t->big_endian,
		      cie->addr_size, 0, false};
	for (size_t p = 0; p < c->npts; p++) {
		uint64_t pc = c->pts[p];
		const vf_row *row = vf_row_at(&c->w, pc);
		if (!row)
			continue;
		vf_frame df, sf;
		ev.pc = pc;
		vf_dwarf_frame(&c->a, &ev, &c->w, row, cie, &df);
		bool expr = vf_expressible(&c->a, c->version, &df, why, sizeof why);
		long fi = vf_find_fde(&c->ix, sec, pc);
		long ri = fi < 0 ? -1 : vf_find_fre(c->s, &c->s->fdes[fi], pc);
		c->out->points++;
		/* An outermost row may also be said by having no FRE: an FDE
		 * without FREs (V3 spec 1.2), and in V2 any PC without one,
		 * where glibc's V2 walker ends the trace (it cannot read V2
		 * erratum 2's FRE without data words). */
		if (ri < 0 && df.outermost &&
		    (c->version == SFR_VERSION_2 || (fi >= 0 && c->s->fdes[fi].nfres == 0))) {
			any_fre = true;
			continue;
		}
		if (ri < 0) {
			if (!expr && all_expr) {
				all_expr = false;
				snprintf(skip_why, sizeof skip_why, "%s", why);
				skip_pc = pc;
			}
			continue;
		}
		any_fre = true;
		if (!expr) {
			issue(c, VF_MISMATCH, i, sec, pc, "an FRE covers a row "
			      "SFrame cannot express: %s", why);
			return true;
		}
		if (!vf_sframe_frame(&c->a, c->s, &c->s->fdes[fi], &c->s->fres[ri],
				     &sf, why, sizeof why) ||
		    !same_frame(&c->a, &df, &sf, why, sizeof why)) {
			issue(c, VF_MISMATCH, i, sec, pc, "%s", why);
			return true;
		}
	}
	if (any_fre)
		c->out->match++;
	else if (all_expr)
		issue(c, VF_MISSING, i, sec, b, "expressible in SFrame but absent");
	else
		issue(c, VF_SKIPPED, i, sec, skip_pc, "%s", skip_why);
	return true;
}

static const char *unusable(const cfi_table *t, const cfi_fde *fde)
{
	if (fde->status != E2S_ERR_OK || fde->cie >= t->ncies)
		return e2s_strerror(fde->status ? fde->status : E2S_ERR_BAD_CIE_ID);
	if (t->cies[fde->cie].status != E2S_ERR_OK)
		return e2s_strerror(t->cies[fde->cie].status);
	if (fde->pc_range == 0)
		return "empty address range";
	if (fde->pc_range > UINT32_MAX || fde->pc_begin + fde->pc_range < fde->pc_begin)
		return "address range too large for SFrame";
	if (t->relocatable && !cfi_fde_reloc(t, fde).present)
		return "function start without a relocation";
	return NULL;
}

e2s_err vf_verify(const cfi_section *sec, const cfi_table *t,
		  const sfr_section *s, vf_issue_cb cb, void *ctx,
		  vf_counts *out, e2s_diag *diag)
{
	ck_t c;
	e2s_err err = E2S_ERR_OK;
	memset(out, 0, sizeof *out);
	memset(&c, 0, sizeof c);
	if (!vf_abi_init(t->abi, &c.a))
		return e2s_fail(diag, E2S_ERR_UNSUPPORTED_MACHINE, NULL, 0,
				"SFrame defines no ABI for this machine");
	if (t->relocatable != s->relocatable)
		return e2s_fail(diag, E2S_ERR_USAGE, NULL, 0,
				"CFI from a %s file, .sframe from a %s one",
				t->relocatable ? "relocatable" : "linked",
				s->relocatable ? "relocatable" : "linked");
	c.sec = sec;
	c.t = t;
	c.s = s;
	c.cb = cb;
	c.ctx = ctx;
	c.out = out;
	c.version = SFR_VERSION_3;
	for (size_t k = 0; k < s->nblocks; k++)
		if (s->blocks[k].version < c.version)
			c.version = s->blocks[k].version;
	c.used = calloc(s->nfdes ? s->nfdes : 1, sizeof *c.used);
	if (!c.used || !vf_index_build(s, &c.ix)) {
		err = e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);
		goto done;
	}
	for (size_t i = 0; i < t->nfdes; i++) {
		const cfi_fde *fde = &t->fdes[i];
		uint32_t sec_ix = t->relocatable ? cfi_fde_reloc(t, fde).shndx : 0;
		const char *why = unusable(t, fde);
		out->functions++;
		/* CFI that cannot be read claims no range (an unwinder has
		 * no rule from it): later FDEs may describe those PCs. */
		if (!why && !vf_walk_fde(&c.a, sec, t, fde, &c.w))
			why = c.w.err;
		if (!why) {
			int cl = claim(&c, sec_ix, fde->pc_begin,
				       fde->pc_begin + fde->pc_range);
			if (cl < 0) {
				err = e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);
				goto done;
			}
			if (cl == 0)
				why = "overlaps an earlier FDE";
		}
		if (why) {
			issue(&c, VF_SKIPPED, (uint32_t)i, sec_ix, fde->pc_begin,
			      "%s", why);
			continue;
		}
		if (!check_fde(&c, (uint32_t)i, sec_ix)) {
			err = e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);
			goto done;
		}
	}
	for (size_t k = 0; k < s->nfdes; k++)
		if (!c.used[k])
			issue(&c, VF_EXTRA, 0, s->fdes[k].shndx, s->fdes[k].pc,
			      ".sframe function of %u bytes without a DWARF FDE",
			      s->fdes[k].size);
done:
	vf_walk_free(&c.w);
	vf_index_free(&c.ix);
	free(c.used);
	free(c.pts);
	free(c.sidx);
	free(c.cl);
	return err;
}
