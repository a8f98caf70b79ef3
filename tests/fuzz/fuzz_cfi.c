/* Fuzz target: CFI section bytes -> parse + interpret -> dump -> SFrame
 * projection and encoding -> decode with our reader -> verify against
 * the rows. The first byte picks the section kind, byte order, address
 * size, ABI, whether DW_EH_PE_indirect reads succeed (bit 5), FRE sharing
 * (bit 6) and SFrame V2 output (bit 7); the rest is the section.
 *
 * Oracles (a failure aborts): the encoder keeps its size promise; what it
 * writes decodes, every FRE's rules are recoverable, verification finds
 * no mismatching and no extra function (the independent verifier, from
 * the section's records), and the streaming projection
 * (cfi_parse_stream + conv_stream_*) encodes to the same bytes, with its
 * caches on and off alike (the same bytes and the same outcome per FDE:
 * issue #32). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_check.h"
#include "elf/elfr_cfi.h"
#include "convert/convert.h"
#include "elf/elfr_sframe.h"
#include "verify/vf.h"
#include "sframe/sfr_spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SEC_VADDR 0x401000u
#define SF_VADDR 0x800000u
/* Indirect pointers read from the section itself (addresses relative to
 * SEC_VADDR), so the fuzzer can steer them. */
static bool read_mem(void *ctx, uint64_t vaddr, unsigned size, uint64_t *out)
{
	const cfi_section *sec = ctx;
	if (vaddr < SEC_VADDR || vaddr - SEC_VADDR > sec->size ||
	    sec->size - (vaddr - SEC_VADDR) < size || size > 8)
		return false;
	const uint8_t *p = sec->data + (vaddr - SEC_VADDR);
	uint64_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)p[sec->big_endian ? size - 1 - i : i] << (8 * i);
	*out = v;
	return true;
}

static FILE *devnull(void)
{
	static FILE *null; /* one stream for the whole run */
	if (!null)
		null = fopen("/dev/null", "w");
	return null;
}

static void check_encoding(const cfi_section *sec, abi_id abi,
			   const uint8_t *bytes, size_t len)
{
	sfr_section s;
	e2s_diag d;
	if (sfr_decode(bytes, len, SF_VADDR, &s, &d) != E2S_ERR_OK)
		FUZZ_FAIL_DIAG("our encoder wrote what our reader rejects", &d);
	for (size_t i = 0; i < s.nfdes; i++) {
		const sfr_fde *f = &s.fdes[i];
		for (uint32_t j = 0; j < f->nfres; j++) {
			sfr_rules r;
			if (sfr_recover(&s, f, &s.fres[f->fre_first + j], &r,
					&d) != E2S_ERR_OK)
				FUZZ_FAIL_DIAG("undefined word layout", &d);
		}
	}
	FILE *null = devnull();
	if (null)
		sfr_dump(null, &s);
	cfi_table rt;
	vf_counts c;
	if (cfi_parse_records(sec, abi, &rt, &d) != E2S_ERR_OK)
		FUZZ_FAIL_DIAG("records unreadable where cfi_parse passed", &d);
	if (fuzz_mask_small(&s) &&
	    vf_verify(sec, &rt, &s, NULL, NULL, &c, &d) == E2S_ERR_OK &&
	    (c.mismatch || c.extra))
		FUZZ_FAIL("the verifier disagrees with what was encoded");
	cfi_table_free(&rt);
	sfr_free(&s);
}

/* The streaming projection (rows one by one and never kept), its
 * caches on or off (conv_stream_caches): the set, its verdicts and its
 * encoding (*e: the encoder's result, or E2S_ERR_NO_FUNCS; w: its bytes
 * when OK). false if the stream could not be made (out of memory). */
static bool stream_encode(const cfi_section *sec, abi_id abi,
			  const sfe_encode_opts *o, bool caches, sfe_set *set,
			  conv_verdicts *v, bw_t *w, e2s_err *e)
{
	conv_stream *st;
	cfi_table t;
	e2s_diag d;
	if (conv_stream_new(&st, o->sframe_version) != E2S_ERR_OK)
		return false;
	conv_stream_caches(st, caches);
	/* Rows one by one as the interpreter makes them, with the look
	 * before each program (conv_stream_pre): with the caches on, FDEs
	 * repeating an earlier program take its outcome. */
	cfi_sink k = {conv_stream_pre, conv_stream_row, conv_stream_fde, st,
		      conv_stream_room};
	if (cfi_parse_sink(sec, abi, &k, &t, &d) != E2S_ERR_OK)
		FUZZ_FAIL_DIAG("streaming parse fails where cfi_parse passed", &d);
	if (conv_stream_finish(st, &t, set, v, &d) != E2S_ERR_OK)
		FUZZ_FAIL_DIAG("streaming projection fails", &d);
	if (v->nfdes != t.nfdes)
		FUZZ_FAIL("streaming projection: an outcome per FDE");
	bw_init(w, sec->big_endian);
	*e = set->nfuncs ? sfe_encode(set, o, w, NULL, NULL, &d)
			 : E2S_ERR_NO_FUNCS;
	cfi_table_free(&t);
	conv_stream_free(st);
	return true;
}

