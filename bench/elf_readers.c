/* elf_readers: eh2sframe's own ELF reader (src/elf/elf_file.h) and
 * elfutils' libelf doing the same work on the same files, timed side by
 * side, and both run on damaged copies of those files.
 *
 * The work, per file and reader: open; every section header and its
 * name; find .eh_frame, .debug_frame, .symtab and .dynsym on the way;
 * reach each CFI section's bytes (inflated when SHF_COMPRESSED); read
 * every symbol of both tables with its name. The bytes are reached, not
 * scanned: whatever reads them next does the same after either reader.
 * Each reader sums what it saw into a digest (counts, sizes, values,
 * first name characters); the two digests must be equal, so both did
 * the same work.
 *
 *   elf_readers [-S] [-t SECONDS] [-R ROUNDS] FILE...
 *       time both readers on each file in two modes: "mem" (open a
 *       buffer already in memory: elfr_open_view / elf_memory) and
 *       "path" (open the file each time: elfr_open / open + elf_begin
 *       ELF_C_READ_MMAP). SECONDS (default 2) of CPU time per file and
 *       mode, split into ROUNDS (default 5); each round runs one reader,
 *       then the other (the order alternates), for the same time;
 *       prints the median per-iteration CPU time of each reader and
 *       libelf/ours, one tab-separated line per file and mode. The
 *       readers' digests must be equal (ER_DEBUG=1 prints both when
 *       they are not) and stay so every iteration. -S:
 *       without the symbols (the part a conversion reads; it loads
 *       symbols only to name functions in messages and dumps).
 *   elf_readers -r ours|libelf|none -n N FILE
 *       one reader only, N times in "path" mode, then the process's peak
 *       RSS (KiB), for the memory comparison ("none" is the process
 *       alone).
 *   elf_readers -f CASES [-s SEED] [-o DIR] FILE...
 *       robustness: CASES damaged copies of each file (a truncation, or
 *       1-8 bytes overwritten in the ELF header, the section or program
 *       header tables, the section name table, a symbol table or its
 *       string table, or a compression header), each given to both
 *       readers in a child process; the copy ends at a PROT_NONE page,
 *       so a read past its end faults even in the uninstrumented libelf.
 *       Counts crashes and sanitizer reports (the child's exit) per
 *       reader, the files each refuses (libelf opens lazily: opened
 *       with no section of the sections the file had counts as
 *       refused), the cases where the readers
 *       disagree (one opens what the other refuses; or different
 *       sections, CFI bytes or symbols, counted at the first that
 *       differs) and those where a reader saw just what it saw in the
 *       undamaged file; a crashing input, and the first few
 *       disagreements of each kind in each file up to 32 MiB, are
 *       written to DIR. Exit status 1
 *       when anything crashed.
 *   elf_readers -w FILE...
 *       why: ours' message when it refuses the file, and both digests
 *       (for the files -f saved).
 *
 * Times are CPU times (CLOCK_PROCESS_CPUTIME_ID). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elf/elf_file.h"

/* What a reader saw. Equal digests: the same work on the same bytes. */
typedef struct {
	unsigned long opened;  /* the reader accepted the file */
	unsigned long nsec;    /* section headers read (section 0 excluded) */
	unsigned long nnames;  /* sections whose name could be read */
	unsigned long namelen; /* their lengths, summed */
	unsigned long ncfi;    /* CFI sections whose bytes were reached */
	unsigned long cfibad;  /* CFI sections whose bytes were refused */
	unsigned long cfisize; /* their sizes (inflated), summed */
	unsigned long cfiedge; /* first and last bytes, summed */
	unsigned long ntab;    /* symbol tables read */
	unsigned long nsym;    /* symbols read, entry 0 included */
	unsigned long nsymname;
	unsigned long symsum;  /* values, sizes, info, st_shndx, name[0] */
} digest;

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cfi_name_p(const char *n)
{
	return n && (strcmp(n, ".eh_frame") == 0 || strcmp(n, ".debug_frame") == 0);
}

