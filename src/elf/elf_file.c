/* The one ELF reader (elf_file.h): headers at open, the rest on demand,
 * every offset checked against the file before it is used. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "../common/mem.h"
#include "../common/reader.h"
#include "elf_file.h"

enum { OWN_VIEW, OWN_HEAP, OWN_MAP };

/* Sizes of the structures of each class. */
#define EHDR_SIZE(f) ((f)->is64 ? 64u : 52u)
#define SHDR_SIZE(f) ((f)->is64 ? 64u : 40u)
#define PHDR_SIZE(f) ((f)->is64 ? 56u : 32u)
#define SYM_SIZE(f) ((f)->is64 ? 24u : 16u)

/* A class-sized word: addresses, offsets, sizes. */
static uint64_t word(br_t *r, bool is64)
{
	return is64 ? br_u64(r) : br_u32(r);
}

static void read_shdr(br_t *r, bool is64, elfr_shdr *s)
{
	s->name = br_u32(r);
	s->type = br_u32(r);
	s->flags = word(r, is64);
	s->addr = word(r, is64);
	s->offset = word(r, is64);
	s->size = word(r, is64);
	s->link = br_u32(r);
	s->info = br_u32(r);
	s->addralign = word(r, is64);
	s->entsize = word(r, is64);
}

/* p_flags comes second in Elf64_Phdr, seventh in Elf32_Phdr. */
static void read_phdr(br_t *r, bool is64, elfr_phdr *p)
{
	p->type = br_u32(r);
	if (is64)
		p->flags = br_u32(r);
	p->offset = word(r, is64);
	p->vaddr = word(r, is64);
	p->paddr = word(r, is64);
	p->filesz = word(r, is64);
	p->memsz = word(r, is64);
	if (!is64)
		p->flags = br_u32(r);
	p->align = word(r, is64);
}

/* The identification, the ELF header and the two header tables: what
 * every reader needs before it can look at anything else. The input may
 * be truncated or hostile. */
