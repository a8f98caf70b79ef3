/* Streaming conversion (cfi_parse_stream / elfr_cfi_open_view /
 * conv_project_view) against the table path, the duplicate-range rule
 * (first FDE in section order wins) against a brute-force reference, and
 * the streaming projection with its caches on and off (conv_stream_caches)
 * on synthetic and real sections. */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_sfe_synth.h"
#include "convert/convert.h"
#include "sframe/sframe_fmt.h"
#include "t.h"

/* Rows handed to the callback, copied out for comparison. */
typedef struct {
	cfi_row *rows;
	size_t n, cap;
	size_t calls;
	uint32_t *first, *count; /* per FDE: range in rows */
	size_t nfde_cap;
	size_t stop_at; /* return NOMEM at this FDE (SIZE_MAX: never) */
} collect_t;

static e2s_err collect(void *ctx, const cfi_table *t, size_t fde,
		       const cfi_row *rows, size_t nrows)
{
	collect_t *c = ctx;
	if (fde != c->calls || fde >= t->nfdes)
		return E2S_ERR_USAGE; /* not in order */
	c->calls++;
	if (fde == c->stop_at)
		return E2S_ERR_NOMEM;
	if (fde >= c->nfde_cap) {
		c->nfde_cap = c->nfde_cap ? 2 * c->nfde_cap : 1024;
		c->first = realloc(c->first, c->nfde_cap * sizeof *c->first);
		c->count = realloc(c->count, c->nfde_cap * sizeof *c->count);
	}
	if (c->n + nrows > c->cap) {
		c->cap = 2 * (c->n + nrows);
		c->rows = realloc(c->rows, c->cap * sizeof *c->rows);
	}
	c->first[fde] = (uint32_t)c->n;
	c->count[fde] = (uint32_t)nrows;
	if (nrows)
		memcpy(c->rows + c->n, rows, nrows * sizeof *rows);
	c->n += nrows;
	return E2S_ERR_OK;
}

static void collect_free(collect_t *c)
{
	free(c->rows);
	free(c->first);
	free(c->count);
}

static void *map_file(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		return NULL;
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	*size = (size_t)st.st_size;
	return p == MAP_FAILED ? NULL : p;
}

/* Our own executable, read-only (checked: every test here needs it). */
static void *map_self(size_t *size)
{
	void *img = map_file("/proc/self/exe", size);
	CHECK(img != NULL);
	return img;
}

/* Our own executable: table rows == streamed rows, FDE by FDE, from a
 * read-only mapping (the view must never write to the image). */
static void stream_rows_match(void)
{
	size_t size;
	void *img = map_self(&size);
	if (!img)
		return;
	elfr_cfi *tf = NULL, *sf = NULL;
	e2s_diag d;
	collect_t c;
	memset(&c, 0, sizeof c);
	c.stop_at = SIZE_MAX;
	CHECK_EQ(elfr_cfi_open_mem(img, size, NULL, &tf, &d), E2S_ERR_OK);
	CHECK_EQ(elfr_cfi_open_view(img, size, NULL, collect, &c, &sf, &d),
		 E2S_ERR_OK);
	if (tf && sf) {
		const cfi_table *t = elfr_cfi_table(tf), *s = elfr_cfi_table(sf);
		CHECK(t->nfdes > 100);
		CHECK_EQ(s->nfdes, t->nfdes);
		CHECK_EQ(c.calls, t->nfdes);
		CHECK_EQ(s->nbad_fdes, t->nbad_fdes);
		CHECK(s->rows == NULL);
		CHECK_EQ(s->nrows, 0);
		CHECK_EQ(c.n, t->nrows);
		size_t bad = 0;
		for (size_t i = 0; i < t->nfdes && i < c.calls; i++) {
			const cfi_fde *a = &t->fdes[i], *b = &s->fdes[i];
			if (a->status != b->status || a->pc_begin != b->pc_begin ||
			    a->pc_range != b->pc_range || b->row_count != 0 ||
			    a->row_count != c.count[i] ||
			    memcmp(t->rows + a->row_first, c.rows + c.first[i],
				   a->row_count * sizeof(cfi_row)) != 0)
				bad++;
		}
		CHECK_EQ(bad, 0);
	}
	elfr_cfi_close(tf);
	elfr_cfi_close(sf);
	collect_free(&c);

	/* A callback error stops the parse with that error. */
	memset(&c, 0, sizeof c);
	c.stop_at = 3;
	sf = NULL;
	CHECK_EQ(elfr_cfi_open_view(img, size, NULL, collect, &c, &sf, &d),
		 E2S_ERR_NOMEM);
	CHECK(sf == NULL);
	CHECK_EQ(c.calls, 4);
	collect_free(&c);

	/* elfr_cfi_open_stream on the path: same row count. */
	memset(&c, 0, sizeof c);
	c.stop_at = SIZE_MAX;
	CHECK_EQ(elfr_cfi_open_stream("/proc/self/exe", NULL, collect, &c, &sf,
				      &d), E2S_ERR_OK);
	if (sf)
		CHECK_EQ(c.calls, elfr_cfi_table(sf)->nfdes);
	elfr_cfi_close(sf);
	collect_free(&c);
	munmap(img, size);
}

