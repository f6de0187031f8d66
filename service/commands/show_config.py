"""`regime-trader show-config`: the configuration the daemon would run with.

Every setting with its default filled in (the validated settings model, dumped), the
instruments file, both files' paths, the state directory it resolves to and the config
hash that checkpoints record. Keys are never in the settings (service/secrets.py reads
them from the environment or key files), but a value that might hold one is masked all
the same: any field whose name suggests a secret, a URL's user and password, a query
parameter named like a secret, and the path of a webhook URL (where services put tokens).
Text is TOML-like; `--json` prints one JSON document. Exit 78 on an invalid configuration.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from service.commands.output import (
    Document,
    add_output_flags,
    config_or_explain,
    emit,
    logs_to_stderr,
)
from service.exit_codes import EX_CONFIG

MASK = "[MASKED]"
SECRET_NAME = re.compile(r"secret|passw|token|credential|api_?key|key_id|private|auth|signature",
                         re.IGNORECASE)  # fmt: skip
PATH_IS_SECRET = re.compile(r"webhook", re.IGNORECASE)  # e.g. hooks.slack.com/services/T/B/XYZ


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "show-config", help="the effective configuration: every default filled in, secrets masked"
    )
    parser.add_argument("--config", type=Path, help="service.toml (default: the embedded default)")
    parser.add_argument("--state-dir", type=Path, help="as `run` would be given it")
    add_output_flags(parser, "the configuration")
    parser.set_defaults(handler=handler)


def handler(args: argparse.Namespace) -> int:
    from service.state_dir import resolve_state_dir  # noqa: PLC0415

    logs_to_stderr()
    config = config_or_explain(args.config)
    if config is None:
        return EX_CONFIG
    effective = {
        "settings_file": str(config.settings_path),
        "instruments_file": str(config.instruments_path),
        "state_dir": str(resolve_state_dir(args.state_dir, config)),
        "config_hash": config.config_hash,
        "settings": mask(config.settings.model_dump(mode="json")),
        "instruments": mask(config.instruments.model_dump(mode="json")),
    }
    emit(effective, args, toml_lines)
    return 0


def mask(value: Any, name: str = "") -> Any:
    """`value` with every secret-looking field, URL credential and webhook path masked."""
    if isinstance(value, Mapping):
        return {key: mask(item, str(key)) for key, item in value.items()}
    if isinstance(value, list):
        return [mask(item, name) for item in value]
    if value is None:
        return None  # unset: nothing to hide, and "(not set)" says more than a mask
    if SECRET_NAME.search(name):
        return MASK
    if isinstance(value, str):
        return mask_url(value, hide_path=bool(PATH_IS_SECRET.search(name)))
    return value


def mask_url(text: str, hide_path: bool = False) -> str:
    parts = urlsplit(text)
    if not (parts.scheme and parts.netloc):
        return text  # not a URL
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{MASK}@{host}" if "@" in parts.netloc else host
    query = urlencode([(k, MASK if SECRET_NAME.search(k) else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)])  # fmt: skip
    if hide_path:
        return urlunsplit((parts.scheme, netloc, f"/{MASK}" if parts.path.strip("/") else "",
                           MASK if parts.query else "", ""))  # fmt: skip
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def toml_lines(effective: Document) -> list[str]:
    """TOML for a person: the paths and hash as comments, then each file's tables."""
    lines = [f"# {key}: {effective[key]}"
             for key in ("settings_file", "instruments_file", "state_dir", "config_hash")]
    lines += ["", "# ---- settings (every default filled in) ----"]
    lines += list(_table(effective["settings"], []))
    lines += ["", "# ---- instruments ----"]
    return lines + list(_table(effective["instruments"], []))


def _table(table: Mapping[str, Any], path: list[str]) -> Iterator[str]:
    simple = {k: v for k, v in table.items() if not _is_table(v) and not _is_table_list(v)}
    for key, value in simple.items():
        yield f"# {key} = (not set)" if value is None else f"{_key(key)} = {_value(value)}"
    for key, value in table.items():
        if _is_table(value):
            if not value or not all(map(_is_table, value.values())):  # else implied by its own
                yield from ["", f"[{'.'.join(map(_key, [*path, key]))}]"]
            yield from _table(value, [*path, key])
        elif _is_table_list(value):
            for item in value:
                yield from ["", f"[[{'.'.join(map(_key, [*path, key]))}]]"]
                yield from _table(item, [*path, key])


def _is_table(value: Any) -> bool:
    return isinstance(value, Mapping)


def _is_table_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(map(_is_table, value))


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value if v is not None) + "]"
    return json.dumps(value)  # strings quoted and escaped, as TOML's basic strings
