/* elfpatch: layout of the new bytes (elfp_write.c writes them).
 *
 * Output file = the input image, kept up to the old section header table
 * and .shstrtab when those end the file (they are rewritten anyway),
 * with a few bytes changed in place (ELF header, program header table,
 * values pointing at moved sections, sections rewritten in place),
 * followed by:
 *   [new segment: moved sections, new allocated sections]
 *   [rewritten non-allocated sections][section header table].
 * No zero fill beyond alignment: the new PT_LOAD starts at the end of the
 * file and takes an address with the same remainder modulo the largest
 * p_align, one page above every segment (binutils 2.40 strip moves a
 * segment's start down to the end of the previous one's file data and
 * pulls p_vaddr down with it, by less than a page; without the spare page
 * that lands in the last page of .bss and the program crashes).
 *
 * The program header table of a linked file gains the new PT_LOAD and
 * PT_GNU_SFRAME. Who finds it how (NOTES-elf.md): kernels since 5.18 use
 * the PT_LOAD covering e_phoff; older kernels and qemu-user take
 * AT_PHDR = first PT_LOAD's p_vaddr - p_offset + e_phoff ("the tie");
 * glibc's ld.so reads its own table at __ehdr_start + e_phoff, as static
 * glibc does on AArch64 and s390x. binutils strip and objcopy put the
 * table at the start of the PT_LOAD holding it (right after the ELF
 * header in the first one) and fail or shift sections when a section
 * starts there; libelf's writer (eu-strip) writes it at e_phoff and then
 * zero-fills every gap between sections, wiping a table that no section
 * covers. Layouts, in the order tried (elfp_ph_kind):
 *
 * ROOM      Zero bytes belonging to no section follow the table (or it
 *           holds PT_NULL entries): it grows in place.
 *
 * GROWN     The table grows in place over the sections right after it,
 *           whose bytes move unchanged to the start of the new segment
 *           (.interp, the toolchain's notes, hash and dynamic symbol
 *           tables); program headers, .dynamic tags and section symbols
 *           pointing at them follow. The only layout that changes an
 *           address: taken only where elfp_grow.c's rule proves that
 *           nothing but the loader and tools reach those bytes (never
 *           in ET_EXEC files), and, in a file that does not read its own
 *           table (a plain shared library), only up to ELFP_GROW_CAP
 *           bytes (SEG costs less there). The table stays where every
 *           loader and strip tool finds it.
 *
 * SHIFT     (ET_EXEC whose first PT_LOAD maps offset 0 with free address
 *           space below it.) Every byte of the input moves k pages down
 *           the file, the table goes right after the ELF header, and the
 *           first PT_LOAD grows downwards by k pages (p_vaddr, p_paddr -=
 *           k pages; sizes += k pages). No address changes and vaddr -
 *           offset is the same for every PT_LOAD, so all loaders find the
 *           table, and so do strip tools. Costs one page (64 KiB for files
 *           linked with 64 KiB p_align): used when GROWN would cost more.
 *
 * SEG_TIED  The table leads the new segment, [room: one table size of
 * SEG       zeros][table][new sections], with an allocated section
 *           (ELFP_PHDRS_SEC) covering exactly the table:
 *           - libelf (eu-strip) then copies the table back after its gap
 *             fill;
 *           - binutils puts its own table at the segment's start, in the
 *             room, ahead of the sections it lays out by address; a
 *             section at that start would collide with it and be moved
 *             away from its address ("lma adjusted").
 *           SEG_TIED keeps the tie: the segment's offset is its address
 *           minus the first PT_LOAD's bias, which pads the file up to the
 *           highest address in use (.bss included); taken only by files
 *           that need the tie and have no cheaper layout. SEG puts the
 *           segment at the end of the file, untied: shared libraries,
 *           whose table glibc and musl find through PT_PHDR or the PT_LOAD
 *           covering it. Costs two table sizes.
 *
 * Not used: the free bytes at the end of a read-only segment. A table
 * there keeps the tie, but binutils strip moves it to the start of that
 * segment and pushes the segment's sections off their addresses (or,
 * for the first segment, fails for lack of room after the ELF header).
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "elfp_internal.h"

static uint64_t align_up(uint64_t v, uint64_t a)
{
	if (a <= 1)
		return v;
	if (v > UINT64_MAX - (a - 1))
		return UINT64_MAX; /* the callers' size checks then fail */
	return (v + a - 1) / a * a;
}

