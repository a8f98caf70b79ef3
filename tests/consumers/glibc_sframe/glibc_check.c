/* glibc_check - run glibc's own SFrame Version 2 reader and stack walker
 * (glibc 2.42+, sysdeps/generic/sframe-read.c and sframe.c, fetched and
 * compiled at test time, never part of this repository) on one ELF file,
 * and compare each walker step with the file's DWARF CFI as binutils'
 * readelf reads it (dwarf_rows.py).
 *
 *     glibc_check FILE ROWS
 *
 * FILE is mapped the way ld.so would place it (each PT_LOAD at its
 * address from one base); shim_dl_find_object answers glibc's
 * _dl_find_object from it, with PT_GNU_SFRAME as dlfo_sframe. Check
 * points: every FRE start (every PC of a PC-mask FDE), and per DWARF row
 * its first, middle and last PC. At each:
 *   - a row whose return address DWARF knows (CFA from SP or FP, RA in a
 *     stack slot) inside an SFrame function: glibc's lookup
 *     (__sframe_find_fre, then the CFA and RA offsets) must succeed, and
 *     one step of __stacktrace_sframe from a synthetic frame (SP, FP and
 *     a stack whose every word holds a value naming its address) must
 *     give the caller's PC, SP and FP that the DWARF row gives;
 *   - an outermost row (DWARF RA undefined), wherever it is: the walk
 *     must end there through glibc's own outermost test (frame pointer
 *     0, as _start and the clone child set it), not fall back to DWARF;
 *   - a signal frame: glibc must find no FRE (its signal decoder takes
 *     those);
 *   - a row outside every SFrame function (the converter skipped it) is
 *     counted, not checked: glibc falls back to DWARF there.
 * What glibc's walker cannot do by design is counted apart from failures:
 * an AArch64 RA still in LR (it needs RA on the stack), and AArch64 FREs
 * with a signed RA (it ignores the mangled-RA bit).
 * Exit status: 0 no failure, 1 failures, 2 usage or I/O error. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dlfcn.h>       /* the shim's */
#include <sframe-read.h> /* glibc's */

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME 0x6474e554
#endif

int shim_outermost_hits;
int shim_dl_find_object(void *pc, struct dl_find_object *result);

static uint8_t *base;        /* load bias: address = base + vaddr */
static uint64_t lo_va, hi_va;
static uint64_t sframe_va, eh_va;
static bool have_sframe;
static bool aarch64;

int shim_dl_find_object(void *pc, struct dl_find_object *r)
{
	uintptr_t a = (uintptr_t)pc;
	if (a < (uintptr_t)(base + lo_va) || a >= (uintptr_t)(base + hi_va))
		return -1;
	memset(r, 0, sizeof *r);
	r->dlfo_map_start = base + lo_va;
	r->dlfo_map_end = base + hi_va;
	r->dlfo_eh_frame = eh_va ? base + eh_va : NULL;
	if (have_sframe) {
		r->dlfo_sframe = base + sframe_va;
		r->dlfo_flags = DLFO_FLAG_SFRAME;
	}
	return 0;
}

/* ---- The file, mapped ------------------------------------------------- */

static int map_file(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "glibc_check: %s: %s\n", path, strerror(errno));
		return -1;
	}
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0) {
		fprintf(stderr, "glibc_check: %s: not a little-endian ELF64 file with program headers\n", path);
		close(fd);
		return -1;
	}
	aarch64 = eh.e_machine == EM_AARCH64;
#if defined(__x86_64__)
	if (eh.e_machine != EM_X86_64)
#elif defined(__aarch64__)
	if (eh.e_machine != EM_AARCH64)
