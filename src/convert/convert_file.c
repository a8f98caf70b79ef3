/* The conversion driver: ELF file in -> CFI -> SFrame model -> layout ->
 * .sframe encoded for its final address -> output file. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/mem.h"
#include "../sframe/sframe_fmt.h"
#include "convert.h"

void conv_result_free(conv_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nfns; i++)
		free((char *)r->fns[i].name);
	free(r->fns);
	r->fns = NULL;
	r->nfns = 0;
}

/* The run's outcomes into res, with the FDEs o asks for. */
static e2s_err collect(const conv_run *run, const conv_file_opts *o,
		       conv_result *res, e2s_diag *d)
{
	const cfi_table *t = run->t;
	res->nfdes = run->tally.nfdes;
	res->tally = run->tally;
	if (!o->want_skipped && !o->want_all)
		return E2S_ERR_OK;
	size_t n = 0;
	for (size_t i = 0; i < t->nfdes; i++)
		if (o->want_all || conv_fde_outcome(run, i) != CONV_SKIP_NONE)
			n++;
	if (!n)
		return E2S_ERR_OK;
	res->fns = calloc(n, sizeof *res->fns);
	if (!res->fns)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	for (size_t i = 0; i < t->nfdes; i++) {
		conv_skip why = conv_fde_outcome(run, i);
		if (!o->want_all && why == CONV_SKIP_NONE)
			continue;
		const cfi_fde *fde = &t->fdes[i];
		conv_fn *s = &res->fns[res->nfns++];
		const char *name = elfr_cfi_func_name(run->cf, fde);
		if (name && !(s->name = strdup(name)))
			return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		s->pc = fde->pc_begin;
		s->size = fde->pc_range;
		s->shndx = t->relocatable ? cfi_fde_reloc(t, fde).shndx : 0;
		s->reason = why;
		/* ET_REL functions without an FDE relocation stay out of
		 * .sframe (convert_rel); with every FDE listed they are
		 * marked. */
		s->unrelocated = o->want_all && run->unrel && run->unrel[i];
	}
	return E2S_ERR_OK;
}

/* Index of the first program header of the given type, or -1. */
static long find_phdr(const elfp_file *f, uint32_t type)
{
	for (size_t i = 0; i < elfp_phnum(f); i++)
		if (elfp_segment(f, i)->type == type)
			return (long)i;
	return -1;
}

/* The SFrame version in the header of section i (0: unreadable). */
static unsigned sframe_version_of(const elfp_file *f, size_t i)
{
	size_t size;
	const uint8_t *img = elfp_image(f, &size);
	const elfp_shdr *sh = elfp_section(f, i);
	if (sh->type == SHT_NOBITS || sh->offset > size || size - sh->offset < 4 ||
	    sh->size < 4)
		return 0;
	return img[sh->offset + 2]; /* after the 2-byte magic (spec 2.2) */
}

conv_existing conv_existing_sframe(const elfp_file *f, unsigned version,
				   size_t *old)
{
	size_t n = elfp_shnum(f), k = 0;
	*old = 0;
	for (size_t i = 1; i < n; i++) {
		sfr_sec_kind kind = elfp_sframe_kind(f, i);
		/* A debug file's placeholder counts as having SFrame (its
		 * data is in the stripped file); a real section wins. */
		if ((kind == SFR_SEC_SFRAME && (!k || elfp_sframe_kind(f, k) !=
						      SFR_SEC_SFRAME)) ||
		    (kind == SFR_SEC_PLACEHOLDER && !k))
			k = i;
	}
	if (!k) {
		/* objcopy --strip-section-headers of a converted file: its
		 * segment is all that is left. */
		return find_phdr(f, PT_GNU_SFRAME) >= 0 ? CONV_HAS_SEGMENT
							 : CONV_NO_SFRAME;
	}
	*old = k;
	/* GNU ld 2.46.1 and later ignore SFrame V2 input (2.46.0 fails
	 * the link): an object's V2 section is rebuilt as V3. A linked
	 * file keeps its V2, which glibc's reader reads. */
	if (elfp_is_rel(f) && version != SF_VERSION_2 &&
	    elfp_sframe_kind(f, k) == SFR_SEC_SFRAME &&
	    sframe_version_of(f, k) == SF_VERSION_2)
		return CONV_HAS_V2_OBJECT;
	return CONV_HAS_SFRAME;
}

