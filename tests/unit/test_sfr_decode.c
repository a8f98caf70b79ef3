/* Reader tests: round trips through encoder -> decoder -> Appendix A
 * recovery (expected rules written from the DWARF meaning, not from the
 * encoder), hostile inputs, concatenated blocks. (The verifier has its
 * own tests, from CFI bytes: test_vf.c.) */
#include "test_sfe_synth.h"
#include "convert/convert.h"
#include "elf/elfr_sframe.h"
#include "sframe/sfr_spec.h"
#include "sframe/sframe_fmt.h"
#include "t.h"
#include "t_files.h"

static void encode(synth *s, uint64_t vaddr, bw_t *w)
{
	sfe_encode_opts o = {.section_vaddr = vaddr};
	e2s_diag d;
	bw_init(w, s->t.big_endian);
	CHECK_EQ(conv_build(&s->t, &o, w, NULL, NULL, NULL, NULL, &d), E2S_ERR_OK);
}

static bool rules_at(const sfr_section *sec, uint64_t pc, sfr_rules *ru)
{
	size_t fi, ri;
	if (!sfr_find_fre(sec, pc, &fi, &ri))
		return false;
	return sfr_recover(sec, &sec->fdes[fi], &sec->fres[ri], ru, NULL) == E2S_ERR_OK;
}

static bool is_stack(const sfr_loc *l, int64_t off)
{
	return l->kind == SFR_LOC_RULE && l->base_cfa && l->deref && l->off == off;
}

static void roundtrip_amd64(void)
{
	synth s;
	bw_t w;
	sfr_section sec;
	e2s_diag d;
	sfr_rules ru;
	cfi_row *r;
	synth_init(&s, ABI_AMD64, false);
	synth_fde(&s, 0x401000, 7, 0);
	r = synth_row(&s, 0x401000, 7, 8);  r->ra = rule_off(-8);
	r = synth_row(&s, 0x401001, 7, 16); r->ra = rule_off(-8); r->fp = rule_off(-16);
	r = synth_row(&s, 0x401004, 6, 16); r->ra = rule_off(-8); r->fp = rule_off(-16);
	synth_fde(&s, 0x402000, 0x20, 0); /* DRAP: flex */
	r = synth_row(&s, 0x402000, 10, 0); r->ra = rule_off(-8);
	r = synth_row(&s, 0x402008, 0, 0); r->ra = rule_off(-8);
	r->fp = rule_breg(CFI_RULE_EXPR, 6, 0);
	r->cfa.kind = CFI_CFA_EXPR;
	r->cfa.expr.shape = CFI_EXPR_BREG_DEREF;
	r->cfa.expr.reg = 6;
	r->cfa.expr.off = -8;
	encode(&s, 0x500000, &w);
	CHECK_EQ(sfr_decode(w.data, w.len, 0x500000, &sec, &d), E2S_ERR_OK);
	CHECK_EQ(sec.nfdes, 2);
	CHECK_EQ(sec.fdes[0].pc, 0x401000);
	CHECK(rules_at(&sec, 0x401000, &ru));
	CHECK(ru.cfa_reg == 7 && ru.cfa_off == 8 && !ru.cfa_deref);
	CHECK(is_stack(&ru.ra, -8) && ru.ra.fixed);
	CHECK_EQ(ru.fp.kind, SFR_LOC_UNCHANGED);
	CHECK(rules_at(&sec, 0x401003, &ru));
	CHECK(ru.cfa_reg == 7 && ru.cfa_off == 16 && is_stack(&ru.fp, -16));
	CHECK(rules_at(&sec, 0x401006, &ru));
	CHECK(ru.cfa_reg == 6 && ru.cfa_off == 16);
	CHECK(!rules_at(&sec, 0x401007, &ru)); /* past the end */
	CHECK(rules_at(&sec, 0x402004, &ru));
	CHECK(ru.flex && ru.cfa_reg == 10 && ru.cfa_off == 0 && is_stack(&ru.ra, -8));
	CHECK(rules_at(&sec, 0x402010, &ru));
	CHECK(ru.cfa_reg == 6 && ru.cfa_deref && ru.cfa_off == -8);
	CHECK(ru.fp.kind == SFR_LOC_RULE && !ru.fp.base_cfa && ru.fp.reg == 6 &&
	      ru.fp.deref && ru.fp.off == 0);
	/* The CFA offset of the sp+16 FRE (FRE 1 of function 0: attr 5 +
	 * FRE0 3 bytes + start + info). */
	size_t at = 28 + 32 + 5 + 3 + 2;
	CHECK_EQ(w.data[at], 16);
	sfr_free(&sec);
	bw_free(&w);
}

