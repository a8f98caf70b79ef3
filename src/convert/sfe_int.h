/* Internal interfaces of the conversion (src/convert, not installed):
 * the projection's working state (sfe_project.c: DWARF rows -> FREs),
 * the FRE writer it calls once per function (sfe_encode.c) and the
 * claimed-range set for duplicate FDEs (sfe_claim.c). */
#ifndef E2S_SFE_INT_H
#define E2S_SFE_INT_H

#include <stdlib.h>
#include <string.h>

#include "../common/mem.h"
#include "../sframe/sframe_fmt.h"
#include "convert.h"
#include "sfe_rules.h"

typedef struct {
	size_t n, cap;
} grow_t;

/* Room for need elements in *p (doubling); false on OOM. */
static inline bool sfe_grow(void **p, grow_t *g, size_t elem, size_t need)
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

/* ---- Claimed ranges (sfe_claim.c) ------------------------------------ */

/* An FDE's range, claimed as the FDE ends (sfe_project.c): the first FDE
 * in section order to claim a range keeps it, and a later one that
 * overlaps a kept claim of the same section is a duplicate. Decided
 * once every FDE has claimed (sfe_claims_resolve). */
typedef struct {
	uint64_t start, end;
	uint32_t shndx;
	uint32_t fde;   /* its index in the table */
	uint32_t func;  /* its functions: set->funcs from here to the next
	                 * claim's func (made in claim order) */
} sfe_fclaim;

/* Which of cl[0..n), claimed in section order, lose to an earlier one
 * they overlap (lost[k] = 1, else 0), and the others by (section, start)
 * into order (indices into cl; *nwin of them). false on OOM. */
bool sfe_claims_resolve(const sfe_fclaim *cl, size_t n, uint8_t *lost,
			uint32_t *order, size_t *nwin);

/* The exact first-wins rule for claims that overlap, one at a time in
 * section order: a treap keyed by (section, start), O(log n) each, with
 * an O(1) path for keys in address order. */
