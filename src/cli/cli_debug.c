/* Separate debug files of converted files (--in-place): found by build ID
 * as ROOT/usr/lib/debug/.build-id/xx/rest.debug, where ROOT is the tree
 * being converted (-r DIR) or a --debug-root, or by the name in the
 * file's .gnu_debuglink inside its tree, or named by --debug-file; then
 * made to describe the converted file (eh2s_update_debug_file). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eh2sframe.h"
#include "cli.h"

/* path, its symbolic links resolved as if root were "/"; true when that
 * ends at a regular file inside root (out: its real path). A link must
 * not lead out of the tree: the file found there gets rewritten. */
static bool resolve_in(const char *root, const char *path, char *out)
{
	char cur[PATH_MAX], next[PATH_MAX], tgt[PATH_MAX], rroot[PATH_MAX];
	struct stat st;
	if ((size_t)snprintf(cur, sizeof cur, "%s", path) >= sizeof cur)
		return false;
	for (int hops = 0;; hops++) {
		if (hops > 40 || lstat(cur, &st) != 0)
			return false;
		if (S_ISREG(st.st_mode))
			break;
		if (!S_ISLNK(st.st_mode))
			return false;
		ssize_t n = readlink(cur, tgt, sizeof tgt - 1);
		if (n <= 0)
			return false;
		tgt[n] = '\0';
		int w;
		if (tgt[0] == '/') {
			w = snprintf(next, sizeof next, "%s%s", root, tgt);
		} else {
			char *slash = strrchr(cur, '/');
			w = slash ? snprintf(next, sizeof next, "%.*s/%s",
					     (int)(slash - cur), cur, tgt)
				  : snprintf(next, sizeof next, "%s", tgt);
		}
		if (w < 0 || (size_t)w >= sizeof next)
			return false;
		memcpy(cur, next, (size_t)w + 1);
	}
	if (!realpath(cur, out) || !realpath(root, rroot))
		return false;
	size_t l = strlen(rroot);
	return strncmp(out, rroot, l) == 0 && (out[l] == '/' || l == 1);
}

static bool find_debug(const char *root, const char *id, char *out)
{
	char p[PATH_MAX];
	if (!root || strlen(id) < 3)
		return false;
	if ((size_t)snprintf(p, sizeof p, "%s/usr/lib/debug/.build-id/%.2s/%s.debug",
			     root, id, id + 2) >= sizeof p)
		return false;
	return resolve_in(root, p, out);
}

/* By the name in .gnu_debuglink, where gdb looks for it: next to the
 * file, in .debug/ there, and under usr/lib/debug/ plus the file's
 * directory (RPM's find-debuginfo names them so; rpmbuild adds the
 * build-id links only when it packages the files). file lies in tree
 * root; a candidate must carry the file's build ID when it has one. */
static bool find_linked(const char *root, const char *file,
			const eh2s_debug_refs *refs, char *out)
{
	char p[PATH_MAX], self[PATH_MAX];
	size_t rl = root ? strlen(root) : 0;
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (!root || strncmp(file, root, rl) != 0 || file[rl] != '/' ||
	    !realpath(file, self))
		return false;
	const char *rel = file + rl;
	while (*rel == '/')
		rel++;
	const char *slash = strrchr(rel, '/');
	int dl = slash ? (int)(slash - rel) : 0;
	static const char *const fmt[] = {"%.*s/%.*s/%s", "%.*s/%.*s/.debug/%s",
					  "%.*s/usr/lib/debug/%.*s/%s"};
	for (size_t k = 0; k < sizeof fmt / sizeof fmt[0]; k++) {
		eh2s_debug_refs dr;
		eh2s_error err;
		int w = snprintf(p, sizeof p, fmt[k], (int)rl, root, dl, rel,
				 refs->debuglink);
		if (w < 0 || (size_t)w >= sizeof p || !resolve_in(root, p, out) ||
		    strcmp(out, self) == 0)
			continue;
		eh2s_debug_refs_init(&dr);
		if (eh2s_debug_refs_read(out, &dr, &err) == EH2S_OK &&
		    strcmp(dr.build_id, refs->build_id) == 0)
			return true;
	}
	return false;
}

int cli_debug_find(const cli_opts *o, const char *file, const char *root,
		   char *debug, char *msg, size_t len)
{
	eh2s_debug_refs refs;
	eh2s_error err;
	bool found = false;

	msg[0] = debug[0] = '\0';
	eh2s_debug_refs_init(&refs);
	if (o->debug_file) {
		if ((size_t)snprintf(debug, PATH_MAX, "%s", o->debug_file) >= PATH_MAX)
			return CLI_DEBUG_FAILED;
		return CLI_DEBUG_FOUND;
	}
	if (eh2s_debug_refs_read(file, &refs, &err) != EH2S_OK || !refs.linked)
		return CLI_DEBUG_NONE;
	found = refs.build_id[0] && find_debug(root, refs.build_id, debug);
	for (int i = 0; !found && refs.build_id[0] && i < o->ndebug_roots; i++)
		found = find_debug(o->debug_roots[i], refs.build_id, debug);
	if (!found && refs.debuglink[0])
		found = find_linked(root, file, &refs, debug);
	if (found)
		return CLI_DEBUG_FOUND;
	if (!refs.debuglink[0])
		return CLI_DEBUG_NONE;
	snprintf(msg, len, "no debug file with build ID %s in the tree%s (its "
		 ".gnu_debuglink names %s): a debug file split off before this "
		 "conversion no longer matches it",
		 refs.build_id[0] ? refs.build_id : "(none)",
		 o->ndebug_roots ? " or a --debug-root" : "", refs.debuglink);
	return CLI_DEBUG_NOT_FOUND;
}

int cli_debug_update(const char *file, const char *debug, char *msg,
		     size_t len)
{
	eh2s_debug_result res;
	eh2s_error err;

	msg[0] = '\0';
	eh2s_debug_result_init(&res);
	if (eh2s_update_debug_file(file, debug, &res, &err) != EH2S_OK) {
		snprintf(msg, len, "%s", err.message);
		return CLI_DEBUG_FAILED;
	}
	if (!res.changed && !res.crc_updated)
		return CLI_DEBUG_MATCHED;
	if (res.changed)
		snprintf(msg, len, "the file's program headers, %zu section "
			 "header%s added, %zu section address%s changed%s",
			 res.added, res.added == 1 ? "" : "s", res.moved,
			 res.moved == 1 ? "" : "es",
			 res.crc_updated ? "; .gnu_debuglink CRC updated" : "");
	else
		snprintf(msg, len, ".gnu_debuglink CRC updated");
	return CLI_DEBUG_UPDATED;
}
