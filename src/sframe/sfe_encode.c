/* SFrame V3 (or V2) bytes (spec section 2): the one FRE writer and the
 * section assembly.
 *
 * The projection writes each function's FRE data once, when its FDE is
 * converted (sfe_put_fres): the attribute (V3) and its FREs, each FRE
 * with the narrowest start-address type of its function and the
 * narrowest data-word width holding all its words. sfe_encode then only
 * lays out header, sorted FDE index and those bytes; with sharing a
 * function whose bytes equal an earlier function's points at that copy
 * (and with share_runs, one whose bytes equal any run of the data laid
 * out before points into it). Output depends only on the set and the
 * options.
 *
 * sfh_num_fres with sharing: it stays the sum of the FDEs' FRE counts
 * (FREs as referenced, not as stored): libsframe 2.47 checks exactly that
 * sum when it byte-swaps a foreign-endian section (flip_sframe: "all FREs
 * flipped" j == sfh_num_fres), and our reader checks it always. Shared
 * data is still only safe for readers that do not rewrite it in place:
 * libsframe/objdump on the target's own byte order accept it (tested),
 * but a byte-swapping libsframe flips a shared block once per FDE and
 * also requires the per-FDE byte total to be <= sfh_fre_len, so it
 * rejects the section (SFRAME_ERR_BUF_INVAL). Hence the default
 * (SFE_SHARE_DEFAULT) shares on little-endian targets only: every
 * SFrame consumer of an AMD64 or little-endian AArch64 file runs on a
 * little-endian host or reads it with its own code, while s390x files
 * are read byte-swapped by tools on x86-64 hosts. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sfe.h"
#include "sframe_fmt.h"
#include "../common/hash.h"
#include "../common/mem.h"

/* Branch hint: the per-FRE loop's usual case laid out straight. */
#if defined(__GNUC__)
#define SFE_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define SFE_LIKELY(x) (x)
#endif

/* Which data words of an FRE are flexible-FDE control words (unsigned):
 * pairs CFA, RA (or one padding word 0), FP. */
static unsigned flex_ctrl_mask(const sfe_fre *f)
{
	unsigned m = 0;
	if (f->ndw >= 1)
		m |= 1u << 0;
	if (f->ndw >= 3) {
		m |= 1u << 2;
		if (f->dw[2] == 0) /* padding: FP pair at 3-4 */
			m |= 1u << 3;
		else if (f->ndw >= 5) /* RA pair 2-3, FP pair 4-5 */
			m |= 1u << 4;
	}
	return m;
}

/* Smallest SF_FRE_DATAWORD_* holding all words of f: control words as
 * unsigned, the others as signed values. v ^ (v >> 31) maps a signed
 * value to one with the same significant bits (v >= 0: v; else -v-1),
 * so OR-ing those keeps the widest. */
static inline unsigned fre_dwsize_code(const sfe_fre *f, bool flex)
{
	uint32_t sg = 0, un = 0;
	if (!flex) {
		/* A default FRE has at most 3 words (CFA, RA, FP), and words
		 * past ndw are 0 (sfe_fre): no count needed. v + 2^(b-1) in
		 * [0, 2^b) iff v fits b signed bits, and the OR of such
		 * biased words is below 2^b iff each is: the usual 1-byte
		 * case in one test. */
		const int32_t *d = f->dw;
		uint32_t w0 = (uint32_t)d[0], w1 = (uint32_t)d[1], w2 = (uint32_t)d[2];
		if (SFE_LIKELY(((w0 + 0x80u) | (w1 + 0x80u) | (w2 + 0x80u)) <= 0xff))
			return SF_FRE_DATAWORD_1B;
		if (((w0 + 0x8000u) | (w1 + 0x8000u) | (w2 + 0x8000u)) <= 0xffff)
			return SF_FRE_DATAWORD_2B;
		return SF_FRE_DATAWORD_4B;
	} else {
		unsigned ctrl = flex_ctrl_mask(f);
		for (unsigned i = 0; i < f->ndw; i++) {
			int32_t v = f->dw[i];
			if (ctrl & (1u << i))
				un |= (uint32_t)v;
			else
				sg |= (uint32_t)(v ^ (v >> 31));
		}
	}
	if (sg > 0x7fff || un > 0xffff)
		return SF_FRE_DATAWORD_4B;
	if (sg > 0x7f || un > 0xff)
		return SF_FRE_DATAWORD_2B;
	return SF_FRE_DATAWORD_1B;
}

static unsigned dw_bytes(unsigned code) { return 1u << code; }

static unsigned addr_bytes(unsigned fre_type)
{
	return fre_type == SF_FRE_TYPE_ADDR1 ? 1 : fre_type == SF_FRE_TYPE_ADDR2 ? 2 : 4;
}

