/* eh2sframe IN -o OUT | --in-place FILE...: add an SFrame section built
 * from each file's DWARF CFI. Each file is converted independently; the
 * output is written through a temporary file and renamed into place, so a
 * failure leaves the original (and no partial OUT) behind. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "../elfpatch/elfpatch.h"
#include "../sframe_emit/sfe.h"
#include "cli.h"

static void report(const char *file, const elfp_result *r, const cli_opts *o)
{
	size_t skipped = r->nfdes - r->converted;
	const char *sep = ": ";
	if (o->quiet)
		return;
	fprintf(stderr, "%s: converted %zu of %zu functions; skipped %zu", file,
		r->converted, r->nfdes, skipped);
	for (size_t i = 1; i < r->ncounts; i++) {
		if (!r->counts[i])
			continue;
		fprintf(stderr, "%s%s=%zu", sep, sfe_skip_name((sfe_skip)i),
			r->counts[i]);
		sep = ", ";
	}
	if (r->unrelocated)
		fprintf(stderr, "%sno-relocation=%zu", sep, r->unrelocated);
	fputc('\n', stderr);
	if (o->verbose <= 0)
		return;
	fprintf(stderr, "%s:   %zu .sframe section(s), %zu bytes; padding %llu"
		"; program headers ", file, r->nsections, r->sframe_size,
		(unsigned long long)r->layout.pad);
	if (r->layout.shift)
		fprintf(stderr, "at the file start (contents moved %llu bytes)\n",
			(unsigned long long)r->layout.shift);
	else
		fprintf(stderr, "%s\n", !r->layout.phdrs_moved ? "in place"
			: r->layout.phdrs_tied ? "moved (old-loader address kept)"
					       : "moved (old-loader address lost)");
	for (size_t i = 0; i < r->nskipped; i++) {
		const elfp_skipped *s = &r->skipped[i];
		fprintf(stderr, "%s:   skipped %s at 0x%llx: %s\n", file,
			s->name ? s->name : "?", (unsigned long long)s->pc,
			sfe_skip_name((sfe_skip)s->reason));
	}
}

/* -o OUT for a file that needs no change: OUT becomes a copy. */
static e2s_err copy_unchanged(const char *in, const char *out, e2s_diag *d)
{
	elfp_file *f = NULL;
	e2s_err e = elfp_open(in, &f, d);
	if (!e)
		e = elfp_write_atomic(out, in, false, f, d);
	elfp_close(f);
	return e;
}

static int convert_one(const char *in, const cli_opts *o)
{
	char resolved[PATH_MAX];
	const char *out = o->output;
	elfp_opts eo = {.force = o->force, .debug_frame = o->debug_frame,
			.in_place = o->in_place, .want_skipped = o->verbose > 0,
			.share_fres = o->share_fres,
			.sframe_version = (uint8_t)o->sframe_version};
	elfp_result res;
	e2s_diag d = {0};
	char msg[256];
	e2s_err e;

	if (o->in_place) {
		/* Replace the file a symlink points at, not the link. */
		if (!realpath(in, resolved)) {
			cli_error(in, "%m");
			return 1;
		}
		out = resolved;
	}
	e = elfp_convert(in, out, &eo, &res, &d);
	if (e == E2S_ERR_EXISTS && !d.detail[0]) {
		if (!o->in_place && (e = copy_unchanged(in, out, &d)) != 0)
			goto fail;
		if (!o->quiet)
			fprintf(stderr, "%s: already has .sframe; unchanged "
				"(--force rebuilds it)\n", in);
		elfp_result_free(&res);
		return 0;
	}
	if (e == E2S_ERR_NO_FUNCS) {
		report(in, &res, o);
		cli_error(in, "no function could be converted to SFrame; "
			  "file unchanged");
		elfp_result_free(&res);
		return 1;
	}
	if (e)
		goto fail;
	report(in, &res, o);
	elfp_result_free(&res);
	return 0;
fail:
	e2s_diag_format(&d, msg, sizeof msg);
	cli_error(in, "%s", msg);
	elfp_result_free(&res);
	return 1;
}

int cmd_convert(const cli_opts *o)
{
	int rc = 0;
	/* With a file-size limit, writes must fail with EFBIG instead of
	 * killing us before the temporary file is removed. */
	signal(SIGXFSZ, SIG_IGN);
	for (int i = 0; i < o->nfiles; i++)
		if (convert_one(o->files[i], o))
			rc = 1;
	return rc;
}
