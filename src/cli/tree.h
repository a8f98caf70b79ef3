/* Tree mode's parts (cmd_tree.c drives them): the walk that collects
 * the files (tree_walk.c), what each file is (tree_kind.c), and staging
 * and replacing them a batch at a time (tree_commit.c). */
#ifndef E2S_CLI_TREE_H
#define E2S_CLI_TREE_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "eh2sframe.h"
#include "cli.h"

/* What happened to a file; the order is the summary's. */
enum {
	T_PATCHED, T_HAD_SFRAME, T_NO_CFI, T_NO_FUNCS, T_UNSUPPORTED,
	T_ARCHIVE, T_OBJECT, T_NOT_ELF, T_FAILED, T_LINK, T_COUNT
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

/* What a conversion says for its report (tree_report_item): the failure
 * or skip, the debug file found and what became of it. */
typedef struct {
	char why[256];
	char debug[PATH_MAX];
	char dmsg[512];
} t_note;

typedef struct t_run t_run;
struct t_run {
	const cli_opts *o;
	pid_t pid;           /* the run's: staging names carry it */
	t_item *items;
	size_t n, cap;
	size_t next, end, done; /* work queue: [next, end) (under lock) */
	bool debug_pass;     /* the queue's work: conversions, or the debug
	                      * files of the files just renamed */
	sigset_t stop_on;    /* signals that end the run between files */
	bool stopped;        /* one of them arrived */
	pthread_mutex_t lock;
	/* One debug file update at a time: two copies of a program share
	 * one debug file. Shared with the worker processes, robust. */
	pthread_mutex_t *debug_lock;
	/* Called once a file is staged, before it is converted (a worker
	 * process tells the run the staging name), or NULL. */
	void (*staged)(t_run *r, const t_item *it);
	int rec_fd;          /* a worker process's pipe to the run, or -1 */
	struct t_shared *shared; /* what the worker processes share */
	char **roots;        /* the directories walked (owned) */
	size_t nroots;
	size_t leftovers;    /* files of an interrupted run, left alone */
	bool tty;
	struct timespec last;
	bool progress_shown;
};

/* ---- Converting and reporting a file (cmd_tree.c) -------------------- */

/* Convert it (classify, stage, convert, find its debug file): its
 * outcome and counts into it, what to report into nt. Prints nothing. */
void tree_convert_item(t_run *r, t_item *it, t_note *nt);
/* Count it done and report it (errors, -v, progress). */
void tree_report_item(t_run *r, t_item *it, const t_note *nt);
/* Has a signal that ends the run arrived (blocked, so pending)? */
bool tree_stop_pending(t_run *r);
/* Lock r->debug_lock. */
void tree_debug_lock(t_run *r);

/* ---- Worker processes (tree_procs.c) --------------------------------- */

/* r->shared and r->debug_lock in memory the worker processes share;
 * -1 on failure. */
int tree_shared_init(t_run *r);
void tree_shared_free(t_run *r);
/* Convert items [r->next, r->end) in nproc worker processes and report
 * them here; items a worker could not finish (it died) fail, and what
 * no worker took (none could be started) is converted here. */
void tree_run_procs(t_run *r, int nproc);

/* ---- The walk (tree_walk.c) ------------------------------------------ */

/* Add path (a file, or with -r a directory walked without following
 * links) to r's items; files an interrupted run left are counted, not
 * added. The number of errors. */
int tree_collect(t_run *r, const char *path);
/* tree_collect for each line of list ("-": standard input). */
int tree_read_list(t_run *r, const char *list);
/* Mark every name of an inode but the first as a link of the first
 * (T_LINK). -1 on OOM. */
int tree_group_links(t_run *r);

/* ---- What a file is (tree_kind.c) ------------------------------------ */

/* From its ELF header (and section headers), without reading it whole:
 * T_PATCHED for a file to convert, else the outcome and why. */
int tree_classify(const char *path, bool objects, char *why, size_t len);

/* ---- Staging and replacing (tree_commit.c) --------------------------- */

/* The staging name next to path for item index of nitems of run pid
 * (*stage, malloc'ed); -1 with why on failure. */
int tree_stage_file(const char *path, pid_t pid, size_t index,
		    size_t nitems, char **stage, char *why, size_t len);
/* Remove it's staged file, if any. */
void tree_unstage(t_item *it);
/* The end of the batch that starts at item from. */
size_t tree_batch_end(const t_run *r, size_t from);
/* Rename the staged files of [from, to) over their originals, after
 * syncing them unless --no-sync (or, on a failed sync or an interrupt,
 * remove them); relink the other names of the files replaced. */
void tree_commit(t_run *r, size_t from, size_t to);

#endif
