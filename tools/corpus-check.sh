#!/usr/bin/env bash
# Whole-system corpus run (`make corpus-check`): convert every ELF file with
# CFI under /usr/bin, /usr/sbin and /usr/lib, and every ELF file of a fixed
# list of Debian arm64 and s390x packages (tools/fetch-foreign.sh --corpus),
# with `eh2sframe IN -o OUT`, then `eh2sframe --verify OUT`; print per-ABI
# counts and every failure. Exit 1 on a verify mismatch or extra function,
# or on a conversion/verification failure (error, crash, timeout); clean
# notices (unsupported machine, no CFI, already has .sframe, no
# convertible function) are counted, not failures. 77 if nothing ran.
#
# Files: regular files only (symbolic links are not followed), each inode
# once, ELF by magic, with a non-empty .eh_frame or .debug_frame.
# Environment:
#   CORPUS_SECONDS=1200  time budget: no new file starts after it
#   CORPUS_JOBS=2        files converted at a time
#   CORPUS_SAMPLE=1      keep every Nth system file (path order)
#   CORPUS_FOREIGN=all   all | core (foreign libc + libstdc++ only; no
#                        extra download) | none
#   CORPUS_ROOTS="/usr/bin /usr/sbin /usr/lib"   system directories
#   CORPUS_TIMEOUT=300   per-command limit (a hang is a failure)
#   CORPUS_NICE=10       nice level of the conversions
#   CORPUS_WORK=build/corpus-check   results.tsv, report.txt, scratch/
#   CORPUS_BIN=./eh2sframe  the converter (tests of this script)
# Output files are written to scratch/ and deleted one by one.
set -u
cd "$(dirname "$0")/.." || exit 1

