/* sfwalk: independent in-process SFrame V3 walker (see sfwalk.h).
 * Written from the spec text (sections 2, 3, Appendix A) and the facts in
 * shared/seeds/README.md only; it deliberately does not include
 * src/sframe/sframe_fmt.h, so every constant below is a second
 * transcription of the spec. */
#define _GNU_SOURCE
#include "sfwalk.h"

#include <elf.h>
#include <link.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME 0x6474e554
#endif

/* Spec 2.1-2.4 layout. */
#define HDR_SIZE 28
#define FDE_IDX_SIZE 16
#define FDE_ATTR_SIZE 5
#define F_FDE_SORTED 0x1
#define F_FRAME_POINTER 0x2 /* V1/V2 only; tolerated */
#define F_FUNC_START_PCREL 0x4

/* Per ABI: SFrame abi id, DWARF numbers of SP, FP and the RA register
 * (-1: RA always on the stack). */
#if defined(__x86_64__)
#define ABI_ID 3
#define REG_SP 7
#define REG_FP 6
#define REG_LR (-1)
#define SP_VAL_OFFSET 0
#elif defined(__aarch64__)
#if defined(__AARCH64EB__)
#define ABI_ID 1
#else
#define ABI_ID 2
#endif
#define REG_SP 31
#define REG_FP 29
#define REG_LR 30
#define SP_VAL_OFFSET 0
#elif defined(__s390x__)
#define ABI_ID 4
#define REG_SP 15
#define REG_FP 11
#define REG_LR 14
#define SP_VAL_OFFSET (-160) /* SP = CFA - 160 (README facts) */
#else
#error "sfwalk: unsupported architecture"
#endif

static const char *const stop_names[] = {
#define SFW_NAME(n, s) #n,
	SFW_STOP_LIST(SFW_NAME)
#undef SFW_NAME
};
static const char *const stop_texts[] = {
#define SFW_TEXT(n, s) s,
	SFW_STOP_LIST(SFW_TEXT)
#undef SFW_TEXT
};

const char *sfw_stop_name(int r)
{
	return r >= 0 && r < SFW_STOP_COUNT ? stop_names[r] : "?";
}

const char *sfw_stop_text(int r)
{
	return r >= 0 && r < SFW_STOP_COUNT ? stop_texts[r] : "?";
}

/* ---- bounds-checked section reads (native endianness: in-process) --- */

static bool sec_ok(const sfw_obj *o, size_t off, size_t n)
{
	return off <= o->size && n <= o->size - off;
}

static bool rd_u8(const sfw_obj *o, size_t off, uint8_t *v)
{
	if (!sec_ok(o, off, 1))
		return false;
	*v = o->sec[off];
	return true;
}

static bool rd_u16(const sfw_obj *o, size_t off, uint16_t *v)
{
	if (!sec_ok(o, off, 2))
		return false;
	memcpy(v, o->sec + off, 2);
	return true;
}

static bool rd_u32(const sfw_obj *o, size_t off, uint32_t *v)
{
	if (!sec_ok(o, off, 4))
		return false;
	memcpy(v, o->sec + off, 4);
	return true;
}

static bool rd_i64(const sfw_obj *o, size_t off, int64_t *v)
{
	if (!sec_ok(o, off, 8))
		return false;
	memcpy(v, o->sec + off, 8);
	return true;
}

/* Unsigned / signed integer of width n (1, 2, 4) at off. */
static bool rd_word(const sfw_obj *o, size_t off, unsigned n, uint64_t *u,
		    int64_t *s)
{
	uint8_t b;
	uint16_t h;
	uint32_t w;

	switch (n) {
	case 1:
		if (!rd_u8(o, off, &b))
			return false;
		*u = b;
		*s = (int8_t)b;
		return true;
	case 2:
		if (!rd_u16(o, off, &h))
			return false;
		*u = h;
		*s = (int16_t)h;
		return true;
	case 4:
		if (!rd_u32(o, off, &w))
			return false;
		*u = w;
		*s = (int32_t)w;
		return true;
	default:
		return false;
	}
}

/* ---- init ------------------------------------------------------------ */

