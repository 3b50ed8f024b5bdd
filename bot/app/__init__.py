"""The composition root: `open_lore` builds the core from settings; `edges` builds the
configured edges; `run` stacks them with the scheduler. Only this package and `bot.cli`
construct concrete objects, read settings, and import `adapters` and `scheduler`.

The core (`bot.app.core`, which imports every engine) loads when first named, so importing
a sibling such as `bot.app.edges` does not load it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.app.core import Lore, open_lore

__all__ = ["Lore", "open_lore"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("bot.app.core"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
