/* elfpatch: layout of the new bytes and serialisation of the output.
 *
 * Output file = the input image (only the ELF header, an in-place program
 * header table and in-place rewritten sections change) followed by:
 *   [zero padding][new segment: moved program header table, new allocated
 *   sections][tail: rewritten non-allocated sections][section headers].
 *
 * Why the moved program header table sits where it does: the kernel since
 * 5.18 finds it through the PT_LOAD covering e_phoff, and glibc through
 * PT_PHDR, but older kernels and the qemu-user loader in Debian 12 take
 * AT_PHDR = load bias + e_phoff, the bias being the first PT_LOAD's
 * p_vaddr - p_offset. So the new segment keeps that same offset-to-address
 * distance, which puts its file offset at (first free page above every
 * segment) - bias. For usual files that costs at most the .bss size plus a
 * page of zeros, because non-allocated sections (symbols, debug info)
 * already push the end of the file past it. Padding measured on Debian 12
 * (x86-64): ls 4.2 KiB, bash 44 KiB, gdb 121 KiB, python3.11 280 KiB,
 * libc.so.6 47 KiB, libstdc++.so.6 13 KiB; shared objects pay it too
 * because a static-pie (ET_DYN, started by the kernel) cannot be told
 * apart from a library reliably. A file with a huge
 * .bss would grow by that much; beyond ELFP_MAX_PAD we give up the old
 * loaders and place the segment right after the file's end (modern kernels
 * and glibc still work; an old-style loader would read the table from the
 * wrong place). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfp_internal.h"

static uint64_t align_up(uint64_t v, uint64_t a)
{
	if (a <= 1)
		return v;
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
			uint64_t off = off0;
			if (fresh >= in->bias && fresh - in->bias > off)
				off = fresh - in->bias;
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
	out->vaddr = fresh + off0 % page;
	out->align = page;
	out->tied = false;
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
	bool need_load = false, moved = false;
	elfp_layout_info *li = &f->info;

	if (f->laid_out)
		return e2s_fail(d, E2S_ERR_USAGE, NULL, 0, "layout done twice");
	memset(li, 0, sizeof *li);
	f->new_phoff = f->phoff;
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
	for (size_t i = 0; i < f->nsecs; i++)
		if (f->secs[i].place == ELFP_SEG)
			need_load = true;

	if (f->type != ET_REL && (need_load || f->nsegs > f->old_nsegs)) {
		size_t total = f->nsegs + (need_load ? 1 : 0);
		uint64_t bias = 0, max_end = 0, page = 4096;
		bool have_load = false;
		if (!room_in_place(f, total)) {
			moved = true;
			if (!need_load)
				total++;
			need_load = true;
		}
		for (size_t i = 0; i < f->old_nsegs; i++) {
			const elfp_phdr *p = &f->segs[i].ph;
			if (p->type == PT_LOAD) {
				if (!have_load)
					bias = p->vaddr - p->offset;
				have_load = true;
				if (p->align > page)
					page = p->align;
			}
			if (p->vaddr > UINT64_MAX - p->memsz - 2 * page)
				return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
						"segment %zu ends past the address space", i);
			if (p->vaddr + p->memsz > max_end)
				max_end = p->vaddr + p->memsz;
		}
		if (!have_load)
			return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
					"no PT_LOAD segment");
		if (page & (page - 1))
			return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
					"p_align %llu is not a power of two",
					(unsigned long long)page);
		if (need_load) {
			elfp_seg_in in = {f->size, bias, max_end, page, moved,
					  ELFP_MAX_PAD};
			elfp_seg_out so;
			uint64_t cur = 0;
			elfp_place_segment(&in, &so);
			if (moved) {
				f->new_phoff = so.offset;
				cur = (uint64_t)total * ELFP_PHDR_SIZE;
			}
			for (size_t i = 0; i < f->nsecs; i++) {
				elfp_sec *s = &f->secs[i];
				if (s->place != ELFP_SEG)
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
			li->phdrs_tied = moved && so.tied;
			li->seg_offset = so.offset;
			li->seg_vaddr = so.vaddr;
			li->seg_size = cur;
			li->pad = so.offset - f->size;
			end = so.offset + cur;
		}
		li->phdrs_moved = moved;
		for (size_t i = 0; i < f->nsegs; i++) {
			elfp_phdr *p = &f->segs[i].ph;
			if (p->type != PT_PHDR)
				continue;
			if (moved) {
				uint64_t v = li->seg_vaddr;
				p->paddr = p->paddr - p->vaddr + v;
				p->vaddr = v;
				p->offset = li->seg_offset;
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
	if (!tail && f->nsecs == f->old_nsecs) {
		/* Only in-place changes: the section header table stays. */
		f->new_shoff = f->shoff;
	} else if (f->edited || f->strtab_changed) {
		f->new_shoff = align_up(end, 8);
		end = f->new_shoff + (uint64_t)f->nsecs * ELFP_SHDR_SIZE;
	} else {
		f->new_shoff = f->shoff;
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

static e2s_err write_all(int fd, const uint8_t *p, size_t n, e2s_diag *d)
{
	while (n) {
		ssize_t w = write(fd, p, n > (1u << 30) ? (1u << 30) : n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return e2s_fail(d, E2S_ERR_IO, NULL, 0, "write: %s",
					w ? strerror(errno) : "no progress");
		p += w;
		n -= (size_t)w;
	}
	return E2S_ERR_OK;
}

e2s_err elfp_write(elfp_file *f, int fd, e2s_diag *d)
{
	e2s_err e = E2S_ERR_OK;
	uint8_t *ext = NULL;
	size_t next;
	bool be = f->be;

	if (!f->edited && !f->strtab_changed)
		return write_all(fd, f->img, f->size, d);
	if (!f->laid_out)
		return e2s_fail(d, E2S_ERR_USAGE, NULL, 0, "write before layout");
	if (f->info.out_size < f->size ||
	    f->info.out_size - f->size > SIZE_MAX - 1)
		return e2s_fail(d, E2S_ERR_TOO_LARGE, NULL, 0, "output size");
	next = (size_t)(f->info.out_size - f->size);
	ext = calloc(next ? next : 1, 1);
	if (!ext)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	for (size_t i = 0; i < f->nsecs; i++) {
		elfp_sec *s = &f->secs[i];
		if (s->place == ELFP_ORIG)
			continue;
		if (!s->has_content) {
			e = e2s_fail(d, E2S_ERR_USAGE, NULL, 0,
				     "section %zu has no content", i);
			goto out;
		}
		if (s->place == ELFP_INPLACE) {
			memcpy(f->img + s->old_offset, s->content, s->sh.size);
			memset(f->img + s->old_offset + s->sh.size, 0,
			       s->old_size - s->sh.size);
		} else {
			memcpy(ext + (s->sh.offset - f->size), s->content,
			       s->sh.size);
		}
	}
	/* Program header table. */
	if (f->nsegs) {
		uint8_t *p = f->info.phdrs_moved ? ext + (f->new_phoff - f->size)
						 : f->img + f->phoff;
		for (size_t i = 0; i < f->nsegs; i++)
			put_phdr(p + i * ELFP_PHDR_SIZE, &f->segs[i].ph, be);
	}
	/* Section header table; section 0 carries the extended counts. */
	if (f->nsecs) {
		elfp_shdr s0 = f->secs[0].sh;
		uint8_t *p = f->new_shoff < f->size ? f->img + f->new_shoff
						    : ext + (f->new_shoff - f->size);
		if (f->nsecs >= SHN_LORESERVE)
			s0.size = f->nsecs;
		if (f->shstrndx >= SHN_LORESERVE)
			s0.link = (uint32_t)f->shstrndx;
		if (f->nsegs >= PN_XNUM)
			s0.info = (uint32_t)f->nsegs;
		put_shdr(p, &s0, be);
		for (size_t i = 1; i < f->nsecs; i++)
			put_shdr(p + i * ELFP_SHDR_SIZE, &f->secs[i].sh, be);
	}
	/* ELF header fields that move. */
	elfp_put(f->img + 32, f->new_phoff, 8, be);
	elfp_put(f->img + 40, f->nsecs ? f->new_shoff : 0, 8, be);
	elfp_put(f->img + 56, f->nsegs >= PN_XNUM ? PN_XNUM : f->nsegs, 2, be);
	elfp_put(f->img + 60, f->nsecs >= SHN_LORESERVE ? 0 : f->nsecs, 2, be);
	elfp_put(f->img + 62,
		 f->shstrndx >= SHN_LORESERVE ? SHN_XINDEX : f->shstrndx, 2, be);
	e = write_all(fd, f->img, f->size, d);
	if (!e)
		e = write_all(fd, ext, next, d);
out:
	free(ext);
	return e;
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
	if (fsync(fd) != 0) {
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