/* The same functions with the same FRE data (where in enc it is stored
 * may differ: a program converted before shares its data). */
static bool sets_equal(const sfe_set *a, const conv_verdicts *va,
		       const sfe_set *b, const conv_verdicts *vb)
{
	if (!(a->abi == b->abi && a->big_endian == b->big_endian &&
	      a->nfuncs == b->nfuncs && a->nfres == b->nfres &&
	      va->nfdes == vb->nfdes &&
	      memcmp(va->counts, vb->counts, sizeof va->counts) == 0 &&
	      memcmp(va->fde_skip, vb->fde_skip, va->nfdes) == 0))
		return false;
	for (size_t i = 0; i < a->nfuncs; i++) {
		sfe_func x = a->funcs[i], y = b->funcs[i];
		if (x.enc_len != y.enc_len ||
		    (uint64_t)x.enc_off + x.enc_len > a->enc_len ||
		    (uint64_t)y.enc_off + y.enc_len > b->enc_len ||
		    memcmp(a->enc + x.enc_off, b->enc + y.enc_off, x.enc_len))
			return false;
		x.enc_off = y.enc_off = 0;
		if (memcmp(&x, &y, sizeof x))
			return false;
	}
	return true;
}

/* conv_project on the table == conv_project_view streaming, for V3 and
 * V2, and their encodings. */
static void project_view_matches(void)
{
	size_t size;
	void *img = map_self(&size);
	if (!img)
		return;
	elfr_cfi *tf = NULL, *sf = NULL;
	sfe_set a, b;
	conv_verdicts va, vb;
	e2s_diag d;
	CHECK_EQ(elfr_cfi_open_mem(img, size, NULL, &tf, &d), E2S_ERR_OK);
	CHECK_EQ(conv_project(elfr_cfi_table(tf), 0, &a, &va, &d), E2S_ERR_OK);
	CHECK_EQ(conv_project_view(img, size, NULL, 0, &sf, &b, &vb, &d), E2S_ERR_OK);
	CHECK(a.nfuncs > 100);
	CHECK(sets_equal(&a, &va, &b, &vb));
	conv_verdicts_free(&va);
	conv_verdicts_free(&vb);
	elfr_cfi *ff = NULL, *f2 = NULL;
	sfe_set fs, t2;
	conv_verdicts vfs, vt2;
	CHECK_EQ(conv_project_view(img, size, NULL, 2, &ff, &fs, &vfs, &d), E2S_ERR_OK);
	CHECK_EQ(conv_project(elfr_cfi_table(tf), 2, &t2, &vt2, &d), E2S_ERR_OK);
	CHECK(sets_equal(&fs, &vfs, &t2, &vt2));
	sfe_set_free(&t2);
	conv_verdicts_free(&vfs);
	conv_verdicts_free(&vt2);
	(void)f2;
	sfe_encode_opts o = {.section_vaddr = 0x800000};
	bw_t wa, wb;
	bw_init(&wa, a.big_endian);
	bw_init(&wb, b.big_endian);
	CHECK_EQ(sfe_encode(&a, &o, &wa, NULL, NULL, &d), E2S_ERR_OK);
	CHECK_EQ(sfe_encode(&b, &o, &wb, NULL, NULL, &d), E2S_ERR_OK);
	CHECK_EQ(sfe_encoded_size(&b, &o), wb.len);
	CHECK(wa.len == wb.len && memcmp(wa.data, wb.data, wa.len) == 0);
	/* A set projected for V2 is written as V2 only. */
	bw_t wf;
	bw_init(&wf, fs.big_endian);
	CHECK_EQ(sfe_encode(&fs, &o, &wf, NULL, NULL, &d), E2S_ERR_OK);
	CHECK_EQ(sfe_encoded_size(&fs, &o), wf.len);
	CHECK(wf.len > 4 && wf.data[2] == 2);
	bw_free(&wf);
	sfe_encode_opts v3 = {.section_vaddr = 0x800000, .sframe_version = 3};
	bw_init(&wf, fs.big_endian);
	CHECK_EQ(sfe_encode(&fs, &v3, &wf, NULL, NULL, &d), E2S_ERR_INTERNAL);
	bw_free(&wf);
	sfe_set_free(&fs);
	elfr_cfi_close(ff);
	/* With sharing the size still agrees with the bytes written. */
	o.share_fres = true;
	bw_free(&wb);
	bw_init(&wb, b.big_endian);
	CHECK_EQ(sfe_encode(&b, &o, &wb, NULL, NULL, &d), E2S_ERR_OK);
	CHECK_EQ(sfe_encoded_size(&b, &o), wb.len);
	CHECK(wb.len <= wa.len);
	bw_free(&wa);
	bw_free(&wb);
	sfe_set_free(&a);
	sfe_set_free(&b);
	elfr_cfi_close(tf);
	elfr_cfi_close(sf);
	munmap(img, size);
}

