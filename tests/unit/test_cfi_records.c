/* Record framing, CIE fields, pointer encodings and relocations on
 * hand-built .eh_frame / .debug_frame bytes. Expected values are worked
 * out by hand from the LSB .eh_frame description and DWARF 5 6.4.1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elf.h>

#include "elf/elfr_cfi.h"
#include "common/buf.h"
#include "t.h"

static size_t rec_begin(bw_t *w)
{
	size_t s = w->len;
	bw_u32(w, 0);
	return s;
}

static void rec_end(bw_t *w, size_t s)
{
	bw_put_uN(w, s, w->len - s - 4, 4);
}

/* .eh_frame CIE, version 1, code 1, data -8, RA 16, given augmentation
 * and augmentation data (written after a ULEB length if aug has 'z'). */
static size_t eh_cie(bw_t *w, const char *aug, const uint8_t *ad, size_t adn)
{
	static const uint8_t init[] = {0x0c, 7, 8, 0x90, 1};
	size_t s = rec_begin(w);
	bw_u32(w, 0);
	bw_u8(w, 1);
	bw_bytes(w, aug, strlen(aug) + 1);
	bw_uleb(w, 1);
	bw_sleb(w, -8);
	bw_u8(w, 16);
	if (aug[0] == 'z') {
		bw_uleb(w, adn);
		bw_bytes(w, ad, adn);
	}
	bw_bytes(w, init, sizeof init);
	rec_end(w, s);
	return s;
}

static size_t zr_cie(bw_t *w, uint8_t enc)
{
	return eh_cie(w, "zR", &enc, 1);
}

/* Start an .eh_frame FDE; the caller writes the address fields. */
static size_t eh_fde_begin(bw_t *w, size_t cie)
{
	size_t s = rec_begin(w);
	bw_u32(w, (uint32_t)(w->len - cie));
	return s;
}

/* Finish an FDE: aug data length 0 (if z) and one instruction
 * (advance_loc 1; def_cfa_offset 16). */
static void eh_fde_end(bw_t *w, size_t s, bool z)
{
	static const uint8_t ins[] = {0x41, 0x0e, 16};
	if (z)
		bw_uleb(w, 0);
	bw_bytes(w, ins, sizeof ins);
	rec_end(w, s);
}

typedef struct {
	cfi_sec_kind kind;
	uint64_t vaddr, data_base, text_base;
	const cfi_rela *relas;
	size_t nrelas;
	bool (*read_mem)(void *, uint64_t, unsigned, uint64_t *);
	uint8_t addr_size;
} popt;

static e2s_err parse_o(const bw_t *w, abi_id abi, const popt *o,
		       cfi_table *t, e2s_diag *d)
{
	cfi_section sec;
	memset(&sec, 0, sizeof sec);
	sec.kind = o ? o->kind : CFI_SEC_EH_FRAME;
	sec.data = w->data;
	sec.size = w->len;
	sec.big_endian = w->big_endian;
	sec.addr_size = o && o->addr_size ? o->addr_size : 8;
	if (o) {
		sec.vaddr = o->vaddr;
		sec.data_base = o->data_base;
		sec.text_base = o->text_base;
		sec.relas = o->relas;
		sec.nrelas = o->nrelas;
		sec.relocatable = o->relas != NULL;
		sec.read_mem = o->read_mem;
	}
	return cfi_parse(&sec, abi, t, d);
}

static e2s_err parse(const bw_t *w, cfi_table *t)
{
	e2s_diag d;
	return parse_o(w, ABI_AMD64, NULL, t, &d);
}

/* ---- pointer encodings ----------------------------------------------- */

/* One FDE with encoding enc whose address fields are written by put. */
typedef void (*put_fn)(bw_t *w, size_t field_off);

static cfi_fde one_fde(uint8_t enc, put_fn put, const popt *o, bool be)
{
	bw_t w;
	cfi_table t;
	e2s_diag d;
	cfi_fde f;
	memset(&f, 0xee, sizeof f);
	bw_init(&w, be);
	size_t c = zr_cie(&w, enc);
	size_t s = eh_fde_begin(&w, c);
	put(&w, w.len);
	eh_fde_end(&w, s, true);
	if (parse_o(&w, ABI_AMD64, o, &t, &d) == E2S_ERR_OK &&
	    t.nfdes == 1) {
		f = t.fdes[0];
		cfi_table_free(&t);
	}
	bw_free(&w);
	return f;
}

static void put_absptr(bw_t *w, size_t o) { (void)o; bw_u64(w, 0x401000); bw_u64(w, 0x20); }
static void put_udata2(bw_t *w, size_t o) { (void)o; bw_u16(w, 0xfff0); bw_u16(w, 0x10); }
static void put_udata4(bw_t *w, size_t o) { (void)o; bw_u32(w, 0x80001000); bw_u32(w, 0x30); }
static void put_udata8(bw_t *w, size_t o) { (void)o; bw_u64(w, 0x123456789a); bw_u64(w, 0x40); }
static void put_uleb(bw_t *w, size_t o) { (void)o; bw_uleb(w, 0x12345); bw_uleb(w, 0x200); }
static void put_sleb(bw_t *w, size_t o) { (void)o; bw_sleb(w, 0x7000); bw_sleb(w, 0x10); }
static void put_sdata2(bw_t *w, size_t o) { (void)o; bw_u16(w, 0x7ff0); bw_u16(w, 0x10); }
static void put_sdata8(bw_t *w, size_t o) { (void)o; bw_u64(w, 0x5000); bw_u64(w, 0x10); }
/* pcrel sdata4: the field at section offset o, section at 0x2000;
 * target 0x1000 -> value 0x1000 - (0x2000 + o), negative. */
