"""Buttons under the bot's messages, and what a tap means. A button's `custom_id` carries
everything the tap needs (`lore:<kind>:<target>:<choice>`), so buttons keep working after a
restart: discord.py rebuilds the tapped item from the id (a `DynamicItem`), nothing is held
in memory per message.

Kinds: `fb` 👍/👎 on an answer (target: the turn), `ap` an owner's Approve/Reject (target:
the approval in SQLite), `cf` a command's Yes/No (target: the action from `bot/`), `in` an
owner's Private/Shared choice for a source (target: the core's key).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import discord

__all__ = [
    "Tap",
    "TapButton",
    "TapRouter",
    "approval_view",
    "confirm_view",
    "feedback_view",
    "scope_view",
]

CUSTOM_ID = re.compile(r"lore:(?P<kind>fb|ap|cf|in):(?P<target>[^\s]+):(?P<choice>[^:\s]+)")
MAX_CUSTOM_ID = 100  # Discord's limit


@dataclass(frozen=True, slots=True)
class Tap:
    """A tapped button: its kind, the id it refers to, and the choice."""

    kind: str
    target: str
    choice: str

    @property
    def custom_id(self) -> str:
        """The button's id on Discord."""
        return f"lore:{self.kind}:{self.target}:{self.choice}"


@runtime_checkable
class TapRouter(Protocol):
    """The client that handles taps (the running edge's `LoreClient`)."""

    async def route_tap(self, interaction: discord.Interaction[Any], tap: Tap) -> None:
        """Do what the tapped button says."""


class TapButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=CUSTOM_ID):
    """A Lore button; rebuilt from its `custom_id` whenever it is tapped."""

    def __init__(
        self,
        tap: Tap,
        label: str,
        style: discord.ButtonStyle = discord.ButtonStyle.secondary,
    ) -> None:
        if len(tap.custom_id) > MAX_CUSTOM_ID:
            raise ValueError("A Discord custom_id holds at most 100 characters")
        super().__init__(discord.ui.Button(label=label, style=style, custom_id=tap.custom_id))
        self.tap = tap

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],  # noqa: ARG003 - discord.py's signature
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> TapButton:
        """The button behind a tap, from its id."""
        tap = Tap(match.group("kind"), match.group("target"), match.group("choice"))
        label = getattr(item, "label", None) or tap.choice
        return cls(tap, label)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        """Hand the tap to the edge."""
        client = interaction.client
        if isinstance(client, TapRouter):
            await client.route_tap(interaction, self.tap)


def _view(*buttons: TapButton) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for button in buttons:
        view.add_item(button)
    return view


def feedback_view(turn_id: str) -> discord.ui.View:
    """👍 / 👎 under an answer."""
    return _view(
        TapButton(Tap("fb", turn_id, "up"), "👍"),
        TapButton(Tap("fb", turn_id, "down"), "👎"),
    )


def approval_view(approval_id: str) -> discord.ui.View:
    """Approve / Reject under an approval request."""
    return _view(
        TapButton(Tap("ap", approval_id, "y"), "✅ Approve", discord.ButtonStyle.success),
        TapButton(Tap("ap", approval_id, "n"), "❌ Reject", discord.ButtonStyle.danger),
    )


def confirm_view(action: str, yes_label: str, no_label: str) -> discord.ui.View:
    """Yes / No under a command's confirmation question."""
    return _view(
        TapButton(Tap("cf", action, "y"), yes_label, discord.ButtonStyle.danger),
        TapButton(Tap("cf", action, "n"), no_label),
    )


def scope_view(key: str) -> discord.ui.View:
    """An owner chooses where a source goes."""
    return _view(
        TapButton(Tap("in", key, "p"), "🔒 Private"),
        TapButton(Tap("in", key, "s"), "🌐 Shared", discord.ButtonStyle.primary),
    )
