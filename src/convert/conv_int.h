/* Internal interfaces of the conversion (src/convert, not installed):
 * the projection's working state (conv_project.c: DWARF rows -> FREs),
 * the FRE writer it calls once per function (sfe_encode.c) and the
 * claimed-range set for duplicate FDEs (conv_claim.c). */
#ifndef E2S_CONV_INT_H
#define E2S_CONV_INT_H

#include <stdlib.h>
#include <string.h>

#include "../common/mem.h"
#include "../sframe/sframe_fmt.h"
#include "convert.h"
#include "conv_rules.h"

typedef struct {
	size_t n, cap;
} grow_t;

/* Room for need elements in *p (doubling); false on OOM. */
static inline bool conv_grow(void **p, grow_t *g, size_t elem, size_t need)
{
	if (need <= g->cap)
		return true;
	size_t cap = g->cap ? g->cap : 64;
	while (cap < need)
		cap *= 2;
	void *np = e2s_realloc_big(*p, cap * elem);
	if (!np)
		return false;
	*p = np;
	g->cap = cap;
	return true;
}

/* Memory a step may borrow instead of allocating: a block done with
 * (the memo table, once every FDE is projected), its pages faulted in
 * already where it was used. Taken front to back; a copy passed by
 * value gives back what the callee took when it returns. */
typedef struct {
	unsigned char *p;
	size_t left;
} conv_spare;

/* bytes from s (8-aligned), or NULL where it has not that many. */
static inline void *conv_spare_take(conv_spare *s, size_t bytes)
{
	if (bytes > s->left)
		return NULL;
	void *r = s->p;
	size_t step = bytes + (-bytes & 7);
	if (step > s->left)
		step = s->left;
	s->p += step;
	s->left -= step;
	return r;
}

/* bytes from s, or else allocated (e2s_alloc_big) and put in *own for
 * the caller to free; NULL on OOM. */
static inline void *conv_spare_alloc(conv_spare *s, size_t bytes, void **own)
{
	void *r = conv_spare_take(s, bytes);
	return r ? r : (*own = e2s_alloc_big(bytes));
}

/* conv_grow for the set's arrays (funcs, enc), which may lie in its
 * block (sfe_set.block): one there moves out to memory of its own. */
static inline bool conv_grow_set(const sfe_set *s, void **p, grow_t *g,
				 size_t elem, size_t need)
{
	if (need <= g->cap || !sfe_in_block(s, *p))
		return conv_grow(p, g, elem, need);
	void *np = NULL;
	grow_t ng = {g->n, 0};
	if (!conv_grow(&np, &ng, elem, need))
		return false;
	memcpy(np, *p, g->cap * elem);
	*p = np;
	*g = ng;
	return true;
}

/* ---- Claimed ranges (conv_claim.c) ------------------------------------ */

/* An FDE's range, claimed as the FDE ends (conv_project.c): the first FDE
 * in section order to claim a range keeps it, and a later one that
 * overlaps a kept claim of the same section is a duplicate. Decided
 * once every FDE has claimed (conv_claims_resolve). */
typedef struct {
	uint32_t fde;   /* its index in the table: the range is the FDE's
	                 * (conv_claim_span), not kept twice */
	uint32_t func;  /* its functions: set->funcs from here to the next
	                 * claim's func (made in claim order) */
} conv_fclaim;

/* What a claim covers: [start, end) of section shndx. */
typedef struct {
	uint64_t start, end;
	uint32_t shndx;
} conv_span;

static inline conv_span conv_claim_span(const cfi_table *t,
					const conv_fclaim *k)
{
	const cfi_fde *fde = &t->fdes[k->fde];
	return (conv_span){fde->pc_begin, fde->pc_begin + fde->pc_range,
			   cfi_fde_reloc(t, fde).shndx};
}