static void put_pcrel(bw_t *w, size_t o)
{
	bw_u32(w, (uint32_t)(int32_t)(0x1000 - (0x2000 + (int64_t)o)));
	bw_u32(w, 0x50);
}
static void put_rel4(bw_t *w, size_t o) { (void)o; bw_u32(w, 0x100); bw_u32(w, 0x8); }
static void put_aligned(bw_t *w, size_t o)
{
	/* Padding up to an 8-byte boundary of vaddr 0x2004 + o. */
	size_t pad = (8 - (0x2004 + o) % 8) % 8;
	CHECK(pad != 0); /* make the test exercise the alignment */
	for (size_t i = 0; i < pad; i++)
		bw_u8(w, 0xee);
	bw_u64(w, 0x7000);
	bw_u64(w, 0x18);
}
static void put_indirect(bw_t *w, size_t o)
{
	bw_u32(w, (uint32_t)(0x3000 - (0x2000 + o))); /* -> 0x3000 */
	bw_u32(w, 0x10);
}

static bool mem(void *ctx, uint64_t vaddr, unsigned size, uint64_t *out)
{
	(void)ctx;
	if (vaddr != 0x3000 || size != 8)
		return false;
	*out = 0x9abc;
	return true;
}

static void test_encodings(void)
{
	cfi_fde f;
	f = one_fde(0x00, put_absptr, NULL, false);
	CHECK_EQ(f.status, E2S_ERR_OK);
	CHECK_EQ(f.pc_begin, 0x401000);
	CHECK_EQ(f.pc_range, 0x20);
	f = one_fde(0x02, put_udata2, NULL, false);
	CHECK_EQ(f.pc_begin, 0xfff0);
	CHECK_EQ(f.pc_range, 0x10);
	f = one_fde(0x03, put_udata4, NULL, false);
	CHECK_EQ(f.pc_begin, 0x80001000); /* not sign-extended */
	f = one_fde(0x04, put_udata8, NULL, false);
	CHECK_EQ(f.pc_begin, 0x123456789a);
	f = one_fde(0x01, put_uleb, NULL, false);
	CHECK_EQ(f.pc_begin, 0x12345);
	CHECK_EQ(f.pc_range, 0x200);
	f = one_fde(0x09, put_sleb, NULL, false);
	CHECK_EQ(f.pc_begin, 0x7000);
	f = one_fde(0x0a, put_sdata2, NULL, false);
	CHECK_EQ(f.pc_begin, 0x7ff0);
	f = one_fde(0x0c, put_sdata8, NULL, false);
	CHECK_EQ(f.pc_begin, 0x5000);
	CHECK_EQ(f.row_count, 2);

	popt o;
	memset(&o, 0, sizeof o);
	o.vaddr = 0x2000;
	f = one_fde(0x1b, put_pcrel, &o, false); /* pcrel sdata4 */
	CHECK_EQ(f.status, E2S_ERR_OK);
	CHECK_EQ(f.pc_begin, 0x1000);
	CHECK_EQ(f.pc_range, 0x50);
	/* Same bytes, big-endian section. */
	f = one_fde(0x1b, put_pcrel, &o, true);
	CHECK_EQ(f.pc_begin, 0x1000);
	CHECK_EQ(f.pc_range, 0x50);

	o.data_base = 0x10000;
	o.text_base = 0x20000;
	f = one_fde(0x33, put_rel4, &o, false); /* datarel udata4 */
	CHECK_EQ(f.pc_begin, 0x10100);
	f = one_fde(0x23, put_rel4, &o, false); /* textrel udata4 */
	CHECK_EQ(f.pc_begin, 0x20100);
	f = one_fde(0x43, put_rel4, &o, false); /* funcrel: base 0 here */
	CHECK_EQ(f.pc_begin, 0x100);

	o.vaddr = 0x2004;
	f = one_fde(0x50, put_aligned, &o, false);
	CHECK_EQ(f.status, E2S_ERR_OK);
	CHECK_EQ(f.pc_begin, 0x7000);
	CHECK_EQ(f.pc_range, 0x18);

	o.vaddr = 0x2000;
	o.read_mem = mem;
	f = one_fde(0x9b, put_indirect, &o, false);
	CHECK_EQ(f.status, E2S_ERR_OK);
	CHECK_EQ(f.pc_begin, 0x9abc);
	o.read_mem = NULL;
	f = one_fde(0x9b, put_indirect, &o, false);
	CHECK_EQ(f.status, E2S_ERR_BAD_POINTER_ENCODING);

	/* Invalid encodings in the CIE: the FDE inherits the status. */
	f = one_fde(0x07, put_absptr, NULL, false);
	CHECK_EQ(f.status, E2S_ERR_BAD_POINTER_ENCODING);
	f = one_fde(0xff, put_absptr, NULL, false); /* omit for 'R' */
	CHECK_EQ(f.status, E2S_ERR_BAD_POINTER_ENCODING);
	f = one_fde(0x60, put_absptr, NULL, false); /* application 0x60 */
	CHECK_EQ(f.status, E2S_ERR_BAD_POINTER_ENCODING);
}

/* funcrel and set_loc: set_loc uses the FDE encoding, funcrel base is
 * the FDE's pc_begin. */