#endif
	{
		fprintf(stderr, "glibc_check: %s: machine %u is not this build's\n", path, eh.e_machine);
		close(fd);
		return -1;
	}
	Elf64_Phdr *ph = calloc(eh.e_phnum, sizeof *ph);
	if (!ph || pread(fd, ph, eh.e_phnum * sizeof *ph, (off_t)eh.e_phoff) !=
			   (ssize_t)(eh.e_phnum * sizeof *ph)) {
		fprintf(stderr, "glibc_check: %s: cannot read program headers\n", path);
		close(fd);
		free(ph);
		return -1;
	}
	lo_va = UINT64_MAX;
	hi_va = 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD) {
			if (ph[i].p_vaddr < lo_va)
				lo_va = ph[i].p_vaddr;
			if (ph[i].p_vaddr + ph[i].p_memsz > hi_va)
				hi_va = ph[i].p_vaddr + ph[i].p_memsz;
		} else if (ph[i].p_type == PT_GNU_SFRAME) {
			sframe_va = ph[i].p_vaddr;
			have_sframe = true;
		} else if (ph[i].p_type == PT_GNU_EH_FRAME) {
			eh_va = ph[i].p_vaddr;
		}
	}
	lo_va &= ~(uint64_t)0xffff;
	/* 16 bytes of slack: glibc's signal-frame test reads 9 bytes at a PC */
	size_t len = (size_t)(hi_va - lo_va) + 16;
	uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || lo_va == UINT64_MAX) {
		fprintf(stderr, "glibc_check: %s: cannot map %zu bytes\n", path, len);
		close(fd);
		free(ph);
		return -1;
	}
	base = m - lo_va;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || ph[i].p_filesz == 0)
			continue;
		if (pread(fd, base + ph[i].p_vaddr, ph[i].p_filesz, (off_t)ph[i].p_offset) !=
		    (ssize_t)ph[i].p_filesz) {
			fprintf(stderr, "glibc_check: %s: short read of a PT_LOAD\n", path);
			close(fd);
			free(ph);
			return -1;
		}
	}
	free(ph);
	close(fd);
	return 0;
}

/* ---- DWARF rows (dwarf_rows.py) --------------------------------------- */

typedef struct {
	uint64_t lo, hi;
	char cfa, ra, fp, sig;
	int64_t cfa_off, ra_off, fp_off;
} row_t;

static row_t *rows;
static size_t nrows;

static int row_cmp(const void *x, const void *y)
{
	const row_t *a = x, *b = y;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static int read_rows(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t cap = 0;
	char c[4];
	uint64_t lo, hi;
	int64_t co, ro, fo;
	if (!f) {
		fprintf(stderr, "glibc_check: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fscanf(f, "%" SCNx64 " %" SCNx64 " %c %" SCNd64 " %c %" SCNd64
		      " %c %" SCNd64 " %c", &lo, &hi, &c[0], &co, &c[1], &ro, &c[2],
		      &fo, &c[3]) == 9) {
		if (nrows == cap) {
			cap = cap ? 2 * cap : 4096;
			row_t *n = realloc(rows, cap * sizeof *rows);
			if (!n) {
				fclose(f);
				return -1;
			}
			rows = n;
		}
		rows[nrows++] = (row_t){lo, hi, c[0], c[1], c[2], c[3], co, ro, fo};
	}
	fclose(f);
	qsort(rows, nrows, sizeof *rows, row_cmp);
	return 0;
}

/* The first row covering pc (FDEs may overlap: the first by address). */
static const row_t *row_at(uint64_t pc)
{
	size_t a = 0, b = nrows;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (rows[m].lo <= pc)
			a = m + 1;
		else
			b = m;
	}
	/* rows[a-1] is the last starting at or before pc; an earlier,
	 * longer row may cover pc as well when FDEs overlap. */
	for (size_t k = a; k > 0 && a - k < 64; k--)
		if (rows[k - 1].hi > pc)
			return &rows[k - 1];
	return NULL;
}

/* ---- The SFrame section, read by the harness itself (V2 layout) ------- */

typedef struct {
	uint64_t start, size;
	bool mask;
} sfunc_t;

static sfunc_t *funcs;
static size_t nfuncs;
static uint64_t *pts;
static size_t npts, ptcap;
static unsigned long mangled_fres;

