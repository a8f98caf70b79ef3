/* Self-reading helpers shared by prog.c, lib.c and loader.c (tests/e2e/
 * selfref.sh). An object reads its own notes, .interp and dynamic symbol
 * table the ways real programs do, and prints what it read, one line per
 * read: contents and names, never addresses (they vary under ASLR), so
 * the output is the same on every run and must stay the same after
 * eh2sframe adds .sframe. Bytes that are not printable ASCII are printed
 * as \xNN: a read that lands on program headers shows as such.
 *
 * Lines starting with "sframe " report PT_GNU_SFRAME as dl_iterate_phdr
 * shows it; they differ by design before and after the conversion and
 * the test does not compare them. */
#ifndef SELFREF_H
#define SELFREF_H
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME 0x6474e554
#endif

#if defined(__x86_64__)
#define SR_INTERP "/lib64/ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define SR_INTERP "/lib/ld-linux-aarch64.so.1"
#elif defined(__s390x__)
#define SR_INTERP "/lib/ld64.so.1"
#else
#error "unknown architecture"
#endif

/* A note of our own, as an application would ship one: name "myapp",
 * 16 bytes of text. SR_NOTE(var, text) places it in .note.myapp, where
 * the linker puts it next to the standard notes. */
struct sr_note {
	uint32_t namesz, descsz, type;
	char name[8];
	char desc[16];
};
#define SR_NOTE(var, text)                                                    \
	__attribute__((section(".note.myapp"), used, aligned(4)))             \
	static const struct sr_note var = {6, 16, 0x5e1f, "myapp", text}

/* Every helper may go unused in one of the programs. */
#define SR static __attribute__((unused))

/* Linker-defined: the object's own ELF header and .dynamic (absent in a
 * static non-PIE program, hence weak). */
extern const ElfW(Ehdr) __ehdr_start __attribute__((weak, visibility("hidden")));
extern ElfW(Dyn) _DYNAMIC[] __attribute__((weak, visibility("hidden")));

/* Print N bytes of P (up to a NUL when STOP), escaping the unprintable. */
SR void sr_put(const char *p, size_t n, int stop)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (stop && c == 0)
			break;
		if (c >= 0x20 && c < 0x7f && c != '\\')
			putchar(c);
		else
			printf("\\x%02x", c);
	}
}

/* The loaded object holding address ANCHOR (this object), as
 * dl_iterate_phdr describes it. */
struct sr_obj {
	uintptr_t anchor;
	ElfW(Addr) base;
	const ElfW(Phdr) *phdr;
	size_t phnum;
	int found;
};

SR int sr_find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct sr_obj *o = data;
	(void)size;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t a = o->anchor - info->dlpi_addr;
		if (p->p_type == PT_LOAD && a >= p->p_vaddr && a - p->p_vaddr < p->p_memsz) {
			o->base = info->dlpi_addr;
			o->phdr = info->dlpi_phdr;
			o->phnum = info->dlpi_phnum;
			o->found = 1;
			return 1;
		}
	}
	return 0;
}

SR struct sr_obj sr_self(const void *anchor)
{
	struct sr_obj o = {(uintptr_t)anchor, 0, NULL, 0, 0};
	dl_iterate_phdr(sr_find_cb, &o);
	return o;
}

/* Is VADDR (unbiased) inside one of O's PT_LOADs? */
SR int sr_mapped(const struct sr_obj *o, ElfW(Addr) vaddr)
{
	for (size_t i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *p = &o->phdr[i];
		if (p->p_type == PT_LOAD && vaddr >= p->p_vaddr && vaddr - p->p_vaddr < p->p_memsz)
			return 1;
	}
	return 0;
}

/* A d_ptr value as a pointer: glibc adds the load bias to some .dynamic
 * entries in place (DT_SYMTAB, DT_STRTAB, DT_GNU_HASH, ...), not to
 * others (DT_VERNEED, DT_VERDEF), so take whichever reading lands in the
 * object. */
SR const void *sr_dptr(const struct sr_obj *o, ElfW(Addr) v)
{
	if (v == 0)
		return NULL;
	if (o->base && v >= o->base && sr_mapped(o, v - o->base))
		return (const void *)v;
	return (const void *)(v + o->base);
}

