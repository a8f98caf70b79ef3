/* The ELF reader (src/elf/elf_file.h):
 * - real files read by libelf, the independent reader, and by ours: every
 *   section and program header, name, symbol (SHN_XINDEX resolved) and
 *   relocation must agree; x86-64, AArch64 and s390x (big-endian)
 *   objects and linked files, and 32-bit ones where gcc -m32 works;
 * - hand-built files of both classes and byte orders: extended numbering,
 *   SHT_SYMTAB_SHNDX, REL and RELA, notes, groups, .dynamic, addresses,
 *   compressed sections (good, cut, lying about their size, zstd);
 * - every header error, and every cut of a real file (ASan: no read past
 *   the image, whatever is asked of what opens). */
#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "t.h"
#include "t_elf.h"
#include "t_files.h"

/* ---- Against libelf -------------------------------------------------- */

static void same_as_libelf(const char *path)
{
	size_t n = 0, shnum = 0, phnum = 0, shstrndx = 0;
	unsigned char *img = slurp(path, &n);
	elfr_file *f = NULL;
	e2s_diag d;
	CHECK(img != NULL);
	if (!img)
		return;
	Elf *e = elf_memory((char *)img, n);
	CHECK(e && elf_getshdrnum(e, &shnum) == 0 &&
	      elf_getphdrnum(e, &phnum) == 0 &&
	      elf_getshdrstrndx(e, &shstrndx) == 0);
	CHECK_EQ(elfr_open_view(img, n, 0, &f, &d), E2S_ERR_OK);
	if (!e || !f) {
		if (e)
			elf_end(e);
		elfr_close(f);
		free(img);
		return;
	}
	GElf_Ehdr eh;
	CHECK(gelf_getehdr(e, &eh) != NULL);
	CHECK_EQ(f->is64, gelf_getclass(e) == ELFCLASS64);
	CHECK_EQ(f->type, eh.e_type);
	CHECK_EQ(f->machine, eh.e_machine);
	CHECK_EQ(f->entry, eh.e_entry);
	CHECK_EQ(f->shnum, shnum);
	CHECK_EQ(f->phnum, phnum);
	CHECK_EQ(f->shstrndx, shstrndx);
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr p;
		CHECK(gelf_getphdr(e, (int)i, &p) != NULL);
		const elfr_phdr *q = &f->ph[i];
		CHECK(q->type == p.p_type && q->flags == p.p_flags &&
		      q->offset == p.p_offset && q->vaddr == p.p_vaddr &&
		      q->paddr == p.p_paddr && q->filesz == p.p_filesz &&
		      q->memsz == p.p_memsz && q->align == p.p_align);
	}
	size_t nsyms = 0, nrels = 0, nnotes = 0;
	for (size_t i = 1; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(e, i);
		GElf_Shdr s;
		CHECK(scn && gelf_getshdr(scn, &s));
		if (!scn)
			continue;
		const elfr_shdr *q = &f->sh[i];
		CHECK(q->name == s.sh_name && q->type == s.sh_type &&
		      q->flags == s.sh_flags && q->addr == s.sh_addr &&
		      q->offset == s.sh_offset && q->size == s.sh_size &&
		      q->link == s.sh_link && q->info == s.sh_info &&
		      q->addralign == s.sh_addralign &&
		      q->entsize == s.sh_entsize);
		CHECK_STR(elfr_section_name(f, i),
			  elf_strptr(e, shstrndx, s.sh_name));
		if (s.sh_type == SHT_SYMTAB || s.sh_type == SHT_DYNSYM) {
			Elf_Data *sd = elf_getdata(scn, NULL), *xd = NULL;
			for (size_t j = 1; j < shnum; j++) {
				GElf_Shdr x;
				if (gelf_getshdr(elf_getscn(e, j), &x) &&
				    x.sh_type == SHT_SYMTAB_SHNDX && x.sh_link == i)
					xd = elf_getdata(elf_getscn(e, j), NULL);
			}
			elfr_symtab t;
			CHECK(sd && elfr_symtab_init(f, i, &t));
			CHECK_EQ(t.n, s.sh_size / s.sh_entsize);
			for (size_t k = 0; sd && k < t.n; k++) {
				GElf_Sym g;
				Elf32_Word x = 0;
				elfr_sym y;
				CHECK(gelf_getsymshndx(sd, xd, (int)k, &g, &x));
				CHECK(elfr_symtab_get(&t, k, &y));
				CHECK(y.name == g.st_name && y.info == g.st_info &&
				      y.other == g.st_other &&
				      y.st_shndx == g.st_shndx &&
				      y.value == g.st_value && y.size == g.st_size);
				CHECK_EQ(y.shndx, g.st_shndx == SHN_XINDEX ? x
									     : g.st_shndx);
				CHECK_STR(elfr_sym_name(&t, &y),
					  elf_strptr(e, s.sh_link, g.st_name));
				nsyms++;
			}
			elfr_sym y;
			CHECK(!elfr_symtab_get(&t, t.n, &y));
		}
		if (s.sh_type == SHT_NOTE) {
			Elf_Data *nd = elf_getdata(scn, NULL);
			size_t go = 0, pos = 0, no, dof, sz;
			const uint8_t *p = elfr_section_data(f, i, &sz);
			GElf_Nhdr nh;
			elfr_note nt;
			while (nd && (go = gelf_getnote(nd, go, &nh, &no, &dof))) {
				CHECK(p && elfr_note_next(f, p, sz, s.sh_addralign,
							  &pos, &nt));
				CHECK(nt.type == nh.n_type &&
				      nt.namesz == nh.n_namesz &&
				      nt.descsz == nh.n_descsz &&
				      nt.name == (const char *)p + no &&
				      nt.desc == p + dof);
				nnotes++;
			}
			CHECK(!p || !elfr_note_next(f, p, sz, s.sh_addralign, &pos,
						    &nt));
		}
		if (s.sh_type == SHT_RELA || s.sh_type == SHT_REL) {
			Elf_Data *rd = elf_getdata(scn, NULL);
			elfr_rels r;
			CHECK(rd && elfr_rels_section(f, i, &r));
			CHECK_EQ(r.n, s.sh_size / s.sh_entsize);
			for (size_t k = 0; rd && k < r.n; k++) {
				GElf_Rela g;
				elfr_rel y;
				memset(&g, 0, sizeof g);
				if (s.sh_type == SHT_RELA) {
					CHECK(gelf_getrela(rd, (int)k, &g));
				} else {
					GElf_Rel gr;
					CHECK(gelf_getrel(rd, (int)k, &gr));
					g.r_offset = gr.r_offset;
					g.r_info = gr.r_info;
				}
				elfr_rels_get(&r, k, &y);
				CHECK(y.offset == g.r_offset &&
				      y.sym == GELF_R_SYM(g.r_info) &&
				      y.type == GELF_R_TYPE(g.r_info) &&
				      y.addend == g.r_addend);
				nrels++;
			}
		}
	}
	CHECK(nsyms > 0 || eh.e_type != ET_REL);
	CHECK(nrels > 0 || eh.e_type != ET_REL);
	/* Linked by gcc: a build ID, the ABI tag, x86-64's 8-aligned
	 * property note. */
	CHECK(nnotes >= 3 || strcmp(path, "/proc/self/exe") != 0);
	elf_end(e);
	elfr_close(f);

	/* From the path: the same headers, the descriptor kept when asked. */
	CHECK_EQ(elfr_open(path, ELFR_KEEP_FD, &f, &d), E2S_ERR_OK);
	if (f) {
		CHECK_EQ(f->size, n);
		CHECK(memcmp(f->img, img, n) == 0);
		CHECK(f->fd >= 0 && f->st.st_size == (off_t)n);
		CHECK_EQ(f->shnum, shnum);
		elfr_close(f);
	}
	CHECK_EQ(elfr_open(path, ELFR_NO_SEGMENTS, &f, &d), E2S_ERR_OK);
	if (f) {
		CHECK(f->fd == -1 && f->phnum == 0 && f->shnum == shnum);
		elfr_close(f);
	}

	/* Every cut of the file: an error or a smaller file, and whatever
	 * opens can be asked anything (ASan watches the reads). */
	for (size_t cut = 0; cut < n; cut += cut < 256 ? 1 : 97) {
		if (elfr_open_view(img, cut, 0, &f, &d) != E2S_ERR_OK) {
			CHECK(f == NULL);
			continue;
		}
		for (size_t i = 0; i < f->shnum; i++) {
			size_t sz;
			elfr_symtab t;
			elfr_rels r;
			elfr_sym y;
			elfr_rel rl;
			(void)elfr_section_name(f, i);
			(void)elfr_section_data(f, i, &sz);
			if (elfr_symtab_init(f, i, &t))
				for (size_t k = 0; k < t.n; k++)
					if (elfr_symtab_get(&t, k, &y))
						(void)elfr_sym_name(&t, &y);
			if (elfr_rels_section(f, i, &r))
				for (size_t k = 0; k < r.n; k++)
					elfr_rels_get(&r, k, &rl);
		}
		elfr_close(f);
	}
	free(img);
}

