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
``status`` (``ok``, ``failed``, or ``disturbed``: judged disturbed and re-run, never a value;
:mod:`podnet.parse.disturbed`) and ``error``, ``disturbed`` (true: a disturbed run kept; the tidy
``disturbed``), ``round_seq`` (the ordinal of the launch round it ran in; the tidy ``round_seq``), ``sha256`` of the raw file,
``launch`` (the launcher's id, namespace, config hash: ``launch.id`` becomes the tidy ``launch_id``, which
the statistics use to pair repeats only within one launch), ``excerpt`` (true: the output was pasted as an excerpt on purpose, e.g. without ping's
statistics block; its rows are marked) and ``excerpt_lines`` (how many result lines were pasted, e.g. ping
reply lines: an excerpt with another count is rejected), the types checked against :func:`sidecar_schema`,
``cluster`` (versions, CNI, nodes), ``source`` and ``notes``; from the launcher also ``warmup`` (true: an
uncounted warm-up run, never a tidy row), ``interference`` (what competed with the run: CPU busy/steal
of its machines, the launcher's and the cluster daemons' CPU; :mod:`podnet.launch.noise.interference`) and
``harness`` (warm-up, QoS, CPU affinity settings), ``load`` (a latency-under-load run's load: its
output ``<stem>.load.json`` beside the probe's, command, times, status; :mod:`podnet.parse.underload`).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from podnet.parse.underload import LOAD_SUFFIX, orphan_problem

SIDECAR_SUFFIX = ".meta.yaml"
SIDECAR_VERSION = 1

#: files under a raw directory that are not tool outputs
#: libyaml's loader when PyYAML was built with it (10x faster on thousands of sidecars)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

DEFAULT_IGNORE = ["README*", "*.md", "_*", ".*", "*/_*/*", "*/.*/*", "published/*", "*/published/*"]


class SidecarError(ValueError):
    """A sidecar is missing, unreadable, lacks a required key or has a key of the wrong type."""


def sidecar_schema() -> dict[str, Any]:
    """JSON schema of the sidecar keys the parse stage reads (others are provenance, kept as they
    are): ``podnet/config/schemas/sidecar.schema.yaml``."""
    from podnet.config.schema import data_schema

    return data_schema("sidecar")


@lru_cache(maxsize=1)
def _sidecar_validator() -> Any:
    import jsonschema

    return jsonschema.Draft7Validator(sidecar_schema())


def validate_sidecar(meta: Any, where: str = "sidecar") -> dict[str, Any]:
    """``meta`` checked against :func:`sidecar_schema`; :class:`SidecarError` lists every problem."""
    if not isinstance(meta, dict):
        raise SidecarError(f"{where} must be a mapping of keys to values")
    errors = sorted(_sidecar_validator().iter_errors(meta), key=lambda e: list(map(str, e.path)))
    if errors:
        parts = []
        for e in errors:
            key = ".".join(map(str, e.path)) or "(top level)"
            value = e.instance if e.path else ""
            if e.validator == "required":
                parts.append(f"{key}: {e.message}" if e.path else e.message)
            elif len(e.path) > 1:  # inside a nested mapping (interference): the validator's own words
                parts.append(f"{key} = {value!r}: {e.message}")
            else:
                shown = f" = {value!r}" if e.path else ""
                parts.append(f"{key}{shown}: {_schema_hint(e.path)}")
        raise SidecarError(f"{where}: " + "; ".join(parts))
    return meta


def _schema_hint(path: Any) -> str:
    key = str(list(path)[0]) if list(path) else ""
    spec = sidecar_schema()["properties"].get(key, {})
    if "enum" in spec:
        return "expected one of " + ", ".join(spec["enum"])
    if key == "sha256":
        return "expected the 64 hex digits of the raw file's sha256"
    t = spec.get("type")
    t = " or ".join(t) if isinstance(t, list) else t
    extra = f" >= {spec['minimum']}" if "minimum" in spec else ""
    extra += " (not empty)" if "minLength" in spec else ""
    return f"expected {t}{extra}"


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


@dataclass(frozen=True)
class BadEntry:
    """Something under a raw directory that is not a readable raw file, and why."""

    path: Path
    reason: str

    def display(self) -> str:
        """The path as text that any writer accepts (undecodable bytes shown as \\xNN)."""
        return display_path(self.path)


def relative_text(path: Path | str, raw_dir: Path | str) -> str:
    """``path`` below ``raw_dir`` as POSIX text (``Path.relative_to``, without pathlib for the
    usual case: ``path`` written as ``raw_dir`` plus names, as :func:`scan_raw_dir` gives them)."""
    p, base = os.fspath(path), os.fspath(raw_dir).rstrip("/")
    if base and p.startswith(base + "/") and "/./" not in p and "//" not in p and not p.endswith("/"):
        return p[len(base) + 1 :]
    return Path(path).relative_to(raw_dir).as_posix()


def display_path(path: Path | str) -> str:
    """``path`` as valid UTF-8 text: bytes of a name that is not UTF-8 are shown as ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def entry_problem(path: Path) -> str | None:
    """Why ``path`` cannot be read as a raw file (unreadable, a directory, a broken link...), or None."""
    why = _problem(path)
    if why is None and path.is_dir():
        if not os.access(path, os.R_OK | os.X_OK):
            return "unreadable directory (permission denied): its runs cannot be parsed"
        return "a directory, not a raw file"
    return why


def _problem(path: Path | str) -> str | None:
    """Why ``path`` (a non-directory entry of a raw dir) cannot be read as a raw file, or None."""
    name = os.fsencode(path)
    try:
        name.decode("utf-8")
    except UnicodeDecodeError:
        return "file name is not valid UTF-8: rename it (podnet keeps paths as text in its tables)"
    try:
        st = os.stat(path)
    except OSError as exc:
        if os.path.islink(path):
            kind = "symlink loop" if getattr(exc, "errno", None) == 40 else "broken symlink"
            return f"{kind}: {os.readlink(path)!s} cannot be followed ({exc.strerror})"
        return f"cannot stat the file: {exc.strerror}"
    import stat as _stat

    if _stat.S_ISDIR(st.st_mode):
        return None
    if not _stat.S_ISREG(st.st_mode):
        return "not a regular file (a FIFO, socket or device): expected a saved tool output"
    if not os.access(path, os.R_OK):
        return "unreadable file (permission denied)"
    return None


def scan_raw_dir(raw_dir: Path | str, ignore: list[str] | None = None) -> tuple[list[Path], list[BadEntry]]:
    """Raw outputs below ``raw_dir`` and the entries that cannot be read as one (with reasons).

    Nothing is skipped silently: an unreadable directory, a broken symlink, a symlink loop,
    a file that cannot be read and a name that is not UTF-8 each come back as a :class:`BadEntry`.
    """
    raw_dir = Path(raw_dir)
    patterns = DEFAULT_IGNORE if ignore is None else ignore
    # one regex for every pattern (what fnmatch matches each with, on POSIX): 10,000s of names
    ignored = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns) or r"(?!)")
    found: list[str] = []
    bad: list[BadEntry] = []

    def onerror(exc: OSError) -> None:
        where = Path(exc.filename) if exc.filename else raw_dir
        bad.append(BadEntry(where, f"unreadable directory ({exc.strerror}): its runs cannot be parsed"))

    # text, not pathlib, for the 10,000s of names (the workflow lists them on every run): the base as
    # pathlib writes it, so each joined name is the text of its Path and sorts as its parts do
    base = str(raw_dir)
    cut = len(base) + (0 if base.endswith(os.sep) else 1)
    for root, dirs, files in os.walk(base, onerror=onerror):
        keep = []
        for d in sorted(dirs):
            if d.startswith((".", "_")):
                continue
            if os.path.islink(os.path.join(root, d)):
                files.append(d)  # a symlinked directory is not followed: reported below
                continue
            keep.append(d)
        dirs[:] = keep
        runs: set[str] | None = None  # this directory's raw files with a sidecar, when a load output asks
        for name in files:
            if name.endswith(SIDECAR_SUFFIX):
                continue
            full = os.path.join(root, name)
            if name.endswith(LOAD_SUFFIX):  # a latency-under-load run's second output: read with its probe
                if runs is None:
                    names = set(files)
                    runs = {f for f in names if f + SIDECAR_SUFFIX in names}
                why = orphan_problem(Path(full), runs)
                if why:
                    bad.append(BadEntry(Path(full), why))
                continue
            if ignored.match(full[cut:]) or ignored.match(name):
                continue
            why = _problem(full)
            if why is None and os.path.isdir(full):
                why = "symlink to a directory: not followed (copy the files, or link each file)"
            if why is None:
                found.append(full)
            else:
                bad.append(BadEntry(Path(full), why))
    found.sort(key=lambda f: f.split("/"))  # as Paths sort: by their parts
    return [Path(f) for f in found], sorted(bad, key=lambda b: os.fsencode(b.path))


def find_raw_files(raw_dir: Path | str, ignore: list[str] | None = None) -> list[Path]:
    """Every readable raw output below ``raw_dir`` (sidecars and ignored names excluded), sorted.

    Entries that cannot be read are left out here; :func:`scan_raw_dir` returns them with reasons.
    """
    return scan_raw_dir(raw_dir, ignore)[0]


def read_sidecar(raw: Path | str) -> dict[str, Any]:
    """The sidecar mapping of raw file ``raw``; :class:`SidecarError` names the problem."""
    path = sidecar_path(raw)
    if not path.exists() and not path.is_symlink():
        raise SidecarError(f"no sidecar {path.name} beside the raw file (what ran, variant, scenario)")
    try:
        meta = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except OSError as exc:
        raise SidecarError(f"sidecar {display_path(path)} cannot be read: {exc.strerror or exc}") from exc
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise SidecarError(f"sidecar {display_path(path)} is not valid YAML: {exc}") from exc
    return validate_sidecar(meta, f"sidecar {display_path(path)}")


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
