/* Command-line options shared by the eh2sframe sub-commands. main.c
 * parses; each cmd_*.c implements one mode and returns an exit status
 * (0 ok, 1 a file failed / mismatch, 2 usage). */
#ifndef E2S_CLI_H
#define E2S_CLI_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
	const char *output;      /* -o FILE */
	bool in_place;           /* --in-place */
	bool no_sync;            /* --no-sync: no sync before a file
	                          * replaces its original */
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
	bool objects;            /* --objects: trees convert link-input
	                          * relocatable objects too */
	const char *files_from;  /* --files-from FILE ("-": stdin) */
	int jobs;                /* -j N: worker threads (1 = serial) */
	/* --stats (cmd_stats.c). */
	bool json;               /* --json */
	/* Encoder choices: 0 = default (3); 2 = SFrame V2. */
	int sframe_version;      /* --sframe-version N */
	int share_fres;          /* 0: the default (eh2s_convert_opts);
	                          * 1: --share-fres; -1: --no-share-fres */
	/* Separate debug files (cli_debug.c), with --in-place. */
	const char **debug_roots; /* --debug-root DIR (repeatable) */
	int ndebug_roots;
	const char *debug_file;  /* --debug-file FILE: the one FILE's */
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

/* cli_debug.c: before file is converted in place, find its separate
 * debug file -- o->debug_file, or by build ID under root (the tree being
 * converted; may be NULL) and o->debug_roots, or by its .gnu_debuglink
 * (FOUND, NOT_FOUND with msg, NONE); its symbols then count for what the
 * rewrite may move (eh2s_file_opts.symbols_from). After the conversion
 * (or when the file already had .sframe), make it match the file
 * (UPDATED, MATCHED, FAILED with msg). debug has PATH_MAX bytes. */
enum {
	CLI_DEBUG_NONE,      /* not a linked file, or no debug link/file */
	CLI_DEBUG_UPDATED,   /* rewritten (or its CRC in file's link fixed) */
	CLI_DEBUG_MATCHED,   /* already matched */
	CLI_DEBUG_NOT_FOUND, /* file has a .gnu_debuglink, none found */
	CLI_DEBUG_FAILED,    /* found, could not be updated */
	CLI_DEBUG_FOUND,     /* found, not updated yet (cli_debug_find) */
};
int cli_debug_find(const cli_opts *o, const char *file, const char *root,
		   char *debug, char *msg, size_t len);
int cli_debug_update(const char *file, const char *debug, char *msg,
		     size_t len);

#endif
