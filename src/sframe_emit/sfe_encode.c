/* sfe_set -> SFrame V3 (or V2) section bytes (spec section 2).
 *
 * Per function the FRE sub-section holds the attribute (V3) and its FREs,
 * each FRE with the narrowest start-address type of its function and the
 * narrowest data-word width holding all its words. Without sharing,
 * sfe_encode writes the FREs straight into the output after the room of
 * header and index (one pass: offsets found as it goes), then header and
 * index; sfe_encoded_size only adds sizes up. With share_fres the FRE
 * bytes are built first into their own buffer, since a function whose
 * bytes equal an earlier function's reuses that copy's offset. Sizes and
 * bytes come from the same per-FRE code (fre_size/write_fre), so they
 * always agree. Output depends only on the set and the options.
 *
 * sfh_num_fres with sharing: it stays the sum of the FDEs' FRE counts
 * (FREs as referenced, not as stored): libsframe 2.47 checks exactly that
 * sum when it byte-swaps a foreign-endian section (flip_sframe: "all FREs
 * flipped" j == sfh_num_fres), and our reader checks it always. Shared
 * data is still only safe for readers that do not rewrite it in place:
 * libsframe/objdump on the target's own byte order accept it (tested),
 * but a byte-swapping libsframe flips a shared block once per FDE and
 * also requires the per-FDE byte total to be <= sfh_fre_len, so it
 * rejects the section (SFRAME_ERR_BUF_INVAL). Hence off by default. */
#include <stdlib.h>
#include <string.h>

#include "sfe_int.h"
#include "sframe_fmt.h"

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
	unsigned ctrl = flex ? flex_ctrl_mask(f) : 0;
	for (unsigned i = 0; i < f->ndw; i++) {
		int32_t v = f->dw[i];
		if (ctrl & (1u << i))
			un |= (uint32_t)v;
		else
			sg |= (uint32_t)(v ^ (v >> 31));
	}
	if (sg > 0x7fff || un > 0xffff)
		return SF_FRE_DATAWORD_4B;
	if (sg > 0x7f || un > 0xff)
		return SF_FRE_DATAWORD_2B;
	return SF_FRE_DATAWORD_1B;
}

static unsigned dw_bytes(unsigned code) { return 1u << code; }

/* The FRE type is chosen from the largest FRE start, not from the
 * function size as gas does: a 300-byte function whose FREs all start
 * below 256 still gets 1-byte starts (readers bound starts by the FDE's
 * size, never by the type). Starts increase within a function (the
 * projection makes them so), so the largest is the last. */
static unsigned func_fre_type(const sfe_set *s, const sfe_func *fn)
{
	if (fn->enc_len) /* pre-encoded: the type is in its info byte */
		return s->enc[fn->enc_off + 2] & 0xf;
	uint32_t max = fn->fre_count ? s->fres[fn->fre_first + fn->fre_count - 1].start : 0;
	return max < 0x100 ? SF_FRE_TYPE_ADDR1
	       : max < 0x10000 ? SF_FRE_TYPE_ADDR2 : SF_FRE_TYPE_ADDR4;
}

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

static bool want_v2(const sfe_encode_opts *o)
{
	return o && o->sframe_version == SF_VERSION_2;
}