/* Smallest v' >= v with v' = r (mod a), a a power of two. */
static uint64_t align_to(uint64_t v, uint64_t a, uint64_t r)
{
	uint64_t base = v & ~(a - 1);
	uint64_t c = base + (r & (a - 1));
	return c >= v ? c : c + a;
}

void elfp_place_segment(const elfp_seg_in *in, elfp_seg_out *out)
{
	uint64_t page = in->page >= 4096 ? in->page : 4096;
	uint64_t fresh = align_up(in->max_end, page);
	uint64_t off0 = align_up(in->file_end, 8);
	if (in->tie) {
		uint64_t align = page;
		/* Power-of-two alignment dividing the bias: vaddr and offset
		 * must be congruent modulo p_align. */
		while (align > 4096 && in->bias % align)
			align /= 2;
		if (in->bias % align == 0) {
			uint64_t lo = fresh + (in->lead_gap ? align : 0);
			uint64_t off = off0, need;
			/* off + bias >= lo, the bias taken as signed (a first
			 * PT_LOAD may map an offset above its address). */
			if ((int64_t)in->bias >= 0)
				need = lo > in->bias ? lo - in->bias : 0;
			else
				need = lo - in->bias; /* lo + |bias| */
			if (need < lo && (int64_t)in->bias < 0)
				need = UINT64_MAX; /* wrapped: impossible */
			if (need > off)
				off = need;
			if (off != UINT64_MAX && off - in->file_end <= in->max_pad) {
				out->offset = off;
				out->vaddr = off + in->bias;
				out->align = align;
				out->tied = true;
				return;
			}
		}
	}
	out->offset = off0;
	out->vaddr = fresh + (in->lead_gap ? page : 0) + off0 % page;
	out->align = page;
	out->tied = false;
}

e2s_err elfp_add_bpatch(elfp_file *f, uint64_t off, uint64_t len,
			  uint64_t val, bool zero, e2s_diag *d)
{
	if (f->nbp == f->bpcap) {
		size_t cap = f->bpcap ? f->bpcap * 2 : 16;
		elfp_bpatch *p = realloc(f->bp, cap * sizeof *p);
		if (!p)
			return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		f->bp = p;
		f->bpcap = cap;
	}
	elfp_bpatch *b = &f->bp[f->nbp++];
	memset(b, 0, sizeof *b);
	b->off = off;
	b->len = len;
	b->zero = zero;
	if (!zero)
		elfp_put(b->val, val, (unsigned)len, f->in->be);
	return E2S_ERR_OK;
}

/* Lowest address SHIFT may give the first PT_LOAD: Linux refuses to
 * map below vm.mmap_min_addr (64 KiB by default). */
#define ELFP_MIN_VADDR ((uint64_t)0x10000)

/* SHIFT: how far to move the old contents down the file so that a table
 * of n entries fits right after the ELF header; 0 when the first PT_LOAD
 * cannot grow downwards. */
static uint64_t shift_for(const elfp_file *f, size_t n, uint64_t page)
{
	const elfp_phdr *first = NULL;
	uint64_t s = align_up(ELFP_EHDR_SIZE + (uint64_t)n * ELFP_PHDR_SIZE, page);
	for (size_t i = 0; i < f->old_nsegs && !first; i++)
		if (f->segs[i].ph.type == PT_LOAD)
			first = &f->segs[i].ph;
	if (!first || first->offset != 0 || first->filesz < ELFP_EHDR_SIZE ||
	    first->vaddr < s || first->vaddr - s < ELFP_MIN_VADDR ||
	    first->paddr < s || first->vaddr % page)
		return 0;
	for (size_t i = 0; i < f->old_nsegs; i++) {
		const elfp_phdr *p = &f->segs[i].ph;
		if (p == first || p->type == PT_PHDR)
			continue;
		/* Something else mapped below the first PT_LOAD, or a second
		 * segment starting at the ELF header: leave such files alone. */
		if (p->memsz && p->vaddr < first->vaddr)
			return 0;
		if (p->filesz && p->offset < ELFP_EHDR_SIZE)
			return 0;
	}
	return s;
}

