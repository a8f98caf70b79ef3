/* Walk .eh_frame / .debug_frame: split the section into CIE and FDE
 * records, parse each through a sub-reader ending at the record's end,
 * and run its program. The differences between the two sections (CIE
 * id values, the meaning of the CIE pointer, how FDE addresses are
 * encoded) are settled here, so the interpreter never sees them.
 *
 * Two passes: CIEs first (a .debug_frame FDE may point forward), then
 * FDEs in section order. A problem inside one record marks that record
 * and the walk goes on; only a length that cannot be trusted stops it. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../common/mem.h"
#include "cfi_int.h"

typedef struct {
	const cfi_section *sec;
	cfi_table *t;
	size_t cies_cap, fdes_cap, relocs_cap;
	cfi_cie_start *cie_start; /* what its FDEs start from, per CIE
	                           * (parallel to cies) */
	uint64_t *cie_err_off; /* where a bad CIE went wrong */
	uint64_t last_off;     /* the CIE the last FDE had (find_cie): its */
	long last_ci;          /* offset and index */
	cfi_interp_scratch s;
	cfi_fde_fn on_fde;     /* streaming: rows handed over per FDE */
	bool records_only;     /* frame and decode records, run nothing */
	cfi_fde_pre_fn pre;    /* streaming: asked before a program runs */
	void *on_fde_ctx;
	const char *secname;
	e2s_diag *diag;
} parse_t;

/* One record's framing. */
typedef struct {
	size_t off;      /* offset of the length field */
	unsigned offsize; /* 4, or 8 for 64-bit DWARF */
	size_t id_off;   /* offset of the CIE id / CIE pointer */
	uint64_t id;
	size_t pos, end; /* the body: after the id, to the record's end */
	bool id_short;   /* the id runs past the end (then pos is id_off) */
} rec_t;

/* A reader of rec's body. The walk keeps the body's bounds in registers
 * and makes a reader only for the fields it does not read itself. */
static inline br_t rec_body(const parse_t *p, const rec_t *rec)
{
	return (br_t){p->sec->data, rec->end, rec->pos, p->sec->big_endian,
		      E2S_ERR_OK, 0};
}

/* What next_record found. */
enum {
	REC_END,  /* the section end or an .eh_frame zero terminator */
	REC_SKIP, /* zero-length .debug_frame record: nothing here */
	REC_CIE,
	REC_FDE,
};

const char *cfi_sec_name(cfi_sec_kind kind)
{
	return kind == CFI_SEC_DEBUG_FRAME ? ".debug_frame" : ".eh_frame";
}

/* Frame the record at section offset *pos (at most the section's size):
 * *kind says what it is (REC_*), *pos moves past it. Errors here are
 * fatal. The walk keeps its position in a register, not in a reader:
 * each test a reader would make is made here once. */
static e2s_err next_record(parse_t *p, size_t *pos, rec_t *rec, int *kind)
{
	const cfi_section *sec = p->sec;
	const uint8_t *base = sec->data;
	const bool be = sec->big_endian, eh = sec->kind == CFI_SEC_EH_FRAME;
	size_t at = *pos, left = sec->size - at;
	*kind = REC_END;
	if (left == 0)
		return E2S_ERR_OK;
	rec->off = at;
	if (left < 4)
		return e2s_fail(p->diag, E2S_ERR_BAD_LENGTH, p->secname,
				rec->off, "%zu stray bytes at the end", left);
	uint64_t len = e2s_load_uN(base + at, 4, be);
	unsigned offsize = 4;
	at += 4;
	left -= 4;
	if (len == 0) {
		if (!eh)
			*kind = REC_SKIP;
		*pos = at;
		return E2S_ERR_OK;
	}
	if (len == 0xffffffff) {
		if (left < 8)
			return e2s_fail(p->diag, E2S_ERR_BAD_LENGTH,
					p->secname, rec->off,
					"truncated 64-bit length");
		offsize = 8;
		len = e2s_load_uN(base + at, 8, be);
		at += 8;
		left -= 8;
	} else if (len >= 0xfffffff0) {
		return e2s_fail(p->diag, E2S_ERR_BAD_LENGTH, p->secname,
				rec->off, "reserved length value 0x%llx",
				(unsigned long long)len);
	}
	if (len > left)
		return e2s_fail(p->diag, E2S_ERR_BAD_LENGTH, p->secname,
				rec->off, "length 0x%llx, 0x%zx bytes left",
				(unsigned long long)len, left);
	/* The body as br_sub would make it (it cannot fail here). */
	rec->offsize = offsize;
	rec->end = at + (size_t)len;
	rec->pos = at;
	*pos = at + (size_t)len;
	rec->id_off = at;
	*kind = REC_FDE;
	rec->id_short = len < offsize; /* br_take_uN's test */
	if (rec->id_short) {
		rec->id = 0;
		return E2S_ERR_OK;
	}
	rec->id = e2s_load_uN(base + at, offsize, be);
	rec->pos = at + offsize;
	if (rec->id == (eh ? 0 : offsize == 4 ? 0xffffffffu : UINT64_MAX))
		*kind = REC_CIE;
	return E2S_ERR_OK;
}

