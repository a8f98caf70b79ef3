/* convert_only: the conversion without ELF writing, for the benchmark.
 *
 *   convert_only FILE               elfr_cfi_open_stream (mapping the file) with
 *                                   the streaming projection as the tool
 *                                   runs it (repeated programs taken from
 *                                   the first, rows one by one), then
 *                                   sfe_encoded_size + sfe_encode, once;
 *                                   prints one line of key=value stats
 *                                   (rows 0)
 *   convert_only -r SECONDS FILE    the same with rows (the DWARF rows
 *                                   of the file, counted apart, untimed),
 *                                   then repeat the in-memory part
 *                                   (conv_project_view on an image read
 *                                   beforehand: parse + interpret +
 *                                   project in one pass, then encode) for
 *                                   at least SECONDS of CPU time and print
 *                                   the fastest iteration per phase
 *
 * Times are CPU times (CLOCK_PROCESS_CPUTIME_ID) in seconds. The phase
 * "open" is ELF setup plus the whole CFI pass including the
 * projection (they are one streaming pass now); "project" is only the
 * final sort and bookkeeping. "memcpy" is a copy of the whole file image,
 * for reference (the library no longer makes one). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "elf/elfr_cfi.h"
#include "common/buf.h"
#include "common/err.h"
#include "convert/convert.h"

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
	size_t eh_size, nfdes, nbad, nrows, nfuncs, nfres, sframe_size;
	const char *secname;
	double t_open, t_project, t_encode;
} run_stats;

static int fail(const char *path, const char *what, const e2s_diag *d)
{
	char buf[256];
	e2s_diag_format(d, buf, sizeof buf);
	fprintf(stderr, "convert_only: %s: %s: %s\n", path, what, buf);
	return 1;
}

/* DWARF rows of the file (the table the converter never builds),
 * counted apart from the timed conversions. */
static size_t count_rows(const char *path)
{
	e2s_diag d;
	elfr_cfi *cf = NULL;
	if (elfr_cfi_open(path, NULL, &cf, &d))
		return 0;
	size_t n = elfr_cfi_table(cf)->nrows;
	elfr_cfi_close(cf);
	return n;
}

/* One conversion. img == NULL: elfr_cfi_open(path) with the streaming
 * projection, else conv_project_view on img. */
static int convert(const char *path, const void *img, size_t size,
		   run_stats *st)
{
	e2s_diag d;
	elfr_cfi *cf = NULL;
	sfe_set set;
	conv_verdicts v;
	bw_t w;
	e2s_err e;
	int rc = 1;
	conv_stream *ss = NULL;

	memset(&d, 0, sizeof d);
	memset(&set, 0, sizeof set);
	memset(&v, 0, sizeof v);
	double t0 = cpu_now(), t1;
	if (img) {
		e = conv_project_view(img, size, NULL, 0, &cf, &set, &v, &d);
		if (e)
			return fail(path, "open+project", &d);
		t1 = cpu_now();
	} else {
		if (conv_stream_new(&ss, 0)) {
			fprintf(stderr, "convert_only: out of memory\n");
			return 1;
		}
		/* As conv_project_view, on the mapped file. */
		elfr_cfi_opts lo = {false, false, conv_stream_pre, conv_stream_row,
				    conv_stream_room};
		e = elfr_cfi_open_stream(path, &lo, conv_stream_fde, ss, &cf, &d);
		if (e) {
			conv_stream_free(ss);
			return fail(path, "open", &d);
		}
		t1 = cpu_now();
		e = conv_stream_finish(ss, elfr_cfi_table(cf), &set, &v, &d);
		conv_stream_free(ss);
		if (e) {
			fail(path, "project", &d);
			goto out;
		}
	}
	const cfi_table *t = elfr_cfi_table(cf);
	/* The converter lends the layout its FDE array, done with and
	 * touched already, as scratch (convert_file.c): the same here,
	 * touched before the clock starts. */
	double s0 = cpu_now();
	size_t sbytes = t->nfdes * sizeof(cfi_fde);
	void *scratch = sbytes ? malloc(sbytes) : NULL;
	if (scratch)
		memset(scratch, 0, sbytes);
	double t2 = cpu_now(), unt = t2 - s0; /* untimed: not the tool's */
	/* As the converter does for a linked file: size, then encode for a
	 * section placed after everything else. */
	sfe_encode_opts eo;
	memset(&eo, 0, sizeof eo);
	eo.relocatable = elfr_cfi_is_rel(cf);
	eo.section_vaddr = 0x40000000;
	eo.scratch = scratch;
	eo.scratch_bytes = scratch ? sbytes : 0;
	size_t want = sfe_encoded_size(&set, &eo);
	bw_init(&w, t->big_endian);
	if (want) {
		sfe_reloc *rl = NULL;
		size_t nrl = 0;
		e = sfe_encode(&set, &eo, &w, eo.relocatable ? &rl : NULL,
			       eo.relocatable ? &nrl : NULL, &d);
		free(rl);
	}
	double t3 = cpu_now();
	free(scratch);
	if (want && e) {
		bw_free(&w);
		fail(path, "encode", &d);
		goto out;
	}
	st->eh_size = t->size;
	st->nfdes = t->nfdes;
	st->nbad = t->nbad_fdes;
	st->nfuncs = set.nfuncs;
	st->nfres = set.nfres;
	st->sframe_size = w.len;
	st->secname = elfr_cfi_section_name(cf);
	st->t_open = t1 - t0;
	st->t_project = t2 - t1 - unt;
	st->t_encode = t3 - t2;
	bw_free(&w);
	rc = 0;
out:
	sfe_set_free(&set);
	conv_verdicts_free(&v);
	elfr_cfi_close(cf);
	return rc;
}

