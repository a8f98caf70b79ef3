#!/usr/bin/env python3
"""Mutation test of --verify (issue #10): seed deliberate bugs into the
converter (CFI reader and interpreter, projection rules, claims and
caches, FRE builder and writer, section encoder, the writer's format
header sframe_fmt.h and the ABI tables of src/abi), rebuild, convert a
corpus with the mutant and require the mutant's own --verify to report
a failure, or the unmutated verifier to find functions missing that the
unmutated converter wrote. The first judge is built from the mutated
tree on purpose: whatever it shares with the converter carries the bug
too, so only a judge with its own reading of the format (the verifier,
and sfr_spec.h for the .sframe layout) can kill a mutant of shared code.
Prints one line per mutant and "mutants=N killed=N".

Usage: mutants.py BUILD_DIR VERIFIER FILE...
  BUILD_DIR  scratch directory (a copy of src/, include/ and Makefile is
             built there once per mutant; only what includes the mutated
             file recompiles)
  VERIFIER   an eh2sframe built from the unmodified tree: it judges the
             unmutated copy's output too (the corpus must verify clean),
             and counts the missing functions of every output
  FILE       inputs to convert (objects, shared objects, programs)

A mutant counts as killed when its --verify exits with a failure on some
file (a mismatch, an extra function, or a section it refuses to read) and
still accepts the unmutated converter's output of that file (else the
mutation changed the judge, not just the converter: NOT KILLED). Failing
that, it is killed as "lost functions" when, on some file, VERIFIER's
--verify -v lists more functions as missing (expressible in SFrame, not
in the .sframe) in the mutant's output than in the unmutated converter's:
a function dropped is silent data loss, which --verify reports but does
not fail on. Failing both, a mutant whose converter refuses a file the
unmutated one converts (its own output checks) is killed as "refused": it
writes nothing wrong. Each mutation must apply exactly once, the
unmutated copy must verify clean on every file, VERIFIER and the copy's
verifier must count the same missing functions on its output, and the
unmutated copy, converted again and judged as a mutant, must not count
as killed (the "control" line), or the run fails (exit 1).
MUTANTS_ONLY=NAME[,NAME] runs only those mutants."""
import os
import shutil
import subprocess
import sys

