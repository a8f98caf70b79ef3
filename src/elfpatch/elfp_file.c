/* elfpatch: an ELF file opened with the reader (src/elf/elf_file.h) and
 * checked for editing, and the edit operations recorded before layout. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "../abi/abi.h"
#include "elfp_internal.h"

void elfp_put(uint8_t *p, uint64_t v, unsigned n, bool be)
{
	e2s_store_uN(p, v, n, be);
}

static bool machine_ok(unsigned m)
{
	return abi_has_sframe(abi_of_machine(m));
}

/* What editing needs beyond what the reader checked: a machine and a
 * type we convert, every section and segment inside the file, section
 * alignments we can place, PT_LOADs in address order and names we can
 * extend. Then the editable copies of the headers. Every offset is
 * checked against the file before use: the input may be truncated or
 * hostile. */
static e2s_err parse(elfp_file *f, e2s_diag *d)
{
	const elfr_file *in = f->in;
	size_t nsec = in->shnum, phnum = in->phnum;
	if (!machine_ok(in->machine))
		return e2s_fail(d, E2S_ERR_UNSUPPORTED_MACHINE, NULL, 0,
				"e_machine %u", in->machine);
	if (in->type != ET_REL && in->type != ET_EXEC && in->type != ET_DYN)
		return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
				"unsupported e_type %u", in->type);
	f->seccap = nsec + 8;
	f->secs = calloc(f->seccap, sizeof *f->secs);
	f->segcap = phnum + 8;
	f->segs = calloc(f->segcap, sizeof *f->segs);
	if (!f->secs || !f->segs)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	for (size_t i = 0; i < nsec; i++) {
		const elfp_shdr *s = &in->sh[i];
		f->secs[i].sh = *s;
		if (i && s->type != SHT_NOBITS && s->type != SHT_NULL) {
			if (!elfr_bytes(in, s->offset, s->size))
				return e2s_fail(d, E2S_ERR_TRUNCATED, NULL, 0,
						"section %zu runs past the end of the file", i);
			f->secs[i].in_off = s->offset;
			f->secs[i].in_size = s->size;
		}
		/* Sections we may move are placed with this alignment. */
		if (s->addralign & (s->addralign - 1) ||
		    s->addralign > ELFP_MAX_ALIGN)
			return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
					"section %zu: bad sh_addralign %#llx", i,
					(unsigned long long)s->addralign);
	}
	for (size_t i = 0; i < phnum; i++) {
		const elfp_phdr *p = &in->ph[i];
		f->segs[i].ph = *p;
		f->segs[i].track = ELFP_TRACK_NONE;
		if (!elfr_bytes(in, p->offset, p->filesz))
			return e2s_fail(d, E2S_ERR_TRUNCATED, NULL, 0,
					"segment %zu runs past the end of the file", i);
		if (p->filesz > p->memsz && p->type == PT_LOAD)
			return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
					"segment %zu: p_filesz > p_memsz", i);
	}
	/* Loaders map PT_LOADs in address order and we place the new one
	 * above them all: out-of-order or overlapping ones mean a corrupt
	 * file whose memory image we cannot reason about. */
	uint64_t load_end = 0;
	bool have_load = false;
	for (size_t i = 0; i < phnum; i++) {
		const elfp_phdr *p = &in->ph[i];
		if (p->type != PT_LOAD)
			continue;
		if (p->memsz > UINT64_MAX - p->vaddr ||
		    (have_load && p->vaddr < load_end))
			return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
					"segment %zu: PT_LOAD overlaps or precedes "
					"the previous one", i);
		load_end = p->vaddr + p->memsz;
		have_load = true;
	}
	f->nsecs = f->old_nsecs = nsec;
	f->nsegs = f->old_nsegs = phnum;
	bw_init(&f->strtab, in->be);
	if (nsec) {
		size_t shstrndx = in->shstrndx;
		if (shstrndx == SHN_UNDEF || shstrndx >= nsec ||
		    f->secs[shstrndx].sh.type != SHT_STRTAB)
			return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
					"no section name table (e_shstrndx %zu)",
					shstrndx);
		f->shstrndx = shstrndx;
		const elfp_shdr *s = &f->secs[shstrndx].sh;
		bw_bytes(&f->strtab, in->img + s->offset, s->size);
		if (f->strtab.oom)
			return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		/* New names are appended to the table: a name pointing past its
		 * end would turn into the new name. */
		for (size_t i = 1; i < nsec; i++)
			if (f->secs[i].sh.name >= f->strtab.len &&
			    f->secs[i].sh.type != SHT_NULL)
				return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
						"section %zu: sh_name %u past the "
						"section name table", i,
						f->secs[i].sh.name);
	}
	return E2S_ERR_OK;
}

