#!/usr/bin/env bash
# The unchanged stretches of a converted file are copied by the kernel
# (copy_file_range), which moves a pipe's worth, 16 pages, a round. The
# page cache gets large folios only for rounds that start on a multiple
# of that, so the writer starts each long copy with a short one that
# ends on that grid: an output whose contents moved by a page for the
# new program headers (python3.11) otherwise pays a third more CPU for
# its copy. Checked from outside, with strace on the output descriptor:
#   - no copy that starts off the grid runs past the next grid line;
#   - some input did start off the grid and went on in a second copy,
#     so the rule was exercised, and copied most of its bytes on it;
#   - the output is the same, byte for byte, as the one written to a
#     pipe (-o /dev/stdout: no copy_file_range), and as a second run's.
set -u
cd "$(dirname "$0")/../.."
E2S=${E2S:-$PWD/eh2sframe}
[ -x "$E2S" ] || { echo "no eh2sframe binary"; exit 77; }
command -v strace >/dev/null || { echo "no strace (tools/install-deps.sh installs it)"; exit 77; }
T=$(mktemp -d /tmp/copy_grid.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0 checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { checks=$((checks + 1)); }
grid=$((16 * $(getconf PAGESIZE)))

ins=() seen=" "
for p in /usr/bin/ls /usr/bin/python3.11 /usr/bin/python3 /usr/bin/perl \
         /lib/x86_64-linux-gnu/libc.so.6; do
  [ -f "$p" ] || continue
  p=$(readlink -f "$p")
  case $seen in *" $p "*) continue ;; esac
  seen="$seen$p " ins+=("$p")
done
[ ${#ins[@]} -gt 0 ] || { echo "no inputs"; exit 77; }

k=0
for p in "${ins[@]}"; do
  k=$((k + 1))
  strace -qq -e trace=openat,write,copy_file_range -o "$T/t$k" \
    "$E2S" -q "$p" -o "$T/o$k" || { fail "${p##*/}: exit $?"; continue; }
  "$E2S" -q "$p" -o "$T/p$k" || fail "${p##*/}: second run: exit $?"
  python3 - "$T/t$k" "$grid" "${p##*/}" >>"$T/report" <<'PY' || fail "${p##*/}: a copy ran past the grid line (see above)"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
grid, name = int(sys.argv[2]), sys.argv[3]
out, pos, bad, off_grid, went_on, on_grid, total = None, 0, 0, 0, 0, 0, 0
prev_off = False
for l in lines:
    m = re.match(r'openat\(.*O_CREAT.*\) = (\d+)', l)
    if m and out is None:
        out = m.group(1); continue
    if out is None:
        continue
    m = re.match(r'write\(' + out + r', .*\) = (\d+)$', l)
    if m:
        pos += int(m.group(1)); prev_off = False; continue
    m = re.match(r'copy_file_range\(\d+, \[\d+\], ' + out + r', NULL, \d+, 0\) = (\d+)$', l)
    if not m:
        continue
    n = int(m.group(1))
    total += n
    if pos % grid:
        off_grid += 1
        if pos + n > (pos // grid + 1) * grid:
            print("%s: copy of %d bytes at %d crosses the grid line %d" %
                  (name, n, pos, (pos // grid + 1) * grid))
            bad += 1
        prev_off = True
    else:
        on_grid += n
        went_on += prev_off
        prev_off = False
    pos += n
print("%s copied=%d on_grid=%d off_grid_starts=%d went_on=%d" %
      (name, total, on_grid, off_grid, went_on))
sys.exit(1 if bad or out is None else 0)
PY
  [ $? = 0 ] && ok
done
cat "$T/report"

# Some input exercised the rule: started off the grid, went on on it, and
# copied most of its bytes there.
awk '{split($2,c,"="); split($3,g,"="); split($5,w,"=");
      if (w[2] > 0 && c[2] > 0 && g[2] * 10 >= c[2] * 9) f = 1}
     END {exit !f}' "$T/report" && ok ||
  fail "no input started a copy off the grid and went on on it"

# Bytes: the copy's split changes nothing (the pipe got write()s only).
k=0
for p in "${ins[@]}"; do
  k=$((k + 1))
  "$E2S" -q "$p" -o /dev/stdout | cat >"$T/q$k"
  cmp -s "$T/o$k" "$T/q$k" && ok || fail "${p##*/}: the file and the pipe differ"
  cmp -s "$T/o$k" "$T/p$k" && ok || fail "${p##*/}: two conversions differ"
done

echo "copy_grid: $checks passed, $fails failed"
[ $fails = 0 ]
