#!/usr/bin/env bash
# Seeds for fuzz_cfi: the CFI sections of a few small real files, each
# prefixed with the target's selector byte (bit 0 .debug_frame, bit 1 big
# endian, bit 2 32-bit addresses, bits 3-4 ABI 1 amd64 / 2 aarch64 /
# 3 s390x, bit 5 indirect pointer reads allowed, bit 6 FRE sharing, bit 7
# SFrame V2). Usage: seed-fuzz_cfi.sh DIR
set -u
out=${1:?usage: seed-fuzz_cfi.sh DIR}
cd "$(dirname "$0")/../.."
mkdir -p "$out"
oc=$(command -v llvm-objcopy || command -v llvm-objcopy-14) || { echo "llvm-objcopy missing"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
n=0
# sel file section name
seed() {
  local sel=$1 f=$2 sec=$3 name=$4
  [ -f "$f" ] || return 0
  "$oc" --dump-section "$sec=$tmp/s" "$f" "$tmp/o" 2>/dev/null || return 0
  { printf "\\x$sel"; cat "$tmp/s"; } >"$out/$name"
  # the same section as V2 with shared FREs
  { printf "\\x$(printf %02x $((0x$sel | 0xc0)))"; cat "$tmp/s"; } >"$out/$name.v2"
  n=$((n + 2))
}
gas=tests/data/gas
seed 28 /bin/true .eh_frame true.eh
seed 28 /usr/lib/x86_64-linux-gnu/libanl.so.1 .eh_frame libanl.eh
seed 28 /usr/lib/x86_64-linux-gnu/libatomic.so.1 .eh_frame libatomic.eh
seed 28 /usr/lib/x86_64-linux-gnu/libz.so.1 .eh_frame libz.eh
seed 30 /usr/aarch64-linux-gnu/lib/libatomic.so.1 .eh_frame a64-libatomic.eh
seed 30 /usr/aarch64-linux-gnu/lib/libgcc_s.so.1 .eh_frame a64-libgcc_s.eh
seed 3a /usr/s390x-linux-gnu/lib/libatomic.so.1 .eh_frame s390x-libatomic.eh
seed 3a /usr/s390x-linux-gnu/lib/libgcc_s.so.1 .eh_frame s390x-libgcc_s.eh
seed 08 $gas/x86_basic.obj .eh_frame gas-x86_basic.eh
seed 08 $gas/x86_cases.obj .eh_frame gas-x86_cases.eh
seed 08 $gas/x86_plt.obj .eh_frame gas-x86_plt.eh
seed 08 $gas/x86_prog.obj .eh_frame gas-x86_prog.eh
seed 28 $gas/x86_plt.dso .eh_frame gas-x86_plt_so.eh
seed 10 $gas/aarch64_cases.obj .eh_frame gas-a64_cases.eh
seed 1a $gas/s390x_cases.obj .eh_frame gas-s390x_cases.eh
seed 1a $gas/s390x_plt.obj .eh_frame gas-s390x_plt.eh
seed 3a $gas/s390x_plt.dso .eh_frame gas-s390x_plt_so.eh
# .debug_frame (version 1/3/4 CIEs) from quick compiles, when gcc works.
src=$tmp/t.c
printf 'int g(int);\nint f(int x){int a[64];for(int i=0;i<64;i++)a[i]=g(i+x);return a[x&63];}\n' >"$src"
for cc in gcc aarch64-linux-gnu-gcc s390x-linux-gnu-gcc; do
  command -v $cc >/dev/null || continue
  case $cc in gcc) sel=09;; aarch64*) sel=11;; s390x*) sel=1b;; esac
  $cc -O2 -g -fno-asynchronous-unwind-tables -c "$src" -o "$tmp/$cc.o" 2>/dev/null || continue
  seed $sel "$tmp/$cc.o" .debug_frame "cc-$cc.debug_frame"
  $cc -O2 -g -gdwarf-4 -fno-asynchronous-unwind-tables -c "$src" -o "$tmp/$cc.4.o" 2>/dev/null || continue
  seed $sel "$tmp/$cc.4.o" .debug_frame "cc-$cc-dw4.debug_frame"
done
echo "fuzz_cfi seeds: $n in $out"
