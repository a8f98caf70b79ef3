/* Public API, sections in memory (eh2s_convert_section,
 * eh2s_verify_section):
 * - hand-built .eh_frame for x86-64 and AArch64 (both byte orders): the
 *   .sframe bytes are decoded here, field by field, from the SFrame V3
 *   specification (sections 2-3) and compared with what the CFI says;
 * - /bin/ls and a big-endian s390x library: the .eh_frame, taken out of
 *   the file, converts to exactly the bytes the file converter puts in
 *   the file for the same address, and verifies (match == converted,
 *   functions == readelf's FDEs);
 * - a changed data word is caught by eh2s_verify_section;
 * - skip callback, V2, determinism and every error path. */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eh2sframe.h"
#include "t.h"
#include "t_ehframe.h"
#include "t_files.h"

/* ---- reading the .sframe bytes per the specification ---------------- */

static uint64_t get(const uint8_t *p, unsigned size, int be)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)p[i] << (be ? 8 * (size - 1 - i) : 8 * i);
	return v;
}

/* Header fields (2.2) and the first FDE index entry (2.3.1). */
typedef struct {
	unsigned magic, version, flags, abi, auxlen;
	int fixed_fp, fixed_ra;
	uint32_t nfdes, nfres, frelen, fdeoff, freoff;
	int64_t start0;  /* first FDE's start field */
	uint32_t size0, freoff0;
} hdr;

static void read_hdr(const uint8_t *s, int be, hdr *h)
{
	h->magic = (unsigned)get(s, 2, be);
	h->version = s[2];
	h->flags = s[3];
	h->abi = s[4];
	h->fixed_fp = (int8_t)s[5];
	h->fixed_ra = (int8_t)s[6];
	h->auxlen = s[7];
	h->nfdes = (uint32_t)get(s + 8, 4, be);
	h->nfres = (uint32_t)get(s + 12, 4, be);
	h->frelen = (uint32_t)get(s + 16, 4, be);
	h->fdeoff = (uint32_t)get(s + 20, 4, be);
	h->freoff = (uint32_t)get(s + 24, 4, be);
	const uint8_t *f = s + 28 + h->auxlen + h->fdeoff;
	h->start0 = (int64_t)get(f, 8, be);
	h->size0 = (uint32_t)get(f + 8, 4, be);
	h->freoff0 = (uint32_t)get(f + 12, 4, be);
}

/* ---- x86-64: push %rbp; mov %rsp,%rbp; ...; leave; ret -------------- */

static const uint8_t x86_cie_init[] = {0x0c, 7, 8, 0x90, 1};
/* advance 1; def_cfa_offset 16; offset r6 at cfa-16; advance 3;
 * def_cfa_register r6 */
static const uint8_t x86_fde_insn[] = {0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6};

#define X86_SEC 0x402000u
#define X86_FUNC 0x401000u
#define X86_SFRAME 0x500000u

static void build_x86(ebuf *e)
{
	memset(e, 0, sizeof *e);
	cie(e, 1, 0x78 /* -8 */, 16, x86_cie_init, sizeof x86_cie_init);
	fde(e, X86_SEC, X86_FUNC, 0x20, x86_fde_insn, sizeof x86_fde_insn);
	put(e, 0, 4); /* terminator */
}

