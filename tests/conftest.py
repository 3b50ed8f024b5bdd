"""Shared pytest configuration: options, settings for a fresh data directory, the real core."""

from __future__ import annotations

from collections.abc import AsyncIterator
from ipaddress import IPv4Address
from pathlib import Path

import pytest

from bot.app import Lore, open_lore
from bot.settings import Settings, load_settings

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


@pytest.fixture
def settings(tmp_path: Path, models_dir: Path) -> Settings:
    """Settings for a fresh data directory, independent of the machine's environment."""
    return load_settings(
        _env_file=None,
        data_dir=tmp_path / "data",
        MODELS_DIR=models_dir,
        sample_docs_dir="",
        chunk_tokens=128,
        chunk_overlap_tokens=16,
        max_file_bytes=512 * 1024,
        max_decompressed_bytes=2 * 1024 * 1024,
    )


@pytest.fixture
async def lore(settings: Settings) -> AsyncIterator[Lore]:
    """The real core (SQLite, embedded Qdrant, packaged model) in a temporary data directory.

    127.0.0.1 is allowed for URL fetches: the test web server lives there.
    """
    async with open_lore(settings, fetch_allowed_addresses=frozenset({LOOPBACK})) as core:
        yield core
