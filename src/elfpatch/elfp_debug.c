/* Separate debug files brought in line with the converted file they
 * were cut from (include/eh2sframe.h says why; src/api/api_debug.c finds
 * and checks the files, src/convert/convert_file.c does the same for the
 * mini debuginfo embedded in .gnu_debugdata).
 *
 * Both files are read with the ELF reader (src/elf/elf_file.h), not as
 * elfp_files: a debug file made by eu-strip -f keeps the original
 * program headers, whose segments lie past its end, which elfp_open
 * rightly refuses in a file it is about to convert. The debug file is
 * written anew, through this module's writer (elfp_write_pieces_*): its
 * ELF header, its sections in the same order (at their old offsets
 * unless the converted file's program header table, placed at the
 * converted file's e_phoff (compact: right after the ELF header), is in
 * the way), then .shstrtab and the
 * section header table, the new section headers right after the last
 * allocated one. Symbol values of moved sections and section indices in
 * symbol tables are updated; no other byte changes. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "../common/reader.h"
#include "elfpatch.h"

#define D_EHDR 64u
#define D_PHDR 56u
#define D_SHDR 64u
#define D_SYM 24u

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return a > 1 ? (v + a - 1) / a * a : v;
}

static bool has_bytes(const elfr_shdr *s)
{
	return s->type != SHT_NOBITS && s->type != SHT_NULL && s->size;
}

/* What this writer needs of a debug file's headers beyond what the
 * reader checks (the program header table, not the segments: a debug
 * file's lie past its end): 64-bit, a section header table with names,
 * counts that fit the ELF header (the file is written with them), every
 * section's bytes inside the file. */
e2s_err elfp_debug_check(const elfr_file *e, e2s_diag *d)
{
	if (!e->shnum || e->shnum >= SHN_LORESERVE ||
	    e->shstrndx >= SHN_LORESERVE || e->phnum >= PN_XNUM)
		return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0, "no section "
				"headers, or extended numbering (not handled)");
	if (e->phnum && e->phoff < D_EHDR)
		return e2s_fail(d, E2S_ERR_TRUNCATED, NULL, 0,
				"header tables outside the file");
	for (size_t i = 0; i < e->shnum; i++) {
		const elfr_shdr *s = &e->sh[i];
		if (i && has_bytes(s) && !elfr_bytes(e, s->offset, s->size))
			return e2s_fail(d, E2S_ERR_TRUNCATED, NULL, 0,
					"section %zu runs past the end of "
					"the file", i);
		if (s->addralign & (s->addralign - 1) ||
		    s->addralign > ((uint64_t)1 << 30))
			return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
					"section %zu: sh_addralign", i);
	}
	if (e->shstrndx == SHN_UNDEF || e->shstrndx >= e->shnum ||
	    e->sh[e->shstrndx].type != SHT_STRTAB)
		return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
				"no section name table");
	return E2S_ERR_OK;
}

/* Section i's name, "" when it does not fit in the name table. */
static const char *sec_name(const elfr_file *e, size_t i)
{
	const char *n = elfr_section_name(e, i);
	return n ? n : "";
}

static bool is_alloc(const elfr_file *e, size_t i)
{
	return i && (e->sh[i].flags & SHF_ALLOC) && e->sh[i].type != SHT_NULL;
}

/* The k-th (from 0) allocated section named name, or 0. Sections pair up
 * by name and rank among equally named ones: the converter appends its
 * sections and strip tools keep the order of the others. */
static size_t find_alloc(const elfr_file *e, const char *name, size_t k)
{
	for (size_t i = 1; i < e->shnum; i++)
		if (is_alloc(e, i) && strcmp(sec_name(e, i), name) == 0 && k-- == 0)
			return i;
	return 0;
}

static size_t rank_of(const elfr_file *e, size_t i)
{
	size_t k = 0;
	const char *name = sec_name(e, i);
	for (size_t j = 1; j < i; j++)
		k += is_alloc(e, j) && strcmp(sec_name(e, j), name) == 0;
	return k;
}

