/* Public API, path-based operations (include/eh2sframe.h, "Working on
 * files by path"): what the eh2sframe command needs beyond the handle
 * API. Each is a thin wrapper over the module that does the work, so the
 * command's output and messages are the modules' own. */
#include <stdlib.h>
#include <string.h>

#include "../elf/cfi_file.h"
#include "../common/buf.h"
#include "../elfpatch/elfpatch.h"
#include "../convert/convert.h"
#include "../elf/sfr_file.h"
#include "../verify/vf.h"
#include "api_int.h"

void eh2s_free(void *p)
{
	free(p);
}

/* ---- --dump-cfi ------------------------------------------------------ */

eh2s_status eh2s_dump_cfi_file(const char *path, int debug_frame, FILE *out,
			       eh2s_message_cb on_bad_fde, void *cb_ctx,
			       eh2s_error *err)
{
	cfi_load_opts lo = {.prefer_debug_frame = debug_frame != 0};
	cfi_file *f = NULL;
	e2s_diag d = {0};
	char msg[320];

	if (!path || !out)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	if (cfi_file_open(path, &lo, &f, &d) != E2S_ERR_OK)
		return api_fail(err, &d);
	const cfi_table *t = cfi_file_table(f);
	cfi_dump_file(out, path, t);
	for (size_t i = 0; on_bad_fde && i < t->nfdes; i++) {
		if (t->fdes[i].status == E2S_ERR_OK)
			continue;
		cfi_fde_diag(t, &t->fdes[i], &d);
		e2s_diag_format(&d, msg, sizeof msg);
		on_bad_fde(cb_ctx, msg);
	}
	cfi_file_close(f);
	return api_ok(err);
}

/* ---- --dump ---------------------------------------------------------- */

eh2s_status eh2s_dump_sframe_file(const char *path, const char *heading,
				  FILE *out, eh2s_error *err)
{
	sfr_elf el;
	sfr_section s;
	e2s_diag d = {0};

	if (!path || !out)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	if (sfr_elf_read(path, &el, &d) != E2S_ERR_OK) {
		/* A file without the section is not a malformed one. */
		if (d.code == E2S_ERR_BAD_SFRAME && !d.section &&
		    strcmp(d.detail, "no .sframe section") == 0)
			return api_usage(err, EH2S_E_BAD_SFRAME,
					 "no .sframe section");
		return api_fail(err, &d);
	}
	if (sfr_elf_decode(&el, &s, &d) != E2S_ERR_OK) {
		sfr_elf_free(&el);
		return api_fail(err, &d);
	}
	if (heading)
		fprintf(out, "%s\n", heading);
	sfr_dump(out, &s);
	sfr_free(&s);
	sfr_elf_free(&el);
	return api_ok(err);
}

/* ---- --verify -------------------------------------------------------- */

void eh2s_verify_opts_init(eh2s_verify_opts *o)
{
	if (o)
		memset(o, 0, sizeof *o);
}

typedef struct {
	const eh2s_verify_opts *o;
	cfi_file *f;
	const cfi_table *t;
} verify_ctx;

static void verify_issue(void *ctx, const vf_issue *is)
{
	verify_ctx *c = ctx;
	eh2s_verify_issue pub;
	if ((is->kind == VF_MISSING && !c->o->report_missing) ||
	    (is->kind == VF_SKIPPED && !c->o->report_skipped))
		return;
	memset(&pub, 0, sizeof pub);
	pub.kind = is->kind == VF_EXTRA ? EH2S_ISSUE_EXTRA
		   : is->kind == VF_MISSING ? EH2S_ISSUE_MISSING
		   : is->kind == VF_SKIPPED ? EH2S_ISSUE_SKIPPED
					    : EH2S_ISSUE_MISMATCH;
	pub.relocatable = c->t->relocatable;
	pub.pc = is->pc;
	pub.shndx = is->shndx;
	/* The symbol table is read on the first lookup only. */
	if (is->kind != VF_EXTRA && is->fde < c->t->nfdes)
		pub.name = cfi_file_func_name(c->f, &c->t->fdes[is->fde]);
	pub.what = is->what;
	c->o->on_issue(c->o->cb_ctx, &pub);
}

