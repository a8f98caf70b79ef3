/* jit_sframe - how a JIT runtime gets SFrame for the code it generates.
 *
 * A JIT that wants its frames unwound already writes DWARF CFI for
 * each generated function and registers it with __register_frame. This
 * program does the same for two x86-64 functions it generates at run
 * time (one with a frame pointer, one without), then:
 *
 *   1. converts the in-memory .eh_frame into .sframe bytes with
 *      eh2s_convert_section, for the address the bytes will live at;
 *   2. checks them with eh2s_verify_section (every row of every
 *      function must match the CFI);
 *   3. calls each generated function; from inside the C callback it
 *      calls, steps out of the generated frame twice - once with the
 *      SFrame bytes (a minimal reader below, following the SFrame V3
 *      specification) and once with libgcc's DWARF unwinder over the
 *      registered .eh_frame - and checks that both give the same caller.
 *
 * Build (x86-64 Linux; the callback needs a frame pointer), as C or C++:
 *     cc -O2 -fno-omit-frame-pointer jit_sframe.c \
 *        $(pkg-config --cflags --libs eh2sframe) -o jit_sframe
 *     c++ -O2 -fno-omit-frame-pointer -x c++ jit_sframe.c -x none \
 *        $(pkg-config --cflags --libs eh2sframe) -o jit_sframe
 * Run: ./jit_sframe [--corrupt]   (--corrupt changes one CFA offset
 * after conversion: the verifier must reject it; exit status 1)
 * Exit status: 0 all checks passed, 1 a check failed, 77 not x86-64. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>

#include <eh2sframe.h>

#if defined(__x86_64__) && defined(__linux__)

#ifdef __cplusplus
extern "C" {
#endif
/* libgcc's registration of an .eh_frame built at run time. */
extern void __register_frame(void *begin);
extern void __deregister_frame(void *begin);
#ifdef __cplusplus
}
#endif

/* ---- generated code ---------------------------------------------------
 * gen_fp(cb, arg): push %rbp; mov %rsp,%rbp; sub $32,%rsp; mov %rdi,%rax;
 *                  mov %rsi,%rdi; call *%rax; add $1,%eax; leave; ret
 * gen_sp(cb, arg): sub $24,%rsp; mov %rdi,%rax; mov %rsi,%rdi;
 *                  call *%rax; add $2,%eax; add $24,%rsp; ret */
static const uint8_t code_fp[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x20, 0x48, 0x89, 0xf8,
	0x48, 0x89, 0xf7, 0xff, 0xd0, 0x83, 0xc0, 0x01, 0xc9, 0xc3,
};
static const uint8_t code_sp[] = {
	0x48, 0x83, 0xec, 0x18, 0x48, 0x89, 0xf8, 0x48, 0x89, 0xf7,
	0xff, 0xd0, 0x83, 0xc0, 0x02, 0x48, 0x83, 0xc4, 0x18, 0xc3,
};
#define FP_OFF 0x00   /* where each function goes in the code page */
#define SP_OFF 0x40

/* Their CFI, as a JIT writes it: DW_CFA_advance_loc (0x40|delta),
 * def_cfa_offset (0x0e), offset (0x80|reg), def_cfa_register (0x0d),
 * def_cfa (0x0c), restore (0xc0|reg). */
static const uint8_t cfi_fp[] = {
	0x41, 0x0e, 16, 0x86, 2,   /* @1: CFA = rsp+16, rbp at CFA-16 */
	0x43, 0x0d, 6,             /* @4: CFA = rbp+16 */
	0x50, 0x0c, 7, 8, 0xc6,    /* @20 (after leave): CFA = rsp+8 */
};
static const uint8_t cfi_sp[] = {
	0x44, 0x0e, 32,            /* @4: CFA = rsp+32 */
	0x4f, 0x0e, 8,             /* @19 (before ret): CFA = rsp+8 */
};

/* ---- an .eh_frame in memory ------------------------------------------- */

typedef struct {
	uint8_t *p;
	size_t n, cap;
} buf;

static void put(buf *b, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size && b->n < b->cap; i++)
		b->p[b->n++] = (uint8_t)(v >> (8 * i)); /* little-endian */
}

static void put_bytes(buf *b, const void *p, size_t n)
{
	for (size_t i = 0; i < n && b->n < b->cap; i++)
		b->p[b->n++] = ((const uint8_t *)p)[i];
}

/* Pad the record that starts at `start` with DW_CFA_nop to 8 bytes
 * and fill in its length. */
