#!/usr/bin/env bash
# A real Debian package rebuilt with the sframe debhelper addon
# (make check-distro; needs root and the Debian archive, deb-src included:
# `tools/install-deps.sh --distro` sets that up).
#
# 1. eh2sframe itself is packaged from contrib/debian/package (binary
#    packages eh2sframe and dh-sframe, which Provides dh-sequence-sframe)
#    and installed with apt-get (removed again at the end unless it was
#    installed before).
# 2. The lz4 source package (`apt-get source lz4`: liblz4-1, liblz4-dev,
#    lz4; a C library, its programs and a test suite) gets
#    dh-sequence-sframe added to Build-Depends and is built with
#    dpkg-buildpackage -us -uc -b; dpkg-checkbuilddeps must accept it.
#    DEB_BUILD_OPTIONS=nocheck: lz4's build-time tests exercise the build
#    tree's unconverted programs (and take over 10 minutes with their
#    6 GB files); their test suite is run below against the converted,
#    installed programs instead.
# 3. Checked: dh_sframe ran after dh_strip and before dh_makeshlibs and
#    dh_shlibdeps, with a summary line per package; every ELF file of
#    every .deb has .sframe and PT_GNU_SFRAME, passes eh2sframe --verify
#    (functions = readelf's FDE count, no mismatch) and
#    contrib/kernel/sframe_kcheck; the .debs unpacked with dpkg -x: lz4
#    (lz4, lz4cat, unlz4) runs and passes lz4's own tests
#    (test-lz4-essentials, -opt-parser, -sparse, -skippable) with the
#    converted liblz4.so.1; lz4's example programs are compiled against
#    the unpacked liblz4-dev and run with the converted library; every
#    converted file's build ID names a debug file in the -dbgsym packages
#    with the same build ID and the same .text address and size.
# 4. Debug files (issue 23): dh_sframe's summary says it updated them;
#    each -dbgsym debug file has the converted file's .sframe section
#    header (SHT_NOBITS) and PT_GNU_SFRAME, the CRC in the file's
#    .gnu_debuglink, and eu-unstrip recombines the pair into a file that
#    readelf reads without a complaint (the recombined lz4 and liblz4 run).
#    With the -dbgsym packages unpacked into a scratch root, gdb (batch,
#    `set debug-file-directory` there) runs lz4 and an example program
#    linked with liblz4.so.1 to a breakpoint in the library code: no
#    warning, and the backtrace, `info line` and `list` output equals
#    that of the unstripped, unconverted programs of the build tree.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
E2S=$ROOT/eh2sframe
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (apt-get)"; exit 77; }
command -v dpkg-buildpackage >/dev/null || { echo "SKIP: needs dpkg-dev"; exit 77; }
T=$(mktemp -d /tmp/distro_lz4.XXXXXX)
installed_before=
for p in eh2sframe dh-sframe; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' && installed_before="$installed_before $p"
done
cleanup() {
  if [ -z "$installed_before" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq dh-sframe eh2sframe >/dev/null 2>&1
  fi
  rm -rf "$T"
}
trap cleanup EXIT
nfail=0 nok=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { nok=$((nok + 1)); }
start=$SECONDS
tick() { echo "[$((SECONDS - start))s] $*"; }
export DEBIAN_FRONTEND=noninteractive

# ---- 1. package and install eh2sframe + dh-sframe
# The version is the header's; the packaging's changelog must say the same.
ver() { sed -n "s/^#define EH2S_VERSION_$1 \([0-9]*\)$/\1/p" include/eh2sframe.h; }
V=$(ver MAJOR).$(ver MINOR).$(ver PATCH)
cv=$(dpkg-parsechangelog -l contrib/debian/package/debian/changelog -S Version)
[ "$cv" = "$V" ] && ok || fail "contrib/debian/package/debian/changelog says $cv, include/eh2sframe.h $V"
S=$T/pkg/eh2sframe-$V
mkdir -p "$S"
cp -r Makefile include src doc contrib eh2sframe.pc.in README.md "$S/"
cp -r contrib/debian/package/debian "$S/debian"
( cd "$S" && DEB_BUILD_OPTIONS=parallel=2 nice dpkg-buildpackage -us -uc -b ) >"$T/pkg.log" 2>&1 ||
  { tail -30 "$T/pkg.log"; echo "FAIL: building the eh2sframe packages"; exit 1; }
tick "eh2sframe packages built"
apt-get install -y -qq "$T/pkg/eh2sframe_${V}_"*.deb "$T/pkg/dh-sframe_${V}_all.deb" >"$T/inst.log" 2>&1 ||
  { cat "$T/inst.log"; echo "FAIL: installing eh2sframe and dh-sframe"; exit 1; }
ok
dpkg-query -W -f='${Provides}' dh-sframe | grep -q dh-sequence-sframe && ok || fail "dh-sframe does not provide dh-sequence-sframe"
[ -f /usr/share/perl5/Debian/Debhelper/Sequence/sframe.pm ] && command -v dh_sframe >/dev/null && ok || fail "addon files not installed"
man -w dh_sframe >/dev/null 2>&1 && ok || fail "no dh_sframe man page"

# ---- 2. lz4 from the archive, with the addon
mkdir "$T/src"
( cd "$T/src" && apt-get source -qq lz4 ) >"$T/src.log" 2>&1 ||
  { cat "$T/src.log"; echo "FAIL: apt-get source lz4 (deb-src configured? tools/install-deps.sh --distro)"; exit 1; }
L=$(ls -d "$T"/src/lz4-*/ | head -1); L=${L%/}
VER=$(cd "$L" && dpkg-parsechangelog -S Version)
tick "lz4 $VER unpacked"
sed -i 's/^Build-Depends: */Build-Depends: dh-sequence-sframe, /' "$L/debian/control"
grep -q '^Build-Depends: dh-sequence-sframe, debhelper' "$L/debian/control" && ok || fail "control not edited"
(cd "$L" && dpkg-checkbuilddeps) >"$T/deps.log" 2>&1 && ok || fail "build dependencies: $(cat "$T/deps.log")"
( cd "$L" && DEB_BUILD_OPTIONS="nocheck parallel=2" nice dpkg-buildpackage -us -uc -b ) >"$T/build.log" 2>&1 ||
  { tail -40 "$T/build.log"; echo "FAIL: dpkg-buildpackage lz4"; exit 1; }
ok
tick "lz4 built"
order=$(grep -o -E '^\s*(dh_dwz|dh_strip|dh_sframe|dh_makeshlibs|dh_shlibdeps)( |$)' "$T/build.log" | tr -d ' \t' | uniq | tr '\n' ' ')
[ "$order" = "dh_dwz dh_strip dh_sframe dh_makeshlibs dh_shlibdeps " ] && ok || fail "sequence order: $order"
grep 'dh_sframe: ' "$T/build.log" | sed 's/^\s*/  /'
for p in liblz4-1 lz4; do
  grep -q "dh_sframe: $p: [0-9]* files: [1-9][0-9]* patched, .*0 failed; debug files: [1-9][0-9]* updated; functions: [1-9][0-9]* converted" "$T/build.log" &&
    ok || fail "no summary line for $p"
done
grep -q "dh_sframe: liblz4-dev: .* 1 archives, .*0 failed" "$T/build.log" && ok || fail "liblz4.a not counted as an archive"
# The unconverted, unstripped files of the build tree: the reference for
# gdb (the test suite below replaces programs/lz4).
mkdir -p "$T/ref/lib"
cp "$L/programs/lz4" "$T/ref/lz4"
cp "$(find "$L/lib" -name 'liblz4.so.1.*' -type f | head -1)" "$T/ref/lib/liblz4.so.1"

# ---- 3. every ELF file of every .deb
KCHECK=$T/sframe_kcheck
gcc -std=c11 -O2 -o "$KCHECK" contrib/kernel/sframe_kcheck.c || fail "building sframe_kcheck"
R=$T/root D=$T/dbg
mkdir -p "$R" "$D"
nelf=0 nfn=0 nconv=0 ndbg=0
for deb in "$T"/src/*.deb "$T"/src/*.ddeb; do
  [ -e "$deb" ] || continue
  case $deb in
    *-dbgsym_*) dpkg-deb -x "$deb" "$D"; continue ;;
  esac
  echo "  $(basename "$deb")"
  dpkg-deb -x "$deb" "$T/one"
  dpkg-deb -x "$deb" "$R"
  while IFS= read -r f; do
    head -c 4 "$f" | grep -q $'^\x7fELF' || continue
    nelf=$((nelf + 1))
    rel=${f#"$T/one"}
    readelf -SW "$f" | grep -q ' \.sframe ' && ok || { fail "$rel: no .sframe"; continue; }
    readelf -lW "$f" | grep -q GNU_SFRAME && ok || fail "$rel: no PT_GNU_SFRAME"
    n=$(readelf --debug-dump=frames "$f" 2>/dev/null | grep -c ' FDE cie=')
    v=$("$E2S" --verify "$f" 2>&1) && echo "$v" | grep -q "^functions=$n match=[0-9]* mismatch=0 missing=0" &&
      ok || fail "$rel: verify: $v (readelf FDEs $n)"
    k=$("$KCHECK" "$f" 2>&1) && ok || fail "$rel: kcheck: $k"
    m=$(echo "$v" | sed -n 's/.* match=\([0-9]*\).*/\1/p')
    nfn=$((nfn + n)); nconv=$((nconv + ${m:-0}))
    echo "    $rel: $v"
    # dbgsym: the debug file named by the build ID matches.
    id=$(readelf -n "$f" 2>/dev/null | sed -n 's/.*Build ID: //p')
    dbgf=$D/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
    if [ -n "$id" ] && [ -f "$dbgf" ] &&
       [ "$(readelf -n "$dbgf" 2>/dev/null | sed -n 's/.*Build ID: //p')" = "$id" ]; then
      a=$(readelf -SW "$f" | awk '$2 == ".text" {print $4, $6}')
      b=$(readelf -SW "$dbgf" 2>/dev/null | awk '$2 == ".text" {print $4, $6}')
      [ -n "$a" ] && [ "$a" = "$b" ] && ok || fail "$rel: .text differs from the debug file ($a / $b)"
      # The debug file describes the converted file.
      LC_ALL=C readelf -SW "$dbgf" 2>/dev/null | grep -q ' \.sframe  *NOBITS ' &&
        LC_ALL=C readelf -lW "$dbgf" 2>/dev/null | grep -q GNU_SFRAME && ok ||
        fail "$rel: its debug file lacks .sframe or PT_GNU_SFRAME"
      python3 tests/e2e/lib/debuglink_ok.py "$f" "$dbgf" >/dev/null && ok || fail "$rel: .gnu_debuglink CRC is not its debug file's"
      un=$T/un/${rel##*/}; mkdir -p "$T/un"
      w=$(eu-unstrip -o "$un" "$f" "$dbgf" 2>&1) && ok || fail "$rel: eu-unstrip: $w"
      w=$(LC_ALL=C readelf -lSW "$un" 2>&1 >/dev/null)
      [ -z "$w" ] && ok || fail "$rel: readelf on the recombined file: $w"
      ndbg=$((ndbg + 1))
    else
      fail "$rel: no debug file for build ID $id"
    fi
  done < <(find "$T/one" -type f | sort)
  rm -rf "$T/one"
done
echo "ELF files: $nelf, functions (FDEs): $nfn, matching in .sframe: $nconv; debug files paired: $ndbg"
[ "$nelf" -ge 2 ] && ok || fail "only $nelf ELF files"
tick "packages verified"

# ---- 4. run the converted programs with the converted library
LIBDIR=$(dirname "$(find "$R" -name 'liblz4.so.1*' -type f | head -1)")
export LD_LIBRARY_PATH=$LIBDIR
LZ4=$R/usr/bin/lz4
# Debian's lz4 program carries its own copy of the library code; when
# it does link liblz4.so.1, it must get the unpacked, converted one.
if readelf -d "$LZ4" | grep -q 'NEEDED.*liblz4\.so'; then
  ldd "$LZ4" | grep -q "liblz4.so.1 => $LIBDIR/" && ok || fail "lz4 does not use the unpacked liblz4: $(ldd "$LZ4" | grep lz4)"
else
  echo "  (lz4 is linked with its own copy of the library code; liblz4.so.1 is exercised by the examples)"
fi
"$LZ4" -V >/dev/null 2>&1 && ok || fail "lz4 -V"
"$LZ4" -q -9 "$E2S" "$T/x.lz4" && "$R/usr/bin/lz4cat" "$T/x.lz4" | cmp -s - "$E2S" &&
  "$R/usr/bin/unlz4" -q -f "$T/x.lz4" "$T/x" && cmp -s "$T/x" "$E2S" && ok || fail "lz4 round trip"
# lz4's own CLI tests, on the converted program: its programs/ entries
# are replaced by the unpacked, converted ones (newer than their objects,
# so the test Makefile does not rebuild them).
for p in lz4 lz4cat unlz4; do
  rm -f "$L/programs/$p"; cp "$R/usr/bin/lz4" "$L/programs/$p"; touch "$L/programs/$p"
done
cmp -s "$L/programs/lz4" "$LZ4" && ok || fail "programs/lz4 not replaced"
if nice make -C "$L/tests" LZ4="$LZ4" test-lz4-essentials test-lz4-opt-parser test-lz4-sparse test-lz4-skippable \
     >"$T/tests.log" 2>&1; then
  ok; echo "  lz4 test suite (essentials, opt-parser, sparse, skippable): passed"
else
  tail -20 "$T/tests.log"; fail "lz4 test suite"
fi
cmp -s "$L/programs/lz4" "$LZ4" && ok || fail "the test suite rebuilt programs/lz4"
tick "lz4 tests run"
# lz4's example programs, built against the unpacked liblz4-dev.
for ex in simple_buffer printVersion frameCompress; do
  gcc -O2 -I"$R/usr/include" -o "$T/$ex" "$L/examples/$ex.c" -L"$LIBDIR" -llz4 2>"$T/ex.err" ||
    { fail "$ex: $(head -3 "$T/ex.err")"; continue; }
  readelf -d "$T/$ex" | grep -q 'NEEDED.*liblz4.so.1' && ok || fail "$ex not linked to liblz4"
done
ldd "$T/simple_buffer" | grep -q "liblz4.so.1 => $LIBDIR/" && ok ||
  fail "examples do not use the unpacked liblz4: $(ldd "$T/simple_buffer" | grep lz4)"
out=$("$T/simple_buffer" 2>&1) && ok || fail "simple_buffer: $out"
"$T/printVersion" | grep -q "$(echo "$VER" | sed 's/-.*//')" && ok || fail "printVersion: $("$T/printVersion")"
cp "$E2S" "$T/fc.bin"
(cd "$T" && ./frameCompress fc.bin >"$T/fc.log" 2>&1) && cmp -s "$T/fc.bin" "$T/fc.bin.lz4.dec" 2>/dev/null && ok ||
  { ls "$T" | grep fc; fail "frameCompress: $(tail -3 "$T/fc.log")"; }
unset LD_LIBRARY_PATH
tick "lz4 examples run"

# ---- 5. debug files under gdb, against the unconverted build tree
# The recombined program and library run.
chmod +x "$T/un/lz4" 2>/dev/null
"$T/un/lz4" -V >/dev/null 2>&1 && ok || fail "the recombined lz4 does not run"
mkdir -p "$T/unlib" && cp "$T/un/$(basename "$(readlink -f "$LIBDIR/liblz4.so.1")")" "$T/unlib/liblz4.so.1" 2>/dev/null
out=$(LD_LIBRARY_PATH=$T/unlib "$T/simple_buffer" 2>&1) && ok || fail "simple_buffer with the recombined liblz4: $out"
cp "$E2S" "$T/gin"
# gdb_run DEBUGDIR LIBDIR PROG ARGS...: break in the library code, then
# backtrace, line and source; addresses and names of the run masked.
gdb_run() {
  local dd=$1 ld=$2 prog=$3; shift 3
  (cd "$L" && gdb -batch -nx -iex "set debug-file-directory $dd" -iex 'set auto-load no' \
     -iex 'set debuginfod enabled off' -ex 'set breakpoint pending on' \
     -ex "set environment LD_LIBRARY_PATH $ld" "$@" "$prog" 2>&1) |
    sed -e 's/0x[0-9a-f]*/ADDR/g' -e 's/process [0-9]*/process N/g' -e "s|$prog|PROG|g" -e "s|$T/|T/|g"
}
lz4_cmds=(-ex 'break LZ4F_compressUpdate' -ex "run -q -f -1 $T/gin $T/gout.lz4" -ex bt
          -ex 'info line LZ4F_compressUpdate' -ex 'list LZ4F_compressUpdate')
a=$(gdb_run "$D/usr/lib/debug" "$LIBDIR" "$R/usr/bin/lz4" "${lz4_cmds[@]}")
b=$(gdb_run /nonexistent "$T/ref/lib" "$T/ref/lz4" "${lz4_cmds[@]}")
echo "$a" | grep -q -i warning && fail "gdb lz4: $(echo "$a" | grep -i -m1 warning)" || ok
echo "$a" | grep -q '^#[2-9] .* in main ' && echo "$a" | grep -q 'Line [0-9]* of' && ok || fail "gdb lz4: no backtrace or line: $a"
[ "$a" = "$b" ] && ok || { fail "gdb lz4: differs from the unconverted build"; diff <(echo "$b") <(echo "$a") | head -10; }
lib_cmds=(-ex 'break LZ4_compress_default' -ex run -ex bt
          -ex 'info line LZ4_compress_default' -ex 'list LZ4_compress_default')
a=$(gdb_run "$D/usr/lib/debug" "$LIBDIR" "$T/simple_buffer" "${lib_cmds[@]}")
b=$(gdb_run /nonexistent "$T/ref/lib" "$T/simple_buffer" "${lib_cmds[@]}")
echo "$a" | grep -q -i warning && fail "gdb liblz4: $(echo "$a" | grep -i -m1 warning)" || ok
echo "$a" | grep -q '^#[1-9] .* in main ' && echo "$a" | grep -q 'Line [0-9]* of' && ok || fail "gdb liblz4: no backtrace or line: $a"
[ "$a" = "$b" ] && ok || { fail "gdb liblz4: differs from the unconverted build"; diff <(echo "$b") <(echo "$a") | head -10; }
echo "  gdb with the -dbgsym files: lz4 and liblz4.so.1 backtraces, lines and sources as in the unconverted build"
tick "debug files checked"
echo "rebuilt: lz4 $VER with dh-sframe; $nelf ELF files, $nfn functions verified"
echo "distro_lz4: $nok checks passed, $nfail failed ($((SECONDS - start))s)"
[ $nfail = 0 ]
