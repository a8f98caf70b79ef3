/* sframe_kcheck - check the .sframe sections of an ELF file (a kernel
 * module, an object, or a linked file) the way a kernel SFrame reader
 * must before it trusts them, reading the raw bytes per the SFrame V3
 * specification (sections 2 and 3). It shares no code with eh2sframe.
 *
 *     sframe_kcheck FILE...
 *
 * For every .sframe section (relocatable files: one per COMDAT group is
 * possible; function starts come from .rela.sframe):
 *   - magic 0xdee2 in the file's byte order, version 3, flags exactly
 *     FDE_SORTED | FDE_FUNC_START_PCREL, ABI/arch id of the ELF machine
 *     and byte order, no auxiliary header;
 *   - non-empty FDE and FRE tables; the FDE index lies between the
 *     header and the FRE sub-section, which ends at the section end;
 *   - every FDE: its function start (PC-relative field; in relocatable
 *     files the PC-relative relocation's symbol + addend) and size lie
 *     inside an executable section (linked files: one executable
 *     PT_LOAD, the same for every function: the text range a kernel
 *     reader is given); starts strictly increasing (per text section in
 *     relocatable files) and functions do not overlap; no more FREs than
 *     the function has bytes; FRE type, PC type, FDE type and unused
 *     bits valid;
 *   - every FRE: start strictly increasing and below the function size
 *     (MASK FDEs: also below the repetition size); data
 *     word size valid; data word count allowed for the ABI and FDE type
 *     (default: AMD64 0-2, AArch64 0, 1 or 3, s390x 0-3; flexible: 2-6);
 *     mangled-RA bit only on AArch64;
 *   - the data is used exactly: the FDE attributes and FREs tile the FRE
 *     sub-section with no gap and no overlap, and their FRE counts add up
 *     to the header's.
 * Exit status: 0 every section passed, 1 a check failed, 2 usage or I/O. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SHT_GNU_SFRAME
#define SHT_GNU_SFRAME 0x6ffffff4
#endif
#ifndef R_AARCH64_PREL64
#define R_AARCH64_PREL64 260
#endif
#ifndef R_390_PC64
#define R_390_PC64 23
#endif
#ifndef R_X86_64_PC64
#define R_X86_64_PC64 24
#endif

typedef struct {
	const char *path;
	const uint8_t *d;
	size_t n;
	bool be;
	unsigned machine;
	bool rel;
	const Elf64_Shdr *sh; /* host-order copies */
	Elf64_Shdr *shc;
	size_t shnum;
	const char *shstr;
	size_t shstr_n;
	int errors;
} elf_t;

static uint64_t rd(const elf_t *e, const uint8_t *p, unsigned size)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)p[i] << (e->be ? 8 * (size - 1 - i) : 8 * i);
	return v;
}

static int64_t rds(const elf_t *e, const uint8_t *p, unsigned size)
{
	uint64_t v = rd(e, p, size);
	if (size < 8 && (v >> (8 * size - 1)) & 1)
		v |= ~(uint64_t)0 << (8 * size);
	return (int64_t)v;
}

static void bad(elf_t *e, const char *sec, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "sframe_kcheck: %s: %s+%#" PRIx64 ": ", e->path, sec, off);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	e->errors++;
}

static const char *secname(const elf_t *e, size_t i)
{
	uint32_t o = e->shc[i].sh_name;
	return o < e->shstr_n ? e->shstr + o : "?";
}