/* ---- notes ------------------------------------------------------------ */

SR void sr_note_entry(const char *name, uint32_t type, const unsigned char *desc,
		      uint32_t descsz)
{
	if (strcmp(name, "GNU") == 0 && type == NT_GNU_BUILD_ID) {
		printf("build-id ");
		for (uint32_t i = 0; i < descsz; i++)
			printf("%02x", desc[i]);
	} else if (strcmp(name, "GNU") == 0 && type == NT_GNU_ABI_TAG && descsz >= 16) {
		uint32_t w[4];
		memcpy(w, desc, sizeof w);
		printf("ABI-tag os %u %u.%u.%u", w[0], w[1], w[2], w[3]);
	} else if (strcmp(name, "myapp") == 0) {
		printf("myapp ");
		sr_put((const char *)desc, descsz, 0);
	} else {
		printf("%s/%#x ", name, type);
		for (uint32_t i = 0; i < descsz; i++)
			printf("%02x", desc[i]);
	}
}

/* Every note of every PT_NOTE segment of the table PHDR (bias BASE). */
SR void sr_notes(const char *how, const ElfW(Phdr) *phdr, size_t phnum, ElfW(Addr) base)
{
	const char *sep = "";
	printf("notes via %s: ", how);
	for (size_t i = 0; i < phnum; i++) {
		const ElfW(Phdr) *p = &phdr[i];
		size_t al = p->p_align == 8 ? 8 : 4, pos = 0;
		const unsigned char *seg = (const unsigned char *)(base + p->p_vaddr);
		if (p->p_type != PT_NOTE)
			continue;
		while (pos + 12 <= p->p_filesz) {
			uint32_t h[3];
			memcpy(h, seg + pos, sizeof h);
			size_t nameoff = pos + 12;
			size_t descoff = (nameoff + h[0] + al - 1) & ~(al - 1);
			size_t next = (descoff + h[1] + al - 1) & ~(al - 1);
			if (next > p->p_filesz || h[0] > 64 || (h[0] && seg[nameoff + h[0] - 1])) {
				printf("%sbad note at +%zu", sep, pos);
				sep = "; ";
				break;
			}
			printf("%s", sep);
			sr_note_entry(h[0] ? (const char *)seg + nameoff : "", h[2], seg + descoff, h[1]);
			sep = "; ";
			pos = next;
		}
	}
	printf("%s\n", *sep ? "" : "none");
}

/* The notes through dl_iterate_phdr's view of this object. */
SR void sr_notes_dl(const struct sr_obj *o)
{
	sr_notes("dl_iterate_phdr", o->phdr, o->phnum, o->base);
}

/* The notes through the object's own ELF header, as static glibc and
 * ld.so find their program headers: the table at __ehdr_start + e_phoff
 * (modulo 2^64: e_phoff may lead below the header), the load bias 0 in
 * an ET_EXEC file, &__ehdr_start in an ET_DYN one (linked at 0). */
SR void sr_notes_ehdr(void)
{
	const ElfW(Ehdr) *eh = &__ehdr_start;
	if (!eh) {
		printf("notes via __ehdr_start: no __ehdr_start\n");
		return;
	}
	uintptr_t base = eh->e_type == ET_DYN ? (uintptr_t)eh : 0;
	sr_notes("__ehdr_start", (const ElfW(Phdr) *)((uintptr_t)eh + eh->e_phoff), eh->e_phnum, base);
}

/* ---- .interp ---------------------------------------------------------- */

SR void sr_interp_dl(const struct sr_obj *o)
{
	printf("interp via PT_INTERP: ");
	for (size_t i = 0; i < o->phnum; i++) {
		if (o->phdr[i].p_type == PT_INTERP) {
			sr_put((const char *)(o->base + o->phdr[i].p_vaddr), o->phdr[i].p_filesz, 1);
			printf("\n");
			return;
		}
	}
	printf("none\n");
}

/* ---- dynamic symbol table ---------------------------------------------- */

struct sr_dyn {
	const char *strtab;
	const ElfW(Sym) *symtab;
	const uint32_t *hash, *gnu_hash;
	const ElfW(Half) *versym;
	const ElfW(Verneed) *verneed;
	const ElfW(Verdef) *verdef;
	size_t nsyms;
};

