/* elfp_write / elfp_write_mem: every sink (regular file: copy_file_range;
 * pipe and O_APPEND file: the write() fallback; memory) gives the same
 * bytes; an unedited file comes out identical to its input; a conversion
 * leaves every input byte past the ELF header in place; overlapping edits
 * compose in order (the section header table wins over a section that
 * overlaps it), against an expected image computed by hand. The writer's
 * new_path: the caller's staging name written directly, refused if it
 * exists, and not left behind by a failure. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/atomic.h"
#include "convert/convert.h"
#include "elfpatch/elfpatch.h"
#include "t.h"

static unsigned char *slurp_fd(int fd, size_t *n)
{
	size_t cap = 1 << 16, len = 0;
	unsigned char *p = malloc(cap);
	for (;;) {
		if (!p)
			return NULL;
		ssize_t r = read(fd, p + len, cap - len);
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len == cap) {
			unsigned char *q = realloc(p, cap *= 2);
			if (!q)
				free(p);
			p = q;
		}
	}
	*n = len;
	return p;
}

static unsigned char *slurp(const char *path, size_t *n)
{
	int fd = open(path, O_RDONLY);
	unsigned char *p;
	if (fd < 0)
		return NULL;
	p = slurp_fd(fd, n);
	close(fd);
	return p;
}

static int write_file(const char *path, const unsigned char *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	ssize_t w = write(fd, p, n);
	close(fd);
	return w == (ssize_t)n ? 0 : -1;
}

enum { SINK_FILE, SINK_APPEND, SINK_PIPE, SINK_MEM, SINK_COUNT };
static const char *const sink_name[] = {"file", "append", "pipe", "mem"};

/* f's output through sink k; NULL when the sink is unavailable (pipe
 * too small) or the write failed (counted as a failed check). */
static unsigned char *out_via(elfp_file *f, int k, size_t *n)
{
	e2s_diag d;
	unsigned char *p = NULL;
	char path[] = "/tmp/test_elfp_w_XXXXXX";
	int fd, pfd[2];

	memset(&d, 0, sizeof d);
	*n = 0;
	if (k == SINK_MEM) {
		uint8_t *m = NULL;
		CHECK_EQ(elfp_write_mem(f, &m, n, &d), E2S_ERR_OK);
		return m;
	}
	if (k == SINK_PIPE) {
		if (pipe(pfd) != 0)
			return NULL;
		/* The whole output must fit: nobody reads while we write. */
		if (fcntl(pfd[1], F_SETPIPE_SZ, 1 << 20) < (1 << 20)) {
			close(pfd[0]);
			close(pfd[1]);
			printf("skip pipe sink: cannot grow the pipe\n");
			return NULL;
		}
		CHECK_EQ(elfp_write(f, pfd[1], &d), E2S_ERR_OK);
		close(pfd[1]);
		p = slurp_fd(pfd[0], n);
		close(pfd[0]);
		return p;
	}
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return NULL;
	if (k == SINK_APPEND) {
		/* copy_file_range refuses O_APPEND: the fallback runs. */
		close(fd);
		fd = open(path, O_WRONLY | O_APPEND);
	}
	CHECK_EQ(elfp_write(f, fd, &d), E2S_ERR_OK);
	close(fd);
	p = slurp(path, n);
	unlink(path);
	return p;
}

/* Every sink gives exp (n bytes). */
static void check_sinks(elfp_file *f, const unsigned char *exp, size_t n,
			const char *what)
{
	for (int k = 0; k < SINK_COUNT; k++) {
		size_t m = 0;
		unsigned char *p = out_via(f, k, &m);
		if (!p && k == SINK_PIPE)
			continue;
		CHECK(p != NULL);
		CHECK_EQ(m, n);
		if (p && m == n && memcmp(p, exp, n) != 0) {
			size_t i = 0;
			while (p[i] == exp[i])
				i++;
			fprintf(stderr, "%s via %s: first difference at %#zx\n",
				what, sink_name[k], i);
			CHECK(0);
		}
		free(p);
	}
}

static void test_unchanged(const char *in)
{
	size_t n = 0;
	unsigned char *a = slurp(in, &n);
	elfp_file *f = NULL;
	e2s_diag d;
	CHECK(a != NULL);
	CHECK_EQ(elfp_open(in, &f, &d), E2S_ERR_OK);
	if (!a || !f)
		return;
	check_sinks(f, a, n, "unchanged");
	elfp_close(f);
	/* The same from a borrowed buffer. */
	CHECK_EQ(elfp_open_view(a, n, &f, &d), E2S_ERR_OK);
	if (f)
		check_sinks(f, a, n, "unchanged view");
	elfp_close(f);
	free(a);
}

