/* Internal interfaces between the files of src/dwarf (not installed):
 * pointer encodings, the opcode table, decoded instructions and the
 * interpreter. */
#ifndef E2S_CFI_INT_H
#define E2S_CFI_INT_H

#include "../common/mem.h"
#include "../common/reader.h"
#include "cfi.h"

/* ---- DW_EH_PE_* pointer encodings (cfi_encoding.c) -------------------- */

enum {
	CFI_PE_ABSPTR = 0x00,
	CFI_PE_ULEB128 = 0x01,
	CFI_PE_UDATA2 = 0x02,
	CFI_PE_UDATA4 = 0x03,
	CFI_PE_UDATA8 = 0x04,
	CFI_PE_SIGNED = 0x08, /* signed, address-sized */
	CFI_PE_SLEB128 = 0x09,
	CFI_PE_SDATA2 = 0x0a,
	CFI_PE_SDATA4 = 0x0b,
	CFI_PE_SDATA8 = 0x0c,
	CFI_PE_PCREL = 0x10,
	CFI_PE_TEXTREL = 0x20,
	CFI_PE_DATAREL = 0x30,
	CFI_PE_FUNCREL = 0x40,
	CFI_PE_ALIGNED = 0x50,
	CFI_PE_INDIRECT = 0x80,
	CFI_PE_OMIT = 0xff,
};

/* What a pointer read needs besides the bytes. */
typedef struct {
	const cfi_section *sec;
	abi_id abi;
	uint8_t addr_size; /* size of absptr */
	uint64_t func_base; /* DW_EH_PE_funcrel base (FDE pc_begin) */
} cfi_ptr_ctx;

/* True if enc is a pointer encoding we can decode (omit included). */
bool cfi_pe_valid_p(uint8_t enc);

/* Read one pointer encoded with enc at r's position. With resolve
 * false only the raw field value is returned (no application, no
 * relocation, no indirection): used for pc_range and for fields whose
 * value we skip (personality, LSDA). rel, if non-NULL, receives the
 * relocation found at the field. Errors: TRUNCATED/LEB_OVERLONG (from
 * r), BAD_POINTER_ENCODING, BAD_RELOC (a relocation type that does not
 * match the encoding's application). */
e2s_err cfi_read_pointer(br_t *r, const cfi_ptr_ctx *c, uint8_t enc,
			 bool resolve, uint64_t *out, cfi_reloc_ref *rel);

/* The relocation applying at section offset off, or NULL. */
const cfi_rela *cfi_find_rela(const cfi_section *sec, uint64_t off);
/* Bytes a relocation type of abi writes (4 or 8), 0 if not known. */
unsigned cfi_reloc_width(abi_id abi, uint32_t type);

/* Mask v to addr_size bytes. */
static inline uint64_t cfi_addr_mask(uint64_t v, unsigned addr_size)
{
	return addr_size >= 8 ? v : v & ((UINT64_C(1) << (8 * addr_size)) - 1);
}

/* ---- Opcodes and decoded instructions (cfi_insn.c) -------------------- */

enum {
	DW_CFA_advance_loc = 0x40, /* primary opcodes (high two bits) */
	DW_CFA_offset = 0x80,
	DW_CFA_restore = 0xc0,
	DW_CFA_nop = 0x00,
	DW_CFA_set_loc = 0x01,
	DW_CFA_advance_loc1 = 0x02,
	DW_CFA_advance_loc2 = 0x03,
	DW_CFA_advance_loc4 = 0x04,
	DW_CFA_offset_extended = 0x05,
	DW_CFA_restore_extended = 0x06,
	DW_CFA_undefined = 0x07,
	DW_CFA_same_value = 0x08,
	DW_CFA_register = 0x09,
	DW_CFA_remember_state = 0x0a,
	DW_CFA_restore_state = 0x0b,
	DW_CFA_def_cfa = 0x0c,
	DW_CFA_def_cfa_register = 0x0d,
	DW_CFA_def_cfa_offset = 0x0e,
	DW_CFA_def_cfa_expression = 0x0f,
	DW_CFA_expression = 0x10,
	DW_CFA_offset_extended_sf = 0x11,
	DW_CFA_def_cfa_sf = 0x12,
	DW_CFA_def_cfa_offset_sf = 0x13,
	DW_CFA_val_offset = 0x14,
	DW_CFA_val_offset_sf = 0x15,
	DW_CFA_val_expression = 0x16,
	DW_CFA_MIPS_advance_loc8 = 0x1d,
	DW_CFA_AARCH64_negate_ra_state_with_pc = 0x2c,
	DW_CFA_AARCH64_negate_ra_state = 0x2d, /* GNU_window_save elsewhere */
	DW_CFA_GNU_args_size = 0x2e,
	DW_CFA_GNU_negative_offset_extended = 0x2f,
};

