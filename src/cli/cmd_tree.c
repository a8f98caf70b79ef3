/* Tree mode for package builds: eh2sframe --in-place -r DIR... and
 * --files-from LIST. Collects every regular file (fts, physical walk: no
 * symbolic link is followed), converts each inode once, relinks the other
 * names of hard-linked files, and ends with a summary. A file that is not
 * a convertible ELF file is skipped, not an error; a file that fails does
 * not stop the others. The separate debug file of each program and
 * library (by build ID under DIR/usr/lib/debug/.build-id or a
 * --debug-root) is made to match it (cli_debug.c).
 *
 * Files are replaced a batch at a time, as dpkg installs a package: each
 * converted file is staged next to its original, every filesystem written
 * to is synced once, then the staged files are renamed over the
 * originals. A crash leaves every file either old or new (never a new
 * name on unwritten data), at the cost of one sync per batch instead of
 * one per file (none with --no-sync, for trees of build products that
 * can be made again); a failure or an interrupt (SIGINT, SIGTERM, SIGHUP,
 * blocked meanwhile and acted on between files) removes what was staged
 * and leaves the originals as they were.
 *
 * What a run killed outright (SIGKILL, a power loss) leaves behind, its
 * staged and temporary files, a later run leaves alone: it names each
 * and counts them, but neither converts nor removes a user's file on the
 * strength of its name. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "eh2sframe.h"
#include "../abi/abi.h"
#include "cli.h"

/* What happened to a file; the order is the summary's. */
enum {
	T_PATCHED, T_HAD_SFRAME, T_NO_CFI, T_NO_FUNCS, T_UNSUPPORTED,
	T_ARCHIVE, T_OBJECT, T_NOT_ELF, T_FAILED, T_LINK, T_COUNT
};
static const char *const t_words[T_COUNT] = {
	"patched", "already had .sframe", "no CFI", "no convertible function",
	"unsupported machine or ELF type", "archives",
	"relocatable objects (link inputs)", "not ELF", "failed",
	"hard links of other files",
};
/* Debug file outcomes (CLI_DEBUG_*), as the summary names them. */
static const char *const d_words[] = {
	NULL, "updated", "already matching",
	"not found (files with a .gnu_debuglink; -v names them)", "failed",
};

typedef struct {
	char *path;
	const char *root;    /* the tree (-r DIR) it was found in, or NULL */
	dev_t dev;
	ino_t ino;
	size_t leader;       /* index of the first name of this inode */
	off_t size;
	char *stage;         /* the converted file, not yet renamed over path */
	char *debug_path;    /* its debug file, to update once it is renamed */
	int outcome;
	int debug;           /* CLI_DEBUG_* */
	size_t converted, nfdes, unrelocated;
	size_t counts[EH2S_SKIP_COUNT]; /* eh2s_summary.by_reason */
} t_item;

typedef struct {
	const cli_opts *o;
	t_item *items;
	size_t n, cap;
	size_t next, end, done; /* work queue: [next, end) (under lock) */
	bool debug_pass;     /* the queue's work: conversions, or the debug
	                      * files of the files just renamed */
	sigset_t stop_on;    /* signals that end the run between files */
	bool stopped;        /* one of them arrived */
	pthread_mutex_t lock;
	/* One debug file update at a time: two copies of a program share
	 * one debug file. */
	pthread_mutex_t debug_lock;
	char **roots;        /* the directories walked (owned) */
	size_t nroots;
	size_t leftovers;    /* files of an interrupted run, left alone */
	bool tty;
	struct timespec last;
	bool progress_shown;
} t_run;

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
static int collect(t_run *r, const char *path)
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

static int read_list(t_run *r, const char *list)
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
		bad += collect(r, line);
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
static int group_links(t_run *r)
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

static uint64_t get_n(const unsigned char *p, unsigned n, bool be)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[be ? n - 1 - i : i] << (8 * i);
	return v;
}

