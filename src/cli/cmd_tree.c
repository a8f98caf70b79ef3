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
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tree.h"

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

/* Lock the debug files' lock, which a worker process may have died
 * holding (robust): what it was writing is the next update's to redo. */
void tree_debug_lock(t_run *r)
{
	if (pthread_mutex_lock(r->debug_lock) == EOWNERDEAD)
		pthread_mutex_consistent(r->debug_lock);
}

void tree_convert_item(t_run *r, t_item *it, t_note *nt)
{
	const cli_opts *o = r->o;
	int kind = tree_classify(it->path, o->objects, nt->why, sizeof nt->why);
	/* The separate debug file, found before the conversion: its
	 * symbols count for what the rewrite may move. */
	int found = CLI_DEBUG_NONE;
	bool looked = false;

	nt->debug[0] = nt->dmsg[0] = '\0';
	if (kind == T_PATCHED &&
	    tree_stage_file(it->path, r->pid, (size_t)(it - r->items), r->n,
			    &it->stage, nt->why, sizeof nt->why) != 0)
		kind = T_FAILED;
	if (kind == T_PATCHED && r->staged)
		r->staged(r, it);
	if (kind == T_PATCHED) {
		eh2s_file_opts fo;
		eh2s_convert_opts co;
		eh2s_summary sum;
		eh2s_error err;
		found = cli_debug_find(o, it->path, it->root, nt->debug,
				       nt->dmsg, sizeof nt->dmsg);
		looked = true;
		eh2s_file_opts_init(&fo);
		eh2s_convert_opts_init(&co);
		eh2s_summary_init(&sum);
		sum.by_reason = it->counts;
		sum.by_reason_len = EH2S_SKIP_COUNT;
		if (found == CLI_DEBUG_FOUND)
			fo.symbols_from = nt->debug;
		co.force = o->force;
		co.debug_frame = o->debug_frame;
		co.sframe_version = o->sframe_version;
		co.share_fres = o->share_fres;
		fo.convert = &co;
		/* In place, but into the stage: owner, mode and attributes
		 * are the original's, and it is not synced alone (commit).
		 * The stage is written directly (new_out): a temporary
		 * file of its own and a rename to the stage would take
		 * the directory's lock, which the other workers wait for
		 * (spinning: about a tenth of the run's CPU, -j2 on
		 * /usr/bin). */
		fo.in_place = 1;
		fo.new_out = 1;
		eh2s_status st = eh2s_convert_file(it->path, it->stage, &fo, &sum,
						   NULL, &err);
		if (st != EH2S_OK)
			tree_unstage(it);
		/* tree_classify() has rejected other machines and ELF classes, so
		 * UNSUPPORTED here is a limit (too large), a failure. */
		switch (st) {
		case EH2S_OK: kind = T_PATCHED; break;
		case EH2S_E_EXISTS: kind = T_HAD_SFRAME; break;
		case EH2S_E_NO_CFI: kind = T_NO_CFI; break;
		case EH2S_E_NO_FUNCS: kind = T_NO_FUNCS; break;
		case EH2S_E_NOT_ELF: kind = T_NOT_ELF; break;
		default: kind = T_FAILED; break;
		}
		snprintf(nt->why, sizeof nt->why, "%.255s", err.message);
		if (st == EH2S_OK || st == EH2S_E_NO_FUNCS) {
			it->converted = sum.converted;
			it->nfdes = sum.functions;
			it->unrelocated = sum.unrelocated;
		}
	}
	it->outcome = kind;
	if (kind == T_PATCHED || kind == T_HAD_SFRAME) {
		if (!looked)
			found = cli_debug_find(o, it->path, it->root, nt->debug,
					       nt->dmsg, sizeof nt->dmsg);
		/* A staged file's debug file is updated once the file is
		 * renamed (debug_item): an interrupted batch then leaves the
		 * two matching. */
		if (found == CLI_DEBUG_FOUND && it->stage) {
			if (!(it->debug_path = strdup(nt->debug))) {
				found = CLI_DEBUG_FAILED;
				snprintf(nt->dmsg, sizeof nt->dmsg, "out of memory");
			}
		} else if (found == CLI_DEBUG_FOUND) {
			tree_debug_lock(r);
			found = cli_debug_update(it->path, nt->debug, nt->dmsg,
						 sizeof nt->dmsg);
			pthread_mutex_unlock(r->debug_lock);
		}
		it->debug = found;
	}
}

void tree_report_item(t_run *r, t_item *it, const t_note *nt)
{
	const cli_opts *o = r->o;
	int kind = it->outcome;
	pthread_mutex_lock(&r->lock);
	r->done++;
	if (kind == T_FAILED) {
		clear_progress(r);
		cli_error(it->path, "%s", nt->why);
	} else if (o->verbose && kind == T_PATCHED) {
		clear_progress(r);
		fprintf(stderr, "%s: converted %zu of %zu functions\n", it->path,
			it->converted, it->nfdes);
	} else if (o->verbose) {
		clear_progress(r);
		fprintf(stderr, "%s: skipped: %s\n", it->path,
			kind == T_HAD_SFRAME ? "already has .sframe" : nt->why);
	}
	if (!it->debug_path)
		report_debug(r, it, nt->debug, nt->dmsg);
	progress(r, it->path);
	pthread_mutex_unlock(&r->lock);
}

static void convert_item(t_run *r, t_item *it)
{
	t_note nt;
	tree_convert_item(r, it, &nt);
	tree_report_item(r, it, &nt);
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
	tree_debug_lock(r);
	found = cli_debug_update(it->path, it->debug_path, dmsg, sizeof dmsg);
	pthread_mutex_unlock(r->debug_lock);
	pthread_mutex_lock(&r->lock);
	it->debug = found;
	report_debug(r, it, it->debug_path, dmsg);
	pthread_mutex_unlock(&r->lock);
	free(it->debug_path);
	it->debug_path = NULL;
}

bool tree_stop_pending(t_run *r)
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
		size_t i = r->next < r->end && (r->debug_pass || !tree_stop_pending(r))
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

int cmd_tree(const cli_opts *o)
{
	t_run r;
	int bad = 0;
	size_t files[T_COUNT] = {0}, conv = 0, unrel = 0, counts[EH2S_SKIP_COUNT] = {0};
	size_t dbg[CLI_DEBUG_FAILED + 1] = {0};

	memset(&r, 0, sizeof r);
	r.o = o;
	r.pid = getpid();
	r.rec_fd = -1;
	pthread_mutex_init(&r.lock, NULL);
	if (tree_shared_init(&r)) {
		cli_error(NULL, "out of memory");
		return 1;
	}
	/* With a file-size limit, writes must fail with EFBIG instead of
	 * killing us before the temporary file is removed. */
	signal(SIGXFSZ, SIG_IGN);
	if (o->files_from)
		bad += tree_read_list(&r, o->files_from);
	for (int i = 0; i < o->nfiles; i++)
		bad += tree_collect(&r, o->files[i]);
	if (tree_group_links(&r)) {
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
		r.end = tree_batch_end(&r, from);
		r.debug_pass = false;
		if (nth > 1)
			tree_run_procs(&r, nth);
		run_workers(&r, 1); /* what no worker process took */
		tree_commit(&r, from, r.end);
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
	tree_shared_free(&r);
	return files[T_FAILED] || dbg[CLI_DEBUG_FAILED] ? 1 : 0;
}