/* ---- Hand-built files ------------------------------------------------ */

/* A note at the end of w (which starts aligned): name and descriptor
 * each start at the alignment. */
static void note(bw_t *w, uint32_t type, const char *name, const void *desc,
		 uint32_t descsz, unsigned align)
{
	uint32_t nsz = (uint32_t)strlen(name) + 1;
	bw_u32(w, nsz);
	bw_u32(w, descsz);
	bw_u32(w, type);
	bw_bytes(w, name, nsz);
	bw_zero(w, (align - w->len % align) % align);
	bw_bytes(w, desc, descsz);
	bw_zero(w, (align - w->len % align) % align);
}

/* A compressed section of either class: header, then zlib's bytes of
 * full bytes of pattern (claim: the size the header says). */
static void compressed(bw_t *w, bool is64, bool be, uint32_t type,
		       size_t full, uint64_t claim)
{
	uint8_t *raw = malloc(full), *z = malloc(compressBound(full));
	uLongf zn = compressBound(full);
	for (size_t i = 0; i < full; i++)
		raw[i] = (uint8_t)(i * 7 / 5);
	CHECK(compress2(z, &zn, raw, full, 9) == Z_OK);
	bw_init(w, be);
	bw_u32(w, type);
	if (is64)
		bw_u32(w, 0);
	t_word(w, is64, claim);
	t_word(w, is64, 1);
	bw_bytes(w, z, zn);
	free(raw);
	free(z);
}

