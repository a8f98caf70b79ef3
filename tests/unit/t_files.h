/* File and tool helpers shared by the API unit tests. */
#ifndef E2S_T_FILES_H
#define E2S_T_FILES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file at path (malloc'ed, *n its size), or NULL. */
static inline unsigned char *slurp(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	unsigned char *b = NULL;
	long sz;
	if (!fp)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (sz = ftell(fp)) > 0) {
		rewind(fp);
		b = malloc((size_t)sz);
		if (b && fread(b, 1, (size_t)sz, fp) != (size_t)sz) {
			free(b);
			b = NULL;
		}
		*n = (size_t)sz;
	}
	fclose(fp);
	return b;
}

/* Independent truth: readelf's count of FDEs in .eh_frame. */
static inline long readelf_fdes(const char *path)
{
	char cmd[512], line[512];
	long n = 0;
	snprintf(cmd, sizeof cmd, "readelf --debug-dump=frames %s 2>/dev/null",
		 path);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof line, p))
		if (strstr(line, " FDE cie="))
			n++;
	pclose(p);
	return n;
}

/* Little-endian 32-bit value at p. */
static inline unsigned get32(const unsigned char *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 |
	       (unsigned)p[3] << 24;
}

#endif