static void test_x86(void)
{
	ebuf e;
	build_x86(&e);
	eh2s_cfi_input in = input(&e, EM_X86_64, X86_SEC);
	void *out = NULL;
	size_t n = 0;
	eh2s_summary sum;
	eh2s_summary_init(&sum);
	eh2s_error err;

	CHECK_EQ(eh2s_convert_section(&in, X86_SFRAME, NULL, &out, &n, &sum,
				      &err), EH2S_OK);
	CHECK_EQ(sum.functions, 1);
	CHECK_EQ(sum.converted, 1);
	CHECK_EQ(sum.sframe_bytes, n);
	if (!out)
		return;
	const uint8_t *s = out;
	hdr h;
	read_hdr(s, 0, &h);
	CHECK_EQ(h.magic, 0xdee2);
	CHECK_EQ(h.version, 3);
	CHECK_EQ(h.flags, 0x1 | 0x4); /* FDE_SORTED | FDE_FUNC_START_PCREL */
	CHECK_EQ(h.abi, 3);           /* AMD64 little-endian */
	CHECK_EQ(h.fixed_ra, -8);     /* RA at CFA-8 on AMD64 */
	CHECK_EQ(h.auxlen, 0);
	CHECK_EQ(h.nfdes, 1);
	CHECK_EQ(h.nfres, 3);
	CHECK_EQ(h.fdeoff, 0);
	CHECK_EQ(h.freoff, 16);       /* one 16-byte FDE index entry */
	/* The start field is at 28 and relative to itself. */
	CHECK_EQ(h.start0, (int64_t)X86_FUNC - (int64_t)(X86_SFRAME + 28));
	CHECK_EQ(h.size0, 0x20);
	CHECK_EQ(h.freoff0, 0);
	/* Attribute (2.3.2) then three 1-byte-start FREs (2.4):
	 *   0: CFA = SP+8                      info: 1 word, SP base
	 *   1: CFA = SP+16, FP at CFA-16       info: 2 words, SP base
	 *   4: CFA = FP+16, FP at CFA-16       info: 2 words, FP base
	 * FRE info byte: bit 0 base register (sframe.h: SFRAME_BASE_REG_FP 0,
	 * SFRAME_BASE_REG_SP 1), bits 1-4 word count, bits 5-6 word size
	 * (0: 1 byte), bit 7 mangled RA. */
	static const uint8_t want[] = {
		3, 0, 0x00, 0x00, 0,           /* num_fres, info, info2, rep */
		0, 1 | 1 << 1, 8,
		1, 1 | 2 << 1, 16, (uint8_t)-16,
		4, 0 | 2 << 1, 16, (uint8_t)-16,
	};
	CHECK_EQ(h.frelen, sizeof want);
	CHECK_EQ(n, 28 + 16 + sizeof want);
	CHECK(n == 28 + 16 + sizeof want &&
	      memcmp(s + 28 + 16, want, sizeof want) == 0);

	/* Verify: the function matches; deterministic output. */
	eh2s_verify_result vr;
	eh2s_verify_result_init(&vr);
	CHECK_EQ(eh2s_verify_section(&in, out, n, X86_SFRAME, NULL,
				     &vr, &err), EH2S_OK);
	CHECK_EQ(vr.functions, 1);
	CHECK_EQ(vr.match, 1);
	void *again = NULL;
	size_t n2 = 0;
	CHECK_EQ(eh2s_convert_section(&in, X86_SFRAME, NULL, &again, &n2,
				      NULL, &err), EH2S_OK);
	CHECK(n2 == n && again && memcmp(again, out, n) == 0);
	eh2s_free(again);

	/* Checked at another address it does not match (the start field
	 * points elsewhere: an extra function, a missing one). */
	CHECK_EQ(eh2s_verify_section(&in, out, n, X86_SFRAME + 0x1000, NULL,
				     &vr, &err), EH2S_E_VERIFY);
	CHECK_EQ(vr.extra, 1);
	/* A changed data word (the last FRE's CFA offset 16 -> 24). */
	uint8_t *bad = malloc(n);
	if (bad) {
		memcpy(bad, out, n);
		bad[n - 2] = 24;
		CHECK_EQ(eh2s_verify_section(&in, bad, n, X86_SFRAME, NULL,
					     &vr, &err), EH2S_E_VERIFY);
		CHECK_EQ(vr.mismatch, 1);
		CHECK(strstr(err.message, "mismatching") != NULL);
		/* Truncated bytes are malformed, not a mismatch. */
		CHECK_EQ(eh2s_verify_section(&in, bad, 20, X86_SFRAME, NULL,
					     &vr, &err), EH2S_E_BAD_SFRAME);
		free(bad);
	}
	/* The same bytes claimed to be AArch64 CFI: the ABI id differs. */
	eh2s_cfi_input wrong = in;
	wrong.machine = EM_AARCH64;
	CHECK_EQ(eh2s_verify_section(&wrong, out, n, X86_SFRAME, NULL,
				     &vr, &err), EH2S_E_BAD_SFRAME);

	/* V2: version byte 2, the 20-byte V2 FDE entry. */
	eh2s_section_opts o;
	eh2s_section_opts_init(&o);
	o.sframe_version = 2;
	void *v2 = NULL;
	size_t nv2 = 0;
	CHECK_EQ(eh2s_convert_section(&in, X86_SFRAME, &o, &v2, &nv2, NULL,
				      &err), EH2S_OK);
	if (v2) {
		read_hdr(v2, 0, &h);
		CHECK_EQ(h.version, 2);
		CHECK_EQ(h.freoff, 20);
		CHECK_EQ(eh2s_verify_section(&in, v2, nv2, X86_SFRAME, NULL,
					     &vr, &err), EH2S_OK);
		CHECK_EQ(vr.match, 1);
	}
	eh2s_free(v2);
	eh2s_free(out);
}