/* Number of dynamic symbols: DT_HASH's nchain, or the end of the last
 * DT_GNU_HASH chain. */
SR size_t sr_count(const struct sr_dyn *d)
{
	if (d->hash)
		return d->hash[1];
	if (!d->gnu_hash)
		return 0;
	const uint32_t *g = d->gnu_hash;
	uint32_t nb = g[0], symoff = g[1], nbloom = g[2];
	const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(g + 4) + nbloom);
	const uint32_t *chain = buckets + nb;
	uint32_t last = 0;
	for (uint32_t i = 0; i < nb; i++)
		if (buckets[i] > last)
			last = buckets[i];
	if (last < symoff)
		return symoff;
	while (!(chain[last - symoff] & 1))
		last++;
	return last + 1;
}

SR uint32_t sr_gnu_hash(const char *s)
{
	uint32_t h = 5381;
	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/* A defined symbol through DT_GNU_HASH, as ld.so looks it up. */
SR const ElfW(Sym) *sr_gnu_lookup(const struct sr_dyn *d, const char *name)
{
	const uint32_t *g = d->gnu_hash;
	if (!g || !g[0])
		return NULL;
	uint32_t nb = g[0], symoff = g[1], nbloom = g[2], h = sr_gnu_hash(name);
	const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(g + 4) + nbloom);
	const uint32_t *chain = buckets + nb;
	for (uint32_t i = buckets[h % nb]; i >= symoff; i++) {
		uint32_t h2 = chain[i - symoff];
		if ((h | 1) == (h2 | 1) && strcmp(d->strtab + d->symtab[i].st_name, name) == 0)
			return &d->symtab[i];
		if (h2 & 1)
			break;
	}
	return NULL;
}

SR const char *sr_version(const struct sr_dyn *d, size_t idx)
{
	if (!d->versym)
		return "unversioned";
	unsigned v = d->versym[idx] & 0x7fff;
	if (v == 0)
		return "local";
	if (v == 1)
		return "base";
	for (const ElfW(Verneed) *n = d->verneed; n;
	     n = n->vn_next ? (const void *)((const char *)n + n->vn_next) : NULL) {
		const ElfW(Vernaux) *a = (const void *)((const char *)n + n->vn_aux);
		for (unsigned k = 0; k < n->vn_cnt; k++) {
			if (a->vna_other == v)
				return d->strtab + a->vna_name;
			a = (const void *)((const char *)a + a->vna_next);
		}
	}
	for (const ElfW(Verdef) *f = d->verdef; f;
	     f = f->vd_next ? (const void *)((const char *)f + f->vd_next) : NULL) {
		if (f->vd_ndx == v) {
			const ElfW(Verdaux) *a = (const void *)((const char *)f + f->vd_aux);
			return d->strtab + a->vda_name;
		}
	}
	return "unknown";
}

/* Look NAME up the way a reader of .dynsym does: defined symbols through
 * DT_GNU_HASH, imported ones by scanning the table. WANT is the symbol's
 * address in this process, to check a definition against (or NULL). */
SR void sr_sym(const struct sr_obj *o, const struct sr_dyn *d, const char *name,
	       const void *want)
{
	static const char *const types[] = {"NOTYPE", "OBJECT", "FUNC", "SECTION", "FILE"};
	const ElfW(Sym) *s = sr_gnu_lookup(d, name);
	for (size_t i = 0; !s && i < d->nsyms; i++)
		if (strcmp(d->strtab + d->symtab[i].st_name, name) == 0)
			s = &d->symtab[i];
	printf("; %s ", name);
	if (!s) {
		printf("not found");
		return;
	}
	unsigned t = ELF64_ST_TYPE(s->st_info);
	printf("%s %s %s %s", s->st_shndx == SHN_UNDEF ? "UND" : "defined",
	       t < 5 ? types[t] : "OTHER", ELF64_ST_BIND(s->st_info) == STB_WEAK ? "WEAK" : "GLOBAL",
	       sr_version(d, (size_t)(s - d->symtab)));
	if (want && s->st_shndx != SHN_UNDEF)
		printf(", address %s", o->base + s->st_value == (uintptr_t)want ? "agrees" : "DIFFERS");
}