static void cfi_bytes(digest *g, const unsigned char *p, size_t n)
{
	if (!p || !n) {
		g->cfibad++;
		return;
	}
	g->ncfi++;
	g->cfisize += n;
	g->cfiedge += p[0] + p[n - 1];
}

static void sym_seen(digest *g, unsigned long value, unsigned long size,
		     unsigned info, unsigned shndx, const char *name)
{
	g->nsym++;
	g->symsum += value + size + info + shndx;
	if (name) {
		g->nsymname++;
		g->symsum += (unsigned char)name[0];
	}
}

/* -S: skip the symbols (what a conversion reads: the symbols are only
 * loaded for function names in messages and dumps). */
static int no_symbols;

/* ---- ours ------------------------------------------------------------ */

enum { MAXPICK = 16 };

static void ours_work(const elfr_file *f, digest *g)
{
	size_t cfi[MAXPICK], tab[MAXPICK];
	size_t ncfi = 0, ntab = 0;
	g->opened = 1;
	for (size_t i = 1; i < f->shnum; i++) {
		const elfr_shdr *s = &f->sh[i];
		const char *n = elfr_section_name(f, i);
		g->nsec++;
		if (n) {
			g->nnames++;
			g->namelen += strlen(n);
		}
		if (cfi_name_p(n) && ncfi < MAXPICK)
			cfi[ncfi++] = i;
		if ((s->type == SHT_SYMTAB || s->type == SHT_DYNSYM) && ntab < MAXPICK &&
		    !no_symbols)
			tab[ntab++] = i;
	}
	for (size_t c = 0; c < ncfi; c++) {
		size_t n = 0;
		if (f->sh[cfi[c]].flags & SHF_COMPRESSED) {
			uint8_t *buf = NULL;
			if (elfr_section_inflate(f, cfi[c], &buf, &n, NULL) == E2S_ERR_OK)
				cfi_bytes(g, buf, n);
			else
				g->cfibad++;
			free(buf);
		} else {
			const uint8_t *p = elfr_section_data(f, cfi[c], &n);
			cfi_bytes(g, p, n);
		}
	}
	for (size_t c = 0; c < ntab; c++) {
		elfr_symtab t;
		elfr_sym s;
		if (!elfr_symtab_init(f, tab[c], &t))
			continue;
		g->ntab++;
		for (size_t k = 0; elfr_symtab_get(&t, k, &s); k++)
			sym_seen(g, s.value, s.size, s.info, s.st_shndx,
				 elfr_sym_name(&t, &s));
	}
}

static void ours_mem(const void *img, size_t size, digest *g)
{
	elfr_file *f;
	if (elfr_open_view(img, size, 0, &f, NULL) != E2S_ERR_OK)
		return;
	ours_work(f, g);
	elfr_close(f);
}

static void ours_path(const char *path, digest *g)
{
	elfr_file *f;
	if (elfr_open(path, 0, &f, NULL) != E2S_ERR_OK)
		return;
	ours_work(f, g);
	elfr_close(f);
}

/* ---- libelf ---------------------------------------------------------- */

