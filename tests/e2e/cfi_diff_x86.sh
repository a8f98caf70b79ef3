#!/usr/bin/env bash
# Differential test: `eh2sframe --dump-cfi` against `readelf
# --debug-dump=frames-interp` (tools/cfi_diff.py) on x86-64 files: system
# libraries and programs, the LLVM 14 library (~95k FDEs), .o members of
# system static archives, and corpus/ built here at several -O levels.
# Exit 0 only with zero disagreements; 77 when a needed tool is missing.
# SAMPLE=1 leaves the LLVM library out (a quicker run).
set -u
cd "$(dirname "$0")/../.."
skip() { echo "SKIP: $*"; exit 77; }
for t in readelf python3 ar gcc g++; do command -v $t >/dev/null || skip "$t not found"; done
[ -x ./eh2sframe ] || skip "./eh2sframe not built"
work=build/cfi_diff/x86
mkdir -p "$work"

tools/build-corpus.sh build/corpus x86_64 >"$work/corpus.log" 2>&1 ||
  { cat "$work/corpus.log"; echo "FAIL: corpus build"; exit 1; }

. tests/e2e/lib/cfi_files.sh

files=()
for f in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
         /lib64/ld-linux-x86-64.so.2 /usr/bin/python3.11 /lib/x86_64-linux-gnu/libm.so.6 \
         /usr/lib/x86_64-linux-gnu/libelf.so.1; do
  [ -r "$f" ] && files+=("$f")
done
llvm=/usr/lib/llvm-14/lib/libLLVM-14.so.1
[ "${SAMPLE:-0}" != 1 ] && [ -r $llvm ] && files+=("$llvm")
pick_ar() { archive_objs "$1" "$2" "$work/ar/$(basename "$1" .a)"; }
while read -r f; do files+=("$f"); done < <(
  pick_ar /usr/lib/x86_64-linux-gnu/libc_nonshared.a 20
  pick_ar /usr/lib/x86_64-linux-gnu/libz.a 20
  pick_ar /usr/lib/x86_64-linux-gnu/libelf.a 10
  pick_ar /usr/lib/gcc/x86_64-linux-gnu/12/libgcc.a 10
  pick_ar /usr/lib/gcc/x86_64-linux-gnu/12/libstdc++.a 25
  pick_ar /usr/lib/x86_64-linux-gnu/libc.a 25
  cfi_files $(find build/corpus/x86_64 -type f \( -name '*.o' -o -name prog \) | sort))
[ ${#files[@]} -gt 0 ] || skip "no input files"

python3 tools/cfi_diff.py --strict-errors -v "${files[@]}" >"$work/out.txt" 2>&1
rc=$?
grep -v '^DISAGREE\|^    ' "$work/out.txt"
if [ $rc -ne 0 ]; then
  echo "--- first disagreements (all in $work/out.txt):"
  grep -A3 '^DISAGREE\|^ERROR' "$work/out.txt" | head -80
  exit 1
fi
exit 0
