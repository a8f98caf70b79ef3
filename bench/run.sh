#!/usr/bin/env bash
# eh2sframe benchmark (`make bench`); results go to bench/RESULTS.md.
#   BENCH_QUICK=1   about a minute: fewer runs, small synthetic inputs,
#                   reference-assembler size table only if already cached
#   BENCH_FULL=1    adds the 1M-function synthetic input (~800 MB file)
#   BENCH_RUNS=N    runs per (input, tool); median reported
#   BENCH_WORK=DIR  scratch directory (default /tmp/bench/work)
#   BENCH_NO_ORACLE=1  skip the reference-assembler size comparison
#   BENCH_NO_SIZE=1    skip the size-on-disk sweep (/usr/bin, libraries)
#   BENCH_TREE=DIR     tree-mode input (default /usr/bin)
#   BENCH_NO_TREE=1    skip the tree-mode comparison with cp -a
#   BENCH_TREE_RUNS=N  rounds of the tree comparison (default 7, 1 quick)
#   BENCH_TREE_FS=M    where the trees go: tmpfs (default: a tmpfs mounted
#                      under WORK, as root; else under WORK), here (under
#                      WORK), or loop (a fresh journaled ext4 image on a
#                      loop device, as root)
#   BENCH_ONLY_TREE=1  only the tree comparison: no per-input runs, profile,
#                      size tables; the report goes to BENCH_OUT, by default
#                      WORK/RESULTS-tree.md (bench/RESULTS.md is left alone)
#   BENCH_OUT=FILE     where the report is written (default bench/RESULTS.md)
#   BENCH_HOLD_FREED_MS=MS  on a VM that hands freed guest memory back to the
#                      host at once (free page reporting with min_free_ms,
#                      /sys/module/page_reporting; as root): keep freed pages
#                      MS ms before handing them back (default 60000), for
#                      the whole run, set back at the end; "no" leaves it.
#                      A timed command then fills page cache the host still
#                      backs, instead of paying a host fault per fresh page
#                      because the previous round's trees were just removed
#   BENCH_BASELINE=REV also convert with eh2sframe built from git revision
#                      REV (or the path of an eh2sframe binary): before/after,
#                      timed beside the others (tool "baseline") and in the
#                      size sweep
# Writes bench/RESULTS.md (or BENCH_OUT) and prints the same tables.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
work=${BENCH_WORK:-/tmp/bench/work}
mkdir -p "$work/bin" "$work/in" "$work/out"
quick=${BENCH_QUICK:-0}
full=${BENCH_FULL:-0}
only_tree=${BENCH_ONLY_TREE:-0}
if [ "$only_tree" = 1 ]; then
  out_md=${BENCH_OUT:-$work/RESULTS-tree.md}
else
  out_md=${BENCH_OUT:-bench/RESULTS.md}
fi
if [ "$quick" = 1 ]; then
  runs=${BENCH_RUNS:-3}; rep=0.3; synth="1000 10000"
else
  runs=${BENCH_RUNS:-11}; rep=1.0; synth="1000 10000 100000"
fi
[ "$full" = 1 ] && synth="$synth 1000000"
say() { echo "bench: $*" >&2; }

[ -x ./eh2sframe ] && [ -f build/libeh2sframe-internal.a ] || { say "run 'make all' first"; exit 1; }
WFLAGS="-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes"
cc=${CC:-gcc}
# Snapshot the tool: the tree may be rebuilt while the benchmark runs.
cp ./eh2sframe "$work/bin/eh2sframe"
e2s=$work/bin/eh2sframe
$cc $WFLAGS -o "$work/bin/gen_synth" bench/gen_synth.c -lm
$cc $WFLAGS -o "$work/bin/rtime" bench/rtime.c
$cc $WFLAGS -o "$work/bin/replace_floor" bench/replace_floor.c
$cc $WFLAGS -fPIC -shared -o "$work/bin/prefault.so" bench/prefault.c
rt=$work/bin/rtime
$cc $WFLAGS -Isrc -o "$work/bin/convert_only" bench/convert_only.c build/libeh2sframe-internal.a -lz -llzma