/* An AMD64 table of the n FDEs fdes (ranges set), each with one row
 * over its range (CFA rsp+8, RA at CFA-8), kept in rows. */
static void one_row_table(cfi_table *t, cfi_cie *cie, cfi_fde *fdes,
			  cfi_row *rows, size_t n)
{
	memset(t, 0, sizeof *t);
	memset(cie, 0, sizeof *cie);
	for (size_t i = 0; i < n; i++) {
		fdes[i].row_first = (uint32_t)i;
		fdes[i].row_count = 1;
		rows[i].start = fdes[i].pc_begin;
		rows[i].end = fdes[i].pc_begin + fdes[i].pc_range;
		rows[i].cfa.kind = CFI_CFA_REG_OFF;
		rows[i].cfa.reg = 7;
		rows[i].cfa.off = 8;
		rows[i].ra = rule_off(-8);
	}
	t->abi = ABI_AMD64;
	t->cies = cie;
	t->ncies = 1;
	t->fdes = fdes;
	t->nfdes = n;
	t->rows = rows;
	t->nrows = n;
}

/* FDE i's range and section in layout mode (duplicates_brute_force). */
enum { DUP_RANDOM, DUP_REPEATS, DUP_WIDE_FIRST, DUP_WIDE_LAST, DUP_MODES };
static void dup_layout(unsigned mode, size_t i, size_t n, uint32_t *x,
		       cfi_fde *f, cfi_reloc_ref *rl)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	rl->present = true;
	rl->shndx = 1;
	switch (mode) {
	case DUP_RANDOM: /* random order, two sections */
		f->pc_begin = 0x1000 + (*x % 20000) * 4;
		f->pc_range = 4 + (*x >> 20) % 64;
		rl->shndx = (uint16_t)(1 + (*x >> 28) % 2);
		break;
	case DUP_REPEATS: /* address order, every 7th FDE a copy of the last */
		f->pc_begin = 0x1000 + (i - (i % 7 == 6)) * 16;
		f->pc_range = 16;
		break;
	case DUP_WIDE_FIRST: /* one FDE over all the others, first */
	case DUP_WIDE_LAST: /* ... or last */
		if (i == (mode == DUP_WIDE_FIRST ? 0 : n - 1)) {
			f->pc_begin = 0x1000;
			f->pc_range = 16 * n;
		} else {
			f->pc_begin = 0x1000 + i * 16;
			f->pc_range = 16;
		}
		break;
	}
}

/* Ranges laid out several ways, some overlapping: the skip reasons must
 * follow "an FDE overlapping an earlier claimed one of its section is a
 * duplicate", computed here by brute force, and the functions kept must
 * be in (section, start) order with counts that add up. */
static void duplicates_brute_force(void)
{
	enum { N = 3000 };
	for (unsigned mode = 0; mode < DUP_MODES; mode++) {
		cfi_table t;
		cfi_cie cie;
		cfi_fde *fdes = calloc(N, sizeof *fdes);
		cfi_reloc_ref *rels = calloc(N, sizeof *rels);
		cfi_row *rows = calloc(N, sizeof *rows);
		bool *claimed = calloc(N, sizeof *claimed);
		uint8_t *want = calloc(N, 1);
		uint32_t x = 12345;
		for (size_t i = 0; i < N; i++) {
			cfi_fde *f = &fdes[i];
			dup_layout(mode, i, N, &x, f, &rels[i]);
			/* Brute force: overlap with any earlier claimed range
			 * of the same section. */
			bool dup = false;
			for (size_t j = 0; j < i && !dup; j++)
				dup = claimed[j] &&
				      rels[j].shndx == rels[i].shndx &&
				      fdes[j].pc_begin < f->pc_begin + f->pc_range &&
				      f->pc_begin < fdes[j].pc_begin + fdes[j].pc_range;
			claimed[i] = !dup;
			want[i] = dup ? CONV_SKIP_DUPLICATE : CONV_SKIP_NONE;
		}
		one_row_table(&t, &cie, fdes, rows, N);
		t.relocatable = true;
		t.relocs = rels;
		sfe_set set;
		conv_verdicts v;
		e2s_diag d;
		CHECK_EQ(conv_project(&t, 0, &set, &v, &d), E2S_ERR_OK);
		size_t ndup = 0, bad = 0, nfres = 0;
		for (size_t i = 0; i < N; i++) {
			ndup += want[i] == CONV_SKIP_DUPLICATE;
			bad += v.fde_skip[i] != want[i];
		}
		/* Each layout exercises overlaps. */
		CHECK(ndup >= (mode == DUP_WIDE_LAST ? 1 : N / 10));
		CHECK(ndup < N);
		CHECK_EQ(bad, 0);
		CHECK_EQ(set.nfuncs, N - ndup);
		CHECK_EQ(v.counts[CONV_SKIP_DUPLICATE], ndup);
		CHECK_EQ(v.counts[CONV_SKIP_NONE], N - ndup);
		/* Sorted by (section, start) for the encoder, each function
		 * where its FDE said. */
		size_t unsorted = 0;
		for (size_t i = 0; i < set.nfuncs; i++) {
			const sfe_func *q = &set.funcs[i];
			nfres += q->fre_count;
			bad += q->src_fde >= N || want[q->src_fde] ||
			       q->start != fdes[q->src_fde].pc_begin;
			if (i == 0)
				continue;
			const sfe_func *p = &set.funcs[i - 1];
			unsorted += p->shndx > q->shndx ||
				    (p->shndx == q->shndx &&
				     p->start >= q->start);
		}
		CHECK_EQ(unsorted, 0);
		CHECK_EQ(bad, 0);
		CHECK_EQ(set.nfres, nfres);
		sfe_set_free(&set);
		conv_verdicts_free(&v);
		free(fdes);
		free(rels);
		free(rows);
		free(claimed);
		free(want);
	}
}

