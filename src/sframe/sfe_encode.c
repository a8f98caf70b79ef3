/* SFrame V3 (or V2) bytes (spec section 2): the one FRE writer and the
 * section assembly (its layout: sfe_layout.c).
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

#include "sfe_int.h"
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
		*p++ = sfe_func_info(fn, ft, false);
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

/* ---- Writer ---------------------------------------------------------- */

/* A plan the encoder made for itself; a caller's (sfe_plan) stays. */
static void plan_drop(sfe_plan_data *p, bool own)
{
	if (own)
		sfe_plan_data_free(p);
}

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
		w[16] = sfe_func_info(fn, fn->fre_type, true);
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
	sfe_plan_data p;
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
	n = sfe_nselected(s, o);
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
	else if ((e = sfe_plan_build(s, o, &p, diag))) {
		plan_drop(&p, own);
		return e;
	}
	total = sfe_total_size(n, p.fre_len, v2);
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
	if (!sfe_in_block(s, s->funcs))
		free(s->funcs);
	if (!sfe_in_block(s, s->enc))
		free(s->enc);
	e2s_block_unref(s->block);
	memset(s, 0, sizeof *s);
}
