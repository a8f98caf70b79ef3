#!/usr/bin/env bash
# Converted files and their separate debug files, for every program
# header layout the converter can choose (make check-distro; issue 23).
#
# Each input is built with -g (and put through dwz, as dh_dwz does) and
# split the way dh_strip does it --
# objcopy --only-keep-debug --compress-debug-sections, strip
# --remove-section=.comment --remove-section=.note (+ --strip-unneeded
# for libraries), objcopy --add-gnu-debuglink -- with binutils 2.40 (this
# system) and 2.47 (the sid oracle chroot, when it exists), and the way
# RPM's find-debuginfo does it (debugedit, eu-strip --remove-comment -g
# -f). Then the stripped file is converted with each layout forced
# (tests/e2e/lib/force_kind.c) and eh2sframe updates the debug file
# (--in-place --debug-file: the file already has .sframe). The
# unconverted input through the same steps is the reference. Inputs:
# x86-64 PIE, non-PIE, static, static-pie programs and a shared library;
# AArch64 PIE, non-PIE and static programs (run under qemu-aarch64, which
# finds the program header table at the first PT_LOAD's bias + e_phoff).
#
# Checked for every cell (input x layout x split tools):
#   - the update succeeds;
#   - the stripped file runs like the original (natively and under
#     qemu-user for programs: the old-loader tie), passes --verify, and
#     PT_GNU_SFRAME covers .sframe inside a PT_LOAD (check_layout);
#   - the debug file has the .sframe section header and PT_GNU_SFRAME;
#   - gdb 13 with the debug file directory loads it without a warning,
#     and its breakpoint, backtrace, `info line` and `list` output is the
#     reference's (library load addresses masked);
#   - eu-unstrip recombines the pair (where it does for the reference);
#     readelf reads the result without a complaint, eu-elflint finds
#     nothing the reference's result lacks, and the recombined program
#     runs.
# DEBUG_SPLIT_BEFORE=1 also runs the other order -- convert, then split
# -- through the same checks and prints its results without counting
# them: the evidence for the order the recipes use (README, "Debug
# files"). KEEP=1 keeps the scratch directory.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
. tests/e2e/lib/elfpatch_lib.sh
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
for c in gdb eu-unstrip eu-strip debugedit; do
  command -v $c >/dev/null || { echo "SKIP: needs $c"; exit 77; }
done
T=$(mktemp -d /tmp/debug_split.XXXXXX)
[ -n "${KEEP:-}" ] && echo "keeping $T" || trap 'rm -rf "$T"' EXIT
start=$SECONDS
envs=host
if tools/in-oracle.sh true 2>/dev/null; then
  envs="host sid"; export IN_ORACLE_BIND=$T
fi
# run_in ENV CMD...: a tool of ENV (host: this system; sid: the chroot).
run_in() {
  local e=$1; shift
  if [ "$e" = host ]; then "$@"; else tools/in-oracle.sh "$@"; fi
}
for e in $envs; do echo "$e: $(run_in $e strip --version | head -1)"; done
cc -std=c11 -D_GNU_SOURCE -O2 -Isrc -Iinclude -o "$T/force_kind" tests/e2e/lib/force_kind.c \
  build/libeh2sframe-internal.a -lz -llzma || { echo "FAIL: build force_kind"; exit 1; }

# ---- sources: a recursion through a second file, so a backtrace has depth
mkdir "$T/src"
cat > "$T/src/main.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int plug_add(int x);
static int __attribute__((noinline)) depth(int n)
{
	if (n == 0)
		return plug_add(n);
	return depth(n - 1) + 1;
}
static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}
int main(int argc, char **argv)
{
	int v[3] = {3, 1, 2};
	(void)argv;
	qsort(v, 3, sizeof v[0], cmp);
	printf("%d %d %d %d\n", v[0], v[1], v[2], depth(argc + 2));
	return 0;
}
C
cat > "$T/src/plug.c" <<'C'
#include <stdlib.h>
static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}
int __attribute__((noinline)) plug_add(int x)
{
	int v[4] = {3, 1, 2, 0};
	qsort(v, 4, sizeof v[0], cmp);
	return x + v[3] + 38;
}
C
B=$T/build; mkdir "$B"
cd "$T/src" || exit 1
inputs=()
add() { inputs+=("$1"); }
gcc -O1 -g -o "$B/x-pie" main.c plug.c && add x-pie
gcc -O1 -g -no-pie -o "$B/x-nopie" main.c plug.c && add x-nopie
gcc -O1 -g -static -o "$B/x-static" main.c plug.c && add x-static
gcc -O1 -g -static-pie -o "$B/x-spie" main.c plug.c && add x-spie
gcc -O1 -g -shared -fPIC -o "$B/x-lib" plug.c && add x-lib
gcc -O1 -g -o "$B/driver" main.c -L"$B" -l:x-lib -Wl,-rpath,'$ORIGIN'
if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; then
  aarch64-linux-gnu-gcc -O1 -g -o "$B/a-pie" main.c plug.c && add a-pie
  aarch64-linux-gnu-gcc -O1 -g -no-pie -o "$B/a-nopie" main.c plug.c && add a-nopie
  aarch64-linux-gnu-gcc -O1 -g -static -o "$B/a-static" main.c plug.c && add a-static
