#!/usr/bin/env bash
# Fedora's mini debuginfo (.gnu_debugdata: an xz-compressed ELF file with
# the function symbols of .symtab, made here by hand as gdb's manual,
# "MiniDebugInfo", describes it) in a PIE, a non-PIE program and two
# shared libraries, each with a static function only the mini debuginfo
# names.
# Converted, each:
#   - runs as before (the library through a program using it);
#   - gdb, with no other debug file, names the static function and warns
#     about nothing; the check is shown to see the warning: the converted
#     file with its old .gnu_debugdata put back (what converters without
#     this step write; also the output of BASE_E2S, an eh2sframe without
#     this step, when given) makes gdb say "section .sframe not found in
#     .gnu_debugdata";
#   - passes --verify;
#   - holds an embedded ELF file with a .sframe section header and the
#     converted file's program headers, their table right after its ELF
#     header (also for libseg.so, whose table moves to the end of the
#     file: the SEG layout); xz -t accepts the stream;
#   - the same bytes from a second run, from --in-place, and from a
#     --force rebuild of the output (the mini debuginfo then already
#     matches and stays as it is).
# The same for s390x (big-endian) and AArch64 PIE and non-PIE programs
# under qemu-user, without gdb (Debian's reads only x86-64 files): the
# embedded file's .sframe and program headers, the static function's
# symbol at its address.
# Bad .gnu_debugdata (a truncated xz stream, xz of a text file, bytes
# that are not xz, the mini debuginfo of another program): the
# conversion fails with one line naming the file and .gnu_debugdata,
# writes no output, and --in-place leaves the file unchanged.
set -u
cd "$(dirname "$0")/../.."
E2S=$PWD/eh2sframe
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
for c in gdb xz objcopy nm strip readelf comm; do
  command -v $c >/dev/null || { echo "SKIP: needs $c"; exit 77; }
done
T=$(mktemp -d /tmp/mini_debuginfo.XXXXXX)
[ -n "${KEEP:-}" ] && echo "keeping $T" || trap 'rm -rf "$T"' EXIT
nfail=0 nok=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { nok=$((nok + 1)); }
# No debuginfod, no system debug directory: the mini debuginfo is all
# gdb has.
export DEBUGINFOD_URLS=
GDB=(gdb -batch -nx -iex 'set debug-file-directory /nonexistent'
     -iex 'set auto-load no')

cat > "$T/prog.c" <<'C'
#include <stdio.h>
static int __attribute__((noinline)) mini_secret_walk(int n)
{
	return n ? 3 + mini_secret_walk(n - 1) : 7;
}
int main(int argc, char **argv)
{
	(void)argv;
	printf("walk %d\n", mini_secret_walk(argc + 4));
	return 0;
}
C
cat > "$T/lib.c" <<'C'
static int __attribute__((noinline)) mini_lib_hidden(int x)
{
	return x * 5 + 1;
}
int mini_lib_entry(int x) { return mini_lib_hidden(x) + 2; }
C
cat > "$T/use.c" <<'C'
#include <stdio.h>
int mini_lib_entry(int x);
int main(void) { printf("lib %d\n", mini_lib_entry(8)); return 0; }
C
gcc -O1 -g -o "$T/pie" "$T/prog.c" || { echo "FAIL: build"; exit 1; }
gcc -O1 -g -no-pie -o "$T/nopie" "$T/prog.c" || { echo "FAIL: build"; exit 1; }
gcc -O1 -g -shared -fPIC -o "$T/libmini.so" "$T/lib.c" || { echo "FAIL: build"; exit 1; }
# A library whose hash tables are too large to move: the program header
# table goes to the new segment at the end of the file (SEG).
{
  echo 'static int __attribute__((noinline)) mini_seg_hidden(int x) { return x * 3; }'
  for i in $(seq 0 399); do echo "int seg_fn_$i(int x) { return mini_seg_hidden(x) + $i; }"; done
} > "$T/seg.c"
echo '#include <stdio.h>
int seg_fn_7(int x);
int main(void) { printf("seg %d\n", seg_fn_7(5)); return 0; }' > "$T/useseg.c"
gcc -O1 -g -shared -fPIC -o "$T/libseg.so" "$T/seg.c" || { echo "FAIL: build"; exit 1; }

