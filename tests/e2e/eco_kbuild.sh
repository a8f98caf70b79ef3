#!/usr/bin/env bash
# contrib/kernel with real Kbuild: an out-of-tree module (two C files, a
# module parameter, init/exit, alloca, recursion, a 512-byte frame) is
# built with `make -C /usr/src/linux-headers-<version> M=...` against
# Debian's linux-headers-amd64, its Kbuild file including
# contrib/kernel/sframe.mk for SFRAME_CFLAGS; then `make -f sframe.mk
# sframe-modules` converts the .ko in place. Checked:
#   - eh2sframe --verify: every FDE readelf counts matches;
#   - contrib/kernel/sframe_kcheck (written from the SFrame spec, no
#     eh2sframe code): the checks a kernel SFrame reader applies (magic,
#     version 3, SORTED and FDE_FUNC_START_PCREL, no auxiliary header,
#     non-empty tables, function starts inside the text, FRE starts
#     increasing and inside the function, data words used exactly), with
#     its FDE count equal to readelf's; and it rejects mutated copies;
#   - modinfo reads the converted module (same fields, vermagic of the
#     headers), and .text/.modinfo/__versions are byte-identical;
#   - per-object conversion + `ld -r` concatenates blocks: the checker
#     flags it (why the recipe converts the linked .ko);
#   - `make modules_install INSTALL_MOD_STRIP=1` (binutils strip
#     --strip-debug of the converted module, as distributions install
#     them): the installed module keeps .sframe/.rela.sframe (same bytes),
#     verifies and passes the checker; its debug file (objcopy
#     --only-keep-debug of the converted module, found by build ID) is
#     loaded by gdb without a warning, and eu-unstrip recombines the pair
#     with the same .sframe.
# The same for arm64 with aarch64-linux-gnu-gcc when the arm64 headers
# package (linux-headers-<version>-arm64, downloaded and unpacked: it is
# not co-installable with the native toolchain) can be had.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
E2S=$PWD/eh2sframe
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
command -v modinfo >/dev/null || { echo "SKIP: needs modinfo (Debian package kmod)"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: the native part needs an x86-64 host"; exit 77; }
KDIR=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -1)
[ -n "$KDIR" ] && [ -f "$KDIR/Makefile" ] ||
  { echo "SKIP: needs linux-headers-amd64 (tools/install-deps.sh installs it)"; exit 77; }
KREL=${KDIR#/usr/src/linux-headers-}
KVER=$(dpkg-query -W -f='${Version}' "linux-headers-$KREL" 2>/dev/null)
echo "kernel headers: $KDIR ($KVER)"
T=$(mktemp -d /tmp/eco_kbuild.XXXXXX)
trap 'rm -rf "$T"' EXIT
nfail=0 nok=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { nok=$((nok + 1)); }
MK=$ROOT/contrib/kernel/sframe.mk
KCHECK=$T/sframe_kcheck
gcc -std=c11 -O2 -Wall -Wextra -Werror -o "$KCHECK" contrib/kernel/sframe_kcheck.c ||
  { echo "FAIL: building sframe_kcheck"; exit 1; }

mkdir "$T/src"
cat > "$T/src/e2sdemo_main.c" <<'C'
// SPDX-License-Identifier: GPL-2.0
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/slab.h>

static int depth = 5;
module_param(depth, int, 0444);
MODULE_PARM_DESC(depth, "recursion depth of the self-test");

int e2sdemo_sum(const int *v, int n);
long e2sdemo_walk(int n);

static noinline int e2sdemo_big(int n)
{
	volatile char buf[512];
	int i;

	for (i = 0; i < n && i < (int)sizeof(buf); i++)
		buf[i] = (char)i;
	return buf[n & 511];
}

static noinline int e2sdemo_rec(int n)
{
	if (n <= 0)
		return 0;
	return 1 + e2sdemo_rec(n - 1) + e2sdemo_big(n);
}

static int __init e2sdemo_init(void)
{
	int *v = kmalloc_array(16, sizeof(*v), GFP_KERNEL);
	int i, r;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < 16; i++)
		v[i] = i;
	r = e2sdemo_sum(v, 16) + e2sdemo_rec(depth) + (int)e2sdemo_walk(depth);
	kfree(v);
	pr_info("e2sdemo: %d\n", r);
	return 0;
}

static void __exit e2sdemo_exit(void)
{
}

module_init(e2sdemo_init);
module_exit(e2sdemo_exit);
MODULE_LICENSE("GPL");
MODULE_AUTHOR("eh2sframe tests");
MODULE_DESCRIPTION("eh2sframe Kbuild test module");
C
cat > "$T/src/e2sdemo_util.c" <<'C'
// SPDX-License-Identifier: GPL-2.0
#include <linux/kernel.h>
#include <linux/string.h>

