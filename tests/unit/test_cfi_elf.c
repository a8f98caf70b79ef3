/* The ELF front end: hand-built relocatable objects (x86-64 LE and
 * s390x BE, laid out per the ELF gABI), error cases, and a real linked
 * file (this test binary) checked against x86-64 psABI facts. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elfr_cfi.h"
#include "t.h"
#include "t_elf.h"

/* ELF64 relocatable or linked file with sections secs (indices 1..n)
 * and .shstrtab last. */
static void build_elf(bw_t *w, bool be, uint16_t machine, uint16_t type,
		      const t_sec *secs, size_t n)
{
	t_shape shape = {true, be, false, type, machine, 0, NULL, 0};
	t_build_elf(w, &shape, secs, n);
}

static void sym(bw_t *w, uint32_t name, uint8_t info, uint16_t shndx,
		uint64_t value)
{
	t_sym(w, true, name, info, shndx, value, 0);
}

/* An object whose .eh_frame (section 2) has one FDE relocated against
 * the .text section symbol + 0x40, where function "foo" starts. */
static void build_rel(bw_t *elf, bool be, uint16_t machine, uint32_t rtype)
{
	static const uint8_t text[0x100];
	bw_t eh, rela, syms;
	bw_init(&eh, be);
	bw_u32(&eh, 0x14);
	bw_u32(&eh, 0);
	bw_u8(&eh, 1);
	bw_bytes(&eh, "zR", 3);
	bw_uleb(&eh, 1);
	bw_sleb(&eh, -8);
	bw_u8(&eh, machine == EM_S390 ? 14 : 16);
	bw_uleb(&eh, 1);
	bw_u8(&eh, 0x1b);
	bw_bytes(&eh, machine == EM_S390 ? "\x0c\x0f\xa0\x01\x00\x00\x00"
					 : "\x0c\x07\x08\x90\x01\x00\x00",
		 7);
	size_t f = eh.len;
	bw_u32(&eh, 0x14);
	bw_u32(&eh, (uint32_t)(eh.len));
	size_t field = eh.len;
	bw_u32(&eh, 0);
	bw_u32(&eh, 0x30);
	bw_uleb(&eh, 0);
	bw_bytes(&eh, "\x41\x0e\x10", 3);
	bw_put_uN(&eh, f, eh.len - f - 4, 4);

	bw_init(&syms, be);
	sym(&syms, 0, 0, 0, 0);
	sym(&syms, 0, ELF64_ST_INFO(STB_LOCAL, STT_SECTION), 1, 0);
	sym(&syms, 1, ELF64_ST_INFO(STB_LOCAL, STT_NOTYPE), 1, 0x40);
	sym(&syms, 7, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), 1, 0x40);
	static const char strtab[] = "\0label\0foo";

	bw_init(&rela, be);
	bw_u64(&rela, field);
	bw_u64(&rela, ELF64_R_INFO(1, rtype));
	bw_u64(&rela, 0x40);

	t_sec secs[] = {
		{".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, text,
		 sizeof text, 0, 0, 0, 0, 0},
		{".eh_frame", SHT_PROGBITS, SHF_ALLOC, eh.data, eh.len, 0, 0, 0, 0, 0},
		{".rela.eh_frame", SHT_RELA, SHF_INFO_LINK, rela.data, rela.len,
		 4, 2, 24, 0, 0},
		{".symtab", SHT_SYMTAB, 0, syms.data, syms.len, 5, 3, 24, 0, 0},
		{".strtab", SHT_STRTAB, 0, (const uint8_t *)strtab,
		 sizeof strtab, 0, 0, 0, 0, 0},
	};
	build_elf(elf, be, machine, ET_REL, secs, 5);
	bw_free(&eh);
	bw_free(&rela);
	bw_free(&syms);
}

