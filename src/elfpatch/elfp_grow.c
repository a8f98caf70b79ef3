/* elfpatch: the GROWN layout, and the one rule for what a rewrite may
 * move (elfp_layout.c has the other layouts, which move no address).
 *
 * GROWN lets the program header table grow where it is, over the
 * sections right after it, whose bytes move unchanged to the new segment
 * at new addresses. A byte may change address only if nothing but the
 * loader and tools reach it, through program headers, .dynamic and
 * section headers (which are updated). That is taken as proven for a
 * block of sections when all of these hold:
 *
 * 1. Every section is one the link editor makes for the loader, by name
 *    and type (loader_sections below). A section of the program's own
 *    (.note.myapp) may be read by its own code.
 * 2. No symbol of .symtab or .dynsym other than section and file symbols
 *    lies in the block: code and data reach a byte through a symbol at
 *    link time, and in a linked file the symbol tables are what is left
 *    of those. Exceptions, by name, of local symbols (visible only to
 *    their own object): glibc's start files (crt1.o, Scrt1.o) define the
 *    object __abi_tag over the .note.ABI-tag they carry, for debuggers,
 *    and their code does not read it; AArch64 mapping symbols ($d, $x)
 *    mark data and code for disassemblers and cannot be referred to.
 * 3. No relocation applies to the block or holds an address in it, in
 *    any form: RELA (addend), REL (implicit addend in place), RELR
 *    (addresses in place), from the section headers and from .dynamic's
 *    DT_RELA/DT_REL/DT_RELR/DT_JMPREL; relocations kept in the file
 *    (ld --emit-relocs) count too, with the symbols they name.
 * 4. Only PT_INTERP, PT_NOTE and PT_GNU_PROPERTY cover it (updated), and
 *    no .dynamic address other than DT_HASH, DT_GNU_HASH, DT_SYMTAB,
 *    DT_STRTAB and the version tags (updated) points into it.
 * 5. The file is position-independent (ET_DYN). A position-dependent
 *    file's code and data hold absolute addresses with no relocation, so
 *    3 proves nothing there: ET_EXEC files never take GROWN (SHIFT moves
 *    no address).
 *
 * What stays unproven: a stripped file keeps no symbol table, so a
 * symbol of the program's own defined inside one of those sections
 * (a runnable library's string in .interp) leaves no trace once
 * stripped. The names in 1 make that a deliberate act.
 */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "../abi/abi.h"
#include "../common/reader.h"
#include "elfp_internal.h"

#ifndef SHT_RELR
#define SHT_RELR 19
#endif
#ifndef DT_RELR
#define DT_RELRSZ 35
#define DT_RELR 36
#endif

static bool in_range(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v >= lo && v < hi;
}

/* Rule 1: what the link editor makes for the loader. */
static const struct {
	const char *name;
	uint32_t type;
} loader_sections[] = {
	{".interp", SHT_PROGBITS},
	{".note.gnu.property", SHT_NOTE},
	{".note.gnu.build-id", SHT_NOTE},
	{".note.ABI-tag", SHT_NOTE},
	{".note.package", SHT_NOTE},
	{".hash", SHT_HASH},
	{".gnu.hash", SHT_GNU_HASH},
	{".dynsym", SHT_DYNSYM},
	{".dynstr", SHT_STRTAB},
	{".gnu.version", SHT_GNU_versym},
	{".gnu.version_r", SHT_GNU_verneed},
	{".gnu.version_d", SHT_GNU_verdef},
};

static bool movable(const elfp_file *f, size_t i)
{
	const elfp_sec *s = &f->secs[i];
	const char *n = elfp_section_name(f, i);
	uint64_t bad = SHF_WRITE | SHF_EXECINSTR | SHF_TLS | SHF_GROUP |
		       SHF_LINK_ORDER;
	if (!n || s->is_new || s->place != ELFP_ORIG ||
	    !(s->sh.flags & SHF_ALLOC) || (s->sh.flags & bad) ||
	    s->sh.addralign > 4096)
		return false;
	for (size_t k = 0; k < sizeof loader_sections / sizeof *loader_sections;
	     k++)
		if (s->sh.type == loader_sections[k].type &&
		    strcmp(n, loader_sections[k].name) == 0)
			return true;
	return false;
}