/* A handle for the input in (taken over, also on failure); check it. */
static e2s_err open_input(e2s_err e, elfr_file *in, elfp_file **out,
			  e2s_diag *d)
{
	elfp_file *f = NULL;
	*out = NULL;
	if (e)
		return e;
	f = calloc(1, sizeof *f);
	if (!f) {
		elfr_close(in);
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	}
	f->in = in;
	f->keep = in->size;
	e = parse(f, d);
	if (e) {
		elfp_close(f);
		return e;
	}
	*out = f;
	return E2S_ERR_OK;
}

e2s_err elfp_open_mem(const void *data, size_t size, elfp_file **out,
		      e2s_diag *d)
{
	elfr_file *in = NULL;
	e2s_err e = elfr_open_mem(data, size, ELFR_ONLY64, &in, d);
	return open_input(e, in, out, d);
}

e2s_err elfp_open_view(const void *data, size_t size, elfp_file **out,
		       e2s_diag *d)
{
	elfr_file *in = NULL;
	e2s_err e = elfr_open_view(data, size, ELFR_ONLY64, &in, d);
	return open_input(e, in, out, d);
}

/* The input is mapped, not read: only the pages the parse and the CFI
 * pass touch are faulted in, and elfp_write copies the untouched bytes
 * from the file inside the kernel. */
e2s_err elfp_open(const char *path, elfp_file **out, e2s_diag *d)
{
	elfr_file *in = NULL;
	e2s_err e = elfr_open(path, ELFR_ONLY64 | ELFR_KEEP_FD, &in, d);
	return open_input(e, in, out, d);
}

e2s_err elfp_open_symbols(const char *path, elfp_file **out, e2s_diag *d)
{
	elfr_file *in = NULL;
	e2s_err e = elfr_open(path, ELFR_ONLY64 | ELFR_NO_SEGMENTS, &in, d);
	return open_input(e, in, out, d);
}

void elfp_close(elfp_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nsecs; i++)
		elfp_sec_content(&f->secs[i], NULL);
	free(f->secs);
	free(f->segs);
	free(f->bp);
	bw_free(&f->strtab);
	elfr_close(f->in);
	free(f);
}

/* ---- Queries --------------------------------------------------------- */

const uint8_t *elfp_image(const elfp_file *f, size_t *size)
{
	*size = f->in->size;
	return f->in->img;
}
unsigned elfp_type(const elfp_file *f) { return f->in->type; }
unsigned elfp_machine(const elfp_file *f) { return f->in->machine; }
bool elfp_big_endian(const elfp_file *f) { return f->in->be; }
bool elfp_is_rel(const elfp_file *f) { return f->in->type == ET_REL; }
size_t elfp_shnum(const elfp_file *f) { return f->nsecs; }
size_t elfp_phnum(const elfp_file *f) { return f->nsegs; }

const elfp_shdr *elfp_section(const elfp_file *f, size_t i)
{
	return i < f->nsecs ? &f->secs[i].sh : NULL;
}

const elfp_phdr *elfp_segment(const elfp_file *f, size_t i)
{
	return i < f->nsegs ? &f->segs[i].ph : NULL;
}

const char *elfp_section_name(const elfp_file *f, size_t i)
{
	if (i >= f->nsecs || f->secs[i].sh.name >= f->strtab.len)
		return NULL;
	const char *s = (const char *)f->strtab.data + f->secs[i].sh.name;
	if (!memchr(s, 0, f->strtab.len - f->secs[i].sh.name))
		return NULL;
	return s;
}

size_t elfp_find_section(const elfp_file *f, const char *name)
{
	for (size_t i = 1; i < f->nsecs; i++) {
		const char *n = elfp_section_name(f, i);
		if (n && strcmp(n, name) == 0)
			return i;
	}
	return 0;
}

/* A group section's current content (parse() checked the input's). */
static const uint8_t *group_bytes(const elfp_file *f, size_t g)
{
	const elfp_sec *s = &f->secs[g];
	return s->has_content ? s->content : f->in->img + s->sh.offset;
}

/* Read word k of a group section's current content. */
static uint32_t group_word(const elfp_file *f, size_t g, size_t k)
{
	if (4 * k + 4 > f->secs[g].sh.size)
		return 0;
	return (uint32_t)elfr_get(f->in, group_bytes(f, g) + 4 * k, 4);
}

