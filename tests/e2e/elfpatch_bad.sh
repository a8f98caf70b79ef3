#!/usr/bin/env bash
# Bad inputs (a FIFO among them) and failing outputs: each gives a
# one-line error and exit 1, leaves the input unchanged (sha256) and leaves
# no temporary file.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib/elfpatch_lib.sh
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
T=$(mktemp -d /tmp/elfpatch_bad.XXXXXX)
trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
ncases=0
gcc -O2 -o "$T/good" corpus/elfpatch/hello.c

# expect_fail NAME FILE [ARGS...]: in-place conversion of FILE fails.
expect_fail() {
  local name=$1 f=$2; shift 2
  local before after out rc
  before=$(sha256sum "$f" 2>/dev/null)
  out=$("$E2S" "$@" 2>&1); rc=$?
  after=$(sha256sum "$f" 2>/dev/null)
  ncases=$((ncases + 1))
  [ $rc = 1 ] || fail "$name: exit $rc"
  [ "$(echo "$out" | wc -l)" = 1 ] || fail "$name: not one line: $out"
  echo "$out" | grep -q '^eh2sframe: ' || fail "$name: message format: $out"
  [ "$before" = "$after" ] || fail "$name: input changed"
  [ -z "$(ls -A "$T" | grep '\.e2s')" ] || fail "$name: temporary file left: $(ls -A "$T")"
  echo "$name: $out"
}

head -c 40 "$T/good" > "$T/trunc-ehdr"
expect_fail "truncated header" "$T/trunc-ehdr" --in-place "$T/trunc-ehdr"
head -c 5000 "$T/good" > "$T/trunc-body"
expect_fail "truncated body" "$T/trunc-body" --in-place "$T/trunc-body"
cp "$T/good" "$T/bad-shoff"; printf '\xff\xff\xff\x7f' | dd of="$T/bad-shoff" bs=1 seek=40 conv=notrunc 2>/dev/null
expect_fail "corrupt e_shoff" "$T/bad-shoff" --in-place "$T/bad-shoff"
cp "$T/good" "$T/bad-phent"; printf '\x20' | dd of="$T/bad-phent" bs=1 seek=54 conv=notrunc 2>/dev/null
expect_fail "corrupt e_phentsize" "$T/bad-phent" --in-place "$T/bad-phent"
cp "$T/good" "$T/class32"; printf '\x01' | dd of="$T/class32" bs=1 seek=4 conv=notrunc 2>/dev/null
expect_fail "32-bit class" "$T/class32" --in-place "$T/class32"
# Overlapping segments: the second PT_LOAD moved onto the first.
cp "$T/good" "$T/overlap"
python3 -c '
import struct, sys
f = sys.argv[1]; d = bytearray(open(f, "rb").read())
phoff, = struct.unpack_from("<Q", d, 0x20); phnum, = struct.unpack_from("<H", d, 0x38)
loads = [phoff + 56 * i for i in range(phnum) if struct.unpack_from("<I", d, phoff + 56 * i)[0] == 1]
v0, = struct.unpack_from("<Q", d, loads[0] + 16)
struct.pack_into("<QQ", d, loads[1] + 16, v0 + 0x10, v0 + 0x10)
open(f, "wb").write(d)' "$T/overlap"
expect_fail "overlapping segments" "$T/overlap" --in-place "$T/overlap"
# Not bad, but odd: section headers stripped (e_shnum 0, as sstrip leaves
# files). The CFI is found through PT_GNU_EH_FRAME; the output gains a
# small section table of its own, runs, and verifies.
cp "$T/good" "$T/noshdr"; printf '\x00\x00' | dd of="$T/noshdr" bs=1 seek=60 conv=notrunc 2>/dev/null
printf '\x00\x00' | dd of="$T/noshdr" bs=1 seek=62 conv=notrunc 2>/dev/null
ncases=$((ncases + 1))
if "$E2S" -q "$T/noshdr" -o "$T/noshdr.out" && [ "$("$T/noshdr.out" a)" = "$("$T/good" a)" ] &&
  "$E2S" --verify "$T/noshdr.out" >/dev/null && readelf -lW "$T/noshdr.out" | grep -q GNU_SFRAME; then
  echo "no section headers: converted, runs, verifies"
