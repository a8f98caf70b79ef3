/* --dump (print .sframe like objdump --sframe) and --verify (check a
 * file's .sframe against DWARF CFI). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cfi/cfi.h"
#include "../sframe_emit/sfe.h"
#include "../sframe_emit/sfe_verify.h"
#include "../sframe_emit/sfr.h"
#include "cli.h"

static void diag_error(const char *file, const e2s_diag *d)
{
	char buf[320];
	e2s_diag_format(d, buf, sizeof buf);
	cli_error(file, "%s", buf);
}

static int dev_build(const cli_opts *o, const char *spec);

int cmd_dump_sframe(const cli_opts *o)
{
	int rc = 0;
	const char *dev = getenv("EH2SFRAME_DEV_BUILD");
	if (dev && *dev)
		return dev_build(o, dev);
	for (int i = 0; i < o->nfiles; i++) {
		const char *path = o->files[i];
		sfr_elf el;
		e2s_diag d = {0};
		sfr_section s;
		if (sfr_elf_read(path, &el, &d) != E2S_ERR_OK) {
			diag_error(path, &d);
			rc = 1;
			continue;
		}
		if (sfr_elf_decode(&el, &s, &d) != E2S_ERR_OK) {
			diag_error(path, &d);
			sfr_elf_free(&el);
			rc = 1;
			continue;
		}
		if (o->nfiles > 1)
			printf("%s%s:\n", i ? "\n" : "", path);
		sfr_dump(stdout, &s);
		sfr_free(&s);
		sfr_elf_free(&el);
	}
	return rc;
}

/* Hidden developer mode for tests (the convert command lives elsewhere):
 * EH2SFRAME_DEV_BUILD=OUT@VADDR[,share][,v2] eh2sframe --dump FILE writes
 * the .sframe bytes built from FILE's CFI, for a section placed at VADDR,
 * to OUT; ",share" sets share_fres, ",v2" sframe_version 2. */
static int dev_build(const cli_opts *o, const char *spec)
{
	char out[4096];
	const char *at = strrchr(spec, '@');
	if (!at || (size_t)(at - spec) >= sizeof out) {
		cli_error(NULL, "EH2SFRAME_DEV_BUILD wants OUT@VADDR");
		return 2;
	}
	memcpy(out, spec, (size_t)(at - spec));
	out[at - spec] = '\0';
	cfi_load_opts lo = {.prefer_debug_frame = o->debug_frame};
	cfi_file *f = NULL;
	e2s_diag d = {0};
	if (cfi_file_open(o->files[0], &lo, &f, &d) != E2S_ERR_OK) {
		diag_error(o->files[0], &d);
		return 1;
	}
	const cfi_table *t = cfi_file_table(f);
	sfe_encode_opts eo = {.relocatable = cfi_file_is_rel(f),
			      .section_vaddr = strtoull(at + 1, NULL, 0),
			      .share_fres = strstr(at, ",share") != NULL,
			      .sframe_version = strstr(at, ",v2") ? 2 : 3};
	bw_t w;
	sfe_set set;
	sfe_encode_stats st;
	int rc = 0;
	memset(&set, 0, sizeof set);
	memset(&st, 0, sizeof st);
	bw_init(&w, t->big_endian);
	e2s_err e = sfe_project(t, &set, &d);
	if (!e) {
		sfe_restrict(&set, &eo);
		e = sfe_encode_ex(&set, &eo, &w, NULL, NULL, &st, &d);
	}
	if (e != E2S_ERR_OK) {
		diag_error(o->files[0], &d);
		rc = 1;
	} else {
		FILE *fp = fopen(out, "wb");
		if (!fp || fwrite(w.data, 1, w.len, fp) != w.len) {
			cli_error(out, "cannot write");
			rc = 1;
		}
		if (fp && fclose(fp) != 0)
			rc = 1;
		if (!o->quiet) {
			fprintf(stderr, "functions=%zu", set.nfuncs);
			for (int k = 0; k < SFE_SKIP_COUNT_; k++)
				if (set.counts[k])
					fprintf(stderr, " %s=%zu", sfe_skip_name((sfe_skip)k),
						set.counts[k]);
			fprintf(stderr, " bytes=%zu fre_bytes=%llu unshared_fre_bytes=%llu"
				" shared_fdes=%llu\n", w.len,
				(unsigned long long)st.fre_bytes,
				(unsigned long long)st.fre_bytes_unshared,
				(unsigned long long)st.shared_fdes);
		}
	}
	sfe_set_free(&set);
	bw_free(&w);
	cfi_file_close(f);
	return rc;
}

typedef struct {
	cfi_file *f;
	const cfi_table *t;
	int verbose;
} vctx;

static void report(void *ctx, const sfe_verify_issue *is)
{
	vctx *c = ctx;
	const char *name = NULL;
	if (is->missing && c->verbose == 0)
		return;
	if (!is->extra)
		name = cfi_file_func_name(c->f, &c->t->fdes[is->fde]);
	if (c->t->relocatable)
		printf("%s [%u]+0x%" PRIx64 " %s: %s\n",
		       is->extra ? "extra" : is->missing ? "missing" : "mismatch",
		       is->shndx, is->pc, name ? name : "?", is->what);
	else
		printf("%s 0x%" PRIx64 " %s: %s\n",
		       is->extra ? "extra" : is->missing ? "missing" : "mismatch",
		       is->pc, name ? name : "?", is->what);
}

int cmd_verify(const cli_opts *o)
{
	const char *path = o->files[0];
	const char *cfi_path = o->cfi_from ? o->cfi_from : path;
	sfr_elf el;
	e2s_diag d = {0};
	sfr_section s;
	cfi_file *f = NULL;
	int rc = 1;

	if (o->nfiles != 1) {
		cli_error(NULL, "--verify takes exactly one file");
		return 2;
	}
	if (sfr_elf_read(path, &el, &d) != E2S_ERR_OK) {
		diag_error(path, &d);
		return 1;
	}
	if (sfr_elf_decode(&el, &s, &d) != E2S_ERR_OK) {
		diag_error(path, &d);
		sfr_elf_free(&el);
		return 1;
	}
	cfi_load_opts lo = {.prefer_debug_frame = o->debug_frame};
	if (cfi_file_open(cfi_path, &lo, &f, &d) != E2S_ERR_OK) {
		diag_error(cfi_path, &d);
		goto out;
	}
	vctx c = {f, cfi_file_table(f), o->verbose};
	sfe_verify_counts n;
	if (sfe_verify(c.t, &s, report, &c, &n, &d) != E2S_ERR_OK) {
		diag_error(path, &d);
		goto out;
	}
	if (el.bad_relocs)
		printf("warning: %zu .sframe relocations of an unexpected type ignored\n",
		       el.bad_relocs);
	printf("functions=%zu match=%zu mismatch=%zu missing=%zu skipped=%zu extra=%zu\n",
	       n.functions, n.match, n.mismatch, n.missing, n.skipped, n.extra);
	rc = n.mismatch || n.extra ? 1 : 0;
out:
	if (f)
		cfi_file_close(f);
	sfr_free(&s);
	sfr_elf_free(&el);
	return rc;
}
