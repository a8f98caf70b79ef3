#!/usr/bin/env bash
# Separate debug files of converted files (issue 23). A staging tree is
# split the way dh_strip does it (objcopy --only-keep-debug, strip,
# --add-gnu-debuglink; debug files under usr/lib/debug/.build-id) and one
# program the way find-debuginfo does (eu-strip -f, named after the
# program under usr/lib/debug, no build-id link yet); then
# `eh2sframe --in-place -r` converts the tree. Checked:
#   - the summary counts the debug files updated, a static library as an
#     archive;
#   - each debug file now has the converted file's program headers (same
#     count, same e_phoff), a SHT_NOBITS .sframe, the moved notes at their
#     new addresses with __abi_tag following; the .gnu_debuglink CRC is
#     the debug file's; gdb loads it without a warning; eu-unstrip
#     recombines the pair and the recombined program runs;
#   - dwz in multifile mode takes the updated debug files (gdb and
#     eu-unstrip after it);
#   - a second run changes no byte and says "already matching";
#   - a debug file of another build at the build-id path: the run fails,
#     naming both files, and leaves that file alone; a build-id link that
#     leads out of the tree is not followed;
#   - a file with a .gnu_debuglink and no debug file: "not found", -v
#     names it; --debug-file for one file; usage errors; --verify on a
#     file without .sframe says so.
set -u
cd "$(dirname "$0")/../.."
E2S=$PWD/eh2sframe
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
for c in gdb eu-unstrip eu-strip objcopy; do
  command -v $c >/dev/null || { echo "SKIP: needs $c"; exit 77; }
done
T=$(mktemp -d /tmp/debug_files.XXXXXX)
[ -n "${KEEP:-}" ] && echo "keeping $T" || trap 'rm -rf "$T"' EXIT
nfail=0 nok=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { nok=$((nok + 1)); }

cat > "$T/main.c" <<'C'
#include <stdio.h>
int plug_add(int x);
static int __attribute__((noinline)) depth(int n)
{
	return n ? 1 + depth(n - 1) : plug_add(0);
}
int main(int argc, char **argv)
{
	(void)argv;
	printf("depth %d\n", depth(argc + 2));
	return 0;
}
C
echo 'int __attribute__((noinline)) plug_add(int x) { return x + 42; }' > "$T/plug.c"
gcc -O1 -g -shared -fPIC -o "$T/libplug.so" "$T/plug.c"
gcc -O1 -g -o "$T/prog" "$T/main.c" -L"$T" -lplug -Wl,-rpath,'$ORIGIN/../lib'
gcc -O1 -g -o "$T/other" "$T/main.c" "$T/plug.c"
want=$(LD_LIBRARY_PATH=$T "$T/prog")