/* Read the section headers into host order. */
static int load(elf_t *e)
{
	const uint8_t *d = e->d;
	if (e->n < sizeof(Elf64_Ehdr) || memcmp(d, ELFMAG, SELFMAG) != 0 ||
	    d[EI_CLASS] != ELFCLASS64) {
		fprintf(stderr, "sframe_kcheck: %s: not a 64-bit ELF file\n", e->path);
		return -1;
	}
	e->be = d[EI_DATA] == ELFDATA2MSB;
	e->rel = rd(e, d + 16, 2) == ET_REL;
	e->machine = (unsigned)rd(e, d + 18, 2);
	uint64_t shoff = rd(e, d + 40, 8);
	unsigned shentsize = (unsigned)rd(e, d + 58, 2);
	size_t shnum = rd(e, d + 60, 2);
	size_t shstrndx = rd(e, d + 62, 2);
	if (shoff == 0 || shentsize != sizeof(Elf64_Shdr) || shoff > e->n) {
		fprintf(stderr, "sframe_kcheck: %s: no section headers\n", e->path);
		return -1;
	}
	if (shnum == 0 && shoff + 64 <= e->n)
		shnum = rd(e, d + shoff + 32, 8); /* extended numbering */
	if (shstrndx == SHN_XINDEX && shoff + 64 <= e->n)
		shstrndx = rd(e, d + shoff + 40, 4);
	if (shnum == 0 || shnum > (e->n - shoff) / 64 || shstrndx >= shnum) {
		fprintf(stderr, "sframe_kcheck: %s: bad section header table\n", e->path);
		return -1;
	}
	e->shnum = shnum;
	e->shc = calloc(shnum, sizeof *e->shc);
	if (!e->shc)
		return -1;
	for (size_t i = 0; i < shnum; i++) {
		const uint8_t *p = d + shoff + 64 * i;
		Elf64_Shdr *s = &e->shc[i];
		s->sh_name = (uint32_t)rd(e, p, 4);
		s->sh_type = (uint32_t)rd(e, p + 4, 4);
		s->sh_flags = rd(e, p + 8, 8);
		s->sh_addr = rd(e, p + 16, 8);
		s->sh_offset = rd(e, p + 24, 8);
		s->sh_size = rd(e, p + 32, 8);
		s->sh_link = (uint32_t)rd(e, p + 40, 4);
		s->sh_info = (uint32_t)rd(e, p + 44, 4);
		s->sh_entsize = rd(e, p + 56, 8);
		if (s->sh_type != SHT_NOBITS &&
		    (s->sh_offset > e->n || s->sh_size > e->n - s->sh_offset)) {
			fprintf(stderr, "sframe_kcheck: %s: section %zu outside the file\n",
				e->path, i);
			return -1;
		}
	}
	e->shstr = (const char *)d + e->shc[shstrndx].sh_offset;
	e->shstr_n = e->shc[shstrndx].sh_size;
	return 0;
}

/* Relocatable files: the function start that the relocation at `off`
 * of the .sframe section `idx` gives (section *shndx, offset *start). */
static bool rel_start(elf_t *e, size_t idx, uint64_t off, uint32_t *shndx,
		      uint64_t *start, const char **why)
{
	unsigned want = e->machine == EM_X86_64	 ? R_X86_64_PC64
			: e->machine == EM_AARCH64 ? R_AARCH64_PREL64
						   : R_390_PC64;
	for (size_t r = 1; r < e->shnum; r++) {
		const Elf64_Shdr *rs = &e->shc[r];
		if (rs->sh_type != SHT_RELA || rs->sh_info != idx ||
		    rs->sh_link >= e->shnum)
			continue;
		const Elf64_Shdr *st = &e->shc[rs->sh_link];
		const uint8_t *rp = e->d + rs->sh_offset;
		for (uint64_t k = 0; k + 24 <= rs->sh_size; k += 24) {
			if (rd(e, rp + k, 8) != off)
				continue;
			uint64_t info = rd(e, rp + k + 8, 8);
			int64_t addend = (int64_t)rd(e, rp + k + 16, 8);
			uint32_t sym = (uint32_t)(info >> 32), type = (uint32_t)info;
			if (type != want) {
				*why = "function start relocation is not 64-bit PC-relative";
				return false;
			}
			if ((uint64_t)sym * 24 + 24 > st->sh_size) {
				*why = "relocation symbol out of range";
				return false;
			}
			const uint8_t *sp = e->d + st->sh_offset + 24 * (uint64_t)sym;
			*shndx = (uint32_t)rd(e, sp + 6, 2);
			*start = rd(e, sp + 8, 8) + (uint64_t)addend;
			if (*shndx == 0 || *shndx >= e->shnum) {
				*why = "function start symbol not defined in a section";
				return false;
			}
			return true;
		}
	}
	*why = "no relocation for the function start field";
	return false;
}

