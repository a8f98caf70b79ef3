/* xz streams in memory (src/common/xz.c), a non-allocated section given
 * new content of another size after the layout (elfp_replace_content)
 * and the output's headers in memory (elfp_write_mem_headers): what the
 * mini debuginfo update is made of. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "common/xz.h"
#include "elf/elf_file.h"
#include "elfpatch/elfpatch.h"
#include "t.h"
#include "t_files.h"

static void test_round_trip(void)
{
	size_t n = 100000;
	uint8_t *in = malloc(n), *a = NULL, *b = NULL, *back = NULL;
	size_t na = 0, nb = 0, nback = 0;
	e2s_diag d = {0};
	for (size_t i = 0; i < n; i++)
		in[i] = (uint8_t)(i * 7 + i / 300);
	CHECK_EQ(e2s_xz_encode(in, n, &a, &na, &d), E2S_ERR_OK);
	CHECK(na > 12 && na < n);
	/* The xz magic, then the same bytes again for the same input. */
	CHECK(a && memcmp(a, "\xfd" "7zXZ\0", 6) == 0);
	CHECK_EQ(e2s_xz_encode(in, n, &b, &nb, &d), E2S_ERR_OK);
	CHECK(na == nb && b && memcmp(a, b, na) == 0);
	CHECK_EQ(e2s_xz_decode(a, na, ".s", &back, &nback, &d), E2S_ERR_OK);
	CHECK(nback == n && back && memcmp(back, in, n) == 0);
	free(back);
	back = NULL;

	/* Every cut of the stream is an error, never a short result. */
	size_t bad = 0;
	for (size_t k = 0; k < na; k++) {
		e2s_err e = e2s_xz_decode(a, k, ".s", &back, &nback, &d);
		bad += e == E2S_ERR_OK || back != NULL;
		free(back);
		back = NULL;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(e2s_xz_decode(a, na / 2, ".s", &back, &nback, &d),
		 E2S_ERR_TRUNCATED);
	CHECK_STR(d.section, ".s");
	/* A flipped byte in the compressed data or the check: corrupt. */
	size_t flips = 0;
	for (size_t k = 12; k < na; k += 97) {
		a[k] ^= 0x40;
		e2s_err e = e2s_xz_decode(a, na, ".s", &back, &nback, &d);
		flips += e == E2S_ERR_OK;
		free(back);
		back = NULL;
		a[k] ^= 0x40;
	}
	CHECK_EQ(flips, 0);
	/* Not xz at all. */
	CHECK_EQ(e2s_xz_decode((const uint8_t *)"plain bytes, no xz here", 23,
			       NULL, &back, &nback, &d),
		 E2S_ERR_BAD_ELF);
	CHECK(back == NULL && nback == 0);
	/* Empty input compresses and comes back empty. */
	free(b);
	CHECK_EQ(e2s_xz_encode(in, 0, &b, &nb, &d), E2S_ERR_OK);
	free(a);
	a = b;
	na = nb;
	CHECK_EQ(e2s_xz_decode(a, na, NULL, &back, &nback, &d), E2S_ERR_OK);
	CHECK_EQ(nback, 0);
	free(back);
	free(a);
	free(in);
}

/* A non-allocated section of /bin/true moved before the layout, then
 * given 5000 bytes after it: the output parses, the section has them,
 * every other section its input bytes. */