/* A separate debug file (objcopy --only-keep-debug, find-debuginfo):
 * its code sections are SHT_NOBITS. Such files sit in package trees
 * (RPM's /usr/lib/debug) and have no CFI contents to convert. */
static bool debug_only(int fd, const unsigned char *h, bool be)
{
	uint64_t shoff = get_n(h + 40, 8, be);
	unsigned shentsize = (unsigned)get_n(h + 58, 2, be);
	unsigned shnum = (unsigned)get_n(h + 60, 2, be);
	unsigned char sh[64 * 64]; /* headers read 64 at a time */
	if (shentsize != 64 || shnum == 0 || shnum > 65280 || shoff > INT64_MAX / 2)
		return false;
	for (unsigned i = 1, got = 0, base = 0; i < shnum; i++) {
		if (i >= base + got) {
			unsigned want = shnum - i < 64 ? shnum - i : 64;
			ssize_t n = pread(fd, sh, (size_t)want * 64,
					  (off_t)(shoff + (uint64_t)i * 64));
			if (n < 64)
				return false;
			base = i;
			got = (unsigned)n / 64;
		}
		const unsigned char *e = sh + (size_t)(i - base) * 64;
		uint32_t type = (uint32_t)get_n(e + 4, 4, be);
		uint64_t flags = get_n(e + 8, 8, be);
		if ((flags & SHF_EXECINSTR) && (flags & SHF_ALLOC))
			return type == SHT_NOBITS;
	}
	return false;
}

/* Cheap classification from the ELF header (and section headers), so
 * that non-ELF files are never read whole. */
/* A kernel module: loaded, not linked (Kbuild names them *.ko). */
static bool kernel_module_p(const char *path)
{
	size_t n = strlen(path);
	return n > 3 && strcmp(path + n - 3, ".ko") == 0;
}

static int classify(const char *path, bool objects, char *why, size_t len)
{
	unsigned char h[64];
	ssize_t n = -1;
	bool dbg = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, h, sizeof h);
		if (n == (ssize_t)sizeof h && memcmp(h, ELFMAG, SELFMAG) == 0 &&
		    h[EI_CLASS] == ELFCLASS64)
			dbg = debug_only(fd, h, h[EI_DATA] == ELFDATA2MSB);
		close(fd);
	}
	if (n < 0) {
		snprintf(why, len, "%s", strerror(errno));
		return T_FAILED;
	}
	/* Static libraries stay as they are: their members would carry V3
	 * sections that linkers before binutils 2.45 cannot merge; the
	 * programs linked from them get converted instead. */
	if (n >= 8 && (memcmp(h, "!<arch>\n", 8) == 0 ||
		       memcmp(h, "!<thin>\n", 8) == 0)) {
		snprintf(why, len, "static library (ar archive): not converted");
		return T_ARCHIVE;
	}
	if (n < 20 || memcmp(h, ELFMAG, SELFMAG) != 0) {
		snprintf(why, len, "not ELF");
		return T_NOT_ELF;
	}
	bool be = h[EI_DATA] == ELFDATA2MSB;
	unsigned type = be ? (unsigned)h[16] << 8 | h[17] : (unsigned)h[17] << 8 | h[16];
	unsigned mach = be ? (unsigned)h[18] << 8 | h[19] : (unsigned)h[19] << 8 | h[18];
	if (h[EI_CLASS] != ELFCLASS64) {
		snprintf(why, len, "unsupported: 32-bit ELF");
		return T_UNSUPPORTED;
	}
	if (!abi_has_sframe(abi_of_machine(mach))) {
		snprintf(why, len, "unsupported machine %u", mach);
		return T_UNSUPPORTED;
	}
	if (type != ET_EXEC && type != ET_DYN && type != ET_REL) {
		snprintf(why, len, "unsupported ELF type %u", type);
		return T_UNSUPPORTED;
	}
	if (dbg) {
		snprintf(why, len, "separate debug file (no CFI contents)");
		return T_NO_CFI;
	}
	/* Loose objects are link inputs like an archive's members (crt1.o
	 * of libc6-dev): GNU ld before 2.45 cannot merge their SFrame V3,
	 * and every program linked from them would say so. */
	if (type == ET_REL && !objects && !kernel_module_p(path)) {
		snprintf(why, len, "relocatable object (a link input): not "
				   "converted (--objects converts it)");
		return T_OBJECT;
	}
	return T_PATCHED;
}

