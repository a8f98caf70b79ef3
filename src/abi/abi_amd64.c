/* AMD64 (x86-64 psABI 3.6.2 DWARF register mapping; SFrame spec 2.1,
 * 3.1 and the values binutils 2.47's sframe.h gives, seeds/README.md). */
#include <elf.h>

#include "abi.h"

const abi_desc abi_amd64 = {
	.name = "amd64",
	.id = ABI_AMD64,
	.e_machine = EM_X86_64,
	/* rbp 6, rsp 7; column 16 is the return address, which a DWARF
	 * reader also takes as the PC. */
	.sp = 7, .fp = 6, .ra = 16, .max_reg = 130, .pc = 16,
	.ra_sign = ABI_NO_REG,
	.r_pc32 = R_X86_64_PC32, .r_pc64 = R_X86_64_PC64,
	.r_abs32 = R_X86_64_32, .r_abs32s = R_X86_64_32S,
	.r_abs64 = R_X86_64_64,
	.sframe_abi_le = 3, /* SFRAME_ABI_AMD64_ENDIAN_LITTLE */
	.sframe_abi_be = 0,
	.fixed_fp_off = 0,  /* FP is tracked per FRE */
	.fixed_ra_off = -8, /* RA always at CFA - 8 */
	.sp_val_off = 0,
	.cfa_adjust = 0, .cfa_align = 1,
	.ra_form = ABI_RA_FIXED,
	.v2_regnum_words = false,
	.plt_block = 16, /* GNU ld's .plt/.plt.sec CFA expression */
	.mapping_symbols = false,
};
