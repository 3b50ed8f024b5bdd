"""The Telegram edge's lifecycle: build the PTB Application (rate limiter, de-duplicating
update processor, handlers), register the notifier and commands, then long-poll or serve a
webhook inside the caller's event loop until the `running_telegram` block ends."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from telegram import Bot as TelegramBot
from telegram import BotCommandScopeChat, Update
from telegram.error import TelegramError
from telegram.ext import (
    AIORateLimiter,
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    MessageHandler,
    filters,
)

from adapters.telegram.commands import MEMBER_COMMANDS, OWNER_COMMANDS
from adapters.telegram.context import PLATFORM, EdgeContext, TelegramConfig
from adapters.telegram.dedupe import DedupingProcessor, UpdateLedger
from adapters.telegram.handlers import Handlers
from adapters.telegram.notifier import TelegramNotifier
from adapters.telegram.webhook import WebhookServer
from bot.service import Bot

__all__ = ["TelegramEdge", "build_application", "running_telegram"]

logger = logging.getLogger(__name__)

TelegramApp = Application[Any, Any, Any, Any, Any, Any]


def build_application(config: TelegramConfig, bot: Bot, ledger: UpdateLedger) -> TelegramApp:
    """A configured, not yet initialised, PTB Application for the Lore `Bot`."""
    limiter = (
        AIORateLimiter(max_retries=config.max_retries)
        if config.rate_limit
        else AIORateLimiter(overall_max_rate=0, group_max_rate=0, max_retries=config.max_retries)
    )
    builder = (
        ApplicationBuilder()
        .rate_limiter(limiter)
        .token(config.token)
        .http_version("1.1")
        .get_updates_http_version("1.1")
        .concurrent_updates(
            DedupingProcessor(ledger, max_concurrent_updates=config.concurrent_updates)
        )
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


async def _register_commands(telegram: TelegramBot, owner_ids: frozenset[str]) -> None:
    await telegram.set_my_commands(MEMBER_COMMANDS)
    for owner_id in sorted(owner_ids):
        try:
            await telegram.set_my_commands(OWNER_COMMANDS, scope=BotCommandScopeChat(int(owner_id)))
        except (TelegramError, ValueError) as exc:
            logger.warning("Owner commands for %s not set: %s", owner_id, exc)


class TelegramEdge:
    """A running Telegram edge: its Application, and the webhook server if there is one."""

    def __init__(self, application: TelegramApp, webhook: WebhookServer | None) -> None:
        self.application = application
        self.webhook = webhook


@asynccontextmanager
async def running_telegram(
    bot: Bot, config: TelegramConfig, ledger: UpdateLedger
) -> AsyncIterator[TelegramEdge]:
    """Run the Telegram edge (long polling, or a webhook when `webhook_url` is set)."""
    application = build_application(config, bot, ledger)
    async with application:
        bot.register_notifier(PLATFORM, TelegramNotifier(application.bot))
        await _register_commands(application.bot, config.owner_ids)
        await application.start()
        webhook = None
        try:
            if config.webhook_url:
                webhook = WebhookServer(
                    application,
                    secret=config.webhook_secret or "",
                    path=urlsplit(config.webhook_url).path or "/",
                    listen=config.webhook_listen,
                    port=config.webhook_port,
                )
                await webhook.start()
                await application.bot.set_webhook(
                    config.webhook_url,
                    secret_token=config.webhook_secret,
                    allowed_updates=Update.ALL_TYPES,
                )
            else:
                if application.updater is None:
                    raise RuntimeError("Long polling needs PTB's Updater")
                await application.updater.start_polling(
                    poll_interval=config.poll_interval,
                    timeout=int(config.poll_timeout),
                    allowed_updates=Update.ALL_TYPES,
                )
            logger.info(
                "Telegram edge running as @%s (%s)",
                application.bot.username,
                "webhook" if webhook else "long polling",
            )
            yield TelegramEdge(application, webhook)
        finally:
            if webhook is not None:
                await webhook.stop()
            elif application.updater is not None and application.updater.running:
                await application.updater.stop()
            await application.stop()