/* Apply SHIFT: every old offset moves down by s, the first PT_LOAD grows
 * downwards, PT_PHDR describes the table after the ELF header. */
static void apply_shift(elfp_file *f, uint64_t s, size_t total)
{
	elfp_phdr *first = NULL;
	f->shift = s;
	for (size_t i = 1; i < f->old_nsecs; i++)
		if (f->secs[i].sh.type != SHT_NULL)
			f->secs[i].sh.offset += s;
	for (size_t i = 0; i < f->old_nsegs; i++) {
		elfp_phdr *p = &f->segs[i].ph;
		if (p->type == PT_LOAD && !first) {
			first = p;
			p->vaddr -= s;
			p->paddr -= s;
			p->filesz += s;
			p->memsz += s;
		} else if (p->type != PT_PHDR && (p->offset || p->filesz)) {
			p->offset += s;
		}
	}
	for (size_t i = 0; i < f->old_nsegs; i++) {
		elfp_phdr *p = &f->segs[i].ph;
		if (p->type != PT_PHDR)
			continue;
		p->offset = ELFP_EHDR_SIZE;
		p->vaddr = first->vaddr + ELFP_EHDR_SIZE;
		p->paddr = first->paddr + ELFP_EHDR_SIZE;
		p->filesz = p->memsz = (uint64_t)total * ELFP_PHDR_SIZE;
	}
	f->new_phoff = ELFP_EHDR_SIZE;
}

/* SHIFT leaves the old ELF header where it was (base, the first
 * PT_LOAD's old address), and programs read their own program headers
 * through the link-time symbol __ehdr_start = base + e_phoff (static
 * glibc on AArch64 and s390x ignores AT_PHDR). So that address keeps an
 * ELF header whose e_phoff leads to the new table at the file start:
 * negative, as a 64-bit wrap-around (the consumers add it to a pointer).
 * It is a section so that strip tools keep it: they do not copy bytes
 * that belong to no section. */
static e2s_err add_ehdr_copy(elfp_file *f, uint64_t base, size_t total,
			     e2s_diag *d)
{
	elfp_shdr sh = {0};
	size_t idx = 0;
	e2s_err e;
	uint8_t *p;

	if (total >= PN_XNUM)
		return E2S_ERR_OK;
	sh.type = SHT_PROGBITS;
	sh.flags = SHF_ALLOC;
	sh.addralign = 8;
	sh.size = ELFP_EHDR_SIZE;
	e = elfp_add_section(f, ELFP_EHDR_COPY, &sh, &idx, d);
	if (e)
		return e;
	p = malloc(ELFP_EHDR_SIZE);
	if (!p)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	memcpy(p, f->in->img, ELFP_EHDR_SIZE);
	elfp_put(p + 32, ELFP_EHDR_SIZE - f->shift, 8, f->in->be);
	elfp_put(p + 40, 0, 8, f->in->be);
	elfp_put(p + 56, total, 2, f->in->be);
	elfp_put(p + 60, 0, 2, f->in->be);
	elfp_put(p + 62, 0, 2, f->in->be);
	elfp_sec *c = &f->secs[idx];
	c->place = ELFP_INPLACE;
	c->old_offset = 0;
	c->old_size = ELFP_EHDR_SIZE;
	c->sh.offset = f->shift;
	c->sh.addr = base;
	c->content = p;
	c->has_content = true;
	return E2S_ERR_OK;
}

/* The section covering the table of SEG / SEG_TIED (see the top of this
 * file). Its content is a placeholder: elfp_write writes the table over
 * it. */
static e2s_err add_phdrs_sec(elfp_file *f, size_t total, size_t *idx,
			     e2s_diag *d)
{
	elfp_shdr sh = {0};
	e2s_err e;

	sh.type = SHT_PROGBITS;
	sh.flags = SHF_ALLOC;
	sh.addralign = 8;
	sh.size = (uint64_t)total * ELFP_PHDR_SIZE;
	e = elfp_add_section(f, ELFP_PHDRS_SEC, &sh, idx, d);
	if (e)
		return e;
	elfp_sec *c = &f->secs[*idx];
	c->content = calloc(1, (size_t)sh.size);
	if (!c->content)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	c->has_content = true;
	return E2S_ERR_OK;
}