eh2s_status eh2s_verify_file(const char *path, const eh2s_verify_opts *opts,
			     eh2s_verify_file_result *out, eh2s_error *err)
{
	eh2s_verify_opts defaults;
	const eh2s_verify_opts *o = opts;
	sfr_elf el;
	sfr_section s;
	vf_counts n;
	e2s_diag d = {0};
	cfi_file *f = NULL;
	eh2s_status st;

	if (!path)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	if (!o) {
		eh2s_verify_opts_init(&defaults);
		o = &defaults;
	}
	const char *cfi_path = o->cfi_from ? o->cfi_from : path;
	if (out) {
		memset(out, 0, sizeof *out);
		out->failed = path;
	}
	if (sfr_elf_read(path, &el, &d) != E2S_ERR_OK) {
		/* A file without the section is not a malformed one. */
		if (d.code == E2S_ERR_BAD_SFRAME && !d.section &&
		    strcmp(d.detail, "no .sframe section") == 0)
			return api_usage(err, EH2S_E_BAD_SFRAME,
					 "no .sframe section");
		return api_fail(err, &d);
	}
	if (sfr_elf_decode(&el, &s, &d) != E2S_ERR_OK) {
		sfr_elf_free(&el);
		return api_fail(err, &d);
	}
	/* Records only: the verifier runs the CFI programs itself. */
	cfi_load_opts lo = {.prefer_debug_frame = o->debug_frame != 0,
			    .records_only = true};
	if (cfi_file_open(cfi_path, &lo, &f, &d) != E2S_ERR_OK) {
		if (out)
			out->failed = cfi_path;
		st = api_fail(err, &d);
		goto done;
	}
	verify_ctx c = {o, f, cfi_file_table(f)};
	memset(&n, 0, sizeof n);
	if (vf_verify(cfi_file_section(f), c.t, &s,
		      o->on_issue ? verify_issue : NULL, &c, &n, &d) != E2S_ERR_OK) {
		st = api_fail(err, &d);
		goto done;
	}
	if (out) {
		out->bad_relocs = el.bad_relocs;
		out->failed = NULL;
	}
	st = api_verified(&n, out ? &out->counts : NULL, err);
done:
	if (f)
		cfi_file_close(f);
	sfr_free(&s);
	sfr_elf_free(&el);
	return st;
}

/* ---- Conversion by path ---------------------------------------------- */

void eh2s_file_opts_init(eh2s_file_opts *o)
{
	if (o)
		memset(o, 0, sizeof *o);
}

