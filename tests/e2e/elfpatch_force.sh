#!/usr/bin/env bash
# --force on relocatable objects that already have .sframe sections.
#  1. Our own output converted again: byte-identical (every old section is
#     rebuilt in place), for C and C++ (COMDAT) objects of each arch.
#  2. gas 2.47 objects (tests/data/gas/*.obj): rebuilt, --verify finds no
#     mismatch (it finds gas's known mistranslations in the originals).
#  3. A system-gas --gsframe C++ object (one ungrouped .sframe covering a
#     COMDAT function): the rebuilt object keeps one .sframe for the
#     group's function, inside the group; lld links it, the program runs
#     and the linked .sframe has exactly one FDE per function.
#  4. Hand-made object with five old SHT_PROGBITS .sframe sections (SFrame
#     by their header; two ungrouped, two in one group, one in a group
#     whose function has no CFI): one
#     .sframe per part is left, the others become empty SHF_EXCLUDE
#     sections with their old bytes zeroed and out of their groups;
#     eu-elflint, lld link and run.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib/elfpatch_lib.sh
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
T=$(mktemp -d /tmp/elfpatch_force.XXXXXX)
trap 'rm -rf "$T"' EXIT
nsame=0 ngas=0 nrun=0
have_lld=false
if command -v ld.lld >/dev/null; then
  have_lld=true; mkdir -p "$T/lldbin"; ln -sf "$(command -v ld.lld)" "$T/lldbin/ld"
fi

# verify_counts FILE: "mismatch N" from --verify's summary line.
mismatches() { "$E2S" --verify "$1" 2>/dev/null | sed -n 's/.* mismatch=\([0-9]*\) .*/\1/p' | tail -1; }

# 1. Our output, again.
cat > "$T/r.c" <<'X'
int g(int);
static int __attribute__((noinline)) s(int x) { return g(x) * 3; }
int f(int x) { return s(x) + 1; }
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
  if [ $arch = x86_64 ]; then cc=gcc cxx=g++
  else cc=$arch-linux-gnu-gcc cxx=$arch-linux-gnu-g++
    command -v $cc >/dev/null || { echo "$arch: no cross compiler, skipped"; continue; }
  fi
  d=$T/$arch; mkdir -p "$d"
  $cc -O2 -c "$T/r.c" -o "$d/r.o"
  for s in c1 c2; do $cxx -O2 -c "$T/$s.cc" -o "$d/$s.o"; done
  for o in r c1 c2; do
    "$E2S" -q "$d/$o.o" -o "$d/$o.1.o" || { fail "$arch convert $o"; continue; }
    # Without --force: nothing to do, the output is a copy.
    "$E2S" -q "$d/$o.1.o" -o "$d/$o.x.o" 2>/dev/null
    cmp -s "$d/$o.1.o" "$d/$o.x.o" || fail "$arch $o: second conversion without --force changed the file"
    "$E2S" -q --force "$d/$o.1.o" -o "$d/$o.2.o" || { fail "$arch --force $o"; continue; }
    cmp -s "$d/$o.1.o" "$d/$o.2.o" && nsame=$((nsame + 1)) || fail "$arch $o: --force rebuild differs from the first conversion"
  done
done

