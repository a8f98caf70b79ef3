/* One test per DW_CFA_* family on hand-built .eh_frame bytes. Expected
 * rows are computed by hand from DWARF 5 section 6.4.2 (factoring:
 * def_cfa/def_cfa_offset unfactored, *_sf and offset/val_offset by the
 * data alignment factor, advances by the code alignment factor). */
#include <stdlib.h>
#include <string.h>

#include "elf/elfr_cfi.h"
#include "common/buf.h"
#include "dwarf/cfi_int.h"
#include "t.h"

#define PC0 0x1000u

static size_t rec_begin(bw_t *w)
{
	size_t s = w->len;
	bw_u32(w, 0);
	return s;
}

static void rec_end(bw_t *w, size_t s)
{
	bw_put_uN(w, s, w->len - s - 4, 4);
}

/* "zR" CIE, FDE pointers udata8 (absolute 64-bit, no relocation). */
static size_t cie(bw_t *w, uint64_t caf, int64_t daf, unsigned ra,
		  const uint8_t *init, size_t n)
{
	size_t s = rec_begin(w);
	bw_u32(w, 0);
	bw_u8(w, 1);
	bw_bytes(w, "zR", 3);
	bw_uleb(w, caf);
	bw_sleb(w, daf);
	bw_u8(w, (uint8_t)ra);
	bw_uleb(w, 1);
	bw_u8(w, 0x04); /* DW_EH_PE_udata8 */
	bw_bytes(w, init, n);
	rec_end(w, s);
	return s;
}

static size_t fde(bw_t *w, size_t cie_off, uint64_t pc, uint64_t range,
		  const uint8_t *ins, size_t n)
{
	size_t s = rec_begin(w);
	bw_u32(w, (uint32_t)(w->len - cie_off));
	bw_u64(w, pc);
	bw_u64(w, range);
	bw_uleb(w, 0);
	bw_bytes(w, ins, n);
	rec_end(w, s);
	return s;
}

static e2s_err parse(const bw_t *w, abi_id abi, cfi_table *t)
{
	cfi_section sec;
	e2s_diag d;
	memset(&sec, 0, sizeof sec);
	sec.kind = CFI_SEC_EH_FRAME;
	sec.data = w->data;
	sec.size = w->len;
	sec.big_endian = w->big_endian;
	sec.addr_size = 8;
	return cfi_parse(&sec, abi, t, &d);
}

/* CIE of the x86-64 psABI: def_cfa r7 8; offset r16 at cfa-8. */
static const uint8_t x86_init[] = {0x0c, 7, 8, 0x90, 1};
/* AArch64: def_cfa r31 0. */
static const uint8_t a64_init[] = {0x0c, 31, 0};

/* Run one FDE program [PC0, PC0+range) under an amd64 CIE with code
 * alignment caf; returns the FDE status. *insn_off gets the section
 * offset of the program's first byte. */
static e2s_err run(abi_id abi, uint64_t caf, uint64_t range,
		   const uint8_t *ins, size_t n, cfi_table *t,
		   size_t *insn_off)
{
	bw_t w;
	bw_init(&w, false);
	size_t c = abi == ABI_AARCH64
			   ? cie(&w, caf, -8, 30, a64_init, sizeof a64_init)
			   : cie(&w, caf, -8, 16, x86_init, sizeof x86_init);
	size_t f = fde(&w, c, PC0, range, ins, n);
	if (insn_off)
		*insn_off = f + 4 + 4 + 16 + 1;
	e2s_err e = parse(&w, abi, t);
	bw_free(&w);
	if (e != E2S_ERR_OK || t->nfdes != 1)
		return e == E2S_ERR_OK ? E2S_ERR_COUNT_ : e;
	return t->fdes[0].status;
}

static const cfi_row *row(const cfi_table *t, size_t i)
{
	return &t->rows[t->fdes[0].row_first + i];
}

