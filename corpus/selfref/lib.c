/* A shared library that reads itself when selfref_lib_report() is called
 * (loader.c dlopens it; tests/e2e/selfref.sh), one line per read:
 * - its own note through its symbol, and with -DNOTE_PTR through a
 *   pointer in its data (a RELA or, with -z pack-relative-relocs, RELR
 *   relocation);
 * - with -DOWN_INTERP, .interp through a symbol of its own in .interp, as
 *   libc.so.6 does with __invoke_dynamic_linker__ (a library that can be
 *   run: PT_INTERP, and an entry point);
 * - its notes through dl_iterate_phdr -> PT_NOTE, its PT_INTERP;
 * - its dynamic symbol table through _DYNAMIC and through PT_DYNAMIC.
 * With -DHEADERS_ONLY it has no note of its own (see prog.c). */
#include "selfref.h"
#include <unistd.h>

#ifndef HEADERS_ONLY
SR_NOTE(lib_note, "selfref:lib--ok!");
#endif

#ifdef NOTE_PTR
static const char *const volatile note_ptr = lib_note.desc;
#endif
#ifdef OWN_INTERP
__attribute__((section(".interp"), used)) static const char lib_interp[] = SR_INTERP;

/* The entry point (-Wl,-e): the library is not run in the test. */
void selfref_lib_entry(void);
void selfref_lib_entry(void)
{
	_exit(0);
}
#endif

void selfref_lib_report(void);
void selfref_lib_report(void)
{
	static const char *const names[] = {"dl_iterate_phdr", "selfref_lib_report"};
	const void *const want[] = {NULL, (const void *)selfref_lib_report};
	struct sr_obj self = sr_self((const void *)selfref_lib_report);
#ifndef HEADERS_ONLY
	const char *p = lib_note.desc;

	__asm__ volatile("" : "+r"(p));
	printf("lib note via symbol: ");
	sr_put(p, 16, 0);
	printf("\n");
#else
	const char *p = NULL;

	(void)p;
#endif
#ifdef NOTE_PTR
	printf("lib note via pointer: ");
	sr_put(note_ptr, 16, 0);
	printf("\n");
#endif
#ifdef OWN_INTERP
	p = lib_interp;
	__asm__ volatile("" : "+r"(p));
	printf("lib interp via symbol: ");
	sr_put(p, sizeof lib_interp, 1);
	printf("\n");
#endif
	if (!self.found) {
		printf("lib: dl_iterate_phdr does not list this library\n");
		return;
	}
	sr_notes_dl(&self);
	sr_interp_dl(&self);
	sr_dynsym_sym(&self, names, want, 2);
	sr_dynsym_dl(&self, names, want, 2);
}