# (name, file, old text, new text), or (name, [(file, old, new), ...]) for
# one bug in several places: each a bug a real converter could have.
MUTANTS = [
    ("accept-any-sp-rule", "src/convert/conv_rules.c",
     "\tint64_t want = a->sp_val_off;\n",
     "\tint64_t want = a->sp_val_off;\n"
     "\tif (r) return CONV_SKIP_NONE;\n"),
    ("sp-provenance-ignores-cfa-change", "src/dwarf/cfi_interp.c",
     "\t\tbool same = grp_same(&x->grp, &x->cur.cfa);\n",
     "\t\tbool same = grp_same(&x->grp, &x->cur.cfa) || true;\n"),
    ("ignore-cie-return-column", "src/convert/conv_project.c",
     "\t\tc->retcol = c->t->cies[fde->cie].ra_reg;\n",
     "\t\tc->retcol = c->abi->ra;\n"),
    ("drop-mangled-ra-bit", "src/convert/conv_rules.c",
     "\t\tp->mangled = row->ra_mangled;\n",
     "\t\tp->mangled = 0;\n"),
    ("fold-negate-ra-state-with-pc", "src/dwarf/cfi_interp.c",
     "\t\t\tx->cur.ra_sign_pc = 1;\n",
     "\t\t\tx->cur.ra_sign_pc = 0;\n"),
    ("ignore-ra-sign-state-register", "src/dwarf/cfi_interp.c",
     "static void set_sign(run_t *x, const cfi_rule *r)\n{\n",
     "static void set_sign(run_t *x, const cfi_rule *r)\n{\n\treturn;\n"),
    # An RA at CFA+0 in a default FDE's RA word, which reads as "RA not
    # saved" (one shared line for the ABIs with an RA word: AArch64 and
    # s390x were two mutants before the ABI tables).
    ("ra-word-zero", "src/convert/conv_rules.c",
     "\t    (p->ra.kind == PL_STACK && p->ra.off == SF_FRE_RA_OFFSET_INVALID)) {\n",
     "\t    0) {\n"),
    ("pc-relative-cfa-accepted", "src/convert/conv_rules.c",
     "\tif (pc_reg(a, p->cfa_reg))\n\t\treturn CONV_SKIP_PC_RELATIVE;\n",
     ""),
    ("fre-start-off-by-one", "src/convert/conv_int.h",
     "\treturn (uint32_t)(rs - f->pc);\n",
     "\treturn (uint32_t)(rs - f->pc) + (rs > f->pc);\n"),
    # Rows passed on only where a column changed, and the projection
    # redoing only what changed (cfi_row.same; conv_cache.h conv_cfa_only,
    # conv_rules.c conv_rule_cfa_only_ok) or what an FDE of the same CIE
    # gave for its initial rules (conv_cache.c conv_first_row), or an FDE
    # with the same program (conv_memo_*).
    ("row-change-misses-def-cfa-register", "src/dwarf/cfi_interp.c",
     "\t\treturn E2S_ERR_BAD_REGISTER;\n\tx->chg |= CFI_COL_CFA | CFI_COL_CFA_BASE;\n\tif (x->cur.cfa.kind == CFI_CFA_REG_OFF)\n",
     "\t\treturn E2S_ERR_BAD_REGISTER;\n\tif (x->cur.cfa.kind == CFI_CFA_REG_OFF)\n"),
    ("restore-state-misses-cfa-change", "src/dwarf/cfi_interp.c",
     "\tif (memcmp(&c->cfa, &r->cfa, sizeof c->cfa))\n\t\tx->chg |= CFI_COL_CFA;\n",
     ""),
    ("row-change-misses-fp-save", "src/dwarf/cfi_interp.c",
     "\tx->chg |= cn == COL_SP ? CFI_COL_SP : CFI_COL_FP;\n",
     "\tx->chg |= cn == COL_SP ? CFI_COL_SP : 0;\n"),
    ("shortcut-ignores-cfa-register", "src/convert/conv_cache.h",
     "\t       (same | CFI_COL_CFA) == CFI_COL_ALL;\n",
     "\t       (same | CFI_COL_CFA | CFI_COL_CFA_BASE) == CFI_COL_ALL;\n"),
    ("first-row-kept-whatever-its-rules", "src/convert/conv_project.c",
     "\tif (f->nrows == 0 && r->same == CFI_COL_ALL && f->active && !f->plt &&\n",
     "\tif (f->nrows == 0 && f->active && !f->plt &&\n"),
    ("shortcut-ignores-cfa-valued-fp", "src/convert/conv_rules.c",
     "\t    r->fp.kind == CFI_RULE_VAL_OFFSET)\n\t\treturn false;\n",
     "\t    0)\n\t\treturn false;\n"),
    ("shortcut-ignores-sp-same-value", "src/convert/conv_rules.c",
     "\tcase CFI_RULE_OFFSET:\n\t\treturn true;\n",
     "\tcase CFI_RULE_OFFSET:\n\tcase CFI_RULE_SAME:\n\t\treturn true;\n"),
    ("memo-ignores-program-reach", "src/convert/conv_cache.c",
     "\t      (m->pc_range > m->reach && fde->pc_range > m->reach)))\n",
     "\t      fde->pc_range >= m->reach))\n"),
    # FREs built as the rows come: a row whose CFA offset alone changed
    # reuses the FRE before it; the first row that needs a flexible FDE
    # rebuilds those built for a default one.
    ("shifted-fre-cfa-word-in-default-slot", "src/convert/conv_cache.h",
     "\tunsigned k = f->flex ? 1 : 0;\n",
     "\tunsigned k = 0;\n"),
    ("flex-row-keeps-default-fres", "src/convert/conv_project.c",
     "\tif (f->flex != flex && !conv_rebuild_fres(c))\n",
     "\tif (f->flex != flex && 0 && !conv_rebuild_fres(c))\n"),
    ("unfit-data-word-dropped", "src/convert/conv_fres.c",
     "\tif (f->word_skip)\n\t\treturn f->word_skip;\n",
     ""),
    # The short forms the decoder reads inline (cfi_int.h cfi_dec_short)
    # and the interpreter runs at once (cfi_interp.c exec_one).
    ("two-byte-uleb-misread", "src/dwarf/cfi_int.h",
     "\t\t*v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;\n",
     "\t\t*v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 8;\n"),
    ("advance-loc2-byte-order", "src/dwarf/cfi_int.h",
     "\t\to->a = e2s_load_uN(p + 1, 2, big_endian);\n",
     "\t\to->a = e2s_load_uN(p + 1, 2, big_endian && false);\n"),
    ("restore-wrong-register", "src/dwarf/cfi_interp.c",
     "\t\treturn restore_reg(x, in->a);\n",
     "\t\treturn restore_reg(x, in->a + 1);\n"),
    ("offset-rule-sign", "src/dwarf/cfi_interp.c",
     "\t\t\t\tfactor(in->b, cie->data_align));\n\tswitch (in->op) {\n",
     "\t\t\t\tfactor(in->b, -cie->data_align));\n\tswitch (in->op) {\n"),
    ("flex-fp-without-ra-padding", "src/convert/conv_rules.c",
     "\t\tf->dw[f->ndw++] = 0; /* RA padding word */\n",
     "\t\t; /* RA padding word */\n"),
    # The CFA word helper (conv_rules.h conv_cfa_word: one rule, scaled by
    # the ABI table's cfa_adjust and cfa_align: s390x).
    ("s390x-cfa-scaling-no-remainder-check", "src/convert/conv_rules.h",
     "\t\tif (v % a->cfa_align)\n\t\t\treturn CONV_SKIP_CFA_ALIGN;\n",
     ""),
    ("s390x-cfa-not-scaled", "src/convert/conv_rules.h",
     "\t\toff = v / a->cfa_align;\n",
     "\t\toff = off + 0 * v;\n"),
    # A default FDE's FP word (one line for every ABI since the tables;
    # it was AMD64's switch case).
    ("fp-offset-sign", "src/convert/conv_rules.c",
     "\tif (p->fp.kind == PL_STACK)\n\t\treturn push_w(f, p->fp.off);\n\treturn CONV_SKIP_NONE;\n}\n",
     "\tif (p->fp.kind == PL_STACK)\n\t\treturn push_w(f, -p->fp.off);\n\treturn CONV_SKIP_NONE;\n}\n"),
    ("cfa-base-bit-inverted", "src/sframe/sfe_encode.c",
     "\treturn SF_FRE_INFO(flex || f->base_fp, f->ndw, SF_FRE_DATAWORD_1B,\n",
     "\treturn SF_FRE_INFO(flex || !f->base_fp, f->ndw, SF_FRE_DATAWORD_1B,\n"),
    ("fre-info-kept-across-fields", "src/sframe/sfe_encode.c",
     "\t\tif (info_key(&fres[k]) != info_key(&fres[k - 1]))\n",
     "\t\tif (info_key(&fres[k]) != info_key(&fres[k - 1]) && 0)\n"),
    # The header's fixed RA offset wrong (-16 on AMD64) while the rules
    # take RA at CFA-8 as "the header says it". (The table's fixed_ra_off
    # itself wrong is not a wrong output: the rules then give every RA at
    # CFA-8 explicitly, in flexible FDEs, and skip the PLT.)
    ("amd64-fixed-ra-offset", "src/sframe/sfe_encode.c",
     "\t*w++ = (uint8_t)abi_get(s->abi)->fixed_ra_off;\n",
     "\t*w++ = (uint8_t)(abi_get(s->abi)->fixed_ra_off * 2);\n"),
    ("drop-signal-flag", "src/sframe/sfe_int.h",
     "\treturn (uint8_t)SF_FUNC_INFO(!v2 && fn->signal, fn->pauth_b, fn->pc_type, ft);\n",
     "\treturn (uint8_t)SF_FUNC_INFO(0 && !v2, fn->pauth_b, fn->pc_type, ft);\n"),
    ("drop-pauth-key-b", "src/sframe/sfe_int.h",
     "\treturn (uint8_t)SF_FUNC_INFO(!v2 && fn->signal, fn->pauth_b, fn->pc_type, ft);\n",
     "\treturn (uint8_t)SF_FUNC_INFO(!v2 && fn->signal, 0, fn->pc_type, ft);\n"),
    ("outermost-gets-a-cfa-word", "src/convert/conv_rules.c",
     "\tif (p->ra_undef)\n\t\treturn CONV_SKIP_NONE; /* 0 data words, info byte 0 */\n",
     ""),
    ("plt-threshold-off-by-one", "src/convert/conv_fres.c",
     "\t\tfr[kept].start = k ? f->plt_k : 0;\n",
     "\t\tfr[kept].start = k ? f->plt_k + 1 : 0;\n"),
    ("plt-block-size", "src/convert/conv_fres.c",
     "\tfn->rep_size = (uint8_t)block;\n",
     "\tfn->rep_size = (uint8_t)(2 * block);\n"),
    ("fde-start-off-by-one", "src/sframe/sfe_encode.c",
     "\t\tuint64_t pcrel = fn->start - (o->section_vaddr + field);\n",
     "\t\tuint64_t pcrel = fn->start + 1 - (o->section_vaddr + field);\n"),
    ("flex-ra-register-dropped", "src/convert/conv_rules.c",
     "\tcase PL_REG: ctrl = SF_FLEX_CTRL(l->reg, 0, 1); break;\n",
     "\tcase PL_REG: ctrl = SF_FLEX_CTRL(l->reg, 1, 1); break;\n"),
    ("val-offset-ignores-cfa-offset", "src/convert/conv_rules.c",
     "\treturn reg_loc(a, own, p->cfa_reg, p->cfa_off + l->off, false, l);\n",
     "\treturn reg_loc(a, own, p->cfa_reg, l->off, false, l);\n"),
    # The FRE writer the projection calls once per function.
    ("start-width-from-first-fre", "src/sframe/sfe_encode.c",
     "\tuint32_t max = fn->fre_count ? fres[fn->fre_count - 1].start : 0;\n",
     "\tuint32_t max = fn->fre_count ? fres[0].start : 0;\n"),
    ("merge-ignores-data-words", "src/convert/conv_int.h",
     "\tfor (unsigned i = 0; i < sizeof a->dw / sizeof a->dw[0]; i++)\n",
     "\tfor (unsigned i = 0; i < 1; i++)\n"),
    ("attribute-drops-fde-type", "src/sframe/sfe_encode.c",
     "\t\t*p++ = fn->fde_type & 0x1f;\n",
     "\t\t*p++ = 0;\n"),
    # The writer's format header (sframe_fmt.h): a misreading of the
    # spec's layout, in the encoding macro and its decoding twin alike.
    # The judge reads by its own sfr_spec.h, so it must notice.
    ("fmt-fre-info-mangled-base-swapped", "src/sframe/sframe_fmt.h",
     "\t((unsigned)(((mangled) ? 0x80 : 0) | (((dwsize) & 3) << 5) |       \\\n"
     "\t\t    (((count) & 0xf) << 1) | ((base_fp) ? 0 : 1)))\n"
     "/* Raw bit-0 value; flexible FDEs carry 0 here and ignore it. */\n"
     "#define SF_FRE_INFO_BASE_ID(i) ((i) & 1)\n"
     "#define SF_FRE_INFO_BASE_FP_P(i) (((i) & 1) == SF_BASE_REG_FP)\n"
     "#define SF_FRE_INFO_COUNT(i) (((i) >> 1) & 0xf)\n"
     "#define SF_FRE_INFO_DWSIZE(i) (((i) >> 5) & 3)\n"
     "#define SF_FRE_INFO_MANGLED_P(i) (((i) >> 7) & 1)\n",
     "\t((unsigned)(((mangled) ? 1 : 0) | (((dwsize) & 3) << 5) |       \\\n"
     "\t\t    (((count) & 0xf) << 1) | ((base_fp) ? 0 : 0x80)))\n"
     "#define SF_FRE_INFO_BASE_ID(i) (((i) >> 7) & 1)\n"
     "#define SF_FRE_INFO_BASE_FP_P(i) ((((i) >> 7) & 1) == SF_BASE_REG_FP)\n"
     "#define SF_FRE_INFO_COUNT(i) (((i) >> 1) & 0xf)\n"
     "#define SF_FRE_INFO_DWSIZE(i) (((i) >> 5) & 3)\n"
     "#define SF_FRE_INFO_MANGLED_P(i) ((i) & 1)\n"),
    ("fmt-fre-dataword-size-shift", "src/sframe/sframe_fmt.h",
     "(((dwsize) & 3) << 5) |       \\\n"
     "\t\t    (((count) & 0xf) << 1) | ((base_fp) ? 0 : 1)))\n"
     "/* Raw bit-0 value; flexible FDEs carry 0 here and ignore it. */\n"
     "#define SF_FRE_INFO_BASE_ID(i) ((i) & 1)\n"
     "#define SF_FRE_INFO_BASE_FP_P(i) (((i) & 1) == SF_BASE_REG_FP)\n"
     "#define SF_FRE_INFO_COUNT(i) (((i) >> 1) & 0xf)\n"
     "#define SF_FRE_INFO_DWSIZE(i) (((i) >> 5) & 3)\n",
     "(((dwsize) & 3) << 6) |       \\\n"
     "\t\t    (((count) & 0xf) << 1) | ((base_fp) ? 0 : 1)))\n"
     "#define SF_FRE_INFO_BASE_ID(i) ((i) & 1)\n"
     "#define SF_FRE_INFO_BASE_FP_P(i) (((i) & 1) == SF_BASE_REG_FP)\n"
     "#define SF_FRE_INFO_COUNT(i) (((i) >> 1) & 0xf)\n"
     "#define SF_FRE_INFO_DWSIZE(i) (((i) >> 6) & 3)\n"),
    ("fmt-flex-ctrl-regnum-shift", "src/sframe/sframe_fmt.h",
     "\t((((unsigned)(regnum)) << 3) | ((deref) ? 2u : 0u) | ((reg) ? 1u : 0u))\n"
     "#define SF_FLEX_CTRL_REGNUM(w) ((unsigned)(w) >> 3)\n",
     "\t((((unsigned)(regnum)) << 4) | ((deref) ? 2u : 0u) | ((reg) ? 1u : 0u))\n"
     "#define SF_FLEX_CTRL_REGNUM(w) ((unsigned)(w) >> 4)\n"),
    ("fmt-flex-ctrl-deref-bit", "src/sframe/sframe_fmt.h",
     "((deref) ? 2u : 0u) | ((reg) ? 1u : 0u))\n"
     "#define SF_FLEX_CTRL_REGNUM(w) ((unsigned)(w) >> 3)\n"
     "#define SF_FLEX_CTRL_DEREF_P(w) (((w) >> 1) & 1)\n",
     "((deref) ? 4u : 0u) | ((reg) ? 1u : 0u))\n"
     "#define SF_FLEX_CTRL_REGNUM(w) ((unsigned)(w) >> 3)\n"
     "#define SF_FLEX_CTRL_DEREF_P(w) (((w) >> 2) & 1)\n"),
    ("fmt-fde-index-entry-size", "src/sframe/sframe_fmt.h",
     "#define SF_FDE_IDX_SIZE 16 ", "#define SF_FDE_IDX_SIZE 20 "),
    ("fmt-header-size", "src/sframe/sframe_fmt.h",
     "#define SF_HEADER_SIZE 28 ", "#define SF_HEADER_SIZE 32 "),
    ("fmt-func-info-fre-type-bits", "src/sframe/sframe_fmt.h",
     "((pctype) ? 0x10 : 0) | ((fretype) & 0xf)))",
     "((pctype) ? 0x10 : 0) | (((fretype) & 0x7) << 1)))"),
    ("fmt-func-info-pctype-pauth-swapped", "src/sframe/sframe_fmt.h",
     "((pauth_b) ? 0x20 : 0) |      \\\n\t\t    ((pctype) ? 0x10 : 0)",
     "((pauth_b) ? 0x10 : 0) |      \\\n\t\t    ((pctype) ? 0x20 : 0)"),
    ("fmt-func-info-signal-bit", "src/sframe/sframe_fmt.h",
     "((signal) ? 0x80 : 0)", "((signal) ? 0x40 : 0)"),
    ("fmt-fre-type-addr1-addr2-swapped", "src/sframe/sframe_fmt.h",
     "#define SF_FRE_TYPE_ADDR1 0\n#define SF_FRE_TYPE_ADDR2 1\n",
     "#define SF_FRE_TYPE_ADDR1 1\n#define SF_FRE_TYPE_ADDR2 0\n"),
    ("fmt-magic-byte-swapped", "src/sframe/sframe_fmt.h",
     "#define SF_MAGIC 0xdee2\n", "#define SF_MAGIC 0xe2de\n"),
    ("fmt-version-3-written-as-2", "src/sframe/sframe_fmt.h",
     "#define SF_VERSION_3 3\n", "#define SF_VERSION_3 2\n"),
    ("fmt-pcrel-flag-value", "src/sframe/sframe_fmt.h",
     "#define SF_F_FDE_FUNC_START_PCREL 0x4\n",
     "#define SF_F_FDE_FUNC_START_PCREL 0x2\n"),
    ("fmt-sht-gnu-sframe", "src/sframe/sframe_fmt.h",
     "#define SHT_GNU_SFRAME 0x6ffffff4\n", "#define SHT_GNU_SFRAME 0x6ffffff5\n"),
    # The ABI tables (src/abi): what the writer's format header held
    # before (SFrame ABI ids, s390x CFA scaling) and each ABI's rules.
    ("abi-amd64-aarch64le-ids-swapped", [
        ("src/abi/abi_amd64.c",
         "\t.sframe_abi_le = 3, /* SFRAME_ABI_AMD64_ENDIAN_LITTLE */\n",
         "\t.sframe_abi_le = 2, /* SFRAME_ABI_AMD64_ENDIAN_LITTLE */\n"),
        ("src/abi/abi_aarch64.c",
         "\t.sframe_abi_le = 2, /* SFRAME_ABI_AARCH64_ENDIAN_LITTLE */\n",
         "\t.sframe_abi_le = 3, /* SFRAME_ABI_AARCH64_ENDIAN_LITTLE */\n")]),
    ("abi-s390x-cfa-adjustment", "src/abi/abi_s390x.c",
     "\t.cfa_adjust = 160, .cfa_align = 8,\n",
     "\t.cfa_adjust = 168, .cfa_align = 8,\n"),
    ("abi-s390x-cfa-align", "src/abi/abi_s390x.c",
     "\t.cfa_adjust = 160, .cfa_align = 8,\n",
     "\t.cfa_adjust = 160, .cfa_align = 4,\n"),
    ("abi-amd64-no-pc-column", "src/abi/abi_amd64.c",
     " .max_reg = 130, .pc = 16,\n",
     " .max_reg = 130, .pc = ABI_NO_REG,\n"),
    ("abi-amd64-ra-form-padded", "src/abi/abi_amd64.c",
     "\t.ra_form = ABI_RA_FIXED,\n",
     "\t.ra_form = ABI_RA_WORD_PADDED,\n"),
    ("abi-aarch64-ra-form-padded", "src/abi/abi_aarch64.c",
     "\t.ra_form = ABI_RA_WORD,\n",
     "\t.ra_form = ABI_RA_WORD_PADDED,\n"),
    ("abi-aarch64-no-ra-sign", "src/abi/abi_aarch64.c",
     "\t.ra_sign = 34,\n",
     "\t.ra_sign = ABI_NO_REG,\n"),
    # The caches (conv_cache.c, conv_cache.h): each must give what the
    # rules would.
    ("memo-ignores-cie", [
        ("src/convert/conv_cache.c",
         "\tuint64_t h = e2s_hash_bytes((uint64_t)fde->cie << 40 ^ n, p, n);\n",
         "\tuint64_t h = e2s_hash_bytes(n, p, n);\n"),
        ("src/convert/conv_cache.c",
         " || m->insn_len != fde->insn_len || m->cie != fde->cie)\n",
         " || m->insn_len != fde->insn_len)\n")]),
    ("first-row-ignores-cie", "src/convert/conv_cache.c",
     "\tuint32_t ci = c->t->fdes[f->fde].cie;\n",
     "\tuint32_t ci = 0;\n"),
    ("shortcut-ignores-changed-columns", "src/convert/conv_cache.h",
     "\t       (same | CFI_COL_CFA) == CFI_COL_ALL;\n",
     "\t       (same | (CFI_COL_ALL & ~CFI_COL_CFA_BASE)) == CFI_COL_ALL;\n"),
    ("shortcut-fre-replaces-previous", "src/convert/conv_cache.h",
     "\tif (last->start != start) {\n",
     "\tif (0) {\n"),
    # Bugs that only skip functions: the output holds no wrong FRE, the
    # functions are gone (--verify lists them as missing, no failure):
    # killed as "lost functions". s390x SP value off by 0 or -168 (the
    # functions that save SP skipped), AMD64 PLT block 32 bytes (GNU ld's
    # 16-byte blocks do not fit: the PLT skipped), AMD64 fixed RA offset
    # -16 or 0 in the table (every RA at CFA-8 then said in flexible
    # FDEs, right, but the PLT, which has no RA word, skipped).
    ("abi-s390x-sp-val-off-zero", "src/abi/abi_s390x.c",
     "\t.sp_val_off = -160,\n", "\t.sp_val_off = 0,\n"),
    ("abi-s390x-sp-val-off-168", "src/abi/abi_s390x.c",
     "\t.sp_val_off = -160,\n", "\t.sp_val_off = -168,\n"),
    ("abi-amd64-plt-block-32", "src/abi/abi_amd64.c",
     "\t.plt_block = 16,", "\t.plt_block = 32,"),
    ("abi-amd64-fixed-ra-off-16", "src/abi/abi_amd64.c",
     "\t.fixed_ra_off = -8,", "\t.fixed_ra_off = -16,"),
    ("abi-amd64-fixed-ra-off-zero", "src/abi/abi_amd64.c",
     "\t.fixed_ra_off = -8,", "\t.fixed_ra_off = 0,"),
    # And in the converter's own code: FDE ranges read as closed (an FDE
    # starting where the one before ends skipped as overlapping it, in
    # the grouping and the claim tree alike), a data word's limit taken
    # from its smallest size (functions with offsets beyond +-127 skipped
    # instead of written with wider words).
    ("claim-adjacent-fdes-overlap", [
        ("src/convert/conv_claim.c",
         "\t\tif (s.shndx == first.shndx && s.start < reach) {\n",
         "\t\tif (s.shndx == first.shndx && s.start <= reach) {\n"),
        ("src/convert/conv_claim.c",
         "\tif (pred != CL_NIL && v[pred].shndx == shndx && v[pred].end > start)\n",
         "\tif (pred != CL_NIL && v[pred].shndx == shndx && v[pred].end >= start)\n")]),
    ("data-word-limit-int8", "src/convert/conv_rules.c",
     "\tif (!fits_i32(v))\n\t\treturn CONV_SKIP_OFFSET_RANGE;\n",
     "\tif (!fits_i32(v) || v < -128 || v > 127)\n\t\treturn CONV_SKIP_OFFSET_RANGE;\n"),
    # The CFI reader, shared by the converter and its verifier: a reader
    # that does not know the 'S' augmentation drops signal frames for
    # both, so the mutant's verifier sees nothing missing; VERIFIER does.
    ("reader-rejects-signal-augmentation", "src/dwarf/cfi_records.c",
     "\t\tcase 'S': cie->signal_frame = true; break;\n",
     "\t\tcase 'S': *err_off = cie->sec_off; return E2S_ERR_BAD_AUGMENTATION;\n"),
    # Not seeded: bugs --verify cannot see on this corpus, as the output
    # stays right: AMD64 ra_form ABI_RA_WORD (FP saves go flexible); in
    # the caches, conv_memo_take dropping fde_type (the shared FRE data
    # carries it) and conv_memo_put keeping DW_CFA_set_loc programs (no
    # such input).
]


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, **kw)


