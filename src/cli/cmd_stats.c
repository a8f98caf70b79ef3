/* --stats [--json]: sizes of the unwind sections, function and FRE
 * counts, coverage and skip reasons of each file. Built on the public
 * API (include/eh2sframe.h) only. */
#include <stdio.h>
#include <string.h>

#include "eh2sframe.h"
#include "cli.h"

static void json_str(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0.0;
}

static const char *type_name(const eh2s_file *f)
{
	return eh2s_is_relocatable(f) ? "relocatable" : "linked";
}

static void print_json(const char *path, const eh2s_file *f,
		       const eh2s_stats *s, bool first)
{
	printf("%s\n  {\"file\": ", first ? "" : ",");
	json_str(path);
	printf(", \"machine\": %u, \"type\": \"%s\",\n", eh2s_machine(f),
	       type_name(f));
	printf("   \"sections\": {\"eh_frame\": %llu, \"eh_frame_hdr\": %llu, "
	       "\"debug_frame\": %llu, \"sframe\": %llu},\n",
	       (unsigned long long)s->eh_frame_size,
	       (unsigned long long)s->eh_frame_hdr_size,
	       (unsigned long long)s->debug_frame_size,
	       (unsigned long long)s->sframe_size);
	if (s->sframe_version)
		printf("   \"sframe\": {\"version\": %d, \"fdes\": %zu, \"fres\": %zu},\n",
		       s->sframe_version, s->sframe_fdes, s->sframe_fres);
	else
		printf("   \"sframe\": null,\n");
	printf("   \"functions\": %zu, \"converted\": %zu, \"unrelocated\": %zu, "
	       "\"fres\": %zu, \"projected_sframe_size\": %llu,\n",
	       s->functions, s->converted, s->unrelocated, s->fres,
	       (unsigned long long)s->projected_sframe_size);
	printf("   \"code_bytes\": %llu, \"code_bytes_converted\": %llu,\n",
	       (unsigned long long)s->code_bytes,
	       (unsigned long long)s->code_bytes_converted);
	printf("   \"coverage\": {\"functions\": %.4f, \"code_bytes\": %.4f},\n",
	       ratio((double)s->converted, (double)s->functions),
	       ratio((double)s->code_bytes_converted, (double)s->code_bytes));
	printf("   \"skipped\": {");
	const char *sep = "";
	for (int k = 1; k < EH2S_SKIP_COUNT; k++)
		if (s->by_reason[k]) {
			printf("%s", sep);
			json_str(eh2s_skip_name(k));
			printf(": %zu", s->by_reason[k]);
			sep = ", ";
		}
	if (s->unrelocated)
		printf("%s\"no-relocation\": %zu", sep, s->unrelocated);
	printf("}}");
}

static void print_text(const char *path, const eh2s_file *f,
		       const eh2s_stats *s, bool many)
{
	if (many)
		printf("%s:\n", path);
	printf("  file type        %s, e_machine %u\n", type_name(f),
	       eh2s_machine(f));
	printf("  .eh_frame        %llu bytes\n", (unsigned long long)s->eh_frame_size);
	printf("  .eh_frame_hdr    %llu bytes\n",
	       (unsigned long long)s->eh_frame_hdr_size);
	if (s->debug_frame_size)
		printf("  .debug_frame     %llu bytes\n",
		       (unsigned long long)s->debug_frame_size);
	if (s->sframe_version)
		printf("  .sframe          %llu bytes, version %d, %zu FDEs, %zu FREs\n",
		       (unsigned long long)s->sframe_size, s->sframe_version,
		       s->sframe_fdes, s->sframe_fres);
	else
		printf("  .sframe          none; a conversion would write %llu bytes\n",
		       (unsigned long long)s->projected_sframe_size);
	printf("  functions        %zu: %zu convertible (%.1f%%, %.1f%% of code "
	       "bytes), %zu FREs\n", s->functions, s->converted,
	       100 * ratio((double)s->converted, (double)s->functions),
	       100 * ratio((double)s->code_bytes_converted, (double)s->code_bytes),
	       s->fres);
	for (int k = 1; k < EH2S_SKIP_COUNT; k++)
		if (s->by_reason[k])
			printf("  skipped          %s=%zu\n", eh2s_skip_name(k),
			       s->by_reason[k]);
	if (s->unrelocated)
		printf("  skipped          no-relocation=%zu\n", s->unrelocated);
}

int cmd_stats(const cli_opts *o)
{
	int rc = 0;
	bool first = true;
	if (o->json)
		printf("[");
	for (int i = 0; i < o->nfiles; i++) {
		const char *path = o->files[i];
		eh2s_file *f = NULL;
		eh2s_error err;
		eh2s_stats s;
		size_t by_reason[EH2S_SKIP_COUNT];
		eh2s_stats_init(&s);
		s.by_reason = by_reason;
		s.by_reason_len = EH2S_SKIP_COUNT;
		if (eh2s_open(path, &f, &err) != EH2S_OK ||
		    eh2s_get_stats(f, &s, &err) != EH2S_OK) {
			cli_error(path, "%s", err.message);
			eh2s_close(f);
			rc = 1;
			continue;
		}
		if (o->json)
			print_json(path, f, &s, first);
		else
			print_text(path, f, &s, o->nfiles > 1);
		first = false;
		eh2s_close(f);
	}
	if (o->json)
		printf("%s]\n", first ? "" : "\n");
	return rc;
}
