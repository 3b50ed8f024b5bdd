"""The Telegram edge: translates between the Telegram Bot API (python-telegram-bot) and the
`Bot` service; it holds no business rule. `TelegramEdge(config, ledger).running(bot)`."""

from adapters.telegram.app import RunningTelegram, TelegramEdge, build_application
from adapters.telegram.context import TelegramConfig

__all__ = ["RunningTelegram", "TelegramConfig", "TelegramEdge", "build_application"]
