"""One meaning for every command's output flags, and quiet output off a terminal.

`--json` prints the result as ONE JSON document on stdout, and nothing else goes there (so
`... --json | jq` always works); `--out PATH` writes the same document to a file (indented,
for a person and for git); with neither, lines for a person. Both together do both. Logs
go to stderr (`logs_to_stderr`), so stdout holds the result alone. Progress is drawn only
when stderr is a terminal (`progress_at_tty`): pipes, logs and CI stay quiet.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from service.progress import show_progress

if TYPE_CHECKING:
    from service.config_loader import LoadedConfig

Document = Mapping[str, Any]
Progress = Callable[[int, int], None]
LIST_SHOWN = 8  # longer lists are counted, not printed, in the text summary


def add_output_flags(parser: argparse.ArgumentParser, what: str = "the result") -> None:
    parser.add_argument("--json", action="store_true",
                        help=f"print {what} as one JSON document on stdout (nothing else)")
    parser.add_argument("--out", type=Path, metavar="PATH", help=f"write {what} as JSON to PATH")


def emit(
    document: Document, args: argparse.Namespace,
    text: Callable[[Any], list[str]] | None = None,
) -> None:
    """The result where the flags say: the file, then stdout as JSON or as text."""
    if getattr(args, "out", None):
        write_json(args.out, document)
    if args.json:
        print(json.dumps(document), flush=True)
    else:
        print("\n".join((text or summary_lines)(document)), flush=True)


def write_json(path: Path, document: Document) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1) + "\n")


def summary_lines(document: Document) -> list[str]:
    """`key.sub: value` lines, long lists counted rather than printed."""
    return [f"{key}: {value}" for key, value in _flat(document, "")]


def _flat(value: Any, prefix: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            yield from _flat(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and len(value) > LIST_SHOWN:
        yield prefix, f"[{len(value)} items; --json or --out for all]"
    else:
        yield prefix, value if isinstance(value, str) else json.dumps(value)


def logs_to_stderr() -> None:
    """Log events go to stderr, as JSON lines or colour at a terminal: stdout is the result's."""
    from service.logs import configure_logging  # noqa: PLC0415 - structlog set-up on demand

    # "debug": no level filter, as structlog's default; none of these commands logs at debug,
    # and a filter would outlive the command in a test process and hide later tests' events.
    configure_logging("debug", "auto", stream=CurrentStderr())  # type: ignore[arg-type]


class CurrentStderr:
    """`sys.stderr` as it is at each write, not as it was when logging was set up: the
    commands also run inside tests, whose captured stderr is closed after each test while
    structlog's configuration (and its cached loggers) live on in the process."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()

    def fileno(self) -> int:
        return sys.stderr.fileno()


def progress_at_tty(label: str) -> Progress | None:
    """A progress line for long work when stderr is a terminal; None (quiet) otherwise."""
    return show_progress(label) if sys.stderr.isatty() else None


def config_or_explain(path: Path | None) -> LoadedConfig | None:
    """The configuration, or None after printing each problem to stderr (the command then
    exits 78, EX_CONFIG)."""
    from service.config_loader import ConfigError, load_config  # noqa: PLC0415 - pydantic

    try:
        return load_config(path)
    except ConfigError as error:
        for problem in error.problems:
            print(f"error: {problem}", file=sys.stderr)
        return None