/* Which of cl[0..n) (claims of t's FDEs), claimed in section order, lose
 * to an earlier one they overlap (lost[k] = 1, else 0), and the others
 * by (section, start) into order (indices into cl; *nwin of them; room
 * for n). Its scratch comes from sp where it fits. false on OOM. */
bool conv_claims_resolve(const cfi_table *t, const conv_fclaim *cl,
			size_t n, uint8_t *lost, uint32_t *order, size_t *nwin,
			conv_spare sp);

/* The exact first-wins rule for claims that overlap, one at a time in
 * section order: a treap keyed by (section, start), O(log n) each, with
 * an O(1) path for keys in address order. */
typedef struct {
	struct conv_claim {
		uint64_t start, end;
		uint32_t left, right, prio;
		uint32_t shndx;
	} *v;
	grow_t g;
	uint32_t root;
	uint32_t max;  /* the claim with the largest key */
	uint32_t rng;  /* treap priorities: xorshift, fixed seed */
	uint32_t *spine; /* right spine, root first (ends at max) */
	grow_t gsp;
	bool spine_ok;
} conv_claims;

void conv_claims_init(conv_claims *c);
void conv_claims_free(conv_claims *c);
/* Claim [start, end) of section shndx: 1 done, 0 it overlaps an earlier
 * claim (first in section order wins), -1 out of memory. */
int conv_claim(conv_claims *c, uint32_t shndx, uint64_t start, uint64_t end);

/* ---- Orders (conv_sort.c) --------------------------------------------- */

/* Sort ix[0..n), indices into cl, by their claims' (shndx, start), the
 * index breaking ties (so the order does not depend on the method).
 * Its scratch comes from sp where it fits. false on OOM. */
bool conv_sort_claims(const cfi_table *t, const conv_fclaim *cl,
		      uint32_t *ix, size_t n, conv_spare sp);
/* v[i] = the old v[from[i]] for i < n, from[0..n) a permutation of
 * [0, n) (overwritten). */
void conv_permute_funcs(sfe_func *v, size_t n, uint32_t *from);

/* ---- Working state of one projection ---------------------------------- */

/* A program converted before (conv_project.c, "Programs seen before"):
 * 32 bytes, so that a set of two is one cache line. */
#define CONV_MEMO_SETS 8192 /* at most */
#define CONV_MEMO_FAR UINT16_MAX /* reach: this or more */
typedef struct {
	uint64_t insn;     /* a program of up to 8 bytes: its bytes (the rest
	                    * 0); a longer one: its section offset */
	uint32_t tag;      /* hash bits, never 0 (0: empty) */
	uint32_t pc_range;
	uint32_t enc_off;
	uint16_t reach;    /* cfi_fde.reach, or CONV_MEMO_FAR */
	uint16_t insn_len, cie, fre_count, enc_len;
	uint8_t out;       /* skip | fde_type << 5 | fre_type << 6 */
} conv_memo;
_Static_assert(sizeof(conv_memo) == 32, "two memo entries per cache line");
_Static_assert(CONV_SKIP_COUNT_ <= 32, "a skip reason in conv_memo.out's 5 bits");

/* A projected row: where it starts, its CFA offset, and the projection
 * it shares the rest with (conv_fdeproj.full[base]): a row whose CFA
 * offset alone changed adds no projection. */
typedef struct {
	uint64_t start;
	int64_t cfa_off;
	size_t base;
} conv_prow_at;

/* The rows of the FDE being projected, as they come (conv_project.c,
 * fde_row): reduced to conv_prow at once, its functions made when the
 * FDE ends (fde_end). */
