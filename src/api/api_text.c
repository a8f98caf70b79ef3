/* Public API, path-based operations (include/eh2sframe.h, "Working on
 * files by path"): what the eh2sframe command needs beyond the handle
 * API. Each is a thin wrapper over the module that does the work, so the
 * command's output and messages are the modules' own. */
#include <stdlib.h>
#include <string.h>

#include "../elf/elfr_cfi.h"
#include "../common/buf.h"
#include "../elfpatch/elfpatch.h"
#include "../convert/convert.h"
#include "../elf/elfr_sframe.h"
#include "../verify/vf.h"
#include "api_int.h"

/* ---- --dump-cfi ------------------------------------------------------ */

eh2s_status eh2s_dump_cfi_file(const char *path, int debug_frame, FILE *out,
			       eh2s_message_cb on_bad_fde, void *cb_ctx,
			       eh2s_error *err)
{
	elfr_cfi_opts lo = {.prefer_debug_frame = debug_frame != 0};
	elfr_cfi *f = NULL;
	e2s_diag d = {0};
	char msg[320];

	if (!path || !out)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	if (elfr_cfi_open(path, &lo, &f, &d) != E2S_ERR_OK)
		return api_fail(err, &d);
	const cfi_table *t = elfr_cfi_table(f);
	cfi_dump_file(out, path, t);
	for (size_t i = 0; on_bad_fde && i < t->nfdes; i++) {
		if (t->fdes[i].status == E2S_ERR_OK)
			continue;
		cfi_fde_diag(t, &t->fdes[i], &d);
		e2s_diag_format(&d, msg, sizeof msg);
		on_bad_fde(cb_ctx, msg);
	}
	elfr_cfi_close(f);
	return api_ok(err);
}

/* path's .sframe, read and decoded (el and s to free on EH2S_OK). */
static eh2s_status read_sframe(const char *path, elfr_sframe *el, sfr_section *s,
			       eh2s_error *err)
{
	e2s_diag d = {0};
	if (elfr_sframe_read(path, el, &d) != E2S_ERR_OK) {
		/* A file without the section is not a malformed one. */
		if (d.code == E2S_ERR_BAD_SFRAME && !d.section &&
		    strcmp(d.detail, "no .sframe section") == 0)
			return api_usage(err, EH2S_E_BAD_SFRAME,
					 "no .sframe section");
		return api_fail(err, &d);
	}
	if (elfr_sframe_decode(el, s, &d) != E2S_ERR_OK) {
		elfr_sframe_free(el);
		return api_fail(err, &d);
	}
	return EH2S_OK;
}

/* ---- --dump ---------------------------------------------------------- */

eh2s_status eh2s_dump_sframe_file(const char *path, const char *heading,
				  FILE *out, eh2s_error *err)
{
	elfr_sframe el;
	sfr_section s;
	eh2s_status st;

	if (!path || !out)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	if ((st = read_sframe(path, &el, &s, err)) != EH2S_OK)
		return st;
	if (heading)
		fprintf(out, "%s\n", heading);
	sfr_dump(out, &s);
	sfr_free(&s);
	elfr_sframe_free(&el);
	return api_ok(err);
}

/* ---- --verify -------------------------------------------------------- */

eh2s_status eh2s_verify_file(const char *path, const eh2s_verify_opts *opts,
			     eh2s_verify_result *out, eh2s_error *err)
{
	eh2s_verify_opts oc;
	const eh2s_verify_opts *o = &oc;
	elfr_sframe el;
	sfr_section s;
	e2s_diag d = {0};
	elfr_cfi *f = NULL;
	eh2s_status st;

	if (!path)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	st = api_struct_in(opts, API_END(eh2s_verify_opts, report_skipped), &oc,
			   sizeof oc, "eh2s_verify_opts", err);
	if (st != EH2S_OK)
		return st;
	if (out && (st = api_struct_check(out, API_VERIFY_RESULT_V1,
					  "eh2s_verify_result", err)) != EH2S_OK)
		return st;
	const char *cfi_path = o->cfi_from ? o->cfi_from : path;
	api_verify_out(out, NULL, 0, path);
	if ((st = read_sframe(path, &el, &s, err)) != EH2S_OK)
		return st;
	/* Records only: the verifier runs the CFI programs itself. */
	elfr_cfi_opts lo = {.prefer_debug_frame = o->debug_frame != 0,
			    .records_only = true};
	if (elfr_cfi_open(cfi_path, &lo, &f, &d) != E2S_ERR_OK) {
		api_verify_out(out, NULL, 0, cfi_path);
		st = api_fail(err, &d);
		goto done;
	}
	api_verify_in v = {.sec = elfr_cfi_section(f),
			   .t = elfr_cfi_table(f), .s = &s, .names = f,
			   .on_issue = o->on_issue, .cb_ctx = o->cb_ctx,
			   .report_missing = o->report_missing != 0,
			   .report_skipped = o->report_skipped != 0,
			   .bad_relocs = el.bad_relocs};
	st = api_verify_run(&v, out, err);
done:
	if (f)
		elfr_cfi_close(f);
	sfr_free(&s);
	elfr_sframe_free(&el);
	return st;
}

