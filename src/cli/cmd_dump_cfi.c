/* --dump-cfi: print the DWARF CFI rows of each file (format: README.md,
 * "The --dump-cfi text format"). Bad FDEs are listed in the dump and
 * warned about on stderr; only a file that cannot be read fails. */
#include <stdio.h>

#include "cfi/cfi.h"
#include "cli.h"

static int dump_one(const cli_opts *o, const char *path)
{
	cfi_load_opts lo = {o->debug_frame};
	cfi_file *f;
	e2s_diag diag = {0};
	char msg[256];

	if (cfi_file_open(path, &lo, &f, &diag) != E2S_ERR_OK) {
		e2s_diag_format(&diag, msg, sizeof msg);
		cli_error(path, "%s", msg);
		return 1;
	}
	const cfi_table *t = cfi_file_table(f);
	cfi_dump_file(stdout, path, t);
	if (!o->quiet) {
		for (size_t i = 0; i < t->nfdes; i++) {
			if (t->fdes[i].status == E2S_ERR_OK)
				continue;
			cfi_fde_diag(t, &t->fdes[i], &diag);
			e2s_diag_format(&diag, msg, sizeof msg);
			cli_error(path, "%s", msg);
		}
	}
	cfi_file_close(f);
	return 0;
}

int cmd_dump_cfi(const cli_opts *o)
{
	int status = 0;
	for (int i = 0; i < o->nfiles; i++)
		if (dump_one(o, o->files[i]))
			status = 1;
	if (fflush(stdout) != 0) {
		cli_error(NULL, "error writing standard output");
		status = 1;
	}
	return status;
}