else
  echo "note: no aarch64 cross compiler or qemu-aarch64: AArch64 inputs skipped"
fi
# dwz on the linked files, as dh_dwz does before dh_strip.
if command -v dwz >/dev/null; then
  for n in "${inputs[@]}"; do dwz -q "$B/$n" 2>/dev/null; done
else
  echo "note: no dwz"
fi
cd "$ROOT" || exit 1
QA=(qemu-aarch64 -L /usr/aarch64-linux-gnu)

# layouts NAME: what the converter can choose for such a file (now or
# with other layout rules), forced.
layouts() {
  case $1 in
    *-lib) echo grown seg ;;
    *-pie|*-spie) echo grown seg-tied ;;
    *) echo grown shift seg-tied ;;
  esac
}
# runs DIR NAME: how the program (or, for the library, the driver linked
# with it) of DIR behaves; under qemu-user too with "qemu".
runs() {
  local d=$1 n=$2 q=${3:-}
  case $n in
    x-lib) "$d/driver" 2>&1; echo "rc=$?" ;;
    a-*) "${QA[@]}" "$d/$n" 2>&1; echo "rc=$?" ;;
    *) if [ -n "$q" ]; then qemu-x86_64 "$d/$n" 2>&1; else "$d/$n" 2>&1; fi; echo "rc=$?" ;;
  esac
}
# gdb_out DIR NAME: gdb with DIR/dbg as the debug file directory; x86-64
# programs (and the library, through the driver) run to a breakpoint,
# AArch64 ones are only read.
gdb_out() {
  local d=$1 n=$2 f args=()
  f=$d/$n
  case $n in
    x-lib) f=$d/driver
      args=(-ex 'break plug_add' -ex run -ex bt -ex 'info line plug_add' -ex 'list plug_add') ;;
    x-*) args=(-ex 'break plug_add' -ex run -ex bt -ex 'info line depth' -ex 'list depth'
               -ex 'info line plug_add') ;;
    a-*) args=(-ex 'info line depth' -ex 'list depth' -ex 'info line plug_add' -ex 'info scope plug_add'
               -ex 'info address main') ;;
  esac
  (cd "$d" && gdb -batch -nx -iex "set debug-file-directory $d/dbg" -iex 'set auto-load no' \
     -iex 'set debuginfod enabled off' "${args[@]}" "$f" 2>&1) |
    sed -e "s|$d/||g" -e 's/process [0-9]*/process N/' -e 's/0x0*7ffff7[0-9a-f]*/LIBADDR/g'
}
# debug_path FILE: where the debug file of FILE goes (by build ID).
debug_path() {
  local id
  id=$(LC_ALL=C readelf -n "$1" | sed -n 's/.*Build ID: //p')
  echo "${1%/*}/dbg/.build-id/${id:0:2}/${id:2}.debug"
}
# split ENV HOW DIR NAME: cut the debug file off DIR/NAME in place, the
# way dh_strip (HOW=deb) or find-debuginfo (HOW=rpm) does; prints the
# tools' complaints.
split() {
  local e=$1 how=$2 d=$3 n=$4 f dbg x=() strip=strip objcopy=objcopy
  f=$d/$n
  case $n in a-*) strip=aarch64-linux-gnu-strip objcopy=aarch64-linux-gnu-objcopy ;; esac
  case $n in *-lib) x=(--strip-unneeded) ;; esac
  if [ "$how" = deb ]; then
    dbg=$(debug_path "$f"); mkdir -p "${dbg%/*}"
    run_in $e $objcopy --only-keep-debug --compress-debug-sections "$f" "$dbg" 2>&1 || echo "objcopy --only-keep-debug: exit $?"
    run_in $e $strip --remove-section=.comment --remove-section=.note "${x[@]}" "$f" 2>&1 || echo "strip: exit $?"
    run_in $e $objcopy --add-gnu-debuglink "$dbg" "$f" 2>&1 || echo "objcopy --add-gnu-debuglink: exit $?"
  else
    # find-debuginfo: debugedit rewrites the source paths (and
    # recomputes the build ID), eu-strip -g -f cuts the debug file.
    debugedit -b "$T" -d /usr/src/debug -i "$f" >/dev/null 2>"$d/de.err" || echo "debugedit: exit $?"
    cat "$d/de.err"
    dbg=$(debug_path "$f"); mkdir -p "${dbg%/*}"
    eu-strip --remove-comment -g -f "$dbg" "$f" 2>&1 || echo "eu-strip -f: exit $?"
  fi
}

