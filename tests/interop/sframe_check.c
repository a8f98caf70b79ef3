/* sframe_check: print an ELF file's .sframe as seen by the reference
 * decoder, libsframe (binutils 2.47), one line per FDE and per FRE, and
 * cross-check libsframe's PC lookup (sframe_find_fre) against the FRE list.
 *
 * Built and run INSIDE the oracle chroot (tools/in-oracle.sh); it is not
 * part of the eh2sframe build. Usage:
 *   sframe_check [-q] [-s SECTION] FILE
 * Output (all numbers: hex without 0x for addresses, signed decimal for
 * offsets), the same per-FRE tuple tools/sframe_text_norm.py produces from
 * objdump --sframe and eh2sframe --dump text:
 *   # sframe_check FILE abi=N flags=0xF fdes=N fres=N fixed_fp=D fixed_ra=D
 *   FDE <func_start> size=<hex> fres=<n> type=default|flex pc=inc|mask rep=<n>[ signal][ bkey]
 *   FRE <func_start> <fre_off> cfa=<LOC> fp=<RULE> ra=<RULE>[ m]
 *   # lookups=N bad=N
 * LOC  := <reg><+|-><d> | (<reg><+|-><d>)     value / value loaded from
 * RULE := u (no rule: unchanged, or the header's fixed offset is absent)
 *       | c<+|-><d> (saved at CFA+d) | vc<+|-><d> (value CFA+d) | LOC
 * <reg> is sp / fp for the ABI's SP and FP DWARF registers, else r<N>.
 * An FRE with RA undefined (outermost) prints "cfa=undef fp=- ra=undef".
 * For relocatable files the .rela.sframe relocations are applied first
 * (all sections at address 0), so func_start is the section offset.
 * Lookups run only when the section is sorted (linked files): for every FRE
 * its first, middle and last PC, plus the PCs around each FDE's ends must
 * give the expected FRE or "not found". -q prints only the summary.
 * Exit: 0 ok, 1 lookup disagreement, 2 usage / unreadable / decode error. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sframe-api.h>

struct elf {
	unsigned char *d;
	size_t n;
	int be;
};

static uint64_t rd(const struct elf *e, size_t off, int w)
{
	uint64_t v = 0;
	if (off > e->n || (size_t)w > e->n - off) {
		fprintf(stderr, "sframe_check: truncated ELF at %zu\n", off);
		exit(2);
	}
	for (int i = 0; i < w; i++) {
		unsigned b = e->d[off + (e->be ? (size_t)i : (size_t)(w - 1 - i))];
		v = (v << 8) | b;
	}
	return v;
}

static void wr64(struct elf *e, size_t off, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		size_t at = off + (e->be ? (size_t)(7 - i) : (size_t)i);
		e->d[at] = (unsigned char)(v >> (8 * i));
	}
}

struct shdr {
	uint32_t name, type, link, info;
	uint64_t addr, off, size, entsize;
};

static struct shdr get_shdr(const struct elf *e, unsigned i)
{
	uint64_t shoff = rd(e, 0x28, 8);
	unsigned shentsize = (unsigned)rd(e, 0x3a, 2);
	size_t b = (size_t)shoff + (size_t)i * shentsize;
	struct shdr s;
	s.name = (uint32_t)rd(e, b, 4);
	s.type = (uint32_t)rd(e, b + 4, 4);
	s.addr = rd(e, b + 0x10, 8);
	s.off = rd(e, b + 0x18, 8);
	s.size = rd(e, b + 0x20, 8);
	s.link = (uint32_t)rd(e, b + 0x28, 4);
	s.info = (uint32_t)rd(e, b + 0x2c, 4);
	s.entsize = rd(e, b + 0x38, 8);
	return s;
}

/* Relocation types that write S + A - P as 64 bits in .rela.sframe. */
static int pc64_type_p(unsigned machine, uint32_t type)
{
	return (machine == 62 && type == 24) ||  /* R_X86_64_PC64 */
	       (machine == 183 && type == 260) || /* R_AARCH64_PREL64 */
	       (machine == 22 && type == 23);     /* R_390_PC64 */
}

static int abi_sp, abi_fp;

