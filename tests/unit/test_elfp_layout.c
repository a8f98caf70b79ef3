/* elfpatch layout arithmetic (hand-computed cases) and a round trip on a
 * real executable with a synthetic .sframe blob, checked with libelf. */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert/convert.h"
#include "elfpatch/elfpatch.h"
#include "sframe/sframe_fmt.h"
#include "t.h"

static void place(uint64_t file_end, uint64_t bias, uint64_t max_end,
		  uint64_t page, bool tie, elfp_seg_out *o)
{
	elfp_seg_in in = {file_end, bias, max_end, page, tie, ELFP_MAX_PAD,
			  false};
	elfp_place_segment(&in, o);
}

static void test_place(void)
{
	elfp_seg_out o;
	/* PIE, small .bss: first free page is 0x7000, above the file end. */
	place(0x5000, 0, 0x6123, 0x1000, true, &o);
	CHECK_EQ(o.offset, 0x7000);
	CHECK_EQ(o.vaddr, 0x7000);
	CHECK(o.tied);
	/* Non-PIE (bias 0x400000); the file end is past the fresh page. */
	place(0x9000, 0x400000, 0x404123, 0x1000, true, &o);
	CHECK_EQ(o.offset, 0x9000);
	CHECK_EQ(o.vaddr, 0x409000);
	CHECK(o.tied);
	/* Unaligned file end rounds to 8. */
	place(0x9003, 0x400000, 0x404123, 0x1000, true, &o);
	CHECK_EQ(o.offset, 0x9008);
	CHECK_EQ(o.vaddr, 0x409008);
	/* 1 GiB .bss: the tie would cost ~1 GiB of padding; give it up. */
	place(0x5000, 0, 0x40000000, 0x1000, true, &o);
	CHECK(!o.tied);
	CHECK_EQ(o.offset, 0x5000);
	CHECK_EQ(o.vaddr, 0x40000000);
	CHECK_EQ(o.align, 0x1000);
	/* Untied: any congruent address on a fresh page. */
	place(0x12345, 0, 0x2f000, 0x1000, false, &o);
	CHECK_EQ(o.offset, 0x12348);
	CHECK_EQ(o.vaddr, 0x2f348);
	/* AArch64 64 KiB pages. */
	place(0x12345, 0, 0x2f000, 0x10000, true, &o);
	CHECK_EQ(o.offset, 0x30000);
	CHECK_EQ(o.vaddr, 0x30000);
	CHECK_EQ(o.align, 0x10000);
	place(0x12345, 0, 0x2f000, 0x10000, false, &o);
	CHECK_EQ(o.offset, 0x12348);
	CHECK_EQ(o.vaddr, 0x32348);
	/* Bias only 4 KiB-aligned with 64 KiB pages: align drops to 4 KiB. */
	place(0x100, 0x1000, 0x23000, 0x10000, true, &o);
	CHECK(o.tied);
	CHECK_EQ(o.align, 0x1000);
	CHECK_EQ(o.offset, 0x2f000);
	CHECK_EQ(o.vaddr, 0x30000);
	/* Padding exactly at the limit keeps the tie, one more byte not. */
	place(0x1000, 0, 0x1000 + ELFP_MAX_PAD, 0x1000, true, &o);
	CHECK(o.tied);
	place(0x1000 - 8, 0, 0x1000 + ELFP_MAX_PAD, 0x1000, true, &o);
	CHECK(!o.tied);
}

static void place_gap(uint64_t file_end, uint64_t bias, uint64_t max_end,
		      uint64_t page, bool tie, elfp_seg_out *o)
{
	elfp_seg_in in = {.file_end = file_end, .bias = bias, .max_end = max_end,
			  .page = page, .tie = tie, .max_pad = ELFP_MAX_PAD,
			  .lead_gap = true};
	elfp_place_segment(&in, o);
}

/* A segment led by the program header table starts one alignment unit
 * above the first free page (room for binutils 2.40 strip pulling it
 * down by up to p_align). */
