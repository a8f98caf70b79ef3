/* Minimal unit-test helpers: each test binary counts its checks, prints
 * one summary line and exits non-zero if any check failed. */
#ifndef E2S_T_H
#define E2S_T_H

#include <stdio.h>
#include <string.h>

static int t_checks, t_failed;

#define CHECK(cond)                                                           \
	do {                                                                  \
		t_checks++;                                                   \
		if (!(cond)) {                                                \
			t_failed++;                                           \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
		}                                                             \
	} while (0)

#define CHECK_EQ(a, b)                                                        \
	do {                                                                  \
		long long t_a = (long long)(a), t_b = (long long)(b);         \
		t_checks++;                                                   \
		if (t_a != t_b) {                                             \
			t_failed++;                                           \
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
				__FILE__, __LINE__, #a, t_a, #b, t_b);        \
		}                                                             \
	} while (0)

#define CHECK_STR(a, b)                                                       \
	do {                                                                  \
		const char *t_a = (a), *t_b = (b);                            \
		t_checks++;                                                   \
		if (!t_a || !t_b || strcmp(t_a, t_b) != 0) {                  \
			t_failed++;                                           \
			fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", \
				__FILE__, __LINE__, #a, t_a ? t_a : "(null)",  \
				t_b ? t_b : "(null)");                        \
		}                                                             \
	} while (0)

static inline int t_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, t_checks, t_failed);
	return t_failed ? 1 : 0;
}

#endif
