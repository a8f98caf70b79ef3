/* The fused fast path: one FDE's CFI program straight to FREs, keeping
 * only the state SFrame needs (CFA, RA, FP, SP with its save provenance,
 * the AArch64 signing toggle) and emitting an FRE at each location
 * change, without DWARF rows in between. It takes the FDEs whose every
 * row a default FDE expresses, with the common opcodes; at anything else
 * it gives up (nothing changed) and the general path (cfi_interp.c rows,
 * sfe_project.c) decides, skip reason included. Both must give the same
 * bytes: tools/sframe-checksums.sh compares them over a corpus.
 *
 * The CIE's initial state is computed once per CIE. The instruction
 * bytes are read here directly, bounds-checked, for the opcodes the fast
 * path takes; any other opcode, an operand running past the program, an
 * overlong LEB128 or a register the ABI does not define sends the FDE to
 * the general path, which reports such problems. */
#include "../cfi/cfi_int.h" /* DW_CFA_* */
#include "sfe_int.h"
#include "sframe_fmt.h"

enum { RA_UNSPEC = 0, RA_STACK, RA_UNDEF, RA_SAME };
enum { FP_NONE = 0, FP_STACK };
enum { SPR_NONE = 0, SPR_OFF, SPR_REG };

/* The rules in force; value-copyable. */
typedef struct {
	int64_t cfa_off, ra_off, fp_off, sp_off;
	int32_t sp_k;        /* SP save provenance k (CFI_PROV_KNOWN) */
	uint16_t cfa_reg, sp_reg;
	uint8_t cfa_set, ra, fp, sp, sp_prov, mangled;
} fst;

#define FAST_SLOTS 16 /* as cfi_interp.c */

struct sfe_fast {
	struct fcie {
		uint8_t status; /* 0 not yet, 1 usable, 2 not for the fast path */
		fst init;
	} *cies;
	size_t ncies;
	fst stack[CFI_MAX_STATE_DEPTH];
};

/* One program run. */
typedef struct {
	sfe_pctx *c;
	sfe_fast *f;
	const cfi_cie *cie;
	const fst *init;    /* NULL in the CIE */
	fst cur;
	unsigned depth;
	uint64_t loc, end, begin;
	bool dirty;         /* rules changed since the last FRE */
	bool be;            /* target byte order */
	uint8_t sw;         /* bytes of an FRE start as written (1, 2, 4) */
	uint32_t nfres;     /* FREs written */
	size_t blob;        /* offset of this function's bytes in set->enc */
	struct { uint8_t info, ndw; int32_t dw[3]; uint32_t start; } last;
	                    /* the last FRE written */
	bool sp_set;        /* an SP save rule was set in this group */
	int64_t grp_cfa_off; /* CFA rule when this location's group began */
	uint16_t grp_cfa_reg;
	uint8_t grp_cfa_set;
	struct { uint8_t kind; uint16_t reg; int32_t k; int64_t off; } slots[FAST_SLOTS];
	unsigned nslots;
} frun;

static bool fits_i32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

static int64_t factor(uint64_t v, int64_t align)
{
	return (int64_t)(v * (uint64_t)align);
}

/* The info byte for n data words dw (narrowest width holding them all,
 * as signed values), as sfe_encode writes it. */
static inline uint8_t fre_info(const int32_t *dw, unsigned n, bool base_fp,
			       bool mangled)
{
	uint32_t sg = 0;
	for (unsigned k = 0; k < n; k++)
		sg |= (uint32_t)(dw[k] ^ (dw[k] >> 31));
	unsigned code = sg > 0x7fff ? SF_FRE_DATAWORD_4B
			: sg > 0x7f ? SF_FRE_DATAWORD_2B : SF_FRE_DATAWORD_1B;
	return (uint8_t)SF_FRE_INFO(base_fp, n, code, mangled);
}

