/* Tree mode's workers for -j N > 1: processes, not threads. Threads of
 * one process share its address space, so every unmapping of a file one
 * of them converted interrupts the CPUs running the others to flush
 * their TLBs, and every mapping and unmapping waits for the address
 * space's lock; the more CPUs, the more each costs. Two processes took
 * 0.95x the CPU time of two threads over a copy of /usr/bin (median of 12
 * alternated rounds on tmpfs, 2 CPUs; 0.85-1.05x per round).
 *
 * The workers take items from a counter in shared memory and convert
 * them (tree_convert_item); each sends the run, over a pipe of its own,
 * a record when it has staged a file (so that a worker that dies leaves
 * nothing behind the run does not know of) and one when it is done.
 * The run reports each file as its record comes (tree_report_item),
 * watches for the signals that stop it, and passes a stop on through
 * the shared memory. */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/mem.h"
#include "tree.h"

struct t_shared {
	pthread_mutex_t debug_lock;
	atomic_size_t next;  /* the next item to take */
	atomic_int stopped;  /* a stop signal came: take no more */
};

enum { REC_STAGED = 1, REC_DONE = 2 };
enum { S_STAGE, S_DEBUG_PATH, S_WHY, S_DEBUG, S_DMSG, S_COUNT };

typedef struct {
	uint32_t kind;
	size_t index;
	int outcome, debug;
	size_t converted, nfdes, unrelocated;
	size_t counts[EH2S_SKIP_COUNT];
	size_t len[S_COUNT]; /* the strings that follow, without NULs */
} t_rec;

int tree_shared_init(t_run *r)
{
	pthread_mutexattr_t a;
	struct t_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -1;
	if (pthread_mutexattr_init(&a) != 0) {
		munmap(sh, sizeof *sh);
		return -1;
	}
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	int e = pthread_mutex_init(&sh->debug_lock, &a);
	pthread_mutexattr_destroy(&a);
	if (e != 0) {
		munmap(sh, sizeof *sh);
		return -1;
	}
	atomic_init(&sh->next, 0);
	atomic_init(&sh->stopped, 0);
	r->shared = sh;
	r->debug_lock = &sh->debug_lock;
	return 0;
}

void tree_shared_free(t_run *r)
{
	if (!r->shared)
		return;
	pthread_mutex_destroy(&r->shared->debug_lock);
	munmap(r->shared, sizeof *r->shared);
	r->shared = NULL;
	r->debug_lock = NULL;
}

