/* The names of the skip reasons (conv_skip.h). */
#include <stdlib.h>
#include <string.h>

#include "conv_skip.h"

const char *sfe_skip_name(sfe_skip s)
{
	static const char *const names[] = {
#define SFE_X(name, text) text,
		SFE_SKIPS(SFE_X)
#undef SFE_X
	};
	if ((unsigned)s >= SFE_SKIP_COUNT_)
		return "?";
	return names[s];
}

void sfe_verdicts_free(sfe_verdicts *v)
{
	free(v->fde_skip);
	memset(v, 0, sizeof *v);
}
