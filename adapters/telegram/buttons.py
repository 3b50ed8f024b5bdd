"""Inline buttons and their callback data: short opaque strings (at most 64 bytes) and parsing.

Formats: `fb:<turn id>:<+1|-1>` feedback, `ap:<approval id>:<y|n>` an owner's decision,
`cf:<action>:<y|n>` a command's confirmation (the action comes from `bot/`), `in:<key>:<p|s>`
an owner's Private/Shared choice.
"""

from __future__ import annotations

from dataclasses import dataclass

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

__all__ = [
    "Callback",
    "approval_keyboard",
    "confirm_keyboard",
    "feedback_keyboard",
    "parse_callback",
    "scope_keyboard",
]


@dataclass(frozen=True, slots=True)
class Callback:
    """A parsed button tap: its kind, the id it refers to, and the choice."""

    kind: str
    target: str
    choice: str


def _button(label: str, data: str) -> InlineKeyboardButton:
    if len(data.encode()) > 64:
        raise ValueError("Telegram callback data holds at most 64 bytes")
    return InlineKeyboardButton(label, callback_data=data)


def feedback_keyboard(turn_id: str) -> InlineKeyboardMarkup:
    """👍 / 👎 under an answer."""
    return InlineKeyboardMarkup(
        [[_button("👍", f"fb:{turn_id}:+1"), _button("👎", f"fb:{turn_id}:-1")]]
    )


def approval_keyboard(approval_id: str) -> InlineKeyboardMarkup:
    """Approve / Reject under an approval request."""
    return InlineKeyboardMarkup(
        [
            [
                _button("✅ Approve", f"ap:{approval_id}:y"),
                _button("❌ Reject", f"ap:{approval_id}:n"),
            ]
        ]
    )


def confirm_keyboard(action: str, yes_label: str, no_label: str) -> InlineKeyboardMarkup:
    """Yes / No under a command's confirmation question."""
    return InlineKeyboardMarkup(
        [[_button(yes_label, f"cf:{action}:y"), _button(no_label, f"cf:{action}:n")]]
    )


def scope_keyboard(key: str) -> InlineKeyboardMarkup:
    """An owner chooses where a source goes."""
    return InlineKeyboardMarkup(
        [[_button("🔒 Private", f"in:{key}:p"), _button("🌐 Shared", f"in:{key}:s")]]
    )


def parse_callback(data: str | None) -> Callback | None:
    """The tap's meaning, or None for data this bot never sent."""
    if not data:
        return None
    kind, _, rest = data.partition(":")
    target, _, choice = rest.rpartition(":")
    if kind not in {"fb", "ap", "cf", "in"} or not choice:
        return None
    return Callback(kind, target, choice)
