/* The projection's caches (conv_cache.c), apart from its rules: each
 * gives an FDE or a row the result the rules would give it, from an
 * earlier result, and can be switched off: at run time (conv_pctx.cache,
 * conv_stream_caches) or at build time (-DEH2S_NO_CACHE). The output is
 * the same bytes either way (tests/e2e/cache_off.sh, fuzz_cfi).
 *   - programs seen before: an FDE whose program and CIE equal an
 *     earlier FDE's takes its outcome without running (conv_memo_*);
 *   - first rows: an FDE's first row with its CIE's initial rules takes
 *     what the CIE's first such row gave (conv_first_row);
 *   - CFA-only rows: a row whose CFA offset alone changed takes the
 *     projection of the row before it (conv_cfa_row, here: inline). */
#ifndef E2S_CONV_CACHE_H
#define E2S_CONV_CACHE_H

#include "conv_int.h"

static inline bool conv_cache_on(const conv_pctx *c)
{
#ifdef EH2S_NO_CACHE
	(void)c;
	return false;
#else
	return c->cache;
#endif
}

/* Does r share all but its CFA offset with the row projected before it
 * (f->cfa_run: conv_rule_cfa_only_ok accepted that one, so its CFA is a
 * register's)? same: the CFI_COL_* bits r and every row since share with
 * their predecessors; CFI_COL_CFA_BASE among them says the CFA kept its
 * kind and register, so r's need not be read. */
static inline bool conv_cfa_only(const conv_pctx *c, unsigned same,
				const cfi_row *r)
{
	const conv_fdeproj *f = &c->f;
	(void)r;
	return conv_cache_on(c) && f->cfa_run &&
	       (same | CFI_COL_CFA) == CFI_COL_ALL;
}

/* Where a row was projected in general (or the first row cache gave
 * one): how many rows conv_cfa_row may take next. Its tests hold as long
 * as only it adds rows: the caches on, a CFA run (cfa_run) of an ABI
 * that does not scale CFA offsets, the last FRE with a CFA word to change
 * (RA undefined: none) and no word that did not fit, room in pv and in
 * fres (f->nfre <= f->gp.n: a row adds at most one FRE). */
static inline void conv_cfa_arm(conv_pctx *c)
{
	conv_fdeproj *f = &c->f;
	size_t cap = f->gp.cap < c->gr.cap ? f->gp.cap : c->gr.cap;
	f->fast_left = conv_cache_on(c) && f->cfa_run &&
			       !conv_cfa_scaled(c->abi) && !f->word_skip && f->nfre &&
			       c->fres[f->nfre - 1].ndw && cap > f->gp.n
			       ? cap - f->gp.n
			       : 0;
}

/* The FRE of a row whose projection differs from the one before only in
 * its CFA offset (conv_cfa_only), of an ABI that does not scale CFA
 * offsets, after an FRE with a CFA word (conv_cfa_arm): that row's
 * FRE is the last one kept, or one equal to it. The new one is that FRE
 * with its CFA word changed, kept as conv_fre_keep would: nothing if the
 * word is the same, in place if it starts where that one does. */
static inline void conv_put_fre_cfa(conv_pctx *c, const conv_prow_at *pa)
{
	conv_fdeproj *f = &c->f;
	sfe_fre *last = &c->fres[f->nfre - 1];
	int32_t cw;
	conv_skip word = conv_cfa_word_plain(pa->cfa_off, &cw);
	if (word) {
		f->word_skip = word;
		f->fast_left = 0;
		return;
	}
	unsigned k = f->flex ? 1 : 0;
	if (last->dw[k] == cw)
		return;
	uint32_t start = conv_fre_start(f, pa->start);
	if (last->start != start) {
		last[1] = last[0];
		last++;
		last->start = start;
		f->nfre++;
	}
	last->dw[k] = cw;
}

/* The usual row, inline: one whose CFA offset alone changed, while
 * conv_cfa_arm allows (the others' rows take the general path: this one
 * then needs no registers saved). true if it was taken so. */
static inline bool conv_cfa_row(conv_pctx *c, const cfi_row *r)
{
	conv_fdeproj *f = &c->f;
	/* conv_cfa_only, with the ABI's test, the switch and the room
	 * read once (f->fast_left). */
	if (!f->fast_left ||
	    ((f->same & r->same) | CFI_COL_CFA) != CFI_COL_ALL ||
	    !conv_row_live(r, f->pc, f->end))
		return false;
	f->fast_left--;
	conv_prow_at *pa = &f->pv[f->gp.n++];
	pa->start = r->start;
	pa->cfa_off = r->cfa.off;
	pa->base = pa[-1].base;
	conv_put_fre_cfa(c, pa);
	f->same = CFI_COL_ALL;
	return true;
}

/* FDE c->f's first row r, its rules its CIE's initial ones: what
 * conv_fde_row_gen made of the first such row of the CIE. Only
 * allocation failures are errors. */
e2s_err conv_first_row(conv_pctx *c, const cfi_row *r);

/* FDE i's program was seen before: its outcome, without running it.
 * 1 done, 0 not seen (run it), -1 OOM. */
int conv_memo_take(conv_pctx *c, size_t i);
/* Remember FDE i's outcome s (its function, if any, from funcs[first]).
 * false on OOM. */
bool conv_memo_put(conv_pctx *c, size_t i, conv_skip s, size_t first);

/* Bytes the memo table takes for a section of section_size bytes (for a
 * block reserving room for it). */
size_t conv_memo_bytes(size_t section_size);

void conv_cache_free(conv_pctx *c);
/* The memo table's memory as spare (empty if there is none), once no
 * FDE is left to project: the table is gone, its memory is freed by
 * conv_cache_free (by sfe_set_free where it lies in the set's block). */
conv_spare conv_memo_spare(conv_pctx *c);

#endif
