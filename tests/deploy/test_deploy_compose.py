"""docker-compose.yml and docker-compose.node.yml: valid Compose, complete, and consistent.

There is no Docker engine in CI, so these read the files the way Compose would (YAML, anchors,
interpolation from .env.example) and check what a TA would otherwise find out at `up` time.
"""

from __future__ import annotations

import importlib.resources
import json
import re
import tomllib
from typing import Any

import jsonschema
import pytest

from app.core.config import Settings
from app.core.http_server import server_options

from . import composefile
from .composefile import MissingVariable

HEAD = "docker-compose.yml"
NODE = "docker-compose.node.yml"
SERVICES = {"redis", "postgres", "migrate", "api", "control-worker", "gpu-worker", "cpu-worker",
            "flower"}
EXAMPLE_ENV = composefile.read_env_file(composefile.REPO / ".env.example")
NODE_ENV = {**EXAMPLE_ENV, "REDIS_HOST": "10.0.0.1"}


def compose_schema() -> dict[str, Any]:
    """The Compose Specification's JSON schema as check-jsonschema ships it (kept up to date)."""
    vendor = importlib.resources.files("check_jsonschema.builtin_schemas.vendor")
    return json.loads((vendor / "compose-spec.json").read_text())


@pytest.fixture(scope="module")
def head() -> dict[str, Any]:
    return composefile.load(HEAD)["services"]


@pytest.fixture(scope="module")
def node() -> dict[str, Any]:
    return composefile.load(NODE, NODE_ENV)["services"]


@pytest.mark.parametrize("name", [HEAD, NODE])
def test_compose_files_match_the_compose_specification(name: str) -> None:
    pytest.importorskip("check_jsonschema", reason="pip install check-jsonschema (dev extra)")
    validator = jsonschema.Draft202012Validator(compose_schema())
    for document in (composefile.load_raw(name), composefile.load(name, NODE_ENV)):
        errors = validator.iter_errors(document)
        assert [f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors] == []


def test_the_schema_check_catches_a_broken_file() -> None:
    pytest.importorskip("check_jsonschema", reason="pip install check-jsonschema (dev extra)")
    document = composefile.load(HEAD)
    document["services"]["gpu-worker"]["deploy"]["resources"]["reservations"]["devices"][0][
        "capabilities"] = "gpu"
    validator = jsonschema.Draft202012Validator(compose_schema())
    assert not validator.is_valid(document)


def test_every_service_is_present(head: dict[str, Any]) -> None:
    assert set(head) == SERVICES


def test_optional_services_sit_behind_their_profiles(head: dict[str, Any]) -> None:
    assert head["cpu-worker"]["profiles"] == ["cpu"]
    assert head["flower"]["profiles"] == ["flower"]
    always = {name for name, service in head.items() if "profiles" not in service}
    assert always == SERVICES - {"cpu-worker", "flower"}


def test_every_variable_compose_requires_is_in_env_example() -> None:
    composefile.load(HEAD)  # raises MissingVariable naming the variable otherwise
    composefile.load(NODE, NODE_ENV)


def test_compose_refuses_to_start_without_the_secrets() -> None:
    for secret in ("POSTGRES_PASSWORD", "REDIS_PASSWORD", "FLASHJUDGE_SECRET_KEY"):
        with pytest.raises(MissingVariable, match=secret):
            composefile.load(HEAD, {k: v for k, v in EXAMPLE_ENV.items() if k != secret})


def test_every_service_has_a_healthcheck(head: dict[str, Any], node: dict[str, Any]) -> None:
    for services in (head, node):
        for name, service in services.items():
            check = service.get("healthcheck")
            assert check, f"{name} has no healthcheck"
            if check.get("disable"):
                assert name == "migrate", f"{name} disables its healthcheck"
            else:
                assert check["test"][0] in ("CMD", "CMD-SHELL"), name


def test_the_one_shot_migration_gates_the_database_users(head: dict[str, Any]) -> None:
    assert head["migrate"]["restart"] == "no"
    for name in ("api", "control-worker"):
        depends = head[name]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully", name
        assert depends["postgres"]["condition"] == "service_healthy", name


def test_dependencies_wait_for_health_not_just_start(head: dict[str, Any]) -> None:
    for name, service in head.items():
        for dependency, how in service.get("depends_on", {}).items():
            assert isinstance(how, dict), f"{name} -> {dependency}: use the long form"
            expected = ("service_completed_successfully" if dependency == "migrate"
                        else "service_healthy")
            assert how["condition"] == expected, f"{name} -> {dependency}"


