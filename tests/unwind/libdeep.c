/* libdeep: functions with different frame shapes for the unwind harness
 * (see libdeep.h). Compiled with -O2 -fomit-frame-pointer; the _fp
 * variant keeps its frame pointer through an attribute. */
#include "libdeep.h"

#include <string.h>

/* gcc keeps the frame pointer per function; clang has no such attribute
 * (its build variant keeps frame pointers globally instead). */
#if defined(__clang__)
#define KEEP_FP
#else
#define KEEP_FP __attribute__((optimize("no-omit-frame-pointer")))
#endif

volatile long deep_sink;

/* A loop long enough that samples land in a leaf with no frame. */
__attribute__((noinline)) long deep_leaf(long x)
{
	long s = 0, i;

	for (i = 0; i < 40 + (x & 63); i++)
		s += (x ^ i) * 2654435761L;
	deep_sink = s;
	return s;
}

__attribute__((noinline)) long deep_dispatch(long n, long seed, deep_cb cb,
					     void *arg)
{
	long r;

	if (n <= 0)
		return cb(arg) + deep_leaf(seed);
	switch ((unsigned long)(n * 7 + seed) % 5) {
	case 0: r = deep_fp(n - 1, seed, cb, arg); break;
	case 1: r = deep_nofp(n - 1, seed, cb, arg); break;
	case 2: r = deep_realign(n - 1, seed, cb, arg, n, seed, n ^ seed, n + 1); break;
	case 3: r = deep_recurse(n - 1, seed, cb, arg); break;
	default: r = deep_leaf(n) + deep_dispatch(n - 1, seed + 1, cb, arg); break;
	}
	return r + 1;
}

__attribute__((noinline)) KEEP_FP long
deep_fp(long n, long seed, deep_cb cb, void *arg)
{
	volatile char buf[40];
	long r;

	buf[n & 31] = (char)seed;
	r = deep_leaf(n + seed) & 7;
	r += deep_dispatch(n, seed * 3 + 1, cb, arg);
	return r + buf[n & 31];
}

__attribute__((noinline)) long deep_nofp(long n, long seed, deep_cb cb,
					 void *arg)
{
	volatile long v[6];
	long r;

	v[n % 6] = seed;
	r = deep_dispatch(n, seed + 2, cb, arg);
	return r ^ v[n % 6];
}

/* A 64-byte aligned local, a VLA and stack arguments: on x86-64 gcc
 * realigns through a DRAP register (CFA = *(rbp-N)). */
__attribute__((noinline)) long deep_realign(long n, long seed, deep_cb cb,
					    void *arg, long a5, long a6,
					    long a7, long a8)
{
	char big[64] __attribute__((aligned(64)));
	char vla[(a8 & 31) + 1];
	long r;

	memset(big, (int)n, sizeof big);
	memset(vla, (int)a7, sizeof vla);
	r = deep_dispatch(n, seed + a5 + a6, cb, arg);
	return r + big[n & 63] + vla[a8 & 31];
}

__attribute__((noinline)) long deep_recurse(long n, long seed, deep_cb cb,
					    void *arg)
{
	if (n > 0 && (n & 3) != 0)
		return deep_recurse(n - 1, seed, cb, arg) + deep_leaf(n) % 3;
	return deep_dispatch(n, seed ^ 5, cb, arg) + 2;
}