static size_t nselected(const sfe_set *s, const sfe_encode_opts *o)
{
	return o && o->only ? o->nonly : s->nfuncs;
}

static const sfe_func *selected(const sfe_set *s, const sfe_encode_opts *o,
				size_t i)
{
	if (o && o->only)
		return o->only[i] < s->nfuncs ? &s->funcs[o->only[i]] : NULL;
	return &s->funcs[i];
}

static unsigned sframe_abi(const sfe_set *s)
{
	return abi_sframe_id(abi_get(s->abi), s->big_endian);
}

static inline uint8_t *put_uN(uint8_t *p, uint64_t v, unsigned n, bool be)
{
	switch (n) {
	case 1:
		p[0] = (uint8_t)v;
		return p + 1;
	case 2:
		p[be ? 0 : 1] = (uint8_t)(v >> 8);
		p[be ? 1 : 0] = (uint8_t)v;
		return p + 2;
	case 4:
		if (be) {
			p[0] = (uint8_t)(v >> 24);
			p[1] = (uint8_t)(v >> 16);
			p[2] = (uint8_t)(v >> 8);
			p[3] = (uint8_t)v;
		} else {
			p[0] = (uint8_t)v;
			p[1] = (uint8_t)(v >> 8);
			p[2] = (uint8_t)(v >> 16);
			p[3] = (uint8_t)(v >> 24);
		}
		return p + 4;
	case 8:
		p = put_uN(p, be ? v >> 32 : v, 4, be);
		return put_uN(p, be ? v : v >> 32, 4, be);
	default:
		for (unsigned i = 0; i < n; i++)
			p[be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
		return p + n;
	}
}

/* The fields of an FRE its info byte says besides the data-word size:
 * consecutive FREs mostly share them (sfe_fre keeps them together). */
_Static_assert(offsetof(sfe_fre, base_fp) == offsetof(sfe_fre, ndw) + 1 &&
	       offsetof(sfe_fre, mangled_ra) == offsetof(sfe_fre, ndw) + 2 &&
	       offsetof(sfe_fre, pad_) == offsetof(sfe_fre, ndw) + 3,
	       "info fields in one word");
static inline uint32_t info_key(const sfe_fre *f)
{
	uint32_t k;
	memcpy(&k, &f->ndw, sizeof k);
	return k;
}

/* The info byte of f without its data-word size (ORed in by write_fre). */
static unsigned info_base(const sfe_fre *f, bool flex)
{
	if (f->ndw == 0)
		return 0; /* RA undefined: info byte 0, as gas writes it */
	/* Flexible FDEs: base-register bit unused, 0 like gas. */
	return SF_FRE_INFO(flex || f->base_fp, f->ndw, SF_FRE_DATAWORD_1B,
			   f->mangled_ra);
}

/* FRE f; base: its info_base. */
static E2S_ALWAYS_INLINE uint8_t *write_fre(uint8_t *p, const sfe_fre *f, bool flex,
					    unsigned ft, bool be, unsigned base)
{
	/* Read once: the byte stores below may alias f for the compiler. */
	unsigned ndw = f->ndw;
	int32_t d0 = f->dw[0], d1 = f->dw[1], d2 = f->dw[2];
	unsigned code = fre_dwsize_code(f, flex);
	if (ft == SF_FRE_TYPE_ADDR1)
		*p++ = (uint8_t)f->start;
	else
		p = put_uN(p, f->start, addr_bytes(ft), be);
	/* The info byte is stored after the words, in another block: gcc
	 * would merge it and three 1-byte words into one 32-bit store it
	 * builds with shifts. The usual case then branches once. */
	uint8_t *info = p++;
	unsigned ib = base;
	if (SFE_LIKELY(code == SF_FRE_DATAWORD_1B)) {
		/* All of them: the room is SFE_FRE_MAX_BYTES per FRE, and
		 * bytes past ndw are overwritten or past the end. */
		p[0] = (uint8_t)d0;
		p[1] = (uint8_t)d1;
		p[2] = (uint8_t)d2;
		if (flex) {
			p[3] = (uint8_t)f->dw[3];
			p[4] = (uint8_t)f->dw[4];
			p[5] = (uint8_t)f->dw[5];
		}
		p += ndw;
	} else {
		ib |= SF_FRE_INFO(true, 0, code, false);
		for (unsigned i = 0; i < ndw; i++)
			p = put_uN(p, (uint64_t)(int64_t)f->dw[i], dw_bytes(code), be);
	}
	*info = (uint8_t)ib;
	return p;
}

static uint8_t func_info(const sfe_func *fn, unsigned ft, bool v2)
{
	/* V2's info byte is V3's without the signal bit (sfe_restrict
	 * removed signal frames). */
	return (uint8_t)SF_FUNC_INFO(!v2 && fn->signal, fn->pauth_b, fn->pc_type, ft);
}

/* ---- FRE data of one function ---------------------------------------- */

static E2S_ALWAYS_INLINE uint8_t *put_all(uint8_t *p, const sfe_fre *fres, uint32_t n,
			       bool flex, unsigned ft, bool be)
{
	/* Consecutive FREs mostly share their info fields: info_base is
	 * made again only when they differ from the FRE before's (read
	 * again from memory: only base is carried from one to the next;
	 * the first FRE apart, so that the loop needs no test for it). */
	if (n == 0)
		return p;
	unsigned base = info_base(&fres[0], flex);
	p = write_fre(p, &fres[0], flex, ft, be, base);
	for (uint32_t k = 1; k < n; k++) {
		if (info_key(&fres[k]) != info_key(&fres[k - 1]))
			base = info_base(&fres[k], flex);
		p = write_fre(p, &fres[k], flex, ft, be, base);
	}
	return p;
}

uint8_t *sfe_put_fres(uint8_t *p, const sfe_fre *fres, sfe_func *fn, bool v2,
		      bool be)
{
	/* The FRE type comes from the largest FRE start, not from the
	 * function size as gas does: a 300-byte function whose FREs all
	 * start below 256 still gets 1-byte starts (readers bound starts by
	 * the FDE's size, never by the type). Starts increase within a
	 * function, so the largest is the last. */
	uint32_t max = fn->fre_count ? fres[fn->fre_count - 1].start : 0;
	unsigned ft = max < 0x100 ? SF_FRE_TYPE_ADDR1
		      : max < 0x10000 ? SF_FRE_TYPE_ADDR2 : SF_FRE_TYPE_ADDR4;
	bool flex = fn->fde_type == SF_FDE_TYPE_FLEX;
	fn->fre_type = (uint8_t)ft;
	if (!v2) {
		p = put_uN(p, (uint16_t)fn->fre_count, 2, be);
		*p++ = func_info(fn, ft, false);
		*p++ = fn->fde_type & 0x1f;
		*p++ = fn->pc_type == SF_FDE_PCTYPE_MASK ? fn->rep_size : 0;
	}
	/* One loop per FDE type, byte order and start width, so that each
	 * is compiled with all three known. */
	uint32_t n = fn->fre_count;
	if (flex)
		return be ? put_all(p, fres, n, true, ft, true)
			  : put_all(p, fres, n, true, ft, false);
	if (be)
		return ft == SF_FRE_TYPE_ADDR1 ? put_all(p, fres, n, false, SF_FRE_TYPE_ADDR1, true)
		       : put_all(p, fres, n, false, ft, true);
	return ft == SF_FRE_TYPE_ADDR1 ? put_all(p, fres, n, false, SF_FRE_TYPE_ADDR1, false)
	       : ft == SF_FRE_TYPE_ADDR2 ? put_all(p, fres, n, false, SF_FRE_TYPE_ADDR2, false)
	       : put_all(p, fres, n, false, SF_FRE_TYPE_ADDR4, false);
}

/* ---- Section layout -------------------------------------------------- */

/* The stored copies: a slot holds the hash's high bits and the index of
 * the function whose bytes were stored (+1; 0: free). Eight bytes a slot
 * and about 1.5 slots a function: the table is touched at random, so its
 * size is pages faulted in. */
typedef struct {
	uint64_t *slot;
	size_t cap;
} table_t;

static uint64_t slot_of(uint64_t h, size_t idx)
{
	return (h & 0xffffffff00000000u) | (uint64_t)(idx + 1);
}

typedef struct {
	uint32_t *off;     /* per selected function: its start_fre_off; its
	                    * bytes are stored there iff that is the length
	                    * of the FRE data before it (a shared one points
	                    * before: plan_build) */
	uint64_t fre_len;  /* FRE sub-section size */
	uint64_t nfres;    /* FREs referenced by the FDEs */
	uint64_t unshared; /* FRE sub-section size without sharing */
	uint64_t shared;   /* functions reusing an earlier copy */
} plan_t;

static void plan_free(plan_t *p)
{
	free(p->off);
	memset(p, 0, sizeof *p);
}

/* A plan the encoder made for itself; a caller's (sfe_plan) stays. */
static void plan_drop(plan_t *p, bool own)
{
	if (own)
		plan_free(p);
}

/* V2 keeps count, info and repetition size in the FDE, not in the
 * bytes: equal bytes with different ones must not share. */
static uint32_t share_key(const sfe_func *fn, bool v2)
{
	if (!v2)
		return 0;
	return (uint32_t)(fn->fre_count << 16 |
			  (uint32_t)func_info(fn, fn->fre_type, true) << 8 |
			  (fn->pc_type == SF_FDE_PCTYPE_MASK ? fn->rep_size : 0)) + 1;
}

/* The slot of the stored copy equal to fn's bytes (same key), or a free
 * one. Slots hold only functions plan_loop checked. */
static E2S_ALWAYS_INLINE size_t find_copy(const sfe_set *s, const uint32_t *only,
					  const table_t *tab, const sfe_func *fn,
					  uint32_t key, uint64_t h, bool v2)
{
	size_t k = (size_t)(((uint64_t)(uint32_t)h * tab->cap) >> 32);
	for (uint64_t v; (v = tab->slot[k]) != 0;
	     k = k + 1 == tab->cap ? 0 : k + 1) {
		if ((v ^ h) >> 32)
			continue;
		size_t j = (size_t)(uint32_t)v - 1;
		const sfe_func *t = &s->funcs[only ? only[j] : j];
		if (t->enc_len == fn->enc_len && share_key(t, v2) == key &&
		    memcmp(s->enc + t->enc_off, s->enc + fn->enc_off,
			   t->enc_len) == 0)
			break;
	}
	return k;
}

bool sfe_share_p(const sfe_set *s, const sfe_encode_opts *o)
{
	if (!o || o->share_fres == SFE_SHARE_DEFAULT)
		return !s->big_endian;
	return o->share_fres > 0;
}

/* Runs inside the FRE data laid out so far (share_runs): every byte
 * position of it, chained by the hash of the RUN_KEY bytes starting
 * there, newest first. A function's bytes may equal the tail of one
 * stored copy and the head of the next, or any run inside one: a reader
 * takes the bytes from start_fre_off on, whatever wrote them. */
#define RUN_KEY 4
#define RUN_TRIES 64 /* candidates compared per function, newest first */
typedef struct {
	uint8_t *data;  /* the FRE sub-section so far */
	size_t len, cap;
	int32_t *head;  /* per hash bucket: newest position, -1 none */
	int32_t *next;  /* per position: the older one in its bucket */
	size_t nhead;
} runs_t;

static uint32_t run_hash(const uint8_t *p, size_t nhead)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return (v * 0x9e3779b1u) >> 7 & (uint32_t)(nhead - 1);
}