static void test_advance(void)
{
	cfi_table t;
	static const uint8_t p[] = {
		0x41, 0x0e, 16,             /* advance_loc 1; cfa+16 */
		0x02, 0x10, 0x0e, 24,       /* advance_loc1 16 */
		0x03, 0x00, 0x01, 0x0e, 32, /* advance_loc2 256 */
		0x04, 0x00, 0x01, 0x00, 0x00, 0x0e, 40, /* advance_loc4 256 */
	};
	CHECK_EQ(run(ABI_AMD64, 4, 0x1000, p, sizeof p, &t, NULL),
		 E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 5);
	static const uint64_t start[] = {PC0, PC0 + 4, PC0 + 4 + 64,
					 PC0 + 4 + 64 + 1024,
					 PC0 + 4 + 64 + 2048};
	for (unsigned i = 0; i < 5 && i < t.fdes[0].row_count; i++) {
		CHECK_EQ(row(&t, i)->start, start[i]);
		CHECK_EQ(row(&t, i)->cfa.kind, CFI_CFA_REG_OFF);
		CHECK_EQ(row(&t, i)->cfa.reg, 7);
		CHECK_EQ(row(&t, i)->cfa.off, 8 + 8 * i);
		CHECK_EQ(row(&t, i)->ra.kind, CFI_RULE_OFFSET);
		CHECK_EQ(row(&t, i)->ra.off, -8);
		if (i)
			CHECK_EQ(row(&t, i - 1)->end, start[i]);
	}
	CHECK_EQ(row(&t, 4)->end, PC0 + 0x1000);
	cfi_table_free(&t);
}

static void test_set_loc_and_bounds(void)
{
	cfi_table t;
	size_t off;
	static const uint8_t p[] = {0x01, 0x10, 0x10, 0, 0, 0, 0, 0, 0, /* 0x1010 */
				    0x0e, 16};
	CHECK_EQ(run(ABI_AMD64, 1, 0x100, p, sizeof p, &t, NULL),
		 E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 2);
	CHECK_EQ(row(&t, 1)->start, 0x1010);
	CHECK_EQ(row(&t, 1)->cfa.off, 16);
	cfi_table_free(&t);

	/* set_loc backwards */
	static const uint8_t back[] = {0x41, 0x01, 0xff, 0x0f, 0, 0, 0, 0, 0, 0};
	CHECK_EQ(run(ABI_AMD64, 1, 0x100, back, sizeof back, &t, &off),
		 E2S_ERR_PC_BACKWARDS);
	CHECK_EQ(t.fdes[0].err_off, off + 1);
	CHECK_EQ(t.fdes[0].row_count, 0);
	CHECK_EQ(t.nbad_fdes, 1);
	CHECK_EQ(t.nrows, 0);
	cfi_table_free(&t);

	/* advance past pc_begin + pc_range */
	static const uint8_t past[] = {0x02, 0x20, 0x0e, 16, 0x02, 0xe1};
	CHECK_EQ(run(ABI_AMD64, 1, 0x100, past, sizeof past, &t, &off),
		 E2S_ERR_PC_BACKWARDS);
	CHECK_EQ(t.fdes[0].err_off, off + 4);
	cfi_table_free(&t);

	/* advancing exactly to the end is fine; the last row ends there */
	static const uint8_t toend[] = {0x02, 0x20, 0x0e, 16, 0x02, 0xe0};
	CHECK_EQ(run(ABI_AMD64, 1, 0x100, toend, sizeof toend, &t, &off),
		 E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 2);
	CHECK_EQ(row(&t, 1)->end, 0x1100);
	cfi_table_free(&t);
}

