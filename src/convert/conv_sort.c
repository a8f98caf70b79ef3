/* Orders by (section, start): the claims' (conv_claim.c, to find
 * overlaps) and from them the functions', as the encoder writes them. */
#include <stdlib.h>
#include <string.h>

#include "conv_int.h"

/* The claims sorted and their FDEs. */
typedef struct {
	const cfi_table *t;
	const conv_fclaim *cl;
} claims_t;

/* A claim's key, read from its FDE once per visit: compared in locals,
 * not chased again for every comparison. */
typedef struct {
	uint64_t start;
	uint32_t shndx, ix;
} skey;

static inline skey key_of(const claims_t *cl, uint32_t i)
{
	conv_span s = conv_claim_span(cl->t, &cl->cl[i]);
	return (skey){s.start, s.shndx, i};
}

/* (shndx, start, index) order. */
static inline bool skey_less(skey x, skey y)
{
	if (x.shndx != y.shndx)
		return x.shndx < y.shndx;
	if (x.start != y.start)
		return x.start < y.start;
	return x.ix < y.ix;
}

static inline bool key_less(const claims_t *cl, uint32_t a, uint32_t b)
{
	return skey_less(key_of(cl, a), key_of(cl, b));
}

/* Deal ix[0..n) out to at most SORT_LANES ascending lanes in tmp, first
 * fit, and merge them back into ix; false if more lanes would be needed
 * (ix unchanged). The usual disorder is a few ascending sequences
 * interleaved: a link lays out functions in input order but their cold
 * parts (and startup code) elsewhere (libLLVM-14: 595 runs, 3 lanes).
 * Each lane reads the claims (and their FDEs) in ascending order. */
#define SORT_LANES 8
static bool merge_lanes(const claims_t *cls, uint32_t *ix, size_t n,
			uint32_t *tmp, uint8_t *lane)
{
	/* The table copied: a lane byte stored may alias it, and its
	 * arrays would be read again for every claim. */
	const cfi_table tab = *cls->t;
	const claims_t cs = {&tab, cls->cl}, *cl = &cs;
	size_t cnt[SORT_LANES] = {0}, at[SORT_LANES] = {0}, end[SORT_LANES] = {0};
	skey tail[SORT_LANES];
	unsigned nl = 0;
	for (size_t i = 0; i < n; i++) {
		skey k = key_of(cl, ix[i]);
		unsigned l = 0;
		while (l < nl && skey_less(k, tail[l]))
			l++;
		if (l == nl) {
			if (nl == SORT_LANES)
				return false;
			nl++;
		}
		tail[l] = k;
		lane[i] = (uint8_t)l;
		cnt[l]++;
	}
	for (unsigned l = 0; l < nl; l++) {
		at[l] = l ? end[l - 1] : 0;
		end[l] = at[l] + cnt[l];
	}
	size_t fill[SORT_LANES];
	memcpy(fill, at, sizeof fill);
	for (size_t i = 0; i < n; i++)
		tmp[fill[lane[i]]++] = ix[i];
	/* The smallest head taken while it stays below the next smallest:
	 * a run at a time, one comparison per claim. */
	skey head[SORT_LANES];
	for (unsigned l = 0; l < nl; l++)
		head[l] = key_of(cl, tmp[at[l]]);
	size_t o = 0;
	for (;;) {
		unsigned best = SORT_LANES, next = SORT_LANES;
		for (unsigned l = 0; l < nl; l++) {
			if (at[l] == end[l])
				continue;
			if (best == SORT_LANES || skey_less(head[l], head[best])) {
				next = best;
				best = l;
			} else if (next == SORT_LANES ||
				   skey_less(head[l], head[next]))
				next = l;
		}
		if (next == SORT_LANES) {
			if (best != SORT_LANES)
				memcpy(ix + o, tmp + at[best],
				       (end[best] - at[best]) * sizeof *ix);
			return true;
		}
		do {
			ix[o++] = head[best].ix;
			if (++at[best] == end[best])
				break;
			head[best] = key_of(cl, tmp[at[best]]);
		} while (skey_less(head[best], head[next]));
	}
}

/* By merging lanes where a few hold the order (the caller found it out
 * of order: no pass to check first), else by merging the ascending runs
 * found. Indices, not copies of the keys: 4 bytes per
 * claim of scratch, not 32. Keys never tie (the index), so the order
 * does not depend on the method. */
bool conv_sort_claims(const cfi_table *t, const conv_fclaim *claims,
		      uint32_t *ix, size_t n, conv_spare sp)
{
	const claims_t cs = {t, claims}, *cl = &cs;
	size_t nruns = 1;
	if (n < 2)
		return true;
	void *own_tmp = NULL, *own_lane = NULL;
	uint32_t *tmp = conv_spare_alloc(&sp, n * sizeof *tmp, &own_tmp);
	uint8_t *lane = conv_spare_alloc(&sp, n, &own_lane);
	size_t *run = NULL;
	bool ok = tmp && lane;
	if (ok && !merge_lanes(cl, ix, n, tmp, lane)) {
		for (size_t i = 1; i < n; i++)
			nruns += key_less(cl, ix[i], ix[i - 1]);
		ok = (run = malloc((nruns + 1) * sizeof *run)) != NULL;
		size_t k = 0;
		if (ok)
			run[k++] = 0;
		for (size_t i = 1; i < n && ok; i++)
			if (key_less(cl, ix[i], ix[i - 1]))
				run[k++] = i;
		if (ok)
			run[k] = n;
	}
	uint32_t *src = ix, *dst = tmp;
	while (ok && nruns > 1) {
		size_t m = 0;
		for (size_t r = 0; r < nruns; r += 2) {
			size_t lo = run[r], mid = run[r + 1 < nruns ? r + 1 : nruns];
			size_t hi = run[r + 2 < nruns ? r + 2 : nruns];
			size_t a = lo, b = mid, o = lo;
			while (a < mid && b < hi)
				dst[o++] = key_less(cl, src[b], src[a]) ? src[b++] : src[a++];
			while (a < mid)
				dst[o++] = src[a++];
			while (b < hi)
				dst[o++] = src[b++];
			run[m++] = lo;
		}
		run[m] = n;
		nruns = m;
		uint32_t *sw = src;
		src = dst;
		dst = sw;
	}
	if (ok && src != ix)
		memcpy(ix, src, n * sizeof *ix);
	free(run);
	free(own_tmp);
	free(own_lane);
	return ok;
}

/* v[i] = the old v[from[i]], in place: each cycle of the permutation
 * through one spare (no copy of the whole array); a slot filled gets
 * from[.] = its own index. */
void conv_permute_funcs(sfe_func *v, size_t n, uint32_t *from)
{
	for (size_t i = 0; i < n; i++) {
		if (from[i] == i)
			continue;
		sfe_func spare = v[i];
		size_t j = i;
		for (;;) {
			size_t f = from[j];
			from[j] = (uint32_t)j;
			if (f == i) {
				v[j] = spare;
				break;
			}
			v[j] = v[f];
			j = f;
		}
	}
}