static bool refuse(elfp_grow_plan *g, const char *what, const char *sec)
{
	snprintf(g->why, sizeof g->why, "%s%s%s", what, sec ? " " : "",
		 sec ? sec : "");
	return false;
}

bool elfp_grow_plan_make(const elfp_file *f, size_t n, elfp_grow_plan *g)
{
	uint64_t old_end = f->in->phoff + (uint64_t)f->in->phnum * ELFP_PHDR_SIZE;
	uint64_t need = f->in->phoff + (uint64_t)n * ELFP_PHDR_SIZE;
	const elfp_phdr *load = NULL;
	bool changed = true;

	g->why[0] = 0;
	if (f->in->type != ET_DYN)
		return refuse(g, "position-dependent file", NULL);
	if (f->old_nsecs <= 1)
		return refuse(g, "no section headers to prove it by", NULL);
	if (f->in->phnum == 0 || f->in->phoff < ELFP_EHDR_SIZE)
		return refuse(g, "no program header table in place", NULL);
	load = elfp_table_load(f, need);
	if (!load)
		return refuse(g, "table at the end of its segment", NULL);
	/* A second table index would need the extended one. */
	for (size_t i = 1; i < f->old_nsecs; i++)
		if (f->secs[i].sh.type == SHT_SYMTAB_SHNDX)
			return refuse(g, "extended section indexes", NULL);
	g->lo = UINT64_MAX;
	g->hi = 0;
	g->align = 1;
	uint64_t r_lo = old_end, r_hi = need;
	while (changed) {
		changed = false;
		for (size_t i = 1; i < f->old_nsecs; i++) {
			const elfp_shdr *s = &f->secs[i].sh;
			if (g->in[i] || s->type == SHT_NULL ||
			    s->type == SHT_NOBITS || !s->size ||
			    s->offset >= r_hi || s->offset + s->size <= r_lo)
				continue;
			if (!movable(f, i) || s->offset < old_end)
				return refuse(g, "section after the table:",
					      elfp_section_name(f, i));
			g->in[i] = true;
			changed = true;
			if (s->offset < g->lo)
				g->lo = s->offset;
			if (s->offset + s->size > g->hi)
				g->hi = s->offset + s->size;
			if (s->addralign > g->align)
				g->align = s->addralign;
		}
		if (g->hi > r_hi)
			r_hi = g->hi;
		for (size_t i = 0; i < f->old_nsegs; i++) {
			const elfp_phdr *p = &f->segs[i].ph;
			if (p->type == PT_LOAD || p->type == PT_PHDR ||
			    !p->filesz || p->offset >= r_hi ||
			    p->offset + p->filesz <= r_lo)
				continue;
			if ((p->type != PT_INTERP && p->type != PT_NOTE &&
			     p->type != PT_GNU_PROPERTY) ||
			    p->offset < old_end || p->align > 4096)
				return refuse(g, "a segment covers the sections "
					      "after the table", NULL);
			if (p->offset + p->filesz > r_hi) {
				r_hi = p->offset + p->filesz;
				changed = true;
			}
			if (p->align > g->align)
				g->align = p->align;
		}
	}
	if (g->hi == 0 || r_hi > load->offset + load->filesz ||
	    g->align & (g->align - 1))
		return refuse(g, "no whole sections after the table", NULL);
	/* The grown table may end in padding after the last section it
	 * covers (no section lies there: the loop above took every one). */
	if (r_hi > g->hi)
		g->hi = r_hi;
	/* Every moved thing is mapped by the table's PT_LOAD at its bias. */
	uint64_t bias = load->vaddr - load->offset;
	g->vlo = g->lo + bias;
	g->vhi = g->hi + bias;
	for (size_t i = 1; i < f->old_nsecs; i++) {
		const elfp_shdr *s = &f->secs[i].sh;
		if (g->in[i] && s->addr != s->offset + bias)
			return refuse(g, "section not at its segment's bias:",
				      elfp_section_name(f, i));
		/* Nothing else (.tbss) may claim those addresses. */
		if (!g->in[i] && (s->flags & SHF_ALLOC) && s->size &&
		    s->addr < g->vhi && s->addr + s->size > g->vlo)
			return refuse(g, "overlapping section",
				      elfp_section_name(f, i));
	}
	for (size_t i = 0; i < f->old_nsegs; i++) {
		const elfp_phdr *p = &f->segs[i].ph;
		if (p->type != PT_LOAD && p->type != PT_PHDR && p->filesz &&
		    in_range(p->offset, g->lo, g->hi) &&
		    p->vaddr != p->offset + bias)
			return refuse(g, "segment not at its bias", NULL);
	}
	return true;
}