/* The data words and info byte a default FDE's FRE has for the current
 * rules (make_fre's choices; the info byte as sfe_encode writes it);
 * false where that needs more than the fast path knows. One version per
 * ABI: RA at the fixed slot and FP word (AMD64); RA and FP words
 * (AArch64); RA word or "not saved", FP word, scaled CFA (s390x). */
static inline bool project_amd64(const fst *s, uint8_t *info, uint8_t *ndw,
				 int32_t dw[3])
{
	if (s->ra == RA_UNDEF) {
		*info = *ndw = 0; /* outermost: no data words, info byte 0 */
		return true;
	}
	if (s->ra != RA_STACK || s->ra_off != SF_AMD64_CFA_FIXED_RA_OFFSET ||
	    !s->cfa_set || (s->cfa_reg != 7 && s->cfa_reg != 6) ||
	    !fits_i32(s->cfa_off) || (s->sp != SPR_NONE &&
				      (s->sp_prov != CFI_PROV_KNOWN || s->sp_k != 0)))
		return false;
	unsigned n = 1;
	dw[0] = (int32_t)s->cfa_off;
	if (s->fp == FP_STACK) {
		if (!fits_i32(s->fp_off))
			return false;
		dw[n++] = (int32_t)s->fp_off;
	}
	*info = fre_info(dw, n, s->cfa_reg == 6, false);
	*ndw = (uint8_t)n;
	return true;
}

static inline bool project_other(const fst *s, const cfi_abi_regs *r,
				 bool s390, uint8_t *info, uint8_t *ndw,
				 int32_t dw[3])
{
	if (s->ra == RA_UNDEF) {
		*info = *ndw = 0;
		return true;
	}
	if ((s->ra == RA_STACK &&
	     (s->ra_off == SF_FRE_RA_OFFSET_INVALID || !fits_i32(s->ra_off))) ||
	    !s->cfa_set || (s->cfa_reg != r->sp && s->cfa_reg != r->fp))
		return false;
	int32_t cw;
	if (sfe_cfa_word(s390, s->cfa_off, &cw) != SFE_SKIP_NONE ||
	    (s->fp == FP_STACK && !fits_i32(s->fp_off)))
		return false;
	if (!s390 && s->fp == FP_STACK && s->ra != RA_STACK)
		return false;
	if (s->sp != SPR_NONE &&
	    (s->sp_prov != CFI_PROV_KNOWN ||
	     -(int64_t)s->sp_k != (s390 ? SF_S390X_SP_VAL_OFFSET : 0)))
		return false;
	unsigned n = 0;
	dw[n++] = (int32_t)cw;
	if (s->ra == RA_STACK)
		dw[n++] = (int32_t)s->ra_off;
	else if (s390 && s->fp == FP_STACK)
		dw[n++] = SF_FRE_RA_OFFSET_INVALID;
	if (s->fp == FP_STACK)
		dw[n++] = (int32_t)s->fp_off;
	bool base_fp = s->cfa_reg == r->fp && s->cfa_reg != r->sp;
	*info = fre_info(dw, n, base_fp, !s390 && s->mangled);
	*ndw = (uint8_t)n;
	return true;
}

static inline bool project(const frun *x, uint8_t *info, uint8_t *ndw,
			   int32_t dw[3])
{
	switch (x->c->abi) {
	case CFI_ABI_AMD64:
		return project_amd64(&x->cur, info, ndw, dw);
	case CFI_ABI_AARCH64:
		return project_other(&x->cur, x->c->regs, false, info, ndw, dw);
	default:
		return project_other(&x->cur, x->c->regs, true, info, ndw, dw);
	}
}

