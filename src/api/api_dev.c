/* Test and developer entry points (api_dev.h): the .sframe bytes of a
 * file's CFI, without the ELF rewrite. */
#include <stdlib.h>
#include <string.h>

#include "../convert/convert.h"
#include "api_dev.h"
#include "api_int.h"

eh2s_status api_encode_sframe_file(const char *path, const api_encode_opts *o,
				   void **data, size_t *size,
				   api_encode_info *info, eh2s_error *err)
{
	e2s_diag d = {0};
	conv_run run;

	if (!path || !o || !data || !size)
		return api_usage(err, EH2S_E_USAGE, "NULL argument");
	*data = NULL;
	*size = 0;
	eh2s_status vs = api_sframe_version(o->sframe_version, err);
	if (vs != EH2S_OK)
		return vs;
	uint8_t *img = NULL;
	size_t isize = 0;
	int mode;
	if (api_read_file(path, &img, &isize, &mode, &d))
		return api_fail(err, &d);
	conv_input in = {.img = img, .size = isize,
			 .debug_frame = o->debug_frame != 0};
	conv_opts co = {.sframe_version = (uint8_t)o->sframe_version,
			.encode = true, .vaddr = o->vaddr,
			.share_fres = o->share_fres,
			.share_runs = o->share_fres >= 2};
	e2s_err e = conv_run_do(&in, &co, &run, &d);
	if (!e && info) {
		memset(info, 0, sizeof *info);
		info->functions = run.set.nfuncs;
		for (int k = 0; k < CONV_SKIP_COUNT_; k++)
			info->outcome[k] = run.tally.outcome[k];
		info->bytes = run.sframe_size;
		info->fre_bytes = run.st.fre_bytes;
		info->fre_bytes_unshared = run.st.fre_bytes_unshared;
		info->shared_fdes = run.st.shared_fdes;
	}
	if (!e) {
		/* The section becomes the caller's. */
		*data = run.sframe;
		*size = run.sframe_size;
		run.sframe = NULL;
	}
	conv_run_free(&run);
	free(img);
	return e ? api_fail(err, &d) : api_ok(err);
}
