/* Public API (include/eh2sframe.h): convert /bin/ls from memory; the
 * per-function results add up to readelf's FDE count; the written
 * section is a V3 SFrame whose FDE count is the converted count; verify
 * passes; error paths return codes with messages. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api_dev.h"
#include "eh2sframe.h"
#include "t.h"
#include "t_files.h"

typedef struct {
	size_t calls, converted;
} cbstat;

static void on_fn(void *ctx, const eh2s_function *fn)
{
	cbstat *c = ctx;
	c->calls++;
	if (fn->reason == EH2S_SKIP_NONE)
		c->converted++;
}

static void test_ls(void)
{
	const char *path = "/bin/ls";
	size_t n = 0;
	unsigned char *img = slurp(path, &n);
	eh2s_file *f = NULL;
	eh2s_error err;
	eh2s_convert_opts o;
	eh2s_summary sum;
	eh2s_verify_result vr;
	size_t nfns = 0, skipped[EH2S_SKIP_COUNT];
	cbstat cb = {0, 0};

	eh2s_summary_init(&sum);
	sum.by_reason = skipped;
	sum.by_reason_len = EH2S_SKIP_COUNT;
	eh2s_verify_result_init(&vr);
	CHECK(img != NULL);
	if (!img)
		return;
	CHECK_EQ(eh2s_open_mem(img, n, &f, &err), EH2S_OK);
	CHECK_EQ(err.code, EH2S_OK);
	free(img); /* the handle has its own copy */
	if (!f)
		return;
	CHECK_EQ(eh2s_machine(f), EM_X86_64);
	CHECK_EQ(eh2s_is_relocatable(f), 0);
	CHECK_EQ(eh2s_has_sframe(f), 0);
	CHECK_EQ(eh2s_sframe_count(f), 0);
	/* Results before a conversion are a usage error. */
	CHECK_EQ(eh2s_get_summary(f, &sum, &err), EH2S_E_USAGE);
	CHECK(err.message[0] != '\0');
	CHECK_EQ(eh2s_verify(f, &vr, &err), EH2S_E_USAGE);

	eh2s_convert_opts_init(&o);
	o.on_function = on_fn;
	o.cb_ctx = &cb;
	o.report_all = 1;
	CHECK_EQ(eh2s_convert(f, &o, &err), EH2S_OK);
	CHECK_EQ(eh2s_get_summary(f, &sum, &err), EH2S_OK);
	nfns = eh2s_function_count(f);
	CHECK(eh2s_function_at(f, nfns) == NULL);

	long fdes = readelf_fdes(path);
	CHECK(fdes > 100);
	CHECK_EQ(sum.functions, fdes);
	CHECK_EQ(nfns, fdes);
	CHECK_EQ(cb.calls, nfns);
	size_t total = sum.converted + sum.unrelocated, conv = 0;
	for (int i = 1; i < EH2S_SKIP_COUNT; i++)
		total += skipped[i];
	CHECK_EQ(total, sum.functions);
	CHECK_EQ(sum.converted + sum.unrelocated + sum.skipped_total,
		 sum.functions);
	CHECK_EQ(skipped[EH2S_SKIP_NONE], sum.converted);
	size_t by_reason[EH2S_SKIP_COUNT] = {0};
	for (size_t i = 0; i < nfns; i++) {
		const eh2s_function *fn = eh2s_function_at(f, i);
		CHECK(fn != NULL);
		if (!fn)
			break;
		CHECK_EQ(fn->size, sizeof *fn);
		if (fn->reason == EH2S_SKIP_NONE)
			conv++;
		else if (fn->reason > 0 && fn->reason < EH2S_SKIP_COUNT)
			by_reason[fn->reason]++;
		CHECK(fn->pc_range > 0 || fn->reason == EH2S_SKIP_EMPTY);
	}
	CHECK_EQ(conv, sum.converted);
	CHECK_EQ(cb.converted, sum.converted);
	for (int i = 1; i < EH2S_SKIP_COUNT; i++)
		CHECK_EQ(by_reason[i], skipped[i]);
	CHECK(sum.converted * 10 > sum.functions * 9); /* ls: nearly all */

	/* The section: V3 preamble (magic 0xdee2, version 3) and a header
	 * FDE count covering every converted function (PLT entries may be
	 * split in two). */
	const uint8_t *sec = NULL;
	size_t secsize = 0;
	uint64_t vaddr = 0;
	CHECK_EQ(eh2s_sframe_count(f), 1);
	CHECK_EQ(eh2s_sframe_section(f, 0, &sec, &secsize, &vaddr, &err),
		 EH2S_OK);
	CHECK_EQ(eh2s_sframe_section(f, 1, &sec, &secsize, &vaddr, &err),
		 EH2S_E_USAGE);
	CHECK_EQ(eh2s_sframe_section(f, 0, &sec, &secsize, &vaddr, &err),
		 EH2S_OK);
	CHECK(secsize > 28 && secsize == sum.sframe_bytes);
	CHECK(vaddr != 0);
	if (sec && secsize > 28) {
		CHECK_EQ(sec[0] | sec[1] << 8, 0xdee2);
		CHECK_EQ(sec[2], 3);
		CHECK(get32(sec + 8) >= sum.converted);
		CHECK(get32(sec + 8) <= sum.converted + 4);
	}

	CHECK_EQ(eh2s_verify(f, &vr, &err), EH2S_OK);
	CHECK_EQ(vr.functions, sum.functions);
	CHECK_EQ(vr.match, sum.converted);
	CHECK_EQ(vr.mismatch, 0);
	CHECK_EQ(vr.extra, 0);

	/* Write, read back, same bytes; mode as asked. */
	char tmpl[] = "/tmp/test_api_XXXXXX", out[64];
	CHECK(mkdtemp(tmpl) != NULL);
	snprintf(out, sizeof out, "%s/ls", tmpl);
	CHECK_EQ(eh2s_write(f, out, 0750, &err), EH2S_OK);
	struct stat st;
	CHECK(stat(out, &st) == 0 && (st.st_mode & 07777) == 0750);
	size_t wn = 0, in;
	unsigned char *w = slurp(out, &wn);
	const uint8_t *cur = eh2s_image(f, &in);
	CHECK(w && wn == in && memcmp(w, cur, in) == 0);
	free(w);

	/* The converted file again: it has .sframe now. */
	eh2s_file *g = NULL;
	CHECK_EQ(eh2s_open(out, &g, &err), EH2S_OK);
	if (g) {
		CHECK_EQ(eh2s_has_sframe(g), 1);
		CHECK_EQ(eh2s_verify(g, &vr, &err), EH2S_OK);
		CHECK_EQ(vr.match, sum.converted);
		CHECK_EQ(eh2s_convert(g, NULL, &err), EH2S_E_EXISTS);
		CHECK(strstr(err.message, "sframe") != NULL);
		eh2s_close(g);
	}
	unlink(out);
	CHECK_EQ(eh2s_write(f, "/nonexistent-dir/x", -1, &err), EH2S_E_IO);
	CHECK(err.message[0] != '\0');
	rmdir(tmpl);

	/* Options the build may not have yet: a clear UNSUPPORTED, or the
	 * real thing (V2 preamble, verifies). */
	eh2s_convert_opts_init(&o);
	o.sframe_version = 2;
	CHECK_EQ(eh2s_convert(f, &o, &err), EH2S_OK);
	CHECK_EQ(eh2s_sframe_section(f, 0, &sec, &secsize, &vaddr, &err), EH2S_OK);
	CHECK(sec && secsize > 4 && sec[2] == 2);
	CHECK_EQ(eh2s_verify(f, &vr, &err), EH2S_OK);
	eh2s_convert_opts_init(&o);
	o.share_fres = 1;
	CHECK_EQ(eh2s_convert(f, &o, &err), EH2S_OK);
	CHECK_EQ(eh2s_verify(f, &vr, &err), EH2S_OK);
	CHECK_EQ(vr.match, sum.converted);
	/* Bad options: a version this library does not know. */
	o.sframe_version = 5;
	CHECK_EQ(eh2s_convert(f, &o, &err), EH2S_E_UNSUPPORTED);
	CHECK(err.message[0] != '\0');
	eh2s_close(f);
}

