/* ELF front end: find the CFI section of a file (elf_file.h), gather
 * what the decoder needs (section address, GOT, relocations for ET_REL,
 * loaded segments for indirect pointers) and parse it.
 *
 * The reader keeps the file mapped (or read), or borrows a caller's
 * image, so the CFI bytes we point at stay valid for the handle's
 * lifetime. CFI bytes are taken straight from the file (in file byte
 * order); only a compressed .debug_frame is inflated into memory of our
 * own. ELFCLASS32 files are read too (--dump-cfi). */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "../common/mem.h"
#include "../common/reader.h"
#include "elf_file.h"
#include "elfr_cfi.h"

typedef struct {
	uint64_t value;
	uint32_t shndx;
	bool func;
	const char *name;
} sym_ent;

struct elfr_cfi {
	elfr_file *elf;
	uint8_t *inflated;   /* a compressed section's bytes, or NULL */
	bool is_rel;
	const char *secname;
	cfi_section sec;
	cfi_rela *relas;
	/* Symbols for elfr_cfi_func_name, loaded on its first call (a
	 * conversion that names no function never pays for them). */
	size_t symsec;
	bool syms_loaded;
	sym_ent *syms;
	size_t nsyms;
	cfi_table table;
};

/* DW_EH_PE_indirect: read a pointer from the file image at vaddr. */
static bool read_mem(void *ctx, uint64_t vaddr, unsigned size, uint64_t *out)
{
	const elfr_cfi *f = ctx;
	const uint8_t *p = elfr_at_addr(f->elf, vaddr, size, NULL);
	if (!p)
		return false;
	*out = elfr_get(f->elf, p, size);
	return true;
}

/* Stripped section headers: find .eh_frame through .eh_frame_hdr's
 * eh_frame_ptr. Its size is unknown, so the section runs to the end of
 * the PT_LOAD holding it and the zero terminator ends the walk. */
static e2s_err eh_frame_from_hdr(elfr_cfi *f, const elfr_phdr *ph,
				 e2s_diag *diag)
{
	cfi_section hs;
	memset(&hs, 0, sizeof hs);
	hs.kind = CFI_SEC_EH_FRAME;
	hs.data = f->elf->img + ph->offset;
	hs.size = (size_t)ph->filesz;
	hs.big_endian = f->sec.big_endian;
	hs.addr_size = f->sec.addr_size;
	hs.vaddr = ph->vaddr;
	br_t r;
	br_init(&r, hs.data, hs.size, hs.big_endian);
	uint8_t version = br_u8(&r);
	uint8_t enc = br_u8(&r);
	br_skip(&r, 2); /* fde_count_enc, table_enc */
	if (!br_ok(&r) || version != 1)
		return e2s_fail(diag, E2S_ERR_NO_CFI, ".eh_frame_hdr", 0,
				"unreadable .eh_frame_hdr");
	uint64_t v;
	size_t at = 4;
	if (cfi_read_eh_pointer(&hs, enc, &at, &v) != E2S_ERR_OK)
		return e2s_fail(diag, E2S_ERR_BAD_POINTER_ENCODING,
				".eh_frame_hdr", 4, "eh_frame_ptr");
	uint64_t left;
	f->sec.data = elfr_at_addr(f->elf, v, 1, &left);
	if (f->sec.data) {
		f->sec.size = (size_t)left;
		f->sec.vaddr = v;
		f->secname = ".eh_frame";
		return E2S_ERR_OK;
	}
	return e2s_fail(diag, E2S_ERR_NO_CFI, ".eh_frame_hdr", 4,
			"eh_frame_ptr 0x%llx is outside the loaded segments",
			(unsigned long long)v);
}

/* Take a section's bytes: straight from the file, or inflated
 * (compressed .debug_frame; the copy lives until elfr_cfi_close). */
