#!/usr/bin/env python3
"""The size of .sframe against the DWARF tables it replaces for
unwinding, .sframe / (.eh_frame + .eh_frame_hdr), per layout of the FRE
data, over files and directory trees.

    size_ratio.py [--e2s BIN] [--jobs N] [--modes M,...] [--tsv FILE]
                  [--top K] PATH...

Each PATH is a file or a directory (walked, symbolic links not
followed; each ELF file with an .eh_frame counted once by inode). The
.sframe bytes are those eh2sframe's encoder writes for the file
(EH2SFRAME_DEV_BUILD, the section alone, as a conversion embeds it):

    unshared  every function's FREs stored (--no-share-fres)
    shared    identical FRE lists stored once (--share-fres)
    subshare  also runs inside earlier FRE data (encoder share_runs)
    default   what `eh2sframe IN -o OUT` writes: shared on
              little-endian targets, unshared on big-endian ones

Prints one line per PATH and a total: the .eh_frame + .eh_frame_hdr
bytes of the files eh2sframe converted and, per mode, the .sframe bytes
and the ratio. --top K also lists the K largest files. ELF headers are
read here with struct, not with eh2sframe.
"""
import argparse
import concurrent.futures as cf
import os
import struct
import subprocess
import sys
import tempfile

MODES = {'unshared': '', 'shared': ',share', 'subshare': ',subshare'}


def sections(path):
    """(big_endian, {name: size}) of a 64-bit ELF file, or None."""
    try:
        with open(path, 'rb') as fh:
            d = fh.read(64)
            if len(d) < 64 or d[:4] != b'\x7fELF' or d[4] != 2:
                return None
            E = '<' if d[5] == 1 else '>'
            shoff, = struct.unpack_from(E + 'Q', d, 40)
            shnum, shstrndx = struct.unpack_from(E + 'HH', d, 60)
            if not shoff or not shnum or shstrndx >= shnum:
                return None
            fh.seek(shoff)
            sh = fh.read(64 * shnum)
            if len(sh) < 64 * shnum:
                return None
            hdrs = [struct.unpack_from(E + 'IIQQQQIIQQ', sh, 64 * i)
                    for i in range(shnum)]
            st = hdrs[shstrndx]
            fh.seek(st[4])
            names = fh.read(st[5])
    except OSError:
        return None
    out = {}
    for h in hdrs:
        if h[1] == 8:  # SHT_NOBITS
            continue
        end = names.find(b'\0', h[0])
        name = names[h[0]:end if end >= 0 else None].decode('latin-1')
        out[name] = out.get(name, 0) + h[5]
    return E == '>', out


def sframe_bytes(e2s, path, mode, tmp):
    """Bytes of the .sframe the encoder builds for path in mode, or None
    (nothing converted)."""
    out = tempfile.mktemp(dir=tmp)
    env = dict(os.environ, EH2SFRAME_DEV_BUILD='%s@0x10000000%s' % (out, MODES[mode]))
    p = subprocess.run([e2s, '-q', '--dump', path], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        n = os.path.getsize(out) if p.returncode == 0 else None
    except OSError:
        n = None
    if os.path.exists(out):
        os.unlink(out)
    return n


def files_of(path):
    if os.path.isfile(path) and not os.path.islink(path):
        yield path
        return
    for root, dirs, names in os.walk(path):
        dirs.sort()
        for n in sorted(names):
            f = os.path.join(root, n)
            if os.path.isfile(f) and not os.path.islink(f):
                yield f


def one(args, path, tmp):
    info = sections(path)
    if not info:
        return None
    be, secs = info
    eh = secs.get('.eh_frame', 0)
    if eh == 0 or '.sframe' in secs:
        return None
    hdr = secs.get('.eh_frame_hdr', 0)
    row = {'path': path, 'be': be, 'eh': eh, 'hdr': hdr}
    for m in args.modes:
        if m == 'default':
            continue
        n = sframe_bytes(args.e2s, path, m, tmp)
        if n is None:
            return None
        row[m] = n
    if 'default' in args.modes:
        row['default'] = row['unshared' if be else 'shared']
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--e2s', default='./eh2sframe')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--modes', default='unshared,shared,subshare,default')
    ap.add_argument('--tsv')
    ap.add_argument('--top', type=int, default=0)
    ap.add_argument('paths', nargs='+')
    args = ap.parse_args()
    args.modes = args.modes.split(',')
    need = set(args.modes)
    if 'default' in need:
        need |= {'unshared', 'shared'}
    args.modes = [m for m in ['unshared', 'shared', 'subshare', 'default'] if m in need]
    args.e2s = os.path.abspath(args.e2s)
    allrows = []
    with tempfile.TemporaryDirectory(prefix='size_ratio.') as tmp, \
            cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        seen = set()
        for p in args.paths:
            files = []
            for f in files_of(p):
                st = os.stat(f)
                if (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
                files.append(f)
            rows = [r for r in ex.map(lambda f: one(args, f, tmp), files) if r]
            for r in rows:
                r['root'] = p
            allrows += rows
    head = 'files\teh+hdr\t' + '\t'.join('%s\tratio' % m for m in args.modes)
    print('path\t' + head)

    def line(name, rows):
        eh = sum(r['eh'] + r['hdr'] for r in rows)
        cells = [name, str(len(rows)), str(eh)]
        for m in args.modes:
            sf = sum(r[m] for r in rows)
            cells += [str(sf), '%.3f' % (sf / eh if eh else 0)]
        print('\t'.join(cells))
    for p in args.paths:
        line(p, [r for r in allrows if r['root'] == p])
    if len(args.paths) > 1:
        line('total', allrows)
    if args.top:
        for r in sorted(allrows, key=lambda r: -(r['eh'] + r['hdr']))[:args.top]:
            line(r['path'], [r])
    if args.tsv:
        with open(args.tsv, 'w') as fh:
            fh.write('path\tbig_endian\teh_frame\teh_frame_hdr\t' +
                     '\t'.join(args.modes) + '\n')
            for r in allrows:
                fh.write('\t'.join([r['path'], str(int(r['be'])), str(r['eh']), str(r['hdr'])] +
                                   [str(r[m]) for m in args.modes]) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
