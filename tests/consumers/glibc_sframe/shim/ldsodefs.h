/* Stand-in for glibc's internal <ldsodefs.h>: GLRO(dl_find_object) is
 * the dynamic loader's _dl_find_object; here it is the harness's
 * shim_dl_find_object (glibc_check.c), which answers from the one ELF
 * file the harness mapped. */
#ifndef SHIM_LDSODEFS_H
#define SHIM_LDSODEFS_H

#include <dlfcn.h>

#define GLRO(name) shim_##name

int shim_dl_find_object(void *pc, struct dl_find_object *result);

#endif