static void *slurp(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0)
		return NULL;
	size_t n = (size_t)sb.st_size, got = 0;
	char *p = malloc(n ? n : 1);
	while (p && got < n) {
		ssize_t r = read(fd, p + got, n - got);
		if (r <= 0) {
			free(p);
			p = NULL;
			break;
		}
		got += (size_t)r;
	}
	close(fd);
	*size = n;
	return p;
}

static double min_d(double a, double b)
{
	return a < b ? a : b;
}

int main(int argc, char **argv)
{
	double repeat = 0;
	int i = 1;
	if (argc > 2 && strcmp(argv[1], "-r") == 0) {
		repeat = atof(argv[2]);
		i = 3;
	}
	if (i + 1 != argc) {
		fprintf(stderr, "usage: convert_only [-r SECONDS] FILE\n");
		return 2;
	}
	const char *path = argv[i];
	run_stats st;
	memset(&st, 0, sizeof st);
	if (convert(path, NULL, 0, &st))
		return 1;
	/* Only with -r (the statistics run): the timed runs of the
	 * benchmark measure this process's CPU, which must be the
	 * conversion's alone. */
	if (repeat > 0)
		st.nrows = count_rows(path);
	printf("file=%s section=%s eh_bytes=%zu fdes=%zu bad=%zu rows=%zu "
	       "funcs=%zu fres=%zu sframe_bytes=%zu "
	       "t_open=%.6f t_project=%.6f t_encode=%.6f",
	       path, st.secname, st.eh_size, st.nfdes, st.nbad, st.nrows,
	       st.nfuncs, st.nfres, st.sframe_size, st.t_open, st.t_project,
	       st.t_encode);
	if (repeat > 0) {
		size_t size;
		void *img = slurp(path, &size);
		if (!img) {
			fprintf(stderr, "convert_only: %s: cannot read\n", path);
			return 1;
		}
		double best_o = 1e9, best_p = 1e9, best_e = 1e9, best_c = 1e9;
		double start = cpu_now();
		unsigned iters = 0;
		do {
			run_stats r;
			if (convert(path, img, size, &r))
				return 1;
			best_o = min_d(best_o, r.t_open);
			best_p = min_d(best_p, r.t_project);
			best_e = min_d(best_e, r.t_encode);
			/* The copy the library makes, alone. */
			double c0 = cpu_now();
			char *copy = malloc(size ? size : 1);
			if (copy) {
				memcpy(copy, img, size);
				__asm__ volatile("" : : "r"(copy) : "memory");
			}
			free(copy);
			best_c = min_d(best_c, cpu_now() - c0);
			iters++;
		} while (cpu_now() - start < repeat || iters < 3);
		printf(" iters=%u best_open=%.6f best_project=%.6f "
		       "best_encode=%.6f best_memcpy=%.6f",
		       iters, best_o, best_p, best_e, best_c);
		free(img);
	}
	printf("\n");
	return 0;
}
