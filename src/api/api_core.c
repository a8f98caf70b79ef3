/* Public API: handles, errors, file I/O (include/eh2sframe.h). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../elfpatch/elfpatch.h"
#include "../common/atomic.h"
#include "../common/mem.h"
#include "api_int.h"

#define API_STR_(x) #x
#define API_STR(x) API_STR_(x)

/* The one version: the header's. */
const char *eh2s_version(void)
{
	return API_STR(EH2S_VERSION_MAJOR) "." API_STR(EH2S_VERSION_MINOR)
		"." API_STR(EH2S_VERSION_PATCH);
}

void eh2s_free(void *p)
{
	free(p);
}

static const char *const status_text[] = {
	[EH2S_OK] = "success",
	[EH2S_E_NOMEM] = "out of memory",
	[EH2S_E_IO] = "input/output error",
	[EH2S_E_NOT_ELF] = "not an ELF file",
	[EH2S_E_BAD_ELF] = "malformed ELF file",
	[EH2S_E_UNSUPPORTED] = "not supported",
	[EH2S_E_NO_CFI] = "no .eh_frame or .debug_frame",
	[EH2S_E_BAD_CFI] = "malformed call-frame information",
	[EH2S_E_BAD_SFRAME] = "malformed .sframe section",
	[EH2S_E_EXISTS] = "file already has an .sframe section",
	[EH2S_E_NO_FUNCS] = "no function could be converted to SFrame",
	[EH2S_E_VERIFY] = ".sframe does not match the DWARF CFI",
	[EH2S_E_USAGE] = "invalid argument",
	[EH2S_E_INTERNAL] = "internal error",
};

const char *eh2s_strerror(eh2s_status code)
{
	if ((unsigned)code >= sizeof status_text / sizeof status_text[0])
		return "unknown error";
	return status_text[code];
}

eh2s_status api_status(e2s_err e)
{
	switch (e) {
	case E2S_ERR_OK: return EH2S_OK;
	case E2S_ERR_NOMEM: return EH2S_E_NOMEM;
	case E2S_ERR_IO: return EH2S_E_IO;
	case E2S_ERR_NOT_ELF: return EH2S_E_NOT_ELF;
	case E2S_ERR_TRUNCATED:
	case E2S_ERR_BAD_ELF:
	case E2S_ERR_BAD_RELOC: return EH2S_E_BAD_ELF;
	case E2S_ERR_UNSUPPORTED_MACHINE:
	case E2S_ERR_SFRAME_NAME:
	case E2S_ERR_TOO_LARGE: return EH2S_E_UNSUPPORTED;
	case E2S_ERR_NO_CFI: return EH2S_E_NO_CFI;
	case E2S_ERR_LEB_OVERLONG:
	case E2S_ERR_BAD_LENGTH:
	case E2S_ERR_BAD_CIE_ID:
	case E2S_ERR_BAD_CIE_VERSION:
	case E2S_ERR_BAD_AUGMENTATION:
	case E2S_ERR_BAD_POINTER_ENCODING:
	case E2S_ERR_BAD_ADDRESS_SIZE:
	case E2S_ERR_BAD_OPCODE:
	case E2S_ERR_BAD_REGISTER:
	case E2S_ERR_PC_BACKWARDS:
	case E2S_ERR_STACK_UNDERFLOW:
	case E2S_ERR_STACK_OVERFLOW:
	case E2S_ERR_CFA_NOT_REG:
	case E2S_ERR_CIE_PTR_WIDTH: return EH2S_E_BAD_CFI;
	case E2S_ERR_BAD_SFRAME:
	case E2S_ERR_SFRAME_VERSION: return EH2S_E_BAD_SFRAME;
	case E2S_ERR_EXISTS: return EH2S_E_EXISTS;
	case E2S_ERR_NO_FUNCS: return EH2S_E_NO_FUNCS;
	case E2S_ERR_USAGE: return EH2S_E_USAGE;
	case E2S_ERR_INTERNAL:
	case E2S_ERR_OUTPUT_CHECK: /* what we wrote is wrong: our bug */
	default: return EH2S_E_INTERNAL;
	}
}

