// Unwind harness: worker threads run deep call chains (libdeep, libc's
// qsort, std::sort, C++ throw/catch, libstdc++ formatting, code on a
// makecontext stack entered with swapcontext and left through setcontext,
// a SIGUSR1 handler running deep code above the signal trampoline, and
// now and then a child process made by clone, vfork or fork, whose
// parent is sampled as the syscall returns inside __clone, __vfork and
// _Fork) while a
// per-thread timer signal interrupts them at arbitrary instructions. The
// handler walks the interrupted context twice, with sfwalk (SFrame) and
// with libgcc's DWARF unwinder (_Unwind_Backtrace through the signal
// trampoline), and compares return addresses and CFAs frame by frame.
//
// Usage: harness [SECONDS [THREADS [INTERVAL_US]]]
// Exit 0 when there was something to compare and no disagreement.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>

#include "libdeep.h"
#include "sfwalk.h"

#ifndef SIGEV_THREAD_ID
#define SIGEV_THREAD_ID 4
#endif
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#if defined(__x86_64__)
static const char *const kAbi = "amd64";
enum { kSpReg = 7 };
#elif defined(__aarch64__)
static const char *const kAbi = "aarch64";
enum { kSpReg = 31 };
#elif defined(__s390x__)
static const char *const kAbi = "s390x";
enum { kSpReg = 15 };
#endif

enum { MAXF = 160, MAXLOG = 8 };

// Counters a thread accumulates in its handler and adds to g_tot at exit.
struct counts {
	unsigned long samples, compared_samples, frames, ra_frames, cfa_frames;
	unsigned long disagree, no_sigframe, sfwalk_only, dwarf_truncated;
	unsigned long flex_frames, mangled_frames;
	unsigned long sigtramp_frames; // compared frames just above a signal frame
	unsigned long context_samples; // samples on a makecontext stack
	unsigned long early[SFW_STOP_COUNT], ended[SFW_STOP_COUNT];
	unsigned long only[SFW_STOP_COUNT]; // ends of sfwalk-only walks
	unsigned long obj_frames[SFW_MAX_OBJS];
	unsigned long fn_frames[8]; // compared frames inside g_fn[k]
	unsigned long spawns;       // clone/vfork/fork children made
	sfw_stats st;
};

// libc functions whose compared frames are counted by name (issue #19:
// glibc 2.41 gives __clone, __vfork, _Fork, setcontext, __sigsetjmp and
// __rawmemchr flexible FDEs). Found at start-up through the dynamic
// symbol table (dladdr1 for the size); none in static builds.
static const char *const g_fn_names[] = {"clone", "vfork", "_Fork", "setcontext",
					  "__sigsetjmp", "rawmemchr"};
enum { NFN = sizeof g_fn_names / sizeof g_fn_names[0] };
static struct { uintptr_t lo, hi; } g_fn[NFN];

struct mismatch {
	int frame, kind; // kind 0 RA, 1 CFA, 2 SFrame stops early (outermost), 3 SFrame longer
	int ns, nd, reason;
	uintptr_t pc[8], dpc[8], sval, dval; // first frames of each walk
};

static sfw_ctx g_sfw;
static std::atomic<bool> g_stop{false};
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static counts g_tot;
static mismatch g_log[MAXLOG];
static int g_nlog;
static bool g_use_itimer;
static long g_interval_us = 300;

static thread_local bool t_active;
static thread_local volatile int t_phase; // 1 sfwalk, 2 DWARF walk
static thread_local uintptr_t t_cur_pc, t_cur_lr; // sample being walked
static int g_unwinder_obj = -1, g_loader_obj = -1;
static thread_local bool t_no_dwarf;
static thread_local uintptr_t t_lo, t_hi;
static thread_local counts t_c;
enum { CO_STACK = 256 * 1024 };
static thread_local char *t_co_stack; // makecontext stack of this thread
static thread_local mismatch t_log[MAXLOG];
static thread_local int t_nlog;