int e2sdemo_sum(const int *v, int n);
long e2sdemo_walk(int n);

int e2sdemo_sum(const int *v, int n)
{
	int s = 0, i;

	for (i = 0; i < n; i++)
		s += v[i];
	return s;
}

long e2sdemo_walk(int n)
{
	char *p = __builtin_alloca(n + 16);

	memset(p, n, n + 16);
	return p[n / 2] + strlen("walk");
}
C
# The module's Kbuild file, as contrib/kernel/sframe.mk documents it.
cat > "$T/src/Kbuild" <<K
include $MK
ccflags-y += \$(SFRAME_CFLAGS)
obj-m := e2sdemo.o
e2sdemo-y := e2sdemo_main.o e2sdemo_util.o
K

fdes() { readelf --debug-dump=frames "$1" 2>/dev/null | grep -c ' FDE cie='; }
sec_bytes() { # file section -> hex dump of its contents
  objcopy -O binary --only-section="$2" "$1" "$T/sec.bin" 2>/dev/null && od -An -tx1 -v "$T/sec.bin" | tr -d ' \n'
}

# build_module NAME KDIR [make args...]: builds $T/NAME/e2sdemo.ko
build_module() {
  local name=$1 kdir=$2; shift 2
  rm -rf "${T:?}/$name"; cp -r "$T/src" "$T/$name"
  if ! nice make -s -C "$kdir" M="$T/$name" "$@" modules >"$T/$name.log" 2>&1; then
    tail -20 "$T/$name.log"; fail "$name: Kbuild failed"; return 1
  fi
  [ -f "$T/$name/e2sdemo.ko" ] && ok || { fail "$name: no e2sdemo.ko"; return 1; }
}

