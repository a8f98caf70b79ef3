/* The --dump-cfi text format (COMMON.md / README.md): the contract with
 * the differential tests, so every field is printed exactly as there. */
#include <inttypes.h>

#include "cfi.h"

static void hexbytes(FILE *out, const cfi_table *t, const cfi_expr *e)
{
	if ((uint64_t)e->sec_off + e->len > t->size)
		return;
	for (uint32_t i = 0; i < e->len; i++)
		fprintf(out, "%02x", t->data[e->sec_off + i]);
}

static void print_cfa(FILE *out, const cfi_table *t, const cfi_cfa *c)
{
	switch (c->kind) {
	case CFI_CFA_REG_OFF:
		fprintf(out, "r%u%+" PRId64, c->reg, c->off);
		break;
	case CFI_CFA_EXPR:
		fputs("exp:", out);
		hexbytes(out, t, &c->expr);
		break;
	case CFI_CFA_INVALID:
		fputs("invalid", out);
		break;
	default:
		fputs("unset", out);
		break;
	}
}

static void print_rule(FILE *out, const cfi_table *t, const cfi_rule *r)
{
	switch (r->kind) {
	case CFI_RULE_UNDEFINED: fputs("u", out); break;
	case CFI_RULE_SAME: fputs("s", out); break;
	case CFI_RULE_OFFSET: fprintf(out, "c%+" PRId64, r->off); break;
	case CFI_RULE_VAL_OFFSET: fprintf(out, "v%+" PRId64, r->off); break;
	case CFI_RULE_REGISTER: fprintf(out, "r%u", r->reg); break;
	case CFI_RULE_EXPR:
		fputs("exp:", out);
		hexbytes(out, t, &r->expr);
		break;
	case CFI_RULE_VAL_EXPR:
		fputs("vexp:", out);
		hexbytes(out, t, &r->expr);
		break;
	default: fputs("-", out); break;
	}
}

static void print_fde(FILE *out, const cfi_table *t, const cfi_fde *f)
{
	fprintf(out, "FDE %" PRIx32 " cie=%" PRIx32 " pc=%" PRIx64 "..%" PRIx64,
		f->sec_off, f->cie_off, f->pc_begin, f->pc_begin + f->pc_range);
	if (t->relocatable)
		fprintf(out, " sec=%u", cfi_fde_reloc(t, f).shndx);
	if (f->cie < t->ncies) {
		const cfi_cie *c = &t->cies[f->cie];
		if (c->signal_frame)
			fputs(" signal", out);
		if (c->pauth_b_key)
			fputs(" bkey", out);
	}
	if (f->status != E2S_ERR_OK) {
		fprintf(out, " error=%s\n", e2s_strerror(f->status));
		return;
	}
	fputc('\n', out);
	for (uint32_t i = 0; i < f->row_count; i++) {
		const cfi_row *r = &t->rows[f->row_first + i];
		fprintf(out, "  %" PRIx64 " cfa=", r->start);
		print_cfa(out, t, &r->cfa);
		fputs(" ra=", out);
		print_rule(out, t, &r->ra);
		fputs(" fp=", out);
		print_rule(out, t, &r->fp);
		fputs(" sp=", out);
		print_rule(out, t, &r->sp);
		if (r->ra_mangled)
			fputs(" mangled", out);
		fputc('\n', out);
	}
}

void cfi_dump_file(FILE *out, const char *path, const cfi_table *t)
{
	fprintf(out, "# %s %s abi=%s fdes=%zu bad=%zu\n", path,
		cfi_sec_name(t->kind), abi_get(t->abi)->name, t->nfdes,
		t->nbad_fdes);
	for (size_t i = 0; i < t->nfdes; i++)
		print_fde(out, t, &t->fdes[i]);
}

void cfi_dump(FILE *out, const cfi_table *t)
{
	cfi_dump_file(out, "-", t);
}
