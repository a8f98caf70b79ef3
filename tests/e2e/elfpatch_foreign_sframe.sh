#!/usr/bin/env bash
# Issue 22: a section named .sframe that is not SFrame (by type, or by the
# header of an old assembler's SHT_PROGBITS .sframe) is never rebuilt,
# dropped, read or taken for "already has SFrame".
#  1. The fuzz find (s390x object whose symbol table is named .sframe and
#     whose SFrame section, SHT_GNU_SFRAME, is named .cframe), --force
#     --sframe-version=2: exit 0; the symbol table keeps its bytes; every
#     relocation resolves; --dump-cfi works; the rebuilt .cframe decodes
#     (--dump, and binutils 2.47 objdump --sframe in the oracle chroot,
#     the two agreeing). Without --force: an exact copy.
#  2. x86-64 objects with a symbol table named .sframe, or an SHT_PROGBITS
#     .sframe without the SFrame header: refused with one line naming the
#     section, with and without --force; -o writes nothing, --in-place
#     and tree mode leave the file as it was; --dump finds no SFrame.
#  3. An SHT_PROGBITS .sframe with a version 1 header (binutils 2.40) is
#     SFrame: "already has .sframe" without --force, rebuilt with it.
#  4. Linked: a program whose .comment is renamed .sframe is refused; a
#     separate debug file (SHT_NOBITS .sframe) still "already has" it.
#  5. The fuzz find of the same run: two SFrame sections on the same file
#     bytes (one would be rebuilt in place, then zeroed as the other is
#     retired): --force refuses it and writes nothing.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lib/elfpatch_lib.sh
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
repo=$PWD
T=$(mktemp -d /tmp/elfpatch_foreign.XXXXXX)
trap 'rm -rf "$T"' EXIT
export LC_ALL=C
nok=0
ok() { nok=$((nok + 1)); }

# Bytes of the section called $2 (first match) of file $1, hex.
secbytes() {
  python3 - "$1" "$2" <<'PY'
import struct, sys
f, want = sys.argv[1], sys.argv[2].encode()
b = open(f, "rb").read()
be = b[5] == 2
e = ">" if be else "<"
shoff, = struct.unpack_from(e + "Q", b, 0x28)
shnum, shstrndx = struct.unpack_from(e + "HH", b, 0x3c)
def sh(i): return struct.unpack_from(e + "IIQQQQIIQQ", b, shoff + 64 * i)
stro, strs = sh(shstrndx)[4], sh(shstrndx)[5]
for i in range(1, shnum):
    h = sh(i)
    n = b[stro + h[0]:b.index(b"\0", stro + h[0])]
    if n == want:
        print(i, hex(h[1]), b[h[4]:h[4] + h[5]].hex())
        break
PY
}

