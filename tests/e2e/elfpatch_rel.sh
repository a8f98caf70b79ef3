#!/usr/bin/env bash
# Relocatable objects: convert .o files (x86-64, AArch64, s390x), check the
# relocations against the objects' own .eh_frame relocations, link with
# ld.lld (which concatenates .sframe inputs and applies our relocations)
# and with the system ld, and check that every FDE of the linked .sframe
# starts at a function symbol with the FDE's size. COMDAT: two C++ objects
# sharing an inline function keep exactly one SFrame FDE for it.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib/elfpatch_lib.sh
. tests/e2e/lib/behave.sh
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
T=$(mktemp -d /tmp/elfpatch_rel.XXXXXX)
trap 'rm -rf "$T"' EXIT
nobj=0 nlink=0 nfde=0

# rel_check OBJ: each .rela.sframe entry is PC64-type with symbol+addend
# equal to the symbol+addend of an .eh_frame FDE relocation.
rel_check() {
  LC_ALL=C readelf -rW "$1" | python3 -c '
import sys, re
sec = None; eh = set(); sf = []
for line in sys.stdin:
    m = re.match(r"Relocation section .(\S+). ", line)
    if m: sec = m.group(1); continue
    f = line.split()
    if len(f) < 5 or not re.match(r"^[0-9a-f]{8,}$", f[0]): continue
    key = (f[4], int(f[-1], 16) if len(f) >= 7 else 0)
    if sec == ".rela.eh_frame": eh.add(key)
    if sec == ".rela.sframe": sf.append((f[2], key))
ok = sf and all(t in ("R_X86_64_PC64", "R_AARCH64_PREL64", "R_390_PC64") and k in eh for t, k in sf)
print("%d sframe relocs" % len(sf)); sys.exit(0 if ok else 1)'
}

