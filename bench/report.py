#!/usr/bin/env python3
"""Turn the raw measurements of bench/run.sh into tables.

    report.py WORKDIR RESULTS.md

Reads WORKDIR/{machine.txt,raw.tsv,stats.tsv,oracle/sizes.tsv}; prints the
tables and writes them (with the machine description) to RESULTS.md.
"""
import math
import os
import statistics
import sys

work, out_path = sys.argv[1], sys.argv[2]
MiB = 1024 * 1024
MB = 1e6


def kv_line(line):
    d = {}
    for tok in line.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            d[k] = v
    return d


machine = {}
with open(os.path.join(work, "machine.txt")) as f:
    for line in f:
        if "=" in line:
            k, v = line.rstrip("\n").split("=", 1)
            machine[k] = v

raw = {}  # (input, tool) -> list of (cpu, rss_kb, wall, minor faults)
order = []
with open(os.path.join(work, "raw.tsv")) as f:
    next(f)
    for line in f:
        inp, tool, _run, u, s, m, e, flt = line.rstrip("\n").split("\t")
        if inp not in order:
            order.append(inp)
        raw.setdefault((inp, tool), []).append(
            (float(u) + float(s), int(m), float(e), int(flt)))
# The fresh-memory runs (run.sh: prefaulted, shim, start) have a table of
# their own.
FRESH = ("prefaulted", "shim", "start")
tools = sorted({t for (_, t) in raw if t not in FRESH},
               key=["eh2sframe", "stats", "convert", "cp", "readelf",
                    "dwarfdump", "baseline"].index)

stats = {}
with open(os.path.join(work, "stats.tsv")) as f:
    for line in f:
        d = kv_line(line)
        stats[d["file"]] = d


def med(inp, tool, i):
    v = raw.get((inp, tool))
    return statistics.median(x[i] for x in v) if v else None


def name(inp):
    return os.path.basename(inp)


def core_time(st):
    return float(st["best_open"]) + float(st["best_project"]) + \
        float(st["best_encode"])


def cold_time(st):
    """First conversion in the process: elfr_cfi_open_stream (file
    mapped, rows projected as they are produced) + encode, measured
    inside the process."""
    return float(st["t_open"]) + float(st["t_project"]) + \
        float(st["t_encode"])


lines = []


def emit(s=""):
    print(s)
    lines.append(s)


def table(head, rows):
    emit("| " + " | ".join(head) + " |")
    emit("|" + "|".join("---" for _ in head) + "|")
    for r in rows:
        emit("| " + " | ".join(str(c) for c in r) + " |")
    emit()


def fmt_ms(x):
    return "-" if x is None else ("%.1f" % (x * 1000) if x < 10 else "%.0f" % (x * 1000))


def ratio(a, b):
    return "-" if a is None or not b else "%.2f" % (a / b)


# ---- tree mode ----------------------------------------------------------------
# tree.tsv: one line per timed command (run = round, pos = 1 if it ran first
# in its round, steal_s = steal time accrued on all CPUs while it ran).
TREE_CP, TREE_E2S, TREE_FLOOR = "cp -a", "eh2sframe -j2", "replace floor"
TREE_CPU_TARGET, TREE_WALL_TARGET = 1.5, 2.0


def read_tree():
    p = os.path.join(work, "tree.tsv")
    if not os.path.exists(p):
        return []
    with open(p) as f:
        head = f.readline().rstrip("\n").split("\t")
        return [dict(zip(head, l.rstrip("\n").split("\t"))) for l in f if l.strip()]


def spread(v):
    """min, max and max/min of a list of positive numbers."""
    lo, hi = min(v), max(v)
    return lo, hi, (hi / lo if lo > 0 else float("inf"))


def judged_spread(v):
    """max/min of a command's times as the tree targets judge it: from 5
    rounds on, without the highest and the lowest, so that one round in a
    slow moment of the machine (a host fault per fresh page) does not void
    the others; below that, of all."""
    return spread(sorted(v)[1:-1] if len(v) >= 5 else v)[2]


def spread_text(full, judged, n):
    """"max/min X" and, where the judged spread differs, the trimmed one."""
    return "max/min %.2f%s" % (full, ", %.2f without the highest and lowest "
                               "round" % judged if n >= 5 else "")


def core_bound(cp, es, fl):
    """The conversion alone (run.sh: bench/convert_only over the floor's
    files, tree-core.txt; each file's core_time), against the median cp -a, and
    with the replace floor: a lower bound for an in-place converter on
    this core. None when run.sh did not measure it."""
    path = os.path.join(work, "tree-core.txt")
    if not os.path.exists(path) or not cp:
        return None
    with open(path) as f:
        runs = [kv_line(l) for l in f if l.strip()]
    ok = [d for d in runs if "failed" not in d and "best_open" in d]
    bad = sum("failed" in d for d in runs)
    c = sum(core_time(d) for d in ok)
    cpm = statistics.median(r["cpu"] for r in cp)
    em = statistics.median(r["cpu"] for r in es)
    out = {"core_ratio": c / cpm, "core_s": c}
    emit("The conversion alone: bench/convert_only over the originals of "
         "the same %d files (%d failed), %d FDEs, %.1f MB of .eh_frame, "
         "parsed, interpreted, projected and encoded in memory, the fastest "
         "of repeats with warm caches (no mapping, copying, renaming, page "
         "faults or second process): %.3f s of CPU, %.2fx cp -a's median "
         "(%.2f s)." %
         (len(ok), bad, sum(int(d["fdes"]) for d in ok),
          sum(int(d["eh_bytes"]) for d in ok) / MB, c, c / cpm, cpm))
    if fl:
        fm = statistics.median(r["cpu"] for r in fl)
        out["bound_ratio"] = (fm + c) / cpm
        out["room"] = TREE_CPU_TARGET - out["bound_ratio"]
        emit(" With the replace floor's median (%.2f s): %.2f s, %.2fx cp -a, "
             "the least an in-place converter built on this core could cost. "
             "%s eh2sframe -j2 spends %.2f s on that rest (its median %.2f s "
             "less the two)." %
             (fm, fm + c, out["bound_ratio"],
              ("The %.1fx target leaves %.2fx of cp -a (%.3f s) for all the "
               "rest: mapping the files and faulting them in, cold caches, "
               "the second job, the file handling." %
               (TREE_CPU_TARGET, out["room"], out["room"] * cpm))
              if out["room"] > 0 else
              ("The two alone reach the %.1fx target: nothing is left for "
               "the rest (mapping the files and faulting them in, cold "
               "caches, the second job, the file handling)." % TREE_CPU_TARGET),
              em - fm - c, em))
    emit()
    return out


