#!/usr/bin/env python3
"""Differential test of `eh2sframe --dump-cfi` against independent CFI readers.

Oracles:
  readelf (default)  `readelf --debug-dump=frames-interp FILE` (GNU binutils;
                     multi-target for ELF, so foreign-arch files work too).
  --libdwarf BIN     the libdwarf oracle (tests/oracle/dwarf_rows.c) which
                     prints the --dump-cfi text format itself.

For every file: the set of FDEs (by section offset) must be the same, each
FDE's length must agree (and its start, for linked files), and over every
address of [begin, end) the CFA rule and the RA, FP and SP rules must agree.
Rows are compared as piecewise functions of the address: the union of both
sides' row starts splits the FDE into segments and each segment is one
"row compared". So neither side needs to merge identical rows.

Normalisations of readelf output (each one is a readelf quirk, see
binutils/dwarf.c display_debug_frames / frame_display_row):
  R1 readelf prints a row at every advance_loc even when nothing changed, and
     can print two rows at one address (advance by 0): the last one wins.
     Rows at or past the FDE end (an advance beyond pc_range) are dropped.
  R2 An FDE whose instructions are all DW_CFA_nop (or empty) prints no table:
     its rules are the CIE's final row (the CIE's own table).
  R3 Columns are printed only if some instruction of the CIE/FDE names the
     register. A column missing from the table means "no rule" (ours `-`).
  R4 A column named anywhere in the FDE shows `u` before its first rule, and
     DW_CFA_restore of a register the CIE never named shows `u` too; readelf
     cannot tell "undefined" from "no rule". So readelf `u` matches our `u`
     or `-` (the libdwarf oracle does tell them apart: use it for that).
  R5 The CFA of DW_CFA_def_cfa_expression prints as `exp` (no bytes); the
     expression bytes of `exp`/`vexp` register rules are not shown either, so
     only the kind is compared. readelf keeps printing `exp` after a
     def_cfa_offset that follows a def_cfa_expression; we print `invalid`
     there (DWARF leaves it undefined), so readelf `exp` matches our `invalid`.
  R6 CFA and register offsets are printed through a C `int`: ours are
     compared modulo 2^32 (signed 32-bit).
  R7 Register names: readelf prints its per-machine names (rsp, x29, sp, r15,
     f0 ...; s390x DWARF 16.. are f0,f2,f4,f6,f1,f3,... not f0..f15 in order),
     "r<N>" for registers it has no name for, and `r<N> (name)` for
     DW_CFA_register rules. All map back to DWARF numbers here.
  R8 The RA column is labelled `ra` (the CIE's return address register).
  R9 Before any DW_CFA_def_cfa* readelf shows the CFA as register 0 + 0;
     that matches our `unset`.
  R10 readelf's DW_CFA_remember_state stack is not reset between FDEs, and
     `Mismatched DW_CFA_restore_state` / `bad register` / warning lines are
     interleaved with the rows: non-row lines are ignored.
  R11 readelf ignores DW_CFA_AARCH64_negate_ra_state in its tables. For
     AArch64 files our ` mangled` flag is instead checked against a second,
     raw `readelf --debug-dump=frames` pass: the RA sign state is toggled at
     each DW_CFA_AARCH64_negate_ra_state, saved/restored by remember/
     restore_state (per FDE), starting from the CIE's state; addresses come
     from readelf's "advance_loc: N to ADDR" / "set_loc: ADDR" lines.
  R12 For relocatable files readelf applies the .rela.eh_frame relocations,
     giving section-relative starts as we do; row addresses are compared as
     offsets from the FDE start in every case.

FDEs that either side marks as an error (ours: ` error=`; the libdwarf
oracle: any libdwarf failure, e.g. DW_CFA_GNU_negative_offset_extended or a
'B' augmentation it does not know) are counted as error_fdes_skipped; with
--strict-errors an FDE we reject while readelf interprets it (or where only
one of ours/libdwarf fails) counts as a disagreement.

Exit status: 0 no disagreement, 1 disagreements, 2 usage/tool error.
"""