static void roundtrip_s390x(void)
{
	synth s;
	bw_t w;
	sfr_section sec;
	e2s_diag d;
	sfr_rules ru;
	cfi_row *r;
	synth_init(&s, ABI_S390X, true);
	synth_fde(&s, 0x1000, 0x20, 0);
	synth_row(&s, 0x1000, 15, 160);
	r = synth_row(&s, 0x1006, 15, 160); r->fp = rule_off(-72);
	r->sp = rule_off(-40); /* stmg saved r15 too, while CFA = r15+160 */
	r->sp.prov = CFI_PROV_KNOWN;
	r->sp.prov_k = 160;
	r = synth_row(&s, 0x100a, 15, 100000); r->fp = rule_off(-72); r->ra = rule_off(-48);
	synth_fde(&s, 0x2000, 0x10, 0); /* leaf: RA, FP in FPRs -> flex */
	synth_row(&s, 0x2000, 15, 160);
	r = synth_row(&s, 0x2004, 15, 160);
	r->fp = rule_kind(CFI_RULE_REGISTER, 16);
	r->ra = rule_kind(CFI_RULE_REGISTER, 17);
	synth_fde(&s, 0x3000, 0x10, 0); /* CFA offset not a multiple of 8 */
	synth_row(&s, 0x3000, 15, 164);
	encode(&s, 0x10000, &w);
	CHECK_EQ(sfr_decode(w.data, w.len, 0x10000, &sec, &d), E2S_ERR_OK);
	CHECK_EQ(sec.nfdes, 2);
	CHECK(sec.blocks[0].big_endian);
	CHECK(rules_at(&sec, 0x1000, &ru));
	CHECK(ru.cfa_reg == 15 && ru.cfa_off == 160 && ru.sp_off == -160);
	CHECK(ru.ra.kind == SFR_LOC_UNCHANGED && ru.fp.kind == SFR_LOC_UNCHANGED);
	CHECK(rules_at(&sec, 0x1007, &ru));
	CHECK(ru.ra.kind == SFR_LOC_UNCHANGED && is_stack(&ru.fp, -72));
	CHECK(rules_at(&sec, 0x100b, &ru));
	CHECK(ru.cfa_off == 100000 && is_stack(&ru.ra, -48) && is_stack(&ru.fp, -72));
	/* (100000 - 160) / 8 = 12480 needs 2-byte words */
	CHECK_EQ(sec.fres[2].dwbytes, 2);
	CHECK(rules_at(&sec, 0x2008, &ru));
	CHECK(ru.flex && ru.cfa_off == 160);
	CHECK(ru.ra.kind == SFR_LOC_RULE && !ru.ra.base_cfa && ru.ra.reg == 17 &&
	      !ru.ra.deref && ru.ra.off == 0);
	CHECK(ru.fp.kind == SFR_LOC_RULE && ru.fp.reg == 16 && !ru.fp.deref);
	CHECK_EQ(sec.nfdes, 2); /* of 3: one has no SFrame form */
	sfr_free(&sec);
	bw_free(&w);
}