static void test_set_loc_funcrel(void)
{
	bw_t w;
	cfi_table t;
	bw_init(&w, false);
	size_t c = zr_cie(&w, 0x43);
	size_t s = eh_fde_begin(&w, c);
	bw_u32(&w, 0x500);
	bw_u32(&w, 0x40);
	bw_uleb(&w, 0);
	static const uint8_t ins[] = {0x01, 0x10, 0, 0, 0, 0x0e, 16};
	bw_bytes(&w, ins, sizeof ins);
	rec_end(&w, s);
	CHECK_EQ(parse(&w, &t), E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].status, E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 2);
	CHECK_EQ(t.rows[1].start, 0x510);
	cfi_table_free(&t);
	bw_free(&w);
}

/* ---- relocations (ET_REL) -------------------------------------------- */

static void test_relocs(void)
{
	bw_t w;
	cfi_table t;
	e2s_diag d;
	popt o;
	bw_init(&w, false);
	size_t c = zr_cie(&w, 0x1b);
	size_t s1 = eh_fde_begin(&w, c);
	size_t field1 = w.len;
	bw_u32(&w, 0); /* RELA: the field holds zero */
	bw_u32(&w, 0x30);
	eh_fde_end(&w, s1, true);
	size_t s2 = eh_fde_begin(&w, c);
	size_t field2 = w.len;
	bw_u32(&w, 0);
	bw_u32(&w, 0x10);
	eh_fde_end(&w, s2, true);

	cfi_rela r[2];
	memset(r, 0, sizeof r);
	r[0].offset = field1;
	r[0].type = R_X86_64_PC32;
	r[0].sym = 2;
	r[0].addend = 0x40;
	r[0].sym_value = 0;
	r[0].sym_shndx = 1;
	r[1].offset = field2;
	r[1].type = R_X86_64_PC32;
	r[1].sym = 5;
	r[1].addend = 0;
	r[1].sym_value = 0x80; /* a function symbol: S + A */
	r[1].sym_shndx = 4;
	memset(&o, 0, sizeof o);
	o.relas = r;
	o.nrelas = 2;
	CHECK_EQ(parse_o(&w, ABI_AMD64, &o, &t, &d), E2S_ERR_OK);
	CHECK_EQ(t.nfdes, 2);
	CHECK(t.relocatable);
	CHECK_EQ(t.fdes[0].pc_begin, 0x40);
	CHECK_EQ(t.fdes[0].pc_range, 0x30);
	CHECK(cfi_fde_reloc(&t, &t.fdes[0]).present);
	CHECK_EQ(cfi_fde_reloc(&t, &t.fdes[0]).shndx, 1);
	CHECK_EQ(cfi_fde_reloc(&t, &t.fdes[0]).sym, 2);
	CHECK_EQ(cfi_fde_reloc(&t, &t.fdes[0]).addend, 0x40);
	CHECK_EQ(cfi_fde_reloc(&t, &t.fdes[0]).type, R_X86_64_PC32);
	CHECK_EQ(t.rows[t.fdes[0].row_first + 1].start, 0x41);
	CHECK_EQ(t.fdes[1].pc_begin, 0x80);
	CHECK_EQ(cfi_fde_reloc(&t, &t.fdes[1]).shndx, 4);
	cfi_table_free(&t);

	/* An absolute relocation on a pc-relative field is wrong. */
	r[0].type = R_X86_64_64;
	CHECK_EQ(parse_o(&w, ABI_AMD64, &o, &t, &d), E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].status, E2S_ERR_BAD_RELOC);
	CHECK_EQ(t.fdes[0].err_off, field1);
	CHECK_EQ(t.fdes[1].status, E2S_ERR_OK);
	cfi_table_free(&t);
	/* AArch64 and s390x PC-relative types. */
	r[0].type = R_AARCH64_PREL32;
	r[1].type = R_AARCH64_PREL32;
	CHECK_EQ(parse_o(&w, ABI_AARCH64, &o, &t, &d), E2S_ERR_OK);
	CHECK_EQ(t.nbad_fdes, 0);
	CHECK_EQ(t.fdes[0].pc_begin, 0x40);
	cfi_table_free(&t);
	r[0].type = R_390_PC32;
	r[1].type = R_390_PC32;
	CHECK_EQ(parse_o(&w, ABI_S390X, &o, &t, &d), E2S_ERR_OK);
	CHECK_EQ(t.nbad_fdes, 0);
	cfi_table_free(&t);
	/* SHT_REL: the addend is in the field. */
	bw_put_uN(&w, field1, 0x24, 4);
	r[0].type = R_X86_64_PC32;
	r[0].addend = 0;
	r[0].implicit_addend = true;
	r[1].type = R_X86_64_PC32;
	CHECK_EQ(parse_o(&w, ABI_AMD64, &o, &t, &d), E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].pc_begin, 0x24);
	CHECK_EQ(cfi_fde_reloc(&t, &t.fdes[0]).addend, 0x24);
	cfi_table_free(&t);
	bw_free(&w);
}

/* .debug_frame in ET_REL: the CIE pointer is relocated against the
 * section (R_X86_64_32, addend = CIE offset), the address is absolute
 * (R_X86_64_64). The second CIE is the one used, to make the CIE
 * pointer's relocation matter. */
