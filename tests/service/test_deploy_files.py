"""The shipped systemd units and rc.d script say what the daemon's contract needs."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from service.exit_codes import EX_CONFIG, EX_OK, EX_SOFTWARE, EX_TEMPFAIL
from service.secrets import credential_name, env_names
from service.settings_ops import SupervisionSettings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
UNIT = DEPLOY / "systemd" / "regime-trader.service"
TEMPLATE = DEPLOY / "systemd" / "regime-trader@.service"
RC_SCRIPT = DEPLOY / "freebsd" / "regime_trader"
CONFIG = "/etc/regime-trader/service.toml"
EXIT_CREDENTIALS = 243  # systemd could not set up LoadCredential= (systemd.exec(5))

Unit = dict[str, dict[str, list[str]]]
# The template's lines that name its instance; every other line equals the main unit's.
PER_INSTANCE = {"Description", "ExecStart", "StateDirectory", "CacheDirectory",
                "RuntimeDirectory", "Environment"}


def parse_unit(path: Path) -> Unit:
    """Sections of `Key=value` lines; a key may repeat (DeviceAllow=), so values are lists."""
    unit: Unit = {}
    section: dict[str, list[str]] = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = unit.setdefault(line[1:-1], {})
            continue
        key, sep, value = line.partition("=")
        assert sep, f"{path}: not a Key=value line: {raw!r}"
        section.setdefault(key.strip(), []).append(value.strip())
    return unit


def service(path: Path = UNIT) -> dict[str, list[str]]:
    return parse_unit(path)["Service"]


def one(key: str, path: Path = UNIT) -> str:
    values = service(path).get(key, [])
    assert len(values) == 1, f"{path}: expected one {key}=, found {values}"
    return values[0]


def environment(path: Path) -> dict[str, str]:
    pairs = (v.strip('"').partition("=") for v in service(path)["Environment"])
    return {name: value for name, _, value in pairs}


def test_the_unit_is_a_notify_service_whose_main_process_reports() -> None:
    assert (one("Type"), one("NotifyAccess"), one("WatchdogSec")) == ("notify", "main", "30")


def test_the_main_process_checks_the_configuration_itself_and_reloads_with_sighup() -> None:
    """RestartPreventExitStatus= applies to the main process alone (systemd.service(5)): an
    ExecStartPre= check exiting 78 would be restarted until StartLimitBurst=, so `run`
    refuses a bad configuration itself (tests/service/test_deploy_init_scripts.py runs it)."""
    for unit in (UNIT, TEMPLATE):
        assert "ExecStartPre" not in service(unit), unit
    run = one("ExecStart").split()
    assert run[1:] == ["run", "--config", CONFIG] and run[0].startswith("/")
    assert one("ExecReload") == "/bin/kill -HUP $MAINPID"


def test_the_unit_restarts_failures_but_not_a_bad_configuration_or_missing_credentials() -> None:
    assert (one("Restart"), one("RestartSec")) == ("on-failure", "5")
    assert one("RestartPreventExitStatus").split() == [str(EX_CONFIG), str(EXIT_CREDENTIALS)]


def test_stopping_signals_the_supervisor_and_waits_beyond_its_shutdown_budget() -> None:
    assert one("KillMode") == "mixed"
    assert int(one("TimeoutStopSec")) > SupervisionSettings().shutdown_budget_s


def test_the_unit_keeps_state_config_and_runtime_files_in_their_places() -> None:
    assert one("StateDirectory") == "regime-trader"
    assert one("ConfigurationDirectory") == "regime-trader"
    assert one("UMask") == "0077"
    assert (one("RuntimeDirectory"), one("RuntimeDirectoryMode")) == ("regime-trader", "0700")
    assert environment(UNIT)["XDG_RUNTIME_DIR"] == "%t/regime-trader"  # %t: /run


def test_keys_come_from_the_environment_file_and_credentials_named_as_the_code_reads_them() -> None:
    assert one("EnvironmentFile") == "-/etc/regime-trader/keys.env"
    credential_id, _, folder = one("LoadCredential").partition(":")
    assert folder == "/etc/regime-trader/credentials"
    # systemd names the file F of a LoadCredential=ID:DIR directory "ID_F" (systemd.exec(5))
    assert f"{credential_id}_alpha.toml" == credential_name("alpha")


def test_the_comments_name_the_variables_the_code_reads() -> None:
    id_name, secret_name = env_names("<account>")  # REGIME_TRADER_<ACCOUNT>_KEY_ID, ...
    for path in (UNIT, TEMPLATE, RC_SCRIPT):
        text = path.read_text()
        assert id_name in text and secret_name in text and "APCA_" not in text, path


def test_the_unit_is_hardened_yet_can_open_gpu_devices() -> None:
    for key, value in [("DynamicUser", "yes"), ("ProtectSystem", "strict"),
                       ("ProtectHome", "yes"), ("PrivateTmp", "yes"),
                       ("NoNewPrivileges", "yes"), ("SystemCallFilter", "@system-service")]:
        assert one(key) == value, key
    assert set(one("RestrictAddressFamilies").split()) == {"AF_UNIX", "AF_INET", "AF_INET6"}
    assert "PrivateDevices" not in service()
    assert {"char-drm rw", "char-nvidia* rw"} <= set(service()["DeviceAllow"])
    assert set(one("SupplementaryGroups").split()) == {"render", "video"}


def test_the_template_repeats_the_main_unit_but_for_the_lines_naming_its_instance() -> None:
    main, template = parse_unit(UNIT), parse_unit(TEMPLATE)
    assert main["Install"] == template["Install"]
    assert {k: v for k, v in main["Unit"].items() if k != "Description"} == {
        k: v for k, v in template["Unit"].items() if k != "Description"}
    shared = set(main["Service"]) - PER_INSTANCE
    assert set(template["Service"]) - PER_INSTANCE == shared
    drifted = [k for k in sorted(shared) if main["Service"][k] != template["Service"][k]]
    assert not drifted, f"{TEMPLATE} differs from {UNIT} in {drifted}"


def test_each_instance_runs_its_shard_with_its_own_directories() -> None:
    assert one("ExecStart", TEMPLATE).split() == [
        *one("ExecStart").split(), "--shard", "%I", "$REGIME_TRADER_HTTP_ARGS"]
    for key in ("StateDirectory", "CacheDirectory", "RuntimeDirectory"):
        assert one(key, TEMPLATE) == f"{one(key)}/%i", key
    env, main_env = environment(TEMPLATE), environment(UNIT)
    assert env.pop("REGIME_TRADER_HTTP_ARGS") == ""  # a drop-in gives an instance its port
    for name in ("XDG_RUNTIME_DIR", "XDG_CACHE_HOME"):
        assert env.pop(name) == f"{main_env.pop(name)}/%i", name
    assert env == main_env


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
    assert "check-config --keys --config" in function_body(text, "regime_trader_check_config")
    assert 'cat "${child_pidfile}"' in reload and 'kill -HUP "${_pid}"' in reload


def function_body(text: str, name: str) -> str:
    match = re.search(rf"^{name}\(\)\n\{{\n(.*?)^\}}", text, re.MULTILINE | re.DOTALL)
    assert match is not None, f"{RC_SCRIPT}: no function {name}()"
    return match[1]


def test_the_deploy_readme_documents_every_exit_code() -> None:
    readme = (DEPLOY / "README.md").read_text()
    for code in (EX_OK, EX_SOFTWARE, EX_TEMPFAIL, EX_CONFIG):
        assert re.search(rf"^\| `{code}` \|", readme, re.MULTILINE), code


@pytest.mark.parametrize("unit", [UNIT, TEMPLATE], ids=lambda p: p.name)
def test_the_readme_installs_every_unit_and_the_credentials_directory(unit: Path) -> None:
    readme = (DEPLOY / "README.md").read_text()
    assert f"deploy/systemd/{unit.name}" in readme
    assert "install -d -m 0700 /etc/regime-trader/credentials" in readme
