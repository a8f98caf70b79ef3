/* sfe_set -> SFrame V3 section bytes (spec section 2).
 *
 * Two passes: layout computes every function's FRE address type, every
 * FRE's data-word width and the sub-section sizes; write emits into one
 * bw_t in the target byte order and checks the byte count against the
 * layout. Output depends only on the set and the options. */
#include <stdlib.h>
#include <string.h>

#include "sfe.h"
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

/* Smallest SF_FRE_DATAWORD_* holding all words of f. */
static unsigned fre_dwsize_code(const sfe_fre *f, bool flex)
{
	unsigned ctrl = flex ? flex_ctrl_mask(f) : 0, code = SF_FRE_DATAWORD_1B;
	for (unsigned i = 0; i < f->ndw; i++) {
		int64_t v = f->dw[i];
		unsigned c;
		if (ctrl & (1u << i))
			c = (uint64_t)(uint32_t)v <= 0xff ? SF_FRE_DATAWORD_1B
			    : (uint64_t)(uint32_t)v <= 0xffff ? SF_FRE_DATAWORD_2B
							       : SF_FRE_DATAWORD_4B;
		else
			c = v >= INT8_MIN && v <= INT8_MAX ? SF_FRE_DATAWORD_1B
			    : v >= INT16_MIN && v <= INT16_MAX ? SF_FRE_DATAWORD_2B
								: SF_FRE_DATAWORD_4B;
		if (c > code)
			code = c;
	}
	return code;
}

static unsigned dw_bytes(unsigned code) { return 1u << code; }

static unsigned func_fre_type(const sfe_set *s, const sfe_func *fn)
{
	uint32_t max = 0;
	for (uint32_t i = 0; i < fn->fre_count; i++) {
		uint32_t st = s->fres[fn->fre_first + i].start;
		if (st > max)
			max = st;
	}
	return max < 0x100 ? SF_FRE_TYPE_ADDR1
	       : max < 0x10000 ? SF_FRE_TYPE_ADDR2 : SF_FRE_TYPE_ADDR4;
}

static unsigned addr_bytes(unsigned fre_type)
{
	return fre_type == SF_FRE_TYPE_ADDR1 ? 1 : fre_type == SF_FRE_TYPE_ADDR2 ? 2 : 4;
}

static uint64_t fre_size(const sfe_fre *f, bool flex, unsigned fre_type)
{
	return addr_bytes(fre_type) + 1 +
	       (uint64_t)f->ndw * dw_bytes(fre_dwsize_code(f, flex));
}

