/* Public API: separate debug files brought in line with the converted
 * file they were cut from (include/eh2sframe.h says why). This file
 * finds and checks the pair; the rewrite itself is elfpatch's
 * (src/elfpatch/elfp_debug.c), shared with the mini debuginfo that the
 * conversion updates inside the file (src/convert/convert_file.c). */
#include <elf.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "../common/buf.h"
#include "../common/reader.h"
#include "../elf/elf_file.h"
#include "../elfpatch/elfpatch.h"
#include "api_int.h"

#define D_EHDR 64u

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return a > 1 ? (v + a - 1) / a * a : v;
}

static bool has_bytes(const elfr_shdr *s)
{
	return s->type != SHT_NOBITS && s->type != SHT_NULL && s->size;
}

/* Open path with the ELF reader and check what the rewrite needs of its
 * headers (elfp_debug_check). Messages name the path. */
static e2s_err dbg_open(const char *path, unsigned flags, elfr_file **out,
			e2s_diag *d)
{
	e2s_diag sub = {0};
	elfr_file *e = NULL;
	e2s_err err = elfr_open(path, ELFR_ONLY64 | flags, &e, &sub);
	*out = NULL;
	if (err == E2S_ERR_NOMEM)
		return e2s_fail(d, err, NULL, 0, NULL);
	if (err && !sub.detail[0])
		return e2s_fail(d, err, NULL, 0, "%s", path);
	if (!err)
		err = elfp_debug_check(e, &sub);
	if (err) {
		elfr_close(e);
		return e2s_fail(d, err, NULL, 0, "%s: %s", path, sub.detail);
	}
	*out = e;
	return E2S_ERR_OK;
}

/* Section i's name, "" when it does not fit in the name table. */
static const char *sec_name(const elfr_file *e, size_t i)
{
	const char *n = elfr_section_name(e, i);
	return n ? n : "";
}

/* The descriptor of the first NT_GNU_BUILD_ID note of a SHT_NOTE
 * section. */
static const uint8_t *build_id(const elfr_file *e, size_t *len)
{
	for (size_t i = 1; i < e->shnum; i++) {
		size_t n, pos = 0;
		const uint8_t *p = e->sh[i].type == SHT_NOTE
					   ? elfr_section_data(e, i, &n)
					   : NULL;
		elfr_note nt;
		while (p && elfr_note_next(e, p, n, e->sh[i].addralign, &pos, &nt))
			if (nt.type == NT_GNU_BUILD_ID && nt.namesz == 4 &&
			    memcmp(nt.name, "GNU", 4) == 0 && nt.descsz) {
				*len = nt.descsz;
				return nt.desc;
			}
	}
	return NULL;
}

/* .gnu_debuglink: the section, or 0 when there is none or it is not
 * "name\0, padding to 4, CRC32". */
static size_t debuglink(const elfr_file *e)
{
	for (size_t i = 1; i < e->shnum; i++) {
		const elfr_shdr *s = &e->sh[i];
		if (strcmp(sec_name(e, i), ".gnu_debuglink") != 0 ||
		    !has_bytes(s) || s->size < 8)
			continue;
		const char *n = (const char *)e->img + s->offset;
		const char *z = memchr(n, 0, s->size - 4);
		if (z && align_up((uint64_t)(z - n) + 1, 4) + 4 == s->size)
			return i;
	}
	return 0;
}

eh2s_status eh2s_debug_refs_read(const char *path, eh2s_debug_refs *caller,
				 eh2s_error *err)
{
	elfr_file *e = NULL;
	e2s_diag d = {0};
	eh2s_debug_refs refs, *out = &refs;
	eh2s_status st;
	if (!path || !caller)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	if ((st = api_struct_check(caller, API_END(eh2s_debug_refs, linked),
				   "eh2s_debug_refs", err)) != EH2S_OK)
		return st;
	memset(out, 0, sizeof *out);
	if (dbg_open(path, 0, &e, &d))
		return api_fail(err, &d);
	out->linked = e->type == ET_EXEC || e->type == ET_DYN;
	size_t len = 0;
	const uint8_t *id = build_id(e, &len);
	for (size_t i = 0; id && i < len && i < (sizeof out->build_id - 1) / 2; i++)
		snprintf(out->build_id + 2 * i, 3, "%02x", id[i]);
	size_t l = debuglink(e);
	if (l)
		snprintf(out->debuglink, sizeof out->debuglink, "%s",
			 (const char *)e->img + e->sh[l].offset);
	elfr_close(e);
	api_struct_out(caller, out, sizeof *out);
	return api_ok(err);
}


/* When c's .gnu_debuglink names the debug file, give it the CRC of the
 * debug file as it now is (gdb and eu-unstrip check it when they find
 * the file by that name). */
