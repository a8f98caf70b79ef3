/* Encoder output checked byte by byte against values computed by hand
 * from the V3 spec (sections 2.2-2.4, 3.1-3.2) and binutils sframe.h
 * (SFRAME_BASE_REG_SP = 1, FP = 0). */
#include "test_sfe_synth.h"
#include "convert/convert.h"
#include "sframe/sframe_fmt.h"
#include "sframe/sfr.h"
#include "t.h"

static int build(synth *s, uint64_t vaddr, bw_t *w, sfe_set *set,
		 conv_verdicts *v)
{
	sfe_encode_opts o = {.section_vaddr = vaddr};
	e2s_diag d;
	bw_init(w, s->t.big_endian);
	return conv_build(&s->t, &o, w, set, v, NULL, NULL, &d);
}

static int bytes_eq(const bw_t *w, const uint8_t *want, size_t n)
{
	if (w->len != n) {
		fprintf(stderr, "length %zu, expected %zu\n", w->len, n);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (w->data[i] != want[i]) {
			fprintf(stderr, "byte %zu: 0x%02x, expected 0x%02x\n", i,
				w->data[i], want[i]);
			return 0;
		}
	}
	return 1;
}

/* AMD64: the classic rbp frame, f at 0x401000 size 7, .sframe at 0x402078. */
static void amd64_frame(void)
{
	synth s;
	bw_t w;
	sfe_set set;
	conv_verdicts v;
	synth_init(&s, ABI_AMD64, false);
	synth_fde(&s, 0x401000, 7, 0);
	cfi_row *r;
	r = synth_row(&s, 0x401000, 7, 8);  r->ra = rule_off(-8);
	r = synth_row(&s, 0x401001, 7, 16); r->ra = rule_off(-8); r->fp = rule_off(-16);
	r = synth_row(&s, 0x401004, 6, 16); r->ra = rule_off(-8); r->fp = rule_off(-16);
	r = synth_row(&s, 0x401006, 7, 8);  r->ra = rule_off(-8); r->fp = rule_off(-16);
	CHECK_EQ(build(&s, 0x402078, &w, &set, &v), E2S_ERR_OK);
	/* start field at 0x402078 + 28 = 0x402094; 0x401000 - 0x402094 =
	 * -0x1094 = 0xffff...ef6c. FRE bytes: ADDR1 start, info, words.
	 * info: count<<1 | base (SP=1): 1 word SP = 0x03, 2 words SP = 0x05,
	 * 2 words FP = 0x04. fre_len = 5 (attr) + 3 + 4 + 4 + 4 = 20. */
	static const uint8_t want[] = {
		0xe2, 0xde, 0x03, 0x05, 0x03, 0x00, 0xf8, 0x00, /* preamble, abi 3, fp 0, ra -8, aux 0 */
		1, 0, 0, 0, 4, 0, 0, 0, 20, 0, 0, 0,            /* fdes, fres, fre_len */
		0, 0, 0, 0, 16, 0, 0, 0,                         /* fdeoff, freoff */
		0x6c, 0xef, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  /* start offset */
		7, 0, 0, 0, 0, 0, 0, 0,                          /* size, fre_off */
		4, 0, 0x00, 0x00, 0x00,                          /* 4 FREs, INC ADDR1, DEFAULT, rep 0 */
		0x00, 0x03, 0x08,
		0x01, 0x05, 0x10, 0xf0,
		0x04, 0x04, 0x10, 0xf0,
		0x06, 0x05, 0x08, 0xf0,
	};
	CHECK(bytes_eq(&w, want, sizeof want));
	CHECK_EQ(v.counts[CONV_SKIP_NONE], 1);
	CHECK_EQ(sfe_encoded_size(&set, NULL), sizeof want);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	bw_free(&w);
}

/* AMD64 DRAP: CFA=r10+0, then FP = *(rbp+0) (DW_CFA_expression breg6 0),
 * CFA = *(rbp-8): a flexible FDE. Control words: CFA r10 reg_p:
 * 10<<3|1 = 0x51; CFA deref rbp: 6<<3|2|1 = 0x33; FP deref rbp 0x33;
 * RA padding 0 before FP. info: count<<1, base bit 0 (unused). */
static void amd64_flex(void)
{
	synth s;
	bw_t w;
	sfe_set set;
	conv_verdicts v;
	synth_init(&s, ABI_AMD64, false);
	synth_fde(&s, 0x1000, 0x20, 0);
	cfi_row *r;
	r = synth_row(&s, 0x1000, 7, 8); r->ra = rule_off(-8);
	r = synth_row(&s, 0x1005, 10, 0); r->ra = rule_off(-8);
	r = synth_row(&s, 0x100e, 10, 0); r->ra = rule_off(-8);
	r->fp = rule_breg(CFI_RULE_EXPR, 6, 0);
	r = synth_row(&s, 0x1011, 0, 0); r->ra = rule_off(-8);
	r->fp = rule_breg(CFI_RULE_EXPR, 6, 0);
	r->cfa.kind = CFI_CFA_EXPR;
	r->cfa.expr.shape = CFI_EXPR_BREG_DEREF;
	r->cfa.expr.reg = 6;
	r->cfa.expr.off = -8;
	CHECK_EQ(build(&s, 0x2000, &w, &set, &v), E2S_ERR_OK);
	CHECK_EQ(set.nfuncs, 1);
	CHECK_EQ(set.funcs[0].fde_type, SF_FDE_TYPE_FLEX);
	static const uint8_t fres[] = {
		0, 5, 0, 0x01, 0x00,           /* attr: 4 FREs, INC ADDR1, FLEX */
		0x00, 0x04, 0x39, 0x08,        /* CFA sp+8: ctrl 7<<3|1 = 0x39 */
		0x05, 0x04, 0x51, 0x00,        /* CFA r10+0 */
		0x0e, 0x0a, 0x51, 0x00, 0x00, 0x33, 0x00, /* + pad + FP *(rbp+0) */
		0x11, 0x0a, 0x33, 0xf8, 0x00, 0x33, 0x00, /* CFA *(rbp-8) */
	};
	/* attr says 4 FREs */
	uint8_t want[sizeof fres];
	memcpy(want, fres, sizeof fres);
	want[0] = 4;
	want[1] = 0;
	want[2] = 0;
	CHECK(w.len == 28 + 16 + sizeof want);
	CHECK(w.len >= 44 && memcmp(w.data + 44, want, sizeof want) == 0);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	bw_free(&w);
}

/* s390x (big endian): stmg saves r11 at c-72, r14 at c-48; CFA
 * r15+160 -> word (160-160)/8 = 0, r15+320 -> 20; then a function with
 * only FP saved: RA padding word 0. */
