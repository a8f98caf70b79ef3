#!/usr/bin/env bash
# The public header and the section API from C++: tests/cxx/section_api.cc
# built with g++ (-std=c++11 and c++17, -Wall -Wextra -Werror -pedantic)
# against the static library and against the shared one, and run; the
# header alone compiles as C++ with every warning on (clang++ too when
# present). contrib/jit/jit_sframe.c as C++ is eco_jit.sh's.
set -u
cd "$(dirname "$0")/../.."
[ -f build/libeh2sframe.a ] && [ -e build/libeh2sframe.so ] || { echo "no built libraries"; exit 77; }
command -v g++ >/dev/null || { echo "FAIL: no g++"; exit 1; }
T=$(mktemp -d /tmp/lib_cxx.XXXXXX)
trap 'rm -rf "$T"' EXIT
nfail=0 nok=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { nok=$((nok + 1)); }
W=(-Wall -Wextra -Werror -pedantic -Iinclude)

for std in c++11 c++17; do
  if g++ -std=$std "${W[@]}" -o "$T/static_$std" tests/cxx/section_api.cc build/libeh2sframe.a -lz -llzma 2>"$T/err"; then
    ok
    out=$("$T/static_$std") && ok || fail "$std static: $out"
    echo "static, $std: $out"
  else
    fail "g++ -std=$std, static: $(head -c 800 "$T/err")"
  fi
done
if g++ -std=c++11 "${W[@]}" -o "$T/shared" tests/cxx/section_api.cc -Lbuild -leh2sframe 2>"$T/err"; then
  ok
  readelf -d "$T/shared" | grep -q 'NEEDED.*libeh2sframe\.so\.' && ok || fail "not linked to the shared library"
  out=$(LD_LIBRARY_PATH=build "$T/shared") && ok || fail "shared: $out"
  echo "shared: $out"
else
  fail "g++, shared: $(head -c 800 "$T/err")"
fi
# The header on its own, as C++ (every inline function instantiated).
printf '#include <eh2sframe.h>\n' > "$T/h.cc"
for cxx in g++ clang++; do
  command -v $cxx >/dev/null || continue
  extra=(-Wshadow -Wold-style-cast)
  [ $cxx = g++ ] && extra+=(-Wuseless-cast -Wzero-as-null-pointer-constant)
  $cxx -std=c++11 "${W[@]}" "${extra[@]}" -fsyntax-only "$T/h.cc" 2>"$T/err" &&
    ok || fail "$cxx: header as C++: $(head -c 800 "$T/err")"
done

echo "lib_cxx: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