static void clear_progress(t_run *r)
{
	if (r->progress_shown) {
		fputs("\r\033[K", stderr);
		r->progress_shown = false;
	}
}

/* Under r->lock. A progress line at most every 100 ms, on a terminal. */
static void progress(t_run *r, const char *path)
{
	struct timespec now;
	if (!r->tty || r->o->quiet)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long ms = (now.tv_sec - r->last.tv_sec) * 1000 +
		  (now.tv_nsec - r->last.tv_nsec) / 1000000;
	if (ms < 100 && r->done != r->n)
		return;
	r->last = now;
	fprintf(stderr, "\r\033[Keh2sframe: %zu/%zu %.60s", r->done, r->n, path);
	r->progress_shown = true;
}

/* A name next to path for its converted file (*stage), which the
 * conversion creates as it creates any output: through a temporary file
 * renamed to it. Not reserved by a file of its own, which would cost a
 * second new inode per file. N is the item's index, or when a file of
 * that name exists (left by an earlier run of this process ID, as
 * happens in containers, and warned about as left alone) the index plus
 * a multiple of the item count: names stay distinct between items
 * without a lock. Short, whatever the length of path's own name. */
static int stage_file(const char *path, size_t index, size_t nitems,
		      char **stage, char *why, size_t len)
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
			 (long)getpid(), index + k * nitems);
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

static void unstage(t_item *it)
{
	if (it->stage)
		unlink(it->stage);
	free(it->stage);
	it->stage = NULL;
}

/* Under r->lock: what happened to it's debug file, -v and errors. */
static void report_debug(t_run *r, const t_item *it, const char *debug,
			 const char *dmsg)
{
	const cli_opts *o = r->o;
	if (it->debug == CLI_DEBUG_FAILED) {
		clear_progress(r);
		cli_error(it->path, "debug file %s not updated: %s", debug, dmsg);
	} else if (o->verbose && it->debug == CLI_DEBUG_UPDATED) {
		clear_progress(r);
		fprintf(stderr, "%s: debug file %s updated: %s\n", it->path,
			debug, dmsg);
	} else if (o->verbose && it->debug == CLI_DEBUG_NOT_FOUND) {
		clear_progress(r);
		fprintf(stderr, "%s: warning: %s\n", it->path, dmsg);
	} else if (o->verbose > 1 && it->debug == CLI_DEBUG_MATCHED) {
		clear_progress(r);
		fprintf(stderr, "%s: debug file %s already matches\n",
			it->path, debug);
	}
}