/* Append n bytes and index the positions whose key is now complete. */
static bool runs_add(runs_t *r, const uint8_t *p, size_t n)
{
	if (r->len + n > r->cap)
		return false; /* cap is the unshared total: never reached */
	memcpy(r->data + r->len, p, n);
	size_t from = r->len >= RUN_KEY - 1 ? r->len - (RUN_KEY - 1) : 0;
	r->len += n;
	for (size_t q = from; q + RUN_KEY <= r->len; q++) {
		uint32_t h = run_hash(r->data + q, r->nhead);
		r->next[q] = r->head[h];
		r->head[h] = (int32_t)q;
	}
	return true;
}

/* Offset of a run equal to p[0..n) in the data so far, or -1. */
static int64_t runs_find(const runs_t *r, const uint8_t *p, size_t n)
{
	if (n < RUN_KEY)
		return -1;
	int32_t q = r->head[run_hash(p, r->nhead)];
	for (int k = 0; q >= 0 && k < RUN_TRIES; k++, q = r->next[q])
		if ((size_t)q + n <= r->len && memcmp(r->data + q, p, n) == 0)
			return q;
	return -1;
}

static void runs_free(runs_t *r)
{
	free(r->data);
	free(r->head);
	free(r->next);
	memset(r, 0, sizeof *r);
}