static void fill_result(const elfp_result *r, eh2s_file_result *res)
{
	memset(res, 0, sizeof *res);
	res->summary.functions = r->nfdes;
	res->summary.converted = r->converted;
	res->summary.unrelocated = r->unrelocated;
	for (size_t i = 1; i < r->ncounts && i < 32; i++)
		res->summary.skipped[i] = r->counts[i];
	res->summary.sframe_bytes = r->sframe_size;
	res->summary.sframe_sections = r->nsections;
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
static e2s_err copy_unchanged(const char *in, const char *out, e2s_diag *d)
{
	elfp_file *f = NULL;
	e2s_err e = elfp_open(in, &f, d);
	if (!e)
		e = elfp_write_atomic(out, in, false, f, d);
	elfp_close(f);
	return e;
}

eh2s_status eh2s_convert_file(const char *in, const char *out,
			      const eh2s_file_opts *opts,
			      eh2s_file_result *res, eh2s_error *err)
{
	eh2s_file_opts defaults;
	const eh2s_file_opts *o = opts;
	elfp_result r;
	e2s_diag d = {0};
	e2s_err e;

	if (!in || !out)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	if (!o) {
		eh2s_file_opts_init(&defaults);
		o = &defaults;
	}
	const eh2s_convert_opts *c = &o->convert;
	if (c->sframe_version != 0 && c->sframe_version != 2 &&
	    c->sframe_version != 3)
		return api_usage(err, EH2S_E_USAGE,
				 "SFrame version must be 2 or 3");
	elfp_opts eo = {.force = c->force != 0,
			.debug_frame = c->debug_frame != 0,
			.in_place = o->in_place != 0,
			.want_skipped = c->on_function != NULL,
			.share_fres = c->share_fres != 0,
			.sframe_version = (uint8_t)c->sframe_version,
			.symbols_from = o->symbols_from};
	if (res)
		memset(res, 0, sizeof *res);
	e = elfp_convert(in, out, &eo, &r, &d);
	/* Without force, EXISTS carries no detail; with it, the detail says
	 * why force was refused. */
	if (e == E2S_ERR_EXISTS && !c->force) {
		elfp_result_free(&r);
		if ((o->copy_unchanged & EH2S_COPY_EXISTING) && !o->in_place &&
		    (e = copy_unchanged(in, out, &d)) != 0)
			return api_fail(err, &d);
		return api_usage(err, EH2S_E_EXISTS,
				 "file already has an .sframe section "
				 "(force rebuilds it)");
	}
	/* Nothing to convert: out may still be asked for (build rules). */
	if ((e == E2S_ERR_NO_CFI || e == E2S_ERR_NO_FUNCS) &&
	    (o->copy_unchanged & EH2S_COPY_NOTHING) && !o->in_place) {
		e2s_diag cd = {0};
		if (copy_unchanged(in, out, &cd) != 0) {
			elfp_result_free(&r);
			return api_fail(err, &cd);
		}
	}
	if (e == E2S_ERR_OK || e == E2S_ERR_NO_FUNCS) {
		if (res)
			fill_result(&r, res);
		for (size_t i = 0; c->on_function && i < r.nfns; i++) {
			eh2s_function fn = {.pc = r.fns[i].pc,
					    .name = r.fns[i].name,
					    .reason = r.fns[i].reason};
			c->on_function(c->cb_ctx, &fn);
		}
	}
	elfp_result_free(&r);
	return e ? api_fail(err, &d) : api_ok(err);
}

/* ---- Section bytes only ---------------------------------------------- */

eh2s_status eh2s_encode_sframe_file(const char *path,
				    const eh2s_encode_opts *o, void **data,
				    size_t *size, eh2s_encode_info *info,
				    eh2s_error *err)
{
	cfi_file *f = NULL;
	e2s_diag d = {0};
	sfe_set set;
	sfe_encode_stats st;
	bw_t w;
	e2s_err e;

	if (!path || !o || !data || !size)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	*data = NULL;
	*size = 0;
	if (o->sframe_version != 0 && o->sframe_version != 2 &&
	    o->sframe_version != 3)
		return api_usage(err, EH2S_E_USAGE,
				 "SFrame version must be 2 or 3");
	cfi_load_opts lo = {.prefer_debug_frame = o->debug_frame != 0};
	uint8_t *img = NULL;
	size_t isize = 0;
	int mode;
	e = api_read_file(path, &img, &isize, &mode, &d);
	if (e)
		return api_fail(err, &d);
	memset(&set, 0, sizeof set);
	memset(&st, 0, sizeof st);
	e = sfe_project_view(img, isize, &lo, (unsigned)o->sframe_version, &f,
			     &set, &d);
	if (e) {
		free(img);
		return api_fail(err, &d);
	}
	const cfi_table *t = cfi_file_table(f);
	sfe_encode_opts eo = {.relocatable = cfi_file_is_rel(f),
			      .section_vaddr = o->vaddr,
			      .share_fres = o->share_fres != 0};
	bw_init(&w, t->big_endian);
	e = sfe_encode_ex(&set, &eo, &w, NULL, NULL, &st, &d);
	if (!e && info) {
		memset(info, 0, sizeof *info);
		info->functions = set.nfuncs;
		for (int k = 0; k < SFE_SKIP_COUNT_ && k < 32; k++)
			info->outcome[k] = set.counts[k];
		info->bytes = w.len;
		info->fre_bytes = st.fre_bytes;
		info->fre_bytes_unshared = st.fre_bytes_unshared;
		info->shared_fdes = st.shared_fdes;
	}
	if (!e) {
		/* The writer's buffer becomes the caller's. */
		*data = w.data;
		*size = w.len;
		w.data = NULL;
		w.len = 0;
	}
	sfe_set_free(&set);
	bw_free(&w);
	cfi_file_close(f);
	free(img);
	return e ? api_fail(err, &d) : api_ok(err);
}