/* Encoder options every section of this conversion shares. */
static sfe_encode_opts base_opts(const conv_file_opts *o)
{
	sfe_encode_opts eo = {.share_fres = o->share_fres,
			      .sframe_version = o->sframe_version};
	return eo;
}

/* A new section named .sframe next to section foreign, which has that
 * name but is not SFrame (a symbol table, a NOBITS in an object, bytes
 * without the SFrame header): the file is refused. Giving ours another
 * name would not help: ld and lld collect SFrame input by the name
 * .sframe, so it would reach no linked output (a conversion that does
 * nothing, reported as done); sharing the name would make ld merge the
 * foreign bytes into the output .sframe, and readelf/objdump --sframe
 * take the first section so named. The foreign section itself is never
 * touched. */
static e2s_err name_taken(const elfp_file *f, size_t foreign, e2s_diag *d)
{
	static const char *const names[] = {
		[SHT_PROGBITS] = "SHT_PROGBITS without an SFrame header",
		[SHT_SYMTAB] = "SHT_SYMTAB", [SHT_STRTAB] = "SHT_STRTAB",
		[SHT_RELA] = "SHT_RELA", [SHT_NOTE] = "SHT_NOTE",
		[SHT_NOBITS] = "SHT_NOBITS", [SHT_REL] = "SHT_REL",
		[SHT_DYNSYM] = "SHT_DYNSYM"};
	uint32_t t = elfp_section(f, foreign)->type;
	char other[32];
	const char *what = t < sizeof names / sizeof names[0] ? names[t] : NULL;
	if (!what) {
		snprintf(other, sizeof other, "of type %#x", t);
		what = other;
	}
	return e2s_fail(d, E2S_ERR_SFRAME_NAME, NULL, 0,
			"section %zu is %s, not SFrame; rename it to convert "
			"this file", foreign, what);
}

/* Memory the conversion no longer needs, its pages faulted in already
 * (the FDE array: 56 bytes an FDE, more than the section takes): it
 * holds the section's bytes where it is large enough, which then cost
 * no page faults. */
typedef struct {
	void *p;
	size_t bytes;
	e2s_block *blk; /* where p lies in a block: a reference to it */
} spare_t;

static e2s_err convert_linked_planned(elfp_file *f, size_t old,
				      size_t foreign, const sfe_set *set,
				      const sfe_encode_opts *eop, const sfe_plan *plan,
				      spare_t *spare, conv_result *res,
				      e2s_diag *d)
{
	sfe_encode_opts eo = *eop;
	size_t idx = old, size = sfe_plan_size(plan);
	bw_t w;
	e2s_err e;

	eo.plan = plan;
	eo.scratch = NULL; /* the plan is made: no table */
	if (size == 0)
		return e2s_fail(d, E2S_ERR_NO_FUNCS, NULL, 0, NULL);
	if (old) {
		const elfp_shdr *sh = elfp_section(f, old);
		if (!(sh->flags & SHF_ALLOC) || sh->type == SHT_NOBITS)
			return e2s_fail(d, E2S_ERR_BAD_ELF, ".sframe", 0,
					"existing section is not loaded");
		/* Reuse the old space when the new section fits. */
		if (size <= sh->size)
			e = elfp_shrink_section(f, old, size, d);
		else
			e = elfp_move_section(f, old, size, d);
		if (e)
			return e;
	} else {
		elfp_shdr sh = {0};
		if (foreign)
			return name_taken(f, foreign, d);
		sh.type = SHT_GNU_SFRAME;
		sh.flags = SHF_ALLOC;
		sh.addralign = 8;
		sh.size = size;
		e = elfp_add_section(f, ".sframe", &sh, &idx, d);
		if (e)
			return e;
	}
	long ph = find_phdr(f, PT_GNU_SFRAME);
	if (ph >= 0)
		e = elfp_track_phdr(f, (size_t)ph, idx, d);
	else
		e = elfp_add_phdr(f, PT_GNU_SFRAME, PF_R, 8, idx, d);
	if (!e)
		e = elfp_layout(f, d);
	if (e)
		return e;
	eo.section_vaddr = elfp_section(f, idx)->addr;
	bw_init(&w, elfp_big_endian(f));
	e2s_block *wblk = NULL; /* w.data lies in it: never realloc'd (the
				 * encoder reserves the plan's size, which
				 * fits), handed over with it */
	if (spare->p && spare->bytes >= size) {
		w.data = spare->p;
		w.cap = spare->bytes;
		wblk = spare->blk;
		spare->p = NULL;
		spare->blk = NULL;
	}
	e = sfe_encode(set, &eo, &w, NULL, NULL, d);
	if (e) {
		e2s_block_release(wblk, w.data);
		return e;
	}
	res->sframe_size = w.len;
	res->nsections = 1;
	/* The section is megabytes for large libraries: hand the buffer
	 * over instead of copying it. */
	return elfp_take_content(f, idx, w.data, w.len, wblk, d);
}