static e2s_err parse(elfr_file *f, unsigned flags, e2s_diag *d)
{
	const uint8_t *id = f->img;
	elfr_shdr *sh;
	elfr_phdr *ph;
	br_t r;
	if (f->size < EI_NIDENT || memcmp(id, ELFMAG, SELFMAG) != 0)
		return e2s_fail(d, E2S_ERR_NOT_ELF, NULL, 0, NULL);
	if ((flags & ELFR_ONLY64) && id[EI_CLASS] != ELFCLASS64)
		return e2s_fail(d, E2S_ERR_UNSUPPORTED_MACHINE, NULL, 0,
				"only 64-bit ELF is supported");
	if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64)
		return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0, "bad EI_CLASS %u",
				id[EI_CLASS]);
	if (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB)
		return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0, "bad EI_DATA %u",
				id[EI_DATA]);
	if (id[EI_VERSION] != EV_CURRENT)
		return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
				"bad EI_VERSION %u", id[EI_VERSION]);
	f->is64 = id[EI_CLASS] == ELFCLASS64;
	f->be = id[EI_DATA] == ELFDATA2MSB;
	if (f->size < EHDR_SIZE(f))
		return e2s_fail(d, E2S_ERR_TRUNCATED, NULL, 0,
				"ELF header is cut short");
	br_init(&r, f->img, f->size, f->be);
	br_seek(&r, EI_NIDENT);
	f->type = br_u16(&r);
	f->machine = br_u16(&r);
	br_u32(&r); /* e_version */
	f->entry = word(&r, f->is64);
	f->phoff = word(&r, f->is64);
	f->shoff = word(&r, f->is64);
	br_u32(&r); /* e_flags */
	br_u16(&r); /* e_ehsize */
	unsigned phentsize = br_u16(&r), phnum = br_u16(&r);
	unsigned shentsize = br_u16(&r), shnum = br_u16(&r);
	unsigned shstrndx = br_u16(&r);
	if (flags & ELFR_NO_SEGMENTS)
		phnum = 0;

	/* Section headers first: section 0 may hold the extended counts. */
	uint64_t nsec = shnum;
	if (f->shoff) {
		if (shentsize != SHDR_SIZE(f))
			return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
					"e_shentsize %u", shentsize);
		if (f->shoff > f->size || f->size - f->shoff < SHDR_SIZE(f))
			return e2s_fail(d, E2S_ERR_TRUNCATED, NULL, 0,
					"section headers past the end of the file");
		elfr_shdr s0;
		br_seek(&r, f->shoff);
		read_shdr(&r, f->is64, &s0);
		if (nsec == 0)
			nsec = s0.size;
		if (shstrndx == SHN_XINDEX)
			shstrndx = s0.link;
		if (phnum == PN_XNUM)
			phnum = s0.info;
	} else {
		nsec = 0;
	}
	if (nsec > (f->size - (f->shoff ? f->shoff : 0)) / SHDR_SIZE(f))
		return e2s_fail(d, E2S_ERR_TRUNCATED, NULL, 0,
				"%llu section headers do not fit in the file",
				(unsigned long long)nsec);
	if (phnum && phentsize != PHDR_SIZE(f))
		return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0, "e_phentsize %u",
				phentsize);
	if (phnum && (f->phoff > f->size ||
		      (f->size - f->phoff) / PHDR_SIZE(f) < phnum))
		return e2s_fail(d, E2S_ERR_TRUNCATED, NULL, 0,
				"program headers past the end of the file");
	sh = calloc(nsec ? (size_t)nsec : 1, sizeof *sh);
	ph = calloc(phnum ? phnum : 1, sizeof *ph);
	f->sh = sh;
	f->ph = ph;
	if (!sh || !ph)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	for (size_t i = 0; i < nsec; i++) {
		br_seek(&r, f->shoff + i * SHDR_SIZE(f));
		read_shdr(&r, f->is64, &sh[i]);
	}
	for (size_t i = 0; i < phnum; i++) {
		br_seek(&r, f->phoff + i * PHDR_SIZE(f));
		read_phdr(&r, f->is64, &ph[i]);
	}
	if (!br_ok(&r))
		return e2s_fail(d, r.err, NULL, r.err_pos, "ELF headers");
	f->shnum = (size_t)nsec;
	f->phnum = phnum;
	f->shstrndx = shstrndx;
	return E2S_ERR_OK;
}

/* A handle for img (owner says how to release it, fd and st are the
 * file's when it comes from a path); parse it. */
static e2s_err open_image(const uint8_t *img, size_t size, uint8_t owner,
			  int fd, const struct stat *st, unsigned flags,
			  elfr_file **out, e2s_diag *d)
{
	elfr_file *f = calloc(1, sizeof *f);
	*out = NULL;
	if (!f) {
		if (owner == OWN_HEAP)
			free((void *)img);
		else if (owner == OWN_MAP)
			munmap((void *)img, size);
		if (fd >= 0)
			close(fd);
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	}
	f->img = img;
	f->size = size;
	f->owner_ = owner;
	f->fd = fd;
	if (st)
		f->st = *st;
	e2s_err e = parse(f, flags, d);
	if (e) {
		elfr_close(f);
		return e;
	}
	*out = f;
	return E2S_ERR_OK;
}

e2s_err elfr_open(const char *path, unsigned flags, elfr_file **out,
		  e2s_diag *d)
{
	e2s_map m;
	*out = NULL;
	e2s_err e = e2s_map_file(path, flags & ELFR_KEEP_FD, &m, d);
	if (e)
		return e;
	return open_image(m.data, m.size, m.mapped ? OWN_MAP : OWN_HEAP, m.fd,
			  &m.st, flags, out, d);
}

e2s_err elfr_open_mem(const void *data, size_t size, unsigned flags,
		      elfr_file **out, e2s_diag *d)
{
	uint8_t *p = malloc(size ? size : 1);
	*out = NULL;
	if (!p)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	if (size)
		memcpy(p, data, size);
	return open_image(p, size, OWN_HEAP, -1, NULL, flags, out, d);
}

