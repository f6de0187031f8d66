"""docs/logs.md lists every event the code can emit, with its levels and fields.

The events are found statically: an AST walk over service/, gpu_backend/ and
regime_model/ finds every call `.debug/.info/.warning/.error/.critical/.exception(...)` on a
structlog logger (a name bound to `get_logger(...)` or to a logger's `.bind(...)`), takes
its first argument as the event name, the method as its level and the keyword arguments as
its fields. An event name must be a string literal, so that this walk (and `grep`) finds it.

A failure names each event missing from the document, with a row to paste, and each
documented event the code no longer emits.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "logs.md"
PACKAGES = ("service", "gpu_backend", "regime_model")
METHOD_LEVELS = {
    "debug": "debug", "info": "info", "msg": "info", "warning": "warning", "warn": "warning",
    "error": "error", "exception": "error", "critical": "critical", "fatal": "critical",
}  # fmt: skip
LOGGER_FACTORIES = {"get_logger", "bind"}
# Events that have long existed: the walk must find them, or it is the walk that is broken.
KNOWN = {"service.started", "service.stopped", "update.completed", "worker.stderr",
         "config.rejected", "backend.selected", "account.parked"}  # fmt: skip
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|([^|]*)\|([^|]*)\|([^|]*)\|\s*$")
NAME = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+")


@dataclass
class Event:
    levels: set[str] = field(default_factory=set)
    fields: set[str] = field(default_factory=set)
    where: list[str] = field(default_factory=list)


@dataclass
class Catalogue:
    events: dict[str, Event] = field(default_factory=lambda: defaultdict(Event))
    problems: list[str] = field(default_factory=list)


def _is_factory(node: ast.expr) -> bool:
    """`structlog.get_logger(...)`, `get_logger(...)`, `<logger>.bind(...)`."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in LOGGER_FACTORIES


def _target_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None  # self._log = ...


def logger_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if _is_factory(node.value):
                names.update(n for n in map(_target_name, targets) if n)
    return names


def _is_logger(node: ast.expr, names: set[str]) -> bool:
    if _is_factory(node):
        return True
    return _target_name(node) in names if isinstance(node, ast.Name | ast.Attribute) else False


def _fields(call: ast.Call, method: str) -> set[str]:
    found = {"exception"} if method == "exception" else set()
    for keyword in call.keywords:
        if keyword.arg == "exc_info":
            found.add("exception")  # dict_tracebacks renders it as the `exception` field
        elif keyword.arg is not None:
            found.add(keyword.arg)
        elif isinstance(keyword.value, ast.Dict):  # **{"from": ...}: a keyword Python reserves
            found.update(k.value for k in keyword.value.keys
                         if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return found


def scan_source(source: str, where: str, catalogue: Catalogue) -> None:
    tree = ast.parse(source)
    names = logger_names(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        method = node.func.attr
        if method not in METHOD_LEVELS or not _is_logger(node.func.value, names):
            continue
        first = node.args[0] if node.args else None
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            catalogue.problems.append(f"{where}:{node.lineno}: the event name is not a string "
                                      "literal; write it as one so docs/logs.md can list it")
            continue
        event = catalogue.events[first.value]
        event.levels.add(METHOD_LEVELS[method])
        event.fields |= _fields(node, method)
        event.where.append(f"{where}:{node.lineno}")


def scan_code() -> Catalogue:
    catalogue = Catalogue()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            scan_source(path.read_text(), str(path.relative_to(ROOT)), catalogue)
    return catalogue


def read_doc() -> dict[str, tuple[set[str], set[str]]]:
    """Event name -> (levels, fields) from docs/logs.md's table rows."""
    rows: dict[str, tuple[set[str], set[str]]] = {}
    for line in DOC.read_text().splitlines():
        match = ROW.match(line)
        if match and match.group(1) != "event":
            name, levels, _, fields = match.groups()
            assert name not in rows, f"docs/logs.md lists {name} twice"
            rows[name] = (set(re.findall(r"[a-z]+", levels)) & set(METHOD_LEVELS.values()),
                          set(re.findall(r"`([^`]+)`", fields)))  # fmt: skip
    return rows


@pytest.fixture(scope="module")
def code() -> Catalogue:
    return scan_code()


@pytest.fixture(scope="module")
def doc() -> dict[str, tuple[set[str], set[str]]]:
    return read_doc()


def _row(name: str, event: Event) -> str:
    fields = ", ".join(f"`{f}`" for f in sorted(event.fields)) or "-"
    return (f"  | `{name}` | {', '.join(sorted(event.levels))} | (when) | {fields} |"
            f"   <- {', '.join(event.where)}")


def test_the_walk_finds_the_events_everyone_knows(code: Catalogue) -> None:
    assert set(code.events) >= KNOWN, sorted(KNOWN - set(code.events))
    assert len(code.events) >= 40
    assert code.events["update.completed"].levels == {"info"}
    assert {"seq", "bar_time", "timings_ms"} <= code.events["update.completed"].fields


def test_the_walk_sees_loggers_levels_fields_and_refuses_names_it_cannot_read() -> None:
    source = '''
import structlog
log = structlog.get_logger("x")
other = log.bind(account="a")
def f(name, np):
    log.info("a.one", seq=1, **{"from": 2})
    other.warning("a.two", exc_info=True)
    structlog.get_logger().exception("a.three")
    np.log(2.0)
    log.error(name)
'''
    catalogue = Catalogue()
    scan_source(source, "x.py", catalogue)
    got = {n: (e.levels, e.fields) for n, e in catalogue.events.items()}
    assert got == {"a.one": ({"info"}, {"seq", "from"}), "a.two": ({"warning"}, {"exception"}),
                   "a.three": ({"error"}, {"exception"})}  # fmt: skip
    assert catalogue.problems == ["x.py:10: the event name is not a string literal; write it "
                                  "as one so docs/logs.md can list it"]  # fmt: skip


def test_every_event_name_is_a_literal_of_the_dotted_form(code: Catalogue) -> None:
    assert code.problems == []
    odd = sorted(name for name in code.events if not NAME.fullmatch(name))
    assert odd == [], f"event names are lower-case `area.what`: {odd}"


def test_every_emitted_event_is_documented(code: Catalogue, doc: dict[str, object]) -> None:
    missing = sorted(set(code.events) - set(doc))
    rows = "\n".join(_row(name, code.events[name]) for name in missing)
    assert not missing, f"docs/logs.md lacks {len(missing)} event(s); add a row each:\n{rows}"


def test_every_documented_event_is_still_emitted(code: Catalogue, doc: dict[str, object]) -> None:
    stale = sorted(set(doc) - set(code.events))
    assert not stale, f"docs/logs.md lists events the code no longer emits: {stale}"


def test_each_documented_row_has_the_code_s_levels_and_fields(
    code: Catalogue, doc: dict[str, tuple[set[str], set[str]]]
) -> None:
    wrong = []
    for name in sorted(set(code.events) & set(doc)):
        event, (levels, fields) = code.events[name], doc[name]
        if levels != event.levels:
            wrong.append(f"{name}: levels {sorted(levels)} in the doc, {sorted(event.levels)} "
                         f"in the code ({', '.join(event.where)})")
        if not event.fields <= fields:
            wrong.append(f"{name}: fields {sorted(event.fields - fields)} missing from the doc")
    assert not wrong, "\n".join(wrong)
