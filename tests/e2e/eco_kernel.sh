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
check() { # object: verify, all FDEs match
  local v n
  v=$("$E2S" --verify "$1" 2>&1) || { fail "verify $1: $v"; return; }
  n=$(fdes "$1")
  echo "$v" | grep -q "^functions=$n match=$n mismatch=0" && ok || fail "$1: $v (readelf FDEs $n)"
  echo "  $(basename "$1"): $v"
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
  check "$T/${p}_mod.o"
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
echo "eco_kernel: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
