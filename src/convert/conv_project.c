/* The projection's driver: each FDE's rows, as the interpreter makes
 * them, go through the rules (conv_rules.c) into FREs (conv_fres.c), with
 * the caches (conv_cache.c) taking what an earlier result gives; each
 * FDE claims its range, and duplicates are decided at the end
 * (conv_claim.c). One path for every caller: the interpreter's rows one
 * by one (cfi_row_fn), an FDE's rows in one array, or a whole table
 * (conv_project). */
#include <stdlib.h>
#include <string.h>

#include "../common/mem.h"
#include "conv_cache.h"

/* ---- One FDE's rows, as they come --------------------------------------
 * fde_begin, then fde_row for each row in order, then fde_end: each row
 * is reduced to what SFrame tracks (conv_prow) at once. The functions and
 * their FREs are made when the FDE ends and its status is known. */

static E2S_ALWAYS_INLINE void fde_begin(conv_pctx *c, size_t i)
{
	conv_fdeproj *f = &c->f;
	const cfi_fde *fde = &c->t->fdes[i];
	f->fde = i;
	f->pc = fde->pc_begin;
	f->end = fde->pc_begin + fde->pc_range;
	/* As memo_take found it before the program ran, unless the
	 * program failed since (nothing else it reads changes). */
	bool seen = c->checked_fde == i && fde->status == E2S_ERR_OK;
	f->active = (seen ? c->checked : conv_rule_fde(c->abi, c->t, fde)) == CONV_SKIP_NONE;
	f->rows_bad = false;
	f->nrows = 0;
	f->row_skip = CONV_SKIP_NONE;
	f->flex = false;
	f->same = 0;
	f->cfa_run = false;
	f->fast_left = 0;
	f->gp.n = 0;
	f->gfull.n = 0;
	f->nfre = 0;
	f->word_skip = CONV_SKIP_NONE;
	c->gr.n = 0;
	f->plt = false;
	f->plt_skip = CONV_SKIP_NONE;
	if (f->active)
		c->retcol = c->t->cies[fde->cie].ra_reg;
}

/* A row at or after the first PLT CFA expression: the first one's
 * threshold K holds for the rest (conv_rule_plt_row). */
static void plt_row(conv_pctx *c, const cfi_row *r)
{
	conv_fdeproj *f = &c->f;
	if (!f->plt) {
		f->plt = true;
		f->pstart = r->start;
		f->plt_k = r->cfa.expr.plt_k;
	}
	if (!f->plt_skip)
		f->plt_skip = conv_rule_plt_row(c->abi, c->retcol, r, f->plt_k);
}

/* Project r in full into *p; false if SFrame cannot express it (the
 * first such row decides the reason). */
static bool project_full(conv_pctx *c, const cfi_row *r, conv_prow *p)
{
	conv_fdeproj *f = &c->f;
	conv_skip s = conv_rule_row(c->abi, c->retcol, r, p);
	if (s) {
		f->row_skip = s;
		return false;
	}
	if (!f->flex && !conv_rule_default_ok(c->abi, p, &s))
		f->flex = true;
	return true;
}

