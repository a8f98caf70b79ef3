/* Find and read the .sframe bytes of an ELF file (elf_file.h). */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/mem.h"
#include "../sframe/sfr_spec.h"
#include "elf_file.h"
#include "elfr_sframe.h"

/* The relocations of section sfidx, whose bytes start at base in the
 * concatenation: each gives the start field at its offset the value
 * symbol + addend in the symbol's section. */
static e2s_err read_relas(const elfr_file *e, size_t sfidx, uint64_t base,
			  uint64_t size, elfr_sframe *out, e2s_vec *vf,
			  e2s_diag *diag)
{
	for (size_t k = 1; k < e->shnum; k++) {
		const elfr_shdr *sh = &e->sh[k];
		elfr_rels rels;
		elfr_symtab st;
		if (sh->type != SHT_RELA || sh->info != sfidx || !sh->entsize ||
		    !elfr_rels_section(e, k, &rels) ||
		    !elfr_symtab_init(e, sh->link, &st))
			continue;
		for (size_t i = 0; i < rels.n; i++) {
			elfr_rel r;
			elfr_sym sym;
			elfr_rels_get(&rels, i, &r);
			if (!elfr_symtab_get(&st, r.sym, &sym) ||
			    !sfr_pcrel_type(e->machine, r.type) || r.offset >= size) {
				out->bad_relocs++;
				continue;
			}
			if (!e2s_vec_grow((void **)&out->fields, vf, sizeof *out->fields, 16))
				return e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);
			out->fields[vf->n++] = (sfr_relfield){
				.off = base + r.offset,
				.shndx = sym.shndx,
				.value = sym.value + (uint64_t)r.addend,
			};
		}
	}
	return E2S_ERR_OK;
}

static int field_cmp(const void *a, const void *b)
{
	const sfr_relfield *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* SHT_GROUP sections: which one lists section idx (0 if none). */
static uint32_t group_of(const elfr_file *e, size_t idx)
{
	for (size_t g = 1; g < e->shnum; g++) {
		size_t n;
		const uint8_t *p = e->sh[g].type == SHT_GROUP
					   ? elfr_section_data(e, g, &n)
					   : NULL;
		if (p && elfr_group_lists(e, p, n, idx))
			return (uint32_t)g;
	}
	return 0;
}

/* By type and content, not by name alone (sfr_section_kind). */
static bool is_sframe(const elfr_file *e, size_t i)
{
	const elfr_shdr *sh = &e->sh[i];
	const char *name;
	size_t n;
	const uint8_t *p;
	if (sh->type == SFR_SHT_GNU_SFRAME)
		return true;
	if (sh->type != SHT_PROGBITS)
		return false;
	name = elfr_section_name(e, i);
	if (!name || strcmp(name, ".sframe") != 0)
		return false;
	p = elfr_section_data(e, i, &n);
	return p && sfr_section_kind(sh->type, name, p, n) == SFR_SEC_SFRAME;
}

static e2s_err add_part(elfr_sframe *out, e2s_vec *vp, const void *bytes,
			size_t n, uint32_t shndx, uint32_t group, e2s_diag *diag)
{
	size_t at = (out->size + 7) & ~(size_t)7;
	uint8_t *nd;
	if (!e2s_vec_grow((void **)&out->parts, vp, sizeof *out->parts, 16) ||
	    !(nd = realloc(out->data, at + n)))
		return e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);
	out->data = nd;
	memset(nd + out->size, 0, at - out->size);
	memcpy(nd + at, bytes, n);
	out->size = at + n;
	out->parts[vp->n++] = (elfr_sframe_part){at, n, shndx, group};
	out->nparts = vp->n;
	return E2S_ERR_OK;
}

/* What the result keeps (the section bytes, the relocated fields) is
 * copied out of the file. */
