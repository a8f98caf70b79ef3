/* Public API: sections in memory, bytes in and bytes out
 * (eh2s_convert_section, eh2s_verify_section). For a linker that has
 * merged .eh_frame and places .sframe itself, or a JIT runtime that
 * builds .eh_frame for generated code: no file, no libelf, only the CFI
 * parser, the projection, the encoder and the reader. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../elf/cfi_file.h"
#include "../convert/convert.h"
#include "../verify/vf.h"
#include "../sframe/sfr_spec.h"
#include "api_int.h"

/* Adapts the public read_mem callback to the parser's. */
static bool read_mem_adapter(void *ctx, uint64_t addr, unsigned size,
			     uint64_t *out)
{
	const eh2s_cfi_input *in = ctx;
	return in->read_mem(in->read_mem_ctx, addr, size, out) == 0;
}

/* Check the caller's description of the input, copy it to *in (the
 * read_mem adapter's context: it must outlive the call) and turn it
 * into the parser's cfi_section; *abi gets the ABI. USAGE / UNSUPPORTED
 * with err filled. */
static eh2s_status describe(const eh2s_cfi_input *caller, eh2s_cfi_input *in,
			    cfi_section *sec, cfi_abi *abi, eh2s_error *err)
{
	if (!caller)
		return api_usage(err, EH2S_E_USAGE, "NULL CFI section");
	eh2s_status st = api_struct_in(caller,
				       API_END(eh2s_cfi_input, read_mem_ctx),
				       in, sizeof *in, "eh2s_cfi_input", err);
	if (st != EH2S_OK)
		return st;
	if (!in->data && in->data_size)
		return api_usage(err, EH2S_E_USAGE, "NULL CFI section");
	if (in->kind != EH2S_CFI_EH_FRAME && in->kind != EH2S_CFI_DEBUG_FRAME)
		return api_usage(err, EH2S_E_UNSUPPORTED,
				 "CFI kind must be EH2S_CFI_EH_FRAME or "
				 "EH2S_CFI_DEBUG_FRAME");
	*abi = cfi_abi_from_machine(in->machine);
	if (*abi == CFI_ABI_UNKNOWN) {
		char msg[96];
		snprintf(msg, sizeof msg,
			 "unsupported machine %u (x86-64, AArch64 and s390x "
			 "are)", in->machine);
		return api_usage(err, EH2S_E_UNSUPPORTED, msg);
	}
	const abi_desc *a = abi_get(*abi);
	if (!abi_sframe_id(a, in->big_endian)) {
		char msg[96];
		snprintf(msg, sizeof msg, "%s has no %s-endian SFrame ABI",
			 a->name, in->big_endian ? "big" : "little");
		return api_usage(err, EH2S_E_UNSUPPORTED, msg);
	}
	if (in->data_size == 0)
		return api_usage(err, EH2S_E_NO_CFI, "empty CFI section");
	memset(sec, 0, sizeof *sec);
	sec->kind = in->kind == EH2S_CFI_DEBUG_FRAME ? CFI_SEC_DEBUG_FRAME
						     : CFI_SEC_EH_FRAME;
	sec->data = in->data;
	sec->size = in->data_size;
	sec->big_endian = in->big_endian != 0;
	sec->addr_size = 8;
	sec->vaddr = in->addr;
	sec->text_base = in->text_base;
	sec->data_base = in->data_base;
	if (in->read_mem) {
		sec->read_mem = read_mem_adapter;
		sec->read_mem_ctx = (void *)in;
	}
	return EH2S_OK;
}