/* ---- Rule 4: .dynamic ------------------------------------------------ */

/* Dynamic tags holding an address (d_ptr). */
static bool dyn_is_ptr(int64_t t)
{
	switch (t) {
	case DT_PLTGOT: case DT_HASH: case DT_STRTAB: case DT_SYMTAB:
	case DT_RELA: case DT_INIT: case DT_FINI: case DT_REL: case DT_DEBUG:
	case DT_JMPREL: case DT_INIT_ARRAY: case DT_FINI_ARRAY:
	case DT_PREINIT_ARRAY: case DT_SYMTAB_SHNDX: case DT_RELR:
	case DT_VERSYM: case DT_VERDEF: case DT_VERNEED:
		return true;
	default:
		return t >= DT_ADDRRNGLO && t <= DT_ADDRRNGHI;
	}
}

/* The dynamic tags pointing at movable sections: they follow them. */
static bool dyn_moves(int64_t t)
{
	return t == DT_HASH || t == DT_GNU_HASH || t == DT_SYMTAB ||
	       t == DT_STRTAB || t == DT_VERSYM || t == DT_VERNEED ||
	       t == DT_VERDEF;
}

static bool dyn_check(void *ctx, int64_t tag, uint64_t val, uint64_t off)
{
	const elfp_grow_plan *g = ctx;
	(void)off;
	return !dyn_is_ptr(tag) || dyn_moves(tag) ||
	       !in_range(val, g->vlo, g->vhi);
}

/* ---- Rule 2: symbols ------------------------------------------------- */

/* A symbol the toolchain makes that no code refers to (see the top of
 * this file): glibc's __abi_tag, and AArch64 mapping symbols ($d, $x,
 * "$d.N"), which mark data and code for disassemblers (AArch64 ELF ABI). */
static bool toolchain_symbol(const elfp_file *f, const elfr_symtab *t,
			     const elfr_sym *s)
{
	static const char abi_tag[] = "__abi_tag";
	const char *sec = elfp_section_name(f, s->st_shndx);
	const char *n = elfr_sym_name(t, s);
	if (ELF64_ST_BIND(s->info) != STB_LOCAL || !sec || !n)
		return false;
	if (ELF64_ST_TYPE(s->info) == STT_OBJECT)
		return strcmp(n, abi_tag) == 0 &&
		       strcmp(sec, ".note.ABI-tag") == 0;
	return ELF64_ST_TYPE(s->info) == STT_NOTYPE &&
	       abi_of_machine(f->in->machine)->mapping_symbols && n[0] == '$' &&
	       (n[1] == 'd' || n[1] == 'x') && (n[2] == 0 || n[2] == '.');
}

/* Rule 2 for symbol k of table t of file fs (the file itself or its
 * debug file). By value: the linker gives __ehdr_start (address 0) the
 * index of the first section. */
