/* CFI data model: what src/dwarf produces and src/convert consumes.
 *
 * Pipeline: section bytes --cfi_parse--> CIEs + FDEs (with decoded
 * instruction programs) --cfi_interp--> one row table per FDE.
 * Rows are fixed-size, value-copyable and compared with memcmp (all
 * padding is zeroed), so identical consecutive rows can be merged. */
#ifndef E2S_CFI_H
#define E2S_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../abi/abi.h"
#include "../common/err.h"
#include "../common/mem.h"

/* ---- ABIs ------------------------------------------------------------ */

/* Each ABI's facts are one table (src/abi/abi.h): abi_id, abi_get. */
/* ELF e_machine (EM_X86_64 ...) to ABI; ABI_UNKNOWN otherwise. */
static inline abi_id cfi_abi_from_machine(unsigned e_machine)
{
	return abi_of_machine(e_machine)->id;
}

/* ---- Expressions ----------------------------------------------------- */

/* The shapes of DWARF expressions SFrame can express, decoded from the
 * bytes once at interpretation time. */
typedef enum {
	CFI_EXPR_OTHER = 0,  /* anything else: kept as bytes only */
	CFI_EXPR_BREG,       /* DW_OP_breg<N> k              -> reg + k   */
	CFI_EXPR_BREG_DEREF, /* DW_OP_breg<N> k; DW_OP_deref -> *(reg + k) */
	CFI_EXPR_PLT,        /* rsp + 8 + ((rip & 15) >= K) << 3 (x86-64 PLT);
	                      * reg = SP, off = 8, plt_k = K */
	CFI_EXPR_CONST,      /* DW_OP_lit<K> / DW_OP_const1u K -> off = K
	                      * (AArch64 RA_SIGN_STATE values) */
} cfi_expr_shape;

typedef struct {
	uint32_t sec_off; /* offset of the expression bytes in the section */
	uint32_t len;     /* length of the expression bytes */
	uint8_t shape;    /* cfi_expr_shape */
	uint8_t pad_[1];
	uint16_t reg;     /* BREG, BREG_DEREF, PLT: base register */
	uint32_t plt_k;   /* PLT: the K threshold */
	int64_t off;      /* BREG, BREG_DEREF, PLT: constant k */
} cfi_expr;

/* Classify expression bytes (no side effects). */
void cfi_expr_classify(const uint8_t *bytes, size_t len, bool big_endian,
		       unsigned addr_size, cfi_expr *out);

/* ---- Rules and rows -------------------------------------------------- */

typedef enum {
	CFI_RULE_UNSPEC = 0, /* no rule given: ABI default (callee-saved:
	                      * same value; RA column: same value too) */
	CFI_RULE_UNDEFINED,  /* DW_CFA_undefined */
	CFI_RULE_SAME,       /* DW_CFA_same_value */
	CFI_RULE_OFFSET,     /* saved at CFA + off */
	CFI_RULE_VAL_OFFSET, /* value is CFA + off */
	CFI_RULE_REGISTER,   /* value is in register reg */
	CFI_RULE_EXPR,       /* saved at address computed by expr */
	CFI_RULE_VAL_EXPR,   /* value computed by expr */
} cfi_rule_kind;

/* Where a saved SP came from (SP column, OFFSET and REGISTER rules): the
 * rule says where the caller's SP is kept, not what it is. The slot holds
 * the SP of the instruction that saved it; if the CFA was SP + k then,
 * that is CFA - k. See cfi_interp.c for when k counts as known. */
enum {
	CFI_PROV_NONE = 0, /* unknown */
	CFI_PROV_PENDING,  /* interpreter-internal: settled at the next
	                    * location change */
	CFI_PROV_KNOWN,    /* saved value is CFA - prov_k */
};

typedef struct {
	uint8_t kind;  /* cfi_rule_kind */
	uint8_t prov;  /* CFI_PROV_*: SP column only */
	uint16_t reg;  /* REGISTER */
	int32_t prov_k; /* CFI_PROV_KNOWN: saved value = CFA - prov_k */
	int64_t off;   /* OFFSET, VAL_OFFSET: already multiplied by the
	                * data alignment factor */
	cfi_expr expr; /* EXPR, VAL_EXPR */
} cfi_rule;

typedef enum {
	CFI_CFA_UNSET = 0, /* no DW_CFA_def_cfa* seen yet */
	CFI_CFA_REG_OFF,   /* CFA = reg + off */
	CFI_CFA_EXPR,      /* CFA = value of expr (DW_CFA_def_cfa_expression) */
	CFI_CFA_INVALID,   /* def_cfa_offset / def_cfa_register applied to an
	                    * expression CFA (seen from GCC 14 on AArch64 SVE
	                    * code): DWARF leaves it undefined, we keep the row
	                    * but mark the CFA unusable; SFrame skips such
	                    * functions and the file goes on. */
} cfi_cfa_kind;

