"""Mangled copies of real tool outputs and the oracle that judges what podnet made of them.

Corpus: every fixture under ``tests/fixtures/<tool>/`` and every raw file of
``raw/seed-*``. A mangled copy must give either exactly the values of the
untouched file or a rejection with a reason; anything else is WRONG (a silent
wrong number). Used by the hypothesis tests (``tests/fuzz/``) and by
``benchmarks/fuzz_parsers.py`` (exhaustive cuts, more examples).

Mutations: cut at any byte (at every line end and inside lines), a byte with
its high bit flipped (corruption: never valid text), a NUL in the text, a
UTF-8 BOM, UTF-16/32 with and without BOM as Windows redirects write them,
CRLF, a NUL-padded tail, a duplicated line, a dropped line, and for JSON a
value replaced by one of the wrong type.
"""

from __future__ import annotations

import codecs
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from podnet.parse import parse_text
from podnet.parse.decode import DecodeError, decode
from podnet.parse.raw import SidecarError, find_raw_files, read_sidecar
from podnet.tools.base import ParseError

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


#: (sample, mutation kind) where a mangled copy can still give other numbers, and why no check can
#: tell even with the sidecar. Empty: the cuts at a line end that left a complete-looking shorter
#: output are rejected with the run's command (netperf -k launcher fixtures: complete_for checks every
#: -k selector; seed001-tcp-i1: iperf2's -i check; commands in tests/fixtures/commands.yaml, the
#: sidecar's `command` in real runs) or the sidecar's `excerpt_lines` (the declared ping excerpt).
KNOWN_GAPS: set[tuple[str, str]] = set()


_OOO = (
    "iperf 2 prints '[ ID] 0.0-T sec N datagrams received out-of-order' only when N > 0 (Reporter: "
    "'if (stats->cntOutofOrder > 0)'); without it the output is byte for byte a run with none"
)
_SPLICE = (
    "the file repeats a reply line verbatim; without one copy it is a whole ping output of the 2 "
    "replies its statistics count"
)
_FIRST_STREAM = (
    "an excerpt pasted from the '- - -' rule on has no interval rows naming its streams: cut after "
    "the first stream's 'Sent N datagrams' it is byte for byte a 1-stream run's summary"
)
_CSV_SERVER = (
    "an iperf 2 server's -y C output is one self-contained line per connection, no header, no SUM, "
    "no stream count; with one line gone it is byte for byte a server that served one connection"
)
_AB_NON2XX = (
    "ab prints 'Non-2xx responses:' only when that count is non-zero (ab.c: 'if (err_response)'); "
    "nothing else in its report counts them, so without the line it is a run where every answer was 2xx"
)
_WRK_NON2XX = (
    "wrk prints 'Non-2xx or 3xx responses:' only when errors.status > 0; without it the output is "
    "byte for byte a run where every answer was 2xx/3xx"
)
_WRK_SOCKET = (
    "wrk prints 'Socket errors:' only when one of its four counts is non-zero; without it the output "
    "is byte for byte a run without socket errors"
)

#: (sample, mutation) -> why the mangled copy is a valid output of another real run, one a line:
#: counted apart ("indistinguishable") by the benchmark, never as same/subset
INDISTINGUISHABLE = {
    ("ab/non2xx.txt", "drop-line 29"): _AB_NON2XX,
    ("wrk/non2xx.txt", "drop-line 11"): _WRK_NON2XX,
    ("wrk/socket-errors.txt", "drop-line 11"): _WRK_SOCKET,
    ("iperf2/seed001-udp-10s.txt", "drop-line 12"): _OOO,
    ("iperf2/seed001-udp-glued.txt", "drop-line 12"): _OOO,
    ("raw/seed-cni-1gbe/calico/iperf2-udp.txt", "drop-line 12"): _OOO,
    ("raw/seed-cni-1gbe/physical/iperf2-udp.txt", "drop-line 12"): _OOO,
    ("raw/seed-cni-1gbe/physical/iperf2-udp-2.txt", "drop-line 12"): _OOO,
    ("iperf2/tcp-csv-P2-server.txt", "drop-line 0"): _CSV_SERVER,
    ("iperf2/tcp-csv-P2-server.txt", "cut@80"): _CSV_SERVER,  # = drop-line 1
    ("iperf2/seed001-udp-10s.txt", "cut@573"): _OOO,  # = drop-line 12 (the last line)
    ("iperf2/seed001-udp-glued.txt", "cut@568"): _OOO,
    ("raw/seed-cni-1gbe/calico/iperf2-udp.txt", "cut@573"): _OOO,
    ("raw/seed-cni-1gbe/physical/iperf2-udp.txt", "cut@568"): _OOO,
    ("raw/seed-cni-1gbe/physical/iperf2-udp-2.txt", "cut@569"): _OOO,
    ("iperf2/tcp-csv-P2-server.txt", "drop-line 1"): _CSV_SERVER,
    # the shared corpus (read in place, ../shared/corpus)
    ("corpus/wild/iperf2--container-network-benchmark--2.0-udp-server-report.txt", "drop-line 11"): _OOO,
    ("corpus/wild/iperf2--container-network-benchmark--2.0-udp-server-report.txt", "cut@542"): _OOO,
    ("corpus/wild/iperf2--pkb--2.0-enhanced-udp-P2-sum.txt", "drop-line 17"): _OOO,
    ("corpus/wild/iperf2--pkb--2.0-enhanced-udp-P2-sum.txt", "cut@929"): _OOO,
    ("corpus/wild/wrk--pkb--wrk2-all-404.txt", "drop-line 69"): _WRK_NON2XX,
    ("corpus/wild/wrk--pkb--wrk2-some-non2xx.txt", "drop-line 71"): _WRK_NON2XX,
    # a reply line printed twice verbatim (no '(DUP!)'): dropping either copy repairs the splice
    ("corpus/jc-ping/ubuntu-22.04--ping6-ip-source-ip.out", "drop-line 2"): _SPLICE,
    ("corpus/jc-ping/ubuntu-22.04--ping6-ip-source-ip.out", "drop-line 3"): _SPLICE,
    # an excerpt that starts at the '- - -' rule: cut after its first stream it is a 1-stream run
    ("iperf3/udp-3.1-text-p5-excerpt.txt", "cut@251"): _FIRST_STREAM,
}