static bool sym_in_block(const elfp_file *fs, const elfp_grow_plan *g,
			 const elfr_symtab *t, size_t k)
{
	elfr_sym e;
	if (!elfr_symtab_get(t, k, &e) || e.st_shndx == SHN_UNDEF)
		return false;
	uint8_t type = ELF64_ST_TYPE(e.info);
	if (type == STT_TLS || type == STT_SECTION || type == STT_FILE ||
	    !in_range(e.value, g->vlo, g->vhi))
		return false;
	return e.st_shndx >= fs->old_nsecs || !toolchain_symbol(fs, t, &e);
}

static bool symbols_clear(const elfp_file *f, elfp_grow_plan *g)
{
	const elfp_file *files[2] = {f, f->syms_extra};
	for (int n = 0; n < 2 && files[n]; n++) {
		const elfp_file *fs = files[n];
		for (size_t i = 1; i < fs->old_nsecs; i++) {
			uint32_t type = fs->secs[i].sh.type;
			elfr_symtab t;
			if ((type != SHT_SYMTAB && type != SHT_DYNSYM) ||
			    !elfr_symtab_init(fs->in, i, &t))
				continue;
			for (size_t k = 1; k < t.n; k++)
				if (sym_in_block(fs, g, &t, k))
					return refuse(g, n ? "a symbol of the debug "
						      "file lies in the sections "
						      "after the table; symbol table"
						      : "a symbol lies in the "
						      "sections after the table; "
						      "symbol table",
						      elfp_section_name(fs, i));
		}
	}
	return true;
}

/* ---- Rule 3: relocations -------------------------------------------- */

/* The 8-byte word the file holds at address a (0 where no file byte
 * does: .bss, or outside every segment). */
static uint64_t word_at(const elfp_file *f, uint64_t a)
{
	const uint8_t *p = elfr_at_addr(f->in, a, 8, NULL);
	return p ? elfr_get(f->in, p, 8) : 0;
}

/* A table of relocations: its bytes, kind and symbol table (0: none). */
typedef struct {
	const uint8_t *p;
	uint64_t size;
	uint32_t type;   /* SHT_RELA, SHT_REL or SHT_RELR */
	size_t symtab;
} rel_table;

static bool rel_clear(const elfp_file *f, const elfp_grow_plan *g,
		      const rel_table *t)
{
	if (t->type == SHT_RELR) {
		/* An even entry is an address; an odd one a bitmap of the
		 * 63 words after the last address covered. */
		uint64_t next = 0;
		br_t r;
		br_init(&r, t->p, t->size, f->in->be);
		for (uint64_t k = 0; k + 8 <= t->size; k += 8) {
			uint64_t e = br_u64(&r);
			if (!(e & 1)) {
				if (in_range(e, g->vlo, g->vhi) ||
				    in_range(word_at(f, e), g->vlo, g->vhi))
					return false;
				next = e + 8;
				continue;
			}
			for (unsigned b = 1; b < 64; b++) {
				uint64_t a = next + (uint64_t)(b - 1) * 8;
				if (!(e >> b & 1))
					continue;
				if (in_range(a, g->vlo, g->vhi) ||
				    in_range(word_at(f, a), g->vlo, g->vhi))
					return false;
			}
			next += 63 * 8;
		}
		return true;
	}
	elfr_rels rels;
	elfr_symtab st;
	bool syms = t->symtab && elfr_symtab_init(f->in, t->symtab, &st);
	elfr_rels_init(f->in, t->p, (size_t)t->size, t->type == SHT_RELA, &rels);
	for (size_t k = 0; k < rels.n; k++) {
		elfr_rel rl;
		elfr_rels_get(&rels, k, &rl);
		uint64_t add = rels.rela ? (uint64_t)rl.addend
					 : word_at(f, rl.offset);
		if (in_range(rl.offset, g->vlo, g->vhi))
			return false;
		/* The address it puts there: S + A, or B + A without a
		 * symbol (and, to be safe, for a symbol we cannot read). */
		elfr_sym e;
		uint64_t target = add;
		if (rl.sym && syms && elfr_symtab_get(&st, rl.sym, &e)) {
			uint8_t type = ELF64_ST_TYPE(e.info);
			if (e.st_shndx == SHN_UNDEF || type == STT_TLS)
				continue;
			if (in_range(e.value, g->vlo, g->vhi))
				return false;
			target = e.value + add;
		}
		if (in_range(target, g->vlo, g->vhi))
			return false;
	}
	return true;
}

