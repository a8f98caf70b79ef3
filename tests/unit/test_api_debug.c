/* Public API: separate debug files (eh2s_debug_refs_read,
 * eh2s_update_debug_file). Programs are built with gcc -g and split with
 * binutils (objcopy --only-keep-debug, strip, --add-gnu-debuglink) as
 * dh_strip does; truth comes from readelf (build ID, section and program
 * headers) and python's zlib.crc32 (run from the top of the tree). Under ASan/UBSan: mutated and cut
 * debug files must give an error or a result, never a crash. An s390x
 * program (big-endian) too when the cross tools are there. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eh2sframe.h"
#include "elfpatch/elfpatch.h"
#include "t.h"
#include "t_files.h"

static char dir[64];

/* First line of cmd's output (static buffer, newline dropped). */
static const char *out1(const char *cmd)
{
	static char line[1024];
	FILE *p = popen(cmd, "r");
	line[0] = '\0';
	if (p) {
		if (!fgets(line, sizeof line, p))
			line[0] = '\0';
		pclose(p);
	}
	line[strcspn(line, "\n")] = '\0';
	return line;
}

static int spit(const char *path, const unsigned char *b, size_t n)
{
	FILE *fp = fopen(path, "wb");
	int ok = fp && fwrite(b, 1, n, fp) == n;
	if (fp && fclose(fp) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

/* Build name from src with prefix's gcc (-g, flags), split it: name
 * (stripped, with a debug link) and name.debug. 0 on success. */
static int build_split(const char *prefix, const char *name,
		       const char *flags)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "cd %s && %sgcc -O1 -g %s -o %s t.c 2>/dev/null && "
		 "%sobjcopy --only-keep-debug %s %s.debug && "
		 "%sstrip --remove-section=.comment --remove-section=.note %s && "
		 "%sobjcopy --add-gnu-debuglink=%s.debug %s",
		 dir, prefix, flags, name, prefix, name, name, prefix, name,
		 prefix, name, name);
	return system(cmd);
}

static void check_pair(const char *name, const char *readelf)
{
	char f[256], g[256], cmd[1024];
	eh2s_file_opts fo;
	eh2s_file_result fr;
	eh2s_debug_result r;
	eh2s_debug_refs refs;
	eh2s_error err;

	snprintf(f, sizeof f, "%s/%s", dir, name);
	snprintf(g, sizeof g, "%s/%s.debug", dir, name);
	eh2s_file_opts_init(&fo);
	eh2s_file_result_init(&fr);
	eh2s_debug_result_init(&r);
	eh2s_debug_refs_init(&refs);
	fo.in_place = 1;
	CHECK_EQ(eh2s_convert_file(f, f, &fo, NULL, &fr, &err), EH2S_OK);

	/* The references, against readelf. */
	CHECK_EQ(eh2s_debug_refs_read(f, &refs, &err), EH2S_OK);
	snprintf(cmd, sizeof cmd, "%s -n %s | sed -n 's/.*Build ID: //p'",
		 readelf, f);
	CHECK_STR(refs.build_id, out1(cmd));
	CHECK_EQ(refs.linked, 1);
	snprintf(cmd, sizeof cmd, "%s.debug", name);
	CHECK_STR(refs.debuglink, cmd);

	CHECK_EQ(eh2s_update_debug_file(f, g, &r, &err), EH2S_OK);
	CHECK_EQ(r.changed, 1);
	CHECK(r.added >= 1);
	CHECK_EQ(r.crc_updated, 1);
	/* Same program header count and offset; .sframe there, no bytes. */
	snprintf(cmd, sizeof cmd, "%s -hW %s | grep -E 'Start of program|Number of program' | tr -s ' '",
		 readelf, f);
	char want[256];
	snprintf(want, sizeof want, "%s", out1(cmd));
	snprintf(cmd, sizeof cmd, "%s -hW %s 2>/dev/null | grep -E 'Start of program|Number of program' | tr -s ' '",
		 readelf, g);
	CHECK_STR(out1(cmd), want);
	snprintf(cmd, sizeof cmd, "%s -SW %s 2>/dev/null | grep -c ' \\.sframe  *NOBITS '",
		 readelf, g);
	CHECK_STR(out1(cmd), "1");
	/* The CRC in the link is the debug file's (read with struct and
	 * zlib, tests/e2e/lib/debuglink_ok.py; run from the top). */
	snprintf(cmd, sizeof cmd, "python3 tests/e2e/lib/debuglink_ok.py %s %s",
		 f, g);
	CHECK_EQ(system(cmd), 0);
	/* Once more: nothing to do. */
	CHECK_EQ(eh2s_update_debug_file(f, g, &r, &err), EH2S_OK);
	CHECK_EQ(r.changed, 0);
	CHECK_EQ(r.crc_updated, 0);
}

