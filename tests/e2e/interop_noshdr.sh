#!/usr/bin/env bash
# A program without section headers (binutils 2.47
# `strip --strip-section-headers`, which also writes e_shentsize 0): the
# conversion gives it a section header table, so its ELF header must say
# 64-byte entries again, or readelf and objdump cannot read the result.
# With no section headers nothing proves what may move: the sections after
# the program headers stay. Checks: readelf reads the headers, objdump
# 2.47 decodes .sframe without complaint, --verify matches, the program
# runs as before, no address of the input's segments changed. Converted
# and stripped of its section headers again, it is recognised as converted
# by its PT_GNU_SFRAME (unchanged, exit 0). Skips (77)
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
  # Converted, then stripped of its section headers: PT_GNU_SFRAME says
  # it has SFrame. Left as it is (exit 0, -v says why), never given a
  # second segment; --force cannot rebuild it and says so.
  oracle strip --strip-section-headers -o "$work/$n.sf.nosh" "$work/$n.out" ||
    { fail "$n: strip of the converted file failed"; continue; }
  cp "$work/$n.sf.nosh" "$work/$n.keep"
  "$e2s" -v "$work/$n.sf.nosh" -o "$work/$n.again" 2>"$work/$n.again.log" ||
    fail "$n: converted file without section headers: exit $?"
  cmp -s "$work/$n.sf.nosh" "$work/$n.again" ||
    fail "$n: converted file without section headers was changed"
  grep -q 'already has SFrame (PT_GNU_SFRAME' "$work/$n.again.log" ||
    fail "$n: -v does not say why: $(head -n1 "$work/$n.again.log")"
  "$e2s" -q --in-place "$work/$n.keep" || fail "$n: --in-place: exit $?"
  cmp -s "$work/$n.sf.nosh" "$work/$n.keep" || fail "$n: --in-place changed it"
  if "$e2s" --force "$work/$n.keep" -o "$work/$n.forced" 2>"$work/$n.force.log"; then
    fail "$n: --force on PT_GNU_SFRAME without section headers succeeded"
  fi
  grep -q 'cannot be rebuilt' "$work/$n.force.log" ||
    fail "$n: --force: $(head -n1 "$work/$n.force.log")"
  cmp -s "$work/$n.sf.nosh" "$work/$n.keep" || fail "$n: --force changed the input"
done
echo "failures: $nfail"
[ "$nfail" = 0 ]
