/* What eh2sframe knows of each ABI, as data: one table per ABI
 * (abi_amd64.c, abi_aarch64.c, abi_s390x.c) that the interpreter, the
 * projection, the encoder and the ELF code read. No code tests which
 * ABI it has: it reads a field. A new ABI is one table here plus tests.
 * The reading side (src/sframe/sfr_*, src/verify) keeps its own
 * description on purpose. */
#ifndef E2S_ABI_H
#define E2S_ABI_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
	ABI_UNKNOWN = 0, /* parse and dump only; no SFrame */
	ABI_AMD64,
	ABI_AARCH64,
	ABI_S390X,
	ABI_COUNT_
} abi_id;

#define ABI_NO_REG 0xffffu

/* How a default FDE (spec 3.1) says the return address. */
typedef enum {
	/* No RA word: RA is always at CFA + fixed_ra_off (AMD64); any
	 * other RA location needs a flexible FDE. */
	ABI_RA_FIXED = 0,
	/* An RA word after the CFA word; FP saved without RA cannot be
	 * said, as the FP word is the third (AArch64). */
	ABI_RA_WORD,
	/* An RA word; FP saved without RA writes RA word 0 ("not saved")
	 * before it (s390x). */
	ABI_RA_WORD_PADDED,
} abi_ra_form;

typedef struct abi_desc {
	const char *name;  /* "amd64", "aarch64", "s390x" */
	abi_id id;
	uint16_t e_machine; /* EM_*; 0: none */

	/* DWARF register numbers (psABI). */
	uint16_t sp, fp, ra;
	uint16_t max_reg;  /* highest register number accepted */
	uint16_t pc;       /* the column a DWARF reader takes as the PC in
	                    * the callee's frame (ABI_NO_REG: none); rules
	                    * based on it are not the PC to an SFrame reader */
	uint16_t ra_sign;  /* RA signing state pseudo-register (ABI_NO_REG:
	                    * none; else the mangled-RA bit, the B-key flag
	                    * and DW_CFA_AARCH64_negate_ra_state exist) */

	/* Relocation types (0: none) of CFI and .sframe fields. */
	uint32_t r_pc32, r_pc64, r_abs32, r_abs32s, r_abs64;

	/* SFrame (spec 2.1, 2.2, 3). */
	uint8_t sframe_abi_le, sframe_abi_be; /* sfh_abi_arch for each byte
	                    * order; 0: SFrame has none for it */
	int8_t fixed_fp_off, fixed_ra_off; /* sfh_cfa_fixed_*_offset; 0: not
	                    * fixed */
	int16_t sp_val_off; /* the caller's SP is CFA + this */
	int16_t cfa_adjust; /* a CFA offset word holds (off - cfa_adjust) / */
	uint8_t cfa_align;  /* cfa_align (1: the offset itself) */
	uint8_t ra_form;    /* abi_ra_form */
	/* SFrame V2 has no flexible FDE; on this ABI a register-held RA or
	 * FP is an odd data word (regnum << 1 | 1) in a default FDE. */
	bool v2_regnum_words;
	/* Linker PLTs: a CFA expression sp + 8 + ((pc & (plt_block - 1))
	 * >= K) << 3 becomes a PC-mask FDE of plt_block-byte blocks (0: the
	 * expression is not taken). */
	uint8_t plt_block;

	/* ELF: local symbols that mark code/data inside sections (AArch64
	 * mapping symbols $d, $x) and are never referred to by code. */
	bool mapping_symbols;
} abi_desc;

/* The table of an ABI (ABI_UNKNOWN's for any value out of range). */
const abi_desc *abi_get(abi_id id);
/* The ABI of an ELF e_machine, ABI_UNKNOWN's table if none. */
const abi_desc *abi_of_machine(unsigned e_machine);
/* Does SFrame describe this ABI (some byte order has an ABI id)? */
static inline bool abi_has_sframe(const abi_desc *a)
{
	return a->sframe_abi_le || a->sframe_abi_be;
}
/* sfh_abi_arch for big_endian (0: none). */
static inline unsigned abi_sframe_id(const abi_desc *a, bool big_endian)
{
	return big_endian ? a->sframe_abi_be : a->sframe_abi_le;
}

extern const abi_desc abi_amd64, abi_aarch64, abi_s390x;

#endif