/* FDEs as k ascending sequences interleaved, each below the one before
 * (k lanes needed): sorted by merging lanes up to 8, by merging runs
 * beyond; the same functions either way, each where its FDE said. */
static void sort_interleaved(unsigned k)
{
	enum { N = 2000 };
	cfi_table t;
	cfi_cie cie;
	cfi_fde *fdes = calloc(N, sizeof *fdes);
	cfi_row *rows = calloc(N, sizeof *rows);
	for (size_t i = 0; i < N; i++) {
		fdes[i].pc_begin = (uint64_t)(k - i % k) * 0x100000 + (i / k) * 16;
		fdes[i].pc_range = 16;
	}
	one_row_table(&t, &cie, fdes, rows, N);
	sfe_set set;
	conv_verdicts v;
	e2s_diag d;
	CHECK_EQ(conv_project(&t, 0, &set, &v, &d), E2S_ERR_OK);
	CHECK_EQ(set.nfuncs, N);
	size_t bad = 0;
	bool *seen = calloc(N, sizeof *seen);
	for (size_t i = 0; i < set.nfuncs; i++) {
		const sfe_func *q = &set.funcs[i];
		bad += i > 0 && set.funcs[i - 1].start >= q->start;
		bad += q->src_fde >= N || seen[q->src_fde] ||
		       q->start != fdes[q->src_fde].pc_begin;
		if (q->src_fde < N)
			seen[q->src_fde] = true;
	}
	CHECK_EQ(bad, 0);
	free(seen);
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	free(fdes);
	free(rows);
}

static void sort_orders(void)
{
	for (unsigned k = 1; k <= 12; k++)
		sort_interleaved(k);
}

/* ---- Rows one by one (cfi_row_fn) and cfi_row.same ------------------- */

/* Does column bit col of a equal that of b? Field by field, written
 * here from cfi.h's description of the columns. */
static bool col_equal(const cfi_row *a, const cfi_row *b, unsigned col)
{
	switch (col) {
	case CFI_COL_CFA: return memcmp(&a->cfa, &b->cfa, sizeof a->cfa) == 0;
	case CFI_COL_RA: return memcmp(&a->ra, &b->ra, sizeof a->ra) == 0;
	case CFI_COL_FP: return memcmp(&a->fp, &b->fp, sizeof a->fp) == 0;
	case CFI_COL_SP: return memcmp(&a->sp, &b->sp, sizeof a->sp) == 0;
	case CFI_COL_CFA_BASE:
		return a->cfa.kind == b->cfa.kind && a->cfa.reg == b->cfa.reg &&
		       memcmp(&a->cfa.expr, &b->cfa.expr, sizeof a->cfa.expr) == 0;
	default:
		return a->ra_mangled == b->ra_mangled &&
		       a->ra_sign_bad == b->ra_sign_bad &&
		       a->ra_sign_pc == b->ra_sign_pc;
	}
}

static bool rules_equal(const cfi_row *a, const cfi_row *b)
{
	for (unsigned col = 1; col <= CFI_COL_SIGN; col <<= 1)
		if (!col_equal(a, b, col))
			return false;
	return true;
}

/* Rows [0, n) of one FDE claim nothing false in .same: on the first,
 * every column marked is its CIE's initial rule (init; NULL: unknown,
 * not checked), and on the others the previous row's. Counts rows after
 * the first with some bit set. */
static size_t check_same(const cfi_row *r, size_t n, const cfi_row *init,
			 size_t *lies)
{
	size_t marked = 0;
	for (size_t i = 0; i < n; i++) {
		const cfi_row *before = i ? &r[i - 1] : init;
		marked += i > 0 && r[i].same != 0;
		for (unsigned col = 1; before && col <= CFI_COL_CFA_BASE; col <<= 1)
			if ((r[i].same & col) && !col_equal(&r[i], before, col))
				++*lies;
	}
	return marked;
}

/* The CIE's initial rules, as the first row of an FDE whose program
 * begins by advancing (DW_CFA_advance_loc with a delta): NULL if no
 * FDE of cie does. */
