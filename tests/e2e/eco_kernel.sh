#!/usr/bin/env bash
# contrib/kernel/sframe.mk on kernel-style relocatable objects: C files
# compiled with -fasynchronous-unwind-tables and the kernel's code-model
# flags (x86-64: -mcmodel=kernel -mno-red-zone -fno-pic -ffreestanding;
# arm64: -mgeneral-regs-only -fno-pic, small code model, pac-ret) are
# converted by the recipe's pattern rule, verified against their own
# .eh_frame (every FDE, counted by readelf, must match), linked with
# `ld -r` into a module, and the module verified again; a module linked
# from unconverted objects is converted in place by `sframe-modules`.
set -u
cd "$(dirname "$0")/../.."
E2S=$PWD/eh2sframe
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
T=$(mktemp -d /tmp/eco_kernel.XXXXXX)
trap 'rm -rf "$T"' EXIT
nfail=0 nok=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { nok=$((nok + 1)); }
MK=$PWD/contrib/kernel/sframe.mk
cat > "$T/a.c" <<'C'
struct ops { int (*fn)(int); };
static int helper(int x) { return x * 3; }
int big_frame(int n)
{
	volatile char buf[4096];
	for (int i = 0; i < n && i < 4096; i++)
		buf[i] = (char)i;
	return buf[n & 4095] + helper(n);
}
int dyn_frame(int n)
{
	char vla[n];
	for (int i = 0; i < n; i++)
		vla[i] = (char)i;
	return vla[n / 2];
}
const struct ops a_ops = { helper };
C
cat > "$T/b.c" <<'C'
extern int big_frame(int);
extern int dyn_frame(int);
int rec(int n) { return n <= 0 ? 0 : 1 + rec(n - 1) + big_frame(n); }
__attribute__((noreturn)) void die(void) { for (;;) __asm__ volatile(""); }
int mod_init(int n) { if (n < 0) die(); return rec(n) + dyn_frame(n + 1); }
C
fdes() { readelf --debug-dump=frames "$1" 2>/dev/null | grep -c ' FDE cie='; }
KCHECK=$T/sframe_kcheck
gcc -std=c11 -O2 -Wall -Wextra -Werror -o "$KCHECK" contrib/kernel/sframe_kcheck.c ||
  { echo "FAIL: building sframe_kcheck"; exit 1; }
check() { # object [nok]: verify, all FDEs match; the kernel reader's
  # checks, except with nok: a module `ld -r` made of converted objects
  # holds two concatenated SFrame blocks (host ld 2.40 knows no V3),
  # which a kernel reader does not take (eco_kbuild.sh tests that).
  local v n k
  v=$("$E2S" --verify "$1" 2>&1) || { fail "verify $1: $v"; return; }
  n=$(fdes "$1")
  echo "$v" | grep -q "^functions=$n match=$n mismatch=0" && ok || fail "$1: $v (readelf FDEs $n)"
  echo "  $(basename "$1"): $v"
  [ -n "${2:-}" ] && return
  k=$("$KCHECK" "$1" 2>&1) && ok || fail "kcheck $1: $k"
}
run_arch() { # prefix cc ld flags...
  local p=$1 cc=$2 ld=$3; shift 3
  command -v "$cc" >/dev/null || { echo "no $cc; skipping $p"; return; }
  for f in a b; do
    "$cc" "$@" -c "$T/$f.c" -o "$T/${p}_$f.o" || { fail "$cc $f.c"; continue; }
    [ "$(fdes "$T/${p}_$f.o")" -gt 0 ] && ok || fail "$p: no .eh_frame despite -fasynchronous-unwind-tables"
    make -s -f "$MK" -C "$T" EH2SFRAME="$E2S" "${p}_$f.sframe.o" || { fail "recipe on ${p}_$f.o"; continue; }
    readelf -SW "$T/${p}_$f.sframe.o" | grep -q ' \.rela\.sframe ' && ok || fail "$p: no .rela.sframe"
    check "$T/${p}_$f.sframe.o"
  done
  "$ld" -r -o "$T/${p}_mod.o" "$T/${p}_a.sframe.o" "$T/${p}_b.sframe.o" 2>"$T/ld.err" &&
    ok || fail "$p: ld -r: $(cat "$T/ld.err")"
  [ -s "$T/ld.err" ] && echo "  ($ld: $(head -1 "$T/ld.err"))"
  check "$T/${p}_mod.o" nok
  # A module linked first, converted afterwards (what sframe-modules does).
  mkdir -p "$T/m_$p"
  "$ld" -r -o "$T/m_$p/mod.ko" "$T/${p}_a.o" "$T/${p}_b.o" && ok || fail "$p: ld -r raw"
  make -s -f "$MK" EH2SFRAME="$E2S" M="$T/m_$p" sframe-modules >/dev/null 2>&1 &&
    ok || fail "$p: sframe-modules"
  check "$T/m_$p/mod.ko"
}
run_arch x86 gcc ld -O2 -fasynchronous-unwind-tables -mcmodel=kernel -mno-red-zone \
  -fno-pic -ffreestanding -mno-sse -mno-mmx -fno-stack-protector