static void s390x_be(void)
{
	synth s;
	bw_t w;
	sfe_set set;
	conv_verdicts v;
	synth_init(&s, ABI_S390X, true);
	synth_fde(&s, 0x100, 0x18, 0);
	cfi_row *r;
	synth_row(&s, 0x100, 15, 160);
	r = synth_row(&s, 0x106, 15, 160); r->fp = rule_off(-72); r->ra = rule_off(-48);
	r = synth_row(&s, 0x10a, 15, 320); r->fp = rule_off(-72); r->ra = rule_off(-48);
	r = synth_row(&s, 0x10e, 11, 320); r->fp = rule_off(-72); r->ra = rule_off(-48);
	synth_fde(&s, 0x200, 0x10, 0);
	synth_row(&s, 0x200, 15, 160);
	r = synth_row(&s, 0x206, 15, 160); r->fp = rule_off(-72);
	CHECK_EQ(build(&s, 0x1000, &w, &set, &v), E2S_ERR_OK);
	static const uint8_t hdr[] = {
		0xde, 0xe2, 0x03, 0x05, 0x04, 0x00, 0x00, 0x00, /* BE magic, abi 4, no fixed offsets */
		0, 0, 0, 2, 0, 0, 0, 6,
	};
	CHECK(w.len > sizeof hdr && memcmp(w.data, hdr, sizeof hdr) == 0);
	/* FDE 0 start: 0x100 - (0x1000 + 28) = -0xf1c -> ...fffff0e4 */
	static const uint8_t fde0[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0, 0xe4,
				       0, 0, 0, 0x18, 0, 0, 0, 0};
	CHECK(memcmp(w.data + 28, fde0, sizeof fde0) == 0);
	/* FREs of function 0 (ADDR1): info SP 1 word 0x03; 3 words SP 0x07;
	 * FP-based 3 words 0x06. -48 = 0xd0, -72 = 0xb8. */
	static const uint8_t f0[] = {
		0, 4, 0x00, 0x00, 0x00,
		0x00, 0x03, 0x00,
		0x06, 0x07, 0x00, 0xd0, 0xb8,
		0x0a, 0x07, 0x14, 0xd0, 0xb8,
		0x0e, 0x06, 0x14, 0xd0, 0xb8,
	};
	CHECK(memcmp(w.data + 28 + 32, f0, sizeof f0) == 0);
	static const uint8_t f1[] = {
		0, 2, 0x00, 0x00, 0x00,
		0x00, 0x03, 0x00,
		0x06, 0x07, 0x00, 0x00, 0xb8, /* RA padding 0 */
	};
	CHECK(memcmp(w.data + 28 + 32 + sizeof f0, f1, sizeof f1) == 0);
	CHECK_EQ(w.len, 28 + 32 + sizeof f0 + sizeof f1);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	bw_free(&w);
}

/* AArch64: B-key signed RA. func info: pauth bit 5 = 0x20; signal bit 7.
 * FRE info with mangled RA, 3 one-byte words, SP: 0x80|3<<1|1 = 0x87. */
static void aarch64_pauth(void)
{
	synth s;
	bw_t w;
	sfe_set set;
	conv_verdicts v;
	synth_init(&s, ABI_AARCH64, false);
	synth_fde(&s, 0x400, 0x1c, 1);
	cfi_row *r;
	synth_row(&s, 0x400, 31, 0);
	r = synth_row(&s, 0x404, 31, 0); r->ra_mangled = 1;
	r = synth_row(&s, 0x408, 31, 32); r->ra_mangled = 1;
	r->fp = rule_off(-32); r->ra = rule_off(-24);
	CHECK_EQ(build(&s, 0x0, &w, &set, &v), E2S_ERR_OK);
	CHECK_EQ(set.nfuncs, 1);
	CHECK_EQ(w.data[4], 2); /* SFRAME_ABI_AARCH64_ENDIAN_LITTLE (spec 2.1) */
	static const uint8_t f[] = {
		3, 0, 0xa0, 0x00, 0x00,  /* signal | pauth B, INC, ADDR1 */
		0x00, 0x03, 0x00,
		0x04, 0x83, 0x00,        /* mangled, 1 word */
		0x08, 0x87, 0x20, 0xe8, 0xe0,
	};
	CHECK_EQ(w.len, 28 + 16 + sizeof f);
	CHECK(memcmp(w.data + 44, f, sizeof f) == 0);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	bw_free(&w);
}

/* AArch64 flexible FDEs (spec 3.2; issue #19). CFA on sp: control word
 * 31 << 3 | 1 = 0xf9. FRE info of a flexible FRE: count << 1, base bit
 * 0, mangled bit 7. Functions, in address order:
 *   0x500 FP saved, RA in LR: CFA pair, RA padding 0, FP pair (ctrl 2 =
 *         deref, CFA-based), 5 words: info 0x0a;
 *   0x600 pac-ret, the signed LR parked in x13 (glibc 2.41 __clone):
 *         RA pair 13 << 3 | 1 = 0x69, offset 0, mangled: info 0x88; the
 *         rows around it keep their own mangled bit;
 *   0x700 LR in d8 (DWARF 72): 72 << 3 | 1 = 0x241 needs 2-byte words,
 *         info 1 << 5 | 4 << 1 = 0x28;
 *   0x800 CFA = *(x9 + 8), RA at CFA - 8: 9 << 3 | 2 | 1 = 0x4b;
 *   0x900 RA = CFA + 8 by value, CFA sp+16: RA = sp + 24;
 *   0xa00 an ordinary frame record: a default FDE (3 words, SP: 0x07);
 *   0xb00 RA = CFA + 8 by value with CFA = *(x9 + 8): ra-rule;
 *   0xc00 FP undefined: fp-rule.
 * Version 2 has no flexible FDE on AArch64: the five are skipped as
 * not-in-sframe-v2 there. */
