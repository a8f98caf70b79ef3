/* The projection's caches (conv_cache.h says which, and how they are
 * switched off). Each gives the result the rules would give; none holds
 * a rule. */
#include <stdlib.h>
#include <string.h>

#include "../common/mem.h"
#include "../common/hash.h"
#include "../common/reader.h"
#include "conv_cache.h"

/* ---- First rows -------------------------------------------------------
 * Most FDEs begin with their CIE's initial rules (r->same == CFI_COL_ALL
 * on a first row): what conv_fde_row_gen made of the first such row of
 * the CIE, kept per CIE (conv_first), is the same at r's start, as it
 * depends on nothing else. */
e2s_err conv_first_row(conv_pctx *c, const cfi_row *r)
{
	conv_fdeproj *f = &c->f;
	uint32_t ci = c->t->fdes[f->fde].cie;
	if (ci >= c->gfirst.n) {
		if (!conv_grow((void **)&c->first, &c->gfirst, sizeof *c->first, ci + 1))
			return E2S_ERR_NOMEM;
		memset(&c->first[c->gfirst.n], 0,
		       (ci + 1 - c->gfirst.n) * sizeof *c->first);
		c->gfirst.n = ci + 1;
	}
	conv_first *k = &c->first[ci];
	if (k->state == CONV_FIRST_NEVER || !conv_row_live(r, f->pc, f->end) ||
	    !conv_grow((void **)&f->pv, &f->gp, sizeof *f->pv, 1) ||
	    !conv_grow((void **)&f->full, &f->gfull, sizeof *f->full, 1) ||
	    !conv_grow((void **)&c->fres, &c->gr, sizeof(sfe_fre), 1))
		return conv_fde_row_gen(c, r); /* it reports OOM */
	if (k->state == CONV_FIRST_NONE) {
		e2s_err e = conv_fde_row_gen(c, r);
		if (e || f->plt) {
			k->state = CONV_FIRST_NEVER;
			return e;
		}
		k->state = CONV_FIRST_KEPT;
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
	f->pv[0] = (conv_prow_at){r->start, k->full.cfa_off, 0};
	f->gp.n = 1;
	f->flex = k->flex;
	f->word_skip = k->word_skip;
	if (!k->word_skip) {
		c->fres[0] = k->fre;
		c->fres[0].start = conv_fre_start(f, r->start);
		f->nfre = 1;
	}
	f->cfa_run = k->cfa_run;
	f->prev_cfa_reg = k->cfa_reg;
	f->same = CFI_COL_ALL;
	conv_cfa_arm(c);
	return E2S_ERR_OK;
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

static E2S_ALWAYS_INLINE uint64_t memo_hash(conv_pctx *c, size_t i)
{
	if (c->hash_fde == i)
		return c->hash_val;
	const cfi_fde *fde = &c->t->fdes[i];
	const uint8_t *p = c->t->data + fde->insn_off;
	uint32_t n = fde->insn_len;
	uint64_t h = e2s_hash_bytes((uint64_t)fde->cie << 40 ^ n, p, n);
	c->hash_fde = i;
	c->hash_val = h;
	return h;
}

/* The set of two for hash h: the first holds the newer entry. */
static conv_memo *memo_set(const conv_pctx *c, uint64_t h)
{
	return &c->memo[2 * ((size_t)h & (c->memo_sets - 1))];
}

static uint32_t memo_tag(uint64_t h)
{
	return (uint32_t)(h >> 32) | 1;
}

/* A program of 1 to 8 bytes at section offset off as a number (the rest
 * 0): one 8-byte load where the section has 8 bytes there. */
static uint64_t short_insns(const cfi_table *t, uint32_t off, uint32_t n)
{
	const uint8_t *p = t->data + off;
	if (t->size - off < 8)
		return e2s_load_uN(p, n, false);
	return e2s_load_uN(p, 8, false) & (~(uint64_t)0 >> (64 - 8 * n));
}

static uint64_t load8(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* a[0..n) == b[0..n) for n > 8, 8 bytes at a time (the last 8 overlap):
 * programs are some 10 to 60 bytes, too few for a call to memcmp. */
static bool same_insns(const uint8_t *a, const uint8_t *b, uint32_t n)
{
	for (uint32_t k = 0; k + 8 < n; k += 8)
		if (load8(a + k) != load8(b + k))
			return false;
	return load8(a + n - 8) == load8(b + n - 8);
}

/* Kept in the entry, a short program is compared without reading the
 * earlier FDE's bytes (a cache miss each, on the most common hits). */
static E2S_ALWAYS_INLINE bool memo_same(const conv_pctx *c, const conv_memo *m,
					const cfi_fde *fde, uint32_t tag)
{
	if (m->tag != tag || m->insn_len != fde->insn_len || m->cie != fde->cie)
		return false;
	if (m->pc_range != fde->pc_range &&
	    !(m->reach != CONV_MEMO_FAR &&
	      (m->pc_range > m->reach && fde->pc_range > m->reach)))
		return false;
	if (m->insn_len <= 8)
		return m->insn == short_insns(c->t, fde->insn_off, m->insn_len);
	return same_insns(c->t->data + m->insn, c->t->data + fde->insn_off,
			  m->insn_len);
}

/* About one entry per 64 bytes of section (an FDE takes 40 to 60), so
 * that a small file pays for a small table. */
static size_t memo_sets(size_t section_size)
{
	size_t sets = 64;
	while (sets < CONV_MEMO_SETS && sets < section_size / 128)
		sets *= 2;
	return sets;
}

/* One block, the entries 64-aligned, then the tags. */
size_t conv_memo_bytes(size_t section_size)
{
	size_t sets = memo_sets(section_size);
	return 63 + 2 * sets * sizeof(conv_memo) + 2 * sets * sizeof(uint16_t);
}

/* The table, at the first entry: in the room the set's block kept for it
 * (cleared: the block may be reused memory), else calloc's (fresh pages
 * need no clearing, and pages no entry touches cost nothing). false on
 * OOM. */
static bool memo_alloc(conv_pctx *c)
{
	size_t sets = memo_sets(c->t->size);
	size_t all = conv_memo_bytes(c->t->size);
	unsigned char *mem = c->memo_mem;
	if (c->memo_in_set)
		memset(mem, 0, all);
	else if (!(mem = calloc(1, all)))
		return false;
	c->memo_mem = mem;
	c->memo_bytes = all;
	c->memo = (conv_memo *)(mem + (-(uintptr_t)mem & 63));
	c->memo_tags = (uint16_t *)(c->memo + 2 * sets);
	c->memo_sets = sets;
	return true;
}

/* conv_memo_put without the table, or without FDE i's hash (memo_take
 * makes it, unless the table was not there yet): make them, then put. */
static E2S_OUT_OF_LINE bool memo_put_first(conv_pctx *c, size_t i,
					   conv_skip s, size_t first)
{
	if (!c->memo && !memo_alloc(c))
		return false;
	memo_hash(c, i);
	return conv_memo_put(c, i, s, first);
}

bool conv_memo_put(conv_pctx *c, size_t i, conv_skip s, size_t first)
{
	const cfi_fde *fde = &c->t->fdes[i];
	if (fde->status != E2S_ERR_OK || fde->set_loc || c->f.plt ||
	    !memo_key_ok(fde))
		return true;
	switch (s) {
	case CONV_SKIP_NONE:
		/* One function over the whole FDE (V2 may shorten it, and
		 * a function split in parts has more FREs than fre_count
		 * holds). */
		if (c->gf.n != first + 1 ||
		    c->set->funcs[first].pc_type != SF_FDE_PCTYPE_INC ||
		    c->set->funcs[first].size != fde->pc_range ||
		    c->set->funcs[first].enc_len > UINT16_MAX)
			return true;
		break;
	case CONV_SKIP_BAD_CFI:
	case CONV_SKIP_EMPTY:
	case CONV_SKIP_TOO_LARGE:
	case CONV_SKIP_DUPLICATE:
	case CONV_SKIP_UNSUPPORTED_ABI:
	case CONV_SKIP_PLT_SHAPE:
		return true; /* not from the program, or not remembered */
	default:
		break;
	}
	/* Called last: the usual call saves no registers. */
	if (!c->memo || c->hash_fde != i)
		return memo_put_first(c, i, s, first);
	uint64_t h = c->hash_val;
	conv_memo *m = memo_set(c, h);
	uint16_t *mt = &c->memo_tags[m - c->memo];
	/* An empty set (its tags say so) is written, not read first: the
	 * first touch of a fresh page is then one fault, not a read of
	 * the zero page and a copy-on-write after it. */
	if (mt[0]) {
		m[1] = m[0];
		mt[1] = mt[0];
	}
	m->tag = memo_tag(h);
	mt[0] = (uint16_t)m->tag;
	m->cie = (uint16_t)fde->cie;
	m->pc_range = (uint32_t)fde->pc_range;
	m->reach = fde->reach < CONV_MEMO_FAR ? (uint16_t)fde->reach : CONV_MEMO_FAR;
	m->insn_len = (uint16_t)fde->insn_len;
	m->insn = fde->insn_len <= 8
			  ? short_insns(c->t, fde->insn_off, fde->insn_len)
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

int conv_memo_take(conv_pctx *c, size_t i)
{
	const cfi_fde *fde = &c->t->fdes[i];
	if (!c->memo || !memo_key_ok(fde))
		return 0;
	c->checked_fde = i; /* for fde_begin */
	c->checked = conv_rule_fde(c->abi, c->t, fde);
	if (c->checked != CONV_SKIP_NONE)
		return 0;
	uint64_t h = memo_hash(c, i);
	const conv_memo *m = memo_set(c, h);
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
	if (!conv_claim_fde(c, i))
		return -1;
	conv_skip s = (conv_skip)(m->out & 0x1f);
	if (!s) {
		/* Its FRE data is shared, not copied (a copy would be read
		 * from wherever the first one is, a cache miss each): enc is
		 * read-only once written, and the encoder writes each
		 * function's data from where enc_off says. */
		sfe_func *fn = conv_new_func(c, fde, (uint32_t)i, fde->pc_begin,
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
	return conv_note(c, i, s) ? 1 : -1;
}

conv_spare conv_memo_spare(conv_pctx *c)
{
	conv_spare s = {c->memo_mem, c->memo_mem ? c->memo_bytes : 0};
	c->memo = NULL;
	c->memo_tags = NULL;
	return s;
}

void conv_cache_free(conv_pctx *c)
{
	if (!c->memo_in_set)
		free(c->memo_mem);
	c->memo_in_set = false;
	c->memo_mem = NULL;
	c->memo = NULL;
	c->memo_tags = NULL;
	free(c->first);
	c->first = NULL;
}
