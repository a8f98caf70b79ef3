/* eh2sframe IN -o OUT | --in-place FILE...: add an SFrame section built
 * from each file's DWARF CFI. Each file is converted independently; the
 * output is written through a temporary file and renamed into place, so a
 * failure leaves the original (and no partial OUT) behind. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eh2sframe.h"
#include "cli.h"

/* The skipped functions, in .eh_frame order (printed after the summary). */
typedef struct {
	eh2s_function *v;
	size_t n, cap;
	bool oom;
} fn_list;

static void on_skipped(void *ctx, const eh2s_function *fn)
{
	fn_list *l = ctx;
	if (l->oom)
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		eh2s_function *p = realloc(l->v, cap * sizeof *p);
		if (!p) {
			l->oom = true;
			return;
		}
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n] = *fn;
	if (fn->name && !(l->v[l->n].name = strdup(fn->name))) {
		l->oom = true;
		return;
	}
	l->n++;
}

static void list_free(fn_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free((char *)l->v[i].name);
	free(l->v);
}

static void report(const char *file, const eh2s_summary *s,
		   const size_t *by_reason, const eh2s_file_result *r,
		   const fn_list *l, const cli_opts *o)
{
	size_t skipped = s->functions - s->converted;
	const char *sep = ": ";
	if (o->quiet || s->functions == 0)
		return;
	fprintf(stderr, "%s: converted %zu of %zu functions; skipped %zu", file,
		s->converted, s->functions, skipped);
	for (int i = 1; i < EH2S_SKIP_COUNT; i++) {
		if (!by_reason[i])
			continue;
		fprintf(stderr, "%s%s=%zu", sep, eh2s_skip_name(i), by_reason[i]);
		sep = ", ";
	}
	if (s->unrelocated)
		fprintf(stderr, "%sno-relocation=%zu", sep, s->unrelocated);
	fputc('\n', stderr);
	if (o->verbose <= 0)
		return;
	if (s->v2_rebuilt)
		fprintf(stderr, "%s:   its SFrame V2 .sframe rebuilt as V3 (GNU ld "
			"2.46.1 and later ignore V2 input)\n", file);
	if (s->sframe_sections) {
		fprintf(stderr, "%s:   %zu .sframe section(s), %zu bytes; padding "
			"%llu; program headers ", file, s->sframe_sections,
			s->sframe_bytes, (unsigned long long)r->padding);
		if (r->shift)
			fprintf(stderr, "at the file start (contents moved %llu "
				"bytes)\n", (unsigned long long)r->shift);
		else if (r->moved_bytes)
			fprintf(stderr, "grown in place (%llu bytes of sections "
				"after them moved)\n",
				(unsigned long long)r->moved_bytes);
		else
			fprintf(stderr, "%s\n", !r->phdrs_moved ? "in place"
				: r->phdrs_tied ? "moved (old-loader address kept)"
						: "moved (old-loader address lost)");
		if (r->layout_note[0])
			fprintf(stderr, "%s:   nothing after the program headers "
				"moved: %s\n", file, r->layout_note);
	}
	for (size_t i = 0; i < l->n; i++)
		fprintf(stderr, "%s:   skipped %s at 0x%llx: %s\n", file,
			l->v[i].name ? l->v[i].name : "?",
			(unsigned long long)l->v[i].pc,
			eh2s_skip_name(l->v[i].reason));
}

/* The debug file of in (converted in place as out): 1 when it could not
 * be updated. */
static int debug_one(const char *in, const char *out, int found,
		     const char *debug, char *msg, size_t len,
		     const cli_opts *o)
{
	if (found == CLI_DEBUG_FOUND)
		found = cli_debug_update(out, debug, msg, len);
	switch (found) {
	case CLI_DEBUG_UPDATED:
		if (!o->quiet)
			fprintf(stderr, "%s: debug file %s updated: %s\n", in,
				debug, msg);
		return 0;
	case CLI_DEBUG_MATCHED:
		if (o->verbose > 0 && !o->quiet)
			fprintf(stderr, "%s: debug file %s already matches\n",
				in, debug);
		return 0;
	case CLI_DEBUG_NOT_FOUND:
		if (!o->quiet)
			fprintf(stderr, "eh2sframe: %s: warning: %s\n", in, msg);
		return 0;
	case CLI_DEBUG_FAILED:
		cli_error(in, "debug file %s not updated: %s", debug, msg);
		return 1;
	default:
		if (o->verbose > 0 && !o->quiet)
			fprintf(stderr, "%s: no debug file found (no build ID "
				"under the debug roots, no .gnu_debuglink)\n", in);
		return 0;
	}
}