static int add_pt(uint64_t pc)
{
	if (npts == ptcap) {
		ptcap = ptcap ? 2 * ptcap : 65536;
		uint64_t *n = realloc(pts, ptcap * sizeof *pts);
		if (!n)
			return -1;
		pts = n;
	}
	pts[npts++] = pc;
	return 0;
}

static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }

static int read_sframe(void)
{
	const uint8_t *s = base + sframe_va;
	if (rd16(s) != 0xdee2 || s[2] != 2) {
		fprintf(stderr, "glibc_check: .sframe is not SFrame version 2 (version %u)\n", s[2]);
		return -1;
	}
	uint32_t nf = rd32(s + 8), fdeoff = rd32(s + 20), freoff = rd32(s + 24);
	const uint8_t *fde0 = s + 28 + s[7] + fdeoff, *fre0 = s + 28 + s[7] + freoff;
	bool pcrel = s[3] & 4;
	funcs = calloc(nf ? nf : 1, sizeof *funcs);
	if (!funcs)
		return -1;
	for (uint32_t i = 0; i < nf; i++) {
		const uint8_t *d = fde0 + 20 * (size_t)i;
		int32_t st = (int32_t)rd32(d);
		uint64_t start = (uint64_t)((int64_t)(pcrel ? (uint64_t)(d - base) : sframe_va) + st);
		uint32_t size = rd32(d + 4), off = rd32(d + 8), n = rd32(d + 12);
		unsigned info = d[16], ft = info & 0xf, ab = ft == 0 ? 1 : ft == 1 ? 2 : 4;
		bool mask = (info >> 4) & 1;
		funcs[nfuncs++] = (sfunc_t){start, size, mask};
		const uint8_t *p = fre0 + off;
		for (uint32_t k = 0; k < n; k++) {
			uint32_t fs = ab == 1 ? p[0] : ab == 2 ? rd16(p) : rd32(p);
			unsigned fi = p[ab], cnt = (fi >> 1) & 0xf, osz = 1u << ((fi >> 5) & 3);
			if (fi & 0x80)
				mangled_fres++;
			if (!mask && add_pt(start + fs))
				return -1;
			p += ab + 1 + cnt * osz;
		}
		if (mask)
			for (uint64_t pc = start; pc < start + size; pc++)
				if (add_pt(pc))
					return -1;
	}
	return 0;
}

static bool in_sframe_func(uint64_t pc)
{
	size_t a = 0, b = nfuncs;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (funcs[m].start <= pc)
			a = m + 1;
		else
			b = m;
	}
	return a > 0 && pc < funcs[a - 1].start + funcs[a - 1].size;
}

/* ---- Checks ------------------------------------------------------------ */

#define STACK_SIZE (16u << 20)
static uint8_t *stack;
static uintptr_t S, F;   /* the callee's SP and FP */

/* Every stack word holds this value of its own address. */
static uint64_t tag(uintptr_t a) { return (uint64_t)a ^ 0x5a5a000000000000ull; }
/* The word at a (a slot DWARF names may be unaligned: CFA = SP+12). */
static uint64_t load(uintptr_t a)
{
	uint64_t v;
	memcpy(&v, (const void *)a, 8);
	return v;
}
static bool on_stack(uintptr_t a) { return a >= (uintptr_t)stack && a + 8 <= (uintptr_t)stack + STACK_SIZE; }

static struct {
	unsigned long points, covered, lookup_ok, lookup_fail, walk_ok, walk_bad;
	unsigned long outer, outer_end, outer_fail_lookup, outer_bad, uncovered;
	unsigned long glibc_ra_reg, sig, sig_bad, no_dwarf, dwarf_other, range;
} n;
static int shown;

