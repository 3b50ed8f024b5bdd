"""A question becomes a `Bot` turn whose events come back to Slack: in a direct message the
answer is shown while it is written, where the question was (streamed in a thread, with the
assistant status while tools run; an edited message at the top level); in a channel nothing
is shown until the verified final answer is posted in the thread of the mention. The final answer
is mrkdwn with numbered citations, its Sources and 👍/👎. What to show when is the
`bot.turn_view.TurnView`'s decision. A voice clip's events (`bot.hear`: listening, what was
heard, then the turn) are shown the same way."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from adapters.slack.blocks import feedback_buttons
from adapters.slack.context import SlackContext
from adapters.slack.mrkdwn import final_pieces, split
from adapters.slack.outbox import Place
from adapters.slack.payloads import SlackMessage
from adapters.slack.replies import Target, tell
from adapters.slack.streaming import LiveAnswer
from bot.events import AnswerDelta, ChatEvent, Listening, ToolStatus
from bot.turn_view import TurnView

__all__ = ["answer_events", "answer_question", "live_answer"]

logger = logging.getLogger(__name__)


async def answer_question(edge: SlackContext, message: SlackMessage) -> None:
    """Answer the words of `message` where it was written."""
    identity = await edge.directory.identity(message.user)
    events = edge.bot.handle_message(identity, message.chat, message.text)
    await answer_events(edge, message, live_answer(edge, message), events)


def live_answer(edge: SlackContext, message: SlackMessage) -> LiveAnswer | None:
    """The answer shown while it is written, in a direct message (None in a channel)."""
    if message.chat.is_group:
        return None
    return LiveAnswer(
        edge.outbox,
        place=Place(message.channel, message.reply_thread),
        user=message.user,
        team=message.team,
        capabilities=edge.capabilities,
        interval=edge.config.stream_interval,
    )


async def answer_events(
    edge: SlackContext,
    message: SlackMessage,
    live: LiveAnswer | None,
    events: AsyncIterator[ChatEvent],
) -> None:
    """Show a turn's events (a message's, or a voice clip's) as they come, then the final
    answer where the message was written."""
    chat = message.chat
    place = Place(message.channel, message.reply_thread)
    view = TurnView(chat)
    async for event in events:
        view.add(event)
        if live is None or view.preview() is None:
            continue
        if isinstance(event, Listening):
            await live.status(event.message, icon="")
        elif isinstance(event, ToolStatus):
            await live.status(event.message)
        elif isinstance(event, AnswerDelta):
            await live.text(view.streamed if view.heard is None else view.preview() or "")
    final = view.final()
    if view.done is not None and view.done.turn_id == "":
        # Refused before any turn began (a stranger): one plain message, no buttons.
        await tell(edge.outbox, Target(place, message.user, private=not chat.is_group), final.text)
        return
    parts = split(final_pieces(final))
    buttons = feedback_buttons(final.feedback_turn) if final.feedback_turn else None
    if live is not None:
        await live.finish(parts, buttons)
    else:
        await edge.outbox.post_parts(place, parts, buttons)
    if view.done is not None:
        logger.info(
            "Slack turn %s in %s: %s, %d ms",
            view.done.turn_id or "-",
            "channel" if chat.is_group else "direct message",
            view.done.outcome,
            view.done.latency_ms,
        )
