/* One conversion run (convert.h, conv_run_do): the CFI loaded and its
 * rows projected as they come, the outcomes counted, the section
 * encoded when asked. Every caller of the converter starts here, so a
 * rule about what is counted or how a section is built has one place. */
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "convert.h"

/* A bare section: the stream takes the rows as the parser makes them
 * (none kept), as conv_project_view does for ELF images. */
static e2s_err project_section(const conv_input *in, unsigned version,
			       conv_run *r, e2s_diag *d)
{
	conv_stream *ps = NULL;
	if (conv_stream_new(&ps, version))
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	cfi_sink sink = {conv_stream_pre, conv_stream_row, conv_stream_fde, ps,
			 conv_stream_room};
	e2s_err e = cfi_parse_sink(in->sec, in->abi, &sink, &r->table, d);
	if (!e)
		e = conv_stream_finish(ps, &r->table, &r->set, &r->v, d);
	conv_stream_free(ps);
	return e;
}

conv_skip conv_fde_outcome(const conv_run *r, size_t i)
{
	/* The stream saw every FDE (conv_stream_finish checks it); one it
	 * did not would be bad CFI. */
	uint8_t why = i < r->v.nfdes ? r->v.fde_skip[i] : CONV_SKIP_BAD_CFI;
	return why < CONV_SKIP_COUNT_ ? (conv_skip)why : CONV_SKIP_BAD_CFI;
}

/* The outcomes, per FDE: the projection's verdict, and for ET_REL
 * whether a relocation gives the start of what it converted. */
static e2s_err tally(conv_run *r, e2s_diag *d)
{
	const cfi_table *t = r->t;
	const sfe_set *s = &r->set;
	conv_tally *n = &r->tally;

	n->nfdes = t->nfdes;
	if (t->relocatable) {
		r->unrel = calloc(t->nfdes ? t->nfdes : 1, 1);
		r->frel = calloc(s->nfuncs ? s->nfuncs : 1, sizeof *r->frel);
		if (!r->unrel || !r->frel)
			return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
		for (size_t k = 0; k < s->nfuncs; k++) {
			r->frel[k] = conv_func_reloc(t, &s->funcs[k]);
			if (!r->frel[k].present && s->funcs[k].src_fde < t->nfdes)
				r->unrel[s->funcs[k].src_fde] = 1;
		}
	}
	for (size_t i = 0; i < t->nfdes; i++) {
		conv_skip why = conv_fde_outcome(r, i);
		n->outcome[why]++;
		n->code_bytes += t->fdes[i].pc_range;
		if (why != CONV_SKIP_NONE)
			n->skipped++;
		else if (r->unrel && r->unrel[i])
			n->unrelocated++;
		else {
			n->converted++;
			n->code_bytes_converted += t->fdes[i].pc_range;
		}
	}
	return E2S_ERR_OK;
}

static e2s_err encode(const conv_opts *o, conv_run *r, e2s_diag *d)
{
	sfe_encode_opts eo = {.relocatable = r->t->relocatable,
			      .section_vaddr = o->vaddr,
			      .share_fres = o->share_fres,
			      .share_runs = o->share_runs};
	bw_t w;
	bw_init(&w, r->t->big_endian);
	e2s_err e = sfe_encode_ex(&r->set, &eo, &w, NULL, NULL, &r->st, d);
	if (!e && w.oom)
		e = e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	if (!e) {
		/* The writer's buffer is the result: no copy. */
		r->sframe = w.data;
		r->sframe_size = w.len;
		w.data = NULL;
	}
	bw_free(&w);
	return e;
}

e2s_err conv_run_do(const conv_input *in, const conv_opts *o, conv_run *r,
		    e2s_diag *d)
{
	unsigned version = o->sframe_version == 2 ? 2 : 3;
	e2s_err e;

	memset(r, 0, sizeof *r);
	if (in->img) {
		elfr_cfi_opts lo = {.prefer_debug_frame = in->debug_frame};
		/* The CFI handle borrows the image. */
		e = conv_project_view(in->img, in->size, &lo, version, &r->cf,
				     &r->set, &r->v, d);
		if (!e)
			r->t = elfr_cfi_table(r->cf);
	} else {
		e = project_section(in, version, r, d);
		if (!e)
			r->t = &r->table;
	}
	if (!e)
		e = tally(r, d);
	if (e) {
		conv_run_free(r);
		return e;
	}
	return o->encode ? encode(o, r, d) : E2S_ERR_OK;
}

void conv_run_drop_cfi(conv_run *r)
{
	elfr_cfi_close(r->cf);
	cfi_table_free(&r->table);
	r->cf = NULL;
	r->t = NULL;
}

void conv_run_free(conv_run *r)
{
	conv_run_drop_cfi(r);
	sfe_set_free(&r->set);
	conv_verdicts_free(&r->v);
	free(r->unrel);
	free(r->frel);
	free(r->sframe);
	memset(r, 0, sizeof *r);
}
