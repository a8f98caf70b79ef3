# Shared setup for tests/e2e/interop_*.sh (sourced, not run).
# Provides: $repo, $work (scratch dir under tests/out/, bind-mounted into the
# chroot with the repo), $check (libsframe harness), $norm, $e2s,
# oracle CMD... (run in the chroot, cwd $work), build_progs, fail/summary.
# Exits 77 (skip) when the oracle chroot is missing or we are not root.
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
oracle_dir=${ORACLE_DIR:-$repo/oracle/sid}
if [ ! -f "$oracle_dir/.eh2sframe-oracle-ok" ]; then
  echo "SKIP: no oracle chroot (run: make oracle)"
  exit 77
fi
if [ "$(id -u)" != 0 ]; then
  echo "SKIP: the oracle chroot needs root"
  exit 77
fi
work=$repo/tests/out/interop.$$
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
oracle() { (cd "$work" && "$repo/tools/in-oracle.sh" "$@"); }
norm="python3 $repo/tools/sframe_text_norm.py"
e2s=$repo/eh2sframe
[ -x "$e2s" ] || e2s=

# libsframe harness, rebuilt when its source is newer.
check=$repo/build/oracle/sframe_check
src=$repo/tests/interop/sframe_check.c
if [ ! -x "$check" ] || [ "$src" -nt "$check" ]; then
  mkdir -p "$(dirname "$check")"
  oracle gcc -std=c11 -O1 -Wall -Wextra -o "$check" "$src" -l:libsframe.a ||
    { echo "FAIL: cannot build the libsframe harness"; exit 1; }
fi

nfail=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }

# objdump for the file's machine (x86-64 / aarch64 / s390x), in the chroot.
objdump_for() {
  case $(od -An -j18 -N2 -tx1 "$1" | tr -d ' ') in
    b700) echo aarch64-linux-gnu-objdump ;;
    0016) echo s390x-linux-gnu-objdump ;;
    *) echo objdump ;;
  esac
}