struct bt {
	uintptr_t target;
	int found, n, skipped;
	bool truncated;
	uintptr_t pc[MAXF], cfa[MAXF];
};

static _Unwind_Reason_Code bt_cb(struct _Unwind_Context *ctx, void *arg)
{
	bt *b = static_cast<bt *>(arg);
	int before = 0;
	uintptr_t ip = _Unwind_GetIPInfo(ctx, &before);

	if (!b->found) {
		// The interrupted frame is the first signal frame at the
		// ucontext's pc (the frames before it are the handler's).
		if (before && ip == b->target) {
			b->found = 1;
			b->pc[0] = ip;
			b->cfa[0] = _Unwind_GetCFA(ctx);
			b->n = 1;
		} else if (++b->skipped > 32) {
			return _URC_END_OF_STACK;
		}
		return _URC_NO_REASON;
	}
	if (b->n >= MAXF) {
		b->truncated = true;
		return _URC_END_OF_STACK;
	}
	b->pc[b->n] = ip;
	b->cfa[b->n] = _Unwind_GetCFA(ctx);
	b->n++;
	return _URC_NO_REASON;
}

static int obj_index(uintptr_t pc)
{
	for (int i = 0; i < g_sfw.nobj; i++)
		for (int j = 0; j < g_sfw.obj[i].ntext; j++)
			if (g_sfw.obj[i].text[j].lo <= pc && pc < g_sfw.obj[i].text[j].hi)
				return i;
	return -1;
}

static void log_mismatch(int frame, int kind, const sfw_frame *sf, int ns,
			 const bt *b, int reason, uintptr_t sv, uintptr_t dv)
{
	t_c.disagree++;
	if (t_nlog >= MAXLOG)
		return;
	mismatch &m = t_log[t_nlog++];
	m.frame = frame;
	m.kind = kind;
	m.ns = ns;
	m.nd = b->n;
	m.reason = reason;
	m.sval = sv;
	m.dval = dv;
	for (int i = 0; i < 8; i++) {
		m.pc[i] = i < ns ? sf[i].pc : 0;
		m.dpc[i] = i < b->n ? b->pc[i] : 0;
	}
}

static bool risky_for_dwarf(const sfw_frame *sf, int ns)
{
	// Interrupted outside every object: a signal return trampoline
	// (qemu-user's or the vDSO's, mid-sigreturn when the timer came),
	// where libgcc's fallback reads a sigcontext that is not there.
	if (ns > 0 && obj_index(sf[0].pc) < 0)
		return true;
	for (int i = 0; i < ns && i < 2; i++) {
		int o = obj_index(sf[i].pc);
		if (o >= 0 && (o == g_unwinder_obj || o == g_loader_obj))
			return true;
	}
	return false;
}