bid() { readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: //p'; }
# dh_split ROOT FILE: as dh_strip does it.
dh_split() {
  local id dbg
  id=$(bid "$2")
  dbg=$1/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
  mkdir -p "${dbg%/*}"
  objcopy --only-keep-debug --compress-debug-sections "$2" "$dbg" && chmod 644 "$dbg"
  strip --remove-section=.comment --remove-section=.note ${3:+--strip-unneeded} "$2"
  objcopy --add-gnu-debuglink "$dbg" "$2"
}
crc_ok() { python3 tests/e2e/lib/debuglink_ok.py "$1" "$2" >/dev/null; } # FILE DEBUG
hdr() { readelf -hW "$1" 2>/dev/null | sed -n 's/.*\(Start of program headers\|Number of program headers\): *//p' | tr '\n' ' '; }

R=$T/root
mkdir -p "$R/usr/bin" "$R/usr/lib" "$R/usr/libexec"
cp "$T/prog" "$R/usr/bin/prog"; cp "$T/libplug.so" "$R/usr/lib/libplug.so"
dh_split "$R" "$R/usr/bin/prog"
dh_split "$R" "$R/usr/lib/libplug.so" lib
# find-debuginfo style: debug file named after the program, no link.
cp "$T/other" "$R/usr/libexec/other"
mkdir -p "$R/usr/lib/debug/usr/libexec"
eu-strip --remove-comment -g -f "$R/usr/lib/debug/usr/libexec/other-1.0.debug" "$R/usr/libexec/other"
# A stripped program with a debug link and no debug file.
gcc -O2 -g -o "$R/usr/bin/lonely" "$T/main.c" "$T/plug.c"
objcopy --only-keep-debug "$R/usr/bin/lonely" "$T/lonely.debug"
strip "$R/usr/bin/lonely"; objcopy --add-gnu-debuglink "$T/lonely.debug" "$R/usr/bin/lonely"
ar rcs "$R/usr/lib/libplug.a" "$T/plug.c"
id_p=$(bid "$R/usr/bin/prog") id_l=$(bid "$R/usr/lib/libplug.so")
D_P=$R/usr/lib/debug/.build-id/${id_p:0:2}/${id_p:2}.debug
D_L=$R/usr/lib/debug/.build-id/${id_l:0:2}/${id_l:2}.debug
D_O=$R/usr/lib/debug/usr/libexec/other-1.0.debug

"$E2S" --in-place -r -v "$R" 2>"$T/err"; rc=$?
[ $rc = 0 ] && ok || fail "tree: exit $rc: $(cat "$T/err")"
grep -q '^eh2sframe: 5 files: 4 patched, 2 no CFI, 1 archives, 0 failed' "$T/err" ||
  grep -q '^eh2sframe: [0-9]* files: 4 patched, .*1 archives, .*0 failed' "$T/err" && ok ||
  fail "files summary: $(grep 'files:' "$T/err")"
grep -q '^eh2sframe: debug files: 3 updated, 1 not found' "$T/err" && ok || fail "debug summary: $(grep 'debug files:' "$T/err")"
grep -q "^$R/usr/bin/lonely: warning: no debug file with build ID" "$T/err" && ok || fail "-v does not name the file without a debug file"
grep -q "libplug.a: skipped: static library" "$T/err" && ok || fail "-v archive reason"
for pair in "usr/bin/prog:$D_P" "usr/lib/libplug.so:$D_L" "usr/libexec/other:$D_O"; do
  f=$R/${pair%%:*} d=${pair#*:} n=${pair%%:*}
  [ "$(hdr "$f")" = "$(hdr "$d")" ] && ok || fail "$n: program header table: $(hdr "$f") / $(hdr "$d")"
  LC_ALL=C readelf -SW "$d" 2>/dev/null | grep -q ' \.sframe  *NOBITS ' && ok || fail "$n: no .sframe in the debug file"
  crc_ok "$f" "$d" && ok || fail "$n: .gnu_debuglink CRC"
  # Every allocated section at the file's address.
  a=$(LC_ALL=C readelf -SW "$f" | awk '$0 ~ /^ *\[/ && $0 ~ / A/ {sub(/^ *\[ *[0-9]*\] */, ""); print $1, $3, $5}' | sort)
  b=$(LC_ALL=C readelf -SW "$d" 2>/dev/null | awk '$0 ~ /^ *\[/ && $0 ~ / A/ {sub(/^ *\[ *[0-9]*\] */, ""); print $1, $3, $5}' | sort)
  [ -n "$a" ] && [ "$(comm -23 <(echo "$a") <(echo "$b"))" = "" ] && ok || fail "$n: sections differ: $(comm -23 <(echo "$a") <(echo "$b") | head -3)"
  w=$(eu-unstrip -o "$T/un" "$f" "$d" 2>&1) && ok || fail "$n: eu-unstrip: $w"
  w=$(LC_ALL=C readelf -lSW "$T/un" 2>&1 >/dev/null)
  [ -z "$w" ] && ok || fail "$n: readelf on the recombined file: $w"
done
# __abi_tag follows .note.ABI-tag (moved when the table grew in place).
tag=$(LC_ALL=C readelf -SW "$R/usr/bin/prog" | sed -n 's/.*\.note\.ABI-tag *NOTE *0*\([0-9a-f]*\) .*/\1/p')
sym=$(LC_ALL=C readelf -sW "$D_P" 2>/dev/null | awk '$8 == "__abi_tag" {print $2}' | sed 's/^0*//')
[ -n "$tag" ] && [ "$sym" = "$tag" ] && ok || fail "__abi_tag at $sym, .note.ABI-tag at $tag"
[ "$(LD_LIBRARY_PATH= "$R/usr/bin/prog")" = "$want" ] && ok || fail "converted program does not run"
g=$(gdb -batch -nx -iex "set debug-file-directory $R/usr/lib/debug" -iex 'set breakpoint pending on' \
      -ex 'break plug_add' -ex run -ex bt "$R/usr/bin/prog" 2>&1)
echo "$g" | grep -q -i 'warning' && fail "gdb: $(echo "$g" | grep -i -m1 warning)" || ok
echo "$g" | grep -q '#2 .* depth' && ok || fail "gdb backtrace: $g"
# rpmbuild adds the build-id link when it packages the files.
id_o=$(bid "$R/usr/libexec/other")
mkdir -p "$R/usr/lib/debug/.build-id/${id_o:0:2}"
ln -s ../../usr/libexec/other-1.0.debug "$R/usr/lib/debug/.build-id/${id_o:0:2}/${id_o:2}.debug"
g=$(gdb -batch -nx -iex "set debug-file-directory $R/usr/lib/debug" -ex 'info line depth' "$R/usr/libexec/other" 2>&1)
echo "$g" | grep -q -i 'warning' && fail "gdb (find-debuginfo style): $g" || ok
echo "$g" | grep -q 'Line [0-9]* of ".*main.c"' && ok || fail "gdb (find-debuginfo style): no line: $g"

# ---- dwz (multifile, as find-debuginfo runs it) takes updated files:
# two programs split as find-debuginfo does (uncompressed), converted.
if command -v dwz >/dev/null; then
  RD=$T/rootd
  mkdir -p "$RD/usr/bin" "$RD/usr/lib/debug/usr/bin"
  for n in prog other; do
    cp "$T/$n" "$RD/usr/bin/$n"
    eu-strip --remove-comment -g -f "$RD/usr/lib/debug/usr/bin/$n.debug" "$RD/usr/bin/$n"
  done
  "$E2S" --in-place -r -q "$RD" 2>"$T/err" && ok || fail "dwz tree: $(cat "$T/err")"
  (cd "$RD/usr/lib/debug" && mkdir -p .dwz && dwz -q -h -r -m .dwz/multi usr/bin/prog.debug usr/bin/other.debug) &&
    readelf -SW "$RD/usr/lib/debug/usr/bin/prog.debug" 2>/dev/null | grep -q gnu_debugaltlink && ok ||
    fail "dwz on the updated debug files"
  id=$(bid "$RD/usr/bin/prog")
  mkdir -p "$RD/usr/lib/debug/.build-id/${id:0:2}"
  ln -s ../../usr/bin/prog.debug "$RD/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
  g=$(LD_LIBRARY_PATH=$T gdb -batch -nx -iex "set debug-file-directory $RD/usr/lib/debug" \
        -ex 'info line depth' -ex 'info scope depth' "$RD/usr/bin/prog" 2>&1)
  echo "$g" | grep -q -i 'warning' && fail "gdb after dwz: $g" || ok
  echo "$g" | grep -q 'Line [0-9]* of ".*main.c"' && ok || fail "gdb after dwz: no line: $g"
  w=$(eu-unstrip -o "$T/un" "$RD/usr/bin/prog" "$RD/usr/lib/debug/usr/bin/prog.debug" 2>&1) && ok ||
    fail "eu-unstrip after dwz: $w"
fi

# ---- a second run changes nothing
sum1=$(cd "$R" && find . -type f -exec sha256sum {} + | sort)
"$E2S" --in-place -r "$R" 2>"$T/err"; rc=$?
sum2=$(cd "$R" && find . -type f -exec sha256sum {} + | sort)
[ $rc = 0 ] && [ "$sum1" = "$sum2" ] && ok || fail "second run: exit $rc or files changed"
grep -q '^eh2sframe: debug files: 0 updated, 3 already matching, 1 not found' "$T/err" && ok ||
  fail "second run: $(grep 'debug files' "$T/err")"

# ---- a debug file of another build at the build-id path: refused
R2=$T/root2
mkdir -p "$R2/usr/bin"; cp "$T/prog" "$R2/usr/bin/prog"; dh_split "$R2" "$R2/usr/bin/prog"
d2=$R2/usr/lib/debug/.build-id/${id_p:0:2}/${id_p:2}.debug
objcopy --only-keep-debug "$T/other" "$d2"
s_before=$(sha256sum < "$d2")
"$E2S" --in-place -r "$R2" 2>"$T/err"; rc=$?
[ $rc = 1 ] && ok || fail "mismatching debug file: exit $rc"
grep -q "^eh2sframe: $R2/usr/bin/prog: debug file $d2 not updated: build IDs differ: not its debug file$" "$T/err" &&
  ok || fail "mismatch message: $(cat "$T/err")"
grep -q 'debug files: 0 updated, 1 failed' "$T/err" && ok || fail "mismatch summary: $(grep 'debug files' "$T/err")"
[ "$(sha256sum < "$d2")" = "$s_before" ] && ok || fail "mismatching debug file was changed"

# ---- a build-id link leading out of the tree is not followed
R3=$T/root3
mkdir -p "$R3/usr/bin" "$T/outside"; cp "$T/prog" "$R3/usr/bin/prog"; dh_split "$T/outside" "$R3/usr/bin/prog"
mkdir -p "$R3/usr/lib/debug/.build-id/${id_p:0:2}"
out=$T/outside/usr/lib/debug/.build-id/${id_p:0:2}/${id_p:2}.debug
ln -s "../../../../../../outside/usr/lib/debug/.build-id/${id_p:0:2}/${id_p:2}.debug" \
  "$R3/usr/lib/debug/.build-id/${id_p:0:2}/${id_p:2}.debug"
[ -f "$R3/usr/lib/debug/.build-id/${id_p:0:2}/${id_p:2}.debug" ] || fail "test setup: link does not resolve"
s_before=$(sha256sum < "$out")
"$E2S" --in-place -r "$R3" 2>"$T/err"
grep -q 'debug files: 0 updated, 1 not found' "$T/err" && ok || fail "link out of the tree: $(cat "$T/err")"
[ "$(sha256sum < "$out")" = "$s_before" ] && ok || fail "a debug file outside the tree was rewritten"
# ... but --debug-root names that tree, and the file converted already
# gets its debug file updated there.
"$E2S" --in-place -r --debug-root="$T/outside" "$R3" 2>"$T/err"
grep -q 'debug files: 1 updated' "$T/err" && ok || fail "--debug-root: $(cat "$T/err")"

# ---- one file: --debug-file; usage errors
mkdir -p "$T/one"; cp "$T/other" "$T/one/p"
objcopy --only-keep-debug "$T/one/p" "$T/one/p.debug"; strip "$T/one/p"
objcopy --add-gnu-debuglink "$T/one/p.debug" "$T/one/p"
"$E2S" --in-place --debug-file="$T/one/p.debug" "$T/one/p" 2>"$T/err" && ok || fail "--debug-file: $(cat "$T/err")"
grep -q "p: debug file $T/one/p.debug updated: the file's program headers, 1 section header added" "$T/err" &&
  ok || fail "--debug-file message: $(cat "$T/err")"
crc_ok "$T/one/p" "$T/one/p.debug" && ok || fail "--debug-file: CRC"
"$E2S" --in-place -v --debug-file="$T/one/p.debug" "$T/one/p" 2>"$T/err"
grep -q 'already matches' "$T/err" && ok || fail "--debug-file again: $(cat "$T/err")"
"$E2S" --debug-file="$T/one/p.debug" "$T/one/p" -o "$T/one/q" 2>/dev/null; [ $? = 2 ] && ok || fail "--debug-file with -o accepted"
"$E2S" --in-place -r --debug-file="$T/one/p.debug" "$T/one" 2>/dev/null; [ $? = 2 ] && ok || fail "--debug-file with -r accepted"
"$E2S" --verify "$T/other" >/dev/null 2>"$T/err"; rc=$?
[ $rc = 1 ] && [ "$(cat "$T/err")" = "eh2sframe: $T/other: no .sframe section" ] && ok || fail "--verify without .sframe: $(cat "$T/err")"

echo "debug_files: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
