/* Public API: separate debug files brought in line with the converted
 * file they were cut from (include/eh2sframe.h says why).
 *
 * Both files are read with the ELF reader (src/elf/elf_file.h), not
 * through elfpatch: a debug file made by eu-strip -f keeps the original
 * program headers, whose segments lie past its end, which elfpatch
 * rightly refuses in a file it is about to convert. The debug file is
 * written anew, through elfpatch's writer (elfp_write_pieces_atomic): its ELF header, its sections in the same order (at their
 * old offsets unless the converted file's program header table, placed
 * at the converted file's e_phoff, is in the way), then .shstrtab and
 * the section header table, the new section headers right after the
 * last allocated one. Symbol values of moved sections and section
 * indices in symbol tables are updated; no other byte changes. */
#include <elf.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "../common/buf.h"
#include "../common/reader.h"
#include "../elf/elf_file.h"
#include "../elfpatch/elfpatch.h"
#include "api_int.h"

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

/* Open path with the ELF reader and check what this file needs of its
 * headers beyond what the reader checks (the program header table, not
 * the segments: a debug file's lie past its end): 64-bit, a section
 * header table with names, counts that fit the ELF header (the file is
 * written with them), every section's bytes inside the file. Messages
 * name the path. */
static e2s_err dbg_open(const char *path, unsigned flags, elfr_file **out,
			e2s_diag *d)
{
	e2s_diag sub = {0};
	elfr_file *e = NULL;
	e2s_err err = elfr_open(path, ELFR_ONLY64 | flags, &e, &sub);
	*out = NULL;
	if (err == E2S_ERR_NOMEM)
		return e2s_fail(d, err, NULL, 0, NULL);
	if (err && !sub.detail[0])
		return e2s_fail(d, err, NULL, 0, "%s", path);
	if (err)
		return e2s_fail(d, err, NULL, 0, "%s: %s", path, sub.detail);
	if (!e->shnum || e->shnum >= SHN_LORESERVE ||
	    e->shstrndx >= SHN_LORESERVE || e->phnum >= PN_XNUM) {
		err = e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0, "%s: no section "
			       "headers, or extended numbering (not handled)",
			       path);
		goto fail;
	}
	if (e->phnum && e->phoff < D_EHDR) {
		err = e2s_fail(d, E2S_ERR_TRUNCATED, NULL, 0,
			       "%s: header tables outside the file", path);
		goto fail;
	}
	for (size_t i = 0; i < e->shnum; i++) {
		const elfr_shdr *s = &e->sh[i];
		if (i && has_bytes(s) && !elfr_bytes(e, s->offset, s->size)) {
			err = e2s_fail(d, E2S_ERR_TRUNCATED, NULL, 0,
				       "%s: section %zu runs past the end of "
				       "the file", path, i);
			goto fail;
		}
		if (s->addralign & (s->addralign - 1) ||
		    s->addralign > ((uint64_t)1 << 30)) {
			err = e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
				       "%s: section %zu: sh_addralign", path, i);
			goto fail;
		}
	}
	if (e->shstrndx == SHN_UNDEF || e->shstrndx >= e->shnum ||
	    e->sh[e->shstrndx].type != SHT_STRTAB) {
		err = e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
			       "%s: no section name table", path);
		goto fail;
	}
	*out = e;
	return E2S_ERR_OK;
fail:
	elfr_close(e);
	return err;
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

/* The descriptor of the first NT_GNU_BUILD_ID note of a SHT_NOTE
 * section. */
static const uint8_t *build_id(const elfr_file *e, size_t *len)
{
	for (size_t i = 1; i < e->shnum; i++) {
		size_t n, pos = 0;
		const uint8_t *p = e->sh[i].type == SHT_NOTE
					   ? elfr_section_data(e, i, &n)
					   : NULL;
		elfr_note nt;
		while (p && elfr_note_next(e, p, n, e->sh[i].addralign, &pos, &nt))
			if (nt.type == NT_GNU_BUILD_ID && nt.namesz == 4 &&
			    memcmp(nt.name, "GNU", 4) == 0 && nt.descsz) {
				*len = nt.descsz;
				return nt.desc;
			}
	}
	return NULL;
}

