/* elfpatch: serialisation of the laid-out file (elfp_layout.c decides
 * where everything goes; this writes it) and the atomic writer. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/atomic.h"
#include "../common/mem.h"
#include "elfp_internal.h"

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

void elfp_put_shdr(uint8_t *p, const elfp_shdr *sh, bool be)
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
	/* Memory sink: zeroed, when mem came zeroed (calloc: zeros are not
	 * written, so untouched pages of a large buffer take no memory);
	 * sparse, headers only (elfp_write_mem_headers): of the input only
	 * the bytes in [keep_lo[i], keep_hi[i]) are copied. */
	bool zeroed, sparse;
	uint64_t keep_lo[2], keep_hi[2];
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
		else if (!k->zeroed)
			memset(k->mem + k->pos, 0, (size_t)n);
		k->pos += n;
		return E2S_ERR_OK;
	}
	k->pos += n;
	while (n) {
		size_t c = n < ELFP_STAGE ? (size_t)n : ELFP_STAGE;
		if (p && c == ELFP_STAGE && !k->nstage) {
			/* Large: straight from the source, in one call. */
			c = (size_t)(n - n % ELFP_STAGE);
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

/* n bytes of the source image img from offset off: copied by the
 * kernel from k->in_fd when it can, otherwise written from img. */
static e2s_err sink_input(wsink *k, const uint8_t *img, uint64_t off,
			  uint64_t n)
{
	if (k->sparse) {
		for (size_t i = 0; i < 2; i++) {
			uint64_t a = off > k->keep_lo[i] ? off : k->keep_lo[i];
			uint64_t b = off + n < k->keep_hi[i] ? off + n
							     : k->keep_hi[i];
			if (a < b)
				memcpy(k->mem + k->pos + (a - off), img + a,
				       (size_t)(b - a));
		}
		k->pos += n;
		return E2S_ERR_OK;
	}
	if (k->fd >= 0 && k->in_fd >= 0 && n >= ELFP_STAGE) {
		e2s_err e = sink_flush(k);
		if (e)
			return e;
		/* The kernel copies a pipe's worth (16 pages) a round, and a
		 * round gives the page cache large folios only where it
		 * starts on a multiple of that: a short first round puts the
		 * rest on that grid. Where the output's bytes sit a page
		 * further than the input's (python3.11), every round was off
		 * it: a third more CPU for the copy (3.05 against 2.30 ms). */
		uint64_t grid = 16 * (uint64_t)sysconf(_SC_PAGESIZE);
		uint64_t lead = (grid - k->pos % grid) % grid;
		while (n) {
			loff_t in_off = (loff_t)off;
			size_t c = n > (1u << 30) ? (1u << 30) : (size_t)n;
			if (lead && lead < c)
				c = (size_t)lead;
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
			lead -= lead < (uint64_t)w ? lead : (uint64_t)w;
		}
		if (!n)
			return E2S_ERR_OK;
	}
	return sink_put(k, img + off, n);
}

/* The base layer over [a, b). */
static e2s_err emit_base(wsink *k, const elfp_file *f, uint64_t a,
			 uint64_t b)
{
	uint64_t lo = f->shift, hi = f->shift + f->keep;
	e2s_err e = E2S_ERR_OK;
	if (a < lo && a < b)
		e = sink_put(k, NULL, (b < lo ? b : lo) - a);
	if (!e && b > lo && a < hi) {
		uint64_t s = a > lo ? a : lo, t = b < hi ? b : hi;
		e = sink_input(k, f->in->img, s - lo, t - s);
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
	uint64_t lo = f->shift, hi = f->shift + f->keep;
	if (b - a > SIZE_MAX)
		return e2s_fail(k->d, E2S_ERR_TOO_LARGE, NULL, 0, "output size");
	uint8_t *buf = calloc((size_t)(b - a), 1);
	if (!buf)
		return e2s_fail(k->d, E2S_ERR_NOMEM, NULL, 0, NULL);
	if (b > lo && a < hi) {
		uint64_t s = a > lo ? a : lo, t = b < hi ? b : hi;
		memcpy(buf + (s - a), f->in->img + (s - lo), (size_t)(t - s));
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
	size_t n = 0, cap = 2 * f->nsecs + f->nbp + 4;
	bool be = f->in->be;
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
		if (s->place == ELFP_ORIG || s->place == ELFP_BLOCK)
			continue;
		if (!s->has_content) {
			free(p);
			free(t);
			return e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
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
	/* GROWN: the moved sections' bytes, straight from the input. */
	if (f->blk_hi > f->blk_lo)
		add_patch(p, &n, f->blk_off, f->blk_hi - f->blk_lo,
			  f->in->img + f->blk_lo);
	for (size_t i = 0; i < f->nbp; i++)
		add_patch(p, &n, f->bp[i].off + (f->bp[i].out ? 0 : f->shift),
			  f->bp[i].len, f->bp[i].zero ? NULL : f->bp[i].val);
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
		elfp_put_shdr(q, &s0, be);
		for (size_t i = 1; i < f->nsecs; i++)
			elfp_put_shdr(q + i * ELFP_SHDR_SIZE, &f->secs[i].sh, be);
		add_patch(p, &n, f->new_shoff, sh_len, q);
	}
	/* ELF header fields that move (layout 1: the old header's place
	 * holds the copy add_ehdr_copy made). */
	memcpy(eh, f->in->img, ELFP_EHDR_SIZE);
	elfp_put_ehdr_tables(eh, f->new_phoff, f->nsegs, f->new_shoff,
			     f->nsecs, f->shstrndx, be);
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
			return e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
					"layout places bytes past the output end");
		}
		p[m++] = p[i];
	}
	*out = p;
	*nout = m;
	*tabs = t;
	return E2S_ERR_OK;
}

void elfp_put_ehdr_tables(uint8_t *eh, uint64_t phoff, size_t phnum,
			  uint64_t shoff, size_t shnum, size_t shstrndx,
			  bool be)
{
	elfp_put(eh + 32, phoff, 8, be);
	elfp_put(eh + 40, shnum ? shoff : 0, 8, be);
	/* Entry sizes too: an input without a table may say 0 there
	 * (strip --strip-section-headers), and the output has one. */
	if (phnum)
		elfp_put(eh + 54, ELFP_PHDR_SIZE, 2, be);
	if (shnum)
		elfp_put(eh + 58, ELFP_SHDR_SIZE, 2, be);
	elfp_put(eh + 56, phnum >= PN_XNUM ? PN_XNUM : phnum, 2, be);
	elfp_put(eh + 60, shnum >= SHN_LORESERVE ? 0 : shnum, 2, be);
	elfp_put(eh + 62, shstrndx >= SHN_LORESERVE ? SHN_XINDEX : shstrndx,
		 2, be);
}

/* Write the output to the sink k. */
static e2s_err serialise(const elfp_file *f, wsink *k, e2s_diag *d)
{
	uint8_t eh[ELFP_EHDR_SIZE], *tabs = NULL;
	wpatch *p = NULL;
	size_t n = 0;
	e2s_err e;

	if (!f->edited && !f->strtab_changed)
		return emit(k, f, NULL, 0, f->in->size);
	if (!f->laid_out)
		return e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
				"elfp_write before elfp_layout");
	if (f->info.out_size < f->keep + f->shift)
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
	return !f->edited && !f->strtab_changed ? f->in->size : f->info.out_size;
}

