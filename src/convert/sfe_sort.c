/* The order of a converted set's functions: by (section, start), as the
 * encoder writes them (sfe_sort_funcs, sfe_int.h). */
#include <stdlib.h>
#include <string.h>

#include "sfe_int.h"

static int func_cmp(const void *a, const void *b)
{
	const sfe_func *x = a, *y = b;
	if (x->reloc.shndx != y->reloc.shndx)
		return x->reloc.shndx < y->reloc.shndx ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* What sfe_sort_funcs orders by, and where the function is. */
typedef struct {
	uint64_t start;
	uint32_t shndx, idx;
} func_key;

static bool key_less(const func_key *x, const func_key *y)
{
	return x->shndx < y->shndx || (x->shndx == y->shndx && x->start < y->start);
}

/* Deal key[0..n) out to at most SORT_LANES ascending lanes, first fit,
 * and merge them into out; false if more lanes would be needed. The
 * usual disorder is a few ascending sequences interleaved: a link lays
 * out functions in input order but their cold parts (and startup code)
 * elsewhere (libLLVM-14: 595 runs, 3 lanes). */
#define SORT_LANES 8
static bool merge_lanes(const func_key *key, size_t n, func_key *lanes,
			func_key *out)
{
	size_t cnt[SORT_LANES] = {0}, at[SORT_LANES] = {0}, end[SORT_LANES] = {0};
	func_key tail[SORT_LANES];
	unsigned nl = 0;
	uint8_t *lane = malloc(n);
	if (!lane)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned l = 0;
		while (l < nl && key_less(&key[i], &tail[l]))
			l++;
		if (l == nl) {
			if (nl == SORT_LANES) {
				free(lane);
				return false;
			}
			nl++;
		}
		tail[l] = key[i];
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
		lanes[fill[lane[i]]++] = key[i];
	free(lane);
	for (size_t o = 0; o < n; o++) {
		unsigned best = SORT_LANES;
		for (unsigned l = 0; l < nl; l++)
			if (at[l] < end[l] &&
			    (best == SORT_LANES || key_less(&lanes[at[l]], &lanes[at[best]])))
				best = l;
		out[o] = lanes[at[best]++];
	}
	return true;
}

/* Sort funcs by (shndx, start), on small keys, then move each function
 * once (in place): by merge_lanes where a few lanes hold the order, else
 * by merging the ascending runs found; qsort is the fallback when memory
 * is short.
 * Keys never tie (sfe_int.h), so the order is the same each way. */
void sfe_sort_funcs(sfe_set *s)
{
	size_t n = s->nfuncs, nruns = 1;
	sfe_func *v = s->funcs;
	for (size_t i = 1; i < n; i++)
		nruns += func_cmp(&v[i], &v[i - 1]) < 0;
	if (nruns == 1)
		return;
	size_t *run = malloc((nruns + 1) * sizeof *run);
	func_key *key = e2s_alloc_big(3 * n * sizeof *key);
	if (!run || !key) {
		free(run);
		free(key);
		qsort(v, n, sizeof *v, func_cmp);
		return;
	}
	size_t k = 0;
	run[k++] = 0;
	for (size_t i = 0; i < n; i++) {
		key[i] = (func_key){v[i].start, v[i].reloc.shndx, (uint32_t)i};
		if (i > 0 && key_less(&key[i], &key[i - 1]))
			run[k++] = i;
	}
	run[k] = n;
	func_key *src = key, *dst = key + n;
	if (merge_lanes(key, n, key + 2 * n, key + n)) {
		src = key + n;
		nruns = 1;
	}
	while (nruns > 1) {
		size_t m = 0;
		for (size_t r = 0; r < nruns; r += 2) {
			size_t lo = run[r], mid = run[r + 1 < nruns ? r + 1 : nruns];
			size_t hi = run[r + 2 < nruns ? r + 2 : nruns];
			size_t a = lo, b = mid, o = lo;
			while (a < mid && b < hi)
				dst[o++] = key_less(&src[b], &src[a]) ? src[b++] : src[a++];
			while (a < mid)
				dst[o++] = src[a++];
			while (b < hi)
				dst[o++] = src[b++];
			run[m++] = lo;
		}
		run[m] = n;
		nruns = m;
		func_key *t = src;
		src = dst;
		dst = t;
	}
	/* v[i] = the old v[src[i].idx], in place: each cycle of the
	 * permutation through one spare (no copy of the whole array); a
	 * slot filled gets src[.].idx = its own index. */
	for (size_t i = 0; i < n; i++) {
		if (src[i].idx == i)
			continue;
		sfe_func spare = v[i];
		size_t j = i;
		for (;;) {
			size_t from = src[j].idx;
			src[j].idx = (uint32_t)j;
			if (from == i) {
				v[j] = spare;
				break;
			}
			v[j] = v[from];
			j = from;
		}
	}
	free(run);
	free(key);
}
