/* Tree mode: converted files staged next to their originals, then a
 * batch at a time synced (once per filesystem) and renamed over them,
 * as dpkg installs a package. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tree.h"

/* A name next to path for its converted file (*stage), which the
 * conversion creates and writes directly (eh2s_file_opts.new_out). Not
 * reserved by a file of its own, which would cost a second new inode
 * per file. N is the item's index, or when a file of
 * that name exists (left by an earlier run of this process ID, as
 * happens in containers, and warned about as left alone) the index plus
 * a multiple of the item count: names stay distinct between items
 * without a lock. Short, whatever the length of path's own name. */
int tree_stage_file(const char *path, pid_t pid, size_t index,
		    size_t nitems, char **stage, char *why, size_t len)
{
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path) : 1;
	const char *dir = slash ? path : ".";
	size_t n = strlen(path) + 64;
	char *name = malloc(n);
	struct stat st;
	if (!name) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	for (size_t k = 0; k < 1000; k++) {
		snprintf(name, n, "%.*s/.e2stage.%ld.%zu", dlen, dir,
			 (long)pid, index + k * nitems);
		/* Another error is the conversion's to report. */
		if (lstat(name, &st) != 0) {
			*stage = name;
			return 0;
		}
	}
	snprintf(why, len, "no free staging name: %s and 999 others exist",
		 name);
	free(name);
	return -1;
}

void tree_unstage(t_item *it)
{
	if (it->stage)
		unlink(it->stage);
	free(it->stage);
	it->stage = NULL;
}

/* A batch ends after this many bytes of files: what it stages is on
 * disk twice until it is committed. */
#define BATCH_BYTES ((off_t)256 << 20)

size_t tree_batch_end(const t_run *r, size_t from)
{
	off_t bytes = 0;
	size_t i = from;
	while (i < r->n && (i == from || bytes < BATCH_BYTES))
		bytes += r->items[i++].size;
	return i;
}

/* Sync every filesystem a staged file of [from, to) is on, once. */
static int sync_staged(t_run *r, size_t from, size_t to, char *why, size_t len)
{
	dev_t done[16];
	size_t nd = 0;
	for (size_t i = from; i < to; i++) {
		const t_item *it = &r->items[i];
		size_t k = 0;
		if (!it->stage)
			continue;
		while (k < nd && done[k] != it->dev)
			k++;
		if (k < nd)
			continue;
		int fd = open(it->stage, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || syncfs(fd) != 0) {
			snprintf(why, len, "syncing the filesystem of %s: %s",
				 it->stage, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
		if (nd < sizeof done / sizeof *done)
			done[nd++] = it->dev;
	}
	return 0;
}

/* Give the other name of a converted hard-linked file the new inode:
 * link to a temporary name in its directory, then rename over it. */
static int relink(const char *leader, const char *path)
{
	char dcopy[PATH_MAX], bcopy[PATH_MAX], tmp[PATH_MAX + 64];
	snprintf(dcopy, sizeof dcopy, "%s", path);
	snprintf(bcopy, sizeof bcopy, "%s", path);
	for (unsigned k = 0; k < 100; k++) {
		snprintf(tmp, sizeof tmp, "%s/.%s.e2slink%u.%ld", dirname(dcopy),
			 basename(bcopy), k, (long)getpid());
		if (link(leader, tmp) == 0)
			break;
		if (errno != EEXIST)
			return -1;
	}
	if (rename(tmp, path) != 0) {
		int er = errno;
		unlink(tmp);
		errno = er;
		return -1;
	}
	return 0;
}

/* Rename the staged files of [from, to) over their originals, after
 * syncing them unless --no-sync (or, on a failed sync or an interrupt,
 * remove them). */
void tree_commit(t_run *r, size_t from, size_t to)
{
	char why[PATH_MAX + 64];
	int bad = r->stopped || r->o->no_sync
			  ? 0
			  : sync_staged(r, from, to, why, sizeof why);
	for (size_t i = from; i < to; i++) {
		t_item *it = &r->items[i];
		if (!it->stage)
			continue;
		if (r->stopped || bad) {
			tree_unstage(it);
			it->outcome = T_FAILED;
			if (bad)
				cli_error(it->path, "not replaced: %s", why);
			continue;
		}
		if (rename(it->stage, it->path) != 0) {
			cli_error(it->path, "not replaced: rename: %s",
				  strerror(errno));
			tree_unstage(it);
			it->outcome = T_FAILED;
			continue;
		}
		free(it->stage);
		it->stage = NULL;
	}
	/* The other names of the files just replaced take their new inode
	 * now, not at the end of the run (which an interrupt may not see). */
	for (size_t i = 0; i < r->n; i++) {
		t_item *it = &r->items[i];
		if (it->outcome != T_LINK || it->leader < from || it->leader >= to)
			continue;
		const t_item *l = &r->items[it->leader];
		if (l->outcome == T_PATCHED && relink(l->path, it->path)) {
			cli_error(it->path, "cannot relink to %s: %s", l->path,
				  strerror(errno));
			it->outcome = T_FAILED;
		}
	}
}