/* ---- AArch64: stp x29, x30, [sp, #-16]!; mov x29, sp; ... ----------- */

static const uint8_t a64_cie_init[] = {0x0c, 31, 0}; /* CFA = sp + 0 */
/* advance 1 (4 bytes); def_cfa_offset 16; x29 at cfa-16; x30 at cfa-8 */
static const uint8_t a64_fde_insn[] = {0x41, 0x0e, 16, 0x9d, 2, 0x9e, 1};

static void test_aarch64(int be)
{
	ebuf e;
	memset(&e, 0, sizeof e);
	e.be = be;
	cie(&e, 4, 0x78, 30, a64_cie_init, sizeof a64_cie_init);
	fde(&e, 0x10000, 0x20000, 0x40, a64_fde_insn, sizeof a64_fde_insn);
	put(&e, 0, 4);
	eh2s_cfi_input in = input(&e, EM_AARCH64, 0x10000);
	void *out = NULL;
	size_t n = 0;
	eh2s_error err;
	CHECK_EQ(eh2s_convert_section(&in, 0x30000, NULL, &out, &n, NULL,
				      &err), EH2S_OK);
	if (!out)
		return;
	const uint8_t *s = out;
	hdr h;
	read_hdr(s, be, &h);
	/* The magic in the section's own byte order tells the order. */
	CHECK_EQ(s[0], be ? 0xde : 0xe2);
	CHECK_EQ(h.magic, 0xdee2);
	CHECK_EQ(h.abi, be ? 1 : 2);
	CHECK_EQ(h.fixed_ra, 0);
	CHECK_EQ(h.nfdes, 1);
	CHECK_EQ(h.nfres, 2);
	CHECK_EQ(h.start0, 0x20000 - (0x30000 + 28));
	/*   0: CFA = SP+0 (RA in x30: one word)
	 *   4: CFA = SP+16, RA at CFA-8, FP at CFA-16 (three words) */
	static const uint8_t want[] = {
		0, 0, 0, 0, 0,
		0, 1 | 1 << 1, 0,
		4, 1 | 3 << 1, 16, (uint8_t)-8, (uint8_t)-16,
	};
	uint8_t w2[sizeof want];
	memcpy(w2, want, sizeof want);
	w2[be ? 1 : 0] = 2; /* num_fres, u16 */
	CHECK_EQ(n, 28 + 16 + sizeof want);
	CHECK(n == 28 + 16 + sizeof want &&
	      memcmp(s + 44, w2, sizeof w2) == 0);
	eh2s_verify_result vr;
	eh2s_verify_result_init(&vr);
	CHECK_EQ(eh2s_verify_section(&in, out, n, 0x30000, NULL, &vr,
				     &err), EH2S_OK);
	CHECK_EQ(vr.match, 1);
	eh2s_free(out);
}