static void libelf_work(Elf *e, digest *g)
{
	size_t shstrndx;
	GElf_Ehdr eh;
	Elf_Scn *cfi[MAXPICK], *tab[MAXPICK];
	size_t ncfi = 0, ntab = 0, shnum;
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) ||
	    elf_getshdrnum(e, &shnum) != 0)
		return;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		shstrndx = 0;
	g->opened = 1;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn)) != NULL;) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		g->nsec++;
		if (n) {
			g->nnames++;
			g->namelen += strlen(n);
		}
		if (cfi_name_p(n) && ncfi < MAXPICK)
			cfi[ncfi++] = scn;
		if ((sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) && ntab < MAXPICK &&
		    !no_symbols)
			tab[ntab++] = scn;
	}
	for (size_t c = 0; c < ncfi; c++) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(cfi[c], &sh) ||
		    ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(cfi[c], 0, 0) < 0) ||
		    sh.sh_type == SHT_NOBITS || !(d = elf_getdata(cfi[c], NULL))) {
			g->cfibad++;
			continue;
		}
		cfi_bytes(g, d->d_buf, d->d_size);
	}
	for (size_t c = 0; c < ntab; c++) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(tab[c], &sh) || !(d = elf_getdata(tab[c], NULL)))
			continue;
		g->ntab++;
		size_t n = d->d_size / gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
		for (size_t k = 0; k < n; k++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)k, &s))
				break;
			sym_seen(g, s.st_value, s.st_size, s.st_info, s.st_shndx,
				 elf_strptr(e, sh.sh_link, s.st_name));
		}
	}
}

static void libelf_mem(const void *img, size_t size, digest *g)
{
	Elf *e = elf_memory((char *)img, size);
	if (!e)
		return;
	libelf_work(e, g);
	elf_end(e);
}

static void libelf_path(const char *path, digest *g)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e) {
		libelf_work(e, g);
		elf_end(e);
	}
	close(fd);
}

/* ---- timing ---------------------------------------------------------- */

typedef struct {
	const char *path;
	void *img;
	size_t size;
	int path_mode;
	/* elf_memory may write into the image: inflating a section
	 * rewrites its header in place. With a compressed section the
	 * header table is put back after each libelf run (a copy of a few
	 * KiB, charged to libelf). */
	const void *shdrs;
	size_t shoff, shlen;
} input;

static void run_one(int lib, const input *in, digest *g)
{
	memset(g, 0, sizeof *g);
	if (in->path_mode)
		(lib ? libelf_path : ours_path)(in->path, g);
	else
		(lib ? libelf_mem : ours_mem)(in->img, in->size, g);
	if (lib && !in->path_mode && in->shdrs)
		memcpy((char *)in->img + in->shoff, in->shdrs, in->shlen);
}

/* in->shdrs when the file has a compressed section. */
static void *keep_shdrs(input *in)
{
	elfr_file *f;
	void *copy = NULL;
	if (elfr_open_view(in->img, in->size, 0, &f, NULL) != E2S_ERR_OK)
		return NULL;
	for (size_t i = 1; i < f->shnum; i++)
		if (f->sh[i].flags & SHF_COMPRESSED) {
			in->shoff = f->shoff;
			in->shlen = f->shnum * (f->is64 ? 64 : 40);
			copy = malloc(in->shlen);
			if (copy)
				memcpy(copy, (char *)in->img + in->shoff, in->shlen);
			break;
		}
	elfr_close(f);
	return copy;
}

/* Iterations of one reader for at least budget CPU seconds: the time of
 * one, and whether every digest equalled *want. */
