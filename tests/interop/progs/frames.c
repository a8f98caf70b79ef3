/* Small program with varied frames for the interop tests: recursion,
 * alloca (frame pointer), a large stack frame, varargs, a signal handler,
 * and an over-aligned local (stack realignment; DRAP with -mstackrealign). */
#include <alloca.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static volatile int sink;

__attribute__((noinline)) static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__attribute__((noinline)) static int with_alloca(int n)
{
	char *p = alloca((size_t)n + 1);
	memset(p, 'a', (size_t)n);
	p[n] = 0;
	return (int)strlen(p);
}

__attribute__((noinline)) static int big_frame(int k)
{
	volatile char buf[70000];
	buf[k] = (char)k;
	return buf[k] + buf[0];
}

__attribute__((noinline)) static int sum(int n, ...)
{
	va_list ap;
	int s = 0;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s += va_arg(ap, int);
	va_end(ap);
	return s;
}

typedef float v8 __attribute__((vector_size(32)));
__attribute__((noinline)) static float aligned_local(float x)
{
	volatile v8 v __attribute__((aligned(32))) = {x, x, x, x, x, x, x, x};
	return v[3] + (float)with_alloca(3);
}

static void on_sig(int s) { sink = s; }

int main(int argc, char **argv)
{
	(void)argv;
	signal(SIGUSR1, on_sig);
	raise(SIGUSR1);
	printf("%d %d %d %d %f %d\n", fib(argc + 10), with_alloca(argc * 5), big_frame(argc),
	       sum(3, 1, 2, argc), (double)aligned_local((float)argc), sink);
	return 0;
}
