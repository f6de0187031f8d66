"""A user's CSV file as records, each with the line it starts on; what cannot be a CSV
of bars is refused with the file, the line and (where there is one) the column.

- Only a regular file is read: a directory cannot be, and opening a FIFO would block the
  worker until something writes to it.
- The text must be UTF-8; a byte-order mark at the start is dropped. A byte that is not
  UTF-8, or a NUL character (binary data, UTF-16 or UTF-32 text), refuses the file.
- A line over MAX_LINE_CHARS is refused before it is read whole, and a field over
  FIELD_SIZE_LIMIT by the csv module, whose (process-wide) limit is set explicitly.
- Line endings may be LF, CRLF or CR. Blank lines are skipped.
"""

from __future__ import annotations

import csv
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from service.market.base import UnusableDataError

FIELD_SIZE_LIMIT = 128 * 1024  # characters; a bar's field is a few dozen at most
MAX_LINE_CHARS = 1024 * 1024  # bounds the memory one line can take before csv sees it
_UNREADABLE = re.compile("[\x00\udc80-\udcff]")  # NUL, or a byte surrogateescape kept
_UTF16_MARKS = ("\udcff\udcfe", "\udcfe\udcff")  # FF FE / FE FF: a UTF-16 or -32 BOM
_SAVE_AS = "save it as UTF-8 text (e.g. `iconv -t UTF-8`)"


def records(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line the record starts on, cells) of every non-blank record, header included."""
    csv.field_size_limit(FIELD_SIZE_LIMIT)  # explicit: the default is not a documented promise
    with _open_regular(path) as handle:
        yield from _parse(str(path), csv.reader(_checked_lines(str(path), handle)))


def _parse(file: str, reader: Iterator[list[str]]) -> Iterator[tuple[int, list[str]]]:
    start = 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise UnusableDataError(
                file, f"not readable as CSV: {error}; fix or remove this record", start
            ) from None
        if any(cell.strip() for cell in cells):
            yield start, cells
        start = reader.line_num + 1  # type: ignore[attr-defined]  # csv.reader has it


def _open_regular(path: Path) -> TextIO:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block the open
    except FileNotFoundError:
        raise UnusableDataError(
            str(path), f"no such file; put one CSV per symbol in {path.parent} named "
            "<SYMBOL>.csv") from None
    except OSError as error:  # permissions, a symlink loop...: the path itself is wrong
        raise UnusableDataError(
            str(path), f"cannot open: {error.strerror}; check the path and its permissions"
        ) from None
    kind = _kind(os.fstat(fd).st_mode)
    if kind is not None:
        os.close(fd)
        raise UnusableDataError(str(path), f"{kind}; give the path of a CSV file")
    os.set_blocking(fd, True)
    return open(fd, encoding="utf-8-sig", errors="surrogateescape", newline="")


def _kind(mode: int) -> str | None:
    """Why a file of this mode cannot be read as a CSV file; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory, not a CSV file"
    return "not a regular file (a FIFO, socket or device)"


def _checked_lines(file: str, handle: TextIO) -> Iterator[str]:
    number = 0
    while line := handle.readline(MAX_LINE_CHARS + 1):
        number += 1
        if len(line) > MAX_LINE_CHARS:
            raise UnusableDataError(
                file, f"a line longer than {MAX_LINE_CHARS} characters: this is not a CSV "
                "of bars; check the file", number)
        bad = _UNREADABLE.search(line)
        if bad is not None:
            raise UnusableDataError(file, _unreadable(line, bad.start()), number,
                                    bad.start() + 1)
        yield line


def _unreadable(line: str, at: int) -> str:
    char = line[at]
    if char == "\x00":
        return f"a NUL character: the file is binary, or UTF-16/UTF-32 text; {_SAVE_AS}"
    if at == 0 and line.startswith(_UTF16_MARKS):
        return f"a UTF-16 or UTF-32 byte-order mark: the file is not UTF-8; {_SAVE_AS}"
    byte = ord(char) - 0xDC00
    return f"byte 0x{byte:02x} is not UTF-8 (Latin-1 or Windows-1252 text?); {_SAVE_AS}"