e2s_err elfr_open_view(const void *data, size_t size, unsigned flags,
		       elfr_file **out, e2s_diag *d)
{
	static const uint8_t empty[1];
	return open_image(size ? data : empty, size, OWN_VIEW, -1, NULL, flags,
			  out, d);
}

void elfr_close(elfr_file *f)
{
	if (!f)
		return;
	free((void *)f->sh);
	free((void *)f->ph);
	if (f->owner_ == OWN_HEAP)
		free((void *)f->img);
	else if (f->owner_ == OWN_MAP)
		munmap((void *)f->img, f->size);
	if (f->fd >= 0)
		close(f->fd);
	free(f);
}

/* ---- Bytes ----------------------------------------------------------- */

const uint8_t *elfr_bytes(const elfr_file *f, uint64_t off, uint64_t n)
{
	if (off > f->size || n > f->size - off)
		return NULL;
	return f->img + off;
}

const uint8_t *elfr_section_data(const elfr_file *f, size_t i, size_t *size)
{
	*size = 0;
	if (i == 0 || i >= f->shnum)
		return NULL;
	const elfr_shdr *s = &f->sh[i];
	if (s->type == SHT_NULL || s->type == SHT_NOBITS || s->size == 0)
		return NULL;
	const uint8_t *p = elfr_bytes(f, s->offset, s->size);
	if (p)
		*size = (size_t)s->size;
	return p;
}

/* zlib's deflate compresses by at most about 1032:1: a compression
 * header promising more than that is not to be allocated for. */
#define ZLIB_MAX_RATIO 1032u

e2s_err elfr_section_inflate(const elfr_file *f, size_t i, uint8_t **out,
			     size_t *size, e2s_diag *d)
{
	size_t n;
	const uint8_t *p = elfr_section_data(f, i, &n);
	unsigned hdr = f->is64 ? 24 : 12; /* Elf64_Chdr, Elf32_Chdr */
	*out = NULL;
	*size = 0;
	if (!p)
		return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
				"section %zu runs past the end of the file", i);
	br_t r;
	br_init(&r, p, n, f->be);
	uint32_t type = br_u32(&r);
	if (f->is64)
		br_u32(&r); /* ch_reserved */
	uint64_t full = word(&r, f->is64);
	word(&r, f->is64); /* ch_addralign */
	if (!br_ok(&r))
		return e2s_fail(d, E2S_ERR_TRUNCATED, NULL, 0,
				"section %zu: compression header", i);
	if (type != ELFCOMPRESS_ZLIB)
		return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
				"section %zu: compression type %u not supported",
				i, type);
	if (full > (uint64_t)(n - hdr) * ZLIB_MAX_RATIO + 64 ||
	    full > SIZE_MAX / 2)
		return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
				"section %zu: compressed %zu bytes claim %llu",
				i, n - hdr, (unsigned long long)full);
	uint8_t *buf = malloc(full ? (size_t)full : 1);
	if (!buf)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	uLongf got = (uLongf)full;
	int z = uncompress(buf, &got, p + hdr, (uLong)(n - hdr));
	if (z != Z_OK || got != full) {
		free(buf);
		return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
				"section %zu does not inflate to its %llu bytes",
				i, (unsigned long long)full);
	}
	*out = buf;
	*size = (size_t)full;
	return E2S_ERR_OK;
}

const uint8_t *elfr_at_addr(const elfr_file *f, uint64_t a, uint64_t n,
			    uint64_t *left)
{
	for (size_t i = 0; i < f->phnum; i++) {
		const elfr_phdr *p = &f->ph[i];
		const uint8_t *b;
		if (p->type != PT_LOAD || a < p->vaddr ||
		    a - p->vaddr >= p->filesz ||
		    n > p->filesz - (a - p->vaddr) ||
		    !(b = elfr_bytes(f, p->offset, p->filesz)))
			continue;
		if (left)
			*left = p->filesz - (a - p->vaddr);
		return b + (a - p->vaddr);
	}
	return NULL;
}