static void roundtrip_aarch64(void)
{
	synth s;
	bw_t w;
	sfr_section sec;
	e2s_diag d;
	sfr_rules ru;
	cfi_row *r;
	synth_init(&s, ABI_AARCH64, false);
	synth_fde(&s, 0x400, 0x100, 1);
	synth_row(&s, 0x400, 31, 0);
	r = synth_row(&s, 0x404, 31, 0); r->ra_mangled = 1;
	r = synth_row(&s, 0x408, 29, 32); r->ra_mangled = 1;
	r->fp = rule_off(-32); r->ra = rule_off(-24);
	synth_fde(&s, 0x600, 0x10, 0);
	r = synth_row(&s, 0x600, 31, 16); r->ra = rule_kind(CFI_RULE_UNDEFINED, 0);
	encode(&s, 0x0, &w);
	CHECK_EQ(sfr_decode(w.data, w.len, 0x0, &sec, &d), E2S_ERR_OK);
	CHECK(sec.fdes[0].pauth_b && sec.fdes[0].signal);
	CHECK(rules_at(&sec, 0x404, &ru));
	CHECK(ru.mangled && ru.ra.kind == SFR_LOC_UNCHANGED);
	CHECK(rules_at(&sec, 0x4ff, &ru));
	CHECK(ru.mangled && ru.cfa_reg == 29 && ru.cfa_off == 32 &&
	      is_stack(&ru.ra, -24) && is_stack(&ru.fp, -32));
	CHECK(rules_at(&sec, 0x600, &ru));
	CHECK(ru.outermost);
	/* Concatenated blocks (what ld.lld makes of two .sframe inputs),
	 * second one after zero padding to 8 bytes. */
	size_t len1 = w.len, pad = (8 - len1 % 8) % 8;
	bw_t cat;
	bw_init(&cat, false);
	bw_bytes(&cat, w.data, len1);
	bw_zero(&cat, pad);
	bw_bytes(&cat, w.data, len1);
	sfr_free(&sec);
	CHECK_EQ(sfr_decode(cat.data, cat.len, 0x0, &sec, &d), E2S_ERR_OK);
	CHECK_EQ(sec.nblocks, 2);
	CHECK_EQ(sec.nfdes, 4);
	/* PC-relative starts of the second copy point len1 + pad further */
	CHECK_EQ(sec.fdes[2].pc, 0x400 + len1 + pad);
	sfr_free(&sec);
	bw_free(&cat);
	bw_free(&w);
}

