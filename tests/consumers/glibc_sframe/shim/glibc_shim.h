/* Forced include (-include) for compiling glibc's SFrame reader and
 * walker outside glibc: the internal macros they use, emptied. */
#ifndef GLIBC_SHIM_H
#define GLIBC_SHIM_H

#include <stddef.h> /* offsetof, which sframe-read.c uses without it */
#include <string.h> /* memset/memcpy, likewise in sframe.c */

#define libc_hidden_proto(name)
#define libc_hidden_def(name)

#endif
