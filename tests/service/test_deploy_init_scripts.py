"""The init-system files, exercised: systemd's own verifier on every unit, the units'
command lines run against the program, the rc.d script run against a stand-in of rc.subr
that records the daemon(8) command it builds, and the environment both give the program
(no XDG_RUNTIME_DIR unless the unit makes one)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_backend.wgpu_device import ensure_runtime_dir

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SYSTEMD = DEPLOY / "systemd"
PROGRAM = Path(sys.executable).with_name("regime-trader")
SHIPPED_CONFIG = DEPLOY.parent / "config" / "service.toml"
UNIT_CONFIG = "/etc/regime-trader/service.toml"

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
        env | grep -E '^(REGIME_TRADER_|CREDENTIALS_DIRECTORY=)' | sort | sed 's/^/env /' \
            >> "$RECORD"
        echo "exec $command $command_args" >> "$RECORD" ;;
    reload) $reload_cmd ;;
    esac
}
"""


def systemd_tool(name: str) -> str:
    tool = shutil.which(name)
    assert tool, f"{name} is missing: .ci/run installs the systemd package"
    return tool


def instance_name(template: str, shard: str) -> str:
    """`systemd-escape --template regime-trader@.service 0/3`: regime-trader@0-3.service."""
    escape = [systemd_tool("systemd-escape"), "--template", template, shard]
    return subprocess.run(escape, capture_output=True, text=True, check=True).stdout.strip()


def unit_lines(name: str, key: str) -> list[str]:
    prefix = f"{key}="
    text = (SYSTEMD / name).read_text()
    return [ln.removeprefix(prefix) for ln in text.splitlines() if ln.startswith(prefix)]


def here(text: str) -> str:
    """The unit with its program pointed at this venv's (verify wants executables to exist)."""
    return text.replace("/opt/regime-trader/venv/bin/regime-trader", str(PROGRAM))


def unit_cases() -> list[tuple[str, str]]:
    """(file, the name to verify it as): every unit, and each template once as the instance
    for shard 0 of 3 (the name systemd-escape gives, tested below)."""
    cases = [(p.name, p.name) for p in sorted(SYSTEMD.glob("*.service"))]
    return cases + [(f, f.replace("@.", "@0-3.")) for f, _ in cases if f.endswith("@.service")]


