"""The Slack edge's settings as plain values, and the platform name in identities."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PLATFORM", "SlackConfig"]

PLATFORM = "slack"


@dataclass(frozen=True, slots=True)
class SlackConfig:
    """What the Slack edge needs: the bot token, and the app-level token (Socket Mode) or the
    signing secret (HTTP mode, served at `path` on `listen:port`)."""

    bot_token: str
    max_file_bytes: int
    app_token: str | None = None
    signing_secret: str | None = None
    listen: str = "127.0.0.1"
    port: int = 3000
    path: str = "/slack/events"
    api_url: str = "https://slack.com/api/"
    # At most one message edit per `stream_interval` seconds (Slack allows about one a second).
    stream_interval: float = 1.0
    # How often a 429 from the Web API is waited out before a call gives up.
    rate_limit_retries: int = 3
    # On stop, how long work already acknowledged may still run before it is cancelled.
    shutdown_grace: float = 5.0
    # Socket Mode's ping interval (seconds).
    ping_interval: float = 10.0

    @property
    def socket_mode(self) -> bool:
        """Socket Mode when an app-level token is set; else HTTP mode."""
        return bool(self.app_token)
