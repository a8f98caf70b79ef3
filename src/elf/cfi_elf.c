/* ELF front end: find the CFI section of a file with libelf, gather what
 * the decoder needs (section address, GOT, relocations for ET_REL,
 * loaded segments for indirect pointers) and parse it.
 *
 * The file is mapped (or read) into memory we keep, or a caller's image
 * is borrowed, and opened with elf_memory, so the CFI bytes we point at
 * stay valid for the handle's lifetime. CFI bytes are taken straight
 * from the file (in file byte order); libelf converts only headers,
 * symbols and relocations, into its own memory. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/mem.h"
#include "../common/reader.h"
#include "cfi_gelf.h"
#include "cfi_file.h"

typedef struct {
	uint64_t vaddr, offset, filesz;
} load_seg;

typedef struct {
	uint64_t value;
	uint32_t shndx;
	bool func;
	const char *name;
} sym_ent;

enum { BUF_BORROWED, BUF_MALLOC, BUF_MMAP };

struct cfi_file {
	uint8_t *buf;
	size_t size;
	int buf_kind; /* BUF_*: how buf is released */
	Elf *elf;
	unsigned machine;
	bool is_rel;
	const char *secname;
	cfi_section sec;
	cfi_rela *relas;
	load_seg *segs;
	size_t nsegs;
	/* Symbols for cfi_file_func_name, loaded on its first call (a
	 * conversion that names no function never pays for them). */
	Elf_Scn *symscn;
	bool syms_loaded;
	sym_ent *syms;
	size_t nsyms;
	cfi_table table;
};

static e2s_err libelf_fail(e2s_diag *diag, const char *what)
{
	return e2s_fail(diag, E2S_ERR_LIBELF, NULL, 0, "%s: %s", what,
			elf_errmsg(-1));
}

/* DW_EH_PE_indirect: read a pointer from the file image at vaddr. */
static bool read_mem(void *ctx, uint64_t vaddr, unsigned size, uint64_t *out)
{
	const cfi_file *f = ctx;
	for (size_t i = 0; i < f->nsegs; i++) {
		const load_seg *s = &f->segs[i];
		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz ||
		    size > s->filesz - (vaddr - s->vaddr))
			continue;
		br_t r;
		br_init(&r, f->buf, f->size, f->sec.big_endian);
		br_seek(&r, (size_t)(s->offset + (vaddr - s->vaddr)));
		*out = br_uN(&r, size);
		return br_ok(&r);
	}
	return false;
}

static e2s_err load_segments(cfi_file *f, e2s_diag *diag,
			     GElf_Phdr *ehframe_hdr, bool *have_hdr)
{
	size_t n;
	*have_hdr = false;
	if (elf_getphdrnum(f->elf, &n) != 0)
		return libelf_fail(diag, "elf_getphdrnum");
	if (n == 0)
		return E2S_ERR_OK;
	f->segs = calloc(n, sizeof *f->segs);
	if (!f->segs)
		return E2S_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(f->elf, (int)i, &ph))
			return libelf_fail(diag, "gelf_getphdr");
		if (ph.p_offset > f->size || ph.p_filesz > f->size - ph.p_offset)
			continue; /* not backed by the file: ignore */
		if (ph.p_type == PT_LOAD) {
			load_seg *s = &f->segs[f->nsegs++];
			s->vaddr = ph.p_vaddr;
			s->offset = ph.p_offset;
			s->filesz = ph.p_filesz;
		} else if (ph.p_type == PT_GNU_EH_FRAME) {
			*ehframe_hdr = ph;
			*have_hdr = true;
		}
	}
	return E2S_ERR_OK;
}

/* Stripped section headers: find .eh_frame through .eh_frame_hdr's
 * eh_frame_ptr. Its size is unknown, so the section runs to the end of
 * the PT_LOAD holding it and the zero terminator ends the walk. */
