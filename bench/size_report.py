#!/usr/bin/env python3
"""Growth figures from bench/size.py tables.

    size_report.py [--check] [--worst N] [--title T] TSV...

Per kind of file and in total over the converted files: files, original
bytes, growth (converted - original), .sframe bytes, growth / .sframe,
allocated-block growth, the worst file of each kind (growth beyond its
.sframe), the layouts eh2sframe chose, and with a baseline column the
same growth for the baseline eh2sframe. --check fails (exit 1) unless:
total growth <= 1.05 x the .sframe bytes; every PIE, shared object and
static-pie grows by at most its .sframe + 4 KiB; every non-PIE or static
executable by at most one page (its largest p_align) more; and no file
uses more allocated blocks than its size rounded up to 4 KiB blocks plus
one (no zero-filled holes). Files over their limit with the tied layout
(the rule for what may move refused the cheaper ones) and files named by
--allow are listed as exceptions, not failures.
"""
import argparse
import collections
import sys

KINDS = ['pie', 'dso', 'static-pie', 'exec', 'static']


def load(paths):
    rows = []
    for p in paths:
        with open(p) as fh:
            head = fh.readline().rstrip('\n').split('\t')
            for line in fh:
                d = dict(zip(head, line.rstrip('\n').split('\t')))
                d.setdefault('base_sframe', '-1')  # older tables
                for k in ('orig', 'conv', 'sframe', 'orig_blocks',
                          'conv_blocks', 'page', 'base_conv', 'base_sframe'):
                    d[k] = int(d[k])
                rows.append(d)
    return rows


def mb(n):
    return '%.2f' % (n / 1e6)