static int convert_one(const char *in, const cli_opts *o)
{
	char resolved[PATH_MAX];
	const char *out = o->output;
	eh2s_file_opts fo;
	eh2s_convert_opts co;
	eh2s_summary sum;
	size_t by_reason[EH2S_SKIP_COUNT];
	eh2s_file_result res;
	eh2s_error err;
	fn_list skipped = {NULL, 0, 0, false};
	int rc = 0;

	if (o->in_place) {
		/* Replace the file a symlink points at, not the link. */
		if (!realpath(in, resolved)) {
			cli_error(in, "%m");
			return 1;
		}
		out = resolved;
	}
	/* The rename gives the file a new inode, which its other names
	 * (hard links) do not follow; tree mode relinks the names it
	 * finds, one file's others are not known here. */
	struct stat before;
	nlink_t links = o->in_place && stat(out, &before) == 0 ? before.st_nlink : 1;
	/* Its separate debug file, found first: its symbols count for what
	 * the rewrite may move. debug holds the path, then the message. */
	char debug[PATH_MAX], dmsg[512];
	int found = CLI_DEBUG_NONE;
	if (o->debug_file || o->ndebug_roots)
		found = cli_debug_find(o, out, NULL, debug, dmsg, sizeof dmsg);
	eh2s_file_opts_init(&fo);
	eh2s_convert_opts_init(&co);
	eh2s_summary_init(&sum);
	eh2s_file_result_init(&res);
	sum.by_reason = by_reason;
	sum.by_reason_len = EH2S_SKIP_COUNT;
	if (found == CLI_DEBUG_FOUND)
		fo.symbols_from = debug;
	co.force = o->force;
	co.debug_frame = o->debug_frame;
	co.share_fres = o->share_fres;
	co.sframe_version = o->sframe_version;
	if (o->verbose > 0) {
		co.on_function = on_skipped;
		co.cb_ctx = &skipped;
	}
	fo.convert = &co;
	fo.in_place = o->in_place;
	fo.no_sync = o->no_sync;
	/* -o always writes OUT: a copy when there is nothing to do. */
	if (!o->in_place)
		fo.copy_unchanged = EH2S_COPY_EXISTING |
				    (o->require_sframe ? 0 : EH2S_COPY_NOTHING);
	eh2s_status st = eh2s_convert_file(in, out, &fo, &sum, &res, &err);
	if (st == EH2S_OK || st == EH2S_E_NO_FUNCS) {
		if (skipped.oom) {
			cli_error(in, "out of memory");
			list_free(&skipped);
			return 1;
		}
		report(in, &sum, by_reason, &res, &skipped, o);
		if (st == EH2S_OK && links > 1 && !o->quiet)
			fprintf(stderr, "eh2sframe: %s: warning: its %lu other "
				"hard link%s still name%s the unconverted file "
				"(-r converts a tree's links together)\n", in,
				(unsigned long)(links - 1), links > 2 ? "s" : "",
				links > 2 ? "" : "s");
	}
	bool nothing = st == EH2S_E_NO_CFI || st == EH2S_E_NO_FUNCS;
	/* Without --force, EXISTS means "nothing to do" (OUT is a copy). */
	if (st == EH2S_E_EXISTS && !o->force) {
		if (!o->quiet && strstr(err.message, "PT_GNU_SFRAME"))
			fprintf(stderr, "%s: already has SFrame (PT_GNU_SFRAME, "
				"no section headers); unchanged\n", in);
		else if (!o->quiet)
			fprintf(stderr, "%s: already has .sframe; unchanged "
				"(--force rebuilds it)\n", in);
	} else if (nothing && !o->require_sframe) {
		/* Not an error: build rules run over objects without CFI
		 * (assembly, -fno-asynchronous-unwind-tables). */
		if (o->verbose > 0 && !o->quiet)
			fprintf(stderr, "%s: nothing to convert (%.255s); %s\n",
				in, err.message,
				o->in_place ? "file unchanged"
					    : "output is an exact copy");
	} else if (nothing) {
		cli_error(in, "%.255s; file unchanged", err.message);
		rc = 1;
	} else if (st != EH2S_OK) {
		cli_error(in, "%.255s", err.message);
		rc = 1;
	}
	/* Its separate debug file, asked for: after a conversion, or when
	 * the file already had .sframe (an earlier run may have left it). */
	if ((st == EH2S_OK || st == EH2S_E_EXISTS) &&
	    (o->debug_file || o->ndebug_roots) &&
	    debug_one(in, out, found, debug, dmsg, sizeof dmsg, o))
		rc = 1;
	list_free(&skipped);
	return rc;
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
