/* Public API, path-based operations (include/eh2sframe.h, "Working on
 * files by path"). Truth comes from outside eh2sframe: readelf's FDE
 * counts and section sizes, nm's symbols, cmp, the SFrame header layout
 * of the spec, and a byte planted in a gcc object's .eh_frame that is no
 * DW_CFA opcode (0x1a is unassigned in DWARF 5, table 7.29). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_dev.h"
#include "eh2sframe.h"
#include "t.h"
#include "t_files.h"

static char dir[64];

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static int run(const char *cmd)
{
	return system(cmd);
}

/* First line of cmd's output that contains key, or "" (static buffer). */
static const char *grep_line(const char *cmd, const char *key)
{
	static char line[1024];
	char buf[1024];
	FILE *p = popen(cmd, "r");
	line[0] = '\0';
	if (!p)
		return line;
	while (fgets(buf, sizeof buf, p))
		if (!line[0] && strstr(buf, key))
			snprintf(line, sizeof line, "%s", buf);
	pclose(p);
	return line;
}

/* Offset and size of section name from readelf -SW, -1 when absent. */
static long section(const char *path, const char *name, long *size)
{
	char cmd[512], key[64];
	unsigned long off = 0, sz = 0;
	snprintf(cmd, sizeof cmd, "readelf -SW %s", path);
	snprintf(key, sizeof key, " %s ", name);
	const char *l = grep_line(cmd, key);
	const char *p = strchr(l, ']');
	char nm[64], type[64];
	unsigned long addr;
	if (!p || sscanf(p + 1, "%63s %63s %lx %lx %lx", nm, type, &addr, &off,
			 &sz) != 5)
		return -1;
	if (size)
		*size = (long)sz;
	return (long)off;
}

