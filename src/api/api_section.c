/* Public API: sections in memory, bytes in and bytes out
 * (eh2s_convert_section, eh2s_verify_section). For a linker that has
 * merged .eh_frame and places .sframe itself, or a JIT runtime that
 * builds .eh_frame for generated code: no file, no libelf, only the CFI
 * parser, the projection, the encoder and the reader. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../elf/elfr_cfi.h"
#include "../convert/convert.h"
#include "../verify/vf.h"
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
			    cfi_section *sec, abi_id *abi, eh2s_error *err)
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
	if (*abi == ABI_UNKNOWN) {
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
	cfi_section sec;
	abi_id abi;
	conv_run run;
	e2s_diag d = {0};
	eh2s_status st;

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

	conv_input ci = {.sec = &sec, .abi = abi};
	conv_opts co = {.sframe_version = (uint8_t)o->sframe_version,
			.encode = true, .vaddr = sframe_addr,
			.share_fres = o->share_fres}; /* 0 default, < 0 never, > 0 always */
	e2s_err e = conv_run_do(&ci, &co, &run, &d);
	/* The totals and the functions also when nothing was convertible. */
	if (run.t && o->on_function) {
		for (size_t i = 0; i < run.t->nfdes; i++) {
			int reason = (int)conv_fde_outcome(&run, i);
			if (reason == CONV_SKIP_NONE && !o->report_all)
				continue;
			eh2s_function fn = {.size = sizeof fn,
					    .pc = run.t->fdes[i].pc_begin,
					    .pc_range = run.t->fdes[i].pc_range,
					    .reason = reason};
			o->on_function(o->cb_ctx, &fn);
		}
	}
	if (sum) {
		size_t by_reason[EH2S_SKIP_COUNT];
		api_summary_of(&run.tally, run.sframe_size, run.sframe ? 1 : 0,
			       &total, by_reason);
		api_summary_out(sum, &total, by_reason, EH2S_SKIP_COUNT);
	}
	if (!e) {
		/* The section becomes the caller's (eh2s_free). */
		*sframe = run.sframe;
		*sframe_size = run.sframe_size;
		run.sframe = NULL;
	}
	conv_run_free(&run);
	return e ? api_fail(err, &d) : api_ok(err);
}

/* ---- Verification ----------------------------------------------------- */

/* The ABI/arch id each block of s must carry for the CFI's machine, as
 * the verifier reads it (its own ABI description: the verifier stays
 * independent of the writer's tables). */
static e2s_err check_abi(const cfi_table *t, const sfr_section *s,
			 e2s_diag *d)
{
	unsigned want = vf_sframe_abi(t->abi, t->big_endian);
	for (size_t k = 0; k < s->nblocks; k++)
		if (s->blocks[k].abi != want)
			return e2s_fail(d, E2S_ERR_BAD_SFRAME, ".sframe",
					s->blocks[k].off,
					"ABI/arch id %u does not match the "
					"CFI's machine (want %u)",
					s->blocks[k].abi, want);
	return E2S_ERR_OK;
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
	abi_id abi;
	cfi_table t;
	sfr_section s;
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
	memset(&s, 0, sizeof s);
	/* Records only: the verifier runs the programs itself. */
	if (cfi_parse_records(&sec, abi, &t, &d) ||
	    sfr_decode(sframe, sframe_size, sframe_addr, &s, &d) ||
	    check_abi(&t, &s, &d)) {
		st = api_fail(err, &d);
	} else {
		api_verify_in v = {.sec = &sec, .t = &t, .s = &s,
				   .on_issue = o.on_issue, .cb_ctx = o.cb_ctx,
				   .report_missing = o.report_missing != 0,
				   .report_skipped = o.report_skipped != 0};
		st = api_verify_run(&v, out, err);
	}
	sfr_free(&s);
	cfi_table_free(&t);
	return st;
}