static void test_errors(void)
{
	eh2s_file *f = (eh2s_file *)&f;
	eh2s_error err;
	static const char text[] = "#!/bin/sh\necho not an ELF file\n";
	size_t n = 0;
	unsigned char *img = slurp("/bin/ls", &n);

	CHECK_EQ(eh2s_open_mem(text, sizeof text, &f, &err), EH2S_E_NOT_ELF);
	CHECK(f == NULL);
	CHECK_EQ(err.code, EH2S_E_NOT_ELF);
	CHECK_STR(err.message, "not an ELF file");
	CHECK_EQ(eh2s_open_mem(text, 0, &f, &err), EH2S_E_NOT_ELF);
	/* Cut inside the ELF header, then inside the section headers. */
	if (img) {
		CHECK_EQ(eh2s_open_mem(img, 40, &f, &err), EH2S_E_BAD_ELF);
		CHECK(strlen(err.message) > 0);
		CHECK_EQ(eh2s_open_mem(img, n - 100, &f, &err), EH2S_E_BAD_ELF);
		CHECK(strlen(err.message) > 0);
		/* A 32-bit ELF: not supported. */
		img[EI_CLASS] = ELFCLASS32;
		CHECK_EQ(eh2s_open_mem(img, n, &f, &err), EH2S_E_UNSUPPORTED);
		CHECK(strstr(err.message, "64-bit") != NULL);
		free(img);
	}
	CHECK_EQ(eh2s_open("/nonexistent/file", &f, &err), EH2S_E_IO);
	CHECK(strstr(err.message, "No such file") != NULL);
	CHECK_EQ(eh2s_open("/tmp", &f, &err), EH2S_E_IO);
	CHECK_EQ(eh2s_open(NULL, &f, NULL), EH2S_E_USAGE);
	CHECK_STR(eh2s_strerror(EH2S_E_NOT_ELF), "not an ELF file");
	CHECK_STR(eh2s_strerror((eh2s_status)999), "unknown error");
	CHECK_STR(eh2s_skip_name(EH2S_SKIP_NONE), "converted");
	CHECK_STR(eh2s_skip_name(EH2S_SKIP_CFA_EXPR), "cfa-expression");
	CHECK_STR(eh2s_skip_name(EH2S_SKIP_NO_RELOCATION), "no-relocation");
	CHECK_STR(eh2s_skip_name(-3), "unknown");
	CHECK_STR(eh2s_skip_name(EH2S_SKIP_COUNT), "unknown");
	CHECK_STR(eh2s_skip_name(EH2S_SKIP_RA_SIGN_STATE), "ra-sign-state");
	CHECK_EQ(eh2s_skip_reason_count(), EH2S_SKIP_COUNT);
	/* Every reason below the count has a name of its own. */
	for (int r = 0; r < EH2S_SKIP_COUNT; r++) {
		CHECK(strcmp(eh2s_skip_name(r), "unknown") != 0);
		for (int q = 0; q < r; q++)
			CHECK(strcmp(eh2s_skip_name(r), eh2s_skip_name(q)) != 0);
	}
	char v[32];
	snprintf(v, sizeof v, "%d.%d.%d", EH2S_VERSION_MAJOR,
		 EH2S_VERSION_MINOR, EH2S_VERSION_PATCH);
	CHECK_STR(eh2s_version(), v);
	eh2s_close(NULL);
}

