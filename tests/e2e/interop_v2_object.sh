#!/usr/bin/env bash
# An object file whose .sframe is SFrame V2 (what binutils 2.41-2.45
# assemblers write with --gsframe) is rebuilt as V3 by default: GNU ld
# 2.46.1 and later ignore V2 input ("unexpected SFrame section type;
# section ignored") and 2.46.0 fails the link. A linked file keeps its V2
# (glibc's reader reads V2) unless --force. Checks, with binutils 2.47 of
# the oracle chroot as the judge:
#   - the V2 objects (one from Debian trixie's binutils 2.44 `as --gsframe`,
#     tools/make-v2as.sh; one written by eh2sframe --sframe-version=2;
#     objdump 2.47 reads both as version 2) convert, exit 0, -v says why,
#     and the result's .sframe is V3 (objdump) and matches its DWARF;
#   - ld 2.47 links the rebuilt object into a program whose .sframe covers
#     the object's functions (objdump lists them), where the V2 object's
#     SFrame is left out of the link;
#   - --sframe-version=2 keeps the V2 object as it is;
#   - a linked file with V2 keeps it without --force.
# Skips (77) without the oracle chroot.
set -u
. "$(dirname "$0")/../interop/lib.sh"
[ -n "$e2s" ] || { echo "SKIP: no ./eh2sframe"; exit 77; }

cat >"$work/f.c" <<'EOF'
int g(int);
__attribute__((noinline)) int f1(int x) { return g(x) * 3 + 1; }
__attribute__((noinline)) int f2(int x) { int a[16]; for (int i = 0; i < 16; i++) a[i] = g(i + x); return a[x & 15]; }
EOF
cat >"$work/m.c" <<'EOF'
int f1(int), f2(int);
int g(int x) { return x + 1; }
int main(int c, char **v) { (void)v; return (f1(c) + f2(c)) & 0x7f; }
EOF
oracle gcc -O1 -c f.c -o f.o || { fail "cc f.c"; exit 1; }
oracle gcc -O1 -c m.c -o m.o || { fail "cc m.c"; exit 1; }

# The V2 objects: one from an SFrame V2 assembler (Debian trixie's
# binutils 2.44 `as --gsframe`, in a chroot tools/make-v2as.sh makes once),
# and one written by eh2sframe --sframe-version=2.
v2=()
if v2dir=$(bash "$repo/tools/make-v2as.sh" 2>"$work/v2as.log"); then
  gcc -O1 -S "$work/f.c" -o "$v2dir/tmp/f.s" &&
    chroot "$v2dir" as --gsframe -o /tmp/f.o /tmp/f.s &&
    cp "$v2dir/tmp/f.o" "$work/f.gas.o" && v2+=(gas) ||
    fail "trixie's as --gsframe on f.s"
  rm -f "$v2dir/tmp/f.s" "$v2dir/tmp/f.o"
else
  echo "note: no SFrame V2 assembler ($(tail -n1 "$work/v2as.log")); eh2sframe's own V2 object only"
