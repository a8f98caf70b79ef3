/* CFI of one ELF file (elfr_cfi.c): the section located with the ELF
 * reader (elf_file.h), relocations resolved for relocatable files, then
 * parsed by src/dwarf. */
#ifndef E2S_CFI_FILE_H
#define E2S_CFI_FILE_H

#include "../dwarf/cfi.h"

/* CFI of one ELF file (32- or 64-bit): .eh_frame if present, else
 * .debug_frame (elfr_cfi_opts.prefer_debug_frame: .debug_frame first). */
typedef struct elfr_cfi elfr_cfi;

typedef struct {
	bool prefer_debug_frame; /* use .debug_frame even if .eh_frame exists */
	bool records_only;       /* cfi_parse_records: no programs run */
	cfi_fde_pre_fn pre_fde;  /* with on_fde: cfi_sink.pre */
	cfi_row_fn on_row;       /* with on_fde: cfi_sink.row */
	cfi_fde_room_fn fde_room; /* with on_fde: cfi_sink.room */
} elfr_cfi_opts;

/* Load path's CFI. The returned handle keeps the file mapped (read-only,
 * private mapping; a plain read where mapping fails).
 * Errors: NOT_ELF, BAD_ELF, NO_CFI, ... with *diag filled. */
e2s_err elfr_cfi_open(const char *path, const elfr_cfi_opts *opts,
		      elfr_cfi **out, e2s_diag *diag);
/* From an image in memory (a copy is made). */
e2s_err elfr_cfi_open_mem(const void *data, size_t size,
			  const elfr_cfi_opts *opts, elfr_cfi **out,
			  e2s_diag *diag);
/* The same without copying: data is borrowed (never written) and must
 * stay valid and unchanged until elfr_cfi_close. With on_fde non-NULL the
 * rows are streamed to it (see cfi_parse_stream) instead of being kept:
 * the table then has CIEs and FDEs but no rows. */
e2s_err elfr_cfi_open_view(const void *data, size_t size,
			   const elfr_cfi_opts *opts, cfi_fde_fn on_fde,
			   void *ctx, elfr_cfi **out, e2s_diag *diag);
/* elfr_cfi_open with on_fde as for elfr_cfi_open_view. */
e2s_err elfr_cfi_open_stream(const char *path, const elfr_cfi_opts *opts,
			     cfi_fde_fn on_fde, void *ctx, elfr_cfi **out,
			     e2s_diag *diag);
void elfr_cfi_close(elfr_cfi *f);
/* cfi_table_take_fdes on the handle's table: for a caller done with the
 * FDEs that closes the handle next. */
void *elfr_cfi_take_fdes(elfr_cfi *f, size_t *bytes, e2s_block **blk);
const cfi_table *elfr_cfi_table(const elfr_cfi *f);
unsigned elfr_cfi_machine(const elfr_cfi *f);   /* e_machine */
bool elfr_cfi_is_rel(const elfr_cfi *f);        /* ET_REL */
const char *elfr_cfi_section_name(const elfr_cfi *f); /* ".eh_frame" ... */
const cfi_section *elfr_cfi_section(const elfr_cfi *f);
/* Name of the function starting at pc_begin (symbol table), or NULL.
 * The first call reads the symbol table into the handle: do not call it
 * from two threads at once on one handle. */
const char *elfr_cfi_func_name(const elfr_cfi *f, const cfi_fde *fde);

#endif
