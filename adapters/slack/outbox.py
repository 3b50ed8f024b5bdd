"""Everything Lore posts on Slack goes through here: messages, edits, ephemerals and
`response_url` replies, each with link and media unfurls off (invariant 9), mrkdwn text as
the fallback of its blocks, and buttons under the last part of a long message."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import aiohttp
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from adapters.slack.blocks import Block, section

__all__ = ["Outbox", "Place", "ResponseError"]

# Invariant 9: no message of Lore's is ever unfurled (a preview would fetch a URL unasked):
# every call below that creates a message passes unfurl_links=False, unfurl_media=False.
FAILED_RESPONSE = 400


@dataclass(frozen=True, slots=True)
class Place:
    """A conversation, and the thread in it (None: the top level)."""

    channel: str
    thread: str | None = None


def _blocks(text: str, buttons: Block | None) -> list[Block] | None:
    return [section(text), buttons] if buttons is not None else None


class ResponseError(Exception):
    """Slack refused a `response_url` reply (expired after 30 minutes or used 5 times)."""


class Outbox:
    """Posts for one Slack edge through its Web API client."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        session: aiohttp.ClientSession | None,
        retry_handlers: list[AsyncRetryHandler],
    ) -> None:
        self.client = client
        self._session = session
        self._retry_handlers = retry_handlers

    async def post(self, place: Place, text: str, buttons: Block | None = None) -> str:
        """Post a message (mrkdwn, buttons under it); its `ts`."""
        response = await self.client.chat_postMessage(
            channel=place.channel,
            thread_ts=place.thread,
            text=text,
            blocks=_blocks(text, buttons),
            unfurl_links=False,
            unfurl_media=False,
        )
        return str(response.get("ts", ""))

    async def post_parts(
        self, place: Place, parts: Sequence[str], buttons: Block | None = None
    ) -> list[str]:
        """Post the parts of a long message in order; `buttons` go under the last one."""
        sent = []
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            sent.append(await self.post(place, part, buttons if last else None))
        return sent

    async def update(self, channel: str, ts: str, text: str, buttons: Block | None = None) -> None:
        """Replace a message's text (and its buttons: none unless given)."""
        await self.client.chat_update(
            channel=channel, ts=ts, text=text, blocks=_blocks(text, buttons) or []
        )

    async def ephemeral(
        self, place: Place, user: str, text: str, buttons: Block | None = None
    ) -> None:
        """A message only `user` sees, in a conversation the bot is in."""
        await self.client.chat_postEphemeral(
            channel=place.channel,
            user=user,
            thread_ts=place.thread,
            text=text,
            blocks=_blocks(text, buttons),
        )

    async def respond(
        self,
        response_url: str,
        text: str,
        buttons: Block | None = None,
        *,
        ephemeral: bool = True,
        replace: bool = False,
    ) -> None:
        """Reply through a slash command's or a tap's `response_url`: only to the person
        (`ephemeral`) or to the conversation, as a new message or replacing the tapped one."""
        webhook = AsyncWebhookClient(
            response_url, session=self._session, retry_handlers=self._retry_handlers
        )
        response = await webhook.send(
            text=text,
            blocks=_blocks(text, buttons) or ([] if replace else None),
            response_type="ephemeral" if ephemeral else "in_channel",
            replace_original=replace,
            unfurl_links=False,
            unfurl_media=False,
        )
        if response.status_code >= FAILED_RESPONSE:
            raise ResponseError(f"response_url answered {response.status_code}")
