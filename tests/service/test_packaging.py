"""Packaging, as a user gets it: `python -m build` makes the sdist and then the wheel FROM
the sdist (so the sdist is complete); the wheel, installed into a clean venv outside the
checkout, answers --version, validates and runs its embedded default.

Offline: --no-isolation builds with this venv's setuptools, pip installs the one wheel
with --no-deps --no-index, and the new venv reaches the dependencies through a .pth file
naming this venv's site-packages (a folder named in a .pth is not scanned for .pth files
of its own, so the editable install's finder stays off: `service` is the wheel's).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

from service.state.store import StateStore

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
# Data files the installed package reads through importlib.resources.
DATA_FILES = {
    "service/defaults/service.toml",
    "service/defaults/instruments.toml",
    "service/http/static/dashboard.html",
    "service/web/charts.js",
    "service/web/vendor/uplot/uPlot.iife.min.js",
}
WHERE_FROM = (
    "import importlib.metadata as m, service; "
    "print(service.__file__); print(m.distribution('regime-trader').locate_file(''))"
)


def run(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def build(outdir: Path) -> Path:
    """The sdist, then the wheel built from it; the wheel's path."""
    built = run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(outdir), str(ROOT)],
        cwd=ROOT,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert len(list(outdir.glob("regime_trader-*.tar.gz"))) == 1, built.stdout[-3000:]
    [wheel] = outdir.glob("regime_trader-*.whl")
    return wheel


def install(wheel: Path, venv: Path) -> Path:
    """A clean venv with the wheel alone installed, and this venv's packages on its path."""
    made = run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=venv.parent)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q"]
    offline = ["--no-deps", "--no-index", "--disable-pip-version-check"]
    installed = run([*pip, *offline, str(wheel)], cwd=venv.parent, timeout=300)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    [site] = (venv / "lib").glob("python3.*/site-packages")
    (site / "test-venv-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return site


def test_the_wheel_built_from_the_sdist_installs_and_runs_its_embedded_default(
    tmp_path: Path,
) -> None:
    wheel = build(tmp_path / "dist")
    with zipfile.ZipFile(wheel) as archive:
        missing = DATA_FILES - set(archive.namelist())
    assert not missing, f"not in the wheel: {sorted(missing)}"

    site = install(wheel, tmp_path / "venv")
    home, program = tmp_path / "home", tmp_path / "venv" / "bin" / "regime-trader"
    home.mkdir()
    env = {"PATH": os.defpath, "HOME": str(home), "XDG_RUNTIME_DIR": "/tmp"}  # no keys

    where = run([str(tmp_path / "venv" / "bin" / "python"), "-c", WHERE_FROM], home, env)
    assert where.returncode == 0, where.stderr
    module, distribution = where.stdout.splitlines()
    assert Path(module) == site / "service" / "__init__.py", where.stdout  # not the checkout
    assert Path(distribution) == site, where.stdout

    version = run([str(program), "--version"], home, env)
    assert (version.returncode, version.stdout.strip()) == (0, VERSION), version.stderr

    check = run([str(program), "check-config"], home, env)
    assert check.returncode == 0, check.stdout + check.stderr
    valid = json.loads(check.stdout.splitlines()[-1])
    assert valid["settings"] == str(site / "service" / "defaults" / "service.toml"), valid

    daemon = run(
        [str(program), "run", "--stop-after", "2", "--state-dir", str(tmp_path / "state")],
        home,
        env,
        timeout=180,
    )
    assert daemon.returncode == 0, daemon.stdout[-3000:] + daemon.stderr[-3000:]
    # The README's first command, with a stop: the shipped default's two accounts of eight
    # instruments, each update logged and checkpointed
    events = [json.loads(line) for line in daemon.stdout.splitlines() if line.startswith("{")]
    for account in ("alpha", "beta"):
        updates = [e for e in events
                   if e.get("event") == "update.completed" and e.get("account") == account]
        assert [(u["seq"], u["instruments"]) for u in updates] == [(1, 8), (2, 8)], account
        assert checkpoint_seqs(tmp_path / "state" / f"{account}.sqlite") == [1, 2]


def checkpoint_seqs(database: Path) -> list[int]:
    store = StateStore(database)
    try:
        return store.checkpoint_seqs()
    finally:
        store.close()
