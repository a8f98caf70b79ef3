#!/usr/bin/env python3
"""DWARF CFI rows of an ELF file, as binutils' readelf reads them, for
glibc_check.c. Nothing here comes from eh2sframe: the rows are readelf's
own interpretation (--debug-dump=frames-interp), so the glibc consumer
test compares glibc's walker with a third party's reading of the DWARF.

    dwarf_rows.py [READELF] FILE > ROWS

One line per row, PCs as link-time addresses:
    LO HI CFA CFAOFF RA RAOFF FP FPOFF SIGNAL
  CFA  s (stack pointer) | f (frame pointer) | x (anything else)
  RA   c (at CFA+RAOFF) | u (undefined: outermost frame) |
       r (still in its register: AArch64 LR) | x (anything else)
  FP   c (at CFA+FPOFF) | s (unchanged) | x (anything else)
  SIGNAL  S for a signal frame (CIE augmentation "S"), else -

frames-interp prints "u" both for DW_CFA_undefined and for a column not
yet set, so the raw dump (--debug-dump=frames) says which "u" of the
return-address column is a real DW_CFA_undefined. A CFA given by a DWARF
expression is evaluated per PC when it is the AMD64 PLT form (rsp plus a
function of the PC's low bits); other expressions stay "x".
"""
import re
import struct
import subprocess
import sys

MACHINES = {62: ("rsp", "rbp"), 183: ("sp", "x29")}  # EM_X86_64, EM_AARCH64

HDR = re.compile(r"^([0-9a-f]{8,}) [0-9a-f]+ ([0-9a-f]+) (CIE|FDE)(.*)$")
ADV = re.compile(r"DW_CFA_(?:advance_loc\d?|set_loc): .*?to ([0-9a-f]+)")
REG = re.compile(r"DW_CFA_(\w+): r(\d+)\b")
EXPR = re.compile(r"DW_CFA_def_cfa_expression \((.*)\)$")
MAX_EXPAND = 1 << 16  # PC-dependent rows expanded per PC up to this size


def machine(path):
    with open(path, "rb") as f:
        h = f.read(20)
    if h[:4] != b"\x7fELF" or h[4] != 2 or h[5] != 1:
        sys.exit("dwarf_rows: %s: not a little-endian ELF64 file" % path)
    return struct.unpack_from("<H", h, 18)[0]


def blocks(text):
    """(header match, body lines) per CIE/FDE of a readelf dump."""
    cur = None
    for line in text.splitlines():
        m = HDR.match(line)
        if m:
            if cur:
                yield cur
            cur = (m, [])
        elif cur and line.strip():
            cur[1].append(line)
    if cur:
        yield cur


def raw_events(text):
    """Per CIE/FDE offset: RA-column events [(loc, 'U'|'D')] and CFA
    expressions [(loc, ops)], from the raw dump."""
    out = {}
    ra_of = {}
    for m, body in blocks(text):
        off, kind, rest = m.group(1), m.group(3), m.group(4)
        loc = -1
        if kind == "FDE":
            pc = re.search(r"pc=([0-9a-f]+)\.\.", rest)
            loc = int(pc.group(1), 16) if pc else -1
            cie = re.search(r"cie=([0-9a-f]+)", rest).group(1)
            ra = ra_of.get(cie)
        else:
            ra = None
        ev, ex = [], []
        for line in body:
            s = line.strip()
            if kind == "CIE" and s.startswith("Return address column:"):
                ra = int(s.split(":")[1])
                ra_of[off] = ra
                continue
            a = ADV.search(s)
            if a:
                loc = int(a.group(1), 16)
                continue
            e = EXPR.search(s)
            if e:
                ex.append((loc, e.group(1)))
                continue
            r = REG.search(s)
            if r and ra is not None and int(r.group(2)) == ra:
                ev.append((loc, "U" if r.group(1) == "undefined" else "D"))
        out[off] = (ev, ex)
    return out


def last_at(events, loc):
    v = None
    for l, what in events:
        if l <= loc:
            v = what
    return v


def plt_cfa(ops, pc, sp):
    """Evaluate the AMD64 PLT CFA expression at pc: ('s', off) or None."""
    st = []
    for op in ops.split(";"):
        op = op.strip()
        m = re.match(r"DW_OP_breg(\d+) \(\w+\): (-?\d+)$", op)
        if m:
            reg, k = int(m.group(1)), int(m.group(2))
            if reg == 7:
                st.append(("sp", k))
            elif reg == 16:
                st.append(pc + k)
            else:
                return None
            continue
        m = re.match(r"DW_OP_lit(\d+)$", op)
        if m:
            st.append(int(m.group(1)))
            continue
        m = re.match(r"DW_OP_const\d[us]: (-?\d+)$", op)
        if m:
            st.append(int(m.group(1)))
            continue
        if len(st) < 2:
            return None
        b, a = st.pop(), st.pop()
        if op == "DW_OP_plus":
            if isinstance(a, tuple) and isinstance(b, int):
                st.append((a[0], a[1] + b))
            elif isinstance(b, tuple) and isinstance(a, int):
                st.append((b[0], b[1] + a))
            else:
                return None
            continue
        if isinstance(a, tuple) or isinstance(b, tuple):
            return None
        if op == "DW_OP_and":
            st.append(a & b)
        elif op == "DW_OP_ge":
            st.append(1 if a >= b else 0)
        elif op == "DW_OP_shl":
            st.append(a << b)
        elif op == "DW_OP_minus":
            st.append(a - b)
        else:
            return None
    if len(st) == 1 and isinstance(st[0], tuple):
        return st[0][1]
    return None