static void on_prof(int, siginfo_t *, void *ucv)
{
	if (!t_active)
		return;
	int saved = errno;
	sfw_regs r;
	sfw_frame sf[MAXF];
	int reason = 0;
	static thread_local bt b; // large: keep it off the signal stack

	t_c.samples++;
	sfw_regs_from_ucontext(ucv, &r);
	t_cur_pc = (uintptr_t)r.pc;
#if defined(__aarch64__)
	t_cur_lr = (uintptr_t)r.reg[30];
#elif defined(__s390x__)
	t_cur_lr = (uintptr_t)r.reg[14];
#endif
	t_phase = 1;
	int ns = sfw_walk(&g_sfw, &r, t_lo, t_hi, sf, MAXF, &reason, &t_c.st);
	t_phase = 2;
	if (t_no_dwarf || risky_for_dwarf(sf, ns)) {
		// Static libgcc takes a lock in _Unwind_Find_FDE; a throw in
		// progress on this thread may hold it. And a thread stopped
		// inside the unwinder (installing a landing pad rewrites saved
		// registers in place) or the loader gives libgcc transient
		// garbage it dereferences without checks: seen crashing under
		// qemu-aarch64. sfwalk still walks these samples.
		t_phase = 0;
		t_c.sfwalk_only++;
		t_c.only[reason]++;
		errno = saved;
		return;
	}
	b.target = (uintptr_t)r.pc;
	b.found = b.n = b.skipped = 0;
	b.truncated = false;
	_Unwind_Backtrace(bt_cb, &b);
	t_phase = 0;
	if (!b.found) {
		t_c.no_sigframe++;
		errno = saved;
		return;
	}
	// A DWARF walk that ends on an undefined RA reports one last frame
	// with ip 0: drop it.
	int nd = b.n;
	if (nd > 1 && b.pc[nd - 1] == 0)
		nd--;
	b.n = nd;
	t_c.compared_samples++;
	if (t_co_stack && (uintptr_t)r.reg[kSpReg] - (uintptr_t)t_co_stack < CO_STACK)
		t_c.context_samples++;
	int m = ns < nd ? ns : nd;
	bool bad = false;
	for (int i = 1; i < m && !bad; i++) {
		t_c.frames++;
		int oi = obj_index(sf[i - 1].pc);
		if (oi >= 0)
			t_c.obj_frames[oi]++;
		// The frame's own PC: a return address points after the call.
		uintptr_t at = sf[i - 1].pc - (i > 1 && !sf[i - 1].exact_pc);
		for (int k = 0; k < NFN; k++)
			if (g_fn[k].lo <= at && at < g_fn[k].hi)
				t_c.fn_frames[k]++;
		if (sf[i - 1].fde_type == 1)
			t_c.flex_frames++;
		if (sf[i - 1].mangled)
			t_c.mangled_frames++;
		if (sf[i - 1].signal)
			t_c.sigtramp_frames++;
		if (sf[i].pc != b.pc[i]) {
			log_mismatch(i, 0, sf, ns, &b, reason, sf[i].pc, b.pc[i]);
			bad = true;
		} else if (sf[i - 1].cfa != b.cfa[i]) {
			log_mismatch(i, 1, sf, ns, &b, reason, sf[i - 1].cfa, b.cfa[i]);
			bad = true;
		} else {
			t_c.ra_frames++;
			t_c.cfa_frames++;
		}
	}
	if (!bad) {
		if (ns < nd) {
			// SFrame stopped first: a gap in coverage, unless it
			// claims an outermost frame DWARF walks through.
			if (reason == SFW_STOP_OUTERMOST || reason == SFW_STOP_RA_ZERO)
				log_mismatch(ns, 2, sf, ns, &b, reason, 0, b.pc[ns]);
			else
				t_c.early[reason]++;
		} else if (ns > nd && !b.truncated) {
			log_mismatch(nd, 3, sf, ns, &b, reason, sf[nd].pc, 0);
		} else {
			t_c.ended[reason]++;
			if (b.truncated)
				t_c.dwarf_truncated++;
		}
	}
	errno = saved;
}

// ---- workload ------------------------------------------------------------

struct work {
	long seed;
	int kind;
	std::vector<int> v;
};

/* gcc keeps the frame pointer per function; clang has no such attribute
 * (its build variant keeps frame pointers globally instead). */
#if defined(__clang__)
#define KEEP_FP
#else
#define KEEP_FP __attribute__((optimize("no-omit-frame-pointer")))
#endif

static volatile long g_sink;

__attribute__((noinline)) static int cmp_int(const void *a, const void *b)
{
	int x = *static_cast<const int *>(a), y = *static_cast<const int *>(b);
	if (((x ^ y) & 63) == 0)
		g_sink = deep_leaf(x); // through the PLT from inside libc's qsort
	return (x > y) - (x < y);
}

__attribute__((noinline)) static void thrower(long n)
{
	if (n > 0)
		throw std::string("deep") + std::to_string(n);
	throw 42;
}