fi
"$e2s" -q --sframe-version=2 "$work/f.o" -o "$work/f.own.o" && v2+=(own) || fail "writing the V2 object"
echo "V2 objects: ${v2[*]}"
[ ${#v2[@]} -gt 0 ] || fail "no V2 object"

for k in "${v2[@]}"; do
oracle objdump --sframe "f.$k.o" >"$work/v2.$k.od" 2>&1
grep -q 'Version: SFRAME_VERSION_2' "$work/v2.$k.od" ||
  fail "$k: objdump 2.47 does not read the V2 object as V2: $(grep -m1 Version "$work/v2.$k.od")"

# 1. Rebuilt as V3 by default, and -v says why.
cp "$work/f.$k.o" "$work/f.$k.keep"
"$e2s" -v "$work/f.$k.o" -o "$work/f.$k.v3.o" 2>"$work/v3.$k.log" ||
  fail "$k: conversion of the V2 object: exit $? ($(head -n1 "$work/v3.$k.log"))"
cmp -s "$work/f.$k.o" "$work/f.$k.keep" || fail "$k: the input was changed"
grep -q 'rebuilt as V3' "$work/v3.$k.log" || fail "$k: -v does not say the V2 section was rebuilt: $(cat "$work/v3.$k.log")"
oracle objdump --sframe "f.$k.v3.o" >"$work/v3.$k.od" 2>&1
grep -q 'Version: SFRAME_VERSION_3' "$work/v3.$k.od" ||
  fail "$k: the rebuilt object's .sframe is not V3: $(grep -m1 Version "$work/v3.$k.od")"
grep -qi -e warning -e error "$work/v3.$k.od" && fail "$k: objdump 2.47: $(grep -i -m1 -e warn -e err "$work/v3.$k.od")"
[ "$(readelf -SW "$work/f.$k.v3.o" | grep -c ' \.sframe ')" = 1 ] || fail "$k: not exactly one .sframe"
"$e2s" --verify "$work/f.$k.v3.o" >"$work/v3.$k.vf" 2>&1 || fail "$k: --verify of the rebuilt object: $(tail -n1 "$work/v3.$k.vf")"
cp "$work/f.$k.keep" "$work/f.$k.inplace.o"
"$e2s" -q --in-place "$work/f.$k.inplace.o" || fail "$k: --in-place on the V2 object"
cmp -s "$work/f.$k.inplace.o" "$work/f.$k.v3.o" || fail "$k: --in-place and -o differ"

# 2. ld 2.47 links the rebuilt object with its SFrame; the V2 one's is
#    left out (or the link fails, as with 2.46.0).
[ -f "$work/m.sf.o" ] || oracle gcc -Wa,--gsframe -c m.c -o m.sf.o 2>/dev/null || cp "$work/m.o" "$work/m.sf.o"
oracle gcc -o "prog.$k" "f.$k.v3.o" m.sf.o 2>"$work/ld.$k.log" || fail "$k: ld 2.47 on the rebuilt object: $(head -n2 "$work/ld.$k.log")"
grep -qi 'sframe' "$work/ld.$k.log" && fail "$k: ld 2.47 complains about the rebuilt object: $(grep -i -m1 sframe "$work/ld.$k.log")"
if [ -x "$work/prog.$k" ]; then
  oracle objdump --sframe "prog.$k" >"$work/prog.$k.od" 2>&1
  f1=$(nm "$work/prog.$k" | awk '$3 == "f1" { print $1 }')
  grep -q "pc = $(printf '0x%x' "0x${f1:-0}")," "$work/prog.$k.od" ||
    fail "$k: the linked program's .sframe does not cover f1 (0x$f1)"
  # ld's own rows are not ours to judge (its .plt.got FRE, _start of
  # a crt1.o without SFrame): f1 and f2 must match.
  "$e2s" --verify -v "$work/prog.$k" >"$work/prog.$k.vf" 2>&1
  grep -E ' (f1|f2)(:|$)' "$work/prog.$k.vf" &&
    fail "$k: --verify of the linked program: f1/f2 do not match"
  grep -q 'functions=' "$work/prog.$k.vf" || fail "$k: --verify of the linked program: $(tail -n1 "$work/prog.$k.vf")"
fi
oracle gcc -o "prog.$k.v2" "f.$k.keep" m.sf.o >"$work/ld.$k.v2.log" 2>&1
grep -qi 'sframe' "$work/ld.$k.v2.log" ||
  echo "note: $k: ld 2.47 said nothing about the V2 object (it may accept V2 again)"

# 3. Asked for V2, the V2 object stays as it is.
"$e2s" -q --sframe-version=2 "$work/f.$k.keep" -o "$work/f.$k.still.o" || fail "$k: --sframe-version=2: exit $?"
cmp -s "$work/f.$k.keep" "$work/f.$k.still.o" || fail "$k: --sframe-version=2 changed the V2 object"
done

# 4. A linked file keeps its V2 without --force.
oracle gcc -o prog.nosf f.o m.o || fail "link without SFrame"
"$e2s" -q --sframe-version=2 "$work/prog.nosf" -o "$work/prog.v2sf" || fail "V2 of a linked file"
"$e2s" -q "$work/prog.v2sf" -o "$work/prog.again" || fail "linked V2 file: exit $?"
cmp -s "$work/prog.v2sf" "$work/prog.again" || fail "a linked file's V2 was rebuilt without --force"
echo "failures: $nfail"
[ "$nfail" = 0 ]
