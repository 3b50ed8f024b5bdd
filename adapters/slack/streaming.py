"""Text that grows in a Slack conversation: an answer written while the model writes it, the
assistant status while tools run, and a status message edited while a source is saved.

Slack streams only replies in a thread, so an answer to a question asked in a thread (the
agent view's threads, or a thread in a direct message) streams with Slack's streaming API
(`chat.startStream` / `appendStream` / `stopStream`) and shows the assistant status while
tools run. An answer to a question at the top level of a direct message — or anywhere the
workspace does not answer those methods (learnt, for good, from the first refusal) — is one
message posted where the question was and edited with `chat.update`. Either way at most
one call per `interval` (`bot.throttle.Throttle`), and the final text always replaces the
preview, so a correction by the verifier wins.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from slack_sdk.errors import SlackApiError

from adapters.slack.blocks import Block
from adapters.slack.mrkdwn import escape
from adapters.slack.outbox import Outbox, Place
from bot.throttle import Throttle

__all__ = ["Capabilities", "LiveAnswer", "StatusMessage"]

logger = logging.getLogger(__name__)

# Errors that mean "this workspace (or token) cannot do that at all", not "not this time".
UNSUPPORTED = {
    "unknown_method",
    "missing_scope",
    "not_allowed_token_type",
    "not_allowed",
    "feature_not_enabled",
    "method_deprecated",
}
MAX_APPEND = 12_000  # characters of markdown per streaming call


def _error(exc: SlackApiError) -> str:
    return str(exc.response.get("error", "")) if exc.response is not None else ""


class Capabilities:
    """What the Web API of this workspace answers, learnt from its first refusal."""

    def __init__(self, *, streaming: bool = True, status: bool = True) -> None:
        self.streaming = streaming
        self.status = status


_STATUS_ICONS = ("⏳", "🎙")  # a preview that says what is happening: edited, never streamed


class LiveAnswer:
    """One answer in a direct message, at `place` (where the question was): a stream (or an
    edited message) while it is written, then the final mrkdwn parts with buttons under the
    last."""

    def __init__(
        self,
        outbox: Outbox,
        *,
        place: Place,
        user: str,
        team: str | None,
        capabilities: Capabilities,
        interval: float = 1.0,
    ) -> None:
        self._outbox = outbox
        self._place = place
        self._user = user
        self._team = team
        self._caps = capabilities
        self._throttle = Throttle(self._show, interval)
        self._stream_ts: str | None = None
        self._streamed = ""
        self._message_ts: str | None = None
        self._status_shown = False

    async def status(self, text: str, *, icon: str = "⏳") -> None:
        """What the agent is doing (a tool runs, a voice clip is transcribed): the assistant
        status in a thread where Slack has it, else a preview led by `icon` while no answer
        text is shown yet."""
        if self._place.thread and self._caps.status and await self._set_status(text):
            return
        if not self._streams and not self._streamed:
            await self._throttle.push(escape(f"{icon} {text}".strip()))

    @property
    def _streams(self) -> bool:
        """Whether the answer is (or will be) a stream."""
        return self._stream_ts is not None or (
            self._caps.streaming and self._place.thread is not None and self._message_ts is None
        )

    async def text(self, answer: str) -> None:
        """The answer so far (the whole of it); shown soon. Escaped like all text on Slack,
        so a model's `<!channel>` stays words, never a broadcast."""
        if answer.strip():
            await self._throttle.push(escape(answer))

    async def _set_status(self, text: str) -> bool:
        try:
            await self._outbox.client.assistant_threads_setStatus(
                channel_id=self._place.channel,
                thread_ts=self._place.thread or "",
                status=text,
            )
        except SlackApiError as exc:  # cosmetic: stop asking after the first refusal
            if _error(exc) != "ratelimited":
                self._caps.status = False
            logger.info("Assistant status not shown: %s", _error(exc))
            return False
        self._status_shown = bool(text)
        return True

    async def _show(self, text: str) -> None:
        if not self._streams or text.startswith(_STATUS_ICONS):
            await self._edit(text)
        elif self._stream_ts is None:
            await self._start(text)
        else:
            await self._append(text)

    async def _start(self, text: str) -> None:
        try:
            response = await self._outbox.client.chat_startStream(
                channel=self._place.channel,
                thread_ts=self._place.thread or "",
                markdown_text=text[:MAX_APPEND],
                recipient_user_id=self._user,
                recipient_team_id=self._team,
                unfurl_links=False,  # not among the method's documented arguments; never unfurl
                unfurl_media=False,
            )
        except SlackApiError as exc:
            if _error(exc) in UNSUPPORTED:
                self._caps.streaming = False
            logger.info("Streaming unavailable (%s); editing a message instead", _error(exc))
            await self._edit(text)
            return
        self._stream_ts = str(response.get("ts", ""))
        self._streamed = text[:MAX_APPEND]

    async def _append(self, text: str) -> None:
        if not text.startswith(self._streamed) or len(text) == len(self._streamed):
            return
        delta = text[len(self._streamed) :][:MAX_APPEND]
        try:
            await self._outbox.client.chat_appendStream(
                channel=self._place.channel,
                ts=self._stream_ts or "",
                markdown_text=delta,
            )
        except SlackApiError as exc:  # a preview is best effort; the final text replaces it
            logger.info("Stream append failed: %s", _error(exc))
            return
        self._streamed += delta

    async def _edit(self, text: str) -> None:
        try:
            if self._message_ts is None:
                self._message_ts = await self._outbox.post(self._place, text)
            else:
                await self._outbox.update(self._place.channel, self._message_ts, text)
        except SlackApiError as exc:
            logger.info("Answer preview failed: %s", _error(exc))

    async def finish(self, parts: Sequence[str], buttons: Block | None = None) -> None:
        """Replace the preview with the final parts; `buttons` go under the last one."""
        await self._throttle.close()
        place = self._place
        first = self._message_ts
        if self._stream_ts is not None:
            first = self._stream_ts
            try:
                await self._outbox.client.chat_stopStream(channel=place.channel, ts=self._stream_ts)
            except SlackApiError as exc:
                logger.info("Stream stop failed: %s", _error(exc))
        if self._status_shown:
            await self._set_status("")
        rest = list(parts)
        if first is not None and rest:
            only = buttons if len(rest) == 1 else None
            await self._outbox.update(place.channel, first, rest.pop(0), only)
        await self._outbox.post_parts(place, rest, buttons)


class StatusMessage:
    """One message that says what is happening (fetching, reading, saved), edited in place."""

    def __init__(self, outbox: Outbox, place: Place, *, interval: float = 1.0) -> None:
        self._outbox = outbox
        self._place = place
        self._ts: str | None = None
        self._throttle = Throttle(self._show, interval)
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self, text: str) -> None:
        """Post the status message."""
        self._ts = await self._outbox.post(self._place, text)

    def adopt(self, ts: str) -> None:
        """Use a message this bot posted earlier (the one whose buttons were tapped)."""
        self._ts = ts

    def set(self, text: str) -> None:
        """Show `text` soon (safe to call from a synchronous progress callback)."""
        task = asyncio.get_running_loop().create_task(self._throttle.push(text))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _show(self, text: str) -> None:
        try:
            if self._ts is None:
                await self.start(text)
            else:
                await self._outbox.update(self._place.channel, self._ts, text)
        except SlackApiError as exc:
            logger.warning("Status update failed: %s", _error(exc))

    async def done(self, text: str) -> None:
        """The final status (mrkdwn); replaces whatever was shown."""
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._throttle.close()
        if self._ts is None:
            await self._outbox.post(self._place, text)
        else:
            await self._outbox.update(self._place.channel, self._ts, text)
