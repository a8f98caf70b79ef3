/* Fedora's mini debuginfo (.gnu_debugdata) kept in line with a
 * converted file (conv_file calls it around the layout). */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/mem.h"
#include "../common/xz.h"
#include "convert.h"

/* What it is (find-debuginfo -m; gdb's manual, "MiniDebugInfo"):
 * .gnu_debugdata, a non-allocated section holding an xz-compressed ELF
 * file cut from this one like a separate debug file, with the function
 * symbols of .symtab. gdb pairs it with the file as it pairs a debug
 * file, so it is brought in line with the laid-out output the same way
 * (elfp_debug_update, as eh2s_update_debug_file does on disk; its
 * program header table, though, right after its ELF header: no tool
 * recombines the two, and at the converted file's e_phoff, at the end
 * of a large library, it would make the embedded file that large), in
 * memory, recompressed (deterministic: the same bytes for the same
 * file) and put in place of the old bytes. An embedded file that is
 * not xz, truncated, not ELF or not cut from this file is an error: the
 * output would make gdb warn, and nothing is written. */

/* d's error said of .gnu_debugdata ("mini debuginfo: what"), its code
 * kept (TRUNCATED for a cut xz stream, NOT_ELF, ...). */
static e2s_err mini_fail(e2s_diag *d, e2s_err e)
{
	char why[sizeof d->detail];
	/* Not cut from this file: malformed here, not a usage error. */
	if (e == E2S_ERR_USAGE)
		e = E2S_ERR_BAD_ELF;
	if (!d->detail[0])
		return e2s_fail(d, e, ".gnu_debugdata", 0, "in the mini debuginfo");
	snprintf(why, sizeof why, "%s", d->detail);
	return e2s_fail(d, e, ".gnu_debugdata", 0, "mini debuginfo: %s", why);
}

/* The mini debuginfo section of a linked file, or 0. */
static size_t mini_debuginfo(const elfp_file *f)
{
	size_t i = elfp_find_section(f, ".gnu_debugdata");
	const elfp_shdr *sh = i ? elfp_section(f, i) : NULL;
	if (!sh || elfp_is_rel(f) || (sh->flags & SHF_ALLOC) ||
	    sh->type == SHT_NOBITS)
		return 0;
	return i;
}

/* Before the layout: the section moves to the end of the file with its
 * bytes (the layout then drops its old place when nothing follows it,
 * as usual), where update_mini_debuginfo gives it its new size. */
e2s_err conv_mini_move(elfp_file *f, e2s_diag *d)
{
	size_t i = mini_debuginfo(f), size;
	if (!i)
		return E2S_ERR_OK;
	const uint8_t *img = elfp_image(f, &size);
	const elfp_shdr *sh = elfp_section(f, i);
	uint64_t off = sh->offset, n = sh->size;
	/* elfp_open checked the extent; before any edit it is the input's. */
	if (off > size || n > size - off)
		return e2s_fail(d, E2S_ERR_TRUNCATED, ".gnu_debugdata", 0,
				"runs past the end of the file");
	e2s_err e = elfp_move_section(f, i, n, d);
	if (!e)
		e = elfp_set_content(f, i, img + off, (size_t)n, d);
	return e;
}

e2s_err conv_mini_update(elfp_file *f, e2s_diag *d)
{
	size_t i = mini_debuginfo(f);
	if (!i)
		return E2S_ERR_OK;
	uint8_t *out = NULL, *mini = NULL, *upd = NULL, *xz = NULL;
	size_t nout = 0, nmini = 0, nupd = 0, nxz = 0, ndata = 0;
	elfr_file *c = NULL, *g = NULL;
	elfp_debug_stats st;
	/* The output's headers (what elfp_debug_update reads of it) and
	 * the section itself, not a copy of the whole file. */
	e2s_err e = elfp_write_mem_headers(f, &out, &nout, d);
	if (!e)
		e = elfr_open_view(out, nout, ELFR_ONLY64, &c, d);
	if (e)
		goto out;
	/* Section indices of a linked file do not change; the reader
	 * bounds the section within the output. */
	const uint8_t *data = i < c->shnum ? elfr_section_data(c, i, &ndata)
					   : NULL;
	if (!data) {
		e = e2s_fail(d, E2S_ERR_INTERNAL, ".gnu_debugdata", 0,
			     "section lost in the output");
		goto out;
	}
	e = e2s_xz_decode(data, ndata, NULL, &mini, &nmini, d);
	if (e) {
		e = mini_fail(d, e);
		goto out;
	}
	e = elfr_open_view(mini, nmini, ELFR_ONLY64, &g, d);
	if (!e)
		e = elfp_debug_check(g, d);
	if (!e && (g->machine != c->machine || g->be != c->be ||
		   g->type != c->type))
		e = e2s_fail(d, E2S_ERR_BAD_ELF, NULL, 0, "another type or "
			     "machine than the file");
	if (!e)
		e = elfp_debug_update(c, g, true, NULL, &upd, &nupd, &st, d);
	if (e) {
		e = mini_fail(d, e);
		goto out;
	}
	if (!st.changed)
		goto out; /* already matching (a forced rebuild) */
	e = e2s_xz_encode(upd, nupd, &xz, &nxz, d);
	if (!e)
		e = elfp_replace_content(f, i, xz, nxz, d);
out:
	elfr_close(g);
	elfr_close(c);
	free(upd);
	free(mini);
	free(out);
	return e;
}

