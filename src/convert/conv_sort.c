/* Orders by (section, start): the claims' (conv_claim.c, to find
 * overlaps) and from them the functions', as the encoder writes them. */
#include <stdlib.h>
#include <string.h>

#include "conv_int.h"

static bool key_less(const conv_key *x, const conv_key *y)
{
	if (x->shndx != y->shndx)
		return x->shndx < y->shndx;
	if (x->start != y->start)
		return x->start < y->start;
	return x->idx < y->idx;
}

static int key_cmp(const void *a, const void *b)
{
	return key_less(a, b) ? -1 : key_less(b, a) ? 1 : 0;
}

/* Deal key[0..n) out to at most SORT_LANES ascending lanes, first fit,
 * and merge them into out; false if more lanes would be needed. The
 * usual disorder is a few ascending sequences interleaved: a link lays
 * out functions in input order but their cold parts (and startup code)
 * elsewhere (libLLVM-14: 595 runs, 3 lanes). */
#define SORT_LANES 8
static bool merge_lanes(const conv_key *key, size_t n, conv_key *lanes,
			conv_key *out)
{
	size_t cnt[SORT_LANES] = {0}, at[SORT_LANES] = {0}, end[SORT_LANES] = {0};
	conv_key tail[SORT_LANES];
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

/* By merging lanes where a few hold the order, else by merging the
 * ascending runs found; qsort where memory is short. Keys never tie
 * (idx), so the order does not depend on the method. */
void conv_sort_keys(conv_key *key, size_t n)
{
	size_t nruns = 1;
	for (size_t i = 1; i < n; i++)
		nruns += key_less(&key[i], &key[i - 1]);
	if (nruns == 1)
		return;
	size_t *run = malloc((nruns + 1) * sizeof *run);
	conv_key *tmp = e2s_alloc_big(2 * n * sizeof *tmp);
	if (!run || !tmp) {
		free(run);
		free(tmp);
		qsort(key, n, sizeof *key, key_cmp);
		return;
	}
	conv_key *src = key, *dst = tmp;
	if (merge_lanes(key, n, tmp + n, tmp)) {
		src = tmp;
		nruns = 1;
	} else {
		size_t k = 0;
		run[k++] = 0;
		for (size_t i = 1; i < n; i++)
			if (key_less(&key[i], &key[i - 1]))
				run[k++] = i;
		run[k] = n;
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
		conv_key *t = src;
		src = dst;
		dst = t;
	}
	if (src != key)
		memcpy(key, src, n * sizeof *key);
	free(run);
	free(tmp);
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
