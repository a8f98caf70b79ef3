/* Find and read the .sframe bytes of an ELF file (libelf). */
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sfr.h"
#include "sframe_fmt.h"

#ifndef R_390_PC64
#define R_390_PC64 23
#endif

/* ET_REL: apply the 64-bit PC-relative relocations of the function start
 * fields (the only relocations an .sframe has), so starts read as
 * section-relative addresses like objdump shows them. */
static void apply_relas(Elf *e, size_t sfidx, const GElf_Ehdr *eh,
			uint8_t *data, size_t size)
{
	Elf_Scn *scn = NULL;
	bool be = eh->e_ident[EI_DATA] == ELFDATA2MSB;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    sh.sh_info != sfidx)
			continue;
		Elf_Data *rd = elf_getdata(scn, NULL);
		Elf_Scn *symscn = elf_getscn(e, sh.sh_link);
		Elf_Data *sd = symscn ? elf_getdata(symscn, NULL) : NULL;
		if (!rd || !sd || !sh.sh_entsize)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			if (!gelf_getrela(rd, (int)i, &r) ||
			    !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sym))
				continue;
			unsigned t = (unsigned)GELF_R_TYPE(r.r_info);
			bool pc64 = (eh->e_machine == EM_X86_64 && t == R_X86_64_PC64) ||
				    (eh->e_machine == EM_AARCH64 && t == R_AARCH64_PREL64) ||
				    (eh->e_machine == EM_S390 && t == R_390_PC64);
			if (!pc64 || r.r_offset > size || size - r.r_offset < 8)
				continue;
			uint64_t v = sym.st_value + (uint64_t)r.r_addend - r.r_offset;
			for (unsigned k = 0; k < 8; k++)
				data[r.r_offset + k] =
					(uint8_t)(v >> (be ? 8 * (7 - k) : 8 * k));
		}
	}
}

e2s_err sfr_read_elf(const char *path, uint8_t **data, size_t *size,
		     uint64_t *vaddr, e2s_diag *diag)
{
	e2s_err err = E2S_ERR_OK;
	Elf *e = NULL;
	int fd;
	size_t shstr = 0, nph = 0;
	GElf_Ehdr eh;
	*data = NULL;
	*size = 0;
	*vaddr = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return e2s_fail(diag, E2S_ERR_LIBELF, NULL, 0, "%s", elf_errmsg(-1));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return e2s_fail(diag, E2S_ERR_IO, NULL, 0, "cannot open");
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		err = e2s_fail(diag, E2S_ERR_NOT_ELF, NULL, 0, NULL);
		goto out;
	}
	Elf_Scn *scn = NULL, *found = NULL;
	GElf_Shdr fsh;
	if (elf_getshdrstrndx(e, &shstr) == 0) {
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			const char *name;
			if (!gelf_getshdr(scn, &sh))
				continue;
			name = elf_strptr(e, shstr, sh.sh_name);
			if (sh.sh_type == SHT_GNU_SFRAME ||
			    (name && strcmp(name, ".sframe") == 0 && sh.sh_type != SHT_NOBITS)) {
				found = scn;
				fsh = sh;
				break;
			}
		}
	}
	if (found) {
		Elf_Data *d = elf_rawdata(found, NULL);
		if (!d || !d->d_buf || d->d_size == 0) {
			err = e2s_fail(diag, E2S_ERR_BAD_ELF, ".sframe", 0, "empty section");
			goto out;
		}
		*data = malloc(d->d_size);
		if (!*data) {
			err = e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);
			goto out;
		}
		memcpy(*data, d->d_buf, d->d_size);
		*size = d->d_size;
		*vaddr = fsh.sh_addr;
		if (eh.e_type == ET_REL)
			apply_relas(e, elf_ndxscn(found), &eh, *data, *size);
		goto out;
	}
	/* No section headers naming it: the segment. */
	if (elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			size_t fsize = 0;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_GNU_SFRAME)
				continue;
			char *img = elf_rawfile(e, &fsize);
			if (!img || ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset ||
			    ph.p_filesz == 0) {
				err = e2s_fail(diag, E2S_ERR_BAD_ELF, NULL, 0,
					       "PT_GNU_SFRAME outside the file");
				goto out;
			}
			*data = malloc(ph.p_filesz);
			if (!*data) {
				err = e2s_fail(diag, E2S_ERR_NOMEM, NULL, 0, NULL);
				goto out;
			}
			memcpy(*data, img + ph.p_offset, ph.p_filesz);
			*size = ph.p_filesz;
			*vaddr = ph.p_vaddr;
			goto out;
		}
	}
	err = e2s_fail(diag, E2S_ERR_BAD_SFRAME, NULL, 0, "no .sframe section");
out:
	if (e)
		elf_end(e);
	close(fd);
	return err;
}
