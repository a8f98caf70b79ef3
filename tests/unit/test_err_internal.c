/* E2S_ERR_INTERNAL: a broken invariant between our own modules (the ELF
 * editor used out of order, the encoder given a set its caller should
 * never build) is reported as "internal error", mapped to the public
 * EH2S_E_INTERNAL, and never as a usage error ("invalid argument") or as
 * malformed input. Each check is reached through an internal entry point
 * with the misuse a caller bug would make. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "convert/convert.h"
#include "elfpatch/elfpatch.h"
#include "sframe/sfe.h"
#include "t.h"
#include "t_files.h"

/* The input every check edits: any linked ELF file with .eh_frame. */
static const char *const input = "/bin/true";

/* d says an internal error whose detail contains what, through every
 * layer a user sees it by: the code, the formatted message and the
 * public status and message. */
static void check_internal(e2s_err e, const e2s_diag *d, const char *what)
{
	char msg[256];
	eh2s_error err;
	CHECK_EQ(e, E2S_ERR_INTERNAL);
	CHECK_EQ(d->code, E2S_ERR_INTERNAL);
	CHECK(strstr(d->detail, what) != NULL);
	e2s_diag_format(d, msg, sizeof msg);
	CHECK(strncmp(msg, "internal error: ", 16) == 0);
	CHECK(strstr(msg, what) != NULL);
	CHECK_EQ(api_fail(&err, d), EH2S_E_INTERNAL);
	CHECK_EQ(err.code, EH2S_E_INTERNAL);
	CHECK(strncmp(err.message, "internal error: ", 16) == 0);
	if (strstr(msg, what) == NULL)
		fprintf(stderr, "  message: %s\n", msg);
}

static void test_codes(void)
{
	CHECK_STR(e2s_strerror(E2S_ERR_INTERNAL), "internal error");
	CHECK_EQ(api_status(E2S_ERR_INTERNAL), EH2S_E_INTERNAL);
	/* A caller's wrong argument stays what it was. */
	CHECK_EQ(api_status(E2S_ERR_USAGE), EH2S_E_USAGE);
	CHECK_STR(eh2s_strerror(EH2S_E_INTERNAL), "internal error");
}

/* A new, empty .sframe section in f: index in *idx. */
static void add_sframe(elfp_file *f, size_t *idx)
{
	e2s_diag d;
	elfp_shdr sh;
	memset(&sh, 0, sizeof sh);
	sh.type = SHT_PROGBITS;
	sh.flags = SHF_ALLOC;
	sh.size = 16;
	sh.addralign = 8;
	CHECK_EQ(elfp_add_section(f, ".sframe", &sh, idx, &d), E2S_ERR_OK);
}

/* The ELF editor's order: edits, one layout, contents, write. */
static void test_elfpatch_order(void)
{
	elfp_file *f = NULL;
	e2s_diag d;
	size_t idx = 0;
	uint8_t *out = NULL;
	size_t n = 0;

	memset(&d, 0, sizeof d);
	CHECK_EQ(elfp_open(input, &f, &d), E2S_ERR_OK);
	if (!f)
		return;
	add_sframe(f, &idx);
	check_internal(elfp_write_mem(f, &out, &n, &d), &d,
		       "elfp_write before elfp_layout");
	CHECK(out == NULL);
	check_internal(elfp_move_section(f, elfp_shnum(f) + 3, 8, &d), &d,
		       "move of section");
	check_internal(elfp_shrink_section(f, idx, 8, &d), &d,
		       "cannot rewrite section");
	check_internal(elfp_drop_section(f, idx, &d), &d,
		       "cannot drop section");
	check_internal(elfp_track_phdr(f, elfp_phnum(f), idx, &d), &d,
		       "bad program header");
	CHECK_EQ(elfp_layout(f, &d), E2S_ERR_OK);
	check_internal(elfp_layout(f, &d), &d, "elfp_layout called twice");
	size_t idx2 = 0;
	elfp_shdr sh;
	memset(&sh, 0, sizeof sh);
	sh.type = SHT_PROGBITS;
	check_internal(elfp_add_section(f, ".x", &sh, &idx2, &d), &d,
		       "edit after elfp_layout");
	/* Contents: exactly the size the layout gave, into new space. */
	uint8_t bytes[16] = {0};
	check_internal(elfp_set_content(f, idx, bytes, 8, &d), &d,
		       "8 bytes for a size of 16");
	size_t text = 1;
	while (text < elfp_shnum(f) &&
	       !(elfp_section(f, text)->flags & SHF_EXECINSTR))
		text++;
	check_internal(elfp_set_content(f, text, bytes, 16, &d), &d,
		       "has no new space");
	/* Laid out, but the new section never got its bytes. */
	check_internal(elfp_write_mem(f, &out, &n, &d), &d,
		       "has no content");
	CHECK(out == NULL);
	CHECK_EQ(elfp_set_content(f, idx, bytes, 16, &d), E2S_ERR_OK);
	/* Content in a block (the conversion's: convert_file.c) replaces
	 * it: refused at a wrong size, its reference let go; then taken, the
	 * file holding the last reference, let go at close (LSan: no leak,
	 * ASan: no free of block memory). */
	e2s_block *b = e2s_block_new(16);
	CHECK(b != NULL);
	if (b) {
		memset(e2s_block_data(b), 0x5a, 16);
		check_internal(elfp_take_content(f, idx, e2s_block_data(b),
						 8, e2s_block_ref(b), &d),
			       &d, "8 bytes for a size of 16");
		CHECK_EQ(elfp_take_content(f, idx, e2s_block_data(b), 16,
					   b, &d),
			 E2S_ERR_OK);
	}
	CHECK_EQ(elfp_write_mem(f, &out, &n, &d), E2S_ERR_OK);
	/* The block's bytes are the section's. */
	const elfp_shdr *xs = elfp_section(f, idx);
	CHECK(out && xs && xs->offset + 16 <= n &&
	      out[xs->offset] == 0x5a && out[xs->offset + 15] == 0x5a);
	free(out);
	elfp_close(f);
}

