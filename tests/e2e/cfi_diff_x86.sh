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

has_cfi() { readelf -S -W "$1" 2>/dev/null | grep -q ' \.eh_frame \| \.debug_frame '; }

# .o members (at most $2, spread over the archive) of a static archive
# that carry CFI.
archive_objs() {
  local a=$1 max=$2 d=$work/ar/$(basename "$1" .a)
  [ -r "$a" ] || return 0
  if [ ! -e "$d/.done" ]; then
    rm -rf "$d"; mkdir -p "$d"
    (cd "$d" && ar x "$a") && touch "$d/.done"
  fi
  local all=() f
  for f in "$d"/*.o; do [ -e "$f" ] && has_cfi "$f" && all+=("$f"); done
  local n=${#all[@]} step=1 i
  [ "$n" -gt "$max" ] && step=$(( (n + max - 1) / max ))
  for ((i = 0; i < n; i += step)); do echo "${all[$i]}"; done
}

files=()
for f in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
         /lib64/ld-linux-x86-64.so.2 /usr/bin/python3.11 /lib/x86_64-linux-gnu/libm.so.6 \
         /usr/lib/x86_64-linux-gnu/libelf.so.1; do
  [ -r "$f" ] && files+=("$f")
done
llvm=/usr/lib/llvm-14/lib/libLLVM-14.so.1
[ "${SAMPLE:-0}" != 1 ] && [ -r $llvm ] && files+=("$llvm")
while read -r f; do files+=("$f"); done < <(
  archive_objs /usr/lib/x86_64-linux-gnu/libc_nonshared.a 20
  archive_objs /usr/lib/x86_64-linux-gnu/libz.a 20
  archive_objs /usr/lib/x86_64-linux-gnu/libelf.a 10
  archive_objs /usr/lib/gcc/x86_64-linux-gnu/12/libgcc.a 10
  archive_objs /usr/lib/gcc/x86_64-linux-gnu/12/libstdc++.a 25
  archive_objs /usr/lib/x86_64-linux-gnu/libc.a 25)
while read -r f; do has_cfi "$f" && files+=("$f"); done < <(find build/corpus/x86_64 -type f \( -name '*.o' -o -name prog \) | sort)
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
