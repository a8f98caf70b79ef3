/* The conversion: CFI rows projected onto SFrame (conv_project.c), one
 * path for every caller, and the driver that converts whole ELF files
 * (convert_file.c). */
#ifndef E2S_CONVERT_H
#define E2S_CONVERT_H

#include "../elf/elfr_cfi.h"
#include "../elfpatch/elfpatch.h"
#include "../sframe/sfe.h"
#include "conv_skip.h"

/* The one conversion path: every FDE's rows (cfi_interp.c) are projected
 * onto what SFrame tracks, restricted to what the SFrame version can say
 * (version 2: no flexible FDEs except s390x's V2-expressible ones, no
 * signal frames; others are skipped as CONV_SKIP_V2) and written once as
 * that version's FRE bytes (sfe_set.enc). version: 0 or 3 for V3, 2. */
e2s_err conv_project(const cfi_table *t, unsigned version, sfe_set *out,
		    conv_verdicts *v, e2s_diag *diag);
/* (conv_project runs the rules alone, every cache off: the reference the
 * streaming path, caches on, is held to by the tests.) */

/* Streaming projection: the same result as conv_project, built one FDE at
 * a time from cfi_parse_stream / elfr_cfi_open_view / _stream, so no row
 * table is ever held. conv_stream_fde is a cfi_fde_fn (ctx = the stream). */
typedef struct conv_stream conv_stream;
e2s_err conv_stream_new(conv_stream **out, unsigned version); /* NOMEM only */
e2s_err conv_stream_fde(void *ctx, const cfi_table *t, size_t fde,
		       const cfi_row *rows, size_t nrows);
/* The caches (conv_cache.h) on (the default) or off: the same result.
 * -DEH2S_NO_CACHE turns them off whatever this says. */
void conv_stream_caches(conv_stream *s, bool on);
/* The set's arrays in one block (conv_project.c, pctx_block) where the
 * section's size calls for it (the default), or each in an allocation of
 * its own: the same result (tests). Before the first FDE. */
void conv_stream_block(conv_stream *s, bool on);
/* A cfi_fde_room_fn for the same stream: the parse's FDE array in the
 * set's block with the rest (conv_project.c), where the size calls for
 * one. */
void *conv_stream_room(void *ctx, const cfi_section *sec, size_t bytes,
		       e2s_block **blk);
/* A cfi_row_fn for the same stream: rows one by one as the interpreter
 * makes them (conv_stream_fde then ends the FDE), none kept. */
e2s_err conv_stream_row(void *ctx, const cfi_table *t, size_t fde,
		       const cfi_row *row);
/* A cfi_fde_pre_fn for the same stream: an FDE whose program and CIE
 * equal an earlier FDE's, and whose size is the same or past both
 * programs' reach, takes its outcome without running. */
int conv_stream_pre(void *ctx, const cfi_table *t, size_t fde);
/* After the parse: *out receives the set (sfe_set_free) and *v each
 * FDE's verdict (conv_verdicts_free). t is the
 * parsed table (its FDE count must match what the stream saw). */
e2s_err conv_stream_finish(conv_stream *s, const cfi_table *t, sfe_set *out,
			  conv_verdicts *v, e2s_diag *diag);
void conv_stream_free(conv_stream *s);

/* The pipeline's entry point: elfr_cfi_open_view + the streaming
 * projection in one pass over the CFI. img is borrowed: it must stay
 * valid and unchanged until elfr_cfi_close(*cf). *cf's table has CIEs
 * and FDEs (status, pc range, relocation) but no rows. lo may be NULL. */
e2s_err conv_project_view(const void *img, size_t size,
			 const elfr_cfi_opts *lo, unsigned version,
			 elfr_cfi **cf, sfe_set *set, conv_verdicts *v,
			 e2s_diag *diag);

/* conv_project (version o->sframe_version) + sfe_encode in one call.
 * *set_out and *v_out (each may be NULL) receive the projected set and
 * verdicts (free with sfe_set_free, conv_verdicts_free); relocs as for sfe_encode.
 * out must be bw_init'ed with t's byte order. */