/* ---- skipped functions ----------------------------------------------- */

typedef struct {
	size_t calls;
	int reason;
	uint64_t pc;
} skipstat;

static void on_skip(void *ctx, const eh2s_function *fn)
{
	skipstat *k = ctx;
	k->calls++;
	k->reason = fn->reason;
	k->pc = fn->pc;
	CHECK(fn->name == NULL);
}

static void test_skip(void)
{
	ebuf e;
	/* Function 1 as in test_x86; function 2's CFA is DW_OP_lit0. */
	static const uint8_t expr_insn[] = {0x0f, 1, 0x30};
	memset(&e, 0, sizeof e);
	cie(&e, 1, 0x78, 16, x86_cie_init, sizeof x86_cie_init);
	fde(&e, X86_SEC, X86_FUNC, 0x20, x86_fde_insn, sizeof x86_fde_insn);
	fde(&e, X86_SEC, X86_FUNC + 0x40, 0x10, expr_insn, sizeof expr_insn);
	put(&e, 0, 4);
	eh2s_cfi_input in = input(&e, EM_X86_64, X86_SEC);
	eh2s_section_opts o;
	skipstat k = {0, 0, 0};
	eh2s_section_opts_init(&o);
	o.on_function = on_skip;
	o.cb_ctx = &k;
	void *out = NULL;
	size_t n = 0;
	eh2s_summary sum;
	size_t by_reason[EH2S_SKIP_COUNT];
	eh2s_summary_init(&sum);
	sum.by_reason = by_reason;
	sum.by_reason_len = EH2S_SKIP_COUNT;
	eh2s_error err;
	CHECK_EQ(eh2s_convert_section(&in, X86_SFRAME, &o, &out, &n, &sum,
				      &err), EH2S_OK);
	CHECK_EQ(k.calls, 1);
	CHECK_EQ(k.reason, EH2S_SKIP_CFA_EXPR);
	CHECK_STR(eh2s_skip_name(k.reason), "cfa-expression");
	CHECK_EQ(k.pc, X86_FUNC + 0x40);
	CHECK_EQ(sum.functions, 2);
	CHECK_EQ(sum.converted, 1);
	CHECK_EQ(by_reason[EH2S_SKIP_CFA_EXPR], 1);
	CHECK_EQ(by_reason[EH2S_SKIP_NONE], 1);
	CHECK_EQ(sum.skipped_total, 1);
	/* report_all: both. */
	k.calls = 0;
	o.report_all = 1;
	void *out2 = NULL;
	CHECK_EQ(eh2s_convert_section(&in, X86_SFRAME, &o, &out2, &n, NULL,
				      &err), EH2S_OK);
	CHECK_EQ(k.calls, 2);
	eh2s_free(out2);
	eh2s_verify_result vr;
	eh2s_verify_result_init(&vr);
	CHECK_EQ(eh2s_verify_section(&in, out, n, X86_SFRAME, NULL,
				     &vr, &err), EH2S_OK);
	CHECK_EQ(vr.functions, 2);
	CHECK_EQ(vr.match, 1);
	CHECK_EQ(vr.skipped, 1);
	eh2s_free(out);

	/* Only the expression function: nothing to convert. */
	memset(&e, 0, sizeof e);
	cie(&e, 1, 0x78, 16, x86_cie_init, sizeof x86_cie_init);
	fde(&e, X86_SEC, X86_FUNC, 0x10, expr_insn, sizeof expr_insn);
	in = input(&e, EM_X86_64, X86_SEC);
	out = (void *)&e; /* must be reset */
	CHECK_EQ(eh2s_convert_section(&in, X86_SFRAME, NULL, &out, &n, &sum,
				      &err), EH2S_E_NO_FUNCS);
	CHECK(out == NULL);
	CHECK_EQ(sum.functions, 1);
	CHECK_EQ(by_reason[EH2S_SKIP_CFA_EXPR], 1);
	CHECK_EQ(by_reason[EH2S_SKIP_NONE], 0);
	CHECK(err.message[0] != '\0');
}

