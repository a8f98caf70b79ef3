/* Fuzz target: arbitrary bytes as an .sframe section -> our decoder
 * (sfr.h) -> dump -> rule recovery of every FRE -> FRE lookups at the
 * edges and middle of every function and at PCs taken from the input.
 * Nothing may crash or read out of bounds. Oracle (traps): a lookup that
 * succeeds returns an FRE of the FDE it names, and the FDE covers pc. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_check.h"
#include "elf/elfr_sframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SF_VADDR 0x800000u

static FILE *devnull(void)
{
	static FILE *null; /* one stream for the whole run */
	if (!null)
		null = fopen("/dev/null", "w");
	return null;
}

static void lookup(const sfr_section *s, uint64_t pc)
{
	size_t fi, ri;
	if (!sfr_find_fre(s, pc, &fi, &ri))
		return;
	if (fi >= s->nfdes || ri >= s->nfres)
		FUZZ_FAIL("lookup index out of range");
	const sfr_fde *f = &s->fdes[fi];
	if (ri < f->fre_first || ri - f->fre_first >= f->nfres)
		FUZZ_FAIL("FRE of another function");
	if (pc < f->pc || pc - f->pc >= f->size)
		FUZZ_FAIL("function does not cover pc");
	sfr_rules r;
	e2s_diag d;
	(void)sfr_recover(s, f, &s->fres[ri], &r, &d);
}

static void lookup_sec(const sfr_section *s, uint32_t shndx, uint64_t pc)
{
	size_t fi, ri;
	if (!sfr_find_fre_sec(s, shndx, pc, &fi, &ri))
		return;
	const sfr_fde *f = &s->fdes[fi];
	if (f->shndx != shndx || pc < f->pc || pc - f->pc >= f->size ||
	    ri < f->fre_first || ri - f->fre_first >= f->nfres)
		FUZZ_FAIL("section lookup returned a wrong FRE");
}

/* The same bytes as a relocatable section: relocation fields at the
 * start fields the linked decode found (some moved, some missing), with
 * section indices and values derived from the input. */
static void rel_pass(const uint8_t *data, size_t size, const sfr_section *ls)
{
	sfr_relfield rf[64];
	size_t n = 0;
	for (size_t i = 0; i < ls->nfdes && n < 64; i++) {
		const sfr_fde *f = &ls->fdes[i];
		uint8_t k = data[(f->field_off + 7) % size];
		if (k % 5 == 4)
			continue; /* field without a relocation */
		rf[n].off = f->field_off + (k % 5 == 3 ? k % 8 : 0);
		rf[n].shndx = k & 3;
		rf[n].value = (uint64_t)f->start_field & 0xffff;
		if (n && rf[n].off <= rf[n - 1].off)
			continue; /* keep them sorted by off */
		n++;
	}
	sfr_section s;
	e2s_diag d;
	if (sfr_decode_rel(data, size, rf, n, &s, &d) != E2S_ERR_OK)
		return;
	FILE *null = devnull();
	if (null)
		sfr_dump(null, &s);
	for (size_t i = 0; i < s.nfdes && i < 256; i++) {
		const sfr_fde *f = &s.fdes[i];
		lookup_sec(&s, f->shndx, f->pc);
		lookup_sec(&s, f->shndx, f->pc + f->size - 1);
		lookup_sec(&s, f->shndx + 1, f->pc);
	}
	sfr_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sfr_section s;
	e2s_diag d;
	if (sfr_decode(data, size, SF_VADDR, &s, &d) != E2S_ERR_OK)
		return 0;
	FILE *null = devnull();
	if (null)
		sfr_dump(null, &s);
	size_t nf = s.nfdes < 256 ? s.nfdes : 256; /* keep each run fast */
	for (size_t i = 0; i < nf; i++) {
		const sfr_fde *f = &s.fdes[i];
		for (uint32_t j = 0; j < f->nfres && j < 256; j++) {
			sfr_rules r;
			char buf[64];
			if (f->fre_first + j >= s.nfres)
				FUZZ_FAIL("FDE names FREs not decoded");
			if (sfr_recover(&s, f, &s.fres[f->fre_first + j], &r,
					&d) == E2S_ERR_OK) {
				sfr_loc_str(&r.ra, buf, sizeof buf);
				sfr_loc_str(&r.fp, buf, sizeof buf);
			}
		}
		lookup(&s, f->pc);
		lookup(&s, f->pc - 1);
		lookup(&s, f->pc + f->size / 2);
		lookup(&s, f->pc + f->size - 1);
		lookup(&s, f->pc + f->size);
	}
	/* PCs the fuzzer controls: the last 8-byte words of the input. */
	for (size_t k = 0; k < 4 && size >= 8 * (k + 1); k++) {
		uint64_t pc;
		memcpy(&pc, data + size - 8 * (k + 1), 8);
		lookup(&s, pc);
		lookup(&s, SF_VADDR + (pc & 0xffff));
	}
	lookup(&s, 0);
	lookup(&s, UINT64_MAX);
	rel_pass(data, size, &s);
	sfr_free(&s);
	return 0;
}