/* Absolute start address of FDE i (spec 2.3.1). */
static bool fde_start(const sfw_obj *o, uint32_t i, uintptr_t *start,
		      uint32_t *size)
{
	size_t at = o->fde_at + (size_t)i * FDE_IDX_SIZE;
	int64_t v;

	if (!rd_i64(o, at, &v) || !rd_u32(o, at + 8, size))
		return false;
	if (o->flags & F_FUNC_START_PCREL)
		*start = (uintptr_t)(o->sec + at) + (uintptr_t)v;
	else
		*start = (uintptr_t)o->sec + (uintptr_t)v;
	return true;
}

/* Header checks of spec 2.1/2.2: every offset inside the section before
 * any pointer arithmetic uses it. */
static bool validate(sfw_obj *o)
{
	uint16_t magic;
	uint8_t ver, abi, aux;
	uint32_t nfres, fre_len, fdeoff, freoff;
	uint64_t hdr_end, fde_at, fre_at;

	if (!rd_u16(o, 0, &magic) || magic != 0xdee2)
		return false;
	if (!rd_u8(o, 2, &ver) || ver != 3)
		return false;
	if (!rd_u8(o, 3, &o->flags) || (o->flags & ~0x7u))
		return false;
	if (!rd_u8(o, 4, &abi) || abi != ABI_ID)
		return false;
	o->fixed_fp = (int8_t)o->sec[5];
	o->fixed_ra = (int8_t)o->sec[6];
	if (!rd_u8(o, 7, &aux) || !rd_u32(o, 8, &o->nfdes) ||
	    !rd_u32(o, 12, &nfres) || !rd_u32(o, 16, &fre_len) ||
	    !rd_u32(o, 20, &fdeoff) || !rd_u32(o, 24, &freoff))
		return false;
	hdr_end = HDR_SIZE + (uint64_t)aux;
	fde_at = hdr_end + fdeoff;
	fre_at = hdr_end + freoff;
	if (fde_at + (uint64_t)o->nfdes * FDE_IDX_SIZE > fre_at ||
	    fre_at + fre_len > o->size)
		return false;
#if defined(__x86_64__)
	/* AMD64 never tracks RA per FRE: the header must say where it is. */
	if (o->fixed_ra == 0)
		return false;
#endif
	o->fde_at = (size_t)fde_at;
	o->fre_at = (size_t)fre_at;
	o->fre_len = fre_len;
	return true;
}

static void check_sorted(sfw_ctx *c, sfw_obj *o)
{
	uintptr_t prev = 0, s;
	uint32_t i, sz;

	o->sorted = (o->flags & F_FDE_SORTED) != 0;
	for (i = 0; o->sorted && i < o->nfdes; i++) {
		if (!fde_start(o, i, &s, &sz) || (i > 0 && s < prev))
			o->sorted = false;
		prev = s;
	}
	if ((o->flags & F_FDE_SORTED) && !o->sorted)
		c->nunsorted++;
}

static int phdr_cb(struct dl_phdr_info *info, size_t sz, void *data)
{
	sfw_ctx *c = data;
	sfw_obj *o;
	const ElfW(Phdr) *sf = NULL;
	int i;

	(void)sz;
	if (c->nobj >= SFW_MAX_OBJS)
		return 1;
	o = &c->obj[c->nobj];
	memset(o, 0, sizeof *o);
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && o->ntext < 4) {
			o->text[o->ntext].lo = info->dlpi_addr + p->p_vaddr;
			o->text[o->ntext].hi = o->text[o->ntext].lo + p->p_memsz;
			o->ntext++;
		} else if (p->p_type == PT_GNU_SFRAME) {
			sf = p;
		}
	}
	strncpy(o->name, info->dlpi_name ? info->dlpi_name : "", sizeof o->name - 1);
	if (sf) {
		/* The segment must lie inside a loaded PT_LOAD. */
		uintptr_t lo = info->dlpi_addr + sf->p_vaddr, hi = lo + sf->p_memsz;
		bool in_load = false;
		for (i = 0; i < info->dlpi_phnum; i++) {
			const ElfW(Phdr) *p = &info->dlpi_phdr[i];
			uintptr_t a = info->dlpi_addr + p->p_vaddr;
			if (p->p_type == PT_LOAD && (p->p_flags & PF_R) && a <= lo &&
			    hi <= a + p->p_memsz)
				in_load = true;
		}
		o->sec = (const uint8_t *)lo;
		o->size = sf->p_memsz;
		if (!in_load || !validate(o)) {
			o->bad = true;
			c->nbad++;
		} else {
			c->nsframe++;
			check_sorted(c, o);
		}
	}
	c->nobj++;
	return 0;
}

