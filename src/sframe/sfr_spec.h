/* The SFrame layout as the reading side sees it: the reader (sfr_*.c)
 * and the verifier (src/verify) take every offset, size, bit position and
 * code from here, written from the spec's own tables (sections 2 and 3;
 * seeds/README.md for the values the V3 text leaves implicit). The writer
 * has its own header (sframe_fmt.h), which nothing on this side includes:
 * a misreading of the format in one of the two shows up as a --verify
 * failure instead of being shared by the code that judges the output. */
#ifndef E2S_SFR_SPEC_H
#define E2S_SFR_SPEC_H

#include <elf.h>
#include <stdbool.h>
#include <stdint.h>

/* Field f of a bit-field byte or word, as the spec's "Bit offset" columns
 * give it: lowest bit lsb, width bits wide. */
static inline uint32_t sfr_bits(uint32_t v, unsigned lsb, unsigned width)
{
	return (v >> lsb) & (((uint32_t)1 << width) - 1);
}

/* 2.1 preamble: sfp_magic is 0xdee2 in the target's byte order, so its
 * first byte tells the order (2.1.1). */
enum {
	SFR_MAGIC_HI = 0xde,
	SFR_MAGIC_LO = 0xe2,
	SFR_VERSION_1 = 1, /* obsolete, not decoded */
	SFR_VERSION_2 = 2,
	SFR_VERSION_3 = 3,
};

/* 2.1.3 sfp_flags, by the versions that define them. */
enum {
	SFR_FLAG_FDE_SORTED = 0x1,        /* all */
	SFR_FLAG_FRAME_POINTER = 0x2,     /* 1-2 */
	SFR_FLAG_START_PCREL = 0x4,       /* 2-3 */
};

/* 2.2.1 sfh_abi_arch. */
enum {
	SFR_ABI_AARCH64_BE = 1,
	SFR_ABI_AARCH64_LE = 2,
	SFR_ABI_AMD64_LE = 3,
	SFR_ABI_S390X_BE = 4,
};

/* 2.2 sframe_header: 4-byte preamble; abi, fixed FP and RA offsets,
 * auxiliary header length (u8 each); num_fdes, num_fres, fre_len, fdeoff,
 * freoff (u32 each). The auxiliary header follows it. */
enum { SFR_HEADER_LEN = 4 + 4 * 1 + 5 * 4 };

/* 2.3.1 sframe_func_desc_idx: i64 start offset, u32 size, u32 offset of
 * the function's attribute in the FRE sub-section. */
enum { SFR_FDE_INDEX_LEN = 8 + 4 + 4 };

/* 2.3.2 sframe_func_desc_attr, at the front of each function's FREs:
 * u16 num_fres, u8 info, u8 info2, u8 rep_size. */
enum { SFR_FDE_ATTR_LEN = 2 + 1 + 1 + 1 };

/* Version 2 (spec 1.2): one FDE entry holding what V3 splits in two:
 * i32 start, u32 size, u32 fre offset, u32 num_fres, u8 info, u8
 * rep_size, 2 bytes of padding; no attribute before the FREs. */
enum { SFR_V2_FDE_LEN = 4 + 4 + 4 + 4 + 1 + 1 + 2 };

/* 2.3.3 sfda_func_info, MSB to LSB: signal_p (7), unused (6),
 * pauth_key (5), fde_pctype (4), fre_type (3-0). V2 had no signal_p. */
static inline bool sfr_info_signal_p(uint32_t i) { return sfr_bits(i, 7, 1); }
static inline bool sfr_info_pauth_b_p(uint32_t i) { return sfr_bits(i, 5, 1); }
static inline unsigned sfr_info_pctype(uint32_t i) { return sfr_bits(i, 4, 1); }
static inline unsigned sfr_info_fretype(uint32_t i) { return sfr_bits(i, 0, 4); }
/* sfda_func_info2: unused (7-5), fde_type (4-0). */
static inline unsigned sfr_info2_fdetype(uint32_t i) { return sfr_bits(i, 0, 5); }

