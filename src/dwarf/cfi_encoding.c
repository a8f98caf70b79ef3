/* DW_EH_PE_* pointer decoding, with relocations for ET_REL input.
 *
 * In a relocatable file the bytes of a relocated field mean nothing on
 * their own (RELA: GCC writes zeros), so a field with a relocation
 * decodes to S + A: for a PC-relative field that is exactly the target
 * the linker will later make the field point at, i.e. the function
 * start in its section; for an absolute one (.debug_frame) likewise. */
#include <elf.h>
#include <string.h>

#include "cfi_int.h"

bool cfi_pe_valid_p(uint8_t enc)
{
	if (enc == CFI_PE_OMIT)
		return true;
	switch (enc & 0x0f) {
	case CFI_PE_ABSPTR: case CFI_PE_ULEB128: case CFI_PE_UDATA2:
	case CFI_PE_UDATA4: case CFI_PE_UDATA8: case CFI_PE_SIGNED:
	case CFI_PE_SLEB128: case CFI_PE_SDATA2: case CFI_PE_SDATA4:
	case CFI_PE_SDATA8:
		break;
	default:
		return false;
	}
	unsigned app = enc & 0x70;
	if (app > CFI_PE_ALIGNED)
		return false;
	/* An aligned pointer is a whole address-sized word. */
	if (app == CFI_PE_ALIGNED && (enc & 0x0f) != CFI_PE_ABSPTR)
		return false;
	return true;
}

const cfi_rela *cfi_find_rela(const cfi_section *sec, uint64_t off)
{
	size_t lo = 0, hi = sec->nrelas;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sec->relas[mid].offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < sec->nrelas && sec->relas[lo].offset == off)
		return &sec->relas[lo];
	return NULL;
}

unsigned cfi_reloc_width(abi_id abi, uint32_t type)
{
	const abi_desc *r = abi_get(abi);
	if (abi == ABI_UNKNOWN || !type)
		return 0;
	if (type == r->r_pc64 || type == r->r_abs64)
		return 8;
	if (type == r->r_pc32 || type == r->r_abs32 || type == r->r_abs32s)
		return 4;
	return 0;
}

enum { RK_ANY, RK_PC, RK_ABS, RK_BAD };

/* Whether a relocation type of the ABI is PC-relative or absolute
 * (abi_id.c); the unknown ABI (parse and dump only, never converted)
 * takes every type as S + A. */
static int reloc_kind(abi_id abi, uint32_t type)
{
	const abi_desc *r = abi_get(abi);
	if (abi == ABI_UNKNOWN)
		return RK_ANY;
	if (type && (type == r->r_pc32 || type == r->r_pc64))
		return RK_PC;
	if (type && (type == r->r_abs32 || type == r->r_abs32s ||
		     type == r->r_abs64))
		return RK_ABS;
	return RK_BAD;
}

/* Read the value part of enc (low nibble). */
static uint64_t read_format(br_t *r, uint8_t enc, unsigned addr_size)
{
	switch (enc & 0x0f) {
	case CFI_PE_ABSPTR: return br_uN(r, addr_size);
	case CFI_PE_SIGNED: return (uint64_t)br_sN(r, addr_size);
	case CFI_PE_ULEB128: return br_uleb(r);
	case CFI_PE_UDATA2: return br_uN(r, 2);
	case CFI_PE_UDATA4: return br_take_uN(r, 4);
	case CFI_PE_UDATA8: return br_uN(r, 8);
	case CFI_PE_SLEB128: return (uint64_t)br_sleb(r);
	case CFI_PE_SDATA2: return (uint64_t)br_sN(r, 2);
	case CFI_PE_SDATA4:
		return (uint64_t)(int64_t)(int32_t)(uint32_t)br_take_uN(r, 4);
	default: return (uint64_t)br_sN(r, 8); /* SDATA8 */
	}
}

e2s_err cfi_read_pointer(br_t *r, const cfi_ptr_ctx *c, uint8_t enc,
			 bool resolve, uint64_t *out, cfi_reloc_ref *rel)
{
	const cfi_section *sec = c->sec;
	unsigned asz = c->addr_size;

	*out = 0;
	if (rel)
		memset(rel, 0, sizeof *rel);
	if (enc == CFI_PE_OMIT)
		return E2S_ERR_OK;
	if (!cfi_pe_valid_p(enc) || (asz != 4 && asz != 8))
		return E2S_ERR_BAD_POINTER_ENCODING;
	unsigned app = enc & 0x70;
	if (app == CFI_PE_ALIGNED) {
		uint64_t a = sec->vaddr + r->pos;
		br_skip(r, (size_t)((asz - a % asz) % asz));
	}
	size_t field = r->pos;
	uint64_t v = read_format(r, enc, asz);
	if (!br_ok(r))
		return r->err;
	if (!resolve) {
		*out = cfi_addr_mask(v, asz);
		return E2S_ERR_OK;
	}

	const cfi_rela *ra = sec->nrelas ? cfi_find_rela(sec, field) : NULL;
	if (ra) {
		int k = reloc_kind(c->abi, ra->type);
		int64_t addend = ra->addend;
		if (app != CFI_PE_ABSPTR && app != CFI_PE_PCREL &&
		    app != CFI_PE_ALIGNED)
			return E2S_ERR_BAD_RELOC;
		if (k == RK_BAD || (k == RK_PC && app != CFI_PE_PCREL) ||
		    (k == RK_ABS && app == CFI_PE_PCREL))
			return E2S_ERR_BAD_RELOC;
		if (ra->implicit_addend)
			addend += (int64_t)v;
		v = ra->sym_value + (uint64_t)addend;
		if (rel) {
			rel->present = true;
			rel->sym = ra->sym;
			rel->shndx = ra->sym_shndx;
			rel->addend = addend;
			rel->type = ra->type;
		}
	} else {
		switch (app) {
		case CFI_PE_PCREL: v += sec->vaddr + field; break;
		case CFI_PE_TEXTREL: v += sec->text_base; break;
		case CFI_PE_DATAREL: v += sec->data_base; break;
		case CFI_PE_FUNCREL: v += c->func_base; break;
		default: break;
		}
	}
	v = cfi_addr_mask(v, asz);
	if (enc & CFI_PE_INDIRECT) {
		if (!sec->read_mem ||
		    !sec->read_mem(sec->read_mem_ctx, v, asz, &v))
			return E2S_ERR_BAD_POINTER_ENCODING;
		v = cfi_addr_mask(v, asz);
	}
	*out = v;
	return E2S_ERR_OK;
}

e2s_err cfi_read_eh_pointer(const cfi_section *sec, uint8_t enc, size_t *off,
			    uint64_t *out)
{
	br_t r;
	br_init(&r, sec->data, sec->size, sec->big_endian);
	br_seek(&r, *off);
	cfi_ptr_ctx pc = {sec, ABI_UNKNOWN, sec->addr_size, 0};
	e2s_err e = cfi_read_pointer(&r, &pc, enc, true, out, NULL);
	if (e == E2S_ERR_OK)
		*off = r.pos;
	return e;
}