static const cfi_row *cie_init_row(const cfi_table *t, uint32_t cie)
{
	for (size_t i = 0; i < t->nfdes; i++) {
		const cfi_fde *f = &t->fdes[i];
		if (f->cie == cie && f->status == E2S_ERR_OK && f->row_count &&
		    f->insn_len && t->data[f->insn_off] > 0x40 &&
		    t->data[f->insn_off] < 0x80)
			return &t->rows[f->row_first];
	}
	return NULL;
}

typedef struct {
	collect_t rows;   /* rows as passed one by one */
	size_t cur, n0;   /* FDE being collected, its first row */
	size_t fdes;      /* on_fde calls */
	size_t miscount;  /* on_fde counts that differ from the rows seen */
} sink_t;

static e2s_err sink_row(void *ctx, const cfi_table *t, size_t fde,
			const cfi_row *row)
{
	sink_t *k = ctx;
	(void)t;
	if (fde != k->cur) {
		k->cur = fde;
		k->n0 = k->rows.n;
	}
	collect_t *c = &k->rows;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 1024;
		c->rows = realloc(c->rows, c->cap * sizeof *c->rows);
	}
	c->rows[c->n++] = *row;
	return E2S_ERR_OK;
}

static e2s_err sink_fde(void *ctx, const cfi_table *t, size_t fde,
			const cfi_row *rows, size_t nrows)
{
	sink_t *k = ctx;
	collect_t *c = &k->rows;
	size_t got = k->cur == fde ? c->n - k->n0 : 0;
	if (rows != NULL || nrows != got)
		k->miscount++;
	if (fde >= c->nfde_cap) {
		c->nfde_cap = c->nfde_cap ? 2 * c->nfde_cap : 1024;
		c->first = realloc(c->first, c->nfde_cap * sizeof *c->first);
		c->count = realloc(c->count, c->nfde_cap * sizeof *c->count);
	}
	c->first[fde] = (uint32_t)(c->n - got);
	c->count[fde] = (uint32_t)got;
	/* A failed program's rows are void (cfi_row_fn). */
	if (t->fdes[fde].status != E2S_ERR_OK)
		c->count[fde] = 0;
	k->fdes++;
	return E2S_ERR_OK;
}

/* The rows passed one by one are the table's rows, FDE by FDE, once
 * equal neighbours are merged (the table merges them, the sink is not
 * told about rows where nothing was set), each at the same start; and
 * both say .same truthfully. */
static void row_sink_matches(const char *path)
{
	size_t size;
	void *img = map_file(path, &size);
	if (!img) {
		printf("  (skipped: %s not found)\n", path);
		return;
	}
	elfr_cfi *tf = NULL, *sf = NULL;
	e2s_diag d;
	sink_t k;
	memset(&k, 0, sizeof k);
	k.cur = SIZE_MAX;
	elfr_cfi_opts lo = {false, false, NULL, sink_row, NULL};
	CHECK_EQ(elfr_cfi_open_mem(img, size, NULL, &tf, &d), E2S_ERR_OK);
	CHECK_EQ(elfr_cfi_open_view(img, size, &lo, sink_fde, &k, &sf, &d),
		 E2S_ERR_OK);
	if (tf && sf) {
		const cfi_table *t = elfr_cfi_table(tf);
		CHECK(t->nfdes > 100);
		CHECK_EQ(k.fdes, t->nfdes);
		CHECK_EQ(k.miscount, 0);
		size_t lies = 0, differ = 0, marked = 0, passed = 0, firsts = 0;
		const cfi_row *init = NULL;
		uint32_t init_cie = UINT32_MAX;
		for (size_t i = 0; i < t->nfdes && i < k.fdes; i++) {
			const cfi_fde *a = &t->fdes[i];
			const cfi_row *tr = t->rows + a->row_first;
			const cfi_row *sr = k.rows.rows + k.rows.first[i];
			size_t sn = k.rows.count[i], m = 0;
			if (a->cie != init_cie) {
				init_cie = a->cie;
				init = cie_init_row(t, a->cie);
			}
			marked += check_same(tr, a->row_count, init, &lies);
			check_same(sr, sn, init, &lies);
			firsts += init && sn && sr[0].same == CFI_COL_ALL;
			passed += sn;
			for (size_t j = 0; j < sn; j++) {
				if (m > 0 && rules_equal(&sr[j], &tr[m - 1]))
					continue; /* merged in the table */
				if (m == a->row_count || sr[j].start != tr[m].start ||
				    !rules_equal(&sr[j], &tr[m]))
					differ++;
				m++;
			}
			differ += m != a->row_count;
		}
		CHECK_EQ(lies, 0);
		CHECK_EQ(differ, 0);
		/* Not vacuous: most rows after an FDE's first share columns. */
		CHECK(marked > (t->nrows - t->nfdes) / 2);
		/* Nor on first rows: most begin with the CIE's rules. */
		CHECK(firsts > t->nfdes / 2);
		CHECK(passed >= t->nrows);
	}
	elfr_cfi_close(tf);
	elfr_cfi_close(sf);
	collect_free(&k.rows);
	munmap(img, size);
}