static bool runs_init(runs_t *r, const sfe_set *s, const sfe_encode_opts *o)
{
	size_t n = nselected(s, o), total = 0;
	memset(r, 0, sizeof *r);
	for (size_t i = 0; i < n; i++)
		total += selected(s, o, i)->enc_len;
	if (total > INT32_MAX)
		return true; /* positions are int32_t: no run sharing */
	r->nhead = 1024;
	while (r->nhead < total)
		r->nhead *= 2;
	r->cap = total;
	r->data = malloc(total ? total : 1);
	r->head = malloc(r->nhead * sizeof *r->head);
	r->next = malloc((total ? total : 1) * sizeof *r->next);
	if (!r->data || !r->head || !r->next) {
		runs_free(r);
		return false;
	}
	memset(r->head, 0xff, r->nhead * sizeof *r->head);
	return true;
}

/* Functions whose FRE data is at the same place (a conversion stores a
 * program seen before once: conv_memo_*) need no hash or compare: the
 * first one's offset is theirs. A cache apart from the sharing rule,
 * off with -DEH2S_NO_CACHE: per 2^shift bytes of the set's data, the
 * function (+1) whose data starts there. Non-empty V3 data is at least
 * SFE_ATTR_BYTES (> 4) long, V2 data 2 (start and info byte), so copies
 * written one after another never meet in one entry; data that does
 * (overlapping, or another length or key) takes the general way. */