# add_mini FILE: gdb's manual, "MiniDebugInfo": the function symbols not
# in the dynamic symbol table, kept in a stripped copy of the debug file,
# compressed with xz into .gnu_debugdata of the stripped file.
# PFX: the binutils of another target ("s390x-linux-gnu-").
add_mini() {
  local f=$1 p=${2:-} w=$T/work.$$
  mkdir -p "$w"
  ${p}nm -D "$f" --format=posix --defined-only | awk '{ print $1 }' | sort > "$w/dynsyms"
  ${p}nm "$f" --format=posix --defined-only |
    awk '{ if ($2 == "T" || $2 == "t" || $2 == "D") print $1 }' | sort > "$w/funcsyms"
  comm -13 "$w/dynsyms" "$w/funcsyms" > "$w/keep"
  ${p}objcopy --only-keep-debug "$f" "$w/debug"
  ${p}objcopy -S --remove-section .gdb_index --remove-section .comment \
    --keep-symbols="$w/keep" "$w/debug" "$w/mini"
  ${p}strip --strip-all -R .comment "$f"
  rm -f "$w/mini.xz"
  xz "$w/mini"
  ${p}objcopy --add-section .gnu_debugdata="$w/mini.xz" "$f"
  cp "$w/mini.xz" "$f.mini.xz"
  rm -rf "$w"
}
for f in pie nopie libmini.so libseg.so; do add_mini "$T/$f"; done
gcc -O1 -o "$T/use" "$T/use.c" -L"$T" -lmini -Wl,-rpath,"$T/lib"
gcc -O1 -o "$T/useseg" "$T/useseg.c" -L"$T" -lseg -Wl,-rpath,"$T/lib"
mkdir -p "$T/lib"

# gdb_funcs FILE NAME: what gdb says of NAME in FILE, stderr too.
gdb_funcs() { "${GDB[@]}" -ex "info functions $2" "$1" 2>&1; }
# gdb_clean FILE NAME WHAT: gdb names NAME and warns about nothing.
gdb_clean() {
  local out
  out=$(gdb_funcs "$1" "$2")
  if ! grep -q "$2" <<<"$out"; then
    fail "$3: gdb does not name $2: $out"
  elif grep -qiE 'warning|gnu_debugdata|sframe' <<<"$out"; then
    fail "$3: gdb warns: $(grep -iE 'warning|gnu_debugdata|sframe' <<<"$out" | head -2)"
  else
    ok
  fi
}
# gdb_warns FILE NAME WHAT: gdb says .sframe is missing from
# .gnu_debugdata (the check above would see it).
gdb_warns() {
  local out
  out=$(gdb_funcs "$1" "$2")
  if grep -q 'section .sframe not found in .gnu_debugdata' <<<"$out"; then
    ok
  else
    fail "$3: gdb gives no warning: $out"
  fi
}
# embedded FILE OUT [PFX]: the decompressed .gnu_debugdata of FILE into
# OUT.
embedded() {
  rm -f "$2.xz"
  ${3:-}objcopy --dump-section .gnu_debugdata="$2.xz" "$1" "$T/dump.tmp" &&
    rm -f "$T/dump.tmp" && xz -t "$2.xz" && xz -dc "$2.xz" > "$2"
}
# The program header table (not the interpreter's name, which is in no
# section of the embedded file).
phdrs() { readelf -lW "$1" 2>/dev/null | grep -E '^ +[A-Z_]+ +0x'; }

# Only when asked: a default path could hold any build.
BASE=${BASE_E2S:-}
[ -x "$BASE" ] || BASE=
# run_of NAME: the program's output (its converted copy once NAME.run
# exists), a library's through a program using it from $T/lib.
run_of() {
  case $1 in
    libmini.so) "$T/use" ;;
    libseg.so) "$T/useseg" ;;
    *) if [ -e "$T/$1.run" ]; then "$T/$1.run"; else "$T/$1"; fi ;;
  esac
}

