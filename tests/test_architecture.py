"""The layout as a specification (docs/architecture.md): imports run one way, the tools
that measure and prove stay apart from runtime code, one package owns the database, and
every module is small enough to read whole."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("service", "gpu_backend", "regime_model")
MAX_MODULE_LINES = 300
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """import-linter's own command over the packages under `root`, with pyproject's contracts."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def test_the_import_contracts_hold() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "bad_import", "contract"),
    [
        ("regime_model/hmm.py", "import gpu_backend.numpy_backend", "Imports run one way"),
        ("service/worker/trader.py", "import service.bench.chaos", "Measurement and proof"),
    ],
)
def test_a_broken_contract_fails_the_check(
    tmp_path: Path, module: str, bad_import: str, contract: str
) -> None:
    """The check can fail: the same tree with one forbidden import is refused, by name."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / module
    target.write_text(target.read_text() + f"\n{bad_import}  # noqa\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0 and "BROKEN" in result.stdout, result.stdout
    assert contract in result.stdout


def test_only_the_state_package_and_the_simulated_broker_use_sqlite() -> None:
    """One owner of the database: the simulated broker keeps its own book, a stand-in for
    a remote broker's, and no other module opens SQLite."""
    owners = ("service/state/", "service/broker/sim")
    runs_no_sql = {  # imports sqlite3 for a reason other than opening a database
        "service/worker/fault_points.py": "raises an sqlite3 error: an injected failed write",
    }
    users = [str(p.relative_to(ROOT)) for p in modules() if _imports(p, "sqlite3")]
    assert [u for u in users if not u.startswith(owners) and u not in runs_no_sql] == []


def test_every_module_is_at_most_300_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in modules()
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def _imports(path: Path, name: str) -> bool:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == name for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == name:
            return True
    return False