/* Hostile input: every malformation is a clean error, never a crash. */
static void hostile(void)
{
	synth s;
	bw_t w;
	sfr_section sec;
	e2s_diag d;
	cfi_row *r;
	synth_init(&s, ABI_AMD64, false);
	synth_fde(&s, 0x1000, 0x40, 0);
	r = synth_row(&s, 0x1000, 7, 8); r->ra = rule_off(-8);
	r = synth_row(&s, 0x1001, 7, 16); r->ra = rule_off(-8);
	r = synth_row(&s, 0x1004, 7, 24); r->ra = rule_off(-8);
	encode(&s, 0x0, &w);
	uint8_t *b = malloc(w.len);
	size_t n = w.len;
	/* sanity */
	memcpy(b, w.data, n);
	CHECK_EQ(sfr_decode(b, n, 0, &sec, &d), E2S_ERR_OK);
	sfr_free(&sec);
	/* every truncation fails */
	int ok_trunc = 1;
	for (size_t k = 0; k < n; k++)
		if (sfr_decode(b, k, 0, &sec, &d) == E2S_ERR_OK) {
			ok_trunc = 0;
			sfr_free(&sec);
		}
	CHECK(ok_trunc);
	/* bad magic */
	b[0] = 0x12;
	CHECK_EQ(sfr_decode(b, n, 0, &sec, &d), E2S_ERR_BAD_SFRAME);
	memcpy(b, w.data, n);
	/* version 1 */
	b[2] = 1;
	CHECK_EQ(sfr_decode(b, n, 0, &sec, &d), E2S_ERR_SFRAME_VERSION);
	memcpy(b, w.data, n);
	/* num_fdes past the end */
	b[8] = 0xff; b[9] = 0xff; b[10] = 0xff;
	CHECK_EQ(sfr_decode(b, n, 0, &sec, &d), E2S_ERR_BAD_SFRAME);
	memcpy(b, w.data, n);
	/* num_fres too large */
	b[12] = 0xff; b[13] = 0xff;
	CHECK_EQ(sfr_decode(b, n, 0, &sec, &d), E2S_ERR_BAD_SFRAME);
	memcpy(b, w.data, n);
	/* FRE offset of the FDE out of bounds */
	b[28 + 12] = 0x40;
	CHECK_EQ(sfr_decode(b, n, 0, &sec, &d), E2S_ERR_BAD_SFRAME);
	CHECK_EQ(d.offset, 28);
	memcpy(b, w.data, n);
	/* auxhdr_len past the end */
	b[7] = 0xff;
	CHECK_EQ(sfr_decode(b, n, 0, &sec, &d), E2S_ERR_BAD_SFRAME);
	memcpy(b, w.data, n);
	/* FRE starts not increasing: FRE 2 start (0x04) -> 0x01 */
	size_t fre2 = 28 + 16 + 5 + 3 + 3;
	CHECK_EQ(b[fre2], 0x04);
	b[fre2] = 0x01;
	CHECK_EQ(sfr_decode(b, n, 0, &sec, &d), E2S_ERR_BAD_SFRAME);
	CHECK_EQ(d.offset, fre2);
	memcpy(b, w.data, n);
	/* FRE start past the function size */
	b[fre2] = 0x40;
	CHECK_EQ(sfr_decode(b, n, 0, &sec, &d), E2S_ERR_BAD_SFRAME);
	memcpy(b, w.data, n);
	/* data word size 3 (invalid) */
	b[fre2 + 1] |= 0x60;
	CHECK_EQ(sfr_decode(b, n, 0, &sec, &d), E2S_ERR_BAD_SFRAME);
	memcpy(b, w.data, n);
	/* 3 data words on AMD64 default FDE: count invalid, and runs out */
	b[fre2 + 1] = (uint8_t)SF_FRE_INFO(false, 3, 0, false);
	CHECK_EQ(sfr_decode(b, n, 0, &sec, &d), E2S_ERR_BAD_SFRAME);
	memcpy(b, w.data, n);
	/* num_fres in the attribute larger than the sub-section */
	b[28 + 16] = 0xff;
	CHECK_EQ(sfr_decode(b, n, 0, &sec, &d), E2S_ERR_BAD_SFRAME);
	memcpy(b, w.data, n);
	/* unknown flags bit, unknown ABI, BE magic with an LE ABI */
	b[3] |= 0x80;
	CHECK_EQ(sfr_decode(b, n, 0, &sec, &d), E2S_ERR_BAD_SFRAME);
	memcpy(b, w.data, n);
	b[4] = 9;
	CHECK_EQ(sfr_decode(b, n, 0, &sec, &d), E2S_ERR_BAD_SFRAME);
	memcpy(b, w.data, n);
	b[0] = 0xde; b[1] = 0xe2;
	CHECK_EQ(sfr_decode(b, n, 0, &sec, &d), E2S_ERR_BAD_SFRAME);
	/* trailing garbage after a valid block */
	uint8_t *g = malloc(n + 9);
	memcpy(g, w.data, n);
	memset(g + n, 0, 9);
	CHECK_EQ(sfr_decode(g, n + 9, 0, &sec, &d), E2S_ERR_OK); /* zero tail ok */
	sfr_free(&sec);
	g[n + 8] = 1;
	CHECK_EQ(sfr_decode(g, n + 9, 0, &sec, &d), E2S_ERR_BAD_SFRAME);
	/* random bytes never crash (ASan/UBSan watch) */
	unsigned seed = 1;
	for (int it = 0; it < 20000; it++) {
		memcpy(b, w.data, n);
		for (int k = 0; k < 3; k++) {
			seed = seed * 1103515245u + 12345u;
			b[(seed >> 8) % n] = (uint8_t)(seed >> 20);
		}
		if (sfr_decode(b, n, 0, &sec, &d) == E2S_ERR_OK) {
			sfr_rules ru;
			for (size_t f = 0; f < sec.nfdes; f++)
				for (uint16_t j = 0; j < sec.fdes[f].nfres; j++)
					(void)sfr_recover(&sec, &sec.fdes[f],
							  &sec.fres[sec.fdes[f].fre_first + j],
							  &ru, NULL);
			size_t fi, ri;
			(void)sfr_find_fre(&sec, 0x1010, &fi, &ri);
			sfr_free(&sec);
		}
	}
	free(g);
	free(b);
	bw_free(&w);
}