eh2s_status api_fail(eh2s_error *err, const e2s_diag *d)
{
	eh2s_status s = api_status(d->code);
	if (s == EH2S_OK)
		s = EH2S_E_INTERNAL; /* a failure path without a code */
	if (err) {
		err->code = s;
		e2s_diag_format(d, err->message, sizeof err->message);
	}
	return s;
}

eh2s_status api_usage(eh2s_error *err, eh2s_status code, const char *msg)
{
	if (err) {
		err->code = code;
		snprintf(err->message, sizeof err->message, "%s", msg);
	}
	return code;
}

eh2s_status api_ok(eh2s_error *err)
{
	if (err) {
		err->code = EH2S_OK;
		err->message[0] = '\0';
	}
	return EH2S_OK;
}

/* ---- Size-prefixed structs --------------------------------------------- */

static eh2s_status struct_size_ok(size_t size, size_t min, const char *what,
				  eh2s_error *err)
{
	char msg[160];
	if (size >= min)
		return EH2S_OK;
	snprintf(msg, sizeof msg,
		 "%s.size is %zu, not the struct's size (call %s_init)", what,
		 size, what);
	return api_usage(err, EH2S_E_USAGE, msg);
}

eh2s_status api_struct_in(const void *p, size_t min, void *ours,
			  size_t ours_size, const char *what, eh2s_error *err)
{
	size_t size;
	memset(ours, 0, ours_size);
	memcpy(ours, &ours_size, sizeof ours_size);
	if (!p)
		return EH2S_OK; /* the defaults */
	memcpy(&size, p, sizeof size);
	eh2s_status st = struct_size_ok(size, min, what, err);
	if (st != EH2S_OK)
		return st;
	/* A newer caller's fields we do not know: fine while they hold
	 * their default (0), refused otherwise. */
	for (size_t i = ours_size; i < size; i++) {
		if (((const unsigned char *)p)[i] != 0) {
			char msg[160];
			snprintf(msg, sizeof msg,
				 "%s: a field this library (eh2sframe %s) "
				 "does not know is set", what, eh2s_version());
			return api_usage(err, EH2S_E_UNSUPPORTED, msg);
		}
	}
	memcpy((unsigned char *)ours + sizeof size,
	       (const unsigned char *)p + sizeof size,
	       (size < ours_size ? size : ours_size) - sizeof size);
	return EH2S_OK;
}

eh2s_status api_struct_check(const void *p, size_t min, const char *what,
			     eh2s_error *err)
{
	size_t size;
	memcpy(&size, p, sizeof size);
	return struct_size_ok(size, min, what, err);
}

void api_struct_out(void *p, const void *ours, size_t ours_size)
{
	size_t size;
	memcpy(&size, p, sizeof size);
	if (size > ours_size)
		size = ours_size;
	if (size > sizeof size)
		memcpy((unsigned char *)p + sizeof size,
		       (const unsigned char *)ours + sizeof size,
		       size - sizeof size);
}

void api_by_reason(size_t *by_reason, size_t len, const size_t *counts,
		   size_t n)
{
	for (size_t r = 0; by_reason && r < len; r++)
		by_reason[r] = r < n ? counts[r] : 0;
}

eh2s_status api_verified(const vf_counts *n, eh2s_error *err)
{
	if (!n->mismatch && !n->extra)
		return api_ok(err);
	char msg[128];
	snprintf(msg, sizeof msg, "%zu mismatching and %zu extra functions",
		 n->mismatch, n->extra);
	return api_usage(err, EH2S_E_VERIFY, msg);
}

