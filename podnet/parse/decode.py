"""Bytes of a raw file -> text, in one place, before any adapter sees it.

Tool outputs reach podnet as they were saved: UTF-8 with or without a BOM,
UTF-16 or UTF-32 as a Windows redirect (PowerShell ``>``) writes them, with
CRLF line ends, sometimes with a tail of NUL bytes (a log file preallocated
or cut by a crash). :func:`decode` turns all of these into the same ``str``
with ``\\n`` line ends, so every adapter parses one form. Anything else that
is not text (NUL bytes inside the text, bytes that are not valid in the
detected encoding) is a :class:`DecodeError` that says where and why: a
corrupted byte is never guessed around, because it may sit inside a number.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from pathlib import Path

#: bytes read to detect the tool (bounded: a 500 MB log is not scanned for that)
HEAD_BYTES = 64 * 1024

_BOMS = (
    # longest first: the UTF-32 LE BOM starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


class DecodeError(ValueError):
    """The bytes are not a tool's text output; the message says why."""


def sniff_encoding(data: bytes) -> tuple[str, int]:
    """The encoding of ``data`` and the length of its BOM (0 when none).

    Without a BOM, UTF-16/32 is recognised by its NUL pattern: ASCII text in
    UTF-16 LE has a NUL at every odd offset, in UTF-32 LE three NULs of four.
    """
    for bom, enc in _BOMS:
        if data.startswith(bom):
            return enc, len(bom)
    head = data[:4096]
    n = len(head) - len(head) % 4
    if n >= 8:
        quads = [head[i : i + 4] for i in range(0, n, 4)]
        if all(q[1:] == b"\0\0\0" and q[0] for q in quads):
            return "utf-32-le", 0
        if all(q[:3] == b"\0\0\0" and q[3] for q in quads):
            return "utf-32-be", 0
    n = len(head) - len(head) % 2
    if n >= 4:
        pairs = [head[i : i + 2] for i in range(0, n, 2)]
        if all(p[1] == 0 and p[0] for p in pairs):
            return "utf-16-le", 0
        if all(p[0] == 0 and p[1] for p in pairs):
            return "utf-16-be", 0
    return "utf-8", 0


def decode(data: bytes, *, final: bool = True) -> str:
    """Text of a raw output: BOM and encoding handled, CRLF/CR -> LF, trailing NULs dropped.

    ``final=False`` decodes a head of a longer file (a multi-byte character
    cut at the end of the head is dropped, not an error).
    Raises :class:`DecodeError` for empty, binary or undecodable bytes.
    """
    enc, skip = sniff_encoding(data)
    body = data[skip:]
    width = 1 if enc == "utf-8" else 2 if enc.startswith("utf-16") else 4
    extra = len(body) % width
    if final and extra and not body[-extra:].strip(b"\0"):
        body = body[:-extra]  # an odd NUL left by padding, not half a character
    decoder = codecs.getincrementaldecoder(enc)("strict")
    try:
        text = decoder.decode(body, final=final)
    except UnicodeDecodeError as exc:
        where = exc.start + skip
        raise DecodeError(
            f"not {enc.upper()} text (invalid byte 0x{body[exc.start]:02x} at offset {where}): "
            "expected a tool's text or JSON output; a corrupted or binary file"
        ) from None
    if final:
        # a NUL-filled tail (preallocated or crash-cut log) is padding, not content
        text = text.rstrip("\0")
    if "\0" in text:
        raise DecodeError(
            f"binary file (NUL byte at character {text.index(chr(0))} of the {enc.upper()} text): "
            "expected a tool's text or JSON output"
        )
    if not text.strip():
        raise DecodeError("empty file: the tool printed nothing (did it run?)")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


# a terminal's control sequences: CSI (ESC [ ... final byte), OSC (ESC ] ... BEL or ESC \\), charset
# selection; and the same CSI written out in caret notation (^[[F) when a terminal session is pasted
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\\\)|\x1b[()][0-9A-Za-z]")
_CARET_ESCAPES = re.compile(r"^(?:\^\[\[[0-?]*[ -/]*[@-~])+", re.M)
# what a document adds in front of every line of a pasted output: indentation, a quote marker
_MARGIN = re.compile(r"^[ \t]*(?:>[ \t]?)*[ \t]*")


