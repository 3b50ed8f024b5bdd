"""Files shared with Lore on Slack: `files.info` says the file's size and where to get it,
the size is checked before anything is downloaded, then `url_private_download` is read with
the bot token, and no further than the limit. Slack answers a refused token with its HTML
sign-in page, so an HTML answer for a file that is not HTML is an authorisation error."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.sources import too_big

__all__ = ["DOWNLOAD_FAILED", "FORBIDDEN", "FileDownloader"]

logger = logging.getLogger(__name__)

DOWNLOAD_FAILED = "I could not download that file from Slack. Please try again."
FORBIDDEN = (
    "Slack did not let me read that file. The owner may need to add the files:read "
    "permission to the Slack app and reinstall it."
)
CHUNK = 64 * 1024


def _is_html(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() in {"text/html", "application/xhtml+xml"}


class FileDownloader:
    """Downloads files people share with the bot."""

    def __init__(
        self, client: AsyncWebClient, session: aiohttp.ClientSession, *, bot_token: str
    ) -> None:
        self._client = client
        self._session = session
        self._authorization = f"Bearer {bot_token}"

    async def fetch(self, file_id: str, limit: int) -> bytes | str:
        """The file's bytes, or the polite reason there are none."""
        try:
            response = await self._client.files_info(file=file_id)
        except SlackApiError as exc:
            logger.info("files.info failed: %s", exc.response.get("error"))
            return FORBIDDEN if exc.response.get("error") == "missing_scope" else DOWNLOAD_FAILED
        info = response.get("file")
        if not isinstance(info, Mapping):
            return DOWNLOAD_FAILED
        size = info.get("size")
        refusal = too_big(int(size) if isinstance(size, int | float) else None, limit)
        if refusal is not None:
            return refusal
        url = info.get("url_private_download") or info.get("url_private")
        if not isinstance(url, str) or not url:
            return DOWNLOAD_FAILED
        try:
            return await self._download(url, info, limit)
        except (aiohttp.ClientError, TimeoutError) as exc:
            logger.info("File download failed: %s", type(exc).__name__)
            return DOWNLOAD_FAILED

    async def _download(self, url: str, info: Mapping[str, Any], limit: int) -> bytes | str:
        headers = {"Authorization": self._authorization}
        # No redirects: the token goes to the URL Slack named and nowhere else.
        async with self._session.get(url, headers=headers, allow_redirects=False) as answer:
            if answer.status != 200:
                logger.info("File download answered HTTP %d", answer.status)
                refused = answer.status in {401, 403} or 300 <= answer.status < 400
                return FORBIDDEN if refused else DOWNLOAD_FAILED
            expected_html = _is_html(str(info.get("mimetype") or ""))
            if _is_html(answer.headers.get("Content-Type", "")) and not expected_html:
                logger.warning("Slack answered a file download with HTML: the token was refused")
                return FORBIDDEN
            data = bytearray()
            async for chunk in answer.content.iter_chunked(CHUNK):
                data += chunk
                if len(data) > limit:
                    return too_big(len(data), limit) or DOWNLOAD_FAILED
            return bytes(data)