def tree_section(tree):
    """The tree table; returns what the targets need, or None."""
    rounds = {}
    for r in tree:
        r["cpu"] = float(r["user"]) + float(r["sys"])
        rounds.setdefault(int(r["run"]), {})[r["tool"]] = r
    full = [(k, v[TREE_CP], v[TREE_E2S]) for k, v in sorted(rounds.items())
            if TREE_CP in v and TREE_E2S in v]
    if not full:
        return None
    n = len(full)
    cp = [c for _, c, _ in full]
    es = [e for _, _, e in full]
    cpu_r = [e["cpu"] / c["cpu"] for _, c, e in full]
    wall_r = [float(e["wall"]) / float(c["wall"]) for _, c, e in full]
    has_steal = "steal_s" in full[0][1]
    emit("## Tree mode: a directory (BENCH_TREE, default /usr/bin), converted in place with -j2")
    emit()
    settled = "pos" in full[0][1]
    rotated = any(r.get("tool") == TREE_FLOOR for r in tree)
    emit("Each round times `cp -a DIR COPY` and `eh2sframe -q --in-place -r -j 2 "
         "COPY` on a fresh copy%s; %d round%s, %s files, %.0f MB, %s. " %
         (" and the replace floor (below)" if rotated else "",
          n, "" if n == 1 else "s", full[0][1]["files"],
          int(full[0][1]["bytes"]) / MB,
          "the copies on " + machine["tree_fs"] if "tree_fs" in machine
          else "filesystem not recorded") +
         ("An untimed warm-up round (cp -a, conversion, removal) comes first. "
          "Before each timed command the previous round's copies are already "
          "removed and `sync` has run (no dirty pages left to write back); "
          "the source stays in the page cache. " if settled else
          "Recorded by an older bench/run.sh: cp -a then eh2sframe in every "
          "round, the previous copy removed just before, no sync. ") +
         ("The order goes through all six orders of the three commands "
          "(each first in two rounds of six, and right after each other one "
          "as often); the copies eh2sframe and "
          "the floor work on are made untimed at the start of the round. "
          if rotated else
          "The order alternates: odd rounds time cp -a first and then "
          "convert its copy; even rounds convert a copy made untimed, then "
          "time cp -a into a second directory. " if settled else "") +
         "ratio = eh2sframe's CPU "
         "time / cp -a's in the same round. CPU = user + sys of the process "
         "(eh2sframe's summed over its two jobs); wall time is what a package "
         "build waits for.%s" %
         (" steal = CPU time the hypervisor gave this VM's CPUs (all %s) to "
          "others while the command ran (/proc/stat)." % machine.get("nproc", "?")
          if has_steal else ""))
    emit()
    fl = [rounds[k].get(TREE_FLOOR) for k, _, _ in full]
    has_floor = all(fl)
    head = ["round", "first", "cp -a CPU s", "cp -a user s", "cp -a sys s",
            "cp -a wall s", "eh2sframe CPU s", "eh2sframe user s",
            "eh2sframe sys s", "eh2sframe wall s", "ratio CPU", "ratio wall"]
    if has_floor:
        head += ["floor CPU s", "floor / cp -a", "eh2sframe / floor"]
    if has_steal:
        head += ["steal s (cp -a)", "steal s (eh2sframe)"]
    rows = []
    for (k, c, e), rc, rw, f in zip(full, cpu_r, wall_r, fl):
        first = next((t for t, r in rounds[k].items() if r.get("pos") == "1"),
                     TREE_CP)
        row = [k, first] + \
            ["%.2f" % x for x in (c["cpu"], float(c["user"]), float(c["sys"]),
                                  float(c["wall"]), e["cpu"], float(e["user"]),
                                  float(e["sys"]), float(e["wall"]))] + \
            ["%.2f" % rc, "%.2f" % rw]
        if has_floor:
            row += ["%.2f" % f["cpu"], "%.2f" % (f["cpu"] / c["cpu"]),
                    "%.2f" % (e["cpu"] / f["cpu"])]
        if has_steal:
            row += [c["steal_s"], e["steal_s"]]
        rows.append(row)
    table(head, rows)

    def mm(v):
        lo, hi, _ = spread(v)
        return "%.2f-%.2f" % (lo, hi)
    rows = []
    for tool, v in ((TREE_CP, cp), (TREE_E2S, es)) + (((TREE_FLOOR, fl),) if has_floor else ()):
        cpu = [r["cpu"] for r in v]
        wall = [float(r["wall"]) for r in v]
        rows.append([tool, "%.2f" % statistics.median(cpu), mm(cpu),
                     "%.2f" % statistics.median(float(r["user"]) for r in v),
                     "%.2f" % statistics.median(float(r["sys"]) for r in v),
                     "%.2f" % statistics.median(wall), mm(wall)])
    rows.append(["ratio eh2sframe / cp -a, per round",
                 "%.2f" % statistics.median(cpu_r), mm(cpu_r), "", "",
                 "%.2f" % statistics.median(wall_r), mm(wall_r)])
    if has_floor:
        fc = [f["cpu"] / c["cpu"] for (_, c, _), f in zip(full, fl)]
        ef = [e["cpu"] / f["cpu"] for (_, _, e), f in zip(full, fl)]
        rows.append(["ratio replace floor / cp -a, per round",
                     "%.2f" % statistics.median(fc), mm(fc), "", "", "", ""])
        rows.append(["ratio eh2sframe / replace floor, per round",
                     "%.2f" % statistics.median(ef), mm(ef), "", "", "", ""])
    table(["over %d round%s" % (n, "" if n == 1 else "s"), "CPU s, median",
           "CPU min-max", "user s, median", "sys s, median", "wall s, median",
           "wall min-max"], rows)

    if has_floor:
        ex = [e["cpu"] - f["cpu"] for (_, _, e), f in zip(full, fl)]
        emit("The replace floor (bench/replace_floor.c, on its own untimed "
             "copy) replaces the %s files the "
             "warm-up conversion changed (one name per inode) by copies of "
             "themselves, each written to a temporary next to it and renamed "
             "over it, staged 256 MiB at a time with one syncfs per batch, as "
             "tree mode does, but converting nothing: what the rule \"write a "
             "temporary, rename it over the original\" costs any in-place "
             "tool. eh2sframe's CPU above the floor, per round: median %.2f s "
             "(%.2f-%.2f): the conversions and eh2sframe's own file "
             "handling." % (machine.get("tree_floor_files", "?"),
                            statistics.median(ex), min(ex), max(ex)))
        emit()
    core = core_bound(cp, es, fl if has_floor else None)
    by_first = {}
    for (k, _, _), rc in zip(full, cpu_r):
        first = next((t for t, r in rounds[k].items() if r.get("pos") == "1"),
                     TREE_CP)
        by_first.setdefault(first, []).append(rc)
    if len(by_first) > 1:
        emit("Median CPU ratio by which command ran first: " +
             ", ".join("%.2fx in the %d round%s with %s first" %
                       (statistics.median(v), len(v), "" if len(v) == 1 else "s", t)
                       for t, v in sorted(by_first.items())) + ".")
        emit()
    cp_lo, cp_hi, cp_all = spread([r["cpu"] for r in cp])
    cpw_lo, cpw_hi, cpw_all = spread([float(r["wall"]) for r in cp])
    cp_sp = judged_spread([r["cpu"] for r in cp])
    cpw_sp = judged_spread([float(r["wall"]) for r in cp])
    r_lo, r_hi, _ = spread(cpu_r)
    if "tree_steal_s" in machine:
        st, sec = float(machine["tree_steal_s"]), float(machine.get("tree_seconds", "0"))
        ncpu = int(machine.get("nproc", "1"))
        emit("Steal time accrued during the tree section: %.2f s of CPU time "
             "in %.1f s (%.1f %% of %d CPUs' time)%s." %
             (st, sec, 100 * st / (sec * ncpu) if sec else 0, ncpu,
              "; while the timed commands ran: cp -a %.2f s, eh2sframe %.2f s in all" %
              (sum(float(r["steal_s"]) for r in cp), sum(float(r["steal_s"]) for r in es))
              if has_steal else ""))
        emit()
    if "tree_reported_mib" in machine:
        emit("Memory the host took back from this VM during the tree section "
             "(virtio-balloon free page reporting, /sys/module/page_reporting): "
             "%s MiB. Pages freed by removing a tree are handed back within "
             "moments, and the next command that writes that many new pages "
             "(a copy's page cache) pays a host fault for each: perf shows a "
             "slow cp -a spending most of its time in the kernel's copy into "
             "page-cache pages." % machine["tree_reported_mib"])
        emit()
    if n < 3:
        verdict = "; %d round%s: a draw, not a measurement" % (n, "" if n == 1 else "s")
        emit("**Not a measurement**: %s (run without BENCH_QUICK)." % verdict[2:])
    elif cp_sp > TREE_CPU_TARGET:
        verdict = " > %.1f: not a measurement" % TREE_CPU_TARGET
        emit("**Not a measurement**: cp -a's own CPU time for the same tree "
             "varied %.2f-%.2f s between rounds (%s), wider than "
             "the %.1fx margin the target judges; the per-round ratio went "
             "%.2f-%.2fx. The machine, not the two tools, decides a "
             "single round. %s" % (cp_lo, cp_hi, spread_text(cp_all, cp_sp, n),
                                   TREE_CPU_TARGET, r_lo, r_hi,
                                   "(Seen with perf on this machine's ext4 without a "
                                   "journal: a slow cp -a spent about two thirds of "
                                   "its time in the inode allocator skipping inodes "
                                   "deleted in the last minutes, ext4's "
                                   "recently_deleted(), so its cost follows how "
                                   "recently the trees before it were removed.)"
                                   if "journal: no" in machine.get("tree_fs", "journal: no")
                                   else "(On tmpfs the copy is page-cache work alone: "
                                   "the spread is the machine's, e.g. pages the host "
                                   "had taken back, above.)"
                                   if machine.get("tree_fs", "").startswith("tmpfs")
                                   else "(On this filesystem, with a journal, a slow "
                                   "cp -a spent most of its time in the kernel's copy "
                                   "into new page-cache pages: pages the host had taken "
                                   "back, above.)"))
    else:
        verdict = None
        emit("cp -a's own CPU time varied %.2f-%.2f s between rounds (%s), "
             "within the target's %.1fx margin%s%s." %
             (cp_lo, cp_hi, spread_text(cp_all, cp_sp, n), TREE_CPU_TARGET,
              " once the highest and lowest round are left out"
              if cp_all > TREE_CPU_TARGET else "",
              "; the per-round ratios (%.2f-%.2fx) fall on both sides of "
              "%.1fx, the judgement rests on their median" %
              (r_lo, r_hi, TREE_CPU_TARGET)
              if r_lo <= TREE_CPU_TARGET < r_hi else ""))
    emit()
    return {"n": n, "cpu_ratio": statistics.median(cpu_r), "cpu_lo": r_lo,
            "core": core,
            "floor_ratio": statistics.median(f["cpu"] / c["cpu"] for (_, c, _), f
                                             in zip(full, fl)) if has_floor else None,
            "cpu_hi": r_hi, "wall_ratio": statistics.median(wall_r),
            "wall_lo": min(wall_r), "wall_hi": max(wall_r), "cp_lo": cp_lo,
            "cp_hi": cp_hi, "cp_spread": cp_sp, "cp_all": cp_all,
            "cpw_lo": cpw_lo, "cpw_hi": cpw_hi, "cpw_spread": cpw_sp,
            "cpw_all": cpw_all, "verdict": verdict}


