/* The SFrame side of the verifier: which FRE a stack tracer uses for a
 * PC, and the caller's frame it computes from it, following the spec's
 * Appendix A (get_next_frame, sframe_apply_rule) and section 3 per ABI,
 * with the errata of shared/seeds/README.md: the flexible-FDE FP control
 * word is data word 4 after an RA pair and word 3 after RA padding
 * (section 3.2), and s390x flexible CFA offsets are stored scaled like
 * default ones. The decoder (sfr_decode) is used for framing only: raw
 * info bytes and data words are interpreted here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sframe/sfr_spec.h"
#include "vf_int.h"

static int key_cmp(const sfr_section *s, uint32_t x, uint32_t y)
{
	const sfr_fde *a = &s->fdes[x], *b = &s->fdes[y];
	if (a->shndx != b->shndx)
		return a->shndx < b->shndx ? -1 : 1;
	if (a->pc != b->pc)
		return a->pc < b->pc ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Merge sort of the index (stable, no qsort context pointer needed). */
static void sort_idx(const sfr_section *s, uint32_t *v, uint32_t *tmp, size_t n)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	sort_idx(s, v, tmp, h);
	sort_idx(s, v + h, tmp, n - h);
	size_t i = 0, j = h, o = 0;
	while (i < h && j < n)
		tmp[o++] = key_cmp(s, v[j], v[i]) < 0 ? v[j++] : v[i++];
	while (i < h)
		tmp[o++] = v[i++];
	while (j < n)
		tmp[o++] = v[j++];
	memcpy(v, tmp, n * sizeof *v);
}

bool vf_index_build(const sfr_section *s, vf_index *ix)
{
	memset(ix, 0, sizeof ix[0]);
	ix->s = s;
	ix->n = s->nfdes;
	ix->order = malloc((s->nfdes ? s->nfdes : 1) * sizeof *ix->order);
	uint32_t *tmp = malloc((s->nfdes ? s->nfdes : 1) * sizeof *tmp);
	if (!ix->order || !tmp) {
		free(tmp);
		free(ix->order);
		ix->order = NULL;
		return false;
	}
	for (size_t i = 0; i < s->nfdes; i++)
		ix->order[i] = (uint32_t)i;
	sort_idx(s, ix->order, tmp, s->nfdes);
	free(tmp);
	return true;
}

void vf_index_free(vf_index *ix)
{
	free(ix->order);
	ix->order = NULL;
}

long vf_find_fde(const vf_index *ix, uint32_t shndx, uint64_t pc)
{
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const sfr_fde *m = &ix->s->fdes[ix->order[mid]];
		if (m->shndx < shndx || (m->shndx == shndx && m->pc <= pc))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	const sfr_fde *f = &ix->s->fdes[ix->order[lo - 1]];
	if (f->shndx != shndx || pc - f->pc >= f->size)
		return -1;
	return (long)ix->order[lo - 1];
}

static bool mask_p(const sfr_fde *fde)
{
	return sfr_info_pctype(fde->info) == SFR_PCTYPE_MASK;
}

long vf_find_fre(const sfr_section *s, const sfr_fde *fde, uint64_t pc)
{
	uint64_t x = pc - fde->pc;
	if (mask_p(fde)) {
		if (!fde->rep_size)
			return -1;
		x %= fde->rep_size; /* PC % REP_BLOCK_SIZE >= FRE_START */
	}
	long found = -1;
	for (uint32_t i = 0; i < fde->nfres; i++) {
		if (s->fres[fde->fre_first + i].start > x)
			break;
		found = (long)(fde->fre_first + i);
	}
	return found;
}