static e2s_err section_bytes(elfr_cfi *f, size_t i, const char *name,
			     e2s_diag *diag)
{
	const elfr_shdr *sh = &f->elf->sh[i];
	size_t n;
	if (sh->flags & SHF_COMPRESSED) {
		e2s_diag sub = {0};
		e2s_err e = elfr_section_inflate(f->elf, i, &f->inflated, &n,
						 &sub);
		if (e)
			return e2s_fail(diag, e, name, 0, "%s", sub.detail);
		f->sec.data = f->inflated;
		f->sec.size = n;
		return E2S_ERR_OK;
	}
	f->sec.data = elfr_section_data(f->elf, i, &n);
	if (!f->sec.data)
		return e2s_fail(diag, E2S_ERR_BAD_ELF, name, 0,
				"section runs past the end of the file");
	f->sec.size = n;
	return E2S_ERR_OK;
}

static int cmp_rela(const void *a, const void *b)
{
	const cfi_rela *x = a, *y = b;
	return (x->offset > y->offset) - (x->offset < y->offset);
}

/* ET_REL: the relocations whose target is the CFI section. */
static e2s_err load_relocs(elfr_cfi *f, size_t cfi_ndx, e2s_diag *diag)
{
	const elfr_file *ef = f->elf;
	e2s_vec v = {0, 0};
	for (size_t k = 1; k < ef->shnum; k++) {
		const elfr_shdr *sh = &ef->sh[k];
		if ((sh->type != SHT_RELA && sh->type != SHT_REL) ||
		    sh->info != cfi_ndx)
			continue;
		elfr_rels rels;
		elfr_symtab st;
		if (!elfr_rels_section(ef, k, &rels) ||
		    !elfr_symtab_init(ef, sh->link, &st))
			return e2s_fail(diag, E2S_ERR_BAD_ELF, f->secname, 0,
					"relocation section %zu or its symbol "
					"table lies outside the file", k);
		for (size_t i = 0; i < rels.n; i++) {
			elfr_rel ra;
			elfr_sym sym;
			elfr_rels_get(&rels, i, &ra);
			if (ra.type == 0) /* R_*_NONE on every supported machine */
				continue;
			if (!elfr_symtab_get(&st, ra.sym, &sym))
				return e2s_fail(diag, E2S_ERR_BAD_RELOC,
						f->secname, ra.offset,
						"bad symbol index %u", ra.sym);
			if (!e2s_vec_grow((void **)&f->relas, &v, sizeof *f->relas,
					  256))
				return E2S_ERR_NOMEM;
			cfi_rela *o = &f->relas[v.n++];
			memset(o, 0, sizeof *o);
			o->offset = ra.offset;
			o->type = ra.type;
			o->sym = ra.sym;
			o->addend = ra.addend;
			o->sym_value = sym.value;
			o->sym_shndx = sym.shndx;
			o->implicit_addend = !rels.rela;
		}
	}
	if (v.n)
		qsort(f->relas, v.n, sizeof *f->relas, cmp_rela);
	f->sec.relas = f->relas;
	f->sec.nrelas = v.n;
	return E2S_ERR_OK;
}

static int cmp_sym(const void *a, const void *b)
{
	const sym_ent *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	if (x->shndx != y->shndx)
		return x->shndx < y->shndx ? -1 : 1;
	return (int)y->func - (int)x->func; /* FUNC first */
}

/* Symbols for elfr_cfi_func_name: .symtab, else .dynsym. */
static e2s_err load_symbols(elfr_cfi *f)
{
	elfr_symtab st;
	if (!f->symsec)
		return E2S_ERR_OK;
	if (!elfr_symtab_init(f->elf, f->symsec, &st))
		return E2S_ERR_BAD_ELF;
	f->syms = calloc(st.n ? st.n : 1, sizeof *f->syms);
	if (!f->syms)
		return E2S_ERR_NOMEM;
	for (size_t i = 1; i < st.n; i++) {
		elfr_sym s;
		if (!elfr_symtab_get(&st, i, &s))
			break;
		int type = ELF64_ST_TYPE(s.info);
		if (type != STT_FUNC && type != STT_NOTYPE &&
		    type != STT_GNU_IFUNC)
			continue;
		if (s.st_shndx == SHN_UNDEF || s.st_shndx == SHN_ABS)
			continue;
		const char *name = elfr_sym_name(&st, &s);
		if (!name || !*name)
			continue;
		sym_ent *e = &f->syms[f->nsyms++];
		e->value = s.value;
		e->shndx = s.shndx;
		e->func = type != STT_NOTYPE;
		e->name = name;
	}
	qsort(f->syms, f->nsyms, sizeof *f->syms, cmp_sym);
	return E2S_ERR_OK;
}