# linked_check EXE NAMES...: walk every SFrame section concatenated in
# .sframe; each FDE's start (field address + field value) must be a FUNC
# symbol's address and its size that symbol's size; NAMES must be covered.
linked_check() {
  python3 - "$@" <<'PY'
import re, struct, subprocess, sys
f, names = sys.argv[1], sys.argv[2:]
env = {"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
sw = subprocess.run(["readelf", "-SW", f], capture_output=True, text=True, env=env).stdout
be = "big endian" in subprocess.run(["readelf", "-hW", f], capture_output=True, text=True, env=env).stdout
m = re.search(r"\]\s+\.sframe\s+\S+\s+([0-9a-f]+) ([0-9a-f]+) ([0-9a-f]+)", sw)
addr, off, size = (int(m.group(i), 16) for i in (1, 2, 3))
data = open(f, "rb").read()[off:off + size]
syms = {}
for line in subprocess.run(["readelf", "-sW", f], capture_output=True, text=True, env=env).stdout.splitlines():
    p = line.split()
    if len(p) >= 8 and p[3] == "FUNC" and p[6] != "UND":
        syms.setdefault(int(p[1], 16), []).append((int(p[2]), p[7].split("@")[0]))
E = ">" if be else "<"
pos, nf, seen, bad = 0, 0, set(), 0
while pos + 28 <= len(data):
    magic, ver, flags, abi, fp, ra, aux, nfdes, nfres, frelen, fdeoff, freoff = struct.unpack(E + "HBBBbbBIIIII", data[pos:pos + 28])
    if magic != 0xdee2 or ver != 3:
        print("bad header at %#x" % pos); sys.exit(1)
    base = pos + 28 + aux
    for i in range(nfdes):
        fo = base + fdeoff + 16 * i
        val, fsize = struct.unpack(E + "qI", data[fo:fo + 12])
        start = addr + fo + val
        hit = [n for s, n in syms.get(start, []) if s == fsize]
        if not hit:
            print("FDE at %#x size %d matches no function" % (start, fsize)); bad += 1
        seen.update(hit); nf += 1
    pos = (base + freoff + frelen + 7) & ~7
missing = [n for n in names if n not in seen]
if missing: print("no FDE for", missing)
for n in names:
    c = sum(1 for s in syms.values() for z, m in s if m == n)
print("%s: %d FDEs checked" % (f.split("/")[-1], nf))
sys.exit(1 if bad or missing else 0)
PY
}

cat > "$T/r.c" <<'X'
int g(int);
static int __attribute__((noinline)) s(int x) { return g(x) * 3; }
int f(int x) { return s(x) + 1; }
int h(int x) { return f(x) * f(x + 1); }
X
cat > "$T/m.c" <<'X'
#include <stdio.h>
int h(int);
int g(int x) { return x + 1; }
int main(void) { printf("%d\n", h(2)); return 0; }
X
cat > "$T/c1.cc" <<'X'
__attribute__((noinline)) inline int twice(int x) { static volatile int k = 2; return x * k; }
int use1(int x) { return twice(x) + 1; }
X
cat > "$T/c2.cc" <<'X'
#include <cstdio>
__attribute__((noinline)) inline int twice(int x) { static volatile int k = 2; return x * k; }
int use1(int);
int use2(int x) { return twice(x) + 2; }
int main() { std::printf("%d\n", use1(1) + use2(2)); return 0; }
X

for arch in x86_64 aarch64 s390x; do
  if [ $arch = x86_64 ]; then cc=gcc cxx=g++ run=; pre=
  else cc=$arch-linux-gnu-gcc cxx=$arch-linux-gnu-g++ run="qemu-$arch"; pre=$arch-linux-gnu-
    command -v $cc >/dev/null || { echo "$arch: no cross compiler, skipped"; continue; }
    export QEMU_LD_PREFIX=/usr/$arch-linux-gnu
  fi
  d=$T/$arch; mkdir -p "$d"
  for s in r.c m.c; do $cc -O2 -c "$T/$s" -o "$d/${s%.c}.o"; done
  for s in c1.cc c2.cc; do $cxx -O2 -c "$T/$s" -o "$d/${s%.cc}.o"; done
  for o in r m c1 c2; do
    if ! "$E2S" -q "$d/$o.o" -o "$d/$o.sf.o"; then fail "$arch convert $o.o"; continue; fi
    rel_check "$d/$o.sf.o" >/dev/null || fail "$arch $o.sf.o relocations"
    lint_same "$d/$o.o" "$d/$o.sf.o" || fail "$arch elflint $o.sf.o"
    nobj=$((nobj + 1))
  done
  # COMDAT: the group of twice() holds its .sframe and .rela.sframe.
  LC_ALL=C readelf -gW "$d/c1.sf.o" | grep -q '\.rela\.sframe' || fail "$arch: .sframe not in the COMDAT group"
  # The same programs from the unconverted sources, to compare with
  # (tests/e2e/lib/behave.sh: each runs twice first).
  $cc -O2 -o "$d/c-orig" "$T/r.c" "$T/m.c" && $cxx -O2 -o "$d/cc-orig" "$T/c1.cc" "$T/c2.cc" ||
    fail "$arch: cannot build the unconverted programs"
  runon() { $run "$@"; }
  linkers="bfd"
  [ $arch != s390x ] && command -v ld.lld >/dev/null && linkers="lld bfd"
  # Cross gcc only finds "ld" in its own paths: -B a directory where ld is lld.
  mkdir -p "$T/lldbin"; ln -sf "$(command -v ld.lld)" "$T/lldbin/ld"
  for ld in $linkers; do
    sel=; [ $ld = lld ] && sel=-B$T/lldbin/
    $cc $sel -o "$d/c-$ld" "$d/m.sf.o" "$d/r.sf.o" 2>"$d/ld.err" || { fail "$arch $ld link"; cat "$d/ld.err"; continue; }
    $cxx $sel -o "$d/cc-$ld" "$d/c1.sf.o" "$d/c2.sf.o" 2>"$d/ld.err" || { fail "$arch $ld COMDAT link"; cat "$d/ld.err"; continue; }
    for p in c cc; do
      behave runon "$d/$p-orig" "$d/$p-$ld"; r=$?
      behave_count "$arch $ld $p" $r
      [ $r = 1 ] && fail "$arch $ld: linked program $p: $BEH_WHY"
    done
    nlink=$((nlink + 2))
    if [ $ld = lld ]; then
      out=$(linked_check "$d/c-$ld" main g h f) && echo "$arch $out" || { fail "$arch lld .sframe"; echo "$out"; }
      nfde=$((nfde + $(echo "$out" | grep -o '[0-9]* FDEs' | cut -d' ' -f1)))
      out=$(linked_check "$d/cc-$ld" main _Z4use1i _Z4use2i _Z5twicei) || { fail "$arch lld COMDAT .sframe"; echo "$out"; }
      # Exactly one FDE for the shared inline function: the discarded
      # copy's SFrame went with its group (4 = use1, use2, main, twice).
      n=$(echo "$out" | grep -o '[0-9]* FDEs' | cut -d' ' -f1)
      [ "$n" = 4 ] && echo "$arch COMDAT: $out" || fail "$arch COMDAT: $n FDEs, want 4"
      nfde=$((nfde + n))
    fi
  done
done
behave_report
echo "objects converted $nobj, programs linked and run $nlink, linked FDEs checked $nfde, failures $fails"
echo "(system ld 2.40 predates SFrame V3: it warns 'error in X(.sframe)', links, and drops our sections)"
[ $fails = 0 ]