static void test_offsets(void)
{
	cfi_table t;
	static const uint8_t p[] = {
		0x86, 2,           /* offset r6 2      -> c-16 */
		0x41, 0x05, 16, 3, /* offset_extended r16 3 -> c-24 */
		0x41, 0x11, 6, 0x7d, /* offset_extended_sf r6 -3 -> c+24 */
		0x41, 0x2f, 6, 2,  /* GNU_negative_offset_extended r6 2 -> c+16 */
		0x41, 0x14, 6, 1,  /* val_offset r6 1 -> v-8 */
		0x41, 0x15, 16, 0x7f, /* val_offset_sf r16 -1 -> v+8 */
	};
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, p, sizeof p, &t, NULL),
		 E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 6);
	CHECK_EQ(row(&t, 0)->fp.kind, CFI_RULE_OFFSET);
	CHECK_EQ(row(&t, 0)->fp.off, -16);
	CHECK_EQ(row(&t, 1)->ra.kind, CFI_RULE_OFFSET);
	CHECK_EQ(row(&t, 1)->ra.off, -24);
	CHECK_EQ(row(&t, 2)->fp.off, 24);
	CHECK_EQ(row(&t, 3)->fp.kind, CFI_RULE_OFFSET);
	CHECK_EQ(row(&t, 3)->fp.off, 16);
	CHECK_EQ(row(&t, 4)->fp.kind, CFI_RULE_VAL_OFFSET);
	CHECK_EQ(row(&t, 4)->fp.off, -8);
	CHECK_EQ(row(&t, 5)->ra.kind, CFI_RULE_VAL_OFFSET);
	CHECK_EQ(row(&t, 5)->ra.off, 8);
	CHECK_EQ(row(&t, 5)->sp.kind, CFI_RULE_UNSPEC);
	cfi_table_free(&t);
}

static void test_restore(void)
{
	cfi_table t;
	static const uint8_t p[] = {
		0x90, 2, 0x86, 2,  /* ra c-16, fp c-16 */
		0x41, 0xd0,        /* restore r16 -> CIE's c-8 */
		0x41, 0x05, 16, 3, /* ra c-24 */
		0x41, 0x06, 16,    /* restore_extended r16 */
		0x41, 0xc6,        /* restore r6 -> unspecified */
	};
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, p, sizeof p, &t, NULL),
		 E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 5);
	CHECK_EQ(row(&t, 0)->ra.off, -16);
	CHECK_EQ(row(&t, 1)->ra.off, -8);
	CHECK_EQ(row(&t, 1)->fp.off, -16);
	CHECK_EQ(row(&t, 2)->ra.off, -24);
	CHECK_EQ(row(&t, 3)->ra.off, -8);
	CHECK_EQ(row(&t, 3)->ra.kind, CFI_RULE_OFFSET);
	CHECK_EQ(row(&t, 4)->fp.kind, CFI_RULE_UNSPEC);
	cfi_table_free(&t);
}

static void test_undefined_same_register(void)
{
	cfi_table t;
	static const uint8_t p[] = {
		0x07, 16,          /* undefined r16 */
		0x41, 0x08, 6,     /* same_value r6 */
		0x41, 0x09, 6, 3,  /* register r6 in r3 */
		0x41, 0x09, 7, 10, /* register r7 (sp) in r10 */
	};
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, p, sizeof p, &t, NULL),
		 E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 4);
	CHECK_EQ(row(&t, 0)->ra.kind, CFI_RULE_UNDEFINED);
	CHECK_EQ(row(&t, 1)->fp.kind, CFI_RULE_SAME);
	CHECK_EQ(row(&t, 2)->fp.kind, CFI_RULE_REGISTER);
	CHECK_EQ(row(&t, 2)->fp.reg, 3);
	CHECK_EQ(row(&t, 3)->sp.kind, CFI_RULE_REGISTER);
	CHECK_EQ(row(&t, 3)->sp.reg, 10);
	cfi_table_free(&t);

	/* Register numbers beyond the ABI's range. */
	static const uint8_t bad[] = {0x09, 6, 0xc8, 0x01}; /* r6 in r200 */
	size_t off;
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, bad, sizeof bad, &t, &off),
		 E2S_ERR_BAD_REGISTER);
	CHECK_EQ(t.fdes[0].err_off, off);
	cfi_table_free(&t);
	static const uint8_t badcfa[] = {0x0c, 0x83, 0x01, 8}; /* def_cfa r131 */
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, badcfa, sizeof badcfa, &t, NULL),
		 E2S_ERR_BAD_REGISTER);
	cfi_table_free(&t);
	/* Any register goes for an unknown machine. */
	CHECK_EQ(run(ABI_UNKNOWN, 1, 0x10, badcfa, sizeof badcfa, &t,
		     NULL),
		 E2S_ERR_OK);
	CHECK_EQ(row(&t, 0)->cfa.reg, 131);
	cfi_table_free(&t);
}

