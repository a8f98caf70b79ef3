/* The FRE builder: an FDE's projected rows (conv_project.c) become its
 * functions and their FREs, as the rows come; identical consecutive
 * FREs merge. Each function's FRE data is written once (sfe_put_fres)
 * when its FDE ends. */
#include <string.h>

#include "conv_int.h"

/* conv_new_func with no room: grow, then again. Out of line, so that
 * the usual call, with room, makes no call and saves no registers. */
static E2S_OUT_OF_LINE sfe_func *new_func_grow(conv_pctx *c, const cfi_fde *fde,
					      uint32_t fdeidx, uint64_t start,
					      uint64_t size)
{
	if (!conv_grow_set(c->set, (void **)&c->set->funcs, &c->gf, sizeof(sfe_func),
			   c->gf.n + 1))
		return NULL;
	return conv_new_func(c, fde, fdeidx, start, size);
}

sfe_func *conv_new_func(conv_pctx *c, const cfi_fde *fde, uint32_t fdeidx,
		       uint64_t start, uint64_t size)
{
	if (c->gf.n >= c->gf.cap)
		return new_func_grow(c, fde, fdeidx, start, size);
	sfe_func *fn = &c->set->funcs[c->gf.n++];
	memset(fn, 0, sizeof *fn);
	const cfi_cie *cie = &c->t->cies[fde->cie];
	fn->start = start;
	fn->size = (uint32_t)size;
	fn->fde_type = SF_FDE_TYPE_DEFAULT;
	fn->pc_type = SF_FDE_PCTYPE_INC;
	fn->signal = cie->signal_frame;
	fn->pauth_b = c->abi->ra_sign != ABI_NO_REG && cie->pauth_b_key;
	fn->enc_off = (uint32_t)c->gr.n;
	fn->src_fde = fdeidx;
	fn->shndx = cfi_fde_reloc(c->t, fde).shndx;
	return fn;
}

/* The slot of the next FRE, with room for n more (built in place, then
 * kept); NULL on OOM. */
static sfe_fre *fre_slots(conv_pctx *c, size_t n)
{
	if (!conv_grow((void **)&c->fres, &c->gr, sizeof(sfe_fre), c->gr.n + n))
		return NULL;
	return &c->fres[c->gr.n];
}

/* Split functions with more FREs than sfda_func_num_fres holds into
 * consecutive FDEs, each starting at its first FRE. false on OOM. */
