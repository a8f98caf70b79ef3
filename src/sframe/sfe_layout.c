/* The SFrame section's layout (spec section 2): where each selected
 * function's FRE data goes in the FRE sub-section, with sharing (a
 * function whose bytes equal an earlier function's points at that copy,
 * and with share_runs one whose bytes equal any run laid out before
 * points into it), and the section's size. sfe_encode.c writes it. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sfe_int.h"
#include "../common/hash.h"
#include "../common/mem.h"

/* The stored copies: a slot holds the hash's high bits and the index of
 * the function whose bytes were stored (+1; 0: free). Eight bytes a slot
 * and about 1.5 slots a function: the table is touched at random, so its
 * size is pages faulted in. */
typedef struct {
	uint64_t *slot;
	size_t cap;
} table_t;

static uint64_t slot_of(uint64_t h, size_t idx)
{
	return (h & 0xffffffff00000000u) | (uint64_t)(idx + 1);
}

void sfe_plan_data_free(sfe_plan_data *p)
{
	free(p->off);
	memset(p, 0, sizeof *p);
}

/* V2 keeps count, info and repetition size in the FDE, not in the
 * bytes: equal bytes with different ones must not share. */
static uint32_t share_key(const sfe_func *fn, bool v2)
{
	if (!v2)
		return 0;
	return (uint32_t)(fn->fre_count << 16 |
			  (uint32_t)sfe_func_info(fn, fn->fre_type, true) << 8 |
			  (fn->pc_type == SF_FDE_PCTYPE_MASK ? fn->rep_size : 0)) + 1;
}

/* The slot of the stored copy equal to fn's bytes (same key), or a free
 * one. Slots hold only functions plan_loop checked. */
static E2S_ALWAYS_INLINE size_t find_copy(const sfe_set *s, const uint32_t *only,
					  const table_t *tab, const sfe_func *fn,
					  uint32_t key, uint64_t h, bool v2)
{
	size_t k = (size_t)(((uint64_t)(uint32_t)h * tab->cap) >> 32);
	for (uint64_t v; (v = tab->slot[k]) != 0;
	     k = k + 1 == tab->cap ? 0 : k + 1) {
		if ((v ^ h) >> 32)
			continue;
		size_t j = (size_t)(uint32_t)v - 1;
		const sfe_func *t = &s->funcs[only ? only[j] : j];
		if (t->enc_len == fn->enc_len && share_key(t, v2) == key &&
		    memcmp(s->enc + t->enc_off, s->enc + fn->enc_off,
			   t->enc_len) == 0)
			break;
	}
	return k;
}

bool sfe_share_p(const sfe_set *s, const sfe_encode_opts *o)
{
	if (!o || o->share_fres == SFE_SHARE_DEFAULT)
		return !s->big_endian;
	return o->share_fres > 0;
}

/* Runs inside the FRE data laid out so far (share_runs): every byte
 * position of it, chained by the hash of the RUN_KEY bytes starting
 * there, newest first. A function's bytes may equal the tail of one
 * stored copy and the head of the next, or any run inside one: a reader
 * takes the bytes from start_fre_off on, whatever wrote them. */
#define RUN_KEY 4
#define RUN_TRIES 64 /* candidates compared per function, newest first */
typedef struct {
	uint8_t *data;  /* the FRE sub-section so far */
	size_t len, cap;
	int32_t *head;  /* per hash bucket: newest position, -1 none */
	int32_t *next;  /* per position: the older one in its bucket */
	size_t nhead;
} runs_t;

static uint32_t run_hash(const uint8_t *p, size_t nhead)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return (v * 0x9e3779b1u) >> 7 & (uint32_t)(nhead - 1);
}