/* Linked files: is [a, a+size) inside an executable PT_LOAD? */
/* The executable PT_LOAD holding [a, a + size), or -1. */
static long exec_load(const elf_t *e, uint64_t a, uint64_t size)
{
	uint64_t phoff = rd(e, e->d + 32, 8);
	size_t phnum = rd(e, e->d + 56, 2);
	for (size_t i = 0; i < phnum && phoff + 56 * (i + 1) <= e->n; i++) {
		const uint8_t *p = e->d + phoff + 56 * i;
		uint64_t vaddr = rd(e, p + 16, 8), memsz = rd(e, p + 40, 8);
		if (rd(e, p, 4) == PT_LOAD && (rd(e, p + 4, 4) & PF_X) &&
		    a >= vaddr && a - vaddr <= memsz && size <= memsz - (a - vaddr))
			return (long)i;
	}
	return -1;
}

typedef struct {
	uint32_t shndx;
	uint64_t start, size;
	uint32_t fre_off;
	uint64_t idx;
} fde_t;

typedef struct {
	uint64_t lo, hi;
} span;

static int span_cmp(const void *a, const void *b)
{
	const span *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : (x->hi < y->hi ? -1 : x->hi > y->hi);
}

static int fde_cmp(const void *a, const void *b)
{
	const fde_t *x = a, *y = b;
	if (x->shndx != y->shndx)
		return x->shndx < y->shndx ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->idx < y->idx ? -1 : 1;
}

