"""Fuzz every parser with mangled real outputs; print rejected / same-values / WRONG counts.

Usage: .venv/bin/python benchmarks/fuzz_parsers.py [--max-bytes N] [--only SUBSTR] [--no-shared]

The real outputs are the fixtures, the seeds' raw files and (unless --no-shared) every output of
../shared/corpus/ (other people's ping, iperf3, iperf2, netperf and wrk), read where they are.

Deterministic and exhaustive where it can be: every cut at a line end, every
cut inside the last 40 bytes of each line (and every byte for files up to
--max-bytes), every re-encoding, every dropped and duplicated line, a high-bit
flip and a NUL at every 7th byte, and for JSON every value replaced by each
wrong type. WRONG (a mangled output that parsed to values other than the
whole file's) must be 0; the first few are printed with the mutation.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

import mangle


def mutations(s: mangle.Sample, max_bytes: int):
    data = s.data
    n = len(data)
    cuts = set(mangle.line_ends(data))
    start = 0
    for end in sorted(cuts | {n}):
        cuts.update(range(max(start, end - 40), end))
        start = end
    if max_bytes < 0:
        cuts = set(mangle.line_ends(data))
    if n <= max_bytes:
        cuts.update(range(n))
    for c in sorted(cuts):
        if c < n:
            yield f"cut@{c}", data[:c]
    for how in mangle.RECODINGS:
        yield how, mangle.recode(data, how)
    for i in range(0, n, 7):
        yield f"flip@{i}", mangle.flip(data, i)
    for i in range(3, n, 53):
        yield f"nul@{i}", mangle.nul_at(data, i)
    for i in range(len(mangle.lines_of(data))):
        yield f"drop-line {i}", mangle.drop_line(data, i)
        yield f"dup-line {i}", mangle.dup_line(data, i)
    if mangle.is_json(data):
        for path in mangle.json_paths(__import__("json").loads(data)):
            for v in mangle.WRONG_VALUES:
                out = mangle.json_retype(data, path, v)
                if out is not None:
                    yield f"json {'/'.join(map(str, path))}={v!r}", out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-bytes", type=int, default=4096, help="cut at every byte of files up to this size")
    ap.add_argument("--only", default="", help="only samples whose name contains this")
    ap.add_argument("--show", type=int, default=20, help="WRONG cases to print")
    ap.add_argument("--kinds", default="", help="only these mutation kinds (comma-separated), e.g. cut,json")
    ap.add_argument("--by-sample", action="store_true", help="print WRONG/crash counts per real output")
    ap.add_argument(
        "--no-shared", action="store_true", help="leave out ../shared/corpus (read there, never copied)"
    )
    args = ap.parse_args()
    counts: collections.Counter = collections.Counter()
    by_kind: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    wrong = []
    per_sample: collections.Counter = collections.Counter()
    t0 = time.perf_counter()
    samples = [s for s in mangle.corpus(shared=not args.no_shared) if args.only in s.name]
    for s in samples:
        base = mangle.outcome(s.data, s.tool, s.excerpt, s.command, s.excerpt_lines)
        for label, data in mutations(s, args.max_bytes):
            if args.kinds and label.split("@")[0].split(" ")[0] not in args.kinds.split(","):
                continue
            verdict = mangle.judge(s, data, base, label)
            kind = mangle.effective_kind(s, label.split("@")[0].split(" ")[0], data)
            counts[verdict] += 1
            by_kind[kind][verdict] += 1
            if verdict == "WRONG" and (s.name, kind) in mangle.KNOWN_GAPS:
                verdict = "WRONG-known"
                counts[verdict] += 1
                by_kind[kind][verdict] += 1
                counts["WRONG"] -= 1
                by_kind[kind]["WRONG"] -= 1
            if verdict in ("WRONG", "crash"):
                wrong.append(
                    (s.name, label, mangle.outcome(data, s.tool, s.excerpt, s.command, s.excerpt_lines))
                )
                per_sample[s.name] += 1
    dt = time.perf_counter() - t0
    print(f"{len(samples)} real outputs, {sum(counts.values())} mangled copies in {dt:.1f} s")
    for kind, c in sorted(by_kind.items()):
        print(
            f"  {kind:10s} rejected {c['rejected']:7d}  same-values {c['same']:7d}  "
            f"crash {c['crash']:5d}  subset {c['subset']:5d}  WRONG {c['WRONG']}  "
            f"indistinguishable {c['indistinguishable']}  (+ {c['WRONG-known']} in KNOWN_GAPS)"
        )
    print(
        f"TOTAL      rejected {counts['rejected']:7d}  same-values {counts['same']:7d}  "
        f"crash {counts['crash']:5d}  subset {counts['subset']:5d}  WRONG {counts['WRONG']}  "
        f"indistinguishable {counts['indistinguishable']}  (+ {counts['WRONG-known']} in KNOWN_GAPS)"
    )
    print("  indistinguishable: a valid output of another real run; why, per case: mangle.INDISTINGUISHABLE")
    if args.by_sample:
        for name, c in per_sample.most_common():
            print(f"  {c:6d}  {name}")
    for name, label, got in wrong[: args.show]:
        print(f"{got[0].upper() if got[0] == 'crash' else 'WRONG'} {name} [{label}] -> {str(got)[:300]}")
    return 1 if counts["WRONG"] or counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
