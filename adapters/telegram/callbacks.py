"""Button taps: 👍/👎 feedback, an owner's Approve/Reject, a command's confirmation and an
owner's Private/Shared choice. Each goes to the `Bot`, which decides; each tap is
answered, so the client stops its spinner."""

from __future__ import annotations

import logging

from telegram import CallbackQuery, Message
from telegram.constants import ParseMode

from adapters.telegram.buttons import Callback
from adapters.telegram.context import EdgeContext, chat_ref, identity_of
from adapters.telegram.ingest_chat import save_source
from adapters.telegram.rendering import render_rich
from adapters.telegram.replies import send_reply
from adapters.telegram.streaming import StatusMessage
from bot.errors import LoreError
from bot.replies import Message as LoreMessage
from bot.replies import plain_text

__all__ = ["handle_tap"]

logger = logging.getLogger(__name__)


async def _feedback(edge: EdgeContext, query: CallbackQuery, tap: Callback) -> None:
    value = 1 if tap.choice == "+1" else -1
    reply = await edge.bot.record_feedback(identity_of(query.from_user), tap.target, value)
    await query.answer(plain_text(reply.body))


async def _decision(edge: EdgeContext, query: CallbackQuery, tap: Callback) -> None:
    approve = tap.choice == "y"
    decision = await edge.bot.decide_approval(
        identity_of(query.from_user), tap.target, approve=approve
    )
    await query.answer(decision.answer, show_alert=not decision.decided)
    if decision.card is not None and isinstance(query.message, Message):
        await query.message.edit_text(
            render_rich(decision.card), parse_mode=ParseMode.HTML, reply_markup=None
        )


async def _confirm(edge: EdgeContext, query: CallbackQuery, tap: Callback) -> None:
    message = query.message
    if not isinstance(message, Message):
        await query.answer("This button no longer works.", show_alert=True)
        return
    reply = await edge.bot.confirm(
        identity_of(query.from_user), chat_ref(message.chat, message), tap.target, tap.choice == "y"
    )
    await query.answer()
    if isinstance(reply, LoreMessage):
        await message.edit_text(
            render_rich(reply.body), parse_mode=ParseMode.HTML, reply_markup=None
        )
    else:
        await send_reply(message, reply)


async def _scope(edge: EdgeContext, query: CallbackQuery, tap: Callback) -> None:
    message = query.message
    identity = identity_of(query.from_user)
    try:
        source = await edge.bot.choose_scope(identity, tap.target)
    except LoreError as exc:
        await query.answer(str(exc), show_alert=True)
        return
    if not isinstance(message, Message):
        await query.answer("That choice has expired; please send it again.", show_alert=True)
        return
    await query.answer()
    status = StatusMessage(message.get_bot(), message.chat_id, interval=edge.config.stream_interval)
    status.adopt(message)
    status.set("📥 Working on it…")
    await save_source(edge, identity, status, source, shared=tap.choice == "s")


HANDLERS = {"fb": _feedback, "ap": _decision, "cf": _confirm, "in": _scope}


async def handle_tap(edge: EdgeContext, query: CallbackQuery, tap: Callback | None) -> None:
    """Do what the tapped button says."""
    if tap is None:
        await query.answer("This button no longer works.")
        return
    await HANDLERS[tap.kind](edge, query, tap)