# ---- worker: bash tools/corpus-check.sh --one 'IDX<TAB>ABI<TAB>ORIGIN<TAB>PATH'...
one() {
  local line idx abi origin path d crc vrc t0 t1 status msg conv skips
  local nf nc ns vline vf vm vmm vmi vs ve err
  for line in "$@"; do
    ((EPOCHSECONDS < CC_DEADLINE)) || return 0
    IFS=$'\t' read -r idx abi origin path <<<"$line"
    d=$CC_SCRATCH/$idx
    rm -rf "$d"
    mkdir -p "$d" || return 1
    t0=${EPOCHREALTIME/./}
    # --require-sframe: a file with nothing to convert is reported (no-CFI,
    # no-funcs), not copied.
    timeout -k 5 "$CC_TIMEOUT" "$CC_BIN" "$path" -o "$d/out" --require-sframe >/dev/null 2>"$d/cerr"
    crc=$?
    status="" msg="" nf=0 nc=0 ns=0 skips="" vline=""
    conv=$(grep -m1 -E ': converted [0-9]+ of [0-9]+ functions; skipped [0-9]+' "$d/cerr")
    if [[ $conv =~ :\ converted\ ([0-9]+)\ of\ ([0-9]+)\ functions\;\ skipped\ ([0-9]+)(:\ (.*))?$ ]]; then
      nc=${BASH_REMATCH[1]} nf=${BASH_REMATCH[2]} ns=${BASH_REMATCH[3]}
      skips=${BASH_REMATCH[5]// /}
    fi
    # The error line: "eh2sframe: PATH: message".
    err=$(grep -m1 -F "eh2sframe: $path: " "$d/cerr")
    err=${err#"eh2sframe: $path: "}
    [ -n "$err" ] || err=$(grep -v -F ': converted ' "$d/cerr" | head -n1)
    if [ $crc -eq 124 ] || [ $crc -eq 137 ]; then
      status=hang msg="convert: no result after ${CC_TIMEOUT}s (exit $crc)"
    elif [ $crc -ge 128 ]; then
      status=crash msg="convert: killed by signal $((crc - 128)); $err"
    elif [ $crc -eq 0 ] && grep -q -F 'already has .sframe; unchanged' "$d/cerr"; then
      status=had-sframe
      # The existing section (binutils') against the CFI: informational.
      timeout -k 5 "$CC_TIMEOUT" "$CC_BIN" --verify "$path" >"$d/vout" 2>&1
      vline=$(grep -m1 '^functions=' "$d/vout")
      [ -n "$vline" ] || msg="existing .sframe not verified: $(head -n1 "$d/vout")"
      msg=${msg//"eh2sframe: $path: "/}
    elif [ $crc -eq 0 ]; then
      if [ -z "$conv" ] || [ ! -s "$d/out" ]; then
        status=fail msg="convert: exit 0 without a summary line or output; ${err:-no message}"
      else
        timeout -k 5 "$CC_TIMEOUT" "$CC_BIN" --verify "$d/out" >"$d/vout" 2>"$d/verr"
        vrc=$?
        vline=$(grep -m1 '^functions=' "$d/vout")
        if [ $vrc -eq 124 ] || [ $vrc -eq 137 ]; then
          status=hang msg="verify: no result after ${CC_TIMEOUT}s (exit $vrc)"
        elif [ $vrc -ge 128 ]; then
          status=crash msg="verify: killed by signal $((vrc - 128)); $(head -n1 "$d/verr")"
        elif [ -z "$vline" ]; then
          status=verify-error msg="verify: exit $vrc; $(head -n1 "$d/verr")"
        elif [[ $vline =~ mismatch=([0-9]+).*extra=([0-9]+) ]] &&
             { [ "${BASH_REMATCH[1]}" != 0 ] || [ "${BASH_REMATCH[2]}" != 0 ]; }; then
          status=mismatch
          msg="$(grep -c -E '^(mismatch|extra) ' "$d/vout") issues; first: $(grep -m1 -E '^(mismatch|extra) ' "$d/vout")"
        elif [ $vrc -ne 0 ]; then
          status=verify-error msg="verify: exit $vrc without mismatch; $(head -n1 "$d/verr")"
        else
          status=ok
        fi
      fi
    elif [ $crc -eq 1 ]; then
      msg=$err
      case $err in
        *"no function could be converted to SFrame"*) status=no-funcs ;;
        *"unsupported machine"* | *"unsupported e_type"*) status=unsupported ;;
        *"no .eh_frame or .debug_frame"*) status=no-cfi ;;
        *"file already has an .sframe section"*) status=had-sframe ;;
        *) status=fail ;;
      esac
    else
      status=fail msg="convert: exit $crc; $err"
    fi
    t1=${EPOCHREALTIME/./}
    vf=- vm=- vmm=- vmi=- vs=- ve=-
    if [[ $vline =~ ^functions=([0-9]+)\ match=([0-9]+)\ mismatch=([0-9]+)\ missing=([0-9]+)\ skipped=([0-9]+)\ extra=([0-9]+) ]]; then
      vf=${BASH_REMATCH[1]} vm=${BASH_REMATCH[2]} vmm=${BASH_REMATCH[3]}
      vmi=${BASH_REMATCH[4]} vs=${BASH_REMATCH[5]} ve=${BASH_REMATCH[6]}
    fi
    msg=${msg//$'\t'/ }
    msg=${msg//$'\n'/ }
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
      "$status" "$abi" "$origin" "$path" "$nf" "$nc" "$ns" "${skips:--}" \
      "$vf" "$vm" "$vmm" "$vmi" "$vs" "$ve" "$(((t1 - t0) / 1000))" "${msg:--}" \
      >>"$CC_RESULTS"
    rm -rf "$d"
  done
}
if [ "${1:-}" = --one ]; then
  shift
  one "$@"
  exit 0
fi

start=$EPOCHSECONDS
budget=${CORPUS_SECONDS:-1200}
jobs=${CORPUS_JOBS:-2}
sample=${CORPUS_SAMPLE:-1}
foreign=${CORPUS_FOREIGN:-all}
roots=${CORPUS_ROOTS:-/usr/bin /usr/sbin /usr/lib}
work=${CORPUS_WORK:-build/corpus-check}
bin=${CORPUS_BIN:-$PWD/eh2sframe}
for t in python3 timeout xargs; do
  command -v $t >/dev/null || { echo "SKIP: $t not found"; exit 77; }
done
[ -x "$bin" ] || { echo "SKIP: ./eh2sframe not built (make all)"; exit 77; }
rm -rf "$work"
mkdir -p "$work/scratch" || exit 1
work=$(cd "$work" && pwd)
# Run a copy: the tree may be rebuilt while this runs.
if [ -z "${CORPUS_BIN:-}" ]; then
  cp "$bin" "$work/eh2sframe" || exit 1
  bin=$work/eh2sframe
fi

# ---- foreign packages
froots=()
if [ "$foreign" != none ]; then
  fargs=()
  [ "$foreign" = all ] && fargs=(--corpus)
  if tools/fetch-foreign.sh "${fargs[@]}" arm64 s390x >"$work/fetch.log" 2>&1; then
    for a in arm64 s390x; do froots+=("foreign-$a=cache/foreign/$a/root"); done
  else
    echo "note: foreign packages unavailable (tools/fetch-foreign.sh):"
    sed 's/^/  /' "$work/fetch.log"
  fi
fi

# ---- scan: candidates.tsv (IDX ABI ORIGIN PATH, in run order) and
# no-cfi.tsv, scan.json (counts)
python3 - "$work" "$sample" "$foreign" "$roots" "${froots[@]}" <<'EOF' || exit 1
import hashlib, json, os, re, struct, sys
work, sample, foreign, roots = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split()
origins = [("system", r) for r in roots] + [tuple(a.split("=", 1)) for a in sys.argv[5:]]
seen = set()
counts = {"regular": 0, "elf": 0, "hardlinks": 0, "odd_names": 0}

def walk(d, out):
    try:
        ents = sorted(os.scandir(d), key=lambda e: e.name)
        dev = os.stat(d).st_dev
    except OSError:
        return
    for e in ents:
        try:
            if e.is_dir(follow_symlinks=False):
                walk(e.path, out)
            elif e.is_file(follow_symlinks=False):
                key = (dev, e.inode())
                if key in seen:
                    counts["hardlinks"] += 1
                    continue
                seen.add(key)
                out.append(e.path)
        except OSError:
            pass

def abi_of(cls, data, mach):
    if cls == 2 and mach == 62: return "amd64"
    if cls == 2 and mach == 183: return "aarch64"
    if cls == 2 and mach == 22 and data == 2: return "s390x"
    return "other"

def inspect(path):
    """(abi, sections) for an ELF file, None if not ELF."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        h = os.pread(fd, 64, 0)
        if len(h) < 52 or h[:4] != b"\x7fELF" or h[4] not in (1, 2) or h[5] not in (1, 2):
            return None
        cls, e = h[4], "<" if h[5] == 1 else ">"
        mach = struct.unpack_from(e + "H", h, 18)[0]
        abi = abi_of(cls, h[5], mach)
        secs = {}
        if cls == 2:
            shoff, = struct.unpack_from(e + "Q", h, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", h, 0x3a)
        else:
            shoff, = struct.unpack_from(e + "I", h, 0x20)
            shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", h, 0x2e)
        need = 64 if cls == 2 else 40
        if not shoff or shentsize < need:
            return abi, mach, secs
        def sh(i):
            b = os.pread(fd, need, shoff + i * shentsize)
            if len(b) < need:
                raise ValueError
            if cls == 2:
                name, typ, flags, addr, off, size, link = struct.unpack_from(e + "IIQQQQI", b)
            else:
                name, typ, flags, addr, off, size, link = struct.unpack_from(e + "IIIIIII", b)
            return name, typ, off, size, link
        s0 = sh(0)
        if shnum == 0: shnum = s0[3]
        if shstrndx == 0xffff: shstrndx = s0[4]
        if shnum > 1 << 20 or shstrndx >= shnum:
            return abi, mach, secs
        hdrs = [sh(i) for i in range(shnum)]
        st = hdrs[shstrndx]
        strtab = os.pread(fd, min(st[3], 1 << 24), st[2])
        for name, typ, off, size, link in hdrs:
            end = strtab.find(b"\0", name)
            n = strtab[name:end if end >= 0 else None].decode("latin-1")
            if n in (".eh_frame", ".debug_frame", ".sframe") and typ != 8 and size > 0:
                secs[n] = size
        return abi, mach, secs
    except (OSError, ValueError, struct.error):
        # Unreadable section headers: let the converter judge the file.
        return abi, mach, {"?": 0}
    finally:
        os.close(fd)

core = re.compile(r"^(libc\.so\.6|libstdc\+\+\.so\.6.*)$")
cands, nocfi, per = [], [], {}
for origin, root in origins:
    files = []
    walk(root, files)
    if origin == "system":
        pass
    elif foreign == "core":
        files = [f for f in files if core.match(os.path.basename(f))]
    for path in files:
        counts["regular"] += 1
        r = inspect(path)
        if r is None:
            continue
        counts["elf"] += 1
        abi, mach, secs = r
        k = per.setdefault(abi, {"elf": 0, "cfi": 0, "nocfi": 0})
        k["elf"] += 1
        if "\t" in path or "\n" in path:
            counts["odd_names"] += 1
            continue
        if ".eh_frame" in secs or ".debug_frame" in secs or "?" in secs:
            k["cfi"] += 1
            cands.append((origin, abi, path, mach))
        else:
            k["nocfi"] += 1
            nocfi.append((abi, origin, path, mach))
sysc = [c for c in cands if c[0] == "system"]
forc = [c for c in cands if c[0] != "system"]
sysc = sysc[::sample]
# Foreign files first (a fixed list), then system files in a stable
# pseudo-random order, so that a run cut by the time budget is a fair sample.
sysc.sort(key=lambda c: hashlib.md5(c[2].encode("utf-8", "surrogateescape")).digest())
with open(os.path.join(work, "candidates.tsv"), "w", encoding="utf-8", errors="surrogateescape") as f:
    for i, (origin, abi, path, mach) in enumerate(forc + sysc):
        f.write(f"{i}\t{abi if abi != 'other' else 'other-%d' % mach}\t{origin}\t{path}\n")
with open(os.path.join(work, "no-cfi.tsv"), "w", encoding="utf-8", errors="surrogateescape") as f:
    for abi, origin, path, mach in nocfi:
        f.write(f"{abi if abi != 'other' else 'other-%d' % mach}\t{origin}\t{path}\n")
counts["per_abi"] = per
counts["candidates_all_system"] = len([c for c in cands if c[0] == "system"])
counts["candidates"] = len(forc) + len(sysc)
json.dump(counts, open(os.path.join(work, "scan.json"), "w"))
EOF

ncand=$(wc -l <"$work/candidates.tsv")
[ "$ncand" -gt 0 ] || { echo "SKIP: no ELF file with CFI found"; exit 77; }
scan_s=$((EPOCHSECONDS - start))
echo "corpus-check: $ncand files to run (scan ${scan_s}s); budget ${budget}s, $jobs jobs, sample 1/$sample, foreign=$foreign"

# ---- run
export CC_DEADLINE=$((start + budget)) CC_SCRATCH=$work/scratch \
  CC_RESULTS=$work/results.tsv CC_TIMEOUT=${CORPUS_TIMEOUT:-300} CC_BIN=$bin
: >"$CC_RESULTS"
tr '\n' '\0' <"$work/candidates.tsv" |
  nice -n "${CORPUS_NICE:-10}" xargs -0 -P "$jobs" -n 4 bash "$PWD/tools/corpus-check.sh" --one
rmdir "$work/scratch" 2>/dev/null || rm -rf "$work/scratch"
run_s=$((EPOCHSECONDS - start))

# ---- report
python3 - "$work" "$run_s" "$budget" <<'EOF' | tee "$work/report.txt"
import json, os, sys
work, run_s, budget = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
scan = json.load(open(os.path.join(work, "scan.json")))
def rows(name):
    with open(os.path.join(work, name), encoding="utf-8", errors="surrogateescape") as f:
        return [l.rstrip("\n").split("\t") for l in f if l.strip()]
cands = rows("candidates.tsv")
res = rows("results.tsv")
nocfi = rows("no-cfi.tsv")
done = {r[3] for r in res}
FAIL = ("fail", "crash", "hang", "verify-error", "mismatch")
abis = ["amd64", "aarch64", "s390x"]
def pct(a, b):
    # Rounded down: 100.00 only when every function is covered.
    return "%.2f" % (int(10000 * a / b) / 100) if b else "-"
def group(a):
    return a if a in abis else "other"
T = {}
for a in abis + ["other"]:
    T[a] = dict(files=0, ok=0, funcs=0, conv=0, skipped=0, mismatch=0, extra=0, missing=0,
                fail=0, had=0, nofuncs=0, unsupp=0, nocfi=0, notrun=0, reasons={})
for c in cands:
    if c[3] not in done:
        T[group(c[1])]["notrun"] += 1
for c in nocfi:
    T[group(c[0])]["nocfi"] += 1
for r in res:
    st, abi, origin, path, nf, nc, ns, skips, vf, vm, vmm, vmi, vs, ve, ms, msg = r
    t = T[group(abi)]
    t["files"] += 1
    if st in ("ok", "mismatch", "no-funcs") or (st in FAIL and nf != "0"):
        t["funcs"] += int(nf); t["conv"] += int(nc); t["skipped"] += int(ns)
        if skips != "-":
            for kv in skips.split(","):
                k, _, v = kv.partition("=")
                t["reasons"][k] = t["reasons"].get(k, 0) + int(v)
    if st != "had-sframe" and vmm != "-":
        t["mismatch"] += int(vmm); t["extra"] += int(ve); t["missing"] += int(vmi)
    if st == "ok": t["ok"] += 1
    elif st == "had-sframe": t["had"] += 1
    elif st == "no-funcs": t["nofuncs"] += 1
    elif st == "unsupported": t["unsupp"] += 1
    elif st == "no-cfi": t["nocfi"] += 1
    if st in FAIL and st != "mismatch": t["fail"] += 1

ncand, nres = len(cands), len(res)
print(f"corpus-check: {nres} of {ncand} files run in {run_s}s (budget {budget}s)"
      + (f"; {ncand - nres} not started: time budget" if nres < ncand else "; all covered"))
print(f"  scanned {scan['regular']} regular files ({scan['hardlinks']} extra hard links skipped), "
      f"{scan['elf']} ELF; system files with CFI: {scan['candidates_all_system']}")
hdr = ("ABI", "files", "conv'd", "funcs", "converted", "skipped", "cover%", "mismatch", "extra",
       "missing", "failures", "had-sfr", "no-funcs", "unsupp", "no-CFI", "not-run")
print()
print("%-8s %6s %6s %9s %9s %8s %7s %8s %6s %7s %8s %7s %8s %6s %6s %7s" % hdr)
tot = {k: 0 for k in T["amd64"] if k != "reasons"}
for a in abis + ["other"]:
    t = T[a]
    if a == "other" and not (t["files"] or t["nocfi"] or t["notrun"]):
        continue
    for k in tot: tot[k] += t[k]
    cov = pct(t["conv"], t["funcs"])
    print("%-8s %6d %6d %9d %9d %8d %7s %8d %6d %7d %8d %7d %8d %6d %6d %7d" % (
        a, t["files"], t["ok"], t["funcs"], t["conv"], t["skipped"], cov, t["mismatch"],
        t["extra"], t["missing"], t["fail"], t["had"], t["nofuncs"], t["unsupp"], t["nocfi"],
        t["notrun"]))
cov = pct(tot["conv"], tot["funcs"])
print("%-8s %6d %6d %9d %9d %8d %7s %8d %6d %7d %8d %7d %8d %6d %6d %7d" % (
    "total", tot["files"], tot["ok"], tot["funcs"], tot["conv"], tot["skipped"], cov,
    tot["mismatch"], tot["extra"], tot["missing"], tot["fail"], tot["had"], tot["nofuncs"],
    tot["unsupp"], tot["nocfi"], tot["notrun"]))
print("  (files: run; conv'd: converted and verified; funcs: DWARF FDEs; mismatch/extra/missing:"
      " --verify function counts; no-CFI: ELF without .eh_frame/.debug_frame, not run)")
print("\nskipped functions by reason:")
for a in abis + ["other"]:
    r = T[a]["reasons"]
    if r:
        print(f"  {a}: " + ", ".join(f"{k}={v}" for k, v in sorted(r.items(), key=lambda x: -x[1])))
by_origin = {}
for r in res:
    by_origin.setdefault(r[2], [0, 0, 0])
    by_origin[r[2]][0] += 1; by_origin[r[2]][1] += int(r[4]); by_origin[r[2]][2] += int(r[5])
print("\nby origin: " + "; ".join(f"{o}: {v[0]} files, {v[2]}/{v[1]} functions"
                                   for o, v in sorted(by_origin.items())))

def show(title, sel, fmt, limit=None):
    sel = list(sel)
    print(f"\n{title}: {len(sel)}")
    for x in sel[:limit]:
        print("  " + fmt(x))
    if limit is not None and len(sel) > limit:
        print(f"  ... {len(sel) - limit} more in {work}/report-full.txt")

fails = [r for r in res if r[0] in FAIL]
show("FAILURES (mismatch, extra, error, crash, timeout)", fails,
     lambda r: f"{r[0]} [{r[1]}] {r[3]}: {r[15]}" + (f" (verify: functions={r[8]} match={r[9]} mismatch={r[10]} extra={r[13]})" if r[10] != "-" else ""))
show("files that already had .sframe (not converted; their .sframe vs CFI, informational)",
     [r for r in res if r[0] == "had-sframe"],
     lambda r: f"[{r[1]}] {r[3]}" + (f": functions={r[8]} match={r[9]} mismatch={r[10]} missing={r[11]} extra={r[13]}" if r[8] != "-" else f": {r[15]}" if r[15] != "-" else ""), 40)
show("files with no convertible function", [r for r in res if r[0] == "no-funcs"],
     lambda r: f"[{r[1]}] {r[3]}: {r[5]} of {r[4]}; {r[7]}", 40)
show("unsupported (clean notice)", [r for r in res if r[0] == "unsupported"],
     lambda r: f"[{r[1]}] {r[3]}: {r[15]}", 40)
show("files with missing functions (--verify: expressible but absent)",
     [r for r in res if r[11] not in ("-", "0") and r[0] != "had-sframe"],
     lambda r: f"[{r[1]}] {r[3]}: missing={r[11]} of {r[8]}", 40)
show("converted count differs from verify match count (informational)",
     [r for r in res if r[0] == "ok" and r[9] != r[5]],
     lambda r: f"[{r[1]}] {r[3]}: converted {r[5]}, verify match {r[9]}, functions {r[4]} vs {r[8]}", 20)
show("files with no CFI (ELF, not run)",
     [r for r in nocfi] + [r[1:4] for r in res if r[0] == "no-cfi"],
     lambda r: f"[{r[0]}] {r[2]}", 30)
slow = sorted(res, key=lambda r: -int(r[14]))[:5]
print("\nslowest files: " + "; ".join(f"{r[3]} {int(r[14]) / 1000:.1f}s" for r in slow))
with open(os.path.join(work, "report-full.txt"), "w") as f:
    for r in res:
        if r[0] != "ok":
            f.write("\t".join((r[0], r[1], r[3], r[15])) + "\n")
    for r in nocfi:
        f.write(f"no-cfi\t{r[0]}\t{r[2]}\n")
print("\nRESULT: %s" % ("FAIL (%d failing files)" % len(fails) if fails else "PASS"))
sys.exit(1 if fails else 0)
EOF
rc=${PIPESTATUS[0]}
exit "$rc"
