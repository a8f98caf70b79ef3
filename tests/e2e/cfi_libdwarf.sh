#!/usr/bin/env bash
# Differential test of `eh2sframe --dump-cfi` against libdwarf's frame
# interpreter (tests/oracle/dwarf_rows.c, built here into build/oracle/).
# Unlike readelf, libdwarf tells "no rule" from DW_CFA_undefined and gives
# expression bytes, so the comparison is exact. libdwarf 20210528 (Debian 12)
# rejects CIEs with the AArch64 'B' augmentation and misreads big-endian
# .eh_frame, so it sees x86-64 files and the Debian arm64 libraries only.
# FULL=1: every FDE of the LLVM library (default: every 4th).
set -u
cd "$(dirname "$0")/../.."
skip() { echo "SKIP: $*"; exit 77; }
for t in cc python3 readelf; do command -v $t >/dev/null || skip "$t not found"; done
[ -r /usr/include/libdwarf/libdwarf.h ] || skip "libdwarf-dev not installed"
[ -x ./eh2sframe ] || skip "./eh2sframe not built"
work=build/cfi_diff/libdwarf
oracle=build/oracle/dwarf_rows
mkdir -p "$work" build/oracle
if [ ! -x $oracle ] || [ tests/oracle/dwarf_rows.c -nt $oracle ]; then
  cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
     -Wmissing-prototypes -o $oracle tests/oracle/dwarf_rows.c -ldwarf ||
    skip "cannot build the libdwarf oracle"
fi
. tests/e2e/lib/cfi_files.sh

files=()
for f in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
         /lib64/ld-linux-x86-64.so.2 /usr/bin/python3.11; do
  [ -r "$f" ] && files+=("$f")
done
if command -v gcc >/dev/null && command -v g++ >/dev/null; then
  tools/build-corpus.sh build/corpus x86_64 >"$work/corpus.log" 2>&1 ||
    { cat "$work/corpus.log"; echo "FAIL: corpus build"; exit 1; }
  while read -r f; do files+=("$f"); done < <(
    cfi_files $(find build/corpus/x86_64 -type f \( -name '*.o' -o -name prog \) | sort))
fi
if tools/fetch-foreign.sh arm64 >"$work/fetch.log" 2>&1; then
  r=cache/foreign/arm64/root
  for f in $r/lib/*/libc.so.6 $r/usr/lib/*/libstdc++.so.6 $r/lib/*/libgcc_s.so.1 $r/bin/ls; do
    [ -f "$f" ] && files+=("$f")
  done
else
  echo "note: arm64 packages unavailable; x86-64 only"
fi
[ ${#files[@]} -gt 0 ] || skip "no input files"

python3 tools/cfi_diff.py --libdwarf $oracle -v "${files[@]}" >"$work/out.txt" 2>&1
rc=$?
llvm=/usr/lib/llvm-14/lib/libLLVM-14.so.1
if [ -r $llvm ]; then
  every=4; [ "${FULL:-0}" = 1 ] && every=1
  python3 tools/cfi_diff.py --libdwarf $oracle --every $every -v $llvm >>"$work/out.txt" 2>&1
  r2=$?; [ $r2 -gt $rc ] && rc=$r2
fi
grep -v '^DISAGREE\|^    ' "$work/out.txt"
if [ $rc -ne 0 ]; then
  echo "--- first disagreements (all in $work/out.txt):"
  grep -A3 '^DISAGREE\|^ERROR' "$work/out.txt" | head -80
  exit 1
fi
exit 0
