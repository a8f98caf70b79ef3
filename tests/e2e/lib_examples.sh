#!/usr/bin/env bash
# Every code example of include/eh2sframe.h, README.md and
# doc/eh2sframe.1, taken out of the text as it stands and run:
# - C: the header's usage example and each ```c block of the README,
#   compiled as C11 with gcc and clang and as C++ with g++ (-Wall -Wextra
#   -Werror -pedantic), linked with the static and the shared library,
#   and run (a program gets "IN OUT": a small program with CFI and an
#   output path; what it writes must pass --verify). A block without
#   main() holds declarations: it must compile after the header (so it
#   matches it).
# - Shell: each .EX block of the man page and each ```sh block of the
#   README runs in a scratch directory holding the files they name
#   (prog, foo.o, bar.o, a debian/ tree, $RPM_BUILD_ROOT), with this
#   build's eh2sframe first on PATH, and must succeed. `make` lines are
#   dry runs (make -n): `make check` inside make check would recurse.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
[ -x eh2sframe ] && [ -f build/libeh2sframe.a ] && [ -e build/libeh2sframe.so ] ||
  { echo "no eh2sframe or libraries; run make all"; exit 77; }
T=$(mktemp -d /tmp/lib_examples.XXXXXX)
trap 'rm -rf "$T"' EXIT
nfail=0 nok=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { nok=$((nok + 1)); }

# ---- take the examples out of the text
mkdir -p "$T/ex"
python3 - "$T/ex" <<'PY'
import re, sys
out = sys.argv[1]
n = 0
def put(name, text):
    global n
    n += 1
    with open(f"{out}/{n:02d}-{name}", "w") as f:
        f.write(text)

# The header: the comment lines between "Example" and "Conventions:",
# indented by four spaces after " * ".
lines = open("include/eh2sframe.h").read().split("\n")
start = next(i for i, l in enumerate(lines) if l.startswith(" * Example"))
end = next(i for i, l in enumerate(lines) if l.startswith(" * Conventions:"))
body = []
for l in lines[start + 1:end]:
    if l.strip() == "*":
        body.append("")
    elif l.startswith(" *     "):
        body.append(l[7:])
    else:
        sys.exit(f"include/eh2sframe.h: unexpected line in the example: {l!r}")
put("header.c", "\n".join(body).strip("\n") + "\n")

# README: fenced blocks tagged c or sh (untagged ones are formats and
# synopses, not code).
text = open("README.md").read()
for m in re.finditer(r"^( *)```(c|sh)\n(.*?)^\1```\n", text, re.S | re.M):
    indent, lang, code = m.group(1), m.group(2), m.group(3)
    code = "\n".join(l[len(indent):] for l in code.split("\n"))
    line = text[:m.start()].count("\n") + 1
    put(f"readme-{line}.{lang}", code)

# The man page: .EX/.EE blocks, groff escapes undone.
man = open("doc/eh2sframe.1").read()
for m in re.finditer(r"^\.EX\n(.*?)^\.EE\n", man, re.S | re.M):
    code = m.group(1).replace("\\-", "-").replace("\\e", "\\")
    line = man[:m.start()].count("\n") + 1
    put(f"man-{line}.sh", code)
PY
[ $? = 0 ] && ok || { fail "could not extract the examples"; exit 1; }
ls "$T/ex" | sed 's/^/example: /'
nc=$(ls "$T/ex" | grep -c '\.c$') nsh=$(ls "$T/ex" | grep -c '\.sh$')
[ "$nc" -ge 2 ] && [ "$nsh" -ge 4 ] && ok || fail "expected at least 2 C and 4 shell examples ($nc, $nsh)"