for f in pie nopie libmini.so libseg.so; do
  case $f in libmini.so) fn=mini_lib_hidden ;; libseg.so) fn=mini_seg_hidden ;;
    *) fn=mini_secret_walk ;; esac
  in=$T/$f out=$T/$f.sf
  # The input: gdb finds the static function in its mini debuginfo.
  gdb_clean "$in" $fn "$f (input)"
  case $f in *.so) cp "$in" "$T/lib/$f" ;; esac
  want=$(run_of "$f")
  if ! "$E2S" -v "$in" -o "$out" >"$T/vlog" 2>&1; then
    fail "$f: conversion: $(cat "$T/vlog")"
    continue
  fi
  ok
  if [ $f = libseg.so ]; then
    grep -q 'program headers moved' "$T/vlog" && ok ||
      fail "libseg.so: not the SEG layout: $(grep 'program headers' "$T/vlog")"
  fi
  # (1) runs the same.
  case $f in *.so) cp "$out" "$T/lib/$f" ;; *) cp "$out" "$T/$f.run" ;; esac
  got=$(run_of "$f")
  [ "$got" = "$want" ] && [ -n "$want" ] && ok || fail "$f: output '$got', want '$want'"
  case $f in *.so) cp "$in" "$T/lib/$f" ;; esac
  # (2) gdb with only the mini debuginfo: no warning, the static name.
  gdb_clean "$out" $fn "$f"
  # ... and the same check sees the warning of the old .gnu_debugdata
  # in a converted file.
  cp "$out" "$T/old"
  objcopy --update-section .gnu_debugdata="$in.mini.xz" "$T/old" 2>/dev/null
  gdb_warns "$T/old" $fn "$f with its old .gnu_debugdata"
  if [ -n "$BASE" ]; then
    if "$BASE" "$in" -o "$T/base.out" 2>/dev/null; then
      gdb_warns "$T/base.out" $fn "$f converted by $BASE"
    else
      echo "note: $BASE does not convert $f"
    fi
  fi
  # (3) --verify.
  "$E2S" --verify "$out" >"$T/v" 2>&1 && ok || fail "$f: --verify: $(tail -2 "$T/v")"
  # (4) the embedded file: a .sframe section header, the converted
  # file's program headers; the input's had neither.
  if embedded "$out" "$T/emb"; then
    readelf -SW "$T/emb" 2>/dev/null | grep -q ' \.sframe ' && ok ||
      fail "$f: no .sframe in the embedded file"
    [ "$(phdrs "$T/emb")" = "$(phdrs "$out")" ] && ok ||
      fail "$f: the embedded file's program headers are not the file's"
    # Its table right after its ELF header, wherever the file has it:
    # no zeros up to the end of a library whose table moved there.
    eph=$(readelf -hW "$T/emb" | awk '/Start of program headers/ { print $5 }')
    [ "$eph" = 64 ] && ok || fail "$f: the embedded file's e_phoff is $eph"
    embedded "$in" "$T/emb0"
    readelf -SW "$T/emb0" 2>/dev/null | grep -q ' \.sframe ' &&
      fail "$f: the input's embedded file already has .sframe" || ok
  else
    fail "$f: no readable .gnu_debugdata in the output"
  fi
  # The same bytes again; --in-place the same; --force on the output
  # leaves a matching mini debuginfo as it is.
  "$E2S" "$in" -o "$T/again" 2>/dev/null && cmp -s "$out" "$T/again" && ok ||
    fail "$f: a second run gives other bytes"
  cp "$in" "$T/inplace"
  "$E2S" --in-place "$T/inplace" 2>/dev/null && cmp -s "$out" "$T/inplace" && ok ||
    fail "$f: --in-place gives other bytes than -o"
  if "$E2S" --force "$out" -o "$T/forced" 2>"$T/err"; then
    objcopy --dump-section .gnu_debugdata="$T/a.xz" "$out" "$T/dump.tmp"
    objcopy --dump-section .gnu_debugdata="$T/b.xz" "$T/forced" "$T/dump.tmp"
    cmp -s "$T/a.xz" "$T/b.xz" && ok || fail "$f: --force rewrote a matching mini debuginfo"
    gdb_clean "$T/forced" $fn "$f (forced rebuild)"
  else
    fail "$f: --force on the output: $(cat "$T/err")"
  fi
done