static e2s_err convert_linked(elfp_file *f, size_t old, size_t foreign,
			      const sfe_set *set, const conv_file_opts *o,
			      spare_t *spare, conv_result *res, e2s_diag *d)
{
	sfe_encode_opts eo = base_opts(o);
	sfe_plan *plan;
	/* The section's memory is free until it is written. */
	eo.scratch = spare->p;
	eo.scratch_bytes = spare->p ? spare->bytes : 0;
	/* Laid out once: the size places the section, the plan writes it. */
	e2s_err e = sfe_plan_make(set, &eo, &plan, d);
	if (e)
		return e;
	e = convert_linked_planned(f, old, foreign, set, &eo, plan, spare, res,
				   d);
	sfe_plan_free(plan);
	return e;
}

/* PC-relative relocation for a function start field of width bytes
 * (8 in V3, 4 in V2); 0 for a machine the converter does not know
 * (refused before: cfi_abi_from_machine). */
static uint32_t pcrel_type(unsigned machine, unsigned width)
{
	const abi_desc *r = abi_of_machine(machine);
	return width == 4 ? r->r_pc32 : r->r_pc64;
}

/* One .sframe (+ .rela.sframe) of a relocatable file: the functions of
 * one COMDAT group, or of no group. */
typedef struct {
	size_t group;     /* SHT_GROUP section index, 0 for none */
	uint32_t *only;   /* sfe_set.funcs indices, sorted */
	size_t n;
	size_t sec, rela;
} rel_part;

/* The first unused relocation section among the n old ones applying to
 * section i, or 0. */
static size_t rela_for(const elfp_file *f, size_t n, size_t i,
		       const bool *used)
{
	for (size_t k = 1; k < n; k++) {
		const elfp_shdr *sh = elfp_section(f, k);
		if ((sh->type == SHT_RELA || sh->type == SHT_REL) &&
		    sh->info == i && !used[k])
			return k;
	}
	return 0;
}

/* --force: make section i (an old .sframe or .rela.sframe) a section of
 * the given type, 8-aligned, with size bytes: in place when they fit
 * where it is (a rebuild of our own output then changes no byte), else
 * in new space at the tail. The index stays, and with it the group
 * membership and any section symbol. */
static e2s_err reuse(elfp_file *f, size_t i, uint32_t type, uint64_t size,
		     e2s_diag *d)
{
	const elfp_shdr *sh = elfp_section(f, i);
	bool fits = size <= sh->size && sh->type != SHT_NOBITS &&
		    sh->addralign >= 8 && sh->offset % 8 == 0;
	e2s_err e = elfp_set_type(f, i, type, 8, d);
	if (e)
		return e;
	if (fits)
		return elfp_shrink_section(f, i, size, d);
	return elfp_move_section(f, i, size, d);
}

/* --force: retire the old SFrame sections no part reused, with their
 * relocation sections, so that linkers see one .sframe per function.
 * Only sections that are SFrame by type or content (kinds): anything
 * else called .sframe stays as it is. */
