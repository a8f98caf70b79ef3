/* The workload's C program (tests/system/root.sh): compiled by the root's
 * gcc, run, and run under the root's gdb to a breakpoint reached through
 * libc's qsort and to an abort() inside libc, for backtraces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int calls;

__attribute__((noinline)) int leaf(int a, int b)
{
	calls++;
	return (a > b) - (a < b);
}

static int cmp(const void *x, const void *y)
{
	return leaf(*(const int *)x, *(const int *)y);
}

__attribute__((noinline)) void sort_some(int *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp);
}

int main(int argc, char **argv)
{
	int v[64];
	unsigned h = 2166136261u;
	for (int i = 0; i < 64; i++)
		v[i] = (i * 7919) % 101 - 50;
	sort_some(v, 64);
	for (int i = 0; i < 64; i++)
		h = (h ^ (unsigned)v[i]) * 16777619u;
	printf("sorted %d..%d hash %08x\n", v[0], v[63], h);
	char buf[64];
	snprintf(buf, sizeof buf, "%.3f %s", 3.14159, strrchr("a/b/c", '/'));
	printf("%s\n", buf);
	if (argc > 1 && strcmp(argv[1], "abort") == 0)
		abort();
	return calls > 0 ? 0 : 1;
}
