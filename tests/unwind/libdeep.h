/* libdeep: call chains for the unwind harness. Built as a shared library
 * (x86-64) or linked in statically (cross builds); calls between its
 * exported functions go through the PLT when it is a shared library. */
#ifndef LIBDEEP_H
#define LIBDEEP_H
#ifdef __cplusplus
extern "C" {
#endif

typedef long (*deep_cb)(void *arg);

/* Descend n levels through a mix of the functions below (the path is
 * chosen from n and seed), then call cb(arg). */
long deep_dispatch(long n, long seed, deep_cb cb, void *arg);
long deep_fp(long n, long seed, deep_cb cb, void *arg);     /* keeps FP */
long deep_nofp(long n, long seed, deep_cb cb, void *arg);   /* omits FP */
long deep_realign(long n, long seed, deep_cb cb, void *arg, long a5,
		  long a6, long a7, long a8);               /* DRAP/realign */
long deep_recurse(long n, long seed, deep_cb cb, void *arg); /* self-recursion */
long deep_leaf(long x);                                     /* leaf loop */

#ifdef __cplusplus
}
#endif
#endif