# 1. The fuzz find.
seed=tests/fuzz/regress/fuzz_elf/force-symtab-named-sframe
tail -c +2 "$seed" >"$T/in.o"   # byte 0 is fuzz_elf's option selector
"$E2S" -q --force --sframe-version=2 "$T/in.o" -o "$T/out.o"; rc=$?
if [ $rc = 0 ] && [ -f "$T/out.o" ]; then
  ok
  [ "$(secbytes "$T/in.o" .sframe)" = "$(secbytes "$T/out.o" .sframe)" ] &&
    [ -n "$(secbytes "$T/out.o" .sframe)" ] && ok ||
    fail "fuzz find: the symbol table named .sframe changed"
  diff <(readelf -sW "$T/in.o" 2>&1) <(readelf -sW "$T/out.o" 2>&1) >/dev/null && ok ||
    fail "fuzz find: readelf -s differs"
  # The relocation sections nobody rebuilt are as they were; the rebuilt
  # .rela.cframe names .data in every entry; readelf has nothing to say.
  rin=$(readelf -rW "$T/in.o" 2>&1) rout=$(readelf -rW "$T/out.o" 2>&1)
  sect() { sed -n "/^Relocation section '$1'/,/^\$/p"; }
  for s in .rela.data .rela.eh_frame; do
    [ "$(echo "$rin" | sect $s)" = "$(echo "$rout" | sect $s)" ] &&
      [ -n "$(echo "$rout" | sect $s)" ] && ok || fail "fuzz find: $s differs"
  done
  n=$(echo "$rout" | sect .rela.cframe | grep -c ' R_390_PC32 .* \.data + ')
  [ "$n" = 5 ] && ok || fail "fuzz find: .rela.cframe resolves $n of 5 entries"
  echo "$rout" | grep -qi -e warning -e corrupt -e 'bad symbol' &&
    fail "fuzz find: readelf -r complains" || ok
  "$E2S" --dump-cfi "$T/out.o" >"$T/cfi.txt" 2>"$T/cfi.err" &&
    grep -q 'fdes=9 ' "$T/cfi.txt" && ok ||
    fail "fuzz find: --dump-cfi OUT: $(head -n 2 "$T/cfi.err")"
  "$E2S" --dump "$T/out.o" >"$T/dump.txt" 2>"$T/dump.err" &&
    grep -q 'Num FDEs: 5' "$T/dump.txt" && ok ||
    fail "fuzz find: --dump OUT: $(head -n 2 "$T/dump.err")"
  if [ -f oracle/sid/.eh2sframe-oracle-ok ] && [ "$(id -u)" = 0 ]; then
    # The symbol with a fuzzed name offset makes objdump warn about
    # .strtab; the input does the same. Anything else is a failure.
    IN_ORACLE_BIND=$T tools/in-oracle.sh s390x-linux-gnu-objdump --sframe=.cframe \
      "$T/out.o" >"$T/od.txt" 2>"$T/od.err"; orc=$?
    grep -v "invalid string offset .* for section \`.strtab'" "$T/od.err" >"$T/od.err2"
    if [ $orc = 0 ] && [ ! -s "$T/od.err2" ] && grep -q 'Num FDEs: 5' "$T/od.txt" &&
       python3 tools/sframe_text_norm.py "$T/od.txt" >"$T/a.n" &&
       python3 tools/sframe_text_norm.py "$T/dump.txt" >"$T/b.n" &&
       diff -u "$T/a.n" "$T/b.n" >"$T/od.diff"; then
      ok
    else
      fail "fuzz find: objdump 2.47 --sframe (exit $orc): $(head -n 3 "$T/od.err2" "$T/od.diff")"
    fi
  else
    echo "note: no oracle chroot (or not root): objdump check skipped"
  fi
else
  fail "fuzz find: --force exit $rc"
fi
"$E2S" -q "$T/in.o" -o "$T/copy.o" 2>/dev/null && cmp -s "$T/in.o" "$T/copy.o" && ok ||
  fail "fuzz find: without --force the output is not an exact copy"

# 2. x86-64 objects with a foreign .sframe.
cat >"$T/f.c" <<'X'
int g(int);
int f(int x) { return g(x) * 3 + 1; }
X
gcc -O2 -c "$T/f.c" -o "$T/f.o" || fail "gcc f.c"
# .symtab and .sframe have the same length: rename in .shstrtab.
python3 - "$T/f.o" "$T/symtab.o" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
assert b.count(b"\0.symtab\0") == 1
open(sys.argv[2], "wb").write(b.replace(b"\0.symtab\0", b"\0.sframe\0"))
PY
cat >"$T/junk.s" <<'X'
	.text
	.globl h
	.type h,@function
h:	.cfi_startproc
	call g
	ret
	.cfi_endproc
	.size h,.-h
	.section .sframe,"a",@progbits
	.quad 0x1111111111111111,0x2222222222222222,0x3333333333333333,0x4444444444444444
	.section .note.GNU-stack,"",@progbits