/* Relocatable: two functions at offset 0 of different sections must be
 * told apart by section index; a start field without its relocation is
 * an extra function (and its DWARF FDE goes unmatched). */
static void relocatable(void)
{
	synth s;
	bw_t w;
	sfr_section sec;
	e2s_diag d;
	cfi_row *r;
	sfe_reloc *rl = NULL;
	size_t nrl = 0;
	sfe_set set;
	synth_init(&s, ABI_AMD64, false);
	s.t.relocatable = true;
	synth_fde(&s, 0, 8, 0);
	*synth_rel(&s) = (cfi_reloc_ref){.present = true, .sym = 3, .shndx = 2, .addend = 0};
	r = synth_row(&s, 0, 7, 8); r->ra = rule_off(-8);
	r = synth_row(&s, 1, 7, 16); r->ra = rule_off(-8);
	synth_fde(&s, 0, 8, 0);
	*synth_rel(&s) = (cfi_reloc_ref){.present = true, .sym = 4, .shndx = 5, .addend = 0};
	r = synth_row(&s, 0, 7, 8); r->ra = rule_off(-8);
	r = synth_row(&s, 1, 7, 32); r->ra = rule_off(-8);
	synth_fde(&s, 0x10, 4, 0); /* second function of section 2 */
	*synth_rel(&s) = (cfi_reloc_ref){.present = true, .sym = 3, .shndx = 2, .addend = 0x10};
	r = synth_row(&s, 0x10, 7, 8); r->ra = rule_off(-8);
	sfe_encode_opts o = {.relocatable = true};
	bw_init(&w, false);
	CHECK_EQ(conv_build(&s.t, &o, &w, &set, NULL, &rl, &nrl, &d), E2S_ERR_OK);
	CHECK_EQ(nrl, 3);
	sfr_relfield rf[3];
	for (size_t i = 0; i < nrl && i < 3; i++) {
		sfe_reloc_ref fn = conv_func_reloc(&s.t, &set.funcs[rl[i].func]);
		/* what the linker would see: section symbol + addend */
		rf[i] = (sfr_relfield){rl[i].offset, fn.shndx,
				       (uint64_t)fn.addend};
		/* the field itself holds 0 until relocated */
		CHECK_EQ(w.data[rl[i].offset], 0);
	}
	/* sorted by (section, start): [2]+0, [2]+0x10, [5]+0 */
	CHECK(rf[0].shndx == 2 && rf[0].value == 0 && rf[1].shndx == 2 &&
	      rf[1].value == 0x10 && rf[2].shndx == 5);
	CHECK_EQ(sfr_decode_rel(w.data, w.len, rf, 3, &sec, &d), E2S_ERR_OK);
	CHECK(sec.relocatable);
	size_t fi, ri;
	CHECK(sfr_find_fre_sec(&sec, 5, 2, &fi, &ri));
	CHECK_EQ(sfr_dw(&sec.fres[ri], 0), 32);
	CHECK(sfr_find_fre_sec(&sec, 2, 2, &fi, &ri));
	CHECK_EQ(sfr_dw(&sec.fres[ri], 0), 16);
	CHECK(!sfr_find_fre_sec(&sec, 3, 2, &fi, &ri));
	sfr_free(&sec);
	/* swap the sections of the first two relocations: the reader
	 * follows the relocations (FRE of [2]+0 now found in section 5) */
	rf[0].shndx = 5;
	rf[2].shndx = 2;
	w.data[3] &= (uint8_t)~SF_F_FDE_SORTED; /* no longer sorted */
	CHECK_EQ(sfr_decode_rel(w.data, w.len, rf, 3, &sec, &d), E2S_ERR_OK);
	CHECK(sfr_find_fre_sec(&sec, 5, 2, &fi, &ri));
	CHECK_EQ(sfr_dw(&sec.fres[ri], 0), 16);
	sfr_free(&sec);
	free(rl);
	sfe_set_free(&set);
	bw_free(&w);
}