static void check_section(elf_t *e, size_t idx, size_t *nf, size_t *nr)
{
	const Elf64_Shdr *sh = &e->shc[idx];
	const char *sn = ".sframe";
	const uint8_t *s = e->d + sh->sh_offset;
	uint64_t n = sh->sh_size;
	int errs0 = e->errors;
	unsigned abi_want = e->machine == EM_X86_64 ? 3
			    : e->machine == EM_S390 ? 4
			    : e->machine == EM_AARCH64 ? (e->be ? 1 : 2) : 0;

	if (n < 28) {
		bad(e, sn, 0, "section of %" PRIu64 " bytes has no room for a header", n);
		return;
	}
	if (rd(e, s, 2) != 0xdee2) {
		bad(e, sn, 0, "magic %#" PRIx64 " (not 0xdee2 in the file's byte order)", rd(e, s, 2));
		return;
	}
	if (s[2] != 3) {
		bad(e, sn, 2, "version %u, not 3", s[2]);
		return;
	}
	if (!(s[3] & 0x1))
		bad(e, sn, 3, "flag FDE_SORTED not set");
	if (!(s[3] & 0x4))
		bad(e, sn, 3, "flag FDE_FUNC_START_PCREL not set");
	if (s[3] & ~0x5u)
		bad(e, sn, 3, "unknown or V1-2-only flags %#x", s[3] & ~0x5u);
	if (!abi_want || s[4] != abi_want)
		bad(e, sn, 4, "ABI/arch id %u for machine %u (want %u)", s[4], e->machine, abi_want);
	if (s[7] != 0) {
		bad(e, sn, 7, "auxiliary header of %u bytes", s[7]);
		return;
	}
	uint64_t nfdes = rd(e, s + 8, 4), nfres = rd(e, s + 12, 4);
	uint64_t frelen = rd(e, s + 16, 4), fdeoff = rd(e, s + 20, 4);
	uint64_t freoff = rd(e, s + 24, 4);
	if (nfdes == 0)
		bad(e, sn, 8, "empty FDE table");
	if (nfres == 0)
		bad(e, sn, 12, "empty FRE table");
	if (28 + fdeoff + 16 * nfdes > 28 + freoff)
		bad(e, sn, 20, "FDE index [%#" PRIx64 ", +%" PRIu64 ") runs into the FRE sub-section at %#" PRIx64,
		    28 + fdeoff, 16 * nfdes, 28 + freoff);
	uint64_t end = 28 + freoff + frelen;
	if (end > n) {
		bad(e, sn, 16, "FRE sub-section [%#" PRIx64 ", +%" PRIu64 ") runs past the section end %#" PRIx64,
		    28 + freoff, frelen, n);
	} else if (end < n) {
		/* Zero padding up to the section alignment is harmless; a
		 * second block (what `ld -r` makes of converted objects) is
		 * never read: a reader takes one header per section. */
		bool zeros = n - end < 8;
		for (uint64_t k = end; zeros && k < n; k++)
			zeros = s[k] == 0;
		if (!zeros)
			bad(e, sn, end, "%" PRIu64 " bytes after the FRE sub-section%s", n - end,
			    ((end + 7) & ~7ull) + 28 <= n && rd(e, s + ((end + 7) & ~7ull), 2) == 0xdee2
				    ? ": a second SFrame block (concatenated by ld -r); a reader sees only the first"
				    : "");
	}
	if (e->errors != errs0)
		return;

	const uint8_t *fre = s + 28 + freoff;
	fde_t *f = calloc(nfdes ? nfdes : 1, sizeof *f);
	span *used = calloc(nfdes ? nfdes : 1, sizeof *used);
	uint64_t fres_total = 0;
	long text_seg = -1;
	if (!f || !used) {
		free(f);
		free(used);
		bad(e, sn, 0, "out of memory");
		return;
	}
	for (uint64_t i = 0; i < nfdes; i++) {
		uint64_t fo = 28 + fdeoff + 16 * i;
		const uint8_t *x = s + fo;
		int64_t field = rds(e, x, 8);
		f[i].idx = i;
		f[i].size = rd(e, x + 8, 4);
		f[i].fre_off = (uint32_t)rd(e, x + 12, 4);
		if (f[i].size == 0)
			bad(e, sn, fo + 8, "FDE %" PRIu64 ": function size 0", i);
		if (e->rel) {
			const char *why = NULL;
			if (!rel_start(e, idx, fo, &f[i].shndx, &f[i].start, &why)) {
				bad(e, sn, fo, "FDE %" PRIu64 ": %s", i, why);
				continue;
			}
			const Elf64_Shdr *t = &e->shc[f[i].shndx];
			if (!(t->sh_flags & SHF_EXECINSTR) || f[i].start > t->sh_size ||
			    f[i].size > t->sh_size - f[i].start)
				bad(e, sn, fo, "FDE %" PRIu64 ": function [%#" PRIx64 ", +%" PRIu64
				    ") not inside an executable section (%s, %" PRIu64 " bytes)",
				    i, f[i].start, f[i].size, secname(e, f[i].shndx), t->sh_size);
		} else {
			f[i].start = sh->sh_addr + fo + (uint64_t)field;
			long seg = exec_load(e, f[i].start, f[i].size);
			if (seg < 0)
				bad(e, sn, fo, "FDE %" PRIu64 ": function [%#" PRIx64 ", +%" PRIu64
				    ") not inside an executable segment", i, f[i].start, f[i].size);
			/* A kernel reader knows one text range per .sframe
			 * (the executable segment it was mapped with). */
			else if (text_seg >= 0 && seg != text_seg)
				bad(e, sn, fo, "FDE %" PRIu64 ": function at %#" PRIx64 " in executable segment %ld, "
				    "the ones before in segment %ld (one text range per section)",
				    i, f[i].start, seg, text_seg);
			else
				text_seg = seg;
		}
		/* Sorted: in index order the (section,) start increases
		 * strictly, as the latest kernel reader requires (two FDEs
		 * for one start make its binary search ambiguous). */
		if (i > 0 && (!e->rel || f[i - 1].shndx == f[i].shndx) &&
		    (f[i].shndx < f[i - 1].shndx ||
		     (f[i].shndx == f[i - 1].shndx && f[i].start <= f[i - 1].start)))
			bad(e, sn, fo, "FDE %" PRIu64 ": start %#" PRIx64 " not above the previous FDE's %#" PRIx64
			    " (FDE_SORTED; starts strictly increasing)", i, f[i].start, f[i - 1].start);

		/* Attribute and FREs. */
		if (f[i].fre_off + 5ull > frelen) {
			bad(e, sn, fo + 12, "FDE %" PRIu64 ": FRE offset %u past the FRE sub-section", i, f[i].fre_off);
			continue;
		}
		const uint8_t *a = fre + f[i].fre_off;
		uint64_t ao = 28 + freoff + f[i].fre_off;
		unsigned cnt = (unsigned)rd(e, a, 2), info = a[2], info2 = a[3], rep = a[4];
		unsigned fre_type = info & 0xf, pctype = (info >> 4) & 1, fde_type = info2 & 0x1f;
		if (fre_type > 2)
			bad(e, sn, ao + 2, "FDE %" PRIu64 ": FRE type %u", i, fre_type);
		if (info & 0x40)
			bad(e, sn, ao + 2, "FDE %" PRIu64 ": unused info bit 6 set", i);
		if ((info & 0x20) && e->machine != EM_AARCH64)
			bad(e, sn, ao + 2, "FDE %" PRIu64 ": pauth key bit outside AArch64", i);
		if (info2 & 0xe0 || fde_type > 1)
			bad(e, sn, ao + 3, "FDE %" PRIu64 ": info2 %#x (FDE type %u)", i, info2, fde_type);
		if (pctype == 1 && rep == 0)
			bad(e, sn, ao + 4, "FDE %" PRIu64 ": MASK PC type with repeat size 0", i);
		/* Each FRE starts at a byte of its own: no more FREs than the
		 * function has bytes (bounds a reader's work by the text). */
		if (cnt > f[i].size)
			bad(e, sn, ao, "FDE %" PRIu64 ": %u FREs for a function of %" PRIu64 " bytes",
			    i, cnt, f[i].size);
		if (e->errors != errs0)
			continue;
		unsigned asz = 1u << fre_type;
		uint64_t p = f[i].fre_off + 5, prev = 0;
		for (unsigned k = 0; k < cnt; k++) {
			uint64_t ro = 28 + freoff + p;
			if (p + asz + 1 > frelen) {
				bad(e, sn, ro, "FDE %" PRIu64 " FRE %u: runs past the FRE sub-section", i, k);
				break;
			}
			uint64_t st = rd(e, fre + p, asz);
			unsigned fi = fre[p + asz];
			unsigned nw = (fi >> 1) & 0xf, wcode = (fi >> 5) & 3;
			if (wcode == 3) {
				bad(e, sn, ro + asz, "FDE %" PRIu64 " FRE %u: data word size code 3", i, k);
				break;
			}
			uint64_t wsz = 1u << wcode;
			if (k > 0 && st <= prev)
				bad(e, sn, ro, "FDE %" PRIu64 " FRE %u: start %#" PRIx64 " not above the previous %#" PRIx64,
				    i, k, st, prev);
			/* Below the function size whatever the PC type (MASK
			 * starts too: the latest kernel reader checks every
			 * FRE start against the size). */
			if (st >= f[i].size)
				bad(e, sn, ro, "FDE %" PRIu64 " FRE %u: start %#" PRIx64 " outside the function (%" PRIu64 " bytes)",
				    i, k, st, f[i].size);
			if (pctype == 1 && st >= rep)
				bad(e, sn, ro, "FDE %" PRIu64 " FRE %u: start %#" PRIx64 " outside the %u-byte block",
				    i, k, st, rep);
			bool ok_count;
			if (fde_type == 1)
				ok_count = nw == 0 || (nw >= 2 && nw <= 6);
			else if (e->machine == EM_X86_64)
				ok_count = nw <= 2;
			else if (e->machine == EM_AARCH64)
				ok_count = nw == 0 || nw == 1 || nw == 3;
			else
				ok_count = nw <= 3;
			if (!ok_count)
				bad(e, sn, ro + asz, "FDE %" PRIu64 " FRE %u: %u data words for this ABI/FDE type", i, k, nw);
			if ((fi & 0x80) && e->machine != EM_AARCH64)
				bad(e, sn, ro + asz, "FDE %" PRIu64 " FRE %u: mangled-RA bit outside AArch64", i, k);
			prev = st;
			p += asz + 1 + nw * wsz;
			if (p > frelen) {
				bad(e, sn, ro, "FDE %" PRIu64 " FRE %u: data words run past the FRE sub-section", i, k);
				break;
			}
		}
		used[i].lo = f[i].fre_off;
		used[i].hi = p;
		fres_total += cnt;
	}
	if (e->errors == errs0) {
		/* Functions of one section do not overlap. */
		qsort(f, nfdes, sizeof *f, fde_cmp);
		for (uint64_t i = 1; i < nfdes; i++)
			if (f[i].shndx == f[i - 1].shndx &&
			    f[i].start < f[i - 1].start + f[i - 1].size)
				bad(e, sn, 28 + fdeoff + 16 * f[i].idx,
				    "FDE %" PRIu64 ": function at %#" PRIx64 " overlaps the one at %#" PRIx64,
				    f[i].idx, f[i].start, f[i - 1].start);
		/* The FRE data is used exactly. Shared copies (--share-fres)
		 * are the same span, counted once. */
		qsort(used, nfdes, sizeof *used, span_cmp);
		uint64_t at = 0;
		for (uint64_t i = 0; i < nfdes; i++) {
			if (i > 0 && used[i].lo == used[i - 1].lo && used[i].hi == used[i - 1].hi)
				continue;
			if (used[i].lo != at) {
				bad(e, sn, 28 + freoff + at, "FRE data: %s of %" PRId64 " bytes",
				    used[i].lo > at ? "unused gap" : "overlap",
				    (int64_t)(used[i].lo > at ? used[i].lo - at : at - used[i].lo));
				break;
			}
			at = used[i].hi;
		}
		if (e->errors == errs0 && at != frelen)
			bad(e, sn, 28 + freoff + at, "FRE data: %" PRIu64 " unused bytes at the end", frelen - at);
		if (fres_total != nfres)
			bad(e, sn, 12, "header says %" PRIu64 " FREs, the FDEs have %" PRIu64, nfres, fres_total);
	}
	*nf += nfdes;
	*nr += fres_total;
	free(f);
	free(used);
}

