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
# Then the same with Fedora's mini debuginfo (_include_minidebuginfo:
# find-debuginfo -m adds .gnu_debugdata before the eh2sframe step): the
# embedded file gets .sframe, gdb with no debug file names main without
# a warning. Skipped without rpmbuild.
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

# Fedora's mini debuginfo: the same spec with _include_minidebuginfo
# (find-debuginfo -m, Fedora's default) puts .gnu_debugdata into the
# program before the eh2sframe step, which brings its embedded file in
# line with the converted program. gdb with neither the -debuginfo
# package nor any other debug file names main (in .symtab only, so in
# the mini debuginfo only) and warns about nothing.
if [ ${#debuginfo[@]} = 0 ]; then
  M=$T/mini
  mkdir -p "$M/SOURCES"
  cp contrib/debian/example/hello.c "$M/SOURCES/"
  rpmbuild -bb --nodeps --load "$PWD/contrib/rpm/macros.eh2sframe" \
    --define "_topdir $M" --define "_eh2sframe $E2S" \
    --define "_smp_build_ncpus 2" --define "_include_minidebuginfo 1" \
    contrib/rpm/hello.spec >"$M/build.log" 2>&1
  rc=$?
  mrpm=$(find "$M/RPMS" -name 'eh2sframe-hello-1.0-1.*.rpm' 2>/dev/null | head -1)
  if [ $rc = 0 ] && [ -n "$mrpm" ]; then
    ok
    grep -q 'eh2sframe: debug files: 1 updated$' "$M/build.log" && ok ||
      fail "mini: debug file not updated: $(grep 'eh2sframe:' "$M/build.log")"
    mkdir "$M/x" && rpm2archive - <"$mrpm" | tar -xz -C "$M/x"
    mp=$M/x/usr/bin/eh2sframe-hello
    readelf -SW "$mp" | grep -q ' \.gnu_debugdata ' && ok ||
      fail "mini: find-debuginfo -m added no .gnu_debugdata"
    [ "$("$mp")" = "hello from a package, depth 3" ] && ok || fail "mini: program does not run"
    v=$("$E2S" --verify "$mp" 2>&1) && ok || fail "mini: verify: $v"
    objcopy --dump-section .gnu_debugdata="$M/mini.xz" "$mp" "$M/dump.tmp" &&
      xz -dc "$M/mini.xz" > "$M/mini" && ok || fail "mini: no readable .gnu_debugdata"
    LC_ALL=C readelf -SW "$M/mini" 2>/dev/null | grep -q ' \.sframe  *NOBITS ' && ok ||
      fail "mini: the embedded file has no .sframe section header"
    g=$(DEBUGINFOD_URLS= gdb -batch -nx -iex 'set debug-file-directory /nonexistent' \
          -ex 'info functions ^main$' "$mp" 2>&1)
    echo "$g" | grep -qiE 'warning|gnu_debugdata' &&
      fail "mini: gdb warns: $(echo "$g" | grep -iE 'warning|gnu_debugdata' | head -1)" || ok
    echo "$g" | grep -qE '0x[0-9a-f]+ +main$' && ok || fail "mini: gdb does not name main: $g"
    echo "mini debuginfo: $(grep 'eh2sframe: debug files' "$M/build.log")"
  else
    tail -20 "$M/build.log"; fail "mini: rpmbuild with _include_minidebuginfo (exit $rc)"
  fi
fi
echo "eco_rpm: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
