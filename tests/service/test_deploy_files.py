"""The shipped systemd unit and rc.d script say what the daemon's contract needs."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from service.exit_codes import EX_CONFIG, EX_OK, EX_SOFTWARE, EX_TEMPFAIL
from service.settings_ops import SupervisionSettings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
UNIT = DEPLOY / "systemd" / "regime-trader.service"
RC_SCRIPT = DEPLOY / "freebsd" / "regime_trader"
CONFIG = "/etc/regime-trader/service.toml"

Unit = dict[str, dict[str, list[str]]]


def parse_unit(text: str) -> Unit:
    """Sections of `Key=value` lines; a key may repeat (DeviceAllow=), so values are lists."""
    unit: Unit = {}
    section: dict[str, list[str]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = unit.setdefault(line[1:-1], {})
            continue
        key, sep, value = line.partition("=")
        assert sep, f"{UNIT}: not a Key=value line: {raw!r}"
        section.setdefault(key.strip(), []).append(value.strip())
    return unit


def service() -> dict[str, list[str]]:
    return parse_unit(UNIT.read_text())["Service"]


def one(key: str) -> str:
    values = service().get(key, [])
    assert len(values) == 1, f"{UNIT}: expected one {key}=, found {values}"
    return values[0]


def test_the_unit_is_a_notify_service_whose_main_process_reports() -> None:
    assert (one("Type"), one("NotifyAccess"), one("WatchdogSec")) == ("notify", "main", "30")


def test_the_unit_checks_the_configuration_then_runs_and_reloads_with_sighup() -> None:
    check, run = one("ExecStartPre").split(), one("ExecStart").split()
    assert check[1:] == ["check-config", "--config", CONFIG]
    assert run[1:] == ["run", "--config", CONFIG]
    assert check[0] == run[0] and check[0].startswith("/")
    assert one("ExecReload") == "/bin/kill -HUP $MAINPID"


def test_the_unit_restarts_failures_but_not_a_bad_configuration() -> None:
    assert (one("Restart"), one("RestartSec")) == ("on-failure", "5")
    assert one("RestartPreventExitStatus") == str(EX_CONFIG)


def test_stopping_signals_the_supervisor_and_waits_beyond_its_shutdown_budget() -> None:
    assert one("KillMode") == "mixed"
    assert int(one("TimeoutStopSec")) > SupervisionSettings().shutdown_budget_s


def test_the_unit_keeps_state_config_and_keys_in_their_places() -> None:
    assert one("StateDirectory") == "regime-trader"
    assert one("ConfigurationDirectory") == "regime-trader"
    assert one("EnvironmentFile") == "-/etc/regime-trader/keys.env"
    assert one("UMask") == "0077"


def test_the_unit_is_hardened_yet_can_open_gpu_devices() -> None:
    for key, value in [("DynamicUser", "yes"), ("ProtectSystem", "strict"),
                       ("ProtectHome", "yes"), ("PrivateTmp", "yes"),
                       ("NoNewPrivileges", "yes"), ("SystemCallFilter", "@system-service")]:
        assert one(key) == value, key
    assert set(one("RestrictAddressFamilies").split()) == {"AF_UNIX", "AF_INET", "AF_INET6"}
    assert "PrivateDevices" not in service()
    assert {"char-drm rw", "char-nvidia* rw"} <= set(service()["DeviceAllow"])
    assert set(one("SupplementaryGroups").split()) == {"render", "video"}


def test_the_rc_script_is_valid_shell() -> None:
    checked = subprocess.run(["sh", "-n", str(RC_SCRIPT)], capture_output=True, text=True,
                             check=False)
    assert checked.returncode == 0, checked.stderr


def rc_assignments() -> dict[str, str]:
    """Top-level `name="value"` assignments (continuation lines joined)."""
    text = RC_SCRIPT.read_text().replace("\\\n", "")
    return {m[1]: m[2] for m in re.finditer(r'^([a-z_]+)="([^"]*)"$', text, re.MULTILINE)}


def test_the_rc_script_runs_the_daemon_under_daemon8_with_both_pid_files() -> None:
    names = rc_assignments()
    assert names["name"] == "regime_trader" and names["rcvar"] == "regime_trader_enable"
    assert names["command"] == "/usr/sbin/daemon"
    flags = names["command_args"].split()
    for flag in ("-P", "-p", "-u", "-T"):
        assert flag in flags, flag
    assert flags[flags.index("-R") + 1] == "5" and "-S" in flags
    assert flags[flags.index("-P") + 1] == "${pidfile}"
    assert flags[flags.index("-p") + 1] == "${child_pidfile}"
    assert "run --config ${regime_trader_config}" in names["command_args"]


def test_the_rc_script_checks_the_config_before_start_and_reloads_the_child() -> None:
    names = rc_assignments()
    assert names["extra_commands"] == "reload"
    text = RC_SCRIPT.read_text()
    prestart = function_body(text, names["start_precmd"].replace("${name}", "regime_trader"))
    reload = function_body(text, names["reload_cmd"].replace("${name}", "regime_trader"))
    assert "regime_trader_check_config" in prestart
    assert "check-config --config" in function_body(text, "regime_trader_check_config")
    assert 'cat "${child_pidfile}"' in reload and 'kill -HUP "${_pid}"' in reload


def function_body(text: str, name: str) -> str:
    match = re.search(rf"^{name}\(\)\n\{{\n(.*?)^\}}", text, re.MULTILINE | re.DOTALL)
    assert match is not None, f"{RC_SCRIPT}: no function {name}()"
    return match[1]


def test_the_deploy_readme_documents_every_exit_code() -> None:
    readme = (DEPLOY / "README.md").read_text()
    for code in (EX_OK, EX_SOFTWARE, EX_TEMPFAIL, EX_CONFIG):
        assert re.search(rf"^\| `{code}` \|", readme, re.MULTILINE), code
