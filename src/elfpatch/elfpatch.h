/* elfpatch: add sections (and the segments mapping them) to a 64-bit ELF
 * file without moving or changing any existing byte of code or data
 * (the conversion driver, src/convert/convert_file.c, uses it to add an
 * SFrame section built from the file's DWARF CFI).
 *
 * Editing model: the input file is mapped (never written). Existing section
 * contents keep their offsets (except: when the program header table
 * grows where it is, the few sections right after it move, bytes
 * unchanged, into the new segment; when it moves to the file start, all
 * contents move down by the same whole pages; see elfp_layout.c); new or
 * rewritten contents go at the end of the file, over the old section
 * header table and .shstrtab when those end it: allocated ones of linked
 * files into one new read-only PT_LOAD, everything else (section
 * contents of ET_REL files, .shstrtab, group sections, the section header
 * table) after it. No address of existing code or data changes.
 *
 * Use: elfp_open -> elfp_add_section / elfp_add_phdr / ... ->
 * elfp_layout -> elfp_section / elfp_set_content -> elfp_write ->
 * elfp_close. */
#ifndef E2S_ELFPATCH_H
#define E2S_ELFPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../common/err.h"
#include "../common/mem.h"
#include "../elf/elf_file.h"
#include "../sframe/sfr.h"

/* Host-order headers: the reader's, read from the input (elf_file.h),
 * then edited. */
typedef elfr_shdr elfp_shdr;
typedef elfr_phdr elfp_phdr;

typedef struct elfp_file elfp_file;

/* Open path with the ELF reader (mapped, read() where mapping fails) and
 * check what editing needs beyond it. Accepts 64-bit ELF of x86-64,
 * AArch64 and s390x (UNSUPPORTED_MACHINE otherwise). The file stays open
 * until elfp_close: elfp_write copies the unchanged bytes from it. */
e2s_err elfp_open(const char *path, elfp_file **out, e2s_diag *d);
/* The same for a file read only for its sections and symbols (a separate
 * debug file, whose program headers describe another file): no segment
 * is read. Not for editing. */
e2s_err elfp_open_symbols(const char *path, elfp_file **out, e2s_diag *d);
/* Same from a buffer (copied). */
e2s_err elfp_open_mem(const void *data, size_t size, elfp_file **out,
		      e2s_diag *d);
/* Same without the copy: data is borrowed (never written) and must stay
 * valid and unchanged until elfp_close. */
e2s_err elfp_open_view(const void *data, size_t size, elfp_file **out,
		       e2s_diag *d);
void elfp_close(elfp_file *f);

/* ---- Queries --------------------------------------------------------- */

const uint8_t *elfp_image(const elfp_file *f, size_t *size);
unsigned elfp_type(const elfp_file *f);    /* e_type */
unsigned elfp_machine(const elfp_file *f); /* e_machine */
bool elfp_big_endian(const elfp_file *f);
bool elfp_is_rel(const elfp_file *f);      /* ET_REL */
size_t elfp_shnum(const elfp_file *f);     /* real count, extended too */
size_t elfp_phnum(const elfp_file *f);
/* Section header i (current, edited, values), NULL when out of range. */
const elfp_shdr *elfp_section(const elfp_file *f, size_t i);
const elfp_phdr *elfp_segment(const elfp_file *f, size_t i);
const char *elfp_section_name(const elfp_file *f, size_t i);
/* Index of the first section named name, or 0 when none. */
size_t elfp_find_section(const elfp_file *f, const char *name);
/* Index of the SHT_GROUP section listing section i, or 0. */
size_t elfp_group_of(const elfp_file *f, size_t i);
/* Index of the (first) SHT_SYMTAB section, or 0. */
size_t elfp_symtab(const elfp_file *f);
/* What input section i is to SFrame (sfr_section_kind on its header
 * and input bytes); ask before editing it. In a relocatable file a
 * NOBITS .sframe is FOREIGN: only separate debug files (linked) keep
 * placeholders. */
sfr_sec_kind elfp_sframe_kind(const elfp_file *f, size_t i);

/* ---- Edits (before elfp_layout) -------------------------------------- */

/* Append a section header named name; sh gives type, flags, link, info,
 * addralign, entsize and size (name, addr and offset are assigned). Its
 * content must be supplied with elfp_set_content after elfp_layout.
 * Allocated sections of linked files are mapped by a new PT_LOAD. */
e2s_err elfp_add_section(elfp_file *f, const char *name,
			 const elfp_shdr *sh, size_t *idx, e2s_diag *d);
/* Move existing section i to new space (a new address for allocated
 * sections of linked files) with a new size; the old bytes stay. */