e2s_err elfp_write(elfp_file *f, int fd, e2s_diag *d)
{
	wsink k = {.fd = fd, .in_fd = f->in->fd, .d = d};
	k.stage = malloc(ELFP_STAGE);
	if (!k.stage)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	e2s_err e = serialise(f, &k, d);
	free(k.stage);
	return e;
}

/* The output into memory (sparse: elfp_write_mem_headers). */
static e2s_err write_mem(elfp_file *f, bool sparse, uint8_t **out,
			 size_t *size, e2s_diag *d)
{
	uint64_t n = out_size(f);
	wsink k = {.fd = -1, .in_fd = -1, .d = d, .zeroed = sparse,
		   .sparse = sparse};
	*out = NULL;
	*size = 0;
	if (n > SIZE_MAX - 1)
		return e2s_fail(d, E2S_ERR_TOO_LARGE, NULL, 0, "output size");
	if (sparse) {
		/* The input's ELF header and program header table, and its
		 * section name table when that is not rewritten. */
		k.keep_hi[0] = ELFP_EHDR_SIZE;
		if (f->in->phnum &&
		    f->in->phoff + (uint64_t)f->in->phnum * ELFP_PHDR_SIZE >
			    k.keep_hi[0])
			k.keep_hi[0] = f->in->phoff +
				       (uint64_t)f->in->phnum * ELFP_PHDR_SIZE;
		if (f->shstrndx < f->nsecs &&
		    f->secs[f->shstrndx].place == ELFP_ORIG) {
			k.keep_lo[1] = f->secs[f->shstrndx].in_off;
			k.keep_hi[1] = k.keep_lo[1] + f->secs[f->shstrndx].in_size;
		}
		/* Untouched pages of a large zeroed allocation cost no
		 * memory. */
		k.mem = calloc(n ? (size_t)n : 1, 1);
	} else {
		k.mem = malloc(n ? (size_t)n : 1);
	}
	if (!k.mem)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	e2s_err e = serialise(f, &k, d);
	if (!e && k.pos != n)
		e = e2s_fail(d, E2S_ERR_INTERNAL, NULL, 0,
			     "wrote %llu bytes of an output of %llu",
			     (unsigned long long)k.pos, (unsigned long long)n);
	if (e) {
		free(k.mem);
		return e;
	}
	*out = k.mem;
	*size = (size_t)n;
	return E2S_ERR_OK;
}