/* ---- The caches on and off (issue #32) -------------------------------- */

/* The streaming projection of sec, its caches (conv_cache.h) on or off,
 * its set's arrays in one block where the size calls for it or not. */
static e2s_err stream_opts(const cfi_section *sec, unsigned version,
			   bool on, bool block, sfe_set *set, conv_verdicts *v,
			   bool *fdes_in)
{
	conv_stream *st;
	cfi_table t;
	e2s_diag d;
	memset(set, 0, sizeof *set);
	memset(v, 0, sizeof *v);
	if (conv_stream_new(&st, version) != E2S_ERR_OK)
		return E2S_ERR_NOMEM;
	conv_stream_caches(st, on);
	conv_stream_block(st, block);
	cfi_sink k = {conv_stream_pre, conv_stream_row, conv_stream_fde, st,
		      conv_stream_room};
	e2s_err e = cfi_parse_sink(sec, ABI_AMD64, &k, &t, &d);
	if (!e) {
		/* The FDE array still in the block (conv_stream_room):
		 * the table keeps a reference only as long as it is. */
		if (fdes_in)
			*fdes_in = t.fdes_block != NULL &&
				   e2s_block_has(t.fdes_block, t.fdes);
		e = conv_stream_finish(st, &t, set, v, &d);
		cfi_table_free(&t);
	}
	conv_stream_free(st);
	return e;
}

static e2s_err stream_caches(const cfi_section *sec, unsigned version,
			     bool on, sfe_set *set, conv_verdicts *v)
{
	return stream_opts(sec, version, on, true, set, v, NULL);
}

/* Functions whose FRE data is an earlier function's (a program seen
 * before shares it: the memo was used). */
static size_t shared_enc(const sfe_set *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nfuncs; i++)
		for (size_t j = 0; j < i; j++)
			if (s->funcs[j].enc_len && s->funcs[i].enc_off == s->funcs[j].enc_off) {
				n++;
				break;
			}
	return n;
}

/* A little-endian x86-64 .eh_frame: CIEs "zR" (pcrel sdata4 pointers,
 * code alignment 1, data alignment -8, RA column 16) and FDEs against a
 * chosen CIE. */
typedef struct {
	uint8_t b[1 << 20];
	size_t n;
} xbuf;

static void xput(xbuf *e, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size; i++)
		e->b[e->n++] = (uint8_t)(v >> (8 * i));
}

static void xclose(xbuf *e, size_t start)
{
	while ((e->n - start) % 8)
		e->b[e->n++] = 0; /* DW_CFA_nop */
	uint64_t len = e->n - start - 4;
	for (unsigned i = 0; i < 4; i++)
		e->b[start + i] = (uint8_t)(len >> (8 * i));
}

static size_t xcie(xbuf *e, const uint8_t *init, size_t n)
{
	size_t start = e->n;
	static const uint8_t head[] = {1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b};
	xput(e, 0, 4);
	xput(e, 0, 4);
	memcpy(e->b + e->n, head, sizeof head);
	e->n += sizeof head;
	memcpy(e->b + e->n, init, n);
	e->n += n;
	xclose(e, start);
	return start;
}

static void xfde(xbuf *e, uint64_t sec, size_t cie_off, uint64_t func,
		 uint32_t size, const uint8_t *insn, size_t n)
{
	size_t start = e->n;
	xput(e, 0, 4);
	xput(e, e->n - cie_off, 4);
	xput(e, (uint32_t)(func - (sec + e->n)), 4);
	xput(e, size, 4);
	xput(e, 0, 1);
	memcpy(e->b + e->n, insn, n);
	e->n += n;
	xclose(e, start);
}

/* e's records, terminated, as the .eh_frame at address sec. */
static cfi_section xsection(xbuf *e, uint64_t sec)
{
	xput(e, 0, 4); /* terminator */
	CHECK(e->n < sizeof e->b);
	cfi_section s;
	memset(&s, 0, sizeof s);
	s.kind = CFI_SEC_EH_FRAME;
	s.data = e->b;
	s.size = e->n;
	s.addr_size = 8;
	s.vaddr = sec;
	return s;
}

/* Programs repeated under three CIEs with different initial rules, at
 * sizes beyond, at and inside their reach: the streaming projection
 * gives the same set with its caches on and off, and the same as
 * conv_project (the rules alone), V3 and V2. What each cache must not
 * confuse is here: a program's outcome under another CIE (the first
 * rows of CIE B are not CIE A's, and CIE C's need a flexible FDE), or at
 * a size that cuts rows off (the memo's reach rule); a row whose CFA
 * register alone changes (not a CFA-only row); a skip reason of any
 * number (pc-relative). */
