/* Public API: verification and statistics of the current image. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../elf/elfr_cfi.h"
#include "../elfpatch/elfpatch.h"
#include "../convert/convert.h"
#include "../verify/vf.h"
#include "api_int.h"

e2s_err api_decode(const eh2s_file *f, sfr_section *s, e2s_diag *d)
{
	size_t size;
	const uint8_t *img = api_cur(f, &size);
	elfr_sframe el;
	e2s_err e;

	memset(s, 0, sizeof *s);
	if (!f->nsecs)
		return e2s_fail(d, E2S_ERR_USAGE, NULL, 0, "no .sframe section");
	if (!f->rel)
		return sfr_decode(img + f->secs[0].off, f->secs[0].size,
				  f->secs[0].addr, s, d);
	/* Relocatable: the start fields need .rela.sframe, which
	 * elfr_sframe_read_mem resolves from the image itself. */
	e = elfr_sframe_read_mem(img, size, &el, d);
	if (e)
		return e;
	e = elfr_sframe_decode(&el, s, d);
	elfr_sframe_free(&el);
	return e;
}

eh2s_status eh2s_verify(const eh2s_file *f, eh2s_verify_result *out,
			eh2s_error *err)
{
	elfr_cfi_opts lo;
	elfr_cfi *cf = NULL;
	sfr_section s;
	e2s_diag d = {0};
	size_t size;
	const uint8_t *img;
	eh2s_status st;

	if (!f)
		return api_usage(err, EH2S_E_USAGE, "NULL handle");
	if (out && (st = api_struct_check(out, API_VERIFY_RESULT_V1,
					  "eh2s_verify_result", err)) != EH2S_OK)
		return st;
	if (!f->nsecs)
		return api_usage(err, EH2S_E_USAGE,
				 "no .sframe section to verify");
	if (api_decode(f, &s, &d))
		return api_fail(err, &d);
	img = api_cur(f, &size);
	memset(&lo, 0, sizeof lo);
	lo.prefer_debug_frame = f->debug_frame;
	/* Records only (the verifier walks the programs itself); the image
	 * is borrowed. */
	lo.records_only = true;
	if (elfr_cfi_open_view(img, size, &lo, NULL, NULL, &cf, &d)) {
		st = api_fail(err, &d);
	} else {
		api_verify_in v = {.sec = elfr_cfi_section(cf),
				   .t = elfr_cfi_table(cf), .s = &s};
		st = api_verify_run(&v, out, err);
	}
	if (cf)
		elfr_cfi_close(cf);
	sfr_free(&s);
	return st;
}

/* What a default conversion would do. No CFI is not an error here. */
static e2s_err dry_run(const eh2s_file *f, const uint8_t *img, size_t size,
		       eh2s_stats *o, size_t *by_reason, e2s_diag *d)
{
	conv_input in = {.img = img, .size = size,
			 .debug_frame = f->debug_frame};
	conv_opts co = {0};
	conv_run run;
	e2s_err e = conv_run_do(&in, &co, &run, d);
	if (e == E2S_ERR_NO_CFI)
		return E2S_ERR_OK;
	if (e)
		return e;
	eh2s_summary sum;
	api_summary_of(&run.tally, 0, 0, &sum, by_reason);
	o->functions = sum.functions;
	o->converted = sum.converted;
	o->unrelocated = sum.unrelocated;
	o->skipped_total = sum.skipped_total;
	o->code_bytes = run.tally.code_bytes;
	o->code_bytes_converted = run.tally.code_bytes_converted;
	o->fres = run.set.nfres;
	sfe_encode_opts eo = {.relocatable = run.t->relocatable};
	o->projected_sframe_size = sfe_encoded_size(&run.set, &eo);
	conv_run_free(&run);
	return E2S_ERR_OK;
}

eh2s_status eh2s_get_stats(const eh2s_file *f, eh2s_stats *out,
			   eh2s_error *err)
{
	e2s_diag d = {0};
	size_t size;
	const uint8_t *img;
	eh2s_stats o;
	size_t by_reason[EH2S_SKIP_COUNT] = {0};

	if (!f || !out)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	eh2s_status st = api_struct_check(
		out, API_END(eh2s_stats, code_bytes_converted), "eh2s_stats",
		err);
	if (st != EH2S_OK)
		return st;
	memset(&o, 0, sizeof o);
	img = api_cur(f, &size);
	o.eh_frame_size = f->eh_frame_size;
	o.eh_frame_hdr_size = f->eh_frame_hdr_size;
	o.debug_frame_size = f->debug_frame_size;
	if (dry_run(f, img, size, &o, by_reason, &d))
		return api_fail(err, &d);
	for (size_t i = 0; i < f->nsecs; i++)
		o.sframe_size += f->secs[i].size;
	if (f->nsecs) {
		sfr_section s;
		if (api_decode(f, &s, &d))
			return api_fail(err, &d);
		o.sframe_fdes = s.nfdes;
		o.sframe_fres = s.nfres;
		o.sframe_version = s.nblocks ? s.blocks[0].version : 0;
		sfr_free(&s);
	}
	o.by_reason = out->by_reason;
	o.by_reason_len = out->by_reason_len;
	api_by_reason(out->by_reason, out->by_reason_len, by_reason,
		      EH2S_SKIP_COUNT);
	api_struct_out(out, &o, sizeof o);
	return api_ok(err);
}
