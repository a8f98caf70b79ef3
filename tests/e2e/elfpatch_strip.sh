#!/usr/bin/env bash
# strip / eu-strip / objcopy on converted files: the result must keep
# .sframe and PT_GNU_SFRAME (inside a PT_LOAD), run like the original and
# pass --verify. Tools: binutils and elfutils of this system, and those of
# the sid oracle chroot when it exists (newer versions).
#
# Cells that are asserted: every tool on non-PIE and static programs (their
# program header table sits right after the ELF header: layout 1 of
# src/elfpatch/elfp_layout.c), binutils strip on PIE and static-pie
# programs (layout 2, natively). Printed, not failed (KNOWN-BROKEN):
# eu-strip on PIE / static-pie (libelf zero-fills the gap holding the
# table; nothing but a table at the file start survives it), and a
# binutils-stripped PIE under qemu-user (strip gives up the table's tie to
# e_phoff, which qemu's loader needs).
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib/elfpatch_lib.sh
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
T=$(mktemp -d /tmp/elfpatch_strip.XXXXXX)
trap 'rm -rf "$T"' EXIT
envs=host
if tools/in-oracle.sh true 2>/dev/null &&
   tools/in-oracle.sh sh -c 'command -v eu-strip && command -v strip' >/dev/null 2>&1; then
  envs="host sid"; export IN_ORACLE_BIND=$T
fi
version() {
  if [ "$1" = host ]; then "$2" --version; else tools/in-oracle.sh "$2" --version; fi 2>/dev/null | head -1
}
for e in $envs; do echo "$e: $(version $e strip) / $(version $e eu-strip)"; done
good=0 broken=() cells=0
for v in -static -no-pie -static-pie ""; do
  p=$T/hello$v
  gcc -O2 -g $v -o "$p" corpus/elfpatch/hello.c
  "$E2S" -q "$p" -o "$p.sf" || { fail "convert $p"; continue; }
  want=$("$p" b a); wrc=$?
  case $v in -static|-no-pie) kind=exec ;; *) kind=dyn ;; esac
  for e in $envs; do
    for t in "strip" "strip --strip-debug" "eu-strip" "eu-strip --strip-debug" "objcopy"; do
      o=$T/o; rm -f "$o"
      if [ "$t" = objcopy ]; then args=("$p.sf" "$o"); else args=("$p.sf" -o "$o"); fi
      if [ $e = host ]; then $t "${args[@]}" 2>/dev/null; else tools/in-oracle.sh $t "${args[@]}" 2>/dev/null; fi
      trc=$?
      cells=$((cells + 1))
      res=
      [ $trc = 0 ] || res="$res tool exit $trc;"
      got=$("$o" b a 2>/dev/null); grc=$?
      [ "$got" = "$want" ] && [ $grc = $wrc ] || res="$res runs differently (exit $grc);"
      if [ $kind = exec ]; then check_layout "$o" >/dev/null || res="$res layout lost;"
      else check_layout "$o" notie >/dev/null || res="$res layout lost;"; fi
      "$E2S" --verify "$o" >/dev/null 2>&1 || res="$res --verify fails;"
      if [ $kind = exec ]; then
        q=$(qemu-x86_64 "$o" b a 2>/dev/null); qrc=$?
        [ "$q" = "$want" ] && [ $qrc = $wrc ] || res="$res differs under qemu (exit $qrc);"
      fi
      name="hello${v:-(pie)} [$t @$e]"
      if [ -z "$res" ]; then good=$((good + 1))
      elif [ $kind = exec ] || [ "${t%% *}" != eu-strip ]; then fail "$name:$res"
      else broken+=("$name:$res"); fi
    done
    # qemu-user on a binutils-stripped PIE: known to fail (see above).
    if [ $kind = dyn ]; then
      o=$T/o; rm -f "$o"
      if [ $e = host ]; then strip "$p.sf" -o "$o"; else tools/in-oracle.sh strip "$p.sf" -o "$o"; fi
      q=$(qemu-x86_64 "$o" b a 2>/dev/null); qrc=$?
      [ "$q" = "$want" ] && [ $qrc = $wrc ] ||
        broken+=("hello${v:-(pie)} [strip @$e] under qemu-x86_64: exit $qrc")
    fi
  done
  # The separate debug file keeps the section header and the segment.
  objcopy --only-keep-debug "$p.sf" "$T/dbg" 2>/dev/null
  LC_ALL=C readelf -SW "$T/dbg" | grep -q ' \.sframe ' &&
    LC_ALL=C readelf -lW "$T/dbg" | grep -q -e GNU_SFRAME -e 'LOOS+0x474e554' &&
    good=$((good + 1)) || fail "hello$v --only-keep-debug"
  cells=$((cells + 1))
done
echo "strip cells: $cells, good: $good, known broken: ${#broken[@]}"
[ ${#broken[@]} = 0 ] || printf '  KNOWN-BROKEN %s\n' "${broken[@]}"
echo "failures: $fails"
[ $fails = 0 ]