static void convert_item(t_run *r, t_item *it)
{
	const cli_opts *o = r->o;
	char why[256];
	int kind = classify(it->path, o->objects, why, sizeof why);
	/* The separate debug file, found before the conversion: its
	 * symbols count for what the rewrite may move. */
	char debug[PATH_MAX], dmsg[512];
	int found = CLI_DEBUG_NONE;
	bool looked = false;

	if (kind == T_PATCHED &&
	    stage_file(it->path, (size_t)(it - r->items), r->n, &it->stage,
		       why, sizeof why) != 0)
		kind = T_FAILED;
	if (kind == T_PATCHED) {
		eh2s_file_opts fo;
		eh2s_convert_opts co;
		eh2s_summary sum;
		eh2s_error err;
		found = cli_debug_find(o, it->path, it->root, debug, dmsg,
				       sizeof dmsg);
		looked = true;
		eh2s_file_opts_init(&fo);
		eh2s_convert_opts_init(&co);
		eh2s_summary_init(&sum);
		sum.by_reason = it->counts;
		sum.by_reason_len = EH2S_SKIP_COUNT;
		if (found == CLI_DEBUG_FOUND)
			fo.symbols_from = debug;
		co.force = o->force;
		co.debug_frame = o->debug_frame;
		co.sframe_version = o->sframe_version;
		co.share_fres = o->share_fres;
		fo.convert = &co;
		/* In place, but into the stage: owner, mode and attributes
		 * are the original's, and it is not synced alone (commit). */
		fo.in_place = 1;
		fo.no_sync = o->no_sync;
		eh2s_status st = eh2s_convert_file(it->path, it->stage, &fo, &sum,
						   NULL, &err);
		if (st != EH2S_OK)
			unstage(it);
		/* classify() has rejected other machines and ELF classes, so
		 * UNSUPPORTED here is a limit (too large), a failure. */
		switch (st) {
		case EH2S_OK: kind = T_PATCHED; break;
		case EH2S_E_EXISTS: kind = T_HAD_SFRAME; break;
		case EH2S_E_NO_CFI: kind = T_NO_CFI; break;
		case EH2S_E_NO_FUNCS: kind = T_NO_FUNCS; break;
		case EH2S_E_NOT_ELF: kind = T_NOT_ELF; break;
		default: kind = T_FAILED; break;
		}
		snprintf(why, sizeof why, "%.255s", err.message);
		if (st == EH2S_OK || st == EH2S_E_NO_FUNCS) {
			it->converted = sum.converted;
			it->nfdes = sum.functions;
			it->unrelocated = sum.unrelocated;
		}
	}
	it->outcome = kind;
	if (kind == T_PATCHED || kind == T_HAD_SFRAME) {
		if (!looked)
			found = cli_debug_find(o, it->path, it->root, debug,
					       dmsg, sizeof dmsg);
		/* A staged file's debug file is updated once the file is
		 * renamed (debug_item): an interrupted batch then leaves the
		 * two matching. */
		if (found == CLI_DEBUG_FOUND && it->stage) {
			if (!(it->debug_path = strdup(debug))) {
				found = CLI_DEBUG_FAILED;
				snprintf(dmsg, sizeof dmsg, "out of memory");
			}
		} else if (found == CLI_DEBUG_FOUND) {
			pthread_mutex_lock(&r->debug_lock);
			found = cli_debug_update(it->path, debug, dmsg,
						 sizeof dmsg);
			pthread_mutex_unlock(&r->debug_lock);
		}
		it->debug = found;
	}
	pthread_mutex_lock(&r->lock);
	r->done++;
	if (kind == T_FAILED) {
		clear_progress(r);
		cli_error(it->path, "%s", why);
	} else if (o->verbose && kind == T_PATCHED) {
		clear_progress(r);
		fprintf(stderr, "%s: converted %zu of %zu functions\n", it->path,
			it->converted, it->nfdes);
	} else if (o->verbose) {
		clear_progress(r);
		fprintf(stderr, "%s: skipped: %s\n", it->path,
			kind == T_HAD_SFRAME ? "already has .sframe" : why);
	}
	if (!it->debug_path)
		report_debug(r, it, debug, dmsg);
	progress(r, it->path);
	pthread_mutex_unlock(&r->lock);
}

/* After the rename: the debug file of a converted file (convert_item). */
static void debug_item(t_run *r, t_item *it)
{
	char dmsg[512];
	int found = CLI_DEBUG_FAILED;
	if (it->outcome != T_PATCHED) {
		free(it->debug_path);
		it->debug_path = NULL;
		it->debug = CLI_DEBUG_NONE; /* the file was not replaced */
		return;
	}
	pthread_mutex_lock(&r->debug_lock);
	found = cli_debug_update(it->path, it->debug_path, dmsg, sizeof dmsg);
	pthread_mutex_unlock(&r->debug_lock);
	pthread_mutex_lock(&r->lock);
	it->debug = found;
	report_debug(r, it, it->debug_path, dmsg);
	pthread_mutex_unlock(&r->lock);
	free(it->debug_path);
	it->debug_path = NULL;
}