static long cb_throw_inner(void *arg)
{
	thrower(static_cast<work *>(arg)->seed & 1);
	return 0;
}

__attribute__((noinline)) KEEP_FP static long
do_throw(work *w)
{
	long r = 0;
#ifdef HARNESS_STATIC
	t_no_dwarf = true;
#endif
	try {
		r = deep_dispatch(3 + (w->seed & 3), w->seed, cb_throw_inner, w);
	} catch (const std::string &s) {
		r = (long)s.size();
	} catch (int e) {
		r = e;
	}
#ifdef HARNESS_STATIC
	t_no_dwarf = false;
#endif
	return r;
}

static long cb_work(void *arg)
{
	work *w = static_cast<work *>(arg);
	long r = 0;

	switch (w->kind) {
	case 0: {
		w->v.resize(200 + (w->seed & 255));
		for (size_t i = 0; i < w->v.size(); i++)
			w->v[i] = (int)((i * 2654435761u) ^ (unsigned long)w->seed);
		qsort(w->v.data(), w->v.size(), sizeof(int), cmp_int);
		r = w->v[0];
		break;
	}
	case 1: {
		w->v.resize(300 + (w->seed & 127));
		for (size_t i = 0; i < w->v.size(); i++)
			w->v[i] = (int)((i * 40503u) ^ (unsigned long)w->seed);
		std::sort(w->v.begin(), w->v.end(), [](int a, int b) {
			if (((a ^ b) & 127) == 0)
				g_sink = deep_leaf(a);
			return (a % 1000) < (b % 1000);
		});
		r = w->v[1];
		break;
	}
	case 2:
		r = do_throw(w);
		break;
	case 3: {
		std::ostringstream os;
		for (int i = 0; i < 20; i++)
			os << w->seed * i << ' ' << 1.5 * i << ';';
		r = (long)os.str().size();
		break;
	}
	default:
		for (int i = 0; i < 20; i++)
			r += deep_leaf(w->seed + i);
		break;
	}
	return r;
}

// ---- ucontext and signal-handler workloads ------------------------------

static thread_local ucontext_t t_main_uc, t_co_uc;
static thread_local long t_co_seed;

// Entered by swapcontext on its own stack; returning goes through
// glibc's __start_context to setcontext(uc_link).
static void co_body(void)
{
	work w;
	w.seed = t_co_seed;
	w.kind = (int)(t_co_seed & 1) ? 0 : 4;
	g_sink = deep_dispatch(4 + (t_co_seed & 7), w.seed, cb_work, &w);
}

__attribute__((noinline)) static long run_on_context(long seed)
{
	if (!t_co_stack && !(t_co_stack = static_cast<char *>(malloc(CO_STACK))))
		return 0;
	if (getcontext(&t_co_uc) != 0)
		return 0;
	t_co_uc.uc_stack.ss_sp = t_co_stack;
	t_co_uc.uc_stack.ss_size = CO_STACK;
	t_co_uc.uc_link = &t_main_uc;
	t_co_seed = seed;
	makecontext(&t_co_uc, co_body, 0);
	// sfwalk reads only the stack it is told about: the context's while
	// there (a sample in between just stops early).
	uintptr_t lo = t_lo, hi = t_hi;
	t_lo = (uintptr_t)t_co_stack;
	t_hi = t_lo + CO_STACK;
	swapcontext(&t_main_uc, &t_co_uc);
	t_lo = lo;
	t_hi = hi;
	return g_sink;
}

static thread_local long t_sig_seed;

// ---- child processes: the parent is sampled in __clone / __vfork /
// _Fork as their system call returns (a timer signal arriving while it
// blocks is delivered there). Children only _exit: no timer or handler
// of theirs runs (timers are not inherited).

static int spawn_child(void *)
{
	return 0; // __clone's child path makes this its exit status
}

__attribute__((noinline)) static pid_t spawn_vfork(void)
{
	pid_t p = vfork();
	if (p == 0)
		_exit(0);
	return p;
}