static inline uint8_t *put_be_le(uint8_t *p, uint32_t v, unsigned n, bool be)
{
	for (unsigned i = 0; i < n; i++)
		p[be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
	return p + n;
}

/* SP save provenance, as cfi_interp.c settles it at a group's end. */
static void close_group_sp(frun *x)
{
	fst *s = &x->cur;
	if (s->sp_prov == CFI_PROV_PENDING) {
		bool same = s->cfa_set == x->grp_cfa_set &&
			    s->cfa_reg == x->grp_cfa_reg &&
			    s->cfa_off == x->grp_cfa_off;
		s->sp_prov = same ? CFI_PROV_KNOWN : CFI_PROV_NONE;
		if (same) {
			unsigned k = 0;
			while (k < x->nslots &&
			       !(x->slots[k].kind == s->sp &&
				 (s->sp == SPR_REG ? x->slots[k].reg == s->sp_reg
						   : x->slots[k].off == s->sp_off)))
				k++;
			if (k == x->nslots && k < FAST_SLOTS)
				x->nslots++;
			if (k < x->nslots) {
				x->slots[k].kind = s->sp;
				x->slots[k].reg = s->sp_reg;
				x->slots[k].off = s->sp_off;
				x->slots[k].k = s->sp_k;
			}
		}
	}
	if (x->sp_set && s->sp_prov == CFI_PROV_NONE && s->sp != SPR_NONE) {
		for (unsigned k = 0; k < x->nslots; k++) {
			if (x->slots[k].kind == s->sp &&
			    (s->sp == SPR_REG ? x->slots[k].reg == s->sp_reg
					      : x->slots[k].off == s->sp_off)) {
				s->sp_prov = CFI_PROV_KNOWN;
				s->sp_k = x->slots[k].k;
				break;
			}
		}
	}
	x->sp_set = false;
}

static inline void close_group(frun *x)
{
	const fst *s = &x->cur;
	if (s->sp_prov == CFI_PROV_PENDING || x->sp_set)
		close_group_sp(x);
	x->grp_cfa_set = s->cfa_set;
	x->grp_cfa_reg = s->cfa_reg;
	x->grp_cfa_off = s->cfa_off;
}

/* The FRE of [loc, ...) if the rules changed since the last one, unless
 * equal to the last: written straight into the function's bytes (starts
 * x->sw wide for now; see finish). */
static bool flush(frun *x)
{
	if (!x->dirty)
		return true;
	uint8_t info, ndw;
	int32_t dw[3] = {0, 0, 0};
	if (!project(x, &info, &ndw, dw))
		return false;
	x->dirty = false;
	if (x->nfres && info == x->last.info && ndw == x->last.ndw &&
	    dw[0] == x->last.dw[0] && dw[1] == x->last.dw[1] &&
	    dw[2] == x->last.dw[2])
		return true;
	sfe_pctx *c = x->c;
	if (c->ge.n + SFE_FRE_MAX_BYTES > c->ge.cap &&
	    !sfe_grow((void **)&c->set->enc, &c->ge, 1, c->ge.n + SFE_FRE_MAX_BYTES))
		return false;
	uint8_t *p = c->set->enc + c->ge.n;
	uint32_t start = (uint32_t)(x->loc - x->begin);
	bool be = x->be;
	if (x->sw == 1) {
		*p++ = (uint8_t)start;
	} else if (x->sw == 2) {
		p[be ? 0 : 1] = (uint8_t)(start >> 8);
		p[be ? 1 : 0] = (uint8_t)start;
		p += 2;
	} else {
		p = put_be_le(p, start, 4, be);
	}
	*p++ = info;
	unsigned wb = 1u << SF_FRE_INFO_DWSIZE(info);
	if (wb == 1) {
		p[0] = (uint8_t)dw[0];
		p[1] = (uint8_t)dw[1];
		p[2] = (uint8_t)dw[2];
		p += ndw;
	} else {
		for (unsigned k = 0; k < ndw; k++)
			p = put_be_le(p, (uint32_t)dw[k], wb, be);
	}
	c->ge.n = (size_t)(p - c->set->enc);
	x->last.info = info;
	x->last.ndw = ndw;
	x->last.start = start;
	memcpy(x->last.dw, dw, sizeof dw);
	x->nfres++;
	return true;
}

/* To loc + d (d: the advance in bytes, not past the FDE's end). */
static inline bool move_by(frun *x, uint64_t d)
{
	if (!x->init || d > x->end - x->loc)
		return false;
	if (d) {
		close_group(x);
		if (!flush(x))
			return false;
		x->loc += d;
	}
	return true;
}

/* An SP save (DW_CFA_offset* or DW_CFA_register of SP). */
static void sp_save(frun *x, uint8_t kind, uint16_t reg, int64_t off)
{
	fst *s = &x->cur;
	s->sp = kind;
	s->sp_reg = reg;
	s->sp_off = off;
	s->sp_prov = CFI_PROV_NONE;
	s->sp_k = 0;
	if (!x->init)
		return; /* CIE: no provenance */
	x->sp_set = true;
	if (x->grp_cfa_set && x->grp_cfa_reg == x->c->regs->sp &&
	    fits_i32(x->grp_cfa_off)) {
		s->sp_prov = CFI_PROV_PENDING;
		s->sp_k = (int32_t)x->grp_cfa_off;
	}
}

/* A register rule (DW_CFA_offset family and the like) for a register
 * SFrame tracks; false: not for the fast path. */
static bool track(frun *x, uint8_t op, uint64_t reg, uint64_t b)
{
	const cfi_abi_regs *r = x->c->regs;
	fst *s = &x->cur;
	bool is_ra = reg == r->ra, is_fp = reg == r->fp;
	int64_t off;
	x->dirty = true;
	switch (op) {
	case DW_CFA_offset:
	case DW_CFA_offset_extended:
	case DW_CFA_offset_extended_sf:
		off = factor(b, x->cie->data_align);
		break;
	case DW_CFA_GNU_negative_offset_extended:
		off = factor(0 - b, x->cie->data_align);
		break;
	case DW_CFA_restore:
		if (is_ra) {
			s->ra = x->init ? x->init->ra : RA_UNSPEC;
			s->ra_off = x->init ? x->init->ra_off : 0;
		} else if (is_fp) {
			s->fp = x->init ? x->init->fp : FP_NONE;
			s->fp_off = x->init ? x->init->fp_off : 0;
		} else {
			s->sp = x->init ? x->init->sp : SPR_NONE;
			s->sp_reg = x->init ? x->init->sp_reg : 0;
			s->sp_off = x->init ? x->init->sp_off : 0;
			s->sp_prov = x->init ? x->init->sp_prov : CFI_PROV_NONE;
			s->sp_k = x->init ? x->init->sp_k : 0;
		}
		return true;
	case DW_CFA_undefined:
		if (!is_ra)
			return false;
		s->ra = RA_UNDEF;
		return true;
	case DW_CFA_same_value:
		if (is_ra)
			s->ra = RA_SAME;
		else if (is_fp)
			s->fp = FP_NONE;
		else
			return false;
		return true;
	case DW_CFA_register:
		if (b > r->max_reg)
			return false;
		if (is_ra) {
			if (b != r->ra)
				return false;
			s->ra = RA_SAME;
		} else if (is_fp) {
			if (b != r->fp)
				return false;
			s->fp = FP_NONE;
		} else {
			if (b == r->sp)
				return false;
			sp_save(x, SPR_REG, (uint16_t)b, 0);
		}
		return true;
	default:
		return false; /* val_offset, expressions: the general path */
	}
	if (is_ra) {
		s->ra = RA_STACK;
		s->ra_off = off;
	} else if (is_fp) {
		s->fp = FP_STACK;
		s->fp_off = off;
	} else {
		sp_save(x, SPR_OFF, 0, off);
	}
	return true;
}

/* ULEB128 at *p (before end); false if truncated or longer than the
 * general reader accepts (it will say so). */
static inline bool uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = *p;
	if (q < end && *q < 0x80) {
		*v = *q;
		*p = q + 1;
		return true;
	}
	uint64_t r = 0;
	for (unsigned sh = 0; q < end && sh < 63; sh += 7) {
		uint8_t c = *q++;
		r |= (uint64_t)(c & 0x7f) << sh;
		if (!(c & 0x80)) {
			*v = r;
			*p = q;
			return true;
		}
	}
	return false;
}

