#!/usr/bin/env bash
# The inputs of the size figures, one path per line on stdout:
#   bench/size_inputs.sh usrbin [N]   every file of /usr/bin (sorted), or
#                                     with N every Nth of them plus a few
#                                     named programs (a fixed sample)
#   bench/size_inputs.sh libs         the shared libraries (and dynamic
#                                     loader) of python3, perl and gdb, and
#                                     the python modules _ssl, _sqlite3,
#                                     _hashlib and _ctypes with theirs
# Used by bench/run.sh and tests/e2e/size_usrbin.sh.
set -u
case ${1:-} in
usrbin)
  find /usr/bin -maxdepth 1 -type f | LC_ALL=C sort >"${TMPDIR:-/tmp}/size_inputs.$$"
  if [ -n "${2:-}" ]; then
    awk -v n="$2" 'NR % n == 1' "${TMPDIR:-/tmp}/size_inputs.$$"
    for p in true grep ls bash perl python3.11 gdb; do
      [ -f /usr/bin/$p ] && echo /usr/bin/$p
    done
  else
    cat "${TMPDIR:-/tmp}/size_inputs.$$"
  fi | awk '!seen[$0]++'
  rm -f "${TMPDIR:-/tmp}/size_inputs.$$" ;;
libs)
  py=$(readlink -f /usr/bin/python3)
  dyn=$(readlink -f /usr/lib/python3*/lib-dynload 2>/dev/null | head -1)
  mods=()
  for m in _ssl _sqlite3 _hashlib _ctypes; do
    f=$(ls "$dyn"/$m.cpython-*.so 2>/dev/null | head -1)
    [ -n "$f" ] && mods+=("$f")
  done
  for b in "$py" /usr/bin/perl /usr/bin/gdb "${mods[@]}"; do
    [ -e "$b" ] && ldd "$b" 2>/dev/null
  done | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' |
    xargs -r readlink -f | LC_ALL=C sort -u
  printf '%s\n' "${mods[@]}" ;;
*)
  echo "usage: bench/size_inputs.sh usrbin [N] | libs" >&2
  exit 2 ;;
esac