static void test_remember_restore(void)
{
	cfi_table t;
	static const uint8_t p[] = {
		0x0e, 16, 0x86, 2, /* cfa r7+16, fp c-16 */
		0x0a,              /* remember */
		0x41, 0x0c, 6, 32, 0xc6, 0x90, 3, /* cfa r6+32, fp -, ra c-24 */
		0x41, 0x0b,        /* restore_state */
	};
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, p, sizeof p, &t, NULL),
		 E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 3);
	CHECK_EQ(row(&t, 1)->cfa.reg, 6);
	CHECK_EQ(row(&t, 1)->cfa.off, 32);
	CHECK_EQ(row(&t, 1)->fp.kind, CFI_RULE_UNSPEC);
	CHECK_EQ(row(&t, 1)->ra.off, -24);
	CHECK_EQ(row(&t, 2)->cfa.reg, 7); /* CFA is restored too */
	CHECK_EQ(row(&t, 2)->cfa.off, 16);
	CHECK_EQ(row(&t, 2)->fp.off, -16);
	CHECK_EQ(row(&t, 2)->ra.off, -8);
	cfi_table_free(&t);

	size_t off;
	static const uint8_t under[] = {0x41, 0x0a, 0x0b, 0x0b};
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, under, sizeof under, &t, &off),
		 E2S_ERR_STACK_UNDERFLOW);
	CHECK_EQ(t.fdes[0].err_off, off + 3);
	cfi_table_free(&t);

	uint8_t deep[65];
	memset(deep, 0x0a, sizeof deep);
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, deep, 64, &t, NULL), E2S_ERR_OK);
	cfi_table_free(&t);
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, deep, 65, &t, &off),
		 E2S_ERR_STACK_OVERFLOW);
	CHECK_EQ(t.fdes[0].err_off, off + 64);
	cfi_table_free(&t);
}

static void test_def_cfa(void)
{
	cfi_table t;
	static const uint8_t p[] = {
		0x0c, 6, 16,       /* def_cfa r6 16 */
		0x41, 0x0d, 7,     /* def_cfa_register r7 -> r7+16 */
		0x41, 0x0e, 0xa0, 0x01, /* def_cfa_offset 160 (unfactored) */
		0x41, 0x12, 6, 0x7e, /* def_cfa_sf r6 -2 -> r6+16 */
		0x41, 0x13, 0x7c,  /* def_cfa_offset_sf -4 -> r6+32 */
	};
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, p, sizeof p, &t, NULL),
		 E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 5);
	static const int reg[] = {6, 7, 7, 6, 6};
	static const int off[] = {16, 16, 160, 16, 32};
	for (unsigned i = 0; i < 5 && i < t.fdes[0].row_count; i++) {
		CHECK_EQ(row(&t, i)->cfa.kind, CFI_CFA_REG_OFF);
		CHECK_EQ(row(&t, i)->cfa.reg, reg[i]);
		CHECK_EQ(row(&t, i)->cfa.off, off[i]);
	}
	cfi_table_free(&t);
}