/* The PT_LOAD holding the table's file bytes from e_phoff up to end. */
const elfp_phdr *elfp_table_load(const elfp_file *f, uint64_t end)
{
	for (size_t i = 0; i < f->old_nsegs; i++) {
		const elfp_phdr *p = &f->segs[i].ph;
		if (p->type == PT_LOAD && p->offset <= f->in->phoff &&
		    end <= p->offset + p->filesz)
			return p;
	}
	return NULL;
}

/* Can the table grow to n entries where it is? Only if the bytes after it
 * are zero, belong to no section, and the PT_LOAD mapping the table maps
 * them too. */
static bool room_in_place(const elfp_file *f, size_t n)
{
	uint64_t start = f->in->phoff + (uint64_t)f->in->phnum * ELFP_PHDR_SIZE;
	uint64_t end = f->in->phoff + (uint64_t)n * ELFP_PHDR_SIZE;
	if (f->in->phnum == 0 || f->in->phoff < ELFP_EHDR_SIZE || end > f->in->size)
		return false;
	if (n <= f->in->phnum)
		return true;
	if (!elfp_table_load(f, end))
		return false;
	for (size_t i = 1; i < f->old_nsecs; i++) {
		const elfp_shdr *s = &f->secs[i].sh;
		if (s->type == SHT_NOBITS || s->type == SHT_NULL || !s->size)
			continue;
		if (s->offset < end && s->offset + s->size > start)
			return false;
	}
	for (uint64_t o = start; o < end; o++)
		if (f->in->img[o])
			return false;
	return true;
}

/* PT_NULL entries carry nothing: drop them when the table must grow. */
static void drop_null_phdrs(elfp_file *f)
{
	size_t m = 0, old = f->old_nsegs;
	for (size_t i = 0; i < f->nsegs; i++) {
		if (i < old && f->segs[i].ph.type == PT_NULL) {
			f->old_nsegs--;
			continue;
		}
		f->segs[m++] = f->segs[i];
	}
	f->nsegs = m;
}

/* Does the file need its table where old loaders look (the tie)?
 * Whatever can be run does: executables (pre-5.18 kernels and qemu-user
 * find the table there), the dynamic loader and static-pie programs
 * (they read their own table at __ehdr_start + e_phoff), and libraries
 * that double as programs (libc.so.6 prints its version). A plain
 * shared library (no interpreter, no entry point) is found by glibc and
 * musl through PT_PHDR or the PT_LOAD covering e_phoff. */
static bool needs_tie(const elfp_file *f)
{
	return f->in->type == ET_EXEC || f->in->entry != 0 ||
	       elfr_find_phdr(f->in, PT_INTERP) != NULL;
}


/* Input bytes that stay where they are (computed before SHIFT moves any
 * offset): everything up to the end of the last byte something still
 * uses. The old section header table and sections rewritten elsewhere
 * (.shstrtab) are not kept when they end the file, followed by nothing
 * but alignment zeros: appended data (a kernel module signature) keeps
 * them all. */
static uint64_t kept_bytes(const elfp_file *f, bool new_shdrs,
			   bool strtab_dead)
{
	uint64_t live = ELFP_EHDR_SIZE;
	if (f->in->phnum)
		live = f->in->phoff + (uint64_t)f->in->phnum * ELFP_PHDR_SIZE;
	for (size_t i = 0; i < f->old_nsegs; i++) {
		const elfp_phdr *p = &f->segs[i].ph;
		if (p->filesz && p->offset + p->filesz > live)
			live = p->offset + p->filesz;
	}
	for (size_t i = 1; i < f->old_nsecs; i++) {
		const elfp_sec *s = &f->secs[i];
		bool dead = s->place == ELFP_TAIL || s->place == ELFP_SEG ||
			    (strtab_dead && i == f->shstrndx);
		if (!dead && s->in_size && s->in_off + s->in_size > live)
			live = s->in_off + s->in_size;
	}
	if (!new_shdrs && f->in->shoff) {
		uint64_t e = f->in->shoff + (uint64_t)f->old_nsecs * ELFP_SHDR_SIZE;
		if (e > live)
			live = e;
	}
	if (live >= f->in->size)
		return f->in->size;
	/* The rest must be dead ranges with zeros between them. */
	uint64_t pos = live;
	while (pos < f->in->size) {
		uint64_t next = UINT64_MAX, end = 0;
		if (new_shdrs && f->in->shoff >= pos) {
			next = f->in->shoff;
			end = f->in->shoff + (uint64_t)f->old_nsecs * ELFP_SHDR_SIZE;
		}
		for (size_t i = 1; i < f->old_nsecs; i++) {
			const elfp_sec *s = &f->secs[i];
			bool dead = s->place == ELFP_TAIL || s->place == ELFP_SEG ||
				    (strtab_dead && i == f->shstrndx);
			if (dead && s->in_size && s->in_off >= pos &&
			    s->in_off < next) {
				next = s->in_off;
				end = s->in_off + s->in_size;
			}
		}
		if (next == UINT64_MAX || end <= pos || end > f->in->size)
			return f->in->size;
		for (uint64_t o = pos; o < next; o++)
			if (f->in->img[o])
				return f->in->size;
		pos = end;
	}
	return live;
}

