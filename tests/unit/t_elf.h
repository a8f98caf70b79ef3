/* Hand-built ELF files for the unit tests of the readers: either class
 * and byte order, optional program headers, optional extended numbering
 * (every count in section 0), laid out per the ELF gABI. */
#ifndef E2S_T_ELF_H
#define E2S_T_ELF_H

#include <elf.h>
#include <string.h>

#include "common/buf.h"
#include "elf/elf_file.h"

/* Section i + 1 of t_build_elf; .shstrtab follows the last. */
typedef struct {
	const char *name;
	uint32_t type;
	uint64_t flags;
	const void *data;   /* size bytes (none written for SHT_NOBITS) */
	size_t size;
	uint32_t link, info;
	uint64_t entsize;
	uint64_t addr, align; /* align 0: 1 */
} t_sec;

typedef struct {
	bool is64, be;
	bool ext;           /* extended numbering */
	uint16_t type, machine;
	uint64_t entry;
	const elfr_phdr *ph;
	size_t nph;
} t_shape;

static inline void t_word(bw_t *w, bool is64, uint64_t v)
{
	bw_uN(w, v, is64 ? 8 : 4);
}

/* The file: the ELF header, its program headers, sections 1..n (each
 * 8-aligned), .shstrtab, the section headers. */
static inline void t_build_elf(bw_t *w, const t_shape *sh, const t_sec *secs,
			       size_t n)
{
	bool is64 = sh->is64;
	uint8_t ident[EI_NIDENT] = {0x7f, 'E', 'L', 'F',
				    is64 ? ELFCLASS64 : ELFCLASS32,
				    sh->be ? ELFDATA2MSB : ELFDATA2LSB,
				    EV_CURRENT};
	unsigned ehsz = is64 ? 64 : 52, phsz = is64 ? 56 : 32,
		 shsz = is64 ? 64 : 40;
	size_t off[16], name_off[16], total = n + 2;
	bw_t names;
	bw_init(&names, sh->be);
	bw_u8(&names, 0);
	for (size_t i = 0; i < n; i++) {
		name_off[i] = names.len;
		bw_bytes(&names, secs[i].name, strlen(secs[i].name) + 1);
	}
	size_t shstr_name = names.len;
	bw_bytes(&names, ".shstrtab", 10);

	bw_init(w, sh->be);
	bw_bytes(w, ident, sizeof ident);
	bw_u16(w, sh->type);
	bw_u16(w, sh->machine);
	bw_u32(w, EV_CURRENT);
	t_word(w, is64, sh->entry);
	t_word(w, is64, sh->nph ? ehsz : 0);
	size_t shoff_at = w->len;
	t_word(w, is64, 0);
	bw_u32(w, 0);
	bw_u16(w, (uint16_t)ehsz);
	bw_u16(w, (uint16_t)phsz);
	bw_u16(w, sh->ext ? PN_XNUM : (uint16_t)sh->nph);
	bw_u16(w, (uint16_t)shsz);
	bw_u16(w, sh->ext ? 0 : (uint16_t)total);
	bw_u16(w, sh->ext ? SHN_XINDEX : (uint16_t)(n + 1));
	for (size_t i = 0; i < sh->nph; i++) {
		const elfr_phdr *p = &sh->ph[i];
		bw_u32(w, p->type);
		if (is64)
			bw_u32(w, p->flags);
		t_word(w, is64, p->offset);
		t_word(w, is64, p->vaddr);
		t_word(w, is64, p->paddr);
		t_word(w, is64, p->filesz);
		t_word(w, is64, p->memsz);
		if (!is64)
			bw_u32(w, p->flags);
		t_word(w, is64, p->align);
	}
	for (size_t i = 0; i < n; i++) {
		bw_zero(w, (8 - w->len % 8) % 8);
		off[i] = w->len;
		if (secs[i].type != SHT_NOBITS)
			bw_bytes(w, secs[i].data, secs[i].size);
	}
	size_t shstr_off = w->len;
	bw_bytes(w, names.data, names.len);
	bw_zero(w, (8 - w->len % 8) % 8);
	bw_put_uN(w, shoff_at, w->len, is64 ? 8 : 4);
	for (size_t i = 0; i < total; i++) {
		const t_sec *s = i && i <= n ? &secs[i - 1] : NULL;
		bool str = i == n + 1, ext0 = i == 0 && sh->ext;
		bw_u32(w, (uint32_t)(s ? name_off[i - 1] : str ? shstr_name : 0));
		bw_u32(w, s ? s->type : str ? SHT_STRTAB : SHT_NULL);
		t_word(w, is64, s ? s->flags : 0);
		t_word(w, is64, s ? s->addr : 0);
		t_word(w, is64, s ? off[i - 1] : str ? shstr_off : 0);
		t_word(w, is64, s ? s->size : str ? names.len : ext0 ? total : 0);
		bw_u32(w, s ? s->link : ext0 ? (uint32_t)(n + 1) : 0);
		bw_u32(w, s ? s->info : ext0 ? (uint32_t)sh->nph : 0);
		t_word(w, is64, s && s->align ? s->align : i ? 1 : 0);
		t_word(w, is64, s ? s->entsize : 0);
	}
	bw_free(&names);
}

/* A symbol of either class. */
static inline void t_sym(bw_t *w, bool is64, uint32_t name, uint8_t info,
			 uint16_t shndx, uint64_t value, uint64_t size)
{
	bw_u32(w, name);
	if (is64) {
		bw_u8(w, info);
		bw_u8(w, 0);
		bw_u16(w, shndx);
		bw_u64(w, value);
		bw_u64(w, size);
	} else {
		bw_u32(w, (uint32_t)value);
		bw_u32(w, (uint32_t)size);
		bw_u8(w, info);
		bw_u8(w, 0);
		bw_u16(w, shndx);
	}
}

#endif
