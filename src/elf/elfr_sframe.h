/* The .sframe bytes of an ELF file (elfr_sframe.c), for the decoder of
 * src/sframe. */
#ifndef E2S_SFR_FILE_H
#define E2S_SFR_FILE_H

#include "../sframe/sfr.h"

/* The .sframe bytes of an ELF file. Linked files: the first SFrame
 * section (SFR_SEC_SFRAME), else the PT_GNU_SFRAME segment.
 * ET_REL: every such section (one per COMDAT group is common), each
 * padded to 8 bytes and concatenated (one "part" each), with the
 * function start fields resolved from their .rela sections. */
typedef struct {
	uint64_t off, size;   /* in data */
	uint32_t shndx;       /* the .sframe section's index (0: segment) */
	uint32_t group;       /* ET_REL: SHT_GROUP section holding it, or 0 */
} elfr_sframe_part;

typedef struct {
	uint8_t *data;
	size_t size;
	uint64_t vaddr;
	bool relocatable;
	elfr_sframe_part *parts;
	size_t nparts;
	sfr_relfield *fields; /* sorted by off */
	size_t nfields;
	size_t bad_relocs;    /* relocations of a type other than PC64 */
} elfr_sframe;

/* The same from an ELF image in memory, borrowed for the call only (out
 * keeps copies): in-memory callers need no temporary file. */
e2s_err elfr_sframe_read_mem(const void *img, size_t size, elfr_sframe *out,
			 e2s_diag *diag);
/* The same for the file at path (mapped, or read where mapping fails);
 * anything but a regular file is NOT_ELF. */
e2s_err elfr_sframe_read(const char *path, elfr_sframe *out, e2s_diag *diag);
/* sfr_decode / sfr_decode_rel of what elfr_sframe_read found; blocks get
 * their part. */
e2s_err elfr_sframe_decode(const elfr_sframe *e, sfr_section *out, e2s_diag *diag);
void elfr_sframe_free(elfr_sframe *e);

#endif
