#!/usr/bin/env bash
# strip / eu-strip / objcopy --only-keep-debug on converted files: the
# result must keep .sframe and PT_GNU_SFRAME and run like the original.
# Known broken (printed, not failed; see the report): binutils 2.40 strip on
# dynamically linked programs and elfutils 0.188 eu-strip on everything
# mishandle a program header table that is not right after the ELF header
# (the same problem patchelf hit: NixOS/patchelf#10, #117).
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/elfpatch_lib.sh
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
T=$(mktemp -d /tmp/elfpatch_strip.XXXXXX)
trap 'rm -rf "$T"' EXIT
ok=0 broken=()
for v in -static -static-pie "" -no-pie; do
  p=$T/hello$v
  gcc -O2 -g $v -o "$p" corpus/elfpatch/hello.c
  "$E2S" -q "$p" -o "$p.sf" || { fail "convert $p"; continue; }
  want=$("$p" b a); wrc=$?
  for t in "strip" "strip --strip-debug" "eu-strip" "eu-strip --strip-debug"; do
    rm -f "$T/o"
    $t "$p.sf" -o "$T/o" 2>/dev/null
    got=$("$T/o" b a 2>/dev/null); grc=$?
    res=good
    check_layout "$T/o" >/dev/null || res="layout lost"
    [ "$got" = "$want" ] && [ $grc = $wrc ] || res="$res, run differs (exit $grc)"
    if [ "$res" = good ]; then ok=$((ok + 1))
    elif [ "$v" = -static ] || [ "$v" = -static-pie ] && [ "${t%% *}" = strip ]; then
      fail "hello$v [$t]: $res"
    else broken+=("hello${v:-(pie)} [$t]: $res"); fi
  done
  # The separate debug file keeps the section header and the segment.
  objcopy --only-keep-debug "$p.sf" "$T/dbg"
  LC_ALL=C readelf -SW "$T/dbg" | grep -q ' \.sframe ' &&
    LC_ALL=C readelf -lW "$T/dbg" | grep -q -e GNU_SFRAME -e 'LOOS+0x474e554' &&
    ok=$((ok + 1)) || fail "hello$v --only-keep-debug"
done
echo "strip results good: $ok; known broken: ${#broken[@]}"
printf '  KNOWN-BROKEN %s\n' "${broken[@]}"
echo "failures: $fails"
[ $fails = 0 ]
