#!/usr/bin/env bash
# Unwind-truth classes (issue #10). corpus/truth/<abi>.S holds one function
# per class of CFI shape, each with an "expect: NAME converted|skip REASON"
# line. For every ABI, as a relocatable object and linked into a shared
# object:
#   - the converter's verdict per function (eh2sframe -v) is the expected
#     one;
#   - the independent verifier agrees on its own: a converted function
#     matches at every check point, a skipped one is judged inexpressible
#     (--verify -v lists it as "skipped", never "missing" or "mismatch");
#   - --verify reports mismatch=0 extra=0.
# Then the real functions the issue names, by name: setcontext in the
# host's x86-64 libc (skip sp-rule); setcontext (cfa-register) and
# __rawmemchr (ra-rule) in Debian arm64 libc6; __fentry__ in s390x libc6
# (return column r0: converted, and it must verify).
set -u
cd "$(dirname "$0")/../.."
E=$PWD/eh2sframe
[ -x "$E" ] || { echo "SKIP: no ./eh2sframe"; exit 77; }
T=$(mktemp -d /tmp/truth.XXXXXX)
trap 'rm -rf "$T"' EXIT
nfail=0 nok=0 nabi=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }

# check FILE SRC: conversion verdicts and verifier agreement for FILE.
check() {
  local f=$1 src=$2 tag=$3 name want reason got vgot line
  if ! "$E" -v "$f" -o "$f.sf" 2>"$f.conv"; then
    cat "$f.conv"; fail "$tag: conversion failed"; return
  fi
  "$E" -v --verify "$f.sf" >"$f.ver" 2>&1
  line=$(tail -1 "$f.ver")
  echo "$tag: $(grep -m1 ': converted' "$f.conv" | sed 's/^[^:]*: //')"
  echo "$tag: verify $line"
  echo "$line" | grep -q ' mismatch=0 missing=0 skipped=[0-9]* extra=0' ||
    { grep -E '^(mismatch|missing|extra)' "$f.ver" | head; fail "$tag: verify: $line"; }
  while read -r name want reason; do
    got=$(grep -E "  skipped $name at 0x[0-9a-f]+: " "$f.conv" | sed 's/.*: //')
    vgot=$(grep -E "^[a-z]+ .* $name: " "$f.ver" | cut -d' ' -f1)
    if [ "$want" = converted ]; then
      if [ -n "$got" ] || [ -n "$vgot" ]; then
        fail "$tag: $name: expected converted, converter '${got:-converted}', verifier '${vgot:-match}'"
        continue
      fi
    else
      if [ "$got" != "$reason" ] || [ "$vgot" != skipped ]; then
        fail "$tag: $name: expected skip $reason, converter '${got:-converted}', verifier '${vgot:-match}'"
        continue
      fi
    fi
    printf '  %-7s %-20s %-9s %s\n' "$tag" "$name" "$want" "${reason:-}"
    nok=$((nok + 1))
  done < <(sed -n 's/.*expect: \([A-Za-z0-9_]*\) \(converted\|skip\) *\([a-z0-9-]*\).*/\1 \2 \3/p' "$src")
}

for abi in x86_64 aarch64 s390x; do
  src=corpus/truth/$abi.S
  if [ $abi = x86_64 ]; then cc=gcc; else cc=$abi-linux-gnu-gcc; fi
  command -v $cc >/dev/null || { echo "note: no $cc, $abi skipped"; continue; }
  $cc -c "$src" -o "$T/$abi.o" || { fail "$abi: assembling $src"; continue; }
  $cc -shared -nostdlib -Wl,--hash-style=gnu "$T/$abi.o" -o "$T/$abi.so" ||
    { fail "$abi: linking"; continue; }
  nabi=$((nabi + 1))
  check "$T/$abi.o" "$src" "$abi.o"
  check "$T/$abi.so" "$src" "$abi.so"
done
[ $nabi -gt 0 ] || { echo "SKIP: no compiler"; exit 77; }

# The real functions, by name.
real() { # FILE FUNC EXPECT(converted|REASON) TAG
  local f=$1 fn=$2 want=$3 tag=$4 got v
  [ -f "$f" ] || { echo "note: $f not available"; return; }
  "$E" -v "$f" -o "$T/real.sf" 2>"$T/real.conv" || { fail "$tag: convert $f"; return; }
  got=$(grep -E "  skipped $fn at 0x[0-9a-f]+: " "$T/real.conv" | sed 's/.*: //')
  v=$("$E" -v --verify "$T/real.sf" 2>&1)
  if [ "$want" = converted ]; then
    [ -z "$got" ] && ! echo "$v" | grep -qE "^[a-z]+ .* $fn: " ||
      { fail "$tag $fn: expected converted, got '${got}' / $(echo "$v" | grep " $fn: ")"; return; }
  else
    [ "$got" = "$want" ] && echo "$v" | grep -qE "^skipped .* $fn: " ||
      { fail "$tag $fn: expected skip $want, got '${got:-converted}' / $(echo "$v" | grep " $fn: ")"; return; }
  fi
  echo "$v" | tail -1 | grep -q ' mismatch=0 .* extra=0' || { fail "$tag: verify $(echo "$v" | tail -1)"; return; }
  echo "  real    $tag $fn: ${got:-converted}; verifier: $(echo "$v" | grep -m1 " $fn: " || echo match)"
  nok=$((nok + 1))
}
real /lib/x86_64-linux-gnu/libc.so.6 setcontext sp-rule "x86-64 libc"
if tools/fetch-foreign.sh arm64 s390x >"$T/fetch.log" 2>&1; then
  A=cache/foreign/arm64/root/lib/aarch64-linux-gnu/libc.so.6
  S=cache/foreign/s390x/root/lib/s390x-linux-gnu/libc.so.6
  real "$A" setcontext cfa-register "arm64 libc6"
  real "$A" __rawmemchr ra-rule "arm64 libc6"
  real "$S" __fentry__ converted "s390x libc6"
else
  echo "note: Debian arm64/s390x libc6 unavailable; real-function checks for them skipped"
fi
echo "truth classes: $nok as expected, $nfail failed"
[ $nfail -eq 0 ]
