"""The ``podnet`` command: the library's stages for people holding files.

``podnet parse FILE...`` prints tidy rows as CSV; ``podnet stats TIDY --out DIR``
runs the statistics stage on any tidy table; ``podnet check DIR --config X.yaml``
judges the config's thresholds on DIR/ratios.csv. Snakemake rules call the same
library functions.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pandas as pd
import yaml

from podnet.config import schema
from podnet.parse import error_fraction_problem, failure, parse_file
from podnet.parse.raw import entry_problem, read_sidecar, sidecar_path
from podnet.parse.tidy import frame
from podnet.tools import all_adapters
from podnet.tools.base import ParseError


def _cmd_parse(args: argparse.Namespace) -> int:
    """Each file through the pipeline's own path (sidecar checks included); bad ones on stderr."""
    rows: list[dict] = []
    status = 0
    for name in args.files:
        path = Path(name)
        try:
            why = entry_problem(path) if (path.exists() or path.is_symlink()) else "no such file"
            if why:
                raise ParseError(why)
            meta: dict = {"variant": args.variant, "scenario": args.scenario}
            if sidecar_path(path).exists() or sidecar_path(path).is_symlink():
                meta = read_sidecar(path)
            r, _ = parse_file(path, meta, experiment=args.experiment, run=path.stem, tool=args.tool)
            frac = next((float(x["value"]) for x in r if x["metric"] == "error_fraction"), 0.0)
            if frac > args.max_error_fraction:
                raise ParseError(error_fraction_problem(frac, args.max_error_fraction))
            rows.extend(r)
        except Exception as exc:  # noqa: BLE001 (one bad file never loses the others' rows)
            row = failure(args.experiment, path, exc)
            print(f"podnet parse: {row['raw_path']}: {row['reason']}", file=sys.stderr)
            status = 1
    try:
        frame(rows).to_csv(sys.stdout, index=False)
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader went away (`podnet parse ... | head`): not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return status


def _stats_settings(path: str) -> dict:
    """The `stats` mapping of an experiment config (a bare stats mapping is used as is)."""
    cfg = yaml.safe_load(Path(path).read_text()) or {}
    if not isinstance(cfg, dict):
        raise ValueError(f"{path}: expected a mapping")
    from podnet.config.stages import stats_of

    return stats_of(cfg) if "experiment" in cfg else cfg


def _cmd_stats(args: argparse.Namespace) -> int:
    from podnet import stats

    settings: dict = {}
    if args.config:
        try:
            settings = _stats_settings(args.config)
        except (OSError, ValueError, yaml.YAMLError) as exc:
            print(f"podnet stats: {exc}", file=sys.stderr)
            return 2
    for spec in args.compare or []:
        by, _, baseline = spec.partition("=")
        if by not in ("scenario", "variant") or not baseline:
            print(
                f"podnet stats: --compare {spec!r}: expected scenario=NAME or variant=NAME", file=sys.stderr
            )
            return 2
        settings.setdefault("comparisons", []).append({"by": by, "baseline": baseline})
    tidy = Path(args.tidy)
    if not tidy.exists():
        print(f"podnet stats: {tidy}: no such file", file=sys.stderr)
        return 1
    try:
        written = stats.run(tidy, args.out, settings, intervals_path=args.intervals)
    except ValueError as exc:
        print(f"podnet stats: {tidy}: {exc}", file=sys.stderr)
        return 1
    for p in written.values():
        print(p)
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from podnet.stats import Settings, gate

    try:
        thresholds = list(Settings.of(_stats_settings(args.config)).thresholds)
        verdicts = gate.check_dir(args.processed, thresholds)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        print(f"podnet check: {exc}", file=sys.stderr)
        return gate.EXIT["error"]
    if not thresholds:
        print(f"podnet check: {args.config} declares no stats.thresholds: nothing to check", file=sys.stderr)
        return gate.EXIT["error"]
    if args.out:
        verdicts.to_csv(args.out, index=False)
    for _, v in verdicts.iterrows():
        where = "/".join(
            str(x) for x in (v["variant"], v["direction"], v["streams"]) if isinstance(x, str) and x
        )
        print(
            f"{v['verdict']:<10} {v['treatment']} / {v['baseline']} {v['test']} {v['metric']} {where}: "
            f"{v['ratio'] if pd.notna(v['ratio']) else '-'} [{v['ci_low']:.4g}, {v['ci_high']:.4g}] "
            f"{v['bound']} ({v['reason']})"
        )
    code = gate.exit_code(verdicts)
    counts = verdicts["verdict"].value_counts().to_dict()
    print(", ".join(f"{counts.get(k, 0)} {k}" for k in gate.VERDICTS) + f" (exit {code})")
    return code