e2s_err elfp_move_section(elfp_file *f, size_t i, uint64_t new_size,
			  e2s_diag *d);
/* Keep existing section i where it is but give it a new size not larger
 * than the old one; the bytes left over are zeroed. */
e2s_err elfp_shrink_section(elfp_file *f, size_t i, uint64_t new_size,
			    e2s_diag *d);
/* Change the sh_type of section i and raise its sh_addralign to at least
 * align (a rebuilt section made under an older convention). Before
 * elfp_move_section / elfp_shrink_section: an in-place section must
 * already sit at an offset so aligned. */
e2s_err elfp_set_type(elfp_file *f, size_t i, uint32_t type, uint64_t align,
		      e2s_diag *d);
/* Retire existing section i of a relocatable file whose index must stay
 * (symbols, relocations or groups may name it): it leaves its group,
 * becomes an empty nameless SHT_PROGBITS with SHF_EXCLUDE (linkers drop
 * it, a section symbol still has a section to point at) and its old
 * bytes are zeroed. */
e2s_err elfp_drop_section(elfp_file *f, size_t i, e2s_diag *d);
/* Make section member a member of SHT_GROUP section group (the group's
 * content is rewritten at the tail; member gets SHF_GROUP). */
e2s_err elfp_group_add(elfp_file *f, size_t group, size_t member,
		       e2s_diag *d);
/* Append a program header whose offset, addresses and sizes follow
 * section sec (exactly its extent). */
e2s_err elfp_add_phdr(elfp_file *f, uint32_t type, uint32_t flags,
		      uint64_t align, size_t sec, e2s_diag *d);
/* Make existing program header i follow section sec. */
e2s_err elfp_track_phdr(elfp_file *f, size_t i, size_t sec, e2s_diag *d);

/* ---- Layout and output ----------------------------------------------- */

/* Most zero padding the output may gain to keep the moved program header
 * table where old loaders look for it (see elfp_place_segment). */
#define ELFP_MAX_PAD ((uint64_t)16 << 20)
/* Most bytes of sections moved to let the table grow where it is, unless
 * the file reads its own table and no cheaper layout keeps it there. */
#define ELFP_GROW_CAP ((uint64_t)3 << 10)
/* Beyond this, a file that needs its table in place takes the cheaper of
 * moving the sections and padding the file (SEG_TIED). */
#define ELFP_GROW_BIG ((uint64_t)64 << 10)

/* Assign offsets and addresses to everything new. After this, sections
 * may be queried for their final address and given content. */
e2s_err elfp_layout(elfp_file *f, e2s_diag *d);
/* Also count the symbol tables of syms (the file's separate debug file,
 * whose .symtab the stripped file lost) when deciding what the layout
 * may move (elfp_grow.c, rule 2). Borrowed until elfp_layout returns. */
void elfp_set_extra_symbols(elfp_file *f, const elfp_file *syms);
/* Tests: make elfp_layout use layout kind (elfp_ph_kind) for a growing
 * table whenever that kind is possible for the file (0: choose). */
void elfp_force_kind(elfp_file *f, int kind);
/* Supply the content of a new or moved/shrunk section; size must equal
 * its sh_size. Copied. */
e2s_err elfp_set_content(elfp_file *f, size_t i, const void *data,
			 size_t size, e2s_diag *d);
/* The same taking ownership of data, no copy of a large section: data
 * malloc'd (blk NULL) or lying in block blk, whose reference is taken;
 * let go on failure too (e2s_block_release). */
e2s_err elfp_take_content(elfp_file *f, size_t i, void *data, size_t size,
			  e2s_block *blk, e2s_diag *d);
/* After elfp_layout: non-allocated section i of a linked file, moved
 * before the layout (elfp_move_section), takes data (malloc'd; owned,
 * freed on failure too) of any size as its content; the rewritten
 * sections after it and the section header table move with it (the
 * mini debuginfo of .gnu_debugdata, made from the laid-out file). */
e2s_err elfp_replace_content(elfp_file *f, size_t i, void *data,
			     size_t size, e2s_diag *d);
/* Write the whole output file to fd (from its current position). The
 * input image is not changed: elfp_write may be called again. */
e2s_err elfp_write(elfp_file *f, int fd, e2s_diag *d);
/* The same into one malloc'd buffer (*out, free it), *size bytes. */
e2s_err elfp_write_mem(elfp_file *f, uint8_t **out, size_t *size,
		       e2s_diag *d);
/* The same with, of the input's own bytes, only its ELF header, program
 * header table and section name table: what the layout wrote (headers,
 * new, moved and rewritten sections) is there, the rest reads as zeros.
 * For reading the output's headers and new sections (the mini
 * debuginfo update) without the cost of a large file: the buffer's
 * untouched pages take no memory. */