static e2s_err fix_crc(const char *file, const elfr_file *c,
		       const char *debug, bool *updated, e2s_diag *d)
{
	size_t l = debuglink(c);
	char bcopy[PATH_MAX];
	*updated = false;
	if (!l || strlen(debug) >= sizeof bcopy)
		return E2S_ERR_OK;
	strcpy(bcopy, debug);
	if (strcmp((const char *)c->img + c->sh[l].offset, basename(bcopy)) != 0)
		return E2S_ERR_OK;
	elfr_file *g = NULL;
	e2s_err e = dbg_open(debug, 0, &g, d);
	if (e)
		return e;
	/* zlib's CRC-32 (reflected 0xedb88320), as gdb checks it. */
	uint32_t crc = (uint32_t)crc32_z(0, g->img, g->size);
	elfr_close(g);
	uint64_t at = c->sh[l].offset + c->sh[l].size - 4;
	if (elfr_get(c, c->img + at, 4) == crc)
		return E2S_ERR_OK;
	/* The file is rewritten like any in-place conversion (temporary
	 * file, renamed over it, mode and owner kept): its bytes stay, but
	 * for the CRC word of .gnu_debuglink. */
	uint8_t *sec = malloc((size_t)c->sh[l].size);
	elfp_file *f = NULL;
	if (!sec)
		return e2s_fail(d, E2S_ERR_NOMEM, NULL, 0, NULL);
	memcpy(sec, c->img + c->sh[l].offset, (size_t)c->sh[l].size);
	e2s_store_uN(sec + c->sh[l].size - 4, crc, 4, c->be);
	e = elfp_open(file, &f, d);
	if (!e)
		e = elfp_shrink_section(f, l, c->sh[l].size, d);
	if (!e)
		e = elfp_layout(f, d);
	if (!e)
		e = elfp_take_content(f, l, sec, (size_t)c->sh[l].size, NULL, d);
	else
		free(sec);
	if (!e)
		e = elfp_write_atomic(file, file, true, f, d);
	elfp_close(f);
	*updated = !e;
	return e;
}

eh2s_status eh2s_update_debug_file(const char *file, const char *debug,
				   eh2s_debug_result *caller, eh2s_error *err)
{
	eh2s_debug_result local, *res = &local;
	eh2s_status st;
	elfr_file *c = NULL, *g = NULL;
	elfp_debug_stats ds = {0};
	e2s_diag d = {0};
	char real[PATH_MAX];
	bool crc = false;
	e2s_err e;

	if (!file || !debug)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	if (caller && (st = api_struct_check(
			       caller, API_END(eh2s_debug_result, crc_updated),
			       "eh2s_debug_result", err)) != EH2S_OK)
		return st;
	memset(res, 0, sizeof *res);
	/* A link is followed: the file it names is the debug file. */
	if (!realpath(debug, real)) {
		e2s_fail(&d, E2S_ERR_IO, NULL, 0, "%s: %s", debug, strerror(errno));
		return api_fail(err, &d);
	}
	e = dbg_open(file, 0, &c, &d);
	if (!e)
		e = dbg_open(real, ELFR_KEEP_FD, &g, &d);
	if (!e && c->st.st_dev == g->st.st_dev && c->st.st_ino == g->st.st_ino)
		e = e2s_fail(&d, E2S_ERR_USAGE, NULL, 0,
			     "the file and its debug file are the same file");
	if (!e && (c->machine != g->machine || c->be != g->be ||
		   c->type != g->type ||
		   (c->type != ET_EXEC && c->type != ET_DYN)))
		e = e2s_fail(&d, E2S_ERR_USAGE, NULL, 0,
			     "not an executable or shared object with a "
			     "debug file of the same type and machine");
	if (!e) {
		size_t a = 0, b = 0;
		const uint8_t *ia = build_id(c, &a), *ib = build_id(g, &b);
		if (ia && ib && (a != b || memcmp(ia, ib, a) != 0))
			e = e2s_fail(&d, E2S_ERR_USAGE, NULL, 0,
				     "build IDs differ: not its debug file");
	}
	if (!e)
		e = elfp_debug_update(c, g, false, real, NULL, NULL, &ds, &d);
	res->moved = ds.moved;
	res->added = ds.added;
	res->changed = ds.changed;
	if (!e)
		e = fix_crc(file, c, real, &crc, &d);
	res->crc_updated = crc;
	elfr_close(c);
	elfr_close(g);
	if (caller)
		api_struct_out(caller, res, sizeof *res);
	/* A mismatch is said as it is, without "invalid argument". */
	if (e == E2S_ERR_USAGE)
		return api_usage(err, EH2S_E_USAGE, d.detail);
	return e ? api_fail(err, &d) : api_ok(err);
}