/* Grow *v (elements of size sz) to hold n+1; false on overflow/OOM. */
static bool grow(void **v, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? *cap * 2 : 64;
	if (c > SIZE_MAX / sz)
		return false;
	void *nv = realloc(*v, c * sz);
	if (!nv)
		return false;
	*v = nv;
	*cap = c;
	return true;
}

/* Parse the augmentation data of a 'z' CIE. */
static e2s_err parse_aug_data(parse_t *p, br_t *b, cfi_cie *cie,
			      const char *aug, uint64_t *err_off)
{
	uint64_t alen = br_uleb(b);
	br_t ad;
	if (!br_ok(b) || !br_sub(b, (size_t)(alen > SIZE_MAX ? SIZE_MAX : alen),
				 &ad)) {
		*err_off = b->err_pos;
		return b->err;
	}
	cfi_ptr_ctx pc = {p->sec, p->t->abi, cie->addr_size, 0};
	for (const char *c = aug + 1; *c; c++) {
		uint8_t enc;
		uint64_t dummy;
		*err_off = ad.pos;
		switch (*c) {
		case 'R':
			cie->fde_enc = br_u8(&ad);
			if (br_ok(&ad) && (cie->fde_enc == CFI_PE_OMIT ||
					   !cfi_pe_valid_p(cie->fde_enc)))
				return E2S_ERR_BAD_POINTER_ENCODING;
			break;
		case 'P':
			enc = br_u8(&ad);
			if (!br_ok(&ad))
				break;
			if (!cfi_pe_valid_p(enc))
				return E2S_ERR_BAD_POINTER_ENCODING;
			/* The personality routine is not needed: skip. */
			if (cfi_read_pointer(&ad, &pc, enc, false, &dummy,
					     NULL) != E2S_ERR_OK &&
			    br_ok(&ad))
				return E2S_ERR_BAD_POINTER_ENCODING;
			break;
		case 'L':
			cie->lsda_enc = br_u8(&ad);
			if (br_ok(&ad) && !cfi_pe_valid_p(cie->lsda_enc))
				return E2S_ERR_BAD_POINTER_ENCODING;
			break;
		case 'S': cie->signal_frame = true; break;
		case 'B': cie->pauth_b_key = true; break;
		case 'G': cie->mte_tagged = true; break;
		default:
			*err_off = cie->sec_off;
			return E2S_ERR_BAD_AUGMENTATION;
		}
		if (!br_ok(&ad)) {
			*err_off = ad.err_pos;
			return ad.err;
		}
	}
	return E2S_ERR_OK;
}

