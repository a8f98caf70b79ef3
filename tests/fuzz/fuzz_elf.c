/* Fuzz target: arbitrary bytes as an ELF file -> the whole conversion.
 *
 * Byte 0 selects the options (bit 0 force, bit 1 debug_frame, bit 2
 * want_skipped, bit 3 share_fres, bit 4 SFrame V2); the rest is the input
 * file. The library has no
 * buffer-to-buffer conversion, so the input goes to a per-process
 * directory on tmpfs and conv_file_path writes the output next to it. The
 * in-memory front ends (elfp_open_mem, elfr_cfi_open_mem) are also run on
 * the bytes directly.
 *
 * Oracles (a failure traps): a converted output opens again for editing
 * and for its CFI, keeps the input's FDE count, its .sframe decodes, and
 * for linked files verifies against the CFI with no mismatch and no
 * extra function. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_check.h"
#include "elf/elfr_cfi.h"
#include "convert/convert.h"
#include "elfpatch/elfpatch.h"
#include "verify/vf.h"
#include "elf/elfr_sframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
	char dir[64], in[96], out[96];
	FILE *null;
	bool ready;
} fz_env;

static fz_env env; /* per-process scratch paths, set up once */

static void cleanup(void)
{
	unlink(env.in);
	unlink(env.out);
	rmdir(env.dir);
}

static bool setup(void)
{
	if (env.ready)
		return true;
	snprintf(env.dir, sizeof env.dir, "/dev/shm/eh2s-fuzz-XXXXXX");
	if (!mkdtemp(env.dir)) {
		snprintf(env.dir, sizeof env.dir, "/tmp/eh2s-fuzz-XXXXXX");
		if (!mkdtemp(env.dir))
			return false;
	}
	snprintf(env.in, sizeof env.in, "%s/in", env.dir);
	snprintf(env.out, sizeof env.out, "%s/out", env.dir);
	env.null = fopen("/dev/null", "w");
	atexit(cleanup);
	env.ready = true;
	return true;
}

static bool write_file(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return false;
	bool ok = fwrite(p, 1, n, f) == n;
	return fclose(f) == 0 && ok;
}

/* Parser front ends straight on the bytes. */
static void in_memory(const uint8_t *data, size_t size, bool debug_frame)
{
	elfp_file *ef = NULL;
	elfr_cfi *cf = NULL;
	e2s_diag d;
	if (elfp_open_mem(data, size, &ef, &d) == E2S_ERR_OK && ef) {
		size_t n = elfp_shnum(ef);
		for (size_t i = 0; i < n && i < 4096; i++) {
			const char *name = elfp_section_name(ef, i);
			if (name && env.null)
				fprintf(env.null, "%s", name);
			(void)elfp_section(ef, i);
			(void)elfp_group_of(ef, i);
		}
		for (size_t i = 0; i < elfp_phnum(ef) && i < 4096; i++)
			(void)elfp_segment(ef, i);
		(void)elfp_symtab(ef);
		elfp_close(ef);
	}
	elfr_cfi_opts lo = {.prefer_debug_frame = debug_frame};
	if (elfr_cfi_open_mem(data, size, &lo, &cf, &d) == E2S_ERR_OK && cf) {
		const cfi_table *t = elfr_cfi_table(cf);
		for (size_t i = 0; i < t->nfdes && i < 4096; i++) {
			const char *name = elfr_cfi_func_name(cf, &t->fdes[i]);
			if (name && env.null)
				fprintf(env.null, "%s", name);
		}
		(void)elfr_cfi_section_name(cf);
		if (env.null)
			cfi_dump(env.null, t);
		elfr_cfi_close(cf);
	}
}

static void check_output(const conv_file_opts *o, const conv_result *res)
{
	elfp_file *ef = NULL;
	elfr_cfi *cf = NULL;
	e2s_diag d;
	if (elfp_open(env.out, &ef, &d) != E2S_ERR_OK)
		FUZZ_FAIL_DIAG("we wrote what we cannot read back", &d);
	elfr_cfi_opts lo = {.prefer_debug_frame = o->debug_frame,
			    .records_only = true};
	if (elfr_cfi_open(env.out, &lo, &cf, &d) != E2S_ERR_OK)
		FUZZ_FAIL_DIAG("the output lost its CFI", &d);
	const cfi_table *t = elfr_cfi_table(cf);
	if (t->nfdes != res->nfdes)
		FUZZ_FAIL("FDE count changed");
	/* --force rebuilds the section the file had, under its name, and
	 * leaves alone anything else called .sframe (a symbol table, say):
	 * find ours by type and content. */
	size_t idx = 0, isize;
	for (size_t i = 1; !idx && i < elfp_shnum(ef); i++)
		if (elfp_sframe_kind(ef, i) == SFR_SEC_SFRAME)
			idx = i;
	const elfp_shdr *sh = elfp_section(ef, idx);
	const uint8_t *img = elfp_image(ef, &isize);
	if (!idx || !sh || sh->offset > isize || isize - sh->offset < sh->size)
		FUZZ_FAIL("no .sframe, or it lies outside the file");
	sfr_section s;
	if (sfr_decode(img + sh->offset, sh->size, sh->addr, &s, &d) !=
	    E2S_ERR_OK)
		FUZZ_FAIL_DIAG("our encoder wrote what our reader rejects", &d);
	if (!elfp_is_rel(ef) && fuzz_mask_small(&s)) {
		vf_counts c;
		if (vf_verify(elfr_cfi_section(cf), t, &s, NULL, NULL, &c, &d) ==
			    E2S_ERR_OK &&
		    (c.mismatch || c.extra))
			FUZZ_FAIL("the verifier disagrees with what was encoded");
	}
	sfr_free(&s);
	/* The .sframe finder's view, relocations resolved: every part must
	 * decode when all SFrame sections are ours (the input may carry junk
	 * ones). */
	size_t nsf = 0;
	for (size_t i = 1; i < elfp_shnum(ef); i++)
		if (elfp_sframe_kind(ef, i) == SFR_SEC_SFRAME)
			nsf++;
	elfr_sframe se;
	if (elfr_sframe_read(env.out, &se, &d) == E2S_ERR_OK) {
		if (elfr_sframe_decode(&se, &s, &d) == E2S_ERR_OK)
			sfr_free(&s);
		else if (nsf == res->nsections)
			FUZZ_FAIL_DIAG("elfr_sframe view of our .sframe does not decode", &d);
		elfr_sframe_free(&se);
	}
	elfr_cfi_close(cf);
	elfp_close(ef);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || !setup())
		return 0;
	uint8_t sel = data[0];
	conv_file_opts o = {.force = sel & 1, .debug_frame = (sel >> 1) & 1,
		       .want_skipped = (sel >> 2) & 1,
		       .share_fres = (sel >> 3) & 1,
		       .sframe_version = (sel & 0x10) ? 2 : 3};
	data++;
	size--;
	in_memory(data, size, o.debug_frame);
	if (!write_file(env.in, data, size))
		return 0;
	unlink(env.out);
	conv_result res;
	e2s_diag d;
	if (conv_file_path(env.in, env.out, &o, &res, &d) == E2S_ERR_OK)
		check_output(&o, &res);
	conv_result_free(&res);
	return 0;
}