static void caches_on_off_synthetic(void)
{
	/* CIE A: CFA rsp+8, RA at CFA-8. CIE B: CFA rbp+16, RA at CFA-8,
	 * rbp at CFA-16. CIE C: CFA r10+8 (a flexible FDE in V3, skipped in
	 * V2), RA at CFA-8. */
	static const uint8_t cie_a[] = {0x0c, 7, 8, 0x90, 1};
	static const uint8_t cie_b[] = {0x0c, 6, 16, 0x90, 1, 0x86, 2};
	static const uint8_t cie_c[] = {0x0c, 10, 8, 0x90, 1};
	static const struct {
		uint8_t insn[16];
		size_t n;
	} prog[] = {
		/* frame pointer set up: push rbp; mov rsp,rbp (the CFA
		 * register alone changes); leave */
		{{0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x4a, 0x0c, 7, 8}, 12},
		/* CFA offset alone changing (reach 12) */
		{{0x41, 0x0e, 16, 0x44, 0x0e, 24, 0x45, 0x0e, 32, 0x42, 0x0e, 8}, 12},
		/* remember/restore around a CFA change */
		{{0x41, 0x0e, 16, 0x0a, 0x42, 0x0e, 24, 0x41, 0x0b, 0x42}, 10},
		/* CFA from the PC (DWARF register 16): skipped, pc-relative */
		{{0x41, 0x0c, 16, 8}, 4},
		/* a single advance: the CIE's rules, then nothing new */
		{{0x48}, 1},
	};
	static const uint32_t sizes[] = {32, 48, 32, 5, 12, 2, 64};
	const uint64_t sec = 0x2000, text = 0x10000;
	xbuf *e = calloc(1, sizeof *e);
	CHECK(e != NULL);
	if (!e)
		return;
	size_t ca = xcie(e, cie_a, sizeof cie_a);
	size_t cb = xcie(e, cie_b, sizeof cie_b);
	size_t cc = xcie(e, cie_c, sizeof cie_c);
	const size_t cies[] = {ca, cb, cc};
	uint64_t func = text;
	for (unsigned c = 0; c < 3; c++)
		for (size_t p = 0; p < sizeof prog / sizeof *prog; p++)
			for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
				xfde(e, sec, cies[c], func, sizes[z],
				     prog[p].insn, prog[p].n);
				func += 0x40;
			}
	/* Once more with the CIEs taken in the other order (CIE C's first
	 * rows first). */
	for (size_t p = 0; p < sizeof prog / sizeof *prog; p++)
		for (unsigned c = 3; c-- > 0;) {
			xfde(e, sec, cies[c], func, 32, prog[p].insn, prog[p].n);
			func += 0x40;
		}
	cfi_section s = xsection(e, sec);
	for (unsigned v = 2; v <= 3; v++) {
		sfe_set on, off, ref;
		conv_verdicts von, voff, vref;
		cfi_table t;
		e2s_diag d;
		CHECK_EQ(stream_caches(&s, v, true, &on, &von), E2S_ERR_OK);
		CHECK_EQ(stream_caches(&s, v, false, &off, &voff), E2S_ERR_OK);
		CHECK_EQ(cfi_parse(&s, ABI_AMD64, &t, &d), E2S_ERR_OK);
		CHECK_EQ(conv_project(&t, v, &ref, &vref, &d), E2S_ERR_OK);
		CHECK_EQ(t.nfdes, 3 * 5 * 7 + 3 * 5);
		CHECK(sets_equal(&on, &von, &off, &voff));
		CHECK(sets_equal(&off, &voff, &ref, &vref));
		/* Not vacuous: both kinds of outcome, and repeated programs
		 * taken from the memo with the caches on only. */
		CHECK(von.counts[CONV_SKIP_NONE] > 40);
		CHECK(von.counts[CONV_SKIP_PC_RELATIVE] >= 15);
		CHECK(shared_enc(&on) > 10);
		/* CIE C's functions: flexible FDEs in V3, skipped in V2. */
		size_t flex = 0;
		for (size_t i = 0; i < on.nfuncs; i++)
			flex += on.funcs[i].fde_type == SF_FDE_TYPE_FLEX;
		CHECK(v == 2 ? von.counts[CONV_SKIP_V2] >= 15 && flex == 0
			     : flex >= 15);
		CHECK_EQ(shared_enc(&off), 0);
		sfe_set_free(&on);
		sfe_set_free(&off);
		sfe_set_free(&ref);
		conv_verdicts_free(&von);
		conv_verdicts_free(&voff);
		conv_verdicts_free(&vref);
		cfi_table_free(&t);
	}
	free(e);
}