/* Parse a CIE's fields (not its program). */
static e2s_err parse_cie_fields(parse_t *p, const rec_t *rec, cfi_cie *cie,
				uint64_t *err_off)
{
	br_t body = rec_body(p, rec), *b = &body;
	const cfi_section *sec = p->sec;

	*err_off = b->pos;
	cie->version = br_u8(b);
	if (br_ok(b) && cie->version != 1 && cie->version != 3 &&
	    cie->version != 4)
		return E2S_ERR_BAD_CIE_VERSION;
	const char *aug = br_cstr(b);
	if (aug)
		cie->augmentation = aug;
	if (cie->version == 4) {
		*err_off = b->pos;
		cie->addr_size = br_u8(b);
		cie->seg_size = br_u8(b);
		if (br_ok(b) && ((cie->addr_size != 4 && cie->addr_size != 8) ||
				 cie->seg_size != 0))
			return E2S_ERR_BAD_ADDRESS_SIZE;
	}
	if (aug && strcmp(aug, "eh") == 0)
		br_skip(b, cie->addr_size); /* old GCC: eh_ptr */
	cie->code_align = br_uleb(b);
	cie->data_align = br_sleb(b);
	cie->ra_reg = cie->version == 1 ? br_u8(b) : (uint32_t)br_uleb(b);
	if (!br_ok(b)) {
		*err_off = b->err_pos;
		return b->err;
	}
	if (cie->ra_reg > abi_get(p->t->abi)->max_reg) {
		*err_off = b->pos;
		return E2S_ERR_BAD_REGISTER;
	}
	if (aug[0] == 'z') {
		cie->has_z = true;
		e2s_err e = parse_aug_data(p, b, cie, aug, err_off);
		if (e != E2S_ERR_OK)
			return e;
	} else if (aug[0] && strcmp(aug, "eh") != 0) {
		/* Without 'z' the instructions cannot be found. */
		*err_off = cie->sec_off;
		return E2S_ERR_BAD_AUGMENTATION;
	}
	/* .debug_frame addresses are plain target addresses whatever the
	 * augmentation says. */
	if (sec->kind == CFI_SEC_DEBUG_FRAME)
		cie->fde_enc = CFI_PE_ABSPTR;
	cie->insn_off = (uint32_t)b->pos;
	cie->insn_len = (uint32_t)(b->end - b->pos);
	return E2S_ERR_OK;
}

/* rec by value: the walk's stays in registers. */
static e2s_err add_cie(parse_t *p, rec_t r)
{
	const rec_t *rec = &r;
	cfi_table *t = p->t;
	size_t n = t->ncies;
	size_t old = p->cies_cap;
	if (!grow((void **)&t->cies, &p->cies_cap, n, sizeof *t->cies))
		return E2S_ERR_NOMEM;
	/* The per-CIE side arrays follow cies' capacity. */
	if (p->cies_cap != old) {
		cfi_cie_start *ci = realloc(p->cie_start,
					    p->cies_cap * sizeof *ci);
		if (!ci)
			return E2S_ERR_NOMEM;
		p->cie_start = ci;
		uint64_t *eo = realloc(p->cie_err_off,
				       p->cies_cap * sizeof *eo);
		if (!eo)
			return E2S_ERR_NOMEM;
		p->cie_err_off = eo;
	}

	cfi_cie *cie = &t->cies[n];
	cfi_cie_start *st = &p->cie_start[n];
	memset(cie, 0, sizeof *cie);
	memset(st, 0, sizeof *st);
	cie->sec_off = rec->off;
	cie->fde_enc = CFI_PE_ABSPTR;
	cie->lsda_enc = CFI_PE_OMIT;
	cie->addr_size = p->sec->addr_size;
	cie->augmentation = "";
	t->ncies = n + 1;
	p->cie_err_off[n] = rec->off;

	uint64_t err_off = rec->off;
	e2s_err e = parse_cie_fields(p, rec, cie, &err_off);
	if (e == E2S_ERR_OK && !p->records_only) {
		cfi_ptr_ctx pc = {p->sec, t->abi, cie->addr_size, 0};
		cfi_dec dec;
		cfi_dec_init(&dec, p->sec, cie, &pc, cie->insn_off,
			     cie->insn_len);
		e = cfi_run_cie(t, cie, &dec, &p->s, st, &err_off);
	}
	if (e == E2S_ERR_NOMEM)
		return e;
	cie->status = e;
	p->cie_err_off[n] = err_off;
	return E2S_ERR_OK;
}

/* Index of the CIE at section offset off, or -1. The one found before
 * is tried first (FDEs of one CIE come together); before any, the pair
 * is UINT64_MAX, where no CIE can be (the section is below 4 GiB), and
 * -1. A CIE keeps its index and offset once added. */
static long find_cie(parse_t *p, uint64_t off)
{
	if (off == p->last_off)
		return p->last_ci;
	const cfi_table *t = p->t;
	size_t lo = 0, hi = t->ncies;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->cies[mid].sec_off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->ncies && t->cies[lo].sec_off == off) {
		p->last_off = off;
		p->last_ci = (long)lo;
		return (long)lo;
	}
	return -1;
}

