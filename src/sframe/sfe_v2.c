/* SFrame V2's restrictions on a function converted for it (sfe_v2_fit,
 * sfe.h): what V2 cannot say is refused, what it says otherwise is
 * rewritten in place. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "sfe.h"
#include "sframe_fmt.h"

/* A V2 s390x RA/FP word from a flex pair: stack slot (CFA-based deref,
 * even offset) or register (non-deref, offset 0). */
static bool v2_regnum_word(int32_t ctrl, int32_t off, int32_t *w)
{
	if (!SF_FLEX_CTRL_REG_P(ctrl) && SF_FLEX_CTRL_DEREF_P(ctrl) &&
	    off != SF_FRE_RA_OFFSET_INVALID && !SF_V2_S390X_OFFSET_IS_REGNUM(off)) {
		*w = off;
		return true;
	}
	if (SF_FLEX_CTRL_REG_P(ctrl) && !SF_FLEX_CTRL_DEREF_P(ctrl) && off == 0 &&
	    SF_FLEX_CTRL_REGNUM(ctrl) < (1u << 14)) {
		*w = SF_V2_S390X_OFFSET_ENCODE_REGNUM(SF_FLEX_CTRL_REGNUM(ctrl));
		return true;
	}
	return false;
}

/* Rewrite one flex FRE as a V2 default one with register-number words
 * (s390x); false if impossible. */
static bool v2_regnum_fre(const abi_desc *r, const sfe_fre *f, sfe_fre *out)
{
	*out = *f;
	if (f->ndw == 0)
		return true;
	unsigned c0 = (unsigned)f->dw[0], reg = SF_FLEX_CTRL_REGNUM(c0);
	if (!SF_FLEX_CTRL_REG_P(c0) || SF_FLEX_CTRL_DEREF_P(c0) ||
	    (reg != r->sp && reg != r->fp))
		return false;
	out->base_fp = reg == r->fp;
	memset(out->dw, 0, sizeof out->dw); /* words past ndw stay 0 */
	out->dw[0] = f->dw[1]; /* already scaled like a default CFA word */
	int32_t ra = SF_FRE_RA_OFFSET_INVALID, fp;
	unsigned fpi;
	out->ndw = 1;
	if (f->ndw >= 3 && f->dw[2] != 0) {
		if (f->ndw < 4 || !v2_regnum_word(f->dw[2], f->dw[3], &ra))
			return false;
		out->ndw = 2;
		fpi = 4;
	} else {
		fpi = 3;
	}
	out->dw[1] = ra;
	if (f->ndw > fpi) {
		if (f->ndw < fpi + 2 || !v2_regnum_word(f->dw[fpi], f->dw[fpi + 1], &fp))
			return false;
		out->dw[2] = fp;
		out->ndw = 3;
	}
	return true;
}

/* V2 outermost frames (RA undefined) as the absence of an FRE, not as an
 * FRE without data words (V2 erratum 2): glibc's V2 walker (2.42+,
 * backtrace()) reads the CFA offset of every FRE it finds, fails on such
 * an FRE and discards the whole trace for the DWARF unwinder; where it
 * finds no FRE it ends the trace if the frame pointer is 0, as _start and
 * the clone child set it. So a wholly outermost function keeps its FDE
 * with no FREs (V3's outermost marker too, spec 1.2), a leading
 * outermost run becomes a later first FRE, a trailing one a shorter FDE.
 * An outermost FRE between two others would need a hole V2 cannot make:
 * false. */
static bool v2_outermost(sfe_func *fn, sfe_fre *fres)
{
	uint32_t a = 0, b = fn->fre_count;
	while (a < b && fres[a].ndw == 0)
		a++;
	while (b > a && fres[b - 1].ndw == 0)
		b--;
	for (uint32_t k = a; k < b; k++)
		if (fres[k].ndw == 0)
			return false;
	if (a == 0 && b == fn->fre_count)
		return true;
	if (fn->pc_type == SF_FDE_PCTYPE_MASK)
		return false; /* FRE starts repeat per block: no trimming */
	if (b > a && b < fn->fre_count)
		fn->size = fres[b].start;
	memmove(fres, fres + a, (size_t)(b - a) * sizeof *fres);
	fn->fre_count = b - a;
	return true;
}

bool sfe_v2_fit(const abi_desc *abi, sfe_func *fn, sfe_fre *fres)
{
	if (fn->signal || !v2_outermost(fn, fres))
		return false;
	for (uint32_t k = 0; k < fn->fre_count; k++) {
		sfe_fre *f = &fres[k], tmp;
		if (fn->fde_type == SF_FDE_TYPE_FLEX) {
			if (!abi->v2_regnum_words || !v2_regnum_fre(abi, f, &tmp))
				return false;
			*f = tmp;
		} else if (abi->v2_regnum_words) {
			/* an odd stack offset would read as a register */
			for (unsigned i = 1; i < f->ndw; i++)
				if (SF_V2_S390X_OFFSET_IS_REGNUM(f->dw[i]))
					return false;
		}
	}
	fn->fde_type = SF_FDE_TYPE_DEFAULT;
	return true;
}