static void close_record(buf *b, size_t start)
{
	while ((b->n - start) % 8)
		put(b, 0, 1);
	uint32_t len = (uint32_t)(b->n - start - 4);
	memcpy(b->p + start, &len, 4);
}

/* CIE: "zR", code alignment 1, data alignment -8, RA column 16,
 * FDE pointers DW_EH_PE_pcrel|sdata4; CFA = rsp+8, RA at CFA-8. */
static void write_cie(buf *b)
{
	size_t start = b->n;
	put(b, 0, 4);
	put(b, 0, 4);                      /* CIE id */
	put(b, 1, 1);                      /* version */
	put_bytes(b, "zR", 3);
	put(b, 1, 1);
	put(b, 0x78, 1);                   /* sleb128 -8 */
	put(b, 16, 1);
	put(b, 1, 1);                      /* augmentation data length */
	put(b, 0x1b, 1);
	static const uint8_t init[] = {0x0c, 7, 8, 0x90, 1};
	put_bytes(b, init, sizeof init);
	close_record(b, start);
}

static void write_fde(buf *b, uintptr_t func, uint32_t size,
		      const uint8_t *insn, size_t ninsn)
{
	size_t start = b->n;
	put(b, 0, 4);
	put(b, (uint32_t)b->n, 4);         /* back to the CIE at offset 0 */
	uintptr_t here = (uintptr_t)(b->p + b->n);
	put(b, (uint32_t)(int32_t)(intptr_t)(func - here), 4);
	put(b, size, 4);
	put(b, 0, 1);                      /* no augmentation data */
	put_bytes(b, insn, ninsn);
	close_record(b, start);
}

/* ---- a minimal SFrame V3 reader: one unwind step ------------------------
 * Section 2 of the specification: a 28-byte header, 16-byte FDE index
 * entries, then per function a 5-byte attribute and its FREs. AMD64
 * (section 3.1.1): word 1 is the CFA offset from SP or FP (FRE info bit
 * 0: 1 = SP, 0 = FP, as sframe.h defines them), word 2 when present the
 * FP slot; RA is at the header's fixed offset from the CFA. */

typedef struct {
	uint64_t cfa, ra, fp;
} step;

static int64_t sword(const uint8_t *p, unsigned size)
{
	switch (size) {
	case 1: return (int8_t)p[0];
	case 2: { int16_t v; memcpy(&v, p, 2); return v; }
	default: { int32_t v; memcpy(&v, p, 4); return v; }
	}
}

static int sframe_step(const uint8_t *s, size_t size, uint64_t pc,
		       uint64_t sp, uint64_t fp, step *out)
{
	uint16_t magic;
	uint32_t nfdes, fdeoff, freoff, frelen;
	if (size < 28)
		return -1;
	memcpy(&magic, s, 2);
	memcpy(&nfdes, s + 8, 4);
	memcpy(&frelen, s + 16, 4);
	memcpy(&fdeoff, s + 20, 4);
	memcpy(&freoff, s + 24, 4);
	size_t hdr = 28 + s[7];
	if (magic != 0xdee2 || s[2] != 3 || !(s[3] & 0x4) || s[4] != 3 ||
	    hdr + fdeoff + (uint64_t)nfdes * 16 > size ||
	    hdr + (uint64_t)freoff + frelen > size)
		return -1;
	int8_t fixed_ra = (int8_t)s[6];
	for (uint32_t i = 0; i < nfdes; i++) {
		const uint8_t *e = s + hdr + fdeoff + 16 * (size_t)i;
		int64_t off;
		uint32_t fsize, fre_off;
		memcpy(&off, e, 8);
		memcpy(&fsize, e + 8, 4);
		memcpy(&fre_off, e + 12, 4);
		uint64_t start = (uint64_t)(uintptr_t)e + (uint64_t)off;
		if (pc < start || pc - start >= fsize)
			continue;
		if (fre_off + 5ull > frelen)
			return -1;
		const uint8_t *a = s + hdr + freoff + fre_off;
		const uint8_t *end = s + hdr + freoff + frelen;
		uint16_t nfres;
		memcpy(&nfres, a, 2);
		unsigned fre_type = a[2] & 0xf, asz = 1u << fre_type;
		if (fre_type > 2 || (a[2] & 0x10) || (a[3] & 0x1f))
			return -1;     /* only INC, default-type FDEs here */
		const uint8_t *p = a + 5, *best = NULL;
		for (unsigned k = 0; k < nfres; k++) {
			if (p + asz + 1 > end)
				return -1;
			uint32_t fstart = 0;
			memcpy(&fstart, p, asz); /* little-endian host */
			unsigned info = p[asz];
			unsigned nw = (info >> 1) & 0xf, wsz = 1u << ((info >> 5) & 3);
			if (p + asz + 1 + nw * wsz > end)
				return -1;
			if (fstart <= pc - start)
				best = p;
			p += asz + 1 + nw * wsz;
		}
		if (!best)
			return -1;
		unsigned info = best[asz];
		unsigned nw = (info >> 1) & 0xf, wsz = 1u << ((info >> 5) & 3);
		const uint8_t *w = best + asz + 1;
		if (nw < 1)
			return -1;     /* RA undefined: outermost frame */
		out->cfa = ((info & 1) ? sp : fp) + (uint64_t)sword(w, wsz);
		memcpy(&out->ra, (const void *)(uintptr_t)(out->cfa + (uint64_t)(int64_t)fixed_ra), 8);
		out->fp = fp;
		if (nw >= 2)
			memcpy(&out->fp, (const void *)(uintptr_t)(out->cfa + (uint64_t)sword(w + wsz, wsz)), 8);
		return 0;
	}
	return -1;
}