static void reg_name(char *o, size_t n, unsigned r)
{
	if ((int)r == abi_sp)
		snprintf(o, n, "sp");
	else if ((int)r == abi_fp)
		snprintf(o, n, "fp");
	else
		snprintf(o, n, "r%u", r);
}

static void loc(char *o, size_t n, const char *base, int32_t off, int deref)
{
	snprintf(o, n, deref ? "(%s%+" PRId32 ")" : "%s%+" PRId32, base, off);
}

/* Signed data word IDX of FRE, width from its info byte. */
static int32_t sword(const sframe_frame_row_entry *f, int idx, int *err)
{
	uint32_t u = sframe_get_fre_udata(f, idx, err);
	switch (SFRAME_V3_FRE_DATAWORD_SIZE(f->fre_info)) {
	case SFRAME_FRE_DATAWORD_1B: return (int8_t)u;
	case SFRAME_FRE_DATAWORD_2B: return (int16_t)u;
	default: return (int32_t)u;
	}
}

/* Flex rule from (ctrl, offset) words; is_cfa: the CFA's own pair. */
static void flex_rule(char *o, size_t n, uint32_t ctrl, int32_t off, int is_cfa, int abi)
{
	char b[32];
	int deref = SFRAME_V3_FLEX_FDE_CTRLWORD_DEREF_P(ctrl);
	if (SFRAME_V3_FLEX_FDE_CTRLWORD_REG_P(ctrl)) {
		reg_name(b, sizeof b, SFRAME_V3_FLEX_FDE_CTRLWORD_REGNUM(ctrl));
		/* s390x stores the CFA offset scaled, also in flex FDEs (as gas). */
		if (is_cfa && abi == SFRAME_ABI_S390X_ENDIAN_BIG)
			off = off * SFRAME_S390X_CFA_OFFSET_ALIGNMENT_FACTOR -
			      SFRAME_S390X_CFA_OFFSET_ADJUSTMENT;
		loc(o, n, b, off, deref);
	} else {
		snprintf(o, n, deref ? "c%+" PRId32 : "vc%+" PRId32, off);
	}
}

struct fre_view {
	char text[160];
};

static void describe(const sframe_decoder_ctx *dx, const sframe_frame_row_entry *f,
		     unsigned fde_type, int abi, int fixed_ra, struct fre_view *v)
{
	char cfa[48] = "?", fp[48] = "u", ra[48] = "u";
	int err = 0;
	unsigned cnt = SFRAME_V3_FRE_DATAWORD_COUNT(f->fre_info);
	int mangled = sframe_fre_get_ra_mangled_p(dx, f, &err);
	err = 0;
	if (sframe_fre_get_ra_undefined_p(dx, f, &err)) {
		snprintf(v->text, sizeof v->text, "cfa=undef fp=- ra=undef%s", mangled ? " m" : "");
		return;
	}
	if (fde_type == SFRAME_FDE_TYPE_FLEX) {
		int e2 = 0;
		flex_rule(cfa, sizeof cfa, sframe_get_fre_udata(f, 0, &e2), sword(f, 1, &e2), 1, abi);
		unsigned fpi = 3;
		if (cnt >= 3) {
			uint32_t rc = sframe_get_fre_udata(f, 2, &e2);
			if (rc != 0) {
				flex_rule(ra, sizeof ra, rc, sword(f, 3, &e2), 0, abi);
				fpi = 4;
			}
		}
		if (cnt > fpi) {
			uint32_t fc = sframe_get_fre_udata(f, (int)fpi, &e2);
			if (fc != 0)
				flex_rule(fp, sizeof fp, fc, sword(f, (int)fpi + 1, &e2), 0, abi);
		}
		if (ra[0] == 'u' && fixed_ra != 0)
			snprintf(ra, sizeof ra, "c%+d", fixed_ra);
		if (e2)
			snprintf(cfa, sizeof cfa, "error(%s)", sframe_errmsg(e2));
	} else {
		int e1 = 0;
		uint8_t base = sframe_fre_get_base_reg_id(f, &e1);
		int32_t co = sframe_fre_get_cfa_offset(dx, f, fde_type, &e1);
		if (e1)
			snprintf(cfa, sizeof cfa, "error(%s)", sframe_errmsg(e1));
		else
			loc(cfa, sizeof cfa, base == SFRAME_BASE_REG_SP ? "sp" : "fp", co, 0);
		e1 = 0;
		int32_t fo = sframe_fre_get_fp_offset(dx, f, fde_type, &e1);
		if (!e1)
			snprintf(fp, sizeof fp, "c%+" PRId32, fo);
		e1 = 0;
		int32_t ro = sframe_fre_get_ra_offset(dx, f, fde_type, &e1);
		/* s390x: RA word 0 is padding meaning "not saved". */
		if (!e1 && ro != SFRAME_FRE_RA_OFFSET_INVALID)
			snprintf(ra, sizeof ra, "c%+" PRId32, ro);
	}
	snprintf(v->text, sizeof v->text, "cfa=%s fp=%s ra=%s%s", cfa, fp, ra, mangled ? " m" : "");
}

