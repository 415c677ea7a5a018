"""``podnet launch`` and ``podnet cleanup`` (wired into :mod:`podnet.cli`)."""

from __future__ import annotations

import argparse
import logging
import sys

from podnet.launch.config import LaunchConfigError


def configure_logging(log_file: str | None = None) -> None:
    """The launcher's progress log on stderr (and in ``log_file``), without the API clients' chatter."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.insert(0, logging.FileHandler(log_file, mode="w"))
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(message)s",
        datefmt="%H:%M:%S",
        handlers=handlers,
        force=True,
    )
    logging.getLogger("kubernetes").setLevel(logging.WARNING)
    logging.getLogger("urllib3").setLevel(logging.WARNING)


def cmd_launch(args: argparse.Namespace) -> int:
    from podnet.launch.runner import launch

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
    from podnet.launch.k8s import KubeError
    from podnet.launch.leftovers import cleanup

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
