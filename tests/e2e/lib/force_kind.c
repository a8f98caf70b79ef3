/* force_kind KIND IN OUT: convert IN to OUT like `eh2sframe IN -o OUT`,
 * but with the program header layout KIND (grown, shift, seg-tied, seg)
 * whenever the file allows it, so that tests reach the layouts eh2sframe
 * keeps for files other than the ones at hand. Prints the kind used.
 * Built by the tests against build/libeh2sframe-internal.a and its
 * internal headers. */
#include <stdio.h>
#include <string.h>

#include "convert/convert.h"

int main(int argc, char **argv)
{
	static const char *const names[] = {"same", "room", "grown", "shift",
					    "seg-tied", "seg"};
	int kind = -1;
	elfp_file *f = NULL;
	conv_file_opts o = {0};
	conv_result r;
	e2s_diag d = {0};
	char msg[256];

	for (int k = 0; argc == 4 && k < 6; k++)
		if (strcmp(argv[1], names[k]) == 0)
			kind = k;
	if (kind < 0) {
		fprintf(stderr, "usage: force_kind grown|shift|seg-tied|seg IN OUT\n");
		return 2;
	}
	e2s_err e = elfp_open(argv[2], &f, &d);
	if (!e) {
		elfp_force_kind(f, kind);
		e = conv_file(f, &o, &r, &d);
	}
	if (!e)
		e = elfp_write_atomic(argv[3], argv[2], false, f, &d);
	elfp_close(f);
	if (e) {
		e2s_diag_format(&d, msg, sizeof msg);
		fprintf(stderr, "force_kind: %s: %s\n", argv[2], msg);
		return 1;
	}
	printf("%s\n", names[r.layout.kind]);
	conv_result_free(&r);
	return 0;
}