static unsigned abi_id(const sfe_set *s)
{
	switch (s->abi) {
	case CFI_ABI_AMD64: return SF_ABI_AMD64_ENDIAN_LITTLE;
	case CFI_ABI_AARCH64:
		return s->big_endian ? SF_ABI_AARCH64_ENDIAN_BIG
				     : SF_ABI_AARCH64_ENDIAN_LITTLE;
	case CFI_ABI_S390X: return SF_ABI_S390X_ENDIAN_BIG;
	default: return 0;
	}
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

/* Bytes of one FRE as write_fre writes it. */
static size_t fre_size(const sfe_fre *f, bool flex, unsigned ft)
{
	return addr_bytes(ft) + 1 +
	       (size_t)f->ndw * dw_bytes(fre_dwsize_code(f, flex));
}

static inline uint8_t *write_fre(uint8_t *p, const sfe_fre *f, bool flex,
				 unsigned ft, bool be)
{
	unsigned code = fre_dwsize_code(f, flex);
	unsigned info;
	if (ft == SF_FRE_TYPE_ADDR1)
		*p++ = (uint8_t)f->start;
	else
		p = put_uN(p, f->start, addr_bytes(ft), be);
	if (f->ndw == 0)
		info = 0; /* RA undefined: info byte 0, as gas writes it */
	else if (flex) /* base-register bit unused: 0 like gas */
		info = SF_FRE_INFO(true, f->ndw, code, f->mangled_ra);
	else
		info = SF_FRE_INFO(f->base_fp, f->ndw, code, f->mangled_ra);
	*p++ = (uint8_t)info;
	if (code == SF_FRE_DATAWORD_1B) {
		for (unsigned i = 0; i < f->ndw; i++)
			*p++ = (uint8_t)f->dw[i];
		return p;
	}
	for (unsigned i = 0; i < f->ndw; i++)
		p = put_uN(p, (uint64_t)(int64_t)f->dw[i], dw_bytes(code), be);
	return p;
}

static uint8_t func_info(const sfe_func *fn, unsigned ft, bool v2)
{
	/* V2's info byte is V3's without the signal bit (sfe_restrict
	 * removed signal frames). */
	return (uint8_t)SF_FUNC_INFO(!v2 && fn->signal, fn->pauth_b, fn->pc_type, ft);
}

/* ---- FRE sub-section plan ------------------------------------------- */

typedef struct {
	uint64_t hash, key;
	uint32_t off, len;
	bool used;
} slot_t;

typedef struct {
	bw_t fre;          /* share_fres: the FRE sub-section's bytes */
	bool bytes;        /* fre holds them (else only the layout) */
	uint64_t fre_len;  /* FRE sub-section size */
	uint32_t *off;     /* per selected function: its start_fre_off */
	uint64_t nfres;    /* FREs referenced by the FDEs */
	uint64_t unshared; /* FRE sub-section size without sharing */
	uint64_t shared;   /* functions reusing an earlier copy */
	slot_t *tab;
	size_t cap;
} plan_t;

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void plan_free(plan_t *p)
{
	bw_free(&p->fre);
	free(p->off);
	free(p->tab);
	memset(p, 0, sizeof *p);
}

/* The bytes at [start, fre.len) equal an earlier function's: return that
 * offset (and drop the new copy), else remember them. key separates
 * equal bytes that mean different things (V2: info, rep, count live in
 * the FDE, not in the bytes). */
static uint32_t dedup(plan_t *p, size_t start, uint64_t key)
{
	size_t len = p->fre.len - start;
	uint64_t h = fnv(0xcbf29ce484222325ull ^ key, p->fre.data + start, len);
	size_t i = (size_t)h & (p->cap - 1);
	while (p->tab[i].used) {
		slot_t *t = &p->tab[i];
		if (t->hash == h && t->key == key && t->len == len &&
		    memcmp(p->fre.data + t->off, p->fre.data + start, len) == 0) {
			p->fre.len = start;
			p->shared++;
			return t->off;
		}
		i = (i + 1) & (p->cap - 1);
	}
	p->tab[i] = (slot_t){h, key, (uint32_t)start, (uint32_t)len, true};
	return (uint32_t)start;
}

/* Attribute (V3 only) and FREs of one function at p; fres are its FREs. */
static uint8_t *put_func_fres(uint8_t *p, const sfe_fre *fres,
			      const sfe_func *fn, unsigned ft, bool v2, bool be)
{
	bool flex = fn->fde_type == SF_FDE_TYPE_FLEX;
	if (!v2) {
		p = put_uN(p, (uint16_t)fn->fre_count, 2, be);
		*p++ = func_info(fn, ft, false);
		*p++ = fn->fde_type & 0x1f;
		*p++ = fn->pc_type == SF_FDE_PCTYPE_MASK ? fn->rep_size : 0;
	}
	for (uint32_t k = 0; k < fn->fre_count; k++)
		p = write_fre(p, &fres[k], flex, ft, be);
	return p;
}

static uint8_t *write_func_fres(uint8_t *p, const sfe_set *s,
				const sfe_func *fn, unsigned ft, bool v2)
{
	if (fn->enc_len) {
		memcpy(p, s->enc + fn->enc_off, fn->enc_len);
		return p + fn->enc_len;
	}
	return put_func_fres(p, s->fres + fn->fre_first, fn, ft, v2, s->big_endian);
}

uint8_t *sfe_put_v3_fres(uint8_t *p, const sfe_fre *fres, const sfe_func *fn,
			 bool be)
{
	uint32_t max = fn->fre_count ? fres[fn->fre_count - 1].start : 0;
	unsigned ft = max < 0x100 ? SF_FRE_TYPE_ADDR1
		      : max < 0x10000 ? SF_FRE_TYPE_ADDR2 : SF_FRE_TYPE_ADDR4;
	return put_func_fres(p, fres, fn, ft, false, be);
}

static size_t func_fres_size(const sfe_set *s, const sfe_func *fn,
			     unsigned ft, bool v2)
{
	if (fn->enc_len)
		return fn->enc_len;
	bool flex = fn->fde_type == SF_FDE_TYPE_FLEX;
	size_t n = v2 ? 0 : 5;
	for (uint32_t k = 0; k < fn->fre_count; k++)
		n += fre_size(&s->fres[fn->fre_first + k], flex, ft);
	return n;
}

static e2s_err plan_build(const sfe_set *s, const sfe_encode_opts *o,
			  plan_t *p, e2s_diag *diag)
{
	size_t n = nselected(s, o);
	bool v2 = want_v2(o), share = o && o->share_fres;
	memset(p, 0, sizeof *p);
	bw_init(&p->fre, s->big_endian);
	p->bytes = share;
	p->off = malloc((n ? n : 1) * sizeof *p->off);
	if (share) {
		p->cap = 16;
		while (p->cap < 2 * n)
			p->cap *= 2;
		p->tab = calloc(p->cap, sizeof *p->tab);
	}
	if (!p->off || (share && !p->tab))
		goto oom;
	for (size_t i = 0; i < n; i++) {
		const sfe_func *fn = selected(s, o, i);
		unsigned ft = func_fre_type(s, fn);
		size_t start = share ? p->fre.len : (size_t)p->fre_len;
		if (start > UINT32_MAX)
			return e2s_fail(diag, E2S_ERR_TOO_LARGE, ".sframe", 0,
					"FRE sub-section over 4 GiB");
		size_t len = func_fres_size(s, fn, ft, v2);
		p->unshared += len;
		p->nfres += fn->fre_count;
		p->off[i] = (uint32_t)start;
		if (!share) {
			p->fre_len += len;
			continue;
		}
		if (len == 0) /* V2 outermost: no FREs, nothing to store */
			continue;
		if (!bw_reserve(&p->fre, len))
			goto oom;
		write_func_fres(p->fre.data + start, s, fn, ft, v2);
		p->fre.len += len;
		/* An empty V2 FRE run needs no storage to share. */
		if (len > 0) {
			uint64_t key = v2 ? ((uint64_t)fn->fre_count << 16 |
					     (uint64_t)func_info(fn, ft, true) << 8 |
					     (fn->pc_type == SF_FDE_PCTYPE_MASK ? fn->rep_size : 0)) + 1
					  : 0;
			p->off[i] = dedup(p, start, key);
		}
	}
	if (share)
		p->fre_len = p->fre.len;
	return E2S_ERR_OK;
oom:
	return e2s_fail(diag, E2S_ERR_NOMEM, ".sframe", 0, NULL);
}

/* Most bytes one FRE can take: 4-byte start, info, 6 4-byte words. */
#define FRE_MAX_BYTES SFE_FRE_MAX_BYTES

/* Without sharing: write the FRE sub-section straight into out at
 * out->len + skip (header and index go before it, written later),
 * filling the plan's offsets and sizes in the same pass; out->len is
 * left alone. The room reserved is an upper bound, so a function's
 * bytes are only measured exactly when the bound would not fit. */
static e2s_err plan_direct(const sfe_set *s, const sfe_encode_opts *o,
			   plan_t *p, bw_t *out, uint64_t skip, e2s_diag *diag)
{
	size_t n = nselected(s, o);
	bool v2 = want_v2(o);
	uint64_t bound = skip;
	memset(p, 0, sizeof *p);
	bw_init(&p->fre, s->big_endian);
	p->off = malloc((n ? n : 1) * sizeof *p->off);
	if (!p->off)
		return e2s_fail(diag, E2S_ERR_NOMEM, ".sframe", 0, NULL);
	for (size_t i = 0; i < n && bound <= UINT32_MAX; i++) {
		const sfe_func *fn = selected(s, o, i);
		bound += fn->enc_len ? fn->enc_len
				     : (v2 ? 0 : 5) + (uint64_t)fn->fre_count * FRE_MAX_BYTES;
	}
	/* The section must fit in 32 bits anyway. */
	if (bound > (uint64_t)UINT32_MAX + 1)
		bound = (uint64_t)UINT32_MAX + 1;
	if (bound > SIZE_MAX - out->len || !bw_reserve(out, (size_t)bound))
		return e2s_fail(diag, E2S_ERR_NOMEM, ".sframe", 0, NULL);
	uint8_t *base = out->data + out->len + skip, *w = base;
	uint64_t room = bound - skip;
	for (size_t i = 0; i < n; i++) {
		const sfe_func *fn = selected(s, o, i);
		unsigned ft = func_fre_type(s, fn);
		uint64_t used = (uint64_t)(w - base);
		uint64_t most = fn->enc_len ? fn->enc_len
				: (v2 ? 0 : 5) + (uint64_t)fn->fre_count * FRE_MAX_BYTES;
		if (used > UINT32_MAX ||
		    (most > room - used &&
		     func_fres_size(s, fn, ft, v2) > room - used))
			return e2s_fail(diag, E2S_ERR_TOO_LARGE, ".sframe", 0,
					"FRE sub-section over 4 GiB");
		p->off[i] = (uint32_t)used;
		p->nfres += fn->fre_count;
		w = write_func_fres(w, s, fn, ft, v2);
	}
	p->fre_len = p->unshared = (uint64_t)(w - base);
	return E2S_ERR_OK;
}

static uint64_t total_size(size_t n, uint64_t fre_len, bool v2)
{
	return SF_HEADER_SIZE + (uint64_t)n * (v2 ? SF_V2_FDE_SIZE : SF_FDE_IDX_SIZE) +
	       fre_len;
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
	t = total_size(n, p.fre_len, want_v2(o));
	plan_free(&p);
	return t > SIZE_MAX ? 0 : (size_t)t;
}

/* ---- V2 restriction -------------------------------------------------- */

/* A V2 s390x RA/FP word from a flex pair: stack slot (CFA-based deref,
 * even offset) or register (non-deref, offset 0). */
static bool v2_s390_word(int32_t ctrl, int32_t off, int32_t *w)
{
	if (!SF_FLEX_CTRL_REG_P(ctrl) && SF_FLEX_CTRL_DEREF_P(ctrl) &&
	    off != SF_FRE_RA_OFFSET_INVALID && !SF_V2_S390X_OFFSET_IS_REGNUM(off)) {
		*w = off;
		return true;
	}
	if (SF_FLEX_CTRL_REG_P(ctrl) && !SF_FLEX_CTRL_DEREF_P(ctrl) && off == 0 &&
	    SF_FLEX_CTRL_REGNUM(ctrl) < (1u << 14)) {
		*w = SF_V2_S390X_OFFSET_ENCODE_REGNUM(SF_FLEX_CTRL_REGNUM(ctrl));
		return true;
	}
	return false;
}

/* Rewrite one s390x flex FRE as a V2 default one; false if impossible. */
static bool v2_s390_fre(const sfe_fre *f, sfe_fre *out)
{
	*out = *f;
	if (f->ndw == 0)
		return true;
	unsigned c0 = (unsigned)f->dw[0], reg = SF_FLEX_CTRL_REGNUM(c0);
	if (!SF_FLEX_CTRL_REG_P(c0) || SF_FLEX_CTRL_DEREF_P(c0) || (reg != 15 && reg != 11))
		return false;
	out->base_fp = reg == 11;
	out->dw[0] = f->dw[1]; /* already scaled like a default CFA word */
	int32_t ra = SF_FRE_RA_OFFSET_INVALID, fp;
	unsigned fpi;
	out->ndw = 1;
	if (f->ndw >= 3 && f->dw[2] != 0) {
		if (f->ndw < 4 || !v2_s390_word(f->dw[2], f->dw[3], &ra))
			return false;
		out->ndw = 2;
		fpi = 4;
	} else {
		fpi = 3;
	}
	out->dw[1] = ra;
	if (f->ndw > fpi) {
		if (f->ndw < fpi + 2 || !v2_s390_word(f->dw[fpi], f->dw[fpi + 1], &fp))
			return false;
		out->dw[2] = fp;
		out->ndw = 3;
	}
	return true;
}

/* V2 outermost frames (RA undefined) as the absence of an FRE, not as an
 * FRE without data words (V2 erratum 2): glibc's V2 walker (2.42+,
 * backtrace()) reads the CFA offset of every FRE it finds, fails on such
 * an FRE and discards the whole trace for the DWARF unwinder; where it
 * finds no FRE it ends the trace if the frame pointer is 0, as _start and
 * the clone child set it. So: a wholly outermost function keeps its FDE
 * with no FREs (V3's outermost marker), a leading outermost run becomes
 * a later first FRE, a trailing one a shorter FDE. An outermost FRE
 * between two others would need the function split in two FDEs; not
 * done (never seen): false, the function is skipped. */
static bool v2_outermost(const sfe_set *s, sfe_func *fn)
{
	const sfe_fre *f = s->fres + fn->fre_first;
	uint32_t a = 0, b = fn->fre_count;
	while (a < b && f[a].ndw == 0)
		a++;
	while (b > a && f[b - 1].ndw == 0)
		b--;
	for (uint32_t k = a; k < b; k++)
		if (f[k].ndw == 0)
			return false;
	if (a == 0 && b == fn->fre_count)
		return true;
	if (fn->pc_type == SF_FDE_PCTYPE_MASK)
		return false; /* FRE starts repeat per block: no trimming */
	if (b > a && b < fn->fre_count)
		fn->size = f[b].start;
	fn->fre_first += a;
	fn->fre_count = b - a;
	return true;
}

/* Can fn be written as V2, rewriting its FREs into tmp when it is an
 * s390x flex function? */
static bool v2_ok(const sfe_set *s, const sfe_func *fn)
{
	sfe_func trimmed = *fn;
	if (fn->enc_len)
		return true; /* pre-encoded V3: sfe_encode refuses the set */
	if (fn->signal || !v2_outermost(s, &trimmed))
		return false;
	for (uint32_t k = 0; k < fn->fre_count; k++) {
		const sfe_fre *f = &s->fres[fn->fre_first + k];
		sfe_fre tmp;
		if (fn->fde_type == SF_FDE_TYPE_FLEX) {
			if (s->abi != CFI_ABI_S390X || !v2_s390_fre(f, &tmp))
				return false;
		} else if (s->abi == CFI_ABI_S390X) {
			/* an odd stack offset would read as a register */
			for (unsigned i = 1; i < f->ndw; i++)
				if (SF_V2_S390X_OFFSET_IS_REGNUM(f->dw[i]))
					return false;
		}
	}
	return true;
}

void sfe_restrict(sfe_set *s, const sfe_encode_opts *o)
{
	if (!want_v2(o))
		return;
	/* Pass 1: mark the source FDEs with any inexpressible part. */
	for (size_t i = 0; i < s->nfuncs; i++) {
		const sfe_func *fn = &s->funcs[i];
		if (v2_ok(s, fn) || fn->src_fde >= s->nfdes ||
		    s->fde_skip[fn->src_fde] != SFE_SKIP_NONE)
			continue;
		s->fde_skip[fn->src_fde] = SFE_SKIP_V2;
		s->counts[SFE_SKIP_NONE]--;
		s->counts[SFE_SKIP_V2]++;
	}
	/* Pass 2: drop them, rewrite s390x flex FREs in place. */
	size_t kept = 0;
	for (size_t i = 0; i < s->nfuncs; i++) {
		sfe_func fn = s->funcs[i];
		if (fn.src_fde < s->nfdes && s->fde_skip[fn.src_fde] != SFE_SKIP_NONE)
			continue;
		if (fn.fde_type == SF_FDE_TYPE_FLEX) {
			for (uint32_t k = 0; k < fn.fre_count; k++) {
				sfe_fre *f = &s->fres[fn.fre_first + k], tmp;
				if (v2_s390_fre(f, &tmp))
					*f = tmp;
			}
			fn.fde_type = SF_FDE_TYPE_DEFAULT;
		}
		v2_outermost(s, &fn);
		s->funcs[kept++] = fn;
	}
	s->nfuncs = kept;
}

/* ---- Writer ---------------------------------------------------------- */

e2s_err sfe_encode_ex(const sfe_set *s, const sfe_encode_opts *o, bw_t *out,
		      sfe_reloc **relocs, size_t *nrelocs,
		      sfe_encode_stats *st, e2s_diag *diag)
{
	static const sfe_encode_opts defaults;
	uint64_t total;
	size_t n, start_len = out->len;
	sfe_reloc *rl = NULL;
	plan_t p;
	bool rel, v2;
	e2s_err e;

	if (!o)
		o = &defaults;
	rel = o->relocatable;
	v2 = want_v2(o);
	if (relocs)
		*relocs = NULL;
	if (nrelocs)
		*nrelocs = 0;
	if (st)
		memset(st, 0, sizeof *st);
	if (o->sframe_version != 0 && o->sframe_version != SF_VERSION_2 &&
	    o->sframe_version != SF_VERSION_3)
		return e2s_fail(diag, E2S_ERR_USAGE, ".sframe", 0,
				"SFrame version %u not supported", o->sframe_version);
	n = nselected(s, o);
	if (abi_id(s) == 0)
		return e2s_fail(diag, E2S_ERR_UNSUPPORTED_MACHINE, ".sframe", 0,
				"no SFrame ABI for this machine");
	for (size_t i = 0; i < n; i++) {
		const sfe_func *fn = selected(s, o, i);
		if (!fn)
			return e2s_fail(diag, E2S_ERR_USAGE, ".sframe", 0,
					"selected function %zu out of range", i);
		if (!v2 && fn->fre_count > 0xffff)
			return e2s_fail(diag, E2S_ERR_TOO_LARGE, ".sframe", 0,
					"%u FREs in one function", fn->fre_count);
		if (v2 && fn->enc_len)
			return e2s_fail(diag, E2S_ERR_USAGE, ".sframe", 0,
					"function %zu pre-encoded as V3 (project "
					"with the general path for V2)", i);
		if (v2 && (fn->fde_type != SF_FDE_TYPE_DEFAULT || fn->signal))
			return e2s_fail(diag, E2S_ERR_USAGE, ".sframe", 0,
					"function %zu not expressible in SFrame V2 "
					"(sfe_restrict not called)", i);
		if (i > 0) {
			const sfe_func *q = selected(s, o, i - 1);
			if (q->reloc.shndx > fn->reloc.shndx ||
			    (q->reloc.shndx == fn->reloc.shndx && q->start > fn->start))
				return e2s_fail(diag, E2S_ERR_USAGE, ".sframe", 0,
						"functions not sorted");
		}
	}
	if (n == 0)
		return e2s_fail(diag, E2S_ERR_NO_FUNCS, ".sframe", 0, NULL);
	uint64_t esz = v2 ? SF_V2_FDE_SIZE : SF_FDE_IDX_SIZE;
	bool direct = !o->share_fres;
	e = direct ? plan_direct(s, o, &p, out, SF_HEADER_SIZE + (uint64_t)n * esz, diag)
		   : plan_build(s, o, &p, diag);
	if (e) {
		plan_free(&p);
		return e;
	}
	total = total_size(n, p.fre_len, v2);
	if (total > UINT32_MAX || n > UINT32_MAX || p.nfres > UINT32_MAX) {
		plan_free(&p);
		return e2s_fail(diag, E2S_ERR_TOO_LARGE, ".sframe", 0,
				"section of %llu bytes", (unsigned long long)total);
	}
	if (rel && relocs) {
		rl = calloc(n, sizeof *rl);
		if (!rl) {
			plan_free(&p);
			return e2s_fail(diag, E2S_ERR_NOMEM, ".sframe", 0, NULL);
		}
	}
	if (!direct && !bw_reserve(out, (size_t)total)) {
		free(rl);
		plan_free(&p);
		return e2s_fail(diag, E2S_ERR_NOMEM, ".sframe", 0, NULL);
	}

	/* Header (spec 2.2; V2's has the same layout); offsets are from
	 * the end of the header. Written in place: the room is reserved. */
	bool be = s->big_endian;
	uint8_t *w = out->data + out->len;
	w = put_uN(w, SF_MAGIC, 2, be);
	*w++ = v2 ? SF_VERSION_2 : SF_VERSION_3;
	*w++ = SF_F_FDE_SORTED | SF_F_FDE_FUNC_START_PCREL;
	*w++ = (uint8_t)abi_id(s);
	*w++ = (uint8_t)(int8_t)(s->abi == CFI_ABI_AMD64 ? SF_AMD64_CFA_FIXED_FP_OFFSET : 0);
	*w++ = (uint8_t)(int8_t)(s->abi == CFI_ABI_AMD64 ? SF_AMD64_CFA_FIXED_RA_OFFSET : 0);
	*w++ = 0; /* no auxiliary header */
	w = put_uN(w, (uint32_t)n, 4, be);
	w = put_uN(w, (uint32_t)p.nfres, 4, be);
	w = put_uN(w, (uint32_t)p.fre_len, 4, be);
	w = put_uN(w, 0, 4, be);
	w = put_uN(w, (uint32_t)(n * esz), 4, be);

	/* FDE index: PC-relative starts from the field itself. */
	for (size_t i = 0; i < n && !e; i++) {
		const sfe_func *fn = selected(s, o, i);
		uint64_t field = SF_HEADER_SIZE + (uint64_t)i * esz;
		uint64_t pcrel = fn->start - (o->section_vaddr + field);
		if (rel) {
			pcrel = 0;
			if (rl)
				rl[i] = (sfe_reloc){field, o->only ? o->only[i] : (uint32_t)i,
						    (uint8_t)(v2 ? 4 : 8)};
		}
		if (!v2) {
			w = put_uN(w, pcrel, 8, be);
			w = put_uN(w, fn->size, 4, be);
			w = put_uN(w, p.off[i], 4, be);
			continue;
		}
		if ((int64_t)pcrel < INT32_MIN || (int64_t)pcrel > INT32_MAX)
			e = e2s_fail(diag, E2S_ERR_TOO_LARGE, ".sframe", field,
				     "function 0x%llx out of V2's 32-bit reach",
				     (unsigned long long)fn->start);
		w = put_uN(w, (uint32_t)pcrel, 4, be);
		w = put_uN(w, fn->size, 4, be);
		w = put_uN(w, p.off[i], 4, be);
		w = put_uN(w, fn->fre_count, 4, be);
		*w++ = func_info(fn, func_fre_type(s, fn), true);
		*w++ = fn->pc_type == SF_FDE_PCTYPE_MASK ? fn->rep_size : 0;
		w = put_uN(w, 0, 2, be);
	}
	if (e) {
		/* Stopped early: the index is incomplete; write nothing. */
		free(rl);
		plan_free(&p);
		return e;
	}
	/* Direct: the FREs are already in place after the index. */
	if (p.bytes && p.fre_len) /* all V2-outermost: data may be NULL */
		memcpy(w, p.fre.data, p.fre.len);
	w += p.fre_len;
	out->len = (size_t)(w - out->data);
	if (st) {
		st->fre_bytes = p.fre_len;
		st->fre_bytes_unshared = p.unshared;
		st->shared_fdes = p.shared;
	}
	plan_free(&p);

	if (!e && out->oom)
		e = e2s_fail(diag, E2S_ERR_NOMEM, ".sframe", 0, NULL);
	if (!e && out->len - start_len != total)
		e = e2s_fail(diag, E2S_ERR_BAD_SFRAME, ".sframe", 0,
			     "encoder wrote %zu bytes, layout said %llu",
			     out->len - start_len, (unsigned long long)total);
	if (e) {
		free(rl);
		return e;
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

e2s_err sfe_build(const cfi_table *t, const sfe_encode_opts *o, bw_t *out,
		  sfe_set *set_out, sfe_reloc **relocs, size_t *nrelocs,
		  e2s_diag *diag)
{
	sfe_set s;
	e2s_err e = sfe_project(t, &s, diag);
	if (e)
		return e;
	sfe_restrict(&s, o);
	e = sfe_encode(&s, o, out, relocs, nrelocs, diag);
	if (set_out)
		*set_out = s;
	else
		sfe_set_free(&s);
	return e;
}