static int same_fre(const sframe_frame_row_entry *a, const sframe_frame_row_entry *b)
{
	size_t words = SFRAME_V3_FRE_DATAWORD_COUNT(a->fre_info);
	size_t w = (size_t)1 << SFRAME_V3_FRE_DATAWORD_SIZE(a->fre_info);
	return a->fre_start_addr == b->fre_start_addr && a->fre_info == b->fre_info &&
	       memcmp(a->fre_datawords, b->fre_datawords, words * w) == 0;
}

int main(int argc, char **argv)
{
	int quiet = 0;
	const char *secname = ".sframe";
	int ai = 1;
	for (; ai < argc && argv[ai][0] == '-'; ai++) {
		if (!strcmp(argv[ai], "-q"))
			quiet = 1;
		else if (!strcmp(argv[ai], "-s") && ai + 1 < argc)
			secname = argv[++ai];
		else
			break;
	}
	if (ai + 1 != argc) {
		fprintf(stderr, "usage: sframe_check [-q] [-s SECTION] FILE\n");
		return 2;
	}
	const char *path = argv[ai];
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		fprintf(stderr, "sframe_check: %s: %s\n", path, strerror(errno));
		return 2;
	}
	struct elf e = {0};
	fseek(fp, 0, SEEK_END);
	long sz = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	if (sz < 64 || !(e.d = malloc((size_t)sz)) || fread(e.d, 1, (size_t)sz, fp) != (size_t)sz) {
		fprintf(stderr, "sframe_check: %s: cannot read\n", path);
		return 2;
	}
	fclose(fp);
	e.n = (size_t)sz;
	if (memcmp(e.d, "\177ELF", 4) != 0 || e.d[4] != 2) {
		fprintf(stderr, "sframe_check: %s: not an ELF64 file\n", path);
		return 2;
	}
	e.be = e.d[5] == 2;
	unsigned etype = (unsigned)rd(&e, 0x10, 2), machine = (unsigned)rd(&e, 0x12, 2);
	unsigned shnum = (unsigned)rd(&e, 0x3c, 2), shstrndx = (unsigned)rd(&e, 0x3e, 2);
	if (shstrndx >= shnum) {
		fprintf(stderr, "sframe_check: %s: bad e_shstrndx\n", path);
		return 2;
	}
	struct shdr strs = get_shdr(&e, shstrndx);
	int sidx = -1;
	for (unsigned i = 1; i < shnum; i++) {
		struct shdr s = get_shdr(&e, i);
		if (strs.off + s.name >= e.n)
			continue;
		const char *nm = (const char *)e.d + strs.off + s.name;
		if (memchr(nm, 0, e.n - (strs.off + s.name)) && !strcmp(nm, secname)) {
			sidx = (int)i;
			break;
		}
	}
	if (sidx < 0) {
		fprintf(stderr, "sframe_check: %s: no %s section\n", path, secname);
		return 2;
	}
	struct shdr sf = get_shdr(&e, (unsigned)sidx);
	if (sf.off > e.n || sf.size > e.n - sf.off) {
		fprintf(stderr, "sframe_check: %s: %s out of file\n", path, secname);
		return 2;
	}
	/* Relocatable input: apply .rela.sframe with every section at 0. */
	unsigned nrel = 0;
	for (unsigned i = 1; i < shnum && etype == 1; i++) {
		struct shdr r = get_shdr(&e, i);
		if (r.type != 4 /* SHT_RELA */ || r.info != (uint32_t)sidx || r.entsize != 24)
			continue;
		struct shdr sym = get_shdr(&e, r.link);
		for (uint64_t k = 0; k < r.size / 24; k++) {
			size_t b = (size_t)(r.off + k * 24);
			uint64_t roff = rd(&e, b, 8), rinfo = rd(&e, b + 8, 8);
			int64_t add = (int64_t)rd(&e, b + 16, 8);
			uint32_t type = (uint32_t)rinfo, symi = (uint32_t)(rinfo >> 32);
			uint64_t sval = rd(&e, (size_t)(sym.off + (uint64_t)symi * 24 + 8), 8);
			if (!pc64_type_p(machine, type) || roff + 8 > sf.size) {
				fprintf(stderr, "sframe_check: %s: unexpected reloc type %u at %#" PRIx64 "\n",
					path, type, roff);
				return 2;
			}
			wr64(&e, (size_t)(sf.off + roff), sval + (uint64_t)add - roff);
			nrel++;
		}
	}
	uint64_t secaddr = etype == 1 ? 0 : sf.addr;

	int err = 0;
	sframe_decoder_ctx *dx = sframe_decode((const char *)e.d + sf.off, (size_t)sf.size, &err);
	if (!dx) {
		fprintf(stderr, "sframe_check: %s: sframe_decode: %s\n", path, sframe_errmsg(err));
		return 2;
	}
	int abi = sframe_decoder_get_abi_arch(dx);
	switch (abi) {
	case SFRAME_ABI_AMD64_ENDIAN_LITTLE: abi_sp = 7; abi_fp = 6; break;
	case SFRAME_ABI_AARCH64_ENDIAN_LITTLE:
	case SFRAME_ABI_AARCH64_ENDIAN_BIG: abi_sp = 31; abi_fp = 29; break;
	case SFRAME_ABI_S390X_ENDIAN_BIG: abi_sp = 15; abi_fp = 11; break;
	default: abi_sp = abi_fp = -1;
	}
	uint8_t flags = sframe_decoder_get_flags(dx);
	int fixed_ra = sframe_decoder_get_fixed_ra_offset(dx);
	uint32_t nfde = sframe_decoder_get_num_fidx(dx);
	unsigned long nfre_total = 0, nfre_hdr = 0;
	for (uint32_t i = 0; i < nfde; i++) {
		uint32_t n1 = 0, s1;
		int64_t st1;
		unsigned char a1, b1;
		uint8_t r1;
		if (!sframe_decoder_get_funcdesc_v3(dx, i, &n1, &s1, &st1, &a1, &b1, &r1))
			nfre_hdr += n1;
	}
	if (!quiet)
		printf("# sframe_check %s abi=%d flags=%#x fdes=%" PRIu32 " fres=%lu fixed_fp=%d fixed_ra=%d relocs=%u\n",
		       path, abi, flags, nfde, nfre_hdr, sframe_decoder_get_fixed_fp_offset(dx), fixed_ra, nrel);
	int do_lookup = (flags & SFRAME_F_FDE_SORTED) != 0;
	unsigned long lookups = 0, bad = 0;
	int64_t prev_end = INT64_MIN;
	for (uint32_t i = 0; i < nfde; i++) {
		uint32_t nfres = 0, fsize = 0;
		int64_t start = 0;
		unsigned char info = 0, info2 = 0;
		uint8_t rep = 0;
		if (sframe_decoder_get_funcdesc_v3(dx, i, &nfres, &fsize, &start, &info, &info2, &rep)) {
			fprintf(stderr, "sframe_check: %s: FDE %u unreadable\n", path, (unsigned)i);
			return 2;
		}
		/* 2.47 returns the raw field; with PCREL it is relative to the
		 * field itself. Make it relative to the section start, which
		 * is what sframe_find_fre takes as PC. */
		if (flags & SFRAME_F_FDE_FUNC_START_PCREL) {
			int e3 = 0;
			start += sframe_decoder_get_offsetof_fde_start_addr(dx, i, &e3);
		}
		uint64_t fstart = secaddr + (uint64_t)start;
		unsigned fde_type = SFRAME_V3_FDE_TYPE(info2);
		int mask = SFRAME_V3_FDE_PC_TYPE(info) == SFRAME_V3_FDE_PCTYPE_MASK;
		if (!quiet)
			printf("FDE %" PRIx64 " size=%" PRIx32 " fres=%" PRIu32 " type=%s pc=%s rep=%u%s%s\n",
			       fstart, fsize, nfres, fde_type == SFRAME_FDE_TYPE_FLEX ? "flex" : "default",
			       mask ? "mask" : "inc", rep, SFRAME_V3_FDE_SIGNAL_P(info) ? " signal" : "",
			       SFRAME_V3_AARCH64_FDE_PAUTH_KEY(info) ? " bkey" : "");
		sframe_frame_row_entry *fres = calloc(nfres ? nfres : 1, sizeof *fres);
		for (uint32_t j = 0; j < nfres; j++) {
			if (sframe_decoder_get_fre(dx, i, j, &fres[j])) {
				fprintf(stderr, "sframe_check: %s: FDE %u FRE %u unreadable\n", path, (unsigned)i,
					(unsigned)j);
				return 2;
			}
			struct fre_view v;
			describe(dx, &fres[j], fde_type, abi, fixed_ra, &v);
			if (!quiet)
				printf("FRE %" PRIx64 " %" PRIx32 " %s\n", fstart, fres[j].fre_start_addr, v.text);
		}
		nfre_total += nfres;
		if (do_lookup) {
			/* Each FRE covers [its start, next start); a MASK FDE repeats
			 * that pattern every rep bytes: check the first and last block. */
			uint32_t span = mask ? rep : fsize;
			uint32_t blocks = mask && rep ? fsize / rep : 1;
			for (uint32_t blk = 0; blk < blocks; blk += (blocks > 2 ? blocks - 1 : 1)) {
				for (uint32_t j = 0; j < nfres; j++) {
					uint32_t lo = fres[j].fre_start_addr;
					uint32_t hi = j + 1 < nfres ? fres[j + 1].fre_start_addr : span;
					if (hi <= lo)
						continue;
					uint32_t pcs[3] = {lo, lo + (hi - lo) / 2, hi - 1};
					for (int k = 0; k < 3; k++) {
						int64_t pc = start + (int64_t)blk * span + pcs[k];
						sframe_frame_row_entry got;
						lookups++;
						if (sframe_find_fre(dx, pc, &got) != 0 || !same_fre(&got, &fres[j])) {
							bad++;
							printf("LOOKUP-BAD pc=%" PRIx64 " want fde=%" PRIx64 " fre=%" PRIx32 "\n",
							       secaddr + (uint64_t)pc, fstart, lo);
						}
					}
				}
			}
			/* Just outside: before the function (if not covered by
			 * the previous one) and at its end must find nothing. */
			int64_t outs[2] = {start - 1, start + (int64_t)fsize};
			for (int k = 0; k < 2; k++) {
				int64_t pc = outs[k];
				if (k == 0 && pc < prev_end)
					continue;
				if (k == 1 && i + 1 < nfde) {
					uint32_t n2, s2;
					int64_t st2;
					unsigned char a, b;
					uint8_t r2;
					int e4 = 0;
					if (!sframe_decoder_get_funcdesc_v3(dx, i + 1, &n2, &s2, &st2, &a, &b, &r2) &&
					    st2 + ((flags & SFRAME_F_FDE_FUNC_START_PCREL)
							   ? sframe_decoder_get_offsetof_fde_start_addr(dx, i + 1, &e4)
							   : 0) <= pc)
						continue;
				}
				sframe_frame_row_entry got;
				lookups++;
				if (sframe_find_fre(dx, pc, &got) == 0) {
					bad++;
					printf("LOOKUP-BAD pc=%" PRIx64 " outside fde=%" PRIx64 " found fre=%" PRIx32 "\n",
					       secaddr + (uint64_t)pc, fstart, got.fre_start_addr);
				}
			}
			prev_end = start + (int64_t)fsize;
		}
		free(fres);
	}
	printf("# fdes=%" PRIu32 " fres=%lu lookups=%lu bad=%lu\n", nfde, nfre_total, lookups, bad);
	sframe_decoder_free(&dx);
	free(e.d);
	return bad ? 1 : 0;
}
