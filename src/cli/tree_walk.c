/* Tree mode: collecting the files (fts, physical walk: no symbolic link
 * is followed), the leftovers of interrupted runs left alone, and hard
 * links grouped by inode. */
#include <errno.h>
#include <fts.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tree.h"

static int add_item(t_run *r, const char *path, const char *root,
		    const struct stat *st)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		t_item *p = realloc(r->items, cap * sizeof *p);
		if (!p)
			return -1;
		r->items = p;
		r->cap = cap;
	}
	t_item *it = &r->items[r->n];
	memset(it, 0, sizeof *it);
	if (!(it->path = strdup(path)))
		return -1;
	it->root = root;
	it->dev = st->st_dev;
	it->ino = st->st_ino;
	it->size = st->st_size;
	it->outcome = T_COUNT; /* not reached yet */
	it->leader = r->n++;
	return 0;
}

/* The number of decimal digits s starts with. */
static size_t digits(const char *s)
{
	size_t n = 0;
	while (s[n] >= '0' && s[n] <= '9')
		n++;
	return n;
}

/* mkstemp's alphabet, whatever the locale. */
static bool mkstemp_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/* Is name one this program gives a file while it writes it: a staged
 * file (.e2stage.PID.N, stage_file), the temporary file of any write
 * (.NAME.e2sXXXXXX, src/common/atomic.c) or the second name of a file
 * being relinked (.NAME.e2slinkK.PID, relink)? *pid is the process ID
 * the name carries, 0 if none. Exact: .e2stage.abc.1 or .x.e2sABC is
 * someone else's file. */
static bool leftover_name(const char *name, long *pid)
{
	size_t len = strlen(name), d, e;
	const char *p;
	*pid = 0;
	if (name[0] != '.')
		return false;
	if (strncmp(name, ".e2stage.", 9) == 0) {
		p = name + 9;
		d = digits(p);
		if (d && p[d] == '.' && (e = digits(p + d + 1)) &&
		    p[d + 1 + e] == '\0') {
			*pid = d <= 9 ? strtol(p, NULL, 10) : 0;
			return true;
		}
	}
	/* "." NAME ".e2s" and six characters, NAME not empty */
	if (len >= 12 && memcmp(name + len - 10, ".e2s", 4) == 0) {
		bool all = true;
		for (size_t i = len - 6; i < len; i++)
			all = all && mkstemp_char(name[i]);
		if (all)
			return true;
	}
	/* "." NAME ".e2slink" K "." PID, read from the end */
	d = 0;
	while (d < len && name[len - 1 - d] >= '0' && name[len - 1 - d] <= '9')
		d++;
	if (d == 0 || d + 1 >= len || name[len - 1 - d] != '.')
		return false;
	e = 0;
	while (d + 1 + e < len && name[len - 2 - d - e] >= '0' &&
	       name[len - 2 - d - e] <= '9')
		e++;
	size_t link = len - 1 - d - e; /* where K ends ".e2slink" */
	if (e == 0 || link < 2 + 8 || memcmp(name + link - 8, ".e2slink", 8) != 0)
		return false;
	*pid = d <= 9 ? strtol(name + len - d, NULL, 10) : 0;
	return true;
}

/* A file of an interrupted run (leftover_name) is left alone, with a
 * warning: removing it on a name match could lose a user's file. Whether
 * the process that named it still exists tells a killed run from one at
 * work on the same tree (or a reused ID). Single-threaded: the walk. */
static bool leftover(t_run *r, const char *path, const char *name)
{
	long pid;
	char state[96] = "";
	if (!leftover_name(name, &pid))
		return false;
	r->leftovers++;
	if (r->o->quiet)
		return true;
	/* Our own ID: an earlier process had it, as the walk stages
	 * nothing. */
	if (pid > 0 && pid != (long)getpid() &&
	    (kill((pid_t)pid, 0) == 0 || errno == EPERM))
		snprintf(state, sizeof state, " (a process %ld is running: "
			 "another run at work?)", pid);
	else if (pid > 0)
		snprintf(state, sizeof state, " (process %ld has ended)", pid);
	fprintf(stderr, "eh2sframe: %s: warning: looks left by an interrupted "
		"eh2sframe run%s; left alone, not converted\n", path, state);
	return true;
}

