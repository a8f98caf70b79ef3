/* Find and read the .sframe bytes of an ELF file (libelf). */
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi_gelf.h"
#include "../common/mem.h"
#include "../sframe/sfr_spec.h"
#include "sfr_file.h"

#ifndef R_390_PC64
#define R_390_PC64 23
#endif
#ifndef R_390_PC32
#define R_390_PC32 5
#endif

/* PC-relative relocation types a start field can carry: 64-bit for V3,
 * 32-bit for V2. Anything else is counted, not applied. */
static bool pcrel_type(unsigned machine, unsigned t)
{
	switch (machine) {
	case EM_X86_64: return t == R_X86_64_PC64 || t == R_X86_64_PC32;
	case EM_AARCH64: return t == R_AARCH64_PREL64 || t == R_AARCH64_PREL32;
	case EM_S390: return t == R_390_PC64 || t == R_390_PC32;
	default: return false;
	}
}

/* The relocations of section sfidx, whose bytes start at base in the
 * concatenation: each gives the start field at its offset the value
 * symbol + addend in the symbol's section. */
static e2s_err read_relas(Elf *e, size_t sfidx, unsigned machine,
			  uint64_t base, uint64_t size, sfr_elf *out,
			  e2s_vec *vf, e2s_diag *diag)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    sh.sh_info != sfidx)
			continue;
		Elf_Data *rd = elf_getdata(scn, NULL);
		Elf_Scn *symscn = elf_getscn(e, sh.sh_link);
		Elf_Data *sd = symscn ? elf_getdata(symscn, NULL) : NULL;
		Elf_Data *xd = symscn ? cfi_gelf_xindex(e, sh.sh_link) : NULL;
		if (!rd || !sd || !sh.sh_entsize)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			uint32_t shndx;
			if (!gelf_getrela(rd, (int)i, &r) ||
			    !cfi_gelf_sym(sd, xd, GELF_R_SYM(r.r_info), &sym, &shndx) ||
			    !pcrel_type(machine, (unsigned)GELF_R_TYPE(r.r_info)) ||
			    r.r_offset >= size) {
				out->bad_relocs++;
				continue;
			}
			if (!e2s_vec_grow((void **)&out->fields, vf, sizeof *out->fields, 16))
				return e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);
			out->fields[vf->n++] = (sfr_relfield){
				.off = base + r.r_offset,
				.shndx = shndx,
				.value = sym.st_value + (uint64_t)r.r_addend,
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
static uint32_t group_of(Elf *e, size_t idx)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_GROUP)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		/* Word 0 is the flags; members follow (host order after
		 * libelf's translation). */
		const uint32_t *w = d->d_buf;
		for (size_t k = 1; k < d->d_size / 4; k++)
			if (w[k] == idx)
				return (uint32_t)elf_ndxscn(scn);
	}
	return 0;
}

/* By type and content, not by name alone (sfr_section_kind). */
static bool is_sframe(Elf *e, size_t shstr, Elf_Scn *scn, const GElf_Shdr *sh)
{
	const char *name;
	if (sh->sh_type == SFR_SHT_GNU_SFRAME)
		return true;
	if (sh->sh_type != SHT_PROGBITS)
		return false;
	name = elf_strptr(e, shstr, sh->sh_name);
	if (!name || strcmp(name, ".sframe") != 0)
		return false;
	Elf_Data *d = elf_rawdata(scn, NULL);
	return d && d->d_buf &&
	       sfr_section_kind(sh->sh_type, name, d->d_buf, d->d_size) ==
		       SFR_SEC_SFRAME;
}

static e2s_err add_part(sfr_elf *out, e2s_vec *vp, const void *bytes,
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
	out->parts[vp->n++] = (sfr_part){at, n, shndx, group};
	out->nparts = vp->n;
	return E2S_ERR_OK;
}

/* The image is only read during the call: what the result keeps (the
 * section bytes, the relocated fields) is copied out of it. */
