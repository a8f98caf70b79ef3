#!/usr/bin/env python3
"""Normalise SFrame text dumps into comparable per-FDE / per-FRE lines.

Accepted inputs (auto-detected, several may be concatenated):
  * `objdump --sframe` / `readelf --sframe` text (binutils 2.47, V3),
  * `eh2sframe --dump` text (same layout, may have "Block N" sub-headers),
  * tests/interop/sframe_check output (already normalised; passed through).

Output, one line each:
  HDR flags=0x<f> fixed_fp=<d> fixed_ra=<d> fdes=<n> fres=<n>
  FDE <func_start> size=<hex> type=default|flex pc=inc|mask[ signal][ bkey]
  FRE <func_start> <fre_off> cfa=<LOC> fp=<RULE> ra=<RULE>[ m]
LOC/RULE as in tests/interop/sframe_check.c: sp+8, fp+16, r10+0, (fp-8),
u, c-16, vc+8, r16+0; the outermost FRE is "cfa=undef fp=- ra=undef".
objdump's RA column is resolved with the header's fixed RA offset: "f" (and
"U", the padding word, when a fixed offset exists) -> c<fixed>; "U" without
one (s390x "RA not saved") -> u. fre_off is relative to the function start
(objdump prints absolute PCs for PCTYPE_INC functions).

Options:
  --merge      merge consecutive FREs of an FDE with identical rules (gas
               emits duplicates at every CFI directive; a merging encoder
               does not), so two dumps compare by covered PC ranges.
  --fre-only   print only FRE lines.
  --no-hdr     omit HDR lines.
Exit status 0; 2 on unreadable input or a line it cannot parse.
"""
import re
import sys

HEX = r"[0-9a-fA-F]+"
FUNC_RE = re.compile(r"^\s*func idx \[(\d+)\]: pc = (-?0x" + HEX + r"|-?\d+), size = (\d+) bytes(.*)$")
ROW_RE = re.compile(r"^\s*(" + HEX + r")\s+(.*?)\s*$")


def norm_sign(s):
    return s.replace("+-", "-").replace("-+", "-")


def norm_loc(tok):
    """objdump CFA / FP / RA token -> canonical token (no RA fixups)."""
    tok = norm_sign(tok.strip())
    m = re.fullmatch(r"(\(?)(sp|fp|r\d+|c|vc)([+-]\d+)(\)?)", tok)
    if not m:
        return tok
    base, off = m.group(2), int(m.group(3))
    s = "%s%+d" % (base, off)
    return "(%s)" % s if m.group(1) else s


