#!/usr/bin/env bash
# AArch64 and s390x unwind test under qemu-user: cross-compile the harness
# of tests/unwind (SFrame walker vs libgcc's DWARF unwinder at timer
# interrupts), convert it with ./eh2sframe and run it briefly.
#   dyn:    PIE + libdeep.so (PLT calls) + patched copies of the sysroot's
#           libc/libstdc++/libgcc_s/libm via LD_LIBRARY_PATH; on AArch64
#           libdeep is built with -mbranch-protection=pac-ret (signed RAs).
#   dyn-trixie (AArch64): the same on Debian trixie's glibc 2.41, whose
#           __clone/__vfork/_Fork need flexible FDEs (skipped without it).
#   static: one static executable (it contains libc), patched as a whole.
#           Static libgcc locks a mutex per FDE lookup, so samples taken
#           during a throw are walked by sfwalk only (see harness.cc).
# Exit 77 when no cross toolchain/qemu is installed. UNWIND_SECS (default
# 3) sets the run time of each run.
set -u
cd "$(dirname "$0")/../.."
E2S=${E2S:-$PWD/eh2sframe}
SECS=${UNWIND_SECS:-3}
[ -x "$E2S" ] || { echo "skip: no eh2sframe binary (make all)"; exit 77; }
S=tests/unwind
fails=0 ran=0 summary=()
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run_one ARCH VARIANT DIR QEMU-ARGS...: run DIR/harness.sf, check output.
run_one() {
  local a=$1 v=$2 d=$3; shift 3
  timeout 90 qemu-$a "$@" "$d/harness.sf" "$SECS" 4 1000 >"$d/out.txt" 2>&1
  local rc=$?
  sed "s/^/  [$a $v] /" "$d/out.txt" | grep -v '^  \[[a-z0-9 ]*\]   object'
  [ $rc = 0 ] || fail "$a $v: harness exit $rc"
  # Samples on makecontext stacks must have been compared. (The signal
  # return trampolines are qemu's/the vDSO's here, without SFrame: the
  # handler workload is walked up to them.)
  grep -q ' context_samples=[1-9]' "$d/out.txt" || fail "$a $v: no sample on a makecontext stack"
  if grep -F '   object ' "$d/out.txt" | grep -v -e ld-linux -e ld64 | grep -qv ' .sframe$'; then
    fail "$a $v: an object other than the loader has no .sframe"
  fi
  summary+=("$a $v: $(grep '^summary:' "$d/out.txt" || echo 'no summary (crash?)')")
  ran=$((ran + 1))
}

