/* SFrame reader: decodes .sframe bytes (untrusted) into plain tables and
 * recovers symbolic unwind rules exactly as spec Appendix A describes.
 * Deliberately independent of the encoder (sfe.h): it shares only the
 * on-disk constants of sframe_fmt.h, so --verify checks the encoder
 * against the spec rather than against itself. */
#ifndef E2S_SFR_H
#define E2S_SFR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../common/err.h"

#define SFR_MAX_DW 6 /* most data words a valid FRE of a known ABI has */

typedef struct {
	uint32_t start;      /* sfre_start_address */
	uint8_t info;        /* raw FRE info byte */
	uint8_t ndw;         /* data word count */
	uint8_t dwbytes;     /* 1, 2 or 4 */
	uint8_t pad_;
	uint32_t raw[SFR_MAX_DW]; /* data words, zero-extended */
	uint64_t sec_off;    /* section offset of the FRE */
} sfr_fre;

typedef struct {
	uint64_t pc;          /* absolute function start */
	int64_t start_field;  /* raw sfdi_func_start_offset */
	uint64_t field_off;   /* section offset of that field */
	uint32_t size;
	uint32_t fre_off;     /* sfdi_func_start_fre_off */
	uint16_t nfres;
	uint8_t info, info2, rep_size;
	uint8_t fre_type, pc_type, fde_type;
	bool signal, pauth_b;
	uint32_t fre_first;   /* into sfr_section.fres */
	uint32_t block;       /* into sfr_section.blocks */
} sfr_fde;

typedef struct {
	uint64_t off, size;   /* where this block is in the section */
	bool big_endian;
	uint8_t version, flags, abi;
	int8_t fixed_fp, fixed_ra;
	uint8_t auxhdr_len;
	uint32_t nfdes, nfres, fre_len, fdeoff, freoff;
	uint32_t fde_first;   /* into sfr_section.fdes */
} sfr_block;

typedef struct {
	uint64_t vaddr;       /* section address used for PC-relative starts */
	sfr_block *blocks;
	size_t nblocks;
	sfr_fde *fdes;        /* block after block, each in stored order */
	size_t nfdes;
	sfr_fre *fres;
	size_t nfres;
	uint32_t *by_pc;      /* fde indices sorted by pc (for lookups) */
} sfr_section;

/* Decode data[0..size) located at vaddr. One or more SFrame blocks (ld.lld
 * concatenates input .sframe sections); zero padding up to 8-byte
 * alignment between blocks is skipped. Every bound is checked; any
 * violation fails with E2S_ERR_BAD_SFRAME (or SFRAME_VERSION) and the
 * offset of the problem. */
e2s_err sfr_decode(const uint8_t *data, size_t size, uint64_t vaddr,
		   sfr_section *out, e2s_diag *diag);
void sfr_free(sfr_section *s);

/* The ABI/arch of a block; 0 if not one of the four known ids. */
unsigned sfr_block_abi(const sfr_block *b);

/* Signed / unsigned data word i of an FRE. */
int64_t sfr_dw(const sfr_fre *f, unsigned i);

/* Find the FDE and FRE covering pc. false if none. */
bool sfr_find_fre(const sfr_section *s, uint64_t pc, size_t *fde_idx,
		  size_t *fre_idx);

/* ---- Recovery (Appendix A) ------------------------------------------ */

enum {
	SFR_LOC_UNCHANGED = 0, /* value is the callee's current value */
	SFR_LOC_RULE,          /* value = [*](base + off) */
};

typedef struct {
	uint8_t kind;
	bool base_cfa;  /* base is the CFA (else register reg) */
	bool deref;     /* value = *(base + off) */
	bool fixed;     /* came from the header's fixed offset */
	uint16_t reg;   /* DWARF register number when !base_cfa */
	int64_t off;
} sfr_loc;

typedef struct {
	bool outermost;      /* RA undefined: 0 data words */
	bool flex;
	bool mangled;        /* RA signed (AArch64) */
	/* CFA = [*](reg + off) */
	uint16_t cfa_reg;    /* DWARF register number */
	bool cfa_deref;
	int64_t cfa_off;
	int64_t sp_off;      /* caller SP = CFA + sp_off (s390x -160) */
	sfr_loc ra, fp;
} sfr_rules;

/* Rules of fre (of fde). Fails (E2S_ERR_BAD_SFRAME) on a word layout the
 * spec does not define for the ABI / FDE type. */
e2s_err sfr_recover(const sfr_section *s, const sfr_fde *fde,
		    const sfr_fre *fre, sfr_rules *out, e2s_diag *diag);

/* DWARF register numbers of SP and FP for an SFrame ABI id. */
bool sfr_abi_regs(unsigned abi, uint16_t *sp, uint16_t *fp);

/* ---- Printing (sfr_dump.c) ------------------------------------------ */

/* objdump --sframe style text of s. */
void sfr_dump(FILE *out, const sfr_section *s);
/* Format a location like objdump: "c-16", "u", "f", "*(r10-8)". */
void sfr_loc_str(const sfr_loc *l, char *buf, size_t len);

/* ---- ELF access (sfr_elf.c) ----------------------------------------- */

/* Read the .sframe of an ELF file: section SHT_GNU_SFRAME or named
 * .sframe, else the PT_GNU_SFRAME segment. *data is malloc'ed. */
e2s_err sfr_read_elf(const char *path, uint8_t **data, size_t *size,
		     uint64_t *vaddr, e2s_diag *diag);

#endif