/* .gnu_debuglink: the section, or 0 when there is none or it is not
 * "name\0, padding to 4, CRC32". */
static size_t debuglink(const elfr_file *e)
{
	for (size_t i = 1; i < e->shnum; i++) {
		const elfr_shdr *s = &e->sh[i];
		if (strcmp(sec_name(e, i), ".gnu_debuglink") != 0 ||
		    !has_bytes(s) || s->size < 8)
			continue;
		const char *n = (const char *)e->img + s->offset;
		const char *z = memchr(n, 0, s->size - 4);
		if (z && align_up((uint64_t)(z - n) + 1, 4) + 4 == s->size)
			return i;
	}
	return 0;
}

eh2s_status eh2s_debug_refs_read(const char *path, eh2s_debug_refs *caller,
				 eh2s_error *err)
{
	elfr_file *e = NULL;
	e2s_diag d = {0};
	eh2s_debug_refs refs, *out = &refs;
	eh2s_status st;
	if (!path || !caller)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	if ((st = api_struct_check(caller, API_END(eh2s_debug_refs, linked),
				   "eh2s_debug_refs", err)) != EH2S_OK)
		return st;
	memset(out, 0, sizeof *out);
	if (dbg_open(path, 0, &e, &d))
		return api_fail(err, &d);
	out->linked = e->type == ET_EXEC || e->type == ET_DYN;
	size_t len = 0;
	const uint8_t *id = build_id(e, &len);
	for (size_t i = 0; id && i < len && i < (sizeof out->build_id - 1) / 2; i++)
		snprintf(out->build_id + 2 * i, 3, "%02x", id[i]);
	size_t l = debuglink(e);
	if (l)
		snprintf(out->debuglink, sizeof out->debuglink, "%s",
			 (const char *)e->img + e->sh[l].offset);
	elfr_close(e);
	api_struct_out(caller, out, sizeof *out);
	return api_ok(err);
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
		    bool *changed, eh2s_debug_result *res, e2s_diag *d)
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
	bool ph = c->phnum != g->phnum || c->phoff != g->phoff;
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
		if (ph_len && overlaps(off, s->size, c->phoff, ph_len))
			off = align_up(c->phoff + ph_len, a);
		p->off[p->order[k]] = off;
		end = off + s->size;
	}
	if (ph_len && c->phoff + ph_len > end)
		end = c->phoff + ph_len;
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

/* The new file, written over path through elfpatch's writer (mode and
 * owner kept): the ELF header, the sections at their new offsets
 * (whatever else the old file held between them is dropped; unchanged
 * ones copied by the kernel where it can: debugging sections are most
 * of the file), the program header table, .shstrtab and the section
 * header table. */