static void test_rel(bool be, uint16_t machine, uint32_t rtype, abi_id abi)
{
	bw_t elf;
	elfr_cfi *f = NULL;
	e2s_diag d;
	build_rel(&elf, be, machine, rtype);
	CHECK_EQ(elfr_cfi_open_mem(elf.data, elf.len, NULL, &f, &d),
		 E2S_ERR_OK);
	bw_free(&elf); /* the handle keeps its own copy */
	if (!f)
		return;
	const cfi_table *t = elfr_cfi_table(f);
	CHECK(elfr_cfi_is_rel(f));
	CHECK_EQ(elfr_cfi_machine(f), machine);
	CHECK_STR(elfr_cfi_section_name(f), ".eh_frame");
	CHECK_EQ(t->abi, abi);
	CHECK_EQ(t->big_endian, be);
	CHECK_EQ(t->nfdes, 1);
	CHECK_EQ(t->nbad_fdes, 0);
	if (t->nfdes == 1) {
		const cfi_fde *fde = &t->fdes[0];
		CHECK_EQ(fde->pc_begin, 0x40);
		CHECK_EQ(fde->pc_range, 0x30);
		CHECK(cfi_fde_reloc(t, fde).present);
		CHECK_EQ(cfi_fde_reloc(t, fde).sym, 1);
		CHECK_EQ(cfi_fde_reloc(t, fde).shndx, 1);
		CHECK_EQ(cfi_fde_reloc(t, fde).type, rtype);
		CHECK_EQ(fde->row_count, 2);
		CHECK_STR(elfr_cfi_func_name(f, fde), "foo");
		const cfi_row *r = &t->rows[fde->row_first];
		CHECK_EQ(r[1].start, 0x41);
		CHECK_EQ(r[1].cfa.off, 16);
		CHECK_EQ(r[0].cfa.reg, machine == EM_S390 ? 15 : 7);
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	cfi_dump_file(out, "o", t);
	fclose(out);
	CHECK(strstr(buf, " pc=40..70 sec=1\n") != NULL);
	free(buf);
	elfr_cfi_close(f);
}

static void test_errors(void)
{
	elfr_cfi *f = (elfr_cfi *)&f;
	e2s_diag d;
	CHECK_EQ(elfr_cfi_open_mem("hello, world", 12, NULL, &f, &d),
		 E2S_ERR_NOT_ELF);
	CHECK(f == NULL);
	CHECK_EQ(elfr_cfi_open_mem("\x7f" "ELF", 4, NULL, &f, &d),
		 E2S_ERR_NOT_ELF);
	CHECK_EQ(elfr_cfi_open("/nonexistent/eh2sframe-test", NULL, &f, &d),
		 E2S_ERR_IO);
	CHECK(d.detail[0] != '\0');

	/* An object without CFI. */
	static const uint8_t text[16];
	t_sec secs[] = {{".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
			 text, sizeof text, 0, 0, 0, 0, 0}};
	bw_t elf;
	build_elf(&elf, false, EM_X86_64, ET_REL, secs, 1);
	CHECK_EQ(elfr_cfi_open_mem(elf.data, elf.len, NULL, &f, &d),
		 E2S_ERR_NO_CFI);
	/* Section data past the end of the file. */
	bw_t bad;
	build_rel(&bad, false, EM_X86_64, R_X86_64_PC32);
	bad.len -= 64 * 7 + 0x80; /* cut into the section data */
	e2s_err e = elfr_cfi_open_mem(bad.data, bad.len, NULL, &f, &d);
	CHECK(e != E2S_ERR_OK);
	CHECK(f == NULL);
	bw_free(&bad);
	bw_free(&elf);
}

/* This test binary itself: x86-64 psABI says every function starts with
 * CFA = rsp + 8 and the return address at CFA - 8; the exceptions are
 * the PLT FDE (expression CFA after the first entry, which starts at
 * rsp+16) and _start (RA undefined). */
static void test_self(void)
{
	elfr_cfi *f;
	e2s_diag d;
#if !defined(__x86_64__)
	puts("test_cfi_elf: not x86-64, real-file checks skipped");
	return;
#endif
	CHECK_EQ(elfr_cfi_open("/proc/self/exe", NULL, &f, &d), E2S_ERR_OK);
	if (!f)
		return;
	const cfi_table *t = elfr_cfi_table(f);
	CHECK(!elfr_cfi_is_rel(f));
	CHECK_EQ(t->abi, ABI_AMD64);
	CHECK(t->nfdes > 10);
	CHECK_EQ(t->nbad_fdes, 0);
	size_t plt = 0, undef_ra = 0, normal = 0, odd = 0, mains = 0;
	for (size_t i = 0; i < t->nfdes; i++) {
		const cfi_fde *fde = &t->fdes[i];
		if (fde->row_count == 0) {
			CHECK_EQ(fde->pc_range, 0);
			continue;
		}
		const cfi_row *r = &t->rows[fde->row_first];
		bool has_expr = false;
		for (uint32_t j = 0; j < fde->row_count; j++) {
			const cfi_row *x = &r[j];
			CHECK(x->start < x->end);
			if (j)
				CHECK_EQ(x->start, r[j - 1].end);
			if (x->cfa.kind == CFI_CFA_EXPR) {
				has_expr = true;
				CHECK_EQ(x->cfa.expr.shape, CFI_EXPR_PLT);
			}
		}
		CHECK_EQ(r[0].start, fde->pc_begin);
		CHECK_EQ(r[fde->row_count - 1].end,
			 fde->pc_begin + fde->pc_range);
		const char *name = elfr_cfi_func_name(f, fde);
		if (name && strcmp(name, "main") == 0)
			mains++;
		if (has_expr) {
			plt++;
			continue;
		}
		if (r[0].ra.kind == CFI_RULE_UNDEFINED) {
			undef_ra++;
			continue;
		}
		if (r[0].cfa.kind == CFI_CFA_REG_OFF && r[0].cfa.reg == 7 &&
		    r[0].cfa.off == 8 && r[0].ra.kind == CFI_RULE_OFFSET &&
		    r[0].ra.off == -8)
			normal++;
		else
			odd++;
	}
	CHECK_EQ(odd, 0);
	CHECK(normal > 10);
	CHECK(plt <= 1);
	CHECK(undef_ra <= 1);
	CHECK_EQ(mains, 1);
	elfr_cfi_close(f);
}

int main(void)
{
	test_rel(false, EM_X86_64, R_X86_64_PC32, ABI_AMD64);
	test_rel(true, EM_S390, R_390_PC32, ABI_S390X);
	test_rel(false, EM_AARCH64, R_AARCH64_PREL32, ABI_AARCH64);
	test_errors();
	test_self();
	return t_done("test_cfi_elf");
}