typedef struct {
	size_t fde;         /* the FDE (SIZE_MAX: none) */
	uint64_t pc, end;   /* its range */
	bool active;        /* its rows are projected (fde_precheck passed) */
	bool rows_bad;      /* the table's row range of it is broken */
	size_t nrows;       /* rows seen (up to the first PLT row); only
	                     * whether it is 0 counts (conv_cfa_row adds
	                     * none) */
	conv_skip row_skip;  /* the first row SFrame cannot express */
	bool flex;          /* some row needs a flexible FDE */
	unsigned same;      /* CFI_COL_* the rows since the last projected
	                     * one share with their predecessors */
	bool cfa_run;       /* pv's last row passed cfa_run_ok, with a CFA on: */
	uint16_t prev_cfa_reg;
	size_t fast_left;   /* rows conv_cfa_row may still take (conv_cache.h
	                     * conv_cfa_arm), 0 when it may not */
	conv_prow_at *pv;    /* the projected rows */
	grow_t gp;
	conv_prow *full;     /* the projections they share */
	grow_t gfull;
	size_t nfre;        /* their FREs, built as they come (conv_pctx.fres) */
	conv_skip word_skip; /* the first data word that did not fit */
	bool plt;           /* a PLT CFA expression was seen, at pstart */
	uint64_t pstart;
	uint32_t plt_k;
	conv_skip plt_skip;  /* why the PLT rows do not fit */
} conv_fdeproj;

/* What fde_row_any made of an FDE's first row whose rules are its CIE's
 * initial ones (cfi_row.same == CFI_COL_ALL on a first row), kept per
 * CIE: most FDEs begin that way, and it depends on nothing else. */
typedef struct {
	uint8_t state;      /* CONV_FIRST_* */
	bool flex, cfa_run;
	uint16_t cfa_reg;
	conv_skip skip;      /* project_full's verdict */
	conv_skip word_skip; /* make_fre's */
	conv_prow full;
	sfe_fre fre;        /* its start aside */
} conv_first;
enum { CONV_FIRST_NONE = 0, CONV_FIRST_KEPT, CONV_FIRST_NEVER };

typedef struct {
	const cfi_table *t;
	const abi_desc *abi;
	bool cache;      /* the caches of conv_cache.c are used */
	bool v2;         /* writing SFrame V2 */
	unsigned retcol; /* the current FDE's CIE return-address column */
	conv_fdeproj f;   /* the FDE being projected */
	sfe_set *set;
	grow_t gf;       /* set->funcs */
	sfe_fre *fres;   /* the current FDE's FREs (sfe_func.enc_off indexes
	                  * them until its FRE data is written) */
	grow_t gr;
	conv_fclaim *cl;  /* claims, in section order */
	grow_t gcl;
	conv_first *first; /* per CIE index, CONV_FIRST_NONE past gfirst.n */
	grow_t gfirst;
	conv_verdicts *v; /* each FDE's */
	grow_t gs; /* v->fde_skip */
	grow_t ge; /* set->enc */
	bool started;
	bool memo_on;    /* streaming: remember programs (conv_memo) */
	bool no_block;   /* never put the set's arrays in one block */
	size_t block_at; /* where they go in set->block when it was made
	                  * with the FDE array first (conv_stream_room) */
	conv_memo *memo;  /* memo_sets sets of two, NULL until used */
	size_t memo_sets; /* a power of two, up to CONV_MEMO_SETS */
	uint16_t *memo_tags; /* each entry's tag's low half (0: empty), apart:
	                      * a lookup that finds nothing reads these only */
	void *memo_mem;   /* the block memo and memo_tags are in */
	size_t memo_bytes; /* its size */
	bool memo_in_set; /* memo_mem lies in set->block (not freed alone) */
	size_t hash_fde; /* the FDE whose key hash_val is (SIZE_MAX: none) */
	uint64_t hash_val;
	size_t checked_fde; /* the FDE whose fde_precheck checked is */
	conv_skip checked;
} conv_pctx;

#define CONV_MAX_FRES 65535u
#define CONV_MAX_MASK_SIZE (1u << 20)