typedef struct {
	struct sfe_claim {
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
} sfe_claims;

void sfe_claims_init(sfe_claims *c);
void sfe_claims_free(sfe_claims *c);
/* Claim [start, end) of section shndx: 1 done, 0 it overlaps an earlier
 * claim (first in section order wins), -1 out of memory. */
int sfe_claim(sfe_claims *c, uint32_t shndx, uint64_t start, uint64_t end);

/* ---- Orders (sfe_sort.c) --------------------------------------------- */

/* What is ordered by (section, start), and where it is: idx breaks ties
 * (claims of one start), so the order does not depend on the method. */
typedef struct {
	uint64_t start;
	uint32_t shndx, idx;
} sfe_key;

/* Sort key[0..n) by (shndx, start, idx). */
void sfe_sort_keys(sfe_key *key, size_t n);
/* v[i] = the old v[from[i]] for i < n, from[0..n) a permutation of
 * [0, n) (overwritten). */
void sfe_permute_funcs(sfe_func *v, size_t n, uint32_t *from);

/* ---- Working state of one projection ---------------------------------- */

/* A program converted before (sfe_project.c, "Programs seen before"):
 * 32 bytes, so that a set of two is one cache line. */
#define SFE_MEMO_SETS 8192 /* at most */
#define SFE_MEMO_FAR UINT16_MAX /* reach: this or more */
typedef struct {
	uint64_t insn;     /* a program of up to 8 bytes: its bytes (the rest
	                    * 0); a longer one: its section offset */
	uint32_t tag;      /* hash bits, never 0 (0: empty) */
	uint32_t pc_range;
	uint32_t enc_off;
	uint16_t reach;    /* cfi_fde.reach, or SFE_MEMO_FAR */
	uint16_t insn_len, cie, fre_count, enc_len;
	uint8_t out;       /* skip | fde_type << 5 | fre_type << 6 */
} sfe_memo;
_Static_assert(sizeof(sfe_memo) == 32, "two memo entries per cache line");
_Static_assert(SFE_SKIP_COUNT_ <= 32, "a skip reason in sfe_memo.out's 5 bits");

/* A projected row: where it starts, its CFA offset, and the projection
 * it shares the rest with (sfe_fdeproj.full[base]): a row whose CFA
 * offset alone changed adds no projection. */
typedef struct {
	uint64_t start;
	int64_t cfa_off;
	size_t base;
} sfe_prow_at;

/* The rows of the FDE being projected, as they come (sfe_project.c,
 * fde_row): reduced to sfe_prow at once, its functions made when the
 * FDE ends (fde_end). */
typedef struct {
	size_t fde;         /* the FDE (SIZE_MAX: none) */
	uint64_t pc, end;   /* its range */
	bool active;        /* its rows are projected (fde_precheck passed) */
	bool rows_bad;      /* the table's row range of it is broken */
	size_t nrows;       /* rows seen (up to the first PLT row) */
	sfe_skip row_skip;  /* the first row SFrame cannot express */
	bool flex;          /* some row needs a flexible FDE */
	unsigned same;      /* CFI_COL_* the rows since the last projected
	                     * one share with their predecessors */
	bool cfa_run;       /* pv's last row passed cfa_run_ok, with a CFA on: */
	uint16_t prev_cfa_reg;
	sfe_prow_at *pv;    /* the projected rows */
	grow_t gp;
	sfe_prow *full;     /* the projections they share */
	grow_t gfull;
	size_t nfre;        /* their FREs, built as they come (sfe_pctx.fres) */
	sfe_skip word_skip; /* the first data word that did not fit */
	bool plt;           /* a PLT CFA expression was seen, at pstart */
	uint64_t pstart;
	uint32_t plt_k;
	sfe_skip plt_skip;  /* why the PLT rows do not fit */
} sfe_fdeproj;

/* What fde_row_any made of an FDE's first row whose rules are its CIE's
 * initial ones (cfi_row.same == CFI_COL_ALL on a first row), kept per
 * CIE: most FDEs begin that way, and it depends on nothing else. */
typedef struct {
	uint8_t state;      /* SFE_FIRST_* */
	bool flex, cfa_run;
	uint16_t cfa_reg;
	sfe_skip skip;      /* project_full's verdict */
	sfe_skip word_skip; /* make_fre's */
	sfe_prow full;
	sfe_fre fre;        /* its start aside */
} sfe_first;
enum { SFE_FIRST_NONE = 0, SFE_FIRST_KEPT, SFE_FIRST_NEVER };

typedef struct {
	const cfi_table *t;
	const abi_desc *abi;
	bool cache;      /* the caches of sfe_cache.c are used */
	bool v2;         /* writing SFrame V2 */
	unsigned retcol; /* the current FDE's CIE return-address column */
	sfe_fdeproj f;   /* the FDE being projected */
	sfe_set *set;
	grow_t gf;       /* set->funcs */
	sfe_fre *fres;   /* the current FDE's FREs (sfe_func.enc_off indexes
	                  * them until its FRE data is written) */
	grow_t gr;
	sfe_fclaim *cl;  /* claims, in section order */
	grow_t gcl;
	sfe_first *first; /* per CIE index, SFE_FIRST_NONE past gfirst.n */
	grow_t gfirst;
	sfe_verdicts *v; /* each FDE's */
	grow_t gs; /* v->fde_skip */
	grow_t ge; /* set->enc */
	bool started;
	bool memo_on;    /* streaming: remember programs (sfe_memo) */
	sfe_memo *memo;  /* memo_sets sets of two, NULL until used */
	size_t memo_sets; /* a power of two, up to SFE_MEMO_SETS */
	uint16_t *memo_tags; /* each entry's tag's low half (0: empty), apart:
	                      * a lookup that finds nothing reads these only */
	size_t hash_fde; /* the FDE whose key hash_val is (SIZE_MAX: none) */
	uint64_t hash_val;
	size_t checked_fde; /* the FDE whose fde_precheck checked is */
	sfe_skip checked;
} sfe_pctx;

#define SFE_MAX_FRES 65535u
#define SFE_MAX_MASK_SIZE (1u << 20)

/* Word by word (words past ndw are 0): no call to memcmp per FRE. */
static inline bool sfe_fre_same(const sfe_fre *a, const sfe_fre *b)
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
static inline bool sfe_row_live(const cfi_row *r, uint64_t pc, uint64_t end)
{
	uint64_t rs = r->start < pc ? pc : r->start;
	uint64_t re = r->end > end ? end : r->end;
	return rs < re;
}

/* An FRE's start: from the FDE's start to its row's (rows cover it). */
static inline uint32_t sfe_fre_start(const sfe_fdeproj *f, uint64_t start)
{
	uint64_t rs = start < f->pc ? f->pc : start;
	return (uint32_t)(rs - f->pc);
}

/* The FRE just built in v[*n] after the *n kept ones: one equal to the
 * FRE before it is merged into it, and one at the previous one's start
 * replaces it; otherwise it is kept. */
static inline void sfe_fre_keep(sfe_fre *v, size_t *n)
{
	size_t w = *n;
	if (w > 0 && sfe_fre_same(&v[w - 1], &v[w]))
		return;
	if (w > 0 && v[w - 1].start == v[w].start) {
		v[w - 1] = v[w];
		return;
	}
	*n = w + 1;
}

/* ---- The FRE builder (sfe_fres.c) ------------------------------------- */

/* A new function of FDE fdeidx; its FREs follow in c->fres (enc_off
 * holds the index of its first one until its FRE data is written).
 * NULL on OOM. */
sfe_func *sfe_new_func(sfe_pctx *c, const cfi_fde *fde, uint32_t fdeidx,
		       uint64_t start, uint64_t size);
/* The FRE of projected row pa after the FDE's FREs so far; false on
 * OOM. A data word that does not fit is remembered (f->word_skip). */
bool sfe_add_fre(sfe_pctx *c, const sfe_prow_at *pa);
/* The FDE's FREs again from its projected rows, as a row just made it
 * flexible. false on OOM. */
bool sfe_rebuild_fres(sfe_pctx *c);
/* The functions of FDE i from its projected rows (a PLT's too), their
 * FRE data written into set->enc (V2 restricted); the skip reason if
 * none. *oom on allocation failure. */
sfe_skip sfe_fde_funcs(sfe_pctx *c, const cfi_fde *fde, uint32_t i,
		       bool *oom);

/* ---- The driver (sfe_project.c), for the caches ------------------------ */

/* The next row of the FDE begun, projected in full. Only allocation
 * failures are errors. */
e2s_err sfe_fde_row_gen(sfe_pctx *c, const cfi_row *r);
/* Claim FDE i's range, its functions to follow from set->funcs[gf.n]
 * (up to the next claim's). Whether an earlier FDE has it is decided at
 * the end (pctx_finish). false on OOM. */
static inline bool sfe_claim_fde(sfe_pctx *c, size_t i, const cfi_fde *fde)
{
	if (c->gcl.n >= c->gcl.cap &&
	    (c->gcl.n >= UINT32_MAX ||
	     !sfe_grow((void **)&c->cl, &c->gcl, sizeof *c->cl, c->gcl.n + 1)))
		return false;
	c->cl[c->gcl.n++] = (sfe_fclaim){
		fde->pc_begin, fde->pc_begin + fde->pc_range,
		fde->reloc.present ? fde->reloc.shndx : 0, (uint32_t)i,
		(uint32_t)c->gf.n};
	return true;
}

/* Record FDE i's outcome; false on OOM. */
static inline bool sfe_note(sfe_pctx *c, size_t i, sfe_skip s)
{
	if (!sfe_grow((void **)&c->v->fde_skip, &c->gs, 1, i + 1))
		return false;
	c->v->fde_skip[i] = (uint8_t)s;
	if (i >= c->gs.n)
		c->gs.n = i + 1;
	c->v->counts[s]++;
	return true;
}


#endif
