/* The one ELF reader: every module that reads an ELF file (the CFI
 * loader, the .sframe finder, the editor in src/elfpatch, the debug file
 * update in src/api) reads it through this.
 *
 * A file is opened from a path (mapped, read where mapping fails) or
 * from memory (copied, or borrowed as a view). Opening checks what every
 * reader needs: the ELF identification, the ELF header, and that the
 * section and program header tables lie inside the file; the headers
 * are then read into host-order arrays, for ELFCLASS32 and ELFCLASS64,
 * either byte order, extended numbering (e_shnum, e_shstrndx, e_phnum
 * in section 0) resolved. Everything else (a section's bytes, a symbol,
 * a relocation, a note, a string) is checked against the file when it
 * is asked for: a separate debug file's segments lie past its end, a
 * stripped file's sections may be gone, and a reader that wants stricter
 * rules (the editor) adds them on top. No libelf: the bounds checks are
 * the common reader's (src/common/reader.h). */
#ifndef E2S_ELF_FILE_H
#define E2S_ELF_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../common/err.h"

/* Host-order section header (Elf32_Shdr and Elf64_Shdr alike). */
typedef struct {
	uint32_t name; /* offset in the section name table */
	uint32_t type;
	uint64_t flags, addr, offset, size;
	uint32_t link, info;
	uint64_t addralign, entsize;
} elfr_shdr;

/* Host-order program header. */
typedef struct {
	uint32_t type, flags;
	uint64_t offset, vaddr, paddr, filesz, memsz, align;
} elfr_phdr;

/* elfr_open* flags. */
enum {
	/* Refuse ELFCLASS32 before reading anything else
	 * (UNSUPPORTED_MACHINE, "only 64-bit ELF is supported"). */
	ELFR_ONLY64 = 1u << 0,
	/* Read no program headers (phnum 0): a separate debug file's
	 * describe its program's bytes, not its own. */
	ELFR_NO_SEGMENTS = 1u << 1,
	/* From a path: keep the file descriptor open in fd. */
	ELFR_KEEP_FD = 1u << 2,
};

/* An open file. Read-only for its users; the header fields are the ELF
 * header's, sizes and counts resolved. */
typedef struct elfr_file {
	const uint8_t *img;  /* the whole file */
	size_t size;
	bool is64, be;       /* ELFCLASS64, ELFDATA2MSB */
	uint16_t type, machine;
	uint64_t entry, phoff, shoff;
	size_t shnum;        /* real count, 0 without section headers */
	size_t phnum;        /* real count (0 with ELFR_NO_SEGMENTS) */
	size_t shstrndx;     /* as resolved; may name no usable table */
	const elfr_shdr *sh; /* shnum headers */
	const elfr_phdr *ph; /* phnum headers */
	int fd;              /* ELFR_KEEP_FD: the open file, else -1 */
	struct stat st;      /* from a path: the file's status, else zero */
	uint8_t owner_;      /* how img is released (elf_file.c) */
} elfr_file;

/* Errors: IO and TOO_LARGE (path), NOT_ELF (no ELF magic), BAD_ELF and
 * TRUNCATED (headers), UNSUPPORTED_MACHINE (ELFR_ONLY64), NOMEM. */
e2s_err elfr_open(const char *path, unsigned flags, elfr_file **out,
		  e2s_diag *d);
/* From a buffer, copied. */
e2s_err elfr_open_mem(const void *data, size_t size, unsigned flags,
		      elfr_file **out, e2s_diag *d);
/* From a buffer borrowed (never written): it must stay valid and
 * unchanged until elfr_close. */
e2s_err elfr_open_view(const void *data, size_t size, unsigned flags,
		       elfr_file **out, e2s_diag *d);
void elfr_close(elfr_file *f);

/* ---- Bytes ----------------------------------------------------------- */

/* [off, off+n) of the file, or NULL when it does not fit. */
const uint8_t *elfr_bytes(const elfr_file *f, uint64_t off, uint64_t n);
/* The file bytes of section i, or NULL when it has none (SHT_NULL,
 * SHT_NOBITS, empty, no such section) or they lie outside the file. */
const uint8_t *elfr_section_data(const elfr_file *f, size_t i, size_t *size);
/* The bytes of SHF_COMPRESSED section i, inflated (ELFCOMPRESS_ZLIB)
 * into a new buffer *out (free it). BAD_ELF when they do not inflate to
 * the size the compression header promises. */
e2s_err elfr_section_inflate(const elfr_file *f, size_t i, uint8_t **out,
			     size_t *size, e2s_diag *d);
/* The file bytes at address a: from the first PT_LOAD whose file part
 * (inside the file) holds [a, a+n). *left (if not NULL): the bytes from a
 * to the end of that part. NULL when none holds them. */
