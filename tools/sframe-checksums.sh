#!/usr/bin/env bash
# Checksums of the .sframe bytes eh2sframe builds for a fixed set of inputs
# (hidden EH2SFRAME_DEV_BUILD mode: the section alone, for a fixed
# address, so ELF layout changes do not show), with the default options,
# --share-fres and --sframe-version=2. Used to show that a change to the
# converter's implementation leaves its output byte-identical:
#   tools/sframe-checksums.sh [BIN] > before.txt; ...; diff before.txt after.txt
# Inputs: host binaries and libraries, the Debian arm64/s390x libraries
# of cache/foreign (when fetched; trixie's arm64 libc6 too), corpus/truth
# and corpus/asm built for the three ABIs, and build/corpus (make check
# builds it).
set -u
cd "$(dirname "$0")/.."
bin=${1:-./eh2sframe}
bin=$(readlink -f "$bin")
T=$(mktemp -d /tmp/sfck.XXXXXX)
trap 'rm -rf "$T"' EXIT
files=()
for f in /usr/bin/ls /usr/bin/bash /usr/bin/python3.11 /lib/x86_64-linux-gnu/libc.so.6 \
         /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1 \
         /usr/lib/x86_64-linux-gnu/libz.so.1 /usr/lib/x86_64-linux-gnu/libcrypto.so.3; do
  [ -f "$f" ] && files+=("$(readlink -f "$f")")
done
for a in arm64 s390x arm64-trixie; do
  for f in cache/foreign/$a/root/lib/*/libc.so.6 cache/foreign/$a/root/usr/lib/*/libc.so.6 cache/foreign/$a/root/usr/lib/*/libstdc++.so.6.* \
           cache/foreign/$a/root/usr/lib/*/libllvm*.so.1 cache/foreign/$a/root/bin/bash; do
    [ -f "$f" ] && files+=("$f")
  done
done
for abi in x86_64 aarch64 s390x; do
  if [ $abi = x86_64 ]; then cc=gcc; else cc=$abi-linux-gnu-gcc; fi
  command -v $cc >/dev/null || continue
  for src in corpus/truth/$abi.S corpus/asm/$abi.S; do
    o=$T/$abi-$(basename "$(dirname "$src")").o
    $cc -c "$src" -o "$o" 2>/dev/null && files+=("$o")
  done
done
while IFS= read -r f; do files+=("$f"); done < <(find build/corpus -type f \( -name '*.o' -o -name prog \) 2>/dev/null | sort)
for f in "${files[@]}"; do
  for mode in "" ",share" ",v2"; do
    rm -f "$T/out"
    if EH2SFRAME_DEV_BUILD="$T/out@0x10000000$mode" "$bin" -q --dump "$f" 2>/dev/null && [ -f "$T/out" ]; then
      sum=$(sha256sum <"$T/out" | cut -c1-16)
    else
      sum=none
    fi
    name=${f#"$PWD"/}
    echo "${name#/tmp/sfck.*/} ${mode:-,v3} $sum"
  done
done
