#!/usr/bin/env bash
# A slice of `make corpus-check` (tools/corpus-check.sh) for `make check`:
# 1. the script's own classification, on a small tree whose outcome is
#    known by construction, with a stand-in converter that crashes, hangs
#    or reports a verify mismatch on chosen files;
# 2. every 25th system ELF file with CFI plus the foreign (arm64, s390x)
#    libc and libstdc++, converted and verified, within a 50 s budget.
# Exit 0 only if both pass; 77 if nothing could be run.
set -u
cd "$(dirname "$0")/../.." || exit 1
skip() { echo "SKIP: $*"; exit 77; }
for t in python3 timeout xargs gcc; do command -v $t >/dev/null || skip "$t not found"; done
[ -x ./eh2sframe ] || skip "./eh2sframe not built"
work=$PWD/build/corpus-slice
rm -rf "$work"
mkdir -p "$work/tree/sub" "$work/bin"
fail=0

# ---- 1. self-check of the harness
t=$work/tree
printf 'int g(int);\nint f(int x) { return g(x) * 3; }\nint g(int x) { return x + 1; }\nint main(void) { return f(1) - 6; }\n' >"$work/p.c"
gcc -O1 -o "$t/prog" "$work/p.c" || { echo "FAIL: gcc"; exit 1; }
gcc -O1 -fno-asynchronous-unwind-tables -fno-exceptions -c -o "$t/nocfi.o" "$work/p.c"
want="crash-me=crash hang-me=hang mismatch-me=mismatch prog=ok trunc=fail"
# Clean notices, when the toolchain can make them: an .sframe from gas
# (binutils >= 2.40) and a 32-bit object.
gcc -O1 -Wa,--gsframe -o "$t/withsf" "$work/p.c" 2>/dev/null && want="$want withsf=had-sframe"
gcc -m32 -c -o "$t/x32.o" "$work/p.c" 2>/dev/null && want="$want x32.o=unsupported"
want=$(echo "$want" | tr ' ' '\n' | sort | tr '\n' ' ')
cp "$t/prog" "$t/sub/crash-me"
cp "$t/prog" "$t/sub/hang-me"
cp "$t/prog" "$t/sub/mismatch-me"
head -c 3000 "$t/prog" >"$t/trunc"
ln "$t/prog" "$t/sub/hardlink"
ln -s prog "$t/symlink"
echo 'not ELF' >"$t/readme"
real=$PWD/eh2sframe
cat >"$work/bin/fake" <<EOF
#!/usr/bin/env bash
# Stand-in converter: crash, hang or fake a mismatch on named files.
if [ "\$1" = --verify ] && [ -e "\$2.mm" ]; then
  echo "functions=3 match=2 mismatch=1 missing=0 skipped=0 extra=0"
  echo "mismatch 0x1000 f: fake difference"
  exit 1
fi
case \$1 in
  */crash-me) kill -SEGV \$\$ ;;
  */hang-me) exec sleep 60 ;;
  */mismatch-me) "$real" "\$@" && touch "\$3.mm"; exit ;;
esac
exec "$real" "\$@"
EOF
chmod +x "$work/bin/fake"
CORPUS_ROOTS=$t CORPUS_FOREIGN=none CORPUS_TIMEOUT=3 CORPUS_SECONDS=40 \
  CORPUS_BIN=$work/bin/fake CORPUS_WORK=$work/self bash tools/corpus-check.sh >"$work/self.log" 2>&1
src=$?
got=$(awk -F'\t' '{n = split($4, p, "/"); print p[n] "=" $1}' "$work/self/results.tsv" | sort | tr '\n' ' ')
# The hard link and prog are one inode: whichever name the walk meets first.
got=${got/hardlink=ok/prog=ok}
if [ "$src" = 1 ] && [ "$got" = "$want" ] &&
   grep -q 'FAILURES.*: 4$' "$work/self.log" &&
   grep -q '^  \[amd64\] .*/nocfi.o$' "$work/self.log"; then
  echo "self-check: PASS (exit $src; $got; nocfi.o listed as no CFI)"
else
  echo "self-check: FAIL (exit $src, want 1; got '$got', want '$want')"
  cat "$work/self.log"
  fail=1
fi

# Clean notices alone (real converter) must not fail the run.
c=$work/clean
mkdir -p "$c"
for f in prog withsf x32.o nocfi.o readme; do [ -e "$t/$f" ] && cp "$t/$f" "$c/"; done
CORPUS_ROOTS=$c CORPUS_FOREIGN=none CORPUS_SECONDS=40 CORPUS_WORK=$work/clean-run \
  bash tools/corpus-check.sh >"$work/clean.log" 2>&1
crc=$?
if [ $crc = 0 ] && grep -q '^RESULT: PASS' "$work/clean.log"; then
  echo "self-check (clean notices only): PASS"
else
  echo "self-check (clean notices only): FAIL (exit $crc, want 0)"
  cat "$work/clean.log"
  fail=1
fi

# ---- 2. the slice
CORPUS_SAMPLE=25 CORPUS_FOREIGN=core CORPUS_SECONDS=50 CORPUS_TIMEOUT=60 \
  CORPUS_WORK=$work/slice bash tools/corpus-check.sh
rc=$?
rm -rf "$t" "$c"
[ $rc = 77 ] && [ $fail = 0 ] && skip "corpus slice: nothing to run"
[ $rc = 0 ] && [ $fail = 0 ] && exit 0
exit 1