/* ---- programs that repeat -------------------------------------------- */

/* The converter takes an FDE whose program bytes and CIE equal an
 * earlier FDE's from that FDE if their sizes are equal or both past the
 * program's reach, unless a row's place depends on the FDE's address.
 * Here FDEs 1 and 2 share a DW_CFA_set_loc program whose (pc-relative)
 * operand lands 4 bytes into FDE 1's function but 12 into FDE 2's; FDEs
 * 3 and 4 share a plain program; FDEs 5, 6 and 7 share one that reaches
 * FDE 5's end (its last rule covers nothing there) but not 6's or 7's.
 * Every FRE is checked by the verifier's own reading of the CFI. */
static void test_repeats(void)
{
	ebuf e;
	memset(&e, 0, sizeof e);
	cie(&e, 1, 0x78, 16, x86_cie_init, sizeof x86_cie_init);
	size_t f1 = e.n;
	/* FDE: 17 bytes of header, set_loc at +17, its operand at +18. */
	uint64_t target = X86_FUNC + 4, operand = X86_SEC + f1 + 18;
	uint32_t y = (uint32_t)(target - operand);
	uint8_t prog[] = {0x01, 0, 0, 0, 0, 0x0e, 16}; /* set_loc; cfa_off 16 */
	memcpy(prog + 1, &y, 4); /* little-endian sdata4 */
	fde(&e, X86_SEC, X86_FUNC, 0x10, prog, sizeof prog);
	CHECK_EQ(e.n - f1, 24); /* so FDE 2's operand is 24 bytes on */
	fde(&e, X86_SEC, X86_FUNC + 0x10, 0x10, prog, sizeof prog);
	fde(&e, X86_SEC, X86_FUNC + 0x20, 0x20, x86_fde_insn, sizeof x86_fde_insn);
	fde(&e, X86_SEC, X86_FUNC + 0x40, 0x20, x86_fde_insn, sizeof x86_fde_insn);
	static const uint8_t reach1[] = {0x41, 0x0e, 16}; /* advance 1; cfa_off 16 */
	fde(&e, X86_SEC, X86_FUNC + 0x60, 1, reach1, sizeof reach1);
	fde(&e, X86_SEC, X86_FUNC + 0x70, 8, reach1, sizeof reach1);
	fde(&e, X86_SEC, X86_FUNC + 0x80, 16, reach1, sizeof reach1);
	put(&e, 0, 4);
	eh2s_cfi_input in = input(&e, EM_X86_64, X86_SEC);
	for (int v = 2; v <= 3; v++) {
		eh2s_section_opts o;
		eh2s_section_opts_init(&o);
		o.sframe_version = v;
		void *out = NULL;
		size_t n = 0;
		eh2s_summary sum;
		eh2s_summary_init(&sum);
		eh2s_error err;
		CHECK_EQ(eh2s_convert_section(&in, X86_SFRAME, &o, &out, &n, &sum,
					      &err), EH2S_OK);
		CHECK_EQ(sum.converted, 7);
		eh2s_verify_result vr;
		eh2s_verify_result_init(&vr);
		CHECK_EQ(eh2s_verify_section(&in, out, n, X86_SFRAME, NULL,
					     &vr, &err), EH2S_OK);
		CHECK_EQ(vr.match, 7);
		CHECK_EQ(vr.mismatch, 0);
		eh2s_free(out);
	}
}

/* ---- errors ----------------------------------------------------------- */

