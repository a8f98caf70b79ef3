/* Text dump of a decoded .sframe in the layout of binutils 2.47
 * `objdump --sframe` (V3), so the two can be diffed line by line:
 *   CFA  sp+16 | fp+16 | r10+0 | (fp-8)        (parentheses: dereference)
 *   FP   u (unchanged) | c-16 (saved at CFA-16) | r16+0 | (fp+0)
 *   RA   f (header's fixed offset) | u | U (padding word: not saved) |
 *        c-24, with [s] when the RA is signed
 * MASK functions print raw FRE starts and "STARTPC[m]". */
#include <inttypes.h>
#include <string.h>

#include "sfr.h"
#include "sfr_spec.h"

static void reg_name(unsigned abi, uint16_t reg, char *buf, size_t len)
{
	uint16_t sp, fp;
	if (sfr_abi_regs(abi, &sp, &fp) && reg == sp)
		snprintf(buf, len, "sp");
	else if (sfr_abi_regs(abi, &sp, &fp) && reg == fp)
		snprintf(buf, len, "fp");
	else
		snprintf(buf, len, "r%u", reg);
}

static void rule_str(unsigned abi, const sfr_loc *l, char *buf, size_t len)
{
	char r[16];
	if (l->kind == SFR_LOC_UNCHANGED) {
		snprintf(buf, len, "u");
		return;
	}
	if (l->base_cfa) {
		/* Saved at CFA+off is the common case, printed bare; a value
		 * CFA+off (never written by us or gas) gets a "v". */
		snprintf(buf, len, "%sc%+" PRId64, l->deref ? "" : "v", l->off);
		return;
	}
	reg_name(abi, l->reg, r, sizeof r);
	if (l->deref)
		snprintf(buf, len, "(%s%+" PRId64 ")", r, l->off);
	else
		snprintf(buf, len, "%s%+" PRId64, r, l->off);
}

void sfr_loc_str(const sfr_loc *l, char *buf, size_t len)
{
	rule_str(0, l, buf, len);
}

static void dump_header(FILE *out, const sfr_block *b)
{
	fprintf(out, "  Header :\n\n");
	if (b->version == SFR_VERSION_3 || b->version == SFR_VERSION_2)
		fprintf(out, "    Version: SFRAME_VERSION_%u\n", b->version);
	else
		fprintf(out, "    Version: %u\n", b->version);
	if (!b->flags) {
		fprintf(out, "    Flags: NONE\n");
	} else {
		const char *sep = "    Flags: ";
		if (b->flags & SFR_FLAG_FDE_SORTED) {
			fprintf(out, "%sSFRAME_F_FDE_SORTED", sep);
			sep = ",\n           ";
		}
		if (b->flags & SFR_FLAG_FRAME_POINTER) {
			fprintf(out, "%sSFRAME_F_FRAME_POINTER", sep);
			sep = ",\n           ";
		}
		if (b->flags & SFR_FLAG_START_PCREL)
			fprintf(out, "%sSFRAME_F_FDE_FUNC_START_PCREL", sep);
		fprintf(out, "\n");
	}
	if (b->fixed_fp)
		fprintf(out, "    CFA fixed FP offset: %d\n", b->fixed_fp);
	if (b->fixed_ra)
		fprintf(out, "    CFA fixed RA offset: %d\n", b->fixed_ra);
	fprintf(out, "    Num FDEs: %u\n", b->nfdes);
	fprintf(out, "    Num FREs: %u\n", b->nfres);
}