/* What the new debug file looks like. */
typedef struct {
	uint64_t *off;       /* final sh_offset of each old section */
	size_t *order;       /* old sections with bytes, by old offset */
	size_t norder;
	int64_t *delta;      /* address change of each old section */
	size_t *added;       /* indices in the converted file of new ones */
	size_t nadded;
	size_t at;           /* they go before this old index: after the last
	                      * allocated section (dwz, for one, wants every
	                      * allocated section ahead of the others) */
	uint64_t phoff;      /* where the program header table goes */
	uint64_t str_off, str_len, sh_off, end;
} dbg_plan;

static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

static int by_offset(const void *x, const void *y, void *ctx)
{
	const elfr_file *g = ctx;
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	if (g->sh[a].offset != g->sh[b].offset)
		return g->sh[a].offset < g->sh[b].offset ? -1 : 1;
	return a < b ? -1 : 1;
}

/* Pair the sections of c (converted) and g (debug); fill what changes.
 * *changed is false when g already describes c. */
static e2s_err plan(const elfr_file *c, const elfr_file *g, dbg_plan *p,
		    bool *changed, elfp_debug_stats *res, e2s_diag *d)
{
	*changed = false;
	for (size_t i = 1; i < g->shnum; i++) {
		p->off[i] = g->sh[i].offset;
		if (!is_alloc(g, i))
			continue;
		size_t j = find_alloc(c, sec_name(g, i), rank_of(g, i));
		if (!j)
			continue; /* removed from the stripped file: leave it */
		if (c->sh[j].size != g->sh[i].size)
			return e2s_fail(d, E2S_ERR_USAGE, NULL, 0,
					"section %s: %llu bytes in the debug "
					"file, %llu in the file: not its debug "
					"file", sec_name(g, i),
					(unsigned long long)g->sh[i].size,
					(unsigned long long)c->sh[j].size);
		if (c->sh[j].addr != g->sh[i].addr) {
			p->delta[i] = (int64_t)(c->sh[j].addr - g->sh[i].addr);
			res->moved++;
		}
	}
	for (size_t j = 1; j < c->shnum; j++) {
		if (!is_alloc(c, j))
			continue;
		if (!find_alloc(g, sec_name(c, j), rank_of(c, j)))
			p->added[p->nadded++] = j;
	}
	res->added = p->nadded;
	p->at = 1;
	for (size_t i = 1; i < g->shnum; i++)
		if (is_alloc(g, i))
			p->at = i + 1;
	bool ph = c->phnum != g->phnum || p->phoff != g->phoff;
	/* Offsets and file sizes of segments differ in every debug file;
	 * the rest must be the converted file's. */
	for (size_t k = 0; !ph && k < c->phnum; k++) {
		const elfr_phdr *a = &c->ph[k], *b = &g->ph[k];
		ph = a->type != b->type || a->flags != b->flags ||
		     a->vaddr != b->vaddr || a->paddr != b->paddr ||
		     a->memsz != b->memsz || a->align != b->align;
	}
	if (!ph && !res->moved && !p->nadded)
		return E2S_ERR_OK;
	*changed = true;
	if (g->shnum + p->nadded >= SHN_LORESERVE)
		return e2s_fail(d, E2S_ERR_UNSUPPORTED_MACHINE, NULL, 0,
				"too many sections for the debug file");
	/* The table goes where the converted file has it. The sections keep
	 * their order in the file (dwz refuses allocated bytes after the
	 * debugging sections) and their offsets where they can: one in the
	 * way of the table, and every one after it then, moves up. */
	uint64_t ph_len = (uint64_t)c->phnum * D_PHDR;
	uint64_t end = D_EHDR;
	for (size_t i = 1; i < g->shnum; i++)
		if (i != g->shstrndx && has_bytes(&g->sh[i]))
			p->order[p->norder++] = i;
	qsort_r(p->order, p->norder, sizeof *p->order, by_offset, (void *)g);
	for (size_t k = 0; k < p->norder; k++) {
		const elfr_shdr *s = &g->sh[p->order[k]];
		uint64_t a = s->addralign ? s->addralign : 1;
		uint64_t off = s->offset >= end ? s->offset : align_up(end, a);
		if (ph_len && overlaps(off, s->size, p->phoff, ph_len))
			off = align_up(p->phoff + ph_len, a);
		p->off[p->order[k]] = off;
		end = off + s->size;
	}
	if (ph_len && p->phoff + ph_len > end)
		end = p->phoff + ph_len;
	p->str_off = end;
	p->str_len = g->sh[g->shstrndx].size;
	for (size_t k = 0; k < p->nadded; k++)
		p->str_len += strlen(sec_name(c, p->added[k])) + 1;
	end = align_up(end + p->str_len, 8);
	p->sh_off = end;
	p->end = end + (uint64_t)(g->shnum + p->nadded) * D_SHDR;
	return E2S_ERR_OK;
}