static int spit(const char *path, const unsigned char *b, size_t n)
{
	FILE *fp = fopen(path, "wb");
	int ok = fp && fwrite(b, 1, n, fp) == n;
	if (fp && fclose(fp) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

/* Two functions; the first (fib) gets a bad opcode in bad.o. */
static int make_objects(char *obj, char *bad, size_t len)
{
	char src[128], cmd[512];
	path_in(src, sizeof src, "t.c");
	path_in(obj, len, "t.o");
	path_in(bad, len, "bad.o");
	FILE *fp = fopen(src, "w");
	if (!fp)
		return -1;
	fputs("int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
	      "int sq(int x) { return x * x; }\n", fp);
	fclose(fp);
	snprintf(cmd, sizeof cmd, "gcc -O1 -c -o %s %s 2>/dev/null", obj, src);
	if (run(cmd) != 0)
		return -1;
	size_t n = 0;
	unsigned char *b = slurp(obj, &n);
	long off = section(obj, ".eh_frame", NULL);
	if (!b || off < 0 || (size_t)off + 64 > n) {
		free(b);
		return -1;
	}
	/* CIE length (LE), then the FDE: length, CIE pointer, pc_begin,
	 * pc_range (4 bytes each), augmentation length 0, instructions. */
	uint32_t cie = (uint32_t)b[off] | (uint32_t)b[off + 1] << 8 |
		       (uint32_t)b[off + 2] << 16 | (uint32_t)b[off + 3] << 24;
	size_t at = (size_t)off + 4 + cie + 17;
	if (at >= n) {
		free(b);
		return -1;
	}
	b[at] = 0x1a;
	int rc = spit(bad, b, n);
	free(b);
	return rc;
}

typedef struct {
	int calls;
	char first[320];
} msgs;

static void on_msg(void *ctx, const char *m)
{
	msgs *c = ctx;
	if (!c->calls++)
		snprintf(c->first, sizeof c->first, "%s", m);
}

static size_t count_prefix(const char *text, const char *prefix)
{
	size_t n = 0, len = strlen(prefix);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (strncmp(p, prefix, len) == 0)
			n++;
	return n;
}

static void test_dump_cfi(const char *obj, const char *bad)
{
	char *text = NULL, hdr[256];
	size_t len = 0;
	eh2s_error err;
	msgs m = {0, ""};
	FILE *out = open_memstream(&text, &len);
	long fdes = readelf_fdes(obj);

	CHECK(fdes == 2);
	CHECK_EQ(eh2s_dump_cfi_file(obj, 0, out, on_msg, &m, &err), EH2S_OK);
	CHECK_EQ(eh2s_dump_cfi_file(bad, 0, out, on_msg, &m, &err), EH2S_OK);
	CHECK_EQ(eh2s_dump_cfi_file("/nonexistent/x", 0, out, on_msg, &m, &err),
		 EH2S_E_IO);
	CHECK(err.message[0] != '\0');
	fclose(out);
	snprintf(hdr, sizeof hdr, "# %s .eh_frame abi=amd64 fdes=%ld bad=0\n",
		 obj, fdes);
	CHECK(strncmp(text, hdr, strlen(hdr)) == 0);
	snprintf(hdr, sizeof hdr, "# %s .eh_frame abi=amd64 fdes=%ld bad=1\n",
		 bad, fdes);
	CHECK(strstr(text, hdr) != NULL);
	CHECK_EQ(count_prefix(text, "FDE "), 2 * fdes);
	/* Only the planted byte is reported, once. */
	CHECK_EQ(m.calls, 1);
	CHECK(strstr(m.first, "DW_CFA") != NULL);
	CHECK(strstr(m.first, "0x1a") != NULL);
	free(text);
}

typedef struct {
	int calls;
	uint64_t pc;
	int reason;
	char name[64];
} skips;

static void on_skip(void *ctx, const eh2s_function *fn)
{
	skips *s = ctx;
	if (!s->calls++) {
		s->pc = fn->pc;
		s->reason = fn->reason;
		snprintf(s->name, sizeof s->name, "%s", fn->name ? fn->name : "");
	}
}

static void test_convert(const char *obj, const char *bad)
{
	char out[128], out2[128], cmd[512];
	eh2s_file_opts fo;
	eh2s_convert_opts co;
	eh2s_summary sum;
	size_t by_reason[EH2S_SKIP_COUNT];
	eh2s_file_result res;
	eh2s_error err;
	skips sk = {0, 0, 0, ""};
	long sz = 0;

	path_in(out, sizeof out, "t.sf.o");
	path_in(out2, sizeof out2, "t.copy.o");
	eh2s_file_opts_init(&fo);
	eh2s_convert_opts_init(&co);
	eh2s_summary_init(&sum);
	eh2s_file_result_init(&res);
	sum.by_reason = by_reason;
	sum.by_reason_len = EH2S_SKIP_COUNT;
	co.on_function = on_skip;
	co.cb_ctx = &sk;
	fo.convert = &co;
	CHECK_EQ(eh2s_convert_file(obj, out, &fo, &sum, &res, &err), EH2S_OK);
	CHECK_EQ(sum.functions, readelf_fdes(obj));
	CHECK_EQ(sum.converted, sum.functions);
	CHECK_EQ(by_reason[EH2S_SKIP_NONE], sum.functions);
	CHECK_EQ(sk.calls, 0);
	CHECK(section(out, ".sframe", &sz) > 0);
	CHECK_EQ(sum.sframe_bytes, sz);
	CHECK_EQ(sum.sframe_sections, 1);

	/* A second conversion: EXISTS; the copy is the input, byte for byte. */
	fo.copy_unchanged = 1;
	CHECK_EQ(eh2s_convert_file(out, out2, &fo, &sum, &res, &err),
		 EH2S_E_EXISTS);
	snprintf(cmd, sizeof cmd, "cmp -s %s %s", out, out2);
	CHECK_EQ(run(cmd), 0);
	/* force rebuilds it: the same functions give the same bytes. */
	co.force = 1;
	CHECK_EQ(eh2s_convert_file(out, out2, &fo, &sum, &res, &err), EH2S_OK);
	CHECK_EQ(run(cmd), 0);
	co.force = 0;
	fo.copy_unchanged = 0;

	/* The planted byte: fib, at section offset 0 (nm), is skipped. */
	char bad_out[128];
	path_in(bad_out, sizeof bad_out, "bad.sf.o");
	CHECK_EQ(eh2s_convert_file(bad, bad_out, &fo, &sum, NULL, &err),
		 EH2S_OK);
	CHECK_EQ(sum.converted, sum.functions - 1);
	CHECK_EQ(by_reason[EH2S_SKIP_BAD_CFI], 1);
	CHECK_EQ(sum.skipped_total, 1);
	CHECK_EQ(sk.calls, 1);
	CHECK_EQ(sk.reason, EH2S_SKIP_BAD_CFI);
	CHECK_STR(sk.name, "fib");
	snprintf(cmd, sizeof cmd, "nm %s", obj);
	const char *l = grep_line(cmd, " T fib");
	CHECK_EQ(strtoull(l, NULL, 16), sk.pc);

	/* Errors leave no output. */
	char none[128];
	path_in(none, sizeof none, "none.o");
	CHECK_EQ(eh2s_convert_file("/nonexistent/x", none, &fo, &sum, &res,
				   &err), EH2S_E_IO);
	CHECK(access(none, F_OK) != 0);
	co.sframe_version = 7;
	CHECK_EQ(eh2s_convert_file(obj, none, &fo, NULL, NULL, &err),
		 EH2S_E_UNSUPPORTED);
	CHECK(access(none, F_OK) != 0);
}

typedef struct {
	int mismatch, missing, extra, skipped;
} issues;

static void on_issue(void *ctx, const eh2s_verify_issue *is)
{
	issues *c = ctx;
	if (is->kind == EH2S_ISSUE_MISMATCH)
		c->mismatch++;
	else if (is->kind == EH2S_ISSUE_MISSING)
		c->missing++;
	else if (is->kind == EH2S_ISSUE_SKIPPED)
		c->skipped++;
	else
		c->extra++;
}

static void test_verify(const char *obj, const char *bad)
{
	char conv[128], bad_conv[128];
	eh2s_verify_opts vo;
	eh2s_verify_result r;
	eh2s_error err;
	issues is = {0, 0, 0, 0};
	long fdes = readelf_fdes(obj);

	path_in(conv, sizeof conv, "t.sf.o");
	path_in(bad_conv, sizeof bad_conv, "bad.sf.o");
	eh2s_verify_opts_init(&vo);
	eh2s_verify_result_init(&r);
	vo.on_issue = on_issue;
	vo.cb_ctx = &is;
	CHECK_EQ(eh2s_verify_file(conv, &vo, &r, &err), EH2S_OK);
	CHECK_EQ(r.functions, fdes);
	CHECK_EQ(r.match, fdes);
	CHECK(r.failed_path == NULL);
	/* bad.sf.o lacks fib; against the intact CFI it is missing. */
	vo.cfi_from = obj;
	CHECK_EQ(eh2s_verify_file(bad_conv, &vo, &r, &err), EH2S_OK);
	CHECK_EQ(r.missing, 1);
	CHECK_EQ(is.missing, 0); /* not reported without report_missing */
	vo.report_missing = 1;
	CHECK_EQ(eh2s_verify_file(bad_conv, &vo, &r, &err), EH2S_OK);
	CHECK_EQ(is.missing, 1);
	/* t.sf.o has fib; bad.o's FDE for it has an opcode no DWARF reader
	 * interprets, so no DWARF rule covers fib: extra. */
	vo.cfi_from = bad;
	CHECK_EQ(eh2s_verify_file(conv, &vo, &r, &err), EH2S_E_VERIFY);
	CHECK_EQ(r.extra, 1);
	CHECK_EQ(is.extra, 1);
	/* Skipped functions are reported on request, with the reason. */
	vo.cfi_from = NULL;
	vo.report_skipped = 1;
	is.skipped = 0;
	CHECK_EQ(eh2s_verify_file(bad_conv, &vo, &r, &err), EH2S_OK);
	CHECK_EQ(is.skipped, (int)r.skipped);
	/* The error names the file it is about. */
	vo.cfi_from = "/nonexistent/x";
	CHECK_EQ(eh2s_verify_file(conv, &vo, &r, &err), EH2S_E_IO);
	CHECK_STR(r.failed_path, "/nonexistent/x");
	/* No .sframe to check. */
	eh2s_status st = eh2s_verify_file(obj, NULL, &r, &err);
	CHECK(st != EH2S_OK && st != EH2S_E_VERIFY);
	CHECK_STR(r.failed_path, obj);
}

static void test_dump_sframe(const char *obj)
{
	char conv[128], *text = NULL;
	size_t len = 0;
	eh2s_error err;
	FILE *out = open_memstream(&text, &len);
	long fdes = readelf_fdes(obj);
	char want[64];

	path_in(conv, sizeof conv, "t.sf.o");
	CHECK_EQ(eh2s_dump_sframe_file(conv, "HEAD:", out, &err), EH2S_OK);
	CHECK(eh2s_dump_sframe_file(obj, "NOT PRINTED", out, &err) != EH2S_OK);
	fclose(out);
	CHECK(strncmp(text, "HEAD:\n", 6) == 0);
	CHECK(strstr(text, "NOT PRINTED") == NULL);
	snprintf(want, sizeof want, "Num FDEs: %ld\n", fdes);
	CHECK(strstr(text, want) != NULL);
	free(text);
}

static void test_encode(const char *obj)
{
	api_encode_opts eo = {0, 0, 0, 0};
	api_encode_info info;
	eh2s_error err;
	void *data = NULL;
	size_t size = 0;
	long fdes = readelf_fdes(obj);

	CHECK_EQ(api_encode_sframe_file(obj, &eo, &data, &size, &info, &err),
		 EH2S_OK);
	const unsigned char *p = data;
	CHECK(size >= 28 && size == info.bytes);
	if (size >= 28) {
		/* Spec 2.1: magic 0xdee2, version, flags, abi_arch ... */
		CHECK_EQ(p[0] | p[1] << 8, 0xdee2);
		CHECK_EQ(p[2], 3);
		CHECK_EQ(p[4], 3); /* SFRAME_ABI_AMD64_ENDIAN_LITTLE */
		CHECK_EQ(get32(p + 8), fdes);
	}
	CHECK_EQ(info.outcome[EH2S_SKIP_NONE], fdes);
	eh2s_free(data);
	eo.sframe_version = 2;
	CHECK_EQ(api_encode_sframe_file(obj, &eo, &data, &size, &info, &err),
		 EH2S_OK);
	p = data;
	CHECK(size >= 4 && p[2] == 2);
	eh2s_free(data);
	eo.sframe_version = 4;
	CHECK_EQ(api_encode_sframe_file(obj, &eo, &data, &size, &info, &err),
		 EH2S_E_UNSUPPORTED);
	CHECK(data == NULL);
}

int main(void)
{
	char obj[128], bad[128], cmd[160];
	snprintf(dir, sizeof dir, "/tmp/test_api_text.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	if (make_objects(obj, bad, sizeof obj) != 0) {
		printf("test_api_text: no gcc or readelf, skipped\n");
	} else {
		test_dump_cfi(obj, bad);
		test_convert(obj, bad);
		test_verify(obj, bad);
		test_dump_sframe(obj);
		test_encode(obj);
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	run(cmd);
	return t_done("test_api_text");
}