# ---- references: the unconverted inputs through the same steps
declare -A want gref xref xok
for how in deb rpm; do
  for e in $envs; do
    [ $how = rpm ] && [ $e = sid ] && continue
    for n in "${inputs[@]}"; do
      d=$T/ref-$how-$e-$n; mkdir -p "$d"; cp "$B/$n" "$d/"; cp "$B/driver" "$d/"
      [ -z "${want[$n]:-}" ] && want[$n]=$(runs "$d" "$n")
      msg=$(split $e $how "$d" "$n")
      [ -n "$msg" ] && echo "note: reference $n [$how @$e]: $msg"
      gref[$how-$e-$n]=$(gdb_out "$d" "$n")
      # elfutils 0.188 fails on some unconverted pairs too (static-pie;
      # eu-strip -g output of AArch64 programs): those stay failures.
      eu-unstrip -o "$d/x" "$d/$n" "$(debug_path "$d/$n")" 2>/dev/null && xok[$how-$e-$n]=1 ||
        { xok[$how-$e-$n]=0; echo "note: eu-unstrip fails on the unconverted $n [$how @$e]"; }
      xref[$how-$e-$n]=$(lint_quiet "$d/x" | sed 's/\[ *[0-9]*\]/[N]/g')
    done
  done
done
echo "[$((SECONDS - start))s] references done"

# sync C D: bring debug file D in line with the converted C (after):
# C already has .sframe, so this only updates D.
sync() { "$E2S" --in-place -q --debug-file="$2" "$1"; }