static void check_inflated(const elfr_file *f, size_t i, size_t full)
{
	uint8_t *p = NULL;
	size_t n = 0;
	e2s_diag d;
	CHECK_EQ(elfr_section_inflate(f, i, &p, &n, &d), E2S_ERR_OK);
	CHECK_EQ(n, full);
	bool same = p != NULL;
	for (size_t k = 0; p && k < n; k++)
		same = same && p[k] == (uint8_t)(k * 7 / 5);
	CHECK(same);
	free(p);
}

static bool count_dyn(void *ctx, int64_t tag, uint64_t val, uint64_t off)
{
	uint64_t *sum = ctx;
	(void)off;
	*sum += (uint64_t)tag * 1000 + val;
	return tag != 99;
}

/* Everything the reader offers on one file of this class and order. */
static void synthetic(bool is64, bool be, bool ext)
{
	bw_t syms, xndx, rel, rela, notes, dyn, grp, z;
	bw_init(&syms, be);
	bw_init(&xndx, be);
	bw_init(&rel, be);
	bw_init(&rela, be);
	bw_init(&notes, be);
	bw_init(&dyn, be);
	bw_init(&grp, be);
	static const char strtab[] = "\0foo\0bar";
	static const uint8_t text[64];
	t_sym(&syms, is64, 0, 0, 0, 0, 8);
	t_sym(&syms, is64, 1, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), 1, 0x10, 8);
	t_sym(&syms, is64, 5, ELF64_ST_INFO(STB_LOCAL, STT_OBJECT),
	       SHN_XINDEX, 0x20, 8);
	t_sym(&syms, is64, 99, 0, SHN_XINDEX, 0x30, 8); /* name past the table */
	bw_u32(&xndx, 0);
	bw_u32(&xndx, 0);
	bw_u32(&xndx, 70000); /* symbol 2: section 70000 */
	/* symbol 3 has no word: SHN_UNDEF */
	if (is64) {
		bw_u64(&rel, 0x8);
		bw_u64(&rel, ELF64_R_INFO(1, 2));
		bw_u64(&rela, 0x18);
		bw_u64(&rela, ELF64_R_INFO(2, 261));
		bw_u64(&rela, (uint64_t)-4);
	} else {
		bw_u32(&rel, 0x8);
		bw_u32(&rel, ELF32_R_INFO(1, 2));
		bw_u32(&rela, 0x18);
		bw_u32(&rela, ELF32_R_INFO(2, 200));
		bw_u32(&rela, (uint32_t)-4);
	}
	note(&notes, NT_GNU_BUILD_ID, "GNU", "\x01\x02\x03", 3, 8);
	note(&notes, 7, "X", "", 0, 8);
	t_word(&dyn, is64, 1);
	t_word(&dyn, is64, 5);
	t_word(&dyn, is64, 99);
	t_word(&dyn, is64, 6);
	t_word(&dyn, is64, 7);
	t_word(&dyn, is64, 8);
	t_word(&dyn, is64, DT_NULL);
	t_word(&dyn, is64, 0);
	bw_u32(&grp, GRP_COMDAT);
	bw_u32(&grp, 1);
	bw_u32(&grp, 4);
	compressed(&z, is64, be, ELFCOMPRESS_ZLIB, 5000, 5000);
	uint64_t chf = SHF_COMPRESSED;
	t_sec secs[] = {
		{".text", SHT_PROGBITS, SHF_ALLOC, text, sizeof text, 0, 0, 0,
		 .addr = 0x1000, .align = 16},
		{".symtab", SHT_SYMTAB, 0, syms.data, syms.len, 3, 2,
		 is64 ? 24 : 16, .align = 8},
		{".strtab", SHT_STRTAB, 0, strtab, sizeof strtab, 0, 0, 0, 0, 0},
		{".symtab_shndx", SHT_SYMTAB_SHNDX, 0, xndx.data, xndx.len, 2, 0,
		 4, .align = 4},
		{".rel.text", SHT_REL, 0, rel.data, rel.len, 2, 1, is64 ? 16 : 8,
		 .align = 8},
		{".rela.text", SHT_RELA, 0, rela.data, rela.len, 2, 1,
		 is64 ? 24 : 12, .align = 8},
		{".note.x", SHT_NOTE, SHF_ALLOC, notes.data, notes.len, 0, 0, 0,
		 .align = 8},
		{".dynamic", SHT_DYNAMIC, SHF_ALLOC, dyn.data, dyn.len, 0, 0, 0,
		 .align = 8},
		{".group", SHT_GROUP, 0, grp.data, grp.len, 2, 1, 4, .align = 4},
		{".debug_frame", SHT_PROGBITS, chf, z.data, z.len, 0, 0, 0,
		 .align = 8},
		{".bss", SHT_NOBITS, SHF_ALLOC, NULL, 0x100, 0, 0, 0,
		 .addr = 0x2000, .align = 8},
	};
	size_t nsec = sizeof secs / sizeof secs[0];
	/* Two passes: the first finds where .text and .dynamic land. */
	elfr_phdr ph[2] = {{PT_LOAD, PF_R, 0, 0x400000, 0x400000, 0, 0, 4096},
			   {PT_DYNAMIC, PF_R, 0, 0, 0, 0, 0, 8}};
	t_shape shape = {is64, be, ext, ET_DYN, EM_X86_64, 0x1234, ph, 2};
	bw_t w;
	t_build_elf(&w, &shape, secs, nsec);
	elfr_file *f = NULL;
	e2s_diag d;
	CHECK_EQ(elfr_open_view(w.data, w.len, 0, &f, &d), E2S_ERR_OK);
	if (!f)
		goto out;
	ph[0].filesz = ph[0].memsz = f->sh[1].offset + 64;
	ph[1].offset = f->sh[8].offset;
	ph[1].filesz = ph[1].memsz = f->sh[8].size;
	elfr_close(f);
	bw_free(&w);
	t_build_elf(&w, &shape, secs, nsec);
	CHECK_EQ(elfr_open_mem(w.data, w.len, 0, &f, &d), E2S_ERR_OK);
	bw_free(&w); /* the handle has its own copy */
	if (!f)
		goto out;

	CHECK_EQ(f->is64, is64);
	CHECK_EQ(f->be, be);
	CHECK_EQ(f->type, ET_DYN);
	CHECK_EQ(f->machine, EM_X86_64);
	CHECK_EQ(f->entry, 0x1234);
	CHECK_EQ(f->shnum, nsec + 2);
	CHECK_EQ(f->phnum, 2);
	CHECK_EQ(f->shstrndx, nsec + 1);
	CHECK_STR(elfr_section_name(f, 2), ".symtab");
	CHECK_EQ(elfr_find_section(f, ".dynamic"), 8);
	CHECK_EQ(elfr_find_section(f, ".none"), 0);
	CHECK(elfr_section_name(f, nsec + 2) == NULL);
	CHECK(elfr_find_phdr(f, PT_DYNAMIC) == &f->ph[1]);
	CHECK(elfr_find_phdr(f, PT_INTERP) == NULL);
	size_t n;
	CHECK(elfr_section_data(f, 11, &n) == NULL && n == 0); /* NOBITS */
	CHECK(elfr_section_data(f, 0, &n) == NULL);
	CHECK(elfr_section_data(f, 1, &n) == f->img + f->sh[1].offset &&
	      n == 64);
	CHECK_STR(elfr_string(f, 3, 5), "bar");
	CHECK(elfr_string(f, 3, sizeof strtab) == NULL);
	CHECK(elfr_string(f, 2, 1) == NULL); /* not a string table */

	/* Symbols: SHN_XINDEX resolved, or SHN_UNDEF without a word. */
	elfr_symtab t;
	elfr_sym s;
	CHECK(elfr_symtab_init(f, 2, &t));
	CHECK_EQ(t.n, 4);
	CHECK(elfr_symtab_get(&t, 1, &s));
	CHECK(s.value == 0x10 && s.shndx == 1 && s.size == 8);
	CHECK_STR(elfr_sym_name(&t, &s), "foo");
	CHECK(elfr_symtab_get(&t, 2, &s));
	CHECK(s.st_shndx == SHN_XINDEX && s.shndx == 70000 && s.value == 0x20);
	CHECK_EQ(ELF64_ST_TYPE(s.info), STT_OBJECT);
	CHECK_STR(elfr_sym_name(&t, &s), "bar");
	CHECK(elfr_symtab_get(&t, 3, &s));
	CHECK(s.shndx == SHN_UNDEF && elfr_sym_name(&t, &s) == NULL);
	CHECK(!elfr_symtab_get(&t, 4, &s));
	CHECK_EQ(elfr_get(f, f->img + elfr_sym_value_offset(&t, 2), is64 ? 8 : 4),
		 0x20);
	CHECK(elfr_symtab_init(f, 3, &t) && t.n == 0); /* a string table */
	CHECK(!elfr_symtab_init(f, 0, &t));
	CHECK(!elfr_symtab_init(f, 99, &t));

	/* Relocations of both kinds. */
	elfr_rels r;
	elfr_rel rl;
	CHECK(elfr_rels_section(f, 5, &r) && r.n == 1 && !r.rela);
	elfr_rels_get(&r, 0, &rl);
	CHECK(rl.offset == 8 && rl.sym == 1 && rl.type == 2 && rl.addend == 0);
	CHECK(elfr_rels_section(f, 6, &r) && r.n == 1 && r.rela);
	elfr_rels_get(&r, 0, &rl);
	CHECK(rl.offset == 0x18 && rl.sym == 2 && rl.addend == -4);
	CHECK_EQ(rl.type, is64 ? 261 : 200);
	CHECK(!elfr_rels_section(f, 2, &r));

	/* Notes, 8-aligned as their section. */
	elfr_note nt;
	size_t pos = 0;
	const uint8_t *np = elfr_section_data(f, 7, &n);
	CHECK(np && elfr_note_next(f, np, n, 8, &pos, &nt));
	CHECK(nt.type == NT_GNU_BUILD_ID && nt.namesz == 4 &&
	      strcmp(nt.name, "GNU") == 0 && nt.descsz == 3 &&
	      memcmp(nt.desc, "\x01\x02\x03", 3) == 0);
	CHECK(np && elfr_note_next(f, np, n, 8, &pos, &nt));
	CHECK(nt.type == 7 && nt.descsz == 0 && strcmp(nt.name, "X") == 0);
	CHECK(np && !elfr_note_next(f, np, n, 8, &pos, &nt));
	pos = 0; /* a note cut inside its descriptor */
	CHECK(np && !elfr_note_next(f, np, 12 + 4 + 2, 8, &pos, &nt));

	/* Groups, .dynamic, addresses. */
	const uint8_t *gp = elfr_section_data(f, 9, &n);
	CHECK(gp && elfr_group_lists(f, gp, n, 4) && elfr_group_lists(f, gp, n, 1));
	CHECK(gp && !elfr_group_lists(f, gp, n, GRP_COMDAT + 1));
	uint64_t sum = 0;
	CHECK(!elfr_each_dyn(f, count_dyn, &sum)); /* stopped at tag 99 */
	CHECK_EQ(sum, 1005 + 99006);
	uint64_t left = 0;
	const uint8_t *at = elfr_at_addr(f, 0x400000 + f->sh[1].offset, 8, &left);
	CHECK(at == f->img + f->sh[1].offset && left == 64);
	CHECK(elfr_at_addr(f, 0x400000 + f->sh[1].offset + 60, 8, NULL) == NULL);
	CHECK(elfr_at_addr(f, 0x3fffff, 1, NULL) == NULL);

	/* The compressed section. */
	check_inflated(f, 10, 5000);
	elfr_close(f);

	/* Only 64-bit when asked; no segments when asked. */
	t_build_elf(&w, &shape, secs, nsec);
	e2s_err e = elfr_open_view(w.data, w.len, ELFR_ONLY64, &f, &d);
	CHECK_EQ(e, is64 ? E2S_ERR_OK : E2S_ERR_UNSUPPORTED_MACHINE);
	CHECK(is64 || strcmp(d.detail, "only 64-bit ELF is supported") == 0);
	elfr_close(f);
	CHECK_EQ(elfr_open_view(w.data, w.len, ELFR_NO_SEGMENTS, &f, &d),
		 E2S_ERR_OK);
	CHECK(f && f->phnum == 0 && f->shnum == nsec + 2);
	elfr_close(f);
	bw_free(&w);
