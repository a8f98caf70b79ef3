# Helpers shared by tests/e2e/elfpatch_*.sh (sourced, not run: it does
# not end in a test of its own and exits 0 when run directly).
[ "${BASH_SOURCE[0]}" = "$0" ] && exit 0
E2S=${E2S:-$PWD/eh2sframe}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# check_layout FILE [notie]: .sframe exists, PT_GNU_SFRAME covers exactly
# it, a PT_LOAD maps it at the same address, and PT_PHDR/e_phoff agree and
# lie in a PT_LOAD (readelf is the independent reader); unless notie, the
# table is also at e_phoff + first-load bias (old-style loaders) in every
# file that can be run (plain shared libraries -- no interpreter, no entry
# point -- may do without: glibc and musl use PT_PHDR, which they need).
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
entry = int(re.search(r"Entry point address:\s+0x([0-9a-f]+)", hw).group(1), 16)
plainlib = "DYN" in re.search(r"Type:\s+(.*)", hw).group(1) and entry == 0 and "INTERP" not in lw
if plainlib: notie = True
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
if plainlib and not ph and not (loads[0][1] <= phoff and phoff + 56 * phnum <= loads[0][1] + loads[0][3]):
    err.append("table outside the first PT_LOAD without PT_PHDR (glibc may take it from the wrong page)")
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

# preserved IN OUT: every section of IN keeps its bytes in OUT (read with
# Python's struct, not our code): at the same address, or -- only
# .interp, notes, hash, dynamic symbol, string and version tables --
# moved into a new segment above every old one. The changes allowed
# besides: .shstrtab rewritten, the .dynamic entries of moved tables
# following them, symbol values following their moved section. Prints
# why when it fails.
preserved() {
  python3 - "$1" "$2" <<'PY'
import struct, sys
def load(path):
    d = open(path, 'rb').read()
    E = '<' if d[5] == 1 else '>'
    h = struct.unpack_from(E + 'HHIQQQIHHHHHH', d, 16)
    phoff, shoff, phnum, shnum, strndx = h[4], h[5], h[9], h[11], h[12]
    if shoff and shnum == 0: shnum = struct.unpack_from(E + 'Q', d, shoff + 32)[0]
    sh = [struct.unpack_from(E + 'IIQQQQIIQQ', d, shoff + 64 * i) for i in range(shnum)]
    ph = [struct.unpack_from(E + 'IIQQQQQQ', d, phoff + 56 * i) for i in range(phnum)]
    st = sh[strndx] if shnum else None
    name = lambda s: d[st[4] + s[0]:d.index(b'\0', st[4] + s[0])].decode() if st else ''
    return d, E, sh, ph, [name(s) for s in sh], strndx
# Section types only program headers and .dynamic point at, and the tags.
MOVABLE = (7, 5, 0x6ffffff6, 11, 3, 0x6fffffff, 0x6ffffffe, 0x6ffffffd)
TAGS = (4, 0x6ffffef5, 6, 5, 0x6ffffff0, 0x6ffffffe, 0x6ffffffc)
a, E, sa, pa, na, ia = load(sys.argv[1])
b, _, sb, pb, nb, ib = load(sys.argv[2])
top = max((p[3] + p[6] for p in pa if p[0] == 1), default=0)
err = []
moved = {}
for i in range(1, len(sa)):
    s, t = sa[i], sb[i]
    if na[i] != nb[i]: err.append('section %d renamed %s -> %s' % (i, na[i], nb[i])); continue
    if s[3] != t[3]:
        if not (s[1] in MOVABLE or na[i] == '.interp') or t[3] < top:
            err.append('%s moved from %#x to %#x' % (na[i], s[3], t[3]))
        moved[i] = t[3] - s[3]
for i in range(1, len(sa)):
    s, t = sa[i], sb[i]
    if i == ia or s[1] in (0, 8) or not s[5]: continue
    x, y = a[s[4]:s[4] + s[5]], b[t[4]:t[4] + t[5]]
    if s[5] != t[5]: err.append('%s size changed' % na[i]); continue
    if s[1] == 6:    # .dynamic: hash table addresses may follow them
        for k in range(0, len(x) - 15, 16):
            tx, vx = struct.unpack_from(E + 'qQ', x, k); ty, vy = struct.unpack_from(E + 'qQ', y, k)
            ok = vx == vy or (tx in TAGS and tx == ty and
                 any(sa[j][3] == vx and sb[j][3] == vy for j in moved))
            if tx != ty or not ok: err.append('.dynamic entry %d changed' % (k // 16))
        continue
    if s[1] in (2, 11):  # symbol values follow a moved section
        for k in range(0, len(x) - 23, 24):
            cx, cy = x[k:k + 24], y[k:k + 24]
            if cx == cy: continue
            shx = struct.unpack_from(E + 'H', cx, 6)[0]
            vx, vy = struct.unpack_from(E + 'Q', cx, 8)[0], struct.unpack_from(E + 'Q', cy, 8)[0]
            if cx[:8] != cy[:8] or cx[16:] != cy[16:] or vy - vx != moved.get(shx): err.append('%s symbol %d changed' % (na[i], k // 24)); break
        continue
    if x != y: err.append('bytes of %s changed' % na[i])
# The segments describing moved sections moved with them.
for p in pa:
    if p[0] in (3, 4, 0x6474e553) and not any(q[0] == p[0] and q[5] == p[5] and a[p[2]:p[2] + p[5]] == b[q[2]:q[2] + q[5]] for q in pb):
        err.append('segment type %#x lost its bytes' % p[0])
if err:
    print(sys.argv[2] + ': ' + '; '.join(err[:5])); sys.exit(1)
PY
}

# Running an original and its converted copy and comparing them:
# tests/e2e/lib/behave.sh.
