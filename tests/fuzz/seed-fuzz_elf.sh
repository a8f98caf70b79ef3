#!/usr/bin/env bash
# Seeds for fuzz_elf: small real ELF files (linked and relocatable, each
# ABI, with and without an existing .sframe), each prefixed with the
# target's option byte (bit 0 force, bit 1 debug_frame, bit 2
# want_skipped, bit 3 share_fres, bit 4 SFrame V2). Usage: seed-fuzz_elf.sh DIR
set -u
out=${1:?usage: seed-fuzz_elf.sh DIR}
cd "$(dirname "$0")/../.."
mkdir -p "$out"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
n=0
seed() { # sel file name
  [ -f "$2" ] || return 0
  { printf "\\x$1"; cat "$2"; } >"$out/$3"; n=$((n + 1))
}
gas=tests/data/gas
seed 04 /bin/true true
seed 1c /bin/true true-v2-shared
seed 00 /usr/lib/x86_64-linux-gnu/libanl.so.1 libanl
seed 04 /usr/s390x-linux-gnu/lib/libanl.so.1 s390x-libanl
seed 00 /usr/s390x-linux-gnu/lib/libatomic.so.1 s390x-libatomic
for f in x86_basic.obj x86_cases.obj x86_plt.obj x86_prog.obj x86_plt.dso aarch64_cases.obj \
         s390x_cases.obj s390x_plt.obj s390x_plt.dso; do
  seed 04 $gas/$f gas-$f
  seed 18 $gas/$f gas-$f-v2
done
# An existing .sframe (rebuilt with force), and .debug_frame only.
if [ -x ./eh2sframe ] || make -s eh2sframe >/dev/null 2>&1; then
  ./eh2sframe $gas/x86_plt.dso -o "$tmp/plt.so" >/dev/null 2>&1 && seed 01 "$tmp/plt.so" sframe-x86_plt.so
  ./eh2sframe /usr/lib/x86_64-linux-gnu/libanl.so.1 -o "$tmp/anl" >/dev/null 2>&1 && seed 01 "$tmp/anl" sframe-libanl
fi
printf 'int g(int);\nint f(int x){return g(x)+1;}\nint h(int x){int a[9];a[x&7]=x;return g(a[3]);}\n' >"$tmp/t.c"
for cc in gcc aarch64-linux-gnu-gcc s390x-linux-gnu-gcc; do
  command -v $cc >/dev/null || continue
  $cc -O2 -c "$tmp/t.c" -o "$tmp/$cc.o" 2>/dev/null && seed 04 "$tmp/$cc.o" cc-$cc.o
  $cc -O2 -g -fno-asynchronous-unwind-tables -c "$tmp/t.c" -o "$tmp/$cc.df.o" 2>/dev/null &&
    seed 06 "$tmp/$cc.df.o" cc-$cc.debug_frame.o
  # COMDAT groups (C++ inline functions) -> one .sframe per group.
  cxx=${cc%gcc}g++
  command -v $cxx >/dev/null &&
    printf 'inline int in1(int x){return x*3;}\nint out(int y){return in1(y)+1;}\n' >"$tmp/t.cc" &&
    $cxx -O0 -c "$tmp/t.cc" -o "$tmp/$cc.cc.o" 2>/dev/null && seed 04 "$tmp/$cc.cc.o" cxx-$cc.o
done
echo "fuzz_elf seeds: $n in $out"