/* Entries of dir (. and .. not counted). */
static int entries(const char *d)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "ls -A %s | wc -l", d);
	return atoi(out1(cmd));
}

/* elfpatch's writer of files made of pieces, which the debug-file
 * rewrite uses: source ranges (large: copied by the kernel; without a
 * descriptor: from memory), bytes in memory, zeros between, in any
 * order given; keep's mode; a bad piece list leaves the file as it was
 * and nothing behind. */
static void test_pieces(void)
{
	char src[256], out[256], sub[128];
	enum { NSRC = 300000, SIZE = 250010 };
	unsigned char *b = malloc(NSRC);
	const unsigned char head[10] = "0123456789", tail[3] = {0xaa, 0xbb, 0xcc};
	struct stat keep;
	e2s_diag d;

	if (!b)
		return;
	for (size_t i = 0; i < NSRC; i++)
		b[i] = (unsigned char)(i * 7 + (i >> 9));
	snprintf(sub, sizeof sub, "%s/pieces", dir);
	CHECK_EQ(mkdir(sub, 0755), 0);
	snprintf(src, sizeof src, "%s/src", sub);
	snprintf(out, sizeof out, "%s/out", sub);
	CHECK_EQ(spit(src, b, NSRC), 0);
	CHECK_EQ(spit(out, (const unsigned char *)"old", 3), 0);
	CHECK_EQ(chmod(out, 0640), 0);
	CHECK_EQ(stat(out, &keep), 0);
	int fd = open(src, O_RDONLY);
	CHECK(fd >= 0);
	for (int with_fd = 0; with_fd < 2; with_fd++) {
		elfp_source so = {b, NSRC, with_fd ? fd : -1};
		elfp_piece p[] = {
			{.off = 200000, .len = 3, .mem = tail},
			{.off = 100, .len = 150000, .src_off = 5},
			{.off = 150100, .len = 20, .src_off = NSRC - 20},
			{.off = 0, .len = 10, .mem = head},
		};
		memset(&d, 0, sizeof d);
		CHECK_EQ(elfp_write_pieces_atomic(out, &keep, &so, p, 4, SIZE, &d),
			 E2S_ERR_OK);
		size_t n = 0;
		unsigned char *w = slurp(out, &n);
		CHECK_EQ(n, SIZE);
		if (w && n == SIZE) {
			size_t bad = 0;
			for (size_t i = 0; i < SIZE; i++) {
				unsigned char want =
					i < 10 ? head[i]
					: i < 100 ? 0
					: i < 150100 ? b[i - 100 + 5]
					: i < 150120 ? b[NSRC - 20 + (i - 150100)]
					: i >= 200000 && i < 200003 ? tail[i - 200000]
					: 0;
				bad += w[i] != want;
			}
			CHECK_EQ(bad, 0);
		}
		free(w);
		struct stat st;
		CHECK(stat(out, &st) == 0 && (st.st_mode & 07777) == 0640);
	}
	/* Overlapping pieces, and a range past the source's end: refused,
	 * the file stays, no temporary file is left. */
	CHECK_EQ(spit(out, (const unsigned char *)"old", 3), 0);
	elfp_source so = {b, NSRC, fd};
	elfp_piece over[] = {{.off = 0, .len = 10, .mem = head},
			     {.off = 5, .len = 3, .mem = tail}};
	elfp_piece past[] = {{.off = 0, .len = 30, .src_off = NSRC - 20}};
	memset(&d, 0, sizeof d);
	CHECK_EQ(elfp_write_pieces_atomic(out, &keep, &so, over, 2, 20, &d),
		 E2S_ERR_USAGE);
	CHECK_EQ(elfp_write_pieces_atomic(out, &keep, &so, past, 1, 30, &d),
		 E2S_ERR_USAGE);
	CHECK_EQ(elfp_write_pieces_atomic(out, &keep, &so, past, 0, 0, &d),
		 E2S_ERR_OK);
	size_t n = 0;
	unsigned char *w = slurp(out, &n);
	CHECK(w == NULL); /* the empty file written last */
	free(w);
	CHECK_EQ(entries(sub), 2);
	if (fd >= 0)
		close(fd);
	free(b);
}

