/* AArch64 (AAPCS64 DWARF register mapping; SFrame spec 2.1, 3.1). */
#include <elf.h>

#include "abi.h"

const abi_desc abi_aarch64 = {
	.name = "aarch64",
	.id = ABI_AARCH64,
	.e_machine = EM_AARCH64,
	/* x29 fp, x30 lr, sp 31; RA_SIGN_STATE is 34. */
	.sp = 31, .fp = 29, .ra = 30, .max_reg = 127, .pc = ABI_NO_REG,
	.ra_sign = 34,
	.r_pc32 = R_AARCH64_PREL32, .r_pc64 = R_AARCH64_PREL64,
	.r_abs32 = R_AARCH64_ABS32, .r_abs32s = 0,
	.r_abs64 = R_AARCH64_ABS64,
	.sframe_abi_le = 2, /* SFRAME_ABI_AARCH64_ENDIAN_LITTLE */
	.sframe_abi_be = 1, /* SFRAME_ABI_AARCH64_ENDIAN_BIG */
	.fixed_fp_off = 0, .fixed_ra_off = 0,
	.sp_val_off = 0,
	.cfa_adjust = 0, .cfa_align = 1,
	/* Word 2 is RA, so FP cannot come without RA (gas skips such
	 * functions too: "FP without RA on stack"). */
	.ra_form = ABI_RA_WORD,
	.v2_regnum_words = false,
	.plt_block = 0,
	.mapping_symbols = true,
};