import argparse
import os
import re
import subprocess
import sys

# ---- register names (DWARF numbers) as readelf prints them -------------

X86_64 = ["rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
          "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"]
X86_64 += ["xmm%d" % i for i in range(16)]
X86_64 += ["st%d" % i for i in range(8)] + ["mm%d" % i for i in range(8)]
X86_64 += ["rflags", "es", "cs", "ss", "ds", "fs", "gs", None, None,
           "fs.base", "gs.base", None, None, "tr", "ldtr", "mxcsr", "fcw", "fsw"]
AARCH64 = ["x%d" % i for i in range(31)] + ["sp"]
S390X = [None] * 16 + ["f0", "f2", "f4", "f6", "f1", "f3", "f5", "f7",
                       "f8", "f10", "f12", "f14", "f9", "f11", "f13", "f15"]

EM_X86_64, EM_AARCH64, EM_S390 = 62, 183, 22
MACHINES = {
    # e_machine: (abi name, names, sp, fp, ra)
    EM_X86_64: ("amd64", X86_64, 7, 6, 16),
    EM_AARCH64: ("aarch64", AARCH64, 31, 29, 30),
    EM_S390: ("s390x", S390X, 15, 11, 14),
}


def name_map(names):
    m = {}
    for i, n in enumerate(names):
        if n:
            m[n] = i
    return m


def reg_of(name, nmap):
    """readelf register name -> DWARF number (R7); None if unknown."""
    n = nmap.get(name)
    if n is not None:
        return n
    if name.startswith("r") and name[1:].isdigit():
        return int(name[1:])
    return None


def elf_machine(path):
    try:
        with open(path, "rb") as f:
            h = f.read(20)
    except OSError:
        return None
    if len(h) < 20 or h[:4] != b"\x7fELF":
        return None
    order = "little" if h[5] == 1 else "big"
    return int.from_bytes(h[18:20], order)


def s32(v):
    """Wrap to a signed 32-bit value (R6)."""
    v &= 0xffffffff
    return v - (1 << 32) if v & 0x80000000 else v


# ---- the --dump-cfi format ----------------------------------------------

RE_OUR_HDR = re.compile(r"^# (.*) (\S+) abi=(\S+) fdes=(\d+) bad=(\d+)\s*$")
RE_OUR_FDE = re.compile(
    r"^FDE ([0-9a-f]+) cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.([0-9a-f]+)(.*)$")
RE_OUR_ROW = re.compile(
    r"^  ([0-9a-f]+) cfa=(\S+) ra=(\S+) fp=(\S+) sp=(\S+)( mangled)?\s*$")
RE_CFA = re.compile(r"^r(\d+)([+-]\d+)$")
RE_RULE = re.compile(r"^(-|u|s|[cv][+-]\d+|r\d+|exp:[0-9a-f]*|vexp:[0-9a-f]*)$")


class Fde:
    __slots__ = ("off", "cie", "begin", "end", "error", "rows", "line", "flags")

    def __init__(self, off, cie, begin, end, line):
        self.off, self.cie, self.begin, self.end = off, cie, begin, end
        self.error = None
        self.rows = []  # (start, (cfa, ra, fp, sp), text)
        self.line = line
        self.flags = ""


class FormatError(Exception):
    pass