def build(tree):
    r = run(["make", "-s", "-C", tree, "BUILD=build", "PROG=eh2sframe",
             "eh2sframe"])
    return r.returncode == 0, r.stdout


def judge(verifier, out):
    """None when verifier --verify accepts out, else the reason."""
    v = run([verifier, "--verify", out])
    if v.returncode == 0:
        return None
    lines = v.stdout.strip().splitlines()
    why = next((l for l in lines if l.startswith("mismatch")),
               lines[-1] if lines else "?")
    return why[:150]


def missing(verifier, out):
    """(N, lines): the missing=N of verifier --verify -v on out (functions
    the DWARF describes, SFrame can express and out's .sframe lacks) and
    its "missing" lines; (None, [reason]) when it prints no count."""
    v = run([verifier, "--verify", "-v", out])
    lines = v.stdout.strip().splitlines()
    for l in reversed(lines):
        for w in l.split():
            if w.startswith("missing=") and w[8:].isdigit():
                return int(w[8:]), [m for m in lines if m.startswith("missing ")]
    return None, [(lines[-1] if lines else "?")[:150]]


def missing_counts(verifier, outs, scratch):
    """missing() of verifier on each of outs; (None, ["not written"]) where
    nothing was written."""
    counts = []
    for i, data in enumerate(outs):
        if data is None:
            counts.append((None, ["not written"]))
            continue
        out = os.path.join(scratch, "m%d" % i)
        with open(out, "wb") as fp:
            fp.write(data)
        counts.append(missing(verifier, out))
    return counts


