#!/usr/bin/env bash
# Free Pascal's .debug_frame (issue #19): FPC 3.2 writes its FDEs with a
# 32-bit length but an 8-byte CIE pointer (an R_X86_64_64 relocation on
# it), so DWARF readers take every later field 4 bytes off: the range
# reads as size << 32. eh2sframe must call such FDEs malformed
# ("cie-pointer-width"), never "function-too-large", in the units of
# fp-units-rtl (relocatable: the relocation's width shows it) and in a
# program fpc links (no relocations left: the location and range read as
# multiples of 2^32). The DWARF readers' view is checked too, as the
# evidence for not converting: binutils readelf and elfutils eu-readelf
# read the range the same way (above 4 GiB, low 32 bits 0).
# Skips (77) without FPC units and without fpc.
set -u
cd "$(dirname "$0")/../.."
E=${E2S:-$PWD/eh2sframe}
[ -x "$E" ] || { echo "SKIP: no ./eh2sframe"; exit 77; }
T=$(mktemp -d /tmp/fpc.XXXXXX)
trap 'rm -rf "$T"' EXIT
nfail=0 nok=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }

# FILE: every FDE skipped as cie-pointer-width, none too large, the
# output an exact copy; the verifier calls them unusable with the reason.
check() {
  local f=$1 line n
  "$E" -v "$f" -o "$T/out" 2>"$T/conv" || { cat "$T/conv"; fail "$f: conversion failed"; return; }
  line=$(grep -m1 ': converted ' "$T/conv")
  n=$(echo "$line" | sed -n 's/.*converted 0 of \([0-9]*\) functions; skipped \1: cie-pointer-width=\1$/\1/p')
  [ -n "$n" ] || { fail "$f: $line"; return; }
  ! grep -q function-too-large "$T/conv" || { fail "$f: function-too-large claimed"; return; }
  cmp -s "$f" "$T/out" || { fail "$f: output is not an exact copy"; return; }
  # The readers' view: the first FDE's range, as readelf reads it.
  local r
  r=$(readelf --debug-dump=frames "$f" 2>/dev/null |
      sed -n 's/^[0-9a-f]* [0-9a-f]* [0-9a-f]* FDE cie=[0-9a-f]* pc=\([0-9a-f]*\)\.\.\([0-9a-f]*\)$/\1 \2/p' | head -1)
  python3 - "$r" <<'EOF' || fail "$f: readelf reads the range as '$r'"
import sys
b, e = (int(x, 16) for x in sys.argv[1].split())
sys.exit(0 if e - b > 0xffffffff and (e - b) & 0xffffffff == 0 else 1)
EOF
  if command -v eu-readelf >/dev/null; then
    eu-readelf --debug-dump=frame "$f" 2>/dev/null | grep -m1 'address_range:' |
      grep -qE 'address_range: +0x[0-9a-f]+00000000$' ||
      fail "$f: eu-readelf reads another range: $(eu-readelf --debug-dump=frame "$f" 2>/dev/null | grep -m1 address_range)"
  fi
  echo "  $f: $n FDEs cie-pointer-width; readelf range $r"
  nok=$((nok + 1))
}

ran=0
for u in $(readlink -f /usr/lib/x86_64-linux-gnu/fpc/*/units/x86_64-linux/rtl/sysutils.o \
             /usr/lib/x86_64-linux-gnu/fpc/*/units/x86_64-linux/rtl/system.o 2>/dev/null | sort -u); do
  [ -f "$u" ] || continue
  check "$u"
  ran=1
done
if command -v fpc >/dev/null; then
  cat >"$T/hello.pas" <<'EOF'
program hello;
procedure inner(n: longint);
begin
  if n > 0 then inner(n - 1) else writeln('hi');
end;
begin
  inner(3);
end.
EOF
  if (cd "$T" && fpc -g hello.pas >fpc.log 2>&1); then
    check "$T/hello.o"
    check "$T/hello"
    ran=1
  else
    fail "fpc: $(tail -2 "$T/fpc.log" | tr '\n' ' ')"
  fi
fi
[ $ran = 1 ] || { echo "SKIP: no Free Pascal units or compiler"; exit 77; }
echo "fpc .debug_frame: $nok files as expected, $nfail failed"
[ $nfail -eq 0 ]