size_t elfp_group_of(const elfp_file *f, size_t i)
{
	for (size_t g = 1; g < f->nsecs; g++)
		if (f->secs[g].sh.type == SHT_GROUP &&
		    elfr_group_lists(f->in, group_bytes(f, g),
				     (size_t)f->secs[g].sh.size, i))
			return g;
	return 0;
}

size_t elfp_symtab(const elfp_file *f)
{
	for (size_t i = 1; i < f->nsecs; i++)
		if (f->secs[i].sh.type == SHT_SYMTAB)
			return i;
	return 0;
}

sfr_sec_kind elfp_sframe_kind(const elfp_file *f, size_t i)
{
	if (i == 0 || i >= f->old_nsecs)
		return SFR_SEC_NONE;
	const elfp_sec *s = &f->secs[i];
	/* The input extent was checked against the file by parse(). */
	sfr_sec_kind k = sfr_section_kind(s->sh.type, elfp_section_name(f, i),
					  s->in_size ? f->in->img + s->in_off : NULL,
					  (size_t)s->in_size);
	if (k == SFR_SEC_PLACEHOLDER && f->in->type == ET_REL)
		k = SFR_SEC_FOREIGN;
	return k;
}

/* ---- Edits ----------------------------------------------------------- */

/* Offset of name in the working .shstrtab, reusing a matching suffix of
 * an existing string; appends otherwise. */
static e2s_err strtab_add(elfp_file *f, const char *name, uint32_t *off,
			  e2s_diag *d)
{
	size_t n = strlen(name) + 1;
	if (f->strtab.len >= n) {
		const uint8_t *hit = NULL, *p = f->strtab.data;
		size_t left = f->strtab.len;
		/* memmem finds name+NUL; any hit ends a string. */
		hit = memmem(p, left, name, n);
		if (hit) {
			*off = (uint32_t)(hit - p);
			return E2S_ERR_OK;
		}
	}
	if (f->strtab.len > UINT32_MAX - n - 1)
		return e2s_fail(d, E2S_ERR_TOO_LARGE, NULL, 0,
				"section name table too large");
	/* Offset 0 must stay the empty name, and an unterminated last
	 * string must not run into the new one. */
	if (f->strtab.len == 0 || f->strtab.data[f->strtab.len - 1] != 0) {
		bw_u8(&f->strtab, 0);
		f->strtab_changed = true;
	}
	*off = (uint32_t)f->strtab.len;
	bw_bytes(&f->strtab, name, n);
	if (f->strtab.oom)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	f->strtab_changed = true;
	return E2S_ERR_OK;
}

static e2s_err not_after_layout(const elfp_file *f, e2s_diag *d)
{
	if (f->laid_out)
		return e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
				"edit after elfp_layout");
	return E2S_ERR_OK;
}

e2s_err elfp_add_section(elfp_file *f, const char *name,
			 const elfp_shdr *sh, size_t *idx, e2s_diag *d)
{
	e2s_err e = not_after_layout(f, d);
	uint32_t off = 0;
	if (e)
		return e;
	if (f->nsecs == 0) {
		/* Section headers stripped (sstrip): loaders need none, but the
		 * new .sframe gets a table of its own, with section 0 and a
		 * .shstrtab, so tools can still find it by name. */
		if (f->in->type == ET_REL)
			return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
					"relocatable file has no section headers");
		memset(&f->secs[0], 0, 2 * sizeof f->secs[0]);
		bw_u8(&f->strtab, 0);
		e = strtab_add(f, ".shstrtab", &off, d);
		if (e)
			return e;
		elfp_sec *st = &f->secs[1];
		st->sh.type = SHT_STRTAB;
		st->sh.name = off;
		st->sh.addralign = 1;
		st->is_new = true;
		st->place = ELFP_TAIL;
		f->shstrndx = 1;
		f->nsecs = 2;
		f->strtab_changed = true;
		f->edited = true;
	}
	if (f->nsecs >= 0xffffffffu)
		return e2s_fail(d, E2S_ERR_TOO_LARGE, NULL, 0,
				"too many sections");
	e = strtab_add(f, name, &off, d);
	if (e)
		return e;
	if (f->nsecs == f->seccap) {
		size_t cap = f->seccap * 2;
		elfp_sec *p = realloc(f->secs, cap * sizeof *p);
		if (!p)
			return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		f->secs = p;
		f->seccap = cap;
	}
	elfp_sec *s = &f->secs[f->nsecs];
	memset(s, 0, sizeof *s);
	s->sh = *sh;
	s->sh.name = off;
	s->sh.addr = 0;
	s->sh.offset = 0;
	s->is_new = true;
	s->place = (f->in->type != ET_REL && (sh->flags & SHF_ALLOC)) ? ELFP_SEG
								    : ELFP_TAIL;
	*idx = f->nsecs++;
	f->edited = true;
	return E2S_ERR_OK;
}

