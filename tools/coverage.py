#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Line coverage of ib_ipoib from the gcov counters of make coverage.

coverage.py --top DIR --build OBJDIR --out FILE DUMP...

OBJDIR is the profiled build whose .gcno files define which lines count
(the module as shipped: build/KVER-gcov). Each DUMP is a shared/gcov
directory of a VM run: ROLE/<absolute object path>/X.gcda per guest,
from this build or from the test-hooks build (its own .gcno beside the
.gcda's path). A line is covered if any guest ran it in any build. Writes
the per-file table to FILE and an annotated copy of each source file
(##### before lines never run) beside it.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile


def gcov_lines(gcno, gcda):
    """{(source basename, line): count} of one object's gcno (+ gcda)."""
    stem = os.path.splitext(os.path.basename(gcno))[0]
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(os.path.abspath(gcno), os.path.join(tmp, stem + '.gcno'))
        if gcda:
            shutil.copy(gcda, os.path.join(tmp, stem + '.gcda'))
        res = subprocess.run(['gcov', '-t', '-j', '-o', tmp, stem + '.c'],
                             cwd=tmp, capture_output=True, text=True,
                             check=False)
    if res.returncode != 0 or not res.stdout.strip():
        sys.exit(f'coverage.py: gcov failed on {gcno}: {res.stderr.strip()}')
    counts = {}
    for doc in res.stdout.splitlines():
        if not doc.strip():
            continue
        for f in json.loads(doc)['files']:
            name = os.path.basename(f['file'])
            for ln in f['lines']:
                key = (name, ln['line_number'])
                counts[key] = counts.get(key, 0) + ln['count']
    return counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--top', required=True)
    ap.add_argument('--build', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('dumps', nargs='*')
    args = ap.parse_args()

    sources = {os.path.basename(p) for p in
               glob.glob(os.path.join(args.top, '*.[ch]'))}
    # test-only code is not the driver
    sources.discard('ipoib_test.c')
    gcnos = sorted(g for g in glob.glob(os.path.join(args.build, '*.gcno'))
                   if os.path.basename(g) != 'ipoib_test.gcno')
    if not gcnos:
        sys.exit(f'coverage.py: no .gcno in {args.build} (make GCOV=1)')

    lines = set()
    for g in gcnos:
        lines.update(k for k in gcov_lines(g, None) if k[0] in sources)
    ran = set()
    ndata = 0
    for dump in args.dumps:
        roles = sorted(os.listdir(dump)) if os.path.isdir(dump) else []
        if not roles:
            print(f'coverage.py: warning: no counters in {dump} '
                  '(did its guests stop early?)', file=sys.stderr)
        for role in roles:
            files = 0
            for gcda in glob.glob(os.path.join(dump, role, '**', '*.gcda'),
                                  recursive=True):
                rel = os.path.relpath(gcda, os.path.join(dump, role))
                gcno = '/' + os.path.splitext(rel)[0] + '.gcno'
                # test-only code may inline the driver's headers
                if os.path.basename(gcda) == 'ipoib_test.gcda':
                    continue
                if not os.path.exists(gcno):
                    print(f'coverage.py: warning: {gcda}: no {gcno}',
                          file=sys.stderr)
                    continue
                files += 1
                ran.update(k for k, c in gcov_lines(gcno, gcda).items()
                           if c > 0 and k in lines)
            print(f'coverage.py: {dump}/{role}: {files} counter files',
                  file=sys.stderr)
            ndata += files
    if ndata == 0 or not lines:
        sys.exit('coverage.py: no counters in ' + ' '.join(args.dumps))

    outdir = os.path.dirname(os.path.abspath(args.out))
    rows = []
    for name in sorted({k[0] for k in lines}):
        mine = sorted(n for f, n in lines if f == name)
        hit = sum(1 for n in mine if (name, n) in ran)
        rows.append((name, len(mine), hit))
        with open(os.path.join(args.top, name), encoding='utf-8') as src, \
                open(os.path.join(outdir, name + '.cov'), 'w',
                     encoding='utf-8') as ann:
            todo = set(mine)
            for i, text in enumerate(src, 1):
                mark = '-' if i not in todo else \
                    ('' if (name, i) in ran else '#####')
                ann.write(f'{mark:>5}:{i:5}:{text}')
    total = sum(r[1] for r in rows)
    hit = sum(r[2] for r in rows)
    with open(args.out, 'w', encoding='utf-8') as out:
        out.write(f'# line coverage of ib_ipoib, {ndata} counter files\n')
        out.write(f"{'file':32} {'lines':>6} {'run':>6} {'%':>6}\n")
        for name, n, h in rows:
            out.write(f'{name:32} {n:6} {h:6} {100.0 * h / n:6.1f}\n')
        out.write(f"{'total':32} {total:6} {hit:6} "
                  f'{100.0 * hit / total:6.1f}\n')


if __name__ == '__main__':
    main()