typedef struct {
	uint32_t *at; /* NULL: no shortcut */
} same_t;

static unsigned same_shift(bool v2)
{
	return v2 ? 1 : 2;
}

/* The table in the caller's scratch after the sharing table's bytes
 * (used), where it has room: memory already touched, so that the
 * shortcut costs no fresh page (one per 4 KiB of FRE data: more, on a
 * large file, than the hashing it saves). None otherwise. */
static void same_init(same_t *m, const sfe_set *s, const sfe_encode_opts *o,
		      size_t used, size_t n, bool share)
{
	m->at = NULL;
#ifndef EH2S_NO_CACHE
	size_t ents = (s->enc_len >> same_shift(s->version == SF_VERSION_2)) + 1;
	used += -used & 7;
	if (share && n < UINT32_MAX && o && o->scratch &&
	    o->scratch_bytes >= used &&
	    (o->scratch_bytes - used) / sizeof *m->at >= ents) {
		m->at = (uint32_t *)((unsigned char *)o->scratch + used);
		memset(m->at, 0, ents * sizeof *m->at);
	}
#else
	(void)s;
	(void)o;
	(void)used;
	(void)n;
	(void)share;
#endif
}

/* The earlier function (+1) whose data is fn's at the same place with
 * the same key, or 0 (then fn is recorded if its entry is free). */
static E2S_ALWAYS_INLINE uint32_t same_find(const same_t *m, const sfe_set *s,
					    const uint32_t *only,
					    const sfe_func *fn, uint32_t key,
					    size_t i, bool v2)
{
	uint32_t *e = &m->at[fn->enc_off >> same_shift(v2)];
	if (*e == 0) {
		*e = (uint32_t)i + 1;
		return 0;
	}
	const sfe_func *t = &s->funcs[only ? only[*e - 1] : *e - 1];
	if (t->enc_off == fn->enc_off && t->enc_len == fn->enc_len &&
	    share_key(t, v2) == key)
		return *e;
	return 0;
}

/* plan_build's walk over the selection, its flags passed as constants
 * where they are known. */
static E2S_ALWAYS_INLINE e2s_err plan_loop(const sfe_set *s, const uint32_t *only,
					   size_t n, bool v2, bool share,
					   bool runs, const table_t *tab,
					   const same_t *same, runs_t *rs, plan_t *p,
					   e2s_diag *diag)
{
	e2s_err e = E2S_ERR_OK;
	uint32_t *off = p->off;
	/* Kept in locals: the stores to off[] need not reload them. */
	uint64_t len = 0, nfres = 0, unshared = 0, shared = 0, last_start = 0;
	uint32_t last_shndx = 0;
	for (size_t i = 0; i < n; i++) {
		if (only && only[i] >= s->nfuncs) {
			e = e2s_fail(diag, E2S_ERR_INTERNAL, NULL, 0,
				     "selected function %zu out of range", i);
			break;
		}
		const sfe_func *fn = &s->funcs[only ? only[i] : i];
		uint32_t eo = fn->enc_off, el = fn->enc_len;
		if ((uint64_t)eo + el > s->enc_len) {
			e = e2s_fail(diag, E2S_ERR_INTERNAL, NULL, 0,
				     "function %zu: FRE data out of range", i);
			break;
		}
		if (last_shndx > fn->shndx ||
		    (last_shndx == fn->shndx && last_start > fn->start)) {
			e = e2s_fail(diag, E2S_ERR_INTERNAL, NULL, 0,
				     "functions not sorted");
			break;
		}
		last_shndx = fn->shndx;
		last_start = fn->start;
		if (len > UINT32_MAX) {
			e = e2s_fail(diag, E2S_ERR_TOO_LARGE, ".sframe", 0,
				     "FRE sub-section over 4 GiB");
			break;
		}
		unshared += el;
		nfres += fn->fre_count;
		off[i] = (uint32_t)len;
		/* An empty V2 FRE run needs no storage to share. */
		if (!share || el == 0) {
			len += el;
			continue;
		}
		uint32_t key = share_key(fn, v2);
		uint32_t j = same->at ? same_find(same, s, only, fn, key, i, v2) : 0;
		if (j) {
			off[i] = off[j - 1];
			shared++;
			continue;
		}
		uint64_t h = e2s_hash_bytes((uint64_t)key << 32 ^ el, s->enc + eo, el);
		size_t k = find_copy(s, only, tab, fn, key, h, v2);
		if (tab->slot[k]) {
			off[i] = off[(uint32_t)tab->slot[k] - 1];
			shared++;
			continue;
		}
		tab->slot[k] = slot_of(h, i);
		int64_t at = runs ? runs_find(rs, s->enc + eo, el) : -1;
		if (at >= 0) {
			off[i] = (uint32_t)at;
			shared++;
			continue;
		}
		if (runs && !runs_add(rs, s->enc + eo, el)) {
			e = e2s_fail(diag, E2S_ERR_INTERNAL, ".sframe", 0,
				     "FRE run index overflow");
			break;
		}
		len += el;
	}
	p->fre_len = len;
	p->nfres = nfres;
	p->unshared = unshared;
	p->shared = shared;
	return e;
}

