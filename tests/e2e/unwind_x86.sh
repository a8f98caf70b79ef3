#!/usr/bin/env bash
# Native x86-64 unwind test: build the harness of tests/unwind (an
# independent SFrame walker compared with libgcc's DWARF unwinder at
# thousands of timer-signal interrupts, also on makecontext stacks and in
# a signal handler above glibc's trampoline), convert the harness, libdeep.so
# and copies of libc/libstdc++/libgcc_s/libm with ./eh2sframe, and run it
# with LD_LIBRARY_PATH on the patched copies (ld.so stays unpatched).
# Variants: gcc (frame pointers omitted except where an attribute keeps
# them, DRAP realignment) and, if installed, clang (frame pointers kept).
# Fails on any disagreement, malformed .sframe, crash, or no comparisons.
# UNWIND_SECS (default 4) sets the run time of each variant.
set -u
cd "$(dirname "$0")/../.."
E2S=${E2S:-$PWD/eh2sframe}
SECS=${UNWIND_SECS:-4}
[ "$(uname -m)" = x86_64 ] || { echo "skip: not an x86-64 host"; exit 77; }
[ -x "$E2S" ] || { echo "skip: no eh2sframe binary (make all)"; exit 77; }
command -v gcc >/dev/null && command -v g++ >/dev/null ||
  { echo "skip: no gcc/g++"; exit 77; }
S=tests/unwind
B=build/unwind/x86_64
rm -rf "$B"
mkdir -p "$B/syslib"
cp "$E2S" "$B/eh2sframe" # snapshot: the tree may be rebuilt meanwhile
E=$B/eh2sframe
fails=0 summary=()
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Patched copies of the system libraries the harness loads.
for l in libc.so.6 libstdc++.so.6 libgcc_s.so.1 libm.so.6; do
  src=$(g++ -print-file-name=$l)
  [ -e "$src" ] || src=/lib/x86_64-linux-gnu/$l
  "$E" -q "$(readlink -f "$src")" -o "$B/syslib/$l" || fail "convert $l"
done
# They carry the default output: frame-row lists shared (x86-64 is
# little-endian), which the walker reads like any other.
sfsize() { echo $((16#$(readelf -SW "$1" | awk '$2 == ".sframe" { print $6 }'))); }
"$E" -q --no-share-fres "$(readlink -f "$(g++ -print-file-name=libstdc++.so.6)")" -o "$B/unshared.so" &&
  [ "$(sfsize "$B/syslib/libstdc++.so.6")" -lt "$(sfsize "$B/unshared.so")" ] ||
  fail "libstdc++.so.6: the default output is not the shared layout"

# variant NAME CC CXX CFLAGS...
variant() {
  local v=$1 cc=$2 cxx=$3; shift 3
  local d=$B/$v W="-Wall -Wextra -Werror -Wshadow"
  mkdir -p "$d/lib"
  $cc -O2 -fPIC -shared -fexceptions $W "$@" -o "$d/libdeep.so" $S/libdeep.c &&
    $cc -O2 -std=c11 $W -Wstrict-prototypes -Wmissing-prototypes -c -o "$d/sfwalk.o" $S/sfwalk.c &&
    $cxx -O2 -pthread $W "$@" -o "$d/harness" $S/harness.cc "$d/sfwalk.o" -L"$d" -ldeep ||
    { fail "$v: build"; return; }
  "$E" -q "$d/harness" -o "$d/harness.sf" && "$E" -q "$d/libdeep.so" -o "$d/lib/libdeep.so" ||
    { fail "$v: convert"; return; }
  LD_LIBRARY_PATH="$d/lib:$B/syslib" timeout 60 "$d/harness.sf" "$SECS" 4 >"$d/out.txt" 2>&1
  local rc=$?
  sed "s/^/  [$v] /" "$d/out.txt" | grep -v '^  \[[a-z]*\]   object'
  for o in libc.so.6 libstdc++.so.6 libdeep.so '(main program)'; do
    grep -qF "object $o" "$d/out.txt" && ! grep -F "object $o" "$d/out.txt" | grep -q ' .sframe$' &&
      fail "$v: $o loaded without .sframe"
  done
  [ $rc = 0 ] || fail "$v: harness exit $rc"
  # The workloads through glibc's signal trampoline (converted with a
  # flexible FDE) and on makecontext stacks must have been compared.
  grep -q ' sigtramp_frames=[1-9]' "$d/out.txt" || fail "$v: no frame compared above a signal frame"
  grep -q ' context_samples=[1-9]' "$d/out.txt" || fail "$v: no sample on a makecontext stack"
  summary+=("$v: $(grep '^summary:' "$d/out.txt" || echo 'no summary (crash?)')")
}

variant gcc gcc g++ -fomit-frame-pointer
if command -v clang >/dev/null && command -v clang++ >/dev/null; then
  variant clang clang clang++ -fno-omit-frame-pointer
else
  summary+=("clang: skipped (not installed)")
fi
printf '%s\n' "${summary[@]}"
echo "failures: $fails"
[ $fails = 0 ]