e2s_err conv_build(const cfi_table *t, const sfe_encode_opts *o, bw_t *out,
		  sfe_set *set_out, conv_verdicts *v_out, sfe_reloc **relocs,
		  size_t *nrelocs, e2s_diag *diag);

/* Where function fn of a conversion of t starts in a relocatable file:
 * its FDE's relocation, the addend moved by fn's offset in the FDE (a
 * PLT, or a function split in several for its FRE count), so that
 * symbol + addend == start for every part. */
static inline sfe_reloc_ref conv_func_reloc(const cfi_table *t,
					    const sfe_func *fn)
{
	if (fn->src_fde >= t->nfdes)
		return (sfe_reloc_ref){0, 0, 0, false};
	const cfi_fde *fde = &t->fdes[fn->src_fde];
	cfi_reloc_ref rel = cfi_fde_reloc(t, fde);
	return (sfe_reloc_ref){rel.addend + (int64_t)(fn->start - fde->pc_begin),
			       rel.sym, rel.shndx, rel.present};
}

/* ---- One conversion run (convert_run.c) ----------------------------
 * Every caller's conversion goes through conv_run: the file converter
 * (conv_file), the library's section, statistics and developer
 * calls. It loads the CFI, projects its rows as they come, counts the
 * outcomes and, when asked, encodes the section for a given address. */

/* Where the CFI comes from: an ELF image (its CFI section found and, for
 * ET_REL, relocated by elfr_cfi_open_view) or one bare CFI section. */
typedef struct {
	const void *img;         /* ELF image (borrowed), or NULL: sec */
	size_t size;
	bool debug_frame;        /* image: .debug_frame even with .eh_frame */
	const cfi_section *sec;  /* no image: the section (borrowed) */
	abi_id abi;             /* ... and its ABI */
} conv_input;

typedef struct {
	uint8_t sframe_version;  /* 0 or 3: V3; 2: V2 */
	bool encode;             /* also write the whole section (no
	                          * relocations: linked layout) */
	uint64_t vaddr;          /* encode: address of .sframe */
	int share_fres;          /* encode: sfe_encode_opts.share_fres */
	bool share_runs;         /* encode: sfe_encode_opts.share_runs */
} conv_opts;

/* The outcomes of one run, counted here only. */
typedef struct {
	size_t nfdes;            /* FDEs in the CFI section */
	size_t outcome[CONV_SKIP_COUNT_]; /* FDEs per conv_skip; [NONE] =
	                          * converted, unrelocated ones included */
	size_t converted;        /* converted and in .sframe: outcome[NONE]
	                          * less unrelocated */
	size_t skipped;          /* FDEs with another outcome */
	size_t unrelocated;      /* ET_REL: converted, but no relocation
	                          * gives the start (left out of .sframe) */
	uint64_t code_bytes;     /* pc ranges of every FDE */
	uint64_t code_bytes_converted; /* ... of the converted ones */
} conv_tally;

typedef struct {
	elfr_cfi *cf;            /* image input: its CFI (names), else NULL */
	cfi_table table;         /* section input: its records */
	const cfi_table *t;      /* the FDEs, either way */
	sfe_set set;
	conv_verdicts v;          /* each FDE's */
	conv_tally tally;
	uint8_t *unrel;          /* per FDE: 1 when unrelocated (ET_REL), or
	                          * NULL */
	sfe_reloc_ref *frel;     /* per function of set (ET_REL): its
	                          * conv_func_reloc, kept past
	                          * conv_run_drop_cfi; else NULL */
	uint8_t *sframe;         /* encode: the section (malloc'd; take it
	                          * by setting this NULL) */
	size_t sframe_size;
	sfe_encode_stats st;     /* encode: FRE sharing */
} conv_run;

/* Run it. On success r holds all of the above. A failure to load or
 * project leaves r empty; a failure to encode (NO_FUNCS when nothing was
 * convertible) keeps the set and the tally. Free r either way. */
e2s_err conv_run_do(const conv_input *in, const conv_opts *o, conv_run *r,
		    e2s_diag *d);
/* FDE i's outcome (conv_skip; unrelocated ones are NONE, r->unrel
 * marks them). */
conv_skip conv_fde_outcome(const conv_run *r, size_t i);
/* Close the CFI early (r->cf, r->table; r->t becomes NULL), keeping the
 * set and the tally: a large file's records are not held while its
 * output is laid out. */
