/* Command-line options shared by the eh2sframe sub-commands. main.c
 * parses; each cmd_*.c implements one mode and returns an exit status
 * (0 ok, 1 a file failed / mismatch, 2 usage). */
#ifndef E2S_CLI_H
#define E2S_CLI_H

#include <stdbool.h>

typedef struct {
	const char *output;      /* -o FILE */
	bool in_place;           /* --in-place */
	bool force;              /* --force */
	bool require_sframe;     /* --require-sframe: nothing to convert is
	                          * an error */
	bool quiet;              /* -q, --quiet */
	int verbose;             /* -v, --verbose (repeatable) */
	const char *cfi_from;    /* --verify --cfi-from ORIG */
	bool debug_frame;        /* --debug-frame: read .debug_frame */
	char **files;            /* positional arguments */
	int nfiles;
	/* Tree mode (cmd_tree.c). */
	bool recursive;          /* -r, --recursive: walk directories */
	const char *files_from;  /* --files-from FILE ("-": stdin) */
	int jobs;                /* -j N: worker threads (1 = serial) */
	/* --stats (cmd_stats.c). */
	bool json;               /* --json */
	/* Encoder choices: 0 = default (3); 2 = SFrame V2. */
	int sframe_version;      /* --sframe-version N */
	bool share_fres;         /* --share-fres */
} cli_opts;

/* "eh2sframe: FILE: message" on stderr. */
void cli_error(const char *file, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

int cmd_dump_cfi(const cli_opts *o);   /* cmd_dump_cfi.c */
int cmd_dump_sframe(const cli_opts *o); /* cmd_sframe.c: --dump */
int cmd_verify(const cli_opts *o);     /* cmd_sframe.c: --verify */
int cmd_convert(const cli_opts *o);    /* cmd_convert.c: -o / --in-place */
int cmd_tree(const cli_opts *o);       /* cmd_tree.c: --in-place -r /
                                        * --files-from */
int cmd_stats(const cli_opts *o);      /* cmd_stats.c: --stats */

#endif
