"""The Bolt app of the Slack edge: which payloads Lore listens to, acknowledged at once and
handed to owned work, each Events API delivery handled once (`bot.dedupe.EventDeduper` on
Slack's `event_id`: Slack retries an event it thinks was not received, also over Socket
Mode). Slash commands and taps are never retried by Slack, so they are not de-duplicated.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Coroutine, Mapping
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from adapters.slack.blocks import ACTION_PREFIX
from adapters.slack.commands import run_slash_command
from adapters.slack.context import SlackContext
from adapters.slack.inbox import handle_message
from adapters.slack.jobs import Jobs
from adapters.slack.payloads import message_of
from adapters.slack.taps import handle_tap
from bot.dedupe import EventDeduper

__all__ = ["SDK_LOGGER", "build_app"]

# Bolt logs a refused request's body at INFO and the SDK can log request parameters (the
# app-level token among them) at DEBUG: their loggers stay at WARNING whatever LOG_LEVEL says.
SDK_LOGGER = logging.getLogger("adapters.slack.sdk")


class _Listeners:
    def __init__(self, edge: SlackContext, jobs: Jobs, deduper: EventDeduper) -> None:
        self._edge = edge
        self._jobs = jobs
        self._deduper = deduper

    async def message(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        self._event(body, event, mention=False)

    async def mention(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        self._event(body, event, mention=True)

    async def other_event(self) -> None:
        """Anything else subscribed is acknowledged, so Slack does not retry it."""

    def _event(self, body: Mapping[str, Any], event: Mapping[str, Any], *, mention: bool) -> None:
        message = message_of(event, bot_user_id=self._edge.bot_user_id, mention=mention)
        if message is None:
            return
        event_id = str(body.get("event_id") or f"{message.channel}:{message.ts}")
        self._jobs.start(self._once(event_id, handle_message(self._edge, message)), "event")

    async def _once(self, event_id: str, work: Coroutine[Any, Any, None]) -> None:
        async with self._deduper.once(event_id) as first:
            if not first:
                work.close()
                return
            await work

    async def command(self, ack: AsyncAck, command: dict[str, Any]) -> None:
        await ack()
        self._jobs.start(run_slash_command(self._edge, command), "command")

    async def action(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        self._jobs.start(handle_tap(self._edge, body), "tap")


def build_app(edge: SlackContext, jobs: Jobs, deduper: EventDeduper) -> AsyncApp:
    """The Bolt app: signature checks (HTTP mode), the bot's own events ignored, listeners
    that acknowledge before any work and leave the work to `jobs`."""
    SDK_LOGGER.setLevel(logging.WARNING)
    app = AsyncApp(
        name="lore",
        client=edge.outbox.client,
        signing_secret=edge.config.signing_secret or "",
        logger=SDK_LOGGER,
        process_before_response=True,  # listeners only hand work over: the ack is immediate
        attaching_conversation_kwargs_enabled=False,
    )
    listeners = _Listeners(edge, jobs, deduper)
    app.event("message")(listeners.message)
    app.event("app_mention")(listeners.mention)
    app.event(re.compile(".*"))(listeners.other_event)
    app.command("/lore")(listeners.command)
    app.action(re.compile(f"^{ACTION_PREFIX}"))(listeners.action)
    return app