eh2s_status eh2s_convert_section(const eh2s_cfi_input *cfi,
				 uint64_t sframe_addr,
				 const eh2s_section_opts *opts, void **sframe,
				 size_t *sframe_size, eh2s_summary *sum,
				 eh2s_error *err)
{
	eh2s_section_opts oc;
	const eh2s_section_opts *o = &oc;
	eh2s_cfi_input in;
	eh2s_summary total;
	size_t by_reason[EH2S_SKIP_COUNT] = {0};
	cfi_section sec;
	cfi_abi abi;
	cfi_table t;
	sfe_set set;
	sfe_stream *ps = NULL;
	sfe_encode_opts eo;
	e2s_diag d = {0};
	bw_t w;
	eh2s_status st;
	e2s_err e;

	if (!sframe || !sframe_size)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	*sframe = NULL;
	*sframe_size = 0;
	st = api_struct_in(opts, API_END(eh2s_section_opts, cb_ctx), &oc,
			   sizeof oc, "eh2s_section_opts", err);
	if (st != EH2S_OK)
		return st;
	if (sum && (st = api_struct_check(sum, API_SUMMARY_V1, "eh2s_summary",
					  err)) != EH2S_OK)
		return st;
	if ((st = api_sframe_version(o->sframe_version, err)) != EH2S_OK)
		return st;
	st = describe(cfi, &in, &sec, &abi, err);
	if (st != EH2S_OK)
		return st;
	memset(&total, 0, sizeof total);
	total.size = sizeof total;

	memset(&t, 0, sizeof t);
	memset(&set, 0, sizeof set);
	bw_init(&w, sec.big_endian);
	/* Streaming projection: rows are never kept (sfe.h). */
	e = sfe_stream_new(&ps, o->sframe_version == 2 ? 2 : 3);
	if (e) {
		e2s_fail(&d, e, NULL, 0, NULL);
		goto out;
	}
	cfi_sink sink = {sfe_stream_pre, sfe_stream_row, sfe_stream_fde, ps};
	e = cfi_parse_sink(&sec, abi, &sink, &t, &d);
	if (!e)
		e = sfe_stream_finish(ps, &t, &set, &d);
	if (e)
		goto out;

	memset(&eo, 0, sizeof eo);
	eo.section_vaddr = sframe_addr;
	eo.share_fres = o->share_fres; /* 0 default, < 0 never, > 0 always */
	total.functions = t.nfdes;
	total.converted = set.counts[SFE_SKIP_NONE];
	for (int k = 0; k < SFE_SKIP_COUNT_; k++) {
		by_reason[k] = set.counts[k];
		if (k != SFE_SKIP_NONE)
			total.skipped_total += set.counts[k];
	}
	if (o->on_function) {
		for (size_t i = 0; i < t.nfdes; i++) {
			int reason = i < set.nfdes ? set.fde_skip[i]
						   : SFE_SKIP_BAD_CFI;
			if (reason == SFE_SKIP_NONE && !o->report_all)
				continue;
			eh2s_function fn = {.size = sizeof fn,
					    .pc = t.fdes[i].pc_begin,
					    .pc_range = t.fdes[i].pc_range,
					    .reason = reason};
			o->on_function(o->cb_ctx, &fn);
		}
	}
	e = sfe_encode(&set, &eo, &w, NULL, NULL, &d);
	if (e)
		goto out;
	if (w.oom) {
		e = e2s_fail(&d, E2S_ERR_NOMEM, NULL, 0, NULL);
		goto out;
	}
	total.sframe_bytes = w.len;
	total.sframe_sections = 1;
	/* The writer's buffer becomes the caller's (eh2s_free). */
	*sframe = w.data;
	*sframe_size = w.len;
	w.data = NULL;
out:
	/* The totals also when nothing was convertible. */
	if (sum)
		api_summary_out(sum, &total, by_reason, EH2S_SKIP_COUNT);
	bw_free(&w);
	sfe_set_free(&set);
	cfi_table_free(&t);
	sfe_stream_free(ps);
	return e ? api_fail(err, &d) : api_ok(err);
}

/* ---- Verification ----------------------------------------------------- */

