/* SFrame reader: decodes .sframe bytes (untrusted) into plain tables and
 * recovers symbolic unwind rules exactly as spec Appendix A describes.
 * Deliberately independent of the encoder (sfe.h): not even the on-disk
 * constants are shared (the reader's are in sfr_spec.h, the writer's in
 * sframe_fmt.h), so --verify checks the encoder against the spec rather
 * than against itself. */
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
	uint32_t nfres;       /* u16 in V3, u32 in V2 */
	uint32_t shndx;       /* ET_REL: section of the function (st_shndx
	                       * of the relocation's symbol); 0 if linked */
	uint8_t info, info2, rep_size; /* V2: info2 = 0 */
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
	uint32_t part;        /* which input part (elfr_sframe) holds it */
} sfr_block;

typedef struct {
	uint64_t vaddr;       /* section address used for PC-relative starts */
	bool relocatable;     /* function starts from relocations (ET_REL) */
	sfr_block *blocks;
	size_t nblocks;
	sfr_fde *fdes;        /* block after block, each in stored order */
	size_t nfdes;
	sfr_fre *fres;
	size_t nfres;
	uint32_t *by_pc;      /* fde indices sorted by (shndx, pc) */
} sfr_section;

/* ET_REL: what the relocation of one function start field says. */
typedef struct {
	uint64_t off;         /* offset of the field in the decoded bytes */
	uint32_t shndx;       /* st_shndx of the symbol */
	uint64_t value;       /* symbol value + addend: section offset */
} sfr_relfield;

/* Decode data[0..size) located at vaddr. One or more SFrame blocks (ld.lld
 * concatenates input .sframe sections); zero padding up to 8-byte
 * alignment between blocks is skipped. Every bound is checked; any
 * violation fails with E2S_ERR_BAD_SFRAME (or SFRAME_VERSION) and the
 * offset of the problem. */
e2s_err sfr_decode(const uint8_t *data, size_t size, uint64_t vaddr,
		   sfr_section *out, e2s_diag *diag);
/* The same for relocatable bytes: every FDE's start comes from the
 * relfield (sorted by off) at its start field: pc = value, shndx. A field
 * without one keeps its raw value and gets shndx 0 (SHN_UNDEF). */
e2s_err sfr_decode_rel(const uint8_t *data, size_t size,
		       const sfr_relfield *rf, size_t nrf, sfr_section *out,
		       e2s_diag *diag);
void sfr_free(sfr_section *s);

/* The ABI/arch of a block; 0 if not one of the four known ids. */
unsigned sfr_block_abi(const sfr_block *b);

/* Signed / unsigned data word i of an FRE. */
int64_t sfr_dw(const sfr_fre *f, unsigned i);

/* Find the FDE and FRE covering pc (shndx 0: linked files). */
bool sfr_find_fre(const sfr_section *s, uint64_t pc, size_t *fde_idx,
		  size_t *fre_idx);
/* The same for pc in section shndx of a relocatable file. */
bool sfr_find_fre_sec(const sfr_section *s, uint32_t shndx, uint64_t pc,
		      size_t *fde_idx, size_t *fre_idx);

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

/* ---- Sections (sfr_decode.c) ------------------------------------------ */

/* What an ELF section is to SFrame readers and writers. Consumers find
 * .sframe by name in relocatable objects, so a name alone must not make
 * us read, rebuild or drop a section: it is SFrame by type, or, for the
 * SHT_PROGBITS .sframe of assemblers older than SHT_GNU_SFRAME, by its
 * header. */
typedef enum {
	SFR_SEC_NONE = 0,     /* neither SFrame nor named .sframe */
	SFR_SEC_SFRAME,       /* SHT_GNU_SFRAME, or SHT_PROGBITS .sframe
	                       * with the SFrame magic and a version 1-3 */
	SFR_SEC_PLACEHOLDER,  /* SHT_NOBITS .sframe: a separate debug file's
	                       * header of the stripped file's section */
	SFR_SEC_FOREIGN,      /* any other section named .sframe */
} sfr_sec_kind;

/* Classify a section from its header and (when not NOBITS) its bytes;
 * name may be NULL, data may be NULL when size is 0. */
sfr_sec_kind sfr_section_kind(uint32_t type, const char *name,
			      const uint8_t *data, size_t size);

#endif