static void test_expressions(void)
{
	cfi_table t;
	size_t o;
	static const uint8_t p[] = {
		0x0f, 2, 0x77, 0x08,       /* def_cfa_expression breg7 8 */
		0x10, 6, 2, 0x76, 0x70,    /* expression r6: breg6 -16 */
		0x16, 16, 2, 0x77, 0x00,   /* val_expression r16: breg7 0 */
		0x41, 0x0e, 16,            /* def_cfa_offset after expr */
		0x41, 0x0c, 7, 8,          /* def_cfa: usable again */
		0x41, 0x0f, 1, 0x30, 0x0d, 6, /* expr; def_cfa_register */
	};
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, p, sizeof p, &t, &o), E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 4);
	const cfi_row *r = row(&t, 0);
	CHECK_EQ(r->cfa.kind, CFI_CFA_EXPR);
	CHECK_EQ(r->cfa.expr.shape, CFI_EXPR_BREG);
	CHECK_EQ(r->cfa.expr.reg, 7);
	CHECK_EQ(r->cfa.expr.off, 8);
	CHECK_EQ(r->cfa.expr.sec_off, o + 2);
	CHECK_EQ(r->cfa.expr.len, 2);
	CHECK_EQ(r->fp.kind, CFI_RULE_EXPR);
	CHECK_EQ(r->fp.expr.shape, CFI_EXPR_BREG);
	CHECK_EQ(r->fp.expr.reg, 6);
	CHECK_EQ(r->fp.expr.off, -16);
	CHECK_EQ(r->fp.expr.sec_off, o + 7);
	CHECK_EQ(r->ra.kind, CFI_RULE_VAL_EXPR);
	CHECK_EQ(r->ra.expr.off, 0);
	/* def_cfa_offset on an expression CFA: row kept, CFA invalid. */
	CHECK_EQ(row(&t, 1)->cfa.kind, CFI_CFA_INVALID);
	CHECK_EQ(row(&t, 1)->start, PC0 + 1);
	CHECK_EQ(row(&t, 1)->fp.kind, CFI_RULE_EXPR);
	CHECK_EQ(row(&t, 2)->cfa.kind, CFI_CFA_REG_OFF);
	CHECK_EQ(row(&t, 2)->cfa.off, 8);
	CHECK_EQ(row(&t, 3)->cfa.kind, CFI_CFA_INVALID);
	CHECK_EQ(t.nbad_fdes, 0);
	cfi_table_free(&t);

	/* A block running past the FDE end. */
	static const uint8_t trunc[] = {0x0f, 5, 0x77, 0x08};
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, trunc, sizeof trunc, &t, NULL),
		 E2S_ERR_TRUNCATED);
	cfi_table_free(&t);
}

static void test_nop_args_size_merge(void)
{
	cfi_table t;
	/* Changes at pc_begin (no zero-length row), then advances that
	 * change nothing: one merged row over the whole range. */
	static const uint8_t p[] = {0x40, 0x0e, 16, 0x41, 0x00, 0x2e, 0x10,
				    0x41, 0x0e, 16, 0x00, 0x00};
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, p, sizeof p, &t, NULL),
		 E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 1);
	CHECK_EQ(row(&t, 0)->start, PC0);
	CHECK_EQ(row(&t, 0)->end, PC0 + 0x10);
	CHECK_EQ(row(&t, 0)->cfa.off, 16);
	cfi_table_free(&t);

	/* A zero pc_range gives no rows at all. */
	CHECK_EQ(run(ABI_AMD64, 1, 0, p, 3, &t, NULL), E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 0);
	cfi_table_free(&t);
}

static void test_negate_ra_state(void)
{
	cfi_table t;
	static const uint8_t p[] = {
		0x41, 0x2d,       /* 0x1004: mangled */
		0x41, 0x0a, 0x2d, /* 0x1008: remember; unmangled */
		0x41, 0x0b,       /* 0x100c: restore -> mangled again */
		0x41, 0x2c,       /* 0x1010: with_pc toggles too */
	};
	CHECK_EQ(run(ABI_AARCH64, 4, 0x20, p, sizeof p, &t, NULL),
		 E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 5);
	static const int m[] = {0, 1, 0, 1, 0};
	for (unsigned i = 0; i < 5 && i < t.fdes[0].row_count; i++) {
		CHECK_EQ(row(&t, i)->start, PC0 + 4 * i);
		CHECK_EQ(row(&t, i)->ra_mangled, m[i]);
		CHECK_EQ(row(&t, i)->cfa.reg, 31);
	}
	cfi_table_free(&t);
	/* 0x2d is DW_CFA_GNU_window_save elsewhere: unsupported. */
	size_t off;
	CHECK_EQ(run(ABI_AMD64, 1, 0x20, p, sizeof p, &t, &off),
		 E2S_ERR_BAD_OPCODE);
	CHECK_EQ(t.fdes[0].err_off, off + 1);
	cfi_table_free(&t);
}