__attribute__((noinline)) static void spawn(long seed)
{
	static thread_local char *stack;
	enum { STACK = 64 * 1024 };
	pid_t p = -1;
	switch (seed % 3) {
	case 0:
		if (!stack && !(stack = static_cast<char *>(malloc(STACK))))
			return;
		p = clone(spawn_child, stack + STACK, SIGCHLD, nullptr);
		break;
	case 1:
		p = spawn_vfork();
		break;
	default:
		p = fork();
		if (p == 0)
			_exit(0);
		break;
	}
	if (p > 0) {
		while (waitpid(p, nullptr, 0) < 0 && errno == EINTR) {
		}
		t_c.spawns++;
	}
}

static void on_usr1(int)
{
	work w;
	w.seed = t_sig_seed;
	w.kind = 4;
	g_sink = deep_dispatch(3 + (t_sig_seed & 3), w.seed, cb_work, &w);
}

static void *worker(void *arg)
{
	long id = (long)arg;
	pthread_attr_t at;
	void *addr;
	size_t size;
	timer_t tm;
	bool have_timer = false;

	if (pthread_getattr_np(pthread_self(), &at) == 0) {
		pthread_attr_getstack(&at, &addr, &size);
		pthread_attr_destroy(&at);
		t_lo = (uintptr_t)addr;
		t_hi = t_lo + size;
	}
	if (!g_use_itimer) {
		struct sigevent sev;
		memset(&sev, 0, sizeof sev);
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = SIGPROF;
		sev.sigev_notify_thread_id = (pid_t)gettid();
		if (timer_create(CLOCK_MONOTONIC, &sev, &tm) == 0) {
			struct itimerspec its;
			its.it_interval.tv_sec = 0;
			its.it_interval.tv_nsec = g_interval_us * 1000 + id * 7000;
			its.it_value = its.it_interval;
			timer_settime(tm, 0, &its, NULL);
			have_timer = true;
		}
	}
	t_active = t_hi != 0;
	work w;
	long iter = 0;
	while (!g_stop.load(std::memory_order_relaxed)) {
		w.seed = id * 1000003 + iter;
		w.kind = (int)(iter % 7);
		if (iter % 32 == 31) {
			spawn(id + iter / 32);
		} else if (w.kind == 5) {
			g_sink = run_on_context(w.seed);
		} else if (w.kind == 6) {
			t_sig_seed = w.seed;
			raise(SIGUSR1); // the handler runs above a signal frame
		} else {
			g_sink = deep_dispatch(6 + (iter % 23), w.seed, cb_work, &w);
		}
		iter++;
	}
	if (have_timer)
		timer_delete(tm);
	t_active = false;
	free(t_co_stack);
	t_co_stack = nullptr;
	pthread_mutex_lock(&g_mu);
	unsigned long *d = reinterpret_cast<unsigned long *>(&g_tot);
	const unsigned long *s = reinterpret_cast<const unsigned long *>(&t_c);
	for (size_t i = 0; i < sizeof(counts) / sizeof(unsigned long); i++)
		d[i] += s[i];
	for (int i = 0; i < t_nlog && g_nlog < MAXLOG; i++)
		g_log[g_nlog++] = t_log[i];
	pthread_mutex_unlock(&g_mu);
	return NULL;
}

static void describe(uintptr_t pc);

// A crash is a test failure; say where it happened (not async-signal-safe,
// but the process is about to die anyway).
static void on_crash(int sig, siginfo_t *si, void *ucv)
{
	sfw_regs r;
	static const char *const phases[] = {"workload", "sfwalk", "DWARF unwinder"};
	sfw_regs_from_ucontext(ucv, &r);
	printf("CRASH: signal %d at", sig);
	describe((uintptr_t)r.pc);
	printf(" addr %p in %s", si->si_addr, phases[t_phase % 3]);
	if (t_phase) {
		printf(" walking sample pc");
		describe(t_cur_pc);
		printf(" lr");
		describe(t_cur_lr);
	}
	printf("\n");
	fflush(stdout);
	signal(sig, SIG_DFL);
	raise(sig);
}

