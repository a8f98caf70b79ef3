# Shared by the CFI differential tests: choosing input files.

# The files among "$@" that carry .eh_frame or .debug_frame, in order. One
# readelf for all of them: a process per file costs more than the test.
cfi_files() {
  [ $# -gt 0 ] || return 0
  if [ $# -eq 1 ]; then
    readelf -S -W "$1" 2>/dev/null | grep -q ' \.eh_frame \| \.debug_frame ' && echo "$1"
    return 0
  fi
  readelf -S -W "$@" 2>/dev/null |
    awk '/^File: / { f = substr($0, 7); next }
         / \.eh_frame | \.debug_frame / && f != "" { print f; f = "" }'
}

# .o members (at most MAX, spread evenly) of static archive A that carry
# CFI, extracted once into DIR.
archive_objs() { # A MAX DIR
  local a=$1 max=$2 d=$3
  [ -r "$a" ] || return 0
  if [ ! -e "$d/.done" ]; then
    rm -rf "$d"; mkdir -p "$d"
    (cd "$d" && ar x "$a") && touch "$d/.done"
  fi
  local all=() f
  while read -r f; do all+=("$f"); done < <(
    shopt -s nullglob; cfi_files "$d"/*.o)
  local n=${#all[@]} step=1 i
  [ "$n" -gt "$max" ] && step=$(( (n + max - 1) / max ))
  for ((i = 0; i < n; i += step)); do echo "${all[$i]}"; done
}
