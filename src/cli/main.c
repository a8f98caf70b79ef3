/* eh2sframe command line: option parsing and dispatch. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define E2S_VERSION "0.1.0"

void cli_error(const char *file, const char *fmt, ...)
{
	va_list ap;
	fputs("eh2sframe: ", stderr);
	if (file)
		fprintf(stderr, "%s: ", file);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *f)
{
	fputs(
"Usage: eh2sframe [OPTION]... IN -o OUT\n"
"       eh2sframe --in-place [OPTION]... FILE...\n"
"       eh2sframe --dump FILE...       | --dump-cfi FILE...\n"
"       eh2sframe --verify [--cfi-from ORIG] FILE\n"
"Convert the DWARF call-frame information (.eh_frame, .debug_frame) of ELF\n"
"files into an SFrame version 3 .sframe section.\n"
"\n"
"Conversion:\n"
"  -o, --output=OUT     write the converted file to OUT\n"
"  -i, --in-place       rewrite each FILE (via a temporary file and rename)\n"
"  -f, --force          rebuild .sframe even if the file already has one\n"
"      --debug-frame    read .debug_frame even when .eh_frame exists\n"
"\n"
"Inspection:\n"
"      --dump           print the .sframe section of each FILE\n"
"      --dump-cfi       print the DWARF CFI rows of each FILE\n"
"      --verify         check FILE's .sframe against its DWARF CFI\n"
"      --cfi-from=ORIG  with --verify: take the DWARF CFI from ORIG\n"
"\n"
"Other:\n"
"  -q, --quiet          print only errors\n"
"  -v, --verbose        list skipped functions with their reasons\n"
"  -h, --help           show this help and exit\n"
"  -V, --version        show the version and exit\n"
"\n"
"Exit status: 0 success, 1 a file failed (or --verify found a mismatch),\n"
"2 usage error.\n",
	      f);
}

enum { MODE_CONVERT, MODE_DUMP, MODE_DUMP_CFI, MODE_VERIFY };
enum { OPT_DUMP = 256, OPT_DUMP_CFI, OPT_VERIFY, OPT_CFI_FROM, OPT_DEBUG_FRAME };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"in-place", no_argument, NULL, 'i'},
		{"force", no_argument, NULL, 'f'},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{"dump", no_argument, NULL, OPT_DUMP},
		{"dump-cfi", no_argument, NULL, OPT_DUMP_CFI},
		{"verify", no_argument, NULL, OPT_VERIFY},
		{"cfi-from", required_argument, NULL, OPT_CFI_FROM},
		{"debug-frame", no_argument, NULL, OPT_DEBUG_FRAME},
		{NULL, 0, NULL, 0},
	};
	cli_opts o;
	int mode = MODE_CONVERT, c;

	memset(&o, 0, sizeof o);
	while ((c = getopt_long(argc, argv, "o:ifqvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case 'i': o.in_place = true; break;
		case 'f': o.force = true; break;
		case 'q': o.quiet = true; break;
		case 'v': o.verbose++; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("eh2sframe %s\n", E2S_VERSION); return 0;
		case OPT_DUMP: mode = MODE_DUMP; break;
		case OPT_DUMP_CFI: mode = MODE_DUMP_CFI; break;
		case OPT_VERIFY: mode = MODE_VERIFY; break;
		case OPT_CFI_FROM: o.cfi_from = optarg; break;
		case OPT_DEBUG_FRAME: o.debug_frame = true; break;
		default:
			fputs("Try 'eh2sframe --help' for more information.\n", stderr);
			return 2;
		}
	}
	o.files = argv + optind;
	o.nfiles = argc - optind;
	if (o.nfiles == 0) {
		cli_error(NULL, "no input files");
		fputs("Try 'eh2sframe --help' for more information.\n", stderr);
		return 2;
	}
	switch (mode) {
	case MODE_DUMP: return cmd_dump_sframe(&o);
	case MODE_DUMP_CFI: return cmd_dump_cfi(&o);
	case MODE_VERIFY: return cmd_verify(&o);
	default: break;
	}
	if (o.in_place == (o.output != NULL)) {
		cli_error(NULL, "give exactly one of -o OUT or --in-place");
		return 2;
	}
	if (o.output && o.nfiles != 1) {
		cli_error(NULL, "-o takes exactly one input file");
		return 2;
	}
	return cmd_convert(&o);
}
