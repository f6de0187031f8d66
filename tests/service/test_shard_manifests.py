"""The Kubernetes StatefulSet and the systemd template unit shard the accounts completely.

For several N, the manifest is rendered with N in its two places, each pod's args are
expanded as the kubelet expands them ($(POD_INDEX) from the pod-index label), parsed by
the real command line and applied to the real configuration: every account of a large set
must land in exactly one pod. The same for the template unit's instances, named by the real
`systemd-escape` and expanded (%I) by `systemd-escape --unescape`. Then the manifest's
contract with the daemon: probes, state volume, configuration, keys, user, shutdown.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from service.cli import _parser
from service.config_loader import LoadedConfig, load_config
from service.settings import AccountSettings
from service.settings_ops import SupervisionSettings, parse_listen
from service.state_dir import resolve_state_dir

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
MANIFEST = DEPLOY / "kubernetes" / "regime-trader.yaml"
TEMPLATE_UNIT = DEPLOY / "systemd" / "regime-trader@.service"
SHIPPED_N = 3
COUNTS = (1, 2, 3, 5, 8)
GENERATED = [f"acct-{i:04d}" for i in range(1000)]
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"

Doc = dict[str, Any]


def render(n: int) -> list[Doc]:
    """The manifest with N shards: N replaces the shipped one in its two places, the
    StatefulSet's replicas and the shard in the container's args."""
    docs = [doc for doc in yaml.safe_load_all(MANIFEST.read_text()) if doc]
    spec = of_kind(docs, "StatefulSet")["spec"]
    args = spec["template"]["spec"]["containers"][0]["args"]
    assert spec["replicas"] == SHIPPED_N
    assert args[-2:] == ["--shard", f"$(POD_INDEX)/{SHIPPED_N}"]
    spec["replicas"], args[-1] = n, f"$(POD_INDEX)/{n}"
    return docs


def of_kind(docs: list[Doc], kind: str) -> Doc:
    found = [doc for doc in docs if doc["kind"] == kind]
    assert len(found) == 1, f"{MANIFEST}: expected one {kind}"
    return found[0]


def container(docs: list[Doc]) -> Doc:
    containers = of_kind(docs, "StatefulSet")["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return dict(containers[0])


def pod_env(box: Doc, ordinal: int) -> dict[str, str]:
    """The container's env as the kubelet sets it in pod `ordinal`."""
    env = {}
    for var in box["env"]:
        if "value" in var:
            env[var["name"]] = var["value"]
        else:
            path = var["valueFrom"]["fieldRef"]["fieldPath"]
            assert path == f"metadata.labels['{POD_INDEX_LABEL}']", path
            env[var["name"]] = str(ordinal)
    return env


def expand(arg: str, env: dict[str, str]) -> str:
    """Kubernetes' $(VAR) expansion: a defined VAR is replaced, $$ is a literal $."""
    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))

    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)", one, arg)


@pytest.fixture(scope="module")
def shipped_config(tmp_path_factory: pytest.TempPathFactory) -> LoadedConfig:
    """The ConfigMap's service.toml and instruments.toml, loaded by the real loader."""
    folder = tmp_path_factory.mktemp("configmap")
    for name, text in of_kind(render(SHIPPED_N), "ConfigMap")["data"].items():
        (folder / name).write_text(text)
    return load_config(folder / "service.toml")


@pytest.fixture(scope="module")
def many_accounts(shipped_config: LoadedConfig) -> LoadedConfig:
    """The shipped accounts and 1,000 more."""
    names = (*shipped_config.settings.account_names, *GENERATED)
    accounts = tuple(AccountSettings(name=name) for name in names)
    settings = shipped_config.settings.model_copy(update={"accounts": accounts})
    return LoadedConfig(settings, shipped_config.instruments, shipped_config.settings_path,
                        shipped_config.instruments_path, "s", "i")


def selected(config: LoadedConfig, argv: list[str]) -> tuple[str, ...]:
    """The accounts `regime-trader ARGV` runs: the real parser, the real shard selection."""
    args = _parser(tools=False).parse_args(argv)
    return config.with_shard(args.shard).shard_accounts