static void test_debug_frame_relocs(void)
{
	bw_t w;
	cfi_table t;
	e2s_diag d;
	static const uint8_t init[] = {0x0c, 7, 8, 0x90, 1};
	bw_init(&w, false);
	size_t cies[2];
	for (int i = 0; i < 2; i++) {
		cies[i] = rec_begin(&w);
		bw_u32(&w, 0xffffffff);
		bw_u8(&w, 3);
		bw_u8(&w, 0);
		bw_uleb(&w, 1);
		bw_sleb(&w, -8);
		bw_uleb(&w, 16);
		bw_bytes(&w, init, sizeof init);
		rec_end(&w, cies[i]);
	}
	size_t s = rec_begin(&w);
	size_t ptr = w.len;
	bw_u32(&w, 0);
	size_t addr = w.len;
	bw_u64(&w, 0);
	bw_u64(&w, 0x22);
	rec_end(&w, s);
	cfi_rela r[2];
	memset(r, 0, sizeof r);
	r[0].offset = ptr;
	r[0].type = R_X86_64_32;
	r[0].addend = (int64_t)cies[1];
	r[0].sym_shndx = 7;
	r[1].offset = addr;
	r[1].type = R_X86_64_64;
	r[1].addend = 0x100;
	r[1].sym_shndx = 1;
	popt o;
	memset(&o, 0, sizeof o);
	o.kind = CFI_SEC_DEBUG_FRAME;
	o.relas = r;
	o.nrelas = 2;
	CHECK_EQ(parse_o(&w, ABI_AMD64, &o, &t, &d), E2S_ERR_OK);
	CHECK_EQ(t.nfdes, 1);
	CHECK_EQ(t.fdes[0].status, E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].cie, 1);
	CHECK_EQ(t.fdes[0].cie_off, cies[1]);
	CHECK_EQ(t.fdes[0].pc_begin, 0x100);
	CHECK_EQ(t.fdes[0].pc_range, 0x22);
	CHECK_EQ(cfi_fde_reloc(&t, &t.fdes[0]).shndx, 1);
	CHECK_EQ(t.fdes[0].row_count, 1);
	cfi_table_free(&t);
	bw_free(&w);
}

/* Free Pascal 3.2's .debug_frame: a record with a 32-bit length whose
 * CIE pointer is 8 bytes (R_X86_64_64 on it) and whose address and
 * range follow 8 bytes later than DWARF puts them (sysutils.o of
 * fp-units-rtl-3.2.2: FDE at 0x14, length 0x20, pointer at 0x18,
 * address at 0x20, range 0x149 at 0x28). A DWARF reader takes 4 bytes
 * of pointer and reads the range as 0x149 << 32: malformed CFI
 * (CIE_PTR_WIDTH), in the relocatable file by the relocation's width
 * and, once linked (no relocations), by the location and range being
 * multiples of 2^32. The well-formed FDE after each stays usable. */
static void test_fpc_debug_frame(void)
{
	static const uint8_t init[] = {0x0c, 7, 8, 0x05, 0x10, 0x02, 0};
	for (int linked = 0; linked < 2; linked++) {
		bw_t w;
		cfi_table t;
		e2s_diag d;
		bw_init(&w, false);
		size_t c = rec_begin(&w);
		bw_u32(&w, 0xffffffff);
		bw_u8(&w, 1);
		bw_u8(&w, 0);
		bw_uleb(&w, 1);
		bw_sleb(&w, -4);
		bw_u8(&w, 16);
		bw_bytes(&w, init, sizeof init);
		rec_end(&w, c);
		CHECK_EQ(w.len, 0x14);
		size_t s = rec_begin(&w);
		size_t ptr = w.len;
		bw_u64(&w, 0);                           /* 8-byte CIE pointer */
		size_t addr = w.len;
		bw_u64(&w, linked ? 0x401090 : 0);      /* address */
		bw_u64(&w, 0x149);                       /* range */
		static const uint8_t ins[] = {0, 0, 0, 0, 0x04, 12, 0, 0, 0, 0x0e, 16, 0};
		bw_bytes(&w, ins, sizeof ins);
		rec_end(&w, s);
		/* A DWARF-conforming FDE after it: pointer 4 bytes. */
		size_t s2 = rec_begin(&w);
		size_t ptr2 = w.len;
		bw_u32(&w, 0);
		size_t addr2 = w.len;
		bw_u64(&w, linked ? 0x402000 : 0);
		bw_u64(&w, 0x10);
		rec_end(&w, s2);
		cfi_rela r[4];
		memset(r, 0, sizeof r);
		r[0].offset = ptr;
		r[0].type = R_X86_64_64;
		r[1].offset = addr;
		r[1].type = R_X86_64_64;
		r[1].sym_shndx = 1;
		r[2].offset = ptr2;
		r[2].type = R_X86_64_32;
		r[3].offset = addr2;
		r[3].type = R_X86_64_64;
		r[3].sym_shndx = 2;
		popt o;
		memset(&o, 0, sizeof o);
		o.kind = CFI_SEC_DEBUG_FRAME;
		if (!linked) {
			o.relas = r;
			o.nrelas = 4;
		}
		CHECK_EQ(parse_o(&w, ABI_AMD64, &o, &t, &d), E2S_ERR_OK);
		CHECK_EQ(t.nfdes, 2);
		CHECK_EQ(t.fdes[0].status, E2S_ERR_CIE_PTR_WIDTH);
		CHECK_EQ(t.fdes[1].status, E2S_ERR_OK);
		CHECK_EQ(t.fdes[1].pc_range, 0x10);
		CHECK_EQ(t.nbad_fdes, 1);
		cfi_table_free(&t);
		/* Not the layout: a 32-bit pointer relocation (the good FDE
		 * alone), or a linked range above 4 GiB that is no multiple
		 * of 2^32 (a function too large, not a misread record). */
		if (linked) {
			w.data[addr + 4] = 1; /* range 0x149_0000_0001 as read */
			CHECK_EQ(parse_o(&w, ABI_AMD64, &o, &t, &d), E2S_ERR_OK);
			CHECK_EQ(t.fdes[0].status, E2S_ERR_OK);
			CHECK_EQ(t.fdes[0].pc_range, 0x14900000001ull);
			cfi_table_free(&t);
		} else {
			r[0].type = R_X86_64_32;
			CHECK_EQ(parse_o(&w, ABI_AMD64, &o, &t, &d), E2S_ERR_OK);
			CHECK_EQ(t.fdes[0].status, E2S_ERR_OK);
			CHECK_EQ(t.fdes[0].pc_range, 0x14900000000ull);
			cfi_table_free(&t);
		}
		bw_free(&w);
	}
}