/* Read the dynamic symbol table through DYN (this object's .dynamic):
 * DT_NEEDED and DT_SONAME strings, and the symbols NAMES (with their
 * addresses in WANT, or NULL). */
SR void sr_dynsym(const char *how, const struct sr_obj *o, const ElfW(Dyn) *dyn,
		  const char *const *names, const void *const *want, size_t n)
{
	struct sr_dyn d = {0};
	printf("dynsym via %s: ", how);
	if (!dyn) {
		printf("no .dynamic\n");
		return;
	}
	for (const ElfW(Dyn) *e = dyn; e->d_tag != DT_NULL; e++) {
		switch (e->d_tag) {
		case DT_STRTAB: d.strtab = sr_dptr(o, e->d_un.d_ptr); break;
		case DT_SYMTAB: d.symtab = sr_dptr(o, e->d_un.d_ptr); break;
		case DT_HASH: d.hash = sr_dptr(o, e->d_un.d_ptr); break;
		case DT_GNU_HASH: d.gnu_hash = sr_dptr(o, e->d_un.d_ptr); break;
		case DT_VERSYM: d.versym = sr_dptr(o, e->d_un.d_ptr); break;
		case DT_VERNEED: d.verneed = sr_dptr(o, e->d_un.d_ptr); break;
		case DT_VERDEF: d.verdef = sr_dptr(o, e->d_un.d_ptr); break;
		}
	}
	if (!d.strtab || !d.symtab) {
		printf("no DT_STRTAB/DT_SYMTAB\n");
		return;
	}
	d.nsyms = sr_count(&d);
	printf("%zu symbols", d.nsyms);
	for (const ElfW(Dyn) *e = dyn; e->d_tag != DT_NULL; e++) {
		if (e->d_tag == DT_NEEDED || e->d_tag == DT_SONAME) {
			printf("; %s ", e->d_tag == DT_NEEDED ? "needed" : "soname");
			sr_put(d.strtab + e->d_un.d_val, 64, 1);
		}
	}
	for (size_t i = 0; i < n; i++)
		sr_sym(o, &d, names[i], want ? want[i] : NULL);
	printf("\n");
}

/* Through the linker-defined _DYNAMIC. */
SR void sr_dynsym_sym(const struct sr_obj *o, const char *const *names,
		      const void *const *want, size_t n)
{
	sr_dynsym("_DYNAMIC", o, _DYNAMIC, names, want, n);
}

/* Through dl_iterate_phdr -> PT_DYNAMIC. */
SR void sr_dynsym_dl(const struct sr_obj *o, const char *const *names,
		     const void *const *want, size_t n)
{
	const ElfW(Dyn) *dyn = NULL;
	for (size_t i = 0; i < o->phnum; i++)
		if (o->phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(o->base + o->phdr[i].p_vaddr);
	sr_dynsym("PT_DYNAMIC", o, dyn, names, want, n);
}

/* ---- PT_GNU_SFRAME (not compared: it is new after the conversion) ------ */

/* "sframe NAME: ok vN" when an object's PT_GNU_SFRAME bytes start with
 * the SFrame magic (0xdee2, read in the object's own byte order), "none"
 * without the segment. Only the main program and our libraries. */
SR int sr_sframe_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	const char *name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "main";
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	if (strcmp(base, "main") != 0 && strncmp(base, "libselfref", 10) != 0)
		return 0;
	printf("sframe %s: ", base);
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_GNU_SFRAME)
			continue;
		const unsigned char *m = (const unsigned char *)(info->dlpi_addr + p->p_vaddr);
		uint16_t magic;
		memcpy(&magic, m, 2);
		if (p->p_memsz >= 4 && magic == 0xdee2)
			printf("ok v%u\n", m[2]);
		else
			printf("bad magic %#x\n", magic);
		return 0;
	}
	printf("none\n");
	return 0;
}

SR void sr_sframe(void)
{
	fflush(stdout);
	dl_iterate_phdr(sr_sframe_cb, NULL);
}

#endif
