#!/usr/bin/env bash
# contrib/debian: build the example package (contrib/debian/example, dh with
# an override_dh_strip calling contrib/debian/dh_sframe) with
# dpkg-buildpackage -us -uc -b, unpack the .deb and check that its
# program carries a valid .sframe (--verify against its own .eh_frame,
# readelf sees the section and PT_GNU_SFRAME) and still runs. Skipped
# without dpkg-buildpackage or debhelper.
set -u
cd "$(dirname "$0")/../.."
E2S=$PWD/eh2sframe
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
  { echo "SKIP: needs dpkg-dev and debhelper"; exit 77; }
T=$(mktemp -d /tmp/eco_debian.XXXXXX)
trap 'rm -rf "$T"' EXIT
nfail=0 nok=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { nok=$((nok + 1)); }
cp -r contrib/debian/example "$T/eh2sframe-hello-1.0"
DH=$PWD/contrib/debian/dh_sframe
( cd "$T/eh2sframe-hello-1.0" &&
  EH2SFRAME=$E2S DH_SFRAME="$DH" DH_VERBOSE=1 \
  DEB_BUILD_OPTIONS="parallel=2" dpkg-buildpackage -us -uc -b ) >"$T/build.log" 2>&1
rc=$?
deb=$(ls "$T"/eh2sframe-hello_1.0_*.deb 2>/dev/null | head -1)
if [ $rc != 0 ] || [ -z "$deb" ]; then
  tail -30 "$T/build.log"; echo "FAIL: dpkg-buildpackage (exit $rc)"; exit 1
fi
ok
grep -q 'eh2sframe --in-place -r' "$T/build.log" && ok || fail "dh_sframe did not run"
grep 'eh2sframe: [0-9]* files: 1 patched,' "$T/build.log" | grep -q ', 0 failed' && ok || fail "summary: $(grep 'files:' "$T/build.log")"
dpkg-deb -x "$deb" "$T/x"
p=$T/x/usr/bin/eh2sframe-hello
[ -x "$p" ] && ok || fail "no program in the .deb"
readelf -SW "$p" | grep -q ' \.sframe ' && ok || fail "no .sframe section"
readelf -lW "$p" | grep -q 'GNU_SFRAME' && ok || fail "no PT_GNU_SFRAME"
readelf -SW "$p" | grep -q ' \.debug_info ' && fail "not stripped (dh_strip ran after?)" || ok
v=$("$E2S" --verify "$p") && ok || fail "verify: $v"
echo "verify: $v"
fdes=$(readelf --debug-dump=frames "$p" | grep -c ' FDE cie=')
echo "$v" | grep -q "^functions=$fdes match=$fdes mismatch=0" && ok || fail "not every FDE matches ($fdes FDEs)"
[ "$("$p")" = "hello from a package, depth 3" ] && ok || fail "program does not run"
dbg=$(ls "$T"/eh2sframe-hello-dbgsym_1.0_*.*deb 2>/dev/null | head -1)
[ -n "$dbg" ] && echo "debug package: $(basename "$dbg") (left alone)"
echo "eco_debian: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
