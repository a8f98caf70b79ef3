#!/usr/bin/env bash
# The libraries' global names, with nm. Both libeh2sframe.a and
# libeh2sframe.so must define no global symbol without the eh2s_ prefix
# (the static library is one prelinked object whose module names are
# local: Makefile), export exactly the functions include/eh2sframe.h
# declares, and keep the internal entry points (api_*, src/api/api_dev.h)
# out. Then a program that defines names the library uses inside
# (cfi_*, sfe_*, elfp_*, e2s_*) links statically with libeh2sframe.a
# and runs: no collision.
set -u
cd "$(dirname "$0")/../.."
A=build/libeh2sframe.a SO=build/libeh2sframe.so
[ -f "$A" ] && [ -e "$SO" ] || { echo "no built libraries; run make all"; exit 77; }
T=$(mktemp -d /tmp/lib_symbols.XXXXXX)
trap 'rm -rf "$T"' EXIT
nfail=0 nok=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { nok=$((nok + 1)); }

# Defined global symbols (nm: upper-case type letters other than U/w/v).
globals() { nm -g --defined-only "$@" 2>/dev/null | awk 'NF == 3 && $2 != "A" {print $3}' | sed 's/@.*//' | sort -u; }
globals "$A" > "$T/a.syms"
globals -D "$SO" > "$T/so.syms"
echo "libeh2sframe.a: $(wc -l < "$T/a.syms") global symbols, $(grep -vc '^eh2s_' "$T/a.syms") without the eh2s_ prefix"
echo "libeh2sframe.so: $(wc -l < "$T/so.syms") exported symbols, $(grep -vc '^eh2s_' "$T/so.syms") without the eh2s_ prefix"
for lib in a so; do
  bad=$(grep -v '^eh2s_' "$T/$lib.syms")
  [ -z "$bad" ] && ok || fail "libeh2sframe.$lib: unprefixed globals: $(echo "$bad" | head -20 | tr '\n' ' ')"
done
# The library's modules do define such names: the check has teeth.
n=$(nm -g --defined-only build/src/*/*.o | awk 'NF == 3 {print $3}' | grep -vc '^eh2s_')
[ "$n" -gt 50 ] && ok || fail "expected the unprelinked objects to define module names ($n)"
echo "(the unprelinked objects define $n unprefixed globals, now local)"

# Exactly the header's functions, in both.
grep -E '^[A-Za-z].*[ *]eh2s_[a-z0-9_]+\(' include/eh2sframe.h | grep -vE '^(typedef|static|#)' |
  sed -E 's/.*[ *](eh2s_[a-z0-9_]+)\(.*/\1/' | sort -u > "$T/header.syms"
[ "$(wc -l < "$T/header.syms")" -gt 20 ] && ok || fail "could not read the header's functions"
for lib in a so; do
  if cmp -s "$T/header.syms" "$T/$lib.syms"; then ok; else
    fail "libeh2sframe.$lib exports differ from the header: $(diff "$T/header.syms" "$T/$lib.syms" | grep '^[<>]' | tr '\n' ' ')"
  fi
done
# Internal entry points exist but are local.
nm build/prelink/libeh2sframe.o | grep -q ' t api_encode_sframe_file$' && ok ||
  fail "api_encode_sframe_file not local in the static library"
nm -D "$SO" | grep -q 'api_' && fail "api_* exported by the shared library" || ok

# A program with the library's internal names of its own.
names=$(nm -g --defined-only build/src/dwarf/*.o build/src/convert/*.o build/src/elfpatch/*.o build/src/common/*.o |
  awk 'NF == 3 && $2 == "T" {print $3}' | grep -E '^(cfi_|sfe_|elfp_|e2s_)' | sort -u | head -6)
[ "$(echo "$names" | wc -l)" = 6 ] && ok || fail "internal names to reuse: $names"
{
  echo '#include <eh2sframe.h>'
  echo '#include <stdio.h>'
  echo '#include <string.h>'
  for s in $names; do echo "int $s(void); int $s(void) { return 7; }"; done
  echo 'int main(void) {'
  echo '  int sum = 0;'
  for s in $names; do echo "  sum += $s();"; done
  echo '  eh2s_summary s; eh2s_summary_init(&s);'
  echo '  printf("%s %d\n", eh2s_version(), sum);'
  echo '  return sum == 42 && strcmp(eh2s_strerror(EH2S_E_NOT_ELF), "not an ELF file") == 0 ? 0 : 1;'
  echo '}'
} > "$T/clash.c"
if gcc -Wall -Werror -Iinclude -o "$T/clash" "$T/clash.c" "$A" -lz -llzma 2>"$T/cc.err"; then
  ok
  "$T/clash" >/dev/null && ok || fail "program with the library's internal names: wrong result"
else
  fail "static link with the library's internal names defined by the program: $(head -c 600 "$T/cc.err")"
fi

echo "lib_symbols: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