uint64_t elfr_get(const elfr_file *f, const uint8_t *p, unsigned n)
{
	return e2s_load_uN(p, n, f->be);
}

/* ---- Names ----------------------------------------------------------- */

const char *elfr_string(const elfr_file *f, size_t sec, uint64_t off)
{
	size_t n;
	if (sec >= f->shnum || f->sh[sec].type != SHT_STRTAB)
		return NULL;
	const uint8_t *p = elfr_section_data(f, sec, &n);
	if (!p || off >= n || !memchr(p + off, 0, n - (size_t)off))
		return NULL;
	return (const char *)p + off;
}

const char *elfr_section_name(const elfr_file *f, size_t i)
{
	return i < f->shnum ? elfr_string(f, f->shstrndx, f->sh[i].name)
			    : NULL;
}

size_t elfr_find_section(const elfr_file *f, const char *name)
{
	for (size_t i = 1; i < f->shnum; i++) {
		const char *n = elfr_section_name(f, i);
		if (n && strcmp(n, name) == 0)
			return i;
	}
	return 0;
}

const elfr_phdr *elfr_find_phdr(const elfr_file *f, uint32_t type)
{
	for (size_t i = 0; i < f->phnum; i++)
		if (f->ph[i].type == type)
			return &f->ph[i];
	return NULL;
}

/* ---- Symbols --------------------------------------------------------- */

bool elfr_symtab_init(const elfr_file *f, size_t i, elfr_symtab *t)
{
	size_t n = 0;
	memset(t, 0, sizeof *t);
	t->f = f;
	if (i == 0 || i >= f->shnum)
		return false;
	const elfr_shdr *s = &f->sh[i];
	t->strtab = s->link;
	if (s->type != SHT_SYMTAB && s->type != SHT_DYNSYM)
		return true;
	t->p = elfr_section_data(f, i, &n);
	if (!t->p && s->size)
		return false;
	t->n = n / SYM_SIZE(f);
	for (size_t j = 1; j < f->shnum; j++) {
		if (f->sh[j].type != SHT_SYMTAB_SHNDX || f->sh[j].link != i)
			continue;
		t->xndx = elfr_section_data(f, j, &n);
		t->nxndx = t->xndx ? n / 4 : 0;
		break;
	}
	return true;
}

bool elfr_symtab_get(const elfr_symtab *t, size_t k, elfr_sym *s)
{
	const elfr_file *f = t->f;
	br_t r;
	if (k >= t->n)
		return false;
	br_init(&r, t->p, t->n * SYM_SIZE(f), f->be);
	br_seek(&r, k * SYM_SIZE(f));
	s->name = br_u32(&r);
	if (f->is64) {
		s->info = br_u8(&r);
		s->other = br_u8(&r);
		s->st_shndx = br_u16(&r);
		s->value = br_u64(&r);
		s->size = br_u64(&r);
	} else {
		s->value = br_u32(&r);
		s->size = br_u32(&r);
		s->info = br_u8(&r);
		s->other = br_u8(&r);
		s->st_shndx = br_u16(&r);
	}
	s->shndx = s->st_shndx;
	if (s->st_shndx == SHN_XINDEX)
		s->shndx = k < t->nxndx ? (uint32_t)e2s_load_uN(t->xndx + 4 * k,
								4, f->be)
					: SHN_UNDEF;
	return br_ok(&r);
}

const char *elfr_sym_name(const elfr_symtab *t, const elfr_sym *s)
{
	return elfr_string(t->f, t->strtab, s->name);
}

uint64_t elfr_sym_value_offset(const elfr_symtab *t, size_t k)
{
	uint64_t at = (uint64_t)(t->p - t->f->img) + k * SYM_SIZE(t->f);
	return at + (t->f->is64 ? 8 : 4);
}

/* ---- Relocations ----------------------------------------------------- */

static unsigned rel_size(bool is64, bool rela)
{
	return is64 ? (rela ? 24 : 16) : (rela ? 12 : 8);
}

