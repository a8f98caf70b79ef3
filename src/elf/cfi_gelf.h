/* libelf helpers shared by the modules that read symbol tables. */
#ifndef E2S_CFI_GELF_H
#define E2S_CFI_GELF_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

/* The SHT_SYMTAB_SHNDX data of symbol table symndx, or NULL: symbols
 * defined in sections numbered SHN_LORESERVE and above say SHN_XINDEX
 * and keep their real section index there. */
Elf_Data *cfi_gelf_xindex(Elf *elf, size_t symndx);

/* Symbol ndx of sd (xd from cfi_gelf_xindex, may be NULL) with its real
 * section index in *shndx. */
bool cfi_gelf_sym(Elf_Data *sd, Elf_Data *xd, size_t ndx, GElf_Sym *sym,
		  uint32_t *shndx);

#endif
