#!/usr/bin/env bash
# Regenerate the reference objects in this directory with the oracle chroot
# (binutils 2.47 gas --gsframe / ld / objdump --sframe; see README).
# Objects are named .obj and shared objects .dso: they are test data, not
# build outputs of this project.
#   tests/data/gas/make.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
run() { "$repo/tools/in-oracle.sh" sh -c "cd '$here' && $1"; }
gsf() { # TOOLPREFIX NAME [ld args]
  local p=$1 n=$2
  run "${p}as --gsframe -o $n.obj $n.s 2>$n.as-warnings.txt; ${p}objdump --sframe $n.obj > $n.objdump.txt"
  [ -s "$here/$n.as-warnings.txt" ] || rm -f "$here/$n.as-warnings.txt"
}
gsf "" x86_basic
gsf "" x86_cases
gsf aarch64-linux-gnu- aarch64_cases
gsf s390x-linux-gnu- s390x_cases
# Linked shared objects: ld's PLT FDEs (PCTYPE_MASK) and sorted headers.
gsf "" x86_plt
run "ld -shared -o x86_plt.dso x86_plt.obj && objdump --sframe x86_plt.dso > x86_plt.dso.objdump.txt"
gsf s390x-linux-gnu- s390x_plt
run "s390x-linux-gnu-ld -shared -o s390x_plt.dso s390x_plt.obj && s390x-linux-gnu-objdump --sframe s390x_plt.dso > s390x_plt.dso.objdump.txt"
# gcc 16 -O2 output for a small C file (x86-64 only: the chroot has no cross gcc).
run "gcc -O2 -S -o x86_prog.s x86_prog.c && as --gsframe -o x86_prog.obj x86_prog.s && objdump --sframe x86_prog.obj > x86_prog.objdump.txt"
ls -l "$here"
