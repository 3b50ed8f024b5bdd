"""A person's message to Lore (a direct message, or a mention in a channel): the sources it
carries are saved, anything else is a question. This is the boundary of that work: a
refusal or a failure ends in one polite message to the person, never in silence."""

from __future__ import annotations

import logging

from adapters.slack.answers import answer_question
from adapters.slack.context import SlackContext
from adapters.slack.ingest_chat import offer_source
from adapters.slack.outbox import Place
from adapters.slack.payloads import SlackMessage, sources_of
from adapters.slack.replies import Target, tell
from bot.errors import LoreError

__all__ = ["EMPTY", "SORRY", "handle_message"]

logger = logging.getLogger(__name__)

SORRY = "Sorry, something went wrong on my side. Please try again in a moment."
EMPTY = "Send me a question, a document or a link."


async def handle_message(edge: SlackContext, message: SlackMessage) -> None:
    """Save what the message carries, or answer it."""
    target = Target(
        Place(message.channel, message.reply_thread), message.user, private=not message.is_group
    )
    try:
        sources = sources_of(message)
        for source in sources:
            await offer_source(edge, message, source)
        if sources:
            return
        if not message.text.strip():
            await tell(edge.outbox, target, EMPTY)
            return
        await answer_question(edge, message)
    except LoreError as exc:
        await tell(edge.outbox, target, str(exc))
    except Exception:  # the turn boundary: log, answer politely
        logger.exception("A Slack message could not be handled")
        await tell(edge.outbox, target, SORRY)
