/* Stand-in for <dlfcn.h>: the members of struct dl_find_object that
 * glibc 2.42's SFrame walker reads. The build machine's own <dlfcn.h>
 * may predate dlfo_sframe (Debian 12 has glibc 2.36), and the harness
 * answers _dl_find_object itself, so only the names have to agree. */
#ifndef SHIM_DLFCN_H
#define SHIM_DLFCN_H

#define DLFO_FLAG_SFRAME (1ULL << 0)

struct link_map;

struct dl_find_object {
	unsigned long long dlfo_flags;
	void *dlfo_map_start;
	void *dlfo_map_end;
	struct link_map *dlfo_link_map;
	void *dlfo_eh_frame;
	void *dlfo_sframe;
};

#endif