/* The encoder checks the set it is given against what projection
 * promises (sfe.h): a version, sorted functions, FRE data in range. */
static void test_encoder(void)
{
	size_t size = 0;
	unsigned char *img = slurp(input, &size);
	elfr_cfi *cf = NULL;
	sfe_set set;
	conv_verdicts v;
	e2s_diag d;
	bw_t w;

	CHECK(img != NULL);
	if (!img)
		return;
	memset(&d, 0, sizeof d);
	CHECK_EQ(conv_project_view(img, size, NULL, 3, &cf, &set, &v, &d),
		 E2S_ERR_OK);
	CHECK(set.nfuncs >= 2);
	bw_init(&w, set.big_endian);
	sfe_encode_opts o = {.section_vaddr = 0x10000};
	CHECK_EQ(sfe_encode(&set, &o, &w, NULL, NULL, &d), E2S_ERR_OK);
	CHECK(w.len > 0);

	o.sframe_version = 7;
	w.len = 0;
	check_internal(sfe_encode(&set, &o, &w, NULL, NULL, &d), &d,
		       "encoder asked for SFrame version 7");
	o.sframe_version = 2;
	check_internal(sfe_encode(&set, &o, &w, NULL, NULL, &d), &d,
		       "projected for SFrame version 3, not 2");
	o.sframe_version = 0;

	uint32_t only[2] = {0, (uint32_t)set.nfuncs};
	o.only = only;
	o.nonly = 2;
	check_internal(sfe_encode(&set, &o, &w, NULL, NULL, &d), &d,
		       "selected function 1 out of range");
	o.only = NULL;
	o.nonly = 0;

	if (set.nfuncs >= 2) {
		sfe_func *a = &set.funcs[0], *b = &set.funcs[1];
		uint64_t t = a->start;
		a->start = b->start;
		b->start = t;
		check_internal(sfe_encode(&set, &o, &w, NULL, NULL, &d), &d,
			       "functions not sorted");
		b->start = a->start;
		a->start = t;

		uint32_t off = b->enc_off;
		b->enc_off = set.enc_len;
		b->enc_len = b->enc_len ? b->enc_len : 1;
		check_internal(sfe_encode(&set, &o, &w, NULL, NULL, &d), &d,
			       "function 1: FRE data out of range");
		b->enc_off = off;
	}
	CHECK(w.len == 0); /* nothing written by a refused call */
	bw_free(&w);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	elfr_cfi_close(cf);
	free(img);
}

/* The streaming projection finished for a table with more FDEs than it
 * was handed: the parser and the projection disagree. */
static void test_stream_count(void)
{
	conv_stream *st;
	sfe_set set;
	conv_verdicts v;
	e2s_diag d = {0};
	cfi_fde fdes[2];
	cfi_table t;
	memset(fdes, 0, sizeof fdes);
	memset(&t, 0, sizeof t);
	t.abi = ABI_AMD64;
	t.fdes = fdes;
	t.nfdes = 2;
	CHECK_EQ(conv_stream_new(&st, 3), E2S_ERR_OK);
	check_internal(conv_stream_finish(st, &t, &set, &v, &d), &d, "stream saw 0 of 2 FDEs");
	conv_stream_free(st);
}

int main(void)
{
	test_codes();
	test_elfpatch_order();
	test_encoder();
	test_stream_count();
	return t_done("test_err_internal");
}
