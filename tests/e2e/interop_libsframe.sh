#!/usr/bin/env bash
# Interop (b): libsframe (binutils 2.47, in the oracle chroot) must decode
# every .sframe eh2sframe writes, its PC lookup (sframe_find_fre) must find
# the right FRE for the first/middle/last PC of every FRE and nothing just
# outside each function (tests/interop/sframe_check.c), and its per-FRE
# CFA/FP/RA recovery must equal our decoder's (`eh2sframe --dump`).
# Also run on gas's reference objects and on gas+ld linked programs, so the
# harness itself is checked against objdump there. Skips (77) without chroot.
set -u
. "$(dirname "$0")/../interop/lib.sh"

files=0 fres=0 lookups=0
run_check() { # FILE LABEL REFTEXT(objdump|dump)
  local f=$1 lab=$2 ref=$3 rc
  oracle "$check" "$f" >"$work/chk.txt" 2>"$work/chk.err"
  rc=$?
  if [ $rc -ne 0 ]; then
    fail "$lab: sframe_check exit $rc: $(cat "$work/chk.err"; grep LOOKUP-BAD "$work/chk.txt" | head -n 3)"
    return
  fi
  local sum
  sum=$(tail -n 1 "$work/chk.txt")
  fres=$((fres + $(echo "$sum" | sed -n 's/.* fres=\([0-9]*\).*/\1/p')))
  lookups=$((lookups + $(echo "$sum" | sed -n 's/.* lookups=\([0-9]*\).*/\1/p')))
  files=$((files + 1))
  $norm "$work/chk.txt" >"$work/a.n" || { fail "$lab: cannot normalise harness output"; return; }
  if [ "$ref" = objdump ]; then
    oracle "$(objdump_for "$f")" --sframe "$f" >"$work/ref.txt" 2>/dev/null
  else
    [ -n "$e2s" ] || return
    "$e2s" --dump "$f" >"$work/ref.txt" 2>/dev/null || { fail "$lab: eh2sframe --dump failed"; return; }
  fi
  $norm "$work/ref.txt" >"$work/b.n" || { fail "$lab: cannot normalise $ref text"; return; }
  if ! diff -u "$work/a.n" "$work/b.n" >"$work/d.txt"; then
    fail "$lab: libsframe and $ref differ"
    head -n 12 "$work/d.txt"
  fi
}

for f in "$repo"/tests/data/gas/*.obj "$repo"/tests/data/gas/*.dso; do
  [ -f "$f" ] && run_check "$f" "gas/$(basename "$f")" objdump
done
build_progs "-O2"
for n in $progs; do run_check "$work/gas/$n" "gas+ld/$n" objdump; done
reffiles=$files
[ -n "$e2s" ] || { echo "note: ./eh2sframe not built; harness checked against objdump only"; }
convert_all
for f in $ours; do run_check "$f" "ours/$(basename "$f")" dump; done
# The default output shares identical frame-row lists on little-endian
# targets: large C/C++ libraries (many shared lists) are converted with
# the defaults, must really be shared (smaller than --no-share-fres) and
# go through the same checks; s390x (byte-swapped here) stays unshared.
default_outputs
for f in $shared_files; do run_check "$f" "$(basename "$f")" dump; done
echo "libsframe: $reffiles reference files, $((files - reffiles)) converted files, $fres FREs, $lookups lookups, $nfail failures"
[ $nfail -eq 0 ]