# 2. gas 2.47 objects.
for f in tests/data/gas/*.obj; do
  b=$(basename "$f" .obj)
  before=$(mismatches "$f")
  "$E2S" -q --force "$f" -o "$T/$b.o" || { fail "--force $b"; continue; }
  after=$(mismatches "$T/$b.o")
  n=$(LC_ALL=C readelf -SW "$T/$b.o" | grep -c ' \.sframe ')
  [ "$after" = 0 ] && [ "$n" = 1 ] || fail "$b: after --force mismatch=$after, $n .sframe"
  lint_same "$f" "$T/$b.o" || fail "$b: elflint"
  echo "gas $b: mismatch $before -> $after"
  ngas=$((ngas + 1))
done

# 3. System gas --gsframe, COMDAT.
d=$T/gs; mkdir -p "$d"
if g++ -O2 -Wa,--gsframe -c "$T/c1.cc" -o "$d/g1.o" 2>/dev/null &&
   LC_ALL=C readelf -SW "$d/g1.o" | grep -q ' \.sframe '; then
  g++ -O2 -c "$T/c2.cc" -o "$d/c2.o" && "$E2S" -q "$d/c2.o" -o "$d/c2.sf.o"
  "$E2S" -q --force "$d/g1.o" -o "$d/g1.sf.o" || fail "--force gas --gsframe C++ object"
  LC_ALL=C readelf -gW "$d/g1.sf.o" | grep -A6 '\[_Z5twicei\]' | grep -q '\.rela\.sframe' ||
    fail "gsframe: the rebuilt .sframe of twice() is not in its group"
  [ "$(LC_ALL=C readelf -SW "$d/g1.sf.o" | grep -c ' \.sframe ')" = 2 ] || fail "gsframe: want 2 .sframe sections"
  [ "$(mismatches "$d/g1.sf.o")" = 0 ] || fail "gsframe: verify"
  if $have_lld; then
    g++ -B"$T/lldbin/" -o "$d/p" "$d/g1.sf.o" "$d/c2.sf.o" || fail "gsframe: lld link"
    [ "$("$d/p")" = 9 ] && nrun=$((nrun + 1)) || fail "gsframe: program output"
    # One FDE per function start: the discarded COMDAT copy took its
    # .sframe along (main, use1, use2, twice).
    n=$("$E2S" --dump "$d/p" | grep -c 'func idx')
    dup=$("$E2S" --dump "$d/p" | grep -o 'pc = 0x[0-9a-f]*' | sort | uniq -d | wc -l)
    [ "$n" = 4 ] && [ "$dup" = 0 ] || fail "gsframe: linked .sframe has $n FDEs ($dup duplicated), want 4"
    [ "$(mismatches "$d/p")" = 0 ] || fail "gsframe: linked verify"
  fi
else
  echo "system gas has no --gsframe: part 3 skipped"
fi

# 4. Several old .sframe sections.
d=$T/multi; mkdir -p "$d"
cat > "$d/m.s" <<'X'
	.text
	.globl main
	.type main,@function
main:	.cfi_startproc
	subq $8,%rsp
	.cfi_def_cfa_offset 16
	call foo
	call bar
	xorl %eax,%eax
	addq $8,%rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size main,.-main
	.section .text.foo,"axG",@progbits,foo,comdat
	.weak foo
	.type foo,@function
foo:	.cfi_startproc
	ret
	.cfi_endproc
	.size foo,.-foo
	.section .text.bar,"axG",@progbits,bar,comdat
	.weak bar
	.type bar,@function
bar:	ret
	.size bar,.-bar
	# Old-assembler style: SHT_PROGBITS .sframe, known by its header
	# (magic, version 2); the rest is junk.
	.macro oldsf fill:req, n=1
	.short 0xdee2
	.byte 2,4,3,0,0xf0,0
	.long 0,0,0,0,0
	.rept \n
	.quad \fill
	.endr
	.endm
	.section .sframe,"a",@progbits,unique,1
	oldsf 0x1111111111111111, 3
	.section .sframe,"a",@progbits,unique,2
	oldsf 0x2222222222222222, 2
	.section .sframe,"aG",@progbits,foo,comdat,unique,3
	oldsf 0x3333333333333333
	.section .sframe,"aG",@progbits,foo,comdat,unique,4
	oldsf 0x4444444444444444
	.section .sframe,"aG",@progbits,bar,comdat,unique,5
	oldsf 0x5555555555555555
	.section .note.GNU-stack,"",@progbits
X
as "$d/m.s" -o "$d/m.o" || fail "as m.s"
"$E2S" -q --force "$d/m.o" -o "$d/m2.o" || fail "--force on 5 old .sframe sections"
python3 - "$d/m.o" "$d/m2.o" <<'PY' || fail "multi: section table"
import re, subprocess, sys
a, b = sys.argv[1:]
env = {"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
def secs(f):
    out = subprocess.run(["readelf", "-SW", f], capture_output=True, text=True, env=env).stdout
    r = {}
    for m in re.finditer(r"^\s+\[\s*(\d+)\]\s+(\S*)\s+(\S+)\s+[0-9a-f]+ ([0-9a-f]+) ([0-9a-f]+) [0-9a-f]+ +(\S*) +\d+ +\d+ +(\d+)$", out, re.M):
        r[int(m.group(1))] = (m.group(2), m.group(3), int(m.group(4), 16), int(m.group(5), 16), m.group(6), int(m.group(7)))
    return r
def groups(f):
    out = subprocess.run(["readelf", "-gW", f], capture_output=True, text=True, env=env).stdout
    g, cur = {}, None
    for line in out.splitlines():
        m = re.search(r"\[(\w+)\] contains", line)
        if m: cur = m.group(1); g[cur] = set(); continue
        m = re.match(r"\s+\[\s*(\d+)\]", line)
        if m and cur: g[cur].add(int(m.group(1)))
    return g
sa, sb = secs(a), secs(b)
old = sorted(i for i, s in sa.items() if s[0] == ".sframe")
data = open(a, "rb").read(); out = open(b, "rb").read()
err = []
kept = [i for i in old if sb[i][0] == ".sframe"]
gone = [i for i in old if sb[i][0] == ""]
if len(old) != 5 or len(kept) != 2 or len(gone) != 3: err.append("kept %s dropped %s" % (kept, gone))
for i in gone:
    n, t, off, size, fl, al = sb[i]
    if t != "PROGBITS" or size != 0 or "E" not in fl or "A" in fl or "G" in fl: err.append("section %d not retired: %s" % (i, sb[i]))
    o, s = sa[i][2], sa[i][3]
    if out[o:o + s] != bytes(s): err.append("old bytes of %d not zeroed" % i)
for i in kept:
    if sb[i][5] < 8 or sb[i][2] % 8: err.append("section %d not 8-aligned" % i)
ga, gb = groups(a), groups(b)
if not (gb["bar"] <= ga["bar"]) or any(i in gb["bar"] for i in old): err.append("bar group still lists an old .sframe")
foo_sf = [i for i in gb["foo"] if sb.get(i, ("",))[0] == ".sframe"]
if len(foo_sf) != 1: err.append("foo group has %d .sframe" % len(foo_sf))
if err: print("; ".join(err)); sys.exit(1)
PY
[ "$(mismatches "$d/m2.o")" = 0 ] || fail "multi: verify"
lint_same "$d/m.o" "$d/m2.o" || fail "multi: elflint"
if $have_lld; then
  gcc -B"$T/lldbin/" -o "$d/p" "$d/m2.o" && "$d/p" && nrun=$((nrun + 1)) || fail "multi: lld link and run"
  [ "$("$E2S" --dump "$d/p" | grep -c 'func idx')" -ge 2 ] || fail "multi: linked .sframe"
fi
echo "rebuilt byte-identical $nsame, gas objects clean $ngas, linked and run $nrun, failures $fails"
[ $fails = 0 ]
