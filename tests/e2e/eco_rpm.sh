#!/usr/bin/env bash
# contrib/rpm: build contrib/rpm/hello.spec with rpmbuild (Debian's rpm
# package), loading contrib/rpm/macros.eh2sframe; the program in the
# binary RPM (unpacked with rpm2archive) must carry an .sframe section that
# verifies against every FDE of its .eh_frame, and run. Skipped without
# rpmbuild.
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
rpmbuild -bb --nodeps --load "$PWD/contrib/rpm/macros.eh2sframe" \
  --define "_topdir $T" --define "_eh2sframe $E2S" \
  --define "_smp_build_ncpus 2" --define "debug_package %{nil}" contrib/rpm/hello.spec >"$T/build.log" 2>&1
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
echo "eco_rpm: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