static inline bool sleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t r = 0;
	for (unsigned sh = 0; q < end && sh < 63; sh += 7) {
		uint8_t c = *q++;
		r |= (uint64_t)(c & 0x7f) << sh;
		if (!(c & 0x80)) {
			if ((c & 0x40) && sh + 7 < 64)
				r |= ~UINT64_C(0) << (sh + 7);
			*v = r;
			*p = q;
			return true;
		}
	}
	return false;
}

static inline bool advance(frun *x, uint64_t delta)
{
	uint64_t ca = x->cie->code_align;
	/* delta * ca without overflow (both below 2^32 cannot overflow) */
	if (((delta | ca) >> 32) != 0 && ca && delta > UINT64_MAX / ca)
		return false;
	return move_by(x, delta * ca);
}

/* Run the program bytes [p, end); false: not for the fast path. */
static bool run(frun *x, const uint8_t *p, const uint8_t *end, bool be)
{
	const cfi_abi_regs *r = x->c->regs;
	fst *s = &x->cur;
	int64_t da = x->cie->data_align;
	while (p < end) {
		uint8_t op = *p++;
		uint64_t a, b;
		switch (op >> 6) {
		case 1: /* advance_loc */
			if (!advance(x, op & 0x3f))
				return false;
			continue;
		case 2: /* offset */
			a = op & 0x3f;
			if (!uleb(&p, end, &b))
				return false;
			op = DW_CFA_offset;
			goto regrule;
		case 3: /* restore */
			a = op & 0x3f;
			b = 0;
			op = DW_CFA_restore;
			goto regrule;
		default:
			break;
		}
		switch (op) {
		case DW_CFA_nop:
			continue;
		case DW_CFA_advance_loc1:
			if (p >= end || !advance(x, *p++))
				return false;
			continue;
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4: {
			unsigned n = op == DW_CFA_advance_loc2 ? 2 : 4;
			if ((size_t)(end - p) < n)
				return false;
			a = e2s_load_uN(p, n, be);
			p += n;
			if (!advance(x, a))
				return false;
			continue;
		}
		case DW_CFA_def_cfa:
		case DW_CFA_def_cfa_sf:
			if (!uleb(&p, end, &a) ||
			    !(op == DW_CFA_def_cfa ? uleb(&p, end, &b) : sleb(&p, end, &b)) ||
			    a > r->max_reg)
				return false;
			s->cfa_set = 1;
			s->cfa_reg = (uint16_t)a;
			s->cfa_off = op == DW_CFA_def_cfa ? (int64_t)b : factor(b, da);
			x->dirty = true;
			continue;
		case DW_CFA_def_cfa_register:
			if (!uleb(&p, end, &a) || a > r->max_reg)
				return false;
			if (!s->cfa_set)
				s->cfa_off = 0;
			s->cfa_set = 1;
			s->cfa_reg = (uint16_t)a;
			x->dirty = true;
			continue;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_def_cfa_offset_sf:
			if (!(op == DW_CFA_def_cfa_offset ? uleb(&p, end, &a)
							 : sleb(&p, end, &a)) ||
			    !s->cfa_set)
				return false;
			s->cfa_off = op == DW_CFA_def_cfa_offset ? (int64_t)a : factor(a, da);
			x->dirty = true;
			continue;
		case DW_CFA_remember_state:
			if (x->depth >= CFI_MAX_STATE_DEPTH)
				return false;
			x->f->stack[x->depth++] = *s;
			continue;
		case DW_CFA_restore_state:
			if (!x->depth)
				return false;
			*s = x->f->stack[--x->depth];
			if (s->sp_prov == CFI_PROV_PENDING)
				s->sp_prov = CFI_PROV_NONE;
			x->dirty = true;
			continue;
		case DW_CFA_GNU_args_size:
			if (!uleb(&p, end, &a))
				return false;
			continue;
		case DW_CFA_AARCH64_negate_ra_state:
			if (x->c->abi != CFI_ABI_AARCH64)
				return false;
			s->mangled ^= 1;
			x->dirty = true;
			continue;
		case DW_CFA_offset_extended:
		case DW_CFA_GNU_negative_offset_extended:
		case DW_CFA_val_offset:
		case DW_CFA_register:
			if (!uleb(&p, end, &a) || !uleb(&p, end, &b))
				return false;
			goto regrule;
		case DW_CFA_offset_extended_sf:
		case DW_CFA_val_offset_sf:
			if (!uleb(&p, end, &a) || !sleb(&p, end, &b))
				return false;
			goto regrule;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
			if (!uleb(&p, end, &a))
				return false;
			b = 0;
			if (op == DW_CFA_restore_extended)
				op = DW_CFA_restore;
			goto regrule;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			if (!uleb(&p, end, &a) || !uleb(&p, end, &b) ||
			    b > (uint64_t)(end - p))
				return false;
			p += b;
			goto regrule;
		default:
			return false; /* set_loc, CFA expressions, PAuth_LR ... */
		}
	regrule:
		if (a > r->max_reg)
			return false;
		if (a == r->ra || a == r->fp || a == r->sp) {
			if (!track(x, op, a, b))
				return false;
		} else if (a == r->ra_sign) {
			return false; /* RA_SIGN_STATE: the general path */
		} else if (op == DW_CFA_register && b > r->max_reg) {
			return false;
		}
	}
	return true;
}