class Norm:
    def __init__(self, merge):
        self.merge = merge
        self.out = []
        self.fixed_ra = 0
        self.fixed_fp = 0
        self.flags = 0
        self.hdr = None
        self.fde = None  # [start, size, type, pctype, extras, fres[]]

    def flush_fde(self):
        if self.fde is None:
            return
        start, size, ftype, pct, extras, fres = self.fde
        self.out.append(("FDE", "FDE %x size=%x type=%s pc=%s%s" % (start, size, ftype, pct, extras)))
        prev = None
        for off, rest in fres:
            if self.merge and rest == prev:
                continue
            prev = rest
            self.out.append(("FRE", "FRE %x %x %s" % (start, off, rest)))
        self.fde = None

    def flush_hdr(self):
        if self.hdr is not None:
            self.out.append(("HDR", "HDR flags=%#x fixed_fp=%d fixed_ra=%d fdes=%d fres=%d" %
                             (self.flags, self.fixed_fp, self.fixed_ra, self.hdr[0], self.hdr[1])))
            self.hdr = None

    def ra_tok(self, tok):
        if tok == "f":
            return "c%+d" % self.fixed_ra
        if tok == "U":
            return "c%+d" % self.fixed_ra if self.fixed_ra else "u"
        return norm_loc(tok)

    def row(self, line):
        m = ROW_RE.match(line)
        if not m:
            raise ValueError("unparsed FRE line: %r" % line)
        pc = int(m.group(1), 16)
        rest = m.group(2)
        start, _, _, pct, _, fres = self.fde
        off = pc if pct == "mask" else pc - start
        if rest.startswith("RA undefined"):
            fres.append((off, "cfa=undef fp=- ra=undef"))
            return
        if rest.startswith("<"):
            fres.append((off, "invalid"))
            return
        cols = rest.split()
        if len(cols) == 2 and ")U" in cols[1]:  # objdump glues a 10-wide FP to RA
            a, _, _ = cols[1].partition(")U")
            cols = [cols[0], a + ")", "U"]
        if len(cols) != 3:
            raise ValueError("unparsed FRE columns: %r" % line)
        cfa, fp, ra = cols
        mangled = ra.endswith("[s]")
        if mangled:
            ra = ra[:-3]
        fres.append((off, "cfa=%s fp=%s ra=%s%s" % (norm_loc(cfa), norm_loc(fp), self.ra_tok(ra),
                                                     " m" if mangled else "")))

    def feed(self, text):
        lines = text.splitlines()
        nfdes = nfres = 0
        in_flags = False
        for line in lines:
            s = line.strip()
            if s.startswith("# sframe_check") or s.startswith("FDE ") or s.startswith("FRE "):
                if not s.startswith("FRE "):
                    self.flush_fde()
                if s.startswith("# sframe_check"):
                    d = dict(kv.split("=", 1) for kv in s.split()[3:] if "=" in kv)
                    self.flags = int(d.get("flags", "0"), 0)
                    self.fixed_fp = int(d.get("fixed_fp", "0"))
                    self.fixed_ra = int(d.get("fixed_ra", "0"))
                    self.hdr = (int(d.get("fdes", "0")), int(d.get("fres", "0")))
                    self.flush_hdr()
                    continue
                p = s.split()
                if p[0] == "FDE":
                    extras = "".join(" " + x for x in p[3:] if x in ("signal", "bkey"))
                    kv = dict(x.split("=", 1) for x in p[2:] if "=" in x)
                    self.fde = [int(p[1], 16), int(kv["size"], 16), kv["type"], kv["pc"], extras, []]
                elif self.fde is None or int(p[1], 16) != self.fde[0]:
                    raise ValueError("FRE line outside its FDE: %r" % s)
                else:
                    self.fde[5].append((int(p[2], 16), " ".join(p[3:])))
                continue
            if s.startswith("#") or s.startswith("LOOKUP"):
                continue
            if s.startswith("Contents of the SFrame section") or re.match(r"Block \d+ at offset", s):
                self.flush_fde()
                self.flush_hdr()
                self.flags = self.fixed_ra = self.fixed_fp = 0
                continue
            if s.startswith("Flags:"):
                in_flags = True
                s = s[len("Flags:"):]
            if in_flags and ("SFRAME_F_" in s or s.strip() == "NONE"):
                for name, bit in (("SFRAME_F_FDE_SORTED", 1), ("SFRAME_F_FRAME_POINTER", 2),
                                  ("SFRAME_F_FDE_FUNC_START_PCREL", 4)):
                    if name in s:
                        self.flags |= bit
                continue
            in_flags = False
            m = re.match(r"CFA fixed (RA|FP) offset: (-?\d+)", s)
            if m:
                if m.group(1) == "RA":
                    self.fixed_ra = int(m.group(2))
                else:
                    self.fixed_fp = int(m.group(2))
                continue
            m = re.match(r"Num (FDEs|FREs): (\d+)", s)
            if m:
                if m.group(1) == "FDEs":
                    nfdes = int(m.group(2))
                else:
                    nfres = int(m.group(2))
                    self.hdr = (nfdes, nfres)
                    self.flush_hdr()
                continue
            m = FUNC_RE.match(line)
            if m:
                self.flush_fde()
                pc = int(m.group(2), 0)
                tail = m.group(4)
                am = re.search(r'attr = "([A-Z]*)"', tail)
                attrs = am.group(1) if am else ""
                extras = (" signal" if "S" in attrs else "") + (" bkey" if "B key" in tail else "")
                self.fde = [pc, int(m.group(3)), "flex" if "F" in attrs else "default", "inc", extras, []]
                continue
            if s.startswith("STARTPC"):
                if self.fde is not None and "[m]" in s:
                    self.fde[3] = "mask"
                continue
            if self.fde is not None and ROW_RE.match(line):
                self.row(line)
                continue
        self.flush_fde()
        self.flush_hdr()


def main(argv):
    merge = "--merge" in argv
    fre_only = "--fre-only" in argv
    no_hdr = "--no-hdr" in argv
    files = [a for a in argv if not a.startswith("--")] or ["-"]
    n = Norm(merge)
    try:
        for f in files:
            n.feed(sys.stdin.read() if f == "-" else open(f, encoding="utf-8", errors="replace").read())
    except (OSError, ValueError, KeyError) as e:
        print("sframe_text_norm: %s" % e, file=sys.stderr)
        return 2
    for kind, line in n.out:
        if fre_only and kind != "FRE":
            continue
        if no_hdr and kind == "HDR":
            continue
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