bool vf_fde_sane(const sfr_section *s, const sfr_fde *fde, char *why,
		 size_t len)
{
	const sfr_block *b = &s->blocks[fde->block];
	uint64_t limit = mask_p(fde) ? fde->rep_size : fde->size;
	if (mask_p(fde) && fde->rep_size == 0) {
		snprintf(why, len, "MASK FDE with block size 0");
		return false;
	}
	if (b->version >= SFR_VERSION_3 &&
	    sfr_info2_fdetype(fde->info2) > SFR_FDETYPE_FLEX) {
		snprintf(why, len, "unknown FDE type %u",
			 sfr_info2_fdetype(fde->info2));
		return false;
	}
	for (uint32_t i = 0; i < fde->nfres; i++) {
		const sfr_fre *f = &s->fres[fde->fre_first + i];
		if (i && f->start <= s->fres[fde->fre_first + i - 1].start) {
			snprintf(why, len, "FRE starts not increasing");
			return false;
		}
		if (f->start >= limit) {
			snprintf(why, len, "FRE start 0x%x outside the %s", f->start,
				 mask_p(fde) ? "repeated block" : "function");
			return false;
		}
	}
	return true;
}

/* Data word i, sign-extended from its stored width. */
static int64_t sword(const sfr_fre *f, unsigned i)
{
	uint32_t v = f->raw[i];
	switch (f->dwbytes) {
	case 1: return (int8_t)v;
	case 2: return (int16_t)v;
	default: return (int32_t)v;
	}
}

static bool bad(char *why, size_t len, const char *msg, unsigned n)
{
	snprintf(why, len, msg, n);
	return false;
}

/* sframe_apply_rule for an RA/FP pair (control word c, offset off). */
static bool apply_rule(uint32_t c, int64_t off, const vf_val *cfa,
		       vf_val *out, char *why, size_t len)
{
	if (sfr_ctl_unused_p(c))
		return bad(why, len, "control word 0x%x uses the unused bit", c);
	vf_val base = sfr_ctl_reg_p(c) ? vf_reg(sfr_ctl_regnum(c)) : *cfa;
	vf_val loc = vf_add(base, off);
	*out = sfr_ctl_deref_p(c) ? vf_deref(loc) : loc;
	return true;
}

/* The RA a row recovers when it gives no RA word. */
static vf_val ra_default(const vf_abi *a, const sfr_block *b, const vf_val *cfa)
{
	if (b->fixed_ra != 0) /* SFRAME_CFA_FIXED_RA_INVALID is 0 */
		return vf_deref(vf_add(*cfa, b->fixed_ra));
	/* No fixed slot: RA still in its register (section 3.1.3, s390x;
	 * AArch64 readers use LR the same way for topmost frames). */
	return vf_reg(a->ra);
}

static bool abi_matches(const vf_abi *a, unsigned sabi)
{
	switch (sabi) {
	case SFR_ABI_AMD64_LE: return a->abi == ABI_AMD64;
	case SFR_ABI_AARCH64_BE:
	case SFR_ABI_AARCH64_LE: return a->abi == ABI_AARCH64;
	case SFR_ABI_S390X_BE: return a->abi == ABI_S390X;
	default: return false;
	}
}

/* Default FDE (section 3.1 and Appendix A get_next_frame): CFA from SP
 * or FP; then, in this order, an RA word unless the header fixes RA, and
 * an FP word unless the header fixes FP. */
static bool default_frame(const vf_abi *a, const sfr_block *b,
			  const sfr_fre *fre, vf_frame *f, char *why,
			  size_t len)
{
	bool s390 = a->abi == ABI_S390X;
	unsigned n = fre->ndw, i = 1;
	bool base_fp = sfr_fre_cfa_fp_p(fre->info);
	int64_t off = sword(fre, 0);
	if (s390)
		off = sfr_s390x_cfa_off(off);
	f->cfa = vf_add(vf_reg(base_fp ? a->fp : a->sp), off);
	f->sp = vf_add(f->cfa, a->sp_val_off);
	f->pc = ra_default(a, b, &f->cfa);
	f->fp = vf_reg(a->fp);
	bool v2 = b->version == SFR_VERSION_2;
	if (b->fixed_ra == 0 && i < n) {
		int64_t w = sword(fre, i++);
		if (w == SFR_RA_OFFSET_INVALID) {
			/* s390x: "RA not saved"; other readers (binutils 2.47
			 * objdump) take 0 as invalid as well: no defined
			 * value on AArch64. */
			if (!s390)
				return bad(why, len, "RA data word %u is 0 "
					   "(SFRAME_FRE_RA_OFFSET_INVALID)", 1);
		} else if (s390 && v2 && sfr_v2_s390x_reg_p(w)) {
			f->pc = vf_reg((unsigned)sfr_v2_s390x_regnum(w));
		} else {
			f->pc = vf_deref(vf_add(f->cfa, w));
		}
	}
	if (b->fixed_fp != 0) {
		f->fp = vf_deref(vf_add(f->cfa, b->fixed_fp));
	} else if (i < n) {
		int64_t w = sword(fre, i++);
		if (s390 && v2 && sfr_v2_s390x_reg_p(w))
			f->fp = vf_reg((unsigned)sfr_v2_s390x_regnum(w));
		else
			f->fp = vf_deref(vf_add(f->cfa, w));
	}
	if (i != n)
		return bad(why, len, "%u data words where the layout has fewer", n);
	return true;
}