def tree_targets(t):
    """Judged on the median per-round ratio; "not shown" when cp -a's own
    time varied by more than the target's factor (judged_spread), or too
    few rounds."""
    if not t:
        return
    few = t["n"] < 3

    def judge(ratio, limit, spread_):
        if few or spread_ > limit:
            return "not shown"
        return "met" if ratio <= limit else "NOT met"
    emit("- Tree mode `--in-place -r -j2` <= %.1fx `cp -a` CPU: **%s** "
         "(median per-round ratio %.2fx, %.2f-%.2fx over %d round%s; cp -a's "
         "own CPU varied %.2f-%.2f s, %s%s)." %
         (TREE_CPU_TARGET, judge(t["cpu_ratio"], TREE_CPU_TARGET, t["cp_spread"]),
          t["cpu_ratio"], t["cpu_lo"], t["cpu_hi"], t["n"],
          "" if t["n"] == 1 else "s", t["cp_lo"], t["cp_hi"],
          spread_text(t["cp_all"], t["cp_spread"], t["n"]), t["verdict"] or ""))
    if t.get("floor_ratio"):
        emit("  - The replace floor alone (copy and rename, no conversion) "
             "cost %.2fx cp -a's CPU, median per round." % t["floor_ratio"])
    c = t.get("core")
    if c:
        emit("  - The conversion alone, in memory with warm caches, cost "
             "%.2fx cp -a's CPU%s." %
             (c["core_ratio"],
              "; with the replace floor %.2fx, %s" %
              (c["bound_ratio"],
               "which leaves %.2fx under the target for everything else an "
               "in-place conversion does" % c["room"] if c["room"] > 0 else
               "at or above the target before anything else an in-place "
               "conversion does") if "bound_ratio" in c else ""))
    emit("- Tree mode -j2 within %.0fx of copying the same files (wall): **%s** "
         "(median per-round ratio %.2fx, %.2f-%.2fx; cp -a's wall %.2f-%.2f s, "
         "%s)." %
         (TREE_WALL_TARGET, judge(t["wall_ratio"], TREE_WALL_TARGET, t["cpw_spread"]),
          t["wall_ratio"], t["wall_lo"], t["wall_hi"], t["cpw_lo"], t["cpw_hi"],
          spread_text(t["cpw_all"], t["cpw_spread"], t["n"])))