static int by_name(const FTSENT **a, const FTSENT **b)
{
	return strcmp((*a)->fts_name, (*b)->fts_name);
}

/* One operand: a regular file, or with -r a directory to walk. Returns
 * the number of failures (unreadable entries). */
int tree_collect(t_run *r, const char *path)
{
	struct stat st;
	int bad = 0;
	if (lstat(path, &st) != 0) {
		cli_error(path, "%s", strerror(errno));
		return 1;
	}
	if (S_ISLNK(st.st_mode)) {
		if (r->o->verbose)
			fprintf(stderr, "%s: skipped: symbolic link\n", path);
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		const char *slash = strrchr(path, '/');
		if (leftover(r, path, slash ? slash + 1 : path))
			return 0;
		return add_item(r, path, NULL, &st) ? (cli_error(path, "out of memory"), 1) : 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (r->o->verbose)
			fprintf(stderr, "%s: skipped: not a regular file\n", path);
		return 0;
	}
	if (!r->o->recursive) {
		cli_error(path, "is a directory (use -r)");
		return 1;
	}
	char **roots = realloc(r->roots, (r->nroots + 1) * sizeof *roots);
	if (roots)
		r->roots = roots;
	if (!roots || !(r->roots[r->nroots] = strdup(path))) {
		cli_error(path, "out of memory");
		return 1;
	}
	const char *root = r->roots[r->nroots++];
	char *argv[2] = {(char *)path, NULL};
	FTS *fts = fts_open(argv, FTS_PHYSICAL | FTS_NOCHDIR, by_name);
	if (!fts) {
		cli_error(path, "%s", strerror(errno));
		return 1;
	}
	FTSENT *e;
	while ((e = fts_read(fts)) != NULL) {
		switch (e->fts_info) {
		case FTS_F:
			/* The walk ends before anything is staged, so this run's
			 * own files are never among these. */
			if (leftover(r, e->fts_path, e->fts_name))
				break;
			if (add_item(r, e->fts_path, root, e->fts_statp)) {
				cli_error(e->fts_path, "out of memory");
				bad++;
			}
			break;
		case FTS_DNR:
		case FTS_ERR:
		case FTS_NS:
			cli_error(e->fts_path, "%s", strerror(e->fts_errno));
			bad++;
			break;
		case FTS_SL:
		case FTS_SLNONE:
			if (r->o->verbose > 1)
				fprintf(stderr, "%s: skipped: symbolic link\n",
					e->fts_path);
			break;
		default:
			break;
		}
	}
	fts_close(fts);
	return bad;
}

int tree_read_list(t_run *r, const char *list)
{
	FILE *fp = strcmp(list, "-") == 0 ? stdin : fopen(list, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int bad = 0;
	if (!fp) {
		cli_error(list, "%s", strerror(errno));
		return 1;
	}
	while ((len = getline(&line, &cap, fp)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len == 0)
			continue;
		bad += tree_collect(r, line);
	}
	free(line);
	if (ferror(fp)) {
		cli_error(list, "read error");
		bad++;
	}
	if (fp != stdin)
		fclose(fp);
	return bad;
}

static int by_inode(const void *a, const void *b, void *ctx)
{
	const t_item *items = ctx;
	const t_item *x = &items[*(const size_t *)a], *y = &items[*(const size_t *)b];
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* Mark every name of an inode but the first as a link of the first. */
int tree_group_links(t_run *r)
{
	size_t *ix = malloc((r->n ? r->n : 1) * sizeof *ix);
	if (!ix)
		return -1;
	for (size_t i = 0; i < r->n; i++)
		ix[i] = i;
	qsort_r(ix, r->n, sizeof *ix, by_inode, r->items);
	for (size_t i = 1; i < r->n; i++) {
		t_item *a = &r->items[ix[i - 1]], *b = &r->items[ix[i]];
		if (a->dev == b->dev && a->ino == b->ino) {
			b->leader = a->leader;
			b->outcome = T_LINK;
		}
	}
	free(ix);
	return 0;
}
