#include "mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_PAGE ((size_t)2 << 20)
#define BIG E2S_HUGE_MIN

void *e2s_alloc_big(size_t bytes)
{
	if (bytes < BIG || bytes > SIZE_MAX - HUGE_PAGE)
		return malloc(bytes ? bytes : 1);
	/* Aligned, so that every 2 MiB block of it can be a huge page. */
	size_t n = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	void *p = aligned_alloc(HUGE_PAGE, n);
	if (p)
		e2s_hint_hugepages(p, n);
	return p;
}

void *e2s_realloc_big(void *p, size_t bytes)
{
	if (!p)
		return e2s_alloc_big(bytes);
	void *np = realloc(p, bytes);
	if (np)
		e2s_hint_hugepages(np, bytes);
	return np;
}

struct e2s_block {
	unsigned char *data;
	size_t bytes;
	size_t refs;
};

e2s_block *e2s_block_new(size_t bytes)
{
	e2s_block *b = malloc(sizeof *b);
	if (b && !(b->data = e2s_alloc_big(bytes ? bytes : 1))) {
		free(b);
		b = NULL;
	}
	if (b) {
		b->bytes = bytes;
		b->refs = 1;
	}
	return b;
}

void *e2s_block_data(const e2s_block *b)
{
	return b->data;
}

e2s_block *e2s_block_ref(e2s_block *b)
{
	if (b)
		b->refs++;
	return b;
}

void e2s_block_unref(e2s_block *b)
{
	if (b && --b->refs == 0) {
		free(b->data);
		free(b);
	}
}

void e2s_block_release(e2s_block *b, void *p)
{
	if (b)
		e2s_block_unref(b);
	else
		free(p);
}

bool e2s_block_has(const e2s_block *b, const void *p)
{
	uintptr_t q = (uintptr_t)p;
	return b && q >= (uintptr_t)b->data && q - (uintptr_t)b->data < b->bytes;
}

bool e2s_vec_grow(void **p, e2s_vec *v, size_t elem, size_t first)
{
	if (v->n < v->cap)
		return true;
	size_t cap = v->cap ? v->cap * 2 : first;
	if (cap < v->cap || elem == 0 || cap > SIZE_MAX / elem)
		return false;
	void *np = e2s_realloc_big(*p, cap * elem);
	if (!np)
		return false;
	*p = np;
	v->cap = cap;
	return true;
}

void e2s_hint_hugepages(void *p, size_t bytes)
{
	if (bytes < BIG)
		return; /* not worth a system call */
#ifdef MADV_HUGEPAGE
	const uintptr_t huge = HUGE_PAGE;
	uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t e = ((uintptr_t)p + bytes) & ~(huge - 1);
	if (e > a)
		(void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
	(void)p;
	(void)bytes;
#endif
}

e2s_err e2s_write_all(int fd, const void *buf, size_t n, e2s_diag *d)
{
	const uint8_t *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n > (1u << 30) ? (1u << 30) : n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return e2s_fail(d, E2S_ERR_IO, NULL, 0, "write: %s",
					w ? strerror(errno) : "no progress");
		p += w;
		n -= (size_t)w;
	}
	return E2S_ERR_OK;
}

e2s_err e2s_read_whole(int fd, size_t size, uint8_t **out, e2s_diag *d)
{
	uint8_t *buf = malloc(size ? size : 1);
	size_t got = 0;
	if (!buf)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	while (got < size) {
		ssize_t n = pread(fd, buf + got, size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int er = errno;
			free(buf);
			return e2s_fail(d, E2S_ERR_IO, NULL, 0, "read: %s",
					n ? strerror(er) : "file shrank");
		}
		got += (size_t)n;
	}
	*out = buf;
	return E2S_ERR_OK;
}

e2s_err e2s_map_file(const char *path, bool keep_fd, e2s_map *m,
		     e2s_diag *d)
{
	e2s_err e = E2S_ERR_OK;
	uint8_t *buf = NULL;
	memset(m, 0, sizeof *m);
	/* O_NONBLOCK: a FIFO's open would wait for a writer before fstat
	 * could refuse it (no effect on a regular file). */
	m->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (m->fd < 0)
		return e2s_fail(d, E2S_ERR_IO, NULL, 0, "%s", strerror(errno));
	if (fstat(m->fd, &m->st) != 0)
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "%s", strerror(errno));
	else if (!S_ISREG(m->st.st_mode))
		e = e2s_fail(d, E2S_ERR_IO, NULL, 0, "not a regular file");
	else if ((uint64_t)m->st.st_size > SIZE_MAX / 2)
		e = e2s_fail(d, E2S_ERR_TOO_LARGE, NULL, 0, "file too large");
	if (e)
		goto fail;
	m->size = (size_t)m->st.st_size;
	if (m->size) {
		void *p = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, m->fd, 0);
		if (p != MAP_FAILED) {
			m->data = p;
			m->mapped = true;
		}
	}
	if (!m->mapped) {
		e = e2s_read_whole(m->fd, m->size, &buf, d);
		if (e)
			goto fail;
		m->data = buf;
	}
	if (!keep_fd) {
		close(m->fd);
		m->fd = -1;
	}
	return E2S_ERR_OK;
fail:
	close(m->fd);
	memset(m, 0, sizeof *m);
	m->fd = -1;
	return e;
}

void e2s_unmap_file(e2s_map *m)
{
	if (m->mapped)
		munmap((void *)m->data, m->size);
	else
		free((void *)m->data);
	if (m->fd >= 0)
		close(m->fd);
	memset(m, 0, sizeof *m);
	m->fd = -1;
}