def parse_ours(stream, what):
    """Parse --dump-cfi text: {section: {off: Fde}}, abi per section."""
    sections, abis = {}, {}
    cur, fde = None, None
    for lineno, line in enumerate(stream, 1):
        line = line.rstrip("\n")
        if not line:
            continue
        if line.startswith("#"):
            m = RE_OUR_HDR.match(line)
            if not m:
                raise FormatError("%s:%d: bad header: %s" % (what, lineno, line))
            cur = sections.setdefault(m.group(2), {})
            abis[m.group(2)] = m.group(3)
            fde = None
            continue
        if line.startswith("FDE "):
            m = RE_OUR_FDE.match(line)
            if not m or cur is None:
                raise FormatError("%s:%d: bad FDE line: %s" % (what, lineno, line))
            fde = Fde(int(m.group(1), 16), int(m.group(2), 16),
                      int(m.group(3), 16), int(m.group(4), 16), line)
            rest = m.group(5)
            em = re.search(r" error=(.*)$", rest)
            if em:
                fde.error = em.group(1)
                rest = rest[:em.start()]
            fde.flags = rest.strip()
            if fde.off in cur:
                raise FormatError("%s:%d: duplicate FDE %x" % (what, lineno, fde.off))
            cur[fde.off] = fde
            continue
        m = RE_OUR_ROW.match(line)
        if not m or fde is None:
            raise FormatError("%s:%d: bad row line: %r" % (what, lineno, line))
        cfa = m.group(2)
        if not (RE_CFA.match(cfa) or cfa in ("invalid", "unset")
                or re.match(r"^exp:[0-9a-f]*$", cfa)):
            raise FormatError("%s:%d: bad CFA %r" % (what, lineno, cfa))
        for r in m.group(3, 4, 5):
            if not RE_RULE.match(r):
                raise FormatError("%s:%d: bad rule %r" % (what, lineno, r))
        fde.rows.append((int(m.group(1), 16), m.group(2, 3, 4, 5), line.strip()))
    return sections, abis


# ---- readelf --debug-dump=frames-interp ---------------------------------

RE_RE_SEC = re.compile(r"^Contents of the (\S+) section")
RE_RE_CIE = re.compile(r"^([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ CIE \".*\" cf=\S+ df=\S+ ra=(\d+)")
RE_RE_FDE = re.compile(
    r"^([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ FDE cie=([0-9a-f]+) pc=(?:[0-9a-f]+:)?([0-9a-f]+)\.\.([0-9a-f]+)")
RE_RE_HDR = re.compile(r"^ +LOC +CFA\b(.*)$")
RE_RE_ROW = re.compile(r"^([0-9a-f]+) (\S+)(.*)$")
RE_TOK = re.compile(r"r\d+ \([^)]*\)|\S+")


class ReFde:
    __slots__ = ("off", "cie", "begin", "end", "cols", "rows", "line", "is_cie", "ra")

    def __init__(self, off, cie, begin, end, line, is_cie=False, ra=None):
        self.off, self.cie, self.begin, self.end = off, cie, begin, end
        self.line, self.is_cie, self.ra = line, is_cie, ra
        self.cols = None   # list of DWARF numbers, one per printed column
        self.rows = []     # (loc, cfa_token, {reg: token}, text)


def parse_readelf(stream, nmap):
    """Yield (section, ReFde) for every CIE and FDE, in order."""
    sec, rec = None, None
    for line in stream:
        line = line.rstrip("\n")
        m = RE_RE_SEC.match(line)
        if m:
            if rec:
                yield sec, rec
            sec, rec = m.group(1), None
            continue
        m = RE_RE_FDE.match(line)
        if m:
            if rec:
                yield sec, rec
            rec = ReFde(int(m.group(1), 16), int(m.group(2), 16),
                        int(m.group(3), 16), int(m.group(4), 16), line)
            continue
        m = RE_RE_CIE.match(line)
        if m:
            if rec:
                yield sec, rec
            rec = ReFde(int(m.group(1), 16), None, 0, 0, line, True, int(m.group(2)))
            continue
        if rec is None:
            continue
        m = RE_RE_HDR.match(line)
        if m:
            cols = []
            for name in m.group(1).split():
                cols.append("ra" if name == "ra" else reg_of(name, nmap))
            rec.cols = cols
            continue
        if rec.cols is None:
            continue
        m = RE_RE_ROW.match(line)
        if not m:
            continue  # warnings, "Mismatched DW_CFA_restore_state" (R10)
        toks = RE_TOK.findall(m.group(3))
        if len(toks) != len(rec.cols):
            continue
        regs = {}
        for c, t in zip(rec.cols, toks):
            regs[c] = t
        rec.rows.append((int(m.group(1), 16), m.group(2), regs, line))
    if rec:
        yield sec, rec


