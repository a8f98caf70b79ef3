/* Why a function was not converted, and each FDE's verdict: the
 * conversion's accounting, apart from the SFrame format (src/sframe). */
#ifndef E2S_CONV_SKIP_H
#define E2S_CONV_SKIP_H

#include <stddef.h>
#include <stdint.h>

/* Why a function was not converted. The first entry means "converted". */
#define CONV_SKIPS(X)                                                    \
	X(NONE, "converted")                                            \
	X(BAD_CFI, "bad-cfi")               /* FDE/CIE status not OK */  \
	X(EMPTY, "empty-range")             /* pc_range 0 */             \
	X(CFA_EXPR, "cfa-expression")       /* CFA from an unsupported expression */ \
	X(CFA_INVALID, "cfa-invalid")       /* offset applied to an expression CFA */ \
	X(CFA_UNSET, "cfa-unset")           /* no CFA rule in some row */ \
	X(CFA_REG, "cfa-register")          /* CFA base SFrame cannot name */ \
	X(RA_RULE, "ra-rule")               /* RA rule SFrame cannot express */ \
	X(FP_RULE, "fp-rule")               /* FP rule SFrame cannot express */ \
	X(OFFSET_RANGE, "offset-range")     /* a value too wide for 4-byte words */ \
	X(TOO_LARGE, "function-too-large")  /* size does not fit in 32 bits */ \
	X(DUPLICATE, "duplicate")           /* same or overlapping range as an earlier FDE */ \
	X(UNSUPPORTED_ABI, "unsupported-abi")                            \
	X(SP_RULE, "sp-rule")               /* SP column not CFA-derived */ \
	X(CFA_ALIGN, "cfa-offset-unaligned") /* s390x: (off-160) % 8 != 0 */ \
	X(PLT_SHAPE, "plt-shape")           /* PLT CFA expression in an unusable layout */ \
	X(V2, "not-in-sframe-v2")           /* --sframe-version=2: flexible FDE or signal frame */ \
	X(PC_RELATIVE, "pc-relative")       /* AMD64: rule based on DWARF register 16 (the PC) */ \
	X(RA_SIGN_PC, "ra-signed-with-pc")  /* AArch64: negate_ra_state_with_pc (PAuth_LR) */ \
	X(RA_SIGN_STATE, "ra-sign-state")   /* AArch64: register 34 not a constant 0/1 */ \
	X(CIE_PTR_WIDTH, "cie-pointer-width") /* bad CFI: an 8-byte CIE pointer in a \
	                                       * 32-bit record (Free Pascal) */

typedef enum {
#define CONV_X(name, text) CONV_SKIP_##name,
	CONV_SKIPS(CONV_X)
#undef CONV_X
	CONV_SKIP_COUNT_
} conv_skip;

const char *conv_skip_name(conv_skip s);

/* Each FDE's verdict as the projection decided it. */
typedef struct {
	uint8_t *fde_skip;   /* per cfi_table FDE: conv_skip */
	size_t nfdes;
	size_t counts[CONV_SKIP_COUNT_]; /* FDEs per outcome (NONE = converted) */
} conv_verdicts;

void conv_verdicts_free(conv_verdicts *v);

#endif
