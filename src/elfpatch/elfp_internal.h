/* elfpatch internals shared by elfp_file.c (parse, edits) and
 * elfp_layout.c (layout, serialisation). */
#ifndef E2S_ELFP_INTERNAL_H
#define E2S_ELFP_INTERNAL_H

#include <stdlib.h>

#include "../common/buf.h"
#include "elfpatch.h"

#define ELFP_EHDR_SIZE 64
#define ELFP_PHDR_SIZE 56
#define ELFP_SHDR_SIZE 64
/* Largest sh_addralign accepted: real files stay far below (2 MiB for
 * huge-page alignment); hostile ones would make a moved section pad the
 * output by gigabytes. */
#define ELFP_MAX_ALIGN ((uint64_t)16 << 20)
/* Section holding the ELF header copy of layout 1 (elfp_layout.c). */
#define ELFP_EHDR_COPY ".eh2sframe.ehdr"
/* Section covering the program header table of layout 2 (elfp_layout.c). */
#define ELFP_PHDRS_SEC ".eh2sframe.phdrs"

/* Where a section's bytes end up in the output. */
typedef enum {
	ELFP_ORIG = 0,  /* untouched, at its old offset */
	ELFP_SEG,       /* new space in the new PT_LOAD (linked, allocated) */
	ELFP_TAIL,      /* new space after everything else */
	ELFP_INPLACE,   /* old offset, new (smaller or equal) content */
	ELFP_BLOCK,     /* moved with its neighbours, bytes unchanged, into
	                 * the new PT_LOAD (the program header table grew
	                 * over them; elfp_layout.c) */
} elfp_place;

typedef struct {
	elfp_shdr sh;
	uint8_t place;       /* elfp_place */
	bool is_new;
	bool has_content;
	uint8_t *content;    /* owned; sh.size bytes once has_content */
	e2s_block *content_block; /* a reference to the block content lies
	                           * in (owned instead of content), or NULL */
	uint64_t old_offset, old_size; /* for ELFP_INPLACE */
	uint64_t in_off, in_size; /* extent in the input (0 size: none) */
} elfp_sec;

/* s's content let go (freed, or its block's reference) and replaced by
 * p (malloc'd, owned; NULL: none). */
static inline void elfp_sec_content(elfp_sec *s, uint8_t *p)
{
	e2s_block_release(s->content_block, s->content);
	s->content_block = NULL;
	s->content = p;
}

#define ELFP_TRACK_NONE ((size_t)-1)
#define ELFP_TRACK_NEWSEG ((size_t)-2) /* the PT_LOAD layout adds */

typedef struct {
	elfp_phdr ph;
	size_t track;        /* section index, or ELFP_TRACK_* */
} elfp_seg;

/* A small change to bytes of the output: a value (.dynamic entry,
 * symbol value) or, with zero, a run of zeros. */
typedef struct {
	uint64_t off, len;   /* input offset (out: output offset); len <= 8
	                      * unless zero */
	uint8_t val[8];
	bool zero, out;
} elfp_bpatch;

struct elfp_file {
	/* The input, never written: edits live in elfp_sec.content and the
	 * headers, and elfp_write lays them over the input as it writes. */
	elfr_file *in;
	size_t shstrndx;     /* the output's (a file without section
	                      * headers gets a .shstrtab at 1) */
	elfp_sec *secs;
	size_t nsecs, old_nsecs, seccap;
	elfp_seg *segs;
	size_t nsegs, old_nsegs, segcap;
	bw_t strtab;         /* working copy of .shstrtab */
	bool strtab_changed;
	bool edited;
	bool laid_out;
	const elfp_file *syms_extra; /* elfp_set_extra_symbols */
	uint8_t force_kind;  /* elfp_force_kind */
	/* Layout results. Output offsets: [shift bytes: new ELF header and
	 * program headers][img up to keep][new bytes]. */
	uint64_t new_phoff, new_shoff, shift;
	uint64_t tail_start; /* where the rewritten non-allocated sections
	                      * begin (elfp_replace_content lays them out
	                      * again) */
	uint64_t keep;       /* input bytes kept: the rest (old section
	                      * header table, old .shstrtab) is rewritten */
	uint64_t blk_lo, blk_hi, blk_off; /* ELFP_BLOCK bytes: input range,
	                                   * output offset */
	elfp_bpatch *bp;
	size_t nbp, bpcap;
	elfp_layout_info info;
};

void elfp_put(uint8_t *p, uint64_t v, unsigned n, bool be);
/* Record a value (len <= 8 bytes) or a run of zeros at input offset off. */
e2s_err elfp_add_bpatch(elfp_file *f, uint64_t off, uint64_t len,
			uint64_t val, bool zero, e2s_diag *d);
/* The PT_LOAD holding the table's file bytes from e_phoff up to end. */
const elfp_phdr *elfp_table_load(const elfp_file *f, uint64_t end);

/* ---- GROWN (elfp_grow.c): the table grows over the sections after it,
 * which move to the new segment. */
typedef struct {
	uint64_t lo, hi;     /* input offsets */
	uint64_t vlo, vhi;   /* old addresses */
	uint64_t align;
	bool *in;            /* old section index -> moved */
	char why[96];        /* why GROWN cannot be done, when it cannot */
} elfp_grow_plan;

/* The block of sections the table of n entries would grow over, if its
 * layout allows moving them; else false and g->why says why. */
bool elfp_grow_plan_make(const elfp_file *f, size_t n, elfp_grow_plan *g);
/* Nothing but the loader and tools can reach the block: no symbol, no
 * dynamic relocation, no other .dynamic address points into it. Apart
 * from elfp_grow_plan_make since it reads every relocation: only for a
 * GROWN that would be chosen. */
bool elfp_grow_refs_ok(const elfp_file *f, elfp_grow_plan *g);
/* Move the block to f->blk_off / blk_va, and what points at it. */
e2s_err elfp_grow_apply(elfp_file *f, const elfp_grow_plan *g,
			uint64_t blk_va, size_t total, e2s_diag *d);
/* A zeroed program header slot at index at (later ones move up). */
e2s_err elfp_insert_seg(elfp_file *f, size_t at, elfp_seg **out,
			e2s_diag *d);

#endif