/* .sframe of the image b, found by libelf: its first bytes. */
static int sframe_head(const unsigned char *b, size_t n, unsigned char *hd)
{
	Elf *e;
	Elf_Scn *s = NULL;
	size_t shstr;
	int found = 0;
	elf_version(EV_CURRENT);
	e = elf_memory((char *)b, n);
	if (!e || elf_getshdrstrndx(e, &shstr) != 0)
		return 0;
	while ((s = elf_nextscn(e, s))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(s, &sh))
			break;
		name = elf_strptr(e, shstr, sh.sh_name);
		if (name && strcmp(name, ".sframe") == 0 && sh.sh_size >= 4 &&
		    sh.sh_offset + 4 <= n) {
			memcpy(hd, b + sh.sh_offset, 4);
			found = 1;
		}
	}
	elf_end(e);
	return found;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void test_converted(const char *in)
{
	size_t n0 = 0, n1 = 0;
	unsigned char *a = slurp(in, &n0), hd[4];
	elfp_file *f = NULL, *g = NULL;
	conv_file_opts o = {0};
	conv_result res;
	e2s_diag d;
	CHECK(a != NULL);
	CHECK_EQ(elfp_open(in, &f, &d), E2S_ERR_OK);
	if (!a || !f)
		return;
	CHECK_EQ(conv_file(f, &o, &res, &d), E2S_ERR_OK);
	conv_result_free(&res);
	unsigned char *b = out_via(f, SINK_MEM, &n1);
	CHECK(b != NULL);
	if (!b)
		return;
	CHECK_EQ(n1, res.layout.out_size);
	/* elfpatch changes no existing byte but the ELF header and the
	 * program header table, which grew over the sections after it (now
	 * in the new segment, the rest of their old place zeroed); this
	 * input keeps its offsets (no SHIFT). */
	CHECK_EQ(res.layout.shift, 0);
	CHECK_EQ(res.layout.kind, ELFP_PH_GROWN);
	uint64_t phoff = get64(a + 32), tab = phoff + (b[56] | b[57] << 8) * 56;
	uint64_t from = res.layout.moved_from, to = from + res.layout.moved;
	CHECK(from >= phoff && to >= tab && to <= res.layout.kept);
	CHECK(n1 > n0 && memcmp(a + 64, b + 64, phoff - 64) == 0);
	CHECK(memcmp(a + to, b + to, res.layout.kept - to) == 0);
	CHECK(memcmp(a + from, b + res.layout.seg_offset, to - from) == 0);
	for (uint64_t k = tab; k < to; k++)
		if (b[k]) {
			CHECK(!"stale bytes after the grown table are zero");
			break;
		}
	/* Growth: .sframe, the moved bytes, a section header and name,
	 * alignment; the old section header table is reused. */
	CHECK(n1 - n0 <= res.sframe_size + res.layout.moved + 64 + 16 + 16);
	CHECK(sframe_head(b, n1, hd));
	CHECK_EQ(hd[0] | hd[1] << 8, 0xdee2); /* SFrame magic, LE */
	CHECK_EQ(hd[2], 3);                   /* version 3 */
	check_sinks(f, b, n1, "converted");
	/* Again: writing leaves the handle as it was. */
	check_sinks(f, b, n1, "converted, second write");
	/* From a borrowed buffer, the same conversion. */
	CHECK_EQ(elfp_open_view(a, n0, &g, &d), E2S_ERR_OK);
	if (g) {
		CHECK_EQ(conv_file(g, &o, &res, &d), E2S_ERR_OK);
		conv_result_free(&res);
		check_sinks(g, b, n1, "converted view");
	}
	elfp_close(g);
	elfp_close(f);
	free(a);
	free(b);
}

/* A section made to overlap the section header table: its offset moved to
 * shoff - 64 with size 128 (a hostile file), then shrunk in place to 96
 * bytes of a known pattern. The table is written over the pattern. */