/* Offsets of every selected function's FRE data in the FRE sub-section,
 * in index order; with sharing, bytes equal to an earlier function's
 * point at that copy, and with share_runs, bytes equal to any run of
 * the data laid out before point into it. Checks the selection first
 * (in range, FRE data inside the set, sorted): its bytes are read. */
static e2s_err plan_build(const sfe_set *s, const sfe_encode_opts *o,
			  plan_t *p, e2s_diag *diag)
{
	size_t n = nselected(s, o);
	bool v2 = s->version == SF_VERSION_2, share = sfe_share_p(s, o);
	bool runs = share && o && o->share_runs;
	const uint32_t *only = o ? o->only : NULL;
	table_t tab = {NULL, 0};
	uint64_t *own = NULL; /* tab.slot, unless it is o->scratch */
	runs_t rs;
	e2s_err e = E2S_ERR_OK;
	memset(p, 0, sizeof *p);
	memset(&rs, 0, sizeof rs);
	uint32_t *off = p->off = malloc((n ? n : 1) * sizeof *p->off);
	if (share) {
		/* In the caller's scratch (memory it has touched) when it
		 * lends some; calloc's otherwise (reused heap memory in a
		 * process that converts again and again). */
		tab.cap = n + n / 2 + 1;
		size_t bytes = tab.cap <= SIZE_MAX / sizeof *tab.slot
				       ? tab.cap * sizeof *tab.slot : 0;
		if (bytes && o && o->scratch && o->scratch_bytes >= bytes) {
			tab.slot = o->scratch;
			memset(tab.slot, 0, bytes);
		} else if (bytes) {
			tab.slot = own = calloc(tab.cap, sizeof *tab.slot);
		}
	}
	if (!off || (share && !tab.slot) || (runs && !runs_init(&rs, s, o))) {
		free(own);
		return e2s_fail(diag, E2S_ERR_NOMEM, ".sframe", 0, NULL);
	}
	runs = runs && rs.data;
	same_t same; /* none: the general way */
	same_init(&same, s, o, tab.slot == (uint64_t *)(o ? o->scratch : NULL)
				   ? tab.cap * sizeof *tab.slot : 0, n, share);
	/* The usual case (every function, V3, no runs) with its flags
	 * known. */
	if (!only && !v2 && share && !runs)
		e = plan_loop(s, NULL, n, false, true, false, &tab, &same, &rs,
			      p, diag);
	else
		e = plan_loop(s, only, n, v2, share, runs, &tab, &same, &rs, p,
			      diag);
	free(own);
	runs_free(&rs);
	return e;
}

static uint64_t total_size(size_t n, uint64_t fre_len, bool v2)
{
	return SF_HEADER_SIZE + (uint64_t)n * (v2 ? SF_V2_FDE_SIZE : SF_FDE_IDX_SIZE) +
	       fre_len;
}

struct sfe_plan {
	plan_t p;
	const sfe_set *s;   /* what it was made for */
	size_t n;
	uint64_t bytes;
};

e2s_err sfe_plan_make(const sfe_set *s, const sfe_encode_opts *o,
		      sfe_plan **out, e2s_diag *diag)
{
	sfe_plan *pl = calloc(1, sizeof *pl);
	*out = NULL;
	if (!pl)
		return e2s_fail(diag, E2S_ERR_NOMEM, ".sframe", 0, NULL);
	pl->s = s;
	pl->n = nselected(s, o);
	e2s_err e = plan_build(s, o, &pl->p, diag);
	if (e) {
		sfe_plan_free(pl);
		return e;
	}
	pl->bytes = pl->n ? total_size(pl->n, pl->p.fre_len,
				       s->version == SF_VERSION_2) : 0;
	*out = pl;
	return E2S_ERR_OK;
}

size_t sfe_plan_size(const sfe_plan *pl)
{
	return pl->bytes > SIZE_MAX ? 0 : (size_t)pl->bytes;
}

void sfe_plan_free(sfe_plan *pl)
{
	if (!pl)
		return;
	plan_free(&pl->p);
	free(pl);
}

