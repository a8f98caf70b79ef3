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
#   - --verify reports mismatch=0 missing=0 extra=0, V3 and V2 (missing:
#     a function SFrame can describe that the converter dropped);
#   - "converted flex" (issue #19): the function has a flexible FDE, and
#     every other converted one a default FDE (no flexible FDE where a
#     default one suffices); with --sframe-version=2, which has flexible
#     FDEs on s390x only, it is skipped as not-in-sframe-v2 (AMD64,
#     AArch64) and the verifier, reading V2, finds it inexpressible too.
# Then the real functions the issues name, by name: setcontext in the
# host's x86-64 libc (skip sp-rule); in Debian's arm64 libc6, bookworm's
# (2.36) and trixie's (2.41, SUITE=trixie tools/fetch-foreign.sh),
# __clone, __vfork, setcontext, __sigsetjmp and __rawmemchr (and 2.41's
# __clone3 and _Fork) converted with flexible FDEs where they need them
# (register-held RA, CFA on x0); __fentry__ in s390x libc6 (return
# column r0: converted, and it must verify). Each of these libcs,
# converted V3 and V2, verifies with mismatch=0 missing=0 extra=0: no
# function the DWARF allows is left out.
set -u
cd "$(dirname "$0")/../.."
E=${E2S:-$PWD/eh2sframe}
[ -x "$E" ] || { echo "SKIP: no ./eh2sframe"; exit 77; }
T=$(mktemp -d /tmp/truth.XXXXXX)
trap 'rm -rf "$T"' EXIT
nfail=0 nok=0 nabi=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }

# flex_p FILE NAME DUMP: is the FDE of FILE's function NAME in DUMP (the
# --dump text of FILE converted) a flexible one? Exit 2 when it has none.
flex_p() {
  local addr
  addr=$(readelf -sW "$1" 2>/dev/null |
         awk -v n="$2" '$4 == "FUNC" { s = $8; sub(/@.*/, "", s); if (s == n) { print $2; exit } }')
  [ -n "$addr" ] || return 2
  addr=$(printf '0x%x' "0x$addr")
  grep -q "pc = $addr, .*attr = \"[A-Z]*F" "$3" && return 0
  grep -q "pc = $addr, " "$3" && return 1
  return 2
}