e2s_err elfp_write_mem_headers(elfp_file *f, uint8_t **out, size_t *size,
			       e2s_diag *d);

/* Where the program header table of a linked file ended up when it had
 * to grow (elfp_layout.c explains each). */
typedef enum {
	ELFP_PH_SAME = 0,  /* unchanged (no new program header) */
	ELFP_PH_ROOM,      /* grown where it is into free bytes (or over
	                    * PT_NULL entries) */
	ELFP_PH_GROWN,     /* grown where it is; the sections right after
	                    * it moved into the new segment */
	ELFP_PH_SHIFT,     /* right after the ELF header, old contents
	                    * moved down the file (non-PIE executables) */
	ELFP_PH_SEG_TIED,  /* in the new segment, at e_phoff + first-load
	                    * bias (zero padding before the segment) */
	ELFP_PH_SEG,       /* in the new segment elsewhere (libraries:
	                    * loaders find it through PT_PHDR) */
} elfp_ph_kind;

/* What the layout chose, for reports and tests. */
typedef struct {
	uint8_t kind;         /* elfp_ph_kind */
	bool phdrs_moved;     /* the table moved (SHIFT, SEG_TIED, SEG) */
	bool phdrs_tied;      /* the table is at e_phoff + first-load bias,
	                       * where old loaders look (every kind but SEG) */
	uint64_t shift;       /* >0: the table is right after the ELF header
	                       * and every old byte moved this far down the
	                       * file (the first PT_LOAD grew downwards) */
	uint64_t moved;       /* GROWN: bytes of sections moved, */
	uint64_t moved_from;  /* from this input offset */
	bool new_segment;     /* a PT_LOAD was added */
	uint64_t seg_offset, seg_vaddr, seg_size;
	uint64_t pad;         /* zero bytes between the kept input and the
	                       * new data (alignment; SEG_TIED: the padding) */
	uint64_t kept;        /* input bytes kept in place (old section header
	                       * table and .shstrtab at the end are rewritten) */
	uint64_t out_size;
	char grow_refused[96]; /* why GROWN could not be proven safe, when
	                        * that made the layout take another kind */
} elfp_layout_info;
void elfp_get_layout(const elfp_file *f, elfp_layout_info *out);

/* ---- Layout arithmetic (exposed for unit tests) ---------------------- */

typedef struct {
	uint64_t file_end;  /* first free file offset */
	uint64_t bias;      /* first PT_LOAD p_vaddr - p_offset */
	uint64_t max_end;   /* highest p_vaddr + p_memsz of all segments */
	uint64_t page;      /* max(4096, largest PT_LOAD p_align) */
	bool tie;           /* want p_vaddr - p_offset == bias */
	uint64_t max_pad;   /* give up the tie beyond this much padding */
	bool lead_gap;      /* leave one unmapped alignment unit below the
	                     * segment (it starts with the program headers) */
} elfp_seg_in;

typedef struct {
	uint64_t offset, vaddr, align;
	bool tied;
} elfp_seg_out;

/* Place a new segment: on a fresh page above max_end (one alignment
 * unit higher with lead_gap), at or after file_end (8-aligned), offset
 * congruent to vaddr modulo align. */
void elfp_place_segment(const elfp_seg_in *in, elfp_seg_out *out);

/* ---- Output check (elfp_check.c) ------------------------------------ */

typedef struct {
	bool debug_frame; /* the conversion read .debug_frame (conv_file_opts) */
	size_t nfdes;     /* FDEs it read (conv_result.nfdes) */
} elfp_check_opts;

/* Read back out (size bytes), the output written from f after
 * conv_file, the way a linker would, before the conversion
 * reports success: it parses; every input section the conversion does
 * not own (elfp_check.c) kept its header, address and bytes; every
 * relocation section that changed links to a symbol table holding each
 * of its symbols and applies to an existing section, within it (ET_REL);
 * an ET_REL file's CFI still loads with its relocations and as many
 * FDEs. E2S_ERR_OUTPUT_CHECK says what is wrong. Defects the input
 * already had are not reported. */
e2s_err elfp_check_output(const elfp_file *f, const uint8_t *out,
			  size_t size, const elfp_check_opts *o, e2s_diag *d);

/* Write f's output to path atomically: temporary file in the same
 * directory, mode of ref_path, rename. When keep_owner or path is the
 * same file as ref_path, also ref_path's owner, extended attributes and
 * set-ID bits (dropped otherwise, as cp does). The temporary file is
 * fsync'ed first only when path is the same file as ref_path. On failure
 * path is untouched and no temporary file remains. */