int sfw_init(sfw_ctx *c)
{
	memset(c, 0, sizeof *c);
	dl_iterate_phdr(phdr_cb, c);
	return c->nobj;
}

void sfw_regs_from_ucontext(const void *ucv, sfw_regs *r)
{
	const ucontext_t *uc = ucv;
	const mcontext_t *m = &uc->uc_mcontext;
	int i;

	memset(r, 0, sizeof *r);
#if defined(__x86_64__)
	/* DWARF order rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip. */
	static const int map[17] = {REG_RAX, REG_RDX, REG_RCX, REG_RBX,
				    REG_RSI, REG_RDI, REG_RBP, REG_RSP,
				    REG_R8,  REG_R9,  REG_R10, REG_R11,
				    REG_R12, REG_R13, REG_R14, REG_R15,
				    REG_RIP};
	for (i = 0; i < 17; i++)
		r->reg[i] = (uint64_t)m->gregs[map[i]];
	r->pc = (uint64_t)m->gregs[REG_RIP];
#elif defined(__aarch64__)
	for (i = 0; i < 31; i++)
		r->reg[i] = m->regs[i];
	r->reg[31] = m->sp;
	r->pc = m->pc;
#elif defined(__s390x__)
	/* DWARF 16..31 are f0 f2 f4 f6 f1 f3 f5 f7 f8 f10 f12 f14 f9 f11 f13 f15. */
	static const int fmap[16] = {0, 2, 4, 6, 1, 3, 5, 7,
				     8, 10, 12, 14, 9, 11, 13, 15};
	for (i = 0; i < 16; i++)
		r->reg[i] = m->gregs[i];
	for (i = 0; i < 16; i++)
		memcpy(&r->reg[16 + i], &m->fpregs.fprs[fmap[i]], 8);
	r->pc = m->psw.addr;
#endif
}

/* ---- walk ------------------------------------------------------------ */

typedef struct {
	const sfw_regs *r0;   /* frame-0 registers, NULL past frame 0 */
	uintptr_t sp, fp;
	uintptr_t lo, hi;     /* stack bounds */
} wstate;

static bool read_stack(const wstate *w, uintptr_t a, uintptr_t *v)
{
	if (a < w->lo || a > w->hi || w->hi - a < sizeof *v)
		return false;
	memcpy(v, (const void *)a, sizeof *v);
	return true;
}

/* Value of DWARF register n in the frame being unwound. */
static bool get_reg(const wstate *w, uint64_t n, uintptr_t *v)
{
	if (n == REG_SP) {
		*v = w->sp;
		return true;
	}
	if (n == REG_FP) {
		*v = w->fp;
		return true;
	}
	if (w->r0 && n < SFW_NREGS) {
		*v = (uintptr_t)w->r0->reg[n];
		return true;
	}
	return false;
}

static uintptr_t strip_ra(uintptr_t ra)
{
#if defined(__aarch64__)
	/* XPACLRI (hint #7) strips the PAC from x30; a NOP without PAC, where
	 * the value carries no PAC either. */
	register uintptr_t x30 __asm__("x30") = ra;
	__asm__("hint #7" : "+r"(x30));
	return x30;
#else
	return ra;
#endif
}

static const sfw_obj *find_obj(const sfw_ctx *c, uintptr_t pc)
{
	int i, j;

	for (i = 0; i < c->nobj; i++)
		for (j = 0; j < c->obj[i].ntext; j++)
			if (c->obj[i].text[j].lo <= pc && pc < c->obj[i].text[j].hi)
				return &c->obj[i];
	return NULL;
}