dwarfdump=$(command -v llvm-dwarfdump-14 || command -v llvm-dwarfdump || true)
[ -n "$dwarfdump" ] || say "llvm-dwarfdump not found (Debian package llvm-14): column skipped"

# ---- inputs -------------------------------------------------------------
inputs=()
[ "$only_tree" = 1 ] || for f in /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1 /usr/lib/llvm-14/bin/clang \
         /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /lib/x86_64-linux-gnu/libc.so.6 \
         /usr/bin/python3.11; do
  r=$(readlink -f "$f" 2>/dev/null || true)
  # grep reads all of readelf's output: with pipefail, grep -q quitting
  # early could kill readelf with SIGPIPE and drop the input at random.
  if [ -n "$r" ] && [ -f "$r" ] && [ "$(readelf -SW "$r" 2>/dev/null | grep -c ' \.eh_frame ')" -gt 0 ]; then
    inputs+=("$r")
  else
    say "skipping missing input $f"
  fi
done
[ "$only_tree" = 1 ] || for n in $synth; do
  f=$work/in/synth-$n
  [ -f "$f" ] || "$work/bin/gen_synth" "$n" "$f" >/dev/null
  inputs+=("$f")
done

# ---- machine ------------------------------------------------------------
raw=$work/raw.tsv stats=$work/stats.tsv
{
  echo "nproc=$(nproc)"
  echo "cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1)"
  echo "mem=$(free -m | awk '/^Mem:/ {print $2 " MiB"}')"
  echo "kernel=$(uname -r)"
  echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "runs=$runs"
  echo "mode=$([ "$quick" = 1 ] && echo quick || echo default)$([ "$full" = 1 ] && echo +full)$([ "$only_tree" = 1 ] && echo +only-tree)"
  echo "readelf=$(readelf --version | head -n1)"
  [ -n "$dwarfdump" ] && echo "dwarfdump=$($dwarfdump --version | grep -m1 -i version | sed 's/^ *//')"
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$work/machine.txt"

# ---- freed memory and the host (BENCH_HOLD_FREED_MS) ---------------------------
prmf=/sys/module/page_reporting/parameters/min_free_ms
hold_old=
restore_hold() { [ -z "$hold_old" ] || echo "$hold_old" >"$prmf" || true; }
hold=${BENCH_HOLD_FREED_MS:-60000}
if [ "$hold" != no ] && [ -e "$prmf" ]; then
  if [ -w "$prmf" ] && hold_old=$(cat "$prmf") && echo "$hold" >"$prmf"; then
    trap restore_hold EXIT
    say "freed pages kept $hold ms before the host takes them back (was $hold_old; BENCH_HOLD_FREED_MS=no leaves it)"
  else
    hold_old=
    say "cannot write $prmf (root): freed pages go back to the host as the system says"
  fi
fi
[ -r "$prmf" ] && echo "page_reporting_min_free_ms=$(cat "$prmf")$([ -n "$hold_old" ] && echo " (BENCH_HOLD_FREED_MS; $hold_old before the run)")" >>"$work/machine.txt"

# ---- the baseline eh2sframe (BENCH_BASELINE) --------------------------------
basebin=
if [ -n "${BENCH_BASELINE:-}" ]; then
  if [ -x "$BENCH_BASELINE" ]; then
    cp "$BENCH_BASELINE" "$work/bin/baseline" && basebin=$work/bin/baseline
  elif git -C "$repo" rev-parse -q --verify "$BENCH_BASELINE^{commit}" >/dev/null; then
    say "building the baseline eh2sframe of $BENCH_BASELINE"
    rm -rf "$work/baseline" && mkdir -p "$work/baseline"
    git -C "$repo" archive "$BENCH_BASELINE" | tar -x -C "$work/baseline" &&
      make -s -C "$work/baseline" -j2 eh2sframe >/dev/null &&
      basebin=$work/baseline/eh2sframe || say "baseline build failed"
  else
    say "BENCH_BASELINE=$BENCH_BASELINE is neither a program nor a revision"
  fi
fi
echo "baseline=${BENCH_BASELINE:-none}" >>"$work/machine.txt"

# ---- timed runs, interleaved ---------------------------------------------
tools=(eh2sframe stats convert cp readelf)
[ -n "$dwarfdump" ] && tools+=(dwarfdump)
[ -n "$basebin" ] && tools+=(baseline)
# What fresh memory costs: eh2sframe -o with its heap faulted in before
# main by bench/prefault.c (prefaulted), that shim alone (shim: --version
# under it) and --version alone (start). prefaulted - shim + start is the
# tool's cost had its arrays cost no first touches (report.py).
tools+=(prefaulted shim start)
declare -A pf_mb # input -> MiB of heap to fault in: 6 per MB of .eh_frame, + 8
# (libLLVM-14 aligns a few arrays of MiBs to 2 MiB in it: with 4 per MB
# some landed past it, in some runs and not others, which report.py
# marked NO)
for in in "${inputs[@]}"; do
  h=$(readelf -SW "$in" | awk '{ for (i = 1; i < NF; i++) if ($i == ".eh_frame") { print $(i + 4); exit } }')
  pf_mb[$in]=$(( (16#${h:-0} * 6 >> 20) + 8 ))
done
printf 'input\ttool\trun\tuser\tsys\trss_kb\twall\tminflt\n' >"$raw"
t=$work/time.txt
measure() { # input tool run
  local in=$1 tool=$2 run=$3 out=$work/out/$(basename "$1").out
  rm -f "$out"
  case $tool in
    eh2sframe) "$rt" "$t" "$e2s" -q "$in" -o "$out" ;;
    baseline)  "$rt" "$t" "$basebin" -q "$in" -o "$out" ;;
    stats)     "$rt" "$t" "$e2s" --stats "$in" >/dev/null ;;
    convert)   "$rt" "$t" "$work/bin/convert_only" "$in" >/dev/null ;;
    cp)        "$rt" "$t" cp "$in" "$out" ;;
    # The comparison tools may exit non-zero over warnings: time them anyway.
    readelf)   "$rt" "$t" readelf --debug-dump=frames-interp "$in" >/dev/null 2>&1 || true ;;
    dwarfdump) "$rt" "$t" "$dwarfdump" --eh-frame "$in" >/dev/null 2>&1 || true ;;
    # env for both shim runs, so that its start-up cancels out.
    prefaulted) "$rt" "$t" env LD_PRELOAD="$work/bin/prefault.so" \
                  BENCH_PREFAULT_MB="${pf_mb[$in]}" "$e2s" -q "$in" -o "$out" ;;
    shim)      "$rt" "$t" env LD_PRELOAD="$work/bin/prefault.so" \
                  BENCH_PREFAULT_MB="${pf_mb[$in]}" "$e2s" --version >/dev/null ;;
    start)     "$rt" "$t" "$e2s" --version >/dev/null ;;
  esac || { say "$tool failed on $in (exit $?)"; exit 1; }
  read -r u s m e _ f <"$t"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$in" "$tool" "$run" "$u" "$s" "$m" "$e" "$f" >>"$raw"
}
start=$SECONDS
[ ${#inputs[@]} -gt 0 ] && for ((r = 1; r <= runs; r++)); do
  say "run $r/$runs ($((SECONDS - start))s)"
  # A new order for every input of every run (seeded: the same each
  # time the bench runs). A rotation kept the cycle, so each tool always
  # followed the same one (the baseline came after dwarfdump, the largest
  # memory user): shuffled, what a command leaves behind (memory the host
  # takes back, page cache) falls on every tool alike.
  seed=0
  for in in "${inputs[@]}"; do
    seed=$((seed + 1))
    read -r -a order < <(python3 -c 'import random, sys
t = sys.argv[2:]; random.Random(int(sys.argv[1])).shuffle(t); print(*t)' \
      "$((r * 1000 + seed))" "${tools[@]}")
    for tool in "${order[@]}"; do
      measure "$in" "$tool" "$r"
    done
  done
done

# ---- per-input statistics: sizes and in-memory phase times ---------------
: >"$stats"
sec() { # FILE NAME -> size of section NAME in bytes (0 if none)
  local h
  h=$(readelf -SW "$1" | awk -v n="$2" '{ for (i = 1; i < NF; i++) if ($i == n) { print $(i + 4); exit } }')
  echo $((16#${h:-0}))
}
for in in "${inputs[@]}"; do
  out=$work/out/$(basename "$in").sf
  "$e2s" -q "$in" -o "$out"
  "$e2s" --verify "$out" >"$work/verify.txt" 2>&1 || say "verify failed on $in: $(tail -n1 "$work/verify.txt")"
  line=$("$work/bin/convert_only" -r "$rep" "$in")
  # --no-share-fres: every function's FREs stored (the default shares
  # identical FRE lists on little-endian targets).
  "$e2s" -q --no-share-fres "$in" -o "$out.unshared"
  "$e2s" --verify "$out.unshared" >"$work/verify-unshared.txt" 2>&1 ||
    say "verify failed on unshared $in: $(tail -n1 "$work/verify-unshared.txt")"
  same=none
  if [ -n "$basebin" ]; then
    rm -f "$out.base"
    "$basebin" -q "$in" -o "$out.base" && cmp -s "$out" "$out.base" && same=yes || same=no
    rm -f "$out.base"
  fi
  # The prefaulted runs write the same file (another allocator layout).
  rm -f "$out.pf"
  LD_PRELOAD="$work/bin/prefault.so" BENCH_PREFAULT_MB="${pf_mb[$in]}" \
    "$e2s" -q "$in" -o "$out.pf" && cmp -s "$out" "$out.pf" && same_pf=yes || same_pf=no
  rm -f "$out.pf"
  printf '%s file_bytes=%s hdr_bytes=%s out_sframe_bytes=%s unshared_sframe_bytes=%s same_as_baseline=%s same_prefaulted=%s verify=%s verify_unshared=%s\n' "$line" \
    "$(stat -c %s "$in")" "$(sec "$in" .eh_frame_hdr)" "$(sec "$out" .sframe)" \
    "$(sec "$out.unshared" .sframe)" "$same" "$same_pf" "$(tail -n1 "$work/verify.txt" | tr ' ' ',')" \
    "$(tail -n1 "$work/verify-unshared.txt" | tr ' ' ',')" >>"$stats"
  rm -f "$out" "$out.unshared"
done
# ---- tree mode: a whole directory, -j2, against copying it --------------
# cp -a's CPU time for the same tree varies 3x between runs on a shared VM
# (nearly all of it system time), so a single run decides nothing. Each
# round times `cp -a SRC COPY` and `eh2sframe -q --in-place -r -j 2 COPY`;
# the report judges the median of the per-round ratios. Before each timed
# command the state is settled:
#  - the previous round's trees are removed before the round, not while a
#    timed command runs, and `sync` runs just before each timed command, so
#    neither command pays for the other's dirty pages or freed files;
#  - the source stays in the page cache (no drop_caches): both read it warm;
#  - an untimed warm-up (cp -a, conversion, removal) comes first: the first
#    timed cp -a of a run was otherwise 2-4x slower than the rest (likely
#    because its page cache came from memory left idle, which the virtio
#    balloon's free page reporting had handed back to the host, while
#    later rounds reuse pages the previous round just freed);
#  - the order goes through all six orders of three commands: cp -a into
#    B; the conversion of A; the replace floor (bench/replace_floor) on C,
#    A and C made by an untimed cp -a at the start of the round. Round 1
#    times cp -a, eh2sframe, floor; round 2 eh2sframe, floor, cp -a; round
#    3 floor, cp -a, eh2sframe; rounds 4-6 the reverse cycle (cp -a, floor,
#    eh2sframe...). Order matters on a filesystem that skips recently deleted
#    inodes (ext4 without a journal): a command that follows one which
#    replaced files pays for the inodes it freed.
# The replace floor replaces the files the warm-up converted (one name per
# inode) by copies of themselves, each written to a temporary next to it and
# renamed over it, batched and synced as tree mode does, converting nothing:
# what the atomic-replace rule costs any in-place tool. eh2sframe's CPU
# above it is the conversion and its own overheads.
# Steal time (the cpu line of /proc/stat, 8th value: time the hypervisor
# gave this VM's CPUs to someone else) is read around each timed command
# and over the whole section, as evidence of noisy neighbours.
treesrc=${BENCH_TREE:-/usr/bin}
tree_tsv=$work/tree.tsv
printf 'run\ttool\tuser\tsys\trss_kb\twall\tfiles\tbytes\tpos\tsteal_s\n' >"$tree_tsv"
if [ "${BENCH_NO_TREE:-0}" != 1 ] && [ -d "$treesrc" ]; then
  # fs_of DIR: "TYPE DEVICE JOURNAL" (JOURNAL yes/no for ext4, else -).
  fs_of() {
    local dev typ j jnl=-
    dev=$(df --output=source "$1" | tail -n1)
    typ=$(df --output=fstype "$1" | tail -n1)
    if [ "$typ" = ext4 ]; then
      jnl=no
      for j in /proc/fs/jbd2/*; do
        case ${j##*/} in "${dev##*/}"-*) jnl=yes ;; esac
      done
    fi
    echo "$typ $dev $jnl"
  }
  # ext4 without a journal makes every new inode skip the inodes deleted in
  # the last minutes (recently_deleted()), so cp -a's and eh2sframe's costs
  # there follow how recently earlier trees were removed. BENCH_TREE_FS=loop
  # puts the trees on a fresh ext4 with a journal, mounted from an image
  # under WORK. Not the default: a loop device caches every page twice (its
  # filesystem's and the image file's), so every command there fills twice
  # the fresh memory, and on a VM that hands freed memory back to the host
  # that made cp -a slower and more variable (0.3-1.5 s against 0.2-0.5 s).
  # tmpfs, the default: cp -a's CPU time there varied 0.33-0.47 s over 14
  # rounds, against 0.24-1.47 s on this machine's ext4 (no journal): no
  # inode allocator that follows earlier removals, no block allocation, no
  # writeback. Both commands pay the same per byte copied.
  tdir=$work tmnt= timg=
  tfs_mode=${BENCH_TREE_FS:-tmpfs}
  if [ "$tfs_mode" = tmpfs ]; then
    tmnt=$work/tree-tmpfs
    mkdir -p "$tmnt"
    if [ "$(id -u)" = 0 ] &&
       mount -t tmpfs -o size=$(( ($(du -sb "$treesrc" | cut -f1) * 4 >> 20) + 512 ))M tmpfs "$tmnt"; then
      tdir=$tmnt
      trap 'umount "$tmnt" 2>/dev/null; restore_hold' EXIT
    else
      say "tree: could not mount a tmpfs (root); the trees stay under $work"
      tmnt=
    fi
  elif [ "$tfs_mode" = loop ]; then
    timg=$work/tree-fs.img tmnt=$work/tree-mnt
    mkdir -p "$tmnt"
    if [ "$(id -u)" = 0 ] && command -v mkfs.ext4 >/dev/null &&
       truncate -s $(( ($(du -sb "$treesrc" | cut -f1) * 4 >> 20) + 512 ))M "$timg" &&
       mkfs.ext4 -q -F "$timg" && mount -o loop "$timg" "$tmnt"; then
      tdir=$tmnt
      trap 'umount "$tmnt" 2>/dev/null; rm -f "$timg"; restore_hold' EXIT
    else
      say "tree: could not mount a journaled ext4 image (root, mkfs.ext4, loop devices); the trees stay under $work"
      rm -f "$timg"; tmnt= timg=
    fi
  fi
  treea=$tdir/tree treeb=$tdir/tree-b treec=$tdir/tree-c
  floor_list=$work/tree-floor.list
  hz=$(getconf CLK_TCK)
  steal() { awk '$1 == "cpu" { print $9; exit }' /proc/stat; }
  secs() { awk -v a="$1" -v b="$2" -v hz="$hz" 'BEGIN { printf "%.2f", (b - a) / hz }'; }
  nfiles=$(find "$treesrc" -type f | wc -l)
  tbytes=$(du -sb "$treesrc" | cut -f1)
  truns=${BENCH_TREE_RUNS:-$([ "$quick" = 1 ] && echo 1 || echo 7)}
  tree_timed() { # ROUND POSITION cp|e2s DIR: settle, then time one command
    local s0 s1 label
    sync
    s0=$(steal)
    if [ "$3" = cp ]; then
      label="cp -a"
      "$rt" "$t" cp -a "$treesrc" "$4" || { say "cp -a failed"; return 1; }
    elif [ "$3" = floor ]; then
      label="replace floor"
      "$rt" "$t" "$work/bin/replace_floor" "$floor_list" "$4" ||
        say "replace floor reported failures"
    else
      label="eh2sframe -j2"
      "$rt" "$t" "$e2s" -q --in-place -r -j 2 "$4" ||
        say "tree conversion reported failures (exit $(cut -d' ' -f5 "$t"))"
    fi
    s1=$(steal)
    read -r u s m e _ <"$t"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$label" "$u" "$s" "$m" "$e" \
      "$nfiles" "$tbytes" "$2" "$(secs "$s0" "$s1")" >>"$tree_tsv"
  }
  rm -rf "$treea" "$treeb" "$treec"
  say "tree warm-up (untimed)"
  cp -a "$treesrc" "$treea" && "$e2s" -q --in-place -r -j 2 "$treea" || true
  # The files the conversion replaced (their bytes changed), one name per
  # inode: the replace floor's list.
  (cd "$treea" && find . -type f -printf '%i %P\n' | sort -k1,1n -u -s |
     while read -r _ f; do cmp -s "$f" "$treesrc/$f" || printf '%s\n' "$f"; done) >"$floor_list"
  rm -rf "$treea"
  # The conversion alone: bench/convert_only over the same files (their
  # originals), in memory with warm caches, fastest of repeats: parse,
  # interpret, project and encode, no mapping, copying or renaming. Added
  # to the replace floor, it is the least an in-place converter built on
  # this core could cost (report.py sums the lines as the core column);
  # user time, hardly moved by the machine's page-cache noise.
  say "tree: the conversion alone, in memory, per file"
  while read -r f; do
    "$work/bin/convert_only" -r 0.003 "$treesrc/$f" || echo "failed=1 file=$treesrc/$f"
  done <"$floor_list" >"$work/tree-core.txt"
  # The host takes back guest memory freed on a VM with free page
  # reporting (virtio-balloon); a page it took costs a host fault when next
  # written. Recorded, not changed: how much it took during the section.
  prep=/sys/module/page_reporting/parameters/reported_kib
  rep0=$(cat "$prep" 2>/dev/null || echo -)
  tstart=$(date +%s.%N) steal0=$(steal)
  for ((r = 1; r <= truns; r++)); do
    # All six orders in turn: each command first in two rounds of six,
    # and right after each other one as often (a rotation of one order
    # kept eh2sframe always after cp -a).
    case $((r % 6)) in
      1) order="cp e2s floor" ;; 2) order="e2s floor cp" ;; 3) order="floor cp e2s" ;;
      4) order="cp floor e2s" ;; 5) order="e2s cp floor" ;; *) order="floor e2s cp" ;;
    esac
    [ -s "$floor_list" ] || order=${order/floor/}
    say "tree round $r/$truns: $treesrc ($nfiles files), order: $order"
    cp -a "$treesrc" "$treea" || { say "cp -a failed"; break; }
    case $order in *floor*) cp -a "$treesrc" "$treec" || { say "cp -a failed"; break; } ;; esac
    pos=0 ok=1
    for tool in $order; do
      pos=$((pos + 1))
      case $tool in
        cp) tree_timed "$r" "$pos" cp "$treeb" || { ok=0; break; } ;;
        e2s) tree_timed "$r" "$pos" e2s "$treea" ;;
        floor) tree_timed "$r" "$pos" floor "$treec" ;;
      esac
    done
    rm -rf "$treea" "$treeb" "$treec"
    [ "$ok" = 1 ] || break
  done
  rm -rf "$treea" "$treeb" "$treec"
  read -r ttyp tdev tjnl < <(fs_of "$tdir")
  if [ -n "$tmnt" ]; then
    umount "$tmnt" && { [ -z "$timg" ] || rm -f "$timg"; }
    trap restore_hold EXIT
  fi
  rep1=$(cat "$prep" 2>/dev/null || echo -)
  { echo "tree_floor_files=$(wc -l <"$floor_list")"
    [ "$rep0" = - ] || echo "tree_reported_mib=$(( (rep1 - rep0) >> 10 ))"
    echo "tree_fs=$ttyp$([ -n "$timg" ] && echo " (a fresh image on a loop device, BENCH_TREE_FS)")$([ -n "$tmnt" ] && [ -z "$timg" ] && echo " (mounted for the bench, BENCH_TREE_FS)") on $tdev, journal: $tjnl"
  } >>"$work/machine.txt"
  steal1=$(steal)
  { echo "tree_rounds=$truns"
    echo "tree_seconds=$(awk -v a="$tstart" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
    echo "tree_steal_s=$(secs "$steal0" "$steal1")"
  } >>"$work/machine.txt"