# ---- comparison ------------------------------------------------------------

def cfa_match_readelf(tok, ours, nmap):
    if tok == "exp":
        return ours.startswith("exp:") or ours == "invalid"   # R5
    m = re.match(r"^(\S+?)([+-]\d+)$", tok)
    if not m:
        return False
    reg = reg_of(m.group(1), nmap)
    off = int(m.group(2))
    if ours == "unset":
        return reg == 0 and off == 0                         # R9
    mo = RE_CFA.match(ours)
    if not mo:
        return False
    return reg == int(mo.group(1)) and s32(off) == s32(int(mo.group(2)))


def rule_match_readelf(tok, ours):
    if tok is None:
        return ours == "-"                                   # R3
    if tok == "u":
        return ours in ("u", "-")                            # R4
    if tok == "s":
        return ours == "s"
    if tok == "exp":
        return ours.startswith("exp:")                       # R5
    if tok == "vexp":
        return ours.startswith("vexp:")
    if tok[0] in "cv" and len(tok) > 1 and tok[1] in "+-":
        if ours[0] != tok[0] or len(ours) < 2 or ours[1] not in "+-":
            return False
        return s32(int(tok[1:])) == s32(int(ours[1:]))       # R6
    m = re.match(r"^r(\d+)", tok)                             # R7
    if m:
        return ours == "r" + m.group(1)
    return False


class Stats:
    def __init__(self):
        self.files = 0
        self.fdes = 0
        self.rows = 0
        self.disagree = 0
        self.fde_disagree = 0
        self.skipped_err = 0
        self.mangled = 0


def segments(rows_a, rows_b, begin, end):
    """Walk the union of row starts of two sorted row lists over [begin,end).
    rows_* are lists of (start, payload). Yields (start, pa, pb)."""
    ia = ib = 0
    na, nb = len(rows_a), len(rows_b)
    cur_a = cur_b = None
    pos = begin
    while True:
        while ia < na and rows_a[ia][0] <= pos:
            cur_a = rows_a[ia][1]
            ia += 1
        while ib < nb and rows_b[ib][0] <= pos:
            cur_b = rows_b[ib][1]
            ib += 1
        yield pos, cur_a, cur_b
        nxt = end
        if ia < na:
            nxt = min(nxt, rows_a[ia][0])
        if ib < nb:
            nxt = min(nxt, rows_b[ib][0])
        if nxt >= end:
            return
        pos = nxt


def readelf_rows(rec, cie_final, begin, end):
    """Normalise a readelf FDE table to [(start, (cfa, regs, text))] (R1, R2)."""
    if not rec.rows:
        if cie_final is None:
            return [(begin, ("r0+0", {}, "(no rows, no CIE table)"))]
        loc, cfa, regs, text = cie_final
        return [(begin, (cfa, regs, "(CIE) " + text))]
    out = []
    for loc, cfa, regs, text in rec.rows:
        if loc >= end:                                       # R1
            continue
        if out and out[-1][0] == loc:
            out[-1] = (loc, (cfa, regs, text))
        else:
            out.append((loc, (cfa, regs, text)))
    out.sort(key=lambda r: r[0])
    return out


def report(args, path, off, kind, detail):
    if args.verbose:
        print("DISAGREE %s fde=%x %s: %s" % (path, off, kind, detail))