else
  fail "no section headers"
fi
rm -f "$T/noshdr.out"
mkdir "$T/dir"
expect_fail "directory" "$T/dir" --in-place "$T/dir"
echo "just text" > "$T/text"
expect_fail "not ELF" "$T/text" --in-place "$T/text"
expect_fail "missing file" "$T/none" --in-place "$T/none"
if command -v arm-linux-gnueabihf-gcc >/dev/null; then :; fi
# Unsupported machine: an i386 object from the host compiler.
if gcc -m32 -c -o "$T/i386.o" -x c - <<<'int f(void){return 1;}' 2>/dev/null; then
  expect_fail "i386" "$T/i386.o" --in-place "$T/i386.o"
fi
# No CFI at all: a failure only when asked for (--require-sframe); by
# default nothing to do, exit 0, nothing printed, the file as it was.
gcc -O2 -fno-asynchronous-unwind-tables -fno-unwind-tables -c -o "$T/nocfi.o" -x c - <<<'int f(int x){return x+1;}'
expect_fail "no CFI" "$T/nocfi.o" --require-sframe --in-place "$T/nocfi.o"
before=$(sha256sum <"$T/nocfi.o")
out=$("$E2S" --in-place "$T/nocfi.o" 2>&1); rc=$?
ncases=$((ncases + 1))
[ $rc = 0 ] && [ -z "$out" ] && [ "$(sha256sum <"$T/nocfi.o")" = "$before" ] ||
  fail "no CFI without --require-sframe: exit $rc: $out"
# Read-only target directory.
mkdir "$T/ro"; cp "$T/good" "$T/ro/prog"; chmod 555 "$T/ro"
if [ "$(id -u)" != 0 ]; then
  expect_fail "read-only directory" "$T/ro/prog" --in-place "$T/ro/prog"
else
  # root ignores directory permissions; use a path that cannot be created.
  expect_fail "unwritable output" "$T/good" "$T/good" -o /proc/version/out
fi
chmod 755 "$T/ro"
# Full disk: a file-size limit below the output size (EFBIG).
cp "$T/good" "$T/big"
before=$(sha256sum "$T/big")
out=$(ulimit -f 16; "$E2S" --in-place "$T/big" 2>&1); rc=$?
ncases=$((ncases + 1))
[ $rc = 1 ] && [ "$(sha256sum "$T/big")" = "$before" ] && [ -z "$(ls -A "$T" | grep '\.e2s')" ] ||
  fail "file-size limit: rc $rc: $out"
echo "file-size limit: $out"
# -o: a failed write leaves no partial OUT.
out=$(ulimit -f 16; "$E2S" "$T/good" -o "$T/out" 2>&1); rc=$?
ncases=$((ncases + 1))
[ $rc = 1 ] && [ ! -e "$T/out" ] || fail "-o with file-size limit left OUT"
# A FIFO as input: refused at once, not waited on (its open used to block
# until some writer came).
mkfifo "$T/fifo"
for args in "-q $T/fifo -o $T/fifo-out" "--in-place $T/fifo" "--stats $T/fifo" \
            "--dump-cfi $T/fifo"; do
  out=$(timeout 10 "$E2S" $args 2>&1); rc=$?
  ncases=$((ncases + 1))
  [ $rc = 1 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q 'not a regular file' &&
    [ -p "$T/fifo" ] && [ ! -e "$T/fifo-out" ] || fail "FIFO input ($args): rc $rc: $out"
  echo "FIFO input ($args): $out"
done
rm -f "$T/fifo"
# Several files: one bad, one good -> exit 1, the good one converted.
cp "$T/good" "$T/g2"
out=$("$E2S" -q --in-place "$T/text" "$T/g2" 2>&1); rc=$?
ncases=$((ncases + 1))
[ $rc = 1 ] && LC_ALL=C readelf -SW "$T/g2" | grep -q '\.sframe' || fail "mixed list: rc $rc"
echo "cases $ncases, failures $fails"
[ $fails = 0 ]
