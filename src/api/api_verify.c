/* The one verification run behind eh2s_verify, eh2s_verify_file and
 * eh2s_verify_section: the verifier (src/verify) called on decoded
 * .sframe and the CFI's records, its issues passed on as the public
 * struct, its counts into the caller's result and the status. */
#include <string.h>

#include "api_int.h"

static void forward_issue(void *ctx, const vf_issue *is)
{
	const api_verify_in *v = ctx;
	eh2s_verify_issue pub;
	if ((is->kind == VF_MISSING && !v->report_missing) ||
	    (is->kind == VF_SKIPPED && !v->report_skipped))
		return;
	memset(&pub, 0, sizeof pub);
	pub.size = sizeof pub;
	pub.kind = is->kind == VF_EXTRA	  ? EH2S_ISSUE_EXTRA
		   : is->kind == VF_MISSING ? EH2S_ISSUE_MISSING
		   : is->kind == VF_SKIPPED ? EH2S_ISSUE_SKIPPED
					    : EH2S_ISSUE_MISMATCH;
	pub.relocatable = v->t->relocatable;
	pub.pc = is->pc;
	pub.what = is->what;
	/* A bare section has no sections and no symbols. */
	if (v->names) {
		pub.shndx = is->shndx;
		/* The symbol table is read on the first lookup only. */
		if (is->kind != VF_EXTRA && is->fde < v->t->nfdes)
			pub.name = elfr_cfi_func_name(v->names,
						      &v->t->fdes[is->fde]);
	}
	v->on_issue(v->cb_ctx, &pub);
}

eh2s_status api_verify_run(const api_verify_in *v, eh2s_verify_result *out,
			   eh2s_error *err)
{
	vf_counts n;
	e2s_diag d = {0};
	memset(&n, 0, sizeof n);
	if (vf_verify(v->sec, v->t, v->s, v->on_issue ? forward_issue : NULL,
		      (void *)v, &n, &d) != E2S_ERR_OK)
		return api_fail(err, &d);
	api_verify_out(out, &n, v->bad_relocs, NULL);
	return api_verified(&n, err);
}