def assert_partition(config: LoadedConfig, runs: list[tuple[str, ...]]) -> None:
    counts = Counter(account for run in runs for account in run)
    names = config.settings.account_names
    assert set(counts) == set(names), sorted(set(names) - set(counts))[:5]
    assert set(counts.values()) == {1}, counts.most_common(3)


@pytest.mark.parametrize("n", COUNTS)
def test_each_account_runs_in_exactly_one_pod_of_the_statefulset(
    n: int, many_accounts: LoadedConfig
) -> None:
    docs = render(n)
    assert of_kind(docs, "StatefulSet")["spec"]["replicas"] == n
    box = container(docs)
    runs = []
    for ordinal in range(n):
        env = pod_env(box, ordinal)
        argv = [expand(arg, env) for arg in box["args"]]
        assert argv[-2:] == ["--shard", f"{ordinal}/{n}"]
        runs.append(selected(many_accounts, argv))
    assert_partition(many_accounts, runs)


def test_a_pod_beyond_n_is_refused_with_the_reason(many_accounts: LoadedConfig) -> None:
    box = container(render(3))
    argv = [expand(arg, pod_env(box, 3)) for arg in box["args"]]
    with pytest.raises(ValueError, match=r"the index must be 0\.\.2"):
        selected(many_accounts, argv)


def test_every_shard_of_the_shipped_manifest_has_accounts_to_run(
    shipped_config: LoadedConfig,
) -> None:
    box = container(render(SHIPPED_N))
    for ordinal in range(SHIPPED_N):
        argv = [expand(arg, pod_env(box, ordinal)) for arg in box["args"]]
        args = _parser(tools=False).parse_args(argv)
        assert shipped_config.with_shard(args.shard).active_accounts, ordinal


def _template_lines(key: str) -> list[str]:
    assert TEMPLATE_UNIT.is_file(), f"{TEMPLATE_UNIT}: the systemd template unit is missing"
    lines = [line.strip() for line in TEMPLATE_UNIT.read_text().splitlines()]
    return [line.partition("=")[2] for line in lines if line.startswith(f"{key}=")]


def _systemd_escape(*args: str) -> list[str]:
    escape = shutil.which("systemd-escape")
    assert escape, "systemd-escape is missing: .ci/run installs the systemd package"
    done = subprocess.run([escape, *args], capture_output=True, text=True, check=True)
    return done.stdout.split()


def _exec_argv(instance: str, shard: str) -> list[str]:
    """ExecStart= of one instance, as systemd expands it: %I, %i, then the unit's
    Environment=: `$NAME` alone splits into words (none when empty), `${NAME}` is one."""
    (line,) = _template_lines("ExecStart")
    env = dict(assignment.strip('"').partition("=")[::2]
               for assignment in _template_lines("Environment"))
    words = shlex.split(line.replace("%I", shard).replace("%i", instance).replace("%%", "%"))
    argv: list[str] = []
    for word in words:
        if re.fullmatch(r"\$[A-Za-z_][A-Za-z0-9_]*", word):
            argv += env.get(word[1:], "").split()
        else:
            argv.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                               lambda m: env.get(m.group(1), ""), word))
    return argv[1:]  # the program, then its arguments


@pytest.mark.parametrize("n", COUNTS)
def test_each_account_runs_in_exactly_one_instance_of_the_template_unit(
    n: int, many_accounts: LoadedConfig
) -> None:
    shards = [f"{i}/{n}" for i in range(n)]
    units = _systemd_escape("--template", TEMPLATE_UNIT.name, *shards)
    instances = [unit.removeprefix("regime-trader@").removesuffix(".service") for unit in units]
    assert _systemd_escape("--unescape", *instances) == shards  # what %I gives back
    runs = []
    for instance, shard in zip(instances, shards, strict=True):
        argv = _exec_argv(instance, shard)
        assert argv[argv.index("--shard") + 1] == shard
        runs.append(selected(many_accounts, argv))
    assert_partition(many_accounts, runs)
    (state,) = _template_lines("StateDirectory")  # one state directory (and lock) each
    assert len({state.replace("%i", instance) for instance in instances}) == n


