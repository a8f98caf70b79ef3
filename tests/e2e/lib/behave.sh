# Behaviour comparisons of an original program with its converted copy,
# shared by every test that runs both (sourced, not run: it exits 0 when
# run directly). A behaviour test fails only when behaviour changed: the
# original runs at least twice first, and when those runs disagree (output
# or exit status) it is "not reproducible, not compared": reported, not
# compared, not a failure -- so a program whose output varies from run to
# run (groff --version: troff's and grops' lines interleave) cannot make
# the verdict depend on the machine or the moment.
#
# behave RUNNER ORIG CONV [ARGS...]
#   Runs "RUNNER ORIG ARGS..." twice, then "RUNNER CONV ARGS..." once, and
#   compares RUNNER's standard output and exit status. RUNNER is a command
#   or shell function that gets the file to run and ARGS (beh_exec runs
#   the file itself); it decides what happens to standard error, the
#   directory, the environment and a time limit. When the converted run
#   differs, the original runs once more: if that third run differs from
#   the first, the original is not reproducible after all.
#   Returns 0 (same), 1 (different) or 2 (original not reproducible), and
#   sets BEH_OUT/BEH_RC (original), BEH_GOT/BEH_GRC (converted) and
#   BEH_WHY (one line: what differed).
# behave_orig RUNNER ORIG [ARGS...]   the first half: 0 reproducible (BEH_OUT,
#   BEH_RC set), 2 not.
# behave_conv RUNNER CONV [ARGS...]   the second half, against BEH_OUT/BEH_RC
#   of the last behave_orig: 0 same, 1 different. For tests comparing
#   several converted variants with one original.
# behave_count LABEL RC   tallies a result (BEH_SAME, BEH_DIFF, BEH_UNREPRO)
#   and remembers LABEL of a not reproducible original; behave_report
#   prints them ("not reproducible, not compared: ...").
# BEH_RUNS (default 2) sets how often the original runs first.
[ "${BASH_SOURCE[0]}" = "$0" ] && exit 0

BEH_RUNS=${BEH_RUNS:-2}
BEH_SAME=0 BEH_DIFF=0 BEH_UNREPRO=0
BEH_UNREPRO_LIST=()

# beh_exec FILE ARGS...: run FILE itself.
beh_exec() { "$@"; }

# One line saying how two results differ: the first differing line.
beh_why() { # OUT1 RC1 OUT2 RC2
  if [ "$1" = "$3" ]; then
    echo "exit status $2 / $4"
    return
  fi
  local d
  d=$(diff <(printf '%s\n' "$1") <(printf '%s\n' "$3") | grep '^[<>]' | head -2 |
        cut -c1-160 | tr '\n' ' ')
  echo "exit status $2 / $4; output: $d"
}

behave_orig() { # RUNNER ORIG ARGS...
  local r=$1 f=$2 i out rc
  shift 2
  BEH_OUT=$("$r" "$f" "$@"); BEH_RC=$?
  for ((i = 1; i < BEH_RUNS; i++)); do
    out=$("$r" "$f" "$@"); rc=$?
    if [ "$out" != "$BEH_OUT" ] || [ $rc != $BEH_RC ]; then
      BEH_WHY="original not reproducible: $(beh_why "$BEH_OUT" $BEH_RC "$out" $rc)"
      return 2
    fi
  done
  BEH_WHY=
  return 0
}

behave_conv() { # RUNNER CONV ARGS...
  local r=$1 f=$2
  shift 2
  BEH_GOT=$("$r" "$f" "$@"); BEH_GRC=$?
  if [ "$BEH_GOT" = "$BEH_OUT" ] && [ $BEH_GRC = $BEH_RC ]; then
    BEH_WHY=
    return 0
  fi
  BEH_WHY=$(beh_why "$BEH_OUT" $BEH_RC "$BEH_GOT" $BEH_GRC)
  return 1
}

behave() { # RUNNER ORIG CONV ARGS...
  local r=$1 o=$2 c=$3 out rc
  shift 3
  behave_orig "$r" "$o" "$@" || return 2
  behave_conv "$r" "$c" "$@" && return 0
  local why=$BEH_WHY
  out=$("$r" "$o" "$@"); rc=$?
  if [ "$out" != "$BEH_OUT" ] || [ $rc != $BEH_RC ]; then
    BEH_WHY="original not reproducible: $(beh_why "$BEH_OUT" $BEH_RC "$out" $rc)"
    return 2
  fi
  BEH_WHY=$why
  return 1
}

behave_count() { # LABEL RC
  case $2 in
    0) BEH_SAME=$((BEH_SAME + 1)) ;;
    2) BEH_UNREPRO=$((BEH_UNREPRO + 1)); BEH_UNREPRO_LIST+=("$1: $BEH_WHY") ;;
    *) BEH_DIFF=$((BEH_DIFF + 1)) ;;
  esac
}

behave_report() {
  [ ${#BEH_UNREPRO_LIST[@]} = 0 ] && return 0
  echo "not reproducible, not compared (${#BEH_UNREPRO_LIST[@]}):"
  printf '  %s\n' "${BEH_UNREPRO_LIST[@]}"
}
