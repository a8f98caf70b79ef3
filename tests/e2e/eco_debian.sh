#!/usr/bin/env bash
# contrib/debian with the toy package contrib/debian/example (two binary
# packages; debian/control build-depends on dh-sequence-sframe): the
# in-tree addon is put on PERL5LIB and dh_sframe on PATH (the packaged
# addon, installed, is what `make check-distro` tests on a real Debian
# package), dpkg-buildpackage -us -uc -b -d (-d: dh-sequence-sframe is
# not an installed package here). Checked: dh_sframe runs after dh_strip
# and before dh_makeshlibs/dh_shlibdeps, prints one summary line per
# package, the programs in both .debs verify against every FDE, carry
# PT_GNU_SFRAME and run; `dh_sframe -N` leaves a package alone;
# DEB_BUILD_OPTIONS=nosframe leaves all alone; the POD man page is clean.
# The dbgsym packages: dh_sframe updated the debug file dh_strip cut off
# (summary "debug files: 1 updated"): same build ID, a .sframe section
# header and PT_GNU_SFRAME, the program's .gnu_debuglink CRC, gdb loads
# it without a warning, eu-unstrip recombines the pair into a file that
# readelf reads without a complaint and that runs.
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
mkdir "$T/bin"
ln -s "$PWD/contrib/debian/dh_sframe" "$T/bin/dh_sframe"
export PATH=$T/bin:$PATH PERL5LIB=$PWD/contrib/debian${PERL5LIB:+:$PERL5LIB} EH2SFRAME=$E2S

podchecker contrib/debian/dh_sframe >/dev/null 2>&1 && ok || fail "podchecker dh_sframe"
pod2man --section=1 --center=Debhelper contrib/debian/dh_sframe > "$T/dh_sframe.1" &&
  w=$(groff -ww -z -man "$T/dh_sframe.1" 2>&1) && [ -z "$w" ] && ok || fail "man page: $w"
grep -q 'nosframe' "$T/dh_sframe.1" && ok || fail "man page lacks nosframe"

build() { # name DEB_BUILD_OPTIONS DH_SFRAME_ARGS
  rm -rf "$T/$1"; mkdir "$T/$1"
  cp -r contrib/debian/example "$T/$1/eh2sframe-hello-1.0"
  ( cd "$T/$1/eh2sframe-hello-1.0" && DH_VERBOSE=1 DEB_BUILD_OPTIONS="$2" DH_SFRAME_ARGS="$3" \
    dpkg-buildpackage -us -uc -b -d ) >"$T/$1.log" 2>&1 || { tail -30 "$T/$1.log"; fail "$1: dpkg-buildpackage"; return 1; }
  for p in eh2sframe-hello eh2sframe-hello-extra; do
    dpkg-deb -x "$(ls "$T/$1/${p}_1.0_"*.deb)" "$T/$1/x"
  done
}
has_sframe() { readelf -SW "$1" | grep -q ' \.sframe '; }