def limit(r):
    """Most a file of this kind may grow."""
    if r['kind'] in ('exec', 'static'):
        return r['sframe'] + 4096 + r['page']
    return r['sframe'] + 4096


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--check', action='store_true')
    ap.add_argument('--worst', type=int, default=5)
    ap.add_argument('--title', default='size')
    ap.add_argument('--allow', default='',
                    help='comma-separated file names allowed over their own '
                         'limit (listed as exceptions)')
    ap.add_argument('--total-of', default='all',
                    help='kinds the 1.05 x total target applies to '
                         '(comma-separated, "all" or "none")')
    ap.add_argument('tsv', nargs='+')
    a = ap.parse_args()
    rows = load(a.tsv)
    conv = [r for r in rows if r['status'] == 'converted']
    out = []
    emit = out.append
    nothing = sum(1 for r in rows if r['status'] == 'nothing')
    failed = [r for r in rows if r['status'] == 'failed']
    emit('### %s: %d ELF files, %d converted, %d with nothing to convert '
         '(written as exact copies), %d failed' %
         (a.title, len(rows), len(conv), nothing, len(failed)))
    emit('')
    base = all(r['base_conv'] >= 0 for r in conv) and conv
    head = ['kind', 'files', 'original MB', 'growth MB', '.sframe MB',
            'growth / .sframe', 'block growth / .sframe',
            'worst growth beyond .sframe', 'layouts']
    # The baseline's growth against its own .sframe (another eh2sframe
    # may write another .sframe: an older FRE layout), when known.
    bsf = base and all(r['base_sframe'] >= 0 for r in conv)
    if base:
        head[5:5] = ['baseline growth MB'] + (
            ['baseline .sframe MB', 'baseline growth / its .sframe'] if bsf
            else ['baseline growth / .sframe'])
    emit('| ' + ' | '.join(head) + ' |')
    emit('|' + '---|' * len(head))
    groups = collections.OrderedDict((k, []) for k in KINDS)
    for r in conv:
        groups.setdefault(r['kind'], []).append(r)
    groups['total'] = conv
    for k, g in groups.items():
        if not g:
            continue
        o = sum(r['orig'] for r in g)
        gr = sum(r['conv'] - r['orig'] for r in g)
        sf = sum(r['sframe'] for r in g)
        bg = sum(r['conv_blocks'] - r['orig_blocks'] for r in g)
        w = max(g, key=lambda r: r['conv'] - r['orig'] - r['sframe'])
        lay = collections.Counter(r['layout'] for r in g)
        cells = [k, str(len(g)), mb(o), mb(gr), mb(sf),
                 '%.3f' % (gr / sf if sf else 0), '%.3f' % (bg / sf if sf else 0),
                 '%d B (%s)' % (w['conv'] - w['orig'] - w['sframe'],
                                w['path'].rsplit('/', 1)[-1]),
                 ', '.join('%s %d' % kv for kv in sorted(lay.items()))]
        if base:
            bgr = sum(r['base_conv'] - r['orig'] for r in g)
            bs = sum(r['base_sframe'] for r in g) if bsf else sf
            cells[5:5] = [mb(bgr)] + ([mb(bs)] if bsf else []) + [
                '%.3f' % (bgr / bs if bs else 0)]
        emit('| ' + ' | '.join(cells) + ' |')
    emit('')
    if a.worst and conv:
        emit('Largest growth beyond .sframe:')
        emit('')
        emit('| file | kind | layout | original | converted | .sframe | beyond |')
        emit('|---|---|---|---|---|---|---|')
        for r in sorted(conv, key=lambda r: r['sframe'] - (r['conv'] - r['orig']))[:a.worst]:
            emit('| %s | %s | %s | %d | %d | %d | %d |' %
                 (r['path'], r['kind'], r['layout'], r['orig'], r['conv'],
                  r['sframe'], r['conv'] - r['orig'] - r['sframe']))
        emit('')
    bad = []
    for r in failed:
        bad.append('%s: eh2sframe failed' % r['path'])
    kinds = None if a.total_of == 'all' else set(a.total_of.split(','))
    tot = [r for r in conv if kinds is None or r['kind'] in kinds]
    sf = sum(r['sframe'] for r in tot)
    gr = sum(r['conv'] - r['orig'] for r in tot)
    if tot and gr > 1.05 * sf:
        bad.append('total growth %d > 1.05 x .sframe %d (%s)' %
                   (gr, sf, a.total_of))
    allowed = set(x for x in a.allow.split(',') if x)
    excused = []
    for r in conv:
        if r['conv'] - r['orig'] > limit(r):
            # seg-tied: the rule for what may move refused the cheaper
            # layouts (README "What may move"); bytes spent for safety are
            # listed, not failed, so the verdict does not depend on which
            # programs a machine has installed.
            ok = (r['path'].rsplit('/', 1)[-1] in allowed or
                  r['layout'] == 'seg-tied')
            (excused if ok else bad).append(
                '%s (%s, %s): grew %d, limit %d' %
                (r['path'], r['kind'], r['layout'], r['conv'] - r['orig'],
                 limit(r)))
        if r['conv_blocks'] > (r['conv'] + 4095) // 4096 * 4096 + 4096:
            bad.append('%s: %d bytes in blocks for %d bytes (a hole of zeros?)'
                       % (r['path'], r['conv_blocks'], r['conv']))
    for r in rows:
        if r['status'] == 'nothing' and r['conv'] != r['orig']:
            bad.append('%s: nothing to convert, but the output differs in size'
                       % r['path'])
    if a.check:
        emit('Targets (total%s <= 1.05 x .sframe; PIE/shared <= .sframe + '
             '4 KiB; non-PIE <= .sframe + 4 KiB + one page; no holes): %s' %
             ('' if a.total_of == 'all' else ' of ' + a.total_of,
              'met' if not bad else 'NOT MET'))
        for b in bad[:20]:
            emit('  - ' + b)
        for b in excused:
            emit('  (allowed) ' + b)
        emit('')
    print('\n'.join(out))
    return 1 if a.check and bad else 0


if __name__ == '__main__':
    sys.exit(main())
