"""Check the model's text for prompt leaks while it streams, so no edge ever shows one.

Edges preview an answer from its `AnswerDelta`s before verify has judged it, so a leak
must be stopped here, in the graph, which knows the canary. `StreamLeakGuard` passes
text on only once `LeakCheck` has read it, in the context of everything the model wrote
this turn, and keeps back the end of it while that end could still grow into a leak:

- a tail that could be the start of the canary (or of its hex part, written backwards or
  in ROT13);
- a tail of `HOLD_RUN` or more compact characters that continues a run of the
  instructions or the tool definitions (also backwards or in ROT13);
- an unfinished encoded run (base64, hex, binary, HTML entities, percent-escapes);
- everything, while the text as a whole is half-way to a leak (`suspicious`).

Once a leak is found nothing more is passed on; the node drops the model's tool calls and
verify replaces the answer with a refusal. The checks run every `MIN_STEP` characters (or
every sixteenth of the text so far, if more), so a long answer costs a few dozen checks.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

from graphs.agent.leak_corpus import INSTRUCTION_TEXT, TOOL_TEXT, compact
from graphs.agent.leaks import LeakCheck
from graphs.guards.normalize import fold
from graphs.llm.data_blocks import unwrap_data
from graphs.llm.types import ChatMessage

__all__ = ["HOLD_RUN", "MIN_STEP", "StreamLeakGuard", "turn_leak_check", "turn_model_text"]

HOLD_RUN: Final = 12
MIN_STEP: Final = 24
_MIN_CANARY_START: Final = 3
_TAIL_CHARS: Final = 400
_MAX_RUN: Final = 200
_SECRET_TEXTS: Final = (INSTRUCTION_TEXT, TOOL_TEXT)
_ENCODED_TAIL: Final = re.compile(
    r"(?:[A-Za-z0-9+/=_-]{12,}|(?:[0-9A-Fa-f]{2}[ :]?){6,}|(?:[01]{8} ?){2,}"
    r"|(?:&#?\w{1,8};?){2,}|(?:%[0-9A-Fa-f]{2}){2,})\s?$"
)


def _this_turn(messages: Sequence[ChatMessage]) -> Sequence[ChatMessage]:
    starts = [index for index, message in enumerate(messages) if message.role == "user"]
    return messages[starts[-1] :] if starts else messages


def turn_model_text(messages: Sequence[ChatMessage]) -> str:
    """Everything the model wrote since the person's message, as the edges saw it stream."""
    return "".join(m.content for m in _this_turn(messages) if m.role == "assistant")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _retrieved(messages: Sequence[ChatMessage]) -> list[str]:
    """The text values of this turn's tool results (passages, titles, documents), not their
    JSON keys: an answer may quote them."""
    found: list[str] = []
    for message in _this_turn(messages):
        if message.role != "tool":
            continue
        body = unwrap_data(message.content)
        try:
            found += _strings(json.loads(body))
        except json.JSONDecodeError:
            found.append(body)
    return found


def turn_leak_check(canary: str, messages: Sequence[ChatMessage]) -> LeakCheck:
    """The leak check for this turn: what its tools returned may be quoted."""
    return LeakCheck(canary, _retrieved(messages))


def _alnum_tail(text: str, count: int) -> int:
    """How many characters at the end of `text` hold its last `count` letters and digits."""
    seen = 0
    for back, char in enumerate(reversed(text), start=1):
        seen += char.isalnum()
        if seen >= count:
            return back
    return len(text)


def _canary_start(tail: str, forms: Sequence[str]) -> int:
    """The compact length of the longest end of `tail` that begins a canary form."""
    longest = 0
    for form in forms:
        for length in range(min(len(form), len(tail)), _MIN_CANARY_START - 1, -1):
            if tail.endswith(form[:length]):
                longest = max(longest, length)
                break
    return longest


def _secret_run(tail: str) -> int:
    """The compact length of the longest end of `tail` that continues a secret text, as
    written, backwards or in ROT13 (0 below `HOLD_RUN`)."""
    length = HOLD_RUN
    while length <= min(len(tail), _MAX_RUN) and _in_secret(tail[-length:]):
        length += 1
    return length - 1 if length > HOLD_RUN else 0


def _in_secret(piece: str) -> bool:
    readings = (piece, piece[::-1], codecs.encode(piece, "rot13"))
    return any(reading in text for reading in readings for text in _SECRET_TEXTS)


class StreamLeakGuard:
    """Passes on streamed text that cannot be part of a leak; see the module docstring."""

    def __init__(self, check: LeakCheck, show: Callable[[str], None], context: str = "") -> None:
        self._check = check
        self._show = show
        self._context = context
        self._text = ""
        self._shown = 0
        self._checked = 0
        forms = sorted(check.canary_forms)
        self._canary_forms = [
            *forms,
            *(form[::-1] for form in forms),
            *(codecs.encode(form, "rot13") for form in forms),
        ]
        self.leak: str | None = None

    def feed(self, text: str) -> None:
        """Take the next piece of the model's text; pass on what is safe to show."""
        if self.leak is not None:
            return
        self._text += text
        if len(self._text) - self._checked >= max(MIN_STEP, len(self._text) // 16):
            self._release(final=False)

    def finish(self) -> None:
        """The model is done: check the whole text and pass the rest on, unless it leaks."""
        if self.leak is None:
            self._release(final=True)

    def _release(self, *, final: bool) -> None:
        self._checked = len(self._text)
        whole = self._context + self._text
        assessment = self._check.assess(whole)
        if assessment.reason is not None:
            self.leak = assessment.reason
            return
        if final:
            upto = len(self._text)
        elif assessment.suspicious:
            upto = self._shown
        else:
            upto = len(self._text) - self._held(whole)
        if upto > self._shown:
            self._show(self._text[self._shown : upto])
            self._shown = upto

    def _held(self, whole: str) -> int:
        """How many characters at the end of the text to keep back for now."""
        tail = whole[-_TAIL_CHARS:]
        packed = compact(fold(tail))
        letters = max(_canary_start(packed, self._canary_forms), _secret_run(packed))
        held = _alnum_tail(tail, letters) if letters else 0
        encoded = _ENCODED_TAIL.search(tail)
        if encoded is not None:
            held = max(held, len(tail) - encoded.start())
        return min(held, len(self._text))