static void test_bad_opcode_file_goes_on(void)
{
	bw_t w;
	cfi_table t;
	static const uint8_t bad[] = {0x41, 0x3f, 0x0e, 16};
	static const uint8_t bad2[] = {0x17};
	static const uint8_t good[] = {0x41, 0x0e, 16};
	bw_init(&w, false);
	size_t c = cie(&w, 1, -8, 16, x86_init, sizeof x86_init);
	size_t f1 = fde(&w, c, 0x1000, 0x10, bad, sizeof bad);
	fde(&w, c, 0x2000, 0x10, good, sizeof good);
	fde(&w, c, 0x3000, 0x10, bad2, sizeof bad2);
	CHECK_EQ(parse(&w, ABI_AMD64, &t), E2S_ERR_OK);
	CHECK_EQ(t.nfdes, 3);
	CHECK_EQ(t.nbad_fdes, 2);
	CHECK_EQ(t.fdes[0].status, E2S_ERR_BAD_OPCODE);
	CHECK_EQ(t.fdes[0].err_off, f1 + 25 + 1);
	CHECK_EQ(t.fdes[0].row_count, 0);
	CHECK_EQ(t.fdes[1].status, E2S_ERR_OK);
	CHECK_EQ(t.fdes[1].row_count, 2);
	CHECK_EQ(t.fdes[2].status, E2S_ERR_BAD_OPCODE);

	e2s_diag d;
	char msg[200];
	cfi_fde_diag(&t, &t.fdes[0], &d);
	e2s_diag_format(&d, msg, sizeof msg);
	char want[100];
	snprintf(want, sizeof want,
		 ".eh_frame+0x%zx: unknown DW_CFA opcode: 0x3f", f1 + 26);
	CHECK_STR(msg, want);
	cfi_table_free(&t);
	bw_free(&w);
}

static void test_truncated_operands(void)
{
	cfi_table t;
	static const uint8_t p[] = {0x05, 16}; /* offset_extended: no offset */
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, p, sizeof p, &t, NULL),
		 E2S_ERR_TRUNCATED);
	cfi_table_free(&t);
	static const uint8_t q[] = {0x0e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
				    0x80, 0x80, 0x80, 0x80, 0x00};
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, q, sizeof q, &t, NULL),
		 E2S_ERR_LEB_OVERLONG);
	cfi_table_free(&t);
	static const uint8_t r[] = {0x04, 1, 0}; /* advance_loc4, 2 bytes */
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, r, sizeof r, &t, NULL),
		 E2S_ERR_TRUNCATED);
	cfi_table_free(&t);
}

static void test_cie_program_error(void)
{
	bw_t w;
	cfi_table t;
	static const uint8_t init[] = {0x0c, 7, 8, 0x3e};
	static const uint8_t good[] = {0x41, 0x0e, 16};
	bw_init(&w, false);
	size_t c1 = cie(&w, 1, -8, 16, init, sizeof init);
	size_t c2 = cie(&w, 1, -8, 16, x86_init, sizeof x86_init);
	fde(&w, c1, 0x1000, 0x10, good, sizeof good);
	fde(&w, c2, 0x2000, 0x10, good, sizeof good);
	CHECK_EQ(parse(&w, ABI_AMD64, &t), E2S_ERR_OK);
	CHECK_EQ(t.ncies, 2);
	CHECK_EQ(t.cies[0].status, E2S_ERR_BAD_OPCODE);
	CHECK_EQ(t.nbad_fdes, 1);
	CHECK_EQ(t.fdes[0].status, E2S_ERR_BAD_OPCODE);
	CHECK_EQ(t.fdes[0].err_off, c1 + 17 + 3);
	CHECK_EQ(t.fdes[1].status, E2S_ERR_OK);
	CHECK_EQ(t.fdes[1].cie, 1);
	cfi_table_free(&t);
	bw_free(&w);
}

/* A CIE whose return column is an ABI register (here rbp): a rule for
 * it is both the return address and the frame pointer, and a restore
 * resets both. */