/* SEG: make sure a PT_PHDR (first, as the gABI wants) describes the
 * moved table. Without one, glibc takes the first PT_LOAD whose file
 * pages reach over e_phoff as the table's mapping (_dl_postprocess_loadcmd
 * rounds the segment's end up to a page); a table at the end of the file
 * often lies in the last page of the data segment's file bytes, which
 * the loader clears as .bss, and dl_iterate_phdr then reports zeros. */
static e2s_err add_phdr_entry(elfp_file *f, e2s_diag *d)
{
	elfp_seg *ps;
	if (elfr_find_phdr(f->in, PT_PHDR))
		return E2S_ERR_OK;
	e2s_err e = elfp_insert_seg(f, 0, &ps, d);
	if (e)
		return e;
	f->old_nsegs++;
	ps->ph.type = PT_PHDR;
	ps->ph.flags = PF_R;
	ps->ph.align = 8;
	ps->track = ELFP_TRACK_NONE;
	return E2S_ERR_OK;
}

/* Choose where the table of a linked file goes (elfp_ph_kind; see the
 * top of this file) and how many entries it gets: f->nsegs, plus the new
 * PT_LOAD when there are new allocated bytes (content) or the layout
 * needs the segment for itself (GROWN, SEG). end: the first free output
 * byte. */
static int choose_kind(elfp_file *f, bool content, uint64_t end,
		       uint64_t bias, uint64_t max_end, uint64_t page,
		       elfp_grow_plan *g, uint64_t *shift, size_t *total)
{
	size_t n = f->nsegs + 1, n_own = f->nsegs + (content ? 1 : 0);
	/* SEG adds a PT_PHDR when there is none (see add_phdr_entry). */
	size_t n_seg = n + (elfr_find_phdr(f->in, PT_PHDR) ? 0 : 1);
	uint64_t tsz = (uint64_t)n_seg * ELFP_PHDR_SIZE;
	bool grow, tie = needs_tie(f);
	elfp_seg_in in = {end, bias, max_end, page, true, ELFP_MAX_PAD, true};
	elfp_seg_out so;

	*shift = 0;
	*total = n_own;
	if (room_in_place(f, n_own))
		return ELFP_PH_ROOM;
	*total = n;
	grow = elfp_grow_plan_make(f, n, g);
	uint64_t m = grow ? g->hi - g->lo : 0;
	elfp_place_segment(&in, &so);
	switch (f->force_kind) {
	case ELFP_PH_GROWN:
		if (grow && elfp_grow_refs_ok(f, g))
			return ELFP_PH_GROWN;
		break;
	case ELFP_PH_SHIFT:
		if ((*shift = shift_for(f, n_own, page)) != 0) {
			*total = n_own;
			return ELFP_PH_SHIFT;
		}
		break;
	case ELFP_PH_SEG_TIED:
	case ELFP_PH_SEG:
		if (f->force_kind == ELFP_PH_SEG || so.tied) {
			*total = n_seg;
			return f->force_kind;
		}
		break;
	default:
		break;
	}
	uint64_t tied_cost = so.tied ? so.offset - end + 2 * tsz : UINT64_MAX;
	if (!tie) {
		if (grow && m <= ELFP_GROW_CAP && elfp_grow_refs_ok(f, g))
			return ELFP_PH_GROWN;
		*total = n_seg;
		return so.tied && tied_cost <= 2 * tsz + ELFP_GROW_CAP
			       ? ELFP_PH_SEG_TIED : ELFP_PH_SEG;
	}
	/* The cheapest layout that keeps the tie; SEG_TIED only as the last
	 * one, since binutils strip moves that table where old loaders no
	 * longer find it. */
	uint64_t s = shift_for(f, n_own, page);
	if (grow && (!s || m <= s) &&
	    (m <= ELFP_GROW_BIG || !so.tied || m <= tied_cost) &&
	    elfp_grow_refs_ok(f, g))
		return ELFP_PH_GROWN;
	if (s) {
		*shift = s;
		*total = n_own;
		return ELFP_PH_SHIFT;
	}
	*total = n_seg;
	return so.tied ? ELFP_PH_SEG_TIED : ELFP_PH_SEG;
}