def compare_readelf(args, path, ours_secs, machine, st):
    mach = MACHINES.get(machine)
    names = mach[1] if mach else []
    nmap = name_map(names)
    sp_reg, fp_reg = (mach[2], mach[3]) if mach else (None, None)
    proc = subprocess.Popen([args.readelf, "--debug-dump=frames-interp", path],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, errors="replace", bufsize=1 << 20)
    seen = {s: set() for s in ours_secs}
    cie_final = {}
    bad = 0
    for sec, rec in parse_readelf(proc.stdout, nmap):
        if sec not in ours_secs:
            continue
        if rec.is_cie:
            cie_final[rec.off] = rec.rows[-1] if rec.rows else None
            continue
        ours = ours_secs[sec].get(rec.off)
        seen[sec].add(rec.off)
        if ours is None:
            st.disagree += 1
            st.fde_disagree += 1
            report(args, path, rec.off, "missing-in-ours", rec.line)
            continue
        if ours.error:
            st.skipped_err += 1
            if args.strict_errors:
                st.disagree += 1
                st.fde_disagree += 1
                report(args, path, rec.off, "ours-error", ours.line)
            continue
        st.fdes += 1
        fde_bad = 0
        if (ours.begin, ours.end) != (rec.begin, rec.end):
            fde_bad += 1
            report(args, path, rec.off, "range",
                   "ours: %s | readelf: %s" % (ours.line, rec.line))
        # compare in offsets from the FDE start (R12)
        rb, re_ = rec.begin, rec.end
        rrows = [(loc - rb, p) for loc, p in
                 readelf_rows(rec, cie_final.get(rec.cie), rb, re_)]
        orows = [(s - ours.begin, (r, t)) for s, r, t in ours.rows]
        length = ours.end - ours.begin
        if not orows and length > 0:
            fde_bad += 1
            report(args, path, rec.off, "no-rows", ours.line)
        for s, r, t in ours.rows:
            if s < ours.begin or s >= ours.end and length > 0:
                fde_bad += 1
                report(args, path, rec.off, "row-outside-range",
                       "%s | %s" % (ours.line, t))
        for pos, pr, po in segments(rrows, orows, 0, max(length, 1)):
            st.rows += 1
            if pr is None or po is None:
                fde_bad += 1
                report(args, path, rec.off, "row-gap",
                       "at +%x ours=%s readelf=%s" % (pos, po and po[1], pr and pr[2]))
                continue
            cfa_tok, regs, rtext = pr
            (ocfa, ora, ofp, osp), otext = po
            ra_tok = regs.get("ra")
            fp_tok = regs.get(fp_reg)
            sp_tok = regs.get(sp_reg)
            what = []
            if not cfa_match_readelf(cfa_tok, ocfa, nmap):
                what.append("cfa")
            if not rule_match_readelf(ra_tok, ora):
                what.append("ra")
            if not rule_match_readelf(fp_tok, ofp):
                what.append("fp")
            if not rule_match_readelf(sp_tok, osp):
                what.append("sp")
            if what:
                fde_bad += 1
                report(args, path, rec.off, ",".join(what),
                       "at %x (+%x)\n    ours:    %s\n    readelf: %s\n    %s"
                       % (ours.begin + pos, pos, otext, rtext.strip(), ours.line))
        if fde_bad:
            st.disagree += fde_bad
            st.fde_disagree += 1
    proc.stdout.close()
    if proc.wait() not in (0, 1):
        bad += 1
    for sec, fdes in ours_secs.items():
        for off, f in fdes.items():
            if off not in seen[sec]:
                st.disagree += 1
                st.fde_disagree += 1
                report(args, path, off, "missing-in-readelf", f.line)
    return bad


RE_RAW_CIE = re.compile(r"^([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ CIE\b")
RE_RAW_TO = re.compile(r"^  DW_CFA_(?:advance_loc\d?: \d+ to|set_loc:) ([0-9a-f]+)")