/* Relocatable objects. gas output (checked in, made with --gsframe)
 * already has .sframe: EXISTS, and gas's section verifies against its
 * CFI. A fresh gcc object converts: per-section starts, .sframe +
 * .rela.sframe, verify through the relocations. */
static void test_rel(void)
{
	const char *gas = "tests/data/gas/x86_prog.obj";
	char dir[] = "/tmp/test_api_rel_XXXXXX", src[64], obj[64], cmd[256];
	eh2s_file *f = NULL;
	eh2s_error err;
	eh2s_summary sum;
	eh2s_verify_result vr;
	size_t nfns = 0;

	eh2s_summary_init(&sum);
	eh2s_verify_result_init(&vr);
	if (access(gas, R_OK) == 0 && eh2s_open(gas, &f, &err) == EH2S_OK) {
		CHECK_EQ(eh2s_is_relocatable(f), 1);
		CHECK_EQ(eh2s_has_sframe(f), 1);
		CHECK_EQ(eh2s_convert(f, NULL, &err), EH2S_E_EXISTS);
		CHECK_EQ(eh2s_verify(f, &vr, &err), EH2S_OK);
		CHECK_EQ(vr.functions, readelf_fdes(gas));
		CHECK_EQ(vr.mismatch, 0);
		eh2s_close(f);
		f = NULL;
	}
	if (!mkdtemp(dir))
		return;
	snprintf(src, sizeof src, "%s/r.c", dir);
	snprintf(obj, sizeof obj, "%s/r.o", dir);
	FILE *fp = fopen(src, "w");
	if (fp) {
		fputs("int g(int);\nint f(int x) { return g(x) + 1; }\n"
		      "int h(int n) { char v[n]; v[0] = 1; return g(v[n / 2]); }\n", fp);
		fclose(fp);
	}
	snprintf(cmd, sizeof cmd, "gcc -O2 -c -o %s %s 2>/dev/null", obj, src);
	if (system(cmd) != 0) {
		printf("test_rel: no gcc, skipped\n");
	} else if (eh2s_open(obj, &f, &err) == EH2S_OK) {
		CHECK_EQ(eh2s_is_relocatable(f), 1);
		CHECK_EQ(eh2s_convert(f, NULL, &err), EH2S_OK);
		CHECK_EQ(eh2s_get_summary(f, &sum, &err), EH2S_OK);
		CHECK_EQ(sum.functions, readelf_fdes(obj));
		CHECK_EQ(sum.converted, 2);
		CHECK_EQ(eh2s_sframe_count(f), 1);
		nfns = eh2s_function_count(f);
		CHECK_EQ(nfns, sum.functions);
		for (size_t i = 0; i < nfns; i++)
			CHECK(eh2s_function_at(f, i)->shndx != 0);
		CHECK_EQ(eh2s_verify(f, &vr, &err), EH2S_OK);
		CHECK_EQ(vr.match, 2);
		eh2s_close(f);
	} else {
		CHECK(!"cannot open the gcc object");
	}
	unlink(src);
	unlink(obj);
	rmdir(dir);
}

