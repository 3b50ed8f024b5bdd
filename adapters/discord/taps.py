"""Button taps: 👍/👎 feedback, an owner's Approve/Reject, a command's Yes/No and an owner's
Private/Shared choice. Each goes to the `Bot`, which decides; the tap is acknowledged at once
(Discord wants an answer within 3 s), what concerns only the tapper is ephemeral, and the
message under which the buttons were is edited when its question is settled."""

from __future__ import annotations

import logging
from typing import Any

import discord

from adapters.discord.buttons import Tap
from adapters.discord.config import PREFIX
from adapters.discord.context import NO_MENTIONS, EdgeContext, chat_of, identity_of
from adapters.discord.ingest_chat import save_source
from adapters.discord.markdown import escape, render_rich
from adapters.discord.replies import outgoing
from adapters.discord.streaming import StatusMessage
from bot.errors import LoreError
from bot.replies import Message, plain_text

__all__ = ["handle_tap"]

logger = logging.getLogger(__name__)

Interaction = discord.Interaction[Any]
SORRY = "Sorry, something went wrong on my side. Please try again."


async def _tell(interaction: Interaction, text: str) -> None:
    """A short answer only the tapper sees."""
    await interaction.followup.send(
        escape(text), ephemeral=True, allowed_mentions=NO_MENTIONS, suppress_embeds=True
    )


async def _replace(interaction: Interaction, content: str) -> None:
    """New text for the message whose button was tapped, its buttons gone."""
    await interaction.edit_original_response(
        content=content, view=None, allowed_mentions=NO_MENTIONS
    )


async def _feedback(edge: EdgeContext, interaction: Interaction, tap: Tap) -> None:
    value = 1 if tap.choice == "up" else -1
    reply = await edge.bot.record_feedback(identity_of(interaction.user), tap.target, value)
    await _tell(interaction, plain_text(reply.body))


async def _decision(edge: EdgeContext, interaction: Interaction, tap: Tap) -> None:
    decision = await edge.bot.decide_approval(
        identity_of(interaction.user), tap.target, approve=tap.choice == "y"
    )
    if decision.card is not None:
        await _replace(interaction, render_rich(decision.card))
    await _tell(interaction, decision.answer)


def _chat(interaction: Interaction) -> Any:
    return chat_of(interaction.channel, interaction.guild_id)


async def _confirm(edge: EdgeContext, interaction: Interaction, tap: Tap) -> None:
    reply = await edge.bot.confirm(
        identity_of(interaction.user),
        _chat(interaction),
        tap.target,
        tap.choice == "y",
        prefix=PREFIX,
    )
    if isinstance(reply, Message) and not reply.personal:
        await _replace(interaction, render_rich(reply.body))
        return
    for message in outgoing(reply):
        await interaction.followup.send(
            message.content,
            view=message.view or discord.utils.MISSING,
            ephemeral=message.personal,
            allowed_mentions=NO_MENTIONS,
            suppress_embeds=True,
        )


async def _scope(edge: EdgeContext, interaction: Interaction, tap: Tap) -> None:
    identity = identity_of(interaction.user)
    try:
        source = await edge.bot.choose_scope(identity, tap.target)
    except LoreError as exc:
        await _tell(interaction, str(exc))
        return

    async def write(text: str, view: discord.ui.View | None = None) -> None:
        await interaction.edit_original_response(
            content=text, view=view, allowed_mentions=NO_MENTIONS
        )

    async def show(text: str) -> None:
        await write(text)

    status = StatusMessage(show, interval=edge.config.stream_interval)
    await status.push(edge.bot.received(source))
    await save_source(edge, identity, source, status, write, shared=tap.choice == "s")


HANDLERS = {"fb": _feedback, "ap": _decision, "cf": _confirm, "in": _scope}


async def handle_tap(edge: EdgeContext, interaction: Interaction, tap: Tap) -> None:
    """Acknowledge the tap, then do what the button says; errors end politely here."""
    async with edge.deduper.once(str(interaction.id)) as first:
        if not first:
            return
        await interaction.response.defer()
        try:
            await HANDLERS[tap.kind](edge, interaction, tap)
        except LoreError as exc:
            await _tell_safely(interaction, str(exc))
        except Exception:  # the tap boundary: log, and tell the tapper politely
            logger.exception("Discord button tap failed")
            await _tell_safely(interaction, SORRY)


async def _tell_safely(interaction: Interaction, text: str) -> None:
    try:
        await _tell(interaction, text)
    except discord.HTTPException:  # the error path must never raise
        logger.warning("Could not answer a failed tap")