size_t sfe_encoded_size(const sfe_set *s, const sfe_encode_opts *o)
{
	plan_t p;
	size_t n = nselected(s, o);
	uint64_t t;
	if (n == 0)
		return 0;
	if (plan_build(s, o, &p, NULL)) {
		plan_free(&p);
		return 0;
	}
	t = total_size(n, p.fre_len, s->version == SF_VERSION_2);
	plan_free(&p);
	return t > SIZE_MAX ? 0 : (size_t)t;
}

/* ---- Writer ---------------------------------------------------------- */

/* The FDE index at w: PC-relative starts from the field itself. Stops at
 * the first V2 start out of reach (*e set). */
static E2S_ALWAYS_INLINE uint8_t *put_index(uint8_t *w, const sfe_set *s,
					    const sfe_encode_opts *o,
					    const uint32_t *off, size_t n,
					    const uint32_t *only, sfe_reloc *rl,
					    bool v2, bool be,
					    bool rel, e2s_err *e, e2s_diag *diag)
{
	uint64_t esz = v2 ? SF_V2_FDE_SIZE : SF_FDE_IDX_SIZE;
	for (size_t i = 0; i < n; i++) {
		const sfe_func *fn = &s->funcs[only ? only[i] : i];
		uint64_t field = SF_HEADER_SIZE + (uint64_t)i * esz;
		uint64_t pcrel = fn->start - (o->section_vaddr + field);
		if (rel) {
			pcrel = 0;
			if (rl)
				rl[i] = (sfe_reloc){field, only ? only[i] : (uint32_t)i,
						    (uint8_t)(v2 ? 4 : 8)};
		}
		if (!v2) {
			/* start, size, FRE offset: size and offset one store */
			e2s_store_uN(w, pcrel, 8, be);
			e2s_store_uN(w + 8, be ? (uint64_t)fn->size << 32 | off[i]
				     : (uint64_t)off[i] << 32 | fn->size, 8, be);
			w += SF_FDE_IDX_SIZE;
			continue;
		}
		if ((int64_t)pcrel < INT32_MIN || (int64_t)pcrel > INT32_MAX) {
			*e = e2s_fail(diag, E2S_ERR_TOO_LARGE, ".sframe", field,
				      "function 0x%llx out of V2's 32-bit reach",
				      (unsigned long long)fn->start);
			break;
		}
		e2s_store_uN(w, (uint32_t)pcrel, 4, be);
		e2s_store_uN(w + 4, fn->size, 4, be);
		e2s_store_uN(w + 8, off[i], 4, be);
		e2s_store_uN(w + 12, fn->fre_count, 4, be);
		w[16] = func_info(fn, fn->fre_type, true);
		w[17] = fn->pc_type == SF_FDE_PCTYPE_MASK ? fn->rep_size : 0;
		w[18] = w[19] = 0;
		w += SF_V2_FDE_SIZE;
	}
	return w;
}

