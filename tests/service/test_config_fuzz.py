"""Generated input for the two configuration parsers: whatever a file holds, the loader
accepts it as valid or refuses it with a ConfigError naming the file; nothing else
escapes and nothing hangs.

The CI runs use a fixed seed (derandomize) so a failure reproduces; the slow runs try
20,000 inputs each.
"""

from __future__ import annotations

import math
import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.config_loader import (
    ConfigError,
    LoadedConfig,
    load_config,
    load_instruments,
    parse_model,
    resolve_beside,
)
from service.instruments import SYMBOL_RE, InstrumentsFile
from service.settings import ACCOUNT_NAME_RE, ServiceSettings

HANG_S = 60  # one input parsed for this long is a hang, not slowness
CI = settings(max_examples=500, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SLOW = settings(CI, max_examples=20_000)

GOOD_SETTINGS = '[[accounts]]\nname = "alpha"\n\n[[accounts]]\nname = "beta"\n'
GOOD_INSTRUMENTS = '[accounts.alpha]\nsymbols = ["SPY", "QQQ"]\n'
TWO_ACCOUNTS = ServiceSettings.model_validate({"accounts": [{"name": "alpha"}, {"name": "beta"}]})

WEIRD_VALUES = [
    "inf", "-inf", "nan", "+nan", "1e308", "1e400", "-0.0", "0", "-1", "9" * 30, "9" * 5000,
    "0x" + "f" * 40, "true", '""', '"\\u0000"', '"IWM\\n"', '"alpha\\n"', '"99999999999999d"',
    '"1m\\n"', '"-1m"', "[]", "[[]]", "{}", "{a = 1}", "9999-12-31T23:59:59-05:00",
    "0001-01-01T00:00:00+05:00", "1979-05-27", "07:32:00", '"\\ud7ff"', "'\u00e9'",
    '"' + "x" * 5000 + '"', "[" * 2000 + "]" * 2000, "{a=" * 900 + "1" + "}" * 900,
]
KEYS = [
    "instruments_file", "state_dir", "interval", "kind", "seed", "start", "pace_s", "mode",
    "starting_cash", "heartbeat_s", "bars_per_year", "window", "states", "symbols", "name",
    "poll_s", "quiet_ms", "batch_size", "url_override", "replay_start", "timeout_s",
]
TABLES = [
    "[market]", "[market.synthetic]", "[market.alpaca]", "[clock]", "[broker.sim]",
    "[broker.alpaca.http]", "[model]", "[strategy]", "[rotation]", "[reload]",
    "[supervision]", "[[accounts]]", "[accounts.alpha]", "[accounts.beta]", "[logging]",
]
PUNCTUATION = ["\n", " = ", "[", "]", "{", "}", ",", '"', "'", '"""', "'''", "#", ".", "\\"]
ODD_BYTES = [b"\x00", b"\xef\xbb\xbf", b"\xff\xfe", b"\r", b"\r\n", b"\x80", b"\xed\xa0\x80"]


def _assignments() -> st.SearchStrategy[str]:
    return st.builds("{} = {}\n".format, st.sampled_from(KEYS), st.sampled_from(WEIRD_VALUES))


def _fragments() -> st.SearchStrategy[bytes]:
    text = st.one_of(
        st.sampled_from(TABLES).map(lambda t: t + "\n"),
        _assignments(),
        st.sampled_from(PUNCTUATION + WEIRD_VALUES),
        st.text(max_size=20),
    )
    return st.one_of(text.map(str.encode), st.sampled_from(ODD_BYTES))


def _mutated(good: str) -> st.SearchStrategy[bytes]:
    """A valid file with weird lines spliced in: it mostly parses, so validation runs."""
    def splice(lines: list[str], where: int) -> bytes:
        head, tail = good[:where], good[where:]
        return (head + "".join(lines) + tail).encode("utf-8", "surrogatepass")

    lines = st.lists(st.one_of(_assignments(), st.sampled_from(TABLES).map(lambda t: t + "\n")),
                     max_size=6)
    return st.builds(splice, lines, st.integers(0, len(good)))


def _nesting() -> st.SearchStrategy[bytes]:
    def nest(depth: int, opener: str, closed: bool, prefix: str) -> bytes:
        closer = {"[": "]", "{a = ": "}"}[opener] * depth if closed else ""
        return f"{prefix}x = {opener * depth}1{closer}\n".encode()

    return st.builds(nest, st.integers(1, 3000), st.sampled_from(["[", "{a = "]),
                     st.booleans(), st.sampled_from(["", "[accounts.alpha]\n", "[market]\n"]))


def file_contents(good: str) -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.binary(max_size=400),
        st.lists(_fragments(), max_size=30).map(b"".join),
        _mutated(good),
        _nesting(),
        st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
    )