/* Append n bytes and index the positions whose key is now complete. */
static bool runs_add(runs_t *r, const uint8_t *p, size_t n)
{
	if (r->len + n > r->cap)
		return false; /* cap is the unshared total: never reached */
	memcpy(r->data + r->len, p, n);
	size_t from = r->len >= RUN_KEY - 1 ? r->len - (RUN_KEY - 1) : 0;
	r->len += n;
	for (size_t q = from; q + RUN_KEY <= r->len; q++) {
		uint32_t h = run_hash(r->data + q, r->nhead);
		r->next[q] = r->head[h];
		r->head[h] = (int32_t)q;
	}
	return true;
}

/* Offset of a run equal to p[0..n) in the data so far, or -1. */
static int64_t runs_find(const runs_t *r, const uint8_t *p, size_t n)
{
	if (n < RUN_KEY)
		return -1;
	int32_t q = r->head[run_hash(p, r->nhead)];
	for (int k = 0; q >= 0 && k < RUN_TRIES; k++, q = r->next[q])
		if ((size_t)q + n <= r->len && memcmp(r->data + q, p, n) == 0)
			return q;
	return -1;
}

static void runs_free(runs_t *r)
{
	free(r->data);
	free(r->head);
	free(r->next);
	memset(r, 0, sizeof *r);
}

static bool runs_init(runs_t *r, const sfe_set *s, const sfe_encode_opts *o)
{
	size_t n = sfe_nselected(s, o), total = 0;
	memset(r, 0, sizeof *r);
	for (size_t i = 0; i < n; i++)
		total += sfe_selected(s, o, i)->enc_len;
	if (total > INT32_MAX)
		return true; /* positions are int32_t: no run sharing */
	r->nhead = 1024;
	while (r->nhead < total)
		r->nhead *= 2;
	r->cap = total;
	r->data = malloc(total ? total : 1);
	r->head = malloc(r->nhead * sizeof *r->head);
	r->next = malloc((total ? total : 1) * sizeof *r->next);
	if (!r->data || !r->head || !r->next) {
		runs_free(r);
		return false;
	}
	memset(r->head, 0xff, r->nhead * sizeof *r->head);
	return true;
}

/* Functions whose FRE data is at the same place (a conversion stores a
 * program seen before once: conv_memo_*) need no hash or compare: the
 * first one's offset is theirs. A cache apart from the sharing rule,
 * off with -DEH2S_NO_CACHE: per 2^shift bytes of the set's data, the
 * function (+1) whose data starts there. Non-empty V3 data is at least
 * SFE_ATTR_BYTES (> 4) long, V2 data 2 (start and info byte), so copies
 * written one after another never meet in one entry; data that does
 * (overlapping, or another length or key) takes the general way. */
typedef struct {
	uint32_t *at; /* NULL: no shortcut */
} same_t;

static unsigned same_shift(bool v2)
{
	return v2 ? 1 : 2;
}

/* The table in the caller's scratch after the sharing table's bytes
 * (used), where it has room: memory already touched, so that the
 * shortcut costs no fresh page (one per 4 KiB of FRE data: more, on a
 * large file, than the hashing it saves). None otherwise. */
static void same_init(same_t *m, const sfe_set *s, const sfe_encode_opts *o,
		      size_t used, size_t n, bool share)
{
	m->at = NULL;
#ifndef EH2S_NO_CACHE
	size_t ents = (s->enc_len >> same_shift(s->version == SF_VERSION_2)) + 1;
	used += -used & 7;
	if (share && n < UINT32_MAX && o && o->scratch &&
	    o->scratch_bytes >= used &&
	    (o->scratch_bytes - used) / sizeof *m->at >= ents) {
		m->at = (uint32_t *)((unsigned char *)o->scratch + used);
		memset(m->at, 0, ents * sizeof *m->at);
	}
#else
	(void)s;
	(void)o;
	(void)used;
	(void)n;
	(void)share;
#endif
}

/* The earlier function (+1) whose data is fn's at the same place with
 * the same key, or 0 (then fn is recorded if its entry is free). */
