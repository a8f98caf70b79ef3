#!/usr/bin/env bash
# Interop (c): size and coverage against the reference toolchain. Each test
# program (tests/interop/progs, corpus/c, corpus/cxx) is built in the oracle
# chroot twice with the same flags: with -Wa,--gsframe (gas+ld make .sframe)
# and without; eh2sframe converts the second. Code addresses are identical in
# both, so FDEs compare by function start. Prints per program the functions
# covered by gas+ld and by us, the .sframe sizes, and how many common
# functions get different rules (after merging gas's duplicate FREs).
# Fails when a function gas+ld covers is not covered by us, or when either
# .sframe does not decode with libsframe. Skips (77) without the chroot;
# without ./eh2sframe it only checks the gas+ld side.
set -u
. "$(dirname "$0")/../interop/lib.sh"

sframe_size() { # FILE -> bytes of .sframe (0 if none)
  local h; h=$(readelf -SW "$1" 2>/dev/null | awk '$2 == ".sframe" { print $6 }'); echo $((16#${h:-0}))
}
fdes_of() { # normalised text -> "start kind" per FDE
  awk '$1 == "FDE" { print $2, ($5 == "pc=mask" ? "mask" : "inc") }' "$1"
}

build_progs "-O2"
[ -n "$progs" ] || { echo "SKIP: no test program builds in the chroot"; exit 77; }
convert_all
printf '%-12s %9s %9s %8s %8s %9s %9s %6s\n' program gas-fdes our-fdes gas-only our-only gas-bytes our-bytes differ
tg=0 to=0 tgb=0 tob=0
for n in $progs; do
  g=$work/gas/$n o=$work/ours/$n
  oracle "$check" -s .sframe "$g" >"$work/g.chk" 2>&1 || { fail "$n: libsframe rejects gas+ld .sframe"; continue; }
  $norm --merge "$work/g.chk" >"$work/g.n"
  gb=$(sframe_size "$g")
  if [ -z "$e2s" ] || [ ! -f "$o" ]; then
    printf '%-12s %9d %9s %8s %8s %9d %9s %6s\n' "$n" "$(grep -c '^FDE' "$work/g.n")" - - - "$gb" - -
    continue
  fi
  oracle "$check" "$o" >"$work/o.chk" 2>&1 || { fail "$n: libsframe rejects our .sframe"; continue; }
  $norm --merge "$work/o.chk" >"$work/o.n"
  ob=$(sframe_size "$o")
  fdes_of "$work/g.n" | sort >"$work/g.f"
  fdes_of "$work/o.n" | sort >"$work/o.f"
  gonly=$(comm -23 <(cut -d' ' -f1 "$work/g.f") <(cut -d' ' -f1 "$work/o.f") | wc -l)
  oonly=$(comm -13 <(cut -d' ' -f1 "$work/g.f") <(cut -d' ' -f1 "$work/o.f") | wc -l)
  # Functions in both whose merged FRE lists differ.
  differ=0
  for s in $(comm -12 <(cut -d' ' -f1 "$work/g.f") <(cut -d' ' -f1 "$work/o.f")); do
    if ! diff -q <(awk -v s="$s" '$1 == "FRE" && $2 == s' "$work/g.n") \
                 <(awk -v s="$s" '$1 == "FRE" && $2 == s' "$work/o.n") >/dev/null; then
      differ=$((differ + 1))
      known=
      grep -q "^$s mask" "$work/g.f" && known=" [ld's PLT rules, e.g. .plt.got sp+16 vs its .eh_frame sp+8]"
      echo "  $n: rules differ at function $s (gas+ld < > ours)$known:"
      diff <(awk -v s="$s" '$1 == "FRE" && $2 == s' "$work/g.n") \
           <(awk -v s="$s" '$1 == "FRE" && $2 == s' "$work/o.n") | grep '^[<>]' | head -n 4 | sed 's/^/    /'
    fi
  done
  printf '%-12s %9d %9d %8d %8d %9d %9d %6d\n' "$n" "$(wc -l <"$work/g.f")" "$(wc -l <"$work/o.f")" \
    "$gonly" "$oonly" "$gb" "$ob" "$differ"
  tg=$((tg + $(wc -l <"$work/g.f"))) to=$((to + $(wc -l <"$work/o.f"))) tgb=$((tgb + gb)) tob=$((tob + ob))
  if [ "$gonly" -gt 0 ]; then
    fail "$n: $gonly function(s) covered by gas+ld but not by us: $(comm -23 <(cut -d' ' -f1 "$work/g.f") <(cut -d' ' -f1 "$work/o.f") | head -n 5 | tr '\n' ' ')"
  fi
done
echo "total: gas+ld $tg FDEs / $tgb bytes, ours $to FDEs / $tob bytes; $nfail failures"
[ $nfail -eq 0 ]
