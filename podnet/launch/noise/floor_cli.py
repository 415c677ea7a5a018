"""``podnet floor``: the noise floor's command line (:mod:`podnet.launch.noise.netns_floor` runs it).

podnet floor --config config/config.yaml --tests iperf3:tcp,ping:plain --repeats 10 [--link-rate 1gbit]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from podnet.launch.noise.netns_floor import VARIANT, run_floor, tests_from_config


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``podnet floor`` options."""
    p.add_argument("--config", default="config/config.yaml", help="experiment config (its launch.tools)")
    p.add_argument("--tests", default="iperf3:tcp,ping:plain", help="tool:test selectors, comma separated")
    p.add_argument("--repeats", type=int, default=10, help="interleaved rounds (default 10)")
    p.add_argument("--raw", default=None, help="raw directory (default: raw/<experiment>)")
    p.add_argument(
        "--affinity",
        default=None,
        help="where the client and server run: CLIENT,SERVER CPUs (e.g. 0,0), or 'none' for where the "
        "scheduler puts them, every test (default: a test's own affinity, else launch.affinity)",
    )
    p.add_argument(
        "--link-rate",
        default=None,
        help="shape both ends of the floor's veth to this rate (e.g. 1gbit, 10gbit) with the embedded "
        "cluster's shaper (envs/cluster/shape.sh, as LINK_RATE does); default unshaped",
    )


def cmd_floor(a: argparse.Namespace) -> int:
    """``podnet floor``: run the config's tests on the noise floor into raw/<experiment>/floor/."""
    import yaml

    if os.geteuid() != 0:
        print("podnet floor: needs root (network namespaces)", file=sys.stderr)
        return 2
    try:
        config = yaml.safe_load(Path(a.config).read_text(encoding="utf-8"))
        experiment = config["experiment"]
        if a.affinity is not None:  # every test placed so, one with an affinity of its own too
            config.setdefault("launch", {})["affinity"] = parse_affinity(a.affinity)
            for spec in (config["launch"].get("tools") or {}).values():
                for t in (spec or {}).get("tests") or []:
                    t.pop("affinity", None)
        tests = tests_from_config(config, [s for s in a.tests.split(",") if s])
    except (OSError, ValueError, KeyError, TypeError, yaml.YAMLError) as exc:
        print(f"podnet floor: {a.config}: {exc}", file=sys.stderr)
        return 2
    raw_dir = Path(a.raw) if a.raw else Path("raw") / experiment
    try:
        n = sum(1 for _ in run_floor(tests, raw_dir, experiment, a.repeats, link_rate=a.link_rate))
    except ValueError as exc:
        print(f"podnet floor: {exc}", file=sys.stderr)
        return 2
    print(f"floor: {n} runs written under {raw_dir / VARIANT}")
    return 0


def parse_affinity(text: str) -> dict[str, int] | None:
    """``--affinity``: ``"0,1"`` as {"client": 0, "server": 1}; ``"none"`` as None."""
    if text.strip().lower() == "none":
        return None
    parts = [x.strip() for x in text.split(",")]
    if len(parts) != 2 or not all(x.isdigit() for x in parts):
        raise ValueError(f"--affinity {text!r}: give CLIENT,SERVER CPU numbers (e.g. 0,0) or none")
    return {"client": int(parts[0]), "server": int(parts[1])}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="podnet floor",
        description="the noise floor: the config's tool commands between two bare network namespaces",
    )
    add_arguments(p)
    return cmd_floor(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