static double batch(int lib, const input *in, double budget, const digest *want,
		    int *same)
{
	double t0 = cpu_now(), t;
	long n = 0;
	do {
		digest g;
		run_one(lib, in, &g);
		if (memcmp(&g, want, sizeof g) != 0)
			*same = 0;
		n++;
	} while ((t = cpu_now() - t0) < budget);
	return t / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void *read_file(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	void *p = NULL;
	if (fd < 0 || fstat(fd, &st) != 0)
		goto out;
	*size = (size_t)st.st_size;
	p = malloc(*size ? *size : 1);
	for (size_t got = 0; p && got < *size;) {
		ssize_t r = read(fd, (char *)p + got, *size - got);
		if (r <= 0) {
			free(p);
			p = NULL;
			break;
		}
		got += (size_t)r;
	}
out:
	if (fd >= 0)
		close(fd);
	if (!p)
		fprintf(stderr, "elf_readers: %s: %s\n", path, strerror(errno));
	return p;
}

enum { MAXROUNDS = 64 };

static int time_file(const char *path, double seconds, int rounds)
{
	size_t size;
	void *img = read_file(path, &size);
	int bad = 0;
	if (!img)
		return 1;
	for (int mode = 0; mode < 2; mode++) {
		input in = {path, img, size, mode, NULL, 0, 0};
		void *shdrs = keep_shdrs(&in);
		in.shdrs = shdrs;
		digest want, other;
		double t[2][MAXROUNDS];
		int same = 1;
		run_one(0, &in, &want);
		run_one(1, &in, &other);
		if (memcmp(&want, &other, sizeof want) != 0 || !want.opened) {
			if (getenv("ER_DEBUG")) {
				const unsigned long *a = (const void *)&want, *b = (const void *)&other;
				for (size_t k = 0; k < sizeof want / sizeof *a; k++)
					fprintf(stderr, "%zu: %lu %lu\n", k, a[k], b[k]);
			}
			fprintf(stderr, "elf_readers: %s: the readers disagree%s\n",
				path, want.opened ? "" : " (or refuse it)");
			bad = 1;
			free(shdrs);
			break;
		}
		for (int r = 0; r < rounds; r++) {
			int first = r & 1;
			double budget = seconds / rounds / 2;
			t[first][r] = batch(first, &in, budget, &want, &same);
			t[!first][r] = batch(!first, &in, budget, &want, &same);
		}
		qsort(t[0], (size_t)rounds, sizeof(double), cmp_double);
		qsort(t[1], (size_t)rounds, sizeof(double), cmp_double);
		double ours = t[0][rounds / 2], lib = t[1][rounds / 2];
		const char *base = strrchr(path, '/');
		printf("%s\t%.1f\t%s\t%lu\t%lu\t%lu\t%.4f\t%.4f\t%.2f%s\n",
		       base ? base + 1 : path, (double)size / 1e6,
		       mode ? "path" : "mem", want.nsec, want.nsym, want.cfisize,
		       ours * 1e3, lib * 1e3, lib / ours,
		       same ? "" : "\tDIGESTS-CHANGED");
		fflush(stdout);
		bad |= !same;
		free(shdrs);
	}
	free(img);
	return bad;
}

/* ---- robustness ------------------------------------------------------ */

static unsigned long long rng_state;

static unsigned long long rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static size_t rnd_below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

/* Where damage is interesting: [off, off+len) ranges of the file. */
typedef struct {
	size_t off, len;
} range;

enum { MAXRANGES = 64 };

static void add_range(range *r, size_t *n, size_t size, uint64_t off, uint64_t len)
{
	if (*n < MAXRANGES && off < size && len) {
		if (len > size - off)
			len = size - off;
		r[(*n)++] = (range){(size_t)off, (size_t)len};
	}
}

/* The ELF header, both header tables, the section name table, symbol
 * tables (their first 4 KiB), their string tables and compression
 * headers, as the undamaged file's own reader finds them. */
static size_t targets(const void *img, size_t size, range *r)
{
	size_t n = 0;
	elfr_file *f;
	add_range(r, &n, size, 0, 64);
	if (elfr_open_view(img, size, 0, &f, NULL) != E2S_ERR_OK)
		return n;
	unsigned shent = f->is64 ? 64 : 40, phent = f->is64 ? 56 : 32;
	add_range(r, &n, size, f->shoff, (uint64_t)f->shnum * shent);
	add_range(r, &n, size, f->phoff, (uint64_t)f->phnum * phent);
	if (f->shstrndx < f->shnum)
		add_range(r, &n, size, f->sh[f->shstrndx].offset, f->sh[f->shstrndx].size);
	for (size_t i = 1; i < f->shnum; i++) {
		const elfr_shdr *s = &f->sh[i];
		if (s->type == SHT_SYMTAB || s->type == SHT_DYNSYM) {
			add_range(r, &n, size, s->offset, s->size < 4096 ? s->size : 4096);
			if (s->link < f->shnum)
				add_range(r, &n, size, f->sh[s->link].offset,
					  f->sh[s->link].size < 4096 ? f->sh[s->link].size : 4096);
		}
		if (s->flags & SHF_COMPRESSED)
			add_range(r, &n, size, s->offset, 24);
	}
	elfr_close(f);
	return n;
}

/* A buffer of size bytes that ends where a PROT_NONE page begins. */
typedef struct {
	unsigned char *map, *p;
	size_t maplen;
} guarded;

static int guard_alloc(guarded *g, size_t size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t body = (size + pg - 1) / pg * pg;
	g->maplen = body + pg;
	g->map = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED)
		return -1;
	if (mprotect(g->map + body, pg, PROT_NONE) != 0)
		return -1;
	g->p = g->map + body - size;
	return 0;
}