/* Free Pascal 3.2 (x86-64) writes its .debug_frame FDEs with a 32-bit
 * length, where DWARF's CIE pointer is 4 bytes, but an 8-byte CIE
 * pointer (its relocation is R_X86_64_64) followed by 8-byte address and
 * range. binutils readelf, gdb 13 (whose dwarf2 unwinder then finds no
 * FDE for these functions and falls back to prologue analysis) and libdw
 * (eu-readelf 0.188) all read the 4 bytes DWARF defines, so every later
 * field comes 4 bytes off: the range reads as size << 32 (above 4 GiB,
 * not a large function), the location as address << 32. Such an FDE
 * describes nothing any DWARF reader can use: it is malformed CFI
 * (E2S_ERR_CIE_PTR_WIDTH), not converted on a guess of what was meant.
 * In a relocatable file the relocation's width on the field shows it
 * (parse_fde). A linked file keeps no relocation; there the layout shows
 * as the high half of the 8-byte pointer (always 0) read as the low half
 * of the location, and the address's high half (0 below 4 GiB) as the
 * range's low half: a 32-bit record whose location and range are
 * nonzero multiples of 2^32 (little-endian, 8-byte addresses). */
static bool fpc_layout_p(const cfi_section *sec, unsigned offsize,
			 const cfi_cie *cie, const cfi_fde *fde)
{
	return sec->kind == CFI_SEC_DEBUG_FRAME && !sec->relocatable &&
	       !sec->big_endian && offsize == 4 && cie->addr_size == 8 &&
	       fde->pc_range > UINT32_MAX && (fde->pc_range & 0xffffffffu) == 0 &&
	       fde->pc_begin != 0 && (fde->pc_begin & 0xffffffffu) == 0;
}

/* Fill fde (index idx) from its record; returns its status (NOMEM is
 * fatal), *eo where a problem is (fde->err_off, stored by add_fde only
 * then) and *taken whether the pre hook took the FDE. */