int main(void)
{
	char f[256], g[256], m[256], cmd[512];
	eh2s_debug_result r;
	eh2s_debug_refs refs;
	eh2s_error err;

	eh2s_debug_result_init(&r);
	eh2s_debug_refs_init(&refs);
	snprintf(dir, sizeof dir, "/tmp/test_api_debug.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(f, sizeof f, "%s/t.c", dir);
	FILE *fp = fopen(f, "w");
	if (!fp)
		return 1;
	fputs("#include <stdio.h>\n"
	      "static int __attribute__((noinline)) d(int n) { return n ? 1 + d(n - 1) : 0; }\n"
	      "int main(int c, char **v) { (void)v; printf(\"%d\\n\", d(c)); return 0; }\n",
	      fp);
	fclose(fp);

	CHECK_EQ(build_split("", "pie", ""), 0);
	check_pair("pie", "readelf");
	CHECK_EQ(build_split("", "nopie", "-no-pie"), 0);
	check_pair("nopie", "readelf");
	if (system("command -v s390x-linux-gnu-gcc >/dev/null 2>&1") == 0 &&
	    build_split("s390x-linux-gnu-", "s390x", "") == 0)
		check_pair("s390x", "readelf");
	else
		printf("note: no s390x cross tools: big-endian case skipped\n");

	/* Usage and mismatches. */
	snprintf(f, sizeof f, "%s/pie", dir);
	snprintf(g, sizeof g, "%s/pie.debug", dir);
	CHECK_EQ(eh2s_update_debug_file(f, f, &r, &err), EH2S_E_USAGE);
	CHECK(strstr(err.message, "same file") != NULL);
	snprintf(m, sizeof m, "%s/nopie.debug", dir);
	CHECK_EQ(eh2s_update_debug_file(f, m, &r, &err), EH2S_E_USAGE);
	CHECK(strstr(err.message, "same type") != NULL);
	CHECK_EQ(build_split("", "pie2", "-DX=1 -fno-inline"), 0);
	snprintf(m, sizeof m, "%s/pie2.debug", dir);
	CHECK_EQ(eh2s_update_debug_file(f, m, &r, &err), EH2S_E_USAGE);
	CHECK(strstr(err.message, "build IDs differ") != NULL);
	snprintf(m, sizeof m, "%s/t.c", dir);
	CHECK_EQ(eh2s_update_debug_file(f, m, &r, &err), EH2S_E_NOT_ELF);
	CHECK_EQ(eh2s_debug_refs_read(m, &refs, &err), EH2S_E_NOT_ELF);
	snprintf(m, sizeof m, "%s/none", dir);
	CHECK(eh2s_update_debug_file(f, m, &r, &err) != EH2S_OK);
	CHECK(eh2s_update_debug_file(NULL, g, &r, &err) == EH2S_E_USAGE);

	/* Hostile debug files: cut short, and bytes of the headers changed.
	 * Each run works on a fresh copy (a success rewrites it). */
	snprintf(cmd, sizeof cmd, "cp %s/pie.debug %s/pie.orig.debug", dir, dir);
	CHECK_EQ(system(cmd), 0);
	size_t n = 0;
	snprintf(m, sizeof m, "%s/pie.orig.debug", dir);
	unsigned char *orig = slurp(m, &n);
	CHECK(orig != NULL && n > 256);
	snprintf(m, sizeof m, "%s/mut.debug", dir);
	int handled = 0;
	uint32_t seed = 12345;
	for (int k = 0; orig && k < 400; k++) {
		unsigned char *b = malloc(n);
		size_t len = n;
		memcpy(b, orig, n);
		seed = seed * 1103515245u + 12345u;
		if (k < 40) {
			len = (size_t)(seed % n);
		} else {
			/* The ELF header, or the section / program header
			 * tables (at e_shoff, e_phoff). */
			uint64_t shoff = 0, phoff = 0;
			for (int i = 7; i >= 0; i--) {
				shoff = shoff << 8 | b[40 + i];
				phoff = phoff << 8 | b[32 + i];
			}
			size_t base = k % 3 == 0 ? 0 : k % 3 == 1 ? (size_t)shoff : (size_t)phoff;
			for (int j = 0; j < 4; j++) {
				seed = seed * 1103515245u + 12345u;
				size_t at = base + (seed >> 8) % (k % 3 == 0 ? 64 : 512);
				if (at < n)
					b[at] = (unsigned char)(seed >> 24);
			}
		}
		spit(m, b, len);
		free(b);
		eh2s_status st = eh2s_update_debug_file(f, m, &r, &err);
		handled += st == EH2S_OK || err.message[0];
	}
	CHECK_EQ(handled, 400);
	free(orig);
	test_pieces();

	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return t_done("test_api_debug");
}
