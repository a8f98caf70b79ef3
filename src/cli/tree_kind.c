/* Tree mode: what a file is, from its headers, so that non-ELF files
 * are never read whole. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../abi/abi.h"
#include "../common/reader.h"
#include "tree.h"

/* A separate debug file (objcopy --only-keep-debug, find-debuginfo):
 * its code sections are SHT_NOBITS. Such files sit in package trees
 * (RPM's /usr/lib/debug) and have no CFI contents to convert. */
static bool debug_only(int fd, const unsigned char *h, bool be)
{
	uint64_t shoff = e2s_load_uN(h + 40, 8, be);
	unsigned shentsize = (unsigned)e2s_load_uN(h + 58, 2, be);
	unsigned shnum = (unsigned)e2s_load_uN(h + 60, 2, be);
	unsigned char sh[64 * 64]; /* headers read 64 at a time */
	if (shentsize != 64 || shnum == 0 || shnum > 65280 || shoff > INT64_MAX / 2)
		return false;
	for (unsigned i = 1, got = 0, base = 0; i < shnum; i++) {
		if (i >= base + got) {
			unsigned want = shnum - i < 64 ? shnum - i : 64;
			ssize_t n = pread(fd, sh, (size_t)want * 64,
					  (off_t)(shoff + (uint64_t)i * 64));
			if (n < 64)
				return false;
			base = i;
			got = (unsigned)n / 64;
		}
		const unsigned char *e = sh + (size_t)(i - base) * 64;
		uint32_t type = (uint32_t)e2s_load_uN(e + 4, 4, be);
		uint64_t flags = e2s_load_uN(e + 8, 8, be);
		if ((flags & SHF_EXECINSTR) && (flags & SHF_ALLOC))
			return type == SHT_NOBITS;
	}
	return false;
}

/* A kernel module: loaded, not linked (Kbuild names them *.ko). */
static bool kernel_module_p(const char *path)
{
	size_t n = strlen(path);
	return n > 3 && strcmp(path + n - 3, ".ko") == 0;
}

int tree_classify(const char *path, bool objects, char *why, size_t len)
{
	unsigned char h[64];
	ssize_t n = -1;
	bool dbg = false;
	/* A FIFO put in place of a file: not waited on (read fails). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		n = read(fd, h, sizeof h);
		if (n == (ssize_t)sizeof h && memcmp(h, ELFMAG, SELFMAG) == 0 &&
		    h[EI_CLASS] == ELFCLASS64)
			dbg = debug_only(fd, h, h[EI_DATA] == ELFDATA2MSB);
		close(fd);
	}
	if (n < 0) {
		snprintf(why, len, "%s", strerror(errno));
		return T_FAILED;
	}
	/* Static libraries stay as they are: their members would carry V3
	 * sections that linkers before binutils 2.45 cannot merge; the
	 * programs linked from them get converted instead. */
	if (n >= 8 && (memcmp(h, "!<arch>\n", 8) == 0 ||
		       memcmp(h, "!<thin>\n", 8) == 0)) {
		snprintf(why, len, "static library (ar archive): not converted");
		return T_ARCHIVE;
	}
	if (n < 20 || memcmp(h, ELFMAG, SELFMAG) != 0) {
		snprintf(why, len, "not ELF");
		return T_NOT_ELF;
	}
	bool be = h[EI_DATA] == ELFDATA2MSB;
	unsigned type = (unsigned)e2s_load_uN(h + 16, 2, be);
	unsigned mach = (unsigned)e2s_load_uN(h + 18, 2, be);
	if (h[EI_CLASS] != ELFCLASS64) {
		snprintf(why, len, "unsupported: 32-bit ELF");
		return T_UNSUPPORTED;
	}
	if (!abi_has_sframe(abi_of_machine(mach))) {
		snprintf(why, len, "unsupported machine %u", mach);
		return T_UNSUPPORTED;
	}
	if (type != ET_EXEC && type != ET_DYN && type != ET_REL) {
		snprintf(why, len, "unsupported ELF type %u", type);
		return T_UNSUPPORTED;
	}
	if (dbg) {
		snprintf(why, len, "separate debug file (no CFI contents)");
		return T_NO_CFI;
	}
	/* Loose objects are link inputs like an archive's members (crt1.o
	 * of libc6-dev): GNU ld before 2.45 cannot merge their SFrame V3,
	 * and every program linked from them would say so. */
	if (type == ET_REL && !objects && !kernel_module_p(path)) {
		snprintf(why, len, "relocatable object (a link input): not "
				   "converted (--objects converts it)");
		return T_OBJECT;
	}
	return T_PATCHED;
}