/* Index of the FDE covering pc, or -1. */
static int64_t find_fde(const sfw_obj *o, uintptr_t pc, int *err)
{
	uintptr_t s;
	uint32_t sz, i, lo = 0, hi = o->nfdes;

	if (!o->sorted) {
		for (i = 0; i < o->nfdes; i++) {
			if (!fde_start(o, i, &s, &sz)) {
				*err = SFW_STOP_BAD_SECTION;
				return -1;
			}
			if (s <= pc && pc - s < sz)
				return i;
		}
		return -1;
	}
	/* Last FDE with start <= pc. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (!fde_start(o, mid, &s, &sz)) {
			*err = SFW_STOP_BAD_SECTION;
			return -1;
		}
		if (s <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	if (!fde_start(o, lo - 1, &s, &sz)) {
		*err = SFW_STOP_BAD_SECTION;
		return -1;
	}
	return (s <= pc && pc - s < sz) ? (int64_t)(lo - 1) : -1;
}

typedef struct {
	uint8_t fde_type, info;
	bool signal; /* sfda_func_info bit 7 (V3) */
	unsigned n;
	uint64_t u[15];
	int64_t s[15];
	bool mask;
} fre_t;

/* Find the FRE for pc in FDE i (spec 2.3.2-2.4, 2.3.3.1). Returns an
 * SFW_STOP_* code or -1 when found. */
static int find_fre(const sfw_obj *o, uint32_t i, uintptr_t pc, fre_t *f)
{
	uintptr_t start;
	uint32_t fsize, freoff, prev = 0;
	uint16_t nfres;
	uint8_t info, info2, rep;
	size_t at, end;
	unsigned fre_type, k, addr_w;
	uint64_t rel;
	bool found = false;

	if (!fde_start(o, i, &start, &fsize) ||
	    !rd_u32(o, o->fde_at + (size_t)i * FDE_IDX_SIZE + 12, &freoff))
		return SFW_STOP_BAD_SECTION;
	if (freoff > o->fre_len || o->fre_len - freoff < FDE_ATTR_SIZE)
		return SFW_STOP_BAD_SECTION;
	at = o->fre_at + freoff;
	end = o->fre_at + o->fre_len;
	if (!rd_u16(o, at, &nfres) || !rd_u8(o, at + 2, &info) ||
	    !rd_u8(o, at + 3, &info2) || !rd_u8(o, at + 4, &rep))
		return SFW_STOP_BAD_SECTION;
	at += FDE_ATTR_SIZE;
	fre_type = info & 0xf;
	f->mask = (info >> 4) & 1;
	f->signal = (info >> 7) & 1;
	f->fde_type = info2 & 0x1f;
	if (fre_type > 2 || f->fde_type > 1)
		return SFW_STOP_BAD_FRE;
	/* V3: a default FDE without FREs marks an outermost frame. */
	if (nfres == 0)
		return f->fde_type == 0 ? SFW_STOP_OUTERMOST : SFW_STOP_BAD_FRE;
	addr_w = 1u << fre_type;
	rel = pc - start;
	if (f->mask) {
		if (rep == 0)
			return SFW_STOP_BAD_FRE;
		rel %= rep;
	}
	for (k = 0; k < nfres; k++) {
		uint64_t fs;
		int64_t sjunk;
		uint8_t fi;
		unsigned n, w, j;

		if (at > end || !rd_word(o, at, addr_w, &fs, &sjunk) ||
		    !rd_u8(o, at + addr_w, &fi))
			return SFW_STOP_BAD_SECTION;
		at += addr_w + 1;
		n = (fi >> 1) & 0xf;
		w = (fi >> 5) & 3;
		if (w == 3)
			return SFW_STOP_BAD_FRE;
		w = 1u << w;
		if (at + (size_t)n * w > end)
			return SFW_STOP_BAD_SECTION;
		/* FRE starts must increase (the kernel reader rejects others). */
		if (k > 0 && fs <= prev)
			return SFW_STOP_BAD_FRE;
		prev = (uint32_t)fs;
		if (fs > rel)
			break;
		found = true;
		f->info = fi;
		f->n = n;
		for (j = 0; j < n; j++)
			if (!rd_word(o, at + (size_t)j * w, w, &f->u[j], &f->s[j]))
				return SFW_STOP_BAD_SECTION;
		at += (size_t)n * w;
	}
	return found ? -1 : SFW_STOP_NO_FRE;
}