/* The verifier's report of one function that differs. */
static void on_issue(void *ctx, const eh2s_verify_issue *is)
{
	(void)ctx;
	printf("verify: %s at %#" PRIx64 ": %s\n",
	       is->kind == EH2S_ISSUE_MISMATCH ? "mismatch"
	       : is->kind == EH2S_ISSUE_MISSING ? "missing"
	       : is->kind == EH2S_ISSUE_EXTRA ? "extra" : "other",
	       is->pc, is->what);
}

/* ---- the callback: unwind the generated frame both ways ---------------- */

typedef struct {
	const uint8_t *sframe;
	size_t sframe_size;
	uintptr_t code_lo, code_hi;
	const char *name;
	int failed;
	/* libgcc's view: the IP of the frame after the generated one */
	uintptr_t dwarf_next;
	int seen_jit;
} ctx_t;

static _Unwind_Reason_Code bt(struct _Unwind_Context *uc, void *arg)
{
	ctx_t *c = (ctx_t *)arg;
	uintptr_t ip = (uintptr_t)_Unwind_GetIP(uc);
	if (c->seen_jit) {
		c->dwarf_next = ip;
		return _URC_END_OF_STACK;
	}
	if (ip >= c->code_lo && ip < c->code_hi)
		c->seen_jit = 1;
	return _URC_NO_REASON;
}

__attribute__((noinline)) static int callback(void *arg)
{
	ctx_t *c = (ctx_t *)arg;
	/* With a frame pointer: [fp] = the caller's FP, [fp+8] = the return
	 * address into generated code, fp+16 = the caller's SP after the
	 * call returns. */
	uintptr_t *fp = (uintptr_t *)__builtin_frame_address(0);
	uint64_t pc = fp[1], sp = (uintptr_t)(fp + 2), cfp = fp[0];
	step st;

	c->seen_jit = 0;
	c->dwarf_next = 0;
	_Unwind_Backtrace(bt, c);
	if (pc < c->code_lo || pc >= c->code_hi) {
		printf("%s: FAIL: the callback's return address %#" PRIx64
		       " is not in generated code\n", c->name, pc);
		c->failed = 1;
		return 0;
	}
	if (sframe_step(c->sframe, c->sframe_size, pc, sp, cfp, &st) != 0) {
		printf("%s: FAIL: no SFrame row for pc %#" PRIx64 "\n", c->name, pc);
		c->failed = 1;
		return 0;
	}
	if (!c->dwarf_next || st.ra != c->dwarf_next) {
		printf("%s: FAIL: SFrame caller %#" PRIx64 ", DWARF caller %#"
		       PRIxPTR "\n", c->name, st.ra, c->dwarf_next);
		c->failed = 1;
		return 0;
	}
	printf("%s: pc %#" PRIx64 " (+%#" PRIx64 "): CFA %#" PRIx64
	       ", caller %#" PRIx64 " (SFrame) = %#" PRIxPTR " (DWARF)\n",
	       c->name, pc, pc - c->code_lo, st.cfa, st.ra, c->dwarf_next);
	return 40;
}

