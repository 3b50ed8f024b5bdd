"""Button taps (`block_actions`): 👍/👎 feedback, an owner's Approve/Reject, a command's
confirmation and an owner's Private/Shared choice. Each goes to the `Bot`, which decides;
the person who tapped gets a short answer only they see, and a decided request or an
answered question is replaced in place (with `chat.update`, which works after a restart
too, or through the `response_url` for an ephemeral message)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from adapters.slack.blocks import Tap, parse_tap
from adapters.slack.config import PLATFORM
from adapters.slack.context import PREFIX, SlackContext
from adapters.slack.inbox import SORRY
from adapters.slack.ingest_chat import save_source
from adapters.slack.mrkdwn import escape, render_rich
from adapters.slack.outbox import Place
from adapters.slack.replies import Target, send_reply, tell
from adapters.slack.streaming import StatusMessage
from bot.errors import LoreError
from bot.events import ChatRef, Identity
from bot.replies import Message as LoreMessage

__all__ = ["handle_tap"]

logger = logging.getLogger(__name__)

STALE = "This button no longer works."


@dataclass(frozen=True, slots=True)
class _Tapped:
    """The message whose button was tapped, and who tapped it."""

    identity: Identity
    target: Target
    ts: str | None
    ephemeral: bool


async def _tapped(edge: SlackContext, body: Mapping[str, Any]) -> _Tapped | None:
    user = body.get("user") or {}
    container = body.get("container") or {}
    message = body.get("message") or {}
    channel = str((body.get("channel") or {}).get("id") or container.get("channel_id") or "")
    user_id = str(user.get("id") or "")
    if not user_id or not channel:
        return None
    thread = message.get("thread_ts") or container.get("thread_ts")
    private = await edge.directory.is_direct_with(user_id, channel)
    response_url = body.get("response_url")
    target = Target(Place(channel, thread), user_id, private, response_url or None)
    identity = await edge.directory.identity(user_id, user.get("name") or user.get("username"))
    ts = container.get("message_ts") or message.get("ts")
    return _Tapped(identity, target, str(ts) if ts else None, bool(container.get("is_ephemeral")))


async def _answer(edge: SlackContext, tapped: _Tapped, text: str) -> None:
    """A short answer only the person who tapped sees."""
    target = tapped.target
    if tapped.ephemeral and target.response_url:
        await edge.outbox.respond(target.response_url, escape(text))
    else:
        await edge.outbox.ephemeral(target.place, target.user, escape(text))


async def _replace(edge: SlackContext, tapped: _Tapped, mrkdwn: str) -> None:
    """Replace the tapped message (its buttons go)."""
    target = tapped.target
    if not tapped.ephemeral and tapped.ts is not None:
        await edge.outbox.update(target.place.channel, tapped.ts, mrkdwn)
    elif target.response_url:
        await edge.outbox.respond(target.response_url, mrkdwn, replace=True)


async def _feedback(edge: SlackContext, tapped: _Tapped, tap: Tap) -> None:
    value = 1 if tap.choice == "+1" else -1
    reply = await edge.bot.record_feedback(tapped.identity, tap.target, value)
    await _answer(edge, tapped, "".join(span.text for span in reply.body))


async def _decision(edge: SlackContext, tapped: _Tapped, tap: Tap) -> None:
    decision = await edge.bot.decide_approval(
        tapped.identity, tap.target, approve=tap.choice == "y"
    )
    if decision.card is not None:
        await _replace(edge, tapped, render_rich(decision.card))
    await _answer(edge, tapped, decision.answer)


def _chat(tapped: _Tapped) -> ChatRef:
    place = tapped.target.place
    return ChatRef(PLATFORM, place.channel, is_group=not tapped.target.private)


async def _confirm(edge: SlackContext, tapped: _Tapped, tap: Tap) -> None:
    reply = await edge.bot.confirm(
        tapped.identity, _chat(tapped), tap.target, tap.choice == "y", prefix=PREFIX
    )
    if isinstance(reply, LoreMessage):
        await _replace(edge, tapped, render_rich(reply.body))
    else:
        await send_reply(edge.outbox, tapped.target, reply)


async def _scope(edge: SlackContext, tapped: _Tapped, tap: Tap) -> None:
    try:
        source = await edge.bot.choose_scope(tapped.identity, tap.target)
    except LoreError as exc:
        await _answer(edge, tapped, str(exc))
        return
    status = StatusMessage(edge.outbox, tapped.target.place, interval=edge.config.stream_interval)
    if tapped.ts is not None and not tapped.ephemeral:
        status.adopt(tapped.ts)
    status.set(escape("📥 Working on it…"))
    await save_source(edge, tapped.identity, status, source, shared=tap.choice == "s")


HANDLERS = {"fb": _feedback, "ap": _decision, "cf": _confirm, "in": _scope}


async def handle_tap(edge: SlackContext, body: Mapping[str, Any]) -> None:
    """Do what the tapped button says; the boundary of that work."""
    tapped = await _tapped(edge, body)
    if tapped is None:
        return
    actions = body.get("actions") or []
    tap = parse_tap(actions[0]) if actions and isinstance(actions[0], Mapping) else None
    try:
        if tap is None:
            await _answer(edge, tapped, STALE)
            return
        await HANDLERS[tap.kind](edge, tapped, tap)
    except LoreError as exc:
        await tell(edge.outbox, tapped.target, str(exc))
    except Exception:  # the tap's boundary: log, answer politely
        logger.exception("A Slack button tap could not be handled")
        await tell(edge.outbox, tapped.target, SORRY)