fi

# ---- profile: where eh2sframe -o spends its cycles on the largest real input
prof=$work/profile.txt
rm -f "$prof"
if [ ${#inputs[@]} -eq 0 ]; then
  : # BENCH_ONLY_TREE: nothing to profile
elif command -v perf >/dev/null; then
  big=$(ls -S "${inputs[@]}" | grep -v '/synth-' | head -n1 || true)
  if [ -n "$big" ]; then
    pd=$work/perf.data
    # Several runs in one profile: each is short.
    if perf record -q -F 10000 -o "$pd" -- sh -c 'for i in 1 2 3 4 5; do "$0" -q "$1" -o "$2"; done' \
         "$e2s" "$big" "$work/out/profile.out" >/dev/null 2>&1; then
      { echo "input=$big"
        perf report -i "$pd" --stdio --no-children --sort dso,sym 2>/dev/null | grep -v '^#' | grep -v '^$' || true
      } >"$prof"
    else
      say "perf record failed: no profile"
    fi
    rm -f "$pd" "$work/out/profile.out"
  fi
else
  say "perf not found: no profile"
fi

echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$work/machine.txt"
echo "bench_seconds=$((SECONDS - start))" >>"$work/machine.txt"

# ---- reference assembler size comparison (sid chroot) ------------------
oracle_tsv=$work/oracle/sizes.tsv
if [ "${BENCH_NO_ORACLE:-0}" != 1 ] && [ "$only_tree" != 1 ]; then
  if [ "$quick" = 1 ] && [ ! -f "$oracle_tsv" ]; then
    say "quick mode: reference-assembler size table not cached, skipped (run make bench once)"
  else
    bash bench/size_oracle.sh "$work/oracle" || say "size comparison failed (see above); table skipped"
  fi
fi

# ---- size on disk: /usr/bin and the libraries of python3, perl, gdb ------
if [ "${BENCH_NO_SIZE:-0}" != 1 ] && [ "$only_tree" != 1 ]; then
  sz=$work/size
  rm -rf "$sz" && mkdir -p "$sz"
  base=()
  [ -n "$basebin" ] && base=(--baseline "$basebin")
  if [ "$quick" = 1 ]; then bash bench/size_inputs.sh usrbin 8; else bash bench/size_inputs.sh usrbin; fi >"$sz/usrbin.list"
  bash bench/size_inputs.sh libs >"$sz/libs.list"
  say "size sweep: $(wc -l <"$sz/usrbin.list") files of /usr/bin, $(wc -l <"$sz/libs.list") libraries"
  python3 bench/size.py --e2s "$e2s" "${base[@]}" --out "$sz/out" --tsv "$sz/usrbin.tsv" \
    --files-from "$sz/usrbin.list" || say "size sweep: eh2sframe failed on some files"
  python3 bench/size.py --e2s "$e2s" "${base[@]}" --out "$sz/out" --tsv "$sz/libs.tsv" \
    --files-from "$sz/libs.list" || say "size sweep: eh2sframe failed on some libraries"
  rm -rf "$sz/out"
fi

python3 bench/report.py "$work" "$out_md"
say "report written to $out_md"