typedef struct {
	uint8_t kind; /* cfi_cfa_kind */
	uint8_t pad_[1];
	uint16_t reg;
	uint32_t pad2_;
	int64_t off;
	cfi_expr expr;
} cfi_cfa;

/* One row of the unwind table: the rules in force for PCs [start, end).
 * Addresses are in the FDE's address space: virtual addresses for linked
 * files, offsets inside the target section for relocatable ones. */
typedef struct {
	uint64_t start, end;
	cfi_cfa cfa;
	cfi_rule sp, fp, ra; /* the ABI's SP and FP columns, and the CIE's
	                      * return address column */
	uint8_t ra_mangled;  /* AArch64: RA is signed (RA_SIGN_STATE, DWARF
	                      * register 34: negate_ra_state toggles it, a
	                      * val_expression 34 of a constant sets it) */
	uint8_t ra_sign_bad; /* AArch64: register 34 has a rule that is not a
	                      * constant 0 or 1 */
	uint8_t ra_sign_pc;  /* AArch64: negate_ra_state_with_pc seen: the RA
	                      * is signed with the PC as a second modifier */
	uint8_t pad_[4];
	uint8_t same;        /* CFI_COL_* bits of the columns whose rules equal
	                      * the previous row's of the same FDE, on its
	                      * first row its CIE's initial rules (a bit not
	                      * set: not known). Not a rule: rows compare up
	                      * to it. A reader of consecutive rows may reuse
	                      * what it derived from a column marked same. */
} cfi_row;

/* Columns of a row, for cfi_row.same. */
enum {
	CFI_COL_CFA = 1,
	CFI_COL_RA = 2,
	CFI_COL_FP = 4,
	CFI_COL_SP = 8,  /* rule and save provenance */
	CFI_COL_SIGN = 16, /* ra_mangled, ra_sign_bad, ra_sign_pc */
	CFI_COL_CFA_BASE = 32, /* the CFA rule but its offset (set whenever
	                        * CFI_COL_CFA is): a reader of a row whose
	                        * CFA offset alone changed need not look at
	                        * its kind and register */
	CFI_COL_ALL = 63,
};

/* ---- Parsed records -------------------------------------------------- */

typedef struct {
	uint64_t sec_off;     /* offset of the length field in the section */
	uint8_t version;      /* 1, 3 or 4 */
	uint8_t fde_enc;      /* 'R' encoding (DW_EH_PE_*), absptr default */
	uint8_t lsda_enc;     /* 'L' encoding, DW_EH_PE_omit if none */
	uint8_t addr_size;    /* v4 field, else the ELF class's */
	uint8_t seg_size;     /* v4 field, else 0 */
	bool signal_frame;    /* 'S' */
	bool pauth_b_key;     /* 'B' (AArch64) */
	bool mte_tagged;      /* 'G' */
	bool has_z;           /* augmentation begins with 'z' */
	e2s_err status;       /* OK, or why this CIE's FDEs are unusable */
	uint64_t code_align;
	int64_t data_align;
	uint32_t ra_reg;
	uint32_t insn_off, insn_len; /* initial instructions (section offsets) */
	const char *augmentation;    /* points into the section bytes */
} cfi_cie;

/* For relocatable files: the relocation that gives the FDE's initial
 * location. The function starts at sym + addend (a section symbol for
 * GCC output) in section shndx. */
typedef struct {
	int64_t addend;   /* relocation addend, as seen by the FDE field */
	uint32_t sym;     /* symbol table index */
	uint32_t shndx;   /* section of the symbol's definition (SHN_XINDEX
	                   * resolved through SHT_SYMTAB_SHNDX) */
	uint32_t type;    /* relocation type (R_X86_64_PC32 ...) */
	bool present;
} cfi_reloc_ref;

/* Ordered for size: one is kept per FDE (56 bytes). Offsets fit 32
 * bits: a section over 4 GiB is refused (cfi_parse). */