static e2s_err drop_unused(elfp_file *f, size_t shnum, const uint8_t *kinds,
			   bool *used, e2s_diag *d)
{
	for (size_t i = 1; i < shnum; i++) {
		if (used[i] || kinds[i] != SFR_SEC_SFRAME)
			continue;
		for (size_t r; (r = rela_for(f, shnum, i, used));) {
			used[r] = true;
			e2s_err e = elfp_drop_section(f, r, d);
			if (e)
				return e;
		}
		used[i] = true;
		e2s_err e = elfp_drop_section(f, i, d);
		if (e)
			return e;
	}
	return E2S_ERR_OK;
}

static e2s_err convert_rel(elfp_file *f, const uint8_t *kinds, size_t foreign,
			   const sfe_set *set, const sfe_reloc_ref *frel,
			   const conv_file_opts *o, conv_result *res,
			   e2s_diag *d)
{
	size_t shnum = elfp_shnum(f), symtab = elfp_symtab(f), nparts = 0;
	size_t *group_of = NULL, *olds = NULL, nolds = 0;
	bool *used = NULL;
	rel_part *parts = NULL;
	e2s_err e = E2S_ERR_OK;
	bw_t w;

	bw_init(&w, elfp_big_endian(f));
	if (!symtab)
		return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0, "no symbol table");
	/* gABI: at most one SHT_SYMTAB; with two, the FDE relocations' symbol
	 * indices might belong to the other one. */
	for (size_t i = symtab + 1; i < shnum; i++)
		if (elfp_section(f, i)->type == SHT_SYMTAB)
			return e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
					"more than one symbol table");
	group_of = calloc(shnum ? shnum : 1, sizeof *group_of);
	/* At most one part per group plus the ungrouped one. */
	parts = calloc(shnum + 1, sizeof *parts);
	used = calloc(shnum ? shnum : 1, sizeof *used);
	olds = calloc(shnum ? shnum : 1, sizeof *olds);
	if (!group_of || !parts || !used || !olds) {
		e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		goto out;
	}
	for (size_t i = 1; i < shnum; i++) {
		const elfp_shdr *sh = elfp_section(f, i);
		if (sh->flags & SHF_GROUP)
			group_of[i] = elfp_group_of(f, i);
		if (o->force && kinds[i] == SFR_SEC_SFRAME)
			olds[nolds++] = i;
	}
	/* Part 0 is the ungrouped one; groups follow in section order. */
	nparts = 1;
	for (size_t g = 1; g < shnum; g++) {
		if (elfp_section(f, g)->type != SHT_GROUP)
			continue;
		parts[nparts++].group = g;
	}
	for (size_t p = 0; p < nparts; p++) {
		parts[p].only = calloc(set->nfuncs ? set->nfuncs : 1,
				       sizeof *parts[p].only);
		if (!parts[p].only) {
			e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
			goto out;
		}
	}
	for (size_t i = 0; i < set->nfuncs; i++) {
		const sfe_reloc_ref *fn = &frel[i];
		size_t g = 0, p = 0;
		/* Counted by the run (conv_tally.unrelocated). */
		if (!fn->present)
			continue;
		/* The CFI loader resolved SHN_XINDEX through SHT_SYMTAB_SHNDX. */
		size_t sec = fn->shndx;
		if (sec < shnum)
			g = group_of[sec];
		if (g)
			for (p = 1; p < nparts && parts[p].group != g; p++)
				;
		if (p == nparts)
			p = 0;
		parts[p].only[parts[p].n++] = (uint32_t)i;
	}
	size_t total = 0;
	for (size_t p = 0; p < nparts; p++) {
		rel_part *pt = &parts[p];
		sfe_encode_opts eo = base_opts(o);
		eo.relocatable = true;
		eo.only = pt->only;
		eo.nonly = pt->n;
		elfp_shdr sh = {0};
		if (!pt->n)
			continue;
		total += pt->n;
		size_t old = 0, orela = 0;
		for (size_t k = 0; !old && k < nolds; k++)
			if (!used[olds[k]] && group_of[olds[k]] == pt->group)
				old = olds[k];
		if (old) {
			used[old] = true;
			orela = rela_for(f, shnum, old, used);
			/* Rewritten in place only when it already is what we
			 * write: RELA entries naming the one symbol table. */
			const elfp_shdr *rsh = elfp_section(f, orela);
			if (orela && (rsh->type != SHT_RELA || rsh->link != symtab ||
				      rsh->entsize != 24)) {
				used[orela] = true;
				e = elfp_drop_section(f, orela, d);
				if (e)
					goto out;
				orela = 0;
			}
			pt->sec = old;
			e = reuse(f, old, SHT_GNU_SFRAME,
				  sfe_encoded_size(set, &eo), d);
			if (!e && orela) {
				used[orela] = true;
				pt->rela = orela;
				e = reuse(f, orela, SHT_RELA,
					  (uint64_t)pt->n * 24, d);
			}
			if (e)
				goto out;
			if (orela)
				continue;
		}
		sh.type = SHT_GNU_SFRAME;
		sh.flags = SHF_ALLOC | (pt->group ? SHF_GROUP : 0);
		sh.addralign = 8;
		sh.size = sfe_encoded_size(set, &eo);
		if (!old && foreign)
			e = name_taken(f, foreign, d);
		else if (!old)
			e = elfp_add_section(f, ".sframe", &sh, &pt->sec, d);
		if (e)
			goto out;
		memset(&sh, 0, sizeof sh);
		sh.type = SHT_RELA;
		sh.flags = SHF_INFO_LINK | (pt->group ? SHF_GROUP : 0);
		sh.link = (uint32_t)symtab;
		sh.info = (uint32_t)pt->sec;
		sh.addralign = 8;
		sh.entsize = 24;
		sh.size = (uint64_t)pt->n * 24;
		e = elfp_add_section(f, ".rela.sframe", &sh, &pt->rela, d);
		if (!e && pt->group && !old)
			e = elfp_group_add(f, pt->group, pt->sec, d);
		if (!e && pt->group)
			e = elfp_group_add(f, pt->group, pt->rela, d);
		if (e)
			goto out;
	}
	if (!total) {
		e = e2s_fail(d, E2S_ERR_NO_FUNCS, NULL, 0, NULL);
		goto out;
	}
	if (o->force) {
		e = drop_unused(f, shnum, kinds, used, d);
		if (e)
			goto out;
	}
	e = elfp_layout(f, d);
	if (e)
		goto out;
	for (size_t p = 0; p < nparts; p++) {
		rel_part *pt = &parts[p];
		sfe_encode_opts eo = base_opts(o);
		eo.relocatable = true;
		eo.only = pt->only;
		eo.nonly = pt->n;
		sfe_reloc *rl = NULL;
		size_t nrl = 0;
		if (!pt->n)
			continue;
		w.len = 0;
		e = sfe_encode(set, &eo, &w, &rl, &nrl, d);
		if (!e)
			e = elfp_set_content(f, pt->sec, w.data, w.len, d);
		res->sframe_size += w.len;
		res->nsections++;
		if (!e && nrl != pt->n)
			e = e2s_fail(d, E2S_ERR_BAD_SFRAME, ".sframe", 0,
				     "%zu relocations for %zu functions", nrl,
				     pt->n);
		/* The field holds func - field: S + A - P with the symbol and
		 * addend of the function's .eh_frame FDE relocation. */
		w.len = 0;
		for (size_t k = 0; !e && k < nrl; k++) {
			const sfe_reloc_ref *fn = &frel[rl[k].func];
			bw_u64(&w, rl[k].offset);
			uint32_t type = pcrel_type(elfp_machine(f), rl[k].width);
			bw_u64(&w, ((uint64_t)fn->sym << 32) | type);
			bw_u64(&w, (uint64_t)fn->addend);
		}
		free(rl);
		if (!e && w.oom)
			e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		if (!e)
			e = elfp_set_content(f, pt->rela, w.data, w.len, d);
		if (e)
			goto out;
	}
