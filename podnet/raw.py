"""Raw tool outputs and their provenance sidecars.

Layout: ``raw/<experiment>/<any subdirs>/<name>.<ext>`` holds exactly what the
tool printed; ``<name>.<ext>.meta.yaml`` beside it says what ran, where and
when. Raw files are written once (:func:`write_raw` refuses to overwrite) and
never rewritten by the pipeline.

Sidecar keys (all optional but ``variant`` and ``scenario``):

``tool`` (adapter name; auto-detected when absent), ``variant``, ``scenario``,
``repeat`` (default 1), ``kind`` (``measured`` or ``reference``), ``test``,
``protocol``, ``direction``, ``streams``, ``command``, ``client``/``server``
(node, pod, ip, ...), ``started``/``ended`` (ISO 8601), ``exit_code``,
``status`` (``ok`` or ``failed``) and ``error``, ``sha256`` of the raw file,
``cluster`` (versions, CNI, nodes), ``source`` and ``notes``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from pathlib import Path
from typing import Any

import yaml

SIDECAR_SUFFIX = ".meta.yaml"
SIDECAR_VERSION = 1

#: files under a raw directory that are not tool outputs
#: libyaml's loader when PyYAML was built with it (10x faster on thousands of sidecars)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

DEFAULT_IGNORE = ["README*", "*.md", "_*", ".*", "*/_*/*", "*/.*/*", "published/*", "*/published/*"]


class SidecarError(ValueError):
    """A sidecar is missing, unreadable or lacks a required key."""


def sidecar_path(raw: Path | str) -> Path:
    """The sidecar of raw file ``raw``."""
    raw = Path(raw)
    return raw.with_name(raw.name + SIDECAR_SUFFIX)


def sha256(path: Path | str) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def find_raw_files(raw_dir: Path | str, ignore: list[str] | None = None) -> list[Path]:
    """Every raw output below ``raw_dir`` (sidecars and ignored names excluded), sorted."""
    raw_dir = Path(raw_dir)
    patterns = DEFAULT_IGNORE if ignore is None else ignore
    found = []
    for root, dirs, files in os.walk(raw_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for name in files:
            if name.endswith(SIDECAR_SUFFIX):
                continue
            rel = (Path(root) / name).relative_to(raw_dir).as_posix()
            if any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in patterns):
                continue
            found.append(Path(root) / name)
    return sorted(found)


def read_sidecar(raw: Path | str) -> dict[str, Any]:
    """The sidecar mapping of raw file ``raw``; :class:`SidecarError` names the problem."""
    path = sidecar_path(raw)
    if not path.exists():
        raise SidecarError(f"no sidecar {path.name} beside the raw file (what ran, variant, scenario)")
    try:
        meta = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise SidecarError(f"sidecar {path} is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise SidecarError(f"sidecar {path} must be a mapping of keys to values")
    missing = [k for k in ("variant", "scenario") if not meta.get(k)]
    if missing:
        raise SidecarError(f"sidecar {path} lacks {', '.join(missing)}")
    return meta


def write_raw(raw: Path | str, content: bytes | str, meta: dict[str, Any]) -> Path:
    """Write a raw output and its sidecar (with sha256); never overwrites an existing raw file."""
    raw = Path(raw)
    raw.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8") if isinstance(content, str) else content
    with open(raw, "xb") as fh:  # 'x': fail if it exists
        fh.write(data)
    meta = {"podnet_sidecar": SIDECAR_VERSION, **meta, "sha256": hashlib.sha256(data).hexdigest()}
    tmp = sidecar_path(raw).with_suffix(".tmp")
    tmp.write_text(yaml.dump(meta, Dumper=_DUMPER, sort_keys=False, allow_unicode=True), encoding="utf-8")
    tmp.replace(sidecar_path(raw))
    return raw


def run_id(raw: Path | str, raw_dir: Path | str) -> str:
    """A run's id: its raw path relative to the experiment's raw dir, without the extension."""
    rel = Path(raw).relative_to(raw_dir)
    return rel.with_suffix("").as_posix() if rel.suffix else rel.as_posix()
