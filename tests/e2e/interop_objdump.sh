#!/usr/bin/env bash
# Interop (a): binutils 2.47 `objdump --sframe` (oracle chroot) and our
# `eh2sframe --dump` must see the same FDEs and FREs:
#  1. on gas's reference objects tests/data/gas/*.obj *.dso (our decoder vs
#     objdump on independent input), and the stored objdump text must still
#     match a fresh objdump run;
#  2. on every .sframe eh2sframe writes (test programs built in the chroot
#     without --gsframe, plus aarch64/s390x programs from the host cross
#     compilers): objdump must decode it without any warning and agree.
# Compared after tools/sframe_text_norm.py. Skips (77) without the chroot.
set -u
. "$(dirname "$0")/../interop/lib.sh"

compare() { # FILE LABEL: objdump vs eh2sframe --dump
  local f=$1 lab=$2 od
  od=$(objdump_for "$f")
  oracle "$od" --sframe "$f" >"$work/od.txt" 2>"$work/od.err"
  if [ -s "$work/od.err" ] || grep -qi -e warning -e 'error' "$work/od.txt"; then
    fail "$lab: objdump complains: $(head -n 3 "$work/od.err" "$work/od.txt" | grep -i -e warn -e err | head -n 2 | tr '\n' ' ')"
    return
  fi
  $norm "$work/od.txt" >"$work/a.n" || { fail "$lab: cannot normalise objdump text"; return; }
  if [ -z "$e2s" ]; then return; fi
  "$e2s" --dump "$f" >"$work/ours.txt" 2>"$work/ours.err" || { fail "$lab: eh2sframe --dump failed: $(head -n 2 "$work/ours.err")"; return; }
  $norm "$work/ours.txt" >"$work/b.n" || { fail "$lab: cannot normalise --dump text"; return; }
  if ! diff -u "$work/a.n" "$work/b.n" >"$work/d.txt"; then
    fail "$lab: objdump and eh2sframe --dump differ ($(grep -c '^[-+]F' "$work/d.txt") lines)"
    head -n 12 "$work/d.txt"
  fi
  fres=$((fres + $(grep -c '^FRE' "$work/a.n")))
  files=$((files + 1))
}

files=0 fres=0
[ -n "$e2s" ] || echo "note: ./eh2sframe not built; checking objdump decoding only"
for f in "$repo"/tests/data/gas/*.obj "$repo"/tests/data/gas/*.dso; do
  [ -f "$f" ] || continue
  b=$(basename "$f")
  compare "$f" "gas/$b"
  # The stored text is what 2.47 printed when the object was made.
  txt=${f%.obj}.objdump.txt
  case $f in *.dso) txt=$f.objdump.txt ;; esac
  if [ -f "$txt" ] && ! diff -q <($norm "$txt") "$work/a.n" >/dev/null; then
    fail "gas/$b: objdump output differs from the stored $(basename "$txt")"
  fi
done
gasfiles=$files

build_progs "-O2"
convert_all
for f in $ours; do
  compare "$f" "ours/$(basename "$f")"
done
# The default output shares identical frame-row lists on little-endian
# targets: large C/C++ libraries (many shared lists) are converted with
# the defaults, must really be shared (smaller than --no-share-fres) and
# go through the same checks; s390x (byte-swapped here) stays unshared.
default_outputs
for f in $shared_files; do compare "$f" "$(basename "$f")"; done
echo "objdump vs --dump: $gasfiles gas objects, $((files - gasfiles)) converted files, $fres FREs compared, $nfail failures"
[ -n "$e2s" ] && [ -z "$ours" ] && [ -n "$progs" ] && fail "no converted file to check"
[ $nfail -eq 0 ]
