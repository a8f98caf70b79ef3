/* Internals of the public API (include/eh2sframe.h): the handle and the
 * helpers the files of src/api share. Everything goes through the module
 * headers of src/convert, src/elfpatch, src/elf, src/sframe and src/verify. */
#ifndef E2S_API_INT_H
#define E2S_API_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/err.h"
#include "../common/mem.h"
#include "../convert/convert.h"
#include "../elf/elfr_sframe.h"
#include "../verify/vf.h"
#include "eh2sframe.h"

typedef struct {
	uint64_t off, size, addr;
} api_sec;

struct eh2s_file {
	uint8_t *in;          /* the input's bytes: map's, or a copy */
	size_t in_size;
	/* eh2s_open maps the file: a report or a conversion faults in only
	 * the pages it reads (--stats on a 110 MB library reads 6 MB). */
	e2s_map map;
	uint8_t *out;         /* converted image, NULL before eh2s_convert */
	size_t out_size;
	int mode;             /* permission bits of the source file */
	unsigned machine;
	bool rel;
	bool had_sframe;
	bool debug_frame;     /* the last conversion read .debug_frame */
	api_sec *secs;        /* .sframe sections of the current image */
	size_t nsecs;
	/* Sizes of the current image's CFI sections, by name (every
	 * section of that name), for eh2s_get_stats. */
	uint64_t eh_frame_size, eh_frame_hdr_size, debug_frame_size;
	/* The input's ELF parse from eh2s_open, until a conversion takes
	 * it (then NULL: a later conversion parses the input again). */
	elfp_file *in_view;
	bool v2_object;       /* a relocatable object with SFrame V2: its
	                       * .sframe is rebuilt unless V2 is asked for */
	bool have_result;     /* summary and functions are valid */
	eh2s_summary sum;     /* totals (by_reason NULL) */
	size_t by_reason[EH2S_SKIP_COUNT]; /* [0] = converted */
	eh2s_function *fns;
	size_t nfns;
};

/* The image the getters describe: converted when there is one. */
static inline const uint8_t *api_cur(const eh2s_file *f, size_t *size)
{
	*size = f->out ? f->out_size : f->in_size;
	return f->out ? f->out : f->in;
}

/* Fill err from an internal diag (or a plain code) and return the
 * public status. */
eh2s_status api_fail(eh2s_error *err, const e2s_diag *d);
eh2s_status api_usage(eh2s_error *err, eh2s_status code, const char *msg);
eh2s_status api_ok(eh2s_error *err);
eh2s_status api_status(e2s_err e);
/* A verification's outcome: EH2S_E_VERIFY when a function mismatches
 * or is extra (with a message), else OK. */
eh2s_status api_verified(const vf_counts *n, eh2s_error *err);

/* One verification (api_verify.c): s (decoded .sframe) against t, the
 * records of sec (cfi_parse_records: the verifier runs the programs
 * itself). Issues go to on_issue (may be NULL), missing and skipped
 * functions only when asked; names (may be NULL) gives function names
 * and section indices. */
typedef struct {
	const cfi_section *sec;
	const cfi_table *t;
	const sfr_section *s;
	const elfr_cfi *names;
	eh2s_verify_cb on_issue;
	void *cb_ctx;
	bool report_missing, report_skipped;
	size_t bad_relocs;     /* reported in the result */
} api_verify_in;
/* Run it: on success *out (NULL, or its size checked) gets the counts
 * and the status says whether they match (api_verified); on failure out
 * stays as it was. */
eh2s_status api_verify_run(const api_verify_in *v, eh2s_verify_result *out,
			   eh2s_error *err);

/* ---- Size-prefixed structs (include/eh2sframe.h, "Keeping the ABI") --
 * API_END(T, last): the size of the first release's T, whose last field
 * was `last`; a caller's size below it is a struct never initialised.
 * Fields appended later leave these as they are. */
#define API_END(type, member) \
	(offsetof(type, member) + sizeof(((type *)0)->member))

/* The caller's struct *p (its first member its size) copied into *ours
 * (ours_size bytes, cleared first, its size set to ours; fields the
 * caller's header lacks stay 0; p NULL: the defaults): USAGE when its
 * size is below min, UNSUPPORTED when it is larger than ours and a byte
 * beyond ours is not zero. what names the type in the message. */
eh2s_status api_struct_in(const void *p, size_t min, void *ours,
			  size_t ours_size, const char *what, eh2s_error *err);
/* An output struct's size checked (USAGE as above) before the call
 * fills it. */
eh2s_status api_struct_check(const void *p, size_t min, const char *what,
			     eh2s_error *err);
/* *ours (ours_size bytes, its size member ignored) copied to the
 * caller's *p, as many bytes as its size says; p->size is kept. */
void api_struct_out(void *p, const void *ours, size_t ours_size);

/* Per-reason counts (counts[0..n), index conv_skip) into the caller's
 * by_reason array of len entries (either may be NULL/0). */
void api_by_reason(size_t *by_reason, size_t len, const size_t *counts,
		   size_t n);

/* The first release's sizes of the structs more than one file checks. */
#define API_SUMMARY_V1 API_END(eh2s_summary, sframe_sections)
#define API_VERIFY_RESULT_V1 API_END(eh2s_verify_result, failed_path)

/* The caller's conversion options (NULL: defaults) checked and copied
 * into *ours (sizeof ours; its SFrame version checked too). */
eh2s_status api_convert_opts(const eh2s_convert_opts *o,
			     eh2s_convert_opts *ours, eh2s_error *err);
/* 0, 2 or 3; else UNSUPPORTED. */
eh2s_status api_sframe_version(int version, eh2s_error *err);
/* A run's totals (conv_tally) as the API says them: by_reason gets the
 * per-reason counts, [0] = converted and in .sframe. */
void api_summary_of(const conv_tally *n, size_t sframe_bytes,
		    size_t nsections, eh2s_summary *sum,
		    size_t by_reason[EH2S_SKIP_COUNT]);
/* *ours and the per-reason counts[0..n) to the caller's summary (its
 * size already checked): counts into its by_reason array, the rest up
 * to its size. */
void api_summary_out(eh2s_summary *out, const eh2s_summary *ours,
		     const size_t *counts, size_t n);
/* A verification's outcome into the caller's *out (NULL, or its size
 * checked), with failed_path. */
void api_verify_out(eh2s_verify_result *out, const vf_counts *n,
		    size_t bad_relocs, const char *failed_path);

/* Whole-file I/O. */
e2s_err api_read_file(const char *path, uint8_t **data, size_t *size,
		      int *mode, e2s_diag *d);
e2s_err api_write_file(const char *path, const void *data, size_t size,
		       int mode, e2s_diag *d);

/* What the getters say about the current image, from ef (its parse):
 * machine, type, .sframe sections (f->secs), CFI section sizes. */
e2s_err api_scan(eh2s_file *f, const elfp_file *ef, e2s_diag *d);

/* Decode the current image's .sframe from memory: linked files from
 * the section bytes, ET_REL through elfr_sframe_read_mem (it resolves the
 * relocations). */
e2s_err api_decode(const eh2s_file *f, sfr_section *s, e2s_diag *d);

/* Drop the per-function results. */
void api_free_result(eh2s_file *f);

#endif