/* Has a signal that ends the run arrived (it is blocked: pending)? */
static bool stop_pending(t_run *r)
{
	sigset_t p;
	if (r->stopped)
		return true;
	if (sigpending(&p) != 0)
		return false;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&r->stop_on, s) == 1 && sigismember(&p, s) == 1)
			return r->stopped = true;
	return false;
}

static void *worker(void *arg)
{
	t_run *r = arg;
	for (;;) {
		pthread_mutex_lock(&r->lock);
		while (r->next < r->end && r->items[r->next].outcome == T_LINK)
			r->next++;
		if (r->debug_pass)
			while (r->next < r->end && !r->items[r->next].debug_path)
				r->next++;
		/* The debug files of renamed files are updated even after an
		 * interrupt, so that the two stay matching. */
		size_t i = r->next < r->end && (r->debug_pass || !stop_pending(r))
				   ? r->next++
				   : r->end;
		pthread_mutex_unlock(&r->lock);
		if (i == r->end)
			return NULL;
		if (r->debug_pass)
			debug_item(r, &r->items[i]);
		else
			convert_item(r, &r->items[i]);
	}
}

/* Items [r->next, r->end) by the workers and this thread; -j N. */
static void run_workers(t_run *r, int nth)
{
	pthread_t *th = calloc((size_t)nth, sizeof *th);
	int started = 0;
	for (int i = 1; th && i < nth; i++)
		if (pthread_create(&th[i], NULL, worker, r) == 0)
			started = i;
		else
			break;
	worker(r); /* the main thread works too */
	for (int i = 1; i <= started; i++)
		pthread_join(th[i], NULL);
	free(th);
}

/* A batch ends after this many bytes of files: what it stages is on
 * disk twice until it is committed. */
#define BATCH_BYTES ((off_t)256 << 20)

