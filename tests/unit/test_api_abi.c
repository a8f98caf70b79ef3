/* The ABI contract of include/eh2sframe.h ("Keeping the ABI"), played
 * as a caller built against an older or a newer header would:
 * - a struct whose size was never set is USAGE, with a message naming
 *   the _init function;
 * - a newer caller's larger options struct is accepted while the fields
 *   this library does not know are 0, refused (UNSUPPORTED) otherwise;
 * - a newer caller's larger result struct gets the fields this library
 *   knows and nothing beyond them; its size stays as the caller set it;
 * - by_reason arrays of any length (none, shorter, longer than the
 *   library's reasons) are filled only up to their length;
 * - structs the library hands out carry its size;
 * - unknown enum values in are refused, out are named. */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eh2sframe.h"
#include "t.h"
#include "t_ehframe.h"

#define SEC 0x402000u
#define FUNC 0x401000u
#define SFRAME 0x500000u
#define SENTINEL ((size_t)0x5eed5eed)

/* push %rbp; mov %rsp,%rbp (a converted function), then one whose CFA
 * is a DWARF expression (skipped: cfa-expression). */
static void build(ebuf *e)
{
	static const uint8_t init[] = {0x0c, 7, 8, 0x90, 1};
	static const uint8_t fp[] = {0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6};
	static const uint8_t expr[] = {0x0f, 1, 0x30};
	memset(e, 0, sizeof *e);
	cie(e, 1, 0x78, 16, init, sizeof init);
	fde(e, SEC, FUNC, 0x20, fp, sizeof fp);
	fde(e, SEC, FUNC + 0x40, 0x10, expr, sizeof expr);
	put(e, 0, 4);
}

/* A caller built against a header whose structs grew by `future`. */
typedef struct {
	eh2s_section_opts o;
	size_t future[3];
} newer_opts;

typedef struct {
	eh2s_summary s;
	size_t future[3];
} newer_summary;

typedef struct {
	eh2s_cfi_input in;
	uint64_t future[2];
} newer_input;

static size_t fn_size;

static void on_fn(void *ctx, const eh2s_function *fn)
{
	(void)ctx;
	fn_size = fn->size;
}

static void test_sizes(void)
{
	ebuf e;
	build(&e);
	eh2s_cfi_input in = input(&e, EM_X86_64, SEC);
	eh2s_section_opts o;
	eh2s_summary sum;
	eh2s_error err;
	void *out = NULL;
	size_t n = 0;

	/* Never initialised: size 0, or smaller than the first release's. */
	memset(&o, 0, sizeof o);
	CHECK_EQ(eh2s_convert_section(&in, SFRAME, &o, &out, &n, NULL, &err),
		 EH2S_E_USAGE);
	CHECK(strstr(err.message, "eh2s_section_opts_init") != NULL);
	eh2s_section_opts_init(&o);
	o.size = sizeof(size_t) + sizeof(int);
	CHECK_EQ(eh2s_convert_section(&in, SFRAME, &o, &out, &n, NULL, &err),
		 EH2S_E_USAGE);
	eh2s_section_opts_init(&o);
	CHECK_EQ(o.size, sizeof o);
	memset(&sum, 0, sizeof sum);
	CHECK_EQ(eh2s_convert_section(&in, SFRAME, &o, &out, &n, &sum, &err),
		 EH2S_E_USAGE);
	CHECK(strstr(err.message, "eh2s_summary_init") != NULL);
	CHECK(out == NULL);
	eh2s_cfi_input bad = in;
	bad.size = 3;
	CHECK_EQ(eh2s_convert_section(&bad, SFRAME, NULL, &out, &n, NULL, &err),
		 EH2S_E_USAGE);
	CHECK(strstr(err.message, "eh2s_cfi_input_init") != NULL);

	/* A newer caller: unknown option fields at 0 are fine, and the
	 * result fields this library does not know are left alone. */
	newer_opts no;
	newer_summary ns;
	newer_input ni;
	memset(&no, 0, sizeof no);
	no.o.size = sizeof no;
	no.o.on_function = on_fn;
	memset(&ni, 0, sizeof ni);
	ni.in = in;
	ni.in.size = sizeof ni;
	memset(&ns, 0, sizeof ns);
	ns.s.size = sizeof ns;
	for (int i = 0; i < 3; i++)
		ns.future[i] = SENTINEL;
	fn_size = 0;
	CHECK_EQ(eh2s_convert_section(&ni.in, SFRAME, &no.o, &out, &n, &ns.s,
				      &err), EH2S_OK);
	CHECK_EQ(fn_size, sizeof(eh2s_function));
	CHECK_EQ(ns.s.size, sizeof ns);
	CHECK_EQ(ns.s.functions, 2);
	CHECK_EQ(ns.s.converted, 1);
	CHECK_EQ(ns.s.skipped_total, 1);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(ns.future[i], SENTINEL);
	eh2s_free(out);
	out = NULL;
	/* ... but a set field it does not know is refused. */
	no.future[1] = 1;
	CHECK_EQ(eh2s_convert_section(&ni.in, SFRAME, &no.o, &out, &n, NULL,
				      &err), EH2S_E_UNSUPPORTED);
	CHECK(strstr(err.message, "does not know") != NULL);
	no.future[1] = 0;
	ni.future[0] = 1;
	CHECK_EQ(eh2s_convert_section(&ni.in, SFRAME, &no.o, &out, &n, NULL,
				      &err), EH2S_E_UNSUPPORTED);
	CHECK(out == NULL);
}