static e2s_err read_elf(const elfr_file *e, elfr_sframe *out, e2s_diag *diag)
{
	e2s_err err = E2S_ERR_OK;
	e2s_vec vp = {0, 0}, vf = {0, 0};

	out->relocatable = e->type == ET_REL;
	for (size_t idx = 1; idx < e->shnum; idx++) {
		size_t n;
		if (!is_sframe(e, idx))
			continue;
		const uint8_t *p = elfr_section_data(e, idx, &n);
		if (!p)
			return e2s_fail(diag, E2S_ERR_BAD_ELF, ".sframe", 0,
					"empty section");
		uint64_t base = (out->size + 7) & ~(uint64_t)7;
		err = add_part(out, &vp, p, n, (uint32_t)idx,
			       out->relocatable ? group_of(e, idx) : 0, diag);
		if (!err && out->relocatable)
			err = read_relas(e, idx, base, n, out, &vf, diag);
		if (err)
			return err;
		out->vaddr = e->sh[idx].addr;
		/* A linked file's starts are relative to its one section
		 * address: take the first only. */
		if (!out->relocatable)
			break;
	}
	if (out->nparts) {
		if (out->relocatable) {
			out->vaddr = 0;
			out->nfields = vf.n;
			if (out->nfields) /* qsort(NULL, 0) is undefined */
				qsort(out->fields, out->nfields, sizeof *out->fields,
				      field_cmp);
		}
		return E2S_ERR_OK;
	}
	/* No section headers naming it: the segment. */
	const elfr_phdr *ph = elfr_find_phdr(e, SFR_PT_GNU_SFRAME);
	if (ph) {
		const uint8_t *p = elfr_bytes(e, ph->offset, ph->filesz);
		if (!p || ph->filesz == 0)
			return e2s_fail(diag, E2S_ERR_BAD_ELF, NULL, 0,
					"SFR_PT_GNU_SFRAME outside the file");
		err = add_part(out, &vp, p, ph->filesz, 0, 0, diag);
		out->vaddr = ph->vaddr;
		return err;
	}
	return e2s_fail(diag, E2S_ERR_BAD_SFRAME, NULL, 0, "no .sframe section");
}

/* The section of e, opened with status err (e closed either way). */
static e2s_err read_opened(e2s_err err, elfr_file *e, elfr_sframe *out,
			   e2s_diag *diag)
{
	if (!err)
		err = read_elf(e, out, diag);
	if (err)
		elfr_sframe_free(out);
	elfr_close(e);
	return err;
}

e2s_err elfr_sframe_read_mem(const void *img, size_t size, elfr_sframe *out,
			 e2s_diag *diag)
{
	elfr_file *e = NULL;
	memset(out, 0, sizeof *out);
	e2s_err err = elfr_open_view(img, img ? size : 0, 0, &e, diag);
	return read_opened(err, e, out, diag);
}

e2s_err elfr_sframe_read(const char *path, elfr_sframe *out, e2s_diag *diag)
{
	struct stat st;
	elfr_file *e = NULL;
	memset(out, 0, sizeof *out);
	/* Anything but a regular file is not an ELF file to --dump and
	 * --verify (directories, devices). */
	if (stat(path, &st) != 0)
		return e2s_fail(diag, E2S_ERR_IO, NULL, 0, "cannot open");
	if (!S_ISREG(st.st_mode))
		return e2s_fail(diag, E2S_ERR_NOT_ELF, NULL, 0, NULL);
	e2s_err err = elfr_open(path, 0, &e, diag);
	return read_opened(err, e, out, diag);
}

e2s_err elfr_sframe_decode(const elfr_sframe *e, sfr_section *out, e2s_diag *diag)
{
	e2s_err err = e->relocatable
			      ? sfr_decode_rel(e->data, e->size, e->fields, e->nfields,
					       out, diag)
			      : sfr_decode(e->data, e->size, e->vaddr, out, diag);
	if (err)
		return err;
	for (size_t b = 0; b < out->nblocks; b++) {
		size_t p = 0;
		while (p + 1 < e->nparts && e->parts[p + 1].off <= out->blocks[b].off)
			p++;
		out->blocks[b].part = (uint32_t)p;
	}
	return E2S_ERR_OK;
}

void elfr_sframe_free(elfr_sframe *e)
{
	free(e->data);
	free(e->parts);
	free(e->fields);
	memset(e, 0, sizeof *e);
}
