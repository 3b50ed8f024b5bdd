"""Shared pytest configuration: options, settings for a fresh data directory, the real core."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from ipaddress import IPv4Address
from pathlib import Path
from typing import Protocol

import pytest

from bot.app import Lore, open_lore
from bot.settings import Settings, load_settings
from graphs.guards import prepare_guards
from storage.model_files import ensure_model_dir, model_choice
from tests.control_cli import running_bot
from tests.fakes.openai_server import FakeOpenAI
from tests.matrix.homeserver import SYNAPSE_PYTHON, Homeserver, running_homeserver

__all__ = ["running_bot"]  # `lore run` beside which CLI commands are tested (tests/control_cli.py)

LOOPBACK = IPv4Address("127.0.0.1")


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register our options; `--qdrant-url` runs the vector-store contract on a real server."""
    parser.addoption(
        "--qdrant-url",
        default=None,
        help="URL of a Qdrant server to run the vector-store contract suite against too",
    )


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One assembled model directory for the whole session (assembling copies ~100 MB)."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def assembled_models_dir(models_dir: Path) -> Path:
    """`models_dir` as after Lore's first start: the default embedding model assembled and
    the guards' prescreens built, so a `lore` command says nothing about preparing them
    (whether or not a test before this one started Lore)."""
    default = load_settings(_env_file=None).embedding_model  # what `lore` loads by default
    asyncio.run(ensure_model_dir(models_dir, model_choice(default)))
    prepare_guards(models_dir)
    return models_dir


class SettingsFactory(Protocol):
    """Builds test settings for the fresh data directory, with some values overridden."""

    def __call__(self, **overrides: object) -> Settings:
        """Settings like the `settings` fixture's, plus `overrides`."""


@pytest.fixture
def make_settings(tmp_path: Path, models_dir: Path) -> SettingsFactory:
    """Settings for a fresh data directory, independent of the machine's environment, with
    overrides (e.g. `llm_base_url=fake.base_url`, `daily_budget_usd=0.01`)."""

    def make(**overrides: object) -> Settings:
        values: dict[str, object] = {
            "_env_file": None,
            "data_dir": tmp_path / "data",
            "MODELS_DIR": models_dir,
            "sample_docs_dir": "",
            "chunk_tokens": 128,
            "chunk_overlap_tokens": 16,
            "max_file_bytes": 512 * 1024,
            "max_decompressed_bytes": 2 * 1024 * 1024,
        }
        return load_settings(**{**values, **overrides})

    return make


@pytest.fixture
def settings(make_settings: SettingsFactory) -> Settings:
    """Settings for a fresh data directory, independent of the machine's environment."""
    return make_settings()


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    """A scripted OpenAI-compatible server on 127.0.0.1 (see `tests.fakes.openai_server`)."""
    async with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def llm_settings(make_settings: SettingsFactory, fake_openai: FakeOpenAI) -> SettingsFactory:
    """Like `make_settings`, with model calls going to `fake_openai` as "fake-model", priced
    $1 input / $0.50 cached / $2 output per million tokens."""

    def make(**overrides: object) -> Settings:
        values: dict[str, object] = {
            "llm_base_url": fake_openai.base_url,
            "llm_model": "fake-model",
            "llm_prices": "fake-model=1/0.5/2",
        }
        return make_settings(**{**values, **overrides})

    return make


@pytest.fixture
async def lore(settings: Settings) -> AsyncIterator[Lore]:
    """The real core (SQLite, embedded Qdrant, packaged model) in a temporary data directory.

    127.0.0.1 is allowed for URL fetches: the test web server lives there.
    """
    async with open_lore(settings, fetch_allowed_addresses=frozenset({LOOPBACK})) as core:
        yield core


@pytest.fixture(scope="session")
def homeserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Homeserver]:
    """One real Synapse for the whole session (`make test` installs it in .venv-synapse/);
    tests register their own people on it."""
    if not SYNAPSE_PYTHON.exists():
        pytest.skip(
            "the Matrix homeserver is not installed: `make test` (or `make synapse`) installs "
            "matrix-synapse into .venv-synapse/ first"
        )
    with running_homeserver(tmp_path_factory.mktemp("synapse")) as server:
        yield server