void conv_run_drop_cfi(conv_run *r);
void conv_run_free(conv_run *r);

/* ---- Conversion of ELF files (convert_file.c) ----------------------- */

/* Fedora's mini debuginfo (conv_mini.c): before the layout, move its
 * section to the end of the file; after it, update the embedded file for
 * the laid-out output (as a separate debug file) and recompress it. A
 * file without one is left alone. */
e2s_err conv_mini_move(elfp_file *f, e2s_diag *d);
e2s_err conv_mini_update(elfp_file *f, e2s_diag *d);

/* What a file's existing SFrame means for a conversion to version (0, 3
 * or 2); *old: its SFrame section (or debug placeholder), 0 if none. */
typedef enum {
	CONV_NO_SFRAME = 0,
	CONV_HAS_SFRAME,    /* kept unless forced */
	CONV_HAS_V2_OBJECT, /* a relocatable object's V2 section: rebuilt as
	                     * V3 (linkers since 2.46.1 ignore V2 input) */
	CONV_HAS_SEGMENT,   /* PT_GNU_SFRAME with no SFrame section (no
	                     * section headers): kept, even forced */
} conv_existing;
conv_existing conv_existing_sframe(const elfp_file *f, unsigned version,
				   size_t *old);

typedef struct {
	bool force;       /* rebuild an existing .sframe */
	bool debug_frame; /* read .debug_frame even when .eh_frame exists */
	bool in_place;    /* out_path names the input: keep its owner too */
	bool no_sync;     /* ... and do not sync it before the rename (a
	                   * file that can be made again: elfp_write_opts) */
	bool new_out;     /* out_path is the caller's staging name, which
	                   * must not exist: written directly (elfp_write_opts
	                   * new_path) */
	bool want_skipped; /* fill conv_result.fns with the skipped FDEs */
	bool want_all;    /* ... with every FDE */
	int share_fres;   /* SFE_SHARE_*: identical FRE runs stored once (sfe_encode_opts) */
	uint8_t sframe_version; /* 0 or 3: V3; 2: V2 */
	const char *symbols_from; /* the file's separate debug file, or NULL:
	                           * its symbols count for what the layout
	                           * may move (elfp_set_extra_symbols) */
} conv_file_opts;

typedef struct {
	const char *name; /* symbol name or NULL (owned by the result) */
	uint64_t pc;      /* pc_begin of the FDE */
	uint64_t size;    /* pc_range of the FDE */
	uint32_t shndx;   /* ET_REL: section of its start */
	uint8_t reason;   /* conv_skip */
	bool unrelocated; /* ET_REL: converted but left out of .sframe (no
	                   * relocation gives its start) */
} conv_fn;

typedef struct {
	size_t nfdes;      /* FDEs in the CFI section (tally.nfdes) */
	bool rebuilt_v2;   /* an object's V2 .sframe was rebuilt as V3 */
	conv_tally tally;  /* the run's outcomes */
	conv_fn *fns;      /* opts want_skipped / want_all, in FDE order */
	size_t nfns;
	size_t sframe_size; /* bytes of .sframe written (sum over sections) */
	size_t nsections;   /* .sframe sections written */
	elfp_layout_info layout;
} conv_result;

void conv_result_free(conv_result *r);

/* Read in_path, convert its CFI, write out_path (atomically through a
 * temporary file in out_path's directory; out_path may equal in_path)
 * once the written file passes elfp_check_output.
 * E2S_ERR_EXISTS: the file already has .sframe and !o->force; nothing is
 * written. E2S_ERR_SFRAME_NAME: a section that is not SFrame is named
 * .sframe and the conversion would add one; nothing is written. */
e2s_err conv_file_path(const char *in_path, const char *out_path,
		     const conv_file_opts *o, conv_result *res, e2s_diag *d);
/* The conversion of an open file, up to elfp_write: afterwards f holds
 * the converted output (elfp_write / elfp_write_mem) and res->layout is
 * filled. Errors as conv_file_path. */
e2s_err conv_file(elfp_file *f, const conv_file_opts *o,
			  conv_result *res, e2s_diag *d);

#endif
