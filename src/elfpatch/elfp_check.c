/* The output read back before a conversion reports success, as a linker
 * would read it: a converter bug that damages a section it does not own
 * (issue 22: a symbol table called .sframe dropped by --force) must be
 * an error, never a file written with exit status 0.
 *
 * Cheap by design, so it runs on every conversion: headers are compared
 * with the input's (O(sections)); relocation entries are read only for
 * relocation sections that changed or whose symbol table or target
 * changed (normally just the new .rela.sframe); the CFI of a relocatable
 * file is loaded again when anything the loader reads differs from the
 * input (check_cfi). What the input already got wrong is not ours to
 * report: a defect found in the output is an error only when the same
 * section of the input does not have it. */
#include <elf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../elf/elfr_cfi.h"
#include "elfp_internal.h"

#define RELA_SIZE 24 /* Elf64_Rela */
#define REL_SIZE 16  /* Elf64_Rel */
#define SYM_SIZE 24  /* Elf64_Sym */

static e2s_err bad(e2s_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static e2s_err bad(e2s_diag *d, const char *fmt, ...)
{
	char buf[sizeof d->detail];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return e2s_fail(d, E2S_ERR_OUTPUT_CHECK, NULL, 0, "%s", buf);
}

/* Input sections a conversion may rewrite: SFrame sections (rebuilt or
 * retired), the relocation sections applying to them, groups (members
 * added or removed) and the section name table. */
static bool owned(const elfp_file *in, size_t i)
{
	const elfp_shdr *sh = elfp_section(in, i);
	if (i == in->shstrndx || sh->type == SHT_GROUP ||
	    elfp_sframe_kind(in, i) == SFR_SEC_SFRAME)
		return true;
	return (sh->type == SHT_RELA || sh->type == SHT_REL) &&
	       elfp_sframe_kind(in, sh->info) == SFR_SEC_SFRAME;
}

/* The fields a reader interprets (offsets may move; addresses are
 * compared separately). */
static bool same_header(const elfp_shdr *a, const elfp_shdr *b)
{
	return a->type == b->type && a->flags == b->flags &&
	       a->size == b->size && a->link == b->link &&
	       a->info == b->info && a->entsize == b->entsize;
}

/* Section j of in and out hold as many entries of the same kind (or j
 * is 0 in both). */
static bool same_count(const elfp_file *in, const elfp_file *out, size_t j)
{
	const elfp_shdr *a = elfp_section(in, j), *b = elfp_section(out, j);
	if (j == 0)
		return true;
	return a && b && a->type == b->type && a->size == b->size &&
	       a->entsize == b->entsize;
}

/* Whether a linker could apply relocation section k of F; why not into
 * why. */
static bool rel_ok(const elfp_file *F, size_t k, char *why, size_t len)
{
	const elfp_shdr *sh = elfp_section(F, k);
	uint64_t ent = sh->type == SHT_RELA ? RELA_SIZE : REL_SIZE;
	if (sh->entsize != ent || sh->size % ent) {
		snprintf(why, len, "entry size %llu, size %llu",
			 (unsigned long long)sh->entsize,
			 (unsigned long long)sh->size);
		return false;
	}
	const elfp_shdr *sym = sh->link ? elfp_section(F, sh->link) : NULL;
	if (!sym || (sym->type != SHT_SYMTAB && sym->type != SHT_DYNSYM) ||
	    sym->entsize != SYM_SIZE) {
		snprintf(why, len, "sh_link %u is not a symbol table", sh->link);
		return false;
	}
	/* Dynamic relocations (linked files) may apply to no section. */
	bool need_info = F->in->type == ET_REL || (sh->flags & SHF_INFO_LINK);
	const elfp_shdr *tgt = sh->info ? elfp_section(F, sh->info) : NULL;
	if (need_info && (!tgt || tgt->type == SHT_NULL)) {
		snprintf(why, len, "sh_info %u names no section", sh->info);
		return false;
	}
	uint64_t nsyms = sym->size / SYM_SIZE;
	bool check_off = F->in->type == ET_REL && tgt && tgt->type != SHT_NOBITS;
	elfr_rels rels;
	/* parse() checked the extent against the file (the new .rela.sframe
	 * of a large object has tens of thousands of entries). */
	elfr_rels_section(F->in, k, &rels);
	for (size_t j = 0; j < rels.n; j++) {
		elfr_rel r;
		elfr_rels_get(&rels, j, &r);
		if (r.sym && r.sym >= nsyms) {
			snprintf(why, len,
				 "relocation %zu: symbol %u of a table of %llu",
				 j, r.sym, (unsigned long long)nsyms);
			return false;
		}
		if (check_off && r.offset >= tgt->size) {
			snprintf(why, len,
				 "relocation %zu: offset %#llx past section %u",
				 j, (unsigned long long)r.offset, sh->info);
			return false;
		}
	}
	return true;
}

static bool same_name(const elfp_file *in, const elfp_file *out, size_t i)
{
	const char *a = elfp_section_name(in, i), *b = elfp_section_name(out, i);
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Sections of the input not ours to change: same name and header, same
 * address (unless laid out as part of the moved block), bytes not
 * rewritten. */
static e2s_err check_kept(const elfp_file *f, const elfp_file *in,
			  const elfp_file *out, e2s_diag *d)
{
	for (size_t i = 1; i < elfp_shnum(in); i++) {
		if (owned(in, i))
			continue;
		const elfp_shdr *a = elfp_section(in, i), *b = elfp_section(out, i);
		const char *name = elfp_section_name(in, i);
		/* The mini debuginfo, brought in line with the output
		 * (elfp_replace_content): the same header but for its size. */
		if (i < f->nsecs && f->secs[i].place == ELFP_TAIL &&
		    !(a->flags & SHF_ALLOC) && name &&
		    strcmp(name, ".gnu_debugdata") == 0 && same_name(in, out, i) &&
		    a->type == b->type && a->flags == b->flags &&
		    a->link == b->link && a->info == b->info)
			continue;
		bool block = i < f->nsecs && f->secs[i].place == ELFP_BLOCK;
		bool kept = i < f->nsecs && (f->secs[i].place == ELFP_ORIG || block);
		if (!same_header(a, b) || !same_name(in, out, i) || !kept ||
		    (!block && a->addr != b->addr))
			return bad(d, "section %zu (%s, type %u) was changed", i,
				   name ? name : "?", a->type);
	}
	return E2S_ERR_OK;
}

/* Section i has the input's name, header and bytes in the output. */
static bool same_section(const elfp_file *in, const elfp_file *out, size_t i)
{
	const elfp_shdr *a = elfp_section(in, i), *b = elfp_section(out, i);
	size_t na, nb;
	const uint8_t *pa = elfp_image(in, &na), *pb = elfp_image(out, &nb);
	if (!a || !b || !same_header(a, b) || !same_name(in, out, i))
		return false;
	/* parse() checked both extents against their files. */
	return a->type == SHT_NOBITS || a->type == SHT_NULL ||
	       memcmp(pa + a->offset, pb + b->offset, (size_t)a->size) == 0;
}

/* What the CFI loader (elfr_cfi.c) reads of a relocatable file, beyond
 * the section names: the .eh_frame and .debug_frame sections, the
 * relocation sections applying to them, the symbol tables those link to
 * and the extended section indexes. True when all of it is as in the
 * input and no new relocation section applies to the CFI. */
static bool cfi_unchanged(const elfp_file *in, const elfp_file *out)
{
	size_t nin = elfp_shnum(in), nout = elfp_shnum(out);
	bool *cfi = calloc(nout, sizeof *cfi), same = cfi != NULL;
	for (size_t i = 1; same && i < nin; i++) {
		const char *n = elfp_section_name(in, i);
		cfi[i] = n && (strcmp(n, ".eh_frame") == 0 ||
			       strcmp(n, ".debug_frame") == 0);
		if (cfi[i] || elfp_section(in, i)->type == SHT_SYMTAB_SHNDX)
			same = same_section(in, out, i);
	}
	for (size_t k = 1; same && k < nout; k++) {
		const elfp_shdr *sh = elfp_section(out, k);
		if ((sh->type != SHT_RELA && sh->type != SHT_REL) ||
		    sh->info >= nout || !cfi[sh->info])
			continue;
		same = k < nin && same_section(in, out, k) &&
		       same_section(in, out, sh->link);
	}
	free(cfi);
	return same;
}

static e2s_err check_relocs(const elfp_file *f, const elfp_file *in,
			    const elfp_file *out, e2s_diag *d)
{
	size_t nin = elfp_shnum(in);
	char why[120], old[120];
	for (size_t k = 1; k < elfp_shnum(out); k++) {
		const elfp_shdr *sh = elfp_section(out, k);
		if (sh->type != SHT_RELA && sh->type != SHT_REL)
			continue;
		bool rewritten = k >= f->nsecs || f->secs[k].is_new ||
				 (f->secs[k].place != ELFP_ORIG &&
				  f->secs[k].place != ELFP_BLOCK);
		bool changed = k >= nin || rewritten ||
			       !same_header(elfp_section(in, k), sh) ||
			       !same_count(in, out, sh->link) ||
			       !same_count(in, out, sh->info);
		if (!changed || rel_ok(out, k, why, sizeof why))
			continue;
		/* Entries we did not write and the input has the same
		 * defect: not ours. */
		if (!rewritten && k < nin && elfp_section(in, k)->type == sh->type &&
		    !rel_ok(in, k, old, sizeof old))
			continue;
		const char *name = elfp_section_name(out, k);
		return bad(d, "relocation section %zu (%s): %s", k,
			   name ? name : "?", why);
	}
	return E2S_ERR_OK;
}

/* ET_REL: the CFI loader, relocations and all, must find what the
 * conversion read. When everything it reads is byte for byte the input's
 * (the normal case: nothing of it is ours to change), it would read what
 * it read when the conversion loaded it: that load succeeded, so the
 * work (a fifth of a conversion's time for a large object) is skipped.
 * Otherwise it runs again on the output, records only. */
static e2s_err check_cfi(const elfp_file *in, const elfp_file *out,
			 const elfp_check_opts *o, e2s_diag *d)
{
	size_t size;
	const uint8_t *img = elfp_image(out, &size);
	if (cfi_unchanged(in, out))
		return E2S_ERR_OK;
	elfr_cfi_opts lo = {.prefer_debug_frame = o->debug_frame,
			    .records_only = true};
	elfr_cfi *cf = NULL;
	e2s_diag sub = {0};
	char msg[sizeof sub.detail];
	e2s_err e = elfr_cfi_open_view(img, size, &lo, NULL, NULL, &cf, &sub);
	if (e == E2S_ERR_NOMEM)
		return e2s_fail(d, e, NULL, 0, NULL);
	if (e) {
		e2s_diag_format(&sub, msg, sizeof msg);
		return bad(d, "its CFI does not load: %s", msg);
	}
	size_t n = elfr_cfi_table(cf)->nfdes;
	elfr_cfi_close(cf);
	if (n != o->nfdes)
		return bad(d, "its CFI has %zu FDEs, the input's %zu", n, o->nfdes);
	return E2S_ERR_OK;
}

e2s_err elfp_check_output(const elfp_file *f, const uint8_t *out,
			  size_t size, const elfp_check_opts *o, e2s_diag *d)
{
	elfp_file *in = NULL, *of = NULL;
	e2s_diag sub = {0};
	char msg[sizeof sub.detail];
	e2s_err e = elfp_open_view(f->in->img, f->in->size, &in, d);
	if (e)
		return e;
	e = elfp_open_view(out, size, &of, &sub);
	if (e == E2S_ERR_NOMEM) {
		e = e2s_fail(d, e, NULL, 0, NULL);
	} else if (e) {
		e2s_diag_format(&sub, msg, sizeof msg);
		e = bad(d, "it does not parse: %s", msg);
	} else if (elfp_shnum(of) < elfp_shnum(in) ||
		   elfp_type(of) != elfp_type(in)) {
		e = bad(d, "%zu sections of type %u, the input has %zu of %u",
			elfp_shnum(of), elfp_type(of), elfp_shnum(in),
			elfp_type(in));
	}
	if (!e)
		e = check_kept(f, in, of, d);
	if (!e)
		e = check_relocs(f, in, of, d);
	if (!e && elfp_is_rel(of))
		e = check_cfi(in, of, o, d);
	elfp_close(of);
	elfp_close(in);
	return e;
}