def raw_mangled(stream):
    """Yield (section, is_cie, off, cie_off, begin, end, changes) from raw
    readelf frames output; changes = [(loc or None, op)] with op in
    'n' (negate), 'm' (remember), 'r' (restore) or 'a' (advance)."""
    sec, cur = None, None
    for line in stream:
        m = RE_RE_SEC.match(line)
        if m:
            if cur:
                yield cur
            sec, cur = m.group(1), None
            continue
        m = RE_RE_FDE.match(line)
        if m:
            if cur:
                yield cur
            cur = (sec, False, int(m.group(1), 16), int(m.group(2), 16),
                   int(m.group(3), 16), int(m.group(4), 16), [])
            continue
        m = RE_RAW_CIE.match(line)
        if m:
            if cur:
                yield cur
            cur = (sec, True, int(m.group(1), 16), None, 0, 0, [])
            continue
        if cur is None or not line.startswith("  DW_CFA_"):
            continue
        m = RE_RAW_TO.match(line)
        if m:
            cur[6].append((int(m.group(1), 16), "a"))
        elif line.startswith("  DW_CFA_AARCH64_negate_ra_state") or \
                line.startswith("  DW_CFA_GNU_window_save"):
            cur[6].append((None, "n"))
        elif line.startswith("  DW_CFA_remember_state"):
            cur[6].append((None, "m"))
        elif line.startswith("  DW_CFA_restore_state"):
            cur[6].append((None, "r"))
    if cur:
        yield cur


def compare_mangled(args, path, ours_secs, st):
    proc = subprocess.Popen([args.readelf, "--debug-dump=frames", path],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, errors="replace", bufsize=1 << 20)
    cie_state = {}
    for sec, is_cie, off, cie, begin, end, ops in raw_mangled(proc.stdout):
        if sec not in ours_secs:
            continue
        state, stack = False, []
        if not is_cie:
            state = cie_state.get(cie, False)
        rows = [(begin, state)]
        for loc, op in ops:
            if op == "a":
                if loc == rows[-1][0]:
                    rows[-1] = (loc, state)
                else:
                    rows.append((loc, state))
                continue
            if op == "n":
                state = not state
            elif op == "m":
                stack.append(state)
            elif op == "r" and stack:
                state = stack.pop()
            rows[-1] = (rows[-1][0], state)
        if is_cie:
            cie_state[off] = state
            continue
        ours = ours_secs[sec].get(off)
        if ours is None or ours.error:
            continue  # reported by the table comparison
        a = [(loc - begin, v) for loc, v in rows if loc < end]
        b = [(s - ours.begin, (t.endswith(" mangled"), t)) for s, r, t in ours.rows]
        for pos, va, vb in segments(a, b, 0, max(end - begin, 1)):
            st.mangled += 1
            if va is None or vb is None or va != vb[0]:
                st.disagree += 1
                report(args, path, off, "mangled",
                       "at %x (+%x) readelf-raw sign state=%s ours: %s"
                       % (ours.begin + pos, pos, va, vb and vb[1]))
    proc.stdout.close()
    proc.wait()


def compare_same_format(args, path, ours_secs, oracle_secs, st):
    """Ours vs an oracle printing the --dump-cfi format (libdwarf). The
    oracle may sample FDEs: only FDEs it printed are compared."""
    for sec, ofdes in oracle_secs.items():
        mine = ours_secs.get(sec)
        if mine is None:
            st.disagree += 1
            report(args, path, 0, "section", "oracle has %s, ours has %s"
                   % (sec, ",".join(ours_secs)))
            continue
        for off, of in ofdes.items():
            f = mine.get(off)
            if f is None:
                st.disagree += 1
                st.fde_disagree += 1
                report(args, path, off, "missing-in-ours", of.line)
                continue
            if of.error or f.error:
                st.skipped_err += 1
                if bool(of.error) != bool(f.error) and args.strict_errors:
                    st.disagree += 1
                    st.fde_disagree += 1
                    report(args, path, off, "error", "ours: %s | oracle: %s"
                           % (f.line, of.line))
                continue
            st.fdes += 1
            fde_bad = 0
            # libdwarf does not relocate .eh_frame of relocatable files:
            # only the length is comparable there (rows are offsets anyway).
            rel = "sec=" in f.flags
            if (f.end - f.begin != of.end - of.begin) if rel else \
                    ((f.begin, f.end) != (of.begin, of.end)):
                fde_bad += 1
                report(args, path, off, "range", "ours: %s | oracle: %s"
                       % (f.line, of.line))
            a = [(s - of.begin, (r, t)) for s, r, t in of.rows if s < of.end]
            b = [(s - f.begin, (r, t)) for s, r, t in f.rows]
            for pos, pa, pb in segments(a, b, 0, max(f.end - f.begin, 1)):
                st.rows += 1
                if pa is None or pb is None or pa[0] != pb[0]:
                    fde_bad += 1
                    report(args, path, off, "row",
                           "at %x (+%x)\n    ours:   %s\n    oracle: %s\n    %s"
                           % (f.begin + pos, pos, pb and pb[1], pa and pa[1], f.line))
            if fde_bad:
                st.disagree += fde_bad
                st.fde_disagree += 1


