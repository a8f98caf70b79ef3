#!/usr/bin/env bash
# Build corpus/ (C, C++, hand-written CFI assembly) for each ABI into OUTDIR:
#   OUTDIR/<abi>/<variant>/{funcs.o,classes.o,asm.o,prog}, and in O2/ also
#   funcs-dbgframe.o (-g, no unwind tables: .debug_frame only)
# abi: x86_64 (native gcc), aarch64, s390x (cross *-linux-gnu-gcc/g++);
# variants: O0, O2, O0-fp, O2-fp (-fno-omit-frame-pointer), x86_64 also
# O2-realign (-mstackrealign), aarch64 also O2-pac (-mbranch-protection=standard)
# and O0-pacb (pac-ret+leaf+b-key). prog is linked -static (cross targets need no
# sysroot at run time). ABIs whose compiler is missing are skipped with a note.
# Usage: tools/build-corpus.sh OUTDIR [abi...]     (RUN=1: also run prog,
#        under qemu for cross ABIs, and require exit status 0)
# Incremental: a target newer than its sources is not rebuilt.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: build-corpus.sh OUTDIR [abi...]}
shift
abis=("$@")
[ ${#abis[@]} -gt 0 ] || abis=(x86_64 aarch64 s390x)
src=$here/corpus
srcs=("$src/c/funcs.c" "$src/cxx/classes.cpp")

newer() { # newer TARGET DEPS... : true if TARGET must be rebuilt
  local t=$1; shift
  [ -e "$t" ] || return 0
  local d
  for d in "$@" "$0"; do [ "$d" -nt "$t" ] && return 0; done
  return 1
}

built=0
for abi in "${abis[@]}"; do
  case $abi in
    x86_64) pfx=; qemu=; variants=(O0 O2 O0-fp O2-fp O2-realign) ;;
    aarch64) pfx=aarch64-linux-gnu-; qemu=qemu-aarch64; variants=(O0 O2 O0-fp O2-fp O2-pac O0-pacb) ;;
    s390x) pfx=s390x-linux-gnu-; qemu=qemu-s390x; variants=(O0 O2 O0-fp O2-fp) ;;
    *) echo "build-corpus: unknown abi $abi" >&2; exit 2 ;;
  esac
  if ! command -v "${pfx}gcc" >/dev/null || ! command -v "${pfx}g++" >/dev/null; then
    echo "build-corpus: ${pfx}gcc/g++ missing, skipping $abi" >&2
    continue
  fi
  for v in "${variants[@]}"; do
    d=$out/$abi/$v
    mkdir -p "$d"
    flags=(-g0 -fasynchronous-unwind-tables)
    case $v in
      O0) flags+=(-O0) ;;
      O2) flags+=(-O2) ;;
      O0-fp) flags+=(-O0 -fno-omit-frame-pointer) ;;
      O2-fp) flags+=(-O2 -fno-omit-frame-pointer) ;;
      O2-realign) flags+=(-O2 -mstackrealign) ;;
      O2-pac) flags+=(-O2 -mbranch-protection=standard) ;;
      O0-pacb) flags+=(-O0 -mbranch-protection=pac-ret+leaf+b-key) ;;
    esac
    if newer "$d/funcs.o" "$src/c/funcs.c"; then
      "${pfx}gcc" -std=gnu11 "${flags[@]}" -c "$src/c/funcs.c" -o "$d/funcs.o"
    fi
    # .debug_frame only (no .eh_frame): CFI from -g without unwind tables.
    if [ "$v" = O2 ] && newer "$d/funcs-dbgframe.o" "$src/c/funcs.c"; then
      "${pfx}gcc" -std=gnu11 -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables \
        -c "$src/c/funcs.c" -o "$d/funcs-dbgframe.o"
    fi
    if newer "$d/classes.o" "$src/cxx/classes.cpp"; then
      "${pfx}g++" -std=gnu++17 "${flags[@]}" -c "$src/cxx/classes.cpp" -o "$d/classes.o"
    fi
    if newer "$d/asm.o" "$src/asm/$abi.S"; then
      "${pfx}gcc" -c "$src/asm/$abi.S" -o "$d/asm.o"
    fi
    if newer "$d/prog" "$d/funcs.o" "$d/classes.o" "$d/asm.o"; then
      "${pfx}g++" -static -o "$d/prog" "$d/classes.o" "$d/funcs.o" "$d/asm.o"
    fi
    if [ "${RUN:-0}" = 1 ]; then
      if [ -z "$qemu" ]; then "$d/prog"; else "$qemu" "$d/prog"; fi
    fi
    built=$((built + 1))
  done
done
echo "build-corpus: $built variant(s) in $out"
[ $built -gt 0 ]