static void guard_free(guarded *g)
{
	munmap(g->map, g->maplen);
}

typedef struct {
	long cases, crash[2], refused[2], only_refused[2], as_undamaged[2],
		sections_differ, cfi_differs, syms_differ, agree;
} tally;

/* Both readers on img in a child: what each saw, or which one died. */
static int run_case(const unsigned char *img, size_t size, digest out[2],
		    int *stage)
{
	*stage = -1;
	pid_t pid = fork();
	if (pid == 0) {
		alarm(20);
		for (int lib = 0; lib < 2; lib++) {
			*stage = lib;
			memset(&out[lib], 0, sizeof out[lib]);
			(lib ? libelf_mem : ours_mem)(img, size, &out[lib]);
		}
		*stage = 2;
		_exit(0);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 && *stage == 2 ? 0 : 1;
}

static void save(const char *dir, const char *path, long c, const char *what,
		 const unsigned char *img, size_t size)
{
	char name[4096];
	const char *base = strrchr(path, '/');
	snprintf(name, sizeof name, "%s/%s-%s-%ld.bin", dir, what,
		 base ? base + 1 : path, c);
	FILE *fp = fopen(name, "wb");
	if (fp) {
		fwrite(img, 1, size, fp);
		fclose(fp);
	}
}

/* The category of a case both readers survived ("" when they agree);
 * undamaged: what both saw in the file before the damage. */
static const char *judge(const digest d[2], const digest *undamaged, tally *t)
{
	int open[2];
	for (int k = 0; k < 2; k++) {
		/* libelf opens lazily: a file whose section headers lie past
		 * its end opens with none. Opened with nothing in it counts
		 * as refused. */
		open[k] = d[k].opened && (d[k].nsec || !undamaged->nsec);
		t->refused[k] += !open[k];
		t->as_undamaged[k] += !memcmp(&d[k], undamaged, sizeof *undamaged);
	}
	if (open[0] != open[1]) {
		t->only_refused[open[1] ? 0 : 1]++;
		return open[1] ? "only-ours-refuses" : "only-libelf-refuses";
	}
	if (!open[0]) {
		t->agree++;
		return "";
	}
	if (d[0].nsec != d[1].nsec || d[0].nnames != d[1].nnames ||
	    d[0].namelen != d[1].namelen) {
		t->sections_differ++;
		return "sections-differ";
	}
	if (d[0].ncfi != d[1].ncfi || d[0].cfibad != d[1].cfibad ||
	    d[0].cfisize != d[1].cfisize || d[0].cfiedge != d[1].cfiedge) {
		t->cfi_differs++;
		return "cfi-differs";
	}
	if (memcmp(&d[0], &d[1], sizeof d[0]) != 0) {
		t->syms_differ++;
		return "syms-differ";
	}
	t->agree++;
	return "";
}

static void print_tally(const char *name, const tally *t)
{
	printf("%s\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld\n",
	       name, t->cases, t->crash[0], t->crash[1], t->refused[0],
	       t->refused[1], t->only_refused[0], t->only_refused[1],
	       t->sections_differ, t->cfi_differs, t->syms_differ, t->agree,
	       t->as_undamaged[0], t->as_undamaged[1]);
	fflush(stdout);
}

static int fuzz_file(const char *path, long cases, const char *dir, tally *all)
{
	size_t size;
	unsigned char *orig = read_file(path, &size);
	range r[MAXRANGES];
	guarded whole;
	tally t = {0};
	if (!orig)
		return 1;
	size_t nr = targets(orig, size, r);
	if (guard_alloc(&whole, size) != 0) {
		free(orig);
		return 1;
	}
	memcpy(whole.p, orig, size);
	/* The child's results and progress, shared with the parent. */
	digest *out = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int *stage = (int *)(out + 2);
	digest undamaged;
	memset(&undamaged, 0, sizeof undamaged);
	ours_mem(orig, size, &undamaged);
	long saved[5] = {0};
	for (long c = 0; c < cases; c++) {
		const unsigned char *img = whole.p;
		size_t len = size;
		guarded cut = {0};
		size_t where[8];
		int nflip = 0;
		if (rnd_below(4) == 0) {
			/* Truncation: inside a target range or anywhere. */
			const range *g = &r[rnd_below(nr)];
			len = rnd_below(3) ? g->off + rnd_below(g->len) : rnd_below(size);
			if (guard_alloc(&cut, len) != 0)
				continue;
			memcpy(cut.p, orig, len);
			img = cut.p;
		} else {
			nflip = 1 + (int)rnd_below(8);
			const range *g = &r[rnd_below(nr)];
			for (int k = 0; k < nflip; k++) {
				where[k] = g->off + rnd_below(g->len);
				unsigned v = (unsigned)rnd();
				whole.p[where[k]] = (unsigned char)(v & 0x100 ? v >> 16
								     : whole.p[where[k]] ^ (1u << (v & 7)));
			}
		}
		t.cases++;
		int rc = run_case(img, len, out, stage);
		if (rc != 0) {
			int who = *stage == 1 ? 1 : 0;
			t.crash[who]++;
			save(dir, path, c, who ? "crash-libelf" : "crash-ours", img, len);
			fprintf(stderr, "elf_readers: %s: case %ld: %s died\n", path,
				c, who ? "libelf" : "ours");
		} else {
			const char *what = judge(out, &undamaged, &t);
			/* A few disagreements of each kind, to look at. */
			int kind = *what == 'o' ? (what[5] == 'o' ? 0 : 1)
			    : *what == 's' ? (what[1] == 'e' ? 2 : 3) : 4;
			if (*what && saved[kind] < 3 && len <= (32u << 20)) {
				save(dir, path, c, what, img, len);
				saved[kind]++;
			}
		}
		for (int k = nflip - 1; k >= 0; k--)
			whole.p[where[k]] = orig[where[k]];
		if (cut.map)
			guard_free(&cut);
	}
	const char *base = strrchr(path, '/');
	print_tally(base ? base + 1 : path, &t);
	all->cases += t.cases;
	for (int k = 0; k < 2; k++) {
		all->crash[k] += t.crash[k];
		all->refused[k] += t.refused[k];
		all->only_refused[k] += t.only_refused[k];
		all->as_undamaged[k] += t.as_undamaged[k];
	}
	all->sections_differ += t.sections_differ;
	all->cfi_differs += t.cfi_differs;
	all->syms_differ += t.syms_differ;
	all->agree += t.agree;
	munmap(out, 4096);
	guard_free(&whole);
	free(orig);
	return 0;
}

/* ---- main ------------------------------------------------------------ */

static int usage(void)
{
	fprintf(stderr,
		"usage: elf_readers [-S] [-t SECONDS] [-R ROUNDS] FILE...\n"
		"       elf_readers -r ours|libelf|none -n N FILE\n"
		"       elf_readers -f CASES [-s SEED] [-o DIR] FILE...\n"
		"       elf_readers -w FILE...\n");
	return 2;
}

int main(int argc, char **argv)
{
	double seconds = 2.0;
	int rounds = 5, opt, bad = 0, why = 0;
	long n = 1, cases = 0;
	const char *reader = NULL, *dir = ".";
	rng_state = 0x9e3779b97f4a7c15ULL;
	while ((opt = getopt(argc, argv, "t:R:r:n:f:s:o:wS")) != -1) {
		switch (opt) {
		case 't': seconds = atof(optarg); break;
		case 'R': rounds = atoi(optarg); break;
		case 'r': reader = optarg; break;
		case 'n': n = atol(optarg); break;
		case 'f': cases = atol(optarg); break;
		case 's': rng_state = strtoull(optarg, NULL, 0) | 1; break;
		case 'o': dir = optarg; break;
		case 'w': why = 1; break;
		case 'S': no_symbols = 1; break;
		default: return usage();
		}
	}
	if (optind >= argc || rounds < 1 || rounds > MAXROUNDS || seconds <= 0)
		return usage();
	if (elf_version(EV_CURRENT) == EV_NONE)
		return 1;
	if (why) {
		for (int i = optind; i < argc; i++) {
			size_t size;
			void *img = read_file(argv[i], &size);
			elfr_file *f;
			e2s_diag d;
			char msg[256] = "opens";
			digest g[2];
			if (!img)
				continue;
			if (elfr_open_view(img, size, 0, &f, &d) != E2S_ERR_OK)
				e2s_diag_format(&d, msg, sizeof msg);
			else
				elfr_close(f);
			for (int lib = 0; lib < 2; lib++) {
				memset(&g[lib], 0, sizeof g[lib]);
				(lib ? libelf_mem : ours_mem)(img, size, &g[lib]);
			}
			printf("%s: ours: %s; ", argv[i], msg);
			for (int lib = 0; lib < 2; lib++)
				printf("%s: opened %lu sections %lu names %lu cfi %lu/%lu bad %lu tabs %lu syms %lu/%lu sum %lu%s",
				       lib ? "libelf" : "ours", g[lib].opened, g[lib].nsec,
				       g[lib].nnames, g[lib].ncfi, g[lib].cfisize, g[lib].cfibad,
				       g[lib].ntab, g[lib].nsym, g[lib].nsymname, g[lib].symsum,
				       lib ? "\n" : "; ");
			free(img);
		}
		return 0;
	}
	if (reader) {
		int lib = strcmp(reader, "libelf") == 0;
		int none = strcmp(reader, "none") == 0;
		if (!lib && !none && strcmp(reader, "ours") != 0)
			return usage();
		input in = {argv[optind], NULL, 0, 1, NULL, 0, 0};
		digest g = {0};
		for (long i = 0; i < n && !none; i++)
			run_one(lib, &in, &g);
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		printf("%s\t%s\t%ld\t%lu\n", argv[optind], reader, ru.ru_maxrss, g.nsym);
		return 0;
	}
	if (cases > 0) {
		tally all = {0};
		signal(SIGPIPE, SIG_IGN);
		printf("file\tcases\tcrash_ours\tcrash_libelf\trefused_ours\trefused_libelf"
		       "\tonly_ours_refuses\tonly_libelf_refuses\tsections_differ"
		       "\tcfi_differs\tsyms_differ\tagree\tours_as_undamaged"
		       "\tlibelf_as_undamaged\n");
		for (int i = optind; i < argc; i++)
			bad |= fuzz_file(argv[i], cases, dir, &all);
		print_tally("all", &all);
		return bad || all.crash[0] || all.crash[1];
	}
	printf("file\tMB\tmode\tsections\tsymbols\tcfi_bytes\tours_ms\tlibelf_ms\tlibelf/ours\n");
	for (int i = optind; i < argc; i++)
		bad |= time_file(argv[i], seconds, rounds);
	return bad;
}
