"""Guard text that enters by other doors than a question: forwarded messages, /note, captions.

Such text is kept (saved as a note, stored with a file), not obeyed, so the guard differs
from `check_input` in one way: payment data is refused exactly as in a question (nothing
may be stored), but an injection never refuses; it comes back as a hardened verdict
(`GuardVerdict.hardened`, guard `prompt_injection`, the rules and score in `reason`) so
the caller records an incident, and the stored chunks carry their own injection score
(see `injection_risks`), which marks them when they are retrieved later. Off-topic checks
do not apply: a saved poem is a fine note.

Edges call `check_door_text(text, door)` before they hand the text to the core; a text that
is also a question to the agent (a caption asking about its photo) still goes through the
agent graph's own guard as well.
"""

from __future__ import annotations

from typing import Literal

from graphs.guards.injection import assess_injection
from graphs.guards.input_guard import check_sensitive
from graphs.guards.normalize import normalize
from graphs.guards.verdict import ALLOWED, GUARD_PROMPT_INJECTION, GuardVerdict, flagged

__all__ = ["Door", "check_door_text"]

Door = Literal["forwarded", "note", "caption"]


def check_door_text(text: str, door: Door) -> GuardVerdict:
    """Refuse payment data; flag (never refuse) an injection; else `ALLOWED`."""
    sensitive = check_sensitive(text)
    if not sensitive.allowed:
        return sensitive
    assessment = assess_injection(normalize(text))
    if assessment.level == "pass":
        return ALLOWED
    return flagged(GUARD_PROMPT_INJECTION, f"{door}: {assessment.describe()}")
