/* Small memory and I/O helpers shared by every module. */
#ifndef E2S_MEM_H
#define E2S_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "err.h"

/* A function kept out of line: the slow half of a split hot path, so
 * that the fast half needs no stack frame of its own. */
#if defined(__GNUC__)
#define E2S_OUT_OF_LINE __attribute__((noinline))
#else
#define E2S_OUT_OF_LINE
#endif

/* A function always inlined: a loop body that its callers specialise by
 * passing constants (the compiler's own heuristics may decline). */
#if defined(__GNUC__)
#define E2S_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define E2S_ALWAYS_INLINE inline
#endif

/* Ask for the cache line at p ahead of a write to it (a hint only). */
#if defined(__GNUC__)
#define E2S_PREFETCH_W(p) __builtin_prefetch((p), 1)
#else
#define E2S_PREFETCH_W(p) ((void)(p))
#endif

/* A growable array's count and capacity; the element pointer lives with
 * the caller so it keeps its type. */
typedef struct {
	size_t n, cap;
} e2s_vec;

/* Make room for one more element of elem bytes in *p (doubling, starting
 * at first). False on overflow or allocation failure; *p is unchanged. */
bool e2s_vec_grow(void **p, e2s_vec *v, size_t elem, size_t first);

/* Ask for transparent huge pages on the whole aligned 2 MiB blocks of
 * [p, p+bytes) (where the system leaves it to madvise), for regions of
 * 1 MiB and more: an array filled front to back then takes a few page
 * faults instead of thousands (on virtual machines a 4 KiB first-touch
 * fault has been seen to cost 15 us). The growable buffers call it. */
void e2s_hint_hugepages(void *p, size_t bytes);
/* The size from which e2s_alloc_big hints an allocation. */
#define E2S_HUGE_MIN ((size_t)1 << 20)
/* malloc / realloc for arrays that may be large: from 1 MiB on, 2 MiB
 * aligned and hinted as above (free with free()). */
void *e2s_alloc_big(size_t bytes);
void *e2s_realloc_big(void *p, size_t bytes);

/* Memory that arrays of different owners share (a mid-size conversion's
 * FDE records, functions, FRE data and memo table: conv_project.c), so
 * that they take one huge page together: e2s_alloc_big's, freed when the
 * last owner lets it go. Not for sharing between threads. */
typedef struct e2s_block e2s_block;
/* A block of bytes (one reference); NULL on OOM. */
e2s_block *e2s_block_new(size_t bytes);
void *e2s_block_data(const e2s_block *b);
/* Another reference to b (NULL: NULL). */
e2s_block *e2s_block_ref(e2s_block *b);
/* One reference fewer; the last frees it (NULL: nothing). */
void e2s_block_unref(e2s_block *b);
/* Does p point into b (false for NULL)? */
bool e2s_block_has(const e2s_block *b, const void *p);
/* Let go of p: b's reference where p lies in block b, free(p) where b
 * is NULL (p malloc'd). */
void e2s_block_release(e2s_block *b, void *p);

/* write() all n bytes (retrying EINTR and short writes, in chunks of at
 * most 1 GiB); E2S_ERR_IO with the errno text in *d on failure. */
e2s_err e2s_write_all(int fd, const void *p, size_t n, e2s_diag *d);

/* Read the first size bytes of regular file fd into a new buffer *out
 * (pread from offset 0, retrying EINTR and short reads). E2S_ERR_IO when
 * the file is shorter than size ("file shrank") or a read fails. */
e2s_err e2s_read_whole(int fd, size_t size, uint8_t **out, e2s_diag *d);

/* The bytes of a regular file, for reading. Mapped (private, read-only:
 * only the pages read are faulted in, from the shared page cache), read
 * into memory where mapping fails. Like every tool that maps its input,
 * a file truncated by another process meanwhile may kill us with SIGBUS;
 * files we replace ourselves are renamed over, never truncated. */
typedef struct {
	const uint8_t *data;
	size_t size;
	bool mapped;       /* else malloc'd */
	int fd;            /* kept open (e2s_map_file's keep_fd), else -1 */
	struct stat st;    /* the file's status when it was opened */
} e2s_map;

/* Map path. Errors: IO (open, a file that is not regular, read),
 * TOO_LARGE. An empty file gives size 0. */
e2s_err e2s_map_file(const char *path, bool keep_fd, e2s_map *m,
		     e2s_diag *d);
void e2s_unmap_file(e2s_map *m);

#endif