/* Flexible FDE (section 3.2, Appendix A). */
static bool flex_frame(const vf_abi *a, const sfr_block *b,
		       const sfr_fre *fre, vf_frame *f, char *why, size_t len)
{
	unsigned n = fre->ndw, i = 2;
	if (n < 2)
		return bad(why, len, "flexible FRE with %u data words", n);
	uint32_t c = fre->raw[0];
	if (!sfr_ctl_reg_p(c) || sfr_ctl_unused_p(c))
		return bad(why, len, "CFA control word 0x%x without a base register", c);
	int64_t off = sword(fre, 1);
	if (a->abi == ABI_S390X) /* stored like default FDEs (interop) */
		off = sfr_s390x_cfa_off(off);
	vf_val cfa = vf_add(vf_reg(sfr_ctl_regnum(c)), off);
	f->cfa = sfr_ctl_deref_p(c) ? vf_deref(cfa) : cfa;
	/* next_frame->sp: the ABI's SP-from-CFA relation (section 3.1.3
	 * gives s390x's as an ABI fact; AMD64's is 0). */
	f->sp = vf_add(f->cfa, a->sp_val_off);
	f->pc = ra_default(a, b, &f->cfa);
	f->fp = vf_reg(a->fp);
	if (i < n) {
		c = fre->raw[i];
		if (c == 0) {
			i++; /* padding: RA keeps its default */
		} else {
			if (i + 1 >= n)
				return bad(why, len, "RA control word without offset (%u words)", n);
			if (!apply_rule(c, sword(fre, i + 1), &f->cfa, &f->pc, why, len))
				return false;
			i += 2;
		}
	}
	if (i < n) {
		c = fre->raw[i];
		if (c == 0)
			return bad(why, len, "FP control word 0 followed by more words (%u)", n);
		if (i + 1 >= n)
			return bad(why, len, "FP control word without offset (%u words)", n);
		if (!apply_rule(c, sword(fre, i + 1), &f->cfa, &f->fp, why, len))
			return false;
		i += 2;
	}
	if (i != n)
		return bad(why, len, "%u data words where the layout has fewer", n);
	return true;
}

bool vf_sframe_frame(const vf_abi *a, const sfr_section *s,
		     const sfr_fde *fde, const sfr_fre *fre, vf_frame *f,
		     char *why, size_t len)
{
	const sfr_block *b = &s->blocks[fde->block];
	memset(f, 0, sizeof *f);
	if (!abi_matches(a, b->abi))
		return bad(why, len, "SFrame ABI/arch %u does not match the file", b->abi);
	bool v3 = b->version >= SFR_VERSION_3;
	f->signal = v3 && sfr_info_signal_p(fde->info);
	if (fre->ndw == 0) {
		f->outermost = true; /* RA undefined (spec 2.4.1) */
		return true;
	}
	if (sfr_fre_mangled_p(fre->info))
		f->sign = a->abi != ABI_AARCH64 ? SIGN_UNKNOWN
			  : sfr_info_pauth_b_p(fde->info) ? SIGN_B : SIGN_A;
	unsigned type = v3 ? sfr_info2_fdetype(fde->info2) : SFR_FDETYPE_DEFAULT;
	if (type == SFR_FDETYPE_FLEX)
		return flex_frame(a, b, fre, f, why, len);
	if (type != SFR_FDETYPE_DEFAULT)
		return bad(why, len, "unknown FDE type %u", type);
	return default_frame(a, b, fre, f, why, len);
}
