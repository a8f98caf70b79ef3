/* Runs a libFuzzer target's entry point over files and directories of
 * inputs, without libFuzzer: regression corpora replay in `make check`. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	fclose(f);
	if (!buf)
		return 1;
	/* Names the input a crash report that follows belongs to. */
	fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int run_path(const char *path, unsigned *count)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		perror(path);
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		++*count;
		return run_file(path);
	}
	struct dirent **ents;
	int n = scandir(path, &ents, NULL, alphasort), rc = 0;
	if (n < 0) {
		perror(path);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.') {
			char sub[4096];
			snprintf(sub, sizeof sub, "%s/%s", path, ents[i]->d_name);
			rc |= run_path(sub, count);
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	int rc = 0;
	for (int i = 1; i < argc; i++)
		rc |= run_path(argv[i], &count);
	printf("replayed %u inputs\n", count);
	return rc;
}
