/* elfp_check_output (issue 22): a good conversion passes; outputs damaged
 * the way a converter bug would damage them (a symbol table retyped, a
 * relocation naming a symbol past the table or no section, the CFI's
 * relocations broken) fail with E2S_ERR_OUTPUT_CHECK; a defect the input
 * already had is not reported. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convert/convert.h"
#include "elfpatch/elfpatch.h"
#include "t.h"
#include "t_files.h"

static const char *const obj = "tests/data/gas/x86_prog.obj";

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* A converted image of in (--force: the object has gas's .sframe). */
static unsigned char *convert(elfp_file *f, size_t *n, elfp_check_opts *co)
{
	conv_file_opts o = {.force = true};
	conv_result res;
	e2s_diag d;
	uint8_t *b = NULL;
	CHECK_EQ(conv_file(f, &o, &res, &d), E2S_ERR_OK);
	co->debug_frame = false;
	co->nfdes = res.nfdes;
	conv_result_free(&res);
	CHECK_EQ(elfp_write_mem(f, &b, n, &d), E2S_ERR_OK);
	return b;
}

/* Section header field at off of section name in image b. */
static unsigned char *shdr_field(unsigned char *b, size_t n, const char *name,
				 unsigned off)
{
	elfp_file *v = NULL;
	e2s_diag d;
	unsigned char *p = NULL;
	if (elfp_open_view(b, n, &v, &d) != E2S_ERR_OK)
		return NULL;
	size_t i = elfp_find_section(v, name);
	uint64_t shoff = get32(b + 0x28) | (uint64_t)get32(b + 0x2c) << 32;
	if (i)
		p = b + shoff + i * 64 + off;
	elfp_close(v);
	return p;
}

/* First relocation entry of section name in image b. */
static unsigned char *first_rela(unsigned char *b, size_t n, const char *name)
{
	elfp_file *v = NULL;
	e2s_diag d;
	unsigned char *p = NULL;
	if (elfp_open_view(b, n, &v, &d) != E2S_ERR_OK)
		return NULL;
	size_t i = elfp_find_section(v, name);
	if (i && elfp_section(v, i)->size >= 24)
		p = b + elfp_section(v, i)->offset;
	elfp_close(v);
	return p;
}

/* out with one change made by damage; the check must fail. */
static void expect_caught(elfp_file *f, const unsigned char *out, size_t n,
			  const elfp_check_opts *co, const char *sec,
			  unsigned field, uint32_t val, bool rela,
			  const char *what)
{
	unsigned char *b = malloc(n);
	e2s_diag d;
	if (!b)
		return;
	memcpy(b, out, n);
	unsigned char *p = rela ? first_rela(b, n, sec) : shdr_field(b, n, sec, field);
	CHECK(p != NULL);
	if (p) {
		put32(p + (rela ? field : 0), val);
		e2s_err e = elfp_check_output(f, b, n, co, &d);
		if (e != E2S_ERR_OUTPUT_CHECK)
			fprintf(stderr, "not caught: %s\n", what);
		CHECK_EQ(e, E2S_ERR_OUTPUT_CHECK);
	}
	free(b);
}

static void test_damage(void)
{
	size_t n = 0;
	elfp_file *f = NULL;
	elfp_check_opts co;
	e2s_diag d;
	CHECK_EQ(elfp_open(obj, &f, &d), E2S_ERR_OK);
	if (!f)
		return;
	unsigned char *out = convert(f, &n, &co);
	if (out) {
		CHECK_EQ(elfp_check_output(f, out, n, &co, &d), E2S_ERR_OK);
		/* sh_type at +4, sh_info at +44; r_info's symbol at +12. */
		expect_caught(f, out, n, &co, ".symtab", 4, SHT_PROGBITS, false,
			      "symbol table retyped");
		expect_caught(f, out, n, &co, ".rela.sframe", 12, 0x10000, true,
			      "symbol index past the table");
		expect_caught(f, out, n, &co, ".rela.sframe", 44, 0, false,
			      "sh_info 0");
		expect_caught(f, out, n, &co, ".rela.eh_frame", 12, 0x10000, true,
			      "CFI relocation broken");
		free(out);
	}
	elfp_close(f);
}

/* The input's .rela.text names a symbol past the table: not ours, the
 * conversion (which never reads it) still succeeds. */
static void test_input_defect(void)
{
	size_t n = 0, m = 0;
	unsigned char *a = slurp(obj, &n);
	elfp_file *f = NULL;
	elfp_check_opts co;
	e2s_diag d;
	CHECK(a != NULL);
	if (!a)
		return;
	unsigned char *p = first_rela(a, n, ".rela.text");
	CHECK(p != NULL);
	if (p)
		put32(p + 12, 0x10000);
	CHECK_EQ(elfp_open_view(a, n, &f, &d), E2S_ERR_OK);
	if (f) {
		unsigned char *out = convert(f, &m, &co);
		if (out)
			CHECK_EQ(elfp_check_output(f, out, m, &co, &d), E2S_ERR_OK);
		free(out);
	}
	elfp_close(f);
	free(a);
}

int main(void)
{
	if (access(obj, R_OK) != 0) {
		printf("skip: no %s\n", obj);
		return 77;
	}
	test_damage();
	test_input_defect();
	return t_done("test_elfp_check");
}
