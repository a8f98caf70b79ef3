/* gen_synth: write a linked x86-64 ELF shared object with N synthetic
 * functions whose .eh_frame has the shapes GCC -O2 emits (leaf, stack
 * adjustment, frame pointer, callee-saved pushes with several epilogues
 * using remember/restore_state, one PLT-style expression FDE) plus the
 * matching .eh_frame_hdr. Writing the ELF directly instead of going
 * through `as` keeps 1M functions to a second or two.
 *
 *   gen_synth N OUT [SEED]
 *
 * Function sizes are log-uniform in [16, 4096) bytes (mean ~740, close to
 * libLLVM's), so the .text : .eh_frame ratio is realistic too. */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	uint8_t *p;
	size_t len, cap;
} vec;

static void need(vec *v, size_t n)
{
	if (v->len + n <= v->cap)
		return;
	size_t c = v->cap ? v->cap : 4096;
	while (c < v->len + n)
		c *= 2;
	uint8_t *q = realloc(v->p, c);
	if (!q) {
		fprintf(stderr, "gen_synth: out of memory\n");
		exit(1);
	}
	v->p = q;
	v->cap = c;
}

static void put(vec *v, const void *b, size_t n)
{
	need(v, n);
	memcpy(v->p + v->len, b, n);
	v->len += n;
}

static void u8(vec *v, unsigned x)
{
	uint8_t b = (uint8_t)x;
	put(v, &b, 1);
}

static void u32(vec *v, uint32_t x)
{
	uint8_t b[4] = {(uint8_t)x, (uint8_t)(x >> 8), (uint8_t)(x >> 16),
			(uint8_t)(x >> 24)};
	put(v, b, 4);
}

static void uleb(vec *v, uint64_t x)
{
	do {
		unsigned b = x & 0x7f;
		x >>= 7;
		u8(v, b | (x ? 0x80 : 0));
	} while (x);
}

/* xorshift64*: deterministic across runs and machines. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static unsigned rint_(uint64_t *s, unsigned lo, unsigned hi) /* [lo,hi] */
{
	return lo + (unsigned)(rnd(s) % (uint64_t)(hi - lo + 1));
}

enum { SH_LEAF, SH_SUB, SH_FP, SH_PUSH, SH_PLT };

typedef struct {
	uint32_t size;
	uint8_t shape;
} func;

/* Emit an advance of d code units (d > 0). */
static void adv(vec *v, uint32_t d)
{
	if (d < 64)
		u8(v, 0x40 | d);
	else if (d < 256) {
		u8(v, 0x02);
		u8(v, d);
	} else if (d < 65536) {
		u8(v, 0x03);
		u8(v, d & 0xff);
		u8(v, d >> 8);
	} else {
		u8(v, 0x04);
		u32(v, d);
	}
}

/* Position tracker so advances never pass the function end. */
typedef struct {
	uint32_t at, size;
} pos;

static void go(vec *v, pos *p, uint32_t to)
{
	if (to >= p->size)
		to = p->size - 1;
	if (to > p->at) {
		adv(v, to - p->at);
		p->at = to;
	}
}

static void def_cfa_offset(vec *v, unsigned off)
{
	u8(v, 0x0e);
	uleb(v, off);
}

static void offset(vec *v, unsigned reg, unsigned cfa_off)
{
	u8(v, 0x80 | reg);
	uleb(v, cfa_off / 8);
}