static e2s_err eh_frame_from_hdr(cfi_file *f, const GElf_Phdr *ph,
				 e2s_diag *diag)
{
	cfi_section hs;
	memset(&hs, 0, sizeof hs);
	hs.kind = CFI_SEC_EH_FRAME;
	hs.data = f->buf + ph->p_offset;
	hs.size = (size_t)ph->p_filesz;
	hs.big_endian = f->sec.big_endian;
	hs.addr_size = f->sec.addr_size;
	hs.vaddr = ph->p_vaddr;
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
	for (size_t i = 0; i < f->nsegs; i++) {
		const load_seg *s = &f->segs[i];
		if (v < s->vaddr || v - s->vaddr >= s->filesz)
			continue;
		f->sec.data = f->buf + s->offset + (v - s->vaddr);
		f->sec.size = (size_t)(s->filesz - (v - s->vaddr));
		f->sec.vaddr = v;
		f->secname = ".eh_frame";
		return E2S_ERR_OK;
	}
	return e2s_fail(diag, E2S_ERR_NO_CFI, ".eh_frame_hdr", 4,
			"eh_frame_ptr 0x%llx is outside the loaded segments",
			(unsigned long long)v);
}

/* Take a section's bytes: straight from the file, or decompressed by
 * libelf (compressed .debug_frame; the data lives until elf_end). */
static e2s_err section_bytes(cfi_file *f, Elf_Scn *scn, const GElf_Shdr *sh,
			     const char *name, e2s_diag *diag)
{
	if (sh->sh_flags & SHF_COMPRESSED) {
		if (elf_compress(scn, 0, 0) < 0)
			return libelf_fail(diag, "elf_compress");
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			return libelf_fail(diag, "elf_getdata");
		f->sec.data = d->d_buf;
		f->sec.size = d->d_size;
		return E2S_ERR_OK;
	}
	if (sh->sh_offset > f->size || sh->sh_size > f->size - sh->sh_offset)
		return e2s_fail(diag, E2S_ERR_BAD_ELF, name, 0,
				"section runs past the end of the file");
	f->sec.data = f->buf + sh->sh_offset;
	f->sec.size = (size_t)sh->sh_size;
	return E2S_ERR_OK;
}

Elf_Data *cfi_gelf_xindex(Elf *elf, size_t symndx)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB_SHNDX &&
		    sh.sh_link == symndx)
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

bool cfi_gelf_sym(Elf_Data *sd, Elf_Data *xd, size_t ndx, GElf_Sym *sym,
		  uint32_t *shndx)
{
	Elf32_Word x = 0;
	if (!gelf_getsymshndx(sd, xd, (int)ndx, sym, &x))
		return false;
	*shndx = sym->st_shndx == SHN_XINDEX ? (uint32_t)x : sym->st_shndx;
	return true;
}

static int cmp_rela(const void *a, const void *b)
{
	const cfi_rela *x = a, *y = b;
	return (x->offset > y->offset) - (x->offset < y->offset);
}

