/* Test and developer entry points (api_dev.h): the .sframe bytes of a
 * file's CFI, without the ELF rewrite. */
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "../convert/convert.h"
#include "../elf/cfi_file.h"
#include "api_dev.h"
#include "api_int.h"

eh2s_status api_encode_sframe_file(const char *path, const api_encode_opts *o,
				   void **data, size_t *size,
				   api_encode_info *info, eh2s_error *err)
{
	cfi_file *f = NULL;
	e2s_diag d = {0};
	sfe_set set;
	sfe_encode_stats st;
	bw_t w;
	e2s_err e;

	if (!path || !o || !data || !size)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	*data = NULL;
	*size = 0;
	eh2s_status vs = api_sframe_version(o->sframe_version, err);
	if (vs != EH2S_OK)
		return vs;
	cfi_load_opts lo = {.prefer_debug_frame = o->debug_frame != 0};
	uint8_t *img = NULL;
	size_t isize = 0;
	int mode;
	e = api_read_file(path, &img, &isize, &mode, &d);
	if (e)
		return api_fail(err, &d);
	memset(&set, 0, sizeof set);
	memset(&st, 0, sizeof st);
	e = sfe_project_view(img, isize, &lo, (unsigned)o->sframe_version, &f,
			     &set, &d);
	if (e) {
		free(img);
		return api_fail(err, &d);
	}
	const cfi_table *t = cfi_file_table(f);
	sfe_encode_opts eo = {.relocatable = cfi_file_is_rel(f),
			      .section_vaddr = o->vaddr,
			      .share_fres = o->share_fres,
			      .share_runs = o->share_fres >= 2};
	bw_init(&w, t->big_endian);
	e = sfe_encode_ex(&set, &eo, &w, NULL, NULL, &st, &d);
	if (!e && info) {
		memset(info, 0, sizeof *info);
		info->functions = set.nfuncs;
		for (int k = 0; k < SFE_SKIP_COUNT_; k++)
			info->outcome[k] = set.counts[k];
		info->bytes = w.len;
		info->fre_bytes = st.fre_bytes;
		info->fre_bytes_unshared = st.fre_bytes_unshared;
		info->shared_fdes = st.shared_fdes;
	}
	if (!e) {
		/* The writer's buffer becomes the caller's. */
		*data = w.data;
		*size = w.len;
		w.data = NULL;
		w.len = 0;
	}
	sfe_set_free(&set);
	bw_free(&w);
	cfi_file_close(f);
	free(img);
	return e ? api_fail(err, &d) : api_ok(err);
}
