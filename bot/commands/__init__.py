"""Chat commands: the registry (rules and enforcement) and every command of Lore."""

from bot.commands.mcp import MCP_COMMANDS
from bot.commands.member import MEMBER_COMMANDS, help_text
from bot.commands.owner import OWNER_COMMANDS
from bot.commands.registry import (
    Access,
    Command,
    CommandCall,
    CommandRegistry,
    Place,
)
from bot.commands.services import CommandServices

__all__ = [
    "COMMANDS",
    "Access",
    "Command",
    "CommandCall",
    "CommandRegistry",
    "CommandServices",
    "Place",
    "help_text",
]

COMMANDS = CommandRegistry((*MEMBER_COMMANDS, *MCP_COMMANDS, *OWNER_COMMANDS))
