"""The chat edges' settings (Telegram, Slack, Discord, Matrix and the MCP server) and their
checks, one base of `bot.settings.Settings`: a token left empty is unset, a mode needs its
secret, an account needs its ID."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Self

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["EdgeSettings", "blank_is_unset", "is_loopback", "split_list"]

MATRIX_ID = re.compile(r"@[^\s:]+:[^\s:]+(:\d+)?")  # @lore:example.org (a port may follow)


class EdgeSettings(BaseSettings):
    """How Lore reaches each chat platform; an edge runs when its token (or account) is set."""

    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", frozen=True
    )

    telegram_bot_token: SecretStr | None = Field(
        default=None, description="Bot token from @BotFather; set it to run the Telegram edge."
    )
    telegram_api_root: str | None = Field(
        default=None, description="Another Bot API server (self-hosted); unset = Telegram's."
    )
    telegram_webhook_url: str | None = Field(
        default=None, description="Public HTTPS URL for updates; unset = long polling."
    )
    telegram_webhook_secret: SecretStr | None = Field(
        default=None, description="Secret Telegram sends with every webhook request."
    )
    telegram_webhook_listen: str = Field(
        default="127.0.0.1", description="Address the webhook server binds."
    )
    telegram_webhook_port: Annotated[int, Field(ge=1, le=65535)] = 8443

    slack_bot_token: SecretStr | None = Field(
        default=None, description="Bot token (xoxb-); set it to run the Slack edge."
    )
    slack_app_token: SecretStr | None = Field(
        default=None, description="App-level token (xapp-) for Socket Mode; unset = HTTP mode."
    )
    slack_signing_secret: SecretStr | None = Field(
        default=None, description="Signing secret that HTTP-mode requests are checked with."
    )
    slack_http_listen: str = Field(
        default="127.0.0.1", description="Address the Slack HTTP-mode server binds."
    )
    slack_http_port: Annotated[int, Field(ge=0, le=65535)] = 3000
    slack_api_url: str = Field(
        default="https://slack.com/api/", description="Slack's Web API (tests point it elsewhere)."
    )
    discord_bot_token: SecretStr | None = Field(
        default=None, description="Bot token from the Developer Portal; set it to run Discord."
    )
    discord_api_url: str | None = Field(
        default=None, description="Another Discord REST base (a test server); unset = Discord's."
    )
    discord_guild_id: Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="Sync /lore to this server only (instant updates while testing)."
    )
    matrix_homeserver: str | None = Field(
        default=None, description="The homeserver's URL; set it (and an account) to run Matrix."
    )
    matrix_user_id: str | None = Field(
        default=None, description="The bot account's Matrix ID, e.g. @lore:example.org."
    )
    matrix_access_token: SecretStr | None = Field(
        default=None, description="The bot account's access token (or MATRIX_PASSWORD)."
    )
    matrix_password: SecretStr | None = Field(
        default=None, description="The bot account's password: Lore logs in once, keeps the device."
    )
    mcp_http_port: Annotated[int, Field(ge=1, le=65535)] | None = Field(
        default=None, description="Serve MCP (streamable HTTP) on this port; unset = no MCP edge."
    )
    mcp_http_listen: str = Field(
        default="127.0.0.1", description="Address the MCP HTTP server binds."
    )
    mcp_allowed_hosts: str = Field(
        default="",
        description="Host names MCP clients use (comma-separated; required off loopback).",
    )
    mcp_allowed_origins: str = Field(
        default="", description="Browser origins allowed to call MCP (comma-separated)."
    )

    @field_validator(
        "telegram_bot_token",
        "telegram_api_root",
        "telegram_webhook_url",
        "telegram_webhook_secret",
        "slack_bot_token",
        "slack_app_token",
        "slack_signing_secret",
        "discord_bot_token",
        "discord_api_url",
        "discord_guild_id",
        "matrix_homeserver",
        "matrix_user_id",
        "matrix_access_token",
        "matrix_password",
        "mcp_http_port",
        mode="before",
    )
    @classmethod
    def _empty_edge_setting_is_unset(cls, value: object) -> object:
        return blank_is_unset(value)

    @model_validator(mode="after")
    def _slack_has_a_mode(self) -> Self:
        bot, app = self.slack_bot_token, self.slack_app_token
        if bot is not None and not bot.get_secret_value().startswith("xoxb-"):
            raise ValueError("SLACK_BOT_TOKEN: the bot token starts with xoxb-")
        if app is not None and not app.get_secret_value().startswith("xapp-"):
            raise ValueError("SLACK_APP_TOKEN: the app-level token starts with xapp-")
        if bot is not None and app is None and self.slack_signing_secret is None:
            msg = (
                "SLACK_BOT_TOKEN: also set SLACK_APP_TOKEN (Socket Mode) or "
                "SLACK_SIGNING_SECRET (HTTP mode)"
            )
            raise ValueError(msg)
        return self

    @model_validator(mode="after")
    def _webhook_has_secret(self) -> Self:
        secret = self.telegram_webhook_secret
        if self.telegram_webhook_url and (secret is None or len(secret.get_secret_value()) < 16):
            msg = "TELEGRAM_WEBHOOK_SECRET: needs 16+ characters when TELEGRAM_WEBHOOK_URL is set"
            raise ValueError(msg)
        if secret is not None and not re.fullmatch(
            r"[A-Za-z0-9_-]{1,256}", secret.get_secret_value()
        ):
            raise ValueError("TELEGRAM_WEBHOOK_SECRET: use 1-256 of A-Z, a-z, 0-9, _ and -")
        return self

    @model_validator(mode="after")
    def _mcp_hosts_off_loopback(self) -> Self:
        if (
            self.mcp_http_port is not None
            and not is_loopback(self.mcp_http_listen)
            and not split_list(self.mcp_allowed_hosts)
        ):
            msg = (
                f"MCP_ALLOWED_HOSTS: MCP_HTTP_LISTEN={self.mcp_http_listen} is reachable from "
                "other machines, so list the host names MCP clients use (e.g. "
                "lore.example.org:8787); requests for any other host are refused"
            )
            raise ValueError(msg)
        return self

    @model_validator(mode="after")
    def _matrix_account(self) -> Self:
        if self.matrix_homeserver is None:
            return self
        if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", self.matrix_homeserver):
            msg = "MATRIX_HOMESERVER: the homeserver's URL, e.g. https://matrix.example.org"
            raise ValueError(msg)
        if self.matrix_user_id is None or not MATRIX_ID.fullmatch(self.matrix_user_id):
            raise ValueError("MATRIX_USER_ID: the bot account's ID, e.g. @lore:example.org")
        if self.matrix_access_token is None and self.matrix_password is None:
            msg = "MATRIX_ACCESS_TOKEN or MATRIX_PASSWORD: one is needed with MATRIX_HOMESERVER"
            raise ValueError(msg)
        return self


def is_loopback(address: str) -> bool:
    """Whether a listen address is reachable from this machine only."""
    if address.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def split_list(value: str) -> list[str]:
    """The entries of a comma-separated setting, stripped, empty ones left out."""
    return [part.strip() for part in value.split(",") if part.strip()]


def blank_is_unset(value: object) -> object:
    """A setting left empty (`TELEGRAM_BOT_TOKEN=` in `.env`) is not set at all."""
    return None if isinstance(value, str) and not value.strip() else value