e2s_err elfp_write_mem(elfp_file *f, uint8_t **out, size_t *size,
		       e2s_diag *d)
{
	return write_mem(f, false, out, size, d);
}

e2s_err elfp_write_mem_headers(elfp_file *f, uint8_t **out, size_t *size,
			       e2s_diag *d)
{
	return write_mem(f, true, out, size, d);
}

/* The written temporary file, read back and checked against f. */
static e2s_err check_written(const char *tmp, const elfp_file *f,
			     const elfp_check_opts *co, e2s_diag *d)
{
	e2s_map m;
	e2s_err e = e2s_map_file(tmp, false, &m, d);
	if (e)
		return e;
	e = elfp_check_output(f, m.data, m.size, co, d);
	e2s_unmap_file(&m);
	return e;
}

/* f's output into path, not a regular file (a device, a FIFO): made and
 * checked in memory, as it cannot be read back, then written. */
static e2s_err write_stream(const char *path, elfp_file *f,
			    const elfp_check_opts *co, e2s_diag *d)
{
	uint8_t *buf = NULL;
	size_t n = 0;
	e2s_err e = elfp_write_mem(f, &buf, &n, d);
	if (!e && co)
		e = elfp_check_output(f, buf, n, co, d);
	if (!e)
		e = e2s_write_stream(path, buf, n, d);
	free(buf);
	return e;
}

static e2s_err write_atomic(const char *path, const char *ref_path,
			    elfp_file *f, const elfp_write_opts *o,
			    e2s_diag *d)
{
	struct stat st, ost;
	e2s_atomic a;
	e2s_err e;

	if (stat(ref_path, &st) != 0)
		return e2s_fail(d, E2S_ERR_IO, NULL, 0, "%s: %s", ref_path,
				strerror(errno));
	/* Replacing the input itself (--in-place, -o naming the input):
	 * the data must be on disk before the rename is, or a crash could
	 * leave neither the old nor the new file. A new output (-o) can be
	 * made again from the intact input, so it is not synced, like cp,
	 * objcopy and strip; the sync of a 110 MB output costs about 1 s of
	 * wall time. Nor is an output kept as in place (keep_owner) under
	 * another name: tree mode stages its files so, syncs them together
	 * and renames them itself. Nor, asked so (no_sync), is an input
	 * that can itself be made again: a build product. */
	bool same = !o->new_path && stat(path, &ost) == 0 &&
		    ost.st_dev == st.st_dev &&
		    ost.st_ino == st.st_ino;
	bool replaces = o->keep_owner || same;
	bool sync = same && !o->no_sync;
	e = o->new_path ? e2s_atomic_begin_new(&a, path, d)
			: e2s_atomic_begin(&a, path, d);
	if (e)
		return e;
	e2s_atomic_reserve(&a, out_size(f));
	e = elfp_write(f, a.fd, d);
	if (!e && o->check)
		e = check_written(a.tmp, f, o->check, d);
	if (e) {
		e2s_atomic_abort(&a);
		return e;
	}
	/* A replaced file keeps what it carries beyond its bytes: owner,
	 * extended attributes (file capabilities...), set-ID bits. A new
	 * file belongs to whoever runs us, so, as cp does, it does not
	 * run as the input's owner or group. */
	mode_t mode = replaces ? st.st_mode : st.st_mode & ~(mode_t)(S_ISUID | S_ISGID);
	return e2s_atomic_commit(&a, mode, replaces ? &st : NULL,
				 replaces ? ref_path : NULL, sync, d);
}

