#!/usr/bin/env bash
# The ABI of libeh2sframe.so against the baseline in the tree
# (abi/libeh2sframe.abi, abidw's description of the types reachable from
# include/eh2sframe.h and the exported symbols). Any difference fails,
# compatible or not: an intentional change runs `make abi-update` and
# commits the new baseline with the change (README, "Embedding the
# library"). Then two checks that the comparison sees what matters: a
# field inserted into a public struct, and a function removed, each in a
# stub library built from a changed copy of the header, are reported
# (abidiff exit status: bit 4 an ABI change, 8 an incompatible one; 1
# and 2 are abidiff's own errors).
# abidiff ignores the libraries the file needs (DT_NEEDED), so they are
# compared here: the <elf-needed> list abidw wrote into the baseline
# against readelf -d of the built library. A library added or dropped
# fails like an interface change (`make abi-update` records it); the
# same comparison must tell a stub from the stub linked with -lm.
set -u
cd "$(dirname "$0")/../.."
# The file the build links (not a stale one of an older soname).
SO=$(readlink -f build/libeh2sframe.so 2>/dev/null)
[ -f "$SO" ] || SO=
[ -n "$SO" ] || { echo "no build/libeh2sframe.so.*; run make all"; exit 77; }
command -v abidiff >/dev/null && command -v abidw >/dev/null ||
  { echo "FAIL: abidiff/abidw missing (Debian package abigail-tools; make deps installs it)"; exit 1; }
T=$(mktemp -d /tmp/lib_abi.XXXXXX)
trap 'rm -rf "$T"' EXIT
nfail=0 nok=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { nok=$((nok + 1)); }
# shellcheck disable=SC2207
FLAGS=($(make --no-print-directory -s abidw-flags))
BASE=abi/libeh2sframe.abi

# ---- the built library against the baseline
[ -f "$BASE" ] && ok || fail "no baseline $BASE (make abi-update)"
abidw "${FLAGS[@]}" --out-file "$T/now.abi" "$SO" && ok || fail "abidw $SO"
abidiff --no-show-locs "$BASE" "$T/now.abi" >"$T/diff" 2>&1; rc=$?
if [ $rc = 0 ]; then
  ok
  echo "ABI of $SO: as in $BASE"
else
  cat "$T/diff"
  fail "the ABI of $SO differs from $BASE (abidiff exit $rc). If the change" \
       "is intended, run 'make abi-update' and commit $BASE with it."