out:
	bw_free(&syms);
	bw_free(&xndx);
	bw_free(&rel);
	bw_free(&rela);
	bw_free(&notes);
	bw_free(&dyn);
	bw_free(&grp);
	bw_free(&z);
}

/* Compressed sections that must not inflate: cut, a size claim beyond
 * what zlib can produce from so few bytes, a wrong size, zstd. */
static void bad_compressed(void)
{
	static const struct {
		uint32_t type;
		size_t full, cut;
		uint64_t claim;
	} cases[] = {
		{ELFCOMPRESS_ZLIB, 3000, 20, 3000},
		{ELFCOMPRESS_ZLIB, 3000, 0, (uint64_t)1 << 40},
		{ELFCOMPRESS_ZLIB, 3000, 0, 2999},
		{ELFCOMPRESS_ZLIB, 3000, 0, 3001},
		{2 /* ELFCOMPRESS_ZSTD */, 3000, 0, 3000},
		{ELFCOMPRESS_ZLIB, 3000, 10, 3000}, /* inside the header */
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		bw_t z, w;
		compressed(&z, true, false, cases[k].type, cases[k].full,
			   cases[k].claim);
		if (cases[k].cut)
			z.len = cases[k].cut;
		t_sec s = {".debug_frame", SHT_PROGBITS, SHF_COMPRESSED, z.data,
			   z.len, 0, 0, 0, 0, 0};
		t_shape shape = {true, false, false, ET_REL, EM_X86_64, 0,
				 NULL, 0};
		t_build_elf(&w, &shape, &s, 1);
		elfr_file *f = NULL;
		e2s_diag d;
		uint8_t *p = (uint8_t *)&p;
		size_t n = 1;
		CHECK_EQ(elfr_open_view(w.data, w.len, 0, &f, &d), E2S_ERR_OK);
		if (f) {
			e2s_err e = elfr_section_inflate(f, 1, &p, &n, &d);
			CHECK(e == E2S_ERR_BAD_ELF || e == E2S_ERR_TRUNCATED);
			CHECK(p == NULL && n == 0 && d.detail[0]);
			elfr_close(f);
		}
		bw_free(&z);
		bw_free(&w);
	}
	/* And the 32-bit header. */
	bw_t z, w;
	compressed(&z, false, true, ELFCOMPRESS_ZLIB, 777, 777);
	t_sec s = {".debug_frame", SHT_PROGBITS, SHF_COMPRESSED, z.data, z.len,
		   0, 0, 0, 0, 0};
	t_shape shape = {false, true, false, ET_REL, EM_S390, 0, NULL, 0};
	t_build_elf(&w, &shape, &s, 1);
	elfr_file *f = NULL;
	e2s_diag d;
	CHECK_EQ(elfr_open_view(w.data, w.len, 0, &f, &d), E2S_ERR_OK);
	if (f)
		check_inflated(f, 1, 777);
	elfr_close(f);
	bw_free(&z);
	bw_free(&w);
}

