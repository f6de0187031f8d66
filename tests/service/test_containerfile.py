"""deploy/container/Containerfile, read without a container engine (none runs here or in
CI, so the image itself is never built by the tests): what it copies exists and is not
ignored, it runs as the unprivileged user the Kubernetes manifest expects, its state is a
volume, its health check asks the port config/service.toml listens on, and its entry point
is `regime-trader run`. The health check's own code is run against a local stand-in."""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTAINERFILE = ROOT / "deploy" / "container" / "Containerfile"
IGNORE = CONTAINERFILE.with_name("Containerfile.dockerignore")
UID = "10001"  # the Kubernetes manifest's runAsUser
STATE_DIR, CONFIG_DIR = "/var/lib/regime-trader", "/etc/regime-trader"

Instruction = tuple[str, str]


def instructions() -> list[Instruction]:
    """(KEYWORD, arguments), continuation lines joined, comments dropped."""
    lines = [ln for ln in CONTAINERFILE.read_text().splitlines() if not ln.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    return [(k.upper(), a.strip()) for k, _, a in (ln.strip().partition(" ")
            for ln in joined.splitlines() if ln.strip())]


def stages() -> list[list[Instruction]]:
    found: list[list[Instruction]] = []
    for keyword, args in instructions():
        if keyword == "FROM":
            found.append([])
        found[-1].append((keyword, args))
    return found


def final(keyword: str) -> list[str]:
    return [args for k, args in stages()[-1] if k == keyword]


def exec_form(args: str) -> list[str]:
    words = json.loads(args)
    assert isinstance(words, list), args
    return [str(w) for w in words]


def copy_sources(args: str) -> list[str]:
    words = [w for w in args.split() if not w.startswith("--")]
    return words[:-1]


def ignored(path: str) -> bool:
    """Docker's rule for a whitelist ignore file: the last pattern matching the path or
    one of its parents decides."""
    verdict = False
    for raw in IGNORE.read_text().splitlines():
        pattern = raw.strip()
        if not pattern or pattern.startswith("#"):
            continue
        keep, pattern = pattern.startswith("!"), pattern.lstrip("!")
        parts = path.strip("/").split("/")
        if pattern.startswith("**/"):  # at any depth: one name of the path
            matched = any(fnmatch.fnmatch(part, pattern[3:]) for part in parts)
        else:  # from the root: the path or one of its parents
            matched = any(fnmatch.fnmatch("/".join(parts[: i + 1]), pattern)
                          for i in range(len(parts)))
        if matched:
            verdict = not keep
    return verdict


def test_both_stages_are_debian_slim_and_the_wheel_is_built_from_the_checkout() -> None:
    build, _ = stages()
    assert [args for k, args in build if k == "FROM"] == ["python:3.11-slim-bookworm AS build"]
    assert final("FROM") == ["python:3.11-slim-bookworm"]
    assert any("pip wheel" in a and a.endswith(" .") for k, a in build if k == "RUN")
    installs = [a for a in final("RUN") if "pip install" in a]
    assert installs and all("--no-index" in a and "from=build" in a for a in installs)


def test_every_copy_source_exists_and_is_sent_to_the_builder() -> None:
    sources = [s for k, a in instructions() if k == "COPY" and "--from" not in a
               for s in copy_sources(a)]
    assert {"pyproject.toml", "service", "config/"} <= set(sources)
    for source in sources:
        assert (ROOT / source).exists(), source
        assert not ignored(source), f"{IGNORE.name} leaves {source} out of the context"
    assert ignored(".venv") and ignored("service/__pycache__")


def test_it_runs_as_the_unprivileged_user_10001() -> None:
    assert final("USER") == [f"{UID}:{UID}"]
    [adduser] = [a for a in final("RUN") if "useradd" in a]
    assert f"--uid {UID}" in adduser and adduser.rstrip().split()[-1] == "regime"


def test_the_state_is_a_volume_the_program_is_told_about_and_the_user_owns() -> None:
    assert exec_form(final("VOLUME")[0]) == [STATE_DIR]
    assert f"STATE_DIRECTORY={STATE_DIR}" in " ".join(final("ENV")).split()
    assert any("-o regime" in a and STATE_DIR in a for a in final("RUN"))


def test_the_entry_point_is_regime_trader_run_with_the_copied_config_folder() -> None:
    """`regime-trader` as the entry point, `run --config` as the command, so that other
    commands (and the Kubernetes manifest's args, which start with "run") replace CMD."""
    [program] = exec_form(final("ENTRYPOINT")[0])
    assert program.endswith("/bin/regime-trader") and program.startswith("/")
    assert exec_form(final("CMD")[0]) == ["run", "--config", f"{CONFIG_DIR}/service.toml"]
    assert f"config/ {CONFIG_DIR}/" in final("COPY")


def listen() -> tuple[str, int]:
    settings = tomllib.loads((ROOT / "config" / "service.toml").read_text())
    host, _, port = settings["http"]["listen"].rpartition(":")
    return host, int(port)


def health_check() -> list[str]:
    [args] = final("HEALTHCHECK")
    return exec_form(args[args.index("CMD ") + 4:])


def test_the_health_check_and_the_exposed_port_agree_with_the_shipped_settings() -> None:
    host, port = listen()
    command = health_check()
    assert command[:2] == ["python3", "-c"]
    assert f"'http://{host}:{port}/healthz'" in command[2]
    assert final("EXPOSE") == [str(port)]


class Health(BaseHTTPRequestHandler):
    status = 200

    def do_GET(self) -> None:
        self.send_response(self.status if self.path == "/healthz" else 404)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet: not the test's output


@pytest.fixture
def stand_in() -> Iterator[HTTPServer]:
    server = HTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("status", "healthy"), [(200, True), (503, False)])
def test_the_health_check_passes_on_200_and_fails_on_503(
    stand_in: HTTPServer, status: int, healthy: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Health, "status", status)
    host, port = listen()
    code = health_check()[2].replace(f"{host}:{port}", f"127.0.0.1:{stand_in.server_port}")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30)
    assert (result.returncode == 0) == healthy, result.stderr
