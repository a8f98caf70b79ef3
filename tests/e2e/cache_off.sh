#!/usr/bin/env bash
# The caches proven (issue #32): the projection's caches (programs seen
# before, first rows, CFA-only rows: src/convert/conv_cache.h) give what
# the rules alone give. The command built with -DEH2S_NO_CACHE (`make
# nocache`: build/nocache/eh2sframe) and the normal one convert a fixed
# set, and for every file and mode the two must agree on the exit
# status, the -v report (converted/skipped counts, each skipped function
# and its reason), the output file byte for byte, and its --dump text.
# Modes: V3, V2 (--sframe-version=2), --share-fres, and V2 with
# --share-fres. The set, per ABI (x86-64, AArch64, s390x): the
# unwind-truth classes (corpus/truth/<abi>.S, as a relocatable object and
# a shared object, built as tests/e2e/truth_classes.sh builds them) and
# build/corpus (tools/build-corpus.sh: C, C++ and corpus/asm objects,
# .debug_frame-only objects, static programs); the host's libc.so.6,
# libstdc++ and python3.11; the cross toolchains' libc.so.6; Debian's
# arm64 and s390x libc6 and libstdc++6 under cache/foreign/*/root
# (tools/fetch-foreign.sh). What is missing is skipped with a note,
# except the x86-64 part, which must run.
set -u
cd "$(dirname "$0")/../.."
E=${E2S:-$PWD/eh2sframe}
N=$PWD/build/nocache/eh2sframe
[ -x "$E" ] || { echo "SKIP: no ./eh2sframe"; exit 77; }
make -s nocache >/dev/null || { echo "FAIL: make nocache"; exit 1; }
[ -x "$N" ] || { echo "FAIL: no $N"; exit 1; }
T=$(mktemp -d /tmp/cache-off.XXXXXX)
trap 'rm -rf "$T"' EXIT
nfail=0 nfile=0 nrun=0 nx86=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }

# same FILE: both commands, every mode, the same result.
same() {
  local f=$1 mode opts a b ra rb
  [ -f "$f" ] || { echo "note: $f not available"; return; }
  nfile=$((nfile + 1))
  for mode in v3 v2 share v2share; do
    case $mode in
      v3) opts=() ;;
      v2) opts=(--sframe-version=2) ;;
      share) opts=(--share-fres) ;;
      v2share) opts=(--sframe-version=2 --share-fres) ;;
    esac
    a=$T/on b=$T/off
    rm -f "$a" "$b"
    "$E" -v "${opts[@]}" "$f" -o "$a" >"$a.log" 2>&1; ra=$?
    "$N" -v "${opts[@]}" "$f" -o "$b" >"$b.log" 2>&1; rb=$?
    nrun=$((nrun + 1))
    if [ $ra != $rb ]; then
      fail "$f $mode: exit status $ra with caches, $rb without"; continue
    fi
    if ! cmp -s "$a.log" "$b.log"; then
      fail "$f $mode: -v reports differ"; diff "$a.log" "$b.log" | head -6
    fi
    [ $ra = 0 ] || { echo "note: $f $mode: both fail alike: $(tail -1 "$a.log")"; continue; }
    cmp "$a" "$b" || fail "$f $mode: output bytes differ"
    # (where the bytes differ, the --dump difference shows which function)
    "$E" --dump "$a" >"$a.dump" 2>&1; ra=$?
    "$N" --dump "$b" >"$b.dump" 2>&1; rb=$?
    if [ $ra != $rb ] || ! cmp -s "$a.dump" "$b.dump"; then
      fail "$f $mode: --dump differs"; diff "$a.dump" "$b.dump" | head -6
    fi
  done
}

tools/build-corpus.sh build/corpus >"$T/corpus.log" 2>&1 ||
  { tail -3 "$T/corpus.log"; fail "tools/build-corpus.sh"; }
for abi in x86_64 aarch64 s390x; do
  if [ $abi = x86_64 ]; then cc=gcc; else cc=$abi-linux-gnu-gcc; fi
  if ! command -v $cc >/dev/null; then
    [ $abi = x86_64 ] && fail "no gcc: the x86-64 part must run"
    echo "note: no $cc, $abi skipped"; continue
  fi
  before=$nfile
  mkdir -p "$T/$abi"
  # (ld may say it builds no .eh_frame_hdr: the classes include CFI it
  # does not index; truth_classes.sh links them the same way.)
  if $cc -c corpus/truth/$abi.S -o "$T/$abi/truth.o" 2>"$T/$abi/cc.log" &&
     $cc -shared -nostdlib -Wl,--hash-style=gnu "$T/$abi/truth.o" \
       -o "$T/$abi/truth.so" 2>>"$T/$abi/cc.log"; then
    same "$T/$abi/truth.o"
    same "$T/$abi/truth.so"
  else
    cat "$T/$abi/cc.log"; fail "$abi: building corpus/truth/$abi.S"
  fi
  for d in build/corpus/$abi/*/; do
    for f in funcs.o funcs-dbgframe.o classes.o asm.o prog; do
      [ -f "$d$f" ] && same "$d$f"
    done
  done
  echo "$abi: $((nfile - before)) files"
  [ $abi = x86_64 ] && nx86=$((nfile - before))
done

for f in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
         /usr/bin/python3.11; do
  [ -f "$f" ] || fail "$f missing: the x86-64 part must run"
  same "$f"
  nx86=$((nx86 + 1))
done
for f in /usr/aarch64-linux-gnu/lib/libc.so.6 /usr/s390x-linux-gnu/lib/libc.so.6; do
  same "$f"
done
if tools/fetch-foreign.sh arm64 s390x >"$T/fetch.log" 2>&1; then
  for f in cache/foreign/arm64/root/lib/aarch64-linux-gnu/libc.so.6 \
           cache/foreign/arm64/root/usr/lib/aarch64-linux-gnu/libstdc++.so.6 \
           cache/foreign/s390x/root/lib/s390x-linux-gnu/libc.so.6 \
           cache/foreign/s390x/root/usr/lib/s390x-linux-gnu/libstdc++.so.6 \
           cache/foreign/arm64-trixie/root/usr/lib/aarch64-linux-gnu/libc.so.6; do
    same "$f"
  done
else
  echo "note: Debian arm64/s390x libraries unavailable ($(tail -1 "$T/fetch.log")); skipped"
fi
# The x86-64 part is the floor: the truth classes, the corpus, the host's
# libraries (at least 5 variants x 4 files + 2 + 3).
[ $nx86 -ge 25 ] || fail "only $nx86 x86-64 files compared"
echo "cache_off: $nfile files, $nrun conversions compared, $nfail failed"
[ $nfail -eq 0 ]