static void aarch64_flex(void)
{
	synth s;
	bw_t w;
	sfe_set set;
	conv_verdicts v;
	cfi_row *r;
	synth_init(&s, ABI_AARCH64, false);
	synth_fde(&s, 0x500, 0x10, 0);
	r = synth_row(&s, 0x500, 31, 16); r->fp = rule_off(-16);
	synth_fde(&s, 0x600, 0x10, 0);
	synth_row(&s, 0x600, 31, 0);
	r = synth_row(&s, 0x604, 31, 0); r->ra_mangled = 1;
	r->ra = rule_kind(CFI_RULE_REGISTER, 13);
	r = synth_row(&s, 0x608, 31, 0); r->ra_mangled = 1;
	synth_fde(&s, 0x700, 8, 0);
	r = synth_row(&s, 0x700, 31, 0); r->ra = rule_kind(CFI_RULE_REGISTER, 72);
	synth_fde(&s, 0x800, 8, 0);
	r = synth_row(&s, 0x800, 0, 0); r->ra = rule_off(-8);
	r->cfa.kind = CFI_CFA_EXPR;
	r->cfa.expr.shape = CFI_EXPR_BREG_DEREF;
	r->cfa.expr.reg = 9;
	r->cfa.expr.off = 8;
	synth_fde(&s, 0x900, 8, 0);
	r = synth_row(&s, 0x900, 31, 16); r->ra = rule_off(8);
	r->ra.kind = CFI_RULE_VAL_OFFSET;
	synth_fde(&s, 0xa00, 8, 0);
	r = synth_row(&s, 0xa00, 31, 16); r->ra = rule_off(-8); r->fp = rule_off(-16);
	synth_fde(&s, 0xb00, 8, 0);
	r = synth_row(&s, 0xb00, 0, 0); r->ra = rule_off(8);
	r->ra.kind = CFI_RULE_VAL_OFFSET;
	r->cfa = s.row[s.t.nrows - 4].cfa; /* *(x9 + 8) */
	synth_fde(&s, 0xc00, 8, 0);
	r = synth_row(&s, 0xc00, 31, 0); r->fp = rule_kind(CFI_RULE_UNDEFINED, 0);
	CHECK_EQ(build(&s, 0x0, &w, &set, &v), E2S_ERR_OK);
	CHECK_EQ(set.nfuncs, 6);
	CHECK_EQ(v.counts[CONV_SKIP_NONE], 6);
	CHECK_EQ(v.fde_skip[6], CONV_SKIP_RA_RULE);
	CHECK_EQ(v.fde_skip[7], CONV_SKIP_FP_RULE);
	for (int k = 0; k < 6; k++)
		CHECK_EQ(set.funcs[k].fde_type, k == 5 ? SF_FDE_TYPE_DEFAULT : SF_FDE_TYPE_FLEX);
	static const uint8_t f[] = {
		1, 0, 0x00, 0x01, 0x00,
		0x00, 0x0a, 0xf9, 0x10, 0x00, 0x02, 0xf0,
		3, 0, 0x00, 0x01, 0x00,
		0x00, 0x04, 0xf9, 0x00,
		0x04, 0x88, 0xf9, 0x00, 0x69, 0x00,
		0x08, 0x84, 0xf9, 0x00,
		1, 0, 0x00, 0x01, 0x00,
		0x00, 0x28, 0xf9, 0x00, 0x00, 0x00, 0x41, 0x02, 0x00, 0x00,
		1, 0, 0x00, 0x01, 0x00,
		0x00, 0x08, 0x4b, 0x08, 0x02, 0xf8,
		1, 0, 0x00, 0x01, 0x00,
		0x00, 0x08, 0xf9, 0x10, 0xf9, 0x18,
		1, 0, 0x00, 0x00, 0x00,
		0x00, 0x07, 0x10, 0xf8, 0xf0,
	};
	CHECK_EQ(w.len, 28 + 6 * 16 + sizeof f);
	CHECK(w.len == 28 + 6 * 16 + sizeof f &&
	      memcmp(w.data + 28 + 6 * 16, f, sizeof f) == 0);
	/* The reader's view of the 0x600 FRE: RA from x13, signed. */
	sfr_section sec;
	e2s_diag d;
	size_t fi, ri;
	sfr_rules ru;
	CHECK_EQ(sfr_decode(w.data, w.len, 0x0, &sec, &d), E2S_ERR_OK);
	CHECK(sfr_find_fre(&sec, 0x606, &fi, &ri));
	CHECK_EQ(sfr_recover(&sec, &sec.fdes[fi], &sec.fres[ri], &ru, &d), E2S_ERR_OK);
	CHECK(ru.flex && ru.ra.kind == SFR_LOC_RULE && !ru.ra.base_cfa &&
	      ru.ra.reg == 13 && !ru.ra.deref && ru.ra.off == 0);
	CHECK(ru.mangled);
	sfr_free(&sec);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	bw_free(&w);

	sfe_encode_opts o = {.sframe_version = 2};
	bw_init(&w, false);
	CHECK_EQ(conv_build(&s.t, &o, &w, &set, &v, NULL, NULL, &d), E2S_ERR_OK);
	CHECK_EQ(set.nfuncs, 1);
	CHECK_EQ(v.counts[CONV_SKIP_V2], 5);
	CHECK_EQ(v.counts[CONV_SKIP_RA_RULE], 1);
	CHECK_EQ(v.counts[CONV_SKIP_FP_RULE], 1);
	CHECK_EQ(set.funcs[0].start, 0xa00);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	bw_free(&w);
}

/* Address and data-word widths: FRE at 0x100 -> ADDR2 (fre type 1); FRE
 * at 0x10000 -> ADDR4 (2); CFA offset 0x12345 -> 4-byte words: info
 * 2<<5 | 1<<1 | 1 = 0x43; 300 -> 2-byte words 0x23. */
static void widths(void)
{
	synth s;
	bw_t w;
	sfe_set set;
	conv_verdicts v;
	synth_init(&s, ABI_AMD64, false);
	cfi_row *r;
	synth_fde(&s, 0x10000, 0x200, 0);
	r = synth_row(&s, 0x10000, 7, 8); r->ra = rule_off(-8);
	r = synth_row(&s, 0x10100, 7, 300); r->ra = rule_off(-8);
	synth_fde(&s, 0x100000, 0x20000, 0);
	r = synth_row(&s, 0x100000, 7, 8); r->ra = rule_off(-8);
	r = synth_row(&s, 0x110000, 7, 0x12345); r->ra = rule_off(-8);
	CHECK_EQ(build(&s, 0x0, &w, &set, &v), E2S_ERR_OK);
	static const uint8_t f[] = {
		2, 0, 0x01, 0, 0,
		0x00, 0x00, 0x03, 0x08,
		0x00, 0x01, 0x23, 0x2c, 0x01,
		2, 0, 0x02, 0, 0,
		0, 0, 0, 0, 0x03, 0x08,
		0, 0, 1, 0, 0x43, 0x45, 0x23, 0x01, 0x00,
	};
	CHECK_EQ(w.len, 28 + 32 + sizeof f);
	CHECK(memcmp(w.data + 60, f, sizeof f) == 0);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	bw_free(&w);
}

/* PLT as GNU ld describes it: PLT0 rows, then the CFA expression with
 * K = 11 -> an INC FDE for PLT0 and a MASK FDE (info 0x10, rep 16) with
 * FREs 0 sp+8 and 11 sp+16. Outermost RA: 0 words, info byte 0. */
