#!/usr/bin/env bash
# A program without section headers (binutils 2.47
# `strip --strip-section-headers`, which also writes e_shentsize 0): the
# conversion gives it a section header table, so its ELF header must say
# 64-byte entries again, or readelf and objdump cannot read the result.
# With no section headers nothing proves what may move: the sections after
# the program headers stay. Checks: readelf reads the headers, objdump
# 2.47 decodes .sframe without complaint, --verify matches, the program
# runs as before, no address of the input's segments changed. Skips (77)
# without the oracle chroot.
set -u
. "$(dirname "$0")/../interop/lib.sh"

for p in /bin/true /usr/bin/env; do
  n=$(basename "$p")
  cp "$p" "$work/$n.in"
  oracle strip --strip-section-headers -o "$work/$n.nosh" "$work/$n.in" ||
    { fail "$n: strip --strip-section-headers failed"; continue; }
  "$e2s" -v "$work/$n.nosh" -o "$work/$n.out" 2>"$work/$n.log" ||
    { fail "$n: conversion failed: $(head -n 2 "$work/$n.log")"; continue; }
  readelf -hW "$work/$n.out" 2>/dev/null | grep -q 'Size of section headers: *64 ' ||
    fail "$n: e_shentsize is not 64"
  # (readelf -S then adds that no section describes .dynamic: true, the
  # input has none either.)
  readelf -SW "$work/$n.out" 2>/dev/null | grep -q '\.sframe' ||
    fail "$n: readelf -S does not list .sframe"
  oracle objdump --sframe "$work/$n.out" >"$work/$n.od" 2>&1 &&
    ! grep -qi -e warning -e error "$work/$n.od" ||
    fail "$n: objdump --sframe: $(grep -i -m1 -e warn -e err "$work/$n.od")"
  "$e2s" --verify "$work/$n.out" >/dev/null 2>&1 || fail "$n: --verify"
  grep -q 'grown in place' "$work/$n.log" &&
    fail "$n: sections moved in a file without section headers"
  # Every old segment keeps its address and size.
  segs() { readelf -lW "$1" 2>/dev/null | awk '$1 ~ /^(LOAD|INTERP|NOTE|DYNAMIC|GNU_RELRO)$/ { print $1, $3, $5, $6 }'; }
  segs "$work/$n.out" >"$work/$n.segs"
  segs "$work/$n.nosh" | grep -vxFf "$work/$n.segs" | grep -q . &&
    fail "$n: an old segment changed"
  a=$("$work/$n.nosh" --version 2>&1); b=$("$work/$n.out" --version 2>&1)
  [ "$a" = "$b" ] || fail "$n: --version differs"
done
echo "failures: $nfail"
[ "$nfail" = 0 ]