/* A symbol table index from a relocation section's sh_link. */
static size_t rel_symtab(const elfp_file *f, uint32_t link)
{
	if (link == 0 || link >= f->old_nsecs)
		return 0;
	uint32_t t = f->secs[link].sh.type;
	return t == SHT_SYMTAB || t == SHT_DYNSYM ? link : 0;
}

typedef struct {
	uint64_t addr[4], size[4]; /* RELA, REL, RELR, JMPREL */
	bool rela_plt;             /* DT_PLTREL is DT_RELA */
} dyn_rels;

static bool dyn_collect(void *ctx, int64_t tag, uint64_t val, uint64_t off)
{
	dyn_rels *x = ctx;
	(void)off;
	switch (tag) {
	case DT_RELA: x->addr[0] = val; break;
	case DT_RELASZ: x->size[0] = val; break;
	case DT_REL: x->addr[1] = val; break;
	case DT_RELSZ: x->size[1] = val; break;
	case DT_RELR: x->addr[2] = val; break;
	case DT_RELRSZ: x->size[2] = val; break;
	case DT_JMPREL: x->addr[3] = val; break;
	case DT_PLTRELSZ: x->size[3] = val; break;
	case DT_PLTREL: x->rela_plt = val == DT_RELA; break;
	default: break;
	}
	return true;
}

/* Does an allocated relocation section of this type cover [a, a+n)? */
static bool rel_section_covers(const elfp_file *f, uint32_t type, uint64_t a,
			       uint64_t n)
{
	for (size_t i = 1; i < f->old_nsecs; i++) {
		const elfp_shdr *s = &f->secs[i].sh;
		if (s->type == type && (s->flags & SHF_ALLOC) && s->addr <= a &&
		    n <= s->size && a - s->addr <= s->size - n)
			return true;
	}
	return false;
}

/* The .dynsym section, or 0. */
static size_t dynsym(const elfp_file *f)
{
	for (size_t i = 1; i < f->old_nsecs; i++)
		if (f->secs[i].sh.type == SHT_DYNSYM)
			return i;
	return 0;
}

static bool relocs_clear(const elfp_file *f, elfp_grow_plan *g)
{
	static const uint32_t kinds[4] = {SHT_RELA, SHT_REL, SHT_RELR, 0};
	for (size_t i = 1; i < f->old_nsecs; i++) {
		const elfp_sec *s = &f->secs[i];
		uint32_t t = s->sh.type;
		if (t != SHT_RELA && t != SHT_REL && t != SHT_RELR)
			continue;
		/* Kept relocations of debugging sections (--emit-relocs)
		 * change no byte of the running program. */
		if (t != SHT_RELR && !(s->sh.flags & SHF_ALLOC) &&
		    s->sh.info < f->old_nsecs &&
		    !(f->secs[s->sh.info].sh.flags & SHF_ALLOC))
			continue;
		rel_table rt = {f->in->img + s->in_off, s->in_size, t,
				t == SHT_RELR ? 0 : rel_symtab(f, s->sh.link)};
		if (!rel_clear(f, g, &rt))
			return refuse(g, "a relocation refers to the sections "
				      "after the table:", elfp_section_name(f, i));
	}
	/* What the loader applies, if no section header describes it. */
	dyn_rels x = {0};
	elfr_each_dyn(f->in, dyn_collect, &x);
	for (int k = 0; k < 4; k++) {
		uint32_t t = k < 3 ? kinds[k] : x.rela_plt ? SHT_RELA : SHT_REL;
		if (!x.addr[k] || !x.size[k] ||
		    rel_section_covers(f, t, x.addr[k], x.size[k]))
			continue;
		rel_table rt = {elfr_at_addr(f->in, x.addr[k], x.size[k], NULL),
				x.size[k], t,
				dynsym(f)};
		if (!rt.p)
			return refuse(g, "dynamic relocations outside the file",
				      NULL);
		if (!rel_clear(f, g, &rt))
			return refuse(g, "a dynamic relocation refers to the "
				      "sections after the table", NULL);
	}
	return true;
}

