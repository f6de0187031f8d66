"""Removing keys from text: not only a whole key, but any run of PIECE characters of one.

An error body cut mid-key, or echoing part of one, must keep no piece of it; the log
processor (service/logs.py) and the Alpaca client both pass text through `scrub`.
"""

from __future__ import annotations

from collections.abc import Iterable

PIECE = 6  # no run of this many characters of a key may be written anywhere
SCRUBBED = "[REDACTED]"


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` with every stretch that repeats `PIECE` or more characters of a secret
    replaced: a body cut mid-key, or echoing part of one, keeps no piece of it."""
    covered = bytearray(len(text))
    for secret in secrets:
        size = min(PIECE, len(secret))
        for start in range(len(secret) - size + 1 if size else 0):
            _mark(text, secret[start:start + size], covered)
    return _replace_runs(text, covered) if any(covered) else text


def _mark(text: str, piece: str, covered: bytearray) -> None:
    found = text.find(piece)
    while found >= 0:
        covered[found:found + len(piece)] = b"\x01" * len(piece)
        found = text.find(piece, found + 1)


def _replace_runs(text: str, covered: bytearray) -> str:
    out, index = [], 0
    while index < len(text):
        if not covered[index]:
            out.append(text[index])
            index += 1
            continue
        out.append(SCRUBBED)
        while index < len(text) and covered[index]:
            index += 1
    return "".join(out)
