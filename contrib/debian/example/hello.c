#include <stdio.h>

static int depth(int n)
{
	return n ? 1 + depth(n - 1) : 0;
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("hello from a package, depth %d\n", depth(argc + 2));
	return 0;
}