static e2s_err replace(const elfr_file *c, const elfr_file *g,
		       const dbg_plan *p, const char *path, e2s_diag *d)
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
	elfp_put_ehdr_tables(eh, c->phoff, c->phnum, p->sh_off, nsh,
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
		pc[n++] = (elfp_piece){.off = c->phoff,
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
	e = elfp_write_pieces_atomic(path, &g->st, &src, pc, n, p->end, d);
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

/* When c's .gnu_debuglink names the debug file, give it the CRC of the
 * debug file as it now is (gdb and eu-unstrip check it when they find
 * the file by that name). */
static e2s_err fix_crc(const char *file, const elfr_file *c,
		       const char *debug, bool *updated, e2s_diag *d)
{
	size_t l = debuglink(c);
	char bcopy[PATH_MAX];
	*updated = false;
	if (!l || strlen(debug) >= sizeof bcopy)
		return E2S_ERR_OK;
	strcpy(bcopy, debug);
	if (strcmp((const char *)c->img + c->sh[l].offset, basename(bcopy)) != 0)
		return E2S_ERR_OK;
	elfr_file *g = NULL;
	e2s_err e = dbg_open(debug, 0, &g, d);
	if (e)
		return e;
	/* zlib's CRC-32 (reflected 0xedb88320), as gdb checks it. */
	uint32_t crc = (uint32_t)crc32_z(0, g->img, g->size);
	elfr_close(g);
	uint64_t at = c->sh[l].offset + c->sh[l].size - 4;
	if (elfr_get(c, c->img + at, 4) == crc)
		return E2S_ERR_OK;
	/* The file is rewritten like any in-place conversion (temporary
	 * file, renamed over it, mode and owner kept): its bytes stay, but
	 * for the CRC word of .gnu_debuglink. */
	uint8_t *sec = malloc((size_t)c->sh[l].size);
	elfp_file *f = NULL;
	if (!sec)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	memcpy(sec, c->img + c->sh[l].offset, (size_t)c->sh[l].size);
	e2s_store_uN(sec + c->sh[l].size - 4, crc, 4, c->be);
	e = elfp_open(file, &f, d);
	if (!e)
		e = elfp_shrink_section(f, l, c->sh[l].size, d);
	if (!e)
		e = elfp_layout(f, d);
	if (!e)
		e = elfp_take_content(f, l, sec, (size_t)c->sh[l].size, d);
	else
		free(sec);
	if (!e)
		e = elfp_write_atomic(file, file, true, f, d);
	elfp_close(f);
	*updated = !e;
	return e;
}

eh2s_status eh2s_update_debug_file(const char *file, const char *debug,
				   eh2s_debug_result *caller, eh2s_error *err)
{
	eh2s_debug_result local, *res = &local;
	eh2s_status st;
	elfr_file *c = NULL, *g = NULL;
	dbg_plan p;
	e2s_diag d = {0};
	char real[PATH_MAX];
	bool changed = false, crc = false;
	e2s_err e;

	if (!file || !debug)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	if (caller && (st = api_struct_check(
			       caller, API_END(eh2s_debug_result, crc_updated),
			       "eh2s_debug_result", err)) != EH2S_OK)
		return st;
	memset(res, 0, sizeof *res);
	memset(&p, 0, sizeof p);
	/* A link is followed: the file it names is the debug file. */
	if (!realpath(debug, real)) {
		e2s_fail(&d, E2S_ERR_IO, NULL, 0, "%s: %s", debug, strerror(errno));
		return api_fail(err, &d);
	}
	e = dbg_open(file, 0, &c, &d);
	if (!e)
		e = dbg_open(real, ELFR_KEEP_FD, &g, &d);
	if (!e && c->st.st_dev == g->st.st_dev && c->st.st_ino == g->st.st_ino)
		e = e2s_fail(&d, E2S_ERR_USAGE, NULL, 0,
			     "the file and its debug file are the same file");
	if (!e && (c->machine != g->machine || c->be != g->be ||
		   c->type != g->type ||
		   (c->type != ET_EXEC && c->type != ET_DYN)))
		e = e2s_fail(&d, E2S_ERR_USAGE, NULL, 0,
			     "not an executable or shared object with a "
			     "debug file of the same type and machine");
	if (!e) {
		size_t a = 0, b = 0;
		const uint8_t *ia = build_id(c, &a), *ib = build_id(g, &b);
		if (ia && ib && (a != b || memcmp(ia, ib, a) != 0))
			e = e2s_fail(&d, E2S_ERR_USAGE, NULL, 0,
				     "build IDs differ: not its debug file");
	}
	if (!e) {
		p.off = calloc(g->shnum, sizeof *p.off);
		p.order = calloc(g->shnum, sizeof *p.order);
		p.delta = calloc(g->shnum, sizeof *p.delta);
		p.added = calloc(c->shnum, sizeof *p.added);
		if (!p.off || !p.order || !p.delta || !p.added)
			e = e2s_fail(&d, E2S_ERR_NOMEM, NULL, 0, NULL);
	}
	if (!e)
		e = plan(c, g, &p, &changed, res, &d);
	if (!e && changed)
		e = replace(c, g, &p, real, &d);
	res->changed = changed && !e;
	if (!e)
		e = fix_crc(file, c, real, &crc, &d);
	res->crc_updated = crc;
	free(p.off);
	free(p.order);
	free(p.delta);
	free(p.added);
	elfr_close(c);
	elfr_close(g);
	if (caller)
		api_struct_out(caller, res, sizeof *res);
	/* A mismatch is said as it is, without "invalid argument". */
	if (e == E2S_ERR_USAGE)
		return api_usage(err, EH2S_E_USAGE, d.detail);
	return e ? api_fail(err, &d) : api_ok(err);
}
