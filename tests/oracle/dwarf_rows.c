/* Independent CFI oracle: libdwarf's frame interpreter printed in the
 * eh2sframe --dump-cfi text format (see helper brief / README), so that
 * tools/cfi_diff.py --libdwarf can compare it with ours row by row.
 *
 * Usage: dwarf_rows [--every N] FILE
 * Prints .eh_frame if libdwarf finds one, else .debug_frame; with --every N
 * only every Nth FDE (in libdwarf's order) is printed. libdwarf is told to
 * report registers without any rule as a private sentinel, so "no rule"
 * (-) is kept apart from DW_CFA_undefined (u) and DW_CFA_same_value (s).
 * Not part of the library: a test tool, it prints and exits freely. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>

/* Columns 0..TABLE_SIZE-1 are tracked; above any ABI's highest register
 * (AMD64 130) and below the libdwarf pseudo values (1034..). */
#define TABLE_SIZE 800
#define NO_RULE 1030 /* "no rule given": initial value of every column */

typedef struct {
	const char *name;
	unsigned sp, fp, ra;
} abi_info;

static abi_info abi_of(unsigned machine)
{
	switch (machine) {
	case 62: return (abi_info){"amd64", 7, 6, 16};
	case 183: return (abi_info){"aarch64", 31, 29, 30};
	case 22: return (abi_info){"s390x", 15, 11, 14};
	default: return (abi_info){"unknown", 0, 0, 0};
	}
}

static int read_machine(const char *path, unsigned *machine)
{
	unsigned char h[20];
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t n = fread(h, 1, sizeof h, f);
	fclose(f);
	if (n != sizeof h || memcmp(h, "\177ELF", 4) != 0)
		return -1;
	*machine = h[5] == 2 ? (unsigned)(h[18] << 8 | h[19])
			     : (unsigned)(h[19] << 8 | h[18]);
	return 0;
}

static void put_hex(char *out, size_t cap, const unsigned char *p, size_t n)
{
	size_t k = 0;
	out[0] = 0;
	for (size_t i = 0; i < n && k + 3 < cap; i++)
		k += (size_t)snprintf(out + k, cap - k, "%02x", p[i]);
}

static void put_off(char *out, size_t cap, const char *pfx, Dwarf_Signed v)
{
	snprintf(out, cap, "%s%c%" PRId64, pfx, v < 0 ? '-' : '+',
		 (int64_t)(v < 0 ? -(uint64_t)v : (uint64_t)v));
	/* note: INT64_MIN prints oddly; not a real CFI value */
}

/* One rule in the text format. */
static void rule_text(char *out, size_t cap, Dwarf_Small vt, Dwarf_Signed rel,
		      Dwarf_Signed reg, Dwarf_Signed off, Dwarf_Ptr blk)
{
	char hex[2048];
	switch (vt) {
	case DW_EXPR_OFFSET:
		if (reg == NO_RULE)
			snprintf(out, cap, "-");
		else if (reg == DW_FRAME_UNDEFINED_VAL)
			snprintf(out, cap, "u");
		else if (reg == DW_FRAME_SAME_VAL)
			snprintf(out, cap, "s");
		else if (rel && reg == DW_FRAME_CFA_COL3)
			put_off(out, cap, "c", off);
		else if (!rel)
			snprintf(out, cap, "r%" PRId64, (int64_t)reg);
		else
			snprintf(out, cap, "?reg%" PRId64 "%+" PRId64, (int64_t)reg, (int64_t)off);
		break;
	case DW_EXPR_VAL_OFFSET:
		put_off(out, cap, "v", off);
		break;
	case DW_EXPR_EXPRESSION:
	case DW_EXPR_VAL_EXPRESSION:
		put_hex(hex, sizeof hex, blk, (size_t)off);
		snprintf(out, cap, "%s:%s", vt == DW_EXPR_EXPRESSION ? "exp" : "vexp", hex);
		break;
	default:
		snprintf(out, cap, "?vt%u", vt);
	}
}