static _Unwind_Reason_Code warm_cb(struct _Unwind_Context *, void *)
{
	return _URC_NO_REASON;
}

static const char *obj_name(int i)
{
	const char *n = g_sfw.obj[i].name;
	const char *s = strrchr(n, '/');
	return *n ? (s ? s + 1 : n) : "(main program)";
}

static void describe(uintptr_t pc)
{
	int i = obj_index(pc);
	if (i < 0)
		printf(" %#lx(?)", (unsigned long)pc);
	else
		printf(" %s+%#lx", obj_name(i),
		       (unsigned long)(pc - g_sfw.obj[i].text[0].lo));
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	double secs = argc > 1 ? atof(argv[1]) : 3;
	int nthreads = argc > 2 ? atoi(argv[2]) : 4;
	if (argc > 3)
		g_interval_us = atol(argv[3]);
	if (nthreads < 1 || nthreads > 64)
		nthreads = 4;

	// Warm up everything the handler relies on outside the handler:
	// libgcc's lazily built FDE tables, the exception machinery.
	_Unwind_Backtrace(warm_cb, NULL);
	{
		work w;
		w.seed = 1;
		w.kind = 2;
		cb_work(&w);
	}
	sfw_init(&g_sfw);
	g_unwinder_obj = obj_index((uintptr_t)&_Unwind_Backtrace);
#ifndef HARNESS_STATIC
	for (int k = 0; k < NFN; k++) {
		void *a = dlsym(RTLD_DEFAULT, g_fn_names[k]);
		Dl_info di;
		void *sym = nullptr;
		if (a && dladdr1(a, &di, &sym, RTLD_DL_SYMENT) && sym) {
			g_fn[k].lo = (uintptr_t)a;
			g_fn[k].hi = (uintptr_t)a + static_cast<const ElfW(Sym) *>(sym)->st_size;
		}
	}
#endif
	for (int i = 0; i < g_sfw.nobj; i++)
		if (strstr(g_sfw.obj[i].name, "/ld-linux") || strstr(g_sfw.obj[i].name, "/ld64.so"))
			g_loader_obj = i;
	if (g_unwinder_obj == 0)
		g_unwinder_obj = -1; // static: libgcc is in the program; see t_no_dwarf
	printf("unwind[%s]: %d objects, %d with .sframe, %d bad, %d unsorted\n",
	       kAbi, g_sfw.nobj, g_sfw.nsframe, g_sfw.nbad, g_sfw.nunsorted);
	for (int i = 0; i < g_sfw.nobj; i++)
		printf("  object %-28s %s\n", obj_name(i),
		       g_sfw.obj[i].bad ? "BAD .sframe" :
		       g_sfw.obj[i].sec ? ".sframe" : "no .sframe");

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	// Probe per-thread timers; qemu-user may not forward SIGEV_THREAD_ID.
	{
		struct sigevent sev;
		timer_t tm;
		memset(&sev, 0, sizeof sev);
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = SIGPROF;
		sev.sigev_notify_thread_id = (pid_t)gettid();
		if (timer_create(CLOCK_MONOTONIC, &sev, &tm) == 0)
			timer_delete(tm);
		else
			g_use_itimer = true;
	}
	std::vector<pthread_t> th(nthreads);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(long)i);
	if (g_use_itimer) {
		struct itimerval it;
		it.it_interval.tv_sec = 0;
		it.it_interval.tv_usec = g_interval_us;
		it.it_value = it.it_interval;
		setitimer(ITIMER_PROF, &it, NULL);
	}
	struct timespec ts;
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
	g_stop = true;
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	if (g_use_itimer) {
		struct itimerval it;
		memset(&it, 0, sizeof it);
		setitimer(ITIMER_PROF, &it, NULL);
	}

	const counts &c = g_tot;
	unsigned long nbad_stop = 0, nearly = 0;
	printf("timer: %s\n", g_use_itimer ? "setitimer(ITIMER_PROF)" :
					     "timer_create per thread (SIGEV_THREAD_ID)");
	printf("samples %lu, compared %lu, sfwalk-only (no DWARF walk) %lu, no DWARF signal frame %lu\n",
	       c.samples, c.compared_samples, c.sfwalk_only, c.no_sigframe);
	printf("frames compared %lu (RA and CFA equal %lu; via flex FDE %lu, mangled RA %lu)\n",
	       c.frames, c.ra_frames, c.flex_frames, c.mangled_frames);
	printf("through signal frames %lu, samples on a makecontext stack %lu\n",
	       c.sigtramp_frames, c.context_samples);
	printf("FREs used: default %lu, flex %lu, PC-mask %lu, mangled %lu\n",
	       c.st.fde_default, c.st.fde_flex, c.st.fre_mask, c.st.mangled_ra);
	printf("child processes %lu; frames compared in libc functions:", c.spawns);
	for (int k = 0; k < NFN; k++)
		if (g_fn[k].hi)
			printf(" %s=%lu", g_fn_names[k], c.fn_frames[k]);
	printf("\n");
	printf("frames compared per object:");
	for (int i = 0; i < g_sfw.nobj; i++)
		if (c.obj_frames[i])
			printf(" %s=%lu", obj_name(i), c.obj_frames[i]);
	printf("\n");
	printf("walks ending together with DWARF, by SFrame reason:");
	for (int i = 0; i < SFW_STOP_COUNT; i++)
		if (c.ended[i])
			printf(" %s=%lu", sfw_stop_name(i), c.ended[i]);
	printf("\nearly SFrame stops (DWARF went on), by reason:");
	for (int i = 0; i < SFW_STOP_COUNT; i++) {
		if (c.early[i])
			printf(" %s=%lu", sfw_stop_name(i), c.early[i]);
		nearly += c.early[i];
		if (i >= SFW_STOP_FIRST_BAD)
			nbad_stop += c.early[i] + c.ended[i] + c.only[i];
	}
	printf("\nsfwalk-only walks, by end reason:");
	for (int i = 0; i < SFW_STOP_COUNT; i++)
		if (c.only[i])
			printf(" %s=%lu", sfw_stop_name(i), c.only[i]);
	printf("\n");
	for (int i = 0; i < g_nlog; i++) {
		const mismatch &m = g_log[i];
		static const char *const kinds[] = {"RA differs", "CFA differs",
						    "SFrame ends (outermost) but DWARF goes on",
						    "SFrame goes on after DWARF ended"};
		printf("DISAGREE frame %d: %s: sframe %#lx dwarf %#lx (sframe %d frames, "
		       "dwarf %d, sframe stop %s)\n  sframe:", m.frame, kinds[m.kind],
		       (unsigned long)m.sval, (unsigned long)m.dval, m.ns, m.nd,
		       sfw_stop_name(m.reason));
		for (int j = 0; j < 8 && j < m.ns; j++)
			describe(m.pc[j]);
		printf("\n  dwarf: ");
		for (int j = 0; j < 8 && j < m.nd; j++)
			describe(m.dpc[j]);
		printf("\n");
	}
	bool ok = c.disagree == 0 && nbad_stop == 0 && g_sfw.nbad == 0 &&
		  c.frames > 0 && c.compared_samples > 0;
	printf("summary: abi=%s samples=%lu compared=%lu frames_compared=%lu "
	       "disagreements=%lu early_stops=%lu malformed=%lu sigtramp_frames=%lu "
	       "context_samples=%lu result=%s\n",
	       kAbi, c.samples, c.compared_samples, c.frames, c.disagree, nearly,
	       nbad_stop + (unsigned long)g_sfw.nbad, c.sigtramp_frames,
	       c.context_samples, ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
