/* s390x (s390x ELF ABI DWARF register mapping; SFrame spec 2.1, 3.1 and
 * binutils 2.47's sframe.h, seeds/README.md). */
#include <elf.h>

#include "abi.h"

const abi_desc abi_s390x = {
	.name = "s390x",
	.id = ABI_S390X,
	.e_machine = EM_S390,
	/* r11 fp, r14 ra, r15 sp; f0-f15 are 16-31. */
	.sp = 15, .fp = 11, .ra = 14, .max_reg = 65, .pc = ABI_NO_REG,
	.ra_sign = ABI_NO_REG,
	.r_pc32 = R_390_PC32, .r_pc64 = R_390_PC64,
	.r_abs32 = R_390_32, .r_abs32s = 0, .r_abs64 = R_390_64,
	.sframe_abi_le = 0,
	.sframe_abi_be = 4, /* SFRAME_ABI_S390X_ENDIAN_BIG */
	.fixed_fp_off = 0, .fixed_ra_off = 0,
	/* The CFA is the caller's SP + 160 (the register save area);
	 * CFA words hold (off - 160) / 8, in flexible FDEs too
	 * (interoperability with gas/libsframe 2.47, seeds/README.md). */
	.sp_val_off = -160,
	.cfa_adjust = 160, .cfa_align = 8,
	/* RA word 0 means "RA not saved": FP alone is padded with it. */
	.ra_form = ABI_RA_WORD_PADDED,
	.v2_regnum_words = true,
	.plt_block = 0,
	.mapping_symbols = false,
};
