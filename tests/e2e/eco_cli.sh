#!/usr/bin/env bash
# CLI conventions and tree mode: --help/--version/usage errors (exit 2),
# error format, --in-place -r over a tree (hard links converted once and
# kept linked, symlinks not followed, non-ELF skipped, a broken ELF fails
# without stopping the others: exit 1), --files-from, -j 2 gives the same
# bytes as serial, --stats --json is valid JSON whose sizes match readelf;
# one hard-linked file --in-place warns that its other names keep the old
# file.
set -u
cd "$(dirname "$0")/../.."
E2S=$PWD/eh2sframe
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
T=$(mktemp -d /tmp/eco_cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
nfail=0 nok=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { nok=$((nok + 1)); }
expect_rc() { # want cmd...
  local want=$1; shift
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  [ $rc = "$want" ] && ok || fail "exit $rc (want $want): $* :: $(head -c 300 "$T/err")"
}

# ---- conventions
expect_rc 0 "$E2S" --help
grep -q -- '--files-from' "$T/out" && grep -q 'Exit status' "$T/out" && ok || fail "--help text"
expect_rc 0 "$E2S" --version
grep -q '^eh2sframe [0-9]' "$T/out" && ok || fail "--version text"
expect_rc 2 "$E2S"
expect_rc 2 "$E2S" --no-such-option
expect_rc 2 "$E2S" --sframe-version=7 /bin/ls -o "$T/x"
expect_rc 2 "$E2S" -r "$T"                     # -r needs --in-place
expect_rc 2 "$E2S" /bin/ls -o ''               # an empty OUT
[ -z "$(ls -A . | grep '\.e2s')" ] && ok || fail "an empty OUT left a temporary file"
expect_rc 2 "$E2S" --json /bin/ls              # --json needs --stats
expect_rc 2 "$E2S" --stats --dump /bin/ls
expect_rc 1 "$E2S" /nonexistent -o "$T/x"
grep -q '^eh2sframe: /nonexistent: ' "$T/err" && ok || fail "error format: $(cat "$T/err")"
# "--" ends the options: a file named -dash.
cp /bin/true "$T/-dash"
(cd "$T" && "$E2S" -q -o out.dash -- -dash) && [ -s "$T/out.dash" ] && ok || fail "-- handling"

# ---- tree
mk_tree() {
  rm -rf "$1"; mkdir -p "$1/bin" "$1/lib" "$1/doc"
  cp /bin/ls /bin/cat "$1/bin/"
  ln "$1/bin/ls" "$1/bin/ls-hard"
  ln -s ls "$1/bin/ls-sym"
  ln -s /bin/cp "$1/bin/cp-outside"        # must not be followed
  echo text > "$1/doc/README"
  gcc -O2 -c -o "$1/lib/obj.o" corpus/elfpatch/hello.c 2>/dev/null ||
    printf 'int f(int x){return x+1;}\n' | gcc -O2 -x c -c -o "$1/lib/obj.o" -
  head -c 3000 /bin/ls > "$1/lib/broken.so"   # ELF header, cut short
  cp /bin/ls "$1/bin/zz-last"
  objcopy --only-keep-debug /bin/cat "$1/lib/cat.debug"   # a separate debug file
}
mk_tree "$T/a"
cp_sum=$(sha256sum /bin/cp | cut -d' ' -f1)
dbg_sum=$(sha256sum < "$T/a/lib/cat.debug")
"$E2S" --in-place -r "$T/a" 2>"$T/err"; rc=$?
[ $rc = 1 ] && ok || fail "tree with a broken ELF: exit $rc"
grep -q "^eh2sframe: $T/a/lib/broken.so: " "$T/err" && ok || fail "broken file message: $(cat "$T/err")"
summary=$(grep '^eh2sframe: [0-9]* files:' "$T/err")
echo "summary: $summary"
echo "$summary" | grep -q '8 files: 3 patched' && ok || fail "summary counts: $summary"
# A loose object is a link input, left as it is like an archive's
# members (GNU ld before 2.45 cannot merge SFrame V3).
echo "$summary" | grep -q '1 relocatable objects (link inputs)' && ok || fail "object not counted: $summary"
readelf -S "$T/a/lib/obj.o" | grep -q '\.sframe' && fail "tree mode converted a relocatable object" || ok
echo "$summary" | grep -q '1 not ELF' && echo "$summary" | grep -q '1 no CFI' && echo "$summary" | grep -q '1 failed' &&
  echo "$summary" | grep -q '1 hard links' && ok || fail "summary categories: $summary"
# Every patched file verifies; the hard link is still one inode, patched.
for f in bin/ls bin/cat bin/zz-last; do
  v=$("$E2S" --verify "$T/a/$f") && ok || fail "verify $f: $v"
done
[ "$(stat -c %i "$T/a/bin/ls")" = "$(stat -c %i "$T/a/bin/ls-hard")" ] && ok || fail "hard link broken"
[ "$(stat -c %h "$T/a/bin/ls")" = 2 ] && ok || fail "link count"
readelf -S "$T/a/bin/ls-hard" | grep -q '\.sframe' && ok || fail "hard link not patched"
[ -L "$T/a/bin/ls-sym" ] && [ -L "$T/a/bin/cp-outside" ] && ok || fail "symlink replaced"
[ "$(sha256sum /bin/cp | cut -d' ' -f1)" = "$cp_sum" ] && ok || fail "followed a symlink"
grep -q 'text' "$T/a/doc/README" && ok || fail "text file touched"
# Functions line: equals the sum of per-file readelf FDE counts (all
# functions of these files are convertible).
want=0
for f in bin/ls bin/cat bin/zz-last; do
  n=$(readelf --debug-dump=frames "$T/a/$f" 2>/dev/null | grep -c ' FDE cie=')
  want=$((want + n))
done
grep -q "functions: $want converted" "$T/err" && ok || fail "functions line (want $want): $(grep functions: "$T/err")"
[ "$(sha256sum < "$T/a/lib/cat.debug")" = "$dbg_sum" ] && ok || fail "debug file changed"
# A second run changes nothing and succeeds apart from the broken file.
rm "$T/a/lib/broken.so"
sum1=$(cd "$T/a" && find . -type f -exec sha256sum {} + | sort)
expect_rc 0 "$E2S" --in-place -r -v "$T/a"
grep -q 'already has .sframe' "$T/err" && ok || fail "-v reason"
sum2=$(cd "$T/a" && find . -type f -exec sha256sum {} + | sort)
[ "$sum1" = "$sum2" ] && ok || fail "second run changed files"
# Not on a terminal: no progress line (no carriage return).
grep -q $'\r' "$T/err" && fail "progress line without a terminal" || ok

# -j 2 gives the same bytes as serial; --files-from - too.
mk_tree "$T/b"; mk_tree "$T/c"; mk_tree "$T/d"
rm -f "$T"/[bcd]/lib/broken.so
expect_rc 0 "$E2S" --in-place -r -q "$T/b"
expect_rc 0 "$E2S" --in-place -r -q -j 2 "$T/c"
(cd "$T/d" && find . -type f | "$E2S" --in-place --files-from - -q) && ok || fail "--files-from -"
s_b=$(cd "$T/b" && find . -type f -exec sha256sum {} + | sort)
s_c=$(cd "$T/c" && find . -type f -exec sha256sum {} + | sort)
s_d=$(cd "$T/d" && find . -type f -exec sha256sum {} + | sort)
[ "$s_b" = "$s_c" ] && ok || fail "-j 2 output differs from serial"
[ "$s_b" = "$s_d" ] && ok || fail "--files-from output differs from -r"
expect_rc 1 "$E2S" --in-place --files-from "$T/nonexistent-list"
# --objects converts a tree's relocatable objects; a kernel module (*.ko)
# is converted without it (loaded, not linked).
mk_tree "$T/o"; rm -f "$T/o/lib/broken.so"
cp "$T/o/lib/obj.o" "$T/o/lib/mod.ko"
expect_rc 0 "$E2S" --in-place -r -q "$T/o"
readelf -S "$T/o/lib/mod.ko" | grep -q '\.sframe' && ok || fail "a *.ko was not converted"
readelf -S "$T/o/lib/obj.o" | grep -q '\.sframe' && fail "obj.o converted without --objects" || ok
expect_rc 0 "$E2S" --in-place -r -q --objects "$T/o"
readelf -S "$T/o/lib/obj.o" | grep -q '\.sframe' && ok || fail "--objects did not convert obj.o"
"$E2S" --verify "$T/o/lib/obj.o" >/dev/null && ok || fail "--objects: obj.o does not verify"

# ---- --sframe-version: 3 explicitly; 2 where the build has it (tree mode
# passes it to the converter), else a usage error naming the option.
mkdir -p "$T/v"; cp /bin/cat "$T/v/cat3"; cp /bin/cat "$T/v/cat2"
expect_rc 0 "$E2S" --in-place -r -q --sframe-version=3 "$T/v/cat3"
"$E2S" --stats --json "$T/v/cat3" | grep -q '"version": 3' && ok || fail "--sframe-version=3"
"$E2S" --in-place -r -q --sframe-version=2 "$T/v/cat2" 2>"$T/err"; rc=$?
if [ $rc = 2 ]; then
  grep -q 'sframe-version=2 is not available' "$T/err" && ok || fail "V2 message: $(cat "$T/err")"
  echo "note: --sframe-version=2 not available in this build"
else
  [ $rc = 0 ] && "$E2S" --stats --json "$T/v/cat2" | grep -q '"version": 2' &&
    "$E2S" --verify "$T/v/cat2" >/dev/null && ok || fail "--sframe-version=2 (exit $rc)"
fi

# ---- --stats --json
expect_rc 0 "$E2S" --stats --json /bin/ls "$T/b/bin/cat" "$T/b/lib/obj.o"
python3 -m json.tool "$T/out" >/dev/null && ok || fail "--stats --json is not JSON"
python3 - "$T/out" /bin/ls "$T/b/bin/cat" <<'PY' && ok || fail "stats values"
import json, subprocess, sys
data = json.load(open(sys.argv[1]))
assert len(data) == 3
def secsize(path, name):
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 6 and f[1] == name:
            return int(f[5], 16)
    return 0
def fdes(path):
    out = subprocess.run(["readelf", "--debug-dump=frames", path], capture_output=True, text=True).stdout
    return sum(1 for l in out.splitlines() if " FDE cie=" in l)
for obj, path in zip(data, sys.argv[2:]):
    for sec in ("eh_frame", "eh_frame_hdr", "sframe"):
        assert obj["sections"][sec] == secsize(path, "." + sec), (path, sec, obj["sections"][sec])
    assert obj["functions"] == fdes(path), (path, obj["functions"])
    assert obj["converted"] + sum(obj["skipped"].values()) == obj["functions"]
    assert 0.0 <= obj["coverage"]["functions"] <= 1.0
assert data[0]["sframe"] is None
assert data[1]["sframe"]["version"] == 3 and data[1]["sframe"]["fdes"] >= data[1]["converted"]
assert data[2]["type"] == "relocatable"
print("stats: ls functions", data[0]["functions"], "fres", data[0]["fres"])
PY
expect_rc 1 "$E2S" --stats --json /etc/passwd
python3 -m json.tool "$T/out" >/dev/null && ok || fail "--stats --json on a failure is not JSON"

# ---- one file --in-place with hard links: converted, and a warning that
# the other names keep the old inode (tree mode relinks them); none with
# -q, none for a file of one name.
mkdir -p "$T/hl"
cp /bin/ls "$T/hl/a"; ln "$T/hl/a" "$T/hl/b"; ln "$T/hl/a" "$T/hl/c"
expect_rc 0 "$E2S" --in-place "$T/hl/a"
[ "$(grep -c warning "$T/err")" = 1 ] &&
  grep -q "^eh2sframe: $T/hl/a: warning: its 2 other hard links still name the unconverted file" "$T/err" &&
  ok || fail "hard links: warning: $(cat "$T/err")"
LC_ALL=C readelf -SW "$T/hl/a" | grep -q '\.sframe' && cmp -s "$T/hl/b" /bin/ls && ok ||
  fail "hard links: a converted, b unchanged"
expect_rc 0 "$E2S" -q --in-place "$T/hl/b"
[ ! -s "$T/err" ] && ok || fail "hard links, -q: said $(cat "$T/err")"
cp /bin/ls "$T/hl/single"
expect_rc 0 "$E2S" --in-place "$T/hl/single"
! grep -q warning "$T/err" && ok || fail "one name: said $(cat "$T/err")"

echo "eco_cli: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