# cell ORDER NAME LAYOUT ENV HOW: ORDER "before": convert with LAYOUT,
# then split with ENV's tools the HOW way; "after": split first, convert
# the stripped file, update the debug file. Then check.
declare -A result
cells=0 good=0
cell() {
  local order=$1 n=$2 k=$3 e=$4 how=$5 d res= msg dbg out got
  d=$T/c-$order-$n-$k-$e-$how; mkdir -p "$d"; cp "$B/driver" "$d/"
  if [ $order = before ]; then
    cp "$B/$n.$k" "$d/$n"
    msg=$(split $e $how "$d" "$n")
    [ -n "$msg" ] && res="$res tools: $(echo "$msg" | head -2 | tr '\n' ' ');"
  else
    cp "$B/$n" "$d/$n"
    split $e $how "$d" "$n" >/dev/null
    got=$("$T/force_kind" $k "$d/$n" "$d/$n.conv" 2>&1)
    if [ "$got" != $k ]; then result[$order $n $k $e $how]=" layout $k not possible on the stripped file ($got)"; return; fi
    dbg=$(debug_path "$d/$n")
    mv "$d/$n.conv" "$d/$n"
    msg=$(sync "$d/$n" "$dbg" 2>&1) || res="$res debug update: $msg;"
  fi
  [ "$(runs "$d" "$n")" = "${want[$n]}" ] || res="$res runs differently;"
  case $n in
    x-lib) ;;
    x-*) [ "$(runs "$d" "$n" qemu)" = "${want[$n]}" ] || res="$res differs under qemu-x86_64;" ;;
  esac
  "$E2S" --verify "$d/$n" >/dev/null 2>&1 || res="$res --verify fails;"
  check_layout "$d/$n" >/dev/null || res="$res layout: $(check_layout "$d/$n" | sed "s|^$d/||");"
  dbg=$(debug_path "$d/$n")
  if [ -f "$dbg" ]; then
    LC_ALL=C readelf -SW "$dbg" 2>/dev/null | grep -q ' \.sframe ' || res="$res no .sframe in the debug file;"
    LC_ALL=C readelf -lW "$dbg" 2>/dev/null | grep -q -e GNU_SFRAME -e 'LOOS+0x474e554' ||
      res="$res no PT_GNU_SFRAME in the debug file;"
    out=$(gdb_out "$d" "$n")
    echo "$out" | grep -q -i 'warning' && res="$res gdb: $(echo "$out" | grep -i -m1 warning);"
    [ "$out" = "${gref[$how-$e-$n]}" ] || { res="$res gdb output differs;"; diff <(echo "${gref[$how-$e-$n]}") <(echo "$out") | head -6 >"$d/gdb.diff"; }
    rm -f "$d/x"
    if [ "${xok[$how-$e-$n]}" = 0 ]; then
      : # no reference to compare with
    elif ! msg=$(eu-unstrip -o "$d/x" "$d/$n" "$dbg" 2>&1); then
      res="$res eu-unstrip: $(echo "$msg" | head -1);"
    elif [ -f "$d/x" ]; then
      msg=$(LC_ALL=C readelf -lSW "$d/x" 2>&1 >/dev/null)
      [ -z "$msg" ] || res="$res readelf on the recombined file: $(echo "$msg" | head -1);"
      [ "$(lint_quiet "$d/x" | sed 's/\[ *[0-9]*\]/[N]/g')" = "${xref[$how-$e-$n]}" ] || res="$res eu-elflint: $(lint_quiet "$d/x" | head -1);"
      [ $n = x-lib ] || { chmod +x "$d/x"; mv "$d/$n" "$d/$n.s"; cp "$d/x" "$d/$n"
        [ "$(runs "$d" "$n")" = "${want[$n]}" ] || res="$res the recombined program runs differently;"; }
    fi
  else
    res="$res no debug file;"
  fi
  if [ $order = after ]; then
    cells=$((cells + 1))
    [ -z "$res" ] && good=$((good + 1))
  fi
  result[$order $n $k $e $how]=${res:- ok}
}

# "before" (convert, then split) is the evidence for the order the
# recipes use; it is printed, not asserted: DEBUG_SPLIT_BEFORE=1.
ORDERS=after
[ -n "${DEBUG_SPLIT_BEFORE:-}" ] && ORDERS="before after"
for n in "${inputs[@]}"; do
  chosen=$("$E2S" -v "$B/$n" -o "$B/$n.default" 2>&1 | sed -n 's/.*padding [0-9]*; //p')
  echo "$n: eh2sframe chooses: $chosen"
  for k in $(layouts $n); do
    got=$("$T/force_kind" $k "$B/$n" "$B/$n.$k" 2>&1)
    [ "$got" = $k ] || { echo "  $n: $k not possible ($got)"; continue; }
    for o in $ORDERS; do
      for e in $envs; do cell $o $n $k $e deb; done
      cell $o $n $k host rpm
    done
  done
done
echo "[$((SECONDS - start))s] cells done"

cols=()
for e in $envs; do cols+=("$e deb"); done
cols+=("host rpm")
for o in $ORDERS; do
  echo "convert $o the split:"
  printf '  %-10s %-9s' input layout
  for c in "${cols[@]}"; do c=${c/host deb/2.40 deb}; printf ' | %-8s' "${c/sid deb/2.47 deb}"; done
  echo
  for n in "${inputs[@]}"; do
    for k in $(layouts $n); do
      [ -n "${result[$o $n $k host deb]:-}" ] || continue
      printf '  %-10s %-9s' $n $k
      for c in "${cols[@]}"; do
        r=${result[$o $n $k $c]}
        [ "$r" = " ok" ] && printf ' | %-8s' ok || printf ' | %-8s' FAIL
      done
      echo
    done
  done
done
for key in "${!result[@]}"; do
  case $key in
    before*) [ "${result[$key]}" = " ok" ] || echo "not counted: $key:${result[$key]}" ;;
    *) [ "${result[$key]}" = " ok" ] || echo "FAIL: $key:${result[$key]}" ;;
  esac
done | sort
echo "debug_split: $cells cells, $good good, $((cells - good)) failed ($((SECONDS - start))s)"
[ $good = $cells ]
