/* SFrame Version 3 on-disk constants (spec sections 2 and 3).
 * Field tables live in the spec; names here follow its macro names with
 * an SF_ prefix. Values the V3 text leaves implicit come from binutils
 * 2.46/2.47 sframe.h (see shared/seeds/README.md). */
#ifndef E2S_SFRAME_FMT_H
#define E2S_SFRAME_FMT_H

#define SF_MAGIC 0xdee2
#define SF_VERSION_2 2
#define SF_VERSION_3 3

#define SF_F_FDE_SORTED 0x1
#define SF_F_FRAME_POINTER 0x2 /* V1-V2 only */
#define SF_F_FDE_FUNC_START_PCREL 0x4

/* sfh_abi_arch, the fixed offsets and each ABI's CFA scaling are facts
 * of the ABI's table (src/abi). */

#define SF_HEADER_SIZE 28   /* sframe_header, no auxiliary header */
#define SF_FDE_IDX_SIZE 16  /* int64 start, u32 size, u32 start_fre_off */
#define SF_FDE_ATTR_SIZE 5  /* u16 num_fres, u8 info, u8 info2, u8 rep */

/* Version 2 (spec 1.2, binutils sframe.h sframe_func_desc_entry_v2): one
 * 20-byte FDE per function, no attribute in the FRE sub-section:
 * int32 start, u32 size, u32 start_fre_off, u32 num_fres, u8 info (the
 * V3 sfda_func_info without the signal bit), u8 rep_size, u16 padding. */
#define SF_V2_FDE_SIZE 20
/* V2 s390x: an odd RA/FP offset word is a DWARF register number << 1
 * (V3 uses flexible FDEs instead). */
#define SF_V2_S390X_OFFSET_IS_REGNUM(w) ((w) & 1)
#define SF_V2_S390X_OFFSET_ENCODE_REGNUM(r) (((int32_t)(r) << 1) | 1)
#define SF_V2_S390X_OFFSET_DECODE_REGNUM(w) ((w) >> 1)

/* sfda_func_info */
#define SF_FUNC_INFO(signal, pauth_b, pctype, fretype)                   \
	((unsigned)(((signal) ? 0x80 : 0) | ((pauth_b) ? 0x20 : 0) |      \
		    ((pctype) ? 0x10 : 0) | ((fretype) & 0xf)))
#define SF_FUNC_INFO_SIGNAL_P(i) (((i) >> 7) & 1)
#define SF_FUNC_INFO_PAUTH_B_P(i) (((i) >> 5) & 1)
#define SF_FUNC_INFO_PCTYPE(i) (((i) >> 4) & 1)
#define SF_FUNC_INFO_FRETYPE(i) ((i) & 0xf)
/* sfda_func_info2 */
#define SF_FUNC_INFO2_FDETYPE(i) ((i) & 0x1f)

#define SF_FDE_PCTYPE_INC 0
#define SF_FDE_PCTYPE_MASK 1
#define SF_FDE_TYPE_DEFAULT 0
#define SF_FDE_TYPE_FLEX 1

#define SF_FRE_TYPE_ADDR1 0
#define SF_FRE_TYPE_ADDR2 1
#define SF_FRE_TYPE_ADDR4 2

/* FRE info byte: mangled_ra(7) dataword_size(6-5) dataword_count(4-1)
 * cfa_base_reg_id(0). The spec does not give the id values; binutils
 * sframe.h has SFRAME_BASE_REG_FP 0 and SFRAME_BASE_REG_SP 1 (gas writes
 * 0x05 for CFA=sp+16 with FP saved, 0x04 for fp+16), so bit 0 is SET for
 * an SP-based CFA. Flexible FDEs and RA-undefined FREs write 0 there. */
#define SF_BASE_REG_FP 0
#define SF_BASE_REG_SP 1
#define SF_FRE_INFO(base_fp, count, dwsize, mangled)                     \
	((unsigned)(((mangled) ? 0x80 : 0) | (((dwsize) & 3) << 5) |       \
		    (((count) & 0xf) << 1) | ((base_fp) ? 0 : 1)))
/* Raw bit-0 value; flexible FDEs carry 0 here and ignore it. */
#define SF_FRE_INFO_BASE_ID(i) ((i) & 1)
#define SF_FRE_INFO_BASE_FP_P(i) (((i) & 1) == SF_BASE_REG_FP)
#define SF_FRE_INFO_COUNT(i) (((i) >> 1) & 0xf)
#define SF_FRE_INFO_DWSIZE(i) (((i) >> 5) & 3)
#define SF_FRE_INFO_MANGLED_P(i) (((i) >> 7) & 1)
#define SF_FRE_DATAWORD_1B 0
#define SF_FRE_DATAWORD_2B 1
#define SF_FRE_DATAWORD_4B 2
#define SF_FRE_MAX_DATAWORDS 15

#define SF_FRE_RA_OFFSET_INVALID 0

/* Flexible FDE control word (spec 3.2): regnum << 3 | deref_p << 1 | reg_p.
 * binutils calls these SFRAME_V3_FLEX_FDE_CTRLWORD_*. */
#define SF_FLEX_CTRL(regnum, deref, reg)                                 \
	((((unsigned)(regnum)) << 3) | ((deref) ? 2u : 0u) | ((reg) ? 1u : 0u))
#define SF_FLEX_CTRL_REGNUM(w) ((unsigned)(w) >> 3)
#define SF_FLEX_CTRL_DEREF_P(w) (((w) >> 1) & 1)
#define SF_FLEX_CTRL_REG_P(w) ((w) & 1)

/* ELF values not in Debian 12's elf.h. */
#ifndef SHT_GNU_SFRAME
#define SHT_GNU_SFRAME 0x6ffffff4
#endif
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME 0x6474e554
#endif

#endif