typedef struct {
	uint64_t pc_begin;   /* decoded initial location (vaddr for linked
	                      * files; sym value + addend for relocatable) */
	uint64_t pc_range;
	uint32_t sec_off;    /* offset of the length field in the section */
	uint32_t cie;        /* index into cfi_table.cies */
	uint32_t insn_off, insn_len; /* FDE instructions (section offsets) */
	uint32_t row_first, row_count; /* rows in cfi_table.rows */
	uint32_t err_off;    /* section offset of the problem, if status */
	uint32_t cie_off;    /* section offset of its CIE (as pointed to;
	                      * UINT32_MAX for a pointer past 4 GiB) */
	uint32_t reach;      /* once its program ran: the offset from pc_begin
	                      * of the last location it advanced to (its rows
	                      * are the same for any pc_range above it but
	                      * for the last one's end), UINT32_MAX if more */
	uint8_t status;      /* e2s_err: OK, or why this FDE has no rows */
	bool set_loc;        /* its program has DW_CFA_set_loc: where its rows
	                      * start depends on its address */
} cfi_fde;
_Static_assert(sizeof(cfi_fde) <= 56, "cfi_fde: one per FDE");

/* Which section the records came from; this drives CIE id rules,
 * pointer encodings and the CIE pointer's meaning. */
typedef enum { CFI_SEC_EH_FRAME, CFI_SEC_DEBUG_FRAME } cfi_sec_kind;

/* Everything the parser needs to know about one CFI section. */
typedef struct {
	cfi_sec_kind kind;
	const uint8_t *data;
	size_t size;
	bool big_endian;
	uint8_t addr_size;    /* 4 or 8 (ELF class) */
	uint64_t vaddr;       /* sh_addr: base of pcrel (0 for ET_REL) */
	uint64_t text_base;   /* DW_EH_PE_textrel base (0 if unknown) */
	uint64_t data_base;   /* DW_EH_PE_datarel base (.got / GOT start) */
	/* Relocations applying to this section (ET_REL), sorted by offset;
	 * NULL/0 for linked files. */
	const struct cfi_rela *relas;
	size_t nrelas;
	/* For DW_EH_PE_indirect: read a pointer at a vaddr; may be NULL. */
	bool (*read_mem)(void *ctx, uint64_t vaddr, unsigned size,
			 uint64_t *out);
	void *read_mem_ctx;
	bool relocatable;     /* from an ET_REL file */
} cfi_section;

typedef struct cfi_rela {
	uint64_t offset;  /* r_offset inside the CFI section */
	uint32_t type;
	uint32_t sym;
	int64_t addend;
	uint64_t sym_value; /* st_value of the symbol */
	uint32_t sym_shndx; /* the symbol's section (SHN_XINDEX resolved) */
	bool implicit_addend; /* SHT_REL: the field holds the addend */
} cfi_rela;

/* The result of parsing + interpreting one section. Owns its arrays. */
typedef struct {
	abi_id abi;
	cfi_sec_kind kind;
	const uint8_t *data; /* the section bytes (not owned) */
	size_t size;
	bool big_endian;
	cfi_cie *cies;
	size_t ncies;
	cfi_fde *fdes;       /* in section order */
	size_t nfdes;
	e2s_block *fdes_block; /* a reference to the block fdes lies in
	                        * (cfi_fde_room_fn), NULL once it does not */
	cfi_reloc_ref *relocs; /* parallel to fdes where the section has
	                        * relocations (ET_REL), else NULL: see
	                        * cfi_fde_reloc */
	cfi_row *rows;
	size_t nrows;
	size_t nbad_fdes;    /* FDEs whose status is not OK */
	bool relocatable;    /* from an ET_REL file (pc_begin per section) */
} cfi_table;

/* The relocation giving fde's initial location; none (present false)
 * in a linked file. */
static inline cfi_reloc_ref cfi_fde_reloc(const cfi_table *t,
					  const cfi_fde *fde)
{
	cfi_reloc_ref r = {0};
	if (t->relocs)
		r = t->relocs[fde - t->fdes];
	return r;
}

/* Streaming: called once per FDE, in section order, right after its
 * program ran and its status was set. rows/nrows are that FDE's rows
 * (none for a bad FDE), valid during the call only; t is the table
 * being built (its CIEs complete, its FDEs up to index fde). A non-OK
 * return stops the parse with that error. */
typedef e2s_err (*cfi_fde_fn)(void *ctx, const cfi_table *t, size_t fde,
			      const cfi_row *rows, size_t nrows);

/* Streaming with a look before each program runs: called for each FDE
 * whose record is readable (CIE found and usable, addresses decoded)
 * before its program runs. It returns 1 if it already has what the
 * program would give (the program is not run, on_fde is not called for
 * the FDE, whose status stays OK), 0 to run it, -1 on out of memory.
 * The converter uses it for FDEs whose program equals an earlier one's. */
typedef int (*cfi_fde_pre_fn)(void *ctx, const cfi_table *t, size_t fde);