/* Nothing in-memory writes a file: with TMPDIR naming a directory that
 * does not exist, and then an empty one, a relocatable object (whose
 * .sframe starts come from .rela.sframe) opens, converts, verifies and
 * gives its statistics from memory, and the empty directory stays
 * empty. gas's object has .sframe already; the converted one is ours. */
static void mem_rel(const unsigned char *img, size_t n, int convert)
{
	eh2s_file *f = NULL;
	eh2s_error err;
	eh2s_verify_result vr;
	eh2s_stats st;

	eh2s_verify_result_init(&vr);
	eh2s_stats_init(&st);
	CHECK_EQ(eh2s_open_mem(img, n, &f, &err), EH2S_OK);
	if (!f)
		return;
	CHECK_EQ(eh2s_is_relocatable(f), 1);
	if (convert) {
		eh2s_convert_opts o;
		eh2s_convert_opts_init(&o);
		o.force = 1;
		CHECK_EQ(eh2s_convert(f, &o, &err), EH2S_OK);
	}
	CHECK_EQ(eh2s_verify(f, &vr, &err), EH2S_OK);
	CHECK(vr.match > 0);
	CHECK_EQ(vr.mismatch, 0);
	CHECK_EQ(vr.extra, 0);
	CHECK_EQ(eh2s_get_stats(f, &st, &err), EH2S_OK);
	CHECK(st.sframe_fdes > 0);
	CHECK_EQ(st.sframe_version, 3);
	eh2s_close(f);
}

static void test_no_tmpdir(void)
{
	const char *gas = "tests/data/gas/x86_prog.obj";
	const char *old = getenv("TMPDIR");
	char *saved = old ? strdup(old) : NULL;
	char dir[] = "/tmp/test_api_tmpdir_XXXXXX";
	size_t n = 0;
	unsigned char *img = slurp(gas, &n);

	CHECK(img != NULL);
	if (!img) {
		free(saved);
		return;
	}
	CHECK(mkdtemp(dir) != NULL);
	setenv("TMPDIR", "/nonexistent-eh2sframe-tmpdir/sub", 1);
	mem_rel(img, n, 0);
	mem_rel(img, n, 1);
	setenv("TMPDIR", dir, 1);
	mem_rel(img, n, 0);
	mem_rel(img, n, 1);
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	/* rmdir fails on a directory something was left in. */
	CHECK_EQ(rmdir(dir), 0);
	free(saved);
	free(img);
}

