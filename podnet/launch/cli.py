"""``podnet launch`` and ``podnet cleanup`` (wired into :mod:`podnet.cli`)."""

from __future__ import annotations

import argparse
import sys

from podnet.launch.rounds.results import configure_logging
from podnet.launch.spec.config import LaunchConfigError


def cmd_launch(args: argparse.Namespace) -> int:
    from podnet.launch.rounds.runner import launch

    configure_logging()
    try:
        result = launch(args.config, kubeconfig=args.kubeconfig, manifest=args.manifest, dry_run=args.dry_run)
    except LaunchConfigError as exc:
        print(f"podnet launch: {exc}", file=sys.stderr)
        return 2
    if result.exit_code:
        return result.exit_code
    if args.strict and result.failed:
        return 3
    return 0


def cmd_cleanup(args: argparse.Namespace) -> int:
    from podnet.launch.cluster.k8s import KubeError
    from podnet.launch.cluster.leftovers import cleanup

    configure_logging()
    try:
        names = cleanup(
            kubeconfig=args.kubeconfig,
            experiment=args.experiment,
            namespace=args.namespace,
            timeout=args.timeout,
        )
    except KubeError as exc:
        print(f"podnet cleanup: {exc}", file=sys.stderr)
        return 1
    what = "pod(s)" if args.namespace else "namespace(s)"
    print(f"deleted {len(names)} {what}" + (": " + " ".join(names) if names else ""))
    return 0