static void plt_and_outermost(void)
{
	synth s;
	bw_t w;
	sfe_set set;
	conv_verdicts v;
	synth_init(&s, ABI_AMD64, false);
	cfi_row *r;
	synth_fde(&s, 0x1000, 0x30, 0);
	r = synth_row(&s, 0x1000, 7, 16); r->ra = rule_off(-8);
	r = synth_row(&s, 0x1006, 7, 24); r->ra = rule_off(-8);
	r = synth_row(&s, 0x1010, 0, 0); r->ra = rule_off(-8);
	r->cfa.kind = CFI_CFA_EXPR;
	r->cfa.expr.shape = CFI_EXPR_PLT;
	r->cfa.expr.reg = 7;
	r->cfa.expr.off = 8;
	r->cfa.expr.plt_k = 11;
	synth_fde(&s, 0x1040, 2, 0);
	r = synth_row(&s, 0x1040, 7, 8); r->ra = rule_kind(CFI_RULE_UNDEFINED, 0);
	CHECK_EQ(build(&s, 0x0, &w, &set, &v), E2S_ERR_OK);
	CHECK_EQ(set.nfuncs, 3);
	static const uint8_t f[] = {
		2, 0, 0x00, 0, 0, 0x00, 0x03, 0x10, 0x06, 0x03, 0x18,
		2, 0, 0x10, 0, 16, 0x00, 0x03, 0x08, 0x0b, 0x03, 0x10,
		1, 0, 0x00, 0, 0, 0x00, 0x00,
	};
	CHECK_EQ(w.len, 28 + 48 + sizeof f);
	CHECK(memcmp(w.data + 76, f, sizeof f) == 0);
	/* sizes: PLT0 16, PLTn 32 */
	CHECK_EQ(w.data[28 + 8], 16);
	CHECK_EQ(w.data[44 + 8], 32);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	bw_free(&w);
}

/* SP held in a register: s390x leaf functions park r15 in an FPR while
 * the CFA is r15+160 (provenance k = 160: the copy is CFA - 160), so it
 * converts; a copy made after the frame grew (k = 320) or of unknown
 * provenance does not, and on AMD64 a register SP (longjmp-style code)
 * need not equal the CFA: skipped. */
static void sp_in_register(void)
{
	synth s;
	bw_t w;
	sfe_set set;
	conv_verdicts v;
	synth_init(&s, ABI_S390X, true);
	synth_fde(&s, 0x1000, 0x20, 0);
	synth_row(&s, 0x1000, 15, 160);
	cfi_row *r = synth_row(&s, 0x1004, 15, 160);
	r->sp = rule_kind(CFI_RULE_REGISTER, 18);
	r->sp.prov = CFI_PROV_KNOWN;
	r->sp.prov_k = 160;
	CHECK_EQ(build(&s, 0x0, &w, &set, &v), E2S_ERR_OK);
	CHECK_EQ(v.counts[CONV_SKIP_NONE], 1);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	bw_free(&w);
	for (int k = 0; k < 2; k++) {
		synth_init(&s, ABI_S390X, true);
		synth_fde(&s, 0x1000, 0x20, 0);
		synth_row(&s, 0x1000, 15, 160);
		r = synth_row(&s, 0x1004, 15, 320);
		r->sp = rule_kind(CFI_RULE_REGISTER, 18);
		r->sp.prov = k ? CFI_PROV_KNOWN : CFI_PROV_NONE;
		r->sp.prov_k = 320;
		CHECK_EQ(build(&s, 0x0, &w, &set, &v), E2S_ERR_NO_FUNCS);
		CHECK_EQ(v.counts[CONV_SKIP_SP_RULE], 1);
		sfe_set_free(&set);
		conv_verdicts_free(&v);
		bw_free(&w);
	}

	synth_init(&s, ABI_AMD64, false);
	synth_fde(&s, 0x1000, 0x20, 0);
	r = synth_row(&s, 0x1000, 7, 8);
	r->ra = rule_off(-8);
	r->sp = rule_kind(CFI_RULE_REGISTER, 1);
	synth_fde(&s, 0x2000, 0x20, 0);
	r = synth_row(&s, 0x2000, 7, 8);
	r->ra = rule_off(-8);
	build(&s, 0x0, &w, &set, &v);
	CHECK_EQ(v.counts[CONV_SKIP_SP_RULE], 1);
	CHECK_EQ(v.counts[CONV_SKIP_NONE], 1);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	bw_free(&w);
}

/* A PLT-shaped stub shorter than K: the second FRE would start past the
 * function end (libsframe asserts start <= size), so only FRE 0 is kept. */
static void plt_short_stub(void)
{
	synth s;
	bw_t w;
	sfe_set set;
	conv_verdicts v;
	synth_init(&s, ABI_AMD64, false);
	synth_fde(&s, 0x2000, 3, 0);
	cfi_row *r = synth_row(&s, 0x2000, 0, 0);
	r->ra = rule_off(-8);
	r->cfa.kind = CFI_CFA_EXPR;
	r->cfa.expr.shape = CFI_EXPR_PLT;
	r->cfa.expr.reg = 7;
	r->cfa.expr.off = 8;
	r->cfa.expr.plt_k = 11;
	CHECK_EQ(build(&s, 0x0, &w, &set, &v), E2S_ERR_OK);
	CHECK_EQ(set.nfuncs, 1);
	CHECK_EQ(set.funcs[0].pc_type, SF_FDE_PCTYPE_MASK);
	CHECK_EQ(set.funcs[0].fre_count, 1);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	bw_free(&w);
}