static void test_return_column_is_fp(void)
{
	cfi_table t;
	bw_t w;
	bw_init(&w, false);
	static const uint8_t init[] = {0x0c, 7, 8};
	static const uint8_t p[] = {
		0x86, 2,     /* offset r6 at cfa-16 */
		0x41, 0xc6,  /* restore r6 */
	};
	size_t c = cie(&w, 1, -8, 6, init, sizeof init);
	fde(&w, c, PC0, 0x10, p, sizeof p);
	CHECK_EQ(parse(&w, ABI_AMD64, &t), E2S_ERR_OK);
	bw_free(&w);
	CHECK_EQ(t.fdes[0].status, E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 2);
	CHECK_EQ(row(&t, 0)->ra.kind, CFI_RULE_OFFSET);
	CHECK_EQ(row(&t, 0)->ra.off, -16);
	CHECK_EQ(row(&t, 0)->fp.kind, CFI_RULE_OFFSET);
	CHECK_EQ(row(&t, 0)->fp.off, -16);
	CHECK_EQ(row(&t, 1)->ra.kind, CFI_RULE_UNSPEC);
	CHECK_EQ(row(&t, 1)->fp.kind, CFI_RULE_UNSPEC);
	cfi_table_free(&t);
}

/* A save of a register no kept column is only checks its number (for
 * 0-63 by one bit of a mask); one of a kept column sets the column:
 * SP, FP, the CIE's return column (here r3, among the plain ones
 * otherwise), AArch64's RA_SIGN_STATE. */
static void test_save_columns(void)
{
	cfi_table t;
	size_t off;
	static const uint8_t p[] = {
		0x83, 1,            /* offset r3: no column */
		0x41, 0xbf, 1,      /* offset r63 */
		0x41, 0x05, 100, 1, /* offset_extended r100 */
		0x41, 0x87, 2,      /* offset r7: SP */
	};
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, p, sizeof p, &t, NULL),
		 E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 2);
	CHECK_EQ(row(&t, 0)->end, PC0 + 3);
	CHECK_EQ(row(&t, 0)->sp.kind, CFI_RULE_UNSPEC);
	CHECK_EQ(row(&t, 0)->fp.kind, CFI_RULE_UNSPEC);
	CHECK_EQ(row(&t, 0)->ra.off, -8);
	CHECK_EQ(row(&t, 1)->sp.kind, CFI_RULE_OFFSET);
	CHECK_EQ(row(&t, 1)->sp.off, -16);
	cfi_table_free(&t);

	static const uint8_t bad[] = {0x41, 0x05, 0x83, 0x01, 1}; /* r131 */
	CHECK_EQ(run(ABI_AMD64, 1, 0x10, bad, sizeof bad, &t, &off),
		 E2S_ERR_BAD_REGISTER);
	CHECK_EQ(t.fdes[0].err_off, off + 1);
	cfi_table_free(&t);

	bw_t w;
	bw_init(&w, false);
	static const uint8_t init[] = {0x0c, 7, 8};
	static const uint8_t r3[] = {0x41, 0x83, 2}; /* offset r3 */
	size_t c = cie(&w, 1, -8, 3, init, sizeof init);
	fde(&w, c, PC0, 0x10, r3, sizeof r3);
	CHECK_EQ(parse(&w, ABI_AMD64, &t), E2S_ERR_OK);
	bw_free(&w);
	CHECK_EQ(t.fdes[0].row_count, 2);
	CHECK_EQ(row(&t, 0)->ra.kind, CFI_RULE_UNSPEC);
	CHECK_EQ(row(&t, 1)->ra.kind, CFI_RULE_OFFSET);
	CHECK_EQ(row(&t, 1)->ra.off, -16);
	cfi_table_free(&t);

	static const uint8_t sign[] = {0x41, 0xa2, 1}; /* offset r34 */
	CHECK_EQ(run(ABI_AARCH64, 1, 0x10, sign, sizeof sign, &t, NULL),
		 E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 2);
	CHECK_EQ(row(&t, 0)->ra_sign_bad, 0);
	CHECK_EQ(row(&t, 1)->ra_sign_bad, 1);
	cfi_table_free(&t);
}