/* Streaming row by row: called with each row as the interpreter makes
 * it, in order, before on_fde for its FDE (which then gets no array,
 * only the count). A row is passed on only where some column's rule was
 * set since the row before (so two in a row may still be equal, and
 * "end" is where its location group ends, not where its rules do);
 * row->same says which columns it shares with the one before (on an
 * FDE's first: with its CIE's initial rules). The row is valid during the call only, and only on_fde
 * tells whether the program ran to its end (a later problem voids its
 * rows). It returns OK, or E2S_ERR_NOMEM to stop the parse.*/
typedef e2s_err (*cfi_row_fn)(void *ctx, const cfi_table *t, size_t fde,
			      const cfi_row *row);

/* Memory for the FDE array, asked for once before the walk: bytes of it
 * (the parse's reserve for sec) in the consumer's block, which the table
 * then keeps a reference to (*blk, set only with memory returned:
 * cfi_table.fdes_block); NULL to let the parse allocate its own. */
typedef void *(*cfi_fde_room_fn)(void *ctx, const cfi_section *sec,
				 size_t bytes, e2s_block **blk);

/* The consumer of a streaming parse; ctx goes to each call. */
typedef struct {
	cfi_fde_pre_fn pre; /* NULL: every program runs */
	cfi_row_fn row;     /* NULL: each FDE's rows go to fde in one array */
	cfi_fde_fn fde;
	void *ctx;
	cfi_fde_room_fn room; /* NULL: the parse allocates the FDE array */
} cfi_sink;

/* Parse all records of sec and run every FDE's program into rows.
 * Problems confined to one CIE/FDE set that record's status and the
 * parse goes on; only a problem that makes the rest of the section
 * unreadable (a length running past the end) returns an error, with
 * *diag filled. On success *out owns its arrays (cfi_table_free). */
e2s_err cfi_parse(const cfi_section *sec, abi_id abi, cfi_table *out,
		  e2s_diag *diag);
/* cfi_parse without the row table: each FDE's rows go to on_fde and
 * are not kept (out->rows NULL, every row_first/row_count 0), so memory
 * does not grow with the number of rows. */
e2s_err cfi_parse_stream(const cfi_section *sec, abi_id abi,
			 cfi_fde_fn on_fde, void *ctx, cfi_table *out,
			 e2s_diag *diag);
/* cfi_parse_stream with the consumer k (k->fde non-NULL). */
e2s_err cfi_parse_sink(const cfi_section *sec, abi_id abi,
		       const cfi_sink *k, cfi_table *out, e2s_diag *diag);
/* One DW_EH_PE_* pointer at sec->data + *off (pc-relative ones from
 * sec->vaddr + *off), for readers of .eh_frame_hdr; *off moves past it. */
e2s_err cfi_read_eh_pointer(const cfi_section *sec, uint8_t enc, size_t *off,
			    uint64_t *out);
/* Records only: CIEs and FDEs framed and their fields decoded, no
 * program run (no rows; a status reflects record-level problems only).
 * For readers that interpret the programs themselves (src/verify). */
e2s_err cfi_parse_records(const cfi_section *sec, abi_id abi,
			  cfi_table *out, e2s_diag *diag);
/* Decode the address operand of DW_CFA_set_loc at section offset off
 * (the FDE's pointer encoding, relocations applied as for pc_begin).
 * *len gets the operand's length. */
e2s_err cfi_read_fde_addr(const cfi_section *sec, const cfi_table *t,
			  const cfi_fde *fde, uint64_t off, uint64_t *val,
			  uint64_t *len);
void cfi_table_free(cfi_table *t);
/* The FDE array, detached (NULL when none; the table is left without
 * FDEs): its bytes *bytes (the FDEs', all written, so every page of
 * them faulted in) can hold a later array without new page faults.
 * The caller frees it, or where it lies in a block (*blk non-NULL: the
 * table's reference, now the caller's) lets that go. */
void *cfi_table_take_fdes(cfi_table *t, size_t *bytes, e2s_block **blk);
/* Describe a bad FDE's status as a diag (section + offset + detail such
 * as the opcode byte), for warnings. */
void cfi_fde_diag(const cfi_table *t, const cfi_fde *fde, e2s_diag *diag);
/* ".eh_frame" or ".debug_frame". */
const char *cfi_sec_name(cfi_sec_kind kind);

/* ---- Printing (cfi_dump.c) ------------------------------------------- */

/* Print t in the --dump-cfi format documented in README.md. cfi_dump
 * names the file "-" in the header line; cfi_dump_file names it. */
#include <stdio.h>
void cfi_dump(FILE *out, const cfi_table *t);
void cfi_dump_file(FILE *out, const char *path, const cfi_table *t);

#endif