/* ---- Conversion by path ---------------------------------------------- */

static void fill_result(const conv_result *r, eh2s_file_result *res)
{
	memset(res, 0, sizeof *res);
	res->size = sizeof *res;
	res->padding = r->layout.pad;
	res->shift = r->layout.shift;
	res->phdrs_moved = r->layout.phdrs_moved;
	res->phdrs_tied = r->layout.phdrs_tied;
	res->moved_bytes = r->layout.moved;
	memcpy(res->layout_note, r->layout.grow_refused,
	       sizeof res->layout_note);
	res->layout_note[sizeof res->layout_note - 1] = 0;
}

/* An unchanged copy of in at out (mode of in, owner of the caller). */
static e2s_err copy_unchanged(const char *in, const char *out, bool new_out,
			      e2s_diag *d)
{
	elfp_file *f = NULL;
	elfp_write_opts wo = {.new_path = new_out};
	e2s_err e = elfp_open(in, &f, d);
	if (!e)
		e = elfp_write_atomic_opts(out, in, f, &wo, d);
	elfp_close(f);
	return e;
}

eh2s_status eh2s_convert_file(const char *in, const char *out,
			      const eh2s_file_opts *opts, eh2s_summary *sum,
			      eh2s_file_result *res, eh2s_error *err)
{
	eh2s_file_opts o;
	eh2s_convert_opts c;
	conv_result r;
	e2s_diag d = {0};
	e2s_err e;
	eh2s_status st;

	if (!in || !out)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	st = api_struct_in(opts, API_END(eh2s_file_opts, symbols_from), &o,
			   sizeof o, "eh2s_file_opts", err);
	if (st != EH2S_OK)
		return st;
	if ((st = api_convert_opts(o.convert, &c, err)) != EH2S_OK)
		return st;
	if (sum && (st = api_struct_check(sum, API_SUMMARY_V1, "eh2s_summary",
					  err)) != EH2S_OK)
		return st;
	if (res && (st = api_struct_check(
			    res, API_END(eh2s_file_result, layout_note),
			    "eh2s_file_result", err)) != EH2S_OK)
		return st;
	conv_file_opts eo = {.force = c.force != 0,
			.debug_frame = c.debug_frame != 0,
			.in_place = o.in_place != 0,
			.no_sync = o.no_sync != 0,
			.new_out = o.new_out != 0,
			.want_skipped = c.on_function != NULL,
			.share_fres = c.share_fres,
			.sframe_version = (uint8_t)c.sframe_version,
			.symbols_from = o.symbols_from};
	e = conv_file_path(in, out, &eo, &r, &d);
	/* Without force, EXISTS carries no detail; with it, the detail says
	 * why force was refused. */
	if (e == E2S_ERR_EXISTS && !c.force) {
		conv_result_free(&r);
		if ((o.copy_unchanged & EH2S_COPY_EXISTING) && !o.in_place &&
		    (e = copy_unchanged(in, out, o.new_out != 0, &d)) != 0)
			return api_fail(err, &d);
		/* A segment without a section cannot be rebuilt. */
		return api_usage(err, EH2S_E_EXISTS,
				 d.detail[0] ? "file already has SFrame: "
					       "PT_GNU_SFRAME and no section headers"
					     : "file already has an .sframe section "
					       "(force rebuilds it)");
	}
	/* Nothing to convert: out may still be asked for (build rules). */
	if ((e == E2S_ERR_NO_CFI || e == E2S_ERR_NO_FUNCS) &&
	    (o.copy_unchanged & EH2S_COPY_NOTHING) && !o.in_place) {
		e2s_diag cd = {0};
		if (copy_unchanged(in, out, o.new_out != 0, &cd) != 0) {
			conv_result_free(&r);
			return api_fail(err, &cd);
		}
	}
	if (e == E2S_ERR_OK || e == E2S_ERR_NO_FUNCS) {
		if (sum) {
			eh2s_summary s;
			size_t by_reason[EH2S_SKIP_COUNT];
			api_summary_of(&r.tally, r.sframe_size, r.nsections,
				       &s, by_reason);
			s.v2_rebuilt = r.rebuilt_v2;
			api_summary_out(sum, &s, by_reason, EH2S_SKIP_COUNT);
		}
		if (res && e == E2S_ERR_OK) {
			eh2s_file_result fr;
			fill_result(&r, &fr);
			api_struct_out(res, &fr, sizeof fr);
		}
		for (size_t i = 0; c.on_function && i < r.nfns; i++) {
			eh2s_function fn = {.size = sizeof fn,
					    .pc = r.fns[i].pc,
					    .name = r.fns[i].name,
					    .reason = r.fns[i].reason};
			c.on_function(c.cb_ctx, &fn);
		}
	}
	conv_result_free(&r);
	return e ? api_fail(err, &d) : api_ok(err);
}
