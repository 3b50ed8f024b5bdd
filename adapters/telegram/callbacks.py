"""Button taps: 👍/👎 feedback, an owner's Approve/Reject, the /forget confirmation and an
owner's Private/Shared choice. Each tap is answered, so the client stops its spinner."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from telegram import CallbackQuery, Chat, Message
from telegram.constants import ParseMode

from adapters.telegram.buttons import Callback
from adapters.telegram.context import EdgeContext, identity_of
from adapters.telegram.ingest_chat import run_ingest
from adapters.telegram.rendering import escape
from adapters.telegram.streaming import StatusMessage

__all__ = ["handle_tap"]

logger = logging.getLogger(__name__)

DECISION_REPLIES = {
    "already_decided": "This request was already decided.",
    "expired": "This request has expired.",
    "unknown": "There is no such request.",
    "not_owner": "Only an owner can decide this.",
}


async def _feedback(edge: EdgeContext, query: CallbackQuery, tap: Callback) -> None:
    value = 1 if tap.choice == "+1" else -1
    recorded = await edge.bot.record_feedback(identity_of(query.from_user), tap.target, value)
    await query.answer("Thanks for the feedback!" if recorded else "I could not record that.")


async def _decision(edge: EdgeContext, query: CallbackQuery, tap: Callback) -> None:
    approve = tap.choice == "y"
    result = await edge.bot.decide_approval(
        identity_of(query.from_user), tap.target, approve=approve
    )
    if result.outcome != "decided":
        await query.answer(DECISION_REPLIES.get(result.outcome, result.outcome), show_alert=True)
        return
    await query.answer("Approved." if approve else "Rejected.")
    approval = result.approval
    when = approval.decided_at if approval and approval.decided_at else datetime.now(UTC)
    verdict = "✅ Approved" if approve else "❌ Rejected"
    summary = escape(approval.summary) if approval else ""
    text = (
        f"{summary}\n\n<b>{verdict}</b> by {escape(result.decided_by or 'an owner')}"
        f" at {when.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    )
    if isinstance(query.message, Message):
        await query.message.edit_text(text, parse_mode=ParseMode.HTML, reply_markup=None)


async def _forget(edge: EdgeContext, query: CallbackQuery, tap: Callback) -> None:
    message = query.message
    if not isinstance(message, Message) or message.chat.type != Chat.PRIVATE:
        await query.answer("Use /forget in a private chat with me.", show_alert=True)
        return
    if tap.choice != "y":
        await query.answer()
        await message.edit_text("Nothing was deleted.", reply_markup=None)
        return
    user = await edge.bot.conversations.user_for(identity_of(query.from_user))
    if user is None:
        await query.answer("I don't know you yet.", show_alert=True)
        return
    documents = len(await edge.bot.sources(user.id))
    await edge.bot.forget(user.id)
    await query.answer("Deleted.")
    await message.edit_text(f"🗑 Deleted your {documents} private documents.", reply_markup=None)


async def _scope(edge: EdgeContext, query: CallbackQuery, tap: Callback) -> None:
    source = edge.pending.peek(tap.target)
    message = query.message
    if source is None or not isinstance(message, Message):
        await query.answer("That choice has expired; please send it again.", show_alert=True)
        return
    if source.user_id != query.from_user.id:
        await query.answer("Only the person who sent it can choose.", show_alert=True)
        return
    edge.pending.take(tap.target)
    user = await edge.bot.conversations.user_for(identity_of(query.from_user))
    if user is None:
        await query.answer("I don't know you yet.", show_alert=True)
        return
    await query.answer()
    shared = tap.choice == "s"
    status = StatusMessage(message.get_bot(), message.chat_id, interval=edge.config.stream_interval)
    status.adopt(message)
    status.set("📥 Working on it…")
    await run_ingest(
        edge.bot,
        message.get_bot(),
        status,
        source,
        owner_id=None if shared else user.id,
        limit=edge.config.download_limit,
    )


HANDLERS = {"fb": _feedback, "ap": _decision, "fg": _forget, "in": _scope}


async def handle_tap(edge: EdgeContext, query: CallbackQuery, tap: Callback | None) -> None:
    """Do what the tapped button says."""
    if tap is None:
        await query.answer("This button no longer works.")
        return
    await HANDLERS[tap.kind](edge, query, tap)