static void test_place_gap(void)
{
	elfp_seg_out o;
	/* PIE: free page 0x7000, +0x1000. */
	place_gap(0x5000, 0, 0x6123, 0x1000, true, &o);
	CHECK_EQ(o.offset, 0x8000);
	CHECK_EQ(o.vaddr, 0x8000);
	CHECK(o.tied);
	/* File end 0x9000 is past 0x406000 - bias: the file end decides. */
	place_gap(0x9000, 0x400000, 0x404123, 0x1000, true, &o);
	CHECK_EQ(o.offset, 0x9000);
	CHECK_EQ(o.vaddr, 0x409000);
	/* Untied: page 0x2f000 + gap 0x1000 + offset within the page. */
	place_gap(0x12345, 0, 0x2f000, 0x1000, false, &o);
	CHECK_EQ(o.offset, 0x12348);
	CHECK_EQ(o.vaddr, 0x30348);
	/* 64 KiB pages, bias only 4 KiB-aligned: the gap is the 4 KiB
	 * alignment actually used. */
	place_gap(0x100, 0x1000, 0x23000, 0x10000, true, &o);
	CHECK_EQ(o.align, 0x1000);
	CHECK_EQ(o.offset, 0x30000);
	CHECK_EQ(o.vaddr, 0x31000);
}

/* Read a whole file. */
static unsigned char *slurp(const char *path, size_t *n)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	unsigned char *p = NULL;
	if (fd < 0 || fstat(fd, &st) != 0)
		goto out;
	p = malloc(st.st_size + 1);
	if (p && read(fd, p, st.st_size) != st.st_size) {
		free(p);
		p = NULL;
	}
	*n = st.st_size;
out:
	if (fd >= 0)
		close(fd);
	return p;
}

/* Layout 1, checked against the input read by libelf: the table is right
 * after the ELF header, the first PT_LOAD starts shift bytes lower at
 * offset 0, every old section moved down the file by shift and kept its
 * address, and an ELF header copy at the old base leads (e_phoff wraps
 * around) to the new table. */
static void check_shift(Elf *e, const unsigned char *a,
			const unsigned char *b, size_t n0, uint64_t shift)
{
	Elf *ei = elf_memory((char *)a, n0);
	GElf_Ehdr eh, ih;
	GElf_Phdr p0, i0, ph;
	size_t shnum = 0, phnum = 0, strndx = 0;
	bool copy = false;

	CHECK(ei && gelf_getehdr(ei, &ih) && gelf_getehdr(e, &eh));
	if (!ei)
		return;
	CHECK_EQ(eh.e_phoff, 64);
	elf_getphdrnum(e, &phnum);
	gelf_getphdr(e, 0, &ph);
	/* First PT_LOAD of each. */
	for (int i = 0; gelf_getphdr(ei, i, &i0) && i0.p_type != PT_LOAD; i++)
		;
	for (int i = 0; gelf_getphdr(e, i, &p0) && p0.p_type != PT_LOAD; i++)
		;
	CHECK_EQ(p0.p_offset, 0);
	CHECK_EQ(p0.p_vaddr, i0.p_vaddr - shift);
	CHECK_EQ(p0.p_filesz, i0.p_filesz + shift);
	if (ph.p_type == PT_PHDR)
		CHECK_EQ(ph.p_vaddr, p0.p_vaddr + 64);
	elf_getshdrnum(ei, &shnum);
	elf_getshdrstrndx(e, &strndx);
	for (size_t i = 1; i < shnum; i++) {
		GElf_Shdr s0, s1;
		gelf_getshdr(elf_getscn(ei, i), &s0);
		gelf_getshdr(elf_getscn(e, i), &s1);
		if (i == strndx)
			continue;
		CHECK_EQ(s1.sh_offset, s0.sh_offset + shift);
		CHECK_EQ(s1.sh_addr, s0.sh_addr);
	}
	for (Elf_Scn *sc = NULL; (sc = elf_nextscn(e, sc));) {
		GElf_Shdr s1;
		gelf_getshdr(sc, &s1);
		const char *nm = elf_strptr(e, strndx, s1.sh_name);
		if (!nm || strcmp(nm, ".eh2sframe.ehdr") != 0)
			continue;
		copy = true;
		CHECK_EQ(s1.sh_addr, i0.p_vaddr);
		CHECK_EQ(s1.sh_offset, shift);
		Elf64_Ehdr c;
		memcpy(&c, b + s1.sh_offset, sizeof c);
		CHECK(memcmp(c.e_ident, ELFMAG, SELFMAG) == 0);
		CHECK_EQ(c.e_phentsize, 56);
		CHECK_EQ(c.e_phnum, phnum);
		CHECK_EQ(s1.sh_addr + c.e_phoff, p0.p_vaddr + 64);
	}
	CHECK(copy);
	elf_end(ei);
}