static int check_file(const char *path)
{
	elf_t e;
	memset(&e, 0, sizeof e);
	e.path = path;
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		fprintf(stderr, "sframe_kcheck: %s: %s\n", path, strerror(errno));
		return 2;
	}
	uint8_t *buf = NULL;
	size_t cap = 0, len = 0, got;
	do {
		if (len == cap) {
			cap = cap ? 2 * cap : 1 << 20;
			uint8_t *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(fp);
				return 2;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len, fp);
		len += got;
	} while (got > 0);
	fclose(fp);
	e.d = buf;
	e.n = len;
	if (load(&e) != 0) {
		free(buf);
		free(e.shc);
		return 2;
	}
	size_t secs = 0, nf = 0, nr = 0;
	for (size_t i = 1; i < e.shnum; i++) {
		const char *nm = secname(&e, i);
		if (e.shc[i].sh_type != SHT_GNU_SFRAME && strcmp(nm, ".sframe") != 0)
			continue;
		if (e.shc[i].sh_type == SHT_RELA)
			continue;
		secs++;
		check_section(&e, i, &nf, &nr);
	}
	if (secs == 0) {
		fprintf(stderr, "sframe_kcheck: %s: no .sframe section\n", path);
		e.errors++;
	}
	if (!e.errors)
		printf("%s: %zu .sframe section%s, %zu FDEs, %zu FREs: ok\n", path,
		       secs, secs == 1 ? "" : "s", nf, nr);
	free(buf);
	free(e.shc);
	return e.errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	int rc = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: sframe_kcheck FILE...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		int r = check_file(argv[i]);
		if (r > rc)
			rc = r;
	}
	return rc;
}