e2s_err sfe_encode_ex(const sfe_set *s, const sfe_encode_opts *o, bw_t *out,
		      sfe_reloc **relocs, size_t *nrelocs,
		      sfe_encode_stats *st, e2s_diag *diag)
{
	static const sfe_encode_opts defaults;
	uint64_t total;
	size_t n;
	sfe_reloc *rl = NULL;
	plan_t p;
	bool rel, v2;
	e2s_err e;

	if (!o)
		o = &defaults;
	rel = o->relocatable;
	v2 = s->version == SF_VERSION_2;
	if (relocs)
		*relocs = NULL;
	if (nrelocs)
		*nrelocs = 0;
	if (st)
		memset(st, 0, sizeof *st);
	if (o->sframe_version != 0 && o->sframe_version != SF_VERSION_2 &&
	    o->sframe_version != SF_VERSION_3)
		return e2s_fail(diag, E2S_ERR_INTERNAL, NULL, 0,
				"encoder asked for SFrame version %u", o->sframe_version);
	if ((s->version != SF_VERSION_2 && s->version != SF_VERSION_3) ||
	    (o->sframe_version != 0 && o->sframe_version != s->version))
		return e2s_fail(diag, E2S_ERR_INTERNAL, NULL, 0,
				"functions projected for SFrame version %u, "
				"not %u", s->version, o->sframe_version);
	n = nselected(s, o);
	if (sframe_abi(s) == 0)
		return e2s_fail(diag, E2S_ERR_UNSUPPORTED_MACHINE, ".sframe", 0,
				"no SFrame ABI for this machine");
	if (n == 0)
		return e2s_fail(diag, E2S_ERR_NO_FUNCS, ".sframe", 0, NULL);
	uint64_t esz = v2 ? SF_V2_FDE_SIZE : SF_FDE_IDX_SIZE;
	/* The plan laid out for the size, if the caller made one. */
	bool own = !o->plan;
	if (o->plan && (o->plan->s != s || o->plan->n != n))
		return e2s_fail(diag, E2S_ERR_INTERNAL, NULL, 0,
				"encoder plan made for another selection");
	if (o->plan)
		p = o->plan->p;
	else if ((e = plan_build(s, o, &p, diag))) {
		plan_drop(&p, own);
		return e;
	}
	total = total_size(n, p.fre_len, v2);
	if (total > UINT32_MAX || n > UINT32_MAX || p.nfres > UINT32_MAX) {
		plan_drop(&p, own);
		return e2s_fail(diag, E2S_ERR_TOO_LARGE, ".sframe", 0,
				"section of %llu bytes", (unsigned long long)total);
	}
	if (rel && relocs) {
		rl = calloc(n, sizeof *rl);
		if (!rl) {
			plan_drop(&p, own);
			return e2s_fail(diag, E2S_ERR_NOMEM, ".sframe", 0, NULL);
		}
	}
	if (!bw_reserve(out, (size_t)total)) {
		free(rl);
		plan_drop(&p, own);
		return e2s_fail(diag, E2S_ERR_NOMEM, ".sframe", 0, NULL);
	}

	/* Header (spec 2.2; V2's has the same layout); offsets are from
	 * the end of the header. Written in place: the room is reserved. */
	bool be = s->big_endian;
	uint8_t *w = out->data + out->len, *start = w;
	w = put_uN(w, SF_MAGIC, 2, be);
	*w++ = v2 ? SF_VERSION_2 : SF_VERSION_3;
	*w++ = SF_F_FDE_SORTED | SF_F_FDE_FUNC_START_PCREL;
	*w++ = (uint8_t)sframe_abi(s);
	*w++ = (uint8_t)abi_get(s->abi)->fixed_fp_off;
	*w++ = (uint8_t)abi_get(s->abi)->fixed_ra_off;
	*w++ = 0; /* no auxiliary header */
	w = put_uN(w, (uint32_t)n, 4, be);
	w = put_uN(w, (uint32_t)p.nfres, 4, be);
	w = put_uN(w, (uint32_t)p.fre_len, 4, be);
	w = put_uN(w, 0, 4, be);
	w = put_uN(w, (uint32_t)(n * esz), 4, be);

	/* FDE index; the usual case (linked little-endian V3) with its
	 * flags known. */
	e = E2S_ERR_OK;
	if (!v2 && !rel && !o->only && !be)
		w = put_index(w, s, o, p.off, n, NULL, NULL, false, false,
			      false, &e, diag);
	else
		w = put_index(w, s, o, p.off, n, o->only, rl, v2, be, rel, &e,
			      diag);
	if (e) {
		/* Stopped early: the index is incomplete; write nothing. */
		free(rl);
		plan_drop(&p, own);
		return e;
	}
	/* The FRE sub-section: each stored copy in index order, copies
	 * that follow each other in the set's data in one memcpy. */
	uint8_t *fre = w;
	const uint8_t *from = s->enc;
	const uint32_t *only = o->only;
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		/* An empty one adds nothing: no test. */
		if (p.off[i] != (uint64_t)(w - fre) + run)
			continue;
		const sfe_func *fn = &s->funcs[only ? only[i] : i];
		if (s->enc + fn->enc_off != from + run) {
			memcpy(w, from, run);
			w += run;
			from = s->enc + fn->enc_off;
			run = 0;
		}
		run += fn->enc_len;
	}
	memcpy(w, from, run);
	w += run;
	out->len += (size_t)(w - start);
	if (st) {
		st->fre_bytes = p.fre_len;
		st->fre_bytes_unshared = p.unshared;
		st->shared_fdes = p.shared;
	}
	plan_drop(&p, own);
	if ((uint64_t)(w - start) != total) {
		free(rl);
		return e2s_fail(diag, E2S_ERR_INTERNAL, NULL, 0,
				"encoder wrote %zu bytes, layout said %llu",
				(size_t)(w - start), (unsigned long long)total);
	}
	if (relocs)
		*relocs = rl;
	else
		free(rl);
	if (nrelocs && rl)
		*nrelocs = n;
	return E2S_ERR_OK;
}

e2s_err sfe_encode(const sfe_set *s, const sfe_encode_opts *o, bw_t *out,
		   sfe_reloc **relocs, size_t *nrelocs, e2s_diag *diag)
{
	return sfe_encode_ex(s, o, out, relocs, nrelocs, NULL, diag);
}

void sfe_set_free(sfe_set *s)
{
	free(s->funcs);
	free(s->enc);
	memset(s, 0, sizeof *s);
}