/* ---- framing ---------------------------------------------------------- */

static void test_length_errors(void)
{
	bw_t w;
	cfi_table t;
	e2s_diag d;
	bw_init(&w, false);
	size_t c = zr_cie(&w, 0x04);
	size_t s = eh_fde_begin(&w, c);
	bw_u64(&w, 0x1000);
	bw_u64(&w, 0x10);
	eh_fde_end(&w, s, true);
	size_t good_len = w.len;

	/* Length past the end: fatal, with the record's offset. */
	bw_put_uN(&w, s, 0x100, 4);
	CHECK_EQ(parse_o(&w, ABI_AMD64, NULL, &t, &d), E2S_ERR_BAD_LENGTH);
	CHECK_EQ(d.code, E2S_ERR_BAD_LENGTH);
	CHECK_STR(d.section, ".eh_frame");
	CHECK_EQ(d.offset, s);
	CHECK(t.fdes == NULL && t.nfdes == 0);
	bw_put_uN(&w, s, good_len - s - 4, 4);

	/* Stray bytes shorter than a length field. */
	bw_u8(&w, 0);
	bw_u8(&w, 0);
	CHECK_EQ(parse_o(&w, ABI_AMD64, NULL, &t, &d), E2S_ERR_BAD_LENGTH);
	CHECK_EQ(d.offset, good_len);
	w.len = good_len;

	/* Zero terminator: whatever follows is not read. */
	bw_u32(&w, 0);
	bw_u32(&w, 0xffffff00);
	CHECK_EQ(parse(&w, &t), E2S_ERR_OK);
	CHECK_EQ(t.nfdes, 1);
	cfi_table_free(&t);
	w.len = good_len;

	/* Reserved length values. */
	bw_u32(&w, 0xfffffff0);
	CHECK_EQ(parse_o(&w, ABI_AMD64, NULL, &t, &d), E2S_ERR_BAD_LENGTH);
	w.len = good_len;

	/* A record too short for its fields: that FDE is bad, file goes
	 * on. */
	size_t s2 = eh_fde_begin(&w, c);
	bw_u32(&w, 0x1000); /* half of a udata8 */
	rec_end(&w, s2);
	size_t s3 = eh_fde_begin(&w, c);
	bw_u64(&w, 0x2000);
	bw_u64(&w, 0x10);
	eh_fde_end(&w, s3, true);
	CHECK_EQ(parse(&w, &t), E2S_ERR_OK);
	CHECK_EQ(t.nfdes, 3);
	CHECK_EQ(t.nbad_fdes, 1);
	CHECK_EQ(t.fdes[1].status, E2S_ERR_TRUNCATED);
	CHECK_EQ(t.fdes[2].status, E2S_ERR_OK);
	CHECK_EQ(t.fdes[2].pc_begin, 0x2000);
	cfi_table_free(&t);
	bw_free(&w);
}

static void test_bad_cie_pointer(void)
{
	bw_t w;
	cfi_table t;
	bw_init(&w, false);
	size_t c = zr_cie(&w, 0x04);
	size_t s1 = eh_fde_begin(&w, c);
	bw_u64(&w, 0x1000);
	bw_u64(&w, 0x10);
	eh_fde_end(&w, s1, true);
	/* Points at the first FDE, not a CIE. */
	size_t s2 = eh_fde_begin(&w, s1);
	bw_u64(&w, 0x2000);
	bw_u64(&w, 0x10);
	eh_fde_end(&w, s2, true);
	/* Points before the section start. */
	size_t s3 = rec_begin(&w);
	bw_u32(&w, (uint32_t)w.len + 0x100);
	bw_u64(&w, 0x3000);
	bw_u64(&w, 0x10);
	eh_fde_end(&w, s3, true);
	CHECK_EQ(parse(&w, &t), E2S_ERR_OK);
	CHECK_EQ(t.nfdes, 3);
	CHECK_EQ(t.fdes[0].status, E2S_ERR_OK);
	CHECK_EQ(t.fdes[1].status, E2S_ERR_BAD_CIE_ID);
	CHECK_EQ(t.fdes[1].cie_off, s1);
	CHECK_EQ(t.fdes[2].status, E2S_ERR_BAD_CIE_ID);
	CHECK_EQ(t.nbad_fdes, 2);
	cfi_table_free(&t);
	bw_free(&w);
}