@pytest.mark.parametrize(("file", "name"), unit_cases())
def test_systemd_analyze_verifies_every_unit(tmp_path: Path, file: str, name: str) -> None:
    target = tmp_path / name
    target.write_text(here((SYSTEMD / file).read_text()))
    result = subprocess.run([systemd_tool("systemd-analyze"), "verify", str(target)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert name.partition("@")[0] not in result.stderr, result.stderr  # warnings name the file


def test_the_instance_name_carries_the_shard_both_ways() -> None:
    name = instance_name("regime-trader@.service", "0/3")
    unescape = [systemd_tool("systemd-escape"), "--unescape", "--instance", name]
    back = subprocess.run(unescape, capture_output=True, text=True, check=True).stdout
    assert (name, back.strip()) == ("regime-trader@0-3.service", "0/3")


def test_the_units_main_process_refuses_a_bad_config_before_ready_with_a_final_status(
    tmp_path: Path,
) -> None:
    """The unit's own ExecStart=, given a bad configuration: the exit status is one of
    RestartPreventExitStatus= (so systemd does not restart it) and READY=1 never came."""
    bad = tmp_path / "bad.toml"
    bad.write_text("[[accounts]\n")
    [command] = unit_lines("regime-trader.service", "ExecStart")
    args = here(command).replace(UNIT_CONFIG, str(bad)).split()
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(f"\0regime-trader-test-{os.getpid()}")
        env = {"PATH": os.environ["PATH"], "NOTIFY_SOCKET": f"@regime-trader-test-{os.getpid()}"}
        result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
        notify.setblocking(False)
        with pytest.raises(BlockingIOError):
            notify.recv(4096)  # nothing at all was sent: no READY=1
    [final] = unit_lines("regime-trader.service", "RestartPreventExitStatus")
    assert str(result.returncode) in final.split(), result.stderr
    assert "bad.toml" in result.stderr


def rc_script(tmp_path: Path, program: Path) -> Path:
    (tmp_path / "rc.subr").write_text(RC_SUBR_STANDIN)
    script = (DEPLOY / "freebsd" / "regime_trader").read_text()
    script = script.replace(". /etc/rc.subr", f". {tmp_path / 'rc.subr'}")
    script = script.replace('run_dir="/var/run/${name}"', f'run_dir="{tmp_path}/run"')
    path = tmp_path / "regime_trader"
    path.write_text(script.replace("/usr/local/regime-trader/venv/bin/regime-trader", str(program)))
    return path


def run_rc(
    tmp_path: Path,
    command: str,
    config: Path = SHIPPED_CONFIG,
    rc_conf: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """The rc.d script with the stand-in rc.subr, as `service regime_trader COMMAND`."""
    env = {
        "PATH": "/usr/bin:/bin",
        "RECORD": str(tmp_path / "record"),
        "regime_trader_config": str(config),
        "regime_trader_keys_file": str(tmp_path / "none.env"),
        **(rc_conf or {}),
    }
    return subprocess.run(
        ["sh", str(rc_script(tmp_path, PROGRAM)), command],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def recorded(tmp_path: Path, kind: str) -> list[str]:
    lines = (tmp_path / "record").read_text().splitlines()
    return [ln.removeprefix(f"{kind} ") for ln in lines if ln.startswith(f"{kind} ")]


def test_rc_start_checks_the_config_then_runs_daemon8_with_the_keys_exported(
    tmp_path: Path,
) -> None:
    keys = tmp_path / "keys.env"
    keys.write_text("REGIME_TRADER_ALPHA_KEY_ID=PKTEST\nREGIME_TRADER_ALPHA_SECRET=s3cret\n")
    creds = tmp_path / "credentials"  # systemd's LoadCredential=, for rc.d
    creds.mkdir()
    conf = {"regime_trader_keys_file": str(keys), "regime_trader_credentials_dir": str(creds)}
    result = run_rc(tmp_path, "start", rc_conf=conf)
    assert result.returncode == 0, result.stderr
    [exec_line] = recorded(tmp_path, "exec")
    words = exec_line.split()
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
    assert recorded(tmp_path, "env") == [  # what daemon(8) and the program inherit
        f"CREDENTIALS_DIRECTORY={creds}",
        "REGIME_TRADER_ALPHA_KEY_ID=PKTEST",
        "REGIME_TRADER_ALPHA_SECRET=s3cret",
        "REGIME_TRADER_LOG_FORMAT=json",
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


# --- XDG_RUNTIME_DIR: systemd gives none without RuntimeDirectory=, nor does a container,
# and Mesa's Vulkan device-select layer (through libwayland) prints an error without one.


def test_a_runtime_dir_the_user_set_is_kept() -> None:
    env = {"XDG_RUNTIME_DIR": "/run/user/1000", "RUNTIME_DIRECTORY": "/run/regime-trader"}
    assert ensure_runtime_dir(env) is None
    assert env["XDG_RUNTIME_DIR"] == "/run/user/1000"


def test_systemds_runtime_directory_is_taken_when_there_is_one() -> None:
    env = {"XDG_RUNTIME_DIR": "", "RUNTIME_DIRECTORY": "/run/regime-trader/0-3:/run/other"}
    assert ensure_runtime_dir(env) == "/run/regime-trader/0-3"
    assert env["XDG_RUNTIME_DIR"] == "/run/regime-trader/0-3"


def test_otherwise_a_private_folder_is_made() -> None:
    env: dict[str, str] = {}
    made = ensure_runtime_dir(env)
    assert made is not None and env["XDG_RUNTIME_DIR"] == made
    try:
        assert stat.S_IMODE(Path(made).stat().st_mode) == 0o700
        assert Path(made).stat().st_uid == os.getuid()
    finally:
        Path(made).rmdir()


@pytest.mark.slow  # ~2 s: a process of its own opens the Vulkan adapter
def test_the_gpu_device_opens_without_xdg_runtime_dir_quietly() -> None:
    child = (
        "import os; from gpu_backend.wgpu_device import GpuUnavailableError, open_device\n"
        "try:\n    open_device()\nexcept GpuUnavailableError:\n    pass\n"
        "print(os.environ['XDG_RUNTIME_DIR'])"
    )
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    result = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "XDG_RUNTIME_DIR" not in result.stderr, result.stderr
    made = Path(result.stdout.strip().splitlines()[-1])
    assert made.name.startswith("regime-trader-runtime-") and not made.exists()  # removed
