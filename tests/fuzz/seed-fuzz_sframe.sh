#!/usr/bin/env bash
# Seeds for fuzz_sframe: .sframe sections that ./eh2sframe writes for a few
# small real files of each ABI (linked and relocatable), extracted with
# llvm-objcopy. Usage: seed-fuzz_sframe.sh DIR
set -u
out=${1:?usage: seed-fuzz_sframe.sh DIR}
cd "$(dirname "$0")/../.."
mkdir -p "$out"
oc=$(command -v llvm-objcopy || command -v llvm-objcopy-14) || { echo "llvm-objcopy missing"; exit 1; }
[ -x ./eh2sframe ] || make -s eh2sframe >/dev/null 2>&1 || { echo "cannot build eh2sframe"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
n=0
gas=tests/data/gas
for f in /bin/true /usr/lib/x86_64-linux-gnu/libanl.so.1 /usr/lib/x86_64-linux-gnu/libatomic.so.1 \
         /usr/aarch64-linux-gnu/lib/libatomic.so.1 /usr/s390x-linux-gnu/lib/libatomic.so.1 \
         /usr/s390x-linux-gnu/lib/libgcc_s.so.1 \
         $gas/x86_cases.obj $gas/x86_plt.obj $gas/x86_plt.dso $gas/x86_prog.obj $gas/aarch64_cases.obj \
         $gas/s390x_cases.obj $gas/s390x_plt.obj $gas/s390x_plt.dso; do
  [ -f "$f" ] || continue
  name=$(echo "$f" | sed 's#^/##; s#/#_#g')
  ./eh2sframe "$f" -o "$tmp/o" >/dev/null 2>&1 || continue
  "$oc" --dump-section ".sframe=$out/$name.sframe" "$tmp/o" "$tmp/x" 2>/dev/null && n=$((n + 1))
done
# Sections other tools wrote (binutils 2.47 gas/ld), if any are present.
for f in /usr/lib/x86_64-linux-gnu/*.so*; do
  [ $n -ge 24 ] && break
  readelf -SW "$f" 2>/dev/null | grep -q ' \.sframe ' || continue
  "$oc" --dump-section ".sframe=$out/sys-$(basename "$f").sframe" "$f" "$tmp/x" 2>/dev/null && n=$((n + 1))
done
# Sections the reference assembler (binutils in the oracle chroot) writes.
if [ -f oracle/sid/.eh2sframe-oracle-ok ] && [ "$(id -u)" = 0 ]; then
  mkdir -p "$tmp/or"
  IN_ORACLE_BIND=$tmp/or timeout 60 tools/in-oracle.sh sh -c "
    for a in x86_64:x86_cases x86_64:x86_plt aarch64:aarch64_cases s390x:s390x_cases s390x:s390x_plt; do
      \${a%%:*}-linux-gnu-as --gsframe $PWD/$gas/\${a#*:}.s -o $tmp/or/gas-\${a#*:}.o 2>/dev/null
    done" >/dev/null 2>&1
  for o in "$tmp"/or/gas-*.o; do
    [ -f "$o" ] || continue
    "$oc" --dump-section ".sframe=$out/ref-$(basename "$o" .o).sframe" "$o" "$tmp/x" 2>/dev/null && n=$((n + 1))
  done
fi
# Two blocks in one section (ld.lld concatenates), 8-byte aligned.
a=$out/tests_data_gas_x86_cases.o.sframe b=$out/tests_data_gas_x86_prog.o.sframe
if [ -f "$a" ] && [ -f "$b" ]; then
  { cat "$a"; head -c $(( (8 - $(stat -c %s "$a") % 8) % 8 )) /dev/zero; cat "$b"; } >"$out/two-blocks.sframe"
  n=$((n + 1))
fi
echo "fuzz_sframe seeds: $n in $out"
