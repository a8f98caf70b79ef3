#!/usr/bin/env bash
# Differential test of `eh2sframe --dump-cfi` against readelf (multi-target
# for ELF) on AArch64 and s390x: corpus/ built with the cross compilers,
# .o members of the cross toolchains' static archives, and Debian arm64 and
# s390x packages' libraries and programs (tools/fetch-foreign.sh, cached in
# cache/foreign). For AArch64 the RA-signing state (` mangled`) is checked
# too. Exit 0 only with zero disagreements; 77 when nothing could be tested.
set -u
cd "$(dirname "$0")/../.."
skip() { echo "SKIP: $*"; exit 77; }
for t in readelf python3 ar; do command -v $t >/dev/null || skip "$t not found"; done
[ -x ./eh2sframe ] || skip "./eh2sframe not built"
work=build/cfi_diff/cross
mkdir -p "$work"

. tests/e2e/lib/cfi_files.sh

files=()
abis=()
for abi in aarch64 s390x; do
  command -v $abi-linux-gnu-gcc >/dev/null && command -v $abi-linux-gnu-g++ >/dev/null &&
    abis+=("$abi")
done
if [ ${#abis[@]} -gt 0 ]; then
  tools/build-corpus.sh build/corpus "${abis[@]}" >"$work/corpus.log" 2>&1 ||
    { cat "$work/corpus.log"; echo "FAIL: corpus build"; exit 1; }
  for abi in "${abis[@]}"; do
    while read -r f; do files+=("$f"); done < <(
      cfi_files $(find build/corpus/$abi -type f \( -name '*.o' -o -name prog \) | sort)
      archive_objs /usr/$abi-linux-gnu/lib/libc_nonshared.a 10 $work/ar/$abi-libc_nonshared
      archive_objs /usr/$abi-linux-gnu/lib/libc.a 20 $work/ar/$abi-libc
      archive_objs /usr/lib/gcc-cross/$abi-linux-gnu/12/libstdc++.a 15 $work/ar/$abi-libstdc++)
  done
else
  echo "note: no cross compilers; corpus not built"
fi

tools/fetch-foreign.sh arm64 s390x >"$work/fetch.log" 2>&1
frc=$?
if [ $frc -eq 0 ]; then
  for arch in arm64 s390x; do
    r=cache/foreign/$arch/root
    for f in $r/lib/*/libc.so.6 $r/lib/*/ld-linux*.so.* $r/lib/*/ld64.so.* \
             $r/usr/lib/*/libstdc++.so.6 $r/lib/*/libgcc_s.so.1 $r/usr/lib/*/libgcc_s.so.1 \
             $r/lib/*/libz.so.1 $r/usr/lib/*/libz.so.1 $r/lib/*/libm.so.6 \
             $r/bin/ls $r/bin/cp $r/usr/bin/sort; do
      [ -f "$f" ] && cfi_files "$f" >/dev/null && files+=("$f")
    done
  done
else
  echo "note: foreign packages unavailable (fetch-foreign exit $frc):"; cat "$work/fetch.log"
fi
[ ${#files[@]} -gt 0 ] || skip "no cross compiler and no foreign packages"

python3 tools/cfi_diff.py --strict-errors -v "${files[@]}" >"$work/out.txt" 2>&1
rc=$?
grep -v '^DISAGREE\|^    ' "$work/out.txt"
if [ $rc -ne 0 ]; then
  echo "--- first disagreements (all in $work/out.txt):"
  grep -A3 '^DISAGREE\|^ERROR' "$work/out.txt" | head -80
  exit 1
fi
exit 0