# ---- inputs the examples name
mkdir -p "$T/run"
cat > "$T/hello.c" <<'C'
#include <stdio.h>
int main(void) { puts("hello"); return 0; }
C
gcc -O2 -o "$T/sample" "$T/hello.c" || fail "sample program"
fixtures() { # dir
  local d=$1
  rm -rf "$d" && mkdir -p "$d" && cd "$d" || return 1
  cp "$T/sample" prog
  printf 'int foo(int x) { return x * 3; }\n' > foo.c
  printf 'int bar(int x); int bar(int x) { return x + 1; }\n' > bar.c
  gcc -O2 -fasynchronous-unwind-tables -c foo.c bar.c
  mkdir -p debian/hello/usr/bin debian/.debhelper/hello/dbgsym-root rpmroot/usr/bin
  cp "$T/sample" debian/hello/usr/bin/hello
  cp "$T/sample" rpmroot/usr/bin/hello
  cd "$ROOT"
}

# ---- C
CW=(-Wall -Wextra -Werror -pedantic -I"$ROOT/include")
run_c() { # file
  local f=$1 b
  b=$(basename "$f" .c)
  if ! grep -q 'int main(' "$f"; then
    { echo '#include <eh2sframe.h>'; cat "$f"; } > "$T/$b.decl.c"
    gcc -std=c11 "${CW[@]}" -c -o "$T/$b.o" "$T/$b.decl.c" 2>"$T/err" && ok ||
      fail "$b: declarations do not match the header: $(head -c 800 "$T/err")"
    return
  fi
  local how
  for how in gcc-static clang-static g++-static gcc-shared; do
    local cc=${how%-*} link=${how#*-} lang=(-std=c11) libs
    command -v "$cc" >/dev/null || { echo "note: no $cc"; continue; }
    [ "$cc" = g++ ] && lang=(-std=c++11 -x c++)
    if [ "$link" = static ]; then libs=("$ROOT/build/libeh2sframe.a" -lz -llzma)
    else libs=(-L"$ROOT/build" -leh2sframe); fi
    if ! $cc "${CW[@]}" "${lang[@]}" -o "$T/$b.$how" "$f" -x none "${libs[@]}" 2>"$T/err"; then
      fail "$b ($how): does not compile: $(head -c 800 "$T/err")"
      continue
    fi
    ok
    local out rc
    out=$(cd "$T/run" && LD_LIBRARY_PATH="$ROOT/build" "$T/$b.$how" "$T/sample" "$T/run/$b.out" 2>&1); rc=$?
    echo "  $b ($how): exit $rc: $(echo "$out" | head -3 | tr '\n' ' ')"
    [ $rc = 0 ] && ok || fail "$b ($how): exit $rc: $out"
    if [ -e "$T/run/$b.out" ]; then
      "$ROOT/eh2sframe" --verify "$T/run/$b.out" >"$T/verify" 2>&1 && ok ||
        fail "$b ($how): its output does not verify: $(cat "$T/verify")"
      rm -f "$T/run/$b.out"
    fi
  done
}

# ---- shell
run_sh() { # file
  local f=$1 b d rc
  b=$(basename "$f" .sh)
  d=$T/sh-$b
  fixtures "$d" || { fail "$b: fixtures"; return; }
  # make lines: dry runs in the source tree.
  grep -vE '^\s*make( |$)' "$f" > "$T/$b.run.sh"
  while read -r line; do
    # shellcheck disable=SC2086
    (cd "$ROOT" && eval "make -n --no-print-directory ${line#make }" >/dev/null 2>"$T/err") && ok ||
      fail "$b: '$line' (make -n): $(head -c 400 "$T/err")"
  done < <(sed -E 's/[[:space:]]+#.*$//' "$f" | grep -E '^\s*make( |$)')
  grep -q '[^[:space:]]' "$T/$b.run.sh" || return 0
  (cd "$d" && PATH="$ROOT:$PATH" RPM_BUILD_ROOT="$d/rpmroot" bash -e "$T/$b.run.sh") >"$T/out" 2>&1; rc=$?
  echo "  $b: exit $rc: $(head -c 200 "$T/out" | tr '\n' ' ')"
  [ $rc = 0 ] && ok || { cat "$T/$b.run.sh"; fail "$b: exit $rc: $(head -c 800 "$T/out")"; }
}

for f in "$T"/ex/*; do
  case $f in
    *.c) run_c "$f" ;;
    *.sh) run_sh "$f" ;;
  esac
done
echo "lib_examples: $nok checks passed, $nfail failed"
[ $nfail = 0 ]
