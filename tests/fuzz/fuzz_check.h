/* Oracle failures in the fuzz targets: say which check failed, then
 * abort (libFuzzer and the replay driver both report the signal). */
#ifndef E2S_FUZZ_CHECK_H
#define E2S_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "common/err.h"

#define FUZZ_FAIL(msg)                                                  \
	do {                                                            \
		fprintf(stderr, "%s:%d: oracle failed: %s\n", __FILE__, \
			__LINE__, msg);                                 \
		abort();                                                \
	} while (0)

/* The same with the library's diagnostic. */
#define FUZZ_FAIL_DIAG(msg, diag)                                       \
	do {                                                            \
		char fz_buf_[300];                                      \
		e2s_diag_format((diag), fz_buf_, sizeof fz_buf_);       \
		fprintf(stderr, "%s:%d: oracle failed: %s: %s\n",      \
			__FILE__, __LINE__, msg, fz_buf_);              \
		abort();                                                \
	} while (0)

#endif