/* One rule of spec 3.2: value = [*]((reg_p ? reg : cfa) + off). */
static int flex_rule(const wstate *w, uint64_t ctrl, int64_t off,
		     uintptr_t cfa, uintptr_t *v)
{
	uintptr_t base, a;

	if (ctrl & 1) {
		if (!get_reg(w, ctrl >> 3, &base))
			return SFW_STOP_REG_UNKNOWN;
	} else {
		base = cfa;
	}
	a = base + (uintptr_t)off;
	if (ctrl & 2)
		return read_stack(w, a, v) ? -1 : SFW_STOP_STACK_BOUNDS;
	*v = a;
	return -1;
}

/* Compute the caller of frame fr (cfa is filled in fr). Returns -1 or a
 * stop code. */
static int step(const sfw_ctx *c, const wstate *w, sfw_frame *fr,
		sfw_frame *next, sfw_stats *st)
{
	uintptr_t look = fr->pc, cfa, ra = 0, fp = w->fp;
	const sfw_obj *o;
	fre_t f;
	int err = -1, rc;
	int64_t idx;
	bool ra_set = false;

	/* Past frame 0 pc is a return address; the call is just before it
	 * (a noreturn call may end the function). Above a signal frame it
	 * is the interrupted instruction itself. */
	if (!fr->exact_pc)
		look--;
	o = find_obj(c, look);
	if (!o)
		return SFW_STOP_NO_OBJECT;
	if (!o->sec)
		return SFW_STOP_NO_SFRAME;
	if (o->bad)
		return SFW_STOP_BAD_SECTION;
	idx = find_fde(o, look, &err);
	if (idx < 0)
		return err >= 0 ? err : SFW_STOP_NO_FDE;
	rc = find_fre(o, (uint32_t)idx, look, &f);
	if (rc >= 0)
		return rc;
	fr->fde_type = f.fde_type;
	fr->mangled = (f.info >> 7) & 1;
	fr->signal = f.signal;
	if (st) {
		if (f.fde_type == 0)
			st->fde_default++;
		else
			st->fde_flex++;
		if (f.mask)
			st->fre_mask++;
		if (fr->mangled)
			st->mangled_ra++;
	}
	if (f.n == 0) /* Errata 2: RA undefined */
		return SFW_STOP_OUTERMOST;

	if (f.fde_type == 0) {
		/* Spec 3.1: bit 0 of the FRE info set = SP-based CFA. */
		uintptr_t base = (f.info & 1) ? w->sp : w->fp;
		int64_t off = f.s[0];
		int64_t ra_off = 0, fp_off = 0;
		bool ra_tracked = false, fp_tracked = false;
#if defined(__s390x__)
		off = off * 8 + 160; /* README: decode off * 8 + 160 */
#endif
		cfa = base + (uintptr_t)off;
#if defined(__x86_64__)
		if (f.n > 2)
			return SFW_STOP_BAD_FRE;
		ra_off = o->fixed_ra;
		ra_tracked = true;
		if (f.n == 2) {
			fp_off = f.s[1];
			fp_tracked = true;
		} else if (o->fixed_fp != 0) {
			fp_off = o->fixed_fp;
			fp_tracked = true;
		}
#else
		/* AArch64: 1 or 3 words (2 = RA only, seen when only LR is
		 * saved); s390x: 1..3, RA word 0 = padding (RA in r14). */
		if (f.n > 3)
			return SFW_STOP_BAD_FRE;
		if (f.n >= 2 && f.s[1] != 0) {
			ra_off = f.s[1];
			ra_tracked = true;
		} else if (f.n < 2 && o->fixed_ra != 0) {
			ra_off = o->fixed_ra;
			ra_tracked = true;
		}
#if defined(__aarch64__)
		if (f.n >= 2 && f.s[1] == 0)
			return SFW_STOP_BAD_FRE; /* no padding on AArch64 */
#endif
		if (f.n == 3) {
			fp_off = f.s[2];
			fp_tracked = true;
		} else if (o->fixed_fp != 0) {
			fp_off = o->fixed_fp;
			fp_tracked = true;
		}
#endif
		if (ra_tracked) {
			if (!read_stack(w, cfa + (uintptr_t)ra_off, &ra))
				return SFW_STOP_STACK_BOUNDS;
			ra_set = true;
		}
		if (fp_tracked && !read_stack(w, cfa + (uintptr_t)fp_off, &fp))
			return SFW_STOP_STACK_BOUNDS;
	} else {
		/* Spec 3.2 with the README erratum: pairs CFA, RA (or a single
		 * padding word 0), FP. */
		unsigned k = 2;
		int64_t cfa_off = f.s[1];
		bool has_ra = false, has_fp = false;
		uint64_t ra_ctrl = 0, fp_ctrl = 0;
		int64_t ra_off = 0, fp_off = 0;

		if (f.n < 2 || !(f.u[0] & 1))
			return SFW_STOP_BAD_FRE; /* CFA needs a base register */
#if defined(__s390x__)
		/* README: gas/libsframe scale the flex CFA offset too. */
		cfa_off = cfa_off * 8 + 160;
#endif
		if (k < f.n) {
			if (f.u[k] == 0) {
				k++;
			} else {
				if (k + 1 >= f.n)
					return SFW_STOP_BAD_FRE;
				ra_ctrl = f.u[k];
				ra_off = f.s[k + 1];
				has_ra = true;
				k += 2;
			}
		}
		if (k < f.n) {
			if (f.u[k] == 0) {
				k++;
			} else {
				if (k + 1 >= f.n)
					return SFW_STOP_BAD_FRE;
				fp_ctrl = f.u[k];
				fp_off = f.s[k + 1];
				has_fp = true;
				k += 2;
			}
		}
		if (k != f.n)
			return SFW_STOP_BAD_FRE;
		rc = flex_rule(w, f.u[0], cfa_off, 0, &cfa);
		if (rc >= 0)
			return rc;
		if (has_ra) {
			rc = flex_rule(w, ra_ctrl, ra_off, cfa, &ra);
			if (rc >= 0)
				return rc;
			ra_set = true;
		} else if (o->fixed_ra != 0) {
			if (!read_stack(w, cfa + (uintptr_t)(int64_t)o->fixed_ra, &ra))
				return SFW_STOP_STACK_BOUNDS;
			ra_set = true;
		}
		if (has_fp) {
			rc = flex_rule(w, fp_ctrl, fp_off, cfa, &fp);
			if (rc >= 0)
				return rc;
		}
	}
	if (!ra_set) {
		/* RA still in its register: only the interrupted frame has it. */
		uintptr_t v;
		if (REG_LR < 0 || !w->r0 || !get_reg(w, (uint64_t)REG_LR, &v))
			return SFW_STOP_RA_IN_REG;
		ra = v;
	}
	if (fr->mangled)
		ra = strip_ra(ra);
	fr->cfa = cfa;
	if (ra == 0)
		return SFW_STOP_RA_ZERO;
	memset(next, 0, sizeof *next);
	next->pc = ra;
	next->exact_pc = fr->signal;
	next->sp = cfa + (uintptr_t)(intptr_t)SP_VAL_OFFSET;
	next->fp = fp;
	next->fde_type = 0xff;
	return -1;
}

int sfw_walk(const sfw_ctx *c, const sfw_regs *r, uintptr_t stack_lo,
	     uintptr_t stack_hi, sfw_frame *out, int max, int *reason,
	     sfw_stats *st)
{
	wstate w;
	int n = 0, rc;

	if (max <= 0) {
		*reason = SFW_STOP_MAX_FRAMES;
		return 0;
	}
	w.r0 = r;
	w.sp = (uintptr_t)r->reg[REG_SP];
	w.fp = (uintptr_t)r->reg[REG_FP];
	w.lo = stack_lo;
	w.hi = stack_hi;
	memset(&out[0], 0, sizeof out[0]);
	out[0].pc = (uintptr_t)r->pc;
	out[0].sp = w.sp;
	out[0].fp = w.fp;
	out[0].fde_type = 0xff;
	out[0].exact_pc = true;
	n = 1;
	for (;;) {
		if (n >= max) {
			*reason = SFW_STOP_MAX_FRAMES;
			return n;
		}
		rc = step(c, &w, &out[n - 1], &out[n], st);
		if (rc >= 0) {
			*reason = rc;
			return n;
		}
		w.r0 = NULL;
		w.sp = out[n].sp;
		w.fp = out[n].fp;
		n++;
	}
}
