/* Hostile offsets (issue 18): CFI whose offsets are at the edges of
 * int64 (10-byte LEB128s, 2^63, INT64_MIN after factoring, huge
 * advances), on x86-64, AArch64 and big-endian s390x. Built with UBSan
 * and -fno-sanitize-recover, so an overflow anywhere in the converter or
 * the verifier aborts the test. Each section has a plain function (it
 * must convert) and one with the hostile rule; the result must verify,
 * in V3 and V2. */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eh2sframe.h"
#include "t.h"
#include "t_ehframe.h"

#define SEC 0x402000u
#define FUNC 0x401000u
#define SFRAME 0x500000u

static size_t uleb(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		p[n++] = (uint8_t)(b | (v ? 0x80 : 0));
	} while (v);
	return n;
}

static size_t sleb(uint8_t *p, int64_t v)
{
	size_t n = 0;
	for (;;) {
		uint8_t b = (uint8_t)(v & 0x7f);
		v >>= 7; /* arithmetic on every compiler we build with */
		if ((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40))) {
			p[n++] = b;
			return n;
		}
		p[n++] = (uint8_t)(b | 0x80);
	}
}

typedef struct {
	const char *name;
	unsigned machine;
	int be;
	uint8_t caf, daf, ra, sp, fp;
	uint8_t init[8];
	size_t ninit;
} abi_t;

static const abi_t abis[] = {
	{"x86-64", EM_X86_64, 0, 1, 0x78, 16, 7, 6, {0x0c, 7, 8, 0x90, 1}, 5},
	{"aarch64", EM_AARCH64, 0, 4, 0x78, 30, 31, 29, {0x0c, 31, 0}, 3},
	{"s390x", EM_S390, 1, 2, 0x78, 14, 15, 11, {0x0c, 15, 0xa0, 0x01}, 4},
};

/* The hostile instruction (after an advance of one unit). */
static size_t hostile(const abi_t *a, int k, uint8_t *p)
{
	size_t n = 0;
	switch (k) {
	case 0: /* def_cfa_offset 2^63 (a 10-byte ULEB128) */
		p[n++] = 0x0e;
		return n + uleb(p + n, (uint64_t)1 << 63);
	case 1: /* def_cfa_offset 2^64 - 1 */
		p[n++] = 0x0e;
		return n + uleb(p + n, UINT64_MAX);
	case 2: /* def_cfa_offset_sf: -2^60 * -8 = 2^63, wraps to INT64_MIN */
		p[n++] = 0x13;
		return n + sleb(p + n, -((int64_t)1 << 60));
	case 3: /* def_cfa sp, INT64_MAX */
		p[n++] = 0x0c;
		p[n++] = a->sp;
		return n + uleb(p + n, INT64_MAX);
	case 4: /* offset_extended_sf fp: 2^60 + 1 factored by -8 */
		p[n++] = 0x11;
		p[n++] = a->fp;
		return n + sleb(p + n, ((int64_t)1 << 60) + 1);
	case 5: /* offset_extended ra, 2^63 factored */
		p[n++] = 0x05;
		p[n++] = a->ra;
		return n + uleb(p + n, (uint64_t)1 << 63);
	case 6: /* val_offset sp, 2^62 factored: SP = CFA - 2^65 */
		p[n++] = 0x14;
		p[n++] = a->sp;
		return n + uleb(p + n, (uint64_t)1 << 62);
	case 7: /* s390x-style scaling edge: 160 + 8 * (INT32_MAX + 1) */
		p[n++] = 0x0e;
		return n + uleb(p + n, 160 + 8 * ((uint64_t)INT32_MAX + 1));
	case 8: /* the same below: 160 + 8 * INT32_MIN, as a signed offset */
		p[n++] = 0x13;
		return n + sleb(p + n, -(160 + 8 * ((int64_t)INT32_MAX + 1)) / 8);
	case 9: /* advance_loc4 0xffffffff, then a plain rule past the end */
		p[n++] = 0x04;
		memset(p + n, 0xff, 4);
		n += 4;
		p[n++] = 0x0e;
		p[n++] = 16;
		return n;
	default:
		return 0;
	}
}

/* With T_OFFSETS_SEEDS=DIR, each section is written as an input of the
 * fuzz_cfi target (its first byte selects .eh_frame, the byte order,
 * 8-byte addresses, the ABI and V2; tests/fuzz/fuzz_cfi.c), for
 * tests/fuzz/regress/fuzz_cfi. */
static void save_seed(const abi_t *a, int k, int version, const ebuf *e)
{
	const char *dir = getenv("T_OFFSETS_SEEDS");
	char path[512];
	if (!dir)
		return;
	unsigned abi = a->machine == EM_X86_64 ? 0 : a->machine == EM_AARCH64 ? 1 : 2;
	uint8_t sel = (uint8_t)((a->be ? 2 : 0) | abi << 3 | (version == 2 ? 0x80 : 0));
	snprintf(path, sizeof path, "%s/offsets-%s-%d-v%d", dir, a->name, k,
		 version == 2 ? 2 : 3);
	FILE *fp = fopen(path, "wb");
	if (!fp)
		return;
	fputc(sel, fp);
	fwrite(e->b, 1, e->n, fp);
	fclose(fp);
}

static void one(const abi_t *a, int k, int version)
{
	static const uint8_t plain[] = {0x41, 0x0e, 0x20};
	uint8_t ins[32];
	ebuf e;
	memset(&e, 0, sizeof e);
	e.be = a->be;
	ins[0] = 0x41;
	size_t n = 1 + hostile(a, k, ins + 1);
	cie(&e, a->caf, a->daf, a->ra, a->init, a->ninit);
	fde(&e, SEC, FUNC, 0x40, plain, sizeof plain);
	fde(&e, SEC, FUNC + 0x100, 0x40, ins, n);
	put(&e, 0, 4);
	eh2s_cfi_input in = input(&e, a->machine, SEC);
	save_seed(a, k, version, &e);
	eh2s_section_opts o;
	eh2s_section_opts_init(&o);
	o.sframe_version = version;
	void *out = NULL;
	size_t nout = 0;
	eh2s_summary sum;
	eh2s_summary_init(&sum);
	eh2s_error err;
	CHECK_EQ(eh2s_convert_section(&in, SFRAME, &o, &out, &nout, &sum, &err),
		 EH2S_OK);
	CHECK(sum.converted >= 1);
	if (out) {
		eh2s_verify_result vr;
		eh2s_verify_result_init(&vr);
		eh2s_verify_section_opts vo;
		eh2s_verify_section_opts_init(&vo);
		vo.report_missing = 1;
		CHECK_EQ(eh2s_verify_section(&in, out, nout, SFRAME, &vo, &vr,
					     &err), EH2S_OK);
		CHECK_EQ(vr.mismatch, 0);
		CHECK_EQ(vr.missing, 0);
		CHECK_EQ(vr.extra, 0);
		printf("%s case %d V%d: converted %zu of %zu, verify match %zu "
		       "skipped %zu\n", a->name, k, version ? version : 3,
		       sum.converted, sum.functions, vr.match, vr.skipped);
	}
	eh2s_free(out);
}

int main(void)
{
	for (size_t i = 0; i < sizeof abis / sizeof *abis; i++)
		for (int k = 0; k < 10; k++) {
			one(&abis[i], k, 3);
			one(&abis[i], k, 2);
		}
	return t_done("test_offsets");
}