/* ET_REL: the relocations whose target is the CFI section. */
static e2s_err load_relocs(cfi_file *f, size_t cfi_ndx, e2s_diag *diag)
{
	size_t cap = 0, n = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(f->elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			return libelf_fail(diag, "gelf_getshdr");
		if ((sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) ||
		    sh.sh_info != cfi_ndx)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		Elf_Scn *symscn = elf_getscn(f->elf, sh.sh_link);
		Elf_Data *sd = symscn ? elf_getdata(symscn, NULL) : NULL;
		Elf_Data *xd = symscn ? cfi_gelf_xindex(f->elf, sh.sh_link) : NULL;
		if (!d || !sd)
			return libelf_fail(diag, "relocation data");
		size_t cnt = sh.sh_entsize ? (size_t)(sh.sh_size / sh.sh_entsize)
					   : 0;
		for (size_t i = 0; i < cnt; i++) {
			GElf_Rela ra;
			memset(&ra, 0, sizeof ra);
			if (sh.sh_type == SHT_RELA) {
				if (!gelf_getrela(d, (int)i, &ra))
					return libelf_fail(diag, "gelf_getrela");
			} else {
				GElf_Rel rl;
				if (!gelf_getrel(d, (int)i, &rl))
					return libelf_fail(diag, "gelf_getrel");
				ra.r_offset = rl.r_offset;
				ra.r_info = rl.r_info;
			}
			uint32_t type = (uint32_t)GELF_R_TYPE(ra.r_info);
			if (type == 0) /* R_*_NONE on every supported machine */
				continue;
			GElf_Sym sym;
			uint32_t sym_shndx;
			if (!cfi_gelf_sym(sd, xd, GELF_R_SYM(ra.r_info), &sym, &sym_shndx))
				return e2s_fail(diag, E2S_ERR_BAD_RELOC,
						f->secname, ra.r_offset,
						"bad symbol index %llu",
						(unsigned long long)GELF_R_SYM(
							ra.r_info));
			if (n == cap) {
				cap = cap ? 2 * cap : 256;
				cfi_rela *v = realloc(f->relas, cap * sizeof *v);
				if (!v)
					return E2S_ERR_NOMEM;
				f->relas = v;
			}
			cfi_rela *o = &f->relas[n++];
			memset(o, 0, sizeof *o);
			o->offset = ra.r_offset;
			o->type = type;
			o->sym = (uint32_t)GELF_R_SYM(ra.r_info);
			o->addend = ra.r_addend;
			o->sym_value = sym.st_value;
			o->sym_shndx = sym_shndx;
			o->implicit_addend = sh.sh_type == SHT_REL;
		}
	}
	if (n)
		qsort(f->relas, n, sizeof *f->relas, cmp_rela);
	f->sec.relas = f->relas;
	f->sec.nrelas = n;
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

/* Symbols for cfi_file_func_name: .symtab, else .dynsym. */
static e2s_err load_symbols(cfi_file *f, Elf_Scn *symscn, e2s_diag *diag)
{
	GElf_Shdr sh;
	if (!symscn)
		return E2S_ERR_OK;
	if (!gelf_getshdr(symscn, &sh))
		return libelf_fail(diag, "gelf_getshdr");
	Elf_Data *d = elf_getdata(symscn, NULL);
	if (!d)
		return libelf_fail(diag, "elf_getdata (symbols)");
	size_t cnt = sh.sh_entsize ? (size_t)(sh.sh_size / sh.sh_entsize) : 0;
	f->syms = calloc(cnt ? cnt : 1, sizeof *f->syms);
	if (!f->syms)
		return E2S_ERR_NOMEM;
	Elf_Data *xd = cfi_gelf_xindex(f->elf, elf_ndxscn(symscn));
	for (size_t i = 1; i < cnt; i++) {
		GElf_Sym s;
		uint32_t shndx;
		if (!cfi_gelf_sym(d, xd, i, &s, &shndx))
			break;
		int type = GELF_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_NOTYPE &&
		    type != STT_GNU_IFUNC)
			continue;
		if (s.st_shndx == SHN_UNDEF || s.st_shndx == SHN_ABS)
			continue;
		const char *name = elf_strptr(f->elf, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		sym_ent *e = &f->syms[f->nsyms++];
		e->value = s.st_value;
		e->shndx = shndx;
		e->func = type != STT_NOTYPE;
		e->name = name;
	}
	qsort(f->syms, f->nsyms, sizeof *f->syms, cmp_sym);
	return E2S_ERR_OK;
}

/* Find the CFI section and everything around it. */
static e2s_err locate(cfi_file *f, const cfi_load_opts *opts,
		      e2s_diag *diag)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL, *eh = NULL, *dbg = NULL, *symtab = NULL,
		*dynsym = NULL;
	GElf_Shdr eh_sh, dbg_sh, sh;
	uint64_t got = 0, gotplt = 0, text = 0;
	bool have_hdr;
	GElf_Phdr hdr;

	e2s_err e = load_segments(f, diag, &hdr, &have_hdr);
	if (e != E2S_ERR_OK)
		return e;
	if (elf_getshdrstrndx(f->elf, &shstrndx) != 0)
		return libelf_fail(diag, "elf_getshdrstrndx");
	while ((scn = elf_nextscn(f->elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh))
			return libelf_fail(diag, "gelf_getshdr");
		const char *name = elf_strptr(f->elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
		if (sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
			continue;
		if (strcmp(name, ".eh_frame") == 0 && !eh) {
			eh = scn;
			eh_sh = sh;
		} else if (strcmp(name, ".debug_frame") == 0 && !dbg) {
			dbg = scn;
			dbg_sh = sh;
		} else if (strcmp(name, ".got") == 0) {
			got = sh.sh_addr;
		} else if (strcmp(name, ".got.plt") == 0) {
			gotplt = sh.sh_addr;
		} else if (strcmp(name, ".text") == 0) {
			text = sh.sh_addr;
		}
	}
	/* DW_EH_PE_datarel base: the GOT pointer, i.e. DT_PLTGOT =
	 * _GLOBAL_OFFSET_TABLE_ = start of .got.plt (else .got). libgcc
	 * only computes it on i386; on x86-64 GCC never emits datarel. */
	f->sec.data_base = gotplt ? gotplt : got;
	f->sec.text_base = text;

	Elf_Scn *use = NULL;
	if (dbg && (opts->prefer_debug_frame || !eh)) {
		use = dbg;
		sh = dbg_sh;
		f->sec.kind = CFI_SEC_DEBUG_FRAME;
		f->secname = ".debug_frame";
	} else if (eh) {
		use = eh;
		sh = eh_sh;
		f->sec.kind = CFI_SEC_EH_FRAME;
		f->secname = ".eh_frame";
	}
	if (!use) {
		if (have_hdr && !f->is_rel) {
			f->sec.kind = CFI_SEC_EH_FRAME;
			e = eh_frame_from_hdr(f, &hdr, diag);
		} else {
			e = e2s_fail(diag, E2S_ERR_NO_CFI, NULL, 0, NULL);
		}
		if (e == E2S_ERR_OK)
			f->symscn = symtab ? symtab : dynsym;
		return e;
	}
	e = section_bytes(f, use, &sh, f->secname, diag);
	if (e != E2S_ERR_OK)
		return e;
	if (f->is_rel) {
		f->sec.vaddr = 0;
		e = load_relocs(f, elf_ndxscn(use), diag);
	} else {
		f->sec.vaddr = sh.sh_addr;
	}
	f->symscn = symtab ? symtab : dynsym;
	return e;
}

static void release_buf(uint8_t *buf, size_t size, int kind)
{
	if (kind == BUF_MALLOC)
		free(buf);
	else if (kind == BUF_MMAP)
		munmap(buf, size);
}

/* Takes ownership of buf as kind says. */
static e2s_err open_buf(uint8_t *buf, size_t size, int kind,
			const cfi_load_opts *opts, cfi_fde_fn on_fde,
			void *ctx, cfi_file **out, e2s_diag *diag)
{
	static const cfi_load_opts defaults = {false, false, NULL};
	*out = NULL;
	if (!opts)
		opts = &defaults;
	if (size < EI_NIDENT || memcmp(buf, ELFMAG, SELFMAG) != 0) {
		release_buf(buf, size, kind);
		return e2s_fail(diag, E2S_ERR_NOT_ELF, NULL, 0, NULL);
	}
	cfi_file *f = calloc(1, sizeof *f);
	if (!f) {
		release_buf(buf, size, kind);
		return e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);
	}
	f->buf = buf;
	f->size = size;
	f->buf_kind = kind;
	e2s_err e;
	GElf_Ehdr eh;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		e = libelf_fail(diag, "elf_version");
		goto fail;
	}
	f->elf = elf_memory((char *)buf, size);
	if (!f->elf) {
		e = libelf_fail(diag, "elf_memory");
		goto fail;
	}
	if (elf_kind(f->elf) != ELF_K_ELF) {
		e = e2s_fail(diag, E2S_ERR_NOT_ELF, NULL, 0, NULL);
		goto fail;
	}
	if (!gelf_getehdr(f->elf, &eh)) {
		e = libelf_fail(diag, "gelf_getehdr");
		goto fail;
	}
	if ((buf[EI_CLASS] != ELFCLASS32 && buf[EI_CLASS] != ELFCLASS64) ||
	    (buf[EI_DATA] != ELFDATA2LSB && buf[EI_DATA] != ELFDATA2MSB)) {
		e = e2s_fail(diag, E2S_ERR_BAD_ELF, NULL, 0,
			     "bad ELF class or data encoding");
		goto fail;
	}
	f->machine = eh.e_machine;
	f->is_rel = eh.e_type == ET_REL;
	f->sec.big_endian = buf[EI_DATA] == ELFDATA2MSB;
	f->sec.addr_size = buf[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	f->sec.relocatable = f->is_rel;
	f->sec.read_mem = f->is_rel ? NULL : read_mem;
	f->sec.read_mem_ctx = f;
	e = locate(f, opts, diag);
	if (e != E2S_ERR_OK)
		goto fail;
	if (opts->records_only)
		e = cfi_parse_records(&f->sec, cfi_abi_from_machine(f->machine),
				      &f->table, diag);
	else if (on_fde)
		e = cfi_parse_stream_pre(&f->sec, cfi_abi_from_machine(f->machine),
					 opts->pre_fde, on_fde, ctx, &f->table,
					 diag);
	else
		e = cfi_parse(&f->sec, cfi_abi_from_machine(f->machine),
			      &f->table, diag);
	if (e != E2S_ERR_OK)
		goto fail;
	*out = f;
	return E2S_ERR_OK;
fail:
	if (e == E2S_ERR_NOMEM)
		e2s_fail(diag, e, NULL, 0, NULL);
	cfi_file_close(f);
	return e;
}

e2s_err cfi_file_open_mem(const void *data, size_t size,
			  const cfi_load_opts *opts, cfi_file **out,
			  e2s_diag *diag)
{
	uint8_t *buf = malloc(size ? size : 1);
	*out = NULL;
	if (!buf)
		return e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);
	if (size)
		memcpy(buf, data, size);
	return open_buf(buf, size, BUF_MALLOC, opts, NULL, NULL, out, diag);
}