static void test_augmentations(void)
{
	bw_t w;
	cfi_table t;
	bw_init(&w, false);
	/* zPLRSB: personality (indirect pcrel sdata4), LSDA enc, R, S, B */
	static const uint8_t ad[] = {0x9b, 0, 0, 0, 0, 0x1b, 0x04};
	size_t c1 = eh_cie(&w, "zPLRSB", ad, sizeof ad);
	size_t c2 = eh_cie(&w, "zRX", (const uint8_t *)"\x04\x00", 2);
	size_t c3 = eh_cie(&w, "foo", NULL, 0);
	size_t c4 = eh_cie(&w, "zRG", (const uint8_t *)"\x04", 1);
	size_t s = eh_fde_begin(&w, c1);
	bw_u64(&w, 0x1000);
	bw_u64(&w, 0x10);
	bw_uleb(&w, 4); /* LSDA pointer (sdata4) in the FDE aug data */
	bw_u32(&w, 0x1234);
	static const uint8_t ins[] = {0x41, 0x0e, 16};
	bw_bytes(&w, ins, sizeof ins);
	rec_end(&w, s);
	size_t cs[] = {c2, c3, c4};
	for (int i = 0; i < 3; i++) {
		s = eh_fde_begin(&w, cs[i]);
		bw_u64(&w, 0x2000);
		bw_u64(&w, 0x10);
		eh_fde_end(&w, s, true);
	}
	CHECK_EQ(parse(&w, &t), E2S_ERR_OK);
	CHECK_EQ(t.ncies, 4);
	CHECK_EQ(t.cies[0].status, E2S_ERR_OK);
	CHECK(t.cies[0].signal_frame);
	CHECK(t.cies[0].pauth_b_key);
	CHECK(t.cies[0].has_z);
	CHECK_EQ(t.cies[0].fde_enc, 0x04);
	CHECK_EQ(t.cies[0].lsda_enc, 0x1b);
	CHECK_STR(t.cies[0].augmentation, "zPLRSB");
	CHECK_EQ(t.fdes[0].status, E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].row_count, 2);
	CHECK_EQ(t.rows[1].cfa.off, 16);
	CHECK_EQ(t.cies[1].status, E2S_ERR_BAD_AUGMENTATION);
	CHECK_EQ(t.fdes[1].status, E2S_ERR_BAD_AUGMENTATION);
	CHECK_EQ(t.cies[2].status, E2S_ERR_BAD_AUGMENTATION);
	CHECK_EQ(t.fdes[2].status, E2S_ERR_BAD_AUGMENTATION);
	CHECK_EQ(t.cies[3].status, E2S_ERR_OK);
	CHECK(t.cies[3].mte_tagged);
	CHECK(!t.cies[3].signal_frame);
	CHECK_EQ(t.fdes[3].status, E2S_ERR_OK);
	CHECK_EQ(t.nbad_fdes, 2);

	/* The dump shows flags and errors. */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cfi_dump_file(f, "x.o", &t);
	fclose(f);
	char want[1024];
	snprintf(want, sizeof want,
		 "# x.o .eh_frame abi=amd64 fdes=4 bad=2\n"
		 "FDE %zx cie=%zx pc=1000..1010 signal bkey\n"
		 "  1000 cfa=r7+8 ra=c-8 fp=- sp=-\n"
		 "  1001 cfa=r7+16 ra=c-8 fp=- sp=-\n"
		 "FDE %zx cie=%zx pc=0..0 error=unknown CIE augmentation\n"
		 "FDE %zx cie=%zx pc=0..0 error=unknown CIE augmentation\n"
		 "FDE %zx cie=%zx pc=2000..2010\n"
		 "  2000 cfa=r7+8 ra=c-8 fp=- sp=-\n"
		 "  2001 cfa=r7+16 ra=c-8 fp=- sp=-\n",
		 (size_t)t.fdes[0].sec_off, c1, (size_t)t.fdes[1].sec_off, c2,
		 (size_t)t.fdes[2].sec_off, c3, (size_t)t.fdes[3].sec_off, c4);
	CHECK_STR(buf, want);
	free(buf);
	cfi_table_free(&t);
	bw_free(&w);

	/* "eh": old GCC, an address-sized eh_ptr after the string. */
	bw_init(&w, false);
	size_t c = rec_begin(&w);
	bw_u32(&w, 0);
	bw_u8(&w, 1);
	bw_bytes(&w, "eh", 3);
	bw_u64(&w, 0xabcdef);
	bw_uleb(&w, 1);
	bw_sleb(&w, -8);
	bw_u8(&w, 16);
	bw_bytes(&w, "\x0c\x07\x08", 3);
	rec_end(&w, c);
	s = eh_fde_begin(&w, c);
	bw_u64(&w, 0x1000);
	bw_u64(&w, 0x10);
	eh_fde_end(&w, s, false);
	CHECK_EQ(parse(&w, &t), E2S_ERR_OK);
	CHECK_EQ(t.cies[0].status, E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].status, E2S_ERR_OK);
	CHECK_EQ(t.rows[0].cfa.off, 8);
	CHECK_EQ(t.rows[0].ra.kind, CFI_RULE_UNSPEC);
	cfi_table_free(&t);
	bw_free(&w);
}