/* Insert the new PT_LOAD after the last one: it has the highest address,
 * so they stay sorted. */
static e2s_err insert_load(elfp_file *f, uint64_t off, uint64_t vaddr,
			   uint64_t size, uint64_t align, e2s_diag *d)
{
	size_t at = 0;
	elfp_seg *ns;
	for (size_t i = 0; i < f->nsegs; i++)
		if (f->segs[i].ph.type == PT_LOAD)
			at = i + 1;
	e2s_err e = elfp_insert_seg(f, at, &ns, d);
	if (e)
		return e;
	ns->ph.type = PT_LOAD;
	ns->ph.flags = PF_R;
	ns->ph.offset = off;
	ns->ph.vaddr = ns->ph.paddr = vaddr;
	ns->ph.filesz = ns->ph.memsz = size;
	ns->ph.align = align;
	ns->track = ELFP_TRACK_NEWSEG;
	return E2S_ERR_OK;
}


e2s_err elfp_layout(elfp_file *f, e2s_diag *d)
{
	elfp_layout_info *li = &f->info;
	size_t phsec = 0;
	uint64_t phroom = 0;
	bool need_load = false, rewrite_shdrs;
	uint64_t bias = 0, max_end = 0, page = 4096, s = 0;
	size_t total = 0;
	int kind = ELFP_PH_SAME;
	elfp_grow_plan g;
	e2s_err e = E2S_ERR_OK;

	if (f->laid_out)
		return e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
				"elfp_layout called twice");
	memset(li, 0, sizeof *li);
	memset(&g, 0, sizeof g);
	f->new_phoff = f->in->phoff;
	f->shift = 0;
	rewrite_shdrs = f->nsecs != f->old_nsecs || f->strtab_changed;
	for (size_t i = 0; i < f->nsecs; i++) {
		if (f->secs[i].place == ELFP_SEG)
			need_load = true;
		if (f->secs[i].place == ELFP_SEG || f->secs[i].place == ELFP_TAIL)
			rewrite_shdrs = true;
	}
	f->keep = kept_bytes(f, rewrite_shdrs, f->strtab_changed);
	uint64_t end = f->keep;

	if (f->in->type != ET_REL && (need_load || f->nsegs > f->old_nsegs)) {
		bool have_load = false;
		for (size_t i = 0; i < f->old_nsegs; i++) {
			const elfp_phdr *p = &f->segs[i].ph;
			if (p->type != PT_LOAD)
				continue;
			if (!have_load)
				bias = p->vaddr - p->offset;
			have_load = true;
			if (p->align > page)
				page = p->align;
		}
		if (!have_load)
			return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
					"no PT_LOAD segment");
		if (page & (page - 1) || page > ((uint64_t)1 << 32))
			return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
					"p_align %llu is not a usable power of two",
					(unsigned long long)page);
		/* Room for the new segment, its lead gap and rounding. */
		uint64_t room = UINT64_MAX - 4 * page;
		for (size_t i = 0; i < f->old_nsegs; i++) {
			const elfp_phdr *p = &f->segs[i].ph;
			if (p->memsz > room || p->vaddr > room - p->memsz)
				return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
						"segment %zu ends past the address space", i);
			if (p->vaddr + p->memsz > max_end)
				max_end = p->vaddr + p->memsz;
		}
		if (f->nsegs + 1 > f->in->phnum)
			drop_null_phdrs(f);
		g.in = calloc(f->old_nsecs + 1, sizeof *g.in);
		if (!g.in)
			return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		kind = choose_kind(f, need_load, end, bias, max_end, page, &g,
				       &s, &total);
		li->kind = (uint8_t)kind;
		if (kind != ELFP_PH_GROWN && kind != ELFP_PH_ROOM)
			memcpy(li->grow_refused, g.why, sizeof g.why);
		need_load |= kind == ELFP_PH_GROWN || kind == ELFP_PH_SEG ||
			     kind == ELFP_PH_SEG_TIED;
		if (kind == ELFP_PH_ROOM && total < f->in->phnum)
			e = elfp_add_bpatch(f, f->in->phoff + total * ELFP_PHDR_SIZE,
				       (f->in->phnum - total) * ELFP_PHDR_SIZE, 0,
				       true, d);
		else if (kind == ELFP_PH_GROWN)
			for (size_t i = 1; i < f->old_nsecs; i++)
				if (g.in[i])
					f->secs[i].place = ELFP_BLOCK;
		if (!e && kind == ELFP_PH_SHIFT) {
			uint64_t base = bias;
			apply_shift(f, s, total);
			bias -= s;
			e = add_ehdr_copy(f, base, total, d);
		}
		if (!e && (kind == ELFP_PH_SEG || kind == ELFP_PH_SEG_TIED)) {
			e = add_phdr_entry(f, d);
			if (!e)
				e = add_phdrs_sec(f, total, &phsec, d);
		}
		if (e)
			goto out;
		end = f->keep + f->shift;
		li->phdrs_moved = kind == ELFP_PH_SHIFT || phsec;
		li->phdrs_tied = kind != ELFP_PH_SEG;
		li->shift = f->shift;
	}
	if (need_load && f->in->type != ET_REL) {
		/* The new segment. */
		uint64_t seg_off, seg_va, seg_align = page, cur;
		if (phsec) {
			elfp_seg_in in = {end, bias, max_end, page,
					  kind == ELFP_PH_SEG_TIED, ELFP_MAX_PAD, true};
			elfp_seg_out so;
			elfp_place_segment(&in, &so);
			seg_off = so.offset;
			seg_va = so.vaddr;
			seg_align = so.align;
			/* [room][table][sections]: see the top of this file. */
			phroom = (uint64_t)total * ELFP_PHDR_SIZE;
			f->new_phoff = seg_off + phroom;
			f->secs[phsec].sh.offset = seg_off + phroom;
			f->secs[phsec].sh.addr = seg_va + phroom;
			cur = seg_off + 2 * phroom;
		} else {
			seg_off = align_up(end, 8);
			if (kind == ELFP_PH_GROWN)
				seg_off = align_to(end, g.align, g.lo);
			seg_va = align_up(max_end, page) + page + seg_off % page;
			cur = seg_off;
			if (kind == ELFP_PH_GROWN) {
				f->blk_lo = g.lo;
				f->blk_hi = g.hi;
				f->blk_off = seg_off;
				cur += g.hi - g.lo;
				li->moved = g.hi - g.lo;
				li->moved_from = g.lo;
				e = elfp_grow_apply(f, &g, seg_va, total, d);
				if (e)
					goto out;
			}
		}
		for (size_t i = 0; i < f->nsecs; i++) {
			elfp_sec *sc = &f->secs[i];
			if (sc->place != ELFP_SEG || i == phsec)
				continue;
			cur = align_up(cur, sc->sh.addralign);
			sc->sh.offset = cur;
			sc->sh.addr = seg_va + (cur - seg_off);
			cur += sc->sh.size;
		}
		/* Above every segment, or the loaders would map it over one. */
		if (seg_va < max_end || seg_va % seg_align != seg_off % seg_align) {
			e = e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
				     "no room for a new segment above 0x%llx",
				     (unsigned long long)max_end);
			goto out;
		}
		e = insert_load(f, seg_off, seg_va, cur - seg_off, seg_align, d);
		if (e)
			goto out;
		li->new_segment = true;
		li->seg_offset = seg_off;
		li->seg_vaddr = seg_va;
		li->seg_size = cur - seg_off;
		li->pad = seg_off - end;
		end = cur;
		for (size_t i = 0; phsec && i < f->nsegs; i++) {
			elfp_phdr *p = &f->segs[i].ph;
			if (p->type != PT_PHDR)
				continue;
			uint64_t v = seg_va + phroom;
			p->paddr = p->paddr - p->vaddr + v;
			p->vaddr = v;
			p->offset = seg_off + phroom;
		}
	}
	for (size_t i = 0; i < f->nsegs && f->in->type != ET_REL; i++)
		if (f->segs[i].ph.type == PT_PHDR)
			f->segs[i].ph.filesz = f->segs[i].ph.memsz =
				(uint64_t)f->nsegs * ELFP_PHDR_SIZE;
	/* Program headers following a section. */
	for (size_t i = 0; i < f->nsegs; i++) {
		elfp_seg *sg = &f->segs[i];
		if (sg->track >= f->nsecs)
			continue;
		const elfp_shdr *sh = &f->secs[sg->track].sh;
		sg->ph.offset = sh->offset;
		sg->ph.paddr = sg->ph.vaddr = sh->addr;
		sg->ph.filesz = sg->ph.memsz = sh->size;
	}
	/* Last edit: SHIFT and SEG may have added a section name. */
	if (f->strtab_changed) {
		elfp_sec *sc = &f->secs[f->shstrndx];
		uint8_t *p = malloc(f->strtab.len ? f->strtab.len : 1);
		if (!p) {
			e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
			goto out;
		}
		memcpy(p, f->strtab.data, f->strtab.len);
		elfp_sec_content(sc, p);
		sc->has_content = true;
		sc->sh.size = f->strtab.len;
		sc->place = ELFP_TAIL;
	}
	f->tail_start = end;
	for (size_t i = 0; i < f->nsecs; i++) {
		elfp_sec *sc = &f->secs[i];
		if (sc->place != ELFP_TAIL)
			continue;
		end = align_up(end, sc->sh.addralign);
		sc->sh.offset = end;
		if (f->in->type == ET_REL)
			sc->sh.addr = 0;
		end += sc->sh.size;
	}
	bool tail = false;
	for (size_t i = 0; i < f->nsecs; i++)
		tail |= f->secs[i].place == ELFP_TAIL || f->secs[i].place == ELFP_SEG;
	if ((!tail && f->nsecs == f->old_nsecs) ||
	    !(f->edited || f->strtab_changed)) {
		/* Only in-place changes: the section header table stays. */
		f->new_shoff = f->in->shoff ? f->in->shoff + f->shift : 0;
		if (end < f->in->size + f->shift)
			end = f->in->size + f->shift;
	} else {
		f->new_shoff = align_up(end, 8);
		end = f->new_shoff + (uint64_t)f->nsecs * ELFP_SHDR_SIZE;
	}
	li->kept = f->keep;
	li->out_size = end;
	f->laid_out = true;