/* The next row of the FDE begun, in general (conv_int.h). */
e2s_err conv_fde_row_gen(conv_pctx *c, const cfi_row *r)
{
	conv_fdeproj *f = &c->f;
	f->same &= r->same;
	if (!f->active)
		return E2S_ERR_OK;
	f->fast_left = 0; /* until this row is projected (conv_cfa_arm) */
	if (f->plt || (r->cfa.kind == CFI_CFA_EXPR &&
		       r->cfa.expr.shape == CFI_EXPR_PLT)) {
		f->cfa_run = false;
		plt_row(c, r);
		return E2S_ERR_OK;
	}
	f->nrows++;
	if (f->row_skip || !conv_row_live(r, f->pc, f->end))
		return E2S_ERR_OK;
	if (!conv_grow((void **)&f->pv, &f->gp, sizeof *f->pv, f->gp.n + 1))
		return E2S_ERR_NOMEM;
	conv_prow_at *pa = &f->pv[f->gp.n];
	bool flex = f->flex;
	if (conv_cfa_only(c, f->same, r)) {
		pa->base = pa[-1].base; /* verdicts as for that row */
		pa->cfa_off = r->cfa.off;
	} else {
		if (!conv_grow((void **)&f->full, &f->gfull, sizeof *f->full,
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
	if (f->flex != flex && !conv_rebuild_fres(c))
		return E2S_ERR_NOMEM;
	if (!conv_add_fre(c, pa))
		return E2S_ERR_NOMEM;
	f->gp.n++;
	f->cfa_run = conv_cache_on(c) && conv_rule_cfa_only_ok(c->abi, r);
	f->prev_cfa_reg = r->cfa.reg;
	f->same = CFI_COL_ALL;
	conv_cfa_arm(c);
	return E2S_ERR_OK;
}

/* The next row of the FDE begun: an FDE's first row with its CIE's
 * initial rules from what the CIE's first such row gave (conv_cache.c). */
static E2S_OUT_OF_LINE e2s_err fde_row_any(conv_pctx *c, const cfi_row *r)
{
	conv_fdeproj *f = &c->f;
	if (f->nrows == 0 && r->same == CFI_COL_ALL && f->active && !f->plt &&
	    conv_cache_on(c))
		return conv_first_row(c, r);
	return conv_fde_row_gen(c, r);
}

/* fde_row_any, with the usual row inline (conv_cfa_row). */
static inline e2s_err fde_row(conv_pctx *c, const cfi_row *r)
{
	if (conv_cfa_row(c, r))
		return E2S_ERR_OK;
	return fde_row_any(c, r);
}

/* FDE i has no more rows, and its status is final: its functions, or
 * why not. Only allocation failures are errors. */
static e2s_err fde_end(conv_pctx *c, size_t i)
{
	const cfi_fde *fde = &c->t->fdes[i];
	conv_fdeproj *f = &c->f;
	conv_skip s = CONV_SKIP_NONE;
	size_t save_f = c->gf.n, save_e = c->ge.n, save_n = c->set->nfres;
	bool oom = false;

	c->gr.n = 0;
	f->fde = SIZE_MAX;
	/* fde_begin's check passed unless the program failed since. */
	s = f->active && fde->status == E2S_ERR_OK ? CONV_SKIP_NONE
						   : conv_rule_fde(c->abi, c->t, fde);
	if (!s && f->rows_bad)
		s = CONV_SKIP_BAD_CFI;
	bool claimed = !s;
	if (claimed && !conv_claim_fde(c, i))
		return E2S_ERR_NOMEM;
	if (!s) {
		s = conv_fde_funcs(c, fde, (uint32_t)i, &oom);
		if (oom)
			return E2S_ERR_NOMEM;
	}
	if (s) {
		c->gf.n = save_f;
		c->ge.n = save_e;
		c->set->nfres = save_n;
	}
	if (c->memo_on && conv_cache_on(c) && !conv_memo_put(c, i, s, save_f))
		return E2S_ERR_NOMEM;
	return conv_note(c, i, s) ? E2S_ERR_OK : E2S_ERR_NOMEM;
}

/* FDE i with its rows in one array. */
static e2s_err project_fde(conv_pctx *c, size_t i, const cfi_row *rows,
			   size_t n)
{
	if (c->f.fde != i)
		fde_begin(c, i);
	for (size_t k = 0; k < n; k++)
		if (fde_row(c, &rows[k]))
			return E2S_ERR_NOMEM;
	return fde_end(c, i);
}

static void pctx_init(conv_pctx *c, sfe_set *out, conv_verdicts *v,
		      unsigned version)
{
	memset(out, 0, sizeof *out);
	memset(v, 0, sizeof *v);
	memset(c, 0, sizeof *c);
	c->set = out;
	c->v = v;
	c->v2 = version == SF_VERSION_2;
	out->version = c->v2 ? SF_VERSION_2 : SF_VERSION_3;
	c->cache = true;
	c->hash_fde = SIZE_MAX;
	c->checked_fde = SIZE_MAX;
	c->f.fde = SIZE_MAX;
}

/* Free the rows' scratch (not the caches). */
static void pctx_fres_free(conv_pctx *c)
{
	free(c->fres);
	c->fres = NULL;
	free(c->f.pv);
	c->f.pv = NULL;
	free(c->f.full);
	c->f.full = NULL;
}

/* Free the rows' scratch and the caches. */
static void pctx_rows_free(conv_pctx *c)
{
	pctx_fres_free(c);
	conv_cache_free(c);
}

/* Free the scratch (not the set). */
static void pctx_scratch_free(conv_pctx *c)
{
	pctx_rows_free(c);
	free(c->cl);
	c->cl = NULL;
}

/* The functions and FRE bytes reserved for a section of size bytes
 * (pctx_start). */
static size_t funcs_reserve(size_t size)
{
	return size / 32;
}

static size_t enc_reserve(size_t size)
{
	return size + size / 8;
}

/* A mid-size section's FDE records (the parse's, when it asks:
 * conv_stream_room), functions, FRE data and memo table in one block
 * (sfe_set.block, the table keeping a reference), where each is below
 * the size from which it would be hinted for huge pages alone
 * (E2S_HUGE_MIN) but together they reach it: one 2 MiB fault then costs
 * less than the few hundred 4 KiB first touches they take apart
 * (python3.11: 504 page faults for -o, 131 with the block). An array
 * that outgrows its room moves out (conv_grow_set, cfi_records.c). The
 * rooms of a section of size bytes, after lead bytes (the FDE records'
 * room, 0 without): false if no block is called for. */
static bool block_rooms(const conv_pctx *c, size_t size, size_t lead,
			size_t *fb, size_t *eb, size_t *mb)
{
	*fb = (funcs_reserve(size) * sizeof(sfe_func) + 63) & ~(size_t)63;
	*eb = (enc_reserve(size) + 63) & ~(size_t)63;
	*mb = c->memo_on ? conv_memo_bytes(size) : 0;
	return !c->no_block && size >= 4096 &&
	       lead + *fb + *eb + *mb >= E2S_HUGE_MIN && lead < E2S_HUGE_MIN &&
	       *fb < E2S_HUGE_MIN && *eb < E2S_HUGE_MIN;
}

/* The set's arrays in the block (made here, or by conv_stream_room);
 * false: no block (none called for, or no memory: the arrays are then
 * allocated one by one). */
static bool pctx_block(conv_pctx *c)
{
	sfe_set *s = c->set;
	size_t fb, eb, mb;
	if (!block_rooms(c, c->t->size, c->block_at, &fb, &eb, &mb))
		return false;
	if (!s->block && !(s->block = e2s_block_new(fb + eb + mb)))
		return false;
	unsigned char *b = (unsigned char *)e2s_block_data(s->block) + c->block_at;
	s->funcs = (sfe_func *)b;
	c->gf.cap = funcs_reserve(c->t->size);
	s->enc = b + fb;
	c->ge.cap = enc_reserve(c->t->size);
	if (mb) {
		c->memo_mem = b + fb + eb;
		c->memo_bytes = mb;
		c->memo_in_set = true;
	}
	return true;
}

/* First FDE: learn the ABI and reserve from the section size (about
 * 6 bytes of .eh_frame per FRE written in about as many bytes, and 40
 * per function; untouched reserve costs address space only). Not the
 * claims: at 8 bytes each they stay below huge pages, where a reserve
 * would make the first touch cost 2 MiB. */
static e2s_err pctx_start(conv_pctx *c, const cfi_table *t)
{
	c->t = t;
	c->abi = abi_get(t->abi);
	c->set->abi = t->abi;
	c->set->big_endian = t->big_endian;
	c->started = true;
	if (t->size >= 4096 && !pctx_block(c) &&
	    (!conv_grow((void **)&c->set->funcs, &c->gf, sizeof(sfe_func),
			funcs_reserve(t->size)) ||
	     !conv_grow((void **)&c->set->enc, &c->ge, 1, enc_reserve(t->size))))
		return E2S_ERR_NOMEM;
	if (t->size >= 4096 &&
	    !conv_grow((void **)&c->v->fde_skip, &c->gs, 1, t->size / 32))
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
static size_t claim_end(const conv_pctx *c, size_t k)
{
	return k + 1 < c->gcl.n ? c->cl[k + 1].func : c->gf.n;
}

static bool settle_claims(conv_pctx *c, conv_spare sp)
{
	sfe_set *out = c->set;
	conv_verdicts *v = c->v;
	const conv_fclaim *cv = c->cl;
	size_t n = c->gcl.n, nwin = 0, nf = c->gf.n, w = 0;
	/* Claims in address order, none overlapping the one before (the
	 * usual case): nothing to decide or move. */
	size_t in_order = 1;
	conv_span a = n ? conv_claim_span(c->t, &cv[0]) : (conv_span){0, 0, 0};
	for (; in_order < n; in_order++) {
		conv_span b = conv_claim_span(c->t, &cv[in_order]);
		if (a.shndx > b.shndx || (a.shndx == b.shndx && a.end > b.start))
			break;
		a = b;
	}
	if (in_order >= n)
		return true;
	void *own_lost = NULL, *own_order = NULL, *own_from = NULL;
	uint32_t *order = conv_spare_alloc(&sp, n * sizeof *order, &own_order);
	uint8_t *lost = conv_spare_alloc(&sp, n, &own_lost);
	uint32_t *from = NULL;
	bool ok = lost && order &&
		  conv_claims_resolve(c->t, cv, n, lost, order, &nwin, sp);
	/* After the sort's scratch is gone. */
	ok = ok && (from = conv_spare_alloc(&sp, (nf ? nf : 1) * sizeof *from,
					    &own_from)) != NULL;
	/* Every function is some claim's (claims come first). The losers'
	 * go after the winners', to be dropped: placed from the end as the
	 * losers are marked, backwards (their order kept). */
	size_t hi = nf;
	for (size_t k = n, left = n - nwin; k-- > 0 && left && ok;) {
		if (!lost[k])
			continue;
		left--;
		v->counts[v->fde_skip[cv[k].fde]]--;
		v->fde_skip[cv[k].fde] = CONV_SKIP_DUPLICATE;
		v->counts[CONV_SKIP_DUPLICATE]++;
		for (size_t q = claim_end(c, k); q-- > cv[k].func;) {
			out->nfres -= out->funcs[q].fre_count;
			from[--hi] = (uint32_t)q;
		}
	}
	for (size_t r = 0; r < nwin && ok; r++) {
		size_t k = order[r], e = claim_end(c, k);
		for (size_t q = cv[k].func; q < e; q++)
			from[w++] = (uint32_t)q;
	}
	if (ok) {
		conv_permute_funcs(out->funcs, nf, from);
		c->gf.n = w;
	}
	free(own_lost);
	free(own_order);
	free(own_from);
	return ok;
}

static e2s_err pctx_finish(conv_pctx *c, size_t nfdes)
{
	sfe_set *out = c->set;
	if (!c->v->fde_skip && !(c->v->fde_skip = calloc(1, 1)))
		return E2S_ERR_NOMEM;
	/* Done with rows: their memory serves the settling, the memo
	 * table's pages (faulted in) before any new ones. */
	pctx_fres_free(c);
	bool ok = settle_claims(c, conv_memo_spare(c));
	conv_cache_free(c);
	if (!ok)
		return E2S_ERR_NOMEM;
	pctx_scratch_free(c);
	c->v->nfdes = nfdes;
	out->nfuncs = c->gf.n;
	out->enc_len = c->ge.n;
	return E2S_ERR_OK;
}

static e2s_err proj_oom(conv_pctx *c, e2s_diag *diag)
{
	pctx_scratch_free(c);
	sfe_set_free(c->set);
	conv_verdicts_free(c->v);
	return e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, "projecting CFI rows");
}

e2s_err conv_project(const cfi_table *t, unsigned version, sfe_set *out,
		    conv_verdicts *v, e2s_diag *diag)
{
	conv_pctx c;
	pctx_init(&c, out, v, version);
	c.cache = false; /* the reference path: rules alone */
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

struct conv_stream {
	conv_pctx c;
	sfe_set set;
	conv_verdicts v;
	size_t nfdes;
};

e2s_err conv_stream_new(conv_stream **out, unsigned version)
{
	conv_stream *s = calloc(1, sizeof *s);
	*out = s;
	if (!s)
		return E2S_ERR_NOMEM;
	pctx_init(&s->c, &s->set, &s->v, version);
	s->c.memo_on = true;
	return E2S_ERR_OK;
}

void conv_stream_block(conv_stream *s, bool on)
{
	s->c.no_block = !on;
}

void *conv_stream_room(void *ctx, const cfi_section *sec, size_t bytes,
		       e2s_block **blk)
{
	conv_stream *s = ctx;
	conv_pctx *c = &s->c;
	size_t lead = (bytes + 63) & ~(size_t)63, fb, eb, mb;
	if (c->started || c->set->block ||
	    !block_rooms(c, sec->size, lead, &fb, &eb, &mb))
		return NULL;
	e2s_block *b = e2s_block_new(lead + fb + eb + mb);
	if (!b)
		return NULL;
	c->set->block = b;
	c->block_at = lead;
	*blk = e2s_block_ref(b);
	return e2s_block_data(b);
}

void conv_stream_caches(conv_stream *s, bool on)
{
	s->c.cache = s->c.memo_on = on;
	s->c.f.fast_left = 0; /* conv_cfa_arm read the switch */
}

/* Every stream callback, once started (the first one learns the ABI:
 * stream_start): the table's arrays move as it grows. */
static void stream_at(conv_stream *s, const cfi_table *t, size_t fde)
{
	s->c.t = t;
	if (fde + 1 > s->nfdes)
		s->nfdes = fde + 1;
}

/* The first callback: start, then the callback again. Out of line and
 * called last, so that the usual callback saves no registers. */
static E2S_OUT_OF_LINE e2s_err stream_start(conv_stream *s, const cfi_table *t)
{
	return pctx_start(&s->c, t);
}

static E2S_OUT_OF_LINE e2s_err stream_fde_start(void *ctx, const cfi_table *t,
						size_t fde, const cfi_row *rows,
						size_t nrows)
{
	if (stream_start(ctx, t))
		return E2S_ERR_NOMEM;
	return conv_stream_fde(ctx, t, fde, rows, nrows);
}

e2s_err conv_stream_fde(void *ctx, const cfi_table *t, size_t fde,
		       const cfi_row *rows, size_t nrows)
{
	conv_stream *s = ctx;
	if (!s->c.started)
		return stream_fde_start(ctx, t, fde, rows, nrows);
	stream_at(s, t, fde);
	/* Rows one by one (conv_stream_row) come with no array here. */
	return project_fde(&s->c, fde, rows, rows ? nrows : 0);
}

/* An FDE's first row: the rest need no bookkeeping. */
static E2S_OUT_OF_LINE e2s_err stream_first_row(conv_stream *s,
						const cfi_table *t, size_t fde,
						const cfi_row *row)
{
	if (!s->c.started) {
		if (stream_start(s, t))
			return E2S_ERR_NOMEM;
		return stream_first_row(s, t, fde, row);
	}
	stream_at(s, t, fde);
	fde_begin(&s->c, fde);
	return fde_row_any(&s->c, row);
}

e2s_err conv_stream_row(void *ctx, const cfi_table *t, size_t fde,
		       const cfi_row *row)
{
	conv_stream *s = ctx;
	if (s->c.f.fde != fde)
		return stream_first_row(s, t, fde, row);
	return fde_row(&s->c, row);
}

static E2S_OUT_OF_LINE int stream_pre_start(void *ctx, const cfi_table *t,
					    size_t fde)
{
	if (stream_start(ctx, t))
		return -1;
	return conv_stream_pre(ctx, t, fde);
}

int conv_stream_pre(void *ctx, const cfi_table *t, size_t fde)
{
	conv_stream *s = ctx;
	if (!s->c.started)
		return stream_pre_start(ctx, t, fde);
	stream_at(s, t, fde);
	if (!conv_cache_on(&s->c) || !s->c.memo_on)
		return 0;
	return conv_memo_take(&s->c, fde);
}

e2s_err conv_stream_finish(conv_stream *s, const cfi_table *t, sfe_set *out,
			  conv_verdicts *v, e2s_diag *diag)
{
	memset(out, 0, sizeof *out);
	memset(v, 0, sizeof *v);
	if (!s->c.started && pctx_start(&s->c, t))
		return proj_oom(&s->c, diag);
	if (s->nfdes != t->nfdes) {
		sfe_set_free(&s->set);
		conv_verdicts_free(&s->v);
		return e2s_fail(diag, E2S_ERR_INTERNAL, NULL, 0,
				"stream saw %zu of %zu FDEs", s->nfdes,
				t->nfdes);
	}
	if (pctx_finish(&s->c, t->nfdes))
		return proj_oom(&s->c, diag);
	*out = s->set;
	*v = s->v;
	memset(&s->set, 0, sizeof s->set);
	memset(&s->v, 0, sizeof s->v);
	return E2S_ERR_OK;
}

void conv_stream_free(conv_stream *s)
{
	if (!s)
		return;
	pctx_scratch_free(&s->c);
	sfe_set_free(&s->set);
	conv_verdicts_free(&s->v);
	free(s);
}

e2s_err conv_project_view(const void *img, size_t size,
			 const elfr_cfi_opts *lo, unsigned version,
			 elfr_cfi **cf, sfe_set *set, conv_verdicts *v,
			 e2s_diag *diag)
{
	conv_stream *s;
	e2s_err e;

	*cf = NULL;
	memset(set, 0, sizeof *set);
	memset(v, 0, sizeof *v);
	if (conv_stream_new(&s, version))
		return e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);
	elfr_cfi_opts o = {false, false, NULL, NULL, NULL};
	if (lo)
		o = *lo;
	o.pre_fde = conv_stream_pre;
	o.on_row = conv_stream_row;
	o.fde_room = conv_stream_room;
	e = elfr_cfi_open_view(img, size, &o, conv_stream_fde, s, cf, diag);
	if (!e)
		e = conv_stream_finish(s, elfr_cfi_table(*cf), set, v, diag);
	conv_stream_free(s);
	if (e) {
		elfr_cfi_close(*cf);
		*cf = NULL;
	}
	return e;
}

e2s_err conv_build(const cfi_table *t, const sfe_encode_opts *o, bw_t *out,
		  sfe_set *set_out, conv_verdicts *v_out, sfe_reloc **relocs,
		  size_t *nrelocs, e2s_diag *diag)
{
	sfe_set s;
	conv_verdicts v;
	e2s_err e = conv_project(t, o ? o->sframe_version : 0, &s, &v, diag);
	if (e)
		return e;
	if (v_out)
		*v_out = v;
	else
		conv_verdicts_free(&v);
	e = sfe_encode(&s, o, out, relocs, nrelocs, diag);
	if (set_out)
		*set_out = s;
	else
		sfe_set_free(&s);
	return e;
}