/* The new index of old section i (new sections are inserted at p->at). */
static uint64_t new_index(const dbg_plan *p, uint64_t i)
{
	return i >= p->at && i < SHN_LORESERVE ? i + p->nadded : i;
}

/* Bytes of old section i as they go into the new file: symbol tables get
 * the values of symbols in moved sections changed and every section
 * index renumbered, as do SHT_SYMTAB_SHNDX and SHT_GROUP entries. */
static e2s_err section_bytes(const elfr_file *g, const dbg_plan *p, size_t i,
			     uint8_t **out, e2s_diag *d)
{
	const elfr_shdr *s = &g->sh[i];
	uint8_t *b = malloc(s->size);
	if (!b)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	memcpy(b, g->img + s->offset, s->size);
	if (s->type == SHT_SYMTAB || s->type == SHT_DYNSYM) {
		for (uint64_t k = 0; k + D_SYM <= s->size; k += D_SYM) {
			uint64_t shndx = e2s_load_uN(b + k + 6, 2, g->be);
			if (shndx && shndx < g->shnum && p->delta[shndx]) {
				uint64_t v = e2s_load_uN(b + k + 8, 8, g->be);
				e2s_store_uN(b + k + 8, v + (uint64_t)p->delta[shndx], 8,
				    g->be);
			}
			e2s_store_uN(b + k + 6, new_index(p, shndx), 2, g->be);
		}
	} else if (s->type == SHT_SYMTAB_SHNDX || s->type == SHT_GROUP) {
		/* A group's first word is its flags. */
		for (uint64_t k = s->type == SHT_GROUP ? 4 : 0; k + 4 <= s->size; k += 4)
			e2s_store_uN(b + k, new_index(p, e2s_load_uN(b + k, 4, g->be)), 4,
			    g->be);
	}
	*out = b;
	return E2S_ERR_OK;
}

static bool patched(const elfr_shdr *s)
{
	return ((s->type == SHT_SYMTAB || s->type == SHT_DYNSYM) &&
		s->entsize == D_SYM) ||
	       s->type == SHT_SYMTAB_SHNDX || s->type == SHT_GROUP;
}

/* The new file, written over path (mode and owner kept) or, without a
 * path, into *mem: the ELF header, the sections at their new offsets
 * (whatever else the old file held between them is dropped; unchanged
 * ones copied by the kernel where it can: debugging sections are most
 * of the file), the program header table, .shstrtab and the section
 * header table. */