/* elfr_sframe_read_mem finds what elfr_sframe_read finds, from the bytes alone:
 * a relocatable object (start fields from .rela.sframe), a linked
 * little-endian and a big-endian file. TMPDIR names no directory, so a
 * temporary file could not be made. Cut and foreign images fail cleanly
 * with the path version's codes. */
static void same_elf(const elfr_sframe *a, const elfr_sframe *b)
{
	CHECK_EQ(a->size, b->size);
	CHECK(a->size == b->size && memcmp(a->data, b->data, a->size) == 0);
	CHECK_EQ(a->vaddr, b->vaddr);
	CHECK_EQ(a->relocatable, b->relocatable);
	CHECK_EQ(a->nparts, b->nparts);
	CHECK(a->nparts == b->nparts &&
	      memcmp(a->parts, b->parts, a->nparts * sizeof *a->parts) == 0);
	CHECK_EQ(a->nfields, b->nfields);
	CHECK(a->nfields == b->nfields &&
	      (!a->nfields ||
	       memcmp(a->fields, b->fields, a->nfields * sizeof *a->fields) == 0));
	CHECK_EQ(a->bad_relocs, b->bad_relocs);
}

static void elf_mem(void)
{
	static const char *const files[] = {"tests/data/gas/x86_prog.obj",
					    "tests/data/gas/x86_plt.dso",
					    "tests/data/gas/s390x_plt.dso"};
	const char *old = getenv("TMPDIR");
	char *saved = old ? strdup(old) : NULL;
	elfr_sframe a, b;
	sfr_section sec;
	e2s_diag d;

	setenv("TMPDIR", "/nonexistent-eh2sframe-tmpdir", 1);
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		size_t n = 0;
		unsigned char *img = slurp(files[i], &n);
		CHECK(img != NULL);
		if (!img)
			continue;
		CHECK_EQ(elfr_sframe_read(files[i], &a, &d), E2S_ERR_OK);
		CHECK_EQ(elfr_sframe_read_mem(img, n, &b, &d), E2S_ERR_OK);
		same_elf(&a, &b);
		CHECK_EQ(b.relocatable, i == 0);
		CHECK(b.nparts > 0);
		CHECK(i != 0 || b.nfields > 0);
		/* The result keeps no pointer into the image. */
		memset(img, 0xa5, n);
		CHECK_EQ(elfr_sframe_decode(&b, &sec, &d), E2S_ERR_OK);
		CHECK(sec.nfdes > 0);
		sfr_free(&sec);
		elfr_sframe_free(&a);
		elfr_sframe_free(&b);
		/* Cut inside the section headers (at the end of these files):
		 * an error, never a read past the image (ASan). */
		CHECK(elfr_sframe_read_mem(img, n - 8, &b, &d) != E2S_ERR_OK);
		free(img);
	}
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);

	static const char text[] = "#!/bin/sh\n";
	memset(&d, 0, sizeof d);
	CHECK_EQ(elfr_sframe_read_mem(text, sizeof text, &a, &d), E2S_ERR_NOT_ELF);
	CHECK_EQ(elfr_sframe_read_mem(NULL, 0, &a, &d), E2S_ERR_NOT_ELF);
	CHECK(a.data == NULL && a.nparts == 0);
	/* The path version: its own open error, else the image's. */
	CHECK_EQ(elfr_sframe_read("/nonexistent/file", &a, &d), E2S_ERR_IO);
	CHECK_STR(d.detail, "cannot open");
	CHECK_EQ(elfr_sframe_read("/tmp", &a, &d), E2S_ERR_NOT_ELF);
	CHECK_EQ(elfr_sframe_read("/dev/null", &a, &d), E2S_ERR_NOT_ELF);
	/* An ELF file without SFrame: the same message both ways. */
	size_t n = 0;
	unsigned char *img = slurp("/bin/true", &n);
	if (img) {
		CHECK_EQ(elfr_sframe_read_mem(img, n, &a, &d), E2S_ERR_BAD_SFRAME);
		CHECK_STR(d.detail, "no .sframe section");
		free(img);
	}
}