/* Sorting, duplicates, skips and the empty case. */
static void policy(void)
{
	synth s;
	bw_t w;
	sfe_set set;
	conv_verdicts v;
	synth_init(&s, ABI_AMD64, false);
	cfi_row *r;
	synth_fde(&s, 0x3000, 0x10, 0);
	r = synth_row(&s, 0x3000, 7, 8); r->ra = rule_off(-8);
	synth_fde(&s, 0x1000, 0x10, 0);
	r = synth_row(&s, 0x1000, 7, 8); r->ra = rule_off(-8);
	synth_fde(&s, 0x1008, 0x10, 0); /* overlaps the previous one */
	r = synth_row(&s, 0x1008, 7, 8); r->ra = rule_off(-8);
	synth_fde(&s, 0x2000, 0x10, 0); /* RA in a register: flex on AMD64 */
	r = synth_row(&s, 0x2000, 7, 8); r->ra = rule_kind(CFI_RULE_REGISTER, 1);
	synth_fde(&s, 0x4000, 0x10, 0); /* RA = CFA+8 value, CFA *(rbp-8):
	                                 * inexpressible */
	r = synth_row(&s, 0x4000, 7, 8);
	r->ra = rule_off(8);
	r->ra.kind = CFI_RULE_VAL_OFFSET;
	r->cfa.kind = CFI_CFA_EXPR;
	r->cfa.expr.shape = CFI_EXPR_BREG_DEREF;
	r->cfa.expr.reg = 6;
	r->cfa.expr.off = -8;
	synth_fde(&s, 0x5000, 0, 0);
	CHECK_EQ(build(&s, 0x0, &w, &set, &v), E2S_ERR_OK);
	CHECK_EQ(v.counts[CONV_SKIP_NONE], 3);
	CHECK_EQ(v.counts[CONV_SKIP_DUPLICATE], 1);
	CHECK_EQ(v.counts[CONV_SKIP_RA_RULE], 1);
	CHECK_EQ(v.counts[CONV_SKIP_EMPTY], 1);
	CHECK_EQ(v.fde_skip[2], CONV_SKIP_DUPLICATE);
	CHECK_EQ(set.nfuncs, 3);
	CHECK(set.funcs[0].start == 0x1000 && set.funcs[1].start == 0x2000 &&
	      set.funcs[2].start == 0x3000);
	CHECK_EQ(set.funcs[1].fde_type, SF_FDE_TYPE_FLEX);
	/* flex RA in r1: ctrl 1<<3|1 = 9, offset 0; 1-byte words after the
	 * attribute (5), the start and the info byte: CFA pair, RA pair */
	CHECK_EQ(set.enc[set.funcs[1].enc_off + 5 + 2 + 2], 9);
	/* determinism: the same input gives the same bytes */
	bw_t w2;
	sfe_set set2;
	conv_verdicts v2;
	CHECK_EQ(build(&s, 0x0, &w2, &set2, &v2), E2S_ERR_OK);
	CHECK(w.len == w2.len && memcmp(w.data, w2.data, w.len) == 0);
	sfe_set_free(&set2);
	conv_verdicts_free(&v2);
	bw_free(&w2);
	/* subset encoding and the empty case */
	sfe_encode_opts o = {.only = (const uint32_t[]){2}, .nonly = 1};
	bw_t w3;
	e2s_diag d;
	bw_init(&w3, false);
	CHECK_EQ(sfe_encode(&set, &o, &w3, NULL, NULL, &d), E2S_ERR_OK);
	CHECK_EQ(w3.len, 28 + 16 + 5 + 3);
	o.nonly = 0;
	CHECK_EQ(sfe_encoded_size(&set, &o), 0);
	bw_free(&w3);
	bw_init(&w3, false);
	CHECK_EQ(sfe_encode(&set, &o, &w3, NULL, NULL, &d), E2S_ERR_NO_FUNCS);
	CHECK_EQ(w3.len, 0);
	bw_free(&w3);
	/* relocatable: start fields 0, one relocation per FDE at 28 + 16i */
	sfe_reloc *rl = NULL;
	size_t nrl = 0;
	sfe_encode_opts ro = {.relocatable = true};
	bw_init(&w3, false);
	CHECK_EQ(sfe_encode(&set, &ro, &w3, &rl, &nrl, &d), E2S_ERR_OK);
	CHECK_EQ(nrl, 3);
	CHECK(rl && rl[1].offset == 44 && rl[1].func == 1);
	CHECK(w3.len > 36 && memcmp(w3.data + 28, "\0\0\0\0\0\0\0\0", 8) == 0);
	free(rl);
	bw_free(&w3);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	bw_free(&w);
}

/* > 65535 FREs: split into consecutive FDEs. */
static void split(void)
{
	size_t n = 70000;
	cfi_table t;
	cfi_cie cie;
	cfi_fde fde;
	cfi_row *rows = calloc(n, sizeof *rows);
	memset(&t, 0, sizeof t);
	memset(&cie, 0, sizeof cie);
	memset(&fde, 0, sizeof fde);
	for (size_t i = 0; i < n; i++) {
		rows[i].start = 0x10000 + 4 * i;
		rows[i].end = rows[i].start + 4;
		rows[i].cfa.kind = CFI_CFA_REG_OFF;
		rows[i].cfa.reg = 7;
		rows[i].cfa.off = 8 + 8 * (int64_t)(i & 1);
		rows[i].ra = rule_off(-8);
	}
	fde.pc_begin = 0x10000;
	fde.pc_range = 4 * n;
	fde.row_count = (uint32_t)n;
	t.abi = ABI_AMD64;
	t.cies = &cie;
	t.ncies = 1;
	t.fdes = &fde;
	t.nfdes = 1;
	t.rows = rows;
	t.nrows = n;
	sfe_set set;
	conv_verdicts v;
	e2s_diag d;
	CHECK_EQ(conv_project(&t, 0, &set, &v, &d), E2S_ERR_OK);
	CHECK_EQ(set.nfuncs, 2);
	CHECK_EQ(set.funcs[0].fre_count, 65535);
	CHECK_EQ(set.funcs[1].fre_count, n - 65535);
	CHECK_EQ(set.funcs[1].start, 0x10000 + 4 * 65535);
	CHECK_EQ(set.funcs[0].size + set.funcs[1].size, 4 * n);
	/* The second part's FREs start again at 0: its first FRE (after
	 * the 5-byte attribute) has start byte 0. */
	CHECK_EQ(set.enc[set.funcs[1].enc_off + 5], 0);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	free(rows);
}

#include "elf/elfr_sframe.h"

static uint32_t rd32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Three AMD64 functions of two rows each; the first two alike, the third
 * with another CFA offset in its second row. */
static void three_fdes(synth *s)
{
	cfi_row *r;
	synth_init(s, ABI_AMD64, false);
	for (int k = 0; k < 3; k++) {
		synth_fde(s, 0x1000 + 0x1000 * (uint64_t)k, 0x10, 0);
		r = synth_row(s, 0x1000 + 0x1000 * (uint64_t)k, 7, 8); r->ra = rule_off(-8);
		r = synth_row(s, 0x1001 + 0x1000 * (uint64_t)k, 7, k == 2 ? 24 : 16);
		r->ra = rule_off(-8);
	}
}

/* FRE sharing: A and B have identical attribute + FREs, C differs. Each
 * blob: attr 5 + 2 FREs * (start 1 + info 1 + one 1-byte word) = 11. */
