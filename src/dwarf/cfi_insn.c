/* DW_CFA_* instructions: one operand table, indexed by opcode, drives
 * both decoding (bytes -> cfi_insn) and the names used in diagnostics.
 * Decoding is separate from interpretation so the interpreter sees
 * validated, fixed-size instructions; the decoder hands them over one
 * at a time (cfi_dec_next), so no instruction array is built. */
#include <stdlib.h>

#include "cfi_int.h"

#define OP0(n) {n, {CFI_OPK_NONE, CFI_OPK_NONE}}
#define OP1(n, a) {n, {a, CFI_OPK_NONE}}
#define OP2(n, a, b) {n, {a, b}}

/* Opcodes 0x00-0x3f (extended and vendor). */
static const cfi_opinfo ext_ops[0x40] = {
	[DW_CFA_nop] = OP0("DW_CFA_nop"),
	[DW_CFA_set_loc] = OP1("DW_CFA_set_loc", CFI_OPK_ADDR),
	[DW_CFA_advance_loc1] = OP1("DW_CFA_advance_loc1", CFI_OPK_U8),
	[DW_CFA_advance_loc2] = OP1("DW_CFA_advance_loc2", CFI_OPK_U16),
	[DW_CFA_advance_loc4] = OP1("DW_CFA_advance_loc4", CFI_OPK_U32),
	[DW_CFA_offset_extended] =
		OP2("DW_CFA_offset_extended", CFI_OPK_REG, CFI_OPK_ULEB),
	[DW_CFA_restore_extended] =
		OP1("DW_CFA_restore_extended", CFI_OPK_REG),
	[DW_CFA_undefined] = OP1("DW_CFA_undefined", CFI_OPK_REG),
	[DW_CFA_same_value] = OP1("DW_CFA_same_value", CFI_OPK_REG),
	[DW_CFA_register] =
		OP2("DW_CFA_register", CFI_OPK_REG, CFI_OPK_REG),
	[DW_CFA_remember_state] = OP0("DW_CFA_remember_state"),
	[DW_CFA_restore_state] = OP0("DW_CFA_restore_state"),
	[DW_CFA_def_cfa] = OP2("DW_CFA_def_cfa", CFI_OPK_REG, CFI_OPK_ULEB),
	[DW_CFA_def_cfa_register] =
		OP1("DW_CFA_def_cfa_register", CFI_OPK_REG),
	[DW_CFA_def_cfa_offset] = OP1("DW_CFA_def_cfa_offset", CFI_OPK_ULEB),
	[DW_CFA_def_cfa_expression] =
		OP1("DW_CFA_def_cfa_expression", CFI_OPK_BLOCK),
	[DW_CFA_expression] =
		OP2("DW_CFA_expression", CFI_OPK_REG, CFI_OPK_BLOCK),
	[DW_CFA_offset_extended_sf] =
		OP2("DW_CFA_offset_extended_sf", CFI_OPK_REG, CFI_OPK_SLEB),
	[DW_CFA_def_cfa_sf] =
		OP2("DW_CFA_def_cfa_sf", CFI_OPK_REG, CFI_OPK_SLEB),
	[DW_CFA_def_cfa_offset_sf] =
		OP1("DW_CFA_def_cfa_offset_sf", CFI_OPK_SLEB),
	[DW_CFA_val_offset] =
		OP2("DW_CFA_val_offset", CFI_OPK_REG, CFI_OPK_ULEB),
	[DW_CFA_val_offset_sf] =
		OP2("DW_CFA_val_offset_sf", CFI_OPK_REG, CFI_OPK_SLEB),
	[DW_CFA_val_expression] =
		OP2("DW_CFA_val_expression", CFI_OPK_REG, CFI_OPK_BLOCK),
	[DW_CFA_MIPS_advance_loc8] =
		OP1("DW_CFA_MIPS_advance_loc8", CFI_OPK_U64),
	[DW_CFA_AARCH64_negate_ra_state_with_pc] =
		OP0("DW_CFA_AARCH64_negate_ra_state_with_pc"),
	[DW_CFA_AARCH64_negate_ra_state] =
		OP0("DW_CFA_AARCH64_negate_ra_state"),
	[DW_CFA_GNU_args_size] = OP1("DW_CFA_GNU_args_size", CFI_OPK_ULEB),
	[DW_CFA_GNU_negative_offset_extended] =
		OP2("DW_CFA_GNU_negative_offset_extended", CFI_OPK_REG,
		    CFI_OPK_ULEB),
};