static size_t batch_end(const t_run *r, size_t from)
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
static void commit(t_run *r, size_t from, size_t to)
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
			unstage(it);
			it->outcome = T_FAILED;
			if (bad)
				cli_error(it->path, "not replaced: %s", why);
			continue;
		}
		if (rename(it->stage, it->path) != 0) {
			cli_error(it->path, "not replaced: rename: %s",
				  strerror(errno));
			unstage(it);
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

int cmd_tree(const cli_opts *o)
{
	t_run r;
	int bad = 0;
	size_t files[T_COUNT] = {0}, conv = 0, unrel = 0, counts[EH2S_SKIP_COUNT] = {0};
	size_t dbg[CLI_DEBUG_FAILED + 1] = {0};

	memset(&r, 0, sizeof r);
	r.o = o;
	pthread_mutex_init(&r.lock, NULL);
	pthread_mutex_init(&r.debug_lock, NULL);
	/* With a file-size limit, writes must fail with EFBIG instead of
	 * killing us before the temporary file is removed. */
	signal(SIGXFSZ, SIG_IGN);
	if (o->files_from)
		bad += read_list(&r, o->files_from);
	for (int i = 0; i < o->nfiles; i++)
		bad += collect(&r, o->files[i]);
	if (group_links(&r)) {
		cli_error(NULL, "out of memory");
		return 1;
	}
	r.tty = isatty(STDERR_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &r.last);

	/* Interrupts wait for a file's end (workers inherit the mask), so
	 * that what was staged can be removed. */
	static const int stop_sigs[] = {SIGINT, SIGTERM, SIGHUP};
	sigset_t old;
	sigemptyset(&r.stop_on);
	for (size_t k = 0; k < sizeof stop_sigs / sizeof *stop_sigs; k++) {
		struct sigaction sa;
		/* An ignored one (nohup) would stay pending while blocked. */
		if (sigaction(stop_sigs[k], NULL, &sa) == 0 &&
		    sa.sa_handler != SIG_IGN)
			sigaddset(&r.stop_on, stop_sigs[k]);
	}
	pthread_sigmask(SIG_BLOCK, &r.stop_on, &old);
	int nth = o->jobs > 1 ? o->jobs : 1;
	for (size_t from = 0; from < r.n && !r.stopped; from = r.end) {
		r.next = from;
		r.end = batch_end(&r, from);
		r.debug_pass = false;
		run_workers(&r, nth);
		commit(&r, from, r.end);
		/* The files renamed, their debug files (none if stopped). */
		r.next = from;
		r.debug_pass = true;
		run_workers(&r, nth);
	}
	clear_progress(&r);
	if (r.stopped)
		cli_error(NULL, "interrupted: the files of the batches before "
				"were replaced, the others left as they were");
	/* Nothing staged is left: a pending signal now ends the process as
	 * it would have. */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r.stopped)
		bad++; /* still here (a handler took it): the run failed */

	for (size_t i = 0; i < r.n; i++) {
		t_item *it = &r.items[i];
		if (it->outcome == T_COUNT)
			continue; /* an interrupt came first */
		files[it->outcome]++;
		dbg[it->debug]++;
		if (it->outcome != T_PATCHED)
			continue;
		conv += it->converted;
		unrel += it->unrelocated;
		for (int k = 1; k < EH2S_SKIP_COUNT; k++)
			counts[k] += it->counts[k];
	}
	files[T_FAILED] += (size_t)bad;
	if (!o->quiet) {
		size_t skipped = unrel;
		/* Patched and failed always; the other outcomes when seen. */
		fprintf(stderr, "eh2sframe: %zu files: %zu %s",
			r.n + r.leftovers, files[T_PATCHED], t_words[T_PATCHED]);
		for (int k = 1; k < T_FAILED; k++)
			if (files[k])
				fprintf(stderr, ", %zu %s", files[k], t_words[k]);
		if (files[T_LINK])
			fprintf(stderr, ", %zu %s", files[T_LINK], t_words[T_LINK]);
		if (r.leftovers)
			fprintf(stderr, ", %zu left alone (leftovers of an "
				"interrupted run)", r.leftovers);
		fprintf(stderr, ", %zu %s", files[T_FAILED], t_words[T_FAILED]);
		for (int k = 1; k < EH2S_SKIP_COUNT; k++)
			skipped += counts[k];
		fprintf(stderr, "\neh2sframe: functions: %zu converted, %zu skipped",
			conv, skipped);
		const char *sep = " (";
		for (int k = 1; k < EH2S_SKIP_COUNT; k++)
			if (counts[k]) {
				fprintf(stderr, "%s%s=%zu", sep,
					eh2s_skip_name(k), counts[k]);
				sep = ", ";
			}
		if (unrel)
			fprintf(stderr, "%sno-relocation=%zu", sep, unrel), sep = ", ";
		fputs(*sep == ',' ? ")\n" : "\n", stderr);
		/* Only when a debug file was involved. */
		sep = "eh2sframe: debug files: ";
		for (int k = CLI_DEBUG_UPDATED; k <= CLI_DEBUG_FAILED; k++)
			if (dbg[k] || (k == CLI_DEBUG_UPDATED &&
				       dbg[CLI_DEBUG_MATCHED] + dbg[CLI_DEBUG_NOT_FOUND] +
				       dbg[CLI_DEBUG_FAILED])) {
				fprintf(stderr, "%s%zu %s", sep, dbg[k], d_words[k]);
				sep = ", ";
			}
		if (*sep == ',')
			fputc('\n', stderr);
	}
	for (size_t i = 0; i < r.n; i++) {
		free(r.items[i].path);
		free(r.items[i].debug_path);
	}
	free(r.items);
	for (size_t i = 0; i < r.nroots; i++)
		free(r.roots[i]);
	free(r.roots);
	pthread_mutex_destroy(&r.lock);
	pthread_mutex_destroy(&r.debug_lock);
	return files[T_FAILED] || dbg[CLI_DEBUG_FAILED] ? 1 : 0;
}