static void share(void)
{
	synth s;
	e2s_diag d;
	three_fdes(&s);
	sfe_set set;
	conv_verdicts v;
	CHECK_EQ(conv_project(&s.t, 0, &set, &v, &d), E2S_ERR_OK);
	sfe_encode_opts o = {.section_vaddr = 0x8000, .share_fres = SFE_SHARE_NEVER};
	sfe_encode_stats st;
	bw_t plain, sh, again, dflt;
	bw_init(&plain, false);
	bw_init(&sh, false);
	bw_init(&again, false);
	bw_init(&dflt, false);
	CHECK_EQ(sfe_encode_ex(&set, &o, &plain, NULL, NULL, &st, &d), E2S_ERR_OK);
	CHECK_EQ(plain.len, 28 + 3 * 16 + 33);
	CHECK_EQ(st.fre_bytes, 33);
	CHECK(!sfe_share_p(&set, &o));
	o.share_fres = SFE_SHARE_ALWAYS;
	CHECK_EQ(sfe_encoded_size(&set, &o), 28 + 3 * 16 + 22);
	CHECK_EQ(sfe_encode_ex(&set, &o, &sh, NULL, NULL, &st, &d), E2S_ERR_OK);
	/* The default shares on a little-endian target (and so does a NULL
	 * opts), byte for byte as SFE_SHARE_ALWAYS; any value below 0 never
	 * shares. */
	o.share_fres = SFE_SHARE_DEFAULT;
	CHECK(sfe_share_p(&set, &o) && sfe_share_p(&set, NULL));
	CHECK_EQ(sfe_encode_ex(&set, &o, &dflt, NULL, NULL, &st, &d), E2S_ERR_OK);
	CHECK(dflt.len == sh.len && memcmp(dflt.data, sh.data, sh.len) == 0);
	o.share_fres = -7;
	CHECK_EQ(sfe_encoded_size(&set, &o), 28 + 3 * 16 + 33);
	/* Big-endian targets: unshared by default (a byte-swapping libsframe
	 * rejects shared data), shared only when asked. The sizes need no
	 * ABI id, so the set's byte order alone is flipped. */
	set.big_endian = true;
	o.share_fres = SFE_SHARE_DEFAULT;
	CHECK(!sfe_share_p(&set, &o) && !sfe_share_p(&set, NULL));
	CHECK_EQ(sfe_encoded_size(&set, &o), 28 + 3 * 16 + 33);
	o.share_fres = SFE_SHARE_ALWAYS;
	CHECK_EQ(sfe_encoded_size(&set, &o), 28 + 3 * 16 + 22);
	set.big_endian = false;
	sh.len = 0; /* again, for st */
	CHECK_EQ(sfe_encode_ex(&set, &o, &sh, NULL, NULL, &st, &d), E2S_ERR_OK);
	CHECK_EQ(sh.len, 28 + 3 * 16 + 22);
	CHECK(st.fre_bytes == 22 && st.fre_bytes_unshared == 33 && st.shared_fdes == 1);
	/* header: num_fres counts every FDE's FREs (3 * 2), fre_len stored */
	CHECK_EQ(rd32le(sh.data + 12), 6);
	CHECK_EQ(rd32le(sh.data + 16), 22);
	/* fre_off: A 0, B 0 (A's copy), C 11 */
	CHECK_EQ(rd32le(sh.data + 28 + 12), 0);
	CHECK_EQ(rd32le(sh.data + 28 + 16 + 12), 0);
	CHECK_EQ(rd32le(sh.data + 28 + 32 + 12), 11);
	/* the stored bytes are A's: attr 02 00 00 00 00, 00 03 08, 01 03 10 */
	static const uint8_t blob[] = {2, 0, 0, 0, 0, 0, 3, 8, 1, 3, 16};
	CHECK(memcmp(sh.data + 28 + 48, blob, sizeof blob) == 0);
	/* deterministic */
	CHECK_EQ(sfe_encode(&set, &o, &again, NULL, NULL, &d), E2S_ERR_OK);
	CHECK(again.len == sh.len && memcmp(again.data, sh.data, sh.len) == 0);
	/* the reader sees three functions with their own FREs */
	sfr_section sec;
	CHECK_EQ(sfr_decode(sh.data, sh.len, 0x8000, &sec, &d), E2S_ERR_OK);
	CHECK_EQ(sec.nfdes, 3);
	CHECK_EQ(sec.fdes[0].fre_first, sec.fdes[1].fre_first);
	CHECK(sec.fdes[2].fre_first != sec.fdes[0].fre_first);
	sfr_free(&sec);
	/* a header count of stored FREs (4) is refused */
	sh.data[12] = 4;
	CHECK_EQ(sfr_decode(sh.data, sh.len, 0x8000, &sec, &d), E2S_ERR_BAD_SFRAME);
	/* two FDEs whose runs overlap without being the same run: refused */
	sh.data[12] = 6;
	sh.data[28 + 32 + 12] = 5; /* C's fre_off into A's FREs */
	CHECK_EQ(sfr_decode(sh.data, sh.len, 0x8000, &sec, &d), E2S_ERR_BAD_SFRAME);
	bw_free(&plain);
	bw_free(&sh);
	bw_free(&again);
	bw_free(&dflt);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
}

/* share_runs (V2, where the FRE data has no attribute): B's FREs are
 * the first two of A's, so with share_runs B points at A's copy with a
 * count of its own; without it (whole lists differ) both are stored. */
static void share_runs(void)
{
	synth s;
	cfi_row *r;
	e2s_diag d;
	synth_init(&s, ABI_AMD64, false);
	synth_fde(&s, 0x1000, 0x10, 0);
	r = synth_row(&s, 0x1000, 7, 8); r->ra = rule_off(-8);
	r = synth_row(&s, 0x1001, 7, 16); r->ra = rule_off(-8);
	r = synth_row(&s, 0x1004, 7, 16); r->ra = rule_off(-8); r->fp = rule_off(-16);
	synth_fde(&s, 0x2000, 0x10, 0);
	r = synth_row(&s, 0x2000, 7, 8); r->ra = rule_off(-8);
	r = synth_row(&s, 0x2001, 7, 16); r->ra = rule_off(-8);
	sfe_encode_opts o = {.section_vaddr = 0x8000, .sframe_version = 2,
			     .share_fres = SFE_SHARE_ALWAYS};
	sfe_set set;
	conv_verdicts v;
	bw_t w;
	bw_init(&w, false);
	/* A: 00 03 08 | 01 03 10 | 04 05 10 f0 (10 bytes); B: the first 6 */
	CHECK_EQ(conv_build(&s.t, &o, &w, &set, &v, NULL, NULL, &d), E2S_ERR_OK);
	CHECK_EQ(set.nfuncs, 2);
	CHECK_EQ(rd32le(w.data + 16), 16); /* whole lists differ: both stored */
	w.len = 0;
	o.share_runs = true;
	CHECK_EQ(sfe_encoded_size(&set, &o), 28 + 2 * 20 + 10);
	CHECK_EQ(sfe_encode(&set, &o, &w, NULL, NULL, &d), E2S_ERR_OK);
	CHECK_EQ(rd32le(w.data + 16), 10);
	CHECK_EQ(rd32le(w.data + 28 + 20 + 8), 0); /* B's start_fre_off: A's */
	CHECK_EQ(rd32le(w.data + 28 + 20 + 12), 2); /* with its own count */
	sfr_section sec;
	CHECK_EQ(sfr_decode(w.data, w.len, 0x8000, &sec, &d), E2S_ERR_OK);
	CHECK(sec.nfdes == 2 && sec.fdes[1].nfres == 2 &&
	      sec.fres[sec.fdes[1].fre_first + 1].start == 1);
	sfr_free(&sec);
	/* share_runs needs sharing: with SFE_SHARE_NEVER nothing moves */
	o.share_fres = SFE_SHARE_NEVER;
	CHECK_EQ(sfe_encoded_size(&set, &o), 28 + 2 * 20 + 16);
	bw_free(&w);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
}