static E2S_ALWAYS_INLINE uint32_t same_find(const same_t *m, const sfe_set *s,
					    const uint32_t *only,
					    const sfe_func *fn, uint32_t key,
					    size_t i, bool v2)
{
	uint32_t *e = &m->at[fn->enc_off >> same_shift(v2)];
	if (*e == 0) {
		*e = (uint32_t)i + 1;
		return 0;
	}
	const sfe_func *t = &s->funcs[only ? only[*e - 1] : *e - 1];
	if (t->enc_off == fn->enc_off && t->enc_len == fn->enc_len &&
	    share_key(t, v2) == key)
		return *e;
	return 0;
}

/* plan_build's walk over the selection, its flags passed as constants
 * where they are known. */
static E2S_ALWAYS_INLINE e2s_err plan_loop(const sfe_set *s, const uint32_t *only,
					   size_t n, bool v2, bool share,
					   bool runs, const table_t *tab,
					   const same_t *same, runs_t *rs, sfe_plan_data *p,
					   e2s_diag *diag)
{
	e2s_err e = E2S_ERR_OK;
	uint32_t *off = p->off;
	/* Kept in locals: the stores to off[] need not reload them. */
	uint64_t len = 0, nfres = 0, unshared = 0, shared = 0, last_start = 0;
	uint32_t last_shndx = 0;
	for (size_t i = 0; i < n; i++) {
		if (only && only[i] >= s->nfuncs) {
			e = e2s_fail(diag, E2S_ERR_INTERNAL, NULL, 0,
				     "selected function %zu out of range", i);
			break;
		}
		const sfe_func *fn = &s->funcs[only ? only[i] : i];
		uint32_t eo = fn->enc_off, el = fn->enc_len;
		if ((uint64_t)eo + el > s->enc_len) {
			e = e2s_fail(diag, E2S_ERR_INTERNAL, NULL, 0,
				     "function %zu: FRE data out of range", i);
			break;
		}
		if (last_shndx > fn->shndx ||
		    (last_shndx == fn->shndx && last_start > fn->start)) {
			e = e2s_fail(diag, E2S_ERR_INTERNAL, NULL, 0,
				     "functions not sorted");
			break;
		}
		last_shndx = fn->shndx;
		last_start = fn->start;
		if (len > UINT32_MAX) {
			e = e2s_fail(diag, E2S_ERR_TOO_LARGE, ".sframe", 0,
				     "FRE sub-section over 4 GiB");
			break;
		}
		unshared += el;
		nfres += fn->fre_count;
		off[i] = (uint32_t)len;
		/* An empty V2 FRE run needs no storage to share. */
		if (!share || el == 0) {
			len += el;
			continue;
		}
		uint32_t key = share_key(fn, v2);
		uint32_t j = same->at ? same_find(same, s, only, fn, key, i, v2) : 0;
		if (j) {
			off[i] = off[j - 1];
			shared++;
			continue;
		}
		uint64_t h = e2s_hash_bytes((uint64_t)key << 32 ^ el, s->enc + eo, el);
		size_t k = find_copy(s, only, tab, fn, key, h, v2);
		if (tab->slot[k]) {
			off[i] = off[(uint32_t)tab->slot[k] - 1];
			shared++;
			continue;
		}
		tab->slot[k] = slot_of(h, i);
		int64_t at = runs ? runs_find(rs, s->enc + eo, el) : -1;
		if (at >= 0) {
			off[i] = (uint32_t)at;
			shared++;
			continue;
		}
		if (runs && !runs_add(rs, s->enc + eo, el)) {
			e = e2s_fail(diag, E2S_ERR_INTERNAL, ".sframe", 0,
				     "FRE run index overflow");
			break;
		}
		len += el;
	}
	p->fre_len = len;
	p->nfres = nfres;
	p->unshared = unshared;
	p->shared = shared;
	return e;
}

/* Offsets of every selected function's FRE data in the FRE sub-section,
 * in index order; with sharing, bytes equal to an earlier function's
 * point at that copy, and with share_runs, bytes equal to any run of
 * the data laid out before point into it. Checks the selection first
 * (in range, FRE data inside the set, sorted): its bytes are read. */