out:
	for (size_t p = 0; parts && p < nparts; p++)
		free(parts[p].only);
	free(parts);
	free(group_of);
	free(used);
	free(olds);
	bw_free(&w);
	return e;
}

typedef struct {
	uint64_t off, end;
	size_t idx;
} extent;

static int extent_cmp(const void *a, const void *b)
{
	const extent *x = a, *y = b;
	return (x->off > y->off) - (x->off < y->off);
}

/* --force rewrites old SFrame sections in place and zeroes the ones it
 * retires, with their relocation sections. gABI: no byte of a file is
 * in two sections; a hostile file that breaks this would have those
 * writes land on another section's bytes (fuzzing found two SFrame
 * sections on the same bytes: one rebuilt in place, then zeroed as the
 * other was retired). Such a file is refused. Only old (linked files)
 * or, for relocatable ones, every SFrame section and relocation section
 * applying to one is checked; one sorted sweep over all sections. */
static e2s_err check_overlap(const elfp_file *f, const uint8_t *kinds,
			     size_t old, e2s_diag *d)
{
	size_t n = elfp_shnum(f), m = 0;
	extent *x = calloc(n ? n : 1, sizeof *x);
	size_t *partner = calloc(n ? n : 1, sizeof *partner);
	e2s_err e = E2S_ERR_OK;
	if (!x || !partner) {
		e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		goto out;
	}
	for (size_t i = 1; i < n; i++) {
		const elfp_shdr *sh = elfp_section(f, i);
		if (sh->type != SHT_NOBITS && sh->type != SHT_NULL && sh->size)
			x[m++] = (extent){sh->offset, sh->offset + sh->size, i};
	}
	qsort(x, m, sizeof *x, extent_cmp);
	/* Every section sharing a byte with one that starts no later gets
	 * a partner (the one reaching furthest so far). */
	uint64_t end = 0;
	size_t far = 0;
	for (size_t k = 0; k < m; k++) {
		if (far && x[k].off < end) {
			partner[x[k].idx] = far;
			if (!partner[far])
				partner[far] = x[k].idx;
		}
		if (x[k].end > end) {
			end = x[k].end;
			far = x[k].idx;
		}
	}
	for (size_t i = 1; i < n; i++) {
		const elfp_shdr *sh = elfp_section(f, i);
		bool ours = elfp_is_rel(f)
				    ? kinds[i] == SFR_SEC_SFRAME ||
					      ((sh->type == SHT_RELA || sh->type == SHT_REL) &&
					       sh->info < n && kinds[sh->info] == SFR_SEC_SFRAME)
				    : i == old;
		if (ours && partner[i]) {
			e = e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0,
				     "section %zu shares file bytes with section %zu",
				     i, partner[i]);
			break;
		}
	}
