/* Internals of the public API (include/eh2sframe.h): the handle and the
 * helpers its three files share. Everything goes through the module
 * headers of src/convert, src/elfpatch, src/elf, src/sframe and src/verify. */
#ifndef E2S_API_INT_H
#define E2S_API_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/err.h"
#include "../elf/sfr_file.h"
#include "../verify/vf.h"
#include "eh2sframe.h"

typedef struct {
	uint64_t off, size, addr;
} api_sec;

struct eh2s_file {
	uint8_t *in;          /* the bytes eh2s_open read */
	size_t in_size;
	uint8_t *out;         /* converted image, NULL before eh2s_convert */
	size_t out_size;
	int mode;             /* permission bits of the source file */
	unsigned machine;
	bool rel;
	bool had_sframe;
	bool debug_frame;     /* the last conversion read .debug_frame */
	api_sec *secs;        /* .sframe sections of the current image */
	size_t nsecs;
	bool have_result;     /* summary and functions are valid */
	eh2s_summary sum;
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
/* A verification's outcome: its counts into out (when not NULL), and
 * EH2S_E_VERIFY when a function mismatches or is extra. */
eh2s_status api_verified(const vf_counts *n, eh2s_verify_result *out,
			 eh2s_error *err);

/* Whole-file I/O. */
e2s_err api_read_file(const char *path, uint8_t **data, size_t *size,
		      int *mode, e2s_diag *d);
e2s_err api_write_file(const char *path, const void *data, size_t size,
		       int mode, e2s_diag *d);

/* Find the .sframe sections of image (f->secs). */
e2s_err api_scan(eh2s_file *f, e2s_diag *d);

/* Decode the current image's .sframe from memory: linked files from
 * the section bytes, ET_REL through sfr_elf_read_mem (it resolves the
 * relocations). */
e2s_err api_decode(const eh2s_file *f, sfr_section *s, e2s_diag *d);

/* Drop the per-function results. */
void api_free_result(eh2s_file *f);

#endif