/* Operand kinds; the table in cfi_insn.c gives up to two per opcode. */
typedef enum {
	CFI_OPK_NONE = 0,
	CFI_OPK_LOW6,  /* operand in the opcode's low six bits */
	CFI_OPK_REG,   /* ULEB128 register number */
	CFI_OPK_ULEB,
	CFI_OPK_SLEB,
	CFI_OPK_U8,
	CFI_OPK_U16,
	CFI_OPK_U32,
	CFI_OPK_U64,
	CFI_OPK_ADDR,  /* pointer in the FDE encoding */
	CFI_OPK_BLOCK, /* ULEB128 length + bytes */
} cfi_opk;

typedef struct {
	const char *name; /* NULL: not an opcode */
	uint8_t opnd[2];  /* cfi_opk */
} cfi_opinfo;

/* Table entry for an opcode byte (primary opcodes by their high bits);
 * NULL name if the byte is not a known opcode. */
const cfi_opinfo *cfi_op_info(uint8_t op);

/* One decoded instruction. Operands are raw (not yet factored). */
typedef struct {
	uint8_t op;       /* opcode, primary ones with the low bits cleared */
	uint8_t pad_[3];
	uint32_t off;     /* section offset of the opcode byte */
	uint64_t a;       /* first operand (register, delta, address...) */
	uint64_t b;       /* second operand (offset as unsigned or signed
	                   * bits, register) */
	uint32_t blk_off, blk_len; /* BLOCK operand */
} cfi_insn;

/* Instruction decoder over [off, off+len) of the section, yielding one
 * instruction at a time to the interpreter. */
typedef struct {
	br_t r;
	const cfi_cie *cie;
	const cfi_ptr_ctx *pc;
} cfi_dec;

/* Inline: it runs once per program. As br_init, br_seek(off), then the
 * end moved to off + len, an error if past the section. */
static inline void cfi_dec_init(cfi_dec *d, const cfi_section *sec,
				const cfi_cie *cie, const cfi_ptr_ctx *pc,
				uint32_t off, uint32_t len)
{
	d->r = (br_t){sec->data, (size_t)off + len, off, sec->big_endian,
		      E2S_ERR_OK, 0};
	if (off > sec->size) { /* br_seek's error, at position 0 */
		d->r.pos = 0;
		d->r.err = E2S_ERR_TRUNCATED;
	} else if (d->r.end > sec->size) {
		d->r.err = E2S_ERR_TRUNCATED;
		d->r.err_pos = off;
	}
	d->cie = cie;
	d->pc = pc;
}
/* The next instruction into *in: true. At the end: false with *err OK.
 * On a problem: false, *err its code and *err_off the offending offset.
 * Any opcode and operand; the interpreter decodes the forms compilers
 * emit most with cfi_dec_short and comes here for the rest. */
bool cfi_dec_next(cfi_dec *d, cfi_insn *in, e2s_err *err, uint64_t *err_off);

/* A ULEB128 of one or two bytes at p (p < end for a length of 1): its
 * length, or 0 if it is longer or cut short (cfi_dec_next decides). */
static inline unsigned cfi_leb2(const uint8_t *p, const uint8_t *end,
				uint64_t *v)
{
	if (p < end && p[0] < 0x80) {
		*v = p[0];
		return 1;
	}
	if (end - p >= 2 && p[1] < 0x80) {
		*v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		return 2;
	}
	return 0;
}