/* Find the CFI section and everything around it. */
static e2s_err locate(elfr_cfi *f, const elfr_cfi_opts *opts,
		      e2s_diag *diag)
{
	const elfr_file *ef = f->elf;
	size_t eh = 0, dbg = 0, symtab = 0, dynsym = 0;
	uint64_t got = 0, gotplt = 0, text = 0;
	const elfr_phdr *hdr = NULL;
	e2s_err e;

	for (size_t i = 0; i < ef->phnum; i++)
		if (ef->ph[i].type == PT_GNU_EH_FRAME &&
		    elfr_bytes(ef, ef->ph[i].offset, ef->ph[i].filesz))
			hdr = &ef->ph[i];
	for (size_t i = 1; i < ef->shnum; i++) {
		const elfr_shdr *sh = &ef->sh[i];
		const char *name = elfr_section_name(ef, i);
		if (!name)
			continue;
		if (sh->type == SHT_SYMTAB)
			symtab = i;
		else if (sh->type == SHT_DYNSYM)
			dynsym = i;
		if (sh->type == SHT_NOBITS || sh->size == 0)
			continue;
		if (strcmp(name, ".eh_frame") == 0 && !eh)
			eh = i;
		else if (strcmp(name, ".debug_frame") == 0 && !dbg)
			dbg = i;
		else if (strcmp(name, ".got") == 0)
			got = sh->addr;
		else if (strcmp(name, ".got.plt") == 0)
			gotplt = sh->addr;
		else if (strcmp(name, ".text") == 0)
			text = sh->addr;
	}
	/* DW_EH_PE_datarel base: the GOT pointer, i.e. DT_PLTGOT =
	 * _GLOBAL_OFFSET_TABLE_ = start of .got.plt (else .got). libgcc
	 * only computes it on i386; on x86-64 GCC never emits datarel. */
	f->sec.data_base = gotplt ? gotplt : got;
	f->sec.text_base = text;
	f->symsec = symtab ? symtab : dynsym;

	size_t use = 0;
	if (dbg && (opts->prefer_debug_frame || !eh)) {
		use = dbg;
		f->sec.kind = CFI_SEC_DEBUG_FRAME;
		f->secname = ".debug_frame";
	} else if (eh) {
		use = eh;
		f->sec.kind = CFI_SEC_EH_FRAME;
		f->secname = ".eh_frame";
	}
	if (!use) {
		if (hdr && !f->is_rel) {
			f->sec.kind = CFI_SEC_EH_FRAME;
			return eh_frame_from_hdr(f, hdr, diag);
		}
		return e2s_fail(diag, E2S_ERR_NO_CFI, NULL, 0, NULL);
	}
	e = section_bytes(f, use, f->secname, diag);
	if (e != E2S_ERR_OK)
		return e;
	if (f->is_rel)
		return load_relocs(f, use, diag);
	f->sec.vaddr = ef->sh[use].addr;
	return E2S_ERR_OK;
}

/* Takes ownership of elf. */
static e2s_err open_elf(elfr_file *elf, const elfr_cfi_opts *opts,
			cfi_fde_fn on_fde, void *ctx, elfr_cfi **out,
			e2s_diag *diag)
{
	static const elfr_cfi_opts defaults = {false, false, NULL, NULL, NULL};
	*out = NULL;
	if (!opts)
		opts = &defaults;
	elfr_cfi *f = calloc(1, sizeof *f);
	if (!f) {
		elfr_close(elf);
		return e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);
	}
	f->elf = elf;
	f->is_rel = elf->type == ET_REL;
	f->sec.big_endian = elf->be;
	f->sec.addr_size = elf->is64 ? 8 : 4;
	f->sec.relocatable = f->is_rel;
	f->sec.read_mem = f->is_rel ? NULL : read_mem;
	f->sec.read_mem_ctx = f;
	abi_id abi = cfi_abi_from_machine(elf->machine);
	e2s_err e = locate(f, opts, diag);
	if (e != E2S_ERR_OK)
		goto fail;
	if (opts->records_only)
		e = cfi_parse_records(&f->sec, abi, &f->table, diag);
	else if (on_fde) {
		cfi_sink k = {opts->pre_fde, opts->on_row, on_fde, ctx,
			      opts->fde_room};
		e = cfi_parse_sink(&f->sec, abi, &k, &f->table, diag);
	}
	else
		e = cfi_parse(&f->sec, abi, &f->table, diag);
	if (e != E2S_ERR_OK)
		goto fail;
	*out = f;
	return E2S_ERR_OK;
