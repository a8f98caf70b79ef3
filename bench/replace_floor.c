/* The least an in-place converter pays that keeps the rule "write a
 * temporary file, rename it over the original only after success": each
 * listed file is copied to a temporary next to it (copy_file_range, the
 * space allocated first on ext4 as eh2sframe does), given the original's
 * owner and mode, and renamed over it; like eh2sframe's tree mode, the
 * files are staged about 256 MiB at a time, the filesystem is synced once
 * per batch (syncfs), then the batch is renamed. Nothing is converted, so
 * the files keep their bytes.
 *
 * usage: replace_floor LIST DIR   (LIST: paths relative to DIR, one a line)
 *
 * Benchmark code: public system calls only, nothing of the project. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BATCH_BYTES (256ull << 20)

typedef struct {
	char *path, *tmp;
} staged;

static int stage(const char *path, staged *s, unsigned long long *bytes)
{
	int in = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (in < 0 || fstat(in, &st) != 0) {
		fprintf(stderr, "replace_floor: %s: %s\n", path, strerror(errno));
		if (in >= 0)
			close(in);
		return -1;
	}
	size_t n = strlen(path) + 32;
	char *tmp = malloc(n);
	const char *slash = strrchr(path, '/');
	int dl = slash ? (int)(slash - path) : 1;
	snprintf(tmp, n, "%.*s/.floor.%ld.%s", dl, slash ? path : ".",
		 (long)getpid(), slash ? slash + 1 : path);
	int out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		fprintf(stderr, "replace_floor: %s: %s\n", tmp, strerror(errno));
		free(tmp);
		close(in);
		return -1;
	}
	if (st.st_size > 0)
		(void)fallocate(out, 0, 0, st.st_size);
	loff_t off = 0;
	long long left = st.st_size;
	while (left > 0) {
		ssize_t w = copy_file_range(in, &off, out, NULL, (size_t)left, 0);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fprintf(stderr, "replace_floor: %s: copy failed\n", path);
			close(in);
			close(out);
			unlink(tmp);
			free(tmp);
			return -1;
		}
		left -= w;
	}
	if (fchown(out, st.st_uid, st.st_gid) != 0 ||
	    fchmod(out, st.st_mode & 07777) != 0)
		fprintf(stderr, "replace_floor: %s: owner/mode: %s\n", tmp,
			strerror(errno));
	close(out);
	close(in);
	s->path = strdup(path);
	s->tmp = tmp;
	*bytes += (unsigned long long)st.st_size;
	return 0;
}

static int commit(staged *v, size_t n, int dirfd)
{
	int bad = 0;
	if (n && syncfs(dirfd) != 0)
		bad = 1;
	for (size_t i = 0; i < n; i++) {
		if (rename(v[i].tmp, v[i].path) != 0) {
			fprintf(stderr, "replace_floor: %s: %s\n", v[i].path,
				strerror(errno));
			unlink(v[i].tmp);
			bad = 1;
		}
		free(v[i].path);
		free(v[i].tmp);
	}
	return bad;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: replace_floor LIST DIR\n");
		return 2;
	}
	FILE *list = fopen(argv[1], "r");
	if (!list || chdir(argv[2]) != 0) {
		fprintf(stderr, "replace_floor: %s\n", strerror(errno));
		return 2;
	}
	int dirfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t cap = 1024, n = 0;
	staged *v = malloc(cap * sizeof *v);
	unsigned long long bytes = 0;
	char line[8192];
	int bad = 0;
	while (fgets(line, sizeof line, list)) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0])
			continue;
		if (n == cap)
			v = realloc(v, (cap *= 2) * sizeof *v);
		if (stage(line, &v[n], &bytes) == 0)
			n++;
		else
			bad = 1;
		if (bytes >= BATCH_BYTES) {
			bad |= commit(v, n, dirfd);
			n = 0;
			bytes = 0;
		}
	}
	bad |= commit(v, n, dirfd);
	free(v);
	fclose(list);
	close(dirfd);
	return bad;
}