out:
	free(x);
	free(partner);
	return e;
}

/* The CFI reader skips empty sections, then finds none: say that the
 * section is there but empty. */
static e2s_err empty_cfi(const elfp_file *f, e2s_diag *d)
{
	static const char *const names[] = {".eh_frame", ".debug_frame"};
	for (size_t k = 0; k < 2; k++) {
		size_t i = elfp_find_section(f, names[k]);
		if (i && elfp_section(f, i)->size == 0)
			return e2s_fail(d, E2S_ERR_NO_FUNCS, NULL, 0,
					"%s is empty", names[k]);
	}
	return E2S_ERR_NO_CFI;
}

e2s_err conv_file(elfp_file *f, const conv_file_opts *o,
			  conv_result *res, e2s_diag *d)
{
	conv_run run;
	spare_t spare = {NULL, 0, NULL};
	size_t size, old = 0, foreign = 0, n = elfp_shnum(f);
	uint8_t *kinds = NULL;
	e2s_err e;

	memset(res, 0, sizeof *res);
	memset(&run, 0, sizeof run);
	/* What each section is, judged on the input before any edit: by
	 * type and content, never by the name .sframe alone. */
	kinds = calloc(n ? n : 1, 1);
	if (!kinds)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	for (size_t i = 1; i < n; i++) {
		kinds[i] = (uint8_t)elfp_sframe_kind(f, i);
		if (kinds[i] == SFR_SEC_FOREIGN && !foreign)
			foreign = i;
	}
	conv_existing ex = conv_existing_sframe(f, o->sframe_version, &old);
	if (ex == CONV_HAS_SEGMENT) {
		free(kinds);
		/* Without section headers nothing says where the old section
		 * is: a second one would be added beside it. */
		return e2s_fail(d, E2S_ERR_EXISTS, NULL, 0,
				o->force ? "PT_GNU_SFRAME and no section headers: "
					   "cannot be rebuilt"
					 : "PT_GNU_SFRAME and no section headers");
	}
	if (ex == CONV_HAS_SFRAME && !o->force) {
		free(kinds);
		return e2s_fail(d, E2S_ERR_EXISTS, NULL, 0, NULL);
	}
	/* The V2 section is replaced as --force replaces one. */
	conv_file_opts forced = *o;
	res->rebuilt_v2 = ex == CONV_HAS_V2_OBJECT;
	if (res->rebuilt_v2) {
		forced.force = true;
		o = &forced;
	}
	if (old) {
		e = check_overlap(f, kinds, old, d);
		if (e) {
			free(kinds);
			return e;
		}
	}
	/* The image is elfp's input, which it never writes: the run's CFI
	 * handle may borrow it. Encoding waits for the layout. */
	const uint8_t *img = elfp_image(f, &size);
	conv_input in = {.img = img, .size = size,
			 .debug_frame = o->debug_frame};
	conv_opts co = {.sframe_version = o->sframe_version};
	e = conv_run_do(&in, &co, &run, d);
	if (e == E2S_ERR_NO_CFI)
		e = empty_cfi(f, d);
	if (e)
		goto out;
	e = collect(&run, o, res, d);
	if (e)
		goto out;
	/* A linked file's section is written after the CFI is gone: into
	 * the FDEs' memory, when it fits. */
	if (!elfp_is_rel(f) && run.cf)
		spare.p = elfr_cfi_take_fdes(run.cf, &spare.bytes, &spare.blk);
	conv_run_drop_cfi(&run);
	const sfe_set *set = &run.set;
	if (set->nfuncs == 0) {
		e = e2s_fail(d, E2S_ERR_NO_FUNCS, NULL, 0, NULL);
		goto out;
	}
	if (elfp_is_rel(f)) {
		e = convert_rel(f, kinds, foreign, set, run.frel, o, res, d);
	} else {
		/* Symbols the stripped file lost still show what its code
		 * refers to (elfp_grow.c, rule 2). */
		elfp_file *syms = NULL;
		if (o->symbols_from) {
			e = elfp_open_symbols(o->symbols_from, &syms, d);
			if (e) {
				char why[200];
				e2s_diag_format(d, why, sizeof why);
				e = e2s_fail(d, e, NULL, 0, "debug file %s: %s",
					     o->symbols_from, why);
				goto out;
			}
			elfp_set_extra_symbols(f, syms);
		}
		e = conv_mini_move(f, d);
		if (!e)
			e = convert_linked(f, old, foreign, set, o, &spare,
					   res, d);
		elfp_set_extra_symbols(f, NULL);
		elfp_close(syms);
		if (!e)
			e = conv_mini_update(f, d);
	}
	if (!e)
		elfp_get_layout(f, &res->layout);
out:
	conv_run_free(&run);
	e2s_block_release(spare.blk, spare.p);
	free(kinds);
	return e;
}

/* Map (or read) the written file at path and check it. */
e2s_err conv_file_path(const char *in_path, const char *out_path,
		     const conv_file_opts *o, conv_result *res, e2s_diag *d)
{
	elfp_file *f = NULL;
	e2s_err e;

	memset(res, 0, sizeof *res);
	e = elfp_open(in_path, &f, d);
	if (!e)
		e = conv_file(f, o, res, d);
	if (!e) {
		/* Read back and checked before it replaces the output (the
		 * input itself with --in-place): a failed check leaves that
		 * untouched and no file behind. */
		elfp_check_opts co = {.debug_frame = o->debug_frame,
				      .nfdes = res->nfdes};
		elfp_write_opts wo = {.keep_owner = o->in_place,
				      .no_sync = o->no_sync, .check = &co,
				      .new_path = o->new_out};
		e = elfp_write_atomic_opts(out_path, in_path, f, &wo, d);
	}
	elfp_close(f);
	return e;
}