/* The CFI program of one function (without FDE header). */
static void program(vec *v, const func *f, uint64_t *s)
{
	pos p = {0, f->size};
	static const unsigned regs[6] = {15, 14, 13, 12, 6, 3};

	switch (f->shape) {
	case SH_LEAF:
		break;
	case SH_PLT: {
		static const uint8_t expr[] = {0x77, 0x08, 0x80, 0x00, 0x3f,
					       0x1a, 0x3b, 0x2a, 0x33, 0x24,
					       0x22};
		def_cfa_offset(v, 16);
		go(v, &p, 6);
		def_cfa_offset(v, 24);
		go(v, &p, 16);
		u8(v, 0x0f);
		uleb(v, sizeof expr);
		put(v, expr, sizeof expr);
		break;
	}
	case SH_SUB: {
		unsigned frame = 8 + 16 * rint_(s, 1, 24);
		go(v, &p, 4);
		def_cfa_offset(v, frame);
		unsigned neps = rint_(s, 0, 2);
		for (unsigned e = 0; e < neps; e++) {
			uint32_t at = p.at + 1 +
				      (uint32_t)(rnd(s) % (p.size - p.at));
			go(v, &p, at);
			u8(v, 0x0a); /* remember_state */
			def_cfa_offset(v, 8);
			go(v, &p, p.at + 1);
			u8(v, 0x0b); /* restore_state */
		}
		go(v, &p, p.size - 1);
		def_cfa_offset(v, 8);
		break;
	}
	case SH_FP: {
		go(v, &p, 1);
		def_cfa_offset(v, 16);
		offset(v, 6, 16);
		go(v, &p, 4);
		u8(v, 0x0d); /* def_cfa_register rbp */
		uleb(v, 6);
		unsigned k = rint_(s, 0, 5); /* callee-saved after the frame */
		for (unsigned i = 0; i < k; i++) {
			go(v, &p, p.at + 2);
			offset(v, regs[i], 24 + 8 * i);
		}
		go(v, &p, p.size - 2);
		u8(v, 0x0c); /* def_cfa rsp, 8 after leave */
		uleb(v, 7);
		uleb(v, 8);
		break;
	}
	case SH_PUSH: {
		unsigned k = rint_(s, 1, 6), first = 6 - k;
		unsigned cfa = 8;
		for (unsigned i = first; i < 6; i++) {
			go(v, &p, p.at + (regs[i] >= 8 ? 2 : 1));
			cfa += 8;
			def_cfa_offset(v, cfa);
			offset(v, regs[i], cfa);
		}
		unsigned body = cfa;
		if (rnd(s) % 2) {
			go(v, &p, p.at + 4);
			body = cfa + 16 * rint_(s, 1, 16);
			def_cfa_offset(v, body);
		}
		unsigned neps = 1 + rint_(s, 0, 3) / 2 + rint_(s, 0, 3) / 3;
		for (unsigned e = 0; e < neps; e++) {
			bool last = e + 1 == neps;
			uint32_t room = p.size - p.at;
			uint32_t at = last ? p.size - 1 - (k + 2) * 2 :
				      p.at + 1 + (uint32_t)(rnd(s) % (room / 2 + 1));
			go(v, &p, at);
			if (!last)
				u8(v, 0x0a);
			unsigned c = cfa;
			if (body != cfa) { /* add $N, %rsp */
				go(v, &p, p.at + 4);
				def_cfa_offset(v, c);
			}
			for (unsigned i = 6; i-- > first;) { /* pops */
				go(v, &p, p.at + (regs[i] >= 8 ? 2 : 1));
				c -= 8;
				def_cfa_offset(v, c);
			}
			if (!last) {
				go(v, &p, p.at + 1);
				u8(v, 0x0b);
			}
		}
		break;
	}
	}
}

