/* eh2sframe command line. (Skeleton: grows with the pipeline.) */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		puts("eh2sframe 0.1");
		return 0;
	}
	fprintf(stderr, "usage: eh2sframe IN -o OUT | --in-place FILE...\n");
	return 2;
}
