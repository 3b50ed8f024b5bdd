"""Block Kit for Lore's messages: mrkdwn sections and the buttons under answers (👍/👎),
approval requests (Approve/Reject), confirmations (Yes/No) and an owner's Private/Shared
choice, and the reading of a tapped button.

Every button's `action_id` says what it does and its `value` is an opaque id from `bot/`
(a turn, an approval, a confirmation's action, a pending choice); nothing else is kept, so
a button still works after a restart when its id does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ACTION_PREFIX",
    "Block",
    "Tap",
    "approval_buttons",
    "confirm_buttons",
    "feedback_buttons",
    "parse_tap",
    "scope_buttons",
    "section",
]

Block = dict[str, Any]
ACTION_PREFIX = "lore_"
MAX_VALUE = 2000  # characters in a button's value
MAX_LABEL = 75  # characters in a button's text

# action_id -> (kind, choice); kinds as in every edge: fb feedback, ap approval,
# cf confirmation, in an owner's Private/Shared choice.
_ACTIONS: Mapping[str, tuple[str, str]] = {
    "lore_feedback_up": ("fb", "+1"),
    "lore_feedback_down": ("fb", "-1"),
    "lore_approve": ("ap", "y"),
    "lore_reject": ("ap", "n"),
    "lore_confirm_yes": ("cf", "y"),
    "lore_confirm_no": ("cf", "n"),
    "lore_scope_private": ("in", "p"),
    "lore_scope_shared": ("in", "s"),
}


@dataclass(frozen=True, slots=True)
class Tap:
    """A tapped button: its kind, the id it refers to, and the choice."""

    kind: str
    target: str
    choice: str


def section(mrkdwn: str) -> Block:
    """A block of mrkdwn text (at most 3,000 characters)."""
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}


def _button(label: str, action_id: str, value: str, style: str | None = None) -> Block:
    if action_id not in _ACTIONS:
        raise ValueError(f"unknown action {action_id}")
    if len(value) > MAX_VALUE:
        raise ValueError("a Slack button's value holds at most 2,000 characters")
    button: Block = {
        "type": "button",
        "text": {"type": "plain_text", "text": label[:MAX_LABEL], "emoji": True},
        "action_id": action_id,
        "value": value,
    }
    if style is not None:
        button["style"] = style
    return button


def _actions(*buttons: Block) -> Block:
    return {"type": "actions", "elements": list(buttons)}


def feedback_buttons(turn_id: str) -> Block:
    """👍 / 👎 under an answer."""
    return _actions(
        _button("👍", "lore_feedback_up", turn_id), _button("👎", "lore_feedback_down", turn_id)
    )


def approval_buttons(approval_id: str) -> Block:
    """Approve / Reject under an approval request."""
    return _actions(
        _button("✅ Approve", "lore_approve", approval_id, "primary"),
        _button("❌ Reject", "lore_reject", approval_id, "danger"),
    )


def confirm_buttons(action: str, yes_label: str, no_label: str) -> Block:
    """Yes / No under a command's confirmation question."""
    return _actions(
        _button(yes_label, "lore_confirm_yes", action, "danger"),
        _button(no_label, "lore_confirm_no", action),
    )


def scope_buttons(key: str) -> Block:
    """An owner chooses where a source goes."""
    return _actions(
        _button("🔒 Private", "lore_scope_private", key),
        _button("🌐 Shared", "lore_scope_shared", key),
    )


def parse_tap(action: Mapping[str, Any]) -> Tap | None:
    """The meaning of one element of a `block_actions` payload, or None for a button this
    bot never sent."""
    known = _ACTIONS.get(str(action.get("action_id", "")))
    value = action.get("value")
    if known is None or not isinstance(value, str) or not value:
        return None
    kind, choice = known
    return Tap(kind, value, choice)