static int get_rule(Dwarf_Fde fde, unsigned col, Dwarf_Addr pc, char *out,
		    size_t cap, Dwarf_Error *err)
{
	Dwarf_Small vt = 0;
	Dwarf_Signed rel = 0, reg = 0, off = 0;
	Dwarf_Ptr blk = NULL;
	Dwarf_Addr row_pc = 0, next = 0;
	Dwarf_Bool more = 0;
	int rc = dwarf_get_fde_info_for_reg3_b(fde, (Dwarf_Half)col, pc, &vt, &rel,
					       &reg, &off, &blk, &row_pc, &more,
					       &next, err);
	if (rc != DW_DLV_OK)
		return rc;
	rule_text(out, cap, vt, rel, reg, off, blk);
	return DW_DLV_OK;
}

int main(int argc, char **argv)
{
	long every = 1;
	int ai = 1;
	if (argc >= 3 && strcmp(argv[1], "--every") == 0) {
		every = strtol(argv[2], NULL, 10);
		if (every < 1)
			every = 1;
		ai = 3;
	}
	if (ai + 1 != argc) {
		fprintf(stderr, "usage: dwarf_rows [--every N] FILE\n");
		return 2;
	}
	const char *path = argv[ai];
	unsigned machine = 0;
	if (read_machine(path, &machine) != 0) {
		fprintf(stderr, "%s: not an ELF file\n", path);
		return 2;
	}
	abi_info abi = abi_of(machine);

	Dwarf_Debug dbg = 0;
	Dwarf_Error err = 0;
	int fd = open(path, O_RDONLY);
	if (fd < 0 || dwarf_init_b(fd, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, &dbg,
				   &err) != DW_DLV_OK) {
		fprintf(stderr, "%s: libdwarf cannot open\n", path);
		return 2;
	}
	dwarf_set_frame_rule_table_size(dbg, TABLE_SIZE);
	dwarf_set_frame_rule_initial_value(dbg, NO_RULE);
	dwarf_set_frame_cfa_value(dbg, DW_FRAME_CFA_COL3);
	dwarf_set_frame_same_value(dbg, DW_FRAME_SAME_VAL);
	dwarf_set_frame_undefined_value(dbg, DW_FRAME_UNDEFINED_VAL);

	Dwarf_Cie *cies = NULL;
	Dwarf_Fde *fdes = NULL;
	Dwarf_Signed ncie = 0, nfde = 0;
	const char *secname = ".eh_frame";
	int rc = dwarf_get_fde_list_eh(dbg, &cies, &ncie, &fdes, &nfde, &err);
	char eh_msg[200] = "no entry";
	if (rc == DW_DLV_ERROR)
		snprintf(eh_msg, sizeof eh_msg, "%s", dwarf_errmsg(err));
	if (rc != DW_DLV_OK) {
		secname = ".debug_frame";
		rc = dwarf_get_fde_list(dbg, &cies, &ncie, &fdes, &nfde, &err);
	}
	if (rc != DW_DLV_OK) {
		fprintf(stderr, "%s: no CFI found by libdwarf: .eh_frame: %s; .debug_frame: %s\n",
			path, eh_msg, rc == DW_DLV_ERROR ? dwarf_errmsg(err) : "no entry");
		return 2;
	}
	printf("# %s %s abi=%s fdes=%" PRId64 " bad=0\n", path, secname, abi.name,
	       (int64_t)nfde);
	for (Dwarf_Signed i = 0; i < nfde; i++) {
		if (i % every)
			continue;
		Dwarf_Fde fde = fdes[i];
		Dwarf_Addr lo = 0;
		Dwarf_Unsigned len = 0, fde_len = 0;
		Dwarf_Ptr fde_bytes = NULL;
		Dwarf_Off cie_off = 0, fde_off = 0;
		Dwarf_Signed cie_idx = 0;
		if (dwarf_get_fde_range(fde, &lo, &len, &fde_bytes, &fde_len, &cie_off,
					&cie_idx, &fde_off, &err) != DW_DLV_OK) {
			fprintf(stderr, "%s: FDE %" PRId64 ": no range\n", path, (int64_t)i);
			continue;
		}
		/* The CIE pointer is relative in .eh_frame: ask for the CIE's
		 * own section offset. */
		Dwarf_Off f_off = 0, c_off = 0;
		Dwarf_Cie cie = 0;
		(void)f_off;
		if (dwarf_get_cie_of_fde(fde, &cie, &err) == DW_DLV_OK &&
		    dwarf_cie_section_offset(dbg, cie, &c_off, &err) == DW_DLV_OK)
			cie_off = c_off;
		printf("FDE %" PRIx64 " cie=%" PRIx64 " pc=%" PRIx64 "..%" PRIx64,
		       (uint64_t)fde_off, (uint64_t)cie_off, (uint64_t)lo,
		       (uint64_t)(lo + len));
		/* Collect rows first: an error halfway prints as an error FDE. */
		char buf[64 * 1024];
		size_t used = 0;
		const char *fail = NULL;
		Dwarf_Addr pc = lo;
		for (unsigned guard = 0; guard < 100000; guard++) {
			Dwarf_Small vt = 0;
			Dwarf_Signed rel = 0, reg = 0, off = 0;
			Dwarf_Ptr blk = NULL;
			Dwarf_Addr row_pc = 0, next = 0;
			Dwarf_Bool more = 0;
			rc = dwarf_get_fde_info_for_cfa_reg3_b(fde, pc, &vt, &rel, &reg,
							       &off, &blk, &row_pc,
							       &more, &next, &err);
			if (rc != DW_DLV_OK) {
				fail = rc == DW_DLV_ERROR ? dwarf_errmsg(err) : "no entry";
				break;
			}
			char cfa[2200], ra[2200], fp[2200], sp[2200];
			if (vt == DW_EXPR_OFFSET && reg == NO_RULE)
				snprintf(cfa, sizeof cfa, "unset");
			else if (vt == DW_EXPR_OFFSET && rel) {
				char tmp[32];
				snprintf(tmp, sizeof tmp, "r%" PRId64, (int64_t)reg);
				put_off(cfa, sizeof cfa, tmp, off);
			} else
				rule_text(cfa, sizeof cfa, vt, rel, reg, off, blk);
			if (get_rule(fde, abi.ra, row_pc, ra, sizeof ra, &err) != DW_DLV_OK ||
			    get_rule(fde, abi.fp, row_pc, fp, sizeof fp, &err) != DW_DLV_OK ||
			    get_rule(fde, abi.sp, row_pc, sp, sizeof sp, &err) != DW_DLV_OK) {
				fail = dwarf_errmsg(err);
				break;
			}
			int n = snprintf(buf + used, sizeof buf - used,
					 "  %" PRIx64 " cfa=%s ra=%s fp=%s sp=%s\n",
					 (uint64_t)row_pc, cfa, ra, fp, sp);
			if (n < 0 || (size_t)n >= sizeof buf - used) {
				fail = "too many rows for the oracle";
				break;
			}
			used += (size_t)n;
			if (!more || next <= pc || next >= lo + len)
				break;
			pc = next;
		}
		if (fail) {
			printf(" error=libdwarf:");
			for (const char *c = fail; *c && c - fail < 120; c++)
				putchar(*c == '\n' ? ' ' : *c);
			putchar('\n');
		} else {
			printf("\n%s", buf);
		}
	}
	dwarf_fde_cie_list_dealloc(dbg, cies, ncie, fdes, nfde);
	dwarf_finish(dbg, &err);
	close(fd);
	return 0;
}
