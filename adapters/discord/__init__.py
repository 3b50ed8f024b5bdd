"""The Discord edge: translates between Discord (discord.py: the gateway and REST) and the
`Bot` service; it holds no business rule. `DiscordEdge(config, ledger).running(bot)`."""

from adapters.discord.config import DiscordConfig
from adapters.discord.edge import DiscordEdge, RunningDiscord

__all__ = ["DiscordConfig", "DiscordEdge", "RunningDiscord"]
