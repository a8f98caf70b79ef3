/* --dump (print .sframe like objdump --sframe) and --verify (check a
 * file's .sframe against DWARF CFI). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_dev.h"
#include "eh2sframe.h"
#include "cli.h"

static int dev_build(const cli_opts *o, const char *spec);

int cmd_dump_sframe(const cli_opts *o)
{
	int rc = 0;
	const char *dev = getenv("EH2SFRAME_DEV_BUILD");
	if (dev && *dev)
		return dev_build(o, dev);
	for (int i = 0; i < o->nfiles; i++) {
		const char *path = o->files[i];
		char *heading = NULL;
		eh2s_error err;
		if (o->nfiles > 1 &&
		    asprintf(&heading, "%s%s:", i ? "\n" : "", path) < 0) {
			cli_error(path, "out of memory");
			return 1;
		}
		if (eh2s_dump_sframe_file(path, heading, stdout, &err) != EH2S_OK) {
			cli_error(path, "%s", err.message);
			rc = 1;
		}
		free(heading);
	}
	return rc;
}

/* Hidden developer mode for tests (the convert command lives elsewhere):
 * EH2SFRAME_DEV_BUILD=OUT@VADDR[,share|,subshare][,v2] eh2sframe --dump
 * FILE writes the .sframe bytes built from FILE's CFI, for a section
 * placed at VADDR, to OUT; without ",share" unshared whatever the
 * default, ",share" shares identical FRE lists (on any byte order),
 * ",subshare" also points into runs of earlier FRE data (share_runs),
 * ",v2" sframe_version 2. */
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
	api_encode_opts eo = {.debug_frame = o->debug_frame,
			       .vaddr = strtoull(at + 1, NULL, 0),
			       /* 1 always, -1 never; 2 always with runs */
			       .share_fres = strstr(at, ",subshare") ? 2
					     : strstr(at, ",share") ? 1 : -1,
			       .sframe_version = strstr(at, ",v2") ? 2 : 3};
	api_encode_info info;
	eh2s_error err;
	void *data = NULL;
	size_t size = 0;
	if (api_encode_sframe_file(o->files[0], &eo, &data, &size, &info,
				   &err) != EH2S_OK) {
		cli_error(o->files[0], "%s", err.message);
		return 1;
	}
	int rc = 0;
	FILE *fp = fopen(out, "wb");
	if (!fp || fwrite(data, 1, size, fp) != size) {
		cli_error(out, "cannot write");
		rc = 1;
	}
	if (fp && fclose(fp) != 0)
		rc = 1;
	if (!o->quiet) {
		fprintf(stderr, "functions=%zu", info.functions);
		for (int k = 0; k < EH2S_SKIP_COUNT; k++)
			if (info.outcome[k])
				fprintf(stderr, " %s=%zu", eh2s_skip_name(k),
					info.outcome[k]);
		fprintf(stderr, " bytes=%zu fre_bytes=%llu unshared_fre_bytes=%llu"
			" shared_fdes=%llu\n", size,
			(unsigned long long)info.fre_bytes,
			(unsigned long long)info.fre_bytes_unshared,
			(unsigned long long)info.shared_fdes);
	}
	eh2s_free(data);
	return rc;
}

static void report(void *ctx, const eh2s_verify_issue *is)
{
	(void)ctx;
	const char *kind = is->kind == EH2S_ISSUE_EXTRA ? "extra"
			   : is->kind == EH2S_ISSUE_MISSING ? "missing"
			   : is->kind == EH2S_ISSUE_SKIPPED ? "skipped"
							    : "mismatch";
	if (is->relocatable)
		printf("%s [%u]+0x%" PRIx64 " %s: %s\n", kind, is->shndx, is->pc,
		       is->name ? is->name : "?", is->what);
	else
		printf("%s 0x%" PRIx64 " %s: %s\n", kind, is->pc,
		       is->name ? is->name : "?", is->what);
}

int cmd_verify(const cli_opts *o)
{
	const char *path = o->files[0];
	eh2s_verify_opts vo;
	eh2s_verify_result res;
	eh2s_error err;

	if (o->nfiles != 1) {
		cli_error(NULL, "--verify takes exactly one file");
		return 2;
	}
	eh2s_verify_result_init(&res);
	eh2s_verify_opts_init(&vo);
	vo.cfi_from = o->cfi_from;
	vo.debug_frame = o->debug_frame;
	vo.on_issue = report;
	vo.report_missing = o->verbose > 0;
	vo.report_skipped = o->verbose > 0;
	eh2s_status st = eh2s_verify_file(path, &vo, &res, &err);
	if (st != EH2S_OK && st != EH2S_E_VERIFY) {
		cli_error(res.failed_path ? res.failed_path : path, "%s",
			  err.message);
		return 1;
	}
	if (res.bad_relocs)
		printf("warning: %zu .sframe relocations of an unexpected type ignored\n",
		       res.bad_relocs);
	printf("functions=%zu match=%zu mismatch=%zu missing=%zu skipped=%zu extra=%zu points=%zu\n",
	       res.functions, res.match, res.mismatch, res.missing,
	       res.skipped, res.extra, res.points);
	return st == EH2S_E_VERIFY ? 1 : 0;
}