e2s_err sfe_plan_build(const sfe_set *s, const sfe_encode_opts *o,
			  sfe_plan_data *p, e2s_diag *diag)
{
	size_t n = sfe_nselected(s, o);
	bool v2 = s->version == SF_VERSION_2, share = sfe_share_p(s, o);
	bool runs = share && o && o->share_runs;
	const uint32_t *only = o ? o->only : NULL;
	table_t tab = {NULL, 0};
	uint64_t *own = NULL; /* tab.slot, unless it is o->scratch */
	runs_t rs;
	e2s_err e = E2S_ERR_OK;
	memset(p, 0, sizeof *p);
	memset(&rs, 0, sizeof rs);
	uint32_t *off = p->off = malloc((n ? n : 1) * sizeof *p->off);
	if (share) {
		/* In the caller's scratch (memory it has touched) when it
		 * lends some; calloc's otherwise (reused heap memory in a
		 * process that converts again and again). */
		tab.cap = n + n / 2 + 1;
		size_t bytes = tab.cap <= SIZE_MAX / sizeof *tab.slot
				       ? tab.cap * sizeof *tab.slot : 0;
		if (bytes && o && o->scratch && o->scratch_bytes >= bytes) {
			tab.slot = o->scratch;
			memset(tab.slot, 0, bytes);
		} else if (bytes) {
			tab.slot = own = calloc(tab.cap, sizeof *tab.slot);
		}
	}
	if (!off || (share && !tab.slot) || (runs && !runs_init(&rs, s, o))) {
		free(own);
		return e2s_fail(diag, E2S_ERR_NOMEM, ".sframe", 0, NULL);
	}
	runs = runs && rs.data;
	same_t same; /* none: the general way */
	same_init(&same, s, o, tab.slot == (uint64_t *)(o ? o->scratch : NULL)
				   ? tab.cap * sizeof *tab.slot : 0, n, share);
	/* The usual case (every function, V3, no runs) with its flags
	 * known. */
	if (!only && !v2 && share && !runs)
		e = plan_loop(s, NULL, n, false, true, false, &tab, &same, &rs,
			      p, diag);
	else
		e = plan_loop(s, only, n, v2, share, runs, &tab, &same, &rs, p,
			      diag);
	free(own);
	runs_free(&rs);
	return e;
}

e2s_err sfe_plan_make(const sfe_set *s, const sfe_encode_opts *o,
		      sfe_plan **out, e2s_diag *diag)
{
	sfe_plan *pl = calloc(1, sizeof *pl);
	*out = NULL;
	if (!pl)
		return e2s_fail(diag, E2S_ERR_NOMEM, ".sframe", 0, NULL);
	pl->s = s;
	pl->n = sfe_nselected(s, o);
	e2s_err e = sfe_plan_build(s, o, &pl->p, diag);
	if (e) {
		sfe_plan_free(pl);
		return e;
	}
	pl->bytes = pl->n ? sfe_total_size(pl->n, pl->p.fre_len,
				       s->version == SF_VERSION_2) : 0;
	*out = pl;
	return E2S_ERR_OK;
}

size_t sfe_plan_size(const sfe_plan *pl)
{
	return pl->bytes > SIZE_MAX ? 0 : (size_t)pl->bytes;
}

void sfe_plan_free(sfe_plan *pl)
{
	if (!pl)
		return;
	sfe_plan_data_free(&pl->p);
	free(pl);
}

size_t sfe_encoded_size(const sfe_set *s, const sfe_encode_opts *o)
{
	sfe_plan_data p;
	size_t n = sfe_nselected(s, o);
	uint64_t t;
	if (n == 0)
		return 0;
	if (sfe_plan_build(s, o, &p, NULL)) {
		sfe_plan_data_free(&p);
		return 0;
	}
	t = sfe_total_size(n, p.fre_len, s->version == SF_VERSION_2);
	sfe_plan_data_free(&p);
	return t > SIZE_MAX ? 0 : (size_t)t;
}