/* Layout 2, checked with libelf: an allocated section covers exactly the
 * moved table, at the table's address, and the new PT_LOAD starts one
 * table size below it (nothing but zeros there: binutils puts its own
 * copy of the table at a segment's start). */
static void check_phdrs_sec(Elf *e, const unsigned char *b, uint64_t bias,
			    bool tied)
{
	GElf_Ehdr eh;
	GElf_Shdr cs = {0};
	size_t phnum = 0, strndx = 0, found = 0;
	uint64_t tsize;

	CHECK(gelf_getehdr(e, &eh) != NULL);
	elf_getphdrnum(e, &phnum);
	elf_getshdrstrndx(e, &strndx);
	tsize = (uint64_t)phnum * 56;
	for (Elf_Scn *sc = NULL; (sc = elf_nextscn(e, sc));) {
		GElf_Shdr s;
		gelf_getshdr(sc, &s);
		const char *nm = elf_strptr(e, strndx, s.sh_name);
		if (!nm || strcmp(nm, ".eh2sframe.phdrs") != 0)
			continue;
		found++;
		CHECK_EQ(s.sh_type, SHT_PROGBITS);
		CHECK_EQ(s.sh_flags, SHF_ALLOC);
		CHECK_EQ(s.sh_offset, eh.e_phoff);
		CHECK_EQ(s.sh_size, tsize);
		if (tied)
			CHECK_EQ(s.sh_addr, eh.e_phoff + bias);
		cs = s;
	}
	CHECK_EQ(found, 1);
	/* The PT_LOAD holding the table: table at p_vaddr + tsize, zeros
	 * before it, and no section starting below the table. */
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr p;
		gelf_getphdr(e, (int)i, &p);
		if (p.p_type != PT_LOAD || p.p_offset > eh.e_phoff ||
		    eh.e_phoff >= p.p_offset + p.p_filesz)
			continue;
		CHECK_EQ(eh.e_phoff, p.p_offset + tsize);
		CHECK_EQ(cs.sh_addr - cs.sh_offset, p.p_vaddr - p.p_offset);
		for (uint64_t k = 0; k < tsize; k++)
			if (b[p.p_offset + k]) {
				CHECK(!"room before the table is zero");
				break;
			}
		for (Elf_Scn *sc = NULL; (sc = elf_nextscn(e, sc));) {
			GElf_Shdr s;
			gelf_getshdr(sc, &s);
			if ((s.sh_flags & SHF_ALLOC) && s.sh_addr >= p.p_vaddr &&
			    s.sh_addr < p.p_vaddr + p.p_memsz)
				CHECK(s.sh_addr >= p.p_vaddr + tsize);
		}
	}
}

/* Rewrite path the way eu-strip does (libelf, ELF_F_LAYOUT: every section
 * at its old offset, the table written at e_phoff and then the gaps
 * between sections zero-filled) and check that the table survived. */
static void check_libelf_rewrite(const char *path)
{
	char out[] = "/tmp/test_elfp_rw_XXXXXX";
	int fi = open(path, O_RDONLY), fo = mkstemp(out);
	Elf *ei = fi >= 0 ? elf_begin(fi, ELF_C_READ, NULL) : NULL;
	Elf *eo = fo >= 0 ? elf_begin(fo, ELF_C_WRITE, NULL) : NULL;
	GElf_Ehdr eh;
	size_t phnum = 0;

	CHECK(ei && eo && gelf_getehdr(ei, &eh));
	if (!ei || !eo)
		goto out;
	elf_getphdrnum(ei, &phnum);
	CHECK(gelf_newehdr(eo, ELFCLASS64) != NULL);
	CHECK(gelf_update_ehdr(eo, &eh) != 0);
	CHECK(gelf_newphdr(eo, phnum) != NULL);
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr p;
		gelf_getphdr(ei, (int)i, &p);
		gelf_update_phdr(eo, (int)i, &p);
	}
	for (Elf_Scn *sc = NULL; (sc = elf_nextscn(ei, sc));) {
		GElf_Shdr s;
		Elf_Scn *nsc = elf_newscn(eo);
		Elf_Data *di = elf_getdata(sc, NULL), *dn = elf_newdata(nsc);
		gelf_getshdr(sc, &s);
		gelf_update_shdr(nsc, &s);
		if (di && dn)
			*dn = *di;
	}
	elf_flagelf(eo, ELF_C_SET, ELF_F_LAYOUT);
	CHECK(elf_update(eo, ELF_C_WRITE) > 0);
	elf_end(eo);
	eo = NULL;
	size_t n0 = 0, n1 = 0;
	unsigned char *a = slurp(path, &n0), *b = slurp(out, &n1);
	CHECK(a && b && n1 >= eh.e_phoff + phnum * 56);
	if (a && b && n1 >= eh.e_phoff + phnum * 56)
		CHECK(memcmp(a + eh.e_phoff, b + eh.e_phoff, phnum * 56) == 0);
	free(a);
	free(b);
