"""The composition root: `open_lore` builds the core from settings; `edges` builds the
configured edges; `run` stacks them with the scheduler. Only this package and `bot.cli`
construct concrete objects, read settings, and import `adapters` and `scheduler`."""

from bot.app.core import Lore, open_lore

__all__ = ["Lore", "open_lore"]