def cell_off(cell, base):
    m = re.match(r"^%s([+-]\d+)$" % re.escape(base), cell)
    return int(m.group(1)) if m else None


def main():
    args = sys.argv[1:]
    readelf = args[0] if len(args) == 2 else "readelf"
    path = args[-1]
    mach = machine(path)
    if mach not in MACHINES:
        sys.exit("dwarf_rows: %s: machine %d not supported" % (path, mach))
    spname, fpname = MACHINES[mach]

    def run(opt):
        # readelf exits 1 over unrelated trouble (a missing separate
        # debug file): judge by its output.
        r = subprocess.run([readelf, "-W", opt, path], capture_output=True, text=True)
        if "Contents of the" not in r.stdout:
            sys.exit("dwarf_rows: %s %s %s failed: %s" % (readelf, opt, path, r.stderr.strip()))
        return r.stdout
    raw = raw_events(run("--debug-dump=frames"))
    interp = run("--debug-dump=frames-interp")
    cies = {}
    out = []
    for m, body in blocks(interp):
        off, kind, rest = m.group(1), m.group(3), m.group(4)
        cols, rows = None, []
        for line in body:
            # a register rule prints as "r8 (r8)": one cell
            f = re.sub(r" \([^)]*\)", "", line).split()
            if f and f[0] == "LOC":
                cols = f[1:]
            elif cols and f and re.match(r"^[0-9a-f]+$", f[0]):
                rows.append((int(f[0], 16), dict(zip(cols, f[1:]))))
        if kind == "CIE":
            aug = re.search(r'"([^"]*)"', rest)
            cies[off] = (aug.group(1) if aug else "", rows[:1])
            continue
        pcm = re.search(r"cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.([0-9a-f]+)", rest)
        if not pcm:
            continue
        cie, lo, hi = pcm.group(1), int(pcm.group(2), 16), int(pcm.group(3), 16)
        if lo >= hi or cie not in cies:
            continue
        aug, cierows = cies[cie]
        if not rows:  # only the CIE's initial instructions apply
            rows = [(lo, cierows[0][1] if cierows else {})]
        ev = raw.get(cie, ([], []))[0] + raw.get(off, ([], []))[0]
        exprs = raw.get(off, ([], []))[1]
        sig = "S" if "S" in aug else "-"
        rows = [r for r in rows if lo <= r[0] < hi]
        for i, (loc, c) in enumerate(rows):
            end = rows[i + 1][0] if i + 1 < len(rows) else hi
            if end <= loc:
                continue
            cfa = c.get("CFA", "")
            ra = c.get("ra", "")
            fp = c.get(fpname, "")
            # return address
            if ra.startswith("c") and cell_off(ra, "c") is not None:
                rk, ro = "c", cell_off(ra, "c")
            elif ra == "u" and last_at(ev, loc) == "U":
                rk, ro = "u", 0
            elif ra in ("", "u", "s") and mach == 183:
                rk, ro = "r", 0  # unset or same value: still in LR
            else:
                rk, ro = "x", 0
            # frame pointer
            if fp.startswith("c") and cell_off(fp, "c") is not None:
                fk, fo = "c", cell_off(fp, "c")
            elif fp in ("", "u", "s"):
                fk, fo = "s", 0
            else:
                fk, fo = "x", 0
            # CFA
            if cell_off(cfa, spname) is not None:
                ck, co = "s", cell_off(cfa, spname)
            elif cell_off(cfa, fpname) is not None:
                ck, co = "f", cell_off(cfa, fpname)
            else:
                ck, co = "x", 0
            if ck == "x" and cfa == "exp" and mach == 62 and end - loc <= MAX_EXPAND:
                ops = None
                for l, e in exprs:
                    if l <= loc:
                        ops = e
                if ops is not None and plt_cfa(ops, loc, spname) is not None:
                    for pc in range(loc, end):
                        k = plt_cfa(ops, pc, spname)
                        out.append("%x %x %s %d %s %d %s %d %s" % (
                            pc, pc + 1, "s" if k is not None else "x", k or 0,
                            rk, ro, fk, fo, sig))
                    continue
            out.append("%x %x %s %d %s %d %s %d %s" % (loc, end, ck, co, rk, ro, fk, fo, sig))
    sys.stdout.write("\n".join(out) + ("\n" if out else ""))


if __name__ == "__main__":
    main()
