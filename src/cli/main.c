/* eh2sframe command line: option parsing and dispatch. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eh2sframe.h"
#include "cli.h"

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
"       eh2sframe --in-place -r [-j N] [OPTION]... DIR|FILE...\n"
"       eh2sframe --in-place --files-from LIST|- [OPTION]...\n"
"       eh2sframe --dump FILE...  |  --dump-cfi FILE...\n"
"       eh2sframe --verify [--cfi-from ORIG] FILE\n"
"       eh2sframe --stats [--json] FILE...\n"
"Add an SFrame section (.sframe, format version 3), built from the DWARF\n"
"call-frame information (.eh_frame or .debug_frame), to 64-bit ELF files\n"
"of x86-64, AArch64 and s390x: executables, shared libraries, relocatable\n"
"objects and kernel modules. Existing code and data keep their\n"
"addresses; the new section goes into a new read-only segment.\n"
"\n"
"Conversion:\n"
"  -o, --output=OUT       write the converted IN to OUT (an exact copy of\n"
"                         IN when there is nothing to convert) with IN's\n"
"                         mode, less set-user/group-ID bits, as cp does;\n"
"                         a symbolic link's target is written, the link\n"
"                         kept; a device or FIFO (/dev/null, /dev/stdout)\n"
"                         is written into, never replaced\n"
"  -i, --in-place         rewrite each FILE (temporary file and rename;\n"
"                         a symbolic link's target is rewritten), keeping\n"
"                         its mode, owner and extended attributes (file\n"
"                         capabilities, ACLs, security labels); each\n"
"                         file is synced to disk before it replaces its\n"
"                         original (trees: once per batch)\n"
"      --no-sync          with --in-place: do not sync (build trees,\n"
"                         staging trees: files that can be made again;\n"
"                         after a crash a file may be old, or empty)\n"
"  -f, --force            rebuild .sframe even if the file already has one\n"
"      --debug-frame      read .debug_frame even when .eh_frame exists\n"
"      --sframe-version=N write SFrame version N: 3 (default) or 2 (for\n"
"                         older consumers; functions V2 cannot describe are\n"
"                         skipped)\n"
"      --share-fres       let functions with identical frame rows share\n"
"                         one copy of them on every target; by default\n"
"                         only little-endian ones (x86-64, AArch64) share\n"
"                         (libsframe 2.47 rejects shared rows it must\n"
"                         byte-swap, as s390x files on x86-64 hosts)\n"
"      --no-share-fres    store every function's frame rows (the layout\n"
"                         before sharing; larger)\n"
"      --require-sframe   fail when a file has nothing to convert (no CFI,\n"
"                         an empty .eh_frame, every function skipped);\n"
"                         by default such a file is left as it is (-o\n"
"                         writes an exact copy) and the exit status is 0\n"
"\n"
"Trees (package builds; needs --in-place):\n"
"  -r, --recursive        walk each DIR (never following symbolic links)\n"
"                         and convert every ELF file with usable CFI;\n"
"                         other files are skipped silently (-v says why);\n"
"                         hard-linked files are converted once and stay\n"
"                         linked; a failing file does not stop the others;\n"
"                         a summary ends the run; files an interrupted\n"
"                         run left (.e2stage.PID.N, .NAME.e2sXXXXXX) are\n"
"                         left alone, with a warning\n"
"      --files-from=LIST  take the files (and with -r directories) from\n"
"                         LIST, one per line; '-' reads standard input\n"
"      --objects          also convert relocatable objects (crt1.o ...):\n"
"                         by default a tree's objects are link inputs\n"
"                         left as they are, like static libraries (GNU\n"
"                         ld before 2.45 cannot merge SFrame V3); kernel\n"
"                         modules (*.ko) are converted either way\n"
"  -j, --jobs=N           convert N files at a time (same output bytes)\n"
"\n"
"Separate debug files (with --in-place; found by build ID under DIR's\n"
"usr/lib/debug with -r, or by the file's .gnu_debuglink in its tree):\n"
"      --debug-root=ROOT  also look under ROOT/usr/lib/debug/.build-id\n"
"                         (repeatable)\n"
"      --debug-file=DEBUG the one FILE's debug file\n"
"                         A debug file found is made to describe the\n"
"                         converted file (program headers, .sframe,\n"
"                         moved sections, the .gnu_debuglink CRC), and its\n"
"                         symbols count when deciding what may move\n"
"\n"
"Inspection:\n"
"      --dump             print the .sframe section of each FILE\n"
"      --dump-cfi         print the DWARF CFI rows of each FILE\n"
"      --verify           check FILE's .sframe, ours or any producer's\n"
"                         (gas, ld, LLVM, mold...), against its DWARF CFI:\n"
"                         at every row both are unwound one frame and the\n"
"                         caller's CFA, SP, return address, FP and RA\n"
"                         signing must agree; prints counts, mismatches\n"
"                         fail; -v lists skipped and missing functions\n"
"                         with the reason\n"
"      --cfi-from=ORIG    with --verify: take the DWARF CFI from ORIG\n"
"      --stats            section sizes (.eh_frame, .eh_frame_hdr,\n"
"                         .sframe), function and FRE counts, coverage\n"
"                         and skip reasons of each FILE\n"
"      --json             with --stats: one JSON array on stdout\n"
"\n"
"Other:\n"
"  -q, --quiet            print only errors\n"
"  -v, --verbose          more detail: skipped functions and why, skipped\n"
"                         files in tree mode (repeatable)\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n"
"      --                 end of options (for file names starting with -)\n"
"\n"
"Messages read 'eh2sframe: FILE: SECTION+0xOFFSET: what is wrong'.\n"
"Exit status: 0 success; 1 a file failed (or --verify found a mismatch);\n"
"2 usage error.\n"
"\n"
"Examples:\n"
"  eh2sframe prog -o prog.sframe && eh2sframe --verify prog.sframe\n"
"  eh2sframe --in-place -r -j 2 debian/foo/      # after dh_strip\n"
"  eh2sframe module.o -o module.sframe.o         # kernel objects\n"
"  eh2sframe --stats --json /usr/bin/ls\n"
"See eh2sframe(1) for more.\n",
	      f);
}

enum { MODE_CONVERT, MODE_DUMP, MODE_DUMP_CFI, MODE_VERIFY, MODE_STATS };
enum {
	OPT_DUMP = 256, OPT_DUMP_CFI, OPT_VERIFY, OPT_CFI_FROM, OPT_DEBUG_FRAME,
	OPT_FILES_FROM, OPT_STATS, OPT_JSON, OPT_SFRAME_VERSION, OPT_SHARE_FRES,
	OPT_OBJECTS,
	OPT_NO_SHARE_FRES,
	OPT_REQUIRE_SFRAME, OPT_DEBUG_ROOT, OPT_DEBUG_FILE, OPT_NO_SYNC,
};

static int usage_error(const char *fmt, const char *arg)
{
	fputs("eh2sframe: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'eh2sframe --help' for more information.\n", stderr);
	return 2;
}

static bool parse_int(const char *s, long lo, long hi, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

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
		{"recursive", no_argument, NULL, 'r'},
		{"objects", no_argument, NULL, OPT_OBJECTS},
		{"jobs", required_argument, NULL, 'j'},
		{"dump", no_argument, NULL, OPT_DUMP},
		{"dump-cfi", no_argument, NULL, OPT_DUMP_CFI},
		{"verify", no_argument, NULL, OPT_VERIFY},
		{"cfi-from", required_argument, NULL, OPT_CFI_FROM},
		{"debug-frame", no_argument, NULL, OPT_DEBUG_FRAME},
		{"files-from", required_argument, NULL, OPT_FILES_FROM},
		{"stats", no_argument, NULL, OPT_STATS},
		{"json", no_argument, NULL, OPT_JSON},
		{"sframe-version", required_argument, NULL, OPT_SFRAME_VERSION},
		{"share-fres", no_argument, NULL, OPT_SHARE_FRES},
		{"no-share-fres", no_argument, NULL, OPT_NO_SHARE_FRES},
		{"require-sframe", no_argument, NULL, OPT_REQUIRE_SFRAME},
		{"debug-root", required_argument, NULL, OPT_DEBUG_ROOT},
		{"debug-file", required_argument, NULL, OPT_DEBUG_FILE},
		{"no-sync", no_argument, NULL, OPT_NO_SYNC},
		{NULL, 0, NULL, 0},
	};
	cli_opts o;
	int mode = MODE_CONVERT, c, nmodes = 0;

	memset(&o, 0, sizeof o);
	o.jobs = 1;
	/* No more --debug-root values than arguments. */
	const char **roots = calloc((size_t)argc, sizeof *roots);
	if (!roots) {
		cli_error(NULL, "out of memory");
		return 1;
	}
	o.debug_roots = roots;
	while ((c = getopt_long(argc, argv, "o:ifqvhVrj:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case 'i': o.in_place = true; break;
		case 'f': o.force = true; break;
		case 'q': o.quiet = true; break;
		case 'v': o.verbose++; break;
		case 'h': usage(stdout); return 0;
		case 'V':
			printf("eh2sframe %s\nSFrame output: version 3 (2 with "
			       "--sframe-version=2)\n", eh2s_version());
			return 0;
		case 'r': o.recursive = true; break;
		case 'j':
			if (!parse_int(optarg, 1, 1024, &o.jobs))
				return usage_error("invalid job count '%s'", optarg);
			break;
		case OPT_DUMP: mode = MODE_DUMP; nmodes++; break;
		case OPT_DUMP_CFI: mode = MODE_DUMP_CFI; nmodes++; break;
		case OPT_VERIFY: mode = MODE_VERIFY; nmodes++; break;
		case OPT_STATS: mode = MODE_STATS; nmodes++; break;
		case OPT_CFI_FROM: o.cfi_from = optarg; break;
		case OPT_DEBUG_FRAME: o.debug_frame = true; break;
		case OPT_FILES_FROM: o.files_from = optarg; break;
		case OPT_JSON: o.json = true; break;
		case OPT_SFRAME_VERSION:
			if (!parse_int(optarg, 2, 3, &o.sframe_version))
				return usage_error("unsupported SFrame version '%s' "
						   "(2 or 3)", optarg);
			break;
		case OPT_SHARE_FRES: o.share_fres = 1; break;
		case OPT_OBJECTS: o.objects = true; break;
		case OPT_NO_SHARE_FRES: o.share_fres = -1; break;
		case OPT_REQUIRE_SFRAME: o.require_sframe = true; break;
		case OPT_DEBUG_ROOT: roots[o.ndebug_roots++] = optarg; break;
		case OPT_DEBUG_FILE: o.debug_file = optarg; break;
		case OPT_NO_SYNC: o.no_sync = true; break;
		default:
			fputs("Try 'eh2sframe --help' for more information.\n", stderr);
			return 2;
		}
	}
	o.files = argv + optind;
	o.nfiles = argc - optind;
	if (nmodes > 1)
		return usage_error("%s", "give at most one of --dump, --dump-cfi, "
				   "--verify, --stats");
	if (o.json && mode != MODE_STATS)
		return usage_error("%s", "--json goes with --stats");
	if (o.cfi_from && mode != MODE_VERIFY)
		return usage_error("%s", "--cfi-from goes with --verify");
	if ((o.ndebug_roots || o.debug_file) && (!o.in_place || o.output))
		return usage_error("%s", "--debug-root and --debug-file go with "
				   "--in-place (the debug file of a file "
				   "converted to -o OUT is still its input's)");
	if (o.no_sync && !o.in_place)
		return usage_error("%s", "--no-sync goes with --in-place (an -o "
				   "OUT output is never synced)");
	if (o.debug_file && (o.recursive || o.files_from || o.nfiles != 1 ||
			     o.ndebug_roots))
		return usage_error("%s", "--debug-file names the debug file of "
				   "exactly one FILE (trees: --debug-root)");
	if (mode != MODE_CONVERT &&
	    (o.output || o.in_place || o.recursive || o.files_from))
		return usage_error("%s", "-o, --in-place, -r and --files-from "
				   "convert; they do not go with --dump, "
				   "--dump-cfi, --verify or --stats");
	if (o.recursive || o.files_from) {
		if (!o.in_place || o.output)
			return usage_error("%s", "-r and --files-from need "
					   "--in-place (and no -o)");
		if (o.nfiles == 0 && !o.files_from)
			return usage_error("%s", "no input files");
		return cmd_tree(&o);
	}
	if (o.jobs != 1)
		return usage_error("%s", "-j goes with -r or --files-from");
	if (o.nfiles == 0)
		return usage_error("%s", "no input files");
	switch (mode) {
	case MODE_DUMP: return cmd_dump_sframe(&o);
	case MODE_DUMP_CFI: return cmd_dump_cfi(&o);
	case MODE_VERIFY: return cmd_verify(&o);
	case MODE_STATS: return cmd_stats(&o);
	default: break;
	}
	if (o.in_place == (o.output != NULL))
		return usage_error("%s", "give exactly one of -o OUT or --in-place");
	if (o.output && o.nfiles != 1)
		return usage_error("%s", "-o takes exactly one input file");
	if (o.output && !*o.output)
		return usage_error("%s", "-o needs a file name, not an empty one");
	return cmd_convert(&o);
}