static e2s_err replace(const elfr_file *c, const elfr_file *g,
		       const dbg_plan *p, const char *path, uint8_t **mem,
		       size_t *mem_len, e2s_diag *d)
{
	size_t nsh = g->shnum + p->nadded, n = 0;
	elfp_piece *pc = calloc(p->norder + 4, sizeof *pc);
	uint8_t **own = calloc(p->norder + 1, sizeof *own);
	uint8_t *str = malloc(p->str_len ? p->str_len : 1);
	uint8_t *sh = calloc(nsh, D_SHDR);
	uint32_t *names = calloc(p->nadded + 1, sizeof *names);
	uint8_t eh[D_EHDR];
	e2s_err e = E2S_ERR_OK;

	if (!pc || !own || !str || !sh || !names) {
		e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		goto out;
	}
	memcpy(eh, g->img, D_EHDR);
	elfp_put_ehdr_tables(eh, p->phoff, c->phnum, p->sh_off, nsh,
			     new_index(p, g->shstrndx), g->be);
	pc[n++] = (elfp_piece){.off = 0, .len = D_EHDR, .mem = eh};
	for (size_t k = 0; k < p->norder; k++) {
		size_t i = p->order[k];
		elfp_piece *q = &pc[n++];
		*q = (elfp_piece){.off = p->off[i], .len = g->sh[i].size,
				  .src_off = g->sh[i].offset};
		if (!patched(&g->sh[i]))
			continue;
		e = section_bytes(g, p, i, &own[k], d);
		if (e)
			goto out;
		q->mem = own[k];
	}
	if (c->phnum)
		pc[n++] = (elfp_piece){.off = p->phoff,
				       .len = (uint64_t)c->phnum * D_PHDR,
				       .mem = c->img + c->phoff};
	/* .shstrtab: the old names, then the new ones. */
	const elfr_shdr *st = &g->sh[g->shstrndx];
	memcpy(str, g->img + st->offset, st->size);
	uint64_t at = st->size;
	for (size_t k = 0; k < p->nadded; k++) {
		const char *nm = sec_name(c, p->added[k]);
		names[k] = (uint32_t)at;
		memcpy(str + at, nm, strlen(nm) + 1);
		at += strlen(nm) + 1;
	}
	for (size_t i = 0; i < nsh; i++) {
		elfr_shdr s;
		if (i >= p->at && i < p->at + p->nadded) {
			/* As objcopy --only-keep-debug writes allocated
			 * sections: no bytes, the converted file's address. */
			s = c->sh[p->added[i - p->at]];
			s.name = names[i - p->at];
			s.type = SHT_NOBITS;
			s.offset = p->str_off;
			s.link = s.info = 0;
		} else {
			size_t o = i < p->at ? i : i - p->nadded;
			s = g->sh[o];
			if (o) {
				s.addr += (uint64_t)p->delta[o];
				s.offset = p->off[o];
				s.link = (uint32_t)new_index(p, s.link);
				if (s.type == SHT_REL || s.type == SHT_RELA ||
				    (s.flags & SHF_INFO_LINK))
					s.info = (uint32_t)new_index(p, s.info);
			} else {
				/* The ELF header holds the counts. */
				s.size = s.link = s.info = 0;
			}
			if (o == g->shstrndx) {
				s.offset = p->str_off;
				s.size = p->str_len;
			}
		}
		elfp_put_shdr(sh + i * D_SHDR, &s, g->be);
	}
	pc[n++] = (elfp_piece){.off = p->str_off, .len = p->str_len,
			       .mem = str};
	pc[n++] = (elfp_piece){.off = p->sh_off, .len = nsh * D_SHDR,
			       .mem = sh};
	elfp_source src = {g->img, g->size, g->fd};
	/* The owner too, where we may (package builds run as root or
	 * under fakeroot). */
	if (path)
		e = elfp_write_pieces_atomic(path, &g->st, &src, pc, n, p->end,
					     d);
	else
		e = elfp_write_pieces_mem(&src, pc, n, p->end, mem, mem_len, d);
out:
	for (size_t k = 0; own && k < p->norder; k++)
		free(own[k]);
	free(own);
	free(pc);
	free(str);
	free(sh);
	free(names);
	return e;
}

e2s_err elfp_debug_update(const elfr_file *c, const elfr_file *g,
			  bool compact, const char *path, uint8_t **mem,
			  size_t *mem_len, elfp_debug_stats *st, e2s_diag *d)
{
	dbg_plan p;
	bool changed = false;
	e2s_err e = E2S_ERR_OK;

	memset(st, 0, sizeof *st);
	memset(&p, 0, sizeof p);
	p.phoff = compact ? D_EHDR : c->phoff;
	if (mem) {
		*mem = NULL;
		*mem_len = 0;
	}
	p.off = calloc(g->shnum, sizeof *p.off);
	p.order = calloc(g->shnum, sizeof *p.order);
	p.delta = calloc(g->shnum, sizeof *p.delta);
	p.added = calloc(c->shnum, sizeof *p.added);
	if (!p.off || !p.order || !p.delta || !p.added)
		e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	if (!e)
		e = plan(c, g, &p, &changed, st, d);
	if (!e && changed)
		e = replace(c, g, &p, path, mem, mem_len, d);
	st->changed = changed && !e;
	free(p.off);
	free(p.order);
	free(p.delta);
	free(p.added);
	return e;
}