# Compile the test programs in the chroot twice: $work/gas/NAME (gcc
# -Wa,--gsframe: .sframe by gas+ld) and $work/plain/NAME (no .sframe).
# Sources: tests/interop/progs/*.c *.cpp and corpus/{c,cxx}/ when present.
# Sets $progs (names). Extra flags: $1.
build_progs() {
  local flags=${1:-"-O2"} s n cc
  mkdir -p "$work/gas" "$work/plain"
  progs=
  for s in "$repo"/tests/interop/progs/*.c "$repo"/tests/interop/progs/*.cpp \
    "$repo"/corpus/c/*.c "$repo"/corpus/cxx/*.cpp; do
    [ -f "$s" ] || continue
    n=$(basename "$s"); n=${n%.*}
    case $s in *.cpp) cc=g++ ;; *) cc=gcc ;; esac
    # corpus files may be libraries without main: link those as -shared.
    local link=
    grep -q '\bmain *(' "$s" || link="-shared -fPIC"
    if oracle sh -c "$cc $flags $link -Wa,--gsframe -o gas/$n '$s' && $cc $flags $link -o plain/$n '$s'" \
      >"$work/$n.cc.log" 2>&1 ||
      oracle sh -c "$cc $flags -shared -fPIC -Wa,--gsframe -o gas/$n '$s' && $cc $flags -shared -fPIC -o plain/$n '$s'" \
        >"$work/$n.cc.log" 2>&1; then
      progs="$progs $n"
    else
      echo "note: $n does not build in the chroot: $(head -n 2 "$work/$n.cc.log" | tr '\n' ' ')"
    fi
  done
}

# Convert SRC into $work/ours/NAME and add it to $ours (fail otherwise).
convert_one() {
  if "$e2s" -q "$1" -o "$work/ours/$2" >"$work/$2.conv.log" 2>&1; then
    ours="$ours $work/ours/$2"
  else
    fail "eh2sframe $2: $(head -n 3 "$work/$2.conv.log" | tr '\n' ' ')"
  fi
}

# Files whose .sframe eh2sframe wrote: the chroot-built plain programs and,
# for aarch64/s390x, programs built with the host cross compilers. Fills
# $work/ours/ and sets $ours (paths). Needs build_progs first.
convert_all() {
  local n cc t s
  mkdir -p "$work/ours" "$work/cross"
  ours=
  [ -n "$e2s" ] || return 0
  for n in $progs; do
    convert_one "$work/plain/$n" "$n"
  done
  # The corpus (hand-written CFI assembly included: PLT-shaped stubs,
  # DRAP, signal frames, FPR saves) as static programs and objects.
  if bash "$repo/tools/build-corpus.sh" "$repo/build/corpus" >"$work/corpus.log" 2>&1; then
    for s in x86_64/O2/prog x86_64/O2-realign/prog x86_64/O2/asm.o aarch64/O2-pac/prog \
      aarch64/O2/asm.o s390x/O2/prog s390x/O2/asm.o; do
      [ -f "$repo/build/corpus/$s" ] || continue
      n=corpus-$(echo "$s" | tr / -)
      convert_one "$repo/build/corpus/$s" "$n"
    done
  else
    echo "note: corpus did not build: $(tail -n 2 "$work/corpus.log" | tr '\n' ' ')"
  fi
  # The unwind-truth classes of every ABI, as objects and linked: the
  # flexible FDEs of all three (AArch64's since issue #19) and the
  # shapes converted next to them. Then Debian's arm64 libc6, bookworm's
  # and trixie's (glibc 2.41: __clone, __vfork, _Fork, setcontext ...
  # with flexible FDEs), from tools/fetch-foreign.sh's cache.
  for t in x86_64 aarch64 s390x; do
    if [ $t = x86_64 ]; then cc=gcc; else cc=$t-linux-gnu-gcc; fi
    command -v "$cc" >/dev/null || continue
    "$cc" -c "$repo/corpus/truth/$t.S" -o "$work/cross/truth-$t.o" &&
      "$cc" -shared -nostdlib "$work/cross/truth-$t.o" -o "$work/cross/truth-$t.so" \
        >/dev/null 2>&1 || { fail "truth-$t: does not build"; continue; }
    convert_one "$work/cross/truth-$t.o" "truth-$t.o"
    convert_one "$work/cross/truth-$t.so" "truth-$t.so"
  done
  (cd "$repo" && tools/fetch-foreign.sh arm64 && SUITE=trixie PKGS=libc6 tools/fetch-foreign.sh arm64) \
    >"$work/fetch.log" 2>&1
  for s in "$repo"/cache/foreign/arm64/root/lib/aarch64-linux-gnu/libc.so.6 \
           "$repo"/cache/foreign/arm64-trixie/root/usr/lib/aarch64-linux-gnu/libc.so.6; do
    [ -f "$s" ] || continue
    case $s in */arm64-trixie/*) convert_one "$s" arm64-libc-trixie ;;
      *) convert_one "$s" arm64-libc-bookworm ;; esac
  done
  for t in aarch64 s390x; do
    cc=$t-linux-gnu-gcc
    command -v "$cc" >/dev/null || continue
    for s in "$repo"/tests/interop/progs/*.c; do
      n=$t-$(basename "$s" .c)
      "$cc" -O2 -o "$work/cross/$n" "$s" >/dev/null 2>&1 || continue
      convert_one "$work/cross/$n" "$n"
    done
  done
}

# The converter's default output of large C/C++ libraries (x86-64 libc and
# libstdc++, arm64 and s390x libstdc++ when cached), with a check that it
# is shared (smaller than --no-share-fres) on little-endian targets and
# not on big-endian ones (s390x, byte-swapped here). Sets $shared_files.
default_outputs() {
  shared_files=
  sfsize() { echo $((16#$(readelf -SW "$1" | awk '$2 == ".sframe" { print $6 }'))); }
  if [ -n "$e2s" ]; then
    for s in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
             "$repo"/cache/foreign/arm64/root/usr/lib/aarch64-linux-gnu/libstdc++.so.6 \
             "$repo"/cache/foreign/s390x/root/usr/lib/s390x-linux-gnu/libstdc++.so.6; do
      [ -f "$s" ] || continue
      n=default-$(echo "${s#"$repo"/cache/foreign/}" | tr / -)
      "$e2s" -q "$s" -o "$work/$n" && "$e2s" -q --no-share-fres "$s" -o "$work/$n.unshared" ||
        { fail "$n: eh2sframe failed"; continue; }
      d=$(sfsize "$work/$n") u=$(sfsize "$work/$n.unshared")
      if readelf -h "$s" | grep -q 'big endian'; then
        [ "$d" = "$u" ] || fail "$n: big-endian default output is shared ($d vs $u bytes)"
      else
        [ "$d" -lt "$u" ] || fail "$n: default output not shared ($d vs $u bytes)"
      fi
      echo "  $n: .sframe $d bytes, unshared $u"
      shared_files="$shared_files $work/$n"
    done
  fi
}