run_arch arm64 aarch64-linux-gnu-gcc aarch64-linux-gnu-ld -O2 -fasynchronous-unwind-tables \
  -mgeneral-regs-only -fno-pic -ffreestanding -mbranch-protection=pac-ret -fno-stack-protector
# Without the flag (and for assembly without CFI) there is nothing to
# convert: the recipe still makes its target, an exact copy; with
# --require-sframe it is an error naming the missing section.
gcc -O2 -fno-asynchronous-unwind-tables -fno-unwind-tables -c "$T/a.c" -o "$T/noeh.o"
printf '.text\n.globl g\ng: ret\n' >"$T/asm.S"
gcc -c "$T/asm.S" -o "$T/asm.o"
for o in noeh asm; do
  rm -f "$T/$o.sframe.o"
  make -s -f "$MK" -C "$T" EH2SFRAME="$E2S" "$o.sframe.o" 2>"$T/err" &&
    cmp -s "$T/$o.o" "$T/$o.sframe.o" && [ ! -s "$T/err" ] && ok ||
    fail "$o.o without CFI: recipe: $(cat "$T/err")"
done
"$E2S" --require-sframe "$T/noeh.o" -o "$T/noeh.sf.o" 2>"$T/err"; rc=$?
[ $rc = 1 ] && grep -q 'eh_frame' "$T/err" && ok || fail "no-unwind-tables object with --require-sframe: exit $rc $(cat "$T/err")"
# The default output (frame rows shared on little-endian targets,
# unshared on s390x) of linked files of the three ABIs passes the kernel
# reader's checks and --verify; sharing happened where it should.
sz() { echo $((16#$(readelf -SW "$1" | awk '$2 == ".sframe" { print $6 }'))); }
linked=(/bin/ls /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6)
for a in arm64 s390x; do
  for f in cache/foreign/$a/root/bin/ls cache/foreign/$a/root/usr/lib/*/libstdc++.so.6 \
           cache/foreign/$a/root/lib/*/libc.so.6; do
    # arm64 libc.so.6: default FREs with 2 data words (CFA, RA), which
    # sframe_kcheck refuses on AArch64 whatever the FRE layout (spec 3.1.2
    # says 1 or 3): not a question of sharing, left out here.
    [ $a = arm64 ] && [ "${f##*/}" = libc.so.6 ] && continue
    [ -f "$f" ] && linked+=("$f")
  done
done
for f in "${linked[@]}"; do
  [ -f "$f" ] || continue
  b=$T/lk_$(echo "$f" | tr / _)
  "$E2S" -q "$f" -o "$b.def" && "$E2S" -q --no-share-fres "$f" -o "$b.no" ||
    { fail "convert $f"; continue; }
  k=$("$KCHECK" "$b.def" 2>&1) && ok || fail "kcheck (default output) $f: $k"
  v=$("$E2S" --verify "$b.def" 2>&1) && ok || fail "verify (default output) $f: $v"
  d=$(sz "$b.def") u=$(sz "$b.no")
  if readelf -h "$f" | grep -q 'big endian'; then
    [ "$d" = "$u" ] && ok || fail "$f: big-endian default output shared ($d vs $u bytes)"
  else
    [ "$d" -lt "$u" ] && ok || fail "$f: default output not shared ($d vs $u bytes)"
  fi
  echo "  ${f#cache/foreign/}: .sframe $d bytes (unshared $u); kcheck: ${k##*: }"
done
# The latest kernel reader's stricter rules, each seeded into a copy of
# converted ls: two FDEs with one start, an FRE of a MASK FDE (the PLT)
# at or past the function size, more FREs than bytes, a function in a
# second executable segment.
kmut() { # what python-mutation expected-message
  cp "$T/ls.sf" "$T/kmut"
  python3 - "$T/kmut" "$2" <<'PY' || { fail "mutating for $1"; return; }
import struct, sys
path, what = sys.argv[1], sys.argv[2]
d = bytearray(open(path, 'rb').read())
shoff, = struct.unpack_from('<Q', d, 40)
shnum, shstrndx = struct.unpack_from('<HH', d, 60)
sh = [struct.unpack_from('<IIQQQQIIQQ', d, shoff + 64 * i) for i in range(shnum)]
name = lambda h: d[sh[shstrndx][4] + h[0]:d.index(0, sh[shstrndx][4] + h[0])]
sf = next(h for h in sh if name(h) == b'.sframe')
o = sf[4]
nfdes, = struct.unpack_from('<I', d, o + 8)
fdeoff, freoff = struct.unpack_from('<II', d, o + 20)
fde = lambda i: o + 28 + fdeoff + 16 * i
attr = lambda i: o + 28 + freoff + struct.unpack_from('<I', d, fde(i) + 12)[0]
def fres(i):
    a = attr(i)
    n, info = struct.unpack_from('<HB', d, a)
    w = 1 << (info & 15)
    p, st = a + 5, []
    for _ in range(n):
        st.append(int.from_bytes(d[p:p + w], 'little'))
        fi = d[p + w]
        p += w + 1 + ((fi >> 1) & 15) * (1 << ((fi >> 5) & 3))
    return info, st
if what == 'same-start':
    v, = struct.unpack_from('<q', d, fde(0))
    struct.pack_into('<q', d, fde(1), v - 16)
elif what == 'mask-size':
    i = next(i for i in range(nfdes) if fres(i)[0] & 0x10 and max(fres(i)[1]) > 0)
    struct.pack_into('<I', d, fde(i) + 8, max(fres(i)[1]))
elif what == 'count':
    i = next(i for i in range(nfdes) if fres(i)[0] & 0x10 and len(fres(i)[1]) > 1)
    struct.pack_into('<I', d, fde(i) + 8, 1)
elif what == 'segment':
    phoff, = struct.unpack_from('<Q', d, 32)
    phnum, = struct.unpack_from('<H', d, 56)
    ph = [struct.unpack_from('<IIQQQQQQ', d, phoff + 56 * i) for i in range(phnum)]
    k = max(i for i in range(phnum) if ph[i][0] == 1 and not ph[i][1] & 1 and ph[i][6] >= 0x100)
    struct.pack_into('<I', d, phoff + 56 * k + 4, ph[k][1] | 1)
    i = nfdes - 1
    struct.pack_into('<q', d, fde(i), ph[k][3] - (sf[3] + 28 + fdeoff + 16 * i))
    struct.pack_into('<I', d, fde(i) + 8, 16)
open(path, 'wb').write(d)
PY
  if "$KCHECK" "$T/kmut" >"$T/kmut.out" 2>&1; then fail "kcheck accepted $1"
  elif grep -q "$3" "$T/kmut.out"; then ok
  else fail "kcheck on $1: $(head -2 "$T/kmut.out")"; fi
}
"$E2S" -q /bin/ls -o "$T/ls.sf" || fail "convert ls"
kmut "two FDEs with one start" same-start "not above the previous FDE"
kmut "a MASK FRE at the function size" mask-size "outside the function"
kmut "more FREs than bytes" count "FREs for a function of 1 bytes"
kmut "a function in a second executable segment" segment "one text range per section"
echo "eco_kernel: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
