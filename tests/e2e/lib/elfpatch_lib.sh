# Helpers shared by tests/e2e/elfpatch_*.sh (sourced, not run: it does
# not end in a test of its own and exits 0 when run directly).
[ "${BASH_SOURCE[0]}" = "$0" ] && exit 0
E2S=${E2S:-$PWD/eh2sframe}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# check_layout FILE [notie]: .sframe exists, PT_GNU_SFRAME covers exactly
# it, a PT_LOAD maps it at the same address, and PT_PHDR/e_phoff agree and
# lie in a PT_LOAD (readelf is the independent reader); unless notie, the
# table is also at e_phoff + first-load bias (old-style loaders).
check_layout() {
  python3 - "$1" "${2:-}" <<'PY'
import re, subprocess, sys
f = sys.argv[1]
notie = sys.argv[2] == "notie"
env = {"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
lw = subprocess.run(["readelf", "-lW", f], capture_output=True, text=True, env=env).stdout
sw = subprocess.run(["readelf", "-SW", f], capture_output=True, text=True, env=env).stdout
hw = subprocess.run(["readelf", "-hW", f], capture_output=True, text=True, env=env).stdout
phoff = int(re.search(r"Start of program headers:\s+(\d+)", hw).group(1))
phnum = int(re.search(r"Number of program headers:\s+(\d+)", hw).group(1))
segs = []
for m in re.finditer(r"^\s+(\S+)\s+0x([0-9a-f]+) 0x([0-9a-f]+) 0x([0-9a-f]+) 0x([0-9a-f]+) 0x([0-9a-f]+) (.{3}) 0x([0-9a-f]+)", lw, re.M):
    t = m.group(1)
    o, v, p, fs, ms = (int(m.group(i), 16) for i in range(2, 7))
    segs.append((t, o, v, fs, ms, int(m.group(8), 16)))
sec = None
for m in re.finditer(r"\]\s+\.sframe\s+\S+\s+([0-9a-f]+) ([0-9a-f]+) ([0-9a-f]+)", sw):
    sec = tuple(int(m.group(i), 16) for i in range(1, 4))
err = []
if not sec: err.append("no .sframe section")
sf = [s for s in segs if s[0] in ("GNU_SFRAME", "LOOS+0x474e554")]
if len(sf) != 1: err.append("%d PT_GNU_SFRAME" % len(sf))
elif sec:
    a, o, n = sec
    t, so, sv, sfs, sms, _ = sf[0]
    if (so, sv, sfs, sms) != (o, a, n, n): err.append("GNU_SFRAME != .sframe")
    if not any(s[0] == "LOAD" and s[1] <= o and o + n <= s[1] + s[3] and s[2] - s[1] == a - o for s in segs):
        err.append(".sframe not inside a PT_LOAD")
loads = [s for s in segs if s[0] == "LOAD"]
if [s[2] for s in loads] != sorted(s[2] for s in loads): err.append("PT_LOAD not sorted")
for s in loads:
    if s[1] % s[5] != s[2] % s[5]: err.append("PT_LOAD offset/vaddr incongruent")
if not any(s[1] <= phoff and phoff + 56 * phnum <= s[1] + s[3] for s in loads):
    err.append("program header table not in a PT_LOAD")
ph = [i for i, s in enumerate(segs) if s[0] == "PHDR"]
if ph:
    s = segs[ph[0]]
    if ph[0] != 0: err.append("PT_PHDR not first")
    if s[1] != phoff or s[3] != 56 * phnum: err.append("PT_PHDR wrong")
    bias = loads[0][2] - loads[0][1]
    if s[2] != phoff + bias and not notie: err.append("old-loader address lost (PT_PHDR vaddr != e_phoff + bias)")
if err:
    print(f + ": " + "; ".join(err)); sys.exit(1)
PY
}

# lint_same IN OUT: eu-elflint finds nothing in OUT that it did not find in
# IN, apart from not knowing the SFrame section and segment types (IN may
# have SFrame sections too).
lint_quiet() {
  eu-elflint --gnu-ld "$1" 2>&1 | sed "s|$1|F|g" | grep -v '^No errors$' |
    grep -v -e 'unknown program header entry type 0x6474e554' \
            -e "'.sframe' has unsupported type 1879048180" \
            -e "'.rela.sframe': invalid destination section type"
}
lint_same() {
  local a b
  a=$(lint_quiet "$1")
  b=$(lint_quiet "$2")
  if [ "$a" != "$b" ]; then
    echo "elflint differs for $2:"; diff <(echo "$a") <(echo "$b") | head -5
    return 1
  fi
}

# shift_of IN OUT: how far OUT moved IN's contents down the file (the
# program header table went to the file start), from section 1's offset;
# fails unless it is a multiple of 4096.
shift_of() {
  local a b
  a=$(LC_ALL=C readelf -SW "$1" | awk '$1 == "[" && $2 == "1]" {print $6; exit}')
  b=$(LC_ALL=C readelf -SW "$2" | awk '$1 == "[" && $2 == "1]" {print $6; exit}')
  [ -n "$a" ] && [ -n "$b" ] || return 1
  local s=$((16#$b - 16#$a))
  [ $s -ge 0 ] && [ $((s % 4096)) = 0 ] || return 1
  echo $s
}

# preserved IN OUT: every byte of IN after the ELF header is unchanged (at
# the same offset, or all of them shifted by the same whole pages).
preserved() {
  local n s; n=$(stat -c %s "$1")
  s=$(shift_of "$1" "$2") || return 1
  cmp -s -i 64:$((64 + s)) -n $((n - 64)) "$1" "$2"
}

# same_run ORIG PATCHED ARGS...: same stdout and exit status.
same_run() {
  local o p a b ra rb
  o=$1 p=$2; shift 2
  a=$("$o" "$@" 2>/dev/null); ra=$?
  b=$("$p" "$@" 2>/dev/null); rb=$?
  [ "$a" = "$b" ] && [ $ra = $rb ]
}
