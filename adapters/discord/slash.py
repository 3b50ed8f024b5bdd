"""Slash commands, built from the `bot/` command registry: one `/lore` command with a
subcommand per registry command (its summary as the description, its usage as the one
`args` option), each run through `Bot.run_command` with the `/lore ` prefix.

Subcommands rather than one `sub` choice: the Discord client then lists every command with
its own description as the person types `/lore`, and the registry's usage line describes
each `args` option. A reply that concerns only the asker is ephemeral. Discord wants an
answer within 3 s: a command still running after `reply_deadline` posts a status message
(edited by the command's progress, then replaced by the reply).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import discord
from discord import app_commands

from adapters.discord.config import PLATFORM, PREFIX
from adapters.discord.context import NO_MENTIONS, EdgeContext, chat_of, identity_of
from adapters.discord.markdown import escape
from adapters.discord.replies import Outgoing, outgoing
from adapters.discord.streaming import StatusMessage
from bot.commands import Command
from bot.events import ChatRef
from bot.replies import Reply

__all__ = ["GROUP", "SlashReply", "interaction_chat", "lore_group", "run_slash"]

logger = logging.getLogger(__name__)

GROUP = "lore"
GROUP_DESCRIPTION = "Ask Lore, save sources, and manage your knowledge"
MAX_SUBCOMMANDS = 25  # Discord's limit for one group
MAX_DESCRIPTION = 100
SORRY = "Sorry, something went wrong on my side. Please try again in a moment."

Interaction = discord.Interaction[Any]
SlashHandler = Callable[[Interaction, str, str], Awaitable[None]]


def _describe(text: str, names: set[str]) -> str:
    """A registry line spelt for Discord (`/digest` is `/lore digest` here), within 100 chars."""
    spelt = re.sub(r"/([a-z]+)\b", lambda m: PREFIX + m[1] if m[1] in names else m[0], text)
    return spelt if len(spelt) <= MAX_DESCRIPTION else spelt[: MAX_DESCRIPTION - 1] + "…"


def _subcommand(
    command: Command, names: set[str], run: SlashHandler
) -> app_commands.Command[Any, ..., None]:
    name = command.name
    description = _describe(command.summary, names)
    if not command.usage:

        async def plain(interaction: discord.Interaction) -> None:
            await run(interaction, name, "")

        return app_commands.Command(name=name, description=description, callback=plain)

    async def with_args(interaction: discord.Interaction, args: str = "") -> None:
        await run(interaction, name, args)

    described = app_commands.describe(args=_describe(command.usage, names))(with_args)
    return app_commands.Command(name=name, description=description, callback=described)


def lore_group(commands: Sequence[Command], run: SlashHandler) -> app_commands.Group:
    """`/lore` with a subcommand per registry command (member and owner commands alike: the
    registry refuses whoever may not run one, with the same words as on every edge)."""
    if len(commands) > MAX_SUBCOMMANDS:
        raise ValueError(f"Discord takes at most {MAX_SUBCOMMANDS} subcommands per command")
    group = app_commands.Group(
        name=GROUP,
        description=GROUP_DESCRIPTION,
        allowed_contexts=app_commands.AppCommandContext(guild=True, dm_channel=True),
        allowed_installs=app_commands.AppInstallationType(guild=True),
    )
    names = {command.name for command in commands}
    for command in commands:
        group.add_command(_subcommand(command, names, run))
    return group


def interaction_chat(interaction: Interaction) -> ChatRef:
    """Where a slash command or a tap happened."""
    if interaction.channel is not None:
        return chat_of(interaction.channel, interaction.guild_id)
    is_group = interaction.guild_id is not None
    return ChatRef(PLATFORM, str(interaction.channel_id), is_group=is_group)


class SlashReply:
    """The answer to one slash command: the reply itself if it is ready in time, else a
    status message first (ephemeral in a server) that the reply then replaces."""

    def __init__(self, interaction: Interaction, *, in_server: bool, interval: float) -> None:
        self._interaction = interaction
        self._in_server = in_server
        self._lock = asyncio.Lock()
        self.status = StatusMessage(self._show_status, interval=interval)

    @property
    def responded(self) -> bool:
        """Whether Discord already has this command's first answer."""
        return self._interaction.response.is_done()

    async def _show_status(self, text: str) -> None:
        async with self._lock:
            if not self.responded:
                await self._first(Outgoing(text, personal=self._in_server))
            else:
                await self._interaction.edit_original_response(
                    content=text, allowed_mentions=NO_MENTIONS
                )

    async def _first(self, message: Outgoing) -> None:
        await self._interaction.response.send_message(
            message.content,
            view=message.view or discord.utils.MISSING,
            ephemeral=message.personal,
            allowed_mentions=NO_MENTIONS,
            suppress_embeds=True,
        )

    async def _more(self, message: Outgoing) -> None:
        await self._interaction.followup.send(
            message.content,
            view=message.view or discord.utils.MISSING,
            ephemeral=message.personal or self._in_server,
            allowed_mentions=NO_MENTIONS,
            suppress_embeds=True,
        )

    async def run(self, work: Awaitable[Reply | None], deadline: float, working: str) -> None:
        """Await the command, answering `working` ("working on it") if it takes longer than
        `deadline`."""
        task = asyncio.ensure_future(work)
        done, _ = await asyncio.wait({task}, timeout=deadline)
        if not done and not self.responded:
            await self.status.push(working)
        reply = await task
        await self.status.settle()
        await self.finish(reply)

    async def finish(self, reply: Reply | None) -> None:
        """Show `reply`: the first message answers the command (or replaces the status)."""
        async with self._lock:
            if reply is None:  # the command's effect is its own answer (a digest sent now)
                if not self.responded:
                    await self._interaction.response.defer(ephemeral=True, thinking=True)
                await self._interaction.delete_original_response()
                return
            messages = outgoing(reply)
            first, rest = messages[0], messages[1:]
            if not self.responded:
                await self._first(first)
            else:
                await self._interaction.edit_original_response(
                    content=first.content, view=first.view, allowed_mentions=NO_MENTIONS
                )
            for message in rest:
                await self._more(message)

    async def fail(self, text: str) -> None:
        """A polite word when the command failed unexpectedly."""
        async with self._lock:
            message = Outgoing(escape(text), personal=True)
            if self.responded:
                await self._more(message)
            else:
                await self._first(message)


async def run_slash(edge: EdgeContext, interaction: Interaction, name: str, args: str) -> None:
    """One `/lore <name> [args]`, handled once even if Discord delivers it again."""
    async with edge.deduper.once(str(interaction.id)) as first:
        if not first:
            return
        chat = interaction_chat(interaction)
        reply = SlashReply(
            interaction, in_server=chat.is_group, interval=edge.config.stream_interval
        )
        work = edge.bot.run_command(
            identity_of(interaction.user),
            chat,
            name,
            args.strip(),
            prefix=PREFIX,
            progress=reply.status.set,
        )
        try:
            await reply.run(work, edge.config.reply_deadline, edge.bot.received())
        except Exception:  # the command boundary: log, and answer politely
            logger.exception("Discord slash command %s failed", name)
            try:
                await reply.fail(SORRY)
            except discord.HTTPException:
                logger.warning("Could not report a failed command")