static e2s_err parse_fde(parse_t *p, const rec_t *rec, cfi_fde *fde,
			 size_t idx,
			 uint64_t *eo, bool *taken)
{
	const cfi_section *sec = p->sec;
	const bool eh = sec->kind == CFI_SEC_EH_FRAME;
	cfi_table *t = p->t;

	*eo = rec->id_off;
	if (rec->id_short)
		return E2S_ERR_TRUNCATED; /* br_take_uN's */
	/* Where the CIE is. */
	uint64_t cie_off;
	if (eh) {
		/* Backwards from the pointer field itself (so below 4 GiB). */
		if (rec->id > rec->id_off)
			return E2S_ERR_BAD_CIE_ID;
		cie_off = rec->id_off - rec->id;
		fde->cie_off = (uint32_t)cie_off;
	} else {
		/* A section offset; in ET_REL it is relocated against the
		 * section itself and the field holds zero (RELA). */
		const cfi_rela *ra = cfi_find_rela(sec, rec->id_off);
		cie_off = rec->id;
		if (ra && cfi_reloc_width(t->abi, ra->type) > rec->offsize)
			return E2S_ERR_CIE_PTR_WIDTH; /* fpc_layout_p */
		if (ra)
			cie_off = ra->sym_value + (uint64_t)ra->addend +
				  (ra->implicit_addend ? rec->id : 0);
		fde->cie_off = cie_off > UINT32_MAX ? UINT32_MAX
						    : (uint32_t)cie_off;
	}
	long ci = find_cie(p, cie_off);
	if (ci < 0)
		return E2S_ERR_BAD_CIE_ID;
	fde->cie = (uint32_t)ci;
	const cfi_cie *cie = &t->cies[ci];
	if (cie->status != E2S_ERR_OK) {
		*eo = p->cie_err_off[ci];
		return cie->status;
	}

	cfi_ptr_ctx pc; /* set where used: most FDEs need none */
	size_t pos = rec->pos, end = rec->end;
	const bool be = sec->big_endian;
	e2s_err e;
	/* What GCC, LLVM and every linker write: pcrel sdata4 from the
	 * field, range sdata4 (cfi_read_pointer's result), read here when
	 * both are there. Not in .debug_frame (absptr there: its segment
	 * selector is skipped below). */
	if (cie->fde_enc == (CFI_PE_PCREL | CFI_PE_SDATA4) && !sec->nrelas &&
	    end - pos >= 8) {
		const uint8_t *f = sec->data + pos;
		int64_t begin = (int32_t)(uint32_t)e2s_load_uN(f, 4, be);
		int64_t range = (int32_t)(uint32_t)e2s_load_uN(f + 4, 4, be);
		*eo = pos;
		fde->pc_begin = cfi_addr_mask((uint64_t)begin + sec->vaddr + pos,
					      cie->addr_size);
		fde->pc_range = cfi_addr_mask((uint64_t)range, cie->addr_size);
		pos += 8;
	} else {
		br_t b = rec_body(p, rec);
		if (!eh)
			br_skip(&b, cie->seg_size);
		*eo = b.pos;
		pc = (cfi_ptr_ctx){sec, t->abi, cie->addr_size, 0};
		e = cfi_read_pointer(&b, &pc, cie->fde_enc, true, &fde->pc_begin,
				     t->relocs ? &t->relocs[fde - t->fdes] : NULL);
		if (e == E2S_ERR_OK) {
			*eo = b.pos;
			e = cfi_read_pointer(&b, &pc, cie->fde_enc & 0x0f, false,
					     &fde->pc_range, NULL);
		}
		if (e != E2S_ERR_OK)
			return e;
		pos = b.pos; /* b is sound here */
	}
	if (!eh && fpc_layout_p(sec, rec->offsize, cie, fde))
		return E2S_ERR_CIE_PTR_WIDTH;
	if (cie->has_z) {
		/* The usual one-byte length of data inside the record is
		 * skipped under the tests br_uleb and br_take would make; the
		 * rest goes to them. */
		uint8_t n = pos < end ? sec->data[pos] : 0x80;
		if (n < 0x80 && n < end - pos) {
			pos += 1 + (size_t)n;
		} else {
			br_t b = rec_body(p, rec);
			b.pos = pos;
			uint64_t alen = br_uleb(&b);
			(void)br_take(&b, (size_t)(alen > SIZE_MAX ? SIZE_MAX
								    : alen));
			if (!br_ok(&b)) {
				*eo = b.err_pos;
				return b.err;
			}
			pos = b.pos;
		}
	}
	fde->insn_off = (uint32_t)pos;
	fde->insn_len = (uint32_t)(end - pos);

	if (p->records_only)
		return E2S_ERR_OK;
	if (p->pre) {
		int h = p->pre(p->on_fde_ctx, t, idx);
		if (h < 0)
			return E2S_ERR_NOMEM;
		if (h > 0) {
			*taken = true;
			return E2S_ERR_OK;
		}
	}
	pc = (cfi_ptr_ctx){sec, t->abi, cie->addr_size, fde->pc_begin};
	cfi_dec dec;
	cfi_dec_init(&dec, sec, cie, &pc, fde->insn_off, fde->insn_len);
	return cfi_run_fde(t, cie, &p->cie_start[ci], fde, idx, &dec, &p->s,
			   eo);
}

/* The FDE array out of the consumer's block, into memory of its own at
 * twice the room (what grow would give), when it is full: one copy, and
 * grow reallocs from then on. */
static E2S_OUT_OF_LINE bool fdes_out(parse_t *p)
{
	cfi_table *t = p->t;
	size_t cap = p->fdes_cap * 2;
	cfi_fde *v = cap <= SIZE_MAX / sizeof *v ? malloc(cap * sizeof *v) : NULL;
	if (!v)
		return false;
	memcpy(v, t->fdes, p->fdes_cap * sizeof *v);
	t->fdes = v;
	p->fdes_cap = cap;
	e2s_block_unref(t->fdes_block);
	t->fdes_block = NULL;
	return true;
}

