"""Downloading a platform's file with a cap that holds while the bytes arrive: whatever size
the platform announced, the download stops as soon as it passes the cap (Telegram and
Discord; Slack and Matrix stream through their own HTTP clients the same way)."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import httpx

from bot.sources import too_big

__all__ = ["capped_download"]

logger = logging.getLogger(__name__)


async def capped_download(
    url: str,
    limit: int,
    seconds: float,
    *,
    failed: str,
    headers: Mapping[str, str] | None = None,
) -> bytes | str:
    """The file's bytes, or why there are none: `failed` when the download fails, the size
    refusal once more than `limit` bytes have arrived. The URL is never logged (a Telegram
    file URL holds the bot token)."""
    try:
        async with (
            httpx.AsyncClient(timeout=seconds, follow_redirects=False) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            if response.status_code != 200:
                logger.info("File download answered %d", response.status_code)
                return failed
            data = bytearray()
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) > limit:
                    return too_big(len(data), limit) or failed
            return bytes(data)
    except httpx.HTTPError as exc:
        logger.info("File download failed: %s", type(exc).__name__)
        return failed