/* Word by word (words past ndw are 0): no call to memcmp per FRE. */
static inline bool conv_fre_same(const sfe_fre *a, const sfe_fre *b)
{
	if (a->ndw != b->ndw || a->base_fp != b->base_fp ||
	    a->mangled_ra != b->mangled_ra)
		return false;
	for (unsigned i = 0; i < sizeof a->dw / sizeof a->dw[0]; i++)
		if (a->dw[i] != b->dw[i])
			return false;
	return true;
}

/* Does some PC of [pc, end) use this row? Empty rows are dropped. */
static inline bool conv_row_live(const cfi_row *r, uint64_t pc, uint64_t end)
{
	uint64_t rs = r->start < pc ? pc : r->start;
	uint64_t re = r->end > end ? end : r->end;
	return rs < re;
}

/* An FRE's start: from the FDE's start to its row's (rows cover it). */
static inline uint32_t conv_fre_start(const conv_fdeproj *f, uint64_t start)
{
	uint64_t rs = start < f->pc ? f->pc : start;
	return (uint32_t)(rs - f->pc);
}

/* The FRE just built in v[*n] after the *n kept ones: one equal to the
 * FRE before it is merged into it, and one at the previous one's start
 * replaces it; otherwise it is kept. */
static inline void conv_fre_keep(sfe_fre *v, size_t *n)
{
	size_t w = *n;
	if (w > 0 && conv_fre_same(&v[w - 1], &v[w]))
		return;
	if (w > 0 && v[w - 1].start == v[w].start) {
		v[w - 1] = v[w];
		return;
	}
	*n = w + 1;
}

/* ---- The FRE builder (conv_fres.c) ------------------------------------- */

/* A new function of FDE fdeidx; its FREs follow in c->fres (enc_off
 * holds the index of its first one until its FRE data is written).
 * NULL on OOM. */
sfe_func *conv_new_func(conv_pctx *c, const cfi_fde *fde, uint32_t fdeidx,
		       uint64_t start, uint64_t size);
/* The FRE of projected row pa after the FDE's FREs so far; false on
 * OOM. A data word that does not fit is remembered (f->word_skip). */
bool conv_add_fre(conv_pctx *c, const conv_prow_at *pa);
/* The FDE's FREs again from its projected rows, as a row just made it
 * flexible. false on OOM. */
bool conv_rebuild_fres(conv_pctx *c);
/* The functions of FDE i from its projected rows (a PLT's too), their
 * FRE data written into set->enc (V2 restricted); the skip reason if
 * none. *oom on allocation failure. */
conv_skip conv_fde_funcs(conv_pctx *c, const cfi_fde *fde, uint32_t i,
		       bool *oom);

/* ---- The driver (conv_project.c), for the caches ------------------------ */

/* The next row of the FDE begun, projected in full. Only allocation
 * failures are errors. */
e2s_err conv_fde_row_gen(conv_pctx *c, const cfi_row *r);
/* Claim FDE i's range (read from the FDE when the claims are settled),
 * its functions to follow from set->funcs[gf.n] (up to the next
 * claim's). Whether an earlier FDE has it is decided at the end
 * (pctx_finish). false on OOM. */
static inline bool conv_claim_fde(conv_pctx *c, size_t i)
{
	if (c->gcl.n >= c->gcl.cap &&
	    (c->gcl.n >= UINT32_MAX ||
	     !conv_grow((void **)&c->cl, &c->gcl, sizeof *c->cl, c->gcl.n + 1)))
		return false;
	c->cl[c->gcl.n++] = (conv_fclaim){(uint32_t)i, (uint32_t)c->gf.n};
	return true;
}

/* Record FDE i's outcome; false on OOM. */
static inline bool conv_note(conv_pctx *c, size_t i, conv_skip s)
{
	if (!conv_grow((void **)&c->v->fde_skip, &c->gs, 1, i + 1))
		return false;
	c->v->fde_skip[i] = (uint8_t)s;
	if (i >= c->gs.n)
		c->gs.n = i + 1;
	c->v->counts[s]++;
	return true;
}


#endif
