/* cfi_expr_classify on hand-assembled DWARF expressions (opcode values
 * from DWARF 5 section 7.7.1; the PLT bytes as readelf -wf shows them in
 * /usr/bin/ls: DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and;
 * DW_OP_lit11; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus). */
#include "elf/elfr_cfi.h"
#include "t.h"

static cfi_expr classify(const uint8_t *b, size_t n)
{
	cfi_expr e;
	cfi_expr_classify(b, n, false, 8, &e);
	return e;
}

int main(void)
{
	static const uint8_t breg[] = {0x77, 0x10}; /* breg7 16 */
	cfi_expr e = classify(breg, sizeof breg);
	CHECK_EQ(e.shape, CFI_EXPR_BREG);
	CHECK_EQ(e.reg, 7);
	CHECK_EQ(e.off, 16);
	CHECK_EQ(e.len, 2);

	static const uint8_t deref[] = {0x76, 0x78, 0x06}; /* breg6 -8; deref */
	e = classify(deref, sizeof deref);
	CHECK_EQ(e.shape, CFI_EXPR_BREG_DEREF);
	CHECK_EQ(e.reg, 6);
	CHECK_EQ(e.off, -8);

	static const uint8_t bregx[] = {0x92, 0x1f, 0x80, 0x01}; /* bregx 31 128 */
	e = classify(bregx, sizeof bregx);
	CHECK_EQ(e.shape, CFI_EXPR_BREG);
	CHECK_EQ(e.reg, 31);
	CHECK_EQ(e.off, 128);

	static const uint8_t plt[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a,
				      0x3b, 0x2a, 0x33, 0x24, 0x22};
	e = classify(plt, sizeof plt);
	CHECK_EQ(e.shape, CFI_EXPR_PLT);
	CHECK_EQ(e.reg, 7);
	CHECK_EQ(e.off, 8);
	CHECK_EQ(e.plt_k, 11);

	static const uint8_t plt_c1[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a,
					 0x08, 0x0a, 0x2a, 0x33, 0x24, 0x22};
	e = classify(plt_c1, sizeof plt_c1);
	CHECK_EQ(e.shape, CFI_EXPR_PLT);
	CHECK_EQ(e.plt_k, 10);

	/* One byte off (DW_OP_lit2 shift): not the PLT shape. */
	static const uint8_t notplt[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a,
					 0x3b, 0x2a, 0x32, 0x24, 0x22};
	e = classify(notplt, sizeof notplt);
	CHECK_EQ(e.shape, CFI_EXPR_OTHER);
	/* Trailing byte after the PLT pattern. */
	static const uint8_t plt_tail[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a,
					   0x3b, 0x2a, 0x33, 0x24, 0x22, 0x96};
	CHECK_EQ(classify(plt_tail, sizeof plt_tail).shape, CFI_EXPR_OTHER);
	/* breg then something else. */
	static const uint8_t plus[] = {0x77, 0x08, 0x23, 0x08}; /* plus_uconst */
	CHECK_EQ(classify(plus, sizeof plus).shape, CFI_EXPR_OTHER);
	/* Truncated SLEB. */
	static const uint8_t trunc[] = {0x77, 0x80};
	CHECK_EQ(classify(trunc, sizeof trunc).shape, CFI_EXPR_OTHER);
	CHECK_EQ(classify(NULL, 0).shape, CFI_EXPR_OTHER);
	/* Constants (AArch64 RA_SIGN_STATE values). */
	static const uint8_t lit[] = {0x31};
	CHECK_EQ(classify(lit, 1).shape, CFI_EXPR_CONST);
	CHECK_EQ(classify(lit, 1).off, 1);
	static const uint8_t c1u[] = {0x08, 0x07};
	CHECK_EQ(classify(c1u, 2).shape, CFI_EXPR_CONST);
	CHECK_EQ(classify(c1u, 2).off, 7);
	static const uint8_t lit2[] = {0x31, 0x31};
	CHECK_EQ(classify(lit2, 2).shape, CFI_EXPR_OTHER);
	return t_done("test_cfi_expr");
}