static void test_replace_content(void)
{
	size_t n = 0;
	uint8_t *img = slurp("/bin/true", &n), *out = NULL;
	elfp_file *f = NULL;
	e2s_diag d = {0};
	if (!img) {
		printf("test_xz: no /bin/true, replace_content not tested\n");
		return;
	}
	CHECK_EQ(elfp_open_view(img, n, &f, &d), E2S_ERR_OK);
	if (!f) {
		free(img);
		return;
	}
	size_t i = elfp_find_section(f, ".gnu_debuglink");
	size_t text = elfp_find_section(f, ".text");
	CHECK(i && text);
	elfp_shdr old = *elfp_section(f, i);
	uint8_t *mine = malloc(16);
	/* Before the layout, and on a section not moved: refused. */
	CHECK_EQ(elfp_replace_content(f, i, mine, 16, &d), E2S_ERR_INTERNAL);
	CHECK_EQ(elfp_move_section(f, i, old.size, &d), E2S_ERR_OK);
	CHECK_EQ(elfp_set_content(f, i, img + old.offset, (size_t)old.size, &d),
		 E2S_ERR_OK);
	CHECK_EQ(elfp_layout(f, &d), E2S_ERR_OK);
	mine = malloc(16);
	CHECK_EQ(elfp_replace_content(f, text, mine, 16, &d), E2S_ERR_INTERNAL);
	size_t big = 5000;
	uint8_t *data = malloc(big);
	for (size_t k = 0; k < big; k++)
		data[k] = (uint8_t)(k % 251 + 1);
	uint8_t *want = malloc(big);
	memcpy(want, data, big);
	CHECK_EQ(elfp_replace_content(f, i, data, big, &d), E2S_ERR_OK);
	size_t nout = 0;
	CHECK_EQ(elfp_write_mem(f, &out, &nout, &d), E2S_ERR_OK);
	elfr_file *in = NULL, *o = NULL;
	CHECK_EQ(elfr_open_view(img, n, 0, &in, &d), E2S_ERR_OK);
	CHECK_EQ(elfr_open_view(out, nout, 0, &o, &d), E2S_ERR_OK);
	if (in && o) {
		CHECK_EQ(o->shnum, in->shnum);
		size_t len = 0;
		const uint8_t *p = elfr_section_data(o, i, &len);
		CHECK(p && len == big && memcmp(p, want, big) == 0);
		size_t same = 0, total = 0;
		for (size_t k = 1; k < in->shnum && k < o->shnum; k++) {
			if (k == i || in->sh[k].type == SHT_NOBITS)
				continue;
			size_t la = 0, lb = 0;
			const uint8_t *a = elfr_section_data(in, k, &la);
			const uint8_t *b = elfr_section_data(o, k, &lb);
			total++;
			same += a && b && la == lb && memcmp(a, b, la) == 0 &&
				in->sh[k].addr == o->sh[k].addr;
		}
		CHECK(total > 10);
		CHECK_EQ(same, total);
		/* The section's bytes do not overlap any other's. */
		size_t overlap = 0;
		for (size_t k = 1; k < o->shnum; k++)
			if (k != i && o->sh[k].type != SHT_NOBITS &&
			    o->sh[k].offset < o->sh[i].offset + big &&
			    o->sh[i].offset < o->sh[k].offset + o->sh[k].size)
				overlap++;
		CHECK_EQ(overlap, 0);
		CHECK(o->shoff >= o->sh[i].offset + big);
	}
	/* Headers only: the same output size, ELF header and both tables,
	 * section names and the new content; .text reads as zeros. */
	uint8_t *hd = NULL;
	size_t nhd = 0;
	CHECK_EQ(elfp_write_mem_headers(f, &hd, &nhd, &d), E2S_ERR_OK);
	CHECK_EQ(nhd, nout);
	if (hd && o && nhd == nout) {
		uint64_t ph_end = o->phoff + (uint64_t)o->phnum * 56;
		uint64_t sh_end = o->shoff + (uint64_t)o->shnum * 64;
		CHECK(memcmp(hd, out, (size_t)ph_end) == 0);
		CHECK(memcmp(hd + o->shoff, out + o->shoff,
			     (size_t)(sh_end - o->shoff)) == 0);
		const elfr_shdr *ss = &o->sh[o->shstrndx];
		CHECK(memcmp(hd + ss->offset, out + ss->offset,
			     (size_t)ss->size) == 0);
		CHECK(memcmp(hd + o->sh[i].offset, want, big) == 0);
		const elfr_shdr *ts = &o->sh[text];
		size_t nz = 0;
		for (uint64_t k = 0; k < ts->size; k++)
			nz += hd[ts->offset + k] != 0;
		CHECK_EQ(nz, 0);
	}
	free(hd);
	free(want);
	elfr_close(in);
	elfr_close(o);
	free(out);
	elfp_close(f);
	free(img);
}

int main(void)
{
	test_round_trip();
	test_replace_content();
	return t_done("test_xz");
}
