#!/usr/bin/env bash
# contrib/jit/jit_sframe.c, built as C with gcc and clang and as C++ with
# g++ against the library (build/libeh2sframe.a): generates two x86-64 functions with CFI, builds
# their .eh_frame in memory and registers it, converts it with
# eh2s_convert_section, checks it with eh2s_verify_section, then unwinds
# each generated frame with its own SFrame reader and with libgcc's DWARF
# unwinder: both must name the same caller. --corrupt changes one CFA
# offset after conversion: the verifier must reject it (exit 1).
set -u
cd "$(dirname "$0")/../.."
[ -f build/libeh2sframe.a ] || { echo "no build/libeh2sframe.a"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: the example generates x86-64 code"; exit 77; }
T=$(mktemp -d /tmp/eco_jit.XXXXXX)
trap 'rm -rf "$T"' EXIT
nfail=0 nok=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { nok=$((nok + 1)); }
for cc in gcc clang g++; do
  command -v $cc >/dev/null || { echo "note: no $cc"; continue; }
  lang=(-std=c11)
  [ $cc = g++ ] && lang=(-std=c++11 -pedantic -x c++)
  $cc -O2 -Wall -Wextra -Werror -fno-omit-frame-pointer -Iinclude \
    -o "$T/jit_$cc" "${lang[@]}" contrib/jit/jit_sframe.c -x none build/libeh2sframe.a -lz -llzma 2>"$T/cc.err" &&
    ok || { fail "$cc: $(cat "$T/cc.err")"; continue; }
  out=$("$T/jit_$cc" 2>&1); rc=$?
  echo "$out" | sed "s/^/  $cc: /"
  [ $rc = 0 ] && ok || fail "$cc: exit $rc"
  echo "$out" | grep -q '^converted 2 of 2 functions' && ok || fail "$cc: conversion line"
  echo "$out" | grep -q '^verify: functions=2 match=2 mismatch=0 missing=0' && ok || fail "$cc: verify line"
  for fn in gen_fp gen_sp; do
    line=$(echo "$out" | grep "^$fn: pc ")
    # "caller X (SFrame) = Y (DWARF)" with X == Y, both non-zero
    s=$(echo "$line" | sed -n 's/.*caller \(0x[0-9a-f]*\) (SFrame).*/\1/p')
    d=$(echo "$line" | sed -n 's/.*= \(0x[0-9a-f]*\) (DWARF).*/\1/p')
    [ -n "$s" ] && [ "$s" = "$d" ] && ok || fail "$cc: $fn: SFrame and DWARF callers differ: $line"
  done
  out=$("$T/jit_$cc" --corrupt 2>&1); rc=$?
  [ $rc = 1 ] && echo "$out" | grep -q 'match=1 mismatch=1' &&
    echo "$out" | grep -q '^verify: mismatch at 0x[0-9a-f]*: CFA' && ok ||
    fail "$cc: corrupted .sframe not rejected (exit $rc): $out"
done
echo "eco_jit: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