/* Primary opcodes, by the top two bits. */
static const cfi_opinfo primary_ops[4] = {
	[1] = OP1("DW_CFA_advance_loc", CFI_OPK_LOW6),
	[2] = OP2("DW_CFA_offset", CFI_OPK_LOW6, CFI_OPK_ULEB),
	[3] = OP1("DW_CFA_restore", CFI_OPK_LOW6),
};

const cfi_opinfo *cfi_op_info(uint8_t op)
{
	if (op >> 6)
		return &primary_ops[op >> 6];
	return &ext_ops[op];
}

/* Read one operand of kind k into *v (BLOCK fills the block fields). */
static e2s_err read_operand(br_t *r, cfi_opk k, uint8_t opbyte,
			    const cfi_cie *cie, const cfi_ptr_ctx *pc,
			    cfi_insn *in, uint64_t *v)
{
	switch (k) {
	case CFI_OPK_LOW6: *v = opbyte & 0x3f; break;
	case CFI_OPK_REG:
	case CFI_OPK_ULEB: *v = br_uleb(r); break;
	case CFI_OPK_SLEB: *v = (uint64_t)br_sleb(r); break;
	case CFI_OPK_U8: *v = br_u8(r); break;
	case CFI_OPK_U16: *v = br_u16(r); break;
	case CFI_OPK_U32: *v = br_u32(r); break;
	case CFI_OPK_U64: *v = br_u64(r); break;
	case CFI_OPK_ADDR:
		return cfi_read_pointer(r, pc, cie->fde_enc, true, v, NULL);
	case CFI_OPK_BLOCK: {
		uint64_t n = br_uleb(r);
		if (!br_ok(r))
			break;
		if (n > br_left(r)) {
			br_set_error(r, E2S_ERR_TRUNCATED);
			break;
		}
		in->blk_off = (uint32_t)r->pos;
		in->blk_len = (uint32_t)n;
		br_skip(r, (size_t)n);
		break;
	}
	default: break;
	}
	return br_ok(r) ? E2S_ERR_OK : r->err;
}

bool cfi_dec_next(cfi_dec *d, cfi_insn *in, e2s_err *err, uint64_t *err_off)
{
	br_t *r = &d->r;
	size_t at = r->pos;
	uint8_t opbyte;
	*err = E2S_ERR_OK;
	if (!br_ok(r)) {
		*err_off = r->err_pos;
		*err = r->err;
		return false;
	}
	if (br_at_end(r))
		return false;
	opbyte = br_u8(r);
	const cfi_opinfo *oi = cfi_op_info(opbyte);
	*err_off = at;
	if (!oi->name) {
		*err = E2S_ERR_BAD_OPCODE;
		return false;
	}
	in->op = opbyte >> 6 ? (uint8_t)(opbyte & 0xc0) : opbyte;
	in->off = (uint32_t)at;
	in->a = in->b = 0;
	in->blk_off = in->blk_len = 0;
	e2s_err e = read_operand(r, oi->opnd[0], opbyte, d->cie, d->pc, in,
				 &in->a);
	if (e == E2S_ERR_OK)
		e = read_operand(r, oi->opnd[1], opbyte, d->cie, d->pc, in,
				 &in->b);
	if (e != E2S_ERR_OK) {
		/* The opcode's offset, as the array decoder reported. */
		*err = e;
		return false;
	}
	return true;
}
