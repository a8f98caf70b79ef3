/* Per-ABI DWARF register numbers (psABI DWARF register mappings). */
#include <elf.h>

#include "cfi.h"

static const cfi_abi_regs abis[] = {
	[CFI_ABI_UNKNOWN] = {"unknown", 0, 0, 0, 0xffff, CFI_NO_REG, CFI_NO_REG,
			     0, 0, 0, 0, 0},
	/* AMD64 psABI: rbp 6, rsp 7, return address column 16 (which a
	 * DWARF reader also takes as the PC). */
	[CFI_ABI_AMD64] = {"amd64", 7, 6, 16, 130, 16, CFI_NO_REG,
			   R_X86_64_PC32, R_X86_64_PC64, R_X86_64_32,
			   R_X86_64_32S, R_X86_64_64},
	/* AAPCS64 DWARF: x29 fp, x30 lr, sp 31; RA_SIGN_STATE is 34. */
	[CFI_ABI_AARCH64] = {"aarch64", 31, 29, 30, 127, CFI_NO_REG, 34,
			     R_AARCH64_PREL32, R_AARCH64_PREL64,
			     R_AARCH64_ABS32, 0, R_AARCH64_ABS64},
	/* s390x ELF ABI: r11 fp, r14 ra, r15 sp; f0-f15 are 16-31. */
	[CFI_ABI_S390X] = {"s390x", 15, 11, 14, 65, CFI_NO_REG, CFI_NO_REG,
			   R_390_PC32, R_390_PC64, R_390_32, 0, R_390_64},
};

const cfi_abi_regs *cfi_abi_info(cfi_abi abi)
{
	if ((unsigned)abi >= sizeof abis / sizeof abis[0])
		abi = CFI_ABI_UNKNOWN;
	return &abis[abi];
}

cfi_abi cfi_abi_from_machine(unsigned e_machine)
{
	switch (e_machine) {
	case EM_X86_64:
		return CFI_ABI_AMD64;
	case EM_AARCH64:
		return CFI_ABI_AARCH64;
	case EM_S390:
		return CFI_ABI_S390X;
	default:
		return CFI_ABI_UNKNOWN;
	}
}
