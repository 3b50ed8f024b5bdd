"""The terminal edge: the same agent and commands as every other edge, in a terminal, for
the person at this machine (or piped input, for scripts)."""

from adapters.console.chat import LOCAL_CHAT, ConsoleChat
from adapters.console.edge import ConsoleEdge
from adapters.console.notifier import ConsoleNotifier
from adapters.console.terminal import print_above_prompt
from bot.people import LOCAL_OWNER

__all__ = [
    "LOCAL_CHAT",
    "LOCAL_OWNER",
    "ConsoleChat",
    "ConsoleEdge",
    "ConsoleNotifier",
    "print_above_prompt",
]
