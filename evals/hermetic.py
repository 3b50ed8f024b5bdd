"""A throw-away Lore for `lore eval`: its own data directory, its own knowledge, your model.

`hermetic_lore` makes a temporary directory, opens the core there with the fixture
knowledge of `evals/knowledge/*.md` as its shared knowledge, and removes the directory on
the way out. It never reads, opens or creates anything under the operator's `DATA_DIR`, so
an eval run leaves no members, documents or questions behind, and its cases see the same
knowledge whatever the operator has ingested.

Of the operator's settings only the model ones carry over (`PASSED_THROUGH`: the `LLM_*`
endpoint, its budget, the embedding model and `MODELS_DIR`, logging); everything else takes
its default, so chunking, search mode or a Qdrant server of the operator's never change
what an eval measures (nor receive its writes).
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Final

from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from bot.app import Lore, open_lore
from bot.errors import IngestRefusedError
from bot.settings import Settings
from bot.sources import Source
from evals.runner import EvalSetupError

__all__ = ["PASSED_THROUGH", "fixture_knowledge", "hermetic_lore", "hermetic_settings"]

#: Settings an eval takes from the operator's configuration; the rest keep their defaults.
PASSED_THROUGH: Final = (
    "llm_base_url",
    "llm_api_key",
    "llm_model",
    "llm_prices",
    "llm_timeout_seconds",
    "max_answer_tokens",
    "daily_budget_usd",
    "budget_timezone",
    "embedding_model",
    "embedding_threads",
    "models_dir_override",
    "log_level",
    "log_level_third_party",
)


class _Given(Settings):
    """Settings from the values given here and the defaults: no environment, no `.env`."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],  # noqa: ARG003
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,  # noqa: ARG003
        dotenv_settings: PydanticBaseSettingsSource,  # noqa: ARG003
        file_secret_settings: PydanticBaseSettingsSource,  # noqa: ARG003
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def hermetic_settings(operator: Settings, data_dir: Path) -> Settings:
    """Defaults, the operator's model settings, and `data_dir` as the only data directory.

    Without `MODELS_DIR` the model files are assembled under `data_dir` too (under a second).
    """
    given: dict[str, object] = {}
    for name in PASSED_THROUGH:
        field = Settings.model_fields[name]
        key = field.validation_alias if isinstance(field.validation_alias, str) else name
        given[key] = getattr(operator, name)
    return _Given(data_dir=data_dir, **given)  # type: ignore[arg-type]


def fixture_knowledge() -> tuple[Source, ...]:
    """The eval's shared knowledge: every `evals/knowledge/*.md`, in name order."""
    folder = resources.files("evals").joinpath("knowledge")
    pages = sorted(
        (item for item in folder.iterdir() if item.name.endswith(".md")), key=lambda i: i.name
    )
    return tuple(Source(data=page.read_bytes(), file_name=page.name) for page in pages)


@asynccontextmanager
async def hermetic_lore(operator: Settings) -> AsyncIterator[Lore]:
    """A core on a temporary data directory holding only the fixture knowledge; removed after.

    The terminal's person is an owner there (they invite the eval members)."""
    with tempfile.TemporaryDirectory(prefix="lore-eval-") as scratch:
        settings = hermetic_settings(operator, Path(scratch) / "data")
        async with open_lore(settings, operator=True) as lore:
            for source in fixture_knowledge():
                try:
                    await lore.bot.maintenance.load_shared(source)
                except IngestRefusedError as exc:
                    raise EvalSetupError(
                        f"The fixture knowledge {source.file_name} was refused: {exc}"
                    ) from exc
            yield lore
