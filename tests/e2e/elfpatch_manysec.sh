#!/usr/bin/env bash
# Extended section numbering: an x86-64 object with more than 65280
# sections (e_shnum 0, e_shstrndx SHN_XINDEX, the real values in section
# 0; symbols of high sections through SHT_SYMTAB_SHNDX). Generated with
# gas: 30000 functions with CFI, 35300 without, then 20 COMDAT functions
# with CFI in high sections. Checks (readelf, eu-elflint, lld as the
# independent tools): the output keeps the extended form with section 0
# holding the new count; readelf and eu-elflint find nothing new;
# --verify finds every function; each high COMDAT function's .sframe is
# in its own group; lld links it (final and -r) and the program runs.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib/elfpatch_lib.sh
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
command -v as >/dev/null && [ "$(uname -m)" = x86_64 ] || { echo "needs x86-64 gas"; exit 77; }
T=$(mktemp -d /tmp/elfpatch_manysec.XXXXXX)
trap 'rm -rf "$T"' EXIT

python3 - "$T/big.s" <<'PY'
import sys
out = ["\t.text", "\t.globl main", "\t.type main,@function",
       "main:\t.cfi_startproc", "\tsubq $8,%rsp", "\t.cfi_def_cfa_offset 16",
       "\tcall g0", "\tcall f0", "\taddq $8,%rsp", "\t.cfi_def_cfa_offset 8",
       "\txorl %eax,%eax", "\tret", "\t.cfi_endproc", "\t.size main,.-main"]
def fn(name, cfi, grp=False):
    s = '\t.section .text.%s,"ax%s",@progbits%s\n\t.globl %s\n\t.type %s,@function\n%s:\n' % (
        name, "G" if grp else "", ",%s,comdat" % name if grp else "", name, name, name)
    if cfi:
        s += "\t.cfi_startproc\n\tpushq %rbp\n\t.cfi_def_cfa_offset 16\n\tpopq %rbp\n\t.cfi_def_cfa_offset 8\n\tret\n\t.cfi_endproc\n"
    else:
        s += "\tret\n"
    return s + "\t.size %s,.-%s" % (name, name)
out += [fn("f%d" % i, True) for i in range(30000)]
out += [fn("n%d" % i, False) for i in range(35300)]
out += [fn("g%d" % i, True, True) for i in range(20)]
out.append('\t.section .note.GNU-stack,"",@progbits')
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY
as "$T/big.s" -o "$T/big.o" || { echo "as failed"; exit 1; }
"$E2S" -q "$T/big.o" -o "$T/out.o" || fail "convert"

# hdr FILE: "e_shnum e_shstrndx real_count real_strndx s0_size s0_link"
hdr() {
  LC_ALL=C readelf -hSW "$1" 2>"$T/rerr" | python3 -c '
import re, sys
t = sys.stdin.read()
m = re.search(r"Number of section headers:\s+(\d+) \((\d+)\)", t)
n = re.search(r"Section header string table index:\s+(\d+) \((\d+)\)", t)
z = re.search(r"^\s+\[\s*0\]\s+NULL\s+0+ 0+ ([0-9a-f]+) 00\s+(\d+)\s+0\s+0", t, re.M)
print(m.group(1), n.group(1), m.group(2), n.group(2), int(z.group(1), 16), z.group(2)) if m and n and z else print("none")'
}
read -r a0 a1 a2 a3 a4 a5 <<<"$(hdr "$T/big.o")"
read -r b0 b1 b2 b3 b4 b5 <<<"$(hdr "$T/out.o")"
[ -s "$T/rerr" ] && { fail "readelf warns on the output"; head -3 "$T/rerr"; }
echo "input: e_shnum=$a0 e_shstrndx=$a1 sections=$a2; output: e_shnum=$b0 e_shstrndx=$b1 sections=$b2 (section 0: size $b4 link $b5)"
[ "$a0" = 0 ] && [ "$a1" = 65535 ] && [ "$a2" -gt 65280 ] || fail "the input is not in extended form"
[ "$b0" = 0 ] && [ "$b1" = 65535 ] || fail "output e_shnum/e_shstrndx not extended"
# New: .sframe + .rela.sframe for the ungrouped functions and for each of
# the 20 COMDAT groups.
[ "$b2" = $((a2 + 42)) ] && [ "$b4" = "$b2" ] && [ "$b5" = "$b3" ] ||
  fail "section 0 does not hold the count ($b4 vs $b2) / string table index ($b5 vs $b3); want 42 new sections"
lint_same "$T/big.o" "$T/out.o" || fail "eu-elflint"
v=$("$E2S" --verify "$T/out.o") || fail "--verify: $v"
echo "verify: $v"
echo "$v" | grep -q ' mismatch=0 ' || fail "verify mismatch"
# Every function converted: those in sections past SHN_LORESERVE too.
echo "$v" | grep -q '^functions=30021 match=30021 .* extra=0' || fail "not every function verified: $v"
# The high-index COMDAT function g0 (found through SHT_SYMTAB_SHNDX).
LC_ALL=C readelf -gW "$T/out.o" | grep -A6 '\[g0\]' | grep -q '\.rela\.sframe' ||
  fail "g0's .sframe is not in its COMDAT group"
n=$(LC_ALL=C readelf -gW "$T/out.o" | grep -cE '\]\s+\.sframe$')
[ "$n" = 20 ] || fail "$n groups hold an .sframe, want 20"
if command -v ld.lld >/dev/null; then
  mkdir -p "$T/lldbin"; ln -sf "$(command -v ld.lld)" "$T/lldbin/ld"
  gcc -B"$T/lldbin/" -o "$T/prog" "$T/out.o" && "$T/prog" || fail "lld link and run"
  "$E2S" --verify "$T/prog" | grep -q ' mismatch=0 ' || fail "verify linked"
  ld.lld -r -o "$T/r.o" "$T/out.o" || fail "ld.lld -r"
  "$E2S" --verify "$T/r.o" | grep -q ' mismatch=0 ' || fail "verify ld -r output"
else
  echo "no ld.lld: link checks skipped"
fi
echo "failures $fails"
[ $fails = 0 ]
