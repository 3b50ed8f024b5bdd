"""The Telegram edge: translates between the Telegram Bot API (python-telegram-bot) and the
`Bot` service; it holds no business rule. Start it with `running_telegram`."""

from adapters.telegram.app import TelegramEdge, build_application, running_telegram
from adapters.telegram.context import TelegramConfig
from adapters.telegram.dedupe import UpdateLedger

__all__ = [
    "TelegramConfig",
    "TelegramEdge",
    "UpdateLedger",
    "build_application",
    "running_telegram",
]
