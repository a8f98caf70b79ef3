#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
__attribute__((noinline)) int work(int n) {
  int *v = malloc(n * sizeof *v);
  for (int i = 0; i < n; i++) v[i] = (i * 7919) % 101;
  qsort(v, n, sizeof *v, cmp);
  int s = v[n / 2]; free(v); return s;
}
int main(int argc, char **argv) { printf("%d %zu\n", work(argc * 100), strlen(argv[0])); return 0; }