static void test_by_reason(void)
{
	ebuf e;
	build(&e);
	eh2s_cfi_input in = input(&e, EM_X86_64, SEC);
	eh2s_summary sum;
	eh2s_error err;
	void *out = NULL;
	size_t n = 0;
	size_t big[EH2S_SKIP_COUNT + 4];

	/* Longer than the library's reasons: the rest is 0. */
	for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
		big[i] = SENTINEL;
	eh2s_summary_init(&sum);
	sum.by_reason = big;
	sum.by_reason_len = sizeof big / sizeof big[0];
	CHECK_EQ(eh2s_convert_section(&in, SFRAME, NULL, &out, &n, &sum, &err),
		 EH2S_OK);
	eh2s_free(out);
	CHECK_EQ(big[EH2S_SKIP_NONE], 1);
	CHECK_EQ(big[EH2S_SKIP_CFA_EXPR], 1);
	for (size_t i = EH2S_SKIP_COUNT; i < sizeof big / sizeof big[0]; i++)
		CHECK_EQ(big[i], 0);
	CHECK(sum.by_reason == big);
	/* Shorter: filled up to its length, not beyond. */
	for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
		big[i] = SENTINEL;
	sum.by_reason_len = 2;
	CHECK_EQ(eh2s_convert_section(&in, SFRAME, NULL, &out, &n, &sum, &err),
		 EH2S_OK);
	eh2s_free(out);
	CHECK_EQ(big[EH2S_SKIP_NONE], 1);
	CHECK_EQ(big[1], 0);
	CHECK_EQ(big[2], SENTINEL);
	/* skipped_total counts what a short array leaves out. */
	CHECK_EQ(sum.skipped_total, 1);
	/* None. */
	eh2s_summary_init(&sum);
	CHECK_EQ(eh2s_convert_section(&in, SFRAME, NULL, &out, &n, &sum, &err),
		 EH2S_OK);
	eh2s_free(out);
	CHECK_EQ(sum.converted, 1);
}

static int issue_kind = -1;
static size_t issue_size;

static void on_issue(void *ctx, const eh2s_verify_issue *is)
{
	(void)ctx;
	issue_kind = is->kind;
	issue_size = is->size;
}

static void test_verify_opts(void)
{
	ebuf e;
	build(&e);
	eh2s_cfi_input in = input(&e, EM_X86_64, SEC);
	eh2s_verify_section_opts vo;
	eh2s_verify_result vr;
	eh2s_error err;
	void *out = NULL;
	size_t n = 0;

	CHECK_EQ(eh2s_convert_section(&in, SFRAME, NULL, &out, &n, NULL, &err),
		 EH2S_OK);
	/* Defaults (NULL) report nothing; report_skipped names the
	 * expression function with its kind. */
	CHECK_EQ(eh2s_verify_section(&in, out, n, SFRAME, NULL, NULL, &err),
		 EH2S_OK);
	eh2s_verify_section_opts_init(&vo);
	eh2s_verify_result_init(&vr);
	vo.on_issue = on_issue;
	CHECK_EQ(eh2s_verify_section(&in, out, n, SFRAME, &vo, &vr, &err),
		 EH2S_OK);
	CHECK_EQ(issue_kind, -1);
	vo.report_skipped = 1;
	CHECK_EQ(eh2s_verify_section(&in, out, n, SFRAME, &vo, &vr, &err),
		 EH2S_OK);
	CHECK_EQ(issue_kind, EH2S_ISSUE_SKIPPED);
	CHECK_EQ(issue_size, sizeof(eh2s_verify_issue));
	CHECK_EQ(vr.skipped, 1);
	CHECK_EQ(vr.match, 1);
	CHECK(vr.failed_path == NULL);
	/* A result never initialised. */
	memset(&vr, 0, sizeof vr);
	CHECK_EQ(eh2s_verify_section(&in, out, n, SFRAME, &vo, &vr, &err),
		 EH2S_E_USAGE);
	eh2s_free(out);
}

static void test_enums(void)
{
	/* Out: a reason or status this library does not know is named. */
	CHECK_STR(eh2s_skip_name(EH2S_SKIP_COUNT + 7), "unknown");
	CHECK_STR(eh2s_strerror((eh2s_status)(EH2S_E_INTERNAL + 1)),
		  "unknown error");
	/* The newest reasons are public, with their README names. */
	CHECK_STR(eh2s_skip_name(EH2S_SKIP_V2), "not-in-sframe-v2");
	CHECK_STR(eh2s_skip_name(EH2S_SKIP_PC_RELATIVE), "pc-relative");
	CHECK_STR(eh2s_skip_name(EH2S_SKIP_RA_SIGN_PC), "ra-signed-with-pc");
	CHECK_STR(eh2s_skip_name(EH2S_SKIP_RA_SIGN_STATE), "ra-sign-state");
	CHECK_STR(eh2s_skip_name(EH2S_SKIP_CIE_PTR_WIDTH), "cie-pointer-width");
	/* In: an SFrame version or CFI kind it does not know. */
	ebuf e;
	build(&e);
	eh2s_cfi_input in = input(&e, EM_X86_64, SEC);
	eh2s_section_opts o;
	eh2s_error err;
	void *out = NULL;
	size_t n = 0;
	eh2s_section_opts_init(&o);
	o.sframe_version = 4;
	CHECK_EQ(eh2s_convert_section(&in, SFRAME, &o, &out, &n, NULL, &err),
		 EH2S_E_UNSUPPORTED);
	in.kind = EH2S_CFI_DEBUG_FRAME + 1;
	CHECK_EQ(eh2s_convert_section(&in, SFRAME, NULL, &out, &n, NULL, &err),
		 EH2S_E_UNSUPPORTED);
	CHECK(out == NULL);
}

int main(void)
{
	test_sizes();
	test_by_reason();
	test_verify_opts();
	test_enums();
	return t_done("test_api_abi");
}
