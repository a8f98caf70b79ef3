/* Loads the library given as argument (a relative path, so that the
 * output does not depend on the directory), lets it read itself, and
 * prints "sframe libselfref.so: ..." for it (tests/e2e/selfref.sh). */
#include "selfref.h"
#include <dlfcn.h>

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	void (*report)(void) = h ? (void (*)(void))dlsym(h, "selfref_lib_report") : NULL;

	if (!report) {
		printf("cannot load %s: %s\n", argc > 1 ? argv[1] : "(nothing)", dlerror());
		return 1;
	}
	report();
	sr_sframe();
	return 0;
}
