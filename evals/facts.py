"""Does the answer quote the fact? Question/fact pairs over docs/ and the check for one answer.

`evals/cases/answer_facts.json` holds questions a newcomer asks about Lore, each with the
page of `docs/` that answers it and the facts the answer must quote. The cases marked
`held_out` were written before the answerer was tuned on the others and are never tuned
on: they measure how well the selection rules carry over to questions nobody looked at.
A fact is a list of alternatives (any one will do); every fact of a case must be in the
answer. Matching is case-insensitive and ignores Markdown code marks and runs of white
space, so a fact reads as the docs do. `ask` runs one question as a whole chat turn
through the `Bot` service, the way an edge does, and returns the final answer and the
cited titles.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from bot.errors import LoreError
from bot.events import ChatRef, CitationEvent, Identity, TurnDone
from bot.service import Bot

__all__ = [
    "GOAL",
    "FactCase",
    "FactResult",
    "ask",
    "ask_table",
    "load_fact_cases",
    "missing_facts",
    "quoted_share",
]

#: The share of the whole table whose facts must be quoted (tests/test_answer_facts.py).
GOAL = 0.90


class FactCaseError(LoreError):
    """The question/fact table is malformed."""


class FactCase(BaseModel):
    """One question, the docs/ page that answers it, and the facts its answer must quote."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9-]+$")
    question: str = Field(min_length=1)
    page: str = Field(pattern=r"^[a-z-]+\.md$")
    facts: tuple[tuple[str, ...], ...] = Field(min_length=1)
    held_out: bool = False


@dataclass(frozen=True, slots=True)
class FactResult:
    """One asked question: the final answer, the cited titles, the facts it failed to quote."""

    case: FactCase
    answer: str
    cited: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def quoted(self) -> bool:
        """Whether every fact of the case is in the answer."""
        return not self.missing


_CASES = TypeAdapter(tuple[FactCase, ...])


def load_fact_cases() -> tuple[FactCase, ...]:
    """The cases of `evals/cases/answer_facts.json`, checked, ids unique."""
    raw = resources.files("evals").joinpath("cases", "answer_facts.json").read_text("utf-8")
    try:
        cases = _CASES.validate_python(json.loads(raw))
    except (ValueError, ValidationError) as exc:
        raise FactCaseError(f"The answer facts are malformed: {exc}") from exc
    if len({case.id for case in cases}) != len(cases):
        raise FactCaseError("The answer facts repeat an id.")
    return cases


def _plain(text: str) -> str:
    return " ".join(text.replace("`", "").casefold().split())


def missing_facts(case: FactCase, answer: str) -> tuple[str, ...]:
    """The facts of `case` (each as its first alternative) that `answer` does not quote."""
    plain = _plain(answer)
    return tuple(
        alternatives[0]
        for alternatives in case.facts
        if not any(_plain(option) in plain for option in alternatives)
    )


async def ask(bot: Bot, identity: Identity, case: FactCase, *, chat_id: str) -> FactResult:
    """Ask `case.question` in a fresh chat as `identity`; judge the final answer."""
    chat = ChatRef(identity.platform, chat_id)
    done: TurnDone | None = None
    async for event in bot.handle_message(identity, chat, case.question):
        if isinstance(event, TurnDone):
            done = event
    answer = done.answer if done is not None else ""
    citations: Sequence[CitationEvent] = done.citations if done is not None else ()
    return FactResult(
        case=case,
        answer=answer,
        cited=tuple(citation.title for citation in citations),
        missing=missing_facts(case, answer),
    )


async def ask_table(bot: Bot, identity: Identity) -> list[FactResult]:
    """Ask every case of the table, each in a fresh chat of its own."""
    return [
        await ask(bot, identity, case, chat_id=f"facts-{case.id}") for case in load_fact_cases()
    ]


def quoted_share(results: Sequence[FactResult]) -> float:
    """The share of `results` that quote every fact of their case (0 for none)."""
    return sum(result.quoted for result in results) / len(results) if results else 0.0