e2s_err cfi_file_open_view(const void *data, size_t size,
			   const cfi_load_opts *opts, cfi_fde_fn on_fde,
			   void *ctx, cfi_file **out, e2s_diag *diag)
{
	/* libelf's elf_memory takes a non-const image but only reads it
	 * (ELF_C_READ_MMAP_PRIVATE; conversions go to its own buffers). */
	return open_buf((uint8_t *)(uintptr_t)data, size, BUF_BORROWED, opts,
			on_fde, ctx, out, diag);
}

e2s_err cfi_file_open(const char *path, const cfi_load_opts *opts,
		      cfi_file **out, e2s_diag *diag)
{
	return cfi_file_open_stream(path, opts, NULL, NULL, out, diag);
}

e2s_err cfi_file_open_stream(const char *path, const cfi_load_opts *opts,
			     cfi_fde_fn on_fde, void *ctx, cfi_file **out,
			     e2s_diag *diag)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return e2s_fail(diag, E2S_ERR_IO, NULL, 0, "%s",
				strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int err = errno;
		close(fd);
		return e2s_fail(diag, E2S_ERR_IO, NULL, 0, "%s",
				strerror(err));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return e2s_fail(diag, E2S_ERR_IO, NULL, 0,
				"not a regular file");
	}
	size_t size = (size_t)st.st_size;
	/* Mapping: only the pages read (headers, CFI, symbols) are
	 * touched, instead of copying the whole file. */
	if (size >= 4096) {
		void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			close(fd);
			return open_buf(m, size, BUF_MMAP, opts, on_fde, ctx,
					out, diag);
		}
	}
	uint8_t *buf;
	e2s_err e = e2s_read_whole(fd, size, &buf, diag);
	close(fd);
	if (e)
		return e;
	return open_buf(buf, size, BUF_MALLOC, opts, on_fde, ctx, out, diag);
}