emit("# eh2sframe benchmark results")
emit()
emit("Generated by `make bench` (bench/run.sh, mode %s, %s runs per cell, "
     "median; tools interleaved, in a new seeded random order for each input of each run)." %
     (machine.get("mode"), machine.get("runs")))
emit()
emit("Machine: %s cores, %s, %s RAM, kernel %s. Load average at start %s, "
     "at end %s: the machine was shared with other jobs, so absolute times "
     "are noisy; ratios within one run are the meaningful numbers. %s; %s. "
     "Timed part took %s s. Date %s." %
     (machine.get("nproc"), machine.get("cpu"), machine.get("mem"),
      machine.get("kernel"), machine.get("load_start"),
      machine.get("load_end"), machine.get("readelf"),
      machine.get("dwarfdump", "llvm-dwarfdump absent"),
      machine.get("bench_seconds"), machine.get("date")))
emit()
if "page_reporting_min_free_ms" in machine:
    emit("Free page reporting (this VM hands memory the guest frees back to the "
         "host, which backs it again at its next first touch): min_free_ms=%s%s." %
         (machine["page_reporting_min_free_ms"],
          "; set for this run, so that a command's fresh page cache is memory "
          "the host still backs" if "BENCH_HOLD_FREED_MS" in
          machine["page_reporting_min_free_ms"] else
          ", as the system has it (BENCH_HOLD_FREED_MS=no, or not root): a "
          "timed command's fresh pages may each cost a host fault"))
    emit()

if not order:  # BENCH_ONLY_TREE=1: the tree comparison alone
    tree_summary = tree_section(read_tree())
    emit("## Targets")
    emit()
    tree_targets(tree_summary)
    emit()
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    sys.exit(0)