bool elfp_grow_refs_ok(const elfp_file *f, elfp_grow_plan *g)
{
	if (!elfr_each_dyn(f->in, dyn_check, g))
		return refuse(g, "a .dynamic address points into the sections "
			      "after the table", NULL);
	return symbols_clear(f, g) && relocs_clear(f, g);
}

/* ---- Applying it ----------------------------------------------------- */

typedef struct {
	elfp_file *f;
	const elfp_grow_plan *g;
	uint64_t dva;
	e2s_err e;
	e2s_diag *d;
} dyn_fix;

static bool dyn_patch(void *ctx, int64_t tag, uint64_t val, uint64_t off)
{
	dyn_fix *x = ctx;
	if (dyn_moves(tag) && in_range(val, x->g->vlo, x->g->vhi))
		x->e = elfp_add_bpatch(x->f, off, 8, val + x->dva, false, x->d);
	return x->e == E2S_ERR_OK;
}

/* Symbols in the block follow it: by rule 2 only section symbols and
 * __abi_tag. */
static e2s_err fix_symbols(elfp_file *f, const elfp_grow_plan *g,
			   uint64_t dva, e2s_diag *d)
{
	for (size_t i = 1; i < f->old_nsecs; i++) {
		uint32_t type = f->secs[i].sh.type;
		elfr_symtab t;
		if ((type != SHT_SYMTAB && type != SHT_DYNSYM) ||
		    !elfr_symtab_init(f->in, i, &t))
			continue;
		for (size_t k = 0; k < t.n; k++) {
			elfr_sym sym;
			if (!elfr_symtab_get(&t, k, &sym) ||
			    sym.st_shndx == SHN_UNDEF ||
			    ELF64_ST_TYPE(sym.info) == STT_TLS ||
			    !in_range(sym.value, g->vlo, g->vhi))
				continue;
			e2s_err e = elfp_add_bpatch(f, elfr_sym_value_offset(&t, k),
						    8, sym.value + dva, false, d);
			if (e)
				return e;
			/* A symbol table that moved itself: its copy. */
			if (g->in[i]) {
				elfp_bpatch *b = &f->bp[f->nbp - 1];
				b->off = f->blk_off + (b->off - g->lo);
				b->out = true;
			}
		}
	}
	return E2S_ERR_OK;
}

e2s_err elfp_grow_apply(elfp_file *f, const elfp_grow_plan *g,
			uint64_t blk_va, size_t total, e2s_diag *d)
{
	uint64_t doff = f->blk_off - g->lo, dva = blk_va - g->vlo;
	e2s_err e;
	for (size_t i = 1; i < f->old_nsecs; i++) {
		if (!g->in[i])
			continue;
		f->secs[i].sh.offset += doff;
		f->secs[i].sh.addr += dva;
	}
	for (size_t i = 0; i < f->old_nsegs; i++) {
		elfp_phdr *p = &f->segs[i].ph;
		if (p->type == PT_LOAD || p->type == PT_PHDR || !p->filesz ||
		    !in_range(p->offset, g->lo, g->hi))
			continue;
		p->offset += doff;
		p->vaddr += dva;
		p->paddr += dva;
	}
	dyn_fix x = {f, g, dva, E2S_ERR_OK, d};
	elfr_each_dyn(f->in, dyn_patch, &x);
	if (x.e)
		return x.e;
	e = fix_symbols(f, g, dva, d);
	if (e)
		return e;
	/* The part of the old block past the grown table: stale copies. */
	uint64_t need = f->in->phoff + (uint64_t)total * ELFP_PHDR_SIZE;
	if (g->hi > need)
		e = elfp_add_bpatch(f, need, g->hi - need, 0, true, d);
	return e;
}