# -- the manifest's contract with the daemon ------------------------------------------


def _port(box: Doc, port: int | str) -> int:
    named = {p["name"]: p["containerPort"] for p in box["ports"]}
    return int(named[port]) if isinstance(port, str) else port


def test_the_probes_ask_the_endpoint_the_daemon_serves(shipped_config: LoadedConfig) -> None:
    box = container(render(SHIPPED_N))
    host, port = parse_listen(shipped_config.settings.http.listen or "")
    assert (host, port) == ("0.0.0.0", 9464)  # the kubelet probes the pod's address
    assert shipped_config.settings.http.allow_remote
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        get = box[probe]["httpGet"]
        assert (get["path"], _port(box, get["port"])) == ("/healthz", port), probe


def test_the_state_volume_is_the_daemon_s_state_directory(shipped_config: LoadedConfig) -> None:
    docs = render(SHIPPED_N)
    box = container(docs)
    args = _parser(tools=False).parse_args([expand(a, pod_env(box, 0)) for a in box["args"]])
    state_dir = resolve_state_dir(args.state_dir, shipped_config, pod_env(box, 0))
    claims = [c["metadata"]["name"] for c in of_kind(docs, "StatefulSet")["spec"]
              ["volumeClaimTemplates"]]  # fmt: skip
    mounts = {m["name"]: m["mountPath"] for m in box["volumeMounts"]}
    assert claims == ["state"]
    assert mounts["state"] == str(state_dir) == "/var/lib/regime-trader"


def test_the_configuration_is_the_config_map_mounted_where_run_reads_it() -> None:
    docs = render(SHIPPED_N)
    box = container(docs)
    args = _parser(tools=False).parse_args([expand(a, pod_env(box, 0)) for a in box["args"]])
    mounts = {m["name"]: m for m in box["volumeMounts"]}
    volumes = {v["name"]: v for v in of_kind(docs, "StatefulSet")["spec"]["template"]["spec"]
               ["volumes"]}  # fmt: skip
    config_map = of_kind(docs, "ConfigMap")
    assert volumes["config"]["configMap"]["name"] == config_map["metadata"]["name"]
    assert "subPath" not in mounts["config"]  # a subPath mount never sees an edit
    assert args.config.parent == Path(mounts["config"]["mountPath"])
    assert {args.config.name, "instruments.toml"} <= set(config_map["data"])


def test_keys_come_from_a_secret_and_the_pod_runs_unprivileged() -> None:
    spec = of_kind(render(SHIPPED_N), "StatefulSet")["spec"]["template"]["spec"]
    box = spec["containers"][0]
    assert [source["secretRef"]["name"] for source in box["envFrom"]] == ["regime-trader-keys"]
    pod = spec["securityContext"]
    assert (pod["runAsUser"], pod["runAsGroup"], pod["fsGroup"]) == (10001, 10001, 10001)
    assert pod["runAsNonRoot"] is True
    own = box["securityContext"]
    assert own["readOnlyRootFilesystem"] is True
    assert own["allowPrivilegeEscalation"] is False
    assert own["capabilities"]["drop"] == ["ALL"]


def test_the_shards_stop_gracefully_and_independently() -> None:
    docs = render(SHIPPED_N)
    sts = of_kind(docs, "StatefulSet")["spec"]
    assert sts["podManagementPolicy"] == "Parallel"
    budget = SupervisionSettings().shutdown_budget_s
    assert sts["template"]["spec"]["terminationGracePeriodSeconds"] > budget
    service = of_kind(docs, "Service")
    assert service["spec"]["clusterIP"] == "None"
    assert sts["serviceName"] == service["metadata"]["name"]
    labels = sts["template"]["metadata"]["labels"]
    assert sts["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
