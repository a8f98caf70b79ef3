/* The demo program: a few functions with different frame shapes (leaf,
 * frame pointer, recursion, a variable-length array that realigns the
 * stack) so its .sframe shows several kinds of FRE. */
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) static long leaf(long x) { return x * 3 + 1; }

__attribute__((noinline)) static long recurse(int n)
{
	if (n <= 0)
		return leaf(n);
	return recurse(n - 1) + n;
}

__attribute__((noinline)) static long vla_sum(int n)
{
	volatile long a[n];
	long s = 0;
	for (int i = 0; i < n; i++)
		a[i] = i;
	for (int i = 0; i < n; i++)
		s += a[i];
	return s;
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("recurse=%ld vla=%ld args=%d\n", recurse(10), vla_sum(16), argc);
	return 0;
}