/* The CIE's initial rules, computed on first use. */
static const fst *cie_init(sfe_pctx *c, const cfi_section *sec, uint32_t ci)
{
	sfe_fast *f = c->fast;
	if (ci >= f->ncies) {
		size_t n = f->ncies ? 2 * f->ncies : 16;
		while (n <= ci)
			n *= 2;
		struct fcie *v = realloc(f->cies, n * sizeof *v);
		if (!v)
			return NULL;
		memset(v + f->ncies, 0, (n - f->ncies) * sizeof *v);
		f->cies = v;
		f->ncies = n;
	}
	struct fcie *fc = &f->cies[ci];
	if (fc->status == 0) {
		const cfi_cie *cie = &c->t->cies[ci];
		frun x;
		memset(&x, 0, sizeof x);
		x.c = c;
		x.f = f;
		x.cie = cie;
		bool ok = cie->status == E2S_ERR_OK && cie->ra_reg == c->regs->ra &&
			  (uint64_t)cie->insn_off + cie->insn_len <= sec->size &&
			  run(&x, sec->data + cie->insn_off,
			      sec->data + cie->insn_off + cie->insn_len, sec->big_endian);
		fc->status = ok ? 1 : 2;
		fc->init = x.cur;
	}
	return fc->status == 1 ? &fc->init : NULL;
}

