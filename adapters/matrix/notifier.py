"""The `Notifier` for Matrix: approval requests (answered with ✅/❌ reactions or
`!approve ID`) in each owner's direct chat, outcomes delivered into the room (and thread)
where they were asked, plain messages to owners, and texts such as digests, sent outside any
turn. A `ChatRef` names a room (`!…`), except an owner's notice, whose chat id is the
owner's Matrix ID (`@…`): that goes to their direct chat."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from adapters.matrix.answers import take_feedback
from adapters.matrix.context import EdgeContext
from adapters.matrix.html import Formatted, plain, render_final, render_rich
from adapters.matrix.outbox import SendError
from adapters.matrix.replies import approval_choices, ask
from adapters.matrix.rooms import DirectRooms
from bot.approvals import approval_card
from bot.events import ApprovalPending, ChatRef, TurnEvent
from bot.replies import bold, rich
from bot.turn_view import TurnView

__all__ = ["MatrixNotifier"]

logger = logging.getLogger(__name__)


class MatrixNotifier:
    """Implements `bot.notifications.Notifier` for one Matrix client."""

    def __init__(self, edge: EdgeContext, rooms: DirectRooms) -> None:
        self._edge = edge
        self._rooms = rooms

    async def _room(self, chat: ChatRef) -> str:
        if chat.chat_id.startswith("@"):
            return await self._rooms.with_user(chat.chat_id)
        return chat.chat_id

    async def _post(self, chat: ChatRef, parts: Sequence[Formatted]) -> str:
        """Send `parts` into the chat (its thread in a group); the last event id."""
        room_id = await self._room(chat)
        thread = chat.thread if chat.is_group else None
        last = ""
        for part in parts:
            last = await self._edge.outbox.send(room_id, part, thread=thread)
        return last

    async def ask_owner(self, owner_platform_user_id: str, request: ApprovalPending) -> None:
        """An approval request in the owner's direct chat, answered by a reaction."""
        try:
            room_id = await self._rooms.with_user(owner_platform_user_id)
            marker = ("ap", request.approval_id)
            choices = approval_choices(request.approval_id)
            await ask(self._edge, room_id, render_rich(approval_card(request)), marker, choices)
        except (SendError, TimeoutError) as exc:
            logger.warning("Could not ask owner %s: %s", owner_platform_user_id, exc)

    async def deliver(self, chat: ChatRef, events: Sequence[TurnEvent]) -> None:
        """A finished turn (e.g. the outcome of an approval) sent where it was asked."""
        view = TurnView(chat)
        for event in events:
            view.add(event)
        final = view.final()
        try:
            last = await self._post(chat, render_final(final))
            if final.feedback_turn:
                room_id = await self._room(chat)
                await take_feedback(self._edge, room_id, last, final.feedback_turn)
        except (SendError, TimeoutError) as exc:
            logger.warning("Could not deliver to chat %s: %s", chat.chat_id, exc)

    async def message_owner(self, owner_platform_user_id: str, text: str) -> None:
        """A plain message to an owner, in their direct chat."""
        try:
            await self._post(ChatRef("matrix", owner_platform_user_id), [plain(text)])
        except (SendError, TimeoutError) as exc:
            logger.warning("Could not message owner %s: %s", owner_platform_user_id, exc)

    async def send_text(self, chat: ChatRef, text: str) -> str | None:
        """Plain text (its first line bold); the event id, or None when it was not taken."""
        head, _, rest = text.partition("\n")
        body = render_rich(rich(bold(head), "\n" + rest if rest else ""))
        try:
            return await self._post(chat, [body])
        except (SendError, TimeoutError) as exc:
            logger.warning("Could not send a text to chat %s: %s", chat.chat_id, exc)
            return None