e2s_err elfp_write_atomic(const char *path, const char *ref_path,
			  bool keep_owner, elfp_file *f, e2s_diag *d);
/* The same with options (o may be NULL: none); the writer of both: */
typedef struct {
	bool keep_owner; /* as elfp_write_atomic's */
	bool no_sync;    /* never fsync, even when path is ref_path's own
	                  * file: for files that can be made again (build
	                  * trees), at the risk of an old or empty file
	                  * after a crash */
	const elfp_check_opts *check; /* NULL, or the written temporary
	                  * file read back and elfp_check_output'ed against
	                  * f before it replaces path */
	bool new_path;   /* path is the caller's own staging name, which
	                  * must not exist: written as the temporary file
	                  * (e2s_atomic_begin_new), never synced or renamed */
} elfp_write_opts;
e2s_err elfp_write_atomic_opts(const char *path, const char *ref_path,
			       elfp_file *f, const elfp_write_opts *o,
			       e2s_diag *d);

/* ---- Other files written through the same writer -------------------
 * For files elfpatch does not edit itself (a separate debug file brought
 * in line with its converted file, src/api/api_debug.c): a file made of
 * pieces, each bytes of one source image (copied by the kernel where it
 * can, as elfp_write copies unchanged input) or bytes in memory. */

/* The source: an image and, when it is a file, its open descriptor
 * (-1: none; then every byte is written from img). */
typedef struct {
	const uint8_t *img;
	size_t size;
	int fd;
} elfp_source;

typedef struct {
	uint64_t off, len;    /* where in the output */
	const uint8_t *mem;   /* these bytes, or NULL: */
	uint64_t src_off;     /* the source's from this offset */
} elfp_piece;

/* Write a file of size bytes made of the pieces p[0..n) (sorted here;
 * they must not overlap) with zeros between them over path atomically:
 * a temporary file, fsync'ed, given keep's mode and, where allowed, its
 * owner, renamed over path. On failure path is untouched. */
e2s_err elfp_write_pieces_atomic(const char *path, const struct stat *keep,
				 const elfp_source *src, elfp_piece *p,
				 size_t n, uint64_t size, e2s_diag *d);
/* The same into one malloc'd buffer (*out, free it) of size bytes. */
e2s_err elfp_write_pieces_mem(const elfp_source *src, elfp_piece *p,
			      size_t n, uint64_t size, uint8_t **out,
			      size_t *out_len, e2s_diag *d);
/* A 64-byte section header as it is in the file. */
void elfp_put_shdr(uint8_t *p, const elfp_shdr *sh, bool be);
/* The table fields of a 64-bit ELF header eh (offsets, entry sizes,
 * counts; extended numbering says SHN_XINDEX/PN_XNUM there, section 0
 * must carry the real values). */
void elfp_put_ehdr_tables(uint8_t *eh, uint64_t phoff, size_t phnum,
			  uint64_t shoff, size_t shnum, size_t shstrndx,
			  bool be);

/* ---- Debug files (elfp_debug.c) -------------------------------------
 * A debug file g (separate, or the mini debuginfo of .gnu_debugdata)
 * brought in line with the converted file c it was cut from: c's
 * program header table at c's e_phoff, a SHT_NOBITS header for each
 * allocated section c has and g lacks, moved sections (and their
 * symbols) at c's addresses. Sections pair up by name and rank; a
 * section of another size is refused (USAGE, "not its debug file"). */

typedef struct {
	size_t moved;        /* sections of g at a new address */
	size_t added;        /* section headers added */
	bool changed;        /* g was rewritten (false: already matching) */
} elfp_debug_stats;

/* What the writer needs of g's headers beyond the reader's checks; call
 * it on g before elfp_debug_update. Messages name no file. */
e2s_err elfp_debug_check(const elfr_file *g, e2s_diag *d);
/* Rewrite g for c: over path (atomically, g's mode and owner; g opened
 * with ELFR_KEEP_FD copies unchanged bytes by the kernel) or, path NULL,
 * into *mem (malloc'd, *mem_len bytes). Nothing is written when g
 * already matches (st->changed false; *mem stays NULL). The program
 * header table goes at c's e_phoff (eu-unstrip takes e_phoff from the
 * debug file), or, compact, right after g's ELF header: for the mini
 * debuginfo, which no tool recombines with its file and which a table
 * at the end of a large file (the SEG layouts) would fill with zeros up
 * to that file's size. */
e2s_err elfp_debug_update(const elfr_file *c, const elfr_file *g,
			  bool compact, const char *path, uint8_t **mem,
			  size_t *mem_len, elfp_debug_stats *st, e2s_diag *d);

#endif