static void dump_fre(FILE *out, const sfr_section *s, const sfr_fde *fd,
		     const sfr_fre *f)
{
	const sfr_block *b = &s->blocks[fd->block];
	bool mask = fd->pc_type == SFR_PCTYPE_MASK;
	uint64_t pc = mask ? f->start : fd->pc + f->start;
	char cfa[48], fp[48], ra[48], r[16];
	sfr_rules ru;

	fprintf(out, "\n    %016" PRIx64, pc);
	if (sfr_recover(s, fd, f, &ru, NULL) != E2S_ERR_OK) {
		fprintf(out, "  <invalid FRE>");
		return;
	}
	if (ru.outermost) {
		fprintf(out, "  RA undefined");
		return;
	}
	reg_name(b->abi, ru.cfa_reg, r, sizeof r);
	if (ru.cfa_deref)
		snprintf(cfa, sizeof cfa, "(%s%+" PRId64 ")", r, ru.cfa_off);
	else
		snprintf(cfa, sizeof cfa, "%s%+" PRId64, r, ru.cfa_off);
	rule_str(b->abi, &ru.fp, fp, sizeof fp);
	/* V2 s390x register numbers (odd words) print bare, like objdump. */
	bool v2reg = b->version == SFR_VERSION_2 && !ru.flex;
	if (v2reg && ru.fp.kind == SFR_LOC_RULE && !ru.fp.base_cfa)
		snprintf(fp, sizeof fp, "r%u", ru.fp.reg);
	/* A padding RA word (s390x word 2 = 0; flex word 2 = 0) reads "U". */
	bool ra_pad = ru.flex ? f->ndw >= 3 && f->raw[2] == 0
			      : b->abi == SFR_ABI_S390X_BE && f->ndw >= 2 &&
				        f->raw[1] == 0;
	if (ra_pad)
		snprintf(ra, sizeof ra, "U");
	else if (ru.ra.fixed)
		snprintf(ra, sizeof ra, "f");
	else if (v2reg && ru.ra.kind == SFR_LOC_RULE && !ru.ra.base_cfa)
		snprintf(ra, sizeof ra, "r%u", ru.ra.reg);
	else
		rule_str(b->abi, &ru.ra, ra, sizeof ra);
	strncat(ra, ru.mangled ? "[s]" : "   ", sizeof ra - strlen(ra) - 1);
	fprintf(out, "  %-10s%-10s%-13s", cfa, fp, ra);
}

void sfr_dump(FILE *out, const sfr_section *s)
{
	for (size_t bi = 0; bi < s->nblocks; bi++) {
		const sfr_block *b = &s->blocks[bi];
		/* One title per ELF section (a relocatable file may have one
		 * per COMDAT group); blocks only when a section holds several. */
		size_t inpart = 0, first = bi;
		for (size_t k = 0; k < s->nblocks; k++)
			if (s->blocks[k].part == b->part && inpart++ == 0)
				first = k;
		if (first == bi)
			fprintf(out, "%sContents of the SFrame section .sframe:\n",
				bi ? "\n" : "");
		/* A section of concatenated blocks (ld.lld output): objdump
		 * 2.47 prints the first block only, exactly like a one-block
		 * section, so that one gets no label and the text diffs clean;
		 * the further blocks follow, labelled. */
		if (inpart > 1 && bi != first)
			fprintf(out, "  Block %zu at offset 0x%" PRIx64 ":\n", bi - first,
				b->off - s->blocks[first].off);
		dump_header(out, b);
		fprintf(out, "\n  Function Index :\n");
		for (uint32_t i = 0; i < b->nfdes; i++) {
			const sfr_fde *fd = &s->fdes[b->fde_first + i];
			char attr[8];
			size_t na = 0;
			fprintf(out, "\n    func idx [%u]: pc = 0x%" PRIx64 ", size = %u bytes",
				i, fd->pc, fd->size);
			if ((b->abi == SFR_ABI_AARCH64_BE ||
			     b->abi == SFR_ABI_AARCH64_LE) && fd->pauth_b)
				fprintf(out, ", pauth = B key");
			if (fd->signal)
				attr[na++] = 'S';
			if (fd->fde_type == SFR_FDETYPE_FLEX)
				attr[na++] = 'F';
			attr[na] = '\0';
			if (na)
				fprintf(out, ", attr = \"%s\"", attr);
			fprintf(out, "\n    %-7s%-8s %-10s%-10s%-13s", "STARTPC",
				fd->pc_type == SFR_PCTYPE_MASK ? "[m]" : "   ",
				"CFA", "FP", "RA");
			for (uint32_t k = 0; k < fd->nfres; k++)
				dump_fre(out, s, fd, &s->fres[fd->fre_first + k]);
			fprintf(out, "\n");
		}
		if (bi + 1 < s->nblocks && s->blocks[bi + 1].part == b->part)
			fprintf(out, "\n");
	}
}
