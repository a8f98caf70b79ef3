/* LD_PRELOAD shim for bench/run.sh: before main, the heap is made
 * BENCH_PREFAULT_MB MiB large (rounded up to 8) and every page of it
 * written, then freed and kept (no trimming, no mmap for blocks under
 * 32 MiB), so that the
 * program's arrays land on pages already faulted in. The bench times a
 * program with and without it (and the shim alone, under --version): the
 * difference is what first touches of fresh memory cost the program on
 * this machine. Not part of the tool. */
#include <malloc.h>
#include <stdlib.h>

/* The blocks, kept from being optimised away. */
static void *volatile keep[512];

__attribute__((constructor)) static void prefault(void)
{
	const char *s = getenv("BENCH_PREFAULT_MB");
	long mb = s ? strtol(s, NULL, 10) : 0;
	if (mb <= 0 || mb > 4096)
		return;
	/* glibc's largest mmap threshold: every array under it comes from
	 * the heap made here. */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	mallopt(M_TOP_PAD, 0);
	/* In 8 MiB pieces, each below the threshold (one larger block
	 * would be mmapped, and unmapped when freed); freed, they make one
	 * free stretch of heap. */
	size_t k = 0, pieces = ((size_t)mb + 7) / 8;
	for (; k < pieces && k < sizeof keep / sizeof *keep; k++) {
		volatile char *p = malloc((size_t)8 << 20);
		if (!p)
			break;
		keep[k] = (void *)p;
		for (size_t i = 0; i < ((size_t)8 << 20); i += 4096)
			p[i] = 1;
	}
	while (k-- > 0)
		free(keep[k]);
}
