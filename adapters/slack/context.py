"""What every part of one running Slack edge shares: the `Bot`, the settings, the Web API
(posting, people, files) and what the workspace was found to support."""

from __future__ import annotations

from dataclasses import dataclass

from adapters.slack.config import SlackConfig
from adapters.slack.directory import Directory
from adapters.slack.files import FileDownloader
from adapters.slack.outbox import Outbox
from adapters.slack.streaming import Capabilities
from bot.service import Bot

__all__ = ["PREFIX", "SlackContext"]

PREFIX = "/lore "  # how commands are spelled on Slack: one slash command, then the name


@dataclass
class SlackContext:
    """Shared by the handlers of one running Slack edge."""

    bot: Bot
    config: SlackConfig
    outbox: Outbox
    directory: Directory
    files: FileDownloader
    capabilities: Capabilities
    bot_user_id: str