/* The same on real files: our own executable, libstdc++ and libc. */
static void caches_on_off_file(const char *path)
{
	size_t size;
	void *img = map_file(path, &size);
	if (!img) {
		printf("  (skipped: %s not found)\n", path);
		return;
	}
	elfr_cfi *cf = NULL;
	e2s_diag d;
	CHECK_EQ(elfr_cfi_open_mem(img, size, NULL, &cf, &d), E2S_ERR_OK);
	const cfi_section *sec = cf ? elfr_cfi_section(cf) : NULL;
	CHECK(sec != NULL);
	for (unsigned v = 2; sec && v <= 3; v++) {
		sfe_set on, off;
		conv_verdicts von, voff;
		CHECK_EQ(stream_caches(sec, v, true, &on, &von), E2S_ERR_OK);
		CHECK_EQ(stream_caches(sec, v, false, &off, &voff), E2S_ERR_OK);
		CHECK(on.nfuncs > 100);
		CHECK(sets_equal(&on, &von, &off, &voff));
		CHECK(shared_enc(&on) > 0);
		sfe_set_free(&on);
		sfe_set_free(&off);
		conv_verdicts_free(&von);
		conv_verdicts_free(&voff);
	}
	elfr_cfi_close(cf);
	munmap(img, size);
}

/* ---- The set's arrays in one block (conv_project.c, pctx_block) ------- */

/* The same set with and without the block, for a section of a size that
 * calls for one: sections whose FDE records and functions (F: tiny FDEs,
 * more than the room kept for them) or FRE data (E: flexible FREs, more
 * bytes than the CFI) outgrow their room in it, so that the array moves
 * out, and the others stay. Equal sets say nothing was lost or
 * overwritten in the move; ASan says no block pointer was freed or grown
 * alone. */
static void block_same_set(void)
{
	static const uint8_t cie_a[] = {0x0c, 7, 8, 0x90, 1};
	static const uint8_t cie_c[] = {0x0c, 10, 8, 0x90, 1};
	const uint64_t sec = 0x2000, text = 0x100000;
	xbuf *e = calloc(1, sizeof *e);
	CHECK(e != NULL);
	if (!e)
		return;
	for (unsigned kind = 0; kind < 2; kind++) {
		e->n = 0;
		uint64_t func = text;
		if (kind == 0) {
			/* F: 24,000 FDEs of 24 bytes, 8 programs. */
			size_t ca = xcie(e, cie_a, sizeof cie_a);
			for (unsigned i = 0; i < 24000; i++, func += 0x20) {
				uint8_t insn[] = {0x41, 0x0e, (uint8_t)(16 + 8 * (i % 8))};
				xfde(e, sec, ca, func, 0x20, insn, sizeof insn);
			}
		} else {
			/* E: 1,000 FDEs of 150 rows each under a CFA of r10
			 * (flexible FREs of 6 bytes for 3 bytes of CFI), every
			 * program a new one (its first three offsets count i
			 * in base 15): each is remembered, so that the memo
			 * table is written while the FRE data grows. */
			size_t cc = xcie(e, cie_c, sizeof cie_c);
			uint8_t insn[450];
			for (unsigned i = 0; i < 1000; i++, func += 0x100) {
				for (unsigned j = 0, q = i; j < 150; j++, q /= 15) {
					insn[3 * j] = 0x41;
					insn[3 * j + 1] = 0x0e;
					insn[3 * j + 2] = (uint8_t)(8 + 8 * (j < 3 ? q % 15
										  : (i + j) % 15));
				}
				xfde(e, sec, cc, func, 0x100, insn, sizeof insn);
			}
		}
		cfi_section s = xsection(e, sec);
		for (unsigned v = 2; v <= 3; v++)
			for (unsigned caches = 0; caches < 2; caches++) {
				sfe_set in, out;
				conv_verdicts vin, vout;
				bool fin = true, fout = true;
				CHECK_EQ(stream_opts(&s, v, caches, true, &in, &vin,
						     &fin),
					 E2S_ERR_OK);
				CHECK_EQ(stream_opts(&s, v, caches, false, &out, &vout,
						     &fout),
					 E2S_ERR_OK);
				/* F's FDE records moved out, E's stayed. */
				CHECK(fin == (kind == 1) && !fout);
				CHECK(sets_equal(&in, &vin, &out, &vout));
				CHECK(in.block != NULL && out.block == NULL);
				CHECK_EQ(vin.counts[CONV_SKIP_NONE],
					 kind == 0 ? 24000 : v == 3 ? 1000 : 0);
				if (kind == 0) /* the functions moved out */
					CHECK(!sfe_in_block(&in, in.funcs) &&
					      sfe_in_block(&in, in.enc));
				else if (v == 3) /* the FRE data did */
					CHECK(sfe_in_block(&in, in.funcs) &&
					      !sfe_in_block(&in, in.enc));
				sfe_set_free(&in);
				sfe_set_free(&out);
				conv_verdicts_free(&vin);
				conv_verdicts_free(&vout);
			}
	}
	free(e);
}

int main(void)
{
	stream_rows_match();
	row_sink_matches("/proc/self/exe");
	row_sink_matches("/usr/lib/x86_64-linux-gnu/libstdc++.so.6");
	project_view_matches();
	duplicates_brute_force();
	sort_orders();
	caches_on_off_synthetic();
	block_same_set();
	caches_on_off_file("/proc/self/exe");
	caches_on_off_file("/usr/lib/x86_64-linux-gnu/libstdc++.so.6");
	caches_on_off_file("/lib/x86_64-linux-gnu/libc.so.6");
	return t_done("test_conv_stream");
}
