/* A small shared library for dlopen tests. */
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int plug_add(int x)
{
	int v[4] = {3, 1, 2, 0};
	qsort(v, 4, sizeof v[0], cmp);
	return x + v[3] - 1;
}
