/* A program that reads itself (tests/e2e/selfref.sh), one line per read:
 * - its own note (.note.myapp) through its symbol, and with -DNOTE_PTR
 *   through a pointer in its data: a RELA or RELR relocation in a PIE,
 *   an absolute address in a non-PIE;
 * - with -DOWN_INTERP (dynamically linked builds), .interp through a
 *   symbol of its own in .interp (the linker's string comes first, ours
 *   repeats it);
 * - its notes (custom and standard: build-id, ABI tag, property) through
 *   dl_iterate_phdr -> PT_NOTE and through __ehdr_start + e_phoff;
 * - its interpreter through dl_iterate_phdr -> PT_INTERP;
 * - its dynamic symbol table through _DYNAMIC and through PT_DYNAMIC:
 *   DT_NEEDED, an imported and an exported symbol (with version).
 * With -DHEADERS_ONLY it has no note of its own: what it reads is reached
 * only through headers, so the table may grow over its loader sections.
 * Then "sframe main: ..." (PT_GNU_SFRAME as dl_iterate_phdr shows it). */
#include "selfref.h"

#ifndef HEADERS_ONLY
SR_NOTE(note, "selfref:prog-ok!");
#endif

#ifdef NOTE_PTR
static const char *const volatile note_ptr = note.desc;
#endif
#ifdef OWN_INTERP
__attribute__((section(".interp"), used)) static const char own_interp[] = SR_INTERP;
#endif

/* In .dynsym through -Wl,--export-dynamic-symbol=sr_exported. */
const char sr_exported[] = "exported";

int main(void)
{
	static const char *const names[] = {"dl_iterate_phdr", "sr_exported"};
	const void *const want[] = {NULL, sr_exported};
	struct sr_obj self = sr_self((const void *)main);
#ifndef HEADERS_ONLY
	const char *p = note.desc;

	/* The compiler must not fold the read of a constant it can see. */
	__asm__ volatile("" : "+r"(p));
	printf("note via symbol: ");
	sr_put(p, 16, 0);
	printf("\n");
#else
	const char *p = NULL;

	(void)p;
#endif
#ifdef NOTE_PTR
	printf("note via pointer: ");
	sr_put(note_ptr, 16, 0);
	printf("\n");
#endif
#ifdef OWN_INTERP
	p = own_interp;
	__asm__ volatile("" : "+r"(p));
	printf("interp via symbol: ");
	sr_put(p, sizeof own_interp, 1);
	printf("\n");
#endif
	if (!self.found) {
		printf("dl_iterate_phdr: this program not found\n");
		return 1;
	}
	sr_notes_dl(&self);
	sr_notes_ehdr();
	sr_interp_dl(&self);
	sr_dynsym_sym(&self, names, want, 2);
	sr_dynsym_dl(&self, names, want, 2);
	sr_sframe();
	return 0;
}