/* 1 with all n bytes, 0 at the end of the pipe before any, -1 otherwise. */
static int read_all(int fd, void *p, size_t n)
{
	char *c = p;
	size_t got = 0;
	while (got < n) {
		ssize_t k = read(fd, c + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return got || k < 0 ? -1 : 0;
		got += (size_t)k;
	}
	return 1;
}

/* One record and its strings (any may be NULL: empty), in one write. */
static int send_rec(int fd, t_rec *h, const char *const s[S_COUNT])
{
	size_t n = sizeof *h;
	for (int k = 0; k < S_COUNT; k++)
		n += h->len[k] = s[k] ? strlen(s[k]) : 0;
	char *buf = malloc(n);
	if (!buf)
		return -1;
	memcpy(buf, h, sizeof *h);
	size_t at = sizeof *h;
	for (int k = 0; k < S_COUNT; k++) {
		memcpy(buf + at, s[k] ? s[k] : "", h->len[k]);
		at += h->len[k];
	}
	e2s_err e = e2s_write_all(fd, buf, n, NULL);
	free(buf);
	return e ? -1 : 0;
}

/* r->staged in a worker. A pipe the run no longer reads is its end. */
static void send_staged(t_run *r, const t_item *it)
{
	t_rec h = {.kind = REC_STAGED, .index = (size_t)(it - r->items)};
	const char *s[S_COUNT] = {it->stage};
	if (send_rec(r->rec_fd, &h, s) != 0)
		_exit(1);
}

static int send_done(t_run *r, const t_item *it, const t_note *nt)
{
	t_rec h = {.kind = REC_DONE, .index = (size_t)(it - r->items),
		   .outcome = it->outcome, .debug = it->debug,
		   .converted = it->converted, .nfdes = it->nfdes,
		   .unrelocated = it->unrelocated};
	memcpy(h.counts, it->counts, sizeof h.counts);
	const char *s[S_COUNT] = {it->stage, it->debug_path, nt->why,
				  nt->debug, nt->dmsg};
	return send_rec(r->rec_fd, &h, s);
}

static _Noreturn void worker(t_run *r, int fd)
{
	struct t_shared *sh = r->shared;
	r->rec_fd = fd;
	r->staged = send_staged;
	for (;;) {
		if (atomic_load(&sh->stopped))
			break;
		if (tree_stop_pending(r)) {
			atomic_store(&sh->stopped, 1);
			break;
		}
		size_t i = atomic_fetch_add(&sh->next, 1);
		if (i >= r->end)
			break;
		t_item *it = &r->items[i];
		if (it->outcome == T_LINK)
			continue;
		t_note nt;
		tree_convert_item(r, it, &nt);
		if (send_done(r, it, &nt) != 0)
			break;
	}
	_exit(0);
}

/* A copy of s (NULL when it is empty), or NULL with *oom. */
static char *dup_s(const char *s, bool *oom)
{
	char *c;
	if (!*s)
		return NULL;
	if (!(c = strdup(s)))
		*oom = true;
	return c;
}

/* The next record from fd, applied to its item: 1, or 0 at the end of
 * the pipe (a record cut short counts as its end). */
static int receive(t_run *r, size_t from, int fd)
{
	t_rec h;
	if (read_all(fd, &h, sizeof h) <= 0)
		return 0;
	size_t n = S_COUNT;
	for (int k = 0; k < S_COUNT; k++) {
		if (h.len[k] > SIZE_MAX / 2 - n)
			return 0;
		n += h.len[k];
	}
	/* The strings, each followed by a NUL. */
	char *buf = malloc(n);
	const char *s[S_COUNT];
	bool cut = !buf;
	for (size_t k = 0, at = 0; !cut && k < S_COUNT; k++) {
		cut = h.len[k] && read_all(fd, buf + at, h.len[k]) <= 0;
		s[k] = buf + at;
		at += h.len[k];
		buf[at++] = '\0';
	}
	if (cut || h.index < from || h.index >= r->end ||
	    (h.kind != REC_STAGED && h.kind != REC_DONE)) {
		free(buf);
		return 0;
	}
	t_item *it = &r->items[h.index];
	bool oom = false;
	t_note nt;
	if (h.kind == REC_DONE) {
		it->outcome = h.outcome;
		it->debug = h.debug;
		it->converted = h.converted;
		it->nfdes = h.nfdes;
		it->unrelocated = h.unrelocated;
		memcpy(it->counts, h.counts, sizeof h.counts);
		it->debug_path = dup_s(s[S_DEBUG_PATH], &oom);
		snprintf(nt.why, sizeof nt.why, "%s", s[S_WHY]);
		snprintf(nt.debug, sizeof nt.debug, "%s", s[S_DEBUG]);
		snprintf(nt.dmsg, sizeof nt.dmsg, "%s", s[S_DMSG]);
	}
	/* The staging name: the record's (none: the worker removed it). */
	if (!it->stage || strcmp(it->stage, s[S_STAGE]) != 0) {
		free(it->stage);
		it->stage = dup_s(s[S_STAGE], &oom);
	}
	if (oom) {
		/* Not known, so never to be renamed: removed now. */
		if (*s[S_STAGE])
			unlink(s[S_STAGE]);
		free(it->stage);
		it->stage = NULL;
		if (h.kind == REC_DONE) {
			it->outcome = T_FAILED;
			snprintf(nt.why, sizeof nt.why, "out of memory");
		}
	}
	free(buf);
	if (h.kind == REC_DONE)
		tree_report_item(r, it, &nt);
	return 1;
}

void tree_run_procs(t_run *r, int nproc)
{
	struct t_shared *sh = r->shared;
	size_t from = r->next;
	pid_t *pid = calloc((size_t)nproc, sizeof *pid);
	struct pollfd *pf = calloc((size_t)nproc, sizeof *pf);
	int started = 0, open = 0, died = 0;

	atomic_store(&sh->next, from);
	atomic_store(&sh->stopped, r->stopped);
	fflush(NULL); /* nothing buffered is written twice */
	for (int k = 0; pid && pf && k < nproc; k++) {
		int fds[2];
		if (pipe(fds) != 0)
			break;
		pid_t p = fork();
		if (p == 0) {
			/* A run killed outright takes its workers along: what
			 * they staged is then a killed run's (cmd_tree.c). */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 ||
			    getppid() != r->pid)
				_exit(1);
			close(fds[0]);
			for (int j = 0; j < started; j++)
				if (pf[j].fd >= 0)
					close(pf[j].fd);
			worker(r, fds[1]);
		}
		close(fds[1]);
		if (p < 0) {
			close(fds[0]);
			break;
		}
		pid[started] = p;
		pf[started].fd = fds[0];
		pf[started].events = POLLIN;
		started++;
		open++;
	}
	while (open > 0) {
		/* A stop signal, seen within 100 ms, stops every worker. */
		int n = poll(pf, (nfds_t)started, 100);
		if (tree_stop_pending(r))
			atomic_store(&sh->stopped, 1);
		for (int k = 0; n > 0 && k < started; k++) {
			if (pf[k].fd < 0 || !pf[k].revents)
				continue;
			if (!receive(r, from, pf[k].fd)) {
				close(pf[k].fd);
				pf[k].fd = -1;
				open--;
			}
		}
	}
	for (int k = 0; k < started; k++) {
		int st = 0;
		pid_t w;
		while ((w = waitpid(pid[k], &st, 0)) < 0 && errno == EINTR)
			;
		if (w < 0)
			continue;
		if (!died && WIFSIGNALED(st))
			died = WTERMSIG(st);
		else if (!died && (!WIFEXITED(st) || WEXITSTATUS(st)))
			died = -1;
	}
	/* Taken and never reported: its worker died. */
	size_t taken = atomic_load(&sh->next);
	if (taken > r->end)
		taken = r->end;
	for (size_t i = from; i < taken; i++) {
		t_item *it = &r->items[i];
		t_note nt = {.why = "", .debug = "", .dmsg = ""};
		if (it->outcome != T_COUNT)
			continue;
		tree_unstage(it);
		it->outcome = T_FAILED;
		if (died > 0)
			snprintf(nt.why, sizeof nt.why, "not converted: its "
				 "worker process was killed by signal %d", died);
		else
			snprintf(nt.why, sizeof nt.why, "not converted: its "
				 "worker process ended before it was done");
		tree_report_item(r, it, &nt);
	}
	r->next = started ? taken : from;
	if (atomic_load(&sh->stopped))
		r->stopped = true;
	free(pid);
	free(pf);
}
