#!/usr/bin/env bash
# make demo: build a small program, add an SFrame section with eh2sframe,
# show it, verify it against the DWARF CFI, and run the patched program.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/demo
mkdir -p "$out"
cc -O2 -o "$out/demo" tools/demo/demo.c
echo "== eh2sframe $out/demo -o $out/demo.sframe"
./eh2sframe "$out/demo" -o "$out/demo.sframe"
echo "== readelf -lW: the new segments"
readelf -lW "$out/demo.sframe" | grep -E 'GNU_SFRAME|LOAD' || true
echo "== eh2sframe --dump (first 40 lines)"
./eh2sframe --dump "$out/demo.sframe" | head -40
echo "== eh2sframe --verify"
./eh2sframe --verify "$out/demo.sframe"
echo "== running the original and the patched program"
a=$("$out/demo" x y); b=$("$out/demo.sframe" x y)
echo "original: $a"
echo "patched:  $b"
[ "$a" = "$b" ] && echo "demo: outputs identical"
