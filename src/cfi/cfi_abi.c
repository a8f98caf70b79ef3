/* Per-ABI DWARF register numbers (psABI DWARF register mappings). */
#include <elf.h>

#include "cfi.h"

static const cfi_abi_regs abis[] = {
	[CFI_ABI_UNKNOWN] = {"unknown", 0, 0, 0, 0xffff},
	/* AMD64 psABI: rbp 6, rsp 7, return address column 16. */
	[CFI_ABI_AMD64] = {"amd64", 7, 6, 16, 130},
	/* AAPCS64 DWARF: x29 fp, x30 lr, sp 31; RA_SIGN_STATE is 34. */
	[CFI_ABI_AARCH64] = {"aarch64", 31, 29, 30, 127},
	/* s390x ELF ABI: r11 fp, r14 ra, r15 sp; f0-f15 are 16-31. */
	[CFI_ABI_S390X] = {"s390x", 15, 11, 14, 65},
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