void elfr_rels_init(const elfr_file *f, const uint8_t *p, size_t size,
		    bool rela, elfr_rels *r)
{
	r->p = p;
	r->n = p ? size / rel_size(f->is64, rela) : 0;
	r->rela = rela;
	r->is64 = f->is64;
	r->be = f->be;
}

bool elfr_rels_section(const elfr_file *f, size_t i, elfr_rels *r)
{
	size_t n;
	memset(r, 0, sizeof *r);
	if (i == 0 || i >= f->shnum ||
	    (f->sh[i].type != SHT_REL && f->sh[i].type != SHT_RELA))
		return false;
	const uint8_t *p = elfr_section_data(f, i, &n);
	if (!p && f->sh[i].size)
		return false;
	elfr_rels_init(f, p, n, f->sh[i].type == SHT_RELA, r);
	return true;
}

void elfr_rels_get(const elfr_rels *r, size_t k, elfr_rel *out)
{
	unsigned w = r->is64 ? 8 : 4;
	const uint8_t *p = r->p + k * rel_size(r->is64, r->rela);
	uint64_t info = e2s_load_uN(p + w, w, r->be);
	out->offset = e2s_load_uN(p, w, r->be);
	out->addend = 0;
	if (r->rela)
		out->addend = r->is64 ? (int64_t)e2s_load_uN(p + 16, 8, r->be)
				      : (int32_t)e2s_load_uN(p + 8, 4, r->be);
	out->sym = (uint32_t)(r->is64 ? info >> 32 : info >> 8);
	out->type = (uint32_t)(r->is64 ? info : info & 0xff);
}

/* ---- Notes, groups, .dynamic ------------------------------------------ */

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

bool elfr_note_next(const elfr_file *f, const uint8_t *p, size_t size,
		    uint64_t align, size_t *pos, elfr_note *n)
{
	size_t at = *pos;
	if (align != 8)
		align = 4;
	if (size < 12 || at > size - 12)
		return false;
	n->namesz = (uint32_t)e2s_load_uN(p + at, 4, f->be);
	n->descsz = (uint32_t)e2s_load_uN(p + at + 4, 4, f->be);
	n->type = (uint32_t)e2s_load_uN(p + at + 8, 4, f->be);
	/* Name and descriptor each start at the alignment, counted from the
	 * start of the notes (aligned as their section or segment is). */
	uint64_t name = at + 12, desc = align_up(name + n->namesz, align);
	if (desc > size || n->descsz > size - desc)
		return false;
	n->name = (const char *)p + name;
	n->desc = p + desc;
	uint64_t next = align_up(desc + n->descsz, align);
	*pos = next < size ? (size_t)next : size;
	return true;
}

bool elfr_group_lists(const elfr_file *f, const uint8_t *p, size_t size,
		      size_t i)
{
	/* Word 0 is the flags word (GRP_COMDAT). */
	for (size_t k = 1; k < size / 4; k++)
		if (e2s_load_uN(p + 4 * k, 4, f->be) == i)
			return true;
	return false;
}

bool elfr_each_dyn(const elfr_file *f,
		   bool (*fn)(void *ctx, int64_t tag, uint64_t val,
			      uint64_t off),
		   void *ctx)
{
	const elfr_phdr *p = elfr_find_phdr(f, PT_DYNAMIC);
	unsigned w = f->is64 ? 8 : 4;
	const uint8_t *b;
	if (!p || !p->filesz || !(b = elfr_bytes(f, p->offset, p->filesz)))
		return true;
	for (uint64_t k = 0; k + 2 * w <= p->filesz; k += 2 * w) {
		uint64_t t = e2s_load_uN(b + k, w, f->be);
		int64_t tag = f->is64 ? (int64_t)t : (int32_t)t;
		if (tag == DT_NULL)
			break;
		if (!fn(ctx, tag, e2s_load_uN(b + k + w, w, f->be),
			p->offset + k + w))
			return false;
	}
	return true;
}