# ---- default: both packages converted
if build all "parallel=2" ""; then
  ok
  # Sequence order: dh_strip, dh_sframe, dh_makeshlibs, dh_shlibdeps.
  order=$(grep -o -E '^\s*(dh_strip|dh_sframe|dh_makeshlibs|dh_shlibdeps)( |$)' "$T/all.log" | tr -d ' \t' | uniq | tr '\n' ' ')
  [ "$order" = "dh_strip dh_sframe dh_makeshlibs dh_shlibdeps " ] && ok || fail "sequence order: $order"
  for p in eh2sframe-hello eh2sframe-hello-extra; do
    grep -q "dh_sframe: $p: [0-9]* files: 1 patched, .*0 failed; debug files: 1 updated; functions: [1-9][0-9]* converted, 0 skipped" "$T/all.log" &&
      ok || fail "summary for $p: $(grep 'dh_sframe: ' "$T/all.log")"
  done
  grep -q -- "--in-place -j 2 --files-from" "$T/all.log" && ok || fail "parallel=2 not passed"
  for prog in eh2sframe-hello eh2sframe-hello-extra; do
    f=$T/all/x/usr/bin/$prog
    has_sframe "$f" && readelf -lW "$f" | grep -q GNU_SFRAME && ok || fail "$prog: no .sframe/PT_GNU_SFRAME"
    readelf -SW "$f" | grep -q ' \.debug_info ' && fail "$prog: not stripped" || ok
    n=$(readelf --debug-dump=frames "$f" | grep -c ' FDE cie=')
    v=$("$E2S" --verify "$f") && echo "$v" | grep -q "^functions=$n match=$n mismatch=0" && ok ||
      fail "$prog: verify: $v ($n FDEs)"
    [ "$("$f")" = "hello from a package, depth 3" ] && ok || fail "$prog does not run"
  done
  echo "verify: $v"
  # dbgsym: the debug file named by the program's build ID matches it.
  for p in eh2sframe-hello eh2sframe-hello-extra; do
    dbg=$(ls "$T"/all/$p-dbgsym_1.0_*.*deb 2>/dev/null | head -1)
    [ -n "$dbg" ] || { fail "no dbgsym package for $p"; continue; }
    rm -rf "$T/all/dbg"; dpkg-deb -x "$dbg" "$T/all/dbg"
    f=$T/all/x/usr/bin/$p
    id=$(readelf -n "$f" | sed -n 's/.*Build ID: //p')
    d=$T/all/dbg/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
    [ -n "$id" ] && [ -f "$d" ] && [ "$(readelf -n "$d" 2>/dev/null | sed -n 's/.*Build ID: //p')" = "$id" ] &&
      ok || { fail "$p: dbgsym does not match build ID $id"; continue; }
    LC_ALL=C readelf -SW "$d" 2>/dev/null | grep -q ' \.sframe  *NOBITS ' &&
      LC_ALL=C readelf -lW "$d" 2>/dev/null | grep -q GNU_SFRAME &&
      ok || fail "$p: debug file lacks .sframe or PT_GNU_SFRAME"
    python3 tests/e2e/lib/debuglink_ok.py "$f" "$d" >/dev/null && ok || fail "$p: .gnu_debuglink CRC is not the debug file's"
    g=$(gdb -batch -nx -iex "set debug-file-directory $T/all/dbg/usr/lib/debug" -ex 'info line hello.c:11' "$f" 2>&1)
    echo "$g" | grep -q -i warning && fail "$p: gdb: $g" || ok
    echo "$g" | grep -q 'Line 11 of "[./]*hello.c" .*address 0x[0-9a-f]* <main' && ok || fail "$p: gdb found no line info: $g"
    w=$(eu-unstrip -o "$T/all/un" "$f" "$d" 2>&1) && ok || fail "$p: eu-unstrip: $w"
    w=$(LC_ALL=C readelf -lSW "$T/all/un" 2>&1 >/dev/null)
    [ -z "$w" ] && ok || fail "$p: readelf on the recombined file: $w"
    chmod +x "$T/all/un"
    [ "$("$T/all/un")" = "hello from a package, depth 3" ] && ok || fail "$p: the recombined program does not run"
  done
fi

# ---- -N: the extra package is left alone
if build minus "" "-Neh2sframe-hello-extra"; then
  has_sframe "$T/minus/x/usr/bin/eh2sframe-hello" && ok || fail "-N: main package not converted"
  has_sframe "$T/minus/x/usr/bin/eh2sframe-hello-extra" && fail "-N: excluded package converted" || ok
  grep -q 'dh_sframe: eh2sframe-hello-extra' "$T/minus.log" && fail "-N: summary for excluded package" || ok
fi

# ---- nosframe: nothing converted
if build off "nosframe" ""; then
  has_sframe "$T/off/x/usr/bin/eh2sframe-hello" && fail "nosframe: converted anyway" || ok
  grep -q 'dh_sframe: eh2sframe-hello:' "$T/off.log" && fail "nosframe: summary printed" || ok
fi

# ---- a failing conversion fails the build
if ( cd "$T/all/eh2sframe-hello-1.0" && EH2SFRAME=/bin/false dh_sframe -peh2sframe-hello ) >"$T/false.log" 2>&1; then
  fail "dh_sframe with a failing converter succeeded"
else
  grep -q 'dh_sframe: error: /bin/false failed on files of eh2sframe-hello' "$T/false.log" && ok ||
    fail "failure message: $(cat "$T/false.log")"
fi
echo "eco_debian: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
