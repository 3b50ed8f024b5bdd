"""The Telegram edge's lifecycle: build the PTB Application (rate limiter, de-duplicating
update processor, link previews off, handlers), register the notifier and the registry's
command menus, then long-poll or serve a webhook inside the caller's event loop until the
`running` block ends."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from telegram import LinkPreviewOptions, Update
from telegram.ext import (
    AIORateLimiter,
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    Defaults,
    MessageHandler,
    filters,
)

from adapters.telegram.context import PLATFORM, EdgeContext, TelegramConfig
from adapters.telegram.dedupe import DedupingProcessor
from adapters.telegram.handlers import Handlers
from adapters.telegram.notifier import TelegramNotifier
from adapters.telegram.replies import register_menus
from adapters.telegram.webhook import WebhookServer
from bot.dedupe import EventDeduper, EventLedger
from bot.edge import RunningEdge
from bot.service import Bot

__all__ = ["RunningTelegram", "TelegramEdge", "build_application"]

logger = logging.getLogger(__name__)

TelegramApp = Application[Any, Any, Any, Any, Any, Any]
# Invariant 9: no message of Lore's is ever unfurled (a preview would fetch a URL unasked).
NO_PREVIEWS = Defaults(link_preview_options=LinkPreviewOptions(is_disabled=True))


def build_application(config: TelegramConfig, bot: Bot, ledger: EventLedger) -> TelegramApp:
    """A configured, not yet initialised, PTB Application for the Lore `Bot`."""
    limiter = (
        AIORateLimiter(max_retries=config.max_retries)
        if config.rate_limit
        else AIORateLimiter(overall_max_rate=0, group_max_rate=0, max_retries=config.max_retries)
    )
    processor = DedupingProcessor(
        EventDeduper(ledger), max_concurrent_updates=config.concurrent_updates
    )
    builder = (
        ApplicationBuilder()
        .rate_limiter(limiter)
        .token(config.token)
        .defaults(NO_PREVIEWS)
        .http_version("1.1")
        .get_updates_http_version("1.1")
        .concurrent_updates(processor)
    )
    if config.api_root:
        root = config.api_root.rstrip("/")
        builder = builder.base_url(f"{root}/bot").base_file_url(f"{root}/file/bot")
    if config.webhook_url:
        builder = builder.updater(None)
    application = builder.build()
    handlers = Handlers(EdgeContext(bot=bot, config=config))
    application.add_handler(
        MessageHandler(filters.UpdateType.MESSAGE & ~filters.StatusUpdate.ALL, handlers.on_message)
    )
    application.add_handler(CallbackQueryHandler(handlers.on_tap))
    application.add_error_handler(handlers.on_error)
    return application


@dataclass
class RunningTelegram(RunningEdge):
    """The running Telegram edge: its Application, and the webhook server if there is one."""

    application: TelegramApp | None = None
    webhook: WebhookServer | None = None


class TelegramEdge:
    """Telegram through the Bot API (long polling, or a webhook when `webhook_url` is set)."""

    platform = PLATFORM

    def __init__(self, config: TelegramConfig, ledger: EventLedger) -> None:
        self._config = config
        self._ledger = ledger

    @asynccontextmanager
    async def running(self, bot: Bot) -> AsyncIterator[RunningTelegram]:
        """Connect, register the notifier and menus, and serve until the block ends."""
        config = self._config
        application = build_application(config, bot, self._ledger)
        async with application:
            bot.register_notifier(PLATFORM, TelegramNotifier(application.bot))
            await register_menus(application.bot, bot, config.owner_ids)
            await application.start()
            webhook = None
            try:
                webhook = await self._serve(application)
                logger.info(
                    "Telegram edge running as @%s (%s)",
                    application.bot.username,
                    "webhook" if webhook else "long polling",
                )
                yield RunningTelegram("telegram", application=application, webhook=webhook)
            finally:
                if webhook is not None:
                    await webhook.stop()
                elif application.updater is not None and application.updater.running:
                    await application.updater.stop()
                await application.stop()

    async def _serve(self, application: TelegramApp) -> WebhookServer | None:
        config = self._config
        if not config.webhook_url:
            if application.updater is None:
                raise RuntimeError("Long polling needs PTB's Updater")
            await application.updater.start_polling(
                poll_interval=config.poll_interval,
                timeout=int(config.poll_timeout),
                allowed_updates=Update.ALL_TYPES,
            )
            return None
        webhook = WebhookServer(
            application,
            secret=config.webhook_secret or "",
            path=urlsplit(config.webhook_url).path or "/",
            listen=config.webhook_listen,
            port=config.webhook_port,
        )
        await webhook.start()
        await application.bot.set_webhook(
            config.webhook_url, secret_token=config.webhook_secret, allowed_updates=Update.ALL_TYPES
        )
        return webhook
