/* Finds PT_GNU_SFRAME of every loaded object with dl_iterate_phdr and
 * compares the mapped bytes with the .sframe section in the file.
 * Usage: selfcheck [LIB.so]  (LIB.so is dlopen'ed first). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME 0x6474e554
#endif

/* Read the .sframe section of path into a malloc'ed buffer. */
static unsigned char *file_sframe(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *img, *out = NULL;
	long n;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	img = malloc(n);
	if (fread(img, 1, n, f) != (size_t)n) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff);
	size_t shnum = eh->e_shnum ? eh->e_shnum : sh[0].sh_size;
	size_t strndx = eh->e_shstrndx == SHN_XINDEX ? sh[0].sh_link : eh->e_shstrndx;
	const char *names = (const char *)img + sh[strndx].sh_offset;
	for (size_t i = 1; i < shnum; i++) {
		if (strcmp(names + sh[i].sh_name, ".sframe") == 0) {
			*len = sh[i].sh_size;
			out = malloc(*len);
			memcpy(out, img + sh[i].sh_offset, *len);
			break;
		}
	}
	free(img);
	return out;
}

static int nfound, nbad;

static int cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : NULL;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_GNU_SFRAME)
			continue;
		size_t len = 0;
		unsigned char *want = file_sframe(name ? name : "/proc/self/exe", &len);
		const unsigned char *mem = (const unsigned char *)(info->dlpi_addr + p->p_vaddr);
		const char *base = name ? strrchr(name, '/') : NULL;
		base = base ? base + 1 : name ? name : "main";
		int ok = want && len == p->p_memsz && memcmp(want, mem, len) == 0 &&
			 *(const unsigned short *)mem == 0xdee2 && mem[2] == 3;
		printf("%s: PT_GNU_SFRAME %s\n", base, ok ? "matches the file" : "DIFFERS");
		nfound++;
		nbad += !ok;
		free(want);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		void *h = dlopen(argv[1], RTLD_NOW);
		int (*fn)(int);
		if (!h) {
			printf("dlopen: %s\n", dlerror());
			return 2;
		}
		fn = (int (*)(int))dlsym(h, "plug_add");
		printf("plug_add(40) = %d\n", fn ? fn(40) : -1);
	}
	dl_iterate_phdr(cb, NULL);
	printf("objects with SFrame: %d, bad: %d\n", nfound, nbad);
	return nbad ? 1 : 0;
}