static void test_overlap(const char *in)
{
	char path[] = "/tmp/test_elfp_ov_XXXXXX";
	unsigned char pat[96];
	size_t n = 0, x = 0;
	unsigned char *a = slurp(in, &n);
	elfp_file *f = NULL;
	e2s_diag d;
	int fd;

	CHECK(a != NULL && n > 64);
	if (!a)
		return;
	uint64_t shoff = get64(a + 40);
	unsigned shnum = a[60] | a[61] << 8;
	CHECK(shoff >= 4096 && shoff + (uint64_t)shnum * 64 <= n);
	for (unsigned i = 1; i < shnum && !x; i++) {
		unsigned type = a[shoff + i * 64 + 4];
		if (type == SHT_PROGBITS)
			x = i;
	}
	CHECK(x != 0);
	if (!x) {
		free(a);
		return;
	}
	unsigned char *xh = a + shoff + x * 64;
	put64(xh + 24, shoff - 64);
	put64(xh + 32, 128);
	fd = mkstemp(path);
	close(fd);
	CHECK_EQ(write_file(path, a, n), 0);
	for (size_t i = 0; i < sizeof pat; i++)
		pat[i] = (unsigned char)(0x80 + i);

	CHECK_EQ(elfp_open(path, &f, &d), E2S_ERR_OK);
	if (f) {
		CHECK_EQ(elfp_shrink_section(f, x, sizeof pat, &d), E2S_ERR_OK);
		CHECK_EQ(elfp_layout(f, &d), E2S_ERR_OK);
		CHECK_EQ(elfp_set_content(f, x, pat, sizeof pat, &d), E2S_ERR_OK);
		/* By hand: the pattern's first 64 bytes before the table, the
		 * table itself (with the new size of x) over the rest, and
		 * everything else as it was. */
		unsigned char *exp = malloc(n);
		if (exp) {
			memcpy(exp, a, n);
			memcpy(exp + shoff - 64, pat, 64);
			put64(exp + shoff + x * 64 + 32, sizeof pat);
			check_sinks(f, exp, n, "overlap");
			free(exp);
		}
	}
	elfp_close(f);
	unlink(path);
	free(a);
}

/* Entries of directory dir other than . and .. */
static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void test_new_path(const char *in)
{
	char dir[] = "/tmp/t_newpath.XXXXXX", out[64], old[64];
	size_t n = 0, m = 0;
	unsigned char *a = slurp(in, &n), *b;
	elfp_file *f = NULL;
	e2s_diag d;
	elfp_write_opts wo = {.keep_owner = true, .new_path = true};
	struct stat st;
	CHECK(a != NULL);
	CHECK(mkdtemp(dir) != NULL);
	CHECK_EQ(elfp_open(in, &f, &d), E2S_ERR_OK);
	if (!a || !f)
		return;
	snprintf(out, sizeof out, "%s/.stage", dir);
	snprintf(old, sizeof old, "%s/old", dir);
	/* Written where asked, with nothing else made in the directory. */
	CHECK_EQ(elfp_write_atomic_opts(out, in, f, &wo, &d), E2S_ERR_OK);
	b = slurp(out, &m);
	CHECK(b && m == n && memcmp(a, b, n) == 0);
	free(b);
	CHECK_EQ(dir_entries(dir), 1);
	CHECK(stat(out, &st) == 0 && stat(in, &st) == 0);
	/* An existing name is the caller's mistake: refused, untouched. */
	int fd = open(old, O_WRONLY | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0 && write(fd, "old", 3) == 3);
	if (fd >= 0)
		close(fd);
	CHECK_EQ(elfp_write_atomic_opts(old, in, f, &wo, &d), E2S_ERR_IO);
	CHECK(strstr(d.detail, strerror(EEXIST)) != NULL);
	b = slurp(old, &m);
	CHECK(b && m == 3 && memcmp(b, "old", 3) == 0);
	free(b);
	/* Given up after it was created (any failure of the writer ends
	 * so): removed. */
	char gone[64];
	e2s_atomic at;
	snprintf(gone, sizeof gone, "%s/.stage2", dir);
	CHECK_EQ(e2s_atomic_begin_new(&at, gone, &d), E2S_ERR_OK);
	CHECK(access(gone, F_OK) == 0);
	e2s_atomic_abort(&at);
	CHECK(access(gone, F_OK) != 0);
	CHECK_EQ(dir_entries(dir), 2);
	elfp_close(f);
	unlink(out);
	unlink(old);
	unlink(gone);
	rmdir(dir);
	free(a);
}

int main(void)
{
	const char *in = "/bin/ls";
	if (access(in, R_OK) != 0) {
		printf("skip: no %s\n", in);
		return 77;
	}
	test_unchanged(in);
	test_converted(in);
	test_overlap(in);
	test_new_path(in);
	return t_done("test_elfp_write");
}