/* A 64-bit-DWARF .debug_frame CIE, version v; the FDE after it. */
static void test_debug_frame_versions(void)
{
	static const uint8_t init[] = {0x0c, 7, 8, 0x90, 1};
	for (int v = 1; v <= 5; v++) {
		for (int dw64 = 0; dw64 < 2; dw64++) {
			bw_t w;
			cfi_table t;
			e2s_diag d;
			popt o;
			bw_init(&w, false);
			/* FDE first: .debug_frame may point forward. */
			size_t f = w.len;
			size_t flen_at;
			if (dw64) {
				bw_u32(&w, 0xffffffff);
				flen_at = w.len;
				bw_u64(&w, 0);
			} else {
				flen_at = w.len;
				bw_u32(&w, 0);
			}
			size_t cie_ptr_at = w.len;
			bw_uN(&w, 0, dw64 ? 8 : 4);
			unsigned asz = v == 4 ? 4 : 8;
			bw_uN(&w, 0x1000, asz);
			bw_uN(&w, 0x20, asz);
			bw_bytes(&w, "\x42\x0e\x10", 3); /* advance 2*2 */
			bw_put_uN(&w, flen_at, w.len - flen_at - (dw64 ? 8 : 4),
				  dw64 ? 8 : 4);
			size_t c = w.len;
			bw_put_uN(&w, cie_ptr_at, c, dw64 ? 8 : 4);
			if (dw64) {
				bw_u32(&w, 0xffffffff);
				flen_at = w.len;
				bw_u64(&w, 0);
				bw_u64(&w, UINT64_MAX);
			} else {
				flen_at = w.len;
				bw_u32(&w, 0);
				bw_u32(&w, 0xffffffff);
			}
			bw_u8(&w, (uint8_t)v);
			bw_u8(&w, 0); /* "" */
			if (v == 4) {
				bw_u8(&w, 4); /* address_size */
				bw_u8(&w, 0); /* segment_size */
			}
			bw_uleb(&w, 2);
			bw_sleb(&w, -4);
			if (v == 1)
				bw_u8(&w, 16);
			else
				bw_uleb(&w, 16);
			bw_bytes(&w, init, sizeof init);
			bw_put_uN(&w, flen_at, w.len - flen_at - (dw64 ? 8 : 4),
				  dw64 ? 8 : 4);
			memset(&o, 0, sizeof o);
			o.kind = CFI_SEC_DEBUG_FRAME;
			CHECK_EQ(parse_o(&w, ABI_AMD64, &o, &t, &d),
				 E2S_ERR_OK);
			CHECK_EQ(t.ncies, 1);
			CHECK_EQ(t.nfdes, 1);
			if (t.nfdes == 1 && v != 2 && v != 5) {
				CHECK_EQ(t.cies[0].version, v);
				CHECK_EQ(t.fdes[0].status, E2S_ERR_OK);
				CHECK_EQ(t.fdes[0].sec_off, f);
				CHECK_EQ(t.fdes[0].pc_begin, 0x1000);
				CHECK_EQ(t.fdes[0].pc_range, 0x20);
				CHECK_EQ(t.fdes[0].row_count, 2);
				CHECK_EQ(t.rows[1].start, 0x1004);
				CHECK_EQ(t.rows[0].ra.off, -4); /* 1 * -4 */
			} else if (t.nfdes == 1) {
				CHECK_EQ(t.fdes[0].status,
					 E2S_ERR_BAD_CIE_VERSION);
			}
			cfi_table_free(&t);
			bw_free(&w);
		}
	}
}

/* .debug_frame v4 with a segment selector: not supported. An FDE whose
 * pointer is the .eh_frame CIE id 0 does not find a CIE. */
static void test_debug_frame_ids(void)
{
	bw_t w;
	cfi_table t;
	e2s_diag d;
	popt o;
	bw_init(&w, false);
	size_t c = rec_begin(&w);
	bw_u32(&w, 0xffffffff);
	bw_u8(&w, 4);
	bw_u8(&w, 0);
	bw_u8(&w, 8);
	bw_u8(&w, 1); /* segment_size 1 */
	bw_uleb(&w, 1);
	bw_sleb(&w, -8);
	bw_uleb(&w, 16);
	rec_end(&w, c);
	size_t c2 = rec_begin(&w);
	bw_u32(&w, 0xffffffff);
	bw_u8(&w, 3);
	bw_u8(&w, 0);
	bw_uleb(&w, 1);
	bw_sleb(&w, -8);
	bw_uleb(&w, 16);
	rec_end(&w, c2);
	size_t s = rec_begin(&w);
	bw_u32(&w, (uint32_t)c);
	bw_u64(&w, 0x1000);
	bw_u64(&w, 0x10);
	rec_end(&w, s);
	s = rec_begin(&w);
	bw_u32(&w, 0x3); /* not a record start */
	bw_u64(&w, 0x1000);
	bw_u64(&w, 0x10);
	rec_end(&w, s);
	bw_u32(&w, 0); /* zero length: skipped in .debug_frame */
	s = rec_begin(&w);
	bw_u32(&w, (uint32_t)c2);
	bw_u64(&w, 0x5000);
	bw_u64(&w, 0x10);
	rec_end(&w, s);
	memset(&o, 0, sizeof o);
	o.kind = CFI_SEC_DEBUG_FRAME;
	CHECK_EQ(parse_o(&w, ABI_AMD64, &o, &t, &d), E2S_ERR_OK);
	CHECK_EQ(t.ncies, 2);
	CHECK_EQ(t.nfdes, 3);
	CHECK_EQ(t.cies[0].status, E2S_ERR_BAD_ADDRESS_SIZE);
	CHECK_EQ(t.fdes[0].status, E2S_ERR_BAD_ADDRESS_SIZE);
	CHECK_EQ(t.fdes[1].status, E2S_ERR_BAD_CIE_ID);
	CHECK_EQ(t.fdes[2].status, E2S_ERR_OK);
	CHECK_EQ(t.fdes[2].pc_begin, 0x5000);
	/* The CFA was never defined in that CIE. */
	CHECK_EQ(t.rows[0].cfa.kind, CFI_CFA_UNSET);
	cfi_table_free(&t);
	bw_free(&w);
}

