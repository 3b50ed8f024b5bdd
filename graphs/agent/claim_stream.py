"""Stream a model's answer one checked sentence at a time, so nobody reads an unsupported claim.

`ClaimStreamGate` sits between the model's text (after the leak guard) and what the edges
preview. It holds the text back until a sentence (list item, code block) is complete, then
passes it on only if `graphs.agent.grounding` keeps it: chat, or a claim this turn's
sources support. Markup (a tool call written as text, JSON, template tokens) and
unsupported claims are never shown; the person sees the status line until the first
sentence passes. The final answer, decided when the model is done, may still differ (a
fallback replaces a rejected answer): the edges' final message is authoritative.

`RepetitionWatch` notices a model stuck repeating itself ("backup.backup.backup...", a
small model's usual way to fill its token limit), so the call can be stopped early.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from graphs.agent.claims import Segment, segments
from graphs.agent.grounding import ClaimChecker, Verdict
from graphs.llm.types import ProviderStreamError

__all__ = ["ClaimStreamGate", "RepetitionError", "RepetitionWatch"]

#: A stretch this long that repeats one short piece over and over is a loop.
_LOOP_CHARS: Final = 160
_LONGEST_PIECE: Final = 40
_CHECK_EVERY: Final = 32


class RepetitionError(ProviderStreamError):
    """The model repeats itself in a loop; its call is stopped."""


class RepetitionWatch:
    """Raises `RepetitionError` once the model's text ends in a loop of one short piece."""

    def __init__(self) -> None:
        self._text = ""
        self._checked = 0

    def feed(self, text: str) -> None:
        """Take the next piece of text; raise when the text has started looping."""
        self._text += text
        if len(self._text) - self._checked < _CHECK_EVERY or len(self._text) < _LOOP_CHARS:
            return
        self._checked = len(self._text)
        tail = self._text[-_LOOP_CHARS:]
        for size in range(1, _LONGEST_PIECE + 1):
            piece = tail[-size:]
            if piece.strip() and (piece * (_LOOP_CHARS // size + 1)).endswith(tail):
                raise RepetitionError(f"the model repeated a {size}-character piece in a loop")


class ClaimStreamGate:
    """Passes on complete sentences that `graphs.agent.grounding` keeps (module docstring)."""

    def __init__(self, checker: ClaimChecker, show: Callable[[str], None]) -> None:
        self._checker = checker
        self._show = show
        self._text = ""
        self._decided = 0
        self._shown_any = False
        self.verdicts: list[Verdict] = []

    def feed(self, text: str) -> None:
        """Take the next piece of the answer; show the sentences it completes that pass."""
        self._text += text
        pieces = segments(self._text)
        self._release(pieces[:-1])

    def finish(self) -> None:
        """The model is done: decide the last sentence too."""
        self._release(segments(self._text))

    def _release(self, complete: Sequence[Segment]) -> None:
        for segment in complete[self._decided :]:
            verdict = self._checker.judge(segment)
            self.verdicts.append(verdict)
            self._decided += 1
            if verdict.kept:
                before = verdict.segment.before if self._shown_any else ""
                self._show(before + verdict.text())
                self._shown_any = True