e2s_err sfr_elf_read_mem(const void *img, size_t size, sfr_elf *out,
			 e2s_diag *diag)
{
	e2s_err err = E2S_ERR_OK;
	Elf *e = NULL;
	size_t shstr = 0, nph = 0;
	GElf_Ehdr eh;
	e2s_vec vp = {0, 0}, vf = {0, 0};

	memset(out, 0, sizeof *out);
	if (elf_version(EV_CURRENT) == EV_NONE)
		return e2s_fail(diag, E2S_ERR_LIBELF, NULL, 0, "%s", elf_errmsg(-1));
	/* elf_memory takes a non-const image but only reads it
	 * (ELF_C_READ_MMAP_PRIVATE; conversions go to libelf's buffers). */
	if (img && size)
		e = elf_memory((char *)(uintptr_t)img, size);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		err = e2s_fail(diag, E2S_ERR_NOT_ELF, NULL, 0, NULL);
		goto out;
	}
	out->relocatable = eh.e_type == ET_REL;
	if (elf_getshdrstrndx(e, &shstr) == 0) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || !is_sframe(e, shstr, scn, &sh))
				continue;
			Elf_Data *d = elf_rawdata(scn, NULL);
			size_t idx = elf_ndxscn(scn);
			if (!d || !d->d_buf || d->d_size == 0) {
				err = e2s_fail(diag, E2S_ERR_BAD_ELF, ".sframe", 0,
					       "empty section");
				goto out;
			}
			uint64_t base = (out->size + 7) & ~(uint64_t)7;
			err = add_part(out, &vp, d->d_buf, d->d_size, (uint32_t)idx,
				       out->relocatable ? group_of(e, idx) : 0, diag);
			if (!err && out->relocatable)
				err = read_relas(e, idx, eh.e_machine, base,
						 d->d_size, out, &vf, diag);
			if (err)
				goto out;
			out->vaddr = sh.sh_addr;
			/* A linked file's starts are relative to its one
			 * section address: take the first only. */
			if (!out->relocatable)
				break;
		}
	}
	if (out->nparts) {
		if (out->relocatable) {
			out->vaddr = 0;
			out->nfields = vf.n;
			if (out->nfields) /* qsort(NULL, 0) is undefined */
				qsort(out->fields, out->nfields, sizeof *out->fields,
				      field_cmp);
		}
		goto out;
	}
	/* No section headers naming it: the segment. */
	if (elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != SFR_PT_GNU_SFRAME)
				continue;
			if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset ||
			    ph.p_filesz == 0) {
				err = e2s_fail(diag, E2S_ERR_BAD_ELF, NULL, 0,
					       "SFR_PT_GNU_SFRAME outside the file");
				goto out;
			}
			err = add_part(out, &vp, (const uint8_t *)img + ph.p_offset,
				       ph.p_filesz, 0, 0, diag);
			out->vaddr = ph.p_vaddr;
			goto out;
		}
	}
	err = e2s_fail(diag, E2S_ERR_BAD_SFRAME, NULL, 0, "no .sframe section");
out:
	if (err)
		sfr_elf_free(out);
	if (e)
		elf_end(e);
	return err;
}

e2s_err sfr_elf_read(const char *path, sfr_elf *out, e2s_diag *diag)
{
	struct stat st;
	uint8_t *buf = NULL;
	void *map = MAP_FAILED;
	size_t size = 0;
	e2s_err err;

	memset(out, 0, sizeof *out);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return e2s_fail(diag, E2S_ERR_IO, NULL, 0, "cannot open");
	/* Anything but a non-empty regular file is not an ELF file to
	 * libelf either (directories, empty files). */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SIZE_MAX / 2) {
		close(fd);
		return e2s_fail(diag, E2S_ERR_NOT_ELF, NULL, 0, NULL);
	}
	size = (size_t)st.st_size;
	/* Mapped, so only the pages of the headers and sections read are
	 * touched; read into memory where mapping fails. */
	map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		err = e2s_read_whole(fd, size, &buf, diag);
		close(fd);
		if (err)
			return err;
		err = sfr_elf_read_mem(buf, size, out, diag);
		free(buf);
		return err;
	}
	close(fd);
	err = sfr_elf_read_mem(map, size, out, diag);
	munmap(map, size);
	return err;
}

e2s_err sfr_elf_decode(const sfr_elf *e, sfr_section *out, e2s_diag *diag)
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

void sfr_elf_free(sfr_elf *e)
{
	free(e->data);
	free(e->parts);
	free(e->fields);
	memset(e, 0, sizeof *e);
}
