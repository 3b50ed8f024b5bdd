"""A question becomes a `Bot` turn whose events come back to Slack: in a direct message the
answer is shown while it is written, where the question was (streamed in a thread, with the
assistant status while tools run; an edited message at the top level); in a channel nothing
is shown until the verified final answer is posted in the thread of the mention. The final answer
is mrkdwn with numbered citations, its Sources and 👍/👎. What to show when is the
`bot.turn_view.TurnView`'s decision."""

from __future__ import annotations

import logging

from adapters.slack.blocks import feedback_buttons
from adapters.slack.context import SlackContext
from adapters.slack.mrkdwn import final_pieces, split
from adapters.slack.outbox import Place
from adapters.slack.payloads import SlackMessage
from adapters.slack.replies import Target, tell
from adapters.slack.streaming import LiveAnswer
from bot.events import AnswerDelta, ToolStatus
from bot.turn_view import TurnView

__all__ = ["answer_question"]

logger = logging.getLogger(__name__)


async def answer_question(edge: SlackContext, message: SlackMessage) -> None:
    """Answer the words of `message` where it was written."""
    chat = message.chat
    identity = await edge.directory.identity(message.user)
    place = Place(message.channel, message.reply_thread)
    live = None
    if not chat.is_group:
        live = LiveAnswer(
            edge.outbox,
            place=place,
            user=message.user,
            team=message.team,
            capabilities=edge.capabilities,
            interval=edge.config.stream_interval,
        )
    view = TurnView(chat)
    async for event in edge.bot.handle_message(identity, chat, message.text):
        view.add(event)
        if live is None or view.preview() is None:
            continue
        if isinstance(event, ToolStatus):
            await live.status(event.message)
        elif isinstance(event, AnswerDelta):
            await live.text(view.streamed)
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
