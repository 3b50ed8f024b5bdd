"""The discord.py client of the Lore edge: the intents and defaults (no mention pings), the
`/lore` command tree, the persistent buttons, and the hand-over of each gateway event to
the edge's handlers."""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands

from adapters.discord.buttons import Tap, TapButton
from adapters.discord.config import lore_intents
from adapters.discord.context import NO_MENTIONS, EdgeContext
from adapters.discord.handlers import MessageHandler
from adapters.discord.slash import lore_group, run_slash
from adapters.discord.taps import handle_tap

__all__ = ["LoreClient"]


class LoreClient(discord.Client):
    """A Discord client that serves one Lore `Bot`."""

    def __init__(self, edge: EdgeContext) -> None:
        # Lore has no voice: no warning that the voice libraries are missing.
        discord.VoiceClient.warn_nacl = False
        discord.VoiceClient.warn_dave = False
        super().__init__(
            intents=lore_intents(),
            allowed_mentions=NO_MENTIONS,
            max_messages=None,
            chunk_guilds_at_startup=False,
            member_cache_flags=discord.MemberCacheFlags.none(),
            guild_ready_timeout=edge.config.guild_ready_timeout,
        )
        self._edge = edge
        self._messages = MessageHandler(edge)
        self.tree: app_commands.CommandTree[LoreClient] = app_commands.CommandTree(self)

    async def setup_hook(self) -> None:
        """Buttons keep working after a restart: they are rebuilt from their `custom_id`."""
        self.add_dynamic_items(TapButton)

    def install_commands(self, guild_id: int | None) -> None:
        """`/lore` and its subcommands from the registry (globally, or in one server)."""
        group = lore_group(self._edge.bot.commands(owner=True), self._run_command)
        guild = discord.Object(guild_id) if guild_id is not None else None
        self.tree.add_command(group, guild=guild)

    async def _run_command(
        self, interaction: discord.Interaction[Any], name: str, args: str
    ) -> None:
        await run_slash(self._edge, interaction, name, args)

    async def on_message(self, message: discord.Message) -> None:
        """A message the bot can read (the gateway's MESSAGE_CREATE)."""
        if self.user is not None:
            await self._messages.on_message(message, self.user)

    async def route_tap(self, interaction: discord.Interaction[Any], tap: Tap) -> None:
        """A tap on one of the bot's buttons (see `adapters.discord.buttons`)."""
        await handle_tap(self._edge, interaction, tap)
