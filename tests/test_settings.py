"""Settings: wrong values fail at start naming the variable; every setting is documented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.settings import Settings, SettingsError, load_settings

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("overrides", "variable"),
    [
        ({"chunk_tokens": "many"}, "CHUNK_TOKENS"),
        ({"chunk_tokens": 8}, "CHUNK_TOKENS"),
        ({"fetch_timeout_seconds": -1}, "FETCH_TIMEOUT_SECONDS"),
        ({"log_level": "LOUD"}, "LOG_LEVEL"),
        ({"chunk_tokens": 100, "chunk_overlap_tokens": 100}, "CHUNK_OVERLAP_TOKENS"),
        ({"embedding_threads": 0}, "EMBEDDING_THREADS"),
        ({"search_mode": "bm25"}, "SEARCH_MODE"),
        ({"reranker_candidates": 0}, "RERANKER_CANDIDATES"),
        ({"budget_timezone": "Mars/Olympus"}, "BUDGET_TIMEZONE"),
        ({"budget_timezone": "Europe"}, "BUDGET_TIMEZONE"),
    ],
)
def test_a_wrong_value_names_the_variable(overrides: dict[str, object], variable: str) -> None:
    with pytest.raises(SettingsError, match=variable):
        load_settings(_env_file=None, **overrides)


def test_defaults_need_no_configuration() -> None:
    settings = load_settings(_env_file=None)
    assert settings.qdrant_url is None
    assert settings.database_path == Path("data") / "lore.sqlite3"
    assert settings.models_dir == Path("data") / "models"
    assert settings.sample_docs_dir is None  # only `make run`'s demo loads docs/


def test_empty_values_mean_unset() -> None:
    settings = load_settings(
        _env_file=None, qdrant_url=" ", sample_docs_dir="", reranker_model_dir=""
    )
    assert settings.qdrant_url is None
    assert settings.sample_docs_dir is None
    assert settings.reranker_model_dir is None


def test_secrets_are_not_printed() -> None:
    settings = load_settings(_env_file=None, qdrant_api_key="s3cr3t-key")
    assert "s3cr3t-key" not in repr(settings)
    assert "s3cr3t-key" not in str(settings.model_dump())


def test_every_setting_is_documented_in_env_example() -> None:
    example = (ROOT / ".env.example").read_text()
    documented = set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", example, re.MULTILINE))
    names = set()
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        names.add(alias if isinstance(alias, str) else name.upper())
    assert names - documented == set(), "add these to .env.example"
    assert documented - names == set(), ".env.example names settings that do not exist"
