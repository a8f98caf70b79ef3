/* --dump-cfi: print the DWARF CFI rows of each file (format: README.md,
 * "The --dump-cfi text format"). Bad FDEs are listed in the dump and
 * warned about on stderr; only a file that cannot be read fails. */
#include <stdio.h>

#include "eh2sframe.h"
#include "cli.h"

static void bad_fde(void *ctx, const char *msg)
{
	cli_error(ctx, "%.255s", msg);
}

static int dump_one(const cli_opts *o, const char *path)
{
	eh2s_error err;
	if (eh2s_dump_cfi_file(path, o->debug_frame, stdout,
			       o->quiet ? NULL : bad_fde, (void *)path,
			       &err) != EH2S_OK) {
		cli_error(path, "%.255s", err.message);
		return 1;
	}
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