e2s_err elfp_move_section(elfp_file *f, size_t i, uint64_t new_size,
			  e2s_diag *d)
{
	e2s_err e = not_after_layout(f, d);
	if (e)
		return e;
	if (i == 0 || i >= f->nsecs)
		return e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
				"move of section %zu of %zu", i, f->nsecs);
	elfp_sec *s = &f->secs[i];
	elfp_sec_content(s, NULL);
	s->has_content = false;
	s->sh.size = new_size;
	s->place = (f->in->type != ET_REL && (s->sh.flags & SHF_ALLOC)) ? ELFP_SEG
								      : ELFP_TAIL;
	f->edited = true;
	return E2S_ERR_OK;
}

e2s_err elfp_shrink_section(elfp_file *f, size_t i, uint64_t new_size,
			    e2s_diag *d)
{
	e2s_err e = not_after_layout(f, d);
	if (e)
		return e;
	if (i == 0 || i >= f->nsecs || f->secs[i].is_new ||
	    f->secs[i].place != ELFP_ORIG || new_size > f->secs[i].sh.size ||
	    f->secs[i].sh.type == SHT_NOBITS)
		return e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
				"cannot rewrite section %zu in place", i);
	elfp_sec *s = &f->secs[i];
	s->old_offset = s->sh.offset;
	s->old_size = s->sh.size;
	s->sh.size = new_size;
	s->place = ELFP_INPLACE;
	f->edited = true;
	return E2S_ERR_OK;
}

e2s_err elfp_set_type(elfp_file *f, size_t i, uint32_t type, uint64_t align,
		      e2s_diag *d)
{
	e2s_err e = not_after_layout(f, d);
	if (e)
		return e;
	if (i == 0 || i >= f->nsecs || type == SHT_NOBITS ||
	    f->secs[i].sh.type == SHT_NOBITS || align & (align - 1) ||
	    align > ELFP_MAX_ALIGN)
		return e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
				"cannot change the type of section %zu", i);
	elfp_shdr *sh = &f->secs[i].sh;
	if (sh->type != type || sh->addralign < align) {
		sh->type = type;
		if (sh->addralign < align)
			sh->addralign = align;
		f->edited = true;
	}
	return E2S_ERR_OK;
}

e2s_err elfp_drop_section(elfp_file *f, size_t i, e2s_diag *d)
{
	e2s_err e = not_after_layout(f, d);
	if (e)
		return e;
	if (f->in->type != ET_REL || i == 0 || i >= f->old_nsecs ||
	    i == f->shstrndx || f->secs[i].place != ELFP_ORIG ||
	    f->secs[i].sh.type == SHT_GROUP)
		return e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
				"cannot drop section %zu", i);
	size_t g = elfp_group_of(f, i);
	if (g) {
		/* Rewrite the group without i (word 0 is the flags word). */
		elfp_sec *gs = &f->secs[g];
		size_t n = (size_t)(gs->sh.size / 4), m = 1;
		uint8_t *p = malloc(n * 4 + 1);
		if (!p)
			return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		elfp_put(p, group_word(f, g, 0), 4, f->in->be);
		for (size_t k = 1; k < n; k++) {
			uint32_t w = group_word(f, g, k);
			if (w != i)
				elfp_put(p + 4 * m++, w, 4, f->in->be);
		}
		elfp_sec_content(gs, p);
		gs->has_content = true;
		gs->sh.size = (uint64_t)m * 4;
		if (gs->place == ELFP_ORIG)
			gs->place = ELFP_TAIL;
	}
	elfp_sec *s = &f->secs[i];
	uint8_t *z = malloc(1);
	if (!z)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	s->old_offset = s->sh.offset;
	s->old_size = s->sh.type == SHT_NOBITS ? 0 : s->sh.size;
	s->place = ELFP_INPLACE;
	s->content = z;
	s->has_content = true;
	memset(&s->sh, 0, sizeof s->sh);
	s->sh.type = SHT_PROGBITS;
	s->sh.flags = SHF_EXCLUDE;
	s->sh.offset = s->old_offset;
	s->sh.addralign = 1;
	f->edited = true;
	return E2S_ERR_OK;
}

