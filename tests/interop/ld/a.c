/* Converted by eh2sframe before the link: recursion, alloca, varargs. */
#include <alloca.h>
#include <stdarg.h>
#include <string.h>

__attribute__((noinline)) static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

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

int a_entry(int n)
{
	char *p = alloca((size_t)n + 1);
	memset(p, 'x', (size_t)n);
	p[n] = 0;
	return fib(n) + sum(3, n, (int)strlen(p), 1);
}