out:
	if (eo)
		elf_end(eo);
	if (ei)
		elf_end(ei);
	if (fi >= 0)
		close(fi);
	if (fo >= 0)
		close(fo);
	unlink(out);
}

/* Every old section keeps its bytes: at its old address, or (GROWN:
 * .interp, notes, hash, dynamic symbol, string and version tables) above
 * every old segment; .dynamic's addresses of those and symbol values
 * follow moved sections. Read with libelf, the independent reader. */
static void check_sections(Elf *ei, Elf *e, uint64_t top, int kind)
{
	size_t n0 = 0, n1 = 0, strndx = 0;
	elf_getshdrnum(ei, &n0);
	elf_getshdrnum(e, &n1);
	elf_getshdrstrndx(ei, &strndx);
	CHECK(n1 > n0);
	uint64_t *delta = calloc(n0 + 1, sizeof *delta);
	if (!delta)
		return;
	for (size_t i = 1; i < n0; i++) {
		GElf_Shdr s0, s1;
		gelf_getshdr(elf_getscn(ei, i), &s0);
		gelf_getshdr(elf_getscn(e, i), &s1);
		CHECK_EQ(s1.sh_name, s0.sh_name);
		CHECK_EQ(s1.sh_type, s0.sh_type);
		if (s1.sh_addr == s0.sh_addr)
			continue;
		delta[i] = s1.sh_addr - s0.sh_addr;
		CHECK_EQ(kind, ELFP_PH_GROWN);
		CHECK(s0.sh_type == SHT_NOTE || s0.sh_type == SHT_HASH ||
		      s0.sh_type == SHT_GNU_HASH || s0.sh_type == SHT_PROGBITS ||
		      s0.sh_type == SHT_DYNSYM || s0.sh_type == SHT_STRTAB ||
		      s0.sh_type == SHT_GNU_versym ||
		      s0.sh_type == SHT_GNU_verneed ||
		      s0.sh_type == SHT_GNU_verdef);
		CHECK(s1.sh_addr >= top);
	}
	for (size_t i = 1; i < n0; i++) {
		GElf_Shdr s0;
		Elf_Scn *c0 = elf_getscn(ei, i), *c1 = elf_getscn(e, i);
		gelf_getshdr(c0, &s0);
		if (i == strndx || s0.sh_type == SHT_NOBITS || !s0.sh_size)
			continue;
		Elf_Data *d0 = elf_rawdata(c0, NULL), *d1 = elf_rawdata(c1, NULL);
		CHECK(d0 && d1 && d0->d_size == d1->d_size);
		if (!d0 || !d1 || d0->d_size != d1->d_size)
			continue;
		const unsigned char *x = d0->d_buf, *y = d1->d_buf;
		if (s0.sh_type == SHT_DYNAMIC) {
			for (size_t k = 0; k + 16 <= d0->d_size; k += 16) {
				uint64_t t, v0, v1;
				memcpy(&t, x + k, 8);
				memcpy(&v0, x + k + 8, 8);
				memcpy(&v1, y + k + 8, 8);
				CHECK(memcmp(x + k, y + k, 8) == 0);
				if (v0 == v1)
					continue;
				CHECK(t == DT_HASH || t == DT_GNU_HASH ||
				      t == DT_SYMTAB || t == DT_STRTAB ||
				      t == DT_VERSYM || t == DT_VERNEED ||
				      t == DT_VERDEF);
				bool follows = false;
				for (size_t j = 1; j < n0; j++) {
					GElf_Shdr sj;
					gelf_getshdr(elf_getscn(ei, j), &sj);
					if (delta[j] && sj.sh_addr == v0 &&
					    v1 == v0 + delta[j])
						follows = true;
				}
				CHECK(follows);
			}
			continue;
		}
		if (s0.sh_type == SHT_SYMTAB || s0.sh_type == SHT_DYNSYM) {
			for (size_t k = 0; k + 24 <= d0->d_size; k += 24) {
				uint16_t sx;
				uint64_t v0, v1;
				if (memcmp(x + k, y + k, 24) == 0)
					continue;
				memcpy(&sx, x + k + 6, 2);
				memcpy(&v0, x + k + 8, 8);
				memcpy(&v1, y + k + 8, 8);
				CHECK(memcmp(x + k, y + k, 8) == 0);
				CHECK(memcmp(x + k + 16, y + k + 16, 8) == 0);
				CHECK(sx < n0 && delta[sx] && v1 - v0 == delta[sx]);
			}
			continue;
		}
		CHECK(memcmp(x, y, d0->d_size) == 0);
	}
	free(delta);
}

