#!/usr/bin/env bash
# AArch64 and s390x: cross-compile C/C++ programs (static and dynamic),
# convert them, run original and patched under qemu-user (whose loader
# takes AT_PHDR = bias + e_phoff) and compare output and exit status (the
# original runs twice first, tests/e2e/lib/behave.sh); a
# static self-check program must find its own PT_GNU_SFRAME, also after
# strip tools; eu-stripped PIE programs must run too.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib/elfpatch_lib.sh
. tests/e2e/lib/behave.sh
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
T=$(mktemp -d /tmp/elfpatch_cross.XXXXXX)
trap 'rm -rf "$T"' EXIT
C=corpus/elfpatch
summary=()
for arch in aarch64 s390x; do
  cc=$arch-linux-gnu-gcc cxx=$arch-linux-gnu-g++ q=qemu-$arch
  if ! command -v $cc >/dev/null || ! command -v $q >/dev/null; then
    summary+=("$arch: skipped (no $cc or $q)"); continue
  fi
  export QEMU_LD_PREFIX=/usr/$arch-linux-gnu
  qrun() { $q "$@" 2>&1; }
  patched=0 ran=0 lint=0
  $cc -O2 -static -o "$T/$arch-hello-static" $C/hello.c
  $cc -O2 -o "$T/$arch-hello" $C/hello.c
  $cc -O2 -static-pie -o "$T/$arch-hello-spie" $C/hello.c 2>/dev/null
  $cc -O2 -no-pie -o "$T/$arch-hello-nopie" $C/hello.c
  $cxx -O2 -static -pthread -o "$T/$arch-exc-static" $C/exc.cc
  $cxx -O2 -pthread -o "$T/$arch-exc" $C/exc.cc
  $cc -O2 -static -o "$T/$arch-selfcheck" $C/selfcheck.c 2>/dev/null
  for p in hello-static hello hello-spie hello-nopie exc-static exc selfcheck; do
    f=$T/$arch-$p
    [ -e "$f" ] || { echo "$arch: no $p (toolchain cannot build it)"; continue; }
    if ! "$E2S" -q "$f" -o "$f.sf"; then fail "convert $f"; continue; fi
    check_layout "$f.sf" || { fail "layout $f.sf"; continue; }
    lint_same "$f" "$f.sf" && lint=$((lint + 1)) || fail "elflint $f.sf"
    preserved "$f" "$f.sf" || fail "bytes of $f changed"
    patched=$((patched + 1))
    if [ $p = selfcheck ]; then
      out=$($q "$f.sf")
      echo "$out" | grep -q '^main: PT_GNU_SFRAME matches the file$' &&
        ran=$((ran + 1)) || { fail "$arch selfcheck"; echo "$out"; }
      # Static glibc here reads its program headers through __ehdr_start
      # (the old ELF header's address), which must survive strip tools.
      for t in $arch-linux-gnu-strip eu-strip; do
        $t "$f.sf" -o "$f.st" 2>/dev/null || { fail "$arch $t"; continue; }
        out=$($q "$f.st")
        echo "$out" | grep -q '^main: PT_GNU_SFRAME matches the file$' &&
          ran=$((ran + 1)) || { fail "$arch selfcheck after $t"; echo "$out"; }
      done
      continue
    fi
    behave qrun "$f" "$f.sf" zeta alpha; r=$?
    behave_count "$arch $p" $r
    case $r in 0) ran=$((ran + 1)) ;; 1) fail "$arch run $p: $BEH_WHY" ;; esac
    # PIE / static-pie (table in the new segment): eu-strip keeps the table
    # at e_phoff, so qemu's loader still finds it; binutils strip moves it
    # (kept consistent, but qemu's loader then misses it: not run).
    case $p in hello|hello-spie)
      eu-strip "$f.sf" -o "$f.st" 2>/dev/null && check_layout "$f.st" >/dev/null &&
        "$E2S" --verify "$f.st" >/dev/null 2>&1 || fail "$arch eu-strip $p"
      if [ $r != 2 ]; then
        behave_conv qrun "$f.st" zeta alpha && ran=$((ran + 1)) || fail "$arch run eu-stripped $p: $BEH_WHY"
      fi
      $arch-linux-gnu-strip "$f.sf" -o "$f.st" 2>/dev/null && check_layout "$f.st" notie >/dev/null &&
        "$E2S" --verify "$f.st" >/dev/null 2>&1 || fail "$arch strip $p"
    esac
  done
  # Patched shared libraries of the cross sysroot, used by a dynamic program.
  mkdir -p "$T/$arch-lib"
  "$E2S" -q /usr/$arch-linux-gnu/lib/libc.so.6 -o "$T/$arch-lib/libc.so.6" &&
    check_layout "$T/$arch-lib/libc.so.6" && patched=$((patched + 1)) || fail "$arch libc"
  lib=$(ls /usr/$arch-linux-gnu/lib/libstdc++.so.6.* 2>/dev/null | head -1)
  [ -n "$lib" ] && "$E2S" -q "$lib" -o "$T/$arch-lib/libstdc++.so.6" && patched=$((patched + 1))
  # The original program on the original libraries, the converted one on
  # the converted libraries.
  withlibs() { if [ "$1" = "$T/$arch-exc" ]; then qrun "$1"; else qrun -E LD_LIBRARY_PATH="$T/$arch-lib" "$1"; fi; }
  behave withlibs "$T/$arch-exc" "$T/$arch-exc.sf"; r=$?
  behave_count "$arch exc" $r
  case $r in 0) ran=$((ran + 1)) ;; 1) fail "$arch exc with patched libs: $BEH_WHY" ;; esac
  summary+=("$arch: patched $patched, elflint-clean $lint, ran $ran under $q with identical output")
done
printf '%s\n' "${summary[@]}"
behave_report
echo "failures: $fails"
[ $fails = 0 ]