static e2s_err add_fde(parse_t *p, const rec_t *rec)
{
	cfi_table *t = p->t;
	if (t->nfdes >= p->fdes_cap && t->fdes_block && !fdes_out(p))
		return E2S_ERR_NOMEM;
	if (!grow((void **)&t->fdes, &p->fdes_cap, t->nfdes, sizeof *t->fdes))
		return E2S_ERR_NOMEM;
	/* Only a section with relocations has FDE relocations. */
	if (p->sec->nrelas && !grow((void **)&t->relocs, &p->relocs_cap,
				    t->nfdes, sizeof *t->relocs))
		return E2S_ERR_NOMEM;
	size_t idx = t->nfdes++;
	cfi_fde *fde = &t->fdes[idx];
	/* One assignment, not memset and two stores (gcc may make a memset
	 * of a record rep stos). */
	*fde = (cfi_fde){.sec_off = (uint32_t)rec->off, .cie = UINT32_MAX};
	if (t->relocs)
		memset(&t->relocs[idx], 0, sizeof *t->relocs);
	if (p->on_fde)
		p->s.nrows = 0;
	uint64_t eo;
	bool taken = false;
	e2s_err e = parse_fde(p, rec, fde, idx, &eo, &taken);
	if (e == E2S_ERR_NOMEM)
		return e;
	if (e != E2S_ERR_OK) {
		fde->status = (uint8_t)e;
		fde->err_off = (uint32_t)eo;
		fde->row_count = 0;
		t->nbad_fdes++;
	}
	if (p->on_fde && !taken) {
		e = p->on_fde(p->on_fde_ctx, t, idx,
			      fde->row_count && !p->s.row_fn
				      ? p->s.rows + fde->row_first : NULL,
			      fde->row_count);
		fde->row_first = fde->row_count = 0;
		if (e != E2S_ERR_OK)
			return e;
	}
	return E2S_ERR_OK;
}

enum { WALK_CIES, WALK_FDES, WALK_ALL };

static e2s_err walk(parse_t *p, int which)
{
	size_t pos = 0;
	rec_t rec;
	for (;;) {
		int kind;
		e2s_err e = next_record(p, &pos, &rec, &kind);
		if (e != E2S_ERR_OK || kind == REC_END)
			return e;
		if (kind == REC_SKIP ||
		    (which != WALK_ALL && (kind == REC_CIE) != (which == WALK_CIES)))
			continue;
		e = kind == REC_CIE ? add_cie(p, rec) : add_fde(p, &rec);
		if (e == E2S_ERR_NOMEM)
			return e2s_fail(p->diag, e, p->secname, rec.off, NULL);
		if (e != E2S_ERR_OK) /* from on_fde */
			return e2s_fail(p->diag, e, p->secname, rec.off, NULL);
	}
}

static e2s_err parse(const cfi_section *sec, abi_id abi, const cfi_sink *k,
		     bool records_only, cfi_table *out, e2s_diag *diag)
{
	parse_t p;
	cfi_fde_fn on_fde = k ? k->fde : NULL;
	memset(out, 0, sizeof *out);
	memset(&p, 0, sizeof p);
	p.last_off = UINT64_MAX;
	p.last_ci = -1;
	p.records_only = records_only;
	p.pre = on_fde ? k->pre : NULL;
	cfi_scratch_init(&p.s, abi);
	if (on_fde) {
		p.s.row_fn = k->row;
		p.s.row_ctx = k->ctx;
	}
	out->abi = abi;
	out->kind = sec->kind;
	out->data = sec->data;
	out->size = sec->size;
	out->big_endian = sec->big_endian;
	out->relocatable = sec->relocatable;
	p.sec = sec;
	p.t = out;
	p.secname = cfi_sec_name(sec->kind);
	p.diag = diag;
	p.on_fde = on_fde;
	p.on_fde_ctx = k ? k->ctx : NULL;

	e2s_err e = E2S_ERR_OK;
	if (sec->size > UINT32_MAX)
		e = e2s_fail(diag, E2S_ERR_TOO_LARGE, p.secname, 0,
			     "section larger than 4 GiB");
	else if (sec->addr_size != 4 && sec->addr_size != 8)
		e = e2s_fail(diag, E2S_ERR_BAD_ADDRESS_SIZE, p.secname, 0,
			     "address size %u", sec->addr_size);
	/* About one FDE per 40 bytes in practice: reserving that much
	 * avoids most regrowth of the FDE array. */
	if (e == E2S_ERR_OK && sec->size >= 4096) {
		size_t want = sec->size / 40;
		cfi_fde *v = k && k->room ? k->room(k->ctx, sec, want * sizeof *v,
						    &out->fdes_block)
					  : NULL;
		if (!v)
			v = e2s_alloc_big(want * sizeof *v);
		if (v) {
			out->fdes = v;
			p.fdes_cap = want;
		}
	}
	/* .eh_frame FDEs point back at their CIE: one pass. A .debug_frame
	 * FDE may point forward: CIEs first. */
	if (e == E2S_ERR_OK && sec->kind == CFI_SEC_EH_FRAME)
		e = walk(&p, WALK_ALL);
	else if (e == E2S_ERR_OK)
		e = walk(&p, WALK_CIES);
	if (e == E2S_ERR_OK && sec->kind != CFI_SEC_EH_FRAME)
		e = walk(&p, WALK_FDES);
	free(p.cie_start);
	free(p.cie_err_off);
	free(p.s.stack);
	if (e == E2S_ERR_OK && !on_fde) {
		out->rows = p.s.rows;
		out->nrows = p.s.nrows;
		p.s.rows = NULL;
	}
	free(p.s.rows);
	if (e != E2S_ERR_OK) {
		cfi_table_free(out);
		return e;
	}
	return E2S_ERR_OK;
}