static const char *const kind_name[] = {"same", "room", "grown", "shift",
					"seg-tied", "seg"};

/* Add a 100-byte blob to a copy of in (force: layout kind to use when
 * possible, 0 to let elfp choose; want: the kind expected, -1 any),
 * then check the output with libelf (an independent reader) and run it,
 * natively and, when the table stays where old loaders look, under
 * qemu-x86_64 (whose loader takes AT_PHDR = bias + e_phoff). */
static void test_roundtrip(const char *in, const char *run_args, int force,
			   int want)
{
	char out[] = "/tmp/test_elfp_XXXXXX";
	elfp_file *f = NULL;
	e2s_diag d;
	size_t idx = 0, n0 = 0, n1 = 0;
	unsigned char blob[100];
	elfp_shdr sh = {0};
	int fd;

	if (access(in, R_OK) != 0) {
		printf("skip round trip: no %s\n", in);
		return;
	}
	for (size_t i = 0; i < sizeof blob; i++)
		blob[i] = (unsigned char)(i * 7 + 1);
	CHECK_EQ(elfp_open(in, &f, &d), E2S_ERR_OK);
	if (!f)
		return;
	sh.type = SHT_GNU_SFRAME;
	sh.flags = SHF_ALLOC;
	sh.addralign = 8;
	sh.size = sizeof blob;
	size_t old_shnum = elfp_shnum(f), old_phnum = elfp_phnum(f);
	CHECK_EQ(elfp_add_section(f, ".sframe", &sh, &idx, &d), E2S_ERR_OK);
	CHECK_EQ(idx, old_shnum);
	CHECK_EQ(elfp_add_phdr(f, PT_GNU_SFRAME, PF_R, 8, idx, &d), E2S_ERR_OK);
	elfp_force_kind(f, force);
	CHECK_EQ(elfp_layout(f, &d), E2S_ERR_OK);
	CHECK_EQ(elfp_set_content(f, idx, blob, sizeof blob, &d), E2S_ERR_OK);
	elfp_layout_info li;
	elfp_get_layout(f, &li);
	fd = mkstemp(out);
	CHECK(fd >= 0);
	CHECK_EQ(elfp_write(f, fd, &d), E2S_ERR_OK);
	close(fd);
	elfp_close(f);
	chmod(out, 0755);

	unsigned char *a = slurp(in, &n0), *b = slurp(out, &n1);
	CHECK(a && b && n1 > n0);
	if (!a || !b)
		return;
	printf("%s [%s]: %s, %zu -> %zu bytes (+%zu; pad %llu, shift %llu, "
	       "moved %llu)\n", in, force ? kind_name[force] : "auto",
	       kind_name[li.kind], n0, n1, n1 - n0, (unsigned long long)li.pad,
	       (unsigned long long)li.shift, (unsigned long long)li.moved);
	if (want >= 0)
		CHECK_EQ(li.kind, want);
	/* What each layout may add besides the blob: its section header
	 * and name (the old section header table is reused), alignment;
	 * GROWN the moved bytes; SHIFT the shift and the ELF header copy;
	 * SEG a PT_PHDR, room + table and their section; SEG_TIED padding. */
	uint64_t tsz = (old_phnum + 3) * 56, extra = 64 + 16 + 2 * 8;
	if (li.kind == ELFP_PH_GROWN)
		extra += li.moved;
	if (li.kind == ELFP_PH_SHIFT)
		extra += li.shift + 64 + 64 + 16 + 8;
	if (li.kind == ELFP_PH_SEG || li.kind == ELFP_PH_SEG_TIED)
		extra += 2 * tsz + 64 + 24 + 8;
	if (li.kind == ELFP_PH_SEG_TIED)
		extra += li.pad;
	CHECK(n1 - n0 <= sizeof blob + extra);

	elf_version(EV_CURRENT);
	fd = open(out, O_RDONLY);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf *ei = elf_memory((char *)a, n0);
	GElf_Ehdr eh;
	CHECK(e && ei && gelf_getehdr(e, &eh));
	if (!e || !ei)
		return;
	size_t phnum = 0, shnum = 0;
	elf_getphdrnum(e, &phnum);
	elf_getshdrnum(e, &shnum);
	CHECK(phnum >= old_phnum + 1 && phnum <= old_phnum + 3);
	GElf_Shdr ss;
	Elf_Scn *scn = elf_getscn(e, idx);
	CHECK(scn && gelf_getshdr(scn, &ss));
	size_t strndx;
	elf_getshdrstrndx(e, &strndx);
	CHECK_STR(elf_strptr(e, strndx, ss.sh_name), ".sframe");
	CHECK_EQ(ss.sh_type, SHT_GNU_SFRAME);
	CHECK_EQ(ss.sh_size, sizeof blob);
	CHECK(memcmp(b + ss.sh_offset, blob, sizeof blob) == 0);
	uint64_t bias = 0, top = 0;
	bool first_load = true, got_sframe = false;
	bool sframe_loaded = false, table_loaded = false;
	for (size_t i = 0; i < old_phnum; i++) {
		GElf_Phdr p;
		gelf_getphdr(ei, (int)i, &p);
		if (p.p_vaddr + p.p_memsz > top)
			top = p.p_vaddr + p.p_memsz;
	}
	for (size_t i = 0; i < phnum && first_load; i++) {
		GElf_Phdr p;
		gelf_getphdr(e, (int)i, &p);
		if (p.p_type == PT_LOAD) {
			bias = p.p_vaddr - p.p_offset;
			first_load = false;
		}
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr p;
		gelf_getphdr(e, (int)i, &p);
		if (p.p_type == PT_LOAD) {
			CHECK_EQ(p.p_offset % p.p_align, p.p_vaddr % p.p_align);
			if (p.p_offset <= ss.sh_offset &&
			    ss.sh_offset + ss.sh_size <= p.p_offset + p.p_filesz &&
			    p.p_vaddr - p.p_offset == ss.sh_addr - ss.sh_offset)
				sframe_loaded = true;
			if (p.p_offset <= eh.e_phoff &&
			    eh.e_phoff + phnum * 56 <= p.p_offset + p.p_filesz)
				table_loaded = true;
			/* No zero fill: the new segment starts at the end of
			 * the kept input (plus alignment). */
			if (p.p_vaddr >= top && li.kind != ELFP_PH_SEG_TIED)
				CHECK(p.p_offset <= li.kept + li.shift + 8 ||
				      p.p_offset < li.kept + li.shift + 4096);
		}
		if (p.p_type == PT_PHDR) {
			CHECK_EQ(i, 0);
			CHECK_EQ(p.p_offset, eh.e_phoff);
			CHECK_EQ(p.p_filesz, phnum * 56);
			/* Old loaders: AT_PHDR = bias + e_phoff. */
			if (li.phdrs_tied)
				CHECK_EQ(p.p_vaddr, eh.e_phoff + bias);
		}
		if (p.p_type == PT_GNU_SFRAME) {
			got_sframe = true;
			CHECK_EQ(p.p_offset, ss.sh_offset);
			CHECK_EQ(p.p_vaddr, ss.sh_addr);
			CHECK_EQ(p.p_filesz, ss.sh_size);
			CHECK_EQ(p.p_memsz, ss.sh_size);
		}
	}
	CHECK(got_sframe && sframe_loaded && table_loaded);
	if (li.kind == ELFP_PH_GROWN || li.kind == ELFP_PH_ROOM) {
		GElf_Ehdr ih;
		CHECK(gelf_getehdr(ei, &ih) != NULL);
		CHECK_EQ(eh.e_phoff, ih.e_phoff);
	}
	if (li.kind == ELFP_PH_SHIFT)
		check_shift(e, a, b, n0, li.shift);
	else if (li.phdrs_moved)
		check_phdrs_sec(e, b, bias, li.phdrs_tied);
	check_sections(ei, e, top, li.kind);
	check_libelf_rewrite(out);
	elf_end(ei);
	elf_end(e);
	close(fd);
	free(a);
	free(b);

	char cmd[512];
	snprintf(cmd, sizeof cmd, "%s %s >/dev/null 2>&1", out, run_args);
	CHECK_EQ(system(cmd), 0);
	if (li.phdrs_tied && system("command -v qemu-x86_64 >/dev/null") == 0) {
		snprintf(cmd, sizeof cmd, "qemu-x86_64 %s %s >/dev/null 2>&1",
			 out, run_args);
		CHECK_EQ(system(cmd), 0);
	}
	unlink(out);
}