def effective_kind(sample: Sample, kind: str, mutated: bytes) -> str:
    """A dropped last line is the same bytes as a cut at a line end: judged as that cut."""
    if kind == "drop-line" and mutated in {sample.data[:n] for n in line_ends(sample.data)}:
        return "cut"
    return kind


@dataclass(frozen=True)
class Sample:
    """One real output: its bytes, the tool to force (None: detect) and its excerpt flag."""

    name: str
    data: bytes
    tool: str | None
    excerpt: bool = False
    command: str | None = None
    excerpt_lines: int | None = None


def fixture_files() -> list[Path]:
    """Every fixture output (not SOURCES.md, not the golden expected-values files)."""
    return sorted(
        p
        for p in FIXTURES.rglob("*")
        if p.is_file() and p.suffix not in (".md", ".yaml") and not p.name.endswith(".expected.json")
    )


def fixture_commands() -> dict[str, str]:
    """The command line of fixtures whose output does not say it (``tests/fixtures/commands.yaml``)."""
    return yaml.safe_load((FIXTURES / "commands.yaml").read_text()) or {}


#: real outputs other people recorded (README there); read in place, never copied into the project
#: ``../shared/corpus`` beside the clone unless PODNET_SHARED_CORPUS says where
SHARED_CORPUS = Path(os.environ.get("PODNET_SHARED_CORPUS") or REPO.parent / "shared" / "corpus")


def shared_corpus() -> list[Sample]:
    """The shared corpus's outputs (tool detected), when it is there: jc-ping/*.out and wild/*."""
    if not (SHARED_CORPUS / "README.md").exists():
        return []
    files = sorted((SHARED_CORPUS / "jc-ping").glob("*.out")) + sorted(
        p for p in (SHARED_CORPUS / "wild").iterdir() if p.name != "expected.json"
    )
    return [Sample(f"corpus/{p.relative_to(SHARED_CORPUS).as_posix()}", p.read_bytes(), None) for p in files]


def corpus(shared: bool = False) -> list[Sample]:
    """Fixtures (tool detected) and the seeds' imported raw files (tool and excerpt from their
    sidecars; a seed campaign's launched runs under raw/seed-NNN are left out, as a clean clone has none);
    with ``shared``, the shared corpus's outputs too (:func:`shared_corpus`)."""
    commands = fixture_commands()
    out = [
        Sample(
            p.relative_to(FIXTURES).as_posix(),
            p.read_bytes(),
            None,
            False,
            commands.get(p.relative_to(FIXTURES).as_posix()),
        )
        for p in fixture_files()
    ]
    for d in sorted(REPO.glob("raw/seed-*")):
        for f in find_raw_files(d):
            try:
                meta = read_sidecar(f)
            except SidecarError:
                continue
            if str(meta.get("source", "")).startswith("podnet launch"):
                continue  # a campaign's own runs (raw/seed-001, ...): not the seeds' committed text
            out.append(
                Sample(
                    f.relative_to(REPO).as_posix(),
                    f.read_bytes(),
                    meta.get("tool"),
                    bool(meta.get("excerpt")),
                    meta.get("command"),
                    meta.get("excerpt_lines"),
                )
            )
    return out + (shared_corpus() if shared else [])


def _num(v: float) -> object:
    return "nan" if isinstance(v, float) and math.isnan(v) else v