out:
	free(g.in);
	return e;
}

e2s_err elfp_replace_content(elfp_file *f, size_t i, void *data,
			     size_t size, e2s_diag *d)
{
	if (!f->laid_out || f->in->type == ET_REL || i == 0 ||
	    i >= f->nsecs || i == f->shstrndx || f->secs[i].is_new ||
	    (f->secs[i].sh.flags & SHF_ALLOC) ||
	    f->secs[i].sh.type == SHT_NOBITS || f->secs[i].place != ELFP_TAIL) {
		free(data);
		return e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
				"cannot replace the content of section %zu", i);
	}
	/* A section in the tail made elfp_layout rewrite the section
	 * header table after it: lay the tail out again from its start. */
	elfp_sec *sc = &f->secs[i];
	elfp_sec_content(sc, data);
	sc->has_content = true;
	sc->sh.size = size;
	uint64_t end = f->tail_start;
	for (size_t k = 0; k < f->nsecs; k++) {
		elfp_sec *t = &f->secs[k];
		if (t->place != ELFP_TAIL)
			continue;
		end = align_up(end, t->sh.addralign);
		t->sh.offset = end;
		end += t->sh.size;
	}
	f->new_shoff = align_up(end, 8);
	f->info.out_size = f->new_shoff + (uint64_t)f->nsecs * ELFP_SHDR_SIZE;
	return E2S_ERR_OK;
}

void elfp_set_extra_symbols(elfp_file *f, const elfp_file *syms)
{
	f->syms_extra = syms;
}

void elfp_force_kind(elfp_file *f, int kind)
{
	f->force_kind = (uint8_t)kind;
}

void elfp_get_layout(const elfp_file *f, elfp_layout_info *out)
{
	*out = f->info;
}

