/* Internal interfaces of the verifier (src/verify). Nothing here is
 * shared with the converter: the verifier reads CIE/FDE records through
 * cfi_parse_records and .sframe bytes through sfr_decode (byte reading
 * and record framing), and does its own CFI walk, expression evaluation,
 * SFrame interpretation (spec Appendix A) and comparison. The SFrame
 * layout it reads by is the reader's own (sfr_spec.h), never the
 * writer's sframe_fmt.h. */
#ifndef E2S_VF_INT_H
#define E2S_VF_INT_H

#include "../elf/elfr_cfi.h"
#include "../common/mem.h"
#include "../elf/elfr_sframe.h"
#include "vf.h"
#include "vf_val.h"

/* Room for element n of a growable array *p of capacity *cap. */
static inline bool vf_room(void **p, size_t n, size_t *cap, size_t elem,
			   size_t first)
{
	e2s_vec v = {n, *cap};
	if (!e2s_vec_grow(p, &v, elem, first))
		return false;
	*cap = v.cap;
	return true;
}

/* ---- The ABI as the verifier sees it ---------------------------------- */

typedef struct {
	int abi;            /* abi_id */
	uint16_t sp, fp, ra; /* DWARF numbers of SP, FP and the RA register */
	int64_t sp_val_off; /* caller SP = CFA + this (s390x -160) */
	bool pc_is_reg16;   /* AMD64: DWARF register 16 reads as the PC */
	bool has_flex;      /* flexible FDEs usable (AMD64, s390x) */
	uint16_t max_reg;   /* highest DWARF register number the ABI's
	                     * mapping defines; CFI naming a higher one is
	                     * malformed */
	uint8_t sframe_le, sframe_be; /* sfh_abi_arch per byte order (0:
	                     * none; sfr_spec.h) */
} vf_abi;

bool vf_abi_init(int abi, vf_abi *out);

/* ---- DWARF: rules per row (vf_dwarf.c) -------------------------------- */

enum { /* rule kinds */
	VR_UNSPEC = 0,
	VR_UNDEF,
	VR_SAME,
	VR_OFFSET,   /* saved at CFA + off */
	VR_VALOFF,   /* value CFA + off */
	VR_REG,      /* value in register reg */
	VR_EXPR,     /* saved at the address expr computes (CFA pushed) */
	VR_VALEXPR,  /* value expr computes (CFA pushed) */
};

typedef struct {
	uint8_t kind;
	uint8_t held_known;  /* SP column saved (VR_OFFSET, VR_REG): what the
	                      * place holds is known (vf_dwarf.c) */
	uint16_t reg;
	uint32_t expr_off, expr_len;
	int64_t off;
	int64_t held;        /* ... it holds CFA + held */
} vf_rule;

enum { VC_UNSET = 0, VC_REG, VC_EXPR, VC_BROKEN };

typedef struct {
	uint8_t kind;
	uint8_t pad_;
	uint16_t reg;
	uint32_t expr_off, expr_len;
	uint32_t pad2_;
	int64_t off;
} vf_cfarule;

/* The columns that change what SFrame recovers. */
enum { COL_SP, COL_FP, COL_RET, COL_ABIRA, COL_SIGN, VF_NCOL };

typedef struct {
	vf_cfarule cfa;
	vf_rule col[VF_NCOL];
	uint8_t sign_toggle; /* AArch64: negate_ra_state count, mod 2 */
	uint8_t pauth_lr;    /* AArch64: negate_ra_state_with_pc seen */
	uint8_t pad_[6];
} vf_state;

typedef struct {
	uint64_t start, end;
	vf_state st;
} vf_row;

/* What one FDE's walk gives: rows covering [pc_begin, pc_begin+range). */
typedef struct {
	vf_row *rows;
	size_t nrows, cap;
	uint16_t colreg[VF_NCOL]; /* DWARF register of each column */
	bool sep_abira;           /* return column != ABI RA register */
	char err[120];            /* why the walk failed */
	vf_state stack[64];       /* remember_state */
} vf_walk;

/* Walk FDE fde (CIE program first). false: the CFI cannot be read as
 * DWARF; w->err says why. */
bool vf_walk_fde(const vf_abi *a, const cfi_section *sec, const cfi_table *t,
		 const cfi_fde *fde, vf_walk *w);
void vf_walk_free(vf_walk *w);
/* The row covering pc, or NULL. */
const vf_row *vf_row_at(const vf_walk *w, uint64_t pc);

/* ---- DWARF expressions (vf_expr.c) ------------------------------------ */

typedef struct {
	const vf_abi *a;
	const uint8_t *data; /* section bytes */
	size_t size;
	bool big_endian;
	unsigned addr_size;
	uint64_t pc;         /* the PC the row is evaluated at */
	bool used_pc;        /* set when the value depended on pc */
} vf_eval;

/* The callee's register reg as a value (AMD64 register 16: the PC). */
vf_val vf_regval(vf_eval *e, unsigned reg);
/* Evaluate expr bytes [off, off+len) with push (if non-NULL) on the
 * stack first. OPAQUE when any step has no symbolic form. */
vf_val vf_eval_expr(vf_eval *e, uint32_t off, uint32_t len,
		    const vf_val *push);

/* ---- One frame, unwound from DWARF or SFrame ------------------------- */

enum { SIGN_NONE = 0, SIGN_A, SIGN_B, SIGN_UNKNOWN, SIGN_PAUTH_LR };

typedef struct {
	bool outermost;  /* RA undefined: no caller */
	vf_val cfa, sp, pc, fp;
	uint8_t sign;    /* SIGN_*: how the return address is signed */
	bool signal;
	bool retcol_other;  /* DWARF: the CIE's return column is not the
	                     * ABI's RA register */
	uint16_t retcol;
	char why[120];   /* DWARF: why the CFA or SP has no simple form */
} vf_frame;

/* The caller's frame from DWARF row r at pc. */
void vf_dwarf_frame(const vf_abi *a, vf_eval *e, const vf_walk *w,
		    const vf_row *r, const cfi_cie *cie, vf_frame *out);

/* Can some SFrame row (default FDE, or flexible where the ABI has it;
 * version 2 or 3) give exactly f? false with *why otherwise. */
bool vf_expressible(const vf_abi *a, unsigned version, const vf_frame *f,
		    char *why, size_t len);

/* ---- SFrame (vf_sframe.c) --------------------------------------------- */

/* FDEs by (shndx, start), built by the verifier itself. */
typedef struct {
	const sfr_section *s;
	uint32_t *order;
	size_t n;
} vf_index;

bool vf_index_build(const sfr_section *s, vf_index *ix);
void vf_index_free(vf_index *ix);
/* The FDE covering pc of section shndx (linked files: 0), or -1. */
long vf_find_fde(const vf_index *ix, uint32_t shndx, uint64_t pc);
/* The FRE of fde covering pc, or -1 (no FRE: pc before the first one). */
long vf_find_fre(const sfr_section *s, const sfr_fde *fde, uint64_t pc);
/* Problems of an FDE as a whole (FRE order, MASK block size...): false
 * with *why. */
bool vf_fde_sane(const sfr_section *s, const sfr_fde *fde, char *why,
		 size_t len);
/* The caller's frame per Appendix A from FRE fre of fde. false (and
 * *why) for a word layout the spec does not define. */
bool vf_sframe_frame(const vf_abi *a, const sfr_section *s,
		     const sfr_fde *fde, const sfr_fre *fre, vf_frame *out,
		     char *why, size_t len);

#endif