int main(int argc, char **argv)
{
	int corrupt = argc > 1 && strcmp(argv[1], "--corrupt") == 0;
	/* One mapping: code page, then a data page for .eh_frame and
	 * .sframe (DW_EH_PE_pcrel|sdata4 pointers need the CFI within 2 GiB
	 * of the code, as in any JIT code cache). */
	size_t page = 4096;
	void *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		perror("jit_sframe");
		return 1;
	}
	uint8_t *code = (uint8_t *)map;
	uint8_t *eh = code + page;
	memcpy(code + FP_OFF, code_fp, sizeof code_fp);
	memcpy(code + SP_OFF, code_sp, sizeof code_sp);
	if (mprotect(code, page, PROT_READ | PROT_EXEC) != 0) {
		perror("jit_sframe: mprotect");
		return 1;
	}
	buf b = {eh, 0, 1024};
	write_cie(&b);
	write_fde(&b, (uintptr_t)code + FP_OFF, sizeof code_fp, cfi_fp, sizeof cfi_fp);
	write_fde(&b, (uintptr_t)code + SP_OFF, sizeof code_sp, cfi_sp, sizeof cfi_sp);
	put(&b, 0, 4);                     /* end of the frame list */
	__register_frame(eh);

	/* 1. .eh_frame -> .sframe. The size does not depend on the address,
	 * so convert once to learn it, allocate, convert for the real place. */
	eh2s_cfi_input in;
	eh2s_cfi_input_init(&in);          /* every struct: _init first */
	in.machine = 62;                   /* EM_X86_64 */
	in.kind = EH2S_CFI_EH_FRAME;
	in.data = eh;
	in.data_size = b.n;
	in.addr = (uintptr_t)eh;
	eh2s_section_opts o;
	eh2s_section_opts_init(&o);
	eh2s_summary sum;
	eh2s_summary_init(&sum);
	eh2s_error err;
	void *tmp = NULL;
	size_t n = 0;
	if (eh2s_convert_section(&in, 0, &o, &tmp, &n, &sum, &err) != EH2S_OK) {
		fprintf(stderr, "jit_sframe: %s\n", err.message);
		return 1;
	}
	eh2s_free(tmp);
	uint8_t *sframe = eh + 1024;
	void *bytes = NULL;
	size_t n2 = 0;
	if (n > page - 1024 ||
	    eh2s_convert_section(&in, (uintptr_t)sframe, &o, &bytes, &n2, &sum,
				 &err) != EH2S_OK || n2 != n) {
		fprintf(stderr, "jit_sframe: %s\n", err.message);
		return 1;
	}
	memcpy(sframe, bytes, n);
	eh2s_free(bytes);
	printf("converted %zu of %zu functions: .eh_frame %zu bytes -> .sframe %zu bytes\n",
	       sum.converted, sum.functions, b.n, n);
	if (corrupt)
		sframe[n - 1] = 16; /* gen_sp's last row: CFA = rsp+16, not +8 */

	/* 2. The verifier: every row of both functions. */
	eh2s_verify_section_opts vo;
	eh2s_verify_section_opts_init(&vo);
	vo.on_issue = on_issue;
	vo.report_missing = 1;
	eh2s_verify_result vr;
	eh2s_verify_result_init(&vr);
	eh2s_status st = eh2s_verify_section(&in, sframe, n, (uintptr_t)sframe,
					     &vo, &vr, &err);
	printf("verify: functions=%zu match=%zu mismatch=%zu missing=%zu\n",
	       vr.functions, vr.match, vr.mismatch, vr.missing);
	if (st != EH2S_OK || vr.match != 2) {
		printf("verify failed: %s\n", err.message);
		return 1;
	}

	/* 3. Run the generated code and unwind it both ways. */
	ctx_t c = {sframe, n, (uintptr_t)code, (uintptr_t)code + page,
		   "gen_fp", 0, 0, 0};
	int (*gen_fp)(int (*)(void *), void *) =
		(int (*)(int (*)(void *), void *))(uintptr_t)(code + FP_OFF);
	int (*gen_sp)(int (*)(void *), void *) =
		(int (*)(int (*)(void *), void *))(uintptr_t)(code + SP_OFF);
	int r1 = gen_fp(callback, &c);
	c.name = "gen_sp";
	int r2 = gen_sp(callback, &c);
	if (r1 != 41 || r2 != 42) {
		printf("FAIL: generated code returned %d and %d\n", r1, r2);
		c.failed = 1;
	}
	__deregister_frame(eh);
	munmap(map, 2 * page);
	printf("%s\n", c.failed ? "FAILED" : "all checks passed");
	return c.failed ? 1 : 0;
}

#else
int main(void)
{
	puts("jit_sframe: generates x86-64 code; not this machine");
	return 77;
}
#endif
