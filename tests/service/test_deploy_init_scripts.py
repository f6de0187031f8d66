"""The init-system files, exercised: systemd's own verifier on the unit, and the rc.d
script run against a stand-in of rc.subr that records the daemon(8) command it builds."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"

RC_SUBR_STANDIN = r"""
# A stand-in for FreeBSD's rc.subr: just enough to run one rc.d command and record it.
load_rc_config() { :; }
err() { echo "err $1: $2" >&2; exit "$1"; }
su() { shift 2; shift; sh -c "$1"; }      # su -m USER -c CMD: run CMD as ourselves
install() { echo "install $*" >> "$RECORD"; }
run_rc_command() {
    case "$1" in
    start)
        if [ -n "$start_precmd" ]; then $start_precmd || exit 1; fi
        echo "exec $command $command_args" >> "$RECORD" ;;
    reload) $reload_cmd ;;
    esac
}
"""


def test_systemd_analyze_verifies_the_unit(tmp_path: Path) -> None:
    """`systemd-analyze verify` needs the executables to exist: point them at this venv."""
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is missing: .ci/run installs the systemd package"
    program = Path(sys.executable).with_name("regime-trader")
    unit = (DEPLOY / "systemd" / "regime-trader.service").read_text()
    for line in unit.splitlines():
        if line.startswith(("ExecStart=", "ExecStartPre=")):
            path = line.split("=", 1)[1].split()[0]
            unit = unit.replace(path, str(program))
    target = tmp_path / "regime-trader.service"
    target.write_text(unit)
    result = subprocess.run(
        [analyze, "verify", str(target)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "regime-trader.service" not in result.stderr, result.stderr


def rc_script(tmp_path: Path, program: Path) -> Path:
    (tmp_path / "rc.subr").write_text(RC_SUBR_STANDIN)
    script = (DEPLOY / "freebsd" / "regime_trader").read_text()
    script = script.replace(". /etc/rc.subr", f". {tmp_path / 'rc.subr'}")
    script = script.replace('run_dir="/var/run/${name}"', f'run_dir="{tmp_path}/run"')
    path = tmp_path / "regime_trader"
    path.write_text(script.replace("/usr/local/regime-trader/venv/bin/regime-trader", str(program)))
    return path


PROGRAM = Path(sys.executable).with_name("regime-trader")
SHIPPED_CONFIG = DEPLOY.parent / "config" / "service.toml"


def run_rc(
    tmp_path: Path,
    command: str,
    config: Path = SHIPPED_CONFIG,
) -> subprocess.CompletedProcess[str]:
    """The rc.d script with the stand-in rc.subr, as `service regime_trader COMMAND`."""
    env = {
        "PATH": "/usr/bin:/bin",
        "RECORD": str(tmp_path / "record"),
        "regime_trader_config": str(config),
        "regime_trader_keys_file": str(tmp_path / "none.env"),
    }
    return subprocess.run(
        ["sh", str(rc_script(tmp_path, PROGRAM)), command],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_rc_start_checks_the_config_then_runs_daemon8_with_both_pidfiles(tmp_path: Path) -> None:
    result = run_rc(tmp_path, "start")
    assert result.returncode == 0, result.stderr
    exec_line = next(
        ln for ln in (tmp_path / "record").read_text().splitlines() if ln.startswith("exec ")
    )
    words = exec_line.split()[1:]
    assert words[:2] == ["/usr/sbin/daemon", "-P"]
    assert words[words.index("-p") + 1] == f"{tmp_path}/run/child.pid"
    assert words[words.index("-R") + 1] == "5" and words[words.index("-u") + 1] == "regime"
    assert "-S" in words and words[words.index("-T") + 1] == "regime_trader"
    assert words[words.index(str(PROGRAM)) + 1 :] == [
        "run",
        "--config",
        str(SHIPPED_CONFIG),
        "--state-dir",
        "/var/db/regime_trader",
    ]


def test_rc_start_refuses_a_bad_config_with_78(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[[accounts]\n")
    result = run_rc(tmp_path, "start", config=bad)
    assert result.returncode == 78 and "not starting" in result.stderr


def test_rc_reload_sends_sighup_to_the_child_not_to_daemon8(tmp_path: Path) -> None:
    waiter = (
        "import signal; signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGHUP]); "
        "print('ready', flush=True); print(signal.sigwait([signal.SIGHUP]), flush=True)"
    )
    child = subprocess.Popen([sys.executable, "-c", waiter], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "child.pid").write_text(f"{child.pid}\n")
    result = run_rc(tmp_path, "reload")
    assert result.returncode == 0, result.stderr
    out, _ = child.communicate(timeout=30)
    assert out.strip() == str(int(signal.SIGHUP))
    assert "SIGHUP to pid" in result.stdout