# Other targets (s390x: big-endian), run under qemu-user: the same
# output, the embedded file's .sframe, program headers and the static
# function's symbol at its address, --verify, the same bytes again.
# (Debian's gdb reads only its own architecture's files.)
for arch in s390x aarch64; do
  cc=$arch-linux-gnu-gcc q=qemu-$arch
  if ! command -v $cc >/dev/null || ! command -v $q >/dev/null ||
     ! command -v $arch-linux-gnu-objcopy >/dev/null; then
    echo "note: $arch skipped (no $cc, $q or binutils)"; continue
  fi
  for kind in pie nopie; do
    f=$T/$arch-$kind
    flags=(); [ $kind = nopie ] && flags=(-no-pie)
    $cc -O1 "${flags[@]}" -o "$f" "$T/prog.c" || { fail "$arch: build"; continue; }
    add_mini "$f" $arch-linux-gnu-
    if ! "$E2S" "$f" -o "$f.sf" 2>"$T/err"; then
      fail "$arch-$kind: conversion: $(cat "$T/err")"; continue
    fi
    want=$(QEMU_LD_PREFIX=/usr/$arch-linux-gnu $q "$f" 2>&1)
    got=$(QEMU_LD_PREFIX=/usr/$arch-linux-gnu $q "$f.sf" 2>&1)
    [ "$got" = "$want" ] && [ -n "$want" ] && ok || fail "$arch-$kind: output '$got', want '$want'"
    "$E2S" --verify "$f.sf" >"$T/v" 2>&1 && ok || fail "$arch-$kind: --verify: $(tail -2 "$T/v")"
    if embedded "$f.sf" "$T/emb" $arch-linux-gnu-; then
      readelf -SW "$T/emb" 2>/dev/null | grep -q ' \.sframe ' && ok ||
        fail "$arch-$kind: no .sframe in the embedded file"
      [ "$(phdrs "$T/emb")" = "$(phdrs "$f.sf")" ] && ok ||
        fail "$arch-$kind: the embedded file's program headers are not the file's"
      a=$(readelf -sW "$T/emb" | awk '$8 == "mini_secret_walk" { print $2 }')
      embedded "$f" "$T/emb0" $arch-linux-gnu-
      b=$(readelf -sW "$T/emb0" | awk '$8 == "mini_secret_walk" { print $2 }')
      [ -n "$a" ] && [ "$a" = "$b" ] && ok || fail "$arch-$kind: mini_secret_walk at '$a', was '$b'"
    else
      fail "$arch-$kind: no readable .gnu_debugdata in the output"
    fi
    "$E2S" "$f" -o "$T/again" 2>/dev/null && cmp -s "$f.sf" "$T/again" && ok ||
      fail "$arch-$kind: a second run gives other bytes"
  done
done

# Bad .gnu_debugdata: one line naming the file and the section, exit 1,
# no output, the input untouched.
head -c 200 "$T/pie.mini.xz" > "$T/trunc.xz"
echo "not an ELF file" > "$T/text"
xz -c "$T/text" > "$T/text.xz"
printf 'plain bytes, not xz at all, long enough for a header' > "$T/notxz"
bad() {
  local name=$1 data=$2 why=$3 b=$T/bad_$1
  cp "$T/pie" "$b"
  objcopy --update-section .gnu_debugdata="$data" "$b" || { fail "$name: objcopy"; return; }
  cp "$b" "$b.orig"
  rm -f "$b.out"
  "$E2S" "$b" -o "$b.out" 2>"$T/err"
  rc=$?
  local lines
  lines=$(wc -l < "$T/err")
  if [ $rc = 0 ] || [ -e "$b.out" ]; then
    fail "$name: converted (exit $rc)"
  elif [ "$lines" != 1 ] || ! grep -q "^eh2sframe: $b: .gnu_debugdata" "$T/err" ||
       ! grep -q "$why" "$T/err"; then
    fail "$name: message: $(cat "$T/err")"
  else
    ok
  fi
  "$E2S" --in-place "$b" 2>/dev/null && fail "$name: --in-place succeeded" || ok
  cmp -s "$b" "$b.orig" && ok || fail "$name: --in-place changed the file"
  echo "  $name: $(cat "$T/err")"
}
bad truncated "$T/trunc.xz" "xz data ends early"
bad text "$T/text.xz" "not an ELF file"
bad notxz "$T/notxz" "mini debuginfo"
bad other "$T/libmini.so.mini.xz" "not its debug file"

echo "mini_debuginfo: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