def lost(verifier, files, outs, base_missing, scratch):
    """The first file where verifier counts more functions missing in outs
    than in the unmutated converter's output of it (base_missing: its
    missing_counts), as "file: missing N > M (the first missing line the
    unmutated output has not)"; None if there is none. A file the mutant
    did not convert is not counted here ("refused" judges it)."""
    counts = missing_counts(verifier, outs, scratch)
    for i, ((n, ls), (m, base)) in enumerate(zip(counts, base_missing)):
        if n is not None and m is not None and n > m:
            first = next((l for l in ls if l not in base), ls[0] if ls else "")
            return "%s: missing %d > %d (%s)" % (os.path.basename(files[i]),
                                                  n, m, first[:150])
    return None


def verdict(tree, verifiers, files, scratch, base_outs=None):
    """(kind, what, k, outs): kind "clean", "failed" (what: the first
    --verify failure, file: line; k: its index in outs) or "refused"
    (what: the first file the converter failed on where the unmutated
    one, base_outs, did not; k its index); outs are the converted bytes
    (None where nothing was written), to tell whether a mutant changed
    anything."""
    outs = []
    refused = None
    for i, f in enumerate(files):
        out = os.path.join(scratch, "out%d" % i)
        if os.path.exists(out):
            os.unlink(out)
        r = run([os.path.join(tree, "eh2sframe"), "-q", f, "-o", out])
        if r.returncode != 0 or not os.path.exists(out):
            if refused is None and base_outs is not None and base_outs[i] is not None:
                lines = r.stdout.strip().splitlines()
                refused = ("%s: %s" % (os.path.basename(f),
                                       (lines[-1] if lines else "?")[:150]), i)
            outs.append(None)
            continue
        outs.append(open(out, "rb").read())
        for verifier in verifiers:
            why = judge(verifier, out)
            if why:
                return ("failed", "%s: %s" % (os.path.basename(f), why), i, outs)
    if refused:
        return ("refused",) + refused + (outs,)
    return "clean", "", None, outs


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    work, verifier = sys.argv[1], os.path.abspath(sys.argv[2])
    files = [os.path.abspath(f) for f in sys.argv[3:]]
    only = [n for n in os.environ.get("MUTANTS_ONLY", "").split(",") if n]
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    tree = os.path.join(work, "tree")
    scratch = os.path.join(work, "scratch")
    own = os.path.join(tree, "eh2sframe")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(scratch)
    for d in ("src", "include"):
        shutil.copytree(os.path.join(repo, d), os.path.join(tree, d))
    for f in ("Makefile", "eh2sframe.pc.in"):
        if os.path.exists(os.path.join(repo, f)):
            shutil.copy(os.path.join(repo, f), tree)
    ok, log = build(tree)
    if not ok:
        print(log)
        sys.exit("mutants: the unmutated copy does not build")
    base, what, _, base_outs = verdict(tree, [verifier, own], files, scratch)
    if base != "clean" or None in base_outs:
        what = what or "a file does not convert"
        sys.exit("mutants: the unmutated converter does not verify clean: " + what)
    # What the unmutated converter leaves missing, file by file: the bar
    # for the "lost functions" judge, set by VERIFIER (see there). The
    # copy's own verifier must count the same (else VERIFIER is stale).
    base_missing = missing_counts(verifier, base_outs, scratch)
    for f, (n, why) in zip(files, base_missing):
        if n is None:
            sys.exit("mutants: --verify -v prints no missing count on the "
                     "unmutated output of %s: %s" % (f, why[0]))
    if [n for n, _ in missing_counts(own, base_outs, scratch)] != \
            [n for n, _ in base_missing]:
        sys.exit("mutants: VERIFIER and the unmutated copy's verifier count "
                 "other missing functions: rebuild VERIFIER")
    # Control: the unmutated copy, converted again and judged as a mutant,
    # must not count as killed by either judge.
    kind, what, _, outs = verdict(tree, [own], files, scratch, base_outs)
    why = lost(verifier, files, outs, base_missing, scratch)
    if kind != "clean" or why or outs != base_outs:
        sys.exit("mutants: the unmutated copy counts as killed (%s): the "
                 "judges are not reliable" % (what or why or "output changed"))
    print("control (unmutated)                          not killed: %d missing "
          "function(s) on the corpus" % sum(n for n, _ in base_missing))
    mutants = [m for m in MUTANTS if not only or m[0] in only]
    killed = 0
    for m in mutants:
        name = m[0]
        edits = m[1] if len(m) == 2 else [m[1:]]
        saved = {}  # path: its unmutated text
        applied = True
        for path, old, new in edits:
            src = os.path.join(tree, path)
            text = open(src).read()
            saved.setdefault(src, text)
            if text.count(old) != 1:
                print("mutant %-38s NOT APPLIED (%d matches in %s): the code "
                      "changed; update tests/mutants/mutants.py"
                      % (name, text.count(old), path))
                applied = False
                break
            open(src, "w").write(text.replace(old, new))
        if not applied:
            for src, text in saved.items():
                open(src, "w").write(text)
            continue
        try:
            ok, log = build(tree)
            if not ok:
                print("mutant %-38s DOES NOT BUILD\n%s" % (name, log[-2000:]))
                continue
            kind, what, k, outs = verdict(tree, [own], files, scratch,
                                          base_outs)
            if kind == "failed":
                # The mutant's judge on the unmutated converter's bytes.
                ref = os.path.join(scratch, "base")
                with open(ref, "wb") as fp:
                    fp.write(base_outs[k])
                why = judge(own, ref)
                if why:
                    print("mutant %-38s NOT KILLED (the mutation changed the "
                          "judge: it rejects the unmutated output: %s)" % (name, why))
                    continue
                killed += 1
                print("mutant %-38s killed   %s" % (name, what))
                continue
            # Second judge: functions lost. The mutant's own verifier only
            # lists them as "missing", which is no failure, and it is the
            # wrong judge of how many: built from the mutated tree, it
            # shares the CFI reader (src/elf, src/dwarf records) with the
            # converter, so a mutant there may hide FDEs from both and
            # nothing looks missing (reader-rejects-signal-augmentation:
            # its own verifier skips the signal frames as "unknown CIE
            # augmentation", missing=0; VERIFIER finds them missing).
            # VERIFIER (the unmutated build) reads the DWARF in the
            # mutant's output (the input's, unchanged) as it read the
            # unmutated output's, so the two counts differ only by what
            # the mutant's .sframe lacks. For mutants outside the code
            # the verifier links, both are the same program and count
            # alike.
            why = lost(verifier, files, outs, base_missing, scratch)
            if why:
                killed += 1
                print("mutant %-38s killed   lost functions: %s" % (name, why))
            elif kind == "refused":
                killed += 1
                print("mutant %-38s killed   refused: %s" % (name, what))
            elif outs == base_outs:
                print("mutant %-38s survived (output unchanged: no input "
                      "exercises it)" % name)
            else:
                print("mutant %-38s SURVIVED (output changed, verify clean)" % name)
        finally:
            for src, text in saved.items():
                open(src, "w").write(text)
    build(tree)
    print("mutants=%d killed=%d" % (len(mutants), killed))
    sys.exit(0 if killed == len(mutants) else 1)


if __name__ == "__main__":
    main()