# ---- time -----------------------------------------------------------------
emit("## CPU time (user+sys, ms, median) and throughput")
emit()
emit("`eh2sframe` = `eh2sframe IN -o OUT` (whole tool: maps the input, "
     "copies its unchanged bytes with copy_file_range like cp, writes the "
     "new ones; no fsync for -o, --in-place syncs); `stats` = `eh2sframe "
     "--stats IN` (the report, from the mapped headers and CFI); `convert` = bench/convert_only (elfr_cfi_open_stream with "
     "the streaming projection + sfe_encoded_size + sfe_encode, no ELF "
     "writing, one process); `core` = the in-memory part of the library "
     "(conv_project_view on an image already in memory: parse + interpret + "
     "project in one pass, then size + encode; fastest of repeated "
     "iterations in one process, so no start-up or file read); `memcpy` = "
     "a copy of the whole file image, for scale only (the library no longer "
     "copies the file). MB/s = .eh_frame bytes (10^6) per CPU second." +
     (" `baseline` = `eh2sframe IN -o OUT` built from %s (BENCH_BASELINE), "
      "timed in the same runs." % machine.get("baseline")
      if "baseline" in tools else ""))
emit()
head = ["input", "file MB", ".eh_frame MB", "FDEs"] + tools + \
    ["core ms", "memcpy ms", "MB/s convert", "MB/s core", "M FDEs/s core",
     "M rows/s core"]
rows = []
for inp in order:
    st = stats[inp]
    eh = int(st["eh_bytes"])
    core = core_time(st)
    conv = med(inp, "convert", 0)
    rows.append([name(inp), "%.1f" % (int(st["file_bytes"]) / MB),
                 "%.2f" % (eh / MB), st["fdes"]] +
                [fmt_ms(med(inp, t, 0)) for t in tools] +
                [fmt_ms(core), fmt_ms(float(st["best_memcpy"])),
                 "%.0f" % (eh / MB / conv) if conv else "-",
                 "%.0f" % (eh / MB / core),
                 "%.2f" % (int(st["fdes"]) / 1e6 / core),
                 "%.1f" % (int(st["rows"]) / 1e6 / core)])
table(head, rows)

emit("## Ratios (CPU time; wall time for cp in the last column)")
emit()
head = ["input", "eh2sframe/cp", "eh2sframe/readelf"]
if "dwarfdump" in tools:
    head.append("eh2sframe/dwarfdump")
head += ["convert/readelf"]
if "dwarfdump" in tools:
    head.append("convert/dwarfdump")
head += ["eh2sframe/cp (wall)"]
if "baseline" in tools:
    head.append("eh2sframe/baseline")
rows = []
for inp in order:
    e2s = med(inp, "eh2sframe", 0)
    conv = med(inp, "convert", 0)
    r = [name(inp), ratio(e2s, med(inp, "cp", 0)),
         ratio(e2s, med(inp, "readelf", 0))]
    if "dwarfdump" in tools:
        r.append(ratio(e2s, med(inp, "dwarfdump", 0)))
    r.append(ratio(conv, med(inp, "readelf", 0)))
    if "dwarfdump" in tools:
        r.append(ratio(conv, med(inp, "dwarfdump", 0)))
    r.append(ratio(med(inp, "eh2sframe", 2), med(inp, "cp", 2)))
    if "baseline" in tools:
        r.append(ratio(e2s, med(inp, "baseline", 0)))
    rows.append(r)
table(head, rows)

def fresh_free(inp):
    """eh2sframe -o's CPU time had its arrays cost no first touches: the
    run with its heap faulted in before main, less the shim alone, plus
    the bare start-up (both shim runs go through env, which cancels)."""
    p, s, z = (med(inp, t, 0) for t in FRESH)
    return None if None in (p, s, z) else p - s + z


def fault_check(inp):
    """Page faults the heap shim left to the tool (prefaulted - shim)
    against those it has alone (eh2sframe - start): "NO" when the shim
    spared fewer than half (its heap too small, or unused)."""
    f = [med(inp, t, 3) for t in ("eh2sframe", "start", "prefaulted", "shim")]
    if None in f:
        return "-"
    alone, left = f[0] - f[1], f[2] - f[3]
    ok = alone > 0 and left <= alone / 2
    return "%.0f, %.0f%s" % (alone, left, "" if ok else " NO")


if any(fresh_free(i) is not None for i in order):
    emit("## What fresh memory costs")
    emit()
    emit("`prefaulted` = `eh2sframe IN -o OUT` with bench/prefault.c preloaded: "
         "before main it faults in a heap of 6 MiB per MB of .eh_frame + 8 MiB "
         "and keeps it, so the tool's arrays land on pages already touched; "
         "`shim` = that shim alone (under `eh2sframe --version`); `start` = "
         "`eh2sframe --version`. `no first touches` = prefaulted - shim + start: "
         "an estimate of the tool's CPU time had its fresh memory cost nothing "
         "(output bytes checked equal). On a VM whose host backs guest memory "
         "on first touch, a fresh 4 KiB page costs microseconds; cp needs "
         "almost none. `faults` = page faults of eh2sframe beyond its start-up, "
         "and of the prefaulted run beyond the shim's: the second must be "
         "much smaller, or the estimate does not hold (marked NO).")
    emit()
    head = ["input", "eh2sframe", "prefaulted", "shim", "start",
            "no first touches", "first touches", "eh2sframe/cp",
            "no first touches/cp", "faults", "same bytes"]
    rows = []
    for inp in order:
        e2s, nf, cp = med(inp, "eh2sframe", 0), fresh_free(inp), med(inp, "cp", 0)
        rows.append([name(inp), fmt_ms(e2s)] +
                    [fmt_ms(med(inp, t, 0)) for t in FRESH] +
                    [fmt_ms(nf),
                     "-" if nf is None else "%.0f%%" % (100 * (e2s - nf) / e2s),
                     ratio(e2s, cp), ratio(nf, cp), fault_check(inp),
                     stats[inp].get("same_prefaulted", "-")])
    table(head, rows)