static bool split_func(conv_pctx *c, const cfi_fde *fde, uint32_t fdeidx,
		       size_t fi)
{
	while (c->set->funcs[fi].fre_count > CONV_MAX_FRES) {
		sfe_func *cur = &c->set->funcs[fi];
		uint32_t first = cur->enc_off + CONV_MAX_FRES;
		uint32_t rest = cur->fre_count - CONV_MAX_FRES;
		uint32_t delta = c->fres[first].start;
		uint64_t total = cur->size;
		cur->fre_count = CONV_MAX_FRES;
		cur->size = delta;
		sfe_func *nf = conv_new_func(c, fde, fdeidx, cur->start + delta,
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

/* The FRE of projected row pa, built after the FDE's FREs so far
 * (c->fres, room for it made): a data word that does not fit is
 * remembered (the first one), not built. */
static inline void put_fre(conv_pctx *c, const conv_prow_at *pa)
{
	conv_fdeproj *f = &c->f;
	if (f->word_skip)
		return; /* no function: no more FREs needed */
	sfe_fre *fr = &c->fres[f->nfre];
	fr->start = conv_fre_start(f, pa->start);
	conv_skip word = conv_rule_fre(c->abi, f->flex, &f->full[pa->base],
				     pa->cfa_off, fr);
	if (word) {
		f->word_skip = word;
		return;
	}
	conv_fre_keep(c->fres, &f->nfre);
}

bool conv_add_fre(conv_pctx *c, const conv_prow_at *pa)
{
	if (!conv_grow((void **)&c->fres, &c->gr, sizeof(sfe_fre), c->f.nfre + 1))
		return false;
	put_fre(c, pa);
	return true;
}

bool conv_rebuild_fres(conv_pctx *c)
{
	conv_fdeproj *f = &c->f;
	f->nfre = 0;
	f->word_skip = CONV_SKIP_NONE;
	for (size_t k = 0; k < f->gp.n; k++)
		if (!conv_add_fre(c, &f->pv[k]))
			return false;
	return true;
}

/* The function [pc, end) of the projected rows: a row SFrame cannot
 * express decides the skip reason, else the FDE is FLEX if some row
 * needs it and DEFAULT otherwise; a data word that does not fit comes
 * last. On failure the caller rolls back; *oom is set on allocation
 * failure. */
static conv_skip prows_to_func(conv_pctx *c, const cfi_fde *fde,
			      uint32_t fdeidx, uint64_t pc, uint64_t end,
			      bool *oom)
{
	conv_fdeproj *f = &c->f;
	if (f->row_skip)
		return f->row_skip;
	if (f->nrows == 0)
		return CONV_SKIP_CFA_UNSET;
	if (f->word_skip)
		return f->word_skip;
	/* Its FREs were built as the rows came, from c->fres[0]. */
	sfe_func *fn = conv_new_func(c, fde, fdeidx, pc, end - pc);
	if (!fn) {
		*oom = true;
		return CONV_SKIP_NONE;
	}
	size_t fi = (size_t)(fn - c->set->funcs);
	fn->fre_count = (uint32_t)f->nfre;
	c->gr.n = f->nfre;
	c->set->funcs[fi].fde_type = f->flex ? SF_FDE_TYPE_FLEX : SF_FDE_TYPE_DEFAULT;
	if (!split_func(c, fde, fdeidx, fi))
		*oom = true;
	return CONV_SKIP_NONE;
}

/* A linker PLT's CFA expression becomes one MASK FDE of the ABI's
 * plt_block-byte blocks: FRE 0 CFA sp+8, FRE K sp+16, what the
 * expression says (the shape GNU ld writes for its own .plt entries).
 * Rows before the expression (PLT0) stay an ordinary function. */
static conv_skip plt_to_funcs(conv_pctx *c, const cfi_fde *fde, uint32_t fdeidx,
			     bool *oom)
{
	conv_fdeproj *f = &c->f;
	uint64_t end = fde->pc_begin + fde->pc_range;
	uint64_t pstart = f->pstart;
	unsigned block = c->abi->plt_block;
	if (f->plt_skip)
		return f->plt_skip;
	/* Real PLTs are a few KiB (libstdc++: 16 KiB); one past 1 MiB is
	 * hostile, and --verify checks a MASK FDE at every PC. */
	if (!block || pstart % block || f->plt_k == 0 || f->plt_k >= block ||
	    pstart >= end || end - pstart > CONV_MAX_MASK_SIZE)
		return CONV_SKIP_PLT_SHAPE;
	if (f->nrows > 0 && pstart > fde->pc_begin) {
		conv_skip s = prows_to_func(c, fde, fdeidx, fde->pc_begin, pstart,
					   oom);
		if (s || *oom)
			return s;
	}
	sfe_func *fn = conv_new_func(c, fde, fdeidx, pstart, end - pstart);
	if (!fn) {
		*oom = true;
		return CONV_SKIP_NONE;
	}
	fn->pc_type = SF_FDE_PCTYPE_MASK;
	fn->rep_size = (uint8_t)block;
	size_t fi = (size_t)(fn - c->set->funcs);
	/* A stub shorter than K never reaches the second row; consumers
	 * (libsframe asserts it) want FRE starts within the function. */
	int nfres = f->plt_k < end - pstart ? 2 : 1;
	sfe_fre *fr = fre_slots(c, 2);
	if (!fr) {
		*oom = true;
		return CONV_SKIP_NONE;
	}
	size_t kept = 0;
	for (int k = 0; k < nfres; k++) {
		memset(&fr[kept], 0, sizeof fr[kept]);
		fr[kept].start = k ? f->plt_k : 0;
		fr[kept].ndw = 1;
		fr[kept].dw[0] = k ? 16 : 8;
		conv_fre_keep(fr, &kept);
	}
	c->gr.n += kept;
	c->set->funcs[fi].fre_count = (uint32_t)kept;
	return CONV_SKIP_NONE;
}

/* The functions [first, gf.n) of the FDE just converted: restricted to
 * V2 if asked, then their FRE data written once into set->enc. */
static conv_skip finish_fde(conv_pctx *c, size_t first, bool *oom)
{
	sfe_func *fv = c->set->funcs;
	if (c->v2)
		for (size_t k = first; k < c->gf.n; k++)
			if (!sfe_v2_fit(c->abi, &fv[k], c->fres + fv[k].enc_off))
				return CONV_SKIP_V2;
	for (size_t k = first; k < c->gf.n; k++) {
		sfe_func *fn = &fv[k];
		size_t most = SFE_ATTR_BYTES + (size_t)fn->fre_count * SFE_FRE_MAX_BYTES;
		if (c->ge.n > UINT32_MAX ||
		    !conv_grow_set(c->set, (void **)&c->set->enc, &c->ge, 1,
				   c->ge.n + most)) {
			*oom = true;
			return CONV_SKIP_NONE;
		}
		const sfe_fre *fres = c->fres + fn->enc_off;
		uint8_t *p = c->set->enc + c->ge.n;
		uint8_t *end = sfe_put_fres(p, fres, fn, c->v2, c->set->big_endian);
		fn->enc_off = (uint32_t)c->ge.n;
		fn->enc_len = (uint32_t)(end - p);
		c->ge.n += fn->enc_len;
		c->set->nfres += fn->fre_count;
	}
	return CONV_SKIP_NONE;
}

conv_skip conv_fde_funcs(conv_pctx *c, const cfi_fde *fde, uint32_t i, bool *oom)
{
	size_t first = c->gf.n;
	conv_skip s;
	if (c->f.plt)
		s = plt_to_funcs(c, fde, i, oom);
	else
		s = prows_to_func(c, fde, i, fde->pc_begin,
				  fde->pc_begin + fde->pc_range, oom);
	if (!s && !*oom)
		s = finish_fde(c, first, oom);
	return s;
}
