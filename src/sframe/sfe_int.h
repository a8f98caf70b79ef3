/* What the section layout (sfe_layout.c) and the writer (sfe_encode.c)
 * share: the selection of functions, a function's info byte, the
 * layout's offsets. Internal to src/sframe. */
#ifndef E2S_SFE_INT_H
#define E2S_SFE_INT_H

#include "sfe.h"
#include "sframe_fmt.h"

static inline size_t sfe_nselected(const sfe_set *s, const sfe_encode_opts *o)
{
	return o && o->only ? o->nonly : s->nfuncs;
}

static inline const sfe_func *sfe_selected(const sfe_set *s, const sfe_encode_opts *o,
					   size_t i)
{
	if (o && o->only)
		return o->only[i] < s->nfuncs ? &s->funcs[o->only[i]] : NULL;
	return &s->funcs[i];
}

static inline uint8_t sfe_func_info(const sfe_func *fn, unsigned ft, bool v2)
{
	/* V2's info byte is V3's without the signal bit (sfe_restrict
	 * removed signal frames). */
	return (uint8_t)SF_FUNC_INFO(!v2 && fn->signal, fn->pauth_b, fn->pc_type, ft);
}

/* The layout of the FRE sub-section (sfe_plan_build). */
typedef struct {
	uint32_t *off;     /* per selected function: its start_fre_off; its
	                    * bytes are stored there iff that is the length
	                    * of the FRE data before it (a shared one points
	                    * before: sfe_plan_build) */
	uint64_t fre_len;  /* FRE sub-section size */
	uint64_t nfres;    /* FREs referenced by the FDEs */
	uint64_t unshared; /* FRE sub-section size without sharing */
	uint64_t shared;   /* functions reusing an earlier copy */
} sfe_plan_data;

/* A layout made for a caller (sfe_plan_make). */
struct sfe_plan {
	sfe_plan_data p;
	const sfe_set *s;   /* what it was made for */
	size_t n;
	uint64_t bytes;
};

static inline uint64_t sfe_total_size(size_t n, uint64_t fre_len, bool v2)
{
	return SF_HEADER_SIZE + (uint64_t)n * (v2 ? SF_V2_FDE_SIZE : SF_FDE_IDX_SIZE) +
	       fre_len;
}

/* Offsets of every selected function's FRE data in the FRE sub-section,
 * in index order (sfe_layout.c). */
e2s_err sfe_plan_build(const sfe_set *s, const sfe_encode_opts *o,
		       sfe_plan_data *p, e2s_diag *diag);
void sfe_plan_data_free(sfe_plan_data *p);

#endif