/* Rewrite n FREs at p with starts of nw bytes instead of ow (nw < ow),
 * in place (the bytes only move down); returns the new end. */
static uint8_t *narrow_starts(uint8_t *p, uint32_t n, unsigned ow, unsigned nw,
			      bool be)
{
	const uint8_t *r = p;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t start = 0;
		for (unsigned i = 0; i < ow; i++)
			start |= (uint32_t)r[be ? ow - 1 - i : i] << (8 * i);
		r += ow;
		uint8_t info = *r;
		size_t len = 1 + (size_t)SF_FRE_INFO_COUNT(info) *
				 (1u << SF_FRE_INFO_DWSIZE(info));
		p = put_be_le(p, start, nw, be);
		memmove(p, r, len);
		p += len;
		r += len;
	}
	return p;
}

static unsigned start_bytes(uint64_t max)
{
	return max < 0x100 ? 1 : max < 0x10000 ? 2 : 4;
}

int sfe_fast_fde(sfe_pctx *c, const cfi_section *sec, size_t i)
{
	const cfi_table *t = c->t;
	const cfi_fde *fde = &t->fdes[i];
	if (c->abi != CFI_ABI_AMD64 && c->abi != CFI_ABI_AARCH64 &&
	    c->abi != CFI_ABI_S390X)
		return 0;
	if (fde->cie >= t->ncies || fde->pc_range == 0 ||
	    fde->pc_range > UINT32_MAX ||
	    fde->pc_begin + fde->pc_range < fde->pc_begin)
		return 0;
	if (!c->fast && !(c->fast = calloc(1, sizeof *c->fast)))
		return -1;
	const fst *init = cie_init(c, sec, fde->cie);
	if (!init)
		return 0;

	/* The function's bytes: 5 for the attribute, then the FREs. */
	if (c->ge.n > UINT32_MAX - 5 ||
	    !sfe_grow((void **)&c->set->enc, &c->ge, 1, c->ge.n + 5))
		return -1;
	frun x;
	x.c = c;
	x.f = c->fast;
	x.cie = &t->cies[fde->cie];
	x.init = init;
	x.cur = *init;
	x.depth = 0;
	x.loc = x.begin = fde->pc_begin;
	x.end = fde->pc_begin + fde->pc_range;
	x.dirty = true;
	x.sp_set = false;
	x.grp_cfa_set = init->cfa_set;
	x.grp_cfa_reg = init->cfa_reg;
	x.grp_cfa_off = init->cfa_off;
	x.nslots = 0;
	x.be = c->set->big_endian;
	/* Starts are below the function size; narrowed at the end if the
	 * largest one (the last) allows. */
	x.sw = (uint8_t)start_bytes(fde->pc_range - 1);
	x.nfres = 0;
	x.blob = c->ge.n;
	c->ge.n += 5;
	bool ok = (uint64_t)fde->insn_off + fde->insn_len <= sec->size &&
		  run(&x, sec->data + fde->insn_off,
		      sec->data + fde->insn_off + fde->insn_len, x.be);
	if (ok) {
		close_group(&x);
		ok = x.loc == x.end || flush(&x);
	}
	/* Functions to be split in parts (> 65535 FREs): the general path. */
	if (!ok || x.nfres > SFE_MAX_FRES || c->ge.n > UINT32_MAX) {
		c->ge.n = x.blob;
		return 0;
	}
	uint32_t shndx = fde->reloc.present ? fde->reloc.shndx : 0;
	int cl = sfe_claim(&c->claims, shndx, x.begin, x.end);
	if (cl <= 0) {
		c->ge.n = x.blob;
		if (cl < 0)
			return -1;
		return sfe_note(c, i, SFE_SKIP_DUPLICATE) ? 1 : -1;
	}
	sfe_func *fn = sfe_new_func(c, fde, (uint32_t)i, fde->pc_begin, fde->pc_range);
	if (!fn)
		return -1;
	uint8_t *blob = c->set->enc + x.blob;
	unsigned nw = start_bytes(x.nfres ? x.last.start : 0);
	if (nw < x.sw)
		c->ge.n = (size_t)(narrow_starts(blob + 5, x.nfres, x.sw, nw, x.be) -
				   c->set->enc);
	unsigned ft = nw == 1 ? SF_FRE_TYPE_ADDR1 : nw == 2 ? SF_FRE_TYPE_ADDR2
							    : SF_FRE_TYPE_ADDR4;
	put_be_le(blob, x.nfres, 2, x.be);
	blob[2] = (uint8_t)SF_FUNC_INFO(fn->signal, fn->pauth_b, SF_FDE_PCTYPE_INC, ft);
	blob[3] = SF_FDE_TYPE_DEFAULT;
	blob[4] = 0;
	fn->fre_count = x.nfres;
	fn->enc_off = (uint32_t)x.blob;
	fn->enc_len = (uint32_t)(c->ge.n - x.blob);
	c->set->nfres_enc += x.nfres;
	c->set->nfast++;
	return sfe_note(c, i, SFE_SKIP_NONE) ? 1 : -1;
}

void sfe_fast_free(sfe_fast *f)
{
	if (!f)
		return;
	free(f->cies);
	free(f);
}
