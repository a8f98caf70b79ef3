#!/usr/bin/env bash
# strip / eu-strip / objcopy on converted files: the result must keep
# .sframe and PT_GNU_SFRAME (inside a PT_LOAD), run like the original and
# pass --verify. Tools: binutils and elfutils of this system, and those of
# the sid oracle chroot when it exists (newer versions).
#
# Asserted: every tool on non-PIE and static programs (table right after
# the ELF header: layout 1 of src/elfpatch/elfp_layout.c) natively and
# under qemu-user; every tool on PIE and static-pie programs (layout 2)
# natively; eu-strip on them also under qemu-user (libelf keeps the table
# at e_phoff, covered by .eh2sframe.phdrs, so the old-loader tie holds);
# dl_iterate_phdr finds the mapped .sframe of a stripped PIE and of a
# stripped shared object. Printed, not failed (KNOWN-BROKEN): a
# binutils-stripped PIE / static-pie under qemu-user (binutils moves the
# table right after the data segment's file bytes; the address tied to
# that offset lies inside the data segment, so no layout can keep the tie
# qemu's loader needs), and eu-strip run on a binutils-stripped PIE
# (binutils leaves its table uncovered by any section and libelf zeroes
# it).
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
# tool ENV TOOL... IN OUT: run a strip tool of ENV on IN, writing OUT.
tool() {
  local e=$1; shift
  local n=$# in=${@: -2:1} out=${@: -1}
  local t=("${@:1:n-2}")
  local args=("$in" -o "$out")
  [ "${t[0]}" = objcopy ] && args=("$in" "$out")
  rm -f "$out"
  if [ "$e" = host ]; then "${t[@]}" "${args[@]}" 2>/dev/null
  else tools/in-oracle.sh "${t[@]}" "${args[@]}" 2>/dev/null; fi
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
      o=$T/o
      tool $e $t "$p.sf" "$o"; trc=$?
      cells=$((cells + 1))
      res=
      [ $trc = 0 ] || res="$res tool exit $trc;"
      got=$("$o" b a 2>/dev/null); grc=$?
      [ "$got" = "$want" ] && [ $grc = $wrc ] || res="$res runs differently (exit $grc);"
      # Old-loader tie and qemu-user: kept by every tool in layout 1, by
      # eu-strip in layout 2.
      tie=notie
      [ $kind = exec ] || [ "${t%% *}" = eu-strip ] && tie=
      check_layout "$o" $tie >/dev/null || res="$res layout lost;"
      "$E2S" --verify "$o" >/dev/null 2>&1 || res="$res --verify fails;"
      if [ -z "$tie" ]; then
        q=$(qemu-x86_64 "$o" b a 2>/dev/null); qrc=$?
        [ "$q" = "$want" ] && [ $qrc = $wrc ] || res="$res differs under qemu (exit $qrc);"
      fi
      name="hello${v:-(pie)} [$t @$e]"
      if [ -z "$res" ]; then good=$((good + 1)); else fail "$name:$res"; fi
    done
    # qemu-user on a binutils-stripped PIE: known to fail (see above).
    if [ $kind = dyn ]; then
      o=$T/o
      tool $e strip "$p.sf" "$o"
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

# binutils strip, then eu-strip (see above).
strip "$T/hello.sf" -o "$T/o1" 2>/dev/null && eu-strip "$T/o1" -o "$T/o2" 2>/dev/null
( "$T/o2" b a ) >/dev/null 2>&1 && check_layout "$T/o2" notie >/dev/null ||
  broken+=("hello(pie) [strip, then eu-strip @host]: table zeroed")

# dl_iterate_phdr in a stripped PIE finds the mapped .sframe of itself and
# of a stripped, dlopen'ed shared object, equal to the file's bytes.
gcc -O2 -o "$T/sc" corpus/elfpatch/selfcheck.c -ldl &&
  gcc -O2 -shared -fPIC -o "$T/libplug.so" corpus/elfpatch/libplug.c &&
  "$E2S" -q "$T/sc" -o "$T/sc.sf" && "$E2S" -q "$T/libplug.so" -o "$T/libplug.sf" ||
  fail "selfcheck build"
for e in $envs; do
  for t in "strip" "eu-strip" "strip --strip-unneeded" "eu-strip --strip-debug"; do
    tool $e $t "$T/sc.sf" "$T/sc.st" && tool $e $t "$T/libplug.sf" "$T/plug.so" ||
      { fail "selfcheck [$t @$e]: tool failed"; continue; }
    out=$("$T/sc.st" "$T/plug.so"); rc=$?
    cells=$((cells + 1))
    echo "$out" | grep -q '^main: PT_GNU_SFRAME matches the file$' &&
      echo "$out" | grep -q '^plug.so: PT_GNU_SFRAME matches the file$' &&
      echo "$out" | grep -q '^plug_add(40) = 42$' && [ $rc = 0 ] &&
      check_layout "$T/plug.so" notie >/dev/null &&
      "$E2S" --verify "$T/plug.so" >/dev/null 2>&1 &&
      good=$((good + 1)) || { fail "selfcheck [$t @$e]"; echo "$out"; }
  done
done
echo "strip cells: $cells, good: $good, known broken: ${#broken[@]}"
[ ${#broken[@]} = 0 ] || printf '  KNOWN-BROKEN %s\n' "${broken[@]}"
echo "failures: $fails"
[ $fails = 0 ]