/* ---- Header errors ---------------------------------------------------- */

static e2s_err open_patched(const bw_t *w, size_t at, uint64_t v, unsigned n,
			    unsigned flags, e2s_diag *d)
{
	uint8_t *b = malloc(w->len);
	elfr_file *f = NULL;
	memcpy(b, w->data, w->len);
	for (unsigned i = 0; i < n; i++)
		b[at + i] = (uint8_t)(v >> (8 * i)); /* little-endian files */
	e2s_err e = elfr_open_view(b, w->len, flags, &f, d);
	CHECK((e == E2S_ERR_OK) == (f != NULL));
	elfr_close(f);
	free(b);
	return e;
}

static void errors(void)
{
	static const uint8_t text[16];
	t_sec s = {".text", SHT_PROGBITS, SHF_ALLOC, text, sizeof text, 0, 0, 0, 0, 0};
	t_shape shape = {true, false, false, ET_REL, EM_X86_64, 0, NULL, 0};
	bw_t w;
	e2s_diag d;
	elfr_file *f = (elfr_file *)&f;
	t_build_elf(&w, &shape, &s, 1);

	CHECK_EQ(elfr_open_view("hello, world, hello", 19, 0, &f, &d),
		 E2S_ERR_NOT_ELF);
	CHECK(f == NULL);
	CHECK_EQ(elfr_open_view(NULL, 0, 0, &f, &d), E2S_ERR_NOT_ELF);
	CHECK_EQ(elfr_open_view(w.data, 15, 0, &f, &d), E2S_ERR_NOT_ELF);
	CHECK_EQ(elfr_open_view(w.data, 40, 0, &f, &d), E2S_ERR_TRUNCATED);
	CHECK_STR(d.detail, "ELF header is cut short");
	CHECK_EQ(open_patched(&w, EI_CLASS, 3, 1, 0, &d), E2S_ERR_BAD_ELF);
	CHECK_STR(d.detail, "bad EI_CLASS 3");
	CHECK_EQ(open_patched(&w, EI_CLASS, 3, 1, ELFR_ONLY64, &d),
		 E2S_ERR_UNSUPPORTED_MACHINE);
	CHECK_EQ(open_patched(&w, EI_DATA, 0, 1, 0, &d), E2S_ERR_BAD_ELF);
	CHECK_STR(d.detail, "bad EI_DATA 0");
	CHECK_EQ(open_patched(&w, EI_VERSION, 2, 1, 0, &d), E2S_ERR_BAD_ELF);
	CHECK_STR(d.detail, "bad EI_VERSION 2");
	CHECK_EQ(open_patched(&w, 58, 40, 2, 0, &d), E2S_ERR_BAD_ELF);
	CHECK_STR(d.detail, "e_shentsize 40");
	CHECK_EQ(open_patched(&w, 40, w.len - 10, 8, 0, &d), E2S_ERR_TRUNCATED);
	CHECK_STR(d.detail, "section headers past the end of the file");
	CHECK_EQ(open_patched(&w, 60, 900, 2, 0, &d), E2S_ERR_TRUNCATED);
	CHECK_STR(d.detail, "900 section headers do not fit in the file");
	/* One program header: its entry size, then its place. */
	uint8_t *b = malloc(w.len);
	memcpy(b, w.data, w.len);
	b[56] = 1;  /* e_phnum */
	b[54] = 20; /* e_phentsize */
	CHECK_EQ(elfr_open_view(b, w.len, 0, &f, &d), E2S_ERR_BAD_ELF);
	CHECK_STR(d.detail, "e_phentsize 20");
	b[54] = 56;
	b[32] = (uint8_t)(w.len - 20); /* e_phoff: 20 bytes before the end */
	b[33] = (uint8_t)((w.len - 20) >> 8);
	CHECK_EQ(elfr_open_view(b, w.len, 0, &f, &d), E2S_ERR_TRUNCATED);
	CHECK_STR(d.detail, "program headers past the end of the file");
	/* ... which nobody reads with ELFR_NO_SEGMENTS. */
	CHECK_EQ(elfr_open_view(b, w.len, ELFR_NO_SEGMENTS, &f, &d), E2S_ERR_OK);
	elfr_close(f);
	free(b);
	/* No section headers at all (sstrip): a file of no sections. */
	CHECK_EQ(open_patched(&w, 40, 0, 8, 0, &d), E2S_ERR_OK);

	CHECK_EQ(elfr_open("/nonexistent/eh2sframe", 0, &f, &d), E2S_ERR_IO);
	CHECK(strstr(d.detail, "No such file") != NULL);
	CHECK_EQ(elfr_open("/tmp", 0, &f, &d), E2S_ERR_IO);
	CHECK_STR(d.detail, "not a regular file");
	bw_free(&w);
}