# check_module NAME MACHINE-WORD VERMAGIC-PREFIX
check_module() {
  local name=$1 machine=$2 krel=$3 ko=$T/$1/e2sdemo.ko
  file "$ko" | grep -q "relocatable, $machine" && ok || fail "$name: $(file "$ko")"
  local n; n=$(fdes "$ko")
  [ "$n" -ge 6 ] && ok || fail "$name: only $n FDEs: SFRAME_CFLAGS not applied?"
  cp "$ko" "$T/$name.orig.ko"
  local info0; info0=$(modinfo "$ko" | grep -v '^filename:')
  make -s -f "$MK" EH2SFRAME="$E2S" M="$T/$name" sframe-modules >"$T/$name.conv" 2>&1 &&
    ok || { cat "$T/$name.conv"; fail "$name: sframe-modules"; return; }
  grep -q '1 patched' "$T/$name.conv" && ok || fail "$name: $(cat "$T/$name.conv")"
  readelf -SW "$ko" | grep -q ' \.sframe ' && readelf -SW "$ko" | grep -q ' \.rela\.sframe ' &&
    ok || fail "$name: no .sframe/.rela.sframe"
  local v; v=$("$E2S" --verify "$ko" 2>&1) && ok || fail "$name: verify: $v"
  echo "$v" | grep -q "^functions=$n match=$n mismatch=0" && ok || fail "$name: verify: $v (readelf FDEs $n)"
  echo "  $name: --verify: $v"
  local k; k=$("$KCHECK" "$ko" 2>&1) && ok || fail "$name: kernel checks: $k"
  echo "$k" | grep -q ": 1 .sframe section, $n FDEs, " && ok || fail "$name: kcheck count: $k (want $n FDEs)"
  echo "  $name: kcheck: ${k#"$ko": }"
  # modinfo: same fields as before the conversion, vermagic of these headers.
  local info1; info1=$(modinfo "$ko" | grep -v '^filename:')
  [ "$info0" = "$info1" ] && ok || fail "$name: modinfo changed: $info1"
  [ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$krel" ] && ok || fail "$name: vermagic $(modinfo -F vermagic "$ko")"
  modinfo -F parm "$ko" | grep -q '^depth:recursion depth' && ok || fail "$name: modinfo parm"
  modinfo -F description "$ko" | grep -q 'Kbuild test module' && ok || fail "$name: modinfo description"
  for s in .text .init.text .modinfo __versions .gnu.linkonce.this_module; do
    [ "$(sec_bytes "$T/$name.orig.ko" "$s")" = "$(sec_bytes "$ko" "$s")" ] && ok || fail "$name: $s changed"
  done
  # The checker can fail: mutated copies.
  local off; off=$(readelf -SW "$ko" | awk '$2 == ".sframe" {print $5} $3 == ".sframe" {print $6}' | head -1)
  off=$((16#$off))
  mutate() { # byte-offset value description
    cp "$ko" "$T/mut.ko"
    printf "$(printf '\\%03o' "$2")" | dd of="$T/mut.ko" bs=1 seek=$((off + $1)) conv=notrunc status=none
    if "$KCHECK" "$T/mut.ko" >/dev/null 2>"$T/mut.err"; then fail "$name: kcheck accepted $3"
    else ok; fi
  }
  mutate 2 2 "version 2"
  mutate 3 4 "FDE_SORTED cleared"
  mutate 7 4 "an auxiliary header"
  mutate 8 0 "FDE count 0 (little-endian low byte)"
}

# check_install NAME KDIR [make args...]: modules_install with
# INSTALL_MOD_STRIP=1 of the converted $T/NAME/e2sdemo.ko, then the pair
# installed module / debug file.
check_install() {
  local name=$1 kdir=$2; shift 2
  local ko=$T/$name/e2sdemo.ko objcopy=objcopy inst
  case $name in a64) objcopy=aarch64-linux-gnu-objcopy ;; esac
  # External modules: signing without the build's key only warns.
  nice make -s -C "$kdir" M="$T/$name" INSTALL_MOD_PATH="$T/$name.inst" INSTALL_MOD_STRIP=1 "$@" \
    modules_install >"$T/$name.inst.log" 2>&1
  inst=$(find "$T/$name.inst" -name e2sdemo.ko 2>/dev/null | head -1)
  [ -n "$inst" ] && ok || { tail -5 "$T/$name.inst.log"; fail "$name: modules_install"; return; }
  readelf -SW "$inst" | grep -q ' \.debug_info ' && fail "$name: installed module not stripped" || ok
  [ "$(sec_bytes "$ko" .sframe)" = "$(sec_bytes "$inst" .sframe)" ] &&
    readelf -SW "$inst" | grep -q ' \.rela\.sframe ' && ok || fail "$name: strip changed .sframe/.rela.sframe"
  local n v iv; n=$(fdes "$ko")
  iv=$("$E2S" --verify "$inst" 2>&1)
  echo "$iv" | grep -q "^functions=$n match=$n mismatch=0" && ok || fail "$name: installed: verify: $iv"
  "$KCHECK" "$inst" >/dev/null 2>&1 && ok || fail "$name: installed: kcheck"
  local id; id=$(readelf -n "$ko" | sed -n 's/.*Build ID: //p')
  [ -n "$id" ] || { fail "$name: no build ID"; return; }
  local dbg=$T/$name.dbg/.build-id/${id:0:2}/${id:2}.debug
  mkdir -p "${dbg%/*}"
  $objcopy --only-keep-debug "$ko" "$dbg" && ok || fail "$name: objcopy --only-keep-debug"
  # gdb, against the unconverted module split the same way (gdb 13 has
  # its own trouble with AArch64 modules: the same for both).
  local strip=${objcopy%objcopy}strip r=$T/$name.ref
  mkdir -p "$r/dbg/.build-id/${id:0:2}"
  $strip --strip-debug -o "$r/e2sdemo.ko" "$T/$name.orig.ko" &&
    $objcopy --only-keep-debug "$T/$name.orig.ko" "$r/dbg/.build-id/${id:0:2}/${id:2}.debug" ||
    fail "$name: reference split"
  local g g0
  g=$(gdb -batch -nx -iex "set debug-file-directory $T/$name.dbg" -ex 'info line e2sdemo_rec' \
        -ex 'info scope e2sdemo_big' "$inst" 2>&1 | sed -e "s|$inst|KO|g" -e "s|$T/$name.dbg/|DBG/|g")
  g0=$(gdb -batch -nx -iex "set debug-file-directory $r/dbg" -ex 'info line e2sdemo_rec' \
         -ex 'info scope e2sdemo_big' "$r/e2sdemo.ko" 2>&1 | sed -e "s|$r/e2sdemo.ko|KO|g" -e "s|$r/dbg/|DBG/|g")
  echo "$g" | grep -q 'section .* not found' && fail "$name: gdb: $(echo "$g" | grep -m1 'not found')" || ok
  [ "$g" = "$g0" ] && ok || fail "$name: gdb output differs from the unconverted module's: $(diff <(echo "$g0") <(echo "$g") | head -4)"
  [ $name = x86 ] && { echo "$g" | grep -q 'Line [0-9]* of "[^"]*e2sdemo_main.c"' && ok || fail "$name: gdb: no line info: $g"; }
  v=$(eu-unstrip -o "$T/$name.un.ko" "$inst" "$dbg" 2>&1) && ok || fail "$name: eu-unstrip: $v"
  [ "$(sec_bytes "$T/$name.un.ko" .sframe)" = "$(sec_bytes "$ko" .sframe)" ] && ok || fail "$name: recombined .sframe differs"
  echo "  $name: installed with INSTALL_MOD_STRIP=1: --verify: $iv; debug file paired"
}

# ---- x86-64 against linux-headers-amd64
if build_module x86 "$KDIR"; then
  check_module x86 x86-64 "$KREL"
  check_install x86 "$KDIR"
  # Per-object conversion with the pattern rule, then ld -r: two blocks
  # in one section; the checker must say so.
  ( cd "$T/x86" && make -s -f "$MK" EH2SFRAME="$E2S" e2sdemo_main.sframe.o e2sdemo_util.sframe.o ) >/dev/null 2>&1 &&
    ld -r -o "$T/x86/concat.o" "$T/x86/e2sdemo_main.sframe.o" "$T/x86/e2sdemo_util.sframe.o" 2>/dev/null
  "$KCHECK" "$T/x86/concat.o" >/dev/null 2>"$T/concat.err" && fail "kcheck accepted concatenated blocks" ||
    { grep -q 'second SFrame block' "$T/concat.err" && ok || fail "concat: $(cat "$T/concat.err")"; }
  # Without SFRAME_CFLAGS: Debian's kernels build with debug info, so the
  # objects still carry .debug_frame (no .eh_frame); eh2sframe reads it
  # when .eh_frame is absent. Stripped of debug info first: nothing to
  # convert: skipped and counted as "no CFI" in the summary.
  rm -rf "$T/plain"; cp -r "$T/src" "$T/plain"; sed -i '/SFRAME_CFLAGS/d' "$T/plain/Kbuild"
  if nice make -s -C "$KDIR" M="$T/plain" modules >/dev/null 2>&1; then
    pk=$T/plain/e2sdemo.ko
    readelf -SW "$pk" | grep -q ' \.eh_frame ' && fail "plain module has .eh_frame" || ok
    if readelf -SW "$pk" | grep -q ' \.debug_frame '; then
      mkdir "$T/stripped" && strip --strip-debug -o "$T/stripped/e2sdemo.ko" "$pk"
      make -s -f "$MK" EH2SFRAME="$E2S" M="$T/stripped" sframe-modules >"$T/plain.log" 2>&1
      grep -q '0 patched, 1 no CFI' "$T/plain.log" && ! readelf -SW "$T/stripped/e2sdemo.ko" | grep -q ' \.sframe ' &&
        ok || fail "stripped module: $(cat "$T/plain.log")"
      n=$(fdes "$pk")
      make -s -f "$MK" EH2SFRAME="$E2S" M="$T/plain" sframe-modules >/dev/null 2>&1 && ok || fail "plain: sframe-modules"
      v=$("$E2S" --verify "$pk" 2>&1)
      echo "$v" | grep -q "^functions=$n match=$n mismatch=0" && ok || fail "plain (.debug_frame): $v (readelf $n)"
      "$KCHECK" "$pk" >/dev/null && ok || fail "plain: kcheck"
      echo "  without SFRAME_CFLAGS: from .debug_frame: $v"
    else
      echo "note: these headers build modules without debug info"
    fi
  fi
fi

# ---- arm64, cross: the arm64 headers package unpacked next to the
# native kbuild tools (same version).
if ! command -v aarch64-linux-gnu-gcc-12 >/dev/null; then
  echo "note: arm64 skipped: no aarch64-linux-gnu-gcc-12"
else
  A64=linux-headers-$KREL
  A64=${A64%-amd64}-arm64
  CACHE=$ROOT/build/kheaders
  deb=$(ls "$CACHE/${A64}_${KVER}_arm64.deb" 2>/dev/null)
  if [ -z "$deb" ]; then
    mkdir -p "$CACHE"
    (cd "$CACHE" && apt-get download "$A64:arm64=$KVER") >"$T/dl.log" 2>&1
    deb=$(ls "$CACHE/${A64}_${KVER}_arm64.deb" 2>/dev/null)
  fi
  if [ -z "$deb" ]; then
    echo "note: arm64 skipped: cannot download $A64:arm64 $KVER ($(tail -1 "$T/dl.log"))"
  else
    dpkg-deb -x "$deb" "$T/a64root"
    mkdir -p "$T/a64root/usr/lib"
    ln -s "/usr/lib/linux-kbuild-${KREL%%.0-*}" "$T/a64root/usr/lib/$(readlink "$T/a64root/usr/src/$A64/scripts" | sed 's|^\.\./\.\./lib/||; s|/scripts$||')"
    echo "arm64 headers: $(basename "$deb")"
    if build_module a64 "$T/a64root/usr/src/$A64" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-; then
      check_module a64 "ARM aarch64" "${KREL%-amd64}-arm64"
      check_install a64 "$T/a64root/usr/src/$A64" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
    fi
  fi
fi

echo "eco_kbuild: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