fi
# The baseline names the soname the Makefile builds.
soname=$(readelf -d "$SO" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
grep -q "soname='$soname'" "$BASE" && ok || fail "baseline is not for $soname"

# ---- the needed libraries against the baseline's <elf-needed>
abi_needed() { # abixml: its <elf-needed> names, sorted
  sed -n "/<elf-needed>/,/<\/elf-needed>/s/.*<dependency name='\([^']*\)'.*/\1/p" "$1" | sort
}
so_needed() { # ELF file: its DT_NEEDED names, sorted
  readelf -dW "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' | sort
}
# needed_diff ABIXML SO: prints "+ name" for a library the file needs and
# the baseline lacks, "- name" for one the baseline lists and the file no
# longer needs; exit status 1 when any.
needed_diff() {
  abi_needed "$1" >"$T/need.base"; so_needed "$2" >"$T/need.now"
  comm -13 "$T/need.base" "$T/need.now" | sed 's/^/+ /' >"$T/need.diff"
  comm -23 "$T/need.base" "$T/need.now" | sed 's/^/- /' >>"$T/need.diff"
  cat "$T/need.diff"
  [ ! -s "$T/need.diff" ]
}
# The list is read from abidw's output: the library's own description
# must give readelf's list back, and libc is always in it.
words() { tr '\n' ' ' <"$1" | sed 's/ $//'; }
abi_needed "$T/now.abi" >"$T/n1"; so_needed "$SO" >"$T/n2"
grep -qx 'libc.so.6' "$T/n2" && cmp -s "$T/n1" "$T/n2" && ok ||
  fail "<elf-needed> of abidw's output ($(words "$T/n1")) is not readelf's DT_NEEDED ($(words "$T/n2"))"
if needed_diff "$BASE" "$SO" >"$T/nd"; then
  ok
  echo "needed libraries of $SO: as in $BASE ($(words "$T/need.now"))"
else
  sed 's/^/  /' "$T/nd"
  fail "the needed libraries (DT_NEEDED) of $SO differ from $BASE" \
       "('+' new, '-' dropped). If the change is intended, run 'make abi-update'" \
       "and commit $BASE with it."
fi

# ---- the comparison sees a layout change and a removed function
cat > "$T/stub.c" <<'C'
#include <eh2sframe.h>
eh2s_status eh2s_convert(eh2s_file *f, const eh2s_convert_opts *o,
			 eh2s_error *err)
{
	(void)f; (void)err;
	return o && o->share_fres ? EH2S_OK : EH2S_E_USAGE;
}
#ifndef DROP
eh2s_status eh2s_get_summary(const eh2s_file *f, eh2s_summary *out,
			     eh2s_error *err)
{
	(void)f; (void)err;
	return out->converted ? EH2S_OK : EH2S_E_USAGE;
}
#endif
C
mkdir -p "$T/a" "$T/b"
cp include/eh2sframe.h "$T/a/"
# A field before share_fres: every later field of eh2s_convert_opts moves.
sed 's/^\tint share_fres; /\tint inserted;\n&/' include/eh2sframe.h > "$T/b/eh2sframe.h"
grep -q 'int inserted;' "$T/b/eh2sframe.h" && ok || fail "could not change the header copy"
build_stub() { # dir out [cflags]
  gcc -g -shared -fPIC -I"$1" ${3:-} -o "$2" "$T/stub.c" -Wl,-soname,"$soname" &&
    abidw "${FLAGS[@]/include/$1}" --out-file "$2.abi" "$2"
}
build_stub "$T/a" "$T/a.so" && build_stub "$T/b" "$T/b.so" &&
  build_stub "$T/a" "$T/c.so" -DDROP && ok || fail "stub libraries"
abidiff --no-show-locs "$T/a.so.abi" "$T/a.so.abi" >/dev/null 2>&1 && ok || fail "a stub differs from itself"
abidiff --no-show-locs "$T/a.so.abi" "$T/b.so.abi" >"$T/d1" 2>&1; rc=$?
changed() { [ $(($1 & 12)) != 0 ] && [ $(($1 & 3)) = 0 ]; }
changed $rc && grep -q "'int share_fres' offset changed" "$T/d1" && ok ||
  { cat "$T/d1"; fail "a field inserted into eh2s_convert_opts not reported (exit $rc)"; }
abidiff --no-show-locs "$T/a.so.abi" "$T/c.so.abi" >"$T/d2" 2>&1; rc=$?
changed $rc && grep -q "eh2s_get_summary" "$T/d2" && ok ||
  { cat "$T/d2"; fail "a removed function not reported (exit $rc)"; }
# A needed library added to the stub (only it: the stub calls nothing,
# so with --as-needed it needs no libc), then that stub's baseline read
# against a library without it: one '+', then one '-'.
gcc -g -shared -fPIC -I"$T/a" -o "$T/m.so" "$T/stub.c" -Wl,-soname,"$soname" \
  -Wl,--no-as-needed -lm -Wl,--as-needed && so_needed "$T/m.so" | grep -qx 'libm.so.[0-9]*' && ok ||
  fail "a stub linked with -lm"
needed_diff "$T/a.so.abi" "$T/a.so" >/dev/null && ok || fail "a stub's needed libraries differ from its own"
abidw "${FLAGS[@]/include/$T/a}" --out-file "$T/m.so.abi" "$T/m.so" && ok || fail "abidw of the -lm stub"
libm=$(so_needed "$T/m.so" | grep -x 'libm.so.[0-9]*')
needed_diff "$T/a.so.abi" "$T/m.so" >"$T/nd"; rc=$?
[ $rc = 1 ] && [ "$(cat "$T/nd")" = "+ $libm" ] && ok ||
  { cat "$T/nd"; fail "a new needed library not reported (exit $rc)"; }
needed_diff "$T/m.so.abi" "$T/a.so" >"$T/nd"; rc=$?
[ $rc = 1 ] && [ "$(cat "$T/nd")" = "- $libm" ] && ok ||
  { cat "$T/nd"; fail "a dropped needed library not reported (exit $rc)"; }

echo "lib_abi: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