/* SFrame V2 (20-byte FDEs, no attribute in the FRE sub-section): a plain
 * function is written, a DRAP (flexible) one and a signal frame are
 * skipped as "not-in-sframe-v2". */
static void v2_amd64(void)
{
	synth s;
	cfi_row *r;
	e2s_diag d;
	synth_init(&s, ABI_AMD64, false);
	synth_fde(&s, 0x1000, 0x10, 0);
	r = synth_row(&s, 0x1000, 7, 8); r->ra = rule_off(-8);
	r = synth_row(&s, 0x1001, 7, 16); r->ra = rule_off(-8); r->fp = rule_off(-16);
	synth_fde(&s, 0x2000, 0x20, 0); /* DRAP: CFA in r10 -> flex in V3 */
	r = synth_row(&s, 0x2000, 10, 0); r->ra = rule_off(-8);
	synth_fde(&s, 0x3000, 0x10, 1); /* signal frame */
	r = synth_row(&s, 0x3000, 7, 8); r->ra = rule_off(-8);
	sfe_encode_opts o = {.section_vaddr = 0x8000, .sframe_version = 2};
	sfe_set set;
	conv_verdicts v;
	bw_t w;
	bw_init(&w, false);
	CHECK_EQ(conv_build(&s.t, &o, &w, &set, &v, NULL, NULL, &d), E2S_ERR_OK);
	CHECK_EQ(set.nfuncs, 1);
	CHECK_EQ(v.counts[CONV_SKIP_V2], 2);
	CHECK_EQ(v.counts[CONV_SKIP_NONE], 1);
	CHECK_EQ(v.fde_skip[1], CONV_SKIP_V2);
	CHECK_EQ(v.fde_skip[2], CONV_SKIP_V2);
	CHECK_STR(conv_skip_name(CONV_SKIP_V2), "not-in-sframe-v2");
	/* start = 0x1000 - (0x8000 + 28) = -0x701c */
	static const uint8_t want[] = {
		0xe2, 0xde, 2, 0x05, 3, 0, 0xf8, 0, /* magic, V2, SORTED|PCREL, AMD64 */
		1, 0, 0, 0, 2, 0, 0, 0, 7, 0, 0, 0, /* 1 FDE, 2 FREs, fre_len 7 */
		0, 0, 0, 0, 20, 0, 0, 0,            /* fdeoff 0, freoff 20 */
		0xe4, 0x8f, 0xff, 0xff,             /* int32 start */
		0x10, 0, 0, 0, 0, 0, 0, 0,          /* size, start_fre_off */
		2, 0, 0, 0, 0, 0, 0, 0,             /* num_fres, info, rep, pad */
		0, 0x03, 8,                         /* 0: sp+8 */
		1, 0x05, 16, 0xf0,                  /* 1: sp+16, fp at c-16 */
	};
	CHECK(bytes_eq(&w, want, sizeof want));
	sfr_section sec;
	CHECK_EQ(sfr_decode(w.data, w.len, 0x8000, &sec, &d), E2S_ERR_OK);
	CHECK(sec.nfdes == 1 && sec.blocks[0].version == 2 && sec.fdes[0].pc == 0x1000);
	sfr_free(&sec);
	/* sfe_encode refuses a set projected for V3 as V2: its caller's bug */
	sfe_set raw;
	bw_t w2;
	bw_init(&w2, false);
	conv_verdicts rawv;
	CHECK_EQ(conv_project(&s.t, 3, &raw, &rawv, &d), E2S_ERR_OK);
	CHECK_EQ(sfe_encode(&raw, &o, &w2, NULL, NULL, &d), E2S_ERR_INTERNAL);
	sfe_set_free(&raw);
	conv_verdicts_free(&rawv);
	bw_free(&w2);
	bw_free(&w);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
}

/* V2 outermost frames (RA undefined) have no FRE, since glibc's V2 walker
 * cannot read an FRE without data words: a wholly outermost function is
 * an FDE without FREs, a leading outermost row moves the first FRE, a
 * trailing one shortens the FDE, one between two others skips the
 * function. V3 keeps its FRE with 0 words (info byte 0). */
