/* Synthetic cfi_table builder for the SFrame unit tests: one CIE, FDEs
 * appended with their rows, no section bytes behind them. */
#ifndef SFE_SYNTH_H
#define SFE_SYNTH_H

#include <stdlib.h>
#include <string.h>

#include "elf/elfr_cfi.h"

typedef struct {
	cfi_table t;
	cfi_cie cie[2]; /* 0: plain, 1: signal + B key */
	cfi_fde fde[16];
	cfi_reloc_ref rel[16]; /* t.relocs once synth_rel is called */
	cfi_row row[64];
} synth;

static inline void synth_init(synth *s, abi_id abi, bool be)
{
	memset(s, 0, sizeof *s);
	s->t.abi = abi;
	s->t.big_endian = be;
	s->t.cies = s->cie;
	s->t.ncies = 2;
	s->t.fdes = s->fde;
	s->t.rows = s->row;
	s->cie[1].signal_frame = true;
	s->cie[1].pauth_b_key = true;
	s->cie[0].ra_reg = s->cie[1].ra_reg = abi_get(abi)->ra;
}

static inline cfi_fde *synth_fde(synth *s, uint64_t begin, uint64_t range,
				 uint32_t cie)
{
	cfi_fde *f = &s->fde[s->t.nfdes++];
	memset(f, 0, sizeof *f);
	f->cie = cie;
	f->pc_begin = begin;
	f->pc_range = range;
	f->row_first = (uint32_t)s->t.nrows;
	return f;
}

/* The last FDE's relocation (the table becomes one with relocations). */
static inline cfi_reloc_ref *synth_rel(synth *s)
{
	s->t.relocs = s->rel;
	return &s->rel[s->t.nfdes - 1];
}

/* Append a row to the last FDE, starting at start; closes the previous
 * row and runs to the FDE end. CFA = reg + off. */
static inline cfi_row *synth_row(synth *s, uint64_t start, uint16_t reg,
				 int64_t off)
{
	cfi_fde *f = &s->fde[s->t.nfdes - 1];
	cfi_row *r = &s->row[s->t.nrows++];
	memset(r, 0, sizeof *r);
	if (f->row_count)
		r[-1].end = start;
	f->row_count++;
	r->start = start;
	r->end = f->pc_begin + f->pc_range;
	r->cfa.kind = CFI_CFA_REG_OFF;
	r->cfa.reg = reg;
	r->cfa.off = off;
	return r;
}

static inline cfi_rule rule_off(int64_t off)
{
	cfi_rule r;
	memset(&r, 0, sizeof r);
	r.kind = CFI_RULE_OFFSET;
	r.off = off;
	return r;
}

static inline cfi_rule rule_kind(cfi_rule_kind k, uint16_t reg)
{
	cfi_rule r;
	memset(&r, 0, sizeof r);
	r.kind = (uint8_t)k;
	r.reg = reg;
	return r;
}

static inline cfi_rule rule_breg(cfi_rule_kind k, uint16_t reg, int64_t off)
{
	cfi_rule r;
	memset(&r, 0, sizeof r);
	r.kind = (uint8_t)k;
	r.expr.shape = CFI_EXPR_BREG;
	r.expr.reg = reg;
	r.expr.off = off;
	return r;
}

#endif
