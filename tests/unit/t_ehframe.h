/* A tiny .eh_frame writer for tests (the tests' own, not the library's):
 * a "zR" CIE and FDEs with pc-relative sdata4 pointers, either byte
 * order, and the eh2s_cfi_input describing the result. */
#ifndef T_EHFRAME_H
#define T_EHFRAME_H

#include <stdint.h>
#include <string.h>

#include "eh2sframe.h"

typedef struct {
	uint8_t b[512];
	size_t n;
	int be;
} ebuf;

static inline void put(ebuf *e, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size; i++) {
		unsigned sh = e->be ? 8 * (size - 1 - i) : 8 * i;
		e->b[e->n++] = (uint8_t)(v >> sh);
	}
}

static inline void bytes(ebuf *e, const void *p, size_t n)
{
	memcpy(e->b + e->n, p, n);
	e->n += n;
}

/* Pad the record started at `start` (its length field) with DW_CFA_nop
 * to a multiple of 4 and fill in its length. */
static inline void close_record(ebuf *e, size_t start)
{
	while ((e->n - start) % 4)
		e->b[e->n++] = 0;
	uint64_t len = e->n - start - 4;
	int be = e->be;
	for (unsigned i = 0; i < 4; i++)
		e->b[start + i] =
			(uint8_t)(len >> (be ? 8 * (3 - i) : 8 * i));
}

/* CIE "zR", pointers pcrel|sdata4, with the given code/data alignment
 * (single-byte LEBs), RA column and initial instructions. */
static inline void cie(ebuf *e, uint8_t caf, uint8_t daf, uint8_t ra,
		const uint8_t *init, size_t ninit)
{
	size_t start = e->n;
	put(e, 0, 4);          /* length, filled later */
	put(e, 0, 4);          /* CIE id */
	put(e, 1, 1);          /* version */
	bytes(e, "zR", 3);
	put(e, caf, 1);
	put(e, daf, 1);
	put(e, ra, 1);
	put(e, 1, 1);          /* augmentation data length */
	put(e, 0x1b, 1);       /* DW_EH_PE_pcrel | DW_EH_PE_sdata4 */
	bytes(e, init, ninit);
	close_record(e, start);
}

/* FDE for [func, func+size) against the CIE at offset 0; the section
 * is at sec_addr. */
static inline void fde(ebuf *e, uint64_t sec_addr, uint64_t func, uint32_t size,
		const uint8_t *insn, size_t ninsn)
{
	size_t start = e->n;
	put(e, 0, 4);
	put(e, e->n, 4);                          /* CIE pointer: back to 0 */
	put(e, (uint32_t)(func - (sec_addr + e->n)), 4); /* pcrel */
	put(e, size, 4);
	put(e, 0, 1);                             /* augmentation data */
	bytes(e, insn, ninsn);
	close_record(e, start);
}

static inline eh2s_cfi_input input(const ebuf *e, unsigned machine, uint64_t addr)
{
	eh2s_cfi_input in;
	eh2s_cfi_input_init(&in);
	in.machine = machine;
	in.big_endian = e->be;
	in.kind = EH2S_CFI_EH_FRAME;
	in.data = e->b;
	in.data_size = e->n;
	in.addr = addr;
	return in;
}

#endif