e2s_err cfi_parse(const cfi_section *sec, abi_id abi, cfi_table *out,
		  e2s_diag *diag)
{
	return parse(sec, abi, NULL, false, out, diag);
}

e2s_err cfi_parse_records(const cfi_section *sec, abi_id abi,
			  cfi_table *out, e2s_diag *diag)
{
	return parse(sec, abi, NULL, true, out, diag);
}

e2s_err cfi_read_fde_addr(const cfi_section *sec, const cfi_table *t,
			  const cfi_fde *fde, uint64_t off, uint64_t *val,
			  uint64_t *len)
{
	*val = *len = 0;
	if (fde->cie >= t->ncies || off > sec->size)
		return E2S_ERR_TRUNCATED;
	const cfi_cie *cie = &t->cies[fde->cie];
	cfi_ptr_ctx pc = {sec, t->abi, cie->addr_size, fde->pc_begin};
	br_t r;
	br_init(&r, sec->data, sec->size, sec->big_endian);
	br_seek(&r, (size_t)off);
	e2s_err e = cfi_read_pointer(&r, &pc, cie->fde_enc, true, val, NULL);
	*len = r.pos - off;
	return e;
}

e2s_err cfi_parse_stream(const cfi_section *sec, abi_id abi,
			 cfi_fde_fn on_fde, void *ctx, cfi_table *out,
			 e2s_diag *diag)
{
	cfi_sink k = {NULL, NULL, on_fde, ctx, NULL};
	return parse(sec, abi, on_fde ? &k : NULL, false, out, diag);
}

e2s_err cfi_parse_sink(const cfi_section *sec, abi_id abi,
		       const cfi_sink *k, cfi_table *out, e2s_diag *diag)
{
	return parse(sec, abi, k && k->fde ? k : NULL, false, out, diag);
}

void *cfi_table_take_fdes(cfi_table *t, size_t *bytes, e2s_block **blk)
{
	void *p = t->fdes;
	*bytes = p ? t->nfdes * sizeof *t->fdes : 0;
	*blk = t->fdes_block;
	t->fdes = NULL;
	t->nfdes = 0;
	t->fdes_block = NULL;
	return p;
}

void cfi_table_free(cfi_table *t)
{
	free(t->cies);
	e2s_block_release(t->fdes_block, t->fdes);
	free(t->relocs);
	free(t->rows);
	memset(t, 0, sizeof *t);
}

void cfi_fde_diag(const cfi_table *t, const cfi_fde *fde, e2s_diag *diag)
{
	if (fde->status == E2S_ERR_BAD_OPCODE && fde->err_off < t->size) {
		uint8_t op = t->data[fde->err_off];
		const cfi_opinfo *oi = cfi_op_info(op);
		if (oi->name)
			e2s_fail(diag, fde->status, cfi_sec_name(t->kind),
				 fde->err_off, "%s (0x%02x) not supported here",
				 oi->name, op);
		else
			e2s_fail(diag, fde->status, cfi_sec_name(t->kind),
				 fde->err_off, "0x%02x", op);
		return;
	}
	e2s_fail(diag, fde->status, cfi_sec_name(t->kind), fde->err_off,
		 "in FDE at 0x%llx", (unsigned long long)fde->sec_off);
}