/* The one atomic writer of f's output. */
e2s_err elfp_write_atomic_opts(const char *path, const char *ref_path,
			       elfp_file *f, const elfp_write_opts *o,
			       e2s_diag *d)
{
	const elfp_write_opts none = {.keep_owner = false};
	if (!o)
		o = &none;
	/* A staging name is the caller's own, new: nothing to follow. */
	if (o->new_path)
		return write_atomic(path, ref_path, f, o, d);
	char *target;
	bool stream;
	e2s_err e = e2s_out_target(path, &target, &stream, d);
	if (!e)
		e = stream ? write_stream(target, f, o->check, d)
			   : write_atomic(target, ref_path, f, o, d);
	free(target);
	return e;
}

e2s_err elfp_write_atomic(const char *path, const char *ref_path,
			  bool keep_owner, elfp_file *f, e2s_diag *d)
{
	elfp_write_opts o = {.keep_owner = keep_owner};
	return elfp_write_atomic_opts(path, ref_path, f, &o, d);
}

/* ---- Files assembled from pieces ------------------------------------ */

static int piece_cmp(const void *pa, const void *pb)
{
	const elfp_piece *a = pa, *b = pb;
	return (a->off > b->off) - (a->off < b->off);
}

/* The pieces in offset order through the same sink as elfp_write:
 * zeros between them, source ranges copied by the kernel where it can. */
static e2s_err emit_pieces(wsink *k, const elfp_source *src, elfp_piece *p,
			   size_t n, uint64_t size, e2s_diag *d)
{
	e2s_err e = E2S_ERR_OK;
	qsort(p, n, sizeof *p, piece_cmp);
	for (size_t i = 0; i < n && !e; i++) {
		if (p[i].off < k->pos || p[i].off > size ||
		    p[i].len > size - p[i].off ||
		    (!p[i].mem && (p[i].src_off > src->size ||
				   p[i].len > src->size - p[i].src_off)))
			return e2s_fail(d, E2S_ERR_USAGE, NULL, 0,
					"pieces overlap or lie outside the "
					"file");
		e = sink_put(k, NULL, p[i].off - k->pos);
		if (!e && p[i].mem)
			e = sink_put(k, p[i].mem, p[i].len);
		else if (!e)
			e = sink_input(k, src->img, p[i].src_off, p[i].len);
	}
	if (!e)
		e = sink_put(k, NULL, size - k->pos);
	if (!e)
		e = sink_flush(k);
	return e;
}

e2s_err elfp_write_pieces_atomic(const char *path, const struct stat *keep,
				 const elfp_source *src, elfp_piece *p,
				 size_t n, uint64_t size, e2s_diag *d)
{
	wsink k = {.in_fd = src->fd, .d = d};
	e2s_atomic a;
	e2s_err e = e2s_atomic_begin(&a, path, d);
	if (e)
		return e;
	k.fd = a.fd;
	e2s_atomic_reserve(&a, size);
	k.stage = malloc(ELFP_STAGE);
	e = k.stage ? emit_pieces(&k, src, p, n, size, d)
		    : e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	free(k.stage);
	if (e) {
		e2s_atomic_abort(&a);
		return e;
	}
	/* It replaces path: on disk before the rename (see
	 * elfp_write_atomic_opts). */
	return e2s_atomic_commit(&a, keep->st_mode, keep, path, true, d);
}

e2s_err elfp_write_pieces_mem(const elfp_source *src, elfp_piece *p,
			      size_t n, uint64_t size, uint8_t **out,
			      size_t *out_len, e2s_diag *d)
{
	/* Zeroed: a debug file placed around a program header table far
	 * into its file (the SEG layouts) is mostly zeros. */
	wsink k = {.fd = -1, .in_fd = -1, .d = d, .zeroed = true};
	*out = NULL;
	*out_len = 0;
	if (size > SIZE_MAX - 1)
		return e2s_fail(d, E2S_ERR_TOO_LARGE, NULL, 0, "output size");
	k.mem = calloc(size ? (size_t)size : 1, 1);
	if (!k.mem)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	e2s_err e = emit_pieces(&k, src, p, n, size, d);
	if (e) {
		free(k.mem);
		return e;
	}
	*out = k.mem;
	*out_len = (size_t)size;
	return E2S_ERR_OK;
}
