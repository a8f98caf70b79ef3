#!/usr/bin/env bash
# Mutation test of --verify (tests/mutants/mutants.py): every deliberate
# converter bug, built into the whole tool, must make that tool's own
# (independent) verifier report a failure, or the unmutated verifier find
# functions missing that the unmutated converter wrote ("lost functions"),
# on this corpus: the unwind-truth classes (corpus/truth) and the CFI
# shapes of corpus/asm for the three ABIs, as objects and shared objects;
# a linked x86-64 program with a PLT; the host's libc; Debian's s390x
# libc6 when cached. Prints one line per mutant and "mutants=N killed=N".
set -u
cd "$(dirname "$0")/../.."
[ -x ./eh2sframe ] || { echo "SKIP: no ./eh2sframe"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
T=$(mktemp -d /tmp/mutants.XXXXXX)
trap 'rm -rf "$T"' EXIT
files=()
for abi in x86_64 aarch64 s390x; do
  if [ $abi = x86_64 ]; then cc=gcc; else cc=$abi-linux-gnu-gcc; fi
  command -v $cc >/dev/null || { echo "note: no $cc"; continue; }
  for src in corpus/truth/$abi.S corpus/asm/$abi.S; do
    n=$T/$abi-$(basename "$(dirname "$src")")
    $cc -c "$src" -o "$n.o" && files+=("$n.o") || { echo "FAIL: $src"; exit 1; }
    $cc -shared -nostdlib "$n.o" -o "$n.so" 2>"$T/ld.log" && files+=("$n.so") ||
      { cat "$T/ld.log"; echo "FAIL: link $src"; exit 1; }
  done
done
# A program with a PLT (GNU ld's CFA expression -> MASK FDE).
printf '#include <stdio.h>\n#include <stdlib.h>\nint main(int c, char **v)\n{ puts(v[0]); return atoi(c > 1 ? v[1] : "0"); }\n' >"$T/prog.c"
gcc -O1 -Wl,-z,lazy -o "$T/prog" "$T/prog.c" && files+=("$T/prog") ||
  { echo "FAIL: build a program with a PLT"; exit 1; }
[ -f /lib/x86_64-linux-gnu/libc.so.6 ] && files+=(/lib/x86_64-linux-gnu/libc.so.6)
s=cache/foreign/s390x/root/lib/s390x-linux-gnu/libc.so.6
[ -f "$s" ] && files+=("$s")
echo "corpus: ${#files[@]} files"
nice python3 tests/mutants/mutants.py "$T/work" ./eh2sframe "${files[@]}"