def outcome(
    data: bytes,
    tool: str | None,
    excerpt: bool = False,
    command: str | None = None,
    excerpt_lines: int | None = None,
) -> tuple[str, object]:
    """("rejected", reason) or ("values", a comparable signature of everything the parse produced)."""
    try:
        text = decode(data)
        adapter, result = parse_text(
            text, tool, excerpt=excerpt, command=command, excerpt_lines=excerpt_lines
        )
        if not result.measurements:
            raise ParseError("no measurement")
    except (ParseError, DecodeError, SidecarError, KeyError) as exc:
        return "rejected", str(exc) or type(exc).__name__
    except Exception as exc:  # noqa: BLE001 (a parser bug: the pipeline records it, the fuzz counts it)
        return "crash", f"{type(exc).__name__}: {exc}"
    # what lands in the tidy table: a measurement's own labels, else the run's
    sig = (
        adapter.name,
        bool(result.info.get("excerpt")),
        tuple(
            sorted(
                (
                    m.metric,
                    _num(m.value),
                    m.unit,
                    m.direction or result.direction,
                    m.protocol or result.protocol,
                    m.test or result.test,
                    m.streams or result.streams,
                    m.variant,
                    m.scenario,
                )
                for m in result.measurements
            )
        ),
    )
    return "values", sig


def judge(
    sample: Sample, mutated: bytes, baseline: tuple[str, object] | None = None, label: str | None = None
) -> str:
    """'same', 'rejected', 'crash' (a parser exception: still a per-file failure), 'subset', 'WRONG',
    or 'indistinguishable' (a WRONG that :data:`INDISTINGUISHABLE` justifies for this ``label``)."""
    base = baseline or outcome(sample.data, sample.tool, sample.excerpt, sample.command, sample.excerpt_lines)
    kind, got = outcome(mutated, sample.tool, sample.excerpt, sample.command, sample.excerpt_lines)
    if kind in ("rejected", "crash"):
        return kind
    if base[0] == "values" and got == base[1]:
        return "same"
    if base[0] == "values" and got[:2] == base[1][:2] and set(got[2]) < set(base[1][2]):
        # every number is the run's, some are missing: a shorter output that is complete as it
        # stands (qperf's `tcp_bw` alone, a reference table's first rows); not a wrong number
        return "subset"
    if label is not None and (sample.name, label) in INDISTINGUISHABLE:
        return "indistinguishable"
    if (
        label is not None
        and label.startswith("cut@")
        and mutated + b"\n" in {sample.data[:n] for n in line_ends(sample.data)}
    ):
        # the same cut at a line end, only its final newline missing (as outputs pasted without it are)
        if (sample.name, f"cut@{len(mutated) + 1}") in INDISTINGUISHABLE:
            return "indistinguishable"
    return "WRONG"


# ---- mutations (bytes -> bytes) ------------------------------------------------------------


def cut(data: bytes, n: int) -> bytes:
    return data[:n]


def line_ends(data: bytes) -> list[int]:
    """Offsets just after each newline, plus the offsets of the last characters of each line."""
    return [i + 1 for i, b in enumerate(data) if b == 0x0A]


def flip(data: bytes, i: int) -> bytes:
    return data[:i] + bytes([data[i] ^ 0x80]) + data[i + 1 :]


def nul_at(data: bytes, i: int) -> bytes:
    return data[:i] + b"\0" + data[i + 1 :]


def recode(data: bytes, how: str) -> bytes:
    """The same text as another encoding / line end would store it."""
    text = data.decode("utf-8")
    if how == "bom":
        return codecs.BOM_UTF8 + data
    if how == "crlf":
        return text.replace("\n", "\r\n").encode("utf-8")
    if how == "utf-16":  # PowerShell `>` (Windows PowerShell 5): UTF-16 LE with BOM, CRLF
        return codecs.BOM_UTF16_LE + text.replace("\n", "\r\n").encode("utf-16-le")
    if how in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"):
        return text.encode(how)
    if how == "utf-32":
        return codecs.BOM_UTF32_LE + text.encode("utf-32-le")
    if how == "nul-tail":
        return data + b"\0" * 37
    raise ValueError(how)


RECODINGS = [
    "bom",
    "crlf",
    "utf-16",
    "utf-16-le",
    "utf-16-be",
    "utf-32",
    "utf-32-le",
    "utf-32-be",
    "nul-tail",
]


def lines_of(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def dup_line(data: bytes, i: int) -> bytes:
    ls = lines_of(data)
    return b"".join(ls[: i + 1] + ls[i:])


def drop_line(data: bytes, i: int) -> bytes:
    ls = lines_of(data)
    return b"".join(ls[:i] + ls[i + 1 :])


#: values of the wrong JSON type (a number where a string is expected counts too)
WRONG_VALUES: list[object] = ["x", None, [], {}, True, "12", 12.5]


def json_paths(doc: object, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value in a JSON document."""
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += json_paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += json_paths(v, prefix + (i,))
    return out


def json_retype(data: bytes, path: tuple, value: object) -> bytes | None:
    """The JSON document with the value at ``path`` replaced (None when that is no change)."""
    doc = json.loads(data)
    node = doc
    for k in path[:-1]:
        node = node[k]
    old = node[path[-1]]
    if isinstance(old, (int, float)) and isinstance(value, (int, float)):
        return None  # another number is another value of the right type, not a type error
    if old == value and type(old) is type(value):
        return None
    node[path[-1]] = value
    return json.dumps(doc, indent=2).encode()


def is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True
