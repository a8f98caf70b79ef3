#!/usr/bin/env bash
# The fused fast path (src/sframe_emit/sfe_fast.c) must write the same
# .sframe bytes as the general path (DWARF rows, sfe_project.c) for every
# input of tools/sframe-checksums.sh (host programs and libraries, Debian
# arm64/s390x libraries when cached, corpus/truth and corpus/asm for the
# three ABIs, build/corpus), with and without --share-fres; and the fast
# path must actually take most functions (else this compares nothing).
set -u
cd "$(dirname "$0")/../.."
[ -x ./eh2sframe ] || { echo "SKIP: no ./eh2sframe"; exit 77; }
T=$(mktemp -d /tmp/fastpath.XXXXXX)
trap 'rm -rf "$T"' EXIT
tools/sframe-checksums.sh ./eh2sframe >"$T/sums" || { echo "FAIL: checksum run"; exit 1; }
n=0 bad=0
while read -r f mode sum; do
  case $mode in
    ,v3) want=",general" ;;
    ,share) want=",share,general" ;;
    *) continue ;;
  esac
  other=$(awk -v f="$f" -v m="$want" '$1 == f && $2 == m { print $3 }' "$T/sums")
  n=$((n + 1))
  if [ "$sum" = none ] || [ "$sum" != "$other" ]; then
    echo "FAIL: $f: ${mode#,} $sum, through the general path $other"
    bad=$((bad + 1))
  fi
done <"$T/sums"
echo "fast path vs general path: $n comparisons over $((n / 2)) inputs, $bad differ"
# How much goes through the fast path: libc's functions as an example.
libc=/lib/x86_64-linux-gnu/libc.so.6
if [ -f "$libc" ]; then
  EH2SFRAME_DEV_BUILD="$T/a@0x10000000" ./eh2sframe --dump "$libc" 2>"$T/info" >/dev/null
  cat "$T/info"
fi
[ $n -gt 100 ] && [ $bad -eq 0 ]
