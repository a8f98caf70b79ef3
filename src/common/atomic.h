/* Writing a file through a temporary file in its directory that is
 * renamed over it only when everything succeeded: a failed or interrupted
 * write never leaves a half-written file, and an input rewritten in place
 * is unchanged on failure. The one way eh2sframe replaces a file. */
#ifndef E2S_ATOMIC_H
#define E2S_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "err.h"

typedef struct {
	int fd;       /* the temporary file, open for writing */
	char *tmp;    /* its path (".NAME.e2sXXXXXX" next to path) */
	char *path;   /* the file it becomes */
	bool direct;  /* tmp is path itself (e2s_atomic_begin_new) */
} e2s_atomic;

/* Where an output named path is written. A symbolic link is followed
 * (the link stays, as cp and objcopy leave it): *target is the file it
 * names. A name that is not a regular file (a device, a FIFO, a socket:
 * /dev/null, /dev/stdout) is written into, as cp does, not replaced:
 * *stream is set and *target is path. A directory, a link to nothing or
 * an empty name is an error. *target is the caller's to free. */
e2s_err e2s_out_target(const char *path, char **target, bool *stream,
		       e2s_diag *d);
/* n bytes from p into the existing non-regular file path (*stream). */
e2s_err e2s_write_stream(const char *path, const void *p, size_t n,
			 e2s_diag *d);
/* Create the temporary file for path. On failure nothing is left. */
e2s_err e2s_atomic_begin(e2s_atomic *a, const char *path, e2s_diag *d);
/* Create path itself, which must not exist: a caller's own temporary
 * name (a staging name it renames later), written as the temporary file
 * is and removed likewise on failure; commit renames nothing. A second
 * temporary file would cost a creation and a rename in a directory that
 * other writers may be waiting for. */
e2s_err e2s_atomic_begin_new(e2s_atomic *a, const char *path, e2s_diag *d);
/* The temporary file will hold size bytes, written in order from its
 * start: where that is cheaper (ext4), its blocks are allocated at once.
 * A hint: nothing fails if it cannot be done. */
void e2s_atomic_reserve(e2s_atomic *a, uint64_t size);
/* Give it, with owner, owner's user and group (EPERM ignored unless
 * root: an unprivileged user cannot give files away), with attrs_from,
 * that file's extended attributes (those a user may not set passed over
 * likewise), then mode (permission bits, set-user-ID ones included: set
 * last, as a chown clears them); fsync it when sync, close it and rename
 * it over path (not direct). On failure the temporary file is removed and
 * path is as it was. a is released either way. */
e2s_err e2s_atomic_commit(e2s_atomic *a, mode_t mode, const struct stat *owner,
			  const char *attrs_from, bool sync, e2s_diag *d);
/* Give up: remove the temporary file. Safe after commit and on a zeroed
 * or failed a. */
void e2s_atomic_abort(e2s_atomic *a);

#endif