for a in aarch64 s390x; do
  cc=$a-linux-gnu-gcc cxx=$a-linux-gnu-g++ sys=/usr/$a-linux-gnu
  if ! command -v $cc >/dev/null || ! command -v $cxx >/dev/null || ! command -v qemu-$a >/dev/null; then
    summary+=("$a: skipped (no $cxx or qemu-$a)"); continue
  fi
  B=build/unwind/$a
  rm -rf "$B"
  mkdir -p "$B/dyn/lib" "$B/static"
  cp "$E2S" "$B/eh2sframe" # snapshot: the tree may be rebuilt meanwhile
  E=$B/eh2sframe
  W="-Wall -Wextra -Werror -Wshadow"
  pac=
  [ $a = aarch64 ] && pac=-mbranch-protection=pac-ret

  # dyn
  d=$B/dyn
  if $cc -O2 -fPIC -shared -fexceptions -fomit-frame-pointer $pac $W -o "$d/libdeep.so" $S/libdeep.c &&
     $cc -O2 -std=c11 $W -c -o "$d/sfwalk.o" $S/sfwalk.c &&
     $cxx -O2 -pthread -fomit-frame-pointer $W -o "$d/harness" $S/harness.cc "$d/sfwalk.o" -L"$d" -ldeep; then
    ok=1
    "$E" -q "$d/harness" -o "$d/harness.sf" || { fail "$a dyn: convert harness"; ok=0; }
    "$E" -q "$d/libdeep.so" -o "$d/lib/libdeep.so" || { fail "$a dyn: convert libdeep.so"; ok=0; }
    for l in libc.so.6 libstdc++.so.6 libgcc_s.so.1 libm.so.6; do
      [ -e "$sys/lib/$l" ] || { fail "$a dyn: no $sys/lib/$l"; ok=0; continue; }
      "$E" -q "$(readlink -f "$sys/lib/$l")" -o "$d/lib/$l" || { fail "$a dyn: convert $l"; ok=0; }
    done
    [ $ok = 1 ] && run_one $a dyn "$d" -L "$sys" -E LD_LIBRARY_PATH="$PWD/$d/lib"
    # The same program on Debian trixie's glibc 2.41 (its loader, libc
    # and libm; SUITE=trixie tools/fetch-foreign.sh): __clone, __vfork,
    # _Fork and __sigsetjmp park LR in x13 around their GCS calls and get
    # flexible FDEs (issue #19), sampled as clone/vfork/fork return.
    if [ $a = aarch64 ] && [ $ok = 1 ] &&
       R=$(SUITE=trixie PKGS=libc6 tools/fetch-foreign.sh arm64 2>/dev/null); then
      t=$B/dyn-trixie
      mkdir -p "$t/lib" "$t/sys/lib"
      cp "$d/harness.sf" "$t/" && cp "$d"/lib/libdeep.so "$d"/lib/libstdc++.so.6 "$d"/lib/libgcc_s.so.1 "$t/lib/" ||
        fail "$a dyn-trixie: copy"
      for l in libc.so.6 libm.so.6; do
        "$E" -q "$R/usr/lib/aarch64-linux-gnu/$l" -o "$t/lib/$l" || fail "$a dyn-trixie: convert $l"
      done
      ln -sf "$(readlink -f "$R/usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1")" \
        "$t/sys/lib/ld-linux-aarch64.so.1"
      run_one $a dyn-trixie "$t" -L "$t/sys" -E LD_LIBRARY_PATH="$PWD/$t/lib"
      # The flexible FDEs of trixie's libc must have been walked through.
      grep -q 'FREs used: .* flex [1-9]' "$t/out.txt" || fail "$a dyn-trixie: no flexible FRE used"
    elif [ $a = aarch64 ]; then
      summary+=("$a dyn-trixie: skipped (trixie's arm64 libc6 unavailable)")
    fi
  else
    fail "$a dyn: build"
  fi

  # static
  d=$B/static
  if $cc -O2 -fexceptions -fomit-frame-pointer $W -c -o "$d/libdeep.o" $S/libdeep.c &&
     $cc -O2 -std=c11 $W -c -o "$d/sfwalk.o" $S/sfwalk.c &&
     $cxx -O2 -pthread -fomit-frame-pointer -DHARNESS_STATIC -static $W -o "$d/harness" \
       $S/harness.cc "$d/sfwalk.o" "$d/libdeep.o"; then
    "$E" -q "$d/harness" -o "$d/harness.sf" && run_one $a static "$d" ||
      fail "$a static: convert"
    # The default output shares frame-row lists on AArch64 and not on
    # s390x (libsframe rejects shared data it has to byte-swap); a
    # reader on the target itself takes them on s390x too: the same
    # program with --share-fres.
    if [ $a = s390x ]; then
      mkdir -p "$d/shared"
      "$E" -q --share-fres "$d/harness" -o "$d/shared/harness.sf" && run_one $a static-shared "$d/shared" ||
        fail "$a static-shared: convert"
    fi
  else
    fail "$a static: build"
  fi
done
printf '%s\n' "${summary[@]}"
echo "failures: $fails"
[ $ran = 0 ] && [ $fails = 0 ] && exit 77
[ $fails = 0 ]