emit("## Peak memory (max RSS, MiB, median)")
emit()
head = ["input", "file MiB", "limit 2*file+16"] + tools + ["eh2sframe ok"]
rows = []
mem_ok = True
for inp in order:
    fb = int(stats[inp]["file_bytes"])
    lim = 2 * fb / MiB + 16
    e2s = med(inp, "eh2sframe", 1) / 1024
    ok = e2s <= lim
    mem_ok &= ok
    rows.append([name(inp), "%.1f" % (fb / MiB), "%.1f" % lim] +
                ["%.1f" % (med(inp, t, 1) / 1024) for t in tools] +
                ["yes" if ok else "NO (%.2f x file)" % (e2s * MiB / fb)])
table(head, rows)

# ---- scaling ----------------------------------------------------------------
synth = [i for i in order if name(i).startswith("synth-")]


def fit(xs, ys):
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = statistics.mean(lx), statistics.mean(ly)
    sxx = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sxx


emit("## Scaling over the synthetic series")
emit()
exps = {}
if len(synth) >= 2:
    xs = [int(stats[i]["eh_bytes"]) for i in synth]
    series = {"library one-shot (cold)": [cold_time(stats[i]) for i in synth],
              "core (in-memory library)": [core_time(stats[i]) for i in synth],
              "convert (process CPU)": [med(i, "convert", 0) for i in synth],
              "eh2sframe (process CPU)": [med(i, "eh2sframe", 0) for i in synth],
              "eh2sframe peak RSS": [med(i, "eh2sframe", 1) for i in synth]}
    emit("Least-squares slope of log(cost) on log(.eh_frame bytes) over %s "
         "(1.0 = linear). Process times of the smallest inputs are dominated "
         "by start-up (~1 ms), which pulls their slope below 1. The "
         "\"core\" series repeats the conversion in one process: small inputs "
         "then run with warm caches and reused heap, while arrays above "
         "glibc's 32 MiB mmap threshold are page-faulted afresh each time, "
         "so that series is biased towards a slope above 1. The judged series "
         "is the first (cold) conversion measured inside the process, which "
         "is what a user pays without start-up noise." %
         ", ".join(name(i) for i in synth))
    emit()
    rows = []
    for k, ys in series.items():
        if all(y and y > 0 for y in ys):
            exps[k] = fit(xs, ys)
            rows.append([k, "%.3f" % exps[k]] +
                        ["%.4g" % y for y in ys])
    table(["series", "exponent"] + [name(i) for i in synth], rows)

# ---- size ---------------------------------------------------------------------
emit("## Size: .sframe vs .eh_frame + .eh_frame_hdr")
emit()
emit("`.sframe` as written into the output by `eh2sframe IN -o OUT` "
     "(checked with `eh2sframe --verify`); functions and FREs as projected.")
emit()
head = ["input", ".eh_frame", ".eh_frame_hdr", ".sframe", "sframe/(eh+hdr)",
        "FDEs", "SFrame funcs", "FREs", "eh B/FDE", "sframe B/func",
        "sframe B/FRE", "verify"]
rows = []
for inp in order:
    st = stats[inp]
    eh, hdr = int(st["eh_bytes"]), int(st["hdr_bytes"])
    sf = int(st["out_sframe_bytes"])
    nf, nr = int(st["funcs"]), int(st["fres"])
    rows.append([name(inp), eh, hdr, sf, "%.3f" % (sf / (eh + hdr)),
                 st["fdes"], nf, nr, "%.1f" % (eh / max(int(st["fdes"]), 1)),
                 "%.1f" % (sf / max(nf, 1)), "%.2f" % (sf / max(nr, 1)),
                 st.get("verify", "").replace(",", " ")])
table(head, rows)

emit("Without sharing (`--no-share-fres`: every function's FREs stored; "
     "the default shares identical attribute + FRE bytes on little-endian "
     "targets, `sfh_num_fres` still counting every FDE's FREs, and keeps "
     "big-endian ones unshared, as libsframe 2.47 rejects shared data it "
     "has to byte-swap).")
emit()
head = ["input", ".sframe", "unshared .sframe", "saved by sharing",
        "unshared/(eh+hdr)", "verify (unshared)"]
rows = []
for inp in order:
    st = stats[inp]
    if "unshared_sframe_bytes" not in st:
        continue
    eh, hdr = int(st["eh_bytes"]), int(st["hdr_bytes"])
    sf, un = int(st["out_sframe_bytes"]), int(st["unshared_sframe_bytes"])
    rows.append([name(inp), sf, un, "%.1f%%" % (100.0 * (un - sf) / max(un, 1)),
                 "%.3f" % (un / (eh + hdr)),
                 st.get("verify_unshared", "").replace(",", " ")])
table(head, rows)

