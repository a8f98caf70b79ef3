/* Classify DWARF expressions into the few shapes SFrame can express.
 * Anything not matching a shape byte for byte is CFI_EXPR_OTHER. */
#include <string.h>

#include "../common/reader.h"
#include "cfi.h"

enum {
	DW_OP_deref = 0x06,
	DW_OP_const1u = 0x08,
	DW_OP_and = 0x1a,
	DW_OP_plus = 0x22,
	DW_OP_shl = 0x24,
	DW_OP_ge = 0x2a,
	DW_OP_lit0 = 0x30,
	DW_OP_lit31 = 0x4f,
	DW_OP_breg0 = 0x70,
	DW_OP_breg31 = 0x8f,
	DW_OP_bregx = 0x92,
};

/* DW_OP_breg<N> k or DW_OP_bregx N k. */
static bool read_breg(br_t *r, uint16_t *reg, int64_t *off)
{
	uint8_t op = br_u8(r);
	uint64_t n;
	if (op >= DW_OP_breg0 && op <= DW_OP_breg31)
		n = op - DW_OP_breg0;
	else if (op == DW_OP_bregx)
		n = br_uleb(r);
	else
		return false;
	*off = br_sleb(r);
	if (!br_ok(r) || n > UINT16_MAX)
		return false;
	*reg = (uint16_t)n;
	return true;
}

/* DW_OP_lit<K> or DW_OP_const1u K. */
static bool read_small_const(br_t *r, uint32_t *k)
{
	uint8_t op = br_u8(r);
	if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
		*k = op - DW_OP_lit0;
		return br_ok(r);
	}
	if (op != DW_OP_const1u)
		return false;
	*k = br_u8(r);
	return br_ok(r);
}

static bool expect(br_t *r, uint8_t op)
{
	return br_u8(r) == op && br_ok(r);
}

/* The GNU ld x86-64 PLT expression, after its first breg:
 *   DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_lit<K>|const1u K;
 *   DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
 * i.e. rsp + 8 + (((rip & 15) >= K) << 3). */
static bool plt_tail(br_t *r, uint32_t *k)
{
	uint16_t reg;
	int64_t off;
	if (!read_breg(r, &reg, &off) || reg != 16 || off != 0)
		return false;
	if (!expect(r, DW_OP_lit0 + 15) || !expect(r, DW_OP_and))
		return false;
	if (!read_small_const(r, k))
		return false;
	return expect(r, DW_OP_ge) && expect(r, DW_OP_lit0 + 3) &&
	       expect(r, DW_OP_shl) && expect(r, DW_OP_plus) && br_at_end(r);
}

void cfi_expr_classify(const uint8_t *bytes, size_t len, bool big_endian,
		       unsigned addr_size, cfi_expr *out)
{
	br_t r;
	uint16_t reg;
	int64_t off;
	uint32_t k;

	(void)addr_size; /* no address-sized operand in the shapes */
	memset(out, 0, sizeof *out);
	out->len = (uint32_t)len;
	out->shape = CFI_EXPR_OTHER;
	br_init(&r, bytes, len, big_endian);
	if (read_small_const(&r, &k) && br_at_end(&r)) {
		out->shape = CFI_EXPR_CONST;
		out->off = k;
		return;
	}
	br_init(&r, bytes, len, big_endian);
	if (!read_breg(&r, &reg, &off))
		return;
	out->reg = reg;
	out->off = off;
	if (br_at_end(&r)) {
		out->shape = CFI_EXPR_BREG;
		return;
	}
	size_t after = r.pos;
	if (expect(&r, DW_OP_deref) && br_at_end(&r)) {
		out->shape = CFI_EXPR_BREG_DEREF;
		return;
	}
	br_init(&r, bytes, len, big_endian);
	r.pos = after;
	if (plt_tail(&r, &k)) {
		out->shape = CFI_EXPR_PLT;
		out->plt_k = k;
		return;
	}
	out->reg = 0;
	out->off = 0;
}
