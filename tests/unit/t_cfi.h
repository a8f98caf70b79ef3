/* Byte builders for unit tests: a small .eh_frame assembler (one CIE
 * with augmentation "zR" and pc-relative sdata4 addresses, FDEs after
 * it) and a raw byte buffer with explicit byte order, for hand-built
 * .sframe sections too. */
#ifndef T_CFI_H
#define T_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
	uint8_t b[8192];
	size_t n;
	bool be;
} tbuf;

static inline void tb_u8(tbuf *t, unsigned v)
{
	if (t->n < sizeof t->b)
		t->b[t->n++] = (uint8_t)v;
}

static inline void tb_uN(tbuf *t, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		tb_u8(t, (unsigned)(v >> (8 * (t->be ? n - 1 - i : i))));
}

static inline void tb_bytes(tbuf *t, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tb_u8(t, p[i]);
}

static inline void tb_uleb(tbuf *t, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		tb_u8(t, c | (v ? 0x80 : 0));
	} while (v);
}

static inline void tb_sleb(tbuf *t, int64_t v)
{
	for (;;) {
		uint8_t c = v & 0x7f;
		v >>= 7; /* arithmetic shift for negative values */
		bool done = (v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40));
		tb_u8(t, c | (done ? 0 : 0x80));
		if (done)
			return;
	}
}

static inline void tb_put32_at(tbuf *t, size_t at, uint32_t v)
{
	for (unsigned i = 0; i < 4; i++)
		t->b[at + i] = (uint8_t)(v >> (8 * (t->be ? 3 - i : i)));
}

/* Pad the record that started at `start` to 8 bytes with DW_CFA_nop and
 * fill in its length. */
static inline void tb_close_record(tbuf *t, size_t start)
{
	while ((t->n - start) % 8)
		tb_u8(t, 0);
	tb_put32_at(t, start, (uint32_t)(t->n - start - 4));
}

/* A CIE at the start of t: version 1, "zR", FDE pointers pcrel|sdata4.
 * Returns its offset. "S" (signal) via signal. */
static inline size_t tb_cie(tbuf *t, unsigned code_align, int data_align,
			    unsigned ra, bool signal, const uint8_t *ins,
			    size_t nins)
{
	size_t start = t->n;
	tb_uN(t, 0, 4);
	tb_uN(t, 0, 4); /* CIE id */
	tb_u8(t, 1);
	tb_bytes(t, (const uint8_t *)(signal ? "zRS" : "zR"), signal ? 4 : 3);
	tb_uleb(t, code_align);
	tb_sleb(t, data_align);
	tb_uleb(t, ra);
	tb_uleb(t, 1);
	tb_u8(t, 0x1b); /* DW_EH_PE_pcrel | DW_EH_PE_sdata4 */
	tb_bytes(t, ins, nins);
	tb_close_record(t, start);
	return start;
}

/* An FDE for [begin, begin+range) with the CIE at cie_off; the section
 * is at vaddr. */
static inline void tb_fde(tbuf *t, uint64_t vaddr, size_t cie_off,
			  uint64_t begin, uint32_t range, const uint8_t *ins,
			  size_t nins)
{
	size_t start = t->n;
	tb_uN(t, 0, 4);
	tb_uN(t, t->n - cie_off, 4); /* back to the CIE from this field */
	tb_uN(t, (uint32_t)(begin - (vaddr + t->n)), 4);
	tb_uN(t, range, 4);
	tb_uleb(t, 0); /* augmentation data length */
	tb_bytes(t, ins, nins);
	tb_close_record(t, start);
}

#endif