/* ---- One run behind every entry point --------------------------------
 * The outcomes of one file as each entry point tells them (the handle's
 * statistics before and after its conversion, the handle's conversion,
 * the conversion by path, the developer path) are one run's: they agree
 * with each other and with what is expected of the file. */

/* readelf's size of section name in path (hex column), or -1. */
static long readelf_size(const char *path, const char *name)
{
	char cmd[512], line[512], sec[64];
	unsigned long addr, off, size;
	long n = -1;
	snprintf(cmd, sizeof cmd, "readelf -SW %s 2>/dev/null", path);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof line, p)) {
		char *b = strchr(line, ']');
		if (b && sscanf(b + 1, "%63s %*s %lx %lx %lx", sec, &addr, &off,
				&size) == 4 && strcmp(sec, name) == 0)
			n = n < 0 ? (long)size : n + (long)size;
	}
	pclose(p);
	return n;
}

static void same_counts(const char *path, const char *out, size_t want_conv,
			size_t want_unrel)
{
	eh2s_file *f = NULL;
	eh2s_error err;
	eh2s_stats st, st2;
	eh2s_summary a, b;
	size_t rs[EH2S_SKIP_COUNT], rs2[EH2S_SKIP_COUNT];
	size_t ra[EH2S_SKIP_COUNT], rb[EH2S_SKIP_COUNT];
	api_encode_opts eo = {0, 3, 0, 0};
	api_encode_info info;
	void *data = NULL;
	size_t size = 0;
	long fdes = readelf_fdes(path);

	eh2s_stats_init(&st);
	eh2s_stats_init(&st2);
	eh2s_summary_init(&a);
	eh2s_summary_init(&b);
	st.by_reason = rs;
	st.by_reason_len = EH2S_SKIP_COUNT;
	st2.by_reason = rs2;
	st2.by_reason_len = EH2S_SKIP_COUNT;
	a.by_reason = ra;
	a.by_reason_len = EH2S_SKIP_COUNT;
	b.by_reason = rb;
	b.by_reason_len = EH2S_SKIP_COUNT;
	CHECK_EQ(eh2s_open(path, &f, &err), EH2S_OK);
	if (!f)
		return;
	CHECK_EQ(eh2s_get_stats(f, &st, &err), EH2S_OK);
	CHECK_EQ(st.functions, fdes);
	CHECK_EQ(st.converted, want_conv);
	CHECK_EQ(st.unrelocated, want_unrel);
	CHECK_EQ(st.converted + st.unrelocated + st.skipped_total,
		 st.functions);
	CHECK_EQ(rs[EH2S_SKIP_NONE], st.converted);
	CHECK_EQ(st.eh_frame_size, readelf_size(path, ".eh_frame"));
	CHECK_EQ(eh2s_convert(f, NULL, &err), EH2S_OK);
	CHECK_EQ(eh2s_get_summary(f, &a, &err), EH2S_OK);
	/* The converted image describes the same CFI. */
	CHECK_EQ(eh2s_get_stats(f, &st2, &err), EH2S_OK);
	CHECK_EQ(eh2s_write(f, out, -1, &err), EH2S_OK);
	CHECK_EQ(st2.eh_frame_size, readelf_size(out, ".eh_frame"));
	eh2s_close(f);
	unlink(out);
	CHECK_EQ(eh2s_convert_file(path, out, NULL, &b, NULL, &err), EH2S_OK);
	unlink(out);
	CHECK_EQ(api_encode_sframe_file(path, &eo, &data, &size, &info, &err),
		 EH2S_OK);
	eh2s_free(data);
	const eh2s_stats *s2 = &st2;
	const eh2s_summary *sums[] = {&a, &b};
	for (size_t k = 0; k < 2; k++) {
		CHECK_EQ(sums[k]->functions, st.functions);
		CHECK_EQ(sums[k]->converted, st.converted);
		CHECK_EQ(sums[k]->unrelocated, st.unrelocated);
		CHECK_EQ(sums[k]->skipped_total, st.skipped_total);
	}
	CHECK_EQ(s2->functions, st.functions);
	CHECK_EQ(s2->converted, st.converted);
	CHECK_EQ(s2->unrelocated, st.unrelocated);
	CHECK_EQ(s2->code_bytes_converted, st.code_bytes_converted);
	/* The developer path counts what it projected: unrelocated ones
	 * with the converted. */
	CHECK_EQ(info.outcome[EH2S_SKIP_NONE], st.converted + st.unrelocated);
	for (size_t r = 0; r < EH2S_SKIP_COUNT; r++) {
		CHECK_EQ(ra[r], rs[r]);
		CHECK_EQ(rb[r], rs[r]);
		CHECK_EQ(rs2[r], rs[r]);
		if (r != EH2S_SKIP_NONE)
			CHECK_EQ(info.outcome[r], rs[r]);
	}
}