void cfi_file_close(cfi_file *f)
{
	if (!f)
		return;
	cfi_table_free(&f->table);
	if (f->elf)
		elf_end(f->elf);
	free(f->relas);
	free(f->segs);
	free(f->syms);
	release_buf(f->buf, f->size, f->buf_kind);
	free(f);
}

const cfi_table *cfi_file_table(const cfi_file *f) { return &f->table; }
unsigned cfi_file_machine(const cfi_file *f) { return f->machine; }
bool cfi_file_is_rel(const cfi_file *f) { return f->is_rel; }
const char *cfi_file_section_name(const cfi_file *f) { return f->secname; }
const cfi_section *cfi_file_section(const cfi_file *f) { return &f->sec; }

const char *cfi_file_func_name(const cfi_file *cf, const cfi_fde *fde)
{
	/* The handle is logically const: loading the symbols is a cache. */
	cfi_file *f = (cfi_file *)(uintptr_t)cf;
	if (!f->syms_loaded) {
		e2s_diag d;
		memset(&d, 0, sizeof d);
		f->syms_loaded = true;
		if (load_symbols(f, f->symscn, &d) != E2S_ERR_OK)
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
	for (size_t i = lo; i < f->nsyms && f->syms[i].value == fde->pc_begin;
	     i++) {
		const sym_ent *s = &f->syms[i];
		if (f->is_rel && (!fde->reloc.present ||
				  s->shndx != fde->reloc.shndx))
			continue;
		if (s->func)
			return s->name;
		if (!best)
			best = s->name;
	}
	return best;
}