# check FILE SRC: conversion verdicts and verifier agreement for FILE.
check() {
  local f=$1 src=$2 tag=$3 name want reason got vgot line fx
  if ! "$E" -v "$f" -o "$f.sf" 2>"$f.conv"; then
    cat "$f.conv"; fail "$tag: conversion failed"; return
  fi
  "$E" --dump "$f.sf" >"$f.sf.dump" 2>&1 || fail "$tag: --dump failed"
  "$E" -v --sframe-version=2 "$f" -o "$f.v2" 2>"$f.conv2" ||
    { cat "$f.conv2"; fail "$tag: V2 conversion failed"; return; }
  "$E" -v --verify "$f.v2" >"$f.ver2" 2>&1
  tail -1 "$f.ver2" | grep -q ' mismatch=0 missing=0 skipped=[0-9]* extra=0' ||
    fail "$tag: V2 verify: $(tail -1 "$f.ver2")"
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
      flex_p "$f" "$name" "$f.sf.dump"; fx=$?
      if [ $fx = 2 ] || { [ "$reason" = flex ] && [ $fx != 0 ]; } ||
         { [ "$reason" != flex ] && [ $fx = 0 ]; }; then
        fail "$tag: $name: expected a ${reason:-default} FDE, $([ $fx = 0 ] && echo flexible || echo "default or none")"
        continue
      fi
      if [ "$reason" = flex ] && [ "${tag%%.*}" != s390x ]; then
        got=$(grep -E "  skipped $name at 0x[0-9a-f]+: " "$f.conv2" | sed 's/.*: //')
        vgot=$(grep -E "^[a-z]+ .* $name: " "$f.ver2" | cut -d' ' -f1)
        if [ "$got" != not-in-sframe-v2 ] || [ "$vgot" != skipped ]; then
          fail "$tag: $name: V2 expected skip not-in-sframe-v2, converter '${got:-converted}', verifier '${vgot:-match}'"
          continue
        fi
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
real() { # FILE FUNC EXPECT(converted|flex|REASON) TAG
  local f=$1 fn=$2 want=$3 tag=$4 got v fx
  [ -f "$f" ] || { echo "note: $f not available"; return; }
  if [ "$f" != "$real_in" ]; then # one conversion per file
    "$E" -v "$f" -o "$T/real.sf" 2>"$T/real.conv" || { fail "$tag: convert $f"; real_in=; return; }
    "$E" -v --verify "$T/real.sf" >"$T/real.ver" 2>&1
    "$E" --dump "$T/real.sf" >"$T/real.sf.dump" 2>&1
    real_in=$f
    # The whole file, V3 and V2: nothing the DWARF allows is missing.
    tail -1 "$T/real.ver" | grep -q ' mismatch=0 missing=0 skipped=[0-9]* extra=0' ||
      { grep -E '^(mismatch|missing|extra)' "$T/real.ver" | head -5
        fail "$tag: verify $f: $(tail -1 "$T/real.ver")"; }
    if "$E" --sframe-version=2 "$f" -o "$T/real.v2" 2>"$T/real.conv2"; then
      "$E" -v --verify "$T/real.v2" >"$T/real.ver2" 2>&1
      tail -1 "$T/real.ver2" | grep -q ' mismatch=0 missing=0 skipped=[0-9]* extra=0' ||
        { grep -E '^(mismatch|missing|extra)' "$T/real.ver2" | head -5
          fail "$tag: V2 verify $f: $(tail -1 "$T/real.ver2")"; }
      echo "  real    $tag: V3 $(tail -1 "$T/real.ver"); V2 $(tail -1 "$T/real.ver2")"
    else
      cat "$T/real.conv2"; fail "$tag: V2 convert $f"
    fi
  fi
  got=$(grep -E "  skipped $fn at 0x[0-9a-f]+: " "$T/real.conv" | sed 's/.*: //')
  v=$(cat "$T/real.ver")
  if [ "$want" = converted ] || [ "$want" = flex ]; then
    [ -z "$got" ] && ! echo "$v" | grep -qE "^[a-z]+ .* $fn: " ||
      { fail "$tag $fn: expected converted, got '${got}' / $(echo "$v" | grep " $fn: ")"; return; }
    flex_p "$f" "$fn" "$T/real.sf.dump"; fx=$?
    if [ "$want" = flex ] && [ $fx != 0 ]; then
      fail "$tag $fn: expected a flexible FDE"; return
    fi
    [ "$want" = flex ] && got=flex
  else
    [ "$got" = "$want" ] && echo "$v" | grep -qE "^skipped .* $fn: " ||
      { fail "$tag $fn: expected skip $want, got '${got:-converted}' / $(echo "$v" | grep " $fn: ")"; return; }
  fi
  echo "$v" | tail -1 | grep -q ' mismatch=0 .* extra=0' || { fail "$tag: verify $(echo "$v" | tail -1)"; return; }
  echo "  real    $tag $fn: ${got:-converted}; verifier: $(echo "$v" | grep -m1 " $fn: " || echo match)"
  nok=$((nok + 1))
}
real_in=
real /lib/x86_64-linux-gnu/libc.so.6 setcontext sp-rule "x86-64 libc"
if tools/fetch-foreign.sh arm64 s390x >"$T/fetch.log" 2>&1; then
  A=cache/foreign/arm64/root/lib/aarch64-linux-gnu/libc.so.6
  S=cache/foreign/s390x/root/lib/s390x-linux-gnu/libc.so.6
  # glibc 2.36: __clone, __vfork and __sigsetjmp need nothing special;
  # setcontext's CFA is x0, __rawmemchr parks LR in x15.
  for fn in __clone __vfork __sigsetjmp; do real "$A" $fn converted "arm64 libc6 2.36"; done
  real "$A" setcontext flex "arm64 libc6 2.36"
  real "$A" __rawmemchr flex "arm64 libc6 2.36"
  real "$S" __fentry__ converted "s390x libc6"
else
  echo "note: Debian arm64/s390x libc6 unavailable; real-function checks for them skipped"
fi
# glibc 2.41 (trixie): the guarded-control-stack code parks LR in x13.
if SUITE=trixie PKGS=libc6 tools/fetch-foreign.sh arm64 >"$T/fetch2.log" 2>&1; then
  A=cache/foreign/arm64-trixie/root/usr/lib/aarch64-linux-gnu/libc.so.6
  for fn in __clone __vfork _Fork setcontext __sigsetjmp __rawmemchr; do
    real "$A" $fn flex "arm64 libc6 2.41"
  done
else
  echo "note: trixie's arm64 libc6 unavailable ($(tail -1 "$T/fetch2.log")); its checks skipped"
fi
echo "truth classes: $nok as expected, $nfail failed"
[ $nfail -eq 0 ]