/* The old section header table and .shstrtab end a linked file: their
 * bytes are reused. Data appended after them (a module signature) keeps
 * everything, at its offset. */
static void test_tail(const char *in)
{
	size_t n0 = 0;
	unsigned char *a = slurp(in, &n0);
	static const char sig[] = "~Module signature appended~\n";
	e2s_diag d;
	CHECK(a != NULL);
	if (!a)
		return;
	for (int appended = 0; appended < 2; appended++) {
		size_t n = n0 + (appended ? sizeof sig : 0);
		unsigned char *img = malloc(n), *b = NULL;
		elfp_file *f = NULL;
		conv_file_opts o = {0};
		conv_result r;
		size_t n1 = 0;
		if (!img)
			break;
		memcpy(img, a, n0);
		if (appended)
			memcpy(img + n0, sig, sizeof sig);
		CHECK_EQ(elfp_open_mem(img, n, &f, &d), E2S_ERR_OK);
		CHECK_EQ(conv_file(f, &o, &r, &d), E2S_ERR_OK);
		CHECK_EQ(elfp_write_mem(f, &b, &n1, &d), E2S_ERR_OK);
		uint64_t shoff;
		memcpy(&shoff, a + 40, 8);
		if (appended) {
			CHECK_EQ(r.layout.kept, n);
			CHECK(b && n1 > n &&
			      memcmp(b + n0, sig, sizeof sig) == 0);
		} else {
			/* Kept: up to .shstrtab at most, which precedes the
			 * old table; the output is smaller than input +
			 * .sframe + the moved bytes + a new table. */
			CHECK(r.layout.kept < shoff);
			CHECK(n1 < n0 + r.sframe_size + r.layout.moved + 200);
		}
		conv_result_free(&r);
		elfp_close(f);
		free(img);
		free(b);
	}
	free(a);
}

