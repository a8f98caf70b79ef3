/* Assembled with as --gsframe: the reference toolchain's own .sframe. */
__attribute__((noinline)) static int tri(int n) { return n ? n + tri(n - 1) : 0; }

int b_entry(int n)
{
	volatile int big[512];
	for (int i = 0; i < 512; i++)
		big[i] = i ^ n;
	return tri(n) + big[n];
}
