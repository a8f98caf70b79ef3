/* elfpatch: layout of the new bytes and serialisation of the output.
 *
 * Output file = the input image (only the ELF header, an in-place program
 * header table and in-place rewritten sections change) followed by:
 *   [zero padding][new segment: new allocated sections][tail: rewritten
 *   non-allocated sections][section headers].
 *
 * When the program header table must grow and has no room where it is,
 * two layouts exist.
 *
 * 1. Table at the file start ("shift"; used whenever the first PT_LOAD maps
 *    offset 0 and has free address space below it, i.e. non-PIE programs):
 *    every byte of the input moves k pages down the file, the new table
 *    goes right after the ELF header, and the first PT_LOAD grows downwards
 *    by k pages (p_vaddr, p_paddr -= k pages; sizes += k pages). No address
 *    changes and vaddr - offset is the same for every PT_LOAD, so all three
 *    loader conditions of NOTES-elf.md hold. This is also the only place
 *    where strip tools keep a table intact: binutils places the table right
 *    after the ELF header whenever the segment holding it maps the header
 *    (bfd/elf.c assign_file_positions_for_load_sections), and libelf's
 *    writer (used by eu-strip) writes the table first, then zero-fills every
 *    gap between section contents (elf64_updatemmap), which wipes a table
 *    lying between sections (layout 2 covers its table with a section for
 *    that reason). Cost: k pages (4 KiB; 64 KiB for files linked with
 *    64 KiB p_align) instead of the padding of layout 2.
 *
 * 2. Table in the new segment (first PT_LOAD at address 0: PIE, shared
 *    objects, static-pie). The kernel since 5.18 finds it through the
 *    PT_LOAD covering e_phoff, and glibc through PT_PHDR, but older kernels
 *    and the qemu-user loader in Debian 12 take AT_PHDR = load bias +
 *    e_phoff, the bias being the first PT_LOAD's p_vaddr - p_offset. So the
 *    new segment keeps that same offset-to-address distance, which puts its
 *    file offset at (first free page above every segment) - bias. It starts
 *    one alignment unit above that page: binutils 2.40 strip moves a table
 *    that is not at the file start to the end of the previous segment's
 *    data and pulls the segment's p_vaddr down by up to p_align to keep it
 *    congruent; without the gap that lands in the last page of .bss and the
 *    program crashes. For usual files this costs at most the .bss size plus
 *    two pages of zeros, because non-allocated sections (symbols, debug
 *    info) already push the end of the file past it. A file with a huge .bss
 *    would grow by that much; beyond ELFP_MAX_PAD we give up the old
 *    loaders and place the segment right after the file's end (modern
 *    kernels and glibc still work; an old-style loader would read the
 *    table from the wrong place).
 *    The segment is [room: one table size of zeros][table][new sections],
 *    and an allocated section (ELFP_PHDRS_SEC) covers exactly the table:
 *    - libelf's writer (eu-strip) writes the table at e_phoff, then each
 *      section at its offset, zero-filling the gap before it from the end
 *      of the previous section (elf32_updatefile.c: fill_mmap / fill). A
 *      table in no section lies in such a gap and is wiped; covered, the
 *      same bytes are copied back, so eu-strip keeps it, tie included.
 *    - binutils puts its own table at the start of the segment that held
 *      the old one, ahead of the sections it lays out by address. A
 *      section at that start would collide with it and be moved away
 *      from its address ("lma adjusted"), breaking the segment's
 *      offset-to-address mapping; the room keeps the first section one
 *      table size in. The old table then stays as that section's bytes.
 *    Cost: one table size and one section header (about 1 KiB). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/mem.h"
#include "elfp_internal.h"

static uint64_t align_up(uint64_t v, uint64_t a)
{
	if (a <= 1)
		return v;
	if (v > UINT64_MAX - (a - 1))
		return UINT64_MAX; /* the callers' size checks then fail */
	return (v + a - 1) / a * a;
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
			uint64_t off = off0;
			if (lo >= in->bias && lo - in->bias > off)
				off = lo - in->bias;
			if (off - in->file_end <= in->max_pad) {
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

/* Lowest address layout 1 may give the first PT_LOAD: Linux refuses to
 * map below vm.mmap_min_addr (64 KiB by default). */
#define ELFP_MIN_VADDR ((uint64_t)0x10000)

/* Layout 1: how far to move the old contents down the file so that a
 * table of n entries fits right after the ELF header; 0 when the first
 * PT_LOAD cannot grow downwards. */
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

/* Apply layout 1: every old offset moves down by s, the first PT_LOAD
 * grows downwards, PT_PHDR describes the table after the ELF header. */
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

/* Layout 1 leaves the old ELF header where it was (base, the first
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
	memcpy(p, f->img, ELFP_EHDR_SIZE);
	elfp_put(p + 32, ELFP_EHDR_SIZE - f->shift, 8, f->be);
	elfp_put(p + 40, 0, 8, f->be);
	elfp_put(p + 56, total, 2, f->be);
	elfp_put(p + 60, 0, 2, f->be);
	elfp_put(p + 62, 0, 2, f->be);
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

/* The section covering the table of layout 2 (see the top of this file).
 * Its content is a placeholder: elfp_write writes the table over it. */
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

/* Can the table grow to n entries where it is? Only if the bytes after it
 * are zero, belong to no section, and the PT_LOAD mapping the table maps
 * them too. */
static bool room_in_place(const elfp_file *f, size_t n)
{
	uint64_t start = f->phoff + (uint64_t)f->old_nsegs * ELFP_PHDR_SIZE;
	uint64_t end = f->phoff + (uint64_t)n * ELFP_PHDR_SIZE;
	bool covered = false;
	if (f->old_nsegs == 0 || f->phoff < ELFP_EHDR_SIZE || end > f->size)
		return false;
	for (size_t i = 0; i < f->old_nsegs; i++) {
		const elfp_phdr *p = &f->segs[i].ph;
		if (p->type == PT_LOAD && p->offset <= f->phoff &&
		    end <= p->offset + p->filesz)
			covered = true;
	}
	if (!covered)
		return false;
	for (size_t i = 1; i < f->old_nsecs; i++) {
		const elfp_shdr *s = &f->secs[i].sh;
		if (s->type == SHT_NOBITS || s->type == SHT_NULL || !s->size)
			continue;
		if (s->offset < end && s->offset + s->size > start)
			return false;
	}
	for (uint64_t o = start; o < end; o++)
		if (f->img[o])
			return false;
	return true;
}

e2s_err elfp_layout(elfp_file *f, e2s_diag *d)
{
	uint64_t end = f->size;
	size_t phsec = 0;
	uint64_t phroom = 0;
	bool need_load = false, moved = false;
	elfp_layout_info *li = &f->info;

	if (f->laid_out)
		return e2s_fail(d, E2S_ERR_USAGE, NULL, 0, "layout done twice");
	memset(li, 0, sizeof *li);
	f->new_phoff = f->phoff;
	f->shift = 0;
	for (size_t i = 0; i < f->nsecs; i++)
		if (f->secs[i].place == ELFP_SEG)
			need_load = true;

	if (f->type != ET_REL && (need_load || f->nsegs > f->old_nsegs)) {
		size_t total = f->nsegs + (need_load ? 1 : 0);
		uint64_t bias = 0, max_end = 0, page = 4096;
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
		if (!room_in_place(f, total)) {
			uint64_t s = shift_for(f, total, page);
			moved = true;
			if (s) {
				uint64_t base = bias;
				apply_shift(f, s, total);
				bias -= s;
				e2s_err e = add_ehdr_copy(f, base, total, d);
				if (e)
					return e;
			} else {
				/* Layout 2: the table leads the new segment. */
				if (!need_load)
					total++;
				need_load = true;
				e2s_err e = add_phdrs_sec(f, total, &phsec, d);
				if (e)
					return e;
			}
		}
		end = f->size + f->shift;
		bool lead = moved && !f->shift;
		if (need_load) {
			elfp_seg_in in = {end, bias, max_end, page, lead,
					  ELFP_MAX_PAD, lead};
			elfp_seg_out so;
			uint64_t cur = 0;
			elfp_place_segment(&in, &so);
			if (lead) {
				/* [room][table][sections]: see the top of this file. */
				phroom = (uint64_t)total * ELFP_PHDR_SIZE;
				f->new_phoff = so.offset + phroom;
				cur = 2 * phroom;
			}
			if (phsec) {
				f->secs[phsec].sh.offset = so.offset + phroom;
				f->secs[phsec].sh.addr = so.vaddr + phroom;
			}
			for (size_t i = 0; i < f->nsecs; i++) {
				elfp_sec *s = &f->secs[i];
				if (s->place != ELFP_SEG || i == phsec)
					continue;
				cur = align_up(cur, s->sh.addralign);
				s->sh.offset = so.offset + cur;
				s->sh.addr = so.vaddr + cur;
				cur += s->sh.size;
			}
			/* The new PT_LOAD goes after the last one: it has the
			 * highest address, so they stay sorted. */
			if (f->nsegs == f->segcap) {
				elfp_seg *p = realloc(f->segs, (f->segcap + 1) * sizeof *p);
				if (!p)
					return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
				f->segs = p;
				f->segcap++;
			}
			size_t at = 0;
			for (size_t i = 0; i < f->nsegs; i++)
				if (f->segs[i].ph.type == PT_LOAD)
					at = i + 1;
			memmove(&f->segs[at + 1], &f->segs[at],
				(f->nsegs - at) * sizeof *f->segs);
			f->nsegs++;
			elfp_seg *ns = &f->segs[at];
			memset(ns, 0, sizeof *ns);
			ns->ph.type = PT_LOAD;
			ns->ph.flags = PF_R;
			ns->ph.offset = so.offset;
			ns->ph.vaddr = ns->ph.paddr = so.vaddr;
			ns->ph.filesz = ns->ph.memsz = cur;
			ns->ph.align = so.align;
			ns->track = ELFP_TRACK_NEWSEG;
			li->new_segment = true;
			li->phdrs_tied = lead && so.tied;
			li->seg_offset = so.offset;
			li->seg_vaddr = so.vaddr;
			li->seg_size = cur;
			li->pad = so.offset - end;
			end = so.offset + cur;
		}
		li->phdrs_moved = moved;
		li->shift = f->shift;
		if (f->shift)
			li->phdrs_tied = true;
		for (size_t i = 0; i < f->nsegs; i++) {
			elfp_phdr *p = &f->segs[i].ph;
			if (p->type != PT_PHDR)
				continue;
			if (lead) {
				uint64_t v = li->seg_vaddr + phroom;
				p->paddr = p->paddr - p->vaddr + v;
				p->vaddr = v;
				p->offset = li->seg_offset + phroom;
			}
			p->filesz = p->memsz = (uint64_t)total * ELFP_PHDR_SIZE;
		}
	}
	/* Program headers following a section. */
	for (size_t i = 0; i < f->nsegs; i++) {
		elfp_seg *s = &f->segs[i];
		if (s->track >= f->nsecs)
			continue;
		const elfp_shdr *sh = &f->secs[s->track].sh;
		s->ph.offset = sh->offset;
		s->ph.paddr = s->ph.vaddr = sh->addr;
		s->ph.filesz = s->ph.memsz = sh->size;
	}
	/* Last edit: layout 1 may have added a section name. */
	if (f->strtab_changed) {
		elfp_sec *s = &f->secs[f->shstrndx];
		uint8_t *p = malloc(f->strtab.len ? f->strtab.len : 1);
		if (!p)
			return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		memcpy(p, f->strtab.data, f->strtab.len);
		free(s->content);
		s->content = p;
		s->has_content = true;
		s->sh.size = f->strtab.len;
		s->place = ELFP_TAIL;
	}
	for (size_t i = 0; i < f->nsecs; i++) {
		elfp_sec *s = &f->secs[i];
		if (s->place != ELFP_TAIL)
			continue;
		end = align_up(end, s->sh.addralign);
		s->sh.offset = end;
		if (f->type == ET_REL)
			s->sh.addr = 0;
		end += s->sh.size;
	}
	bool tail = false;
	for (size_t i = 0; i < f->nsecs; i++)
		tail |= f->secs[i].place == ELFP_TAIL || f->secs[i].place == ELFP_SEG;
	if ((!tail && f->nsecs == f->old_nsecs) ||
	    !(f->edited || f->strtab_changed)) {
		/* Only in-place changes: the section header table stays. */
		f->new_shoff = f->shoff ? f->shoff + f->shift : 0;
	} else {
		f->new_shoff = align_up(end, 8);
		end = f->new_shoff + (uint64_t)f->nsecs * ELFP_SHDR_SIZE;
	}
	li->out_size = end;
	f->laid_out = true;
	return E2S_ERR_OK;
}

void elfp_get_layout(const elfp_file *f, elfp_layout_info *out)
{
	*out = f->info;
}

static void put_phdr(uint8_t *p, const elfp_phdr *ph, bool be)
{
	elfp_put(p, ph->type, 4, be);
	elfp_put(p + 4, ph->flags, 4, be);
	elfp_put(p + 8, ph->offset, 8, be);
	elfp_put(p + 16, ph->vaddr, 8, be);
	elfp_put(p + 24, ph->paddr, 8, be);
	elfp_put(p + 32, ph->filesz, 8, be);
	elfp_put(p + 40, ph->memsz, 8, be);
	elfp_put(p + 48, ph->align, 8, be);
}

static void put_shdr(uint8_t *p, const elfp_shdr *sh, bool be)
{
	elfp_put(p, sh->name, 4, be);
	elfp_put(p + 4, sh->type, 4, be);
	elfp_put(p + 8, sh->flags, 8, be);
	elfp_put(p + 16, sh->addr, 8, be);
	elfp_put(p + 24, sh->offset, 8, be);
	elfp_put(p + 32, sh->size, 8, be);
	elfp_put(p + 40, sh->link, 4, be);
	elfp_put(p + 44, sh->info, 4, be);
	elfp_put(p + 48, sh->addralign, 8, be);
	elfp_put(p + 56, sh->entsize, 8, be);
}

/* ---- Serialisation ---------------------------------------------------
 *
 * The output is a base layer (zeros, then the input image at offset
 * shift, then zeros up to out_size) with patches laid over it in order,
 * a later patch winning where two overlap: section contents, the program
 * and section header tables and the ELF header. The input image itself is
 * never modified, so stretches of the output no patch touches are copied
 * straight from the input file (copy_file_range: no pass through user
 * memory, and a reflink on filesystems that share extents), and the
 * patched stretches are written from memory. */

typedef struct {
	uint64_t off, len;
	const uint8_t *src;  /* NULL: zeros */
	size_t order;        /* application order */
} wpatch;

/* Where the bytes go: a file descriptor (through a small staging buffer
 * so that many small patches do not cost a system call each) or one
 * buffer of the output's size. */
typedef struct {
	int fd;              /* -1: memory */
	int in_fd;           /* copy_file_range source, or -1 */
	uint8_t *mem;        /* memory sink, out_size bytes */
	uint64_t pos;
	uint8_t *stage;
	size_t nstage;
	e2s_diag *d;
} wsink;

#define ELFP_STAGE ((size_t)64 << 10)

static e2s_err sink_flush(wsink *k)
{
	e2s_err e = E2S_ERR_OK;
	if (k->nstage)
		e = e2s_write_all(k->fd, k->stage, k->nstage, k->d);
	k->nstage = 0;
	return e;
}

/* n bytes from p (zeros when p is NULL). */
static e2s_err sink_put(wsink *k, const uint8_t *p, uint64_t n)
{
	static const uint8_t zeros[4096];
	if (k->fd < 0) {
		if (p)
			memcpy(k->mem + k->pos, p, (size_t)n);
		else
			memset(k->mem + k->pos, 0, (size_t)n);
		k->pos += n;
		return E2S_ERR_OK;
	}
	k->pos += n;
	while (n) {
		size_t c = n < ELFP_STAGE ? (size_t)n : ELFP_STAGE;
		if (p && c == ELFP_STAGE && !k->nstage) {
			/* Large: straight from the source. */
			e2s_err e = e2s_write_all(k->fd, p, c, k->d);
			if (e)
				return e;
		} else {
			if (!p && c > sizeof zeros)
				c = sizeof zeros;
			if (c > ELFP_STAGE - k->nstage)
				c = ELFP_STAGE - k->nstage;
			memcpy(k->stage + k->nstage, p ? p : zeros, c);
			k->nstage += c;
			if (k->nstage == ELFP_STAGE) {
				e2s_err e = sink_flush(k);
				if (e)
					return e;
			}
		}
		if (p)
			p += c;
		n -= c;
	}
	return E2S_ERR_OK;
}

/* n input bytes from offset off: copied by the kernel when it can,
 * otherwise written from the image. */
static e2s_err sink_input(wsink *k, const elfp_file *f, uint64_t off,
			  uint64_t n)
{
	if (k->fd >= 0 && k->in_fd >= 0 && n >= ELFP_STAGE) {
		e2s_err e = sink_flush(k);
		if (e)
			return e;
		while (n) {
			loff_t in_off = (loff_t)off;
			size_t c = n > (1u << 30) ? (1u << 30) : (size_t)n;
			ssize_t w = copy_file_range(k->in_fd, &in_off, k->fd, NULL,
						    c, 0);
			if (w < 0 && errno == EINTR)
				continue;
			if (w == 0)
				return e2s_fail(k->d, E2S_ERR_IO, NULL, 0,
						"input file shrank");
			if (w < 0) {
				/* Not between these files (another
				 * filesystem, a pipe, an old kernel):
				 * write the rest from memory. */
				k->in_fd = -1;
				break;
			}
			off += (uint64_t)w;
			n -= (uint64_t)w;
			k->pos += (uint64_t)w;
		}
		if (!n)
			return E2S_ERR_OK;
	}
	return sink_put(k, f->img + off, n);
}

/* The base layer over [a, b). */
static e2s_err emit_base(wsink *k, const elfp_file *f, uint64_t a,
			 uint64_t b)
{
	uint64_t lo = f->shift, hi = f->shift + f->size;
	e2s_err e = E2S_ERR_OK;
	if (a < lo && a < b)
		e = sink_put(k, NULL, (b < lo ? b : lo) - a);
	if (!e && b > lo && a < hi) {
		uint64_t s = a > lo ? a : lo, t = b < hi ? b : hi;
		e = sink_input(k, f, s - lo, t - s);
	}
	if (!e && b > hi && a < b)
		e = sink_put(k, NULL, b - (a > hi ? a : hi));
	return e;
}

static int patch_cmp(const void *pa, const void *pb)
{
	const wpatch *a = pa, *b = pb;
	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static int order_cmp(const void *pa, const void *pb)
{
	const wpatch *a = pa, *b = pb;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Patches p[0..n) all overlap [a, b) and none reaches past it: compose
 * them over the base layer in application order. */
static e2s_err emit_overlap(wsink *k, const elfp_file *f, wpatch *p,
			    size_t n, uint64_t a, uint64_t b)
{
	uint64_t lo = f->shift, hi = f->shift + f->size;
	if (b - a > SIZE_MAX)
		return e2s_fail(k->d, E2S_ERR_TOO_LARGE, NULL, 0, "output size");
	uint8_t *buf = calloc((size_t)(b - a), 1);
	if (!buf)
		return e2s_fail(k->d, E2S_ERR_NOMEM, NULL, 0, NULL);
	if (b > lo && a < hi) {
		uint64_t s = a > lo ? a : lo, t = b < hi ? b : hi;
		memcpy(buf + (s - a), f->img + (s - lo), (size_t)(t - s));
	}
	qsort(p, n, sizeof *p, order_cmp);
	for (size_t i = 0; i < n; i++) {
		if (p[i].src)
			memcpy(buf + (p[i].off - a), p[i].src, (size_t)p[i].len);
		else
			memset(buf + (p[i].off - a), 0, (size_t)p[i].len);
	}
	e2s_err e = sink_put(k, buf, b - a);
	free(buf);
	return e;
}

/* Emit the whole output of out_size bytes: base layer and patches. */
static e2s_err emit(wsink *k, const elfp_file *f, wpatch *p, size_t n,
		    uint64_t out_size)
{
	uint64_t at = 0;
	e2s_err e = E2S_ERR_OK;
	if (n)
		qsort(p, n, sizeof *p, patch_cmp);
	for (size_t i = 0; i < n && !e;) {
		/* A run of patches whose extents overlap. */
		uint64_t a = p[i].off, b = a + p[i].len;
		size_t j = i + 1;
		for (; j < n && p[j].off < b; j++)
			if (p[j].off + p[j].len > b)
				b = p[j].off + p[j].len;
		e = emit_base(k, f, at, a);
		if (!e && j == i + 1)
			e = sink_put(k, p[i].src, p[i].len);
		else if (!e)
			e = emit_overlap(k, f, p + i, j - i, a, b);
		at = b;
		i = j;
	}
	if (!e)
		e = emit_base(k, f, at, out_size);
	if (!e && k->fd >= 0)
		e = sink_flush(k);
	return e;
}

static void add_patch(wpatch *p, size_t *n, uint64_t off, uint64_t len,
		      const uint8_t *src)
{
	p[*n] = (wpatch){off, len, src, *n};
	++*n;
}

/* Everything elfp_write lays over the base layer, in output offsets;
 * the tables go into tabs (freed by the caller). */
static e2s_err collect_patches(const elfp_file *f, wpatch **out, size_t *nout,
			       uint8_t **tabs, uint8_t *eh, e2s_diag *d)
{
	size_t n = 0, cap = 2 * f->nsecs + 3;
	bool be = f->be;
	uint64_t ph_len = (uint64_t)f->nsegs * ELFP_PHDR_SIZE;
	uint64_t sh_len = (uint64_t)f->nsecs * ELFP_SHDR_SIZE;
	wpatch *p = calloc(cap, sizeof *p);
	uint8_t *t = malloc((size_t)(ph_len + sh_len) + 1);

	*out = NULL;
	*tabs = NULL;
	if (!p || !t) {
		free(p);
		free(t);
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	}
	for (size_t i = 0; i < f->nsecs; i++) {
		const elfp_sec *s = &f->secs[i];
		if (s->place == ELFP_ORIG)
			continue;
		if (!s->has_content) {
			free(p);
			free(t);
			return e2s_fail(d, E2S_ERR_USAGE, NULL, 0,
					"section %zu has no content", i);
		}
		if (s->place == ELFP_INPLACE) {
			uint64_t o = s->old_offset + f->shift;
			add_patch(p, &n, o, s->sh.size, s->content);
			add_patch(p, &n, o + s->sh.size, s->old_size - s->sh.size,
				  NULL);
		} else {
			add_patch(p, &n, s->sh.offset, s->sh.size, s->content);
		}
	}
	if (f->nsegs) {
		for (size_t i = 0; i < f->nsegs; i++)
			put_phdr(t + i * ELFP_PHDR_SIZE, &f->segs[i].ph, be);
		add_patch(p, &n, f->new_phoff, ph_len, t);
	}
	/* Section header table; section 0 carries the extended counts. */
	if (f->nsecs) {
		elfp_shdr s0 = f->secs[0].sh;
		uint8_t *q = t + ph_len;
		if (f->nsecs >= SHN_LORESERVE)
			s0.size = f->nsecs;
		if (f->shstrndx >= SHN_LORESERVE)
			s0.link = (uint32_t)f->shstrndx;
		if (f->nsegs >= PN_XNUM)
			s0.info = (uint32_t)f->nsegs;
		put_shdr(q, &s0, be);
		for (size_t i = 1; i < f->nsecs; i++)
			put_shdr(q + i * ELFP_SHDR_SIZE, &f->secs[i].sh, be);
		add_patch(p, &n, f->new_shoff, sh_len, q);
	}
	/* ELF header fields that move (layout 1: the old header's place
	 * holds the copy add_ehdr_copy made). */
	memcpy(eh, f->img, ELFP_EHDR_SIZE);
	elfp_put(eh + 32, f->new_phoff, 8, be);
	elfp_put(eh + 40, f->nsecs ? f->new_shoff : 0, 8, be);
	elfp_put(eh + 56, f->nsegs >= PN_XNUM ? PN_XNUM : f->nsegs, 2, be);
	elfp_put(eh + 60, f->nsecs >= SHN_LORESERVE ? 0 : f->nsecs, 2, be);
	elfp_put(eh + 62,
		 f->shstrndx >= SHN_LORESERVE ? SHN_XINDEX : f->shstrndx, 2, be);
	add_patch(p, &n, 0, ELFP_EHDR_SIZE, eh);
	/* Drop empty patches; check the rest against the output. */
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (!p[i].len)
			continue;
		if (p[i].off > f->info.out_size ||
		    p[i].len > f->info.out_size - p[i].off) {
			free(p);
			free(t);
			return e2s_fail(d, E2S_ERR_USAGE, NULL, 0,
					"layout places bytes past the output end");
		}
		p[m++] = p[i];
	}
	*out = p;
	*nout = m;
	*tabs = t;
	return E2S_ERR_OK;
}

/* Write the output to the sink k. */
static e2s_err serialise(const elfp_file *f, wsink *k, e2s_diag *d)
{
	uint8_t eh[ELFP_EHDR_SIZE], *tabs = NULL;
	wpatch *p = NULL;
	size_t n = 0;
	e2s_err e;

	if (!f->edited && !f->strtab_changed)
		return emit(k, f, NULL, 0, f->size);
	if (!f->laid_out)
		return e2s_fail(d, E2S_ERR_USAGE, NULL, 0, "write before layout");
	if (f->info.out_size < f->size + f->shift)
		return e2s_fail(d, E2S_ERR_TOO_LARGE, NULL, 0, "output size");
	e = collect_patches(f, &p, &n, &tabs, eh, d);
	if (!e)
		e = emit(k, f, p, n, f->info.out_size);
	free(p);
	free(tabs);
	return e;
}

/* Size of the output elfp_write writes. */
static uint64_t out_size(const elfp_file *f)
{
	return !f->edited && !f->strtab_changed ? f->size : f->info.out_size;
}

e2s_err elfp_write(elfp_file *f, int fd, e2s_diag *d)
{
	wsink k = {.fd = fd, .in_fd = f->fd, .d = d};
	k.stage = malloc(ELFP_STAGE);
	if (!k.stage)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	e2s_err e = serialise(f, &k, d);
	free(k.stage);
	return e;
}

e2s_err elfp_write_mem(elfp_file *f, uint8_t **out, size_t *size,
		       e2s_diag *d)
{
	uint64_t n = out_size(f);
	wsink k = {.fd = -1, .in_fd = -1, .d = d};
	*out = NULL;
	*size = 0;
	if (n > SIZE_MAX - 1)
		return e2s_fail(d, E2S_ERR_TOO_LARGE, NULL, 0, "output size");
	k.mem = malloc(n ? (size_t)n : 1);
	if (!k.mem)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	e2s_err e = serialise(f, &k, d);
	if (!e && k.pos != n)
		e = e2s_fail(d, E2S_ERR_USAGE, NULL, 0, "output size mismatch");
	if (e) {
		free(k.mem);
		return e;
	}
	*out = k.mem;
	*size = (size_t)n;
	return E2S_ERR_OK;
}

e2s_err elfp_write_atomic(const char *path, const char *ref_path,
			  bool keep_owner, elfp_file *f, e2s_diag *d)
{
	struct stat st;
	e2s_err e = E2S_ERR_OK;
	char *dircopy = strdup(path), *basecopy = strdup(path);
	char *tmp = NULL;
	int fd = -1;

	if (!dircopy || !basecopy) {
		e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		goto out;
	}
	if (stat(ref_path, &st) != 0) {
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "%s: %s", ref_path,
			     strerror(errno));
		goto out;
	}
	struct stat ost;
	bool replaces = keep_owner ||
			(stat(path, &ost) == 0 && ost.st_dev == st.st_dev &&
			 ost.st_ino == st.st_ino);
	const char *dir = dirname(dircopy), *base = basename(basecopy);
	size_t n = strlen(dir) + strlen(base) + 32;
	tmp = malloc(n);
	if (!tmp) {
		e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		goto out;
	}
	snprintf(tmp, n, "%s/.%s.e2sXXXXXX", dir, base);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "cannot create a file in %s: %s",
			     dir, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	if (fchmod(fd, st.st_mode & 07777) != 0) {
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "fchmod: %s", strerror(errno));
		goto out;
	}
	if (keep_owner && geteuid() == 0 &&
	    fchown(fd, st.st_uid, st.st_gid) != 0) {
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "fchown: %s", strerror(errno));
		goto out;
	}
	e = elfp_write(f, fd, d);
	if (e)
		goto out;
	/* Replacing the input itself (--in-place, tree mode): the data must
	 * be on disk before the rename does, or a crash could leave neither
	 * the old nor the new file. A new output (-o) can be made again from
	 * the intact input, so it is not synced, like cp, objcopy and strip;
	 * the sync of a 110 MB output costs about 1 s of wall time. */
	if (replaces && fsync(fd) != 0) {
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "fsync: %s", strerror(errno));
		goto out;
	}
	int rc = close(fd);
	fd = -1;
	if (rc != 0) {
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "close: %s", strerror(errno));
		goto out;
	}
	if (rename(tmp, path) != 0) {
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "rename: %s", strerror(errno));
		goto out;
	}
	free(tmp);
	tmp = NULL;
out:
	if (fd >= 0)
		close(fd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	free(dircopy);
	free(basecopy);
	return e;
}