/* Build a test program with cc flags; false when the toolchain cannot. */
static bool build(const char *exe, const char *src, const char *flags)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "cc -O2 %s -o %s %s 2>/dev/null", flags, exe,
		 src);
	return system(cmd) == 0;
}

/* The layout src (a program) gets, and why GROWN was refused. */
static int layout_of(const char *exe, char *why, size_t n)
{
	elfp_file *f = NULL;
	e2s_diag d;
	elfp_shdr sh = {0};
	size_t idx = 0;
	elfp_layout_info li = {0};
	static const unsigned char blob[16];
	CHECK_EQ(elfp_open(exe, &f, &d), E2S_ERR_OK);
	if (!f)
		return -1;
	sh.type = SHT_GNU_SFRAME;
	sh.flags = SHF_ALLOC;
	sh.addralign = 8;
	sh.size = sizeof blob;
	CHECK_EQ(elfp_add_section(f, ".sframe", &sh, &idx, &d), E2S_ERR_OK);
	CHECK_EQ(elfp_add_phdr(f, PT_GNU_SFRAME, PF_R, 8, idx, &d), E2S_ERR_OK);
	CHECK_EQ(elfp_layout(f, &d), E2S_ERR_OK);
	elfp_get_layout(f, &li);
	snprintf(why, n, "%s", li.grow_refused);
	elfp_close(f);
	return li.kind;
}

/* What GROWN may move (elfp_grow.c): each rule refuses a program that
 * reaches the sections after its table in the way that rule guards. */