/* 64-bit length in .eh_frame: 8-byte CIE id and CIE pointer. */
static void test_eh_frame_dwarf64(void)
{
	bw_t w;
	cfi_table t;
	bw_init(&w, false);
	bw_u32(&w, 0xffffffff);
	size_t clen = w.len;
	bw_u64(&w, 0);
	bw_u64(&w, 0); /* CIE id */
	bw_u8(&w, 1);
	bw_bytes(&w, "zR", 3);
	bw_uleb(&w, 1);
	bw_sleb(&w, -8);
	bw_u8(&w, 16);
	bw_uleb(&w, 1);
	bw_u8(&w, 0x04);
	bw_bytes(&w, "\x0c\x07\x08", 3);
	bw_put_uN(&w, clen, w.len - clen - 8, 8);
	bw_u32(&w, 0xffffffff);
	size_t flen = w.len;
	bw_u64(&w, 0);
	bw_u64(&w, w.len); /* back to offset 0 */
	bw_u64(&w, 0x7000);
	bw_u64(&w, 0x8);
	bw_uleb(&w, 0);
	bw_put_uN(&w, flen, w.len - flen - 8, 8);
	CHECK_EQ(parse(&w, &t), E2S_ERR_OK);
	CHECK_EQ(t.ncies, 1);
	CHECK_EQ(t.nfdes, 1);
	CHECK_EQ(t.fdes[0].status, E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].sec_off, flen - 4);
	CHECK_EQ(t.fdes[0].pc_begin, 0x7000);
	CHECK_EQ(t.fdes[0].row_count, 1);
	cfi_table_free(&t);
	bw_free(&w);
}

/* Big-endian s390x-style CIE/FDE (code 2, data -8, RA 14, CFA r15+160,
 * pcrel sdata4), v3 CIE with ULEB RA. */
static void test_big_endian(void)
{
	bw_t w;
	cfi_table t;
	e2s_diag d;
	popt o;
	bw_init(&w, true);
	size_t c = rec_begin(&w);
	bw_u32(&w, 0);
	bw_u8(&w, 3);
	bw_bytes(&w, "zR", 3);
	bw_uleb(&w, 2);
	bw_sleb(&w, -8);
	bw_uleb(&w, 14);
	bw_uleb(&w, 1);
	bw_u8(&w, 0x1b);
	bw_bytes(&w, "\x0c\x0f\xa0\x01", 4);
	rec_end(&w, c);
	size_t s = eh_fde_begin(&w, c);
	size_t field = w.len;
	bw_u32(&w, (uint32_t)(0x1000 - (0x4000 + field)));
	bw_u32(&w, 0x100);
	bw_uleb(&w, 0);
	/* advance 8 (4*2); offset r14 at 6*-8; offset r15 5; cfa+320 */
	bw_bytes(&w, "\x44\x8e\x06\x8f\x05\x0e\xc0\x02", 8);
	rec_end(&w, s);
	memset(&o, 0, sizeof o);
	o.vaddr = 0x4000;
	CHECK_EQ(w.data[0], 0); /* really big-endian length */
	CHECK_EQ(parse_o(&w, ABI_S390X, &o, &t, &d), E2S_ERR_OK);
	CHECK_EQ(t.cies[0].code_align, 2);
	CHECK_EQ(t.cies[0].ra_reg, 14);
	CHECK_EQ(t.fdes[0].status, E2S_ERR_OK);
	CHECK_EQ(t.fdes[0].pc_begin, 0x1000);
	CHECK_EQ(t.fdes[0].pc_range, 0x100);
	CHECK_EQ(t.fdes[0].row_count, 2);
	CHECK_EQ(t.rows[0].cfa.reg, 15);
	CHECK_EQ(t.rows[0].cfa.off, 160);
	CHECK_EQ(t.rows[1].start, 0x1008);
	CHECK_EQ(t.rows[1].cfa.off, 320);
	CHECK_EQ(t.rows[1].ra.off, -48);
	CHECK_EQ(t.rows[1].sp.kind, CFI_RULE_OFFSET);
	CHECK_EQ(t.rows[1].sp.off, -40);
	cfi_table_free(&t);
	bw_free(&w);
}

static void test_cie_leb_overlong(void)
{
	bw_t w;
	cfi_table t;
	bw_init(&w, false);
	size_t c = rec_begin(&w);
	bw_u32(&w, 0);
	bw_u8(&w, 1);
	bw_u8(&w, 0);
	bw_bytes(&w, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11);
	bw_sleb(&w, -8);
	bw_u8(&w, 16);
	rec_end(&w, c);
	size_t s = eh_fde_begin(&w, c);
	bw_u64(&w, 0x1000);
	bw_u64(&w, 0x10);
	eh_fde_end(&w, s, false);
	CHECK_EQ(parse(&w, &t), E2S_ERR_OK);
	CHECK_EQ(t.cies[0].status, E2S_ERR_LEB_OVERLONG);
	CHECK_EQ(t.fdes[0].status, E2S_ERR_LEB_OVERLONG);
	cfi_table_free(&t);
	bw_free(&w);
}

int main(void)
{
	test_encodings();
	test_set_loc_funcrel();
	test_relocs();
	test_debug_frame_relocs();
	test_fpc_debug_frame();
	test_length_errors();
	test_bad_cie_pointer();
	test_augmentations();
	test_debug_frame_versions();
	test_debug_frame_ids();
	test_eh_frame_dwarf64();
	test_big_endian();
	test_cie_leb_overlong();
	return t_done("test_cfi_records");
}