enum { /* 2.3.3.1 PC types */
	SFR_PCTYPE_INC = 0,
	SFR_PCTYPE_MASK = 1,
};
enum { /* 2.3.3.2 FDE types */
	SFR_FDETYPE_DEFAULT = 0,
	SFR_FDETYPE_FLEX = 1,
};
enum { /* 2.3.3.3 FRE types: width of sfre_start_address */
	SFR_FRETYPE_ADDR1 = 0,
	SFR_FRETYPE_ADDR2 = 1,
	SFR_FRETYPE_ADDR4 = 2,
};

/* 2.4.1 FRE info byte, MSB to LSB: fre_mangled_ra_p (7),
 * fre_dataword_size (6-5), fre_dataword_count (4-1),
 * fre_cfa_base_reg_id (0). */
static inline bool sfr_fre_mangled_p(uint32_t i) { return sfr_bits(i, 7, 1); }
static inline unsigned sfr_fre_dwsize(uint32_t i) { return sfr_bits(i, 5, 2); }
static inline unsigned sfr_fre_dwcount(uint32_t i) { return sfr_bits(i, 1, 4); }
/* The V3 text names no values for the base register id; the reference
 * implementation writes 1 for SP and 0 for FP (gas: 0x05 for CFA=sp+16
 * with FP saved, 0x04 for fp+16). */
static inline bool sfr_fre_cfa_fp_p(uint32_t i) { return sfr_bits(i, 0, 1) == 0; }

enum { /* fre_dataword_size codes: words of 1 << code bytes */
	SFR_DW_1B = 0,
	SFR_DW_2B = 1,
	SFR_DW_4B = 2,
};

/* 3.2 flexible FDE control data word, LSB to MSB: reg_p (0), deref_p
 * (1), unused (2), regnum (3 and up). 0 is the padding word. */
static inline bool sfr_ctl_reg_p(uint32_t w) { return sfr_bits(w, 0, 1); }
static inline bool sfr_ctl_deref_p(uint32_t w) { return sfr_bits(w, 1, 1); }
static inline bool sfr_ctl_unused_p(uint32_t w) { return sfr_bits(w, 2, 1); }
static inline unsigned sfr_ctl_regnum(uint32_t w) { return w >> 3; }

/* Values the V3 text uses without giving them (seeds/README.md). */
enum {
	SFR_RA_OFFSET_INVALID = 0, /* an RA data word of 0: no RA slot */
	SFR_AMD64_FIXED_RA = -8,   /* sfh_cfa_fixed_ra_offset on AMD64 */
};

/* 3.1.3 s390x: a CFA offset word w means w * 8 + 160 (the V2 helper
 * names' "adjustment" and "alignment factor"); the caller's SP is
 * CFA - 160. */
enum {
	SFR_S390X_CFA_SCALE = 8,
	SFR_S390X_CFA_BIAS = 160,
	SFR_S390X_SP_FROM_CFA = -160,
};
static inline int64_t sfr_s390x_cfa_off(int64_t w)
{
	return w * SFR_S390X_CFA_SCALE + SFR_S390X_CFA_BIAS;
}

/* V2 s390x: an odd RA/FP word is not a stack offset but a DWARF
 * register number, shifted up past that low bit. */
static inline bool sfr_v2_s390x_reg_p(int64_t w) { return (w & 1) != 0; }
static inline unsigned sfr_v2_s390x_regnum(int64_t w) { return (unsigned)(w >> 1); }

/* ELF: the section type and segment type of SFrame data. */
enum {
	SFR_SHT_GNU_SFRAME = 0x6ffffff4,
	SFR_PT_GNU_SFRAME = 0x6474e554,
};

/* The reader's own relocation types for a start field of an object's
 * .sframe (psABIs): PC-relative, 64-bit for V3, 32-bit for V2; anything
 * else is counted, not applied. */
#ifndef R_390_PC64
#define R_390_PC64 23
#endif
#ifndef R_390_PC32
#define R_390_PC32 5
#endif
static inline bool sfr_pcrel_type(unsigned machine, unsigned t)
{
	switch (machine) {
	case EM_X86_64: return t == R_X86_64_PC64 || t == R_X86_64_PC32;
	case EM_AARCH64: return t == R_AARCH64_PREL64 || t == R_AARCH64_PREL32;
	case EM_S390: return t == R_390_PC64 || t == R_390_PC32;
	default: return false;
	}
}

#endif
