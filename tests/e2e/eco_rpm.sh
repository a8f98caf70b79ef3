#!/usr/bin/env bash
# contrib/rpm: build contrib/rpm/hello.spec with rpmbuild (Debian's rpm
# package), loading contrib/rpm/macros.eh2sframe; the program in the
# binary RPM (unpacked with rpm2archive) must carry an .sframe section that
# verifies against every FDE of its .eh_frame, and run. With find-debuginfo
# (Debian package debugedit, which rpm depends on) the spec's -debuginfo
# subpackage is built too: find-debuginfo cuts the debug file off the
# unconverted program (debugedit, eu-strip -f), the eh2sframe step in
# %__os_install_post converts the stripped program and updates that debug
# file (found by the name in .gnu_debuglink: rpmbuild adds the build-id
# links later, when it packages). Both RPMs unpacked into one root: gdb
# finds the debug file through the build-id link and loads it without a
# warning, eu-unstrip recombines the pair, the .gnu_debuglink CRC matches.
# Skipped without rpmbuild.
set -u
cd "$(dirname "$0")/../.."
E2S=$PWD/eh2sframe
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
command -v rpmbuild >/dev/null && command -v rpm2archive >/dev/null ||
  { echo "SKIP: needs rpmbuild and rpm2archive (Debian package rpm)"; exit 77; }
T=$(mktemp -d /tmp/eco_rpm.XXXXXX)
trap 'rm -rf "$T"' EXIT
nfail=0 nok=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { nok=$((nok + 1)); }
mkdir -p "$T/SOURCES"
cp contrib/debian/example/hello.c "$T/SOURCES/"
# Debian's rpm has no distribution macros: its __os_install_post is
# rpm's generic one (brp-compress, brp-strip...). --nodeps: no rpm database.
debuginfo=()
command -v find-debuginfo >/dev/null && command -v eu-strip >/dev/null ||
  { debuginfo=(--define "debug_package %{nil}"); echo "note: no find-debuginfo: no -debuginfo package"; }
rpmbuild -bb --nodeps --load "$PWD/contrib/rpm/macros.eh2sframe" \
  --define "_topdir $T" --define "_eh2sframe $E2S" \
  --define "_smp_build_ncpus 2" "${debuginfo[@]}" contrib/rpm/hello.spec >"$T/build.log" 2>&1
rc=$?
rpm=$(find "$T/RPMS" -name 'eh2sframe-hello-1.0-1.*.rpm' 2>/dev/null | head -1)
if [ $rc != 0 ] || [ -z "$rpm" ]; then
  tail -30 "$T/build.log"; echo "FAIL: rpmbuild (exit $rc)"; exit 1
fi
ok
grep 'eh2sframe: [0-9]* files: 1 patched,' "$T/build.log" | grep -q ', 0 failed' && ok ||
  fail "no eh2sframe summary in the build log"
mkdir "$T/x" && rpm2archive - <"$rpm" | tar -xz -C "$T/x"
p=$T/x/usr/bin/eh2sframe-hello
[ -x "$p" ] && ok || fail "no program in the rpm"
readelf -SW "$p" | grep -q ' \.sframe ' && ok || fail "no .sframe"
readelf -lW "$p" | grep -q GNU_SFRAME && ok || fail "no PT_GNU_SFRAME"
v=$("$E2S" --verify "$p") || fail "verify: $v"
n=$(readelf --debug-dump=frames "$p" | grep -c ' FDE cie=')
echo "verify: $v (readelf FDEs $n)"
echo "$v" | grep -q "^functions=$n match=$n mismatch=0" && ok || fail "not every FDE matches"
[ "$("$p")" = "hello from a package, depth 3" ] && ok || fail "program does not run"

# The -debuginfo package.
drpm=$(find "$T/RPMS" -name 'eh2sframe-hello-debuginfo-1.0-1.*.rpm' 2>/dev/null | head -1)
if [ ${#debuginfo[@]} = 0 ]; then
  grep -q 'eh2sframe: debug files: 1 updated$' "$T/build.log" && ok || fail "debug file not updated: $(grep 'eh2sframe:' "$T/build.log")"
  [ -n "$drpm" ] && rpm2archive - <"$drpm" | tar -xz -C "$T/x" && ok || fail "no -debuginfo rpm"
  id=$(readelf -n "$p" | sed -n 's/.*Build ID: //p')
  d=$T/x/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
  if [ -n "$id" ] && [ -e "$d" ]; then
    ok
    LC_ALL=C readelf -SW "$d" 2>/dev/null | grep -q ' \.sframe  *NOBITS ' &&
      LC_ALL=C readelf -lW "$d" 2>/dev/null | grep -q GNU_SFRAME && ok || fail "debug file lacks .sframe or PT_GNU_SFRAME"
    python3 tests/e2e/lib/debuglink_ok.py "$p" "$d" >/dev/null && ok || fail ".gnu_debuglink CRC is not the debug file's"
    g=$(gdb -batch -nx -iex "set debug-file-directory $T/x/usr/lib/debug" -ex 'info line main' \
          -ex 'info scope depth' "$p" 2>&1)
    echo "$g" | grep -q -i warning && fail "gdb: $g" || ok
    echo "$g" | grep -q 'Line [0-9]* of "[^"]*hello.c" .*<main' && ok || fail "gdb found no line info: $g"
    w=$(eu-unstrip -o "$T/un" "$p" "$d" 2>&1) && ok || fail "eu-unstrip: $w"
    w=$(LC_ALL=C readelf -lSW "$T/un" 2>&1 >/dev/null)
    [ -z "$w" ] && ok || fail "readelf on the recombined file: $w"
    chmod +x "$T/un"
    [ "$("$T/un")" = "hello from a package, depth 3" ] && ok || fail "the recombined program does not run"
  else
    fail "no debug file for build ID $id in the -debuginfo rpm"
  fi
fi
echo "eco_rpm: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