/* An ELF64 object's first relocation in .rela.eh_frame made
 * R_*_NONE: that FDE's start has no relocation. 0 on success. */
static int drop_first_reloc(unsigned char *b, size_t n)
{
	if (n < 64)
		return -1;
	uint64_t shoff, off;
	unsigned shnum = b[60] | b[61] << 8, shstr = b[62] | b[63] << 8;
	memcpy(&shoff, b + 40, 8);
	if (shoff > n || (uint64_t)shnum * 64 > n - shoff || shstr >= shnum)
		return -1;
	const unsigned char *strh = b + shoff + (uint64_t)shstr * 64;
	memcpy(&off, strh + 24, 8);
	for (unsigned i = 1; i < shnum; i++) {
		const unsigned char *sh = b + shoff + (uint64_t)i * 64;
		uint64_t o, size;
		memcpy(&o, sh + 24, 8);
		memcpy(&size, sh + 32, 8);
		uint64_t name = off + get32(sh);
		if (name + 16 > n || strcmp((const char *)b + name, ".rela.eh_frame"))
			continue;
		if (size < 24 || o > n - 24)
			return -1;
		memset(b + o + 8, 0, 4); /* ELF64_R_TYPE */
		return 0;
	}
	return -1;
}

static void test_one_run(void)
{
	char dir[] = "/tmp/test_api_run_XXXXXX", src[64], obj[64], nrel[64];
	char out[64], cmd[256];
	unsigned char *img;
	size_t n = 0;

	same_counts("/bin/ls", "/tmp/test_api_run_ls.out",
		    (size_t)readelf_fdes("/bin/ls"), 0);
	if (!mkdtemp(dir))
		return;
	snprintf(src, sizeof src, "%s/r.c", dir);
	snprintf(obj, sizeof obj, "%s/r.o", dir);
	snprintf(nrel, sizeof nrel, "%s/nrel.o", dir);
	snprintf(out, sizeof out, "%s/out.o", dir);
	FILE *fp = fopen(src, "w");
	if (fp) {
		fputs("int g(int);\nint f(int x) { return g(x) + 1; }\n"
		      "int h(int n) { char v[n]; v[0] = 1; return g(v[n / 2]); }\n", fp);
		fclose(fp);
	}
	snprintf(cmd, sizeof cmd, "gcc -O2 -c -o %s %s 2>/dev/null", obj, src);
	if (system(cmd) != 0) {
		printf("test_one_run: no gcc, skipped\n");
	} else if ((img = slurp(obj, &n)) != NULL) {
		same_counts(obj, out, 2, 0);
		CHECK_EQ(drop_first_reloc(img, n), 0);
		fp = fopen(nrel, "wb");
		CHECK(fp && fwrite(img, 1, n, fp) == n);
		if (fp)
			fclose(fp);
		same_counts(nrel, out, 1, 1);
		free(img);
	}
	unlink(src);
	unlink(obj);
	unlink(nrel);
	rmdir(dir);
}

int main(void)
{
	test_errors();
	test_no_tmpdir();
	test_rel();
	test_ls();
	test_one_run();
	return t_done("test_api_convert");
}