@contextmanager
def hang_guard() -> Iterator[None]:
    """A parse that runs HANG_S seconds fails the test instead of stalling the suite."""
    def hung(signum: int, frame: FrameType | None) -> None:
        raise AssertionError(f"one input took more than {HANG_S}s to parse")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(HANG_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def judge(load: Callable[[], object]) -> object:
    """The loaded object, or the ConfigError that refused it, with a message per problem."""
    try:
        with hang_guard():
            return load()
    except ConfigError as error:
        assert error.problems and all(p.message and p.key for p in error.problems), error
        return error


def named_file(settings_path: Path, error: ConfigError) -> str:
    """The file a refusal must name: service.toml, or, when that file is valid, the
    instruments file it points to."""
    try:
        settings = parse_model(settings_path, ServiceSettings)
    except ConfigError:
        return str(settings_path)
    return str(resolve_beside(Path(os.path.realpath(settings_path)), settings.instruments_file))


def assert_finite(value: object) -> None:
    if isinstance(value, float):
        assert math.isfinite(value), value
    elif isinstance(value, dict):
        for child in value.values():
            assert_finite(child)
    elif isinstance(value, list | tuple):
        for child in value:
            assert_finite(child)


def check_instruments(folder: Path, content: bytes) -> None:
    path = folder / "instruments.toml"
    path.write_bytes(content)
    loaded = judge(lambda: load_instruments(path, TWO_ACCOUNTS))
    if isinstance(loaded, ConfigError):
        assert all(p.file == str(path) for p in loaded.problems), loaded
    else:
        assert isinstance(loaded, InstrumentsFile)
        assert set(loaded.accounts) <= {"alpha", "beta"}
        assert all(SYMBOL_RE.fullmatch(s) for a in loaded.accounts for s in loaded.symbols(a))


def check_settings(folder: Path, content: bytes) -> None:
    path = folder / "service.toml"
    (folder / "instruments.toml").write_text(GOOD_INSTRUMENTS)
    path.write_bytes(content)
    loaded = judge(lambda: load_config(path))
    if isinstance(loaded, ConfigError):
        assert {p.file for p in loaded.problems} == {named_file(path, loaded)}, loaded
    else:
        assert isinstance(loaded, LoadedConfig)
        assert_finite(loaded.settings.model_dump())
        assert all(ACCOUNT_NAME_RE.fullmatch(a) for a in loaded.settings.account_names)
        assert loaded.settings.market.bar_interval.total_seconds() > 0
        assert loaded.config_hash


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@CI
@given(content=file_contents(GOOD_INSTRUMENTS))
def test_any_instruments_file_is_valid_or_refused_naming_it(folder: Path, content: bytes) -> None:
    check_instruments(folder, content)


@CI
@given(content=file_contents(GOOD_SETTINGS))
def test_any_service_toml_is_valid_or_refused_naming_it(folder: Path, content: bytes) -> None:
    check_settings(folder, content)


@pytest.mark.slow
@SLOW
@given(content=file_contents(GOOD_INSTRUMENTS))
def test_20000_instruments_files(folder: Path, content: bytes) -> None:
    check_instruments(folder, content)


@pytest.mark.slow
@SLOW
@given(content=file_contents(GOOD_SETTINGS))
def test_20000_service_tomls(folder: Path, content: bytes) -> None:
    check_settings(folder, content)