static void report(const char *what, uint64_t pc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void report(const char *what, uint64_t pc, const char *fmt, ...)
{
	va_list ap;
	if (shown++ >= 20)
		return;
	printf("%s pc=0x%" PRIx64 ": ", what, pc);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static sigjmp_buf crash;
static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(crash, 1);
}

/* One step of glibc's walker from {pc, sp, fp}: its return value, the
 * frame after it, and whether its outermost test ended the walk. */
static int walk(uint64_t pc, uintptr_t sp, uintptr_t fp, frame *out, void **ra,
		bool *ended)
{
	int hits = shim_outermost_hits;
	frame fr = {(_Unwind_Ptr)(base + pc), sp, fp};
	int r;
	ra[0] = NULL;
	if (sigsetjmp(crash, 1))
		return -1;
	r = __stacktrace_sframe(ra, 1, &fr);
	*out = fr;
	*ended = shim_outermost_hits != hits;
	return r;
}

static void check(uint64_t pc)
{
	const row_t *r = row_at(pc);
	bool ins = in_sframe_func(pc);
	sframe_decoder_ctx ctx;
	sframe_frame_row_entry fre;
	_Unwind_Reason_Code e1 = _URC_NO_REASON, e2 = _URC_NO_REASON, e3 = _URC_NO_REASON;
	int32_t cfa_off = 0, ra_off = 0, fp_off = 0;
	bool found = false, ended;
	frame fr;
	void *ra[1];

	n.points++;
	if (!r) {
		n.no_dwarf++;
		if (ins)
			report("NO-DWARF", pc, "an SFrame function covers a PC no DWARF row covers");
		return;
	}
	memset(&ctx, 0, sizeof ctx);
	if (have_sframe && __sframe_decode(&ctx, (const char *)(base + sframe_va)) == _URC_NO_REASON &&
	    __sframe_find_fre(&ctx, (int32_t)((int64_t)pc - (int64_t)sframe_va), &fre) == _URC_NO_REASON) {
		found = true;
		cfa_off = __sframe_fre_get_cfa_offset(&ctx, &fre, &e1);
		ra_off = __sframe_fre_get_ra_offset(&ctx, &fre, &e2);
		fp_off = __sframe_fre_get_fp_offset(&ctx, &fre, &e3);
	}
	if (r->sig == 'S') {
		n.sig++;
		if (found) {
			n.sig_bad++;
			report("SIGNAL-SHADOWED", pc, "glibc finds an FRE in a signal frame");
		}
		return;
	}
	if (r->ra == 'u') {
		/* Outermost: glibc must reach its own end-of-stack test. */
		n.outer++;
		if (found && e1 != _URC_NO_REASON) {
			n.outer_fail_lookup++;
			report("LOOKUP-FAIL", pc, "outermost frame: glibc finds an FRE but cannot read its CFA offset");
		}
		int w = walk(pc, S, 0, &fr, ra, &ended);
		if (w == 0 && ended) {
			n.outer_end++;
		} else {
			n.outer_bad++;
			report("WALK-DIFF", pc, "outermost frame: walker returned %d, %s", w,
			       ended ? "ended" : "fell back to DWARF");
		}
		return;
	}
	if (!ins) {
		n.uncovered++;
		if (found)
			report("LOOKUP-ODD", pc, "glibc finds an FRE outside every SFrame function");
		return;
	}
	if (r->cfa == 'x' || r->ra == 'x') {
		n.dwarf_other++;
		n.walk_bad++;
		report("WALK-DIFF", pc, "an SFrame function covers a row SFrame cannot express (CFA %c, RA %c)",
		       r->cfa, r->ra);
		return;
	}
	n.covered++;
	if (!found || e1 != _URC_NO_REASON) {
		n.lookup_fail++;
		report("LOOKUP-FAIL", pc, "%s", !found ? "__sframe_find_fre found no FRE"
						       : "no CFA offset in the FRE");
		return;
	}
	if (e2 != _URC_NO_REASON) {
		if (r->ra == 'r') {
			n.glibc_ra_reg++; /* glibc's walker needs RA on the stack */
			return;
		}
		n.lookup_fail++;
		report("LOOKUP-FAIL", pc, "no RA offset in the FRE");
		return;
	}
	n.lookup_ok++;
	if (r->ra == 'r') {
		n.walk_bad++;
		report("WALK-DIFF", pc, "DWARF: RA in its register; SFrame: RA at CFA%+d", ra_off);
		return;
	}
	/* Keep glibc's reads on the synthetic stack. */
	uintptr_t gcfa = (__sframe_fre_get_base_reg_id(&fre) == SFRAME_BASE_REG_SP ? S : F) + (intptr_t)cfa_off;
	uintptr_t dcfa = (r->cfa == 's' ? S : F) + (intptr_t)r->cfa_off;
	if (!on_stack(gcfa + (intptr_t)ra_off) || (e3 == _URC_NO_REASON && !on_stack(gcfa + (intptr_t)fp_off)) ||
	    !on_stack(dcfa + (intptr_t)r->ra_off) || (r->fp == 'c' && !on_stack(dcfa + (intptr_t)r->fp_off))) {
		n.range++;
		report("RANGE", pc, "offsets beyond the harness's stack");
		return;
	}
	uint64_t want_pc = load(dcfa + (intptr_t)r->ra_off);
	uint64_t want_fp = r->fp == 'c' ? load(dcfa + (intptr_t)r->fp_off) : F;
	int w = walk(pc, S, F, &fr, ra, &ended);
	if (w == 1 && (uint64_t)(uintptr_t)ra[0] == want_pc && fr.pc == want_pc &&
	    fr.sp == dcfa && (r->fp == 'x' || fr.fp == want_fp)) {
		n.walk_ok++;
		return;
	}
	n.walk_bad++;
	report("WALK-DIFF", pc, "walker returned %d: pc %#llx sp %#llx fp %#llx; DWARF: pc %#llx sp %#llx fp %#llx",
	       w, (unsigned long long)fr.pc, (unsigned long long)fr.sp, (unsigned long long)fr.fp,
	       (unsigned long long)want_pc, (unsigned long long)dcfa, (unsigned long long)want_fp);
}

static int u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: glibc_check FILE ROWS\n");
		return 2;
	}
	if (map_file(argv[1]) || read_rows(argv[2]))
		return 2;
	if (!have_sframe) {
		fprintf(stderr, "glibc_check: %s: no PT_GNU_SFRAME\n", argv[1]);
		return 2;
	}
	if (read_sframe())
		return 2;
	stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED)
		return 2;
	for (size_t i = 0; i < STACK_SIZE; i += 8) {
		uint64_t v = tag((uintptr_t)stack + i);
		memcpy(stack + i, &v, 8);
	}
	S = (uintptr_t)stack + STACK_SIZE / 4;
	F = (uintptr_t)stack + STACK_SIZE / 4 * 3;
	/* Per DWARF row: first, middle and last PC (instruction-aligned). */
	uint64_t al = aarch64 ? 3 : 0;
	for (size_t i = 0; i < nrows; i++) {
		uint64_t a = rows[i].lo, b = rows[i].hi - 1, m = a + (b - a) / 2;
		if (add_pt(a) || add_pt(m & ~al) || add_pt(b & ~al))
			return 2;
	}
	qsort(pts, npts, sizeof *pts, u64_cmp);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	for (size_t i = 0; i < npts; i++)
		if (i == 0 || pts[i] != pts[i - 1])
			check(pts[i]);
	unsigned long fails = n.lookup_fail + n.outer_fail_lookup;
	unsigned long bad = n.walk_bad + n.outer_bad + n.sig_bad + n.range;
	printf("summary: functions=%zu points=%lu failed_lookups=%lu walker_disagreements=%lu"
	       " | checked=%lu walker_ok=%lu outermost=%lu outermost_ended=%lu signal=%lu"
	       " uncovered=%lu no_dwarf=%lu | glibc_limits: ra_in_lr=%lu mangled_ra_fres=%lu\n",
	       nfuncs, n.points, fails, bad, n.covered, n.walk_ok, n.outer, n.outer_end,
	       n.sig, n.uncovered, n.no_dwarf, n.glibc_ra_reg, aarch64 ? mangled_fres : 0);
	return fails || bad ? 1 : 0;
}