X
as "$T/junk.s" -o "$T/junk.o" || fail "as junk.s"
for b in symtab junk; do
  in=$T/$b.o
  for force in "" --force; do
    rm -f "$T/x.o"
    "$E2S" -q $force "$in" -o "$T/x.o" 2>"$T/err"; rc=$?
    [ $rc = 1 ] && [ ! -e "$T/x.o" ] && [ "$(wc -l <"$T/err")" = 1 ] &&
      grep -q 'another kind of section is named .sframe: section [0-9]* is SHT_[A-Z]*.*, not SFrame' "$T/err" && ok ||
      fail "$b.o ${force:-(no --force)}: exit $rc, output $( [ -e "$T/x.o" ] && echo written || echo none ), '$(head -n 2 "$T/err")'"
    cp "$in" "$T/ip.o"
    "$E2S" -q $force --in-place "$T/ip.o" 2>/dev/null; rc=$?
    [ $rc = 1 ] && cmp -s "$in" "$T/ip.o" && ok || fail "$b.o --in-place $force: exit $rc, file changed?"
  done
  mkdir -p "$T/tree.$b" && cp "$in" "$T/tree.$b/a.o"
  "$E2S" -q --force --in-place -r "$T/tree.$b" 2>/dev/null
  cmp -s "$in" "$T/tree.$b/a.o" && [ -z "$(ls -A "$T/tree.$b" | grep -v '^a\.o$')" ] && ok ||
    fail "$b.o: tree mode changed the file or left files behind"
  "$E2S" --dump "$in" >/dev/null 2>"$T/err"
  grep -q 'no .sframe section' "$T/err" && ok || fail "$b.o --dump: $(head -n 1 "$T/err")"
done
# No temporary file left next to the outputs.
ls -A "$T" | grep -q '\.e2[sc]' && fail "temporary files left in $T" || ok

# 3. Version 1 header, SHT_PROGBITS (binutils 2.40 gas --gsframe).
sed 's/^\t\.quad 0x1111.*/\t.short 0xdee2\n\t.byte 1,0,3,0,0xf8,0\n\t.long 0,0,0,0,0/' \
  "$T/junk.s" >"$T/v1.s"
as "$T/v1.s" -o "$T/v1.o" || fail "as v1.s"
"$E2S" -q "$T/v1.o" -o "$T/v1.x.o" 2>"$T/err" && cmp -s "$T/v1.o" "$T/v1.x.o" && ok ||
  fail "v1.o: not taken for an existing .sframe: $(head -n 1 "$T/err")"
"$E2S" -q --force "$T/v1.o" -o "$T/v1.f.o" && "$E2S" --dump "$T/v1.f.o" | grep -q 'Num FDEs: 1' && ok ||
  fail "v1.o --force: not rebuilt"

# 4. Linked files.
printf 'int main(void) { return 0; }\n' >"$T/p.c"
gcc -O2 -o "$T/p" "$T/p.c" || fail "gcc p.c"
objcopy --rename-section .comment=.sframe "$T/p" "$T/pc" 2>/dev/null
if readelf -SW "$T/pc" | grep -q ' \.sframe  *PROGBITS'; then
  for force in "" --force; do
    rm -f "$T/pc.x"
    "$E2S" -q $force "$T/pc" -o "$T/pc.x" 2>"$T/err"; rc=$?
    [ $rc = 1 ] && [ ! -e "$T/pc.x" ] && grep -q 'named .sframe' "$T/err" && ok ||
      fail "linked, .comment named .sframe ${force:-(no --force)}: exit $rc: $(head -n 1 "$T/err")"
  done
else
  fail "objcopy --rename-section did not make a .sframe"
fi
"$E2S" -q "$T/p" -o "$T/p.sf" && objcopy --only-keep-debug "$T/p.sf" "$T/p.debug" &&
  readelf -SW "$T/p.debug" 2>/dev/null | grep -q ' \.sframe  *NOBITS' || fail "no debug file with a NOBITS .sframe"
"$E2S" -q "$T/p.debug" -o "$T/p.debug.x" 2>"$T/err" && cmp -s "$T/p.debug" "$T/p.debug.x" && ok ||
  fail "debug file: not 'already has .sframe': $(head -n 1 "$T/err")"

# 5. Overlapping SFrame sections.
tail -c +2 tests/fuzz/regress/fuzz_elf/force-sframe-sections-share-bytes >"$T/ov.o"
rm -f "$T/ov.x"
"$E2S" -q --force "$T/ov.o" -o "$T/ov.x" 2>"$T/err"; rc=$?
[ $rc = 1 ] && [ ! -e "$T/ov.x" ] && grep -q 'shares file bytes with section' "$T/err" && ok ||
  fail "overlapping SFrame sections: exit $rc: $(head -n 1 "$T/err")"

echo "foreign .sframe: $nok checks passed, $fails failures"
[ $fails = 0 ]