e2s_err elfp_group_add(elfp_file *f, size_t group, size_t member,
		       e2s_diag *d)
{
	e2s_err e = not_after_layout(f, d);
	if (e)
		return e;
	if (group == 0 || group >= f->nsecs || member >= f->nsecs ||
	    f->secs[group].sh.type != SHT_GROUP || member > UINT32_MAX)
		return e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
				"bad group %zu / member %zu", group, member);
	elfp_sec *g = &f->secs[group];
	size_t old = g->sh.size;
	uint8_t *p = malloc(old + 4);
	if (!p)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	memcpy(p, g->has_content ? g->content : f->in->img + g->sh.offset, old);
	elfp_put(p + old, member, 4, f->in->be);
	elfp_sec_content(g, p);
	g->has_content = true;
	g->sh.size = old + 4;
	if (g->place == ELFP_ORIG)
		g->place = ELFP_TAIL;
	f->secs[member].sh.flags |= SHF_GROUP;
	f->edited = true;
	return E2S_ERR_OK;
}

e2s_err elfp_insert_seg(elfp_file *f, size_t at, elfp_seg **out,
			e2s_diag *d)
{
	if (f->nsegs == f->segcap) {
		size_t cap = f->segcap * 2 + 4;
		elfp_seg *p = realloc(f->segs, cap * sizeof *p);
		if (!p)
			return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		f->segs = p;
		f->segcap = cap;
	}
	memmove(&f->segs[at + 1], &f->segs[at],
		(f->nsegs - at) * sizeof *f->segs);
	f->nsegs++;
	*out = &f->segs[at];
	memset(*out, 0, sizeof **out);
	return E2S_ERR_OK;
}

e2s_err elfp_add_phdr(elfp_file *f, uint32_t type, uint32_t flags,
		      uint64_t align, size_t sec, e2s_diag *d)
{
	e2s_err e = not_after_layout(f, d);
	if (!e && (f->in->type == ET_REL || sec >= f->nsecs))
		e = e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
			     "program header for section %zu", sec);
	elfp_seg *s = NULL;
	if (!e)
		e = elfp_insert_seg(f, f->nsegs, &s, d);
	if (e)
		return e;
	s->ph.type = type;
	s->ph.flags = flags;
	s->ph.align = align;
	s->track = sec;
	f->edited = true;
	return E2S_ERR_OK;
}

e2s_err elfp_track_phdr(elfp_file *f, size_t i, size_t sec, e2s_diag *d)
{
	e2s_err e = not_after_layout(f, d);
	if (e)
		return e;
	if (i >= f->nsegs || sec >= f->nsecs)
		return e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
				"bad program header %zu / section %zu", i, sec);
	f->segs[i].track = sec;
	f->edited = true;
	return E2S_ERR_OK;
}

/* Section i takes new content of size bytes: it must have new space of
 * exactly that size. */
static e2s_err content_slot(const elfp_file *f, size_t i, size_t size,
			    e2s_diag *d)
{
	if (i >= f->nsecs || f->secs[i].place == ELFP_ORIG)
		return e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
				"section %zu has no new space", i);
	if (size != f->secs[i].sh.size)
		return e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
				"section %zu: %zu bytes for a size of %llu", i,
				size, (unsigned long long)f->secs[i].sh.size);
	return E2S_ERR_OK;
}

e2s_err elfp_take_content(elfp_file *f, size_t i, void *data, size_t size,
			  e2s_block *blk, e2s_diag *d)
{
	e2s_err e = content_slot(f, i, size, d);
	if (e != E2S_ERR_OK) {
		e2s_block_release(blk, data);
		return e;
	}
	elfp_sec *s = &f->secs[i];
	elfp_sec_content(s, data);
	s->content_block = blk;
	s->has_content = true;
	return E2S_ERR_OK;
}

e2s_err elfp_set_content(elfp_file *f, size_t i, const void *data,
			 size_t size, e2s_diag *d)
{
	e2s_err e = content_slot(f, i, size, d);
	if (e != E2S_ERR_OK)
		return e;
	elfp_sec *s = &f->secs[i];
	uint8_t *p = malloc(size ? size : 1);
	if (!p)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	if (size)
		memcpy(p, data, size);
	elfp_sec_content(s, p);
	s->has_content = true;
	return E2S_ERR_OK;
}
