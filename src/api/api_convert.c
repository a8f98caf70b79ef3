/* Public API: conversion and its per-function results. The conversion
 * itself is conv_file's, run on the handle's bytes in memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../elf/elfr_cfi.h"
#include "../elfpatch/elfpatch.h"
#include "../convert/convert.h"
#include "api_int.h"

/* The public reasons are the converter's, every one of them, with the
 * same numbers and in the same order (src/sframe/sfe.h, CONV_SKIPS): a
 * reason added there without its EH2S_SKIP_ name stops the build. */
#define API_SAME_SKIP(name, text)                                        \
	_Static_assert((int)EH2S_SKIP_##name == (int)CONV_SKIP_##name,    \
		       "EH2S_SKIP_" #name " is SFE_SKIP_" #name);
CONV_SKIPS(API_SAME_SKIP)
#undef API_SAME_SKIP
_Static_assert((int)EH2S_SKIP_COUNT == (int)CONV_SKIP_COUNT_,
	       "include/eh2sframe.h lists every reason of CONV_SKIPS");
_Static_assert((int)EH2S_SKIP_NO_RELOCATION >= (int)CONV_SKIP_COUNT_,
	       "no-relocation stays apart from the converter's reasons");

const char *eh2s_skip_name(int reason)
{
	if (reason == EH2S_SKIP_NO_RELOCATION)
		return "no-relocation";
	if (reason < 0 || reason >= CONV_SKIP_COUNT_)
		return "unknown";
	return conv_skip_name((conv_skip)reason);
}

size_t eh2s_skip_reason_count(void)
{
	return EH2S_SKIP_COUNT;
}

void api_free_result(eh2s_file *f)
{
	for (size_t i = 0; i < f->nfns; i++)
		free((char *)f->fns[i].name);
	free(f->fns);
	f->fns = NULL;
	f->nfns = 0;
	f->have_result = false;
	memset(&f->sum, 0, sizeof f->sum);
	memset(f->by_reason, 0, sizeof f->by_reason);
}

/* The per-FDE outcomes conv_file_path reported (res->fns, every FDE),
 * as the API's list; the names move over. */
static e2s_err take_functions(conv_result *res, eh2s_function **out,
			      size_t *nout, e2s_diag *d)
{
	eh2s_function *fns = calloc(res->nfns ? res->nfns : 1, sizeof *fns);
	if (!fns)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	for (size_t i = 0; i < res->nfns; i++) {
		conv_fn *r = &res->fns[i];
		fns[i].size = sizeof fns[i];
		fns[i].pc = r->pc;
		fns[i].pc_range = r->size;
		fns[i].shndx = r->shndx;
		fns[i].reason = r->unrelocated ? EH2S_SKIP_NO_RELOCATION : r->reason;
		fns[i].name = r->name;
		r->name = NULL;
	}
	*out = fns;
	*nout = res->nfns;
	return E2S_ERR_OK;
}

/* conv_file_path in memory: the handle's bytes in (borrowed; parsed by
 * eh2s_open, whose parse the first conversion takes), *img out. */
static e2s_err run_convert(eh2s_file *f, const conv_file_opts *eo,
			   conv_result *res, uint8_t **img, size_t *size,
			   e2s_diag *d)
{
	elfp_file *ef = f->in_view;
	e2s_err e = E2S_ERR_OK;
	/* The conversion edits it: no later one can take it again. */
	f->in_view = NULL;
	if (!ef)
		e = elfp_open_view(f->in, f->in_size, &ef, d);
	if (e) {
		memset(res, 0, sizeof *res);
		return e;
	}
	e = conv_file(ef, eo, res, d);
	if (!e)
		e = elfp_write_mem(ef, img, size, d);
	if (!e) {
		/* As conv_file_path does for files: no image reported as
		 * converted unless a linker could read it. */
		elfp_check_opts co = {.debug_frame = eo->debug_frame,
				      .nfdes = res->nfdes};
		e = elfp_check_output(ef, *img, *size, &co, d);
		if (e) {
			free(*img);
			*img = NULL;
			*size = 0;
		}
	}
	elfp_close(ef);
	return e;
}

/* The converted image's parse, for the getters. */
static e2s_err scan_output(eh2s_file *f, e2s_diag *d)
{
	elfp_file *ef = NULL;
	e2s_err e = elfp_open_view(f->out, f->out_size, &ef, d);
	if (!e)
		e = api_scan(f, ef, d);
	elfp_close(ef);
	return e;
}

eh2s_status eh2s_convert(eh2s_file *f, const eh2s_convert_opts *opts,
			 eh2s_error *err)
{
	eh2s_convert_opts oc;
	const eh2s_convert_opts *o = &oc;
	eh2s_function *fns = NULL;
	size_t nfns = 0;
	conv_result res;
	e2s_diag d = {0};
	uint8_t *img = NULL;
	size_t size = 0;
	e2s_err e;

	memset(&res, 0, sizeof res);
	if (!f)
		return api_usage(err, EH2S_E_USAGE, "NULL handle");
	eh2s_status st = api_convert_opts(opts, &oc, err);
	if (st != EH2S_OK)
		return st;
	if (f->had_sframe && !o->force &&
	    !(f->v2_object && o->sframe_version != 2))
		return api_usage(err, EH2S_E_EXISTS,
				 "file already has an .sframe section "
				 "(force rebuilds it)");

	conv_file_opts eo = {.force = o->force != 0,
			.debug_frame = o->debug_frame != 0,
			.want_all = true};
	eo.sframe_version = (uint8_t)o->sframe_version;
	eo.share_fres = o->share_fres; /* 0 default, < 0 never, > 0 always */
	e = run_convert(f, &eo, &res, &img, &size, &d);
	if (!e || e == E2S_ERR_NO_FUNCS) {
		e2s_diag td = {0};
		if (take_functions(&res, &fns, &nfns, &td)) {
			e = td.code;
			d = td;
		}
	}
	if (e && e != E2S_ERR_NO_FUNCS) {
		for (size_t i = 0; i < nfns; i++)
			free((char *)fns[i].name);
		free(fns);
		free(img);
		conv_result_free(&res);
		return api_fail(err, &d);
	}
	api_free_result(f);
	f->fns = fns;
	f->nfns = nfns;
	f->have_result = true;
	api_summary_of(&res.tally, res.sframe_size, res.nsections, &f->sum,
		       f->by_reason);
	conv_result_free(&res);
	if (o->on_function)
		for (size_t i = 0; i < nfns; i++)
			if (o->report_all || fns[i].reason != EH2S_SKIP_NONE)
				o->on_function(o->cb_ctx, &fns[i]);
	if (e)
		return api_fail(err, &d);

	free(f->out);
	f->out = img;
	f->out_size = size;
	f->debug_frame = o->debug_frame != 0;
	if (scan_output(f, &d) != E2S_ERR_OK)
		return api_fail(err, &d);
	return api_ok(err);
}

eh2s_status eh2s_get_summary(const eh2s_file *f, eh2s_summary *out,
			     eh2s_error *err)
{
	if (!f || !out)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	eh2s_status st = api_struct_check(out, API_SUMMARY_V1, "eh2s_summary",
					  err);
	if (st != EH2S_OK)
		return st;
	if (!f->have_result)
		return api_usage(err, EH2S_E_USAGE, "no conversion yet");
	api_summary_out(out, &f->sum, f->by_reason, EH2S_SKIP_COUNT);
	return api_ok(err);
}

size_t eh2s_function_count(const eh2s_file *f)
{
	return f && f->have_result ? f->nfns : 0;
}

const eh2s_function *eh2s_function_at(const eh2s_file *f, size_t i)
{
	return f && f->have_result && i < f->nfns ? &f->fns[i] : NULL;
}

/* ---- Shared by the converting calls ------------------------------------ */

eh2s_status api_convert_opts(const eh2s_convert_opts *o,
			     eh2s_convert_opts *ours, eh2s_error *err)
{
	eh2s_status st = api_struct_in(o, API_END(eh2s_convert_opts, cb_ctx),
				       ours, sizeof *ours, "eh2s_convert_opts",
				       err);
	if (st != EH2S_OK)
		return st;
	return api_sframe_version(ours->sframe_version, err);
}

eh2s_status api_sframe_version(int version, eh2s_error *err)
{
	if (version != 0 && version != 2 && version != 3)
		return api_usage(err, EH2S_E_UNSUPPORTED,
				 "SFrame version must be 2 or 3");
	return EH2S_OK;
}

void api_summary_of(const conv_tally *n, size_t sframe_bytes,
		    size_t nsections, eh2s_summary *sum,
		    size_t by_reason[EH2S_SKIP_COUNT])
{
	memset(sum, 0, sizeof *sum);
	sum->size = sizeof *sum;
	sum->functions = n->nfdes;
	sum->converted = n->converted;
	sum->unrelocated = n->unrelocated;
	sum->skipped_total = n->skipped;
	sum->sframe_bytes = sframe_bytes;
	sum->sframe_sections = nsections;
	/* The public [0] counts what is in .sframe. */
	api_by_reason(by_reason, EH2S_SKIP_COUNT, n->outcome, CONV_SKIP_COUNT_);
	by_reason[0] = n->converted;
}

void api_summary_out(eh2s_summary *out, const eh2s_summary *ours,
		     const size_t *counts, size_t n)
{
	api_by_reason(out->by_reason, out->by_reason_len, counts, n);
	eh2s_summary tmp = *ours;
	tmp.by_reason = out->by_reason;
	tmp.by_reason_len = out->by_reason_len;
	api_struct_out(out, &tmp, sizeof tmp);
}