const uint8_t *elfr_at_addr(const elfr_file *f, uint64_t a, uint64_t n,
			    uint64_t *left);
/* An n-byte (1, 2, 4, 8) integer in the file's byte order. */
uint64_t elfr_get(const elfr_file *f, const uint8_t *p, unsigned n);

/* ---- Names ----------------------------------------------------------- */

/* The NUL-terminated string at off of string table section sec
 * (SHT_STRTAB, inside the file), or NULL. */
const char *elfr_string(const elfr_file *f, size_t sec, uint64_t off);
/* Section i's name (from the section name table), or NULL. */
const char *elfr_section_name(const elfr_file *f, size_t i);
/* The first section named name, or 0. */
size_t elfr_find_section(const elfr_file *f, const char *name);
/* The first program header of this type, or NULL. */
const elfr_phdr *elfr_find_phdr(const elfr_file *f, uint32_t type);

/* ---- Symbols --------------------------------------------------------- */

typedef struct {
	uint32_t name;      /* offset in the table's string table */
	uint8_t info, other;
	uint16_t st_shndx;  /* as stored (SHN_UNDEF, SHN_ABS, SHN_XINDEX...) */
	uint32_t shndx;     /* the section index, SHN_XINDEX resolved */
	uint64_t value, size;
} elfr_sym;

/* A symbol table and the SHT_SYMTAB_SHNDX words extending it (symbols
 * of sections numbered SHN_LORESERVE and above say SHN_XINDEX and keep
 * the real index there). */
typedef struct {
	const elfr_file *f;
	const uint8_t *p;   /* n entries, entry 0 included */
	size_t n;
	const uint8_t *xndx; /* nxndx words, or NULL */
	size_t nxndx;
	size_t strtab;      /* section of the names (sh_link) */
} elfr_symtab;

/* Section i as a symbol table: false when there is no such section or
 * its bytes lie outside the file; a section of another type than
 * SHT_SYMTAB / SHT_DYNSYM is a table of no symbols. */
bool elfr_symtab_init(const elfr_file *f, size_t i, elfr_symtab *t);
/* Symbol k; false when k is out of range. A symbol saying SHN_XINDEX
 * that no SHT_SYMTAB_SHNDX word extends gets shndx SHN_UNDEF. */
bool elfr_symtab_get(const elfr_symtab *t, size_t k, elfr_sym *s);
/* Its name, or NULL. */
const char *elfr_sym_name(const elfr_symtab *t, const elfr_sym *s);
/* The file offset of symbol k's st_value (an editor patching it). */
uint64_t elfr_sym_value_offset(const elfr_symtab *t, size_t k);

/* ---- Relocations ----------------------------------------------------- */

typedef struct {
	uint64_t offset;
	uint32_t sym, type;
	int64_t addend;     /* 0 for REL: the addend is in place */
} elfr_rel;

typedef struct {
	const uint8_t *p;
	size_t n;           /* whole entries */
	bool rela, is64, be;
} elfr_rels;

/* Section i as a relocation table (SHT_REL or SHT_RELA entries of the
 * file's class, counted by their standard size): false for another type
 * or bytes outside the file. */
bool elfr_rels_section(const elfr_file *f, size_t i, elfr_rels *r);
/* A table at p of size bytes (what .dynamic's DT_RELA etc. point at). */
void elfr_rels_init(const elfr_file *f, const uint8_t *p, size_t size,
		    bool rela, elfr_rels *r);
/* Entry k < r->n. */
void elfr_rels_get(const elfr_rels *r, size_t k, elfr_rel *out);

/* ---- Notes, groups, .dynamic ------------------------------------------ */

typedef struct {
	uint32_t type;
	const char *name;   /* namesz bytes (the owner, NUL included) */
	uint32_t namesz;
	const uint8_t *desc;
	uint32_t descsz;
} elfr_note;

/* The note at *pos of the notes [p, p+size) (a SHT_NOTE section or a
 * PT_NOTE segment; align: 4, or 8 for a section or segment so aligned);
 * *pos moves to the next. False at the end or at a note that does not
 * fit. */
bool elfr_note_next(const elfr_file *f, const uint8_t *p, size_t size,
		    uint64_t align, size_t *pos, elfr_note *n);

/* Whether the SHT_GROUP words at p (size bytes in the file's byte
 * order: a flags word, then member section indices) list section i. */
bool elfr_group_lists(const elfr_file *f, const uint8_t *p, size_t size,
		      size_t i);

/* The entries of the first PT_DYNAMIC (inside the file): fn(tag, value,
 * file offset of the value) until DT_NULL; false when fn stopped it. */
bool elfr_each_dyn(const elfr_file *f,
		   bool (*fn)(void *ctx, int64_t tag, uint64_t val,
			      uint64_t off),
		   void *ctx);

#endif