static void v2_outermost(void)
{
	synth s;
	cfi_row *r;
	e2s_diag d;
	synth_init(&s, ABI_AMD64, false);
	synth_fde(&s, 0x1000, 0x10, 0); /* _start-like */
	r = synth_row(&s, 0x1000, 7, 8); r->ra = rule_kind(CFI_RULE_UNDEFINED, 0);
	synth_fde(&s, 0x2000, 0x10, 0); /* leading */
	r = synth_row(&s, 0x2000, 7, 8); r->ra = rule_kind(CFI_RULE_UNDEFINED, 0);
	r = synth_row(&s, 0x2004, 7, 16); r->ra = rule_off(-8);
	synth_fde(&s, 0x3000, 0x10, 0); /* trailing */
	r = synth_row(&s, 0x3000, 7, 8); r->ra = rule_off(-8);
	r = synth_row(&s, 0x3004, 7, 8); r->ra = rule_kind(CFI_RULE_UNDEFINED, 0);
	synth_fde(&s, 0x4000, 0x10, 0); /* in the middle */
	r = synth_row(&s, 0x4000, 7, 8); r->ra = rule_off(-8);
	r = synth_row(&s, 0x4004, 7, 8); r->ra = rule_kind(CFI_RULE_UNDEFINED, 0);
	r = synth_row(&s, 0x4008, 7, 8); r->ra = rule_off(-8);
	sfe_encode_opts o = {.section_vaddr = 0x8000, .sframe_version = 2};
	sfe_set set;
	conv_verdicts v;
	bw_t w;
	bw_init(&w, false);
	CHECK_EQ(conv_build(&s.t, &o, &w, &set, &v, NULL, NULL, &d), E2S_ERR_OK);
	CHECK_EQ(v.counts[CONV_SKIP_NONE], 3);
	CHECK_EQ(v.fde_skip[3], CONV_SKIP_V2);
	/* starts: 0x1000 - 0x801c, 0x2000 - 0x8030, 0x3000 - 0x8044 */
	static const uint8_t want[] = {
		0xe2, 0xde, 2, 0x05, 3, 0, 0xf8, 0,
		3, 0, 0, 0, 2, 0, 0, 0, 6, 0, 0, 0, /* 3 FDEs, 2 FREs, 6 bytes */
		0, 0, 0, 0, 60, 0, 0, 0,
		0xe4, 0x8f, 0xff, 0xff, 0x10, 0, 0, 0, 0, 0, 0, 0, /* no FREs */
		0, 0, 0, 0, 0, 0, 0, 0,
		0xd0, 0x9f, 0xff, 0xff, 0x10, 0, 0, 0, 0, 0, 0, 0,
		1, 0, 0, 0, 0, 0, 0, 0,
		0xbc, 0xaf, 0xff, 0xff, 4, 0, 0, 0, 3, 0, 0, 0, /* size 4 */
		1, 0, 0, 0, 0, 0, 0, 0,
		4, 0x03, 16, /* first FRE at 4 */
		0, 0x03, 8,
	};
	CHECK(bytes_eq(&w, want, sizeof want));
	bw_free(&w);
	/* With share_fres (the first run is empty), and the outermost
	 * function alone: no FRE bytes at all. */
	o.share_fres = SFE_SHARE_ALWAYS;
	bw_init(&w, false);
	CHECK_EQ(sfe_encode(&set, &o, &w, NULL, NULL, &d), E2S_ERR_OK);
	CHECK(bytes_eq(&w, want, sizeof want));
	bw_free(&w);
	uint32_t only = 0;
	o.only = &only;
	o.nonly = 1;
	bw_init(&w, false);
	CHECK_EQ(sfe_encode(&set, &o, &w, NULL, NULL, &d), E2S_ERR_OK);
	CHECK(w.len == 28 + 20 && w.data[12] == 0 && w.data[16] == 0);
	bw_free(&w);
	o = (sfe_encode_opts){.section_vaddr = 0x8000};
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	/* V3: the outermost rows stay FREs with 0 data words */
	bw_init(&w, false);
	CHECK_EQ(conv_build(&s.t, &o, &w, &set, &v, NULL, NULL, &d), E2S_ERR_OK);
	CHECK_EQ(set.nfuncs, 4);
	sfr_section sec;
	CHECK_EQ(sfr_decode(w.data, w.len, 0x8000, &sec, &d), E2S_ERR_OK);
	CHECK(sec.nfdes == 4 && sec.fdes[0].nfres == 1 && sec.fres[sec.fdes[0].fre_first].ndw == 0);
	sfr_free(&sec);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	bw_free(&w);
}

/* V2 s390x: RA and FP copied to FPRs (flexible in V3) become default
 * words holding regnum << 1 | 1 (sframe.h SFRAME_V2_S390X_OFFSET_*). */
static void v2_s390x(void)
{
	synth s;
	cfi_row *r;
	e2s_diag d;
	synth_init(&s, ABI_S390X, true);
	synth_fde(&s, 0x2000, 0x10, 0);
	synth_row(&s, 0x2000, 15, 160);
	r = synth_row(&s, 0x2004, 15, 160);
	r->fp = rule_kind(CFI_RULE_REGISTER, 16);
	r->ra = rule_kind(CFI_RULE_REGISTER, 17);
	sfe_encode_opts o = {.section_vaddr = 0x1000, .sframe_version = 2};
	sfe_set set;
	conv_verdicts v;
	bw_t w;
	bw_init(&w, true);
	CHECK_EQ(conv_build(&s.t, &o, &w, &set, &v, NULL, NULL, &d), E2S_ERR_OK);
	CHECK_EQ(v.counts[CONV_SKIP_NONE], 1);
	CHECK_EQ(w.len, 28 + 20 + 3 + 5);
	/* FRE 1: start 4, info sp-based count 3 1-byte = 0x07,
	 * CFA (160-160)/8 = 0, RA 17<<1|1 = 0x23, FP 16<<1|1 = 0x21 */
	static const uint8_t fre1[] = {4, 0x07, 0, 0x23, 0x21};
	CHECK(w.len >= 56 && memcmp(w.data + 51, fre1, sizeof fre1) == 0);
	sfr_section sec;
	CHECK_EQ(sfr_decode(w.data, w.len, 0x1000, &sec, &d), E2S_ERR_OK);
	size_t fi, ri;
	sfr_rules ru;
	CHECK(sfr_find_fre(&sec, 0x2008, &fi, &ri));
	CHECK_EQ(sfr_recover(&sec, &sec.fdes[fi], &sec.fres[ri], &ru, &d), E2S_ERR_OK);
	CHECK(!ru.flex && ru.ra.kind == SFR_LOC_RULE && !ru.ra.base_cfa &&
	      ru.ra.reg == 17 && !ru.ra.deref && ru.fp.reg == 16);
	sfr_free(&sec);
	bw_free(&w);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
}

/* A plan made once (sfe_plan_make) gives the size sfe_encode writes and
 * the same bytes as the encoder's own layout, shared or not; a plan for
 * another selection is refused as an internal error. */
static void plan(void)
{
	synth s;
	e2s_diag d;
	three_fdes(&s);
	sfe_set set;
	conv_verdicts v;
	CHECK_EQ(conv_project(&s.t, 0, &set, &v, &d), E2S_ERR_OK);
	for (int share = -1; share <= 1; share += 2) {
		sfe_encode_opts o = {.section_vaddr = 0x8000, .share_fres = share};
		sfe_plan *pl;
		bw_t a, b;
		bw_init(&a, false);
		bw_init(&b, false);
		CHECK_EQ(sfe_plan_make(&set, &o, &pl, &d), E2S_ERR_OK);
		CHECK_EQ(sfe_encode(&set, &o, &a, NULL, NULL, &d), E2S_ERR_OK);
		CHECK_EQ(sfe_plan_size(pl), a.len);
		CHECK_EQ(sfe_encoded_size(&set, &o), a.len);
		o.plan = pl;
		CHECK_EQ(sfe_encode(&set, &o, &b, NULL, NULL, &d), E2S_ERR_OK);
		CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
		/* the plan of all three functions for a selection of one */
		o.only = (const uint32_t[]){1};
		o.nonly = 1;
		b.len = 0;
		CHECK_EQ(sfe_encode(&set, &o, &b, NULL, NULL, &d), E2S_ERR_INTERNAL);
		sfe_plan_free(pl);
		bw_free(&a);
		bw_free(&b);
	}
	sfe_set_free(&set);
	conv_verdicts_free(&v);
}

int main(void)
{
	plan();
	share();
	share_runs();
	v2_amd64();
	v2_s390x();
	v2_outermost();
	amd64_frame();
	amd64_flex();
	s390x_be();
	aarch64_pauth();
	aarch64_flex();
	widths();
	plt_and_outermost();
	plt_short_stub();
	sp_in_register();
	policy();
	split();
	return t_done("test_sfe_encode");
}
