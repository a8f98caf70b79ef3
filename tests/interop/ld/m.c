/* Main of the GNU ld interop link: calls into the converted object (a.c)
 * and the one assembled with --gsframe (b.c). */
#include <stdio.h>

int a_entry(int n);
int b_entry(int n);

int main(int argc, char **argv)
{
	(void)argv;
	printf("a=%d b=%d\n", a_entry(argc + 8), b_entry(argc + 8));
	return 0;
}