fail:
	if (e == E2S_ERR_NOMEM)
		e2s_fail(diag, e, NULL, 0, NULL);
	elfr_cfi_close(f);
	return e;
}

e2s_err elfr_cfi_open_mem(const void *data, size_t size,
			  const elfr_cfi_opts *opts, elfr_cfi **out,
			  e2s_diag *diag)
{
	elfr_file *elf;
	*out = NULL;
	e2s_err e = elfr_open_mem(data, size, 0, &elf, diag);
	return e ? e : open_elf(elf, opts, NULL, NULL, out, diag);
}

e2s_err elfr_cfi_open_view(const void *data, size_t size,
			   const elfr_cfi_opts *opts, cfi_fde_fn on_fde,
			   void *ctx, elfr_cfi **out, e2s_diag *diag)
{
	elfr_file *elf;
	*out = NULL;
	e2s_err e = elfr_open_view(data, size, 0, &elf, diag);
	return e ? e : open_elf(elf, opts, on_fde, ctx, out, diag);
}

e2s_err elfr_cfi_open(const char *path, const elfr_cfi_opts *opts,
		      elfr_cfi **out, e2s_diag *diag)
{
	return elfr_cfi_open_stream(path, opts, NULL, NULL, out, diag);
}

e2s_err elfr_cfi_open_stream(const char *path, const elfr_cfi_opts *opts,
			     cfi_fde_fn on_fde, void *ctx, elfr_cfi **out,
			     e2s_diag *diag)
{
	elfr_file *elf;
	*out = NULL;
	e2s_err e = elfr_open(path, 0, &elf, diag);
	return e ? e : open_elf(elf, opts, on_fde, ctx, out, diag);
}

void elfr_cfi_close(elfr_cfi *f)
{
	if (!f)
		return;
	cfi_table_free(&f->table);
	elfr_close(f->elf);
	free(f->inflated);
	free(f->relas);
	free(f->syms);
	free(f);
}

void *elfr_cfi_take_fdes(elfr_cfi *f, size_t *bytes, e2s_block **blk)
{
	return cfi_table_take_fdes(&f->table, bytes, blk);
}

const cfi_table *elfr_cfi_table(const elfr_cfi *f) { return &f->table; }
unsigned elfr_cfi_machine(const elfr_cfi *f) { return f->elf->machine; }
bool elfr_cfi_is_rel(const elfr_cfi *f) { return f->is_rel; }
const char *elfr_cfi_section_name(const elfr_cfi *f) { return f->secname; }
const cfi_section *elfr_cfi_section(const elfr_cfi *f) { return &f->sec; }

const char *elfr_cfi_func_name(const elfr_cfi *cf, const cfi_fde *fde)
{
	/* The handle is logically const: loading the symbols is a cache. */
	elfr_cfi *f = (elfr_cfi *)(uintptr_t)cf;
	if (!f->syms_loaded) {
		f->syms_loaded = true;
		if (load_symbols(f) != E2S_ERR_OK)
			f->nsyms = 0; /* unreadable symbols: no names */
	}
	/* First symbol with value >= pc_begin (FUNC sorts first). */
	size_t lo = 0, hi = f->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->syms[mid].value < fde->pc_begin)
			lo = mid + 1;
		else
			hi = mid;
	}
	const char *best = NULL;
	cfi_reloc_ref rel = cfi_fde_reloc(&f->table, fde);
	for (size_t i = lo; i < f->nsyms && f->syms[i].value == fde->pc_begin;
	     i++) {
		const sym_ent *s = &f->syms[i];
		if (f->is_rel && (!rel.present || s->shndx != rel.shndx))
			continue;
		if (s->func)
			return s->name;
		if (!best)
			best = s->name;
	}
	return best;
}
