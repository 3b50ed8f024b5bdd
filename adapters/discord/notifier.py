"""The `Notifier` for Discord: approval requests with buttons in each owner's DMs, outcomes
delivered into the channel (and thread) where they were asked, plain messages to owners, and
texts such as digests, sent outside any turn. A `ChatRef` names a channel, except an owner's
notice, whose chat id is the owner's user id: that goes to their DMs."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import discord

from adapters.discord.buttons import approval_view, feedback_view
from adapters.discord.context import send
from adapters.discord.markdown import Piece, render_final, render_rich, split
from bot.approvals import approval_card
from bot.events import ApprovalPending, ChatRef, TurnEvent
from bot.replies import Style
from bot.turn_view import TurnView

__all__ = ["DiscordNotifier"]

logger = logging.getLogger(__name__)

UNKNOWN_CHANNEL = 10003  # Discord's error code: the id names no channel


class DiscordNotifier:
    """Implements `bot.notifications.Notifier` for one Discord client."""

    def __init__(self, client: discord.Client, owner_ids: frozenset[str]) -> None:
        self._client = client
        self._owner_ids = owner_ids

    async def _dm(self, user_id: str) -> discord.abc.Messageable:
        user = self._client.get_user(int(user_id)) or await self._client.fetch_user(int(user_id))
        return user.dm_channel or await user.create_dm()

    def _channel(self, chat: ChatRef) -> discord.abc.Messageable:
        return self._client.get_partial_messageable(int(chat.thread or chat.chat_id))

    async def _post(
        self, chat: ChatRef, parts: Sequence[str], view: discord.ui.View | None = None
    ) -> discord.Message | None:
        """Send `parts` into the chat (`view` under the last); the first message."""
        direct = not chat.is_group and chat.thread is None and chat.chat_id in self._owner_ids
        where = await self._dm(chat.chat_id) if direct else self._channel(chat)
        first = None
        for index, part in enumerate(parts):
            buttons = view if index == len(parts) - 1 else None
            try:
                sent = await send(where, part, view=buttons)
            except discord.NotFound as exc:
                if direct or exc.code != UNKNOWN_CHANNEL or index:
                    raise
                where = await self._dm(chat.chat_id)  # a user id, not a channel: their DMs
                sent = await send(where, part, view=buttons)
            first = first or sent
        return first

    async def ask_owner(self, owner_platform_user_id: str, request: ApprovalPending) -> None:
        """An approval request with Approve / Reject buttons, in the owner's DMs."""
        try:
            channel = await self._dm(owner_platform_user_id)
            content = render_rich(approval_card(request))
            await send(channel, content, view=approval_view(request.approval_id))
        except (discord.HTTPException, ValueError) as exc:
            logger.warning("Could not ask owner %s: %s", owner_platform_user_id, exc)

    async def deliver(self, chat: ChatRef, events: Sequence[TurnEvent]) -> None:
        """A finished turn (e.g. the outcome of an approval) sent where it was asked."""
        view = TurnView(chat)
        for event in events:
            view.add(event)
        final = view.final()
        turn = final.feedback_turn
        try:
            await self._post(chat, render_final(final), feedback_view(turn) if turn else None)
        except (discord.HTTPException, ValueError) as exc:
            logger.warning("Could not deliver to chat %s: %s", chat.chat_id, exc)

    async def message_owner(self, owner_platform_user_id: str, text: str) -> None:
        """A plain message to an owner, in their DMs."""
        chat = ChatRef("discord", owner_platform_user_id)
        try:
            await self._post(chat, split([Piece(text)]))
        except (discord.HTTPException, ValueError) as exc:
            logger.warning("Could not message owner %s: %s", owner_platform_user_id, exc)

    async def send_text(self, chat: ChatRef, text: str) -> str | None:
        """Plain text (its first line bold), split at Discord's limit; the first message's id,
        or None when Discord refused it."""
        head, _, rest = text.partition("\n")
        pieces = [Piece(head, Style.BOLD)] + ([Piece("\n" + rest)] if rest else [])
        try:
            first = await self._post(chat, split(pieces))
        except (discord.HTTPException, ValueError) as exc:
            logger.warning("Could not send a text to chat %s: %s", chat.chat_id, exc)
            return None
        return str(first.id) if first is not None else None