def unpaste(text: str) -> tuple[str, list[str]]:
    """``text`` without what a terminal or a document added around a tool's output, and what went.

    Terminal control sequences (colours, cursor moves; also written out in caret notation
    as ``^[[F`` at the start of a line) are no part of any tool's figures. A margin that
    every non-blank line shares (indentation of a Markdown code block, ``> `` quote
    markers) is removed; lines' indentation relative to each other is kept. The notes say
    what was removed, for the run's provenance.
    """
    notes = []
    if "\x1b" in text:
        text, n = _ESCAPES.subn("", text)
        if n:
            notes.append(f"removed {n} terminal control sequence(s)")
    if "^[[" in text:
        text, n = _CARET_ESCAPES.subn("", text)
        if n:
            notes.append(f"removed {n} terminal control sequence(s) written in caret notation (^[[...)")
    removed = ""
    for _ in range(3):  # a quote marker, then the code block's indentation under it
        common = _common_margin(text)
        if not common:
            break
        cut = len(common)
        text = "\n".join(ln[cut:] if ln.startswith(common) else "" for ln in text.split("\n"))
        removed += common
    if removed:
        notes.append(f"removed the margin {removed!r} that every line of a pasted document had")
    return text, notes


def _common_margin(text: str) -> str:
    """The margin (indentation, quote markers) every line with content shares ("" if none)."""
    common: str | None = None
    for ln in text.split("\n"):
        if not ln.strip(" \t>"):
            continue  # blank, or only a quote marker
        m = _MARGIN.match(ln).group(0)  # type: ignore[union-attr]
        if common is None:
            common = m
            continue
        k = 0
        while k < min(len(common), len(m)) and common[k] == m[k]:
            k += 1
        common = common[:k]
        if not common:
            return ""
    return common or ""


def read_text(path: Path | str) -> str:
    """A raw file's whole text through :func:`decode`."""
    return decode(Path(path).read_bytes())


def read_head(path: Path | str, limit: int = HEAD_BYTES) -> str:
    """The first ``limit`` bytes of a raw file as text (for detecting its tool)."""
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    return decode(data[:limit], final=len(data) <= limit)


def iter_text(path: Path | str, chunk: int = 1 << 20) -> Iterator[str]:
    """A raw file's lines (each with its ``\\n``; a last line without one was cut) decoded as
    :func:`decode` does, in bounded memory.
    """
    with open(path, "rb") as fh:
        data = fh.read(chunk)
        enc, skip = sniff_encoding(data)
        decoder = codecs.getincrementaldecoder(enc)("strict")
        data = data[skip:]
        offset = skip
        carry = ""
        nul_tail = ""
        seen_text = False
        while True:
            nxt = fh.read(chunk)
            last = not nxt
            try:
                text = decoder.decode(data, final=last)
            except UnicodeDecodeError as exc:
                raise DecodeError(
                    f"not {enc.upper()} text (invalid byte at offset {offset + exc.start}): "
                    "expected a tool's text or JSON output; a corrupted or binary file"
                ) from None
            offset += len(data)
            stripped = text.rstrip("\0")
            if (nul_tail and stripped) or "\0" in stripped:
                raise DecodeError("binary file (NUL bytes inside the text): expected a tool's text output")
            nul_tail += text[len(stripped) :]
            carry += stripped
            # a CR at the end of a chunk may be the first half of a CRLF: keep it for the next one
            hold = carry.endswith("\r") and not last
            body, carry = (carry[:-1], "\r") if hold else (carry, "")
            lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            rest = lines.pop()
            for line in lines:
                seen_text = seen_text or bool(line.strip())
                yield line + "\n"
            carry = rest + carry
            if last:
                break
            data = nxt
        if carry:
            seen_text = seen_text or bool(carry.strip())
            yield carry
        if not seen_text:
            raise DecodeError("empty file: the tool printed nothing (did it run?)")