static bool same_verdicts(const conv_verdicts *a, const conv_verdicts *b)
{
	return a->nfdes == b->nfdes &&
	       memcmp(a->counts, b->counts, sizeof a->counts) == 0 &&
	       (!a->nfdes || memcmp(a->fde_skip, b->fde_skip, a->nfdes) == 0);
}

/* The streaming projection with its caches (repeated programs taken
 * from the first, first rows from the CIE's, CFA-only rows from the row
 * before) must give the same bytes and verdicts as conv_project on the
 * full table (the rules alone), and the same as itself with the caches
 * off: the same bytes, the same outcome (skip reason) for every FDE,
 * the same counts. */
static void check_stream(const cfi_section *sec, abi_id abi,
			 const sfe_encode_opts *o, const bw_t *batch,
			 const conv_verdicts *bv)
{
	sfe_set on, off;
	conv_verdicts von, voff;
	bw_t w_on, w_off;
	e2s_err e_on, e_off;
	if (!stream_encode(sec, abi, o, true, &on, &von, &w_on, &e_on))
		return;
	if ((e_on == E2S_ERR_OK) != (batch != NULL) ||
	    (batch && (w_on.len != batch->len ||
		       memcmp(w_on.data, batch->data, w_on.len))))
		FUZZ_FAIL("streaming and batch projections differ");
	if (!same_verdicts(&von, bv))
		FUZZ_FAIL("streaming and batch verdicts differ");
	if (!stream_encode(sec, abi, o, false, &off, &voff, &w_off, &e_off)) {
		bw_free(&w_on);
		sfe_set_free(&on);
		conv_verdicts_free(&von);
		return;
	}
	if (e_on != e_off || w_on.len != w_off.len ||
	    (w_on.len && memcmp(w_on.data, w_off.data, w_on.len)))
		FUZZ_FAIL("caches on and off encode differently");
	if (on.nfuncs != off.nfuncs || on.nfres != off.nfres ||
	    !same_verdicts(&von, &voff))
		FUZZ_FAIL("caches on and off: different outcomes");
	bw_free(&w_on);
	bw_free(&w_off);
	sfe_set_free(&on);
	sfe_set_free(&off);
	conv_verdicts_free(&von);
	conv_verdicts_free(&voff);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t sel = data[0];
	cfi_section sec;
	memset(&sec, 0, sizeof sec);
	sec.kind = (sel & 1) ? CFI_SEC_DEBUG_FRAME : CFI_SEC_EH_FRAME;
	sec.big_endian = (sel >> 1) & 1;
	sec.addr_size = (sel & 4) ? 4 : 8;
	sec.data = data + 1;
	sec.size = size - 1;
	sec.vaddr = SEC_VADDR;
	sec.text_base = 0x400000;
	sec.data_base = 0x600000;
	if (sel & 0x20) {
		sec.read_mem = read_mem;
		sec.read_mem_ctx = &sec;
	}
	abi_id abi = (abi_id)((sel >> 3) & 3);
	/* SFrame ABI ids fix the byte order of amd64 and s390x. */
	if (abi == ABI_AMD64)
		sec.big_endian = false;
	else if (abi == ABI_S390X)
		sec.big_endian = true;

	cfi_table t;
	e2s_diag d;
	if (cfi_parse(&sec, abi, &t, &d) != E2S_ERR_OK)
		return 0;
	FILE *null = devnull();
	if (null) {
		cfi_dump(null, &t);
		for (size_t i = 0; i < t.nfdes; i++)
			if (t.fdes[i].status != E2S_ERR_OK) {
				char msg[300];
				cfi_fde_diag(&t, &t.fdes[i], &d);
				e2s_diag_format(&d, msg, sizeof msg);
				fprintf(null, "%s\n", msg);
			}
	}
	sfe_set set;
	conv_verdicts v;
	sfe_encode_opts o = {.section_vaddr = SF_VADDR,
			     .share_fres = (sel >> 6) & 1,
			     .sframe_version = (sel & 0x80) ? 2 : 3};
	if (abi != ABI_UNKNOWN &&
	    conv_project(&t, o.sframe_version, &set, &v, &d) == E2S_ERR_OK) {
		bw_t w;
		bool ok = false;
		bw_init(&w, sec.big_endian);
		if (set.nfuncs) {
			if (sfe_encode(&set, &o, &w, NULL, NULL, &d) == E2S_ERR_OK) {
				if (w.len != sfe_encoded_size(&set, &o))
					FUZZ_FAIL("layout promise broken");
				check_encoding(&sec, abi, w.data, w.len);
				ok = true;
			}
		}
		check_stream(&sec, abi, &o, ok ? &w : NULL, &v);
		bw_free(&w);
		sfe_set_free(&set);
		conv_verdicts_free(&v);
	}
	cfi_table_free(&t);
	return 0;
}
