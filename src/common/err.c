#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

static const char *const messages[] = {
#define E2S_X(name, msg) msg,
	E2S_ERRORS(E2S_X)
#undef E2S_X
};

const char *e2s_strerror(e2s_err e)
{
	if ((unsigned)e >= E2S_ERR_COUNT_)
		return "unknown error";
	return messages[e];
}

e2s_err e2s_fail(e2s_diag *d, e2s_err code, const char *section,
		 uint64_t offset, const char *fmt, ...)
{
	if (!d)
		return code;
	d->code = code;
	d->section = section;
	d->offset = offset;
	d->detail[0] = '\0';
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(d->detail, sizeof d->detail, fmt, ap);
		va_end(ap);
	}
	return code;
}

void e2s_diag_format(const e2s_diag *d, char *buf, size_t len)
{
	int n = 0;
	if (len == 0)
		return;
	buf[0] = '\0';
	if (d->section)
		n = snprintf(buf, len, "%s+0x%llx: ", d->section,
			     (unsigned long long)d->offset);
	if (n < 0 || (size_t)n >= len)
		return;
	if (d->detail[0])
		snprintf(buf + n, len - n, "%s: %s", e2s_strerror(d->code),
			 d->detail);
	else
		snprintf(buf + n, len - n, "%s", e2s_strerror(d->code));
}