static void test_errors(void)
{
	ebuf e;
	build_x86(&e);
	eh2s_cfi_input in = input(&e, EM_X86_64, X86_SEC);
	void *out = NULL;
	size_t n = 0;
	eh2s_error err;
	eh2s_section_opts o;

	CHECK_EQ(eh2s_convert_section(NULL, 0, NULL, &out, &n, NULL, &err),
		 EH2S_E_USAGE);
	CHECK_EQ(eh2s_convert_section(&in, 0, NULL, NULL, &n, NULL, &err),
		 EH2S_E_USAGE);
	eh2s_section_opts_init(&o);
	o.sframe_version = 7;
	CHECK_EQ(eh2s_convert_section(&in, 0, &o, &out, &n, NULL, &err),
		 EH2S_E_UNSUPPORTED);
	CHECK(strstr(err.message, "version") != NULL);
	eh2s_cfi_input x = in;
	x.machine = EM_386;
	CHECK_EQ(eh2s_convert_section(&x, 0, NULL, &out, &n, NULL, &err),
		 EH2S_E_UNSUPPORTED);
	CHECK(strstr(err.message, "machine 3") != NULL);
	x = in;
	x.machine = EM_S390; /* little-endian s390x does not exist */
	CHECK_EQ(eh2s_convert_section(&x, 0, NULL, &out, &n, NULL, &err),
		 EH2S_E_UNSUPPORTED);
	x = in;
	x.big_endian = 1;
	CHECK_EQ(eh2s_convert_section(&x, 0, NULL, &out, &n, NULL, &err),
		 EH2S_E_UNSUPPORTED);
	x = in;
	x.kind = 9;
	CHECK_EQ(eh2s_convert_section(&x, 0, NULL, &out, &n, NULL, &err),
		 EH2S_E_UNSUPPORTED);
	x = in;
	x.data_size = 0;
	CHECK_EQ(eh2s_convert_section(&x, 0, NULL, &out, &n, NULL, &err),
		 EH2S_E_NO_CFI);
	/* The CIE's length runs past the end. */
	x = in;
	x.data_size = 10;
	CHECK_EQ(eh2s_convert_section(&x, 0, NULL, &out, &n, NULL, &err),
		 EH2S_E_BAD_CFI);
	CHECK(err.message[0] != '\0');
	CHECK(out == NULL);
	/* Verify: NULL bytes, garbage bytes. */
	eh2s_verify_result vr;
	eh2s_verify_result_init(&vr);
	CHECK_EQ(eh2s_verify_section(&in, NULL, 10, 0, NULL, &vr,
				     &err), EH2S_E_USAGE);
	static const uint8_t junk[40] = {1, 2, 3};
	CHECK_EQ(eh2s_verify_section(&in, junk, sizeof junk, 0, NULL,
				     &vr, &err), EH2S_E_BAD_SFRAME);
	/* Every FDE bad (an unknown opcode): converted nothing. */
	static const uint8_t badop[] = {0x41, 0x3f};
	memset(&e, 0, sizeof e);
	cie(&e, 1, 0x78, 16, x86_cie_init, sizeof x86_cie_init);
	fde(&e, X86_SEC, X86_FUNC, 0x10, badop, sizeof badop);
	in = input(&e, EM_X86_64, X86_SEC);
	eh2s_summary sum;
	size_t by_reason[EH2S_SKIP_COUNT];
	eh2s_summary_init(&sum);
	sum.by_reason = by_reason;
	sum.by_reason_len = EH2S_SKIP_COUNT;
	CHECK_EQ(eh2s_convert_section(&in, 0, NULL, &out, &n, &sum, &err),
		 EH2S_E_NO_FUNCS);
	CHECK_EQ(by_reason[EH2S_SKIP_BAD_CFI], 1);
	CHECK_EQ(sum.skipped_total, 1);
}

/* ---- real files: /bin/ls, a big-endian s390x library -------------- */

typedef struct {
	const uint8_t *data;
	uint64_t size, addr;
} secref;

