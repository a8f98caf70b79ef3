/* C corpus for the CFI differential tests: shapes of frames compilers
 * emit (recursion, varargs, setjmp, alloca/VLA, stack realignment/DRAP).
 * Built for every ABI at several -O levels by tools/build-corpus.sh;
 * the program also runs (under qemu for cross ABIs) as a smoke check. */
#include <alloca.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

volatile int sink;

__attribute__((noinline)) int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) long sum_va(int n, ...)
{
	va_list ap;
	long s = 0;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s += va_arg(ap, long);
	va_end(ap);
	return s;
}

static jmp_buf env;

__attribute__((noinline)) void jumper(int v)
{
	if (v > 3)
		longjmp(env, v);
	sink = v;
}

__attribute__((noinline)) int use_setjmp(int v)
{
	int r = setjmp(env);
	if (r)
		return r;
	jumper(v);
	return 0;
}

__attribute__((noinline)) int use_alloca(int n)
{
	char *p = alloca((size_t)n + 1);
	memset(p, 'a', (size_t)n);
	p[n] = 0;
	return (int)strlen(p);
}

__attribute__((noinline)) int use_vla(int n)
{
	int a[n];
	for (int i = 0; i < n; i++)
		a[i] = i * i;
	return a[n - 1];
}

/* An over-aligned local forces dynamic stack realignment; with a VLA and
 * stack arguments too, x86-64 GCC uses a DRAP register and describes the
 * CFA with DW_CFA_def_cfa_expression. */
__attribute__((noinline)) int realign(int n, int a2, int a3, int a4, int a5,
				      int a6, int a7, int a8)
{
	int big[16] __attribute__((aligned(64)));
	int vla[n];
	for (int i = 0; i < 16; i++)
		big[i] = i + a7 + a8;
	for (int i = 0; i < n; i++)
		vla[i] = big[i % 16] + a2 + a3 + a4 + a5 + a6;
	sink = vla[n - 1];
	return (int)((unsigned long)big & 63);
}

/* Many live values: callee-saved register saves in the prologue. */
__attribute__((noinline)) long many_regs(long *v, int n)
{
	long a = 1, b = 2, c = 3, d = 4, e = 5, f = 6;
	for (int i = 0; i < n; i++) {
		a += v[i] * b;
		b ^= a + c;
		c += b * d;
		d -= c + e;
		e += d ^ f;
		f += e * a;
		sink = (int)fib(i % 5);
	}
	return a + b + c + d + e + f;
}

/* A cold path split off by GCC at -O2 (function.cold). */
__attribute__((noinline)) int maybe_fail(int x)
{
	if (__builtin_expect(x == 12345, 0)) {
		fprintf(stderr, "unlikely %d\n", x);
		sink = use_alloca(x % 7 + 1);
		return -1;
	}
	return x * 2;
}

int c_main(void);
int c_main(void)
{
	long v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	int r = 0;
	r += fib(10) != 55;
	r += sum_va(3, 1L, 2L, 3L) != 6;
	r += use_setjmp(5) != 5;
	r += use_alloca(10) != 10;
	r += use_vla(5) != 16;
	r += realign(20, 1, 2, 3, 4, 5, 6, 7) != 0;
	sink = (int)many_regs(v, 8);
	r += maybe_fail(2) != 4;
	return r;
}