void api_verify_out(eh2s_verify_result *out, const vf_counts *n,
		    size_t bad_relocs, const char *failed_path)
{
	eh2s_verify_result r;
	if (!out)
		return;
	memset(&r, 0, sizeof r);
	r.size = sizeof r;
	if (n) {
		r.functions = n->functions;
		r.match = n->match;
		r.mismatch = n->mismatch;
		r.missing = n->missing;
		r.skipped = n->skipped;
		r.extra = n->extra;
		r.points = n->points;
	}
	r.bad_relocs = bad_relocs;
	r.failed_path = failed_path;
	api_struct_out(out, &r, sizeof r);
}

/* ---- Files ----------------------------------------------------------- */

e2s_err api_read_file(const char *path, uint8_t **data, size_t *size,
		      int *mode, e2s_diag *d)
{
	struct stat st;
	uint8_t *buf = NULL;
	/* A FIFO is refused by fstat, not waited on (see e2s_map_file). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return e2s_fail(d, E2S_ERR_IO, NULL, 0, "%s", strerror(errno));
	if (fstat(fd, &st) != 0) {
		int er = errno;
		close(fd);
		return e2s_fail(d, E2S_ERR_IO, NULL, 0, "%s", strerror(er));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return e2s_fail(d, E2S_ERR_IO, NULL, 0, "not a regular file");
	}
	e2s_err e = e2s_read_whole(fd, (size_t)st.st_size, &buf, d);
	close(fd);
	if (e)
		return e;
	*data = buf;
	*size = (size_t)st.st_size;
	if (mode)
		*mode = (int)(st.st_mode & 07777);
	return E2S_ERR_OK;
}

e2s_err api_write_file(const char *path, const void *data, size_t size,
		       int mode, e2s_diag *d)
{
	e2s_atomic a;
	char *target;
	bool stream;
	e2s_err e = e2s_out_target(path, &target, &stream, d);
	if (!e && stream)
		e = e2s_write_stream(target, data, size, d);
	if (e || stream) {
		free(target);
		return e;
	}
	e = e2s_atomic_begin(&a, target, d);
	free(target);
	if (e)
		return e;
	e = e2s_write_all(a.fd, data, size, d);
	if (e) {
		e2s_atomic_abort(&a);
		return e;
	}
	return e2s_atomic_commit(&a, (mode_t)mode, NULL, NULL, true, d);
}

/* ---- Handles --------------------------------------------------------- */

e2s_err api_scan(eh2s_file *f, const elfp_file *ef, e2s_diag *d)
{
	size_t size;
	api_cur(f, &size);
	free(f->secs);
	f->secs = NULL;
	f->nsecs = 0;
	f->eh_frame_size = f->eh_frame_hdr_size = f->debug_frame_size = 0;
	f->machine = elfp_machine(ef);
	f->rel = elfp_is_rel(ef);
	size_t n = elfp_shnum(ef);
	f->secs = calloc(n ? n : 1, sizeof *f->secs);
	if (!f->secs)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	for (size_t i = 1; i < n; i++) {
		const elfp_shdr *sh = elfp_section(ef, i);
		const char *name = elfp_section_name(ef, i);
		if (name && strcmp(name, ".eh_frame") == 0)
			f->eh_frame_size += sh->size;
		else if (name && strcmp(name, ".eh_frame_hdr") == 0)
			f->eh_frame_hdr_size += sh->size;
		else if (name && strcmp(name, ".debug_frame") == 0)
			f->debug_frame_size += sh->size;
		/* Not a symbol table or a debug file's NOBITS placeholder
		 * that happens to be called .sframe. */
		if (elfp_sframe_kind(ef, i) != SFR_SEC_SFRAME)
			continue;
		if (sh->type == SHT_NOBITS || sh->offset > size ||
		    sh->size > size - sh->offset)
			return e2s_fail(d, E2S_ERR_BAD_ELF, ".sframe", 0,
					"section outside the file");
		f->secs[f->nsecs++] = (api_sec){sh->offset, sh->size, sh->addr};
	}
	return E2S_ERR_OK;
}

/* The input parsed once: kept for the first conversion. */
static eh2s_status open_common(eh2s_file *f, eh2s_file **out,
			       eh2s_error *err)
{
	e2s_diag d = {0};
	if (elfp_open_view(f->in, f->in_size, &f->in_view, &d) ||
	    api_scan(f, f->in_view, &d)) {
		eh2s_close(f);
		return api_fail(err, &d);
	}
	size_t old;
	conv_existing ex = conv_existing_sframe(f->in_view, 0, &old);
	f->had_sframe = f->nsecs > 0 || ex == CONV_HAS_SEGMENT;
	/* An object's V2 section is rebuilt by default (convert.h). */
	f->v2_object = ex == CONV_HAS_V2_OBJECT;
	*out = f;
	return api_ok(err);
}

eh2s_status eh2s_open(const char *path, eh2s_file **out, eh2s_error *err)
{
	e2s_diag d = {0};
	eh2s_file *f;
	if (!path || !out)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	*out = NULL;
	f = calloc(1, sizeof *f);
	if (!f)
		return api_usage(err, EH2S_E_NOMEM, "out of memory");
	if (e2s_map_file(path, false, &f->map, &d)) {
		free(f);
		return api_fail(err, &d);
	}
	/* Read-only: nothing writes the input image (MAP_PRIVATE). */
	f->in = (uint8_t *)(uintptr_t)f->map.data;
	f->in_size = f->map.size;
	f->mode = (int)(f->map.st.st_mode & 07777);
	return open_common(f, out, err);
}

eh2s_status eh2s_open_mem(const void *data, size_t size, eh2s_file **out,
			  eh2s_error *err)
{
	eh2s_file *f;
	if (!out || (!data && size))
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	*out = NULL;
	f = calloc(1, sizeof *f);
	if (!f || !(f->in = malloc(size ? size : 1))) {
		free(f);
		return api_usage(err, EH2S_E_NOMEM, "out of memory");
	}
	if (size)
		memcpy(f->in, data, size);
	f->in_size = size;
	f->mode = 0755;
	return open_common(f, out, err);
}

void eh2s_close(eh2s_file *f)
{
	if (!f)
		return;
	api_free_result(f);
	elfp_close(f->in_view);
	free(f->secs);
	free(f->out);
	if (f->map.data || f->map.size)
		e2s_unmap_file(&f->map);
	else
		free(f->in);
	free(f);
}

unsigned eh2s_machine(const eh2s_file *f)
{
	return f ? f->machine : 0;
}

int eh2s_is_relocatable(const eh2s_file *f)
{
	return f && f->rel;
}

int eh2s_has_sframe(const eh2s_file *f)
{
	return f && f->had_sframe;
}

const uint8_t *eh2s_image(const eh2s_file *f, size_t *size)
{
	size_t n = 0;
	const uint8_t *p = f ? api_cur(f, &n) : NULL;
	if (size)
		*size = n;
	return p;
}

size_t eh2s_sframe_count(const eh2s_file *f)
{
	return f ? f->nsecs : 0;
}

eh2s_status eh2s_sframe_section(const eh2s_file *f, size_t index,
				const uint8_t **data, size_t *size,
				uint64_t *vaddr, eh2s_error *err)
{
	size_t n;
	if (!f || !data || !size)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	if (index >= f->nsecs)
		return api_usage(err, EH2S_E_USAGE,
				 "no .sframe section with that index");
	*data = api_cur(f, &n) + f->secs[index].off;
	*size = f->secs[index].size;
	if (vaddr)
		*vaddr = f->rel ? 0 : f->secs[index].addr;
	return api_ok(err);
}

eh2s_status eh2s_write(const eh2s_file *f, const char *path, int mode,
		       eh2s_error *err)
{
	e2s_diag d = {0};
	size_t n;
	const uint8_t *img;
	if (!f || !path)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	if (mode < -1 || mode > 07777)
		return api_usage(err, EH2S_E_USAGE, "bad mode");
	img = api_cur(f, &n);
	if (api_write_file(path, img, n, mode < 0 ? f->mode : mode, &d))
		return api_fail(err, &d);
	return api_ok(err);
}