/* The short forms compilers emit most: a one-byte opcode and operands of
 * at most two ULEB128 bytes (advance_loc1/2: their fixed-width one).
 * The length of the one at p (p < end) into *o, or 0 if it is not one
 * (another opcode, a longer operand, bytes cut short): cfi_dec_next
 * decodes those. Sets op and the opcode's operands, not off. A run of
 * DW_CFA_nop is one (nothing to run for each). */
static E2S_ALWAYS_INLINE unsigned cfi_dec_short(const uint8_t *p,
						const uint8_t *end,
						bool big_endian, cfi_insn *o)
{
	unsigned n, m;
	if (p[0] >> 6) { /* primary: advance_loc, offset, restore */
		o->op = (uint8_t)(p[0] & 0xc0);
		o->a = p[0] & 0x3f;
		if (o->op != DW_CFA_offset)
			return 1;
		return (n = cfi_leb2(p + 1, end, &o->b)) ? 1 + n : 0;
	}
	o->op = p[0];
	/* The commonest before the switch's jump table. */
	if (o->op == DW_CFA_def_cfa_offset)
		return (n = cfi_leb2(p + 1, end, &o->a)) ? 1 + n : 0;
	switch (o->op) {
	case DW_CFA_nop:
		/* A run of them as one: the padding that ends most
		 * programs. */
		for (n = 1; p + n < end && p[n] == DW_CFA_nop;)
			n++;
		return n;
	case DW_CFA_remember_state:
	case DW_CFA_restore_state:
		return 1;
	case DW_CFA_def_cfa_register:
		return (n = cfi_leb2(p + 1, end, &o->a)) ? 1 + n : 0;
	case DW_CFA_def_cfa:
		if (!(n = cfi_leb2(p + 1, end, &o->a)) ||
		    !(m = cfi_leb2(p + 1 + n, end, &o->b)))
			return 0;
		return 1 + n + m;
	case DW_CFA_advance_loc1:
		if (end - p < 2)
			return 0;
		o->a = p[1];
		return 2;
	case DW_CFA_advance_loc2:
		if (end - p < 3)
			return 0;
		o->a = e2s_load_uN(p + 1, 2, big_endian);
		return 3;
	default:
		return 0;
	}
}

/* ---- Interpreter (cfi_interp.c) --------------------------------------- */

/* Scratch state reused by every program run of one cfi_parse. */
typedef struct {
	cfi_row *stack; /* remember_state stack */
	size_t depth, cap;
	/* Rows: the whole table's (table mode) or the current FDE's
	 * (streaming: emptied before each FDE). */
	cfi_row *rows;
	size_t nrows, rows_cap;
	/* Row by row (cfi_row_fn) instead, if set. */
	cfi_row_fn row_fn;
	void *row_ctx;
	const abi_desc *ar; /* abi_get(t->abi), looked up once */
	uint64_t plain;     /* registers 0-63 of no ABI column, valid */
} cfi_interp_scratch;

/* Set up s for running the programs of a section of ABI abi. */
void cfi_scratch_init(cfi_interp_scratch *s, abi_id abi);

#define CFI_MAX_STATE_DEPTH 64

/* What each FDE of a CIE starts from, made once per CIE. */
typedef struct {
	cfi_row init;      /* the initial rules (start/end 0) */
	uint64_t ca_short; /* the code alignment if below 2^32, else 0 */
	uint64_t plain;    /* registers 0-63 a rule for only needs checked:
	                    * valid, of no kept column (return one included) */
} cfi_cie_start;

/* Run a CIE's initial instructions into st->init (rules only,
 * start/end 0) and set the rest of *st. Advances are not allowed there.
 * A decoding problem anywhere in the program takes precedence over an
 * interpretation one. */
e2s_err cfi_run_cie(const cfi_table *t, const cfi_cie *cie, cfi_dec *dec,
		    cfi_interp_scratch *s, cfi_cie_start *st,
		    uint64_t *err_off);

/* Run the instructions of FDE fde (index idx) starting from its CIE's
 * st, appending rows to s->rows and setting fde->row_first/row_count (an
 * index into s->rows). On a problem no rows are left behind. */
e2s_err cfi_run_fde(const cfi_table *t, const cfi_cie *cie,
		    const cfi_cie_start *st, cfi_fde *fde, size_t idx,
		    cfi_dec *dec, cfi_interp_scratch *s, uint64_t *err_off);

#endif