/* The decoder's inline short forms (cfi_dec_short) read every byte
 * string as the table-driven decoder (cfi_dec_next) does: opcode,
 * operands and length, for every first byte and operand bytes at the
 * edges of one- and two-byte ULEB128s, in both byte orders, with the
 * program cut after each byte. Not vacuous: each short form is met. */
static void test_short_forms_match_decoder(void)
{
	static const uint8_t ops[] = {0, 1, 0x3f, 0x7f, 0x80, 0x81, 0xff};
	size_t taken = 0, differ = 0;
	unsigned seen = 0; /* short opcodes met, by bit */
	for (unsigned be = 0; be < 2; be++)
	for (unsigned b0 = 0; b0 < 256; b0++)
	for (size_t i1 = 0; i1 < sizeof ops; i1++)
	for (size_t i2 = 0; i2 < sizeof ops; i2++)
	for (size_t i3 = 0; i3 < sizeof ops; i3++)
	for (size_t len = 1; len <= 4; len++) {
		uint8_t p[4] = {(uint8_t)b0, ops[i1], ops[i2], ops[i3]};
		cfi_insn o;
		unsigned n = cfi_dec_short(p, p + len, be, &o);
		if (!n)
			continue;
		taken++;
		seen |= 1u << (o.op >> 6 ? 16 + (o.op >> 6) : o.op);
		cfi_section sec;
		memset(&sec, 0, sizeof sec);
		sec.data = p;
		sec.size = len;
		sec.big_endian = be;
		sec.addr_size = 8;
		cfi_cie c;
		memset(&c, 0, sizeof c);
		c.code_align = 1;
		c.data_align = -8;
		c.addr_size = 8;
		cfi_ptr_ctx pc = {&sec, ABI_AMD64, 8, 0};
		cfi_dec d;
		cfi_dec_init(&d, &sec, &c, &pc, 0, (uint32_t)len);
		cfi_insn in;
		e2s_err err;
		uint64_t err_off;
		bool has_b = o.op == DW_CFA_offset || o.op == DW_CFA_def_cfa;
		bool has_a = o.op != DW_CFA_nop && o.op != DW_CFA_remember_state &&
			     o.op != DW_CFA_restore_state;
		if (!cfi_dec_next(&d, &in, &err, &err_off) || in.op != o.op ||
		    (has_a && in.a != o.a) || (has_b && in.b != o.b))
			differ++;
		/* A run of nops is one short form: as many nops. */
		while (o.op == DW_CFA_nop && d.r.pos < n &&
		       cfi_dec_next(&d, &in, &err, &err_off) &&
		       in.op == DW_CFA_nop)
			;
		differ += d.r.pos != n;
	}
	CHECK_EQ(differ, 0);
	CHECK(taken > 10000);
	/* advance_loc, offset, restore (bits 17-19), nop, advance_loc1/2,
	 * remember/restore_state, def_cfa, def_cfa_register and
	 * def_cfa_offset. */
	CHECK_EQ(seen, 7u << 17 | 1u << DW_CFA_nop | 1u << DW_CFA_advance_loc1 |
		       1u << DW_CFA_advance_loc2 | 1u << DW_CFA_remember_state |
		       1u << DW_CFA_restore_state | 1u << DW_CFA_def_cfa |
		       1u << DW_CFA_def_cfa_register | 1u << DW_CFA_def_cfa_offset);
}

int main(void)
{
	test_short_forms_match_decoder();
	test_advance();
	test_set_loc_and_bounds();
	test_offsets();
	test_restore();
	test_undefined_same_register();
	test_return_column_is_fp();
	test_save_columns();
	test_remember_restore();
	test_def_cfa();
	test_expressions();
	test_nop_args_size_merge();
	test_negate_ra_state();
	test_bad_opcode_file_goes_on();
	test_truncated_operands();
	test_cie_program_error();
	return t_done("test_cfi_ops");
}