def test_redis_persists_and_postgres_keeps_a_named_volume() -> None:
    document = composefile.load(HEAD)
    redis, postgres = document["services"]["redis"], document["services"]["postgres"]
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert "redis-data:/data" in redis["volumes"]
    assert "postgres-data:/var/lib/postgresql/data" in postgres["volumes"]
    assert {"redis-data", "postgres-data"} <= set(document["volumes"])


@pytest.mark.parametrize("which", ["head", "node"])
def test_gpu_workers_reserve_nvidia_gpus(which: str, head: dict[str, Any],
                                         node: dict[str, Any]) -> None:
    worker = (head if which == "head" else node)["gpu-worker"]
    devices = worker["deploy"]["resources"]["reservations"]["devices"]
    assert devices == [{"driver": "nvidia", "count": "all", "capabilities": ["gpu"]}]
    assert worker["command"] == ["flashjudge", "worker", "--gpus", "all"]
    assert worker["build"]["target"] == "worker"


def test_gpu_workers_hold_no_database_credentials(head: dict[str, Any],
                                                 node: dict[str, Any]) -> None:
    for services in (head, node):
        for name in ("gpu-worker", "cpu-worker"):
            environment = services[name]["environment"]
            assert set(environment) == {"FLASHJUDGE_BROKER_URL", "FLASHJUDGE_LOG_LEVEL"}, name
            assert "env_file" not in services[name]


def test_the_node_file_runs_the_same_workers_as_the_head(head: dict[str, Any],
                                                         node: dict[str, Any]) -> None:
    assert set(node) == {"gpu-worker", "cpu-worker"}
    for name in node:
        ignore = {"environment", "depends_on", "volumes"}
        assert {k: v for k, v in node[name].items() if k not in ignore} == {
            k: v for k, v in head[name].items() if k not in ignore}, name
        targets = [v.split(":")[-1] for v in node[name]["volumes"]]
        assert targets == [v.split(":")[-1] for v in head[name]["volumes"]], name
    assert node["gpu-worker"]["environment"]["FLASHJUDGE_BROKER_URL"].endswith("@10.0.0.1:6379/0")


def test_built_images_are_tagged_with_the_project_version(head: dict[str, Any]) -> None:
    version = tomllib.loads((composefile.REPO / "pyproject.toml").read_text())["project"]["version"]
    for name, service in head.items():
        if "build" in service:
            assert service["image"] == f"flashjudge/{service['build']['target']}:{version}", name


def test_every_setting_in_env_example_is_read_by_compose() -> None:
    text = "".join((composefile.REPO / name).read_text() for name in (HEAD, NODE))
    read = set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*)", text))
    example = (composefile.REPO / ".env.example").read_text()
    offered = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", example, flags=re.M))
    assert offered - read == set(), "stale settings in .env.example"


def size_bytes(size: str) -> int:
    """A Compose byte size ("64g", "512m", "1024") in bytes."""
    found = re.fullmatch(r"(\d+)([bkmg]?)b?", size.lower())
    assert found is not None, f"not a Compose byte size: {size!r}"
    number, unit = found.groups()
    return int(number) * 1024 ** "bkmg".index(unit or "b")


def test_workers_get_a_dev_shm_big_enough_for_the_judge(head: dict[str, Any],
                                                        node: dict[str, Any]) -> None:
    from worker.sandbox.workspace import MIN_SHM_FREE  # below this the judge works on disk instead

    for services in (head, node):
        for name in ("gpu-worker", "cpu-worker"):
            assert size_bytes(services[name]["shm_size"]) >= MIN_SHM_FREE, name


def test_the_api_drops_slow_clients_with_the_settings_defaults() -> None:
    """The compose uvicorn flags are `flashjudge serve`'s limits (app/core/http_server.py)."""
    command = composefile.load(HEAD)["services"]["api"]["command"]
    flags = dict(zip(command[1::1], command[2::1], strict=False))
    expected = server_options(Settings(environment="test"))
    assert flags["--http"] == "app.core.http_server:" + expected["http"].__name__
    assert int(flags["--limit-concurrency"]) == expected["limit_concurrency"]
    assert int(flags["--timeout-keep-alive"]) == expected["timeout_keep_alive"]