typedef struct {
	const char *name;
	uint32_t type;
	uint64_t flags, addr, off, size, align;
} sec;

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: gen_synth N OUT [SEED]\n");
		return 2;
	}
	size_t n = strtoull(argv[1], NULL, 10);
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
	if (n < 2) {
		fprintf(stderr, "gen_synth: N must be >= 2\n");
		return 2;
	}
	func *fs = calloc(n, sizeof *fs);
	if (!fs)
		return 1;

	/* Pass 1: shapes and sizes, then the text layout. */
	const uint64_t text_addr = 0x1000;
	uint64_t text_size = 0;
	uint64_t *fstart = malloc(n * sizeof *fstart);
	if (!fstart)
		return 1;
	for (size_t i = 0; i < n; i++) {
		func *f = &fs[i];
		unsigned r = (unsigned)(rnd(&s) % 100);
		f->shape = i == 0 ? SH_PLT : r < 25 ? SH_LEAF : r < 40 ? SH_SUB :
			   r < 50 ? SH_FP : SH_PUSH;
		/* log-uniform in [16, 4096): 2^(4 + 8u) */
		double u = (double)(rnd(&s) >> 11) / 9007199254740992.0;
		uint32_t sz = (uint32_t)(16.0 * __builtin_exp2(8.0 * u));
		uint32_t min = f->shape == SH_LEAF ? 1 : f->shape == SH_SUB ? 16 :
			       f->shape == SH_FP ? 48 : 96;
		if (f->shape == SH_PLT)
			sz = 0x360;
		f->size = sz < min ? min : sz;
		text_size = (text_size + 15) & ~(uint64_t)15;
		fstart[i] = text_addr + text_size;
		text_size += f->size;
	}

	/* Addresses: identity map (vaddr == file offset), ld-like pages. */
	uint64_t hdr_addr = (text_addr + text_size + 0xfff) & ~(uint64_t)0xfff;
	uint64_t hdr_size = 12 + 8 * (uint64_t)n;
	uint64_t eh_addr = (hdr_addr + hdr_size + 7) & ~(uint64_t)7;

	/* Pass 2: .eh_frame (one CIE as GCC/gas write it, then the FDEs). */
	vec eh = {0}, hdr = {0}, prog = {0};
	static const uint8_t cie[] = {
		0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 0x10,
		1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0};
	put(&eh, cie, sizeof cie);
	uint32_t *fde_off = malloc(n * sizeof *fde_off);
	if (!fde_off)
		return 1;
	for (size_t i = 0; i < n; i++) {
		prog.len = 0;
		program(&prog, &fs[i], &s);
		size_t start = eh.len;
		fde_off[i] = (uint32_t)start;
		size_t body = 4 + 4 + 4 + 1 + prog.len; /* cie ptr..insns */
		size_t total = (4 + body + 3) & ~(size_t)3;
		u32(&eh, (uint32_t)(total - 4));
		u32(&eh, (uint32_t)(start + 4)); /* CIE pointer -> offset 0 */
		int64_t rel = (int64_t)fstart[i] -
			      (int64_t)(eh_addr + start + 8);
		u32(&eh, (uint32_t)rel);
		u32(&eh, fs[i].size);
		u8(&eh, 0); /* augmentation data length */
		put(&eh, prog.p, prog.len);
		while (eh.len < start + total)
			u8(&eh, 0); /* DW_CFA_nop */
	}
	u32(&eh, 0); /* terminator */

	/* .eh_frame_hdr: binary search table, datarel to the header. */
	u8(&hdr, 1);
	u8(&hdr, 0x1b);
	u8(&hdr, 0x03);
	u8(&hdr, 0x3b);
	u32(&hdr, (uint32_t)(int32_t)(eh_addr - (hdr_addr + 4)));
	u32(&hdr, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		u32(&hdr, (uint32_t)(int32_t)(fstart[i] - hdr_addr));
		u32(&hdr, (uint32_t)(int32_t)(eh_addr + fde_off[i] - hdr_addr));
	}

	static const char shstr[] =
		"\0.text\0.eh_frame_hdr\0.eh_frame\0.shstrtab";
	uint64_t shstr_off = eh_addr + eh.len;
	uint64_t shoff = (shstr_off + sizeof shstr + 7) & ~(uint64_t)7;
	const unsigned nph = 4, nsh = 5;

	Elf64_Ehdr e = {0};
	memcpy(e.e_ident, ELFMAG, SELFMAG);
	e.e_ident[EI_CLASS] = ELFCLASS64;
	e.e_ident[EI_DATA] = ELFDATA2LSB;
	e.e_ident[EI_VERSION] = EV_CURRENT;
	e.e_type = ET_DYN;
	e.e_machine = EM_X86_64;
	e.e_version = EV_CURRENT;
	e.e_entry = text_addr;
	e.e_phoff = sizeof e;
	e.e_shoff = shoff;
	e.e_ehsize = sizeof e;
	e.e_phentsize = sizeof(Elf64_Phdr);
	e.e_phnum = (Elf64_Half)nph;
	e.e_shentsize = sizeof(Elf64_Shdr);
	e.e_shnum = (Elf64_Half)nsh;
	e.e_shstrndx = 4;

	Elf64_Phdr ph[4] = {0};
	ph[0] = (Elf64_Phdr){PT_LOAD, PF_R | PF_X, 0, 0, 0,
			     text_addr + text_size, text_addr + text_size,
			     0x1000};
	uint64_t ro_end = eh_addr + eh.len;
	ph[1] = (Elf64_Phdr){PT_LOAD, PF_R, hdr_addr, hdr_addr, hdr_addr,
			     ro_end - hdr_addr, ro_end - hdr_addr, 0x1000};
	ph[2] = (Elf64_Phdr){PT_GNU_EH_FRAME, PF_R, hdr_addr, hdr_addr,
			     hdr_addr, hdr.len, hdr.len, 4};
	ph[3] = (Elf64_Phdr){PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0, 0, 16};

	Elf64_Shdr sh[5] = {0};
	sh[1] = (Elf64_Shdr){1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
			     text_addr, text_addr, text_size, 0, 0, 16, 0};
	sh[2] = (Elf64_Shdr){7, SHT_PROGBITS, SHF_ALLOC, hdr_addr, hdr_addr,
			     hdr.len, 0, 0, 4, 0};
	sh[3] = (Elf64_Shdr){21, SHT_PROGBITS, SHF_ALLOC, eh_addr, eh_addr,
			     eh.len, 0, 0, 8, 0};
	sh[4] = (Elf64_Shdr){31, SHT_STRTAB, 0, 0, shstr_off, sizeof shstr,
			     0, 0, 1, 0};

	/* Assemble the image: text is NOP fill, each function ends in RET. */
	size_t total = shoff + sizeof sh;
	uint8_t *img = calloc(1, total);
	if (!img)
		return 1;
	memcpy(img, &e, sizeof e);
	memcpy(img + sizeof e, ph, sizeof ph);
	memset(img + text_addr, 0xcc, text_size);
	for (size_t i = 0; i < n; i++) {
		memset(img + fstart[i], 0x90, fs[i].size);
		img[fstart[i] + fs[i].size - 1] = 0xc3;
	}
	memcpy(img + hdr_addr, hdr.p, hdr.len);
	memcpy(img + eh_addr, eh.p, eh.len);
	memcpy(img + shstr_off, shstr, sizeof shstr);
	memcpy(img + shoff, sh, sizeof sh);

	FILE *out = fopen(argv[2], "wb");
	if (!out || fwrite(img, 1, total, out) != total || fclose(out) != 0) {
		fprintf(stderr, "gen_synth: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	printf("%zu functions, .text %llu, .eh_frame %zu, .eh_frame_hdr %zu, "
	       "file %zu bytes\n",
	       n, (unsigned long long)text_size, eh.len, hdr.len, total);
	free(img);
	free(eh.p);
	free(hdr.p);
	free(prog.p);
	free(fde_off);
	free(fstart);
	free(fs);
	return 0;
}