oracle = os.path.join(work, "oracle", "sizes.tsv")
if os.path.exists(oracle):
    emit("## Against the reference assembler (binutils 2.47 gas --gsframe + ld, gcc 16, sid chroot)")
    emit()
    emit("Each code base built twice: `-Wa,--gsframe` (gas emits .sframe, ld "
         "merges it) and without (then `eh2sframe` adds .sframe). FDE/FRE "
         "counts read by binutils' `readelf --sframe`; a `!` means binutils' "
         "readelf aborted on the file (libsframe assertion "
         "`fre_start_addr <= func_size`) and the counts come from "
         "`eh2sframe --dump` instead. `eh FDEs` is the .eh_frame FDE count, "
         "i.e. the functions that could be covered.")
    emit()
    rows = []
    with open(oracle) as f:
        next(f)
        recs = [l.rstrip("\n").split("\t") for l in f]
    by = {}
    for r in recs:
        by.setdefault((r[0], r[1]), {})[r[2]] = r
    for (base, binary), v in by.items():
        g, e = v.get("gas"), v.get("e2s")
        if not g or not e:
            continue
        gs, es = int(g[6]), int(e[6])
        rows.append([base, binary, g[3], g[7], e[7], g[8], e[8], gs, es,
                     "%.3f" % (es / gs) if gs else "-"])
    table(["code base", "binary", "eh FDEs", "gas FDEs", "e2s FDEs",
           "gas FREs", "e2s FREs", "gas .sframe B", "e2s .sframe B",
           "e2s/gas"], rows)
    # File size: what each way of adding .sframe costs on disk, as
    # installed (stripped; eh2sframe after strip), and beyond the section.
    rows, tot = [], [0] * 4
    for (base, binary), v in by.items():
        g, e = v.get("gas"), v.get("e2s")
        if not g or not e or len(g) < 13:
            continue
        pi = int(g[12])
        gs, es = int(g[6]), int(e[6])
        gi, ei = int(g[10]) - pi, int(e[10]) - pi
        rows.append([base, binary, pi, gs, gi, gi - gs, es, ei, ei - es])
        # Like for like: both cover about the same functions.
        if gs and 0.8 <= es / gs <= 1.25:
            tot = [a + b for a, b in zip(tot, [gs, gi, es, ei])]
    if rows:
        rows.append(["total, like for like", "", "", tot[0], tot[1],
                     tot[1] - tot[0], tot[2], tot[3], tot[3] - tot[2]])
        emit("Installed size (stripped with the chroot's strip; eh2sframe run "
             "after it, as contrib/debian/dh_sframe does): growth over the "
             "build without .sframe, and that growth minus the .sframe "
             "section. gas+ld places .sframe inside the read-only segment, "
             "so its growth comes in whole pages; eh2sframe adds the section "
             "plus the bytes README.md (\"Size on disk\") lists. The total "
             "counts the binaries whose two .sframe sections are within 25 % "
             "of each other (prog-static: libc.a has no gas SFrame).")
        emit()
        table(["code base", "binary", "installed B (no .sframe)",
               "gas .sframe B", "gas+ld +B", "gas+ld beyond", "e2s .sframe B",
               "e2s +B", "e2s beyond"], rows)

# ---- tree mode (tree_section, above) -------------------------------------------
tree_summary = tree_section(read_tree())

prof_path = os.path.join(work, "profile.txt")
if os.path.exists(prof_path):
    with open(prof_path) as f:
        plines = f.read().split("\n")
    pin = plines[0].split("=", 1)[1] if plines and plines[0].startswith("input=") else "?"
    ent = []
    for l in plines[1:]:
        p = l.split()
        if len(p) >= 4 and p[0].endswith("%"):
            ent.append((float(p[0][:-1]), p[1], p[2], " ".join(p[3:])))
    if ent:
        emit("## Profile: where `eh2sframe IN -o OUT` spends its cycles")
        emit()
        emit("`perf record` (10 kHz, five runs in one profile) of `eh2sframe "
             "-q %s -o OUT`; share of all samples. `[k]` = kernel. "
             "`clear_page*` is the kernel zeroing memory on its first touch "
             "(the process's arrays, huge pages where granted); the page "
             "cache and copy_file_range entries are the file copy `cp` pays "
             "too." % name(pin))
        emit()
        bydso = {}
        for pct, dso, kind, sym in ent:
            bydso[dso] = bydso.get(dso, 0) + pct
        zero = sum(e[0] for e in ent if e[3].startswith("clear_page"))
        table(["where", "% of samples"],
              [[d, "%.1f" % v] for d, v in sorted(bydso.items(), key=lambda x: -x[1])] +
              [["of which kernel page zeroing (clear_page*)", "%.1f" % zero]])
        table(["% of samples", "dso", "symbol"],
              [["%.2f" % e[0], e[1], e[2] + " " + e[3]] for e in ent[:25]])

# ---- size on disk ----------------------------------------------------------------
size_ok = None
szdir = os.path.join(work, "size")
if os.path.exists(os.path.join(szdir, "usrbin.tsv")):
    import subprocess
    emit("## Size on disk (bench/size.py, bench/size_report.py)")
    emit()
    emit("`eh2sframe IN -o OUT` on every file of this machine's /usr/bin (%s) and "
         "on the shared libraries of python3, perl and gdb; growth = converted "
         "minus original bytes, block growth from st_blocks. A baseline "
         "column, when present, is the same conversion by the eh2sframe "
         "named in BENCH_BASELINE (%s). Per-file figures: size/usrbin.tsv "
         "and size/libs.tsv in the bench work directory." %
         (machine.get("mode"), machine.get("baseline", "none")))
    emit()
    size_ok = True
    here = os.path.dirname(os.path.abspath(__file__))
    for title, files in (("/usr/bin", ["usrbin.tsv"]),
                         ("libraries of python3, perl, gdb", ["libs.tsv"]),
                         ("both", ["usrbin.tsv", "libs.tsv"])):
        p = subprocess.run([sys.executable, os.path.join(here, "size_report.py"),
                            "--check", "--allow", "libc.so.6",
                            "--worst", "0" if title == "both" else "5",
                            "--title", title] +
                           [os.path.join(szdir, f) for f in files],
                           capture_output=True, text=True)
        for line in p.stdout.rstrip("\n").split("\n"):
            emit(line)
            if line.startswith("  - "):
                size_ok = False

