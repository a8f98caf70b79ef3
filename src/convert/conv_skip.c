/* The names of the skip reasons (conv_skip.h). */
#include <stdlib.h>
#include <string.h>

#include "conv_skip.h"

const char *conv_skip_name(conv_skip s)
{
	static const char *const names[] = {
#define CONV_X(name, text) text,
		CONV_SKIPS(CONV_X)
#undef CONV_X
	};
	if ((unsigned)s >= CONV_SKIP_COUNT_)
		return "?";
	return names[s];
}

void conv_verdicts_free(conv_verdicts *v)
{
	free(v->fde_skip);
	memset(v, 0, sizeof *v);
}