static void test_grow_rule(const char *src, const char *exe)
{
	static const struct {
		const char *code, *flags, *why;
	} cases[] = {
		/* The control: nothing reaches them. */
		{"int main(void){return 0;}", "", ""},
		/* Rule 1: a note of the program's own, right after .interp. */
		{"__attribute__((section(\".note.myapp\"),used,aligned(4)))\n"
		 "static const int n[4] = {4, 4, 1, 7};\n"
		 "int main(void){return n[3];}", "", ".note.myapp"},
		/* Rule 2: a symbol of the program's own in .interp. */
		{"__attribute__((section(\".interp\"),used))\n"
		 "const char myinterp[] = \"x\";\n"
		 "int main(void){return myinterp[0];}", "", "symbol"},
		/* Rule 3: a pointer into the notes, relocated by RELA and by
		 * RELR; no symbol names the place it points at. */
		{"extern const char __ehdr_start[];\n"
		 "const char *volatile p = __ehdr_start + 0x340;\n"
		 "int main(void){return *p;}", "", "relocation"},
		{"extern const char __ehdr_start[];\n"
		 "const char *volatile p = __ehdr_start + 0x340;\n"
		 "int main(void){return *p;}", "-Wl,-z,pack-relative-relocs",
		 "relocation"},
		/* Rule 5. */
		{"int main(void){return 0;}", "-no-pie", "position-dependent"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char why[128];
		FILE *fp = fopen(src, "w");
		if (!fp)
			continue;
		fputs(cases[i].code, fp);
		fclose(fp);
		if (!build(exe, src, cases[i].flags)) {
			printf("skip grow rule %zu: toolchain cannot build it\n", i);
			continue;
		}
		int kind = layout_of(exe, why, sizeof why);
		printf("grow rule %zu (%s): %s; %s\n", i, cases[i].flags,
		       kind >= 0 ? kind_name[kind] : "?", why);
		if (!cases[i].why[0]) {
			CHECK_EQ(kind, ELFP_PH_GROWN);
			continue;
		}
		CHECK(kind != ELFP_PH_GROWN);
		CHECK(strstr(why, cases[i].why) != NULL);
	}
}

int main(void)
{
	test_place();
	test_place_gap();
	/* Debian's own PIE programs grow their table in place. */
	test_roundtrip("/bin/true", "--version", 0, ELFP_PH_GROWN);
	test_roundtrip("/bin/ls", "/", 0, ELFP_PH_GROWN);
	test_tail("/bin/true");
	/* Each layout on each kind of program it applies to. */
	char src[64], exe[64];
	snprintf(src, sizeof src, "/tmp/test_elfp_np%d.c", (int)getpid());
	snprintf(exe, sizeof exe, "/tmp/test_elfp_np%d", (int)getpid());
	FILE *fp = fopen(src, "w");
	if (fp) {
		fputs("#include <stdio.h>\nint main(void){puts(\"np\");return 0;}\n", fp);
		fclose(fp);
	}
	static const struct {
		const char *flags;
		int kinds[5], want_auto;
	} progs[] = {
		{"", {ELFP_PH_GROWN, ELFP_PH_SEG_TIED, ELFP_PH_SEG}, ELFP_PH_GROWN},
		/* Position-dependent: never GROWN (elfp_grow.c, rule 5). */
		{"-no-pie", {ELFP_PH_SHIFT, ELFP_PH_SEG_TIED}, ELFP_PH_SHIFT},
		/* .rela.plt (IRELATIVE) follows the notes: it cannot move. */
		{"-static", {ELFP_PH_SHIFT, ELFP_PH_SEG_TIED}, ELFP_PH_SHIFT},
		{"-static-pie", {ELFP_PH_GROWN, ELFP_PH_SEG_TIED}, -1},
	};
	for (size_t i = 0; fp && i < sizeof progs / sizeof progs[0]; i++) {
		if (!build(exe, src, progs[i].flags)) {
			printf("skip cc %s: toolchain cannot build it\n",
			       progs[i].flags);
			continue;
		}
		test_roundtrip(exe, "", 0, progs[i].want_auto);
		for (size_t k = 0; k < 5 && progs[i].kinds[k]; k++)
			test_roundtrip(exe, "", progs[i].kinds[k],
				       progs[i].kinds[k]);
	}
	test_grow_rule(src, exe);
	unlink(src);
	unlink(exe);
	return t_done("test_elfp_layout");
}