def run_ours(args, path):
    if args.ours_text:
        with open(args.ours_text) as f:
            return parse_ours(f, args.ours_text)
    p = subprocess.run([args.eh2sframe, "--dump-cfi", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, errors="replace")
    if p.returncode != 0:
        raise FormatError("%s --dump-cfi %s: exit %d: %s"
                          % (args.eh2sframe, path, p.returncode, p.stderr.strip()[:300]))
    return parse_ours(p.stdout.splitlines(), path)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print every disagreement")
    ap.add_argument("--eh2sframe", default=os.environ.get(
        "EH2SFRAME", os.path.join(here, "..", "eh2sframe")))
    ap.add_argument("--readelf", default=os.environ.get("READELF", "readelf"))
    ap.add_argument("--libdwarf", metavar="ORACLE",
                    help="compare against this dwarf_rows oracle binary instead of readelf")
    ap.add_argument("--every", type=int, default=1,
                    help="libdwarf oracle: sample every Nth FDE")
    ap.add_argument("--ours-text", help="read our dump from this file (one input file only)")
    ap.add_argument("--strict-errors", action="store_true",
                    help="count FDEs we reject (error=) as disagreements")
    ap.add_argument("--quiet", action="store_true", help="no per-file lines")
    args = ap.parse_args()

    total = Stats()
    tool_err = 0
    for path in args.files:
        st = Stats()
        st.files = 1
        try:
            ours, abis = run_ours(args, path)
        except FormatError as e:
            print("ERROR %s" % e)
            tool_err += 1
            continue
        if args.libdwarf:
            p = subprocess.run([args.libdwarf, "--every", str(args.every), path],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, errors="replace")
            if p.returncode != 0:
                print("ERROR oracle %s: exit %d: %s" % (path, p.returncode,
                                                        p.stderr.strip()[:300]))
                tool_err += 1
                continue
            try:
                orc, _ = parse_ours(p.stdout.splitlines(), "oracle:" + path)
            except FormatError as e:
                print("ERROR %s" % e)
                tool_err += 1
                continue
            compare_same_format(args, path, ours, orc, st)
        else:
            machine = elf_machine(path)
            tool_err += compare_readelf(args, path, ours, machine, st)
            if machine == EM_AARCH64:
                compare_mangled(args, path, ours, st)
        if not args.quiet:
            print("file %s abi=%s fdes=%d rows=%d%s disagreements=%d fdes_disagreeing=%d error_fdes_skipped=%d"
                  % (path, ",".join(abis.values()) or "-", st.fdes, st.rows,
                     " mangled_rows=%d" % st.mangled if st.mangled else "",
                     st.disagree, st.fde_disagree, st.skipped_err))
        for k in ("files", "fdes", "rows", "disagree", "fde_disagree", "skipped_err", "mangled"):
            setattr(total, k, getattr(total, k) + getattr(st, k))
    print("files=%d fdes=%d rows_compared=%d mangled_rows=%d disagreements=%d fdes_disagreeing=%d error_fdes_skipped=%d tool_errors=%d"
          % (total.files, total.fdes, total.rows, total.mangled, total.disagree,
             total.fde_disagree, total.skipped_err, tool_err))
    if tool_err:
        return 2
    return 1 if total.disagree else 0


if __name__ == "__main__":
    sys.exit(main())
