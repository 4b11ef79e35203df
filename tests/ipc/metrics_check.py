#!/usr/bin/env python3
"""metrics_check.py FILE [--expect NAME{labels}=VALUE ...] - a strict-enough parser of the
Prometheus text exposition format (0.0.4) for the ipc tests: every sample line belongs to a
metric family declared by # TYPE (histograms: _bucket/_sum/_count; summaries: _sum/_count),
names and label names are valid, label values are properly quoted and escaped, values parse
as floats, no sample (name + label set) repeats, counters (and histogram parts) are
non-negative, histogram buckets are cumulative and end in le="+Inf" equal to _count.
--expect checks one sample's value exactly (labels in any order). Prints the number of
samples; exits 1 with a message on the first problem."""
import math
import re
import sys

NAME = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*$')
LNAME = re.compile(r'[a-zA-Z_][a-zA-Z0-9_]*$')
TYPES = {'counter', 'gauge', 'histogram', 'summary', 'untyped'}


def fail(msg):
    print('metrics_check: ' + msg, file=sys.stderr)
    sys.exit(1)


def parse_labels(s, lineno):
    """s is the text between { and }: returns a tuple of (name, value) pairs"""
    out, i = [], 0
    while i < len(s):
        m = re.match(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"', s[i:])
        if not m:
            fail(f'line {lineno}: bad label syntax at {s[i:]!r}')
        name = m.group(1)
        i += m.end()
        val = []
        while True:
            if i >= len(s):
                fail(f'line {lineno}: unterminated label value')
            c = s[i]
            if c == '\\':
                if i + 1 >= len(s) or s[i + 1] not in '\\"n':
                    fail(f'line {lineno}: bad escape in label value')
                val.append({'\\': '\\', '"': '"', 'n': '\n'}[s[i + 1]])
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == '\n':
                fail(f'line {lineno}: newline in label value')
            else:
                val.append(c)
                i += 1
        if any(n == name for n, _ in out):
            fail(f'line {lineno}: label {name} repeated')
        out.append((name, ''.join(val)))
        m = re.match(r'\s*,?\s*', s[i:])
        i += m.end()
    return tuple(sorted(out))


def parse(text):
    types, helps, samples = {}, {}, {}
    for lineno, line in enumerate(text.split('\n'), 1):
        if not line.strip():
            continue
        if line.startswith('#'):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in ('TYPE', 'HELP'):
                name = parts[2]
                if not NAME.match(name):
                    fail(f'line {lineno}: bad metric name {name!r}')
                if parts[1] == 'TYPE':
                    if len(parts) != 4 or parts[3] not in TYPES:
                        fail(f'line {lineno}: bad TYPE line')
                    if name in types:
                        fail(f'line {lineno}: TYPE for {name} repeated')
                    if any(k[0] == name or k[0].startswith(name + '_') and k[0][len(name):] in ('_bucket', '_sum', '_count')
                           for k in samples):
                        fail(f'line {lineno}: TYPE for {name} after its samples')
                    types[name] = parts[3]
                else:
                    helps[name] = parts[3] if len(parts) > 3 else ''
            continue
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?\s*$', line)
        if not m:
            fail(f'line {lineno}: not a sample line: {line!r}')
        name, labels = m.group(1), parse_labels(m.group(3) or '', lineno)
        for ln, _ in labels:
            if not LNAME.match(ln) or ln.startswith('__'):
                fail(f'line {lineno}: bad label name {ln!r}')
        try:
            v = float(m.group(4))
        except ValueError:
            fail(f'line {lineno}: bad value {m.group(4)!r}')
        fam, suffix = name, ''
        if name not in types:
            for suf in ('_bucket', '_sum', '_count'):
                if name.endswith(suf) and name[:-len(suf)] in types:
                    fam, suffix = name[:-len(suf)], suf
        if fam not in types:
            fail(f'line {lineno}: sample {name} has no declared TYPE')
        t = types[fam]
        if t in ('histogram', 'summary') and suffix == '' and t == 'histogram':
            fail(f'line {lineno}: histogram {fam} sample without _bucket/_sum/_count')
        if suffix == '_bucket' and t != 'histogram':
            fail(f'line {lineno}: _bucket on a {t}')
        if t == 'counter' and not fam.endswith('_total'):
            fail(f'line {lineno}: counter {fam} does not end in _total')
        if t in ('counter', 'histogram') and (v < 0 or math.isnan(v)):
            fail(f'line {lineno}: {name} is negative or NaN')
        key = (name, labels)
        if key in samples:
            fail(f'line {lineno}: sample {name}{dict(labels)} repeated')
        samples[key] = v
    # histograms: cumulative buckets, +Inf == _count
    for fam, t in types.items():
        if t != 'histogram':
            continue
        series = {}
        for (name, labels), v in samples.items():
            if name == fam + '_bucket':
                d = dict(labels)
                if 'le' not in d:
                    fail(f'{fam}: bucket without le')
                rest = tuple(x for x in labels if x[0] != 'le')
                series.setdefault(rest, []).append((float(d['le']), v))
        for rest, bks in series.items():
            bks.sort()
            if bks[-1][0] != math.inf:
                fail(f'{fam}{dict(rest)}: no +Inf bucket')
            for a, b in zip(bks, bks[1:]):
                if b[1] < a[1]:
                    fail(f'{fam}{dict(rest)}: buckets not cumulative')
            cnt = samples.get((fam + '_count', rest))
            if cnt is None or cnt != bks[-1][1]:
                fail(f'{fam}{dict(rest)}: _count {cnt} != +Inf bucket {bks[-1][1]}')
            if (fam + '_sum', rest) not in samples:
                fail(f'{fam}{dict(rest)}: no _sum')
    return types, samples


def main():
    args = sys.argv[1:]
    if not args:
        fail('usage: metrics_check.py FILE [--expect NAME{k="v",...}=VALUE ...] [--get NAME{...}]')
    text = open(args[0], encoding='utf-8').read()
    _, samples = parse(text)
    i = 1
    while i < len(args):
        if args[i] in ('--expect', '--get') and i + 1 < len(args):
            spec = args[i + 1]
            if args[i] == '--expect':
                spec, want = spec.rsplit('=', 1)
            m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?$', spec)
            if not m:
                fail(f'bad spec {spec!r}')
            key = (m.group(1), parse_labels(m.group(3) or '', 0))
            if key not in samples:
                fail(f'no sample {spec}')
            if args[i] == '--get':
                print(samples[key])
            elif samples[key] != float(want):
                fail(f'{spec} = {samples[key]}, expected {want}')
            i += 2
        else:
            fail(f'unknown argument {args[i]!r}')
    print(f'{len(samples)} samples OK', file=sys.stderr)


if __name__ == '__main__':
    main()