int main(void)
{
	char obj[] = "/tmp/eh2s-elf-XXXXXX";
	int fd = mkstemp(obj);
	char cmd[512];
	CHECK(elf_version(EV_CURRENT) != EV_NONE);
	same_as_libelf("/proc/self/exe");
	static const char *const data[] = {
		"tests/data/gas/x86_prog.obj", "tests/data/gas/x86_plt.dso",
		"tests/data/gas/s390x_plt.dso", "tests/data/gas/s390x_cases.obj",
		"tests/data/gas/aarch64_cases.obj"};
	for (size_t i = 0; i < sizeof data / sizeof data[0]; i++)
		same_as_libelf(data[i]);
	/* 32-bit objects (REL, Elf32_Sym) and a linked 32-bit file. */
	if (fd >= 0) {
		close(fd);
		snprintf(cmd, sizeof cmd,
			 "echo 'int g; int f(int *p){return p[0]+g;}' | "
			 "gcc -m32 -O2 -x c -c -o %s - 2>/dev/null", obj);
		if (system(cmd) == 0)
			same_as_libelf(obj);
		else
			puts("note: no gcc -m32: 32-bit object skipped");
		snprintf(cmd, sizeof cmd,
			 "echo 'int f(void){return 1;}' | gcc -m32 -shared "
			 "-nostdlib -x c -o %s - 2>/dev/null", obj);
		if (system(cmd) == 0)
			same_as_libelf(obj);
		unlink(obj);
	}
	for (int k = 0; k < 8; k++)
		synthetic(k & 1, k & 2, k & 4);
	bad_compressed();
	errors();
	return t_done("test_elf_file");
}