static uint64_t func_fre_bytes(const sfe_set *s, const sfe_func *fn)
{
	unsigned ft = func_fre_type(s, fn);
	bool flex = fn->fde_type == SF_FDE_TYPE_FLEX;
	uint64_t n = SF_FDE_ATTR_SIZE;
	for (uint32_t i = 0; i < fn->fre_count; i++)
		n += fre_size(&s->fres[fn->fre_first + i], flex, ft);
	return n;
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

static uint64_t layout(const sfe_set *s, const sfe_encode_opts *o,
		       uint64_t *fre_len)
{
	size_t n = nselected(s, o);
	uint64_t len = 0;
	for (size_t i = 0; i < n; i++) {
		const sfe_func *fn = selected(s, o, i);
		if (fn)
			len += func_fre_bytes(s, fn);
	}
	*fre_len = len;
	return n ? SF_HEADER_SIZE + (uint64_t)n * SF_FDE_IDX_SIZE + len : 0;
}

size_t sfe_encoded_size(const sfe_set *s, const sfe_encode_opts *o)
{
	uint64_t fl;
	uint64_t n = layout(s, o, &fl);
	return n > SIZE_MAX ? 0 : (size_t)n;
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

static void write_fre(bw_t *w, const sfe_fre *f, bool flex, unsigned ft)
{
	unsigned code = fre_dwsize_code(f, flex);
	unsigned info;
	bw_uN(w, f->start, addr_bytes(ft));
	if (f->ndw == 0)
		info = 0; /* RA undefined: info byte 0, as gas writes it */
	else if (flex) /* base-register bit unused: 0 like gas */
		info = SF_FRE_INFO(true, f->ndw, code, f->mangled_ra);
	else
		info = SF_FRE_INFO(f->base_fp, f->ndw, code, f->mangled_ra);
	bw_u8(w, (uint8_t)info);
	for (unsigned i = 0; i < f->ndw; i++)
		bw_uN(w, (uint64_t)(int64_t)f->dw[i], dw_bytes(code));
}

e2s_err sfe_encode(const sfe_set *s, const sfe_encode_opts *o, bw_t *out,
		   sfe_reloc **relocs, size_t *nrelocs, e2s_diag *diag)
{
	static const sfe_encode_opts defaults;
	uint64_t fre_len, total;
	size_t n, start_len = out->len;
	sfe_reloc *rl = NULL;
	bool rel;

	if (!o)
		o = &defaults;
	rel = o->relocatable;
	if (relocs)
		*relocs = NULL;
	if (nrelocs)
		*nrelocs = 0;
	n = nselected(s, o);
	if (abi_id(s) == 0)
		return e2s_fail(diag, E2S_ERR_UNSUPPORTED_MACHINE, ".sframe", 0,
				"no SFrame ABI for this machine");
	for (size_t i = 0; i < n; i++) {
		const sfe_func *fn = selected(s, o, i);
		if (!fn)
			return e2s_fail(diag, E2S_ERR_USAGE, ".sframe", 0,
					"selected function %zu out of range", i);
		if (fn->fre_count > 0xffff)
			return e2s_fail(diag, E2S_ERR_TOO_LARGE, ".sframe", 0,
					"%u FREs in one function", fn->fre_count);
		if (i > 0) {
			const sfe_func *p = selected(s, o, i - 1);
			if (p->reloc.shndx > fn->reloc.shndx ||
			    (p->reloc.shndx == fn->reloc.shndx && p->start > fn->start))
				return e2s_fail(diag, E2S_ERR_USAGE, ".sframe", 0,
						"functions not sorted");
		}
	}
	total = layout(s, o, &fre_len);
	if (n == 0)
		return e2s_fail(diag, E2S_ERR_NO_FUNCS, ".sframe", 0, NULL);
	if (total > UINT32_MAX || n > UINT32_MAX)
		return e2s_fail(diag, E2S_ERR_TOO_LARGE, ".sframe", 0,
				"section of %llu bytes", (unsigned long long)total);
	if (rel && relocs) {
		rl = calloc(n, sizeof *rl);
		if (!rl)
			return e2s_fail(diag, E2S_ERR_NOMEM, ".sframe", 0, NULL);
	}
	if (!bw_reserve(out, (size_t)total)) {
		free(rl);
		return e2s_fail(diag, E2S_ERR_NOMEM, ".sframe", 0, NULL);
	}

	uint64_t nfres = 0;
	for (size_t i = 0; i < n; i++)
		nfres += selected(s, o, i)->fre_count;

	/* Header (spec 2.2); offsets are from the end of the header. */
	bw_u16(out, SF_MAGIC);
	bw_u8(out, SF_VERSION_3);
	bw_u8(out, SF_F_FDE_SORTED | SF_F_FDE_FUNC_START_PCREL);
	bw_u8(out, (uint8_t)abi_id(s));
	bw_u8(out, (uint8_t)(int8_t)(s->abi == CFI_ABI_AMD64 ? SF_AMD64_CFA_FIXED_FP_OFFSET : 0));
	bw_u8(out, (uint8_t)(int8_t)(s->abi == CFI_ABI_AMD64 ? SF_AMD64_CFA_FIXED_RA_OFFSET : 0));
	bw_u8(out, 0); /* no auxiliary header */
	bw_u32(out, (uint32_t)n);
	bw_u32(out, (uint32_t)nfres);
	bw_u32(out, (uint32_t)fre_len);
	bw_u32(out, 0);
	bw_u32(out, (uint32_t)(n * SF_FDE_IDX_SIZE));

	/* FDE index: PC-relative starts from the field itself. */
	uint64_t fre_off = 0;
	for (size_t i = 0; i < n; i++) {
		const sfe_func *fn = selected(s, o, i);
		uint64_t field = SF_HEADER_SIZE + (uint64_t)i * SF_FDE_IDX_SIZE;
		if (rel) {
			bw_u64(out, 0);
			if (rl) {
				rl[i].offset = field;
				rl[i].func = o->only ? o->only[i] : (uint32_t)i;
			}
		} else {
			bw_u64(out, fn->start - (o->section_vaddr + field));
		}
		bw_u32(out, fn->size);
		bw_u32(out, (uint32_t)fre_off);
		fre_off += func_fre_bytes(s, fn);
	}

	/* Per function: attribute, then its FREs. */
	for (size_t i = 0; i < n; i++) {
		const sfe_func *fn = selected(s, o, i);
		unsigned ft = func_fre_type(s, fn);
		bool flex = fn->fde_type == SF_FDE_TYPE_FLEX;
		bw_u16(out, (uint16_t)fn->fre_count);
		bw_u8(out, (uint8_t)SF_FUNC_INFO(fn->signal, fn->pauth_b,
						 fn->pc_type, ft));
		bw_u8(out, fn->fde_type & 0x1f);
		bw_u8(out, fn->pc_type == SF_FDE_PCTYPE_MASK ? fn->rep_size : 0);
		for (uint32_t k = 0; k < fn->fre_count; k++)
			write_fre(out, &s->fres[fn->fre_first + k], flex, ft);
	}

	if (out->oom) {
		free(rl);
		return e2s_fail(diag, E2S_ERR_NOMEM, ".sframe", 0, NULL);
	}
	if (out->len - start_len != total) {
		free(rl);
		return e2s_fail(diag, E2S_ERR_BAD_SFRAME, ".sframe", 0,
				"encoder wrote %zu bytes, layout said %llu",
				out->len - start_len, (unsigned long long)total);
	}
	if (relocs)
		*relocs = rl;
	else
		free(rl);
	if (nrelocs && rl)
		*nrelocs = n;
	return E2S_ERR_OK;
}

e2s_err sfe_build(const cfi_table *t, const sfe_encode_opts *o, bw_t *out,
		  sfe_set *set_out, sfe_reloc **relocs, size_t *nrelocs,
		  e2s_diag *diag)
{
	sfe_set s;
	e2s_err e = sfe_project(t, &s, diag);
	if (e)
		return e;
	e = sfe_encode(&s, o, out, relocs, nrelocs, diag);
	if (set_out)
		*set_out = s;
	else
		sfe_set_free(&s);
	return e;
}