static void forward_issue(void *ctx, const vf_issue *is)
{
	const eh2s_verify_section_opts *o = ctx;
	if ((is->kind == VF_SKIPPED && !o->report_skipped) ||
	    (is->kind == VF_MISSING && !o->report_missing))
		return;
	eh2s_verify_issue pub = {
		.size = sizeof pub,
		.kind = is->kind == VF_EXTRA	 ? EH2S_ISSUE_EXTRA
			: is->kind == VF_MISSING ? EH2S_ISSUE_MISSING
			: is->kind == VF_SKIPPED ? EH2S_ISSUE_SKIPPED
						 : EH2S_ISSUE_MISMATCH,
		.pc = is->pc,
		.what = is->what,
	};
	o->on_issue(o->cb_ctx, &pub);
}

/* The single call into the verifier (src/verify) for in-memory
 * sections: decode the .sframe bytes (sfr_decode), check their ABI id
 * against the CFI's machine, then vf_verify with the section's records
 * (t from cfi_parse_records: the verifier runs the programs itself). */
static e2s_err verify_rows(const cfi_section *sec, const cfi_table *t,
			   const uint8_t *sframe, size_t size,
			   uint64_t sframe_addr, vf_issue_cb cb, void *ctx,
			   vf_counts *n, e2s_diag *d)
{
	sfr_section s;
	e2s_err e = sfr_decode(sframe, size, sframe_addr, &s, d);
	if (e)
		return e;
	for (size_t k = 0; k < s.nblocks; k++) {
		/* The reader's own ids (sfr_spec.h), not the writer's. */
		unsigned want = t->abi == CFI_ABI_AMD64
					? SFR_ABI_AMD64_LE
				: t->abi == CFI_ABI_S390X
					? SFR_ABI_S390X_BE
				: t->big_endian ? SFR_ABI_AARCH64_BE
						: SFR_ABI_AARCH64_LE;
		if (s.blocks[k].abi != want) {
			e = e2s_fail(d, E2S_ERR_BAD_SFRAME, ".sframe",
				     s.blocks[k].off,
				     "ABI/arch id %u does not match the CFI's "
				     "machine (want %u)",
				     s.blocks[k].abi, want);
			sfr_free(&s);
			return e;
		}
	}
	e = vf_verify(sec, t, &s, cb, ctx, n, d);
	sfr_free(&s);
	return e;
}

eh2s_status eh2s_verify_section(const eh2s_cfi_input *cfi,
				const void *sframe, size_t sframe_size,
				uint64_t sframe_addr,
				const eh2s_verify_section_opts *opts,
				eh2s_verify_result *out, eh2s_error *err)
{
	eh2s_verify_section_opts o;
	eh2s_cfi_input in;
	cfi_section sec;
	cfi_abi abi;
	cfi_table t;
	vf_counts n;
	e2s_diag d = {0};
	eh2s_status st;

	if (!sframe && sframe_size)
		return api_usage(err, EH2S_E_USAGE, "NULL .sframe bytes");
	st = api_struct_in(opts, API_END(eh2s_verify_section_opts,
					 report_skipped),
			   &o, sizeof o, "eh2s_verify_section_opts", err);
	if (st != EH2S_OK)
		return st;
	if (out && (st = api_struct_check(out, API_VERIFY_RESULT_V1,
					  "eh2s_verify_result", err)) != EH2S_OK)
		return st;
	api_verify_out(out, NULL, 0, NULL);
	st = describe(cfi, &in, &sec, &abi, err);
	if (st != EH2S_OK)
		return st;
	memset(&t, 0, sizeof t);
	memset(&n, 0, sizeof n);
	if (cfi_parse_records(&sec, abi, &t, &d) ||
	    verify_rows(&sec, &t, sframe, sframe_size, sframe_addr,
			o.on_issue ? forward_issue : NULL, &o, &n, &d)) {
		st = api_fail(err, &d);
		goto out;
	}
	api_verify_out(out, &n, 0, NULL);
	st = api_verified(&n, err);
out:
	cfi_table_free(&t);
	return st;
}