def _cmd_launch(args: argparse.Namespace) -> int:
    from podnet.launch.cli import cmd_launch

    return cmd_launch(args)


def _cmd_cleanup(args: argparse.Namespace) -> int:
    from podnet.launch.cli import cmd_cleanup

    return cmd_cleanup(args)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="podnet", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("parse", help="parse raw tool outputs, print tidy CSV on stdout")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--tool", choices=sorted(all_adapters()), help="force the tool instead of detecting it")
    p.add_argument("--experiment", default="adhoc", help="experiment column (default: adhoc)")
    p.add_argument("--variant", default="", help="variant column when the file has no sidecar")
    p.add_argument("--scenario", default="", help="scenario column when the file has no sidecar")
    p.add_argument(
        "--max-error-fraction",
        type=float,
        default=float(schema.defaults("parse")["max_error_fraction"]),
        help="HTTP runs with a larger share of error responses fail (default 0: any error)",
    )
    p.set_defaults(func=_cmd_parse)
    s = sub.add_parser("stats", help="summary.csv and ratios.csv from a tidy table")
    s.add_argument("tidy", metavar="TIDY", help="tidy table (.parquet or .csv)")
    s.add_argument("--out", required=True, metavar="DIR")
    s.add_argument("--config", help="an experiment config (its `stats` section is used)")
    s.add_argument(
        "--compare", action="append", metavar="BY=BASELINE", help="e.g. scenario=host-host (repeatable)"
    )
    s.add_argument("--intervals", help="intervals.parquet for within-run statistics")
    s.set_defaults(func=_cmd_stats)
    ck = sub.add_parser(
        "check",
        help="judge the config's stats.thresholds on processed/<exp>/ratios.csv "
        "(exit 0 pass, 1 fail, 3 inconclusive, 2 error)",
    )
    ck.add_argument(
        "processed", metavar="DIR", help="the experiment's processed directory (holds ratios.csv)"
    )
    ck.add_argument(
        "--config", required=True, metavar="X.yaml", help="experiment config with stats.thresholds"
    )
    ck.add_argument("--out", metavar="CSV", help="also write the verdicts here")
    ck.set_defaults(func=_cmd_check)
    lp = sub.add_parser("launch", help="run a config's tests on a Kubernetes cluster -> raw/<experiment>/")
    lp.add_argument(
        "--config", required=True, metavar="X.yaml", help="experiment config with a `launch` section"
    )
    lp.add_argument(
        "--kubeconfig", help="kubeconfig (default: the config's, $KUBECONFIG, in-cluster, ~/.kube/config)"
    )
    lp.add_argument("--manifest", metavar="FILE", help="write the launch summary (JSON) here")
    lp.add_argument("--dry-run", action="store_true", help="show pods and the run order; start nothing")
    lp.add_argument("--strict", action="store_true", help="exit 3 when any run failed")
    lp.set_defaults(func=_cmd_launch)
    cp = sub.add_parser(
        "cleanup", help="delete leftover podnet namespaces (label app.kubernetes.io/managed-by=podnet)"
    )
    cp.add_argument(
        "--kubeconfig", help="kubeconfig (default: .cluster/kubeconfig if present, else $KUBECONFIG ...)"
    )
    cp.add_argument("--experiment", help="only this experiment's namespaces")
    cp.add_argument("--namespace", help="shared-namespace mode: delete the podnet objects in this namespace")
    cp.add_argument("--timeout", type=float, default=180, help="seconds to wait until they are gone")
    cp.set_defaults(func=_cmd_cleanup)
    fp = sub.add_parser(
        "floor", help="the noise floor: the config's tests between two bare network namespaces"
    )
    from podnet.launch.noise import floor_cli as floor

    floor.add_arguments(fp)
    fp.set_defaults(func=floor.cmd_floor)
    sp = sub.add_parser(
        "settle", help="warm-up and test length from iperf3 runs' per-second intervals (-J -i 1)"
    )
    from podnet.stats import settle

    settle.add_arguments(sp)
    sp.set_defaults(func=settle.cmd_settle)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