# ---- targets --------------------------------------------------------------------
emit("## Targets")
emit()
real = [i for i in order if not name(i).startswith("synth-")]
largest_real = max(real, key=lambda i: int(stats[i]["file_bytes"])) if real else None
largest = max(order, key=lambda i: int(stats[i]["file_bytes"]))
thr = {i: int(stats[i]["eh_bytes"]) / MB / core_time(stats[i]) for i in order}
judged = [i for i in order if "libLLVM" in name(i) or name(i) == "synth-100000"]
judged = judged or [i for i in order if int(stats[i]["eh_bytes"]) >= 1_000_000] or order
t1 = all(thr[i] >= 500 for i in judged)
emit("- In-memory core >= 500 MB/s of .eh_frame (libLLVM-14, synth-100000): "
     "**%s** (%s)." % ("met" if t1 else "NOT met",
                       ", ".join("%s %.0f MB/s, %.2f M FDEs/s, %.1f M rows/s" %
                                 (name(i), thr[i],
                                  int(stats[i]["fdes"]) / 1e6 / core_time(stats[i]),
                                  int(stats[i]["rows"]) / 1e6 / core_time(stats[i]))
                                 for i in judged)))
llvm = [i for i in order if "libLLVM" in name(i)] or \
    ([largest_real] if largest_real else [])
# Issue #33's targets: -o within 1.5x cp's CPU on libLLVM-14 and python3.11,
# the core at >= 200 MB/s on libLLVM-14, peak RSS <= 24 MiB (-o) and
# <= 48 MiB (--stats) on libLLVM-14, tree mode within 1.5x cp -a's CPU,
# >= 10x readelf, the same bytes as the baseline.
mid = [i for i in order if name(i).startswith("python3")]
for inp in llvm:
    emit("- Core >= 200 MB/s of .eh_frame, single-threaded (%s): **%s** "
         "(%.0f MB/s)." % (name(inp), "met" if thr[inp] >= 200 else "NOT met",
                          thr[inp]))
for inp in llvm + mid:
    rc = med(inp, "eh2sframe", 0) / med(inp, "cp", 0)
    rw = med(inp, "eh2sframe", 2) / med(inp, "cp", 2)
    nf = fresh_free(inp)
    emit("- `eh2sframe IN -o OUT` <= 1.5x `cp IN OUT` CPU (%s): **%s** "
         "(%.2fx CPU; %.2fx wall; %.1f vs %.1f ms%s)." %
         (name(inp), "met" if rc <= 1.5 else "NOT met", rc, rw,
          med(inp, "eh2sframe", 0) * 1000, med(inp, "cp", 0) * 1000,
          "" if nf is None else
          "; %.2fx with no first touches of fresh memory, an estimate" %
          (nf / med(inp, "cp", 0))))
    rr = med(inp, "readelf", 0) / med(inp, "eh2sframe", 0)
    emit("- >= 10x faster than `readelf --debug-dump=frames-interp` (%s): "
         "**%s** (%.1fx by CPU time)." %
         (name(inp), "met" if rr >= 10 else "NOT met", rr))
    if "baseline" in tools:
        rb = med(inp, "eh2sframe", 0) / med(inp, "baseline", 0)
        emit("- No slower than the baseline %s (%s): **%s** (%.2fx its CPU "
             "time)." % (machine.get("baseline"), name(inp),
                        "met" if rb <= 1.0 else "NOT met", rb))
for inp in llvm:
    ro = med(inp, "eh2sframe", 1) / 1024
    emit("- Peak RSS of `-o` <= 24 MiB (%s): **%s** (%.1f MiB)." %
         (name(inp), "met" if ro <= 24 else "NOT met", ro))
    if med(inp, "stats", 1) is not None:
        rs = med(inp, "stats", 1) / 1024
        emit("- Peak RSS of `--stats` <= 48 MiB (%s): **%s** (%.1f MiB)." %
             (name(inp), "met" if rs <= 48 else "NOT met", rs))
same = [stats[i].get("same_as_baseline", "none") for i in order]
if any(x != "none" for x in same):
    differ = [name(i) for i in order if stats[i].get("same_as_baseline") == "no"]
    emit("- Output bytes the same as the baseline's (every input above): "
         "**%s**%s." % ("met" if not differ else "NOT met",
                        " (differ: %s)" % ", ".join(differ) if differ else ""))
tree_targets(tree_summary)
emit("- Peak memory <= 2x input + 16 MiB: **%s** (table above)." %
     ("met" if mem_ok else "NOT met"))
if size_ok is not None:
    emit("- Size on disk: total growth <= 1.05 x .sframe, PIE/shared <= "
         ".sframe + 4 KiB, non-PIE <= one page more, no holes: **%s** "
         "(libc.so.6 excepted, see README.md \"Size on disk\")." %
         ("met" if size_ok else "NOT met"))
k = "library one-shot (cold)"
if k in exps:
    emit("- Cost linear in input size: **%s** (fitted exponent %.3f for the "
         "cold library conversion; %s)." %
         ("met" if exps[k] <= 1.05 else "NOT met", exps[k],
          ", ".join("%s %.3f" % (a, b) for a, b in exps.items() if a != k)))
emit()

with open(out_path, "w") as f:
    f.write("\n".join(lines) + "\n")
