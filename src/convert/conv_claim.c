/* Claimed ranges for the duplicate-FDE check (see conv_int.h). Once
 * every FDE has claimed, the claims are sorted by (section, start):
 * claims that overlap no other all win, and only groups of overlapping
 * ones go, in section order, through the exact first-wins rule: a treap
 * keyed by (section, start), with nodes as array indices, where a key
 * above every other goes onto the right spine in amortised O(1). */
#include "conv_int.h"

#define CL_NIL UINT32_MAX

void conv_claims_init(conv_claims *c)
{
	memset(c, 0, sizeof *c);
	c->root = c->max = CL_NIL;
	c->rng = 0x9e3779b9u;
	c->spine_ok = true;
}

void conv_claims_free(conv_claims *c)
{
	free(c->v);
	free(c->spine);
	conv_claims_init(c);
}

/* Key order: (shndx, start). */
static bool cl_less(const struct conv_claim *a, uint32_t shndx, uint64_t start)
{
	return a->shndx < shndx || (a->shndx == shndx && a->start < start);
}

int conv_claim(conv_claims *c, uint32_t shndx, uint64_t start, uint64_t end)
{
	struct conv_claim *v = c->v;
	uint32_t pred = CL_NIL, succ = CL_NIL;
	/* In address order (the usual case) the new key is above all. */
	bool above = c->max != CL_NIL && cl_less(&v[c->max], shndx, start);
	if (above)
		pred = c->max;
	/* pred: last key < (shndx, start); succ: first key >= it. */
	for (uint32_t t = above ? CL_NIL : c->root; t != CL_NIL;) {
		if (cl_less(&v[t], shndx, start)) {
			pred = t;
			t = v[t].right;
		} else {
			succ = t;
			t = v[t].left;
		}
	}
	if (pred != CL_NIL && v[pred].shndx == shndx && v[pred].end > start)
		return 0;
	if (succ != CL_NIL && v[succ].shndx == shndx && v[succ].start < end)
		return 0;
	if (c->g.n >= CL_NIL ||
	    !conv_grow((void **)&c->v, &c->g, sizeof *c->v, c->g.n + 1))
		return -1;
	v = c->v;
	uint32_t k = (uint32_t)c->g.n++;
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 17;
	c->rng ^= c->rng << 5;
	v[k] = (struct conv_claim){start, end, CL_NIL, CL_NIL, c->rng, shndx};
	if (above || c->max == CL_NIL) {
		/* cl_merge(root, k) done on the spine: the spine's suffix with
		 * priorities <= k's becomes k's left subtree. */
		if (!c->spine_ok) {
			c->gsp.n = 0;
			for (uint32_t t = c->root; t != CL_NIL; t = v[t].right) {
				if (!conv_grow((void **)&c->spine, &c->gsp,
					      sizeof *c->spine, c->gsp.n + 1))
					return -1;
				c->spine[c->gsp.n++] = t;
			}
			c->spine_ok = true;
		}
		/* Room first: popping only shrinks the spine. */
		if (!conv_grow((void **)&c->spine, &c->gsp, sizeof *c->spine,
			      c->gsp.n + 1))
			return -1;
		uint32_t below = CL_NIL;
		while (c->gsp.n && v[c->spine[c->gsp.n - 1]].prio <= v[k].prio)
			below = c->spine[--c->gsp.n];
		v[k].left = below;
		if (c->gsp.n)
			v[c->spine[c->gsp.n - 1]].right = k;
		else
			c->root = k;
		c->spine[c->gsp.n++] = k;
		c->max = k;
		return 1;
	}
	/* Insert k below the last node on its key's path whose priority is
	 * higher, and split the subtree it displaces into k's children: one
	 * walk down, no recursion. */
	uint32_t *link = &c->root;
	while (*link != CL_NIL && v[*link].prio > v[k].prio)
		link = cl_less(&v[*link], shndx, start) ? &v[*link].right
							 : &v[*link].left;
	uint32_t t = *link, *l = &v[k].left, *r = &v[k].right;
	while (t != CL_NIL) {
		if (cl_less(&v[t], shndx, start)) {
			*l = t;
			l = &v[t].right;
			t = v[t].right;
		} else {
			*r = t;
			r = &v[t].left;
			t = v[t].left;
		}
	}
	*l = *r = CL_NIL;
	*link = k;
	c->spine_ok = false;
	return 1;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The claims of one overlapping group (their indices, g[0..n)) one by
 * one in section order through the treap. false on OOM. */
static bool resolve_group(const cfi_table *t, const conv_fclaim *cl,
			  uint32_t *g, size_t n, uint8_t *lost)
{
	conv_claims tr;
	bool ok = true;
	qsort(g, n, sizeof *g, u32_cmp);
	conv_claims_init(&tr);
	for (size_t i = 0; i < n && ok; i++) {
		conv_span k = conv_claim_span(t, &cl[g[i]]);
		int r = conv_claim(&tr, k.shndx, k.start, k.end);
		ok = r >= 0;
		lost[g[i]] = r == 0;
	}
	conv_claims_free(&tr);
	return ok;
}

/* Marks of claims in a group, yet to be decided: groups next to each
 * other get different ones. */
#define CL_PENDING 2

bool conv_claims_resolve(const cfi_table *t, const conv_fclaim *cl,
			size_t n, uint8_t *lost, uint32_t *order, size_t *nwin,
			conv_spare sp)
{
	memset(lost, 0, n);
	for (size_t k = 0; k < n; k++)
		order[k] = (uint32_t)k;
	*nwin = n;
	if (!conv_sort_claims(t, cl, order, n, sp))
		return false;
	/* One pass, no calls, each claim read once: a claim starting before
	 * the reach of those before it in its section joins their group,
	 * marked; a group of one wins as it is. The table copied: a mark
	 * stored may alias it. */
	const cfi_table tab = *t;
	conv_span first = n ? conv_claim_span(&tab, &cl[order[0]])
			    : (conv_span){0, 0, 0};
	uint64_t reach = first.end;
	size_t j = 0, groups = 0;
	for (size_t k = 1; k < n; k++) {
		conv_span s = conv_claim_span(&tab, &cl[order[k]]);
		if (s.shndx == first.shndx && s.start < reach) {
			if (k - j == 1)
				lost[order[j]] = (uint8_t)(CL_PENDING + (++groups & 1));
			lost[order[k]] = lost[order[j]];
			if (s.end > reach)
				reach = s.end;
			continue;
		}
		j = k;
		first = s;
		reach = s.end;
	}
	if (!groups)
		return true;
	/* The groups decided, and the winners moved to the front of order
	 * (never past a claim still to read). */
	void *own = NULL;
	uint32_t *g = conv_spare_alloc(&sp, n * sizeof *g, &own);
	size_t nw = 0;
	bool ok = g != NULL;
	for (size_t k = 0; k < n && ok;) {
		uint8_t m = lost[order[k]];
		size_t e = k + 1;
		if (m >= CL_PENDING) {
			while (e < n && lost[order[e]] == m)
				e++;
			for (size_t q = k; q < e; q++)
				g[q - k] = order[q];
			ok = resolve_group(t, cl, g, e - k, lost);
		}
		for (; k < e; k++)
			if (!lost[order[k]])
				order[nw++] = order[k];
	}
	free(own);
	*nwin = nw;
	return ok;
}