/* The reader's own layout (sfr_spec.h) on bytes written from the spec's
 * text and examples, not from the writer's header. */
static void spec_fields(void)
{
	/* 2.4.1: gas writes 0x05 for CFA = sp+16 with FP saved (two 1-byte
	 * words, SP base) and 0x04 for fp+16 (FP base). */
	CHECK(!sfr_fre_cfa_fp_p(0x05));
	CHECK_EQ(sfr_fre_dwcount(0x05), 2);
	CHECK_EQ(sfr_fre_dwsize(0x05), SFR_DW_1B);
	CHECK(sfr_fre_cfa_fp_p(0x04));
	/* mangled RA, 4-byte words, 15 of them, FP base */
	CHECK(sfr_fre_mangled_p(0xc0 | 15 << 1));
	CHECK_EQ(sfr_fre_dwsize(0xc0 | 15 << 1), SFR_DW_4B);
	CHECK_EQ(sfr_fre_dwcount(0xc0 | 15 << 1), 15);
	CHECK(!sfr_fre_mangled_p(0x7f));
	/* 2.3.3: signal (7), unused (6), pauth key B (5), MASK (4), ADDR4 */
	CHECK(sfr_info_signal_p(0x80) && !sfr_info_signal_p(0x40));
	CHECK(sfr_info_pauth_b_p(0x20) && !sfr_info_pauth_b_p(0x40));
	CHECK_EQ(sfr_info_pctype(0x10), SFR_PCTYPE_MASK);
	CHECK_EQ(sfr_info_pctype(0xef), SFR_PCTYPE_INC);
	CHECK_EQ(sfr_info_fretype(0xf2), SFR_FRETYPE_ADDR4);
	CHECK_EQ(sfr_info2_fdetype(0xe1), SFR_FDETYPE_FLEX);
	/* 3.2 examples: CFA = *(RBP - 8) is (6 << 3) | (1 << 1) | 1;
	 * RA = *(CFA - 8) is (0 << 3) | (1 << 1) | 0. */
	CHECK(sfr_ctl_reg_p(0x33) && sfr_ctl_deref_p(0x33));
	CHECK_EQ(sfr_ctl_regnum(0x33), 6);
	CHECK(!sfr_ctl_unused_p(0x33));
	CHECK(!sfr_ctl_reg_p(0x02) && sfr_ctl_deref_p(0x02));
	CHECK(sfr_ctl_unused_p(0x04));
	/* 2.2 and 2.3: sizes from the field tables */
	CHECK_EQ(SFR_HEADER_LEN, 0x18 + 4);
	CHECK_EQ(SFR_FDE_INDEX_LEN, 0x0c + 4);
	CHECK_EQ(SFR_FDE_ATTR_LEN, 0x04 + 1);
	CHECK_EQ(sfr_s390x_cfa_off(-20), 0);
	CHECK_EQ(sfr_s390x_cfa_off(0) + SFR_S390X_SP_FROM_CFA, 0);
}

int main(void)
{
	spec_fields();
	relocatable();
	elf_mem();
	roundtrip_amd64();
	roundtrip_s390x();
	roundtrip_aarch64();
	hostile();
	return t_done("test_sfr_decode");
}
