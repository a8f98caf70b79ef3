#!/usr/bin/env python3
"""Size on disk of converted files (`eh2sframe IN -o OUT`), one TSV row per
input: what eh2sframe did, the file kind, its program header layout, and
the bytes and allocated blocks before and after.

    size.py [--e2s BIN] [--baseline BIN] [--jobs N] --out DIR --tsv FILE
            [--files-from LIST] [FILE...]

--out keeps the converted files (DIR/<name>, '/' in the input path turned
into '%') for the caller to run; --baseline converts with another
eh2sframe too (an older build) and records its output size. ELF headers
are read here with struct, not with eh2sframe. Columns: path kind status
layout orig conv sframe orig_blocks conv_blocks page base_conv
base_sframe (status: converted | nothing | failed; sizes in bytes,
blocks in bytes of st_blocks; base_conv and base_sframe, the baseline's
output and .sframe bytes, -1 without --baseline).
"""
import argparse
import concurrent.futures as cf
import os
import struct
import subprocess
import sys


def elf_info(path):
    """(kind, page, sframe bytes) or None for a file that is not a 64-bit
    ELF executable or library."""
    try:
        with open(path, 'rb') as fh:
            d = fh.read()
    except OSError:
        return None
    if len(d) < 64 or d[:4] != b'\x7fELF' or d[4] != 2:
        return None
    E = '<' if d[5] == 1 else '>'
    (e_type, _, _, entry, phoff, shoff, _, _, _, phnum, _, shnum,
     shstrndx) = struct.unpack_from(E + 'HHIQQQIHHHHHH', d, 16)
    if e_type not in (2, 3) or phoff + 56 * phnum > len(d):
        return None
    ph = [struct.unpack_from(E + 'IIQQQQQQ', d, phoff + 56 * i)
          for i in range(phnum)]
    loads = [p for p in ph if p[0] == 1]
    if not loads:
        return None
    interp = any(p[0] == 3 for p in ph)
    soname = False
    for p in ph:
        if p[0] == 2 and p[2] + p[5] <= len(d):
            for k in range(p[2], p[2] + p[5] - 15, 16):
                tag = struct.unpack_from(E + 'q', d, k)[0]
                if tag == 0:
                    break
                soname |= tag == 14
    if e_type == 2:
        kind = 'exec' if interp else 'static'
    elif interp and not soname:
        kind = 'pie'
    elif not interp and entry and not soname:
        kind = 'static-pie'
    else:
        kind = 'dso'
    page = max(max(p[7] for p in loads), 4096)
    sframe = 0
    if shoff and shnum and shoff + 64 * shnum <= len(d):
        sh = [struct.unpack_from(E + 'IIQQQQIIQQ', d, shoff + 64 * i)
              for i in range(shnum)]
        st = sh[shstrndx] if shstrndx < shnum else None
        for s in sh:
            if not st:
                break
            o = st[4] + s[0]
            if d[o:o + 8] == b'.sframe\0':
                sframe += s[5]
    return kind, page, sframe


LAYOUTS = [('grown in place', 'grown'), ('at the file start', 'shift'),
           ('old-loader address kept', 'seg-tied'),
           ('old-loader address lost', 'seg'), ('in place', 'room')]


def convert(e2s, src, dst, verbose):
    """(status, layout) of `e2s -v src -o dst`."""
    if os.path.exists(dst):
        os.unlink(dst)
    p = subprocess.run([e2s, '-v', src, '-o', dst], capture_output=True,
                       text=True)
    layout = '-'
    for needle, name in LAYOUTS:
        if needle in p.stderr:
            layout = name
            break
    if p.returncode != 0 or not os.path.exists(dst):
        if verbose:
            sys.stderr.write(p.stderr)
        return 'failed', layout
    if 'nothing to convert' in p.stderr or 'already has .sframe' in p.stderr:
        return 'nothing', layout
    return 'converted', layout


def one(args, path):
    info = elf_info(path)
    if not info:
        return None
    kind, page, _ = info
    name = path.strip('/').replace('/', '%')
    dst = os.path.join(args.out, name)
    status, layout = convert(args.e2s, path, dst, args.verbose)
    st0 = os.stat(path)
    row = [path, kind, status, layout, st0.st_size, -1, 0, st0.st_blocks * 512,
           -1, page, -1, -1]
    if status != 'failed':
        st1 = os.stat(dst)
        row[5] = st1.st_size
        row[8] = st1.st_blocks * 512
        row[6] = elf_info(dst)[2] if status == 'converted' else 0
    if args.baseline and status == 'converted':
        bdst = dst + '.base'
        bstatus, _ = convert(args.baseline, path, bdst, False)
        if bstatus == 'converted':
            row[10] = os.stat(bdst).st_size
            row[11] = elf_info(bdst)[2]
        if os.path.exists(bdst):
            os.unlink(bdst)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--e2s', default='./eh2sframe')
    ap.add_argument('--baseline')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--out', required=True)
    ap.add_argument('--tsv', required=True)
    ap.add_argument('--files-from')
    ap.add_argument('-v', '--verbose', action='store_true')
    ap.add_argument('files', nargs='*')
    args = ap.parse_args()
    files = list(args.files)
    if args.files_from:
        with open(args.files_from) as fh:
            files += [ln.rstrip('\n') for ln in fh if ln.strip()]
    # One row per file, even when a list names it twice.
    files = list(dict.fromkeys(os.path.realpath(f) for f in files))
    os.makedirs(args.out, exist_ok=True)
    with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        rows = [r for r in ex.map(lambda f: one(args, f), files) if r]
    with open(args.tsv, 'w') as fh:
        fh.write('path\tkind\tstatus\tlayout\torig\tconv\tsframe\t'
                 'orig_blocks\tconv_blocks\tpage\tbase_conv\tbase_sframe\n')
        for r in rows:
            fh.write('\t'.join(str(x) for x in r) + '\n')
    failed = [r[0] for r in rows if r[2] == 'failed']
    for f in failed:
        sys.stderr.write('size.py: eh2sframe failed on %s\n' % f)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