/* Section `name` of a 64-bit ELF image of either byte order. */
static int find_section(const uint8_t *img, size_t n, const char *name,
			secref *out)
{
	if (n < 64)
		return 0;
	int be = img[EI_DATA] == ELFDATA2MSB;
	uint64_t shoff = get(img + 40, 8, be);
	unsigned shnum = (unsigned)get(img + 60, 2, be);
	unsigned shstrndx = (unsigned)get(img + 62, 2, be);
	if (shoff == 0 || shstrndx >= shnum || shoff + 64ull * shnum > n)
		return 0;
	const uint8_t *strsh = img + shoff + 64ull * shstrndx;
	uint64_t stroff = get(strsh + 24, 8, be);
	for (unsigned i = 1; i < shnum; i++) {
		const uint8_t *sh = img + shoff + 64ull * i;
		uint64_t off = get(sh + 24, 8, be), size = get(sh + 32, 8, be);
		const char *nm = (const char *)img + stroff + get(sh, 4, be);
		if (strcmp(nm, name) != 0 || off + size > n)
			continue;
		out->data = img + off;
		out->size = size;
		out->addr = get(sh + 16, 8, be);
		return 1;
	}
	return 0;
}

/* The file converter and the section converter, given the same
 * .eh_frame and .sframe address, must write the same bytes. */
static void test_file(const char *path, int force)
{
	size_t n = 0;
	uint8_t *img = slurp(path, &n);
	secref eh;
	eh2s_file *f = NULL;
	eh2s_error err;
	eh2s_convert_opts co;
	CHECK(img != NULL);
	if (!img)
		return;
	CHECK(find_section(img, n, ".eh_frame", &eh));
	CHECK_EQ(eh2s_open_mem(img, n, &f, &err), EH2S_OK);
	eh2s_convert_opts_init(&co);
	co.force = force;
	CHECK_EQ(eh2s_convert(f, &co, &err), EH2S_OK);
	const uint8_t *fsec = NULL;
	size_t fsize = 0;
	uint64_t fvaddr = 0;
	CHECK_EQ(eh2s_sframe_section(f, 0, &fsec, &fsize, &fvaddr, &err),
		 EH2S_OK);
	eh2s_summary fsum;
	eh2s_summary_init(&fsum);
	CHECK_EQ(eh2s_get_summary(f, &fsum, &err), EH2S_OK);

	eh2s_cfi_input in;
	eh2s_cfi_input_init(&in);
	in.machine = eh2s_machine(f);
	in.big_endian = img[EI_DATA] == ELFDATA2MSB;
	in.kind = EH2S_CFI_EH_FRAME;
	in.data = eh.data;
	in.data_size = eh.size;
	in.addr = eh.addr;
	void *out = NULL;
	size_t nout = 0;
	eh2s_summary sum;
	eh2s_summary_init(&sum);
	CHECK_EQ(eh2s_convert_section(&in, fvaddr, NULL, &out, &nout, &sum,
				      &err), EH2S_OK);
	CHECK_EQ(nout, fsize);
	CHECK(out && fsec && nout == fsize && memcmp(out, fsec, nout) == 0);
	CHECK_EQ(sum.functions, readelf_fdes(path));
	CHECK_EQ(sum.converted, fsum.converted);
	eh2s_verify_result vr;
	eh2s_verify_result_init(&vr);
	CHECK_EQ(eh2s_verify_section(&in, out, nout, fvaddr, NULL,
				     &vr, &err), EH2S_OK);
	CHECK_EQ(vr.functions, sum.functions);
	CHECK_EQ(vr.match, sum.converted);
	CHECK_EQ(vr.mismatch, 0);
	printf("%s: %zu functions, %zu converted, %zu bytes\n", path,
	       sum.functions, sum.converted, nout);
	eh2s_free(out);
	eh2s_close(f);
	free(img);
}

int main(void)
{
	test_x86();
	test_aarch64(0);
	test_aarch64(1);
	test_skip();
	test_repeats();
	test_errors();
	test_file("/bin/ls", 0);
	/* s390x, big-endian, PLT; made by gas 2.47 with its own .sframe. */
	test_file("tests/data/gas/s390x_plt.dso", 1);
	return t_done("test_api_section");
}
