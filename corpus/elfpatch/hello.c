/* Prints its arguments and some libc-heavy output; exit status 3. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static __thread int tls_counter = 5;
static char big_bss[1 << 20];

int main(int argc, char **argv)
{
	qsort(argv + 1, argc - 1, sizeof *argv, cmp);
	for (int i = 1; i < argc; i++)
		printf("%s\n", argv[i]);
	big_bss[12345] = 1;
	printf("tls=%d bss=%d %.3f\n", ++tls_counter, big_bss[12345], 2.0 / 3);
	return 3;
}
